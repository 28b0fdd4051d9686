#include "trace/program.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/huge_pages.h"

namespace ccreplay {

InstrList::InstrList(std::initializer_list<Instr> list) {
  packed_.reserve(list.size());
  for (const Instr& in : list) push_back(in);
}

InstrList::InstrList(const std::vector<Instr>& list) {
  packed_.reserve(list.size());
  for (const Instr& in : list) push_back(in);
}

Instr InstrList::at(size_t i) const {
  if (i >= size()) {
    throw std::out_of_range(absl::StrCat("instruction ", i, " of ", size()));
  }
  return (*this)[i];
}

InstrList::Shape InstrList::shape() const {
  if (!shape_stale_) return shape_;
  Shape s;
  for (size_t i = 0; i < size(); ++i) s.Note(kind(i), i);
  return s;
}

InstrList::Packed InstrList::PackWhole(const Instr& in) {
  Packed p;
  p.w[0] = kEscaped;
  p.w[1] = whole_.size();
  p.w[2] = 0;
  whole_.push_back(in);
  return p;
}

void InstrList::Own() {
  if (!placed_) return;
  const Layout l = layout();
  std::vector<Packed> words(placed_size_);
  for (size_t i = 0; i < placed_size_; ++i) words[i] = *l.At(i);
  packed_ = std::move(words);
  placed_.reset();
  group_ = 0;
  slot_ = 0;
  placed_size_ = 0;
}

std::optional<InterleavedLayout> PlanInterleave(
    const std::vector<size_t>& lengths) {
  constexpr size_t kRound = InstrList::kRound;
  size_t total = 0;
  size_t padded = 0;
  for (const size_t n : lengths) {
    total += n;
    padded += (n + kRound - 1) / kRound * kRound;
  }
  if (8 * (padded - total) > total) return std::nullopt;
  // Ranked by length, longest first, ties in program order.
  std::vector<size_t> order(lengths.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  // Group g holds the streams of ranks [g kGroup, (g + 1) kGroup), the
  // groups one after the other; its round r holds a block of kRound words
  // for each of its streams longer than r * kRound: the first `live` of
  // the group in rank order.
  constexpr size_t kGroup = InstrList::kGroup;
  InterleavedLayout l;
  l.groups.resize(lengths.size());
  l.slots.resize(lengths.size());
  for (size_t first = 0; first < order.size(); first += kGroup) {
    const size_t end = std::min(order.size(), first + kGroup);
    const uint32_t g = static_cast<uint32_t>(l.rounds.size());
    std::vector<uint64_t>& rounds = l.rounds.emplace_back();
    for (size_t rank = first; rank < end; ++rank) {
      l.groups[order[rank]] = g;
      l.slots[order[rank]] = (rank - first) * kRound;
    }
    const size_t most = lengths[order[first]];
    size_t live = end - first;
    for (size_t r = 0; r * kRound < most; ++r) {
      while (live > 0 && lengths[order[first + live - 1]] <= r * kRound) {
        --live;
      }
      rounds.push_back(l.words);
      l.words += live * kRound;
    }
  }
  return l;
}

void InterleaveStreams(Program& program) {
  constexpr size_t kRound = InstrList::kRound;
  std::vector<InstrList*> lists;
  std::vector<size_t> lengths;
  for (ChipProgram& c : program.chips) {
    for (StreamProgram& s : c.streams) {
      s.instrs.Own();  // already placed: laid out again with the others
      lists.push_back(&s.instrs);
      lengths.push_back(s.instrs.size());
    }
  }
  std::optional<InterleavedLayout> l = PlanInterleave(lengths);
  if (!l) return;
  // Each block's pages are first written by the copy below, so the layout
  // becomes resident as the lists' own arrays are freed.
  const std::shared_ptr<InstrList::Placed> placed = InstrList::Placed::For(*l);
  for (size_t k = 0; k < lists.size(); ++k) {
    InstrList& list = *lists[k];
    const size_t n = list.size();
    const uint32_t group = l->groups[k];
    const uint64_t slot = l->slots[k];
    const std::vector<uint64_t>& rounds = placed->rounds[group];
    for (size_t first = 0; first < n; first += kRound) {
      std::copy(list.packed_.begin() + static_cast<ptrdiff_t>(first),
                list.packed_.begin() +
                    static_cast<ptrdiff_t>(std::min(n, first + kRound)),
                placed->words.get() + rounds[first / kRound] + slot);
    }
    std::vector<InstrList::Packed>().swap(list.packed_);
    list.placed_size_ = n;
    list.group_ = group;
    list.slot_ = slot;
  }
  for (InstrList* list : lists) list->placed_ = placed;
}

std::shared_ptr<InstrList::Placed> InstrList::Placed::For(
    InterleavedLayout& l) {
  auto placed = std::make_shared<Placed>();
  placed->rounds = std::move(l.rounds);
  placed->words = std::make_unique_for_overwrite<Packed[]>(l.words);
  AdviseHugePages(placed->words.get(), l.words * sizeof(Packed));
  return placed;
}

InterleavePlan::InterleavePlan(
    const std::vector<std::vector<uint32_t>>& lengths) {
  std::vector<size_t> all;
  for (const std::vector<uint32_t>& chip : lengths) {
    chip_first_.push_back(all.size());
    all.insert(all.end(), chip.begin(), chip.end());
  }
  chip_first_.push_back(all.size());
  std::optional<InterleavedLayout> l = PlanInterleave(all);
  if (!l) return;
  placed_ = InstrList::Placed::For(*l);  // resident as the decoder writes
  groups_ = std::move(l->groups);
  slots_ = std::move(l->slots);
  lengths_.assign(all.begin(), all.end());
  filled_flags_.assign(all.size(), false);
}

bool InterleavePlan::Fill(uint32_t chip, uint32_t stream, const Instr* in,
                          size_t n, InstrList* list) {
  constexpr size_t kRound = InstrList::kRound;
  if (!ok() || chip + size_t{1} >= chip_first_.size() ||
      stream >= chip_first_[chip + 1] - chip_first_[chip]) {
    return false;
  }
  const size_t k = chip_first_[chip] + stream;
  if (filled_flags_[k] || lengths_[k] != n || !list->empty()) return false;
  filled_flags_[k] = true;
  ++filled_;
  list->packed_.clear();
  list->whole_.clear();
  const uint32_t group = groups_[k];
  const uint64_t slot = slots_[k];
  InstrList::Packed* words = placed_->words.get();
  const uint64_t* rounds = placed_->rounds[group].data();
  InstrList::Shape shape;
  for (size_t i = 0; i < n; ++i) {
    words[rounds[i / kRound] + slot + i % kRound] = list->Pack(in[i]);
    shape.Note(in[i].kind, i);
  }
  list->shape_ = shape;
  list->shape_stale_ = false;
  list->placed_ = placed_;
  list->placed_size_ = n;
  list->group_ = group;
  list->slot_ = slot;
  return true;
}

absl::string_view OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kTransfer:
      return "Transfer";
    case OpKind::kSend:
      return "Send";
    case OpKind::kReceive:
      return "Receive";
    case OpKind::kMsgSend:
      return "MsgSend";
    case OpKind::kMsgWait:
      return "MsgWait";
    case OpKind::kRemoteMsgSend:
      return "RemoteMsgSend";
    case OpKind::kFence:
      return "Fence";
  }
  return "?";
}

std::string PlaceText(int64_t chip, int64_t stream_id, int64_t instr,
                      absl::string_view kind) {
  if (chip < 0) return "";
  std::string s = absl::StrCat("chip ", chip);
  if (stream_id < 0) return s;
  absl::StrAppend(&s, ", stream ", stream_id);
  if (instr >= 0) absl::StrAppend(&s, ", instruction ", instr, " (", kind, ")");
  return s;
}

std::string InstrPlace(const Program& p, uint32_t chip, uint32_t stream_index,
                       uint32_t instr_index) {
  const StreamProgram& s = p.chips[chip].streams[stream_index];
  return PlaceText(chip, s.id, instr_index,
                   OpKindName(s.instrs[instr_index].kind));
}

}  // namespace ccreplay
