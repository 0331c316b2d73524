#include "hostir/host_ir/text/text_spellings.h"

#include <utility>

#include "hostir/ir/error.h"

namespace hostir::text {

namespace {

template <typename Enum>
using Spellings = std::vector<std::pair<Enum, const char*>>;

const Spellings<DataType>& dataTypes() {
  static const Spellings<DataType> table = {{DataType::Float, "Float"},
                                            {DataType::Double, "Double"},
                                            {DataType::Half, "Half"},
                                            {DataType::BFloat16, "BFloat16"},
                                            {DataType::Int32, "Int32"},
                                            {DataType::Int64, "Int64"},
                                            {DataType::Bool, "Bool"},
                                            {DataType::ComplexFloat, "ComplexFloat"},
                                            {DataType::ComplexDouble, "ComplexDouble"}};
  return table;
}

const Spellings<IterType>& iterTypes() {
  static const Spellings<IterType> table = {{IterType::Iteration, "Iteration"},
                                            {IterType::Reduction, "Reduction"},
                                            {IterType::Broadcast, "Broadcast"}};
  return table;
}

const Spellings<ParallelType>& parallelTypes() {
  static const Spellings<ParallelType> table = {{ParallelType::Serial, "Serial"},
                                                {ParallelType::Stream, "Stream"},
                                                {ParallelType::DIDx, "DIDx"},
                                                {ParallelType::DIDy, "DIDy"}};
  return table;
}

const Spellings<MemoryType>& memoryTypes() {
  static const Spellings<MemoryType> table = {{MemoryType::Global, "Global"},
                                              {MemoryType::Local, "Local"}};
  return table;
}

template <typename Enum>
std::string spellIn(const Spellings<Enum>& table, Enum value) {
  for (const auto& [candidate, word] : table) {
    if (candidate == value) {
      return word;
    }
  }
  HOSTIR_ASSERT(false, "an enum value without a spelling in the host IR text");
}

template <typename Enum>
std::optional<Enum> named(const Spellings<Enum>& table, const std::string& word) {
  for (const auto& [value, candidate] : table) {
    if (word == candidate) {
      return value;
    }
  }
  return std::nullopt;
}

template <typename Enum>
std::string words(const Spellings<Enum>& table) {
  std::string result;
  for (const auto& [value, word] : table) {
    result += (result.empty() ? "" : ", ") + std::string(word);
  }
  return result;
}

}  // namespace

std::string spell(DataType dtype) {
  return spellIn(dataTypes(), dtype);
}
std::string spell(IterType iter_type) {
  return spellIn(iterTypes(), iter_type);
}
std::string spell(ParallelType parallel_type) {
  return spellIn(parallelTypes(), parallel_type);
}
std::string spell(MemoryType memory_type) {
  return spellIn(memoryTypes(), memory_type);
}

std::optional<DataType> dataTypeNamed(const std::string& word) {
  return named(dataTypes(), word);
}
std::optional<IterType> iterTypeNamed(const std::string& word) {
  return named(iterTypes(), word);
}
std::optional<ParallelType> parallelTypeNamed(const std::string& word) {
  return named(parallelTypes(), word);
}
std::optional<MemoryType> memoryTypeNamed(const std::string& word) {
  return named(memoryTypes(), word);
}

std::string dataTypeWords() {
  return words(dataTypes());
}
std::string iterTypeWords() {
  return words(iterTypes());
}
std::string parallelTypeWords() {
  return words(parallelTypes());
}
std::string memoryTypeWords() {
  return words(memoryTypes());
}

}  // namespace hostir::text
