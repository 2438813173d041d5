// Codec "bzip2": config, the N5 README example, real chunks from Java and
// zarr, Python's bz2 and numcodecs as peers in both directions, bad payloads.
#include "codec_test_helpers.hpp"

using namespace codec_test;

namespace {
stowage::Codec bzip2(int block_size) {
  return codec(R"({"type":"bzip2","blockSize":)" + std::to_string(block_size) + "}");
}
}  // namespace

TEST_CASE("bzip2: config defaults, canonical form and ranges") {
  CHECK(codec(R"({"type":"bzip2"})").canonical_config() == R"({"blockSize":9,"type":"bzip2"})");
  CHECK(codec(R"({"type":"bzip2","blockSize":1,"x":[1]})").canonical_config() ==
        R"({"blockSize":1,"type":"bzip2","x":[1]})");
  for (const char* bad :
       {R"({"type":"bzip2","blockSize":0})", R"({"type":"bzip2","blockSize":10})"}) {
    Failure f = failure_of([&] { codec(bad); });
    CHECK(f.code == stowage::ErrorCode::invalid_argument);
    CHECK_MESSAGE(f.message.find("\"blockSize\"") != std::string::npos, f.message);
    CHECK_MESSAGE(f.message.find("1..9") != std::string::npos, f.message);
  }
  CHECK(failure_of([] { codec(R"({"type":"bzip2","blockSize":4.5})"); }).code ==
        stowage::ErrorCode::invalid_argument);
}

TEST_CASE("bzip2: the N5 README example decodes exactly") {
  // libbz2 picks other Huffman tables than commons-compress, so the README's
  // bytes are checked by decoding them.
  CHECK(decode(codec(R"({"type":"bzip2"})"), spec_example_payload("bzip2"), 12) ==
        spec_example_values());
}

TEST_CASE("bzip2: every bzip2 chunk of the Java and zarr fixtures decodes exactly") {
  CHECK(check_fixture_dataset("n5java-4.0.2-written.n5", "bzip2/uint8_2d") > 0);
  CHECK(check_fixture_dataset("java-style.n5", "bzip2/int16_3d") > 0);
  CHECK(check_fixture_dataset("zarr-written.n5", "bzip2/float32_2d") > 0);
}

TEST_CASE("bzip2: round trips at every block size, including multi-block streams") {
  std::vector<Sample> inputs = samples();
  inputs.push_back({"large", microscopy_u16(600000)});  // 1.2 MB: 12 blocks at blockSize 1
  for (const Sample& s : inputs)
    for (int block_size = 1; block_size <= 9; block_size += (s.name == "large" ? 8 : 1)) {
      CAPTURE(s.name);
      CAPTURE(block_size);
      stowage::Codec c = bzip2(block_size);
      Bytes packed = check_round_trip(c, s.data);
      CHECK(text(Bytes(packed.begin(), packed.begin() + 4)) == "BZh" + std::to_string(block_size));
    }
}

TEST_CASE("bzip2: Python's bz2 and numcodecs read ours, and we read theirs") {
  PeerExchange peer;
  peer.put_samples({{".ours.1", bzip2(1)}, {".ours.9", bzip2(9)}});
  peer.run_python(R"PY(
import bz2
import numcodecs
for name in sample_names:
    data = rd(name + '.data')
    for b in (1, 9):
        wr(name + '.by_python.%d' % b, bz2.decompress(rd(name + '.ours.%d' % b)))
        wr(name + '.by_numcodecs.%d' % b, numcodecs.BZ2().decode(rd(name + '.ours.%d' % b)))
        wr(name + '.python.%d' % b, bz2.compress(data, b))
    wr(name + '.numcodecs', numcodecs.BZ2(1).encode(data))
    half = len(data) // 2
    wr(name + '.python.streams', bz2.compress(data[:half]) + bz2.compress(data[half:]))
)PY");
  check_samples_came_back(peer,
                          {".by_python.1", ".by_numcodecs.1", ".by_python.9", ".by_numcodecs.9"});
  check_we_decode_theirs(peer, bzip2(9),
                         {".python.1", ".python.9", ".numcodecs", ".python.streams"});
  // Python's bz2 is libbz2 too: the same block size gives the same bytes.
  for (int b : {1, 9}) check_we_encode_their_bytes(peer, bzip2(b), ".python." + std::to_string(b));
}

TEST_CASE("bzip2: N5 Java's own streams (commons-compress) read ours, and we read theirs") {
  PeerExchange peer;
  exchange_with_n5_java(peer, {{"bzip2", bzip2(9)}});
}

TEST_CASE("bzip2: truncated, corrupt, oversized and trailing data are CORRUPT") {
  const Bytes data = microscopy_u16(64 * 64 * 4);
  stowage::Codec c = bzip2(9);
  const Bytes packed = check_damaged_encodings_fail(c, data, "bzip2");

  Bytes bad_block = packed;  // the block magic 31 41 59 26 53 59 after "BZh9"
  bad_block[5] ^= 0xff;
  CHECK_CORRUPT(decode_failure(c, bad_block, data.size()), "bzip2", "corrupt");
  CHECK_CORRUPT(decode_failure(c, packed, data.size() - 1), "bzip2", "more than the expected");
  CHECK_CORRUPT(decode_failure(c, packed, 0), "bzip2", "more than the expected");
  Bytes trailing = packed;
  trailing.push_back('x');
  CHECK_CORRUPT(decode_failure(c, trailing, data.size()), "bzip2", "trailing data");
  CHECK_CORRUPT(decode_failure(c, {}, 10), "bzip2", "empty");
  CHECK_CORRUPT(decode_failure(c, bytes("BZh0garbage"), 10), "bzip2", "bzip2 header");
  Bytes roomy(data.size() + 100);
  CHECK(c.decode(packed.data(), packed.size(), roomy.data(), roomy.size()) == data.size());
}

TEST_CASE("bzip2: passes the codec conformance checks (tests/support/codec_checks.hpp)") {
  Spec spec{R"({"type":"bzip2","blockSize":5})", "bzip2"};
  spec.checksummed = true;  // a CRC32 per block and one of the stream
  check_codec(spec);
  check_small_output_buffer(bzip2(5), microscopy_u16(64 * 64 * 2));  // and says "too small"
}
