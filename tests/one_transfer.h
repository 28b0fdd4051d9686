// A smallest complete program for budget tests and the hw fuzzer: on `n`
// chips, chip 0 writes `bytes` to chip 1 and tells it with a message, which
// chip 1 waits for.
#ifndef CCREPLAY_TESTS_ONE_TRANSFER_H_
#define CCREPLAY_TESTS_ONE_TRANSFER_H_

#include <cstdint>

#include "trace/program.h"

namespace ccreplay_test {

inline ccreplay::Program OneTransfer(uint64_t bytes, uint32_t n = 2) {
  using ccreplay::Instr;
  using ccreplay::OpKind;
  ccreplay::Program p;
  p.num_chips = n;
  p.chips.resize(n);
  Instr t;
  t.kind = OpKind::kTransfer;
  t.peer = 1;
  t.bytes = bytes;
  Instr m;
  m.kind = OpKind::kRemoteMsgSend;
  m.peer = 1;
  p.chips[0].streams.push_back({0, {t, m}});
  Instr w;
  w.kind = OpKind::kMsgWait;
  w.count = 1;
  p.chips[1].streams.push_back({0, {w}});
  return p;
}

}  // namespace ccreplay_test

#endif  // CCREPLAY_TESTS_ONE_TRANSFER_H_
