// stowage/plugin_util.hpp -- small header-only helpers every plugin needs:
// byte order, node-path checks, and files that are written atomically.
//
// Plugins link nothing of ours, so what they share lives here, in the SDK,
// rather than in libstowage.
#ifndef STOWAGE_PLUGIN_UTIL_HPP
#define STOWAGE_PLUGIN_UTIL_HPP

#include <stowage/plugin.hpp>

#include <fcntl.h>
#include <sys/file.h>  // flock
#include <sys/mman.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stowage::sdk {

// ---- byte order -------------------------------------------------------------

inline constexpr bool host_is_little_endian() {
  return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

inline uint16_t bswap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t bswap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t bswap(uint64_t v) { return __builtin_bswap64(v); }

// Reads/writes an unsigned integer of type T stored big- or little-endian at p.
template <class T>
T load_be(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (sizeof(T) > 1) {
    if (host_is_little_endian()) v = bswap(v);
  }
  return v;
}
template <class T>
T load_le(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (sizeof(T) > 1) {
    if (!host_is_little_endian()) v = bswap(v);
  }
  return v;
}
template <class T>
void store_be(void* p, T v) {
  if constexpr (sizeof(T) > 1) {
    if (host_is_little_endian()) v = bswap(v);
  }
  std::memcpy(p, &v, sizeof v);
}
template <class T>
void store_le(void* p, T v) {
  if constexpr (sizeof(T) > 1) {
    if (!host_is_little_endian()) v = bswap(v);
  }
  std::memcpy(p, &v, sizeof v);
}

// Reverses the bytes of each of `count` elements of `width` bytes, in place.
inline void swap_bytes_inplace(void* data, size_t count, size_t width) {
  auto* p = static_cast<unsigned char*>(data);
  switch (width) {
    case 1:
      return;
    case 2:
      for (size_t i = 0; i < count; ++i) {
        uint16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        v = bswap(v);
        std::memcpy(p + 2 * i, &v, 2);
      }
      return;
    case 4:
      for (size_t i = 0; i < count; ++i) {
        uint32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        v = bswap(v);
        std::memcpy(p + 4 * i, &v, 4);
      }
      return;
    case 8:
      for (size_t i = 0; i < count; ++i) {
        uint64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        v = bswap(v);
        std::memcpy(p + 8 * i, &v, 8);
      }
      return;
    default:
      fail(STOWAGE_INTERNAL, "swap_bytes_inplace: unsupported element width " +
                                 std::to_string(width));
  }
}

// ---- node paths ---------------------------------------------------------------

// The name prefix of what stowage::copy stages beside its destination (a
// whole dataset) or inside it (a node of an existing container, as
// ".stowage-convert.<pid>.<name>"): hidden, and not listed as a node.
inline constexpr const char kStagingPrefix[] = ".stowage-convert.";

// Splits a node path ("a/b/c", "" for the root) into its components, refusing
// absolute paths, "." and ".." components and empty components, so that a
// node name can never reach outside the store.
inline std::vector<std::string> split_node_path(std::string_view node) {
  std::vector<std::string> parts;
  if (node.empty()) return parts;
  if (node.front() == '/') invalid("node path '" + std::string(node) + "' is absolute");
  size_t start = 0;
  while (true) {
    size_t slash = node.find('/', start);
    std::string_view part = node.substr(start, slash == std::string_view::npos ? node.size() - start
                                                                               : slash - start);
    if (part.empty() || part == "." || part == "..")
      invalid("node path '" + std::string(node) + "' has an empty, '.' or '..' component");
    if (part.find('\0') != std::string_view::npos || part.find('\\') != std::string_view::npos)
      invalid("node path '" + std::string(node) + "' has a NUL or backslash");
    parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

// ---- chunk shapes ---------------------------------------------------------------

// Chunks of about `target` bytes for a C-order layout: whole trailing
// dimensions while they fit, then as many rows k of the next dimension as
// fit (k >= 1), then 1. Every extent is at least 1 (the host divides by
// them), even along a zero-length dimension. npy's slabs; stowage::copy's
// default where a source's one chunk would be too large to write as one.
inline std::vector<uint64_t> c_order_chunks(const std::vector<uint64_t>& shape, size_t element_size,
                                            uint64_t target) {
  const size_t n = shape.size();
  std::vector<uint64_t> chunks(n, 1);
  uint64_t slab_bytes = element_size;  // bytes of one step along dimension d-1
  size_t d = n;
  while (d > 0) {
    uint64_t extent = std::max<uint64_t>(shape[d - 1], 1);
    if (slab_bytes > target / extent) break;  // the whole dimension does not fit
    chunks[d - 1] = extent;
    slab_bytes *= extent;
    --d;
  }
  if (d > 0) chunks[d - 1] = std::clamp<uint64_t>(target / slab_bytes, 1, std::max<uint64_t>(shape[d - 1], 1));
  return chunks;
}

// ---- scratch buffers --------------------------------------------------------------

// Byte buffers reused across calls from many threads, so a hot path (a chunk
// read or write) allocates nothing per call yet keeps no thread_local state,
// which a plugin must not have (its destructors run at thread exit in an
// order the host cannot control). A buffer goes back to the pool when its
// Lease dies. One uncontended mutex per take and per give back (~20 ns each)
// against the ~80 us of a 64^3 chunk.
class BufferPool {
 public:
  class Lease {
   public:
    Lease(BufferPool& pool, std::vector<uint8_t> buffer) : pool_(&pool), buffer_(std::move(buffer)) {}
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), buffer_(std::move(o.buffer_)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->give_back(std::move(buffer_));
    }
    // The buffer; resize() keeps its first bytes, as a vector does.
    std::vector<uint8_t>& operator*() { return buffer_; }
    std::vector<uint8_t>* operator->() { return &buffer_; }
    uint8_t* data() { return buffer_.data(); }

   private:
    BufferPool* pool_;
    std::vector<uint8_t> buffer_;
  };

  // A buffer of at least n bytes (its contents are whatever it held).
  Lease take(size_t n) {
    std::vector<uint8_t> buffer;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        buffer = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (buffer.size() < n) buffer.resize(n);
    return Lease(*this, std::move(buffer));
  }

 private:
  void give_back(std::vector<uint8_t> buffer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(buffer));
  }
  static constexpr size_t kMaxIdle = 16;  // more threads than this at once allocate
  std::mutex mutex_;
  std::vector<std::vector<uint8_t>> idle_;
};

// ---- files --------------------------------------------------------------------

inline std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] inline void io_fail(const std::string& path, const std::string& what, int e) {
  fail(STOWAGE_IO, path + ": " + what + ": " + errno_text(e));
}

inline bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
inline bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
inline bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// An open file descriptor that closes itself.
class File {
 public:
  File() = default;
  File(const std::string& path, int flags, mode_t mode = 0644) : path_(path) {
    do {
      fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) {
      int e = errno;
      if (e == ENOENT) fail(STOWAGE_NOT_FOUND, path + ": no such file");
      io_fail(path, "cannot open", e);
    }
  }
  // Takes ownership of an open descriptor.
  static File adopt(int fd, std::string path) {
    File f;
    f.fd_ = fd;
    f.path_ = std::move(path);
    return f;
  }
  File(File&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  File& operator=(File&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      path_ = std::move(o.path_);
      o.fd_ = -1;
    }
    return *this;
  }
  ~File() { reset(); }

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  uint64_t size() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0) io_fail(path_, "cannot stat", errno);
    return static_cast<uint64_t>(st.st_size);
  }
  // Reads exactly n bytes at offset; a short file is CORRUPT (truncated).
  void read_at(void* buf, size_t n, uint64_t offset) const {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
      ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (r < 0) {
        if (errno == EINTR) continue;
        io_fail(path_, "read failed", errno);
      }
      if (r == 0) corrupt(path_ + ": file is truncated (wanted " + std::to_string(n) +
                          " more bytes at offset " + std::to_string(offset) + ")");
      p += r;
      n -= static_cast<size_t>(r);
      offset += static_cast<uint64_t>(r);
    }
  }
  void write_all(const void* buf, size_t n) {
    auto* p = static_cast<const char*>(buf);
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        io_fail(path_, "write failed", errno);
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  void sync() {
    if (::fsync(fd_) != 0) io_fail(path_, "fsync failed", errno);
  }
  void close() {
    if (fd_ >= 0) {
      int rc = ::close(fd_);
      fd_ = -1;
      if (rc != 0 && errno != EINTR) io_fail(path_, "close failed", errno);
    }
  }

 private:
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  std::string path_;
};

// The first `size` bytes of an open file mapped read-only: a reader takes
// its bytes straight from the page cache, without a system call and a copy
// per read (datadings: pread's copy was 8-24% of iterating 3 KiB samples
// from Python in profiles; from the map, with the next sample prefetched,
// 22.8 -> 21.7 ms of CPU for 20,000).
// Empty (data() null) for size 0 or when the system refuses the map; the
// caller then reads with pread. The map outlives the File.
// A map stays valid when the file is replaced by rename (as stowage writes),
// but a file truncated in place by another program makes a read of the lost
// pages kill the process (SIGBUS): a format whose files may be rewritten in
// place checks the size before reading and offers an "mmap": false option.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const File& f, uint64_t size) {
    if (size == 0 || size > SIZE_MAX) return;
    void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, f.fd(), 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<const unsigned char*>(p);
    size_ = static_cast<size_t>(size);
  }
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  MappedFile& operator=(MappedFile&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
    }
    return *this;
  }
  ~MappedFile() { reset(); }

  const unsigned char* data() const { return data_; }
  uint64_t size() const { return data_ ? size_ : 0; }

 private:
  void reset() noexcept {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
    data_ = nullptr;
  }
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole file. A file larger than max_size is CORRUPT (so a bogus
// file cannot make us allocate without bound).
inline std::string read_file(const std::string& path, uint64_t max_size = UINT64_MAX) {
  File f(path, O_RDONLY);
  uint64_t size = f.size();
  if (size > max_size)
    corrupt(path + ": file is " + std::to_string(size) + " bytes, more than the " +
            std::to_string(max_size) + " allowed");
  std::string data(size, '\0');
  f.read_at(data.data(), size, 0);
  return data;
}

// A name for a temporary file beside `path`, unique within this process and
// across processes (pid), hidden (leading dot) and recognisable (".stowage-tmp").
inline std::string temp_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + ".stowage-tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

// Creates a new temporary file beside `path` (its name in `temp`), open
// with `flags` | O_CREAT | O_EXCL. A name can be taken by a temporary that a
// killed writer left behind and whose pid this process now has (a restarted
// container starts pids at 1 again): then the next name is used.
inline File create_temporary_beside(const std::string& path, std::string& temp, int flags = O_WRONLY) {
  for (int attempt = 0;; ++attempt) {
    temp = temp_path_for(path);
    int fd = ::open(temp.c_str(), flags | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return File::adopt(fd, temp);
    int e = errno;
    if (e == EINTR || (e == EEXIST && attempt < 10000)) continue;
    if (e == ENOENT) fail(STOWAGE_NOT_FOUND, temp + ": no such directory");
    io_fail(temp, "cannot create temporary file", e);
  }
}

// Creates a new, empty temporary directory beside `path` and returns its
// name; like create_temporary_beside, it skips names a killed writer left.
inline std::string create_temporary_directory_beside(const std::string& path) {
  for (int attempt = 0;; ++attempt) {
    std::string temp = temp_path_for(path);
    if (::mkdir(temp.c_str(), 0755) == 0) return temp;
    int e = errno;
    if (e == EINTR || (e == EEXIST && attempt < 10000)) continue;
    if (e == ENOENT) fail(STOWAGE_NOT_FOUND, temp + ": no such directory");
    io_fail(temp, "cannot create directory", e);
  }
}

// Writes a file so that readers see either the old content or the new, never
// a mix: the bytes go to a temporary file beside it, which is renamed over
// the destination. With durable=true the data is fsync'ed first (slower;
// survives power loss, not only a killed process).
class AtomicFile {
 public:
  explicit AtomicFile(std::string path, bool durable = false)
      : path_(std::move(path)), durable_(durable), file_(create_temporary_beside(path_, temp_)) {}
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (!committed_) {
      file_ = File();
      ::unlink(temp_.c_str());
    }
  }
  void write(const void* data, size_t n) { file_.write_all(data, n); }
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Publishes the file under its real name.
  void commit() {
    finish();
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      int e = errno;
      ::unlink(temp_.c_str());
      committed_ = true;  // nothing left to clean up
      io_fail(path_, "cannot rename temporary file into place", e);
    }
    committed_ = true;
  }
  // Completes the temporary file without renaming it: FileSetCommit renames
  // several such files together.
  void finish() {
    if (durable_) file_.sync();
    file_.close();
  }
  // From here on the temporary is someone else's to rename (or, after a
  // crash, a journal's); the destructor leaves it alone.
  void release() { committed_ = true; }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

 private:
  std::string path_, temp_;
  bool durable_;
  bool committed_ = false;
  File file_;
};

// Puts a finished file or directory `made` at `final_path` so that a crash
// leaves the old entry or the new one under that name, never neither: a
// plain rename when nothing is there or over a file, else one exchange
// (renameat2 RENAME_EXCHANGE). File systems without the exchange (NFS) get
// the old entry moved aside first, a moment with neither. Returns where the
// old entry now is, for the caller to remove ("" when there was none).
// Renames `made` to `final_path`, failing with INVALID_ARGUMENT "exists" if
// something has that name: atomically where the file system has
// RENAME_NOREPLACE, else checked just before the rename.
inline void rename_no_replace(const std::string& made, const std::string& final_path) {
  if (::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE) == 0) return;
  int e = errno;
  struct stat st;
  if (e == EINVAL || e == ENOSYS || e == ENOTSUP) {
    if (::lstat(final_path.c_str(), &st) != 0 && ::rename(made.c_str(), final_path.c_str()) == 0) return;
    e = ::lstat(final_path.c_str(), &st) == 0 ? EEXIST : errno;
  }
  if (e == EEXIST) invalid(final_path + ": exists");
  io_fail(final_path, "cannot rename " + made + " into place", e);
}

inline std::string replace_atomically(const std::string& made, const std::string& final_path) {
  struct stat st;
  const bool exists = ::lstat(final_path.c_str(), &st) == 0;
  if (!exists || !S_ISDIR(st.st_mode)) {  // over a file, rename alone is atomic
    if (::rename(made.c_str(), final_path.c_str()) != 0) io_fail(final_path, "cannot rename into place", errno);
    return "";
  }
  if (::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, final_path.c_str(), RENAME_EXCHANGE) == 0) return made;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    io_fail(final_path, "cannot exchange the old version with the new one", errno);
  std::string old = temp_path_for(final_path) + ".old";
  if (::rename(final_path.c_str(), old.c_str()) != 0) io_fail(final_path, "cannot move the old version aside", errno);
  if (::rename(made.c_str(), final_path.c_str()) != 0) {
    int e = errno;
    (void)::rename(old.c_str(), final_path.c_str());  // put the old one back
    io_fail(final_path, "cannot rename the new version into place", e);
  }
  return old;
}

// ---- one writer at a time ---------------------------------------------------
//
// An exclusive flock(2) on a directory, held for the object's lifetime, so
// that several processes publishing into one dataset (a Daf repository's
// close, a file set's commit) take turns instead of interleaving. Advisory,
// released by the kernel when the process dies, and no file is created. On a
// file system that refuses flock (ENOLCK, EOPNOTSUPP) it holds nothing and
// the caller goes on as before.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir) {
    const std::string path = dir.empty() ? "." : dir;
    fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) io_fail(path, "cannot open directory to lock it", errno);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      if (e == ENOLCK || e == EOPNOTSUPP || e == EINVAL) break;
      ::close(fd_);
      fd_ = -1;
      io_fail(path, "cannot lock directory", e);
    }
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// ---- several files replaced together ------------------------------------------
//
// A dataset stored as sibling files (datadings' six, datg's matrix and name
// files) must change as a whole: a reader may never see new data with an old
// index. POSIX renames one file at a time, so the renames are journaled:
// every file is first complete under a temporary name; then a journal beside
// the dataset's first file lists each temporary and its final name (the
// journal appearing is the commit point); then the renames run and the
// journal is deleted. A writer killed during the renames leaves the journal,
// and the next one to open the dataset -- reader or writer -- finishes them
// (complete_file_set_commit), so it sees the new dataset, never a mix.
// Commits, and the completion of a left journal, hold a DirectoryLock on the
// journal's directory: two writers committing at once take turns.

// The journal of the file set whose first file is `first_path`.
inline std::string commit_journal_for(const std::string& first_path) {
  size_t slash = first_path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : first_path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? first_path : first_path.substr(slash + 1);
  return dir + "." + base + ".stowage-commit";
}

namespace detail {
inline std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}
// A journal names files relative to its own directory.
inline std::string relative_to(const std::string& dir, const std::string& path) {
  if (!dir.empty() && path.compare(0, dir.size(), dir) == 0) return path.substr(dir.size());
  if (dir.empty() && path.find('/') == std::string::npos) return path;
  fail(STOWAGE_INVALID_ARGUMENT,
       path + ": a file set must live beside its journal in " + (dir.empty() ? "the current directory" : dir));
}
inline bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}
// A journal's names stay below its directory: relative, no "..", no empty parts.
inline bool is_plain_relative(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (size_t at = 0; at <= path.size();) {
    size_t end = std::min(path.find('/', at), path.size());
    std::string_view part(path.data() + at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return true;
}
}  // namespace detail

namespace detail {
using Renames = std::vector<std::pair<std::string, std::string>>;  // temporary, final; relative

// Runs a journal's renames (a temporary already gone was renamed before)
// and removes the journal.
inline void apply_renames(const std::string& dir, const Renames& renames, const std::string& journal) {
  for (const auto& [temp, final_name] : renames) {
    std::string from = dir + temp, to = dir + final_name;
    if (::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
      io_fail(to, "cannot finish the commit of journal " + journal, errno);
  }
  if (::unlink(journal.c_str()) != 0 && errno != ENOENT) io_fail(journal, "cannot remove commit journal", errno);
}
}  // namespace detail

// Finishes the renames of a file-set commit that a killed writer left
// half done; returns whether there was one. Cheap when there is none (one
// failed lstat). Safe to run from several processes at once.
inline bool complete_file_set_commit(const std::string& first_path) {
  const std::string journal = commit_journal_for(first_path);
  if (!detail::exists(journal)) return false;
  DirectoryLock turn(detail::directory_of(first_path));  // not while a writer commits
  std::string text;
  try {
    text = read_file(journal, 1u << 20);
  } catch (const Error& e) {
    if (e.code() == STOWAGE_NOT_FOUND) return false;  // another process finished first
    throw;
  }
  // One rename per line: "<temporary>\t<final>", both relative to the journal's directory.
  detail::Renames renames;
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) corrupt(journal + ": commit journal does not end with a newline");
    std::string line = text.substr(at, eol - at);
    at = eol + 1;
    size_t tab = line.find('\t');
    if (tab == std::string::npos || !detail::is_plain_relative(line.substr(0, tab)) ||
        !detail::is_plain_relative(line.substr(tab + 1)))
      corrupt(journal + ": malformed commit journal line '" + line + "'");
    renames.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  detail::apply_renames(detail::directory_of(first_path), renames, journal);
  return true;
}

// Publishes complete temporary files under their final names as one change
// (see above). The first file names the journal; the files must share its
// directory (temporaries may be in a subdirectory of it).
class FileSetCommit {
 public:
  explicit FileSetCommit(std::string first_path, bool durable = false)
      : first_(std::move(first_path)), durable_(durable) {}
  // A finished temporary file to rename to final_path.
  void add(const std::string& temp, const std::string& final_path) { renames_.push_back({temp, final_path}); }
  void add(AtomicFile& file) {
    file.finish();
    file.release();
    add(file.temp_path(), file.path());
  }
  void commit() {
    const std::string dir = detail::directory_of(first_), journal = commit_journal_for(first_);
    detail::Renames relative;
    std::string journal_text;
    for (const auto& [temp, final_path] : renames_) {
      relative.emplace_back(detail::relative_to(dir, temp), detail::relative_to(dir, final_path));
      journal_text += relative.back().first + "\t" + relative.back().second + "\n";
    }
    // Two processes committing the same file set at once take turns: one
    // journal and its renames at a time, so the last commit wins whole.
    DirectoryLock turn(dir);
    AtomicFile file(journal, durable_);
    file.write(journal_text);
    file.commit();  // the commit point
    detail::apply_renames(dir, relative, journal);
  }

 private:
  std::string first_;
  bool durable_;
  std::vector<std::pair<std::string, std::string>> renames_;
};

inline void write_file_atomic(const std::string& path, const void* data, size_t n) {
  AtomicFile f(path);
  f.write(data, n);
  f.commit();
}
inline void write_file_atomic(const std::string& path, std::string_view s) {
  write_file_atomic(path, s.data(), s.size());
}

// Creates a directory and its parents (like mkdir -p); existing ones are fine.
inline void make_directories(const std::string& path) {
  if (path.empty() || is_directory(path)) return;
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) io_fail(path, "cannot create directory", errno);
}

}  // namespace stowage::sdk

#endif  // STOWAGE_PLUGIN_UTIL_HPP
