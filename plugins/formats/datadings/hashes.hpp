// The three hashes a datadings dataset uses, each from a Debian library:
//   KeyHasher   salted BLAKE2s (libb2) for .key_hashes: the first 8 bytes of
//               the default 32-byte digest, read big-endian;
//   BloomFilter simplebloom's filter (.filter), double hashing over the
//               first 16 bytes of the unsalted BLAKE2s digest;
//   Md5         MD5 (libmd: small and quick to load, unlike libcrypto) for the .md5 lines.
// and FingerprintTable, the in-memory table both lookups go through.
#pragma once

#include <blake2.h>
#include <md5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace datadings {

// BLAKE2s-256 with an optional 8-byte salt. The parameter block is set up
// once; each hash copies the prepared state, so hashing a short key costs
// one compression.
class Blake2s {
 public:
  explicit Blake2s(const uint8_t* salt = nullptr);
  // The 32-byte digest of data.
  void digest(std::string_view data, uint8_t out[32]) const;

 private:
  blake2s_state initial_;
};

// hash(key) = big-endian u64 of the first 8 digest bytes, salted.
class KeyHasher {
 public:
  explicit KeyHasher(const uint8_t salt[8]);
  uint64_t operator()(std::string_view key) const;
  const uint8_t* salt() const { return salt_; }

 private:
  uint8_t salt_[8];
  Blake2s blake_;
};

// The unsalted BLAKE2s-256 digest of a key: simplebloom's hash. The filter
// uses bytes 0..15; the reader's presence table uses bytes 16..23, so that
// a `contains` check hashes its key once.
struct KeyDigest {
  uint8_t bytes[32];
};
KeyDigest key_digest(std::string_view key);
// Bytes 16..23 of the digest, the key's fingerprint in the presence table.
uint64_t presence_fingerprint(const KeyDigest& d);

// datadings' salt number i: blake2s(str(i).encode()).digest()[:8].
void salt_for_attempt(unsigned attempt, uint8_t salt[8]);

// simplebloom 1.0.5: header ">8sQQd" (magic, total size, n, p), then the
// bit array, LSB-first within each byte.
class BloomFilter {
 public:
  static constexpr size_t header_size = 32;

  // An empty filter sized for n elements with false-positive rate p.
  BloomFilter(uint64_t n, double p);
  // Parses a .filter file; a bad header is CORRUPT naming `path`.
  static BloomFilter parse(std::string bytes, const std::string& path);

  void add(std::string_view key);
  bool maybe_contains(std::string_view key) const { return maybe_contains(key_digest(key)); }
  bool maybe_contains(const KeyDigest& digest) const {
    Probe p;
    probe(digest, p);
    return test(p);
  }

  // A key's first bit positions, computed and asked for from memory by
  // probe(), read by test(). A batch probes the next key before it tests
  // this one, so one key's cache misses overlap the next key's hashing.
  struct Probe {
    static constexpr uint64_t group = 32;
    uint64_t positions[group];
    KeyDigest digest;  // for the positions past the first group
  };
  void probe(const KeyDigest& digest, Probe& p) const;
  bool test(const Probe& p) const;
  // The whole file: header and bits.
  std::string serialize() const;

  uint64_t num_bits() const { return num_bits_; }
  uint64_t num_hashes() const { return num_hashes_; }

 private:
  BloomFilter() = default;
  void set_wrap() {
    wrap_ = (UINT64_MAX % num_bits_ + 1) % num_bits_;
    inverse_ = ~static_cast<unsigned __int128>(0) / num_bits_ + 1;
  }
  // a mod num_bits without a division (Lemire, Kaser and Kurz, "Faster
  // remainder by direct computation", 2019: exact for every 64-bit a).
  uint64_t mod(uint64_t a) const {
    unsigned __int128 low = inverse_ * a;
    unsigned __int128 high =
        (static_cast<unsigned __int128>(static_cast<uint64_t>(low)) * num_bits_) >> 64;
    return static_cast<uint64_t>((high + (low >> 64) * num_bits_) >> 64);
  }
  // The key's bit positions, in order (see hashes.cpp).
  class Bits;
  Bits bits_of(const KeyDigest& digest) const;

  uint64_t n_ = 0;
  double p_ = 0;
  uint64_t num_bits_ = 0, num_hashes_ = 0;
  uint64_t wrap_ = 0;              // 2^64 mod num_bits
  unsigned __int128 inverse_ = 0;  // ceil(2^128 / num_bits), for mod()
  std::string bits_;
};

// simplebloom's parameters, in the same double-precision steps. The bit
// count is nullopt when it would not fit 64 bits (a huge n or a tiny p).
std::optional<uint64_t> bloom_num_bits(uint64_t n, double p);
uint64_t bloom_num_hashes(uint64_t num_bits, uint64_t n);

// 64-bit fingerprints (hashes of keys) -> their position in a list, an
// open-addressing table probed through the fingerprints alone (8 bytes a
// slot: a lookup is usually one cache miss). Slots are chosen by
// multiplying by a random odd number, so fingerprints crafted into a file
// to crowd one slot cannot make building the table quadratic.
class FingerprintTable {
 public:
  explicit FingerprintTable(const std::vector<uint64_t>& fingerprints);
  std::optional<uint64_t> find(uint64_t fingerprint) const;
  bool contains(uint64_t fingerprint) const { return slot_of(fingerprint) != no_slot; }
  // Starts loading the fingerprint's first slot into the cache.
  void prefetch(uint64_t fingerprint) const {
    __builtin_prefetch(&slot_fingerprint_[home(fingerprint)]);
  }
  // Position of the first fingerprint equal to an earlier one, if any.
  std::optional<uint64_t> first_duplicate() const { return duplicate_; }

 private:
  static constexpr uint64_t no_slot = UINT64_MAX;
  static constexpr uint64_t zero_slot = UINT64_MAX - 1;  // the fingerprint 0
  uint64_t home(uint64_t fingerprint) const { return (fingerprint * multiplier_) >> shift_; }
  // The slot holding `fingerprint`, no_slot if absent.
  uint64_t slot_of(uint64_t fingerprint) const;
  // Linear probing; a slot holding 0 is empty (a real 0 is kept aside).
  std::vector<uint64_t> slot_fingerprint_;
  std::vector<uint32_t> slot_index_;
  std::optional<uint32_t> zero_index_;
  uint64_t mask_ = 0, multiplier_ = 1;
  unsigned shift_ = 0;
  std::optional<uint64_t> duplicate_;
};

// Incremental MD5 (libmd).
class Md5 {
 public:
  Md5();
  ~Md5();
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;
  void update(const void* data, size_t size);
  // 32 lowercase hex digits; the object is spent afterwards.
  std::string hex();

 private:
  MD5_CTX ctx_;
};

// Lowercase hex of n bytes.
std::string to_hex(const uint8_t* p, size_t n);

}  // namespace datadings
