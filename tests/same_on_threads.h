// For the tests of commands that run independent replays on threads (-j):
// the output must not depend on how many.
#ifndef CCREPLAY_TESTS_SAME_ON_THREADS_H_
#define CCREPLAY_TESTS_SAME_ON_THREADS_H_

#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/run_cli.h"
#include "tests/scratch_dir.h"

namespace ccreplay_test {

// Runs ccreplay `args` with `-j 1 --json json_1` and with `-j 2 --json
// json_2` and checks (non-fatally) that both succeed with the same standard
// output and write the same JSON. Returns the first run and its JSON text.
inline std::pair<CliResult, std::string> RunOnOneAndTwoThreads(
    const std::string& args, const std::string& json_1,
    const std::string& json_2) {
  const CliResult one = RunCcreplay(args + " -j 1 --json " + json_1);
  const CliResult two = RunCcreplay(args + " -j 2 --json " + json_2);
  EXPECT_EQ(one.exit_code, 0) << one.out;
  EXPECT_EQ(two.exit_code, 0) << two.out;
  EXPECT_EQ(two.out, one.out);
  std::string json = Slurp(json_1);
  EXPECT_EQ(Slurp(json_2), json);
  return {one, std::move(json)};
}

// The same for `args` on the fluid engine with at most 4 packets a train
// (--engine fluid --fluid-packets 4): the output and the JSON also name the
// engine. Returns the JSON (an empty object if it is not JSON).
inline nlohmann::json RunFluidOnOneAndTwoThreads(const std::string& args,
                                                 const std::string& json_1,
                                                 const std::string& json_2) {
  const auto [one, text] = RunOnOneAndTwoThreads(
      args + " --engine fluid --fluid-packets 4", json_1, json_2);
  EXPECT_THAT(one.out, ::testing::HasSubstr("fluid engine (flows; packets for "
                                            "transfers of at most 4 packets)"));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    ADD_FAILURE() << "not a JSON object: " << text;
    return nlohmann::json::object();
  }
  EXPECT_EQ(j.value("engine", ""), "fluid");
  EXPECT_EQ(j.value("fluid_packets", 0), 4);
  return j;
}

}  // namespace ccreplay_test

#endif  // CCREPLAY_TESTS_SAME_ON_THREADS_H_
