// stowage/codec_config.hpp -- a codec's parameters, declared once, and
// reading its JSON config (an N5 "compression" object) against them with
// defaults and range checks, writing it back in canonical form. Needs
// nlohmann_json (header-only, stays inside the plugin).
//
//   static const sdk::Params& params() {          // also the descriptor's params_schema
//     static const sdk::Params p = {sdk::Param::integer("level", 6, -1, 9),
//                                   sdk::Param::boolean("useZlib", false)};
//     return p;
//   }
//   CodecConfig cfg(config_json, "gzip", params());
//   level_ = cfg.integer("level");
//   use_zlib_ = cfg.boolean("useZlib");
//   canonical_ = cfg.canonical();   // {"level":6,"type":"gzip","useZlib":false}
//
// Unknown keys are kept (and ignored), as N5 Java does: canonical() returns
// them too, so a config survives a round trip through stowage unchanged.
#ifndef STOWAGE_CODEC_CONFIG_HPP
#define STOWAGE_CODEC_CONFIG_HPP

#include <stowage/plugin.hpp>
#include <stowage/plugin_json.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::sdk {

// One declared parameter: its JSON type, default and allowed values.
struct Param {
  enum class Type { integer, boolean, string };
  std::string name;
  Type type = Type::integer;
  int64_t int_default = 0, min = 0, max = 0;
  bool bool_default = false;
  std::string string_default;
  std::vector<std::string> allowed;  // strings: the fixed set

  static Param integer(std::string name, int64_t def, int64_t min, int64_t max) {
    Param p;
    p.name = std::move(name);
    p.int_default = def;
    p.min = min;
    p.max = max;
    return p;
  }
  static Param boolean(std::string name, bool def) {
    Param p;
    p.name = std::move(name);
    p.type = Type::boolean;
    p.bool_default = def;
    return p;
  }
  static Param choice(std::string name, std::string def, std::vector<std::string> allowed) {
    Param p;
    p.name = std::move(name);
    p.type = Type::string;
    p.string_default = std::move(def);
    p.allowed = std::move(allowed);
    return p;
  }
  // A free string (a numpy typestr); "" as the default means "the codec
  // decides" (an array -> array codec: the chunk's dtype).
  static Param text(std::string name, std::string def = "") {
    return choice(std::move(name), std::move(def), {});
  }
};
using Params = std::vector<Param>;

// The descriptor's params_schema: {"key": {"type","default","min","max","enum"}}
// in declaration order.
inline std::string schema_json(const Params& params) {
  nlohmann::ordered_json schema = nlohmann::ordered_json::object();
  for (const Param& p : params) {
    nlohmann::ordered_json& j = schema[p.name];
    switch (p.type) {
      case Param::Type::integer:
        j = {{"type", "integer"}, {"default", p.int_default}, {"min", p.min}, {"max", p.max}};
        break;
      case Param::Type::boolean:
        j = {{"type", "boolean"}, {"default", p.bool_default}};
        break;
      case Param::Type::string:
        j = {{"type", "string"}, {"default", p.string_default}};
        if (!p.allowed.empty()) j["enum"] = p.allowed;
        break;
    }
  }
  return schema.dump();
}

class CodecConfig {
 public:
  // `type` is the canonical id written back; the config's own "type" may be
  // an alias (e.g. "zlib" for gzip) and is readable through given_type().
  CodecConfig(std::string_view config_json, std::string type, const Params& params)
      : type_(std::move(type)), params_(params) {
    json_ = parse_json_object<nlohmann::json>(config_json, type_ + ": the configuration");
    if (json_.contains("type") && json_["type"].is_string())
      given_type_ = json_["type"].get<std::string>();
    else
      given_type_ = type_;
    json_["type"] = type_;
  }

  const std::string& given_type() const { return given_type_; }
  const std::string& type() const { return type_; }
  bool has(const char* key) const { return json_.contains(key) && !json_[key].is_null(); }

  // The declared integer `key` in [min, max]; absent means its default.
  // Stored back canonically.
  int64_t integer(const char* key) {
    const Param& p = declared(key, Param::Type::integer);
    int64_t v = p.int_default;
    if (has(key)) {
      const nlohmann::json& j = json_[key];
      bool integral =
          j.is_number_integer() ||
          (j.is_number_float() &&
           j.get<double>() == static_cast<double>(static_cast<int64_t>(j.get<double>())));
      if (!integral) invalid(type_ + ": \"" + key + "\" must be an integer, got " + j.dump());
      v = j.is_number_integer() ? j.get<int64_t>() : static_cast<int64_t>(j.get<double>());
      if (v < p.min || v > p.max)
        invalid(type_ + ": \"" + key + "\" is " + std::to_string(v) + ", allowed range " +
                std::to_string(p.min) + ".." + std::to_string(p.max));
    }
    json_[key] = v;
    return v;
  }

  // The declared boolean `key`; absent means `def` when given (a default
  // that depends on another key), else the declared default.
  bool boolean(const char* key, std::optional<bool> def = std::nullopt) {
    const Param& p = declared(key, Param::Type::boolean);
    bool v = def ? *def : p.bool_default;
    if (has(key)) {
      const nlohmann::json& j = json_[key];
      if (!j.is_boolean())
        invalid(type_ + ": \"" + key + "\" must be true or false, got " + j.dump());
      v = j.get<bool>();
    }
    json_[key] = v;
    return v;
  }

  // The declared string `key`: one of its allowed values, or any string
  // for a Param::text; absent means `def` when given, else the default.
  // Stored back canonically (a text with no value is left out).
  std::string choice(const char* key, std::optional<std::string> def = std::nullopt) {
    const Param& p = declared(key, Param::Type::string);
    std::string v = def ? *def : p.string_default;
    if (has(key)) {
      const nlohmann::json& j = json_[key];
      if (!j.is_string()) invalid(type_ + ": \"" + key + "\" must be a string, got " + j.dump());
      v = j.get<std::string>();
      bool ok = p.allowed.empty();
      std::string list;
      for (const std::string& a : p.allowed) {
        ok = ok || v == a;
        list += (list.empty() ? "" : ", ") + a;
      }
      if (!ok) invalid(type_ + ": \"" + key + "\" is \"" + v + "\", allowed: " + list);
    }
    if (v.empty() && p.allowed.empty())
      json_.erase(key);
    else
      json_[key] = v;
    return v;
  }

  // Removes a key from the canonical form (e.g. numcodecs' stray "id").
  void drop(const char* key) { json_.erase(key); }

  // Canonical JSON: keys sorted, defaults filled in, unknown keys kept.
  std::string canonical() const { return json_.dump(); }

 private:
  // The declaration of `key`; reading an undeclared key is the plugin's bug.
  const Param& declared(const char* key, Param::Type type) const {
    for (const Param& p : params_)
      if (p.name == key && p.type == type) return p;
    fail(STOWAGE_INTERNAL,
         type_ + ": the codec reads parameter \"" + key + "\" without declaring it");
  }

  std::string type_, given_type_;
  const Params& params_;
  nlohmann::json json_;  // std::map-backed: keys come out sorted
};

}  // namespace stowage::sdk

#endif  // STOWAGE_CODEC_CONFIG_HPP
