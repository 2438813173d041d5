// The command "resize" of an N5 dataset ({"shape": [...]}), as zarr-python's
// Array.resize: attributes.json takes the new dimensions, then the blocks
// wholly outside them are deleted; data inside stays, and an edge block the
// new shape still reaches stays whole (a later grow shows what it held, as
// in zarr-python). The attributes go first: a kill between the two leaves
// blocks outside the dataset, which no reader sees, never a dataset whose
// blocks are gone while its dimensions still cover them.
#include "store.hpp"

#include <stowage/array_limits.hpp>
#include <stowage/resize.hpp>

#include <algorithm>

namespace n5 {

namespace sdk = stowage::sdk;

std::string N5Store::command(std::string_view node, std::string_view name,
                             std::string_view args_json) {
  sdk::require_resize_command(name, root_, "N5");
  resize(node, args_json);
  return "{}";
}

void N5Store::resize(std::string_view node, std::string_view args_json) {
  require_writable("resize");
  std::vector<std::string> parts = sdk::split_node_path(node);
  const std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  json attrs = read_attributes(dir).value_or(json::object());
  if (!is_dataset(attrs))
    sdk::invalid(dir + ": '" + std::string(node) + "' is a group; only a dataset can be resized");
  const Dataset ds = parse_dataset(attrs, dir + kAttributesFile);
  if (ds.type.kind != ElementKind::numeric)
    sdk::unsupported(dir + ": resize takes numeric datasets, not " + ds.type.name + " ones");
  const std::vector<uint64_t> shape = sdk::resize_shape(args_json, ds.ndim(), dir);
  if (const std::string why = sdk::array_size_problem(shape, ds.chunks, ds.type.size, ds.type.name);
      !why.empty())
    sdk::invalid(dir + ": cannot resize: " + why);
  attrs["dimensions"] = json(std::vector<uint64_t>(shape.rbegin(), shape.rend()));
  write_attributes(dir, attrs);
  sdk::for_each_chunk_outside(ds.shape, shape, ds.chunks, [&](const std::vector<uint64_t>& index) {
    storage_.remove_if_exists(chunk_path(dir, index.data(), index.size()), 0);
  });
}

}  // namespace n5
