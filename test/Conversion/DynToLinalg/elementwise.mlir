// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @unary_float
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>)
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<4x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x?xf32>) outs(%[[E]] : tensor<4x?xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[S:.*]] = math.sin %[[IN]] : f32
// CHECK:   linalg.yield %[[S]]
func.func @unary_float(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = dyn.sin %x : tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// Each unary op's scalar semantics.
// CHECK-LABEL: func.func @unary_ops
// CHECK: arith.negf
// CHECK: math.absf
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: math.cos
// CHECK: math.tan
// CHECK: math.tanh
// CHECK: math.erf
// CHECK: math.floor
// CHECK: math.ceil
// sigmoid is 1 / (1 + exp(-x)).
// CHECK: %[[N:.*]] = arith.negf
// CHECK: %[[E:.*]] = math.exp %[[N]]
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]]
// CHECK: arith.divf %{{.*}}, %[[D]]
// relu keeps NaN (maximumf propagates it, as torch.relu does).
// CHECK: arith.maximumf
// integer negation and absolute value
// CHECK: arith.subi
// CHECK: math.absi
// logical not is xor with true
// CHECK: arith.xori
// CHECK: math.trunc
// CHECK: math.asin
// CHECK: math.acos
// CHECK: math.atan
// CHECK: math.asinh
// CHECK: math.acosh
// CHECK: math.atanh
// CHECK: math.sinh
// CHECK: math.cosh
// CHECK: math.roundeven
func.func @unary_ops(%x: tensor<3xf32>, %i: tensor<3xi32>, %b: tensor<3xi1>) {
  %0 = dyn.neg %x : tensor<3xf32>
  %1 = dyn.abs %x : tensor<3xf32>
  %2 = dyn.exp %x : tensor<3xf32>
  %3 = dyn.log %x : tensor<3xf32>
  %4 = dyn.sqrt %x : tensor<3xf32>
  %5 = dyn.rsqrt %x : tensor<3xf32>
  %6 = dyn.cos %x : tensor<3xf32>
  %7 = dyn.tan %x : tensor<3xf32>
  %8 = dyn.tanh %x : tensor<3xf32>
  %9 = dyn.erf %x : tensor<3xf32>
  %10 = dyn.floor %x : tensor<3xf32>
  %11 = dyn.ceil %x : tensor<3xf32>
  %12 = dyn.sigmoid %x : tensor<3xf32>
  %13 = dyn.relu %x : tensor<3xf32>
  %14 = dyn.neg %i : tensor<3xi32>
  %15 = dyn.abs %i : tensor<3xi32>
  %16 = dyn.not %b : tensor<3xi1>
  %17 = dyn.trunc %x : tensor<3xf32>
  %18 = dyn.asin %x : tensor<3xf32>
  %19 = dyn.acos %x : tensor<3xf32>
  %20 = dyn.atan %x : tensor<3xf32>
  %21 = dyn.asinh %x : tensor<3xf32>
  %22 = dyn.acosh %x : tensor<3xf32>
  %23 = dyn.atanh %x : tensor<3xf32>
  %24 = dyn.sinh %x : tensor<3xf32>
  %25 = dyn.cosh %x : tensor<3xf32>
  %26 = dyn.rint %x : tensor<3xf32>
  return
}

// -----

// Python semantics of // and % on integers and floats. Integers divide by a safe divisor (1
// where the divisor is 0 or the division is MIN / -1) and x // 0 selects 0.
// CHECK-LABEL: func.func @division
// CHECK: ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %{{.*}}: i64):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[MONE:.*]] = arith.constant -1 : i64
// CHECK-DAG: %[[MIN:.*]] = arith.constant -9223372036854775808 : i64
// CHECK: %[[BZ:.*]] = arith.cmpi eq, %[[B]], %[[ZERO]]
// CHECK: %[[AMIN:.*]] = arith.cmpi eq, %[[A]], %[[MIN]]
// CHECK: %[[BMONE:.*]] = arith.cmpi eq, %[[B]], %[[MONE]]
// CHECK: %[[OVF:.*]] = arith.andi %[[AMIN]], %[[BMONE]]
// CHECK: %[[UNSAFE:.*]] = arith.ori %[[BZ]], %[[OVF]]
// CHECK: %[[SAFE:.*]] = arith.select %[[UNSAFE]], %[[ONE]], %[[B]]
// CHECK: %[[FD:.*]] = arith.floordivsi %[[A]], %[[SAFE]]
// CHECK: %[[BZ2:.*]] = arith.cmpi eq, %[[B]]
// CHECK: arith.select %[[BZ2]], %{{.*}}, %[[FD]]
// CHECK: ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[B]]
// CHECK: %[[R:.*]] = arith.remsi %[[A]], %[[SAFE]] : i64
// CHECK: %[[RN:.*]] = arith.cmpi slt, %[[R]]
// CHECK: %[[BN:.*]] = arith.cmpi slt, %[[B]]
// CHECK: %[[NZ:.*]] = arith.cmpi ne, %[[R]]
// CHECK: %[[DIFF:.*]] = arith.xori %[[RN]], %[[BN]]
// CHECK: %[[ADJ:.*]] = arith.andi %[[DIFF]], %[[NZ]]
// CHECK: %[[SUM:.*]] = arith.addi %[[R]], %[[B]]
// CHECK: arith.select %[[ADJ]], %[[SUM]], %[[R]]
// Float // as npy_divmod: from the remainder, then floor, a signed zero, x / 0 as is.
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[QUOT:.*]] = arith.divf %[[X]], %[[Y]]
// CHECK: %[[MOD:.*]] = arith.remf %[[X]], %[[Y]]
// CHECK: %[[XM:.*]] = arith.subf %[[X]], %[[MOD]]
// CHECK: %[[DIV:.*]] = arith.divf %[[XM]], %[[Y]]
// CHECK: math.floor
// CHECK: math.copysign %{{.*}}, %[[QUOT]]
// CHECK: %[[BYZERO:.*]] = arith.cmpf oeq, %[[Y]]
// CHECK: arith.select %[[BYZERO]], %[[QUOT]]
// Float %: a zero remainder takes the divisor's sign.
// CHECK: arith.remf
// CHECK: math.copysign %{{.*}}, %[[Y2:.*]] : f32
// CHECK: arith.divf
// CHECK: math.powf
// CHECK: math.ipowi
func.func @division(%a: tensor<4xi64>, %b: tensor<4xi64>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = dyn.floordiv %a, %b : tensor<4xi64>, tensor<4xi64>
  %1 = dyn.mod %a, %b : tensor<4xi64>, tensor<4xi64>
  %2 = dyn.floordiv %x, %y : tensor<4xf32>, tensor<4xf32>
  %3 = dyn.mod %x, %y : tensor<4xf32>, tensor<4xf32>
  %4 = dyn.div %x, %y : tensor<4xf32>, tensor<4xf32>
  %5 = dyn.pow %x, %y : tensor<4xf32>, tensor<4xf32>
  %6 = dyn.pow %a, %b : tensor<4xi64>, tensor<4xi64>
  return
}

// -----

// CHECK-LABEL: func.func @compare_select_minmax
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf une
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sge
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: arith.minsi
// CHECK: arith.andi
// CHECK: arith.ori
func.func @compare_select_minmax(%x: tensor<4xf32>, %y: tensor<4xf32>, %a: tensor<4xi32>,
                                 %b: tensor<4xi32>, %c: tensor<4xi1>) {
  %0 = dyn.eq %x, %y : tensor<4xf32>, tensor<4xf32>
  %1 = dyn.ne %x, %y : tensor<4xf32>, tensor<4xf32>
  %2 = dyn.lt %a, %b : tensor<4xi32>, tensor<4xi32>
  %3 = dyn.ge %a, %b : tensor<4xi32>, tensor<4xi32>
  %4 = dyn.where %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
  %5 = dyn.maximum %x, %y : tensor<4xf32>, tensor<4xf32>
  %6 = dyn.minimum %a, %b : tensor<4xi32>, tensor<4xi32>
  %7 = dyn.logical_and %c, %c : tensor<4xi1>, tensor<4xi1>
  %8 = dyn.logical_or %c, %c : tensor<4xi1>, tensor<4xi1>
  return
}

// -----

// numpy astype: float->int truncates, anything->bool tests non-zero, bool->number is 0/1.
// CHECK-LABEL: func.func @casts
// Out of range (NaN, infinities) gives the integer minimum, as numpy and torch on x86.
// CHECK: %[[LOW:.*]] = arith.cmpf oge, %[[F:.*]], %{{.*}} : f32
// CHECK: %[[HIGH:.*]] = arith.cmpf olt, %[[F]], %{{.*}} : f32
// CHECK: %[[IN:.*]] = arith.andi %[[LOW]], %[[HIGH]]
// CHECK: %[[I:.*]] = arith.fptosi %[[F]] : f32 to i32
// CHECK: arith.select %[[IN]], %[[I]], %{{.*}} : i32
// CHECK: arith.cmpf une
// CHECK: arith.uitofp %{{.*}} : i1 to f64
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f64 to bf16
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: arith.trunci %{{.*}} : i64 to i32
// bf16 <-> f16 goes through f32 (arith has no same-width float cast; this failed to verify).
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %[[W]] : f32 to bf16
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %[[W]] : f32 to f16
func.func @casts(%f: tensor<3xf32>, %b: tensor<3xi1>, %h: tensor<3xf16>, %d: tensor<3xf64>,
                 %l: tensor<3xi64>, %i: tensor<3xi32>) {
  %0 = dyn.cast %f to i32 : tensor<3xf32>
  %1 = dyn.cast %f to i1 : tensor<3xf32>
  %2 = dyn.cast %b to f64 : tensor<3xi1>
  %3 = dyn.cast %h to f32 : tensor<3xf16>
  %4 = dyn.cast %d to bf16 : tensor<3xf64>
  %5 = dyn.cast %l to f32 : tensor<3xi64>
  %6 = dyn.cast %i to i64 : tensor<3xi32>
  %7 = dyn.cast %l to i32 : tensor<3xi64>
  %8 = dyn.cast %h to bf16 : tensor<3xf16>
  %9 = dyn.cast %8 to f16 : tensor<3xbf16>
  return
}

// -----

// exp2, log2 and log10 are one math op; log1p and expm1 are upstream's in float32, the
// corrected formulas in float64 (upstream's f64 lowering would be log(1 + x) and exp(x) - 1), and
// float32 ones for 16-bit floats.
// CHECK-LABEL: func.func @more_float_functions
// CHECK: math.exp2 %{{.*}} : f32
// CHECK: math.log2 %{{.*}} : f32
// CHECK: math.log10 %{{.*}} : f32
// CHECK: math.log1p %{{.*}} : f32
// CHECK: math.expm1 %{{.*}} : f32
// CHECK: ^bb0(%[[X:.*]]: f64, %{{.*}}: f64):
// CHECK: %[[U:.*]] = arith.addf %{{.*}}, %[[X]] : f64
// CHECK: %[[UM1:.*]] = arith.subf %[[U]], %{{.*}} : f64
// CHECK: %[[RATIO:.*]] = arith.divf %[[X]], %[[UM1]] : f64
// CHECK: %[[LOG:.*]] = math.log %[[U]] : f64
// CHECK: arith.mulf %[[LOG]], %[[RATIO]] : f64
// CHECK-NOT: math.log1p
// CHECK: ^bb0(%[[Y:.*]]: f64, %{{.*}}: f64):
// CHECK: %[[E:.*]] = math.exp %[[Y]] : f64
// CHECK: math.log %[[E]] : f64
// CHECK-NOT: math.expm1
// CHECK: ^bb0(%[[H:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[W:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: %[[L:.*]] = math.log1p %[[W]] : f32
// CHECK: arith.truncf %[[L]] : f32 to f16
func.func @more_float_functions(%x: tensor<3xf32>, %d: tensor<3xf64>, %h: tensor<3xf16>) {
  %0 = dyn.exp2 %x : tensor<3xf32>
  %1 = dyn.log2 %x : tensor<3xf32>
  %2 = dyn.log10 %x : tensor<3xf32>
  %3 = dyn.log1p %x : tensor<3xf32>
  %4 = dyn.expm1 %x : tensor<3xf32>
  %5 = dyn.log1p %d : tensor<3xf64>
  %6 = dyn.expm1 %d : tensor<3xf64>
  %7 = dyn.log1p %h : tensor<3xf16>
  return
}

// -----

// fmod is frem for floats and a remainder by the safe divisor for integers; fma is math.fma of
// the three broadcast operands.
// CHECK-LABEL: func.func @fmod_fma
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.remf %[[A]], %[[B]] : f32
// CHECK: ^bb0(%[[I:.*]]: i64, %[[J:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[J]] : i64
// CHECK: arith.remsi %[[I]], %[[SAFE]] : i64
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<3xf32>, tensor<4x1xf32>)
// CHECK: ^bb0(%[[P:.*]]: f32, %[[Q:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
// CHECK: math.fma %[[P]], %[[Q]], %[[R]] : f32
func.func @fmod_fma(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi64>, %j: tensor<4xi64>,
                    %a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  %0 = dyn.fmod %x, %y : tensor<4xf32>, tensor<4xf32>
  %1 = dyn.fmod %i, %j : tensor<4xi64>, tensor<4xi64>
  %2 = dyn.fma %a, %b, %a : tensor<4x1xf32>, tensor<3xf32>, tensor<4x1xf32>
  return
}

// -----

// atan2 is math.atan2 except where both operands are ±0: upstream's folder makes atan2(0, 0)
// NaN, numpy's is ±0 or ±π (x's sign picks, y's is the result's).
// CHECK-LABEL: func.func @atan2_of_zeros
// CHECK: ^bb0(%[[Y:.*]]: f64, %[[X:.*]]: f64, %{{.*}}: f64):
// CHECK: %[[ZEROS:.*]] = arith.andi
// CHECK: %[[SIGN:.*]] = math.copysign %{{.*}}, %[[X]] : f64
// CHECK: %[[PI:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f64
// CHECK: %[[OF_ZEROS:.*]] = math.copysign %[[PI]], %[[Y]] : f64
// CHECK: %[[ATAN2:.*]] = math.atan2 %[[Y]], %[[X]] : f64
// CHECK: arith.select %[[ZEROS]], %[[OF_ZEROS]], %[[ATAN2]] : f64
func.func @atan2_of_zeros(%y: tensor<4xf64>, %x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = dyn.atan2 %y, %x : tensor<4xf64>, tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// hypot calls libm's (hypotf for float32), declared once in the module: numpy calls it, and no
// closed form of arith ops is it bit for bit.
// CHECK-DAG: func.func private @hypot(f64, f64) -> f64
// CHECK-DAG: func.func private @hypotf(f32, f32) -> f32
// CHECK-LABEL: func.func @hypot_calls_libm
// CHECK: ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %{{.*}}: f64):
// CHECK: func.call @hypot(%[[A]], %[[B]]) : (f64, f64) -> f64
// CHECK: func.call @hypot(
// CHECK: func.call @hypotf(
func.func @hypot_calls_libm(%a: tensor<4xf64>, %b: tensor<4xf64>, %c: tensor<4xf32>)
    -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf32>) {
  %0 = dyn.hypot %a, %b : tensor<4xf64>, tensor<4xf64>
  %1 = dyn.hypot %b, %a : tensor<4xf64>, tensor<4xf64>
  %2 = dyn.hypot %c, %c : tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2 : tensor<4xf64>, tensor<4xf64>, tensor<4xf32>
}
