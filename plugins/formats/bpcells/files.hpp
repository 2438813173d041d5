// The two kinds of file in a BPCells matrix directory:
//   * numeric arrays: an 8-byte ASCII magic ("UINT32v1", "UINT64v1",
//     "FLOATSv1", "DOUBLEv1") then raw little-endian elements, no length field;
//   * text files (version, storage_order, row_names, col_names): one string
//     per line, '\n' after each, CRLF accepted on read.
// All I/O goes through the storage layer (stowage/storage.hpp): a local
// directory, mem://, or an HTTP server; nothing here touches a file itself.
#pragma once

#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::bpcells {

enum class Element : uint8_t { uint32, uint64, float32, float64 };

const char* element_magic(Element e);
size_t element_size(Element e);

// A numeric array file opened for reading. The constructor checks the magic
// (a byte-reversed one means a big-endian file: UNSUPPORTED) and that the
// size is a whole number of elements; reads are ranged reads through the
// storage (one preadv for a local file), or copies from the map once map()
// was called. Safe from any thread.
class ArrayFile {
 public:
  ArrayFile(const sdk::Storage& storage, std::string path, Element type);

  const std::string& path() const { return path_; }
  uint64_t count() const { return count_; }
  // Reads elements [first, first+n) into out.
  void read(uint64_t first, uint64_t n, void* out) const;
  // Reads the whole array after checking it has `expected` elements.
  template <class T>
  std::vector<T> read_exactly(uint64_t expected, const char* what) const {
    require_count(expected, what);
    std::vector<T> out(count_);
    read(0, count_, out.data());
    return out;
  }
  void require_count(uint64_t expected, const char* what) const;
  // Keeps the whole file in memory for reading in place: a read-only memory
  // map on local disk (the storage's STOWAGE_READ_KEEP view), a buffer
  // elsewhere. BPCells and stowage never change a file in place (both write
  // a new directory), so a map stays valid even after the directory is
  // replaced; a file truncated under a live map by some other program would
  // fault, hence the "mmap": false open option.
  void map();
  // The elements in memory after map(), else null.
  const void* mapped() const { return mapped_; }

 private:
  sdk::Storage storage_;
  std::string path_;
  Element type_;
  uint64_t count_ = 0;
  sdk::Bytes bytes_;              // the whole file, after map()
  const void* mapped_ = nullptr;  // its elements (past the magic)
};

// Lines of a text file: split on '\n', one trailing '\r' dropped from each
// line, the final '\n' optional. A 0-byte file has no lines. A file larger
// than max_size is CORRUPT (at most max_size + 1 bytes are read).
std::vector<std::string> split_lines(std::string_view text);
std::vector<std::string> read_lines(const sdk::Storage& storage, const std::string& path,
                                    uint64_t max_size = UINT64_MAX);

// A file being written (staged: invisible until close() publishes it),
// buffered so that the BP-128 encoder's small pieces become large writes.
class OutputFile {
 public:
  OutputFile(const sdk::Storage& storage, const std::string& path);
  OutputFile(const sdk::Storage& storage, const std::string& path, Element type)
      : OutputFile(storage, path) {
    write(element_magic(type), 8);
  }
  void write(const void* data, size_t n);
  void close();  // flushes and publishes; errors are IO naming the file

 private:
  void flush();
  sdk::Storage storage_;
  sdk::Staged file_;
  std::vector<char> buffer_;
};

// Writes a whole numeric array file.
template <class T>
void write_array_file(const sdk::Storage& storage, const std::string& path, Element type,
                      const std::vector<T>& values) {
  OutputFile f(storage, path, type);
  f.write(values.data(), values.size() * sizeof(T));
  f.close();
}

// Writes strings one per line, each followed by '\n' (a 0-byte file for none).
void write_lines_file(const sdk::Storage& storage, const std::string& path,
                      const std::vector<std::string>& lines);

}  // namespace stowage::bpcells
