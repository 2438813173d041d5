// Puts local files into a storage location (mem://..., or a path) byte for
// byte, through the registry's backend: fixtures read from memory are then
// the very bytes the format's authors wrote.
#pragma once

#include "test_support.hpp"

#include <stowage/storage.hpp>

#include <functional>
#include <string>

namespace test {

inline stowage::sdk::Storage storage_for(const std::string& location) {
  auto b = stowage::Registry::global().storage(location);
  return stowage::sdk::Storage(b.vtable, b.handle, b.capabilities);
}

// Copies `from` (a file, or a directory and everything under it) to `to`;
// `keep(name)`, when given, picks the files of a directory by name.
inline void copy_into_storage(const fs::path& from, const std::string& to,
                              const std::function<bool(const std::string&)>& keep = {}) {
  stowage::sdk::Storage storage = storage_for(to);
  if (!fs::is_directory(from)) return storage.write(to, read_file(from));
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), from).generic_string();
    if (!keep || keep(e.path().filename().string())) storage.write(to + "/" + rel, read_file(e.path()));
  }
}

}  // namespace test
