// Where the time went: the critical path of a replay, walked back from the
// last stream to finish, with every picosecond attributed to one mechanism.
//
// The walk follows what held each step up, as the engine recorded it
// (InstrTiming::cause): a MsgWait back to the message that completed its
// count, a message back through the network to the engine that sent it, an
// engine back to the instruction it finished before, a data-moving
// instruction back through its data phase and startup to the point its
// stream issued it, and a stream back to its previous instruction. Network
// time of the packet on the path is split by its route into serialisation,
// link latency + propagation, switch forwarding, and the rest (queueing for
// a lane group, arbitration, credit).
#ifndef CCREPLAY_REPLAY_BREAKDOWN_H_
#define CCREPLAY_REPLAY_BREAKDOWN_H_

#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/units.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "replay/engine.h"
#include "replay/path.h"
#include "trace/program.h"

namespace ccreplay {

// The arithmetic of each step of the critical path: what one stretch of an
// instruction's life costs, by mechanism. Shared by the walk over the timing
// records (WalkCriticalPath) and the running sums the engine keeps as
// it replays (replay/critical_path.h), so that both attribute every
// picosecond the same way.
class PathCosts {
 public:
  PathCosts(const HwConfig& hw, const Topology& topo);

  using Causes = std::array<TimePs, kNumPathCauses>;
  // Adds `d` to cause `c` when it is positive.
  static void Add(Causes& b, PathCause c, TimePs d) {
    if (d.ps() > 0) b[static_cast<int>(c)] += d;
  }
  // Splits `total`, the time a control packet (a message, clear-to-send or
  // acknowledgement: MessageWire() bytes) took from chip `src` to chip
  // `dst` on the flow of `qp`, along its route. `behind_own` is how long it
  // waited, at least, behind bytes of its own flow that the first link had
  // still to serialise: serialisation, not queueing.
  void ControlNetwork(Causes& b, uint32_t src, uint32_t dst, uint32_t qp,
                      TimePs total,
                      TimePs behind_own = TimePs::Zero()) const {
    Network(b, src, dst, qp, message_lane_group_, total, behind_own);
  }
  // A data phase of `phase` (start to end) of `in`, local or not:
  // unloaded, it takes the longer of the engine reading the bytes and the
  // link serialising them; beyond that, backpressure.
  void DataPhase(Causes& b, const Instr& in, bool local,
                 TimePs phase) const;
  // The network time of the last packet of remote write `in`, whose data
  // phase ran from `start` to `end`, landed at `landed`.
  void LastPacket(Causes& b, uint32_t chip, const Instr& in, TimePs start,
                  TimePs end, TimePs landed) const;
  // How much of data instruction `in`'s serialisation (its data phase began
  // at `start`) was still to come at `at`.
  TimePs OwnBacklog(const Instr& in, TimePs start, TimePs at) const;
  // A write's completion at its chip `chip`, `complete - landed` after it
  // landed: the acknowledgement's way back (a remote Transfer or a Send).
  void Acknowledgement(Causes& b, uint32_t chip, const Instr& in,
                       TimePs landed, TimePs complete) const;
  // A RemoteMsgSend from `chip`, started at `start`, arrived at `arrived`
  // and counted at `landed`: its handshake and its way, behind `backlog`
  // of its own write's bytes.
  void MessageCounted(Causes& b, uint32_t chip, const Instr& in, TimePs start,
                      TimePs arrived, TimePs landed, TimePs backlog) const;
  // A message held for its write, which landed at `data`, counted at
  // `landed`: the handshake, and the rest queueing.
  void HeldCounted(Causes& b, TimePs data, TimePs landed) const;
  // Write + msg: a RemoteMsgSend `msg` on chip `chip` whose stream's
  // instruction before it is `prev` leaves behind that write's bytes.
  static bool FollowsOwnWrite(const Instr& prev, const Instr& msg,
                              uint32_t chip) {
    return prev.kind == OpKind::kTransfer && prev.qp_id == msg.qp_id &&
           prev.peer != chip;
  }

 private:
  uint32_t MessageWire() const {
    return hw_.message_payload_bytes + hw_.packet_header_bytes;
  }
  // What a data instruction's size gives, each a division or two: the
  // engine's read of all of it and of its first packet, the link's
  // serialisation of all its packets (headers included), its last packet's
  // time on one link and on one lane group.
  struct SizeCosts {
    uint64_t bytes = ~uint64_t{0};
    TimePs read;
    TimePs first_read;
    TimePs own_serialisation;
    TimePs last_serialisation;
    TimePs last_lane_group;
  };
  // Of `bytes`, as last worked out: a collective's writes mostly have one
  // size step after step.
  const SizeCosts& Sizes(uint64_t bytes) const {
    return sizes_.bytes == bytes ? sizes_ : NewSizes(bytes);
  }
  const SizeCosts& NewSizes(uint64_t bytes) const;
  // Splits `total` as ControlNetwork does, for a packet of `ser` on one
  // lane group.
  void Network(Causes& b, uint32_t src, uint32_t dst, uint32_t qp,
               TimePs ser, TimePs total, TimePs behind_own) const;
  // A route's flight time, switch forwarding and hops (Network), as last
  // walked from its source chip: a chip of a collective mostly sends to the
  // same peer on the same queue pair step after step.
  struct RouteMemo {
    uint32_t dst = ~uint32_t{0};
    uint32_t qp = 0;
    TimePs flight;
    TimePs fwd;
    int64_t hops = 0;
  };
  const RouteMemo& Route(uint32_t src, uint32_t dst, uint32_t qp) const;

  const HwConfig& hw_;
  const Topology& topo_;
  mutable std::vector<RouteMemo> routes_;  // per source chip
  mutable SizeCosts sizes_;
  TimePs message_lane_group_;  // LaneGroupTime of MessageWire()
};

// Where the time of `result` went: the breakdown it summed as it ran
// (ReplayOptions::sum_critical_path), else the walk over its timing
// records (WalkCriticalPath). InternalError when no stream's last
// instruction ends at the makespan.
// REQUIRES: `result` is Replay(program, hw, topology)'s result.
absl::StatusOr<Breakdown> CriticalPathBreakdown(const Program& program,
                                                const ReplayResult& result,
                                                const HwConfig& hw,
                                                const Topology& topology);

// The same breakdown walked back over the timing records once the run is
// over: the reference the running sums are tested against
// (tests/critical_path_test.cc).
// REQUIRES: `result` is Replay(program, hw, topology)'s result.
absl::StatusOr<Breakdown> WalkCriticalPath(const Program& program,
                                           const ReplayResult& result,
                                           const HwConfig& hw,
                                           const Topology& topology);
// The walk from instruction `last` (global index) at its end back to time
// 0; `total` is left 0. For tests of every stream's sums
// (ReplayOptions::every_stream_path).
absl::StatusOr<Breakdown> WalkPathFrom(const Program& program,
                                       const ReplayResult& result,
                                       const HwConfig& hw,
                                       const Topology& topology,
                                       uint32_t last);

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_BREAKDOWN_H_
