// The check that a plugin does no file-system I/O of its own, everything
// going through the storage layer (stowage/storage.hpp): a grep of its
// sources, comments and string literals blanked, for direct POSIX calls, the
// headers that bring them, C++ file streams, std::filesystem and
// plugin_util.hpp's file helpers. Shared by the format tests (daf, bpcells,
// datadings).
#pragma once

#include "test_support.hpp"

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace test {

// Source text with comments and string literals blanked, so a word in a
// comment or a message is no call.
inline std::string code_only(const std::string& text) {
  static const std::regex comments(R"(//[^\n]*|/\*[\s\S]*?\*/|"(\\.|[^"\\\n])*")");
  return std::regex_replace(text, comments, " ");
}

// Direct POSIX calls: any of them qualified as ::name(, and the ones no
// class would name a method unqualified (a declaration such as
// "static ssize_t pread(" is no call: a type precedes it).
inline const std::regex& direct_io_call() {
  static const std::regex r(
      R"((^|\W)::\s*(open|openat|creat|read|write|close|pread|pwrite|rename|renameat2?|unlink|unlinkat|rmdir|)"
      R"(mmap|munmap|mkdir|mkdirat|opendir|readdir|ftruncate|truncate|fsync|flock|stat|lstat|fstat|fopen)\s*\(|)"
      R"((^|[^\w.>:*&\s])\s*(openat|creat|pread|pwrite|renameat2?|unlink|unlinkat|rmdir|mmap|munmap|mkdir|mkdirat|)"
      R"(opendir|readdir|ftruncate|fsync|flock|fopen)\s*\()");
  return r;
}

// Headers that bring them, C++ file streams and std::filesystem, and
// plugin_util.hpp's file helpers.
inline const std::regex& file_io_name() {
  static const std::regex r(
      R"(std::filesystem|[io]?fstream|<filesystem>|<fcntl\.h>|<unistd\.h>|<dirent\.h>|<sys/mman\.h>|<sys/stat\.h>|)"
      R"(sdk::(File|MappedFile|AtomicFile|FileSetCommit|read_file|write_file_atomic|create_temporary\w*|)"
      R"(replace_atomically|make_directories|DirectoryLock|is_regular_file|is_directory|path_exists|commit_files|)"
      R"(complete_file_set_commit|io_fail)\b)");
  return r;
}

struct SourceScan {
  size_t files = 0;                   // .cpp and .hpp files read
  std::vector<std::string> findings;  // "file:line: text" of each line that matches
};

// Every line of the .cpp and .hpp files under `dir` (and its subfolders)
// whose code matches one of `patterns`.
inline SourceScan scan_sources(const fs::path& dir, const std::vector<const std::regex*>& patterns) {
  SourceScan scan;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
    ++scan.files;
    std::istringstream lines(code_only(read_file(e.path())));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      for (const std::regex* p : patterns)
        if (std::regex_search(line, *p)) {
          scan.findings.push_back(fs::relative(e.path(), dir).string() + ":" + std::to_string(n) + ": " + line);
          break;
        }
    }
  }
  return scan;
}

// The lines of a plugin's sources (plugins/<kind>/<name>) doing file I/O of their own.
inline SourceScan direct_io_in(const fs::path& dir) { return scan_sources(dir, {&direct_io_call(), &file_io_name()}); }

}  // namespace test
