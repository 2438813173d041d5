// Memory for the large numpy arrays that reads return (a[...], to_scipy()), recycled.
//
// Why: the kernel zero-fills every fresh page, which costs more than all of
// the decoding (docs/performance.md) and as much as a warm read of a raw
// chunk; a C++ caller of Array::read or Sparse::read_into reuses its buffers
// and never pays it. So the arrays' memory comes from
// here: a buffer whose last numpy array is gone goes back to a small pool,
// and the next large array that fits takes it with its pages already in place.
//
// Bounds: only buffers of at least min_bytes; at most max_idle_bytes() held
// idle (an eighth of the machine's memory, at least 1 GiB: two results of a
// loop such as `x = a[...]` alternate); a buffer idle for idle_seconds is returned to the system by
// a helper thread that exists only while the pool holds something. A buffer's bytes are whatever
// its last array held: the caller overwrites all of them.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>  // sysconf

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace stowage_py {

namespace py = pybind11;

class BufferPool {
 public:
  static constexpr size_t min_bytes = size_t(4) << 20;  // smaller arrays: numpy's own allocation
  static constexpr double idle_seconds = 2;             // then returned to the system
  static constexpr size_t page = size_t(2) << 20;       // capacities are whole huge pages

  static size_t max_idle_bytes() {
    static const size_t bytes = [] {
      const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
      const size_t eighth = pages > 0 && size > 0 ? size_t(pages) * size_t(size) / 8 : 0;
      return std::max(eighth, size_t(1) << 30);
    }();
    return bytes;
  }

  static BufferPool& instance() {
    static BufferPool* pool = new BufferPool();  // never destroyed: arrays may outlive the module
    return *pool;
  }

  // A new writable 1-d array of `count` elements whose memory is pooled (for
  // count * itemsize >= min_bytes; otherwise, or when the system refuses a
  // map, numpy's). Its contents are undefined.
  py::array array(const py::dtype& dtype, size_t count) {
    const size_t bytes = count * static_cast<size_t>(dtype.itemsize());
    size_t capacity = 0;
    void* p = bytes >= min_bytes ? take(bytes, capacity) : nullptr;
    if (!p) return py::array(dtype, std::vector<py::ssize_t>{static_cast<py::ssize_t>(count)});
    PyObject* owner = PyCapsule_New(p, capsule_name, &release_capsule);
    if (!owner || PyCapsule_SetContext(owner, reinterpret_cast<void*>(capacity)) != 0) {
      Py_XDECREF(owner);
      give(p, capacity);
      throw py::error_already_set();
    }
    return py::array(dtype, std::vector<py::ssize_t>{static_cast<py::ssize_t>(count)},
                     std::vector<py::ssize_t>{dtype.itemsize()}, p,
                     py::reinterpret_steal<py::object>(owner));
  }

  // A new C-order array of `shape`, pooled as array() is.
  py::array empty(const py::dtype& dtype, const std::vector<py::ssize_t>& shape) {
    size_t count = 1;
    for (py::ssize_t n : shape) count *= static_cast<size_t>(n);
    return array(dtype, count).attr("reshape")(shape);
  }

  // Bytes held idle now (for tests).
  size_t idle_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_bytes_;
  }

 private:
  static constexpr const char* capsule_name = "stowage.pooled_buffer";
  using Clock = std::chrono::steady_clock;
  struct Idle {
    void* p;
    size_t capacity;
    Clock::time_point since;
  };

  BufferPool() {
    // A fork (DataLoader workers) must not copy the mutex while the helper
    // thread holds it; the child has no helper thread.
    pthread_atfork([] { instance().mutex_.lock(); }, [] { instance().mutex_.unlock(); },
                   [] {
                     BufferPool& pool = instance();
                     pool.reaper_running_ = false;
                     pool.mutex_.unlock();
                   });
  }

  static void release_capsule(PyObject* capsule) {
    void* p = PyCapsule_GetPointer(capsule, capsule_name);
    size_t capacity = reinterpret_cast<size_t>(PyCapsule_GetContext(capsule));
    if (p) instance().give(p, capacity);
  }

  // The smallest idle buffer that holds `bytes` without wasting more than
  // half of it, or a new map.
  void* take(size_t bytes, size_t& capacity) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_t best = idle_.size();
      for (size_t i = 0; i < idle_.size(); ++i)
        if (idle_[i].capacity >= bytes && idle_[i].capacity / 2 <= bytes &&
            (best == idle_.size() || idle_[i].capacity < idle_[best].capacity))
          best = i;
      if (best < idle_.size()) {
        void* p = idle_[best].p;
        capacity = idle_[best].capacity;
        idle_bytes_ -= capacity;
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(best));
        return p;
      }
    }
    capacity = (bytes + page - 1) / page * page;
    void* p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    ::madvise(p, capacity, MADV_HUGEPAGE);  // as numpy does for large arrays
    return p;
  }

  void give(void* p, size_t capacity) {
    std::vector<Idle> drop;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back({p, capacity, Clock::now()});
      idle_bytes_ += capacity;
      while (idle_bytes_ > max_idle_bytes()) {  // the oldest go first
        idle_bytes_ -= idle_.front().capacity;
        drop.push_back(idle_.front());
        idle_.erase(idle_.begin());
      }
      if (!idle_.empty() && !reaper_running_) {
        reaper_running_ = true;
        std::thread([this] { reap(); }).detach();
      }
    }
    for (const Idle& b : drop) ::munmap(b.p, b.capacity);
  }

  // The helper thread: unmaps buffers idle for idle_seconds; ends when the
  // pool is empty.
  void reap() {
    const auto limit =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(idle_seconds));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!idle_.empty()) {
      std::vector<Idle> drop;
      const Clock::time_point now = Clock::now();
      for (size_t i = 0; i < idle_.size();) {
        if (now - idle_[i].since >= limit) {
          idle_bytes_ -= idle_[i].capacity;
          drop.push_back(idle_[i]);
          idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          ++i;
        }
      }
      lock.unlock();
      for (const Idle& b : drop) ::munmap(b.p, b.capacity);
      std::this_thread::sleep_for(limit / 4);
      lock.lock();
    }
    reaper_running_ = false;
  }

  std::mutex mutex_;
  std::vector<Idle> idle_;  // oldest first
  size_t idle_bytes_ = 0;
  bool reaper_running_ = false;
};

}  // namespace stowage_py
