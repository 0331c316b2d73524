#include "hostir/host_ir/text/host_ir_text_parser.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <optional>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/stream.h"
#include "hostir/host_ir/text/enum_attributes.h"
#include "hostir/host_ir/text/expr_factory.h"
#include "hostir/host_ir/text/text_lexer.h"
#include "hostir/host_ir/text/text_names.h"
#include "hostir/host_ir/text/text_spellings.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

using text::Token;
using text::TokenKind;

// One expr as written: made once every expr is read, in number order.
struct ExprRecord {
  Token at;  // its #id, for errors
  int64_t name = 0;
  std::string op;
  std::vector<Val*> inputs;
  std::vector<Val*> outputs;
  std::vector<Attribute> attributes;
  std::vector<Val*> attribute_vals;
  std::optional<Token> unit;                                     // PostOnStream
  std::vector<std::pair<Token, std::vector<int64_t>>> variants;  // PostOnStream
  std::optional<Token> completes;                                // Wait
  std::unique_ptr<Fusion> fusion;                                // HostUnit
  std::optional<SegmentEngine> engine;                           // HostUnit
  std::optional<std::vector<int64_t>> body;                      // ForLoop: its exprs' numbers
};

// The statements of one container (a program, or a segment fusion in it).
struct Symbols {
  explicit Symbols(Fusion* owner) : container(owner) {}
  Fusion* container;
  std::map<std::string, Val*> vals;
  std::map<int64_t, ExprRecord> records;
  std::map<int64_t, Expr*> exprs;
};

class Parser {
 public:
  Parser(const std::string& source, std::string source_name)
      : source_name_(std::move(source_name)), tokens_(text::tokenize(source, source_name_)) {}

  // A user's fusion alone: "fusion { ... }" and the end.
  std::unique_ptr<Fusion> fusionAlone() {
    expectWord("fusion");
    std::unique_ptr<Fusion> result = fusion();
    expectKind(TokenKind::End, "the end of the fusion");
    return result;
  }

  // Whether the text starts with "fusion" (else it is taken for a program).
  bool startsWithFusion() const {
    return peek().kind == TokenKind::Word && peek().text == "fusion";
  }

  std::unique_ptr<HostIrContainer> program() {
    auto program = std::make_unique<HostIrContainer>();
    Symbols symbols(program.get());
    expectWord("host_program");
    expect("{");
    if (acceptWord("targets")) {
      program->setDeviceTargets(targets());
    }
    valsAndSignature(symbols);
    expectWord("detached");
    exprBlock(symbols, nullptr);
    expectWord("program");
    std::vector<int64_t> top_level = exprBlock(symbols, nullptr);
    std::vector<std::pair<std::unique_ptr<Fusion>, std::optional<SegmentEngine>>> kernels;
    while (acceptWord("kernel")) {
      Token id = expectKind(TokenKind::Integer, "a kernel id");
      check(std::stoll(id.text) == static_cast<int64_t>(kernels.size()), id,
            "kernel " + std::to_string(kernels.size()) + " (kernels are numbered in order)");
      std::optional<SegmentEngine> engine = optionalEngine();
      expectWord("fusion");
      kernels.emplace_back(fusion(), std::move(engine));
    }
    expect("}");
    expectKind(TokenKind::End, "the end of the program");
    makeExprs(symbols);
    for (int64_t name : top_level) {
      program->pushBackTopLevelExpr(symbols.exprs.at(name));
    }
    for (auto& [kernel, engine] : kernels) {
      int64_t id = program->addKernel(std::move(kernel));
      if (engine.has_value()) {
        program->setKernelEngine(id, std::move(*engine));
      }
    }
    return program;
  }

 private:
  // --- tokens ---
  const Token& peek() const {
    return tokens_[position_];
  }
  Token take() {
    Token token = tokens_[position_];
    if (token.kind != TokenKind::End) {
      ++position_;
    }
    return token;
  }
  [[noreturn]] void fail(const Token& token, const std::string& expected) const {
    HOSTIR_THROW(source_name_, ":", token.line, ":", token.column, ": expected ", expected,
                 ", got ", text::describe(token));
  }
  void check(bool condition, const Token& token, const std::string& expected) const {
    if (!condition) {
      fail(token, expected);
    }
  }
  bool accept(const std::string& punctuation) {
    if (peek().kind == TokenKind::Punctuation && peek().text == punctuation) {
      take();
      return true;
    }
    return false;
  }
  void expect(const std::string& punctuation) {
    if (!accept(punctuation)) {
      fail(peek(), "'" + punctuation + "'");
    }
  }
  bool acceptWord(const std::string& word) {
    if (peek().kind == TokenKind::Word && peek().text == word) {
      take();
      return true;
    }
    return false;
  }
  void expectWord(const std::string& word) {
    if (!acceptWord(word)) {
      fail(peek(), "'" + word + "'");
    }
  }
  Token expectKind(TokenKind kind, const std::string& what) {
    check(peek().kind == kind, peek(), what);
    return take();
  }
  int64_t integer(const std::string& what) {
    Token token = expectKind(TokenKind::Integer, what);
    try {
      return std::stoll(token.text);
    } catch (const std::out_of_range&) {
      fail(token, what + " that fits in 64 bits");
    }
  }
  std::vector<int64_t> integers(const std::string& what) {
    return list<int64_t>("[", "]", [&] { return integer(what); });
  }
  template <typename T, typename Item>
  std::vector<T> list(const char* open, const char* close, Item item) {
    std::vector<T> items;
    expect(open);
    if (accept(close)) {
      return items;
    }
    do {
      items.push_back(item());
    } while (accept(","));
    expect(close);
    return items;
  }
  template <typename Enum>
  Enum spelled(std::optional<Enum> (*named)(const std::string&), const std::string& expected) {
    Token token = expectKind(TokenKind::Word, expected);
    std::optional<Enum> value = named(token.text);
    check(value.has_value(), token, expected);
    return *value;
  }

  // --- vals ---
  Val* valRef(Symbols& symbols) {
    Token token = expectKind(TokenKind::ValRef, "a %val");
    auto it = symbols.vals.find(token.text);
    check(it != symbols.vals.end(), token, "a %val defined in this container's vals");
    return it->second;
  }
  template <typename V>
  V* valRefOf(Symbols& symbols, ValType kind, const char* what) {
    const Token& at = peek();
    Val* val = valRef(symbols);
    check(val->vtype() == kind, at, what);
    return val->as<V>();
  }
  std::vector<Val*> valList(Symbols& symbols, const char* open, const char* close) {
    return list<Val*>(open, close, [&] { return valRef(symbols); });
  }
  std::vector<IterDomain*> iterDomains(Symbols& symbols) {
    return list<IterDomain*>("[", "]", [&] {
      return valRefOf<IterDomain>(symbols, ValType::IterDomain, "an %I iter domain");
    });
  }
  bool boolean() {
    Token token = expectKind(TokenKind::Word, "true or false");
    check(token.text == "true" || token.text == "false", token, "true or false");
    return token.text == "true";
  }
  double real() {
    Token token = take();
    if (token.kind == TokenKind::Real || token.kind == TokenKind::Integer) {
      return std::stod(token.text);
    }
    check(token.kind == TokenKind::Word &&
              (token.text == "inf" || token.text == "neg_inf" || token.text == "nan"),
          token, "a number");
    if (token.text == "nan") {
      return std::numeric_limits<double>::quiet_NaN();
    }
    return token.text == "inf" ? std::numeric_limits<double>::infinity()
                               : -std::numeric_limits<double>::infinity();
  }

  Val* scalar(Fusion* container) {
    const Token& token = peek();
    if (token.kind == TokenKind::Integer) {
      return IrBuilder::createInContainer<Scalar>(container, integer("an integer"));
    }
    if (token.kind == TokenKind::Real ||
        (token.kind == TokenKind::Word &&
         (token.text == "inf" || token.text == "neg_inf" || token.text == "nan"))) {
      return IrBuilder::createInContainer<Scalar>(container, real());
    }
    if (token.kind == TokenKind::Word && (token.text == "true" || token.text == "false")) {
      return IrBuilder::createInContainer<Scalar>(container, boolean());
    }
    if (acceptWord("complex")) {  // complex REAL IMAG
      const double re = real();
      return IrBuilder::createInContainer<Scalar>(container, std::complex<double>(re, real()));
    }
    DataType dtype = spelled(text::dataTypeNamed, "a constant or one of " + text::dataTypeWords());
    if (peek().kind == TokenKind::String) {
      return IrBuilder::createInContainer<Scalar>(container, take().text, dtype);
    }
    return IrBuilder::createInContainer<Scalar>(container, dtype);
  }

  Val* tensor(Symbols& symbols) {
    auto* domain = valRefOf<TensorDomain>(symbols, ValType::TensorDomain, "a %D tensor domain");
    DataType dtype = spelled(text::dataTypeNamed, "one of " + text::dataTypeWords());
    MemoryType memory = spelled(text::memoryTypeNamed, "one of " + text::memoryTypeWords());
    auto* tv = IrBuilder::createInContainer<TensorView>(symbols.container, domain, dtype, memory);
    if (acceptWord("mesh")) {
      std::vector<int64_t> devices = integers("a device id");
      std::vector<int64_t> shape;
      if (acceptWord("mesh_shape")) {
        shape = integers("a mesh extent");
      }
      tv->setDeviceMesh(DeviceMesh(devices, shape));
    }
    if (acceptWord("encoding")) {
      Token kind = expectKind(TokenKind::Word, "matmul_lhs or matmul_rhs");
      check(kind.text == "matmul_lhs" || kind.text == "matmul_rhs", kind,
            "matmul_lhs or matmul_rhs");
      Encoding encoding{parseEncodingKind(kind.text), std::nullopt};
      if (acceptWord("layout")) {
        if (!acceptWord("identity")) {
          expectWord("dnnl_blocked");
          int64_t n_block = integer("a column block");
          encoding.resolved = Layout::dnnlBlocked(n_block, integer("the N axis"));
        } else {
          encoding.resolved = Layout::identity();
        }
      }
      tv->setEncoding(encoding);
    }
    tv->setZeroAboveDiagonal(acceptWord("zero_above_diagonal"));
    return tv;
  }

  Val* val(Symbols& symbols, const Token& id, ValType kind) {
    Fusion* container = symbols.container;
    switch (kind) {
      case ValType::Scalar: expectWord("scalar"); return scalar(container);
      case ValType::IterDomain: {
        expectWord("iter_domain");
        Val* extent = valRefOf<Val>(symbols, ValType::Scalar, "a %s scalar extent");
        IterType iter_type = spelled(text::iterTypeNamed, "one of " + text::iterTypeWords());
        ParallelType parallel =
            spelled(text::parallelTypeNamed, "one of " + text::parallelTypeWords());
        return IrBuilder::createInContainer<IterDomain>(container, extent, iter_type, parallel);
      }
      case ValType::TensorDomain: {
        expectWord("tensor_domain");
        expectWord("logical");
        std::vector<IterDomain*> logical = iterDomains(symbols);
        expectWord("loop");
        std::vector<IterDomain*> loop = iterDomains(symbols);
        std::vector<IterDomain*> allocation;
        if (acceptWord("allocation")) {
          allocation = iterDomains(symbols);
        }
        expectWord("contiguity");
        const Token& at = peek();
        std::vector<bool> contiguity = list<bool>("[", "]", [&] { return boolean(); });
        check(contiguity.size() == logical.size(), at,
              "one contiguity flag per logical axis (" + std::to_string(logical.size()) + ")");
        return IrBuilder::createInContainer<TensorDomain>(container, logical, loop, allocation,
                                                          contiguity);
      }
      case ValType::TensorView: expectWord("tensor"); return tensor(symbols);
      case ValType::Stream: {
        expectWord("stream");
        Val* index = nullptr;
        if (acceptWord("index")) {
          index = valRefOf<Val>(symbols, ValType::Scalar, "a %s scalar stream index");
        }
        return IrBuilder::createInContainer<Stream>(container, index);
      }
    }
    fail(id, "a val kind");
  }

  void valsAndSignature(Symbols& symbols) {
    expectWord("vals");
    expect("{");
    while (!accept("}")) {
      Token id = expectKind(TokenKind::ValRef, "a %val definition or '}'");
      ValType kind{};
      check(text::valKindOfId(id.text, kind), id,
            "a %val id whose letter is its kind (T, D, I, s or S)");
      int64_t number = 0;
      try {
        number = std::stoll(id.text.substr(2));
      } catch (const std::exception&) {
        fail(id, "a %val id: a kind letter and a number (%T3)");
      }
      check(symbols.vals.count(id.text) == 0, id, "a %val not defined before");
      expect("=");
      Val* made = val(symbols, id, kind);
      symbols.container->renameStatement(made, number);
      check(text::valId(made) == id.text, id, "a %val id: a kind letter and a number (%T3)");
      symbols.vals[id.text] = made;
    }
    expectWord("inputs");
    for (Val* input : valList(symbols, "(", ")")) {
      symbols.container->addInput(input);
    }
    expectWord("outputs");
    for (Val* output : valList(symbols, "(", ")")) {
      symbols.container->addOutput(output);
    }
  }

  DeviceTargets targets() {
    DeviceTargets result;
    list<int>("[", "]", [&] {
      int64_t device = integer("a device id");
      Token target = expectKind(TokenKind::String, "a target such as \"cpu:avx2\"");
      result[device] = parseTarget(target.text);
      return 0;
    });
    return result;
  }

  // --- exprs ---
  // Attribute `index` of an `op` expr; an enum attribute may be written as
  // its word (text/enum_attributes.h) or its number.
  Attribute attribute(const std::string& op, size_t index) {
    const Token& token = peek();
    const std::vector<std::string>* words = text::enumAttributeWords(op, index);
    if (words != nullptr && token.kind == TokenKind::Word) {
      auto word = std::find(words->begin(), words->end(), token.text);
      check(word != words->end(), token,
            "one of " + text::joinedWords(*words) + " (attribute " + std::to_string(index) +
                " of " + op + ")");
      take();
      return static_cast<int64_t>(word - words->begin());
    }
    if (token.kind == TokenKind::Integer) {
      return integer("an integer");
    }
    if (token.kind == TokenKind::String) {
      return take().text;
    }
    if (token.kind == TokenKind::Punctuation && token.text == "[") {
      return integers("an integer");
    }
    if (token.kind == TokenKind::Word && (token.text == "true" || token.text == "false")) {
      return boolean();
    }
    check(token.kind == TokenKind::Real || token.kind == TokenKind::Word, token,
          "an attribute: an integer, a real, true, false, a \"string\" or [integers]");
    return real();
  }

  // Reads "{ expr* }"; returns the numbers of the exprs directly in it.
  std::vector<int64_t> exprBlock(Symbols& symbols, const Token* /*owner*/) {
    expect("{");
    std::vector<int64_t> names;
    while (!accept("}")) {
      names.push_back(expr(symbols));
    }
    return names;
  }

  int64_t expr(Symbols& symbols) {
    ExprRecord record;
    record.at = expectKind(TokenKind::ExprRef, "an #expr or '}'");
    try {
      record.name = std::stoll(record.at.text.substr(1));
    } catch (const std::exception&) {
      fail(record.at, "an #expr id: '#' and a number (#12)");
    }
    check(symbols.records.count(record.name) == 0, record.at, "an #expr not defined before");
    Token op = expectKind(TokenKind::Word, "an op name (" + text::exprKindNames() + ")");
    check(exprMakers().count(op.text) != 0, op, "an op name (" + text::exprKindNames() + ")");
    record.op = op.text;
    record.inputs = valList(symbols, "(", ")");
    expect("->");
    record.outputs = valList(symbols, "(", ")");
    if (acceptWord("attributes")) {
      size_t index = 0;
      record.attributes = list<Attribute>("[", "]", [&] { return attribute(record.op, index++); });
    }
    if (acceptWord("vals")) {
      record.attribute_vals = valList(symbols, "[", "]");
    }
    if (acceptWord("unit")) {
      record.unit = expectKind(TokenKind::ExprRef, "the #expr of a HostUnit");
      if (acceptWord("variants")) {
        list<int>("[", "]", [&] {
          Token unit = expectKind(TokenKind::ExprRef, "the #expr of a HostUnit");
          expectWord("on");
          record.variants.emplace_back(unit, integers("a device id"));
          return 0;
        });
      }
    }
    if (acceptWord("completes")) {
      record.completes = expectKind(TokenKind::ExprRef, "the #expr of a communication");
    }
    record.engine = optionalEngine();
    if (acceptWord("fusion")) {
      record.fusion = fusion();
    } else if (peek().kind == TokenKind::Punctuation && peek().text == "{") {
      record.body = exprBlock(symbols, &record.at);
    }
    int64_t name = record.name;
    symbols.records.emplace(name, std::move(record));
    return name;
  }

  // "engine WORD \"detail\"" (a HostUnit's or a kernel's), if there.
  std::optional<SegmentEngine> optionalEngine() {
    if (!acceptWord("engine")) {
      return std::nullopt;
    }
    Token word = expectKind(TokenKind::Word, "an engine (" + engineWords() + ")");
    std::optional<SegmentEngineKind> kind = engineKindNamed(word.text);
    check(kind.has_value(), word, "an engine (" + engineWords() + ")");
    Token detail = expectKind(TokenKind::String, "the engine's detail, a \"string\"");
    return SegmentEngine{.kind = *kind, .detail = detail.text};
  }

  Expr* exprRef(Symbols& symbols, const Token& token) {
    auto it = symbols.exprs.find(std::stoll(token.text.substr(1)));
    check(it != symbols.exprs.end(), token, "an #expr of this container numbered before this one");
    return it->second;
  }

  Expr* make(Symbols& symbols, ExprRecord& record) {
    Fusion* container = symbols.container;
    if (record.op == "HostUnit") {
      check(record.fusion != nullptr, record.at, "a HostUnit with its 'fusion { ... }'");
      auto* unit = IrBuilder::createInContainer<HostUnit>(container, std::move(record.fusion));
      if (record.engine.has_value()) {
        unit->setEngine(*record.engine);
      }
      return unit;
    }
    if (record.op == "PostOnStream") {
      check(record.unit.has_value(), record.at, "a PostOnStream with its 'unit #N'");
      auto* unit = dynamic_cast<HostUnit*>(exprRef(symbols, *record.unit));
      check(unit != nullptr, *record.unit, "the #expr of a HostUnit");
      return IrBuilder::createInContainer<PostOnStream>(container, unit, record.inputs,
                                                        record.outputs);
    }
    if (record.op == "Wait") {
      check(record.completes.has_value(), record.at, "a Wait with its 'completes #N'");
      return IrBuilder::createInContainer<Wait>(container, exprRef(symbols, *record.completes));
    }
    check(record.fusion == nullptr, record.at, "a 'fusion { ... }' only on a HostUnit");
    check(!record.engine.has_value(), record.at, "an 'engine' only on a HostUnit");
    return text::makeExprNamed(record.op, container, record.inputs, record.outputs,
                               record.attributes, record.attribute_vals);
  }

  // Makes every expr read, in number order (the order they were created
  // in), then fills the loop bodies.
  void makeExprs(Symbols& symbols) {
    for (auto& [name, record] : symbols.records) {
      Expr* made = nullptr;
      try {
        made = make(symbols, record);
      } catch (const Error& error) {
        HOSTIR_THROW(source_name_, ":", record.at.line, ":", record.at.column, ": ", record.at.text,
                     " ", record.op, " is malformed: ", error.what());
      }
      symbols.container->renameStatement(made, name);
      symbols.exprs[name] = made;
    }
    // Variants may name HostUnits a pass made after the PostOnStream.
    for (auto& [name, record] : symbols.records) {
      if (!record.variants.empty()) {
        std::vector<PostOnStream::Variant> variants;
        for (const auto& [token, devices] : record.variants) {
          auto* variant = dynamic_cast<HostUnit*>(exprRef(symbols, token));
          check(variant != nullptr, token, "the #expr of a HostUnit");
          variants.push_back({variant, devices});
        }
        symbols.exprs.at(name)->as<PostOnStream>()->setVariants(variants);
      }
    }
    for (auto& [name, record] : symbols.records) {
      if (!record.body.has_value()) {
        continue;
      }
      auto* loop = dynamic_cast<ForLoop*>(symbols.exprs.at(name));
      check(loop != nullptr, record.at, "a body '{ ... }' only on a ForLoop");
      for (int64_t body_name : *record.body) {
        loop->body().push_back(symbols.exprs.at(body_name));
      }
    }
  }

  std::unique_ptr<Fusion> fusion() {
    auto fusion = std::make_unique<Fusion>();
    Symbols symbols(fusion.get());
    expect("{");
    valsAndSignature(symbols);
    expectWord("exprs");
    exprBlock(symbols, nullptr);
    expect("}");
    makeExprs(symbols);
    return fusion;
  }

  std::string source_name_;
  std::vector<Token> tokens_;
  size_t position_ = 0;
};

}  // namespace

std::unique_ptr<HostIrContainer> parseHostIrText(const std::string& text,
                                                 const std::string& source_name) {
  return Parser(text, source_name).program();
}

std::unique_ptr<Fusion> parseFusionText(const std::string& text, const std::string& source_name) {
  return Parser(text, source_name).fusionAlone();
}

ParsedIr parseIrText(const std::string& text, const std::string& source_name) {
  Parser parser(text, source_name);
  ParsedIr parsed;
  if (parser.startsWithFusion()) {
    parsed.fusion = parser.fusionAlone();
  } else {
    parsed.program = parser.program();
  }
  return parsed;
}

}  // namespace hostir
