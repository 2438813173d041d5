// Helpers of the end-to-end HTTP tests (n5_over_http_test.cpp,
// daf_over_http_test.cpp): the command-line tools, a directory's files, and
// swapping a path for a URL in a tool's output.
#pragma once

#include "test_support.hpp"

#include <filesystem>
#include <map>
#include <string>

namespace test {

// Every file under `dir`, by relative path, with its bytes.
inline std::map<std::string, std::string> tree_of(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const std::filesystem::directory_entry& e :
       std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      files[std::filesystem::relative(e.path(), dir).string()] = read_file(e.path());
  return files;
}

// stowage-info or stowage-convert of this build.
inline std::filesystem::path tool(const char* name) {
  std::string dir = std::string(name) == "stowage-info" ? "info" : "convert";
  return build_root() / "tools" / dir / name;
}

inline std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace test
