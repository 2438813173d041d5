// A codec that logs through the host table it was created with, for the ABI
// suite's host tests: "hostlog: created tag N" when a configuration is made,
// "hostlog: context tag N" when a context is, "hostlog: encode tag N" on each
// encode. Its Context fails a call made while another thread is inside the
// same context, so sharing one context between threads turns a test red.
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace {

class HostLog {
 public:
  struct Context {
    explicit Context(const HostLog& codec) {
      codec.host_.log(STOWAGE_LOG_DEBUG, "hostlog: context tag " + std::to_string(codec.tag_));
    }
    std::atomic<bool> busy{false};
  };

  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p = {stowage::sdk::Param::integer("tag", 0, 0, 1000000),
                                           stowage::sdk::Param::boolean("quiet", false)};
    return p;
  }

  HostLog(const stowage::sdk::Host& host, std::string_view config_json) : host_(host) {
    stowage::sdk::CodecConfig cfg(config_json, "hostlog", params());
    tag_ = cfg.integer("tag");
    quiet_ = cfg.boolean("quiet");
    canonical_ = cfg.canonical();
    host_.log(STOWAGE_LOG_WARNING, "hostlog: created tag " + std::to_string(tag_));
  }

  std::string canonical_config() const { return canonical_; }
  uint64_t bound(uint64_t n) const { return n; }
  size_t encode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    if (!quiet_) host_.log(STOWAGE_LOG_WARNING, "hostlog: encode tag " + std::to_string(tag_));
    return copy(cx, in, n, out, capacity);
  }
  size_t decode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    return copy(cx, in, n, out, capacity);
  }

 private:
  static size_t copy(Context& cx, const void* in, size_t n, void* out, size_t capacity) {
    if (cx.busy.exchange(true))
      stowage::sdk::fail(STOWAGE_INTERNAL, "hostlog: one context used by two threads at once");
    std::this_thread::sleep_for(std::chrono::microseconds(20));  // widen the window
    size_t written = n <= capacity ? n : 0;
    if (written) std::memcpy(out, in, n);
    cx.busy = false;
    if (n > capacity) stowage::sdk::corrupt("hostlog: output does not fit");
    return written;
  }

  stowage::sdk::Host host_;
  int64_t tag_ = 0;
  bool quiet_ = false;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(HostLog, "hostlog", "0.0.1", "test codec: logs through its host",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
