// stowage-plugin-list: what plugins are installed, their versions and
// capabilities, and why any failed to load (like `gdalinfo --formats`).
#include "tool.hpp"

#include <algorithm>
#include <iomanip>

namespace {

using stowage::json;
using stowage::PluginInfo;
using stowage::PluginState;

std::string state_text(const PluginInfo& p) {
  switch (p.state) {
    case PluginState::failed:
      return "failed: " + p.reason;
    case PluginState::shadowed:
      return "shadowed by " + p.reason;
    default:
      return stowage::plugin_state_name(p.state);
  }
}

void print_table(const std::vector<PluginInfo>& plugins) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "KIND", "VERSION", "ABI", "CAPS", "STATE", "PATH"}};
  for (const PluginInfo& p : plugins)
    rows.push_back(
        {p.id, p.kind, p.version.empty() ? "-" : p.version,
         p.abi_version ? std::to_string(p.abi_version) : "-",
         p.state == PluginState::loaded ? stowage::capability_letters(p.capabilities) : "-",
         state_text(p), p.path});
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c + 1 < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      std::cout << r[c];
      if (c + 1 < r.size()) std::cout << std::string(width[c] - r[c].size() + 2, ' ');
    }
    std::cout << "\n";
  }
}

void print_detail(const PluginInfo& p) {
  std::cout << "id:           " << p.id << "\n"
            << "kind:         " << p.kind << "\n"
            << "state:        " << state_text(p) << "\n"
            << "path:         " << p.path << "\n"
            << "version:      " << p.version << "\n"
            << "abi:          " << p.abi_version << "\n"
            << "capabilities: " << stowage::capability_letters(p.capabilities) << "\n"
            << "description:  " << p.description << "\n"
            << "build:        " << p.build_info << "\n";
  if (!p.aliases.empty()) {
    std::cout << "aliases:     ";
    for (const auto& a : p.aliases) std::cout << " " << a;
    std::cout << "\n";
  }
  if (!p.extensions.empty()) {
    std::cout << "extensions:  ";
    for (const auto& e : p.extensions) std::cout << " " << e;
    std::cout << "\n";
  }
  if (!p.metadata_files.empty()) {
    std::cout << "metadata:    ";
    for (const auto& m : p.metadata_files) std::cout << " " << m;
    std::cout << "\n";
  }
  json schema = json::parse(p.params_schema.empty() ? "{}" : p.params_schema, nullptr, false);
  std::cout << "parameters:   " << (schema.is_discarded() ? p.params_schema : schema.dump(2))
            << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "List the stowage plugins found on the plugin path, their versions, capabilities\n"
      "(r read, w write, t thread-safe, p partial reads) and state (loaded, failed: why,\n"
      "shadowed by another file).",
      "stowage-plugin-list"};
  stowage::tool::CommonOptions common;
  stowage::tool::add_common_options(app, common, false);
  bool as_json = false, check = false, no_load = false;
  std::string detail;
  app.add_flag("--json", as_json, "Machine-readable output (schema in README.md)");
  app.add_option("--detail", detail, "Show one plugin's parameter schema and build info");
  app.add_flag("--check", check, "Exit with 1 if any plugin failed to load");
  app.add_flag("--no-load", no_load, "Only list files found; do not load them");
  STOWAGE_TOOL_PARSE(app, argc, argv);

  return stowage::tool::run(app, [&] {
    stowage::Registry& registry = stowage::tool::make_registry(common);
    std::vector<PluginInfo> plugins = registry.plugins(!no_load);
    stowage::sort_plugins(plugins);
    bool any_failed = std::any_of(plugins.begin(), plugins.end(), [](const PluginInfo& p) {
      return p.state == PluginState::failed;
    });
    if (!detail.empty()) {
      auto it = std::find_if(plugins.begin(), plugins.end(), [&](const PluginInfo& p) {
        return p.id == detail && p.state != PluginState::shadowed;
      });
      if (it == plugins.end()) {
        std::cerr << "stowage-plugin-list: no plugin '" << detail << "' on the plugin path\n";
        return 1;
      }
      if (as_json)
        std::cout << stowage::plugin_info_json(*it, true).dump(2) << "\n";
      else
        print_detail(*it);
      return check && it->state == PluginState::failed ? 1 : 0;
    }
    if (as_json) {
      json out = stowage::plugin_list_json(registry, plugins);
      std::cout << out.dump(2) << "\n";
    } else {
      print_table(plugins);
      if (plugins.empty()) {
        std::cout << "(no plugins found; searched:";
        for (const auto& [dir, exists] : registry.search_path())
          std::cout << " " << dir << (exists ? "" : " (missing)");
        std::cout << ")\n";
      }
    }
    return check && any_failed ? 1 : 0;
  });
}
