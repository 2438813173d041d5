// Storage::lock_key: one writer at a time per key, for read-modify-write
// (a chunk written in part, a shard), against threads of this process and
// other processes, on the "file" and "memory" backends alike.
#include "storage_checks.hpp"  // test::storage_for
#include "test_support.hpp"

#include <stowage/storage.hpp>

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace sdk = stowage::sdk;
namespace fs = std::filesystem;
using test::storage_for;

namespace {

// Threads each add 1 to a number kept in `key`, read, changed and written
// back under the key's lock: without the lock, increments are lost.
void check_increments(const sdk::Storage& s, const std::string& key) {
  constexpr int kThreads = 4, kEach = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        sdk::Lock turn = s.lock_key(key);
        std::optional<sdk::Bytes> old = s.read_if_exists(key);
        const long n = old ? std::stol(std::string(old->text())) : 0;
        std::this_thread::yield();  // widen the window a lost update needs
        s.write(key, std::to_string(n + 1));
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(std::string(s.read(key).text()) == std::to_string(kThreads * kEach));
}

}  // namespace

TEST_CASE("lock_key: threads changing one key in turn lose no update (file and memory)") {
  test::TempDir tmp;
  sdk::Storage file = storage_for(tmp.path().string());
  REQUIRE(file.can_lock_keys());
  check_increments(file, (tmp / "sub" / "counter").string());  // its directory does not exist yet
  // The lock's hidden file is gone once released, and never listed.
  CHECK(file.list((tmp / "sub").string()) == std::vector<std::string>{"counter"});
  CHECK(std::distance(fs::directory_iterator(tmp / "sub"), fs::directory_iterator()) == 1);

  sdk::Storage memory = storage_for("mem://key-lock-test");
  REQUIRE(memory.can_lock_keys());
  check_increments(memory, "mem://key-lock-test/counter");
}

TEST_CASE("lock_key: held against another process and another thread; try_only does not wait") {
  test::TempDir tmp;
  sdk::Storage s = storage_for(tmp.path().string());
  const std::string key = (tmp / "chunk").string();
  auto other_process_takes_it = [&] {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(s.lock_key(key, true).held() ? 0 : 1);
    int st = 0;
    ::waitpid(pid, &st, 0);
    REQUIRE(WIFEXITED(st));
    return WEXITSTATUS(st) == 0;
  };
  auto other_thread_takes_it = [&] {
    bool held = false;
    std::thread([&] { held = s.lock_key(key, true).held(); }).join();
    return held;
  };
  CHECK(other_process_takes_it());
  {
    sdk::Lock turn = s.lock_key(key);
    CHECK(turn.held());
    CHECK_FALSE(other_process_takes_it());
    CHECK_FALSE(other_thread_takes_it());
    CHECK_FALSE(fs::exists(tmp / "chunk"));  // locking writes nothing under the key itself
  }
  CHECK(other_process_takes_it());
  CHECK(other_thread_takes_it());
  CHECK(fs::is_empty(tmp.path()));
}
