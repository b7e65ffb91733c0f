//===- dyn-fuzz.cpp - libFuzzer target for tensor-opt's input -------------===//
//
// Parses the input as MLIR (text or bytecode) with the dyn dialect and every upstream dialect
// registered, as tensor-opt does. An input that verifies then goes through what users run on
// traced IR, each on its own copy of the module:
//
//   canonicalize, dyn-to-linalg, dyn-lower-to-llvm               (a graph, as the tests run it)
//   dyn-optimize, dyn-split-graphs, dyn-to-linalg, dyn-lower-to-llvm   (a traced function)
//
// down to the LLVM dialect, not to object code. Diagnostics are swallowed: rejecting an input
// with an error is correct behaviour; a crash, an abort (report_fatal_error, a failed assert),
// a sanitizer report, or invalid IR out of the Dynamir part of a pipeline is a bug.
// scripts/fuzz.sh builds and runs it (docs/testing.md).
//
//===----------------------------------------------------------------------===//

#include "dynamir/InitAllDynamir.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstdint>
#include <string>

using namespace mlir;

static const DialectRegistry &getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    dynamir::registerAllDialects(*r);
    return r;
  }();
  return *registry;
}

static void parseInto(PassManager &pm, StringRef pipeline) {
  if (failed(parsePassPipeline(pipeline, pm)))
    llvm::report_fatal_error(llvm::Twine("dyn-fuzz: bad pipeline: ") + pipeline);
}

/// Runs `dynamirPart` and then `lowering` on a copy of `module`. Failing with a diagnostic is
/// fine; but Dynamir's folders and passes must turn valid IR into valid IR, so IR that no
/// longer verifies after `dynamirPart` (which failed quietly in a pipeline that verifies after
/// each pass) is reported as a crash.
static void runOnCopy(ModuleOp module, StringRef dynamirPart, StringRef lowering) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  pm.enableVerifier(false);
  parseInto(pm, dynamirPart);
  if (failed(pm.run(*copy)))
    return;
  if (failed(verify(*copy)))
    llvm::report_fatal_error(llvm::Twine("dyn-fuzz: valid input does not verify after ") +
                             dynamirPart);
  PassManager lower(module.getContext());
  parseInto(lower, lowering);
  (void)lower.run(*copy);
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  dynamir::registerAllPasses();
  (void)getRegistry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: nothing one input interns can affect the next, and memory does
  // not grow over a run. The lexer reads the byte after the buffer, so keep a terminating NUL.
  std::string text(reinterpret_cast<const char *>(data), size);
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler swallow(&context, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module || failed(verify(*module)))
    return 0;
  runOnCopy(*module, "canonicalize,dyn-to-linalg", "dyn-lower-to-llvm");
  runOnCopy(*module, "dyn-optimize,dyn-split-graphs,dyn-to-linalg", "dyn-lower-to-llvm");
  return 0;
}
