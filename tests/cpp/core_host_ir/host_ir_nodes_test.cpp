#include <gtest/gtest.h>

#include "core_host_ir/host_ir_test_utils.h"
#include "hostir/host_ir/host_dispatch.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

class HostIrNodesTest : public ::testing::Test {
 protected:
  HostIrNodesTest() : guard_(&hic_) {}

  Val* namedScalar(const char* name) {
    return IrBuilder::create<Scalar>(std::string(name), DataType::Int64);
  }

  HostIrContainer hic_;
  FusionGuard guard_;
};

TEST_F(HostIrNodesTest, AllocatePrintsSizeFromExtents) {
  TensorView* tv = makeContigTensor(2);  // T0_l_float[iS0{i0}, iS1{i1}]
  auto* allocate = IrBuilder::create<Allocate>(tv);
  EXPECT_EQ(allocate->toString(1),
            "  T0_l_float[iS0{i0}, iS1{i1}] = ALLOCATE("
            "mem_type=local, size=( i0 * i1 ), zero_init=false)\n");
  EXPECT_EQ(allocate->toInlineString(), "Allocate(T0_l_float[iS0{i0}, iS1{i1}])");
  EXPECT_EQ(allocate->buffer(), tv);
  EXPECT_EQ(allocate->memoryType(), MemoryType::Local);
  EXPECT_FALSE(allocate->zeroInit());

  auto* global_zeroed = IrBuilder::create<Allocate>(tv, MemoryType::Global, true);
  EXPECT_EQ(global_zeroed->memoryType(), MemoryType::Global);
  EXPECT_TRUE(global_zeroed->zeroInit());
  EXPECT_NE(global_zeroed->toString().find("mem_type=global, size=( i0 * i1 ), zero_init=true"),
            std::string::npos);
  EXPECT_FALSE(allocate->sameAs(global_zeroed));
  EXPECT_TRUE(allocate->sameAs(IrBuilder::create<Allocate>(tv)));
}

TEST_F(HostIrNodesTest, AllocateIsNotTheDefinitionOfItsBuffer) {
  TensorView* in = makeContigTensor(1);
  TensorView* out = relu(in);
  Expr* relu_op = out->definition();
  IrBuilder::create<Allocate>(out);
  EXPECT_EQ(out->definition(), relu_op);
}

TEST_F(HostIrNodesTest, AllocateSizeSkipsDeviceAndReductionAxes) {
  TensorView* tv = makeContigTensor(3);  // extents i0, i1, i2
  tv->axis(0)->parallelize(ParallelType::DIDx);
  EXPECT_EQ(IrBuilder::create<Allocate>(tv)->sizeString(), "( i1 * i2 )");
  TensorView* three_d = makeContigTensor(3);  // i3, i4, i5
  EXPECT_EQ(IrBuilder::create<Allocate>(three_d)->sizeString(), "( ( i3 * i4 ) * i5 )");
  TensorView* summed = sum(makeContigTensor(2), {1});  // [i6, r{i7}]
  EXPECT_EQ(IrBuilder::create<Allocate>(summed)->sizeString(), "i6");
  TensorView* scalar_tensor = makeContigTensor(0);
  EXPECT_EQ(IrBuilder::create<Allocate>(scalar_tensor)->sizeString(), "1");
}

TEST_F(HostIrNodesTest, DeallocatePrintsItsBuffer) {
  TensorView* tv = makeContigTensor(1);
  auto* deallocate = IrBuilder::create<Deallocate>(tv);
  EXPECT_EQ(deallocate->toString(), "Deallocate T0_l_float[iS0{i0}]\n");
  EXPECT_EQ(deallocate->buffer(), tv);
  EXPECT_EQ(tv->uses(), std::vector<Expr*>{deallocate});
}

TEST_F(HostIrNodesTest, StreamsPrintPlainOrByIndex) {
  auto* plain = IrBuilder::create<Stream>();
  EXPECT_EQ(plain->toString(), "Stream 0");
  EXPECT_EQ(plain->vtype(), ValType::Stream);
  EXPECT_FALSE(plain->hasIndex());
  Val* index = mod(namedScalar(kStreamIdx), namedScalar(kNumberOfStreams));
  auto* indexed = IrBuilder::create<Stream>(index);
  EXPECT_EQ(indexed->toInlineString(), "Stream ( StreamIdx % numberOfStreams )");
  EXPECT_EQ(indexed->index(), index);

  EXPECT_FALSE(plain->sameAs(IrBuilder::create<Stream>()));
  EXPECT_TRUE(plain->sameAs(plain));
  Val* same_index = mod(namedScalar(kStreamIdx), namedScalar(kNumberOfStreams));
  EXPECT_TRUE(indexed->sameAs(IrBuilder::create<Stream>(same_index)));
  EXPECT_FALSE(indexed->sameAs(plain));

  EXPECT_HOSTIR_ERROR(IrBuilder::create<Stream>(IrBuilder::create<Scalar>(0.5)),
                      "a Stream index must be an integer scalar", "got 0.5");
}

TEST_F(HostIrNodesTest, StreamOpsPrint) {
  auto* get = IrBuilder::create<GetCurrentStream>();
  EXPECT_EQ(get->toString(), "GetCurrentStream into Stream 0\n");
  EXPECT_EQ(get->stream()->definition(), get);
  EXPECT_EQ(get->toInlineString(), "GetCurrentStream(Stream 0)");
  auto* indexed =
      IrBuilder::create<Stream>(mod(namedScalar(kStreamIdx), namedScalar(kNumberOfStreams)));
  auto* set_stream = IrBuilder::create<SetCurrentStream>(indexed);
  EXPECT_EQ(set_stream->toString(1),
            "  SetCurrentStream to Stream ( StreamIdx % numberOfStreams )\n");
  EXPECT_EQ(set_stream->stream(), indexed);
  auto* sync = IrBuilder::create<Synchronize>(get->stream());
  EXPECT_EQ(sync->toString(2), "    Synchronize Stream 0\n");
  EXPECT_EQ(sync->stream(), get->stream());

  auto* existing = IrBuilder::create<Stream>();
  EXPECT_EQ(IrBuilder::create<GetCurrentStream>(existing)->stream(), existing);
}

TEST_F(HostIrNodesTest, StreamOpsRejectNonStreams) {
  TensorView* tv = makeContigTensor(1);
  std::vector<Val*> operands{tv};
  auto* sync = IrBuilder::create<Synchronize>(IrBuilder::create<Stream>());
  EXPECT_HOSTIR_ERROR(sync->newObject(&hic_, operands, {}, {}, {}),
                      "Synchronize takes a Stream, not T0_l_float[iS0{i0}]");
}

TEST_F(HostIrNodesTest, HirAliasSelectBindsWithoutDefining) {
  TensorView* in = makeContigTensor(2);   // T0 [i0, i1]
  TensorView* out = makeContigTensor(1);  // T1 [i2]
  Val* index = namedScalar(kStreamIdx);
  auto* select = IrBuilder::create<HirAliasSelect>(in, out, 0, index);
  EXPECT_EQ(select->toString(1),
            "  T1_l_float[iS2{i2}]\n"
            "     = HirAliasSelect( T0_l_float[iS0{i0}, iS1{i1}], axis = iS0{i0}, index = "
            "StreamIdx )\n");
  EXPECT_EQ(select->in(), in);
  EXPECT_EQ(select->out(), out);
  EXPECT_EQ(select->index(), index);
  EXPECT_EQ(select->axis(), 0);
  EXPECT_EQ(select->selectedAxis(), in->axis(0));
  EXPECT_EQ(out->definition(), nullptr);
  EXPECT_EQ(in->uses(), std::vector<Expr*>{select});

  // The view keeps the definition of the op that fills it, and a second
  // view of the same buffer is fine.
  TensorView* filled = relu(makeContigTensor(1));
  Expr* relu_op = filled->definition();
  IrBuilder::create<HirAliasSelect>(in, filled, 1, index);
  IrBuilder::create<HirAliasSelect>(in, filled, 0, index);
  EXPECT_EQ(filled->definition(), relu_op);
}

TEST_F(HostIrNodesTest, HirAliasSelectValidatesAxisRankDtypeAndIndex) {
  TensorView* in = makeContigTensor(2);
  TensorView* out = makeContigTensor(1);
  Val* index = namedScalar(kStreamIdx);
  EXPECT_HOSTIR_ERROR(IrBuilder::create<HirAliasSelect>(in, out, 2, index),
                      "HirAliasSelect of T0_l_float[iS0{i0}, iS1{i1}]: axis 2 is out of range",
                      "from 0 to 1");
  EXPECT_HOSTIR_ERROR(IrBuilder::create<HirAliasSelect>(in, makeContigTensor(2), 0, index),
                      "has rank 2; a selected view has rank 1");
  EXPECT_HOSTIR_ERROR(
      IrBuilder::create<HirAliasSelect>(in, makeContigTensor(1, DataType::Double), 0, index),
      "must have the input's dtype float");
  EXPECT_HOSTIR_ERROR(
      IrBuilder::create<HirAliasSelect>(in, out, 0, IrBuilder::create<Scalar>(true)),
      "the index must be an integer scalar, got true");
}

TEST_F(HostIrNodesTest, ForLoopOverAnIterDomain) {
  Val* extent = IrBuilder::create<Scalar>(DataType::Int64);  // i0
  auto* id = IrBuilder::create<IterDomain>(extent, IterType::Iteration, ParallelType::Stream);
  Val* index = namedScalar(kStreamIdx);
  auto* loop = IrBuilder::create<ForLoop>(index, id);
  EXPECT_EQ(loop->toString(1), "  FOR StreamIdx in iStreamIdx0{i0}:\n");
  EXPECT_EQ(loop->index(), index);
  EXPECT_EQ(loop->iterDomain(), id);
  EXPECT_EQ(loop->start()->toInlineString(), "0");
  EXPECT_EQ(loop->stop(), extent);
  EXPECT_EQ(loop->step()->toInlineString(), "1");
  EXPECT_EQ(index->definition(), nullptr);  // the loop binds its index, it does not compute it

  auto* stream = IrBuilder::create<Stream>(mod(index, namedScalar(kNumberOfStreams)));
  loop->body().push_back(IrBuilder::create<SetCurrentStream>(stream));
  EXPECT_EQ(loop->toString(1),
            "  FOR StreamIdx in iStreamIdx0{i0}:\n"
            "    SetCurrentStream to Stream ( StreamIdx % numberOfStreams )\n");
}

TEST_F(HostIrNodesTest, ForLoopWithExplicitBounds) {
  Val* index = IrBuilder::create<Scalar>(DataType::Int64);  // i0
  Val* stop = IrBuilder::create<Scalar>(DataType::Int64);   // i1
  auto* loop = IrBuilder::create<ForLoop>(index, IrBuilder::create<Scalar>(int64_t{2}), stop,
                                          IrBuilder::create<Scalar>(int64_t{3}));
  EXPECT_EQ(loop->toString(), "FOR i0 from 2 to i1 step 3:\n");
  EXPECT_EQ(loop->iterDomain(), nullptr);
}

TEST_F(HostIrNodesTest, ForLoopValidatesIndexAndBounds) {
  Val* zero = IrBuilder::create<Scalar>(int64_t{0});
  Val* four = IrBuilder::create<Scalar>(int64_t{4});
  Val* index = namedScalar(kStreamIdx);
  EXPECT_HOSTIR_ERROR(IrBuilder::create<ForLoop>(zero, zero, four, four),
                      "FOR loop index 0 is a constant");
  EXPECT_HOSTIR_ERROR(IrBuilder::create<ForLoop>(index, zero, four, zero),
                      "FOR StreamIdx: step 0 must be positive");
  EXPECT_HOSTIR_ERROR(IrBuilder::create<ForLoop>(index, zero, IrBuilder::create<Scalar>(4.0), four),
                      "FOR StreamIdx: stop must be an integer scalar, got 4.0");
}

TEST_F(HostIrNodesTest, ForLoopSameAsComparesBodies) {
  Val* index = namedScalar(kStreamIdx);
  Val* zero = IrBuilder::create<Scalar>(int64_t{0});
  Val* four = IrBuilder::create<Scalar>(int64_t{4});
  Val* one = IrBuilder::create<Scalar>(int64_t{1});
  auto* stream = IrBuilder::create<Stream>(index);
  auto* a = IrBuilder::create<ForLoop>(index, zero, four, one);
  auto* b = IrBuilder::create<ForLoop>(index, zero, four, one);
  EXPECT_TRUE(a->sameAs(b));
  a->body().push_back(IrBuilder::create<SetCurrentStream>(stream));
  EXPECT_FALSE(a->sameAs(b));
  b->body().push_back(IrBuilder::create<SetCurrentStream>(stream));
  EXPECT_TRUE(a->sameAs(b));
  b->body().push_back(IrBuilder::create<Synchronize>(stream));
  EXPECT_FALSE(a->sameAs(b));
  auto* longer =
      IrBuilder::create<ForLoop>(index, zero, IrBuilder::create<Scalar>(int64_t{8}), one);
  EXPECT_FALSE(IrBuilder::create<ForLoop>(index, zero, four, one)->sameAs(longer));
}

std::unique_ptr<Fusion> makeReluFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  fusion->addInput(in);
  fusion->addOutput(relu(in));
  return fusion;
}

TEST_F(HostIrNodesTest, HostUnitAndPostOnStream) {
  auto* unit = IrBuilder::create<HostUnit>(makeReluFusion());
  EXPECT_EQ(unit->toString(),
            "HostUnit 0:\n"
            "  %Fusion {\n"
            "    inputs:\n"
            "      T0_g_float[iS0{i0}]\n"
            "    outputs:\n"
            "      T1_g_float[iS1{i0}]\n"
            "    exprs:\n"
            "      T1_g_float[iS1{i0}]\n"
            "         = relu( T0_g_float[iS0{i0}] )\n"
            "  } // %Fusion\n");
  TensorView* in = makeContigTensor(1);
  TensorView* out = makeContigTensor(1);
  auto* post = IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{in}, std::vector<Val*>{out});
  EXPECT_EQ(post->toString(1),
            "  PostOnStream (HostUnit 0, inputs=(T0_l_float[iS0{i0}]), "
            "outputs=(T1_l_float[iS1{i1}]))\n");
  EXPECT_EQ(post->hostUnit(), unit);
  EXPECT_EQ(out->definition(), post);
  EXPECT_TRUE(post->sameAs(post));
  EXPECT_FALSE(
      post->sameAs(IrBuilder::create<PostOnStream>(IrBuilder::create<HostUnit>(makeReluFusion()),
                                                   std::vector<Val*>{out}, std::vector<Val*>{in})));
}

TEST_F(HostIrNodesTest, PostOnStreamMustMatchTheSegment) {
  auto* unit = IrBuilder::create<HostUnit>(makeReluFusion());
  TensorView* in = makeContigTensor(1);
  TensorView* out = makeContigTensor(1);
  EXPECT_HOSTIR_ERROR(
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{in, out}, std::vector<Val*>{out}),
      "PostOnStream of HostUnit 0 got 2 inputs (T0_l_float[iS0{i0}], T1_l_float[iS1{i1}]) but "
      "its fusion has 1 (T0_g_float[iS0{i0}])");
  TensorView* doubles = makeContigTensor(1, DataType::Double);
  EXPECT_HOSTIR_ERROR(
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{in}, std::vector<Val*>{doubles}),
      "outputs 0 T2_l_double[iS2{i2}] does not match the fusion's T1_g_float[iS1{i0}]");
  EXPECT_HOSTIR_ERROR(IrBuilder::create<HostUnit>(nullptr), "a HostUnit needs the fusion");
}

TEST_F(HostIrNodesTest, LaunchKernelRunsARegisteredKernelById) {
  int64_t id = hic_.addKernel(makeReluFusion());
  EXPECT_EQ(id, 0);
  EXPECT_EQ(hic_.addKernel(makeReluFusion()), 1);
  EXPECT_EQ(hic_.numKernels(), 2);
  TensorView* in = makeContigTensor(1);
  TensorView* out = makeContigTensor(1);
  auto* launch = IrBuilder::create<LaunchKernel>(1, std::vector<Val*>{in}, std::vector<Val*>{out});
  EXPECT_EQ(launch->toString(),
            "LaunchKernel (kernel=1, inputs=(T0_l_float[iS0{i0}]), "
            "outputs=(T1_l_float[iS1{i1}]))\n");
  EXPECT_EQ(launch->kernelId(), 1);
  EXPECT_EQ(hic_.kernel(launch->kernelId())->inputs().size(), 1u);
  EXPECT_HOSTIR_ERROR(hic_.kernel(2), "no kernel with id 2", "ids 0 to 1 are registered");
  EXPECT_HOSTIR_ERROR(
      IrBuilder::create<LaunchKernel>(-1, std::vector<Val*>{in}, std::vector<Val*>{out}),
      "kernel id -1 is negative");
  EXPECT_FALSE(launch->sameAs(
      IrBuilder::create<LaunchKernel>(0, std::vector<Val*>{in}, std::vector<Val*>{out})));
}

// Every host node reaches its own HostIrDispatch::handle overload.
class HostNodeNamer : public HostIrDispatch {
 public:
  std::vector<std::string> handled;
#define HOSTIR_RECORD(T)                \
  void handle(const T* expr) override { \
    handled.push_back(expr->opName());  \
  }
  HOSTIR_FOR_ALL_HOST_EXPRS(HOSTIR_RECORD)
#undef HOSTIR_RECORD
};

TEST_F(HostIrNodesTest, DispatchReachesEveryHostNode) {
  TensorView* in = makeContigTensor(1);
  TensorView* out = makeContigTensor(1);
  auto* unit = IrBuilder::create<HostUnit>(makeReluFusion());
  auto* stream = IrBuilder::create<Stream>();
  auto* comm = IrBuilder::create<Communication>(
      in, out, CommunicationParams{.type = CommunicationType::Allgather, .team = {0}});
  Val* index = namedScalar(kStreamIdx);
  auto* id = IrBuilder::create<IterDomain>(IrBuilder::create<Scalar>(int64_t{2}));
  std::vector<Expr*> nodes{
      unit,
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{in}, std::vector<Val*>{out}),
      IrBuilder::create<LaunchKernel>(0, std::vector<Val*>{in}, std::vector<Val*>{out}),
      IrBuilder::create<Allocate>(out),
      IrBuilder::create<Deallocate>(out),
      IrBuilder::create<ForLoop>(index, id),
      IrBuilder::create<GetCurrentStream>(),
      IrBuilder::create<SetCurrentStream>(stream),
      IrBuilder::create<Synchronize>(stream),
      IrBuilder::create<HirAliasSelect>(makeContigTensor(2), in, 0, index),
      comm,
      IrBuilder::create<P2PCommunication>(P2PCommunicationType::Send, in, index),
      IrBuilder::create<Wait>(comm),
      IrBuilder::create<StartCoalescing>(),
      IrBuilder::create<EndCoalescing>()};
  HostNodeNamer namer;
  for (Expr* node : nodes) {
    namer.dispatch(node);
  }
  EXPECT_EQ(namer.handled,
            (std::vector<std::string>{
                "HostUnit", "PostOnStream", "LaunchKernel", "Allocate", "Deallocate", "ForLoop",
                "GetCurrentStream", "SetCurrentStream", "Synchronize", "HirAliasSelect",
                "Communication", "P2PCommunication", "Wait", "StartCoalescing", "EndCoalescing"}));

  OptInDispatch strict;
  EXPECT_HOSTIR_ERROR(strict.dispatch(nodes[8]), "unsupported op here: Synchronize",
                      "Synchronize Stream 0");
  // A host IR visitor without a handler for a node errors the same way; a
  // core opt-out visitor skips host nodes.
  HostIrDispatch host_strict;
  EXPECT_HOSTIR_ERROR(host_strict.dispatch(nodes[12]), "unsupported op here: Wait");
  OptOutDispatch skipping;
  EXPECT_NO_THROW(skipping.dispatch(nodes[12]));
}

}  // namespace hostir
