// The README's "Using the tools" commands on examples/seed.mlir, exactly as documented. The one
// ending in -dyn-lower-to-llvm failed with "op was not bufferized" on the host program's guards
// (the pipeline now starts with dyn-strip-guards: guards check Python objects, which compiled
// code never sees).
// RUN: tensor-opt %S/../../examples/seed.mlir -dyn-optimize | FileCheck %s --check-prefix=OPT
// RUN: tensor-opt %S/../../examples/seed.mlir -dyn-optimize -dyn-split-graphs -dyn-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: tensor-opt %S/../../examples/seed.mlir -dyn-split-graphs -dyn-to-linalg -dyn-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: tensor-opt %S/../../examples/seed.mlir -dyn-split-graphs -dyn-to-linalg -dyn-lower-to-llvm | FileCheck %s --check-prefix=NODYN
// RUN: tensor-opt %S/../../examples/seed.mlir -dyn-strip-guards | FileCheck %s --check-prefix=STRIP

// OPT-LABEL: func.func @forward
// OPT-NEXT: dyn.guard.type_match

// LINALG-LABEL: func.func @forward
// LINALG-SAME: dyn.host
// LINALG: call @forward_graph0
// LINALG-LABEL: func.func private @forward_graph0
// LINALG: linalg.generic

// The host program (graph calls and branches on their predicates) and the graphs, in the LLVM
// dialect with no dyn op left (the function markers stay).
// NODYN-NOT: {{^ *(%[^ ]* = )?"?dyn\.}}
// LLVM-LABEL: llvm.func @forward
// LLVM-SAME: attributes {dyn.host}
// LLVM: llvm.call @forward_graph0
// LLVM: llvm.cond_br
// LLVM: llvm.call @forward_graph4
// LLVM-LABEL: llvm.func @forward_graph0
// LLVM-SAME: attributes {dyn.graph
// LLVM-LABEL: llvm.func @forward_graph4

// STRIP-LABEL: func.func @forward
// STRIP-NOT: dyn.guard
// STRIP: dyn.linear
