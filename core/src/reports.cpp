// The JSON documents the tools print with --json, built here so that every
// front end (stowage-plugin-list, stowage-convert, the Python package)
// prints the same thing.
#include <stowage/copy.hpp>
#include <stowage/stowage.hpp>

#include <algorithm>
#include <tuple>

namespace stowage {

json plugin_info_json(const PluginInfo& p, bool detail) {
  json j;
  j["id"] = p.id;
  j["kind"] = p.kind;
  j["state"] = plugin_state_name(p.state);
  if (!p.reason.empty()) j[p.state == PluginState::shadowed ? "shadowed_by" : "reason"] = p.reason;
  j["path"] = p.path;
  j["version"] = p.version;
  j["abi"] = p.abi_version;
  j["capabilities"] = capability_letters(p.capabilities);
  j["description"] = p.description;
  j["aliases"] = p.aliases;
  j["extensions"] = p.extensions;
  if (!p.metadata_files.empty()) j["metadata_files"] = p.metadata_files;
  if (!p.codec_kind.empty()) j["codec_kind"] = p.codec_kind;
  if (detail) {
    j["build_info"] = p.build_info;
    json schema = json::parse(p.params_schema.empty() ? "{}" : p.params_schema, nullptr, false);
    j["params_schema"] = schema.is_discarded() ? json(p.params_schema) : schema;
  }
  return j;
}

json plugin_list_json(const Registry& registry, const std::vector<PluginInfo>& plugins) {
  json out;
  out["stowage_version"] = version();
  out["abi"] = STOWAGE_PLUGIN_ABI;
  out["search_path"] = json::array();
  for (const auto& [dir, exists] : registry.search_path())
    out["search_path"].push_back({{"path", dir}, {"exists", exists}});
  out["plugins"] = json::array();
  for (const PluginInfo& p : plugins) out["plugins"].push_back(plugin_info_json(p, false));
  return out;
}

void sort_plugins(std::vector<PluginInfo>& plugins) {
  std::sort(plugins.begin(), plugins.end(), [](const PluginInfo& a, const PluginInfo& b) {
    return std::tie(a.kind, a.id, a.state) < std::tie(b.kind, b.id, b.state);
  });
}

json copy_summary_json(const CopyResult& r, const std::string& source,
                       const std::string& destination) {
  double ratio = r.bytes_out ? static_cast<double>(r.bytes_in) / r.bytes_out : 0;
  double mb_per_s = r.seconds > 0 ? r.bytes_in / r.seconds / 1e6 : 0.0;
  return {{"source", source},
          {"destination", destination},
          {"from", r.from},
          {"to", r.to},
          {"nodes", r.nodes},
          {"chunks", r.chunks},
          {"bytes_in", r.bytes_in},
          {"bytes_out", r.bytes_out},
          {"ratio", ratio},
          {"seconds", r.seconds},
          {"mb_per_s", mb_per_s},
          {"notes", r.notes},
          {"open_options", r.open_options},
          {"shards", r.shards}};
}

}  // namespace stowage
