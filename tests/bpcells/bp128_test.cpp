// BP-128 against BPCells' own encoder: every test vector (all four variants)
// must encode to exactly BPCells' arrays and decode back, on every instruction
// set this CPU has; random inputs must give the same bytes on every path.
#include "bp128.hpp"
#include "test_support.hpp"

#include <stowage/plugin.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace bp = stowage::bpcells::bp128;
using nlohmann::json;

namespace {

std::string fixtures_dir() { return (test::fixtures() / "bpcells").string() + "/"; }

json load_json(const std::string& name) {
  std::ifstream in(fixtures_dir() + name);
  REQUIRE_MESSAGE(in.good(), "cannot open fixture " << fixtures_dir() + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::vector<bp::Isa> available_isas() {
  std::vector<bp::Isa> out;
  for (bp::Isa isa : {bp::Isa::scalar, bp::Isa::sse2, bp::Isa::avx2})
    if (bp::isa_available(isa)) out.push_back(isa);
  return out;
}

const bp::Variant kVariants[] = {bp::Variant::vanilla, bp::Variant::m1, bp::Variant::d1,
                                 bp::Variant::d1z};

}  // namespace

TEST_CASE("BP-128 encodes every BPCells test vector to the exact arrays and decodes it back") {
  json vectors = load_json("bp128_vectors.json");
  REQUIRE(vectors["cases"].size() == 9);
  for (const json& c : vectors["cases"]) {
    auto input = c["input"].get<std::vector<uint32_t>>();
    REQUIRE(input.size() == c["count"].get<size_t>());
    for (bp::Variant v : kVariants) {
      const json& want = c["encoded"][bp::variant_name(v)];
      for (bp::Isa isa : available_isas()) {
        CAPTURE(c["name"].get<std::string>());
        CAPTURE(bp::variant_name(v));
        CAPTURE(bp::isa_name(isa));
        bp::Encoded got = bp::encode(v, input.data(), input.size(), isa);
        CHECK(got.data == want["data"].get<std::vector<uint32_t>>());
        CHECK(got.idx == want["idx"].get<std::vector<uint32_t>>());
        CHECK(got.idx_offsets == want["idx_offsets"].get<std::vector<uint64_t>>());
        if (bp::has_starts(v)) CHECK(got.starts == want["starts"].get<std::vector<uint32_t>>());
        // Decode BPCells' arrays, not ours.
        bp::Encoded theirs{want["data"].get<std::vector<uint32_t>>(),
                           want["idx"].get<std::vector<uint32_t>>(),
                           want["idx_offsets"].get<std::vector<uint64_t>>(),
                           bp::has_starts(v) ? want["starts"].get<std::vector<uint32_t>>()
                                             : std::vector<uint32_t>{}};
        CHECK(bp::decode(v, theirs, input.size(), isa) == input);
      }
    }
  }
}

TEST_CASE("BP-128 idx_offsets wrap exactly as BPCells' writer does (increment 100)") {
  json f = load_json("bp128_idx_offsets_small_increment.json");
  REQUIRE(f["variant"] == "vanilla");
  uint64_t increment = f["offset_increment"].get<uint64_t>();
  auto input = f["input"].get<std::vector<uint32_t>>();
  REQUIRE(input.size() == 1000);
  for (bp::Isa isa : available_isas()) {
    CAPTURE(bp::isa_name(isa));
    bp::Encoded got = bp::encode(bp::Variant::vanilla, input.data(), input.size(), isa, increment);
    CHECK(got.data == f["data"].get<std::vector<uint32_t>>());
    CHECK(got.idx == f["idx"].get<std::vector<uint32_t>>());
    CHECK(got.idx_offsets == f["idx_offsets"].get<std::vector<uint64_t>>());
    bp::Encoded theirs{f["data"].get<std::vector<uint32_t>>(),
                       f["idx"].get<std::vector<uint32_t>>(),
                       f["idx_offsets"].get<std::vector<uint64_t>>(),
                       {}};
    CHECK(bp::decode(bp::Variant::vanilla, theirs, input.size(), isa, increment) == input);
  }
}

TEST_CASE("BP-128 SIMD and scalar paths give the same bytes for every width") {
  std::mt19937 rng(12345);
  for (bp::Variant v : kVariants) {
    for (unsigned bits = 0; bits <= 32; ++bits) {
      // Values of about `bits` bits, sorted runs for the delta variants.
      std::vector<uint32_t> input(1000 + bits);
      uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (uint32_t(1) << bits) - 1;
      uint32_t acc = rng();
      for (uint32_t& x : input) {
        uint32_t r = rng() & mask;
        x = bp::has_starts(v) ? (acc += r / 2) : r;
      }
      bp::Encoded reference = bp::encode(v, input.data(), input.size(), bp::Isa::scalar);
      CHECK(bp::decode(v, reference, input.size(), bp::Isa::scalar) == input);
      for (bp::Isa isa : available_isas()) {
        CAPTURE(bp::variant_name(v));
        CAPTURE(bits);
        CAPTURE(bp::isa_name(isa));
        bp::Encoded got = bp::encode(v, input.data(), input.size(), isa);
        CHECK(got.data == reference.data);
        CHECK(got.idx == reference.idx);
        CHECK(got.starts == reference.starts);
        CHECK(bp::decode(v, reference, input.size(), isa) == input);
      }
    }
  }
}

TEST_CASE("BP-128 decode_range reads any window without decoding the rest") {
  std::mt19937 rng(7);
  std::vector<uint32_t> input(5000);
  for (uint32_t& x : input) x = rng() % 300;
  for (bp::Variant v : kVariants) {
    bp::Encoded e = bp::encode(v, input.data(), input.size());
    auto offsets = bp::resolve_offsets(e.idx, e.idx_offsets, e.data.size(), "test");
    for (int trial = 0; trial < 200; ++trial) {
      uint64_t first = rng() % input.size();
      uint64_t count = rng() % (input.size() - first + 1);
      std::vector<uint32_t> out(count);
      uint64_t chunk = first / 128;
      bp::decode_range(v, offsets.data(), bp::has_starts(v) ? e.starts.data() : nullptr,
                       e.data.data() + offsets[chunk], first, count, out.data());
      CHECK(std::equal(out.begin(), out.end(), input.begin() + first));
    }
  }
}

TEST_CASE("BP-128 rejects malformed idx and idx_offsets") {
  std::vector<uint32_t> input(300, 5);
  input[200] = 70000;
  bp::Encoded e = bp::encode(bp::Variant::vanilla, input.data(), input.size());
  auto resolve = [&](const bp::Encoded& x) {
    return bp::resolve_offsets(x.idx, x.idx_offsets, x.data.size(), "index_idx");
  };
  CHECK_NOTHROW(resolve(e));
  auto expect_corrupt = [&](bp::Encoded x, const char* what) {
    CAPTURE(what);
    try {
      resolve(x);
      FAIL("accepted");
    } catch (const stowage::sdk::Error& err) {
      CHECK(err.code() == STOWAGE_CORRUPT);
      CHECK(std::string(err.what()).find("index_idx") != std::string::npos);
    }
  };
  bp::Encoded bad = e;
  bad.idx[1] += 1;  // not a multiple of 4
  expect_corrupt(bad, "width not multiple of 4");
  bad = e;
  bad.idx[2] = bad.idx[1] + 4 * 33;  // 33 bits
  expect_corrupt(bad, "width 33");
  bad = e;
  bad.idx_offsets = {0, 2};  // does not end at idx.size()
  expect_corrupt(bad, "idx_offsets end");
  bad = e;
  bad.idx_offsets = {1, 4};
  expect_corrupt(bad, "idx_offsets start");
  bad = e;
  bad.data.pop_back();  // truncated data
  expect_corrupt(bad, "truncated");
  bad = e;
  bad.idx_offsets = {0, 2, 1, 4};
  expect_corrupt(bad, "idx_offsets decreasing");
  bad = e;
  bad.idx_offsets = {0, 1, 1, 1, 1, 1, 4};  // jumps entries 4 * 2^32 words ahead
  expect_corrupt(bad, "offset past data");
}
