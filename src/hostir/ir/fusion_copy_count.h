#pragma once

#include <cstdint>

namespace hostir {

// How many whole-fusion copies (copyFusion, cloner.h) this process has
// made; tests count the copies an entry point makes per definition.
int64_t fusionCopyCount();

}  // namespace hostir
