// number_of_streams has one default and one check (streams/number_of_streams.h):
// every entry point that takes a number of streams (the params of the
// executors and of the evaluator, a run's own number, the stream pool) gives
// the default when none is given and the same hostir::Error for a bad one.

#include "hostir/host_ir/lowering.h"
#include "hostir/runtime/host_executor.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/streams/number_of_streams.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

void buildRelu(Fusion& fusion) {
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(1);
  fusion.addInput(x);
  fusion.addOutput(relu(x));
}

TEST(NumberOfStreams, EveryParamsStructDefaultsToTheOneDefault) {
  EXPECT_EQ(ExecutorParams{}.number_of_streams, runtime::kDefaultNumberOfStreams);
  EXPECT_EQ(MultiDeviceExecutorParams{}.number_of_streams, runtime::kDefaultNumberOfStreams);
  EXPECT_EQ(HostIrEvaluatorParams{}.number_of_streams, runtime::kDefaultNumberOfStreams);
  EXPECT_EQ(runtime::StreamPool().numberOfStreams(), runtime::kDefaultNumberOfStreams);
  Fusion fusion;
  buildRelu(fusion);
  HostExecutor executor(fusion);
  executor.run({at::ones({3})});
  EXPECT_EQ(executor.evaluator().streamPool().numberOfStreams(), runtime::kDefaultNumberOfStreams);
}

TEST(NumberOfStreams, EveryEntryPointGivesTheSameErrorForABadNumber) {
  Fusion fusion;
  buildRelu(fusion);
  const std::vector<PolymorphicValue> inputs{PolymorphicValue(at::ones({3}))};
  for (int bad : {0, -1}) {
    const std::string expected = runtime::numberOfStreamsError(std::to_string(bad));
    SCOPED_TRACE(expected);
    EXPECT_NE(expected.find("number_of_streams must be a positive int"), std::string::npos);
    EXPECT_NE(expected.find("the default, " + std::to_string(runtime::kDefaultNumberOfStreams)),
              std::string::npos);
    EXPECT_EQ(errorMessage([&] { runtime::checkedNumberOfStreams(bad); }), expected);
    EXPECT_EQ(errorMessage([&] { runtime::StreamPool pool(bad); }), expected);
    EXPECT_EQ(errorMessage([&] {
                HostIrEvaluator evaluator(lowerToHostIr(fusion), {.number_of_streams = bad});
              }),
              expected);
    HostIrEvaluator evaluator(lowerToHostIr(fusion));
    HostIrRunOptions options;
    options.number_of_streams = bad;
    EXPECT_EQ(errorMessage([&] { evaluator.run(inputs, {}, options); }), expected);
    EXPECT_EQ(errorMessage([&] { HostExecutor executor(fusion, {.number_of_streams = bad}); }),
              expected);
    EXPECT_EQ(errorMessage([&] { Executor executor(fusion, {.number_of_streams = bad}); }),
              expected);
    HostExecutor executor(fusion);
    EXPECT_EQ(errorMessage([&] { executor.run(inputs, {}, bad); }), expected);
    EXPECT_EQ(errorMessage([&] { executor.runComputeOnly({at::ones({3})}, bad); }), expected);
  }
  // An int beyond an int is refused, not truncated.
  EXPECT_EQ(errorMessage([] { runtime::checkedNumberOfStreams(int64_t{1} << 40); }),
            runtime::numberOfStreamsError(std::to_string(int64_t{1} << 40)));
  EXPECT_EQ(runtime::checkedNumberOfStreams(7), 7);
}

}  // namespace
}  // namespace hostir::test
