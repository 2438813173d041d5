// Zarr string arrays: their metadata (v2 "|O" + vlen-utf8, v3 "string" +
// vlen-utf8) and numcodecs' VLenUTF8 encoding. The store's side (reading,
// writing, describing) is strings_io.cpp.
#include "strings.hpp"

#include "metadata_v3.hpp"

#include <stowage/array_limits.hpp>
#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <algorithm>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::invalid;
using sdk::unsupported;

namespace {

// The fill value of a strings array. zarr-python writes null (v2's "no fill
// value") or 0 (its default for every dtype) for v2 strings; zarrs and
// zarr-python 3 read both as "", as here.
FillValue string_fill(const json& v, const std::string& file, int version) {
  FillValue f;
  f.in_file = v;
  if (v.is_string())
    f.for_host = v;
  else if (version == 2 && (v.is_null() || (v.is_number() && v.get<double>() == 0)))
    f.for_host = "";
  else
    corrupt(file + ": \"fill_value\" " + v.dump() + " is not a string");
  if (!valid_utf8(f.for_host.get_ref<const std::string&>()))
    corrupt(file + ": \"fill_value\" is not valid UTF-8");
  return f;
}

// v3's transpose or another array -> array codec before vlen-utf8: no peer
// here writes one to check against.
void refuse_array_codecs(const ArrayMeta& a, const std::string& file) {
  if (a.fortran && a.ndim() > 1)
    unsupported(file + ": strings through a \"transpose\" codec are not supported");
  if (!a.v3->filters.is_null())
    unsupported(file + ": strings through array -> array codecs (" + a.v3->filters.dump() +
                ") are not supported");
}

// `codecs` with each vlen-utf8 (also inside sharding_indexed) replaced by
// the `bytes` codec of uint8: what parse_array_v3 reads for the layout.
json bytes_for_vlen(const json& codecs, const std::string& file, bool& found) {
  if (!codecs.is_array()) return codecs;  // parse_array_v3 names the problem
  json out = json::array();
  for (const json& c : codecs) {
    const json name = c.is_string() ? c : c.is_object() ? c.value("name", json()) : json();
    if (name == "vlen-utf8") {
      out.push_back(json{{"name", "bytes"}});
      found = true;
    } else if (name == "bytes") {
      corrupt(file + ": codec \"bytes\" cannot encode a \"string\" array (\"vlen-utf8\" does)");
    } else if (name == "vlen-bytes") {
      unsupported(file + ": codec \"vlen-bytes\" (variable-length bytes) is not supported");
    } else if (name == "sharding_indexed" && c.is_object() &&
               c.value("configuration", json()).is_object() &&
               c["configuration"].contains("codecs")) {
      json inner = c;
      inner["configuration"]["codecs"] = bytes_for_vlen(c["configuration"]["codecs"], file, found);
      out.push_back(inner);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

bool is_object_dtype_v2(const json& meta) { return meta.value("dtype", json()) == "|O"; }

ArrayMeta parse_strings_v2(const json& meta, const std::string& file) {
  const json filters = meta.value("filters", json());
  const json first = filters.is_array() && !filters.empty() ? filters[0] : json();
  const json id = first.is_object() ? first.value("id", json()) : json();
  if (id == "vlen-bytes")
    unsupported(file +
                ": \"dtype\" \"|O\" with the filter \"vlen-bytes\" (variable-length "
                "bytes) is not supported (strings with vlen-utf8 are)");
  if (id != "vlen-utf8")
    unsupported(
        file + ": \"dtype\" \"|O\" (Python objects) " +
        (id.is_null() ? std::string("without an object codec") : "with the filter " + id.dump()) +
        " is not supported (strings with the filter vlen-utf8 are)");
  if (filters.size() > 1)
    unsupported(file + ": filters after \"vlen-utf8\" are not supported (" + filters.dump() + ")");
  json numeric = meta;
  numeric["dtype"] = "|u1";
  numeric["fill_value"] = nullptr;
  numeric["filters"] = nullptr;
  ArrayMeta a = parse_array(numeric.dump(), file);  // "order": "F" is kept (strings_io.cpp)
  a.strings = true;
  a.type = DataType{"|O", kStringTypeName, 'O', 1, false};
  a.filters = filters;
  a.fill = string_fill(meta.value("fill_value", json()), file, 2);
  return a;
}

bool is_vlen_data_type_v3(const json& doc) {
  const json t = doc.value("data_type", json());
  return t == "string" || t == "bytes" || t == "variable_length_bytes";
}

ArrayMeta parse_strings_v3(const json& doc, const std::string& file) {
  const std::string type = doc["data_type"].get<std::string>();
  if (type != "string")
    unsupported(file + ": \"data_type\" \"" + type +
                "\" (variable-length bytes) is not supported (\"string\" is)");
  if (!doc.contains("fill_value")) corrupt(file + ": the array has no \"fill_value\"");
  json numeric = doc;
  numeric["data_type"] = "uint8";
  numeric["fill_value"] = 0;
  bool found = false;
  if (doc.contains("codecs")) numeric["codecs"] = bytes_for_vlen(doc["codecs"], file, found);
  if (doc.contains("codecs") && !found)
    corrupt(file + ": a \"string\" array needs the codec \"vlen-utf8\", got " +
            doc["codecs"].dump());
  ArrayMeta a = parse_array_v3(numeric, file);
  refuse_array_codecs(a, file);
  if (a.v3->sharded)
    unsupported(file +
                ": sharded string arrays (vlen-utf8 inside sharding_indexed) are not "
                "supported");
  a.strings = true;
  a.type = DataType{"string", kStringTypeName, 'O', 1, false};
  a.fill = string_fill(doc["fill_value"], file, 3);
  a.compressor = doc["codecs"];  // as in the file, for another Zarr store
  return a;
}

// ---- numcodecs' VLenUTF8 ------------------------------------------------------

bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF)
      len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
      len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
      len = 4, cp = c & 0x07;
    else
      return false;  // a continuation byte first, an overlong lead, or past U+10FFFF
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

std::vector<std::string> decode_vlen_utf8(const uint8_t* data, size_t size, uint64_t count,
                                          const std::string& key) {
  if (size < 4)
    corrupt(key + ": a vlen-utf8 chunk of " + std::to_string(size) +
            " bytes has no 4-byte count (truncated)");
  const uint32_t n = sdk::load_le<uint32_t>(data);
  if (n != count)
    corrupt(key + ": the chunk holds " + std::to_string(n) +
            " strings; a chunk of this array holds " + std::to_string(count));
  // Every string takes at least its 4-byte length: checked before allocating.
  if (n > (size - 4) / 4)
    corrupt(key + ": " + std::to_string(n) + " strings cannot fit in " + std::to_string(size) +
            " bytes (truncated)");
  std::vector<std::string> out;
  out.reserve(n);
  size_t at = 4;
  for (uint32_t i = 0; i < n; ++i) {
    if (size - at < 4)
      corrupt(key + ": string " + std::to_string(i) + " of " + std::to_string(n) +
              " has no length (truncated)");
    const uint32_t len = sdk::load_le<uint32_t>(data + at);
    at += 4;
    if (len > size - at)
      corrupt(key + ": string " + std::to_string(i) + " of " + std::to_string(n) + " is " +
              std::to_string(len) + " bytes, past the end of the chunk (truncated)");
    std::string_view s(reinterpret_cast<const char*>(data + at), len);
    if (!valid_utf8(s)) corrupt(key + ": string " + std::to_string(i) + " is not valid UTF-8");
    out.emplace_back(s);
    at += len;
  }
  if (at != size) corrupt(key + ": " + std::to_string(size - at) + " bytes follow the last string");
  return out;
}

std::vector<uint8_t> encode_vlen_utf8(const std::vector<std::string_view>& values) {
  size_t total = 4;
  for (std::string_view v : values) total += 4 + v.size();
  std::vector<uint8_t> out(total);
  sdk::store_le<uint32_t>(out.data(), uint32_t(values.size()));
  size_t at = 4;
  for (std::string_view v : values) {
    sdk::store_le<uint32_t>(out.data() + at, uint32_t(v.size()));
    std::copy(v.begin(), v.end(), out.begin() + at + 4);
    at += 4 + v.size();
  }
  return out;
}

// ---- creating -------------------------------------------------------------------

ArrayMeta strings_description_meta(const json& d, int version) {
  ArrayMeta a;
  a.strings = true;
  a.type = DataType{version == 3 ? "string" : "|O", kStringTypeName, 'O', 1, false};
  a.shape = description_extents(d, "shape", 0);
  // About 64 Ki strings a chunk, whole trailing dimensions first.
  a.chunks = d.contains("chunks") && !d["chunks"].is_null()
                 ? description_extents(d, "chunks", 1)
                 : sdk::c_order_chunks(a.shape, 16, uint64_t(1) << 20);
  if (a.chunks.size() != a.shape.size())
    invalid("zarr create: \"shape\" and \"chunks\" differ in rank");
  if (const std::string why = sdk::array_size_problem(a.shape, a.chunks, 1, kStringTypeName);
      !why.empty())
    invalid("zarr create: " + why);
  if (a.chunk_elements() > kMaxChunkBytes / 4)
    invalid("zarr create: chunks " + json(a.chunks).dump() + " hold over 2^29 strings");
  if (d.contains("shards") && !d["shards"].is_null())
    unsupported("zarr create: sharded string arrays are not written (shards are for numbers)");
  const json fill = d.value("storage", json::object()).value("fill_value", json(""));
  a.fill.in_file = fill.is_string() ? fill : json("");
  if (!fill.is_string() && !fill.is_null() && fill != 0)
    invalid("zarr create: a string array's \"fill_value\" must be a string, got " + fill.dump());
  a.fill.for_host = a.fill.in_file;
  if (!valid_utf8(a.fill.in_file.get_ref<const std::string&>()))
    invalid("zarr create: the \"fill_value\" is not valid UTF-8");
  return a;
}

json strings_array_json_v3(const ArrayMeta& a, const json& attributes,
                           const json& dimension_names) {
  json codecs = json::array({json{{"name", "vlen-utf8"}, {"configuration", json::object()}}});
  for (const BytesCodec& c : a.v3->codecs) codecs.push_back(v3_codec_json(c));
  return array_document_v3(a, "string", a.chunks, codecs, attributes, dimension_names);
}

}  // namespace zarr
