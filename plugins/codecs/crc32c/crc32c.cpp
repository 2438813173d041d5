// Codec "crc32c": the Zarr v3 core codec crc32c (and numcodecs' CRC32C): the
// payload followed by its CRC-32C (Castagnoli), 4 bytes little-endian.
//
//   {"type": "crc32c"}   (no parameters; Zarr v3's codec has no configuration)
//
// Debian 12 packages no C library for CRC-32C, so Boost.CRC (libboost-dev,
// header-only, as the Zarr plugin's shard index uses) computes it.
#include "../common/checksum32.hpp"

#include <boost/crc.hpp>

namespace {

struct Crc32c {
  static constexpr const char* kId = "crc32c";
  static constexpr checksum32::Location kLocation = checksum32::Location::end;
  static constexpr bool kLocationParam = false;
  static uint32_t checksum(const uint8_t* data, size_t n) {
    boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
    crc.process_bytes(data, n);
    return crc.checksum();
  }
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(checksum32::Codec<Crc32c>, "crc32c", "1.0.0",
                            "Zarr v3 crc32c: the payload and its CRC-32C (4 bytes LE) after it",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
