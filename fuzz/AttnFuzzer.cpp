//===- AttnFuzzer.cpp - shared driver of the libFuzzer targets ------------===//

#include "AttnFuzzer.h"

#include "attn/InitAttn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Built once: registering every upstream dialect and extension costs more
/// than parsing a small input. Each input still gets a fresh context, so a
/// crash reproduces from its input alone.
static const DialectRegistry &getRegistry() {
  static const DialectRegistry registry = [] {
    DialectRegistry r;
    attn::registerAllAttnDialects(r);
    return r;
  }();
  return registry;
}

std::unique_ptr<MLIRContext>
attn::fuzz::createJitContext(std::string &diagnostics) {
  static const DialectRegistry registry = [] {
    DialectRegistry r;
    attn::registerAllAttnDialects(r);
    attn::registerAttnPipelineTranslations(r);
    return r;
  }();
  auto context = std::make_unique<MLIRContext>(
      registry, MLIRContext::Threading::DISABLED);
  context->getDiagEngine().registerHandler([&diagnostics](Diagnostic &d) {
    llvm::raw_string_ostream(diagnostics) << d << "\n";
    return success();
  });
  return context;
}

namespace {
/// Verifies the IR after every pass that succeeded: the PassManager's own
/// verifier would turn invalid IR into an ordinary (swallowed) failure.
struct AbortOnInvalidIR : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    // The context's handler swallows diagnostics; the verifier's own message
    // is the first thing a crash report needs, so print it here.
    std::string messages;
    LogicalResult valid = success();
    {
      ScopedDiagnosticHandler printer(op->getContext(), [&](Diagnostic &d) {
        llvm::raw_string_ostream os(messages);
        os << "attn fuzz: " << d.getLocation() << ": " << d << "\n";
        for (const Diagnostic &note : d.getNotes())
          os << "attn fuzz:   note: " << note << "\n";
        return success();
      });
      valid = verify(op);
    }
    if (succeeded(valid))
      return;
    llvm::errs() << "attn fuzz: pass '" << pass->getArgument()
                 << "' succeeded but left invalid IR\n"
                 << messages;
    abort();
  }
};
} // namespace

int attn::fuzz::parseVerifyAndRun(
    const uint8_t *data, size_t size,
    llvm::function_ref<void(OpPassManager &)> buildPipeline,
    unsigned maxFunctions) {
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  context.getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });

  // The tools refuse what would overflow the parser's stack, before parsing.
  StringRef text(reinterpret_cast<const char *>(data), size);
  if (attn::findInputLimitViolation(text))
    return 0;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "input"),
      llvm::SMLoc());
  // Verifies after parsing (ParserConfig's default).
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module || !buildPipeline)
    return 0;
  if (maxFunctions &&
      llvm::count_if(module->getOps<FunctionOpInterface>(),
                     [](FunctionOpInterface f) { return !f.isExternal(); }) >
          maxFunctions)
    return 0;

  PassManager pm(&context);
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<AbortOnInvalidIR>());
  buildPipeline(pm);
  (void)pm.run(*module);
  return 0;
}
