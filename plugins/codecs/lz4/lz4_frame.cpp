// LZ4 frames through liblz4's lz4frame API. The decompression context comes
// from the caller (the codec's Context, pooled by the host).
#include "lz4_frame.hpp"

#include <stowage/plugin.hpp>

#include <lz4frame.h>

#include <cstring>
#include <string>

namespace stowage_lz4 {
namespace {

using stowage::sdk::corrupt;

constexpr uint8_t kFrameMagic[4] = {0x04, 0x22, 0x4D, 0x18};

LZ4F_preferences_t preferences(const FrameOptions& o, size_t n) {
  LZ4F_preferences_t p;
  std::memset(&p, 0, sizeof p);
  p.frameInfo.blockSizeID = static_cast<LZ4F_blockSizeID_t>(o.block_size_id);
  // Independent blocks: what commons-compress writes, and what any reader takes.
  p.frameInfo.blockMode = LZ4F_blockIndependent;
  p.frameInfo.contentChecksumFlag =
      o.content_checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  p.frameInfo.blockChecksumFlag =
      o.block_checksum ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
  p.frameInfo.contentSize = o.content_size ? n : 0;
  p.frameInfo.dictID = 0;  // never: commons-compress (datg's reader) refuses it
  p.compressionLevel = o.level;
  return p;
}

}  // namespace

FrameDecoder::~FrameDecoder() {
  if (dctx_) LZ4F_freeDecompressionContext(dctx_);
}

LZ4F_dctx* FrameDecoder::reset() {
  if (!dctx_) {
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx_, LZ4F_VERSION)))
      stowage::sdk::fail(STOWAGE_INTERNAL, "lz4: cannot create an LZ4 frame decompression context");
  } else {
    LZ4F_resetDecompressionContext(dctx_);
  }
  return dctx_;
}

uint64_t frame_bound(uint64_t n, const FrameOptions& options) {
  LZ4F_preferences_t p = preferences(options, n);
  return LZ4F_compressFrameBound(n, &p);
}

size_t frame_encode(const uint8_t* in, size_t n, uint8_t* out, size_t capacity,
                    const FrameOptions& options) {
  LZ4F_preferences_t p = preferences(options, n);
  size_t r = LZ4F_compressFrame(out, capacity, in, n, &p);
  if (LZ4F_isError(r))
    stowage::sdk::invalid(std::string("lz4: LZ4 frame compression failed: ") +
                          LZ4F_getErrorName(r) + " (output buffer " + std::to_string(capacity) +
                          " bytes)");
  return r;
}

bool is_frame(const uint8_t* in, size_t n) {
  return n >= sizeof kFrameMagic && std::memcmp(in, kFrameMagic, sizeof kFrameMagic) == 0;
}

size_t frame_decode(FrameDecoder& decoder, const uint8_t* in, size_t n, uint8_t* out,
                    size_t capacity) {
  if (!is_frame(in, n)) corrupt("lz4: not an LZ4 frame (no 04 22 4D 18 magic)");
  LZ4F_dctx* dctx = decoder.reset();
  LZ4F_decompressOptions_t options;
  std::memset(&options, 0, sizeof options);
  uint8_t no_output;  // a valid pointer when the caller expects 0 bytes
  size_t consumed = 0, written = 0;
  for (;;) {
    size_t src_size = n - consumed, dst_size = capacity - written;
    uint8_t* dst = out ? out + written : &no_output;
    size_t hint = LZ4F_decompress(dctx, dst, &dst_size, in + consumed, &src_size, &options);
    if (LZ4F_isError(hint))
      corrupt(std::string("lz4: corrupt LZ4 frame: ") + LZ4F_getErrorName(hint) + " (near byte " +
              std::to_string(consumed) + ")");
    consumed += src_size;
    written += dst_size;
    if (hint == 0) break;  // the frame is complete and its checksums verified
    if (consumed == n)
      corrupt("lz4: LZ4 frame truncated after " + std::to_string(n) + " bytes (at least " +
              std::to_string(hint) + " more expected)");
    if (src_size == 0 && dst_size == 0)
      corrupt("lz4: LZ4 frame decodes to more than the expected " + std::to_string(capacity) +
              " bytes");
  }
  if (consumed != n)
    corrupt("lz4: " + std::to_string(n - consumed) +
            " unexpected bytes after the LZ4 frame (which ends at byte " +
            std::to_string(consumed) + ")");
  return written;
}

}  // namespace stowage_lz4
