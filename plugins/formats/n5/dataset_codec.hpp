// The codec of one dataset, obtained through the host (a format plugin never
// links a codec plugin) on first use, so a dataset whose codec plugin is
// missing still lists and describes. One sdk::HostCodec serves every thread:
// the host gives each call a context of its own, so n5 keeps no pool.
#pragma once

#include <stowage/plugin.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace n5 {

class DatasetCodec {
 public:
  // `config` is the dataset's compression JSON; `context` (the dataset
  // directory) prefixes errors, e.g. a codec plugin that is not installed.
  DatasetCodec(const stowage::sdk::Host& host, std::string config, std::string context)
      : host_(host), config_(std::move(config)), context_(std::move(context)) {}
  DatasetCodec(const DatasetCodec&) = delete;
  DatasetCodec& operator=(const DatasetCodec&) = delete;

  const stowage::sdk::HostCodec& get() {
    if (const stowage::sdk::HostCodec* c = ready_.load(std::memory_order_acquire)) return *c;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!codec_) {
      try {
        codec_ = std::make_unique<stowage::sdk::HostCodec>(host_, config_);
      } catch (const stowage::sdk::Error& e) {
        stowage::sdk::fail(e.code(), context_ + ": codec " + config_ + ": " + e.what());
      }
      ready_.store(codec_.get(), std::memory_order_release);
    }
    return *codec_;
  }

 private:
  stowage::sdk::Host host_;
  std::string config_, context_;
  std::mutex mutex_;
  std::unique_ptr<stowage::sdk::HostCodec> codec_;
  std::atomic<const stowage::sdk::HostCodec*> ready_{nullptr};
};

}  // namespace n5
