// Helpers for the tests of format plugins on the storage layer
// (stowage/storage.hpp): the registry's backend of a location, copying a
// local file into any backend (mem://), and the grep that a plugin's sources
// do no file-system I/O of their own.
#pragma once

#include "test_support.hpp"

#include <stowage/storage.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <regex>
#include <sstream>
#include <string>

namespace test {

// The global registry's backend of `location` (its memory backend lives as
// long as the process, so what one test puts under mem:// stays there).
inline stowage::sdk::Storage storage_for(const std::string& location) {
  stowage::Registry::StorageBackend b = stowage::Registry::global().storage(location);
  return stowage::sdk::Storage(b.vtable, b.handle, b.capabilities);
}

// Puts local files under `to` (a mem:// key, say) byte for byte: `from` is a
// file, or a directory and everything under it, of which `keep(name)`, when
// given, picks the files by name.
inline void copy_into_storage(const fs::path& from, const std::string& to,
                              const std::function<bool(const std::string&)>& keep = {}) {
  stowage::sdk::Storage storage = storage_for(to);
  if (!fs::is_directory(from)) return storage.write(to, read_file(from));
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), from).generic_string();
    if (!keep || keep(e.path().filename().string()))
      storage.write(to + "/" + rel, read_file(e.path()));
  }
}

// The bytes under `key`, from whatever backend serves it.
inline std::string read_from_storage(const std::string& key) {
  return std::string(storage_for(key).read(key).text());
}

// Source text with comments and string literals blanked, so a word in a
// comment or a message is no call.
inline std::string code_only(const std::string& text) {
  static const std::regex comments(R"(//[^\n]*|/\*[\s\S]*?\*/|"(\\.|[^"\\\n])*")");
  return std::regex_replace(text, comments, " ");
}

// Checks (doctest CHECKs, naming file and line) that no .cpp or .hpp file in
// `dir` (and below it) does file-system I/O of its own or keeps thread_local state: all of
// it goes through the storage layer (issue 19). Returns how many files it read.
inline size_t check_no_direct_file_io(const fs::path& dir) {
  // Direct POSIX calls: any of them qualified as ::name(, and the ones no
  // class would name a method unqualified (a declaration such as
  // "static ssize_t pread(" is no call: a type precedes it).
  static const std::regex direct(
      R"((^|\W)::\s*(open|openat|creat|read|write|close|pread|pwrite|rename|renameat2?|unlink|unlinkat|rmdir|)"
      R"(mmap|munmap|mkdir|mkdirat|opendir|readdir|ftruncate|truncate|fsync|flock|stat|lstat|fstat|fopen|)"
      R"(copy_file_range)\s*\(|)"
      R"((^|[^\w.>:*&\s])\s*(openat|creat|pread|pwrite|renameat2?|unlink|unlinkat|rmdir|mmap|munmap|mkdir|mkdirat|)"
      R"(opendir|readdir|ftruncate|fsync|flock|fopen|copy_file_range)\s*\()");
  // Headers that bring them, C++ file streams and std::filesystem, and
  // per-thread state. (The SDK has no file helpers any more to call.)
  static const std::regex forbidden(
      R"(std::filesystem|[io]?fstream|<filesystem>|<fcntl\.h>|<unistd\.h>|<dirent\.h>|<sys/mman\.h>|<sys/stat\.h>|)"
      R"(\bthread_local\b)");
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp") continue;
    ++files;
    std::istringstream lines(code_only(read_file(e.path())));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      CHECK_MESSAGE(!std::regex_search(line, direct), e.path().filename().string()
                                                          << ":" << n << ": " << line);
      CHECK_MESSAGE(!std::regex_search(line, forbidden), e.path().filename().string()
                                                             << ":" << n << ": " << line);
    }
  }
  return files;
}

// True when the built plugin `name` (stowage_format_datg, ...), found on
// $STOWAGE_PLUGIN_PATH, has a TLS segment: thread_local state, its own or
// from a header it inlines. A plugin that is not found fails the test.
inline bool has_tls_segment(const std::string& name) {
  std::stringstream dirs(env_or("STOWAGE_PLUGIN_PATH", ""));
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path so = fs::path(dir) / (name + ".so");
    if (dir.empty() || !fs::exists(so)) continue;
    RunResult r = run("readelf -lW " + quote(so.string()));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    return r.output.find(" TLS ") != std::string::npos;
  }
  FAIL(name << ".so is not on STOWAGE_PLUGIN_PATH");
  return true;
}

}  // namespace test
