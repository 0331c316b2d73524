#pragma once

#include <functional>

namespace hostir::tools {

// Median wall time, in ms, of `runs` calls of `body`; `before` runs ahead of
// each call, untimed (e.g. a barrier that lines ranks up).
double medianMilliseconds(int runs, const std::function<void()>& body,
                          const std::function<void()>& before = {});

}  // namespace hostir::tools
