// The textual host IR: print → parse → print is the identity on the host
// programs the tools lower (every rank of the Megatron blocks, chunked or
// not, forward and backward; the one-device examples of `hostir list` are
// checked through the CLI, cli.opt), and bad text is refused with an error
// naming the line, the column, the token and what was expected.

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include "hostir/autodiff/differentiate.h"
#include "hostir/compiler/compile.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/host_ir/text/host_ir_text_parser.h"
#include "hostir/host_ir/text/host_ir_text_printer.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/error.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"
#include "megatron_blocks.h"

namespace hostir::test {

namespace {

// Asserts print → parse → print is the identity on `program`, and that the
// parsed program also prints the same in the readable form.
void expectRoundTrip(const HostIrContainer& program) {
  std::string text = printHostIrText(program);
  std::unique_ptr<HostIrContainer> parsed = parseHostIrText(text, "round_trip");
  EXPECT_EQ(printHostIrText(*parsed), text);
  EXPECT_EQ(parsed->toString(), program.toString());
}

std::unique_ptr<HostIrContainer> lowerOnDevice(const Fusion& fusion, int64_t device) {
  return compile(fusion, CompileOptions{.multidevice = MultiDeviceLowering{device, {}}}).program;
}

}  // namespace

TEST(HostIrTextRoundTrip, SequenceParallelMlpOnEveryRank) {
  for (int64_t chunks : {1, 4}) {
    std::unique_ptr<Fusion> fusion = tools::buildSequenceParallelMlp(2, chunks);
    for (int64_t device : {0, 1}) {
      SCOPED_TRACE("chunks " + std::to_string(chunks) + ", device " + std::to_string(device));
      expectRoundTrip(*lowerOnDevice(*fusion, device));
    }
  }
}

TEST(HostIrTextRoundTrip, TransformerLayerChunkedAndNot) {
  for (int64_t chunks : {1, 2}) {
    SCOPED_TRACE("chunks " + std::to_string(chunks));
    std::unique_ptr<Fusion> fusion = tools::buildTransformerLayer(2, 8, chunks);
    expectRoundTrip(*lowerOnDevice(*fusion, 1));
  }
}

TEST(HostIrTextRoundTrip, BackwardOfTheMlpBlock) {
  std::unique_ptr<Fusion> fusion = tools::buildSequenceParallelMlp(2, 2);
  Differentiated grads = differentiate(*fusion);
  expectRoundTrip(*lowerOnDevice(*grads.forward, 0));
  expectRoundTrip(*lowerOnDevice(*grads.backward, 0));
}

// The layer's backward reads the attention's saved probabilities, an input
// marked zero above the diagonal: the mark is printed and read back.
TEST(HostIrTextRoundTrip, BackwardOfTheTransformerLayerKeepsTheCausalMark) {
  std::unique_ptr<Fusion> fusion = tools::buildTransformerLayer(2, 8, 2);
  Differentiated grads = differentiate(*fusion);
  std::unique_ptr<HostIrContainer> program = lowerOnDevice(*grads.backward, 0);
  EXPECT_NE(printHostIrText(*program).find("zero_above_diagonal"), std::string::npos);
  expectRoundTrip(*program);
}

// Weights that carry an encoding on a mesh of mixed targets: the program
// has the device targets, SetEncoding nodes, resolved layouts and the
// HostUnit variants of each target.
TEST(HostIrTextRoundTrip, EncodedWeightsOnMixedTargets) {
  std::unique_ptr<Fusion> fusion = tools::buildSequenceParallelMlp(2, 1);
  for (int64_t weight : {1, 2}) {
    fusion->inputs()[static_cast<size_t>(weight)]->as<TensorView>()->setEncoding(
        Encoding{EncodingKind::MatmulRhs, std::nullopt});
  }
  DeviceTargets targets = {{0, targetForIsa(Isa::Avx512)}, {1, targetForIsa(Isa::Avx2)}};
  for (int64_t device : {0, 1}) {
    std::unique_ptr<HostIrContainer> program =
        compile(*fusion, CompileOptions{.multidevice = MultiDeviceLowering{device, targets}})
            .program;
    std::string text = printHostIrText(*program);
    EXPECT_NE(text.find("targets [0 \"cpu:avx512\", 1 \"cpu:avx2\"]"), std::string::npos) << text;
    EXPECT_NE(text.find("encoding matmul_rhs"), std::string::npos) << text;
    expectRoundTrip(*program);
  }
}

// A parsed program is a program: the passes run on it as on the lowered one.
// The engine the compile stage records on a HostUnit (runtime's
// decideSegmentEngines) is printed and read back, its detail quoted.
TEST(HostIrTextRoundTrip, SegmentEnginesReadBack) {
  std::unique_ptr<Fusion> fusion = tools::buildTransformerLayer(2, 8, 1);
  std::unique_ptr<HostIrContainer> program = lowerOnDevice(*fusion, 0);
  std::vector<HostUnit*> units = program->postedHostUnits();
  ASSERT_GE(units.size(), 3u);
  units[0]->setEngine({SegmentEngineKind::Kernel, "0123abcd for x86-64-linux-avx512"});
  units[1]->setEngine({SegmentEngineKind::GemmWithPostOps, "linear + gelu"});
  units[2]->setEngine({SegmentEngineKind::Aten, "no kernel lowering for \"matmul\""});
  expectRoundTrip(*program);
  const std::string text = printHostIrText(*program);
  EXPECT_NE(text.find(" engine gemm_post_ops \"linear + gelu\" fusion {"), std::string::npos);
  EXPECT_NE(program->toString().find(" (GEMM with post-ops: linear + gelu):\n"), std::string::npos);
  // A word that is no engine is refused with the valid ones.
  std::string bad = text;
  bad.replace(bad.find("engine aten"), 11, "engine fast");
  try {
    parseHostIrText(bad, "bad.hir");
    ADD_FAILURE() << "an unknown engine parsed";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("expected an engine (kernel, gemm_post_ops, aten), got 'fast'"),
              std::string::npos)
        << error.what();
  }
}

// A standalone kernel's engine (what a LaunchKernel runs) is printed after
// its id and read back; a kernel without one prints none.
TEST(HostIrTextRoundTrip, KernelEnginesReadBack) {
  std::unique_ptr<Fusion> fusion = tools::buildTransformerLayer(2, 8, 1);
  std::unique_ptr<HostIrContainer> program = lowerOnDevice(*fusion, 0);
  for (int i = 0; i < 2; ++i) {
    auto kernel = std::make_unique<Fusion>();
    copyFusion(*program->postedHostUnits().at(0)->fusion(), *kernel);
    program->addKernel(std::move(kernel));
  }
  program->setKernelEngine(1, {SegmentEngineKind::Aten, "no kernel lowering for \"x\""});
  expectRoundTrip(*program);
  const std::string text = printHostIrText(*program);
  EXPECT_NE(text.find("  kernel 0 fusion {"), std::string::npos) << text;
  EXPECT_NE(text.find("  kernel 1 engine aten \"no kernel lowering for \\\"x\\\"\" fusion {"),
            std::string::npos)
      << text;
  std::unique_ptr<HostIrContainer> parsed = parseHostIrText(text, "kernels");
  EXPECT_FALSE(parsed->kernelEngine(0).has_value());
  EXPECT_EQ(parsed->kernelEngine(1), program->kernelEngine(1));
  EXPECT_NE(program->toString().find("Kernel 1 (ATen: no kernel lowering for \"x\"):\n"),
            std::string::npos);
}

TEST(HostIrTextRoundTrip, ParsedProgramRunsThePassesLikeTheOriginal) {
  std::unique_ptr<Fusion> fusion = tools::buildSequenceParallelMlp(2, 4);
  Fusion copy;
  copyFusion(*fusion, copy);
  runPresegmentationPasses(&copy);
  std::unique_ptr<HostIrContainer> lowered = lowerSegmentsToHostIr(copy);
  std::unique_ptr<HostIrContainer> parsed = parseHostIrText(printHostIrText(*lowered), "segments");
  MultiDeviceLowering rank0{0, {}};
  hostIrPipeline(rank0).run(*lowered);
  hostIrPipeline(rank0).run(*parsed);
  EXPECT_EQ(printHostIrText(*parsed), printHostIrText(*lowered));
}

namespace {

// The error parsing `text` raises ("" when it parses).
std::string parseError(const std::string& text) {
  try {
    parseHostIrText(text, "bad.hir");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

const char* kEmptyProgram = R"(host_program {
  vals {
    %s0 = scalar Int64
  }
  inputs ()
  outputs ()
  detached {
  }
  program {
  }
}
)";

}  // namespace

// A user's fusion between presegmentation passes (what `hostir opt` runs
// them on) reads back as the fusion the next pass sees: the same text, and
// every tensor with the same uses — an expr a pass replaced
// (insert_reshardings' linear on the sharded input) is not read back as a
// use of its inputs.
TEST(FusionTextRoundTrip, TheUserFusionBetweenPresegmentationPasses) {
  std::unique_ptr<Fusion> fusion = tools::buildSequenceParallelMlp(2, 1);
  for (const RegisteredPass& pass : registeredPasses()) {
    if (pass.stage != PassStage::Presegmentation) {
      continue;
    }
    pass.run_on_fusion(*fusion);
    SCOPED_TRACE("after " + pass.name);
    std::string text = printFusionText(*fusion);
    std::unique_ptr<Fusion> parsed = parseFusionText(text, "round_trip");
    EXPECT_EQ(printFusionText(*parsed), text);
    EXPECT_EQ(parsed->toString(), fusion->toString());
    auto uses = [](const Fusion& of) {
      std::ostringstream lines;
      for (const auto& statement : of.statements()) {
        if (auto* tv = dynamic_cast<const TensorView*>(statement.get())) {
          lines << tv->toString() << " used by";
          for (const Expr* use : tv->uses()) {
            lines << " " << use->name();
          }
          lines << "\n";
        }
      }
      return lines.str();
    };
    EXPECT_EQ(uses(*parsed), uses(*fusion));
  }
}

TEST(HostIrTextErrors, AFusionIsReadAloneOrAsTheStartOfAText) {
  ParsedIr parsed = parseIrText("fusion { vals { } inputs () outputs () exprs { } }");
  EXPECT_NE(parsed.fusion, nullptr);
  EXPECT_EQ(parsed.program, nullptr);
  try {
    parseFusionText("host_program {", "in.hir");
    FAIL() << "a host program was read as a fusion";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("in.hir:1:1: expected 'fusion', got 'host_program'"),
              std::string::npos)
        << error.what();
  }
}

TEST(HostIrTextErrors, AProgramWithNothingParses) {
  EXPECT_EQ(parseError(kEmptyProgram), "");
  EXPECT_EQ(printHostIrText(*parseHostIrText(kEmptyProgram)), kEmptyProgram);
}

TEST(HostIrTextErrors, NameTheLineColumnTokenAndWhatWasExpected) {
  // A missing keyword.
  EXPECT_EQ(parseError("host_program {\n  valz {"), "bad.hir:2:3: expected 'vals', got 'valz'");
  // The end of the input inside a block.
  EXPECT_EQ(parseError("host_program {\n  vals {\n"),
            "bad.hir:3:1: expected a %val definition or '}', got end of input");
  // A dtype that does not exist.
  EXPECT_EQ(parseError("host_program { vals { %s0 = scalar Float128"),
            "bad.hir:1:36: expected a constant or one of Float, Double, Half, BFloat16, Int32, "
            "Int64, Bool, ComplexFloat, ComplexDouble, got 'Float128'");
  // A val used before its definition.
  EXPECT_EQ(parseError("host_program { vals { %I0 = iter_domain %s9 Iteration Serial"),
            "bad.hir:1:41: expected a %val defined in this container's vals, got '%s9'");
  // A val of the wrong kind.
  EXPECT_EQ(parseError("host_program { vals { %s0 = scalar 4\n"
                       "  %T1 = tensor %s0 Float Global"),
            "bad.hir:2:16: expected a %D tensor domain, got '%s0'");
  // A val defined twice.
  EXPECT_EQ(parseError("host_program { vals { %s0 = scalar 4 %s0 = scalar 5"),
            "bad.hir:1:38: expected a %val not defined before, got '%s0'");
  // A character no token starts with.
  EXPECT_EQ(parseError("host_program { vals { %s0 = scalar 4 ; }"),
            "bad.hir:1:38: unexpected character ';'; host IR text holds words, %vals, #exprs, "
            "numbers, \"strings\" and { } ( ) [ ] , = ->");
}

TEST(HostIrTextErrors, AnUnknownOpAndAMalformedNodeAreRefused) {
  std::string program = kEmptyProgram;
  std::string unknown = program;
  unknown.replace(unknown.find("  program {\n"), 12, "  program {\n    #0 Frobnicate () -> ()\n");
  std::string message = parseError(unknown);
  EXPECT_EQ(message.rfind("bad.hir:10:8: expected an op name (", 0), 0u) << message;
  EXPECT_NE(message.find("BinaryOp"), std::string::npos) << message;
  EXPECT_NE(message.find("got 'Frobnicate'"), std::string::npos) << message;
  // A ForLoop needs its bounds: the node's own check says so.
  std::string malformed = program;
  malformed.replace(malformed.find("  program {\n"), 12,
                    "  program {\n    #0 ForLoop () -> () {\n    }\n");
  message = parseError(malformed);
  EXPECT_EQ(message.rfind("bad.hir:10:5: #0 ForLoop is malformed: ", 0), 0u) << message;
}

namespace {

// A program whose one expr is `BinaryOp (%s0, %s1) -> (%s2) attributes [ATTRIBUTE]`.
std::string binaryOpProgram(const std::string& attribute) {
  return "host_program {\n  vals {\n    %s0 = scalar Int64\n    %s1 = scalar Int64\n"
         "    %s2 = scalar Int64\n  }\n  inputs ()\n  outputs ()\n  detached {\n"
         "    #0 BinaryOp (%s0, %s1) -> (%s2) attributes [" +
         attribute + "]\n  }\n  program {\n  }\n}\n";
}

}  // namespace

// An enum attribute is written as its word (the op type of a BinaryOp, the
// collective of a Communication, the memory of an Allocate) and read back as
// that value; its number is still read (hand-written text), and printed as
// the word.
TEST(HostIrTextEnums, EnumAttributesAreWordsThatReadBack) {
  for (BinaryOpType type : allBinaryOpTypes()) {
    const std::string text = binaryOpProgram(toString(type));
    std::unique_ptr<HostIrContainer> parsed = parseHostIrText(text, "enum.hir");
    const auto* op = dynamic_cast<const BinaryOp*>(parsed->statements().back().get());
    ASSERT_NE(op, nullptr) << text;
    EXPECT_EQ(op->type(), type) << toString(type);
    EXPECT_EQ(printHostIrText(*parsed), text);
  }
  const std::string by_number =
      binaryOpProgram(std::to_string(static_cast<int64_t>(BinaryOpType::Mod)));
  EXPECT_EQ(printHostIrText(*parseHostIrText(by_number, "enum.hir")), binaryOpProgram("mod"));
  // The Megatron block's program: its collectives, reduce op and buffers.
  std::unique_ptr<Fusion> fusion = tools::buildSequenceParallelMlp(2, 1);
  const std::string text = printHostIrText(*lowerOnDevice(*fusion, 0));
  for (const char* written : {"attributes [Allgather, [0, 1], -1, -1, -1]",
                              "attributes [ReduceScatter, [0, 1], -1, sum, 0]",
                              "attributes [Local, false]", "attributes [Global, false]"}) {
    EXPECT_NE(text.find(written), std::string::npos) << written << " in\n" << text;
  }
}

TEST(HostIrTextEnums, AWordOfNoValueIsRefusedWithTheValidWords) {
  const std::string message = parseError(binaryOpProgram("frobnicate"));
  EXPECT_EQ(message.rfind("bad.hir:10:49: expected one of add, sub, mul, div, ", 0), 0u) << message;
  EXPECT_NE(message.find(", fmod (attribute 0 of BinaryOp), got 'frobnicate'"), std::string::npos)
      << message;
}

}  // namespace hostir::test
