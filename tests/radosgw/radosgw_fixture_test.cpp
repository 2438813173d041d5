// tests/support/radosgw.hpp: the C++ face of the radosgw fixture starts a real
// S3 server, says where it is, and leaves no daemon behind. (What the server
// does as S3 is tests/python/test_radosgw.py's job, with boto3.)
#include "radosgw.hpp"
#include "test_support.hpp"

#include <signal.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

// A process that exists and is no zombie (the daemons are radosgw.py's children, not ours).
bool running(int pid) {
  std::string stat;
  try {
    stat = test::read_file("/proc/" + std::to_string(pid) + "/stat");
  } catch (...) {
    return false;
  }
  auto paren = stat.rfind(')');
  return !stat.empty() && paren != std::string::npos && stat.substr(paren + 2, 1) != "Z";
}

}  // namespace

TEST_CASE("radosgw fixture: an S3 endpoint on 127.0.0.1 with keys, and nothing left after") {
  std::vector<int> pids;
  {
    test::RadosGW s3;
    INFO("started in " << s3.start_seconds() << " s, logs in " << s3.dir());
    CHECK(s3.endpoint().rfind("http://127.0.0.1:", 0) == 0);
    CHECK(s3.access_key().size() == 20);
    CHECK(s3.secret_key().size() == 40);
    CHECK(s3.region() == "us-east-1");
    REQUIRE(s3.pids().size() == 3);
    for (int pid : s3.pids()) CHECK(running(pid));
    pids = s3.pids();
    // A signed request with the keys (radosgw.py's own signer): the user exists.
    test::RunResult r = test::run_python(
        "import json, sys\nsys.path.insert(0, sys.argv[1])\nimport radosgw\n"
        "info = json.load(open(sys.argv[2]))\nprint(radosgw.s3_request(info)[0])\n",
        test::quote((test::source_root() / "tests" / "support").string()) + " " +
            test::quote((s3.dir() / "radosgw.json").string()));
    CHECK_MESSAGE(r.output == "200\n", r.output);
  }
  for (int pid : pids) CHECK_MESSAGE(!running(pid), "pid " << pid << " survived the fixture");
}
