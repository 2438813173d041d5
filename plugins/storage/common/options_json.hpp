// A storage backend's options as JSON, from its caller or from its
// environment variable (STOWAGE_HTTP_OPTIONS, STOWAGE_S3_OPTIONS): text that
// may hold a token, a password or a secret key, so a text that is no JSON
// object is refused without being shown (sdk::parse_json_object shows it).
#ifndef STOWAGE_STORAGE_COMMON_OPTIONS_JSON_HPP
#define STOWAGE_STORAGE_COMMON_OPTIONS_JSON_HPP

#include <stowage/plugin.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace stowage_curl {

inline nlohmann::json options_json(std::string_view text, const std::string& what) {
  if (text.empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    stowage::sdk::invalid(what +
                          " must be a JSON object (the text is not shown: it may hold a "
                          "secret)");
  return j;
}

}  // namespace stowage_curl

#endif  // STOWAGE_STORAGE_COMMON_OPTIONS_JSON_HPP
