// n5-viewer multiscale attributes <-> OME-NGFF `multiscales` (ome_zarr.hpp).
#include "ome_zarr.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace stowage::ome {

namespace {

// Abbreviations n5-viewer, n5-ij and Paintera write, and the UDUNITS-2
// names OME-NGFF 0.4 lists for space axes.
const std::vector<std::pair<std::string, std::string>> kUnits = {{"nm", "nanometer"},
                                                                 {"um", "micrometer"},
                                                                 {"\xC2\xB5m", "micrometer"},
                                                                 {"\xCE\xBCm", "micrometer"},
                                                                 {"mm", "millimeter"},
                                                                 {"cm", "centimeter"},
                                                                 {"m", "meter"},
                                                                 {"pm", "picometer"},
                                                                 {"\xC3\x85", "angstrom"},
                                                                 {"km", "kilometer"}};

// "s0" -> 0, "s12" -> 12; -1 for any other name.
long level_number(const std::string& name) {
  if (name.size() < 2 || name[0] != 's' || name.size() > 7) return -1;
  if (name.size() > 2 && name[1] == '0') return -1;
  for (size_t i = 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::stol(name.substr(1));
}

// A list of `rank` numbers, or nullopt.
std::optional<std::vector<double>> numbers(const json& j, size_t rank) {
  if (!j.is_array() || j.size() != rank) return std::nullopt;
  std::vector<double> out;
  for (const json& v : j) {
    if (!v.is_number()) return std::nullopt;
    out.push_back(v.get<double>());
  }
  return out;
}

// The voxel size and its unit in one of n5-viewer's keys of `attrs`:
// pixelResolution as {"unit", "dimensions"} (n5-viewer, n5-ij) or a plain
// list (older saalfeldlab tools), else resolution (BigDataViewer's export,
// Paintera), with the unit in "unit" (Paintera) or "units" (tensorstore).
// N5 order.
struct Resolution {
  std::vector<double> size;
  std::vector<std::string> units;  // empty: none
};
std::optional<Resolution> resolution_in(const json& attrs, size_t rank) {
  if (!attrs.is_object()) return std::nullopt;
  Resolution r;
  if (attrs.contains("pixelResolution")) {
    const json& p = attrs["pixelResolution"];
    auto size = numbers(p.is_object() ? p.value("dimensions", json()) : p, rank);
    if (size) {
      r.size = *size;
      if (p.is_object() && p.contains("unit") && p["unit"].is_string())
        r.units.assign(rank, p["unit"]);
    }
  }
  if (r.size.empty()) {
    auto size = numbers(attrs.value("resolution", json()), rank);
    if (!size) return std::nullopt;
    r.size = *size;
  }
  if (r.units.empty() && attrs.contains("unit") && attrs["unit"].is_string())
    r.units.assign(rank, attrs["unit"]);
  if (r.units.empty() && attrs.contains("units") && attrs["units"].is_array() &&
      attrs["units"].size() == rank &&
      std::all_of(attrs["units"].begin(), attrs["units"].end(),
                  [](const json& u) { return u.is_string(); }))
    r.units = attrs["units"].get<std::vector<std::string>>();
  return r;
}

std::string axis_type(const std::string& name) {
  if (name == "t" || name == "time") return "time";
  if (name == "c" || name == "channel") return "channel";
  return "space";
}

// OME-NGFF 0.4's rules for axes: 2 or 3 of type space, at most one time and
// one channel, time first, then channel, then space; names distinct.
bool valid_axes(const std::vector<std::string>& names, std::string* why) {
  int space = 0, time = 0, channel = 0, last = 0;  // last: 0 time, 1 channel, 2 space
  if (std::set<std::string>(names.begin(), names.end()).size() != names.size()) {
    if (why) *why = "its dimension names are not distinct";
    return false;
  }
  for (const std::string& n : names) {
    const std::string t = axis_type(n);
    const int order = t == "time" ? 0 : t == "channel" ? 1 : 2;
    if (order < last) {
      if (why)
        *why = "OME-NGFF orders axes time, channel, space, and these are " + json(names).dump();
      return false;
    }
    last = order;
    (t == "time" ? time : t == "channel" ? channel : space)++;
  }
  if (space < 2 || space > 3 || time > 1 || channel > 1) {
    if (why)
      *why = "OME-NGFF takes 2 or 3 space axes with at most one time and one channel axis, not " +
             json(names).dump();
    return false;
  }
  return true;
}

// The axis names: the dimension names where every one is given, else
// y, x or z, y, x.
std::optional<std::vector<std::string>> axis_names(const Level& s0, std::string* why) {
  const bool named =
      s0.dims.size() == s0.rank &&
      std::all_of(s0.dims.begin(), s0.dims.end(), [](const std::string& n) { return !n.empty(); });
  std::vector<std::string> names;
  if (named)
    names = s0.dims;
  else if (s0.rank == 2)
    names = {"y", "x"};
  else if (s0.rank == 3)
    names = {"z", "y", "x"};
  else {
    if (why)
      *why = "its levels have " + std::to_string(s0.rank) +
             " unnamed dimensions (OME-NGFF needs their names and types)";
    return std::nullopt;
  }
  if (!valid_axes(names, why)) return std::nullopt;
  return names;
}

// A double that is a whole number as an integer in JSON ("2", not "2.0").
json number(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 9e15)
    return static_cast<int64_t>(std::llround(v));
  return v;
}

json number_list(std::vector<double> v, bool reverse) {
  if (reverse) std::reverse(v.begin(), v.end());
  json out = json::array();
  for (double x : v) out.push_back(number(x));
  return out;
}

}  // namespace

std::string ome_unit(const std::string& n5_unit) {
  for (const auto& [abbreviation, name] : kUnits)
    if (n5_unit == abbreviation) return name;
  return n5_unit == "pixel" ? std::string() : n5_unit;  // n5-ij's "no unit"
}

std::string n5_unit(const std::string& ome_unit) {
  for (const auto& [abbreviation, name] : kUnits)
    if (ome_unit == name) return abbreviation;
  return ome_unit;
}

json multiscales_from_n5(const json& group_attributes, const std::vector<Level>& levels,
                         const std::string& ngff, std::string* why) {
  std::map<long, const Level*> by_number;
  for (const Level& l : levels)
    if (long k = level_number(l.path); k >= 0) by_number[k] = &l;
  if (by_number.empty() || by_number.begin()->first != 0) return nullptr;
  const json& group = group_attributes.is_object() ? group_attributes : json::object();
  const json& scales = group.value("scales", json());
  const bool has_factors =
      scales.is_array() || std::any_of(levels.begin(), levels.end(), [](const Level& l) {
        return l.attributes.is_object() && l.attributes.contains("downsamplingFactors");
      });
  if (!has_factors) return nullptr;  // a group that merely has a dataset named s0
  auto refuse = [&](const std::string& text) -> json {
    if (why) *why = text;
    return nullptr;
  };
  if (by_number.rbegin()->first + 1 != static_cast<long>(by_number.size()))
    return refuse("its levels are not s0..sN without gaps");
  const Level& s0 = *by_number.at(0);
  const size_t rank = s0.rank;
  for (const auto& [k, l] : by_number)
    if (l->rank != rank)
      return refuse(l->path + " has rank " + std::to_string(l->rank) + ", s0 " +
                    std::to_string(rank));
  auto names = axis_names(s0, why);
  if (!names) return nullptr;

  // The full-resolution voxel size: n5-spark writes the same pixelResolution
  // on every level and n5-viewer multiplies it by the level's factors.
  std::optional<Resolution> base = resolution_in(s0.attributes, rank);
  if (!base) base = resolution_in(group, rank);
  if (!base) base = Resolution{std::vector<double>(rank, 1.0), {}};

  json axes = json::array();
  for (size_t d = 0; d < rank; ++d) {
    json axis = {{"name", (*names)[d]}, {"type", axis_type((*names)[d])}};
    const size_t n5d = rank - 1 - d;  // N5 lists the fastest dimension first
    const std::string unit = base->units.empty() ? "" : ome_unit(base->units[n5d]);
    if (!unit.empty() && axis["type"] == "space") axis["unit"] = unit;
    axes.push_back(axis);
  }
  json datasets = json::array();
  for (const auto& [k, level] : by_number) {
    std::optional<std::vector<double>> factors;
    if (level->attributes.is_object() && level->attributes.contains("downsamplingFactors"))
      factors = numbers(level->attributes["downsamplingFactors"], rank);
    else if (scales.is_array() && static_cast<size_t>(k) < scales.size())
      factors = numbers(scales[k], rank);
    else if (k == 0)
      factors = std::vector<double>(rank, 1.0);
    if (!factors)
      return refuse(level->path + " has no downsamplingFactors of rank " + std::to_string(rank) +
                    " (and the group's scales give none)");
    std::vector<double> scale(rank), translation(rank);
    bool shifted = false;
    for (size_t n5d = 0; n5d < rank; ++n5d) {
      const double f = (*factors)[n5d];
      if (!(f >= 1)) return refuse(level->path + " has a downsampling factor below 1");
      scale[n5d] = base->size[n5d] * f;
      translation[n5d] = base->size[n5d] * (f - 1) / 2;
      shifted = shifted || translation[n5d] != 0;
    }
    json transforms = json::array({{{"type", "scale"}, {"scale", number_list(scale, true)}}});
    if (shifted)
      transforms.push_back(
          {{"type", "translation"}, {"translation", number_list(translation, true)}});
    datasets.push_back({{"path", level->path}, {"coordinateTransformations", transforms}});
  }

  json multiscale = json::object();
  if (ngff == "0.4") multiscale["version"] = "0.4";
  if (group.contains("name") && group["name"].is_string()) multiscale["name"] = group["name"];
  multiscale["axes"] = axes;
  multiscale["datasets"] = datasets;
  if (ngff == "0.4") return {{"multiscales", json::array({multiscale})}};
  return {{"ome", {{"version", ngff}, {"multiscales", json::array({multiscale})}}}};
}

std::optional<N5Viewer> n5_viewer_from_multiscales(const json& attrs, std::string* why) {
  if (!attrs.is_object()) return std::nullopt;
  const json* list = nullptr;
  if (attrs.contains("multiscales"))
    list = &attrs["multiscales"];
  else if (attrs.contains("ome") && attrs["ome"].is_object() &&
           attrs["ome"].contains("multiscales"))
    list = &attrs["ome"]["multiscales"];
  if (!list) return std::nullopt;
  auto refuse = [&](const std::string& text) -> std::optional<N5Viewer> {
    if (why) *why = text;
    return std::nullopt;
  };
  if (!list->is_array() || list->empty() || !(*list)[0].is_object())
    return refuse("its multiscales is not a list of objects");
  const json& ms = (*list)[0];
  const json& datasets = ms.value("datasets", json());
  if (!datasets.is_array() || datasets.empty()) return refuse("its multiscales has no datasets");
  const json& axes = ms.value("axes", json());
  if (!axes.is_array() || axes.empty()) return refuse("its multiscales has no axes");
  const size_t rank = axes.size();

  // The scale of a list of transformations (1s when it has none).
  auto scale_of = [&](const json& transforms) -> std::optional<std::vector<double>> {
    if (!transforms.is_array()) return std::vector<double>(rank, 1.0);
    for (const json& t : transforms)
      if (t.is_object() && t.value("type", "") == "scale")
        return numbers(t.value("scale", json()), rank);
    return std::vector<double>(rank, 1.0);
  };
  const auto global = scale_of(ms.value("coordinateTransformations", json()));
  if (!global)
    return refuse("its multiscales' coordinateTransformations has a scale not of rank " +
                  std::to_string(rank));

  std::vector<std::pair<std::string, std::vector<double>>> levels;
  for (const json& d : datasets) {
    if (!d.is_object() || !d.contains("path") || !d["path"].is_string())
      return refuse("a dataset has no path");
    auto scale = scale_of(d.value("coordinateTransformations", json()));
    if (!scale)
      return refuse("dataset '" + d["path"].get<std::string>() + "' has no scale of rank " +
                    std::to_string(rank));
    for (size_t i = 0; i < rank; ++i) (*scale)[i] *= (*global)[i];
    levels.emplace_back(d["path"].get<std::string>(), *scale);
  }
  const std::vector<double>& base = levels[0].second;
  std::string unit;
  for (const json& a : axes)
    if (a.is_object() && a.value("type", "space") == "space" && a.contains("unit") &&
        a["unit"].is_string()) {
      unit = n5_unit(a["unit"].get<std::string>());
      break;
    }

  N5Viewer out;
  json scales = json::array();
  for (const auto& [path, scale] : levels) {
    std::vector<double> factors(rank);
    for (size_t i = 0; i < rank; ++i) {
      if (!(base[i] > 0)) return refuse("the first dataset's scale is not positive");
      factors[i] = scale[i] / base[i];
      // Scales written as decimals (0.3 * 3) are off in the last bits.
      if (std::fabs(factors[i] - std::round(factors[i])) < 1e-6 * factors[i])
        factors[i] = std::round(factors[i]);
      if (!(factors[i] >= 1)) return refuse("dataset '" + path + "' is finer than the first one");
    }
    scales.push_back(number_list(factors, true));
    out.datasets[path] = {{"downsamplingFactors", number_list(factors, true)}};
  }
  out.group["scales"] = scales;
  out.group["resolution"] = number_list(base, true);
  out.group["pixelResolution"] = {{"unit", unit.empty() ? "pixel" : unit},
                                  {"dimensions", number_list(base, true)}};
  return out;
}

}  // namespace stowage::ome
