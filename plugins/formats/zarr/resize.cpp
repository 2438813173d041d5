// The command "resize" of a Zarr array ({"shape": [...]}), as zarr-python's
// Array.resize: the metadata (.zarray, or v3's zarr.json) takes the new
// shape, then the chunk files wholly outside it are deleted (v3 sharded:
// the shard files; a shard the new shape still reaches stays whole, as an
// edge chunk does, and a later grow shows what it held, as in zarr-python).
// Shards this store holds in part are published first, so none lands
// outside afterwards. The metadata goes first: a kill between the two leaves
// files outside the array, which no reader sees, never an array whose
// chunks are gone while its shape still covers them.
#include "store.hpp"

#include <stowage/array_limits.hpp>
#include <stowage/resize.hpp>

namespace zarr {

namespace sdk = stowage::sdk;

std::string ZarrStore::command(std::string_view node, std::string_view name,
                               std::string_view args_json) {
  sdk::require_resize_command(name, root_, "Zarr");
  resize(node, args_json);
  return "{}";
}

void ZarrStore::resize(std::string_view node, std::string_view args_json) {
  require_writable("resize");
  std::vector<std::string> parts = sdk::split_node_path(node);
  const std::string dir = node_dir(parts);
  if (require_node(parts, node) != Kind::array)
    sdk::invalid(dir + ": '" + std::string(node) + "' is a group; only an array can be resized");
  std::shared_ptr<OpenArray> a = open_array(dir);
  const ArrayMeta& meta = a->meta;
  if (meta.strings) sdk::unsupported(dir + ": resize takes numeric arrays, not string ones");
  const std::vector<uint64_t> shape = sdk::resize_shape(args_json, meta.ndim(), dir);
  const bool sharded = meta.v3 && meta.v3->sharded;
  // Files hold chunks, or whole shards of them.
  const std::vector<uint64_t>& unit = sharded ? meta.v3->shard : meta.chunks;
  if (const std::string why = sdk::array_size_problem(shape, unit, meta.type.size, meta.type.name);
      !why.empty())
    sdk::invalid(dir + ": cannot resize: " + why);
  if (meta.v3) flush_shards(*a);
  metadata_changing();
  write_shape(dir, shape);
  std::vector<uint64_t> chunk(meta.ndim());
  sdk::for_each_chunk_outside(meta.shape, shape, unit, [&](const std::vector<uint64_t>& index) {
    for (size_t d = 0; d < index.size(); ++d)  // a shard's first inner chunk names its file
      chunk[d] = sharded ? index[d] * meta.v3->per_shard[d] : index[d];
    storage_.remove_if_exists(chunk_file(*a, chunk.data()), 0);
  });
}

// The array's metadata file with "shape" replaced, every other key kept in its order.
void ZarrStore::write_shape(const std::string& dir, const std::vector<uint64_t>& shape) {
  if (version_ == 3) {
    json doc = read_v3_document(dir);
    doc["shape"] = shape;
    return write_text(dir + "/" + kV3File, doc);
  }
  const std::string file = dir + "/" + kArrayFile;
  std::optional<std::string> text = read_metadata(file);
  if (!text) sdk::fail(STOWAGE_NOT_FOUND, file + ": no such file");
  json doc = parse_object(*text, file);
  doc["shape"] = shape;
  write_text(file, doc);
}

}  // namespace zarr
