// Declared parameters checked (params.hpp): the one checker of format open
// options and storage options.
#include "params.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace stowage::detail {

// The one rule of what messages never show: a declared option marked
// "secret", and any option or header whose name says it carries one
// (password, bearer_token, secret_access_key, session_token, an
// Authorization, Cookie or X-Amz-Security-Token header), so that a plugin
// that forgets the marker still leaks nothing.
bool secret_name(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* part : {"secret", "password", "token", "authorization", "cookie"})
    if (lower.find(part) != std::string::npos) return true;
  return false;
}

bool secret(const std::string& name, const json& spec) {
  return spec.value("secret", false) || secret_name(name);
}

// `value` as messages show it: "***" for a secret.
std::string shown_value(const std::string& name, const json& spec, const json& value) {
  return secret(name, spec) ? "***" : value.dump();
}

// What a declared option takes, for messages: "2 or 3", "true or false",
// "an integer from 0", "one of [1,0], [1,1]" (the schema of plugin.h).
std::string takes_text(const json& spec) {
  auto either = [](const std::vector<std::string>& values) {
    std::string text;
    for (size_t i = 0; i < values.size(); ++i)
      text += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
    return text;
  };
  std::vector<std::string> values;
  if (spec.contains("enum") && spec["enum"].is_array())
    for (const json& v : spec["enum"]) values.push_back(v.dump());
  const std::string type = spec.value("type", "");
  const bool bounded = spec.contains("min") && spec.contains("max") &&
                       spec["min"].is_number_integer() && spec["max"].is_number_integer();
  if (values.empty() && type == "integer" && bounded &&
      spec["max"].get<int64_t>() - spec["min"].get<int64_t>() < 4)
    for (int64_t v = spec["min"]; v <= spec["max"].get<int64_t>(); ++v)
      values.push_back(std::to_string(v));
  if (!values.empty()) return either(values);
  if (type == "boolean") return "true or false";
  if (type == "integer" && bounded)
    return "an integer from " + spec["min"].dump() + " to " + spec["max"].dump();
  if (type == "integer" && spec.contains("min")) return "an integer from " + spec["min"].dump();
  return (type == "integer" || type == "array" || type == "object" ? "an " : "a ") +
         (type.empty() ? std::string("value") : type);
}

// "zarr_version (2 or 3, default 3), consolidated (true or false)".
std::string options_text(const json& schema) {
  std::string text;
  for (const auto& [key, spec] : schema.items()) {
    text += (text.empty() ? "" : ", ") + key + " (" + takes_text(spec);
    if (spec.contains("default") && !spec["default"].is_null() && !secret(key, spec))
      text += ", default " + shown_value(key, spec, spec["default"]);
    text += ")";
  }
  return text.empty() ? "none" : text;
}

// Whether `value` is one a declared option takes: its type, range and set.
bool takes(const json& spec, const json& value) {
  const std::string type = spec.value("type", "");
  const bool typed = type == "integer"   ? value.is_number_integer()
                     : type == "boolean" ? value.is_boolean()
                     : type == "string"  ? value.is_string()
                     : type == "number"  ? value.is_number()
                     : type == "array"   ? value.is_array()
                     : type == "object"  ? value.is_object()
                                         : true;
  if (!typed) return false;
  if (spec.contains("enum") && spec["enum"].is_array() &&
      std::find(spec["enum"].begin(), spec["enum"].end(), value) == spec["enum"].end())
    return false;
  if (type == "integer" && spec.contains("min") &&
      value.get<int64_t>() < spec["min"].get<int64_t>())
    return false;
  if (type == "integer" && spec.contains("max") &&
      value.get<int64_t>() > spec["max"].get<int64_t>())
    return false;
  return true;
}

void check_params(const json& schema, const json& options, const std::string& what) {
  if (!options.is_object())
    throw Error(ErrorCode::invalid_argument,
                what + " options must be a JSON object, not " + options.dump());
  for (const auto& [key, value] : options.items()) {
    if (!schema.contains(key))
      throw Error(
          ErrorCode::invalid_argument,
          what + " option '" + key + "': no such option; its options: " + options_text(schema));
    if (!takes(schema[key], value))
      throw Error(ErrorCode::invalid_argument, what + " option " + key + "=" +
                                                   shown_value(key, schema[key], value) +
                                                   ": it takes " + takes_text(schema[key]));
  }
}

}  // namespace stowage::detail

namespace stowage {

void parse_key_value(const std::string& spec, json& options, const char* flag) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)  // (not echoed: it may be a token pasted alone)
    throw Error(ErrorCode::invalid_argument, std::string(flag) + " takes KEY=VALUE");
  const std::string value = spec.substr(eq + 1);
  json v = json::parse(value, nullptr, false);
  if (!options.is_object()) options = json::object();
  options[spec.substr(0, eq)] = v.is_discarded() ? json(value) : v;
}

}  // namespace stowage
