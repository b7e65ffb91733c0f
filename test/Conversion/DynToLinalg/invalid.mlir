// Inputs the conversion does not handle get a located diagnostic, never a crash.
// RUN: tensor-opt %s -convert-dyn-to-linalg -split-input-file -verify-diagnostics

func.func @reshape_two_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?x1xf32> {
  // expected-error@+1 {{failed to legalize operation 'dyn.reshape' that was explicitly marked illegal}}
  %0 = dyn.reshape %x : tensor<?x?xf32> -> tensor<?x?x1xf32>
  return %0 : tensor<?x?x1xf32>
}

// -----

func.func @broadcast_to_dynamic(%x: tensor<3xf32>) -> tensor<?x3xf32> {
  // expected-error@+1 {{failed to legalize operation 'dyn.broadcast_to' that was explicitly marked illegal}}
  %0 = dyn.broadcast_to %x : tensor<3xf32> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
