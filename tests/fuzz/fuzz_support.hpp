// Shared pieces of the libFuzzer targets: a scratch directory per process,
// the "bundle" input encoding for directory formats, and the rule that the
// only exception a plugin may surface is stowage::Error.
#pragma once

#include <stowage/stowage.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fuzz {

namespace fs = std::filesystem;

// One scratch directory for the whole run (in /dev/shm when there is one:
// every input is written to disk, so this is the hot path).
inline const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path d = base / ("stowage-fuzz-" + std::to_string(getpid()));
    fs::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    return d;
  }();
  return dir;
}

// Empties the scratch directory and returns a fresh place for one input.
inline fs::path fresh_root() {
  fs::path root = scratch() / "in";
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root);
  return root;
}

inline void write_bytes(const fs::path& p, const uint8_t* data, size_t size) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

inline uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// A bundle is a directory tree flattened into one input, so the fuzzer can
// mutate names and contents of a multi-file dataset together:
//   repeat { u16le name_length, name, u32le data_length, data }
// Names are relative paths; any that could leave `root` ("..", absolute,
// empty components) are skipped: the harness must never write outside its
// scratch directory. A truncated tail is written truncated.
inline void unpack_bundle(const uint8_t* data, size_t size, const fs::path& root) {
  size_t pos = 0;
  while (pos + 2 <= size) {
    size_t name_len = data[pos] | size_t(data[pos + 1]) << 8;
    pos += 2;
    if (name_len > size - pos) return;
    std::string name(reinterpret_cast<const char*>(data + pos), name_len);
    pos += name_len;
    if (size - pos < 4) return;
    size_t len = le32(data + pos);
    pos += 4;
    if (len > size - pos) len = size - pos;
    bool safe = !name.empty() && name.front() != '/' && name.back() != '/' &&
                name.find('\0') == std::string::npos;
    for (const auto& part : fs::path(name))
      if (part == ".." || part == "." || part.empty()) safe = false;
    if (safe) {
      std::error_code ec;
      fs::path target = root / name;
      fs::create_directories(target.parent_path(), ec);
      if (!ec && !fs::is_directory(target, ec)) write_bytes(target, data + pos, len);
    }
    pos += len;
  }
}

// Plugins of this build only (scripts/fuzz sets STOWAGE_PLUGIN_PATH), one
// worker thread so a finding reproduces the same way.
inline stowage::Registry& registry() {
  static stowage::Registry& r = []() -> stowage::Registry& {
    auto& g = stowage::Registry::global();
    g.set_threads(1);
    return g;
  }();
  return r;
}

}  // namespace fuzz
