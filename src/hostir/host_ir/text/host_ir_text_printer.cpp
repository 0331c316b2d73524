#include "hostir/host_ir/text/host_ir_text_printer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/stream.h"
#include "hostir/host_ir/text/enum_attributes.h"
#include "hostir/host_ir/text/text_names.h"
#include "hostir/host_ir/text/text_spellings.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

using text::spell;

std::string quoted(const std::string& value) {
  std::string result = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      result += '\\';
      result += c;
    } else if (c == '\n') {
      result += "\\n";
    } else {
      result += c;
    }
  }
  return result + "\"";
}

// A double that reads back as the same bits and never as an integer.
std::string realText(double value) {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "neg_inf";
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  std::string result(buffer);
  if (result.find_first_of(".e") == std::string::npos) {
    result += ".0";
  }
  return result;
}

template <typename T, typename Format>
std::string listText(const std::vector<T>& items, Format format, const char* open = "[",
                     const char* close = "]") {
  std::string result = open;
  for (size_t i = 0; i < items.size(); ++i) {
    result += (i ? ", " : "") + format(items[i]);
  }
  return result + close;
}

std::string intsText(const std::vector<int64_t>& values) {
  return listText(values, [](int64_t value) { return std::to_string(value); });
}

template <typename V>
std::string valsText(const std::vector<V*>& vals, const char* open = "[", const char* close = "]") {
  return listText(
      vals, [](const Val* val) { return text::valId(val); }, open, close);
}

std::string attributeText(const Attribute& attribute) {
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(value);
        } else if constexpr (std::is_same_v<T, double>) {
          return realText(value);
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quoted(value);
        } else {
          return intsText(value);
        }
      },
      attribute);
}

// An enum attribute is written as its word (text/enum_attributes.h).
const std::string* enumWord(const Expr* expr, size_t index) {
  const auto* value = std::get_if<int64_t>(&expr->attributes()[index]);
  const std::vector<std::string>* words = text::enumAttributeWords(expr->opName(), index);
  if (value == nullptr || words == nullptr || *value < 0 ||
      *value >= static_cast<int64_t>(words->size())) {
    return nullptr;
  }
  return &(*words)[static_cast<size_t>(*value)];
}

std::string attributesText(const Expr* expr) {
  std::vector<size_t> indices(expr->attributes().size());
  std::iota(indices.begin(), indices.end(), size_t{0});
  return listText(indices, [&](size_t index) {
    const std::string* word = enumWord(expr, index);
    return word != nullptr ? *word : attributeText(expr->attributes()[index]);
  });
}

// Whether an enum attribute of `expr` is written as `word` (then a comment
// repeating it says nothing).
bool namesAnAttribute(const Expr* expr, const std::string& word) {
  for (size_t index = 0; index < expr->attributes().size(); ++index) {
    const std::string* written = enumWord(expr, index);
    if (written != nullptr && *written == word) {
      return true;
    }
  }
  return false;
}

std::string scalarText(const Scalar* scalar) {
  if (const std::optional<ScalarValue>& value = scalar->value()) {
    if (const auto* integer = std::get_if<int64_t>(&*value)) {
      return "scalar " + std::to_string(*integer);
    }
    if (const auto* real = std::get_if<double>(&*value)) {
      return "scalar " + realText(*real);
    }
    if (const auto* number = std::get_if<std::complex<double>>(&*value)) {
      return "scalar complex " + realText(number->real()) + " " + realText(number->imag());
    }
    return std::string("scalar ") + (std::get<bool>(*value) ? "true" : "false");
  }
  std::string result = "scalar " + spell(scalar->dtype());
  if (!scalar->symbol().empty()) {
    result += " " + quoted(scalar->symbol());
  }
  return result;
}

std::string tensorText(const TensorView* tv) {
  std::string result = "tensor " + text::valId(tv->domain()) + " " + spell(tv->dtype()) + " " +
                       spell(tv->getMemoryType());
  if (tv->hasDeviceMesh()) {
    result += " mesh " + intsText(tv->getDeviceMesh().vector());
    if (!tv->getDeviceMesh().shape().empty()) {
      result += " mesh_shape " + intsText(tv->getDeviceMesh().shape());
    }
  }
  if (const std::optional<Encoding>& encoding = tv->encoding()) {
    result += " encoding " + toString(encoding->kind);
    if (const std::optional<Layout>& layout = encoding->resolved) {
      result += layout->isIdentity() ? std::string(" layout identity")
                                     : " layout dnnl_blocked " + std::to_string(layout->n_block) +
                                           " " + std::to_string(layout->n_axis);
    }
  }
  if (tv->zeroAboveDiagonal()) {
    result += " zero_above_diagonal";
  }
  return result;
}

std::string valText(const Val* val) {
  switch (val->vtype()) {
    case ValType::Scalar: return scalarText(val->as<Scalar>());
    case ValType::IterDomain: {
      const auto* id = val->as<IterDomain>();
      return "iter_domain " + text::valId(id->extent()) + " " + spell(id->iterType()) + " " +
             spell(id->getParallelType());
    }
    case ValType::TensorDomain: {
      const auto* domain = val->as<TensorDomain>();
      std::string result = "tensor_domain logical " + valsText(domain->logical()) + " loop " +
                           valsText(domain->loop());
      if (domain->hasAllocation()) {
        result += " allocation " + valsText(domain->allocation());
      }
      return result + " contiguity " + listText(domain->contiguity(), [](bool b) {
               return std::string(b ? "true" : "false");
             });
    }
    case ValType::TensorView: return tensorText(val->as<TensorView>());
    case ValType::Stream: {
      const auto* stream = val->as<Stream>();
      return stream->hasIndex() ? "stream index " + text::valId(stream->index()) : "stream";
    }
  }
  HOSTIR_ASSERT(false, "a Val kind the host IR text does not know");
}

std::vector<const Expr*> exprsByName(const Fusion& fusion, const std::set<const Expr*>& skip) {
  std::vector<const Expr*> exprs;
  for (const auto& statement : fusion.statements()) {
    if (!statement->isVal() && skip.count(static_cast<const Expr*>(statement.get())) == 0) {
      exprs.push_back(static_cast<const Expr*>(statement.get()));
    }
  }
  std::sort(exprs.begin(), exprs.end(),
            [](const Expr* a, const Expr* b) { return a->name() < b->name(); });
  return exprs;
}

// The exprs a pass replaced in a fusion (mutation.h's detachExpr): no output
// names them as its definition. A user's fusion prints without them: read
// back, they would be uses of their inputs again.
std::set<const Expr*> detachedExprs(const Fusion& fusion) {
  std::set<const Expr*> detached;
  for (const auto& statement : fusion.statements()) {
    if (statement->isVal()) {
      continue;
    }
    const auto* expr = static_cast<const Expr*>(statement.get());
    const std::vector<Val*>& outputs = expr->outputs();
    if (!outputs.empty() && std::none_of(outputs.begin(), outputs.end(), [&](const Val* output) {
          return output->definition() == expr;
        })) {
      detached.insert(expr);
    }
  }
  return detached;
}

void collectScope(const Scope& scope, std::set<const Expr*>& exprs) {
  for (const Expr* expr : scope.exprs()) {
    exprs.insert(expr);
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      collectScope(loop->body(), exprs);
    }
  }
}

// The Vals a Val refers to (what must be made before it).
std::vector<const Val*> valOperands(const Val* val) {
  switch (val->vtype()) {
    case ValType::IterDomain: return {val->as<IterDomain>()->extent()};
    case ValType::TensorDomain: {
      const auto* domain = val->as<TensorDomain>();
      std::vector<const Val*> operands(domain->logical().begin(), domain->logical().end());
      operands.insert(operands.end(), domain->loop().begin(), domain->loop().end());
      operands.insert(operands.end(), domain->allocation().begin(), domain->allocation().end());
      return operands;
    }
    case ValType::TensorView: return {val->as<TensorView>()->domain()};
    case ValType::Stream: {
      const Val* index = val->as<Stream>()->index();
      return index == nullptr ? std::vector<const Val*>{} : std::vector<const Val*>{index};
    }
    case ValType::Scalar: return {};
  }
  return {};
}

// Every Val in creation order, except that a Val comes after those it
// refers to (a split replaces a domain's loop axes with later ones): the
// order the parser can make them in. Printing a parsed program gives the
// same order again.
std::vector<const Val*> valsOperandsFirst(const Fusion& fusion) {
  std::vector<const Val*> order;
  std::set<const Val*> placed;
  std::function<void(const Val*)> place = [&](const Val* val) {
    if (!placed.insert(val).second) {
      return;
    }
    for (const Val* operand : valOperands(val)) {
      place(operand);
    }
    order.push_back(val);
  };
  for (const auto& statement : fusion.statements()) {
    if (statement->isVal()) {
      place(static_cast<const Val*>(statement.get()));
    }
  }
  return order;
}

class TextPrinter {
 public:
  std::string result() const {
    return out_.str();
  }

  void program(const HostIrContainer& program) {
    line(0, "host_program {");
    if (!program.deviceTargets().empty()) {
      std::string targets;
      for (const auto& [device, target] : program.deviceTargets()) {
        targets += (targets.empty() ? "" : ", ") + std::to_string(device) + " " +
                   quoted(target.toString());
      }
      line(1, "targets [" + targets + "]");
    }
    valsAndSignature(program, 1);
    std::set<const Expr*> in_program;
    collectScope(program.topLevel(), in_program);
    exprBlock("detached", exprsByName(program, in_program), 1);
    line(1, "program {");
    for (const Expr* expr : program.topLevel().exprs()) {
      this->expr(expr, 2);
    }
    line(1, "}");
    for (int64_t id = 0; id < program.numKernels(); ++id) {
      const std::optional<SegmentEngine>& engine = program.kernelEngine(id);
      std::string engine_text =
          engine.has_value() ? " engine " + engineWord(engine->kind) + " " + quoted(engine->detail)
                             : "";
      line(1, "kernel " + std::to_string(id) + engine_text + " fusion {");
      fusionBody(*program.kernel(id), 2);
      line(1, "}");
    }
    line(0, "}");
  }

  // A fusion alone: a user's, before segmentation.
  void fusion(const Fusion& fusion, int indent) {
    line(indent, "fusion {");
    valsAndSignature(fusion, indent + 1);
    exprBlock("exprs", exprsByName(fusion, detachedExprs(fusion)), indent + 1);
    line(indent, "}");
  }

 private:
  void line(int indent, const std::string& text) {
    out_ << std::string(2 * static_cast<size_t>(indent), ' ') << text << "\n";
  }

  void valsAndSignature(const Fusion& fusion, int indent) {
    line(indent, "vals {");
    for (const Val* val : valsOperandsFirst(fusion)) {
      line(indent + 1, text::valId(val) + " = " + valText(val));
    }
    line(indent, "}");
    line(indent, "inputs " + valsText(fusion.inputs(), "(", ")"));
    line(indent, "outputs " + valsText(fusion.outputs(), "(", ")"));
  }

  void fusionBody(const Fusion& fusion, int indent) {
    valsAndSignature(fusion, indent);
    exprBlock("exprs", exprsByName(fusion, {}), indent);
  }

  void exprBlock(const char* keyword, const std::vector<const Expr*>& exprs, int indent) {
    line(indent, std::string(keyword) + " {");
    for (const Expr* expr : exprs) {
      this->expr(expr, indent + 1);
    }
    line(indent, "}");
  }

  void expr(const Expr* expr, int indent) {
    std::string text = text::exprId(expr) + " " + expr->opName() + " " +
                       valsText(expr->inputs(), "(", ")") + " -> " +
                       valsText(expr->outputs(), "(", ")");
    if (!expr->attributes().empty()) {
      text += " attributes " + attributesText(expr);
    }
    if (!expr->attributeVals().empty()) {
      text += " vals " + valsText(expr->attributeVals());
    }
    if (const auto* post = dynamic_cast<const PostOnStream*>(expr)) {
      text += " unit " + text::exprId(post->hostUnit());
      if (!post->variants().empty()) {
        text += " variants " + listText(post->variants(), [](const PostOnStream::Variant& v) {
                  return text::exprId(v.unit) + " on " + intsText(v.devices);
                });
      }
    }
    if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
      text += " completes " + text::exprId(wait->communication());
    }
    if (const auto* unit = dynamic_cast<const HostUnit*>(expr)) {
      if (unit->engine().has_value()) {
        text +=
            " engine " + engineWord(unit->engine()->kind) + " " + quoted(unit->engine()->detail);
      }
      line(indent, text + " fusion {");
      fusionBody(*unit->fusion(), indent + 1);
      line(indent, "}");
      return;
    }
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      line(indent, text + " {");
      for (const Expr* body_expr : loop->body().exprs()) {
        this->expr(body_expr, indent + 1);
      }
      line(indent, "}");
      return;
    }
    // The op's printed name (e.g. "add" for a BinaryOp), for a reader and
    // for CHECK lines; the parser skips comments.
    if (expr->displayName() != expr->opName() && !namesAnAttribute(expr, expr->displayName())) {
      text += "  // " + expr->displayName();
    }
    line(indent, text);
  }

  std::ostringstream out_;
};

}  // namespace

std::string printHostIrText(const HostIrContainer& program) {
  TextPrinter printer;
  printer.program(program);
  return printer.result();
}

std::string printFusionText(const Fusion& fusion) {
  TextPrinter printer;
  printer.fusion(fusion, 0);
  return printer.result();
}

}  // namespace hostir
