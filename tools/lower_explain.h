#pragma once

#include <string>
#include <vector>

namespace hostir {

// `hostir lower --explain EXAMPLE` (issue 36): lowers sp-mlp or sp-layer as
// written (no Stream split: the program the automatic pass starts from) for
// --device, prints its host program, then one entry per collective the
// automatic pass looked at: pipelined or not, on which axis, and why. The
// chunk count and the predicted times need the sizes and the link, which an
// executor learns at the first run; `hostir sp-mlp --chunks none --explain`
// prints those and the measured exposed time of each collective.
int runLowerExplain(const std::vector<std::string>& args);

}  // namespace hostir
