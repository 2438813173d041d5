// stowage/array_codec.hpp -- array -> array codecs (filters) in C++: the
// chunk spec they are made for, and the adapter over
// stowage_codec_vtable.create_array. Needs nlohmann_json (header-only,
// stays inside the plugin).
//
// An array -> array codec transforms a whole chunk element by element and
// must know its elements (numcodecs' delta, shuffle and astype; Zarr v3's
// array -> array codecs). Its class is the immutable configuration for
// chunks of one spec, as a bytes -> bytes codec's is (stowage/plugin.hpp),
// with two differences:
//     MyFilter(const sdk::Host& host, std::string_view config_json,
//              const sdk::ChunkSpec& decoded);   // the chunk it is applied to
//     sdk::ChunkSpec encoded() const;            // the chunk it encodes into
// bound(n) is the encoded chunk's size (n is the decoded chunk's), encode
// takes a whole decoded chunk and decode fills a whole one. Then:
//     STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(MyFilter, "myid", "1.0.0", "one line",
//                                       STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | ...)
// Names, params() and Context work as for bytes -> bytes codecs; with no
// names it is numcodecs filter `myid` in a .zarray and `myid` or
// `numcodecs.myid` before "bytes" in a zarr.json.
#ifndef STOWAGE_ARRAY_CODEC_HPP
#define STOWAGE_ARRAY_CODEC_HPP

#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::sdk {

// One element's type as a numpy typestr: '<', '>' or '|' (no byte order),
// a kind ('b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex) and
// its size in bytes ("<i4", ">f8", "|b1", "<c16").
struct ElementType {
  char kind = 'u';
  uint32_t size = 1;
  bool big_endian = false;

  // INVALID_ARGUMENT naming the text for anything else ("|O", "<M8[ns]").
  static ElementType parse(std::string_view typestr) {
    auto bad = [&] { invalid("\"" + std::string(typestr) + "\" is no numeric numpy typestr"); };
    if (typestr.size() < 3 || std::string_view("<>|").find(typestr[0]) == std::string_view::npos)
      bad();
    ElementType t;
    t.kind = typestr[1];
    t.big_endian = typestr[0] == '>';
    uint32_t size = 0;
    for (char c : typestr.substr(2)) {
      if (c < '0' || c > '9' || size > 100) bad();
      size = size * 10 + uint32_t(c - '0');
    }
    t.size = size;
    const bool ok =
        (t.kind == 'b' && size == 1) ||
        ((t.kind == 'i' || t.kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
        (t.kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
        (t.kind == 'c' && (size == 8 || size == 16));
    if (!ok) bad();
    return t;
  }
  // The typestr; one-byte types have no byte order ("|u1").
  std::string typestr() const {
    return std::string(1, size == 1 ? '|' : big_endian ? '>' : '<') + kind + std::to_string(size);
  }
  // Whether its bytes are in this machine's order (always, for one byte).
  bool native() const { return size == 1 || big_endian != host_is_little_endian(); }
  bool operator==(const ElementType& o) const {
    return kind == o.kind && size == o.size && (size == 1 || big_endian == o.big_endian);
  }
};

// The chunk an array -> array codec is made for: its element type and
// shape (C order).
struct ChunkSpec {
  ElementType dtype;
  std::vector<uint64_t> shape;

  uint64_t elements() const {
    uint64_t n = 1;
    for (uint64_t e : shape) n *= e;
    return n;
  }
  uint64_t bytes() const { return elements() * dtype.size; }

  // {"dtype": typestr, "shape": [...]}; INVALID_ARGUMENT when malformed.
  static ChunkSpec parse(std::string_view text) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("dtype") || !j["dtype"].is_string() ||
        !j.contains("shape") || !j["shape"].is_array())
      invalid("chunk spec must be {\"dtype\": typestr, \"shape\": [...]}: " + std::string(text));
    ChunkSpec c;
    c.dtype = ElementType::parse(j["dtype"].get<std::string>());
    for (const auto& e : j["shape"]) {
      if (!e.is_number_unsigned()) invalid("chunk shape must be whole numbers: " + j.dump());
      c.shape.push_back(e.get<uint64_t>());
    }
    return c;
  }
  std::string json() const {
    return nlohmann::json{{"dtype", dtype.typestr()}, {"shape", shape}}.dump();
  }
};

// The typestr `key` of a codec config (a Param::text), `def` when absent;
// INVALID_ARGUMENT naming the codec and key when it is no numeric typestr.
inline ElementType element_type(CodecConfig& config, const char* key, const ElementType& def) {
  const std::string text = config.choice(key, def.typestr());
  try {
    return ElementType::parse(text);
  } catch (const Error& e) {
    invalid(config.type() + ": \"" + key + "\": " + e.what());
  }
}

// How many `as` elements a chunk is, viewed as them as numpy's view()
// does; INVALID_ARGUMENT naming `codec` when its bytes are no whole number.
inline uint64_t count_as(const ChunkSpec& chunk, const ElementType& as, const std::string& codec) {
  if (chunk.bytes() % as.size)
    invalid(codec + ": a chunk of " + std::to_string(chunk.bytes()) +
            " bytes is no whole number of \"" + as.typestr() + "\" elements");
  return chunk.bytes() / as.size;
}

// What a codec viewing `chunk` as `viewed` elements and storing them as
// `stored` encodes into: the chunk's shape while the viewed element size is
// the chunk's, else flat (numpy's view() reshapes).
inline ChunkSpec stored_chunk(const ChunkSpec& chunk, const ElementType& viewed,
                              const ElementType& stored) {
  ChunkSpec s;
  s.dtype = stored;
  s.shape = viewed.size == chunk.dtype.size ? chunk.shape
                                            : std::vector<uint64_t>{chunk.bytes() / viewed.size};
  return s;
}

// Checks one encode or decode call of a codec taking `whole` bytes and
// giving `out`: another input size is the caller's error when encoding
// (INVALID_ARGUMENT) and the stored data's when decoding (CORRUPT); too
// small an output buffer is the caller's.
inline void check_call(const std::string& codec, bool decoding, size_t n, uint64_t whole,
                       size_t capacity, uint64_t out) {
  if (n != whole) {
    const std::string why = codec + (decoding ? " decode: " : " encode: ") + std::to_string(n) +
                            " bytes, a chunk is " + std::to_string(whole);
    decoding ? corrupt(why) : invalid(why);
  }
  if (capacity < out) invalid(codec + ": output buffer too small");
}

namespace detail {

template <class Codec>
struct ArrayCodecTrampolines : CodecTrampolines<Codec> {
  static int create_array(const stowage_host* host, const char* config, size_t size,
                          const char* chunk, size_t chunk_size, stowage_codec_config* out,
                          stowage_sink* canonical, stowage_sink* encoded,
                          stowage_error* err) noexcept {
    return guarded(err, [&] {
      const ChunkSpec decoded = ChunkSpec::parse(sv(chunk, chunk_size));
      std::unique_ptr<Codec> codec(new Codec(Host(host), sv(config, size), decoded));
      if (canonical) emit(canonical, codec->canonical_config());
      if (encoded) emit(encoded, codec->encoded().json());
      *out = reinterpret_cast<stowage_codec_config>(codec.release());
    });
  }
  static const stowage_codec_vtable* vtable() {
    static const stowage_codec_vtable vt = [] {
      stowage_codec_vtable v = CodecTrampolines<Codec>::common_table();
      v.create_array = create_array;
      return v;
    }();
    return &vt;
  }
};

}  // namespace detail
}  // namespace stowage::sdk

#define STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(CLASS, ID, VERSION, DESCRIPTION, CAPS)                  \
  STOWAGE_DEFINE_PLUGIN_(STOWAGE_KIND_ARRAY_CODEC, ID, VERSION, DESCRIPTION,                      \
                         ::stowage::sdk::detail::CodecTrampolines<CLASS>::params_schema(), CAPS,  \
                         ::stowage::sdk::detail::ArrayCodecTrampolines<CLASS>::vtable(), nullptr, \
                         nullptr, nullptr)

#endif  // STOWAGE_ARRAY_CODEC_HPP
