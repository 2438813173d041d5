// stowage/plugin_json.hpp -- the JSON a host hands a format plugin: open
// options, node descriptions, attributes, command arguments. Each is a JSON
// object; anything else is the caller's mistake and gets one message, the
// same from every format. Needs nlohmann_json (header-only, stays inside the
// plugin).
#ifndef STOWAGE_PLUGIN_JSON_HPP
#define STOWAGE_PLUGIN_JSON_HPP

#include <stowage/plugin.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace stowage::sdk {

// `text` parsed, or INVALID_ARGUMENT "<what> must be a JSON object, got:
// <text>". `what` names the file and the argument ("x.n5: the open
// options"). Empty text is the empty object: hosts pass "" for "no options".
// Json is ordered by default: attributes keep the user's key order, as N5
// Java and zarr-python write them.
template <class Json = nlohmann::ordered_json>
Json parse_json_object(std::string_view text, const std::string& what) {
  if (text.empty()) return Json::object();
  Json j = Json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    invalid(what + " must be a JSON object, got: " + std::string(text));
  return j;
}

}  // namespace stowage::sdk

#endif
