// The seed program split into graphs and a host program, lowered and run for both branch
// outcomes: x = -1 takes neither sin nor cos, x = +1 takes both. Expected values are numpy's.
// RUN: tensor-opt %s -dyn-optimize -dyn-split-graphs -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @forward(%x: tensor<3xf32>, %w: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %two = dyn.constant dense<2.0> : tensor<f32>
  %x1 = dyn.mul %x, %two : tensor<3xf32>, tensor<f32>
  %s = dyn.sum %x1 dims [0] : tensor<3xf32>
  %zero = dyn.constant dense<0.0> : tensor<f32>
  %p1 = dyn.gt %s, %zero : tensor<f32>, tensor<f32>
  %x2 = dyn.if %p1 : tensor<i1> -> tensor<3xf32> {
    %sin = dyn.sin %x1 : tensor<3xf32>
    dyn.yield %sin : tensor<3xf32>
  } else {
    dyn.yield %x1 : tensor<3xf32>
  }
  %m = dyn.mean %x2 dims [0] : tensor<3xf32>
  %p2 = dyn.gt %m, %zero : tensor<f32>, tensor<f32>
  %x3 = dyn.if %p2 : tensor<i1> -> tensor<3xf32> {
    %cos = dyn.cos %x2 : tensor<3xf32>
    dyn.yield %cos : tensor<3xf32>
  } else {
    dyn.yield %x2 : tensor<3xf32>
  }
  %y = dyn.linear %x3, %w, %b : tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>
  return %y : tensor<2xf32>
}

// The driver is host code already: dyn.host keeps dyn-split-graphs away from it.
func.func @main() attributes {dyn.host} {
  %w = arith.constant dense<[[0.5, -0.25, 1.0], [-1.0, 0.75, 0.25]]> : tensor<2x3xf32>
  %b = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %neg = arith.constant dense<-1.0> : tensor<3xf32>
  %pos = arith.constant dense<1.0> : tensor<3xf32>
  %r0 = call @forward(%neg, %w, %b) : (tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2xf32>
  // CHECK: [-2.4,  -0.2]
  call @print(%r0) : (tensor<2xf32>) -> ()
  %r1 = call @forward(%pos, %w, %b) : (tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2xf32>
  // CHECK: [0.867875,  -0.2]
  call @print(%r1) : (tensor<2xf32>) -> ()
  return
}

func.func @print(%t: tensor<2xf32>) attributes {dyn.host} {
  %m = bufferization.to_buffer %t : tensor<2xf32> to memref<2xf32>
  %u = memref.cast %m : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
