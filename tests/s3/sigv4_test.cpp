// The s3 backend's signer against the AWS SigV4 test suite
// (tests/fixtures/sigv4/README.md): the canonical request, the string to
// sign and the Authorization header of every vector brought there.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <ctime>
#include <fstream>
#include <sstream>

#include "../../plugins/storage/s3/sigv4.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using stowage_s3::Pairs;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "2015-08-30T12:36:00Z" as seconds since the epoch.
std::time_t utc(const std::string& iso) {
  std::tm t{};
  REQUIRE(strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &t) != nullptr);
  return timegm(&t);
}

// A vector's request.txt: "METHOD path?query HTTP/1.1", "Name:value" lines,
// an empty line and the body. The path may hold spaces ("get-space").
struct Request {
  std::string method, path, body;
  Pairs query, headers;
};

Request parse_request(const std::string& text) {
  Request r;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const size_t sp = line.find(' '), version = line.rfind(" HTTP/");
  REQUIRE(sp != std::string::npos);
  REQUIRE(version > sp);
  r.method = line.substr(0, sp);
  std::string target = line.substr(sp + 1, version - sp - 1);
  const size_t q = target.find('?');
  r.path = stowage_s3::uri_decode(target.substr(0, q));
  if (q != std::string::npos) {
    std::istringstream params(target.substr(q + 1));
    std::string p;
    while (std::getline(params, p, '&')) {
      const size_t eq = p.find('=');
      r.query.emplace_back(stowage_s3::uri_decode(p.substr(0, eq)),
                           eq == std::string::npos ? "" : stowage_s3::uri_decode(p.substr(eq + 1)));
    }
  }
  while (std::getline(in, line) && !line.empty()) {
    const size_t colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    r.headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
  }
  const size_t blank = text.find("\n\n");
  if (blank != std::string::npos) r.body = text.substr(blank + 2);
  return r;
}

// The Authorization header of header-signed-request.txt.
std::string authorization_of(const std::string& signed_request) {
  std::istringstream in(signed_request);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Authorization:", 0) == 0) return line.substr(14);
  FAIL("no Authorization line in header-signed-request.txt");
  return "";
}

stowage_s3::Signature sign_vector(const fs::path& dir) {
  const nlohmann::json context = nlohmann::json::parse(slurp(dir / "context.json"));
  const Request r = parse_request(slurp(dir / "request.txt"));
  stowage_s3::SignInput in;
  in.method = r.method;
  in.path = r.path;
  in.query = r.query;
  in.headers = r.headers;
  in.payload = stowage_s3::sha256_hex(r.body.data(), r.body.size());
  in.payload_header = context.at("sign_body").get<bool>();
  in.region = context.at("region").get<std::string>();
  in.service = context.at("service").get<std::string>();
  in.when = utc(context.at("timestamp").get<std::string>());
  stowage_s3::Credentials c;
  const auto& cred = context.at("credentials");
  c.access_key = cred.at("access_key_id").get<std::string>();
  c.secret_key = cred.at("secret_access_key").get<std::string>();
  c.session_token = cred.value("token", "");
  return stowage_s3::sign(in, c);
}

std::vector<fs::path> vectors() {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(test::fixtures() / "sigv4"))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

TEST_CASE("SigV4: the canonical request, string to sign and signature of every test vector") {
  const std::vector<fs::path> dirs = vectors();
  REQUIRE(dirs.size() >= 30);
  for (const fs::path& dir : dirs) {
    CAPTURE(dir.filename().string());
    const stowage_s3::Signature s = sign_vector(dir);
    CHECK(s.canonical_request == slurp(dir / "header-canonical-request.txt"));
    CHECK(s.string_to_sign == slurp(dir / "header-string-to-sign.txt"));
    CHECK(s.authorization == authorization_of(slurp(dir / "header-signed-request.txt")));
  }
}

TEST_CASE("SigV4: a session token is signed as x-amz-security-token and sent") {
  const stowage_s3::Signature s =
      sign_vector(test::fixtures() / "sigv4" / "get-vanilla-with-session-token");
  bool sent = false;
  for (const auto& [name, value] : s.headers)
    sent |= name == "x-amz-security-token" && value.rfind("6e86291e", 0) == 0;
  CHECK(sent);
  CHECK(s.authorization.find("SignedHeaders=host;x-amz-date;x-amz-security-token,") !=
        std::string::npos);
}

TEST_CASE("SigV4: S3's bare sub-resources (?uploads, ?delete) sign as name=") {
  stowage_s3::SignInput in;
  in.method = "POST";
  in.path = "/bucket/a key";
  in.query = {{"uploads", ""}, {"delete", ""}};
  in.headers = {{"Host", "127.0.0.1:8000"}};
  in.payload = "UNSIGNED-PAYLOAD";
  in.region = "us-east-1";
  in.service = "s3";
  stowage_s3::Credentials c{"AK", "SECRET", ""};
  const stowage_s3::Signature s = stowage_s3::sign(in, c);
  CHECK(s.canonical_request.rfind("POST\n/bucket/a%20key\ndelete=&uploads=\n", 0) == 0);
  CHECK(s.canonical_request.find("x-amz-content-sha256:UNSIGNED-PAYLOAD\n") != std::string::npos);
  CHECK(s.authorization.find("SECRET") == std::string::npos);
}

TEST_CASE("SigV4: percent-encoding and decoding") {
  CHECK(stowage_s3::uri_encode("a b/c~d+é", true) == "a%20b/c~d%2B%C3%A9");
  CHECK(stowage_s3::uri_encode("a/b", false) == "a%2Fb");
  CHECK(stowage_s3::uri_decode("a%20b%2Fc%zz%4") == "a b/c%zz%4");
  CHECK(stowage_s3::sha256_hex("", 0) == stowage_s3::kEmptyPayload);
}
