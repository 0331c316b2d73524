#include <gtest/gtest.h>

#include "core_ir/test_utils.h"
#include "hostir/ir/device_mesh.h"

namespace hostir::test {

TEST(DeviceMeshTest, OneDimensional) {
  DeviceMesh mesh({0, 1, 2});
  EXPECT_EQ(mesh.size(), 3);
  EXPECT_EQ(mesh.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(mesh.size(ParallelType::DIDx), 3);
  EXPECT_TRUE(mesh.has(1));
  EXPECT_FALSE(mesh.has(3));
  EXPECT_EQ(mesh.idxOf(2), 2);
  EXPECT_EQ(mesh.idxOf(7), -1);
  EXPECT_EQ(mesh.getSlice(1, ParallelType::DIDx), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(mesh.toString(), "DeviceMesh{0 1 2}");
  EXPECT_EQ(DeviceMesh::createForNumDevices(3), mesh);
}

TEST(DeviceMeshTest, TwoDimensionalSlices) {
  DeviceMesh mesh({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(mesh.size(ParallelType::DIDx), 3);
  EXPECT_EQ(mesh.size(ParallelType::DIDy), 2);
  EXPECT_EQ(mesh.idxOf(4, ParallelType::DIDx), 1);
  EXPECT_EQ(mesh.idxOf(4, ParallelType::DIDy), 1);
  EXPECT_EQ(mesh.getSlice(4, ParallelType::DIDx), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(mesh.getSlice(4, ParallelType::DIDy), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(mesh.toString(), "DeviceMesh{0 1 2 3 4 5 shape=2x3}");
}

TEST(DeviceMeshTest, NonContiguousDeviceIds) {
  DeviceMesh mesh({4, 2, 7});
  EXPECT_EQ(mesh.idxOf(7), 2);
  EXPECT_EQ(mesh.idxOf(2, ParallelType::DIDx), 1);
  EXPECT_EQ(mesh.toString(), "DeviceMesh{4 2 7}");
  EXPECT_NE(mesh, DeviceMesh({2, 4, 7}));
}

TEST(DeviceMeshTest, InvalidMeshesAreRejected) {
  EXPECT_HOSTIR_ERROR(DeviceMesh({0, 1, 1}), {"twice"});
  EXPECT_HOSTIR_ERROR(DeviceMesh({0, 1, 2}, {2, 2}), {"shape"});
  EXPECT_HOSTIR_ERROR(DeviceMesh({0, 1}).size(ParallelType::DIDy), {"1-D", "DIDy"});
}

}  // namespace hostir::test
