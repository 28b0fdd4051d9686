#include "models/netcalc.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace ccreplay {

RateLatency Concatenate(const std::vector<RateLatency>& hops) {
  RateLatency total{std::numeric_limits<double>::infinity(), 0.0};
  for (const RateLatency& h : hops) {
    total.rate_bps = std::min(total.rate_bps, h.rate_bps);
    total.latency_us += h.latency_us;
  }
  return total;
}

double DelayBoundUs(const LeakyBucket& a, const RateLatency& s) {
  if (a.rho_bps > s.rate_bps) return std::numeric_limits<double>::infinity();
  return s.latency_us + a.sigma_bytes / s.rate_bps * 1e6;
}

namespace {

// One packet on one lane group: a link's lane groups each carry 1/W of its
// rate, so a packet occupies its lane W packet slots.
double LanePacketUs(const NetParams& net) {
  return net.packet_us * std::max<uint32_t>(1, net.lane_groups);
}

// The rendezvous bound: each sync message crosses its hops behind at most
// one packet on its lane and pays its own lane slot.
double SyncBoundUs(const Step& step, const Topology& topo,
                   const NetParams& net) {
  double worst = 0;
  for (const Flow& f : step.sync) {
    double t = net.receive_us;
    for (uint32_t l : f.links) {
      t += net.hop_us + 2 * LanePacketUs(net);
      if (topo.IsSwitch(topo.links()[l].src)) t += net.switch_us;
    }
    worst = std::max(worst, t);
  }
  return worst;
}

// A flow's share of a link is of one lane group's when blocks are spread by
// address (a hash may put every block of a flow on one group; so may the
// XOR fold a short flow), of the whole link when spread round-robin. Kept
// at one lane group for the XOR fold's long flows too: these servers
// assume each flow a fair share of a lane group among the flows on the
// link, while the replay's arbiters take turns among inputs (each CDMA
// engine is one), which can give a forwarded flow less; a lane group's
// worth of slack covers that, the fold's near-even spread does not (the
// bound fell 20% short for HD on an 8-chip ring at 16 and 64 MB, session
// 23). TurnWorkUs, below, uses the fold's spread: it needs no fairness.
double LaneDivisor(const NetParams& net) {
  return net.interleave != InterleaveKind::kRoundRobin
             ? std::max<uint32_t>(1, net.lane_groups)
             : 1.0;
}

// The most wire bytes of a flow one lane group of its links may carry.
double LaneBytes(const Flow& f, const NetParams& net) {
  return WorstLaneWireBytes(net, static_cast<double>(f.bytes), f.stripes);
}

// One (src, dst) pair's turn, whatever the order of service (so whatever
// the arbiters do): its sub-flows side by side, each through once its
// busiest engine has read its bytes and each link of its path has served
// what the other chips' flows and this pair put on its busiest lane group
// in the step (the chip's other pairs take their own turns), at 1/W of the
// link's rate.
double TurnWorkUs(const std::vector<const Flow*>& subs,
                  const std::vector<double>& lane_load,
                  const std::vector<std::map<uint32_t, double>>& chip_lane_load,
                  const NetParams& net) {
  std::map<uint32_t, double> own;  // the pair's lane load per link
  for (const Flow* f : subs) {
    for (uint32_t l : f->links) own[l] += LaneBytes(*f, net);
  }
  const double lanes = std::max<uint32_t>(1, net.lane_groups);
  double slowest_us = 0;
  for (const Flow* f : subs) {
    const uint64_t engine_bytes =
        f->busiest_engine_bytes != 0 ? f->busiest_engine_bytes : f->bytes;
    double us = static_cast<double>(engine_bytes) / net.engine_bps * 1e6;
    for (uint32_t l : f->links) {
      const double ahead =
          lane_load[l] - chip_lane_load[l].at(f->src) + own.at(l);
      us += ahead * lanes / net.link_wire_bps * 1e6;
    }
    slowest_us = std::max(slowest_us, us);
  }
  return slowest_us;
}

// What the servers of a step's flows depend on, counted once per step.
struct StepCounts {
  std::vector<uint32_t> flows_on_link;  // every flow, ECMP sub-flows too
  std::map<uint32_t, uint32_t> flows_of_chip;
  std::map<uint32_t, uint32_t> transfers_of_chip;  // stripes, all flows
  // Per chip: its pairs' times summed, each pair passing in its turn
  // (Count).
  std::map<uint32_t, double> in_order_us;
  // Per chip: its pairs' turns summed, each no longer than behind all the
  // step's work on its path (Count).
  std::map<uint32_t, double> work_in_order_us;
};

StepCounts Count(const Step& step, const Topology& topo, const NetParams& net) {
  StepCounts c;
  c.flows_on_link.assign(topo.links().size(), 0);
  // Per link, per source chip: that chip's flows on it and their lane load.
  std::vector<std::map<uint32_t, uint32_t>> chip_flows_on_link(
      topo.links().size());
  // Per link: the most bytes of the step its busiest lane group may carry
  // (every flow's WorstLaneWireBytes), all chips' and per chip.
  std::vector<double> lane_load(topo.links().size(), 0.0);
  std::vector<std::map<uint32_t, double>> chip_lane_load(topo.links().size());
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const Flow*>> pairs;
  for (const Flow& f : step.flows) {
    ++c.flows_of_chip[f.src];
    c.transfers_of_chip[f.src] += f.stripes;
    const double lane_bytes = LaneBytes(f, net);
    for (uint32_t l : f.links) {
      ++c.flows_on_link[l];
      ++chip_flows_on_link[l][f.src];
      lane_load[l] += lane_bytes;
      chip_lane_load[l][f.src] += lane_bytes;
    }
    pairs[{f.src, f.dst}].push_back(&f);
  }
  // A chip's engines serve its Transfers in order, one stripe of a pair's
  // blocks each: the chip's pairs may pass one after another, the ECMP
  // sub-flows of one pair side by side on their own engines. A sub-flow is
  // guaranteed its engines' rate and, on each link, a fair share among the
  // other chips' flows there and this chip's one pair (its chip's other
  // pairs wait their turn), split among the pair's sub-flows on that link.
  // Whatever runs at once, a chip's pairs progress by at least one unit of
  // the sum of their times per unit of time.
  const double lanes = LaneDivisor(net);
  for (const auto& [pair, subs] : pairs) {
    std::map<uint32_t, uint32_t> on_link;  // the pair's sub-flows per link
    for (const Flow* f : subs) {
      for (uint32_t l : f->links) ++on_link[l];
    }
    double slowest_us = 0;
    for (const Flow* f : subs) {
      double rate = std::min(net.inject_bps, f->stripes * net.engine_bps);
      for (uint32_t l : f->links) {
        const uint32_t others =
            c.flows_on_link[l] - chip_flows_on_link[l].at(f->src);
        rate = std::min(
            rate, net.link_payload_bps / lanes / (others + 1) / on_link.at(l));
      }
      slowest_us =
          std::max(slowest_us, static_cast<double>(f->bytes) / rate * 1e6);
    }
    c.in_order_us[pair.first] += slowest_us;
    c.work_in_order_us[pair.first] +=
        TurnWorkUs(subs, lane_load, chip_lane_load, net);
  }
  return c;
}

std::vector<RateLatency> Servers(const Flow& flow, const StepCounts& c,
                                 const Topology& topo, const NetParams& net) {
  std::vector<RateLatency> servers;
  // An engine runs its Transfers one after another; in the worst case none
  // of their startups overlaps earlier data, so the busiest engine's
  // startups all come first.
  const uint32_t engines = std::max<uint32_t>(1, net.engines);
  const uint32_t per_engine =
      (c.transfers_of_chip.at(flow.src) + engines - 1) / engines;
  servers.push_back({std::min(net.inject_bps / c.flows_of_chip.at(flow.src),
                              flow.stripes * net.engine_bps),
                     net.startup_us * per_engine});
  const double lanes = LaneDivisor(net);
  // At the whole link's rate (spread round-robin) the flow's last packet
  // still crosses one lane group at 1/W of it: one more lane packet.
  const double last_packet = lanes < net.lane_groups ? LanePacketUs(net) : 0.0;
  for (uint32_t l : flow.links) {
    RateLatency hop{net.link_payload_bps / lanes / c.flows_on_link[l],
                    net.hop_us + LanePacketUs(net) + last_packet};
    if (topo.IsSwitch(topo.links()[l].src)) {
      hop.latency_us += net.switch_us + LanePacketUs(net);
    }
    servers.push_back(hop);
  }
  return servers;
}

}  // namespace

std::vector<RateLatency> NcFlowServers(const Step& step, size_t i,
                                       const Topology& topo,
                                       const NetParams& net) {
  return Servers(step.flows[i], Count(step, topo, net), topo, net);
}

double NcStepBoundUs(const Step& step, const Topology& topo,
                     const NetParams& net) {
  const StepCounts counts = Count(step, topo, net);
  double worst = 0;
  for (size_t i = 0; i < step.flows.size(); ++i) {
    const Flow& f = step.flows[i];
    const RateLatency s = Concatenate(Servers(f, counts, topo, net));
    // rho = the service rate: the source never outpaces its own server.
    const LeakyBucket a{static_cast<double>(f.bytes), s.rate_bps};
    // Served in order, the flow may wait for all its chip's others; either
    // way its chip's pairs take no longer than their turns' work.
    const double bound =
        std::min(std::max(DelayBoundUs(a, s),
                          s.latency_us + counts.in_order_us.at(f.src)),
                 s.latency_us + counts.work_in_order_us.at(f.src));
    // The data-arrival message follows the last byte: its own lane slot
    // per hop, then the receiver's overhead.
    const double notice = f.links.size() * LanePacketUs(net) + net.receive_us;
    worst = std::max(worst, bound + notice);
  }
  return SyncBoundUs(step, topo, net) + worst;
}

double NcScheduleBoundUs(const StepView& view, const Topology& topo,
                         const NetParams& net) {
  double t = 0;
  for (const Step& s : view.steps) t += NcStepBoundUs(s, topo, net);
  return t;
}

}  // namespace ccreplay
