#include "cli/wire.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ccreplay {
namespace {

constexpr uint32_t kMagic = 0x31524343;  // "CCR1"

class Writer {
 public:
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    U64(bits);
  }
  void Str(absl::string_view s) {
    U64(s.size());
    out_.append(s.data(), s.size());
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  absl::StatusOr<uint64_t> U64(const char* what) {
    if (in_.size() - pos_ < 8) return Short(what, 8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= uint64_t{static_cast<unsigned char>(in_[pos_ + i])} << (8 * i);
    }
    pos_ += 8;
    return v;
  }
  absl::StatusOr<double> F64(const char* what) {
    auto bits = U64(what);
    if (!bits.ok()) return bits.status();
    double v;
    std::memcpy(&v, &*bits, sizeof v);
    return v;
  }
  absl::StatusOr<std::string> Str(const char* what) {
    auto n = U64(what);
    if (!n.ok()) return n.status();
    if (in_.size() - pos_ < *n) return Short(what, *n);
    std::string s(in_.substr(pos_, *n));
    pos_ += *n;
    return s;
  }
  size_t pos() const { return pos_; }
  bool done() const { return pos_ == in_.size(); }
  absl::Status Bad(const std::string& why) const {
    return absl::DataLossError(absl::StrCat("wire: byte ", pos_, ": ", why));
  }

 private:
  absl::Status Short(const char* what, uint64_t want) const {
    return Bad(absl::StrCat(what, " of ", want, " bytes but ",
                            in_.size() - pos_, " left"));
  }
  absl::string_view in_;
  size_t pos_ = 0;
};

void PutResult(Writer& w, const PointResult& r) {
  w.Str(r.label);
  w.Str(r.topology);
  w.U64(r.group);
  w.U64(r.groups);
  w.U64(r.bytes);
  w.F64(r.replay_us);
  w.F64(r.fastest_group_us);
  w.U64(r.math_us.has_value());
  w.F64(r.math_us.value_or(0));
  w.F64(r.algbw_gbps);
  w.F64(r.busbw_gbps);
  w.U64(r.events);
  w.I64(r.breakdown.total.ps());
  for (TimePs t : r.breakdown.by_cause) w.I64(t.ps());
  w.U64(r.breakdown.steps);
}

// Reads one field into `dst` or returns the reader's error.
#define CCREPLAY_WIRE_READ(dst, expr) \
  do {                                \
    auto v_ = (expr);                 \
    if (!v_.ok()) return v_.status(); \
    dst = *v_;                        \
  } while (0)

absl::StatusOr<PointResult> GetResult(Reader& r) {
  PointResult p;
  uint64_t u = 0;
  CCREPLAY_WIRE_READ(p.label, r.Str("label"));
  CCREPLAY_WIRE_READ(p.topology, r.Str("topology"));
  CCREPLAY_WIRE_READ(u, r.U64("group"));
  if (u > UINT32_MAX) return r.Bad(absl::StrCat("group ", u, " > 2^32-1"));
  p.group = static_cast<uint32_t>(u);
  CCREPLAY_WIRE_READ(p.groups, r.U64("groups"));
  CCREPLAY_WIRE_READ(p.bytes, r.U64("bytes"));
  CCREPLAY_WIRE_READ(p.replay_us, r.F64("replay_us"));
  CCREPLAY_WIRE_READ(p.fastest_group_us, r.F64("fastest_group_us"));
  uint64_t has_math = 0;
  double math = 0;
  CCREPLAY_WIRE_READ(has_math, r.U64("has_math"));
  CCREPLAY_WIRE_READ(math, r.F64("math_us"));
  if (has_math > 1) return r.Bad(absl::StrCat("has_math ", has_math));
  if (has_math == 1) p.math_us = math;
  CCREPLAY_WIRE_READ(p.algbw_gbps, r.F64("algbw"));
  CCREPLAY_WIRE_READ(p.busbw_gbps, r.F64("busbw"));
  CCREPLAY_WIRE_READ(p.events, r.U64("events"));
  CCREPLAY_WIRE_READ(u, r.U64("breakdown total"));
  p.breakdown.total = TimePs(static_cast<int64_t>(u));
  for (TimePs& t : p.breakdown.by_cause) {
    CCREPLAY_WIRE_READ(u, r.U64("breakdown cause"));
    t = TimePs(static_cast<int64_t>(u));
  }
  CCREPLAY_WIRE_READ(u, r.U64("steps"));
  if (u > UINT32_MAX) return r.Bad(absl::StrCat("steps ", u, " > 2^32-1"));
  p.breakdown.steps = static_cast<uint32_t>(u);
  return p;
}

}  // namespace

std::string EncodeOutcomes(const std::vector<PointOutcome>& outcomes) {
  Writer w;
  w.U64(kMagic);
  w.U64(outcomes.size());
  for (const PointOutcome& o : outcomes) {
    w.U64(o.index);
    w.U64(static_cast<uint64_t>(o.result.status().code()));
    if (o.result.ok()) {
      PutResult(w, *o.result);
    } else {
      w.Str(o.result.status().message());
    }
  }
  return w.Take();
}

absl::StatusOr<std::vector<PointOutcome>> DecodeOutcomes(
    absl::string_view bytes) {
  Reader r(bytes);
  uint64_t magic = 0, n = 0;
  CCREPLAY_WIRE_READ(magic, r.U64("magic"));
  if (magic != kMagic) return r.Bad("not a ccreplay outcome list");
  CCREPLAY_WIRE_READ(n, r.U64("count"));
  // Each outcome takes at least 24 bytes: a count beyond that is a lie.
  if (n > bytes.size() / 24) {
    return r.Bad(absl::StrCat(n, " outcomes in ", bytes.size(), " bytes"));
  }
  std::vector<PointOutcome> out(n);
  for (PointOutcome& o : out) {
    uint64_t code = 0;
    CCREPLAY_WIRE_READ(o.index, r.U64("index"));
    CCREPLAY_WIRE_READ(code, r.U64("status code"));
    if (code > static_cast<uint64_t>(absl::StatusCode::kUnauthenticated)) {
      return r.Bad(absl::StrCat("status code ", code));
    }
    if (code == 0) {
      CCREPLAY_WIRE_READ(o.result, GetResult(r));
    } else {
      std::string message;
      CCREPLAY_WIRE_READ(message, r.Str("error message"));
      o.result = absl::Status(static_cast<absl::StatusCode>(code), message);
    }
  }
  if (!r.done()) return r.Bad("bytes after the last outcome");
  return out;
}

#undef CCREPLAY_WIRE_READ

}  // namespace ccreplay
