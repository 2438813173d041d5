// stowage/msgpack_sample.hpp: decoding msgpack samples as Python's msgpack +
// msgpack_numpy do, checked against Debian's python3-msgpack-numpy.
#include "expected_value.hpp"

#include <test_support.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

namespace {

using ErrorCode = stowage_status;  // msgpack_sample.hpp throws the SDK's Error
using stowage::json;
using namespace stowage::sample;

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

// Packs with msgpack-cxx: a msgpack-numpy array map with bin keys.
std::string nd_map(const std::string& type, const std::vector<uint64_t>& shape,
                   const std::string& data, bool with_data = true) {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> p(b);
  auto bin = [&](const std::string& s) {
    p.pack_bin(static_cast<uint32_t>(s.size()));
    p.pack_bin_body(s.data(), static_cast<uint32_t>(s.size()));
  };
  p.pack_map(with_data ? 5 : 4);
  bin("nd");
  p.pack_true();
  bin("type");
  p.pack(type);
  bin("kind");
  bin("");
  bin("shape");
  p.pack(shape);
  if (with_data) {
    bin("data");
    bin(data);
  }
  return std::string(b.data(), b.size());
}

ErrorCode code_of(const std::string& bytes, std::string* message = nullptr) {
  try {
    decode(bytes);
  } catch (const stowage::sdk::Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return STOWAGE_OK;
}

double parse_python_float(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

}  // namespace

TEST_CASE("python complex numbers decode from their repr") {
  auto r = test::run_python(R"(
import json, msgpack, msgpack_numpy as m
vals = [complex(1.5, -2.25), 2j, complex(-0.0, -2), complex(-0.0, -0.0), complex(float("nan"), 1),
        complex(float("inf"), -float("inf")), complex(1e300, 1e-300), complex(0.1, 0.2), complex(-3, 0)]
print(json.dumps([[msgpack.packb(v, default=m.encode).hex(), repr(v.real), repr(v.imag), repr(v)] for v in vals]))
)");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  json cases = json::parse(r.output);
  REQUIRE(cases.size() == 9);
  for (const json& c : cases) {
    INFO(c[3].get<std::string>());
    Value v = decode(unhex(c[0].get<std::string>()));
    REQUIRE(v.type() == Type::complex);
    for (int part = 0; part < 2; ++part) {
      double want = parse_python_float(c[1 + part].get<std::string>());
      double got = part == 0 ? v.as_complex().real() : v.as_complex().imag();
      if (std::isnan(want)) {
        CHECK(std::isnan(got));
      } else {
        CHECK(got == want);
        CHECK(std::signbit(got) == std::signbit(want));
      }
    }
  }
}

TEST_CASE("numpy arrays of every plain dtype match msgpack_numpy's bytes") {
  auto r = test::run_python(R"(
import json, msgpack, numpy as np, msgpack_numpy as m
out = []
for t in ["|i1", "|u1", "<i2", ">i2", "<u2", ">u4", "<i4", "<i8", ">u8", "<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c16", "|b1", "|S3", "<U2", ">U2"]:
    a = np.arange(6).reshape(2, 3)
    if t[1] in "SU":
        a = np.array([["a", "bc", ""], ["xyz"[:i] for i in range(3)]], dtype=t)
    elif t == "|b1":
        a = (a % 2).astype(t)
    else:
        a = (a * 7 - 11).astype(t) if t[1] not in "u" else (a * 7).astype(t)
    if t[1] == "f": a = a / 4
    a = a.astype(t)
    doubles = a.astype("<f8").ravel().tolist() if t[1] in "biuf" else []
    out.append({"t": t, "hex": msgpack.packb({"a": a}, default=m.encode).hex(), "data": a.tobytes().hex(),
                "shape": list(a.shape), "itemsize": a.dtype.itemsize, "doubles": doubles})
print(json.dumps(out))
)");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  for (const json& c : json::parse(r.output)) {
    std::string t = c["t"].get<std::string>();
    INFO(t);
    Value v = decode(unhex(c["hex"].get<std::string>()));
    const NdArray& a = v["a"].as_ndarray();
    CHECK(v["a"].type() == Type::ndarray);
    CHECK(a.dtype == t);
    CHECK(a.byte_order == t[0]);
    CHECK(a.kind == t[1]);
    CHECK(a.itemsize == c["itemsize"].get<size_t>());
    CHECK(a.shape == c["shape"].get<std::vector<uint64_t>>());
    CHECK(dd_test::hex(a.data) == c["data"].get<std::string>());
    std::vector<double> want = c["doubles"].get<std::vector<double>>();
    if (!want.empty()) CHECK(a.to_doubles() == want);
  }
}

TEST_CASE("typed access converts big-endian data to host order and checks the type") {
  std::string be("\xff\xff\xff\xfe\x00\x00\x00\x01\x00\x00\x01\x00", 12);
  Value v = decode(nd_map(">i4", {3}, be));
  const NdArray& a = v.as_ndarray();
  CHECK(a.big_endian());
  CHECK(a.values<int32_t>() == std::vector<int32_t>{-2, 1, 256});
  CHECK(a.to_doubles() == std::vector<double>{-2, 1, 256});
  CHECK_THROWS_AS(a.values<float>(), stowage::sdk::Error);
  CHECK_THROWS_AS(a.values<uint32_t>(), stowage::sdk::Error);
  CHECK_THROWS_AS(a.values<int64_t>(), stowage::sdk::Error);

  Value z = decode(nd_map("<f8", {}, std::string("\0\0\0\0\0\0\x45\x40", 8)));
  CHECK(z.as_ndarray().shape.empty());
  CHECK(z.as_ndarray().values<double>() == std::vector<double>{42.0});
  Value empty = decode(nd_map("<i2", {2, 0, 3}, ""));
  CHECK(empty.as_ndarray().size() == 0);
  CHECK(empty.as_ndarray().values<int16_t>().empty());
}

TEST_CASE("maps msgpack_numpy leaves alone stay maps, with their key types") {
  // Missing data: Python's decode hits a KeyError and keeps the map.
  Value partial = decode(nd_map("<i4", {1}, "", false));
  CHECK(partial.is_map());
  CHECK(partial.size() == 4);
  auto r = test::run_python(R"(
import msgpack
print(msgpack.packb({"nd": True, "complex": 1, 7: "int key", b"raw": None, True: [1.5, -2], "f": 0.25}).hex())
)");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  Value m = decode(unhex(r.output.substr(0, r.output.find('\n'))));
  REQUIRE(m.is_map());
  CHECK(m["nd"].as_bool());
  CHECK(m["complex"].as_uint() == 1);
  CHECK(m.as_map()[2].first.as_uint() == 7);
  CHECK(m.as_map()[2].second.as_string() == "int key");
  CHECK(m.as_map()[3].first.as_bytes() == "raw");
  CHECK(m.as_map()[3].second.is_nil());
  CHECK(m.as_map()[4].first.as_bool());
  CHECK(m.as_map()[4].second[1].as_int() == -2);
  CHECK(m["f"].type() == Type::float64);
  CHECK(m.find("absent") == nullptr);
  CHECK_THROWS_AS(m["absent"], stowage::sdk::Error);
  CHECK_THROWS_AS(m["f"].as_string(), stowage::sdk::Error);
}

TEST_CASE("malformed samples are corrupt, without trusting declared sizes") {
  std::string message;
  std::string good = nd_map("<i4", {2}, std::string(8, '\1'));
  CHECK(code_of(good.substr(0, good.size() - 1), &message) == STOWAGE_CORRUPT);
  CHECK(message.find("truncated") != std::string::npos);
  CHECK(code_of(good + "\xc0", &message) == STOWAGE_CORRUPT);
  CHECK(message.find("1 bytes follow") != std::string::npos);
  CHECK(code_of(nd_map("<i4", {3}, std::string(8, '\1')), &message) == STOWAGE_CORRUPT);
  CHECK(message.find("needs 12 data bytes, has 8") != std::string::npos);
  CHECK(code_of(nd_map("<q9", {1}, "x"), &message) == STOWAGE_CORRUPT);
  CHECK(message.find("<q9") != std::string::npos);
  CHECK(code_of(nd_map("<i4", {UINT64_MAX, 3}, ""), &message) == STOWAGE_CORRUPT);
  // An array header claiming 4 billion elements in 5 bytes.
  CHECK(code_of(std::string("\xdd\xff\xff\xff\xff", 5), &message) == STOWAGE_CORRUPT);
  CHECK(code_of(std::string(600, '\x91') + "\xc0", &message) == STOWAGE_CORRUPT);
  CHECK(message.find("nested deeper") != std::string::npos);
  CHECK(code_of(std::string("\xc1"), &message) == STOWAGE_CORRUPT);
  CHECK(code_of(std::string(), &message) == STOWAGE_CORRUPT);
}
