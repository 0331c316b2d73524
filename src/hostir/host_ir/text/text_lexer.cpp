#include "hostir/host_ir/text/text_lexer.h"

#include <cctype>

#include "hostir/ir/error.h"

namespace hostir::text {

namespace {

bool isWordStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool isWordPart(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

bool isDigit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

class Lexer {
 public:
  Lexer(const std::string& source, const std::string& source_name)
      : source_(source), source_name_(source_name) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skipSpaceAndComments();
      Token token;
      token.line = line_;
      token.column = column_;
      if (position_ >= source_.size()) {
        tokens.push_back(token);
        return tokens;
      }
      char c = source_[position_];
      if (isWordStart(c)) {
        token.kind = TokenKind::Word;
        token.text = takeWhile(isWordPart);
      } else if ((c == '%' || c == '#') && position_ + 1 < source_.size() &&
                 std::isalnum(static_cast<unsigned char>(source_[position_ + 1])) != 0) {
        token.kind = c == '%' ? TokenKind::ValRef : TokenKind::ExprRef;
        advance();
        // Appended, not `std::string(1, c) + ...`: GCC 12 -O3 warns falsely
        // (-Wrestrict) on that operator+.
        token.text.assign(1, c);
        token.text += takeWhile(isWordPart);
      } else if (isDigit(c) ||
                 (c == '-' && position_ + 1 < source_.size() && isDigit(source_[position_ + 1]))) {
        lexNumber(token);
      } else if (c == '"') {
        token.kind = TokenKind::String;
        token.text = lexString(token);
      } else if (c == '-' && position_ + 1 < source_.size() && source_[position_ + 1] == '>') {
        token.kind = TokenKind::Punctuation;
        token.text = "->";
        advance();
        advance();
      } else if (std::string("{}()[],=").find(c) != std::string::npos) {
        token.kind = TokenKind::Punctuation;
        token.text = std::string(1, c);
        advance();
      } else {
        HOSTIR_CHECK(false, source_name_, ":", line_, ":", column_, ": unexpected character '",
                     std::string(1, c), "'; host IR text holds words, %vals, #exprs, numbers, ",
                     "\"strings\" and { } ( ) [ ] , = ->");
      }
      tokens.push_back(token);
    }
  }

 private:
  void advance() {
    if (source_[position_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++position_;
  }

  template <typename Predicate>
  std::string takeWhile(Predicate predicate) {
    size_t start = position_;
    while (position_ < source_.size() && predicate(source_[position_])) {
      advance();
    }
    return source_.substr(start, position_ - start);
  }

  void skipSpaceAndComments() {
    while (position_ < source_.size()) {
      char c = source_[position_];
      if (std::isspace(static_cast<unsigned char>(c)) != 0) {
        advance();
      } else if (c == '/' && position_ + 1 < source_.size() && source_[position_ + 1] == '/') {
        takeWhile([](char d) { return d != '\n'; });
      } else {
        return;
      }
    }
  }

  void lexNumber(Token& token) {
    size_t start = position_;
    if (source_[position_] == '-') {
      advance();
    }
    takeWhile(isDigit);
    bool real = false;
    if (position_ < source_.size() && source_[position_] == '.') {
      real = true;
      advance();
      takeWhile(isDigit);
    }
    if (position_ < source_.size() && (source_[position_] == 'e' || source_[position_] == 'E')) {
      real = true;
      advance();
      if (position_ < source_.size() && (source_[position_] == '+' || source_[position_] == '-')) {
        advance();
      }
      takeWhile(isDigit);
    }
    token.kind = real ? TokenKind::Real : TokenKind::Integer;
    token.text = source_.substr(start, position_ - start);
  }

  std::string lexString(const Token& token) {
    advance();  // the opening quote
    std::string value;
    while (position_ < source_.size() && source_[position_] != '"') {
      char c = source_[position_];
      HOSTIR_CHECK(c != '\n', source_name_, ":", token.line, ":", token.column,
                   ": a string runs past the end of its line; close it with '\"'");
      if (c == '\\' && position_ + 1 < source_.size()) {
        advance();
        char escaped = source_[position_];
        value += escaped == 'n' ? '\n' : escaped;
      } else {
        value += c;
      }
      advance();
    }
    HOSTIR_CHECK(position_ < source_.size(), source_name_, ":", token.line, ":", token.column,
                 ": a string is not closed; end it with '\"'");
    advance();  // the closing quote
    return value;
  }

  const std::string& source_;
  const std::string& source_name_;
  size_t position_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::string describe(const Token& token) {
  if (token.kind == TokenKind::End) {
    return "end of input";
  }
  if (token.kind == TokenKind::String) {
    return "the string \"" + token.text + "\"";
  }
  return "'" + token.text + "'";
}

std::vector<Token> tokenize(const std::string& source, const std::string& source_name) {
  return Lexer(source, source_name).run();
}

}  // namespace hostir::text
