// A small fixed pool of worker threads for chunk-parallel work.
//
// One pool per process, grown on demand to the largest thread count asked
// for; parallel_for hands out indices through an atomic counter so uneven
// chunks balance themselves.
#include "thread_pool.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>

#include <pthread.h>
#include <thread>

namespace stowage::detail {

namespace {

class Pool {
 public:
  static Pool& instance() {
    static std::once_flag once;
    std::call_once(once, [] {
      current() = new Pool();  // never destroyed: workers may outlive static destructors
      // A forked child (Python's multiprocessing, PyTorch's DataLoader
      // workers) has none of the parent's threads: the old pool would wait
      // for them forever. The child starts a new one; the old is leaked, as
      // its mutex may have been held by a thread that is gone.
      pthread_atfork(nullptr, nullptr, [] { current() = new Pool(); });
    });
    return *current();
  }

  // Runs `job` on up to `helpers` pool threads plus the calling thread.
  void run(unsigned helpers, const std::function<void()>& job) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (workers_.size() < helpers) workers_.emplace_back([this] { work(); });
    // One batch at a time: a caller that finds the pool busy (another thread
    // reading at the same time) does its work on its own thread.
    if (busy_) {
      lock.unlock();
      job();
      return;
    }
    busy_ = true;
    job_ = &job;
    wanted_ = helpers;
    joined_ = 0;
    finished_ = 0;
    ++generation_;
    cv_.notify_all();
    lock.unlock();
    job();
    lock.lock();
    done_cv_.wait(lock, [this] { return finished_ == wanted_; });
    job_ = nullptr;
    busy_ = false;
  }

 private:
  void work() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      cv_.wait(lock, [&] { return generation_ != seen && job_ && joined_ < wanted_; });
      seen = generation_;
      ++joined_;
      const std::function<void()>* job = job_;
      lock.unlock();
      (*job)();
      lock.lock();
      ++finished_;
      done_cv_.notify_all();
    }
  }

  static Pool*& current() {
    static Pool* pool = nullptr;
    return pool;
  }

  std::mutex mutex_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void()>* job_ = nullptr;
  uint64_t generation_ = 0;
  unsigned wanted_ = 0, joined_ = 0, finished_ = 0;
  bool busy_ = false;
};

thread_local bool in_parallel_for = false;

}  // namespace

void parallel_for(unsigned threads, size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (threads <= 1 || n == 1 || in_parallel_for) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::function<void()> job = [&] {
    in_parallel_for = true;
    while (!failed.load(std::memory_order_relaxed)) {
      size_t i = next.fetch_add(1);
      if (i >= n) break;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
    in_parallel_for = false;
  };
  unsigned helpers = static_cast<unsigned>(std::min<size_t>(threads, n)) - 1;
  Pool::instance().run(helpers, job);
  if (error) std::rethrow_exception(error);
}

}  // namespace stowage::detail
