// The storage layer (stowage/storage.h) through the registry, as formats
// use it: the "file" and "memory" backends must behave alike, and the file
// backend keeps the publishing guarantees stowage has always given (staged
// files invisible until published, sets published whole through a journal
// a successor completes).
#include "storage_checks.hpp"  // test::storage_for
#include "storage_conformance.hpp"
#include "test_support.hpp"

#include <stowage/storage.hpp>

#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace sdk = stowage::sdk;
namespace fs = std::filesystem;
using test::storage_for;

using storage_conformance::text_of;

// What every backend must do alike: tests/support/storage_conformance.hpp.
TEST_CASE("storage: the file backend passes the storage conformance checks, every part") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  CHECK((s.can_write() && s.can_rename() && s.can_lock_keys() && s.can_put_if()));
  storage_conformance::check_storage(s, (tmp.path() / "root").string());
}

TEST_CASE("storage: the memory backend passes the storage conformance checks, every part") {
  sdk::Storage s = storage_for("mem://storage-test");
  CHECK((s.can_write() && s.can_rename() && s.can_lock_keys() && s.can_put_if()));
  storage_conformance::check_storage(s, "mem://storage-test");
}

TEST_CASE(
    "storage: a location's scheme picks the backend; an unknown one names the plugin it looked for") {
  try {
    storage_for("nosuch://host/x.n5");
    FAIL("an unknown scheme was accepted");
  } catch (const stowage::Error& e) {
    CHECK(std::string(e.what()).find("stowage_storage_nosuch") != std::string::npos);
    CHECK(std::string(e.what()).find("nosuch://host/x.n5") != std::string::npos);
  }
  // mem:// is the memory backend, and one registry shares it between calls.
  storage_for("mem://shared").write("mem://shared/k", std::string("v"));
  CHECK(text_of(storage_for("mem://shared"), "mem://shared/k") == "v");
}

TEST_CASE("storage: a set a killed writer left half published is completed by recover()") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  const fs::path a = tmp.path() / "d.msgpack", b = tmp.path() / "d.msgpack.offsets";
  test::write_file(a, "old a");
  test::write_file(b, "old b");
  // The state after the journal (the commit point) appeared and the first
  // rename ran: the journal lists both renames; the first temporary is gone.
  test::write_file(tmp.path() / ".t1", "new b");
  test::write_file(a, "new a");
  test::write_file(tmp.path() / ".d.msgpack.stowage-commit",
                   ".t0\td.msgpack\n.t1\td.msgpack.offsets\n");
  CHECK(s.recover(a.string()));
  CHECK(test::read_file(a) == "new a");
  CHECK(test::read_file(b) == "new b");
  CHECK_FALSE(fs::exists(tmp.path() / ".d.msgpack.stowage-commit"));
  CHECK_FALSE(s.recover(a.string()));  // nothing left to do

  // A journal naming a file outside its directory, or cut or malformed, is
  // CORRUPT naming the journal, and nothing moves.
  test::write_file(tmp.path() / ".t2", "x");
  for (const char* line : {".t2\t../escape\n", "../x\td.msgpack\n", ".t2\t/etc/passwd\n",
                           ".t2\tsub/../../m\n", ".t2\n", "\td.msgpack\n", ".t2\td.msgpack"}) {
    CAPTURE(line);
    test::write_file(tmp.path() / ".d.msgpack.stowage-commit", line);
    try {
      s.recover(a.string());
      FAIL("accepted a bad journal");
    } catch (const sdk::Error& e) {
      CHECK(e.code() == STOWAGE_CORRUPT);
      CHECK(std::string(e.what()).find(".d.msgpack.stowage-commit") != std::string::npos);
    }
    CHECK(test::read_file(a) == "new a");
    CHECK(fs::exists(tmp.path() / ".t2"));
    CHECK_FALSE(fs::exists(tmp.path().parent_path() / "escape"));
  }
}

// Issue 21: the file backend's lock makes other processes wait (flock on
// the directory, no file created) and is released with the Lock object.
TEST_CASE(
    "storage: the file backend's lock excludes other processes until released, and creates no file") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  auto other_process_can_lock = [&] {
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY);
      ::_exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
  };
  CHECK(other_process_can_lock());
  {
    sdk::Lock turn = s.lock(tmp.path().string());
    CHECK(turn.held());
    CHECK_FALSE(other_process_can_lock());
    CHECK(fs::is_empty(tmp.path()));
  }
  CHECK(other_process_can_lock());
  const std::string missing = (tmp / "missing").string();
  try {
    sdk::Lock lock = s.lock(missing);
    FAIL("locked a directory that does not exist");
  } catch (const sdk::Error& e) {
    CHECK(std::string(e.what()).find(missing) != std::string::npos);
  }
}

TEST_CASE("storage: a temporary name a killed writer left (same pid) is skipped, not an error") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  const std::string key = (tmp.path() / "x.bin").string();
  // Find the name pattern by staging once, then occupy the next 64 names.
  std::string probe;
  {
    sdk::Staged f = s.stage(key);
    for (const auto& e : fs::directory_iterator(tmp.path())) probe = e.path().string();
  }
  REQUIRE(probe.find(".x.bin.stowage-tmp.") != std::string::npos);
  const size_t dot = probe.rfind('.');
  const uint64_t next = std::stoull(probe.substr(dot + 1)) + 1;
  for (uint64_t n = next; n < next + 64; ++n)
    test::write_file(probe.substr(0, dot + 1) + std::to_string(n), "stale");
  s.write(key, std::string("new"));
  CHECK(test::read_file(key) == "new");
  CHECK(test::read_file(probe.substr(0, dot + 1) + std::to_string(next)) == "stale");  // left alone
  CHECK(s.list(tmp.path().string()) == std::vector<std::string>{"x.bin"});  // temporaries unlisted
}

TEST_CASE("storage: concurrent publishes of one set leave one whole version") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  const std::string a = (tmp.path() / "m.data").string(), b = (tmp.path() / "m.index").string();
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      for (int round = 0; round < 20; ++round) {
        std::vector<sdk::Staged> set;
        set.push_back(s.stage(a));
        set.push_back(s.stage(b));
        std::string v = std::to_string(w) + "." + std::to_string(round);
        set[0].append(v);
        set[1].append(v);
        s.publish(set);
      }
    });
  for (auto& t : writers) t.join();
  CHECK(test::read_file(a) == test::read_file(b));
}

TEST_CASE("storage: a watched map tells its file's size now (file backend), other views do not") {
  test::TempDir tmp;
  const fs::path p = tmp.path() / "data";
  test::write_file(p, std::string(3 * 4096, 'x'));
  sdk::Storage s = storage_for(p.string());
  sdk::Bytes watched = s.map_watched(p.string());
  CHECK(watched.size() == 3 * 4096);
  CHECK(s.view_size(watched) == std::optional<uint64_t>(3 * 4096));
  fs::resize_file(p, 100);  // cut in place, as a writer rewriting it does
  CHECK(s.view_size(watched) == std::optional<uint64_t>(100));
  CHECK(watched.data()[50] == 'x');  // still inside the file
  // A plain map or a buffer cannot tell; nor can the memory backend.
  CHECK_FALSE(s.view_size(s.map(p.string())).has_value());
  CHECK_FALSE(s.view_size(s.read(p.string())).has_value());
  sdk::Storage m = storage_for("mem://watch");
  m.write("mem://watch/k", std::string("abc"));
  CHECK_FALSE(m.view_size(m.map_watched("mem://watch/k")).has_value());
}

// Issue 30: a walk (stowage-info, stowage::copy) lists through list(), so a
// link inside a container to its parent, to /usr or to a sibling would make
// it loop or leave the container. list() leaves out links to directories;
// links to files are files; a linked directory opened by its path still opens.
TEST_CASE(
    "storage: list() leaves out symbolic links to directories; linked files and explicit paths still read") {
  test::TempDir tmp;
  const fs::path d = tmp / "c";
  fs::create_directories(d / "sub");
  test::write_file(d / "file.txt", "x");
  test::write_file(d / "sub" / "inner.txt", "y");
  fs::create_directory_symlink("..", d / "up");
  fs::create_directory_symlink(".", d / "self");
  fs::create_directory_symlink("/usr", d / "usr");
  fs::create_directory_symlink("sub", d / "alias");
  fs::create_symlink("file.txt", d / "link.txt");
  fs::create_symlink("nowhere", d / "dangling");
  sdk::Storage s = storage_for(d.string());
  CHECK(s.list(d.string()) == std::vector<std::string>{"dangling", "file.txt", "link.txt", "sub/"});
  CHECK(s.kind((d / "alias").string()) == STOWAGE_ENTRY_DIRECTORY);
  CHECK(s.list((d / "alias").string()) == std::vector<std::string>{"inner.txt"});
  CHECK(text_of(s, (d / "link.txt").string()) == "x");
  CHECK(text_of(s, (d / "alias" / "inner.txt").string()) == "y");
}

// Issue 30: ".<name>.stowage-tmp.<pid>.<n>" of a 250-byte name passed
// NAME_MAX (255) and the write failed naming the staged file.
TEST_CASE(
    "storage: staged names and journals of long names fit NAME_MAX; errors name the key, never a staged file") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  const std::string name(246, 'n');
  const std::string key = (tmp / (name + ".npy")).string(), key2 = (tmp / (name + ".idx")).string();
  s.write(key, std::string("hello"));
  CHECK(test::read_file(key) == "hello");
  std::vector<sdk::Staged> set;
  set.push_back(s.stage(key));
  set.push_back(s.stage(key2));
  set[0].append(std::string("one"));
  set[1].append(std::string("two"));
  {
    // Two staged names of one long prefix: distinct, and each fits.
    std::set<std::string> hidden;
    for (const auto& e : fs::directory_iterator(tmp.path())) {
      const std::string n = e.path().filename().string();
      CHECK(n.size() <= 255);
      if (n[0] == '.') hidden.insert(n);
    }
    CHECK(hidden.size() == 2);
  }
  s.publish(set);  // a journal beside the first, named after it
  CHECK(test::read_file(key) == "one");
  CHECK(test::read_file(key2) == "two");
  {
    sdk::Lock held = s.lock_key(key);  // its lock file's name fits too
    CHECK(held.held());
  }
  const std::string dir = s.stage_directory(tmp.path().string() + "/" + std::string(250, 'd'));
  CHECK(fs::path(dir).filename().string().size() <= 255);
  // A name over NAME_MAX itself: the error names it, not a staged name.
  const std::string too_long = (tmp / std::string(300, 'z')).string();
  std::string message = "no error";
  try {
    s.write(too_long, std::string("x"));
  } catch (const sdk::Error& e) {
    CHECK(e.code() == STOWAGE_IO);
    message = e.what();
  }
  CHECK(message.find(too_long + ": ") == 0);
  CHECK(message.find("stowage-tmp") == std::string::npos);
  size_t left = 0;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    left += e.path().filename().string().find(".stowage-") != std::string::npos;
  CHECK(left == 1);  // the staged directory above, nothing else
  // The case: a 250-character .npy destination written through its format.
  const std::string npy = (tmp / (std::string(246, 'p') + ".npy")).string();
  {
    stowage::Store out = stowage::Store::open(npy, stowage::Mode::truncate, "npy");
    out.create("", {{"kind", "array"}, {"dtype", "float64"}, {"shape", {2, 3}}});
    const double v[6] = {1, 2, 3, 4, 5, 6};
    out.array("").write({0, 0}, {2, 3}, v);
    out.close();
  }
  CHECK(stowage::Store::open(npy, stowage::Mode::read, "npy").array("").read_all<double>() ==
        std::vector<double>{1, 2, 3, 4, 5, 6});
}

namespace {

// The pid of a child that was SIGKILLed (and reaped): no process has it now.
pid_t killed_pid() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(pid > 0);
  ::kill(pid, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  REQUIRE(WIFSIGNALED(st));
  return pid;
}

std::set<std::string> names_in(const fs::path& d) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(d)) out.insert(e.path().filename().string());
  return out;
}

}  // namespace

// Issue 30: temporaries of killed writers piled up (364 after 25 kills).
TEST_CASE(
    "storage: the first writer in a directory removes what dead writers left there, and nothing else") {
  test::TempDir tmp;
  const fs::path d = tmp / "node", j = tmp / "journaled";
  fs::create_directories(d);
  fs::create_directories(j);
  const std::string dead = std::to_string(killed_pid()), me = std::to_string(::getpid());
  const std::string gone_file = ".x.bin.stowage-tmp." + dead + ".0",
                    gone_dir = ".x.n5.stowage-tmp." + dead + ".3",
                    reused = ".y.bin.stowage-tmp." + me + ".8",
                    live = ".x.bin.stowage-tmp." + me + ".7",
                    old = ".x.bin.stowage-tmp." + dead + ".1.old", lock = ".x.bin.stowage-lock";
  for (const std::string& n : {gone_file, reused, live, old, lock}) test::write_file(d / n, "left");
  fs::create_directories(d / gone_dir / "sub");
  test::write_file(d / gone_dir / "sub" / "f", "left");
  // Changed an hour before this process started: its writer had our pid before us.
  fs::last_write_time(d / reused, fs::file_time_type::clock::now() - std::chrono::hours(1));
  sdk::Storage s = storage_for(d.string());
  s.write((d / "x.bin").string(), std::string("new"));
  CHECK(names_in(d) == std::set<std::string>{"x.bin", live, old, lock});
  // A directory holding a commit journal keeps them: recover() renames them.
  test::write_file(j / gone_file, "left");
  test::write_file(j / ".x.bin.stowage-commit", std::string(gone_file) + "\tx.bin\n");
  s.write((j / "z.bin").string(), std::string("new"));
  CHECK(names_in(j).count(gone_file) == 1);
  const std::string stray = ".w.bin.stowage-tmp." + dead + ".2";  // a dead writer's, in no journal
  test::write_file(j / stray, "left");
  CHECK(s.recover((j / "x.bin").string()));
  CHECK(test::read_file(j / "x.bin") == "left");
  CHECK(names_in(j) == std::set<std::string>{"x.bin", "z.bin"});  // recovered, then swept
  // A set committed over a killed writer's journal replaces it: what that
  // journal held back is swept once the new set is in place.
  const fs::path k = tmp / "replaced";
  fs::create_directories(k);
  test::write_file(k / gone_file, "left");
  test::write_file(k / ".x.bin.stowage-commit", std::string(gone_file) + "\tx.bin\n");
  std::vector<sdk::Staged> set;
  for (const char* name : {"x.bin", "y.bin"}) {
    set.push_back(s.stage((k / name).string()));
    set.back().write_at(0, "new", 3);
  }
  s.publish(set);
  CHECK(names_in(k) == std::set<std::string>{"x.bin", "y.bin"});
  CHECK(test::read_file(k / "x.bin") == "new");
}

// ---- versions and conditional puts (issue 31) ----------------------------------------

namespace {

// Runs `writers` processes that each put `key` conditionally on `expected`
// at once (a pipe is their starting gun); returns how many won.
int racing_processes(const sdk::Storage& s, const std::string& key,
                     const std::optional<sdk::Version>& expected, int writers) {
  int gun[2];
  REQUIRE(::pipe(gun) == 0);
  std::vector<pid_t> pids;
  for (int w = 0; w < writers; ++w) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(gun[1]);
      char c;
      (void)::read(gun[0], &c, 1);  // returns at EOF: the parent closed its end
      try {
        ::_exit(s.write_if(key, "process " + std::to_string(w), expected) ? 0 : 1);
      } catch (...) {
        ::_exit(2);
      }
    }
    REQUIRE(pid > 0);
    pids.push_back(pid);
  }
  ::close(gun[0]);
  ::close(gun[1]);
  int won = 0;
  for (pid_t pid : pids) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) != 2);
    won += WEXITSTATUS(st) == 0;
  }
  return won;
}

}  // namespace

TEST_CASE(
    "storage: file conditional puts racing from several processes: exactly one wins each round") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  const std::string key = (tmp / "manifest.json").string();
  CHECK(racing_processes(s, key, std::nullopt, 4) == 1);  // create-if-absent
  for (int round = 0; round < 5; ++round) {
    CAPTURE(round);
    const std::optional<sdk::Version> from = s.version(key);
    REQUIRE(from.has_value());
    CHECK(racing_processes(s, key, from, 4) == 1);
    CHECK(s.version(key) != from);
    CHECK(test::read_file(key).rfind("process ", 0) == 0);
  }
  CHECK(s.list(tmp.path().string()) == std::vector<std::string>{"manifest.json"});
  size_t hidden = 0;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    hidden += e.path().filename().string()[0] == '.';
  CHECK(hidden == 0);  // no temporary or lock file left
}

TEST_CASE(
    "storage: a file changed in place has a new version, so a put over the old one is refused") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  const std::string key = (tmp / "k").string();
  s.write(key, std::string("first"));
  const std::optional<sdk::Version> before = s.version(key);
  REQUIRE(before.has_value());
  CHECK(before->token.size() == 32);  // device, inode, size, mtime in ns
  test::write_file(key, "second!");   // same inode, another size and mtime
  CHECK(s.version(key) != before);
  CHECK_FALSE(s.write_if(key, "third", before));
  CHECK(test::read_file(key) == "second!");
}

TEST_CASE("storage: a memory key removed and written again never gets its old version back") {
  sdk::Storage s = storage_for("mem://versions");
  s.write("mem://versions/k", std::string("same"));
  const std::optional<sdk::Version> first = s.version("mem://versions/k");
  REQUIRE(first.has_value());
  s.remove("mem://versions/k");
  s.write("mem://versions/k", std::string("same"));
  CHECK(s.version("mem://versions/k") != first);
  CHECK_FALSE(s.write_if("mem://versions/k", "stale", first));
}

TEST_CASE(
    "storage: the host refuses a storage table built for another layout or claiming a part it lacks") {
  const stowage_plugin* p = stowage::Registry::global().load("storage", "memory");
  REQUIRE(p != nullptr);
  const auto* real = static_cast<const stowage_storage_vtable*>(p->vtable);
  CHECK(sdk::storage_table_problem(real, p->capabilities) == "");
  stowage_storage_vtable vt = *real;
  vt.abi = 0;  // the flat table had no abi field: it read as 0
  CHECK(sdk::storage_table_problem(&vt, p->capabilities) ==
        "storage ABI mismatch: built for storage ABI 1, this host speaks 2");
  vt = *real;
  vt.conditional = nullptr;
  CHECK(sdk::storage_table_problem(&vt, p->capabilities) ==
        "declares STOWAGE_CAP_CONDITIONAL but has no conditional part");
  CHECK(sdk::storage_table_problem(&vt, p->capabilities & ~STOWAGE_CAP_CONDITIONAL) == "");
  // A Storage over it asks the tables, not the bits: no conditional put.
  sdk::Storage s(&vt, stowage::Registry::global().storage("mem://x").handle, p->capabilities);
  CHECK(s.can_write());
  CHECK_FALSE(s.can_put_if());
  sdk::Staged f = s.stage("mem://x/k");
  CHECK(storage_conformance::code_of([&] { s.put_if(f, std::nullopt); }) == STOWAGE_UNSUPPORTED);
  vt = *real;
  vt.read = nullptr;
  CHECK(sdk::storage_table_problem(&vt, 0) ==
        "storage vtable has no read part (stat, read, read_into, list)");
}
