// BPCells benchmark, one core:
//   1. BP-128 d1z (matrix index) and m1 (counts) encode/decode in integers/s,
//      for each instruction set the CPU has (scalar, SSE2, AVX2);
//   2. a 30,000 x 10,000 count matrix at 5% density (15 M non-zeros) through
//      the stowage API: write packed, read everything, read 100 random
//      columns; non-zeros/s and size against the unpacked directory.
// Figures are medians over rounds of this thread's CPU time (the machine may
// be shared; cache and memory contention still show, so read them as a band).
#include "bp128.hpp"

#include <stowage/stowage.hpp>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bp = stowage::bpcells::bp128;
namespace fs = std::filesystem;

namespace {

// CPU time of this thread (user + system), so that other processes sharing
// the cores do not count against us; set STOWAGE_BENCH_WALL=1 for wall time.
double now_seconds() {
  static const bool wall = std::getenv("STOWAGE_BENCH_WALL") != nullptr;
  if (wall) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double seconds_of(const std::function<void()>& fn) {
  double t0 = now_seconds();
  fn();
  return now_seconds() - t0;
}

double median_seconds(int rounds, const std::function<void()>& fn) {
  std::vector<double> t;
  for (int i = 0; i < rounds; ++i) t.push_back(seconds_of(fn));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Column-major count matrix: row indices of each column sorted, values small
// counts (geometric, mean 2), like single-cell RNA counts.
struct CountMatrix {
  uint64_t rows = 0, cols = 0;
  std::vector<uint64_t> indptr{0};
  std::vector<uint32_t> indices, values;
};

CountMatrix make_counts(uint64_t rows, uint64_t cols, double density, uint32_t seed) {
  CountMatrix m;
  m.rows = rows;
  m.cols = cols;
  std::mt19937_64 rng(seed);
  std::geometric_distribution<uint32_t> gap(density), count(0.5);
  for (uint64_t c = 0; c < cols; ++c) {
    for (uint64_t r = gap(rng); r < rows; r += 1 + gap(rng)) {
      m.indices.push_back(uint32_t(r));
      m.values.push_back(1 + count(rng));
    }
    m.indptr.push_back(m.indices.size());
  }
  return m;
}

void bench_kernels(const CountMatrix& m) {
  std::printf("BP-128 kernels, one core, %zu values (matrix index stream / count values)\n", m.indices.size());
  std::printf("  %-8s %-6s %14s %14s\n", "variant", "isa", "encode Mint/s", "decode Mint/s");
  struct Case {
    bp::Variant variant;
    const std::vector<uint32_t>* input;
  } cases[] = {{bp::Variant::d1z, &m.indices}, {bp::Variant::m1, &m.values}};
  for (const Case& c : cases) {
    const std::vector<uint32_t>& in = *c.input;
    size_t n = in.size() / bp::kChunkValues * bp::kChunkValues;
    for (bp::Isa isa : {bp::Isa::scalar, bp::Isa::sse2, bp::Isa::avx2}) {
      if (!bp::isa_available(isa)) continue;
      std::vector<uint32_t> packed(n + 4), decoded(n);
      std::vector<unsigned> bits(n / bp::kChunkValues);
      std::vector<uint64_t> offsets(bits.size() + 1);
      double enc = median_seconds(5, [&] {
        uint64_t w = 0;
        for (size_t i = 0; i < bits.size(); ++i) {
          offsets[i] = w;
          bits[i] = bp::encode_chunk(c.variant, &in[i * 128], &packed[w], isa);
          w += 4 * bits[i];
        }
        offsets[bits.size()] = w;
      });
      double dec = median_seconds(5, [&] {
        for (size_t i = 0; i < bits.size(); ++i)
          bp::decode_chunk(c.variant, &packed[offsets[i]], bits[i], in[i * 128], &decoded[i * 128], isa);
      });
      if (!std::equal(decoded.begin(), decoded.end(), in.begin())) std::printf("  MISMATCH\n");
      std::printf("  %-8s %-6s %14.0f %14.0f   (%.2f bits/value)\n", bp::variant_name(c.variant),
                  bp::isa_name(isa), n / enc / 1e6, n / dec / 1e6, 32.0 * offsets.back() / n);
    }
  }
}

uint64_t directory_bytes(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir)) total += fs::file_size(e.path());
  return total;
}

void write_matrix(const CountMatrix& m, const std::string& path, bool packed) {
  stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, "bpcells");
  store.create("", {{"kind", "sparse"},
                    {"dtype", "uint32"},
                    {"shape", {m.rows, m.cols}},
                    {"layout", "csc"},
                    {"packed", packed}});
  stowage::Sparse out = store.sparse("");
  const uint64_t batch = 100;  // columns per append, as a streaming converter would
  for (uint64_t c = 0; c < m.cols; c += batch) {
    uint64_t n = std::min(batch, m.cols - c), first = m.indptr[c], last = m.indptr[c + n];
    stowage::SparseSlice s;
    for (uint64_t j = c; j <= c + n; ++j) s.indptr.push_back(m.indptr[j] - first);
    s.indices.assign(m.indices.begin() + first, m.indices.begin() + last);
    s.values.resize((last - first) * 4);
    std::memcpy(s.values.data(), &m.values[first], s.values.size());
    out.append(s, n);
  }
  store.close();
}

double plugin_read_all_seconds(const std::string& path, uint64_t cols, uint64_t nnz) {
  auto* plugin = stowage::Registry::global().load("format", "bpcells");
  auto* vt = static_cast<const stowage_format_vtable*>(plugin->vtable);
  stowage_store_handle h = nullptr;
  stowage_error err{};
  if (vt->open(path.data(), path.size(), STOWAGE_MODE_READ, "{}", 2, &h, &err) != STOWAGE_OK) {
    std::printf("  open failed: %s\n", err.message);
    return 1;
  }
  std::vector<uint64_t> indptr(cols + 1);
  std::unique_ptr<uint32_t[]> indices(new uint32_t[nnz]), values(new uint32_t[nnz]);
  double t = median_seconds(5, [&] {
    if (vt->read_sparse(h, "", 0, 0, cols, indptr.data(), indices.get(), values.get(), nnz, &err) != STOWAGE_OK)
      std::printf("  read failed: %s\n", err.message);
  });
  vt->close(h, &err);
  return t;
}

void bench_matrix(const CountMatrix& m) {
  fs::path dir = fs::temp_directory_path() / ("stowage-bpcells-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string packed = (dir / "packed").string(), unpacked = (dir / "unpacked").string();
  const double nnz = double(m.indices.size());
  std::printf("\nMatrix %llu x %llu, %.1f M non-zeros (%.2f%%), one core, page cache\n",
              (unsigned long long)m.rows, (unsigned long long)m.cols, nnz / 1e6,
              100.0 * nnz / double(m.rows * m.cols));

  double write_packed = median_seconds(3, [&] { write_matrix(m, packed, true); });
  double write_unpacked = median_seconds(3, [&] { write_matrix(m, unpacked, false); });
  uint64_t packed_bytes = directory_bytes(packed), unpacked_bytes = directory_bytes(unpacked);

  stowage::Store store = stowage::Store::open(packed);
  stowage::Sparse mat = store.sparse("");
  uint64_t checksum = 0;
  double read_all = median_seconds(5, [&] {
    stowage::SparseSlice s = mat.read(0, m.cols);
    checksum += s.indices.size();
  });
  // Streaming in batches of 100 columns: what a converter or an analysis loop does.
  double read_batched = median_seconds(5, [&] {
    for (uint64_t c = 0; c < m.cols; c += 100) checksum += mat.read(c, std::min(c + 100, m.cols)).indices.size();
  });
  // The plugin alone, through its C vtable, into reused caller-owned buffers:
  // the difference to "read all" is the cost of Sparse::read's fresh vectors.
  double read_direct = plugin_read_all_seconds(packed, m.cols, m.indices.size());
  std::mt19937 rng(1);
  std::vector<uint64_t> picks(100);
  uint64_t picked_nnz = 0;
  for (uint64_t& c : picks) {
    c = rng() % m.cols;
    picked_nnz += m.indptr[c + 1] - m.indptr[c];
  }
  double read_100 = median_seconds(5, [&] {
    for (uint64_t c : picks) checksum += mat.read(c, c + 1).indices.size();
  });
  stowage::Store plain = stowage::Store::open(unpacked);
  double read_all_unpacked = median_seconds(5, [&] { checksum += plain.sparse("").read(0, m.cols).indices.size(); });

  std::printf("  write packed       %8.1f M nnz/s  (%.2f s)\n", nnz / write_packed / 1e6, write_packed);
  std::printf("  write unpacked     %8.1f M nnz/s  (%.2f s)\n", nnz / write_unpacked / 1e6, write_unpacked);
  std::printf("  read all packed    %8.1f M nnz/s  (%.3f s)\n", nnz / read_all / 1e6, read_all);
  std::printf("  read all packed, 100 columns at a time %8.1f M nnz/s  (%.3f s)\n", nnz / read_batched / 1e6,
              read_batched);
  std::printf("  read all packed, plugin vtable, reused buffers %8.1f M nnz/s  (%.3f s)\n", nnz / read_direct / 1e6,
              read_direct);
  std::printf("  read all unpacked  %8.1f M nnz/s  (%.3f s)\n", nnz / read_all_unpacked / 1e6, read_all_unpacked);
  std::printf("  read 100 random columns (packed): %.2f ms, %.1f M nnz/s\n", read_100 * 1e3,
              double(picked_nnz) / read_100 / 1e6);
  std::printf("  size: packed %.1f MB, unpacked %.1f MB, ratio %.2fx (%.2f bits per non-zero)\n",
              packed_bytes / 1e6, unpacked_bytes / 1e6, double(unpacked_bytes) / double(packed_bytes),
              8.0 * double(packed_bytes) / nnz);
  if (checksum == 0) std::printf("  (checksum 0?)\n");
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t rows = 30000, cols = 10000;
  if (argc == 3) {  // smaller runs: bpcells_bench ROWS COLS
    rows = std::stoull(argv[1]);
    cols = std::stoull(argv[2]);
  }
  stowage::Registry::global().set_threads(1);
  CountMatrix m = make_counts(rows, cols, 0.05, 42);
  std::printf("BP-128 best instruction set here: %s; timing: %s\n", bp::isa_name(bp::detected_isa()),
              std::getenv("STOWAGE_BENCH_WALL") ? "wall clock" : "thread CPU time");
  std::printf("Rules (every figure): the median of 5 rounds (writes: 3) of %s; one thread; reads from\n"
              "the page cache (the files were just written); no peer runs in this program.\n\n",
              std::getenv("STOWAGE_BENCH_WALL") ? "wall-clock time" : "this thread's CPU time");
  bench_kernels(m);
  bench_matrix(m);
  return 0;
}
