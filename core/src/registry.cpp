// The plugin registry: discovery by file name, loading on first use, and a
// record of why any plugin failed.
//
// Search order (docs/design.md, decision 3): paths given through the API
// (--plugin-path), then STOWAGE_PLUGIN_PATH, then
// <dir of libstowage>/stowage/plugins-<ABI> unless STOWAGE_PLUGIN_PATH_ONLY=1.
// Only files named stowage_<codec|format|storage>_<id><suffix> are considered, so kind
// and id are known without loading anything. The first match wins; later ones
// are "shadowed".
#include "internal.hpp"

#include <stowage/plugin_util.hpp>  // redact_userinfo
#include <stowage/storage.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <list>
#include <map>
#include <mutex>
#include <thread>

namespace stowage {

namespace fs = std::filesystem;

const char* plugin_state_name(PluginState s) {
  switch (s) {
    case PluginState::available: return "available";
    case PluginState::loaded: return "loaded";
    case PluginState::failed: return "failed";
    case PluginState::shadowed: return "shadowed";
  }
  return "?";
}

std::string capability_letters(uint64_t caps) {
  std::string s;
  s += caps & STOWAGE_CAP_READ ? 'r' : '-';
  s += caps & STOWAGE_CAP_WRITE ? 'w' : '-';
  s += caps & STOWAGE_CAP_THREADSAFE ? 't' : '-';
  s += caps & STOWAGE_CAP_PARTIAL ? 'p' : '-';
  return s;
}

namespace {

bool valid_id(std::string_view id) {
  if (id.empty()) return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// "stowage_codec_gzip.so" -> ("codec", "gzip"); nullopt for other names.
std::optional<std::pair<std::string, std::string>> parse_plugin_file_name(const std::string& name,
                                                                         const std::string& suffix) {
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
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

std::string kind_of_descriptor(const std::string& file_kind) {
  if (file_kind == "codec") return STOWAGE_KIND_CODEC;
  if (file_kind == "storage") return STOWAGE_KIND_STORAGE;
  return STOWAGE_KIND_FORMAT;
}

// The least vtable a plugin of each kind may declare.
size_t least_vtable_size(const std::string& file_kind) {
  if (file_kind == "codec") return STOWAGE_CODEC_VTABLE_V1_SIZE;
  if (file_kind == "storage") return STOWAGE_STORAGE_VTABLE_V1_SIZE;
  return STOWAGE_FORMAT_VTABLE_V1_SIZE;
}

}  // namespace

// ---- Impl -------------------------------------------------------------------

struct Registry::Impl {
  Options options;
  std::mutex mutex;  // guards everything below and serializes dlopen
  bool scanned = false;
  std::vector<std::pair<std::string, bool>> search_path;
  std::map<std::pair<std::string, std::string>, PluginInfo> active;  // (kind, id)
  std::vector<PluginInfo> shadowed;
  std::map<std::pair<std::string, std::string>, const stowage_plugin*> descriptors;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  stowage_host host{};  // this registry's own table (issue 19: one per Registry)
  Registry* owner = nullptr;
  std::mutex log_mutex;  // guards log_sink
  LogSink log_sink;

  // The storage backends opened so far, one per scheme, closed with the registry.
  struct OpenStorage {
    const stowage_storage_vtable* vt = nullptr;
    stowage_storage_handle handle = nullptr;
    uint64_t capabilities = 0;
  };
  std::mutex storage_mutex;  // not `mutex`: opening a backend loads its plugin under that one
  std::map<std::string, OpenStorage> storages;
  ~Impl() {
    for (auto& [scheme, s] : storages) s.vt->close(s.handle);
  }

  void scan_locked();
  const stowage_plugin* load_locked(PluginInfo& info);
  std::string describe_search_locked() const;
};

void Registry::Impl::scan_locked() {
  if (scanned) return;
  scanned = true;
  std::vector<std::string> dirs = options.paths;
  bool only_env = false;
  if (options.use_environment) {
    for (const std::string& d : split_path_list(std::getenv("STOWAGE_PLUGIN_PATH"))) dirs.push_back(d);
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
  if (kind != kind_of_descriptor(info.kind))
    return failed("kind mismatch: file name says " + info.kind + ", descriptor says '" + kind + "'");
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
    auto* vt = static_cast<const stowage_codec_vtable*>(d->vtable);
    if (!vt->create || !vt->destroy || !vt->bound || !vt->encode || !vt->decode)
      return failed("codec vtable lacks create, destroy, bound, encode or decode");
    if (!vt->context_create != !vt->context_destroy)
      return failed("codec vtable has only one of context_create and context_destroy");
  }
  if (info.kind == "format") {
    auto* vt = static_cast<const stowage_format_vtable*>(d->vtable);
    if (!vt->identify || !vt->open || !vt->close || !vt->list || !vt->describe || !vt->open_node ||
        !vt->close_node)
      return failed("format vtable lacks identify, open, close, list, describe, open_node or close_node");
  }
  if (info.kind == "storage") {
    std::string why = sdk::storage_table_problem(static_cast<const stowage_storage_vtable*>(d->vtable), d->capabilities);
    if (!why.empty()) return failed(why);
  }
  info.version = d->version ? d->version : "";
  info.build_info = d->build_info ? d->build_info : "";
  info.params_schema = d->params_schema ? d->params_schema : "{}";
  info.capabilities = d->capabilities;
  auto has_field = [&](size_t offset) { return d->struct_size >= offset + sizeof(void*); };
  if (has_field(offsetof(stowage_plugin, description)) && d->description) info.description = d->description;
  if (has_field(offsetof(stowage_plugin, aliases)) && d->aliases)
    for (const char* const* a = d->aliases; *a; ++a) info.aliases.emplace_back(*a);
  if (has_field(offsetof(stowage_plugin, extensions)) && d->extensions)
    for (const char* const* e = d->extensions; *e; ++e) info.extensions.emplace_back(*e);
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

// ---- host function table ----------------------------------------------------------

namespace detail {
namespace {
thread_local LogCapture* active_capture = nullptr;
}
LogCapture::LogCapture(std::vector<std::string>& into) : into_(into), outer_(active_capture) { active_capture = this; }
LogCapture::~LogCapture() { active_capture = outer_; }
bool LogCapture::take(const std::string& message) {
  if (!active_capture) return false;
  active_capture->into_.push_back(message);
  return true;
}
}  // namespace detail

namespace {

void host_log(void* ctx, int32_t level, const char* message, size_t size) {
  static_cast<const Registry*>(ctx)->log(level, std::string_view(message, size));
}

void stderr_log(int32_t level, std::string_view message) {
  static const int threshold = [] {
    const char* v = std::getenv("STOWAGE_LOG");
    if (!v) return STOWAGE_LOG_WARNING;
    std::string s(v);
    if (s == "debug") return STOWAGE_LOG_DEBUG;
    if (s == "info") return STOWAGE_LOG_INFO;
    if (s == "error") return STOWAGE_LOG_ERROR;
    return STOWAGE_LOG_WARNING;
  }();
  if (level < threshold) return;
  if (level >= STOWAGE_LOG_WARNING && detail::LogCapture::take(std::string(message))) return;
  static const char* names[] = {"debug", "info", "warning", "error"};
  std::cerr << "stowage " << names[std::clamp(level, 0, 3)] << ": " << message << "\n";
}

// Errors of the host's own functions, as a plugin's would be.
int host_error(stowage_error* err, int code, const char* message) {
  if (err) {
    err->code = code;
    std::snprintf(err->message, sizeof err->message, "%s", message);
  }
  return code;
}

}  // namespace
}  // namespace stowage

// What the host hands a format plugin for a codec: a share of its state
// (configuration and context pool), so the codec lives as long as either.
struct stowage_host_codec_state {
  std::shared_ptr<stowage::detail::CodecAccess::State> state;
};

namespace stowage {
namespace {

int host_codec_create(void* ctx, const char* config, size_t size, stowage_host_codec* out,
                      stowage_sink* canonical, stowage_error* err) {
  auto* registry = static_cast<Registry*>(ctx);
  try {
    Codec codec = registry->codec(std::string_view(config, size));
    const std::shared_ptr<detail::CodecAccess::State>& state = detail::CodecAccess::state(codec);
    if (canonical && canonical->write(canonical->ctx, state->canonical.data(), state->canonical.size()) != 0)
      return host_error(err, STOWAGE_INTERNAL, "the plugin refused the canonical config");
    *out = new stowage_host_codec_state{state};
    return STOWAGE_OK;
  } catch (const Error& e) {
    return host_error(err, static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    return host_error(err, STOWAGE_INTERNAL, e.what());
  }
}

void host_codec_destroy(stowage_host_codec codec) { delete codec; }

uint64_t host_codec_bound(stowage_host_codec codec, uint64_t n) {
  const detail::CodecAccess::State& s = *codec->state;
  return s.vt->bound(s.config, n);
}

int host_codec_encode(stowage_host_codec codec, const void* in, size_t n, void* out, size_t capacity,
                      size_t* written, stowage_error* err) {
  return codec->state->encode(in, n, out, capacity, written, err);
}

int host_codec_decode(stowage_host_codec codec, const void* in, size_t n, void* out, size_t capacity,
                      size_t* written, stowage_error* err) {
  return codec->state->decode(in, n, out, capacity, written, err);
}

uint32_t host_thread_count(void* ctx) { return static_cast<Registry*>(ctx)->threads(); }

int host_storage(void* ctx, const char* location, size_t size, const stowage_storage_vtable** vt,
                 stowage_storage_handle* handle, uint64_t* caps, stowage_error* err) {
  try {
    Registry::StorageBackend s = static_cast<Registry*>(ctx)->storage(std::string_view(location, size));
    *vt = s.vtable;
    *handle = s.handle;
    if (caps) *caps = s.capabilities;
    return STOWAGE_OK;
  } catch (const Error& e) {
    if (err) {
      err->code = static_cast<int32_t>(e.code());
      std::snprintf(err->message, sizeof err->message, "%s", e.what());
    }
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    if (err) {
      err->code = STOWAGE_INTERNAL;
      std::snprintf(err->message, sizeof err->message, "%s", e.what());
    }
    return STOWAGE_INTERNAL;
  }
}

}  // namespace

// ---- Registry --------------------------------------------------------------------

Registry::Registry() : Registry(Options{}) {}

Registry::Registry(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->owner = this;
  impl_->host.struct_size = sizeof(stowage_host);
  impl_->host.abi_version = STOWAGE_PLUGIN_ABI;
  impl_->host.ctx = this;
  impl_->host.log = host_log;
  impl_->host.thread_count = host_thread_count;
  impl_->host.codec_create = host_codec_create;
  impl_->host.codec_destroy = host_codec_destroy;
  impl_->host.codec_bound = host_codec_bound;
  impl_->host.codec_encode = host_codec_encode;
  impl_->host.codec_decode = host_codec_decode;
  impl_->host.storage = host_storage;
}

Registry::~Registry() = default;

Registry& Registry::global() {
  // Never destroyed: plugins are never unloaded and may be in use at exit.
  static Registry* registry = new Registry();
  return *registry;
}

const stowage_host* Registry::host() const { return &impl_->host; }

void Registry::set_threads(unsigned n) { impl_->threads = std::max(1u, n); }
unsigned Registry::threads() const { return impl_->threads; }

void Registry::set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(impl_->log_mutex);
  impl_->log_sink = std::move(sink);
}

void Registry::log(int level, std::string_view message) const {
  LogSink sink;
  {
    std::lock_guard<std::mutex> lock(impl_->log_mutex);
    sink = impl_->log_sink;
  }
  if (sink)
    sink(level, message);
  else
    stderr_log(level, message);
}

std::vector<std::pair<std::string, bool>> Registry::search_path() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->scan_locked();
  return impl_->search_path;
}

std::vector<PluginInfo> Registry::plugins(bool load) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->scan_locked();
  std::vector<PluginInfo> out;
  for (auto& [key, info] : impl_->active) {
    if (load) impl_->load_locked(info);
    out.push_back(info);
  }
  for (const PluginInfo& s : impl_->shadowed) out.push_back(s);
  return out;
}

std::optional<PluginInfo> Registry::find(std::string_view kind, std::string_view id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->scan_locked();
  auto it = impl_->active.find({std::string(kind), std::string(id)});
  if (it == impl_->active.end()) return std::nullopt;
  return it->second;
}

const stowage_plugin* Registry::load(std::string_view kind, std::string_view id,
                                     std::string_view context) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->scan_locked();
  const std::string k(kind), i(id);
  auto it = impl_->active.find({k, i});
  if (it == impl_->active.end() && k != "format" && valid_id(i)) {
    // Not a file of its own: maybe another plugin's alias ("zlib" -> gzip, "https" -> http).
    for (auto& [key, info] : impl_->active) {
      if (key.first != k) continue;
      impl_->load_locked(info);
      if (std::find(info.aliases.begin(), info.aliases.end(), i) != info.aliases.end())
        return impl_->descriptors.at(key);
    }
  }
  std::string who = context.empty() ? "" : std::string(context) + " needs " + k + " '" + i + "': ";
  if (it == impl_->active.end())
    throw Error(ErrorCode::not_found,
                who + "no plugin stowage_" + k + "_" + i + " found; searched:" +
                    impl_->describe_search_locked(),
                std::string(context), k + " " + i);
  const stowage_plugin* d = impl_->load_locked(it->second);
  if (!d)
    throw Error(ErrorCode::not_found,
                who + "plugin " + it->second.path + " failed to load: " + it->second.reason,
                std::string(context), k + " " + i);
  return d;
}


// "http://h/x.n5" -> "http"; a location without "<scheme>://" is a path: "file".
std::string storage_scheme(std::string_view location) {
  size_t colon = location.find("://");
  if (colon == std::string_view::npos || colon == 0) return "file";
  std::string scheme(location.substr(0, colon));
  for (char& c : scheme) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return "file";  // "C:/x", "a b://"
  }
  return scheme;
}

Registry::StorageBackend Registry::storage(std::string_view location) {
  const std::string scheme = storage_scheme(location);
  std::lock_guard<std::mutex> lock(impl_->storage_mutex);
  auto it = impl_->storages.find(scheme);
  if (it == impl_->storages.end()) {
    const stowage_plugin* d = load("storage", scheme, location);
    Impl::OpenStorage s;
    s.vt = static_cast<const stowage_storage_vtable*>(d->vtable);
    s.capabilities = sdk::storage_capabilities(s.vt, d->capabilities);  // the parts its tables have
    detail::CallError err;
    int rc = s.vt->open(&impl_->host, "", 0, &s.handle, &err);
    if (rc != STOWAGE_OK) detail::throw_status(rc, err, std::string(location), "storage " + scheme);
    it = impl_->storages.emplace(scheme, s).first;
  }
  return {it->second.vt, it->second.handle, it->second.capabilities};
}

Codec Registry::codec(const json& config, std::string_view context) {
  return codec(std::string_view(config.dump()), context);
}

Codec Registry::codec(const char* config_json, std::string_view context) {
  return codec(std::string_view(config_json), context);
}

Codec Registry::codec(const std::string& config_json, std::string_view context) {
  return codec(std::string_view(config_json), context);
}

Codec Registry::codec(std::string_view config_json, std::string_view context) {
  json config = json::parse(config_json, nullptr, false);
  if (config.is_discarded() || !config.is_object() || !config.contains("type") ||
      !config["type"].is_string())
    throw Error(ErrorCode::invalid_argument,
                "codec config must be a JSON object with a string \"type\": " + std::string(config_json),
                std::string(context));
  std::string id = config["type"];
  const stowage_plugin* d = load("codec", id, context);
  // One idle context per worker thread and one for the calling thread.
  auto state = std::make_shared<Codec::State>(size_t{impl_->threads} + 1);
  state->plugin = d;
  state->vt = static_cast<const stowage_codec_vtable*>(d->vtable);
  state->id = d->id;
  state->capabilities = d->capabilities;
  detail::CallError err;
  stowage_sink canonical = detail::string_sink(&state->canonical);
  int rc = state->vt->create(&impl_->host, config_json.data(), config_json.size(), &state->config,
                             &canonical, &err);
  if (rc != STOWAGE_OK) detail::throw_status(rc, err, std::string(context), "codec " + id);
  Codec codec;
  codec.state_ = std::move(state);
  return codec;
}

namespace {

// Why the storage could not be read: detection's message says so (an HTTP
// status, a refused connection, a timeout, a symlink loop), not "no format".
struct StorageFailure {
  ErrorCode code;
  std::string message;
};

template <class F>
std::optional<StorageFailure> failure_of(F&& call) {
  try {
    call();
  } catch (const sdk::Error& e) {
    return StorageFailure{static_cast<ErrorCode>(e.code()), e.what()};
  } catch (const Error& e) {
    return StorageFailure{e.code(), e.what()};
  } catch (const std::exception& e) {
    return StorageFailure{ErrorCode::io, e.what()};
  }
  return std::nullopt;
}

// What every format's identify is given, read once (GDAL's GDALOpenInfo):
// the path's kind and size, a file's first and last bytes, a directory's
// names. Over HTTP that is a HEAD and two ranged GETs, or one listing,
// where six formats probing on their own made 10-15 requests.
struct PathProbe {
  stowage_probe probe{};
  std::string header, trailer, entries;
  // The storage failed: kind is STOWAGE_PROBE_KIND_UNKNOWN (formats that
  // name paths of their own, a URI scheme of their own, still can decide).
  std::optional<StorageFailure> failure;
  std::optional<StorageFailure> list_failure;  // a directory that could not be listed

  PathProbe(Registry& registry, const std::string& path) {
    probe.struct_size = sizeof(stowage_probe);
    probe.path = path.data();
    probe.path_size = path.size();
    probe.kind = STOWAGE_PROBE_KIND_UNKNOWN;
    failure = failure_of([&] {
      Registry::StorageBackend b = registry.storage(path);
      sdk::Storage storage(b.vtable, b.handle, b.capabilities);
      probe.kind = storage.kind(path, &probe.size);
      if (probe.kind == STOWAGE_ENTRY_FILE) read_ends(storage, path);
      if (probe.kind == STOWAGE_ENTRY_DIRECTORY) list(storage, path);
    });
    if (failure) {  // no half-read file for a format to judge
      probe.kind = STOWAGE_PROBE_KIND_UNKNOWN;
      header.clear();
      trailer.clear();
    }
    probe.header = header.size() ? reinterpret_cast<const uint8_t*>(header.data()) : nullptr;
    probe.header_size = header.size();
    probe.trailer = trailer.size() ? reinterpret_cast<const uint8_t*>(trailer.data()) : nullptr;
    probe.trailer_size = trailer.size();
  }

 private:
  void read_ends(const sdk::Storage& storage, const std::string& path) {
    header = storage.read(path, 0, std::min<uint64_t>(probe.size, STOWAGE_PROBE_HEADER_SIZE)).text();
    const uint64_t tail = std::min<uint64_t>(probe.size, STOWAGE_PROBE_TRAILER_SIZE);
    if (probe.size <= header.size())  // the whole file is in the header
      trailer = header.substr(header.size() - std::min<size_t>(tail, header.size()));
    else
      trailer = storage.read(path, probe.size - tail, tail).text();
  }
  // A server without listings leaves `listed` at 0: formats ask for the
  // names they need; why it could not list is kept for the message.
  void list(const sdk::Storage& storage, const std::string& path) {
    list_failure = failure_of([&] {
      for (const std::string& name : storage.list(path)) entries.append(name).push_back('\0');
      probe.entries = entries.data();
      probe.entries_size = entries.size();
      probe.listed = 1;
    });
  }
};

using Scores = std::vector<std::pair<std::string, int32_t>>;

// Every format's score for the probe; a plugin that fails to load scores
// nothing (plugin-list says why).
Scores score_formats(Registry& registry, const std::vector<std::string>& ids, const PathProbe& probe) {
  Scores scores;
  for (const std::string& id : ids) {
    const stowage_plugin* d = nullptr;
    try {
      d = registry.load("format", id);
    } catch (const Error&) {
      continue;
    }
    auto* vt = static_cast<const stowage_format_vtable*>(d->vtable);
    scores.emplace_back(id, vt->identify(registry.host(), &probe.probe));
  }
  return scores;
}

// The formats that scored best (several: a tie; none: no format claims it).
std::vector<std::string> best_of(const Scores& scores) {
  int32_t best = 0;
  std::vector<std::string> winners;
  for (const auto& [id, score] : scores) {
    if (score > best) {
      best = score;
      winners = {id};
    } else if (score == best && score > 0) {
      winners.push_back(id);
    }
  }
  return winners;
}

std::string joined(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  return all;
}

const char* const kNameTheFormat = "name the format explicitly (stowage-info --format, stowage-convert --from)";

// Why no format claims `path`: the storage failed, it is absent, or it is
// none of the formats'.
[[noreturn]] void throw_unrecognised(const std::string& path, const PathProbe& probe, const Scores& scores) {
  if (probe.failure) {
    std::string why = probe.failure->message;
    const std::string named = sdk::redact_userinfo(path) + ": ";  // (the storage shows no password either)
    if (why.rfind(named, 0) == 0) why.erase(0, named.size());  // named once is enough
    throw Error(probe.failure->code, path + ": cannot detect its format: " + why, path);
  }
  if (probe.probe.kind == STOWAGE_ENTRY_ABSENT)
    throw Error(ErrorCode::not_found, path + ": no such file or directory", path);
  std::vector<std::string> tried;
  for (const auto& s : scores) tried.push_back(s.first);
  std::string listing;
  if (probe.list_failure && probe.list_failure->code != ErrorCode::unsupported)
    listing = "; listing it failed: " + probe.list_failure->message;
  throw Error(ErrorCode::unsupported,
              path + ": no format plugin recognises it (tried: " + (tried.empty() ? "none" : joined(tried)) + ")" +
                  listing + "; " + kNameTheFormat,
              path);
}

// The ids of the active (not shadowed) format plugins, loaded or not.
std::vector<std::string> format_ids(Registry& registry) {
  std::vector<std::string> ids;
  for (const PluginInfo& info : registry.plugins(false))
    if (info.kind == "format" && info.state != PluginState::shadowed) ids.push_back(info.id);
  return ids;
}

}  // namespace

std::vector<std::pair<std::string, int32_t>> Registry::identify(const std::string& path) {
  const std::vector<std::string> ids = format_ids(*this);
  return score_formats(*this, ids, PathProbe(*this, path));
}

std::string Registry::detect_format(const std::string& path) {
  const std::vector<std::string> ids = format_ids(*this);
  const PathProbe probe(*this, path);
  const Scores scores = score_formats(*this, ids, probe);
  const std::vector<std::string> winners = best_of(scores);
  if (winners.empty()) throw_unrecognised(path, probe, scores);
  if (winners.size() > 1)
    throw Error(ErrorCode::invalid_argument,
                path + ": several formats claim it equally (" + joined(winners) + "); " + kNameTheFormat, path);
  return winners.front();
}

std::optional<std::string> Registry::format_for_extension(const std::string& path) {
  std::vector<std::string> matches;
  for (const PluginInfo& info : plugins(true)) {
    if (info.kind != "format" || info.state != PluginState::loaded) continue;
    for (const std::string& ext : info.extensions)
      if (path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
        matches.push_back(info.id);
  }
  if (matches.size() == 1) return matches.front();
  return std::nullopt;
}

}  // namespace stowage
