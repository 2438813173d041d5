// datg benchmark: a 20,000 x 1,000 float64 matrix (one row per block, the
// default for >= 100 columns). Prints
//   write         rows streamed into a new file, in batches of 1,000 rows
//   stream        every row read in order (batches of 1,000 rows), all threads and 1 thread
//   random        10,000 single-row reads at random rows
//   limit         LZ4 frame decode + content checksum + byte swap alone, with liblz4,
//                 on the same blocks held in memory (1 thread): the ceiling for the reader
// Rules (printed at the top): every read figure and the limit's are the best of 3
// runs (wall and CPU time each); the write is one run; warm page cache.
// Usage: datg_bench [dir] [rows] [cols]   (the dir gets the files; default /tmp)
#include <stowage/stowage.hpp>

#include <lz4frame.h>

#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of the calling thread: on a shared, overloaded machine this is a
// steadier yardstick for single-threaded phases than wall time.
double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Gene-expression-like values: 60% zeros, the rest rounded to 1/1024 (so
// they compress a little, as real matrices do).
std::vector<double> make_matrix(uint64_t rows, uint64_t cols) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> m(rows * cols);
  for (double& v : m) v = u(rng) < 0.6 ? 0.0 : std::round(normal(rng) * 1024) / 1024;
  return m;
}

uint64_t load_be64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

// Decodes one LZ4 frame (checksum verified by liblz4) and byte-swaps it.
void decode_frame(LZ4F_dctx* dctx, const unsigned char* in, size_t n, double* out, size_t bytes) {
  size_t dst = bytes, src = n;
  size_t rc = LZ4F_decompress(dctx, out, &dst, in, &src, nullptr);
  if (LZ4F_isError(rc) || rc != 0 || dst != bytes) {
    std::fprintf(stderr, "limit: frame decode failed\n");
    std::exit(1);
  }
  auto* w = reinterpret_cast<uint64_t*>(out);
  for (size_t i = 0; i < bytes / 8; ++i) w[i] = __builtin_bswap64(w[i]);
}

const int kRuns = 3;

// The best wall and CPU (this thread's) seconds of kRuns runs of f().
template <class F>
std::pair<double, double> best_of_runs(F&& f) {
  double wall = 1e30, cpu = 1e30;
  for (int i = 0; i < kRuns; ++i) {
    auto t0 = Clock::now();
    const double c0 = thread_cpu_seconds();
    f();
    wall = std::min(wall, seconds_since(t0)), cpu = std::min(cpu, thread_cpu_seconds() - c0);
  }
  return {wall, cpu};
}

struct Limit {
  double stream_mb_s, random_us, stream_cpu_mb_s, random_cpu_us;
};

// The ceiling: decode + checksum + swap on the file's blocks, in memory.
Limit measure_limit(const std::string& file, uint64_t rows, uint64_t cols,
                    const std::vector<uint64_t>& picks) {
  std::ifstream in(file, std::ios::binary);
  std::vector<unsigned char> data((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  const unsigned char* footer = data.data() + data.size() - 44;
  const uint64_t index_offset = load_be64(footer + 16), metadata_offset = load_be64(footer + 24);
  LZ4F_dctx* dctx;
  LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
  std::vector<uint64_t> index(rows);
  decode_frame(dctx, data.data() + index_offset, metadata_offset - index_offset,
               reinterpret_cast<double*>(index.data()), rows * 8);  // swapped to host order
  index.push_back(index_offset);
  std::vector<double> row(cols);
  const auto [stream, stream_cpu] = best_of_runs([&] {
    for (uint64_t r = 0; r < rows; ++r)
      decode_frame(dctx, data.data() + index[r], index[r + 1] - index[r], row.data(), cols * 8);
  });
  const auto [random, random_cpu] = best_of_runs([&] {
    for (uint64_t r : picks)
      decode_frame(dctx, data.data() + index[r], index[r + 1] - index[r], row.data(), cols * 8);
  });
  LZ4F_freeDecompressionContext(dctx);
  const double n = static_cast<double>(picks.size());
  return {rows * cols * 8 / stream / 1e6, random / n * 1e6, rows * cols * 8 / stream_cpu / 1e6,
          random_cpu / n * 1e6};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const uint64_t rows = argc > 2 ? std::stoull(argv[2]) : 20000;
  const uint64_t cols = argc > 3 ? std::stoull(argv[3]) : 1000;
  const uint64_t batch = 1000;
  const std::string path = dir + "/stowage-datg-bench-" + std::to_string(::getpid()) + ".datg";
  const double mb = static_cast<double>(rows * cols * 8) / 1e6;
  stowage::Registry& registry = stowage::Registry::global();
  const unsigned threads = registry.threads();
  std::printf(
      "datg bench: %llu x %llu float64 (%.0f MB), %u threads; figures are noisy on a shared machine\n",
      static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), mb, threads);
  std::printf(
      "Rules: every read figure and the limit's are the best of %d runs (wall and CPU time each);\n"
      "the write is one run; warm page cache; threads as each line says (the limit: 1).\n",
      kRuns);

  const std::vector<double> m = make_matrix(rows, cols);
  auto t0 = Clock::now();
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"}, {"shape", {rows, cols}}});
    stowage::Array a = store.array("");
    for (uint64_t r = 0; r < rows; r += batch) {
      const uint64_t n = std::min(batch, rows - r);
      a.write({r, 0}, {n, cols}, m.data() + r * cols);
    }
    store.close();
  }
  const double write = seconds_since(t0);
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  const double file_mb = static_cast<double>(f.tellg()) / 1e6;
  std::printf("write          %8.1f MB/s   (%.2f s, file %.1f MB, ratio %.2f)\n", mb / write, write,
              file_mb, mb / file_mb);

  std::vector<double> back(rows * cols);
  stowage::Store store = stowage::Store::open(path);
  stowage::Array a = store.array("");
  for (unsigned t : {threads, 1u}) {
    registry.set_threads(t);
    const auto [s, cpu] = best_of_runs([&] {
      for (uint64_t r = 0; r < rows; r += batch) {
        const uint64_t n = std::min(batch, rows - r);
        a.read({r, 0}, {n, cols}, back.data() + r * cols);
      }
    });
    std::printf("stream %2u thr  %8.1f MB/s   (%.1f us/row)", t, mb / s,
                s / static_cast<double>(rows) * 1e6);
    if (t == 1) std::printf("   cpu time: %.1f MB/s", mb / cpu);
    std::printf("\n");
  }
  registry.set_threads(threads);
  if (std::memcmp(back.data(), m.data(), m.size() * 8) != 0) {
    std::fprintf(stderr, "read back differs from what was written\n");
    return 1;
  }

  std::mt19937_64 rng(7);
  std::vector<uint64_t> picks(10000);
  for (uint64_t& r : picks) r = rng() % rows;
  std::vector<double> row(cols);
  const auto [random, random_cpu] = best_of_runs([&] {
    for (uint64_t r : picks) a.read({r, 0}, {1, cols}, row.data());
  });
  const double n = static_cast<double>(picks.size());
  std::printf("random row     %8.1f us/row (%zu rows)   cpu time: %.1f us/row\n", random / n * 1e6,
              picks.size(), random_cpu / n * 1e6);

  const Limit limit = measure_limit(path, rows, cols, picks);
  std::printf(
      "limit stream   %8.1f MB/s   cpu time: %.1f MB/s (liblz4 frame decode + checksum + swap, "
      "1 thread, in memory)\n",
      limit.stream_mb_s, limit.stream_cpu_mb_s);
  std::printf("limit random   %8.1f us/row cpu time: %.1f us/row\n", limit.random_us,
              limit.random_cpu_us);
  store.close();
  const std::string base = path.substr(0, path.size() - 5);
  for (const std::string& p :
       {path, base + ".rows.txt.gz", base + ".cols.txt.gz", base + ".sha256"})
    std::remove(p.c_str());
  return 0;
}
