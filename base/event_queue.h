// The replay's pending-event set: a vector-backed d-ary min-heap of small POD
// events ordered by (time, sequence). The sequence number is the order of
// scheduling, so ties in time resolve the same way on every run: the replay
// is deterministic. No allocation per event once the vector has grown; no
// virtual calls.
//
// The arity is a template parameter so that bench/replay_bench.cc can
// measure it (BM_EventQueue, 1e3 to 1e6 pending) against the radix queue
// below and the tiered queue (a timing wheel in front of the radix queue),
// which the replay uses (EventQueue; docs/architecture.md, "Event queue").
#ifndef CCREPLAY_BASE_EVENT_QUEUE_H_
#define CCREPLAY_BASE_EVENT_QUEUE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/units.h"

namespace ccreplay {

struct Event {
  int64_t time_ps = 0;
  uint64_t seq = 0;
  uint32_t kind = 0;  // an EventKind (hw/events.h), dispatched with a switch
  uint32_t a = 0;     // kind-specific operands
  uint32_t b = 0;
};

template <uint32_t kArity>
class BasicEventQueue {
  static_assert(kArity >= 2);

 public:
  // At most 2^56 events are scheduled in one run (the sequence shares a
  // word with the kind).
  void Push(TimePs t, uint32_t kind, uint32_t a, uint32_t b = 0) {
    const Slot s{t.ps(), (next_seq_++ << 8) | (kind & 0xffu), a, b};
    size_t hole = heap_.size();
    heap_.emplace_back();
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!Before(s, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = s;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // REQUIRES: !empty().
  Event Pop() {
    const Slot top = heap_.front();
    const Slot last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n > 0) SiftDown(last, n);
    return Event{top.time_ps, top.key >> 8,
                 static_cast<uint32_t>(top.key & 0xffu), top.a, top.b};
  }
  void Reserve(size_t n) { heap_.reserve(n); }

 private:
  // 24 bytes: time, then (sequence << 8 | kind), whose order is the
  // sequence's since sequences are unique.
  struct Slot {
    int64_t time_ps;
    uint64_t key;
    uint32_t a;
    uint32_t b;
  };
  static bool Before(const Slot& x, const Slot& y) {
    return x.time_ps != y.time_ps ? x.time_ps < y.time_ps : x.key < y.key;
  }
  // Moves `s` down from the root of a heap of `n` slots.
  void SiftDown(const Slot& s, size_t n) {
    size_t hole = 0;
    for (;;) {
      const size_t first = hole * kArity + 1;
      if (first >= n) break;
      const size_t end = first + kArity < n ? first + kArity : n;
      size_t best = first;
      for (size_t c = first + 1; c < end; ++c) {
        if (Before(heap_[c], heap_[best])) best = c;
      }
      if (!Before(heap_[best], s)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = s;
  }

  std::vector<Slot> heap_;
  uint64_t next_seq_ = 0;
};

// `t` as a time no earlier than `last`, a monotone queue's last popped
// time: a push into the past (a broken caller) sets *went_back and is kept
// at `last`, so that the queue stays monotone and the run can end.
inline uint64_t MonotoneTime(TimePs t, uint64_t last, bool* went_back) {
  const uint64_t time = static_cast<uint64_t>(t.ps());
  if (t.ps() >= 0 && time >= last) return time;
  *went_back = true;
  return last;
}

// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) of the same events:
// a monotone queue, for a simulation never schedules before the time it has
// reached. Bucket 0 holds the events at exactly the last popped time, in
// push order; bucket i > 0 those whose time first differs from it at bit
// i - 1. Popping an empty bucket 0 takes the lowest non-empty bucket, makes
// its smallest time the last one and redistributes it into lower buckets,
// stably; every event moves down at most 64 times in its life, so push and
// pop cost O(1) amortised with no comparison between arbitrary events.
// Events of equal time always share a bucket and keep their push order, so
// pops come in (time, sequence) order as from the heap.
//
// Buckets i > 0 are lists of fixed-size chunks drawn from one free list,
// so the queue holds about as much as is pending at its fullest, not the
// sum of every bucket's largest size (a vector per bucket keeps its
// capacity: 5-7 times the most pending at once on the congested AllToAlls,
// whose switches hold a packet each per forwarding latency).
// REQUIRES: every push is at or after the time of the last pop.
class RadixEventQueue {
 public:
  RadixEventQueue() = default;
  RadixEventQueue(const RadixEventQueue&) = delete;
  RadixEventQueue& operator=(const RadixEventQueue&) = delete;

  void Push(TimePs t, uint32_t kind, uint32_t a, uint32_t b = 0) {
    PushKey(t, SeqKey(next_seq_++, kind), a, b);
  }
  // The order key of the `seq`-th Push of an event of `kind`: what
  // PushKey takes and FrontKey gives (PushFirst's keys are below every
  // such key).
  static uint64_t SeqKey(uint64_t seq, uint32_t kind) {
    return ((kRanks + seq) << 8) | (kind & 0xffu);
  }
  // Push with the order key given (SeqKey), for a queue in front of this
  // one that numbers the pushes of both (TieredEventQueue).
  [[gnu::always_inline]] void PushKey(TimePs t, uint64_t key, uint32_t a,
                                      uint32_t b) {
    const uint64_t time = Monotone(t);
    Put(BucketOf(time), Slot{time, key, a, b});
    ++size_;
  }
  // The least time pending (kNoTime if none), without moving anything.
  uint64_t MinTime() const {
    if (head0_ < now_.size()) return now_[head0_].time;
    if (occupied_ == 0) return kNoTime;
    return least_[static_cast<size_t>(__builtin_ctzll(occupied_)) + 1];
  }
  // The order key of the event Pop returns next. REQUIRES: !empty(), and no
  // later push before MinTime() (it becomes the last popped time).
  uint64_t FrontKey() {
    if (head0_ == now_.size()) Refill();
    return now_[head0_].key;
  }
  // The event of order key `key` (SeqKey or a PushFirst rank).
  static Event EventOf(uint64_t time, uint64_t key, uint32_t a, uint32_t b) {
    return ToEvent(Slot{time, key, a, b});
  }
  static constexpr uint64_t kNoTime = ~uint64_t{0};
  // Schedules an event that pops before every event Push schedules for the
  // same time, and among those PushFirst schedules for that time in the
  // order of `rank` (then of scheduling): its place in the order of its
  // picosecond is fixed by (t, rank), whenever it is scheduled. A port
  // waiting for credit is served so at the start of the picosecond the
  // credit comes back (hw/network.h, kCreditKick). Its Event::seq is `rank`.
  // Such an event joins bucket 0 at its place, or waits in its bucket's own
  // short list of them (kept in order) until Refill merges the two, so
  // nothing is moved per event however full the bucket.
  // REQUIRES: t after the time of the last pop; rank < 2^32.
  void PushFirst(TimePs t, uint32_t rank, uint32_t kind, uint32_t a,
                 uint32_t b = 0) {
    const uint64_t key = Monotone(t);
    const size_t i = BucketOf(key);
    std::vector<Slot>& bk = i == 0 ? now_ : late_[i];
    const Slot s{key, (uint64_t{rank} << 8) | (kind & 0xffu), a, b};
    const auto from = bk.begin() + static_cast<ptrdiff_t>(i == 0 ? head0_ : 0);
    bk.insert(std::upper_bound(from, bk.end(), s.key,
                               [](uint64_t k, const Slot& x) {
                                 return k < x.key;
                               }),
              s);
    if (key < least_[i]) least_[i] = key;
    if (i != 0) occupied_ |= Bit(i);
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // REQUIRES: !empty().
  Event Pop() {
    if (head0_ == now_.size()) Refill();
    --size_;
    const Slot& s = now_[head0_++];
    return ToEvent(s);
  }
  void Reserve(size_t) {}
  // The kind and first operand of the event `ahead` pops after the next one
  // (0: the next), when it is known without work: an event at the time last
  // popped, already in bucket 0, which pushes made before it pops (never
  // earlier than that time) cannot overtake. In symmetric collectives most
  // events share their time with the next, so this is what lets the engine
  // prefetch what an event will touch while the ones before it run.
  bool PeekSameTime(size_t ahead, uint32_t* kind, uint32_t* a,
                    uint32_t* b = nullptr) const {
    if (now_.size() - head0_ <= ahead) return false;
    const Slot& s = now_[head0_ + ahead];
    *kind = static_cast<uint32_t>(s.key & 0xffu);
    *a = s.a;
    if (b != nullptr) *b = s.b;
    return true;
  }
  // Removes the events `drop(Event)` is true of; the others keep their
  // order (every bucket holds its events in sequence order, and a filter
  // that keeps the order keeps that).
  template <typename Pred>
  void RemoveIf(Pred drop) {
    const auto keep = [&](const Slot& s) { return !drop(ToEvent(s)); };
    now_.erase(now_.begin(), now_.begin() + static_cast<ptrdiff_t>(head0_));
    head0_ = 0;
    std::erase_if(now_, [&](const Slot& s) { return !keep(s); });
    size_ = now_.size();
    least_[0] = kNoTime;
    for (size_t i = 1; i < kBuckets; ++i) {
      least_[i] = kNoTime;
      std::erase_if(late_[i], [&](const Slot& s) { return !keep(s); });
      for (const Slot& s : late_[i]) least_[i] = std::min(least_[i], s.time);
      size_ += late_[i].size();
      const List old = lists_[i];
      lists_[i] = List{};
      Drain(old, [&](const Slot& s) {
        if (!keep(s)) return;
        Append(lists_[i], s);
        least_[i] = std::min(least_[i], s.time);
        ++size_;
      });
      if (least_[i] == kNoTime) occupied_ &= ~Bit(i);
    }
  }
  // Event slots allocated: the chunks (in use or free), bucket 0 and the
  // PushFirst lists.
  size_t allocated_slots() const {
    size_t n = chunks_.size() * kChunkSlots + now_.capacity();
    for (const std::vector<Slot>& l : late_) n += l.capacity();
    return n;
  }
  // True if anything was pushed before the last popped time (or before 0):
  // a broken caller; such an event was kept at the last popped time.
  bool went_back() const { return went_back_; }

 private:
  struct Slot {
    uint64_t time;
    uint64_t key;  // sequence << 8 | kind
    uint32_t a;
    uint32_t b;
  };
  // A bucket's events in push order, chunk by chunk (8 KiB each).
  static constexpr uint32_t kChunkSlots = 255;
  struct Chunk {
    Slot slots[kChunkSlots];
    Chunk* next;
  };
  struct List {
    Slot* end = nullptr;    // the tail chunk's first free slot ...
    Slot* limit = nullptr;  // ... and its end (equal: a new chunk is due)
    Chunk* head = nullptr;
    Chunk* tail = nullptr;
  };
  // Push's sequence numbers are stored above every PushFirst rank.
  static constexpr uint64_t kRanks = uint64_t{1} << 32;
  static Event ToEvent(const Slot& s) {
    const uint64_t seq = s.key >> 8;
    return Event{static_cast<int64_t>(s.time),
                 seq >= kRanks ? seq - kRanks : seq,
                 static_cast<uint32_t>(s.key & 0xffu), s.a, s.b};
  }
  uint64_t Monotone(TimePs t) { return MonotoneTime(t, last_, &went_back_); }
  // Bucket i's bit in occupied_ (1 <= i <= 64).
  static uint64_t Bit(size_t i) { return uint64_t{1} << (i - 1); }
  size_t BucketOf(uint64_t time) const {
    return time == last_
               ? 0
               : 64 - static_cast<size_t>(__builtin_clzll(time ^ last_));
  }
  // Appends `s` to bucket i (0: the current picosecond's).
  void Put(size_t i, const Slot& s) {
    if (i == 0) {
      now_.push_back(s);
    } else {
      Append(lists_[i], s);
      if (s.time < least_[i]) least_[i] = s.time;
      occupied_ |= Bit(i);
    }
  }
  void Append(List& l, const Slot& s) {
    if (l.end == l.limit) Grow(l);
    *l.end++ = s;
  }
  void Grow(List& l) {
    Chunk* c = NewChunk();
    if (l.tail == nullptr) {
      l.head = c;
    } else {
      l.tail->next = c;
    }
    l.tail = c;
    l.end = c->slots;
    l.limit = c->slots + kChunkSlots;
  }
  Chunk* NewChunk() {
    Chunk* c = free_;
    if (c != nullptr) {
      free_ = c->next;
    } else {
      chunks_.push_back(std::make_unique<Chunk>());
      c = chunks_.back().get();
    }
    c->next = nullptr;
    return c;
  }
  // Calls f on every event of `l` in order, handing each chunk back to the
  // free list once read (f may append to other buckets).
  template <typename F>
  void Drain(const List& l, F&& f) {
    for (Chunk* c = l.head; c != nullptr;) {
      const Slot* end = c == l.tail ? l.end : c->slots + kChunkSlots;
      for (const Slot* s = c->slots; s != end; ++s) f(*s);
      Chunk* next = c->next;
      c->next = free_;
      free_ = c;
      c = next;
    }
  }
  // Bucket 0 is used up: move the lowest non-empty bucket's events down.
  [[gnu::flatten]] void Refill() {
    now_.clear();
    head0_ = 0;
    const size_t i = static_cast<size_t>(__builtin_ctzll(occupied_)) + 1;
    occupied_ &= ~Bit(i);
    const List from = lists_[i];
    lists_[i] = List{};
    std::vector<Slot>& late = late_[i];
    last_ = least_[i];  // kept by Push and here: no scan for it
    least_[i] = kNoTime;
    const auto move_down = [this](const Slot& s) { Put(BucketOf(s.time), s); };
    if (late.empty()) {
      Drain(from, move_down);
      return;
    }
    // Both in sequence order: merged, the lower buckets are too.
    size_t l = 0;
    Drain(from, [&](const Slot& s) {
      while (l < late.size() && late[l].key < s.key) move_down(late[l++]);
      move_down(s);
    });
    while (l < late.size()) move_down(late[l++]);
    late.clear();
  }

  // Bucket 0 and one per bit at which a time can first differ from last_.
  static constexpr size_t kBuckets = 65;
  static constexpr std::array<uint64_t, kBuckets> NoTimes() {
    std::array<uint64_t, kBuckets> a{};
    a.fill(kNoTime);
    return a;
  }
  // Bucket 0: the events at the last popped time, popped from head0_.
  std::vector<Slot> now_;
  // Buckets 1 to 64.
  std::array<List, kBuckets> lists_{};
  // Per bucket i > 0: its PushFirst events, in key order (rank, kind).
  std::vector<Slot> late_[kBuckets];
  // Per bucket i > 0: the least time in it (kNoTime when empty), so that
  // Refill need not scan for it.
  std::array<uint64_t, kBuckets> least_ = NoTimes();
  // Bit i - 1 set: bucket i > 0 holds events (in its list or its PushFirst
  // list), so that Refill finds the lowest such bucket without a scan.
  uint64_t occupied_ = 0;
  // Every chunk ever allocated; the unused ones are chained from free_.
  std::vector<std::unique_ptr<Chunk>> chunks_;
  Chunk* free_ = nullptr;
  size_t head0_ = 0;
  size_t size_ = 0;
  uint64_t last_ = 0;
  uint64_t next_seq_ = 0;
  bool went_back_ = false;
};

// The radix queue behind a timing wheel of one slot per picosecond for the
// next kWindow picoseconds: an event due within the window goes into its
// slot's list, in push order, and is never moved; one due later goes into
// the coarse wheel (below) or the radix queue (`far_`), and pops from
// there. The tiers share the
// sequence numbers, and a pop takes the least (time, order key) of the
// wheel's earliest slot and the radix queue's front, so the order is
// exactly the radix queue's alone. Most of a packet-level replay's events
// are due a serialisation or a read later (a few nanoseconds on TPS186):
// each was moved down the radix buckets two or three times
// (docs/architecture.md, "Event queue"). Between the two, a coarse wheel of
// kCoarse slots of 2^kCoarseShift ps holds the events due up to about 16.8
// us later (a switch's forwarding, a link's flight, a microsecond
// serialisation), each slot's in push order; a slot moves into the fine
// wheel, once, when it comes wholly within kWindow of the last pop, before
// any push of its times can go there, so the order stays the radix
// queue's.
// REQUIRES: every push is at or after the time of the last pop.
class TieredEventQueue {
 public:
  static constexpr uint64_t kWindow = 8192;  // ps; a power of two
  // The coarse wheel: kCoarse slots of 2^kCoarseShift ps each.
  static constexpr uint32_t kCoarseShift = 11;
  static constexpr uint64_t kCoarse = 8192;
  // An event due this long after the last pop, or longer, always goes to
  // the radix queue (one due sooner may too, near the coarse wheel's end).
  static constexpr uint64_t kRadixDelay =
      kWindow + (kCoarse << kCoarseShift);

  TieredEventQueue()
      : tail_(kWindow, kNone),
        bits_(kWindow / 64, 0),
        coarse_head_(kCoarse, kNone),
        coarse_tail_(kCoarse, kNone),
        coarse_bits_(kCoarse / 64, 0) {
    SetHorizon((now_ + kWindow) >> kCoarseShift);
  }
  TieredEventQueue(const TieredEventQueue&) = delete;
  TieredEventQueue& operator=(const TieredEventQueue&) = delete;

  // One out-of-line copy, the tiers' pushes inlined into it.
  [[gnu::noinline]] void Push(TimePs t, uint32_t kind, uint32_t a,
                              uint32_t b = 0) {
    const uint64_t key = RadixEventQueue::SeqKey(next_seq_++, kind);
    const uint64_t time = Monotone(t);
    if (time == now_) {
      // After everything pending for this picosecond: pushed before it.
      cur_.push_back(Node{time, key, a, b, kNone});
      return;
    }
    if (time < near_limit_) {
      PushNear(time, key, a, b);
      return;
    }
    if (time < coarse_limit_) {
      PushCoarse(time, key, a, b);
      return;
    }
    far_.PushKey(TimePs(static_cast<int64_t>(time)), key, a, b);
    if (time < far_time_) far_time_ = time;
  }
  // RadixEventQueue::PushFirst: such events wait in the radix queue, and
  // pop before the events of their time pushed for it alone (also when
  // pushed for the current time: before those still pending).
  void PushFirst(TimePs t, uint32_t rank, uint32_t kind, uint32_t a,
                 uint32_t b = 0) {
    const uint64_t time = Monotone(t);
    far_.PushFirst(TimePs(static_cast<int64_t>(time)), rank, kind, a, b);
    if (time < far_time_) far_time_ = time;
  }
  bool empty() const { return size() == 0; }
  size_t size() const {
    return near_size_ + coarse_size_ + far_.size() + (cur_.size() - cur_head_);
  }
  // REQUIRES: !empty().
  Event Pop() {
    // The coarse wheel's events are all due after the fine wheel's and
    // after now_.
    if (cur_head_ < cur_.size() && std::min(far_time_, near_time_) > now_) {
      return PopCurrent();
    }
    if (far_time_ <= near_time_) {
      if (near_size_ == 0 && coarse_size_ != 0) {
        // The fine wheel is empty: move on to the first coarse slot in use,
        // unless the radix queue's first event comes before it (no event
        // pops before now_ moves there).
        const uint64_t start = NextCoarse(Horizon()) << kCoarseShift;
        if (start <= far_time_) {
          now_ = start;
          SpreadSlots();
        }
      }
      if (far_time_ < near_time_ ||
          (far_time_ == near_time_ &&
           far_.FrontKey() < nodes_[Head(Slot(near_time_))].key)) {
        now_ = far_time_;
        const Event e = far_.Pop();
        far_time_ = far_.MinTime();
        Spread();
        return e;
      }
    }
    now_ = near_time_;
    const Event e = PopNear();
    Spread();
    return e;
  }
  void Reserve(size_t) {}
  // RadixEventQueue::PeekSameTime, where the answer is known without
  // merging: the current picosecond's events still to come are those of the
  // radix queue's current bucket or of the wheel's slot (not both), then
  // those pushed during it.
  bool PeekSameTime(size_t ahead, uint32_t* kind, uint32_t* a,
                    uint32_t* b = nullptr) const {
    const bool far_now = far_time_ == now_;
    const bool near_now = near_time_ == now_;
    if (far_now) {
      return !near_now && far_.PeekSameTime(ahead, kind, a, b);
    }
    if (near_now) {
      const uint32_t tail = tail_[Slot(now_)];
      uint32_t n = nodes_[tail].next;  // the head
      for (; ahead > 0 && n != tail; --ahead) n = nodes_[n].next;
      if (ahead == 0) {
        *kind = static_cast<uint32_t>(nodes_[n].key & 0xffu);
        *a = nodes_[n].a;
        if (b != nullptr) *b = nodes_[n].b;
        // The node the next peek reads, on its way while this event runs:
        // a slot's nodes are wherever the free list had them.
        __builtin_prefetch(&nodes_[nodes_[n].next]);
        return true;
      }
      --ahead;  // past the slot's last event: on into cur_
    }
    if (cur_.size() - cur_head_ <= ahead) return false;
    const Node& x = cur_[cur_head_ + ahead];
    *kind = static_cast<uint32_t>(x.key & 0xffu);
    *a = x.a;
    if (b != nullptr) *b = x.b;
    return true;
  }
  // RadixEventQueue::RemoveIf, over every tier (one `drop`, called once
  // per event, tier by tier).
  template <typename Pred>
  void RemoveIf(Pred drop) {
    // A node or a coarse wheel's event.
    const auto dropped = [&](const auto& x) {
      return drop(RadixEventQueue::EventOf(x.time, x.key, x.a, x.b));
    };
    far_.RemoveIf([&drop](const Event& e) { return drop(e); });
    far_time_ = far_.MinTime();
    cur_.erase(cur_.begin(), cur_.begin() + static_cast<ptrdiff_t>(cur_head_));
    cur_head_ = 0;
    std::erase_if(cur_, dropped);
    // Each wheel's slots taken apart and the events kept put back, in order.
    const auto filter = [&](uint32_t* tails, uint64_t* bits, uint64_t slots,
                            size_t* size) {
      for (uint64_t slot = 0; slot < slots; ++slot) {
        if (tails[slot] == kNone) continue;
        Detach(tails, bits, slot, [&](uint32_t n) {
          if (dropped(nodes_[n])) {
            FreeNode(n);
            --*size;
          } else {
            AppendTo(tails, bits, slot, n);
          }
        });
      }
    };
    filter(tail_.data(), bits_.data(), kWindow, &near_size_);
    std::vector<CoarseEvent> kept;
    for (uint64_t slot = 0; slot < kCoarse; ++slot) {
      if (coarse_head_[slot] == kNone) continue;
      kept.clear();
      DetachCoarse(slot, [&](const CoarseEvent& x) {
        if (dropped(x)) {
          --coarse_size_;
        } else {
          kept.push_back(x);
        }
      });
      for (const CoarseEvent& x : kept) AppendCoarse(slot, x);
    }
    near_time_ = near_size_ != 0 ? FirstNear(Slot(now_)) : kNoTime;
  }
  size_t allocated_slots() const {
    return far_.allocated_slots() + nodes_.capacity() + cur_.capacity() +
           chunks_.capacity() * kChunkEvents;
  }
  // True if anything was pushed before the last popped time (or before 0):
  // a broken caller; such an event was kept at the last popped time. (The
  // radix queue is only ever given times from then on; its own flag guards
  // that.)
  bool went_back() const { return went_back_ || far_.went_back(); }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  static constexpr uint64_t kNoTime = RadixEventQueue::kNoTime;
  struct Node {
    uint64_t time;
    uint64_t key;  // RadixEventQueue::SeqKey
    uint32_t a;
    uint32_t b;
    // The next in its slot's list (the last: the first), or in the free
    // list.
    uint32_t next;
  };
  struct CoarseEvent {
    uint64_t time;
    uint64_t key;
    uint32_t a;
    uint32_t b;
  };
  static constexpr uint32_t kChunkEvents = 10;  // 248 bytes a chunk
  struct CoarseChunk {
    CoarseEvent ev[kChunkEvents];
    uint32_t count;
    uint32_t next;  // the slot's next chunk, or the next free one
  };
  static uint64_t Slot(uint64_t time) { return time & (kWindow - 1); }
  uint64_t Monotone(TimePs t) { return MonotoneTime(t, now_, &went_back_); }
  Event PopCurrent() {
    const Node& x = cur_[cur_head_];
    const Event e = RadixEventQueue::EventOf(x.time, x.key, x.a, x.b);
    if (++cur_head_ == cur_.size()) {
      cur_.clear();
      cur_head_ = 0;
    }
    return e;
  }
  [[gnu::always_inline]] uint32_t NewNode(uint64_t time, uint64_t key,
                                          uint32_t a, uint32_t b) {
    uint32_t n = free_;
    if (n != kNone) {
      free_ = nodes_[n].next;
      nodes_[n] = Node{time, key, a, b, kNone};
    } else {
      n = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back(Node{time, key, a, b, kNone});
    }
    return n;
  }
  [[gnu::always_inline]] void PushNear(uint64_t time, uint64_t key, uint32_t a,
                                       uint32_t b) {
    Append(Slot(time), NewNode(time, key, a, b));
    ++near_size_;
    if (time < near_time_) near_time_ = time;
  }
  [[gnu::always_inline]] void PushCoarse(uint64_t time, uint64_t key,
                                         uint32_t a, uint32_t b) {
    AppendCoarse(CoarseSlot(time), CoarseEvent{time, key, a, b});
    ++coarse_size_;
  }
  // The coarse wheel's slot `slot` gets x after its other events.
  void AppendCoarse(uint64_t slot, const CoarseEvent& x) {
    uint32_t c = coarse_tail_[slot];
    if (c == kNone) {
      c = NewChunk();
      coarse_head_[slot] = c;
      coarse_tail_[slot] = c;
      coarse_bits_[slot / 64] |= uint64_t{1} << (slot % 64);
    } else if (chunks_[c].count == kChunkEvents) {
      const uint32_t n = NewChunk();
      chunks_[c].next = n;
      coarse_tail_[slot] = n;
      c = n;
    }
    CoarseChunk& chunk = chunks_[c];
    chunk.ev[chunk.count++] = x;
  }
  uint32_t NewChunk() {
    uint32_t c = free_chunk_;
    if (c != kNone) {
      free_chunk_ = chunks_[c].next;
    } else {
      c = static_cast<uint32_t>(chunks_.size());
      chunks_.emplace_back();
    }
    chunks_[c].count = 0;
    chunks_[c].next = kNone;
    return c;
  }
  // Empties the coarse wheel's slot `slot` and calls each(x) for its
  // events in push order (each must not push into the coarse wheel).
  template <typename Each>
  void DetachCoarse(uint64_t slot, Each&& each) {
    uint32_t c = coarse_head_[slot];
    coarse_head_[slot] = kNone;
    coarse_tail_[slot] = kNone;
    coarse_bits_[slot / 64] &= ~(uint64_t{1} << (slot % 64));
    while (c != kNone) {
      const CoarseChunk& chunk = chunks_[c];
      for (uint32_t i = 0; i < chunk.count; ++i) each(chunk.ev[i]);
      const uint32_t next = chunk.next;
      chunks_[c].next = free_chunk_;
      free_chunk_ = c;
      c = next;
    }
  }
  // A slot's list is a ring kept by its last node: one word per slot.
  uint32_t Head(uint64_t slot) const { return nodes_[tail_[slot]].next; }
  void Append(uint64_t slot, uint32_t n) {
    AppendTo(tail_.data(), bits_.data(), slot, n);
  }
  void AppendTo(uint32_t* tails, uint64_t* bits, uint64_t slot, uint32_t n) {
    const uint32_t tail = tails[slot];
    if (tail == kNone) {
      nodes_[n].next = n;
      bits[slot / 64] |= uint64_t{1} << (slot % 64);
    } else {
      nodes_[n].next = nodes_[tail].next;
      nodes_[tail].next = n;
    }
    tails[slot] = n;
  }
  // Empties slot `slot` of a wheel (its last nodes `tails`, occupancy
  // `bits`) and calls each(n) for its nodes in order; each may append n
  // anywhere, this slot included.
  template <typename Each>
  void Detach(uint32_t* tails, uint64_t* bits, uint64_t slot, Each&& each) {
    const uint32_t tail = tails[slot];
    tails[slot] = kNone;
    bits[slot / 64] &= ~(uint64_t{1} << (slot % 64));
    uint32_t n = nodes_[tail].next;
    for (bool last = false; !last;) {
      last = n == tail;
      const uint32_t next = nodes_[n].next;
      each(n);
      n = next;
    }
  }
  static uint64_t CoarseSlot(uint64_t time) {
    return (time >> kCoarseShift) & (kCoarse - 1);
  }
  // The first coarse slot number not yet moved into the fine wheel:
  // (now_ + kWindow) >> kCoarseShift as of the last move.
  uint64_t Horizon() const { return near_limit_ >> kCoarseShift; }
  void SetHorizon(uint64_t h) {
    near_limit_ = h << kCoarseShift;
    coarse_limit_ = (h + kCoarse) << kCoarseShift;
    spread_at_ = near_limit_ + (uint64_t{1} << kCoarseShift) - kWindow;
  }
  // After now_ moved: the coarse slots now wholly within kWindow of it
  // (below (now_ + kWindow) rounded down to a coarse slot) go into the fine
  // wheel, each slot's events in their push order into fine slots that hold
  // none of their time yet (a push there went to the coarse slot until
  // now), so every fine slot stays in push order.
  void Spread() {
    if (now_ >= spread_at_) SpreadSlots();
  }
  [[gnu::noinline]] void SpreadSlots() {
    const uint64_t h = (now_ + kWindow) >> kCoarseShift;
    const uint64_t from = Horizon();
    const uint64_t last = std::min(h, from + kCoarse);
    for (uint64_t c = from; coarse_size_ != 0; ++c) {
      c = NextCoarse(c);
      if (c >= last) break;
      DetachCoarse(c & (kCoarse - 1), [&](const CoarseEvent& x) {
        Append(Slot(x.time), NewNode(x.time, x.key, x.a, x.b));
        if (x.time < near_time_) near_time_ = x.time;
        ++near_size_;
        --coarse_size_;
      });
    }
    SetHorizon(h);
  }
  // The number (not wrapped) of the first coarse slot in use from slot
  // number `c` on, Horizon() <= c < Horizon() + kCoarse: the coarse wheel's
  // events are all due within kCoarse slots of Horizon(), so its index gives
  // it. REQUIRES: coarse_size_ > 0.
  uint64_t NextCoarse(uint64_t c) const {
    const uint64_t from = c & (kCoarse - 1);
    return c + ((FirstSet(coarse_bits_.data(), kCoarse, from) - from) &
                (kCoarse - 1));
  }
  // The first set bit of bitmap `bits` (`n` bits, a power of two) from bit
  // `from` on, cyclically. REQUIRES: some bit is set.
  static uint64_t FirstSet(const uint64_t* bits, uint64_t n, uint64_t from) {
    uint64_t word = from / 64;
    uint64_t w = bits[word] & (~uint64_t{0} << (from % 64));
    while (w == 0) {
      word = (word + 1) % (n / 64);
      w = bits[word];
    }
    return word * 64 + static_cast<uint64_t>(__builtin_ctzll(w));
  }
  void FreeNode(uint32_t n) {
    nodes_[n].next = free_;
    free_ = n;
  }
  Event PopNear() {
    const uint64_t slot = Slot(near_time_);
    const uint32_t tail = tail_[slot];
    const uint32_t n = nodes_[tail].next;
    const Node& x = nodes_[n];
    const Event e = RadixEventQueue::EventOf(x.time, x.key, x.a, x.b);
    --near_size_;
    if (n == tail) {
      tail_[slot] = kNone;
      bits_[slot / 64] &= ~(uint64_t{1} << (slot % 64));
      near_time_ = near_size_ != 0 ? FirstNear(slot) : kNoTime;
    } else {
      nodes_[tail].next = x.next;
    }
    FreeNode(n);
    return e;
  }
  // The time of the first occupied slot from `slot` on, cyclically: the
  // wheel's events are all within kWindow of now_, so its slot gives it.
  // REQUIRES: near_size_ > 0.
  uint64_t FirstNear(uint64_t slot) const {
    const uint64_t found = FirstSet(bits_.data(), kWindow, slot);
    return now_ + ((found - Slot(now_)) & (kWindow - 1));
  }

  RadixEventQueue far_;
  uint64_t far_time_ = kNoTime;  // far_.MinTime(), kept
  // The events pushed for the current picosecond (after every other event
  // of it: their sequence is the latest), popped from cur_head_.
  std::vector<Node> cur_;
  size_t cur_head_ = 0;
  std::vector<uint32_t> tail_;  // per slot: its last node, or kNone
  std::vector<uint64_t> bits_;  // per slot: whether it holds events
  // The coarse wheel, for events due from near_limit_ to coarse_limit_:
  // per slot of 2^kCoarseShift ps, its events in push order in a chain of
  // chunks (chunks_), and its bit in coarse_bits_ while it holds any. Slot
  // numbers below Horizon() have gone into the fine wheel.
  std::vector<uint32_t> coarse_head_;  // per slot: its first chunk
  std::vector<uint32_t> coarse_tail_;  // per slot: its last chunk
  std::vector<uint64_t> coarse_bits_;
  size_t coarse_size_ = 0;
  // The coarse wheel's events in chunks from one pool (free ones chained
  // through next from free_chunk_): moving a slot into the fine wheel reads
  // them in sequence, where nodes would be a chain of dependent loads, each
  // a miss on a large system (session 27).
  std::vector<CoarseChunk> chunks_;
  uint32_t free_chunk_ = kNone;
  // Kept for the pushes and pops (SetHorizon): the first time due in the
  // coarse wheel, the first due in the radix queue, and the least now_ that
  // moves the horizon on.
  uint64_t near_limit_ = 0;    // Horizon() << kCoarseShift
  uint64_t coarse_limit_ = 0;  // (Horizon() + kCoarse) << kCoarseShift
  uint64_t spread_at_ = 0;
  std::vector<Node> nodes_;
  uint32_t free_ = kNone;
  size_t near_size_ = 0;
  uint64_t near_time_ = kNoTime;  // the wheel's least time (none: kNoTime)
  uint64_t now_ = 0;              // the last popped time
  uint64_t next_seq_ = 0;
  bool went_back_ = false;
};

using EventQueue = TieredEventQueue;

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_EVENT_QUEUE_H_
