// The checksum codecs crc32c, adler32, crc32 and fletcher32: the codec
// checks, the published check values, the byte layout, chunks zarr-python 3
// wrote (copied from zarrs, tests/fixtures/checksums), a shard index z5
// wrote, numcodecs 0.11 and python3-crc32c as peers, and damage.
#include "codec_test_helpers.hpp"

#include <array>

using namespace codec_test;

namespace {

const char* const kIds[] = {"crc32c", "adler32", "crc32", "fletcher32"};

test::fs::path fixture(const std::string& path) { return test::fixtures() / "checksums" / path; }

uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
Bytes le32_bytes(uint32_t v) {
  return {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
}
Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Fletcher-32 as HDF5 and numcodecs define it, written apart from the
// plugin: big-endian 16-bit words (an odd last byte is a high byte), each
// added with an end-around carry at once rather than folded per 360 words.
uint32_t fletcher32_reference(const Bytes& d) {
  auto add = [](uint32_t a, uint32_t b) { return ((a + b) & 0xffff) + ((a + b) >> 16); };
  uint32_t s1 = 0, s2 = 0;
  for (size_t i = 0; i < d.size(); i += 2) {
    uint32_t word = uint32_t(d[i]) << 8 | (i + 1 < d.size() ? d[i + 1] : 0);
    s1 = add(s1, word);
    s2 = add(s2, s1);
  }
  return s2 << 16 | s1;
}

// The raw little-endian bytes of a C-order chunk of `values(row, col)` taken
// from rows [r0, r0 + rows) and columns [c0, c0 + cols).
template <class T, class F>
Bytes chunk_values(size_t r0, size_t c0, size_t rows, size_t cols, F values) {
  std::vector<T> v;
  for (size_t r = r0; r < r0 + rows; ++r)
    for (size_t c = c0; c < c0 + cols; ++c) v.push_back(static_cast<T>(values(r, c)));
  return codec_checks::as_bytes(v);
}

}  // namespace

TEST_CASE("checksum codecs pass the codec checks") {
  for (const char* config : {R"({"type":"crc32c"})", R"({"type":"adler32"})",
                             R"({"type":"adler32","location":"end"})", R"({"type":"crc32"})",
                             R"({"type":"crc32","location":"end"})", R"({"type":"fletcher32"})"}) {
    Spec spec;
    spec.config = config;
    spec.id = stowage::json::parse(config)["type"].get<std::string>();
    if (test::plugin_off(spec.id)) continue;
    spec.checksummed = true;
    check_codec(spec);
  }
}

TEST_CASE("checksum codecs: canonical configs, refused locations, capabilities") {
  CHECK(codec(R"({"type":"crc32c"})").canonical_config() == R"({"type":"crc32c"})");
  CHECK(codec(R"({"type":"fletcher32"})").canonical_config() == R"({"type":"fletcher32"})");
  for (const char* id : {"adler32", "crc32"}) {
    if (test::plugin_off(id)) continue;
    const std::string type = std::string(R"("type":")") + id + "\"";
    CHECK(codec("{" + type + "}").canonical_config() == R"({"location":"start",)" + type + "}");
    // numcodecs (and zarr-python 3's numcodecs.<id>) may add its id: kept, as N5 keeps unknown
    // keys.
    CHECK(codec("{" + type + R"(,"id":")" + id + R"(","location":"end"})").config()["location"] ==
          "end");
    Failure where = failure_of([&] { codec("{" + type + R"(,"location":"middle"})"); });
    CHECK(where.code == stowage::ErrorCode::invalid_argument);
    CHECK_MESSAGE(where.message.find("location") != std::string::npos, where.message);
  }
  for (const char* id : kIds) {
    if (test::plugin_off(id)) continue;
    codec(std::string(R"({"type":")") + id + "\"}");
    std::optional<stowage::PluginInfo> info = stowage::Registry::global().find("codec", id);
    REQUIRE(info.has_value());
    CHECK(info->state == stowage::PluginState::loaded);
    CHECK(info->capabilities == (STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE));
    CHECK(info->version == "1.0.0");
  }
}

TEST_CASE("the published check values, and where the four bytes go") {
  const Bytes digits = bytes("123456789");
  // CRC-32C (Castagnoli) of "123456789": 0xE3069283 (the standard check value), after the payload.
  CHECK(encode(codec(R"({"type":"crc32c"})"), digits) == concat(digits, le32_bytes(0xE3069283)));
  if (!test::plugin_off("adler32")) {
    // Adler-32 of "Wikipedia": 0x11E60398 (the textbook example), before the payload by default.
    const Bytes wiki = bytes("Wikipedia");
    CHECK(encode(codec(R"({"type":"adler32"})"), wiki) == concat(le32_bytes(0x11E60398), wiki));
    CHECK(encode(codec(R"({"type":"adler32","location":"end"})"), wiki) ==
          concat(wiki, le32_bytes(0x11E60398)));
  }
  if (!test::plugin_off("crc32")) {
    // CRC-32 (IEEE) of "123456789": 0xCBF43926.
    CHECK(encode(codec(R"({"type":"crc32"})"), digits) == concat(le32_bytes(0xCBF43926), digits));
    CHECK(encode(codec(R"({"type":"crc32","location":"end"})"), digits) ==
          concat(digits, le32_bytes(0xCBF43926)));
  }
  // An empty payload still carries its checksum (0 for CRC-32C of nothing, 1 for Adler-32).
  CHECK(encode(codec(R"({"type":"crc32c"})"), {}) == le32_bytes(0));
  if (!test::plugin_off("adler32"))
    CHECK(encode(codec(R"({"type":"adler32"})"), {}) == le32_bytes(1));
}

TEST_CASE("fletcher32: numcodecs' own known vector, and an independent computation") {
  // numcodecs' tests/test_fletcher32.py, test_known: ten int64 values and the checksum after them.
  const std::string known =
      std::string("w\x07\x00\x00\x00\x00\x00\x00\x85\xf6\xff\xff\xff\xff\xff\xff", 16) +
      std::string("i\x07\x00\x00\x00\x00\x00\x00\x94\xf6\xff\xff\xff\xff\xff\xff", 16) +
      std::string("\x88\t\x00\x00\x00\x00\x00\x00i\x03\x00\x00\x00\x00\x00\x00", 16) +
      std::string("\x93\xfd\xff\xff\xff\xff\xff\xff\xc3\xfc\xff\xff\xff\xff\xff\xff", 16) +
      std::string("'\x02\x00\x00\x00\x00\x00\x00\xba\xf7\xff\xff\xff\xff\xff\xff", 16) +
      std::string(
          "\xfd%\x86"
          "d",
          4);
  const stowage::Codec f = codec(R"({"type":"fletcher32"})");
  Bytes decoded = decode(f, bytes(known), 80);
  std::vector<int64_t> values(10);
  std::memcpy(values.data(), decoded.data(), 80);
  CHECK(values ==
        std::vector<int64_t>{1911, -2427, 1897, -2412, 2440, 873, -621, -829, 551, -2118});
  CHECK(encode(f, decoded) == bytes(known));

  // Odd and even lengths, several 360-word blocks, all-ones words that make
  // the folds carry, and random bytes: the plugin agrees with the reference.
  std::mt19937 rng(11);
  for (size_t n : {0, 1, 2, 3, 719, 720, 721, 722, 1441, 5001, 20000}) {
    Bytes random(n), ones(n, 0xff);
    for (uint8_t& b : random) b = static_cast<uint8_t>(rng());
    for (const Bytes& d : {random, ones}) {
      CAPTURE(n);
      Bytes packed = encode(f, d);
      REQUIRE(packed.size() == n + 4);
      CHECK(Bytes(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(n)) == d);
      CHECK(le32(packed.data() + n) == fletcher32_reference(d));
    }
  }
}

TEST_CASE(
    "chunks zarr-python 3 wrote with numcodecs' adler32 and fletcher32 decode to its values") {
  // Zarr v2, <u2 100x100 in 50x50 chunks of arange(10000) (zarr_python_*.py.txt).
  for (const char* id : {"adler32", "fletcher32"}) {
    if (test::plugin_off(id)) continue;
    const stowage::Codec c = codec(std::string(R"({"type":")") + id + "\"}");
    const stowage::json zarray =
        test::read_json(fixture(std::string("zarr_python_compat/") + id + ".zarr/.zarray"));
    REQUIRE(zarray["compressor"]["id"] == id);
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 2; ++j) {
        const std::string key = std::to_string(i) + "." + std::to_string(j);
        CAPTURE(id);
        CAPTURE(key);
        const Bytes stored = bytes(
            test::read_file(fixture(std::string("zarr_python_compat/") + id + ".zarr/" + key)));
        const Bytes expected = chunk_values<uint16_t>(
            50 * i, 50 * j, 50, 50, [](size_t row, size_t col) { return row * 100 + col; });
        CHECK(decode(c, stored, expected.size()) == expected);
        CHECK(encode(c, expected) == stored);  // zarr-python's bytes, exactly
      }
  }
  // Zarr v3, float32 10x10 in 5x5 chunks of 0..99, codecs bytes + numcodecs.<id>
  // (v3_generate.py.txt).
  for (const char* id : {"adler32", "fletcher32"}) {
    if (test::plugin_off(id)) continue;
    const stowage::Codec c = codec(std::string(R"({"type":")") + id + "\"}");
    const std::string store = std::string("v3_zarr_python/array_") + id + ".zarr/";
    const stowage::json meta = test::read_json(fixture(store + "zarr.json"));
    REQUIRE(meta["codecs"][1]["name"] == std::string("numcodecs.") + id);
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 2; ++j) {
        const std::string key = "c/" + std::to_string(i) + "/" + std::to_string(j);
        CAPTURE(id);
        CAPTURE(key);
        const Bytes stored = bytes(test::read_file(fixture(store + key)));
        const Bytes expected = chunk_values<float>(
            5 * i, 5 * j, 5, 5, [](size_t row, size_t col) { return row * 10 + col; });
        CHECK(decode(c, stored, expected.size()) == expected);
        CHECK(encode(c, expected) == stored);
      }
  }
}

TEST_CASE(
    "crc32c decodes the shard indexes z5 wrote (Zarr v3 sharding, index codecs bytes + crc32c)") {
  // Each shard of 2x2x2 inner chunks ends with its index: 8 (offset, nbytes)
  // pairs of little-endian uint64 and the index's CRC-32C after them.
  const stowage::Codec c = codec(R"({"type":"crc32c"})");
  const test::fs::path dir = test::fixtures() / "zarr" / "v3_int32_zstd_sharded.zarr" / "data";
  size_t shards = 0;
  for (const auto& entry : test::fs::directory_iterator(dir)) {
    if (entry.path().filename() == "zarr.json") continue;
    CAPTURE(entry.path().string());
    const Bytes shard = bytes(test::read_file(entry.path()));
    REQUIRE(shard.size() > 132);
    const Bytes stored(shard.end() - 132, shard.end());
    const Bytes index = decode(c, stored, 128);
    // The index is z5's: the inner chunks lie one after another up to the index.
    uint64_t next = 0;
    for (size_t k = 0; k < 8; ++k) {
      uint64_t offset = 0, nbytes = 0;
      std::memcpy(&offset, index.data() + 16 * k, 8);
      std::memcpy(&nbytes, index.data() + 16 * k + 8, 8);
      CHECK(offset == next);
      next = offset + nbytes;
    }
    CHECK(next == shard.size() - 132);
    CHECK(encode(c, index) == stored);
    ++shards;
  }
  CHECK(shards == 8);
}

TEST_CASE("numcodecs 0.11 (CRC32, Adler32) and python3-crc32c read ours; we read theirs") {
  std::vector<std::string> ids;
  for (const char* id : kIds)
    if (!test::plugin_off(id) && std::string(id) != "fletcher32") ids.push_back(id);
  std::vector<Ours> ours;
  for (const std::string& id : ids)
    ours.push_back({".ours." + id, codec(R"({"type":")" + id + "\"}")});
  PeerExchange peer;
  peer.put_samples(ours);
  // Debian's numcodecs 0.11 has no CRC32C codec: python3-crc32c computes the
  // checksum and the script frames it as Zarr v3 does (after the payload).
  peer.run_python(R"PY(
import struct
import crc32c
from numcodecs import CRC32, Adler32
class Crc32c:
    def encode(self, b): return bytes(b) + struct.pack('<I', crc32c.crc32c(bytes(b)))
    def decode(self, b):
        if struct.unpack('<I', b[-4:])[0] != crc32c.crc32c(b[:-4]): raise RuntimeError('crc32c')
        return b[:-4]
peers = {'crc32c': Crc32c(), 'adler32': Adler32(), 'crc32': CRC32()}
for n in sample_names:
    data = rd(n + '.data')
    for ext, p in peers.items():
        if os.path.exists(os.path.join(d, n + '.ours.' + ext)):
            wr(n + '.py.' + ext, p.encode(data))
            wr(n + '.' + ext + '.by_py', p.decode(rd(n + '.ours.' + ext)))
)PY");
  for (const std::string& id : ids) {
    CAPTURE(id);
    const stowage::Codec c = codec(R"({"type":")" + id + "\"}");
    check_samples_came_back(peer, {"." + id + ".by_py"});
    check_we_decode_theirs(peer, c, {".py." + id});
    check_we_encode_their_bytes(peer, c, ".py." + id);
  }
}

TEST_CASE("a damaged byte anywhere is CORRUPT: \"checksum mismatch\", naming the codec") {
  const Bytes data = microscopy_u16(3000);
  for (const char* id : kIds) {
    if (test::plugin_off(id)) continue;
    CAPTURE(id);
    const stowage::Codec c = codec(std::string(R"({"type":")") + id + "\"}");
    const Bytes packed = encode(c, data);
    // The first and last bytes (one is in the checksum, one in the payload) and one in the middle.
    for (size_t at : {size_t{0}, size_t{1}, packed.size() / 2, packed.size() - 1}) {
      CAPTURE(at);
      Bytes bad = packed;
      bad[at] ^= 0x01;
      Bytes out(data.size(), 0xA5);
      Failure f = failure_of([&] { c.decode(bad.data(), bad.size(), out.data(), out.size()); });
      CHECK_CORRUPT(f, id, "checksum mismatch");
      CHECK_MESSAGE(out == Bytes(data.size(), 0xA5), "a mismatch wrote to the caller's buffer");
    }
    CHECK_CORRUPT(decode_failure(c, Bytes(packed.begin(), packed.begin() + 3), 100), id,
                  "shorter than its 4-byte checksum");
  }
}
