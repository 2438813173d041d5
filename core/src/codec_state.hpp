// What a Codec holds: its plugin configuration and a lock-free pool of contexts.
#pragma once

#include "plugin_call.hpp"

#include <stowage/stowage.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

namespace stowage {

namespace detail {

// Idle contexts of one codec configuration, kept for reuse: a context is used
// by one thread at a time, so a call takes one and gives it back after.
// Up to `slots` wait in an array of atomic pointers: taking and giving back
// are one atomic exchange each on the first matching slot, no lock, and with
// as many slots as the registry has threads (plus the caller) the pool never
// runs dry under its own thread pool. Past that, a context is made for the
// call and destroyed after it.
class ContextPool {
 public:
  explicit ContextPool(size_t slots)
      : slots_(new std::atomic<stowage_codec_context>[slots]), count_(slots) {
    for (size_t i = 0; i < count_; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
  }
  ContextPool(const ContextPool&) = delete;
  ContextPool& operator=(const ContextPool&) = delete;

  // An idle context, or nullptr when none is.
  stowage_codec_context take() {
    for (size_t i = 0; i < count_; ++i)
      if (slots_[i].load(std::memory_order_relaxed))
        if (stowage_codec_context c = slots_[i].exchange(nullptr, std::memory_order_acquire))
          return c;
    return nullptr;
  }
  // Keeps `c` for the next call; false when every slot is taken.
  bool give_back(stowage_codec_context c) {
    for (size_t i = 0; i < count_; ++i) {
      stowage_codec_context empty = nullptr;
      if (!slots_[i].load(std::memory_order_relaxed) &&
          slots_[i].compare_exchange_strong(empty, c, std::memory_order_release,
                                            std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  // Calls destroy(c) on every idle context (when nobody uses the pool).
  template <class Fn>
  void drain(Fn&& destroy) {
    for (size_t i = 0; i < count_; ++i)
      if (stowage_codec_context c = slots_[i].exchange(nullptr)) destroy(c);
  }

 private:
  std::unique_ptr<std::atomic<stowage_codec_context>[]> slots_;
  size_t count_;
};

}  // namespace detail

// What a Codec holds: one immutable configuration of a codec plugin, shared
// by every thread, and its pool of contexts.
struct Codec::State {
  const stowage_plugin* plugin = nullptr;
  const stowage_codec_vtable* vt = nullptr;
  stowage_codec_config config = nullptr;
  std::string id, canonical;
  std::string encoded_chunk;  // array -> array codecs: {"dtype", "shape"} they encode into
  uint64_t capabilities = 0;
  detail::ContextPool contexts;

  explicit State(size_t slots) : contexts(slots) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (vt->context_destroy) contexts.drain(vt->context_destroy);
    if (config) vt->destroy(config);
  }
  // encode / decode with a context of this thread's own; the plugin's status.
  int encode(const void* in, size_t n, void* out, size_t capacity, size_t* written,
             stowage_error* err) {
    return run(vt->encode, in, n, out, capacity, written, err);
  }
  int decode(const void* in, size_t n, void* out, size_t capacity, size_t* written,
             stowage_error* err) {
    return run(vt->decode, in, n, out, capacity, written, err);
  }
  void check(int rc, const stowage_error& err) const {
    if (rc != STOWAGE_OK) detail::throw_status(rc, err, "", "codec " + id);
  }

 private:
  using CodeFn = int (*)(stowage_codec_config, stowage_codec_context, const void*, size_t, void*,
                         size_t, size_t*, stowage_error*);
  int run(CodeFn fn, const void* in, size_t n, void* out, size_t capacity, size_t* written,
          stowage_error* err) {
    if (!vt->context_create) return fn(config, nullptr, in, n, out, capacity, written, err);
    stowage_codec_context cx = contexts.take();
    if (!cx) {
      int rc = vt->context_create(config, &cx, err);
      if (rc != STOWAGE_OK) return rc;
    }
    int rc = fn(config, cx, in, n, out, capacity, written, err);
    if (cx && !contexts.give_back(cx)) vt->context_destroy(cx);
    return rc;
  }
};

namespace detail {
// Lets the registry's host functions reach a Codec's state.
struct CodecAccess {
  using State = Codec::State;
  static const std::shared_ptr<State>& state(const Codec& c) { return c.state_; }
};
}  // namespace detail

}  // namespace stowage
