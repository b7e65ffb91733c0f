// RUN: tensor-opt %s -one-shot-bufferize="bufferize-function-boundaries" -split-input-file -verify-diagnostics

// The runtime sorts signed keys; convert-dyn-to-linalg flips unsigned ones into signed order
// first, so a dyn.sort of unsigned elements that reaches bufferization is refused, not sorted
// as signed.
func.func @sort_unsigned(%x: tensor<5xui8>) -> (tensor<5xui8>, tensor<5xi64>) {
  // expected-error @+2 {{sorts unsigned integers once convert-dyn-to-linalg has made them signless keys}}
  // expected-error @+1 {{failed to bufferize op}}
  %v, %i = dyn.sort %x axis 0 : tensor<5xui8>
  return %v, %i : tensor<5xui8>, tensor<5xi64>
}
