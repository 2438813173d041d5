// Helpers shared by the test suites: where the fixtures are, temporary
// directories, reading files, and running peer programs (Python, Java).
#pragma once

#include "failure.hpp"

#include <stowage/stowage.hpp>

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace test {

namespace fs = std::filesystem;

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

inline fs::path source_root() { return env_or("STOWAGE_SOURCE_ROOT", "."); }
// The reference files of tests/fixtures (meson sets STOWAGE_FIXTURES to it).
inline fs::path fixtures() {
  return env_or("STOWAGE_FIXTURES", (source_root() / "tests" / "fixtures").string().c_str());
}
inline fs::path build_root() { return env_or("STOWAGE_BUILD_ROOT", "."); }
inline std::string python() { return env_or("STOWAGE_PYTHON", "/usr/bin/python3"); }
// Whether python() can import this build's stowage package: not under
// sanitizers (meson.build sets STOWAGE_PYTHON_PACKAGE).
inline bool python_package() { return env_or("STOWAGE_PYTHON_PACKAGE", "0") == "1"; }

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void write_file(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary);
  out << data;
}
inline stowage::json read_json(const fs::path& p) { return stowage::json::parse(read_file(p)); }

// An array's whole content, in C order, as bytes.
inline std::string read_whole(const stowage::Array& a) {
  uint64_t n = stowage::dtype_size(a.dtype());
  for (uint64_t s : a.shape()) n *= s;
  std::string out(n, '\0');
  a.read(std::vector<uint64_t>(a.ndim(), 0), a.shape(), out.data());
  return out;
}

// Each array node of `nodes` is described as in `want` and reads the same, not empty.
inline void check_same_arrays(const stowage::Store& got, const stowage::Store& want,
                              std::initializer_list<const char*> nodes) {
  for (const char* node : nodes) {
    CAPTURE(node);
    CHECK(got.describe_json(node) == want.describe_json(node));
    const std::string bytes = read_whole(got.array(node));
    CHECK(bytes.size() > 0);
    CHECK(bytes == read_whole(want.array(node)));
  }
}

// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ =
        fs::temp_directory_path() / ("stowage-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

struct RunResult {
  int status;
  std::string output;  // stdout and stderr
};

// Appends a command a test runs to $STOWAGE_DEPS_LOG/commands-<pid>.txt, one
// line each (meson's test environment sets it): scripts/check-deps finds the
// Debian package of every program and jar named there and fails if
// scripts/install-deps does not install it.
inline void log_command(std::string command) {
  const char* folder = std::getenv("STOWAGE_DEPS_LOG");
  if (!folder || !*folder) return;
  for (char& c : command)
    if (c == '\n') c = ';';
  std::error_code ec;
  fs::create_directories(folder, ec);
  std::ofstream(fs::path(folder) / ("commands-" + std::to_string(::getpid()) + ".txt"),
                std::ios::app)
      << command << '\n';
}

// Runs a shell command, capturing its output.
inline RunResult run(const std::string& command) {
  log_command(command);
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// Runs a Python snippet with the peer Python (Debian's, with numpy/zarr).
inline RunResult run_python(const std::string& code, const std::string& args = "") {
  TempDir tmp;
  fs::path script = tmp / "peer.py";
  write_file(script, code);
  return run(python() + " " + script.string() + " " + args);
}

// The plugins this build left out (meson's -D<id>=disabled, or a library
// not found): meson sets $STOWAGE_PLUGINS_OFF to their ids, e.g.
// "zstd,blosc". A test case that needs one is skipped, as
//   TEST_CASE("..." * test::needs({"zstd"}))
// and a loop over codecs or fixtures passes it over (test::plugin_off).
// A build with every plugin (scripts/setup, CI) skips nothing.
inline bool plugin_off(std::string_view id) {
  std::string_view off =
      std::getenv("STOWAGE_PLUGINS_OFF") ? std::getenv("STOWAGE_PLUGINS_OFF") : "";
  while (!off.empty()) {
    size_t comma = off.find(',');
    if (off.substr(0, comma) == id) return true;
    off = comma == std::string_view::npos ? std::string_view() : off.substr(comma + 1);
  }
  return false;
}
inline doctest::skip needs(std::initializer_list<std::string_view> ids) {
  bool off = false;
  for (std::string_view id : ids) off = off || plugin_off(id);
  return doctest::skip(off);
}

// The codec plugin a codec configuration needs ({"type": "zlib"} is gzip's
// alias; no configuration, or no "type", is raw), and whether it is left out.
inline std::string codec_plugin(const stowage::json& config) {
  std::string type = config.is_object() ? config.value("type", "raw") : "raw";
  return type == "zlib" ? "gzip" : type;
}
inline bool codec_off(const stowage::json& config) { return plugin_off(codec_plugin(config)); }
// The codec configurations of a JSON array whose plugins this build has.
inline stowage::json codecs_built(const stowage::json& configs) {
  stowage::json kept = stowage::json::array();
  for (const stowage::json& c : configs)
    if (!codec_off(c)) kept.push_back(c);
  return kept;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

}  // namespace test

// Runs an expression that must throw stowage::Error with `expected_code`;
// evaluates to the error's message.
#define TEST_REQUIRE_ERROR(expr, expected_code)             \
  [&]() -> std::string {                                    \
    try {                                                   \
      expr;                                                 \
    } catch (const stowage::Error& e) {                     \
      CHECK_MESSAGE(e.code() == (expected_code), e.what()); \
      return e.what();                                      \
    }                                                       \
    FAIL("expected an error from " #expr);                  \
    return std::string();                                   \
  }()
