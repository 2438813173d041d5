// datg_layout.cpp -- footer, metadata strings and modified UTF-8 (pure logic).
#include "datg_layout.hpp"

#include <stowage/plugin_util.hpp>

#include <cstdio>

namespace datg {

namespace sdk = stowage::sdk;

namespace {

constexpr uint8_t kMagic[4] = {'U', 'M', 'C', 'G'};

std::string hex_byte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", b);
  return buf;
}

// Checks the footer's internal consistency; `file_size` bounds the offsets.
void validate_footer(const Footer& f, uint64_t file_size, const std::string& file) {
  const std::string where = file + ": datg footer: ";
  if (f.rows < 0) sdk::corrupt(where + "negative row count " + std::to_string(f.rows));
  if (f.cols < 0) sdk::corrupt(where + "negative column count " + std::to_string(f.cols));
  if (f.rows_per_block < 1)
    sdk::corrupt(where + "rows per block is " + std::to_string(f.rows_per_block) +
                 ", must be >= 1");
  const uint64_t strings_end = file_size - kFooterSize;
  if (f.metadata_offset > strings_end)
    sdk::corrupt(where + "metadata offset " + std::to_string(f.metadata_offset) +
                 " lies beyond the footer at " + std::to_string(strings_end));
  if (f.index_offset > f.metadata_offset)
    sdk::corrupt(where + "index offset " + std::to_string(f.index_offset) +
                 " lies after the metadata offset " + std::to_string(f.metadata_offset));
  // Each block is a container of at least kMinContainerSize bytes before the index.
  const uint64_t blocks = block_count(f.rows, f.rows_per_block);
  if (blocks > f.index_offset / kMinContainerSize)
    sdk::corrupt(where + std::to_string(blocks) + " blocks cannot fit in the " +
                 std::to_string(f.index_offset) + " bytes before the index");
  // Values cannot decompress from fewer bytes than LZ4's best ratio allows.
  const unsigned __int128 value_bytes =
      static_cast<unsigned __int128>(f.rows) * static_cast<uint64_t>(f.cols) * 8;
  if (value_bytes > static_cast<unsigned __int128>(f.index_offset) * kMaxLz4Ratio + 4096)
    sdk::corrupt(where + std::to_string(f.rows) + " x " + std::to_string(f.cols) +
                 " doubles cannot be stored in " + std::to_string(f.index_offset) + " bytes");
}

}  // namespace

Footer parse_footer(const uint8_t* p, uint64_t file_size, const std::string& file) {
  if (file_size < kFooterSize)
    sdk::corrupt(file + ": file is " + std::to_string(file_size) +
                 " bytes, too short for the 44-byte datg footer (truncated?)");
  if (std::memcmp(p + 40, kMagic, 4) != 0)
    sdk::corrupt(file +
                 ": not a datg file: the last 4 bytes are not the magic \"UMCG\" "
                 "(truncated or not datg)");
  for (int i = 36; i < 39; ++i)
    if (p[i] != 0)
      sdk::corrupt(file + ": datg footer: reserved byte " + std::to_string(i - 36) + " is " +
                   hex_byte(p[i]) + ", must be 0 (file from a newer format version?)");
  const uint8_t flag = p[39];
  if (flag != kFlagLz4Block && flag != kFlagLz4Frame)
    sdk::fail(STOWAGE_UNSUPPORTED, file + ": datg footer: flag byte is " + hex_byte(flag) +
                                       "; only 0x00 (LZ4Block) and 0x01 (LZ4 frame) are defined");
  Footer f;
  f.created_seconds = static_cast<int64_t>(sdk::load_be<uint64_t>(p + 0));
  f.rows = static_cast<int32_t>(sdk::load_be<uint32_t>(p + 8));
  f.cols = static_cast<int32_t>(sdk::load_be<uint32_t>(p + 12));
  const int64_t index_offset = static_cast<int64_t>(sdk::load_be<uint64_t>(p + 16));
  const int64_t metadata_offset = static_cast<int64_t>(sdk::load_be<uint64_t>(p + 24));
  f.rows_per_block = static_cast<int32_t>(sdk::load_be<uint32_t>(p + 32));
  f.flag = flag;
  if (index_offset < 0 || metadata_offset < 0)
    sdk::corrupt(file + ": datg footer: negative index or metadata offset");
  f.index_offset = static_cast<uint64_t>(index_offset);
  f.metadata_offset = static_cast<uint64_t>(metadata_offset);
  validate_footer(f, file_size, file);
  return f;
}

std::array<uint8_t, kFooterSize> encode_footer(const Footer& f) {
  std::array<uint8_t, kFooterSize> out{};
  sdk::store_be<uint64_t>(out.data() + 0, static_cast<uint64_t>(f.created_seconds));
  sdk::store_be<uint32_t>(out.data() + 8, static_cast<uint32_t>(f.rows));
  sdk::store_be<uint32_t>(out.data() + 12, static_cast<uint32_t>(f.cols));
  sdk::store_be<uint64_t>(out.data() + 16, f.index_offset);
  sdk::store_be<uint64_t>(out.data() + 24, f.metadata_offset);
  sdk::store_be<uint32_t>(out.data() + 32, static_cast<uint32_t>(f.rows_per_block));
  out[39] = f.flag;  // 36..38 stay reserved zeros
  std::memcpy(out.data() + 40, kMagic, 4);
  return out;
}

uint64_t block_count(int64_t rows, int64_t rows_per_block) {
  if (rows <= 0) return 0;
  return static_cast<uint64_t>((rows + rows_per_block - 1) / rows_per_block);
}

int64_t rows_in_block(const Footer& f, uint64_t block) {
  const int64_t first = static_cast<int64_t>(block) * f.rows_per_block;
  return std::min(f.rows_per_block, f.rows - first);
}

int64_t default_rows_per_block(int64_t cols) {
  // The Java writer divides by zero here; 0 columns need no blocking at all.
  if (cols <= 0) return 100;
  return cols < 100 ? (100 + cols - 1) / cols : 1;
}

// ---- metadata strings --------------------------------------------------------

Metadata parse_metadata(std::string_view bytes, const std::string& file) {
  static const char* const kNames[3] = {"dataset name", "row entity name", "column entity name"};
  std::string values[3];
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string what = file + ": datg metadata " + kNames[i];
    if (bytes.size() - pos < 2) sdk::corrupt(what + ": the metadata block ends before its length");
    const size_t length = sdk::load_be<uint16_t>(bytes.data() + pos);
    pos += 2;
    if (bytes.size() - pos < length)
      sdk::corrupt(what + ": length " + std::to_string(length) + " runs past the footer");
    values[i] = modified_utf8_to_utf8(bytes.substr(pos, length), what);
    pos += length;
  }
  if (pos != bytes.size())
    sdk::corrupt(file + ": datg metadata: " + std::to_string(bytes.size() - pos) +
                 " unexpected bytes between the three strings and the footer");
  return {values[0], values[1], values[2]};
}

std::string encode_metadata(const Metadata& m) {
  std::string out;
  const std::pair<const std::string*, const char*> fields[3] = {
      {&m.dataset_name, "dataset_name"},
      {&m.row_entity, "row_entity"},
      {&m.column_entity, "column_entity"}};
  for (const auto& [value, name] : fields) {
    const std::string encoded =
        utf8_to_modified_utf8(*value, std::string("datg attribute ") + name);
    if (encoded.size() > 65535)
      sdk::invalid(std::string("datg attribute ") + name + " is " + std::to_string(encoded.size()) +
                   " bytes in modified UTF-8; Java's writeUTF allows at most 65535");
    uint8_t length[2];
    sdk::store_be<uint16_t>(length, static_cast<uint16_t>(encoded.size()));
    out.append(reinterpret_cast<const char*>(length), 2);
    out += encoded;
  }
  return out;
}

// ---- modified UTF-8 ----------------------------------------------------------

namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_high_surrogate(uint32_t u) { return u >= 0xD800 && u <= 0xDBFF; }
bool is_low_surrogate(uint32_t u) { return u >= 0xDC00 && u <= 0xDFFF; }

// Reads one UTF-16 code unit the way DataInput.readUTF does; advances pos.
uint32_t read_java_unit(std::string_view s, size_t& pos, const std::string& what) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b = byte(pos);
  const auto bad = [&](const std::string& why) -> uint32_t {
    sdk::corrupt(what + ": bad modified UTF-8 at byte " + std::to_string(pos) + " (" + hex_byte(b) +
                 "): " + why);
  };
  if (b < 0x80) {
    pos += 1;
    return b;  // readUTF also accepts a raw 00
  }
  const size_t length = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : 0;
  if (length == 0)
    return bad(b >= 0xF0 ? "a 4-byte UTF-8 sequence; Java stores such characters as surrogate pairs"
                         : "not a valid lead byte");
  if (s.size() - pos < length) return bad("the sequence is cut off by the end of the string");
  for (size_t i = 1; i < length; ++i)
    if ((byte(pos + i) & 0xC0) != 0x80) return bad("missing continuation byte");
  uint32_t unit =
      length == 2 ? ((b & 0x1Fu) << 6) | (byte(pos + 1) & 0x3Fu)
                  : ((b & 0x0Fu) << 12) | ((byte(pos + 1) & 0x3Fu) << 6) | (byte(pos + 2) & 0x3Fu);
  pos += length;
  return unit;
}

}  // namespace

std::string modified_utf8_to_utf8(std::string_view s, const std::string& what) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    uint32_t unit = read_java_unit(s, pos, what);
    if (is_high_surrogate(unit) && pos < s.size()) {
      size_t next = pos;
      uint32_t low = read_java_unit(s, next, what);
      if (is_low_surrogate(low)) {
        append_utf8(out, 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
        pos = next;
        continue;
      }
    }
    if (is_high_surrogate(unit) || is_low_surrogate(unit))
      sdk::corrupt(what + ": bad modified UTF-8 at byte " + std::to_string(start) +
                   ": unpaired UTF-16 surrogate");
    append_utf8(out, unit);
  }
  return out;
}

namespace {

// Decodes one UTF-8 character at pos; returns false if malformed.
bool next_code_point(std::string_view s, size_t& pos, uint32_t& cp) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b = byte(pos);
  size_t length;
  uint32_t min;
  if (b < 0x80) {
    cp = b;
    pos += 1;
    return true;
  } else if ((b & 0xE0) == 0xC0) {
    length = 2, cp = b & 0x1F, min = 0x80;
  } else if ((b & 0xF0) == 0xE0) {
    length = 3, cp = b & 0x0F, min = 0x800;
  } else if ((b & 0xF8) == 0xF0) {
    length = 4, cp = b & 0x07, min = 0x10000;
  } else {
    return false;
  }
  if (s.size() - pos < length) return false;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (byte(pos + i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  pos += length;
  return true;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  size_t pos = 0;
  uint32_t cp;
  while (pos < s.size())
    if (!next_code_point(s, pos, cp)) return false;
  return true;
}

std::string utf8_to_modified_utf8(std::string_view s, const std::string& what) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t pos = 0;
  while (pos < s.size()) {
    uint32_t cp;
    const size_t start = pos;
    if (!next_code_point(s, pos, cp))
      sdk::invalid(what + ": not valid UTF-8 at byte " + std::to_string(start));
    if (cp == 0) {
      out += "\xC0\x80";  // NUL never appears as a raw byte in modified UTF-8
    } else if (cp >= 0x10000) {
      append_utf8(out, 0xD800 + ((cp - 0x10000) >> 10));  // each surrogate as 3 bytes
      append_utf8(out, 0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

}  // namespace datg
