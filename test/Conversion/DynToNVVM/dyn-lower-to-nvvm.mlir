// Graphs lowered to NVVM kernels for sm_90, checked as IR and as PTX (no GPU needed; the CUDA
// toolkit's libdevice provides the math functions).
// REQUIRES: libdevice
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm -split-input-file | FileCheck %s --check-prefix=IR
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm | dynamir-ptx - | FileCheck %s --check-prefix=PTX

// The fused chain is one kernel: 1M elements, 16 bytes per thread, in 1024 blocks of 256
// threads on one stream (created, synchronized and destroyed through the mgpu* ABI, which
// Dynamir's CUDA runtime implements).
// IR-LABEL: llvm.func @chain
// IR-DAG: %[[BLOCKS:.*]] = llvm.mlir.constant(1024 : index) : i64
// IR-DAG: %[[THREADS:.*]] = llvm.mlir.constant(256 : index) : i64
// IR: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// Kernels are named after the graph, their kind and the source line they compute.
// IR: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @[[K:chain_map0_line[0-9]+]]::@[[K]] blocks in (%[[BLOCKS]], %{{.*}}, %{{.*}}) threads in (%[[THREADS]], %{{.*}}, %{{.*}})
// IR: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// IR: gpu.binary @[[K]] [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// PTX: .version 8.0
// PTX: .target sm_90
// PTX: .visible .entry chain_map0_line{{[0-9]+}}(
// libdevice's sinf/cosf are linked in, not left as externals.
// PTX-NOT: .extern
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
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

// Row softmax: one kernel, one block per row. Each thread loads its 16 bytes of the row once,
// keeps them in registers through the row maximum and the row sum of exp(x - max) (each a
// warp-shuffle all-reduce), and stores its 16 bytes of the result: the input is read once.
// IR-LABEL: llvm.func @softmax
// IR-COUNT-1: gpu.launch_func
// IR-NOT: gpu.launch_func
// IR-COUNT-1: gpu.binary
// PTX-LABEL: .visible .entry softmax_rows0_line{{[0-9]+}}(
// PTX-COUNT-1: ld.global.v4.b32
// PTX-NOT: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX: ex2.approx
// PTX: shfl.sync.bfly.b32
// PTX: st.global.v4.b32
func.func @softmax(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %0 = dyn.softmax %x dim 1 : tensor<4096x1024xf32>
  return %0 : tensor<4096x1024xf32>
}

// -----

// An `if` kept in the graph (capture_control_flow) is decided on the device: the kernels of
// both sides are launched, each reads the predicate from device memory and does nothing on the
// side not taken, and each side copies its result into one buffer (guarded copy kernels). No
// host branch, no copy out, one stream synchronization at the end of the graph.
// IR-LABEL: llvm.func @captured_if
// IR-NOT: llvm.cond_br
// IR-NOT: mgpuMemcpy
// IR: gpu.launch_func {{.*}} @captured_if_map{{[0-9]+}}_line
// IR-COUNT-1: llvm.call @mgpuStreamSynchronize
// IR-NOT: llvm.call @mgpuStreamSynchronize
// IR: llvm.return
// PTX-LABEL: .visible .entry captured_if_map2_line{{[0-9]+}}(
// PTX: ld.global.b8
// PTX: setp
func.func @captured_if(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %zero = dyn.constant dense<0.0> : tensor<f32>
  %s = dyn.sum %x dims [0] : tensor<1024xf32>
  %p = dyn.gt %s, %zero : tensor<f32>, tensor<f32>
  %r = dyn.if %p : tensor<i1> -> tensor<1024xf32> {
    %a = dyn.sin %x : tensor<1024xf32>
    dyn.yield %a : tensor<1024xf32>
  } else {
    %b = dyn.cos %x : tensor<1024xf32>
    dyn.yield %b : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}

// -----

// A matrix product goes to cuBLAS (dynamir_cuda_sgemm, on the runtime's stream, C accumulated
// onto the zeros its init kernel wrote); the bias and relu stay one 16-byte kernel.
// IR-LABEL: llvm.func @linear_relu
// IR: gpu.launch_func {{.*}} @{{linear_relu_map[0-9]+_line[0-9]+}}::
// IR: llvm.call @dynamir_cuda_sgemm(
// IR: gpu.launch_func {{.*}} @{{linear_relu_map[0-9]+_line[0-9]+}}::
// IR-NOT: gpu.launch_func
func.func @linear_relu(%x: tensor<256x1024xf32>, %w: tensor<1024x512xf32>, %b: tensor<512xf32>) -> tensor<256x512xf32> {
  %0 = dyn.matmul %x, %w : tensor<256x1024xf32>, tensor<1024x512xf32>
  %1 = dyn.add %0, %b : tensor<256x512xf32>, tensor<512xf32>
  %2 = dyn.relu %1 : tensor<256x512xf32>
  return %2 : tensor<256x512xf32>
}

