// Declared parameters: a plugin's params_schema (plugin.h: {"key": {"type",
// "default", "min", "max", "enum", "secret"}}) and the JSON objects checked
// against it, for format open options and storage options alike.
#pragma once

#include <stowage/stowage.hpp>

#include <string>

namespace stowage::detail {

// What a declared option takes, for messages: "2 or 3", "true or false",
// "an integer from 0", "one of [1,0], [1,1]".
std::string takes_text(const json& spec);
// "zarr_version (2 or 3, default 3), consolidated (true or false)"; "none".
std::string options_text(const json& schema);
// Whether `value` is one a declared option takes: its type, range and set.
bool takes(const json& spec, const json& value);
// `options` checked against `schema`: an object whose every key is declared
// and whose values each declaration takes; INVALID_ARGUMENT otherwise,
// "<what> option 'key': ..." naming the declared ones. The value of a
// "secret" option is never shown.
void check_params(const json& schema, const json& options, const std::string& what);

}  // namespace stowage::detail
