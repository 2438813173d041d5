// Everything a reader sees of a datadings dataset, as JSON, to compare the
// same dataset read from different places (a path, mem://, http://).
#pragma once

#include <test_support.hpp>

#include <string>

namespace dd_test {

inline std::string hex_of(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += digits[c >> 4], out += digits[c & 15];
  return out;
}

// The description, every sample (read in one range, and one by one from the
// end), every key with find() and contains() of it, an absent key, and the
// md5 check of the files.
inline stowage::json records_snapshot(stowage::Store store) {  // a handle: copies share the store
  stowage::json out;
  out["describe"] = store.describe_json("");
  stowage::Records r = store.records();
  r.read_range(0, r.size(), [&](std::string_view s) { out["samples"].push_back(hex_of(s)); });
  for (uint64_t i = r.size(); i-- > 0;) out["backwards"].push_back(hex_of(r.read(i)));
  for (uint64_t i = 0; i < r.size(); ++i) {
    std::string key = r.key(i);
    out["keys"].push_back(key);
    out["find"].push_back(r.find(key) ? stowage::json(*r.find(key)) : stowage::json(nullptr));
    out["contains"].push_back(r.contains(key));
  }
  out["absent"] = r.contains("no such key, surely");
  bool has_md5 = true;
  try {
    out["verify"] = store.command("", "verify");
  } catch (const stowage::Error& e) {
    has_md5 = false;
    out["verify"] = std::string(stowage::error_code_name(e.code()));
  }
  out["has_md5"] = has_md5;
  return out;
}

}  // namespace dd_test
