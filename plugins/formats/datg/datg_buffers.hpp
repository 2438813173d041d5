// datg_buffers.hpp -- scratch buffers a store reuses across calls and threads.
//
// Encoding a block (and reading one from a backend that cannot map) needs a
// buffer as large as the block. A thread_local one would outlive the store
// and stay allocated in every thread that ever called it (no plugin keeps
// thread_local state: issue 19); a fresh one per call costs an allocation
// and page faults per block. So a store keeps a few idle buffers here: a
// call takes one (or a new one when none is idle) and gives it back after.
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace datg {

class BufferPool {
 public:
  // A buffer lent for one call, given back to the pool when it dies.
  class Lease {
   public:
    Lease(BufferPool& pool, std::vector<uint8_t> buffer) : pool_(&pool), buffer_(std::move(buffer)) {}
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), buffer_(std::move(o.buffer_)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->give_back(std::move(buffer_));
    }
    uint8_t* data() { return buffer_.data(); }
    size_t size() const { return buffer_.size(); }

   private:
    BufferPool* pool_;
    std::vector<uint8_t> buffer_;
  };

  // A buffer of exactly `size` bytes (contents unspecified).
  Lease take(size_t size) {
    std::vector<uint8_t> buffer;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        buffer = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    buffer.resize(size);
    return Lease(*this, std::move(buffer));
  }

 private:
  // As many as the host has threads calling at once, in practice; beyond
  // that a buffer is freed rather than kept.
  static constexpr size_t kMaxIdle = 32;

  void give_back(std::vector<uint8_t> buffer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(buffer));
  }

  std::mutex mutex_;
  std::vector<std::vector<uint8_t>> idle_;
};

}  // namespace datg
