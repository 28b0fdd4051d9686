#include "cli/explain.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "cli/run.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/text_format.h"
#include "hw/provenance.h"

namespace ccreplay {
namespace {

namespace pb = google::protobuf;

// The parameter groups of the config, in schema order (the topology is the
// command's choice, not a parameter of the hardware).
constexpr const char* kGroups[] = {"cdma", "link", "switch_config", "message"};

struct Param {
  std::string path;
  const pb::FieldDescriptor* group;
  const pb::FieldDescriptor* field;
  const ParamSource* source;
};

std::vector<Param> Params() {
  std::vector<Param> out;
  const pb::Descriptor* d = v1::HardwareConfig::descriptor();
  for (const char* g : kGroups) {
    const pb::FieldDescriptor* group = d->FindFieldByName(g);
    const pb::Descriptor* gd = group->message_type();
    for (int i = 0; i < gd->field_count(); ++i) {
      const pb::FieldDescriptor* f = gd->field(i);
      std::string path = absl::StrCat(g, ".", f->name());
      out.push_back({path, group, f, FindParamSource(path)});
    }
  }
  return out;
}

std::string ValueText(const v1::HardwareConfig& proto, const Param& p) {
  const pb::Message& m = proto.GetReflection()->GetMessage(proto, p.group);
  std::string text;
  pb::TextFormat::PrintFieldValueToString(m, p.field, -1, &text);
  return text;
}

// The variants of one parameter: (label, new value as an integer or enum
// number).
std::vector<std::pair<std::string, int64_t>> Variants(
    const v1::HardwareConfig& proto, const Param& p) {
  const pb::Message& m = proto.GetReflection()->GetMessage(proto, p.group);
  const pb::Reflection* r = m.GetReflection();
  std::vector<std::pair<std::string, int64_t>> out;
  // A switch between machines (cdma.unbounded_bandwidth), not a quantity:
  // flipping it alone makes no valid config.
  if (p.field->type() == pb::FieldDescriptor::TYPE_BOOL) return out;
  if (p.field->type() == pb::FieldDescriptor::TYPE_ENUM) {
    const int now = r->GetEnumValue(m, p.field);
    const pb::EnumDescriptor* e = p.field->enum_type();
    for (int i = 0; i < e->value_count(); ++i) {
      if (e->value(i)->number() != now) {
        out.push_back({e->value(i)->name(), e->value(i)->number()});
      }
    }
    return out;
  }
  const uint64_t v = p.field->type() == pb::FieldDescriptor::TYPE_UINT32
                         ? r->GetUInt32(m, p.field)
                         : r->GetUInt64(m, p.field);
  if (v == 0) {
    if (p.source != nullptr && p.source->alternative != 0) {
      out.push_back({"alt", static_cast<int64_t>(p.source->alternative)});
    }
    return out;
  }
  auto down = static_cast<int64_t>(std::llround(v * 0.75));
  auto up = static_cast<int64_t>(std::llround(v * 1.25));
  if (p.source != nullptr && p.source->power_of_two) {
    // +-25% of a power of two is none: the neighbours are half and double.
    down = static_cast<int64_t>(v / 2);
    up = static_cast<int64_t>(v * 2);
  }
  const bool halve = p.source != nullptr && p.source->power_of_two;
  if (down != static_cast<int64_t>(v) && down > 0) {
    out.push_back({halve ? "/2" : "-25%", down});
  }
  if (up != static_cast<int64_t>(v)) out.push_back({halve ? "x2" : "+25%", up});
  return out;
}

v1::HardwareConfig WithValue(const v1::HardwareConfig& proto, const Param& p,
                             int64_t value) {
  v1::HardwareConfig copy = proto;
  pb::Message* m = copy.GetReflection()->MutableMessage(&copy, p.group);
  const pb::Reflection* r = m->GetReflection();
  switch (p.field->type()) {
    case pb::FieldDescriptor::TYPE_ENUM:
      r->SetEnumValue(m, p.field, static_cast<int>(value));
      break;
    case pb::FieldDescriptor::TYPE_UINT32:
      r->SetUInt32(m, p.field, static_cast<uint32_t>(value));
      break;
    default:
      r->SetUInt64(m, p.field, static_cast<uint64_t>(value));
      break;
  }
  return copy;
}

std::string RowName(const WorkloadRow& w) {
  return absl::StrCat(w.module, ".", w.op_name);
}

}  // namespace

absl::StatusOr<Table> ExplainTable(const HwConfig& hw) {
  const v1::HardwareConfig proto = HwConfigToProto(hw);
  Table t({Table::Column::String("parameter"), Table::Column::String("value"),
           Table::Column::String("origin"), Table::Column::String("note")});
  for (const Param& p : Params()) {
    const ParamSource* s = p.source;
    absl::Status st = t.AddRow(
        {p.path, ValueText(proto, p),
         s == nullptr ? "?" : std::string(ParamOriginName(s->origin)),
         s == nullptr ? "no provenance recorded" : std::string(s->note)});
    if (!st.ok()) return st;
  }
  return t;
}

absl::StatusOr<SensitivityResult> Sensitivity(
    const HwConfig& hw, const std::vector<WorkloadRow>& rows) {
  absl::StatusOr<Baseline> base = RunBaseline(rows, hw);
  if (!base.ok()) return base.status();
  std::vector<Table::Column> cols = {
      Table::Column::String("parameter"), Table::Column::String("origin"),
      Table::Column::String("variant"), Table::Column::String("value")};
  for (const WorkloadRow& w : rows) {
    cols.push_back(Table::Column::Double(RowName(w) + "_pct", 2));
  }
  cols.push_back(Table::Column::Double("max_abs_pct", 2));
  SensitivityResult out{Table(cols), {}, {}, {}, {}};
  for (const BaselineRow& r : base->rows) out.base.push_back(r.replay);
  const v1::HardwareConfig proto = HwConfigToProto(hw);
  for (const Param& p : Params()) {
    for (const auto& [label, value] : Variants(proto, p)) {
      const v1::HardwareConfig variant = WithValue(proto, p, value);
      absl::StatusOr<HwConfig> vhw = HwConfigFromProto(variant);
      if (!vhw.ok()) {
        out.rejected.push_back(absl::StrCat(p.path, " = ",
                                            ValueText(variant, p), ": ",
                                            vhw.status().message()));
        continue;
      }
      absl::StatusOr<Baseline> b = RunBaseline(rows, *vhw);
      if (!b.ok()) {
        out.rejected.push_back(absl::StrCat(
            p.path, " = ", ValueText(variant, p), ": ", b.status().message()));
        continue;
      }
      std::vector<Table::Cell> cells = {
          p.path,
          p.source == nullptr ? "?"
                              : std::string(ParamOriginName(p.source->origin)),
          label, ValueText(variant, p)};
      double worst = 0;
      out.variants.push_back(absl::StrCat(p.path, " ", label));
      out.replay.emplace_back();
      for (size_t i = 0; i < rows.size(); ++i) {
        out.replay.back().push_back(b->rows[i].replay);
        const double t0 = base->rows[i].replay.us();
        const double pct = 100.0 * (b->rows[i].replay.us() - t0) / t0;
        cells.push_back(pct);
        worst = std::max(worst, std::abs(pct));
      }
      cells.push_back(worst);
      if (absl::Status s = out.table.AddRow(cells); !s.ok()) return s;
    }
  }
  return out;
}

}  // namespace ccreplay
