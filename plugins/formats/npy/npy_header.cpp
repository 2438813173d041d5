// The .npy header: a fixed preamble, then a Python dict literal. See
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include "npy_header.hpp"

#include <stowage/plugin_util.hpp>

#include <cstdint>
#include <cstring>
#include <set>

namespace npy {

using stowage::sdk::corrupt;
using stowage::sdk::unsupported;

uint64_t Header::element_count() const {
  uint64_t n = 1;
  for (uint64_t e : shape) n *= e;  // overflow ruled out by parse_header
  return n;
}

uint64_t parse_preamble(std::string_view prefix, const std::string& file) {
  if (prefix.size() < 10 || std::memcmp(prefix.data(), kMagic, kMagicSize) != 0)
    corrupt(file + ": not a NumPy .npy file (no \\x93NUMPY magic at the start)");
  const auto major = static_cast<uint8_t>(prefix[6]);
  const auto minor = static_cast<uint8_t>(prefix[7]);
  if (minor != 0 || major < 1 || major > 3)
    unsupported(file + ": .npy format version " + std::to_string(major) + "." +
                std::to_string(minor) + " (known: 1.0, 2.0, 3.0)");
  uint64_t length;
  uint64_t preamble;
  if (major == 1) {
    length = stowage::sdk::load_le<uint16_t>(prefix.data() + 8);
    preamble = 10;
  } else {
    if (prefix.size() < 12) corrupt(file + ": file is truncated inside the .npy preamble");
    length = stowage::sdk::load_le<uint32_t>(prefix.data() + 8);
    preamble = 12;
  }
  return preamble + length;
}

namespace {

// A cursor over the dict literal; every error names the file and offset.
class LiteralParser {
 public:
  LiteralParser(std::string_view text, uint64_t base, const std::string& file)
      : text_(text), base_(base), file_(file) {}

  [[noreturn]] void malformed(const std::string& what) const {
    corrupt(file_ + ": malformed .npy header at byte " + std::to_string(base_ + pos_) + ": " +
            what + " in " + quoted_text());
  }

  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool at(char c) {
    skip_spaces();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!at(c)) malformed(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool accept(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }

  // A Python string literal in single or double quotes, without escapes.
  std::string string_literal() {
    skip_spaces();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      malformed("expected a string");
    const char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) malformed("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    if (s.find('\\') != std::string::npos || s.find('\n') != std::string::npos)
      malformed("escape or newline inside a string");
    pos_ = end + 1;
    return s;
  }

  bool boolean_literal() {
    skip_spaces();
    for (auto [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    malformed("expected True or False");
  }

  // A non-negative integer (an 'L' suffix, as Python 2 numpy wrote, is fine).
  uint64_t integer_literal() {
    skip_spaces();
    size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (v > (UINT64_MAX - digit) / 10) malformed("integer too large");
      v = v * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) malformed("expected a non-negative integer");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    return v;
  }

  // A tuple of integers: (), (3,), (3, 4), (3, 4,).
  std::vector<uint64_t> shape_literal() {
    expect('(');
    std::vector<uint64_t> shape;
    if (accept(')')) return shape;
    while (true) {
      shape.push_back(integer_literal());
      if (shape.size() > kMaxDims)
        unsupported(file_ + ": .npy shape has more than " + std::to_string(kMaxDims) +
                    " dimensions");
      if (accept(')')) {
        if (shape.size() == 1) malformed("a one-element shape needs a trailing comma");
        return shape;
      }
      expect(',');
      if (accept(')')) return shape;
    }
  }

  // After the closing brace only padding may follow.
  void expect_padding() {
    for (; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
        malformed("unexpected text after the dict");
    }
  }

  bool peek_list() { return at('['); }

 private:
  std::string quoted_text() const {
    std::string s(text_.substr(0, 200));
    for (char& c : s)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return "\"" + s + (text_.size() > 200 ? "...\"" : "\"");
  }

  std::string_view text_;
  uint64_t base_;
  size_t pos_ = 0;
  const std::string& file_;
};

// Maps a numpy descr ('<f8', '|b1', '>i2', ...) onto a stowage dtype.
void apply_descr(const std::string& descr, Header& h, const std::string& file) {
  auto refuse = [&](const std::string& why) {
    unsupported(file + ": .npy dtype '" + descr + "' is not supported (" + why +
                "; supported: bool, int8..int64, uint8..uint64, float16..float64, complex64, "
                "complex128)");
  };
  size_t i = 0;
  char order = '=';
  if (!descr.empty() && std::strchr("<>|=", descr[0])) order = descr[i++];
  if (i >= descr.size()) corrupt(file + ": .npy header has an empty descr");
  const char kind = descr[i++];
  std::string digits = descr.substr(i);
  if (std::strchr("USaOVMm", kind)) refuse("string, object, void and time types");
  if (digits.empty() || digits.size() > 2 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    refuse("not a plain numeric type");
  const int size = std::stoi(digits);
  static const struct {
    char kind;
    int size;
    const char* dtype;
  } kTypes[] = {{'b', 1, "bool"},      {'i', 1, "int8"},       {'i', 2, "int16"},
                {'i', 4, "int32"},     {'i', 8, "int64"},      {'u', 1, "uint8"},
                {'u', 2, "uint16"},    {'u', 4, "uint32"},     {'u', 8, "uint64"},
                {'f', 4, "float32"},   {'f', 8, "float64"},    {'f', 2, "float16"},
                {'c', 8, "complex64"}, {'c', 16, "complex128"}};
  for (const auto& t : kTypes) {
    if (t.kind == kind && t.size == size) {
      h.dtype = t.dtype;
      h.element_size = static_cast<size_t>(size);
      // '|' (not applicable) and '=' (native) mean the writer's host order,
      // which numpy only writes for single bytes.
      h.big_endian = order == '>' ||
                     ((order == '|' || order == '=') && !stowage::sdk::host_is_little_endian());
      return;
    }
  }
  refuse(kind == 'f'   ? "float of this width"
         : kind == 'c' ? "complex of this width"
                       : "unknown type code");
}

}  // namespace

Header parse_header(std::string_view bytes, const std::string& file) {
  Header h;
  h.data_offset = parse_preamble(bytes, file);
  if (bytes.size() != h.data_offset) corrupt(file + ": .npy header length mismatch");
  const uint64_t dict_start = static_cast<uint8_t>(bytes[6]) == 1 ? 10 : 12;
  LiteralParser p(bytes.substr(dict_start), dict_start, file);
  p.expect('{');
  std::set<std::string> seen;
  while (!p.accept('}')) {
    std::string key = p.string_literal();
    if (!seen.insert(key).second) p.malformed("key '" + key + "' appears twice");
    p.expect(':');
    if (key == "descr") {
      if (p.peek_list())
        unsupported(file + ": .npy structured dtypes (a list descr) are not supported");
      apply_descr(p.string_literal(), h, file);
    } else if (key == "fortran_order") {
      h.fortran_order = p.boolean_literal();
    } else if (key == "shape") {
      h.shape = p.shape_literal();
    } else {
      unsupported(file + ": .npy header has key '" + key +
                  "' (known: descr, fortran_order, shape)");
    }
    if (!p.accept(',')) {
      p.expect('}');
      break;
    }
  }
  p.expect_padding();
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!seen.count(key)) corrupt(file + ": .npy header lacks the key '" + key + "'");
  // Element count and data size, refusing overflow as NumPy does: the
  // non-zero dimensions times the element size must fit a signed 64-bit size
  // even when another dimension is 0 (strides still multiply them).
  uint64_t extent = h.element_size ? h.element_size : 1;
  bool empty = h.element_size == 0;
  for (uint64_t e : h.shape) {
    if (e == 0) {
      empty = true;
      continue;
    }
    if (extent > uint64_t(INT64_MAX) / e) corrupt(file + ": .npy shape overflows 64 bits");
    extent *= e;
  }
  h.data_size = empty ? 0 : extent;
  return h;
}

std::string descr_for(std::string_view dtype, const std::string& file) {
  static const std::pair<std::string_view, const char*> kDescrs[] = {
      {"bool", "|b1"},      {"int8", "|i1"},       {"int16", "<i2"},   {"int32", "<i4"},
      {"int64", "<i8"},     {"uint8", "|u1"},      {"uint16", "<u2"},  {"uint32", "<u4"},
      {"uint64", "<u8"},    {"float32", "<f4"},    {"float64", "<f8"}, {"float16", "<f2"},
      {"complex64", "<c8"}, {"complex128", "<c16"}};
  for (const auto& [name, descr] : kDescrs)
    if (name == dtype) return descr;
  unsupported(file + ": dtype '" + std::string(dtype) + "' has no .npy equivalent");
}

std::string format_header(std::string_view dtype, const std::vector<uint64_t>& shape,
                          const std::string& file) {
  std::string dict =
      "{'descr': '" + descr_for(dtype, file) + "', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < shape.size(); ++d) dict += (d ? ", " : "") + std::to_string(shape[d]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  // Version 1.0 has a 2-byte length; 2.0 a 4-byte one.
  for (int major : {1, 2}) {
    const size_t preamble = major == 1 ? 10 : 12;
    size_t total = preamble + dict.size() + 1;  // + '\n'
    size_t padded = (total + 63) / 64 * 64;
    size_t length = padded - preamble;
    if (major == 1 && length > 0xffff) continue;
    std::string out(kMagic, kMagicSize);
    out += static_cast<char>(major);
    out += '\0';
    char len[4];
    if (major == 1) {
      stowage::sdk::store_le<uint16_t>(len, static_cast<uint16_t>(length));
      out.append(len, 2);
    } else {
      stowage::sdk::store_le<uint32_t>(len, static_cast<uint32_t>(length));
      out.append(len, 4);
    }
    out += dict;
    out.append(padded - total, ' ');
    out += '\n';
    return out;
  }
  unsupported(file + ": .npy header would exceed 4 GiB");
}

}  // namespace npy
