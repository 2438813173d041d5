// Helpers shared by the gzip, bzip2, xz and zstd codec suites: codecs from the registry,
// sample data, error checks, real N5 chunks from the fixtures, and the
// file exchange with Python and Java peers (N5JavaCodecsPeer.java). The
// checks every codec must pass are in codec_checks.hpp.
#pragma once

#include "codec_checks.hpp"

#include <doctest/doctest.h>
#include <test_support.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace codec_test {

using codec_checks::Bytes;

inline stowage::Codec codec(const std::string& config_json) {
  return stowage::Registry::global().codec(std::string_view(config_json));
}

inline Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
inline std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

// A microscopy-like uint16 volume (smooth blobs on a dim background plus
// shot noise), little-endian, from a fixed seed.
inline Bytes microscopy_u16(size_t elements, uint32_t seed = 42) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 12.0);
  Bytes out(elements * 2);
  for (size_t i = 0; i < elements; ++i) {
    double x = static_cast<double>(i % 64), y = static_cast<double>((i / 64) % 64);
    double blob = 900.0 * std::exp(-((x - 20) * (x - 20) + (y - 40) * (y - 40)) / 90.0);
    double v = 100.0 + blob + noise(rng);
    uint16_t u = static_cast<uint16_t>(v < 0 ? 0 : v > 65535 ? 65535 : v);
    out[2 * i] = static_cast<uint8_t>(u & 0xff);
    out[2 * i + 1] = static_cast<uint8_t>(u >> 8);
  }
  return out;
}

// Inputs every codec must round-trip: empty, tiny, typical, incompressible.
struct Sample {
  std::string name;
  Bytes data;
};
inline std::vector<Sample> samples() {
  std::mt19937 rng(7);
  Bytes random(70000);
  for (uint8_t& b : random) b = static_cast<uint8_t>(rng());
  return {{"empty", {}},
          {"one", {0x2a}},
          {"text", bytes("N5 chunk payload, N5 chunk payload, N5 chunk payload.")},
          {"microscopy", microscopy_u16(64 * 64 * 16)},
          {"random", random}};
}

using codec_checks::decode;
using codec_checks::encode;

using test::Failure;
using test::failure_of;
// The conformance checks every codec passes (codec_checks.hpp, reusable by
// third parties); the suites also call them one by one on their own data.
using codec_checks::check_codec;
using codec_checks::check_damaged_encodings_fail;
using codec_checks::check_round_trip;
using codec_checks::check_small_output_buffer;
using codec_checks::check_thread_safe;
using codec_checks::Spec;
inline Failure decode_failure(const stowage::Codec& c, const Bytes& in, size_t capacity) {
  return failure_of([&] {
    Bytes out(capacity);
    c.decode(in.data(), in.size(), out.data(), out.size());
  });
}

// The message names the codec and contains `what`.
#define CHECK_CORRUPT(failure, codec_id, what)                                 \
  do {                                                                         \
    Failure f_ = (failure);                                                    \
    CHECK(f_.code == stowage::ErrorCode::corrupt);                             \
    CHECK_MESSAGE(f_.message.find(codec_id) != std::string::npos, f_.message); \
    CHECK_MESSAGE(f_.message.find(what) != std::string::npos, f_.message);     \
  } while (0)

// ---- N5 chunks from the fixtures -------------------------------------------------

// The payload of a chunk file: the bytes after the N5 block header
// (mode u16, ndim u16, ndim x u32 dims, and for mode 1 a u32 element count).
struct Chunk {
  std::vector<uint32_t> dims;  // N5 order, x fastest
  std::string payload;
};
inline uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}
inline Chunk read_chunk(const test::fs::path& file) {
  std::string s = test::read_file(file);
  REQUIRE(s.size() >= 4);
  unsigned mode = (unsigned(uint8_t(s[0])) << 8) | uint8_t(s[1]);
  unsigned ndim = (unsigned(uint8_t(s[2])) << 8) | uint8_t(s[3]);
  size_t header = 4 + 4 * size_t{ndim} + (mode == 1 ? 4 : 0);
  REQUIRE(s.size() >= header);
  Chunk c;
  for (unsigned d = 0; d < ndim; ++d) c.dims.push_back(be32(s, 4 + 4 * d));
  c.payload = s.substr(header);
  return c;
}

inline test::fs::path n5_fixtures() { return test::fixtures() / "n5"; }

// Encodes a fixture chunk's decoded bytes again with the dataset's codec, its
// config updated with `extra` (gzip's {"encoder": "zlib"}).
inline Bytes reencode_chunk(const std::string& container, const std::string& dataset,
                            const std::string& chunk_path, size_t element_size, Bytes* payload,
                            const stowage::json& extra = stowage::json::object()) {
  stowage::json expected = test::read_json(n5_fixtures() / (container + ".expected.json"));
  stowage::json config = expected["datasets"][dataset]["compression"];
  config.update(extra);
  stowage::Codec c = codec(config.dump());
  Chunk chunk = read_chunk(n5_fixtures() / container / dataset / chunk_path);
  size_t count = 1;
  for (uint32_t d : chunk.dims) count *= d;
  *payload = bytes(chunk.payload);
  return encode(c, decode(c, *payload, count * element_size));
}

// Decodes every chunk of a fixture dataset with the codec its attributes name
// and compares each element with the sidecar expected.bin (little-endian, in
// N5's x-fastest order, i.e. C order of the reversed shape). Chunk payloads
// hold big-endian elements; padded edge elements are skipped.
inline size_t check_fixture_dataset(const std::string& container, const std::string& dataset) {
  stowage::json expected = test::read_json(n5_fixtures() / (container + ".expected.json"));
  const stowage::json& ds = expected["datasets"][dataset];
  REQUIRE_MESSAGE(ds.is_object(), (container + " has no dataset " + dataset));
  stowage::Codec c = codec(ds["compression"].dump());
  std::string bin = test::read_file(n5_fixtures() / ds["expected_bin"].get<std::string>());
  static const std::map<std::string, size_t> sizes = {
      {"int8", 1},   {"uint8", 1}, {"int16", 2},  {"uint16", 2},  {"int32", 4},
      {"uint32", 4}, {"int64", 8}, {"uint64", 8}, {"float32", 4}, {"float64", 8}};
  size_t esize = sizes.at(ds["dataType"].get<std::string>());
  std::vector<uint64_t> dims = ds["dimensions_n5_order"].get<std::vector<uint64_t>>();
  std::vector<uint64_t> block = ds["blockSize_n5_order"].get<std::vector<uint64_t>>();
  size_t elements_checked = 0;
  for (const stowage::json& pos : ds["chunks_present_n5_order"]) {
    test::fs::path file = n5_fixtures() / container / dataset;
    for (const stowage::json& p : pos) file /= std::to_string(p.get<uint64_t>());
    CAPTURE(file.string());
    Chunk chunk = read_chunk(file);
    size_t count = 1;
    for (uint32_t d : chunk.dims) count *= d;
    Bytes decoded = decode(c, bytes(chunk.payload), count * esize);
    // Walk the chunk's elements in N5 order and find each one in expected.bin.
    std::vector<uint64_t> local(dims.size(), 0);
    for (size_t e = 0; e < count; ++e) {
      uint64_t flat = 0, stride = 1;
      bool inside = true;
      for (size_t d = 0; d < dims.size(); ++d) {
        uint64_t g = pos[d].get<uint64_t>() * block[d] + local[d];
        inside = inside && g < dims[d];
        flat += g * stride;
        stride *= dims[d];
      }
      if (inside) {
        bool same = true;
        for (size_t b = 0; b < esize; ++b)
          same = same && decoded[e * esize + b] == uint8_t(bin[flat * esize + (esize - 1 - b)]);
        if (!same) FAIL_CHECK("element " << e << " of the chunk differs from expected.bin");
        ++elements_checked;
      }
      for (size_t d = 0; d < dims.size() && ++local[d] == chunk.dims[d]; ++d) local[d] = 0;
    }
  }
  if (ds["chunks_missing_n5_order"].empty()) CHECK(elements_checked == bin.size() / esize);
  return elements_checked;
}

// The payload of the README example block in spec-example.n5 (decodes to
// big-endian uint16 1..6).
inline Bytes spec_example_payload(const std::string& dataset) {
  return bytes(read_chunk(n5_fixtures() / "spec-example.n5" / dataset / "0" / "0" / "0").payload);
}
inline const Bytes& spec_example_values() {
  static const Bytes v = {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6};
  return v;
}

// ---- peers (Python, Java) -----------------------------------------------------------

// Our encoding of every sample with `codec`, put for the peer as <name><suffix>.
struct Ours {
  std::string suffix;
  stowage::Codec codec;
};

// What every Python peer script starts with: d (the exchange directory),
// rd(name) and wr(name, bytes-like) for its files, and sample_names (from
// names.txt).
inline const char* python_peer_prelude() {
  return R"PY(
import os, sys
from numcodecs.compat import ensure_bytes
d = sys.argv[1]
rd = lambda n: open(os.path.join(d, n), 'rb').read()
def wr(n, b): open(os.path.join(d, n), 'wb').write(ensure_bytes(b))
sample_names = open(os.path.join(d, 'names.txt')).read().split()
)PY";
}

// A fresh directory shared with a peer program: the test puts its inputs and
// our encodings there, runs the peer on the directory, and gets what the peer
// wrote back.
class PeerExchange {
 public:
  void put(const std::string& name, const Bytes& data) {
    test::write_file(dir_ / name, text(data));
  }
  Bytes get(const std::string& name) const {
    REQUIRE_MESSAGE(test::fs::exists(dir_ / name), ("the peer did not write " + name));
    return bytes(test::read_file(dir_ / name));
  }
  // Puts every sample as <name>.data, lists the names in names.txt (the peers
  // go through that list), and puts our encodings as `ours` says.
  void put_samples(const std::vector<Ours>& ours) {
    std::string names;
    for (const Sample& s : samples()) {
      names += s.name + "\n";
      put(s.name + ".data", s.data);
      for (const Ours& o : ours) put(s.name + o.suffix, encode(o.codec, s.data));
    }
    put("names.txt", bytes(names));
  }
  // Runs python_peer_prelude() followed by `script` on the directory.
  void run_python(const std::string& script) {
    test::RunResult r =
        test::run_python(python_peer_prelude() + script, test::quote(dir_.path().string()));
    REQUIRE_MESSAGE(r.status == 0, ("python peer failed:\n" + r.output));
  }
  // N5 Java's and n5-zstandard's streams (commons-compress, xz-java,
  // zstd-jni, java.util.zip): see N5JavaCodecsPeer.java for the files it
  // reads and writes.
  void run_n5_java() {
    std::string source =
        (test::source_root() / "tests" / "support" / "N5JavaCodecsPeer.java").string();
    const char* classpath =
        "/usr/share/java/commons-compress.jar:/usr/share/java/xz.jar:/usr/share/java/zstd-jni.jar";
    test::RunResult r = test::run(std::string("java -cp ") + classpath + " " + test::quote(source) +
                                  " " + test::quote(dir_.path().string()));
    REQUIRE_MESSAGE(r.status == 0, ("java peer failed:\n" + r.output));
  }

 private:
  test::TempDir dir_;
};

// The peer gave every sample back unchanged, as <name><suffix> for each suffix
// (what it decoded from our encodings).
inline void check_samples_came_back(const PeerExchange& peer,
                                    const std::vector<std::string>& suffixes) {
  for (const Sample& s : samples()) {
    CAPTURE(s.name);
    for (const std::string& suffix : suffixes)
      CHECK_MESSAGE(peer.get(s.name + suffix) == s.data, suffix);
  }
}

// `c` decodes the peer's encoding of every sample, <name><suffix>, for each suffix.
inline void check_we_decode_theirs(const PeerExchange& peer, const stowage::Codec& c,
                                   const std::vector<std::string>& suffixes) {
  for (const Sample& s : samples()) {
    CAPTURE(s.name);
    for (const std::string& suffix : suffixes)
      CHECK_MESSAGE(decode(c, peer.get(s.name + suffix), s.data.size()) == s.data, suffix);
  }
}

// `c` encodes every sample to exactly the peer's bytes, <name><suffix> (the
// peer runs the same library with the same settings).
inline void check_we_encode_their_bytes(const PeerExchange& peer, const stowage::Codec& c,
                                        const std::string& suffix) {
  for (const Sample& s : samples()) {
    CAPTURE(s.name);
    CHECK_MESSAGE(encode(c, s.data) == peer.get(s.name + suffix), suffix);
  }
}

// The exchange with N5 Java's own streams (N5JavaCodecsPeer.java) for each
// codec of `codec_by_ext` ("gzip", "zlib", "bzip2", "xz", "zstd"): puts every
// sample and our encoding (<name>.ours.<ext>), runs the peer, and checks that
// Java decoded ours (<name>.<ext>.by_java) and that we decode Java's
// (<name>.java.<ext>). The peer's files stay in `peer` for further checks.
inline void exchange_with_n5_java(PeerExchange& peer,
                                  const std::map<std::string, stowage::Codec>& codec_by_ext) {
  std::vector<Ours> ours;
  for (const auto& [ext, c] : codec_by_ext) ours.push_back({".ours." + ext, c});
  peer.put_samples(ours);
  peer.run_n5_java();
  for (const auto& [ext, c] : codec_by_ext) {
    check_samples_came_back(peer, {"." + ext + ".by_java"});
    check_we_decode_theirs(peer, c, {".java." + ext});
  }
}

}  // namespace codec_test
