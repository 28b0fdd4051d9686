// Imports an MSCCL-IR XML algorithm (import/msccl_xml.h) as a ccreplay trace:
// threadblocks become streams, channels CDMA engines (and so qp ids), each
// matched send/receive the write + msg path of docs/spec-notes.md §4 with a
// receiver-ready message where the sender could otherwise overwrite memory
// the receiver still uses, reductions reduce-on-write Transfers or local
// reduce Transfers, depid/deps MsgSend/MsgWait between streams of one chip,
// local copies local Transfers. The mapping and why: docs/import-msccl.md.
#ifndef CCREPLAY_IMPORT_MSCCL_IMPORT_H_
#define CCREPLAY_IMPORT_MSCCL_IMPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hw/config.h"
#include "import/msccl_xml.h"
#include "proto/trace.pb.h"

namespace ccreplay {

struct MscclImportOptions {
  // M of docs/spec-notes.md §2 for the file's collective, bytes (AllReduce: each chip's
  // vector; AllGather: the whole output; ReduceScatter: each chip's input;
  // AllToAll: each chip's total send). The chunk is M / nchunksperloop bytes.
  // REQUIRES: > 0 and a multiple of nchunksperloop (an error otherwise).
  uint64_t bytes = 0;
  // CDMA engines every channel stripes its transfers over; 0 = the most
  // that the engines (engines / nchannels) and the message counters allow.
  uint32_t engines_per_channel = 0;
  // When set, the file's rank count must build this topology, and the
  // header names it.
  std::optional<std::pair<TopologyKind, TopologyParams>> topology;
};

// Imports the algorithm in `xml`; `file` names it in errors and (its base
// name) in header.source. Errors are InvalidArgument and name the place:
// "<file>:<line>:<col>: gpu 3 tb 0 step 5 (rrs): ...".
absl::StatusOr<v1::Trace> ImportMsccl(absl::string_view xml,
                                      const std::string& file,
                                      const HwConfig& hw,
                                      const MscclImportOptions& options);

// Reads `path` and imports it.
absl::StatusOr<v1::Trace> ImportMscclFile(const std::string& path,
                                          const HwConfig& hw,
                                          const MscclImportOptions& options);

// True for a name that the commands treat as MSCCL-IR XML: it ends in ".xml".
bool IsMscclXmlPath(absl::string_view path);

}  // namespace ccreplay

#endif  // CCREPLAY_IMPORT_MSCCL_IMPORT_H_
