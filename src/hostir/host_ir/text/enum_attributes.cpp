#include "hostir/host_ir/text/enum_attributes.h"

#include <map>
#include <utility>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/text/text_spellings.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/random_ops.h"
#include "hostir/ir/scatter_ops.h"

namespace hostir::text {

namespace {

// The words of an enum's values 0..last, as `name` spells each.
template <typename Enum, typename Name>
std::vector<std::string> wordsUpTo(Enum last, Name name) {
  std::vector<std::string> words;
  for (int64_t value = 0; value <= static_cast<int64_t>(last); ++value) {
    words.push_back(name(static_cast<Enum>(value)));
  }
  return words;
}

template <typename Enum>
std::vector<std::string> wordsUpTo(Enum last) {
  return wordsUpTo(last, [](Enum value) { return toString(value); });
}

using Table = std::map<std::pair<std::string, size_t>, std::vector<std::string>>;

Table buildTable() {
  const std::vector<std::string> reductions = wordsUpTo(ReductionOpType::Product);
  return {
      {{"UnaryOp", 0}, wordsUpTo(UnaryOpType::Imag)},
      {{"BinaryOp", 0}, wordsUpTo(BinaryOpType::Fmod)},
      {{"ReductionOp", 0}, reductions},
      {{"GatherOp", 1}, wordsUpTo(GatherKind::IndexSelect)},
      {{"ScatterAddOp", 1}, wordsUpTo(ScatterAddKind::IndexAdd)},
      {{"RandomOp", 0}, wordsUpTo(RandomKind::Normal)},
      {{"Allocate", 0}, wordsUpTo(MemoryType::Local, [](MemoryType type) { return spell(type); })},
      {{"Communication", 0}, wordsUpTo(CommunicationType::SendRecv)},
      {{"Communication", 3}, reductions},  // the reduce op (-1: none)
      {{"P2PCommunication", 0}, wordsUpTo(P2PCommunicationType::Recv)},
  };
}

}  // namespace

const std::vector<std::string>* enumAttributeWords(const std::string& op_name, size_t index) {
  static const Table table = buildTable();
  auto it = table.find({op_name, index});
  return it == table.end() ? nullptr : &it->second;
}

std::string joinedWords(const std::vector<std::string>& words) {
  std::string result;
  for (const std::string& word : words) {
    result += (result.empty() ? "" : ", ") + word;
  }
  return result;
}

}  // namespace hostir::text
