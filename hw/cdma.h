// The CDMA engines of every chip: per engine, one FIFO per VC bank of the
// queue-pair instructions issued to it, the choice of which queue head starts
// next, the pipelined startup, and the data phase of the instruction it moves
// (docs/hardware-model.md, "CDMA engines").
//
// An engine runs one data phase at a time. The phase reads the payload at
// cdma_bytes_per_s and hands each packet to the chip's port as soon as it has
// been read: packet k of an instruction leaves at
//   base_time + (bytes read since base_bytes) / cdma_bytes_per_s,
// with no rounding drift. When the port's queue for this engine and the
// packet's lane group already holds cdma_staging_packets packets, the engine
// keeps the packet and stops reading until the port takes one (backpressure);
// reading resumes from that moment (the base moves). A local copy is one
// phase of bytes / cdma_bytes_per_s.
//
// The engine knows nothing of instruction semantics: the replay loop
// (replay/engine.cc) tells it what a queued instruction needs (TryStart's
// `inspect`) and what starting one means (`start`).
#ifndef CCREPLAY_HW_CDMA_H_
#define CCREPLAY_HW_CDMA_H_

#include <array>
#include <cstdint>
#include <vector>

#include "base/event_queue.h"
#include "base/units.h"
#include "hw/config.h"
#include "hw/events.h"
#include "hw/packet.h"
#include "trace/program.h"

namespace ccreplay {

class Network;

// An instruction queued on a VC bank, with what the engine needs to pick
// the next one, so that picking reads no instruction: when it was issued,
// whether it pays the startup, and whether it may have to wait (a Send,
// until its clear-to-send: TryStart's `blocked` tells).
struct CdmaQueued {
  uint32_t g = 0;
  uint32_t slot = kNone;  // the caller's, handed to TryStart's `start`
  bool moves_data = false;  // pays the startup (Transfer, Send, Receive)
  bool may_block = false;   // a Send
  TimePs issue;             // when its stream issued it
};

struct CdmaEngine {
  std::array<std::vector<CdmaQueued>, kVcBanksPerCdma> vc_queue;
  // Per bank, its head's index (a trace has fewer than 2^32 instructions).
  std::array<uint32_t, kVcBanksPerCdma> vc_head{};
  uint32_t queued = 0;  // bit vc: vc_queue[vc] holds a queued instruction
  uint32_t chip = 0;
  uint32_t current = kNone;  // op in its data phase
  uint32_t state = kNone;    // its engine-state slot (Packet::state)
  uint32_t last_op = kNone;  // the instruction it started last
  TimePs kick_at = TimePs::Max();
  std::vector<TimePs> started;  // data-phase start times (bounded pipelines)
  // The data phase of `current`.
  TimePs base_time;
  uint64_t base_bytes = 0;
  uint64_t emitted = 0;           // payload bytes read so far
  uint32_t blocked_port = kNone;  // holding a read packet for this port
  uint32_t peer = 0;
  FlowPath flow;  // its packets' (Network::FlowOf): their route's first link
  uint64_t dst_addr = 0;
  uint64_t bytes = 0;

  bool HasQueued() const { return queued != 0; }
};

class CdmaUnit {
 public:
  // REQUIRES: hw outlives the unit; Connect() before any data phase.
  CdmaUnit(const HwConfig& hw, uint32_t num_chips, EventQueue& q);
  void Connect(Network* net) { net_ = net; }

  uint32_t Index(uint32_t chip, uint32_t qp) const {
    return chip * hw_.cdma_engines + CdmaOfQp(qp);
  }
  CdmaEngine& engine(uint32_t e) { return engines_[e]; }
  const std::vector<CdmaEngine>& engines() const { return engines_; }

  // Queues `op` on the FIFO of VC bank VcOfQp(qp).
  void Enqueue(uint32_t e, uint32_t qp, const CdmaQueued& op) {
    CdmaEngine& eng = engines_[e];
    const uint32_t vc = VcOfQp(qp);
    eng.vc_queue[vc].push_back(op);
    eng.queued |= 1u << vc;
  }

  // While engine `e` has no data phase, starts the queue head that can start
  // first (its issue time, plus the startup for data movers, which overlaps
  // earlier data phases up to cdma_max_outstanding instructions ahead); a
  // head that is not ready yet schedules a kCdmaKick. `blocked(g)` says
  // whether a head that may block (CdmaQueued::may_block) may not start
  // yet; `start(g, slot, ready)` starts it (`slot`: CdmaQueued::slot; it
  // may begin a data phase with BeginData).
  template <typename Blocked, typename Start>
  void TryStart(uint32_t e, TimePs now, Blocked&& blocked, Start&& start);

  // kCdmaKick for engine `e`: the caller then calls TryStart.
  void OnKick(uint32_t e, TimePs now) {
    if (engines_[e].kick_at == now) engines_[e].kick_at = TimePs::Max();
  }
  // Records that `e` starts `g` now; returns the instruction it started
  // before (kNone if none).
  uint32_t NoteStart(uint32_t e, uint32_t g, bool moves_data, TimePs now);
  // Begins the data phase of `g`: `bytes` to chip `peer` (local when it is
  // the engine's own chip) at `dst_addr`, travelling as `qp`; its packets
  // carry `state` (Packet::state).
  void BeginData(uint32_t e, uint32_t g, uint32_t peer, uint32_t qp,
                 uint64_t dst_addr, uint64_t bytes, TimePs now,
                 uint32_t state = kNone);
  // kCdmaEmit: the next packet has been read. Returns true when the data
  // phase has ended (the caller calls EndData).
  bool OnEmit(uint32_t e, TimePs now);
  // Ends the data phase; returns its instruction.
  uint32_t EndData(uint32_t e) {
    const uint32_t g = engines_[e].current;
    engines_[e].current = kNone;
    return g;
  }
  // The port took a packet from engine `e`'s input: if the engine was
  // holding one for that port, it hands it over and reads on.
  void PortTookPacket(uint32_t e, uint32_t port, TimePs now);

 private:
  const HwConfig& hw_;
  EventQueue& q_;
  Network* net_ = nullptr;
  std::vector<CdmaEngine> engines_;
};

template <typename Blocked, typename Start>
void CdmaUnit::TryStart(uint32_t e, TimePs now, Blocked&& blocked,
                        Start&& start) {
  CdmaEngine& eng = engines_[e];
  while (eng.current == kNone) {
    uint32_t best = kNone;
    uint32_t best_slot = kNone;
    uint32_t best_vc = 0;
    TimePs best_ready = TimePs::Max();
    // The banks holding instructions, in order.
    for (uint32_t m = eng.queued; m != 0; m &= m - 1) {
      const uint32_t vc = static_cast<uint32_t>(__builtin_ctz(m));
      const CdmaQueued& op = eng.vc_queue[vc][eng.vc_head[vc]];
      TimePs ready = op.issue;
      if (op.moves_data) {
        // The startup (descriptor fetch, first DDR read, NoC, die-to-die)
        // runs while earlier instructions still move data, up to
        // max_outstanding instructions ahead.
        const uint32_t d = hw_.cdma_max_outstanding;
        if (d != 0 && eng.started.size() >= d) {
          ready = Max(ready, eng.started[eng.started.size() - d]);
        }
        ready = ready + hw_.cdma_startup;
        if (op.may_block && blocked(op.g)) continue;
      }
      if (ready < best_ready) {
        best_ready = ready;
        best = op.g;
        best_slot = op.slot;
        best_vc = vc;
      }
    }
    if (best == kNone) return;  // idle, or Sends waiting for clear-to-send
    if (best_ready > now) {
      if (best_ready < eng.kick_at) {
        eng.kick_at = best_ready;
        q_.Push(best_ready, kCdmaKick, e);
      }
      return;
    }
    // A drained queue starts over, so that it holds only what is queued
    // (its capacity is the most ever queued at once), not every instruction
    // the engine has run.
    if (++eng.vc_head[best_vc] == eng.vc_queue[best_vc].size()) {
      eng.vc_queue[best_vc].clear();
      eng.vc_head[best_vc] = 0;
      eng.queued &= ~(1u << best_vc);
    }
    start(best, best_slot, best_ready);
  }
}

}  // namespace ccreplay

#endif  // CCREPLAY_HW_CDMA_H_
