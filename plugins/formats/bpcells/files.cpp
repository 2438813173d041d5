#include "files.hpp"

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
    case Element::uint32:
      return "UINT32v1";
    case Element::uint64:
      return "UINT64v1";
    case Element::float32:
      return "FLOATSv1";
    case Element::float64:
      return "DOUBLEv1";
  }
  return "????????";
}

size_t element_size(Element e) { return e == Element::uint32 || e == Element::float32 ? 4 : 8; }

ArrayFile::ArrayFile(const sdk::Storage& storage, std::string path, Element type)
    : storage_(storage), path_(std::move(path)), type_(type) {
  if (!sdk::host_is_little_endian())
    sdk::unsupported(path_ + ": reading BPCells files on a big-endian host is not supported");
  // The magic and the size in one request (one open, fstat and pread locally).
  char magic[kMagicSize];
  uint64_t got = 0, size = 0;
  if (!storage_.read_into_if_exists(path_, 0, magic, kMagicSize, &got, &size))
    sdk::fail(STOWAGE_NOT_FOUND, path_ + ": no such file");
  if (size < kMagicSize || got < kMagicSize)
    sdk::corrupt(path_ + ": " + std::to_string(size) +
                 "-byte file is too short for the 8-byte header");
  const char* want = element_magic(type);
  if (std::memcmp(magic, want, kMagicSize) != 0) {
    std::string reversed(want, kMagicSize);
    std::reverse(reversed.begin(), reversed.end());
    if (std::memcmp(magic, reversed.data(), kMagicSize) == 0)
      sdk::unsupported(path_ + ": big-endian BPCells file (byte-swapped header '" +
                       printable(magic, kMagicSize) + "'); only little-endian files are supported");
    sdk::corrupt(path_ + ": header is '" + printable(magic, kMagicSize) + "', expected '" + want +
                 "'");
  }
  uint64_t body = size - kMagicSize;
  if (body % element_size(type) != 0)
    sdk::corrupt(path_ + ": " + std::to_string(body) + " data bytes are not a whole number of " +
                 std::to_string(element_size(type)) + "-byte elements");
  count_ = body / element_size(type);
}

void ArrayFile::read(uint64_t first, uint64_t n, void* out) const {
  if (first > count_ || n > count_ - first)
    sdk::corrupt(path() + ": elements [" + std::to_string(first) + ", " +
                 std::to_string(first + n) + ") are past the end of the array (" +
                 std::to_string(count_) + " elements)");
  if (n == 0) return;  // out may then be null
  size_t esize = element_size(type_);
  if (mapped_)
    std::memcpy(out, static_cast<const char*>(mapped_) + first * esize, n * esize);
  else
    storage_.read_exact(path_, kMagicSize + first * esize, out, n * esize);
}

void ArrayFile::map() {
  if (mapped_) return;
  sdk::Bytes whole = storage_.map(path_);
  const uint64_t want = kMagicSize + count_ * element_size(type_);
  if (whole.size() < want)  // cut since the constructor looked
    sdk::corrupt(path_ + ": file is truncated: " + std::to_string(whole.size()) + " bytes, " +
                 std::to_string(want) + " when the matrix was opened");
  bytes_ = std::move(whole);
  mapped_ = bytes_.data() + kMagicSize;
}

void ArrayFile::require_count(uint64_t expected, const char* what) const {
  if (count_ != expected)
    sdk::corrupt(path() + ": holds " + std::to_string(count_) + " elements, expected " +
                 std::to_string(expected) + " (" + what + ")");
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    size_t stop = end > begin && text[end - 1] == '\r' ? end - 1 : end;
    lines.emplace_back(text.substr(begin, stop - begin));
    begin = end + 1;
  }
  return lines;
}

std::vector<std::string> read_lines(const sdk::Storage& storage, const std::string& path,
                                    uint64_t max_size) {
  sdk::Bytes text = storage.read(path, 0, max_size == UINT64_MAX ? max_size : max_size + 1);
  if (text.size() > max_size)
    sdk::corrupt(path + ": file is more than the " + std::to_string(max_size) + " bytes allowed");
  return split_lines(text.text());
}

OutputFile::OutputFile(const sdk::Storage& storage, const std::string& path)
    : storage_(storage), file_(storage.stage(path)) {
  buffer_.reserve(kOutputBuffer);
}

void OutputFile::write(const void* data, size_t n) {
  if (n == 0) return;  // data may then be null
  if (buffer_.size() + n > kOutputBuffer) flush();
  if (n >= kOutputBuffer) {
    file_.append(data, n);
    return;
  }
  const char* p = static_cast<const char*>(data);
  buffer_.insert(buffer_.end(), p, p + n);
}

void OutputFile::flush() {
  if (!buffer_.empty()) file_.append(buffer_.data(), buffer_.size());
  buffer_.clear();
}

void OutputFile::close() {
  flush();
  storage_.publish(file_);
}

void write_lines_file(const sdk::Storage& storage, const std::string& path,
                      const std::vector<std::string>& lines) {
  OutputFile f(storage, path);
  for (const std::string& line : lines) {
    f.write(line.data(), line.size());
    f.write("\n", 1);
  }
  f.close();
}

}  // namespace stowage::bpcells
