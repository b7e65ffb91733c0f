// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// Unsigned dyn types become signless at every boundary; the ops pick the unsigned arith ops.
// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[A:.*]]: tensor<4xi8>, %[[B:.*]]: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi1>, tensor<4xi8>)
// CHECK: arith.divui
// CHECK-NOT: arith.floordivsi
// CHECK: arith.remui
// CHECK: arith.cmpi ult
// CHECK: arith.maxui
// CHECK: return {{.*}} : tensor<4xi8>, tensor<4xi8>, tensor<4xi1>, tensor<4xi8>
func.func @arithmetic(%a: tensor<4xui8>, %b: tensor<4xui8>)
    -> (tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xui8>) {
  %0 = dyn.floordiv %a, %b : tensor<4xui8>, tensor<4xui8>
  %1 = dyn.mod %a, %b : tensor<4xui8>, tensor<4xui8>
  %2 = dyn.lt %a, %b : tensor<4xui8>, tensor<4xui8>
  %3 = dyn.maximum %a, %b : tensor<4xui8>, tensor<4xui8>
  return %0, %1, %2, %3 : tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xui8>
}

// -----

// Conversions: zero extension and uitofp from unsigned; a float to a narrow unsigned type
// through int32 (which vectorizes), to uint64 with an offset from 2^63 on.
// CHECK-LABEL: func.func @casts
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.constant 9.2233720368547758E+18 : f64
// CHECK: arith.subf %{{.*}}, %{{.*}} : f64
// CHECK: arith.xori
func.func @casts(%a: tensor<4xui8>, %f: tensor<4xf32>, %d: tensor<4xf64>)
    -> (tensor<4xi32>, tensor<4xf32>, tensor<4xui16>, tensor<4xui64>) {
  %0 = dyn.cast %a to i32 : tensor<4xui8>
  %1 = dyn.cast %a to f32 : tensor<4xui8>
  %2 = dyn.cast %f to ui16 : tensor<4xf32>
  %3 = dyn.cast %d to ui64 : tensor<4xf64>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xf32>, tensor<4xui16>, tensor<4xui64>
}

// -----

// Reductions start from the unsigned extremes: max from 0, min from all ones; argmax compares
// unsigned.
// CHECK-LABEL: func.func @reductions
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i16
// CHECK: linalg.fill ins(%[[ZERO]] : i16)
// CHECK: arith.maxui
// CHECK: %[[ONES:.*]] = arith.constant -1 : i16
// CHECK: linalg.fill ins(%[[ONES]] : i16)
// CHECK: arith.minui
// CHECK: arith.cmpi ugt
func.func @reductions(%a: tensor<4x3xui16>) -> (tensor<3xui16>, tensor<3xui16>, tensor<3xi64>) {
  %0 = dyn.max %a dims [0] : tensor<4x3xui16>
  %1 = dyn.min %a dims [0] : tensor<4x3xui16>
  %2 = dyn.argmax %a dims [0] : tensor<4x3xui16>
  return %0, %1, %2 : tensor<3xui16>, tensor<3xui16>, tensor<3xi64>
}

// -----

// The runtime sorts signed keys: unsigned ones are flipped into signed order and back.
// CHECK-LABEL: func.func @sort
// CHECK: arith.constant dense<-2147483648> : tensor<i32>
// CHECK: arith.xori %{{.*}}, %{{.*}} : i32
// CHECK: %[[V:.*]], %[[I:.*]] = dyn.sort %{{.*}} axis 0 : tensor<50xi32>
// CHECK: arith.xori
// CHECK: return %{{.*}}, %[[I]] : tensor<50xi32>, tensor<50xi64>
func.func @sort(%a: tensor<50xui32>) -> (tensor<50xui32>, tensor<50xi64>) {
  %v, %i = dyn.sort %a axis 0 : tensor<50xui32>
  return %v, %i : tensor<50xui32>, tensor<50xi64>
}

// -----

// A short sort is ranks, compared as signed after the same flip.
// CHECK-LABEL: func.func @short_sort
// CHECK: arith.xori %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi slt
// CHECK-NOT: dyn.sort
// CHECK: arith.xori
func.func @short_sort(%a: tensor<5xui32>) -> (tensor<5xui32>, tensor<5xi64>) {
  %v, %i = dyn.sort %a axis 0 : tensor<5xui32>
  return %v, %i : tensor<5xui32>, tensor<5xi64>
}

// -----

// Constants keep their bits; guards kept for the runtime take the signless argument.
// CHECK-LABEL: func.func @constants
// CHECK: dyn.guard.tensor_match "L['a']", %{{.*}} type "numpy.ndarray" contiguous : tensor<2xi8>
// CHECK: arith.constant dense<[-1, 1]> : tensor<2xi8>
func.func @constants(%a: tensor<2xui8>) -> tensor<2xui8> {
  dyn.guard.tensor_match "L['a']", %a type "numpy.ndarray" contiguous : tensor<2xui8>
  %c = dyn.constant dense<[255, 1]> : tensor<2xui8>
  %0 = dyn.add %a, %c : tensor<2xui8>, tensor<2xui8>
  return %0 : tensor<2xui8>
}
