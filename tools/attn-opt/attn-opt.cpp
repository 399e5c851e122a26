//===- attn-opt.cpp - the AttnFuse optimizer driver -----------------------===//
//
// mlir-opt with the attn dialect and AttnFuse's passes: every pass is a flag
// (`attn-opt --attn-fuse-sdpa file.mlir`), next to all upstream passes, and
// so is the tools' whole pipeline (`--attn-to-llvm`). The
// input is checked against the parser's limits (attn::checkInputLimits)
// before MLIR parses it.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAttn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// What MlirOptMain does with an input and an output file name, with the
/// input limits checked between reading and parsing.
static LogicalResult runOnFiles(StringRef inputFilename,
                                StringRef outputFilename,
                                DialectRegistry &registry,
                                const MlirOptMainConfig &config) {
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return failure();
  }
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  if (failed(attn::checkInputLimits(sourceMgr, id)))
    return failure();
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return failure();
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return failure();
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  attn::registerAllAttnPasses();
  attn::registerAttnPipelines();
  DialectRegistry registry;
  attn::registerAllAttnDialects(registry);
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "AttnFuse optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }
  if (config.shouldListPasses()) {
    printRegisteredPasses();
    return 0;
  }
  return asMainReturnCode(
      runOnFiles(inputFilename, outputFilename, registry, config));
}
