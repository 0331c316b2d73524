#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/types.h"

// How the textual host IR spells the IR's enums: the printer writes these
// words and the parser reads them back (one table per enum, both ways).
namespace hostir::text {

std::string spell(DataType dtype);
std::string spell(IterType iter_type);
std::string spell(ParallelType parallel_type);
std::string spell(MemoryType memory_type);

std::optional<DataType> dataTypeNamed(const std::string& word);
std::optional<IterType> iterTypeNamed(const std::string& word);
std::optional<ParallelType> parallelTypeNamed(const std::string& word);
std::optional<MemoryType> memoryTypeNamed(const std::string& word);

// "Float, Double, ...": the valid words of an enum, for an error message.
std::string dataTypeWords();
std::string iterTypeWords();
std::string parallelTypeWords();
std::string memoryTypeWords();

}  // namespace hostir::text
