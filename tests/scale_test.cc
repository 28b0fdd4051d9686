// The exact alpha-beta mode at a thousand chips: 2046 steps of 1024 chips,
// about ten seconds in Release, so the sanitizer pass skips it (label
// "slow"; scripts/test.sh).
#include "gtest/gtest.h"
#include "tests/alpha_beta.h"

namespace ccreplay {
namespace {

TEST(AlphaBetaScaleTest, RingAllReduceIsTheFormulaAtThousandChips) {
  ExpectAlphaBetaFormula(1024, 4096);
}

}  // namespace
}  // namespace ccreplay
