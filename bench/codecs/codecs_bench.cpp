// Codec benchmark: encode and decode MB/s of every codec plugin through the
// registry (stowage::Codec -> C ABI -> plugin) versus the same library
// called directly the way the plugin calls it, and the per-call dispatch
// overhead of the registry on the raw codec (issue 2).
//
// Inputs: a 64x64x64 uint16 chunk (microscopy-like, seeded) and a 256 KiB
// float64 chunk (a smooth signal with noise). Each figure is the best of
// several timed batches of thread CPU time, registry and direct interleaved,
// so that load from other processes hits both sides alike. MB/s counts
// decoded bytes.
//
// Run: ninja -C <build> bench-codecs   (or the executable with STOWAGE_PLUGIN_PATH set)
#include <stowage/stowage.hpp>

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#ifdef HAVE_LZ4
#include <lz4.h>
#include <xxhash.h>
#endif
#ifdef HAVE_BLOSC
#include <blosc.h>
#endif
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;
// in, in_size, out, out_capacity -> bytes written
using CodecFn = std::function<size_t(const uint8_t*, size_t, uint8_t*, size_t)>;

// Keeps the compiler from dropping work whose result is unused.
inline void escape(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

// ---- inputs ------------------------------------------------------------------------

Bytes microscopy_u16_chunk() {
  std::mt19937 rng(2024);
  std::normal_distribution<double> noise(0.0, 15.0);
  const int n = 64;
  Bytes out(size_t{n} * n * n * 2);
  size_t i = 0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x, ++i) {
        // two cells on a dim background, with shot noise
        double c1 =
            std::exp(-((x - 20) * (x - 20) + (y - 30) * (y - 30) + (z - 25) * (z - 25)) / 120.0);
        double c2 =
            std::exp(-((x - 45) * (x - 45) + (y - 40) * (y - 40) + (z - 40) * (z - 40)) / 60.0);
        double v = std::max(0.0, 110.0 + 1800.0 * c1 + 1200.0 * c2 + noise(rng));
        uint16_t u = static_cast<uint16_t>(std::min(v, 65535.0));
        std::memcpy(&out[2 * i], &u, 2);
      }
  return out;
}

Bytes float64_chunk() {
  std::mt19937 rng(99);
  std::normal_distribution<double> noise(0.0, 0.01);
  Bytes out(256 * 1024);
  for (size_t i = 0; i < out.size() / 8; ++i) {
    double v = std::sin(static_cast<double>(i) * 0.001) * 40.0 + noise(rng);
    std::memcpy(&out[8 * i], &v, 8);
  }
  return out;
}

// ---- the libraries called directly, as the plugins call them -----------------------------

struct DirectCodec {
  CodecFn encode, decode;
  size_t bound;
};

DirectCodec direct_zlib(int level, bool zlib, size_t n) {
  // Reused streams, as the plugin keeps one per thread.
  auto d = std::shared_ptr<z_stream>(new z_stream{}, [](z_stream* z) {
    deflateEnd(z);
    delete z;
  });
  auto i = std::shared_ptr<z_stream>(new z_stream{}, [](z_stream* z) {
    inflateEnd(z);
    delete z;
  });
  deflateInit2(d.get(), level, Z_DEFLATED, zlib ? 15 : 31, 8, Z_DEFAULT_STRATEGY);
  inflateInit2(i.get(), 15 + 32);
  return {[d](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            deflateReset(d.get());
            d->next_in = const_cast<Bytef*>(in);
            d->avail_in = static_cast<uInt>(n);
            d->next_out = out;
            d->avail_out = static_cast<uInt>(cap);
            deflate(d.get(), Z_FINISH);
            return static_cast<size_t>(d->total_out);
          },
#ifdef HAVE_LIBDEFLATE
          // The gzip plugin decodes with libdeflate when it is built with it.
          [zlib, ld = std::shared_ptr<libdeflate_decompressor>(libdeflate_alloc_decompressor(),
                                                               libdeflate_free_decompressor)](
              const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            size_t used = 0, produced = 0;
            if (zlib)
              libdeflate_zlib_decompress_ex(ld.get(), in, n, out, cap, &used, &produced);
            else
              libdeflate_gzip_decompress_ex(ld.get(), in, n, out, cap, &used, &produced);
            return produced;
          },
#else
          [i](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            inflateReset(i.get());
            i->next_in = const_cast<Bytef*>(in);
            i->avail_in = static_cast<uInt>(n);
            i->next_out = out;
            i->avail_out = static_cast<uInt>(cap);
            inflate(i.get(), Z_FINISH);
            return static_cast<size_t>(i->total_out);
          },
#endif
          compressBound(static_cast<uLong>(n)) + 12};
}

DirectCodec direct_bzip2(int block_size, size_t n) {
  return {[block_size](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            unsigned len = static_cast<unsigned>(cap);
            BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out), &len,
                                     const_cast<char*>(reinterpret_cast<const char*>(in)),
                                     static_cast<unsigned>(n), block_size, 0, 0);
            return static_cast<size_t>(len);
          },
          [](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            unsigned len = static_cast<unsigned>(cap);
            BZ2_bzBuffToBuffDecompress(reinterpret_cast<char*>(out), &len,
                                       const_cast<char*>(reinterpret_cast<const char*>(in)),
                                       static_cast<unsigned>(n), 0, 0);
            return static_cast<size_t>(len);
          },
          n + n / 100 + 600};
}

DirectCodec direct_xz(uint32_t preset, size_t n) {
  auto enc = std::shared_ptr<lzma_stream>(new lzma_stream(LZMA_STREAM_INIT), [](lzma_stream* s) {
    lzma_end(s);
    delete s;
  });
  auto dec = std::shared_ptr<lzma_stream>(new lzma_stream(LZMA_STREAM_INIT), [](lzma_stream* s) {
    lzma_end(s);
    delete s;
  });
  auto run = [](lzma_stream* s, const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
    s->next_in = in;
    s->avail_in = n;
    s->next_out = out;
    s->avail_out = cap;
    while (lzma_code(s, LZMA_FINISH) == LZMA_OK) {
    }
    return cap - s->avail_out;
  };
  return {[enc, preset, run](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            if (lzma_easy_encoder(enc.get(), preset, LZMA_CHECK_CRC64) != LZMA_OK) return size_t{0};
            return run(enc.get(), in, n, out, cap);
          },
          [dec, run](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            if (lzma_stream_decoder(dec.get(), UINT64_MAX, 0) != LZMA_OK) return size_t{0};
            return run(dec.get(), in, n, out, cap);
          },
          lzma_stream_buffer_bound(n)};
}

DirectCodec direct_zstd(int level, size_t n) {
  auto c = std::shared_ptr<ZSTD_CCtx>(ZSTD_createCCtx(), ZSTD_freeCCtx);
  auto d = std::shared_ptr<ZSTD_DCtx>(ZSTD_createDCtx(), ZSTD_freeDCtx);
  return {[c, level](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            return ZSTD_compressCCtx(c.get(), out, cap, in, n, level);
          },
          [d](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            return ZSTD_decompressDCtx(d.get(), out, cap, in, n);
          },
          ZSTD_compressBound(n)};
}

#ifdef HAVE_LZ4
// What any LZ4Block writer must do: LZ4-compress each 64 KiB block and
// checksum it with XXH32 (21-byte block headers, as lz4-java frames them).
constexpr size_t kLz4Block = 65536, kLz4Header = 21;
DirectCodec direct_lz4(size_t n) {
  constexpr size_t kBlock = kLz4Block, kHeader = kLz4Header;
  return {[](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            size_t at = 0;
            for (size_t off = 0; off < n; off += kBlock) {
              int len = static_cast<int>(std::min(kLz4Block, n - off));
              uint32_t sum = XXH32(in + off, static_cast<size_t>(len), 0x9747B28C) & 0x0FFFFFFF;
              int c = LZ4_compress_default(reinterpret_cast<const char*>(in + off),
                                           reinterpret_cast<char*>(out + at + kHeader), len,
                                           static_cast<int>(cap - at - kHeader));
              std::memcpy(out + at, &c, 4);
              std::memcpy(out + at + 4, &len, 4);
              std::memcpy(out + at + 8, &sum, 4);
              at += kHeader + static_cast<size_t>(c);
            }
            return at;
          },
          [](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            size_t at = 0, written = 0;
            while (at + kHeader <= n) {
              int c, len;
              uint32_t sum;
              std::memcpy(&c, in + at, 4);
              std::memcpy(&len, in + at + 4, 4);
              std::memcpy(&sum, in + at + 8, 4);
              int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in + at + kHeader),
                                            reinterpret_cast<char*>(out + written), c,
                                            static_cast<int>(cap - written));
              if (got != len ||
                  (XXH32(out + written, static_cast<size_t>(len), 0x9747B28C) & 0x0FFFFFFF) != sum)
                return size_t{0};
              written += static_cast<size_t>(len);
              at += kHeader + static_cast<size_t>(c);
            }
            return written;
          },
          n + n / 255 + 16 + (n / kBlock + 1) * (kHeader + 16)};
}
#endif

#ifdef HAVE_BLOSC
DirectCodec direct_blosc(const stowage::json& cfg, size_t n) {
  std::string cname = cfg.value("cname", "blosclz");
  int clevel = cfg.value("clevel", 6), shuffle = cfg.value("shuffle", 0);
  size_t typesize = cfg.value("typesize", 1), blocksize = cfg.value("blocksize", 0);
  return {[=](const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
            int r = blosc_compress_ctx(clevel, shuffle, typesize, n, in, out, cap, cname.c_str(),
                                       blocksize, 1);
            return r > 0 ? static_cast<size_t>(r) : 0;
          },
          [](const uint8_t* in, size_t, uint8_t* out, size_t cap) {
            int r = blosc_decompress_ctx(in, out, cap, 1);
            return r > 0 ? static_cast<size_t>(r) : 0;
          },
          n + BLOSC_MAX_OVERHEAD};
}
#endif

size_t copy_bytes(const uint8_t* in, size_t n, uint8_t* out, size_t) {
  std::memcpy(out, in, n);
  return n;
}
DirectCodec direct_raw(size_t n) { return {copy_bytes, copy_bytes, n}; }

// ---- timing -------------------------------------------------------------------------

// CPU time of this thread: every codec here runs on the calling thread, and
// unlike wall time it does not count the time other processes hold the core.
double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Seconds per call of `fn`, the best over `rounds` batches sized to ~40 ms.
struct Timer {
  std::function<void()> fn;
  size_t batch = 1;
  double best = 1e30;
  void calibrate() {
    double t0 = thread_seconds();
    fn();
    double once = thread_seconds() - t0;
    batch = std::max<size_t>(1, static_cast<size_t>(0.04 / std::max(once, 1e-9)));
  }
  void round() {
    double t0 = thread_seconds();
    for (size_t i = 0; i < batch; ++i) fn();
    best = std::min(best, (thread_seconds() - t0) / static_cast<double>(batch));
  }
};

// Times a and b interleaved; returns seconds per call of each.
std::pair<double, double> race(std::function<void()> a, std::function<void()> b, int rounds) {
  Timer ta{std::move(a)}, tb{std::move(b)};
  ta.calibrate();
  tb.calibrate();
  for (int r = 0; r < rounds; ++r) {
    ta.round();
    tb.round();
  }
  return {ta.best, tb.best};
}

double mbps(size_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / 1e6; }

// ---- one codec on one input ---------------------------------------------------------------

struct Case {
  std::string label;  // e.g. "gzip 6"
  std::string config;
  std::function<DirectCodec(const stowage::Codec&, size_t)> direct;
};

void bench_case(const Case& c, const std::string& input_name, const Bytes& data, int rounds) {
  stowage::Codec codec;
  try {
    codec = stowage::Registry::global().codec(std::string_view(c.config));
  } catch (const stowage::Error& e) {
    std::printf("%-9s %-10s (plugin not available: %s)\n", input_name.c_str(), c.label.c_str(),
                e.what());
    return;
  }
  const size_t n = data.size();
  DirectCodec direct = c.direct(codec, n);
  Bytes packed_reg(codec.bound(n)), packed_dir(direct.bound), out(n);
  size_t m_reg = codec.encode(data.data(), n, packed_reg.data(), packed_reg.size());
  size_t m_dir = direct.encode(data.data(), n, packed_dir.data(), packed_dir.size());
  // Both sides must really do the work: check each round trip once.
  bool ok = codec.decode(packed_reg.data(), m_reg, out.data(), n) == n && out == data;
  std::fill(out.begin(), out.end(), 0);
  ok = ok && direct.decode(packed_dir.data(), m_dir, out.data(), n) == n && out == data;
  if (!ok) {
    std::printf("%-9s %-10s ROUND TRIP FAILED\n", input_name.c_str(), c.label.c_str());
    return;
  }
  auto [enc_reg, enc_dir] = race(
      [&] {
        escape(packed_reg.data() +
               codec.encode(data.data(), n, packed_reg.data(), packed_reg.size()));
      },
      [&] {
        escape(packed_dir.data() +
               direct.encode(data.data(), n, packed_dir.data(), packed_dir.size()));
      },
      rounds);
  auto [dec_reg, dec_dir] = race(
      [&] { escape(out.data() + codec.decode(packed_reg.data(), m_reg, out.data(), n)); },
      [&] { escape(out.data() + direct.decode(packed_dir.data(), m_dir, out.data(), n)); }, rounds);
  std::printf("%-9s %-10s %6.2f | %9.1f %9.1f %6.1f%% | %9.1f %9.1f %6.1f%%\n", input_name.c_str(),
              c.label.c_str(), static_cast<double>(n) / static_cast<double>(m_reg),
              mbps(n, enc_reg), mbps(n, enc_dir), 100.0 * enc_dir / enc_reg, mbps(n, dec_reg),
              mbps(n, dec_dir), 100.0 * dec_dir / dec_reg);
}

std::vector<Case> cases(size_t element_size) {
  std::string ts = std::to_string(element_size);
  std::vector<Case> list = {
      {"raw", R"({"type":"raw"})", [](const stowage::Codec&, size_t n) { return direct_raw(n); }},
      {"gzip 6", R"({"type":"gzip"})",
       [](const stowage::Codec&, size_t n) { return direct_zlib(6, false, n); }},
      {"zlib 6", R"({"type":"zlib"})",
       [](const stowage::Codec&, size_t n) { return direct_zlib(6, true, n); }},
      {"gzip 1", R"({"type":"gzip","level":1})",
       [](const stowage::Codec&, size_t n) { return direct_zlib(1, false, n); }},
      {"bzip2 9", R"({"type":"bzip2"})",
       [](const stowage::Codec&, size_t n) { return direct_bzip2(9, n); }},
      {"xz 6", R"({"type":"xz"})", [](const stowage::Codec&, size_t n) { return direct_xz(6, n); }},
      {"xz 1", R"({"type":"xz","preset":1})",
       [](const stowage::Codec&, size_t n) { return direct_xz(1, n); }},
      {"zstd 3", R"({"type":"zstd"})",
       [](const stowage::Codec&, size_t n) { return direct_zstd(3, n); }},
  };
#ifdef HAVE_LZ4
  list.push_back(
      {"lz4", R"({"type":"lz4"})", [](const stowage::Codec&, size_t n) { return direct_lz4(n); }});
#endif
#ifdef HAVE_BLOSC
  list.push_back({"blosc lz4",
                  R"({"type":"blosc","cname":"lz4","clevel":5,"shuffle":1,"typesize":)" + ts + "}",
                  [](const stowage::Codec& c, size_t n) { return direct_blosc(c.config(), n); }});
#endif
  return list;
}

// ---- dispatch overhead (issue 2) ----------------------------------------------------

void bench_dispatch(size_t size) {
  stowage::Codec raw = stowage::Registry::global().codec(std::string_view(R"({"type":"raw"})"));
  const stowage_codec_vtable* vt = raw.vtable();
  stowage_codec_config h = raw.handle();
  Bytes in(size, 7), out(size);
  stowage_error err{};
  size_t written = 0;
  const int rounds = 15;
  auto direct = [&] {
    std::memcpy(out.data(), in.data(), size);
    escape(out.data());
  };
  auto c_abi = [&] {
    vt->encode(h, nullptr, in.data(), size, out.data(), out.size(), &written, &err);
    escape(out.data());
  };
  // The C call as stowage::Codec makes it: with a zero-initialised 1 KiB
  // stowage_error per call, which is most of the wrapper's cost.
  auto c_abi_fresh_error = [&] {
    stowage_error fresh{};
    vt->encode(h, nullptr, in.data(), size, out.data(), out.size(), &written, &fresh);
    escape(out.data());
    escape(&fresh);
  };
  auto api = [&] { escape(out.data() + raw.encode(in.data(), size, out.data(), out.size())); };
  auto [t_api, t_direct] = race(api, direct, rounds);
  auto [t_abi, t_direct2] = race(c_abi, direct, rounds);
  auto [t_fresh, t_direct3] = race(c_abi_fresh_error, direct, rounds);
  double base = std::min({t_direct, t_direct2, t_direct3});
  auto column = [&](const char* name, double t) {
    std::printf(" | %s %8.1f ns (+%5.1f ns, %5.2f%%)", name, t * 1e9, (t - base) * 1e9,
                100.0 * (t - base) / base);
  };
  std::printf("%6zu B | memcpy %8.1f ns", size, base * 1e9);
  column("C vtable", t_abi);
  column("C vtable+error{}", t_fresh);
  column("stowage::Codec", t_api);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::printf(
      "stowage codec benchmark: best of %d batches of thread CPU time, registry and direct "
      "interleaved\n",
      rounds);
  std::printf("MB/s of decoded bytes; %% = direct time / registry time (goal >= 97%%)\n\n");
  std::printf("%-9s %-10s %6s | %9s %9s %7s | %9s %9s %7s\n", "input", "codec", "ratio", "enc reg",
              "enc dir", "enc %", "dec reg", "dec dir", "dec %");
  const std::pair<std::string, Bytes> inputs[] = {{"u16 64^3", microscopy_u16_chunk()},
                                                  {"f64 256K", float64_chunk()}};
  for (const auto& [name, data] : inputs) {
    for (const Case& c : cases(name[0] == 'u' ? 2 : 8)) bench_case(c, name, data, rounds);
    std::printf("\n");
  }
  std::printf("dispatch overhead of the raw codec's encode (issue 2): registry vs memcpy\n");
  for (size_t size : {size_t{0}, size_t{64}, size_t{65536}}) bench_dispatch(size);
  return 0;
}
