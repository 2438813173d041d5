// Codec "xz": config, the N5 README example byte for byte, real chunks from
// Java and zarr, Python's lzma and numcodecs as peers in both directions,
// bad payloads.
#include "codec_test_helpers.hpp"

using namespace codec_test;

namespace {
stowage::Codec xz(int preset) {
  return codec(R"({"type":"xz","preset":)" + std::to_string(preset) + "}");
}
}  // namespace

TEST_CASE("xz: config defaults, canonical form and ranges") {
  CHECK(codec(R"({"type":"xz"})").canonical_config() == R"({"preset":6,"type":"xz"})");
  CHECK(codec(R"({"type":"xz","preset":0,"note":"kept"})").canonical_config() ==
        R"({"note":"kept","preset":0,"type":"xz"})");
  for (const char* bad : {R"({"type":"xz","preset":-1})", R"({"type":"xz","preset":10})"}) {
    Failure f = failure_of([&] { codec(bad); });
    CHECK(f.code == stowage::ErrorCode::invalid_argument);
    CHECK_MESSAGE(f.message.find("\"preset\"") != std::string::npos, f.message);
    CHECK_MESSAGE(f.message.find("0..9") != std::string::npos, f.message);
  }
}

TEST_CASE("xz: the N5 README example decodes, and preset 6 reproduces its bytes") {
  const Bytes readme = spec_example_payload("xz");
  CHECK(decode(xz(6), readme, 12) == spec_example_values());
  CHECK(encode(xz(6), spec_example_values()) == readme);
}

TEST_CASE("xz: every xz chunk of the Java and zarr fixtures decodes exactly") {
  CHECK(check_fixture_dataset("n5java-4.0.2-written.n5", "xz/float64_2d") > 0);
  CHECK(check_fixture_dataset("java-style.n5", "xz/float64_2d") > 0);
  CHECK(check_fixture_dataset("zarr-written.n5", "xz/int64_1d") > 0);
}

TEST_CASE("xz: round trips at every preset") {
  for (const Sample& s : samples())
    for (int preset = 0; preset <= 9; ++preset) {
      // Presets 7..9 only differ in dictionary size (and memory): one small input is enough.
      if (preset >= 7 && s.name != "text") continue;
      CAPTURE(s.name);
      CAPTURE(preset);
      check_round_trip(xz(preset), s.data);
    }
}

TEST_CASE("xz: Python's lzma and numcodecs read ours, and we read theirs") {
  PeerExchange peer;
  peer.put_samples({{".ours", xz(6)}});
  peer.run_python(R"PY(
import lzma
import numcodecs
for name in sample_names:
    data = rd(name + '.data')
    wr(name + '.by_python', lzma.decompress(rd(name + '.ours'), format=lzma.FORMAT_XZ))
    wr(name + '.by_numcodecs', numcodecs.LZMA().decode(rd(name + '.ours')))
    for preset in (0, 3, 6):
        wr(name + '.python.%d' % preset,
           lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=preset))
    wr(name + '.python.crc32', lzma.compress(data, check=lzma.CHECK_CRC32))
    wr(name + '.python.sha256', lzma.compress(data, check=lzma.CHECK_SHA256, preset=1))
    wr(name + '.numcodecs', numcodecs.LZMA(preset=1).encode(data))
    half = len(data) // 2
    wr(name + '.python.streams', lzma.compress(data[:half]) + lzma.compress(data[half:]))
)PY");
  check_samples_came_back(peer, {".by_python", ".by_numcodecs"});
  check_we_decode_theirs(peer, xz(6),
                         {".python.0", ".python.3", ".python.6", ".python.crc32", ".python.sha256",
                          ".numcodecs", ".python.streams"});
  // Python's lzma is liblzma's streaming encoder too: the same preset gives the same bytes.
  for (int preset : {0, 3, 6})
    check_we_encode_their_bytes(peer, xz(preset), ".python." + std::to_string(preset));
}

TEST_CASE("xz: N5 Java's own streams (commons-compress, xz-java) read ours, and we read theirs") {
  PeerExchange peer;
  exchange_with_n5_java(peer, {{"xz", xz(6)}});
}

TEST_CASE("xz: truncated, corrupt, oversized and trailing data are CORRUPT") {
  const Bytes data = microscopy_u16(64 * 64 * 4);
  stowage::Codec c = xz(6);
  const Bytes packed = check_damaged_encodings_fail(c, data, "xz");

  // The block's CRC64 sits just before the index: flipping a data byte is caught.
  Bytes bad_data = packed;
  bad_data[packed.size() / 2] ^= 0x01;
  CHECK_CORRUPT(decode_failure(c, bad_data, data.size()), "xz", "xz");
  CHECK_CORRUPT(decode_failure(c, packed, data.size() - 1), "xz", "more than the expected");
  Bytes trailing = packed;
  for (char ch : std::string("junk")) trailing.push_back(static_cast<uint8_t>(ch));
  CHECK(decode_failure(c, trailing, data.size()).code == stowage::ErrorCode::corrupt);
  // Stream padding (a multiple of four zero bytes) is part of the .xz format.
  Bytes padded = packed;
  padded.insert(padded.end(), 4, 0);
  CHECK(decode(c, padded, data.size()) == data);
  CHECK_CORRUPT(decode_failure(c, {}, 10), "xz", "empty");
  CHECK_CORRUPT(decode_failure(c, bytes("\x1f\x8b not xz"), 10), "xz", "magic");
}

namespace {
uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}
}  // namespace

TEST_CASE("xz: a header asking for a 4 GiB dictionary is refused, not allocated") {
  // Our stream's first block header: size, flags, LZMA2 filter id 0x21, one
  // property byte (the dictionary size code), padding, CRC32 of those 8 bytes.
  Bytes packed = encode(xz(6), spec_example_values());
  const size_t header = 12;
  REQUIRE(packed[header + 2] == 0x21);
  packed[header + 4] = 40;  // the largest code: 4 GiB - 1
  uint32_t crc = crc32(&packed[header], 8);
  for (int i = 0; i < 4; ++i) packed[header + 8 + i] = static_cast<uint8_t>(crc >> (8 * i));
  Failure f = decode_failure(xz(6), packed, 12);
  CHECK(f.code == stowage::ErrorCode::unsupported);
  CHECK_MESSAGE(f.message.find("dictionary") != std::string::npos, f.message);
}

TEST_CASE("xz: passes the codec conformance checks (tests/support/codec_checks.hpp)") {
  Spec spec{R"({"type":"xz","preset":1})", "xz"};
  spec.checksummed = true;  // CRC64 of the data (xz.cpp: LZMA_CHECK_CRC64)
  check_codec(spec);
  check_small_output_buffer(xz(1), microscopy_u16(64 * 64 * 2));  // and says "too small"
}
