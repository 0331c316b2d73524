#pragma once

#include <memory>
#include <string>

#include "hostir/host_ir/host_ir_container.h"

namespace hostir {

// Reads the textual host IR that printHostIrText writes (docs/lowering.md,
// "Textual host IR and `hostir opt`") back into a program that prints the
// same: statements keep their numbers, exprs are made in number order (the
// order they were created in), loop bodies and the program in the printed
// order. Every node is made through its constructor, so a malformed node is
// refused with the node's own error. A syntax error, an unknown word, an
// undefined or twice defined %val or #expr is a hostir::Error that starts
// with "SOURCE:LINE:COLUMN:", says what was expected and names the token
// found.
std::unique_ptr<HostIrContainer> parseHostIrText(const std::string& text,
                                                 const std::string& source_name = "<input>");

// Reads a fusion alone as printFusionText writes it ("fusion { vals {...}
// inputs (...) outputs (...) exprs {...} }"): a user's fusion before
// segmentation, what the presegmentation passes transform. Same rules and
// errors as parseHostIrText.
std::unique_ptr<Fusion> parseFusionText(const std::string& text,
                                        const std::string& source_name = "<input>");

// Either text: a fusion when it starts with "fusion", a host program
// otherwise (exactly one of the two is set).
struct ParsedIr {
  std::unique_ptr<HostIrContainer> program;
  std::unique_ptr<Fusion> fusion;
};
ParsedIr parseIrText(const std::string& text, const std::string& source_name = "<input>");

}  // namespace hostir
