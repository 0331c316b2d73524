// The GEMM builders of arith.h: matmul and linear (torch.matmul and
// torch.nn.functional.linear shapes).

#include "hostir/ir/arith.h"

#include <vector>

#include "hostir/ir/arith_support.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

using namespace arith_support;

TensorView* matmul(TensorView* a, TensorView* b) {
  HOSTIR_CHECK(a != nullptr && b != nullptr, "matmul: an input is null");
  MatmulOp::validate({a, b}, {});
  std::vector<IterDomain*> as = a->shapeDomain();
  std::vector<IterDomain*> bs = b->shapeDomain();
  std::vector<IterDomain*> ids;
  for (const auto& [x, y] : matmulBatchAxes(as, bs)) {
    if (x == nullptr || (x->isBroadcast() && y != nullptr)) {
      ids.push_back(freshId(y));
    } else if (y == nullptr || y->isBroadcast()) {
      ids.push_back(freshId(x));
    } else {
      ids.push_back(freshId(moreKnown(x, y)));
    }
  }
  if (as.size() >= 2) {
    ids.push_back(freshId(as[as.size() - 2]));
  }
  if (bs.size() >= 2) {
    ids.push_back(freshId(bs.back()));
  }
  TensorView* out = makeTensorOver(a->container(), ids, a->dtype());
  IrBuilder::createInContainer<MatmulOp>(a->container(), std::vector<Val*>{a, b},
                                         std::vector<Val*>{out}, std::vector<Attribute>{});
  return out;
}

TensorView* linear(TensorView* in, TensorView* weight, TensorView* bias) {
  HOSTIR_CHECK(in != nullptr && weight != nullptr, "linear: an input is null");
  std::vector<Val*> inputs{in, weight};
  if (bias != nullptr) {
    inputs.push_back(bias);
  }
  LinearOp::validate(inputs, {});
  std::vector<IterDomain*> xs = in->shapeDomain();
  std::vector<IterDomain*> ws = weight->shapeDomain();
  std::vector<IterDomain*> ids;
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    ids.push_back(freshId(xs[i]));
  }
  if (ws.size() == 2) {
    ids.push_back(freshId(ws[0]));
  }
  TensorView* out = makeTensorOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<LinearOp>(in->container(), inputs, std::vector<Val*>{out},
                                         std::vector<Attribute>{});
  return out;
}

}  // namespace hostir
