// Codec "fletcher32": numcodecs' Fletcher32 (numcodecs >= 0.12; HDF5's and
// netCDF's H5_checksum_fletcher32): the payload followed by its Fletcher-32
// over big-endian 16-bit words, 4 bytes little-endian.
//
//   {"type": "fletcher32"}   (no parameters, as numcodecs has none)
//
// No Debian library has this variant (it is not the textbook Fletcher-32:
// words are read big-endian and the sums are folded, not reduced mod 65535),
// so it is written here, line for line after numcodecs' fletcher32.pyx.
#include "../common/checksum32.hpp"

namespace {

// Folds the carries above 16 bits back in (one's-complement addition).
inline uint32_t fold(uint32_t sum) { return (sum & 0xffff) + (sum >> 16); }

struct Fletcher32 {
  static constexpr const char* kId = "fletcher32";
  static constexpr checksum32::Location kLocation = checksum32::Location::end;
  static constexpr bool kLocationParam = false;
  static uint32_t checksum(const uint8_t* data, size_t n) {
    uint32_t sum1 = 0, sum2 = 0;
    // 360 words at most between folds keep both sums inside 32 bits.
    for (size_t words = n / 2; words > 0;) {
      size_t block = words < 360 ? words : 360;
      words -= block;
      for (; block > 0; --block, data += 2) {
        sum1 += (static_cast<uint32_t>(data[0]) << 8) | data[1];
        sum2 += sum1;
      }
      sum1 = fold(sum1);
      sum2 = fold(sum2);
    }
    if (n % 2) {  // an odd last byte is the high byte of a word
      sum1 += static_cast<uint32_t>(data[0]) << 8;
      sum2 += sum1;
      sum1 = fold(sum1);
      sum2 = fold(sum2);
    }
    return (fold(sum2) << 16) | fold(sum1);
  }
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(checksum32::Codec<Fletcher32>, "fletcher32", "1.0.0",
                            "numcodecs fletcher32: the payload and its HDF5 Fletcher-32 after it",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
