// BP-128 bit packing as BPCells stores it (vanilla, m1, d1, d1z).
//
// An integer array is cut into chunks of 128 values. Each chunk is transformed
// (per variant), then bit-packed at the width B of its largest transformed
// value into 4*B 32-bit words, using Lemire & Boytsov's interleaved layout
// with 4 lanes: value k goes to lane k%4, and word w of lane L is output word
// 4*w+L. That layout is exactly "one SSE register per lane position", which is
// why the SIMD kernels are simple. Two BPCells details matter for exact bytes:
//   * a chunk needing B = 32 stores the *untransformed* input verbatim;
//   * the last partial chunk is padded by repeating its last real value.
// The container around the chunks is: data (the words), idx (word offset of
// each chunk, modulo 2^32), idx_offsets (where idx wrapped) and, for d1/d1z,
// starts (the first value of each chunk). See docs/formats/bpcells.md.
//
// Decoding has a scalar, an SSE2 and an AVX2 implementation, encoding a scalar
// and an SSE2 one (its width pass also AVX2), all producing the same bytes;
// detected_isa() picks the best one the CPU has at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stowage::bpcells::bp128 {

constexpr size_t kChunkValues = 128;
// idx entries wrap at 2^32 words in real files; tests can use a smaller step.
constexpr uint64_t kOffsetIncrement = uint64_t(1) << 32;

enum class Variant : uint8_t { vanilla, m1, d1, d1z };
enum class Isa : uint8_t { scalar, sse2, avx2 };

const char* variant_name(Variant v);
const char* isa_name(Isa isa);
// The fastest instruction set this CPU supports.
Isa detected_isa();
// Whether the CPU can run `isa`.
bool isa_available(Isa isa);

inline bool has_starts(Variant v) { return v == Variant::d1 || v == Variant::d1z; }

// ---- one chunk ----------------------------------------------------------------

// Encodes 128 values into out (room for 128 words); returns the bit width B
// (4*B words written). For d1/d1z the chunk's start is in[0].
unsigned encode_chunk(Variant v, const uint32_t* in, uint32_t* out, Isa isa);

// Decodes one chunk of width `bits` (0..32) from 4*bits words into out[128].
// `start` is starts[i] for d1/d1z and ignored otherwise.
void decode_chunk(Variant v, const uint32_t* in, unsigned bits, uint32_t start, uint32_t* out,
                  Isa isa);

// The decoders of one variant for one instruction set, indexed by bit width
// 0..32 (32: the stored words verbatim), chosen once: a reader decoding chunk
// after chunk calls by_width[bits] instead of dispatching on every chunk.
using ChunkDecodeFn = void (*)(const uint32_t* in, uint32_t start, uint32_t* out);
struct ChunkDecoders {
  ChunkDecodeFn by_width[33];
};
const ChunkDecoders& chunk_decoders(Variant v, Isa isa = detected_isa());

// ---- whole arrays -------------------------------------------------------------

// The arrays BPCells stores for one encoded integer array (count not included).
struct Encoded {
  std::vector<uint32_t> data;
  std::vector<uint32_t> idx;
  std::vector<uint64_t> idx_offsets;
  std::vector<uint32_t> starts;  // d1/d1z only
};

// Streams values in, encodes each full chunk at once and hands the packed
// words to `sink` in batches, so the data never has to sit in memory. idx,
// idx_offsets and starts (4 bytes per 128 values) are kept and read at the end.
class Encoder {
 public:
  using WordSink = std::function<void(const uint32_t* words, size_t count)>;

  Encoder(Variant v, WordSink sink, Isa isa = detected_isa(),
          uint64_t offset_increment = kOffsetIncrement);

  void push(const uint32_t* values, size_t count);
  // Pads and encodes the last partial chunk, flushes, and closes idx_offsets.
  void finish();

  uint64_t value_count() const { return values_; }
  uint64_t word_count() const { return words_; }
  const std::vector<uint32_t>& idx() const { return idx_; }
  const std::vector<uint64_t>& idx_offsets() const { return idx_offsets_; }
  const std::vector<uint32_t>& starts() const { return starts_; }

 private:
  void encode_one(const uint32_t* chunk);
  void flush();
  void record_chunk_end();

  Variant variant_;
  Isa isa_;
  uint64_t increment_;
  WordSink sink_;
  uint32_t pending_[kChunkValues];
  size_t pending_count_ = 0;
  std::vector<uint32_t> out_;  // packed words not yet given to the sink (out_size_ of them)
  size_t out_size_ = 0;
  uint64_t values_ = 0, words_ = 0;
  std::vector<uint32_t> idx_{0};
  std::vector<uint64_t> idx_offsets_{0};
  std::vector<uint32_t> starts_;
  bool finished_ = false;
};

// Encodes a whole array in memory.
Encoded encode(Variant v, const uint32_t* values, size_t count, Isa isa = detected_isa(),
               uint64_t offset_increment = kOffsetIncrement);

// Turns idx + idx_offsets into absolute word offsets (nchunks+1 entries) and
// checks them: idx_offsets runs from 0 to idx.size() without decreasing, every
// chunk is 0..128 words in steps of 4, and the last offset is data_words.
// `idx_offsets` may be empty (format v1: no wrap). Errors are CORRUPT and start
// with `what` (the file names).
std::vector<uint64_t> resolve_offsets(const std::vector<uint32_t>& idx,
                                      const std::vector<uint64_t>& idx_offsets, uint64_t data_words,
                                      const std::string& what,
                                      uint64_t offset_increment = kOffsetIncrement);

// Decodes values [first, first+count) of an encoded array. `offsets` are the
// resolved chunk offsets; `words` holds data words starting at word
// offsets[first/128] (only the chunks touched are needed); `starts` is the full
// starts array (d1/d1z) or null.
void decode_range(Variant v, const uint64_t* offsets, const uint32_t* starts, const uint32_t* words,
                  uint64_t first, uint64_t count, uint32_t* out, Isa isa = detected_isa());

// Decodes a whole in-memory array of `count` values.
std::vector<uint32_t> decode(Variant v, const Encoded& e, size_t count, Isa isa = detected_isa(),
                             uint64_t offset_increment = kOffsetIncrement);

}  // namespace stowage::bpcells::bp128
