// Storage backend "memory" (scheme mem://): files held in the process, one
// namespace per registry. For tests and host programs that build a dataset
// without touching a disk.
//
// A directory is a key prefix: "mem://a/b" is a directory when some file's
// key starts with "mem://a/b/" or make_directory() made it. Publishing and
// moving happen under one lock, so a set of files changes as one. A key's
// version is the value of one counter at its last publish (never reused).
#include <stowage/storage.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace stowage::sdk;
using Content = std::shared_ptr<const std::vector<uint8_t>>;

// A file's bytes and the generation that put them there.
struct Entry {
  Content content;
  uint64_t generation = 0;
};

std::string normalized(std::string_view key) {
  while (!key.empty() && key.back() == '/' && key.size() > 6) key.remove_suffix(1);
  return std::string(key);
}

bool is_under(const std::string& key, const std::string& dir) {
  return key.size() > dir.size() && key.compare(0, dir.size(), dir) == 0 && key[dir.size()] == '/';
}

// A lent file: the view keeps its bytes alive even if the key is replaced.
struct Lent {
  Content content;
  static void release(void* owner) { delete static_cast<Lent*>(owner); }
};

class MemoryStorage;

class StagedMemoryFile : public StagedBackendFile {
 public:
  explicit StagedMemoryFile(std::string key) : key(std::move(key)) {}
  // Writers at distinct offsets may come from several threads: a growth
  // moves the bytes, so every access holds the file's mutex.
  void write_at(uint64_t offset, const void* data, size_t size) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (offset + size > bytes.size()) bytes.resize(offset + size);
    std::copy_n(static_cast<const uint8_t*>(data), size,
                bytes.begin() + static_cast<ptrdiff_t>(offset));
  }
  uint64_t read_at(uint64_t offset, void* buf, uint64_t capacity) override {
    std::lock_guard<std::mutex> lock(mutex);
    const uint64_t begin = std::min<uint64_t>(offset, bytes.size());
    const uint64_t n = std::min<uint64_t>(capacity, bytes.size() - begin);
    std::copy_n(bytes.data() + begin, n, static_cast<uint8_t*>(buf));
    return n;
  }
  void resize(uint64_t size) override {
    std::lock_guard<std::mutex> lock(mutex);
    bytes.resize(size);
  }
  std::mutex mutex;
  std::string key;
  std::vector<uint8_t> bytes;
};

class MemoryStorage : public ReadableStorage,
                      public WritableStorage,
                      public RenamingStorage,
                      public LockingStorage,
                      public ConditionalStorage {
 public:
  MemoryStorage(const stowage_host*, std::string_view) {}

  KeyStat stat(std::string_view key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stat_locked(normalized(key));
  }

  stowage_view read(std::string_view key, uint64_t offset, uint64_t length, uint32_t) override {
    Content c = find(key);
    const uint64_t begin = std::min<uint64_t>(offset, c->size());
    const uint64_t n = std::min<uint64_t>(length, c->size() - begin);
    auto* owner = new Lent{std::move(c)};
    return stowage_view{owner->content->data() + begin, n, owner, Lent::release};
  }

  uint64_t read_into(std::string_view key, uint64_t offset, void* buf, uint64_t capacity) override {
    Content c = find(key);
    const uint64_t begin = std::min<uint64_t>(offset, c->size());
    const uint64_t n = std::min<uint64_t>(capacity, c->size() - begin);
    std::copy_n(c->data() + begin, n, static_cast<uint8_t*>(buf));
    return n;
  }

  std::vector<std::string> list(std::string_view key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string dir = normalized(key);
    if (!is_directory_locked(dir)) fail(STOWAGE_NOT_FOUND, dir + ": no such directory");
    std::set<std::string> names;
    auto add_child = [&](const std::string& k, bool is_file) {
      if (!is_under(k, dir)) return;
      std::string rest = k.substr(dir.size() + 1);
      size_t slash = rest.find('/');
      std::string name = slash == std::string::npos ? rest : rest.substr(0, slash);
      if (name.find(".stowage-tmp.") != std::string::npos) return;
      names.insert(slash == std::string::npos && is_file ? name : name + "/");
    };
    for (auto it = files_.lower_bound(dir + "/"); it != files_.end() && is_under(it->first, dir);
         ++it)
      add_child(it->first, true);
    for (auto it = directories_.lower_bound(dir + "/");
         it != directories_.end() && is_under(*it, dir); ++it)
      add_child(*it, false);
    return {names.begin(), names.end()};
  }

  std::unique_ptr<StagedBackendFile> stage(std::string_view key) override {
    return std::make_unique<StagedMemoryFile>(normalized(key));
  }

  void publish(std::vector<std::unique_ptr<StagedBackendFile>> files, uint32_t flags) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!(flags & STOWAGE_PUBLISH_REPLACE))
      for (auto& f : files) {
        const std::string& k = static_cast<StagedMemoryFile&>(*f).key;
        if (files_.count(k) || is_directory_locked(k)) invalid(k + ": exists");
      }
    for (auto& f : files) put_locked(static_cast<StagedMemoryFile&>(*f));
  }

  // Compared and put under the one mutex every publish takes, after the
  // key's lock_key holder (a read-modify-write) is done, as the file backend.
  bool publish_if(std::unique_ptr<StagedBackendFile> f, const std::string& expected,
                  uint32_t) override {
    auto& file = static_cast<StagedMemoryFile&>(*f);
    HeldKey turn(*this, file.key, false);
    std::lock_guard<std::mutex> lock(mutex_);
    const KeyStat now = stat_locked(file.key);
    if (expected.empty() ? now.kind != STOWAGE_ENTRY_ABSENT : now.version != expected) return false;
    put_locked(file);
    return true;
  }

  bool recover(std::string_view) override {
    return false;
  }  // a set is put under one mutex: never half done

  // One mutex per lock name, made on first use and kept (names are few).
  std::unique_ptr<BackendLock> lock(std::string_view key) override {
    std::shared_ptr<std::mutex> m;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      std::shared_ptr<std::mutex>& slot = locks_[normalized(key)];
      if (!slot) slot = std::make_shared<std::mutex>();
      m = slot;
    }
    return std::make_unique<NamedLock>(std::move(m));
  }

  // Keys held for a read-modify-write: a set and one condition, since
  // chunk keys are many and held briefly.
  std::unique_ptr<BackendLock> lock_key(std::string_view key, bool try_only) override {
    return std::make_unique<HeldKey>(*this, normalized(key), try_only);
  }

  void make_directory(std::string_view key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    directories_.insert(normalized(key));
  }

  std::string stage_directory(std::string_view key) override {
    std::string staging = normalized(key) + ".stowage-tmp." + std::to_string(counter_++);
    make_directory(staging);
    return staging;
  }

  void remove(std::string_view key, uint32_t flags) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string k = normalized(key);
    if (files_.erase(k)) return;
    if (!is_directory_locked(k)) fail(STOWAGE_NOT_FOUND, k + ": no such file or directory");
    if (!(flags & STOWAGE_REMOVE_RECURSIVE) && has_children_locked(k))
      invalid(k + ": directory not empty");
    remove_tree_locked(k);
  }

  // Every rename under one lock: a set changes as one.
  void move(const std::vector<std::pair<std::string, std::string>>& renames,
            uint32_t flags) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool replace = renames.size() > 1 || (flags & STOWAGE_PUBLISH_REPLACE);
    for (const auto& [from, to] : renames) {
      const std::string source = normalized(from), target = normalized(to);
      if (!files_.count(source) && !is_directory_locked(source))
        fail(STOWAGE_NOT_FOUND, source + ": no such file");
      if (!replace && (files_.count(target) || is_directory_locked(target)))
        invalid(target + ": exists");
    }
    for (const auto& [from, to] : renames) {
      const std::string target = normalized(to);
      files_.erase(target);
      remove_tree_locked(target);
      rekey_locked(normalized(from), target);
    }
  }

 private:
  Content find(std::string_view key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = files_.find(normalized(key));
    if (it == files_.end()) fail(STOWAGE_NOT_FOUND, std::string(key) + ": no such file");
    return it->second.content;
  }
  KeyStat stat_locked(const std::string& k) const {
    auto it = files_.find(k);
    if (it == files_.end())
      return {is_directory_locked(k) ? STOWAGE_ENTRY_DIRECTORY : STOWAGE_ENTRY_ABSENT, 0, ""};
    const uint64_t g = it->second.generation;
    return {STOWAGE_ENTRY_FILE, it->second.content->size(),
            std::string(reinterpret_cast<const char*>(&g), sizeof g)};
  }
  void put_locked(StagedMemoryFile& file) {
    files_[file.key] =
        Entry{std::make_shared<const std::vector<uint8_t>>(std::move(file.bytes)), ++generation_};
  }
  bool has_children_locked(const std::string& dir) const {
    auto f = files_.lower_bound(dir + "/");
    auto d = directories_.lower_bound(dir + "/");
    return (f != files_.end() && is_under(f->first, dir)) ||
           (d != directories_.end() && is_under(*d, dir));
  }
  bool is_directory_locked(const std::string& k) const {
    return directories_.count(k) || has_children_locked(k);
  }
  void remove_tree_locked(const std::string& dir) {
    directories_.erase(dir);
    for (auto it = files_.lower_bound(dir + "/"); it != files_.end() && is_under(it->first, dir);)
      it = files_.erase(it);
    for (auto it = directories_.lower_bound(dir + "/");
         it != directories_.end() && is_under(*it, dir);)
      it = directories_.erase(it);
  }
  // Renames a file, or a directory and everything under it.
  void rekey_locked(const std::string& source, const std::string& target) {
    auto moved = [&](const std::string& k) { return target + k.substr(source.size()); };
    if (auto it = files_.find(source); it != files_.end()) {
      files_[target] = it->second;
      files_.erase(it);
      return;
    }
    std::vector<std::pair<std::string, Entry>> files;
    for (auto it = files_.lower_bound(source + "/");
         it != files_.end() && is_under(it->first, source);) {
      files.emplace_back(moved(it->first), it->second);
      it = files_.erase(it);
    }
    std::vector<std::string> dirs{target};
    for (auto it = directories_.lower_bound(source + "/");
         it != directories_.end() && is_under(*it, source);) {
      dirs.push_back(moved(*it));
      it = directories_.erase(it);
    }
    directories_.erase(source);
    for (auto& [k, c] : files) files_[k] = c;
    directories_.insert(dirs.begin(), dirs.end());
  }

  struct NamedLock : BackendLock {
    explicit NamedLock(std::shared_ptr<std::mutex> m) : mutex(std::move(m)) { mutex->lock(); }
    ~NamedLock() override { mutex->unlock(); }
    bool held() const override { return true; }
    std::shared_ptr<std::mutex> mutex;
  };

  struct HeldKey : BackendLock {
    HeldKey(MemoryStorage& s, std::string k, bool try_only) : storage(s), key(std::move(k)) {
      std::unique_lock<std::mutex> lock(storage.keys_mutex_);
      if (try_only && storage.held_keys_.count(key)) return;
      storage.key_freed_.wait(lock, [&] { return storage.held_keys_.count(key) == 0; });
      storage.held_keys_.insert(key);
      taken = true;
    }
    ~HeldKey() override {
      if (!taken) return;
      {
        std::lock_guard<std::mutex> lock(storage.keys_mutex_);
        storage.held_keys_.erase(key);
      }
      storage.key_freed_.notify_all();
    }
    bool held() const override { return taken; }
    MemoryStorage& storage;
    std::string key;
    bool taken = false;
  };

  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<std::mutex>> locks_;
  std::mutex keys_mutex_;
  std::condition_variable key_freed_;
  std::set<std::string> held_keys_;
  std::map<std::string, Entry> files_;
  uint64_t generation_ = 0;  // under mutex_
  std::set<std::string> directories_;
  std::atomic<uint64_t> counter_{0};
};

const char* const kAliases[] = {"mem", nullptr};

}  // namespace

STOWAGE_DEFINE_STORAGE_PLUGIN(MemoryStorage, "memory", "1.0.0",
                              "files held in the process (mem://name/...)", "{}",
                              STOWAGE_CAP_READ | STOWAGE_CAP_THREADSAFE, kAliases)
