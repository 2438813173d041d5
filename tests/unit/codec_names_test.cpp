// Codec names (Registry::codec_import / codec_export, the host's
// codec_resolve / codec_export): the built-in codec plugins' declared names
// in numcodecs and Zarr v3, how their configurations map (numcodecs' and
// zarr-python 3's keys, from their documentation), and unknown names.
#include "test_support.hpp"

#include <doctest/doctest.h>

using stowage::json;

namespace {

nlohmann::json unordered(const json& j) { return nlohmann::json::parse(j.dump()); }

json imported(const char* dialect, const json& entry, uint64_t item_size = 2) {
  return stowage::Registry::global().codec_import(dialect, entry, item_size);
}

json exported(const json& config, const char* dialect, uint64_t item_size = 2) {
  return stowage::Registry::global().codec_export(config, dialect, item_size);
}

}  // namespace

TEST_CASE("codec names: numcodecs ids into codec configs, numcodecs' defaults filled in" *
          test::needs({"gzip", "bzip2", "xz", "lz4", "blosc", "zstd"})) {
  CHECK(unordered(imported("numcodecs", {{"id", "zlib"}, {"level", 3}})) ==
        unordered(json{{"type", "gzip"}, {"level", 3}, {"useZlib", true}}));
  CHECK(unordered(imported("numcodecs", {{"id", "gzip"}})) ==
        unordered(json{{"type", "gzip"}, {"level", 1}, {"useZlib", false}}));
  CHECK(unordered(imported("numcodecs", {{"id", "bz2"}, {"level", 7}})) ==
        unordered(json{{"type", "bzip2"}, {"blockSize", 7}}));
  CHECK(unordered(imported("numcodecs", {{"id", "lzma"}, {"preset", nullptr}})) ==
        unordered(json{{"type", "xz"}, {"preset", 6}}));
  CHECK(unordered(imported("numcodecs", {{"id", "lz4"}, {"acceleration", 0}})) ==
        unordered(json{{"type", "lz4"}, {"framing", "numcodecs"}, {"acceleration", 1}}));
  CHECK(unordered(imported("numcodecs", {{"id", "zstd"}, {"level", 4}, {"checksum", true}})) ==
        unordered(json{{"type", "zstd"}, {"level", 4}}));
  // numcodecs passes the item size to blosc as its typesize
  CHECK(unordered(imported("numcodecs", {{"id", "blosc"}, {"cname", "zstd"}}, 8)) ==
        unordered(json{{"type", "blosc"},
                       {"cname", "zstd"},
                       {"clevel", 5},
                       {"shuffle", 1},
                       {"blocksize", 0},
                       {"typesize", 8}}));
  // a key of the wrong type is CORRUPT naming it; a valid lzma this codec cannot read UNSUPPORTED
  std::string m = TEST_REQUIRE_ERROR(imported("numcodecs", {{"id", "zlib"}, {"level", "high"}}),
                                     stowage::ErrorCode::corrupt);
  CHECK_MESSAGE(m.find("compressor \"zlib\": \"level\" must be an integer") != std::string::npos,
                m);
  m = TEST_REQUIRE_ERROR(imported("numcodecs", {{"id", "lzma"}, {"format", 2}}),
                         stowage::ErrorCode::unsupported);
  CHECK_MESSAGE(m.find("\"format\" 2") != std::string::npos, m);
}

TEST_CASE("codec names: Zarr v3 names, and numcodecs.<id> through numcodecs" *
          test::needs({"gzip", "bzip2", "blosc", "zstd"})) {
  CHECK(unordered(imported("zarr3", {{"name", "gzip"}})) ==
        unordered(json{{"type", "gzip"}, {"level", 5}, {"useZlib", false}}));
  CHECK(unordered(imported("zarr3", {{"name", "zstd"}, {"configuration", {{"level", 2}}}})) ==
        unordered(json{{"type", "zstd"}, {"level", 2}}));
  CHECK(unordered(imported(
            "zarr3", {{"name", "blosc"}, {"configuration", {{"shuffle", "bitshuffle"}}}}, 4)) ==
        unordered(json{{"type", "blosc"},
                       {"cname", "lz4"},
                       {"clevel", 5},
                       {"shuffle", 2},
                       {"blocksize", 0},
                       {"typesize", 4}}));
  CHECK(unordered(
            imported("zarr3", {{"name", "numcodecs.bz2"}, {"configuration", {{"level", 9}}}})) ==
        unordered(json{{"type", "bzip2"}, {"blockSize", 9}}));
  CHECK(unordered(imported("zarr3", {{"name", "numcodecs.zlib"}})) ==
        unordered(json{{"type", "gzip"}, {"level", 1}, {"useZlib", true}}));
  const std::string m = TEST_REQUIRE_ERROR(
      imported("zarr3", {{"name", "blosc"}, {"configuration", {{"shuffle", "byteshuffle"}}}}),
      stowage::ErrorCode::corrupt);
  CHECK_MESSAGE(
      m.find("\"byteshuffle\" is not noshuffle, shuffle or bitshuffle") != std::string::npos, m);
}

TEST_CASE("codec names: unknown names are NOT_FOUND naming the name, the dialect and the path" *
          test::needs({"bzip2"})) {
  for (const auto& [dialect, entry] :
       std::vector<std::pair<const char*, json>>{{"numcodecs", {{"id", "snappy"}}},
                                                 {"zarr3", {{"name", "snappy"}}},
                                                 {"zarr3", {{"name", "numcodecs.snappy"}}}}) {
    CAPTURE(entry);
    const std::string m =
        TEST_REQUIRE_ERROR(imported(dialect, entry), stowage::ErrorCode::not_found);
    CHECK_MESSAGE(m.find("\"snappy\"") != std::string::npos, m);
    CHECK_MESSAGE(m.find("searched") != std::string::npos, m);
  }
  // A plugin that declares names has no default rule: "bzip2" is no numcodecs id (bz2 is).
  const std::string m =
      TEST_REQUIRE_ERROR(imported("numcodecs", {{"id", "bzip2"}}), stowage::ErrorCode::not_found);
  CHECK_MESSAGE(m.find("declares other names") != std::string::npos, m);
}

TEST_CASE("codec names: configs into numcodecs and v3 entries" *
          test::needs({"gzip", "bzip2", "xz", "lz4", "blosc"})) {
  CHECK(unordered(exported({{"type", "gzip"}, {"level", 4}, {"useZlib", true}}, "numcodecs")) ==
        unordered(json{{"id", "zlib"}, {"level", 4}}));
  CHECK(unordered(exported({{"type", "bzip2"}, {"blockSize", 3}}, "zarr3")) ==
        unordered(json{{"name", "numcodecs.bz2"}, {"configuration", {{"level", 3}}}}));
  CHECK(unordered(exported({{"type", "xz"}, {"preset", 2}}, "numcodecs")) ==
        unordered(json{
            {"id", "lzma"}, {"check", -1}, {"filters", nullptr}, {"format", 1}, {"preset", 2}}));
  // numcodecs' auto shuffle is written into v3 as the shuffle it means for the item size
  CHECK(unordered(exported({{"type", "blosc"},
                            {"cname", "lz4"},
                            {"clevel", 5},
                            {"shuffle", -1},
                            {"blocksize", 0},
                            {"typesize", 1}},
                           "zarr3", 1)) == unordered(json{{"name", "blosc"},
                                                          {"configuration",
                                                           {{"cname", "lz4"},
                                                            {"clevel", 5},
                                                            {"shuffle", "bitshuffle"},
                                                            {"blocksize", 0},
                                                            {"typesize", 1}}}}));
  const std::string m = TEST_REQUIRE_ERROR(
      exported({{"type", "lz4"}, {"framing", "frame"}, {"acceleration", 1}}, "numcodecs"),
      stowage::ErrorCode::unsupported);
  CHECK_MESSAGE(m.find("no numcodecs counterpart") != std::string::npos, m);
}

TEST_CASE("codec names: a built-in codec's canonical config survives export and import" *
          test::needs({"gzip", "bzip2", "xz", "zstd", "blosc"})) {
  stowage::Registry& registry = stowage::Registry::global();
  for (const json& config :
       {json{{"type", "gzip"}, {"level", 7}}, json{{"type", "bzip2"}},
        json{{"type", "xz"}, {"preset", 1}}, json{{"type", "zstd"}, {"level", -3}},
        json{{"type", "blosc"}, {"cname", "zstd"}, {"shuffle", 2}, {"typesize", 4}}}) {
    for (const char* dialect : {"numcodecs", "zarr3"}) {
      CAPTURE(config);
      CAPTURE(dialect);
      const json canonical = registry.codec(config).config();
      const json back = registry.codec_import(dialect, exported(canonical, dialect, 4), 4);
      CHECK(unordered(registry.codec(back).config()) == unordered(canonical));
    }
  }
}
