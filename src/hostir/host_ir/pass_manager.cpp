#include "hostir/host_ir/pass_manager.h"

#include <iostream>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/options.h"

namespace hostir {

void HostIrPassManager::add(std::string name, std::function<void(HostIrContainer&)> run) {
  passes_.push_back({std::move(name), std::move(run)});
}

void HostIrPassManager::run(HostIrContainer& container) {
  timings_.clear();
  for (const HostIrPass& pass : passes_) {
    if (isPassDisabled(pass.name)) {
      timings_.push_back({pass.name, std::chrono::microseconds(0), true});
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    pass.run(container);
    auto stop = std::chrono::steady_clock::now();
    timings_.push_back(
        {pass.name, std::chrono::duration_cast<std::chrono::microseconds>(stop - start), false});
    if (isDumpEnabled("passes")) {
      std::cout << "=== after host IR pass " << pass.name << ":\n"
                << container.toString() << std::flush;
    }
  }
}

}  // namespace hostir
