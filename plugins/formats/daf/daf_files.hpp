// File helpers of the Daf plugin: read-only memory maps of binary property
// files, temporary files filled with pwrite and renamed into place, and
// recursive removal.
#pragma once

#include <stowage/plugin_util.hpp>

#include <sys/mman.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace daf {

namespace sdk = stowage::sdk;

// A whole file mapped read-only. Files are immutable once renamed into place,
// so a map stays valid while the store holds it (even after a delete).
class Mapped {
 public:
  explicit Mapped(const std::string& path) : path_(path) {
    sdk::File f(path, O_RDONLY);
    size_ = f.size();
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, f.fd(), 0);
    if (p == MAP_FAILED) sdk::io_fail(path, "cannot map", errno);
    data_ = static_cast<const unsigned char*>(p);
  }
  // Decoded bytes held in memory (a packed component), under its file's name.
  Mapped(std::string path, std::vector<unsigned char> bytes)
      : path_(std::move(path)), memory_(std::move(bytes)), data_(memory_.data()), size_(memory_.size()) {}
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  ~Mapped() {
    if (data_ && memory_.empty()) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  const unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<unsigned char> memory_;
  const unsigned char* data_ = nullptr;
  uint64_t size_ = 0;
};

// A temporary file beside its final path: written (also concurrently, at
// distinct offsets) and then renamed over the final name by commit(). An
// uncommitted file is deleted by the destructor.
class TempFile {
 public:
  explicit TempFile(std::string final_path)
      : final_(std::move(final_path)), file_(sdk::create_temporary_beside(final_, temp_, O_RDWR)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!committed_) {
      file_ = sdk::File();
      ::unlink(temp_.c_str());
    }
  }
  const std::string& final_path() const { return final_; }
  const std::string& temp_path() const { return temp_; }
  int fd() const { return file_.fd(); }

  // Sets the size; new bytes read as zero (a sparse file: nothing is written).
  void resize(uint64_t size) {
    if (::ftruncate(file_.fd(), static_cast<off_t>(size)) != 0) sdk::io_fail(temp_, "cannot resize", errno);
  }
  void write_at(const void* data, size_t n, uint64_t offset) {
    auto* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::pwrite(file_.fd(), p, n, static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        sdk::io_fail(temp_, "write failed", errno);
      }
      p += w, n -= static_cast<size_t>(w), offset += static_cast<uint64_t>(w);
    }
  }
  void append(const void* data, size_t n) { file_.write_all(data, n); }
  void read_at(void* out, size_t n, uint64_t offset) const { file_.read_at(out, n, offset); }
  uint64_t size() const { return file_.size(); }

  void commit() {
    file_.close();
    if (::rename(temp_.c_str(), final_.c_str()) != 0) {
      int e = errno;
      ::unlink(temp_.c_str());
      committed_ = true;
      sdk::io_fail(final_, "cannot rename temporary file into place", e);
    }
    committed_ = true;
  }

 private:
  std::string final_, temp_;
  sdk::File file_;
  bool committed_ = false;
};

// rm -f / rm -rf that report real failures as STOWAGE_IO.
inline void remove_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) sdk::io_fail(path, "cannot delete", errno);
}
inline void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) sdk::fail(STOWAGE_IO, path + ": cannot delete: " + ec.message());
}

// Names of the entries of a directory ending in `suffix`, suffix stripped,
// sorted; a missing directory has none (git drops empty directories).
inline std::vector<std::string> names_with_suffix(const std::string& dir, std::string_view suffix) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) return names;
    sdk::fail(STOWAGE_IO, dir + ": cannot list: " + ec.message());
  }
  for (; it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        name.find(".stowage-tmp.") == std::string::npos)
      names.push_back(name.substr(0, name.size() - suffix.size()));
  }
  if (ec) sdk::fail(STOWAGE_IO, dir + ": cannot list: " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace daf
