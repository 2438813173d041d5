// Whole-volume reads and writes through the s3 backend against Ceph's radosgw
// on loopback, beside boto3, stowage's http backend on nginx and the server's
// limit, in the same run (issue 33: reads and writes >= 1.5x boto3, reads
// >= 0.8 of the http read).
//
//   s3_bench [RUNS] [THREADS] [CODECS] [split]   (default: 5 runs, 8 threads, raw,zstd)
//   split: this process and boto3 on CPU 0, radosgw, its OSD and monitor and nginx on CPU 1
//
// A private radosgw (tests/support/radosgw.hpp: a monitor, one memstore OSD,
// radosgw) and a private nginx (tests/http/nginx.hpp). The volume is bench/n5's,
// 256x512x512 uint16 (128 MiB) in 64^3 chunks, an N5 dataset (256 chunk
// objects), once per codec. Each round, for each codec, every row once in a
// row (rows interleaved round by round, as the machine drifts):
//   read  s3 n5 whole read     Store::open("s3://bench/r-CODEC/vol.n5").array("vol").read
//         http n5 whole read   the same N5 files, served by nginx, read over http
//         s3 objects           the s3 backend alone: every chunk object read whole
//         http files           the http backend alone: every chunk file read whole
//         boto3 GETs           the same chunk objects, boto3, a pool of THREADS
//         limit GETs           raw_http.hpp: presigned GETs on plain sockets
//   write s3 n5 whole write    a new N5 dataset written whole to a new prefix
//         s3 objects           the s3 backend alone: every chunk object put
//         boto3 PUTs           the same objects, boto3, a pool of THREADS
//         limit PUTs           presigned PUTs on plain sockets
// Each row gives the volume's 128 MiB over its wall time (so rows compare as
// times, for zstd too), and the CPU seconds over it of the client (this
// process, or boto3's), radosgw, the OSD and nginx (/proc/PID/stat utime +
// stime): which side is busy. Median and range of RUNS rounds.
//
// The figures and what they say: RESULTS.md.
#define DOCTEST_CONFIG_IMPLEMENT
#include "nginx.hpp"
#include "radosgw.hpp"

#include <stowage/storage.hpp>
#include <stowage/stowage.hpp>
#include <sched.h>  // sched_setaffinity
#include <sys/resource.h>

#include "n5_volume.hpp"
#include "raw_http.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

namespace sdk = stowage::sdk;
namespace fs = std::filesystem;
using stowage::json;

namespace {

constexpr double kMiB = 1 << 20;
const char* const kBucket = "bench";

// CPU seconds (user + system, every thread) a process has used so far.
double cpu_of(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream rest(s.substr(s.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i >= 14) ticks += std::stod(field);  // fields 14 utime, 15 stime
  return ticks / double(::sysconf(_SC_CLK_TCK));
}

double own_cpu() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return double(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// nginx's master and its workers, asked each time: they may not be forked yet when nginx
// is first asked for.
std::vector<int> nginx_pids(int master) {
  std::vector<int> pids{master};
  std::ifstream f("/proc/" + std::to_string(master) + "/task/" + std::to_string(master) +
                  "/children");
  for (int pid; f >> pid;) pids.push_back(pid);
  return pids;
}

// One row's figures for one round.
struct Sample {
  double wall = 0, client = 0, rgw = 0, osd = 0, nginx = 0;
};

// The server processes whose CPU time each sample counts.
struct Servers {
  int rgw, osd, nginx;
  std::vector<double> now() const {
    std::vector<double> v{cpu_of(rgw), cpu_of(osd), 0};
    for (int pid : nginx_pids(nginx)) v[2] += cpu_of(pid);
    return v;
  }
};

// Runs f in this process, timed.
Sample measure(const Servers& servers, const std::function<void()>& f) {
  const std::vector<double> s0 = servers.now();
  const double c0 = own_cpu();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  Sample s;
  s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.client = own_cpu() - c0;
  const std::vector<double> s1 = servers.now();
  s.rgw = s1[0] - s0[0];
  s.osd = s1[1] - s0[1];
  s.nginx = s1[2] - s0[2];
  return s;
}

// peer_boto3.py MODE with `job` on its stdin; its JSON line.
json peer(const std::string& mode, const json& job) {
  test::TempDir tmp;
  test::write_file(tmp / "job.json", job.dump());
  const fs::path script = test::source_root() / "bench" / "s3" / "peer_boto3.py";
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " + mode +
                                " < " + test::quote((tmp / "job.json").string()));
  std::string line = r.output;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  json j = json::parse(line.substr(line.rfind('\n') + 1), nullptr, false);
  if (r.status != 0 || j.is_discarded())
    throw std::runtime_error("peer_boto3.py " + mode + " failed:\n" + r.output);
  return j;
}

// A boto3 row: its own timing and CPU, the servers' CPU over the whole call
// (its start and warm-up too: a few requests more than the row's).
Sample measure_peer(const Servers& servers, const std::string& mode, const json& job) {
  json out;
  Sample s = measure(servers, [&] { out = peer(mode, job); });
  s.wall = out["seconds"].get<double>();
  s.client = out["cpu"].get<double>();
  return s;
}

// Runs f(i) for i in [0, n) from `threads` threads, i by thread i % threads.
void on_threads(size_t n, int threads, const std::function<void(size_t, std::vector<char>&)>& f) {
  std::vector<std::thread> pool;
  std::exception_ptr failed;
  std::mutex m;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<char> buf;
      try {
        for (size_t i = t; i < n; i += threads) f(i, buf);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        failed = std::current_exception();
      }
    });
  for (std::thread& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
}

sdk::Storage storage_for(const std::string& location) {
  auto b = stowage::Registry::global().storage(location);
  return sdk::Storage(b.vtable, b.handle, b.capabilities);
}

std::string codec_json(const std::string& name) {
  return name == "raw" ? R"({"type": "raw"})" : R"({"type": "zstd", "level": 3})";
}

void write_n5(const std::string& location, const std::string& codec,
              const std::vector<uint16_t>& vol) {
  stowage::Store s = stowage::Store::open(location, stowage::Mode::truncate, "n5");
  s.create("vol", {{"kind", "array"},
                   {"dtype", "uint16"},
                   {"shape", bench::kVolumeShape},
                   {"chunks", bench::kVolumeChunks},
                   {"codec", json::parse(codec_json(codec))}});
  s.array("vol").write({0, 0, 0}, bench::kVolumeShape, vol.data());
  s.close();
}

// The path and query of a presigned URL ("http://host:port/bucket/key?X-Amz-...").
std::string target_of(const std::string& url) { return url.substr(url.find('/', 7)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Median, lowest and highest of one field over the rounds.
struct Spread {
  double med, lo, hi;
};
Spread spread(const std::vector<Sample>& rounds, double Sample::* field) {
  std::vector<double> v;
  for (const Sample& s : rounds) v.push_back(s.*field);
  return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

void print_row(const std::string& name, const std::vector<Sample>& rounds, double bytes) {
  const Spread w = spread(rounds, &Sample::wall);
  std::printf(
      "%-22s %6.0f MiB/s [%5.0f-%5.0f] | %5.2f s | client %5.2f  rgw %5.2f  osd %5.2f  nginx %5.2f\n",
      name.c_str(), bytes / kMiB / w.med, bytes / kMiB / w.hi, bytes / kMiB / w.lo, w.med,
      spread(rounds, &Sample::client).med, spread(rounds, &Sample::rgw).med,
      spread(rounds, &Sample::osd).med, spread(rounds, &Sample::nginx).med);
}

// a's time over b's, round by round: median [range] of b/a speed ratios.
void print_ratio(const std::string& name, const std::vector<Sample>& a,
                 const std::vector<Sample>& b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size(); ++i) r.push_back(b[i].wall / a[i].wall);
  std::printf("  %-40s %5.2f [%4.2f-%4.2f]\n", name.c_str(), median(r),
              *std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end()));
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// The server, and the environment the registry's s3 backend finds it by (as tests/s3 does).
void point_at(const test::RadosGW& rgw) {
  for (const char* name : {"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_NO_SIGN_REQUEST",
                           "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "STOWAGE_S3_OPTIONS"})
    unsetenv(name);
  setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
  setenv("AWS_ENDPOINT_URL", rgw.endpoint().c_str(), 1);
  setenv("AWS_ACCESS_KEY_ID", rgw.access_key().c_str(), 1);
  setenv("AWS_SECRET_ACCESS_KEY", rgw.secret_key().c_str(), 1);
  setenv("AWS_REGION", rgw.region().c_str(), 1);
}

struct Bench {
  int runs, threads;
  const test::RadosGW& rgw;
  const test::Nginx& nginx;
  Servers servers;
  std::vector<uint16_t> vol;
  json job;  // what every peer call shares

  void codec(const std::string& name) {
    const double bytes = double(vol.size()) * sizeof(uint16_t);
    const fs::path container = nginx.root() / (name + ".n5");
    write_n5(container.string(), name, vol);
    const std::string read_prefix = "r-" + name + "/vol.n5/";
    const std::string s3_root = std::string("s3://") + kBucket + "/r-" + name + "/vol.n5";
    const std::string http_root = nginx.url(name + ".n5");
    write_n5(s3_root, name, vol);

    const std::vector<std::string> rel = bench::chunk_keys(container);
    std::vector<std::string> keys, files;  // object keys; the local chunk files' bytes
    size_t stored = 0;
    for (const std::string& k : rel) {
      keys.push_back(read_prefix + k);
      files.push_back(test::read_file(container / k));
      stored += files.back().size();
    }
    json j = job;
    j["keys"] = keys;
    j["files"] = container.string();
    j["prefix_from"] = read_prefix;
    check(s3_root, http_root, j, stored);

    stowage::Array s3_array = stowage::Store::open(s3_root).array("vol");
    stowage::Array http_array = stowage::Store::open(http_root).array("vol");
    sdk::Storage s3 = storage_for(s3_root), web = storage_for(http_root);
    std::vector<uint16_t> back(vol.size(), 1);
    const int port = std::stoi(rgw.endpoint().substr(rgw.endpoint().rfind(':') + 1));
    std::map<std::string, std::vector<Sample>> rows;
    for (int r = 0; r < runs; ++r) {
      std::fprintf(stderr, "%s round %d/%d (load %s)\n", name.c_str(), r + 1, runs,
                   loadavg().c_str());
      const std::string round = std::to_string(r) + "-" + name;
      const std::string w = std::string("s3://") + kBucket + "/w" + round;
      const std::string o = std::string("s3://") + kBucket + "/o" + round;
      json p = j, l = j;  // boto3's and the limit's PUTs: new keys each round, as ours
      p["prefix_to"] = "p" + round + "/";
      l["prefix_to"] = "l" + round + "/";
      const json urls = peer("presign", l);
      std::vector<raw_http::Request> gets, puts;
      for (size_t i = 0; i < keys.size(); ++i) {
        gets.push_back({target_of(urls["get"][i].get<std::string>())});
        puts.push_back(
            {target_of(urls["put"][i].get<std::string>()), files[i].data(), files[i].size()});
      }
      const std::vector<std::pair<std::string, std::function<Sample()>>> steps = {
          {"r s3 n5",
           [&] {
             return measure(servers,
                            [&] { s3_array.read({0, 0, 0}, bench::kVolumeShape, back.data()); });
           }},
          {"r http n5",
           [&] {
             return measure(servers,
                            [&] { http_array.read({0, 0, 0}, bench::kVolumeShape, back.data()); });
           }},
          {"r s3 objects",
           [&] { return measure(servers, [&] { read_all(s3, s3_root, rel, files); }); }},
          {"r http files",
           [&] { return measure(servers, [&] { read_all(web, http_root, rel, files); }); }},
          {"r boto3", [&] { return measure_peer(servers, "get", j); }},
          {"r limit",
           [&] { return measure(servers, [&] { raw_http::run(port, "GET", gets, threads); }); }},
          {"w s3 n5",
           [&] { return measure(servers, [&] { write_n5(w + "/vol.n5", name, vol); }); }},
          {"w s3 objects",
           [&] {
             return measure(servers, [&] {
               on_threads(rel.size(), threads, [&](size_t i, std::vector<char>&) {
                 s3.write(o + "/" + rel[i], files[i].data(), files[i].size());
               });
             });
           }},
          {"w boto3", [&] { return measure_peer(servers, "put", p); }},
          {"w limit",
           [&] { return measure(servers, [&] { raw_http::run(port, "PUT", puts, threads); }); }},
      };
      // Odd rounds run the rows in the opposite order: what one row leaves the
      // server to do (or the machine's drift) falls on different rows.
      for (size_t k = 0; k < steps.size(); ++k) {
        const auto& [row, step] = steps[r % 2 ? steps.size() - 1 - k : k];
        rows[row].push_back(step());
      }
      for (const json& prefix : {p["prefix_to"], l["prefix_to"]})
        s3.remove_if_exists(std::string("s3://") + kBucket + "/" + prefix.get<std::string>());
      s3.remove_if_exists(w);
      s3.remove_if_exists(o);
    }
    if (back != vol) throw std::runtime_error("the last read differs from the volume written");

    std::printf(
        "\n%s: %zu chunk objects, %.1f MiB stored; %d threads; median [range] of %d rounds; "
        "load now %s\n",
        name.c_str(), rel.size(), stored / kMiB, threads, runs, loadavg().c_str());
    std::printf("%-22s %6s (volume over wall time) | median CPU seconds over the row\n", "", "");
    for (const char* row : {"r s3 n5", "r http n5", "r s3 objects", "r http files", "r boto3",
                            "r limit", "w s3 n5", "w s3 objects", "w boto3", "w limit"})
      print_row(row, rows[row], bytes);
    std::printf("speed ratios (median [range] of the rounds):\n");
    print_ratio("read:  s3 n5 / boto3 GETs     (>= 1.5)", rows["r s3 n5"], rows["r boto3"]);
    print_ratio("read:  s3 objects / boto3 GETs", rows["r s3 objects"], rows["r boto3"]);
    print_ratio("read:  s3 n5 / http n5        (>= 0.8)", rows["r s3 n5"], rows["r http n5"]);
    print_ratio("read:  s3 objects / http files", rows["r s3 objects"], rows["r http files"]);
    print_ratio("read:  s3 objects / limit", rows["r s3 objects"], rows["r limit"]);
    print_ratio("write: s3 n5 / boto3 PUTs     (>= 1.5)", rows["w s3 n5"], rows["w boto3"]);
    print_ratio("write: s3 objects / boto3 PUTs", rows["w s3 objects"], rows["w boto3"]);
    print_ratio("write: s3 objects / limit", rows["w s3 objects"], rows["w limit"]);
    std::fflush(stdout);
  }

  // Every chunk object read whole (its size known, as boto3's GET needs none).
  void read_all(const sdk::Storage& s, const std::string& root, const std::vector<std::string>& rel,
                const std::vector<std::string>& files) {
    on_threads(rel.size(), threads, [&](size_t i, std::vector<char>& buf) {
      buf.resize(files[i].size());
      s.read_exact(root + "/" + rel[i], 0, buf.data(), buf.size());
    });
  }

  // Both copies read back equal to the volume, and boto3 sees the bytes of the local files.
  void check(const std::string& s3_root, const std::string& http_root, const json& j,
             size_t stored) {
    std::vector<uint16_t> back(vol.size(), 1);
    for (const std::string& root : {s3_root, http_root}) {
      stowage::Store::open(root).array("vol").read({0, 0, 0}, bench::kVolumeShape, back.data());
      if (back != vol) throw std::runtime_error(root + ": read back differs from the volume");
    }
    const json got = peer("get", j);
    if (got["bytes"].get<size_t>() != stored)
      throw std::runtime_error("boto3 read " + got["bytes"].dump() + " bytes, the files hold " +
                               std::to_string(stored));
  }
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(part);
  return out;
}

// Every thread of process `pid` (and so the threads it starts later) on CPU `cpu` only.
bool pin(int pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  bool ok = true;
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task"))
    ok = ::sched_setaffinity(std::stoi(t.path().filename().string()), sizeof set, &set) == 0 && ok;
  if (!ok) std::perror("s3_bench: sched_setaffinity");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 8;
  const std::vector<std::string> codecs = split(argc > 3 ? argv[3] : "raw,zstd");
  const bool split_cpus = argc > 4 && std::string(argv[4]) == "split";
  bool bad = runs < 1 || threads < 1 || argc > 5 || (argc > 4 && !split_cpus);
  for (const std::string& c : codecs) bad = bad || (c != "raw" && c != "zstd");
  if (bad) {
    std::fprintf(stderr, "usage: s3_bench [RUNS] [THREADS] [raw,zstd] [split]\n");
    return 2;
  }
  try {
    std::fprintf(stderr, "starting radosgw and nginx (load %s)\n", loadavg().c_str());
    test::RadosGW rgw;
    point_at(rgw);
    // split: the servers on CPU 1, this process (and boto3, its child) on CPU 0, as a server
    // on another machine would have cores of its own (bench/http's split mode)
    test::Nginx nginx(split_cpus ? "worker_cpu_affinity 10 10;\n" : "");
    if (split_cpus && !(pin(::getpid(), 0) && pin(nginx.pid(), 1) && pin(rgw.pids().at(0), 1) &&
                        pin(rgw.pids().at(1), 1) && pin(rgw.pids().at(2), 1)))
      return 1;
    // radosgw.py lists the monitor, the OSD and radosgw, in that order
    Servers servers{rgw.pids().at(2), rgw.pids().at(1), nginx.pid()};
    json job = {{"endpoint", rgw.endpoint()},
                {"access_key", rgw.access_key()},
                {"secret_key", rgw.secret_key()},
                {"region", rgw.region()},
                {"bucket", kBucket},
                {"threads", threads}};
    peer("bucket", job);
    stowage::Registry::global().set_threads(threads);
    std::printf(
        "s3_bench: N5 volume 256x512x512 uint16 (128 MiB), 64^3 chunks, radosgw (memstore "
        "OSD) and nginx on loopback%s; radosgw started in %.1f s; load %s\n",
        split_cpus ? "; split: this process and boto3 on CPU 0, the servers on CPU 1" : "",
        rgw.start_seconds(), loadavg().c_str());
    Bench b{runs, threads, rgw, nginx, servers, bench::make_volume(), job};
    for (const std::string& c : codecs) b.codec(c);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "s3_bench: %s\n", e.what());
    return 1;
  }
}
