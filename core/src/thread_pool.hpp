// parallel_for over the registry's worker threads (thread_pool.cpp).
#pragma once

#include <cstddef>
#include <functional>

namespace stowage::detail {

// Runs fn(i) for i in [0, n) on the registry's worker threads; rethrows the
// first exception after all workers stopped.
void parallel_for(unsigned threads, size_t n, const std::function<void(size_t)>& fn);

}  // namespace stowage::detail
