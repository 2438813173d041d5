// datg_layout.hpp -- the byte layout of a systemsgenetics ".datg" file, as pure
// functions (no I/O): the 44-byte footer, the three metadata strings in Java's
// modified UTF-8, and the rows-per-block rule. See docs/formats/datg.md.
//
//   offset 0 ....... one LZ4 container per block of rows (big-endian doubles)
//   index_offset ... one LZ4 container holding int64 BE block offsets
//   metadata_offset  three writeUTF strings
//   size - 44 ...... footer (everything big-endian), ending in "UMCG"
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace datg {

inline constexpr size_t kFooterSize = 44;
inline constexpr uint8_t kFlagLz4Block = 0;  // deprecated lz4-java LZ4Block streams
inline constexpr uint8_t kFlagLz4Frame = 1;  // standard LZ4 frames (current writer)
// The wiki's writer limit (cols * 8 bytes must fit lz4-java's 32 MiB chunk).
inline constexpr int64_t kMaxWriterColumns = 4194304;
// The Java writer stops before Integer.MAX_VALUE - 8 rows.
inline constexpr int64_t kMaxWriterRows = 2147483647LL - 8;
// The Java writer's limit on the bytes of one block (cols * 8 * rows_per_block).
inline constexpr int64_t kMaxBlockBytes = 2000000000LL;
// The smallest possible container: an LZ4 frame header (7) plus end mark (4).
inline constexpr uint64_t kMinContainerSize = 11;
// LZ4 never expands data by more than this factor when decoding.
inline constexpr uint64_t kMaxLz4Ratio = 256;

struct Footer {
  int64_t created_seconds = 0;  // seconds since 1970-01-01 UTC
  int64_t rows = 0;
  int64_t cols = 0;
  uint64_t index_offset = 0;     // absolute offset of the index container
  uint64_t metadata_offset = 0;  // absolute offset of the three strings
  int64_t rows_per_block = 1;
  uint8_t flag = kFlagLz4Frame;
};

// Parses and validates the last 44 bytes of a file of `file_size` bytes.
// `file` names the file in error messages.
Footer parse_footer(const uint8_t* bytes, uint64_t file_size, const std::string& file);
std::array<uint8_t, kFooterSize> encode_footer(const Footer& footer);

uint64_t block_count(int64_t rows, int64_t rows_per_block);
// Rows in block b (only the last block may be short).
int64_t rows_in_block(const Footer& footer, uint64_t block);
// The reference writer's default: at least ~100 values per block.
int64_t default_rows_per_block(int64_t cols);

// The three strings stored after the index.
struct Metadata {
  std::string dataset_name;
  std::string row_entity;     // what the rows are ("genes")
  std::string column_entity;  // what the columns are ("samples")
};

// Parses the strings in [metadata_offset, size - 44): exactly three writeUTF
// strings, converted to standard UTF-8.
Metadata parse_metadata(std::string_view bytes, const std::string& file);
std::string encode_metadata(const Metadata& metadata);

// Java modified UTF-8 (DataInput.readUTF without the length) -> UTF-8:
// C0 80 is NUL, surrogate pairs (two 3-byte sequences) become one character.
std::string modified_utf8_to_utf8(std::string_view bytes, const std::string& what);
// UTF-8 -> Java modified UTF-8; INVALID_ARGUMENT for invalid UTF-8.
std::string utf8_to_modified_utf8(std::string_view utf8, const std::string& what);
// True when `text` is well-formed UTF-8 (no surrogates, no overlongs).
bool is_valid_utf8(std::string_view text);

}  // namespace datg
