// z5 (github.com/constantinpape/z5, header-only C++) as a peer of the N5
// benchmark, in the same process: built only with -Dz5_include=DIR (z5's
// include/ folder; nothing of z5 is in this repository). z5 needs C++20, so
// this file pair is compiled apart from n5_bench.cpp (C++17) and meets it
// through this plain interface.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace z5_peer {

struct Figures {
  double write_s = 0, read_s = 0, random_chunk_us = 0;
  uint64_t bytes = 0;  // chunk files on disk
};

// Writes `volume` (256x512x512 uint16, C order) into a fresh N5 dataset with
// 64^3 chunks under `dir` for each codec (raw, gzip, zstd, blosc; others are
// skipped) `runs` times, reads it back whole `runs` times (checking the
// values) and reads the same 1000 random chunks as n5_bench `runs` times,
// all on one thread; each figure is the best run. `codec_json` is the N5
// compression object n5_bench writes with. Errors throw std::runtime_error.
std::map<std::string, Figures> run(const std::string& dir, const std::vector<uint16_t>& volume,
                                   const std::map<std::string, std::string>& codec_json,
                                   const std::vector<std::vector<uint64_t>>& random_chunks,
                                   int runs, bool cpu_clock);

}  // namespace z5_peer
