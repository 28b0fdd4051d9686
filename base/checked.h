// Overflow-checked integer arithmetic for the boundaries where untrusted
// sizes meet (trace against hardware, semantic sizes, budgets): each
// operation returns std::nullopt instead of a wrapped result, so a caller
// can name the place that overflowed. Header-only; the compiler's overflow
// builtins do the work (one instruction and a branch each).
#ifndef CCREPLAY_BASE_CHECKED_H_
#define CCREPLAY_BASE_CHECKED_H_

#include <cstdint>
#include <optional>
#include <type_traits>

namespace ccreplay {

template <typename T>
constexpr std::optional<T> CheckedAdd(T a, T b) {
  T r{};
  return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
}

template <typename T>
constexpr std::optional<T> CheckedMul(T a, T b) {
  T r{};
  return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
}

// A running sum that remembers whether it ever overflowed: for totals over
// many terms (segment lengths, event estimates) checked once at the end.
template <typename T>
class CheckedSum {
 public:
  constexpr CheckedSum() = default;
  constexpr explicit CheckedSum(T start) : value_(start) {}
  constexpr CheckedSum& Add(T v) { return Take(CheckedAdd(value_, v)); }
  // Adds a * b.
  constexpr CheckedSum& AddProduct(T a, T b) {
    const std::optional<T> p = CheckedMul(a, b);
    return p ? Add(*p) : Take(std::nullopt);
  }
  constexpr bool overflow() const { return overflow_; }
  // The sum, or nullopt after any overflow.
  constexpr std::optional<T> value() const {
    if (overflow_) return std::nullopt;
    return value_;
  }

 private:
  constexpr CheckedSum& Take(std::optional<T> v) {
    if (v) {
      value_ = *v;
    } else {
      overflow_ = true;
    }
    return *this;
  }

  T value_ = 0;
  bool overflow_ = false;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_CHECKED_H_
