// Calling a plugin's C tables: the error a call fills, sinks for its output, its status thrown.
#pragma once

#include <stowage/stowage.hpp>

#include <exception>
#include <functional>
#include <string>
#include <string_view>

namespace stowage::detail {

// A stowage_error ready for a call: only the code and the first byte are set,
// since zeroing all 1 KiB on every codec call costs (docs/performance.md).
struct CallError : stowage_error {
  CallError() {
    code = STOWAGE_OK;
    message[0] = '\0';
  }
};

// Collects sink output into a std::string (one byte stream).
inline stowage_sink string_sink(std::string* out) {
  return stowage_sink{out, [](void* ctx, const void* d, size_t n) {
                        static_cast<std::string*>(ctx)->append(static_cast<const char*>(d), n);
                        return 0;
                      }};
}

// Calls fn(item) for each sink item.
struct ItemSink {
  std::function<void(std::string_view)> fn;
  std::string error;
  stowage_sink sink() {
    return stowage_sink{this, [](void* ctx, const void* d, size_t n) {
                          auto* self = static_cast<ItemSink*>(ctx);
                          try {
                            self->fn(std::string_view(static_cast<const char*>(d), n));
                            return 0;
                          } catch (const std::exception& e) {
                            self->error = e.what();
                            return 1;
                          }
                        }};
  }
};

// Throws stowage::Error for a failed plugin call.
[[noreturn]] void throw_status(int rc, const stowage_error& err, const std::string& path,
                               const std::string& plugin);

}  // namespace stowage::detail
