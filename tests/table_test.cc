#include "base/table.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

Table SizeTable() {
  return Table({Table::Column::String("name"),
                Table::Column::Integer("size (B)"),
                Table::Column::Double("time (us)", 2)});
}

TEST(TableTest, TextAlignsColumns) {
  Table t = SizeTable();
  ASSERT_TRUE(t.AddRow({"ring", 1024, 3.14159}).ok());
  ASSERT_TRUE(t.AddRow({"halving_doubling", uint64_t{1} << 40, 12.5}).ok());
  // Widths: name 16 ("halving_doubling"), size 13 ("1099511627776"),
  // time 9 ("time (us)"). Strings left, numbers right, 2 spaces between;
  // 3.14159 at 2 decimals is "3.14", 12.5 is "12.50".
  EXPECT_EQ(t.ToText(),
            "name                   size (B)  time (us)\n"
            "ring                       1024       3.14\n"
            "halving_doubling  1099511627776      12.50\n");
}

TEST(TableTest, TextDropsTrailingPadding) {
  Table t({Table::Column::Integer("n"), Table::Column::String("algorithm")});
  ASSERT_TRUE(t.AddRow({2, "rd"}).ok());
  ASSERT_TRUE(t.AddRow({64, "pairwise"}).ok());
  // "rd" would be padded to 9 ("algorithm"): no trailing spaces.
  EXPECT_EQ(t.ToText(),
            " n  algorithm\n"
            " 2  rd\n"
            "64  pairwise\n");
}

TEST(TableTest, EmptyTable) {
  Table t = SizeTable();
  EXPECT_EQ(t.num_rows(), 0u);
  EXPECT_EQ(t.ToText(), "name  size (B)  time (us)\n");
  EXPECT_EQ(t.ToCsv(), "name,size (B),time (us)\n");
  EXPECT_EQ(t.ToJson(), "[]\n");
}

TEST(TableTest, SignedAndUnsignedIntegers) {
  Table t({Table::Column::Integer("v")});
  ASSERT_TRUE(t.AddRow({-5}).ok());
  ASSERT_TRUE(t.AddRow({std::numeric_limits<int64_t>::min()}).ok());
  ASSERT_TRUE(t.AddRow({std::numeric_limits<uint64_t>::max()}).ok());
  EXPECT_EQ(t.ToCsv(),
            "v\n"
            "-5\n"
            "-9223372036854775808\n"
            "18446744073709551615\n");
}

TEST(TableTest, DoubleColumnTakesIntegersAndRoundsToPrecision) {
  Table t({Table::Column::Double("x", 3), Table::Column::Double("y", 0)});
  // Integer 7 at 3 decimals -> "7.000"; 2.6 at 0 decimals -> "3";
  // 1.23456 at 3 decimals -> "1.235"; integer 10 at 0 decimals -> "10".
  ASSERT_TRUE(t.AddRow({7, 2.6}).ok());
  ASSERT_TRUE(t.AddRow({1.23456, uint64_t{10}}).ok());
  EXPECT_EQ(t.ToCsv(),
            "x,y\n"
            "7.000,3\n"
            "1.235,10\n");
}

TEST(TableTest, CsvQuotesPerRfc4180) {
  Table t({Table::Column::String("text"), Table::Column::Integer("n")});
  ASSERT_TRUE(t.AddRow({"plain", 1}).ok());
  ASSERT_TRUE(t.AddRow({"a,b", 2}).ok());
  ASSERT_TRUE(t.AddRow({"say \"hi\"", 3}).ok());
  ASSERT_TRUE(t.AddRow({"two\nlines", 4}).ok());
  ASSERT_TRUE(t.AddRow({"cr\r", 5}).ok());
  ASSERT_TRUE(t.AddRow({"", 6}).ok());
  // Quoted: fields with comma, quote, LF or CR; quotes inside are doubled.
  EXPECT_EQ(t.ToCsv(),
            "text,n\n"
            "plain,1\n"
            "\"a,b\",2\n"
            "\"say \"\"hi\"\"\",3\n"
            "\"two\nlines\",4\n"
            "\"cr\r\",5\n"
            ",6\n");
}

TEST(TableTest, CsvQuotesHeaders) {
  Table t({Table::Column::Double("time, us", 1)});
  ASSERT_TRUE(t.AddRow({1.25}).ok());
  // 1.25 is exact in binary; printf rounds half to even: "1.2".
  EXPECT_EQ(t.ToCsv(), "\"time, us\"\n1.2\n");
}

TEST(TableTest, JsonArrayOfObjects) {
  Table t = SizeTable();
  ASSERT_TRUE(t.AddRow({"ring", 1024, 3.14159}).ok());
  ASSERT_TRUE(t.AddRow({"rd", 2048, 0.5}).ok());
  EXPECT_EQ(t.ToJson(),
            "[\n"
            "{\"name\":\"ring\",\"size (B)\":1024,\"time (us)\":3.14159},\n"
            "{\"name\":\"rd\",\"size (B)\":2048,\"time (us)\":0.5}\n"
            "]\n");
}

TEST(TableTest, JsonEscapesStrings) {
  Table t({Table::Column::String("k\"ey")});
  ASSERT_TRUE(t.AddRow({"q\" b\\ n\n t\t r\r bs\b ff\f"}).ok());
  ASSERT_TRUE(t.AddRow({std::string("nul\0 us\x1f", 8)}).ok());
  ASSERT_TRUE(t.AddRow({"caf\xc3\xa9"}).ok());  // UTF-8 passes through
  EXPECT_EQ(t.ToJson(),
            "[\n"
            "{\"k\\\"ey\":\"q\\\" b\\\\ n\\n t\\t r\\r bs\\b ff\\f\"},\n"
            "{\"k\\\"ey\":\"nul\\u0000 us\\u001f\"},\n"
            "{\"k\\\"ey\":\"caf\xc3\xa9\"}\n"
            "]\n");
}

TEST(TableTest, JsonNonFiniteIsNull) {
  Table t({Table::Column::Double("x", 2)});
  ASSERT_TRUE(t.AddRow({std::nan("")}).ok());
  ASSERT_TRUE(t.AddRow({std::numeric_limits<double>::infinity()}).ok());
  EXPECT_EQ(t.ToJson(),
            "[\n"
            "{\"x\":null},\n"
            "{\"x\":null}\n"
            "]\n");
}

TEST(TableTest, TextCountsUtf8CodePoints) {
  Table t({Table::Column::String("name"), Table::Column::Integer("n")});
  ASSERT_TRUE(t.AddRow({"caf\xc3\xa9", 1}).ok());  // 4 code points, 5 bytes
  ASSERT_TRUE(t.AddRow({"ab", 22}).ok());
  EXPECT_EQ(t.ToText(),
            "name   n\n"
            "caf\xc3\xa9   1\n"
            "ab    22\n");
}

TEST(TableTest, RejectsWrongCellCount) {
  Table t = SizeTable();
  absl::Status s = t.AddRow({"ring", 1024});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("2 cells for 3 columns"));
  EXPECT_EQ(t.num_rows(), 0u);
}

TEST(TableTest, RejectsWrongCellType) {
  Table t = SizeTable();
  absl::Status s = t.AddRow({"ring", 1.5, 3.0});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("column 'size (B)': expected integer, got double"));
  s = t.AddRow({1, 2, 3.0});
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("column 'name': expected string, got integer"));
  s = t.AddRow({"ring", 2, "fast"});
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("column 'time (us)': expected double, got string"));
  EXPECT_EQ(t.num_rows(), 0u);
}

TEST(TableTest, CellsFromStringKinds) {
  Table t({Table::Column::String("a"), Table::Column::String("b"),
           Table::Column::String("c")});
  const std::string s = "std";
  const absl::string_view v = "view";
  ASSERT_TRUE(t.AddRow({"literal", s, v}).ok());
  EXPECT_EQ(t.ToCsv(), "a,b,c\nliteral,std,view\n");
}

}  // namespace
}  // namespace ccreplay
