// The C++ API a newcomer writes first: integer constants in binary ops,
// factories with constant extents, and shard() from the docs.
#include <gtest/gtest.h>

#include "hostir/ir/arith.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {
namespace {

TEST(ConvenienceApi, IntegerConstantsAreInt64ScalarsAndPromoteLikePyTorch) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2, DataType::Float);
  TensorView* i = makeContigTensor(1, DataType::Int64);
  TensorView* a = add(x, 0);  // was ambiguous (0 is also a null Val*)
  TensorView* b = mul(2, x);
  TensorView* c = sub(i, int64_t{3});
  TensorView* d = add(i, 1.5);
  EXPECT_EQ(a->dtype(), DataType::Float);
  EXPECT_EQ(b->dtype(), DataType::Float);
  EXPECT_EQ(c->dtype(), DataType::Int64);  // int tensor - int stays int, as in PyTorch
  EXPECT_EQ(d->dtype(), DataType::Float);
  EXPECT_NE(a->definition()->toString().find("= add( T0_l_float[iS0{i0}, iS1{i1}], 0 )"),
            std::string::npos)
      << a->definition()->toString();
}

TEST(ConvenienceApi, FactoriesTakeConstantExtents) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* z = zeros({2, 3});
  TensorView* o = ones({4}, DataType::Int64);
  TensorView* f = full({2, 2}, 1.5, DataType::Float);
  EXPECT_EQ(z->rank(), 2);
  EXPECT_EQ(z->axis(1)->extent()->toInlineString(), "3");
  EXPECT_EQ(o->dtype(), DataType::Int64);
  EXPECT_EQ(f->axis(0)->extent()->toInlineString(), "2");
  EXPECT_THROW(zeros({2, -1}), Error);
}

TEST(ConvenienceApi, ShardPutsATensorOnAMeshAndShardsAnAxis) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
  TensorView* w = shard(makeContigTensor(2), mesh, /*logical_axis=*/0);
  EXPECT_TRUE(w->hasDeviceMesh());
  EXPECT_EQ(w->axis(0)->getParallelType(), ParallelType::DIDx);
  TensorView* x = shard(makeContigTensor(2), mesh);  // replicated
  EXPECT_TRUE(x->hasDeviceMesh());
  EXPECT_EQ(x->axis(0)->getParallelType(), ParallelType::Serial);
  TensorView* s = shard(makeContigTensor(2), mesh, 1, ParallelType::DIDx, /*via_outer_split=*/true);
  EXPECT_EQ(s->rank(), 2);
  EXPECT_EQ(s->getLoopDomain().size(), 3u);
}

}  // namespace
}  // namespace hostir
