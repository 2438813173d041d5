#include "msgpack_scan.hpp"

namespace datadings {
namespace {

// Remembers why the parser stopped, so callers get one sentence.
struct Visitor : msgpack::null_visitor {
  ScanError error;
  bool truncated = false;
  bool malformed = false;
  size_t error_offset = 0;

  void parse_error(size_t /*parsed*/, size_t at) {
    malformed = true;
    error_offset = at;
  }
  void insufficient_bytes(size_t /*parsed*/, size_t /*at*/) { truncated = true; }
  bool refuse(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }
};

// Runs the visitor over exactly one object spanning all of bytes.
template <class V>
ScanError parse_whole(std::string_view bytes, V& v) {
  size_t off = 0;
  bool ok = msgpack::parse(bytes.data(), bytes.size(), off, v);
  if (!v.error.empty()) return v.error;
  if (v.truncated)
    return "truncated: the msgpack object needs more than its " + std::to_string(bytes.size()) +
           " bytes";
  if (!ok || v.malformed)
    return "not valid msgpack (bad byte at offset " + std::to_string(v.error_offset) + ")";
  if (off != bytes.size())
    return "holds " + std::to_string(bytes.size() - off) +
           " bytes after the end of its msgpack object";
  return {};
}

// Finds the top-level "key" of a sample and refuses reserved keys.
struct SampleVisitor : Visitor {
  int depth = 0;
  bool at_top_key = false;      // parsing a key of the top-level map
  bool at_key_value = false;    // parsing the value of the "key" entry
  bool current_is_key = false;  // the current top-level entry is "key"
  bool found = false;
  std::string_view key;

  bool top_key_name(std::string_view name) {
    if (name == "key") {
      if (found) return refuse("has two \"key\" entries");
      current_is_key = true;
    }
    return true;
  }
  bool scalar_value() {
    if (depth == 0) return refuse("is not a msgpack map");
    if (at_key_value && depth == 1) return refuse("has a \"key\" entry that is not a string");
    return true;
  }
  bool visit_nil() { return scalar_value(); }
  bool visit_boolean(bool) { return scalar_value(); }
  bool visit_positive_integer(uint64_t) { return scalar_value(); }
  bool visit_negative_integer(int64_t) { return scalar_value(); }
  bool visit_float32(float) { return scalar_value(); }
  bool visit_float64(double) { return scalar_value(); }
  bool visit_ext(const char*, uint32_t) { return scalar_value(); }
  bool visit_bin(const char* v, uint32_t size) {
    if (depth == 1 && at_top_key) return top_key_name_bin(std::string_view(v, size));
    return scalar_value();
  }
  bool visit_str(const char* v, uint32_t size) {
    if (depth == 0) return refuse("is not a msgpack map");
    if (depth == 1 && at_top_key) return top_key_name(std::string_view(v, size));
    if (depth == 1 && at_key_value) {
      key = std::string_view(v, size);
      found = true;
    }
    return true;
  }
  // Only the bin keys nd/complex make msgpack-numpy decode the sample as an
  // array or complex number (and lose it); str "nd"/"complex" keys are plain
  // data to Python 3 and appear in real datasets.
  bool top_key_name_bin(std::string_view name) {
    if (name == "nd" || name == "complex")
      return refuse("uses the reserved top-level bin key \"" + std::string(name) +
                    "\" (msgpack-numpy would decode the whole sample as an " +
                    (name == "nd" ? "array" : "complex number") + ")");
    return true;
  }
  bool start_array(uint32_t) {
    if (depth == 0) return refuse("is not a msgpack map");
    if (at_key_value && depth == 1) return refuse("has a \"key\" entry that is not a string");
    ++depth;
    return true;
  }
  bool end_array() {
    --depth;
    return true;
  }
  bool start_map(uint32_t) {
    if (at_key_value && depth == 1) return refuse("has a \"key\" entry that is not a string");
    ++depth;
    return true;
  }
  bool end_map() {
    --depth;
    return true;
  }
  bool start_map_key() {
    if (depth == 1) at_top_key = true;
    return true;
  }
  bool end_map_key() {
    if (depth == 1) at_top_key = false;
    return true;
  }
  bool start_map_value() {
    if (depth == 1 && current_is_key) at_key_value = true;
    return true;
  }
  bool end_map_value() {
    if (depth == 1) at_key_value = current_is_key = false;
    return true;
  }
};

// Stops at the first container header and keeps its count.
struct HeaderVisitor : Visitor {
  bool want_map = false;
  std::optional<uint64_t> count;
  bool start_array(uint32_t n) {
    if (!want_map) count = n;
    return false;
  }
  bool start_map(uint32_t n) {
    if (want_map) count = n;
    return false;
  }
};

// The .keys file: one array of str.
struct KeysVisitor : Visitor {
  explicit KeysVisitor(KeyList& k, size_t file_size) : keys(k), size(file_size) {}
  KeyList& keys;
  size_t size;
  int depth = 0;
  bool not_a_key() {
    return refuse(depth == 0 ? "is not a msgpack array"
                             : "holds a non-string key at position " + std::to_string(keys.size()));
  }
  bool visit_nil() { return not_a_key(); }
  bool visit_boolean(bool) { return not_a_key(); }
  bool visit_positive_integer(uint64_t) { return not_a_key(); }
  bool visit_negative_integer(int64_t) { return not_a_key(); }
  bool visit_float32(float) { return not_a_key(); }
  bool visit_float64(double) { return not_a_key(); }
  bool visit_bin(const char*, uint32_t) { return not_a_key(); }
  bool visit_ext(const char*, uint32_t) { return not_a_key(); }
  bool start_map(uint32_t) { return not_a_key(); }
  bool visit_str(const char* v, uint32_t n) {
    if (depth != 1) return not_a_key();
    keys.push_back(std::string_view(v, n));
    return true;
  }
  bool start_array(uint32_t n) {
    if (depth != 0) return not_a_key();
    // Each key takes at least one byte: a larger count is a lie.
    if (n > size)
      return refuse("declares " + std::to_string(n) + " keys in " + std::to_string(size) +
                    " bytes");
    keys.reserve(n, size);
    ++depth;
    return true;
  }
};

// The legacy .index file: one map of str -> uint.
struct LegacyIndexVisitor : Visitor {
  LegacyIndexVisitor(KeyList& k, std::vector<uint64_t>& o, size_t file_size)
      : keys(k), offsets(o), size(file_size) {}
  KeyList& keys;
  std::vector<uint64_t>& offsets;
  size_t size;
  int depth = 0;
  bool in_key = false;
  bool wrong(const char* what) {
    return refuse(depth == 0 ? std::string("is not a msgpack map")
                             : "entry " + std::to_string(offsets.size()) + " has " + what);
  }
  bool visit_nil() { return wrong("a nil"); }
  bool visit_boolean(bool) { return wrong("a bool"); }
  bool visit_negative_integer(int64_t) { return wrong("a negative offset"); }
  bool visit_float32(float) { return wrong("a float"); }
  bool visit_float64(double) { return wrong("a float"); }
  bool visit_bin(const char*, uint32_t) { return wrong("a bin key"); }
  bool visit_ext(const char*, uint32_t) { return wrong("an ext value"); }
  bool start_array(uint32_t) { return wrong("an array"); }
  bool visit_str(const char* v, uint32_t n) {
    if (depth != 1 || !in_key) return wrong("a string offset");
    keys.push_back(std::string_view(v, n));
    return true;
  }
  bool visit_positive_integer(uint64_t v) {
    if (depth != 1 || in_key) return wrong("a non-string key");
    offsets.push_back(v);
    return true;
  }
  bool start_map(uint32_t n) {
    if (depth != 0) return wrong("a nested map");
    if (n > size / 2)
      return refuse("declares " + std::to_string(n) + " entries in " + std::to_string(size) +
                    " bytes");
    keys.reserve(n, size);
    offsets.reserve(n + 1);
    ++depth;
    return true;
  }
  bool start_map_key() {
    in_key = true;
    return true;
  }
  bool end_map_key() {
    in_key = false;
    return true;
  }
};

}  // namespace

SampleKey scan_sample(std::string_view sample) {
  SampleVisitor v;
  ScanError error = parse_whole(sample, v);
  if (error.empty() && !v.found) error = "has no \"key\" entry (a str key naming the sample)";
  return {v.key, error};
}

// Every sample read is checked, so this walks the bytes itself rather than
// through msgpack-cxx's parser (whose stack and visitor calls show in the
// profile of iterating samples, docs/performance.md): a count of objects still due, and
// each header's length. Same verdicts and messages as parse_whole (tests/
// datadings compares the two on damaged samples).
ScanError check_one_object(std::string_view bytes) {
  const auto* const begin = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* const end = begin + bytes.size();
  const auto* p = begin;
  auto truncated = [&] {
    return "truncated: the msgpack object needs more than its " + std::to_string(bytes.size()) +
           " bytes";
  };
  // The big-endian length field of `width` bytes at p, stepped over.
  auto length = [&](int width, uint64_t& out) {
    if (static_cast<size_t>(end - p) < static_cast<size_t>(width)) return false;
    out = 0;
    for (int k = 0; k < width; ++k) out = out << 8 | *p++;
    return true;
  };
  uint64_t due = 1;  // objects still to read; each takes at least one byte
  while (due > 0) {
    if (due > static_cast<uint64_t>(end - p)) return truncated();
    const unsigned char b = *p++;
    --due;
    uint64_t n = 0, skip = 0;
    if (b <= 0x7f || b >= 0xe0) continue;  // fixint
    if (b <= 0x8f) {
      due += 2 * uint64_t(b & 0x0f);
      continue;
    }  // fixmap
    if (b <= 0x9f) {
      due += b & 0x0f;
      continue;
    }  // fixarray
    if (b <= 0xbf)
      skip = b & 0x1f;  // fixstr
    else
      switch (b) {
        case 0xc0:
        case 0xc2:
        case 0xc3:
          continue;  // nil, false, true
        case 0xc1:
          return "not valid msgpack (bad byte at offset " + std::to_string(p - 1 - begin) + ")";
        case 0xc4:
        case 0xd9:
          if (!length(1, skip)) return truncated();
          break;  // bin8, str8
        case 0xc5:
        case 0xda:
          if (!length(2, skip)) return truncated();
          break;
        case 0xc6:
        case 0xdb:
          if (!length(4, skip)) return truncated();
          break;
        case 0xc7:
          if (!length(1, skip)) return truncated();
          ++skip;
          break;  // ext: type byte, data
        case 0xc8:
          if (!length(2, skip)) return truncated();
          ++skip;
          break;
        case 0xc9:
          if (!length(4, skip)) return truncated();
          ++skip;
          break;
        case 0xca:
          skip = 4;
          break;  // float32
        case 0xcb:
          skip = 8;
          break;
        case 0xcc:
        case 0xd0:
          skip = 1;
          break;  // (u)int8
        case 0xcd:
        case 0xd1:
          skip = 2;
          break;
        case 0xce:
        case 0xd2:
          skip = 4;
          break;
        case 0xcf:
        case 0xd3:
          skip = 8;
          break;
        case 0xd4:
          skip = 2;
          break;  // fixext 1, 2, 4, 8, 16
        case 0xd5:
          skip = 3;
          break;
        case 0xd6:
          skip = 5;
          break;
        case 0xd7:
          skip = 9;
          break;
        case 0xd8:
          skip = 17;
          break;
        case 0xdc:
          if (!length(2, n)) return truncated();
          due += n;
          continue;  // array16
        case 0xdd:
          if (!length(4, n)) return truncated();
          due += n;
          continue;
        case 0xde:
          if (!length(2, n)) return truncated();
          due += 2 * n;
          continue;  // map16
        case 0xdf:
          if (!length(4, n)) return truncated();
          due += 2 * n;
          continue;
      }
    if (skip > static_cast<uint64_t>(end - p)) return truncated();
    p += skip;
  }
  if (p != end)
    return "holds " + std::to_string(end - p) + " bytes after the end of its msgpack object";
  return {};
}

ScanError check_one_object_with_msgpack_cxx(std::string_view bytes) {
  Visitor v;
  return parse_whole(bytes, v);
}

std::optional<uint64_t> container_count(std::string_view prefix, bool want_map) {
  HeaderVisitor v;
  v.want_map = want_map;
  size_t off = 0;
  msgpack::parse(prefix.data(), prefix.size(), off, v);
  return v.count;
}

ScanError parse_keys(std::string_view bytes, KeyList& keys) {
  KeysVisitor v(keys, bytes.size());
  return parse_whole(bytes, v);
}

ScanError parse_legacy_index(std::string_view bytes, KeyList& keys,
                             std::vector<uint64_t>& offsets) {
  LegacyIndexVisitor v(keys, offsets, bytes.size());
  return parse_whole(bytes, v);
}

bool is_utf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0)
      len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
      len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
      len = 4, cp = c & 0x07;
    else
      return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace datadings
