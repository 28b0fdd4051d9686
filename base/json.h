// JSON output through nlohmann-json: one value type for every report, one
// text layout, so that escaping and number formatting live in the library
// and not in each command.
//
//   Json j = {{"hw", hw.name}, {"total_us", 1.29}, {"rows",
//   table.ToJsonValue()}}; std::string text = JsonText(j);
//
//   {"hw":"TPS186","total_us":1.29,"rows":[
//   {"name":"ring","size (B)":1024},
//   {"name":"rd","size (B)":2048}
//   ]}
#ifndef CCREPLAY_BASE_JSON_H_
#define CCREPLAY_BASE_JSON_H_

#include <string>

#include "nlohmann/json.hpp"

namespace ccreplay {

// Objects keep their keys in insertion order, so that the text follows the
// order in which a report names its fields (tables: column order).
using Json = nlohmann::ordered_json;

// The text of `value`, ending in '\n'. Compact (no spaces), except that a
// non-empty array at the top level or one level down puts each element on a
// line of its own, so that a table or a timeline reads (and diffs) one row or
// event a line. Strings are escaped by the library (quote, backslash, control
// characters as \uXXXX); bytes that are not UTF-8 become U+FFFD rather than
// failing. Doubles print as the shortest text that reads back as the same
// double (locale-independent); NaN and infinities print as null.
std::string JsonText(const Json& value);

// Writes the same text as JsonText() of an object whose last member is a
// large array, one element at a time, so that the array never exists as a
// tree (a timeline's events would take several times their text in memory):
//
//   JsonArrayWriter w({{"displayTimeUnit", "ns"}}, "traceEvents");
//   w.Add(event);  // ...
//   std::string text = std::move(w).Finish();
class JsonArrayWriter {
 public:
  // REQUIRES: `head` is an object; its members print before the array.
  JsonArrayWriter(const Json& head, const std::string& key);
  void Add(const Json& element);
  std::string Finish() &&;

 private:
  std::string out_;
  bool empty_ = true;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_JSON_H_
