// Split / Merge between logical and loop domains, parallelization, device
// meshes and allocation domains.

#include "hostir/ir/device_mesh.h"
#include "hostir/ir/ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using TransformTest = IrTest;

TEST_F(TransformTest, InnerSplitExtents) {
  TensorView* tv = makeContigTensor(2);  // [iS0{i0}, iS1{i1}]
  tv->split(0, 4);
  ASSERT_EQ(tv->nDims(), 3);
  EXPECT_EQ(tv->axis(0)->extent()->toInlineString(), "ceilDiv(i0, 4)");
  EXPECT_EQ(constExtent(tv->axis(1)), 4);
  EXPECT_EQ(tv->axis(2), tv->getLogicalDomain()[1]);
  // The logical domain, and so the shape, is unchanged.
  EXPECT_EQ(tv->getLogicalDomain().size(), 2u);
  EXPECT_EQ(tv->rank(), 2);
  EXPECT_EQ(tv->domain()->toInlineString(), "[iS2{ceilDiv(i0, 4)}, iS3{4}, iS1{i1}]");
}

TEST_F(TransformTest, OuterSplitExtents) {
  TensorView* tv = makeContigTensor(2);
  tv->split(0, 4, /*inner_split=*/false);
  ASSERT_EQ(tv->nDims(), 3);
  EXPECT_EQ(constExtent(tv->axis(0)), 4);
  EXPECT_EQ(tv->axis(1)->extent()->toInlineString(), "ceilDiv(i0, 4)");
  EXPECT_EQ(tv->domain()->toInlineString(), "[iS2{4}, iS3{ceilDiv(i0, 4)}, iS1{i1}]");
}

TEST_F(TransformTest, SplitRecordsSplitExpr) {
  TensorView* tv = makeContigTensor(1);
  IterDomain* original = tv->axis(0);
  tv->split(0, 4, false);
  Expr* def = tv->axis(0)->definition();
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def, tv->axis(1)->definition());
  auto* split = def->as<Split>();
  EXPECT_EQ(split->in(), original);
  EXPECT_EQ(split->factor()->as<Scalar>()->constInt(), 4);
  EXPECT_FALSE(split->innerSplit());
  EXPECT_EQ(split->outer(), tv->axis(0));
  EXPECT_EQ(split->inner(), tv->axis(1));
  EXPECT_EQ(split->toString(), "Outer split: iS0{i0} by factor 4 -> iS1{4}, iS2{ceilDiv(i0, 4)}\n");
  ASSERT_EQ(original->uses().size(), 1u);
  EXPECT_EQ(original->uses()[0], def);
}

TEST_F(TransformTest, InnerSplitPrints) {
  TensorView* tv = makeContigTensor(1);
  tv->split(0, 8);
  EXPECT_TRUE(tv->axis(0)->definition()->as<Split>()->innerSplit());
  EXPECT_EQ(tv->axis(0)->definition()->toString(1),
            "  Split: iS0{i0} by factor 8 -> iS1{ceilDiv(i0, 8)}, iS2{8}\n");
}

TEST_F(TransformTest, SplitOfConstantExtentFolds) {
  TensorView* tv = makeConcreteTensor({8});
  tv->split(0, 3);
  EXPECT_EQ(constExtent(tv->axis(0)), 3);  // ceilDiv(8, 3)
  EXPECT_EQ(constExtent(tv->axis(1)), 3);
  TensorView* tv2 = makeConcreteTensor({12});
  tv2->split(0, 4, false);
  EXPECT_EQ(constExtent(tv2->axis(0)), 4);
  EXPECT_EQ(constExtent(tv2->axis(1)), 3);
}

TEST_F(TransformTest, SplitBySymbolicFactor) {
  TensorView* tv = makeContigTensor(1);  // i0
  Scalar* streams = IrBuilder::create<Scalar>(std::string(kNumberOfStreams), DataType::Int64);
  tv->split(0, streams, /*inner_split=*/false);
  EXPECT_EQ(tv->axis(0)->extent(), streams);
  EXPECT_EQ(tv->axis(1)->extent()->toInlineString(), "ceilDiv(i0, numberOfStreams)");
}

TEST_F(TransformTest, SplitNegativeAxisAndReduction) {
  TensorView* tv = sum(makeContigTensor(2), {1});
  tv->split(-1, 4);
  ASSERT_EQ(tv->nDims(), 3);
  EXPECT_FALSE(tv->axis(0)->isReduction());
  EXPECT_TRUE(tv->axis(1)->isReduction());
  EXPECT_TRUE(tv->axis(2)->isReduction());
  EXPECT_EQ(tv->rank(), 1);
}

TEST_F(TransformTest, StreamParallelOuterSplitPrints) {
  TensorView* tv = makeContigTensor(2);
  tv->split(0, 4, /*inner_split=*/false);
  tv->axis(0)->parallelize(ParallelType::Stream);
  EXPECT_TRUE(tv->axis(0)->isStream());
  EXPECT_FALSE(tv->axis(0)->isDeviceDim());
  EXPECT_EQ(tv->axis(0)->getParallelType(), ParallelType::Stream);
  EXPECT_EQ(tv->axis(0)->toInlineString(), "iStreamIdx2{4}");
  fusion_.addInput(tv);
  EXPECT_EQ(tv->toString(), "T0_g_float[iStreamIdx2{4}, iS3{ceilDiv(i0, 4)}, iS1{i1}]");
}

TEST_F(TransformTest, DeviceParallelSplitPrints) {
  TensorView* tv = makeContigTensor(2);
  tv->setDeviceMesh(DeviceMesh::createForNumDevices(2));
  tv->split(0, 2, /*inner_split=*/false);
  tv->axis(0)->parallelize(ParallelType::DIDx);
  EXPECT_TRUE(tv->axis(0)->isDeviceDim());
  EXPECT_EQ(tv->axis(0)->toInlineString(), "ideviceIdx.x2{2}");
  EXPECT_EQ(tv->toInlineString(), "T0_l_float[ideviceIdx.x2{2}, iS3{ceilDiv(i0, 2)}, iS1{i1}]");
  EXPECT_EQ(tv->toString(),
            "T0_l_float[ideviceIdx.x2{2}, iS3{ceilDiv(i0, 2)}, iS1{i1}] (DeviceMesh{0 1})");
}

TEST_F(TransformTest, ParallelizeLogicalAxisDirectly) {
  TensorView* tv = makeConcreteTensor({2, 5});
  tv->axis(0)->parallelize(ParallelType::DIDx);
  tv->axis(1)->parallelize(ParallelType::DIDy);
  EXPECT_EQ(tv->toInlineString(), "T0_l_float[ideviceIdx.x0{2}, ideviceIdx.y1{5}]");
  tv->axis(1)->parallelize(ParallelType::Serial);
  EXPECT_EQ(tv->axis(1)->toInlineString(), "iS1{5}");
}

TEST_F(TransformTest, ParallelTypeTakesPartInSameAs) {
  TensorView* tv0 = makeConcreteTensor({4});
  TensorView* tv1 = set(tv0);
  EXPECT_TRUE(tv0->axis(0)->sameAs(tv1->axis(0)));
  tv1->axis(0)->parallelize(ParallelType::Stream);
  EXPECT_FALSE(tv0->axis(0)->sameAs(tv1->axis(0)));
  IterDomain* copy = tv1->axis(0)->cloneWithoutParallelization(IterType::Iteration);
  EXPECT_TRUE(copy->sameAs(tv0->axis(0)));
  EXPECT_EQ(copy->extent(), tv1->axis(0)->extent());
}

TEST_F(TransformTest, MergeExtents) {
  TensorView* tv = makeContigTensor(3);
  tv->merge(0);
  ASSERT_EQ(tv->nDims(), 2);
  EXPECT_EQ(tv->axis(0)->extent()->toInlineString(), "( i0 * i1 )");
  EXPECT_EQ(tv->axis(1), tv->getLogicalDomain()[2]);
  auto* merge = tv->axis(0)->definition()->as<Merge>();
  EXPECT_EQ(merge->outer(), tv->getLogicalDomain()[0]);
  EXPECT_EQ(merge->inner(), tv->getLogicalDomain()[1]);
  EXPECT_EQ(merge->out(), tv->axis(0));
  EXPECT_EQ(merge->toString(), "Merge: iS0{i0} and iS1{i1} -> iS3{( i0 * i1 )}\n");
}

TEST_F(TransformTest, MergeConstantExtentsFolds) {
  TensorView* tv = makeConcreteTensor({2, 3, 4});
  tv->merge(1, 2);
  ASSERT_EQ(tv->nDims(), 2);
  EXPECT_EQ(constExtent(tv->axis(1)), 12);
  tv->merge(-2);
  EXPECT_EQ(constExtent(tv->axis(0)), 24);
}

TEST_F(TransformTest, MergeOfTwoReductionAxes) {
  TensorView* tv = sum(makeContigTensor(3), {1, 2});
  tv->merge(1);
  ASSERT_EQ(tv->nDims(), 2);
  EXPECT_TRUE(tv->axis(1)->isReduction());
}

TEST_F(TransformTest, SplitThenMerge) {
  TensorView* tv = makeConcreteTensor({16, 3});
  tv->split(0, 4)->merge(1);
  ASSERT_EQ(tv->nDims(), 2);
  EXPECT_EQ(constExtent(tv->axis(0)), 4);
  EXPECT_EQ(constExtent(tv->axis(1)), 12);
  EXPECT_EQ(tv->getLogicalDomain().size(), 2u);
}

TEST_F(TransformTest, TransformsAreNotFusionExprs) {
  TensorView* tv0 = makeContigTensor(2);
  fusion_.addInput(tv0);
  TensorView* tv1 = neg(tv0);
  fusion_.addOutput(tv1);
  tv1->split(0, 2, false);
  tv1->merge(1);
  ASSERT_EQ(fusion_.exprs().size(), 1u);
  EXPECT_TRUE(fusion_.exprs()[0]->isA<UnaryOp>());
}

TEST(DeviceMeshTest, OneDimensional) {
  DeviceMesh mesh = DeviceMesh::createForNumDevices(4);
  EXPECT_EQ(mesh.size(), 4);
  EXPECT_EQ(mesh.vector(), std::vector<int64_t>({0, 1, 2, 3}));
  EXPECT_EQ(mesh.shape(), std::vector<int64_t>({4}));
  EXPECT_EQ(mesh.size(ParallelType::DIDx), 4);
  EXPECT_TRUE(mesh.has(3));
  EXPECT_FALSE(mesh.has(4));
  EXPECT_EQ(mesh.idxOf(2), 2);
  EXPECT_EQ(mesh.idxOf(9), -1);
  EXPECT_EQ(mesh.idxOf(2, ParallelType::DIDx), 2);
  EXPECT_EQ(mesh.getSlice(1, ParallelType::DIDx), std::vector<int64_t>({0, 1, 2, 3}));
  EXPECT_EQ(mesh.toString(), "DeviceMesh{0 1 2 3}");
  EXPECT_FALSE(mesh.empty());
}

TEST(DeviceMeshTest, ArbitraryDeviceIds) {
  DeviceMesh mesh(std::vector<int64_t>{4, 2, 7});
  EXPECT_EQ(mesh.idxOf(7), 2);
  EXPECT_EQ(mesh.idxOf(7, ParallelType::DIDx), 2);
  EXPECT_EQ(mesh.toString(), "DeviceMesh{4 2 7}");
}

TEST(DeviceMeshTest, TwoDimensional) {
  DeviceMesh mesh(std::vector<int64_t>{0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(mesh.size(), 6);
  EXPECT_EQ(mesh.size(ParallelType::DIDx), 3);
  EXPECT_EQ(mesh.size(ParallelType::DIDy), 2);
  EXPECT_EQ(mesh.idxOf(4, ParallelType::DIDx), 1);
  EXPECT_EQ(mesh.idxOf(4, ParallelType::DIDy), 1);
  EXPECT_EQ(mesh.idxOf(2, ParallelType::DIDx), 2);
  EXPECT_EQ(mesh.idxOf(2, ParallelType::DIDy), 0);
  EXPECT_EQ(mesh.getSlice(4, ParallelType::DIDx), std::vector<int64_t>({3, 4, 5}));
  EXPECT_EQ(mesh.getSlice(4, ParallelType::DIDy), std::vector<int64_t>({1, 4}));
  EXPECT_EQ(mesh.toString(), "DeviceMesh{0 1 2 3 4 5 shape=2x3}");
}

TEST(DeviceMeshTest, Equality) {
  EXPECT_EQ(DeviceMesh::createForNumDevices(2), DeviceMesh(std::vector<int64_t>{0, 1}));
  EXPECT_NE(DeviceMesh::createForNumDevices(2), DeviceMesh(std::vector<int64_t>{1, 0}));
  EXPECT_NE(DeviceMesh(std::vector<int64_t>{0, 1, 2, 3}),
            DeviceMesh(std::vector<int64_t>{0, 1, 2, 3}, {2, 2}));
  EXPECT_TRUE(DeviceMesh().empty());
}

TEST_F(TransformTest, TensorDeviceMesh) {
  TensorView* tv = makeContigTensor(1);
  EXPECT_FALSE(tv->hasDeviceMesh());
  tv->setDeviceMesh(DeviceMesh(std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(tv->hasDeviceMesh());
  EXPECT_EQ(tv->getDeviceMesh().size(), 3);
  EXPECT_EQ(tv->toString(), "T0_l_float[iS0{i0}] (DeviceMesh{0 1 2})");
  EXPECT_EQ(tv->toInlineString(), "T0_l_float[iS0{i0}]");
  tv->setDeviceMesh(DeviceMesh());
  EXPECT_FALSE(tv->hasDeviceMesh());
}

TEST_F(TransformTest, MeshTakesPartInSameAs) {
  TensorView* tv0 = makeConcreteTensor({4});
  TensorView* tv1 = makeConcreteTensor({4});
  EXPECT_TRUE(tv0->sameAs(tv1));
  tv0->setDeviceMesh(DeviceMesh::createForNumDevices(2));
  EXPECT_FALSE(tv0->sameAs(tv1));
  tv1->setDeviceMesh(DeviceMesh::createForNumDevices(2));
  EXPECT_TRUE(tv0->sameAs(tv1));
  EXPECT_FALSE(tv0->sameAs(makeConcreteTensor({4}, DataType::Half)));
}

TEST_F(TransformTest, AllocationDomain) {
  TensorView* tv = makeSymbolicTensor(3);
  EXPECT_FALSE(tv->domain()->hasAllocation());
  EXPECT_EQ(tv->getAllocationDomain(), tv->getLogicalDomain());
  std::vector<IterDomain*> order{tv->axis(2), tv->axis(0), tv->axis(1)};
  tv->setAllocationDomain(order, /*contiguous=*/true);
  EXPECT_TRUE(tv->domain()->hasAllocation());
  EXPECT_EQ(tv->getAllocationDomain(), order);
  EXPECT_EQ(tv->domain()->contiguity(), std::vector<bool>({true, true, true}));
  EXPECT_EQ(tv->getLoopDomain(), tv->getLogicalDomain());
}

}  // namespace
}  // namespace hostir::test
