// stowage-convert end to end: round trips through pairs of formats give the
// same values, labels and attributes; a killed conversion leaves no
// destination; --create-only plus --part I/N equals a whole conversion.
#include "test_support.hpp"

#include <stowage/copy.hpp>

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

using stowage::json;

namespace {

std::string convert_cmd() { return test::env_or("STOWAGE_CONVERT", "stowage-convert"); }

test::RunResult convert(const std::string& args) {
  return test::run(convert_cmd() + " --quiet " + args);
}

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

// The --json summary of a run whose output may start with notes on stderr.
json summary_of(const std::string& output) {
  return json::parse(output.substr(output.find("{\n")));
}

test::fs::path fixture(const std::string& rel) { return test::fixtures() / rel; }

}  // namespace

TEST_CASE("n5 -> npy -> n5 keeps every value; numpy reads the npy" * test::needs({"zstd"})) {
  test::TempDir tmp;
  std::string src = (test::source_root() / "examples" / "volume.n5").string() + "::raw/s0";
  // The metadata rule: .npy has no attributes, so they are not dropped unasked...
  test::RunResult refused = convert(test::quote(src) + " " + q(tmp / "s0.npy"));
  CHECK(refused.status == 2);
  CHECK_MESSAGE((refused.output.find("cannot keep the attributes 'resolution', 'units'") !=
                     std::string::npos &&
                 refused.output.find("--drop-metadata") != std::string::npos),
                refused.output);
  CHECK(!test::fs::exists(tmp / "s0.npy"));
  // ...and with --drop-metadata the summary lists what went.
  test::RunResult dropped = test::run(convert_cmd() + " --json --drop-metadata " +
                                      test::quote(src) + " " + q(tmp / "s0.npy"));
  REQUIRE_MESSAGE(dropped.status == 0, dropped.output);
  CHECK(summary_of(dropped.output)["notes"].dump().find(
            "dropped the attributes 'resolution', 'units'") != std::string::npos);
  REQUIRE(convert(q(tmp / "s0.npy") + " " + q(tmp / "back.n5") + " --compression zstd").status ==
          0);
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
      q(tmp / "s0.npy") + " " +
          test::quote((test::source_root() / "examples" / "volume.n5").string()));
  CHECK_MESSAGE(py.output == "ok\n", py.output);
}

TEST_CASE("a whole N5 container converts group by group with attributes and codecs" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  std::string src = (test::source_root() / "examples" / "volume.n5").string();
  REQUIRE(convert(test::quote(src) + " " + q(tmp / "copy.n5")).status == 0);
  stowage::Store a = stowage::Store::open(src),
                 b = stowage::Store::open((tmp / "copy.n5").string());
  for (const char* node : {"raw/s0", "raw/s1", "labels"}) {
    CAPTURE(node);
    CHECK(dense_bytes(src + "::" + node) == dense_bytes((tmp / "copy.n5").string() + "::" + node));
    CHECK(a.describe(node).attributes == b.describe(node).attributes);
    CHECK(a.describe(node).codec["type"] ==
          b.describe(node).codec["type"]);  // kept without --compression
  }
  CHECK(a.describe("").attributes == b.describe("").attributes);
}

TEST_CASE("datg -> n5 -> datg: values bit for bit, names and metadata") {
  test::TempDir tmp;
  for (const char* name : {"basic_4x5", "few_cols_250x3"}) {
    CAPTURE(name);
    std::string src = fixture(std::string("datg/") + name + ".datg").string();
    REQUIRE(convert(test::quote(src) + " " + q(tmp / (std::string(name) + ".n5"))).status == 0);
    REQUIRE(
        convert(q(tmp / (std::string(name) + ".n5")) + " " + q(tmp / (std::string(name) + ".datg")))
            .status == 0);
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
  REQUIRE(convert(q(tmp / "m.n5") + " " + q(tmp / "m.datg") + " --cast uint32=float64").status ==
          0);
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
  CHECK(labels_of((tmp / "m.datg").string()) ==
        labels_of(fixture("bpcells/uint_packed_col_names").string()));
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
  stowage::Records a = stowage::Store::open(src).records(),
                   b = stowage::Store::open((tmp / "copy.msgpack").string()).records();
  REQUIRE(a.size() == b.size());
  for (uint64_t i = 0; i < a.size(); ++i) {
    CHECK(a.read(i) == b.read(i));
    CHECK(a.key(i) == b.key(i));
  }
}

TEST_CASE("an existing destination is never touched without --overwrite; nodes can be added" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  // A new container with one named node (staged and renamed like any new destination).
  REQUIRE(convert(test::quote(vol + "::labels") + " " +
                  test::quote((tmp / "c.n5").string() + "::labels"))
              .status == 0);
  auto before = dense_bytes((tmp / "c.n5").string() + "::labels");
  test::RunResult again = convert(test::quote(vol + "::raw/s1") + " " + q(tmp / "c.n5"));
  CHECK(again.status != 0);
  CHECK(again.output.find("--overwrite") != std::string::npos);
  CHECK(dense_bytes((tmp / "c.n5").string() + "::labels") == before);
  // A new node inside the existing container needs no --overwrite; the summary
  // counts that node, not the whole container...
  test::RunResult added = test::run(convert_cmd() + " --json " + test::quote(vol + "::raw/s1") +
                                    " " + test::quote((tmp / "c.n5").string() + "::extra/s1"));
  REQUIRE(added.status == 0);
  uint64_t node_bytes = 0;
  for (const auto& e : test::fs::recursive_directory_iterator(tmp / "c.n5" / "extra" / "s1"))
    if (e.is_regular_file()) node_bytes += e.file_size();
  CHECK(json::parse(added.output)["bytes_out"] == node_bytes);
  CHECK(dense_bytes((tmp / "c.n5").string() + "::extra/s1") == dense_bytes(vol + "::raw/s1"));
  // ...but replacing it does.
  CHECK(convert(test::quote(vol + "::raw/s1") + " " +
                test::quote((tmp / "c.n5").string() + "::extra/s1"))
            .status != 0);
  CHECK(convert(test::quote(vol + "::raw/s1") + " " +
                test::quote((tmp / "c.n5").string() + "::extra/s1") + " --overwrite")
            .status == 0);
  CHECK(convert(test::quote(vol + "::raw/s0") + " " + q(tmp / "c.n5") + " --overwrite").status ==
        0);
  CHECK(dense_bytes((tmp / "c.n5").string()) == dense_bytes(vol + "::raw/s0"));
}

// Every file below `dir` with its content: a tree compared before and after.
std::map<std::string, std::string> tree_of(const test::fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : test::fs::recursive_directory_iterator(dir))
    out[test::fs::relative(e.path(), dir).string()] =
        e.is_regular_file() ? test::read_file(e.path()) : "<dir>";
  return out;
}

TEST_CASE(
    "a destination that is the source, inside it or holding it is refused before anything is written") {
  test::TempDir tmp;
  test::fs::copy(test::source_root() / "examples" / "volume.n5", tmp / "a.n5",
                 test::fs::copy_options::recursive);
  test::fs::create_directory_symlink(tmp / "a.n5", tmp / "link.n5");
  const auto before = tree_of(tmp.path());
  const std::string a = (tmp / "a.n5").string(), link = (tmp / "link.n5").string();
  struct Case {
    std::string src, dst, why;
  };
  for (const Case& c : std::vector<Case>{
           {a + "::raw/s0", a + "::raw/s0", "are the same"},
           {a + "::raw", a + "::raw", "are the same"},
           {a, (tmp / "x" / ".." / "a.n5").string(), "are the same"},
           {link + "::raw", a + "::raw", "are the same"},          // through a symlink
           {a, a + "::copy", "destination is inside the source"},  // recursed before
           {a + "::raw", a + "::raw/s0/deeper", "destination is inside the source"},
           {a, a + "/inner.n5", "destination is inside the source"},
           {a + "::raw/s0", a + "::raw", "source is inside the destination"},  // would delete it
           {a + "::raw/s0", a, "source is inside the destination"},
       }) {
    CAPTURE(c.src);
    CAPTURE(c.dst);
    for (const char* flags : {"", " --overwrite"}) {
      test::RunResult r = convert(test::quote(c.src) + " " + test::quote(c.dst) + flags);
      CHECK(r.status == 2);
      CHECK(r.output.find("'" + c.src + "' -> '" + c.dst + "'") !=
            std::string::npos);  // as the user typed them
      CHECK(r.output.find(c.why) != std::string::npos);
      CHECK(r.output.find("nothing was written") != std::string::npos);
    }
  }
  CHECK(tree_of(tmp.path()) == before);
  // Sibling nodes of one container are fine.
  CHECK(convert(test::quote(a + "::raw/s0") + " " + test::quote(a + "::raw/s0copy")).status == 0);
  CHECK(dense_bytes(a + "::raw/s0copy") == dense_bytes(a + "::raw/s0"));
}

TEST_CASE("--overwrite replaces only a dataset of the destination's format" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  test::fs::create_directories(tmp / "important");
  test::write_file(tmp / "important" / "notes.txt", "years of work");
  test::RunResult r =
      convert(test::quote(vol) + " " + q(tmp / "important") + " --to n5 --overwrite");
  CHECK(r.status == 2);
  CHECK(r.output.find((tmp / "important").string() + " exists and is not a dataset of format n5") !=
        std::string::npos);
  CHECK(test::read_file(tmp / "important" / "notes.txt") == "years of work");
  // An .npy file is not an N5 container either, whatever its name.
  REQUIRE(convert(test::quote(vol + "::raw/s1") + " " + q(tmp / "s1.npy")).status == 0);
  const std::string npy = test::read_file(tmp / "s1.npy");
  test::fs::rename(tmp / "s1.npy", tmp / "s1.n5");
  CHECK(convert(test::quote(vol) + " " + q(tmp / "s1.n5") + " --overwrite").status == 2);
  CHECK(test::read_file(tmp / "s1.n5") == npy);
}

TEST_CASE("--create-only then --part I/N equals a whole conversion" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  std::string dst = (tmp / "parts.n5").string();
  REQUIRE(convert(test::quote(vol) + " " + test::quote(dst) + " --create-only --compression gzip")
              .status == 0);
  for (int i = 0; i < 3; ++i)
    REQUIRE(
        convert(test::quote(vol) + " " + test::quote(dst) + " --part " + std::to_string(i) + "/3")
            .status == 0);
  for (const char* node : {"raw/s0", "raw/s1", "labels"}) {
    CAPTURE(node);
    CHECK(dense_bytes(dst + "::" + node) == dense_bytes(vol + "::" + node));
  }
  CHECK(convert(test::quote(vol) + " " + test::quote(dst) + " --part 3/3").status == 2);
  // A part run cannot change the codec or chunks the destination was created with.
  test::RunResult r =
      convert(test::quote(vol) + " " + test::quote(dst) + " --part 0/3 --compression zstd");
  CHECK(r.status == 2);
  CHECK(r.output.find("give --compression and --chunks to the --create-only run") !=
        std::string::npos);
  CHECK(convert(test::quote(vol) + " " + test::quote(dst) + " --part 0/3 --chunks 8,8,8").status ==
        2);
}

// 48 MB of noisy uint16 (96x512x512) that gzip -9 needs a while for: a copy to interrupt.
// The tests ask for zlib's deflate (encoder=zlib): libdeflate finishes before the kill.
void save_noisy_volume(const test::fs::path& npy, int seed) {
  test::RunResult gen = test::run_python(
      "import sys, numpy as np\n"
      "rng = np.random.default_rng(int(sys.argv[2]))\n"
      "np.save(sys.argv[1], (rng.normal(1000, 50, (96, 512, 512))).astype('<u2'))\n",
      q(npy) + " " + std::to_string(seed));
  REQUIRE_MESSAGE(gen.status == 0, gen.output);
}

TEST_CASE("a conversion killed half-way leaves no destination, and the next run cleans up") {
  test::TempDir tmp;
  save_noisy_volume(tmp / "big.npy", 1);
  std::string dst = (tmp / "out.n5").string();
  for (int delay_ms : {150, 400, 900}) {
    CAPTURE(delay_ms);
    pid_t pid = fork();
    if (pid == 0) {
      execl(convert_cmd().c_str(), convert_cmd().c_str(), "--quiet", "--threads", "1",
            "--compression", "gzip:level=9,encoder=zlib", "--chunks", "32,64,64",
            (tmp / "big.npy").c_str(), dst.c_str(), (char*)nullptr);
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
    execl(convert_cmd().c_str(), convert_cmd().c_str(), "--quiet", "--threads", "1",
          "--compression", "gzip:level=9,encoder=zlib", (tmp / "big.npy").c_str(),
          (tmp / "int.n5").c_str(), (char*)nullptr);
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
  // The three SIGKILLed runs' staging directories (".out.n5.stowage-tmp.<pid>.<n>",
  // dead pids) are removed by this run to the same destination; the SIGINT
  // run removed its own (int.n5). So nothing may remain.
  std::string leftovers;
  for (const auto& e : test::fs::directory_iterator(tmp.path()))
    if (e.path().filename().string().find(".stowage-") != std::string::npos)
      leftovers += " " + e.path().filename().string();
  CHECK_MESSAGE(leftovers.empty(), "left behind:" << leftovers);
  CHECK(dense_bytes(dst) == dense_bytes((tmp / "big.npy").string()));
}

// Starts stowage-convert with `args` and sends it `sig` after `delay_ms`; returns its wait status.
int interrupted_convert(const std::vector<std::string>& args, int delay_ms, int sig) {
  const std::string program = convert_cmd();
  std::vector<const char*> argv{program.c_str(), "--quiet"};
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  ::kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// The names in a container directory that a copy stages under.
std::string staged_leftovers(const test::fs::path& dir) {
  std::string found;
  for (const auto& e : test::fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().rfind(".stowage-convert.", 0) == 0)
      found += " " + e.path().string();
  return found;
}

TEST_CASE("a node added to or replaced in a container is published whole, whatever stops the copy" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  save_noisy_volume(tmp / "big.npy", 2);
  const std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  const std::string big = (tmp / "big.npy").string();
  const test::fs::path c = tmp / "c.n5";
  REQUIRE(
      convert(test::quote(vol + "::labels") + " " + test::quote(c.string() + "::keep")).status ==
      0);
  const auto kept = tree_of(c);
  const std::vector<std::string> slow{
      "--threads", "1", "--compression", "gzip:level=9,encoder=zlib", "--chunks", "32,64,64"};

  // Killed while adding: no node, not even a partial one (such as 115 of 324 chunks).
  for (int delay_ms : {200, 600}) {
    CAPTURE(delay_ms);
    std::vector<std::string> args = slow;
    args.insert(args.end(), {big, c.string() + "::grp/big"});
    int status = interrupted_convert(args, delay_ms, SIGKILL);
    REQUIRE(WIFSIGNALED(status));
    stowage::Store s = stowage::Store::open(c.string());
    CHECK(!test::fs::exists(c / "grp" / "big"));
    CHECK(s.list("grp")
              .empty());  // the staged node is not listed while it is written or after a kill
  }
  // Ctrl-C: exit 1 and the process removes its own staged node.
  {
    std::vector<std::string> args = slow;
    args.insert(args.end(), {big, c.string() + "::grp/int"});
    int status = interrupted_convert(args, 400, SIGINT);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(!test::fs::exists(c / "grp" / "int"));
  }
  // The next add to that node completes and clears what the killed runs left.
  REQUIRE(
      convert(test::quote(big) + " " + test::quote(c.string() + "::grp/big") + " --compression lz4")
          .status == 0);
  CHECK_MESSAGE(staged_leftovers(c).empty(), "left behind:" << staged_leftovers(c));
  const auto source_values = dense_bytes(big);
  CHECK(dense_bytes(c.string() + "::grp/big") == source_values);
  CHECK(attributes_of(c.string() + "::keep") == attributes_of(vol + "::labels"));

  // Killed while replacing: the old node stays whole (it is not deleted first).
  const auto old_tree = tree_of(c / "grp" / "big");
  {
    std::vector<std::string> args = slow;
    args.insert(args.end(), {"--overwrite", big, c.string() + "::grp/big"});
    REQUIRE(WIFSIGNALED(interrupted_convert(args, 400, SIGKILL)));
  }
  CHECK(tree_of(c / "grp" / "big") == old_tree);

  // Two runs replacing one node at once both succeed; the node is one of
  // them whole, never a mix (such as zstd metadata over xz chunks).
  pid_t a = fork();
  if (a == 0) {
    execl(convert_cmd().c_str(), convert_cmd().c_str(), "--quiet", "--threads", "1", "--overwrite",
          "--compression", "zstd", big.c_str(), (c.string() + "::grp/big").c_str(), (char*)nullptr);
    _exit(127);
  }
  test::RunResult b = convert("--threads 1 --overwrite --compression xz:preset=0 " +
                              test::quote(big) + " " + test::quote(c.string() + "::grp/big"));
  int status_a = 0;
  waitpid(a, &status_a, 0);
  CHECK(WIFEXITED(status_a));
  CHECK(WEXITSTATUS(status_a) == 0);
  CHECK_MESSAGE(b.status == 0, b.output);
  std::string codec = stowage::Store::open(c.string()).describe("grp/big").codec["type"];
  CHECK((codec == "zstd" || codec == "xz"));
  CHECK(dense_bytes(c.string() + "::grp/big") == source_values);
  CHECK_MESSAGE(staged_leftovers(c).empty(), "left behind:" << staged_leftovers(c));
}

TEST_CASE("a source in one large chunk reports progress and hears a cancel every few MiB") {
  test::TempDir tmp;
  // 48 MiB of float64 in a single gzip block: what a one-chunk source looks like.
  test::RunResult gen = test::run_python(
      "import sys, numpy as np\n"
      "np.save(sys.argv[1], np.random.default_rng(3).normal(0, 1, (3072, 2048)))\n",
      q(tmp / "m.npy"));
  REQUIRE_MESSAGE(gen.status == 0, gen.output);
  const std::string one_block = (tmp / "one.n5").string() + "::m";
  REQUIRE(convert(q(tmp / "m.npy") + " " + test::quote(one_block) +
                  " --chunks 3072,2048 --compression gzip:level=1")
              .status == 0);

  std::vector<uint64_t> done;
  stowage::CopyOptions options;
  options.axes = {"gene", "cell"};
  options.progress = [&](const stowage::CopyProgress& p) { done.push_back(p.bytes_done); };
  stowage::CopyResult r = stowage::copy(one_block, (tmp / "m.datg").string(), options);
  REQUIRE(done.size() >= 6);
  uint64_t largest_step = done[0];
  for (size_t i = 1; i < done.size(); ++i)
    largest_step = std::max(largest_step, done[i] - done[i - 1]);
  CHECK(largest_step <= (8u << 20));
  CHECK(done.back() == 3072u * 2048u * 8u);
  // The destination is not written as one 48 MiB block either, and the summary says so.
  stowage::NodeInfo info = stowage::Store::open((tmp / "m.datg").string()).describe("");
  CHECK(info.chunks[0] < 3072);
  std::string notes;
  for (const auto& n : r.notes) notes += n + "\n";
  CHECK_MESSAGE(notes.find("chunks [3072,2048] are over 16 MiB") != std::string::npos, notes);
  CHECK(dense_bytes((tmp / "m.datg").string()) == dense_bytes((tmp / "m.npy").string()));

  // A cancel asked for at the first report stops the copy before the next write.
  std::atomic<bool> cancel{false};
  size_t reports = 0;
  options.cancel = &cancel;
  options.progress = [&](const stowage::CopyProgress&) { ++reports, cancel = true; };
  CHECK_THROWS_WITH(stowage::copy(one_block, (tmp / "c.datg").string(), options),
                    doctest::Contains("interrupted"));
  CHECK(reports == 1);
  CHECK(!test::fs::exists(tmp / "c.datg"));
}

TEST_CASE(
    "metadata: storage parameters stay with their format; what a format cannot keep is named or dropped on request") {
  test::TempDir tmp;
  const std::string counts = (test::source_root() / "examples" / "counts.bpcells").string();
  // BPCells' version/packing are how it stores the matrix, not attributes:
  // datg gets none of them, with no warning and no --drop-metadata needed.
  test::RunResult to_datg = test::run(convert_cmd() + " --json --cast float64 " +
                                      test::quote(counts) + " " + q(tmp / "c.datg"));
  REQUIRE_MESSAGE(to_datg.status == 0, to_datg.output);
  CHECK(to_datg.output.find("warning") == std::string::npos);
  CHECK(attributes_of((tmp / "c.datg").string()).value("packed", json()).is_null());
  // Into BPCells again they travel, as a codec does: an unpacked matrix stays unpacked.
  const std::string unpacked = (tmp / "unpacked").string();
  {
    stowage::Store src = stowage::Store::open(counts);
    stowage::NodeInfo info = src.describe("");
    stowage::Store dst = stowage::Store::open(unpacked, stowage::Mode::truncate, "bpcells");
    dst.create("", {{"kind", "sparse"},
                    {"dtype", "uint32"},
                    {"shape", info.shape},
                    {"layout", "csc"},
                    {"packed", false}});
    stowage::Sparse in = src.sparse(""), out = dst.sparse("");
    out.append(in.read(0, in.majors()), in.majors());
    dst.close();
  }
  stowage::CopyOptions to_bpcells;
  to_bpcells.to = "bpcells";
  stowage::copy(unpacked, (tmp / "again").string(), to_bpcells);
  CHECK(stowage::Store::open((tmp / "again").string()).describe("").raw["storage"]["packed"] ==
        false);
  CHECK(stowage::Store::open(counts).describe("").raw["storage"]["packed"] == true);

  const std::string n5 = (tmp / "a.n5").string();
  REQUIRE(convert(q(tmp / "c.datg") + " " + test::quote(n5 + "::m")).status == 0);
  // A plugin's warning during a copy is in the summary's notes (--json), not lost on stderr.
  {
    stowage::Store s = stowage::Store::open(n5, stowage::Mode::update);
    json attrs = s.describe("m").attributes;
    attrs["stowage_labels"][0]["labels"][0] = "gene \"1\"";
    s.set_attributes("m", attrs);
    s.close();
  }
  test::RunResult warned =
      test::run(convert_cmd() + " --json " + test::quote(n5 + "::m") + " " + q(tmp / "w.datg"));
  REQUIRE_MESSAGE(warned.status == 0, warned.output);
  CHECK_MESSAGE(
      summary_of(warned.output)["notes"].dump().find("which the Java reader") != std::string::npos,
      warned.output);
  // datg's attributes: the ones it has a place for travel, any other is refused by name.
  {
    stowage::Store s = stowage::Store::open(n5, stowage::Mode::update);
    json attrs = s.describe("m").attributes;
    attrs["dataset_name"] = "counts";
    attrs["lab"] = "north";
    s.set_attributes("m", attrs);
    s.close();
  }
  test::RunResult refused = convert(test::quote(n5 + "::m") + " " + q(tmp / "b.datg"));
  CHECK(refused.status == 2);
  CHECK_MESSAGE((refused.output.find("cannot keep the attributes") != std::string::npos &&
                 refused.output.find("'lab'") != std::string::npos),
                refused.output);
  CHECK(!test::fs::exists(tmp / "b.datg"));
  test::RunResult kept =
      convert("--drop-metadata " + test::quote(n5 + "::m") + " " + q(tmp / "b.datg"));
  REQUIRE_MESSAGE(kept.status == 0, kept.output);
}

// Every node of a store below `node`: its description (codec keys in any
// order) and its values, whatever its kind.
void check_same_tree(const stowage::Store& a, const stowage::Store& b, const std::string& node) {
  CAPTURE(node);
  const stowage::NodeInfo x = a.describe(node), y = b.describe(node);
  REQUIRE(x.kind == y.kind);
  CHECK(nlohmann::json::parse(x.attributes.dump()) == nlohmann::json::parse(y.attributes.dump()));
  // (The N5 plugin writes blosc's typesize, the element size N5 Java leaves implicit.)
  nlohmann::json cx = nlohmann::json::parse(x.codec.dump()),
                 cy = nlohmann::json::parse(y.codec.dump());
  if (cx.is_object() && cx.value("type", "") == "blosc") cx.erase("typesize"), cy.erase("typesize");
  CHECK(cx == cy);
  CHECK(x.raw.value("chunks", json()) == y.raw.value("chunks", json()));
  CHECK(x.shape == y.shape);
  switch (x.kind) {
    case stowage::NodeKind::group:
      REQUIRE(a.list(node) == b.list(node));
      for (const auto& child : a.list(node))
        check_same_tree(a, b, node.empty() ? child : node + "/" + child);
      break;
    case stowage::NodeKind::array:
      CHECK(dense_bytes(a.path() + "::" + node) == dense_bytes(b.path() + "::" + node));
      break;
    case stowage::NodeKind::strings:
      CHECK(a.read_strings(node) == b.read_strings(node));
      break;
    case stowage::NodeKind::records: {
      stowage::Records ra = a.records(node), rb = b.records(node);
      REQUIRE(ra.size() == rb.size());
      for (uint64_t i = 0; i < ra.size(); ++i) CHECK(ra.read(i) == rb.read(i));
      break;
    }
    case stowage::NodeKind::sparse:
      break;
  }
}

TEST_CASE(
    "an N5 container written by N5 Java converts whole: string and object datasets keep blocks and codec" *
    test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  const std::string java = fixture("n5/java-style.n5").string(), copy = (tmp / "j.n5").string();
  test::RunResult r = convert(test::quote(java) + " " + test::quote(copy));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  stowage::Store a = stowage::Store::open(java), b = stowage::Store::open(copy);
  check_same_tree(a, b, "");
  // The object blocks are N5 Java's bytes exactly (mode 2, raw); the string
  // blocks are gzip again, in blocks of 3 as Java wrote them.
  for (const char* block : {"0", "1"})
    CHECK(test::read_file(test::fs::path(copy) / "optional/object_1d" / block) ==
          test::read_file(test::fs::path(java) / "optional/object_1d" / block));
  CHECK(b.describe("optional/string_1d").raw["chunks"] == json::array({3}));
  CHECK(b.describe("optional/string_1d").codec["type"] == "gzip");
}

TEST_CASE("names up to the file system's limit work, as a destination and as a new node") {
  test::TempDir tmp;
  const std::string vol = (test::source_root() / "examples" / "volume.n5").string() + "::labels";
  const std::string name(251,
                         'n');  // + ".n5": 254 bytes, staged under a hidden name that must be cut
  test::RunResult whole = convert(test::quote(vol) + " " + q(tmp / (name + ".n5")));
  CHECK_MESSAGE(whole.status == 0, whole.output);
  CHECK(dense_bytes((tmp / (name + ".n5")).string()) == dense_bytes(vol));
  REQUIRE(
      convert(test::quote(vol) + " " + test::quote((tmp / "c.n5").string() + "::small")).status ==
      0);
  const std::string node =
      (tmp / "c.n5").string() + "::" + std::string(255, 'k');  // staged inside c.n5
  test::RunResult added = convert(test::quote(vol) + " " + test::quote(node));
  CHECK_MESSAGE(added.status == 0, added.output);
  CHECK(dense_bytes(node) == dense_bytes(vol));
  CHECK(staged_leftovers(tmp.path()).empty());
}

TEST_CASE("usage errors exit 2, data errors exit 1 naming the file") {
  test::TempDir tmp;
  CHECK(test::run(convert_cmd() + " --bogus a b").status == 2);
  CHECK(test::run(convert_cmd()).status == 2);
  test::RunResult missing = convert(q(tmp / "nope.n5") + " " + q(tmp / "x.npy"));
  CHECK(missing.status == 1);
  CHECK(missing.output.find("nope.n5") != std::string::npos);
  test::RunResult unknown_ext =
      convert(q(test::source_root() / "examples" / "volume.n5") + " " + q(tmp / "x.weird"));
  CHECK(unknown_ext.status == 2);
  CHECK(unknown_ext.output.find("--to") != std::string::npos);
}

TEST_CASE("codec parameters and format ids are checked before anything is written" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  const std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  const std::string out = (tmp / "out.n5").string();
  struct Case {
    std::string args, says;
  };
  for (
      const Case& c : std::vector<Case>{
          {"--compression zstd:lvl=5", "zstd has no parameter 'lvl'; its parameters: level"},
          {"--compression gzip:level=5,useZlb=true",
           "gzip has no parameter 'useZlb'; its parameters: level, useZlib"},
          {"--compression zstd:level=99", "\"level\" is 99, allowed range"},
          {"--compression blosc:cname=lz5", "\"cname\" is \"lz5\", allowed"},
          {"--compression zsdt",
           "compression 'zsdt' is not known; the codecs: adler32, blosc, bzip2, crc32, crc32c, "
           "fletcher32, gzip, lz4, raw, xz, zstd"},
          {"--to n6",
           "destination format 'n6' is not known; the formats: bpcells, daf, datadings, datg, n5, npy"},
          {"--from n6", "source format 'n6' is not known; the formats: "},
      }) {
    CAPTURE(c.args);
    test::RunResult r = convert(test::quote(vol) + " " + test::quote(out) + " " + c.args);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK_FALSE(test::fs::exists(out));
  }
  // Aliases and every real parameter still go through.
  REQUIRE(
      convert(test::quote(vol) + " " + test::quote(out) + " --compression zlib:level=5").status ==
      0);
  CHECK(attributes_of(out + "::raw/s0").is_object());
  CHECK(stowage::Store::open(out).describe("raw/s0").codec ==
        json({{"type", "gzip"}, {"level", 5}, {"useZlib", true}}));
}

TEST_CASE("options that cannot be right are refused, and messages name what the user typed" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  const std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  const std::string npy = (test::source_root() / "examples" / "expression.npy").string();
  struct Case {
    std::string src, dst, args, says;
  };
  for (const Case& c : std::vector<Case>{
           // strtoull alone read -1 as 18446744073709551615
           {vol + "::raw/s0", "out.n5", "--chunks -1,16,16",
            "--chunks: '-1,16,16' is not a list of positive integers"},
           {vol + "::raw/s0", "out.n5", "--chunks 16,,16", "is not a list of positive integers"},
           {vol + "::raw/s0", "out.n5", "--chunks 8,8",
            "--chunks has 2 entries, the array has 3 dimensions"},
           {npy, "out.datg", "--cast float64 --axes gene,gene",
            "--axes: 'gene' names two dimensions"},
           {npy, "out.datg", "--cast float64 --axes gene,cell,x",
            "--axes gives 3 names, but the array has 2 dimensions"},
           // "cannot hold" is a usage error for every format; the cast hint only where the dtype
           // was refused
           {npy, "out.datg", "",
            "out.datg: format datg cannot hold uint32 array of rank 2: datg stores only "
            "float64 values, not \"uint32\"; convert the values with --cast"},
           {npy, "out.msgpack", "",
            "out.msgpack: format datadings cannot hold uint32 array of rank 2"},
           // a codec the destination cannot apply was silently ignored
           {vol + "::raw/s0", "out.npy", "--compression zstd",
            "out.npy: format npy does not compress uint16 array of rank 3 with a zstd codec"},
           {(test::fixtures() / "bpcells" / "double_packed_col_names").string(), "out.bpcells",
            "--to bpcells --compression zstd",
            "out.bpcells: format bpcells does not compress a float64 sparse matrix"},
       }) {
    CAPTURE(c.args);
    CAPTURE(c.dst);
    // Run from the temporary directory with a bare destination name, as a user would.
    test::RunResult r = test::run("cd " + q(tmp.path()) + " && " + convert_cmd() + " --quiet " +
                                  test::quote(c.src) + " " + c.dst + " " + c.args);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK(r.output.find(".stowage-convert.") ==
          std::string::npos);  // never the hidden staging path
    CHECK(r.output.find("may help") == std::string::npos);
  }
  CHECK(test::fs::is_empty(tmp.path()));
  // The README's own example: a destination with no directory part (datg publishes three files).
  test::RunResult r =
      test::run("cd " + q(tmp.path()) + " && " + convert_cmd() + " --quiet " + test::quote(npy) +
                " expression.datg --cast float64 --axes gene,cell");
  CHECK(r.status == 0);
  CHECK(r.output == "");
  CHECK(labels_of((tmp / "expression.datg").string())[0].size() ==
        stowage::Store::open(npy).describe().shape[0]);
}

TEST_CASE(
    "narrowing casts fail on a value the type cannot hold, or clip and wrap as numpy does when asked") {
  test::TempDir tmp;
  const std::string dir = tmp.path().string();
  // numpy writes the sources, and computes what clipping (np.clip) and wrapping (astype) give.
  REQUIRE(
      test::run_python(
          "import numpy as np, sys\n"
          "d = sys.argv[1]\n"
          "np.save(d + '/u32.npy', np.array([[1, 200], [4294967295, 7]], dtype=np.uint32))\n"
          "np.save(d + '/f.npy', np.array([1.5, -2.9, 1e20, -1e20, np.nan], dtype=np.float64))\n"
          "np.save(d + '/big.npy', np.array([1.0, -1e300], dtype=np.float64))\n",
          test::quote(dir))
          .status == 0);
  struct Case {
    std::string src, args, says;
  };
  for (const Case& c : std::vector<Case>{
           {"u32.npy", "--cast int8",
            "int8 cannot hold the uint32 value 200 at [0, 1] of " + dir + "/u32.npy"},
           {"f.npy", "--cast int32",
            "int32 cannot hold the float64 value 1e+20 at [2] of " + dir + "/f.npy"},
           {"f.npy", "--cast int32 --cast-overflow wrap",
            "int32 cannot hold the float64 value 1e+20 at [2]"},
           {"big.npy", "--cast float32", "float32 cannot hold the float64 value -1e+300 at [1]"},
       }) {
    CAPTURE(c.args);
    test::RunResult r =
        convert(test::quote(dir + "/" + c.src) + " " + q(tmp / "out.npy") + " " + c.args);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK(r.output.find("--cast-overflow clip") != std::string::npos);
    CHECK_FALSE(test::fs::exists(tmp / "out.npy"));
  }
  REQUIRE(
      convert(q(tmp / "u32.npy") + " " + q(tmp / "wrap.npy") + " --cast int8 --cast-overflow wrap")
          .status == 0);
  REQUIRE(
      convert(q(tmp / "u32.npy") + " " + q(tmp / "clip.npy") + " --cast int8 --cast-overflow clip")
          .status == 0);
  REQUIRE(
      convert(q(tmp / "f.npy") + " " + q(tmp / "fclip.npy") + " --cast int32 --cast-overflow clip")
          .status == 0);
  REQUIRE(convert(q(tmp / "big.npy") + " " + q(tmp / "bigclip.npy") +
                  " --cast float32 --cast-overflow clip")
              .status == 0);
  test::RunResult numpy = test::run_python(
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "u = np.load(d + '/u32.npy')\n"
      "assert np.load(d + '/wrap.npy').tolist() == u.astype(np.int8).tolist(), np.load(d + '/wrap.npy')\n"
      "assert np.load(d + '/clip.npy').tolist() == np.clip(u, -128, 127).astype(np.int8).tolist()\n"
      "f = np.load(d + '/f.npy')\n"
      "i = np.iinfo(np.int32)\n"
      "want = np.clip(np.nan_to_num(f, nan=0.0), i.min, i.max).astype(np.int32)\n"
      "assert np.load(d + '/fclip.npy').tolist() == want.tolist(), np.load(d + '/fclip.npy')\n"
      "b = np.load(d + '/bigclip.npy')\n"
      "assert b.dtype == np.float32 and b.tolist() == [1.0, float(np.finfo(np.float32).min)], b\n"
      "print('numpy agrees')\n",
      test::quote(dir));
  CHECK(numpy.output == "numpy agrees\n");
  CHECK(convert(q(tmp / "f.npy") + " " + q(tmp / "x.npy") + " --cast int32 --cast-overflow clop")
            .status == 2);
}

TEST_CASE("a host program converts through stowage::copy (examples/copy-host)" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  const std::string vol = (test::source_root() / "examples" / "volume.n5").string();
  const std::string host = test::env_or("STOWAGE_COPY_HOST", "copy_host");
  test::RunResult r = test::run(test::quote(host) + " " + test::quote(vol + "::raw/s0") + " " +
                                q(tmp / "s0.n5") + " zstd:level=5");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("copy_host: 100%") != std::string::npos);  // the progress callback ran
  CHECK(r.output.find("n5 -> n5: 1 nodes") != std::string::npos);
  CHECK(dense_bytes((tmp / "s0.n5").string()) == dense_bytes(vol + "::raw/s0"));
  CHECK(stowage::Store::open((tmp / "s0.n5").string()).describe().codec ==
        json({{"type", "zstd"}, {"level", 5}}));
  // The library's refusals reach the host as exceptions, with nothing written.
  r = test::run(test::quote(host) + " " + test::quote(vol) + " " + test::quote(vol + "::copy"));
  CHECK(r.status == 2);
  CHECK(r.output.find("the destination is inside the source") != std::string::npos);
}

// Issue 30: a link inside a container to its parent made stowage-info list
// raw/up 4,100 times and stowage-convert write 11 MB from this 283 KB
// source; one to /usr walked on and on. Links to directories are not walked
// (the file backend's list() leaves them out); a node opened by its path
// through one still opens.
TEST_CASE(
    "links to directories inside a container are not walked: info and convert finish with bounded output") {
  test::TempDir tmp;
  const test::fs::path a = tmp / "a.n5", plain = tmp / "plain.n5";
  test::fs::copy(test::source_root() / "examples" / "volume.n5", a,
                 test::fs::copy_options::recursive);
  test::fs::copy(a, plain, test::fs::copy_options::recursive);
  test::fs::create_directory_symlink("..", a / "raw" / "up");
  test::fs::create_directory_symlink("/usr", a / "raw" / "usr");
  test::fs::create_directory_symlink("../labels", a / "raw" / "alias");
  const std::string info = test::env_or("STOWAGE_INFO", "stowage-info");
  test::RunResult r = test::run("timeout 60 " + test::quote(info) + " " + q(a));
  CHECK(r.status == 0);
  CHECK(r.output.find("raw/s0") != std::string::npos);
  for (const char* link : {"raw/up", "raw/usr", "raw/alias"})
    CHECK(r.output.find(link) == std::string::npos);
  const auto tree = [](const std::string& out) {
    return out.substr(std::min(out.find('\n'), out.size()));
  };
  CHECK(tree(r.output) ==
        tree(test::run(test::quote(info) + " " + q(plain)).output));  // as without the links
  r = test::run("timeout 60 " + test::quote(info) + " " + test::quote(a.string() + "::raw/alias"));
  CHECK(r.status == 0);
  CHECK(r.output.find("raw/alias  array") != std::string::npos);
  for (const test::fs::path& from : {a, plain}) {
    r = test::run("timeout 120 " + convert_cmd() + " --quiet " + q(from) + " " +
                  q(from.string() + ".out.n5"));
    CHECK_MESSAGE(r.status == 0, r.output);
  }
  const auto copied = tree_of(a.string() + ".out.n5"),
             reference = tree_of(plain.string() + ".out.n5");
  CHECK(copied == reference);  // what the container holds without the links, nothing more
}
