// The kinds of event the replay's queue (base/event_queue.h) carries. Each
// hardware block schedules its own kinds and the engine loop
// (replay/engine.cc) hands each event back to the block that owns it, with a
// switch on the kind: no virtual call per event.
#ifndef CCREPLAY_HW_EVENTS_H_
#define CCREPLAY_HW_EVENTS_H_

#include <cstdint>
#include <limits>

namespace ccreplay {

// "No such index" for packets, links, instructions and engines.
inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

enum EventKind : uint32_t {
  kStreamResume,   // engine loop; a = stream slot
  kCdmaKick,       // CdmaUnit; a = engine index: re-examine the queue heads
  kCdmaEmit,       // CdmaUnit; a = engine: the current op's next packet is read
  kLocalDone,      // CdmaUnit; a = engine: the current local copy is written
  kArrive,         // Network; a = packet, b = chip: its last byte arrived
  kSwitchForward,  // Network; a = packet, b = switch: forwarding elapsed
  kMsgLocal,       // MessageUnit; a = op (MsgSend): reaches the local counter
  kPortKick,       // Network; a = port, b = the packet it will likely send
                   // (a hint for the lookahead, Network::KickAt): a lane
                   // group may be free
  kCreditKick,     // Network; a = port (waiting for credit, due now)
  kMsgCount,       // MessageUnit; a = op (RemoteMsgSend): handshake done
  kIngressHead,    // Network; a = packet: head of its switch input FIFO
};
// The event queue keeps a kind in 8 bits (base/event_queue.h).
static_assert(kIngressHead < 256);

}  // namespace ccreplay

#endif  // CCREPLAY_HW_EVENTS_H_
