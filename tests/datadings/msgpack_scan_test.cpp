// The datadings plugin's own msgpack check (check_one_object, run on every
// sample read) against msgpack-cxx's parser: the same verdict on every
// fixture sample, every prefix of it and thousands of damaged copies.
#include "msgpack_scan.hpp"

#include <stowage/plugin_util.hpp>
#include <test_support.hpp>

#include <doctest/doctest.h>

#include <random>

namespace {

using datadings::check_one_object;
using datadings::check_one_object_with_msgpack_cxx;

// The samples of a fixture, cut at its offsets.
std::vector<std::string> fixture_samples(const std::string& name) {
  std::string data =
      test::read_file((test::fixtures() / "datadings" / (name + ".msgpack")).string());
  std::string offsets =
      test::read_file((test::fixtures() / "datadings" / (name + ".msgpack.offsets")).string());
  std::vector<std::string> out;
  for (size_t i = 0; i + 16 <= offsets.size(); i += 8) {
    uint64_t a = stowage::sdk::load_be<uint64_t>(offsets.data() + i);
    uint64_t b = stowage::sdk::load_be<uint64_t>(offsets.data() + i + 8);
    out.push_back(data.substr(a, b - a));
  }
  return out;
}

void same_verdict(const std::string& bytes) {
  std::string ours = check_one_object(bytes), reference = check_one_object_with_msgpack_cxx(bytes);
  INFO("ours: " << ours << "; msgpack-cxx: " << reference);
  REQUIRE(ours.empty() == reference.empty());
  bool known = ours.empty() || ours.rfind("truncated: ", 0) == 0 ||
               ours.rfind("not valid msgpack", 0) == 0 || ours.rfind("holds ", 0) == 0;
  CHECK(known);
}

}  // namespace

TEST_CASE("every fixture sample, whole, cut short and with bytes after it") {
  size_t checked = 0;
  for (const char* name : {"basic", "dtypes", "many", "exotic"}) {
    for (const std::string& s : fixture_samples(name)) {
      REQUIRE(check_one_object(s).empty());
      REQUIRE(check_one_object_with_msgpack_cxx(s).empty());
      for (size_t n = 0; n < s.size(); ++n) {
        std::string cut = s.substr(0, n);
        CHECK(check_one_object(cut).rfind("truncated: the msgpack object needs more than its " +
                                              std::to_string(n) + " bytes",
                                          0) == 0);
        same_verdict(cut);
      }
      CHECK(check_one_object(s + "\x01\x02") ==
            "holds 2 bytes after the end of its msgpack object");
      ++checked;
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("damaged samples: flipped bytes, each header kind, random bytes") {
  std::mt19937 rng(18);
  std::vector<std::string> samples = fixture_samples("exotic");
  for (const std::string& s : fixture_samples("dtypes")) samples.push_back(s);
  for (int round = 0; round < 20000; ++round) {
    std::string s = samples[rng() % samples.size()];
    for (int flips = 1 + rng() % 3; flips > 0; --flips)
      s[rng() % s.size()] = static_cast<char>(rng());
    same_verdict(s);
  }
  // Every first byte followed by a few random ones: each header kind and
  // the reserved 0xc1.
  for (int b = 0; b < 256; ++b)
    for (int round = 0; round < 50; ++round) {
      std::string s(1, static_cast<char>(b));
      for (int k = rng() % 12; k > 0; --k) s += static_cast<char>(rng() % 4 == 0 ? 0 : rng());
      same_verdict(s);
    }
  CHECK(check_one_object("\xc1") == "not valid msgpack (bad byte at offset 0)");
  CHECK(check_one_object(std::string("\x92\x01\xc1", 3)) ==
        "not valid msgpack (bad byte at offset 2)");
}
