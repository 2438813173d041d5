// Reading over HTTP on loopback against reading the same files locally, in
// the same process with the same threads (issue 19: a whole-volume raw read
// over HTTP reaches >= 0.5 of the local read).
//
//   http_bench [RUNS] [THREADS]     (default: 5 runs, 2 threads)
//   http_bench RUNS THREADS http    only the n5 whole read over http (or
//   http_bench RUNS THREADS local   local), RUNS times: for `perf record`
//                                   and `perf stat` (CPU time per read)
//   http_bench RUNS THREADS [http|local] split
//                                   the same with this process on CPU 0
//                                   and nginx's workers on CPU 1: a server
//                                   with a core of its own, as another
//                                   machine would be (the client has one
//                                   core for the local read and for http)
//
// A private nginx (tests/http/nginx.hpp) serves a folder holding the N5
// volume of bench/n5: 256x512x512 uint16 (128 MiB) in 64^3 raw chunks, the
// same values. Two figures, each local beside http, each the best of RUNS
// runs, local and http runs interleaved (a shared machine drifts by 20-30%
// over seconds):
//   n5 whole read    Store::open(path or URL).array("vol").read of the
//                    whole volume (the registry's http backend, as any
//                    user gets it)
//   chunk files      the storage backends alone: every chunk file read whole
//                    into a reused buffer, file i by thread i % THREADS
//                    (file backend vs http backend, no decode or scatter),
//                    and over http also through libcurl's transfer alone
//                    (the backend's "direct" option off)
// `ninja -C build bench-http` runs it with this tree's plugins, both ways.
//
// The figures, and where the time goes (a perf profile): README.md. In
// short, both reads are CPU-bound on the 2-core VM. With nginx on a core of
// its own (split) the http read reaches 0.53-0.63 of the local read; with
// nginx on the reader's cores 0.31-0.43, as the TCP path (nginx's send, the
// kernel's receive copy) costs more CPU than the whole local read.
//
// The tests' nginx fixture. Its helpers header uses doctest, whose
// implementation (not its main) is compiled here: this program is no test.
#define DOCTEST_CONFIG_IMPLEMENT
#include "nginx.hpp"

#include <stowage/storage.hpp>
#include <stowage/stowage.hpp>

#include "n5_volume.hpp"

#include <sched.h>  // sched_setaffinity

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

namespace sdk = stowage::sdk;
namespace fs = std::filesystem;

namespace {

const std::vector<uint64_t>& kShape = bench::kVolumeShape;
const std::vector<uint64_t>& kChunks = bench::kVolumeChunks;
constexpr double kMiB = 1 << 20;

using bench::chunk_keys;  // bench/support/n5_volume.hpp
using bench::make_volume;

double seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The best of `runs` runs of a and of b, interleaved.
std::pair<double, double> best_of(int runs, const std::function<void()>& a,
                                  const std::function<void()>& b) {
  double best_a = 1e30, best_b = 1e30;
  for (int r = 0; r < runs; ++r) {
    best_a = std::min(best_a, seconds(a));
    best_b = std::min(best_b, seconds(b));
  }
  return {best_a, best_b};
}

// Reads every key under `root` whole from `threads` threads, key i by thread i % threads.
void read_files(const sdk::Storage& s, const std::string& root,
                const std::vector<std::string>& keys, int threads, size_t file_size) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<char> buf(file_size);
      for (size_t i = t; i < keys.size(); i += threads)
        s.read_exact(root + "/" + keys[i], 0, buf.data(), buf.size());
    });
  for (std::thread& t : pool) t.join();
}

sdk::Storage storage_for(const std::string& location) {
  auto b = stowage::Registry::global().storage(location);
  return sdk::Storage(b.vtable, b.handle, b.capabilities);
}

// An http backend of its own with `options` (the registry's has the
// defaults), closed with the process.
sdk::Storage http_backend(const std::string& options) {
  const stowage_plugin* p = stowage::Registry::global().load("storage", "http");
  auto vt = static_cast<const stowage_storage_vtable*>(p->vtable);
  stowage_storage_handle h = nullptr;
  stowage_error e{};
  if (vt->open(stowage::Registry::global().host(), options.data(), options.size(), &h, &e) !=
      STOWAGE_OK)
    throw std::runtime_error(std::string("http backend: ") + e.message);
  return sdk::Storage(vt, h, p->capabilities);
}

// This process and every thread it starts from here on run on CPU 0 only.
bool on_cpu_0() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  if (::sched_setaffinity(0, sizeof set, &set) == 0) return true;
  std::perror("http_bench: sched_setaffinity");
  return false;
}

void print_row(const char* what, double bytes, double local, double http) {
  std::printf("%-16s %9.0f MiB/s %9.0f MiB/s %8.2f\n", what, bytes / kMiB / local,
              bytes / kMiB / http, local / http);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  std::string only;
  bool split = false, bad = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "split")
      split = true;
    else if ((arg == "http" || arg == "local") && only.empty())
      only = arg;
    else
      bad = true;
  }
  if (runs < 1 || threads < 1 || bad) {
    std::fprintf(stderr, "usage: http_bench [RUNS] [THREADS] [http|local] [split]\n");
    return 2;
  }
  if (split && !on_cpu_0()) return 1;
  try {
    // nginx is forked from this process and so starts on CPU 0 as well;
    // its workers then move themselves to CPU 1 (mask 10).
    test::Nginx nginx(split ? "worker_cpu_affinity 10 10;\n" : "");
    const fs::path container = nginx.root() / "vol.n5";
    const std::string url = nginx.url("vol.n5");
    std::vector<uint16_t> vol = make_volume();
    const double bytes = vol.size() * sizeof(uint16_t);
    {
      stowage::Store s = stowage::Store::open(container.string(), stowage::Mode::truncate, "n5");
      s.create("vol", {{"kind", "array"},
                       {"dtype", "uint16"},
                       {"shape", kShape},
                       {"chunks", kChunks},
                       {"codec", {{"type", "raw"}}}});
      s.array("vol").write({0, 0, 0}, kShape, vol.data());
      s.close();
    }
    stowage::Registry::global().set_threads(threads);
    stowage::Array local = stowage::Store::open(container.string()).array("vol");
    stowage::Array http = stowage::Store::open(url).array("vol");
    std::vector<uint16_t> back(vol.size(), 1);         // touched: no page faults timed
    for (const stowage::Array* a : {&local, &http}) {  // warms the page cache and checks
      a->read({0, 0, 0}, kShape, back.data());
      if (back != vol) {
        std::fprintf(stderr, "http_bench: the %s read differs from what was written\n",
                     a == &local ? "local" : "http");
        return 1;
      }
    }
    if (!only.empty()) {
      const stowage::Array& a = only == "http" ? http : local;
      double t = seconds([&] {
        for (int r = 0; r < runs; ++r) a.read({0, 0, 0}, kShape, back.data());
      });
      std::printf("n5 whole read, %s, %d threads: %.0f MiB/s over %d runs\n", only.c_str(), threads,
                  runs * bytes / kMiB / t, runs);
      return 0;
    }
    auto [n5_local, n5_http] = best_of(
        runs, [&] { local.read({0, 0, 0}, kShape, back.data()); },
        [&] { http.read({0, 0, 0}, kShape, back.data()); });

    std::vector<std::string> keys = chunk_keys(container);
    size_t file_size = fs::file_size(container / keys[0]);
    sdk::Storage files = storage_for(container.string()), web = storage_for(url);
    auto [files_local, files_http] = best_of(
        runs, [&] { read_files(files, container.string(), keys, threads, file_size); },
        [&] { read_files(web, url, keys, threads, file_size); });
    // The same through libcurl's transfer alone (the backend's "direct"
    // option off): what receiving bodies in place saves.
    sdk::Storage curl = http_backend(R"({"direct": false})");
    auto [files_direct, files_curl] = best_of(
        runs, [&] { read_files(web, url, keys, threads, file_size); },
        [&] { read_files(curl, url, keys, threads, file_size); });

    std::printf(
        "N5 volume 256x512x512 uint16 (128 MiB), raw, 64^3 chunks; %d threads; best of %d; "
        "nginx on loopback%s\n",
        threads, runs, split ? "; split: readers on CPU 0, nginx on CPU 1" : "");
    std::printf("%-16s %15s %15s %8s\n", "", "local", "http", "http/local");
    print_row("n5 whole read", bytes, n5_local, n5_http);
    print_row("chunk files", double(keys.size()) * file_size, files_local, files_http);
    const double files_bytes = double(keys.size()) * file_size;
    std::printf(
        "chunk files over http, bodies received in place %.0f MiB/s, through libcurl's transfer %.0f MiB/s\n",
        files_bytes / kMiB / files_direct, files_bytes / kMiB / files_curl);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http_bench: %s\n", e.what());
    return 1;
  }
}
