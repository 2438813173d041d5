// Real peers: Debian's zarr-python (N5FSStore) reads what we write and we
// read what it writes; liblz4-java decodes our lz4 chunks; several real
// processes writing disjoint chunks of one dataset lose nothing.
#include "n5_helpers.hpp"
#include <cstdio>
#include <set>
#include <random>

using namespace n5test;

namespace {

// Codecs zarr-python 2.13's N5 store can read (not lz4: numcodecs framing).
json zarr_readable_codecs() {
  return json::array({json{{"type", "raw"}}, json{{"type", "gzip"}, {"level", 6}},
                      json{{"type", "gzip"}, {"level", 1}, {"useZlib", true}}, json{{"type", "bzip2"}},
                      json{{"type", "xz"}, {"preset", 6}}, json{{"type", "zstd"}, {"level", 3}},
                      json{{"type", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}},
                      json{{"type", "blosc"}, {"cname", "zstd"}, {"clevel", 3}, {"shuffle", 2}}});
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
    print(node, a.shape, a.chunks, a.dtype, a.compressor)
)PY";

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
        std::string data = sample_bytes(a.info().element_count() * stowage::dtype_size(a.dtype()), seed++);
        a.write(std::vector<uint64_t>(c.shape.size(), 0), c.shape, data.data());
        written[c.node] = data;
      }
      ++k;
    }
    store.close();
  }
  std::string nodes;
  for (const auto& [node, data] : written) nodes += " " + node;
  fs::path out = tmp / "dump";
  fs::create_directories(out);
  test::RunResult r = test::run_python(kZarrDump, test::quote(path.string()) + " " + test::quote(out.string()) + nodes);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  for (const auto& [node, data] : written) {
    CAPTURE(node);
    std::string fname = node.substr(0, node.find('/')) + "__" + node.substr(node.find('/') + 1);
    CHECK(test::read_file(out / (fname + ".bin")) == data);
  }
}

TEST_CASE("zarr-python reads a dataset that is the container root") {
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
  test::RunResult r = test::run_python(kZarrDump, test::quote(path.string()) + " " + test::quote(out.string()) + " ''");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  std::string bytes = test::read_file(out / "root.bin");
  REQUIRE(bytes.size() == values.size() * 4);
  CHECK(std::memcmp(bytes.data(), values.data(), bytes.size()) == 0);
}

TEST_CASE("stowage reads what zarr-python writes (every codec, padded edges, sparse, unicode attributes)") {
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
  test::RunResult r = test::run_python(writer, test::quote(path.string()) + " " + test::quote(out.string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);

  stowage::Store store = open_n5(path);
  CHECK(store.describe("").attributes["title"] == "Gr\u00fc\u00dfe \u2713 \U0001F600");
  size_t arrays = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    std::string name = e.path().stem().string();
    std::string node = name.substr(0, name.find("__")) + "/" + name.substr(name.find("__") + 2);
    CAPTURE(node);
    stowage::Array a = store.array(node);
    CHECK(read_bytes(a) == test::read_file(e.path()));
    CHECK(a.info().attributes["seed"] == 7);
    ++arrays;
  }
  CHECK(arrays == 24);
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
    store.create("a", array_desc("uint16", {3000}, {1000}, json{{"type", "lz4"}, {"blockSize", 256}}));
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
    uint16_t v = uint16_t((uint8_t(decoded[2 * i]) << 8) | uint8_t(decoded[2 * i + 1]));  // big-endian
    CHECK(v == values[1000 + i]);
  }
}

TEST_CASE("several processes writing disjoint chunks of one dataset lose nothing") {
  test::TempDir tmp;
  fs::path path = tmp / "multi.n5";
  const uint64_t rows = 64, cols = 256;
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("shared/a", array_desc("uint16", {rows, cols}, {4, 16}, json{{"type", "gzip"}, {"level", 1}}));
    store.close();
  }
  fs::path writer = test::build_root() / "tests" / "n5" / "n5_test_writer";
  REQUIRE(fs::exists(writer));
  const int workers = 4;
  std::string cmd, waits;
  for (int w = 0; w < workers; ++w) {
    cmd += writer.string() + " " + test::quote(path.string()) + " shared/a " + std::to_string(w) + " " +
           std::to_string(workers) + " & p" + std::to_string(w) + "=$!; ";
    waits += "wait $p" + std::to_string(w) + "; echo \"worker " + std::to_string(w) + " status $?\"; ";
  }
  test::RunResult r = test::run("( " + cmd + waits + ")");
  for (int w = 0; w < workers; ++w)  // each worker's own exit status, not just the last one's
    CHECK_MESSAGE(r.output.find("worker " + std::to_string(w) + " status 0\n") != std::string::npos, r.output);
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

TEST_CASE("a writer killed mid-way leaves only whole chunks behind") {
  test::TempDir tmp;
  fs::path path = tmp / "killed.n5";
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("a", array_desc("uint16", {64, 512}, {4, 64}, json{{"type", "zstd"}, {"level", 1}}));
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
    kills += "wait $p" + std::to_string(w) + "; echo \"worker " + std::to_string(w) + " status $?\"; ";
  }
  const std::string started = "until [ -n \"$(find " + test::quote((path / "a").string()) +
                              " -type f ! -name attributes.json ! -name '.*' -print -quit)\" ]; do sleep 0.005; done; ";
  char delay[32];
  std::snprintf(delay, sizeof delay, "sleep %.3f; ", delay_ms / 1000.0);
  test::RunResult r = test::run("( " + start + started + delay + "kill -9 $p0 $p1; " + kills + ")");
  // Both were still writing when killed (137 = 128 + SIGKILL), not dead of an error.
  for (int w = 0; w < 2; ++w)
    CHECK_MESSAGE(r.output.find("worker " + std::to_string(w) + " status 137\n") != std::string::npos, r.output);
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
  MESSAGE("killed after " << delay_ms << " ms of writing; " << written << " chunks, passes seen: " << passes_seen.size());
  CHECK(written > 0);
  CHECK(mixed == 0);
}
