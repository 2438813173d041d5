// The option parsers every front end shares (copy.hpp): the tool's and the
// Python package's short forms into CopyOptions.
#include "internal.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace stowage {

json parse_compression_spec(const std::string& spec) {
  if (spec.empty()) return nullptr;
  if (spec.front() == '{') {
    json j = json::parse(spec, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("type"))
      throw Error(ErrorCode::invalid_argument,
                  "--compression: not a JSON object with a \"type\": " + spec);
    return j;
  }
  size_t colon = spec.find(':');
  json j = {{"type", spec.substr(0, colon)}};
  if (colon == std::string::npos) return j;
  std::stringstream ss(spec.substr(colon + 1));
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(ErrorCode::invalid_argument,
                  "--compression: expected key=value, got '" + kv + "'");
    std::string value = kv.substr(eq + 1);
    json v = json::parse(value, nullptr, false);
    j[kv.substr(0, eq)] = v.is_discarded() ? json(value) : v;
  }
  return j;
}

std::vector<uint64_t> parse_positive_list(const std::string& text, const char* what) {
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  auto refuse = [&] {
    throw Error(ErrorCode::invalid_argument,
                std::string(what) + ": '" + text + "' is not a list of positive integers");
  };
  while (std::getline(ss, item, ',')) {
    // Digits only: strtoull alone takes "-1" as 18446744073709551615.
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) refuse();
    errno = 0;
    unsigned long long v = std::strtoull(item.c_str(), nullptr, 10);
    if (v == 0 || errno == ERANGE) refuse();
    out.push_back(v);
  }
  if (out.empty() || (!text.empty() && text.back() == ',')) refuse();
  return out;
}

std::vector<std::string> parse_name_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  if (!text.empty() && text.back() == ',')
    out.emplace_back();  // "gene," names an empty second axis
  return out;
}

CastOverflow parse_cast_overflow(const std::string& name) {
  if (name == "error") return CastOverflow::error;
  if (name == "clip") return CastOverflow::clip;
  if (name == "wrap") return CastOverflow::wrap;
  throw Error(ErrorCode::invalid_argument,
              "cast overflow must be error, clip or wrap, not '" + name + "'");
}

void set_part(CopyOptions& options, uint64_t index, uint64_t count) {
  if (count == 0 || index >= count)
    throw Error(ErrorCode::invalid_argument, "a part is I of N with 0 <= I < N, not " +
                                                 std::to_string(index) + " of " +
                                                 std::to_string(count));
  options.part_index = index;
  options.part_count = count;
}

void parse_part_spec(const std::string& spec, CopyOptions& options) {
  unsigned long long i = 0, n = 0;
  char tail = 0;
  if (std::sscanf(spec.c_str(), "%llu/%llu%c", &i, &n, &tail) != 2)
    throw Error(ErrorCode::invalid_argument,
                "--part takes I/N with 0 <= I < N, got '" + spec + "'");
  set_part(options, i, n);
}

void parse_open_option(const std::string& spec, CopyOptions& options) {
  if (options.open_options.is_null()) options.open_options = json::object();
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(ErrorCode::invalid_argument, "--open-option takes KEY=VALUE, got '" + spec + "'");
  parse_key_value(spec, options.open_options, "--open-option");
}

void parse_cast_spec(const std::string& spec, CopyOptions& options) {
  for (const std::string& item : parse_name_list(spec)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      options.cast_all = parse_dtype(item);
    else
      options.casts[parse_dtype(item.substr(0, eq))] = parse_dtype(item.substr(eq + 1));
  }
}

}  // namespace stowage
