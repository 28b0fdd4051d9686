// The Perfetto writer of replay/timeline.h: the model of timeline_model.h as
// TracePackets of proto/perfetto_trace.proto, one sequence, streamed into
// the bytes of a Trace message (each packet a length-delimited field 1).
#include <algorithm>
#include <string>
#include <vector>

#include "proto/perfetto_trace.pb.h"
#include "replay/timeline.h"
#include "replay/timeline_model.h"

namespace ccreplay {
namespace {

namespace pf = ::ccreplay::perfetto;
using timeline::Event;
using timeline::EventKind;
using timeline::Model;
using timeline::Track;

constexpr uint32_t kSequence = 1;
constexpr uint32_t kSeqIncrementalStateCleared = 1;

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Appends `packet` as one element of Trace.packet (field 1, wire type 2).
void AppendPacket(pf::TracePacket& packet, std::string* out) {
  packet.set_trusted_packet_sequence_id(kSequence);
  const std::string bytes = packet.SerializeAsString();
  out->push_back(static_cast<char>((1 << 3) | 2));
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

void AppendDescriptor(const Track& t, bool first, std::string* out) {
  pf::TracePacket packet;
  if (first) packet.set_sequence_flags(kSeqIncrementalStateCleared);
  pf::TrackDescriptor* d = packet.mutable_track_descriptor();
  d->set_uuid(t.uuid);
  d->set_name(t.name);
  if (t.parent == 0) {
    d->mutable_process()->set_pid(static_cast<int32_t>(t.pid));
    d->mutable_process()->set_process_name(t.name);
  } else {
    d->set_parent_uuid(t.parent);
  }
  if (t.counter) {
    d->mutable_counter()->set_unit(pf::CounterDescriptor::UNIT_COUNT);
  }
  AppendPacket(packet, out);
}

void AddAnnotations(const Json& args, pf::TrackEvent* te) {
  if (!args.is_object()) return;
  for (const auto& [key, value] : args.items()) {
    pf::DebugAnnotation* a = te->add_debug_annotations();
    a->set_name(key);
    if (value.is_string()) {
      a->set_string_value(value.get<std::string>());
    } else if (value.is_number_unsigned()) {
      a->set_uint_value(value.get<uint64_t>());
    } else if (value.is_number_integer()) {
      a->set_int_value(value.get<int64_t>());
    } else {
      a->set_double_value(value.get<double>());
    }
  }
}

// One point of a track's sequence: an event's begin (or its only point) or
// a slice's end.
struct Point {
  uint64_t ns = 0;
  uint32_t event = 0;
  bool end = false;
};

// Each track's points in an order that nests (a slice's end before what
// starts at or after it), then all tracks merged by time; a stable sort
// keeps each track's order among equal times.
std::vector<Point> Points(const Model& m) {
  std::vector<std::vector<uint32_t>> by_track(m.tracks.size());
  for (uint32_t i = 0; i < m.events.size(); ++i) {
    by_track[m.events[i].track].push_back(i);
  }
  std::vector<Point> points;
  const auto ns = [](TimePs t) { return static_cast<uint64_t>(t.ps()) / 1000; };
  for (const std::vector<uint32_t>& events : by_track) {
    std::vector<uint32_t> open;  // slices begun, innermost last
    for (uint32_t i : events) {
      const Event& e = m.events[i];
      while (!open.empty() && m.events[open.back()].end <= e.ts) {
        points.push_back({ns(m.events[open.back()].end), open.back(), true});
        open.pop_back();
      }
      points.push_back({ns(e.ts), i, false});
      if (e.kind == EventKind::kSlice) open.push_back(i);
    }
    for (; !open.empty(); open.pop_back()) {
      points.push_back({ns(m.events[open.back()].end), open.back(), true});
    }
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& a, const Point& b) { return a.ns < b.ns; });
  return points;
}

void AppendPoint(const Model& m, const Point& p, std::string* out) {
  const Event& e = m.events[p.event];
  pf::TracePacket packet;
  packet.set_timestamp(p.ns);
  pf::TrackEvent* te = packet.mutable_track_event();
  te->set_track_uuid(m.tracks[e.track].uuid);
  if (p.end) {
    te->set_type(pf::TrackEvent::TYPE_SLICE_END);
    AppendPacket(packet, out);
    return;
  }
  switch (e.kind) {
    case EventKind::kSlice:
      te->set_type(pf::TrackEvent::TYPE_SLICE_BEGIN);
      break;
    case EventKind::kInstant:
      te->set_type(pf::TrackEvent::TYPE_INSTANT);
      break;
    case EventKind::kCounter:
      te->set_type(pf::TrackEvent::TYPE_COUNTER);
      te->set_counter_value(e.value);
      AppendPacket(packet, out);
      return;
  }
  te->set_name(e.name);
  AddAnnotations(e.args, te);
  for (uint64_t id : e.flows_out) te->add_flow_ids(id);
  for (uint64_t id : e.flows_in) te->add_terminating_flow_ids(id);
  AppendPacket(packet, out);
}

}  // namespace

std::string TimelinePerfetto(const TimelineInputs& in) {
  const Model m = timeline::Build(in);
  std::string out;
  for (size_t i = 0; i < m.tracks.size(); ++i) {
    AppendDescriptor(m.tracks[i], i == 0, &out);
  }
  for (const Point& p : Points(m)) AppendPoint(m, p, &out);
  return out;
}

}  // namespace ccreplay
