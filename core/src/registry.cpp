// The Registry's public face: construction, plugin list and lookups, load by kind and id, codecs.
//
// Loading is in loading.cpp, host services in host.cpp, storage choice in
// storage_choice.cpp, format detection in detection.cpp.
#include "codec_state.hpp"
#include "plugin_call.hpp"
#include "registry_impl.hpp"

#include <algorithm>
#include <mutex>

namespace stowage {

const char* plugin_state_name(PluginState s) {
  switch (s) {
    case PluginState::available:
      return "available";
    case PluginState::loaded:
      return "loaded";
    case PluginState::failed:
      return "failed";
    case PluginState::shadowed:
      return "shadowed";
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

// ---- Registry --------------------------------------------------------------------

Registry::Registry() : Registry(Options{}) {}

Registry::Registry(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->owner = this;
  impl_->fill_host(this);
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
                who + "no plugin stowage_" + k + "_" + i +
                    " found; searched:" + impl_->describe_search_locked(),
                std::string(context), k + " " + i);
  const stowage_plugin* d = impl_->load_locked(it->second);
  if (!d)
    throw Error(ErrorCode::not_found,
                who + "plugin " + it->second.path + " failed to load: " + it->second.reason,
                std::string(context), k + " " + i);
  return d;
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
  return make_codec(config_json, nullptr, context);
}

Codec Registry::array_codec(std::string_view config_json, const json& chunk,
                            std::string_view context) {
  return make_codec(config_json, &chunk, context);
}

// A codec of either kind: `chunk` is the array -> array codec's chunk, null
// for a bytes -> bytes codec.
Codec Registry::make_codec(std::string_view config_json, const json* chunk,
                           std::string_view context) {
  json config = json::parse(config_json, nullptr, false);
  if (config.is_discarded() || !config.is_object() || !config.contains("type") ||
      !config["type"].is_string())
    throw Error(
        ErrorCode::invalid_argument,
        "codec config must be a JSON object with a string \"type\": " + std::string(config_json),
        std::string(context));
  std::string id = config["type"];
  const stowage_plugin* d = load("codec", id, context);
  const bool array = std::string_view(d->kind) == STOWAGE_KIND_ARRAY_CODEC;
  if (array != (chunk != nullptr)) {
    std::string where = context.empty() ? "" : std::string(context) + ": ";
    throw Error(ErrorCode::invalid_argument,
                where + "codec '" + id + "' is " +
                    (array ? "array -> array (a filter): it goes where the format takes filters"
                           : "bytes -> bytes: it goes where the format takes a compressor") +
                    ", not here",
                std::string(context), "codec " + id);
  }
  // One idle context per worker thread and one for the calling thread.
  auto state = std::make_shared<Codec::State>(size_t{impl_->threads} + 1);
  state->plugin = d;
  state->vt = static_cast<const stowage_codec_vtable*>(d->vtable);
  state->id = d->id;
  state->capabilities = d->capabilities;
  detail::CallError err;
  stowage_sink canonical = detail::string_sink(&state->canonical);
  int rc;
  if (array) {
    const std::string spec = chunk->dump();
    stowage_sink encoded = detail::string_sink(&state->encoded_chunk);
    rc = state->vt->create_array(&impl_->host, config_json.data(), config_json.size(), spec.data(),
                                 spec.size(), &state->config, &canonical, &encoded, &err);
  } else {
    rc = state->vt->create(&impl_->host, config_json.data(), config_json.size(), &state->config,
                           &canonical, &err);
  }
  if (rc != STOWAGE_OK) detail::throw_status(rc, err, std::string(context), "codec " + id);
  Codec codec;
  codec.state_ = std::move(state);
  return codec;
}

}  // namespace stowage
