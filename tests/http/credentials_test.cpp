// Credentials of the http backend against nginx's own checks (nginx.hpp's
// /bearer/ and /basic/ locations): a bearer token or an Authorization
// header from the options, a login from the URL, the options or a .netrc
// ($NETRC). Each is read both ways a GET goes (DirectGet, the default, and
// libcurl with "direct": false) and compared with the served file's bytes;
// without the credentials, or with wrong ones, the error names the URL (a
// password in it as ***) and holds no secret.
#include "nginx.hpp"
#include "test_support.hpp"

#include <stowage/storage.hpp>
#include <stowage/stowage.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace sdk = stowage::sdk;
using test::Nginx;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// nginx serving one file, "data.bin", of 100 000 known bytes.
struct Served {
  Nginx nginx;
  std::vector<uint8_t> bytes;
  Served() {
    for (size_t i = 0; i < 100000; ++i) bytes.push_back(static_cast<uint8_t>(i * 7 + i / 251));
    test::write_file(nginx.root() / "data.bin",
                     std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  std::string url(const std::string& location, const std::string& login = "") const {
    return "http://" + login + "127.0.0.1:" + std::to_string(nginx.port()) + "/" + location +
           "/data.bin";
  }
};

// The whole file at `url` read with storage `options` (bound to the URL as
// Store::open binds them), or the error's message.
struct Read {
  std::vector<uint8_t> bytes;
  std::string error;
};
Read read(const std::string& url, const stowage::json& options) {
  Read r;
  try {
    auto binding = stowage::Registry::global().bind_storage_options(url, options);
    auto b = stowage::Registry::global().storage(url);
    sdk::Storage s(b.vtable, b.handle, b.capabilities);
    r.bytes.resize(s.size(url));
    s.read_exact(url, 0, r.bytes.data(), r.bytes.size());
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

// `options` with "direct" set each way.
std::vector<stowage::json> both_ways(stowage::json options) {
  stowage::json libcurl = options;
  libcurl["direct"] = false;
  return {options, libcurl};
}

// Sets NETRC for the scope (and restores it).
class NetrcFile {
 public:
  explicit NetrcFile(const std::string& text) {
    test::write_file(dir_ / "netrc", text);
    const char* old = std::getenv("NETRC");
    if (old) old_ = old;
    ::setenv("NETRC", (dir_ / "netrc").c_str(), 1);
  }
  ~NetrcFile() { old_.empty() ? ::unsetenv("NETRC") : ::setenv("NETRC", old_.c_str(), 1); }

 private:
  test::TempDir dir_;
  std::string old_;
};

}  // namespace

TEST_CASE("http credentials: a bearer token, as the option or as a header, opens /bearer/") {
  Served s;
  const std::string url = s.url("bearer");
  Read r = read(url, {{"retries", 0}});
  CHECK_MESSAGE(has(r.error, url + ": HTTP 401"), r.error);
  // ("netrc": false: a 401 to DirectGet is final, not asked again through
  // libcurl, so the token must reach DirectGet's request itself.)
  for (const stowage::json& o :
       both_ways({{"bearer_token", Nginx::kBearerToken}, {"netrc", false}})) {
    r = read(url, o);
    CHECK_MESSAGE(r.error.empty(), o.dump() << ": " << r.error);
    CHECK(r.bytes == s.bytes);
  }
  const stowage::json header = {
      {"headers", {{"Authorization", std::string("Bearer ") + Nginx::kBearerToken}}},
      {"netrc", false}};
  for (const stowage::json& o : both_ways(header)) {
    r = read(url, o);
    CHECK_MESSAGE(r.error.empty(), o.dump() << ": " << r.error);
    CHECK(r.bytes == s.bytes);
  }
  for (const stowage::json& o : both_ways({{"bearer_token", "wrong-t0ken-4411"}, {"retries", 0}})) {
    r = read(url, o);
    CHECK_MESSAGE(has(r.error, url + ": HTTP 401 Unauthorized"), r.error);
    CHECK_MESSAGE(!has(r.error, "wrong-t0ken-4411"), r.error);
  }
}

TEST_CASE("http credentials: a login in the URL, the options or $NETRC opens /basic/") {
  Served s;
  const std::string login = std::string(Nginx::kUser) + ":" + Nginx::kPassword + "@";
  for (const stowage::json& o : both_ways(stowage::json::object())) {
    Read r = read(s.url("basic", login), o);
    CHECK_MESSAGE(r.error.empty(), o.dump() << ": " << r.error);
    CHECK(r.bytes == s.bytes);
  }
  const std::string url = s.url("basic");
  for (const stowage::json& o :
       both_ways({{"username", Nginx::kUser}, {"password", Nginx::kPassword}})) {
    Read r = read(url, o);
    CHECK_MESSAGE(r.error.empty(), o.dump() << ": " << r.error);
    CHECK(r.bytes == s.bytes);
  }
  {
    NetrcFile netrc("machine 127.0.0.1 login " + std::string(Nginx::kUser) + " password " +
                    Nginx::kPassword + "\n");
    for (const stowage::json& o : both_ways(stowage::json::object())) {
      Read r = read(url, o);
      CHECK_MESSAGE(r.error.empty(), o.dump() << ": " << r.error);
      CHECK(r.bytes == s.bytes);
    }
    // "netrc": false leaves the file unread.
    Read r = read(url, {{"netrc", false}, {"retries", 0}});
    CHECK_MESSAGE(has(r.error, url + ": HTTP 401"), r.error);
  }
  // A wrong password: the URL as given, its password as ***.
  for (const stowage::json& o : both_ways({{"retries", 0}})) {
    Read r = read(s.url("basic", std::string(Nginx::kUser) + ":wr0ng-pass-5150@"), o);
    CHECK_MESSAGE(has(r.error, s.url("basic", std::string(Nginx::kUser) + ":***@") + ": HTTP 401"),
                  r.error);
    CHECK_MESSAGE(!has(r.error, "wr0ng-pass-5150"), r.error);
  }
}

TEST_CASE("http credentials: a bad value of a secret option is refused without showing it") {
  Served s;
  const std::string url = s.url("bearer");
  Read r = read(url, {{"bearer_token", 4242424242}});
  CHECK_MESSAGE(has(r.error, "option bearer_token=***: it takes a string"), r.error);
  CHECK_MESSAGE(!has(r.error, "4242424242"), r.error);
  r = read(url, {{"headers", "Authorization: Bearer 5ecret-in-a-string"}});
  CHECK_MESSAGE(has(r.error, "option headers=***: it takes an object"), r.error);
  CHECK_MESSAGE(!has(r.error, "5ecret-in-a-string"), r.error);
  r = read(url, {{"password", true}});
  CHECK_MESSAGE(has(r.error, "option password=***"), r.error);
  // A header value that is not a string: named, its value not shown.
  r = read(url, {{"headers", {{"Authorization", 31337}}}});
  CHECK_MESSAGE(has(r.error, "the header \"Authorization\""), r.error);
  CHECK_MESSAGE(!has(r.error, "31337"), r.error);
  // What the options are, in the message of an unknown one: no default of a secret.
  r = read(url, {{"bogus", 1}});
  CHECK_MESSAGE(has(r.error, "bearer_token (a string)"), r.error);
  CHECK_MESSAGE(has(r.error, "netrc (true or false, default true)"), r.error);
}
