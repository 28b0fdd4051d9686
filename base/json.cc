#include "base/json.h"

#include <utility>

namespace ccreplay {
namespace {

// Arrays this deep or shallower print one element a line (see JsonText).
constexpr int kMaxLineBreakDepth = 1;

std::string Compact(const Json& value) {
  // replace: a file name that is not UTF-8 must not turn a finished replay
  // into an exception.
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    nlohmann::detail::error_handler_t::replace);
}

void Append(std::string* out, const Json& value, int depth) {
  if (!value.is_structured() || value.empty() || depth > kMaxLineBreakDepth) {
    out->append(Compact(value));
    return;
  }
  const bool lines = value.is_array();
  out->push_back(value.is_array() ? '[' : '{');
  if (lines) out->push_back('\n');
  bool first = true;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!first) out->append(lines ? ",\n" : ",");
    first = false;
    if (value.is_object()) {
      out->append(Compact(Json(it.key())));
      out->push_back(':');
    }
    Append(out, it.value(), depth + 1);
  }
  if (lines) out->push_back('\n');
  out->push_back(value.is_array() ? ']' : '}');
}

}  // namespace

std::string JsonText(const Json& value) {
  std::string out;
  Append(&out, value, 0);
  out.push_back('\n');
  return out;
}

JsonArrayWriter::JsonArrayWriter(const Json& head, const std::string& key) {
  out_.push_back('{');
  for (auto it = head.begin(); it != head.end(); ++it) {
    out_.append(Compact(Json(it.key())));
    out_.push_back(':');
    Append(&out_, it.value(), 1);
    out_.push_back(',');
  }
  out_.append(Compact(Json(key)));
  out_.append(":[");
}

void JsonArrayWriter::Add(const Json& element) {
  out_.append(empty_ ? "\n" : ",\n");
  empty_ = false;
  Append(&out_, element, 2);  // an element of an array one level down
}

std::string JsonArrayWriter::Finish() && {
  out_.append(empty_ ? "]}\n" : "\n]}\n");
  return std::move(out_);
}

}  // namespace ccreplay
