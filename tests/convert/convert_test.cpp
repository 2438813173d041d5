// stowage-convert end to end: round trips through pairs of formats give the
// same values, labels and attributes; a killed conversion leaves no
// destination; --create-only plus --part I/N equals a whole conversion.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

using stowage::json;

namespace {

std::string convert_cmd() { return test::env_or("STOWAGE_CONVERT", "stowage-convert"); }

test::RunResult convert(const std::string& args) { return test::run(convert_cmd() + " --quiet " + args); }

std::string q(const test::fs::path& p) { return test::quote(p.string()); }

// Every element of a dense array, as raw bytes in C order.
std::vector<uint8_t> dense_bytes(const std::string& spec) {
  auto [path, node] = stowage::split_dataset_spec(spec);
  stowage::Store s = stowage::Store::open(path);
  stowage::NodeInfo info = s.describe(node);
  size_t esize = stowage::dtype_size(info.dtype);
  std::vector<uint8_t> out(info.element_count() * esize);
  if (info.kind == stowage::NodeKind::sparse) {
    s.sparse(node).read_dense(0, 0, info.shape[0], info.shape[1], out.data());
  } else {
    stowage::Array a = s.array(node);
    a.read(std::vector<uint64_t>(a.ndim(), 0), a.shape(), out.data());
  }
  return out;
}

std::vector<std::vector<std::string>> labels_of(const std::string& spec) {
  auto [path, node] = stowage::split_dataset_spec(spec);
  stowage::Store s = stowage::Store::open(path);
  std::vector<std::vector<std::string>> out;
  for (const auto& d : s.describe(node).dims)
    out.push_back(d.labels.empty() ? std::vector<std::string>{} : s.read_strings(d.labels));
  return out;
}

json attributes_of(const std::string& spec) {
  auto [path, node] = stowage::split_dataset_spec(spec);
  return stowage::Store::open(path).describe(node).attributes;
}

test::fs::path fixture(const std::string& rel) { return test::fixtures() / rel; }

}  // namespace

TEST_CASE("n5 -> npy -> n5 keeps every value; numpy reads the npy") {
  test::TempDir tmp;
  std::string src = (test::source_root() / "examples" / "volume.n5").string() + "::raw/s0";
  REQUIRE(convert(test::quote(src) + " " + q(tmp / "s0.npy")).status == 0);
  REQUIRE(convert(q(tmp / "s0.npy") + " " + q(tmp / "back.n5") + " --compression zstd").status == 0);
  auto original = dense_bytes(src);
  CHECK(dense_bytes((tmp / "s0.npy").string()) == original);
  CHECK(dense_bytes((tmp / "back.n5").string()) == original);
  CHECK(stowage::Store::open((tmp / "back.n5").string()).describe("").codec["type"] == "zstd");
  // The peer: numpy and zarr agree with each other on what we wrote.
  test::RunResult py = test::run_python(
      "import sys, numpy as np, zarr\n"
      "a = np.load(sys.argv[1])\n"
      "b = zarr.open(zarr.n5.N5FSStore(sys.argv[2]), mode='r')['raw/s0'][...]\n"
      "assert a.dtype == np.uint16 and a.shape == (32, 48, 40), (a.dtype, a.shape)\n"
      "assert (a == b).all()\n"
      "print('ok')\n",
      q(tmp / "s0.npy") + " " + test::quote((test::source_root() / "examples" / "volume.n5").string()));
  CHECK_MESSAGE(py.output == "ok\n", py.output);
}

TEST_CASE("a whole N5 container converts group by group with attributes and codecs") {
  test::TempDir tmp;
  std::string src = (test::source_root() / "examples" / "volume.n5").string();
  REQUIRE(convert(test::quote(src) + " " + q(tmp / "copy.n5")).status == 0);
  stowage::Store a = stowage::Store::open(src), b = stowage::Store::open((tmp / "copy.n5").string());
  for (const char* node : {"raw/s0", "raw/s1", "labels"}) {
    CAPTURE(node);
    CHECK(dense_bytes(src + "::" + node) == dense_bytes((tmp / "copy.n5").string() + "::" + node));
    CHECK(a.describe(node).attributes == b.describe(node).attributes);
    CHECK(a.describe(node).codec["type"] == b.describe(node).codec["type"]);  // kept without --compression
  }
  CHECK(a.describe("").attributes == b.describe("").attributes);
}

TEST_CASE("datg -> n5 -> datg: values bit for bit, names and metadata") {
  test::TempDir tmp;
  for (const char* name : {"basic_4x5", "few_cols_250x3"}) {
    CAPTURE(name);
    std::string src = fixture(std::string("datg/") + name + ".datg").string();
    REQUIRE(convert(test::quote(src) + " " + q(tmp / (std::string(name) + ".n5"))).status == 0);
    REQUIRE(convert(q(tmp / (std::string(name) + ".n5")) + " " + q(tmp / (std::string(name) + ".datg"))).status == 0);
    std::string back = (tmp / (std::string(name) + ".datg")).string();
    CHECK(dense_bytes(back) == dense_bytes(src));
    CHECK(labels_of(back) == labels_of(src));
    CHECK(attributes_of(back) == attributes_of(src));  // creation time included
  }
}

TEST_CASE("datg needs float64: other dtypes are refused unless cast") {
  test::TempDir tmp;
  std::string src = (test::source_root() / "examples" / "volume.n5").string() + "::raw/s0";
  // A 3-D array cannot be a datg matrix at all.
  test::RunResult r = convert(test::quote(src) + " " + q(tmp / "x.datg"));
  CHECK(r.status != 0);
  CHECK(r.output.find("x.datg") != std::string::npos);
  CHECK(!test::fs::exists(tmp / "x.datg"));
  // A 2-D uint8 matrix converts with a named cast, and gets index labels.
  REQUIRE(convert(q(fixture("bpcells/uint_packed_col_names")) + " " + q(tmp / "m.n5")).status == 0);
  test::RunResult refused = convert(q(tmp / "m.n5") + " " + q(tmp / "m.datg"));
  CHECK(refused.status != 0);
  CHECK(refused.output.find("--cast") != std::string::npos);
  REQUIRE(convert(q(tmp / "m.n5") + " " + q(tmp / "m.datg") + " --cast uint32=float64").status == 0);
  auto u = dense_bytes((tmp / "m.n5").string());
  auto d = dense_bytes((tmp / "m.datg").string());
  REQUIRE(d.size() == u.size() * 2);
  for (size_t i = 0; i < u.size() / 4; ++i) {
    uint32_t a;
    double b;
    std::memcpy(&a, u.data() + 4 * i, 4);
    std::memcpy(&b, d.data() + 8 * i, 8);
    CHECK(static_cast<double>(a) == b);
  }
  // The BPCells names travelled through N5's attributes into datg's name files.
  CHECK(labels_of((tmp / "m.datg").string()) == labels_of(fixture("bpcells/uint_packed_col_names").string()));
}

TEST_CASE("bpcells -> daf -> bpcells stays sparse with its names") {
  test::TempDir tmp;
  std::string src = fixture("bpcells/uint_packed_col_names").string();
  std::string daf = (tmp / "repo").string() + "::matrices/gene/cell/UMIs";
  REQUIRE(convert(test::quote(src) + " " + test::quote(daf) + " --to daf").status == 0);
  CHECK(stowage::Store::open((tmp / "repo").string()).describe("matrices/gene/cell/UMIs").kind ==
        stowage::NodeKind::sparse);
  REQUIRE(convert(test::quote(daf) + " " + q(tmp / "back") + " --to bpcells").status == 0);
  std::string back = (tmp / "back").string();
  CHECK(dense_bytes(back) == dense_bytes(src));
  CHECK(labels_of(back) == labels_of(src));
  CHECK(stowage::Store::open(back).describe("").kind == stowage::NodeKind::sparse);
}

TEST_CASE("datadings -> datadings copies every sample's bytes") {
  test::TempDir tmp;
  std::string src = fixture("datadings/basic.msgpack").string();
  REQUIRE(convert(test::quote(src) + " " + q(tmp / "copy.msgpack")).status == 0);
  stowage::Records a = stowage::Store::open(src).records(), b = stowage::Store::open((tmp / "copy.msgpack").string()).records();
  REQUIRE(a.size() == b.size());
  for (uint64_t i = 0; i < a.size(); ++i) {
    CHECK(a.read(i) == b.read(i));
    CHECK(a.key(i) == b.key(i));
  }
}

TEST_CASE("an existing destination is never touched without --overwrite; nodes can be added") {
  test::TempDir tmp;
  std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  // A new container with one named node (staged and renamed like any new destination).
  REQUIRE(convert(test::quote(vol + "::labels") + " " + test::quote((tmp / "c.n5").string() + "::labels")).status == 0);
  auto before = dense_bytes((tmp / "c.n5").string() + "::labels");
  test::RunResult again = convert(test::quote(vol + "::raw/s1") + " " + q(tmp / "c.n5"));
  CHECK(again.status != 0);
  CHECK(again.output.find("--overwrite") != std::string::npos);
  CHECK(dense_bytes((tmp / "c.n5").string() + "::labels") == before);
  // A new node inside the existing container needs no --overwrite...
  REQUIRE(convert(test::quote(vol + "::raw/s1") + " " + test::quote((tmp / "c.n5").string() + "::extra/s1")).status == 0);
  CHECK(dense_bytes((tmp / "c.n5").string() + "::extra/s1") == dense_bytes(vol + "::raw/s1"));
  // ...but replacing it does.
  CHECK(convert(test::quote(vol + "::raw/s1") + " " + test::quote((tmp / "c.n5").string() + "::extra/s1")).status != 0);
  CHECK(convert(test::quote(vol + "::raw/s1") + " " + test::quote((tmp / "c.n5").string() + "::extra/s1") +
                " --overwrite").status == 0);
  CHECK(convert(test::quote(vol + "::raw/s0") + " " + q(tmp / "c.n5") + " --overwrite").status == 0);
  CHECK(dense_bytes((tmp / "c.n5").string()) == dense_bytes(vol + "::raw/s0"));
}

TEST_CASE("--create-only then --part I/N equals a whole conversion") {
  test::TempDir tmp;
  std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  std::string dst = (tmp / "parts.n5").string();
  REQUIRE(convert(test::quote(vol) + " " + test::quote(dst) + " --create-only --compression gzip").status == 0);
  for (int i = 0; i < 3; ++i)
    REQUIRE(convert(test::quote(vol) + " " + test::quote(dst) + " --part " + std::to_string(i) + "/3").status == 0);
  for (const char* node : {"raw/s0", "raw/s1", "labels"}) {
    CAPTURE(node);
    CHECK(dense_bytes(dst + "::" + node) == dense_bytes(vol + "::" + node));
  }
  CHECK(convert(test::quote(vol) + " " + test::quote(dst) + " --part 3/3").status == 2);
}

TEST_CASE("a conversion killed half-way leaves no destination, and the next run cleans up") {
  test::TempDir tmp;
  // 48 MB of noisy data that gzip -9 needs a while for.
  test::RunResult gen = test::run_python(
      "import sys, numpy as np\n"
      "rng = np.random.default_rng(1)\n"
      "np.save(sys.argv[1], (rng.normal(1000, 50, (96, 512, 512))).astype('<u2'))\n",
      q(tmp / "big.npy"));
  REQUIRE_MESSAGE(gen.status == 0, gen.output);
  std::string dst = (tmp / "out.n5").string();
  for (int delay_ms : {150, 400, 900}) {
    CAPTURE(delay_ms);
    pid_t pid = fork();
    if (pid == 0) {
      execl(convert_cmd().c_str(), convert_cmd().c_str(), "--quiet", "--threads", "1", "--compression",
            "gzip:level=9", "--chunks", "32,64,64", (tmp / "big.npy").c_str(), dst.c_str(), (char*)nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    CHECK(!test::fs::exists(dst));
  }
  // Ctrl-C (SIGINT) is handled: the process removes its own temporary.
  pid_t pid = fork();
  if (pid == 0) {
    execl(convert_cmd().c_str(), convert_cmd().c_str(), "--quiet", "--threads", "1", "--compression",
          "gzip:level=9", (tmp / "big.npy").c_str(), (tmp / "int.n5").c_str(), (char*)nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(!test::fs::exists(tmp / "int.n5"));
  // The next run to the killed destination completes and removes the leftovers.
  REQUIRE(convert(q(tmp / "big.npy") + " " + test::quote(dst) + " --compression lz4").status == 0);
  // The three SIGKILLed runs' staging directories (".stowage-convert.<pid>.out.n5",
  // dead pids) are removed by this run to the same destination; the SIGINT
  // run removed its own (int.n5). So nothing may remain.
  std::string leftovers;
  for (const auto& e : test::fs::directory_iterator(tmp.path()))
    if (e.path().filename().string().find(".stowage-convert.") == 0) leftovers += " " + e.path().filename().string();
  CHECK_MESSAGE(leftovers.empty(), "left behind:" << leftovers);
  CHECK(dense_bytes(dst) == dense_bytes((tmp / "big.npy").string()));
}

TEST_CASE("usage errors exit 2, data errors exit 1 naming the file") {
  test::TempDir tmp;
  CHECK(test::run(convert_cmd() + " --bogus a b").status == 2);
  CHECK(test::run(convert_cmd()).status == 2);
  test::RunResult missing = convert(q(tmp / "nope.n5") + " " + q(tmp / "x.npy"));
  CHECK(missing.status == 1);
  CHECK(missing.output.find("nope.n5") != std::string::npos);
  test::RunResult unknown_ext = convert(q(test::source_root() / "examples" / "volume.n5") + " " + q(tmp / "x.weird"));
  CHECK(unknown_ext.status == 2);
  CHECK(unknown_ext.output.find("--to") != std::string::npos);
}
