#include "hostir/host_ir/passes/pass_registry.h"

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/scoped_env.h"
#include "hostir/ir/fusion.h"

namespace hostir {
namespace {

using Names = std::vector<std::string>;

template <typename P>
Names namesOf(const PassPipeline<P>& pipeline) {
  Names names;
  for (const Pass<P>& pass : pipeline.passes()) {
    names.push_back(pass.name);
  }
  return names;
}

// One table: unique names, a summary each, the presegmentation stage first,
// each entry with the run function of its stage.
TEST(PassRegistry, OneTableInStageOrder) {
  std::set<std::string> seen;
  bool host_ir_started = false;
  for (const RegisteredPass& pass : registeredPasses()) {
    EXPECT_TRUE(seen.insert(pass.name).second) << pass.name << " registered twice";
    EXPECT_FALSE(pass.summary.empty()) << pass.name;
    if (pass.stage == PassStage::HostIr) {
      host_ir_started = true;
      EXPECT_TRUE(pass.run_on_host_program != nullptr) << pass.name;
    } else {
      EXPECT_FALSE(host_ir_started) << pass.name << " (presegmentation) after a host IR pass";
      EXPECT_TRUE(pass.run_on_fusion != nullptr) << pass.name;
    }
  }
}

// The pipelines are built from the table: one device gets the Always host IR
// passes, a rank of a multi-device program every host IR pass, in order.
TEST(PassRegistry, PipelinesFollowTheTable) {
  EXPECT_EQ(
      namesOf(hostIrPipeline(std::nullopt)),
      (Names{"stream_parallelization", "causal_key_ranges", "buffer_shrinking", "batched_rhs_gemms",
             "batched_matmul_sums", "loop_host_units", "gemm_epilogues", "recompute_scheduling"}));
  EXPECT_EQ(namesOf(hostIrPipeline(MultiDeviceLowering{1, {}})),
            (Names{"resharding_to_communication", "specialize_encodings", "stream_axes_check",
                   "other_devices_work_removal", "reduce_scatter_of_sums", "stream_parallelization",
                   "causal_key_ranges", "buffer_shrinking", "batched_rhs_gemms",
                   "batched_matmul_sums", "loop_host_units", "gemm_epilogues",
                   "collective_scheduling", "recompute_scheduling"}));
  EXPECT_EQ(namesOf(presegmentationPipeline()),
            (Names{"validate_shardings", "propagate_shardings", "insert_stream_splits",
                   "insert_reshardings", "reorder_sharded_axis", "make_resharding_contiguous",
                   "propagate_stream_axes"}));
  // A one-device fusion gets the presegmentation passes that run always.
  EXPECT_EQ(namesOf(presegmentationPipeline(/*multidevice=*/false)),
            (Names{"propagate_stream_axes"}));
}

// HOSTIR_DISABLE_PASS may name a pass of a later stage: the presegmentation
// pipeline, which runs first, accepts a host IR pass's name.
TEST(PassRegistry, DisablingAPassOfALaterStageIsNoError) {
  test::ScopedEnv env("HOSTIR_DISABLE_PASS", "loop_host_units");
  Fusion fusion;
  EXPECT_NO_THROW(presegmentationPipeline().run(fusion));
}

// `hostir passes` prints one row per pass, in pipeline order, numbered, with
// its stage, scope and summary.
TEST(PassRegistry, DescriptionListsEveryPassInOrder) {
  std::istringstream text(describePasses());
  std::string line;
  ASSERT_TRUE(std::getline(text, line));
  EXPECT_NE(line.find("what it does"), std::string::npos) << line;
  int index = 1;
  for (const RegisteredPass& pass : registeredPasses()) {
    ASSERT_TRUE(std::getline(text, line)) << "no row for " << pass.name;
    std::istringstream fields(line);
    int number = 0;
    fields >> number;
    EXPECT_EQ(number, index++) << line;
    EXPECT_NE(line.find(pass.name), std::string::npos) << line;
    EXPECT_NE(line.find(pass.summary), std::string::npos) << line;
    EXPECT_NE(line.find(pass.scope == PassScope::Always ? "always" : "multi-device"),
              std::string::npos)
        << line;
  }
  EXPECT_FALSE(std::getline(text, line)) << "a row for no pass: " << line;
}

}  // namespace
}  // namespace hostir
