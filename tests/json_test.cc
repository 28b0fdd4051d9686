// base/json.h: the one text layout of every JSON output.
#include "base/json.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace ccreplay {
namespace {

TEST(JsonTextTest, TopLevelArraysAndArraysOneLevelDownBreakLines) {
  const Json j = {{"name", "x"},
                  {"rows", Json::array({{{"a", 1}}, {{"a", 2}}})},
                  {"deep", {{"list", {1, 2}}}},
                  {"none", Json::array()}};
  EXPECT_EQ(JsonText(j),
            "{\"name\":\"x\",\"rows\":[\n"
            "{\"a\":1},\n"
            "{\"a\":2}\n"
            "],\"deep\":{\"list\":[1,2]},\"none\":[]}\n");
  EXPECT_EQ(JsonText(Json::array({1, 2})), "[\n1,\n2\n]\n");
  EXPECT_EQ(JsonText(Json::array()), "[]\n");
}

TEST(JsonTextTest, DoublesPrintShortestRoundTrip) {
  // 1.29 and 0.1 are not exact in binary; the shortest text that reads
  // back as the same double is what prints, and it parses back equal.
  const Json j = {1.29, 0.1, 2705575.0 / 1e6, 1.0 / 3.0, 2.0};
  EXPECT_EQ(JsonText(j),
            "[\n1.29,\n0.1,\n2.705575,\n0.3333333333333333,\n2.0\n]\n");
  EXPECT_EQ(Json::parse(JsonText(j))[3].get<double>(), 1.0 / 3.0);
}

TEST(JsonTextTest, NonFiniteIsNullAndBadUtf8IsReplaced) {
  const Json j = {std::nan(""), std::numeric_limits<double>::infinity(),
                  std::string("a\xff"
                              "b")};
  EXPECT_EQ(JsonText(j),
            "[\nnull,\nnull,\n\"a\xef\xbf\xbd"
            "b\"\n]\n");
}

TEST(JsonTextTest, EscapesQuotesBackslashesAndControlCharacters) {
  const Json j = {{"k\"", std::string("q\" \\ \n \t \x01", 10)}};
  EXPECT_EQ(JsonText(j), "{\"k\\\"\":\"q\\\" \\\\ \\n \\t \\u0001\"}\n");
  EXPECT_EQ(Json::parse(JsonText(j)), j);
}

TEST(JsonArrayWriterTest, WritesWhatJsonTextWritesForTheWholeObject) {
  const Json head = {{"unit", "ns"}, {"list", {1, 2}}};
  const Json events = Json::array({{{"a", 1}}, {{"b", {{"c", "d\""}}}}});
  JsonArrayWriter w(head, "events");
  for (const Json& e : events) w.Add(e);
  Json whole = head;
  whole["events"] = events;
  EXPECT_EQ(std::move(w).Finish(), JsonText(whole));

  JsonArrayWriter none(head, "events");
  whole["events"] = Json::array();
  EXPECT_EQ(std::move(none).Finish(), JsonText(whole));
}

}  // namespace
}  // namespace ccreplay
