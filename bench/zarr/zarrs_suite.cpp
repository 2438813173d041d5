// The zarrs benchmark suite (github zarrs/zarr_benchmarks, issue 35), every
// side in this one process run: a 1024^3 uint16 array (--size) whose element
// (z, y, x) is (x + y*y/32 + z*z*z) % 65536, in three Zarr v3 layouts (raw
// 256^3 chunks; zstd 256^3 chunks; 256^3 shards of 64^3 zstd inner chunks),
// written once by stowage into --dir and reused. Timed, best of --runs:
//   read all    the whole array into one reused buffer
//   round trip  read all, then write a new array of the same layout (the limit:
//               the files read and written again as they are)
//   chunks      every chunk (inner chunk when sharded) read one by one, at
//               concurrency 1 and at --threads (default: the machine's cores)
// warm (after one untimed read, checked against the formula) and cold (the
// page cache dropped before each timed run: root only, else said and
// skipped). Sides: stowage's C++ API; z5 (with -Dz5_include, the same v3
// arrays); zarr-python 2.13 (Debian's) on Zarr v2 copies of the unsharded
// layouts (peer_zarrs_v2.py, a subprocess); the limit: pread of the same
// chunk or shard files into reused page-aligned buffers on the same threads.
// Also the peak memory of stowage writing the sharded layout.
//
// Usage: zarrs_suite [--dir DIR] [--size N] [--runs N] [--threads N] [--no-cold]
//                    [--no-peer] [--peer PATH] [--python PATH]   (meson: ninja -C build bench-zarr)
#include "zarrs_suite.hpp"
#ifdef STOWAGE_BENCH_Z5
#include "z5_suite_peer.hpp"
#endif

#include <stowage/stowage.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;
using zarrs_suite::Layout;

struct Options {
  fs::path dir = "/tmp/stowage-bench-zarrs";
  uint64_t n = 1024;
  int runs = 5;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool cold = true, peer = true;
  std::string peer_script = "peer_zarrs_v2.py";
  std::string python = "/usr/bin/python3";  // Debian's, with its zarr
};
Options opt;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool can_drop_caches() {
  std::ofstream f("/proc/sys/vm/drop_caches");
  return f.good();
}
void drop_caches() {
  ::sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "3";
}

// Best of opt.runs, each after a cache drop when cold; `prepare` runs untimed before each.
double best(bool cold, const std::function<void()>& run,
            const std::function<void()>& prepare = nullptr) {
  double t = 1e30;
  for (int r = 0; r < opt.runs; ++r) {
    if (prepare) prepare();
    if (cold) drop_caches();
    const double t0 = now();
    run();
    t = std::min(t, now() - t0);
  }
  return t;
}

// A buffer of `bytes` on huge pages where the kernel gives them, touched once,
// so no side pays page faults in a timed run.
std::unique_ptr<uint16_t, void (*)(void*)> big_buffer(uint64_t bytes) {
  void* p = std::aligned_alloc(2u << 20, (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20));
  if (!p) throw std::bad_alloc();
  ::madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 0, bytes);
  return {static_cast<uint16_t*>(p), std::free};
}

fs::path v3_path(const Layout& l) {
  return opt.dir / ("v3-" + std::to_string(opt.n) + "-" + l.name + ".zarr");
}
fs::path v2_path(const Layout& l) {
  return opt.dir / ("v2-" + std::to_string(opt.n) + "-" + l.name + ".zarr");
}

json description(const Layout& l) {
  const uint64_t n = opt.n, c = l.chunk();
  json d = {{"kind", "array"},
            {"dtype", "uint16"},
            {"shape", {n, n, n}},
            {"chunks", {c, c, c}},
            {"codec", l.zstd ? json{{"type", "zstd"}, {"level", 3}} : json{{"type", "raw"}}}};
  if (l.sharded) d["shards"] = {256, 256, 256};
  return d;
}

// Writes the array in slabs of 256 planes unless a stamp says it is there.
void make(const fs::path& path, const Layout& l, int zarr_version) {
  const fs::path stamp = path.string() + ".complete";
  if (fs::exists(stamp)) return;
  fs::remove_all(path);
  const uint64_t n = opt.n, planes = std::min<uint64_t>(256, n);
  std::vector<uint16_t> slab(planes * n * n);
  stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::truncate, "zarr",
                                          {{"zarr_version", zarr_version}});
  s.create("vol", description(l));
  stowage::Array a = s.array("vol");
  for (uint64_t z0 = 0; z0 < n; z0 += planes) {
    for (uint64_t z = 0; z < planes; ++z)
      for (uint64_t y = 0; y < n; ++y)
        for (uint64_t x = 0; x < n; ++x)
          slab[(z * n + y) * n + x] = zarrs_suite::value(z0 + z, y, x);
    a.write({z0, 0, 0}, {planes, n, n}, slab.data());
  }
  s.close();
  std::ofstream(stamp) << "written by zarrs_suite\n";
}

// Checks a whole-array read against the formula (every 7th element).
void check(const uint16_t* out, const std::string& who) {
  const uint64_t n = opt.n;
  for (uint64_t i = 0; i < n * n * n; i += 7)
    if (out[i] != zarrs_suite::value(i / (n * n), i / n % n, i % n))
      throw std::runtime_error(who + " read a wrong value at element " + std::to_string(i));
}

// The sum of all the array's values, from the formula (a row's x-sum in closed form).
uint64_t expected_sum() {
  uint64_t sum = 0;
  const uint64_t n = opt.n;
  for (uint64_t z = 0; z < n; ++z)
    for (uint64_t y = 0; y < n; ++y) {
      const uint64_t c = (y * y / 32 + z * z * z) % 65536;
      const uint64_t first = std::min<uint64_t>(n, 65536 - c);  // values before the wrap
      sum += first * c + first * (first - 1) / 2;
      const uint64_t rest = n - first;  // wrapped: 0, 1, ...
      sum += rest * (rest - 1) / 2;
    }
  return sum;
}

// Runs `work(thread)` on `threads` threads (the caller's among them).
void on_threads(int threads, const std::function<void(int)>& work) {
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
}

// ---- the limit: the files' bytes into reused buffers --------------------------

struct Limit {
  std::vector<std::string> files;
  std::vector<std::unique_ptr<uint16_t, void (*)(void*)>> buffers;
  uint64_t largest = 0;

  explicit Limit(const fs::path& array) {
    for (const auto& e : fs::recursive_directory_iterator(array / "vol" / "c"))
      if (e.is_regular_file()) {
        files.push_back(e.path().string());
        largest = std::max<uint64_t>(largest, e.file_size());
      }
    for (int t = 0; t < opt.threads; ++t) buffers.push_back(big_buffer(largest));
  }
  // Every file read; with `to`, each also written whole into a new file
  // there (a round trip's I/O: the bytes as stored, no codec).
  void read(int threads, const fs::path& to = {}) {
    std::atomic<size_t> next{0};
    on_threads(threads, [&](int t) {
      char* buf = reinterpret_cast<char*>(buffers[t].get());
      for (size_t i; (i = next.fetch_add(1)) < files.size();) {
        int fd = ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error(files[i] + ": cannot open");
        uint64_t size = 0;
        for (;;) {
          ssize_t r = ::pread(fd, buf, largest, static_cast<off_t>(size));
          if (r <= 0) break;
          size += static_cast<uint64_t>(r);
        }
        ::close(fd);
        if (!to.empty()) write_file(to / std::to_string(i), buf, size);
      }
    });
  }

 private:
  static void write_file(const fs::path& path, const char* data, uint64_t size) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(path.string() + ": cannot create");
    for (uint64_t done = 0; done < size;) {
      ssize_t w = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
      if (w <= 0) throw std::runtime_error(path.string() + ": cannot write");
      done += static_cast<uint64_t>(w);
    }
    ::close(fd);
  }
};

// ---- stowage --------------------------------------------------------------------

void stowage_round_trip(const Layout& l, const fs::path& to, uint16_t* buffer) {
  const uint64_t n = opt.n;
  stowage::Store in = stowage::Store::open((v3_path(l)).string());
  in.array("vol").read({0, 0, 0}, {n, n, n}, buffer);
  stowage::Store out =
      stowage::Store::open(to.string(), stowage::Mode::truncate, "zarr", {{"zarr_version", 3}});
  out.create("vol", description(l));
  out.array("vol").write({0, 0, 0}, {n, n, n}, buffer);
  out.close();
}

uint64_t stowage_chunks(const stowage::Array& a, uint64_t edge, int concurrency, bool sum) {
  const uint64_t per = opt.n / edge, count = per * per * per;
  std::atomic<uint64_t> next{0}, total{0};
  on_threads(concurrency, [&](int) {
    std::vector<uint16_t> buf(edge * edge * edge);
    uint64_t mine = 0;
    for (uint64_t i; (i = next.fetch_add(1)) < count;) {
      a.read({i / (per * per) * edge, i / per % per * edge, i % per * edge}, {edge, edge, edge},
             buf.data());
      if (sum) mine = std::accumulate(buf.begin(), buf.end(), mine);
    }
    total += mine;
  });
  return total;
}

uint64_t status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(std::strlen(field)));
  return 0;
}

// ---- figures --------------------------------------------------------------------

struct Row {
  std::string what;  // "read all", "round trip", "chunks c=1", ...
  std::string layout, cache;
  std::map<std::string, double> s;  // side -> seconds
};
std::vector<Row> rows;

void record(const std::string& what, const Layout& l, bool cold, const std::string& side,
            double seconds) {
  for (Row& r : rows)
    if (r.what == what && r.layout == l.name && r.cache == (cold ? "cold" : "warm")) {
      r.s[side] = seconds;
      return;
    }
  rows.push_back({what, l.name, cold ? "cold" : "warm", {{side, seconds}}});
}

// zarr-python on the v2 copy of an unsharded layout (peer_zarrs_v2.py).
void run_peer(const Layout& l, bool cold) {
  std::string cmd = opt.python + " " + opt.peer_script + " --runs " + std::to_string(opt.runs) +
                    " --threads " + std::to_string(opt.threads) + (cold ? " --cold " : " ") +
                    (v2_path(l) / "vol").string();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string text;
  char buf[4096];
  while (size_t k = std::fread(buf, 1, sizeof buf, p)) text.append(buf, k);
  if (::pclose(p) != 0) throw std::runtime_error(cmd + " failed: " + text);
  const json j = json::parse(text);
  record("read all", l, cold, "zarr-python", j["read_s"]);
  record("round trip", l, cold, "zarr-python", j["roundtrip_s"]);
  for (auto& [c, s] : j["chunks_s"].items()) record("chunks c=" + c, l, cold, "zarr-python", s);
}

void run_layout(const Layout& l, bool cold, uint16_t* out, uint16_t* spare, uint64_t sum) {
  const uint64_t n = opt.n;
  const fs::path path = v3_path(l);
  stowage::Store s = stowage::Store::open(path.string());
  stowage::Array a = s.array("vol");
  a.read({0, 0, 0}, {n, n, n}, out);  // untimed, checked
  check(out, "stowage (" + l.name + ")");
  record("read all", l, cold, "stowage", best(cold, [&] { a.read({0, 0, 0}, {n, n, n}, out); }));
  Limit limit(path);
  record("read all", l, cold, "limit", best(cold, [&] { limit.read(opt.threads); }));
  const fs::path limit_rt = opt.dir / ("limit-round-trip-" + l.name);
  record("round trip", l, cold, "limit",
         best(
             cold, [&] { limit.read(opt.threads, limit_rt); },
             [&] {
               fs::remove_all(limit_rt);
               fs::create_directories(limit_rt);
             }));
  fs::remove_all(limit_rt);
  const fs::path rt = opt.dir / ("round-trip-" + l.name + ".zarr");
  record("round trip", l, cold, "stowage",
         best(cold, [&] { stowage_round_trip(l, rt, spare); }, [&] { fs::remove_all(rt); }));
  for (int c : {1, opt.threads}) {
    const std::string what = "chunks c=" + std::to_string(c);
    if (stowage_chunks(a, l.chunk(), c, true) != sum)
      throw std::runtime_error("stowage read other chunk values (" + l.name + ")");
    record(what, l, cold, "stowage", best(cold, [&] { stowage_chunks(a, l.chunk(), c, false); }));
    if (c == opt.threads) break;
  }
#ifdef STOWAGE_BENCH_Z5
  const std::string vol = (path / "vol").string();
  z5_suite::read_all(vol, out, opt.threads);
  check(out, "z5 (" + l.name + ")");
  record("read all", l, cold, "z5", best(cold, [&] { z5_suite::read_all(vol, out, opt.threads); }));
  const fs::path zrt = opt.dir / ("z5-round-trip-" + l.name + ".zarr");
  record(
      "round trip", l, cold, "z5",
      best(
          cold, [&] { z5_suite::round_trip(vol, (zrt / "vol").string(), l, spare, opt.threads); },
          [&] { fs::remove_all(zrt); }));
  for (int c : {1, opt.threads}) {
    const std::string what = "chunks c=" + std::to_string(c);
    if (z5_suite::read_chunks(vol, l.chunk(), c, true) != sum)
      throw std::runtime_error("z5 read other chunk values (" + l.name + ")");
    record(what, l, cold, "z5",
           best(cold, [&] { z5_suite::read_chunks(vol, l.chunk(), c, false); }));
    if (c == opt.threads) break;
  }
  fs::remove_all(zrt);
#endif
  fs::remove_all(rt);
  if (opt.peer && !l.sharded) run_peer(l, cold);
}

// Peak resident memory over the baseline while stowage writes the sharded layout.
void memory(uint16_t* buffer) {
  const Layout& l = zarrs_suite::layouts().back();
  const fs::path to = opt.dir / "memory-sharded.zarr";
  fs::remove_all(to);
  const uint64_t n = opt.n;
  stowage::Store in = stowage::Store::open(v3_path(l).string());
  in.array("vol").read({0, 0, 0}, {n, n, n}, buffer);
  const uint64_t before = status_kib("VmRSS:");
  std::ofstream("/proc/self/clear_refs") << "5";  // the peak starts again from now
  stowage::Store out =
      stowage::Store::open(to.string(), stowage::Mode::truncate, "zarr", {{"zarr_version", 3}});
  out.create("vol", description(l));
  out.array("vol").write({0, 0, 0}, {n, n, n}, buffer);
  out.close();
  const double peak = (status_kib("VmHWM:") - std::min(before, status_kib("VmHWM:"))) / 1024.0;
  const double bound = opt.threads * 2 * 256.0 * 256 * 256 * 2 / (1 << 20) + 256;
  std::printf(
      "\nmemory: writing the sharded layout took %.0f MiB over the %.0f MiB resident before"
      " (bound: threads x 2 x shard + 256 MiB = %.0f MiB): %s\n",
      peak, before / 1024.0, bound, peak <= bound ? "within" : "OVER");
  fs::remove_all(to);
}

std::string fmt(double seconds) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", seconds);
  return b;
}

void print() {
  const double gb = static_cast<double>(opt.n * opt.n * opt.n * 2) / 1e9;
  std::printf("\n%-11s %-8s %-5s %9s %9s %9s %11s %9s %9s %9s\n", "", "layout", "cache", "stowage",
              "z5", "limit", "zarr-python", "vs z5", "vs limit", "vs zarr-py");
  for (const Row& r : rows) {
    auto get = [&](const char* side) { return r.s.count(side) ? r.s.at(side) : 0.0; };
    auto cell = [&](const char* side) { return r.s.count(side) ? fmt(r.s.at(side)) : "-"; };
    auto ratio = [&](const char* side, double goal) {
      if (!get(side) || !get("stowage")) return std::string("-");
      const double x = get(side) / get("stowage");
      char b[32];
      std::snprintf(b, sizeof b, "%.2f%s", x, goal > 0 && x < goal ? "*" : "");
      return std::string(b);
    };
    const bool read = r.what == "read all";
    const double z5_goal = read || r.what == "round trip" || r.what == "chunks c=1" ? 2.0 : 0;
    std::printf("%-11s %-8s %-5s %9s %9s %9s %11s %9s %9s %9s\n", r.what.c_str(), r.layout.c_str(),
                r.cache.c_str(), cell("stowage").c_str(), cell("z5").c_str(), cell("limit").c_str(),
                cell("zarr-python").c_str(), ratio("z5", z5_goal).c_str(),
                ratio("limit", read ? 0.9 : 0).c_str(), ratio("zarr-python", 0).c_str());
  }
  std::printf(
      "\nseconds, best of %d; the array is %.2f GB decoded; %d threads (chunks: c= threads each "
      "reading\nwhole chunks, inner chunks when sharded). Ratios: the side's time over "
      "stowage's (above 1: stowage\nis faster). * marks a goal of issue 35 not met: read all and "
      "round trip >= 2x z5, chunks one by\none >= 2x z5 at c=1, read all >= 0.9 of the limit (its "
      "bytes are the files' as stored: for\nzstd the I/O alone, and decoding bounds the read; a "
      "round trip's limit also writes them into\nnew files). "
      "zarr-python 2.13 reads Zarr v2 copies of the\nunsharded layouts (it has no v3).\n",
      opt.runs, gb, opt.threads);
}

void parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--dir")
      opt.dir = next();
    else if (a == "--size")
      opt.n = std::stoull(next());
    else if (a == "--runs")
      opt.runs = std::stoi(next());
    else if (a == "--threads")
      opt.threads = std::stoi(next());
    else if (a == "--no-cold")
      opt.cold = false;
    else if (a == "--no-peer")
      opt.peer = false;
    else if (a == "--peer")
      opt.peer_script = next();
    else if (a == "--python")
      opt.python = next();
    else
      throw std::runtime_error("unknown option " + a + " (see the header of zarrs_suite.cpp)");
  }
  if (opt.n % 256 != 0) throw std::runtime_error("--size must be a multiple of 256");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    parse(argc, argv);
    stowage::Registry::global().set_threads(static_cast<unsigned>(opt.threads));
    fs::create_directories(opt.dir);
    const uint64_t bytes = opt.n * opt.n * opt.n * 2;
    const uint64_t need = bytes * 7;  // 3 v3 + 2 v2 copies + 2 round trips
    if (fs::space(opt.dir).available < need)
      throw std::runtime_error(opt.dir.string() + ": " + std::to_string(need >> 30) +
                               " GiB free needed (the arrays and their round trips)");
    std::printf("zarrs suite: %llu^3 uint16 in %s, %d threads, best of %d\n",
                static_cast<unsigned long long>(opt.n), opt.dir.c_str(), opt.threads, opt.runs);
    for (const Layout& l : zarrs_suite::layouts()) {
      make(v3_path(l), l, 3);
      if (opt.peer && !l.sharded) make(v2_path(l), l, 2);
    }
    const bool cold = opt.cold && can_drop_caches();
    if (opt.cold && !cold)
      std::printf("cold: skipped (dropping the page cache needs root); warm figures only\n");
#ifndef STOWAGE_BENCH_Z5
    std::printf("z5: not built (configure with -Dz5_include=<z5 source>/include)\n");
#endif
    auto out = big_buffer(bytes), spare = big_buffer(bytes);
    const uint64_t sum = expected_sum();
    for (bool c : {false, true}) {
      if (c && !cold) break;
      for (const Layout& l : zarrs_suite::layouts()) run_layout(l, c, out.get(), spare.get(), sum);
    }
    print();
    memory(spare.get());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zarrs_suite: %s\n", e.what());
    return 1;
  }
  return 0;
}
