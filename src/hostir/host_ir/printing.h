#pragma once

#include <string>
#include <vector>

#include "hostir/ir/statement.h"

// Small text helpers shared by the host IR printers.
namespace hostir {

// "T0_g_float[...], i3": each Val's inline form, comma separated.
std::string valListString(const std::vector<Val*>& vals);

// Prefixes every non-empty line of `text` with 2 * indent spaces.
std::string indentLines(const std::string& text, int indent);

}  // namespace hostir
