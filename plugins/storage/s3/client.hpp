// One S3 request, signed and sent: addressing (path-style or
// virtual-hosted), SigV4 (sigv4.hpp), libcurl's transfer or, for a GET over
// plain http, DirectGet's (../common/direct_get.hpp: the body received in
// place), and retries with backoff on what is worth another attempt, as the
// http backend decides it (../common/transfer.hpp) plus S3's own SlowDown,
// RequestTimeout and InternalError. The caller judges the last answer.
//
// With no region set anywhere (environment, profile, option) each bucket's
// is asked of it once, a HEAD of the bucket whose x-amz-bucket-region (AWS
// sends it whatever the status) is kept for the bucket's requests; a
// server that sends none (radosgw) is signed for us-east-1, as before.
#ifndef STOWAGE_S3_CLIENT_HPP
#define STOWAGE_S3_CLIENT_HPP

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "../common/answer.hpp"
#include "../common/curl_pool.hpp"
#include "../common/direct_get.hpp"
#include "credentials.hpp"
#include "sigv4.hpp"

namespace stowage_s3 {

struct ClientOptions {
  int64_t retries = 4;
  int64_t retry_delay_ms = 50;
  int64_t timeout_ms = 60000;  // a whole request; 0: none
  int64_t connect_timeout_ms = 10000;
  bool direct = true;  // plain-http GETs through DirectGet
};

struct Request {
  const char* method = "GET";
  std::string bucket;
  std::string key;                  // the object's key, decoded; "" for the bucket itself
  Pairs query;                      // decoded; a bare sub-resource has value ""
  Pairs headers;                    // sent and signed besides Host (If-Match, Content-MD5)
  const uint8_t* upload = nullptr;  // PUT and POST bodies
  uint64_t upload_size = 0;
  stowage_curl::Body* body = nullptr;  // where the answer's body goes; null: kept in error_page
  std::string shown;                   // the URL as the user gave it, for messages
};

// The last attempt's answer.
struct Answer {
  stowage_curl::Reply reply;
  std::string error_page;  // the body of an answer that was not 2xx
  std::string code;        // S3's <Code> in it ("NoSuchKey"), or ""
  std::string message;     // S3's <Message>
  int64_t attempts = 0;
};

class Client {
 public:
  Client(Config config, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends r, again after transient failures. A transport failure, a body
  // cut short or a transient status left after the last attempt is thrown
  // (sdk::Error, STOWAGE_IO or STOWAGE_CORRUPT, naming r.shown); any other
  // answer is returned.
  Answer send(const Request& r);

  const Config& config() const { return config_; }

 private:
  struct Target;
  Target target_of(const Request& r, const std::string& region) const;
  Answer exchange(const Request& r, const std::string& region);
  std::string region_of(const Request& r);
  void attempt(const Request& r, const Target& t, const std::string& payload,
               const std::string& region, Answer& a);
  CURLcode perform(CURL* h, const Request& r, const Target& t, const Pairs& headers,
                   stowage_curl::Body& b, stowage_curl::Reply& reply);
  void finish(const Request& r, Answer& a) const;
  std::string shown_endpoint() const;

  Config config_;
  ClientOptions options_;
  bool https_ = false;
  std::string endpoint_host_;  // host[:port] as the endpoint names it
  bool regional_aws_ = false;  // the endpoint is AWS's for config_.region: another's for another
  std::mutex regions_mutex_;
  std::map<std::string, std::string> regions_;  // bucket -> its region, when none is given
  std::unique_ptr<stowage_curl::CurlPool> pool_;
  std::unique_ptr<stowage_curl::DirectGet> direct_;  // null: https, or off
};

}  // namespace stowage_s3

#endif  // STOWAGE_S3_CLIENT_HPP
