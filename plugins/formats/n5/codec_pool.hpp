// Codec instances of one dataset, obtained through the host (a format plugin
// never links a codec plugin). A thread-safe codec is created once and
// shared; otherwise each concurrent caller leases an instance of its own and
// gives it back, so the number of instances equals the peak concurrency.
#pragma once

#include <stowage/plugin.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace n5 {

class CodecPool {
 public:
  // `config` is the dataset's compression JSON; `context` (the dataset
  // directory) prefixes errors, e.g. a codec plugin that is not installed.
  CodecPool(std::string config, std::string context)
      : config_(std::move(config)), context_(std::move(context)) {}
  CodecPool(const CodecPool&) = delete;
  CodecPool& operator=(const CodecPool&) = delete;

  class Lease {
   public:
    Lease(CodecPool* owner, stowage::sdk::HostCodec* codec) : owner_(owner), codec_(codec) {}
    Lease(Lease&& o) noexcept : owner_(o.owner_), codec_(o.codec_) { o.codec_ = nullptr; }
    Lease(const Lease&) = delete;
    ~Lease() {
      if (owner_ && codec_) owner_->give_back(codec_);
    }
    const stowage::sdk::HostCodec* operator->() const { return codec_; }

   private:
    CodecPool* owner_;  // null for the shared thread-safe instance
    stowage::sdk::HostCodec* codec_;
  };

  Lease acquire() {
    if (stowage::sdk::HostCodec* s = shared_.load(std::memory_order_acquire)) return {nullptr, s};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        stowage::sdk::HostCodec* c = idle_.back().release();
        idle_.pop_back();
        return {this, c};
      }
    }
    std::unique_ptr<stowage::sdk::HostCodec> fresh = create();
    if (!fresh->thread_safe()) return {this, fresh.release()};
    std::lock_guard<std::mutex> lock(mutex_);
    if (!shared_owner_) {
      shared_owner_ = std::move(fresh);
      shared_.store(shared_owner_.get(), std::memory_order_release);
    }
    return {nullptr, shared_owner_.get()};
  }

 private:
  std::unique_ptr<stowage::sdk::HostCodec> create() const {
    try {
      return std::make_unique<stowage::sdk::HostCodec>(config_);
    } catch (const stowage::sdk::Error& e) {
      stowage::sdk::fail(e.code(), context_ + ": codec " + config_ + ": " + e.what());
    }
  }
  void give_back(stowage::sdk::HostCodec* c) {
    std::unique_ptr<stowage::sdk::HostCodec> owned(c);
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(owned));
  }

  std::string config_, context_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<stowage::sdk::HostCodec>> idle_;
  std::unique_ptr<stowage::sdk::HostCodec> shared_owner_;
  std::atomic<stowage::sdk::HostCodec*> shared_{nullptr};
};

}  // namespace n5
