// A third-party codec for the N5 tests: XORs every byte with "key". Its
// Context is deliberately NOT thread-safe: a call fails if its context is
// in use by another thread at the same moment, which proves that the host
// gives each concurrent caller (here the N5 plugin's chunk reads) a context
// of its own.
#include <stowage/plugin.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

// Calls in flight across all instances, and the most seen at once while
// STOWAGE_N5TESTXOR_OVERLAP names a file: written there whenever it grows,
// so a test can prove that calls did run concurrently.
std::atomic<int> in_flight{0};
int most_in_flight = 0;
std::mutex most_mutex;

std::string most_path;  // the file most_in_flight is counted for

void entered() {
  const int now = ++in_flight;
  const char* path = std::getenv("STOWAGE_N5TESTXOR_OVERLAP");
  if (!path) return;
  std::lock_guard<std::mutex> lock(most_mutex);
  if (most_path != path) most_path = path, most_in_flight = 0;  // a new count from here
  if (now <= most_in_flight) return;
  most_in_flight = now;
  if (FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "%d\n", now);
    std::fclose(f);
  }
}

struct InFlight {
  InFlight() { entered(); }
  ~InFlight() { --in_flight; }
};

class Xor {
 public:
  // Scratch state one thread may use at a time.
  struct Context {
    std::atomic<bool> busy{false};
  };

  explicit Xor(std::string_view config) {
    size_t at = config.find("\"key\"");
    if (at != std::string_view::npos)
      key_ = static_cast<uint8_t>(std::stoi(std::string(config.substr(config.find(':', at) + 1))));
  }
  std::string canonical_config() const {
    return R"({"key":)" + std::to_string(key_) + R"(,"type":"n5testxor"})";
  }
  uint64_t bound(uint64_t n) const { return n; }
  size_t encode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    return apply(cx.busy, in, n, out, capacity);
  }
  size_t decode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    return apply(cx.busy, in, n, out, capacity);
  }

 private:
  size_t apply(std::atomic<bool>& busy_, const void* in, size_t n, void* out,
               size_t capacity) const {
    InFlight counted;
    if (busy_.exchange(true))
      stowage::sdk::fail(STOWAGE_INTERNAL, "n5testxor: one context used by two threads");
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // widen the window
    if (n > capacity) {
      busy_ = false;
      stowage::sdk::corrupt("n5testxor: output does not fit");
    }
    auto* s = static_cast<const uint8_t*>(in);
    auto* d = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < n; ++i) d[i] = s[i] ^ key_;
    busy_ = false;
    return n;
  }
  uint8_t key_ = 0x5a;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Xor, "n5testxor", "1.0.0",
                            "test codec: XOR with a key, contexts not thread-safe",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE)
