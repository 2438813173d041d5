// Region I/O in the core, checked against the testgrid plugin whose every
// element is a known formula of its coordinates.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <mutex>
#include <numeric>
#include <random>
#include <thread>

using stowage::json;

namespace {

stowage::Registry& grid_registry() {
  static stowage::Registry registry([] {
    stowage::Registry::Options o;
    o.paths = {test::env_or("STOWAGE_TESTGRID_DIR", ".")};
    o.use_environment = false;
    o.use_default_dir = false;
    return o;
  }());
  return registry;
}

stowage::Store open_grid(const json& options) {
  return stowage::Store::open("testgrid:", stowage::Mode::read, "testgrid", options,
                              grid_registry());
}

uint64_t formula(const std::vector<uint64_t>& coord) {
  uint64_t v = 0;
  for (uint64_t c : coord) v = v * 1000 + c;
  return v * 7 + 3;
}

// What the element at `coord` must read as, given the grid's chunks and
// how often a chunk is missing.
uint64_t expected_value(const std::vector<uint64_t>& chunks, int missing_every,
                        const std::vector<uint64_t>& coord, size_t esize) {
  uint64_t sum = 0;
  for (size_t d = 0; d < coord.size(); ++d) sum += coord[d] / chunks[d];
  if (sum % missing_every == 0) return 9;  // fill value
  uint64_t v = formula(coord);
  return esize == 8 ? v : v & ((uint64_t{1} << (8 * esize)) - 1);
}

template <class T>
void check_region(const json& o, const std::vector<uint64_t>& off,
                  const std::vector<uint64_t>& shape, const std::vector<T>& got) {
  size_t nd = shape.size();
  const auto chunks = o["chunks"].get<std::vector<uint64_t>>();
  const int missing_every = o.value("missing_every", 5);
  std::vector<uint64_t> coord(nd);
  uint64_t count = got.size();
  for (uint64_t flat = 0; flat < count; ++flat) {
    uint64_t rest = flat;
    for (size_t d = nd; d-- > 0;) coord[d] = off[d] + rest % shape[d], rest /= shape[d];
    uint64_t want = expected_value(chunks, missing_every, coord, sizeof(T));
    if (static_cast<uint64_t>(got[flat]) != want) {
      FAIL("element " << flat << " got " << uint64_t(got[flat]) << " want " << want);
      return;
    }
  }
}

template <class T>
void random_regions(const json& o, int trials, unsigned seed) {
  stowage::Store store = open_grid(o);
  stowage::Array a = store.array();
  std::mt19937 rng(seed);
  for (int t = 0; t < trials; ++t) {
    std::vector<uint64_t> off, shape;
    for (uint64_t s : a.shape()) {
      uint64_t lo = rng() % s;
      off.push_back(lo);
      shape.push_back(1 + rng() % (s - lo));
    }
    std::vector<T> buf(
        std::accumulate(shape.begin(), shape.end(), uint64_t{1}, std::multiplies<>()));
    a.read(off, shape, buf.data());
    check_region<T>(o, off, shape, buf);
  }
}

}  // namespace

TEST_CASE("region reads: every layout the ABI allows") {
  for (const char* order : {"C", "F"})
    for (const char* bo : {"little", "big"})
      for (const char* edge : {"cropped", "padded"}) {
        CAPTURE(order);
        CAPTURE(bo);
        CAPTURE(edge);
        json o = {{"dtype", "uint32"}, {"shape", {13, 7, 10}}, {"chunks", {4, 3, 5}},
                  {"order", order},    {"byte_order", bo},     {"edge", edge}};
        random_regions<uint32_t>(o, 40, 1);
        o["dtype"] = "uint16";
        random_regions<uint16_t>(o, 20, 2);
        o["dtype"] = "uint64";
        random_regions<uint64_t>(o, 20, 3);
      }
}

TEST_CASE("region reads: whole array, 1-D and 4-D") {
  json o1 = {{"dtype", "uint64"}, {"shape", {1000}}, {"chunks", {64}}, {"byte_order", "big"}};
  stowage::Array a = open_grid(o1).array();
  check_region<uint64_t>(o1, {0}, {1000}, a.read_all<uint64_t>());
  json o4 = {
      {"dtype", "uint32"}, {"shape", {3, 4, 5, 6}}, {"chunks", {2, 3, 2, 4}}, {"order", "F"}};
  stowage::Array b = open_grid(o4).array();
  check_region<uint32_t>(o4, {0, 0, 0, 0}, {3, 4, 5, 6}, b.read_all<uint32_t>());
}

TEST_CASE("region reads from several threads equal a single-threaded read") {
  json o = {{"dtype", "uint32"},
            {"shape", {64, 80, 96}},
            {"chunks", {16, 16, 16}},
            {"byte_order", "big"}};
  stowage::Store store = open_grid(o);
  stowage::Array a = store.array();
  grid_registry().set_threads(1);
  std::vector<uint32_t> single = a.read_all<uint32_t>();
  check_region<uint32_t>(o, {0, 0, 0}, {64, 80, 96}, single);
  grid_registry().set_threads(4);
  std::vector<std::vector<uint32_t>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep) results[t] = a.read_all<uint32_t>();
    });
  for (auto& th : threads) th.join();
  for (const auto& r : results) CHECK(r == single);
}

TEST_CASE("region writes: partial chunks merge with what is stored") {
  for (const char* order : {"C", "F"}) {
    CAPTURE(order);
    json o = {{"dtype", "uint16"}, {"shape", {11, 9}},    {"chunks", {4, 4}},
              {"order", order},    {"byte_order", "big"}, {"missing_every", 3}};
    stowage::Store store = open_grid(o);
    stowage::Array a = store.array();
    std::vector<uint16_t> model = a.read_all<uint16_t>();
    std::mt19937 rng(7);
    for (int t = 0; t < 30; ++t) {
      uint64_t r0 = rng() % 11, c0 = rng() % 9;
      uint64_t rows = 1 + rng() % (11 - r0), cols = 1 + rng() % (9 - c0);
      std::vector<uint16_t> patch(rows * cols);
      for (auto& v : patch) v = static_cast<uint16_t>(rng());
      a.write({r0, c0}, {rows, cols}, patch.data());
      for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t c = 0; c < cols; ++c) model[(r0 + r) * 9 + c0 + c] = patch[r * cols + c];
      REQUIRE(a.read_all<uint16_t>() == model);
    }
  }
}

TEST_CASE("region bounds are checked") {
  json o = {{"dtype", "uint8"}, {"shape", {10, 10}}, {"chunks", {3, 3}}};
  stowage::Array a = open_grid(o).array();
  std::vector<uint8_t> buf(100);
  CHECK_THROWS_AS(a.read({5, 5}, {6, 1}, buf.data()), stowage::Error);
  CHECK_THROWS_AS(a.read({0}, {1}, buf.data()), stowage::Error);
}

// Reads of 8 MiB and more write the destination with streaming stores and
// copy runs of neighbouring chunks row by row (core/src/strided.cpp): check
// that path on every layout, odd region offsets (rows that start and end
// off a 16-byte boundary), and a destination whose elements are not aligned
// to their size.
TEST_CASE("large region reads: streaming, side-by-side chunk runs, odd alignment") {
  for (const char* order : {"C", "F"})
    for (const char* edge : {"cropped", "padded"}) {
      CAPTURE(order);
      CAPTURE(edge);
      json o = {{"dtype", "uint64"}, {"shape", {24, 140, 430}}, {"chunks", {7, 32, 50}},
                {"order", order},    {"byte_order", "big"},     {"edge", edge},
                {"missing_every", 7}};
      stowage::Array a = open_grid(o).array();
      for (unsigned threads : {1u, 2u}) {
        grid_registry().set_threads(threads);
        std::vector<uint64_t> off = {3, 5, 13}, shape = {21, 130, 410};  // 8.7 MB
        std::vector<uint64_t> part(21 * 130 * 410);
        a.read(off, shape, part.data());
        check_region<uint64_t>(o, off, shape, part);
        // The same region into a buffer one byte off alignment.
        std::vector<char> raw(part.size() * 8 + 1);
        a.read(off, shape, raw.data() + 1);
        std::vector<uint64_t> shifted(part.size());
        std::memcpy(shifted.data(), raw.data() + 1, shifted.size() * 8);
        CHECK(shifted == part);
      }
      o["dtype"] = "uint16";
      o["shape"] = {20, 300, 700};  // 8.4 MB
      stowage::Array b = open_grid(o).array();
      check_region<uint16_t>(o, {0, 0, 0}, {20, 300, 700}, b.read_all<uint16_t>());
      o["dtype"] = "uint32";
      o["shape"] = {20, 300, 350};  // 8.4 MB: every element size through the streaming swap
      stowage::Array c = open_grid(o).array();
      check_region<uint32_t>(o, {0, 0, 0}, {20, 300, 350}, c.read_all<uint32_t>());
    }
  grid_registry().set_threads(1);
}

// Writes gather the chunks a region covers whole side by side (reading the
// caller's rows in order) and merge the others: random 3-D patches, 1 and 2
// threads, against a model of the array.
TEST_CASE("region writes: 3-D patches, whole and partial chunks, several threads") {
  for (const char* order : {"C", "F"})
    for (unsigned threads : {1u, 2u}) {
      CAPTURE(order);
      CAPTURE(threads);
      const std::vector<uint64_t> dims = {9, 13, 21};
      json o = {{"dtype", "uint32"}, {"shape", dims},       {"chunks", {4, 5, 6}},
                {"order", order},    {"byte_order", "big"}, {"missing_every", 4}};
      grid_registry().set_threads(threads);
      stowage::Store store = open_grid(o);
      stowage::Array a = store.array();
      std::vector<uint32_t> model = a.read_all<uint32_t>();
      std::mt19937 rng(11);
      for (int t = 0; t < 30; ++t) {
        std::vector<uint64_t> off(3), shape(3);
        for (size_t d = 0; d < 3; ++d) {
          off[d] = rng() % dims[d];
          shape[d] = 1 + rng() % (dims[d] - off[d]);
        }
        std::vector<uint32_t> patch(shape[0] * shape[1] * shape[2]);
        for (auto& v : patch) v = static_cast<uint32_t>(rng());
        a.write(off, shape, patch.data());
        for (uint64_t i = 0; i < shape[0]; ++i)
          for (uint64_t j = 0; j < shape[1]; ++j)
            for (uint64_t k = 0; k < shape[2]; ++k)
              model[((off[0] + i) * dims[1] + off[1] + j) * dims[2] + off[2] + k] =
                  patch[(i * shape[1] + j) * shape[2] + k];
        REQUIRE(a.read_all<uint32_t>() == model);
      }
    }
  grid_registry().set_threads(1);
}

// Array::copy_chunks_to: chunk by chunk between any two layouts of the same
// shape and chunking (byte order, element order, padded or cropped edges,
// missing chunks), whole or in disjoint parts, equals a region read.
TEST_CASE("chunk-by-chunk copies between layouts equal the source, whole and in parts") {
  for (const char* from_order : {"C", "F"})
    for (const char* to_order : {"C", "F"})
      for (const char* from_edge : {"cropped", "padded"}) {
        CAPTURE(from_order);
        CAPTURE(to_order);
        CAPTURE(from_edge);
        json from = {{"dtype", "uint32"},   {"shape", {13, 7, 10}}, {"chunks", {4, 3, 5}},
                     {"order", from_order}, {"byte_order", "big"},  {"edge", from_edge}};
        json to = {{"dtype", "uint32"}, {"shape", {13, 7, 10}},   {"chunks", {4, 3, 5}},
                   {"order", to_order}, {"byte_order", "little"}, {"missing_every", 1000}};
        stowage::Array src = open_grid(from).array();
        const std::vector<uint32_t> want = src.read_all<uint32_t>();
        for (uint64_t parts : {1u, 3u}) {
          stowage::Store dst_store = open_grid(to);
          stowage::Array dst = dst_store.array();
          uint64_t bytes = 0;
          std::mutex m;
          for (uint64_t p = 0; p < parts; ++p)
            CHECK(src.copy_chunks_to(dst, p, parts, [&](uint64_t b) {
              std::lock_guard<std::mutex> lock(m);
              bytes += b;
            }));
          CHECK(bytes == 13 * 7 * 10 * 4);
          // Missing source chunks are left alone: dst keeps its own values there.
          std::vector<uint32_t> got = dst.read_all<uint32_t>(), expect = want;
          std::vector<uint32_t> before = open_grid(to).array().read_all<uint32_t>();
          for (size_t i = 0; i < got.size(); ++i)
            if (want[i] == 9 && got[i] == before[i]) expect[i] = before[i];
          CHECK(got == expect);
        }
      }
  // Different chunking: nothing copied, false.
  json a = {{"dtype", "uint32"}, {"shape", {8, 8}}, {"chunks", {4, 4}}};
  json b = {{"dtype", "uint32"}, {"shape", {8, 8}}, {"chunks", {2, 4}}};
  CHECK_FALSE(open_grid(a).array().copy_chunks_to(open_grid(b).array()));
}
