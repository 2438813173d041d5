// sha256.hpp -- incremental SHA-256 (OpenSSL's EVP API), for the
// <base>.sha256 file the reference writer puts beside a dataset.
#pragma once

#include <stowage/plugin.hpp>

#include <openssl/evp.h>

#include <cstdio>
#include <string>

namespace datg {

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1)
      stowage::sdk::fail(STOWAGE_INTERNAL, "datg: cannot initialise SHA-256");
  }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  ~Sha256() { EVP_MD_CTX_free(ctx_); }

  void update(const void* data, size_t size) {
    if (size && EVP_DigestUpdate(ctx_, data, size) != 1)
      stowage::sdk::fail(STOWAGE_INTERNAL, "datg: SHA-256 update failed");
  }
  // The digest as 64 lowercase hex digits (ends the computation).
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx_, digest, &length) != 1)
      stowage::sdk::fail(STOWAGE_INTERNAL, "datg: SHA-256 final failed");
    std::string out;
    char buf[3];
    for (unsigned int i = 0; i < length; ++i) {
      std::snprintf(buf, sizeof buf, "%02x", digest[i]);
      out += buf;
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

inline std::string sha256_hex(const std::string& data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex();
}

}  // namespace datg
