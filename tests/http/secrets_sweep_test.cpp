// No secret in any message: every entry point (Store::open, stowage-info
// --json, stowage-convert, Python's stowage.open) is driven into failing
// requests with secrets planted in every place one can go (a URL's password,
// bearer_token, an Authorization and a Cookie header, the password option),
// and what each shows (the error, its standard output and error, the log at
// debug level) must hold none of them. The failures: 401 (a wrong token, a
// wrong login), 403, 404, a refused connection, a server that stalls (a
// tiny timeout), and a secret option's value of the wrong type.
// A broken STOWAGE_HTTP_OPTIONS or STOWAGE_S3_OPTIONS is not echoed either.
// (tests/python/test_radosgw.py sweeps the s3 backend's secrets the same way.)
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "tools.hpp"

#include <stowage/stowage.hpp>

#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;
using test::Nginx;

const char* const kSecrets[] = {"planted-url-pa55", "planted-bearer-t0k", "planted-header-t0k",
                                "planted-c00kie", "planted-opt-pa55"};

// One failing open: where, with which storage options.
struct Case {
  std::string name;
  std::string url;
  json options;
};

// "http://host/..." with "user:<URL password>@" in it.
std::string with_login(const std::string& url) {
  return "http://reader:" + std::string(kSecrets[0]) + "@" + url.substr(7);
}

json secrets_in_options(json options) {
  options["retries"] = 0;
  options["bearer_token"] = kSecrets[1];
  options["password"] = kSecrets[4];
  options["username"] = "reader";
  return options;
}

std::vector<Case> cases(const Nginx& nginx, const test::FlakyProxy& stalled) {
  const json quick = secrets_in_options(json::object());
  const json headers = {{"retries", 0},
                        {"headers",
                         {{"Authorization", std::string("Bearer ") + kSecrets[2]},
                          {"Cookie", std::string("session=") + kSecrets[3]}}}};
  json stall = quick;
  stall["timeout_ms"] = 200;
  return {
      {"401 token", with_login(nginx.url("bearer/n5/java-style.n5")), quick},
      {"401 headers", with_login(nginx.url("bearer/n5/java-style.n5")), headers},
      {"401 login", with_login(nginx.url("basic/n5/java-style.n5")), quick},
      {"403", with_login(nginx.url("forbidden/n5/java-style.n5")), quick},
      {"404", with_login(nginx.url("no/such.n5")), headers},
      {"refused", with_login("http://127.0.0.1:" + std::to_string(test::free_port()) + "/x.n5"),
       quick},
      {"stalled", with_login(stalled.url("n5/java-style.n5")), stall},
      {"bad value",
       nginx.url("n5/java-style.n5"),
       {{"headers", std::string("Authorization: Bearer ") + kSecrets[2]}}},
  };
}

// The texts of a failed Store::open: its error and whatever the plugins logged.
std::vector<std::string> in_process(const Case& c) {
  std::vector<std::string> texts;
  std::mutex m;
  stowage::Registry::global().set_log_sink([&](int, std::string_view message) {
    std::lock_guard<std::mutex> lock(m);
    texts.emplace_back(message);
  });
  try {
    stowage::Store::open(c.url, stowage::Mode::read, "", {{"storage", c.options}});
    texts.push_back("(opened)");
  } catch (const std::exception& e) {
    texts.push_back(e.what());
  }
  stowage::Registry::global().set_log_sink(nullptr);
  return texts;
}

// " --FLAG key=value ..." for the tools.
std::string tool_options(const char* flag, const json& options) {
  std::string args;
  for (const auto& [key, value] : options.items())
    args += std::string(" ") + flag + " " +
            test::quote(key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  return args;
}

std::string tools(const Case& c, const fs::path& tmp) {
  const std::string env = "STOWAGE_LOG=debug ";
  test::RunResult info =
      test::run(env + test::quote(test::tool("stowage-info").string()) + " --json" +
                tool_options("--storage-option", c.options) + " " + test::quote(c.url));
  CHECK_MESSAGE(info.status != 0, info.output);
  test::RunResult convert =
      test::run(env + test::quote(test::tool("stowage-convert").string()) + " --quiet" +
                tool_options("--source-storage-option", c.options) + " " + test::quote(c.url) +
                " " + test::quote((tmp / (c.name + ".zarr")).string()));
  CHECK_MESSAGE(convert.status != 0, convert.output);
  return info.output + "\n" + convert.output;
}

std::string python(const Case& c) {
  if (!test::python_package()) return "";  // (under sanitizers: the python suite is left out)
  const test::RunResult r = test::run_python(
      "import json, logging, stowage, sys\n"
      "logging.basicConfig(level=logging.DEBUG)\n"
      "try:\n"
      "    stowage.open(sys.argv[1], storage_options=json.loads(sys.argv[2]))\n"
      "    print('opened')\n"
      "except Exception as e:\n"
      "    print(type(e).__name__, e, repr(e))\n",
      test::quote(c.url) + " " + test::quote(c.options.dump()));
  CHECK_MESSAGE(r.output.find("opened") == std::string::npos, r.output);
  return r.output;
}

void check_clean(const Case& c, const std::string& where, const std::string& text) {
  for (const char* secret : kSecrets)
    CHECK_MESSAGE(text.find(secret) == std::string::npos,
                  c.name << ", " << where << " shows " << std::string(secret) << ": " << text);
}

}  // namespace

TEST_CASE("secrets: no entry point shows a planted secret in any failure") {
  Nginx nginx;
  fs::create_directory_symlink(fs::absolute(test::fixtures() / "n5"), nginx.root() / "n5");
  test::FlakyProxy stalled(nginx.port());
  stalled.misbehave(test::FlakyProxy::Fault::stall, 1);
  test::TempDir tmp;
  for (const Case& c : cases(nginx, stalled)) {
    CAPTURE(c.name);
    const std::vector<std::string> texts = in_process(c);
    REQUIRE(!texts.empty());
    CHECK_MESSAGE(texts.back() != "(opened)", c.name);
    // Not vacuous: the failure names where it was (its password as ***).
    CHECK_MESSAGE(texts.back().find("127.0.0.1") != std::string::npos, texts.back());
    for (const std::string& t : texts) check_clean(c, "Store::open", t);
    check_clean(c, "the tools", tools(c, tmp.path()));
    check_clean(c, "python", python(c));
  }
}

TEST_CASE("secrets: options from the environment that are no JSON object are not shown") {
  Nginx nginx;
  for (const auto& [variable, url] :
       {std::pair<std::string, std::string>{"STOWAGE_HTTP_OPTIONS", nginx.url("x.n5")},
        {"STOWAGE_S3_OPTIONS", "s3://bucket/x.n5"}}) {
    const std::string broken = std::string("{\"bearer_token\": \"") + kSecrets[1] + "\"";
    const test::RunResult r =
        test::run(variable + "=" + test::quote(broken) + " " +
                  test::quote(test::tool("stowage-info").string()) + " " + test::quote(url));
    CHECK_MESSAGE(r.status != 0, r.output);
    CHECK_MESSAGE(r.output.find(variable + " must be a JSON object") != std::string::npos,
                  r.output);
    CHECK_MESSAGE(r.output.find(kSecrets[1]) == std::string::npos, r.output);
  }
}
