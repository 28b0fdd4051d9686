#include "hw/provenance.h"

#include <array>

namespace ccreplay {
namespace {

using O = ParamOrigin;

constexpr std::array kSources = {
    ParamSource{"cdma.engines_per_chip", O::kChosen,
                "enough engines to fill a link: 8 x 64 GB/s = 512 GB/s > 400 "
                "GB/s; the reference says only 'several CDMAs in parallel'"},
    ParamSource{"cdma.bandwidth_bytes_per_s", O::kSpec,
                "bandwidth_per_cdma = 64 GB/s (spec-notes: hardware)"},
    ParamSource{"cdma.startup_latency_ps", O::kDerived,
                "ddr_r + ddr_w + noc + 2 x d2d = 150 + 10 + 50 + 80 = 290 ns"},
    ParamSource{"cdma.max_outstanding", O::kChosen,
                "0 = startups overlap earlier data phases without limit: the "
                "reference charges the startup once per step",
                1},
    ParamSource{"cdma.staging_packets", O::kDerived,
                "one packet serialised while the next is read: depth 2 "
                "(docs/hardware-model.md, Staging)"},
    ParamSource{"cdma.unbounded_bandwidth", O::kChosen,
                "false: engines read at bandwidth_bytes_per_s; true is the "
                "alpha-beta model's machine"},
    ParamSource{"link.bandwidth_bytes_per_s", O::kSpec,
                "intra_bw = 400 GB/s per direction"},
    ParamSource{"link.latency_ps", O::kSpec,
                "c2c_lat = 200 ns, once per link crossing"},
    ParamSource{"link.propagation_ps", O::kSpec,
                "cable_delay = 25 ns, once per link crossing"},
    ParamSource{"link.packet_payload_bytes", O::kDerived,
                "9 data flits of 32 B = 288 B, so that u = 288 / 320 = 0.90 "
                "= bw_urate"},
    ParamSource{"link.packet_header_bytes", O::kDerived,
                "one 32-byte header flit: u = 288 / (288 + 32) = 0.90"},
    ParamSource{"link.message_payload_bytes", O::kDerived,
                "the 32-bit message word of RemoteMsgSend (A4S)"},
    ParamSource{"link.lane_groups", O::kChosen,
                "4 lane groups of 100 GB/s: the reference names ITLV over "
                "LGs but not their number",
                0, true},
    ParamSource{"link.interleave", O::kChosen,
                "XOR fold of the segment number, as address interleavers are "
                "built (docs/hardware-model.md, Interleaving)"},
    ParamSource{"link.buffer_bytes", O::kDerived,
                "covers 400 GB/s x (2 x 225 ns + 1000 ns) = 580 KB through a "
                "switch: 1 MiB"},
    ParamSource{"link.interleave_block_bytes", O::kChosen,
                "0 = one PAXI segment (288 B): consecutive packets are "
                "consecutive blocks",
                256},
    ParamSource{"link.virtual_channels", O::kChosen,
                "0 = as many as the routes need (1 on switch, fat-tree, full "
                "mesh; 2 on rings; 3 on tori, board rings, dragonflies): the "
                "reference names no link channels, and lossless links need "
                "them to be deadlock-free"},
    ParamSource{"switch_config.forwarding_latency_ps", O::kSpec,
                "switch_delay = 1000 ns, store-and-forward"},
    ParamSource{"switch_config.arbitration", O::kChosen,
                "round-robin over the inputs with a packet waiting, as "
                "switch output arbiters are built"},
    ParamSource{"switch_config.port_latency_ps", O::kDerived,
                "0: alpha_switch = 2 x (switch_delay + cable_delay) charges "
                "one c2c_lat per traversal, paid at the chip",
                200000},
    ParamSource{"switch_config.port_propagation_ps", O::kDerived,
                "0: alpha_switch charges one cable_delay per traversal, "
                "paid on the chip side",
                25000},
    ParamSource{"switch_config.input_queues", O::kChosen,
                "virtual output queues, as switch ASICs are built; FIFO "
                "inputs model head-of-line blocking"},
    ParamSource{"message.local_latency_ps", O::kChosen,
                "0: a MsgSend to the own chip's msg_central has no reference "
                "figure",
                50000},
    ParamSource{"message.remote_latency_ps", O::kChosen,
                "0: the A4S handshake + msg_central counting has no "
                "reference figure",
                50000},
};

}  // namespace

absl::string_view ParamOriginName(ParamOrigin o) {
  switch (o) {
    case ParamOrigin::kSpec:
      return "spec";
    case ParamOrigin::kDerived:
      return "derived";
    case ParamOrigin::kChosen:
      return "chosen";
  }
  return "?";
}

absl::Span<const ParamSource> ParamSources() { return kSources; }

const ParamSource* FindParamSource(absl::string_view field) {
  for (const ParamSource& s : kSources) {
    if (s.field == field) return &s;
  }
  return nullptr;
}

}  // namespace ccreplay
