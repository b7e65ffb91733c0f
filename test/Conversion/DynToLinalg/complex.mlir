// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// Complex elements are written out on their parts as numpy's loops compute them; only
// complex.create, re, im, add and sub (and constants' parts) remain for complex-to-llvm.
// A complex constant is its parts' float constants joined elementwise.
// CHECK-LABEL: func.func @product_and_constant
// CHECK-DAG: %[[RE:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[IM:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: linalg.generic {{.*}} ins(%[[RE]], %[[IM]] : tensor<f32>, tensor<f32>)
// CHECK:   complex.create
// CHECK: linalg.generic
// CHECK:   %[[AR:.*]] = complex.re %{{.*}} : complex<f32>
// CHECK:   %[[AI:.*]] = complex.im %{{.*}} : complex<f32>
// CHECK:   %[[BR:.*]] = complex.re %{{.*}} : complex<f32>
// CHECK:   %[[BI:.*]] = complex.im %{{.*}} : complex<f32>
// numpy's SIMD product fuses ar·br and ar·bi: fma(ar, br, -(ai·bi)), fma(ar, bi, ai·br).
// CHECK:   %[[II:.*]] = arith.mulf %[[AI]], %[[BI]] : f32
// CHECK:   %[[NII:.*]] = arith.negf %[[II]] : f32
// CHECK:   %[[R:.*]] = math.fma %[[AR]], %[[BR]], %[[NII]] : f32
// CHECK:   %[[IR:.*]] = arith.mulf %[[AI]], %[[BR]] : f32
// CHECK:   %[[I:.*]] = math.fma %[[AR]], %[[BI]], %[[IR]] : f32
// CHECK:   complex.create %[[R]], %[[I]] : complex<f32>
func.func @product_and_constant(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %c = dyn.constant dense<(0.0, 1.0)> : tensor<complex<f32>>
  %0 = dyn.mul %a, %c : tensor<4xcomplex<f32>>, tensor<complex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// Smith's division picks its scaling by |br| >= |bi|; a zero divisor divides the parts by
// |br| (numpy's infinities and NaN).
// CHECK-LABEL: func.func @quotient
// CHECK: linalg.generic
// CHECK:   %[[ABSR:.*]] = math.absf
// CHECK:   %[[ABSI:.*]] = math.absf
// CHECK:   %[[LARGER:.*]] = arith.cmpf oge, %[[ABSR]], %[[ABSI]] : f64
// CHECK:   arith.select %[[LARGER]]
// CHECK:   arith.select %[[LARGER]]
// CHECK:   complex.create
func.func @quotient(%a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
  %0 = dyn.div %a, %b : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>
  return %0 : tensor<4xcomplex<f64>>
}

// -----

// A magnitude is numpy's SIMD loop, hi * sqrt(fma(lo / hi, lo / hi, 1)) in the parts' type
// (float32 here: not glibc's hypotf, the float64 square root rounded, which numpy does not use).
// CHECK-LABEL: func.func @magnitude
// CHECK: linalg.generic
// CHECK:   %[[R:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:   %[[S:.*]] = math.fma %[[R]], %[[R]], %{{.*}} : f32
// CHECK:   %[[ROOT:.*]] = math.sqrt %[[S]] : f32
// CHECK:   arith.mulf %{{.*}}, %[[ROOT]] : f32
// CHECK-NOT: f64
// CHECK: -> tensor<4xf32>
func.func @magnitude(%a: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = dyn.cabs %a : tensor<4xcomplex<f32>>
  return %0 : tensor<4xf32>
}

// -----

// A complex sum is the sums of its parts, two float reductions that may reassociate (numpy
// sums the parts pairwise); a mean divides the sum by the count as a complex number, as numpy's
// true_divide does.
// CHECK-LABEL: func.func @mean
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:   complex.re
// CHECK:   arith.addf {{.*}} fastmath<reassoc> : f64
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:   complex.im
// CHECK:   arith.addf {{.*}} fastmath<reassoc> : f64
// CHECK: complex.create
// CHECK: arith.sitofp
// CHECK: complex.create
// CHECK: linalg.generic
// CHECK:   arith.cmpf oge
func.func @mean(%a: tensor<4x3xcomplex<f64>>) -> tensor<3xcomplex<f64>> {
  %0 = dyn.mean %a dims [0] : tensor<4x3xcomplex<f64>>
  return %0 : tensor<3xcomplex<f64>>
}
