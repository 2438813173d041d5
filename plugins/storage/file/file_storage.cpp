// Storage backend "file": keys are paths on the local file system (as the
// user wrote them; a "file://" prefix is accepted and dropped).
//
// Every way stowage writes a local file lives here, once:
//   - a file is written under a hidden temporary name beside its key and
//     renamed into place (readers see the old bytes or the new, never a mix);
//   - several files are published together through a journal beside the
//     first (".<name>.stowage-commit": the commit point), whose renames a
//     killed writer's successor completes (recover);
//   - a directory is replaced in one renameat2(RENAME_EXCHANGE);
//   - a conditional put compares the key's version (device, inode, size,
//     mtime in ns) and renames under the key's flock, race-free between
//     processes.
// Reads a format keeps (STOWAGE_READ_KEEP) are memory maps, so datg, Daf and
// BPCells parse their files in place.
#include <stowage/storage.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>     // renameat2, RENAME_EXCHANGE
#include <sys/file.h>  // flock
#include <sys/mman.h>
#include <sys/stat.h>
#include <signal.h>   // kill(pid, 0)
#include <sys/uio.h>  // preadv
#include <climits>    // IOV_MAX
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

using namespace stowage::sdk;

[[noreturn]] void io_fail(const std::string& path, const std::string& what, int e) {
  if (e == ENOENT) fail(STOWAGE_NOT_FOUND, path + ": no such file or directory");
  fail(STOWAGE_IO, path + ": " + what + ": " + std::strerror(e));
}

std::string path_of(std::string_view key) {
  if (key.substr(0, 7) == "file://") key.remove_prefix(7);
  return std::string(key);
}

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// An open descriptor that closes itself.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd = std::exchange(o.fd, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Only ENOENT is an absent key (NOT_FOUND, which a format may read as a
// chunk not stored); a directory on the path that is a file (ENOTDIR) is a
// broken tree, an error naming the key, as EACCES and EIO are.
[[noreturn]] void open_fail(const std::string& path, int e) {
  if (e == ENOTDIR) fail(STOWAGE_IO, path + ": cannot open: a directory on its path is a file");
  io_fail(path, "cannot open", e);
}

// A read that found a directory where a file should be.
[[noreturn]] void read_fail(const std::string& path, int e) {
  if (e == EISDIR) fail(STOWAGE_IO, path + ": is a directory, not a file");
  io_fail(path, "read failed", e);
}

Fd open_file(const std::string& path, int flags, mode_t mode = 0644) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) open_fail(path, errno);
  return Fd(fd);
}

// The size of an open file; a directory is an error naming the key.
uint64_t file_size(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) io_fail(path, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) read_fail(path, EISDIR);
  return static_cast<uint64_t>(st.st_size);
}

// pread until `capacity` bytes or the end of the file; returns how many.
uint64_t read_at(int fd, void* buf, uint64_t capacity, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(buf);
  uint64_t done = 0;
  while (done < capacity) {
    ssize_t r = ::pread(fd, p + done, capacity - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      read_fail(path, errno);
    }
    if (r == 0) break;
    done += static_cast<uint64_t>(r);
  }
  return done;
}

void write_at(int fd, const void* data, size_t size, uint64_t offset, const std::string& path) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t w = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      io_fail(path, "write failed", errno);
    }
    p += w;
    size -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

// ---- lent bytes ------------------------------------------------------------------

struct HeapBytes {
  std::vector<uint8_t> bytes;
  static void release(void* owner) { delete static_cast<HeapBytes*>(owner); }
};

struct MappedBytes {
  void* base;
  size_t length;
  int fd = -1;  // kept open for view_size (STOWAGE_READ_WATCH), else -1
  static void release(void* owner) {
    auto* m = static_cast<MappedBytes*>(owner);
    ::munmap(m->base, m->length);
    if (m->fd >= 0) ::close(m->fd);
    delete m;
  }
};

// ---- temporary names ------------------------------------------------------------

constexpr size_t kNameMax = 255;  // bytes in one file name (NAME_MAX of Linux file systems)

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The one place hidden names are built: ".<base><suffix>", with `spare`
// bytes left for a later suffix (".old"). A base too long for NAME_MAX is
// cut to a prefix plus a hash of the whole, so the name stays unique.
std::string hidden_name(const std::string& base, const std::string& suffix, size_t spare = 0) {
  const size_t room = kNameMax - spare - 1 - suffix.size();
  if (base.size() <= room) return "." + base + suffix;
  char hash[18];
  std::snprintf(hash, sizeof hash, "~%016llx", static_cast<unsigned long long>(fnv1a(base)));
  return "." + base.substr(0, room - 17) + hash + suffix;
}

// A hidden name beside `path`, unique in this process and across processes
// (pid), recognisable (".stowage-tmp") so list() leaves it out.
std::string temp_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string suffix =
      ".stowage-tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  return dir + hidden_name(base, suffix, 4);  // 4: replace_atomically's ".old"
}

// A killed writer can leave a temporary whose pid this process now has (a
// restarted container starts pids at 1 again): then the next name is used.
// Errors name `path`, the key the user gave, never the temporary.
template <class Make>
std::string first_free_temp_name(const std::string& shown, const std::string& path, Make&& make) {
  for (int attempt = 0;; ++attempt) {
    std::string temp = temp_path_for(path);
    if (make(temp)) return temp;
    int e = errno;
    if (e == EINTR || (e == EEXIST && attempt < 10000)) continue;
    io_fail(shown, "cannot create a staged file beside it", e);
  }
}

// ---- what killed writers left ------------------------------------------------------
//
// A writer killed with SIGKILL leaves its staged files and directories
// (".<name>.stowage-tmp.<pid>.<n>"). The first stage into a directory in a
// process removes those whose writer is gone: no process has the pid, or the
// one that has it started after the entry last changed (its pid was reused,
// as after a container restart). Left alone: ".old" entries (without
// RENAME_EXCHANGE one may be the only copy), lock files, journals, and all
// temporaries of a directory holding a journal (recover() renames them).

// The pid a staged name carries, or 0 when `name` is not one (or is ".old").
pid_t staged_pid(const std::string& name) {
  const size_t at = name.rfind(".stowage-tmp.");
  if (name.empty() || name[0] != '.' || at == std::string::npos) return 0;
  const std::string rest = name.substr(at + 13);  // "<pid>.<n>"
  const size_t dot = rest.find('.');
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 18 &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot == std::string::npos || !digits(rest.substr(0, dot)) || !digits(rest.substr(dot + 1)))
    return 0;
  const long long pid = std::stoll(rest.substr(0, dot));
  return pid > 0 && pid <= INT_MAX ? static_cast<pid_t>(pid) : 0;
}

// When process `pid` started, in seconds since the epoch; 0 if unknown.
double process_start(pid_t pid) {
  static const long long boot = [] {  // /proc/stat's btime
    std::ifstream in("/proc/stat");
    std::string word;
    long long value = 0;
    while (in >> word)
      if (word == "btime" && in >> value) return value;
    return 0LL;
  }();
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (boot == 0 || !std::getline(in, line)) return 0;
  const size_t paren = line.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream fields(line.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field;
       ++i)  // field 22: start time, in clock ticks after boot
    if (i == 22) return double(boot) + std::stod(field) / double(::sysconf(_SC_CLK_TCK));
  return 0;
}

// Whether the writer that made an entry last changed at `changed` is gone.
bool writer_gone(pid_t pid, time_t changed) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  const double started = process_start(pid);
  return started > 0 && double(changed) + 2 < started;  // 2 s: btime is rounded to seconds
}

// Removes what writers now gone left in `dir` ("" or ending in '/'); best effort.
void remove_dead_temporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (!d) return;
  std::vector<std::string> gone;
  bool journal = false;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 15 && name.compare(name.size() - 15, 15, ".stowage-commit") == 0)
      journal = true;
    const pid_t pid = staged_pid(name);
    struct stat st;
    if (pid == 0 || ::lstat((dir + name).c_str(), &st) != 0) continue;
    if (writer_gone(pid, st.st_mtime)) gone.push_back(name);
  }
  ::closedir(d);
  if (journal) return;  // its temporaries are the journal's until recover() runs
  for (const std::string& name : gone) {
    std::error_code ec;
    std::filesystem::remove_all(dir + name, ec);
  }
}

void make_directories(const std::string& path) {
  if (path.empty()) return;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
  size_t slash = path.find_last_of('/', path.size() - (path.back() == '/' ? 2 : 1));
  if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    io_fail(path, "cannot create directory", errno);
}

// ---- one writer at a time ----------------------------------------------------------
//
// An exclusive flock(2) on a directory, held for the object's lifetime, so
// that processes publishing into one directory take turns. Advisory,
// released by the kernel when the process dies. A file system that refuses
// flock (ENOLCK, EOPNOTSUPP) holds nothing and the caller goes on.
class DirectoryLock : public BackendLock {
 public:
  explicit DirectoryLock(const std::string& dir) {
    const std::string path = dir.empty() ? "." : dir;
    fd_ = Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd_.fd < 0) io_fail(path, "cannot open directory to lock it", errno);
    while (::flock(fd_.fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      if (e == ENOLCK || e == EOPNOTSUPP || e == EINVAL) {
        held_ = false;
        break;
      }
      io_fail(path, "cannot lock directory", e);
    }
  }
  bool held() const override { return held_; }

 private:
  Fd fd_;
  bool held_ = true;
};

// An exclusive flock(2) on a hidden file beside one key (which may not exist
// yet): the lock a read-modify-write of that key holds from its read to its
// publish. The file is removed when released; a waiter that got the lock of
// a file removed meanwhile sees another inode at the path and tries again,
// so two writers never hold "the same" lock on two files.
class KeyLock : public BackendLock {
 public:
  KeyLock(const std::string& key_path, bool try_only) : path_(lock_path_for(key_path)) {
    for (bool made_parents = false;;) {
      fd_ = Fd(::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
      if (fd_.fd < 0 && errno == ENOENT && !made_parents) {
        make_directories(directory_of(path_));  // the key's directory may come with its first write
        made_parents = true;
        continue;
      }
      if (fd_.fd < 0) io_fail(key_path, "cannot create its lock file", errno);
      if (!take(key_path, try_only) || same_file()) return;
      fd_.reset();  // its holder removed it after we opened it: lock the new one
    }
  }
  ~KeyLock() override {
    if (held_)
      ::unlink(path_.c_str());  // before the descriptor closes: no one holds a removed file's lock
  }
  bool held() const override { return held_; }

 private:
  static std::string lock_path_for(const std::string& path) {
    const std::string dir = directory_of(path);
    return dir + hidden_name(path.substr(dir.size()), ".stowage-lock");  // fits NAME_MAX
  }
  // False when not held: busy with try_only, or a file system refusing flock.
  bool take(const std::string& key_path, bool try_only) {
    while (::flock(fd_.fd, LOCK_EX | (try_only ? LOCK_NB : 0)) != 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (e == EWOULDBLOCK || e == ENOLCK || e == EOPNOTSUPP || e == EINVAL) return held_ = false;
      io_fail(key_path, "cannot lock", e);
    }
    return held_ = true;
  }
  bool same_file() {
    struct stat open_one, named;
    if (::fstat(fd_.fd, &open_one) != 0 || ::stat(path_.c_str(), &named) != 0) return held_ = false;
    return held_ = open_one.st_dev == named.st_dev && open_one.st_ino == named.st_ino;
  }
  std::string path_;
  Fd fd_;
  bool held_ = false;
};

// ---- staged files ------------------------------------------------------------------

class StagedFile : public StagedBackendFile {
 public:
  // `shown`: how messages name it (the journal of a set names its first key).
  explicit StagedFile(std::string final_path, std::string shown = "")
      : final_(std::move(final_path)), shown_(shown.empty() ? final_ : std::move(shown)) {
    // Parent directories are made on the first ENOENT, not stat'ed each
    // time: a chunk write is one open when its directory exists.
    bool made_parents = false;
    temp_ = first_free_temp_name(shown_, final_, [&](const std::string& t) {
      int fd = ::open(t.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 && errno == ENOENT && !made_parents) {
        make_directories(directory_of(final_));
        made_parents = true;
        fd = ::open(t.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      }
      if (fd < 0) return false;
      fd_ = Fd(fd);
      return true;
    });
  }
  ~StagedFile() override {
    fd_.reset();
    if (!handed_over_) ::unlink(temp_.c_str());
  }
  void write_at(uint64_t offset, const void* data, size_t size) override {
    ::write_at(fd_.fd, data, size, offset, shown_);
  }
  uint64_t read_at(uint64_t offset, void* buf, uint64_t capacity) override {
    return ::read_at(fd_.fd, buf, capacity, offset, shown_);
  }
  void resize(uint64_t size) override {
    while (::ftruncate(fd_.fd, static_cast<off_t>(size)) != 0)
      if (errno != EINTR) io_fail(shown_, "cannot resize", errno);
  }
  // Flushes and closes the temporary; from here on it is the publisher's
  // (or, after a crash, a journal's) to rename.
  void finish(bool durable) {
    if (durable && ::fsync(fd_.fd) != 0) io_fail(shown_, "fsync failed", errno);
    int fd = std::exchange(fd_.fd, -1);
    if (::close(fd) != 0 && errno != EINTR) io_fail(shown_, "close failed", errno);
  }
  void hand_over() { handed_over_ = true; }
  const std::string& temp() const { return temp_; }
  const std::string& final_path() const { return final_; }
  const std::string& shown() const { return shown_; }

 private:
  std::string final_, shown_, temp_;
  Fd fd_;
  bool handed_over_ = false;
};

// Renames `made` to `final_path`, failing with INVALID_ARGUMENT "exists" if
// something has that name: atomically where the file system has
// RENAME_NOREPLACE, else checked just before the rename.
void rename_no_replace(const std::string& made, const std::string& final_path) {
  if (::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE) == 0)
    return;
  int e = errno;
  struct stat st;
  if (e == EINVAL || e == ENOSYS || e == ENOTSUP) {
    if (::lstat(final_path.c_str(), &st) != 0 && ::rename(made.c_str(), final_path.c_str()) == 0)
      return;
    e = ::lstat(final_path.c_str(), &st) == 0 ? EEXIST : errno;
  }
  if (e == EEXIST) invalid(final_path + ": exists");
  io_fail(final_path, "cannot put it in place", e);
}

// Puts a finished file or directory `made` at `final_path` so that a crash
// leaves the old entry or the new one under that name, never neither: a
// plain rename when nothing is there or over a file, else one exchange
// (RENAME_EXCHANGE). File systems without the exchange (NFS) get the old
// entry moved aside first, a moment with neither. Returns where the old
// entry now is, for the caller to remove ("" when there was none).
std::string replace_atomically(const std::string& made, const std::string& final_path) {
  struct stat st;
  const bool exists = ::lstat(final_path.c_str(), &st) == 0;
  if (!exists || !S_ISDIR(st.st_mode)) {
    if (::rename(made.c_str(), final_path.c_str()) != 0)
      io_fail(final_path, "cannot rename into place", errno);
    return "";
  }
  if (::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, final_path.c_str(), RENAME_EXCHANGE) == 0)
    return made;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    io_fail(final_path, "cannot exchange the old version with the new one", errno);
  std::string old = temp_path_for(final_path) + ".old";
  if (::rename(final_path.c_str(), old.c_str()) != 0)
    io_fail(final_path, "cannot move the old version aside", errno);
  if (::rename(made.c_str(), final_path.c_str()) != 0) {
    int e = errno;
    (void)::rename(old.c_str(), final_path.c_str());  // put the old one back
    io_fail(final_path, "cannot rename the new version into place", e);
  }
  return old;
}

// `shown` is how a message names it: the user's key, not a staged name.
void remove_tree(const std::string& path, const std::string& shown) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) io_fail(shown, "cannot remove", ec.value());
}

// ---- several files published together (the commit journal) ------------------------
//
// POSIX renames one file at a time, so a set is journaled: every file is
// complete under its temporary name; a journal beside the first file lists
// "<temporary>\t<final>" per line, relative to its directory (the journal
// appearing is the commit point); the renames run; the journal is deleted.
// The format is the one stowage has written since the first release.

std::string journal_for(const std::string& first_path) {
  size_t slash = first_path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : first_path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? first_path : first_path.substr(slash + 1);
  return dir + hidden_name(base, ".stowage-commit");
}

using Renames = std::vector<std::pair<std::string, std::string>>;  // temporary, final; relative

// A journal names files relative to its own directory.
std::string relative_to(const std::string& dir, const std::string& path) {
  if (!dir.empty() && path.compare(0, dir.size(), dir) == 0) return path.substr(dir.size());
  if (dir.empty() && path.find('/') == std::string::npos) return path;
  invalid(path + ": a file set must live beside its journal in " +
          (dir.empty() ? "the current directory" : dir));
}

// A journal's names stay below its directory: relative, no "..", no empty parts.
bool is_plain_relative(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (size_t at = 0; at <= path.size();) {
    size_t end = std::min(path.find('/', at), path.size());
    std::string_view part(path.data() + at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return true;
}

// Runs a journal's renames (a temporary already gone was renamed before)
// and removes the journal.
void apply_renames(const std::string& dir, const Renames& renames, const std::string& journal) {
  for (const auto& [temp, final_name] : renames) {
    std::string from = dir + temp, to = dir + final_name;
    if (::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
      io_fail(to, "cannot put it in place (the next open of the dataset finishes it)", errno);
  }
  if (::unlink(journal.c_str()) != 0 && errno != ENOENT)
    io_fail(dir.empty() ? "." : dir, "cannot remove its commit journal", errno);
}

Renames parse_journal(const std::string& journal, const std::string& text) {
  Renames renames;
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) corrupt(journal + ": commit journal does not end with a newline");
    std::string line = text.substr(at, eol - at);
    at = eol + 1;
    size_t tab = line.find('\t');
    if (tab == std::string::npos || !is_plain_relative(line.substr(0, tab)) ||
        !is_plain_relative(line.substr(tab + 1)))
      corrupt(journal + ": malformed commit journal line '" + line + "'");
    renames.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return renames;
}

std::string read_small_file(const std::string& path, uint64_t max_size) {
  Fd fd = open_file(path, O_RDONLY);
  uint64_t size = file_size(fd.fd, path);
  if (size > max_size)
    corrupt(path + ": file is " + std::to_string(size) + " bytes, more than the " +
            std::to_string(max_size) + " allowed");
  std::string text(size, '\0');
  if (read_at(fd.fd, text.data(), size, 0, path) != size)
    corrupt(path + ": file shrank while being read");
  return text;
}

// ---- the backend -----------------------------------------------------------------------

class FileStorage : public ReadableStorage,
                    public WritableStorage,
                    public RenamingStorage,
                    public LockingStorage,
                    public ConditionalStorage {
 public:
  FileStorage(const stowage_host*, std::string_view) {}

  KeyStat stat(std::string_view key) override { return stat_path(path_of(key)); }

  stowage_view read(std::string_view key, uint64_t offset, uint64_t length,
                    uint32_t flags) override {
    const std::string path = path_of(key);
    Fd fd = open_file(path, O_RDONLY);
    const uint64_t size = file_size(fd.fd, path);
    const uint64_t begin = std::min(offset, size);
    const uint64_t n = std::min(length, size - begin);
    if (n == 0) return stowage_view{};
    if (flags & STOWAGE_READ_KEEP) {
      stowage_view v = map(fd.fd, path, begin, n);
      // Watched: the map keeps the descriptor, so view_size is one fstat.
      if (flags & STOWAGE_READ_WATCH)
        static_cast<MappedBytes*>(v.owner)->fd = std::exchange(fd.fd, -1);
      return v;
    }
    auto* owner = new HeapBytes;
    try {
      owner->bytes.resize(n);
      if (read_at(fd.fd, owner->bytes.data(), n, begin, path) != n)
        corrupt(path + ": file shrank while being read");
    } catch (...) {
      delete owner;
      throw;
    }
    return stowage_view{owner->bytes.data(), n, owner, HeapBytes::release};
  }

  uint64_t read_into(std::string_view key, uint64_t offset, void* buf, uint64_t capacity) override {
    stowage_buffer part{buf, capacity};
    return read_parts(key, offset, &part, 1, nullptr);
  }

  // One open, one fstat (only when asked) and one preadv: an N5 raw chunk's
  // header and payload in one call.
  uint64_t read_parts(std::string_view key, uint64_t offset, const stowage_buffer* parts,
                      size_t count, uint64_t* file_size) override {
    const std::string path = path_of(key);
    int fd;
    do {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      if (errno == ENOENT) fail(STOWAGE_NOT_FOUND, path + ": no such file");
      open_fail(path, errno);
    }
    Fd owned(fd);
    if (file_size) *file_size = ::file_size(fd, path);
    std::vector<iovec> rest;
    for (size_t i = 0; i < count; ++i)
      if (parts[i].size) rest.push_back(iovec{parts[i].data, static_cast<size_t>(parts[i].size)});
    uint64_t got = 0;
    for (size_t first = 0; first < rest.size();) {
      ssize_t r = ::preadv(fd, rest.data() + first,
                           static_cast<int>(std::min<size_t>(rest.size() - first, IOV_MAX)),
                           static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        read_fail(path, errno);
      }
      if (r == 0) break;
      got += static_cast<uint64_t>(r);
      for (size_t n = static_cast<size_t>(r);
           n > 0 && first < rest.size();) {  // skip what was filled
        size_t take = std::min(n, rest[first].iov_len);
        rest[first].iov_base = static_cast<char*>(rest[first].iov_base) + take;
        rest[first].iov_len -= take;
        n -= take;
        if (rest[first].iov_len == 0) ++first;
      }
    }
    return got;
  }

  std::vector<std::string> list(std::string_view key) override {
    const std::string path = path_of(key);
    DIR* dir = ::opendir(path.empty() ? "." : path.c_str());
    if (!dir) {
      if (errno == ENOTDIR) fail(STOWAGE_NOT_FOUND, path + ": not a directory");
      io_fail(path, "cannot list", errno);
    }
    std::vector<std::string> names;
    const std::string prefix = path.empty() || path.back() == '/' ? path : path + "/";
    while (dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name == "." || name == ".." || is_staging_name(name)) continue;
      std::optional<bool> directory = entry_is_directory(prefix + name, e->d_type);
      if (directory) names.push_back(*directory ? name + "/" : name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::unique_ptr<StagedBackendFile> stage(std::string_view key) override {
    std::string path = path_of(key);
    sweep_once(directory_of(path));
    return std::make_unique<StagedFile>(std::move(path));
  }

  void publish(std::vector<std::unique_ptr<StagedBackendFile>> files, uint32_t flags) override {
    const bool durable = flags & STOWAGE_PUBLISH_DURABLE;
    for (auto& f : files) static_cast<StagedFile&>(*f).finish(durable);
    if (files.size() == 1) return publish_one(static_cast<StagedFile&>(*files[0]), flags);
    if (files.empty()) return;
    publish_set(files, durable);
  }

  // Under the key's lock: no other conditional put or lock_key holder can
  // change the key between the comparison and the rename.
  bool publish_if(std::unique_ptr<StagedBackendFile> f, const std::string& expected,
                  uint32_t flags) override {
    auto& file = static_cast<StagedFile&>(*f);
    KeyLock turn(file.final_path(), false);
    if (!turn.held())
      unsupported(file.shown() + ": cannot put conditionally: this file system refuses flock");
    const KeyStat now = stat_path(file.final_path());
    if (expected.empty() ? now.kind != STOWAGE_ENTRY_ABSENT : now.version != expected) return false;
    file.finish(flags & STOWAGE_PUBLISH_DURABLE);
    publish_one(file, STOWAGE_PUBLISH_REPLACE);
    return true;
  }

  bool recover(std::string_view key) override {
    const std::string first = path_of(key), journal = journal_for(first);
    struct stat st;
    if (::lstat(journal.c_str(), &st) != 0) return false;
    DirectoryLock turn(directory_of(first));  // not while a writer commits
    std::string text;
    try {
      text = read_small_file(journal, 1u << 20);
    } catch (const Error& e) {
      if (e.code() == STOWAGE_NOT_FOUND) return false;  // another process finished first
      throw;
    }
    apply_renames(directory_of(first), parse_journal(journal, text), journal);
    remove_dead_temporaries(directory_of(first));  // the journal held back their sweep
    return true;
  }

  std::unique_ptr<BackendLock> lock(std::string_view key) override {
    return std::make_unique<DirectoryLock>(path_of(key));
  }

  std::unique_ptr<BackendLock> lock_key(std::string_view key, bool try_only) override {
    return std::make_unique<KeyLock>(path_of(key), try_only);
  }

  void make_directory(std::string_view key) override { make_directories(path_of(key)); }

  std::string stage_directory(std::string_view key) override {
    const std::string path = path_of(key);
    make_directories(directory_of(path));
    sweep_once(directory_of(path));
    return first_free_temp_name(path, path,
                                [](const std::string& t) { return ::mkdir(t.c_str(), 0755) == 0; });
  }

  void remove(std::string_view key, uint32_t flags) override {
    const std::string path = path_of(key);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) io_fail(path, "cannot remove", errno);
    if (!S_ISDIR(st.st_mode)) {
      if (::unlink(path.c_str()) != 0) io_fail(path, "cannot remove", errno);
    } else if (flags & STOWAGE_REMOVE_RECURSIVE) {
      remove_tree(path, path);
    } else if (::rmdir(path.c_str()) != 0) {
      io_fail(path, "cannot remove directory", errno);
    }
  }

  bool view_size(const stowage_view& view, uint64_t* size) override {
    if (view.release != MappedBytes::release) return false;  // not a map of ours
    const auto* m = static_cast<const MappedBytes*>(view.owner);
    if (m->fd < 0) return false;  // mapped without STOWAGE_READ_WATCH
    struct stat st;
    if (::fstat(m->fd, &st) != 0) io_fail("a mapped file", "cannot stat", errno);
    *size = static_cast<uint64_t>(st.st_size);
    return true;
  }

  void move(const std::vector<std::pair<std::string, std::string>>& renames,
            uint32_t flags) override {
    if (renames.size() > 1) {
      std::vector<std::pair<std::string, std::string>> paths;
      for (const auto& [from, to] : renames) paths.emplace_back(path_of(from), path_of(to));
      return commit_renames(paths, flags & STOWAGE_PUBLISH_DURABLE);
    }
    const std::string source = path_of(renames[0].first), target = path_of(renames[0].second);
    if (!(flags & STOWAGE_PUBLISH_REPLACE)) return rename_no_replace(source, target);
    std::string old = replace_atomically(source, target);
    if (!old.empty()) remove_tree(old, target);
  }

 private:
  // Removes what killed writers left in `dir`, once per directory: the
  // first writer there pays one readdir, later ones nothing.
  void sweep_once(const std::string& dir) {
    {
      std::lock_guard<std::mutex> lock(swept_mutex_);
      if (swept_.size() >= 65536) swept_.clear();  // bounded: a directory may be swept again
      if (!swept_.insert(dir).second) return;
    }
    remove_dead_temporaries(dir);
  }

  std::mutex swept_mutex_;
  std::unordered_set<std::string> swept_;

  // A file's version: what changes when it is put again (a new inode, by
  // the rename) or changed in place (size, mtime).
  static KeyStat stat_path(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return {STOWAGE_ENTRY_ABSENT, 0, ""};
      io_fail(path, "cannot stat", errno);
    }
    if (S_ISDIR(st.st_mode)) return {STOWAGE_ENTRY_DIRECTORY, 0, ""};
    const uint64_t fields[4] = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                                static_cast<uint64_t>(st.st_size),
                                static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
                                    static_cast<uint64_t>(st.st_mtim.tv_nsec)};
    return {STOWAGE_ENTRY_FILE, static_cast<uint64_t>(st.st_size),
            std::string(reinterpret_cast<const char*>(fields), sizeof fields)};
  }

  // Whether a listed entry is a directory; nullopt for a symbolic link to a
  // directory, which list() leaves out: a walk never follows one, so it
  // cannot loop (a link to an ancestor) or leave the tree (a link to /usr).
  // A link to a file is a file; a node opened by its path opens through links.
  static std::optional<bool> entry_is_directory(const std::string& path, unsigned char type) {
    if (type != DT_UNKNOWN && type != DT_LNK) return type == DT_DIR;
    struct stat st;
    if (type == DT_UNKNOWN && ::lstat(path.c_str(), &st) == 0 && !S_ISLNK(st.st_mode))
      return S_ISDIR(st.st_mode);
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return std::nullopt;
    return false;  // a link to a file, or a dangling one (reading it says so)
  }

  // The backend's own temporaries and journals are not entries.
  static bool is_staging_name(const std::string& name) {
    auto ends = [&](std::string_view tail) {
      return name.size() > tail.size() &&
             name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    return name.find(".stowage-tmp.") != std::string::npos || ends(".stowage-commit") ||
           ends(".stowage-lock");
  }

  static stowage_view map(int fd, const std::string& path, uint64_t begin, uint64_t n) {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t aligned = begin / page * page;
    const size_t length = static_cast<size_t>(n + (begin - aligned));
    void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(aligned));
    if (base == MAP_FAILED) io_fail(path, "cannot map", errno);
    auto* owner = new MappedBytes{base, length};
    return stowage_view{static_cast<const uint8_t*>(base) + (begin - aligned), n, owner,
                        MappedBytes::release};
  }

  static void publish_one(StagedFile& file, uint32_t flags) {
    file.hand_over();
    try {
      if (flags & STOWAGE_PUBLISH_REPLACE) {
        if (::rename(file.temp().c_str(), file.final_path().c_str()) != 0)
          io_fail(file.shown(), "cannot put it in place", errno);
      } else {
        rename_no_replace(file.temp(), file.final_path());
      }
    } catch (...) {
      ::unlink(file.temp().c_str());
      throw;
    }
  }

  static void publish_set(std::vector<std::unique_ptr<StagedBackendFile>>& files, bool durable) {
    std::vector<std::pair<std::string, std::string>> renames;
    for (auto& f : files) {
      auto& file = static_cast<StagedFile&>(*f);
      renames.emplace_back(file.temp(), file.final_path());
    }
    // Once the journal is there the temporaries are the journal's (recover()
    // renames them); before that they are still ours to delete on failure.
    commit_renames(renames, durable, [&] {
      for (auto& f : files) static_cast<StagedFile&>(*f).hand_over();
    });
  }

  // Renames complete entries (temporary -> final) as one change: the
  // journal beside the first final path is the commit point.
  static void commit_renames(
      const std::vector<std::pair<std::string, std::string>>& renames, bool durable,
      const std::function<void()>& on_commit_point = [] {}) {
    const std::string first = renames.at(0).second;
    const std::string dir = directory_of(first), journal = journal_for(first);
    Renames relative;
    std::string text;
    for (const auto& [temp, final_path] : renames) {
      relative.emplace_back(relative_to(dir, temp), relative_to(dir, final_path));
      text += relative.back().first + "\t" + relative.back().second + "\n";
    }
    // Two processes committing the same set take turns: one journal and its
    // renames at a time, so the last commit wins whole.
    DirectoryLock turn(dir);
    struct stat st;
    const bool abandoned =
        ::lstat(journal.c_str(), &st) == 0;  // a killed writer's, never recovered
    StagedFile journal_file(journal, first);
    journal_file.write_at(0, text.data(), text.size());
    journal_file.finish(durable);
    publish_one(journal_file, STOWAGE_PUBLISH_REPLACE);  // the commit point
    on_commit_point();
    apply_renames(dir, relative, journal);
    // The replaced journal held back the sweep of its temporaries: no one will rename them now.
    if (abandoned) remove_dead_temporaries(dir);
  }
};

}  // namespace

STOWAGE_DEFINE_STORAGE_PLUGIN(FileStorage, "file", "1.0.0", "local files: paths, or file:// URLs",
                              "{}", STOWAGE_CAP_READ | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_MAP,
                              nullptr)
