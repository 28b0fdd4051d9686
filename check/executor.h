// The reference executor: the semantics of a trace written once, outside the
// timing engine (replay/), for everything that asks "what does this trace
// do in some order the hardware allows?": the semantic verifier
// (check/semantics.h), the tests that drive random or adversarial
// interleavings (tests/lower_test.cc), and the vocabulary the static checks
// (check/race.h, check/check.cc) share with it.
//
// The model (docs/semantics.md, "The reference executor"):
//  - each stream issues its instructions in order; a MsgWait issues when its
//    counter holds `count` messages (and consumes them), a Fence when every
//    data item its stream posted has landed;
//  - a Transfer, a MsgSend or a RemoteMsgSend posts an item into the FIFO
//    channel (source chip, qp, destination chip); a Send and its matching
//    Receive (k-th Send A->B with k-th Receive on B from A) post one item on
//    the Send's qp once both have issued;
//  - a data item reads its source when posted and writes its destination
//    when delivered (REDUCE_SUM adds); a message item increments its counter
//    when delivered;
//  - a schedule picks, at each step, one enabled action: issue a runnable
//    stream's next instruction, or deliver the head item of a channel.
// Data is symbolic: memory holds "the sum of count_q copies of chip q's
// input from offset o" as intervals (SymbolicMemory), so results can be
// compared with what a collective defines.
#ifndef CCREPLAY_CHECK_EXECUTOR_H_
#define CCREPLAY_CHECK_EXECUTOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/trace.pb.h"
#include "trace/program.h"

namespace ccreplay {

// ---- Vocabulary shared with the static checks. ----

// The chip whose counter a message instruction increments: its own chip for
// MsgSend, the peer for RemoteMsgSend. REQUIRES: `in` is one of them.
inline uint32_t MessageDest(uint32_t chip, const Instr& in) {
  return in.kind == OpKind::kMsgSend ? chip : in.peer;
}

// True for the instructions that post a message item.
constexpr bool IsMessage(OpKind k) {
  return k == OpKind::kMsgSend || k == OpKind::kRemoteMsgSend;
}

// A FIFO channel of the executor: items posted by `src_chip` on `qp` for
// `dst_chip` are delivered in posting order (the hardware's only ordering
// promise: a message arrives after the data queued before it on its qp).
struct ChannelKey {
  uint32_t src_chip = 0;
  uint32_t qp = 0;
  uint32_t dst_chip = 0;
  friend bool operator<(const ChannelKey& a, const ChannelKey& b) {
    return std::tie(a.src_chip, a.qp, a.dst_chip) <
           std::tie(b.src_chip, b.qp, b.dst_chip);
  }
  friend bool operator==(const ChannelKey& a, const ChannelKey& b) {
    return !(a < b) && !(b < a);
  }
  friend bool operator!=(const ChannelKey& a, const ChannelKey& b) {
    return !(a == b);
  }
};

// ---- Symbolic data. ----

// Contributions of a value: (chip, count) sorted by chip, counts >= 1.
using Contrib = std::vector<std::pair<uint32_t, uint32_t>>;

// What a range of memory holds. kData: at byte x of a range starting at s,
// the sum over (q, c) in contrib of c copies of chip q's input byte
// off + (x - s). kGarbage: never written (or derived from such bytes).
// kMixed: a sum of data at different input offsets.
struct Value {
  enum Kind : uint8_t { kGarbage, kData, kMixed };
  Kind kind = kGarbage;
  uint64_t off = 0;
  std::shared_ptr<const Contrib> contrib;

  Value Shifted(uint64_t d) const {
    Value v = *this;
    if (kind == kData) v.off += d;
    return v;
  }
};

// a at position p equals b at position p (both already shifted there).
bool Equal(const Value& a, const Value& b);
// "chip 3's input from offset 0", "the sum of the inputs of chips {0-3}...".
std::string Describe(const Value& v);

struct Seg {
  uint64_t len = 0;
  Value v;
};

// One chip's memory as intervals [start, end) -> value at start.
class SymbolicMemory {
 public:
  // The values of [lo, lo + len), as consecutive segments.
  std::vector<Seg> Read(uint64_t lo, uint64_t len) const;
  // Writes (or, with `reduce`, adds) `segs` at lo.
  void Write(uint64_t lo, const std::vector<Seg>& segs, bool reduce);
  // [lo, lo + len) holds chip `chip`'s input from offset 0.
  void Init(uint64_t lo, uint64_t len, uint32_t chip);

 private:
  void Split(uint64_t x);
  void Coalesce(uint64_t lo, uint64_t hi);

  std::map<uint64_t, std::pair<uint64_t, Value>> m_;
};

// ---- The executor. ----

// An enabled action. kIssue: stream `stream` (index into the executor's
// streams, chips in trace order, streams in chip order) issues its next
// instruction. kDeliver: the head item of channel `channel` (index in
// creation order, key `key`) is delivered; `item` is its posting number.
struct ExecAction {
  enum Kind : uint8_t { kIssue, kDeliver };
  Kind kind = kIssue;
  size_t stream = 0;
  size_t channel = 0;
  ChannelKey key;
  uint64_t item = 0;
};

// Picks the index of the action to take. The actions come as: runnable
// streams in stream order, then channel heads from the oldest item on.
using Schedule = std::function<size_t(const std::vector<ExecAction>&)>;

// Every stream runs until it blocks before anything is delivered; then the
// oldest deliverable item goes. Keeps items in flight as long as any valid
// schedule can, so read-after-write and write-after-read hazards show up.
Schedule LazySchedule();
// A uniformly random enabled action each step, drawn from `seed`.
Schedule RandomSchedule(uint64_t seed);

struct ExecOptions {
  // true: one channel per (source chip, qp, destination chip), what the
  // hardware promises. false: one per (source chip, destination chip): all a
  // chip sends another arrives in issue order (a stronger network, for
  // tests that separate ordering bugs from protocol bugs).
  bool per_qp = true;
};

class ReferenceExecutor {
 public:
  // Memory starts with each header.collective buffer's input on its chip.
  // REQUIRES: `trace` passed ValidateAndDecode() and outlives this.
  ReferenceExecutor(const v1::Trace& trace, const ExecOptions& options);

  // Runs to the end under `schedule`. FailedPrecondition for a data hazard
  // ("semantics: <place> reads [a, b) of chip C while a write into ... is in
  // flight", "... writes ... while <place> still reads ...", two in-flight
  // writes that are not both reductions), a deadlock (listing the stuck
  // instructions) or messages never waited for; InvalidArgument for a
  // Send/Receive size mismatch.
  absl::Status Run(const Schedule& schedule);

  // After Run(): what chip `chip` holds in [lo, lo + len).
  std::vector<Seg> Read(uint32_t chip, uint64_t lo, uint64_t len) const {
    return mem_[chip].Read(lo, len);
  }

 private:
  struct Item {
    bool data = false;
    uint32_t src_chip = 0, dst_chip = 0;
    uint32_t counter = 0;  // messages
    uint64_t src = 0, dst = 0, bytes = 0;
    bool reduce = false;
    std::vector<Seg> snapshot;
    int64_t src_stream = -1;  // issuing stream (Fence)
    int64_t dst_stream = -1;  // Receive's stream
    std::string place;
  };
  struct StreamState {
    uint32_t chip = 0;
    const v1::Stream* stream = nullptr;
    int pc = 0;
    uint64_t outstanding = 0;  // data items posted and not delivered
  };

  std::string Place(const StreamState& s, int pc) const;
  bool Runnable(const StreamState& s) const;
  std::vector<ExecAction> Actions() const;
  absl::Status Issue(size_t si);
  absl::Status IssueTwoSided(size_t si, const v1::Instruction& in);
  absl::Status Deliver(size_t channel);
  absl::Status Post(uint32_t src, uint32_t qp, uint32_t dst, Item item);
  absl::Status CheckPostHazards(uint32_t src, uint32_t dst,
                                const Item& item) const;
  absl::Status CheckEnd() const;

  const v1::Trace& trace_;
  ExecOptions options_;
  uint32_t n_ = 0;
  std::vector<SymbolicMemory> mem_;
  std::vector<std::map<uint32_t, uint64_t>> counters_;
  std::vector<StreamState> streams_;
  std::vector<Item> items_;
  // In-flight data items per chip: writes into it, reads from it.
  std::vector<std::vector<uint64_t>> writes_in_, reads_out_;
  std::map<ChannelKey, size_t> channel_index_;
  std::vector<ChannelKey> channel_keys_;
  std::vector<std::deque<uint64_t>> channels_;
  std::set<std::pair<uint64_t, size_t>> heads_;  // (item id, channel)
  // Send/Receive matching per (src, dst): (stream, pc) not yet paired.
  std::map<std::pair<uint32_t, uint32_t>, std::deque<std::pair<size_t, int>>>
      sends_, receives_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_CHECK_EXECUTOR_H_
