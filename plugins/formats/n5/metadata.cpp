#include "metadata.hpp"

#include <stowage/plugin.hpp>

#include <algorithm>
#include <array>

namespace n5 {

using stowage::sdk::corrupt;
using stowage::sdk::unsupported;

std::optional<DataType> find_data_type(std::string_view name) {
  static const std::array<DataType, 12> types = {{
      {"uint8", ElementKind::numeric, 1},
      {"int8", ElementKind::numeric, 1},
      {"uint16", ElementKind::numeric, 2},
      {"int16", ElementKind::numeric, 2},
      {"uint32", ElementKind::numeric, 4},
      {"int32", ElementKind::numeric, 4},
      {"uint64", ElementKind::numeric, 8},
      {"int64", ElementKind::numeric, 8},
      {"float32", ElementKind::numeric, 4},
      {"float64", ElementKind::numeric, 8},
      {"string", ElementKind::string, 0},
      {"object", ElementKind::object, 0},
  }};
  for (const DataType& t : types)
    if (t.name == name) return t;
  return std::nullopt;
}

bool is_dataset_key(std::string_view key) {
  return key == "dimensions" || key == "blockSize" || key == "dataType" || key == "compression" ||
         key == "compressionType" || key == "codecs";
}

bool is_dataset(const json& attributes) {
  return attributes.is_object() && attributes.contains("dimensions") &&
         attributes.contains("blockSize") && attributes.contains("dataType");
}

uint64_t Dataset::chunk_elements() const {
  uint64_t n = 1;
  for (uint64_t c : chunks) n *= c;  // bounded by kMaxChunkBytes in parse_dataset
  return n;
}

uint64_t Dataset::grid(size_t d) const { return (shape[d] + chunks[d] - 1) / chunks[d]; }

uint64_t Dataset::block_count() const {
  uint64_t n = 1;
  for (size_t d = 0; d < ndim(); ++d) {
    if (grid(d) != 0 && n > UINT64_MAX / grid(d))
      corrupt("n5: the block grid has over 2^64 blocks");
    n *= grid(d);
  }
  return n;
}

namespace {

// An array of integers in [min, max], reversed into C order.
std::vector<uint64_t> parse_extents(const json& attrs, const char* key, uint64_t min, uint64_t max,
                                    const std::string& file) {
  const json& a = attrs.at(key);
  if (!a.is_array() || a.empty())
    corrupt(file + ": \"" + key + "\" must be a non-empty array of integers, got " + a.dump());
  if (a.size() > 0xffff)
    corrupt(file + ": \"" + key + "\" has " + std::to_string(a.size()) +
            " dimensions; a chunk header holds at most 65535");
  std::vector<uint64_t> out;
  out.reserve(a.size());
  for (const json& v : a) {
    bool non_negative = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!non_negative || v.get<uint64_t>() < min || v.get<uint64_t>() > max)
      corrupt(file + ": \"" + key + "\" has " + v.dump() + "; each entry must be an integer in " +
              std::to_string(min) + ".." + std::to_string(max));
    out.push_back(v.get<uint64_t>());
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// The codec config: "compression", else legacy "compressionType" (a bare
// name meaning that codec with default parameters), else raw.
json parse_compression(const json& attrs, const std::string& file) {
  if (attrs.contains("compression")) {
    const json& c = attrs["compression"];
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string())
      corrupt(file + ": \"compression\" must be an object with a string \"type\", got " + c.dump());
    return c;
  }
  if (attrs.contains("compressionType")) {
    const json& t = attrs["compressionType"];
    if (!t.is_string()) corrupt(file + ": \"compressionType\" must be a string, got " + t.dump());
    return json{{"type", t}};
  }
  if (attrs.contains("codecs") && attrs["codecs"].is_array() && !attrs["codecs"].empty())
    unsupported(file +
                ": the dataset uses N5 4.x \"codecs\" (experimental sharding), which "
                "this plugin does not read");
  return json{{"type", "raw"}};
}

}  // namespace

Dataset parse_dataset(const json& attrs, const std::string& file) {
  Dataset ds;
  const json& type = attrs.at("dataType");
  if (!type.is_string()) corrupt(file + ": \"dataType\" must be a string, got " + type.dump());
  std::optional<DataType> t = find_data_type(type.get<std::string>());
  if (!t) unsupported(file + ": unknown dataType \"" + type.get<std::string>() + "\"");
  ds.type = *t;
  // Java stores dimensions as long and blockSize as int.
  ds.shape = parse_extents(attrs, "dimensions", 0, INT64_MAX, file);
  ds.chunks = parse_extents(attrs, "blockSize", 1, INT32_MAX, file);
  if (ds.shape.size() != ds.chunks.size())
    corrupt(file + ": \"dimensions\" has " + std::to_string(ds.shape.size()) +
            " entries but \"blockSize\" has " + std::to_string(ds.chunks.size()));
  uint64_t bytes = std::max<size_t>(ds.type.size, 1);
  for (uint64_t c : ds.chunks) {
    bytes *= c;
    if (bytes > kMaxChunkBytes)
      unsupported(file + ": a block of \"blockSize\" " + attrs.at("blockSize").dump() + " of " +
                  ds.type.name + " exceeds N5's 2 GiB chunk limit");
  }
  ds.compression = parse_compression(attrs, file);
  return ds;
}

json user_attributes(const json& attributes, bool is_root) {
  json user = json::object();
  if (!attributes.is_object()) return user;
  bool dataset = is_dataset(attributes);
  for (auto it = attributes.begin(); it != attributes.end(); ++it) {
    if (dataset && is_dataset_key(it.key())) continue;
    if (is_root && it.key() == "n5") continue;
    user[it.key()] = it.value();
  }
  return user;
}

json dataset_attributes(const Dataset& ds, const json& user) {
  json a = json::object();
  a["dataType"] = ds.type.name;
  a["compression"] = ds.compression;
  a["blockSize"] = json(std::vector<uint64_t>(ds.chunks.rbegin(), ds.chunks.rend()));
  a["dimensions"] = json(std::vector<uint64_t>(ds.shape.rbegin(), ds.shape.rend()));
  for (auto it = user.begin(); it != user.end(); ++it)
    if (!is_dataset_key(it.key())) a[it.key()] = it.value();
  return a;
}

std::optional<long> version_major(const json& version) {
  if (!version.is_string()) return std::nullopt;
  const std::string& s = version.get_ref<const std::string&>();
  size_t i = 0;
  long major = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 9) major = major * 10 + (s[i++] - '0');
  if (i == 0 || (i < s.size() && s[i] != '.')) return std::nullopt;
  return major;
}

json parse_attributes(std::string_view text, const std::string& file) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) corrupt(file + ": not valid JSON (or not UTF-8)");
  if (!j.is_object())
    corrupt(file + ": must hold a JSON object, got " + std::string(j.type_name()));
  return j;
}

}  // namespace n5
