// The decoded form of a trace: plain per-chip vectors of value structs, built
// once by DecodeTrace() after validation. The engine sees only this, never
// protobuf objects.
#ifndef CCREPLAY_TRACE_PROGRAM_H_
#define CCREPLAY_TRACE_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ccreplay {

enum class OpKind : uint8_t {
  kTransfer,
  kSend,
  kReceive,
  kMsgSend,
  kMsgWait,
  kRemoteMsgSend,
  kFence,
};

absl::string_view OpKindName(OpKind k);

// True for the instructions that move data and pay the CDMA startup.
constexpr bool MovesData(OpKind k) {
  return k == OpKind::kTransfer || k == OpKind::kSend || k == OpKind::kReceive;
}

// True for the instructions that execute on a CDMA queue (in qp order).
constexpr bool UsesQp(OpKind k) {
  return k != OpKind::kMsgWait && k != OpKind::kFence;
}

// Largest number of chips any part of ccreplay accepts (trace header,
// topology, lowering): 2^16. A documented limit of this replayer, not of the
// schema; per-chip tables stay small enough to allocate up front.
inline constexpr uint32_t kMaxChips = 1u << 16;

// qp_id = (cdma_id << 2) | vc_bank: 4 VC banks per CDMA engine
// (docs/spec-notes.md, "Queue pairs").
inline constexpr uint32_t kVcBanksPerCdma = 4;
constexpr uint32_t CdmaOfQp(uint32_t qp_id) { return qp_id >> 2; }
constexpr uint32_t VcOfQp(uint32_t qp_id) { return qp_id & 3u; }
constexpr uint32_t MakeQp(uint32_t cdma, uint32_t vc) {
  return (cdma << 2) | vc;
}

// What a trace is validated and decoded against: the machine's shape as far
// as the trace format cares. HwConfig::Target() (hw/config.h) gives it.
struct TraceTarget {
  std::string name;           // the hardware's name, for messages
  uint32_t num_chips = 0;     // 0 = as many as the trace has
  uint32_t cdma_engines = 0;  // per chip
  // Message counters are qp ids: one per (engine, VC bank).
  uint32_t num_qps() const { return cdma_engines * kVcBanksPerCdma; }
};

// One instruction: a 32-byte value (docs/architecture.md, "Memory per
// instruction"; a program stores it packed in 24, InstrList below). Each
// kind uses only its own fields, and the fields no kind
// uses together share storage: dst_qp (the message kinds) with src_addr
// (Transfer, Send), count (MsgWait) with dst_addr (Transfer, Receive). So
// read a field only for a kind that uses it; the others (qp_id, peer, bytes,
// reduce_sum) are zero when unused. No range is lost: qp ids are below 2^18
// (2^16 engines x 4 VC banks), chip ids below kMaxChips = 2^16, and
// addresses and sizes keep their 64 bits. The fields keep the order they
// had as plain members, so designated initializers still name them in order.
struct Instr {
  OpKind kind = OpKind::kFence;
  bool reduce_sum = false;  // Transfer: destination += source
  uint64_t qp_id : 24 = 0;  // all but MsgWait's counter and Fence
  uint64_t peer : 24 = 0;   // Transfer/Send/RemoteMsgSend: destination
                            // chip; Receive: source chip
  union {
    uint32_t dst_qp;        // MsgSend/RemoteMsgSend: counter to increment;
                            // MsgWait: counter to wait on
    uint64_t src_addr = 0;  // Transfer/Send
  };
  union {
    uint32_t count;         // MsgWait: messages to consume
    uint64_t dst_addr = 0;  // Transfer/Receive
  };
  uint64_t bytes = 0;  // Transfer/Send/Receive
};
static_assert(sizeof(Instr) <= 32, "a decoded instruction is 32 bytes");

// One instruction of each kind, every field where Instr keeps it: the one
// mapping of the schema's fields onto Instr (DecodeInstr in trace/decode.h
// and the wire-format reader of trace/wire_chip.h build with these). A
// MsgWait's counter is both its qp_id and its dst_qp.
inline Instr TransferInstr(uint32_t qp, uint32_t dst_chip, uint64_t src_addr,
                           uint64_t dst_addr, uint64_t bytes, bool reduce_sum) {
  Instr in;
  in.kind = OpKind::kTransfer;
  in.reduce_sum = reduce_sum;
  in.qp_id = qp;
  in.peer = dst_chip;
  in.src_addr = src_addr;
  in.dst_addr = dst_addr;
  in.bytes = bytes;
  return in;
}
inline Instr SendInstr(uint32_t qp, uint32_t dst_chip, uint64_t src_addr,
                       uint64_t bytes) {
  Instr in;
  in.kind = OpKind::kSend;
  in.qp_id = qp;
  in.peer = dst_chip;
  in.src_addr = src_addr;
  in.bytes = bytes;
  return in;
}
inline Instr ReceiveInstr(uint32_t qp, uint32_t src_chip, uint64_t dst_addr,
                          uint64_t bytes) {
  Instr in;
  in.kind = OpKind::kReceive;
  in.qp_id = qp;
  in.peer = src_chip;
  in.dst_addr = dst_addr;
  in.bytes = bytes;
  return in;
}
inline Instr MsgSendInstr(uint32_t qp, uint32_t dst_qp) {
  Instr in;
  in.kind = OpKind::kMsgSend;
  in.qp_id = qp;
  in.dst_qp = dst_qp;
  return in;
}
inline Instr FenceInstr() {
  Instr in;
  in.kind = OpKind::kFence;
  return in;
}
inline Instr MsgWaitInstr(uint32_t counter, uint32_t count) {
  Instr in;
  in.kind = OpKind::kMsgWait;
  in.qp_id = counter;
  in.dst_qp = counter;
  in.count = count;
  return in;
}
inline Instr RemoteMsgSendInstr(uint32_t qp, uint32_t dst_chip,
                                uint32_t dst_qp) {
  Instr in;
  in.kind = OpKind::kRemoteMsgSend;
  in.qp_id = qp;
  in.peer = dst_chip;
  in.dst_qp = dst_qp;
  return in;
}

// Equal field by field (an Instr's padding is not part of its value; the
// fields that share storage compare through their 64-bit members).
inline bool SameInstr(const Instr& a, const Instr& b) {
  return a.kind == b.kind && a.reduce_sum == b.reduce_sum &&
         a.qp_id == b.qp_id && a.peer == b.peer && a.src_addr == b.src_addr &&
         a.dst_addr == b.dst_addr && a.bytes == b.bytes;
}

struct Program;
struct InterleavedLayout;

// A stream's instructions, stored packed in 24 bytes each and read back as
// Instr values (by value: there is no Instr object in the list to refer
// to). An instruction whose fields need more than the packed widths (an
// address or counter id of 2^56 or more, a size of 2^41 bytes or more, a
// qp id of 2^18 or more, a peer of 2^16 or more: far beyond any chip, but
// the schema allows them) is kept whole beside the packed ones, so no value
// is lost. Packed, the first word holds kind (3 bits), reduce_sum (1), the
// escape flag (1), qp_id (18), peer (16) and the low 25 bits of bytes; the
// second and third hold src_addr and dst_addr (56 bits each: a message's
// dst_qp and a MsgWait's count share them, as in Instr) and the next 8 bits
// of bytes each.
//
// A list holds its packed words itself, in order, or is placed in a
// program's interleaved layout (InterleaveStreams below), which stores the
// instructions of all streams round by round: kRound of each stream, then
// the next kRound of each, so the streams of a collective, which step
// together, read neighbouring memory (docs/architecture.md, "Program
// layout"). Either way the list reads and behaves the same; changing a
// placed list first gives it its own copy.
class InstrList {
 public:
  struct Packed {
    uint64_t w[3];
  };
  // Instructions per stream and round in the interleaved layout.
  static constexpr size_t kRound = 32;
  // Streams per group of the interleaved layout: each group's rounds lie
  // together, the groups one after the other (InterleaveStreams).
  static constexpr size_t kGroup = 64;
  // Where instruction i's packed words are, for a reader that keeps this
  // (valid while the list is unchanged) instead of reading the list first:
  // in order from `words` (rounds == nullptr), or placed, at
  // words + rounds[i / kRound] + slot + i % kRound.
  struct Layout {
    const Packed* words = nullptr;
    const uint64_t* rounds = nullptr;
    uint64_t slot = 0;
    const Packed* At(size_t i) const {
      return rounds == nullptr ? words + i
                               : words + rounds[i / kRound] + slot + i % kRound;
    }
  };

  InstrList() = default;
  InstrList(std::initializer_list<Instr> list);
  InstrList(const std::vector<Instr>& list);  // NOLINT: implicit, as a vector

  size_t size() const { return placed_ ? placed_size_ : packed_.size(); }
  bool empty() const { return size() == 0; }
  void reserve(size_t n) {
    Own();
    packed_.reserve(n);
  }
  // Bytes allocated (packed and whole ones), for the memory counters; a
  // placed list counts its share of the layout (whole rounds).
  size_t allocated_bytes() const {
    const size_t packed = placed_
                              ? (placed_size_ + kRound - 1) / kRound * kRound
                              : packed_.capacity();
    return packed * sizeof(Packed) + whole_.capacity() * sizeof(Instr);
  }
  void push_back(const Instr& in) {
    Own();
    shape_.Note(in.kind, packed_.size());
    packed_.push_back(Pack(in));
  }
  // Replaces instruction i.
  void set(size_t i, const Instr& in) {
    Own();
    packed_[i] = Pack(in);
    shape_stale_ = true;
  }
  // What the replay asks of a whole stream before it runs, from the kinds
  // in order: one past its last Fence (0: it has none), and its longest
  // run of instructions on a queue (UsesQp) with no wait between them.
  // Kept as instructions are appended, so that no pass over a large
  // program is needed for it; worked out by one after a set().
  struct Shape {
    uint32_t fence_end = 0;
    uint32_t longest_queue_run = 0;
    uint32_t queue_run = 0;  // the run the list ends with
    // Instruction `i` (the next after those seen) is of kind `k`.
    void Note(OpKind k, size_t i) {
      if (k == OpKind::kFence) fence_end = static_cast<uint32_t>(i + 1);
      if (!UsesQp(k)) {
        queue_run = 0;
      } else if (++queue_run > longest_queue_run) {
        longest_queue_run = queue_run;
      }
    }
  };
  Shape shape() const;
  Layout layout() const {
    return placed_ ? placed_->Of(group_, slot_)
                   : Layout{packed_.data(), nullptr, 0};
  }
  Instr operator[](size_t i) const { return Read(*layout().At(i)); }
  // The instruction whose packed words `p` are (layout().At(i)).
  Instr Read(const Packed& p) const {
    if (p.w[0] & kEscaped) return whole_[p.w[1]];
    Instr in;
    in.kind = static_cast<OpKind>(p.w[0] & 7u);
    in.reduce_sum = ((p.w[0] >> 3) & 1u) != 0;
    in.qp_id = (p.w[0] >> 5) & kQpMask;
    in.peer = (p.w[0] >> 23) & kPeerMask;
    in.src_addr = p.w[1] & kAddrMask;
    in.dst_addr = p.w[2] & kAddrMask;
    in.bytes = (p.w[0] >> 39) | ((p.w[1] >> 56) << 25) | ((p.w[2] >> 56) << 33);
    return in;
  }
  // What of an instruction packed whole in its words (not Escaped) a
  // replay's cost depends on, its kind, peer and size, read from the words
  // as one value: two such instructions have the same key exactly when
  // they have the same kind, peer and size (hw/budget.cc compares them so).
  struct CostKey {
    uint64_t lo = 0;
    uint64_t hi = 0;
    bool operator==(const CostKey&) const = default;
  };
  static bool Escaped(const Packed& p) { return (p.w[0] & kEscaped) != 0; }
  // REQUIRES: !Escaped(p).
  static CostKey CostKeyOf(const Packed& p) {
    return CostKey{p.w[0] & (7u | (kPeerMask << 23) | (~uint64_t{0} << 39)),
                   (p.w[1] >> 56) | ((p.w[2] >> 56) << 8)};
  }
  // operator[](i).kind, read alone, and Read(p).kind.
  OpKind kind(size_t i) const { return Kind(*layout().At(i)); }
  OpKind Kind(const Packed& p) const {
    return (p.w[0] & kEscaped) != 0 ? whole_[p.w[1]].kind
                                    : static_cast<OpKind>(p.w[0] & 7u);
  }
  // operator[] with a bounds check (std::out_of_range).
  Instr at(size_t i) const;
  Instr back() const { return (*this)[size() - 1]; }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Instr;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Instr;
    const_iterator(const InstrList* list, size_t i) : list_(list), i_(i) {}
    Instr operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const InstrList* list_;
    size_t i_;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  friend void InterleaveStreams(Program& program);
  friend class InterleavePlan;
  // The interleaved words of a program's streams, shared by its lists.
  struct Placed {
    std::unique_ptr<Packed[]> words;
    // Per group, per round: the round's first word.
    std::vector<std::vector<uint64_t>> rounds;
    Layout Of(uint32_t group, uint64_t slot) const {
      return Layout{words.get(), rounds[group].data(), slot};
    }
    // A layout's words, not zeroed (they become resident as they are first
    // written), advised to huge pages, with `l`'s round tables (taken).
    static std::shared_ptr<Placed> For(InterleavedLayout& l);
  };
  static constexpr uint64_t kEscaped = uint64_t{1} << 4;
  static constexpr uint64_t kQpMask = (uint64_t{1} << 18) - 1;
  static constexpr uint64_t kPeerMask = (uint64_t{1} << 16) - 1;
  static constexpr uint64_t kAddrMask = (uint64_t{1} << 56) - 1;
  static constexpr uint64_t kBytesLimit = uint64_t{1} << 41;
  Packed Pack(const Instr& in) {
    if (static_cast<uint64_t>(in.kind) > 7 || in.qp_id > kQpMask ||
        in.peer > kPeerMask || in.src_addr > kAddrMask ||
        in.dst_addr > kAddrMask || in.bytes >= kBytesLimit) {
      return PackWhole(in);
    }
    Packed p;
    p.w[0] = static_cast<uint64_t>(in.kind) | (uint64_t{in.reduce_sum} << 3) |
             (static_cast<uint64_t>(in.qp_id) << 5) |
             (static_cast<uint64_t>(in.peer) << 23) |
             ((in.bytes & ((uint64_t{1} << 25) - 1)) << 39);
    p.w[1] = in.src_addr | (((in.bytes >> 25) & 0xffu) << 56);
    p.w[2] = in.dst_addr | ((in.bytes >> 33) << 56);
    return p;
  }
  // An instruction too wide to pack: kept whole, found by its index.
  Packed PackWhole(const Instr& in);
  // A placed list takes its own copy of its words (before a change).
  void Own();

  std::vector<Packed> packed_;  // its own words, in order (if not placed)
  std::vector<Instr> whole_;    // the instructions too wide to pack
  std::shared_ptr<const Placed> placed_;  // or the layout it is placed in,
  uint32_t group_ = 0;                    // its group there,
  uint64_t slot_ = 0;                     // its first word in each round,
  size_t placed_size_ = 0;                // and its length
  Shape shape_;               // of the instructions appended
  bool shape_stale_ = false;  // set() changed one since
};

struct StreamProgram {
  uint32_t id = 0;  // the trace's stream id, for messages
  InstrList instrs;
};

struct ChipProgram {
  std::vector<StreamProgram> streams;
};

struct Program {
  uint32_t num_chips = 0;
  std::vector<ChipProgram> chips;  // size num_chips; absent chips are empty
};

// Moves every stream's packed words into one interleaved layout (InstrList)
// and frees the lists' own arrays as it goes, so the program is not held
// twice. Streams are ordered by length, longest first (ties in program
// order), so the streams that still have instructions in a round are a
// prefix of that order and a stream's place in every round is its rank;
// each round holds kRound words per such stream (a stream's last, partial
// round too). Every instruction reads back unchanged. A program whose
// streams are so short that those partial rounds would add more than an
// eighth to its size (many streams of a few instructions) is left as it is.
void InterleaveStreams(Program& program);

// Where InterleaveStreams puts streams of these lengths (in program order:
// chip by chip, each chip's streams in order): each stream's group and slot
// (its first word in each of the group's rounds), each group's rounds' first
// words, and the words in all. Nothing where it would leave the program as
// it is.
struct InterleavedLayout {
  std::vector<uint32_t> groups;               // per stream, in program order
  std::vector<uint64_t> slots;                // per stream, in program order
  std::vector<std::vector<uint64_t>> rounds;  // per group, per round
  size_t words = 0;
};
std::optional<InterleavedLayout> PlanInterleave(
    const std::vector<size_t>& lengths);

// InterleaveStreams' layout made from the streams' lengths before their
// instructions are decoded, so that a decoder writes each instruction where
// InterleaveStreams would have moved it (trace/decode.cc, for a binary trace
// whose chips are counted first): the program is written once, into memory
// touched once, instead of into a list per stream and then again into the
// layout.
class InterleavePlan {
 public:
  // `lengths[c]`: the lengths of chip c's streams, in order. ok() is false
  // where InterleaveStreams would leave such a program as it is.
  explicit InterleavePlan(const std::vector<std::vector<uint32_t>>& lengths);
  bool ok() const { return placed_ != nullptr; }
  // Makes `list` (empty) chip `chip`'s stream `stream`, placed in the
  // layout, with the `n` instructions at `in`. False, and `list` untouched,
  // unless the plan has that stream, of n instructions, not yet filled.
  bool Fill(uint32_t chip, uint32_t stream, const Instr* in, size_t n,
            InstrList* list);
  // Whether every stream of the plan was filled: the program is then laid
  // out as InterleaveStreams would lay it out.
  bool complete() const { return filled_ == lengths_.size(); }

 private:
  std::shared_ptr<InstrList::Placed> placed_;
  std::vector<size_t> chip_first_;  // per chip: its first stream below
  std::vector<uint32_t> groups_;    // per stream, in program order
  std::vector<uint64_t> slots_;     // per stream, in program order
  std::vector<uint32_t> lengths_;
  std::vector<bool> filled_flags_;
  size_t filled_ = 0;
};

// The one formatter for a place, in the words every error, finding and
// report uses: "chip 3", "chip 3, stream 1" or "chip 3, stream 1,
// instruction 12 (Transfer)". `stream_id` is the trace's stream id,
// `instr` the 0-based index in the stream; a negative value leaves that part
// (and the finer ones) out; a negative chip gives "".
std::string PlaceText(int64_t chip, int64_t stream_id = -1, int64_t instr = -1,
                      absl::string_view kind = "");

// PlaceText() of instruction `instr_index` of the `stream_index`-th stream of
// `chip` in `p`.
std::string InstrPlace(const Program& p, uint32_t chip, uint32_t stream_index,
                       uint32_t instr_index);

}  // namespace ccreplay

#endif  // CCREPLAY_TRACE_PROGRAM_H_
