// stowage/codec_config.hpp -- reading a codec's JSON config (an N5
// "compression" object) with defaults and range checks, and writing it back
// in canonical form. Needs nlohmann_json (header-only, stays inside the plugin).
//
//   CodecConfig cfg(config_json, "gzip");
//   level_ = cfg.integer("level", 6, -1, 9);
//   use_zlib_ = cfg.boolean("useZlib", false);
//   canonical_ = cfg.canonical();   // {"level":6,"type":"gzip","useZlib":false}
//
// Unknown keys are kept (and ignored), as N5 Java does: canonical() returns
// them too, so a config survives a round trip through stowage unchanged.
#ifndef STOWAGE_CODEC_CONFIG_HPP
#define STOWAGE_CODEC_CONFIG_HPP

#include <stowage/plugin.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace stowage::sdk {

class CodecConfig {
 public:
  // `type` is the canonical id written back; the config's own "type" may be
  // an alias (e.g. "zlib" for gzip) and is readable through given_type().
  CodecConfig(std::string_view config_json, std::string type) : type_(std::move(type)) {
    if (config_json.empty()) {
      json_ = nlohmann::json::object();
    } else {
      json_ = nlohmann::json::parse(config_json.begin(), config_json.end(), nullptr, false);
      if (json_.is_discarded() || !json_.is_object())
        invalid(type_ + ": the codec config is not a JSON object: " + std::string(config_json));
    }
    if (json_.contains("type") && json_["type"].is_string())
      given_type_ = json_["type"].get<std::string>();
    else
      given_type_ = type_;
    json_["type"] = type_;
  }

  const std::string& given_type() const { return given_type_; }
  bool has(const char* key) const { return json_.contains(key) && !json_[key].is_null(); }

  // An integer in [min, max]; absent means `def`. Stored back canonically.
  int64_t integer(const char* key, int64_t def, int64_t min, int64_t max) {
    int64_t v = def;
    if (has(key)) {
      const nlohmann::json& j = json_[key];
      bool integral = j.is_number_integer() ||
                      (j.is_number_float() && j.get<double>() == static_cast<double>(
                                                                     static_cast<int64_t>(j.get<double>())));
      if (!integral)
        invalid(type_ + ": \"" + key + "\" must be an integer, got " + j.dump());
      v = j.is_number_integer() ? j.get<int64_t>() : static_cast<int64_t>(j.get<double>());
      if (v < min || v > max)
        invalid(type_ + ": \"" + key + "\" is " + std::to_string(v) + ", allowed range " +
                std::to_string(min) + ".." + std::to_string(max));
    }
    json_[key] = v;
    return v;
  }

  bool boolean(const char* key, bool def) {
    bool v = def;
    if (has(key)) {
      const nlohmann::json& j = json_[key];
      if (!j.is_boolean()) invalid(type_ + ": \"" + key + "\" must be true or false, got " + j.dump());
      v = j.get<bool>();
    }
    json_[key] = v;
    return v;
  }

  void set_boolean(const char* key, bool v) { json_[key] = v; }

  // A string from a fixed set.
  std::string choice(const char* key, const std::string& def,
                     std::initializer_list<const char*> allowed) {
    std::string v = def;
    if (has(key)) {
      const nlohmann::json& j = json_[key];
      if (!j.is_string()) invalid(type_ + ": \"" + key + "\" must be a string, got " + j.dump());
      v = j.get<std::string>();
      bool ok = false;
      std::string list;
      for (const char* a : allowed) {
        ok = ok || v == a;
        list += (list.empty() ? "" : ", ") + std::string(a);
      }
      if (!ok) invalid(type_ + ": \"" + key + "\" is \"" + v + "\", allowed: " + list);
    }
    json_[key] = v;
    return v;
  }

  // Removes a key from the canonical form (e.g. numcodecs' stray "id").
  void drop(const char* key) { json_.erase(key); }

  // Canonical JSON: keys sorted, defaults filled in, unknown keys kept.
  std::string canonical() const { return json_.dump(); }

 private:
  std::string type_, given_type_;
  nlohmann::json json_;  // std::map-backed: keys come out sorted
};

}  // namespace stowage::sdk

#endif  // STOWAGE_CODEC_CONFIG_HPP
