// z5 (github constantinpape/z5) on the zarrs suite's arrays, in the same
// process as stowage (zarrs_suite.cpp); built only with -Dz5_include.
#pragma once

#include "zarrs_suite.hpp"

#include <cstdint>
#include <string>

namespace z5_suite {

// The whole array at `path` (a Zarr v3 array of n^3 uint16) into `out`.
void read_all(const std::string& path, uint16_t* out, int threads);
// Reads `path` whole into `buffer` and writes it into a new array at `to`
// with the layout's codecs, chunks and shards.
void round_trip(const std::string& path, const std::string& to, const zarrs_suite::Layout& layout,
                uint16_t* buffer, int threads);
// Every chunk of `edge`^3 (the inner chunks of a sharded array) read one by
// one by `concurrency` threads, each into a buffer of its own; with `sum`,
// returns the sum of all values read (the untimed run the caller checks).
uint64_t read_chunks(const std::string& path, uint64_t edge, int concurrency, bool sum);

}  // namespace z5_suite
