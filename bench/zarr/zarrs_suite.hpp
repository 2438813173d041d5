// The zarrs benchmark suite's workload (github zarrs/zarr_benchmarks, its
// generate_benchmark_array.rs): shared by zarrs_suite.cpp and its z5 peer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zarrs_suite {

// Element (z, y, x) of the array, in u64 integer arithmetic as the suite fixes it.
inline uint16_t value(uint64_t z, uint64_t y, uint64_t x) {
  return static_cast<uint16_t>((x + y * y / 32 + z * z * z) % 65536);
}

// The three layouts, all Zarr v3: raw in 256^3 chunks, zstd (level 3, no
// checksum) in 256^3 chunks, 256^3 shards of 64^3 zstd inner chunks.
struct Layout {
  std::string name;
  bool zstd = false;
  bool sharded = false;
  uint64_t chunk() const { return sharded ? 64 : 256; }  // the unit read one by one
};
inline const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {"raw", false, false}, {"zstd", true, false}, {"sharded", true, true}};
  return all;
}

}  // namespace zarrs_suite
