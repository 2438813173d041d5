// lz4-java's LZ4Block stream, byte for byte. Each block:
//   "LZ4Block" | token = method | level | compressedLength | decompressedLength
//   | checksum (int32 LE each) | payload
// method 0x10 = RAW (stored), 0x20 = LZ4 block; level = max(0, ceil(log2(blockSize)) - 10);
// checksum = XXH32(decompressed, seed 0x9747B28C) & 0x0FFFFFFF. The stream ends with a
// RAW block whose three ints are 0 (the end mark).
#include "lz4_block_stream.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <lz4.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace stowage_lz4 {
namespace {

using stowage::sdk::corrupt;
using stowage::sdk::load_le;
using stowage::sdk::store_le;

constexpr uint8_t kMagic[8] = {'L', 'Z', '4', 'B', 'l', 'o', 'c', 'k'};
constexpr uint8_t kMethodRaw = 0x10;
constexpr uint8_t kMethodLz4 = 0x20;
constexpr uint32_t kChecksumSeed = 0x9747B28C;
constexpr uint32_t kChecksumMask = 0x0FFFFFFF;  // lz4-java's StreamingXXHash32.asChecksum()

// The low nibble of the token: how many KiB-doublings the writer's buffer has.
uint8_t compression_level(uint32_t block_size) {
  int bits = 32 - __builtin_clz(block_size - 1);  // ceil(log2(block_size)), block_size >= 64
  return static_cast<uint8_t>(std::max(0, bits - 10));
}

uint32_t checksum(const uint8_t* data, size_t n) {
  return static_cast<uint32_t>(XXH32(data, n, kChecksumSeed)) & kChecksumMask;
}

void write_header(uint8_t* at, uint8_t token, uint32_t compressed, uint32_t original,
                  uint32_t check) {
  std::memcpy(at, kMagic, sizeof kMagic);
  at[8] = token;
  store_le<uint32_t>(at + 9, compressed);
  store_le<uint32_t>(at + 13, original);
  store_le<uint32_t>(at + 17, check);
}

[[noreturn]] void output_too_small(size_t capacity) {
  stowage::sdk::invalid("lz4: the output buffer (" + std::to_string(capacity) +
                        " bytes) is smaller than bound() for this input");
}

// Encodes one block of `n` bytes at out (header included); returns its size.
size_t encode_block(const uint8_t* in, size_t n, uint8_t* out, size_t capacity, uint8_t level) {
  if (capacity < kBlockHeaderSize) output_too_small(capacity);
  uint8_t* payload = out + kBlockHeaderSize;
  size_t room = capacity - kBlockHeaderSize;
  // lz4-java keeps the LZ4 result only when it is strictly smaller than the
  // input. Limiting the output to n-1 bytes gives exactly that decision, and
  // liblz4's limited-output mode emits the same bytes as the unlimited one.
  int limit = static_cast<int>(std::min(room, n - 1));
  int compressed =
      LZ4_compress_default(reinterpret_cast<const char*>(in), reinterpret_cast<char*>(payload),
                           static_cast<int>(n), limit);
  uint8_t method = kMethodLz4;
  if (compressed <= 0) {
    if (room < n) output_too_small(capacity);
    std::memcpy(payload, in, n);
    compressed = static_cast<int>(n);
    method = kMethodRaw;
  }
  write_header(out, method | level, static_cast<uint32_t>(compressed), static_cast<uint32_t>(n),
               checksum(in, n));
  return kBlockHeaderSize + static_cast<size_t>(compressed);
}

std::string hex_byte(uint8_t b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02X", b);
  return text;
}

std::string at_offset(size_t offset) { return " at byte " + std::to_string(offset); }

struct BlockHeader {
  uint8_t method, level;
  int32_t compressed, original;
  uint32_t check;
};

// Reads and checks the header at `pos` as lz4-java's LZ4BlockInputStream does.
BlockHeader read_header(const uint8_t* in, size_t n, size_t pos) {
  if (n - pos < kBlockHeaderSize)
    corrupt("lz4: LZ4Block stream truncated: " + std::to_string(n - pos) +
            " bytes left for a 21-byte block header" + at_offset(pos));
  const uint8_t* p = in + pos;
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0)
    corrupt("lz4: LZ4Block stream: no \"LZ4Block\" magic" + at_offset(pos));
  BlockHeader h{static_cast<uint8_t>(p[8] & 0xF0), static_cast<uint8_t>(p[8] & 0x0F),
                static_cast<int32_t>(load_le<uint32_t>(p + 9)),
                static_cast<int32_t>(load_le<uint32_t>(p + 13)), load_le<uint32_t>(p + 17)};
  if (h.method != kMethodRaw && h.method != kMethodLz4)
    corrupt("lz4: LZ4Block stream: unknown compression method in token " + hex_byte(p[8]) +
            at_offset(pos));
  if (h.compressed < 0 || h.original < 0 || h.original > (int64_t(1) << (10 + h.level)) ||
      (h.original == 0) != (h.compressed == 0) ||
      (h.method == kMethodRaw && h.original != h.compressed))
    corrupt("lz4: LZ4Block stream: impossible block lengths (compressed " +
            std::to_string(h.compressed) + ", decompressed " + std::to_string(h.original) +
            ", level " + std::to_string(h.level) + ")" + at_offset(pos));
  if (h.original == 0 && h.check != 0)
    corrupt("lz4: LZ4Block stream: end mark with a nonzero checksum" + at_offset(pos));
  return h;
}

// Decodes one block's payload (bounds already checked) and verifies its checksum.
void decode_payload(const BlockHeader& h, const uint8_t* payload, uint8_t* dst, size_t pos) {
  if (h.method == kMethodRaw) {
    std::memcpy(dst, payload, static_cast<size_t>(h.original));
  } else {
    int got = LZ4_decompress_safe(reinterpret_cast<const char*>(payload),
                                  reinterpret_cast<char*>(dst), h.compressed, h.original);
    if (got != h.original)
      corrupt("lz4: LZ4Block stream: corrupt LZ4 block (" + std::to_string(h.compressed) +
              " bytes should decode to exactly " + std::to_string(h.original) + ")" +
              at_offset(pos));
  }
  if (checksum(dst, static_cast<size_t>(h.original)) != h.check)
    corrupt("lz4: LZ4Block stream: checksum mismatch" + at_offset(pos));
}

}  // namespace

uint64_t block_stream_bound(uint64_t n, uint32_t block_size) {
  uint64_t blocks = (n + block_size - 1) / block_size;
  return n + kBlockHeaderSize * (blocks + 1);
}

size_t block_stream_encode(const uint8_t* in, size_t n, uint8_t* out, size_t capacity,
                           uint32_t block_size) {
  const uint8_t level = compression_level(block_size);
  size_t written = 0;
  for (size_t done = 0; done < n;) {
    size_t chunk = std::min<size_t>(block_size, n - done);
    written += encode_block(in + done, chunk, out + written, capacity - written, level);
    done += chunk;
  }
  if (capacity - written < kBlockHeaderSize) output_too_small(capacity);
  write_header(out + written, kMethodRaw | level, 0, 0, 0);
  return written + kBlockHeaderSize;
}

bool is_block_stream(const uint8_t* in, size_t n) {
  return n >= sizeof kMagic && std::memcmp(in, kMagic, sizeof kMagic) == 0;
}

size_t block_stream_decode(const uint8_t* in, size_t n, uint8_t* out, size_t capacity) {
  size_t pos = 0, written = 0;
  while (pos < n) {  // a stream may also simply end at a block boundary (N5 Java 3.x)
    const BlockHeader h = read_header(in, n, pos);
    const size_t payload = pos + kBlockHeaderSize;
    if (h.original == 0) break;  // the end mark: lz4-java stops here
    if (n - payload < static_cast<size_t>(h.compressed))
      corrupt("lz4: LZ4Block stream truncated: block needs " + std::to_string(h.compressed) +
              " payload bytes, " + std::to_string(n - payload) + " left" + at_offset(pos));
    if (capacity - written < static_cast<size_t>(h.original))
      corrupt("lz4: LZ4Block stream decodes to more than the expected " + std::to_string(capacity) +
              " bytes" + at_offset(pos));
    decode_payload(h, in + payload, out + written, pos);
    pos = payload + static_cast<size_t>(h.compressed);
    written += static_cast<size_t>(h.original);
  }
  return written;
}

}  // namespace stowage_lz4
