#include "check/semantics.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/checked.h"
#include "check/executor.h"
#include "collectives/collective.h"
#include "collectives/lower_internal.h"

namespace ccreplay {
namespace {

using lowering::ChunkOffset;
using lowering::ChunkSize;

std::string Range(uint64_t lo, uint64_t len) {
  return absl::StrCat("[", lo, ", ", lo + len, ")");
}

// The segments' total against chip `chip`'s output buffer, checked: sizes
// that add up only modulo 2^64 must not pass as equal.
absl::Status CheckOutputSize(const v1::CollectiveInfo& c, uint32_t chip,
                             const std::vector<Seg>& segs) {
  const uint64_t out_bytes = c.buffers(static_cast<int>(chip)).output().bytes();
  CheckedSum<uint64_t> sum;
  for (const Seg& s : segs) sum.Add(s.len);
  if (sum.overflow()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "semantics: ", CollectiveOpName(c.op()), " chip ", chip,
        ": the sizes its output is defined by add up past 2^64 - 1"));
  }
  if (*sum.value() != out_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: header.collective.buffers[", chip,
                     "].output has ", out_bytes, " bytes, but ",
                     CollectiveOpName(c.op()), " defines ", *sum.value()));
  }
  return absl::OkStatus();
}

// What chip `chip`'s output must hold, as segments.
absl::Status Expected(const v1::CollectiveInfo& c, uint32_t n, uint32_t chip,
                      std::vector<Seg>* out) {
  const uint32_t g = c.group_size() == 0 ? n : c.group_size();
  const uint32_t base = chip - chip % g;
  const uint32_t r = chip % g;
  const uint64_t m = c.bytes();
  auto data = [](uint64_t off, Contrib contrib) {
    Value v;
    v.kind = Value::kData;
    v.off = off;
    v.contrib = std::make_shared<Contrib>(std::move(contrib));
    return v;
  };
  auto one = [&](uint32_t q, uint64_t off) { return data(off, {{q, 1}}); };
  Contrib all;
  for (uint32_t q = 0; q < g; ++q) all.emplace_back(base + q, 1);
  auto in_bytes = [&](uint32_t q) {
    return c.buffers(static_cast<int>(q)).input().bytes();
  };
  out->clear();
  switch (c.op()) {
    case v1::ALLREDUCE:
      out->push_back({m, data(0, all)});
      break;
    case v1::ALLGATHER:
      for (uint32_t q = 0; q < g; ++q)
        out->push_back({in_bytes(base + q), one(base + q, 0)});
      break;
    case v1::REDUCESCATTER:
      out->push_back({ChunkSize(m, g, r), data(ChunkOffset(m, g, r), all)});
      break;
    case v1::ALLTOALL:
      for (uint32_t q = 0; q < g; ++q) {
        out->push_back(
            {ChunkSize(m, g, r), one(base + q, ChunkOffset(m, g, r))});
      }
      break;
    case v1::ALLTOALLV: {
      if (c.alltoallv_bytes_size() != static_cast<int>(uint64_t{g} * g)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "semantics: header.collective.alltoallv_bytes has ",
            c.alltoallv_bytes_size(), " entries, want ", uint64_t{g} * g));
      }
      for (uint32_t q = 0; q < g; ++q) {
        CheckedSum<uint64_t> src_off;
        for (uint32_t p = 0; p < r; ++p)
          src_off.Add(c.alltoallv_bytes(static_cast<int>(q * g + p)));
        if (src_off.overflow()) {
          return absl::InvalidArgumentError(
              absl::StrCat("semantics: header.collective.alltoallv_bytes row ",
                           q, " adds up past 2^64 - 1 before column ", r));
        }
        out->push_back({c.alltoallv_bytes(static_cast<int>(q * g + r)),
                        one(base + q, *src_off.value())});
      }
      break;
    }
    case v1::BROADCAST:
      out->push_back({m, one(base + c.root(), 0)});
      break;
    case v1::REDUCE:
      if (r == c.root()) out->push_back({m, data(0, all)});
      break;
    case v1::P2P:
      if (r == c.peer()) out->push_back({m, one(base + c.root(), 0)});
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("semantics: cannot check collective '",
                       CollectiveOpName(c.op()), "'"));
  }
  return CheckOutputSize(c, chip, *out);
}

// Every chip's output against what the collective defines; the first
// difference is the error.
absl::Status CheckResult(const v1::Trace& t, const ReferenceExecutor& exec) {
  const v1::CollectiveInfo& c = t.header().collective();
  const uint32_t n = t.header().num_chips();
  std::vector<Seg> want;
  for (uint32_t chip = 0; chip < n; ++chip) {
    if (auto s = Expected(c, n, chip, &want); !s.ok()) return s;
    const v1::BufferRange& ob = c.buffers(static_cast<int>(chip)).output();
    const std::vector<Seg> got = exec.Read(chip, ob.addr(), ob.bytes());
    // Walk both partitions of the output; report the first difference.
    size_t i = 0, j = 0;
    uint64_t ia = 0, jb = 0, pos = ob.addr();
    while (i < got.size() && j < want.size()) {
      if (want[j].len == 0) {
        ++j;
        continue;
      }
      const uint64_t n = std::min(got[i].len - ia, want[j].len - jb);
      const Value a = got[i].v.Shifted(ia);
      const Value b = want[j].v.Shifted(jb);
      if (!Equal(a, b)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "semantics: ", CollectiveOpName(c.op()), " chip ", chip, " output ",
            Range(pos, n), ": holds ", Describe(a), ", want ", Describe(b)));
      }
      pos += n;
      ia += n;
      jb += n;
      if (ia == got[i].len) ++i, ia = 0;
      if (jb == want[j].len) ++j, jb = 0;
    }
  }
  return absl::OkStatus();
}

// The header's collective must be one the verifier can compare against.
absl::Status CheckHeader(const v1::Trace& t) {
  const v1::TraceHeader& h = t.header();
  if (!h.has_collective()) {
    return absl::InvalidArgumentError(
        "semantics: the trace header has no collective to check against");
  }
  const v1::CollectiveInfo& c = h.collective();
  const uint32_t n = h.num_chips();
  const uint32_t g = c.group_size() == 0 ? n : c.group_size();
  if (n == 0 || g == 0 || n % g != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: group_size ", c.group_size(),
                     " does not divide ", n, " chips"));
  }
  if (c.buffers_size() != static_cast<int>(n)) {
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: header.collective has ", c.buffers_size(),
                     " buffers, want one per chip (", n, ")"));
  }
  for (uint32_t i = 0; i < n; ++i) {
    const v1::ChipBuffers& b = c.buffers(static_cast<int>(i));
    if (b.chip() != i) {
      return absl::InvalidArgumentError(
          absl::StrCat("semantics: header.collective.buffers[", i,
                       "] is for chip ", b.chip()));
    }
    for (const auto& [what, range] :
         {std::pair("input", &b.input()), std::pair("output", &b.output())}) {
      if (!CheckedAdd(range->addr(), range->bytes())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "semantics: header.collective.buffers[", i, "].", what, " addr ",
            range->addr(), " + bytes ", range->bytes(), " overflows 2^64"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifySemantics(const v1::Trace& trace,
                             const SemanticsOptions& options) {
  return VerifySemantics(
      trace, options.random ? RandomSchedule(options.seed) : LazySchedule(),
      ExecOptions{});
}

absl::Status VerifySemantics(const v1::Trace& trace, const Schedule& schedule,
                             const ExecOptions& exec_options) {
  if (absl::Status s = CheckHeader(trace); !s.ok()) return s;
  ReferenceExecutor exec(trace, exec_options);
  if (absl::Status s = exec.Run(schedule); !s.ok()) return s;
  return CheckResult(trace, exec);
}

}  // namespace ccreplay
