#include "trace/wire_chip.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "proto/trace.pb.h"
#include "trace/rules.h"

namespace ccreplay {
namespace {

// Wire types (protobuf encoding): the only two the trace's fields use.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint64_t kMaxU32 = 0xffffffffu;

// A cursor over one message's bytes.
class Reader {
 public:
  Reader() = default;
  Reader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  bool done() const { return p_ == end_; }
  // The next byte, or 0x80 (no one-byte tag) at the end.
  uint32_t Peek() const { return p_ != end_ ? *p_ : 0x80u; }
  void Skip() { ++p_; }
  const uint8_t* data() const { return p_; }
  size_t size() const { return static_cast<size_t>(end_ - p_); }

  // A varint of at most 10 bytes whose value fits 64 bits.
  [[gnu::always_inline]] bool Varint(uint64_t* v) {
    if (p_ != end_ && *p_ < 0x80) {
      *v = *p_++;
      return true;
    }
    return LongVarint(v);
  }
  // Varint of more than one byte.
  bool LongVarint(uint64_t* v) {
    uint64_t r = 0;
    for (int i = 0; i < 10 && p_ != end_; ++i) {
      const uint8_t b = *p_++;
      if (i == 9 && b > 1) return false;
      r |= uint64_t{b & 0x7fu} << (7 * i);
      if (b < 0x80) {
        *v = r;
        return true;
      }
    }
    return false;
  }
  // A tag as protobuf's parser reads one: at most 5 bytes, below 2^32, with
  // a field number above 0.
  bool Tag(uint32_t* field, uint32_t* wire_type) {
    uint64_t t = 0;
    if (!Short(&t)) return false;
    *field = static_cast<uint32_t>(t >> 3);
    *wire_type = static_cast<uint32_t>(t & 7);
    return *field != 0;
  }
  // The bytes of a length-delimited field (its length in at most 5 bytes,
  // within what is left).
  bool Sub(Reader* sub) {
    uint64_t n = 0;
    if (!Short(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *sub = Reader(p_, p_ + n);
    p_ += n;
    return true;
  }

 private:
  bool Short(uint64_t* v) {
    // One byte (every tag the schema defines, an instruction's length) is
    // within both limits.
    if (p_ != end_ && *p_ < 0x80) {
      *v = *p_++;
      return true;
    }
    const uint8_t* start = p_;
    return Varint(v) && p_ - start <= 5 && *v <= kMaxU32;
  }

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
};

// A message whose fields are all varints numbered 1..n (n < 8), each at
// most once: their values in v[0..n), 0 where absent (proto3's default).
// The fields whose bit (1 << number) is in `wide` are 64-bit; the others
// must fit 32 bits.
bool Scalars(Reader r, uint32_t n, uint32_t wide, uint64_t* v) {
  std::fill(v, v + n, uint64_t{0});
  uint32_t seen = 0;
  while (!r.done()) {
    uint32_t field = 0, wire_type = 0;
    if (!r.Tag(&field, &wire_type) || wire_type != kVarint || field > n ||
        ((seen >> field) & 1u) != 0) {
      return false;
    }
    seen |= 1u << field;
    uint64_t& x = v[field - 1];
    if (!r.Varint(&x) || (((wide >> field) & 1u) == 0 && x > kMaxU32)) {
      return false;
    }
  }
  return true;
}
// Scalars for the message a serializer writes, fields 1..N in order, each
// tag one byte: each field's tag is looked for once, where it must come,
// with no loop over tags, no record of the fields seen and no branch on a
// field's number. Anything else (fields out of order, repeated, of another
// wire type, a malformed varint, a value too wide) is handed to Scalars
// from the start, so that the result is always Scalars'.
template <uint32_t N>
bool ScalarsInOrder(Reader r, uint32_t wide, uint64_t* v) {
  static_assert(N < 8);
  Reader in = r;
#pragma GCC unroll 8
  for (uint32_t f = 1; f <= N; ++f) {
    v[f - 1] = 0;
    if (in.Peek() == ((f << 3) | kVarint)) {  // the field's one-byte tag
      in.Skip();
      if (!in.Varint(&v[f - 1]) ||
          (((wide >> f) & 1u) == 0 && v[f - 1] > kMaxU32)) {
        return Scalars(r, N, wide, v);
      }
    }
  }
  return in.done() || Scalars(r, N, wide, v);
}
constexpr uint32_t Bit(uint32_t field) { return 1u << field; }

// One Instruction message into *out (decoded as DecodeInstr does), checked
// against the rules of its kind if `rules` is given (all but peer-self,
// which needs the chip's id: ReadWireChip checks it after). A rule holds
// where `hw` is null (the fields are only read).
bool ReadInstruction(Reader r, const WireRules* rules, Instr* out) {
  uint32_t kind = 0, wire_type = 0;
  Reader body;
  if (!r.Tag(&kind, &wire_type) || wire_type != kLengthDelimited ||
      !r.Sub(&body) || !r.done()) {
    return false;  // no kind, another wire type, or more than one field
  }
  const TraceTarget* hw = rules != nullptr ? rules->hw : nullptr;
  const uint32_t chips = rules != nullptr ? rules->num_chips : 0;
  const auto qp_ok = [&](uint64_t qp) {
    return hw == nullptr || QpInRange(*hw, static_cast<uint32_t>(qp));
  };
  const auto counter_ok = [&](uint64_t id) {
    return hw == nullptr || CounterInRange(*hw, static_cast<uint32_t>(id));
  };
  const auto peer_ok = [&](uint64_t chip) {
    return hw == nullptr || chip < chips;
  };
  const auto u32 = [](uint64_t x) { return static_cast<uint32_t>(x); };
  uint64_t v[6];
  switch (kind) {
    case v1::Instruction::kTransferFieldNumber: {
      // qp_id, dst_chip, src_addr, dst_addr, bytes (64-bit), reduce
      static_assert(v1::REDUCE_NONE == 0 && v1::REDUCE_SUM == 1);
      if (!ScalarsInOrder<6>(body, Bit(3) | Bit(4) | Bit(5), v) ||
          v[5] > v1::REDUCE_SUM || !qp_ok(v[0]) || !peer_ok(v[1]) ||
          (hw != nullptr && (v[4] == 0 || RangeOverflows(v[2], v[4]) ||
                             RangeOverflows(v[3], v[4])))) {
        return false;
      }
      *out = TransferInstr(u32(v[0]), u32(v[1]), v[2], v[3], v[4],
                           v[5] == v1::REDUCE_SUM);
      return true;
    }
    case v1::Instruction::kMsgSendFieldNumber:  // qp_id, dst_qp_id
      if (!ScalarsInOrder<2>(body, 0, v) || !qp_ok(v[0]) ||
          !counter_ok(v[1])) {
        return false;
      }
      *out = MsgSendInstr(u32(v[0]), u32(v[1]));
      return true;
    case v1::Instruction::kMsgWaitFieldNumber:  // qp_id, count
      if (!ScalarsInOrder<2>(body, 0, v) || !counter_ok(v[0]) ||
          (hw != nullptr && v[1] < 1)) {
        return false;
      }
      *out = MsgWaitInstr(u32(v[0]), u32(v[1]));
      return true;
    case v1::Instruction::kRemoteMsgSendFieldNumber:
      // qp_id, dst_chip, dst_qp_id
      if (!ScalarsInOrder<3>(body, 0, v) || !qp_ok(v[0]) || !peer_ok(v[1]) ||
          !counter_ok(v[2])) {
        return false;
      }
      *out = RemoteMsgSendInstr(u32(v[0]), u32(v[1]), u32(v[2]));
      return true;
    case v1::Instruction::kFenceFieldNumber:
      if (!Scalars(body, 0, 0, v)) return false;  // no field at all
      *out = FenceInstr();
      return true;
    default:
      return false;  // Send, Receive (the matching), or no such kind
  }
}

// ReadInstruction with a memo: an instruction whose bytes are those of the
// last one read of its kind is decoded as that one was, without reading
// its fields again. What ReadInstruction makes of an instruction, and
// whether its rules hold, depends on its bytes alone (the chip's rules are
// the same for all of it), and lowered streams repeat their messages and
// waits byte for byte (a ring step's RemoteMsgSend and MsgWait). Only
// encodings of at most 8 bytes are kept, compared as one word: those of
// messages and waits with small values, not of Transfers, which rarely
// repeat (their addresses differ) and so pay only a length check.
class InstrMemo {
 public:
  // `limit`: the end of the bytes the instructions lie in, so that 8 bytes
  // may be loaded from an instruction's start when that is before it.
  explicit InstrMemo(const uint8_t* limit) : limit_(limit) {}

  bool Read(Reader in, const WireRules* rules, Instr* out) {
    const size_t n = in.size();
    const uint8_t* p = in.data();
    Entry* e = nullptr;
    uint64_t w = 0;
    if (n != 0 && n <= 8 && limit_ - p >= 8) {
      std::memcpy(&w, p, sizeof(w));
      w &= ~uint64_t{0} >> (64 - 8 * n);  // the instruction's bytes only
      // The first byte is the tag of the instruction's kind.
      e = &entries_[(p[0] >> 3) % kEntries];
      if (e->size == n && e->w == w) {
        *out = e->instr;
        return true;
      }
    }
    // One call, so that the compiler inlines it.
    if (!ReadInstruction(in, rules, out)) return false;
    if (e != nullptr) *e = Entry{w, n, *out};
    return true;
  }

 private:
  struct Entry {
    uint64_t w = 0;
    size_t size = 0;  // 0: empty
    Instr instr;
  };
  static constexpr size_t kEntries = 8;  // a kind's field number, mod 8
  const uint8_t* limit_;
  std::array<Entry, kEntries> entries_{};
};

// A message of the shape Stream and ChipProgram share: field 1 a uint32
// (at most once: *id), field 2 a repeated message (each handed to
// `entry`).
template <typename Entry>
bool ReadIdAndEntries(Reader r, uint32_t* id, Entry entry) {
  bool id_seen = false;
  *id = 0;
  while (!r.done()) {
    uint32_t field = 0, wire_type = 0;
    if (!r.Tag(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kVarint && !id_seen) {
      uint64_t v = 0;
      if (!r.Varint(&v) || v > kMaxU32) return false;
      *id = static_cast<uint32_t>(v);
      id_seen = true;
    } else if (field == 2 && wire_type == kLengthDelimited) {
      Reader sub;
      if (!r.Sub(&sub) || !entry(sub)) return false;
    } else {
      return false;
    }
  }
  return true;
}
static_assert(v1::Stream::kIdFieldNumber == 1 &&
              v1::Stream::kInstructionsFieldNumber == 2 &&
              v1::ChipProgram::kChipFieldNumber == 1 &&
              v1::ChipProgram::kStreamsFieldNumber == 2);

// One Stream message: its id and its instructions appended to out->instrs.
bool ReadStream(Reader r, const WireRules* rules, InstrMemo* memo,
                WireChip* out) {
  WireChip::Stream s;
  const size_t first = out->instrs.size();
  if (!ReadIdAndEntries(r, &s.id, [&](Reader in) {
        out->instrs.emplace_back();
        return memo->Read(in, rules, &out->instrs.back());
      })) {
    return false;
  }
  if (out->instrs.size() - first > kMaxU32) return false;
  s.size = static_cast<uint32_t>(out->instrs.size() - first);
  out->streams.push_back(s);
  return true;
}

// The rules a chip's streams and instructions keep that need the chip's id
// or all its streams: peer-self, stream-duplicate.
bool ChipRulesHold(const WireChip& c) {
  for (const Instr& in : c.instrs) {
    if (in.kind == OpKind::kRemoteMsgSend && in.peer == c.chip) return false;
  }
  std::vector<uint32_t> ids;
  ids.reserve(c.streams.size());
  for (const WireChip::Stream& s : c.streams) ids.push_back(s.id);
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

// The instructions of a Stream message as a serializer writes it: its id
// first (if not 0), then each instruction as a one-byte tag and a one-byte
// length (an instruction of at most 127 bytes, as every kind the reader
// takes is). False, and *n untouched, for any other form, which
// ReadIdAndEntries counts. Whatever this counts, ReadIdAndEntries counts
// the same.
bool CountSerializedStream(Reader s, uint64_t* n) {
  constexpr uint32_t kIdTag = (v1::Stream::kIdFieldNumber << 3) | kVarint;
  constexpr uint32_t kInstrTag =
      (v1::Stream::kInstructionsFieldNumber << 3) | kLengthDelimited;
  if (s.Peek() == kIdTag) {
    s.Skip();
    uint64_t id = 0;
    if (!s.Varint(&id) || id > kMaxU32) return false;
  }
  const uint8_t* p = s.data();
  const uint8_t* end = p + s.size();
  uint64_t count = 0;
  while (end - p >= 2 && p[0] == kInstrTag && p[1] < 0x80 &&
         p[1] <= end - p - 2) {
    p += 2 + p[1];
    ++count;
  }
  if (p != end) return false;
  *n = count;
  return true;
}

}  // namespace

bool ReadWireChip(absl::string_view bytes, const WireRules* rules,
                  WireChip* out) {
  out->streams.clear();
  out->instrs.clear();
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  InstrMemo memo(p + bytes.size());
  return ReadIdAndEntries(
             Reader(p, p + bytes.size()), &out->chip,
             [&](Reader s) { return ReadStream(s, rules, &memo, out); }) &&
         (rules == nullptr || ChipRulesHold(*out));
}

bool CountWireChip(absl::string_view bytes, uint32_t* chip,
                   std::vector<uint32_t>* lengths) {
  lengths->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  return ReadIdAndEntries(Reader(p, p + bytes.size()), chip, [&](Reader s) {
    uint32_t id = 0;
    uint64_t n = 0;
    if (!CountSerializedStream(s, &n)) {
      if (!ReadIdAndEntries(s, &id, [&](Reader) { return ++n <= kMaxU32; })) {
        return false;
      }
    }
    lengths->push_back(static_cast<uint32_t>(n));
    return true;
  });
}

}  // namespace ccreplay
