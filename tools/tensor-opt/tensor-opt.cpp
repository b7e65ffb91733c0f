//===- tensor-opt.cpp - Dynamir's pass driver -----------------------------===//
//
// mlir-opt with the dyn dialect and Dynamir's passes: runs any registered pass or pipeline on
// textual or bytecode IR.
//
//===----------------------------------------------------------------------===//

#include "dynamir/InitAllDynamir.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  dynamir::registerAllPasses();
  mlir::DialectRegistry registry;
  dynamir::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Dynamir tensor optimizer driver\n", registry));
}
