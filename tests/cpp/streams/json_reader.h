#pragma once

#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hostir::runtime::testing {

// A small strict JSON reader, enough to check that a trace is well-formed and
// to look inside it without a JSON library.
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  const JsonValue& at(const std::string& key) const {
    auto it = object.find(key);
    if (kind != Kind::kObject || it == object.end()) {
      throw std::runtime_error("no JSON member '" + key + "'");
    }
    return it->second;
  }
  bool has(const std::string& key) const {
    return kind == Kind::kObject && object.count(key) != 0;
  }
};

class JsonReader {
 public:
  // Throws std::runtime_error on malformed input.
  static JsonValue parse(const std::string& text) {
    JsonReader reader(text);
    JsonValue value = reader.readValue();
    reader.skipSpace();
    reader.expect(reader.pos_ == text.size(), "trailing characters");
    return value;
  }

 private:
  explicit JsonReader(const std::string& text) : text_(text) {}

  void expect(bool ok, const char* what) const {
    if (!ok) {
      throw std::runtime_error(std::string("bad JSON at offset ") + std::to_string(pos_) + ": " +
                               what);
    }
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  char peek() {
    skipSpace();
    expect(pos_ < text_.size(), "unexpected end");
    return text_[pos_];
  }
  void consume(char c) {
    expect(peek() == c, "unexpected character");
    ++pos_;
  }
  bool consumeWord(const std::string& word) {
    if (text_.compare(pos_, word.size(), word) == 0) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  JsonValue readValue() {
    JsonValue value;
    const char c = peek();
    if (c == '{') {
      value.kind = JsonValue::Kind::kObject;
      consume('{');
      if (peek() != '}') {
        do {
          std::string key = readString();
          consume(':');
          value.object[key] = readValue();
        } while (peek() == ',' && (consume(','), true));
      }
      consume('}');
    } else if (c == '[') {
      value.kind = JsonValue::Kind::kArray;
      consume('[');
      if (peek() != ']') {
        do {
          value.array.push_back(readValue());
        } while (peek() == ',' && (consume(','), true));
      }
      consume(']');
    } else if (c == '"') {
      value.kind = JsonValue::Kind::kString;
      value.string = readString();
    } else if (consumeWord("true") || consumeWord("false")) {
      value.kind = JsonValue::Kind::kBool;
      value.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
    } else if (consumeWord("null")) {
      value.kind = JsonValue::Kind::kNull;
    } else {
      value.kind = JsonValue::Kind::kNumber;
      std::size_t used = 0;
      value.number = std::stod(text_.substr(pos_), &used);
      expect(used > 0, "bad number");
      pos_ += used;
    }
    return value;
  }

  std::string readString() {
    consume('"');
    std::string result;
    while (true) {
      expect(pos_ < text_.size(), "unterminated string");
      const char c = text_[pos_++];
      if (c == '"') {
        return result;
      }
      expect(static_cast<unsigned char>(c) >= 0x20, "raw control character in string");
      if (c != '\\') {
        result += c;
        continue;
      }
      expect(pos_ < text_.size(), "unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': result += '"'; break;
        case '\\': result += '\\'; break;
        case '/': result += '/'; break;
        case 'n': result += '\n'; break;
        case 't': result += '\t'; break;
        case 'r': result += '\r'; break;
        case 'b': result += '\b'; break;
        case 'f': result += '\f'; break;
        case 'u':
          expect(pos_ + 4 <= text_.size(), "short \\u escape");
          result += static_cast<char>(std::stoi(text_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
          break;
        default: expect(false, "unknown escape");
      }
    }
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace hostir::runtime::testing
