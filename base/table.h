// A small typed report table rendered as aligned text (nccl-tests style),
// CSV or JSON. Generic: it knows columns and cells, nothing of ccreplay.
//
//   Table t({Table::Column::String("name"), Table::Column::Integer("size (B)"),
//            Table::Column::Double("time (us)", 2)});
//   absl::Status s = t.AddRow({"ring", 1024, 3.14159});
//   std::cout << t.ToText();
//
//   name  size (B)  time (us)
//   ring      1024       3.14
#ifndef CCREPLAY_BASE_TABLE_H_
#define CCREPLAY_BASE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/json.h"

namespace ccreplay {

class Table {
 public:
  enum class Type : uint8_t { kString, kInteger, kDouble };

  struct Column {
    std::string name;
    Type type = Type::kString;
    int precision = 0;  // kDouble only: digits after the decimal point

    static Column String(absl::string_view name) {
      return {std::string(name), Type::kString, 0};
    }
    static Column Integer(absl::string_view name) {
      return {std::string(name), Type::kInteger, 0};
    }
    // REQUIRES: 0 <= precision <= kMaxPrecision (clamped otherwise).
    static Column Double(absl::string_view name, int precision) {
      return {std::string(name), Type::kDouble, precision};
    }
  };
  static constexpr int kMaxPrecision = 17;

  // One value: a string, a signed or unsigned integer, or a double.
  // Implicit so that rows can be written as brace lists.
  class Cell {
   public:
    Cell(const char* s) : value_(std::string(s == nullptr ? "" : s)) {}
    Cell(absl::string_view s) : value_(std::string(s)) {}
    Cell(std::string s) : value_(std::move(s)) {}
    template <
        typename T,
        std::enable_if_t<std::is_integral_v<T> && std::is_signed_v<T>, int> = 0>
    Cell(T v) : value_(static_cast<int64_t>(v)) {}
    template <typename T,
              std::enable_if_t<std::is_integral_v<T> && std::is_unsigned_v<T> &&
                                   !std::is_same_v<T, bool>,
                               int> = 0>
    Cell(T v) : value_(static_cast<uint64_t>(v)) {}
    Cell(double v) : value_(v) {}
    Cell(bool) = delete;  // almost always a mistake

    const std::variant<std::string, int64_t, uint64_t, double>& value() const {
      return value_;
    }

   private:
    std::variant<std::string, int64_t, uint64_t, double> value_;
  };

  // REQUIRES: column names are unique (they become JSON keys).
  explicit Table(std::vector<Column> columns);

  // Appends a row. The row must have one cell per column; string columns
  // take strings, integer columns integers, double columns doubles or
  // integers. Otherwise InvalidArgument naming the row and column, and the
  // table is unchanged.
  absl::Status AddRow(std::vector<Cell> cells);

  const std::vector<Column>& columns() const { return columns_; }
  size_t num_rows() const { return rows_.size(); }

  // Aligned text: a header line with the column names, then one line per
  // row. Columns are separated by two spaces; strings are left-aligned,
  // numbers right-aligned (and so are their headers). Doubles print with
  // their column's fixed precision, a non-finite double as "-" (no value).
  // No trailing spaces; every line ends in
  // '\n'.
  std::string ToText() const;

  // CSV: a header record, then one record per row, each ending in '\n'.
  // Fields holding ',', '"', CR or LF are quoted and their quotes doubled
  // (RFC 4180). Numbers are formatted as in ToText().
  std::string ToCsv() const;

  // JSON: an array of objects, one per row, keys in column order. Strings
  // are JSON strings; integers are JSON numbers; doubles are JSON numbers at
  // full precision (not rounded to the column's display precision, so that a
  // program reading the JSON gets the value the report computed), and a
  // non-finite double is null.
  Json ToJsonValue() const;
  // JsonText(ToJsonValue()): one row a line.
  std::string ToJson() const;

 private:
  // The cell as text, doubles at the column's precision.
  std::string Format(size_t column, const Cell& cell) const;

  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_TABLE_H_
