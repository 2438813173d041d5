// The standard LZ4 frame format (lz4frame.h), as the datg format and
// rust-n5 use it: one frame per payload.
#pragma once

#include <cstddef>
#include <cstdint>

struct LZ4F_dctx_s;

namespace stowage_lz4 {

// A reusable LZ4 frame decompression context, for one thread at a time: made
// on first use (creating one per call would allocate, and it may hold a
// block-sized buffer that is worth reusing).
class FrameDecoder {
 public:
  FrameDecoder() = default;
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;
  ~FrameDecoder();
  // The context, reset for a new frame.
  LZ4F_dctx_s* reset();

 private:
  LZ4F_dctx_s* dctx_ = nullptr;
};

struct FrameOptions {
  bool content_checksum = true;
  bool block_checksum = false;
  int block_size_id = 7;  // 4 = 64 KiB ... 7 = 4 MiB
  bool content_size = false;
  int level = 0;  // 0..2 fast, 3..12 HC
};

uint64_t frame_bound(uint64_t n, const FrameOptions& options);
size_t frame_encode(const uint8_t* in, size_t n, uint8_t* out, size_t capacity,
                    const FrameOptions& options);

// True when the bytes start with the frame magic 04 22 4D 18.
bool is_frame(const uint8_t* in, size_t n);

// Decodes exactly one frame filling in[0..n): multi-block, stored blocks,
// block and content checksums (verified), content size (checked). Bytes
// after the frame, a truncated frame or more output than capacity are CORRUPT.
size_t frame_decode(FrameDecoder& decoder, const uint8_t* in, size_t n, uint8_t* out,
                    size_t capacity);

}  // namespace stowage_lz4
