#include "metadata_v3.hpp"

#include "strings.hpp"

#include <stowage/half.hpp>
#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <boost/crc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace zarr {

using stowage::sdk::corrupt;
using stowage::sdk::unsupported;

uint32_t crc32c(const void* data, size_t size) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

namespace {

const json& field(const json& j, const char* key, const std::string& file, const char* where) {
  if (!j.is_object() || !j.contains(key)) corrupt(file + ": " + where + " has no \"" + key + "\"");
  return j[key];
}

std::vector<uint64_t> extents(const json& a, const char* what, uint64_t min,
                              const std::string& file) {
  if (!a.is_array())
    corrupt(file + ": \"" + what + "\" must be an array of integers, got " + a.dump());
  std::vector<uint64_t> out;
  for (const json& v : a) {
    const bool non_negative =
        v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!non_negative || v.get<uint64_t>() < min || v.get<uint64_t>() > uint64_t(INT64_MAX))
      corrupt(file + ": \"" + what + "\" has " + v.dump() +
              "; each entry must be an integer >= " + std::to_string(min));
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

// A codec's name and configuration ({} when absent).
std::pair<std::string, json> codec_parts(const json& c, const std::string& file) {
  if (c.is_string()) return {c.get<std::string>(), json::object()};
  if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
    corrupt(file + ": a codec must be an object with a string \"name\", got " + c.dump());
  json config = c.value("configuration", json::object());
  if (!config.is_object())
    corrupt(file + ": codec \"" + c["name"].get<std::string>() +
            "\": \"configuration\" must be an object");
  return {c["name"].get<std::string>(), config};
}

// A bytes -> bytes codec of zarr.json: crc32c, or one a codec plugin
// answers to, resolved later (codec_names.hpp).
BytesCodec bytes_codec(const std::string& name, const json& config) {
  BytesCodec c;
  c.crc32c = name == "crc32c";
  if (!c.crc32c) c.entry = json{{"name", name}, {"configuration", config}};
  return c;
}

// What a codec chain holds: the layout transposition, the byte order, the
// bytes -> bytes codecs, and the sharding_indexed codec if it is the array ->
// bytes codec.
struct Chain {
  bool fortran = false, big_endian = false, has_bytes = false;
  std::vector<BytesCodec> codecs;
  json filters;  // array -> array codecs but a first C or F order "transpose"
  const json* sharding = nullptr;
};

// A first "transpose" in C order (the identity) or F order (the reversal)
// is the chunks' layout, which this plugin reads and writes with no copy;
// null for any other, which the transpose codec plugin does as a filter.
std::optional<bool> layout_transpose(const json& config, size_t ndim) {
  const json order = config.value("order", json());
  if (order == "C" || order == "F") return order == "F";
  if (!order.is_array() || order.size() != ndim) return std::nullopt;
  bool identity = true, reversed = true;
  for (size_t d = 0; d < ndim; ++d) {
    if (!order[d].is_number_unsigned()) return std::nullopt;
    identity = identity && order[d] == d;
    reversed = reversed && order[d] == ndim - 1 - d;
  }
  if (identity) return false;
  if (reversed) return true;
  return std::nullopt;
}

Chain parse_chain(const json& codecs, size_t ndim, size_t item_size, const std::string& file,
                  bool inner) {
  if (!codecs.is_array() || codecs.empty())
    corrupt(file + ": \"codecs\" must be a non-empty array");
  Chain chain;
  bool seen_array_to_bytes = false;
  for (size_t i = 0; i < codecs.size(); ++i) {
    auto [name, config] = codec_parts(codecs[i], file);
    if (name == "transpose" && seen_array_to_bytes)
      corrupt(file + ": codec \"transpose\" must come before \"bytes\"");
    if (name == "transpose" && i == 0)
      if (std::optional<bool> fortran = layout_transpose(config, ndim)) {
        chain.fortran = *fortran && ndim > 1;
        continue;
      }
    if (name == "bytes" || name == "sharding_indexed") {
      if (seen_array_to_bytes)
        corrupt(file + ": codec \"" + name + "\" follows another array -> bytes codec");
      seen_array_to_bytes = true;
      if (name == "sharding_indexed") {
        if (inner) unsupported(file + ": nested \"sharding_indexed\" codecs are not supported");
        if (chain.fortran || !chain.filters.is_null())
          unsupported(file + ": \"" +
                      (chain.fortran ? std::string("transpose")
                                     : chain.filters[0]["name"].get<std::string>()) +
                      "\" before \"sharding_indexed\" is not supported");
        chain.sharding = &codecs[i];
        continue;
      }
      chain.has_bytes = true;
      const json endian = config.value("endian", json(item_size == 1 ? "little" : ""));
      if (endian != "little" && endian != "big")
        corrupt(file + ": codec \"bytes\": \"endian\" must be \"little\" or \"big\", got " +
                endian.dump());
      chain.big_endian = endian == "big" && item_size > 1;
    } else if (!seen_array_to_bytes) {
      // An array -> array codec plugin (filter_chain.hpp), resolved later:
      // any but a first C or F order transpose.
      chain.filters.push_back(json{{"name", name}, {"configuration", config}});
    } else {
      if (chain.sharding)
        unsupported(file + ": codec \"" + name +
                    "\" after \"sharding_indexed\" is not supported (it would need whole shards)");
      chain.codecs.push_back(bytes_codec(name, config));
    }
  }
  if (!seen_array_to_bytes)
    corrupt(file + ": \"codecs\" has no array -> bytes codec (\"bytes\" or \"sharding_indexed\")");
  return chain;
}

// The index codecs of a shard: "bytes" (either endian) and an optional crc32c.
void parse_index_codecs(const json& codecs, V3Layout& layout, const std::string& file) {
  if (!codecs.is_array() || codecs.empty())
    corrupt(file + ": sharding \"index_codecs\" must be a non-empty array");
  auto [first, config] = codec_parts(codecs[0], file);
  if (first != "bytes")
    unsupported(file + ": sharding \"index_codecs\" must start with \"bytes\", got \"" + first +
                "\"");
  const json endian = config.value("endian", json("little"));
  if (endian != "little" && endian != "big")
    corrupt(file + ": index codec \"bytes\": bad \"endian\" " + endian.dump());
  layout.index_big_endian = endian == "big";
  for (size_t i = 1; i < codecs.size(); ++i) {
    auto [name, unused] = codec_parts(codecs[i], file);
    if (name != "crc32c" || layout.index_crc32c)
      unsupported(file + ": sharding index codec \"" + name +
                  "\" is not supported (bytes and one crc32c are)");
    layout.index_crc32c = true;
  }
}

// The sharding_indexed codec: inner chunks, their codecs, the index.
void parse_sharding(const json& codec, ArrayMeta& a, V3Layout& layout, const std::string& file) {
  const json config = codec_parts(codec, file).second;
  layout.sharded = true;
  layout.shard = a.chunks;
  a.chunks = extents(field(config, "chunk_shape", file, "codec \"sharding_indexed\""),
                     "chunk_shape", 1, file);
  if (a.chunks.size() != a.ndim())
    corrupt(file + ": sharding \"chunk_shape\" has " + std::to_string(a.chunks.size()) +
            " entries for " + std::to_string(a.ndim()) + " dimensions");
  layout.per_shard.resize(a.ndim());
  layout.chunks_per_shard = 1;
  for (size_t d = 0; d < a.ndim(); ++d) {
    if (layout.shard[d] % a.chunks[d])
      corrupt(file + ": shard shape " + json(layout.shard).dump() +
              " is not a multiple of the inner chunk shape " + json(a.chunks).dump());
    layout.per_shard[d] = layout.shard[d] / a.chunks[d];
    if (layout.chunks_per_shard > UINT64_MAX / 16 / layout.per_shard[d])
      corrupt(file + ": shard shape " + json(layout.shard).dump() + " in inner chunks " +
              json(a.chunks).dump() + " has too many inner chunks to index (the count overflows)");
    layout.chunks_per_shard *= layout.per_shard[d];
  }
  // Indexes are read whole; beyond 2^24 entries (256 MiB) is not a real shard.
  if (layout.chunks_per_shard > (uint64_t(1) << 24))
    unsupported(file + ": " + std::to_string(layout.chunks_per_shard) +
                " inner chunks per shard is over 2^24");
  const Chain inner = parse_chain(field(config, "codecs", file, "codec \"sharding_indexed\""),
                                  a.ndim(), a.type.size, file, true);
  a.fortran = inner.fortran;
  a.type = *data_type_for(a.type.name, inner.big_endian);
  layout.codecs = inner.codecs;
  layout.filters = inner.filters;
  parse_index_codecs(field(config, "index_codecs", file, "codec \"sharding_indexed\""), layout,
                     file);
  const json location = config.value("index_location", json("end"));
  if (location != "start" && location != "end")
    corrupt(file + ": sharding \"index_location\" must be \"start\" or \"end\", got " +
            location.dump());
  layout.index_at_end = location == "end";
}

// "0x7fc00000": a float's bits, as v3 allows for NaN payloads.
FillValue hex_float_fill(const std::string& s, const DataType& t, const std::string& file) {
  const size_t digits = 2 * t.size;
  if (s.size() != 2 + digits ||
      s.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos)
    corrupt(file + ": \"fill_value\" \"" + s + "\" is not " + std::to_string(digits) +
            " hex digits after 0x");
  const uint64_t bits = std::stoull(s.substr(2), nullptr, 16);
  double d;
  if (t.size == 2) {
    d = stowage::sdk::half_to_double(uint16_t(bits));
  } else if (t.size == 4) {
    float f;
    const uint32_t b = uint32_t(bits);
    std::memcpy(&f, &b, 4);
    d = f;
  } else {
    std::memcpy(&d, &bits, 8);
  }
  const json as = std::isnan(d)   ? json("NaN")
                  : std::isinf(d) ? json(d > 0 ? "Infinity" : "-Infinity")
                                  : json(d);
  FillValue f = parse_fill_value(as, t, file);
  f.in_file = s;
  for (size_t i = 0; i < t.size; ++i)
    f.bytes[t.big_endian ? t.size - 1 - i : i] = uint8_t(bits >> (8 * i));
  return f;
}

bool is_hex(const json& v) { return v.is_string() && v.get<std::string>().rfind("0x", 0) == 0; }

// A v3 fill value: a float's, or each part of a complex [re, im], may be its
// bits in hex ("0x7e00"); the rest is as in v2.
FillValue v3_fill(const json& fill, const DataType& t, const std::string& file) {
  if (t.kind == 'f' && is_hex(fill)) return hex_float_fill(fill.get<std::string>(), t, file);
  if (t.kind == 'c' && fill.is_array() && fill.size() == 2 &&
      (is_hex(fill[0]) || is_hex(fill[1]))) {
    const DataType part = complex_part_type(t);
    return join_complex_fill(v3_fill(fill[0], part, file), v3_fill(fill[1], part, file));
  }
  return parse_fill_value(fill, t, file);
}

}  // namespace

std::string v3_node_type(const json& doc, const std::string& file) {
  if (!doc.is_object()) corrupt(file + ": must hold a JSON object");
  if (doc.value("zarr_format", json()) != 3)
    corrupt(file + ": \"zarr_format\" must be 3, got " + doc.value("zarr_format", json()).dump());
  const json type = doc.value("node_type", json());
  if (type != "group" && type != "array")
    corrupt(file + ": \"node_type\" must be \"group\" or \"array\", got " + type.dump());
  return type.get<std::string>();
}

ArrayMeta parse_array_v3(const json& doc, const std::string& file) {
  if (v3_node_type(doc, file) != "array") corrupt(file + ": is a group, not an array");
  if (is_vlen_data_type_v3(doc)) return parse_strings_v3(doc, file);  // strings.cpp
  ArrayMeta a;
  auto layout = std::make_shared<V3Layout>();
  const json& dtype = field(doc, "data_type", file, "the array");
  if (!dtype.is_string())
    unsupported(file + ": \"data_type\" " + dtype.dump() +
                " is not supported (a name such as \"uint16\")");
  const std::string name = dtype.get<std::string>();
  std::optional<DataType> type = name == "boolean" ? std::nullopt : data_type_for(name, false);
  if (!type)
    unsupported(
        file + ": \"data_type\" \"" + name +
        "\" is not supported (bool, int8..int64, uint8..uint64, float16..float64, complex64 "
        "and complex128 are)");
  a.type = *type;
  a.shape = extents(field(doc, "shape", file, "the array"), "shape", 0, file);

  const json& grid = field(doc, "chunk_grid", file, "the array");
  auto [grid_name, grid_config] = codec_parts(grid, file);
  if (grid_name != "regular")
    unsupported(file + ": chunk grid \"" + grid_name + "\" is not supported (regular is)");
  a.chunks = extents(field(grid_config, "chunk_shape", file, "chunk_grid"), "chunk_shape", 1, file);
  if (a.chunks.size() != a.shape.size())
    corrupt(file + ": \"shape\" has " + std::to_string(a.shape.size()) +
            " entries but \"chunk_shape\" has " + std::to_string(a.chunks.size()));

  const json keys = doc.value("chunk_key_encoding", json{{"name", "default"}});
  auto [key_name, key_config] = codec_parts(keys, file);
  if (key_name != "default" && key_name != "v2")
    unsupported(file + ": chunk key encoding \"" + key_name +
                "\" is not supported (default and v2 are)");
  layout->default_keys = key_name == "default";
  const json separator = key_config.value("separator", json(layout->default_keys ? "/" : "."));
  if (separator != "." && separator != "/")
    corrupt(file + ": chunk key \"separator\" must be \".\" or \"/\", got " + separator.dump());
  layout->separator = separator.get<std::string>()[0];

  if (doc.contains("storage_transformers") && !doc["storage_transformers"].empty())
    unsupported(file + ": \"storage_transformers\" are not supported");

  const json& codecs = field(doc, "codecs", file, "the array");
  const Chain chain = parse_chain(codecs, a.ndim(), a.type.size, file, false);
  if (chain.sharding) {
    parse_sharding(*chain.sharding, a, *layout, file);
  } else {
    a.fortran = chain.fortran;
    a.type = *data_type_for(a.type.name, chain.big_endian);
    layout->codecs = chain.codecs;
    layout->filters = chain.filters;
  }
  a.type.typestr = name;
  uint64_t bytes = a.type.size;
  for (uint64_t c : a.chunks)
    if (c > kMaxChunkBytes || (bytes *= c) > kMaxChunkBytes)
      unsupported(file + ": a chunk of " + json(a.chunks).dump() + " " + name + " is over 2 GiB");
  uint64_t count = 1;  // the number of (inner) chunks must be countable
  for (size_t d = 0; d < a.ndim(); ++d)
    if (a.grid(d) && count > UINT64_MAX / a.grid(d))
      corrupt(file + ": \"shape\" " + json(a.shape).dump() + " has more than 2^64 chunks");
    else if (a.grid(d))
      count *= a.grid(d);

  const json& fill = field(doc, "fill_value", file, "the array");
  if (fill.is_null()) corrupt(file + ": \"fill_value\" must not be null in Zarr v3");
  a.fill = v3_fill(fill, a.type, file);

  a.compressor = codecs;  // as in the file, for another Zarr store
  a.v3 = std::move(layout);
  return a;
}

json v3_codec_json(const BytesCodec& c) {
  if (c.crc32c) return json{{"name", "crc32c"}};
  return c.entry;
}

json array_json_v3(const ArrayMeta& a, const json& attributes, const json& dimension_names) {
  const V3Layout& l = *a.v3;
  json chunk_codecs = json::array();
  const size_t n = a.ndim();
  if (a.fortran && n > 1) {
    json order = json::array();
    for (size_t d = 0; d < n; ++d) order.push_back(n - 1 - d);
    chunk_codecs.push_back(json{{"name", "transpose"}, {"configuration", {{"order", order}}}});
  }
  if (l.filters.is_array())
    for (const json& f : l.filters) chunk_codecs.push_back(f);
  chunk_codecs.push_back(json{
      {"name", "bytes"}, {"configuration", {{"endian", a.type.big_endian ? "big" : "little"}}}});
  for (const BytesCodec& c : l.codecs) chunk_codecs.push_back(v3_codec_json(c));
  json codecs = chunk_codecs;
  if (l.sharded)
    codecs = json::array(
        {json{{"name", "sharding_indexed"},
              {"configuration",
               {{"chunk_shape", a.chunks},
                {"codecs", chunk_codecs},
                {"index_codecs",
                 json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                              json{{"name", "crc32c"}}})},
                {"index_location", l.index_at_end ? "end" : "start"}}}}});
  return array_document_v3(a, a.type.name, l.sharded ? l.shard : a.chunks, codecs, attributes,
                           dimension_names);
}

json array_document_v3(const ArrayMeta& a, const std::string& data_type,
                       const std::vector<uint64_t>& grid, const json& codecs,
                       const json& attributes, const json& dimension_names) {
  const V3Layout& l = *a.v3;
  json j = json::object();
  j["zarr_format"] = 3;
  j["node_type"] = "array";
  j["shape"] = a.shape;
  j["data_type"] = data_type;
  j["chunk_grid"] = json{{"name", "regular"}, {"configuration", {{"chunk_shape", grid}}}};
  j["chunk_key_encoding"] = json{{"name", l.default_keys ? "default" : "v2"},
                                 {"configuration", {{"separator", std::string(1, l.separator)}}}};
  j["fill_value"] = a.fill.in_file;
  j["codecs"] = codecs;
  j["attributes"] = attributes;
  if (!dimension_names.is_null()) j["dimension_names"] = dimension_names;
  return j;
}

json group_json_v3(const json& attributes) {
  return json{{"zarr_format", 3}, {"node_type", "group"}, {"attributes", attributes}};
}

}  // namespace zarr
