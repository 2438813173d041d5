// codec_pool.hpp -- host codec instances shared by the threads that call
// read_chunk / write_chunk concurrently. A thread-safe codec is shared; a
// codec that is not gets one instance per concurrent caller, reused.
#pragma once

#include <stowage/plugin.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace datg {

class CodecPool {
 public:
  // Creates the first instance now, so a missing codec fails at open.
  explicit CodecPool(std::string config) : config_(std::move(config)) {
    auto first = std::make_unique<stowage::sdk::HostCodec>(config_);
    if (first->thread_safe())
      shared_ = std::move(first);
    else
      idle_.push_back(std::move(first));
  }

  // Calls fn(const HostCodec&) with an instance nobody else is using.
  template <class Fn>
  auto with(Fn&& fn) {
    if (shared_) return fn(*shared_);
    std::unique_ptr<stowage::sdk::HostCodec> codec = take();
    struct Return {
      CodecPool* pool;
      std::unique_ptr<stowage::sdk::HostCodec>& codec;
      ~Return() { pool->give_back(std::move(codec)); }
    } give_back_on_exit{this, codec};
    return fn(*codec);
  }

 private:
  std::unique_ptr<stowage::sdk::HostCodec> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        auto codec = std::move(idle_.back());
        idle_.pop_back();
        return codec;
      }
    }
    return std::make_unique<stowage::sdk::HostCodec>(config_);
  }
  void give_back(std::unique_ptr<stowage::sdk::HostCodec> codec) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(codec));
  }

  std::string config_;
  std::unique_ptr<stowage::sdk::HostCodec> shared_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<stowage::sdk::HostCodec>> idle_;
};

// The host codec configs for the two flavours of containers.
inline const char* codec_config_for_flag(uint8_t flag) {
  return flag == 1 ? R"({"type":"lz4","framing":"frame"})" : R"({"type":"lz4"})";
}

}  // namespace datg
