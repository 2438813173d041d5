// The storage conformance checks (stowage/storage.h): what every backend
// must do alike, part by part, as doctest CHECKs. A backend's own suite,
// ours or a third party's, runs them against its plugin as built:
//
//     sdk::Storage s = ...;                    // the backend, through its vtable
//     storage_conformance::check_storage(s, "myscheme://bucket/conformance");
//
// check_storage runs the read part always and the write, rename, lock and
// conditional parts where the backend has them (sdk::Storage::can). A
// read-only backend is given a served copy of read_fixture() under `root`
// first (tests/http does so with nginx). Needs doctest and the SDK headers
// only; each part's check is also callable on its own.
#pragma once

#include <stowage/storage.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace storage_conformance {

namespace sdk = stowage::sdk;

// The tree check_read_part expects under its root: key (relative) -> bytes.
inline const std::map<std::string, std::string>& read_fixture() {
  static const std::map<std::string, std::string> files = {
      {"a/b/x.bin", "hello world"}, {"a/y.bin", std::string("abc\0\0z", 6)}, {"top.txt", "top"}};
  return files;
}

// The status a call fails with; STOWAGE_OK when it does not.
inline stowage_status code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sdk::Error& e) {
    return e.code();
  }
  return STOWAGE_OK;
}

// The message a call fails with ("" when it does not).
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sdk::Error& e) {
    return e.what();
  }
  return "";
}

inline std::string text_of(const sdk::Storage& s, const std::string& key) {
  return std::string(s.read(key).text());
}

// ---- the read part: stat, ranged read, read_into, list ----------------------------
inline void check_read_part(const sdk::Storage& s, const std::string& root) {
  const std::string x = root + "/a/b/x.bin";
  CHECK(s.kind(root) == STOWAGE_ENTRY_DIRECTORY);
  CHECK(s.kind(root + "/a") == STOWAGE_ENTRY_DIRECTORY);
  CHECK(s.kind(root + "/none") == STOWAGE_ENTRY_ABSENT);
  uint64_t size = 0;
  CHECK(s.kind(x, &size) == STOWAGE_ENTRY_FILE);
  CHECK(size == 11);
  CHECK(s.size(x) == 11);

  CHECK(text_of(s, x) == "hello world");
  CHECK(s.read(x, 6, 3).text() == "wor");
  CHECK(s.read(x, 6, 100).text() == "world");  // cut at the end
  CHECK(s.read(x, 50).size() == 0);            // past the end: empty
  CHECK(s.map(x).text() == "hello world");
  CHECK(text_of(s, root + "/a/y.bin") == std::string("abc\0\0z", 6));

  char buf[8] = {};
  uint64_t got = 0, file_size = 0;
  CHECK(s.read_into_if_exists(x, 8, buf, sizeof buf, &got, &file_size));
  CHECK(got == 3);
  CHECK(std::string(buf, 3) == "rld");
  CHECK(file_size == 11);
  CHECK_FALSE(s.read_into_if_exists(root + "/a/b/none", 0, buf, sizeof buf, &got));
  // A scattered read: a "header" into one buffer, the rest into another.
  char head[5] = {}, rest[16] = {};
  stowage_buffer parts[2] = {{head, sizeof head}, {rest, sizeof rest}};
  CHECK(s.read_parts_if_exists(x, 0, parts, 2, &got, &file_size));
  CHECK(got == 11);
  CHECK(std::string(head, 5) + std::string(rest, 6) == "hello world");

  // A missing key is NOT_FOUND, naming the key as given.
  const std::string missing = root + "/missing.json";
  CHECK(code_of([&] { s.read(missing); }) == STOWAGE_NOT_FOUND);
  CHECK(message_of([&] { s.read(missing); }).find(missing) != std::string::npos);
  CHECK_FALSE(s.read_if_exists(missing).has_value());

  CHECK(s.list(root) == std::vector<std::string>{"a/", "top.txt"});
  CHECK(s.list(root + "/a") == std::vector<std::string>{"b/", "y.bin"});
  CHECK(code_of([&] { s.list(root + "/none"); }) == STOWAGE_NOT_FOUND);

  // A version, where the backend tells one, stays while the bytes do, and
  // differs between two keys; nothing absent or a directory has one.
  CHECK(s.version(x) == s.version(x));
  if (s.version(x)) CHECK(s.version(x) != s.version(root + "/top.txt"));
  CHECK_FALSE(s.version(root + "/none").has_value());
  CHECK_FALSE(s.version(root + "/a").has_value());
}

// Lays read_fixture() out under `root` through the write part.
inline void put_read_fixture(const sdk::Storage& s, const std::string& root) {
  s.make_directory(root);
  for (const auto& [key, bytes] : read_fixture()) s.write(root + "/" + key, bytes);
}

// ---- the write part: stage, publish (put), remove, make_directory -----------------
inline void check_write_part(const sdk::Storage& s, const std::string& root) {
  s.make_directory(root);
  CHECK(s.kind(root) == STOWAGE_ENTRY_DIRECTORY);
  s.make_directory(root);  // an existing directory is fine

  // Staged bytes are invisible, and unlisted, until published; dropped ones leave nothing.
  const std::string y = root + "/a/y.bin";
  s.write(root + "/a/b/x.bin", std::string("hello"));
  {
    sdk::Staged f = s.stage(y);
    f.append("abc", 3);
    f.write_at(5, "z", 1);  // a hole reads as zeros
    CHECK(s.kind(y) == STOWAGE_ENTRY_ABSENT);
    char back[8] = {};
    CHECK(f.read_at(1, back, sizeof back) == 5);
    CHECK(std::string(back, 5) == std::string("bc\0\0z", 5));
    CHECK(s.list(root + "/a") == std::vector<std::string>{"b/"});
    s.publish(f);
  }
  CHECK(text_of(s, y) == std::string("abc\0\0z", 6));
  {
    sdk::Staged dropped = s.stage(root + "/a/z.bin");
    dropped.append("q", 1);
  }
  CHECK(s.list(root + "/a") == std::vector<std::string>{"b/", "y.bin"});
  {
    sdk::Staged cut = s.stage(root + "/a/cut.bin");
    cut.append("123456", 6);
    cut.resize(2);
    s.publish(cut);
  }
  CHECK(text_of(s, root + "/a/cut.bin") == "12");

  // Publishing without REPLACE over an existing key is refused, naming it.
  {
    sdk::Staged f = s.stage(y);
    f.append("new", 3);
    CHECK(code_of([&] { s.publish(f, 0); }) == STOWAGE_INVALID_ARGUMENT);
  }
  CHECK(s.read(y).size() == 6);
  s.write(y, std::string("replaced"));
  CHECK(text_of(s, y) == "replaced");

  // A set is published as one.
  {
    std::vector<sdk::Staged> set;
    set.push_back(s.stage(root + "/set.data"));
    set.push_back(s.stage(root + "/set.index"));
    set[0].append("D", 1);
    set[1].append("I", 1);
    s.publish(set);
  }
  CHECK(text_of(s, root + "/set.data") + text_of(s, root + "/set.index") == "DI");

  // Staged writes at distinct offsets from several threads land whole.
  {
    sdk::Staged f = s.stage(root + "/parallel.bin");
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w)
      writers.emplace_back([&f, w] {
        std::string block(1000, static_cast<char>('a' + w));
        for (int i = 0; i < 25; ++i)
          f.write_at(uint64_t(i * 4 + w) * 1000, block.data(), block.size());
      });
    for (auto& t : writers) t.join();
    s.publish(f);
    sdk::Bytes all = s.read(root + "/parallel.bin");
    REQUIRE(all.size() == 100000);
    bool right = true;
    for (uint64_t i = 0; i < all.size(); ++i)
      right = right && all.data()[i] == 'a' + (i / 1000) % 4;
    CHECK(right);
  }

  // Removal: a file; a directory only when empty or recursive; a missing key is NOT_FOUND.
  s.remove(root + "/parallel.bin");
  CHECK(s.kind(root + "/parallel.bin") == STOWAGE_ENTRY_ABSENT);
  CHECK(code_of([&] { s.remove(root + "/a"); }) != STOWAGE_OK);
  s.remove(root + "/a", STOWAGE_REMOVE_RECURSIVE);
  CHECK(s.kind(root + "/a/b/x.bin") == STOWAGE_ENTRY_ABSENT);
  CHECK(code_of([&] { s.remove(root + "/a"); }) == STOWAGE_NOT_FOUND);
  s.remove_if_exists(root + "/a");
  CHECK(s.list(root) == std::vector<std::string>{"set.data", "set.index"});
}

// ---- the rename part: move, stage_directory, recover ------------------------------
inline void check_rename_part(const sdk::Storage& s, const std::string& root) {
  s.make_directory(root);
  // A tree built in a staging directory (hidden), then moved into place whole.
  const std::string staging = s.stage_directory(root + "/tree");
  s.write(staging + "/leaf", std::string("1"));
  CHECK(s.list(root).empty());
  s.move(staging, root + "/tree");
  CHECK(text_of(s, root + "/tree/leaf") == "1");
  const std::string second = s.stage_directory(root + "/tree");
  s.write(second + "/leaf", std::string("2"));
  CHECK(code_of([&] { s.move(second, root + "/tree"); }) == STOWAGE_INVALID_ARGUMENT);  // exists
  s.move(second, root + "/tree", STOWAGE_PUBLISH_REPLACE);
  CHECK(text_of(s, root + "/tree/leaf") == "2");
  CHECK(s.kind(second) == STOWAGE_ENTRY_ABSENT);  // the old tree is gone

  // Several renames as one change.
  s.write(root + "/m1", std::string("one"));
  s.write(root + "/m2", std::string("two"));
  s.move({{root + "/m1", root + "/n1"}, {root + "/m2", root + "/n2"}});
  CHECK(text_of(s, root + "/n1") + text_of(s, root + "/n2") == "onetwo");
  CHECK(s.list(root) == std::vector<std::string>{"n1", "n2", "tree/"});
  CHECK_FALSE(s.recover(root + "/n1"));  // nothing half done
}

// ---- the lock part: lock, lock_key ------------------------------------------------
inline void check_lock_part(const sdk::Storage& s, const std::string& root) {
  s.make_directory(root);
  // A lock excludes other holders until it is released.
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> holders;
  for (int h = 0; h < 4; ++h)
    holders.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        sdk::Lock l = s.lock(root);
        CHECK(l.held());
        int now = ++inside;
        most = std::max(most.load(), now);
        std::this_thread::yield();
        --inside;
      }
    });
  for (auto& t : holders) t.join();
  CHECK(most.load() == 1);

  // A key's lock: another holder's try comes back not held, then is free.
  const std::string key = root + "/locked.bin";
  {
    sdk::Lock held = s.lock_key(key);
    CHECK(held.held());
    bool other_held = true;
    std::thread([&] { other_held = s.lock_key(key, true).held(); }).join();
    CHECK_FALSE(other_held);
  }
  CHECK(s.lock_key(key, true).held());
  CHECK(s.list(root).empty());  // lock files, if any, are not entries
}

// ---- the conditional part: put over a version, or only where absent --------------
inline void check_conditional_part(const sdk::Storage& s, const std::string& root) {
  s.make_directory(root);
  const std::string key = root + "/cas.json";
  CHECK_FALSE(s.version(key).has_value());
  CHECK(s.write_if(key, "one", std::nullopt));  // absent: put
  CHECK(text_of(s, key) == "one");
  CHECK_FALSE(s.write_if(key, "two", std::nullopt));  // present: an absent-only put is refused
  CHECK(text_of(s, key) == "one");

  const std::optional<sdk::Version> v1 = s.version(key);
  REQUIRE(v1.has_value());
  CHECK(s.write_if(key, "two", v1));  // the version read: put
  CHECK(text_of(s, key) == "two");
  const std::optional<sdk::Version> v2 = s.version(key);
  REQUIRE(v2.has_value());
  CHECK(*v2 != *v1);
  CHECK_FALSE(s.write_if(key, "three", v1));  // a stale version: refused, nothing changes
  CHECK(text_of(s, key) == "two");
  CHECK(s.version(key) == v2);
  s.write(key, std::string("plain"));  // an unconditional put changes the version too
  CHECK(s.version(key) != v2);
  CHECK_FALSE(s.write_if(key, "four", v2));
  CHECK(s.list(root) == std::vector<std::string>{"cas.json"});  // nothing refused was left behind

  // A conditional put waits for the key's lock_key holder (a read-modify-write),
  // then finds the version that holder published and changes nothing.
  if (s.can_lock_keys()) {
    const std::optional<sdk::Version> read = s.version(key);
    std::atomic<bool> done{false};
    bool put = true;
    std::thread late;
    {
      sdk::Lock held = s.lock_key(key);
      late = std::thread([&] {
        put = s.write_if(key, "late", read);
        done = true;
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      CHECK_FALSE(done.load());
      s.write(key, std::string("holder"));
    }
    late.join();
    CHECK_FALSE(put);
    CHECK(text_of(s, key) == "holder");
  }

  // Writers racing from one version: exactly one wins, and its bytes are there.
  for (int round = 0; round < 10; ++round) {
    const std::optional<sdk::Version> from = s.version(key);
    std::atomic<bool> go{false};
    std::atomic<int> winners{0}, winner{-1};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w)
      writers.emplace_back([&, w] {
        while (!go) std::this_thread::yield();
        if (s.write_if(key, "writer " + std::to_string(w), from)) {
          ++winners;
          winner = w;
        }
      });
    go = true;
    for (auto& t : writers) t.join();
    CHECK(winners.load() == 1);
    CHECK(text_of(s, key) == "writer " + std::to_string(winner.load()));
  }
}

// ---- all of it ----------------------------------------------------------------------

// Every part the backend has, each under a folder of its own below `root`.
// A backend without a write part must serve read_fixture() under
// root + "/read" already; its writes must be refused as read only.
inline void check_storage(const sdk::Storage& s, const std::string& root) {
  const bool writes = s.can_write();
  if (writes) put_read_fixture(s, root + "/read");
  check_read_part(s, root + "/read");
  if (!writes) {
    const std::string key = root + "/read/new.bin";
    CHECK(code_of([&] { s.write(key, std::string("x")); }) == STOWAGE_UNSUPPORTED);
    CHECK(message_of([&] { s.write(key, std::string("x")); }).find("read only") !=
          std::string::npos);
    CHECK(code_of([&] { s.remove(root + "/read/top.txt"); }) == STOWAGE_UNSUPPORTED);
    CHECK(s.kind(key) == STOWAGE_ENTRY_ABSENT);
    CHECK_FALSE(s.can_rename());
    CHECK_FALSE(s.can_put_if());
    return;
  }
  check_write_part(s, root + "/write");
  if (s.can_rename()) check_rename_part(s, root + "/rename");
  if (s.can_lock_keys()) check_lock_part(s, root + "/lock");
  if (s.can_put_if()) check_conditional_part(s, root + "/conditional");
}

}  // namespace storage_conformance
