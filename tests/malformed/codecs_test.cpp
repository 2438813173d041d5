// Every codec's decoder on broken payloads: truncated at many offsets,
// bytes flipped, garbage, and decompression bombs (a tiny payload that
// expands to far more than the caller's capacity). Each is CORRUPT, the
// message names the codec, and output never runs past the capacity.
#include "malformed_support.hpp"

#include <random>

using malformed::attempt;
using stowage::ErrorCode;

namespace {

struct CodecCase {
  const char* name;  // for reports; the id the message must name
  const char* config;
};

const CodecCase kCodecs[] = {
    {"gzip", R"({"type": "gzip"})"},
    {"gzip", R"({"type": "gzip", "useZlib": true})"},
    {"bzip2", R"({"type": "bzip2"})"},
    {"xz", R"({"type": "xz"})"},
    {"zstd", R"({"type": "zstd"})"},
    {"lz4", R"({"type": "lz4"})"},
    {"lz4", R"({"type": "lz4", "framing": "frame"})"},
    {"blosc", R"({"type": "blosc"})"},
};

std::string sample_bytes(size_t n) {
  std::string s(n, '\0');
  std::mt19937 rng(7);
  for (size_t i = 0; i < n; ++i) s[i] = char(i % 97 < 60 ? 'a' + i % 7 : rng() & 0xff);
  return s;
}

// Decodes into a buffer with guard bytes after `capacity`, and checks the
// guard is untouched whatever happens.
malformed::Outcome decode_guarded(const stowage::Codec& codec, const std::string& payload,
                                  size_t capacity) {
  std::vector<uint8_t> out(capacity + 64, 0xA5);
  auto outcome =
      attempt([&] { codec.decode(payload.data(), payload.size(), out.data(), capacity); });
  for (size_t i = capacity; i < out.size(); ++i) REQUIRE(out[i] == 0xA5);
  return outcome;
}

// Which configs carry an integrity check over the decoded bytes, as each
// codec's plugin writes them:
//   gzip: CRC32 of the data in the gzip trailer (inflate verifies it);
//   gzip useZlib: Adler-32 in the zlib trailer;
//   bzip2: a CRC32 per block and a combined CRC of the stream;
//   xz: CRC64 of the data (xz.cpp: LZMA_CHECK_CRC64), CRC32 over its headers;
//   lz4 (LZ4Block, lz4-java's framing): XXH32 of each block's decoded bytes
//     (lz4_block_stream.cpp), so it is covered too;
//   lz4 framing "frame": contentChecksum defaults to true (lz4_codec.cpp);
//   zstd: NO -- zstd.cpp never sets ZSTD_c_checksumFlag, so the frame has no
//     content checksum and a flipped literal decodes to other bytes;
//   blosc: NO -- c-blosc 1 frames carry no checksum.
// A flip in a byte no check covers but that decoding ignores (a gzip MTIME,
// an LZ4Block compression-level nibble) still gives the original.
bool has_checksum(const std::string& config) {
  return config.find("zstd") == std::string::npos && config.find("blosc") == std::string::npos;
}

}  // namespace

TEST_CASE("codecs: truncated payloads are CORRUPT and name the codec") {
  const std::string original = sample_bytes(20000);
  for (const auto& c : kCodecs) {
    if (test::plugin_off(c.name)) continue;  // a codec plugin this build left out
    const std::string config = c.config;
    CAPTURE(config);
    auto codec = stowage::Registry::global().codec(c.config);
    auto encoded = codec.encode(original.data(), original.size());
    std::string payload(encoded.begin(), encoded.end());
    for (size_t cut : malformed::truncation_points(payload.size())) {
      CAPTURE(cut);
      // Through the sized decode readers use: a framing cut at a block
      // boundary may decode a valid shorter prefix, which the size check catches.
      std::string cut_payload = payload.substr(0, cut);
      decode_guarded(codec, cut_payload, original.size());
      auto o =
          attempt([&] { codec.decode(cut_payload.data(), cut_payload.size(), original.size()); });
      CHECK(o.threw);
      CHECK_MESSAGE(o.code == ErrorCode::corrupt, stowage::error_code_name(o.code));
      CHECK(o.message.find(c.name) != std::string::npos);
    }
  }
}

TEST_CASE("codecs: flipped bytes give the original or CORRUPT, never a crash") {
  const std::string original = sample_bytes(5000);
  std::mt19937 rng(11);
  for (const auto& c : kCodecs) {
    if (test::plugin_off(c.name)) continue;  // a codec plugin this build left out
    const std::string config = c.config;
    CAPTURE(config);
    const bool checked = has_checksum(config);
    auto codec = stowage::Registry::global().codec(c.config);
    auto encoded = codec.encode(original.data(), original.size());
    int originals = 0, errors = 0, wrong = 0;
    for (int trial = 0; trial < 200; ++trial) {
      std::string payload(encoded.begin(), encoded.end());
      size_t at = rng() % payload.size();
      payload[at] = char(payload[at] ^ (1 + rng() % 255));
      CAPTURE(at);
      decode_guarded(codec, payload, original.size());
      // The sized decode readers use: exactly original.size() bytes or an error.
      std::vector<uint8_t> out;
      auto o =
          attempt([&] { out = codec.decode(payload.data(), payload.size(), original.size()); });
      if (o.threw) {
        ++errors;
        CHECK_MESSAGE(o.code == ErrorCode::corrupt, stowage::error_code_name(o.code));
        CHECK(o.message.find(c.name) != std::string::npos);
        continue;
      }
      REQUIRE(out.size() == original.size());
      const bool same = std::string(out.begin(), out.end()) == original;
      same ? ++originals : ++wrong;
      // With a checksum a wrong value is a bug; without one it cannot be
      // detected here, only that the size is right (checked above).
      if (checked) CHECK_MESSAGE(same, "a flipped byte decoded to other values without an error");
    }
    MESSAGE(config << ": " << originals << " original, " << errors << " errors, " << wrong
                   << " wrong values");
    CHECK(errors > 0);
    if (checked) CHECK(wrong == 0);
  }
}

TEST_CASE("codecs: garbage and empty payloads are CORRUPT") {
  std::mt19937 rng(3);
  for (const auto& c : kCodecs) {
    if (test::plugin_off(c.name)) continue;  // a codec plugin this build left out
    const std::string config = c.config;
    CAPTURE(config);
    auto codec = stowage::Registry::global().codec(c.config);
    decode_guarded(codec, "", 100);
    auto o = attempt([&] { codec.decode("", 0, 100); });
    CHECK(o.threw);
    CHECK(o.code == ErrorCode::corrupt);
    for (int trial = 0; trial < 50; ++trial) {
      std::string garbage(1 + rng() % 300, '\0');
      for (auto& ch : garbage) ch = char(rng());
      auto g = decode_guarded(codec, garbage, 1000);
      CHECK(g.threw);
      // A blosc header with a random version byte is a version we do not read.
      bool blosc_version =
          config.find("blosc") != std::string::npos && g.code == ErrorCode::unsupported;
      CHECK_MESSAGE((g.code == ErrorCode::corrupt || blosc_version),
                    stowage::error_code_name(g.code));
      CHECK(g.message.find(c.name) != std::string::npos);
    }
  }
}

TEST_CASE("codecs: decompression bombs stop at the capacity") {
  // 64 MiB of zeros compress to a few KiB (xz, zstd, gzip, bzip2: < 300 KiB);
  // decoding into 1 MiB must fail fast as CORRUPT without producing the rest.
  const size_t bomb_size = size_t(64) << 20;
  const std::string zeros(bomb_size, '\0');
  for (const char* config : {R"({"type": "gzip"})", R"({"type": "zstd"})", R"({"type": "xz"})",
                             R"({"type": "bzip2"})", R"({"type": "lz4", "framing": "frame"})"}) {
    const std::string name = config;
    CAPTURE(name);
    if (test::codec_off(stowage::json::parse(name)))
      continue;  // a codec plugin this build left out
    auto codec = stowage::Registry::global().codec(config);
    auto bomb = codec.encode(zeros.data(), zeros.size());
    CHECK(bomb.size() < bomb_size / 200);
    std::string payload(bomb.begin(), bomb.end());
    auto o = decode_guarded(codec, payload, size_t(1) << 20);
    CHECK(o.threw);
    CHECK_MESSAGE(o.code == ErrorCode::corrupt, stowage::error_code_name(o.code));
  }
}
