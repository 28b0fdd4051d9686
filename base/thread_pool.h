// A small pool of worker threads for independent jobs whose results are
// stored by index, so that the output of a parallel run is the output of a
// serial one: ParallelFor(count, fn) runs fn(0) .. fn(count - 1), each once,
// on up to `threads` threads (the caller's thread is one of them) and returns
// when all are done. Jobs are taken in index order; which thread runs which
// job is not deterministic, so fn must write only to its own slot.
//
//   ThreadPool pool(4);
//   std::vector<double> out(points.size());
//   pool.ParallelFor(points.size(), [&](size_t i) { out[i] = Run(points[i]);
//   });
#ifndef CCREPLAY_BASE_THREAD_POOL_H_
#define CCREPLAY_BASE_THREAD_POOL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace ccreplay {

class ThreadPool {
 public:
  // 0 threads: std::thread::hardware_concurrency() (1 when unknown).
  explicit ThreadPool(unsigned threads)
      : threads_(threads != 0
                     ? threads
                     : std::max(1u, std::thread::hardware_concurrency())) {}

  unsigned threads() const { return threads_; }

  // Runs fn(i) for every i in [0, count) and waits for all of them. An
  // exception escaping fn ends the process (std::thread's rule); report
  // errors through the results instead.
  void ParallelFor(size_t count, const std::function<void(size_t)>& fn) const {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
        fn(i);
      }
    };
    const size_t extra = std::min<size_t>(threads_, count) - (count > 0);
    std::vector<std::thread> workers;
    workers.reserve(extra);
    for (size_t t = 0; t < extra; ++t) workers.emplace_back(work);
    work();
    for (std::thread& w : workers) w.join();
  }

 private:
  unsigned threads_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_THREAD_POOL_H_
