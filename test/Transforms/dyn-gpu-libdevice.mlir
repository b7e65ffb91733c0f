// RUN: tensor-opt %s -dyn-gpu-libdevice --verify-each | FileCheck %s

// libm's hypot and hypotf, which dyn.hypot calls, become libdevice's twins, calls included;
// other functions keep their names.
// CHECK-DAG: func.func private @__nv_hypot(f64, f64) -> f64
// CHECK-DAG: func.func private @__nv_hypotf(f32, f32) -> f32
// CHECK-DAG: func.func private @other(f64) -> f64
// CHECK-LABEL: func.func @f
// CHECK: call @__nv_hypot(%arg0, %arg0) : (f64, f64) -> f64
// CHECK: call @__nv_hypotf(%arg1, %arg1) : (f32, f32) -> f32
// CHECK: call @other(%arg0) : (f64) -> f64
module {
  func.func private @hypot(f64, f64) -> f64
  func.func private @hypotf(f32, f32) -> f32
  func.func private @other(f64) -> f64
  func.func @f(%a: f64, %b: f32) -> (f64, f32, f64) {
    %0 = func.call @hypot(%a, %a) : (f64, f64) -> f64
    %1 = func.call @hypotf(%b, %b) : (f32, f32) -> f32
    %2 = func.call @other(%a) : (f64) -> f64
    return %0, %1, %2 : f64, f32, f64
  }
}
