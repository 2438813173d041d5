// Streaming msgpack checks built on msgpack-cxx's visitor parser (no object
// tree is built, nothing is allocated per element): the checks datadings
// needs on samples, the .keys file and the legacy .index file.
#pragma once

#include <msgpack.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace datadings {

// Keys in sample order, stored back to back in one buffer.
class KeyList {
 public:
  KeyList() { ends_.push_back(0); }
  void reserve(size_t count, size_t bytes) {
    ends_.reserve(count + 1);
    blob_.reserve(bytes);
  }
  void push_back(std::string_view key) {
    blob_.append(key);
    ends_.push_back(blob_.size());
  }
  size_t size() const { return ends_.size() - 1; }
  std::string_view operator[](size_t i) const {
    return std::string_view(blob_).substr(ends_[i], ends_[i + 1] - ends_[i]);
  }

 private:
  std::string blob_;
  std::vector<uint64_t> ends_;
};

// What went wrong parsing one msgpack object; empty when it parsed whole.
using ScanError = std::string;

// The sample's "key" entry, after checking that the sample is one msgpack
// map with a str "key" and none of the reserved top-level keys.
struct SampleKey {
  std::string_view key;
  ScanError error;
};
SampleKey scan_sample(std::string_view sample);

// Checks that bytes hold exactly one complete msgpack object.
ScanError check_one_object(std::string_view bytes);
// The same check through msgpack-cxx's parser (the reference for tests).
ScanError check_one_object_with_msgpack_cxx(std::string_view bytes);

// The element count of a msgpack array (want_map=false) or map header at the
// start of `prefix` (at most 5 bytes are needed), or nullopt.
std::optional<uint64_t> container_count(std::string_view prefix, bool want_map);

// Parses a .keys file: one msgpack array of str.
ScanError parse_keys(std::string_view bytes, KeyList& keys);

// Parses a legacy .index file: one msgpack map of str key -> uint offset.
ScanError parse_legacy_index(std::string_view bytes, KeyList& keys, std::vector<uint64_t>& offsets);

// True if the bytes are valid UTF-8 (keys are Python str).
bool is_utf8(std::string_view s);

}  // namespace datadings
