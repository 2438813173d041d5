// The two kinds of file in a BPCells matrix directory:
//   * numeric arrays: an 8-byte ASCII magic ("UINT32v1", "UINT64v1",
//     "FLOATSv1", "DOUBLEv1") then raw little-endian elements, no length field;
//   * text files (version, storage_order, row_names, col_names): one string
//     per line, '\n' after each, CRLF accepted on read.
#pragma once

#include <stowage/plugin_util.hpp>

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
// size is a whole number of elements; reads are pread, safe from any thread.
class ArrayFile {
 public:
  ArrayFile(const std::string& path, Element type);

  const std::string& path() const { return file_.path(); }
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
  // The elements mapped read-only, or null when the system refuses the map.
  // Valid while the returned owner lives. BPCells and stowage never change a
  // file in place (both write a new directory), so a map stays valid even
  // after the directory is replaced; a file truncated under a live map by
  // some other program would fault, hence the "mmap": false open option.
  std::shared_ptr<const void> map(const void** elements) const;

 private:
  sdk::File file_;
  Element type_;
  uint64_t count_ = 0;
};

// Lines of a text file: split on '\n', one trailing '\r' dropped from each
// line, the final '\n' optional. A 0-byte file has no lines.
std::vector<std::string> read_lines(const std::string& path, uint64_t max_size = UINT64_MAX);

// A file being written in a temporary directory, buffered.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  OutputFile(const std::string& path, Element type) : OutputFile(path) { write(element_magic(type), 8); }
  void write(const void* data, size_t n);
  void close();  // flushes; errors are IO naming the file

 private:
  void flush();
  sdk::File file_;
  std::vector<char> buffer_;
};

// Writes a whole numeric array file.
template <class T>
void write_array_file(const std::string& path, Element type, const std::vector<T>& values) {
  OutputFile f(path, type);
  f.write(values.data(), values.size() * sizeof(T));
  f.close();
}

// Writes strings one per line, each followed by '\n' (a 0-byte file for none).
void write_lines_file(const std::string& path, const std::vector<std::string>& lines);

}  // namespace stowage::bpcells
