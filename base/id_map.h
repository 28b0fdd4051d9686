// A map from 32-bit ids to 32-bit values for the few ids live at a time out
// of many (the instructions in flight of a replay): open addressing with
// linear probing in one array of 8-byte cells, grown to keep it at most half
// full, deletion by backward shift (no tombstones, so probes stay short
// however many ids come and go). Lookups never allocate; the order of
// operations alone decides its layout (no seed), though nothing iterates it.
#ifndef CCREPLAY_BASE_ID_MAP_H_
#define CCREPLAY_BASE_ID_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ccreplay {

class IdMap {
 public:
  // The value Find gives for an id not in the map. Not a valid id either.
  static constexpr uint32_t kAbsent = 0xffffffffu;

  size_t size() const { return size_; }

  uint32_t Find(uint32_t id) const {
    // The id found or inserted last: the callers ask for one id several
    // times in a row (one instruction's events).
    if (id == last_id_) return last_value_;
    if (cells_.empty()) return kAbsent;
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      const uint64_t c = cells_[i];
      if (c == kEmpty) return kAbsent;
      if (KeyOf(c) == id) {
        last_id_ = id;
        last_value_ = static_cast<uint32_t>(c);
        return last_value_;
      }
    }
  }

  // REQUIRES: `id` is not in the map, id != kAbsent.
  void Insert(uint32_t id, uint32_t value) {
    if ((size_ + 1) * 2 > cells_.size()) Grow();
    size_t i = Home(id);
    while (cells_[i] != kEmpty) i = (i + 1) & mask_;
    cells_[i] = (uint64_t{id} << 32) | value;
    ++size_;
    last_id_ = id;
    last_value_ = value;
  }

  // Removes `id` and returns its value, or kAbsent if it was not there.
  uint32_t Erase(uint32_t id) {
    if (id == last_id_) last_id_ = kAbsent;
    if (cells_.empty()) return kAbsent;
    size_t i = Home(id);
    for (;; i = (i + 1) & mask_) {
      if (cells_[i] == kEmpty) return kAbsent;
      if (KeyOf(cells_[i]) == id) break;
    }
    const uint32_t value = static_cast<uint32_t>(cells_[i]);
    // Backward shift: move later cells of the run into the hole when their
    // home is not between the hole and them (cyclically).
    size_t hole = i;
    for (size_t j = (i + 1) & mask_; cells_[j] != kEmpty; j = (j + 1) & mask_) {
      const size_t home = Home(KeyOf(cells_[j]));
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        cells_[hole] = cells_[j];
        hole = j;
      }
    }
    cells_[hole] = kEmpty;
    --size_;
    return value;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // key kAbsent: no id
  static uint32_t KeyOf(uint64_t cell) {
    return static_cast<uint32_t>(cell >> 32);
  }
  size_t Home(uint32_t id) const {
    return static_cast<size_t>((uint64_t{id} * 0x9E3779B97F4A7C15ull) >>
                               shift_);
  }
  void Grow() {
    std::vector<uint64_t> old;
    old.swap(cells_);
    const size_t cap = old.empty() ? 64 : old.size() * 2;
    cells_.assign(cap, kEmpty);
    mask_ = cap - 1;
    shift_ = 64;
    for (size_t c = cap; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (uint64_t c : old) {
      if (c != kEmpty) Insert(KeyOf(c), static_cast<uint32_t>(c));
    }
  }

  std::vector<uint64_t> cells_;
  // Find's cache: an id in the map and its value (kAbsent: none). Erase
  // clears it for its id; nothing changes a value in the map.
  mutable uint32_t last_id_ = kAbsent;
  mutable uint32_t last_value_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_ID_MAP_H_
