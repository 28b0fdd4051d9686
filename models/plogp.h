// PLogP (Kielmann et al., IPDPS 2000) and alpha(n)-beta(n) (docs/spec-notes.md §6): the
// LogP / alpha-beta parameters as functions of the message size m, measured
// at K sizes (20-50) and interpolated in between. Units: bytes, us.
//
// A calibration point (size m) holds what `ccreplay calibrate` measures on
// the replay (docs/models.md, "Calibration"):
//   os(m)  sender overhead: the sender's engines busy with the message
//   or(m)  receiver overhead: from the data landing to the receiver released
//   L(m)   the rest of the one-way time: T1(m) - os(m) - or(m)
//   g(m)   gap: the time per message of a stream of back-to-back messages
// so that one message takes T1(m) = os(m) + L(m) + or(m).
//
// Interpolation (At): piecewise linear in m between the two calibrated sizes
// around it; below the smallest size the smallest point's values; above the
// largest, the line through the last two points (the bandwidth regime grows
// linearly in m).
//
// PLogP on a schedule: a chip that sends messages m_1..m_k in a step (its
// flows, in the step view's order) is done at
//   sum_{j<k} g(m_j) + os(m_k) + L(m_k) + or(m_k);
// a step takes its slowest chip, plus L + o_r of the smallest calibrated
// size when it opens with a rendezvous (Step::sync: a message-only
// crossing); the collective is the sum of its steps.
//
// alpha(n)-beta(n): between calibrated sizes m_i < m_{i+1}
//   beta_i  = (m_{i+1} - m_i) / (T1(m_{i+1}) - T1(m_i))
//   alpha_i = T1(m_i) - m_i / beta_i
// and a step of a chip sending m bytes in all costs alpha_i + m / beta_i
// (= T1 interpolated at m); the collective is the sum over steps of the
// slowest chip, with the same rendezvous term as PLogP.
#ifndef CCREPLAY_MODELS_PLOGP_H_
#define CCREPLAY_MODELS_PLOGP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/steps.h"

namespace ccreplay {

struct PlogpPoint {
  uint64_t bytes = 0;
  double L_us = 0;
  double os_us = 0;
  double or_us = 0;
  double g_us = 0;

  double OneWayUs() const { return os_us + L_us + or_us; }
};

class PlogpTable {
 public:
  // REQUIRES nothing: returns InvalidArgument (naming the point) for fewer
  // than 2 points, sizes not strictly increasing or 0, negative values.
  static absl::StatusOr<PlogpTable> Create(std::vector<PlogpPoint> points,
                                           std::string hw_name);

  // The parameters at m, interpolated as in the header comment.
  PlogpPoint At(uint64_t m) const;
  const std::vector<PlogpPoint>& points() const { return points_; }
  const std::string& hw_name() const { return hw_name_; }

 private:
  std::vector<PlogpPoint> points_;
  std::string hw_name_;
};

// One piece of alpha(n)-beta(n): valid for sizes from `from_bytes` up to the
// next piece's.
struct AlphaBetaPiece {
  uint64_t from_bytes = 0;
  double alpha_us = 0;
  double beta_bps = 0;  // infinite when T1 does not grow over the piece
};
std::vector<AlphaBetaPiece> AlphaBetaPieces(const PlogpTable& t);

double PlogpScheduleUs(const StepView& view, const PlogpTable& t);
double AlphaBetaNScheduleUs(const StepView& view, const PlogpTable& t);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_PLOGP_H_
