// npy_header -- the NumPy .npy header: magic, version, header length and the
// Python-literal dict {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
//
// The parser is deliberately small and strict: it understands exactly the
// literals numpy writes for plain numeric arrays and refuses anything else,
// so a file we cannot represent is an error, never a misread.
#ifndef STOWAGE_NPY_HEADER_HPP
#define STOWAGE_NPY_HEADER_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npy {

inline constexpr char kMagic[] = "\x93NUMPY";
inline constexpr size_t kMagicSize = 6;
// Headers above this are refused before being read (numpy's own reader
// refuses more than 10000 bytes by default; shapes need far less).
inline constexpr uint64_t kMaxHeaderSize = 1 << 20;
// numpy's NPY_MAXDIMS (64 since numpy 2).
inline constexpr size_t kMaxDims = 64;

// What the header says, mapped onto stowage's data model.
struct Header {
  std::string dtype;            // stowage dtype name: "bool", "int8", ..., "float64"
  size_t element_size = 0;      // bytes per element
  bool big_endian = false;      // byte order of the data
  bool fortran_order = false;   // element order of the data
  std::vector<uint64_t> shape;  // as written (C-order list of extents)
  uint64_t data_offset = 0;     // where the data starts
  uint64_t data_size = 0;       // element count * element_size

  uint64_t element_count() const;
};

// Bytes needed to know the header length: magic, version and length field.
inline constexpr size_t kPreambleSize = 12;

// Parses the fixed preamble (at least the first 10 bytes of the file;
// `prefix` holds what the file has, up to kPreambleSize) and returns the
// total header size including the preamble (= the data offset). `file`
// names the file in errors.
uint64_t parse_preamble(std::string_view prefix, const std::string& file);

// Parses a whole header (preamble included, as returned sized by
// parse_preamble) into a Header. Errors: CORRUPT for malformed literals,
// UNSUPPORTED for valid headers we do not handle (dtypes, keys).
Header parse_header(std::string_view bytes, const std::string& file);

// The numpy descr of a stowage dtype, little-endian ('<f8', '|u1', '|b1').
std::string descr_for(std::string_view dtype, const std::string& file);

// A complete header (preamble, dict, padding, '\n') for a little-endian
// C-order array, padded so the data starts 64-byte aligned; version 1.0
// when its length fits 16 bits, else 2.0.
std::string format_header(std::string_view dtype, const std::vector<uint64_t>& shape,
                          const std::string& file);

}  // namespace npy

#endif
