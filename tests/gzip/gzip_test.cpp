// Codec "gzip" (and its alias "zlib"): config, golden bytes from the N5
// README and N5 Java 4.0.2, real chunks from Java and zarr, Python's gzip/zlib
// and numcodecs as peers in both directions, and bad payloads.
#include "codec_test_helpers.hpp"

using namespace codec_test;

TEST_CASE("gzip: config defaults, canonical form, alias and ranges") {
  CHECK(codec(R"({"type":"gzip"})").canonical_config() ==
        R"({"level":6,"type":"gzip","useZlib":false})");
  CHECK(codec(R"({"type":"gzip","level":-1,"useZlib":true})").canonical_config() ==
        R"({"level":-1,"type":"gzip","useZlib":true})");
  // The id "zlib" reaches the gzip plugin and means useZlib true.
  stowage::Codec z = codec(R"({"type":"zlib","level":9})");
  CHECK(z.id() == "gzip");
  CHECK(z.canonical_config() == R"({"level":9,"type":"gzip","useZlib":true})");
  // Unknown keys are kept, as N5 Java keeps them.
  CHECK(codec(R"({"type":"gzip","level":1,"id":"gzip"})").canonical_config() ==
        R"({"id":"gzip","level":1,"type":"gzip","useZlib":false})");
  // The encoder: the default (libdeflate) is left out, as N5 Java writes the
  // attributes; zlib is kept, so that a reopened dataset writes alike.
  CHECK(codec(R"({"type":"gzip","encoder":"libdeflate"})").canonical_config() ==
        R"({"level":6,"type":"gzip","useZlib":false})");
  CHECK(codec(R"({"type":"gzip","encoder":"zlib"})").canonical_config() ==
        R"({"encoder":"zlib","level":6,"type":"gzip","useZlib":false})");
  Failure encoder = failure_of([] { codec(R"({"type":"gzip","encoder":"miniz"})"); });
  CHECK(encoder.code == stowage::ErrorCode::invalid_argument);
  CHECK_MESSAGE(encoder.message.find("libdeflate, zlib") != std::string::npos, encoder.message);

  Failure high = failure_of([] { codec(R"({"type":"gzip","level":10})"); });
  CHECK(high.code == stowage::ErrorCode::invalid_argument);
  CHECK_MESSAGE(high.message.find("\"level\"") != std::string::npos, high.message);
  CHECK_MESSAGE(high.message.find("-1..9") != std::string::npos, high.message);
  CHECK(failure_of([] { codec(R"({"type":"gzip","level":-2})"); }).code ==
        stowage::ErrorCode::invalid_argument);
  Failure type = failure_of([] { codec(R"({"type":"gzip","useZlib":"yes"})"); });
  CHECK(type.code == stowage::ErrorCode::invalid_argument);
  CHECK_MESSAGE(type.message.find("useZlib") != std::string::npos, type.message);
  CHECK(failure_of([] { codec(R"({"type":"zlib","useZlib":false})"); }).code ==
        stowage::ErrorCode::invalid_argument);
}

TEST_CASE("gzip: build_info names libdeflate, zlib and the decoder in use") {
  codec(R"({"type":"gzip"})");  // loads the plugin
  std::optional<stowage::PluginInfo> info = stowage::Registry::global().find("codec", "gzip");
  REQUIRE(info.has_value());
  CHECK_MESSAGE(info->build_info.find("zlib 1.") != std::string::npos, info->build_info);
  CHECK_MESSAGE(info->build_info.find("libdeflate 1.") != std::string::npos, info->build_info);
  // Set by tests/gzip/meson.build for the run against the copy decoding with zlib.
  const bool zlib_decoder = test::env_or("STOWAGE_EXPECT_GZIP_DECODER", "") == std::string("zlib");
  const char* decoder = zlib_decoder ? "zlib (decode)" : "libdeflate (decode)";
  CHECK_MESSAGE(info->build_info.find(decoder) != std::string::npos, info->build_info);
}

TEST_CASE("gzip: the N5 README example decodes, and our zlib encoding is N5 Java's") {
  const Bytes readme = spec_example_payload("gzip");
  CHECK(decode(codec(R"({"type":"gzip"})"), readme, 12) == spec_example_values());
  // Level 6 gives the README's bytes except the OS byte: 0xff as N5 Java 4.x
  // (commons-compress) writes it, where the README shows 0x00.
  Bytes ours = encode(codec(R"({"type":"gzip","encoder":"zlib"})"), spec_example_values());
  Bytes java_style = readme;
  java_style[9] = 0xff;
  CHECK(ours == java_style);
}

TEST_CASE("gzip: with encoder zlib, N5 Java 4.0.2's chunks are reproduced byte for byte") {
  // N5 Java deflates with java.util.zip (zlib), so the same level gives the same bytes.
  const stowage::json zlib_encoder = {{"encoder", "zlib"}};
  // Encoding at other levels and wrappers in between checks that the deflater
  // each thread keeps comes back exactly as a fresh one.
  const Bytes other = microscopy_u16(5000);
  for (const char* chunk : {"0/0", "1/1", "2/1"}) {
    CAPTURE(chunk);
    encode(codec(R"({"type":"gzip","level":1,"encoder":"zlib"})"), other);
    encode(codec(R"({"type":"zlib","level":9,"encoder":"zlib"})"), other);
    Bytes java;
    Bytes ours = reencode_chunk("n5java-4.0.2-written.n5", "gzip/int16_2d_default", chunk, 2, &java,
                                zlib_encoder);
    CHECK(ours == java);
  }
  Bytes java;
  Bytes ours = reencode_chunk("n5java-4.0.2-written.n5", "gzip/uint32_3d_zlib", "1/0/1", 4, &java,
                              zlib_encoder);
  CHECK(ours == java);
}

TEST_CASE("gzip: the default encoder is libdeflate, with N5 Java's gzip header") {
  // Where libdeflate's and zlib's deflate differ, the default must give
  // libdeflate's bytes: a regression to zlib (or an ignored "encoder") shows here.
  Bytes java;
  Bytes ours = reencode_chunk("n5java-4.0.2-written.n5", "gzip/int16_2d_default", "0/0", 2, &java);
  CHECK(ours != java);
  const Bytes data = microscopy_u16(64 * 64 * 16);
  for (int level : {-1, 1, 6, 9}) {
    CAPTURE(level);
    const std::string l = std::to_string(level);
    Bytes fast = encode(codec(R"({"type":"gzip","level":)" + l + "}"), data);
    Bytes slow = encode(codec(R"({"type":"gzip","encoder":"zlib","level":)" + l + "}"), data);
    CHECK(fast != slow);
    CHECK(decode(codec(R"({"type":"gzip"})"), fast, data.size()) == data);
    // Header: magic, deflate, no flags, mtime 0 (bytes 4-7), OS 0xff as commons-compress.
    REQUIRE(fast.size() > 10);
    CHECK(Bytes(fast.begin(), fast.begin() + 8) == Bytes{0x1f, 0x8b, 8, 0, 0, 0, 0, 0});
    CHECK(fast[9] == 0xff);
    CHECK(fast[9] == slow[9]);
  }
  // Level 0 is stored blocks in both: the same deflate bytes.
  CHECK(encode(codec(R"({"type":"zlib","level":0})"), data) ==
        encode(codec(R"({"type":"zlib","level":0,"encoder":"zlib"})"), data));
}

TEST_CASE("gzip: every gzip and zlib chunk of the Java and zarr fixtures decodes exactly") {
  const std::pair<const char*, const char*> datasets[] = {
      {"n5java-4.0.2-written.n5", "gzip/int16_2d_default"},
      {"n5java-4.0.2-written.n5", "gzip/uint32_3d_zlib"},
      {"java-style.n5", "gzip/int32_2d"},
      {"java-style.n5", "zlib/uint64_1d"},
      {"java-style.n5", "sparse/int64_2d"},
      {"zarr-written.n5", "gzip/uint16_2d"},
      {"zarr-written.n5", "gzip/int8_3d"},
      {"zarr-written.n5", "zlib/int32_3d"},
      {"zarr-written.n5", "sparse/uint16_2d"},
  };
  for (const auto& [container, dataset] : datasets) {
    CAPTURE(container);
    CAPTURE(dataset);
    CHECK(check_fixture_dataset(container, dataset) > 0);
  }
}

TEST_CASE("gzip: round trips at every level, gzip and zlib, both encoders") {
  for (const Sample& s : samples())
    for (int level = -1; level <= 9; ++level)
      for (bool zlib : {false, true})
        for (const char* encoder : {"libdeflate", "zlib"}) {
          CAPTURE(s.name);
          CAPTURE(level);
          CAPTURE(zlib);
          CAPTURE(encoder);
          stowage::Codec c =
              codec(R"({"type":"gzip","level":)" + std::to_string(level) + R"(,"useZlib":)" +
                    (zlib ? "true" : "false") + R"(,"encoder":")" + encoder + "\"}");
          Bytes packed = check_round_trip(c, s.data);
          CHECK(packed[0] == (zlib ? 0x78 : 0x1f));
        }
}

TEST_CASE("gzip: Python's gzip and zlib and numcodecs read ours, and we read theirs") {
  // Ours from both encoders (libdeflate by default, zlib when asked).
  PeerExchange peer;
  stowage::Codec gz = codec(R"({"type":"gzip"})");
  stowage::Codec zl = codec(R"({"type":"zlib"})");
  stowage::Codec gz_zlib = codec(R"({"type":"gzip","encoder":"zlib"})");
  stowage::Codec zl_zlib = codec(R"({"type":"zlib","encoder":"zlib"})");
  peer.put_samples(
      {{".ours.gzip", gz}, {".ours.zlib", zl}, {".ours.zgzip", gz_zlib}, {".ours.zzlib", zl_zlib}});
  peer.run_python(R"PY(
import gzip, zlib
import numcodecs
for name in sample_names:
    data = rd(name + '.data')
    for ext in ('gzip', 'zgzip'):
        wr(name + '.' + ext + '.by_python', gzip.decompress(rd(name + '.ours.' + ext)))
        wr(name + '.' + ext + '.by_numcodecs', numcodecs.GZip().decode(rd(name + '.ours.' + ext)))
    for ext in ('zlib', 'zzlib'):
        wr(name + '.' + ext + '.by_python', zlib.decompress(rd(name + '.ours.' + ext)))
        wr(name + '.' + ext + '.by_numcodecs', numcodecs.Zlib().decode(rd(name + '.ours.' + ext)))
    wr(name + '.python.gzip', gzip.compress(data, 6))
    wr(name + '.python.zlib', zlib.compress(data, 9))
    wr(name + '.numcodecs.gzip', numcodecs.GZip(1).encode(data))
    wr(name + '.numcodecs.zlib', numcodecs.Zlib(5).encode(data))
    half = len(data) // 2
    wr(name + '.python.members', gzip.compress(data[:half]) + gzip.compress(data[half:]))
)PY");
  check_samples_came_back(
      peer, {".gzip.by_python", ".zlib.by_python", ".gzip.by_numcodecs", ".zlib.by_numcodecs",
             ".zgzip.by_python", ".zzlib.by_python", ".zgzip.by_numcodecs", ".zzlib.by_numcodecs"});
  // With encoder zlib, Python's zlib at the same level gives our bytes.
  check_we_encode_their_bytes(peer, codec(R"({"type":"zlib","level":9,"encoder":"zlib"})"),
                              ".python.zlib");
  check_we_encode_their_bytes(peer, codec(R"({"type":"zlib","level":5,"encoder":"zlib"})"),
                              ".numcodecs.zlib");
  // Decoding ignores useZlib and detects the header, as z5 does.
  for (const stowage::Codec& c : {gz, zl})
    check_we_decode_theirs(
        peer, c,
        {".python.gzip", ".python.zlib", ".numcodecs.gzip", ".numcodecs.zlib", ".python.members"});
}

TEST_CASE("gzip: N5 Java's own streams (commons-compress, java.util.zip) read ours (libdeflate)") {
  PeerExchange peer;
  stowage::Codec gz = codec(R"({"type":"gzip"})");
  stowage::Codec zl = codec(R"({"type":"zlib"})");
  exchange_with_n5_java(peer, {{"gzip", gz}, {"zlib", zl}});
  // The gzip config decodes zlib streams too (the header decides).
  check_we_decode_theirs(peer, gz, {".java.zlib"});
}

TEST_CASE("gzip: with encoder zlib, N5 Java's own streams read ours and write ours") {
  PeerExchange peer;
  stowage::Codec gz = codec(R"({"type":"gzip","encoder":"zlib"})");
  stowage::Codec zl = codec(R"({"type":"zlib","encoder":"zlib"})");
  exchange_with_n5_java(peer, {{"gzip", gz}, {"zlib", zl}});
  // Same deflate (zlib inside the JDK), same header: the same bytes.
  check_we_encode_their_bytes(peer, gz, ".java.gzip");
  check_we_encode_their_bytes(peer, zl, ".java.zlib");
}

TEST_CASE("gzip: truncated, corrupt, oversized and trailing data are CORRUPT") {
  const Bytes data = microscopy_u16(64 * 64 * 4);
  for (bool zlib : {false, true}) {
    CAPTURE(zlib);
    stowage::Codec c = codec(zlib ? R"({"type":"zlib"})" : R"({"type":"gzip"})");
    const Bytes packed = check_damaged_encodings_fail(c, data, "gzip");

    Bytes bad_check = packed;  // CRC32 (gzip) or Adler-32 (zlib) near the end
    bad_check[packed.size() - (zlib ? 1 : 5)] ^= 1;
    CHECK_CORRUPT(decode_failure(c, bad_check, data.size()), "gzip", "corrupt");
    CHECK_CORRUPT(decode_failure(c, packed, data.size() - 1), "gzip", "more than the expected");
    Bytes trailing = packed;
    trailing.push_back(0);
    CHECK_CORRUPT(decode_failure(c, trailing, data.size()), "gzip", "trailing data");
    // A larger buffer is fine: the decoder reports what it wrote.
    Bytes roomy(data.size() + 100);
    CHECK(c.decode(packed.data(), packed.size(), roomy.data(), roomy.size()) == data.size());
  }
  stowage::Codec c = codec(R"({"type":"gzip"})");
  CHECK_CORRUPT(decode_failure(c, {}, 10), "gzip", "empty");
  CHECK_CORRUPT(decode_failure(c, bytes("BZh91AY&SY"), 10), "gzip", "neither a gzip");
}

TEST_CASE("gzip: passes the codec conformance checks (tests/support/codec_checks.hpp)") {
  // CRC32 in the gzip trailer, Adler-32 in zlib's.
  for (const char* config : {R"({"type":"gzip","level":3})", R"({"type":"gzip","useZlib":true})",
                             R"({"type":"gzip","level":3,"encoder":"zlib"})",
                             R"({"type":"gzip","useZlib":true,"encoder":"zlib"})"}) {
    Spec spec{config, "gzip"};
    spec.checksummed = true;
    check_codec(spec);
  }
  for (const char* config :
       {R"({"type":"gzip","level":3})", R"({"type":"gzip","level":3,"encoder":"zlib"})"})
    check_small_output_buffer(codec(config), microscopy_u16(64 * 64 * 2));  // says "too small"
}
