// Rows of a host computation spread over threads: the float64 reference, which one thread takes
// seconds over on the larger layers (a 5120 x 27648 weight at 8 tokens is 1.1 G multiply-adds, and
// the GPU tests check hundreds of runs). Each row is computed whole by one thread, in the order one
// thread would, so the results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "sailfish/types.h"

namespace sailfish::detail {

// Below this much work (rows x work a row, in multiply-adds) one thread runs it all: starting
// threads costs tens of microseconds each.
inline constexpr int64_t kParallelRowsMinWork = int64_t(1) << 22;
inline constexpr int64_t kParallelRowsMaxThreads = 32;

// fn(begin, end) over [0, rows) in contiguous slices, one thread a slice. fn must not throw.
template <typename Fn>
void parallel_rows(int64_t rows, int64_t work_per_row, const Fn& fn) {
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t threads = std::min({cores, kParallelRowsMaxThreads, rows});
  // rows x work a row below the bound, written so the product cannot overflow.
  const bool small = work_per_row < kParallelRowsMinWork &&
                     rows < ceil_div(kParallelRowsMinWork, std::max<int64_t>(1, work_per_row));
  if (threads <= 1 || small) {
    fn(int64_t(0), rows);
    return;
  }
  const int64_t slice = ceil_div(rows, threads);
  std::vector<std::thread> pool;
  for (int64_t begin = slice; begin < rows; begin += slice) {
    pool.emplace_back([&fn, begin, end = std::min(rows, begin + slice)] { fn(begin, end); });
  }
  fn(int64_t(0), std::min(rows, slice));  // the calling thread takes the first slice
  for (std::thread& t : pool) t.join();
}

}  // namespace sailfish::detail
