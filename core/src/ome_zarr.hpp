// Multiscale metadata between N5 and Zarr: n5-viewer's conventions
// (saalfeldlab/n5-viewer README, n5-ij's N5SingleScaleMetadata) and
// OME-NGFF's `multiscales` (0.4 in a Zarr v2 group's attributes, 0.5 under
// "ome" in a v3 group's). Pure functions, attributes in and attributes out;
// stowage::copy (conversion.cpp) calls them for a group whose datasets are
// the levels, and unit tests call them directly (tests/convert/ome_zarr_test.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stowage::ome {

using json = nlohmann::ordered_json;

// One dataset of a group, as the copy sees it.
struct Level {
  std::string path;               // the dataset's name in the group ("s0")
  json attributes;                // its attributes (N5 order inside n5-viewer's keys)
  std::vector<std::string> dims;  // dimension names, C order ("" for unnamed)
  size_t rank = 0;
};

// OME-NGFF `multiscales` for an N5 group in n5-viewer's layout: datasets
// s0, s1, ... sK, each level's factors from its `downsamplingFactors` or the
// group's `scales` (s0: all 1), the full-resolution voxel size from
// `pixelResolution` ({"unit", "dimensions"} or a plain list) or
// `resolution` (the level's, else the group's), the unit from
// `pixelResolution.unit`, `unit` or `units`. N5 lists these fastest
// dimension first (X, Y, Z); OME lists axes slowest first, so they are
// reversed. Level k's transformations are those n5-viewer and BigDataViewer
// display it with (N5SingleScaleMetadata.buildTransform, MipmapTransforms):
// scale = resolution * factor, translation = resolution * (factor - 1) / 2,
// the centre of the factor^n voxels a downsampled voxel averages.
//
// `levels` are the group's datasets in any order (others than sN are
// ignored). `ngff` is "0.4" (returns {"multiscales": [...]}) or "0.5"
// (returns {"ome": {"version": "0.5", "multiscales": [...]}}). Returns
// null, with `why` set when the group looked like one but cannot be
// mapped, when the group is not an n5-viewer multiscale group.
json multiscales_from_n5(const json& group_attributes, const std::vector<Level>& levels,
                         const std::string& ngff, std::string* why = nullptr);

// The reverse: n5-viewer attributes for a group holding OME-NGFF 0.4 or 0.5
// `multiscales` (the first one). `group` gets `scales`, `resolution` and
// `pixelResolution` {"unit", "dimensions"}; each dataset path gets its
// `downsamplingFactors` (scale / the first level's scale, N5 order). Null
// when the attributes hold no multiscales; `why` set when they hold one
// that cannot be mapped (a factor below 1, a dataset missing its scale).
struct N5Viewer {
  json group = json::object();
  std::map<std::string, json> datasets;
};
std::optional<N5Viewer> n5_viewer_from_multiscales(const json& group_attributes,
                                                   std::string* why = nullptr);

// "um" -> "micrometer" (OME-NGFF takes UDUNITS-2 names), and back.
std::string ome_unit(const std::string& n5_unit);
std::string n5_unit(const std::string& ome_unit);

}  // namespace stowage::ome
