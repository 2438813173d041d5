// The blosc codec: the N5 fixtures (c-blosc via python3-blosc, n5-blosc
// style, and zarr-python's numcodecs Blosc), config rules, header checks,
// and real peers (python3-blosc and numcodecs) in both directions.

// From tests/support (shared with the lz4 suite): the N5 fixture chunk reader,
// and lz4_common.hpp's codec(), bytes(), text(), random_bytes() and
// check_error(), which the two suites share.
#include "codec_checks.hpp"
#include "lz4_common.hpp"
#include "n5_helpers.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>

using namespace lz4test;
using stowage::ErrorCode;

namespace {

const std::vector<std::string> kCnames = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};

stowage::Codec codec_for(const std::string& cname, int shuffle, int typesize) {
  return codec(R"({"type":"blosc","cname":")" + cname + R"(","clevel":5,"shuffle":)" +
               std::to_string(shuffle) + R"(,"typesize":)" + std::to_string(typesize) + "}");
}

// A smooth float32 signal: what shuffling is for.
Bytes smooth_floats(size_t count) {
  Bytes out(count * 4);
  for (size_t i = 0; i < count; ++i) {
    float v = static_cast<float>(std::sin(i / 50.0) * 1000.0);
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

void check_bad_decode(const stowage::Codec& c, const Bytes& in, size_t capacity, ErrorCode code,
                      const std::string& words) {
  Bytes out(capacity);
  check_error([&] { c.decode(in.data(), in.size(), out.data(), out.size()); }, code, words);
}

uint32_t le32(const Bytes& b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
         uint32_t(b[at + 3]) << 24;
}
void put_le32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

TEST_CASE(
    "blosc: every blosc chunk of the N5 fixtures decodes to expected.bin and re-encodes identically") {
  std::vector<n5chunks::Chunk> chunks = n5chunks::chunks_of("blosc");
  REQUIRE(chunks.size() >=
          30);  // java-style (typesize 1, as n5-blosc) and zarr-written (typesize 8)
  for (const auto& ch : chunks) {
    CAPTURE(ch.file);
    Bytes payload = bytes(ch.payload);
    stowage::Codec c = codec(ch.compression.dump());
    CHECK(text(c.decode(payload.data(), payload.size(), ch.expected.size())) == ch.expected);
    // Same library, same parameters (typesize read from the frame header): same bytes.
    stowage::json cfg = ch.compression;
    cfg["typesize"] = payload.at(3);
    stowage::Codec same = codec(cfg.dump());
    Bytes expected = bytes(ch.expected);
    CHECK(same.encode(expected.data(), expected.size()) == payload);
  }
}

TEST_CASE("blosc: the plugin names its library and declares itself thread-safe") {
  codec(R"({"type":"blosc"})");  // loads the plugin
  std::optional<stowage::PluginInfo> info = stowage::Registry::global().find("codec", "blosc");
  REQUIRE(info);
  CHECK(info->build_info.find("c-blosc 1.") != std::string::npos);
  CHECK(info->capabilities == (STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE));
}

TEST_CASE("blosc: config defaults are n5-blosc's, canonical, and ranges are checked") {
  CHECK(
      codec(R"({"type":"blosc"})").canonical_config() ==
      R"({"blocksize":0,"clevel":6,"cname":"blosclz","nthreads":1,"shuffle":0,"type":"blosc","typesize":1})");
  CHECK(
      codec(R"({"type":"blosc","cname":"zstd","clevel":9,"shuffle":-1,"id":"blosc"})")
          .canonical_config() ==
      R"({"blocksize":0,"clevel":9,"cname":"zstd","id":"blosc","nthreads":1,"shuffle":-1,"type":"blosc","typesize":1})");
  auto rejects = [](const std::string& cfg, const std::string& words) {
    CAPTURE(cfg);
    check_error([&] { codec(cfg); }, ErrorCode::invalid_argument, words);
  };
  rejects(R"({"type":"blosc","clevel":10})", R"("clevel" is 10, allowed range 0..9)");
  rejects(R"({"type":"blosc","shuffle":3})", R"("shuffle" is 3, allowed range -1..2)");
  rejects(R"({"type":"blosc","shuffle":-2})", "allowed range -1..2");
  rejects(R"({"type":"blosc","cname":"lzma"})",
          R"("cname" is "lzma", allowed: blosclz, lz4, lz4hc, snappy, zlib, zstd)");
  rejects(R"({"type":"blosc","typesize":256})", R"("typesize" is 256, allowed range 1..255)");
  rejects(R"({"type":"blosc","nthreads":0})", R"("nthreads" is 0, allowed range 1..256)");
  rejects(R"({"type":"blosc","blocksize":-1})", R"("blocksize" is -1)");
  rejects(R"({"type":"blosc","clevel":"high"})", R"("clevel" must be an integer)");
}

TEST_CASE("blosc: every compressor and shuffle round-trips and says so in the frame header") {
  Bytes data = smooth_floats(20000);
  for (const std::string& cname : kCnames) {
    for (int shuffle : {0, 1, 2, -1}) {
      for (int typesize : {1, 4}) {
        CAPTURE(cname);
        CAPTURE(shuffle);
        CAPTURE(typesize);
        stowage::Codec c = codec_for(cname, shuffle, typesize);
        Bytes enc = c.encode(data.data(), data.size());
        REQUIRE(enc.size() >= 16);
        CHECK(enc.size() <= c.bound(data.size()));
        CHECK(enc[3] == typesize);
        CHECK(le32(enc, 4) == data.size());
        CHECK(le32(enc, 12) == enc.size());
        int effective = shuffle == -1 ? (typesize == 1 ? 2 : 1) : shuffle;
        bool stored = enc[2] & 0x02;
        if (!stored) {
          CHECK(bool(enc[2] & 0x01) == (effective == 1));
          CHECK(bool(enc[2] & 0x04) == (effective == 2));
        }
        CHECK(c.decode(enc.data(), enc.size(), data.size()) == data);
        // Every compressor really compresses -- except snappy, which this c-blosc
        // (like python3-blosc, same library) leaves at 80016 bytes for 1-byte items.
        Bytes zeros(80000, 0);
        if (cname != "snappy") CHECK(c.encode(zeros.data(), zeros.size()).size() < 1000);
      }
    }
  }
  stowage::Codec c = codec(R"({"type":"blosc","clevel":0})");  // level 0: stored
  Bytes enc = c.encode(data.data(), data.size());
  CHECK(enc.size() == data.size() + 16);
  CHECK(c.decode(enc.data(), enc.size(), data.size()) == data);
  Bytes empty = c.encode(nullptr, 0);
  CHECK(empty.size() == 16);
  CHECK(c.decode(empty.data(), empty.size(), 0).empty());
}

TEST_CASE("blosc: malformed frames are CORRUPT (or UNSUPPORTED) before c-blosc sees them") {
  stowage::Codec c = codec(R"({"type":"blosc","cname":"lz4","shuffle":1,"typesize":4})");
  Bytes data = smooth_floats(30000);
  const Bytes good = c.encode(data.data(), data.size());
  auto mutated = [&](auto&& change) {
    Bytes b = good;
    change(b);
    return b;
  };
  const size_t n = data.size();
  check_bad_decode(c, Bytes(good.begin(), good.begin() + 10), n, ErrorCode::corrupt,
                   "truncated frame: 10 bytes");
  check_bad_decode(c, Bytes(good.begin(), good.end() - 1), n, ErrorCode::corrupt, "(truncated)");
  check_bad_decode(c, good, n - 1, ErrorCode::corrupt,
                   "more than the expected " + std::to_string(n - 1));
  check_bad_decode(c, mutated([](Bytes& b) { put_le32(b, 12, 8); }), n, ErrorCode::corrupt,
                   "declares 8 compressed bytes");
  check_bad_decode(c, mutated([](Bytes& b) { b[0] = 3; }), n, ErrorCode::unsupported,
                   "frame format version 3");
  check_bad_decode(c, mutated([](Bytes& b) { b[2] |= 0x02; }), n, ErrorCode::corrupt,
                   "stored (memcpyed) frame");
  check_bad_decode(c, mutated([](Bytes& b) { put_le32(b, 8, 0); }), n, ErrorCode::corrupt,
                   "block size of 0");
  check_bad_decode(c, mutated([](Bytes& b) { b[3] = 0; }), n, ErrorCode::corrupt, "type size of 0");
  // The first block's start offset pointing past the frame.
  check_bad_decode(c, mutated([](Bytes& b) { put_le32(b, 16, 0x7FFFFFF0); }), n, ErrorCode::corrupt,
                   "blosc: ");
  // A scrambled body: c-blosc's lz4 stream no longer decodes.
  check_bad_decode(c, mutated([](Bytes& b) { std::fill(b.begin() + 40, b.end(), 0xFF); }), n,
                   ErrorCode::corrupt, "blosc: corrupt frame");
}

TEST_CASE("blosc: passes the codec conformance checks, and one instance serves several threads") {
  const char* cfg = R"({"type":"blosc","cname":"zstd","shuffle":2,"typesize":4})";
  codec_checks::Spec spec{cfg, "blosc"};
  spec.element_size = 4;  // c-blosc 1 frames carry no checksum: checksummed stays false
  spec.versioned = true;  // a frame of a version this c-blosc does not read is UNSUPPORTED
  codec_checks::check_codec(spec);
  std::vector<Bytes> inputs;  // shuffled floats with a tail of noise, of many sizes
  for (int k = 0; k < 30; ++k) {
    inputs.push_back(smooth_floats(10000 + 100 * (k % 4) + k));
    Bytes noise = random_bytes(500, k);
    inputs.back().insert(inputs.back().end(), noise.begin(), noise.end());
  }
  codec_checks::check_thread_safe(codec(cfg), inputs, 4, 1);
}

namespace {

// python3-blosc and numcodecs encode each input (file in_<key>) with every
// compressor and shuffle at typesize 4, and decode the frames we wrote
// (files ours_<tag>) with both libraries.
const char* kPythonPeer = R"PY(
import os, sys
import blosc, numcodecs
d = sys.argv[1]
def put(name, data):
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)
for name in sorted(os.listdir(d)):
    if name.startswith('in_'):
        key = name[3:]
        data = open(os.path.join(d, name), 'rb').read()
        for cname in ['blosclz', 'lz4', 'lz4hc', 'snappy', 'zlib', 'zstd']:
            for shuffle in [0, 1, 2]:
                put('pyblosc_%s_%d_%s' % (cname, shuffle, key),
                    blosc.compress(data, typesize=4, clevel=5, shuffle=shuffle, cname=cname))
        put('numcodecs_auto_' + key, numcodecs.Blosc(cname='zstd', clevel=3,
                                                     shuffle=numcodecs.Blosc.AUTOSHUFFLE).encode(data))
for name in sorted(os.listdir(d)):
    if name.startswith('ours_'):
        frame = open(os.path.join(d, name), 'rb').read()
        put('pydec_' + name[5:], blosc.decompress(frame))
        if not name.endswith('_empty'):  # numcodecs 0.11 takes c-blosc's 0 bytes for an error
            put('ncdec_' + name[5:], bytes(numcodecs.Blosc().decode(frame)))
print('ok')
)PY";

}  // namespace

TEST_CASE("blosc peers: python3-blosc and numcodecs decode ours, we decode theirs, same bytes") {
  test::TempDir dir;
  std::map<std::string, Bytes> inputs = {
      {"floats", smooth_floats(25000)}, {"noise", random_bytes(9000, 5)}, {"empty", {}}};
  for (const auto& [key, data] : inputs) {
    test::write_file(dir / ("in_" + key), text(data));
    for (const std::string& cname : kCnames)
      for (int shuffle : {0, 1, 2}) {
        std::string tag = cname + "_" + std::to_string(shuffle) + "_" + key;
        test::write_file(dir / ("ours_" + tag),
                         text(codec_for(cname, shuffle, 4).encode(data.data(), data.size())));
      }
  }
  test::RunResult r = test::run_python(kPythonPeer, test::quote(dir.path().string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);

  stowage::Codec reader =
      codec(R"({"type":"blosc"})");  // decoding reads everything from the header
  for (const auto& [key, data] : inputs) {
    for (const std::string& cname : kCnames) {
      for (int shuffle : {0, 1, 2}) {
        std::string tag = cname + "_" + std::to_string(shuffle) + "_" + key;
        CAPTURE(tag);
        Bytes theirs = bytes(test::read_file(dir / ("pyblosc_" + tag)));
        CHECK(reader.decode(theirs.data(), theirs.size(), data.size()) == data);
        CHECK(bytes(test::read_file(dir / ("pydec_" + tag))) == data);
        if (!data.empty()) CHECK(bytes(test::read_file(dir / ("ncdec_" + tag))) == data);
        CHECK(bytes(test::read_file(dir / ("ours_" + tag))) == theirs);  // one c-blosc, one result
      }
    }
    CAPTURE(key);
    Bytes automatic = bytes(test::read_file(dir / ("numcodecs_auto_" + key)));
    CHECK(reader.decode(automatic.data(), automatic.size(), data.size()) == data);
  }
}
