// sha256.hpp -- incremental SHA-256 (libmd, a small well-kept library: OpenSSL's
// libcrypto would slow the start of every process that loads this plugin), for the
// <base>.sha256 file the reference writer puts beside a dataset.
#pragma once

#include <stowage/plugin.hpp>

#include <sha2.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace datg {

class Sha256 {
 public:
  Sha256() { SHA256Init(&ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size) {
    if (size) SHA256Update(&ctx_, static_cast<const uint8_t*>(data), size);
  }
  // The digest as 64 lowercase hex digits (ends the computation).
  std::string hex() {
    uint8_t digest[SHA256_DIGEST_LENGTH];
    SHA256Final(digest, &ctx_);
    std::string out;
    char buf[3];
    for (uint8_t b : digest) {
      std::snprintf(buf, sizeof buf, "%02x", b);
      out += buf;
    }
    return out;
  }

 private:
  SHA2_CTX ctx_;
};

inline std::string sha256_hex(const std::string& data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex();
}

}  // namespace datg
