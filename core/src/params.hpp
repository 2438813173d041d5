// Declared parameters: a plugin's params_schema (plugin.h: {"key": {"type",
// "default", "min", "max", "enum", "secret"}}) and the JSON objects checked
// against it, for format open options and storage options alike.
#pragma once

#include <stowage/stowage.hpp>

#include <string>

namespace stowage::detail {

// Whether an option or header named `name` carries a secret by its name
// (password, token, secret, Authorization, Cookie): its value is never shown.
bool secret_name(const std::string& name);
// Whether the option `name` declared by `spec` is one: marked or named so.
bool secret(const std::string& name, const json& spec);
// `value` as messages show it: "***" for a secret (marked "secret" in
// `spec`, or by secret_name: the headers option is marked, whole).
std::string shown_value(const std::string& name, const json& spec, const json& value);
// What a declared option takes, for messages: "2 or 3", "true or false",
// "an integer from 0", "one of [1,0], [1,1]".
std::string takes_text(const json& spec);
// "zarr_version (2 or 3, default 3), consolidated (true or false)"; "none".
std::string options_text(const json& schema);
// Whether `value` is one a declared option takes: its type, range and set.
bool takes(const json& spec, const json& value);
// `options` checked against `schema`: an object whose every key is declared
// and whose values each declaration takes; INVALID_ARGUMENT otherwise,
// "<what> option 'key': ..." naming the declared ones. A secret's value
// (secret_name) is never shown.
void check_params(const json& schema, const json& options, const std::string& what);

}  // namespace stowage::detail
