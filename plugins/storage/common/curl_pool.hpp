// A pool of libcurl easy handles shared by the threads of one backend.
//
// An easy handle keeps its open connections (HTTP keep-alive), its DNS cache
// and TLS sessions, so reusing one saves the TCP (and TLS) handshake on every
// chunk read. Handles are lent per call (no thread_local: issue 19),
// so N threads reading at once hold N handles, and an idle handle goes back
// to the pool for the next caller.
#ifndef STOWAGE_STORAGE_COMMON_CURL_POOL_HPP
#define STOWAGE_STORAGE_COMMON_CURL_POOL_HPP

#include <curl/curl.h>

#include <mutex>
#include <new>
#include <vector>

namespace stowage_curl {

class CurlPool {
 public:
  CurlPool() = default;
  CurlPool(const CurlPool&) = delete;
  CurlPool& operator=(const CurlPool&) = delete;
  ~CurlPool() {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }

  // A handle lent for one request (or one request and its retries).
  class Lease {
   public:
    Lease(CurlPool& pool) : pool_(pool), handle_(pool.take()) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.give_back(handle_); }
    CURL* get() const { return handle_; }

   private:
    CurlPool& pool_;
    CURL* handle_;
  };

 private:
  // More idle handles than this are closed: a burst of 64 threads should not
  // keep 64 connections open for ever.
  static constexpr size_t kMaxIdle = 32;

  CURL* take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (!h) throw std::bad_alloc();
    return h;
  }
  void give_back(CURL* h) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (idle_.size() < kMaxIdle) {
        idle_.push_back(h);
        return;
      }
    }
    curl_easy_cleanup(h);
  }

  std::mutex mutex_;
  std::vector<CURL*> idle_;
};

}  // namespace stowage_curl

#endif  // STOWAGE_STORAGE_COMMON_CURL_POOL_HPP
