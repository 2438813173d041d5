// What goes with a node besides its values: attributes, dimension names and
// labels, multiscale metadata in the destination's declared convention.
#include "internal.hpp"

#include "../ome_zarr.hpp"

namespace stowage::copying {

// A group's attributes with its multiscale metadata in the convention the
// destination declares, between formats: OME-NGFF `multiscales` from
// n5-viewer's keys, n5-viewer's keys from OME-NGFF (ome_zarr.hpp).
// The source's own keys stay (the metadata rule: nothing dropped unasked);
// the datasets' n5-viewer keys are added when they are copied.
json Converter::with_multiscales(const Store& src, const std::string& node, const json& attributes,
                                 const Store& dst) {
  if (same_format(src, dst) || !attributes.is_object()) return attributes;
  const std::string where = node.empty() ? std::string("the root group") : node;
  const std::string convention = multiscales_.value("convention", "");
  const std::string ngff = multiscales_.value("version", "0.4");
  std::string why;
  json out = attributes;
  if (convention == "ome-ngff" && !attributes.contains("multiscales") &&
      !attributes.contains("ome")) {
    std::vector<ome::Level> levels;
    for (const std::string& child : src.list(node)) {
      const NodeInfo level = src.describe(join(node, child));
      if (level.kind != NodeKind::array) continue;
      std::vector<std::string> dims;
      for (const auto& d : level.dims) dims.push_back(d.name);
      levels.push_back({child, level.attributes, dims, level.shape.size()});
    }
    const json ome = ome::multiscales_from_n5(attributes, levels, ngff, &why);
    if (!ome.is_null()) {
      for (const auto& [key, value] : ome.items()) out[key] = value;
      notes.push_back(where + ": wrote OME-NGFF " + ngff + " multiscales for its n5-viewer levels");
    }
  } else if (convention == "n5-viewer") {
    if (auto viewer = ome::n5_viewer_from_multiscales(attributes, &why)) {
      for (const auto& [key, value] : viewer->group.items()) out[key] = value;
      for (const auto& [path, extra] : viewer->datasets)
        level_attributes_[join(node, path)] = extra;
      notes.push_back(
          where +
          ": wrote n5-viewer's scales, resolution and downsamplingFactors for its OME-NGFF multiscales");
    }
  }
  if (!why.empty()) notes.push_back(where + ": no multiscale metadata written: " + why);
  return out;
}

std::vector<Converter::DimLabels> Converter::source_dims(const Store& src, const std::string& node,
                                                         const NodeInfo& info) const {
  std::vector<DimLabels> dims(info.shape.size());
  for (size_t d = 0; d < dims.size() && d < info.dims.size(); ++d) {
    dims[d].name = info.dims[d].name;
    if (!info.dims[d].labels.empty()) dims[d].labels = src.read_strings(info.dims[d].labels);
  }
  // Labels kept in attributes by a format without label storage.
  if (info.attributes.contains(kLabelsAttribute)) {
    const json& stored = info.attributes[kLabelsAttribute];
    for (size_t d = 0; d < dims.size() && d < stored.size(); ++d) {
      if (stored[d].contains("name") && dims[d].name.empty()) dims[d].name = stored[d]["name"];
      if (stored[d].contains("labels") && dims[d].labels.empty())
        dims[d].labels = stored[d]["labels"].get<std::vector<std::string>>();
    }
  }
  if (!opts_.axes.empty() && opts_.axes.size() != dims.size())
    throw Error(ErrorCode::invalid_argument,
                "--axes gives " + std::to_string(opts_.axes.size()) + " names, but " +
                    (node.empty() ? std::string("the array") : "'" + node + "'") + " has " +
                    std::to_string(dims.size()) + " dimensions");
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < opts_.axes.size()) dims[d].name = opts_.axes[d];
    if (dims[d].name.empty() && dims.size() == 2) dims[d].name = d == 0 ? "rows" : "cols";
  }
  return dims;
}

json Converter::dims_json(const std::vector<DimLabels>& dims) const {
  json j = json::array();
  for (const auto& d : dims) j.push_back({{"name", d.name}});
  return j;
}

// A node's attributes as written: without the labels kept in them, with
// the n5-viewer keys of a multiscale level (with_multiscales).
json Converter::attributes_for(const NodeInfo& info, const std::string& node) const {
  json attrs = info.attributes;
  attrs.erase(kLabelsAttribute);
  if (auto it = level_attributes_.find(node); it != level_attributes_.end())
    for (const auto& [key, value] : it->second.items()) attrs[key] = value;
  return attrs;
}

// After create: write labels where the destination keeps them; elsewhere
// keep them in the node's attributes so they survive a round trip.
void Converter::write_labels(Store& dst, const std::string& dst_node,
                             const std::vector<DimLabels>& dims,
                             const std::vector<uint64_t>& shape) {
  NodeInfo created = dst.describe(dst_node);
  json in_attributes = json::array();
  bool any_in_attributes = false;
  for (size_t d = 0; d < dims.size(); ++d) {
    std::string path = d < created.dims.size() ? created.dims[d].labels : "";
    std::vector<std::string> labels = dims[d].labels;
    if (!path.empty()) {
      if (labels.empty()) {
        labels.reserve(shape[d]);
        for (uint64_t i = 0; i < shape[d]; ++i) labels.push_back(std::to_string(i));
        notes.push_back(dst_node.empty() ? "" : dst_node + ": ");
        notes.back() += "dimension " + std::to_string(d) + " ('" + dims[d].name +
                        "') has no labels in the source; wrote the indices 0.." +
                        std::to_string(shape[d] - 1);
      }
      dst.write_strings(path, labels);
      in_attributes.push_back({{"name", dims[d].name}});
    } else {
      json entry = {{"name", dims[d].name}};
      if (!labels.empty()) {
        entry["labels"] = labels;
        any_in_attributes = true;
      }
      in_attributes.push_back(entry);
    }
  }
  if (!any_in_attributes) return;
  json attrs = dst.describe(dst_node).attributes;  // what create kept
  attrs[kLabelsAttribute] = in_attributes;
  try {
    dst.set_attributes(dst_node, attrs);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::unsupported) throw;
    const std::string where = dst_node.empty() ? std::string("the array") : dst_node;
    if (!opts_.drop_metadata)
      throw Error(ErrorCode::invalid_argument,
                  dst.path() + ": format " + dst.format() + " has no place for the labels of " +
                      where + "; pass --drop-metadata to convert without them",
                  dst.path());
    notes.push_back(where + ": dropped its labels, which " + dst.format() + " cannot keep");
  }
}

}  // namespace stowage::copying
