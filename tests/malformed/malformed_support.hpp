// Helpers of the malformed-input suite: read a whole dataset the way a user
// would, and check that a broken one fails with one exact status and a
// message naming the file.
#pragma once

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

namespace malformed {

namespace fs = std::filesystem;
using stowage::ErrorCode;

// Opens `path` with `format` and reads every node: describe, labels, all
// values, all records. Throws whatever the plugins throw.
void read_everything(const std::string& path, const std::string& format);
// The same, returning everything read (shapes, values, labels, strings,
// records) as one byte string, so two reads can be compared.
std::string snapshot_everything(const std::string& path, const std::string& format);

// The outcome of running something on broken input.
struct Outcome {
  bool threw = false;
  ErrorCode code = ErrorCode::ok;
  std::string message;
};
Outcome attempt(const std::function<void()>& fn);

// CHECKs that `fn` throws stowage::Error with `code` and a message that
// contains `must_name` (the file or dataset), with `what` in the report.
void expect_error(const std::string& what, const std::function<void()>& fn, ErrorCode code,
                  const std::string& must_name);

// A copy of a fixture file or directory in `dir`, writable.
fs::path copy_fixture(const fs::path& fixture, const fs::path& dir, const std::string& name = {});

std::string slurp(const fs::path& p);
void spit(const fs::path& p, const std::string& data);

// Offsets to truncate a file of `size` bytes at: every offset of the first
// 64 bytes, then a spread over the rest (always below size).
std::vector<size_t> truncation_points(size_t size, size_t spread = 24);

}  // namespace malformed
