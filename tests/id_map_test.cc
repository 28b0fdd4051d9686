#include "base/id_map.h"

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "gtest/gtest.h"

namespace ccreplay {
namespace {

TEST(IdMapTest, FindsWhatWasInsertedAndNotWhatWasErased) {
  IdMap m;
  EXPECT_EQ(m.Find(7), IdMap::kAbsent);
  EXPECT_EQ(m.Erase(7), IdMap::kAbsent);
  m.Insert(7, 70);
  m.Insert(0, 0);
  EXPECT_EQ(m.Find(7), 70u);
  EXPECT_EQ(m.Find(0), 0u);
  EXPECT_EQ(m.Find(8), IdMap::kAbsent);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.Erase(7), 70u);
  EXPECT_EQ(m.Find(7), IdMap::kAbsent);
  EXPECT_EQ(m.Find(0), 0u);
  EXPECT_EQ(m.size(), 1u);
}

// Find remembers the id it found or inserted last: erasing that id must
// forget it, and the id inserted again with another value (a slot reused by
// a later instruction's number never happens in the replay, but the map
// allows it) must give the new value, also across the table's growth.
TEST(IdMapTest, TheRememberedIdIsForgottenWhenErased) {
  IdMap m;
  m.Insert(5, 50);
  EXPECT_EQ(m.Find(5), 50u);
  EXPECT_EQ(m.Erase(5), 50u);
  EXPECT_EQ(m.Find(5), IdMap::kAbsent);
  m.Insert(5, 51);
  EXPECT_EQ(m.Find(5), 51u);
  m.Insert(6, 60);  // remembered now: 6
  EXPECT_EQ(m.Erase(5), 51u);
  EXPECT_EQ(m.Find(6), 60u);
  EXPECT_EQ(m.Find(5), IdMap::kAbsent);
  // Past the first table's 64 cells: the growth re-inserts every id.
  for (uint32_t id = 100; id < 400; ++id) m.Insert(id, id * 3);
  EXPECT_EQ(m.Find(6), 60u);
  for (uint32_t id = 100; id < 400; ++id) {
    ASSERT_EQ(m.Find(id), id * 3);
    ASSERT_EQ(m.Erase(id), id * 3);
    ASSERT_EQ(m.Find(id), IdMap::kAbsent);
    m.Insert(id, id * 5);
    ASSERT_EQ(m.Find(id), id * 5);
  }
}

// Ids erased and inserted again with new values, every operation followed
// by finds of the id just touched and of another, against std::unordered_map.
TEST(IdMapTest, AgreesWithAReferenceMapWhenIdsComeBack) {
  std::mt19937 rng(17);
  IdMap m;
  std::unordered_map<uint32_t, uint32_t> ref;
  for (int step = 0; step < 100000; ++step) {
    const uint32_t id = rng() % 512;
    if (ref.count(id) != 0) {
      ASSERT_EQ(m.Erase(id), ref.at(id)) << "step " << step;
      ref.erase(id);
    } else {
      const uint32_t value = rng() % 1000000;
      m.Insert(id, value);
      ref[id] = value;
    }
    const uint32_t other = rng() % 512;
    for (uint32_t probe : {id, other, id}) {
      const auto it = ref.find(probe);
      ASSERT_EQ(m.Find(probe), it == ref.end() ? IdMap::kAbsent : it->second)
          << "step " << step << ", id " << probe;
    }
    ASSERT_EQ(m.size(), ref.size());
  }
}

// Against std::unordered_map over a long random run: ids come and go as
// instructions in flight do (a window that moves on, some staying long),
// so runs of probes form and are cut by deletions, and the table grows.
TEST(IdMapTest, AgreesWithAReferenceMapOverARandomRun) {
  std::mt19937 rng(9);
  IdMap m;
  std::unordered_map<uint32_t, uint32_t> ref;
  std::vector<uint32_t> live;
  uint32_t next = 0;
  for (int step = 0; step < 200000; ++step) {
    const bool grow =
        live.size() < 50 || (rng() % 100) < (step < 100000 ? 55 : 45);
    if (grow) {
      const uint32_t id = next;
      next += 1 + rng() % 3;
      const uint32_t value = rng();
      if (value == IdMap::kAbsent) continue;
      m.Insert(id, value);
      ref[id] = value;
      live.push_back(id);
    } else {
      const size_t k = rng() % live.size();
      const uint32_t id = live[k];
      live[k] = live.back();
      live.pop_back();
      ASSERT_EQ(m.Erase(id), ref.at(id)) << "step " << step;
      ref.erase(id);
    }
    ASSERT_EQ(m.size(), ref.size());
    if (step % 97 == 0) {
      for (uint32_t id : live) ASSERT_EQ(m.Find(id), ref.at(id)) << id;
      // Some ids that are not there: erased ones, and ones never seen.
      for (uint32_t probe = 0; probe < 64; ++probe) {
        const uint32_t id = rng() % (next + 100);
        const auto it = ref.find(id);
        ASSERT_EQ(m.Find(id), it == ref.end() ? IdMap::kAbsent : it->second);
      }
    }
  }
}

}  // namespace
}  // namespace ccreplay
