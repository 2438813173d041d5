// A large object put as an S3 multipart upload: parts of part_size bytes
// (S3's least is 5 MiB, but for the last) sent by a few threads at once,
// then completed; on any failure the upload is aborted, so no invisible
// parts are left to be billed. (A writer killed in between leaves an
// uncommitted upload: README.md says how to list and abort those.)
#ifndef STOWAGE_S3_MULTIPART_HPP
#define STOWAGE_S3_MULTIPART_HPP

#include <cstdint>
#include <string>

#include "client.hpp"

namespace stowage_s3 {

constexpr uint64_t kMinPartSize = 5ull << 20;

void put_multipart(Client& client, const std::string& shown, const std::string& bucket,
                   const std::string& key, const uint8_t* data, uint64_t size, uint64_t part_size,
                   unsigned threads);

}  // namespace stowage_s3

#endif  // STOWAGE_S3_MULTIPART_HPP
