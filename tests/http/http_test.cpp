// The http storage backend (plugins/storage/http) against a real nginx the
// test starts, directly and through a proxy that drops connections, answers
// 503, cuts bodies short or stalls now and then.
//
// The plugin is loaded by the registry (Registry::storage for the URL's
// scheme) and driven through the SDK's C++ face (sdk::Storage), as a format
// plugin drives it. (n5_over_http_test.cpp reads N5 containers through it.)
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "storage_conformance.hpp"
#include "test_support.hpp"

#include <stowage/storage.hpp>

#include <sys/stat.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace sdk = stowage::sdk;
using Fault = test::FlakyProxy::Fault;

// The plugin as the registry finds it (stowage_storage_http.so on the plugin
// path), as every format reaches it.
const stowage_plugin* plugin() { return stowage::Registry::global().load("storage", "http"); }

// The registry's own instance for a URL's scheme, with the default options.
sdk::Storage storage_for(const std::string& url) {
  auto b = stowage::Registry::global().storage(url);
  return sdk::Storage(b.vtable, b.handle, b.capabilities);
}

// An instance of its own with `options` (the registry opens one instance per
// scheme, with the defaults: the tests of retries and timeouts need other
// ones), through the vtable the registry loaded, closed at scope exit.
class Backend {
 public:
  explicit Backend(const std::string& options) {
    vt_ = static_cast<const stowage_storage_vtable*>(plugin()->vtable);
    stowage_error e{};
    int rc =
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
std::string text_of(const sdk::Bytes& b) { return std::string(b.text()); }

// The two ways the backend sends a GET (plugins/storage/http/http_storage.cpp): on
// connections of its own, bodies received in place (direct_get.hpp, the
// default for plain http), and through libcurl's transfer (https, proxies,
// and what the first declines). Each test of GETs runs on both.
const char* const kTransports[] = {R"({"direct": true})", R"({"direct": false})"};
// `options` with a transport's.
std::string with(const std::string& transport, const std::string& options = "{}") {
  stowage::json j = stowage::json::parse(options);
  j.update(stowage::json::parse(transport));
  return j.dump();
}

// Runs `check` once per transport, on a backend of its own with `options`.
template <class Check>
void on_each_transport(const std::string& options, Check&& check) {
  for (const std::string transport : kTransports) {
    CAPTURE(transport);
    Backend backend(with(transport, options));
    check(backend.storage());
  }
}

constexpr size_t kBig = 5 * 1000 * 1000 + 7;  // 5 MB and a ragged end

// The files every test serves: sizes 0, 1 and 5 MB, and a tree.
struct Files {
  std::string empty, one = "x", big = random_bytes(kBig, 1), inner = random_bytes(70000, 2);
  explicit Files(const test::fs::path& root) {
    test::fs::create_directories(root / "sub" / "deeper");
    test::fs::create_directories(root / "forbidden");
    test::write_file(root / "empty.bin", empty);
    test::write_file(root / "one.bin", one);
    test::write_file(root / "big.bin", big);
    test::write_file(root / "sub" / "inner.bin", inner);
    test::write_file(root / "sub" / "deeper" / "leaf", "leaf");
    test::write_file(root / "forbidden" / "one.bin", one);
  }
};

// Reads a file in 64 KiB read_into calls, chunk i by thread i % threads.
std::string read_in_chunks(const sdk::Storage& s, const std::string& url, size_t size,
                           int threads) {
  constexpr size_t kChunk = 64 * 1024;
  std::string out(size, '\0');
  size_t chunks = (size + kChunk - 1) / kChunk;
  std::vector<std::string> errors(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (size_t i = t; i < chunks; i += threads) {
          uint64_t want = std::min(kChunk, size - i * kChunk);
          s.read_exact(url, i * kChunk, &out[i * kChunk], want);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (std::thread& t : pool) t.join();
  for (const std::string& e : errors) CHECK_MESSAGE(e.empty(), e);
  return out;
}

}  // namespace

// The read part of the storage conformance checks
// (tests/support/storage_conformance.hpp) against nginx serving their tree;
// the checks also find every write refused as read only.
TEST_CASE(
    "http: the storage conformance checks of the read part pass on both transports; it has no other part") {
  test::Nginx nginx;
  for (const auto& [key, bytes] : storage_conformance::read_fixture()) {
    const test::fs::path p = nginx.root() / "conformance" / "read" / key;
    test::fs::create_directories(p.parent_path());
    test::write_file(p, bytes);
  }
  on_each_transport("{}", [&](const sdk::Storage& s) {
    CHECK_FALSE((s.can_write() || s.can_rename() || s.can_lock_keys() || s.can_put_if()));
    storage_conformance::check_storage(s, nginx.url("conformance"));
    // nginx sends an ETag: the version of a file, quotes and all.
    const std::optional<sdk::Version> v = s.version(nginx.url("conformance/read/top.txt"));
    REQUIRE(v.has_value());
    CHECK(v->token.front() == '"');
    CHECK(v->token.back() == '"');
  });
  const auto* vt = static_cast<const stowage_storage_vtable*>(plugin()->vtable);
  CHECK(vt->abi == STOWAGE_STORAGE_ABI);
  CHECK(vt->write == nullptr);
  CHECK(vt->rename == nullptr);
  CHECK(vt->lock == nullptr);
  CHECK(vt->conditional == nullptr);
}

TEST_CASE("http: the plugin declares a read-only storage for http and https") {
  const stowage_plugin* p = plugin();
  CHECK(std::string(p->kind) == STOWAGE_KIND_STORAGE);
  CHECK(std::string(p->id) == "http");
  REQUIRE(p->aliases);
  CHECK(std::string(p->aliases[0]) == "https");
  CHECK(p->aliases[1] == nullptr);
  CHECK((p->capabilities & STOWAGE_CAP_READ));
  CHECK((p->capabilities & STOWAGE_CAP_LIST));
  CHECK_FALSE((p->capabilities & STOWAGE_CAP_WRITE));
  auto schema = stowage::json::parse(p->params_schema);
  for (const char* key :
       {"retries", "retry_delay_ms", "timeout_ms", "connect_timeout_ms", "direct"})
    CHECK(schema.contains(key));
  // The registry serves both schemes (any case) with this plugin.
  auto http = stowage::Registry::global().storage("http://127.0.0.1:1/x.n5");
  auto https = stowage::Registry::global().storage("HTTPS://example.org/x.n5");
  CHECK(http.vtable == p->vtable);
  CHECK(https.vtable == p->vtable);
  CHECK(http.capabilities == p->capabilities);
}

TEST_CASE("http: stat, read, read_into and list give the served files' bytes") {
  test::Nginx nginx;
  Files files(nginx.root());
  for (const std::string transport : kTransports) {
    SUBCASE(transport.c_str()) {
      Backend backend(transport);
      sdk::Storage s = backend.storage();

      SUBCASE("stat") {
        uint64_t size = 99;
        CHECK(s.kind(nginx.url("empty.bin"), &size) == STOWAGE_ENTRY_FILE);
        CHECK(size == 0);
        CHECK(s.kind(nginx.url("one.bin"), &size) == STOWAGE_ENTRY_FILE);
        CHECK(size == 1);
        CHECK(s.kind(nginx.url("big.bin"), &size) == STOWAGE_ENTRY_FILE);
        CHECK(size == kBig);
        // nginx redirects "sub" to "sub/": a directory
        CHECK(s.kind(nginx.url("sub"), &size) == STOWAGE_ENTRY_DIRECTORY);
        CHECK(size == 0);
        CHECK(s.kind(nginx.url("sub/")) == STOWAGE_ENTRY_DIRECTORY);
        CHECK(s.kind(nginx.url("sub/deeper")) == STOWAGE_ENTRY_DIRECTORY);
        CHECK(s.kind(nginx.url("")) == STOWAGE_ENTRY_DIRECTORY);
        CHECK(s.kind(nginx.url("sub/inner.bin")) == STOWAGE_ENTRY_FILE);
        CHECK(s.kind(nginx.url("nothing")) == STOWAGE_ENTRY_ABSENT);
        CHECK(s.kind(nginx.url("sub/nothing/0/0")) == STOWAGE_ENTRY_ABSENT);
      }

      SUBCASE("whole reads, kept or not") {
        CHECK(text_of(s.read(nginx.url("empty.bin"))) == files.empty);
        CHECK(text_of(s.read(nginx.url("one.bin"))) == files.one);
        CHECK(text_of(s.read(nginx.url("big.bin"))) == files.big);
        CHECK(text_of(s.map(nginx.url("big.bin"))) == files.big);
        CHECK(text_of(s.map(nginx.url("sub/inner.bin"))) == files.inner);
        CHECK(s.read_text(nginx.url("sub/deeper/leaf")) == "leaf");
      }

      SUBCASE("ranges") {
        std::string u = nginx.url("big.bin");
        CHECK(text_of(s.read(u, 12345, 1000)) == files.big.substr(12345, 1000));
        CHECK(text_of(s.read(u, 4000000)) == files.big.substr(4000000));
        CHECK(text_of(s.read(u, kBig - 10, 100)) == files.big.substr(kBig - 10));  // cut at the end
        CHECK(s.read(u, kBig, 10).size() == 0);                                    // at the end
        CHECK(s.read(u, kBig + 5, 10).size() == 0);                                // past it
        CHECK(s.read(u, 7, 0).size() == 0);
        CHECK(s.read(nginx.url("empty.bin"), 0, 10).size() == 0);
        CHECK(text_of(s.read(nginx.url("one.bin"), 0, 10)) == "x");
        CHECK(s.read(nginx.url("one.bin"), 1, 10).size() == 0);
      }

      SUBCASE("read_into") {
        char buf[16] = {0};
        uint64_t got = 99;
        CHECK(s.read_into_if_exists(nginx.url("empty.bin"), 0, buf, sizeof buf, &got));
        CHECK(got == 0);
        CHECK(s.read_into_if_exists(nginx.url("one.bin"), 0, buf, sizeof buf, &got));
        CHECK(got == 1);
        CHECK(buf[0] == 'x');
        CHECK(s.read_into_if_exists(nginx.url("big.bin"), kBig - 3, buf, sizeof buf, &got));
        CHECK(got == 3);
        CHECK(std::string(buf, 3) == files.big.substr(kBig - 3));
        CHECK(read_in_chunks(s, nginx.url("big.bin"), kBig, 1) == files.big);
      }

      SUBCASE("list") {
        CHECK(s.list(nginx.url("")) ==
              std::vector<std::string>{"big.bin", "empty.bin", "forbidden/", "one.bin", "sub/"});
        CHECK(s.list(nginx.url("sub")) == std::vector<std::string>{"deeper/", "inner.bin"});
        CHECK(s.list(nginx.url("sub/")) == std::vector<std::string>{"deeper/", "inner.bin"});
        CHECK(s.list(nginx.url("sub/deeper")) == std::vector<std::string>{"leaf"});
        Failure f = failure_of([&] { s.list(nginx.url("nothing")); });
        CHECK(f.code == STOWAGE_NOT_FOUND);
        CHECK(has(f.message, nginx.url("nothing")));
        CHECK(failure_of([&] { s.list(nginx.url("one.bin")); }).code == STOWAGE_NOT_FOUND);
      }
    }
  }
}

// A scattered read_into (parts of these sizes from offset) of `key` in
// storage `s`: the bytes, how many and the file's size.
struct Scattered {
  std::vector<std::string> parts;
  uint64_t got = 0, file_size = 0;
  bool found = false;
  bool operator==(const Scattered& o) const {
    return parts == o.parts && got == o.got && file_size == o.file_size && found == o.found;
  }
};
Scattered read_scattered(const sdk::Storage& s, const std::string& key, uint64_t offset,
                         const std::vector<size_t>& sizes) {
  Scattered r;
  for (size_t n : sizes) r.parts.push_back(std::string(n, '?'));
  std::vector<stowage_buffer> parts;
  for (std::string& p : r.parts) parts.push_back({p.data(), p.size()});
  r.file_size = 12345;
  r.found = s.read_parts_if_exists(key, offset, parts.data(), parts.size(), &r.got, &r.file_size);
  return r;
}

TEST_CASE("http: a scattered read_into equals the file backend's, in one request") {
  test::Nginx nginx;
  Files files(nginx.root());
  test::FlakyProxy counter(nginx.port());  // (misbehaves never: counts requests)
  on_each_transport("{}", [&](const sdk::Storage& web) {
    sdk::Storage local = storage_for(nginx.root().string());
    struct Case {
      const char* file;
      uint64_t offset;
      std::vector<size_t> sizes;
    };
    const Case cases[] = {
        {"big.bin", 0, {12, kBig - 12}},           // an N5 chunk: header, payload
        {"big.bin", 0, {12, kBig + 100}},          // a payload buffer larger than the file
        {"big.bin", 777, {0, 5, 0, 70000, 3, 0}},  // empty parts anywhere
        {"big.bin", kBig - 5, {3, 3, 3}},          // the end falls in the second part
        {"big.bin", kBig, {4, 4}},                 // at the end: nothing (416)
        {"big.bin", kBig + 9, {4}},                // past it
        {"sub/inner.bin", 100, {1, 1, 1, 69000}},
        {"one.bin", 0, {1, 1}},
        {"empty.bin", 0, {8, 8}},
    };
    for (const Case& c : cases) {
      CAPTURE(c.file);
      CAPTURE(c.offset);
      Scattered want = read_scattered(local, (nginx.root() / c.file).string(), c.offset, c.sizes);
      REQUIRE(want.found);
      CHECK(want.file_size == test::fs::file_size(nginx.root() / c.file));
      CHECK(read_scattered(web, nginx.url(c.file), c.offset, c.sizes) == want);
      // A server that ignores Range answers 200 with the whole file: its size from Content-Length.
      CHECK(read_scattered(web, nginx.url(std::string("norange/") + c.file), c.offset, c.sizes) ==
            want);
      // One GET, its size from the answer's headers (no HEAD after it).
      int before = counter.requests();
      CHECK(read_scattered(web, counter.url(c.file), c.offset, c.sizes) == want);
      CHECK(counter.requests() == before + 1);
    }
    // Missing: false (not an error), also when the parts hold nothing.
    CHECK_FALSE(read_scattered(web, nginx.url("nothing.bin"), 0, {4, 4}).found);
    CHECK_FALSE(read_scattered(web, nginx.url("nothing.bin"), 0, {0}).found);
    CHECK(read_scattered(web, nginx.url("big.bin"), 5, {0, 0}) ==
          read_scattered(local, (nginx.root() / "big.bin").string(), 5, {0, 0}));
  });
}

TEST_CASE("http: a truncated body in a scattered read_into is a clear error") {
  test::Nginx nginx;
  Files files(nginx.root());
  test::FlakyProxy proxy(nginx.port());
  on_each_transport(R"({"retries": 1, "retry_delay_ms": 1})", [&](const sdk::Storage& s) {
    std::string u = proxy.url("big.bin");
    proxy.misbehave(Fault::cut, 1);
    Failure f = failure_of([&] { read_scattered(s, u, 0, {12, kBig}); });
    CHECK(f.code == STOWAGE_CORRUPT);
    CHECK(f.message == u + ": truncated body: the connection closed before the body ended (" +
                           std::to_string(kBig / 2) + " of " + std::to_string(kBig) +
                           " bytes) (after 2 attempts)");
    // One cut answer in two: the retry gives the whole.
    proxy.misbehave(Fault::cut, 2);
    Scattered r = read_scattered(s, u, 0, {12, kBig});
    CHECK(r.got == kBig);
    CHECK(r.file_size == kBig);
    CHECK(r.parts[0] + r.parts[1].substr(0, kBig - 12) == files.big);
  });
}

// A server may answer a range with fewer bytes than asked. Its headers agree
// with its body (short_range), or its Content-Range still claims the whole
// range (short_length); either way the bytes that did not come must not read
// as the file's end. (Before this test, a planted bug accepting a body
// shorter than its Content-Range kept every suite green.)
TEST_CASE(
    "http: a range answered with fewer bytes than asked is a truncated body, not the file's end") {
  test::Nginx nginx;
  Files files(nginx.root());
  test::FlakyProxy proxy(nginx.port());
  on_each_transport(R"({"retries": 1, "retry_delay_ms": 1})", [&](const sdk::Storage& s) {
    const std::string u = proxy.url("big.bin");
    const std::string of_big = " (the file has " + std::to_string(kBig) + ") (after 2 attempts)";
    proxy.misbehave(Fault::short_range, 1);
    Failure f = failure_of([&] { s.read(u, 1000, 4000); });
    CHECK(f.code == STOWAGE_CORRUPT);
    CHECK(f.message ==
          u + ": truncated body: the server sent bytes 1000-2999 of the 4000 asked from byte 1000" +
              of_big);
    f = failure_of([&] { read_scattered(s, u, 0, {12, 4000}); });
    CHECK(f.code == STOWAGE_CORRUPT);
    CHECK(f.message ==
          u + ": truncated body: the server sent bytes 0-2005 of the 4012 asked from byte 0" +
              of_big);
    // Asked past the end: the server's last byte is the file's, not short.
    proxy.misbehave(Fault::none, 1);
    CHECK(text_of(s.read(u, kBig - 10, 100)) == files.big.substr(kBig - 10));

    proxy.misbehave(Fault::short_length, 1);
    f = failure_of([&] { s.read(u, 1000, 4000); });
    CHECK(f.code == STOWAGE_CORRUPT);
    CHECK(f.message == u + ": truncated body: got 2000 of 4000 bytes (after 2 attempts)");
    f = failure_of([&] { read_scattered(s, u, 0, {12, 4000}); });
    CHECK(f.code == STOWAGE_CORRUPT);
    CHECK(f.message == u + ": truncated body: got 2006 of 4012 bytes (after 2 attempts)");

    // One such answer in two: the retry gives the whole.
    for (Fault fault : {Fault::short_range, Fault::short_length}) {
      proxy.misbehave(fault, 2);
      CHECK(text_of(s.read(u, 1000, 4000)) == files.big.substr(1000, 4000));
      Scattered r = read_scattered(s, u, 0, {12, 4000});
      CHECK(r.got == 4012);
      CHECK(r.parts[0] + r.parts[1] == files.big.substr(0, 4012));
    }
    proxy.misbehave(Fault::none, 1);
  });
}

TEST_CASE("http: the pooled connections survive the server closing them") {
  test::Nginx nginx;
  Files files(nginx.root());
  // No retries: a request sent on a connection the server closed must not
  // fail (libcurl and DirectGet see the closed connection and open another).
  on_each_transport(R"({"retries": 0})", [&](const sdk::Storage& s) {
    CHECK(read_in_chunks(s, nginx.url("big.bin"), kBig, 4) ==
          files.big);  // 4 connections kept in the pool
    for (int round = 0; round < 2; ++round) {
      nginx.restart();
      CHECK(read_in_chunks(s, nginx.url("big.bin"), kBig, 4) == files.big);
      CHECK(text_of(s.read(nginx.url("sub/inner.bin"))) == files.inner);
    }
  });
}

TEST_CASE("http: a server that ignores Range still gives the right bytes") {
  test::Nginx nginx;
  Files files(nginx.root());
  on_each_transport("{}", [&](const sdk::Storage& s) {
    std::string u = nginx.url("norange/big.bin");
    uint64_t size = 0;
    CHECK(s.kind(u, &size) == STOWAGE_ENTRY_FILE);
    CHECK(size == kBig);
    CHECK(text_of(s.read(u, 12345, 1000)) == files.big.substr(12345, 1000));
    CHECK(text_of(s.read(u, 4000000)) == files.big.substr(4000000));
    CHECK(text_of(s.read(u, kBig - 10, 100)) == files.big.substr(kBig - 10));
    CHECK(s.read(u, kBig + 5, 10).size() == 0);
    CHECK(text_of(s.read(u)) == files.big);
    CHECK(read_in_chunks(s, u, kBig, 2) == files.big);
  });
}

TEST_CASE("http: a server that refuses HEAD still tells sizes") {
  test::Nginx nginx;
  Files files(nginx.root());
  on_each_transport("{}", [&](const sdk::Storage& s) {
    uint64_t size = 0;
    CHECK(s.kind(nginx.url("nohead/big.bin"), &size) == STOWAGE_ENTRY_FILE);
    CHECK(size == kBig);
    CHECK(s.kind(nginx.url("nohead/empty.bin"), &size) == STOWAGE_ENTRY_FILE);
    CHECK(size == 0);
    CHECK(text_of(s.read(nginx.url("nohead/one.bin"))) == files.one);
  });
}

TEST_CASE("http: 404, 403 and writes are errors naming the URL") {
  test::Nginx nginx;
  Files files(nginx.root());
  on_each_transport("{}", [&](const sdk::Storage& s) {
    std::string missing = nginx.url("sub/missing.bin");
    Failure f = failure_of([&] { s.read(missing); });
    CHECK(f.code == STOWAGE_NOT_FOUND);
    CHECK(f.message == missing + ": no such file (HTTP 404)");
    f = failure_of([&] { s.read_exact(missing, 0, nullptr, 0); });
    CHECK(f.code == STOWAGE_NOT_FOUND);
    CHECK(has(f.message, missing));
    char buf[4];
    uint64_t got = 0;
    CHECK_FALSE(s.read_into_if_exists(missing, 0, buf, sizeof buf, &got));
    CHECK_FALSE(s.read_if_exists(missing).has_value());

    f = failure_of([&] { s.read(nginx.url("sub")); });
    CHECK(f.code == STOWAGE_IO);
    CHECK(f.message == nginx.url("sub") + ": is a directory, not a file");
    f = failure_of([&] { s.read_exact(nginx.url("sub"), 0, buf, 2); });
    CHECK(f.code == STOWAGE_IO);

    std::string denied = nginx.url("forbidden/one.bin");
    for (auto op : {+[](const sdk::Storage& st, const std::string& u) { st.read(u); },
                    +[](const sdk::Storage& st, const std::string& u) { st.kind(u); }}) {
      f = failure_of([&] { op(s, denied); });
      CHECK(f.code == STOWAGE_IO);
      CHECK(has(f.message, denied + ": HTTP 403 Forbidden"));
    }
    // A file nginx cannot open: 403 too (root opens anything, so only as a user).
    if (::geteuid() != 0) {
      test::write_file(nginx.root() / "secret.bin", "s");
      ::chmod((nginx.root() / "secret.bin").c_str(), 0);
      f = failure_of([&] { s.read(nginx.url("secret.bin")); });
      CHECK(f.code == STOWAGE_IO);
      CHECK(has(f.message, nginx.url("secret.bin") + ": HTTP 403 Forbidden"));
    }

    std::string u = nginx.url("new.bin");
    for (auto op : {+[](const sdk::Storage& st, const std::string& k) { st.write(k, "abc"); },
                    +[](const sdk::Storage& st, const std::string& k) { st.make_directory(k); },
                    +[](const sdk::Storage& st, const std::string& k) { st.stage_directory(k); },
                    +[](const sdk::Storage& st, const std::string& k) { st.remove(k); }}) {
      f = failure_of([&] { op(s, u); });
      CHECK(f.code == STOWAGE_UNSUPPORTED);
      CHECK(has(f.message, u + ": "));
      CHECK(has(f.message, "read only"));
    }
    CHECK_FALSE(test::fs::exists(nginx.root() / "new.bin"));
  });
}

TEST_CASE("http: a server that is not there, and bad options") {
  on_each_transport(R"({"retries": 1, "retry_delay_ms": 1})", [&](const sdk::Storage& s) {
    std::string u =
        "http://127.0.0.1:" + std::to_string(test::free_port()) + "/x.n5/attributes.json";
    Failure f = failure_of([&] { s.read(u); });
    CHECK(f.code == STOWAGE_IO);
    CHECK(has(f.message, u + ": "));
    CHECK(has(f.message, "(after 2 attempts)"));

    for (const char* bad :
         {R"({"retries": -1})", R"({"timeout_ms": "soon"})", R"({"retry": 3})", "[1]"}) {
      CAPTURE(bad);
      stowage_storage_handle h = nullptr;
      stowage_error e{};
      auto vt = static_cast<const stowage_storage_vtable*>(plugin()->vtable);
      CHECK(vt->open(nullptr, bad, std::strlen(bad), &h, &e) == STOWAGE_INVALID_ARGUMENT);
      CHECK(has(e.message, "http storage"));
    }
  });
}

TEST_CASE("http: a flaky server still gives the right bytes through retries") {
  test::Nginx nginx;
  Files files(nginx.root());
  test::FlakyProxy proxy(nginx.port());
  on_each_transport(
      R"({"retries": 8, "retry_delay_ms": 1, "timeout_ms": 1000})", [&](const sdk::Storage& s) {
        std::string u = proxy.url("big.bin");

        for (Fault fault : {Fault::drop, Fault::status, Fault::cut, Fault::stall}) {
          CAPTURE(static_cast<int>(fault));
          // Every third request fails, far more than any real server. (Not every
          // second: stat of "sub" takes two requests, "sub" and its redirect to
          // "sub/", so one of them would always fail.)
          proxy.misbehave(fault, 3);
          int before = proxy.faults();
          uint64_t size = 0;
          CHECK(s.kind(u, &size) == STOWAGE_ENTRY_FILE);
          CHECK(size == kBig);
          CHECK(s.kind(proxy.url("sub")) == STOWAGE_ENTRY_DIRECTORY);
          CHECK(s.kind(proxy.url("nothing")) == STOWAGE_ENTRY_ABSENT);
          CHECK(text_of(s.read(u)) == files.big);
          CHECK(text_of(s.read(u, 777, 100000)) == files.big.substr(777, 100000));
          CHECK(s.list(proxy.url("sub")) == std::vector<std::string>{"deeper/", "inner.bin"});
          // 8 threads take request numbers in no fixed order: a chunk fails all 9
          // attempts with a chance of (1/7)^9.
          proxy.misbehave(fault, 7);
          if (fault != Fault::stall) CHECK(read_in_chunks(s, u, kBig, 8) == files.big);
          CHECK(proxy.faults() > before + 2);
        }
      });
}

TEST_CASE("http: failures that outlast the retries are clear errors") {
  test::Nginx nginx;
  Files files(nginx.root());
  test::FlakyProxy proxy(nginx.port());
  on_each_transport(R"({"retries": 2, "retry_delay_ms": 1, "timeout_ms": 300})",
                    [&](const sdk::Storage& s) {
                      std::string u = proxy.url("big.bin");
                      char buf[100];
                      uint64_t got = 0;

                      proxy.misbehave(Fault::cut, 1);
                      Failure f = failure_of([&] { s.read(u); });
                      CHECK(f.code == STOWAGE_CORRUPT);
                      CHECK(has(f.message, u + ": truncated body"));
                      CHECK(has(f.message, "(after 3 attempts)"));
                      f = failure_of([&] { s.read_into_if_exists(u, 10, buf, sizeof buf, &got); });
                      CHECK(f.code == STOWAGE_CORRUPT);
                      CHECK(has(f.message, u + ": truncated body"));

                      proxy.misbehave(Fault::status, 1);
                      f = failure_of([&] { s.read(u, 0, 10); });
                      CHECK(f.code == STOWAGE_IO);
                      CHECK(f.message == u + ": HTTP 503 Service Unavailable (after 3 attempts)");
                      f = failure_of([&] { s.kind(u); });
                      CHECK(f.code == STOWAGE_IO);
                      CHECK(has(f.message, "503"));

                      proxy.misbehave(Fault::drop, 1);
                      f = failure_of([&] { s.read(u, 0, 10); });
                      CHECK(f.code == STOWAGE_IO);
                      CHECK(has(f.message, u + ": "));

                      proxy.misbehave(Fault::stall, 1);
                      f = failure_of([&] { s.read(u, 0, 10); });
                      CHECK(f.code == STOWAGE_IO);
                      CHECK(has(f.message, u + ": "));
                      CHECK(has(f.message, "timed out"));

                      proxy.misbehave(Fault::none, 1);
                      CHECK(text_of(s.read(u, 0, 10)) == files.big.substr(0, 10));
                    });
}

TEST_CASE(
    "http: answers of unknown length and redirects give the same bytes (libcurl takes them over)") {
  test::Nginx nginx;
  Files files(nginx.root());
  test::FlakyProxy counter(nginx.port());  // (misbehaves never: counts requests)
  for (const std::string transport : kTransports) {
    CAPTURE(transport);
    Backend backend(transport);
    sdk::Storage s = backend.storage();
    // /chunked/ answers 200 with the whole file in chunks, no Content-Length.
    // (It tells no file's size, which a scattered read asks for: read_into.)
    for (std::string file : {"big.bin", "one.bin", "empty.bin", "sub/inner.bin"}) {
      CAPTURE(file);
      std::string u = nginx.url("chunked/" + file);
      std::string want = test::read_file(nginx.root() / file);
      CHECK(text_of(s.read(u)) == want);
      CHECK(text_of(s.read(u, 3, 5000)) == want.substr(std::min<size_t>(3, want.size()), 5000));
      std::string buf(5000, '?');
      uint64_t got = 0;
      CHECK(s.read_into_if_exists(u, 3, buf.data(), buf.size(), &got));
      CHECK(buf.substr(0, got) == want.substr(std::min<size_t>(3, want.size()), 5000));
    }
    // DirectGet sends a request libcurl then sends again: two, where
    // libcurl's transfer alone sends one.
    int before = counter.requests();
    CHECK(text_of(s.read(counter.url("chunked/sub/inner.bin"))) == files.inner);
    CHECK(counter.requests() == before + (transport == kTransports[0] ? 2 : 1));
    // A redirect: "sub" to "sub/", which is a directory.
    Failure f = failure_of([&] { s.read(nginx.url("sub")); });
    CHECK(f.message == nginx.url("sub") + ": is a directory, not a file");
  }
}

TEST_CASE("http: 8 threads read one backend at once") {
  test::Nginx nginx;
  Files files(nginx.root());
  on_each_transport("{}", [&](const sdk::Storage& s) {
    for (int round = 0; round < 3; ++round)
      CHECK(read_in_chunks(s, nginx.url("big.bin"), kBig, 8) == files.big);
  });
}
