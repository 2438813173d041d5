// AWS Signature Version 4 for S3 requests, on OpenSSL's SHA-256 and HMAC.
//
// Hand-written rather than libcurl's CURLOPT_AWS_SIGV4: the libcurl of
// Debian 12 (7.88) neither sends nor signs x-amz-content-sha256 (which S3
// and radosgw require) and signs a query whose parameters are unsorted or
// bare (?uploads, ?delete) differently from the server, fixed only in curl
// 8.x. GDAL (port/cpl_aws.cpp) and tensorstore (kvstore/s3) sign their
// requests themselves for the same reasons.
//
// The rules (docs.aws.amazon.com, "Create a signed AWS API request"):
//   canonical request  METHOD \n path \n query \n headers \n\n signed-names \n payload-hash
//   string to sign     AWS4-HMAC-SHA256 \n date \n scope \n hex(sha256(canonical request))
//   signing key        HMAC chain "AWS4"+secret -> yyyymmdd -> region -> service -> aws4_request
// Checked against the AWS SigV4 test suite (tests/fixtures/sigv4/).
#ifndef STOWAGE_S3_SIGV4_HPP
#define STOWAGE_S3_SIGV4_HPP

#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stowage_s3 {

using Pairs = std::vector<std::pair<std::string, std::string>>;

// A key and its secret; empty access_key: anonymous (requests go unsigned).
struct Credentials {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // temporary credentials: sent as x-amz-security-token
  bool anonymous() const { return access_key.empty(); }
};

// What is signed of a request.
// The hash of no bytes (a GET's payload).
extern const char* const kEmptyPayload;

struct SignInput {
  std::string method;  // "GET"
  std::string path;    // decoded: "/bucket/a key", encoded here
  Pairs query;         // decoded names and values; a bare name has value ""
  Pairs headers;       // as sent (any case, untrimmed; a name may repeat); Host among them
  std::string payload = kEmptyPayload;  // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
  bool payload_header = true;  // sent as x-amz-content-sha256 (S3 needs it; other services not)
  std::string region;
  std::string service;  // "s3"
  std::time_t when = 0;
};

// A request's signature and how it went.
struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string authorization;  // the Authorization header's value
  Pairs headers;              // to send besides the input's: x-amz-date, x-amz-content-sha256,
                              // x-amz-security-token
};

Signature sign(const SignInput& in, const Credentials& c);

// Percent-encoding as SigV4 wants it: every byte but A-Z a-z 0-9 - _ . ~
// (and '/' when keep_slash) as %XX in upper-case hex.
std::string uri_encode(std::string_view s, bool keep_slash);
// %XX sequences decoded ('+' is left alone: S3 encodes a space as %20).
std::string uri_decode(std::string_view s);
// Hex SHA-256 of bytes.
std::string sha256_hex(const void* data, size_t size);
// 20150830T123600Z
std::string amz_date(std::time_t when);

}  // namespace stowage_s3

#endif  // STOWAGE_S3_SIGV4_HPP
