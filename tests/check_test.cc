// check/check.h: every rule with a trace that breaks it and one that passes,
// places (file:line:col), output formats.
#include "check/check.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

// A correct 2-chip exchange: a rendezvous, chip 0 writes 64 bytes into chip 1
// with the write + msg path, chip 1 waits for it and copies it locally.
constexpr char kGoodChips[] = R"pb(
  chips {
    chip: 0
    streams {
      id: 0
      instructions { remote_msg_send { qp_id: 1 dst_chip: 1 dst_qp_id: 1 } }
      instructions { msg_wait { qp_id: 1 count: 1 } }
      instructions {
        transfer { qp_id: 0 dst_chip: 1 src_addr: 0 dst_addr: 0 bytes: 64 }
      }
      instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
    }
  }
  chips {
    chip: 1
    streams {
      id: 0
      instructions { remote_msg_send { qp_id: 1 dst_chip: 0 dst_qp_id: 1 } }
      instructions { msg_wait { qp_id: 1 count: 1 } }
      instructions { msg_wait { qp_id: 0 count: 1 } }
      instructions {
        transfer { qp_id: 4 dst_chip: 1 src_addr: 0 dst_addr: 128 bytes: 64 }
      }
      instructions { msg_send { qp_id: 4 dst_qp_id: 4 } }
      instructions { msg_wait { qp_id: 4 count: 1 } }
    }
  }
)pb";

std::string Header(int num_chips, const std::string& extra = "") {
  return absl::StrCat("header { format_version: FORMAT_VERSION_1 num_chips: ",
                      num_chips, " ", extra, " }\n");
}

// One chip with one stream holding `instrs` (text of instructions).
std::string Chip(int chip, const std::string& instrs, int stream = 0) {
  return absl::StrCat("chips { chip: ", chip, " streams { id: ", stream, " ",
                      instrs, " } }\n");
}

v1::Trace Parse(const std::string& text) {
  v1::Trace t;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &t)) << text;
  return t;
}

std::vector<Finding> Check(const v1::Trace& t, const HwConfig& hw) {
  return CheckTrace(t, hw, TraceLocations(), CheckOptions());
}
std::vector<Finding> Check(const std::string& text) {
  return Check(Parse(text), DefaultTps186());
}

std::string All(const std::vector<Finding>& fs) {
  std::string s;
  for (const Finding& f : fs) absl::StrAppend(&s, FormatFinding(f, "t"), "\n");
  return s;
}

// Findings of `rule` in `fs`.
std::vector<Finding> Of(const std::vector<Finding>& fs,
                        const std::string& rule) {
  std::vector<Finding> out;
  for (const Finding& f : fs) {
    if (f.rule == rule) out.push_back(f);
  }
  return out;
}

TEST(CheckTest, TheGoodTracePassesEveryRule) {
  const auto fs = Check(Header(2) + kGoodChips);
  EXPECT_TRUE(fs.empty()) << All(fs);
}

// A rule, a trace that breaks it, one that passes, and what the finding says.
struct RuleCase {
  std::string rule;
  std::string bad;
  std::string good;
  std::string message;  // substring of the finding
  Severity severity = Severity::kError;
  std::string place = "";  // FindingPlace::Text() of the finding, if checked
};

void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.rule; }

class RuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleTest, BadTraceIsFoundGoodTracePasses) {
  const RuleCase& c = GetParam();
  const auto bad = Check(c.bad);
  const auto hits = Of(bad, c.rule);
  ASSERT_FALSE(hits.empty()) << "rule " << c.rule << " not found in:\n"
                             << All(bad);
  EXPECT_THAT(hits[0].message, HasSubstr(c.message));
  EXPECT_EQ(hits[0].severity, c.severity);
  if (!c.place.empty()) {
    EXPECT_EQ(hits[0].place.Text(), c.place);
  }
  const auto good = Check(c.good);
  EXPECT_TRUE(Of(good, c.rule).empty()) << All(good);
  EXPECT_EQ(CountSeverity(good, Severity::kError), 0u) << All(good);
}

const std::string kT01 = R"pb(
  instructions {
    transfer { qp_id: 0 dst_chip: 1 src_addr: 0 dst_addr: 0 bytes: 64 }
  }
  instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
)pb";
// The same into [64, 128): unordered with kT01 but not overlapping it.
const std::string kT01b = R"pb(
  instructions {
    transfer { qp_id: 0 dst_chip: 1 src_addr: 64 dst_addr: 64 bytes: 64 }
  }
  instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
)pb";
const std::string kW1 = "instructions { msg_wait { qp_id: 0 count: 1 } }";

std::vector<RuleCase> Cases() {
  const std::string good = Header(2) + kGoodChips;
  std::vector<RuleCase> v;
  v.push_back({"header",
               "header { format_version: FORMAT_VERSION_1 num_chips: 0 }", good,
               "header.num_chips is 0, must be in [1, 65536]"});
  v.push_back({"collective",
               Header(2, "collective { op: ALLREDUCE n: 3 }") + kGoodChips,
               Header(2, "collective { op: ALLREDUCE n: 2 }") + kGoodChips,
               "header.collective.n is 3, must be in [1, 2]"});
  v.push_back({"chip-range", Header(2) + Chip(2, kW1), good,
               "chips[0]: chip 2 out of range [0, 2)"});
  v.push_back({"chip-duplicate", Header(2) + kGoodChips + Chip(1, ""), good,
               "chips[2]: chip 1 listed twice (also chips[1]"});
  v.push_back({"stream-duplicate",
               Header(3) + kGoodChips +
                   "chips { chip: 2 streams { id: 3 } streams { id: 3 } }",
               Header(3) + kGoodChips +
                   "chips { chip: 2 streams { id: 3 } streams { id: 4 } }",
               "chip 2: stream id 3 listed twice"});
  v.push_back({"no-kind", Header(1) + Chip(0, "instructions { }"),
               Header(1) + Chip(0, "instructions { fence { } }"),
               "instruction has no kind", Severity::kError,
               "chip 0, stream 0, instruction 0 (no kind)"});
  v.push_back(
      {"qp-encoding",
       Header(2) + Chip(0, R"pb(
         instructions {
           transfer { qp_id: 33 dst_chip: 1 src_addr: 0 dst_addr: 0 bytes: 8 }
         }
         instructions { remote_msg_send { qp_id: 33 dst_chip: 1 dst_qp_id: 0 } }
       )pb") +
           Chip(1, kW1),
       Header(2) + Chip(0, R"pb(
         instructions {
           transfer { qp_id: 31 dst_chip: 1 src_addr: 0 dst_addr: 0 bytes: 8 }
         }
         instructions { remote_msg_send { qp_id: 31 dst_chip: 1 dst_qp_id: 0 } }
       )pb") +
           Chip(1, kW1),
       "qp_id 33 names cdma_id 8 (vc_bank 1, by the encoding qp_id = "
       "(cdma_id << 2) | vc_bank), but cdma_id must be in [0, 8)",
       Severity::kError, "chip 0, stream 0, instruction 0 (Transfer)"});
  v.push_back({"counter-range",
               Header(1) + Chip(0, R"pb(
                 instructions { msg_send { qp_id: 0 dst_qp_id: 32 } }
                 instructions { msg_wait { qp_id: 32 count: 1 } })pb"),
               Header(1) + Chip(0, R"pb(
                 instructions { msg_send { qp_id: 0 dst_qp_id: 31 } }
                 instructions { msg_wait { qp_id: 31 count: 1 } })pb"),
               "dst_qp_id 32 out of range [0, 32)"});
  v.push_back(
      {"peer-range",
       Header(2) +
           Chip(0, R"pb(instructions {
                          remote_msg_send { qp_id: 0 dst_chip: 2 dst_qp_id: 0 }
                        })pb"),
       Header(2) +
           Chip(0, R"pb(instructions {
                          remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 }
                        })pb") +
           Chip(1, kW1),
       "dst_chip 2 out of range [0, 2)"});
  v.push_back(
      {"peer-self",
       Header(2) +
           Chip(1, R"pb(instructions {
                          remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 }
                        })pb"),
       Header(2) +
           Chip(0, R"pb(instructions {
                          remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 }
                        })pb") +
           Chip(1, kW1),
       "dst_chip 1 is the instruction's own chip"});
  v.push_back(
      {"zero-bytes",
       Header(1) + Chip(0, R"pb(instructions {
                                  transfer { dst_chip: 0 dst_addr: 64 bytes: 0 }
                                })pb"),
       Header(1) + Chip(0, R"pb(instructions {
                                  transfer { dst_chip: 0 dst_addr: 64 bytes: 1 }
                                })pb"),
       "bytes is 0, must be > 0"});
  v.push_back({"range-overflow",
               Header(1) + Chip(0, R"pb(instructions {
                                          transfer {
                                            dst_chip: 0
                                            src_addr: 18446744073709551600
                                            dst_addr: 0
                                            bytes: 16
                                          }
                                        })pb"),
               Header(1) + Chip(0, R"pb(instructions {
                                          transfer {
                                            dst_chip: 0
                                            src_addr: 18446744073709551599
                                            dst_addr: 0
                                            bytes: 16
                                          }
                                        })pb"),
               "src_addr 18446744073709551600 + bytes 16 overflows 2^64"});
  v.push_back({"wait-count",
               Header(1) + Chip(0, R"pb(
                 instructions { msg_send { qp_id: 0 dst_qp_id: 0 } }
                 instructions { msg_wait { qp_id: 0 count: 0 } })pb"),
               Header(1) + Chip(0, R"pb(
                 instructions { msg_send { qp_id: 0 dst_qp_id: 0 } }
                 instructions { msg_wait { qp_id: 0 count: 1 } })pb"),
               "count is 0, must be >= 1"});
  v.push_back(
      {"send-receive",
       Header(2) + Chip(0, "instructions { send { dst_chip: 1 bytes: 64 } }") +
           Chip(1, R"pb(instructions {
                          receive { src_chip: 0 dst_addr: 64 bytes: 32 }
                        })pb"),
       Header(2) + Chip(0, "instructions { send { dst_chip: 1 bytes: 64 } }") +
           Chip(1, R"pb(instructions {
                          receive { src_chip: 0 dst_addr: 64 bytes: 64 }
                        })pb"),
       "sends 64 bytes to chip 1, but its matching Receive (number 0 "
       "between these chips), chip 1, stream 0, instruction 0 "
       "(Receive), expects 32 bytes"});
  v.push_back(
      {"send-receive",
       Header(2) + Chip(0, "instructions { send { dst_chip: 1 bytes: 64 } }"),
       good, "no matching Receive: chip 0 has 1 Send(s) to chip 1"});
  v.push_back({"empty-trace", Header(4), good,
               "the trace has no instructions (4 chip(s), 0 chip program(s))"});
  v.push_back({"transfer-overlap", Header(1) + Chip(0, R"pb(instructions {
                                                              transfer {
                                                                dst_chip: 0
                                                                src_addr: 0
                                                                dst_addr: 32
                                                                bytes: 64
                                                              }
                                                            })pb"),
               Header(1) + Chip(0, R"pb(instructions {
                                          transfer {
                                            dst_chip: 0
                                            src_addr: 0
                                            dst_addr: 64
                                            bytes: 64
                                          }
                                        })pb"),
               "the ranges overlap on [32, 64)"});
  v.push_back({"msg-count",
               Header(2) + Chip(0, kT01) + Chip(1, R"pb(
                 instructions { msg_wait { qp_id: 0 count: 2 } })pb"),
               Header(2) + Chip(0, kT01) + Chip(1, kW1),
               "waits for a total of 2 message(s) on counter 0 of chip 1 "
               "(this stream's waits up to here), but the trace sends only 1"});
  v.push_back({"msg-count",
               Header(2) + Chip(0, kT01) + "chips { chip: 1 streams { id: 0 " +
                   kW1 + " } streams { id: 1 " + kW1 + " } }",
               Header(2) + Chip(0, kT01 + kT01b) +
                   "chips { chip: 1 streams { id: 0 " + kW1 +
                   " } streams { id: 1 " + kW1 + " } }",
               "the waits of 2 streams on counter 0 of chip 1 consume 2"});
  v.push_back({"msg-unconsumed",
               Header(2) + Chip(0, kT01 + kT01b) + Chip(1, kW1),
               Header(2) + Chip(0, kT01 + kT01b) +
                   Chip(1, "instructions { msg_wait { qp_id: 0 count: 2 } }"),
               "counter 0 of chip 1 receives 2 message(s)", Severity::kWarning,
               "chip 1"});
  // Chip 1 copies [0, 64) out: the data is used, so a missing message is an
  // error; without the copy it is only a warning (below).
  v.push_back(
      {"write-msg",
       Header(2) +
           Chip(0, R"pb(instructions {
                          transfer {
                            qp_id: 0
                            dst_chip: 1
                            src_addr: 0
                            dst_addr: 0
                            bytes: 64
                          }
                        }
                        instructions {
                          remote_msg_send { qp_id: 4 dst_chip: 1 dst_qp_id: 0 }
                        })pb") +
           Chip(1, kW1 + R"pb(instructions {
                                transfer {
                                  qp_id: 4
                                  dst_chip: 0
                                  src_addr: 0
                                  dst_addr: 64
                                  bytes: 64
                                }
                              })pb"),
       Header(2) +
           Chip(0, R"pb(instructions {
                          transfer {
                            qp_id: 0
                            dst_chip: 1
                            src_addr: 0
                            dst_addr: 0
                            bytes: 64
                          }
                        }
                        instructions { fence {} }
                        instructions {
                          remote_msg_send { qp_id: 4 dst_chip: 1 dst_qp_id: 0 }
                        })pb") +
           Chip(1, kW1),
       "writes [0, 64) on chip 1 but no RemoteMsgSend to chip 1 on qp 0 "
       "follows it in this stream"});
  v.push_back({"write-msg", Header(2) + Chip(0, R"pb(instructions {
                                                       transfer {
                                                         qp_id: 0
                                                         dst_chip: 1
                                                         src_addr: 0
                                                         dst_addr: 0
                                                         bytes: 64
                                                       }
                                                     })pb"),
               Header(2) + Chip(0, kT01) + Chip(1, kW1),
               "cannot know when the data has landed (write + msg contract",
               Severity::kWarning});
  // Each chip waits for the other's message, sent only after its own wait.
  v.push_back(
      {"deadlock",
       Header(2) +
           Chip(0, R"pb(
             instructions { msg_wait { qp_id: 1 count: 1 } }
             instructions {
               remote_msg_send { qp_id: 1 dst_chip: 1 dst_qp_id: 1 }
             })pb") +
           Chip(1, R"pb(
             instructions { msg_wait { qp_id: 1 count: 1 } }
             instructions {
               remote_msg_send { qp_id: 1 dst_chip: 0 dst_qp_id: 1 }
             })pb"),
       Header(2) + Chip(0, R"pb(
         instructions { remote_msg_send { qp_id: 1 dst_chip: 1 dst_qp_id: 1 } }
         instructions { msg_wait { qp_id: 1 count: 1 } })pb") +
           Chip(1, R"pb(
             instructions { msg_wait { qp_id: 1 count: 1 } }
             instructions {
               remote_msg_send { qp_id: 1 dst_chip: 0 dst_qp_id: 1 }
             })pb"),
       "cycle of waits, no schedule can release it: chip 0, stream 0, "
       "instruction 0 (MsgWait) waits on counter 1 for chip 1, stream "
       "0, instruction 1 (RemoteMsgSend), which its stream issues "
       "only after chip 1, stream 0, instruction 0 (MsgWait) waits on "
       "counter 1 for chip 0, stream 0, instruction 1 (RemoteMsgSend)"});
  // Chip 1 reads [0, 64) before it waits for chip 0's message.
  v.push_back(
      {"race",
       Header(2) + Chip(0, kT01) + Chip(1, R"pb(
         instructions {
           transfer { qp_id: 4 dst_chip: 1 src_addr: 0 dst_addr: 128 bytes: 64 }
         }
         instructions { msg_wait { qp_id: 0 count: 1 } })pb"),
       Header(2) + Chip(0, kT01) + Chip(1, R"pb(
         instructions { msg_wait { qp_id: 0 count: 1 } }
         instructions {
           transfer { qp_id: 4 dst_chip: 1 src_addr: 0 dst_addr: 128 bytes: 64 }
         })pb"),
       "race on chip 1 GMEM [0, 64): this instruction reads it (source "
       "of a Transfer to chip 1) and chip 0, stream 0, instruction 0 "
       "(Transfer) writes it (from chip 0)",
       Severity::kError, "chip 1, stream 0, instruction 0 (Transfer)"});
  // Chips 0 and 1 both reduce into chip 2, unordered.
  const std::string sum_to_2 = R"pb(
    instructions {
      transfer {
        qp_id: 0
        dst_chip: 2
        src_addr: 0
        dst_addr: 0
        bytes: 64
        reduce: REDUCE_SUM
      }
    }
    instructions { remote_msg_send { qp_id: 0 dst_chip: 2 dst_qp_id: 0 } })pb";
  v.push_back({"race-reduce",
               Header(3) + Chip(0, sum_to_2) + Chip(1, sum_to_2) +
                   Chip(2, "instructions { msg_wait { qp_id: 0 count: 2 } }"),
               // Chip 2 tells chip 1 when chip 0's sum has landed; chip 1's
               // sum counts on another counter (8), so each counter has one
               // sender and the order is certain.
               Header(3) + Chip(0, sum_to_2) + Chip(1, R"pb(
                 instructions { msg_wait { qp_id: 4 count: 1 } }
                 instructions {
                   transfer {
                     qp_id: 0
                     dst_chip: 2
                     src_addr: 0
                     dst_addr: 0
                     bytes: 64
                     reduce: REDUCE_SUM
                   }
                 }
                 instructions {
                   remote_msg_send { qp_id: 0 dst_chip: 2 dst_qp_id: 8 }
                 })pb") +
                   Chip(2, R"pb(
                     instructions { msg_wait { qp_id: 0 count: 1 } }
                     instructions {
                       remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 4 }
                     }
                     instructions { msg_wait { qp_id: 8 count: 1 } })pb"),
               "(both are REDUCE_SUM", Severity::kWarning});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& info) {
                           std::string name =
                               absl::StrCat(info.param.rule, "_", info.index);
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(CheckTest, HwMismatch) {
  HwConfig hw = DefaultTps186();
  hw.num_chips = 4;
  const auto bad = Check(Parse(Header(2) + kGoodChips), hw);
  ASSERT_EQ(Of(bad, "hw-mismatch").size(), 1u) << All(bad);
  EXPECT_THAT(bad[0].message,
              HasSubstr("the trace has 2 chips (header.num_chips), but the "
                        "hardware config 'TPS186' has 4"));
  hw.num_chips = 2;
  EXPECT_TRUE(Check(Parse(Header(2) + kGoodChips), hw).empty());
}

TEST(CheckTest, QpEncodingFollowsTheConfiguredEngineCount) {
  HwConfig hw = DefaultTps186();
  hw.cdma_engines = 1;  // qps 0..3 only; the good trace uses qp 4
  const auto fs = Check(Parse(Header(2) + kGoodChips), hw);
  const auto q = Of(fs, "qp-encoding");
  ASSERT_EQ(q.size(), 2u) << All(fs);
  EXPECT_EQ(q[0].place.Text(), "chip 1, stream 0, instruction 3 (Transfer)");
  EXPECT_EQ(q[1].place.Text(), "chip 1, stream 0, instruction 4 (MsgSend)");
  EXPECT_THAT(q[0].message, HasSubstr("qp_id 4 names cdma_id 1 (vc_bank 0"));
  // msg_send dst_qp_id 4 and msg_wait qp_id 4: counters are qps too.
  EXPECT_EQ(Of(fs, "counter-range").size(), 2u);
}

TEST(CheckTest, ReduceOpOutOfRange) {
  v1::Trace t = Parse(
      Header(1) + Chip(0, R"pb(instructions {
                                 transfer { dst_chip: 0 dst_addr: 64 bytes: 8 }
                               })pb"));
  EXPECT_TRUE(Check(t, DefaultTps186()).empty());
  t.mutable_chips(0)
      ->mutable_streams(0)
      ->mutable_instructions(0)
      ->mutable_transfer()
      ->set_reduce(static_cast<v1::ReduceOp>(7));
  const auto fs = Check(t, DefaultTps186());
  ASSERT_EQ(Of(fs, "reduce-op").size(), 1u) << All(fs);
  EXPECT_THAT(fs[0].message, HasSubstr("reduce 7 is not a known ReduceOp"));
}

TEST(CheckTest, UnknownFieldsAndDataOnMessageOnlyInstructions) {
  v1::Trace t = Parse(Header(2) + kGoodChips);
  ASSERT_TRUE(Check(t, DefaultTps186()).empty());
  // As a newer writer might: bytes (field 5) on a RemoteMsgSend, and an
  // unknown field on a Transfer and on the header.
  v1::Instruction* rms =
      t.mutable_chips(0)->mutable_streams(0)->mutable_instructions(3);
  auto* m = rms->mutable_remote_msg_send();
  m->GetReflection()->MutableUnknownFields(m)->AddVarint(5, 4096);
  auto* tr = t.mutable_chips(0)
                 ->mutable_streams(0)
                 ->mutable_instructions(2)
                 ->mutable_transfer();
  tr->GetReflection()->MutableUnknownFields(tr)->AddVarint(9, 1);
  auto* h = t.mutable_header();
  h->GetReflection()->MutableUnknownFields(h)->AddVarint(42, 1);
  const auto fs = Check(t, DefaultTps186());
  const auto data = Of(fs, "msg-data-fields");
  ASSERT_EQ(data.size(), 1u) << All(fs);
  EXPECT_EQ(data[0].place.Text(),
            "chip 0, stream 0, instruction 3 (RemoteMsgSend)");
  EXPECT_THAT(data[0].message,
              HasSubstr("RemoteMsgSend carries field(s) 5 beyond its schema"));
  const auto unknown = Of(fs, "unknown-field");
  ASSERT_EQ(unknown.size(), 2u) << All(fs);
  EXPECT_THAT(unknown[0].message,
              HasSubstr("header has field(s) 42 that schema v1 does not "
                        "define"));
  EXPECT_EQ(unknown[1].place.Text(),
            "chip 0, stream 0, instruction 2 (Transfer)");
}

TEST(CheckTest, AnalysisLimitIsReported) {
  const v1::Trace t = Parse(Header(2) + kGoodChips);
  CheckOptions opt;
  opt.race.max_clock_entries = 1;  // 2 streams x 2 channels do not fit
  const auto fs = CheckTrace(t, DefaultTps186(), TraceLocations(), opt);
  const auto lim = Of(fs, "analysis-limit");
  ASSERT_EQ(lim.size(), 1u) << All(fs);
  EXPECT_EQ(lim[0].severity, Severity::kWarning);
  EXPECT_THAT(lim[0].message,
              HasSubstr("happens-before analysis skipped: 2 streams x 4 "
                        "clock entries exceed the bound of 1"));
  EXPECT_TRUE(CheckTrace(t, DefaultTps186(), TraceLocations(), {}).empty());
}

TEST(CheckTest, EveryRuleIsDocumentedOnce) {
  std::vector<std::string> ids;
  for (const RuleInfo& r : CheckRules()) ids.emplace_back(r.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
  EXPECT_EQ(ids.size(), 29u);
}

TEST(CheckTest, TextLocationsAndFormat) {
  // Lines: 1 header, 2 chips, 3 streams, 4 and 5 the instructions, 6 chip 1.
  const std::string text =
      "header { format_version: FORMAT_VERSION_1 num_chips: 2 }\n"
      "chips { chip: 0\n"
      "  streams { id: 0\n"
      "    instructions { transfer { qp_id: 40 dst_chip: 1 bytes: 64 } }\n"
      "    instructions { remote_msg_send { dst_chip: 1 } } } }\n"
      "chips { chip: 1 streams { instructions { msg_wait { count: 1 } } } }\n";
  TraceLocations loc;
  auto t = ParseTraceWithLocations(text, "t.txtpb", &loc);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(loc.instructions.size(), 2u);
  ASSERT_EQ(loc.instructions[0][0].size(), 2u);
  EXPECT_EQ(loc.header.line, 1);
  EXPECT_EQ(loc.chips[0].line, 2);
  EXPECT_EQ(loc.chips[0].column, 1);
  EXPECT_EQ(loc.streams[0][0].line, 3);
  EXPECT_EQ(loc.streams[0][0].column, 3);
  EXPECT_EQ(loc.instructions[0][0][0].line, 4);
  EXPECT_EQ(loc.instructions[0][0][0].column, 5);
  EXPECT_EQ(loc.instructions[0][0][1].line, 5);
  EXPECT_EQ(loc.chips[1].line, 6);
  EXPECT_EQ(loc.instructions[1][0][0].column, 27);
  CheckOptions opt;
  opt.file_name = "t.txtpb";
  const auto fs = CheckTrace(*t, DefaultTps186(), loc, opt);
  ASSERT_EQ(fs.size(), 1u) << All(fs);
  EXPECT_EQ(FormatFinding(fs[0], "t.txtpb"),
            "t.txtpb:4:5: chip 0, stream 0, instruction 0 (Transfer): error "
            "[qp-encoding]: qp_id 40 names cdma_id 10 (vc_bank 0, by the "
            "encoding qp_id = (cdma_id << 2) | vc_bank), but cdma_id must be "
            "in [0, 8): the hardware has 8 CDMA engines per chip");
  const std::string json = FindingsJson(fs, "t.txtpb");
  EXPECT_THAT(json, HasSubstr("\"errors\":1,\"warnings\":0"));
  EXPECT_THAT(json, HasSubstr("{\"rule\":\"qp-encoding\",\"severity\":"
                              "\"error\",\"chip\":0,\"stream\":0,"
                              "\"instruction\":0,\"kind\":\"Transfer\","
                              "\"line\":4,\"column\":5,"));
  // A binary trace has no locations: the place is still named.
  std::string bin;
  ASSERT_TRUE(t->SerializeToString(&bin));
  auto tb = ParseTraceWithLocations(bin, "t.pb", &loc);
  ASSERT_TRUE(tb.ok());
  EXPECT_TRUE(loc.empty());
  const auto fb = CheckTrace(*tb, DefaultTps186(), loc, opt);
  ASSERT_EQ(fb.size(), 1u);
  EXPECT_THAT(FormatFinding(fb[0], "t.pb"),
              HasSubstr("t.pb: chip 0, stream 0, instruction 0 (Transfer): "
                        "error [qp-encoding]"));
}

TEST(CheckTest, RaceMentionsTheOtherInstructionsLocation) {
  const std::string text =
      Header(2) + Chip(0, kT01) + Chip(1, R"pb(
        instructions {
          transfer { qp_id: 4 dst_chip: 1 src_addr: 0 dst_addr: 128 bytes: 64 }
        }
        instructions { msg_wait { qp_id: 0 count: 1 } })pb");
  TraceLocations loc;
  auto t = ParseTraceWithLocations(text, "r.txtpb", &loc);
  ASSERT_TRUE(t.ok());
  CheckOptions opt;
  opt.file_name = "r.txtpb";
  const auto fs = Of(CheckTrace(*t, DefaultTps186(), loc, opt), "race");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_TRUE(fs[0].has_related);
  EXPECT_EQ(fs[0].related.Text(), "chip 0, stream 0, instruction 0 (Transfer)");
  EXPECT_THAT(fs[0].message,
              HasSubstr("chip 0, stream 0, instruction 0 (Transfer) at "
                        "r.txtpb:3:3 writes it (from chip 0)"));
}

TEST(CheckTest, SendReceiveMatchedAcrossStreamsAsMultiset) {
  const std::string two_streams =
      "chips { chip: 1 streams { id: 0 instructions { receive { src_chip: 0 "
      "dst_addr: 0 bytes: 8 } } } streams { id: 1 instructions { receive { "
      "src_chip: 0 dst_addr: 64 bytes: 16 } } } }";
  const auto ok = Check(Header(2) + Chip(0, R"pb(
                          instructions { send { dst_chip: 1 bytes: 16 } }
                          instructions {
                            send { qp_id: 4 dst_chip: 1 src_addr: 32 bytes: 8 }
                          })pb") +
                        two_streams);
  EXPECT_EQ(CountSeverity(ok, Severity::kError), 0u) << All(ok);
  const auto bad = Check(Header(2) + Chip(0, R"pb(
                           instructions { send { dst_chip: 1 bytes: 16 } }
                           instructions {
                             send { qp_id: 4 dst_chip: 1 src_addr: 32 bytes: 9 }
                           })pb") +
                         two_streams);
  const auto sr = Of(bad, "send-receive");
  ASSERT_EQ(sr.size(), 1u) << All(bad);
  EXPECT_THAT(sr[0].message, HasSubstr("no Send of 8 bytes between chip 0 "
                                       "and chip 1 is left to match it"));
}

}  // namespace
}  // namespace ccreplay
