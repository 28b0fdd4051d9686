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
