// ListObjectsV2: the keys and "directories" (common prefixes) under a
// prefix, every page followed by its continuation token. Keys are asked for
// with encoding-type=url and decoded here (S3's url encoding writes a space
// as '+'), so a key with bytes XML cannot carry comes back whole.
#ifndef STOWAGE_S3_LISTING_HPP
#define STOWAGE_S3_LISTING_HPP

#include <string>
#include <vector>

#include "client.hpp"

namespace stowage_s3 {

struct Listing {
  std::vector<std::string> keys;      // whole keys
  std::vector<std::string> prefixes;  // whole prefixes, ending in '/' (delimited lists only)
};

// What is under `prefix` in `bucket`: one level (delimiter '/') or all
// below (delimited false). Stops after `at_most` entries when it is not 0.
// A missing bucket is STOWAGE_NOT_FOUND naming `shown`.
Listing list_objects(Client& client, const std::string& shown, const std::string& bucket,
                     const std::string& prefix, bool delimited, uint64_t at_most = 0);

}  // namespace stowage_s3

#endif  // STOWAGE_S3_LISTING_HPP
