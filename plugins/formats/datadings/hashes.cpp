#include "hashes.hpp"

#include <stowage/plugin_util.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace datadings {

using stowage::sdk::corrupt;
using stowage::sdk::fail;
using stowage::sdk::load_be;
using stowage::sdk::store_be;

// ---- BLAKE2s ------------------------------------------------------------------

Blake2s::Blake2s(const uint8_t* salt) {
  blake2s_param param;
  std::memset(&param, 0, sizeof param);
  param.digest_length = BLAKE2S_OUTBYTES;  // the default 32 bytes, as hashlib
  param.fanout = 1;
  param.depth = 1;
  if (salt) std::memcpy(param.salt, salt, BLAKE2S_SALTBYTES);
  if (blake2s_init_param(&initial_, &param) != 0)
    fail(STOWAGE_INTERNAL, "blake2s_init_param failed");
}

void Blake2s::digest(std::string_view data, uint8_t out[32]) const {
  blake2s_state state = initial_;
  blake2s_update(&state, reinterpret_cast<const uint8_t*>(data.data()), data.size());
  blake2s_final(&state, out, BLAKE2S_OUTBYTES);
}

KeyHasher::KeyHasher(const uint8_t salt[8]) : blake_(salt) { std::memcpy(salt_, salt, 8); }

uint64_t KeyHasher::operator()(std::string_view key) const {
  uint8_t d[32];
  blake_.digest(key, d);
  return load_be<uint64_t>(d);
}

KeyDigest key_digest(std::string_view key) {
  static const Blake2s unsalted;
  KeyDigest d;
  unsalted.digest(key, d.bytes);
  return d;
}

uint64_t presence_fingerprint(const KeyDigest& d) { return load_be<uint64_t>(d.bytes + 16); }

void salt_for_attempt(unsigned attempt, uint8_t salt[8]) {
  uint8_t d[32];
  Blake2s().digest(std::to_string(attempt), d);
  std::memcpy(salt, d, 8);
}

// ---- Bloom filter ---------------------------------------------------------------

std::optional<uint64_t> bloom_num_bits(uint64_t n, double p) {
  // simplebloom: math.ceil(n * math.log(p) / -0.4804530139182015 / 8) * 8
  double bytes = std::ceil(static_cast<double>(n) * std::log(p) / -0.4804530139182015 / 8);
  // Converting a double beyond the integer's range is undefined (a fuzz
  // finding: n = 1.8e19 in a filter header gave 1e20 bytes).
  if (!(bytes >= 0 && bytes < 0x1p60)) return std::nullopt;
  return static_cast<uint64_t>(bytes) * 8;
}

uint64_t bloom_num_hashes(uint64_t num_bits, uint64_t n) {
  // Python's round() is half-to-even, which nearbyint does in the default mode.
  return static_cast<uint64_t>(
      std::nearbyint(static_cast<double>(num_bits) / static_cast<double>(n) * 0.6931471805599453));
}

BloomFilter::BloomFilter(uint64_t n, double p) : n_(n), p_(p) {
  if (n < 2) fail(STOWAGE_INVALID_ARGUMENT, "Bloom filter: at least 2 elements required");
  if (!(p > 0 && p < 1)) fail(STOWAGE_INVALID_ARGUMENT, "Bloom filter: p must be in (0, 1)");
  std::optional<uint64_t> bits = bloom_num_bits(n, p);
  if (!bits)
    fail(STOWAGE_INVALID_ARGUMENT, "Bloom filter: n and p give more bits than 64 bits can count");
  num_bits_ = *bits;
  num_hashes_ = bloom_num_hashes(num_bits_, n);
  set_wrap();
  bits_.assign(num_bits_ / 8, '\0');
}

BloomFilter BloomFilter::parse(std::string bytes, const std::string& path) {
  if (bytes.size() < header_size)
    corrupt(path + ": Bloom filter file is " + std::to_string(bytes.size()) +
            " bytes, shorter than its 32-byte header");
  if (std::memcmp(bytes.data(), "SIMPBLOO", 8) != 0)
    corrupt(path + ": Bloom filter header does not start with the magic 'SIMPBLOO'");
  BloomFilter f;
  uint64_t size_field = load_be<uint64_t>(bytes.data() + 8);
  f.n_ = load_be<uint64_t>(bytes.data() + 16);
  uint64_t p_bits = load_be<uint64_t>(bytes.data() + 24);
  std::memcpy(&f.p_, &p_bits, 8);
  if (size_field != bytes.size())
    corrupt(path + ": Bloom filter header says the file is " + std::to_string(size_field) +
            " bytes, but it is " + std::to_string(bytes.size()));
  if (f.n_ < 1 || !(f.p_ > 0 && f.p_ < 1))
    corrupt(path + ": Bloom filter header has invalid parameters (n=" + std::to_string(f.n_) +
            ", p=" + std::to_string(f.p_) + ")");
  std::optional<uint64_t> bits = bloom_num_bits(f.n_, f.p_);
  if (!bits)
    corrupt(path + ": Bloom filter header (n=" + std::to_string(f.n_) +
            ", p=" + std::to_string(f.p_) + ") asks for more bits than 64 bits can count");
  f.num_bits_ = *bits;
  if (f.num_bits_ != 8 * (bytes.size() - header_size))
    corrupt(path + ": Bloom filter for n=" + std::to_string(f.n_) + ", p=" + std::to_string(f.p_) +
            " needs " + std::to_string(f.num_bits_) + " bits, but the file holds " +
            std::to_string(8 * (bytes.size() - header_size)));
  f.num_hashes_ = bloom_num_hashes(f.num_bits_, f.n_);
  if (f.num_bits_ == 0 || f.num_hashes_ == 0)
    corrupt(path + ": Bloom filter header gives an empty filter (no bits or no hashes)");
  f.set_wrap();
  bytes.erase(0, header_size);
  f.bits_ = std::move(bytes);
  return f;
}

// Bit k is ((h1 + k*h2) mod 2^64) mod num_bits (simplebloom). Rather than
// one 64-bit division per bit, the remainder is advanced by h2 mod num_bits,
// minus 2^64 mod num_bits whenever the 64-bit sum wraps around. Whether it
// wraps is a coin toss per bit, so the step is chosen by a mask, not a
// branch the processor would mispredict half the time.
class BloomFilter::Bits {
 public:
  Bits(uint64_t h1, uint64_t h2, const BloomFilter& f)
      : x_(h1),
        h2_(h2),
        m_(f.num_bits_),
        bit_(f.mod(h1)),
        step_(f.mod(h2)),
        wrapped_step_(add(step_, m_ - f.wrap_)) {}
  uint64_t next() {
    uint64_t bit = bit_;
    uint64_t x = x_ + h2_;
    uint64_t wrapped = -static_cast<uint64_t>(x < x_);  // all ones or zero
    x_ = x;
    bit_ = add(bit_, step_ ^ ((step_ ^ wrapped_step_) & wrapped));
    return bit;
  }

 private:
  // (a + b) mod m for a, b < m (m is far below 2^63).
  uint64_t add(uint64_t a, uint64_t b) const { return a + b >= m_ ? a + b - m_ : a + b; }
  uint64_t x_, h2_, m_, bit_, step_, wrapped_step_;
};

BloomFilter::Bits BloomFilter::bits_of(const KeyDigest& d) const {
  return Bits(load_be<uint64_t>(d.bytes), load_be<uint64_t>(d.bytes + 8), *this);
}

void BloomFilter::add(std::string_view key) {
  Bits bits = bits_of(key_digest(key));
  for (uint64_t k = 0; k < num_hashes_; ++k) {
    uint64_t bit = bits.next();
    bits_[bit >> 3] = static_cast<char>(bits_[bit >> 3] | (1u << (bit & 7)));
  }
}

void BloomFilter::probe(const KeyDigest& digest, Probe& p) const {
  // The bits are scattered over the array: ask for a group of them from
  // memory at once rather than one cache miss after the other.
  const char* bytes = bits_.data();
  Bits bits = bits_of(digest);
  for (uint64_t k = 0; k < std::min(Probe::group, num_hashes_); ++k) {
    p.positions[k] = bits.next();
    __builtin_prefetch(bytes + (p.positions[k] >> 3));
  }
  p.digest = digest;
}

bool BloomFilter::test(const Probe& p) const {
  const auto* bytes = reinterpret_cast<const unsigned char*>(bits_.data());
  auto is_set = [&](uint64_t bit) { return (bytes[bit >> 3] >> (bit & 7)) & 1; };
  for (uint64_t k = 0; k < std::min(Probe::group, num_hashes_); ++k)
    if (!is_set(p.positions[k])) return false;
  if (num_hashes_ <= Probe::group) return true;
  // Filters with a tiny p: the rest of the bits, one after the other.
  Bits bits = bits_of(p.digest);
  for (uint64_t k = 0; k < num_hashes_; ++k) {
    uint64_t bit = bits.next();
    if (k >= Probe::group && !is_set(bit)) return false;
  }
  return true;
}

std::string BloomFilter::serialize() const {
  std::string out(header_size, '\0');
  std::memcpy(out.data(), "SIMPBLOO", 8);
  store_be<uint64_t>(out.data() + 8, header_size + bits_.size());
  store_be<uint64_t>(out.data() + 16, n_);
  uint64_t p_bits;
  std::memcpy(&p_bits, &p_, 8);
  store_be<uint64_t>(out.data() + 24, p_bits);
  return out + bits_;
}

// ---- FingerprintTable ------------------------------------------------------------

FingerprintTable::FingerprintTable(const std::vector<uint64_t>& fingerprints) {
  if (fingerprints.size() >= UINT32_MAX) fail(STOWAGE_UNSUPPORTED, "more than 2^32-2 keys");
  // At most 80% full: with 8-byte slots, probes rarely leave a cache line,
  // and the table stays at 10 to 20 bytes a key.
  uint64_t capacity = 16;
  shift_ = 60;
  while (capacity * 4 < fingerprints.size() * 5) capacity *= 2, --shift_;
  multiplier_ = (std::uint64_t{std::random_device{}()} << 32 | std::random_device{}()) | 1;
  slot_fingerprint_.assign(capacity, 0);
  slot_index_.assign(capacity, 0);
  mask_ = capacity - 1;
  for (uint64_t i = 0; i < fingerprints.size(); ++i) {
    uint64_t f = fingerprints[i];
    if (slot_of(f) != no_slot) {
      if (!duplicate_) duplicate_ = i;
      continue;
    }
    if (f == 0) {
      zero_index_ = static_cast<uint32_t>(i);
      continue;
    }
    uint64_t slot = home(f);
    while (slot_fingerprint_[slot] != 0) slot = (slot + 1) & mask_;
    slot_fingerprint_[slot] = f;
    slot_index_[slot] = static_cast<uint32_t>(i);
  }
}

uint64_t FingerprintTable::slot_of(uint64_t f) const {
  if (f == 0) return zero_index_ ? zero_slot : no_slot;
  for (uint64_t slot = home(f); slot_fingerprint_[slot] != 0; slot = (slot + 1) & mask_)
    if (slot_fingerprint_[slot] == f) return slot;
  return no_slot;
}

std::optional<uint64_t> FingerprintTable::find(uint64_t f) const {
  uint64_t slot = slot_of(f);
  if (slot == no_slot) return std::nullopt;
  if (slot == zero_slot) return *zero_index_;
  return slot_index_[slot];
}

// ---- MD5 ----------------------------------------------------------------------------

Md5::Md5() { MD5Init(&ctx_); }
Md5::~Md5() = default;

void Md5::update(const void* data, size_t size) {
  if (size) MD5Update(&ctx_, static_cast<const uint8_t*>(data), size);
}

std::string Md5::hex() {
  uint8_t d[MD5_DIGEST_LENGTH];
  MD5Final(d, &ctx_);
  return to_hex(d, sizeof d);
}

std::string to_hex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

}  // namespace datadings
