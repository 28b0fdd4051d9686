#include "base/table.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccreplay {

namespace {

absl::string_view TypeName(Table::Type t) {
  switch (t) {
    case Table::Type::kString:
      return "string";
    case Table::Type::kInteger:
      return "integer";
    case Table::Type::kDouble:
      return "double";
  }
  return "?";
}

absl::string_view CellTypeName(const Table::Cell& c) {
  if (std::holds_alternative<std::string>(c.value())) return "string";
  if (std::holds_alternative<double>(c.value())) return "double";
  return "integer";
}

bool IsNumber(Table::Type t) { return t != Table::Type::kString; }

// Display width of UTF-8 text: code points, so that names with non-ASCII
// characters still line up (wide characters are not handled).
size_t DisplayWidth(absl::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

void AppendPadded(std::string* out, absl::string_view s, size_t width,
                  bool right) {
  const size_t pad = width - std::min(width, DisplayWidth(s));
  if (right) out->append(pad, ' ');
  out->append(s.data(), s.size());
  if (!right) out->append(pad, ' ');
}

void AppendCsvField(std::string* out, absl::string_view s) {
  if (s.find_first_of(",\"\r\n") == absl::string_view::npos) {
    out->append(s.data(), s.size());
    return;
  }
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

double AsDouble(const Table::Cell& cell) {
  const auto& v = cell.value();
  if (const auto* x = std::get_if<double>(&v)) return *x;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return static_cast<double>(std::get<uint64_t>(v));
}

}  // namespace

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {
  std::set<absl::string_view> names;
  for (Column& c : columns_) {
    c.precision = std::clamp(c.precision, 0, kMaxPrecision);
    [[maybe_unused]] const bool unique = names.insert(c.name).second;
    assert(unique && "Table: duplicate column name");
  }
}

absl::Status Table::AddRow(std::vector<Cell> cells) {
  if (cells.size() != columns_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("table row ", rows_.size(), ": ", cells.size(),
                     " cells for ", columns_.size(), " columns"));
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    const Type want = columns_[i].type;
    const auto& v = cells[i].value();
    const bool is_string = std::holds_alternative<std::string>(v);
    const bool is_double = std::holds_alternative<double>(v);
    const bool ok = want == Type::kString    ? is_string
                    : want == Type::kInteger ? !is_string && !is_double
                                             : !is_string;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "table row ", rows_.size(), ", column '", columns_[i].name,
          "': expected ", TypeName(want), ", got ", CellTypeName(cells[i])));
    }
  }
  rows_.push_back(std::move(cells));
  return absl::OkStatus();
}

std::string Table::Format(size_t column, const Cell& cell) const {
  const auto& v = cell.value();
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (columns_[column].type == Type::kDouble) {
    // Not finite: no value (e.g. Math where it has no formula), as in JSON.
    if (!std::isfinite(AsDouble(cell))) return "-";
    return absl::StrFormat("%.*f", columns_[column].precision, AsDouble(cell));
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return absl::StrCat(*i);
  return absl::StrCat(std::get<uint64_t>(v));
}

std::string Table::ToText() const {
  std::vector<std::vector<std::string>> text(rows_.size());
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    width[c] = DisplayWidth(columns_[c].name);
  }
  for (size_t r = 0; r < rows_.size(); ++r) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      text[r].push_back(Format(c, rows_[r][c]));
      width[c] = std::max(width[c], DisplayWidth(text[r][c]));
    }
  }
  std::string out;
  auto append_line = [&](auto cell_text) {
    const size_t start = out.size();
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out.append("  ");
      AppendPadded(&out, cell_text(c), width[c], IsNumber(columns_[c].type));
    }
    // Left-aligned last columns leave padding behind; drop it.
    const size_t end = out.find_last_not_of(' ');
    out.resize(end == std::string::npos || end < start ? start : end + 1);
    out.push_back('\n');
  };
  append_line([&](size_t c) -> absl::string_view { return columns_[c].name; });
  for (size_t r = 0; r < rows_.size(); ++r) {
    append_line([&](size_t c) -> absl::string_view { return text[r][c]; });
  }
  return out;
}

std::string Table::ToCsv() const {
  std::string out;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c > 0) out.push_back(',');
    AppendCsvField(&out, columns_[c].name);
  }
  out.push_back('\n');
  for (const std::vector<Cell>& row : rows_) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out.push_back(',');
      AppendCsvField(&out, Format(c, row[c]));
    }
    out.push_back('\n');
  }
  return out;
}

Json Table::ToJsonValue() const {
  Json rows = Json::array();
  for (const std::vector<Cell>& row : rows_) {
    Json object = Json::object();
    for (size_t c = 0; c < columns_.size(); ++c) {
      const auto& v = row[c].value();
      Json& field = object[columns_[c].name];
      if (const auto* s = std::get_if<std::string>(&v)) {
        field = *s;
      } else if (columns_[c].type == Type::kDouble) {
        field = AsDouble(row[c]);  // the library prints NaN and inf as null
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        field = *i;
      } else {
        field = std::get<uint64_t>(v);
      }
    }
    rows.push_back(std::move(object));
  }
  return rows;
}

std::string Table::ToJson() const { return JsonText(ToJsonValue()); }

}  // namespace ccreplay
