// A codec whose encode throws a plain std::runtime_error: the SDK's
// trampoline must turn it into STOWAGE_INTERNAL with the message.
#include <stowage/plugin.hpp>

#include <stdexcept>

namespace {
class Throws {
 public:
  explicit Throws(std::string_view) {}
  std::string canonical_config() const { return R"({"type":"throws"})"; }
  uint64_t bound(uint64_t n) const { return n; }
  size_t encode(const void*, size_t, void*, size_t) const {
    throw std::runtime_error("encoder exploded");
  }
  size_t decode(const void*, size_t, void*, size_t) const { throw 42; }
};
}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Throws, "throws", "0.0.1", "throws on purpose",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE)
