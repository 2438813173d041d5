// lz4-java's LZ4Block stream (LZ4BlockOutputStream / LZ4BlockInputStream),
// the payload of N5's "lz4" compression. Layout: see plugins/codecs/lz4/README.md.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stowage_lz4 {

constexpr size_t kBlockHeaderSize = 21;  // magic 8, token 1, three int32 LE
constexpr int64_t kMinBlockSize = 64;
constexpr int64_t kMaxBlockSize = int64_t(1) << 25;

// Worst-case size of the stream for n input bytes: every block may be stored
// raw (the writer never emits a block larger than its input), plus the end mark.
uint64_t block_stream_bound(uint64_t n, uint32_t block_size);

// Writes the stream exactly as lz4-java 1.8 does with its default (fast)
// compressor: full blocks of block_size, RAW when LZ4 does not shrink, end mark.
size_t block_stream_encode(const uint8_t* in, size_t n, uint8_t* out, size_t capacity,
                           uint32_t block_size);

// True when the bytes start with the "LZ4Block" magic.
bool is_block_stream(const uint8_t* in, size_t n);

// Decodes blocks until the end mark (bytes after it are ignored, as lz4-java
// does) or until the input ends at a block boundary. Checks everything
// lz4-java checks; never writes past capacity.
size_t block_stream_decode(const uint8_t* in, size_t n, uint8_t* out, size_t capacity);

}  // namespace stowage_lz4
