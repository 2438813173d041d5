// N5 benchmark (issue 4): a 256x512x512 uint16 volume in 64^3 chunks,
// written and read whole for raw, gzip 6, zstd 3, blosc lz4 shuffle 5 and
// lz4, on 1 and 2 threads; 1000 random single-chunk reads; rewriting an
// existing dataset. In the same run the limits (the codec alone on the same
// chunks in memory, page-cache read of the chunk files, byte swap) and the
// same workload through zarr-python's N5FSStore (peer_zarr_n5.py). Prints a
// table with ratios. Never run by the tests.
//
// Usage: n5_bench [--dir DIR] [--codecs raw,gzip,...,bzip2,xz] [--no-peer]
// (meson: `ninja -C build bench-n5` runs it with the build tree's plugins)
#include <stowage/stowage.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;

const std::vector<uint64_t> kShape = {256, 512, 512};
const std::vector<uint64_t> kChunks = {64, 64, 64};
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

template <class F>
double seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The best of three timings: reads and their limits are compared as ratios,
// and a single run of either swings by 20-30% on a shared VM.
template <class F>
double best_of_3(F&& f) {
  return std::min({seconds(f), seconds(f), seconds(f)});
}

// The same values as peer_zarr_n5.py: a smooth field plus 6 bits of noise.
std::vector<uint16_t> make_volume() {
  std::vector<uint16_t> v(kShape[0] * kShape[1] * kShape[2]);
  size_t i = 0;
  for (uint32_t z = 0; z < kShape[0]; ++z)
    for (uint32_t y = 0; y < kShape[1]; ++y)
      for (uint32_t x = 0; x < kShape[2]; ++x) {
        uint32_t noise = ((z * 73856093u) ^ (y * 19349663u) ^ (x * 83492791u)) & 0x3f;
        v[i++] = uint16_t(z * 3 + y * 2 + x + noise);
      }
  return v;
}

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
  double plugin_read = 0;   // the plugin's read_chunk alone, no byte swap or scatter
  double plugin_write = 0;  // the plugin's write_chunk alone, fresh dataset
  double encode = 0, decode = 0, page_cache = 0, swap = 0;
  double decode_to_memory = 0;  // the decode with each chunk's output kept (a volume-sized buffer)
  double file_create = 0;  // writing the same chunk files new, in place, no rename
  uint64_t bytes = 0;
};

// Reads every chunk file once (open, fstat, pread into one reused buffer,
// close), as a reader must: the page-cache limit. With `contents`, keeps a
// copy of each file for the codec measurement.
double page_cache_read(const std::vector<fs::path>& files, std::vector<std::vector<uint8_t>>* contents = nullptr) {
  std::vector<uint8_t> buffer(64 * 64 * 64 * 2 * 2);
  if (contents) contents->assign(files.size(), {});
  return seconds([&] {
    for (size_t i = 0; i < files.size(); ++i) {
      int fd = ::open(files[i].c_str(), O_RDONLY);
      struct stat st;
      ::fstat(fd, &st);
      if (size_t(st.st_size) > buffer.size()) buffer.resize(st.st_size);
      if (::pread(fd, buffer.data(), st.st_size, 0) != st.st_size) std::perror("pread");
      ::close(fd);
      if (contents) (*contents)[i].assign(buffer.begin(), buffer.begin() + st.st_size);
    }
  });
}

// Writes the chunk files' bytes as new files (open, write, close; no temp
// file, no rename, no encoding): the file-system limit of a fresh write.
double file_create_time(const fs::path& dir, const std::vector<std::vector<uint8_t>>& files) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  double t = seconds([&] {
    for (size_t i = 0; i < files.size(); ++i) {
      std::string p = (dir / std::to_string(i)).string();
      int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (::write(fd, files[i].data(), files[i].size()) != ssize_t(files[i].size())) std::perror("write");
      ::close(fd);
    }
  });
  fs::remove_all(dir);
  return t;
}

double swap_time(std::vector<uint16_t> data) {
  return seconds([&] {
    for (uint16_t& v : data) v = __builtin_bswap16(v);
  });
}

// The codec alone on the same chunks in memory, one thread.
double encode_time(const CodecCase& c, const std::vector<std::vector<uint8_t>>& chunks) {
  stowage::Codec codec = stowage::Registry::global().codec(c.config);
  std::vector<uint8_t> out(codec.bound(chunks[0].size()));
  return seconds([&] {
    for (const auto& chunk : chunks) codec.encode(chunk.data(), chunk.size(), out.data(), out.size());
  });
}
// The codec alone decoding every chunk into `out`: with `stride` 0 into the
// same chunk-sized place (which stays in cache), with the chunk size each
// chunk into its own place of a volume-sized buffer, as a reader's output
// must land somewhere in memory. `out` is the caller's, touched beforehand,
// so page faults are not timed.
double decode_time(const CodecCase& c, const std::vector<std::vector<uint8_t>>& files, size_t chunk_bytes,
                   uint8_t* out, size_t stride) {
  stowage::Codec codec = stowage::Registry::global().codec(c.config);
  const size_t header = 4 + 4 * 3;
  return seconds([&] {
    for (size_t i = 0; i < files.size(); ++i)
      codec.decode(files[i].data() + header, files[i].size() - header, out + i * stride, chunk_bytes);
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
  if (vt->open(p.data(), p.size(), STOWAGE_MODE_READ, "{}", 2, &store, &err) != STOWAGE_OK)
    throw std::runtime_error(err.message);
  std::vector<uint8_t> buf(64 * 64 * 64 * 2);
  uint64_t shape[3];
  double t = best_of_3([&] {
    for (uint64_t z = 0; z < 4; ++z)
      for (uint64_t y = 0; y < 8; ++y)
        for (uint64_t x = 0; x < 8; ++x) {
          uint64_t idx[3] = {z, y, x};
          if (vt->read_chunk(store, "vol", 3, idx, buf.data(), buf.size(), shape, &err) != STOWAGE_OK)
            throw std::runtime_error(err.message);
        }
  });
  vt->close(store, &err);
  return t;
}

// Every chunk through the plugin's write_chunk directly into a fresh
// dataset, 1 thread: the format's write cost without the core's gather.
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
  if (vt->open(p.data(), p.size(), STOWAGE_MODE_UPDATE, "{}", 2, &store, &err) != STOWAGE_OK)
    throw std::runtime_error(err.message);
  uint64_t shape[3] = {64, 64, 64};
  double t = seconds([&] {
    size_t k = 0;
    for (uint64_t z = 0; z < 4; ++z)
      for (uint64_t y = 0; y < 8; ++y)
        for (uint64_t x = 0; x < 8; ++x, ++k) {
          uint64_t idx[3] = {z, y, x};
          if (vt->write_chunk(store, "vol", 3, idx, chunks[k].data(), chunks[k].size(), shape, &err) != STOWAGE_OK)
            throw std::runtime_error(err.message);
        }
  });
  vt->close(store, &err);
  return t;
}

Figures run_codec(const CodecCase& c, const fs::path& dir, const std::vector<uint16_t>& vol,
                  const std::vector<std::vector<uint8_t>>& chunks) {
  Figures f;
  std::vector<std::vector<uint8_t>> contents;  // the chunk files' bytes
  fs::path path = dir / ("stowage-" + c.name + ".n5");
  std::vector<uint64_t> origin = {0, 0, 0};
  json desc = {{"kind", "array"}, {"dtype", "uint16"}, {"shape", kShape}, {"chunks", kChunks}, {"codec", c.config}};
  auto fresh_write = [&](unsigned threads) {
    stowage::Registry::global().set_threads(threads);
    stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::truncate, "n5");
    s.create("vol", desc);
    stowage::Array a = s.array("vol");
    double t = seconds([&] { a.write(origin, kShape, vol.data()); });
    s.close();
    return t;
  };
  f.plugin_write = plugin_write_time(path, desc, chunks);
  f.write2 = fresh_write(2);
  f.write1 = fresh_write(1);
  {
    stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::update, "n5");
    stowage::Array a = s.array("vol");
    f.rewrite1 = seconds([&] { a.write(origin, kShape, vol.data()); });
    std::vector<uint16_t> back(vol.size());
    a.read(origin, kShape, back.data());  // warm the page cache and check
    if (back != vol) std::cerr << c.name << ": read back differs!\n";
    // read1 and its limit (page-cache read plus swap or decode) interleaved
    // five times, the best of each: the machine's speed drifts by 20-30%
    // over seconds, and the ratio should compare like with like.
    const std::vector<fs::path> files = chunk_files(path / "vol");
    page_cache_read(files, &contents);
    const size_t chunk_bytes = chunks[0].size();
    std::vector<uint8_t> decoded(c.name == "raw" ? 0 : contents.size() * chunk_bytes);
    f.read1 = f.page_cache = f.decode = f.decode_to_memory = f.swap = 1e30;
    for (int round = 0; round < 5; ++round) {
      f.read1 = std::min(f.read1, seconds([&] { a.read(origin, kShape, back.data()); }));
      f.page_cache = std::min(f.page_cache, page_cache_read(files));
      if (c.name == "raw") f.swap = std::min(f.swap, swap_time(vol));
      else {
        f.decode = std::min(f.decode, decode_time(c, contents, chunk_bytes, decoded.data(), 0));
        f.decode_to_memory =
            std::min(f.decode_to_memory, decode_time(c, contents, chunk_bytes, decoded.data(), chunk_bytes));
      }
    }
    stowage::Registry::global().set_threads(2);
    f.read2 = best_of_3([&] { a.read(origin, kShape, back.data()); });
    stowage::Registry::global().set_threads(1);
    std::mt19937 rng(1);
    std::vector<uint16_t> one(64 * 64 * 64);
    f.random_us = seconds([&] {
      for (int i = 0; i < 1000; ++i) {
        std::vector<uint64_t> at = {rng() % 4 * 64, rng() % 8 * 64, rng() % 8 * 64};
        a.read(at, kChunks, one.data());
      }
    }) / 1000 * 1e6;
    s.close();
  }
  f.plugin_read = plugin_read_time(path);
  f.bytes = bytes_on_disk(path / "vol");
  if (c.name == "raw") f.decode = f.decode_to_memory = 0;
  else f.swap = swap_time(vol);
  f.encode = encode_time(c, chunks);
  f.file_create = file_create_time(dir / "file-create-limit", contents);
  fs::remove_all(path);
  return f;
}

std::map<std::string, json> run_peer(const fs::path& dir, const std::vector<CodecCase>& codecs) {
  std::map<std::string, json> out;
  const char* src = std::getenv("STOWAGE_SOURCE_ROOT");
  fs::path script = fs::path(src ? src : ".") / "bench" / "n5" / "peer_zarr_n5.py";
  const char* py = std::getenv("STOWAGE_PYTHON");
  std::string cmd = std::string(py ? py : "/usr/bin/python3") + " " + script.string() + " " + dir.string();
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

void print_table(const std::vector<CodecCase>& codecs, const std::map<std::string, Figures>& ours,
                 const std::map<std::string, json>& peer) {
  std::printf("\nN5 workload: 256x512x512 uint16 (%.0f MB), 64^3 chunks; MB/s of uncompressed data\n",
              kVolumeBytes / kMB);
  std::printf("%-6s %6s | %7s %7s %7s %7s %7s | %7s %7s %7s | %9s | %7s %7s %7s | %7s %7s | %6s %6s %6s %6s %6s %6s %6s\n",
              "codec", "ratio", "write1", "write2", "rewrt1", "plugin", "wlimit", "read1", "read2", "plugin",
              "chunk_us", "enc", "dec", "rlimit", "zarrW", "zarrR", "W/lim", "R/lim", "R/mem", "P/lim", "W/zarr",
              "R/zarr", "2t/1t");
  for (const auto& c : codecs) {
    const Figures& f = ours.at(c.name);
    // The read limit: page-cache read plus the byte swap (raw) or the decode.
    double limit_s = f.page_cache + (c.name == "raw" ? f.swap : f.decode);
    // The same with the decoded output kept in memory, as a reader's must be.
    double memory_limit_s = f.page_cache + (c.name == "raw" ? f.swap : f.decode_to_memory);
    // The write limit: byte swap (raw) or encode, plus creating the files.
    double wlimit_s = f.file_create + (c.name == "raw" ? f.swap : f.encode);
    double zw = 0, zr = 0;
    if (peer.count(c.name)) {
      zw = mbs(peer.at(c.name)["write_s"].get<double>());
      zr = mbs(peer.at(c.name)["read_s"].get<double>());
    }
    std::printf("%-6s %6.2f | %7.0f %7.0f %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f | %9.0f | %7.0f %7.0f %7.0f | %7.0f %7.0f | %6.2f %6.2f %6.2f %6.2f %6.1f %6.1f %6.2f\n",
                c.name.c_str(), kVolumeBytes / double(f.bytes), mbs(f.write1), mbs(f.write2),
                mbs(f.rewrite1), mbs(f.plugin_write), mbs(wlimit_s), mbs(f.read1), mbs(f.read2),
                mbs(f.plugin_read), f.random_us, mbs(f.encode), mbs(f.decode), mbs(limit_s), zw, zr,
                wlimit_s / f.write1, limit_s / f.read1, memory_limit_s / f.read1, limit_s / f.plugin_read,
                zw > 0 ? mbs(f.write1) / zw : 0.0, zr > 0 ? mbs(f.read1) / zr : 0.0,
                f.read2 > 0 ? f.read1 / f.read2 : 0.0);
  }
  std::printf("\nratio: uncompressed/stored; write1/write2: fresh dataset on 1/2 threads; rewrt1: overwriting\n"
              "every chunk of the existing dataset (rename over an existing file) on 1 thread; chunk_us: mean\n"
              "of 1000 random 64^3 chunk reads through Array::read, 1 thread; enc/dec: the codec alone on the\n"
              "same chunks in memory, 1 thread; wlimit: swap (raw) or encode plus creating the same files\n"
              "(open/write/close, no rename); rlimit: page-cache read of the chunk files plus byte swap (raw)\n"
              "or decode; plugin: the plugin's write_chunk / read_chunk alone (C ABI, no swap, gather or\n"
              "scatter), 1 thread;\n"
              "W/lim, R/lim, P/lim: write1, read1 and the plugin's read against the limits; R/mem: read1 against\n"
              "the read limit with the decode writing each chunk to its own place in a volume-sized buffer (the\n"
              "decoder's output then goes to memory, as a reader's must; dec keeps it in cache); W/zarr, R/zarr:\n"
              "write1, read1 over zarr-python's (its defaults; reads best of 3); 2t/1t: read speed-up with 2 threads.\n");
  for (const auto& c : codecs) {
    if (!peer.count(c.name)) continue;
    const json& z = peer.at(c.name);
    std::printf("zarr %-6s random chunk %.0f us\n", c.name.c_str(), z["random_chunk_us"].get<double>());
    // numcodecs runs c-blosc on two threads by default: the figure without them, too.
    if (z.contains("read_1thread_s")) {
      double z1 = mbs(z["read_1thread_s"].get<double>());
      std::printf("zarr %-6s read with numcodecs.blosc.use_threads=False: %.0f MB/s; read1/that %.1f, read2/that %.1f\n",
                  c.name.c_str(), z1, mbs(ours.at(c.name).read1) / z1, mbs(ours.at(c.name).read2) / z1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = fs::temp_directory_path() / "stowage-n5-bench";
  std::string only;
  bool peer = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--codecs" && i + 1 < argc) only = argv[++i];
    else if (a == "--no-peer") peer = false;
    else {
      std::cerr << "usage: n5_bench [--dir DIR] [--codecs raw,gzip,zstd,blosc,lz4,bzip2,xz] [--no-peer]\n"
                   "(default: " << kDefaultCodecs << ")\n";
      return 2;
    }
  }
  if (only.empty()) only = kDefaultCodecs;
  std::vector<CodecCase> codecs;
  for (const auto& c : all_codecs())
    if (("," + only + ",").find("," + c.name + ",") != std::string::npos) codecs.push_back(c);
  fs::create_directories(dir);
  try {
    std::vector<uint16_t> vol = make_volume();
    std::vector<std::vector<uint8_t>> chunks = big_endian_chunks(vol);
    std::map<std::string, Figures> ours;
    for (const auto& c : codecs) {
      std::cerr << "stowage " << c.name << "...\n";
      ours[c.name] = run_codec(c, dir, vol, chunks);
    }
    std::map<std::string, json> zarr;
    if (peer) {
      std::cerr << "zarr-python peer...\n";
      zarr = run_peer(dir, codecs);
    }
    print_table(codecs, ours, zarr);
  } catch (const std::exception& e) {
    std::cerr << "n5_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
