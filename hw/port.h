// The sending side of one directed link (a chip's output port, or a switch
// output port): the link's lane groups (LGs), one FIFO queue per (input,
// virtual channel, LG) so that a packet waiting for a busy LG or for credit
// on its channel never blocks one bound for an idle LG or another channel,
// an arbiter per LG over the channels and inputs, and per channel the
// credits for its receive buffer at the far end. With round-robin
// interleaving a packet takes whichever LG is free next, so each (input,
// channel) has a single queue.
//
// The port's state and its queue operations; the Network (hw/network.h)
// serves it when a lane group becomes free or credit comes back.
#ifndef CCREPLAY_HW_PORT_H_
#define CCREPLAY_HW_PORT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "base/units.h"
#include "hw/packet.h"

namespace ccreplay {

struct LinkStats {
  uint64_t packets = 0;
  uint64_t wire_bytes = 0;  // payload + headers
  uint64_t payload_bytes = 0;
  TimePs busy;              // serialisation time summed over lane groups
  TimePs queued;            // sum over packets of (start - queued at)
  uint32_t peak_depth = 0;  // most packets waiting at once (not yet started)
  TimePs credit_stall;      // time a ready packet waited for credit only
  TimePs first_start = TimePs::Max();
  TimePs last_end;
  std::vector<uint64_t> lg_packets;  // per lane group
  std::vector<TimePs> lg_busy;       // per lane group
  std::vector<TimePs> lg_last_end;   // per lane group
};

// (a + b) mod n without a division. REQUIRES: a + b < 2n.
constexpr uint32_t AddMod(uint32_t a, uint32_t b, uint32_t n) {
  const uint32_t s = a + b;
  return s >= n ? s - n : s;
}

// The lane group ITLV assigns to a packet whose payload goes to `addr`: the
// 256-byte block number through a full-avalanche mixer (MurmurHash3's
// 64-bit finaliser), modulo `lane_groups`. Every address bit moves the
// result, so lane groups behave like independent draws: a few packets
// collide statistically (one LG gets more than its share), many even out.
// `addr` is the global address a packet header carries (GlobalAddress).
constexpr uint32_t InterleaveHash(uint64_t addr, uint32_t lane_groups) {
  uint64_t h = addr >> 8;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return static_cast<uint32_t>(h % lane_groups);
}

// The lane group an XOR interleaver assigns to a packet whose payload goes to
// `addr`: the block number addr / block_bytes, its bit fields of width
// log2(lane_groups) XORed together. Over any aligned run of lane_groups
// consecutive blocks the low field takes every value once while the higher
// fields stay fixed, so the result is a permutation of the lane groups: a
// long run of consecutive blocks spreads exactly evenly, and only scattered
// or short runs collide. REQUIRES: lane_groups a power of two, block_bytes
// > 0.
constexpr uint32_t XorInterleave(uint64_t addr, uint64_t block_bytes,
                                 uint32_t lane_groups) {
  const uint32_t bits = static_cast<uint32_t>(__builtin_ctz(lane_groups));
  if (bits == 0) return 0;
  uint64_t b = addr / block_bytes;
  if ((bits & (bits - 1)) == 0) {
    // Fields of a power-of-two width: fold the word in halves down to it.
    // The folds b ^= b >> s commute (each is 1 + S^s over GF(2), S the
    // shift), so they may run from the field's width up: entered at the
    // width, each case falls through to the wider ones, with one jump in
    // place of a test per fold.
    switch (bits) {
      case 1:
        b ^= b >> 1;
        [[fallthrough]];
      case 2:
        b ^= b >> 2;
        [[fallthrough]];
      case 4:
        b ^= b >> 4;
        [[fallthrough]];
      case 8:
        b ^= b >> 8;
        [[fallthrough]];
      case 16:
        b ^= b >> 16;
        [[fallthrough]];
      default:  // every width ends with the widest fold
        b ^= b >> 32;
    }
    return static_cast<uint32_t>(b & (lane_groups - 1));
  }
  uint64_t lg = 0;
  while (b != 0) {
    lg ^= b & (lane_groups - 1);
    b >>= bits;
  }
  return static_cast<uint32_t>(lg);
}

// A packet's global address: the destination chip in the bits from 48 up,
// above the 48-bit local GMEM address (higher local bits alias; the address
// is only hashed).
constexpr uint64_t GlobalAddress(uint32_t chip, uint64_t addr) {
  return (uint64_t{chip} << 48) ^ addr;
}

// The credits on their way back to a port, by due time: a credit counts
// from the picosecond it is due (docs/hardware-model.md, "credits"), and
// is added when the port next reads its credit.
class CreditsDue {
 public:
  void Add(TimePs due, uint32_t bytes, uint32_t vc) {
    // Nearly in order: a credit is due a fixed flight time after its
    // packet leaves the far buffer, and packets leave about in order. Equal
    // times keep their order (credits add up in any order anyway).
    items_.push_back(Item{due, bytes, vc});
    for (size_t i = items_.size() - 1; i > head_ && items_[i - 1].due > due;
         --i) {
      std::swap(items_[i - 1], items_[i]);
    }
    if (due < next_) next_ = due;
  }
  bool empty() const { return next_ == TimePs::Max(); }
  // The earliest due time (TimePs::Max() if none): read without touching
  // the list.
  TimePs next_due() const { return next_; }
  // take(due, bytes, vc) for each credit due by `now`, in order; they
  // leave.
  template <typename Take>
  void TakeDue(TimePs now, Take take) {
    if (next_ > now || empty()) return;
    do {
      take(items_[head_].due, items_[head_].bytes, items_[head_].vc);
      ++head_;
    } while (head_ < items_.size() && items_[head_].due <= now);
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
      next_ = TimePs::Max();
      return;
    }
    next_ = items_[head_].due;
    if (head_ >= 256 && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(),
                   items_.begin() + static_cast<ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  struct Item {
    TimePs due;
    uint32_t bytes;
    uint32_t vc;
  };
  std::vector<Item> items_;
  size_t head_ = 0;
  TimePs next_ = TimePs::Max();  // items_[head_].due, or none
};

// The credit a port has counted before it is due (Network::SendCredit,
// "counted early"): an upper bound of how many of those bytes are not yet
// due, kept in two generations, each the bytes of some returns and the
// latest due time among them, so that nothing is kept per return.
class EarlyCredit {
 public:
  // An upper bound of the early-counted bytes not yet due at `now`.
  int64_t Pending(TimePs now) {
    if (g0_.until <= now) {
      g0_ = g1_;
      g1_ = Gen{};
      if (g0_.until <= now) g0_ = Gen{};
    }
    return g0_.bytes + g1_.bytes;
  }
  // `bytes` due at `due` are counted early. REQUIRES: Pending(now) was just
  // asked, at the current time.
  void Add(int64_t bytes, TimePs due) {
    if (g0_.bytes == 0) {
      g0_ = Gen{bytes, due};
    } else if (g1_.bytes == 0 && due <= g0_.until) {
      g0_.bytes += bytes;
    } else {
      g1_.bytes += bytes;
      g1_.until = Max(g1_.until, due);
    }
  }

 private:
  struct Gen {
    int64_t bytes = 0;
    TimePs until;
  };
  Gen g0_, g1_;  // g0_ expires first: g1_.until >= g0_.until
};

class Port {
 public:
  // One (input, channel, lane group) queue: a list threaded through the
  // packets (Packet::next), oldest first.
  struct Queue {
    uint32_t head = kNone;
    uint32_t tail = kNone;
    uint32_t size = 0;
  };
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

  Port() = default;
  // `lg_queues` is lane_groups for address interleaving, 1 for round-robin
  // interleaving; `vcs` virtual channels, each with `buffer_bytes` of
  // credit (0 = unbounded) and its own queues.
  Port(uint32_t inputs, uint32_t lane_groups, uint32_t lg_queues, uint32_t vcs,
       uint64_t buffer_bytes)
      : inputs_(inputs),
        lanes_(lane_groups),
        vcs_(vcs),
        lg_queues_(lg_queues),
        lg_mask_(lg_queues == 1 ? 0 : ~uint32_t{0}),
        rows_(lg_queues * vcs),
        words_((inputs + 63) / 64),
        queues_(static_cast<size_t>(inputs) * rows_) {
    AllocateBlock(buffer_bytes == 0 ? kUnbounded
                                    : static_cast<int64_t>(buffer_bytes));
  }

  uint32_t num_inputs() const { return inputs_; }
  uint32_t num_vcs() const { return vcs_; }
  uint32_t lane_groups() const { return lanes_; }
  // The queue row of (virtual channel, lane group): lg is ignored with one
  // queue per input and channel (round-robin interleaving).
  uint32_t Row(uint32_t vc, uint32_t lg) const {
    return vc * lg_queues_ + (lg & lg_mask_);
  }
  // The packets queued at `input` in row `row`: the oldest, and how many.
  uint32_t Head(uint32_t input, uint32_t row) const {
    return queue(input, row).head;
  }
  uint32_t QueueSize(uint32_t input, uint32_t row) const {
    return queue(input, row).size;
  }
  uint32_t waiting() const { return waiting_; }

  // The queues are lists threaded through the packets (Packet::next), so a
  // queue costs 12 bytes and a push or pop allocates nothing.
  void Enqueue(uint32_t input, uint32_t row, uint32_t packet,
               PacketPool& pool) {
    Queue& q = queue(input, row);
    pool[packet].next = kNone;
    if (q.size == 0) {
      q.head = packet;
    } else {
      pool[q.tail].next = packet;
    }
    q.tail = packet;
    ++q.size;
    Word(input, row) |= Bit(input);
    ++lg_waiting_[row_lg_[row]];
    ++waiting_;
    NoteDepth(waiting_);
  }
  // `depth` packets waited at once (LinkStats::peak_depth).
  void NoteDepth(uint32_t depth) {
    if (depth > stats_.peak_depth) stats_.peak_depth = depth;
  }
  uint32_t PopFrom(uint32_t input, uint32_t row, const PacketPool& pool) {
    Queue& q = queue(input, row);
    const uint32_t p = q.head;
    q.head = pool[p].next;
    if (--q.size == 0) Word(input, row) &= ~Bit(input);
    --lg_waiting_[row_lg_[row]];
    --waiting_;
    return p;
  }
  // The first input at or after `from` (cyclically) with a packet queued in
  // `row`, or num_inputs() if there is none. O(inputs / 64).
  uint32_t NextWaiting(uint32_t row, uint32_t from) const {
    const uint64_t* w = &nonempty_[static_cast<size_t>(row) * words_];
    if (words_ == 1) {  // at most 64 inputs: one word, no loop
      const uint64_t at_or_after = w[0] & (~uint64_t{0} << from);
      const uint64_t bits = at_or_after != 0 ? at_or_after : w[0];
      return bits != 0 ? static_cast<uint32_t>(__builtin_ctzll(bits))
                       : inputs_;
    }
    for (uint32_t k = 0; k <= words_; ++k) {
      const uint32_t word = AddMod(from / 64, k, words_);
      uint64_t bits = w[word];
      if (k == 0) bits &= ~uint64_t{0} << (from % 64);
      if (k == words_)
        bits &= (from % 64 == 0) ? 0 : ~(~uint64_t{0} << (from % 64));
      if (bits != 0)
        return word * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
    }
    return inputs_;
  }
  // Round-robin pointer over the inputs of (lane group `lg`, channel `vc`).
  uint32_t& rr_input(uint32_t lg, uint32_t vc) {
    return rr_input_[static_cast<size_t>(vc) * lanes_ + lg];
  }
  // Round-robin pointer of lane group `lg` over the virtual channels.
  uint32_t& rr_vc(uint32_t lg) { return rr_vc_[lg]; }

  bool LgFree(uint32_t lg, TimePs now) const { return lg_free_[lg] <= now; }
  TimePs lg_free_at(uint32_t lg) const { return lg_free_[lg]; }
  void Occupy(uint32_t lg, TimePs end) { lg_free_[lg] = end; }

  bool HasCredit(uint32_t vc, uint32_t wire_bytes) const {
    return credits_[vc] >= wire_bytes;
  }
  void TakeCredit(uint32_t vc, uint32_t wire_bytes) {
    if (credits_[vc] != kUnbounded) {
      credits_[vc] -= wire_bytes;
      in_use += wire_bytes;
    }
  }
  void ReturnCredit(uint32_t vc, uint32_t wire_bytes) {
    if (credits_[vc] != kUnbounded) {
      credits_[vc] += wire_bytes;
      in_use -= wire_bytes;
    }
  }

  uint32_t lg_queues() const { return lg_queues_; }
  // True if a packet waits in any row of lane group `lg` (any channel, any
  // input). REQUIRES: address interleaving (its queues are per lane
  // group: lg_queues() == lane_groups()).
  bool LgWaiting(uint32_t lg) const { return lg_waiting_[lg] != 0; }

  // First, so that the few lines a credit touches are the Port's first
  // (Network::SendCredit; Network::PrefetchPort).
  TimePs stalled_since = TimePs::Max();   // waiting for credit since
  TimePs credit_kick_at = TimePs::Max();  // the pending kCreditKick, if any
  // Wire bytes taken from the far buffer and not given back, over every
  // channel (each channel's credit is at least its buffer less this).
  int64_t in_use = 0;
  EarlyCredit early;       // credits counted before they are due
  CreditsDue credits_due;  // credits on their way back, not yet counted
  uint32_t rr_lg = 0;  // next lane group for round-robin interleaving
  TimePs kick_at = TimePs::Max();        // the pending kPortKick, if any
  // The link's counters but the per-lane-group ones (Stats() has all).
  LinkStats& stats() { return stats_; }
  // A packet of serialisation time `ser` left on lane group `lg`, done at
  // `end`.
  void CountLg(uint32_t lg, TimePs ser, TimePs end) {
    ++lg_packets_[lg];
    lg_busy_[lg] += ser;
    lg_last_end_[lg] = end;
  }
  LinkStats Stats() const {
    LinkStats s = stats_;
    s.lg_packets.assign(lg_packets_, lg_packets_ + lanes_);
    s.lg_busy.assign(lg_busy_, lg_busy_ + lanes_);
    s.lg_last_end.assign(lg_last_end_, lg_last_end_ + lanes_);
    return s;
  }

 private:
  static uint64_t Bit(uint32_t input) { return uint64_t{1} << (input % 64); }
  uint64_t& Word(uint32_t input, uint32_t row) {
    return nonempty_[static_cast<size_t>(row) * words_ + input / 64];
  }

  // The small per-port arrays, in one allocation (AllocateBlock) so that
  // serving a port touches few cache lines beyond the Port itself.
  void AllocateBlock(int64_t credit) {
    const size_t wide =
        4 * lanes_ + vcs_ + static_cast<size_t>(rows_) * words_;
    const size_t narrow =
        static_cast<size_t>(lanes_) * vcs_ + lanes_ + rows_ + lg_queues_;
    block_ = std::make_unique<std::byte[]>(wide * 8 + narrow * 4);
    std::byte* p = block_.get();
    const auto take = [&p]<typename T>(size_t n, T value) {
      T* first = reinterpret_cast<T*>(p);
      for (size_t i = 0; i < n; ++i) new (p + i * sizeof(T)) T(value);
      p += n * sizeof(T);
      return first;
    };
    lg_free_ = take(lanes_, TimePs::Zero());
    credits_ = take(vcs_, credit);
    lg_packets_ = take(lanes_, uint64_t{0});
    lg_busy_ = take(lanes_, TimePs::Zero());
    lg_last_end_ = take(lanes_, TimePs::Zero());
    nonempty_ = take(static_cast<size_t>(rows_) * words_, uint64_t{0});
    rr_input_ = take(static_cast<size_t>(lanes_) * vcs_, uint32_t{0});
    rr_vc_ = take(lanes_, uint32_t{0});
    row_lg_ = take(rows_, uint32_t{0});
    lg_waiting_ = take(lg_queues_, uint32_t{0});
    for (uint32_t r = 0; r < rows_; ++r) row_lg_[r] = r % lg_queues_;
  }

  uint32_t inputs_ = 0;
  uint32_t lanes_ = 0;
  uint32_t vcs_ = 0;
  uint32_t lg_queues_ = 1;
  uint32_t lg_mask_ = 0;  // Row(): all ones unless lg_queues_ is 1
  uint32_t rows_ = 1;
  uint32_t words_ = 1;
  std::unique_ptr<std::byte[]> block_;
  TimePs* lg_free_ = nullptr;      // per lane group
  int64_t* credits_ = nullptr;     // per virtual channel
  uint64_t* lg_packets_ = nullptr;  // per lane group: LinkStats::lg_packets
  TimePs* lg_busy_ = nullptr;       // ... lg_busy
  TimePs* lg_last_end_ = nullptr;   // ... lg_last_end
  uint64_t* nonempty_ = nullptr;   // per queue row: inputs with packets
  uint32_t* rr_input_ = nullptr;   // per (vc, lg)
  uint32_t* rr_vc_ = nullptr;      // per lg
  uint32_t* row_lg_ = nullptr;     // per row: its lane group's queue
  uint32_t* lg_waiting_ = nullptr;  // per lane group queue: packets
  Queue& queue(uint32_t input, uint32_t row) {
    return queues_[static_cast<size_t>(input) * rows_ + row];
  }
  const Queue& queue(uint32_t input, uint32_t row) const {
    return queues_[static_cast<size_t>(input) * rows_ + row];
  }
  std::vector<Queue> queues_;
  uint32_t waiting_ = 0;
  LinkStats stats_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_PORT_H_
