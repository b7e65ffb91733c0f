// The seed program from the PyTorch forum thread ("does dynamo trigger real kernel
// execution?") as Dynamir's tracer records it: both sides of each data-dependent `if` traced
// with fake tensors (no kernel ran), guards on the input and on the Linear parameters, every op
// located at its Python line.
//
//   class TestNet(torch.nn.Module):
//       def forward(self, x):
//           x = x * 2                      # line 8
//           if x.sum() > 0:                # line 9
//               x = torch.sin(x)           # line 10
//           if x.mean() > 0:               # line 11
//               x = torch.cos(x)           # line 12
//           x = self.linear(x)             # line 13
//           return x
//
// Run: tensor-opt examples/seed.mlir -canonicalize -dyn-optimize-guards
#loc8 = loc("seed.py":8:12)
#loc9 = loc("seed.py":9:11)
#loc10 = loc("seed.py":10:16)
#loc11 = loc("seed.py":11:11)
#loc12 = loc("seed.py":12:16)
#loc13 = loc("seed.py":13:12)
module {
  func.func @forward(%x: tensor<3xf32>, %weight: tensor<2x3xf32>, %bias: tensor<2xf32>)
      -> tensor<2xf32> {
    dyn.guard.tensor_match "L['x']", %x type "torch.Tensor" contiguous : tensor<3xf32>
    dyn.guard.type_match "L['self']", "__main__.TestNet"
    %two = dyn.constant dense<2.0> : tensor<f32> loc(#loc8)
    %x1 = dyn.mul %x, %two : tensor<3xf32>, tensor<f32> loc(#loc8)
    %s = dyn.sum %x1 dims [0] : tensor<3xf32> loc(#loc9)
    %zero = dyn.constant dense<0.0> : tensor<f32> loc(#loc9)
    %p1 = dyn.gt %s, %zero : tensor<f32>, tensor<f32> loc(#loc9)
    %x2 = dyn.if %p1 : tensor<i1> -> tensor<3xf32> {
      %sin = dyn.sin %x1 : tensor<3xf32> loc(#loc10)
      dyn.yield %sin : tensor<3xf32>
    } else {
      dyn.yield %x1 : tensor<3xf32>
    } loc(#loc9)
    %m = dyn.mean %x2 dims [0] : tensor<3xf32> loc(#loc11)
    %zero2 = dyn.constant dense<0.0> : tensor<f32> loc(#loc11)
    %p2 = dyn.gt %m, %zero2 : tensor<f32>, tensor<f32> loc(#loc11)
    %x3 = dyn.if %p2 : tensor<i1> -> tensor<3xf32> {
      %cos = dyn.cos %x2 : tensor<3xf32> loc(#loc12)
      dyn.yield %cos : tensor<3xf32>
    } else {
      dyn.yield %x2 : tensor<3xf32>
    } loc(#loc11)
    dyn.guard.tensor_match "L['self'].linear.weight", %weight type "torch.nn.Parameter" contiguous : tensor<2x3xf32>
    dyn.guard.tensor_match "L['self'].linear.bias", %bias type "torch.nn.Parameter" contiguous : tensor<2xf32>
    dyn.guard.type_match "L['self']", "__main__.TestNet"
    %y = dyn.linear %x3, %weight, %bias : tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32> loc(#loc13)
    return %y : tensor<2xf32>
  }
}
