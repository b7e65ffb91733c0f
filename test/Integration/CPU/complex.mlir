// complex128 graphs lowered through dyn-to-linalg and dyn-lower-to-llvm (complex-to-llvm) and
// executed; expected values are numpy's for the same inputs: a = [1+2j, 3-4j, 0.5, -2+1j],
// b = [2-1j, 1j, 0, 3+4j]. numpy divides by Smith's algorithm (by a zero divisor: inf and nan
// per part, 0.5 / 0 is inf+nanj) and takes |z| as hypot. Results print as their parts.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @build(%re: tensor<4xf64>, %im: tensor<4xf64>) -> tensor<4xcomplex<f64>> {
  %i = dyn.constant dense<(0.0, 1.0)> : tensor<complex<f64>>
  %r = dyn.cast %re to complex<f64> : tensor<4xf64>
  %j = dyn.cast %im to complex<f64> : tensor<4xf64>
  %ij = dyn.mul %j, %i : tensor<4xcomplex<f64>>, tensor<complex<f64>>
  %z = dyn.add %r, %ij : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>
  return %z : tensor<4xcomplex<f64>>
}

func.func @compute(%a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f64>>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xf64>, tensor<complex<f64>>) {
  %0 = dyn.mul %a, %b : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>
  %1 = dyn.div %a, %b : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>
  %2 = dyn.exp %a : tensor<4xcomplex<f64>>
  %3 = dyn.cabs %a : tensor<4xcomplex<f64>>
  %4 = dyn.mean %a dims [0] : tensor<4xcomplex<f64>>
  return %0, %1, %2, %3, %4 : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xf64>, tensor<complex<f64>>
}

func.func @parts(%z: tensor<4xcomplex<f64>>) -> (tensor<4xf64>, tensor<4xf64>) {
  %re = dyn.real %z : tensor<4xcomplex<f64>>
  %im = dyn.imag %z : tensor<4xcomplex<f64>>
  return %re, %im : tensor<4xf64>, tensor<4xf64>
}

func.func @main() {
  %ar = arith.constant dense<[1.0, 3.0, 0.5, -2.0]> : tensor<4xf64>
  %ai = arith.constant dense<[2.0, -4.0, 0.0, 1.0]> : tensor<4xf64>
  %br = arith.constant dense<[2.0, 0.0, 0.0, 3.0]> : tensor<4xf64>
  %bi = arith.constant dense<[-1.0, 1.0, 0.0, 4.0]> : tensor<4xf64>
  %a = call @build(%ar, %ai) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xcomplex<f64>>
  %b = call @build(%br, %bi) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xcomplex<f64>>
  %mul, %div, %exp, %abs, %mean = call @compute(%a, %b) : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xf64>, tensor<complex<f64>>)
  // CHECK: [4,  4,  0,  -10]
  // CHECK: [3,  3,  0,  -5]
  call @print_parts(%mul) : (tensor<4xcomplex<f64>>) -> ()
  // CHECK: [0,  -4,  inf,  -0.08]
  // CHECK: [1,  -3,  {{-?}}nan,  0.44]
  call @print_parts(%div) : (tensor<4xcomplex<f64>>) -> ()
  // CHECK: [-1.1312,  -13.1288,  1.64872,  0.073122]
  // CHECK: [2.47173,  15.2008,  0,  0.113881]
  call @print_parts(%exp) : (tensor<4xcomplex<f64>>) -> ()
  // CHECK: [2.23607,  5,  0.5,  2.23607]
  call @print(%abs) : (tensor<4xf64>) -> ()
  %m = tensor.expand_shape %mean [] output_shape [1] : tensor<complex<f64>> into tensor<1xcomplex<f64>>
  %mre, %mim = call @parts1(%m) : (tensor<1xcomplex<f64>>) -> (tensor<1xf64>, tensor<1xf64>)
  // CHECK: [0.625]
  // CHECK: [-0.25]
  call @print1(%mre) : (tensor<1xf64>) -> ()
  call @print1(%mim) : (tensor<1xf64>) -> ()
  return
}

func.func @parts1(%z: tensor<1xcomplex<f64>>) -> (tensor<1xf64>, tensor<1xf64>) {
  %re = dyn.real %z : tensor<1xcomplex<f64>>
  %im = dyn.imag %z : tensor<1xcomplex<f64>>
  return %re, %im : tensor<1xf64>, tensor<1xf64>
}

func.func @print_parts(%z: tensor<4xcomplex<f64>>) {
  %re, %im = call @parts(%z) : (tensor<4xcomplex<f64>>) -> (tensor<4xf64>, tensor<4xf64>)
  call @print(%re) : (tensor<4xf64>) -> ()
  call @print(%im) : (tensor<4xf64>) -> ()
  return
}
func.func @print(%t: tensor<4xf64>) {
  %m = bufferization.to_buffer %t : tensor<4xf64> to memref<4xf64>
  %u = memref.cast %m : memref<4xf64> to memref<*xf64>
  call @printMemrefF64(%u) : (memref<*xf64>) -> ()
  return
}
func.func @print1(%t: tensor<1xf64>) {
  %m = bufferization.to_buffer %t : tensor<1xf64> to memref<1xf64>
  %u = memref.cast %m : memref<1xf64> to memref<*xf64>
  call @printMemrefF64(%u) : (memref<*xf64>) -> ()
  return
}
func.func private @printMemrefF64(memref<*xf64>)
