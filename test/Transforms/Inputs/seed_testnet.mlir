// The seed TestNet as dynamir.trace records it (torch, input -1): checked in as the input of
// the pass tests: test/Frontend/seed_torch.py's program, printed without locations.
module {
  func.func @TestNet_forward(%arg0: tensor<3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<2xf32>) -> tensor<2xf32> attributes {dyn.output = "%0"} {
    dyn.guard.type_match "L['self']", "__main__.TestNet"
    dyn.guard.tensor_match "L['x']", %arg0 type "torch.Tensor" contiguous : tensor<3xf32>
    dyn.guard.id_match "G['torch']", 1 {description = "<module 'torch'>"}
    dyn.guard.type_match "L['self'].linear", "torch.nn.modules.linear.Linear"
    dyn.guard.tensor_match "L['self'].linear.weight", %arg1 type "torch.nn.parameter.Parameter" contiguous : tensor<2x3xf32>
    dyn.guard.tensor_match "L['self'].linear.bias", %arg2 type "torch.nn.parameter.Parameter" contiguous : tensor<2xf32>
    %0 = dyn.constant dense<2.000000e+00> : tensor<f32>
    %1 = dyn.mul %arg0, %0 : tensor<3xf32>, tensor<f32>
    %2 = dyn.sum %1 dims [0] : tensor<3xf32>
    %3 = dyn.constant dense<0.000000e+00> : tensor<f32>
    %4 = dyn.gt %2, %3 : tensor<f32>, tensor<f32>
    %5 = dyn.if %4 : tensor<i1> -> tensor<3xf32> {
      %11 = dyn.sin %1 : tensor<3xf32>
      dyn.yield %11 : tensor<3xf32>
    } else {
      dyn.yield %1 : tensor<3xf32>
    }
    %6 = dyn.mean %5 dims [0] : tensor<3xf32>
    %7 = dyn.constant dense<0.000000e+00> : tensor<f32>
    %8 = dyn.gt %6, %7 : tensor<f32>, tensor<f32>
    %9 = dyn.if %8 : tensor<i1> -> tensor<3xf32> {
      %11 = dyn.cos %5 : tensor<3xf32>
      dyn.yield %11 : tensor<3xf32>
    } else {
      dyn.yield %5 : tensor<3xf32>
    }
    %10 = dyn.linear %9, %arg1, %arg2 : tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>
    return %10 : tensor<2xf32>
  }
}
