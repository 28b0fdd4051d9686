// MSCCL-IR XML (the format the MSCCLang compiler of msccl-tools emits and the
// MSCCL runtime executes), parsed with tinyxml2 into plain structs that keep
// the place of every element. Only the structure is checked here (required
// attributes are integers, steps are numbered in order, tb and gpu ids are
// unique); what the schedule means is checked by the importer
// (import/msccl_import.h). docs/import-msccl.md describes the format.
#ifndef CCREPLAY_IMPORT_MSCCL_XML_H_
#define CCREPLAY_IMPORT_MSCCL_XML_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccreplay {
namespace msccl {

// 1-based line and column of an element's '<' in the XML text.
struct XmlPlace {
  int line = 0;
  int column = 0;
};

enum class StepType : uint8_t {
  kSend,                // s
  kRecv,                // r
  kRecvCopySend,        // rcs
  kRecvReduceCopy,      // rrc
  kRecvReduceSend,      // rrs
  kRecvReduceCopySend,  // rrcs
  kReduce,              // re
  kCopy,                // cpy
  kNop,                 // nop
};
absl::string_view StepTypeName(StepType t);  // "s", "rrcs", ...
bool StepSends(StepType t);     // s, rcs, rrs, rrcs: pairs with a receive
bool StepReceives(StepType t);  // r, rcs, rrc, rrs, rrcs: pairs with a send

// 'i' input, 'o' output, 's' scratch.
struct Step {
  int s = 0;
  StepType type = StepType::kNop;
  char srcbuf = 'i';
  char dstbuf = 'i';
  int64_t srcoff = 0;  // chunks
  int64_t dstoff = 0;  // chunks
  int64_t cnt = 0;     // chunks
  int depid = -1;      // threadblock id of the step this one waits for
  int deps = -1;       // that step's index
  bool hasdep = false;
  XmlPlace place;
};

struct Threadblock {
  int id = 0;
  int send = -1;  // peer rank this tb sends to, -1 none
  int recv = -1;  // peer rank this tb receives from, -1 none
  int chan = 0;
  std::vector<Step> steps;
  XmlPlace place;
};

struct Gpu {
  int id = 0;
  int64_t i_chunks = 0;
  int64_t o_chunks = 0;
  int64_t s_chunks = 0;
  std::vector<Threadblock> tbs;  // in file order
  XmlPlace place;
};

struct Algo {
  std::string name;
  std::string proto;
  std::string coll;
  int nchannels = 0;
  int nchunksperloop = 0;
  int ngpus = 0;
  bool inplace = false;
  std::vector<Gpu> gpus;  // gpus[r].id == r (checked)
  XmlPlace place;
};

// Parses `xml`. Errors are InvalidArgument and start with
// "<file>:<line>:<col>: " (tinyxml2 reports only the line of a syntax error:
// "<file>:<line>: malformed XML: ..."). Any input gives a status, never a
// crash.
absl::StatusOr<Algo> ParseAlgo(absl::string_view xml, const std::string& file);

}  // namespace msccl
}  // namespace ccreplay

#endif  // CCREPLAY_IMPORT_MSCCL_XML_H_
