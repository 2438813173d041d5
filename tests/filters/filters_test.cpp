// Every array -> array codec plugin against numcodecs 0.11 (transpose:
// against numpy's, which the Zarr v3 spec names): the bytes it
// encodes a chunk into and the chunk it decodes them back to are numcodecs'
// (numcodecs_cases.py makes the chunks and runs numcodecs on them), what it
// says it encodes into is numcodecs' encoded array; a chunk of the wrong
// size is the caller's error (INVALID_ARGUMENT) to encode and the payload's
// (CORRUPT) to decode; a bad configuration is INVALID_ARGUMENT naming its key.
#include "test_support.hpp"

#include <set>

namespace {

using stowage::ErrorCode;
using stowage::json;
namespace fs = std::filesystem;

// numcodecs' encodings and decodings of the cases of numcodecs_cases.py.
struct Cases {
  test::TempDir tmp;
  json manifest;
  Cases() {
    const fs::path script = test::source_root() / "tests" / "filters" / "numcodecs_cases.py";
    const test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " +
                                        test::quote(tmp.path().string()));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    manifest = test::read_json(tmp / "manifest.json");
    REQUIRE(manifest["cases"].size() >= 40);
  }
  std::string blob(const json& c, const char* ext) const {
    return test::read_file(tmp / (c["name"].get<std::string>() + "." + ext));
  }
};

// numcodecs' {"id": ...} as stowage's {"type": ...}.
json stowage_config(json config) {
  config["type"] = config["id"];
  config.erase("id");
  return config;
}

stowage::Codec make(const json& config, const json& chunk) {
  return stowage::Registry::global().array_codec(config.dump(), chunk);
}

std::string encode(const stowage::Codec& codec, const std::string& in) {
  const std::vector<uint8_t> out = codec.encode(in.data(), in.size());
  return std::string(out.begin(), out.end());
}

uint64_t chunk_bytes(const json& chunk) {
  uint64_t n = std::stoull(chunk["dtype"].get<std::string>().substr(2));
  for (const json& e : chunk["shape"]) n *= e.get<uint64_t>();
  return n;
}

std::string decode(const stowage::Codec& codec, const std::string& in, const json& chunk) {
  std::string out(chunk_bytes(chunk), '\0');
  out.resize(codec.decode(in.data(), in.size(), out.data(), out.size()));
  return out;
}

// Where two byte strings first differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  if (k == a.size() && k == b.size()) return "equal";
  auto hex = [](const std::string& s, size_t from) {
    std::string out;
    for (size_t i = from; i < s.size() && i < from + 8; ++i) {
      static const char* digits = "0123456789abcdef";
      out += digits[uint8_t(s[i]) >> 4];
      out += digits[uint8_t(s[i]) & 15];
    }
    return out;
  };
  return "sizes " + std::to_string(a.size()) + ", " + std::to_string(b.size()) + "; at byte " +
         std::to_string(k) + ": " + hex(a, k) + " vs " + hex(b, k);
}

// The code of the error `f` throws (ok when none) and its message.
template <class F>
std::pair<ErrorCode, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const stowage::Error& e) {
    return {e.code(), e.what()};
  }
  return {ErrorCode::ok, ""};
}

}  // namespace

TEST_CASE(
    "filters: each array -> array codec encodes numcodecs 0.11's bytes and decodes to its values") {
  Cases cases;
  std::set<std::string> ids;
  for (const json& c : cases.manifest["cases"]) {
    CAPTURE(c.dump());
    const stowage::Codec codec = make(stowage_config(c["config"]), c["chunk"]);
    ids.insert(codec.id());
    const std::string in = cases.blob(c, "in"), enc = cases.blob(c, "enc"),
                      dec = cases.blob(c, "dec");
    const std::string ours = encode(codec, in);
    CHECK_MESSAGE(ours == enc, first_difference(ours, enc));
    const std::string back = decode(codec, enc, c["chunk"]);
    CHECK_MESSAGE(back == dec, first_difference(back, dec));
    CHECK(decode(codec, ours, c["chunk"]) == dec);
    // What it encodes into: numcodecs' encoded array (shuffle's is bytes,
    // stowage keeps its chunk's type for the filter after it).
    const json spec = codec.encoded_chunk();
    CHECK(chunk_bytes(spec) == enc.size());
    if (codec.id() != "shuffle") {
      CHECK(spec["dtype"] == c["encoded_dtype"]);
      uint64_t elements = 1;
      for (const json& e : spec["shape"]) elements *= e.get<uint64_t>();
      CHECK(elements == c["encoded_size"]);
    }
    if (codec.id() == "transpose") CHECK(spec["shape"] == c["encoded_shape"]);
  }
  CHECK(ids == std::set<std::string>{"delta", "shuffle", "astype", "fixedscaleoffset", "quantize",
                                     "bitround", "packbits", "transpose"});
}

TEST_CASE(
    "filters: a chunk of the wrong size is INVALID_ARGUMENT to encode and CORRUPT to decode") {
  Cases cases;
  for (const json& c : cases.manifest["cases"]) {
    CAPTURE(c.dump());
    const stowage::Codec codec = make(stowage_config(c["config"]), c["chunk"]);
    const std::string in = cases.blob(c, "in"), enc = cases.blob(c, "enc");
    for (const std::string& wrong : {in + std::string(1, '\1'), in.substr(0, in.size() - 1)})
      CHECK(error_of([&] { encode(codec, wrong); }).first == ErrorCode::invalid_argument);
    for (const std::string& wrong : {enc + std::string(1, '\1'), enc.substr(0, enc.size() - 1)})
      CHECK(error_of([&] { decode(codec, wrong, c["chunk"]); }).first == ErrorCode::corrupt);
  }
  // packbits' header: the padding bits of a chunk of 9 are 7, not 6.
  const stowage::Codec packbits = make({{"type", "packbits"}}, {{"dtype", "|b1"}, {"shape", {9}}});
  const std::string bad("\x06\xff\x80", 3);
  CHECK(error_of([&] { decode(packbits, bad, {{"dtype", "|b1"}, {"shape", {9}}}); }).first ==
        ErrorCode::corrupt);
  CHECK(decode(packbits, "\x07\xff\x80", {{"dtype", "|b1"}, {"shape", {9}}}) ==
        std::string(9, '\1'));
}

TEST_CASE("filters: a bad configuration is INVALID_ARGUMENT naming its key") {
  const json f8 = {{"dtype", "<f8"}, {"shape", {10}}};
  const json f4 = {{"dtype", "<f4"}, {"shape", {10}}};
  const json i4 = {{"dtype", "<i4"}, {"shape", {10}}};
  struct Bad {
    const char* config;
    json chunk;
    const char* key;
  };
  const std::vector<Bad> bad = {
      {R"({"type": "delta", "dtype": "<q9"})", i4, "\"dtype\""},
      {R"({"type": "delta", "astype": 4})", i4, "\"astype\""},
      {R"({"type": "delta", "dtype": "<i8"})", {{"dtype", "<i4"}, {"shape", {3}}}, "\"<i8\""},
      {R"({"type": "shuffle", "elementsize": -1})", i4, "\"elementsize\""},
      {R"({"type": "shuffle", "elementsize": "4"})", i4, "\"elementsize\""},
      {R"({"type": "astype"})", f8, "\"encode_dtype\""},
      {R"({"type": "astype", "encode_dtype": "<f4", "decode_dtype": "int"})", f8,
       "\"decode_dtype\""},
      {R"({"type": "fixedscaleoffset", "scale": 10, "dtype": "<f8"})", f8, "\"offset\""},
      {R"({"type": "fixedscaleoffset", "offset": "1", "scale": 10})", f8, "\"offset\""},
      {R"({"type": "fixedscaleoffset", "offset": 1})", f8, "\"scale\""},
      {R"({"type": "fixedscaleoffset", "offset": 1, "scale": true})", f8, "\"scale\""},
      {R"({"type": "fixedscaleoffset", "offset": 1, "scale": 2, "dtype": "<x8"})", f8, "\"dtype\""},
      {R"({"type": "fixedscaleoffset", "offset": 1, "scale": 2, "astype": "|O"})", f8,
       "\"astype\""},
      {R"({"type": "quantize", "dtype": "<f8"})", f8, "\"digits\""},
      {R"({"type": "quantize", "digits": 1.5})", f8, "\"digits\""},
      {R"({"type": "quantize", "digits": 2000})", f8, "\"digits\""},
      {R"({"type": "quantize", "digits": 2, "dtype": "<i4"})", i4, "\"dtype\""},
      {R"({"type": "quantize", "digits": 2, "astype": "<i2"})", f8, "\"astype\""},
      {R"({"type": "bitround"})", f4, "\"keepbits\""},
      {R"({"type": "bitround", "keepbits": -1})", f4, "\"keepbits\""},
      {R"({"type": "bitround", "keepbits": 24})", f4, "\"keepbits\""},
      {R"({"type": "bitround", "keepbits": 53})", f8, "\"keepbits\""},
      {R"({"type": "bitround", "keepbits": 3})", i4, "\"<i4\""},
      {R"({"type": "transpose"})", i4, "\"order\""},
      {R"({"type": "transpose", "order": [1]})", i4, "\"order\" [1]"},
      {R"({"type": "transpose", "order": [0, 0]})",
       {{"dtype", "<i4"}, {"shape", {2, 2}}},
       "\"order\" [0,0]"},
      {R"({"type": "transpose", "order": "A"})", i4, "\"order\" \"A\""},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.config);
    const auto [code, message] = error_of([&] { make(json::parse(b.config), b.chunk); });
    CHECK(code == ErrorCode::invalid_argument);
    CHECK_MESSAGE(message.find(b.key) != std::string::npos, message);
  }
  // Each codec above with a good configuration is accepted.
  for (const char* good :
       {R"({"type": "delta"})", R"({"type": "shuffle", "elementsize": 4})",
        R"({"type": "astype", "encode_dtype": "<f8"})",
        R"({"type": "fixedscaleoffset", "offset": 1, "scale": 2})",
        R"({"type": "quantize", "digits": 2})", R"({"type": "bitround", "keepbits": 23})",
        R"({"type": "packbits"})", R"({"type": "transpose", "order": [0]})"})
    CHECK(error_of([&] { make(json::parse(good), f4); }).first == ErrorCode::ok);
  CHECK(error_of([&] { make(json::parse(R"({"type": "bitround", "keepbits": 52})"), f8); }).first ==
        ErrorCode::ok);
}
