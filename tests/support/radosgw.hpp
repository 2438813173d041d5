// A private S3 server for a test: Ceph's radosgw on a one-node cluster (a
// monitor and one in-memory OSD), started by tests/support/radosgw.py in a
// temp dir of its own and stopped, by the PIDs it recorded there, when the
// object dies (also when a check fails). The Python tests use the same script
// (tests/python/test_radosgw.py); tests/support/README.md says what radosgw
// Pacific does and does not do for an S3 client.
//
//   test::RadosGW s3;  // about 1-2 s
//   s3.endpoint();     // "http://127.0.0.1:PORT", path-style buckets
//   s3.access_key(), s3.secret_key(), s3.region()
//
// If the test process dies without unwinding, a watcher process radosgw.py
// started stops the daemons within a second.
#pragma once

#include "test_support.hpp"

#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace test {

class RadosGW {
 public:
  RadosGW() {
    // --owner: if this process dies without unwinding, radosgw.py's watcher stops the daemons
    RunResult r = run(python() + " " + quote(script().string()) + " start " +
                      quote(dir_.path().string()) + " --owner " + std::to_string(::getpid()));
    if (r.status != 0) {
      stop();  // radosgw.py stops what it started on failure; this is for a CLI that died
      throw std::runtime_error("radosgw did not start (" + script().string() + "):\n" + r.output);
    }
    try {
      parse(r.output);
    } catch (...) {  // no destructor runs for an object whose constructor throws
      stop();
      throw;
    }
  }
  ~RadosGW() { stop(); }
  RadosGW(const RadosGW&) = delete;
  RadosGW& operator=(const RadosGW&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  const std::string& access_key() const { return access_key_; }
  const std::string& secret_key() const { return secret_key_; }
  const std::string& region() const { return region_; }
  // The monitor's, the OSD's and radosgw's (not the watcher's), for a test that checks they
  // are gone.
  const std::vector<int>& pids() const { return pids_; }
  // Where the config, the logs (dir()/"log") and the data are.
  const fs::path& dir() const { return dir_.path(); }
  double start_seconds() const { return seconds_; }

  // Stops the daemons (SIGTERM, SIGKILL after a bounded wait); idempotent.
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    run(python() + " " + quote(script().string()) + " stop " + quote(dir_.path().string()));
  }

 private:
  static fs::path script() { return source_root() / "tests" / "support" / "radosgw.py"; }

  // The CLI's stdout is one JSON line, its last; the Ceph tools' stderr may come before it.
  void parse(const std::string& output) {
    std::string line = output;
    while (!line.empty() && line.back() == '\n') line.pop_back();
    line = line.substr(line.rfind('\n') + 1);  // npos + 1 == 0: the whole text
    stowage::json j = stowage::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("endpoint"))
      throw std::runtime_error("radosgw.py start printed no JSON line:\n" + output);
    endpoint_ = j.at("endpoint").get<std::string>();
    access_key_ = j.at("access_key").get<std::string>();
    secret_key_ = j.at("secret_key").get<std::string>();
    region_ = j.at("region").get<std::string>();
    pids_ = j.at("pids").get<std::vector<int>>();
    seconds_ = j.at("seconds").get<double>();
  }

  TempDir dir_;  // first member: removed after stop() in the destructor has ended the daemons
  bool stopped_ = false;
  std::string endpoint_, access_key_, secret_key_, region_;
  std::vector<int> pids_;
  double seconds_ = 0;
};

}  // namespace test
