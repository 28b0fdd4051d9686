// Imported MSCCL-IR algorithms under many schedules: the ready messages the
// importer leaves out (docs/import-msccl.md, "Ready messages") must not be
// needed in any valid order of deliveries, so VerifySemantics is run under
// random per-qp schedules, not only the lazy one. Links ccreplay_cli, which
// holds both the importer and the verifier.
#include <filesystem>
#include <string>

#include "check/semantics.h"
#include "gtest/gtest.h"
#include "import/msccl_import.h"

namespace ccreplay {
namespace {

const std::string kShared = CCREPLAY_SOURCE_DIR "/../shared/data/msccl";
const std::string kOwn = CCREPLAY_SOURCE_DIR "/tests/data/msccl";

void VerifyUnderRandomSchedules(const std::string& path, uint64_t bytes) {
  HwConfig hw;
  hw.name = "TPS186";
  hw.cdma_engines = 8;
  for (uint32_t k : {0u, 1u}) {  // the most engines that fit, and one
    MscclImportOptions opt;
    opt.bytes = bytes;
    opt.engines_per_channel = k;
    auto t = ImportMscclFile(path, hw, opt);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE(VerifySemantics(*t).ok()) << path;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      SemanticsOptions o;
      o.random = true;
      o.seed = seed;
      const absl::Status s = VerifySemantics(*t, o);
      ASSERT_TRUE(s.ok()) << path << " K=" << k << " seed " << seed << ": "
                          << s;
    }
  }
}

TEST(ImportSemanticsTest, RealFilesUnderRandomSchedules) {
  if (!std::filesystem::exists(kShared + "/allreduce_ring_8_1.xml")) {
    GTEST_SKIP() << "the msccl-tools files are not at " << kShared
                 << " (CI keeps ../shared beside the clone)";
  }
  // 8 chunks of 24 bytes: stripes of 3 bytes over 8 engines.
  for (const char* f :
       {"allreduce_ring_8_1.xml", "allgather_recursive_doubling_8_1.xml",
        "alltoall_allpairs_8_1.xml"}) {
    VerifyUnderRandomSchedules(kShared + "/" + f, 8 * 24);
  }
}

TEST(ImportSemanticsTest, HandWrittenFilesUnderRandomSchedules) {
  for (const char* f :
       {"allgather_ring_depid_4.xml", "allreduce_scratch_3.xml",
        "allreduce_ring_2ch_4.xml", "reducescatter_ring_oop_4.xml"}) {
    VerifyUnderRandomSchedules(kOwn + "/" + f, 24 * 8);
  }
}

}  // namespace
}  // namespace ccreplay
