//===- attn-opt.cpp - the AttnFuse optimizer driver -----------------------===//
//
// mlir-opt with the attn dialect and AttnFuse's passes: every pass is a flag
// (`attn-opt --attn-fuse-sdpa file.mlir`), next to all upstream passes.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllAttnPasses();
  mlir::DialectRegistry registry;
  mlir::attn::registerAllAttnDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "AttnFuse optimizer driver\n", registry));
}
