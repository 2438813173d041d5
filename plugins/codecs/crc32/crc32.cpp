// Codec "crc32": numcodecs' CRC32 (a Checksum32): the payload with its zlib
// CRC-32 (IEEE), 4 bytes little-endian, before it ("location": "start", the
// default of numcodecs and of zarr-python 3's numcodecs.crc32) or after it.
//
//   {"type": "crc32", "location": "start"}
#include <zlib.h>
#define STOWAGE_PLUGIN_BUILD_EXTRA ", zlib " ZLIB_VERSION

#include "../common/checksum32.hpp"

namespace {

struct Crc32 {
  static constexpr const char* kId = "crc32";
  static constexpr checksum32::Location kLocation = checksum32::Location::start;
  static constexpr bool kLocationParam = true;
  static uint32_t checksum(const uint8_t* data, size_t n) {
    // crc32_z takes a z_size_t: no slicing of large chunks.
    return static_cast<uint32_t>(crc32_z(crc32_z(0, nullptr, 0), data, n));
  }
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(checksum32::Codec<Crc32>, "crc32", "1.0.0",
                            "numcodecs crc32: the payload and its zlib CRC-32 (4 bytes LE)",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
