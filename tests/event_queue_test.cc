// The event queue pops in (time, scheduling order) for every arity: the
// order the replay's determinism rests on. Pushes never go before the last
// pop, as in a simulation (the radix queue requires it).
#include "base/event_queue.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ccreplay {
namespace {

using Pending =
    std::vector<std::tuple<int64_t, uint64_t, uint32_t>>;  // t, seq, a

// Pops one event from `q` and checks it is the least (time, push order) of
// `pending`, which loses it; returns it.
template <typename Q>
Event PopAndCheck(Q& q, Pending& pending) {
  auto it = std::min_element(pending.begin(), pending.end());
  const Event e = q.Pop();
  EXPECT_EQ(e.time_ps, std::get<0>(*it));
  EXPECT_EQ(e.seq, std::get<1>(*it));
  EXPECT_EQ(e.a, std::get<2>(*it));
  pending.erase(it);
  return e;
}

template <typename Q>
class EventQueueTest : public ::testing::Test {};
using Arities =
    ::testing::Types<BasicEventQueue<2>, BasicEventQueue<4>, BasicEventQueue<8>,
                     RadixEventQueue, TieredEventQueue>;
TYPED_TEST_SUITE(EventQueueTest, Arities);

// Pushes (at `now + delay(x)`, x a fresh random word) and pops at random,
// `rounds` times, then pops the rest: every pop is the smallest (time, push
// order) pending, and kind and operands come back. With `drop_odd` (the
// radix queue), every event with an odd operand is dropped now and then
// (RemoveIf, as the fluid engine drops superseded end events): those never
// come back and the rest keep their order.
template <typename Q, typename Delay>
void PushAndPopAtRandom(int rounds, uint64_t x, Delay delay, bool drop_odd) {
  Q q;
  Pending pending;
  uint64_t seq = 0;
  int64_t now = 0;
  for (int round = 0; round < rounds; ++round) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    if constexpr (std::is_same_v<Q, RadixEventQueue> ||
                  std::is_same_v<Q, TieredEventQueue>) {
      if (drop_odd && round % 997 == 0) {
        q.RemoveIf([](const Event& e) { return e.a % 2 == 1; });
        std::erase_if(pending,
                      [](const auto& p) { return std::get<2>(p) % 2; });
        ASSERT_EQ(q.size(), pending.size());
      }
    }
    if (pending.empty() || (x >> 60) < 9) {
      const int64_t t = now + delay(x);
      const uint32_t a = static_cast<uint32_t>(x >> 20);
      q.Push(TimePs(t), static_cast<uint32_t>(seq % 11), a, a ^ 1u);
      pending.emplace_back(t, seq++, a);
      continue;
    }
    const Event e = PopAndCheck(q, pending);  // time, order and a
    ASSERT_EQ(e.kind, e.seq % 11);
    ASSERT_EQ(e.b, e.a ^ 1u);
    now = e.time_ps;
  }
  ASSERT_EQ(q.size(), pending.size());
  while (!pending.empty()) PopAndCheck(q, pending);
  EXPECT_TRUE(q.empty());
}

// Many equal times (delays of 0 to 4 ps).
TYPED_TEST(EventQueueTest, PopsInTimeThenPushOrder) {
  PushAndPopAtRandom<TypeParam>(
      20000, 7,
      [](uint64_t x) { return static_cast<int64_t>((x >> 33) % 5); },
      /*drop_odd=*/true);
}

// Times far apart as well as tied: delays of 0 to 2^44 ps (a magnitude of 0
// to 44 bits, then a value below it), so that the radix queue moves events
// down through many buckets before they pop, and pushes land in every
// bucket.
TYPED_TEST(EventQueueTest, PopsInOrderOverWideTimeRanges) {
  PushAndPopAtRandom<TypeParam>(
      40000, 3,
      [](uint64_t x) {
        const uint32_t bits = static_cast<uint32_t>((x >> 20) % 45);
        return bits == 0 ? int64_t{0}
                         : static_cast<int64_t>((x >> 8) &
                                                ((uint64_t{1} << bits) - 1));
      },
      /*drop_odd=*/false);
}

// Delays around the tiered queue's window: an event due just inside it goes
// into the wheel, one just beyond into the radix queue, and events of one
// time pushed from different current times sit in both, in push order.
TYPED_TEST(EventQueueTest, PopsInOrderAcrossTheWheelsEdge) {
  PushAndPopAtRandom<TypeParam>(
      40000, 5,
      [](uint64_t x) {
        const int64_t edge = TieredEventQueue::kWindow;
        return (x >> 40) % 3 == 0
                   ? static_cast<int64_t>((x >> 33) % 3)
                   : edge - 4 + static_cast<int64_t>((x >> 33) % 9);
      },
      /*drop_odd=*/true);
}

// Delays around the tiered queue's coarse wheel: its slot width, the fine
// wheel's edge seen from anywhere in a coarse slot, the coarse wheel's end
// (kRadixDelay) and, now and then, a long idle gap, so that events of one
// time wait in the coarse wheel and the radix queue, move into the fine
// wheel at different pops, and the queue moves on to a coarse slot while the
// fine wheel is empty.
TYPED_TEST(EventQueueTest, PopsInOrderAcrossTheCoarseWheel) {
  PushAndPopAtRandom<TypeParam>(
      30000, 11,
      [](uint64_t x) {
        constexpr int64_t kSlot = int64_t{1} << TieredEventQueue::kCoarseShift;
        constexpr int64_t kEnd = TieredEventQueue::kRadixDelay;
        const int64_t jitter = static_cast<int64_t>((x >> 33) % 9) - 4;
        switch ((x >> 40) % 6) {
          case 0:
            return static_cast<int64_t>((x >> 33) % 3);
          case 1:
            return kSlot * static_cast<int64_t>((x >> 44) % 8) + 4 + jitter;
          case 2:
            return static_cast<int64_t>(TieredEventQueue::kWindow) + jitter;
          case 3:
            return kEnd + jitter;
          case 4:
            return static_cast<int64_t>((x >> 20) % kEnd);
          default:
            return 3 * kEnd + static_cast<int64_t>((x >> 20) % kEnd);
        }
      },
      /*drop_odd=*/true);
}

// The radix queue's precondition is checked, not assumed: a push before the
// last pop is reported (the engine turns it into an internal error).
template <typename Q>
void ReportsAPushIntoThePast() {
  Q q;
  q.Push(TimePs(100), 0, 0);
  q.Push(TimePs(200), 0, 1);
  EXPECT_EQ(q.Pop().a, 0u);
  q.Push(TimePs(100), 0, 2);  // at the time of the last pop: allowed
  EXPECT_FALSE(q.went_back());
  EXPECT_EQ(q.Pop().a, 2u);
  q.Push(TimePs(99), 0, 3);
  EXPECT_TRUE(q.went_back());
  // Kept, at the last popped time, as is one before time 0.
  q.Push(TimePs(-1), 0, 4);
  q.RemoveIf([](const Event&) { return false; });
  const Event e = q.Pop();
  EXPECT_EQ(e.a, 3u);
  EXPECT_EQ(e.time_ps, 100);
  EXPECT_EQ(q.Pop().a, 4u);
  EXPECT_EQ(q.Pop().a, 1u);  // at 200
  EXPECT_TRUE(q.empty());
}
TEST(RadixEventQueueTest, ReportsAPushIntoThePast) {
  ReportsAPushIntoThePast<RadixEventQueue>();
}
TEST(TieredEventQueueTest, ReportsAPushIntoThePast) {
  ReportsAPushIntoThePast<TieredEventQueue>();
}
// A push into the past, even before time 0, is reported and kept (at the
// current time, after what is pending there), never a crash; RemoveIf calls
// its one predicate once per event across the tiers.
TEST(TieredEventQueueTest, KeepsAPushIntoThePastAndOnePredicate) {
  TieredEventQueue q;
  q.Push(TimePs(-1), 1, 7);
  EXPECT_TRUE(q.went_back());
  const Event e = q.Pop();
  EXPECT_EQ(e.a, 7u);
  EXPECT_EQ(e.time_ps, 0);
  EXPECT_TRUE(q.empty());
  TieredEventQueue r;
  r.Push(TimePs(5), 1, 1);                                // the wheel
  r.Push(TimePs(TieredEventQueue::kWindow + 100), 1, 2);  // the coarse wheel
  r.Push(TimePs(TieredEventQueue::kRadixDelay), 1, 4);    // the radix
  r.PushFirst(TimePs(TieredEventQueue::kWindow + 100), 0, 1, 3);
  int calls = 0;
  r.RemoveIf([&calls](const Event&) { return calls++ == 0; });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(r.size(), 3u);
}

// PeekSameTime(k) names the event that pops k after the next, and only when
// it is at the time last popped (nothing pushed later can overtake it).
TEST(RadixEventQueueTest, PeekSameTimeNamesTheComingEventsOfTheCurrentTime) {
  RadixEventQueue q;
  uint32_t kind = 0, a = 0;
  EXPECT_FALSE(q.PeekSameTime(0, &kind, &a));  // empty
  q.Push(TimePs(5), 7, 50);
  q.Push(TimePs(9), 3, 90);
  q.Push(TimePs(5), 8, 51);
  q.Push(TimePs(5), 9, 52);
  // Nothing popped yet: the time last popped is 0 and no event is at 0.
  EXPECT_FALSE(q.PeekSameTime(0, &kind, &a));
  EXPECT_EQ(q.Pop().a, 50u);  // t = 5; 51 and 52 are next, at 5
  ASSERT_TRUE(q.PeekSameTime(0, &kind, &a));
  EXPECT_EQ(kind, 8u);
  EXPECT_EQ(a, 51u);
  ASSERT_TRUE(q.PeekSameTime(1, &kind, &a));
  EXPECT_EQ(kind, 9u);
  EXPECT_EQ(a, 52u);
  EXPECT_FALSE(q.PeekSameTime(2, &kind, &a));  // 90 is at t = 9
  q.Push(TimePs(5), 4, 53);                    // at the current time: queued
  ASSERT_TRUE(q.PeekSameTime(2, &kind, &a));   // after 51 and 52
  EXPECT_EQ(a, 53u);
  // What was peeked pops in that order.
  EXPECT_EQ(q.Pop().a, 51u);
  EXPECT_EQ(q.Pop().a, 52u);
  EXPECT_EQ(q.Pop().a, 53u);
  EXPECT_FALSE(q.PeekSameTime(0, &kind, &a));  // 90 needs the next bucket
  EXPECT_EQ(q.Pop().a, 90u);
}

// An event PushFirst schedules pops before every event Push scheduled for
// its time, in rank order among those PushFirst scheduled for it (then in
// the order they were scheduled), whenever it was scheduled: plain pushes,
// pushes ahead of the current time (as a credit's return trip) and pops
// interleave, with many equal times, and every pop is the least pending.
template <typename Q>
void PushFirstPopsBeforeThePushesOfItsTime() {
  Q q;
  // (time, 0 for PushFirst / 1 for Push, rank or sequence, order of
  // scheduling, operand): the order the queue must pop in.
  std::vector<std::tuple<int64_t, int, uint64_t, uint64_t, uint32_t>> pending;
  uint64_t x = 11, seq = 0, order = 0;
  int64_t now = 0;
  int firsts = 0;
  for (int round = 0; round < 30000; ++round) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint32_t r = static_cast<uint32_t>(x >> 60);  // 0..15
    const uint32_t a = static_cast<uint32_t>(x >> 20);
    if (pending.empty() || r < 6) {
      const int64_t t = now + static_cast<int64_t>((x >> 33) % 4);  // ties
      q.Push(TimePs(t), 1, a);
      pending.emplace_back(t, 1, seq++, order++, a);
    } else if (r < 9) {
      const int64_t t = now + 1 + static_cast<int64_t>((x >> 40) % 16);
      const uint32_t rank = static_cast<uint32_t>((x >> 44) % 8);
      q.PushFirst(TimePs(t), rank, 2, a);
      pending.emplace_back(t, 0, rank, order++, a);
      ++firsts;
    } else {
      const auto it = std::min_element(pending.begin(), pending.end());
      const Event e = q.Pop();
      ASSERT_EQ(e.time_ps, std::get<0>(*it));
      ASSERT_EQ(e.kind, std::get<1>(*it) == 0 ? 2u : 1u);
      ASSERT_EQ(e.seq, std::get<2>(*it));
      ASSERT_EQ(e.a, std::get<4>(*it));
      now = e.time_ps;
      pending.erase(it);
    }
    ASSERT_EQ(q.size(), pending.size());
  }
  EXPECT_FALSE(q.went_back());
  EXPECT_GT(firsts, 4000);
  while (!pending.empty()) {
    const auto it = std::min_element(pending.begin(), pending.end());
    const Event e = q.Pop();
    ASSERT_EQ(e.time_ps, std::get<0>(*it));
    ASSERT_EQ(e.a, std::get<4>(*it));
    pending.erase(it);
  }
}
TEST(RadixEventQueueTest, PushFirstPopsBeforeThePushesOfItsTime) {
  PushFirstPopsBeforeThePushesOfItsTime<RadixEventQueue>();
}
// The tiered queue keeps PushFirst events in its radix queue and the plain
// pushes of the next picoseconds in its wheel: the order is the same.
TEST(TieredEventQueueTest, PushFirstPopsBeforeThePushesOfItsTime) {
  PushFirstPopsBeforeThePushesOfItsTime<TieredEventQueue>();
}

// The tiered queue names the coming events of the current time where they
// are all in one tier: in the wheel's slot, or in the radix queue's current
// bucket; not where both hold some.
TEST(TieredEventQueueTest, PeekSameTimeNamesTheComingEventsOfOneTier) {
  TieredEventQueue q;
  constexpr int64_t kFar = TieredEventQueue::kRadixDelay + 100;
  uint32_t kind = 0, a = 0;
  EXPECT_FALSE(q.PeekSameTime(0, &kind, &a));  // empty
  q.Push(TimePs(kFar), 1, 10);                 // beyond both wheels: radix
  q.Push(TimePs(5), 2, 20);                    // the wheel
  q.Push(TimePs(5), 3, 21);
  q.Push(TimePs(5), 4, 22);
  EXPECT_EQ(q.Pop().a, 20u);
  ASSERT_TRUE(q.PeekSameTime(0, &kind, &a));
  EXPECT_EQ(kind, 3u);
  EXPECT_EQ(a, 21u);
  ASSERT_TRUE(q.PeekSameTime(1, &kind, &a));
  EXPECT_EQ(a, 22u);
  EXPECT_FALSE(q.PeekSameTime(2, &kind, &a));  // 10 is at kFar
  EXPECT_EQ(q.Pop().a, 21u);
  EXPECT_EQ(q.Pop().a, 22u);
  // Popped 50 ps before kFar (from the radix queue too), the queue takes a
  // push at kFar into the wheel, after the radix queue's event of that time.
  q.Push(TimePs(kFar - 50), 5, 30);
  EXPECT_EQ(q.Pop().a, 30u);
  q.Push(TimePs(kFar), 6, 11);
  q.Push(TimePs(kFar + 1), 7, 40);
  EXPECT_EQ(q.Pop().a, 10u);                  // radix first: pushed first
  ASSERT_TRUE(q.PeekSameTime(0, &kind, &a));  // the rest of kFar: the wheel's
  EXPECT_EQ(a, 11u);
  EXPECT_EQ(q.Pop().a, 11u);
  EXPECT_FALSE(q.PeekSameTime(0, &kind, &a));  // 40 is a picosecond later
  EXPECT_EQ(q.Pop().a, 40u);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.went_back());
}

// The peek also gives an event's second argument (a port kick names the
// packet it will likely send there, Network::KickAt), from each place an
// event of the current picosecond can wait: the radix queue's bucket, the
// wheel's slot, and the list of pushes made during the picosecond.
TEST(TieredEventQueueTest, PeekSameTimeGivesTheSecondArgumentFromEveryTier) {
  TieredEventQueue q;
  constexpr int64_t kFar = TieredEventQueue::kRadixDelay + 100;
  uint32_t kind = 0, a = 0, b = 0;
  q.Push(TimePs(kFar), 1, 10, 100);  // radix
  q.Push(TimePs(kFar), 2, 11, 101);
  q.Push(TimePs(5), 3, 20, 200);  // the wheel
  q.Push(TimePs(5), 4, 21, 201);
  EXPECT_EQ(q.Pop().b, 200u);
  ASSERT_TRUE(q.PeekSameTime(0, &kind, &a, &b));
  EXPECT_EQ(kind, 4u);
  EXPECT_EQ(a, 21u);
  EXPECT_EQ(b, 201u);
  q.Push(TimePs(5), 5, 22, 202);  // pushed during t = 5: after 21
  ASSERT_TRUE(q.PeekSameTime(1, &kind, &a, &b));
  EXPECT_EQ(a, 22u);
  EXPECT_EQ(b, 202u);
  EXPECT_EQ(q.Pop().b, 201u);
  EXPECT_EQ(q.Pop().b, 202u);
  EXPECT_EQ(q.Pop().b, 100u);  // on to kFar, in the radix queue
  ASSERT_TRUE(q.PeekSameTime(0, &kind, &a, &b));
  EXPECT_EQ(kind, 2u);
  EXPECT_EQ(b, 101u);
  // Without the third pointer the peek gives the kind and first argument.
  ASSERT_TRUE(q.PeekSameTime(0, &kind, &a));
  EXPECT_EQ(a, 11u);
  EXPECT_EQ(q.Pop().b, 101u);
  EXPECT_TRUE(q.empty());
}

// Events waiting in the coarse wheel move into the fine wheel before any
// push of their time can go there, so one time's events pop in push order
// across the two; with the fine wheel empty the queue moves on to the first
// coarse slot in use, unless the radix queue's first event comes sooner.
TEST(TieredEventQueueTest, TheCoarseWheelKeepsPushOrder) {
  TieredEventQueue q;
  constexpr int64_t kSlot = int64_t{1} << TieredEventQueue::kCoarseShift;
  constexpr int64_t kT = 5 * TieredEventQueue::kWindow + 7;  // coarse at 0
  q.Push(TimePs(kT), 1, 1);       // coarse
  q.Push(TimePs(kT + 1), 1, 2);   // coarse, same slot
  q.Push(TimePs(3 * kSlot), 1, 3);  // coarse, an earlier slot
  q.Push(TimePs(TieredEventQueue::kRadixDelay + 1), 1, 9);  // radix
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.Pop().a, 3u);  // the fine wheel was empty: on to its slot
  EXPECT_EQ(q.Pop().a, 1u);
  q.Push(TimePs(kT + 1), 1, 4);  // now within the window: the fine wheel
  EXPECT_EQ(q.Pop().a, 2u);      // pushed first, from the coarse wheel
  EXPECT_EQ(q.Pop().a, 4u);
  EXPECT_EQ(q.Pop().a, 9u);
  EXPECT_TRUE(q.empty());
  // An event in the radix queue that is due before the first coarse slot
  // in use pops first.
  TieredEventQueue r;
  r.Push(TimePs(TieredEventQueue::kRadixDelay), 1, 1);  // radix
  r.Push(TimePs(TieredEventQueue::kWindow), 1, 2);      // coarse
  r.Push(TimePs(TieredEventQueue::kWindow + 3 * kSlot), 1, 3);  // coarse
  EXPECT_EQ(r.Pop().a, 2u);
  r.Push(TimePs(TieredEventQueue::kRadixDelay - 1), 1, 4);  // coarse
  EXPECT_EQ(r.Pop().a, 3u);
  EXPECT_EQ(r.Pop().a, 4u);
  EXPECT_EQ(r.Pop().a, 1u);
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(q.went_back() || r.went_back());
}

// A coarse slot keeps its events in chunks (of 10): one slot given 47
// events over several chunks, a fifth of them dropped by RemoveIf while
// they wait there, then a second slot filled from the chunks the first
// freed, pops every kept event in (time, push) order, with its operands.
TEST(TieredEventQueueTest, ACoarseSlotOfManyChunksKeepsItsOrder) {
  TieredEventQueue q;
  constexpr int64_t kT = 5 * TieredEventQueue::kWindow;  // a coarse slot
  constexpr int64_t kSlot = int64_t{1} << TieredEventQueue::kCoarseShift;
  std::vector<std::pair<int64_t, uint32_t>> want;  // (time, a), push order
  for (uint32_t i = 0; i < 47; ++i) {
    const int64_t t = kT + (i * 7) % 3;  // three times, interleaved
    q.Push(TimePs(t), 2, i, i + 1000);
    if (i % 5 != 0) want.emplace_back(t, i);
  }
  q.RemoveIf([](const Event& e) { return e.a % 5 == 0; });
  ASSERT_EQ(q.size(), want.size());
  std::stable_sort(want.begin(), want.end(), [](const auto& x, const auto& y) {
    return x.first < y.first;
  });
  for (const auto& [t, a] : want) {
    const Event e = q.Pop();
    EXPECT_EQ(e.time_ps, t);
    EXPECT_EQ(e.a, a);
    EXPECT_EQ(e.b, a + 1000);
    EXPECT_EQ(e.kind, 2u);
  }
  EXPECT_TRUE(q.empty());
  // The chunks come back to be used by a later slot.
  const int64_t later = kT + 3 * TieredEventQueue::kWindow + kSlot;
  for (uint32_t i = 0; i < 23; ++i) q.Push(TimePs(later), 1, i);
  for (uint32_t i = 0; i < 23; ++i) EXPECT_EQ(q.Pop().a, i);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.went_back());
}

// A crowded picosecond (bucket 0 with hundreds of events): PushFirst events
// scheduled for the current time pop before its plain ones still pending,
// whether they waited in a higher bucket or come while it is being popped,
// and PeekSameTime and RemoveIf see the same order.
TEST(RadixEventQueueTest, ACrowdedPicosecondKeepsItsOrder) {
  RadixEventQueue q;
  q.PushFirst(TimePs(10), 5, 2, 5000);  // scheduled early: waits in a bucket
  for (uint32_t a = 0; a < 600; ++a) q.Push(TimePs(10), 1, a);
  q.Push(TimePs(11), 1, 9000);
  EXPECT_EQ(q.Pop().a, 5000u);
  q.PushFirst(TimePs(10), 3, 2, 5001);  // at the current time
  uint32_t kind = 0, a = 0;
  ASSERT_TRUE(q.PeekSameTime(0, &kind, &a));
  EXPECT_EQ(a, 5001u);
  EXPECT_EQ(kind, 2u);
  ASSERT_TRUE(q.PeekSameTime(1, &kind, &a));
  EXPECT_EQ(a, 0u);
  ASSERT_TRUE(q.PeekSameTime(300, &kind, &a));
  EXPECT_EQ(a, 299u);
  EXPECT_EQ(q.Pop().a, 5001u);
  for (uint32_t want = 0; want < 300; ++want) ASSERT_EQ(q.Pop().a, want);
  q.Push(TimePs(10), 1, 600);
  q.PushFirst(TimePs(10), 1, 2, 5002);
  q.PushFirst(TimePs(10), 4, 2, 5003);
  EXPECT_EQ(q.Pop().a, 5002u);
  q.RemoveIf([](const Event& e) { return e.a % 2 == 1; });
  ASSERT_EQ(q.size(), 150u + 1 + 1);  // 300..598 even, 600, 9000 (5003 odd)
  for (uint32_t want = 300; want <= 600; want += 2) ASSERT_EQ(q.Pop().a, want);
  EXPECT_FALSE(q.PeekSameTime(0, &kind, &a));  // 9000 is at 11
  EXPECT_EQ(q.Pop().a, 9000u);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.went_back());
}

// The queue holds about what is pending at its fullest, however the events
// spread over the buckets on their way down: a steady population of 100,000
// events, each popped and replaced by one up to 2^20 ps later (as
// bench/replay_bench's BM_EventQueue), keeps its chunks within the
// population plus one partly used chunk per bucket. (A vector per bucket
// keeps each bucket's largest size: 5 to 7 times the most pending at once
// on the congested fat-tree AllToAlls.)
TEST(RadixEventQueueTest, HoldsAboutWhatIsPending) {
  RadixEventQueue q;
  constexpr size_t kPending = 100000;
  uint64_t x = 12345;
  const auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>(x >> 44);  // 0 to 2^20 - 1
  };
  for (size_t i = 0; i < kPending; ++i) q.Push(TimePs(next()), 0, 0);
  int64_t last = 0;
  for (int i = 0; i < 2000000; ++i) {
    const Event e = q.Pop();
    ASSERT_GE(e.time_ps, last);
    last = e.time_ps;
    q.Push(TimePs(e.time_ps + next()), 0, 0);
  }
  ASSERT_EQ(q.size(), kPending);
  // Buckets 1 to 64 each with at most one chunk of 255 slots partly used,
  // one more chunk being emptied by a refill, and bucket 0, which holds the
  // events of one picosecond (random times here: a few).
  const size_t bound = kPending + (64 + 1) * 255 + 255;
  EXPECT_LE(q.allocated_slots(), bound);
  EXPECT_GE(q.allocated_slots(), kPending);
}

}  // namespace
}  // namespace ccreplay
