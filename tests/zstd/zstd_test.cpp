// Codec "zstd": config (with zarr's stray "id"), real chunks from zstd-jni
// and zarr, python-zstandard and numcodecs as peers in both directions
// (frames with and without content size), bad payloads.
#include "codec_test_helpers.hpp"

using namespace codec_test;

namespace {
stowage::Codec zstd(int level) {
  return codec(R"({"type":"zstd","level":)" + std::to_string(level) + "}");
}
}  // namespace

TEST_CASE("zstd: config defaults, canonical form and ranges") {
  CHECK(codec(R"({"type":"zstd"})").canonical_config() == R"({"level":3,"type":"zstd"})");
  // zarr-python writes a stray "id"; it is kept and ignored.
  CHECK(codec(R"({"type":"zstd","id":"zstd","level":3})").canonical_config() ==
        R"({"id":"zstd","level":3,"type":"zstd"})");
  CHECK(codec(R"({"type":"zstd","level":-7})").canonical_config() ==
        R"({"level":-7,"type":"zstd"})");
  Failure f = failure_of([] { codec(R"({"type":"zstd","level":23})"); });
  CHECK(f.code == stowage::ErrorCode::invalid_argument);
  CHECK_MESSAGE(f.message.find("\"level\"") != std::string::npos, f.message);
  CHECK_MESSAGE(f.message.find("..22") != std::string::npos, f.message);
  CHECK(failure_of([] { codec(R"({"type":"zstd","level":"3"})"); }).code ==
        stowage::ErrorCode::invalid_argument);
}

TEST_CASE("zstd: every zstd chunk of the zstd-jni and zarr fixtures decodes exactly") {
  CHECK(check_fixture_dataset("java-style.n5", "zstd/uint32_2d") > 0);
  CHECK(check_fixture_dataset("zarr-written.n5", "zstd/uint64_2d") > 0);
}

TEST_CASE("zstd: round trips at several levels") {
  for (const Sample& s : samples())
    for (int level : {-5, 1, 3, 9, 19}) {
      CAPTURE(s.name);
      CAPTURE(level);
      check_round_trip(zstd(level), s.data);
    }
}

TEST_CASE("zstd: python-zstandard and numcodecs read ours, and we read theirs") {
  PeerExchange peer;
  peer.put_samples({{".ours", zstd(3)}});
  peer.run_python(R"PY(
import numcodecs, zstandard
for name in sample_names:
    data, ours = rd(name + '.data'), rd(name + '.ours')
    # n5-zstandard's reader and zstandard's one-shot decompress need the content size.
    wr(name + '.content_size', b'%d' % zstandard.get_frame_parameters(ours).content_size)
    wr(name + '.by_python', zstandard.ZstdDecompressor().decompress(ours))
    # numcodecs 0.11 refuses a frame whose content size is 0 ("invalid input data").
    if data:
        wr(name + '.by_numcodecs', numcodecs.Zstd().decode(ours))
    wr(name + '.python.sized', zstandard.ZstdCompressor(level=3).compress(data))
    wr(name + '.python.checksum', zstandard.ZstdCompressor(level=5, write_checksum=True).compress(data))
    unsized = zstandard.ZstdCompressor(level=3, write_content_size=False)
    wr(name + '.python.unsized', unsized.compress(data))
    stream = unsized.compressobj()
    wr(name + '.python.streamed', stream.compress(data) + stream.flush())
    half = len(data) // 2
    wr(name + '.python.frames', zstandard.ZstdCompressor().compress(data[:half]) +
       zstandard.ZstdCompressor().compress(data[half:]))
    wr(name + '.numcodecs', numcodecs.Zstd(level=1).encode(data))
)PY");
  for (const Sample& s : samples()) {
    CAPTURE(s.name);
    CHECK(text(peer.get(s.name + ".content_size")) == std::to_string(s.data.size()));
    if (!s.data.empty()) CHECK(peer.get(s.name + ".by_numcodecs") == s.data);
  }
  check_samples_came_back(peer, {".by_python"});
  check_we_decode_theirs(peer, zstd(3),
                         {".python.sized", ".python.checksum", ".python.unsized",
                          ".python.streamed", ".python.frames", ".numcodecs"});
  // A frame without content size that holds more than the buffer is caught while decoding.
  const Sample big = samples()[3];  // "microscopy"
  CHECK_CORRUPT(
      decode_failure(zstd(3), peer.get(big.name + ".python.unsized"), big.data.size() - 1), "zstd",
      "more than the expected");
}

TEST_CASE("zstd: n5-zstandard's own calls (zstd-jni) read ours, and we read theirs") {
  PeerExchange peer;
  exchange_with_n5_java(peer, {{"zstd", zstd(3)}});
}

TEST_CASE("zstd: truncated, corrupt, oversized and trailing data are CORRUPT") {
  const Bytes data = microscopy_u16(64 * 64 * 4);
  stowage::Codec c = zstd(3);
  const Bytes packed = check_damaged_encodings_fail(c, data, "zstd");

  Bytes bad_magic = packed;
  bad_magic[0] ^= 0xff;
  CHECK_CORRUPT(decode_failure(c, bad_magic, data.size()), "zstd", "frame header");
  CHECK_CORRUPT(decode_failure(c, packed, data.size() - 1), "zstd", "declares");
  Bytes trailing = packed;
  trailing.insert(trailing.end(), {1, 2, 3});
  CHECK_CORRUPT(decode_failure(c, trailing, data.size()), "zstd", "zstd");
  CHECK_CORRUPT(decode_failure(c, {}, 10), "zstd", "empty");
  Bytes roomy(data.size() + 100);
  CHECK(c.decode(packed.data(), packed.size(), roomy.data(), roomy.size()) == data.size());
}

TEST_CASE("zstd: passes the codec conformance checks (tests/support/codec_checks.hpp)") {
  // No content checksum (zstd.cpp never sets ZSTD_c_checksumFlag).
  check_codec({R"({"type":"zstd","level":3})", "zstd"});
  check_codec({R"({"type":"zstd","level":-5})", "zstd"});
  check_small_output_buffer(zstd(3), microscopy_u16(64 * 64 * 2));  // and says "too small"
}
