// libFuzzer target for one codec's decoder (built once per codec with
// -DFUZZ_CODEC=<target>; see scripts/fuzz).
//
// Input: u32le decoded capacity (clamped to 4 MiB), then the encoded bytes.
// The decoder must fill at most the capacity and either succeed or throw
// stowage::Error; anything else (a sanitizer report, another exception, a
// write past the buffer) is a finding. What decodes must also survive an
// encode/decode round trip unchanged.
#include "fuzz_support.hpp"

#include <cstring>
#include <memory>
#include <vector>

#ifndef FUZZ_CODEC
#error "build with -DFUZZ_CODEC=<gzip|bzip2|xz|lz4|lz4frame|blosc|zstd>"
#endif
#define FUZZ_STR2(x) #x
#define FUZZ_STR(x) FUZZ_STR2(x)

namespace {

const char* codec_config(const std::string& target) {
  if (target == "lz4") return R"({"type": "lz4"})";  // N5's LZ4Block framing
  if (target == "lz4frame") return R"({"type": "lz4", "framing": "frame"})";
  if (target == "gzip") return R"({"type": "gzip"})";
  if (target == "bzip2") return R"({"type": "bzip2"})";
  if (target == "xz") return R"({"type": "xz"})";
  if (target == "zstd") return R"({"type": "zstd"})";
  if (target == "blosc") return R"({"type": "blosc"})";
  std::abort();
}

const stowage::Codec& codec() {
  static stowage::Codec c = fuzz::registry().codec(codec_config(FUZZ_STR(FUZZ_CODEC)));
  return c;
}

constexpr size_t kMaxCapacity = size_t(4) << 20;

void round_trip(const uint8_t* decoded, size_t n) {
  std::vector<uint8_t> encoded(codec().bound(n));
  size_t m = codec().encode(decoded, n, encoded.data(), encoded.size());
  std::vector<uint8_t> again(n + 1);
  size_t k = codec().decode(encoded.data(), m, again.data(), n);
  if (k != n || (n && std::memcmp(again.data(), decoded, n) != 0)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  size_t capacity = fuzz::le32(data) % (kMaxCapacity + 1);
  // The last `capacity` bytes of one buffer, so ASan sees any write past
  // the end (its redzone follows). One allocation for the run: a fresh
  // multi-megabyte buffer per input costs more (page faults) than decoding.
  static std::unique_ptr<uint8_t[]> buffer(new uint8_t[kMaxCapacity]);
  uint8_t* out = buffer.get() + (kMaxCapacity - capacity);
  size_t written = 0;
  try {
    written = codec().decode(data + 4, size - 4, out, capacity);
  } catch (const stowage::Error&) {
    return 0;  // the expected outcome for garbage
  }
  if (written > capacity) std::abort();
  round_trip(out, written);
  return 0;
}
