// The byte form in which one process of an MPI run hands the outcomes of its
// share of the points to rank 0 (cli/spread.h). Integers are fixed-width
// little-endian, doubles travel as their IEEE-754 bits and strings with their
// length, so a decoded result is bit for bit the one encoded and a spread
// sweep prints exactly what a serial one does. Decoding checks every length
// against what is left and names the offset of the first byte it cannot read.
#ifndef CCREPLAY_CLI_WIRE_H_
#define CCREPLAY_CLI_WIRE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/point.h"

namespace ccreplay {

// What one point came to: its index in the spec list and its result or the
// error RunPoint gave (code and message kept).
struct PointOutcome {
  size_t index = 0;
  absl::StatusOr<PointResult> result;
};

std::string EncodeOutcomes(const std::vector<PointOutcome>& outcomes);

// Errors name the offset and what was expected there ("wire: byte 37: string
// of 4000 bytes but 12 left").
absl::StatusOr<std::vector<PointOutcome>> DecodeOutcomes(
    absl::string_view bytes);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_WIRE_H_
