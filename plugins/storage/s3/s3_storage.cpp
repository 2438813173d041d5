// Storage backend "s3": objects in S3 and S3-compatible stores (radosgw,
// MinIO), keys s3://bucket/prefix/key. README.md says what each part does
// and why; in short:
//
//   stat       HEAD (size, ETag as the version); a key with keys under it
//              ("key/...") is a directory, found by ListObjectsV2 with
//              max-keys=1, S3 having no directories of its own
//   read       ranged GET, its body received in place as the http backend's
//   list       ListObjectsV2, prefix + delimiter '/', every page
//   publish    PUT, or a multipart upload from multipart_threshold bytes on
//   remove     DELETE; a directory with its keys: DeleteObjects, 1000 a time
// and no conditional part (radosgw's If-Match is not atomic: README.md), no
// rename part (S3 renames nothing) and no lock part.
#include <curl/curl.h>
#include <openssl/evp.h>

#define STOWAGE_PLUGIN_BUILD_EXTRA ", libcurl " LIBCURL_VERSION
#include <stowage/plugin.hpp>
#include <stowage/storage.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../common/options_json.hpp"
#include "../common/transfer.hpp"
#include "client.hpp"
#include "credentials.hpp"
#include "errors.hpp"
#include "listing.hpp"
#include "multipart.hpp"
#include "staged.hpp"
#include "xml.hpp"

namespace stowage_s3 {
namespace {

using stowage::sdk::fail;
using stowage::sdk::invalid;
using stowage::sdk::KeyStat;
using stowage::sdk::StagedBackendFile;

constexpr const char* kOptionNames =
    "retries, retry_delay_ms, timeout_ms, connect_timeout_ms, direct, endpoint, region, "
    "anonymous, addressing_style, multipart_threshold, part_size, upload_threads, "
    "memory_staging, access_key_id, secret_access_key, session_token, profile, key, secret, "
    "token";

struct Options {
  ClientOptions client;
  std::string endpoint;  // "" : from the environment
  std::string region;
  bool anonymous = false;
  std::string addressing_style = "auto";  // "path", "virtual": as the AWS CLI's s3 setting
  uint64_t multipart_threshold = 64ull << 20;
  uint64_t part_size = 16ull << 20;
  int64_t upload_threads = 4;
  uint64_t memory_staging = 256ull << 20;  // a staged object past it goes to a temporary file
  std::string access_key_id, secret_access_key, session_token;  // "": from the environment
  std::string profile;                                          // "": AWS_PROFILE's
};

int64_t integer(const nlohmann::json& j, const char* key, int64_t def, int64_t min, int64_t max) {
  if (!j.contains(key)) return def;
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer())
    invalid(std::string("s3 storage: \"") + key + "\" must be an integer, got " + v.dump());
  const int64_t n = v.get<int64_t>();
  if (n < min || n > max)
    invalid(std::string("s3 storage: \"") + key + "\" is " + std::to_string(n) +
            ", allowed range " + std::to_string(min) + ".." + std::to_string(max));
  return n;
}

template <class T>
T typed(const nlohmann::json& j, const char* key, T def, const char* what) {
  if (!j.contains(key)) return def;
  const nlohmann::json& v = j[key];
  if ((std::is_same_v<T, bool> && !v.is_boolean()) ||
      (std::is_same_v<T, std::string> && !v.is_string()))
    invalid(std::string("s3 storage: \"") + key + "\" must be " + what + ", got " + v.dump());
  return v.get<T>();
}

// A string option that s3fs users write as `alias` (key=, secret=,
// token=); its value is never shown.
std::string spelled(const nlohmann::json& j, const char* key, const char* alias) {
  if (j.contains(key) && j.contains(alias))
    invalid(std::string("s3 storage: \"") + key + "\" and \"" + alias + "\" are one option");
  const char* given = j.contains(alias) ? alias : key;
  if (!j.contains(given)) return "";
  if (!j[given].is_string())
    invalid(std::string("s3 storage: \"") + given + "\" must be a string, not " +
            j[given].type_name());
  return j[given].get<std::string>();
}

Options parse_options(std::string_view text, const std::string& what) {
  const nlohmann::json j = stowage_curl::options_json(text, what);
  const std::string known = std::string(", ") + kOptionNames + ",";
  for (const auto& item : j.items())
    if (known.find(", " + item.key() + ",") == std::string::npos)
      invalid("s3 storage: unknown option \"" + item.key() + "\" (known: " + kOptionNames + ")");
  Options o;
  o.client.retries = integer(j, "retries", o.client.retries, 0, 100);
  o.client.retry_delay_ms = integer(j, "retry_delay_ms", o.client.retry_delay_ms, 0, 60000);
  o.client.timeout_ms = integer(j, "timeout_ms", o.client.timeout_ms, 0, 24 * 3600 * 1000);
  o.client.connect_timeout_ms =
      integer(j, "connect_timeout_ms", o.client.connect_timeout_ms, 0, 3600 * 1000);
  o.client.direct = typed<bool>(j, "direct", true, "true or false");
  o.endpoint = typed<std::string>(j, "endpoint", "", "a URL");
  o.region = typed<std::string>(j, "region", "", "a region name");
  o.anonymous = typed<bool>(j, "anonymous", false, "true or false");
  o.addressing_style = typed<std::string>(j, "addressing_style", "auto", "a string");
  if (o.addressing_style != "auto" && o.addressing_style != "path" &&
      o.addressing_style != "virtual")
    invalid("s3 storage: \"addressing_style\" is \"" + o.addressing_style +
            "\"; one of auto, path, virtual");
  o.part_size = static_cast<uint64_t>(
      integer(j, "part_size", static_cast<int64_t>(o.part_size), kMinPartSize, 5ll << 30));
  o.multipart_threshold = static_cast<uint64_t>(
      integer(j, "multipart_threshold", static_cast<int64_t>(o.multipart_threshold),
              static_cast<int64_t>(kMinPartSize), 5ll << 30));
  o.upload_threads = integer(j, "upload_threads", o.upload_threads, 1, 64);
  o.memory_staging = static_cast<uint64_t>(
      integer(j, "memory_staging", static_cast<int64_t>(o.memory_staging), 0, INT64_MAX));
  o.access_key_id = spelled(j, "access_key_id", "key");
  o.secret_access_key = spelled(j, "secret_access_key", "secret");
  o.session_token = spelled(j, "session_token", "token");
  o.profile = typed<std::string>(j, "profile", "", "a profile name");
  // A half key is a mistake to say, not to fill from elsewhere.
  if (o.access_key_id.empty() != o.secret_access_key.empty() ||
      (!o.session_token.empty() && o.access_key_id.empty()))
    invalid(std::string("s3 storage: the options have ") +
            (o.access_key_id.empty() ? "a secret_access_key or session_token but no access_key_id"
                                     : "an access_key_id but no secret_access_key"));
  if (o.anonymous && !o.access_key_id.empty())
    invalid("s3 storage: the options give a key and \"anonymous\": true; one or the other");
  return o;
}

// The registry opens its backend without options: STOWAGE_S3_OPTIONS sets
// them, as STOWAGE_HTTP_OPTIONS does for http.
std::string_view environment_options() {
  const char* text = std::getenv("STOWAGE_S3_OPTIONS");
  return text && *text ? std::string_view(text) : std::string_view("{}");
}

// The environment's and the files' settings, then the options over them.
Config config_with(const Options& o) {
  Config c;
  try {
    c = find_config(o.profile);
    if (!o.access_key_id.empty() || !o.secret_access_key.empty())
      use_key(o.access_key_id, o.secret_access_key, o.session_token, "the storage options", &c);
  } catch (const std::runtime_error& e) {
    invalid(e.what());
  }
  if (!o.region.empty()) {
    if (!c.path_style && o.endpoint.empty()) c.endpoint = aws_endpoint(o.region);
    c.region = o.region;
    c.region_given = true;
  }
  if (!o.endpoint.empty()) {
    c.endpoint = o.endpoint;
    while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
    c.path_style = true;
  }
  if (o.anonymous) c.credentials = Credentials{};
  if (o.addressing_style != "auto") c.path_style = o.addressing_style == "path";
  c.virtual_style = o.addressing_style == "virtual";
  return c;
}

// s3://bucket/key split; trailing slashes of the key cut.
struct Location {
  std::string shown;  // as given
  std::string bucket;
  std::string key;
};

Location locate(std::string_view given) {
  Location l;
  l.shown = std::string(given);
  std::string_view s = given;
  if (s.substr(0, 5) != "s3://") invalid(l.shown + ": not an s3 URL (s3://bucket/key)");
  s.remove_prefix(5);
  const size_t slash = s.find('/');
  l.bucket = std::string(s.substr(0, slash));
  if (l.bucket.empty()) invalid(l.shown + ": no bucket in the URL (s3://bucket/key)");
  if (slash != std::string_view::npos) l.key = std::string(s.substr(slash + 1));
  while (!l.key.empty() && l.key.back() == '/') l.key.pop_back();
  return l;
}

std::string content_md5(const std::string& body) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(body.data(), body.size(), md, &n, EVP_md5(), nullptr);
  unsigned char out[64];
  const int len = EVP_EncodeBlock(out, md, static_cast<int>(n));
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(len));
}

bool staging_name(std::string_view name) { return name.rfind(".stowage-", 0) == 0; }

// No ConditionalStorage: radosgw Pacific honours If-Match but does not hold
// it against a racing PUT (two of four writers from one ETag both win; see
// README.md), and the conditional part promises atomicity.
class S3Storage : public stowage::sdk::ReadableStorage, public stowage::sdk::WritableStorage {
 public:
  S3Storage(const stowage_host*, std::string_view options_json)
      : options_(options_json.empty()
                     ? parse_options(environment_options(), "s3 storage: STOWAGE_S3_OPTIONS")
                     : parse_options(options_json, "s3 storage: the options")),
        client_(config_with(options_), options_.client) {}

  KeyStat stat(std::string_view given) override {
    const Location l = locate(given);
    if (!l.key.empty()) {
      Request r = request(l, "HEAD");
      const Answer a = client_.send(r);
      if (succeeded(a))
        return {STOWAGE_ENTRY_FILE,
                static_cast<uint64_t>(std::max<int64_t>(a.reply.content_length, 0)), a.reply.etag};
      if (a.reply.status != 404) explain_head(l, a);
    }
    // A bucket, or a prefix with keys under it. (A missing bucket: its list
    // is NoSuchBucket, and so absent.)
    try {
      const Listing under =
          list_objects(client_, l.shown, l.bucket, l.key.empty() ? "" : l.key + "/", true, 1);
      if (l.key.empty() || !under.keys.empty() || !under.prefixes.empty())
        return {STOWAGE_ENTRY_DIRECTORY, 0, ""};
    } catch (const stowage::sdk::Error& e) {
      if (e.code() != STOWAGE_NOT_FOUND) throw;
    }
    return {STOWAGE_ENTRY_ABSENT, 0, ""};
  }

  stowage_view read(std::string_view key, uint64_t offset, uint64_t length, uint32_t) override {
    auto bytes = std::make_unique<std::vector<uint8_t>>();
    stowage_curl::Body b;
    b.offset = offset;
    b.limit = length;
    b.grow = bytes.get();
    get(locate(key), b, nullptr);
    return stowage_curl::owned_view(std::move(bytes));
  }

  uint64_t read_into(std::string_view key, uint64_t offset, void* buf, uint64_t capacity) override {
    stowage_buffer part{buf, capacity};
    return read_parts(key, offset, &part, 1, nullptr);
  }

  // One ranged GET into the caller's buffers, the size from Content-Range.
  uint64_t read_parts(std::string_view key, uint64_t offset, const stowage_buffer* parts,
                      size_t count, uint64_t* file_size) override {
    stowage_curl::Body b;
    b.offset = offset;
    b.parts = parts;
    b.count = count;
    for (size_t i = 0; i < count; ++i) b.limit += std::min(parts[i].size, UINT64_MAX - b.limit);
    get(locate(key), b, file_size);
    return b.kept;
  }

  std::vector<std::string> list(std::string_view given) override {
    const Location l = locate(given);
    const std::string prefix = l.key.empty() ? "" : l.key + "/";
    const Listing found = list_objects(client_, l.shown, l.bucket, prefix, true);
    std::set<std::string> names;
    for (const std::string& k : found.keys)
      if (k.size() > prefix.size()) names.insert(k.substr(prefix.size()));
    for (const std::string& p : found.prefixes)
      if (p.size() > prefix.size() + 1) names.insert(p.substr(prefix.size()));
    if (names.empty() && !l.key.empty() && found.keys.empty())
      fail(STOWAGE_NOT_FOUND,
           l.shown + ": no such directory (no key starts with \"" + prefix + "\")");
    std::vector<std::string> out;
    for (const std::string& n : names)
      if (!staging_name(n)) out.push_back(n);
    return out;
  }

  std::unique_ptr<StagedBackendFile> stage(std::string_view given) override {
    Location l = locate(given);
    if (l.key.empty()) invalid(l.shown + ": a bucket is not a file (s3://bucket/key)");
    return std::make_unique<StagedObject>(l.shown, l.bucket, l.key, options_.memory_staging);
  }

  // S3 has no transaction: the files are put one after the other, in the
  // order given (README.md: what "publish whole" means here).
  void publish(std::vector<std::unique_ptr<StagedBackendFile>> files, uint32_t flags) override {
    for (auto& f : files) {
      auto& o = static_cast<StagedObject&>(*f);
      if (flags & STOWAGE_PUBLISH_REPLACE) {
        put(o, {});
        continue;
      }
      // Without REPLACE: If-None-Match: * makes "only if absent" the
      // server's decision (a multipart upload cannot say it: asked first).
      if (o.contents().size >= options_.multipart_threshold) {
        if (stat(o.shown).kind != STOWAGE_ENTRY_ABSENT) invalid(o.shown + ": exists");
        put(o, {});
      } else if (!succeeded(put(o, {{"If-None-Match", "*"}}))) {
        invalid(o.shown + ": exists");
      }
    }
  }

  void remove(std::string_view given, uint32_t flags) override {
    const Location l = locate(given);
    const KeyStat st = stat(given);
    if (st.kind == STOWAGE_ENTRY_ABSENT)
      fail(STOWAGE_NOT_FOUND, l.shown + ": no such file or directory");
    if (st.kind == STOWAGE_ENTRY_FILE) {
      Request r = request(l, "DELETE");
      const Answer a = client_.send(r);
      if (!succeeded(a) && a.reply.status != 404) fail_answer(l.shown, a);
      return;
    }
    if (!(flags & STOWAGE_REMOVE_RECURSIVE)) invalid(l.shown + ": directory not empty");
    const Listing all =
        list_objects(client_, l.shown, l.bucket, l.key.empty() ? "" : l.key + "/", false);
    for (size_t at = 0; at < all.keys.size(); at += 1000)
      delete_objects(l, all.keys, at, std::min<size_t>(all.keys.size(), at + 1000));
  }

  // S3 has no directories: an empty object "key/" stands for one (as the S3
  // console, s3fs and Hadoop's S3A make them), so that an empty directory
  // is one until keys come under it. Listings leave it out.
  void make_directory(std::string_view given) override {
    const Location l = locate(given);
    if (l.key.empty()) return;  // the bucket
    Request r = request(l, "PUT");
    r.key += '/';
    const Answer a = client_.send(r);
    if (!succeeded(a)) fail_answer(l.shown, a);
  }

 private:
  Request request(const Location& l, const char* method) const {
    Request r;
    r.method = method;
    r.bucket = l.bucket;
    r.key = l.key;
    r.shown = l.shown;
    return r;
  }

  // A HEAD's answer has no body, so a refused one tells no S3 Code
  // (SignatureDoesNotMatch, AccessDenied): a one-byte GET asks again for it.
  [[noreturn]] void explain_head(const Location& l, const Answer& head) {
    std::vector<uint8_t> one;
    stowage_curl::Body b;
    b.limit = 1;
    b.grow = &one;
    Request r = request(l, "GET");
    r.body = &b;
    const Answer a = client_.send(r);
    fail_answer(l.shown, succeeded(a) || a.code.empty() ? head : a);
  }

  // GET of bytes [b.offset, b.offset + b.limit) into b, as the http backend's.
  void get(const Location& l, stowage_curl::Body& b, uint64_t* file_size) {
    if (b.limit == 0) {  // nothing to read, but the object must exist
      const KeyStat st = stat(l.shown);
      if (st.kind != STOWAGE_ENTRY_FILE) fail(STOWAGE_NOT_FOUND, l.shown + ": no such key");
      if (file_size) *file_size = st.size;
      return;
    }
    if (l.key.empty()) invalid(l.shown + ": a bucket is not a file (s3://bucket/key)");
    Request r = request(l, "GET");
    r.body = &b;
    const Answer a = client_.send(r);
    if (a.reply.status == 416) {
      b.restart();  // the range starts at or after the end
    } else if (!succeeded(a)) {
      fail_answer(l.shown, a);
    }
    if (file_size && !stowage_curl::total_size(a.reply, file_size)) *file_size = stat(l.shown).size;
  }

  // One PUT, or a multipart upload for a large object; `conditions`
  // (If-None-Match) make a 412 an answer, not an error.
  Answer put(StagedObject& o, const Pairs& conditions) {
    const StagedObject::Contents bytes = o.contents();
    const uint64_t size = bytes.size;
    if (size >= options_.multipart_threshold && conditions.empty()) {
      put_multipart(client_, o.shown, o.bucket, o.key, bytes.data, size, options_.part_size,
                    static_cast<unsigned>(options_.upload_threads));
      return Answer{};
    }
    Request r;
    r.method = "PUT";
    r.bucket = o.bucket;
    r.key = o.key;
    r.headers = conditions;
    r.upload = bytes.data;
    r.upload_size = size;
    r.shown = o.shown;
    Answer a = client_.send(r);
    if (succeeded(a)) return a;
    if (!conditions.empty() && (a.reply.status == 412 || a.reply.status == 409)) return a;
    fail_answer(o.shown, a);
  }

  // DeleteObjects of keys[from, to): S3 wants the body's Content-MD5.
  void delete_objects(const Location& l, const std::vector<std::string>& keys, size_t from,
                      size_t to) {
    std::string xml = "<Delete><Quiet>true</Quiet>";
    for (size_t i = from; i < to; ++i)
      xml += "<Object><Key>" + xml_escape(keys[i]) + "</Key></Object>";
    xml += "</Delete>";
    std::vector<uint8_t> text;
    stowage_curl::Body body;
    body.limit = UINT64_MAX;
    body.grow = &text;
    Request r;
    r.method = "POST";
    r.bucket = l.bucket;
    r.query = {{"delete", ""}};
    r.headers = {{"Content-MD5", content_md5(xml)}};
    r.upload = reinterpret_cast<const uint8_t*>(xml.data());
    r.upload_size = xml.size();
    r.body = &body;
    r.shown = l.shown;
    const Answer a = client_.send(r);
    if (!succeeded(a)) fail_answer(l.shown, a);
    const std::string_view result(reinterpret_cast<const char*>(text.data()), text.size());
    const auto errors = xml_elements(result, "Error");
    if (!errors.empty())
      fail(STOWAGE_IO, l.shown + ": " + std::to_string(errors.size()) +
                           " keys were not removed, the first s3://" + l.bucket + "/" +
                           xml_text(errors[0], "Key") + ": " + xml_text(errors[0], "Code") + ": " +
                           xml_text(errors[0], "Message"));
  }

  Options options_;
  Client client_;
};

}  // namespace
}  // namespace stowage_s3

// The values of secret_access_key, session_token, secret and token are never
// shown, by their names (the core's rule, core/src/params.cpp).
STOWAGE_DEFINE_STORAGE_PLUGIN(
    stowage_s3::S3Storage, "s3", "1.0.0",
    "objects in S3 and S3-compatible stores (s3://bucket/key): SigV4, ranged GETs, multipart "
    "uploads (libcurl, OpenSSL)",
    R"({"retries": {"type": "integer", "default": 4, "min": 0, "max": 100},)"
    R"( "retry_delay_ms": {"type": "integer", "default": 50, "min": 0, "max": 60000},)"
    R"( "timeout_ms": {"type": "integer", "default": 60000, "min": 0, "max": 86400000},)"
    R"( "connect_timeout_ms": {"type": "integer", "default": 10000, "min": 0, "max": 3600000},)"
    R"( "direct": {"type": "boolean", "default": true},)"
    R"( "endpoint": {"type": "string", "default": ""},)"
    R"( "region": {"type": "string", "default": ""},)"
    R"( "anonymous": {"type": "boolean", "default": false},)"
    R"( "addressing_style": {"type": "string", "default": "auto", "enum": ["auto", "path", "virtual"]},)"
    R"( "multipart_threshold": {"type": "integer", "default": 67108864, "min": 5242880},)"
    R"( "part_size": {"type": "integer", "default": 16777216, "min": 5242880},)"
    R"( "upload_threads": {"type": "integer", "default": 4, "min": 1, "max": 64},)"
    R"( "memory_staging": {"type": "integer", "default": 268435456, "min": 0},)"
    R"( "access_key_id": {"type": "string", "default": ""},)"
    R"( "secret_access_key": {"type": "string", "default": ""},)"
    R"( "session_token": {"type": "string", "default": ""},)"
    R"( "profile": {"type": "string", "default": ""},)"
    R"( "key": {"type": "string", "default": ""},)"
    R"( "secret": {"type": "string", "default": ""},)"
    R"( "token": {"type": "string", "default": ""}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_PARTIAL, nullptr)
