// stowage/codec_names.hpp -- helpers for a codec's names in other formats'
// codec registries (stowage_codec_vtable.names, plugin.hpp's import_config
// and export_config). A codec writes, for example (gzip):
//
//   static const char* names() { return R"({"numcodecs":["zlib","gzip"],"zarr3":["gzip"]})"; }
//   static nlohmann::json import_config(std::string_view dialect, std::string_view name,
//                                       std::string_view entry_json, uint64_t item_size) {
//     sdk::CodecEntry e(dialect, name, entry_json);
//     return {{"type", "gzip"}, {"level", e.integer("level", 1)}, {"useZlib", name == "zlib"}};
//   }
//   static nlohmann::json export_config(std::string_view config_json, std::string_view dialect,
//                                       uint64_t item_size) {
//     nlohmann::json c = nlohmann::json::parse(config_json);
//     return sdk::codec_entry(dialect, "gzip", {{"level", c["level"]}});
//   }
//
// Dialects: "numcodecs" (a Zarr v2 compressor {"id": name, keys...}; the host
// also hands a zarr-python 3 "numcodecs.<id>" codec here, its configuration
// as the keys) and "zarr3" ({"name": name, "configuration": {keys...}}).
// Needs nlohmann_json (header-only, stays inside the plugin).
#ifndef STOWAGE_CODEC_NAMES_HPP
#define STOWAGE_CODEC_NAMES_HPP

#include <stowage/plugin.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace stowage::sdk {

// One dialect entry as written: its keys, read with the dialect's defaults;
// a key of the wrong type is CORRUPT naming the codec and the key.
class CodecEntry {
 public:
  CodecEntry(std::string_view dialect, std::string_view name, std::string_view entry_json)
      : numcodecs_(dialect == "numcodecs"), name_(name) {
    nlohmann::json entry = nlohmann::json::parse(entry_json, nullptr, false);
    if (entry.is_discarded() || !entry.is_object())
      corrupt(what() + ": the entry is no JSON object: " + std::string(entry_json));
    keys_ = numcodecs_ ? entry : entry.value("configuration", nlohmann::json::object());
    if (!keys_.is_object()) corrupt(what() + ": \"configuration\" must be an object");
  }

  // `compressor "zlib"` (numcodecs) or `codec "gzip"` (zarr3), for messages.
  std::string what() const {
    return std::string(numcodecs_ ? "compressor \"" : "codec \"") + name_ + "\"";
  }
  bool numcodecs() const { return numcodecs_; }
  const nlohmann::json& keys() const { return keys_; }
  // Present and not null.
  bool has(const char* key) const { return keys_.contains(key) && !keys_[key].is_null(); }

  int64_t integer(const char* key, int64_t fallback) const {
    if (!has(key)) return fallback;
    if (!keys_[key].is_number_integer())
      corrupt(what() + ": \"" + key + "\" must be an integer, got " + keys_[key].dump());
    return keys_[key].get<int64_t>();
  }
  std::string text(const char* key, const char* fallback) const {
    if (!has(key)) return fallback;
    if (!keys_[key].is_string())
      corrupt(what() + ": \"" + key + "\" must be a string, got " + keys_[key].dump());
    return keys_[key].get<std::string>();
  }

 private:
  bool numcodecs_;
  std::string name_;
  nlohmann::json keys_;
};

// The dialect's entry for `name` with `keys`: numcodecs {"id": name, keys...},
// zarr3 {"name": name, "configuration": keys}.
inline nlohmann::json codec_entry(std::string_view dialect, std::string_view name,
                                  nlohmann::json keys) {
  if (dialect == "numcodecs") {
    keys["id"] = std::string(name);
    return keys;
  }
  return {{"name", std::string(name)}, {"configuration", std::move(keys)}};
}

// A codec config as export_config receives it (canonical, from create()).
inline nlohmann::json config_keys(std::string_view config_json) {
  nlohmann::json c = nlohmann::json::parse(config_json, nullptr, false);
  if (c.is_discarded() || !c.is_object())
    invalid("codec export: the config is no JSON object: " + std::string(config_json));
  return c;
}

// config[key], INVALID_ARGUMENT naming the codec when the config lacks it.
inline const nlohmann::json& config_value(const nlohmann::json& config, const char* key) {
  if (!config.contains(key))
    invalid("codec config " + config.dump() + " has no \"" + std::string(key) + "\"");
  return config[key];
}

}  // namespace stowage::sdk

#endif  // STOWAGE_CODEC_NAMES_HPP
