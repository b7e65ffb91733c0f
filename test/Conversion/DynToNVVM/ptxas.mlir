// Every kernel the NVVM lowering produces assembles for sm_90 and spills nothing.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm | dynamir-ptx - -o-dir %t
// RUN: %ptxas_all sm_90 %t | FileCheck %s

// CHECK: == chain_map0_line{{[0-9]+}}.ptx
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: == lengths_map0_line{{[0-9]+}}.ptx
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK: == softmax_rows0_line{{[0-9]+}}.ptx
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK: == wide_softmax_rows0_line{{[0-9]+}}.ptx
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: ==

func.func @chain(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %two = dyn.constant dense<2.0> : tensor<f32>
  %0 = dyn.mul %x, %two : tensor<1048576xf32>, tensor<f32>
  %1 = dyn.sin %0 : tensor<1048576xf32>
  %2 = dyn.cos %1 : tensor<1048576xf32>
  return %2 : tensor<1048576xf32>
}

// libm's hypot on the CPU is libdevice's on the GPU (dyn-gpu-libdevice): no unresolved extern.
func.func @lengths(%a: tensor<1048576xf64>, %b: tensor<1048576xf64>) -> tensor<1048576xf64> {
  %0 = dyn.hypot %a, %b : tensor<1048576xf64>, tensor<1048576xf64>
  return %0 : tensor<1048576xf64>
}

func.func @softmax(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %0 = dyn.softmax %x dim 1 : tensor<4096x1024xf32>
  return %0 : tensor<4096x1024xf32>
}

// Rows of 8192 floats: 32 per thread held in registers, still no spills.
func.func @wide_softmax(%x: tensor<512x8192xf32>) -> tensor<512x8192xf32> {
  %0 = dyn.softmax %x dim 1 : tensor<512x8192xf32>
  return %0 : tensor<512x8192xf32>
}
