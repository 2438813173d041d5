// Where the s3 backend finds its credentials, region and endpoint: where the
// AWS CLI finds them, so a machine set up for `aws s3` works unchanged.
//
//   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
//                else the profile's aws_access_key_id, ... in the shared
//                credentials file, then in the config file; none at all, or
//                AWS_NO_SIGN_REQUEST=YES: anonymous (public buckets)
//   profile      AWS_PROFILE, else "default"; the files are
//                AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials, sections
//                [NAME]) and AWS_CONFIG_FILE (~/.aws/config, sections
//                [profile NAME] and [default])
//   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's region; else
//                each bucket's, asked of it (client.hpp), or us-east-1
//   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
//                endpoint_url, else https://s3.<region>.amazonaws.com; a
//                custom endpoint is addressed path-style (endpoint/bucket/key),
//                as radosgw, MinIO and most S3-compatible servers want
#ifndef STOWAGE_S3_CREDENTIALS_HPP
#define STOWAGE_S3_CREDENTIALS_HPP

#include <string>

#include "sigv4.hpp"

namespace stowage_s3 {

struct Config {
  Credentials credentials;  // anonymous() when none
  std::string profile;
  std::string region;
  bool region_given = false;  // false: us-east-1 by default, each bucket's found (client.hpp)
  std::string endpoint;       // scheme://host[:port], no trailing '/'
  bool path_style = false;
  bool virtual_style = false;    // bucket.host always (the option addressing_style "virtual")
  std::string credentials_from;  // where the key came from, for messages ("AWS_ACCESS_KEY_ID")
};

// From the environment and the files it names. Throws (std::runtime_error)
// for a profile named by AWS_PROFILE that neither file has, and for a key
// without its secret; messages never hold a secret. A `profile` given (the
// option) is used in AWS_PROFILE's place, and its key over the
// environment's, as boto3's Session(profile_name=...) does.
Config find_config(const std::string& profile = "");

// A key given whole (the options' access_key_id, secret_access_key,
// session_token) in place of the one found; `where` names it in messages.
void use_key(const std::string& id, const std::string& secret, const std::string& token,
             const std::string& where, Config* c);

// The endpoint for a region on AWS itself.
std::string aws_endpoint(const std::string& region);

}  // namespace stowage_s3

#endif  // STOWAGE_S3_CREDENTIALS_HPP
