// Real peers: Debian's zarr-python (N5FSStore) reads what we write and we
// read what it writes; liblz4-java decodes our lz4 chunks; several real
// processes writing disjoint chunks of one dataset lose nothing.
#include "n5_helpers.hpp"
#include <cstdio>
#include <set>
#include <random>

#include <atomic>
#include <limits>
#include <map>
#include <thread>

#include "n5_writer_values.hpp"

using namespace n5test;

namespace {

// Codecs zarr-python 2.13's N5 store can read (not lz4: numcodecs framing),
// those this build has.
json zarr_readable_codecs() {
  return test::codecs_built(
      json::array({json{{"type", "raw"}}, json{{"type", "gzip"}, {"level", 6}},
                   json{{"type", "gzip"}, {"level", 1}, {"useZlib", true}}, json{{"type", "bzip2"}},
                   json{{"type", "xz"}, {"preset", 6}}, json{{"type", "zstd"}, {"level", 3}},
                   json{{"type", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}},
                   json{{"type", "blosc"}, {"cname", "zstd"}, {"clevel", 3}, {"shuffle", 2}}}));
}

struct Case {
  std::string node, dtype;
  std::vector<uint64_t> shape, chunks;
};

// A Python program dumping arrays of an N5 container read by zarr as
// little-endian C-order bytes, one file per array: argv = root out_dir nodes...
const char* kZarrDump = R"PY(
import sys, os, numpy as np, zarr
from zarr.n5 import N5FSStore
root, out = sys.argv[1], sys.argv[2]
store = N5FSStore(root)
for node in sys.argv[3:]:
    a = zarr.open_array(store=store, path=node, mode="r")
    data = np.ascontiguousarray(a[...])
    data = data.astype(data.dtype.newbyteorder("<"))
    with open(os.path.join(out, (node.replace("/", "__") or "root") + ".bin"), "wb") as f:
        f.write(data.tobytes())
    print(node, a.dtype.str, a.shape, a.chunks, a.compressor)
)PY";

// Has zarr-python dump every node of `written` into `out`; returns what it
// printed (node, dtype, shape, chunks, compressor per line).
std::string zarr_dump(const fs::path& container, const fs::path& out,
                      const std::map<std::string, std::string>& written) {
  fs::create_directories(out);
  std::string nodes;
  for (const auto& [node, data] : written) nodes += " " + test::quote(node);
  test::RunResult r = test::run_python(
      kZarrDump, test::quote(container.string()) + " " + test::quote(out.string()) + nodes);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return r.output;
}

// The little-endian C-order bytes zarr-python read for `node`.
std::string zarr_dumped(const fs::path& out, const std::string& node) {
  std::string name = node;
  for (size_t at; (at = name.find('/')) != std::string::npos;) name.replace(at, 1, "__");
  return test::read_file(out / ((name.empty() ? "root" : name) + ".bin"));
}

}  // namespace

TEST_CASE("zarr-python reads what stowage writes, for every codec zarr can read") {
  test::TempDir tmp;
  fs::path path = tmp / "ours.n5";
  std::vector<Case> cases = {{"", "uint16", {9, 10, 11}, {4, 4, 4}},
                             {"", "float64", {17, 5}, {8, 2}},
                             {"", "int8", {101}, {25}},
                             {"", "int64", {3, 7}, {2, 3}}};
  std::map<std::string, std::string> written;
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    uint32_t seed = 11;
    size_t k = 0;
    for (const json& codec : zarr_readable_codecs()) {
      for (Case c : cases) {
        c.node = "c" + std::to_string(k) + "/" + c.dtype;
        store.create(c.node, array_desc(c.dtype, c.shape, c.chunks, codec));
        stowage::Array a = store.array(c.node);
        std::string data =
            sample_bytes(a.info().element_count() * stowage::dtype_size(a.dtype()), seed++);
        a.write(std::vector<uint64_t>(c.shape.size(), 0), c.shape, data.data());
        written[c.node] = data;
      }
      ++k;
    }
    store.close();
  }
  fs::path out = tmp / "dump";
  zarr_dump(path, out, written);
  for (const auto& [node, data] : written) {
    CAPTURE(node);
    CHECK(zarr_dumped(out, node) == data);
  }
}

TEST_CASE("zarr-python reads a dataset that is the container root" * test::needs({"zstd"})) {
  test::TempDir tmp;
  fs::path path = tmp / "root.n5";
  std::vector<int32_t> values(15);
  for (int i = 0; i < 15; ++i) values[i] = i * i - 7;
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("", array_desc("int32", {5, 3}, {2, 2}, json{{"type", "zstd"}}));
    store.array("").write({0, 0}, {5, 3}, values.data());
    store.close();
  }
  fs::path out = tmp / "dump";
  fs::create_directories(out);
  test::RunResult r = test::run_python(
      kZarrDump, test::quote(path.string()) + " " + test::quote(out.string()) + " ''");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  std::string bytes = test::read_file(out / "root.bin");
  REQUIRE(bytes.size() == values.size() * 4);
  CHECK(std::memcmp(bytes.data(), values.data(), bytes.size()) == 0);
}

TEST_CASE(
    "stowage reads what zarr-python writes (every codec, padded edges, sparse, unicode attributes)") {
  test::TempDir tmp;
  fs::path path = tmp / "zarr.n5";
  const char* writer = R"PY(
import sys, os, numpy as np, zarr, numcodecs
from zarr.n5 import N5FSStore
root, out = sys.argv[1], sys.argv[2]
store = N5FSStore(root)
g = zarr.group(store=store)
g.attrs["title"] = "Gr\u00fc\u00dfe \u2713 \U0001F600"
compressors = {"raw": None, "gzip": numcodecs.GZip(5), "zlib": numcodecs.Zlib(3),
               "bz2": numcodecs.BZ2(7), "xz": numcodecs.LZMA(preset=4),
               "blosc": numcodecs.Blosc("zstd", 4, numcodecs.Blosc.BITSHUFFLE),
               "zstd": numcodecs.Zstd(5), "lz4": numcodecs.LZ4(1)}
rng = np.random.default_rng(7)
for name, comp in compressors.items():
    for dt, shape, chunks in [("u2", (13, 9, 7), (5, 4, 3)), ("f4", (33, 18), (16, 5)), ("i8", (70,), (32,))]:
        node = name + "/" + dt
        a = g.create_dataset(node, shape=shape, chunks=chunks, dtype=dt, compressor=comp)
        data = (rng.standard_normal(shape) * 1000).astype(dt)
        a[...] = data
        a.attrs["seed"] = 7
        with open(os.path.join(out, name + "__" + dt + ".bin"), "wb") as f:
            f.write(data.astype(np.dtype(dt).newbyteorder("<")).tobytes())
s = g.create_dataset("sparse", shape=(10, 12), chunks=(4, 5), dtype="i4", compressor=numcodecs.GZip(6))
s[0:4, 0:5] = 5
s[8:10, 10:12] = -1
)PY";
  fs::path out = tmp / "expected";
  fs::create_directories(out);
  test::RunResult r =
      test::run_python(writer, test::quote(path.string()) + " " + test::quote(out.string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);

  stowage::Store store = open_n5(path);
  CHECK(store.describe("").attributes["title"] == "Gr\u00fc\u00dfe \u2713 \U0001F600");
  size_t arrays = 0, left_out = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    std::string name = e.path().stem().string();
    std::string codec = name.substr(0, name.find("__"));
    std::string node = codec + "/" + name.substr(name.find("__") + 2);
    CAPTURE(node);
    if (test::plugin_off(codec == "bz2" ? "bzip2" : codec == "zlib" ? "gzip" : codec)) {
      ++left_out;  // a codec plugin this build left out
      continue;
    }
    stowage::Array a = store.array(node);
    CHECK(read_bytes(a) == test::read_file(e.path()));
    CHECK(a.info().attributes["seed"] == 7);
    ++arrays;
  }
  CHECK(arrays + left_out == 24);
  std::vector<int32_t> sparse = store.array("sparse").read_all<int32_t>();
  for (uint64_t r0 = 0; r0 < 10; ++r0)
    for (uint64_t c = 0; c < 12; ++c) {
      int32_t want = (r0 < 4 && c < 5) ? 5 : (r0 >= 8 && c >= 10) ? -1 : 0;
      CHECK(sparse[r0 * 12 + c] == want);
    }
  CHECK_FALSE(store.array("sparse").chunk_exists({1, 1}));
}

TEST_CASE("liblz4-java's LZ4BlockInputStream decodes our lz4 chunks") {
  test::TempDir tmp;
  fs::path path = tmp / "lz4.n5";
  std::vector<uint16_t> values(3000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = uint16_t(i % 500 + (i % 13) * 1000);
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("a",
                 array_desc("uint16", {3000}, {1000}, json{{"type", "lz4"}, {"blockSize", 256}}));
    store.array("a").write({0}, {3000}, values.data());
    store.close();
  }
  const char* java = R"JAVA(
import java.nio.file.*;
import net.jpountz.lz4.LZ4BlockInputStream;
public class Lz4Peer {
  public static void main(String[] args) throws Exception {
    byte[] chunk = Files.readAllBytes(Paths.get(args[0]));
    int ndim = ((chunk[2] & 0xff) << 8) | (chunk[3] & 0xff);
    int header = 4 + 4 * ndim;
    try (LZ4BlockInputStream in = new LZ4BlockInputStream(
             new java.io.ByteArrayInputStream(chunk, header, chunk.length - header))) {
      Files.write(Paths.get(args[1]), in.readAllBytes());
    }
  }
}
)JAVA";
  test::write_file(tmp / "Lz4Peer.java", java);
  std::string jar = fs::exists("/usr/share/java/lz4-java.jar") ? "/usr/share/java/lz4-java.jar"
                                                               : "/usr/share/java/lz4.jar";
  test::RunResult r = test::run("java -cp " + jar + " " + (tmp / "Lz4Peer.java").string() + " " +
                                (path / "a" / "1").string() + " " + (tmp / "decoded.bin").string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  std::string decoded = test::read_file(tmp / "decoded.bin");
  REQUIRE(decoded.size() == 2000);
  for (size_t i = 0; i < 1000; ++i) {
    uint16_t v =
        uint16_t((uint8_t(decoded[2 * i]) << 8) | uint8_t(decoded[2 * i + 1]));  // big-endian
    CHECK(v == values[1000 + i]);
  }
}

TEST_CASE("several processes writing disjoint chunks of one dataset lose nothing") {
  test::TempDir tmp;
  fs::path path = tmp / "multi.n5";
  const uint64_t rows = 64, cols = 256;
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("shared/a",
                 array_desc("uint16", {rows, cols}, {4, 16}, json{{"type", "gzip"}, {"level", 1}}));
    store.close();
  }
  fs::path writer = test::build_root() / "tests" / "n5" / "n5_test_writer";
  REQUIRE(fs::exists(writer));
  const int workers = 4;
  std::string cmd, waits;
  for (int w = 0; w < workers; ++w) {
    cmd += writer.string() + " " + test::quote(path.string()) + " shared/a " + std::to_string(w) +
           " " + std::to_string(workers) + " & p" + std::to_string(w) + "=$!; ";
    waits +=
        "wait $p" + std::to_string(w) + "; echo \"worker " + std::to_string(w) + " status $?\"; ";
  }
  test::RunResult r = test::run("( " + cmd + waits + ")");
  for (int w = 0; w < workers; ++w)  // each worker's own exit status, not just the last one's
    CHECK_MESSAGE(r.output.find("worker " + std::to_string(w) + " status 0\n") != std::string::npos,
                  r.output);
  CHECK_MESSAGE(r.output.find("failed") == std::string::npos, r.output);
  stowage::Store store = open_n5(path);
  std::vector<uint16_t> all = store.array("shared/a").read_all<uint16_t>();
  size_t wrong = 0;
  for (uint64_t i = 0; i < rows * cols; ++i) wrong += all[i] != uint16_t(i * 7 + 3);
  CHECK(wrong == 0);
  size_t temp_files = 0;
  for (const auto& e : fs::recursive_directory_iterator(path))
    temp_files += e.path().filename().string().find(".stowage-tmp") != std::string::npos;
  CHECK(temp_files == 0);
}

TEST_CASE("a writer killed mid-way leaves only whole chunks behind" * test::needs({"zstd"})) {
  test::TempDir tmp;
  fs::path path = tmp / "killed.n5";
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("a",
                 array_desc("uint16", {64, 512}, {4, 64}, json{{"type", "zstd"}, {"level", 1}}));
    store.close();
  }
  fs::path writer = test::build_root() / "tests" / "n5" / "n5_test_writer";
  // Two writers rewriting everything until killed with SIGKILL; pass p writes
  // p + 1 in every element, so a chunk mixing two passes (or a torn one) shows.
  // The kill comes at a random moment after the first chunk file appeared
  // (the writers are writing by then), not after a fixed sleep.
  std::random_device entropy;
  const unsigned seed = entropy();
  std::mt19937 rng(seed);
  const int delay_ms = int(rng() % 400);
  CAPTURE(seed);
  CAPTURE(delay_ms);
  std::string start, kills;
  for (int w = 0; w < 2; ++w) {
    start += writer.string() + " " + test::quote(path.string()) + " a " + std::to_string(w) +
             " 2 100000 pass & p" + std::to_string(w) + "=$!; ";
    kills +=
        "wait $p" + std::to_string(w) + "; echo \"worker " + std::to_string(w) + " status $?\"; ";
  }
  const std::string started =
      "until [ -n \"$(find " + test::quote((path / "a").string()) +
      " -type f ! -name attributes.json ! -name '.*' -print -quit)\" ]; do sleep 0.005; done; ";
  char delay[32];
  std::snprintf(delay, sizeof delay, "sleep %.3f; ", delay_ms / 1000.0);
  test::RunResult r = test::run("( " + start + started + delay + "kill -9 $p0 $p1; " + kills + ")");
  // Both were still writing when killed (137 = 128 + SIGKILL), not dead of an error.
  for (int w = 0; w < 2; ++w)
    CHECK_MESSAGE(
        r.output.find("worker " + std::to_string(w) + " status 137\n") != std::string::npos,
        r.output);
  stowage::Store store = open_n5(path);
  stowage::Array a = store.array("a");
  std::vector<uint16_t> all = a.read_all<uint16_t>();  // no chunk may be torn
  size_t written = 0, mixed = 0;
  std::set<uint16_t> passes_seen;
  for (uint64_t rc = 0; rc < 64 / 4; ++rc)
    for (uint64_t cc = 0; cc < 512 / 64; ++cc) {
      if (!a.chunk_exists({rc, cc})) continue;
      ++written;
      const uint16_t first = all[(rc * 4) * 512 + cc * 64];
      CHECK(first >= 1);
      passes_seen.insert(first);
      for (uint64_t y = rc * 4; y < rc * 4 + 4; ++y)
        for (uint64_t x = cc * 64; x < cc * 64 + 64; ++x) mixed += all[y * 512 + x] != first;
    }
  MESSAGE("killed after " << delay_ms << " ms of writing; " << written
                          << " chunks, passes seen: " << passes_seen.size());
  CHECK(written > 0);
  CHECK(mixed == 0);
}

namespace {

// Values of T that make a reader's conversions show: extremes, zero, and for
// floats NaN (two payloads), -0.0, infinities, the smallest subnormal.
template <class T>
std::vector<T> extreme_values() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::min(), L::max(),        L::lowest(),       T(0),
                      T(1),     T(L::max() / 3), T(L::lowest() / 7)};
  if constexpr (std::is_floating_point_v<T>) {
    v.insert(v.end(), {L::quiet_NaN(), -L::quiet_NaN(), T(-0.0), L::infinity(), -L::infinity(),
                       L::denorm_min(), L::epsilon(), T(-1.5)});
  } else if constexpr (std::is_signed_v<T>) {
    v.insert(v.end(), {T(-1), T(L::min() + 1), T(L::max() - 1)});
  } else {
    v.insert(v.end(), {T(L::max() - 1), T(0x5a), T(L::max() / 2 + 1)});
  }
  return v;
}

template <class T>
std::string extremes_as_bytes(size_t n) {
  std::vector<T> ex = extreme_values<T>(), out(n);
  for (size_t i = 0; i < n; ++i) out[i] = ex[(i * 5 + i / ex.size()) % ex.size()];
  return std::string(reinterpret_cast<const char*>(out.data()), n * sizeof(T));
}

std::string extremes_for(const std::string& dtype, size_t n) {
  if (dtype == "int8") return extremes_as_bytes<int8_t>(n);
  if (dtype == "uint8") return extremes_as_bytes<uint8_t>(n);
  if (dtype == "int16") return extremes_as_bytes<int16_t>(n);
  if (dtype == "uint16") return extremes_as_bytes<uint16_t>(n);
  if (dtype == "int32") return extremes_as_bytes<int32_t>(n);
  if (dtype == "uint32") return extremes_as_bytes<uint32_t>(n);
  if (dtype == "int64") return extremes_as_bytes<int64_t>(n);
  if (dtype == "uint64") return extremes_as_bytes<uint64_t>(n);
  if (dtype == "float32") return extremes_as_bytes<float>(n);
  if (dtype == "float64") return extremes_as_bytes<double>(n);
  FAIL("no extremes for " << dtype);
  return {};
}

}  // namespace

// Every dtype N5 has (the ten numeric ones; bool is refused), filled with
// extremes (min, max, lowest, NaN with two payloads, -0.0, +-inf, the
// smallest subnormal), through raw, gzip and byte-shuffled blosc: zarr-python
// must see the same bits and the matching numpy dtype (its N5 store shows
// native little-endian dtypes and swaps the big-endian chunks itself).
TEST_CASE("zarr-python reads every N5 dtype we write, extremes included, bit for bit") {
  const std::map<std::string, std::string> numpy_dtype = {
      {"int8", "|i1"},    {"uint8", "|u1"},  {"int16", "<i2"}, {"uint16", "<u2"},
      {"int32", "<i4"},   {"uint32", "<u4"}, {"int64", "<i8"}, {"uint64", "<u8"},
      {"float32", "<f4"}, {"float64", "<f8"}};
  const json codecs = test::codecs_built(
      json::array({json{{"type", "raw"}}, json{{"type", "gzip"}, {"level", 6}},
                   json{{"type", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}}}));
  test::TempDir tmp;
  fs::path path = tmp / "dtypes.n5";
  std::map<std::string, std::string> written;
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    for (size_t k = 0; k < codecs.size(); ++k)
      for (const auto& [dtype, np] : numpy_dtype) {
        std::string node = "c" + std::to_string(k) + "/" + dtype;
        store.create(node,
                     array_desc(dtype, {7, 9}, {3, 4}, codecs[k]));  // cropped edge chunks too
        std::string data = extremes_for(dtype, 7 * 9);
        store.array(node).write({0, 0}, {7, 9}, data.data());
        written[node] = data;
        CHECK(read_bytes(store.array(node)) == data);  // our own reader first
      }
    // N5 has no bool: refused, naming the container and the types it has.
    std::string err = TEST_REQUIRE_ERROR(store.create("b", array_desc("bool", {3}, {3})),
                                         stowage::ErrorCode::unsupported);
    CHECK_MESSAGE(err.find(path.string()) != std::string::npos, err);
    CHECK_MESSAGE(err.find("\"bool\"") != std::string::npos, err);
    store.close();
  }
  fs::path out = tmp / "dump";
  const std::string listing = zarr_dump(path, out, written);
  for (const auto& [node, data] : written) {
    CAPTURE(node);
    std::string dtype = node.substr(node.find('/') + 1);
    CHECK_MESSAGE(listing.find(node + " " + numpy_dtype.at(dtype) + " (7, 9)") != std::string::npos,
                  listing);
    CHECK(zarr_dumped(out, node) == data);
  }
}

// A 0-length dimension (the shape of the fuzz reproducer, with sizes that
// fit): created, described, read and written as empty, stored as N5 Java
// would ("dimensions" reversed, no chunk files); zarr-python opens it as an
// empty array, and we read the empty dataset zarr-python writes.
TEST_CASE(
    "a dataset with a 0-length dimension: created, read back, and read by zarr-python both ways") {
  test::TempDir tmp;
  fs::path path = tmp / "empty.n5";
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("e/a", array_desc("float32", {4, 0, 6}, {2, 3, 3}, json{{"type", "gzip"}}));
    stowage::Array a = store.array("e/a");
    CHECK(a.shape() == std::vector<uint64_t>{4, 0, 6});
    CHECK(a.info().element_count() == 0);
    a.write({0, 0, 0}, {4, 0, 6}, nullptr);  // an empty region is a no-op
    CHECK(a.read_all<float>().empty());
    store.close();
  }
  json attrs = test::read_json(path / "e" / "a" / "attributes.json");
  CHECK(attrs["dimensions"] == json::array({6, 0, 4}));
  CHECK(attrs["blockSize"] == json::array({3, 3, 2}));
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(path / "e" / "a"))
    files += e.is_regular_file();
  CHECK(files == 1);  // attributes.json only
  {
    stowage::Store store = open_n5(path);
    CHECK(store.describe("e/a").shape == std::vector<uint64_t>{4, 0, 6});
    CHECK(store.array("e/a").read_all<float>().empty());
  }
  const char* peer = R"PY(
import sys, numpy as np, zarr
from zarr.n5 import N5FSStore
root, theirs = sys.argv[1], sys.argv[2]
a = zarr.open_array(store=N5FSStore(root), path="e/a", mode="r")
print("ours", a.shape, a.dtype.str, a[...].size)
g = zarr.group(store=N5FSStore(theirs))
b = g.create_dataset("z", shape=(0, 5), chunks=(4, 4), dtype="i2")
b[...] = np.zeros((0, 5), dtype="i2")
print("theirs", b.shape)
)PY";
  fs::path theirs = tmp / "zarr-empty.n5";
  test::RunResult r =
      test::run_python(peer, test::quote(path.string()) + " " + test::quote(theirs.string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK_MESSAGE(r.output.find("ours (4, 0, 6) <f4 0") != std::string::npos, r.output);
  stowage::Store store = open_n5(theirs);
  stowage::Array z = store.array("z");
  CHECK(z.shape() == std::vector<uint64_t>{0, 5});
  CHECK(z.dtype() == stowage::DType::int16);
  CHECK(z.read_all<int16_t>().empty());
}

// Non-ASCII everywhere a name can be: the container's directory, group and
// dataset names, attribute keys. Written, listed, read back, read by
// zarr-python; errors name the file with the path as it was given.
TEST_CASE(
    "non-ASCII directory, group and dataset names: round trip, zarr-python, errors name the file") {
  test::TempDir tmp;
  const std::string dir = "donn\u00e9es-\u03b2";
  fs::path path = tmp / dir / "\u00e9t\u00e9.n5";
  fs::create_directories(path.parent_path());
  const std::string group = "\u00df", node = "\u00df/\u03bc-array";
  std::vector<int32_t> values(5 * 7);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int32_t(i * 1000 - 17000);
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create(node, array_desc("int32", {5, 7}, {2, 3}, json{{"type", "gzip"}}));
    store.array(node).write({0, 0}, {5, 7}, values.data());
    // zarr-python opens a group only when it has an attributes.json, which N5 Java
    // (and we) write only for groups with attributes: give it one, ASCII for now.
    store.set_attributes(group, json{{"ascii", 1}});
    store.close();
  }
  CHECK(fs::is_directory(path / group / "\u03bc-array"));
  {
    stowage::Store store = open_n5(path);
    CHECK(store.path() == path.string());
    CHECK(store.list("") == std::vector<std::string>{group});
    CHECK(store.list(group) == std::vector<std::string>{"\u03bc-array"});
    CHECK(store.array(node).read_all<int32_t>() == values);
    std::string err =
        TEST_REQUIRE_ERROR(store.describe("\u00df/\u03bd"), stowage::ErrorCode::not_found);
    CHECK_MESSAGE(err.find("\u00df/\u03bd") != std::string::npos, err);
  }
  // zarr-python 2.x decodes attributes.json as ASCII (zarr/util.py json_loads), so it
  // cannot open a node whose attributes.json holds raw UTF-8: we write \u escapes
  // (plugins/formats/n5/README.md). Its view is checked before and after the non-ASCII
  // attribute is set.
  const char* peer = R"PY(
import sys, zarr
from zarr.n5 import N5FSStore
g = zarr.open_group(store=N5FSStore(sys.argv[1]), mode="r")
print(sorted(g.group_keys()) == [sys.argv[2]], sorted(g[sys.argv[2]].array_keys()))
a = g[sys.argv[3]]
print(a.shape, a.dtype.str, a[...].ravel().tolist() == [i * 1000 - 17000 for i in range(35)])
print(repr(dict(g[sys.argv[2]].attrs)))
)PY";
  const std::string peer_args =
      test::quote(path.string()) + " " + test::quote(group) + " " + test::quote(node);
  test::RunResult r = test::run_python(peer, peer_args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK_MESSAGE(r.output.find("True ['\u03bc-array']\n(5, 7) <i4 True") != std::string::npos,
                r.output);
  {
    stowage::Store store = open_n5(path, stowage::Mode::update);
    store.set_attributes(group, json{{"ascii", 1}, {"n\u00e4me", "\u6f22\u5b57 \U0001F600"}});
    store.close();
  }
  CHECK(test::read_file(path / group / "attributes.json") ==
        R"({"ascii":1,"n\u00e4me":"\u6f22\u5b57 \ud83d\ude00"})");
  CHECK(open_n5(path).describe(group).attributes["n\u00e4me"] == "\u6f22\u5b57 \U0001F600");
  r = test::run_python(peer, peer_args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK_MESSAGE(
      r.output.find("{'ascii': 1, 'n\u00e4me': '\u6f22\u5b57 \U0001F600'}") != std::string::npos,
      r.output);

  // A damaged chunk and a damaged attributes.json: the message names the file by its non-ASCII
  // path.
  fs::path chunk = path / group / "\u03bc-array" / "1" / "1";
  REQUIRE(fs::exists(chunk));
  test::write_file(chunk, test::read_file(chunk).substr(0, 9));
  {
    stowage::Store store = open_n5(path);
    std::string err =
        TEST_REQUIRE_ERROR(store.array(node).read_all<int32_t>(), stowage::ErrorCode::corrupt);
    CHECK_MESSAGE(err.find(chunk.string()) != std::string::npos, err);
  }
  test::write_file(path / group / "\u03bc-array" / "attributes.json", "{\"dimensions\": [7, 5], ");
  {
    stowage::Store store = open_n5(path);
    std::string err = TEST_REQUIRE_ERROR(store.describe(node), stowage::ErrorCode::corrupt);
    CHECK_MESSAGE(
        err.find((path / group / "\u03bc-array" / "attributes.json").string()) != std::string::npos,
        err);
  }
  fs::path missing = tmp / dir / "nirgend\u0077o.n5";
  std::string err = TEST_REQUIRE_ERROR(open_n5(missing), stowage::ErrorCode::not_found);
  CHECK_MESSAGE(err.find(missing.string()) != std::string::npos, err);
}

// Two processes rewriting the same chunk with different whole values, and
// setting different attributes on the same node, round after round, while
// this process reads both: every read of the chunk is one writer's whole
// value (or the chunk is still missing before the first rename), every
// attributes.json read is valid JSON that is one writer's whole result with
// the dataset keys intact. set_attributes replaces the user attributes
// (sdk/include/stowage/plugin.h: "Replaces the user attributes of a node"),
// so the last rename wins; there is no merge.
TEST_CASE(
    "two processes writing one N5 chunk and one attributes.json: always one writer's whole result") {
  test::TempDir tmp;
  fs::path path = tmp / "same.n5";
  const uint64_t side = 256;  // one raw uint16 chunk of 128 KiB
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("a", array_desc("uint16", {side, side}, {side, side}, json{{"type", "raw"}}));
    store.close();
  }
  std::vector<uint16_t> want[2];
  for (uint64_t w = 0; w < 2; ++w)
    for (uint64_t i = 0; i < side * side; ++i) want[w].push_back(same_value(w, i));
  auto check_attributes = [&](const json& attrs, size_t& seen_writer) {
    REQUIRE(attrs.contains("writer"));
    uint64_t w = attrs["writer"].get<uint64_t>();
    REQUIRE(w < 2);
    seen_writer |= 1u << w;
    json expected = same_attributes(w, attrs["round"].get<int>());
    CHECK(unordered(attrs) == unordered(expected));
  };
  fs::path writer = test::build_root() / "tests" / "n5" / "n5_test_writer";
  REQUIRE(fs::exists(writer));
  const int rounds = 150;
  std::string cmd;
  for (int w = 0; w < 2; ++w)
    cmd += writer.string() + " " + test::quote(path.string()) + " a same " + std::to_string(w) +
           " " + std::to_string(rounds) + " & ";
  test::RunResult r;
  std::atomic<bool> done{false};
  std::thread runner([&] {
    r = test::run("( " + cmd + "wait ) && echo all-done");
    done = true;
  });
  size_t reads = 0, torn = 0, seen_chunk = 0, seen_attrs = 0, bad_json = 0;
  {
    stowage::Store store = open_n5(path);
    stowage::Array a = store.array("a");
    std::vector<uint16_t> got(side * side);
    while (!done) {
      if (!a.chunk_exists({0, 0})) continue;
      a.read({0, 0}, {side, side}, got.data());
      ++reads;
      if (got == want[0])
        seen_chunk |= 1;
      else if (got == want[1])
        seen_chunk |= 2;
      else
        ++torn;
      std::string text = test::read_file(path / "a" / "attributes.json");
      json attrs = json::parse(text, nullptr, false);
      if (attrs.is_discarded()) {
        ++bad_json;
        continue;
      }
      CHECK(attrs["dimensions"] == json::array({side, side}));
      CHECK(attrs["dataType"] == "uint16");
      if (attrs.contains("writer")) {
        for (const char* key : {"dimensions", "blockSize", "dataType", "compression"})
          attrs.erase(key);
        check_attributes(attrs, seen_attrs);
      }
    }
  }
  runner.join();
  REQUIRE_MESSAGE(r.output.find("all-done") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("failed") == std::string::npos, r.output);
  MESSAGE("concurrent reads: " << reads);
  CHECK(torn == 0);
  CHECK(bad_json == 0);
  // The end state: one writer's chunk and one writer's last attributes.
  stowage::Store store = open_n5(path);
  std::vector<uint16_t> final_values = store.array("a").read_all<uint16_t>();
  CHECK((final_values == want[0] || final_values == want[1]));
  json attrs = test::read_json(path / "a" / "attributes.json");
  CHECK(attrs["blockSize"] == json::array({side, side}));
  CHECK(attrs["compression"]["type"] == "raw");
  json user = store.describe("a").attributes;
  size_t final_writer = 0;
  check_attributes(user, final_writer);
  CHECK(user["round"] == rounds - 1);
  size_t temp_files = 0;
  for (const auto& e : fs::recursive_directory_iterator(path))
    temp_files += e.path().filename().string().find(".stowage-tmp") != std::string::npos;
  CHECK(temp_files == 0);
}
