// The packed-weight cache (pack_cache.h) never serves a stale weight: each
// way a user or a collective can write a weight's memory, then the next
// pack must hold the new bits (issue 38, item 1). The writes that bump no
// version counter of the tensor packed (through `.data`, a from_blob alias,
// a raw memcpy as Gloo does, an op below autograd) read the old packing
// before the cache compared bits.
#include <ATen/ATen.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "hostir/runtime/deferred_memory.h"
#include "hostir/runtime/pack_cache.h"
#include "hostir/runtime/packed_gemm.h"

namespace hostir {
namespace {

const Layout kWeightBlocked = Layout::dnnlBlocked(64, /*n_axis=*/0);

// Packs `w` (cached), writes `next` into its memory with `write`, packs
// again: the second packing must unpack to the new bits.
void expectTheWriteIsSeen(const std::function<void(const at::Tensor&, const at::Tensor&)>& write) {
  at::Tensor w = at::randn({70, 24});
  at::Tensor next = at::randn({70, 24});
  packMatmulRhsCached(w, kWeightBlocked);
  write(w, next);
  ASSERT_TRUE(at::equal(w, next)) << "the write did not reach the weight";
  at::Tensor packed = packMatmulRhsCached(w, kWeightBlocked);
  EXPECT_TRUE(at::equal(unpackMatmulRhs(packed, kWeightBlocked, {70, 24}), next))
      << "the cache served the packing of the old bits";
}

TEST(PackCacheTest, AWriteThroughDataIsSeen) {
  // Python's w.data.copy_(...): a tensor of the same memory whose version
  // counter is its own.
  expectTheWriteIsSeen(
      [](const at::Tensor& w, const at::Tensor& next) { w.variable_data().copy_(next); });
}

TEST(PackCacheTest, AWriteThroughAFromBlobAliasIsSeen) {
  expectTheWriteIsSeen([](const at::Tensor& w, const at::Tensor& next) {
    at::from_blob(w.data_ptr(), w.sizes(), w.options()).copy_(next);
  });
}

TEST(PackCacheTest, ARawWriteIsSeen) {
  // What a collective (Gloo, MPI) or a numpy alias does: bytes into the memory.
  expectTheWriteIsSeen([](const at::Tensor& w, const at::Tensor& next) {
    std::memcpy(w.data_ptr(), next.data_ptr(), w.nbytes());
  });
}

TEST(PackCacheTest, AnInPlaceOpBelowAutogradIsSeen) {
  // An op dispatched below autograd's in-place kernel bumps no version.
  expectTheWriteIsSeen([](const at::Tensor& w, const at::Tensor& next) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    w.copy_(next);
  });
}

TEST(PackCacheTest, AnInPlaceOpIsSeen) {
  expectTheWriteIsSeen([](const at::Tensor& w, const at::Tensor& next) { w.copy_(next); });
}

TEST(PackCacheTest, ThePackedTensorOfAFromBlobAliasSeesWritesToTheOriginal) {
  at::Tensor w = at::randn({70, 24});
  at::Tensor alias = at::from_blob(w.data_ptr(), w.sizes(), w.options());
  packMatmulRhsCached(alias, kWeightBlocked);
  w.mul_(2);
  at::Tensor packed = packMatmulRhsCached(alias, kWeightBlocked);
  EXPECT_TRUE(at::equal(unpackMatmulRhs(packed, kWeightBlocked, {70, 24}), w));
}

TEST(PackCacheTest, ANegativeZeroIsNotAZero) {
  // Bits, not ==: -0.0 == 0.0 would keep the old packing.
  at::Tensor w = at::zeros({70, 24});
  packMatmulRhsCached(w, kWeightBlocked);
  at::Tensor negative = at::zeros({70, 24}).neg();
  std::memcpy(w.data_ptr(), negative.data_ptr(), w.nbytes());
  at::Tensor packed = packMatmulRhsCached(w, kWeightBlocked);
  EXPECT_TRUE(std::signbit(unpackMatmulRhs(packed, kWeightBlocked, {70, 24})[3][5].item<float>()));
}

TEST(PackCacheTest, AnUnchangedWeightIsReusedAcrossItsAliases) {
  // hostir.autograd passes weight.detach(), a new tensor every step, of the
  // same memory: reused, not packed again.
  at::Tensor w = at::randn({70, 24});
  at::Tensor first = packMatmulRhsCached(w.detach(), kWeightBlocked);
  const int64_t hits = packCacheHits();
  at::Tensor second = packMatmulRhsCached(w.detach(), kWeightBlocked);
  EXPECT_EQ(packCacheHits(), hits + 1);
  EXPECT_TRUE(second.is_same(first));
}

TEST(PackCacheTest, ViewsOfOneStorageKeepTheirOwnEntries) {
  // Q, K and V weights as rows of one tensor: each view packed once.
  at::Tensor qkv = at::randn({3 * 32, 24});
  for (int round = 0; round < 2; ++round) {
    for (int64_t i = 0; i < 3; ++i) {
      at::Tensor view = qkv.narrow(0, 32 * i, 32);
      const int64_t hits = packCacheHits();
      at::Tensor packed = packMatmulRhsCached(view, kWeightBlocked);
      EXPECT_EQ(packCacheHits(), hits + round) << "view " << i << ", round " << round;
      EXPECT_TRUE(at::equal(unpackMatmulRhs(packed, kWeightBlocked, {32, 24}), view));
    }
  }
}

TEST(PackCacheTest, ARunInputIsComparedOncePerRun) {
  at::Tensor w = at::randn({70, 24});
  packMatmulRhsCached(w, kWeightBlocked);
  for (int run = 0; run < 2; ++run) {
    const ReadOnlyRunInputs inputs({w});
    const int64_t comparisons = packCacheComparisons();
    const int64_t hits = packCacheHits();
    for (int chunk = 0; chunk < 4; ++chunk) {
      packMatmulRhsCached(w, kWeightBlocked);
      packMatmulRhsCached(w.t().t(), kWeightBlocked);  // a view reading the same memory
    }
    EXPECT_EQ(packCacheHits(), hits + 8) << "run " << run;
    EXPECT_EQ(packCacheComparisons(), comparisons + 1) << "run " << run;
  }
  // Between runs the weight may change: the next run compares again.
  w.variable_data().add_(1);
  const ReadOnlyRunInputs inputs({w});
  at::Tensor packed = packMatmulRhsCached(w, kWeightBlocked);
  EXPECT_TRUE(at::equal(unpackMatmulRhs(packed, kWeightBlocked, {70, 24}), w));
}

TEST(PackCacheTest, AnOperandThatIsNoRunInputIsComparedEveryTime) {
  // A computed operand (rewritten by the run's own kernels) is never
  // trusted without a comparison.
  at::Tensor w = at::randn({70, 24});
  at::Tensor computed = at::randn({70, 24});
  const ReadOnlyRunInputs inputs({w});
  packMatmulRhsCached(computed, kWeightBlocked);
  std::memcpy(computed.data_ptr(), w.data_ptr(), w.nbytes());
  at::Tensor packed = packMatmulRhsCached(computed, kWeightBlocked);
  EXPECT_TRUE(at::equal(unpackMatmulRhs(packed, kWeightBlocked, {70, 24}), w));
  const int64_t comparisons = packCacheComparisons();
  packMatmulRhsCached(computed, kWeightBlocked);
  EXPECT_EQ(packCacheComparisons(), comparisons + 1);
}

// A weight gradient's GEMM, dW = xᵀ @ dy, reads a running program's
// buffer (the gathered x, gelu(h)) once per step: the first GEMM read since
// the buffer's last write takes it as it is, neither packed nor kept in the
// cache (the MLP training step packed 48 MiB per step for two GEMMs and
// held the packed copy at its peak memory); a second read of the same bits
// (each chunk's GEMM on one computed operand) packs it and reuses that.
TEST(PackCacheTest, AProgramBufferReadOnceIsNotPacked) {
  if (dnnlPreferredNBlock(96, 130) == 0) {
    EXPECT_FALSE(
        matmulThroughDnnlOut(at::empty({40, 130}), at::randn({40, 96}), at::randn({96, 130})))
        << "oneDNN keeps B plain on this target: ATen computes it";
    return;
  }
  at::Tensor operand = deferredEmpty({96, 130}, at::kFloat, nullptr);
  materialize(operand, /*written=*/true);
  operand.copy_(at::randn({96, 130}));
  const at::Tensor activations = at::randn({96, 40});  // dW = activationsᵀ @ operand
  const at::Tensor lhs = activations.t();
  const at::Tensor truth = at::matmul(lhs.to(at::kDouble), operand.to(at::kDouble));
  auto expectTheProduct = [&](const at::Tensor& out, const char* what) {
    const double scale = truth.abs().max().item<double>();
    EXPECT_LE((out.to(at::kDouble) - truth).abs().max().item<double>(), 1e-5 * scale) << what;
  };
  dropStalePackCacheEntries();
  const int64_t entries = packCacheEntries();
  const int64_t hits = packCacheHits();

  at::Tensor out = at::full({40, 130}, -7.0f);
  ASSERT_TRUE(matmulThroughDnnlOut(out, lhs, operand));
  expectTheProduct(out, "first read");
  EXPECT_EQ(packCacheEntries(), entries) << "the operand read once was packed";

  at::Tensor wide = at::zeros({40, 140});
  at::Tensor strided = wide.narrow(1, 5, 130);
  ASSERT_TRUE(matmulThroughDnnlOut(strided, lhs, operand));
  expectTheProduct(strided, "second read, into a strided output");
  EXPECT_EQ(packCacheEntries(), entries + 1) << "the operand read twice is packed";
  ASSERT_TRUE(matmulThroughDnnlOut(out, lhs, operand));
  EXPECT_EQ(packCacheHits(), hits + 1) << "the third read reuses the packing";

  materialize(operand, /*written=*/true);  // the next step writes it
  operand.copy_(at::randn({96, 130}));
  const at::Tensor next = at::matmul(lhs.to(at::kDouble), operand.to(at::kDouble));
  ASSERT_TRUE(matmulThroughDnnlOut(out, lhs, operand));
  EXPECT_LE((out.to(at::kDouble) - next).abs().max().item<double>(),
            1e-5 * next.abs().max().item<double>())
      << "the packing of the old bits was served";
  EXPECT_EQ(packCacheHits(), hits + 1) << "read plain again after the write";

  const at::Tensor weight = at::randn({96, 130});  // not a program's buffer
  ASSERT_TRUE(matmulThroughDnnlOut(out, lhs, weight));
  EXPECT_EQ(packCacheEntries(), entries + 2) << "a weight is packed at its first read";
}

}  // namespace
}  // namespace hostir
