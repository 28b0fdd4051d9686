#include "trace/program.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include "absl/strings/str_cat.h"

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
  slot_ = 0;
  placed_size_ = 0;
}

void InterleaveStreams(Program& program) {
  constexpr size_t kRound = InstrList::kRound;
  std::vector<InstrList*> lists;
  for (ChipProgram& c : program.chips) {
    for (StreamProgram& s : c.streams) {
      s.instrs.Own();  // already placed: laid out again with the others
      lists.push_back(&s.instrs);
    }
  }
  size_t total = 0;
  size_t padded = 0;
  for (const InstrList* list : lists) {
    total += list->size();
    padded += (list->size() + kRound - 1) / kRound * kRound;
  }
  if (8 * (padded - total) > total) return;
  std::stable_sort(lists.begin(), lists.end(),
                   [](const InstrList* a, const InstrList* b) {
                     return a->size() > b->size();
                   });
  auto placed = std::make_shared<InstrList::Placed>();
  // Round r holds a block of kRound words for every stream longer than
  // r * kRound: the first `live` of `lists`.
  const size_t most = lists.empty() ? 0 : lists.front()->size();
  size_t words = 0;
  size_t live = lists.size();
  for (size_t r = 0; r * kRound < most; ++r) {
    while (live > 0 && lists[live - 1]->size() <= r * kRound) --live;
    placed->rounds.push_back(words);
    words += live * kRound;
  }
  // Not zeroed: each block's pages are first written by the copy below, so
  // the layout becomes resident as the lists' own arrays are freed.
  placed->words = std::make_unique_for_overwrite<InstrList::Packed[]>(words);
  for (size_t rank = 0; rank < lists.size(); ++rank) {
    InstrList& list = *lists[rank];
    const size_t n = list.size();
    const uint64_t slot = rank * kRound;
    for (size_t first = 0; first < n; first += kRound) {
      std::copy(list.packed_.begin() + static_cast<ptrdiff_t>(first),
                list.packed_.begin() +
                    static_cast<ptrdiff_t>(std::min(n, first + kRound)),
                placed->words.get() + placed->rounds[first / kRound] + slot);
    }
    std::vector<InstrList::Packed>().swap(list.packed_);
    list.placed_size_ = n;
    list.slot_ = slot;
  }
  const std::shared_ptr<const InstrList::Placed> shared = std::move(placed);
  for (InstrList* list : lists) list->placed_ = shared;
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
