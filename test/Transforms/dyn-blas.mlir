// RUN: tensor-opt %s -dyn-blas -canonicalize -cse --verify-each -split-input-file | FileCheck %s
// RUN: tensor-opt %s -dyn-blas=function-f64= -split-input-file | FileCheck %s --check-prefix=NOF64
// RUN: tensor-opt %s -dyn-blas=threads=2 -canonicalize -cse -split-input-file | FileCheck %s --check-prefix=THREADS

// A matrix product in m-k-n order (dyn-cpu-loop-order's): one call with M, N, K, the three
// base addresses and leading dimensions.
// CHECK-LABEL: func.func private @dynamir_sgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 128 : i64
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i64
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[A:.*]] = arith.index_cast %[[PA]]
// CHECK: %[[PB:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[B:.*]] = arith.index_cast %[[PB]]
// CHECK: %[[PC:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[C:.*]] = arith.index_cast %[[PC]]
// CHECK: call @dynamir_sgemm(%[[NO]], %[[NO]], %[[M]], %[[N]], %[[K]], %[[A]], %[[K]], %[[B]], %[[N]], %[[C]], %[[N]])
// CHECK-NOT: linalg.generic
// With two threads, each computes 32 of the 64 rows (the last part of an uneven split is
// shorter, or empty): A moves by 32 rows of 128 floats, C by 32 rows of 32.
// THREADS-LABEL: func.func @matmul
// THREADS-DAG: %[[C0:.*]] = arith.constant 0 : index
// THREADS-DAG: %[[C2:.*]] = arith.constant 2 : index
// THREADS: scf.parallel (%[[P:.*]]) = (%[[C0]]) to (%[[C2]])
// THREADS: %[[PI:.*]] = arith.index_cast %[[P]] : index to i64
// THREADS: %[[FIRST:.*]] = arith.muli %[[PI]], %c32_i64
// THREADS: %[[LEFT:.*]] = arith.subi %c64_i64, %[[FIRST]]
// THREADS: %[[POS:.*]] = arith.maxsi %[[LEFT]], %c0_i64
// THREADS: %[[ROWS:.*]] = arith.minsi %[[POS]], %c32_i64
// THREADS: %[[AOFF:.*]] = arith.muli %[[PI]], %c16384_i64
// THREADS: %[[A:.*]] = arith.addi %{{.*}}, %[[AOFF]]
// THREADS: %[[COFF:.*]] = arith.muli %[[PI]], %c4096_i64
// THREADS: %[[C:.*]] = arith.addi %{{.*}}, %[[COFF]]
// THREADS: call @dynamir_sgemm(%c0_i64, %c0_i64, %[[ROWS]], %c32_i64, %c128_i64, %[[A]], %c128_i64, %{{.*}}, %c32_i64, %[[C]], %c32_i64)
// THREADS: scf.reduce
func.func @matmul(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %c: memref<64x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (m, k)>, affine_map<(m, k, n) -> (k, n)>,
                                   affine_map<(m, k, n) -> (m, n)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// nn.Linear's contraction reads W as [n, k]: B transposed.
// CHECK-LABEL: func.func @linear
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i64
// CHECK: call @dynamir_sgemm(%[[NO]], %[[YES]],
func.func @linear(%x: memref<64x128xf32>, %w: memref<32x128xf32>, %y: memref<64x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x128xf32>, memref<32x128xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not handed to BLAS: too small, and a body that is not a plain multiply-add.
// CHECK-LABEL: func.func @stays_loops
// CHECK-NOT: call @dynamir_sgemm
// CHECK-COUNT-2: linalg.generic
func.func @stays_loops(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                       %a2: memref<64x128xf32>, %b2: memref<128x32xf32>, %c2: memref<64x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a2, %b2 : memref<64x128xf32>, memref<128x32xf32>) outs(%c2 : memref<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %m = arith.maximumf %acc, %p : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// f64 products call the f64 function (`function-f64`); the byte offset of a view counts 8
// bytes per element. With `function-f64` empty (GPU graphs), they stay loops.
// CHECK-LABEL: func.func private @dynamir_dgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @matmul_f64
// CHECK-DAG: %[[EIGHT:.*]] = arith.constant 8 : i64
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[O:.*]] = arith.index_cast %[[OFFSET]] : index to i64
// CHECK: arith.muli %[[O]], %[[EIGHT]] : i64
// CHECK: call @dynamir_dgemm(
// CHECK-NOT: linalg.generic
// NOF64-LABEL: func.func @matmul_f64
// NOF64-NOT: call
// NOF64: linalg.generic
func.func @matmul_f64(%a: memref<64x128xf64, strided<[256, 1], offset: ?>>,
                      %b: memref<128x32xf64>, %c: memref<64x32xf64>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x128xf64, strided<[256, 1], offset: ?>>, memref<128x32xf64>)
      outs(%c : memref<64x32xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// Attention scores q @ k^T per (batch, head): a loop over each batch dimension of the output
// around one call, each operand's address advanced by its batch strides (q and k: 8192 and
// 2048 elements, the scores 16384 and 4096); k is read transposed (transB = 1).
// CHECK-LABEL: func.func @batched
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[S:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[D:.*]] = arith.constant 32 : i64
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[HI:.*]] = arith.index_cast %[[H]] : index to i64
// CHECK: arith.muli %[[BI]], %c8192_i64
// CHECK: arith.muli %[[HI]], %c2048_i64
// CHECK: arith.muli %[[BI]], %c16384_i64
// CHECK: arith.muli %[[HI]], %c4096_i64
// CHECK: call @dynamir_sgemm(%[[NO]], %[[ONE]], %[[S]], %[[S]], %[[D]], %{{.*}}, %[[D]], %{{.*}}, %[[D]], %{{.*}}, %[[S]])
// CHECK-NOT: linalg.generic
// With two threads, one batch element each: the outer batch loop is the parallel one, and
// each call is whole.
// THREADS-LABEL: func.func @batched
// THREADS: scf.parallel
// THREADS: scf.for
// THREADS: call @dynamir_sgemm(%c0_i64, %c1_i64, %c64_i64, %c64_i64, %c32_i64,
func.func @batched(%q: memref<2x4x64x32xf32>, %k: memref<2x4x64x32xf32>, %s: memref<2x4x64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                                   affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                                   affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x4x64x32xf32>, memref<2x4x64x32xf32>) outs(%s : memref<2x4x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Attention scores read in the layout of the qkv projection ([batch, seq, 3 * heads * d]: q and k
// are slices of it, `q.view(B, T, H, D).transpose(1, 2)` read as [b, m, h, d]): the head is a
// batch loop between the matrix's dimensions, so each operand's address moves by 64 elements
// per head and 49152 per batch element, and its leading dimension is the row stride, 768.
// CHECK-LABEL: func.func @heads_in_projection_layout
// CHECK-DAG: %[[LD:.*]] = arith.constant 768 : i64
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[HI:.*]] = arith.index_cast %[[H]] : index to i64
// CHECK: arith.muli %[[BI]], %c49152_i64
// CHECK: arith.muli %[[HI]], %c64_i64
// CHECK: call @dynamir_sgemm(%c0_i64, %c1_i64, %c64_i64, %c64_i64, %c64_i64, %{{.*}}, %[[LD]], %{{.*}}, %[[LD]], %{{.*}}, %c64_i64)
// CHECK-NOT: linalg.generic
func.func @heads_in_projection_layout(
    %q: memref<4x64x4x64xf32, strided<[49152, 768, 64, 1]>>,
    %k: memref<4x64x4x64xf32, strided<[49152, 768, 64, 1], offset: 256>>,
    %s: memref<4x4x64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, m, h, d)>,
                                   affine_map<(b, h, m, n, d) -> (b, n, h, d)>,
                                   affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x64x4x64xf32, strided<[49152, 768, 64, 1]>>,
                   memref<4x64x4x64xf32, strided<[49152, 768, 64, 1], offset: 256>>)
      outs(%s : memref<4x4x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A batch loop as an operand's innermost dimension: BLAS cannot read it, the loops stay.
// CHECK-LABEL: func.func @batch_innermost
// CHECK-NOT: dynamir_sgemm
// CHECK: linalg.generic
func.func @batch_innermost(%a: memref<64x64x8xf32>, %b: memref<8x64x64xf32>, %c: memref<8x64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(h, m, n, k) -> (m, k, h)>,
                                   affine_map<(h, m, n, k) -> (h, k, n)>,
                                   affine_map<(h, m, n, k) -> (h, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64x8xf32>, memref<8x64x64xf32>) outs(%c : memref<8x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A batch read at index 0 by one operand (numpy broadcasting of a size-1 batch) and missing
// from the other: a's address moves with the first batch index only (8192 elements, folded
// with the element size into 32768 bytes), the output's with both.
// CHECK-LABEL: func.func @broadcast_batch
// CHECK: scf.for %[[B:.*]] =
// CHECK: %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK: scf.for
// CHECK: arith.muli %[[BI]], %c32768_i64
// CHECK: arith.muli %[[BI]], %c12288_i64
// CHECK: call @dynamir_sgemm
// CHECK-NOT: linalg.generic
func.func @broadcast_batch(%a: memref<8x1x64x128xf32>, %b: memref<128x64xf32>, %c: memref<8x3x64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, m, n, k) -> (i, 0, m, k)>,
                                   affine_map<(i, j, m, n, k) -> (k, n)>,
                                   affine_map<(i, j, m, n, k) -> (i, j, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x1x64x128xf32>, memref<128x64xf32>) outs(%c : memref<8x3x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// More columns than rows: with threads, each thread computes a part of the columns (B and C
// move by columns).
// CHECK-LABEL: func.func @wide
// CHECK: call @dynamir_sgemm
// THREADS-LABEL: func.func @wide
// THREADS: scf.parallel
// THREADS: %[[PI:.*]] = arith.index_cast
// THREADS: %[[FIRST:.*]] = arith.muli %[[PI]], %c512_i64
// THREADS: %[[COLUMNS:.*]] = arith.minsi %{{.*}}, %c512_i64
// THREADS: %[[OFF:.*]] = arith.muli %[[PI]], %c2048_i64
// THREADS: %[[B:.*]] = arith.addi %{{.*}}, %[[OFF]]
// THREADS: %[[C:.*]] = arith.addi %{{.*}}, %[[OFF]]
// THREADS: call @dynamir_sgemm(%c0_i64, %c0_i64, %c4_i64, %[[COLUMNS]], %c128_i64, %{{.*}}, %c128_i64, %[[B]], %c1024_i64, %[[C]], %c1024_i64)
func.func @wide(%a: memref<4x128xf32>, %b: memref<128x1024xf32>, %c: memref<4x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (m, k)>, affine_map<(m, k, n) -> (k, n)>,
                                   affine_map<(m, k, n) -> (m, n)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<4x128xf32>, memref<128x1024xf32>) outs(%c : memref<4x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A matrix times a vector (linalg.matvec, generalized): a gemm of one column, the vector's
// and the result's strides their leading dimensions. With threads, each computes a part of
// the rows (A and C move by rows).
// CHECK-LABEL: func.func @matvec
// CHECK-DAG: %[[M:.*]] = arith.constant 512 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 256 : i64
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[STEP:.*]] = arith.constant 3 : i64
// CHECK: call @dynamir_sgemm(%[[NO]], %[[NO]], %[[M]], %[[ONE]], %[[K]], %{{.*}}, %[[K]], %{{.*}}, %[[STEP]], %{{.*}}, %[[ONE]])
// CHECK-NOT: linalg.generic
// THREADS-LABEL: func.func @matvec
// THREADS: scf.parallel
// THREADS: %[[ROWS:.*]] = arith.minsi %{{.*}}, %c256_i64
// THREADS: call @dynamir_sgemm(%c0_i64, %c0_i64, %[[ROWS]], %c1_i64, %c256_i64,
// NOF64-LABEL: func.func @matvec
// NOF64: call @dynamir_sgemm
func.func @matvec(%a: memref<512x256xf32>, %x: memref<256xf32, strided<[3]>>,
                  %y: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>,
                                   affine_map<(m, k) -> (m)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %x : memref<512x256xf32>, memref<256xf32, strided<[3]>>)
      outs(%y : memref<512xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A vector times a matrix (linalg.vecmat, the vector first, k outermost): the matrix
// transposed times the vector. Without a dgemm (function-f64 empty) it stays a loop.
// CHECK-LABEL: func.func @vecmat
// CHECK-DAG: %[[N:.*]] = arith.constant 256 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 512 : i64
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i64
// CHECK: call @dynamir_dgemm(%[[YES]], %[[NO]], %[[N]], %[[YES]], %[[K]], %{{.*}}, %[[N]], %{{.*}}, %[[YES]], %{{.*}}, %[[YES]])
// NOF64-LABEL: func.func @vecmat
// NOF64: linalg.generic
func.func @vecmat(%x: memref<512xf64>, %a: memref<512x256xf64>, %y: memref<256xf64>) {
  linalg.generic {indexing_maps = [affine_map<(k, n) -> (k)>, affine_map<(k, n) -> (k, n)>,
                                   affine_map<(k, n) -> (n)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x, %a : memref<512xf64>, memref<512x256xf64>) outs(%y : memref<256xf64>) {
  ^bb0(%u: f64, %v: f64, %acc: f64):
    %p = arith.mulf %u, %v : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// A reversed vector (a dynamic stride, which may be negative) and a product too small for
// the call stay loops.
// CHECK-LABEL: func.func @not_matvec
// CHECK-NOT: call
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @not_matvec(%a: memref<512x256xf32>, %x: memref<256xf32, strided<[?], offset: ?>>,
                      %y: memref<512xf32>, %s: memref<8x8xf32>, %v: memref<8xf32>,
                      %w: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>,
                                   affine_map<(m, k) -> (m)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %x : memref<512x256xf32>, memref<256xf32, strided<[?], offset: ?>>)
      outs(%y : memref<512xf32>) {
  ^bb0(%u: f32, %z: f32, %acc: f32):
    %p = arith.mulf %u, %z : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>,
                                   affine_map<(m, k) -> (m)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%s, %v : memref<8x8xf32>, memref<8xf32>) outs(%w : memref<8xf32>) {
  ^bb0(%u: f32, %z: f32, %acc: f32):
    %p = arith.mulf %u, %z : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}
