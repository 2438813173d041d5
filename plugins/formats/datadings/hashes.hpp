// The three hashes a datadings dataset uses, each from a Debian library:
//   KeyHasher   salted BLAKE2s (libb2) for .key_hashes: the first 8 bytes of
//               the default 32-byte digest, read big-endian;
//   BloomFilter simplebloom's filter (.filter), double hashing over the
//               first 16 bytes of the unsalted BLAKE2s digest;
//   Md5         MD5 (libmd: small, unlike libcrypto's ~6 ms load) for the .md5 lines.
#pragma once

#include <blake2.h>
#include <md5.h>

#include <cstdint>
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
  bool maybe_contains(std::string_view key) const;
  // The whole file: header and bits.
  std::string serialize() const;

  uint64_t num_bits() const { return num_bits_; }
  uint64_t num_hashes() const { return num_hashes_; }

 private:
  BloomFilter() = default;
  void set_wrap() { wrap_ = (UINT64_MAX % num_bits_ + 1) % num_bits_; }
  // The key's bit positions, in order (see hashes.cpp).
  class Bits;
  Bits bits_of(std::string_view key) const;

  uint64_t n_ = 0;
  double p_ = 0;
  uint64_t num_bits_ = 0, num_hashes_ = 0;
  uint64_t wrap_ = 0;  // 2^64 mod num_bits
  std::string bits_;
  Blake2s blake_;
};

// simplebloom's parameters, in the same double-precision steps.
uint64_t bloom_num_bits(uint64_t n, double p);
uint64_t bloom_num_hashes(uint64_t num_bits, uint64_t n);

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

// MD5 of a whole file, read in large blocks.
std::string md5_file(const std::string& path);

}  // namespace datadings
