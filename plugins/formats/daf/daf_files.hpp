// File helpers of the Daf plugin, all on the storage layer (stowage/storage.hpp):
// a property file held for reading in place (a memory map on local disk, a
// buffer over HTTP) and small wrappers with Daf's "missing is fine"
// semantics. Nothing here touches the file system itself: the backend (file,
// memory, http) does.
#pragma once

#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace daf {

namespace sdk = stowage::sdk;

// A whole file read to be parsed in place: Storage::map (a memory map for a
// local file, whose bytes stay valid even after the file is replaced, since
// Daf replaces files by rename and never rewrites them), or decoded bytes
// held in memory (a packed component), under its file's name.
class Mapped {
 public:
  Mapped(const sdk::Storage& storage, const std::string& path)
      : path_(path), bytes_(storage.map(path)) {
    data_ = bytes_.data(), size_ = bytes_.size();
  }
  Mapped(std::string path, std::vector<unsigned char> bytes)
      : path_(std::move(path)),
        memory_(std::move(bytes)),
        data_(memory_.data()),
        size_(memory_.size()) {}
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  const unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sdk::Bytes bytes_;
  std::vector<unsigned char> memory_;
  const unsigned char* data_ = nullptr;
  uint64_t size_ = 0;
};

// A whole small file (JSON) as text. At most max_size + 1 bytes are read, so
// a bogus huge file costs neither the memory nor the transfer.
inline std::string read_small_text(const sdk::Storage& storage, const std::string& path,
                                   uint64_t max_size) {
  sdk::Bytes b = storage.read(path, 0, max_size + 1);
  if (b.size() > max_size)
    sdk::corrupt(path + ": file is more than the " + std::to_string(max_size) + " bytes allowed");
  return std::string(b.text());
}

inline bool is_file(const sdk::Storage& storage, const std::string& path) {
  return storage.kind(path) == STOWAGE_ENTRY_FILE;
}

// rm -f: a missing file is fine, real failures are STOWAGE_IO.
inline void remove_file(const sdk::Storage& storage, const std::string& path) {
  storage.remove_if_exists(path, 0);
}

// Names of the files in a directory ending in `suffix`, suffix stripped,
// sorted; a missing directory has none (git drops empty directories).
inline std::vector<std::string> names_with_suffix(const sdk::Storage& storage,
                                                  const std::string& dir, std::string_view suffix) {
  std::vector<std::string> names;
  std::vector<std::string> entries;
  try {
    entries = storage.list(dir);
  } catch (const sdk::Error& e) {
    if (e.code() == STOWAGE_NOT_FOUND) return names;
    throw;
  }
  for (const std::string& name : entries) {  // directories end in '/' and never match
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        name.find(".stowage-tmp.") == std::string::npos)
      names.push_back(name.substr(0, name.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace daf
