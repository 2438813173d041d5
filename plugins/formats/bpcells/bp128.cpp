// BP-128 kernels: scalar, SSE2 and AVX2, all giving the same bytes.
//
// Vocabulary used below: a chunk is 128 values; "transformed" values t[] are
// what gets bit-packed (x, x-1, delta, or zigzag(delta)); "position" p is the
// index of a value inside its lane (k/4), so one 128-bit register holds the
// four values of one position, t[4p..4p+3].
#include "bp128.hpp"

#include <stowage/plugin.hpp>

#if (defined(__x86_64__) || defined(__i386__)) && !defined(BP128_SCALAR_ONLY)
#define BP128_X86 1  // SSE2/AVX2 kernels; other CPUs use the scalar path
#include <emmintrin.h>
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>

namespace stowage::bpcells::bp128 {

namespace {

constexpr unsigned kPositions = 32;  // values per lane in a chunk

// Width lists for building per-width dispatch tables (0..31; 32 is a memcpy).
// (clang-format lays this list out differently on each pass.)
// clang-format off
#define BP128_WIDTHS(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) \
  X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
// clang-format on

unsigned bit_width(uint32_t v) { return v == 0 ? 0 : 32 - unsigned(__builtin_clz(v)); }

uint32_t zigzag(uint32_t d) { return (d << 1) ^ uint32_t(int32_t(d) >> 31); }
uint32_t unzigzag(uint32_t t) { return (t >> 1) ^ (0u - (t & 1)); }

// ============================================================================
// Scalar reference path: plain loops that follow the spec's formulas.
// ============================================================================

// Writes the transformed chunk into t and returns the OR of its values.
uint32_t transform_scalar(Variant v, const uint32_t* in, uint32_t* t) {
  uint32_t any = 0;
  for (size_t k = 0; k < kChunkValues; ++k) {
    uint32_t prev = k == 0 ? in[0] : in[k - 1];
    switch (v) {
      case Variant::vanilla:
        t[k] = in[k];
        break;
      case Variant::m1:
        t[k] = in[k] - 1;
        break;
      case Variant::d1:
        t[k] = in[k] - prev;
        break;
      case Variant::d1z:
        t[k] = zigzag(in[k] - prev);
        break;
    }
    any |= t[k];
  }
  return any;
}

void untransform_scalar(Variant v, uint32_t start, uint32_t* t) {
  uint32_t sum = start;
  for (size_t k = 0; k < kChunkValues; ++k) {
    switch (v) {
      case Variant::vanilla:
        break;
      case Variant::m1:
        t[k] += 1;
        break;
      case Variant::d1:
        t[k] = sum += t[k];
        break;
      case Variant::d1z:
        t[k] = sum += unzigzag(t[k]);
        break;
    }
  }
}

// Packs 128 values of width bits (1..31) in the interleaved 4-lane layout.
void pack_scalar(const uint32_t* t, unsigned bits, uint32_t* out) {
  std::memset(out, 0, 4 * bits * sizeof(uint32_t));
  for (unsigned k = 0; k < kChunkValues; ++k) {
    unsigned lane = k % 4, s = (k / 4) * bits, w = s / 32, sh = s % 32;
    out[4 * w + lane] |= t[k] << sh;
    if (sh + bits > 32) out[4 * (w + 1) + lane] |= t[k] >> (32 - sh);
  }
}

void unpack_scalar(const uint32_t* in, unsigned bits, uint32_t* t) {
  if (bits == 0) {
    std::fill(t, t + kChunkValues, 0u);
    return;
  }
  uint32_t mask = (uint32_t(1) << bits) - 1;
  for (unsigned k = 0; k < kChunkValues; ++k) {
    unsigned lane = k % 4, s = (k / 4) * bits, w = s / 32, sh = s % 32;
    uint32_t v = in[4 * w + lane] >> sh;
    if (sh + bits > 32) v |= in[4 * (w + 1) + lane] << (32 - sh);
    t[k] = v & mask;
  }
}

unsigned encode_chunk_scalar(Variant v, const uint32_t* in, uint32_t* out) {
  uint32_t t[kChunkValues];
  unsigned bits = bit_width(transform_scalar(v, in, t));
  if (bits == 32)
    std::memcpy(out, in, sizeof t);  // BPCells stores 32-bit chunks untransformed
  else if (bits > 0)
    pack_scalar(t, bits, out);
  return bits;
}

void decode_chunk_scalar(Variant v, const uint32_t* in, unsigned bits, uint32_t start,
                         uint32_t* out) {
  if (bits == 32) {
    std::memcpy(out, in, kChunkValues * sizeof(uint32_t));
    return;
  }
  unpack_scalar(in, bits, out);
  untransform_scalar(v, start, out);
}

// A chunk of 32-bit values is stored untransformed (every variant).
void copy_chunk(const uint32_t* in, uint32_t, uint32_t* out) {
  std::memcpy(out, in, kChunkValues * sizeof(uint32_t));
}

// Scalar decoders with the width and variant fixed, for the ChunkDecoders table.
template <Variant V, unsigned B>
void decode_scalar_fixed(const uint32_t* in, uint32_t start, uint32_t* out) {
  unpack_scalar(in, B, out);
  untransform_scalar(V, start, out);
}

#define BP128_SCALAR_ENTRY_vanilla(B) &decode_scalar_fixed<Variant::vanilla, B>,
#define BP128_SCALAR_ENTRY_m1(B) &decode_scalar_fixed<Variant::m1, B>,
#define BP128_SCALAR_ENTRY_d1(B) &decode_scalar_fixed<Variant::d1, B>,
#define BP128_SCALAR_ENTRY_d1z(B) &decode_scalar_fixed<Variant::d1z, B>,
#define BP128_SCALAR_TABLE(V)                           \
  {                                                     \
    {                                                   \
      BP128_WIDTHS(BP128_SCALAR_ENTRY_##V) & copy_chunk \
    }                                                   \
  }
// Indexed by variant.
const ChunkDecoders kScalarDecoders[4] = {BP128_SCALAR_TABLE(vanilla), BP128_SCALAR_TABLE(m1),
                                          BP128_SCALAR_TABLE(d1), BP128_SCALAR_TABLE(d1z)};

#ifdef BP128_X86

// ============================================================================
// SSE2 (baseline on x86-64). Kernels are templates on the bit width so every
// shift and word index is a constant after the 32 positions are unrolled.
// ============================================================================

using PackFn = void (*)(const uint32_t* in, uint32_t* out);

namespace sse2 {

inline __m128i load(const uint32_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline void store(uint32_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }

// The encode-side transform of the 4 inputs at position p (in[4p..4p+3]):
// x, x - 1, the delta to the value before, or its zigzag. Applied while
// packing, so the transformed chunk is never stored: an AVX2 transform into
// memory read back by the 128-bit pack ran m1 at 1.8 G ints/s against 3.5
// for this path (256-bit stores do not forward to 128-bit loads). The value
// before each input is an unaligned load one element back (the first
// input's is itself: its delta is 0).
template <Variant V>
inline __m128i forward(const uint32_t* in, unsigned p) {
  __m128i x = load(in + 4 * p);
  if constexpr (V == Variant::vanilla) {
    return x;
  } else if constexpr (V == Variant::m1) {
    return _mm_sub_epi32(x, _mm_set1_epi32(1));
  } else {
    __m128i before = p == 0 ? _mm_or_si128(_mm_slli_si128(x, 4), _mm_cvtsi32_si128(int(in[0])))
                            : load(in + 4 * p - 1);
    __m128i y = _mm_sub_epi32(x, before);
    if constexpr (V == Variant::d1z) y = _mm_xor_si128(_mm_slli_epi32(y, 1), _mm_srai_epi32(y, 31));
    return y;
  }
}

// The OR of the transformed chunk, for its bit width.
template <Variant V>
uint32_t transformed_or(const uint32_t* in) {
  __m128i any = _mm_setzero_si128();
#pragma GCC unroll 32
  for (unsigned p = 0; p < kPositions; ++p) any = _mm_or_si128(any, forward<V>(in, p));
  any = _mm_or_si128(any, _mm_srli_si128(any, 8));
  any = _mm_or_si128(any, _mm_srli_si128(any, 4));
  return uint32_t(_mm_cvtsi128_si32(any));
}

// Transforms and packs 128 inputs at width B (1..31).
template <Variant V, unsigned B>
void pack(const uint32_t* in, uint32_t* out) {
  __m128i acc = _mm_setzero_si128();
#pragma GCC unroll 32
  for (unsigned p = 0; p < kPositions; ++p) {
    const unsigned s = p * B, sh = s % 32;
    __m128i v = forward<V>(in, p);
    acc = _mm_or_si128(acc, _mm_slli_epi32(v, sh));
    if (sh + B >= 32) {  // this lane word is full
      store(out + 4 * (s / 32), acc);
      acc = sh + B > 32 ? _mm_srli_epi32(v, 32 - sh) : _mm_setzero_si128();
    }
  }
}

#define BP128_PACK_ENTRY(B) &pack<V, B>,
template <Variant V>
const PackFn kPack[32] = {BP128_WIDTHS(BP128_PACK_ENTRY)};

// Packs a chunk whose transformed values OR to `any`; returns its width.
template <Variant V>
unsigned pack_chunk(uint32_t any, const uint32_t* in, uint32_t* out) {
  unsigned bits = bit_width(any);
  if (bits == 32)
    std::memcpy(out, in,
                kChunkValues * sizeof(uint32_t));  // BPCells stores 32-bit chunks untransformed
  else if (bits > 0)
    kPack<V>[bits](in, out);
  return bits;
}

// The decode-side transforms, applied to one register of 4 unpacked values.
struct Identity {
  explicit Identity(uint32_t) {}
  __m128i operator()(__m128i v) { return v; }
};
struct PlusOne {
  explicit PlusOne(uint32_t) {}
  __m128i operator()(__m128i v) { return _mm_add_epi32(v, _mm_set1_epi32(1)); }
};
struct PrefixSum {
  __m128i carry;  // the last decoded value, in every lane
  explicit PrefixSum(uint32_t start) : carry(_mm_set1_epi32(int(start))) {}
  __m128i operator()(__m128i v) {
    v = _mm_add_epi32(v, _mm_slli_si128(v, 4));
    v = _mm_add_epi32(v, _mm_slli_si128(v, 8));
    v = _mm_add_epi32(v, carry);
    carry = _mm_shuffle_epi32(v, 0xFF);
    return v;
  }
};
struct UnzigzagPrefixSum : PrefixSum {
  using PrefixSum::PrefixSum;
  __m128i operator()(__m128i v) {
    __m128i sign = _mm_sub_epi32(_mm_setzero_si128(), _mm_and_si128(v, _mm_set1_epi32(1)));
    return PrefixSum::operator()(_mm_xor_si128(_mm_srli_epi32(v, 1), sign));
  }
};

template <unsigned B, class Op>
void unpack(const uint32_t* in, uint32_t start, uint32_t* out) {
  Op op(start);
  const __m128i mask = _mm_set1_epi32(int((uint64_t(1) << B) - 1));
#pragma GCC unroll 32
  for (unsigned p = 0; p < kPositions; ++p) {
    const unsigned s = p * B, w = s / 32, sh = s % 32;
    __m128i v = _mm_setzero_si128();
    if constexpr (B > 0) {
      v = _mm_srli_epi32(load(in + 4 * w), sh);
      if (sh + B > 32) v = _mm_or_si128(v, _mm_slli_epi32(load(in + 4 * (w + 1)), 32 - sh));
      v = _mm_and_si128(v, mask);
    }
    store(out + 4 * p, op(v));
  }
}

#define BP128_DECODE_TABLE(OP)                           \
  {                                                      \
    {                                                    \
      BP128_WIDTHS(BP128_DECODE_ENTRY_##OP) & copy_chunk \
    }                                                    \
  }
#define BP128_DECODE_ENTRY_Identity(B) &unpack<B, Identity>,
#define BP128_DECODE_ENTRY_PlusOne(B) &unpack<B, PlusOne>,
#define BP128_DECODE_ENTRY_PrefixSum(B) &unpack<B, PrefixSum>,
#define BP128_DECODE_ENTRY_UnzigzagPrefixSum(B) &unpack<B, UnzigzagPrefixSum>,
// Indexed by variant, then bit width.
const ChunkDecoders kDecode[4] = {BP128_DECODE_TABLE(Identity), BP128_DECODE_TABLE(PlusOne),
                                  BP128_DECODE_TABLE(PrefixSum),
                                  BP128_DECODE_TABLE(UnzigzagPrefixSum)};

}  // namespace sse2

// ============================================================================
// AVX2: decode handles two positions (8 values) per 256-bit register with
// per-half variable shifts; an encode's width pass is 8-wide, its pack stays
// SSE2 (the 4-lane layout is 128 bits wide by design; see sse2::forward).
// Only intrinsics and code of this block are compiled for AVX2, so no inline
// function shared with the rest of the program can pick up AVX2 instructions.
// ============================================================================

#if defined(__clang__)  // clang ignores GCC's target pragma; this is its spelling
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

namespace avx2 {

inline __m128i load128(const uint32_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline __m256i load(const uint32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline void store(uint32_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
inline __m256i join(__m128i low, __m128i high) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
}

struct Identity {
  explicit Identity(uint32_t) {}
  __m256i operator()(__m256i v) { return v; }
};
struct PlusOne {
  explicit PlusOne(uint32_t) {}
  __m256i operator()(__m256i v) { return _mm256_add_epi32(v, _mm256_set1_epi32(1)); }
};
struct PrefixSum {
  __m256i carry;
  explicit PrefixSum(uint32_t start) : carry(_mm256_set1_epi32(int(start))) {}
  __m256i operator()(__m256i v) {
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));  // prefix sums within each half
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
    __m256i low_total = _mm256_shuffle_epi32(v, 0xFF);
    v = _mm256_add_epi32(v, _mm256_permute2x128_si256(low_total, low_total, 0x08));
    v = _mm256_add_epi32(v, carry);
    carry = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7));
    return v;
  }
};
struct UnzigzagPrefixSum : PrefixSum {
  using PrefixSum::PrefixSum;
  __m256i operator()(__m256i v) {
    __m256i sign =
        _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_and_si256(v, _mm256_set1_epi32(1)));
    return PrefixSum::operator()(_mm256_xor_si256(_mm256_srli_epi32(v, 1), sign));
  }
};

template <unsigned B, class Op>
void unpack(const uint32_t* in, uint32_t start, uint32_t* out) {
  Op op(start);
  const __m256i mask = _mm256_set1_epi32(int((uint64_t(1) << B) - 1));
#pragma GCC unroll 16
  for (unsigned q = 0; q < kPositions / 2; ++q) {
    const unsigned s0 = 2 * q * B, w0 = s0 / 32, sh0 = s0 % 32;
    const unsigned s1 = s0 + B, w1 = s1 / 32, sh1 = s1 % 32;
    __m256i v = _mm256_setzero_si256();
    if constexpr (B > 0) {
      __m256i words = join(load128(in + 4 * w0), load128(in + 4 * w1));
      v = _mm256_srlv_epi32(words, _mm256_setr_epi32(sh0, sh0, sh0, sh0, sh1, sh1, sh1, sh1));
      const bool spill0 = sh0 + B > 32, spill1 = sh1 + B > 32;
      if (spill0 || spill1) {
        __m128i next0 = spill0 ? load128(in + 4 * (w0 + 1)) : _mm_setzero_si128();
        __m128i next1 = spill1 ? load128(in + 4 * (w1 + 1)) : _mm_setzero_si128();
        const int l0 = int(32 - sh0), l1 = int(32 - sh1);  // a shift of 32 gives 0
        v = _mm256_or_si256(v,
                            _mm256_sllv_epi32(join(next0, next1),
                                              _mm256_setr_epi32(l0, l0, l0, l0, l1, l1, l1, l1)));
      }
      v = _mm256_and_si256(v, mask);
    }
    store(out + 8 * q, op(v));
  }
}

const ChunkDecoders kDecode[4] = {BP128_DECODE_TABLE(Identity), BP128_DECODE_TABLE(PlusOne),
                                  BP128_DECODE_TABLE(PrefixSum),
                                  BP128_DECODE_TABLE(UnzigzagPrefixSum)};

// sse2::transformed_or 8 values at a time (the width pass of an encode; the
// pack itself stays 128 bits wide).
template <Variant V>
uint32_t transformed_or(const uint32_t* in) {
  __m256i any = _mm256_setzero_si256();
#pragma GCC unroll 16
  for (unsigned i = 0; i < kChunkValues; i += 8) {
    __m256i x = load(in + i), y = x;
    if constexpr (V == Variant::m1) {
      y = _mm256_sub_epi32(x, _mm256_set1_epi32(1));
    } else if constexpr (V == Variant::d1 || V == Variant::d1z) {
      __m256i before =
          i == 0 ? _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6))
                 : load(in + i - 1);
      y = _mm256_sub_epi32(x, before);
      if constexpr (V == Variant::d1z)
        y = _mm256_xor_si256(_mm256_slli_epi32(y, 1), _mm256_srai_epi32(y, 31));
    }
    any = _mm256_or_si256(any, y);
  }
  __m128i a = _mm_or_si128(_mm256_castsi256_si128(any), _mm256_extracti128_si256(any, 1));
  a = _mm_or_si128(a, _mm_srli_si128(a, 8));
  a = _mm_or_si128(a, _mm_srli_si128(a, 4));
  return uint32_t(_mm_cvtsi128_si32(a));
}

}  // namespace avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// ---- dispatch ----------------------------------------------------------------

// The width pass runs 8 values at a time on AVX2; the pack is SSE2 on every
// CPU (the 4-lane layout is 128 bits wide).
template <Variant V>
unsigned encode_simd(const uint32_t* in, uint32_t* out, Isa isa) {
  uint32_t any = isa == Isa::avx2 ? avx2::transformed_or<V>(in) : sse2::transformed_or<V>(in);
  return sse2::pack_chunk<V>(any, in, out);
}

unsigned encode_chunk_simd(Variant v, const uint32_t* in, uint32_t* out, Isa isa) {
  switch (v) {
    case Variant::vanilla:
      return encode_simd<Variant::vanilla>(in, out, isa);
    case Variant::m1:
      return encode_simd<Variant::m1>(in, out, isa);
    case Variant::d1:
      return encode_simd<Variant::d1>(in, out, isa);
    case Variant::d1z:
      return encode_simd<Variant::d1z>(in, out, isa);
  }
  return 0;
}

#endif  // BP128_X86

}  // namespace

// ============================================================================
// Public API
// ============================================================================

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::vanilla:
      return "vanilla";
    case Variant::m1:
      return "m1";
    case Variant::d1:
      return "d1";
    case Variant::d1z:
      return "d1z";
  }
  return "?";
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return "scalar";
    case Isa::sse2:
      return "sse2";
    case Isa::avx2:
      return "avx2";
  }
  return "?";
}

bool isa_available(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return true;
#ifdef BP128_X86
    case Isa::sse2:
      return __builtin_cpu_supports("sse2");
    case Isa::avx2:
      return __builtin_cpu_supports("avx2");
#else
    case Isa::sse2:
    case Isa::avx2:
      return false;
#endif
  }
  return false;
}

Isa detected_isa() {
  static const Isa best = isa_available(Isa::avx2)   ? Isa::avx2
                          : isa_available(Isa::sse2) ? Isa::sse2
                                                     : Isa::scalar;
  return best;
}

namespace {
// A caller asking for more than the CPU has gets the best it does have, so a
// wrong request can never execute an illegal instruction.
Isa usable(Isa isa) {
  return static_cast<int>(isa) > static_cast<int>(detected_isa()) ? detected_isa() : isa;
}
}  // namespace

unsigned encode_chunk(Variant v, const uint32_t* in, uint32_t* out, Isa isa) {
  isa = usable(isa);
#ifdef BP128_X86
  if (isa != Isa::scalar) return encode_chunk_simd(v, in, out, isa);
#endif
  return encode_chunk_scalar(v, in, out);
}

const ChunkDecoders& chunk_decoders(Variant v, Isa isa) {
  isa = usable(isa);
  int variant = static_cast<int>(v);
#ifdef BP128_X86
  if (isa == Isa::avx2) return avx2::kDecode[variant];
  if (isa == Isa::sse2) return sse2::kDecode[variant];
#endif
  return kScalarDecoders[variant];
}

void decode_chunk(Variant v, const uint32_t* in, unsigned bits, uint32_t start, uint32_t* out,
                  Isa isa) {
  if (bits > 32) sdk::fail(STOWAGE_INTERNAL, "bp128: bit width " + std::to_string(bits) + " > 32");
  isa = usable(isa);
  if (isa == Isa::scalar) return decode_chunk_scalar(v, in, bits, start, out);
  chunk_decoders(v, isa).by_width[bits](in, start, out);
}

// ---- Encoder ------------------------------------------------------------------

namespace {
constexpr size_t kFlushWords = 1 << 16;  // hand packed words to the sink every 256 KiB
}

Encoder::Encoder(Variant v, WordSink sink, Isa isa, uint64_t offset_increment)
    : variant_(v),
      isa_(isa),
      increment_(offset_increment),
      sink_(std::move(sink)),
      out_(kFlushWords + kChunkValues) {
  if (increment_ == 0) sdk::invalid("bp128: the idx offset increment must be positive");
}

void Encoder::push(const uint32_t* values, size_t count) {
  if (finished_) sdk::fail(STOWAGE_INTERNAL, "bp128: push after finish");
  if (count == 0) return;  // values may then be null
  values_ += count;
  if (pending_count_ > 0) {  // complete the chunk started by an earlier push
    size_t take = std::min(count, kChunkValues - pending_count_);
    std::memcpy(pending_ + pending_count_, values, take * sizeof(uint32_t));
    pending_count_ += take;
    values += take;
    count -= take;
    if (pending_count_ < kChunkValues) return;
    encode_one(pending_);
    pending_count_ = 0;
  }
  for (; count >= kChunkValues; values += kChunkValues, count -= kChunkValues) encode_one(values);
  std::memcpy(pending_, values, count * sizeof(uint32_t));
  pending_count_ = count;
}

void Encoder::encode_one(const uint32_t* chunk) {
  if (has_starts(variant_)) starts_.push_back(chunk[0]);
  unsigned bits = encode_chunk(variant_, chunk, out_.data() + out_size_, isa_);
  out_size_ += 4 * bits;
  words_ += 4 * bits;
  record_chunk_end();
  if (out_size_ >= kFlushWords) flush();
}

// idx holds word offsets modulo the increment; idx_offsets marks the entry
// where each wrap happens (BPCells appends it as soon as the offset reaches it).
void Encoder::record_chunk_end() {
  while (words_ >= idx_offsets_.size() * increment_) idx_offsets_.push_back(idx_.size());
  idx_.push_back(uint32_t(words_ - (idx_offsets_.size() - 1) * increment_));
}

void Encoder::flush() {
  if (out_size_ > 0 && sink_) sink_(out_.data(), out_size_);
  out_size_ = 0;
}

void Encoder::finish() {
  if (finished_) return;
  if (pending_count_ > 0) {  // pad by repeating the last real value
    std::fill(pending_ + pending_count_, pending_ + kChunkValues, pending_[pending_count_ - 1]);
    encode_one(pending_);
    pending_count_ = 0;
  }
  flush();
  idx_offsets_.push_back(idx_.size());
  finished_ = true;
}

Encoded encode(Variant v, const uint32_t* values, size_t count, Isa isa,
               uint64_t offset_increment) {
  Encoded e;
  Encoder enc(
      v, [&](const uint32_t* w, size_t n) { e.data.insert(e.data.end(), w, w + n); }, isa,
      offset_increment);
  enc.push(values, count);
  enc.finish();
  e.idx = enc.idx();
  e.idx_offsets = enc.idx_offsets();
  e.starts = enc.starts();
  return e;
}

// ---- reading ------------------------------------------------------------------

std::vector<uint64_t> resolve_offsets(const std::vector<uint32_t>& idx,
                                      const std::vector<uint64_t>& idx_offsets, uint64_t data_words,
                                      const std::string& what, uint64_t offset_increment) {
  auto bad = [&](const std::string& why) { sdk::corrupt(what + ": " + why); };
  if (idx.empty()) bad("idx is empty (it always holds at least the leading 0)");
  // Segment boundaries: v1 files have none, which reads as one segment.
  std::vector<uint64_t> bounds = idx_offsets;
  if (bounds.empty()) bounds = {0, idx.size()};
  if (bounds.front() != 0) bad("idx_offsets does not start at 0");
  if (bounds.back() != idx.size())
    bad("idx_offsets ends at " + std::to_string(bounds.back()) + ", not at the idx length " +
        std::to_string(idx.size()));
  std::vector<uint64_t> offsets(idx.size());
  for (size_t seg = 0; seg + 1 < bounds.size(); ++seg) {
    if (bounds[seg + 1] < bounds[seg])
      bad("idx_offsets decreases at entry " + std::to_string(seg + 1));
    if (bounds[seg + 1] == bounds[seg]) continue;
    if (seg > data_words / offset_increment)
      bad("idx_offsets puts entries past the end of the data");
    for (uint64_t j = bounds[seg]; j < bounds[seg + 1]; ++j)
      offsets[j] = idx[j] + seg * offset_increment;
  }
  if (offsets[0] != 0) bad("the first chunk does not start at word 0");
  for (size_t c = 0; c + 1 < offsets.size(); ++c) {
    if (offsets[c + 1] < offsets[c] || offsets[c + 1] - offsets[c] > 4 * 32 ||
        (offsets[c + 1] - offsets[c]) % 4 != 0)
      bad("chunk " + std::to_string(c) + " spans " +
          std::to_string(int64_t(offsets[c + 1] - offsets[c])) +
          " words; a chunk is 4*B words with 0 <= B <= 32");
  }
  if (offsets.back() != data_words)
    bad("the chunks end at word " + std::to_string(offsets.back()) + " but the data holds " +
        std::to_string(data_words) + " words");
  return offsets;
}

void decode_range(Variant v, const uint64_t* offsets, const uint32_t* starts, const uint32_t* words,
                  uint64_t first, uint64_t count, uint32_t* out, Isa isa) {
  if (count == 0) return;
  uint64_t chunk = first / kChunkValues;
  const uint64_t base = offsets[chunk];
  uint64_t skip = first % kChunkValues;  // values to drop from the first chunk
  alignas(32) uint32_t partial[kChunkValues];
  while (count > 0) {
    unsigned bits = unsigned((offsets[chunk + 1] - offsets[chunk]) / 4);
    const uint32_t* in = words + (offsets[chunk] - base);
    uint32_t start = starts ? starts[chunk] : 0;
    uint64_t take = std::min<uint64_t>(count, kChunkValues - skip);
    if (take == kChunkValues) {
      decode_chunk(v, in, bits, start, out, isa);
    } else {
      decode_chunk(v, in, bits, start, partial, isa);
      std::memcpy(out, partial + skip, take * sizeof(uint32_t));
    }
    out += take;
    count -= take;
    skip = 0;
    ++chunk;
  }
}

std::vector<uint32_t> decode(Variant v, const Encoded& e, size_t count, Isa isa,
                             uint64_t offset_increment) {
  uint64_t chunks = (count + kChunkValues - 1) / kChunkValues;
  if (e.idx.size() != chunks + 1)
    sdk::corrupt("bp128: idx has " + std::to_string(e.idx.size()) + " entries, " +
                 std::to_string(count) + " values need " + std::to_string(chunks + 1));
  if (has_starts(v) && e.starts.size() != chunks)
    sdk::corrupt("bp128: starts has " + std::to_string(e.starts.size()) + " entries, expected " +
                 std::to_string(chunks));
  std::vector<uint64_t> offsets =
      resolve_offsets(e.idx, e.idx_offsets, e.data.size(), "bp128", offset_increment);
  std::vector<uint32_t> out(count);
  decode_range(v, offsets.data(), has_starts(v) ? e.starts.data() : nullptr, e.data.data(), 0,
               count, out.data(), isa);
  return out;
}

}  // namespace stowage::bpcells::bp128
