// datg_names.hpp -- the companion name files <base>.rows.txt.gz and
// <base>.cols.txt.gz: gzip'ed UTF-8, one line per name, the name being the
// first tab-separated field. No header line.
#pragma once

#include <stowage/plugin.hpp>
#include <stowage/storage.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace datg {

// Names stored back to back, so a million names cost one allocation.
class NameList {
 public:
  size_t size() const { return ends_.size(); }
  std::string_view operator[](size_t i) const {
    size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(text_).substr(begin, ends_[i] - begin);
  }
  void push_back(std::string_view name) {
    text_ += name;
    ends_.push_back(text_.size());
  }
  void reserve(size_t count) { ends_.reserve(count); }

 private:
  std::string text_;
  std::vector<uint64_t> ends_;
};

// Reads a name file that must hold exactly `expected` lines; `axis` ("row" or
// "column") words the errors. CR, LF and CRLF all end a line.
NameList read_name_file(const stowage::sdk::Storage& storage, const std::string& path,
                        uint64_t expected, const char* axis);

// Checks names before writing: no TAB/CR/LF (the format cannot escape them),
// valid UTF-8, and unique (the reference writer refuses duplicates).
void check_names_writable(const std::vector<std::string>& names, const char* axis,
                          const stowage::sdk::Host& host);

// The gzip'ed file content for `names` ("name\n" per name).
std::string encode_name_file(const std::vector<std::string>& names);

}  // namespace datg
