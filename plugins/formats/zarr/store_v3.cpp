// The tree of a Zarr v3 store: every node is a directory holding zarr.json
// (node_type "group" or "array", attributes inside). The rest of the tree
// (listing, removing, moving) is store.cpp's, which calls these.
#include "filter_chain.hpp"
#include "store.hpp"

#include "codec_names.hpp"

#include <algorithm>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::fail;
using sdk::invalid;
using sdk::unsupported;

json ZarrStore::read_v3_document(const std::string& dir) const {
  const std::string file = dir + "/" + kV3File;
  std::optional<std::string> text = read_metadata(file);
  if (!text) fail(STOWAGE_NOT_FOUND, file + ": no such file");
  json doc = parse_object(*text, file);
  v3_node_type(doc, file);
  if (!doc.contains("attributes")) doc["attributes"] = json::object();
  if (!doc["attributes"].is_object()) corrupt(file + ": \"attributes\" must be an object");
  return doc;
}

// One read of zarr.json (v3 has no file per node type to stat).
ZarrStore::Kind ZarrStore::kind_of_v3(const std::string& dir) const {
  const std::string file = dir + "/" + kV3File;
  if (!storage_.is_file(file)) return Kind::none;
  return v3_node_type(read_v3_document(dir), file) == "array" ? Kind::array : Kind::group;
}

std::string ZarrStore::describe_array_v3(const OpenArray& open, const json& attributes) const {
  const ArrayMeta& a = open.meta;
  const json doc = read_v3_document(open.dir);
  json d = json::object();
  d["kind"] = "array";
  d["dtype"] = a.type.name;
  d["shape"] = a.shape;
  d["chunks"] = a.chunks;  // the inner chunks of a sharded array: what read_chunk reads
  if (a.v3->sharded) d["shards"] = a.v3->shard;
  d["byte_order"] = a.type.big_endian ? "big" : "little";
  d["order"] = a.fortran ? "F" : "C";
  d["codec"] = a.codec_error.empty() ? a.codec : unreadable_codec(a);
  d["fill_value"] = a.fill.for_host;
  if (doc.contains("dimension_names") && doc["dimension_names"].is_array() &&
      doc["dimension_names"].size() == a.ndim()) {
    json dims = json::array();
    for (const json& name : doc["dimension_names"])
      dims.push_back(json{{"name", name.is_string() ? name : json("")}, {"labels", nullptr}});
    d["dims"] = dims;
  }
  d["attributes"] = attributes;
  // How the array is stored, which only another Zarr store takes over.
  d["storage"] = json{{"zarr_format", 3},
                      {"chunk_key_encoding", doc.value("chunk_key_encoding", json())},
                      {"codecs", a.compressor},
                      {"filters", a.v3->filters}};
  return d.dump();
}

void ZarrStore::set_attributes_v3(const std::string& dir, const json& attributes) {
  json doc = read_v3_document(dir);
  doc["attributes"] = attributes;
  write_text(dir + "/" + kV3File, doc);
}

// The description's "shards" (the shard shape, a multiple of "chunks") into
// `layout`; none: unsharded.
void apply_chunk_keys(V3Layout& layout, const json& storage) {
  if (storage.value("zarr_format", json()) != 3 || !storage.contains("chunk_key_encoding")) return;
  const json keys = storage["chunk_key_encoding"];
  layout.default_keys = keys.value("name", "default") != "v2";
  const json separator = keys.value("configuration", json::object())
                             .value("separator", json(layout.default_keys ? "/" : "."));
  if (separator != "." && separator != "/")
    invalid("zarr create: chunk key separator " + separator.dump());
  layout.separator = separator.get<std::string>()[0];
}

void apply_shards(V3Layout& layout, const json& d, const ArrayMeta& a) {
  if (!d.contains("shards") || d["shards"].is_null()) return;
  layout.sharded = true;
  layout.shard = description_extents(d, "shards", 1);
  if (layout.shard.size() != a.ndim())
    invalid("zarr create: \"shards\" and \"shape\" differ in rank");
  layout.per_shard.resize(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) {
    if (layout.shard[i] % a.chunks[i])
      invalid("zarr create: \"shards\" " + json(layout.shard).dump() +
              " is not a multiple of \"chunks\" " + json(a.chunks).dump());
    layout.per_shard[i] = layout.shard[i] / a.chunks[i];
    layout.chunks_per_shard *= layout.per_shard[i];
    if (layout.chunks_per_shard > (uint64_t(1) << 24))
      invalid("zarr create: \"shards\" " + json(layout.shard).dump() + " hold over 2^24 chunks");
  }
  layout.index_crc32c = true;
}

// An array of a create() description: as create_array (v2) reads it, plus
// "shards" (the shard shape, a multiple of "chunks") and, in "storage", a
// v3 "chunk_key_encoding" another Zarr v3 store described.
void ZarrStore::create_array_v3(const std::string& dir, const json& d, json attributes) {
  ArrayMeta a = description_meta(d, 3);
  auto layout = std::make_shared<V3Layout>();
  apply_shards(*layout, d, a);
  const json storage = d.value("storage", json::object());
  apply_chunk_keys(*layout, storage);
  // Array -> array codecs before "bytes" (filter_chain.hpp); sharded, the inner chunks'.
  layout->filters = filters_as(host(), storage.value("filters", json()), "zarr3", a.type.size, dir);
  if (!layout->filters.is_null()) {
    std::vector<uint64_t> shape = a.chunks;
    if (a.fortran) std::reverse(shape.begin(), shape.end());
    std::string missing;
    make_filters(host(), "zarr3", layout->filters, a.type, shape, dir, missing, true, nullptr);
    if (!missing.empty()) fail(STOWAGE_NOT_FOUND, missing);
  }

  // The codec as v3 names it (codec_names.hpp): its zarr3 name, else numcodecs.<id>.
  a.codec = canonical_codec(d.value("codec", json()), dir);
  if (json entry = export_codec(host(), a.codec, "zarr3", a.type.size, dir); !entry.is_null())
    layout->codecs.push_back(BytesCodec{entry, a.codec});

  json names = nullptr;
  if (json dims = d.value("dims", json());
      dims.is_array() && dims.size() == a.ndim() && a.ndim() > 0) {
    names = json::array();
    for (const json& dim : dims)
      names.push_back(dim.is_object() && dim.value("name", json()).is_string() && dim["name"] != ""
                          ? dim["name"]
                          : json());
  }
  a.v3 = layout;
  storage_.make_directory(dir);
  write_text(dir + "/" + kV3File, array_json_v3(a, attributes, names));
}

}  // namespace zarr
