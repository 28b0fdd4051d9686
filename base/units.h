// Units of the replay: simulated time is an integer count of picoseconds in a
// strong type; sizes are uint64_t bytes; rates are bytes per second. Every
// unit conversion lives in this header. No floating point touches engine time.
#ifndef CCREPLAY_BASE_UNITS_H_
#define CCREPLAY_BASE_UNITS_H_

#include <compare>
#include <cstdint>
#include <limits>

namespace ccreplay {

inline constexpr uint64_t kPsPerSecond = 1'000'000'000'000ULL;
inline constexpr uint64_t kPsPerNs = 1'000ULL;
inline constexpr uint64_t kPsPerUs = 1'000'000ULL;

// A point in simulated time, or a duration, in picoseconds.
class TimePs {
 public:
  constexpr TimePs() = default;
  constexpr explicit TimePs(int64_t ps) : ps_(ps) {}

  static constexpr TimePs Zero() { return TimePs(0); }
  static constexpr TimePs Max() {
    return TimePs(std::numeric_limits<int64_t>::max());
  }
  static constexpr TimePs Ns(int64_t ns) { return TimePs(ns * 1000); }
  static constexpr TimePs Us(int64_t us) { return TimePs(us * 1000000); }

  constexpr int64_t ps() const { return ps_; }
  // For reports only: microseconds as a double.
  constexpr double us() const { return static_cast<double>(ps_) / 1e6; }

  constexpr TimePs operator+(TimePs o) const { return TimePs(ps_ + o.ps_); }
  constexpr TimePs operator-(TimePs o) const { return TimePs(ps_ - o.ps_); }
  constexpr TimePs& operator+=(TimePs o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr TimePs operator*(int64_t k) const { return TimePs(ps_ * k); }
  constexpr auto operator<=>(const TimePs&) const = default;

 private:
  int64_t ps_ = 0;
};

constexpr TimePs Max(TimePs a, TimePs b) { return a < b ? b : a; }

// Time to move `bytes` at `bytes_per_s`, rounded up to a whole picosecond.
// REQUIRES: bytes_per_s > 0. Exact for the TPS186 rates (64 and 400 GB/s
// divide 1e12 ps/s into 15.625 and 2.5 ps per byte; packet sizes are multiples
// of 8 and 2 bytes).
constexpr TimePs SerializationTime(uint64_t bytes, uint64_t bytes_per_s) {
  // In 64 bits where the numerator fits (up to 18 MB at 1 TB/s): the same
  // quotient without the 128-bit division's library call.
  if (bytes <= (UINT64_MAX - bytes_per_s) / kPsPerSecond) {
    return TimePs(static_cast<int64_t>(
        (bytes * kPsPerSecond + bytes_per_s - 1) / bytes_per_s));
  }
  const unsigned __int128 num =
      static_cast<unsigned __int128>(bytes) * kPsPerSecond;
  return TimePs(static_cast<int64_t>((num + bytes_per_s - 1) / bytes_per_s));
}

// Decimal GB/s (1e9 bytes per second) for reports.
constexpr double GBps(uint64_t bytes_per_s) {
  return static_cast<double>(bytes_per_s) / 1e9;
}

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_UNITS_H_
