// Daf's line files (axes/*.txt, *.txt, *.nztxt): one entry per line, every
// line terminated by '\n' (so a 0-byte file is zero lines), '\r' kept.
#pragma once

#include <stowage/plugin.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace daf {

// Splits a line file into its entries. Julia asserts that the final piece
// after the last '\n' is empty, so a missing final newline is CORRUPT.
inline std::vector<std::string> split_lines(std::string_view data, const std::string& file) {
  std::vector<std::string> lines;
  if (data.empty()) return lines;
  if (data.back() != '\n')
    stowage::sdk::corrupt(file +
                          ": the last line has no final newline (Daf line files end with '\\n')");
  size_t start = 0;
  while (start < data.size()) {
    size_t nl = data.find('\n', start);
    lines.emplace_back(data.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// Refuses a value that cannot be stored in a line file.
inline void check_line_value(std::string_view value, const std::string& what) {
  if (value.find('\n') != std::string_view::npos)
    stowage::sdk::invalid(what + ": the value '" + std::string(value.substr(0, 40)) +
                          "...' contains a newline, which a Daf line file cannot store");
}

// Builds a line file; `what` names the property for the error.
template <class Strings>
std::string join_lines(const Strings& values, const std::string& what) {
  size_t total = 0;
  for (const auto& v : values) total += v.size() + 1;
  std::string out;
  out.reserve(total);
  for (const auto& v : values) {
    check_line_value(v, what);
    out.append(v.data(), v.size());
    out += '\n';
  }
  return out;
}

}  // namespace daf
