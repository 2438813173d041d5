// Core pieces without plugins: dtypes, node descriptions, dataset specs, the SDK's buffer pool.
#include "test_support.hpp"

#include <stowage/plugin_util.hpp>

#include <doctest/doctest.h>

#include <cmath>

TEST_CASE("dtypes round-trip through their names") {
  for (auto t : {stowage::DType::boolean, stowage::DType::int8, stowage::DType::uint16,
                 stowage::DType::int32, stowage::DType::uint64, stowage::DType::float32,
                 stowage::DType::float64, stowage::DType::float16, stowage::DType::complex64,
                 stowage::DType::complex128}) {
    CHECK(stowage::parse_dtype(stowage::dtype_name(t)) == t);
  }
  CHECK(stowage::dtype_size(stowage::DType::float64) == 8);
  CHECK(stowage::dtype_size(stowage::DType::int16) == 2);
  CHECK(stowage::dtype_size(stowage::DType::float16) == 2);
  CHECK(stowage::dtype_size(stowage::DType::complex64) == 8);
  CHECK(stowage::dtype_size(stowage::DType::complex128) == 16);
  CHECK(stowage::dtype_is_complex(stowage::DType::complex64));
  CHECK_FALSE(stowage::dtype_is_complex(stowage::DType::float64));
  CHECK_THROWS_AS(stowage::parse_dtype("complex256"), stowage::Error);
}

TEST_CASE("a complex fill value in a description is [re, im]") {
  auto info = stowage::parse_node_info(stowage::json::parse(
      R"({"kind":"array","dtype":"complex64","shape":[2],"fill_value":[1.5,"-Infinity"]})"));
  CHECK(info.fill_value == 1.5);
  CHECK(info.fill_value_imag == -HUGE_VAL);
}

TEST_CASE("node descriptions parse") {
  auto info = stowage::parse_node_info(stowage::json::parse(
      R"({"kind":"array","dtype":"uint16","shape":[4,5],"chunks":[2,5],"byte_order":"big","order":"F",
          "codec":{"type":"gzip"},"dims":[{"name":"gene","labels":"rows"},{"name":"cell"}],
          "attributes":{"a":1}})"));
  CHECK(info.kind == stowage::NodeKind::array);
  CHECK(info.shape == std::vector<uint64_t>{4, 5});
  CHECK(info.chunks == std::vector<uint64_t>{2, 5});
  CHECK(info.big_endian);
  CHECK(info.fortran_order);
  CHECK(info.codec["type"] == "gzip");
  CHECK(info.dims.size() == 2);
  CHECK(info.dims[0].labels == "rows");
  CHECK(info.dims[1].labels.empty());
  CHECK(info.attributes["a"] == 1);
  CHECK_THROWS_AS(stowage::parse_node_info(stowage::json::parse(R"({"kind":"volume"})")),
                  stowage::Error);
  CHECK_THROWS_AS(
      stowage::parse_node_info(stowage::json::parse(R"({"kind":"sparse","shape":[3]})")),
      stowage::Error);
}

// Found by fuzzing (tests/fuzz/reproducers/n5-zero-dimension.bundle): a zero
// dimension beside dimensions whose product overflows 64 bits made the region
// code's strides overflow. Any format's description is checked once, here.
TEST_CASE("an array whose bytes a 64-bit offset cannot address is CORRUPT") {
  auto parse = [](const char* text) {
    return stowage::parse_node_info(stowage::json::parse(text));
  };
  for (const char* bad :
       {R"({"kind":"array","dtype":"uint8","shape":[800000000000000002,400000000000,0]})",
        R"({"kind":"array","dtype":"float64","shape":[2305843009213693952]})",
        R"({"kind":"array","dtype":"uint8","shape":[0,4],"chunks":[4294967296,4294967296]})"}) {
    CAPTURE(bad);
    try {
      parse(bad);
      FAIL("accepted");
    } catch (const stowage::Error& e) {
      CHECK(e.code() == stowage::ErrorCode::corrupt);
      CHECK(std::string(e.what()).find("64-bit offset") != std::string::npos);
    }
  }
  // The largest addressable ones, and empty arrays with ordinary dimensions, are fine.
  CHECK(parse(R"({"kind":"array","dtype":"float64","shape":[1152921504606846975]})").shape.size() ==
        1);
  CHECK(parse(R"({"kind":"array","dtype":"uint8","shape":[0,1000000000000]})").shape[0] == 0);
}

TEST_CASE("dataset specs split at ::") {
  CHECK(stowage::split_dataset_spec("a.n5::raw/s0") ==
        std::make_pair(std::string("a.n5"), std::string("raw/s0")));
  CHECK(stowage::split_dataset_spec("x.datg") ==
        std::make_pair(std::string("x.datg"), std::string()));
}

TEST_CASE("raw codec through the registry") {
  stowage::Codec raw = stowage::Registry::global().codec(R"({"type":"raw"})");
  CHECK(raw.id() == "raw");
  CHECK(raw.canonical_config() == R"({"type":"raw"})");
  std::string data = "hello, stowage";
  auto enc = raw.encode(data.data(), data.size());
  CHECK(std::string(enc.begin(), enc.end()) == data);
  auto dec = raw.decode(enc.data(), enc.size(), data.size());
  CHECK(std::string(dec.begin(), dec.end()) == data);
  std::vector<char> small(4);
  CHECK_THROWS_WITH_AS(raw.decode(enc.data(), enc.size(), small.data(), small.size()),
                       doctest::Contains("do not fit"), stowage::Error);
}

TEST_CASE("a missing codec names what needs it and where we looked") {
  try {
    stowage::Registry::global().codec(R"({"type":"nosuchcodec"})", "N5 array 'raw/s0' in x.n5");
    FAIL("expected an error");
  } catch (const stowage::Error& e) {
    std::string m = e.what();
    CHECK(e.code() == stowage::ErrorCode::not_found);
    CHECK(m.find("N5 array 'raw/s0' in x.n5 needs codec 'nosuchcodec'") != std::string::npos);
    CHECK(m.find("stowage_codec_nosuchcodec") != std::string::npos);
    CHECK(m.find("searched:") != std::string::npos);
  }
}

// Chunk files are read into these: at malloc's 16-byte page offset the
// kernel's copy from the page cache is slower (4K aliasing, see
// PageAlignedAllocator), so every buffer, also one grown or reused, starts a page.
TEST_CASE("the SDK's pooled buffers start on a page and keep their bytes when grown") {
  auto page_offset = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 4096; };
  stowage::sdk::BufferPool pool;
  {
    stowage::sdk::BufferPool::Lease lease = pool.take(100);
    CHECK(lease->size() == 100);
    CHECK(page_offset(lease.data()) == 0);
    for (size_t i = 0; i < 100; ++i) (*lease)[i] = static_cast<uint8_t>(i * 7);
    lease->resize(3 << 20);  // past glibc's mmap threshold
    CHECK(page_offset(lease.data()) == 0);
    for (size_t i = 0; i < 100; ++i) CHECK((*lease)[i] == static_cast<uint8_t>(i * 7));
  }
  stowage::sdk::BufferPool::Lease again = pool.take(5 << 20);  // the one given back, grown
  CHECK(again->size() == 5 << 20);
  CHECK(page_offset(again.data()) == 0);
}
