// Splits the index range [0, n) into one contiguous chunk per worker thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace dcol {

// Calls work(begin, end) on up to `threads` threads; chunk sizes are multiples of `granularity` so
// that only the last chunk has a remainder.
template <class Work>
void parallel_chunks(std::ptrdiff_t n, std::ptrdiff_t threads, std::ptrdiff_t granularity, const Work& work) {
  const std::ptrdiff_t workers = std::max<std::ptrdiff_t>(1, std::min(threads, n));
  if (workers == 1) {
    work(std::ptrdiff_t(0), n);
    return;
  }
  const std::ptrdiff_t chunk = ((n + workers - 1) / workers + granularity - 1) / granularity * granularity;
  std::vector<std::thread> pool;
  for (std::ptrdiff_t w = 0; w < workers; ++w)
    pool.emplace_back(work, std::min(n, w * chunk), std::min(n, (w + 1) * chunk));
  for (auto& t : pool) t.join();
}

}  // namespace dcol
