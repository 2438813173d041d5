// Codec names: which codec plugin a format's codec entry names, in a dialect
// ("numcodecs", "zarr3"), and a codec config as such an entry (issue 32).
//
// A plugin declares its names (stowage_codec_vtable.names) and may map its
// configuration (import_config, export_config); one declaring nothing is
// known by its id (numcodecs id = id; zarr3 name = id or "numcodecs.<id>")
// with its configuration passed through. A zarr3 "numcodecs.<id>" no plugin
// declares as such is numcodecs id <id> with the configuration's keys.
#include "plugin_call.hpp"
#include "registry_impl.hpp"

#include <cstring>
#include <mutex>

namespace stowage {

namespace {

const char* const kNumcodecsPrefix = "numcodecs.";

// The vtable field at `offset` when the plugin's table is large enough to hold it.
template <class T>
T field(const stowage_codec_vtable* vt, size_t offset) {
  if (vt->struct_size < offset + sizeof(T)) return nullptr;
  T value;
  std::memcpy(&value, reinterpret_cast<const char*>(vt) + offset, sizeof value);
  return value;
}

const stowage_codec_vtable* codec_table(const stowage_plugin* d) {
  return static_cast<const stowage_codec_vtable*>(d->vtable);
}

// A plugin's declared names ({"numcodecs": [...], ...}), or null for none.
json declared_names(const stowage_plugin* d) {
  const char* names = field<const char*>(codec_table(d), offsetof(stowage_codec_vtable, names));
  if (!names) return nullptr;
  json j = json::parse(names, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(ErrorCode::internal,
                std::string("codec plugin '") + d->id + "' declares names that are no JSON object",
                "", std::string("codec ") + d->id);
  return j;
}

void check_dialect(std::string_view dialect) {
  if (dialect != "numcodecs" && dialect != "zarr3")
    throw Error(ErrorCode::invalid_argument,
                "unknown codec dialect \"" + std::string(dialect) + "\" (numcodecs and zarr3 are)");
}

const char* name_key(std::string_view dialect) { return dialect == "numcodecs" ? "id" : "name"; }

// The default rule's import: the entry's keys (zarr3: its configuration's) and "type".
json default_import(std::string_view dialect, const json& entry, const std::string& id) {
  json config = json::object();
  if (dialect == "numcodecs") {
    config = entry;
    config.erase("id");
  } else {
    config = entry.value("configuration", json::object());
    if (!config.is_object())
      throw Error(ErrorCode::corrupt, "codec \"" + entry["name"].get<std::string>() +
                                          "\": \"configuration\" must be an object");
  }
  config["type"] = id;
  return config;
}

// The default rule's export: the config's keys under the dialect's name.
json default_export(std::string_view dialect, const json& config, const std::string& name) {
  json rest = config;
  rest.erase("type");
  if (dialect == "zarr3") return json{{"name", name}, {"configuration", rest}};
  rest["id"] = name;
  return rest;
}

// A JSON object a plugin streamed, or INTERNAL naming the plugin.
json plugin_json(const std::string& text, const char* id, const char* what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(ErrorCode::internal,
                std::string("codec plugin '") + id + "' " + what + " no JSON object: " + text, "",
                std::string("codec ") + id);
  return j;
}

}  // namespace

void Registry::Impl::index_codec_names_locked() {
  if (codec_names_indexed) return;
  codec_names_indexed = true;
  scan_locked();
  for (auto& [key, info] : active) {
    if (key.first != "codec") continue;
    const stowage_plugin* d = load_locked(info);  // a failure stays recorded on the plugin
    if (!d) continue;
    json names;
    try {
      names = declared_names(d);
    } catch (const Error& e) {
      owner->log(STOWAGE_LOG_WARNING, e.what());
      continue;
    }
    if (names.is_null()) continue;
    for (auto& [dialect, list] : names.items()) {
      if (!list.is_array()) continue;
      for (const json& name : list)
        if (name.is_string()) codec_names.emplace(std::make_pair(dialect, name), d->id);
    }
  }
}

json Registry::codec_import(std::string_view dialect, const json& entry, uint64_t item_size,
                            std::string_view context) {
  check_dialect(dialect);
  const char* key = name_key(dialect);
  if (!entry.is_object() || !entry.contains(key) || !entry[key].is_string())
    throw Error(ErrorCode::corrupt, "a " + std::string(dialect) +
                                        " codec must be an object with a string \"" + key +
                                        "\", got " + entry.dump());
  const std::string name = entry[key];
  std::string id;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->index_codec_names_locked();
    auto it = impl_->codec_names.find({std::string(dialect), name});
    if (it != impl_->codec_names.end()) id = it->second;
  }
  if (id.empty() && dialect == "zarr3" && name.rfind(kNumcodecsPrefix, 0) == 0) {
    // zarr-python 3's wrapper of numcodecs codec <id>: numcodecs' keys.
    json as_numcodecs = default_import("zarr3", entry, "");
    as_numcodecs.erase("type");
    as_numcodecs["id"] = name.substr(std::char_traits<char>::length(kNumcodecsPrefix));
    return codec_import("numcodecs", as_numcodecs, item_size, context);
  }
  const stowage_plugin* d = nullptr;
  if (id.empty()) {  // the default rule: a plugin of that id declaring no names
    try {
      d = load("codec", name, context);
    } catch (const Error& e) {
      throw Error(ErrorCode::not_found,
                  "no codec plugin answers to " + std::string(dialect) + " codec \"" + name +
                      "\" (a plugin declares its names, or is known by its id): " + e.what(),
                  std::string(context), "codec " + name);
    }
    if (!declared_names(d).is_null())
      throw Error(ErrorCode::not_found,
                  "no codec plugin answers to " + std::string(dialect) + " codec \"" + name +
                      "\": plugin '" + d->id + "' declares other names " + declared_names(d).dump(),
                  std::string(context), "codec " + name);
    id = d->id;
  } else {
    d = load("codec", id, context);
  }
  auto import = field<decltype(stowage_codec_vtable::import_config)>(
      codec_table(d), offsetof(stowage_codec_vtable, import_config));
  if (!import) return default_import(dialect, entry, id);
  const std::string text = entry.dump();
  std::string out;
  stowage_sink sink = detail::string_sink(&out);
  detail::CallError err;
  const int rc = import(dialect.data(), dialect.size(), name.data(), name.size(), text.data(),
                        text.size(), item_size, &sink, &err);
  if (rc != STOWAGE_OK) detail::throw_status(rc, err, std::string(context), "codec " + id);
  return plugin_json(out, d->id, "imported");
}

json Registry::codec_export(const json& config, std::string_view dialect, uint64_t item_size) {
  check_dialect(dialect);
  if (!config.is_object() || !config.contains("type") || !config["type"].is_string())
    throw Error(ErrorCode::invalid_argument,
                "codec config must be a JSON object with a string \"type\": " + config.dump());
  const stowage_plugin* d = load("codec", config["type"].get<std::string>());
  const json names = declared_names(d);
  const std::string d_dialect(dialect);
  if (!names.is_null() && !names.contains(d_dialect)) {
    if (dialect == "zarr3" && names.contains("numcodecs")) {
      // No v3 name: zarr-python 3's wrapper of its numcodecs codec.
      json entry = codec_export(config, "numcodecs", item_size);
      const std::string id = entry["id"];
      entry.erase("id");
      return json{{"name", kNumcodecsPrefix + id}, {"configuration", entry}};
    }
    throw Error(ErrorCode::unsupported, "codec \"" + std::string(d->id) + "\" has no " + d_dialect +
                                            " name (it declares " + names.dump() + ")");
  }
  auto exporter = field<decltype(stowage_codec_vtable::export_config)>(
      codec_table(d), offsetof(stowage_codec_vtable, export_config));
  if (!exporter) {
    const bool declared = !names.is_null() && names[d_dialect].is_array() &&
                          !names[d_dialect].empty() && names[d_dialect][0].is_string();
    return default_export(dialect, config,
                          declared ? names[d_dialect][0].get<std::string>() : d->id);
  }
  const std::string text = config.dump();
  std::string out;
  stowage_sink sink = detail::string_sink(&out);
  detail::CallError err;
  const int rc =
      exporter(text.data(), text.size(), dialect.data(), dialect.size(), item_size, &sink, &err);
  if (rc != STOWAGE_OK) detail::throw_status(rc, err, "", std::string("codec ") + d->id);
  return plugin_json(out, d->id, "exported");
}

}  // namespace stowage
