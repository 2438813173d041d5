// Plugin loading: plugin files on the search path, dlopen, and the descriptor and ABI checks.
//
// Search order (docs/design.md, decision 3): paths given through the API
// (--plugin-path), then STOWAGE_PLUGIN_PATH, then
// <dir of libstowage>/stowage/plugins-<ABI> unless STOWAGE_PLUGIN_PATH_ONLY=1.
// Only files named stowage_<codec|format|storage>_<id><suffix> are considered, so kind
// and id are known without loading anything. The first match wins; later ones
// are "shadowed".
#include "registry_impl.hpp"

#include <stowage/storage.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>

namespace stowage {

namespace fs = std::filesystem;

bool valid_id(std::string_view id) {
  if (id.empty()) return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

namespace {

// "stowage_codec_gzip.so" -> ("codec", "gzip"); nullopt for other names.
std::optional<std::pair<std::string, std::string>> parse_plugin_file_name(
    const std::string& name, const std::string& suffix) {
  if (name.size() <= suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::string stem = name.substr(0, name.size() - suffix.size());
  for (const char* kind : {"codec", "format", "storage"}) {
    std::string prefix = std::string("stowage_") + kind + "_";
    if (stem.rfind(prefix, 0) == 0 && valid_id(stem.substr(prefix.size())))
      return std::make_pair(std::string(kind), stem.substr(prefix.size()));
  }
  return std::nullopt;
}

std::vector<std::string> split_path_list(const char* value) {
  std::vector<std::string> out;
  if (!value) return out;
  std::string s(value);
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// Where libstowage itself is, to find the default plugin directory after a
// relocated install.
std::string default_plugin_dir() {
  boost::dll::fs::error_code ec;
  fs::path self = boost::dll::this_line_location(ec);
  if (ec) return {};
  return (self.parent_path() / STOWAGE_PLUGIN_SUBDIR).string();
}

// Boost.DLL clears dlerror() on failure; ask the loader again for its reason
// (an unresolved symbol, a missing library, not an ELF file...).
std::string dlopen_error(const std::string& path, const std::string& fallback) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h) {
    ::dlclose(h);
    return fallback;
  }
  const char* why = ::dlerror();
  return why ? why : fallback;
}

// Plugins are never unloaded (docs/design.md, decision 2): every library
// loaded stays in a process-wide list that is never destroyed, so the handles
// stay owned (a leak checker sees them reachable) and no dlclose runs at exit
// while a plugin may be in use. std::list: the handles never move. nullptr and
// `ec` set if the loader refuses the file.
boost::dll::shared_library* load_for_good(const std::string& path, boost::dll::fs::error_code& ec) {
  static std::mutex mutex;
  static auto* libraries = new std::list<boost::dll::shared_library>();
  std::lock_guard<std::mutex> lock(mutex);
  boost::dll::shared_library& lib = libraries->emplace_back();
  lib.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (!ec) return &lib;
  libraries->pop_back();
  return nullptr;
}

// Whether a descriptor's kind fits the file's: a codec file holds either codec kind.
bool kind_fits(const std::string& file_kind, const std::string& kind) {
  if (file_kind == "codec") return kind == STOWAGE_KIND_CODEC || kind == STOWAGE_KIND_ARRAY_CODEC;
  return kind == (file_kind == "storage" ? STOWAGE_KIND_STORAGE : STOWAGE_KIND_FORMAT);
}

// What a codec vtable of the descriptor's kind lacks ("" when nothing).
std::string codec_table_problem(const stowage_codec_vtable* vt, bool array) {
  if (!vt->destroy || !vt->bound || !vt->encode || !vt->decode)
    return "codec vtable lacks destroy, bound, encode or decode";
  if (!vt->context_create != !vt->context_destroy)
    return "codec vtable has only one of context_create and context_destroy";
  const bool has_array =
      vt->struct_size >= offsetof(stowage_codec_vtable, create_array) + sizeof(void*) &&
      vt->create_array;
  if (array && !has_array) return "array -> array codec vtable lacks create_array";
  if (!array && !vt->create) return "codec vtable lacks create";
  return "";
}

// The least vtable a plugin of each kind may declare.
size_t least_vtable_size(const std::string& file_kind) {
  if (file_kind == "codec") return STOWAGE_CODEC_VTABLE_V1_SIZE;
  if (file_kind == "storage") return STOWAGE_STORAGE_VTABLE_V1_SIZE;
  return STOWAGE_FORMAT_VTABLE_V1_SIZE;
}

}  // namespace

void Registry::Impl::scan_locked() {
  if (scanned) return;
  scanned = true;
  std::vector<std::string> dirs = options.paths;
  bool only_env = false;
  if (options.use_environment) {
    for (const std::string& d : split_path_list(std::getenv("STOWAGE_PLUGIN_PATH")))
      dirs.push_back(d);
    only_env = env_flag("STOWAGE_PLUGIN_PATH_ONLY");
  }
  if (options.use_default_dir && !only_env) {
    std::string def = default_plugin_dir();
    if (!def.empty()) dirs.push_back(def);
  }
  const std::string suffix = boost::dll::shared_library::suffix().string();
  for (const std::string& dir : dirs) {
    std::error_code ec;
    bool exists = fs::is_directory(dir, ec);
    search_path.emplace_back(dir, exists);
    if (!exists) continue;  // a missing directory is skipped, never fatal
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end());  // deterministic order
    for (const fs::path& file : files) {
      auto parsed = parse_plugin_file_name(file.filename().string(), suffix);
      if (!parsed) continue;
      PluginInfo info;
      info.kind = parsed->first;
      info.id = parsed->second;
      info.path = file.string();
      auto key = std::make_pair(info.kind, info.id);
      auto it = active.find(key);
      if (it != active.end()) {
        info.state = PluginState::shadowed;
        info.reason = it->second.path;
        shadowed.push_back(info);
      } else {
        active.emplace(key, info);
      }
    }
  }
}

// Loads one plugin file and checks its descriptor, in the order of
// docs/design.md, decision 3; every failure is recorded on the plugin.
const stowage_plugin* Registry::Impl::load_locked(PluginInfo& info) {
  auto key = std::make_pair(info.kind, info.id);
  if (info.state == PluginState::loaded) return descriptors.at(key);
  if (info.state == PluginState::failed) return nullptr;
  auto failed = [&](std::string reason) -> const stowage_plugin* {
    info.state = PluginState::failed;
    info.reason = std::move(reason);
    return nullptr;
  };
  boost::dll::fs::error_code ec;
  boost::dll::shared_library* lib = load_for_good(info.path, ec);
  if (!lib) return failed("cannot load: " + dlopen_error(info.path, ec.message()));
  if (!lib->has(STOWAGE_PLUGIN_ENTRY_SYMBOL))
    return failed("not a stowage plugin: no '" STOWAGE_PLUGIN_ENTRY_SYMBOL "' symbol");
  auto entry = lib->get<const stowage_plugin*(const stowage_host*)>(STOWAGE_PLUGIN_ENTRY_SYMBOL);
  const stowage_plugin* d = entry(&host);
  if (!d) return failed("stowage_plugin_entry returned no descriptor");
  info.abi_version = d->abi_version;
  if (d->abi_version != STOWAGE_PLUGIN_ABI)
    return failed("ABI mismatch: built for ABI " + std::to_string(d->abi_version) +
                  ", this host speaks " + std::to_string(STOWAGE_PLUGIN_ABI));
  const uint32_t v1_size = offsetof(stowage_plugin, vtable) + sizeof(void*);
  if (d->struct_size < v1_size)
    return failed("descriptor too small (" + std::to_string(d->struct_size) + " bytes)");
  std::string kind = d->kind ? d->kind : "";
  std::string id = d->id ? d->id : "";
  if (!kind_fits(info.kind, kind))
    return failed("kind mismatch: file name says " + info.kind + ", descriptor says '" + kind +
                  "'");
  if (id != info.id)
    return failed("id mismatch: file name says '" + info.id + "', descriptor says '" + id + "'");
  if (!d->vtable) return failed("descriptor has no vtable");
  // Any table at least as large as its first version loads; a later field
  // is read only where struct_size covers it.
  uint32_t vt_size = *static_cast<const uint32_t*>(d->vtable);
  size_t want = least_vtable_size(info.kind);
  if (vt_size < want)
    return failed("vtable too small (" + std::to_string(vt_size) + " bytes, need " +
                  std::to_string(want) + ")");
  if (info.kind == "codec") {
    const bool array = kind == STOWAGE_KIND_ARRAY_CODEC;
    std::string why =
        codec_table_problem(static_cast<const stowage_codec_vtable*>(d->vtable), array);
    if (!why.empty()) return failed(why);
    info.codec_kind = array ? "array" : "bytes";
  }
  if (info.kind == "format") {
    auto* vt = static_cast<const stowage_format_vtable*>(d->vtable);
    if (!vt->identify || !vt->open || !vt->close || !vt->list || !vt->describe || !vt->open_node ||
        !vt->close_node)
      return failed(
          "format vtable lacks identify, open, close, list, describe, open_node or close_node");
  }
  if (info.kind == "storage") {
    std::string why = sdk::storage_table_problem(
        static_cast<const stowage_storage_vtable*>(d->vtable), d->capabilities);
    if (!why.empty()) return failed(why);
  }
  info.version = d->version ? d->version : "";
  info.build_info = d->build_info ? d->build_info : "";
  info.params_schema = d->params_schema ? d->params_schema : "{}";
  info.capabilities = d->capabilities;
  auto has_field = [&](size_t offset) { return d->struct_size >= offset + sizeof(void*); };
  if (has_field(offsetof(stowage_plugin, description)) && d->description)
    info.description = d->description;
  if (has_field(offsetof(stowage_plugin, aliases)) && d->aliases)
    for (const char* const* a = d->aliases; *a; ++a) info.aliases.emplace_back(*a);
  if (has_field(offsetof(stowage_plugin, extensions)) && d->extensions)
    for (const char* const* e = d->extensions; *e; ++e) info.extensions.emplace_back(*e);
  if (has_field(offsetof(stowage_plugin, metadata_files)) && d->metadata_files)
    for (const char* const* m = d->metadata_files; *m; ++m) info.metadata_files.emplace_back(*m);
  if (json::parse(info.params_schema, nullptr, false).is_discarded())
    return failed("its parameter schema is not valid JSON");
  info.state = PluginState::loaded;
  descriptors[key] = d;
  return d;
}

std::string Registry::Impl::describe_search_locked() const {
  std::string s;
  for (const auto& [dir, exists] : search_path)
    s += "\n  " + dir + (exists ? "" : " (does not exist)");
  if (search_path.empty()) s = " (no directories: set STOWAGE_PLUGIN_PATH or use --plugin-path)";
  return s;
}

}  // namespace stowage
