#include "files.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

namespace stowage::bpcells {

namespace {
constexpr size_t kMagicSize = 8;
constexpr size_t kOutputBuffer = 1 << 16;

std::string printable(const char* bytes, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f) {
      s += char(c);
    } else {
      static const char* hex = "0123456789abcdef";
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    }
  }
  return s;
}
}  // namespace

const char* element_magic(Element e) {
  switch (e) {
    case Element::uint32: return "UINT32v1";
    case Element::uint64: return "UINT64v1";
    case Element::float32: return "FLOATSv1";
    case Element::float64: return "DOUBLEv1";
  }
  return "????????";
}

size_t element_size(Element e) {
  return e == Element::uint32 || e == Element::float32 ? 4 : 8;
}

ArrayFile::ArrayFile(const std::string& path, Element type) : file_(path, O_RDONLY), type_(type) {
  if (!sdk::host_is_little_endian())
    sdk::unsupported(path + ": reading BPCells files on a big-endian host is not supported");
  uint64_t size = file_.size();
  if (size < kMagicSize)
    sdk::corrupt(path + ": " + std::to_string(size) + "-byte file is too short for the 8-byte header");
  char magic[kMagicSize];
  file_.read_at(magic, kMagicSize, 0);
  const char* want = element_magic(type);
  if (std::memcmp(magic, want, kMagicSize) != 0) {
    std::string reversed(want, kMagicSize);
    std::reverse(reversed.begin(), reversed.end());
    if (std::memcmp(magic, reversed.data(), kMagicSize) == 0)
      sdk::unsupported(path + ": big-endian BPCells file (byte-swapped header '" +
                       printable(magic, kMagicSize) + "'); only little-endian files are supported");
    sdk::corrupt(path + ": header is '" + printable(magic, kMagicSize) + "', expected '" + want + "'");
  }
  uint64_t body = size - kMagicSize;
  if (body % element_size(type) != 0)
    sdk::corrupt(path + ": " + std::to_string(body) + " data bytes are not a whole number of " +
                 std::to_string(element_size(type)) + "-byte elements");
  count_ = body / element_size(type);
}

void ArrayFile::read(uint64_t first, uint64_t n, void* out) const {
  if (first > count_ || n > count_ - first)
    sdk::corrupt(path() + ": elements [" + std::to_string(first) + ", " + std::to_string(first + n) +
                 ") are past the end of the array (" + std::to_string(count_) + " elements)");
  size_t esize = element_size(type_);
  file_.read_at(out, n * esize, kMagicSize + first * esize);
}

std::shared_ptr<const void> ArrayFile::map(const void** elements) const {
  *elements = nullptr;
  const size_t size = kMagicSize + count_ * element_size(type_);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, file_.fd(), 0);
  if (p == MAP_FAILED) return nullptr;
  *elements = static_cast<const char*>(p) + kMagicSize;
  return std::shared_ptr<const void>(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
}

void ArrayFile::require_count(uint64_t expected, const char* what) const {
  if (count_ != expected)
    sdk::corrupt(path() + ": holds " + std::to_string(count_) + " elements, expected " +
                 std::to_string(expected) + " (" + what + ")");
}

std::vector<std::string> read_lines(const std::string& path, uint64_t max_size) {
  std::string text = sdk::read_file(path, max_size);
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    size_t stop = end > begin && text[end - 1] == '\r' ? end - 1 : end;
    lines.emplace_back(text, begin, stop - begin);
    begin = end + 1;
  }
  return lines;
}

OutputFile::OutputFile(const std::string& path) : file_(path, O_WRONLY | O_CREAT | O_EXCL, 0644) {
  buffer_.reserve(kOutputBuffer);
}

void OutputFile::write(const void* data, size_t n) {
  if (n == 0) return;  // data may then be null
  if (buffer_.size() + n > kOutputBuffer) flush();
  if (n >= kOutputBuffer) {
    file_.write_all(data, n);
    return;
  }
  const char* p = static_cast<const char*>(data);
  buffer_.insert(buffer_.end(), p, p + n);
}

void OutputFile::flush() {
  if (!buffer_.empty()) file_.write_all(buffer_.data(), buffer_.size());
  buffer_.clear();
}

void OutputFile::close() {
  flush();
  file_.close();
}

void write_lines_file(const std::string& path, const std::vector<std::string>& lines) {
  OutputFile f(path);
  for (const std::string& line : lines) {
    f.write(line.data(), line.size());
    f.write("\n", 1);
  }
  f.close();
}

}  // namespace stowage::bpcells
