// Inputs found by the libFuzzer targets of tests/fuzz (see tests/fuzz/RESULTS.md),
// minimised: each crashed, hung or tripped a sanitizer before its fix and
// must now give one exact status with a message naming the file and what is
// wrong.
#include "malformed_support.hpp"

#include <stowage/plugin_util.hpp>

#include "../fuzz/fuzz_support.hpp"

using malformed::attempt;
using malformed::read_everything;
using stowage::ErrorCode;
namespace fs = std::filesystem;

namespace {

// CHECKs status, file name and what is wrong, all three.
void expect_finding(const std::string& what, const std::function<void()>& fn, ErrorCode code,
                    const std::string& file, const std::string& fragment) {
  INFO(what);
  auto o = attempt(fn);
  REQUIRE(o.threw);
  CHECK_MESSAGE(o.code == code, stowage::error_code_name(o.code) << ": " << o.message);
  CHECK_MESSAGE(o.message.find(file) != std::string::npos, o.message);
  CHECK_MESSAGE(o.message.find(fragment) != std::string::npos, o.message);
}

}  // namespace

// npy: a zero dimension made the header's overflow check skip the others, so
// (0, 4e11, 8e17) was accepted and the host's strides overflowed (UBSan:
// signed integer overflow in core/src/region.cpp strides_of). NumPy refuses
// it too ("array is too big").
TEST_CASE("fuzz finding: npy zero dimension beside huge ones") {
  test::TempDir tmp;
  fs::path file = tmp / "a.npy";
  std::string dict =
      "{'descr': '<u8', 'fortran_order': True, 'shape': (0, 400000000000, 800000000000000002), }";
  dict.append(127 - 10 - dict.size(), ' ');  // preamble + dict + '\n' = 128 bytes
  std::string bytes =
      std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict + "\n" + std::string(6, '\x0f');
  malformed::spit(file, bytes);
  expect_finding(
      "npy (0, 4e11, 8e17)", [&] { read_everything(file.string(), "npy"); }, ErrorCode::corrupt,
      "a.npy", "shape overflows 64 bits");
}

// datadings: a .filter header with a huge element count (n = 1.8e19) made
// simplebloom's size formula give 1e20 bytes, and converting that double to
// a 64-bit integer is undefined (UBSan: "outside the range of representable
// values" in bloom_num_bits). Found by fuzz_datadings (ad24574, 2026-11-22).
TEST_CASE("fuzz finding: datadings filter header whose size overflows 64 bits") {
  test::TempDir tmp;
  for (const char* suffix : {"", ".offsets", ".keys", ".key_hashes", ".filter", ".md5"})
    malformed::copy_fixture(
        test::fixtures() / "datadings" / (std::string("basic.msgpack") + suffix), tmp.path());
  fs::path filter = tmp / "basic.msgpack.filter";
  std::string bytes = malformed::slurp(filter);
  stowage::sdk::store_be<uint64_t>(bytes.data() + 16, 0xfff0000000000000ull);  // n
  malformed::spit(filter, bytes);
  std::string data = (tmp / "basic.msgpack").string();
  expect_finding(
      "datadings n = 1.8e19", [&] { stowage::Store::open(data).records().contains("misc"); },
      ErrorCode::corrupt, "basic.msgpack.filter", "more bits than 64 bits can count");
}

// n5 + core: the reproducer of finding 2 (tests/fuzz/reproducers/n5-zero-dimension.bundle,
// dimensions [8e17, 4e11, 0] of uint8) replayed as the fuzzer ran it: unpacked, then every
// node read. Before d9b63c6 the host's strides overflowed (UBSan); now the dataset's
// description is CORRUPT, naming the dataset, and the root still opens.
TEST_CASE("fuzz finding: n5 zero dimension beside huge ones (reproducer bundle replayed)") {
  test::TempDir tmp;
  std::string bundle = test::read_file(test::source_root() / "tests" / "fuzz" / "reproducers" /
                                       "n5-zero-dimension.bundle");
  fuzz::unpack_bundle(reinterpret_cast<const uint8_t*>(bundle.data()), bundle.size(), tmp.path());
  fs::path root = tmp / "d.n5";
  REQUIRE(fs::exists(root / "a" / "attributes.json"));
  CHECK(test::read_json(root / "a" / "attributes.json")["dimensions"][2] == 0);
  expect_finding(
      "n5 [8e17, 4e11, 0]", [&] { read_everything(root.string(), "n5"); }, ErrorCode::corrupt,
      root.string(), "more bytes than a 64-bit offset can address");
  stowage::Store store = stowage::Store::open(root.string(), stowage::Mode::read, "n5");
  CHECK(store.list("") == std::vector<std::string>{"a"});
  auto o = attempt([&] { store.array("a"); });
  CHECK(o.threw);
  CHECK(o.code == ErrorCode::corrupt);
  CHECK_MESSAGE(o.message.find("a") != std::string::npos, o.message);
}
