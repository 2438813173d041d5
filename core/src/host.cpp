// Host services: the table each plugin is given (log, codecs, threads, storage), and log sinks.
#include "codec_state.hpp"
#include "log_capture.hpp"
#include "registry_impl.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>

namespace stowage {

namespace detail {
namespace {
thread_local LogCapture* active_capture = nullptr;
}
LogCapture::LogCapture(std::vector<std::string>& into) : into_(into), outer_(active_capture) {
  active_capture = this;
}
LogCapture::~LogCapture() { active_capture = outer_; }
bool LogCapture::take(const std::string& message) {
  if (!active_capture) return false;
  active_capture->into_.push_back(message);
  return true;
}
}  // namespace detail

namespace {

void host_log(void* ctx, int32_t level, const char* message, size_t size) {
  static_cast<const Registry*>(ctx)->log(level, std::string_view(message, size));
}

void stderr_log(int32_t level, std::string_view message) {
  static const int threshold = [] {
    const char* v = std::getenv("STOWAGE_LOG");
    if (!v) return STOWAGE_LOG_WARNING;
    std::string s(v);
    if (s == "debug") return STOWAGE_LOG_DEBUG;
    if (s == "info") return STOWAGE_LOG_INFO;
    if (s == "error") return STOWAGE_LOG_ERROR;
    return STOWAGE_LOG_WARNING;
  }();
  if (level < threshold) return;
  if (level >= STOWAGE_LOG_WARNING && detail::LogCapture::take(std::string(message))) return;
  static const char* names[] = {"debug", "info", "warning", "error"};
  std::cerr << "stowage " << names[std::clamp(level, 0, 3)] << ": " << message << "\n";
}

// Errors of the host's own functions, as a plugin's would be.
int host_error(stowage_error* err, int code, const char* message) {
  if (err) {
    err->code = code;
    std::snprintf(err->message, sizeof err->message, "%s", message);
  }
  return code;
}

}  // namespace
}  // namespace stowage

// What the host hands a format plugin for a codec: a share of its state
// (configuration and context pool), so the codec lives as long as either.
struct stowage_host_codec_state {
  std::shared_ptr<stowage::detail::CodecAccess::State> state;
};

namespace stowage {
namespace {

// Hands a codec to the plugin with its canonical config and, for an array
// -> array codec, its encoded chunk.
int host_codec_give(const Codec& codec, stowage_host_codec* out, stowage_sink* canonical,
                    stowage_sink* encoded, stowage_error* err) {
  const std::shared_ptr<detail::CodecAccess::State>& state = detail::CodecAccess::state(codec);
  auto emit = [](stowage_sink* sink, const std::string& text) {
    return !sink || sink->write(sink->ctx, text.data(), text.size()) == 0;
  };
  if (!emit(canonical, state->canonical) || !emit(encoded, state->encoded_chunk))
    return host_error(err, STOWAGE_INTERNAL, "the plugin refused the codec's config");
  *out = new stowage_host_codec_state{state};
  return STOWAGE_OK;
}

// Runs `make` (which returns a Codec), turning exceptions into a status.
template <class Make>
int host_codec_make(Make&& make, stowage_host_codec* out, stowage_sink* canonical,
                    stowage_sink* encoded, stowage_error* err) {
  try {
    return host_codec_give(make(), out, canonical, encoded, err);
  } catch (const Error& e) {
    return host_error(err, static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    return host_error(err, STOWAGE_INTERNAL, e.what());
  }
}

int host_codec_create(void* ctx, const char* config, size_t size, stowage_host_codec* out,
                      stowage_sink* canonical, stowage_error* err) {
  auto* registry = static_cast<Registry*>(ctx);
  return host_codec_make([&] { return registry->codec(std::string_view(config, size)); }, out,
                         canonical, nullptr, err);
}

int host_codec_create_array(void* ctx, const char* config, size_t size, const char* chunk,
                            size_t chunk_size, stowage_host_codec* out, stowage_sink* canonical,
                            stowage_sink* encoded, stowage_error* err) {
  auto* registry = static_cast<Registry*>(ctx);
  json spec = json::parse(std::string_view(chunk, chunk_size), nullptr, false);
  if (spec.is_discarded())
    return host_error(err, STOWAGE_INVALID_ARGUMENT, "codec_create_array: the chunk is no JSON");
  return host_codec_make(
      [&] { return registry->array_codec(std::string_view(config, size), spec); }, out, canonical,
      encoded, err);
}

void host_codec_destroy(stowage_host_codec codec) { delete codec; }

uint64_t host_codec_bound(stowage_host_codec codec, uint64_t n) {
  const detail::CodecAccess::State& s = *codec->state;
  return s.vt->bound(s.config, n);
}

int host_codec_encode(stowage_host_codec codec, const void* in, size_t n, void* out,
                      size_t capacity, size_t* written, stowage_error* err) {
  return codec->state->encode(in, n, out, capacity, written, err);
}

int host_codec_decode(stowage_host_codec codec, const void* in, size_t n, void* out,
                      size_t capacity, size_t* written, stowage_error* err) {
  return codec->state->decode(in, n, out, capacity, written, err);
}

// Codec names (codec_names.cpp): an entry of a dialect in, a config out, and back.
int host_codec_resolve(void* ctx, const char* dialect, size_t dialect_size, const char* entry,
                       size_t entry_size, uint64_t item_size, stowage_sink* config,
                       stowage_error* err) {
  try {
    json e = json::parse(std::string_view(entry, entry_size), nullptr, false);
    if (e.is_discarded())
      return host_error(err, STOWAGE_INVALID_ARGUMENT, "codec_resolve: the entry is no JSON");
    const std::string out =
        static_cast<Registry*>(ctx)
            ->codec_import(std::string_view(dialect, dialect_size), e, item_size)
            .dump();
    if (config->write(config->ctx, out.data(), out.size()) != 0)
      return host_error(err, STOWAGE_INTERNAL, "the plugin refused the codec config");
    return STOWAGE_OK;
  } catch (const Error& e) {
    return host_error(err, static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    return host_error(err, STOWAGE_INTERNAL, e.what());
  }
}

int host_codec_export(void* ctx, const char* config, size_t config_size, const char* dialect,
                      size_t dialect_size, uint64_t item_size, stowage_sink* entry,
                      stowage_error* err) {
  try {
    json c = json::parse(std::string_view(config, config_size), nullptr, false);
    if (c.is_discarded())
      return host_error(err, STOWAGE_INVALID_ARGUMENT, "codec_export: the config is no JSON");
    const std::string out =
        static_cast<Registry*>(ctx)
            ->codec_export(c, std::string_view(dialect, dialect_size), item_size)
            .dump();
    if (entry->write(entry->ctx, out.data(), out.size()) != 0)
      return host_error(err, STOWAGE_INTERNAL, "the plugin refused the codec entry");
    return STOWAGE_OK;
  } catch (const Error& e) {
    return host_error(err, static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    return host_error(err, STOWAGE_INTERNAL, e.what());
  }
}

uint32_t host_thread_count(void* ctx) { return static_cast<Registry*>(ctx)->threads(); }

int host_storage(void* ctx, const char* location, size_t size, const stowage_storage_vtable** vt,
                 stowage_storage_handle* handle, uint64_t* caps, stowage_error* err) {
  try {
    Registry::StorageBackend s =
        static_cast<Registry*>(ctx)->storage(std::string_view(location, size));
    *vt = s.vtable;
    *handle = s.handle;
    if (caps) *caps = s.capabilities;
    return STOWAGE_OK;
  } catch (const Error& e) {
    if (err) {
      err->code = static_cast<int32_t>(e.code());
      std::snprintf(err->message, sizeof err->message, "%s", e.what());
    }
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    if (err) {
      err->code = STOWAGE_INTERNAL;
      std::snprintf(err->message, sizeof err->message, "%s", e.what());
    }
    return STOWAGE_INTERNAL;
  }
}

}  // namespace

void Registry::Impl::fill_host(Registry* registry) {
  host.struct_size = sizeof(stowage_host);
  host.abi_version = STOWAGE_PLUGIN_ABI;
  host.ctx = registry;
  host.log = host_log;
  host.thread_count = host_thread_count;
  host.codec_create = host_codec_create;
  host.codec_destroy = host_codec_destroy;
  host.codec_bound = host_codec_bound;
  host.codec_encode = host_codec_encode;
  host.codec_decode = host_codec_decode;
  host.storage = host_storage;
  host.codec_resolve = host_codec_resolve;
  host.codec_export = host_codec_export;
  host.codec_create_array = host_codec_create_array;
}

void Registry::set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(impl_->log_mutex);
  impl_->log_sink = std::move(sink);
}

void Registry::log(int level, std::string_view message) const {
  LogSink sink;
  {
    std::lock_guard<std::mutex> lock(impl_->log_mutex);
    sink = impl_->log_sink;
  }
  if (sink)
    sink(level, message);
  else
    stderr_log(level, message);
}

}  // namespace stowage
