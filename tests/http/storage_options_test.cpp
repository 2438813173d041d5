// Storage options from every entry point reach the backend: Store::open's
// {"storage": {...}}, stowage-info --storage-option, stowage-convert
// --source-storage-option and Python's storage_options. A proxy that never
// answers shows they are used: with {"retries": 1, "timeout_ms": 200} the
// open fails "(after 2 attempts)", timed out (the defaults would wait 60 s
// five times). An unknown option or a bad value is refused naming the valid
// ones; a secret's value is never shown.
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "tools.hpp"

#include <stowage/copy.hpp>
#include <stowage/stowage.hpp>

#include <doctest/doctest.h>

namespace {

namespace fs = std::filesystem;
using Fault = test::FlakyProxy::Fault;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// nginx serving N5's java-style container, a stalling proxy in front of it.
struct Stalled {
  test::Nginx nginx;
  test::FlakyProxy proxy{nginx.port()};
  std::string url;
  Stalled() {
    fs::create_directory_symlink(fs::absolute(test::fixtures() / "n5"), nginx.root() / "n5");
    url = proxy.url("n5/java-style.n5");
    proxy.misbehave(Fault::stall, 1);
  }
};

const stowage::json kQuick = {{"retries", 1}, {"retry_delay_ms", 1}, {"timeout_ms", 200}};

std::string message_of(const std::function<void()>& f, stowage::ErrorCode want) {
  try {
    f();
  } catch (const stowage::Error& e) {
    CHECK(e.code() == want);
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace

TEST_CASE("storage options: Store::open's \"storage\" object reaches the http backend") {
  Stalled s;
  const std::string m = message_of(
      [&] { stowage::Store::open(s.url, stowage::Mode::read, "n5", {{"storage", kQuick}}); },
      stowage::ErrorCode::io);
  CHECK_MESSAGE(has(m, "(after 2 attempts)"), m);
  CHECK_MESSAGE(has(m, "timed out"), m);
  CHECK_MESSAGE(has(m, s.url), m);
  // Unstalled, the same options read the container (and the format plugin
  // never sees them: N5 would refuse an open option it does not declare).
  s.proxy.misbehave(Fault::none, 1);
  stowage::Store store =
      stowage::Store::open(s.url, stowage::Mode::read, "", {{"storage", kQuick}});
  CHECK(store.format() == "n5");
  CHECK_FALSE(store.list("").empty());
}

TEST_CASE("storage options: an unknown option or a bad value is refused naming the valid ones") {
  test::Nginx nginx;
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx.port()) + "/x.n5";
  std::string m = message_of(
      [&] { stowage::Store::open(url, stowage::Mode::read, "n5", {{"storage", {{"bogus", 1}}}}); },
      stowage::ErrorCode::invalid_argument);
  CHECK_MESSAGE(has(m, url + ": http storage option 'bogus': no such option"), m);
  for (const char* valid : {"retries", "retry_delay_ms", "timeout_ms", "connect_timeout_ms"})
    CHECK_MESSAGE(has(m, valid), m);
  m = message_of(
      [&] {
        stowage::Store::open(url, stowage::Mode::read, "n5",
                             {{"storage", {{"timeout_ms", "soon"}}}});
      },
      stowage::ErrorCode::invalid_argument);
  CHECK_MESSAGE(has(m, "timeout_ms=\"soon\": it takes an integer from 0 to 86400000"), m);
  // A path's storage (file) declares none.
  test::TempDir tmp;
  m = message_of(
      [&] {
        stowage::Store::open((tmp / "x.n5").string(), stowage::Mode::read, "n5",
                             {{"storage", {{"timeout_ms", 5}}}});
      },
      stowage::ErrorCode::invalid_argument);
  CHECK_MESSAGE(has(m, "file storage option 'timeout_ms': no such option; its options: none"), m);
}

TEST_CASE("storage options: stowage-info and stowage-convert take them, each side its own") {
  Stalled s;
  const std::string quick =
      " --storage-option retries=1 --storage-option retry_delay_ms=1 --storage-option "
      "timeout_ms=200 ";
  test::RunResult r =
      test::run(test::quote(test::tool("stowage-info").string()) + quick + test::quote(s.url));
  CHECK(r.status == 1);
  CHECK_MESSAGE(has(r.output, "(after 2 attempts)"), r.output);
  r = test::run(test::quote(test::tool("stowage-info").string()) + " --storage-option bogus=1 " +
                test::quote(s.url));
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.output, "option 'bogus'"), r.output);
  r = test::run(test::quote(test::tool("stowage-info").string()) + " --storage-option " +
                test::quote("s3cr3t-token") + " " + test::quote(s.url));
  CHECK(r.status == 2);
  CHECK_MESSAGE(!has(r.output, "s3cr3t-token"), r.output);  // a value pasted alone is not echoed

  test::TempDir tmp;
  const std::string convert = test::quote(test::tool("stowage-convert").string()) + " --quiet ";
  const std::string out = test::quote((tmp / "out.zarr").string());
  r = test::run(convert + test::replace_all(quick, "--storage-option", "--source-storage-option") +
                test::quote(s.url) + " " + out);
  CHECK(r.status == 1);
  CHECK_MESSAGE(has(r.output, "(after 2 attempts)"), r.output);
  // The destination's options are the destination backend's: a path's takes none.
  r = test::run(convert + "--destination-storage-option timeout_ms=5 " + test::quote(s.url) + " " +
                out);
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.output, "file storage option 'timeout_ms'"), r.output);
  CHECK_FALSE(fs::exists(tmp / "out.zarr"));
  // Unstalled, the source's options read an array of it.
  s.proxy.misbehave(Fault::none, 1);
  r = test::run(convert + test::replace_all(quick, "--storage-option", "--source-storage-option") +
                test::quote(s.url + "::raw/uint8_2d") + " " + out);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(fs::exists(tmp / "out.zarr"));
}

TEST_CASE("storage options: Python's storage_options, in open and convert") {
  if (!test::python_package()) return;  // (under sanitizers: the python suite is left out too)
  Stalled s;
  test::TempDir tmp;
  const test::RunResult r = test::run_python(
      "import stowage, sys\n"
      "url, out = sys.argv[1], sys.argv[2]\n"
      "quick = {'retries': 1, 'retry_delay_ms': 1, 'timeout_ms': 200}\n"
      "try:\n"
      "    stowage.open(url, storage_options=quick)\n"
      "    print('opened')\n"
      "except stowage.Error as e:\n"
      "    print('open:', e)\n"
      "try:\n"
      "    stowage.open(url, storage_options={'bogus': 1})\n"
      "except ValueError as e:\n"
      "    print('bogus:', e)\n"
      "try:\n"
      "    stowage.convert(url, out, source_storage_options=quick)\n"
      "except stowage.Error as e:\n"
      "    print('convert:', e)\n",
      test::quote(s.url) + " " + test::quote((tmp / "out.zarr").string()));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK_MESSAGE(has(r.output, "open: " + s.url), r.output);
  CHECK_MESSAGE(has(r.output, "(after 2 attempts)"), r.output);
  CHECK_MESSAGE(has(r.output, "bogus: " + s.url + ": http storage option 'bogus'"), r.output);
  CHECK_MESSAGE(has(r.output, "convert: "), r.output);
  CHECK_FALSE(has(r.output, "opened"));
}
