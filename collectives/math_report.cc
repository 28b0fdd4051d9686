#include "collectives/math_report.h"

#include <utility>
#include <vector>

#include "collectives/math.h"
#include "collectives/workload.h"

namespace ccreplay {

absl::StatusOr<Table> MathSelfCheckTable(const HwConfig &hw, bool legacy) {
  constexpr int kUsDecimals = 4;  // as docs/spec-notes.md §2 prints them
  std::vector<Table::Column> columns = {Table::Column::String("module"),
                                        Table::Column::String("operator"),
                                        Table::Column::Integer("M_bytes")};
  if (legacy)
    columns.push_back(Table::Column::Double("legacy_us", kUsDecimals));
  columns.push_back(Table::Column::Double("corrected_us", kUsDecimals));
  Table table(std::move(columns));

  const MathParams params = MathParamsFromHw(hw);
  for (const WorkloadRow &row : Tps186Workload()) {
    absl::StatusOr<double> corrected =
        MathTimeUs(row.op, row.n, row.bytes, row.topology, params);
    if (!corrected.ok()) return corrected.status();
    std::vector<Table::Cell> cells = {row.module, row.op_name, row.bytes};
    if (legacy) {
      absl::StatusOr<double> old =
          LegacyMathTimeUs(row.op, row.n, row.bytes, row.topology, params);
      if (!old.ok()) return old.status();
      cells.push_back(*old);
    }
    cells.push_back(*corrected);
    if (absl::Status s = table.AddRow(std::move(cells)); !s.ok()) return s;
  }
  return table;
}

}  // namespace ccreplay
