// The 128 MiB uint16 volume the N5 benchmarks time (bench/n5, bench/http, bench/s3),
// with the same values as bench/n5/peer_zarr_n5.py: a smooth field plus 6
// bits of noise, so codecs see realistic data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bench {

inline const std::vector<uint64_t> kVolumeShape = {256, 512, 512};
inline const std::vector<uint64_t> kVolumeChunks = {64, 64, 64};

inline std::vector<uint16_t> make_volume() {
  std::vector<uint16_t> v(kVolumeShape[0] * kVolumeShape[1] * kVolumeShape[2]);
  size_t i = 0;
  for (uint32_t z = 0; z < kVolumeShape[0]; ++z)
    for (uint32_t y = 0; y < kVolumeShape[1]; ++y)
      for (uint32_t x = 0; x < kVolumeShape[2]; ++x) {
        uint32_t noise = ((z * 73856093u) ^ (y * 19349663u) ^ (x * 83492791u)) & 0x3f;
        v[i++] = uint16_t(z * 3 + y * 2 + x + noise);
      }
  return v;
}

// Every chunk file of an N5 container holding the volume as dataset "vol"
// (relative to the container, as "vol/z/y/x"), sorted.
inline std::vector<std::string> chunk_keys(const std::filesystem::path& container) {
  namespace fs = std::filesystem;
  std::vector<std::string> keys;
  for (const auto& e : fs::recursive_directory_iterator(container / "vol"))
    if (e.is_regular_file() && e.path().filename() != "attributes.json")
      keys.push_back(fs::relative(e.path(), container).string());
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace bench
