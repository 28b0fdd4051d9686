#include "hw/cdma.h"

#include <algorithm>

#include "hw/network.h"
#include "hw/packet.h"
#include "hw/port.h"

namespace ccreplay {

CdmaUnit::CdmaUnit(const HwConfig& hw, uint32_t num_chips, EventQueue& q)
    : hw_(hw), q_(q) {
  engines_.resize(static_cast<size_t>(num_chips) * hw_.cdma_engines);
  for (uint32_t e = 0; e < engines_.size(); ++e) {
    engines_[e].chip = e / hw_.cdma_engines;
  }
}

uint32_t CdmaUnit::NoteStart(uint32_t e, uint32_t g, bool moves_data,
                             TimePs now) {
  CdmaEngine& eng = engines_[e];
  const uint32_t before = eng.last_op;
  eng.last_op = g;
  if (hw_.cdma_max_outstanding != 0 && moves_data) eng.started.push_back(now);
  return before;
}

void CdmaUnit::BeginData(uint32_t e, uint32_t g, uint32_t peer, uint32_t qp,
                         uint64_t dst_addr, uint64_t bytes, TimePs now,
                         uint32_t state) {
  CdmaEngine& eng = engines_[e];
  eng.current = g;
  eng.state = state;
  eng.base_time = now;
  eng.base_bytes = 0;
  eng.emitted = 0;
  eng.peer = peer;
  eng.dst_addr = dst_addr;
  eng.bytes = bytes;
  if (peer == eng.chip) {
    q_.Push(now + hw_.CdmaReadTime(bytes), kLocalDone, e);
    return;
  }
  // Every packet of the write is of one flow: the same path.
  eng.flow = net_->FlowOf(eng.chip, peer, qp);
  const uint64_t first = std::min<uint64_t>(bytes, hw_.packet_payload_bytes);
  q_.Push(now + hw_.CdmaReadTime(first), kCdmaEmit, e);
}

bool CdmaUnit::OnEmit(uint32_t e, TimePs now) {
  CdmaEngine& eng = engines_[e];
  const uint32_t chunk = static_cast<uint32_t>(
      std::min<uint64_t>(eng.bytes - eng.emitted, hw_.packet_payload_bytes));
  const uint32_t input = e % hw_.cdma_engines;
  const uint32_t port = eng.flow.port;
  const uint32_t lg =
      net_->LaneGroupOf(GlobalAddress(eng.peer, eng.dst_addr + eng.emitted));
  if (!net_->MayStage(port, input, lg)) {
    // The port still holds this engine's previous packets: keep the one just
    // read and stop reading until the port takes one (PortTookPacket).
    eng.blocked_port = port;
    return false;
  }
  net_->InjectOn(eng.flow, lg, PacketKind::kData, eng.chip, eng.peer,
                 eng.current, chunk, input, now, eng.state);
  eng.emitted += chunk;
  if (eng.emitted == eng.bytes) return true;
  const uint64_t next =
      std::min<uint64_t>(eng.bytes - eng.emitted, hw_.packet_payload_bytes);
  q_.Push(eng.base_time + hw_.CdmaReadTime(eng.emitted - eng.base_bytes + next),
          kCdmaEmit, e);
  return false;
}

void CdmaUnit::PortTookPacket(uint32_t e, uint32_t port, TimePs now) {
  CdmaEngine& eng = engines_[e];
  if (eng.blocked_port != port) return;
  eng.blocked_port = kNone;
  const uint64_t held =
      std::min<uint64_t>(eng.bytes - eng.emitted, hw_.packet_payload_bytes);
  eng.base_time = now;
  eng.base_bytes = eng.emitted + held;
  q_.Push(now, kCdmaEmit, e);
}

}  // namespace ccreplay
