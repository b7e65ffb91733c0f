// dyn-lower-to-llvm="copy-before-write": bufferization skips its in-place analysis and copies
// each store's destination first. The runtime lowers graphs of 64 stores or more this way: the
// analysis of a chain of stores into one array grew faster than quadratically with its length.
// Here the two stores into %y are in place by default (one memcpy in all), and with the option
// each first copies the array it writes into: three copies, less the one dyn-forward-copies
// removes (the negation writes straight into the first store's copy).
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | FileCheck %s --check-prefix=ANALYSED
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm="copy-before-write" | FileCheck %s --check-prefix=COPIED

// ANALYSED-LABEL: llvm.func @stores
// ANALYSED-COUNT-1: "llvm.intr.memcpy"
// ANALYSED-NOT: "llvm.intr.memcpy"
// COPIED-LABEL: llvm.func @stores
// COPIED-COUNT-2: "llvm.intr.memcpy"
// COPIED-NOT: "llvm.intr.memcpy"
func.func @stores(%x: tensor<8xf32>, %v: tensor<1xf32>) -> tensor<8xf32> {
  %y = dyn.neg %x : tensor<8xf32>
  %a = dyn.insert_slice %v into %y starts [0] stops [1] steps [1] : tensor<1xf32> into tensor<8xf32>
  %b = dyn.insert_slice %v into %a starts [1] stops [2] steps [1] : tensor<1xf32> into tensor<8xf32>
  return %b : tensor<8xf32>
}
