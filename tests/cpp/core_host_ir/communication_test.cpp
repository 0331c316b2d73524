#include <gtest/gtest.h>

#include "core_host_ir/host_ir_test_utils.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

class CommunicationTest : public ::testing::Test {
 protected:
  CommunicationTest() : guard_(&hic_) {
    in_ = makeContigTensor(2);   // T0_l_float[iS0{i0}, iS1{i1}]
    out_ = makeContigTensor(2);  // T1_l_float[iS2{i2}, iS3{i3}]
  }

  Communication* make(const CommunicationParams& params) {
    return IrBuilder::create<Communication>(in_, out_, params);
  }

  HostIrContainer hic_;
  FusionGuard guard_;
  TensorView* in_;
  TensorView* out_;
};

TEST_F(CommunicationTest, PrintsTypeTeamAndTensors) {
  Communication* allgather = make({.type = CommunicationType::Allgather, .team = {0, 1}});
  EXPECT_EQ(allgather->toString(),
            "Communication 0 (type=Allgather, team=(0 1), input=T0_l_float[iS0{i0}, iS1{i1}], "
            "output=T1_l_float[iS2{i2}, iS3{i3}])\n");
  EXPECT_EQ(allgather->toInlineString(), "Communication 0");
  EXPECT_EQ(allgather->toString(2).substr(0, 20), "    Communication 0 ");
}

TEST_F(CommunicationTest, PrintsRootReduceOpAndScatteredAxisWhenGiven) {
  Communication* reduce = make({.type = CommunicationType::Reduce,
                                .team = {0, 1, 2},
                                .root = 2,
                                .reduce_op = ReduceOp::Max});
  EXPECT_EQ(reduce->toString(),
            "Communication 0 (type=Reduce, team=(0 1 2), root=2, reduce_op=max, "
            "input=T0_l_float[iS0{i0}, iS1{i1}], output=T1_l_float[iS2{i2}, iS3{i3}])\n");
  Communication* reduce_scatter = make({.type = CommunicationType::ReduceScatter,
                                        .team = {0, 1},
                                        .reduce_op = ReduceOp::Sum,
                                        .scattered_axis = 1});
  // Over 150 characters: the operands continue on the next line.
  EXPECT_EQ(reduce_scatter->toString(),
            "Communication 1 (type=ReduceScatter, team=(0 1), reduce_op=sum, scattered_axis=1,\n"
            "     input=T0_l_float[iS0{i0}, iS1{i1}], output=T1_l_float[iS2{i2}, iS3{i3}])\n");
}

TEST_F(CommunicationTest, AccessorsReturnTheGivenFields) {
  Communication* scatter = make({.type = CommunicationType::Scatter, .team = {3, 5}, .root = 5});
  EXPECT_EQ(scatter->type(), CommunicationType::Scatter);
  EXPECT_EQ(scatter->team(), (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE(scatter->hasRoot());
  EXPECT_EQ(scatter->root(), 5);
  EXPECT_FALSE(scatter->hasReduceOp());
  EXPECT_FALSE(scatter->hasScatteredAxis());
  EXPECT_EQ(scatter->in(), in_);
  EXPECT_EQ(scatter->out(), out_);
  EXPECT_EQ(out_->definition(), scatter);
  EXPECT_THROW(scatter->reduceOp(), Error);

  Communication* reduce_scatter = make({.type = CommunicationType::ReduceScatter,
                                        .team = {0, 1},
                                        .reduce_op = ReduceOp::Product,
                                        .scattered_axis = 0});
  EXPECT_EQ(reduce_scatter->reduceOp(), ReduceOp::Product);
  EXPECT_EQ(reduce_scatter->scatteredAxis(), 0);
  EXPECT_FALSE(reduce_scatter->hasRoot());
  EXPECT_THROW(reduce_scatter->root(), Error);
}

TEST_F(CommunicationTest, EveryTypeBuildsWithExactlyItsFields) {
  for (CommunicationType type :
       {CommunicationType::Gather, CommunicationType::Allgather, CommunicationType::Scatter,
        CommunicationType::Reduce, CommunicationType::Allreduce, CommunicationType::ReduceScatter,
        CommunicationType::Broadcast, CommunicationType::SendRecv}) {
    CommunicationParams params{.type = type, .team = {0, 1}};
    if (hasRoot(type)) {
      params.root = 0;
    }
    if (isReduction(type)) {
      params.reduce_op = ReduceOp::Sum;
    }
    if (type == CommunicationType::ReduceScatter) {
      params.scattered_axis = 1;
    }
    Communication* communication = make(params);
    EXPECT_EQ(communication->type(), type);
    EXPECT_NE(communication->toString().find("type=" + toString(type) + ","), std::string::npos);
  }
}

TEST_F(CommunicationTest, RootIsRequiredIffTheTypeHasOne) {
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Gather, .team = {0, 1}}),
                      "Gather from T0_l_float[iS0{i0}, iS1{i1}] to T1_l_float[iS2{i2}, iS3{i3}]",
                      "needs a root device", "(0 1)");
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Allgather, .team = {0, 1}, .root = 0}),
                      "Allgather has no root but root 0 was given",
                      "only Gather, Scatter, Reduce, Broadcast and SendRecv take a root");
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Broadcast, .team = {0, 1}, .root = 4}),
                      "root 4 is not in the team", "give one of (0 1)");
}

TEST_F(CommunicationTest, ReduceOpIsRequiredIffTheTypeReduces) {
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Allreduce, .team = {0, 1}}),
                      "Allreduce from T0_l_float", "needs a reduce op");
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Broadcast,
                            .team = {0, 1},
                            .root = 0,
                            .reduce_op = ReduceOp::Sum}),
                      "Broadcast does not reduce but a reduce op was given",
                      "only Reduce, Allreduce and ReduceScatter take one");
}

TEST_F(CommunicationTest, ScatteredAxisIsRequiredIffReduceScatter) {
  EXPECT_HOSTIR_ERROR(
      make({.type = CommunicationType::ReduceScatter, .team = {0, 1}, .reduce_op = ReduceOp::Sum}),
      "ReduceScatter needs a scattered axis of T0_l_float[iS0{i0}, iS1{i1}]");
  EXPECT_HOSTIR_ERROR(
      make({.type = CommunicationType::Allgather, .team = {0, 1}, .scattered_axis = 0}),
      "Allgather scatters no axis but scattered axis 0 was given", "only ReduceScatter takes one");
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::ReduceScatter,
                            .team = {0, 1},
                            .reduce_op = ReduceOp::Sum,
                            .scattered_axis = 2}),
                      "scattered axis 2 is out of range",
                      "T0_l_float[iS0{i0}, iS1{i1}] has axes 0 to 1");
}

TEST_F(CommunicationTest, TeamMustListDistinctDevices) {
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Allgather}), "the team is empty");
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Allgather, .team = {0, 1, 0}}),
                      "device 0 appears twice in the team");
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::Allgather, .team = {-1, 1}}),
                      "device id -1 is negative");
  EXPECT_HOSTIR_ERROR(make({.type = CommunicationType::SendRecv, .team = {0, 1, 2}, .root = 0}),
                      "SendRecv has one sender and one receiver");
}

TEST_F(CommunicationTest, GenericConstructionIsValidatedToo) {
  // Passes rebuild nodes through newObject; a bad attribute list must not slip through.
  Communication* allgather = make({.type = CommunicationType::Allgather, .team = {0, 1}});
  std::vector<Attribute> attributes = allgather->attributes();
  attributes[2] = int64_t{1};  // a root for an Allgather
  EXPECT_HOSTIR_ERROR(
      allgather->newObject(&hic_, allgather->inputs(), allgather->outputs(), attributes, {}),
      "Allgather has no root but root 1 was given");
  Expr* rebuilt = allgather->newObject(&hic_, allgather->inputs(), allgather->outputs(),
                                       allgather->attributes(), {});
  EXPECT_TRUE(rebuilt->sameAs(allgather));
}

TEST_F(CommunicationTest, SameAsComparesEveryAttribute) {
  CommunicationParams reduce{
      .type = CommunicationType::Reduce, .team = {0, 1}, .root = 0, .reduce_op = ReduceOp::Sum};
  Communication* a = make(reduce);
  EXPECT_TRUE(a->sameAs(make(reduce)));

  CommunicationParams other_root = reduce;
  other_root.root = 1;
  EXPECT_FALSE(a->sameAs(make(other_root)));
  CommunicationParams other_op = reduce;
  other_op.reduce_op = ReduceOp::Min;
  EXPECT_FALSE(a->sameAs(make(other_op)));
  CommunicationParams other_team = reduce;
  other_team.team = {1, 0};
  EXPECT_FALSE(a->sameAs(make(other_team)));
  CommunicationParams other_type = reduce;
  other_type.type = CommunicationType::Allreduce;
  other_type.root = std::nullopt;
  EXPECT_FALSE(a->sameAs(make(other_type)));

  TensorView* other_in = makeContigTensor(2);
  EXPECT_FALSE(a->sameAs(IrBuilder::create<Communication>(other_in, out_, reduce)));
}

TEST_F(CommunicationTest, P2PSendReadsAndRecvWritesItsBuffer) {
  auto* peer = IrBuilder::create<Scalar>(DataType::Int64);  // i4
  auto* send = IrBuilder::create<P2PCommunication>(P2PCommunicationType::Send, in_, peer);
  auto* recv = IrBuilder::create<P2PCommunication>(P2PCommunicationType::Recv, out_, peer);
  EXPECT_EQ(send->toString(),
            "P2PCommunication 0 (type=send, buffer=T0_l_float[iS0{i0}, iS1{i1}], peer=i4)\n");
  EXPECT_EQ(recv->toString(),
            "P2PCommunication 1 (type=recv, buffer=T1_l_float[iS2{i2}, iS3{i3}], peer=i4)\n");
  EXPECT_EQ(send->buffer(), in_);
  EXPECT_EQ(send->peer(), peer);
  EXPECT_TRUE(send->outputs().empty());
  EXPECT_EQ(recv->buffer(), out_);
  EXPECT_EQ(recv->peer(), peer);
  EXPECT_EQ(out_->definition(), recv);
  EXPECT_FALSE(send->sameAs(recv));
  EXPECT_TRUE(
      send->sameAs(IrBuilder::create<P2PCommunication>(P2PCommunicationType::Send, in_, peer)));

  auto* not_a_device = IrBuilder::create<Scalar>(1.5);
  EXPECT_HOSTIR_ERROR(
      IrBuilder::create<P2PCommunication>(P2PCommunicationType::Send, in_, not_a_device),
      "P2PCommunication send of T0_l_float[iS0{i0}, iS1{i1}]",
      "the peer must be an integer scalar (a device id), got 1.5");
}

TEST_F(CommunicationTest, WaitRefersToItsCommunication) {
  Communication* allgather = make({.type = CommunicationType::Allgather, .team = {0, 1}});
  auto* wait = IrBuilder::create<Wait>(allgather);
  EXPECT_EQ(wait->communication(), allgather);
  EXPECT_EQ(wait->toString(), "Wait Communication 0\n");
  EXPECT_EQ(wait->toString(1), "  Wait Communication 0\n");

  auto* peer = IrBuilder::create<Scalar>(int64_t{1});
  auto* recv = IrBuilder::create<P2PCommunication>(P2PCommunicationType::Recv, out_, peer);
  EXPECT_EQ(IrBuilder::create<Wait>(recv)->toString(), "Wait P2PCommunication 2\n");

  EXPECT_TRUE(wait->sameAs(IrBuilder::create<Wait>(allgather)));
  EXPECT_FALSE(wait->sameAs(IrBuilder::create<Wait>(recv)));

  auto* deallocate = IrBuilder::create<Deallocate>(in_);
  EXPECT_HOSTIR_ERROR(IrBuilder::create<Wait>(deallocate),
                      "Wait completes a Communication, P2PCommunication or EndCoalescing, "
                      "not Deallocate",
                      "Deallocate T0_l_float[iS0{i0}, iS1{i1}]");
}

TEST_F(CommunicationTest, CoalescingBracketsAGroupThatAWaitCompletes) {
  auto* start = IrBuilder::create<StartCoalescing>();
  auto* end = IrBuilder::create<EndCoalescing>();
  EXPECT_EQ(start->toString(1), "  StartCoalescing\n");
  EXPECT_EQ(end->toString(1), "  EndCoalescing\n");
  auto* wait = IrBuilder::create<Wait>(end);
  EXPECT_EQ(wait->toString(), "Wait EndCoalescing 1\n");
  EXPECT_TRUE(start->sameAs(IrBuilder::create<StartCoalescing>()));
  EXPECT_FALSE(start->sameAs(end));
}

}  // namespace hostir
