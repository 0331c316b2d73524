#pragma once

#include <cstddef>
#include <string>
#include <vector>

// Which attributes of which exprs hold an enum, and the words the textual
// host IR writes for its values (`BinaryOp ... attributes [mod]`,
// `Communication ... attributes [Allgather, [0, 1], -1, -1, -1]`): the
// printer writes the word, the parser reads it back. An attribute holds an
// enum as its number; a new node with an enum attribute adds a row here.
namespace hostir::text {

// The words of attribute `index` of an expr whose opName() is `op_name`,
// the word of value v at [v]; nullptr when that attribute is no enum.
const std::vector<std::string>* enumAttributeWords(const std::string& op_name, size_t index);

// "add, sub, ...": the words, for an error message.
std::string joinedWords(const std::vector<std::string>& words);

}  // namespace hostir::text
