// daf benchmark: reading a dense 20,000 x 2,000 float64 matrix and a sparse
// 30,000 x 10,000 float64 matrix at 5% density (UInt32 indices), against the
// page-cache read bandwidth of the same bytes (pread of the warm files).
//
// Prints, for each matrix, in MB/s of on-disk bytes:
//   page cache    pread of the property's files into one buffer (the ceiling),
//                 on 1 thread and on N threads (each a contiguous share of the bytes)
//   plugin        the plugin's own read primitive through the C ABI, 1 thread, on
//                 one open store (so its memory maps are warm): dense read_chunk of every
//                 column-major tile; sparse read_sparse of all columns (status checked)
//   api           the host API on 1 thread and on N threads (dense: Array::read into C
//                 order, i.e. with the F -> C transpose the core does; sparse:
//                 Sparse::read and Sparse::read_into)
// Each figure is compared with the pread on the same number of threads.
// Rules (every read figure): best of 3 runs, warm page cache, N = the machine's cores.
// Usage: daf_bench [dir]   (the repository is written to <dir>/daf_bench.daf; default /tmp)
#include <stowage/stowage.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr uint64_t kDenseRows = 20000, kDenseCols = 2000;
constexpr uint64_t kSparseRows = 30000, kSparseCols = 10000;
constexpr double kDensity = 0.05;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Best of `reps` runs of f(), in seconds.
template <class F>
double best_of(int reps, F&& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

void write_repository(const std::string& path) {
  stowage::Store s = stowage::Store::open(path, stowage::Mode::truncate, "daf");
  auto names = [](const char* prefix, uint64_t n) {
    std::vector<std::string> v(n);
    for (uint64_t i = 0; i < n; ++i) v[i] = prefix + std::to_string(i);
    return v;
  };
  s.write_strings("axes/cell", names("c", kDenseRows));
  s.write_strings("axes/gene", names("g", kDenseCols));
  s.write_strings("axes/obs", names("o", kSparseRows));
  s.write_strings("axes/var", names("v", kSparseCols));

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> dense(kDenseRows * kDenseCols);
  for (double& v : dense) v = u(rng);
  s.create("matrices/cell/gene/dense",
           {{"kind", "array"}, {"dtype", "float64"}, {"shape", {kDenseRows, kDenseCols}}});
  auto t0 = Clock::now();
  s.array("matrices/cell/gene/dense").write({0, 0}, {kDenseRows, kDenseCols}, dense.data());
  std::printf("write dense (C-order input, transposed by the core): %.0f MB/s\n",
              dense.size() * 8 / 1e6 / seconds_since(t0));

  s.create("matrices/obs/var/sparse", {{"kind", "sparse"},
                                       {"dtype", "float64"},
                                       {"shape", {kSparseRows, kSparseCols}},
                                       {"layout", "csc"}});
  stowage::Sparse sp = s.sparse("matrices/obs/var/sparse");
  const uint64_t batch = 1000;
  for (uint64_t c0 = 0; c0 < kSparseCols; c0 += batch) {
    stowage::SparseSlice slice;
    slice.indptr.push_back(0);
    std::vector<double> values;
    for (uint64_t c = 0; c < batch; ++c) {
      for (uint64_t r = 0; r < kSparseRows; ++r)
        if (u(rng) < kDensity)
          slice.indices.push_back(static_cast<uint32_t>(r)), values.push_back(u(rng));
      slice.indptr.push_back(slice.indices.size());
    }
    slice.values.assign(reinterpret_cast<uint8_t*>(values.data()),
                        reinterpret_cast<uint8_t*>(values.data() + values.size()));
    sp.append(slice, batch);
  }
  t0 = Clock::now();
  s.close();
  std::printf("close (commit of both properties): %.2f s\n", seconds_since(t0));
}

const unsigned kThreads = std::max(1u, std::thread::hardware_concurrency());

// pread of whole files into one buffer: what the page cache delivers. With
// `threads` > 1 the files' bytes, laid end to end, are split into that many
// contiguous shares, each read by its own thread (which opens the files it
// needs); the thread start is timed, as the API's pool is warm.
double page_cache_seconds(const std::vector<std::string>& files, std::vector<char>& buf,
                          unsigned threads = 1) {
  std::vector<uint64_t> sizes, starts;
  uint64_t total = 0;
  for (const std::string& f : files)
    starts.push_back(total), sizes.push_back(fs::file_size(f)), total += sizes.back();
  auto read_share = [&](uint64_t from, uint64_t to) {
    for (size_t i = 0; i < files.size(); ++i) {
      uint64_t a = std::max(from, starts[i]), b = std::min(to, starts[i] + sizes[i]);
      if (a >= b) continue;
      int fd = ::open(files[i].c_str(), O_RDONLY);
      while (a < b) {
        ssize_t r = ::pread(fd, buf.data() + a, b - a, static_cast<off_t>(a - starts[i]));
        if (r <= 0) break;
        a += static_cast<uint64_t>(r);
      }
      ::close(fd);
    }
  };
  return best_of(3, [&] {
    if (threads <= 1) return read_share(0, total);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(read_share, total * t / threads, total * (t + 1) / threads);
    for (std::thread& t : pool) t.join();
  });
}

uint64_t total_size(const std::vector<std::string>& files) {
  uint64_t n = 0;
  for (const std::string& f : files) n += fs::file_size(f);
  return n;
}

// The plugin's vtable and an open handle of one node, for timing the plugin alone.
struct RawNode {
  const stowage_format_vtable* vt;
  stowage_store_handle h = nullptr;
  stowage_node node{sizeof(stowage_node), 0, nullptr, nullptr};
  RawNode(const std::string& path, const std::string& name) {
    const stowage_plugin* p = stowage::Registry::global().load("format", "daf");
    vt = static_cast<const stowage_format_vtable*>(p->vtable);
    stowage_error err{};
    if (vt->open(stowage::Registry::global().host(), path.data(), path.size(), STOWAGE_MODE_READ,
                 "{}", 2, &h, &err) != STOWAGE_OK)
      throw std::runtime_error(err.message);
    if (vt->open_node(h, name.data(), name.size(), &node, &err) != STOWAGE_OK)
      throw std::runtime_error(err.message);
  }
  ~RawNode() {
    stowage_error err{};
    vt->close_node(h, node.handle);
    vt->close(h, &err);
  }
  const stowage_array_vtable& array() const {
    return *static_cast<const stowage_array_vtable*>(node.table);
  }
  const stowage_sparse_vtable& sparse() const {
    return *static_cast<const stowage_sparse_vtable*>(node.table);
  }
};

void bench_dense(const std::string& repo) {
  std::string node = "matrices/cell/gene/dense";
  std::vector<std::string> files = {repo + "/" + node + ".data"};
  double mb = total_size(files) / 1e6;
  std::vector<char> buf(total_size(files));
  double t_cache = page_cache_seconds(files, buf),
         t_cacheN = page_cache_seconds(files, buf, kThreads);

  stowage::Store s = stowage::Store::open(repo, stowage::Mode::read, "daf");
  stowage::Array a = s.array(node);
  RawNode raw(repo, node);
  // Every tile, each into its own place of one buffer (column-major tiles).
  uint64_t tile_rows = a.info().chunks[0], tile_cols = a.info().chunks[1];
  double t_plugin = best_of(3, [&] {
    size_t off = 0;
    for (uint64_t i = 0; i * tile_rows < kDenseRows; ++i)
      for (uint64_t j = 0; j * tile_cols < kDenseCols; ++j) {
        uint64_t idx[2] = {i, j}, shape[2];
        stowage_error err{};
        if (raw.array().read_chunk(raw.node.handle, idx, buf.data() + off, buf.size() - off, shape,
                                   &err) != STOWAGE_OK)
          throw std::runtime_error(err.message);
        off += shape[0] * shape[1] * 8;
      }
  });
  stowage::Registry::global().set_threads(kThreads);
  double t_api = best_of(3, [&] { a.read({0, 0}, {kDenseRows, kDenseCols}, buf.data()); });
  stowage::Registry::global().set_threads(1);
  double t_api1 = best_of(3, [&] { a.read({0, 0}, {kDenseRows, kDenseCols}, buf.data()); });
  stowage::Registry::global().set_threads(kThreads);
  std::printf("dense %llu x %llu float64 (%.0f MB, tiles of %llu x %llu):\n",
              (unsigned long long)kDenseRows, (unsigned long long)kDenseCols, mb,
              (unsigned long long)tile_rows, (unsigned long long)tile_cols);
  std::printf("  page cache pread, 1 thread   %8.0f MB/s\n", mb / t_cache);
  std::printf("  page cache pread, %u threads  %8.0f MB/s\n", kThreads, mb / t_cacheN);
  std::printf("  plugin read_chunk, 1 thread  %8.0f MB/s  (%3.0f%% of 1-thread pread)\n",
              mb / t_plugin, 100 * t_cache / t_plugin);
  std::printf(
      "  api Array::read, 1 thread    %8.0f MB/s  (%3.0f%% of 1-thread pread; includes the F->C transpose)\n",
      mb / t_api1, 100 * t_cache / t_api1);
  std::printf(
      "  api Array::read, %u threads   %8.0f MB/s  (%3.0f%% of %u-thread pread; includes the F->C transpose)\n",
      kThreads, mb / t_api, 100 * t_cacheN / t_api, kThreads);
}

void bench_sparse(const std::string& repo) {
  std::string node = "matrices/obs/var/sparse";
  std::string base = repo + "/" + node;
  std::vector<std::string> files = {base + ".colptr", base + ".rowval", base + ".nzval"};
  double mb = total_size(files) / 1e6;
  std::vector<char> buf(total_size(files));
  double t_cache = page_cache_seconds(files, buf),
         t_cacheN = page_cache_seconds(files, buf, kThreads);

  stowage::Store s = stowage::Store::open(repo, stowage::Mode::read, "daf");
  stowage::Sparse sp = s.sparse(node);
  uint64_t nnz = sp.info().nnz;
  RawNode raw(repo, node);
  std::vector<uint64_t> indptr(kSparseCols + 1);
  std::vector<uint32_t> indices(nnz);
  std::vector<double> values(nnz);
  double t_plugin = best_of(3, [&] {
    stowage_error err{};
    if (raw.sparse().read(raw.node.handle, 0, kSparseCols, indptr.data(), indices.data(),
                          values.data(), nnz, &err) != STOWAGE_OK)
      throw std::runtime_error(std::string("read_sparse: ") + err.message);
  });
  if (indptr[kSparseCols] != nnz)
    throw std::runtime_error("read_sparse: indptr does not end at nnz");
  stowage::SparseSlice reused;  // what a streaming reader does: buffers kept across reads
  stowage::Registry::global().set_threads(kThreads);
  double t_api = best_of(3, [&] { sp.read(0, kSparseCols); });
  double t_reuse = best_of(3, [&] { sp.read_into(0, kSparseCols, reused); });
  stowage::Registry::global().set_threads(1);
  double t_api1 = best_of(3, [&] { sp.read(0, kSparseCols); });
  double t_reuse1 = best_of(3, [&] { sp.read_into(0, kSparseCols, reused); });
  stowage::Registry::global().set_threads(kThreads);
  std::printf(
      "sparse %llu x %llu float64, %.0f%% (%llu values, UInt32 indices, %.0f MB on disk):\n",
      (unsigned long long)kSparseRows, (unsigned long long)kSparseCols, kDensity * 100,
      (unsigned long long)nnz, mb);
  std::printf("  page cache pread, 1 thread      %8.0f MB/s\n", mb / t_cache);
  std::printf("  page cache pread, %u threads     %8.0f MB/s\n", kThreads, mb / t_cacheN);
  std::printf(
      "  plugin read_sparse, 1 thread    %8.0f MB/s  (%3.0f%% of 1-thread pread; 1-based -> 0-based, checked)\n",
      mb / t_plugin, 100 * t_cache / t_plugin);
  std::printf(
      "  api Sparse::read, 1 thread      %8.0f MB/s  (%3.0f%% of 1-thread pread; fresh buffers)\n",
      mb / t_api1, 100 * t_cache / t_api1);
  std::printf(
      "  api Sparse::read_into, 1 thread %8.0f MB/s  (%3.0f%% of 1-thread pread; reused buffers)\n",
      mb / t_reuse1, 100 * t_cache / t_reuse1);
  std::printf(
      "  api Sparse::read, %u threads     %8.0f MB/s  (%3.0f%% of %u-thread pread; fresh buffers)\n",
      kThreads, mb / t_api, 100 * t_cacheN / t_api, kThreads);
  std::printf(
      "  api Sparse::read_into, %u threads%8.0f MB/s  (%3.0f%% of %u-thread pread; reused buffers)\n",
      kThreads, mb / t_reuse, 100 * t_cacheN / t_reuse, kThreads);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp";
  std::string repo = dir + "/daf_bench.daf";
  std::printf(
      "Rules (every read figure; the write and close lines are one run): best of 3 runs; warm\n"
      "page cache (the files were just written); each figure compared with the pread on the same\n"
      "number of threads (1 or %u).\n",
      kThreads);
  try {
    write_repository(repo);
    bench_dense(repo);
    bench_sparse(repo);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "daf_bench: %s\n", e.what());
    return 1;
  }
  fs::remove_all(repo);
  return 0;
}
