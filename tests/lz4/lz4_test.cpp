// The lz4 codec against the N5 fixtures (lz4-java output), its config rules,
// the LZ4Block layout, LZ4 frames, and malformed input.
#include "codec_checks.hpp"
#include "lz4_common.hpp"
#include "n5_helpers.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace lz4test;
using stowage::ErrorCode;

namespace {

uint32_t le32(const Bytes& b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
         uint32_t(b[at + 3]) << 24;
}
void put_le32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

struct BlockHeader {
  uint8_t token;
  uint32_t compressed, original, checksum;
};

// Walks an LZ4Block stream's headers (the test's own reading of the layout).
std::vector<BlockHeader> block_headers(const Bytes& s) {
  std::vector<BlockHeader> out;
  for (size_t pos = 0; pos + 21 <= s.size();) {
    REQUIRE(std::memcmp(s.data() + pos, "LZ4Block", 8) == 0);
    BlockHeader h{s[pos + 8], le32(s, pos + 9), le32(s, pos + 13), le32(s, pos + 17)};
    out.push_back(h);
    pos += 21 + h.compressed;
    if (h.original == 0) {
      CHECK(pos == s.size());
      break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("lz4: the N5 README example decodes exactly and re-encodes to lz4-java's 54 bytes") {
  Bytes chunk = bytes(test::read_file(test::fixtures() / "n5/spec-example.n5/lz4/0/0/0"));
  Bytes payload(chunk.begin() + 16, chunk.end());  // after the 3-d N5 block header
  REQUIRE(payload.size() == 54);
  stowage::Codec c = codec(R"({"type":"lz4","blockSize":65536})");
  Bytes decoded = c.decode(payload.data(), payload.size(), 12);
  CHECK(decoded == Bytes{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6});  // uint16 BE 1..6
  CHECK(c.encode(decoded.data(), decoded.size()) == payload);
  // The stored checksum is XXH32 masked to 28 bits (0x768B2590 -> 0x068B2590).
  CHECK(le32(payload, 17) == 0x068B2590u);
}

TEST_CASE(
    "lz4: every lz4 chunk of the N5 fixtures decodes to expected.bin and re-encodes byte for byte") {
  std::vector<n5chunks::Chunk> chunks = n5chunks::chunks_of("lz4");
  REQUIRE(chunks.size() >= 50);  // README, N5 Java 4.0.2 (blockSize 65536 and 256), java-style
  size_t multi_block = 0, raw_blocks = 0;
  for (const auto& ch : chunks) {
    CAPTURE(ch.file);
    stowage::Codec c = codec(ch.compression.dump());
    Bytes payload = bytes(ch.payload);
    Bytes decoded = c.decode(payload.data(), payload.size(), ch.expected.size());
    CHECK(text(decoded) == ch.expected);
    CHECK(c.encode(decoded.data(), decoded.size()) == payload);
    auto headers = block_headers(payload);
    multi_block += headers.size() > 2;
    for (const auto& h : headers) raw_blocks += (h.token & 0xF0) == 0x10 && h.original > 0;
  }
  CHECK(multi_block > 0);  // blockSize 256/1024 datasets: several blocks per chunk
  CHECK(raw_blocks > 0);   // incompressible data: stored blocks
}

TEST_CASE("lz4: the plugin names its libraries and declares itself thread-safe") {
  codec(R"({"type":"lz4"})");  // loads the plugin
  std::optional<stowage::PluginInfo> info = stowage::Registry::global().find("codec", "lz4");
  REQUIRE(info);
  CHECK(info->build_info.find("liblz4 1.") != std::string::npos);
  CHECK(info->build_info.find("libxxhash 0.") != std::string::npos);
  CHECK(info->capabilities == (STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE));
}

TEST_CASE("lz4: config defaults, canonical form and range checks") {
  CHECK(codec(R"({"type":"lz4"})").canonical_config() == R"({"blockSize":65536,"type":"lz4"})");
  CHECK(codec(R"({"type":"lz4","framing":"lz4block","blockSize":64})").canonical_config() ==
        R"({"blockSize":64,"type":"lz4"})");
  // Unknown keys (numcodecs' "id", "acceleration") are kept and ignored.
  CHECK(codec(R"({"type":"lz4","id":"lz4","acceleration":1})").canonical_config() ==
        R"({"acceleration":1,"blockSize":65536,"id":"lz4","type":"lz4"})");
  CHECK(codec(R"({"type":"lz4","framing":"frame"})").canonical_config() ==
        R"({"blockChecksum":false,"blockSizeId":7,"contentChecksum":true,"contentSize":false,)"
        R"("framing":"frame","level":0,"type":"lz4"})");
  CHECK(codec(R"({"type":"lz4","blockSize":33554432})").config()["blockSize"] == 33554432);
  // numcodecs' framing (Zarr v2) has one parameter.
  CHECK(codec(R"({"type":"lz4","framing":"numcodecs"})").canonical_config() ==
        R"({"acceleration":1,"framing":"numcodecs","type":"lz4"})");

  auto rejects = [](const std::string& cfg, const std::string& words) {
    CAPTURE(cfg);
    check_error([&] { codec(cfg); }, ErrorCode::invalid_argument, words);
  };
  rejects(R"({"type":"lz4","blockSize":33554433})",
          R"("blockSize" is 33554433, allowed range 0..33554432)");
  rejects(R"({"type":"lz4","blockSize":-1})", "allowed range 0..33554432");
  rejects(R"({"type":"lz4","blockSize":"big"})", R"("blockSize" must be an integer)");
  rejects(R"({"type":"lz4","framing":"block"})",
          R"("framing" is "block", allowed: lz4block, frame, numcodecs)");
  rejects(R"({"type":"lz4","framing":"frame","level":13})",
          R"("level" is 13, allowed range 0..12)");
  rejects(R"({"type":"lz4","framing":"frame","blockSizeId":3})", "allowed range 4..7");
  rejects(R"({"type":"lz4","framing":"frame","blockSize":65536})", "blockSizeId");
  rejects(R"({"type":"lz4","framing":"frame","contentChecksum":1})", "must be true or false");
  rejects(R"({"type":"lz4","framing":"numcodecs","blockSize":65536})", "acceleration");
  rejects(R"({"type":"lz4","framing":"numcodecs","acceleration":0})", "allowed range 1..65537");
}

TEST_CASE("lz4: a blockSize below 64 (z5's lz4 level) reads but does not write") {
  stowage::Codec z5 = codec(R"({"type":"lz4","blockSize":9})");
  CHECK(z5.canonical_config() == R"({"blockSize":9,"type":"lz4"})");
  Bytes data = ramp_bytes(1000, 9);
  Bytes java_style = codec(R"({"type":"lz4"})").encode(data.data(), data.size());
  CHECK(z5.decode(java_style.data(), java_style.size(), data.size()) == data);
  check_error([&] { z5.encode(data.data(), data.size()); }, ErrorCode::invalid_argument,
              R"("blockSize" is 9, allowed range 64..33554432 for writing)");
  check_error([&] { codec(R"({"type":"lz4","blockSize":63})").encode(data.data(), data.size()); },
              ErrorCode::invalid_argument, "allowed range 64..33554432");
}

TEST_CASE("lz4: LZ4Block layout: token level, block split, RAW fallback, end mark") {
  struct Case {
    int block_size;
    uint8_t level;
  };
  for (Case k : {Case{64, 0}, Case{1024, 0}, Case{1025, 1}, Case{65536, 6}, Case{100000, 7},
                 Case{1 << 25, 15}}) {
    CAPTURE(k.block_size);
    stowage::Codec c = codec(R"({"type":"lz4","blockSize":)" + std::to_string(k.block_size) + "}");
    Bytes data = ramp_bytes(3000, 1);
    Bytes enc = c.encode(data.data(), data.size());
    auto headers = block_headers(enc);
    size_t blocks = (3000 + k.block_size - 1) / k.block_size;
    REQUIRE(headers.size() == blocks + 1);
    for (size_t i = 0; i < blocks; ++i) {
      CHECK((headers[i].token & 0x0F) == k.level);
      CHECK(headers[i].original == std::min<uint32_t>(k.block_size, 3000 - i * k.block_size));
    }
    const BlockHeader& end = headers.back();
    CHECK(end.token == (0x10 | k.level));
    CHECK((end.compressed | end.original | end.checksum) == 0);
    CHECK(c.decode(enc.data(), enc.size(), data.size()) == data);
  }
  stowage::Codec c = codec(R"({"type":"lz4","blockSize":1024})");
  Bytes noise = random_bytes(2048, 7);
  auto headers = block_headers(c.encode(noise.data(), noise.size()));
  REQUIRE(headers.size() == 3);
  CHECK(headers[0].token == 0x10);  // RAW: LZ4 does not shrink noise
  CHECK(headers[0].compressed == 1024);
  Bytes empty = c.encode(nullptr, 0);
  CHECK(empty.size() == 21);  // the end mark alone
  CHECK(c.decode(empty.data(), empty.size(), 0).empty());
  CHECK(c.bound(0) == 21);
  CHECK(c.bound(2048) >= 2048 + 3 * 21);
}

TEST_CASE("lz4: LZ4Block streams N5 Java 3.x would also accept") {
  stowage::Codec c = codec(R"({"type":"lz4","blockSize":1024})");
  Bytes data = mixed_bytes(5000, 3);
  Bytes enc = c.encode(data.data(), data.size());
  Bytes without_end(enc.begin(), enc.end() - 21);  // ends at a block boundary
  CHECK(c.decode(without_end.data(), without_end.size(), data.size()) == data);
  Bytes trailing = enc;
  trailing.insert(trailing.end(), {1, 2, 3});  // lz4-java stops at the end mark
  CHECK(c.decode(trailing.data(), trailing.size(), data.size()) == data);
}

TEST_CASE("lz4: malformed LZ4Block streams are CORRUPT with the reason") {
  stowage::Codec c = codec(R"({"type":"lz4","blockSize":1024})");
  Bytes data = ramp_bytes(3000, 5);
  const Bytes good = c.encode(data.data(), data.size());
  auto headers = block_headers(good);
  REQUIRE((headers[0].token & 0xF0) == 0x20);  // LZ4-compressed first block
  const size_t second = 21 + headers[0].compressed;
  auto mutated = [&](auto&& change) {
    Bytes b = good;
    change(b);
    return b;
  };
  check_corrupt_decode(c, mutated([](Bytes& b) { b[17] ^= 0x01; }), 3000,
                       "checksum mismatch at byte 0");
  check_corrupt_decode(c, Bytes(good.begin(), good.begin() + 10), 3000, "truncated: 10 bytes left");
  check_corrupt_decode(c, Bytes(good.begin(), good.begin() + 30), 3000,
                       "LZ4Block stream truncated");
  check_corrupt_decode(c, mutated([](Bytes& b) { b[8] = 0x30; }), 3000,
                       "unknown compression method in token 0x30");
  check_corrupt_decode(c, mutated([](Bytes& b) { put_le32(b, 13, 2000); }), 3000,
                       "impossible block lengths");
  check_corrupt_decode(c, mutated([](Bytes& b) { put_le32(b, 9, uint32_t(-5)); }), 3000,
                       "impossible block lengths");
  check_corrupt_decode(c, mutated([](Bytes& b) { b[8] = 0x10; }), 3000,
                       "impossible block lengths");  // RAW, lengths differ
  check_corrupt_decode(c, mutated([&](Bytes& b) { b[second + 2] = 'X'; }), 3000,
                       "no \"LZ4Block\" magic at byte " + std::to_string(second));
  check_corrupt_decode(c, mutated([](Bytes& b) { put_le32(b, b.size() - 4, 7); }), 3000,
                       "end mark with a nonzero checksum");
  check_corrupt_decode(c, mutated([](Bytes& b) {
                         b[22] ^= 0xFF;
                         b[23] ^= 0xFF;
                       }),
                       3000, "lz4: LZ4Block stream");
  check_corrupt_decode(c, good, 2999, "decodes to more than the expected 2999 bytes");
  check_corrupt_decode(c, good, 0, "more than the expected 0 bytes");
  check_corrupt_decode(c, bytes("hello, this is not lz4"), 3000, "no known lz4 framing");
}

TEST_CASE("lz4: LZ4 frames: options, round trips, empty frames, malformed frames") {
  Bytes data = mixed_bytes(9 << 20, 11);  // > 2 blocks of 4 MiB
  for (const char* options :
       {"", R"(,"level":9)", R"(,"blockSizeId":4,"blockChecksum":true,"contentSize":true)",
        R"(,"contentChecksum":false,"blockSizeId":5)"}) {
    CAPTURE(options);
    stowage::Codec c = codec(std::string(R"({"type":"lz4","framing":"frame")") + options + "}");
    Bytes enc = c.encode(data.data(), data.size());
    CHECK(enc.size() <= c.bound(data.size()));
    CHECK(Bytes(enc.begin(), enc.begin() + 4) == Bytes{0x04, 0x22, 0x4D, 0x18});
    CHECK((enc[4] & 0x01) == 0);  // never a dictID
    CHECK(c.decode(enc.data(), enc.size(), data.size()) == data);
    // The default framing recognises frames too (rust-n5).
    CHECK(codec(R"({"type":"lz4"})").decode(enc.data(), enc.size(), data.size()) == data);
  }
  stowage::Codec c = codec(R"({"type":"lz4","framing":"frame"})");
  Bytes empty = c.encode(nullptr, 0);
  CHECK(c.decode(empty.data(), empty.size(), 0).empty());
  // datg's empty frame, as commons-compress writes it.
  Bytes datg_empty{0x04, 0x22, 0x4D, 0x18, 0x64, 0x70, 0xB9, 0x00,
                   0x00, 0x00, 0x00, 0x05, 0x5D, 0xCC, 0x02};
  CHECK(c.decode(datg_empty.data(), datg_empty.size(), 0).empty());

  Bytes small = ramp_bytes(100000, 2);
  const Bytes good = c.encode(small.data(), small.size());
  check_corrupt_decode(c, Bytes(good.begin(), good.end() - 3), small.size(), "LZ4 frame truncated");
  Bytes trailing = good;
  trailing.push_back(0);
  check_corrupt_decode(c, trailing, small.size(), "1 unexpected bytes after the LZ4 frame");
  Bytes bad_sum = good;
  bad_sum.back() ^= 0x40;
  check_corrupt_decode(c, bad_sum, small.size(), "corrupt LZ4 frame");
  check_corrupt_decode(c, good, small.size() - 1, "decodes to more than the expected 99999 bytes");
  check_corrupt_decode(c, bytes("LZ4Block"), 10, "not an LZ4 frame");
  Bytes concatenated(2 * datg_empty.size());
  std::copy(datg_empty.begin(), datg_empty.end(), concatenated.begin());
  std::copy(datg_empty.begin(), datg_empty.end(), concatenated.begin() + datg_empty.size());
  check_corrupt_decode(c, concatenated, 0, "15 unexpected bytes after the LZ4 frame");
}

TEST_CASE("lz4: passes the codec conformance checks, and one instance serves several threads") {
  // XXH32 of each LZ4Block's bytes; frames carry a content checksum by default.
  for (const char* cfg : {R"({"type":"lz4","blockSize":4096})",
                          R"({"type":"lz4","framing":"frame","blockSizeId":4})"}) {
    CAPTURE(cfg);
    codec_checks::Spec spec{cfg, "lz4"};
    spec.checksummed = true;
    // The other framings' parameters are kept and ignored (config test): numcodecs' always, the
    // frame's in LZ4Block.
    spec.ignored_parameters = {"acceleration"};
    if (std::string(cfg).find("frame") == std::string::npos)
      spec.ignored_parameters.insert(
          spec.ignored_parameters.end(),
          {"level", "blockSizeId", "contentChecksum", "blockChecksum", "contentSize"});
    codec_checks::check_codec(spec);
    std::vector<Bytes> inputs;  // many blocks each, of sizes no block size divides
    for (int k = 0; k < 30; ++k)
      inputs.push_back(mixed_bytes(50000 + 1000 * (k % 4) + k, 100 * (k % 4) + k));
    codec_checks::check_thread_safe(codec(cfg), inputs, 4, 1);
  }
}
