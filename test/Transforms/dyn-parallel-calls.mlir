// RUN: tensor-opt %s -dyn-parallel-calls=threads=3 --verify-each | FileCheck %s

// A loop over two chunks, as convert-scf-to-openmp and convert-openmp-to-llvm leave it: the
// values it uses go into a frame (the constants are made again in the outlined function), and
// the runtime gets the function, the frame and the num_threads clause.
// CHECK: llvm.func @dynamir_parallel(!llvm.ptr, !llvm.ptr, i64)

// CHECK-LABEL: llvm.func @scale(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64)
// CHECK: %[[FRAME:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[FRAME]][0, 0]
// CHECK: llvm.store %[[N]], %[[F0]] : i64, !llvm.ptr
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[FRAME]][0, 1]
// CHECK: llvm.store %[[P]], %[[F1]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[T:.*]] = llvm.sext %{{.*}} : i32 to i64
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @scale_parallel0
// CHECK: llvm.call @dynamir_parallel(%[[FN]], %[[FRAME]], %[[T]])
// CHECK-NOT: omp.
// CHECK: llvm.return
llvm.func @scale(%p: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %two = llvm.mlir.constant(2.0 : f32) : f32
  %t = llvm.mlir.constant(2 : i32) : i32
  omp.parallel num_threads(%t : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%c2) step (%c1) {
        %j = llvm.mul %i, %n : i64
        %q = llvm.getelementptr %p[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        %v = llvm.load %q : !llvm.ptr -> f32
        %w = llvm.fmul %v, %two : f32
        llvm.store %w, %q : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}

// Without a num_threads clause, the pass's thread count.
// CHECK-LABEL: llvm.func @no_clause(
// CHECK: %[[THREE:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: llvm.call @dynamir_parallel(%{{.*}}, %{{.*}}, %[[THREE]])
llvm.func @no_clause(%p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c8 = llvm.mlir.constant(8 : i64) : i64
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%c8) step (%c1) {
        %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        llvm.store %zero, %q : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}

// A loop nest of two loops (not what convert-scf-to-openmp makes of our chunks) stays OpenMP.
// CHECK-LABEL: llvm.func @two_loops(
// CHECK: omp.parallel
// CHECK: omp.loop_nest
// CHECK-NOT: llvm.call @dynamir_parallel
// CHECK: llvm.return
llvm.func @two_loops(%p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : i64 = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
        %k = llvm.mul %i, %c4 : i64
        %l = llvm.add %k, %j : i64
        %q = llvm.getelementptr %p[%l] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        llvm.store %zero, %q : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}

// The outlined function: thread %TID of %TS runs iterations [begin, end) of ceil(trip / %TS)
// each, the loop's body once per iteration, its end back to the header.
// CHECK-LABEL: llvm.func internal @scale_parallel0(
// CHECK-SAME: %[[DATA:.*]]: !llvm.ptr, %[[TID:.*]]: i64, %[[TS:.*]]: i64)
// CHECK-DAG: %[[C0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-DAG: %[[C1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-DAG: %[[C2:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[TWO:.*]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
// CHECK: %[[N0:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[P0:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[TRIP:.*]] = llvm.intr.smax
// CHECK: %[[CHUNK:.*]] = llvm.sdiv %{{.*}}, %[[TS]]
// CHECK: %[[FIRST:.*]] = llvm.mul %[[TID]], %[[CHUNK]]
// CHECK: %[[BEGIN:.*]] = llvm.intr.smin(%[[FIRST]], %[[TRIP]])
// CHECK: %[[LAST:.*]] = llvm.add %[[BEGIN]], %[[CHUNK]]
// CHECK: %[[END:.*]] = llvm.intr.smin(%[[LAST]], %[[TRIP]])
// CHECK: llvm.br ^[[HEADER:.*]](%[[BEGIN]] : i64)
// CHECK: ^[[HEADER]](%[[I:.*]]: i64):
// CHECK: %[[STEPS:.*]] = llvm.mul %[[I]], %[[C1]]
// CHECK: %[[IV:.*]] = llvm.add %[[C0]], %[[STEPS]]
// CHECK: %[[MORE:.*]] = llvm.icmp "slt" %[[I]], %[[END]]
// CHECK: llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK: ^[[BODY]]:
// CHECK: %[[J:.*]] = llvm.mul %[[IV]], %[[N0]]
// CHECK: llvm.getelementptr %[[P0]][%[[J]]]
// CHECK: llvm.fmul %{{.*}}, %[[TWO]]
// CHECK: %[[NEXT:.*]] = llvm.add %[[I]], %{{.*}}
// CHECK: llvm.br ^[[HEADER]](%[[NEXT]] : i64)
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: llvm.return

// CHECK-LABEL: llvm.func internal @no_clause_parallel0(
