#include "report/html.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/svg.h"

namespace ccreplay {
namespace {

// One CSV record per entry; quoted fields may hold commas, quotes and line
// breaks.
absl::StatusOr<std::vector<std::vector<std::string>>> ParseCsv(
    const std::string& csv) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      records.back().push_back(std::move(field));
      field.clear();
      records.emplace_back();
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  if (quoted) return absl::InvalidArgumentError("CSV: unterminated quote");
  if (!field.empty()) records.back().push_back(std::move(field));
  if (records.back().empty()) records.pop_back();
  if (records.empty()) return absl::InvalidArgumentError("CSV: no header");
  return records;
}

bool IsNumber(const std::string& s) {
  double v = 0;
  return !s.empty() && absl::SimpleAtod(s, &v);
}

std::string Cell(const char* tag, const std::string& text) {
  return absl::StrCat("<", tag, IsNumber(text) ? " class=\"num\"" : "", ">",
                      XmlEscape(text), "</", tag, ">");
}

std::string JsonCell(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return absl::StrFormat("%.4g", v.get<double>());
  return v.dump();
}

}  // namespace

absl::StatusOr<std::string> HtmlTableFromCsv(const std::string& csv) {
  auto records = ParseCsv(csv);
  if (!records.ok()) return records.status();
  std::string out = "<table>\n<thead><tr>";
  for (const std::string& h : (*records)[0]) {
    absl::StrAppend(&out, "<th>", XmlEscape(h), "</th>");
  }
  absl::StrAppend(&out, "</tr></thead>\n<tbody>\n");
  for (size_t r = 1; r < records->size(); ++r) {
    absl::StrAppend(&out, "<tr>");
    for (const std::string& f : (*records)[r]) {
      absl::StrAppend(&out, Cell("td", f));
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</tbody>\n</table>\n");
  return out;
}

absl::StatusOr<std::string> HtmlTableFromJson(const Json& rows) {
  if (!rows.is_array() || rows.empty() || !rows[0].is_object()) {
    return absl::InvalidArgumentError(
        "table: expected a non-empty JSON array of objects");
  }
  std::vector<std::string> keys;
  for (const auto& [key, value] : rows[0].items()) keys.push_back(key);
  std::string out = "<table>\n<thead><tr>";
  for (const std::string& k : keys) {
    absl::StrAppend(&out, "<th>", XmlEscape(k), "</th>");
  }
  absl::StrAppend(&out, "</tr></thead>\n<tbody>\n");
  for (const Json& row : rows) {
    if (!row.is_object()) {
      return absl::InvalidArgumentError("table: a row is not an object");
    }
    absl::StrAppend(&out, "<tr>");
    for (const std::string& k : keys) {
      absl::StrAppend(&out,
                      Cell("td", row.contains(k) ? JsonCell(row[k]) : "-"));
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</tbody>\n</table>\n");
  return out;
}

std::string HtmlPage(const std::string& title, const std::string& subtitle,
                     const std::vector<HtmlSection>& sections) {
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>",
      XmlEscape(title),
      "</title>\n<style>\n"
      "body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; "
      "color: #222; }\n"
      "h1 { font-size: 1.6em; margin-bottom: 0.2em; }\n"
      "h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2em; "
      "}\n"
      "p.sub { color: #555; margin-top: 0; }\n"
      "table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; "
      "display: block; overflow-x: auto; max-width: 100%; }\n"
      "th, td { border: 1px solid #ddd; padding: 3px 8px; }\n"
      "th { background: #f3f3f3; }\n"
      "td.num { text-align: right; font-variant-numeric: tabular-nums; }\n"
      "tbody tr:nth-child(even) { background: #fafafa; }\n"
      "figure { margin: 1em 0; }\n"
      "</style>\n</head>\n<body>\n<h1>",
      XmlEscape(title), "</h1>\n<p class=\"sub\">", XmlEscape(subtitle),
      "</p>\n");
  for (const HtmlSection& s : sections) {
    absl::StrAppend(
        &out, "<section>\n<h2>", XmlEscape(s.title), "</h2>\n",
        s.intro.empty() ? "" : absl::StrCat("<p>", s.intro, "</p>\n"), s.body,
        "</section>\n");
  }
  absl::StrAppend(&out, "</body>\n</html>\n");
  return out;
}

}  // namespace ccreplay
