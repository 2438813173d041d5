// N5 benchmark (issue 4): a 256x512x512 uint16 volume in 64^3 chunks,
// written and read whole for raw, gzip 6, zstd 3, blosc lz4 shuffle 5 and
// lz4, on 1 and 2 threads; 1000 random single-chunk reads; rewriting an
// existing dataset. In the same run the limits (the codec alone on the same
// chunks in memory; one pass of reading the chunk files and decoding them;
// one pass of encoding and creating them) and the same workload through
// zarr-python's N5FSStore (peer_zarr_n5.py). Every figure is the best of
// --runs runs (default 3). Prints a table with ratios. Never run by the tests.
//
// Built with -Dz5_include=DIR, the same workload through z5 (C++) in this
// process follows as a second table (z5_peer.cpp; raw, gzip, zstd, blosc).
//
// Usage: n5_bench [--dir DIR] [--codecs raw,gzip,...,bzip2,xz] [--runs N] [--clock wall|cpu]
// [--no-peer]
//                 [--no-zarr]   (--no-peer: neither zarr-python nor z5; --no-zarr: z5 only)
// (meson: `ninja -C build bench-n5` runs it with the build tree's plugins)
#include <stowage/stowage.hpp>

#include "n5_volume.hpp"

#ifdef STOWAGE_BENCH_Z5
#include "z5_peer.hpp"
#endif

#include <fcntl.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;

const std::vector<uint64_t>& kShape = bench::kVolumeShape;
const std::vector<uint64_t>& kChunks = bench::kVolumeChunks;
const double kMB = 1e6;
const double kVolumeBytes = 256.0 * 512 * 512 * 2;

struct CodecCase {
  std::string name;
  json config;
};

// The workload; bzip2 and xz (N5's defaults: blockSize 9, preset 6)
// only when asked for with --codecs: each takes minutes, and like gzip and
// zstd they measure a codec-bound read.
std::vector<CodecCase> all_codecs() {
  return {{"raw", {{"type", "raw"}}},
          {"gzip", {{"type", "gzip"}, {"level", 6}}},
          {"zstd", {{"type", "zstd"}, {"level", 3}}},
          {"blosc", {{"type", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}}},
          {"lz4", {{"type", "lz4"}}},
          {"bzip2", {{"type", "bzip2"}, {"blockSize", 9}}},
          {"xz", {{"type", "xz"}, {"preset", 6}}}};
}
const char* const kDefaultCodecs = "raw,gzip,zstd,blosc,lz4";

// The codec configuration the N5 plugin writes with: blosc gets the element
// size (2) as its typesize when the dataset names none (plugins/formats/n5/
// store.cpp), so the limits must encode with it too; typesize 1 would make
// shuffle a no-op and time a different encode.
json as_written(const CodecCase& c) {
  json config = c.config;
  if (config["type"] == "blosc" && !config.contains("typesize")) config["typesize"] = 2;
  return config;
}

// --clock cpu times every figure, ours and zarr-python's, in this process's
// CPU time (user + system, all its threads) instead of wall time: on a loaded
// machine that is the steadier yardstick for one-thread figures (two-thread
// figures then sum both cores' time, so 2t/1t means little).
bool kCpuClock = false;
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
template <class F>
double seconds(F&& f) {
  if (kCpuClock) {
    double c0 = cpu_now();
    f();
    return cpu_now() - c0;
  }
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every figure, ours, the limits' and zarr-python's, is the best of kRuns
// timed runs (--runs, default 3): ratios compare like with like, and a single
// run swings by 20-30% on a shared VM.
int kRuns = 3;
template <class F>
double best_of_runs(F&& f) {
  double best = 1e30;
  for (int i = 0; i < kRuns; ++i) best = std::min(best, seconds(f));
  return best;
}

using bench::make_volume;  // bench/support/n5_volume.hpp

// Every chunk of the volume as N5 stores it: C order inside the chunk, big-endian.
std::vector<std::vector<uint8_t>> big_endian_chunks(const std::vector<uint16_t>& vol) {
  std::vector<std::vector<uint8_t>> out;
  for (uint64_t cz = 0; cz < kShape[0]; cz += 64)
    for (uint64_t cy = 0; cy < kShape[1]; cy += 64)
      for (uint64_t cx = 0; cx < kShape[2]; cx += 64) {
        std::vector<uint8_t> c(64 * 64 * 64 * 2);
        size_t k = 0;
        for (uint64_t z = cz; z < cz + 64; ++z)
          for (uint64_t y = cy; y < cy + 64; ++y)
            for (uint64_t x = cx; x < cx + 64; ++x) {
              uint16_t v = vol[(z * kShape[1] + y) * kShape[2] + x];
              c[k++] = uint8_t(v >> 8);
              c[k++] = uint8_t(v);
            }
        out.push_back(std::move(c));
      }
  return out;
}

std::vector<fs::path> chunk_files(const fs::path& dataset) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dataset))
    if (e.is_regular_file() && e.path().filename() != "attributes.json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

uint64_t bytes_on_disk(const fs::path& dataset) {
  uint64_t n = 0;
  for (const fs::path& f : chunk_files(dataset)) n += fs::file_size(f);
  return n;
}

struct Figures {
  double write1 = 0, write2 = 0, rewrite1 = 0, read1 = 0, read2 = 0, random_us = 0;
  double plugin_read = 0;                  // the plugin's read_chunk alone, no byte swap or scatter
  double plugin_write = 0;                 // the plugin's write_chunk alone, fresh dataset
  double encode = 0, decode = 0;           // the codec alone in memory (raw: the byte swap)
  double read_limit = 0, write_limit = 0;  // one pass each, see read_limit_time / write_limit_time
  uint64_t bytes = 0;
};

// The chunk files' bytes (read once, untimed), for the codec measurements.
std::vector<std::vector<uint8_t>> file_contents(const std::vector<fs::path>& files) {
  std::vector<std::vector<uint8_t>> out;
  for (const fs::path& f : files) {
    std::vector<uint8_t> b(fs::file_size(f));
    int fd = ::open(f.c_str(), O_RDONLY);
    if (::pread(fd, b.data(), b.size(), 0) != ssize_t(b.size())) std::perror("pread");
    ::close(fd);
    out.push_back(std::move(b));
  }
  return out;
}

const size_t kHeader = 4 + 4 * 3;  // an N5 chunk header, 3 dimensions

// Big-endian uint16 to native, `n` bytes.
void swap_copy(const uint8_t* in, size_t n, uint8_t* out) {
  uint16_t* d = reinterpret_cast<uint16_t*>(out);
  for (size_t k = 0; k < n / 2; ++k) d[k] = uint16_t(in[2 * k] << 8 | in[2 * k + 1]);
}

// The read limit, one pass doing a reader's work with nothing of ours: for
// each chunk file open, fstat, pread into one reused buffer, close, then the
// decode (raw: the byte swap) into the chunk's own place of the volume-sized
// `out` (touched beforehand), as a reader's output must reach memory. Our
// read also scatters chunk rows into C order and, for codecs, byte-swaps
// after the decode: that copy is the framework's and is not in the limit.
double read_limit_time(const CodecCase& c, const std::vector<fs::path>& files, size_t chunk_bytes,
                       uint8_t* out) {
  stowage::Codec codec;
  if (c.name != "raw") codec = stowage::Registry::global().codec(as_written(c));
  std::vector<uint8_t> buffer(chunk_bytes * 2 + kHeader);
  return seconds([&] {
    for (size_t i = 0; i < files.size(); ++i) {
      int fd = ::open(files[i].c_str(), O_RDONLY);
      struct stat st;
      ::fstat(fd, &st);
      if (size_t(st.st_size) > buffer.size()) buffer.resize(st.st_size);
      if (::pread(fd, buffer.data(), st.st_size, 0) != st.st_size) std::perror("pread");
      ::close(fd);
      if (c.name == "raw")
        swap_copy(buffer.data() + kHeader, chunk_bytes, out + i * chunk_bytes);
      else
        codec.decode(buffer.data() + kHeader, st.st_size - kHeader, out + i * chunk_bytes,
                     chunk_bytes);
    }
  });
}

// The write limit, one pass: each chunk (big-endian, as N5 stores it) encoded
// into one reused buffer (raw: byte-swapped from the native volume), then
// written as a new file (open, write, close; no header, temp file or rename)
// at `dir`/z/y/x, the directory layout of an N5 dataset (each directory made
// when first needed, as the plugin does); `dir` must not exist yet.
double write_limit_time(const CodecCase& c, const fs::path& dir, const std::vector<uint16_t>& vol,
                        const std::vector<std::vector<uint8_t>>& chunks) {
  stowage::Codec codec;
  if (c.name != "raw") codec = stowage::Registry::global().codec(as_written(c));
  std::vector<uint8_t> buffer(c.name == "raw" ? chunks[0].size() : codec.bound(chunks[0].size()));
  const uint8_t* native = reinterpret_cast<const uint8_t*>(vol.data());
  return seconds([&] {
    for (size_t i = 0; i < chunks.size(); ++i) {
      size_t n = chunks[i].size();
      if (c.name == "raw")
        swap_copy(native + i * n, n, buffer.data());  // same cost as the gather's swap
      else
        n = codec.encode(chunks[i].data(), chunks[i].size(), buffer.data(), buffer.size());
      const fs::path sub = dir / std::to_string(i / 64) / std::to_string(i / 8 % 8);
      if (i % 8 == 0) fs::create_directories(sub);
      std::string p = (sub / std::to_string(i % 8)).string();
      int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (::write(fd, buffer.data(), n) != ssize_t(n)) std::perror("write");
      ::close(fd);
    }
  });
}

// The codec alone on the same chunks in memory, one thread (raw: the byte swap).
double encode_time(const CodecCase& c, const std::vector<std::vector<uint8_t>>& chunks) {
  std::vector<uint8_t> out(chunks[0].size() * 2);
  if (c.name == "raw")
    return seconds([&] {
      for (const auto& chunk : chunks) swap_copy(chunk.data(), chunk.size(), out.data());
    });
  stowage::Codec codec = stowage::Registry::global().codec(as_written(c));
  out.resize(codec.bound(chunks[0].size()));
  return seconds([&] {
    for (const auto& chunk : chunks)
      codec.encode(chunk.data(), chunk.size(), out.data(), out.size());
  });
}
// The codec alone decoding every chunk file's payload into the same
// chunk-sized place (which stays in cache), one thread (raw: the byte swap).
double decode_time(const CodecCase& c, const std::vector<std::vector<uint8_t>>& files,
                   size_t chunk_bytes) {
  std::vector<uint8_t> out(chunk_bytes);
  if (c.name == "raw")
    return seconds([&] {
      for (const auto& f : files) swap_copy(f.data() + kHeader, chunk_bytes, out.data());
    });
  stowage::Codec codec = stowage::Registry::global().codec(as_written(c));
  return seconds([&] {
    for (const auto& f : files)
      codec.decode(f.data() + kHeader, f.size() - kHeader, out.data(), chunk_bytes);
  });
}

// Every chunk through the plugin's read_chunk directly (C ABI), 1 thread:
// what the format costs without the core's byte swap and scatter.
double plugin_read_time(const fs::path& path) {
  const stowage_plugin* plugin = stowage::Registry::global().load("format", "n5");
  auto* vt = static_cast<const stowage_format_vtable*>(plugin->vtable);
  stowage_store_handle store = nullptr;
  stowage_error err{};
  std::string p = path.string();
  if (vt->open(stowage::Registry::global().host(), p.data(), p.size(), STOWAGE_MODE_READ, "{}", 2,
               &store, &err) != STOWAGE_OK)
    throw std::runtime_error(err.message);
  stowage_node node{sizeof(stowage_node), 0, nullptr, nullptr};
  if (vt->open_node(store, "vol", 3, &node, &err) != STOWAGE_OK)
    throw std::runtime_error(err.message);
  auto* array = static_cast<const stowage_array_vtable*>(node.table);
  // Each chunk into its own place of a volume-sized buffer (touched
  // beforehand), as in the read limit.
  const size_t chunk_bytes = 64 * 64 * 64 * 2;
  std::vector<uint8_t> buf(256 * chunk_bytes, 1);
  uint64_t shape[3];
  double t = best_of_runs([&] {
    size_t k = 0;
    for (uint64_t z = 0; z < 4; ++z)
      for (uint64_t y = 0; y < 8; ++y)
        for (uint64_t x = 0; x < 8; ++x, ++k) {
          uint64_t idx[3] = {z, y, x};
          if (array->read_chunk(node.handle, idx, buf.data() + k * chunk_bytes, chunk_bytes, shape,
                                &err) != STOWAGE_OK)
            throw std::runtime_error(err.message);
        }
  });
  vt->close_node(store, node.handle);
  vt->close(store, &err);
  return t;
}

// Every chunk through the plugin's write_chunk directly into a fresh
// dataset at `path` (which must not exist), 1 thread: the format's write cost
// without the core's gather.
double plugin_write_time(const fs::path& path, const json& desc,
                         const std::vector<std::vector<uint8_t>>& chunks) {
  {
    stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::truncate, "n5");
    s.create("vol", desc);
    s.close();
  }
  const stowage_plugin* plugin = stowage::Registry::global().load("format", "n5");
  auto* vt = static_cast<const stowage_format_vtable*>(plugin->vtable);
  stowage_store_handle store = nullptr;
  stowage_error err{};
  std::string p = path.string();
  if (vt->open(stowage::Registry::global().host(), p.data(), p.size(), STOWAGE_MODE_UPDATE, "{}", 2,
               &store, &err) != STOWAGE_OK)
    throw std::runtime_error(err.message);
  stowage_node node{sizeof(stowage_node), 0, nullptr, nullptr};
  if (vt->open_node(store, "vol", 3, &node, &err) != STOWAGE_OK)
    throw std::runtime_error(err.message);
  auto* array = static_cast<const stowage_array_vtable*>(node.table);
  uint64_t shape[3] = {64, 64, 64};
  double t = seconds([&] {
    size_t k = 0;
    for (uint64_t z = 0; z < 4; ++z)
      for (uint64_t y = 0; y < 8; ++y)
        for (uint64_t x = 0; x < 8; ++x, ++k) {
          uint64_t idx[3] = {z, y, x};
          if (array->write_chunk(node.handle, idx, chunks[k].data(), chunks[k].size(), shape,
                                 &err) != STOWAGE_OK)
            throw std::runtime_error(err.message);
        }
  });
  vt->close_node(store, node.handle);
  vt->close(store, &err);
  return t;
}

// The 1000 chunks (grid coordinates) of the random-chunk figure, ours and z5's.
const std::vector<std::vector<uint64_t>>& random_chunks() {
  static const std::vector<std::vector<uint64_t>> picks = [] {
    std::mt19937 rng(1);
    std::vector<std::vector<uint64_t>> p;
    for (int i = 0; i < 1000; ++i) p.push_back({rng() % 4, rng() % 8, rng() % 8});
    return p;
  }();
  return picks;
}

// Every fresh write (ours, the plugin's, the limit's) goes to a directory
// that never existed: ext4 here is slow to create files right after deleting
// others (see bench/convert), which would time the deletion.
Figures run_codec(const CodecCase& c, const fs::path& dir, const std::vector<uint16_t>& vol,
                  const std::vector<std::vector<uint8_t>>& chunks) {
  Figures f;
  fs::path path = dir / ("stowage-" + c.name + ".n5");
  int fresh_id = 0;
  std::vector<fs::path> scratch;
  auto fresh_path = [&] {
    scratch.push_back(dir / ("fresh-" + c.name + "-" + std::to_string(fresh_id++)));
    return scratch.back();
  };
  std::vector<uint64_t> origin = {0, 0, 0};
  json desc = {{"kind", "array"},
               {"dtype", "uint16"},
               {"shape", kShape},
               {"chunks", kChunks},
               {"codec", c.config}};
  auto fresh_write = [&](unsigned threads) {
    stowage::Registry::global().set_threads(threads);
    stowage::Store s = stowage::Store::open(fresh_path().string(), stowage::Mode::truncate, "n5");
    s.create("vol", desc);
    stowage::Array a = s.array("vol");
    double t = seconds([&] { a.write(origin, kShape, vol.data()); });
    s.close();
    stowage::Registry::global().set_threads(1);
    return t;
  };
  // The fresh writes and their limit interleaved kRuns times, the best of
  // each: writes are bound by the page cache's write-back, which drifts.
  // Each round starts with a different one, so none always goes first.
  f.plugin_write = f.write_limit = f.write1 = f.write2 = 1e30;
  const std::function<void()> writes[] = {
      [&] {
        f.plugin_write = std::min(f.plugin_write, plugin_write_time(fresh_path(), desc, chunks));
      },
      [&] {
        f.write_limit = std::min(f.write_limit, write_limit_time(c, fresh_path(), vol, chunks));
      },
      [&] { f.write1 = std::min(f.write1, fresh_write(1)); },
      [&] { f.write2 = std::min(f.write2, fresh_write(2)); }};
  for (int i = 0; i < kRuns; ++i)
    for (int j = 0; j < 4; ++j) writes[(i + j) % 4]();
  {
    {  // the dataset the reads and rewrites use, published when closed
      stowage::Store w = stowage::Store::open(path.string(), stowage::Mode::truncate, "n5");
      w.create("vol", desc);
      w.array("vol").write(origin, kShape, vol.data());
      w.close();
    }
    stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::update, "n5");
    stowage::Array a = s.array("vol");
    f.rewrite1 = best_of_runs([&] { a.write(origin, kShape, vol.data()); });
    std::vector<uint16_t> back(vol.size());
    a.read(origin, kShape, back.data());  // warm the page cache and check
    if (back != vol) std::cerr << c.name << ": read back differs!\n";
    // read1 and its limit interleaved kRuns times, the best of each: the
    // machine's speed drifts by 20-30% over seconds.
    const std::vector<fs::path> files = chunk_files(path / "vol");
    const std::vector<std::vector<uint8_t>> contents = file_contents(files);
    const size_t chunk_bytes = chunks[0].size();
    std::vector<uint8_t> decoded(contents.size() * chunk_bytes,
                                 1);  // touched: no page faults timed
    f.read1 = f.read_limit = 1e30;
    for (int round = 0; round < kRuns; ++round) {
      f.read1 = std::min(f.read1, seconds([&] { a.read(origin, kShape, back.data()); }));
      f.read_limit = std::min(f.read_limit, read_limit_time(c, files, chunk_bytes, decoded.data()));
    }
    stowage::Registry::global().set_threads(2);
    f.read2 = best_of_runs([&] { a.read(origin, kShape, back.data()); });
    stowage::Registry::global().set_threads(1);
    std::vector<uint16_t> one(64 * 64 * 64);
    f.random_us = best_of_runs([&] {
                    for (const std::vector<uint64_t>& c : random_chunks()) {
                      std::vector<uint64_t> at = {c[0] * 64, c[1] * 64, c[2] * 64};
                      a.read(at, kChunks, one.data());
                    }
                  }) /
                  1000 * 1e6;
    s.close();
    f.decode = 1e30;
    for (int i = 0; i < kRuns; ++i)
      f.decode = std::min(f.decode, decode_time(c, contents, chunk_bytes));
  }
  f.plugin_read = plugin_read_time(path);
  f.bytes = bytes_on_disk(path / "vol");
  f.encode = 1e30;
  for (int i = 0; i < kRuns; ++i) f.encode = std::min(f.encode, encode_time(c, chunks));
  fs::remove_all(path);
  for (const fs::path& p : scratch) fs::remove_all(p);
  return f;
}

std::map<std::string, json> run_peer(const fs::path& dir, const std::vector<CodecCase>& codecs) {
  std::map<std::string, json> out;
  const char* src = std::getenv("STOWAGE_SOURCE_ROOT");
  fs::path script = fs::path(src ? src : ".") / "bench" / "n5" / "peer_zarr_n5.py";
  const char* py = std::getenv("STOWAGE_PYTHON");
  std::string cmd = std::string(py ? py : "/usr/bin/python3") + " " + script.string() + " --runs " +
                    std::to_string(kRuns) + (kCpuClock ? " --cpu" : "") + " " + dir.string();
  for (const auto& c : codecs)
    if (c.name != "lz4") cmd += " " + c.name;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.contains("codec")) out[j["codec"].get<std::string>()] = j;
  }
  if (::pclose(p) != 0) std::cerr << "peer_zarr_n5.py failed (" << cmd << ")\n";
  return out;
}

double mbs(double secs) { return secs > 0 ? kVolumeBytes / kMB / secs : 0; }

#ifdef STOWAGE_BENCH_Z5
// z5 (C++, header-only, built with -Dz5_include) in this process on the same
// volume, chunks, codecs and random chunks, one thread, best of kRuns.
void run_and_print_z5(const fs::path& dir, const std::vector<CodecCase>& codecs,
                      const std::vector<uint16_t>& vol,
                      const std::map<std::string, Figures>& ours) {
  std::map<std::string, std::string> configs;
  for (const auto& c : codecs) configs[c.name] = as_written(c).dump();
  std::map<std::string, z5_peer::Figures> z5 =
      z5_peer::run(dir.string(), vol, configs, random_chunks(), kRuns, kCpuClock);
  std::printf(
      "\nz5 (C++, same process, one thread, best of %d; %s); MB/s of uncompressed data, chunk in us\n",
      kRuns, kCpuClock ? "CPU time" : "wall time");
  std::printf("%-6s | %7s %7s %9s | %7s %7s %9s | %6s %6s %6s | %6s %6s\n", "codec", "write1",
              "read1", "chunk_us", "z5W", "z5R", "z5chunk", "W/z5", "R/z5", "C/z5", "ratio",
              "z5rat");
  for (const auto& c : codecs) {
    if (!z5.count(c.name)) continue;
    const Figures& f = ours.at(c.name);
    const z5_peer::Figures& z = z5.at(c.name);
    std::printf("%-6s | %7.0f %7.0f %9.0f | %7.0f %7.0f %9.0f | %6.2f %6.2f %6.2f | %6.2f %6.2f\n",
                c.name.c_str(), mbs(f.write1), mbs(f.read1), f.random_us, mbs(z.write_s),
                mbs(z.read_s), z.random_chunk_us, z.write_s / f.write1, z.read_s / f.read1,
                z.random_chunk_us / f.random_us, kVolumeBytes / double(f.bytes),
                kVolumeBytes / double(z.bytes));
  }
  std::printf(
      "W/z5, R/z5: our write1/read1 over z5's (above 1: we are faster); C/z5: z5's random chunk time over\n"
      "ours; ratio, z5rat: uncompressed/stored, ours and z5's. z5 writes with writeSubarray into a dataset\n"
      "just created (as our write1), reads with readSubarray (whole volume; each random chunk).\n");
}
#endif

void print_rules() {
  std::printf("Clock: %s\n",
              kCpuClock ? "CPU time of each process (user + system, all threads), not wall time"
                        : "wall time");
  std::printf(
      "Rules (every column): best of %d timed runs, ours, the limits' and zarr-python's alike;\n"
      "1 thread unless the column says 2 (zarr-python: its defaults, numcodecs runs c-blosc on its own\n"
      "threads; zarrR1 without them); reads warm (page cache, after one untimed read), writes into\n"
      "directories that never existed (rewrt1: over the existing dataset), no sync.\n",
      kRuns);
}

void print_table(const std::vector<CodecCase>& codecs, const std::map<std::string, Figures>& ours,
                 const std::map<std::string, json>& peer) {
  std::printf(
      "\nN5 workload: 256x512x512 uint16 (%.0f MB), 64^3 chunks; MB/s of uncompressed data\n",
      kVolumeBytes / kMB);
  print_rules();
  std::printf(
      "%-6s %6s | %7s %7s %7s %7s %7s | %7s %7s %7s | %9s | %7s %7s %7s | %7s %7s %7s | %6s %6s %6s %6s %6s %6s\n",
      "codec", "ratio", "write1", "write2", "rewrt1", "plugin", "wlimit", "read1", "read2",
      "plugin", "chunk_us", "enc", "dec", "rlimit", "zarrW", "zarrR", "zarrR1", "W/lim", "R/lim",
      "P/lim", "W/zarr", "R/zarr", "2t/1t");
  for (const auto& c : codecs) {
    const Figures& f = ours.at(c.name);
    double zw = 0, zr = 0, zr1 = 0;
    if (peer.count(c.name)) {
      const json& z = peer.at(c.name);
      zw = mbs(z["write_s"].get<double>());
      zr = mbs(z["read_s"].get<double>());
      zr1 = z.contains("read_1thread_s") ? mbs(z["read_1thread_s"].get<double>()) : zr;
    }
    std::printf(
        "%-6s %6.2f | %7.0f %7.0f %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f | %9.0f | %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f | %6.2f %6.2f %6.2f %6.1f %6.1f %6.2f\n",
        c.name.c_str(), kVolumeBytes / double(f.bytes), mbs(f.write1), mbs(f.write2),
        mbs(f.rewrite1), mbs(f.plugin_write), mbs(f.write_limit), mbs(f.read1), mbs(f.read2),
        mbs(f.plugin_read), f.random_us, mbs(f.encode), mbs(f.decode), mbs(f.read_limit), zw, zr,
        zr1, f.write_limit / f.write1, f.read_limit / f.read1, f.read_limit / f.plugin_read,
        zw > 0 ? mbs(f.write1) / zw : 0.0, zr1 > 0 ? mbs(f.read1) / zr1 : 0.0,
        f.read2 > 0 ? f.read1 / f.read2 : 0.0);
  }
  std::printf(
      "\nratio: uncompressed/stored; write1/write2: fresh dataset on 1/2 threads; rewrt1: overwriting\n"
      "every chunk of the existing dataset (rename over an existing file) on 1 thread; chunk_us: mean\n"
      "of 1000 random 64^3 chunk reads through Array::read, 1 thread; enc/dec: the codec alone on the\n"
      "same chunks in memory, 1 thread, blosc with typesize 2 as the plugin writes it (raw: the byte\n"
      "swap); wlimit: one pass encoding each chunk (raw: byte swap) and creating its file\n"
      "(open/write/close in z/y/x directories, no header, temp file or rename); rlimit: one pass reading each chunk file\n"
      "(open/fstat/pread/close) and decoding it (raw: byte-swapping it) to its own place in a\n"
      "volume-sized buffer; not in it: our scatter into C order and, for codecs, the byte swap after\n"
      "the decode; plugin: the plugin's write_chunk / read_chunk alone (C ABI, no swap, gather or\n"
      "scatter; each chunk read to its own place, as in rlimit), 1 thread; writes and wlimit are\n"
      "interleaved run by run, as are read1 and rlimit; W/lim, R/lim, P/lim: write1, read1 and the plugin's read against the limits\n"
      "(above 1: faster than the limit); W/zarr: write1 over zarr-python's write; R/zarr: read1 over\n"
      "zarr-python's one-thread read (zarrR1); 2t/1t: read speed-up with 2 threads.\n");
  for (const auto& c : codecs)
    if (peer.count(c.name))
      std::printf("zarr %-6s random chunk %.0f us\n", c.name.c_str(),
                  peer.at(c.name)["random_chunk_us"].get<double>());
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = fs::temp_directory_path() / "stowage-n5-bench";
  std::string only;
  bool peer = true, zarr_peer = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--codecs" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--no-peer")
      peer = false;
    else if (a == "--no-zarr")
      zarr_peer = false;
    else if (a == "--runs" && i + 1 < argc)
      kRuns = std::max(1, std::atoi(argv[++i]));
    else if (a == "--clock" && i + 1 < argc)
      kCpuClock = std::string(argv[++i]) == "cpu";
    else {
      std::cerr
          << "usage: n5_bench [--dir DIR] [--codecs raw,gzip,zstd,blosc,lz4,bzip2,xz] [--runs N] [--clock wall|cpu] [--no-peer] [--no-zarr]\n"
             "(default: "
          << kDefaultCodecs << ")\n";
      return 2;
    }
  }
  if (only.empty()) only = kDefaultCodecs;
  std::vector<CodecCase> codecs;
  for (const auto& c : all_codecs())
    if (("," + only + ",").find("," + c.name + ",") != std::string::npos) codecs.push_back(c);
  fs::create_directories(dir);
  print_rules();
  std::fflush(stdout);
  try {
    std::vector<uint16_t> vol = make_volume();
    std::vector<std::vector<uint8_t>> chunks = big_endian_chunks(vol);
    std::map<std::string, Figures> ours;
    for (const auto& c : codecs) {
      std::cerr << "stowage " << c.name << "...\n";
      ours[c.name] = run_codec(c, dir, vol, chunks);
    }
    std::map<std::string, json> zarr;
    if (peer && zarr_peer) {
      std::cerr << "zarr-python peer...\n";
      zarr = run_peer(dir, codecs);
    }
    print_table(codecs, ours, zarr);
#ifdef STOWAGE_BENCH_Z5
    if (peer) {
      std::cerr << "z5 peer...\n";
      run_and_print_z5(dir, codecs, vol, ours);
    }
#endif
  } catch (const std::exception& e) {
    std::cerr << "n5_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
