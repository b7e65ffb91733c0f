//===- dynamir-ptx.cpp - print the PTX of a lowered module's GPU binaries -===//
//
// Reads MLIR after dyn-lower-to-nvvm and writes the PTX of every gpu.binary object (format
// isa) to stdout, or each to <dir>/<binary>.ptx with -o-dir: what FileCheck and ptxas read.
//
//===----------------------------------------------------------------------===//

#include "dynamir/InitAllDynamir.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::opt<std::string> input(llvm::cl::Positional, llvm::cl::desc("<input.mlir>"),
                                        llvm::cl::init("-"));
static llvm::cl::opt<std::string> outDir("o-dir", llvm::cl::desc("write <dir>/<binary>.ptx files"),
                                         llvm::cl::init(""));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "print the PTX of gpu.binary objects\n");
  DialectRegistry registry;
  dynamir::registerAllDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sources;
  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return 1;
  int count = 0;
  for (auto binary : module->getOps<gpu::BinaryOp>()) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      if (object.getFormat() != gpu::CompilationTarget::Assembly) {
        llvm::errs() << "binary " << binary.getName() << " is not PTX (use format isa)\n";
        return 1;
      }
      ++count;
      if (outDir.empty()) {
        llvm::outs() << object.getObject().getValue();
        continue;
      }
      std::string path = outDir + "/" + binary.getName().str() + ".ptx";
      std::error_code ec;
      llvm::raw_fd_ostream out(path, ec);
      if (ec) {
        llvm::errs() << path << ": " << ec.message() << "\n";
        return 1;
      }
      out << object.getObject().getValue();
    }
  }
  if (count == 0) {
    llvm::errs() << "no gpu.binary in the input\n";
    return 1;
  }
  return 0;
}
