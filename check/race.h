// Static happens-before analysis of a decoded trace: which instructions are
// ordered in every execution the trace allows, which pairs of GMEM accesses
// are not (races), and which MsgWaits can never be released (cycles of waits).
//
// The model (docs/conformance.md, "Happens-before"):
//  - A data-moving instruction (Transfer, Send, Receive) accesses GMEM at some
//    time between its issue and its completion. A Transfer reads
//    [src_addr, +bytes) on its chip and writes [dst_addr, +bytes) on dst_chip
//    (REDUCE_SUM reads and writes it); a Send reads its source; a Receive's
//    buffer is written.
//  - Its completion becomes known to a stream by a later Fence of its own
//    stream, or through a message: a RemoteMsgSend (MsgSend) on the same qp,
//    later in the same stream and addressed to the same chip as the data (the
//    own chip for MsgSend), is delivered after that data has landed. Data on
//    the same qp to another chip, and Receives, are not covered by a message.
//  - Messages into one counter are grouped into FIFO channels (same sender
//    stream, qp, destination chip and counter: delivered in issue order; a
//    refinement of the ChannelKey of the reference executor,
//    check/executor.h, whose MessageDest() names the counter's chip). A
//    MsgWait whose stream has consumed D messages of its counter (its own and
//    its stream's earlier waits on the counter) has seen at least D
//    deliveries. The k-th message of channel C is certainly among them when
//    k + (messages of all other channels) <= D, whatever the schedule; only
//    such messages order their sender before the wait. This is sound (never
//    claims an order that some schedule breaks) but incomplete.
//    A message whose sender issues it only after the wait (known from a
//    previous pass) cannot be one of them; the analysis repeats until that
//    knowledge stops growing (at most RaceOptions::max_rounds passes).
//  - Knowledge is a vector clock over completion channels (stream, qp,
//    destination chip): entry = how many of that stream's data-moving
//    instructions on that qp to that chip are known complete (a prefix); and
//    over streams: how many instructions of the
//    stream are known issued.
// Complexity: O(instructions + waits x feeding channels x channels) time and
// O(snapshots x channels) memory, both bounded by RaceOptions; past a bound
// the analysis stops and says so (HbResult::complete = false).
#ifndef CCREPLAY_CHECK_RACE_H_
#define CCREPLAY_CHECK_RACE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trace/program.h"

namespace ccreplay {

// An instruction of a Program: chip id, index of the stream in the chip's
// streams (not its id), index of the instruction in the stream.
struct InstrRef {
  uint32_t chip = 0;
  uint32_t stream = 0;
  uint32_t instr = 0;
  friend bool operator==(const InstrRef& a, const InstrRef& b) {
    return a.chip == b.chip && a.stream == b.stream && a.instr == b.instr;
  }
  friend bool operator<(const InstrRef& a, const InstrRef& b) {
    if (a.chip != b.chip) return a.chip < b.chip;
    if (a.stream != b.stream) return a.stream < b.stream;
    return a.instr < b.instr;
  }
};

struct RaceOptions {
  // Largest number of vector-clock entries kept (4 bytes each).
  uint64_t max_clock_entries = uint64_t{1} << 26;
  // Largest number of pairs of overlapping accesses compared.
  uint64_t max_pairs = uint64_t{1} << 26;
  // Races reported at most (further ones are counted, not listed).
  uint64_t max_races = 1000;
  // Passes of the analysis at most (each refines the previous one).
  int max_rounds = 8;
};

// Two unordered accesses to overlapping GMEM of one chip, at least one a
// write. `first` < `second` in (chip, stream, instr) order.
struct MemoryRace {
  uint32_t chip = 0;   // whose GMEM
  uint64_t begin = 0;  // the overlap [begin, end), bytes
  uint64_t end = 0;
  InstrRef first;
  InstrRef second;
  bool first_writes = false;
  bool second_writes = false;
  bool both_reduce = false;  // two REDUCE_SUM writes: order changes rounding
};

// A cycle of waits: links[i].wait needs links[i].message, which its stream
// issues only after links[i + 1].wait (cyclically).
struct WaitCycle {
  struct Link {
    InstrRef wait;
    InstrRef message;
  };
  std::vector<Link> links;
  uint32_t blocked_behind = 0;  // other streams blocked by this cycle
};

struct HbResult {
  bool complete = true;  // false: stopped at a bound (see note)
  std::string note;      // why the analysis is partial, if it is
  std::vector<MemoryRace> races;
  uint64_t races_found = 0;  // >= races.size()
  std::vector<WaitCycle> cycles;
  // MsgWaits that fewer messages reach than their stream consumes.
  std::vector<InstrRef> unsatisfiable;
};

// The happens-before relation of a program, built once.
class HappensBefore {
 public:
  // REQUIRES: `program` comes from ValidateAndDecode() and outlives this.
  HappensBefore(const Program& program, const RaceOptions& options);
  ~HappensBefore();
  HappensBefore(const HappensBefore&) = delete;
  HappensBefore& operator=(const HappensBefore&) = delete;

  // False if a bound of RaceOptions stopped the analysis (then Ordered() may
  // answer false for ordered pairs, never true for unordered ones).
  bool complete() const { return complete_; }
  const std::string& note() const { return note_; }

  // True if the analysis reached `r` (false behind a cycle of waits or an
  // unsatisfiable wait: it never issues).
  bool Reached(InstrRef r) const;

  // True if, in every execution, every GMEM access of `a` (a data-moving
  // instruction) is complete before `b` issues.
  bool Ordered(InstrRef a, InstrRef b) const;

  // Races among the accesses of all reached instructions, the wait cycles
  // and unsatisfiable waits.
  HbResult Analyze() const;

 private:
  struct Witness {
    uint32_t channel = UINT32_MAX;  // completion channel; MAX = none
    uint32_t ordinal = 0;           // 1-based position in the channel
  };
  struct BlockedOn {
    uint32_t stream = UINT32_MAX;  // global stream whose progress is needed
    uint32_t instr = 0;            // the message instruction needed
  };

  void Run();
  // Builds the channels; false if the program is too large to index.
  bool Build();
  // Fills the stream tables; returns the number of instructions.
  uint64_t FlattenStreams();
  void IndexStream(uint32_t g);
  void IndexData(uint32_t g, uint32_t gi, const Instr& in);
  void PairTwoSided();
  // One pass of the analysis with the current exclusions; false if a bound
  // stopped it.
  bool Round();
  void RunStream(struct HbRound* r, uint32_t g);
  bool TryWait(struct HbRound* r, uint32_t g, uint32_t gi);
  void JoinMessage(struct HbRound* r, uint32_t g, uint32_t m);
  bool TakeSnapshot(struct HbRound* r, uint32_t g);
  Witness Carried(const struct HbRound& r, uint32_t g, uint32_t gi,
                  const Instr& in) const;
  // Analyze()'s parts.
  InstrRef RefOf(uint32_t g, uint32_t i) const;
  void FindWaitProblems(HbResult* r) const;
  void CollectAccesses(std::vector<struct HbAccess>* acc) const;
  void FindRaces(HbResult* r) const;
  MemoryRace MakeRace(const struct HbAccess& first,
                      const struct HbAccess& second) const;
  // Ordered() on global instruction indices.
  bool OrderedGlobal(uint32_t ga, uint32_t gb) const;
  // From the last round's clocks: how many messages of each FIFO feeding a
  // wait's counter are certainly issued only after the wait (and so cannot
  // count towards it). True if that changed anything.
  bool Refine();
  uint32_t Global(InstrRef r) const;
  // The snapshot in force at instruction `global`; UINT32_MAX = all zero.
  uint32_t Snapshot(uint32_t global) const { return snap_of_[global]; }
  bool KnowsComplete(uint32_t snap, Witness w) const;
  // Witnesses whose completion implies `global`'s accesses are complete.
  void WitnessesOf(uint32_t global, Witness out[2]) const;

  const Program& program_;
  RaceOptions options_;
  bool complete_ = true;
  std::string note_;

  // Streams, flattened: global stream g = stream_base_[chip] + index.
  std::vector<uint32_t> stream_base_;
  std::vector<uint32_t> stream_chip_;
  std::vector<uint32_t> stream_index_;
  std::vector<uint32_t> instr_base_;  // global instruction = base[g] + i
  uint32_t num_channels_ = 0;
  uint64_t clock_size_ = 0;  // completion channels + streams

  std::vector<Witness> own_;         // per global instruction (data only)
  std::vector<uint32_t> partner_;    // Send <-> Receive, UINT32_MAX = none
  std::vector<uint32_t> snap_of_;    // per global instruction
  std::vector<uint32_t> snapshots_;  // num_channels_ entries each
  std::vector<uint32_t> cursor_;     // per global stream: first not issued
  std::vector<BlockedOn> blocked_;   // per global stream
  std::vector<bool> unsatisfiable_;  // per global stream: blocked for good
  std::unique_ptr<struct HbBuild> build_;
  int rounds_ = 0;
};

// HappensBefore(program, options).Analyze().
HbResult AnalyzeHappensBefore(const Program& program,
                              const RaceOptions& options = {});

}  // namespace ccreplay

#endif  // CCREPLAY_CHECK_RACE_H_
