// The dyn-to-linalg pipeline: conversion, then upstream elementwise fusion.
// RUN: tensor-opt %s -dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// cos(sin(x * 2) + 1) * 3 is one loop nest.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: arith.mulf
// CHECK: math.sin
// CHECK: arith.addf
// CHECK: math.cos
// CHECK: arith.mulf
// CHECK: return
func.func @chain(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %two = dyn.constant dense<2.0> : tensor<f32>
  %one = dyn.constant dense<1.0> : tensor<f32>
  %three = dyn.constant dense<3.0> : tensor<f32>
  %0 = dyn.mul %x, %two : tensor<1048576xf32>, tensor<f32>
  %1 = dyn.sin %0 : tensor<1048576xf32>
  %2 = dyn.add %1, %one : tensor<1048576xf32>, tensor<f32>
  %3 = dyn.cos %2 : tensor<1048576xf32>
  %4 = dyn.mul %3, %three : tensor<1048576xf32>, tensor<f32>
  return %4 : tensor<1048576xf32>
}

// -----

// Broadcasts fuse too: (x + b) * y with a row bias stays one generic.
// CHECK-LABEL: func.func @broadcast_chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @broadcast_chain(%x: tensor<64x32xf32>, %b: tensor<32xf32>, %y: tensor<64x1xf32>) -> tensor<64x32xf32> {
  %0 = dyn.add %x, %b : tensor<64x32xf32>, tensor<32xf32>
  %1 = dyn.mul %0, %y : tensor<64x32xf32>, tensor<64x1xf32>
  %2 = dyn.relu %1 : tensor<64x32xf32>
  return %2 : tensor<64x32xf32>
}

// -----

// An elementwise producer fuses into its reduction consumer: (x * x).sum() reads x once.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: linalg.fill
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: iterator_types = ["reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @sum_of_squares(%x: tensor<1000xf32>) -> tensor<f32> {
  %0 = dyn.mul %x, %x : tensor<1000xf32>, tensor<1000xf32>
  %1 = dyn.sum %0 dims [0] : tensor<1000xf32>
  return %1 : tensor<f32>
}

// -----

// softmax is two reductions and one elementwise op.
// CHECK-LABEL: func.func @softmax
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK-NOT: linalg.generic
func.func @softmax(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %0 = dyn.softmax %x dim 1 : tensor<4096x1024xf32>
  return %0 : tensor<4096x1024xf32>
}
