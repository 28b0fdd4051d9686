// A progress bar on standard error for the long commands (sweep, compare,
// baseline): steps done of the total, simulated events per second, and the
// estimated time left. Shown only when standard error is a terminal and the
// command was not given --quiet, so pipes, files and tests see nothing.
// Thread-safe: workers of a pool may report their steps. ReplayProgress is
// the same for one replay (`replay`), whose total is not known: events so
// far, simulated time and events per second.
#ifndef CCREPLAY_CLI_PROGRESS_H_
#define CCREPLAY_CLI_PROGRESS_H_

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "base/units.h"

namespace ccreplay {

class Progress {
 public:
  // `what` names the steps ("points", "rows").
  Progress(size_t total, bool quiet, const char* what)
      : total_(total),
        enabled_(!quiet && total > 0 && isatty(STDERR_FILENO) != 0),
        what_(what) {}

  // One more step done, which simulated `events` events.
  void Done(uint64_t events) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    events_ += events;
    const double s =
        std::chrono::duration<double>(Clock::now() - start_).count();
    const double eta =
        s / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    const size_t width = 30;
    const size_t filled = width * done_ / total_;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %s, %.2f M events/s, ETA %ds ",
                 std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done_, total_, what_,
                 s > 0 ? static_cast<double>(events_) / s / 1e6 : 0.0,
                 static_cast<int>(eta + 0.5));
    if (done_ == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  const size_t total_;
  const bool enabled_;
  const char* const what_;
  std::mutex mu_;
  size_t done_ = 0;
  uint64_t events_ = 0;
  Clock::time_point start_ = Clock::now();
};

class ReplayProgress {
 public:
  explicit ReplayProgress(bool quiet)
      : enabled_(!quiet && isatty(STDERR_FILENO) != 0) {}
  ~ReplayProgress() { Finish(); }
  // Ends the progress line (before the report is printed).
  void Finish() {
    if (shown_) std::fprintf(stderr, "\n");
    shown_ = false;
  }
  ReplayProgress(const ReplayProgress&) = delete;
  ReplayProgress& operator=(const ReplayProgress&) = delete;

  bool enabled() const { return enabled_; }
  // ReplayOptions::on_progress: redraws at most ten times a second.
  void Update(uint64_t events, TimePs now) {
    const auto t = Clock::now();
    if (shown_ && t - last_ < std::chrono::milliseconds(100)) return;
    last_ = t;
    shown_ = true;
    const double s = std::chrono::duration<double>(t - start_).count();
    std::fprintf(stderr,
                 "\rreplaying: %.2f M events, %.3f us simulated, %.2f M "
                 "events/s ",
                 static_cast<double>(events) / 1e6, now.us(),
                 s > 0 ? static_cast<double>(events) / s / 1e6 : 0.0);
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  const bool enabled_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_PROGRESS_H_
