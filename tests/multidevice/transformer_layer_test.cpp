// The Megatron-style transformer layer (tools/megatron_blocks.h), run by
// every rank of a job started with `hostir launch -n K` (K = 1, 2, 4): each
// rank's output shard is checked against the same layer computed in one
// process with plain ATen (tools/transformer_layer_reference.h), and the
// host program is checked for the collectives the shardings imply.
//
// Every rank runs every test in the same order (their collectives must
// match up); structural checks use EXPECT before a run for the same reason.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/multidevice_executor.h"
#include "megatron_blocks.h"
#include "transformer_layer_reference.h"

namespace hostir::tools {
namespace {

class TransformerLayerTest : public ::testing::Test {
 protected:
  // Sizes that every world size of the tests (1, 2, 4) divides: heads,
  // tokens and ffn by the ranks, each rank's tokens by 4 chunks.
  static constexpr TransformerLayerSizes kSizes{.tokens = 32, .hidden = 32, .heads = 4, .ffn = 64};

  void expectMatchesReference(int64_t chunks, uint64_t seed) {
    std::unique_ptr<Fusion> fusion =
        buildTransformerLayer(n_, kSizes.hidden / kSizes.heads, chunks);
    MultiDeviceExecutor exec(*fusion, comm_, {.number_of_streams = 4});
    TransformerLayerTensors tensors = drawTransformerLayer(kSizes, seed);
    at::Tensor expected =
        transformerLayerReference(tensors, kSizes.heads).chunk(n_, 0)[me_].contiguous();
    std::vector<at::Tensor> outs =
        exec.run(transformerLayerLocalInputs(tensors, kSizes.heads, n_, me_));
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_EQ(outs[0].sizes(), expected.sizes());
    EXPECT_TRUE(at::allclose(outs[0], expected, 1e-4, 1e-4))
        << "rank " << me_ << " max |diff| = " << (outs[0] - expected).abs().max().item<double>()
        << "\n"
        << exec.hostProgram().toString();
  }

  Communicator& comm_ = Communicator::getInstance();
  const int64_t n_ = comm_.size();
  const int64_t me_ = comm_.deviceId();
};

TEST_F(TransformerLayerTest, UnchunkedMatchesSingleProcessReference) {
  expectMatchesReference(/*chunks=*/1, /*seed=*/0);
}

TEST_F(TransformerLayerTest, PipelinedLayerMatchesSingleProcessReference) {
  expectMatchesReference(/*chunks=*/4, /*seed=*/1);
}

// Uneven query chunks (32 tokens in 3) and one chunk per rank's token pair.
TEST_F(TransformerLayerTest, UnevenAndManyChunksMatchSingleProcessReference) {
  expectMatchesReference(/*chunks=*/3, /*seed=*/2);
  expectMatchesReference(/*chunks=*/kSizes.tokens / 4, /*seed=*/3);
}

// The collectives in program order: the tokens allgathered for q, k, v, the
// heads' partial sums reduce-scattered onto the tokens, then the MLP
// block's allgather and reduce-scatter, in program order, on every rank.
TEST_F(TransformerLayerTest, HostProgramHoldsTheLayersCollectives) {
  std::unique_ptr<Fusion> fusion = buildTransformerLayer(n_, kSizes.hidden / kSizes.heads, 1);
  // The program as written: the automatic stream splits (on by default)
  // would prepare it at the first run and might chunk it.
  MultiDeviceExecutor exec(*fusion, comm_,
                           {.number_of_streams = 4, .automatic_stream_splits = false});
  const std::string program = exec.hostProgram().toString();
  std::vector<std::string> types;
  static const std::regex kCommunication(R"(Communication \d+ \(type=(\w+))");
  for (std::sregex_iterator it(program.begin(), program.end(), kCommunication), end; it != end;
       ++it) {
    types.push_back((*it)[1]);
  }
  // On one rank too (teams of one: local copies).
  const std::vector<std::string> expected{"Allgather", "ReduceScatter", "Allgather",
                                          "ReduceScatter"};
  EXPECT_EQ(types, expected) << program;
}

// With chunks, every collective of both halves is posted inside a loop (a
// loop body's lines are indented twice): the attention's allgather chunk by
// chunk (prefetched), the sums over the heads reduce-scattered in the query
// loop as each chunk of the last rank's rows completes them, then the MLP
// block's allgathers and reduce-scatters; but for the reduce-scatter after
// the query loop of the rows the last rank lacks (empty unless the shards
// are uneven). With chunks that divide the
// tokens among the ranks (4) and chunks that straddle two ranks' rows (3),
// whose results are checked above.
TEST_F(TransformerLayerTest, PipelinedHostProgramChunksEveryCollective) {
  for (int64_t chunks : {4, 3}) {
    SCOPED_TRACE("chunks = " + std::to_string(chunks));
    std::unique_ptr<Fusion> fusion =
        buildTransformerLayer(n_, kSizes.hidden / kSizes.heads, chunks);
    MultiDeviceExecutor exec(*fusion, comm_, {.number_of_streams = 4});
    const std::string program = exec.hostProgram().toString();
    std::vector<std::string> in_loops;
    std::vector<std::string> whole;
    static const std::regex kCommunication(R"((\n +)Communication \d+ \(type=(\w+))");
    for (std::sregex_iterator it(program.begin(), program.end(), kCommunication), end; it != end;
         ++it) {
      ((*it)[1].length() > 3 ? in_loops : whole).push_back((*it)[2]);
    }
    const std::vector<std::string> expected{"Allgather", "ReduceScatter", "Allgather",
                                            "ReduceScatter"};
    EXPECT_EQ(in_loops, expected) << program;
    // After the query loop, the rows the last rank does not hold (uneven
    // shards; none here, so it moves nothing): the only whole collective.
    EXPECT_EQ(whole, std::vector<std::string>{"ReduceScatter"}) << program;
    // Each reduce-scatter posted in a loop has its Wait in the caller's
    // loop after the one that posts it (a top-level FOR between them), so
    // no stream waits for its own chunk's sums before its next chunk.
    static const std::regex kReduceScatter(R"(\n    +Communication (\d+) \(type=ReduceScatter)");
    int reduce_scatters = 0;
    for (std::sregex_iterator it(program.begin(), program.end(), kReduceScatter), end; it != end;
         ++it, ++reduce_scatters) {
      const size_t posted = static_cast<size_t>(it->position());
      const size_t waited = program.find("Wait Communication " + (*it)[1].str() + "\n", posted);
      ASSERT_NE(waited, std::string::npos) << program;
      EXPECT_NE(program.substr(posted, waited - posted).find("\n  FOR "), std::string::npos)
          << "the Wait of reduce-scatter " << (*it)[1] << " is in the loop that posts it\n"
          << program;
    }
    EXPECT_EQ(reduce_scatters, 2) << program;
    // Each query chunk reads the keys up to its last row: a slice of Kᵀ's
    // columns whose extent is the loop's.
    EXPECT_NE(program.find(", 0, i"), std::string::npos) << program;
  }
}

}  // namespace
}  // namespace hostir::tools
