// The s3 backend against a real S3 server: Ceph's radosgw on a one-node
// cluster (tests/support/radosgw.hpp), started once for this process. No
// mock: every request is signed by plugins/storage/s3/sigv4.cpp and checked
// by radosgw, and boto3 (Debian's python3-boto3) is the peer.
#include <doctest/doctest.h>

#include <stowage/storage.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "../../plugins/storage/s3/client.hpp"
#include "../../plugins/storage/s3/multipart.hpp"
#include "../http/flaky_proxy.hpp"
#include "../http/nginx.hpp"
#include "../http/tools.hpp"
#include "radosgw.hpp"
#include "storage_conformance.hpp"
#include "test_support.hpp"

namespace {

namespace sdk = stowage::sdk;

// The server, and the environment every s3 backend of this process finds
// it by (the registry opens its backend once, from the environment).
test::RadosGW& server() {
  static std::unique_ptr<test::RadosGW> s = [] {
    auto rgw = std::make_unique<test::RadosGW>();
    for (const char* name : {"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_NO_SIGN_REQUEST",
                             "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "STOWAGE_S3_OPTIONS"})
      unsetenv(name);
    setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config", 1);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
    setenv("AWS_ENDPOINT_URL", rgw->endpoint().c_str(), 1);
    setenv("AWS_ACCESS_KEY_ID", rgw->access_key().c_str(), 1);
    setenv("AWS_SECRET_ACCESS_KEY", rgw->secret_key().c_str(), 1);
    setenv("AWS_REGION", rgw->region().c_str(), 1);
    return rgw;
  }();
  return *s;
}

// Runs Python with boto3 on the server: `s3` is a client, the rest is `code`.
test::RunResult boto3(const std::string& code) {
  const test::RadosGW& s = server();
  return test::run_python(
      "import boto3, hashlib, sys\n"
      "s3 = boto3.client('s3', endpoint_url='" +
      s.endpoint() + "', aws_access_key_id='" + s.access_key() + "', aws_secret_access_key='" +
      s.secret_key() + "', region_name='" + s.region() + "')\n" + code);
}

void make_bucket(const std::string& name) {
  const test::RunResult r = boto3("s3.create_bucket(Bucket='" + name + "')\n");
  REQUIRE_MESSAGE(r.status == 0, r.output);
}

const stowage_plugin* plugin() { return stowage::Registry::global().load("storage", "s3"); }

// A backend of its own, opened with `options` from the environment as it is now.
class Backend {
 public:
  explicit Backend(const std::string& options = "{}") {
    server();
    vt_ = static_cast<const stowage_storage_vtable*>(plugin()->vtable);
    stowage_error e{};
    const int rc =
        vt_->open(stowage::Registry::global().host(), options.data(), options.size(), &handle_, &e);
    REQUIRE_MESSAGE(rc == STOWAGE_OK, e.message);
  }
  ~Backend() { vt_->close(handle_); }
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  sdk::Storage storage() const { return sdk::Storage(vt_, handle_, plugin()->capabilities); }

 private:
  const stowage_storage_vtable* vt_ = nullptr;
  stowage_storage_handle handle_ = nullptr;
};

struct Failure {
  int code = STOWAGE_OK;
  std::string message;
};
template <class F>
Failure failure_of(F&& f) {
  try {
    f();
  } catch (const sdk::Error& e) {
    return {e.code(), e.what()};
  }
  return {};
}
bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

}  // namespace

TEST_CASE("s3 on radosgw: the storage conformance checks pass for every part it has") {
  make_bucket("conformance");
  Backend b;
  const sdk::Storage s = b.storage();
  CHECK(s.can_write());
  // radosgw Pacific's If-Match is compared, not held: racing writers from one
  // version both win (plugins/storage/s3/README.md), so no conditional part.
  CHECK_FALSE(s.can_put_if());
  CHECK_FALSE(s.can_rename());
  CHECK_FALSE(s.can_lock_keys());
  storage_conformance::check_storage(s, "s3://conformance/root");
  // again with every staged object in a temporary file
  Backend spilling(R"({"memory_staging": 0})");
  storage_conformance::check_storage(spilling.storage(), "s3://conformance/spilled");
}

TEST_CASE("s3 on radosgw: a wrong secret is SignatureDoesNotMatch naming the URL, not the secret") {
  make_bucket("wrong-secret");
  const std::string good = server().secret_key();
  const std::string wrong = "WRONG" + good.substr(5);
  setenv("AWS_SECRET_ACCESS_KEY", wrong.c_str(), 1);
  Backend b(R"({"retries": 0})");
  setenv("AWS_SECRET_ACCESS_KEY", good.c_str(), 1);
  const std::string url = "s3://wrong-secret/some/key.bin";
  // (stat's HEAD has no body to say why: the backend asks again with a GET)
  for (const Failure& f :
       {failure_of([&] { b.storage().kind(url); }), failure_of([&] { b.storage().read(url); }),
        failure_of([&] { b.storage().write(url, std::string("x")); }),
        failure_of([&] { b.storage().list("s3://wrong-secret/some"); })}) {
    CAPTURE(f.message);
    CHECK(f.code == STOWAGE_IO);
    CHECK(has(f.message, "s3://wrong-secret/some"));
    CHECK(has(f.message, "SignatureDoesNotMatch"));
    CHECK_FALSE(has(f.message, wrong));
    CHECK_FALSE(has(f.message, good));
    CHECK_FALSE(has(f.message, "Signature="));
    CHECK_FALSE(has(f.message, "AWS4-HMAC-SHA256"));
  }
}

TEST_CASE("s3 on radosgw: credentials as storage options override the environment's") {
  make_bucket("keyed");
  const std::string good = server().secret_key();
  const std::string wrong = "WRONG" + good.substr(5);
  setenv("AWS_SECRET_ACCESS_KEY", wrong.c_str(), 1);
  const stowage::json options[] = {
      {{"access_key_id", server().access_key()}, {"secret_access_key", good}},
      {{"key", server().access_key()}, {"secret", good}}};  // s3fs's spellings
  for (const stowage::json& o : options) {
    Backend b(o.dump());
    b.storage().write("s3://keyed/k.txt", std::string("by option " + o.begin().key()));
    CHECK(b.storage().read("s3://keyed/k.txt").text() == "by option " + o.begin().key());
  }
  // The profile named by the option, its key over the environment's.
  test::TempDir tmp;
  test::write_file(tmp / "credentials", "[other]\naws_access_key_id = " + server().access_key() +
                                            "\naws_secret_access_key = " + good + "\n");
  setenv("AWS_SHARED_CREDENTIALS_FILE", (tmp / "credentials").c_str(), 1);
  {
    Backend b(R"({"profile": "other"})");
    CHECK(b.storage().read("s3://keyed/k.txt").text() == "by option key");
  }
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
  setenv("AWS_SECRET_ACCESS_KEY", good.c_str(), 1);
  const test::RunResult got =
      boto3("print(s3.get_object(Bucket='keyed', Key='k.txt')['Body'].read().decode())\n");
  CHECK(got.output == "by option key\n");
  // A wrong secret given as an option: radosgw refuses it, the message names
  // the URL and holds neither secret.
  Backend b(stowage::json{
      {"access_key_id", server().access_key()}, {"secret_access_key", wrong}, {"retries", 0}}
                .dump());
  const Failure f = failure_of([&] { b.storage().read("s3://keyed/k.txt"); });
  CAPTURE(f.message);
  CHECK(has(f.message, "s3://keyed/k.txt"));
  CHECK(has(f.message, "SignatureDoesNotMatch"));
  CHECK_FALSE(has(f.message, wrong));
  CHECK_FALSE(has(f.message, good));
}

TEST_CASE("s3: a bad value of a secret option is refused without showing it") {
  server();
  for (const char* name : {"secret_access_key", "session_token", "secret", "token"}) {
    CAPTURE(name);
    std::string message;
    try {
      auto binding = stowage::Registry::global().bind_storage_options(
          "s3://bucket/x", {{name, {{"nested", "s3cr3t-in-an-object"}}}});
    } catch (const stowage::Error& e) {
      message = e.what();
    }
    CHECK_MESSAGE(has(message, std::string(name) + "=***: it takes a string"), message);
    CHECK_FALSE(has(message, "s3cr3t-in-an-object"));
  }
  // A key without its secret: named, not shown.
  const auto* vt = static_cast<const stowage_storage_vtable*>(plugin()->vtable);
  const std::string options = R"({"access_key_id": "AKIDONLY"})";
  stowage_storage_handle h = nullptr;
  stowage_error e{};
  CHECK(vt->open(stowage::Registry::global().host(), options.data(), options.size(), &h, &e) ==
        STOWAGE_INVALID_ARGUMENT);
  CHECK_MESSAGE(has(e.message, "an access_key_id but no secret_access_key"), e.message);
}

// How many HEADs of the bucket itself radosgw's access log has: the
// region discovery's (the backend's own stat of a bucket lists it).
size_t bucket_heads(const std::string& bucket) {
  const std::filesystem::path log = server().dir() / "log" / "client.rgw.test.log";
  const std::string line = "\"HEAD /" + bucket + " HTTP/1.1\"";
  size_t count = 0;
  for (int i = 0; i < 30; ++i) {  // the log is written a moment later
    const std::string text = test::read_file(log);
    count = 0;
    for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1))
      ++count;
    if (count > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return count;
}

TEST_CASE("s3 on radosgw: with no region set, a bucket's is asked once; radosgw names none") {
  make_bucket("regionless");
  make_bucket("regioned");
  const std::string region = server().region();
  unsetenv("AWS_REGION");
  Backend regionless(R"({"retries": 0})");
  setenv("AWS_REGION", region.c_str(), 1);
  const sdk::Storage s = regionless.storage();
  // radosgw Pacific sends no x-amz-bucket-region (it takes a signature of any
  // region: tests/python/test_radosgw.py), so requests are signed for
  // us-east-1, and work.
  s.write("s3://regionless/dir/a.txt", std::string("anywhere"));
  CHECK(s.read("s3://regionless/dir/a.txt").text() == "anywhere");
  CHECK(s.list("s3://regionless/dir") == std::vector<std::string>{"a.txt"});
  CHECK(s.kind("s3://regionless/dir/a.txt") == STOWAGE_ENTRY_FILE);
  CHECK(bucket_heads("regionless") == 1);
  // A region given: no HEAD of the bucket.
  Backend given(R"({"retries": 0})");
  given.storage().write("s3://regioned/b.txt", std::string("here"));
  CHECK(given.storage().read("s3://regioned/b.txt").text() == "here");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(bucket_heads("regioned") == 0);
}

TEST_CASE("s3 on radosgw: the region a bucket names (x-amz-bucket-region) is the one signed for") {
  // radosgw names none and takes any region's signature, so nginx in front
  // of it answers as AWS does: every answer names the bucket's region
  // "eu-stowage-9", and a request signed for another is 400
  // AuthorizationHeaderMalformed. radosgw still checks every signature.
  make_bucket("elsewhere");
  const std::string rgw = server().endpoint();
  test::Nginx aws_like(
      "", "    location / { proxy_pass " + rgw +
              "; proxy_set_header Host $http_host; proxy_buffering off;"
              " add_header x-amz-bucket-region eu-stowage-9 always;"
              " if ($http_authorization !~ \"/eu-stowage-9/s3/aws4_request\") { return 400; } }\n");
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(aws_like.port());
  const std::string region = server().region();
  unsetenv("AWS_REGION");
  const std::string options = R"({"retries": 0, "endpoint": ")" + endpoint + R"("})";
  Backend found(options);
  setenv("AWS_REGION", region.c_str(), 1);
  found.storage().write("s3://elsewhere/k.txt", std::string("signed for eu-stowage-9"));
  CHECK(found.storage().read("s3://elsewhere/k.txt").text() == "signed for eu-stowage-9");
  CHECK(found.storage().list("s3://elsewhere") == std::vector<std::string>{"k.txt"});
  // The region given (us-east-1): the proxy refuses it, as AWS would.
  Backend given(options);
  const Failure f = failure_of([&] { given.storage().read("s3://elsewhere/k.txt"); });
  CAPTURE(f.message);
  CHECK(has(f.message, "s3://elsewhere/k.txt"));
  CHECK(has(f.message, "400"));
}

TEST_CASE("s3 on radosgw: a missing bucket and a missing key are not_found naming the URL") {
  make_bucket("present");
  Backend b;
  const sdk::Storage s = b.storage();
  for (const std::string url :
       {"s3://no-such-bucket/x.n5/attributes.json", "s3://present/no/such/key.json"}) {
    CAPTURE(url);
    const Failure f = failure_of([&] { s.read(url); });
    CHECK(f.code == STOWAGE_NOT_FOUND);
    CHECK(has(f.message, url));
    CHECK(has(f.message,
              url.find("no-such-bucket") != std::string::npos ? "NoSuchBucket" : "NoSuchKey"));
    CHECK(s.kind(url) == STOWAGE_ENTRY_ABSENT);
  }
  const Failure f = failure_of([&] { s.list("s3://no-such-bucket/x.n5"); });
  CHECK(f.code == STOWAGE_NOT_FOUND);
  CHECK(has(f.message, "s3://no-such-bucket/x.n5"));
}

TEST_CASE("s3 on radosgw: what boto3 puts reads equal, and what stowage puts boto3 reads equal") {
  make_bucket("peer");
  // 12 MB: boto3's upload_fileobj makes that a multipart upload of 8 MB parts.
  const test::RunResult put = boto3(R"(
import io, random
r = random.Random(7)
s3.put_object(Bucket='peer', Key='dir/small.bin', Body=bytes(range(256)))
s3.put_object(Bucket='peer', Key='dir/a key with spaces+plus', Body=b'spaces')
s3.put_object(Bucket='peer', Key='dir/ünï/cödé.txt', Body='utf-8 key'.encode())
big = bytes(r.getrandbits(8) for _ in range(12 * 1000 * 1000 + 3))
s3.upload_fileobj(io.BytesIO(big), 'peer', 'dir/big.bin')
print(hashlib.sha256(big).hexdigest())
)");
  REQUIRE_MESSAGE(put.status == 0, put.output);
  std::string big_hash = put.output.substr(0, 64);

  Backend b;
  const sdk::Storage s = b.storage();
  std::string bytes(256, '\0');
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<char>(i);
  CHECK(s.read("s3://peer/dir/small.bin").text() == bytes);
  CHECK(s.read("s3://peer/dir/small.bin", 250, 100).text() == bytes.substr(250));
  CHECK(s.read("s3://peer/dir/a key with spaces+plus").text() == "spaces");
  CHECK(s.read("s3://peer/dir/ünï/cödé.txt").text() == "utf-8 key");
  CHECK(s.list("s3://peer/dir") ==
        std::vector<std::string>{"a key with spaces+plus", "big.bin", "small.bin", "ünï/"});
  const sdk::Bytes big = s.read("s3://peer/dir/big.bin");
  CHECK(big.size() == 12 * 1000 * 1000 + 3);
  CHECK(test::run("true").status == 0);
  {
    // a hash of what stowage read, by Python, against boto3's
    test::TempDir tmp;
    test::write_file(tmp / "big.bin", std::string(big.text()));
    const test::RunResult h = test::run_python(
        "import hashlib, sys\nprint(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())",
        (tmp / "big.bin").string());
    CHECK(h.output.substr(0, 64) == big_hash);
  }

  // Written by stowage: one PUT, and a multipart upload of 5 MiB parts, its
  // bytes staged in a temporary file past the first MiB.
  Backend multipart(
      R"({"multipart_threshold": 5242880, "part_size": 5242880, "memory_staging": 1048576})");
  const std::string large = random_bytes(13 * 1024 * 1024 + 11, 3);
  {
    sdk::Staged f = multipart.storage().stage("s3://peer/out/large.bin");
    f.write_at(1000, large.data() + 1000, large.size() - 1000);  // past the limit: a file
    f.write_at(0, large.data(), 1000);
    char back[16];
    CHECK(f.read_at(large.size() - 5, back, sizeof back) == 5);
    CHECK(std::string(back, 5) == large.substr(large.size() - 5));
    multipart.storage().publish(f);
  }
  multipart.storage().write("s3://peer/out/staged-cut.bin", std::string(3 << 20, 'c'));
  s.write("s3://peer/out/small.bin", std::string("from stowage"));
  const test::RunResult got = boto3(R"(
print(s3.get_object(Bucket='peer', Key='out/small.bin')['Body'].read().decode())
print(hashlib.sha256(s3.get_object(Bucket='peer', Key='out/large.bin')['Body'].read()).hexdigest())
print(len(s3.list_multipart_uploads(Bucket='peer').get('Uploads', [])))
print(s3.get_object(Bucket='peer', Key='out/staged-cut.bin')['Body'].read() == b'c' * (3 << 20))
)");
  REQUIRE_MESSAGE(got.status == 0, got.output);
  test::TempDir tmp;
  test::write_file(tmp / "large.bin", large);
  const test::RunResult want = test::run_python(
      "import hashlib, sys\nprint(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())",
      (tmp / "large.bin").string());
  CHECK(got.output == "from stowage\n" + want.output + "0\nTrue\n");
}

TEST_CASE(
    "s3 on radosgw: N5 and Zarr v3 written through Store::open(\"s3://...\") read back equal") {
  make_bucket("stores");
  server();
  std::vector<uint16_t> values(40 * 36);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i * 7 + 1);
  const stowage::json array = {
      {"kind", "array"}, {"dtype", "uint16"}, {"shape", {40, 36}}, {"chunks", {16, 16}}};
  for (const auto& [url, format, desc] :
       {std::tuple<std::string, std::string, stowage::json>{"s3://stores/x.n5", "n5", array},
        {"s3://stores/x.zarr", "zarr", array},
        {"s3://stores/sharded.zarr", "zarr", [&] {
           stowage::json d = array;
           d["chunks"] = {8, 8};
           d["shards"] = {16, 16};
           return d;
         }()}}) {
    CAPTURE(url);
    {
      stowage::Store store = stowage::Store::open(url, stowage::Mode::create, format);
      store.create("g/a", desc);
      store.array("g/a").write({0, 0}, {40, 36}, values.data());
      store.close();
    }
    CHECK(stowage::Store::open(url).format() == format);
    CHECK(stowage::Store::open(url).array("g/a").read_all<uint16_t>() == values);
    // a part of a chunk (and of a shard) rewritten, the rest kept
    std::vector<uint16_t> patch(3 * 5, 9);
    stowage::Store::open(url, stowage::Mode::update)
        .array("g/a")
        .write({1, 2}, {3, 5}, patch.data());
    for (size_t r = 1; r < 4; ++r)
      for (size_t c = 2; c < 7; ++c) values[r * 36 + c] = 9;
    CHECK(stowage::Store::open(url).array("g/a").read_all<uint16_t>() == values);
    // the tools find the same server by the same environment
    const test::RunResult info =
        test::run((test::build_root() / "tools" / "info" / "stowage-info").string() + " " + url);
    CAPTURE(info.output);
    CHECK(info.status == 0);
    CHECK(has(info.output, url + ": " + format));
    CHECK(has(info.output, "g/a  array uint16 [40, 36]"));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i * 7 + 1);
  }
}

TEST_CASE(
    "s3 on radosgw: dropped, refused and cut answers are retried; given up, the URL is named") {
  make_bucket("flaky");
  const std::string data = random_bytes(300000, 5), url = "s3://flaky/data.bin";
  Backend().storage().write(url, data);
  const std::string& endpoint = server().endpoint();
  test::FlakyProxy proxy(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  const std::string via = proxy.url().substr(0, proxy.url().size() - 1);
  for (const char* transport : {"true", "false"}) {
    CAPTURE(transport);
    Backend b(R"({"retry_delay_ms": 1, "endpoint": ")" + via + R"(", "direct": )" + transport +
              "}");
    const sdk::Storage s = b.storage();
    for (test::FlakyProxy::Fault fault :
         {test::FlakyProxy::Fault::drop, test::FlakyProxy::Fault::status,
          test::FlakyProxy::Fault::cut, test::FlakyProxy::Fault::short_range,
          test::FlakyProxy::Fault::short_length}) {
      CAPTURE(static_cast<int>(fault));
      proxy.misbehave(fault, 2);
      CHECK(std::string(s.read(url).text()) == data);
      CHECK(std::string(s.read(url, 1000, 200000).text()) == data.substr(1000, 200000));
      CHECK(s.size(url) == data.size());
    }
    CHECK(proxy.faults() > 0);
  }
  proxy.misbehave(test::FlakyProxy::Fault::drop, 1);
  Backend b(R"({"retries": 2, "retry_delay_ms": 1, "endpoint": ")" + via + R"("})");
  const Failure f = failure_of([&] { b.storage().read(url); });
  CAPTURE(f.message);
  CHECK(f.code == STOWAGE_IO);
  CHECK(has(f.message, url));
  CHECK(has(f.message, "after 3 attempts"));
  CHECK_FALSE(has(f.message, server().secret_key()));
}

TEST_CASE("s3 on radosgw: listings and removals go past one page (1000 keys)") {
  make_bucket("paged");
  const test::RunResult put = boto3(R"(
import concurrent.futures
def put(i):
    s3.put_object(Bucket='paged', Key='many/k%04d' % i, Body=b'%d' % i)
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(put, range(1003)))
s3.put_object(Bucket='paged', Key='many/sub/inner', Body=b'x')
)");
  REQUIRE_MESSAGE(put.status == 0, put.output);
  Backend b;
  const sdk::Storage s = b.storage();
  const std::vector<std::string> names = s.list("s3://paged/many");
  REQUIRE(names.size() == 1004);
  CHECK(names.front() == "k0000");
  CHECK(names[1002] == "k1002");
  CHECK(names.back() == "sub/");
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(s.read("s3://paged/many/k0999").text() == "999");
  s.remove("s3://paged/many", STOWAGE_REMOVE_RECURSIVE);  // DeleteObjects twice
  CHECK(s.kind("s3://paged/many") == STOWAGE_ENTRY_ABSENT);
  const test::RunResult left = boto3("print(s3.list_objects_v2(Bucket='paged')['KeyCount'])\n");
  CHECK(left.output == "0\n");
}

TEST_CASE("s3 on radosgw: a listing is one request, a read of a key one GET") {
  make_bucket("counted");
  Backend().storage().write("s3://counted/dir/a", std::string("abc"));
  const std::string& endpoint = server().endpoint();
  test::FlakyProxy proxy(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  const std::string via = proxy.url().substr(0, proxy.url().size() - 1);
  Backend b(R"({"endpoint": ")" + via + R"("})");
  const sdk::Storage s = b.storage();
  proxy.take_request_lines();
  // radosgw answers a listing chunked: sent to DirectGet first, it went twice
  CHECK(s.list("s3://counted/dir") == std::vector<std::string>{"a"});
  std::vector<std::string> lines = proxy.take_request_lines();
  CHECK_MESSAGE(lines.size() == 1, lines.back());
  CHECK(std::string(s.read("s3://counted/dir/a").text()) == "abc");
  CHECK(proxy.take_request_lines().size() == 1);
  // a directory: HEAD 404, then one listing
  CHECK(s.kind("s3://counted/dir") == STOWAGE_ENTRY_DIRECTORY);
  CHECK(proxy.take_request_lines().size() == 2);
}

TEST_CASE("s3 on radosgw: anonymous reads a public object and is refused a private one") {
  make_bucket("public");
  const test::RunResult put = boto3(R"(
s3.put_object(Bucket='public', Key='open.txt', Body=b'for all', ACL='public-read')
s3.put_object(Bucket='public', Key='closed.txt', Body=b'for me')
)");
  REQUIRE_MESSAGE(put.status == 0, put.output);
  Backend b(R"({"anonymous": true})");
  const sdk::Storage s = b.storage();
  CHECK(s.read("s3://public/open.txt").text() == "for all");
  const Failure f = failure_of([&] { s.read("s3://public/closed.txt"); });
  CAPTURE(f.message);
  CHECK(f.code == STOWAGE_IO);
  CHECK(has(f.message, "s3://public/closed.txt"));
  CHECK(has(f.message, "AccessDenied"));
  setenv("AWS_NO_SIGN_REQUEST", "YES", 1);
  Backend unsigned_(R"({})");
  unsetenv("AWS_NO_SIGN_REQUEST");
  CHECK(unsigned_.storage().read("s3://public/open.txt").text() == "for all");
  CHECK(failure_of([&] { unsigned_.storage().read("s3://public/closed.txt"); }).code == STOWAGE_IO);
}

TEST_CASE("s3 on radosgw: virtual-hosted addressing (bucket.localhost) reads, writes and lists") {
  make_bucket("vhost");
  const std::string& endpoint = server().endpoint();
  const std::string localhost = "http://localhost" + endpoint.substr(endpoint.rfind(':'));
  for (const char* transport : {"true", "false"}) {
    CAPTURE(transport);
    Backend b(R"({"addressing_style": "virtual", "endpoint": ")" + localhost + R"(", "direct": )" +
              transport + "}");
    const sdk::Storage s = b.storage();
    s.write("s3://vhost/dir/v.txt", std::string("virtual"));
    CHECK(s.read("s3://vhost/dir/v.txt").text() == "virtual");
    CHECK(s.read("s3://vhost/dir/v.txt", 1, 3).text() == "irt");
    CHECK(s.list("s3://vhost/dir") == std::vector<std::string>{"v.txt"});
    CHECK(s.kind("s3://vhost/dir") == STOWAGE_ENTRY_DIRECTORY);
  }
  const test::RunResult got =
      boto3("print(s3.get_object(Bucket='vhost', Key='dir/v.txt')['Body'].read().decode())\n");
  CHECK(got.output == "virtual\n");
}

// A key in the options comes whole, and its secret is never shown.
TEST_CASE("s3: unknown options and bad values are refused naming the valid ones, no secret") {
  server();
  const auto* vt = static_cast<const stowage_storage_vtable*>(plugin()->vtable);
  for (const auto& [options, expected] :
       {std::pair<std::string, std::string>{R"({"addressing_style": "sideways"})",
                                            "one of auto, path, virtual"},
        {R"({"bogus": 1})", "known: retries"},
        {R"({"part_size": 1000})", "allowed range 5242880.."},
        {R"({"access_key_id": "AKID"})", "an access_key_id but no secret_access_key"},
        {R"({"secret_access_key": "hunter2"})", "but no access_key_id"},
        {R"({"session_token": "hunter2"})", "but no access_key_id"},
        {R"({"access_key_id": "AKID", "secret_access_key": ["hunter2"]})",
         "\"secret_access_key\" must be a string, not array"},
        {R"({"access_key_id": "AKID", "secret_access_key": "hunter2", "anonymous": true})",
         "one or the other"}}) {
    CAPTURE(options);
    stowage_storage_handle h = nullptr;
    stowage_error e{};
    const int rc =
        vt->open(stowage::Registry::global().host(), options.data(), options.size(), &h, &e);
    CHECK(rc == STOWAGE_INVALID_ARGUMENT);
    CHECK(has(e.message, expected));
    CHECK_FALSE(has(e.message, "hunter2"));
    if (rc == STOWAGE_OK) vt->close(h);
  }
}

// The key as storage options, the only way it reaches a dask worker on
// another machine: it works with none in the environment or the files.
TEST_CASE("s3 on radosgw: the key given as options signs, and a wrong one is refused unshown") {
  make_bucket("keyed");
  const test::RadosGW& s = server();
  const std::string key = R"("access_key_id": ")" + s.access_key() + R"(", "region": ")" +
                          s.region() + R"(", "endpoint": ")" + s.endpoint() + R"(")";
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_ENDPOINT_URL");
  const std::string wrong = "WRONG" + s.secret_key().substr(5);
  Backend keyed("{" + key + R"(, "secret_access_key": ")" + s.secret_key() + R"("})");
  Backend unkeyed(R"({"endpoint": ")" + s.endpoint() + R"(", "retries": 0})");
  Backend miskeyed("{" + key + R"(, "secret_access_key": ")" + wrong + R"(", "retries": 0})");
  setenv("AWS_ACCESS_KEY_ID", s.access_key().c_str(), 1);
  setenv("AWS_SECRET_ACCESS_KEY", s.secret_key().c_str(), 1);
  setenv("AWS_ENDPOINT_URL", s.endpoint().c_str(), 1);
  keyed.storage().write("s3://keyed/k.txt", std::string("signed by the options"));
  CHECK(keyed.storage().read("s3://keyed/k.txt").text() == "signed by the options");
  const test::RunResult got =
      boto3("print(s3.get_object(Bucket='keyed', Key='k.txt')['Body'].read().decode())\n");
  CHECK(got.output == "signed by the options\n");
  // without the key the requests go unsigned, and the private bucket refuses them
  const Failure anonymous = failure_of([&] { unkeyed.storage().read("s3://keyed/k.txt"); });
  CHECK(has(anonymous.message, "AccessDenied"));
  const Failure f = failure_of([&] { miskeyed.storage().read("s3://keyed/k.txt"); });
  CAPTURE(f.message);
  CHECK(has(f.message, "s3://keyed/k.txt"));
  CHECK(has(f.message, "SignatureDoesNotMatch"));
  CHECK_FALSE(has(f.message, wrong));
}

TEST_CASE("s3: a refused connection names the URL and the endpoint, a password in it as ***") {
  Backend b(R"({"endpoint": "http://someone:hunter2@127.0.0.1:1", "retries": 1,
               "retry_delay_ms": 1})");
  const Failure f = failure_of([&] { b.storage().read("s3://bucket/key.bin"); });
  CAPTURE(f.message);
  CHECK(f.code == STOWAGE_IO);
  CHECK(has(f.message, "s3://bucket/key.bin"));
  CHECK(has(f.message, "127.0.0.1"));
  CHECK(has(f.message, "after 2 attempts"));
  CHECK_FALSE(has(f.message, "hunter2"));
}

TEST_CASE("s3 on radosgw: a multipart upload that fails is aborted, leaving no upload behind") {
  make_bucket("aborted");
  // Parts of 1 MiB (the backend's options allow no less than 5 MiB): radosgw
  // takes each part and refuses the completion (EntityTooSmall).
  stowage_s3::Config c;
  c.credentials = {server().access_key(), server().secret_key(), ""};
  c.region = server().region();
  c.endpoint = server().endpoint();
  c.path_style = true;
  stowage_s3::Client client(c, stowage_s3::ClientOptions{});
  const std::string bytes = random_bytes(3 * 1024 * 1024 + 5, 9);
  const Failure f = failure_of([&] {
    stowage_s3::put_multipart(client, "s3://aborted/big.bin", "aborted", "big.bin",
                              reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                              1024 * 1024, 2);
  });
  CAPTURE(f.message);
  CHECK(f.code == STOWAGE_IO);
  CHECK(has(f.message, "s3://aborted/big.bin"));
  CHECK(has(f.message, "EntityTooSmall"));
  const test::RunResult left = boto3(
      "print(len(s3.list_multipart_uploads(Bucket='aborted').get('Uploads', [])))\n"
      "print(s3.list_objects_v2(Bucket='aborted')['KeyCount'])\n");
  CHECK(left.output == "0\n0\n");
}

// Issue #33: public data read as S3 serves it over plain HTTP (path-style
// URLs, no signing). A "folder" is no object, so its HEAD is 404: the
// container is found by its attributes.json, asked for by name.
TEST_CASE("s3 on radosgw: an N5 container in a public-read bucket opens from its http:// URL") {
  const std::string local =
      std::filesystem::absolute(test::fixtures() / "n5/java-style.n5").string();
  const test::RunResult put = boto3(R"(
import os
s3.create_bucket(Bucket='public-n5', ACL='public-read')
root = ')" + local + R"('
for folder, _, files in os.walk(root):
    for f in files:
        path = os.path.join(folder, f)
        s3.upload_file(path, 'public-n5', 'java-style.n5/' + os.path.relpath(path, root),
                       ExtraArgs={'ACL': 'public-read'})
)");
  REQUIRE_MESSAGE(put.status == 0, put.output);
  const std::string url = server().endpoint() + "/public-n5/java-style.n5";
  stowage::Store want = stowage::Store::open(local, stowage::Mode::read, "n5");
  for (stowage::Store got :
       {stowage::Store::open(url), stowage::Store::open(url, stowage::Mode::read, "n5")}) {
    CHECK(got.format() == "n5");
    test::check_same_arrays(got, want, {"gzip/int32_2d", "zstd/uint32_2d"});
  }
  // stowage-info of a dataset by its own URL.
  const test::RunResult info =
      test::run(test::tool("stowage-info").string() + " " + test::quote(url + "/gzip/int32_2d"));
  CHECK_MESSAGE(info.status == 0, info.output);
  CHECK_MESSAGE(has(info.output, "int32"), info.output);
}
