#include "client.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>  // redact_userinfo

#include <cstring>
#include <ctime>

#include "../common/transfer.hpp"
#include "xml.hpp"

namespace stowage_s3 {

using namespace stowage_curl;
using stowage::sdk::fail;

namespace {

constexpr long kReceiveBuffer = 512L * 1024;  // as the http backend: a 64^3 uint16 chunk

// The body of a PUT or POST, handed to libcurl as it asks.
struct Upload {
  const uint8_t* data;
  uint64_t size;
  uint64_t at = 0;
};
size_t read_upload(char* out, size_t one, size_t n, void* ctx) {
  Upload& u = *static_cast<Upload*>(ctx);
  const size_t count = static_cast<size_t>(std::min<uint64_t>(one * n, u.size - u.at));
  std::memcpy(out, u.data + u.at, count);
  u.at += count;
  return count;
}
int seek_upload(void* ctx, curl_off_t offset, int origin) {
  Upload& u = *static_cast<Upload*>(ctx);
  if (origin != SEEK_SET || offset < 0 || static_cast<uint64_t>(offset) > u.size)
    return CURL_SEEKFUNC_FAIL;
  u.at = static_cast<uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
}

// S3's codes that say "try again" whatever the status.
bool transient_code(const std::string& code) {
  return code == "SlowDown" || code == "RequestTimeout" || code == "InternalError" ||
         code == "ServiceUnavailable" || code == "RequestTimeTooSkewed";
}

std::string encoded_query(const Pairs& query) {
  std::string q;
  for (const auto& [k, v] : query) {
    q += q.empty() ? "" : "&";
    q += uri_encode(k, false);
    if (!v.empty()) q += "=" + uri_encode(v, false);  // ?uploads, ?delete go bare
  }
  return q;
}

std::string url_part(CURLU* u, CURLUPart what) {
  char* text = nullptr;
  if (curl_url_get(u, what, &text, 0) != CURLUE_OK) return "";
  std::string s = text;
  curl_free(text);
  return s;
}

}  // namespace

// Where a request goes: the URL libcurl is given, the Host header and the
// path that is signed (decoded).
struct Client::Target {
  std::string url;
  std::string host;
  std::string path;
  std::string query;  // encoded
};

Client::Client(Config config, ClientOptions options)
    : config_(std::move(config)), options_(options) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, config_.endpoint.c_str(), 0) != CURLUE_OK)
    stowage::sdk::invalid("s3 storage: the endpoint \"" + shown_endpoint() +
                          "\" is not a URL (scheme://host[:port])");
  const std::string scheme = url_part(u.get(), CURLUPART_SCHEME);
  if (scheme != "http" && scheme != "https")
    stowage::sdk::invalid("s3 storage: the endpoint \"" + shown_endpoint() +
                          "\" is neither http:// nor https://");
  https_ = scheme == "https";
  endpoint_host_ = url_part(u.get(), CURLUPART_HOST);
  const std::string port = url_part(u.get(), CURLUPART_PORT);
  if (!port.empty()) endpoint_host_ += ":" + port;
  regional_aws_ = !config_.path_style && config_.endpoint == aws_endpoint(config_.region);
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    fail(STOWAGE_INTERNAL, "s3 storage: curl_global_init failed");
  pool_ = std::make_unique<CurlPool>();
  if (options_.direct && !https_)
    direct_ = std::make_unique<DirectGet>(
        DirectGet::Timeouts{options_.timeout_ms, options_.connect_timeout_ms});
}

// The endpoint as messages show it: a password in it as "***".
std::string Client::shown_endpoint() const {
  return stowage::sdk::redact_userinfo(config_.endpoint);
}

Client::~Client() {
  direct_.reset();
  pool_.reset();
  curl_global_cleanup();
}

// Path-style (endpoint/bucket/key) for a custom endpoint and for bucket
// names with dots (which break TLS to *.s3.amazonaws.com); AWS's
// virtual-hosted style (bucket.s3.region.amazonaws.com/key) otherwise, or
// wherever the option addressing_style says "virtual".
Client::Target Client::target_of(const Request& r, const std::string& region) const {
  Target t;
  const bool path_style =
      !config_.virtual_style && (config_.path_style || r.bucket.find('.') != std::string::npos);
  const std::string endpoint_host = regional_aws_ && region != config_.region
                                        ? "s3." + region + ".amazonaws.com"
                                        : endpoint_host_;
  t.host = path_style ? endpoint_host : r.bucket + "." + endpoint_host;
  t.path = path_style ? "/" + r.bucket + (r.key.empty() ? "" : "/" + r.key) : "/" + r.key;
  t.query = encoded_query(r.query);
  t.url = (https_ ? "https://" : "http://") + t.host + uri_encode(t.path, true) +
          (t.query.empty() ? "" : "?" + t.query);
  return t;
}

Answer Client::send(const Request& r) { return exchange(r, region_of(r)); }

// The region given, else the bucket's as its HEAD tells (once: kept).
std::string Client::region_of(const Request& r) {
  const std::string& bucket = r.bucket;
  if (config_.region_given || bucket.empty()) return config_.region;
  std::lock_guard<std::mutex> lock(regions_mutex_);  // held: one HEAD per bucket
  if (auto it = regions_.find(bucket); it != regions_.end()) return it->second;
  Request head;
  head.method = "HEAD";
  head.bucket = bucket;
  head.shown = r.shown;  // its errors are the request's
  const Answer a = exchange(head, config_.region);
  const std::string region = a.reply.bucket_region.empty() ? config_.region : a.reply.bucket_region;
  regions_[bucket] = region;
  return region;
}

Answer Client::exchange(const Request& r, const std::string& region) {
  const Target t = target_of(r, region);
  // Over https TLS guards the body and S3 takes UNSIGNED-PAYLOAD, as boto3
  // does; over plain http the body's hash is signed.
  std::string payload = kEmptyPayload;
  if (r.upload_size) payload = https_ ? "UNSIGNED-PAYLOAD" : sha256_hex(r.upload, r.upload_size);
  Answer a;
  for (int64_t n = 0;; ++n) {
    a = Answer{};
    a.attempts = n + 1;
    attempt(r, t, payload, region, a);
    bool again = transient_curl_error(a.reply.code) || transient_status(a.reply.status) ||
                 transient_code(a.code) || (r.body && is_truncated(*r.body, a.reply, nullptr));
    if (!again || n >= options_.retries) break;
    back_off(options_.retry_delay_ms, n);
  }
  finish(r, a);
  return a;
}

void Client::attempt(const Request& r, const Target& t, const std::string& payload,
                     const std::string& region, Answer& a) {
  std::vector<uint8_t> unwanted;
  Body local;
  local.limit = UINT64_MAX;
  local.grow = &unwanted;
  Body& b = r.body ? *r.body : local;
  b.error_page = &a.error_page;
  b.restart();

  Pairs headers = r.headers;
  if (!config_.credentials.anonymous()) {
    SignInput in;
    in.method = r.method;
    in.path = t.path;
    in.query = r.query;
    in.headers = r.headers;
    in.headers.emplace_back("host", t.host);
    in.payload = payload;
    in.region = region;
    in.service = "s3";
    in.when = std::time(nullptr);
    Signature s = sign(in, config_.credentials);
    headers.insert(headers.end(), s.headers.begin(), s.headers.end());
    headers.emplace_back("Authorization", s.authorization);
  }

  bool sent = false;
  // Only an object's bytes: a listing comes chunked from radosgw and AWS, which
  // DirectGet declines, and sending it there first sent every listing twice.
  if (direct_ && !r.upload && std::strcmp(r.method, "GET") == 0 && !r.key.empty() &&
      r.query.empty()) {
    Origin o{"http://" + endpoint_host_ + "/", t.host, t.url.substr(t.url.find('/', 7))};
    if (t.host != endpoint_host_) o.connect_url = "http://" + t.host + "/";
    sent = direct_->get(o, range_header(b), b, a.reply, headers) == DirectGet::Outcome::answered;
    if (!sent) {
      a.reply = Reply{};
      b.restart();
    }
  }
  if (!sent) {
    CurlPool::Lease lease(*pool_);
    a.reply.code = perform(lease.get(), r, t, headers, b, a.reply);
  }
  b.error_page = nullptr;
  if (b.no_memory) throw std::bad_alloc();
  if (b.full) a.reply.code = CURLE_OK;  // stopped on purpose
  if (a.reply.status >= 300 || (a.reply.status == 200 && !a.error_page.empty())) {
    a.code = xml_text(a.error_page, "Code");
    a.message = xml_text(a.error_page, "Message");
  }
  // CompleteMultipartUpload may answer 200 and an <Error> body.
  if (a.reply.status == 200 && r.body && r.body->grow &&
      std::string_view(reinterpret_cast<const char*>(r.body->grow->data()), r.body->grow->size())
              .find("<Error>") != std::string_view::npos) {
    std::string_view text(reinterpret_cast<const char*>(r.body->grow->data()),
                          r.body->grow->size());
    a.code = xml_text(text, "Code");
    a.message = xml_text(text, "Message");
  }
}

CURLcode Client::perform(CURL* h, const Request& r, const Target& t, const Pairs& headers, Body& b,
                         Reply& reply) {
  curl_easy_reset(h);  // keeps the handle's connections
  curl_easy_setopt(h, CURLOPT_URL, t.url.c_str());
  curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);  // "/./" and ".." are key names, signed as such
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, kReceiveBuffer);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_ms));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, reply.curl_error);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, read_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &reply);
  CurlSink sink{h, &b};
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);

  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> list(nullptr, curl_slist_free_all);
  auto add = [&](const std::string& line) {
    curl_slist* l = curl_slist_append(list.get(), line.c_str());
    if (!l) throw std::bad_alloc();
    list.release();
    list.reset(l);
  };
  add("Host: " + t.host);
  for (const auto& [name, value] : headers) add(name + ": " + value);
  Upload up{r.upload, r.upload_size};
  const std::string method = r.method;
  if (method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT" || method == "POST") {
    add("Expect:");  // no 100-continue round trip
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, read_upload);
    curl_easy_setopt(h, CURLOPT_READDATA, &up);
    curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, seek_upload);
    curl_easy_setopt(h, CURLOPT_SEEKDATA, &up);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.upload_size));
    if (method == "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "POST");
  } else if (method != "GET") {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method);
  }
  const std::string range = range_header(b);
  if (method == "GET" && !range.empty()) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list.get());

  CURLcode code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
  if (code != CURLE_OK) curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &reply.os_errno);
  curl_off_t cl = -1;
  if (curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK)
    reply.content_length = cl;
  reply.effective_url = r.shown;  // never the signed URL
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  return code;
}

// The failures left after the last attempt that no caller can judge
// otherwise: the connection's, a body cut short, a transient status.
void Client::finish(const Request& r, Answer& a) const {
  const std::string after =
      a.attempts > 1 ? " (after " + std::to_string(a.attempts) + " attempts)" : "";
  std::string why;
  if (r.body && is_truncated(*r.body, a.reply, &why))
    fail(STOWAGE_CORRUPT, r.shown + ": truncated body: " + why + after);
  if (a.reply.code != CURLE_OK) {
    std::string text =
        a.reply.curl_error[0] ? a.reply.curl_error : curl_easy_strerror(a.reply.code);
    if (a.reply.code == CURLE_COULDNT_CONNECT && a.reply.os_errno &&
        text.find(std::strerror(static_cast<int>(a.reply.os_errno))) == std::string::npos)
      text += " (" + std::string(std::strerror(static_cast<int>(a.reply.os_errno))) + ")";
    // libcurl's texts name the host, never the signed headers
    fail(STOWAGE_IO, r.shown + ": " + text + " (endpoint " + shown_endpoint() + ")" + after);
  }
  if (transient_status(a.reply.status) || transient_code(a.code))
    fail(STOWAGE_IO, r.shown + ": HTTP " + std::to_string(a.reply.status) +
                         (a.code.empty() ? "" : " " + a.code) +
                         (a.message.empty() ? "" : ": " + a.message) + after);
}

}  // namespace stowage_s3
