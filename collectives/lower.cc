#include "collectives/lower.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "collectives/lower_builder.h"
#include "collectives/lower_internal.h"

namespace ccreplay {
namespace {

using lowering::ChipOut;
using lowering::ChunkOffset;
using lowering::ChunkSize;
using lowering::LowerCtx;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// A MsgWait count is a uint32; the largest one the lowerings emit is n (the
// pairwise wait on one stripe's counter).

// The largest engine count a qp_id can name without overflowing uint32 and
// the one hw/config.cc accepts from a config file.
constexpr uint32_t kMaxEngines = 1u << 16;

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("lowering: ", what));
}

bool IsReduceFamily(v1::CollectiveOp op) {
  return op == v1::ALLREDUCE || op == v1::ALLGATHER || op == v1::REDUCESCATTER;
}

using RankLowering = void (*)(const LowerCtx&, uint32_t, ChipOut&);

// The lowering of (op, algorithm), or null when unsupported.
RankLowering Find(v1::CollectiveOp op, const std::string& algo) {
  if (IsReduceFamily(op)) {
    if (algo == "ring") return lowering::LowerRingRank;
    if (algo == "ring_2port") return lowering::LowerRing2PortRank;
    if (algo == "rh" || algo == "rd" || algo == "hd") {
      return lowering::LowerRecursiveRank;
    }
  }
  if (op == v1::ALLTOALL && algo == "pairwise")
    return lowering::LowerPairwiseRank;
  if (op == v1::ALLTOALL && algo == "bruck") return lowering::LowerBruckRank;
  if (op == v1::ALLTOALLV && algo == "pairwise") {
    return lowering::LowerPairwiseRank;
  }
  if (op == v1::BROADCAST && algo == "ring")
    return lowering::LowerBroadcastRank;
  if (op == v1::REDUCE && algo == "ring") return lowering::LowerReduceRank;
  if (op == v1::P2P && (algo == "direct" || algo == "ring")) {
    return lowering::LowerP2pRank;
  }
  return nullptr;
}

constexpr char kSupported[] =
    "supported: allreduce, allgather, reducescatter with 'ring', "
    "'ring_2port', 'rh', 'rd', 'hd'; alltoall with 'pairwise', 'bruck'; "
    "alltoallv with 'pairwise'; broadcast and reduce with 'ring'; p2p with "
    "'direct'";

// Sizes, group and engines: what every collective needs.
absl::Status ValidateShape(const CollectiveSpec& spec, const HwConfig& hw) {
  const uint32_t g = spec.GroupSize();
  if (spec.bytes == 0) return Invalid("bytes must be > 0");
  if (spec.n < 2 || spec.n > kMaxChips) {
    return Invalid(
        absl::StrCat("n must be in [2, ", kMaxChips, "], got ", spec.n));
  }
  if (g < 2 || g > spec.n || spec.n % g != 0) {
    return Invalid(absl::StrCat("group_size ", spec.group_size,
                                " must be in [2, n] and divide n = ", spec.n));
  }
  if (hw.cdma_engines == 0 || hw.cdma_engines > kMaxEngines) {
    return Invalid(absl::StrCat("hardware cdma_engines must be in [1, ",
                                kMaxEngines, "], got ", hw.cdma_engines));
  }
  if (spec.cdma_engines > hw.cdma_engines) {
    return Invalid(absl::StrCat("cdma_engines ", spec.cdma_engines,
                                " exceeds the hardware's ", hw.cdma_engines,
                                " engines per chip"));
  }
  // A chunked algorithm cuts blocks of at least bytes / g bytes into pieces
  // of at least one instruction each: a piece count above the cap is
  // refused before the dry run would walk the pieces.
  const uint64_t pieces = lowering::NumPieces(spec.bytes / g, spec.chunk_bytes);
  if (pieces > lowering::kMaxInstructions) {
    return Invalid(absl::StrCat(
        "chunk_bytes ", spec.chunk_bytes, " cuts a ", spec.bytes / g,
        "-byte block into ", pieces,
        " pieces of at least one instruction each, more than the ",
        lowering::kMaxInstructions, " instructions one trace may hold ",
        "(raise chunk_bytes)"));
  }
  return absl::OkStatus();
}

// The root (Broadcast, Reduce, P2P) and the peer (P2P) within a group of g.
absl::Status ValidateRoles(const CollectiveSpec& spec, uint32_t g) {
  if (spec.op == v1::BROADCAST || spec.op == v1::REDUCE || spec.op == v1::P2P) {
    if (spec.root >= g) {
      return Invalid(
          absl::StrCat("root ", spec.root, " out of range [0, ", g, ")"));
    }
  }
  if (spec.op == v1::P2P) {
    const uint32_t peer = lowering::P2pPeer(spec, g);
    if (peer >= g || peer == spec.root) {
      return Invalid(absl::StrCat("p2p peer ", peer, " must be in [0, ", g,
                                  ") and differ from "
                                  "root ",
                                  spec.root));
    }
  }
  return absl::OkStatus();
}

// AllToAll(v): no chunking, a well-formed matrix, output buffers that fit.
absl::Status ValidateAllToAll(const CollectiveSpec& spec, const LowerCtx& c) {
  const uint32_t g = c.g;
  if (spec.chunk_bytes != 0 &&
      (spec.op == v1::ALLTOALL || spec.op == v1::ALLTOALLV)) {
    return Invalid(
        absl::StrCat("chunk_bytes is supported by ring, ring_2port, "
                     "broadcast, reduce and p2p, not by '",
                     spec.algorithm, "'"));
  }
  if (spec.op == v1::ALLTOALLV) {
    const uint64_t cells = uint64_t{g} * g;
    if (!spec.alltoallv_bytes.empty() && spec.alltoallv_bytes.size() != cells) {
      return Invalid(absl::StrCat("alltoallv_bytes has ",
                                  spec.alltoallv_bytes.size(),
                                  " entries, want group_size^2 = ", cells));
    }
    for (uint32_t i = 0; i < g && !spec.alltoallv_bytes.empty(); ++i) {
      unsigned __int128 row = 0;
      for (uint32_t p = 0; p < g; ++p)
        row += spec.alltoallv_bytes[uint64_t{i} * g + p];
      if (row != spec.bytes) {
        return Invalid(absl::StrCat("alltoallv_bytes row ", i, " sums to ",
                                    static_cast<uint64_t>(row),
                                    " bytes, want bytes = ", spec.bytes));
      }
    }
  }
  if (spec.op == v1::ALLTOALL || spec.op == v1::ALLTOALLV) {
    for (uint32_t p = 0; p < g; ++p) {
      const unsigned __int128 end =
          static_cast<unsigned __int128>(spec.bytes) + c.A2aReceived(p);
      if (end > kU64Max) {
        return Invalid(absl::StrCat(CollectiveOpName(spec.op), " of ",
                                    spec.bytes, " bytes over ", g,
                                    " chips needs output buffers ending past "
                                    "2^64 - 1"));
      }
      if (spec.alltoallv_bytes.empty()) break;  // chip 0's ends furthest
    }
  }
  return absl::OkStatus();
}

absl::Status Validate(const CollectiveSpec& spec, const HwConfig& hw,
                      LowerCtx* ctx) {
  if (Find(spec.op, spec.algorithm) == nullptr) {
    return Invalid(absl::StrCat("unsupported collective '",
                                CollectiveOpName(spec.op), "' with algorithm '",
                                spec.algorithm, "' (", kSupported, ")"));
  }
  if (absl::Status s = ValidateShape(spec, hw); !s.ok()) return s;
  const uint32_t g = spec.GroupSize();
  ctx->spec = &spec;
  ctx->g = g;
  ctx->m = spec.bytes;
  ctx->k = spec.cdma_engines == 0 ? hw.cdma_engines : spec.cdma_engines;
  ctx->hw_engines = hw.cdma_engines;
  if (absl::Status s = ValidateRoles(spec, g); !s.ok()) return s;
  if (absl::Status s = ValidateAllToAll(spec, *ctx); !s.ok()) return s;
  if (spec.algorithm == "rh" || spec.algorithm == "rd" ||
      spec.algorithm == "hd") {
    if (absl::Status s = lowering::CheckRecursive(*ctx); !s.ok()) return s;
  }
  if (spec.algorithm == "bruck") {
    if (absl::Status s = lowering::CheckBruck(*ctx); !s.ok()) return s;
  }
  if (spec.no_rendezvous &&
      !(IsReduceFamily(spec.op) &&
        (spec.algorithm == "ring" || spec.algorithm == "ring_2port"))) {
    // The other algorithms' ready messages also say a buffer may be
    // overwritten again, which the schedule needs.
    return Invalid(absl::StrCat(
        "no_rendezvous is supported by allreduce, allgather and "
        "reducescatter with 'ring' or 'ring_2port', not by '",
        CollectiveOpName(spec.op), "' with '", spec.algorithm, "'"));
  }
  return absl::OkStatus();
}

void SetRange(v1::BufferRange* r, uint64_t addr, uint64_t bytes) {
  r->set_addr(addr);
  r->set_bytes(bytes);
}

// Rank r's buffers (docs/lowering.md, "Header").
void SetBuffers(const LowerCtx& c, uint32_t r, v1::ChipBuffers* buf) {
  const uint64_t m = c.m;
  const uint32_t g = c.g;
  const uint64_t own_offset = ChunkOffset(m, g, r);
  const uint64_t own_size = ChunkSize(m, g, r);
  const CollectiveSpec& s = *c.spec;
  switch (s.op) {
    case v1::ALLGATHER:
      SetRange(buf->mutable_input(), own_offset, own_size);
      SetRange(buf->mutable_output(), 0, m);
      break;
    case v1::REDUCESCATTER:
      SetRange(buf->mutable_input(), 0, m);
      SetRange(buf->mutable_output(), own_offset, own_size);
      break;
    case v1::ALLTOALL:
    case v1::ALLTOALLV:
      SetRange(buf->mutable_input(), 0, m);
      SetRange(buf->mutable_output(), m, c.A2aReceived(r));
      break;
    case v1::BROADCAST:
      SetRange(buf->mutable_input(), 0, r == s.root ? m : 0);
      SetRange(buf->mutable_output(), 0, m);
      break;
    case v1::REDUCE:
      SetRange(buf->mutable_input(), 0, m);
      SetRange(buf->mutable_output(), 0, r == s.root ? m : 0);
      break;
    case v1::P2P:
      SetRange(buf->mutable_input(), 0, r == s.root ? m : 0);
      SetRange(buf->mutable_output(), 0, r == lowering::P2pPeer(s, g) ? m : 0);
      break;
    default:  // ALLREDUCE
      SetRange(buf->mutable_input(), 0, m);
      SetRange(buf->mutable_output(), 0, m);
      break;
  }
}

// Counts every group's instructions (all groups are alike) in a dry run
// before any is emitted, so no lowering can exhaust memory.
absl::Status CheckSize(const CollectiveSpec& spec, const LowerCtx& ctx,
                       RankLowering lower) {
  const uint32_t n = spec.n;
  const uint32_t g = ctx.g;

  uint64_t per_group = 0;
  uint32_t counted = 0;
  while (counted < g && per_group <= lowering::kMaxInstructions) {
    ChipOut count(nullptr, 0, counted, ctx.k);
    lower(ctx, counted++, count);
    per_group += count.instructions();
  }
  const unsigned __int128 total =
      static_cast<unsigned __int128>(per_group) * (n / g);
  if (total > lowering::kMaxInstructions) {
    return Invalid(absl::StrCat(
        CollectiveOpName(spec.op), " ", spec.algorithm, " over ", n,
        " chips and ", ctx.k, " engines would emit ",
        counted < g ? "more than " : "", static_cast<uint64_t>(total),
        " instructions, more than the ", lowering::kMaxInstructions,
        " one trace may hold"));
  }
  return absl::OkStatus();
}

// The header of the lowered trace: the collective, the lowering's choices
// and every chip's buffers.
void FillHeader(const CollectiveSpec& spec, const LowerCtx& ctx,
                v1::TraceHeader* h) {
  const uint32_t n = spec.n;
  const uint32_t g = ctx.g;
  h->set_format_version(v1::FORMAT_VERSION_1);
  h->set_num_chips(n);
  h->set_generator("ccreplay lower");
  v1::CollectiveInfo* info = h->mutable_collective();
  info->set_op(spec.op);
  info->set_n(n);
  info->set_bytes(spec.bytes);
  info->set_algorithm(spec.algorithm);
  info->set_topology(std::string(TopologyName(spec.topology)));
  info->set_cdma_engines_used(ctx.k);
  info->set_in_place(IsReduceFamily(spec.op) || spec.op == v1::BROADCAST ||
                     spec.op == v1::REDUCE);
  if (spec.group_size != 0 && spec.group_size != n) {
    info->set_group_size(spec.group_size);
  }
  info->set_chunk_bytes(spec.chunk_bytes);
  info->set_sync("write+msg");
  info->set_no_rendezvous(spec.no_rendezvous);
  if (spec.op == v1::ALLTOALLV) {
    for (uint32_t i = 0; i < g; ++i) {
      for (uint32_t p = 0; p < g; ++p)
        info->add_alltoallv_bytes(ctx.A2aBytes(i, p));
    }
    info->set_distribution(spec.distribution.empty() ? "uniform"
                                                     : spec.distribution);
  }
  if (spec.op == v1::BROADCAST || spec.op == v1::REDUCE || spec.op == v1::P2P) {
    info->set_root(spec.root);
  }
  if (spec.op == v1::P2P) info->set_peer(lowering::P2pPeer(spec, g));
  info->mutable_buffers()->Reserve(static_cast<int>(n));
  for (uint32_t chip = 0; chip < n; ++chip) {
    v1::ChipBuffers* buf = info->add_buffers();
    buf->set_chip(chip);
    SetBuffers(ctx, chip % g, buf);
  }
}

}  // namespace

absl::Status LowerCollectiveTo(const CollectiveSpec& spec, const HwConfig& hw,
                               const LoweredTraceSink& sink) {
  LowerCtx ctx;
  if (absl::Status s = Validate(spec, hw, &ctx); !s.ok()) return s;
  const RankLowering lower = Find(spec.op, spec.algorithm);
  if (absl::Status s = CheckSize(spec, ctx, lower); !s.ok()) return s;
  v1::TraceHeader header;
  FillHeader(spec, ctx, &header);
  if (absl::Status s = sink.header(&header); !s.ok()) return s;
  const uint32_t g = ctx.g;
  v1::ChipProgram program;  // one chip at a time, reused
  for (uint32_t chip = 0; chip < spec.n; ++chip) {
    program.Clear();
    program.set_chip(chip);
    ChipOut out(&program, chip - chip % g, chip % g, ctx.k);
    lower(ctx, chip % g, out);
    if (absl::Status s = sink.chip(&program); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Trace> LowerCollective(const CollectiveSpec& spec,
                                          const HwConfig& hw) {
  v1::Trace trace;
  trace.mutable_chips()->Reserve(static_cast<int>(spec.n));
  LoweredTraceSink sink;
  sink.header = [&](v1::TraceHeader* h) {
    trace.mutable_header()->Swap(h);
    return absl::OkStatus();
  };
  sink.chip = [&](v1::ChipProgram* c) {
    trace.add_chips()->Swap(c);
    return absl::OkStatus();
  };
  if (absl::Status s = LowerCollectiveTo(spec, hw, sink); !s.ok()) return s;
  return trace;
}

absl::StatusOr<DecodedTrace> LowerAndDecode(const CollectiveSpec& spec,
                                             const HwConfig& hw) {
  DecodedTrace out;
  std::optional<TraceDecoder> decoder;
  LoweredTraceSink sink;
  sink.header = [&](v1::TraceHeader* h) {
    out.header.mutable_header()->Swap(h);
    decoder.emplace(&out.header.header(), hw.Target());
    return absl::OkStatus();
  };
  sink.chip = [&](v1::ChipProgram* c) {
    if (!decoder)
      return absl::InternalError("a chip lowered before the header");
    decoder->AddChip(*c);
    return absl::OkStatus();
  };
  if (absl::Status s = LowerCollectiveTo(spec, hw, sink); !s.ok()) return s;
  if (!decoder) return absl::InternalError("the lowering made no header");
  out.program = decoder->Finish();
  return out;
}

bool HasLowering(v1::CollectiveOp op, const std::string& algorithm) {
  return Find(op, algorithm) != nullptr;
}

const std::vector<std::string>& LoweringAlgorithmNames() {
  static const auto* const names = new std::vector<std::string>{
      "ring", "ring_2port", "rh", "rd", "hd", "pairwise", "bruck", "direct"};
  return *names;
}

}  // namespace ccreplay
