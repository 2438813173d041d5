// Storage backend "http" (alias "https"): read-only access to files a web
// server serves, over libcurl.
//
//   stat       HEAD (Content-Length, and the ETag as the key's version); 404
//              is absent; a URL that ends in '/' or that the server
//              redirects to one ending in '/' (what nginx, Apache and
//              python's http.server do for a directory) is a directory
//   read       ranged GET (Range: bytes=a-b); a server that ignores Range and
//              answers 200 with the whole body still gives the right bytes
//   read_into  the same GET, its body received straight into the caller's
//              buffers one after the other (an N5 chunk's header and
//              payload), the file's size from Content-Range: one request,
//              no copy in this process
//   list       nginx's `autoindex on; autoindex_format json;` listing
// and no other part: no write, rename, lock or conditional table, so the
// host answers a write with "read only".
//
// A GET goes one of two ways, each filling the same Reply and Body
// (answer.hpp), so retries and errors below are the same for both:
//   direct     plain http: DirectGet (direct_get.hpp), on connections of its
//              own, receives the body where it goes; libcurl opens them
//   libcurl    its transfer: https, a proxy named in the environment, the
//              option "direct": false, and whatever DirectGet declines (a
//              redirect, a body of unknown length). libcurl copies a body
//              out of its own receive buffer, DirectGet does not (figures:
//              bench/http/README.md).
//
// Keys are URLs as the user gave them ("http://host:8080/x.n5/0/0"). A
// server without directories (an object store) answers 404 for a prefix:
// stat then says absent, as it cannot tell a prefix from nothing without a
// listing.
//
// Errors are retried with exponential backoff (5xx, 408, 429, refused or
// reset connections, timeouts, bodies cut short): `retries` more attempts,
// waiting retry_delay_ms, then twice that, and so on. Options:
//   {"retries": 4, "retry_delay_ms": 50, "timeout_ms": 60000, "connect_timeout_ms": 10000,
//    "direct": true, "headers": {}, "bearer_token": "", "netrc": true, "username": "",
//    "password": ""}
// Credentials: `headers` and `bearer_token` go with every request, both
// ways; a login (the URL's user:password@, `username`/`password`, or the
// host's entry in ~/.netrc or $NETRC) is libcurl's to send, so once a
// server answers DirectGet 401, GETs go through libcurl.
#include <curl/curl.h>

#define STOWAGE_PLUGIN_BUILD_EXTRA ", libcurl " LIBCURL_VERSION
#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>  // redact_userinfo
#include <stowage/storage.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../common/answer.hpp"
#include "../common/curl_pool.hpp"
#include "../common/direct_get.hpp"
#include "../common/options_json.hpp"
#include "../common/transfer.hpp"

namespace stowage_http {
namespace {

using namespace stowage_curl;

using stowage::sdk::fail;
using stowage::sdk::invalid;
using stowage::sdk::unsupported;

struct Options {
  int64_t retries = 4;
  int64_t retry_delay_ms = 50;
  int64_t timeout_ms = 60000;  // a whole request; 0: none
  int64_t connect_timeout_ms = 10000;
  bool direct = true;  // plain-http GETs through DirectGet (direct_get.hpp)
  std::vector<std::pair<std::string, std::string>> headers;  // bearer_token's among them
  bool netrc = true;                                         // ~/.netrc, or $NETRC, as curl
  std::string username, password;
};

constexpr const char* kOptionNames =
    "retries, retry_delay_ms, timeout_ms, connect_timeout_ms, direct, headers, bearer_token, "
    "netrc, username, password";

int64_t option(const nlohmann::json& j, const char* key, int64_t def, int64_t min, int64_t max) {
  if (!j.contains(key)) return def;
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer())
    invalid(std::string("http storage: \"") + key + "\" must be an integer, got " + v.dump());
  int64_t n = v.get<int64_t>();
  if (n < min || n > max)
    invalid(std::string("http storage: \"") + key + "\" is " + std::to_string(n) +
            ", allowed range " + std::to_string(min) + ".." + std::to_string(max));
  return n;
}

bool flag(const nlohmann::json& j, const char* key, bool def) {
  if (!j.contains(key)) return def;
  if (!j[key].is_boolean())
    invalid(std::string("http storage: \"") + key + "\" must be true or false, got " +
            j[key].dump());
  return j[key].get<bool>();
}

// A string option; its value is never shown (the ones here are secrets).
std::string string_option(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "";
  if (!j[key].is_string()) invalid(std::string("http storage: \"") + key + "\" must be a string");
  return j[key].get<std::string>();
}

// {"Name": "value", ...}: the values are not shown, an Authorization among them.
std::vector<std::pair<std::string, std::string>> headers(const nlohmann::json& j) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!j.contains("headers")) return out;
  if (!j["headers"].is_object())
    invalid("http storage: \"headers\" must be an object of names and values");
  for (const auto& item : j["headers"].items()) {
    if (!item.value().is_string() || item.key().empty() ||
        item.key().find_first_of(":\r\n") != std::string::npos ||
        item.value().get<std::string>().find_first_of("\r\n") != std::string::npos)
      invalid("http storage: the header \"" + item.key() +
              "\" must be a name without ':' and a string value on one line");
    out.emplace_back(item.key(), item.value().get<std::string>());
  }
  return out;
}

Options parse_options(std::string_view text, const std::string& what) {
  Options o;
  const nlohmann::json j = stowage_curl::options_json(text, what);
  const std::string known = std::string(", ") + kOptionNames + ",";
  for (const auto& item : j.items())
    if (known.find(", " + item.key() + ",") == std::string::npos)
      invalid("http storage: unknown option \"" + item.key() + "\" (known: " + kOptionNames + ")");
  o.direct = flag(j, "direct", o.direct);
  o.netrc = flag(j, "netrc", o.netrc);
  o.headers = headers(j);
  const std::string token = string_option(j, "bearer_token");
  if (!token.empty()) o.headers.emplace_back("Authorization", "Bearer " + token);
  o.username = string_option(j, "username");
  o.password = string_option(j, "password");
  o.retries = option(j, "retries", o.retries, 0, 100);
  o.retry_delay_ms = option(j, "retry_delay_ms", o.retry_delay_ms, 0, 60000);
  o.timeout_ms = option(j, "timeout_ms", o.timeout_ms, 0, 24 * 3600 * 1000);
  o.connect_timeout_ms = option(j, "connect_timeout_ms", o.connect_timeout_ms, 0, 3600 * 1000);
  return o;
}

// A key as curl wants it: spaces, control and non-ASCII bytes and the few
// characters a URL may not hold are percent-encoded ('%', '?' and '#' are
// left alone: the user may have encoded the URL already).
std::string to_url(std::string_view key) {
  static const char hex[] = "0123456789ABCDEF";
  std::string url;
  url.reserve(key.size());
  for (char ch : key) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || std::strchr("\"<>\\^`{|}", c)) {
      url += '%';
      url += hex[c >> 4];
      url += hex[c & 15];
    } else {
      url += ch;
    }
  }
  return url;
}

// Text as messages show it: a URL's password as "***".
std::string shown(std::string text) { return stowage::sdk::redact_userinfo(std::move(text)); }

// The registry opens its backend without options: STOWAGE_HTTP_OPTIONS
// ('{"timeout_ms": 5000, "retries": 1}') sets them for the tools and
// Store::open, where a stalled server would otherwise cost 5 x 60 s.
std::string_view environment_options() {
  const char* text = std::getenv("STOWAGE_HTTP_OPTIONS");
  return text && *text ? std::string_view(text) : std::string_view("{}");
}

// The variables libcurl takes a proxy for plain http from.
bool proxy_in_environment() {
  for (const char* name : {"http_proxy", "all_proxy", "ALL_PROXY"}) {
    const char* value = std::getenv(name);
    if (value && *value) return true;
  }
  return false;
}

bool ends_with_slash(std::string_view s) { return !s.empty() && s.back() == '/'; }

class HttpStorage : public stowage::sdk::ReadableStorage {
 public:
  HttpStorage(const stowage_host*, std::string_view options_json)
      : options_(options_json.empty()
                     ? parse_options(environment_options(), "http storage: STOWAGE_HTTP_OPTIONS")
                     : parse_options(options_json, "http storage: the options")) {
    // Thread-safe and reference-counted in the libcurl of Debian 12 (7.88).
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      fail(STOWAGE_INTERNAL, "http storage: curl_global_init failed");
    if (options_.direct && !proxy_in_environment())
      direct_ = std::make_unique<DirectGet>(
          DirectGet::Timeouts{options_.timeout_ms, options_.connect_timeout_ms});
    for (const auto& [name, value] : options_.headers) {
      curl_slist* l = curl_slist_append(header_list_.get(), (name + ": " + value).c_str());
      if (!l) throw std::bad_alloc();
      header_list_.release();
      header_list_.reset(l);
    }
  }
  ~HttpStorage() override {
    direct_.reset();
    pool_.reset();
    curl_global_cleanup();
  }

  stowage::sdk::KeyStat stat(std::string_view key) override {
    std::string url = to_url(key);
    Reply r = request(url, "HEAD", nullptr);
    bool directory = ends_with_slash(r.effective_url) || ends_with_slash(url);
    if (r.status == 404 || r.status == 410) return {STOWAGE_ENTRY_ABSENT, 0, ""};
    if (r.status == 405 || r.status == 501)
      return {STOWAGE_ENTRY_FILE, size_by_range(key, url), ""};  // no HEAD
    // nginx answers 403 for a directory it does not list: still a directory.
    if (directory && (r.status == 200 || r.status == 403)) return {STOWAGE_ENTRY_DIRECTORY, 0, ""};
    check_status(key, r);
    if (r.content_length >= 0)
      return {STOWAGE_ENTRY_FILE, static_cast<uint64_t>(r.content_length), r.etag};
    return {STOWAGE_ENTRY_FILE, size_by_range(key, url), r.etag};
  }

  stowage_view read(std::string_view key, uint64_t offset, uint64_t length, uint32_t) override {
    auto bytes = std::make_unique<std::vector<uint8_t>>();
    Body b;
    b.offset = offset;
    b.limit = length;
    b.grow = bytes.get();
    get(key, b);
    return stowage_curl::owned_view(std::move(bytes));
  }

  uint64_t read_into(std::string_view key, uint64_t offset, void* buf, uint64_t capacity) override {
    stowage_buffer part{buf, capacity};
    return read_parts(key, offset, &part, 1, nullptr);
  }

  // One ranged GET whose body is copied straight into the parts, the file's
  // size from its Content-Range. (ReadableStorage's default sends a GET per
  // part and a HEAD for the size: three requests per N5 chunk.)
  uint64_t read_parts(std::string_view key, uint64_t offset, const stowage_buffer* parts,
                      size_t count, uint64_t* file_size) override {
    Body b;
    b.offset = offset;
    b.parts = parts;
    b.count = count;
    for (size_t i = 0; i < count; ++i) b.limit += std::min(parts[i].size, UINT64_MAX - b.limit);
    get(key, b, file_size);
    return b.kept;
  }

  std::vector<std::string> list(std::string_view key) override {
    std::string url = to_url(key);
    if (!ends_with_slash(url)) url += '/';
    std::vector<uint8_t> text;
    Body b;
    b.limit = kMaxListing;
    b.grow = &text;
    Reply r = request(url, "GET", &b);
    if (r.status == 404)
      fail(STOWAGE_NOT_FOUND, shown(std::string(key)) + ": no such directory (HTTP 404)");
    check_status(key, r);
    return parse_listing(key,
                         std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
  }

 private:
  static constexpr uint64_t kMaxListing = 256ull << 20;
  static constexpr long kReceiveBuffer = 512L * 1024;

  // A GET of bytes [b.offset, b.offset + b.limit) into b; a file that ends
  // earlier gives fewer bytes. *file_size (when not null) receives the
  // whole file's size, from the answer's headers where they tell it.
  void get(std::string_view key, Body& b, uint64_t* file_size = nullptr) {
    std::string url = to_url(key);
    if (b.limit == 0) {  // nothing to read, but the file must exist
      const stowage::sdk::KeyStat st = stat(key);
      if (st.kind == STOWAGE_ENTRY_ABSENT)
        fail(STOWAGE_NOT_FOUND, shown(std::string(key)) + ": no such file (HTTP 404)");
      if (file_size) *file_size = st.size;
      return;
    }
    Origin origin;
    bool direct = direct_ && !login_by_libcurl_ && origin_of(url, &origin);
    Reply r = request(url, "GET", &b, direct ? &origin : nullptr);
    if (r.status == 404)
      fail(STOWAGE_NOT_FOUND, shown(std::string(key)) + ": no such file (HTTP 404)");
    if (r.status == 416) b.restart();  // the range starts at or after the end
    if (r.status != 416) check_status(key, r);
    // nginx redirects "dir" to "dir/" and answers with the listing
    if (ends_with_slash(r.effective_url) && !ends_with_slash(url))
      fail(STOWAGE_IO, shown(std::string(key)) + ": is a directory, not a file");
    if (file_size && !total_size(r, file_size)) *file_size = stat(key).size;
  }

  // Sends one request, again after transient failures; the reply of the
  // last attempt. Bodies cut short are caught here (and retried) too. A GET
  // of a plain-http file goes through DirectGet when `direct` is given,
  // through libcurl's transfer from the first attempt DirectGet declines.
  Reply request(const std::string& url, const char* method, Body* body,
                const Origin* direct = nullptr) {
    std::optional<CurlPool::Lease> lease;
    Reply r;
    for (int64_t attempt = 0;; ++attempt) {
      r = Reply{};
      if (body) body->restart();
      if (direct &&
          direct_->get(*direct, range_header(*body), *body, r, options_.headers) ==
              DirectGet::Outcome::answered &&
          !wants_login(r)) {
        r.effective_url = url;
        if (body->no_memory) throw std::bad_alloc();
      } else {
        if (direct) {
          direct = nullptr;
          r = Reply{};
          body->restart();
        }
        if (!lease) lease.emplace(*pool_);
        r.code = perform(lease->get(), url, method, body, r);
      }
      if (body && body->full) r.code = CURLE_OK;  // we stopped it
      bool retry = transient_curl_error(r.code) || transient_status(r.status) ||
                   (body && is_truncated(*body, r, nullptr));
      if (!retry || attempt >= options_.retries) {
        return finish(url, body, r, attempt + 1);
      }
      back_off(options_.retry_delay_ms, attempt);
    }
  }

  // A 401 to DirectGet, which sends no login, where libcurl may have one
  // (.netrc, username): from now on GETs go through libcurl.
  bool wants_login(const Reply& r) {
    if (r.status != 401 || (!options_.netrc && options_.username.empty())) return false;
    login_by_libcurl_ = true;
    return true;
  }

  // The headers and the login of the options on a request of libcurl's.
  void credentials(CURL* h) const {
    if (header_list_) curl_easy_setopt(h, CURLOPT_HTTPHEADER, header_list_.get());
    curl_easy_setopt(h, CURLOPT_NETRC,
                     static_cast<long>(options_.netrc ? CURL_NETRC_OPTIONAL : CURL_NETRC_IGNORED));
    // $NETRC as curl reads it, at each request as libcurl reads ~/.netrc
    const char* netrc_file = std::getenv("NETRC");
    if (options_.netrc && netrc_file && *netrc_file)
      curl_easy_setopt(h, CURLOPT_NETRC_FILE, netrc_file);
    if (!options_.username.empty())
      curl_easy_setopt(h, CURLOPT_USERNAME, options_.username.c_str());
    if (!options_.password.empty())
      curl_easy_setopt(h, CURLOPT_PASSWORD, options_.password.c_str());
  }

  CURLcode perform(CURL* h, const std::string& url, const char* method, Body* body, Reply& r) {
    curl_easy_reset(h);  // keeps the handle's connections and DNS cache
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    // A receive buffer of a whole 64^3 uint16 chunk: fewer recv calls (bench/http/README.md).
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE, kReceiveBuffer);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 8L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_ms));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r.curl_error);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, read_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
    credentials(h);
    std::string range;
    CurlSink sink{h, body};
    if (std::strcmp(method, "HEAD") == 0) {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_body);
      curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
      range = range_header(*body);
      if (!range.empty()) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
    }
    CURLcode code = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    if (code != CURLE_OK) curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &r.os_errno);
    curl_off_t cl = -1;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK)
      r.content_length = cl;
    char* eff = nullptr;
    if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff)
      r.effective_url = eff;
    if (body && body->no_memory) throw std::bad_alloc();
    return code;
  }

  // Turns the last attempt's failure into an error naming the URL.
  Reply finish(const std::string& url, Body* body, Reply& r, int64_t attempts) {
    std::string after = attempts > 1 ? " (after " + std::to_string(attempts) + " attempts)" : "";
    std::string why;
    if (body && is_truncated(*body, r, &why))
      fail(STOWAGE_CORRUPT, shown(url) + ": truncated body: " + why + after);
    if (r.code != CURLE_OK) {
      std::string text = r.curl_error[0] ? r.curl_error : curl_easy_strerror(r.code);
      // libcurl 7.88 says "Couldn't connect to server": the system says why
      if (r.code == CURLE_COULDNT_CONNECT && r.os_errno &&
          text.find(std::strerror(static_cast<int>(r.os_errno))) == std::string::npos)
        text += " (" + std::string(std::strerror(static_cast<int>(r.os_errno))) + ")";
      fail(STOWAGE_IO, shown(url + ": " + text + after));
    }
    if (transient_status(r.status))
      fail(STOWAGE_IO, shown(url) + ": HTTP " + status_text(r) + after);
    if (body && r.status == 206) {
      uint64_t first = 0, last = 0;
      if (!parse_content_range(r.content_range, &first, &last) || first != body->offset)
        fail(STOWAGE_IO, shown(url) + ": the server answered the range " +
                             std::to_string(body->offset) +
                             "- with \"Content-Range: " + r.content_range + "\"");
    }
    return r;
  }

  // A status that is not success, as an error (404 is the caller's).
  static void check_status(std::string_view key, const Reply& r) {
    if (r.status >= 200 && r.status < 300) return;
    if (r.status == 404 || r.status == 410)
      fail(STOWAGE_NOT_FOUND,
           shown(std::string(key)) + ": no such file (HTTP " + std::to_string(r.status) + ")");
    if (r.status == 403)
      fail(STOWAGE_IO,
           shown(std::string(key)) + ": HTTP 403 Forbidden (the server refuses to serve it)");
    if (r.status == 401)
      fail(STOWAGE_IO,
           shown(std::string(key)) + ": HTTP 401 Unauthorized (the server wants credentials)");
    fail(STOWAGE_IO, shown(std::string(key)) + ": HTTP " + status_text(r));
  }

  // The size of a file whose HEAD gave no Content-Length, from the total of
  // a one-byte range.
  uint64_t size_by_range(std::string_view key, const std::string& url) {
    std::vector<uint8_t> one;
    Body b;
    b.offset = 0;
    b.limit = 1;
    b.grow = &one;
    Reply r = request(url, "GET", &b);
    if (r.status != 416) check_status(key, r);
    // the total of the range, or the whole file instead (nginx does so for an
    // empty one): its length
    uint64_t size = 0;
    if (total_size(r, &size)) return size;
    if (r.status == 416) return 0;
    fail(STOWAGE_IO, shown(std::string(key)) +
                         ": the server tells neither Content-Length nor a Content-Range total");
  }

  // nginx `autoindex_format json`: [{"name": "a", "type": "file", ...}, ...].
  static std::vector<std::string> parse_listing(std::string_view key, std::string_view text) {
    nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_array())
      unsupported(
          shown(std::string(key)) +
          ": the server's directory listing is not JSON (nginx: autoindex on; autoindex_format json;)");
    std::vector<std::string> names;
    for (const nlohmann::json& e : j) {
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
        fail(STOWAGE_CORRUPT,
             shown(std::string(key)) + ": a listing entry without a name: " + e.dump());
      std::string name = e["name"].get<std::string>();
      if (name.empty() || name == "." || name == ".." || name.rfind(".stowage-", 0) == 0) continue;
      if (e.value("type", "") == "directory") name += '/';
      names.push_back(std::move(name));
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  Options options_;
  std::unique_ptr<CurlPool> pool_ = std::make_unique<CurlPool>();
  // Null when off: by the option, or when the environment names a proxy
  // (which DirectGet does not speak to; libcurl does).
  std::unique_ptr<DirectGet> direct_;
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list_{nullptr,
                                                                           curl_slist_free_all};
  std::atomic<bool> login_by_libcurl_{false};  // a server asked DirectGet for a login
};

const char* const kAliases[] = {"https", nullptr};

}  // namespace
}  // namespace stowage_http

// bearer_token's and password's values are never shown, by their names (the
// core's rule, core/src/params.cpp); headers, whose name does not say so, is
// marked "secret".
STOWAGE_DEFINE_STORAGE_PLUGIN(
    stowage_http::HttpStorage, "http", "1.0.0",
    "files served over HTTP(S), read only: ranged GETs, nginx JSON listings, retries (libcurl)",
    R"({"retries": {"type": "integer", "default": 4, "min": 0, "max": 100},)"
    R"( "retry_delay_ms": {"type": "integer", "default": 50, "min": 0, "max": 60000},)"
    R"( "timeout_ms": {"type": "integer", "default": 60000, "min": 0, "max": 86400000},)"
    R"( "connect_timeout_ms": {"type": "integer", "default": 10000, "min": 0, "max": 3600000},)"
    R"( "direct": {"type": "boolean", "default": true},)"
    R"( "headers": {"type": "object", "default": {}, "secret": true},)"
    R"( "bearer_token": {"type": "string", "default": ""},)"
    R"( "netrc": {"type": "boolean", "default": true},)"
    R"( "username": {"type": "string", "default": ""},)"
    R"( "password": {"type": "string", "default": ""}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_PARTIAL, stowage_http::kAliases)
