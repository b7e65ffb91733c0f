// Graphs lowered to NVVM kernels for sm_90, checked as IR and as PTX (no GPU needed; the CUDA
// toolkit's libdevice provides the math functions).
// REQUIRES: libdevice
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm -split-input-file | FileCheck %s --check-prefix=IR
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm | dynamir-ptx - | FileCheck %s --check-prefix=PTX

// The fused chain is one kernel: 1M elements in 4096 blocks of 256 threads.
// IR-LABEL: llvm.func @chain
// IR: gpu.launch_func @chain_kernel::@chain_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// IR: gpu.binary @chain_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// PTX: .version 8.0
// PTX: .target sm_90
// PTX: .visible .entry chain_kernel(
// libdevice's sinf/cosf are linked in, not left as externals.
// PTX-NOT: .extern
// PTX: ld.global
// PTX: st.global
// PTX: ret;
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

// Row softmax: each row reduction runs in one thread (a loop inside the kernel) for now;
// every step is its own kernel.
// IR-LABEL: llvm.func @softmax
// IR-COUNT-5: gpu.launch_func
// IR-COUNT-5: gpu.binary
func.func @softmax(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %0 = dyn.softmax %x dim 1 : tensor<4096x1024xf32>
  return %0 : tensor<4096x1024xf32>
}
