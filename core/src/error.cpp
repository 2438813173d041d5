#include "plugin_call.hpp"

#include <stowage/plugin_util.hpp>  // redact_userinfo

#include <algorithm>

namespace stowage {

const char* version() { return STOWAGE_VERSION; }

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::ok:
      return "ok";
    case ErrorCode::not_found:
      return "not found";
    case ErrorCode::missing:
      return "missing";
    case ErrorCode::invalid_argument:
      return "invalid argument";
    case ErrorCode::corrupt:
      return "corrupt";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::io:
      return "I/O error";
    case ErrorCode::abi_mismatch:
      return "ABI mismatch";
    case ErrorCode::internal:
      return "internal error";
  }
  return "unknown error";
}

Error::Error(ErrorCode code, std::string message, std::string path, std::string plugin)
    : std::runtime_error(sdk::redact_userinfo(std::move(message))),
      code_(code),
      path_(std::move(path)),
      plugin_(std::move(plugin)) {}

namespace detail {

void throw_status(int rc, const stowage_error& err, const std::string& path,
                  const std::string& plugin) {
  std::string message(err.message, strnlen(err.message, sizeof err.message));
  if (message.empty()) message = error_code_name(static_cast<ErrorCode>(rc));
  // Plugins name the file they failed on; add the dataset when they did not.
  if (!path.empty() && message.find(path) == std::string::npos) message = path + ": " + message;
  if (rc < STOWAGE_OK || rc > STOWAGE_INTERNAL) rc = STOWAGE_INTERNAL;
  throw Error(static_cast<ErrorCode>(rc), message, path, plugin);
}

}  // namespace detail
}  // namespace stowage
