#include "models/plogp.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"

namespace ccreplay {
namespace {

double Lerp(double a, double b, double w) { return a + (b - a) * w; }

PlogpPoint Between(const PlogpPoint& lo, const PlogpPoint& hi, uint64_t m) {
  const double w = (static_cast<double>(m) - static_cast<double>(lo.bytes)) /
                   static_cast<double>(hi.bytes - lo.bytes);
  PlogpPoint p;
  p.bytes = m;
  p.L_us = Lerp(lo.L_us, hi.L_us, w);
  p.os_us = Lerp(lo.os_us, hi.os_us, w);
  p.or_us = Lerp(lo.or_us, hi.or_us, w);
  p.g_us = Lerp(lo.g_us, hi.g_us, w);
  return p;
}

// Per sending chip, the sizes of its messages in the step, in order.
std::map<uint32_t, std::vector<uint64_t>> Senders(const Step& step) {
  std::map<uint32_t, std::vector<uint64_t>> s;
  for (const Flow& f : step.flows) {
    if (f.src != f.dst) s[f.src].push_back(f.bytes);  // calibrated: remote
  }
  return s;
}

}  // namespace

absl::StatusOr<PlogpTable> PlogpTable::Create(std::vector<PlogpPoint> points,
                                              std::string hw_name) {
  if (points.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PLogP table: needs at least 2 sizes, has ", points.size()));
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const PlogpPoint& p = points[i];
    if (p.bytes == 0 || (i > 0 && p.bytes <= points[i - 1].bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("PLogP table: point ", i, " (", p.bytes,
                       " bytes): sizes must be > 0 and strictly increasing"));
    }
    if (p.L_us < 0 || p.os_us < 0 || p.or_us < 0 || p.g_us < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("PLogP table: point ", i, " (", p.bytes,
                       " bytes): negative parameter"));
    }
  }
  PlogpTable t;
  t.points_ = std::move(points);
  t.hw_name_ = std::move(hw_name);
  return t;
}

PlogpPoint PlogpTable::At(uint64_t m) const {
  if (m <= points_.front().bytes) {
    PlogpPoint p = points_.front();
    p.bytes = m;
    return p;
  }
  auto hi = std::lower_bound(
      points_.begin(), points_.end(), m,
      [](const PlogpPoint& p, uint64_t v) { return p.bytes < v; });
  if (hi == points_.end()) --hi;  // extrapolate on the last piece
  return Between(*(hi - 1), *hi, m);
}

std::vector<AlphaBetaPiece> AlphaBetaPieces(const PlogpTable& t) {
  std::vector<AlphaBetaPiece> pieces;
  const std::vector<PlogpPoint>& p = t.points();
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    const double dt = p[i + 1].OneWayUs() - p[i].OneWayUs();
    const double dm = static_cast<double>(p[i + 1].bytes - p[i].bytes);
    AlphaBetaPiece piece;
    piece.from_bytes = p[i].bytes;
    piece.beta_bps =
        dt > 0 ? dm / dt * 1e6 : std::numeric_limits<double>::infinity();
    piece.alpha_us = p[i].OneWayUs() -
                     static_cast<double>(p[i].bytes) / piece.beta_bps * 1e6;
    pieces.push_back(piece);
  }
  return pieces;
}

namespace {

// A step's rendezvous: one message-only crossing, L + o_r of the smallest
// calibrated size (a message pays no sender DMA).
double SyncUs(const Step& step, const PlogpTable& t) {
  if (step.sync.empty()) return 0;
  const PlogpPoint& p = t.points().front();
  return p.L_us + p.or_us;
}

}  // namespace

double PlogpScheduleUs(const StepView& view, const PlogpTable& t) {
  double total = 0;
  for (const Step& step : view.steps) {
    double worst = 0;
    total += SyncUs(step, t);
    for (const auto& [chip, sizes] : Senders(step)) {
      double done = 0;
      for (size_t j = 0; j + 1 < sizes.size(); ++j) done += t.At(sizes[j]).g_us;
      done += t.At(sizes.back()).OneWayUs();
      worst = std::max(worst, done);
    }
    total += worst;
  }
  return total;
}

double AlphaBetaNScheduleUs(const StepView& view, const PlogpTable& t) {
  const std::vector<AlphaBetaPiece> pieces = AlphaBetaPieces(t);
  double total = 0;
  for (const Step& step : view.steps) {
    double worst = 0;
    total += SyncUs(step, t);
    for (const auto& [chip, sizes] : Senders(step)) {
      uint64_t m = 0;
      for (uint64_t s : sizes) m += s;
      // The piece whose range holds m; below the first size, the first.
      size_t i = 0;
      while (i + 1 < pieces.size() && pieces[i + 1].from_bytes <= m) ++i;
      const AlphaBetaPiece& pc = pieces[i];
      const double us =
          m < pc.from_bytes
              ? t.At(m).OneWayUs()
              : pc.alpha_us + static_cast<double>(m) / pc.beta_bps * 1e6;
      worst = std::max(worst, us);
    }
    total += worst;
  }
  return total;
}

}  // namespace ccreplay
