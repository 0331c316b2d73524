#pragma once

#include <cstddef>
#include <string>
#include <vector>

// The tokens of the textual host IR (docs/lowering.md, "Textual host IR and
// `hostir opt`"), each with the line and column it starts at, so that a parse
// error can point at it.
namespace hostir::text {

enum class TokenKind {
  Word,         // a keyword, an op name, an enum spelling: [A-Za-z_][A-Za-z0-9_.]*
  ValRef,       // %T3, %I7, %s2, %D1, %S0
  ExprRef,      // #12
  Integer,      // -?[0-9]+
  Real,         // -?[0-9]+(.[0-9]*)?(e[+-]?[0-9]+)? with a '.' or an exponent
  String,       // "..." with \" \\ \n escapes
  Punctuation,  // { } ( ) [ ] , = ->
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // as written; a String's text is its unescaped value
  int line = 1;
  int column = 1;
};

// What a token looks like in an error message: "'foo'", "end of input".
std::string describe(const Token& token);

// Splits `source` into tokens ending with one End token; `//` starts a
// comment that runs to the end of the line. An error names `source_name`,
// the line and column of a character no token starts with.
std::vector<Token> tokenize(const std::string& source, const std::string& source_name);

}  // namespace hostir::text
