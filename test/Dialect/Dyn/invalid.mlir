// RUN: tensor-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{shapes are not broadcast-compatible: size 3 vs 4 in dimension 0}}
  %0 = dyn.add %a, %b : tensor<3xf32>, tensor<4xf32>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<3xf32>, %b: tensor<3xf64>) {
  // expected-error@+1 {{operands have different element types: 'f32' vs 'f64'}}
  %0 = dyn.mul %a, %b : tensor<3xf32>, tensor<3xf64>
  return
}

// -----

func.func @float_op_on_integers(%a: tensor<3xi32>) {
  // expected-error@+1 {{'dyn.sin' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dyn.sin %a : tensor<3xi32>
  return
}

// -----

func.func @true_div_on_integers(%a: tensor<3xi64>) {
  // expected-error@+1 {{'dyn.div' op operand #0 must be ranked tensor of}}
  %0 = dyn.div %a, %a : tensor<3xi64>, tensor<3xi64>
  return
}

// -----

func.func @unsupported_dtype(%a: tensor<3xsi8>) {
  // expected-error@+1 {{'dyn.neg' op operand #0 must be ranked tensor of}}
  %0 = dyn.neg %a : tensor<3xsi8>
  return
}

// -----

func.func @unranked(%a: tensor<*xf32>) {
  // expected-error@+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = dyn.add %a, %a : tensor<*xf32>, tensor<*xf32>
  return
}

// -----

func.func @wrong_result_type(%a: tensor<3xf32>) {
  // expected-error@+2 {{'dyn.exp' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error@+1 {{'dyn.exp' op failed to infer returned types}}
  %0 = "dyn.exp"(%a) : (tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_condition_not_bool(%c: tensor<3xf32>, %a: tensor<3xf32>) {
  // expected-error@+1 {{'dyn.where' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = dyn.where %c, %a, %a : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

func.func @where_branch_types(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{operands have different element types: 'f32' vs 'i64'}}
  %0 = dyn.where %c, %a, %b : tensor<3xi1>, tensor<3xf32>, tensor<3xi64>
  return
}

// -----

func.func @cast_to_unsupported(%a: tensor<3xf32>) {
  // expected-error@+1 {{cannot cast to 'si8': expected f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64, complex<f32> or complex<f64>}}
  %0 = dyn.cast %a to si8 : tensor<3xf32>
  return
}

// -----

func.func @full_value_type() {
  // expected-error@+1 {{'dyn.full' op fill value of type 'f64' does not match the element type 'f32'}}
  %0 = dyn.full 1.0 : f64 : tensor<2xf32>
  return
}

// -----

func.func @full_dynamic_shape() {
  // expected-error@+1 {{'dyn.full' op result #0 must be statically shaped tensor}}
  %0 = dyn.full 1.0 : f32 : tensor<?xf32>
  return
}

// -----

func.func @arange_zero_step() {
  // expected-error@+1 {{'dyn.arange' op step must not be zero}}
  %0 = dyn.arange 0.0, 0.0 : tensor<4xi64>
  return
}

// -----

func.func @arange_rank() {
  // expected-error@+1 {{'dyn.arange' op result must be 1-D, got 'tensor<2x2xi64>'}}
  %0 = dyn.arange 0.0, 1.0 : tensor<2x2xi64>
  return
}

// -----

func.func @reduction_dim_out_of_range(%a: tensor<3x4xf32>) {
  // expected-error@+1 {{reduction dim 2 is out of range for a tensor of rank 2}}
  %0 = dyn.sum %a dims [2] : tensor<3x4xf32>
  return
}

// -----

// A 0-d tensor has no dimension to reduce (numpy: np.array(1.0).sum(axis=0) raises AxisError;
// torch's dim=0 on a 0-d tensor is the tracer's to map). Every form is a diagnostic, never the
// ODS builder's "Failed to infer result type(s)" abort.
func.func @reduction_of_0d(%a: tensor<f32>) {
  // expected-error@+1 {{reduction dim 0 is out of range for a tensor of rank 0}}
  %0 = dyn.sum %a dims [0] : tensor<f32>
  return
}

// -----

func.func @reduction_of_0d_keepdim(%a: tensor<i64>) {
  // expected-error@+1 {{reduction dim -1 is out of range for a tensor of rank 0}}
  %0 = dyn.argmin %a dims [-1] keepdim : tensor<i64>
  return
}

// -----

func.func @reduction_of_0d_generic(%a: tensor<f32>) {
  // expected-error@+2 {{reduction dim 0 is out of range for a tensor of rank 0}}
  // expected-error@+1 {{'dyn.max' op failed to infer returned types}}
  %0 = "dyn.max"(%a) <{dims = array<i64: 0>}> : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @softmax_of_0d(%a: tensor<f32>) {
  // expected-error@+1 {{dim 0 is out of range for a tensor of rank 0}}
  %0 = dyn.softmax %a dim 0 : tensor<f32>
  return
}

// -----

func.func @reduction_dim_twice(%a: tensor<3x4xf32>) {
  // expected-error@+1 {{reduction dim 1 appears twice}}
  %0 = dyn.max %a dims [1, 1] : tensor<3x4xf32>
  return
}

// -----

func.func @mean_of_integers(%a: tensor<3xi64>) {
  // expected-error@+1 {{'dyn.mean' op operand #0 must be ranked tensor of}}
  %0 = dyn.mean %a dims [0] : tensor<3xi64>
  return
}

// -----

func.func @softmax_dim(%a: tensor<3x4xf32>) {
  // expected-error@+1 {{dim 2 is out of range for a tensor of rank 2}}
  %0 = dyn.softmax %a dim 2 : tensor<3x4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<4x5xf32>, %b: tensor<6x2xf32>) {
  // expected-error@+1 {{matmul contraction dimensions differ: 5 vs 6}}
  %0 = dyn.matmul %a, %b : tensor<4x5xf32>, tensor<6x2xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x5xf32>, %b: tensor<3x5x2xf32>) {
  // expected-error@+1 {{matmul batch dimensions: shapes are not broadcast-compatible: size 2 vs 3}}
  %0 = dyn.matmul %a, %b : tensor<2x4x5xf32>, tensor<3x5x2xf32>
  return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{matmul operands must have at least one dimension}}
  %0 = dyn.matmul %a, %b : tensor<f32>, tensor<3xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<4xf32>, %w: tensor<2x3xf32>) {
  // expected-error@+1 {{linear input features 4 differ from the weight's 3}}
  %0 = dyn.linear %x, %w : tensor<4xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<3xf32>, %w: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{bias must be a 1-D tensor of 2 'f32' elements, got 'tensor<3xf32>'}}
  %0 = dyn.linear %x, %w, %b : tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x6xf32>) {
  // expected-error@+1 {{'dyn.reshape' op cannot reshape 12 elements 'tensor<2x6xf32>' into 'tensor<5x2xf32>'}}
  %0 = dyn.reshape %a : tensor<2x6xf32> -> tensor<5x2xf32>
  return
}

// -----

func.func @reshape_dtype(%a: tensor<4xf32>) {
  // expected-error@+1 {{'dyn.reshape' op cannot change the element type from 'f32' to 'i32'}}
  %0 = dyn.reshape %a : tensor<4xf32> -> tensor<4xi32>
  return
}

// -----

func.func @transpose_not_permutation(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{permutation entry 0 appears twice}}
  %0 = dyn.transpose %a perm [0, 0] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_rank(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{permutation has 3 entries for a tensor of rank 2}}
  %0 = dyn.transpose %a perm [0, 1, 2] : tensor<2x3xf32>
  return
}

// -----

func.func @broadcast_to_incompatible(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'dyn.broadcast_to' op cannot broadcast 'tensor<2x3xf32>' to 'tensor<4x3xf32>'}}
  %0 = dyn.broadcast_to %a : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @expand_dims_range(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{dim 3 is out of range [0, 2] for expand_dims}}
  %0 = dyn.expand_dims %a dim 3 : tensor<2x3xf32>
  return
}

// -----

func.func @squeeze_non_unit(%a: tensor<2x1xf32>) {
  // expected-error@+1 {{cannot squeeze dim 0 of size 2: it must have static size 1}}
  %0 = dyn.squeeze %a dims [0] : tensor<2x1xf32>
  return
}

// -----

func.func @squeeze_dynamic(%a: tensor<?x1xf32>) {
  // expected-error@+1 {{cannot squeeze dim 0 of size ?: it must have static size 1}}
  %0 = dyn.squeeze %a dims [0] : tensor<?x1xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error@+1 {{concat inputs differ in dim 1: 3 vs 4}}
  %0 = dyn.concat %a, %b dim 0 : tensor<2x3xf32>, tensor<2x4xf32>
  return
}

// -----

// The result size used to overflow int64 (undefined behaviour; found by dyn-fuzz).
func.func @concat_overflow(%a: tensor<9223372036854775807xf32>) {
  // expected-error@+1 {{concat result size in dim 0 overflows int64}}
  %0 = dyn.concat %a, %a dim 0 : tensor<9223372036854775807xf32>, tensor<9223372036854775807xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{concat inputs must share rank and element type}}
  %0 = dyn.concat %a, %b dim 0 : tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @window_rank(%a: tensor<4x4xf32>, %i: tensor<i64>) {
  // expected-error@+1 {{window needs an offset and a size per dimension of 'tensor<4x4xf32>'}}
  %0 = dyn.window %a[%i] sizes [1] : tensor<4x4xf32>
  return
}

// -----

func.func @window_size(%a: tensor<4xf32>, %i: tensor<i64>) {
  // expected-error@+1 {{window size 5 does not fit dimension 0 of 'tensor<4xf32>'}}
  %0 = dyn.window %a[%i] sizes [5] : tensor<4xf32>
  return
}

// -----

func.func @insert_window_rank(%a: tensor<4x4xf32>, %v: tensor<4xf32>, %i: tensor<i64>) {
  // expected-error@+1 {{insert_window needs a source of the destination's rank and element type and an offset per dimension}}
  %0 = dyn.insert_window %v into %a[%i, %i] : tensor<4xf32> into tensor<4x4xf32>
  return
}

// -----

func.func @compress_mask_shape(%a: tensor<4x5xf32>, %m: tensor<5xi1>) {
  // expected-error@+1 {{compress needs a mask of the operand's leading static dimensions, got 'tensor<5xi1>' for 'tensor<4x5xf32>'}}
  %0 = dyn.compress %a, %m : tensor<4x5xf32>, tensor<5xi1>
  return
}

// -----

func.func @slice_bounds(%a: tensor<4xf32>) {
  // expected-error@+1 {{slice bounds 0:5:1 are not normalized for dim 0 of size 4}}
  %0 = dyn.slice %a starts [0] stops [5] steps [1] : tensor<4xf32>
  return
}

// -----

func.func @slice_step(%a: tensor<4xf32>) {
  // expected-error@+1 {{slice step must not be zero (dim 0)}}
  %0 = dyn.slice %a starts [0] stops [4] steps [0] : tensor<4xf32>
  return
}

// -----

func.func @slice_arity(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{slice needs one start, stop and step per dimension (rank 2)}}
  %0 = dyn.slice %a starts [0] stops [4] steps [1] : tensor<4x4xf32>
  return
}

// -----

func.func @insert_slice_shape(%a: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error@+1 {{insert_slice source has shape 'tensor<3xf32>', the slice it replaces 'tensor<2xf32>'}}
  %0 = dyn.insert_slice %v into %a starts [1] stops [3] steps [1] : tensor<3xf32> into tensor<4xf32>
  return
}

// -----

func.func @insert_slice_dtype(%a: tensor<4xf32>, %v: tensor<2xf64>) {
  // expected-error@+1 {{insert_slice source has element type 'f64', the destination 'f32'}}
  %0 = dyn.insert_slice %v into %a starts [1] stops [3] steps [1] : tensor<2xf64> into tensor<4xf32>
  return
}

// -----

func.func @insert_slice_step(%a: tensor<4xf32>, %v: tensor<2xf32>) {
  // expected-error@+1 {{insert_slice steps must be positive}}
  %0 = dyn.insert_slice %v into %a starts [3] stops [-1] steps [-2] : tensor<2xf32> into tensor<4xf32>
  return
}

// -----

func.func @insert_slice_bounds(%a: tensor<4xf32>, %v: tensor<2xf32>) {
  // expected-error@+1 {{slice bounds 3:6:1 are not normalized for dim 0 of size 4}}
  %0 = dyn.insert_slice %v into %a starts [3] stops [6] steps [1] : tensor<2xf32> into tensor<4xf32>
  return
}

// -----

func.func @item_not_scalar(%a: tensor<3xf32>) {
  // expected-error@+1 {{'dyn.item' op operand #0 must be 0D tensor}}
  %0 = dyn.item %a : tensor<3xf32>
  return
}

// -----

func.func @value_eq_bad_attr() {
  // expected-error@+1 {{'dyn.guard.value_eq' op expected an i64, i1 or f64 scalar, a string, or unit (None), got [1, 2]}}
  dyn.guard.value_eq "L['n']", [1, 2]
  return
}

// -----

func.func @len_eq_negative() {
  // expected-error@+1 {{'dyn.guard.len_eq' op attribute 'length' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  dyn.guard.len_eq "L['xs']", -1
  return
}

// -----

func.func @tensor_match_no_grad_without_requires_grad(%x: tensor<3xf32>) {
  // expected-error@+1 {{'dyn.guard.tensor_match' op no_grad is for an object that requires grad}}
  dyn.guard.tensor_match "L['x']", %x type "torch.Tensor" no_grad : tensor<3xf32>
  return
}

// -----

func.func @tensor_match_strides_of_contiguous(%x: tensor<3xf32>) {
  // expected-error@+1 {{'dyn.guard.tensor_match' op strides are for a strided object}}
  dyn.guard.tensor_match "L['x']", %x type "torch.Tensor" contiguous strides [1] : tensor<3xf32>
  return
}

// -----

func.func @tensor_match_strides_of_rank(%x: tensor<3x4xf32>) {
  // expected-error@+1 {{'dyn.guard.tensor_match' op strides need static sizes, one per dimension}}
  dyn.guard.tensor_match "L['x']", %x type "torch.Tensor" strides [1] : tensor<3x4xf32>
  return
}

// -----

func.func @tensor_match_dynamic_without_symbols(%x: tensor<?x4xf32>) {
  // expected-error@+1 {{'dyn.guard.tensor_match' op expected symbols for the dynamic dimensions}}
  dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" contiguous : tensor<?x4xf32>
  return
}

// -----

func.func @tensor_match_symbol_of_static(%x: tensor<?x4xf32>) {
  // expected-error@+1 {{'dyn.guard.tensor_match' op expected a symbol (>= 0) for each dynamic dimension and -1 for each static one}}
  dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" contiguous symbols [0, 1] : tensor<?x4xf32>
  return
}

// -----

func.func @dict_keys_float() {
  // expected-error@+1 {{'dyn.guard.dict_keys' op expected string or i64 keys, got 1.500000e+00 : f64}}
  dyn.guard.dict_keys "L['d']", ["a", 1.5]
  return
}

// -----

func.func @if_predicate_not_scalar(%p: tensor<3xi1>, %x: tensor<3xf32>) {
  // expected-error@+1 {{'dyn.if' op operand #0 must be 0D tensor of 1-bit signless integer values}}
  %0 = dyn.if %p : tensor<3xi1> -> tensor<3xf32> {
    dyn.yield %x : tensor<3xf32>
  } else {
    dyn.yield %x : tensor<3xf32>
  }
  return
}

// -----

func.func @if_yield_mismatch(%p: tensor<i1>, %x: tensor<3xf32>, %y: tensor<4xf32>) {
  %0 = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    dyn.yield %x : tensor<3xf32>
  } else {
    // expected-error@+1 {{'dyn.yield' op yields 'tensor<4xf32>' but the enclosing dyn.if returns 'tensor<3xf32>'}}
    dyn.yield %y : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_outside_if(%x: tensor<3xf32>) {
  // expected-error@+1 {{'dyn.yield' op expects parent op to be one of 'dyn.if, dyn.for, dyn.while'}}
  dyn.yield %x : tensor<3xf32>
}

// -----

func.func @yield_marks_a_value_twice(%p: tensor<i1>, %x: tensor<3xf32>) {
  %r = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    // expected-error@+1 {{'dyn.yield' op expects fresh and traced to mark distinct yielded tensors, got 0}}
    dyn.yield {fresh = array<i64: 0>, traced = array<i64: 0>} %x : tensor<3xf32>
  } else {
    dyn.yield %x : tensor<3xf32>
  }
  return
}

// -----

func.func @yield_marks_past_its_values(%p: tensor<i1>, %x: tensor<3xf32>) {
  %r = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    // expected-error@+1 {{'dyn.yield' op expects fresh and traced to mark distinct yielded tensors, got 1}}
    dyn.yield {fresh = array<i64: 1>} %x : tensor<3xf32>
  } else {
    dyn.yield %x : tensor<3xf32>
  }
  return
}

// -----

func.func @for_yield_marks_fresh(%u0: tensor<3xf32>, %b: tensor<i64>) -> tensor<3xf32> {
  %u = dyn.for %b, %b, %b iter_args(%u0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %u: tensor<3xf32>):
    // expected-error@+1 {{'dyn.yield' op marks fresh or traced values only in a dyn.if}}
    dyn.yield {fresh = array<i64: 0>} %u : tensor<3xf32>
  } : tensor<i64>
  return %u : tensor<3xf32>
}

// -----

func.func @break_without_resume() {
  // expected-error@+1 {{'dyn.graph_break' op needs at least one bytecode resume offset}}
  dyn.graph_break unsupported_call "print" at "m.py" : 3 resume []
}

// -----

func.func @break_branch_offsets(%p: tensor<i1>) {
  // expected-error@+1 {{'dyn.graph_break' op a data_dependent_branch resumes at two offsets (true, false), got 1}}
  dyn.graph_break data_dependent_branch "if" at "m.py" : 3 resume [10] (%p : tensor<i1>)
}

// -----

func.func @break_branch_predicate(%x: tensor<3xf32>) {
  // expected-error@+1 {{'dyn.graph_break' op a data_dependent_branch passes its predicate (i1 or tensor<i1>) as the first live value}}
  dyn.graph_break data_dependent_branch "if" at "m.py" : 3 resume [10, 20] (%x : tensor<3xf32>)
}

// -----

func.func @break_negative_offset() {
  // expected-error@+1 {{'dyn.graph_break' op resume offsets must be non-negative}}
  dyn.graph_break unsupported_bytecode "SETUP_WITH" at "m.py" : 3 resume [-2]
}

// -----

func.func @break_unknown_kind() {
  // expected-error@+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [data_dependent_branch, data_dependent_loop, data_dependent_value, unsupported_call, unsupported_bytecode, side_effect, divergent_branch, inline_limit, requested]}}
  dyn.graph_break because "print" at "m.py" : 3 resume [2]
}

// -----

func.func @break_inside_if(%p: tensor<i1>) {
  dyn.if %p : tensor<i1> {
    // expected-error@+1 {{'dyn.graph_break' op expects parent op 'func.func'}}
    dyn.graph_break unsupported_call "print" at "m.py" : 3 resume [2]
  } else {
  }
  return
}

// -----

func.func @for_yields_other_types(%u0: tensor<3xf32>, %b: tensor<i64>) -> tensor<3xf32> {
  %r = dyn.for %b, %b, %b iter_args(%u0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %u: tensor<3xf32>):
    // expected-error@+1 {{'dyn.yield' op yields 'tensor<i64>' but the enclosing dyn.for carries 'tensor<3xf32>'}}
    dyn.yield %i : tensor<i64>
  } : tensor<i64>
  return %r : tensor<3xf32>
}

// -----

func.func @for_body_arguments(%u0: tensor<3xf32>, %b: tensor<i64>) -> tensor<3xf32> {
  // expected-error@+1 {{'dyn.for' op expects a body taking 'tensor<i64>', 'tensor<3xf32>', not 'tensor<3xf32>'}}
  %r = dyn.for %b, %b, %b iter_args(%u0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%u: tensor<3xf32>):
    dyn.yield %u : tensor<3xf32>
  } : tensor<i64>
  return %r : tensor<3xf32>
}

// -----

func.func @fma_of_integers(%a: tensor<3xi64>) {
  // expected-error@+1 {{'dyn.fma' op operand #0 must be ranked tensor of}}
  %0 = dyn.fma %a, %a, %a : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>
  return
}

// -----

func.func @fma_mixed_types(%a: tensor<3xf32>, %b: tensor<3xf64>) {
  // expected-error@+1 {{operands have different element types: 'f32' vs 'f64'}}
  %0 = dyn.fma %a, %b, %a : tensor<3xf32>, tensor<3xf64>, tensor<3xf32>
  return
}

// -----

func.func @unfold_rank(%x: tensor<3x9x7xf32>) {
  // expected-error@+1 {{unfold expects images [N, C, H, W] with static C, H and W}}
  %0 = dyn.unfold %x kernel [3, 3] dilation [1, 1] padding [0, 0] stride [1, 1] : tensor<3x9x7xf32>
  return
}

// -----

func.func @unfold_too_large(%x: tensor<1x3x4x4xf32>) {
  // expected-error@+1 {{unfold kernel 3 with dilation 2 does not fit the padded size 4}}
  %0 = dyn.unfold %x kernel [3, 3] dilation [2, 1] padding [0, 0] stride [1, 1] : tensor<1x3x4x4xf32>
  return
}

// -----

func.func @unfold_stride(%x: tensor<1x3x4x4xf32>) {
  // expected-error@+1 {{unfold needs positive kernel, dilation and stride sizes and non-negative padding}}
  %0 = dyn.unfold %x kernel [1, 1] dilation [1, 1] padding [0, 0] stride [1, 0] : tensor<1x3x4x4xf32>
  return
}

// -----

func.func @unfold_sizes(%x: tensor<1x3x4x4xf32>) {
  // expected-error@+1 {{unfold takes two kernel, dilation, padding and stride sizes}}
  %0 = dyn.unfold %x kernel [1] dilation [1, 1] padding [0, 0] stride [1, 1] : tensor<1x3x4x4xf32>
  return
}

// -----

func.func @unfold_huge(%x: tensor<1x3x4x4xf32>) {
  // expected-error@+1 {{unfold sizes beyond 2^20 are not supported}}
  %0 = dyn.unfold %x kernel [1, 1] dilation [1, 1] padding [0, 2000000] stride [1, 1] : tensor<1x3x4x4xf32>
  return
}

// -----

func.func @cumsum_dim(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{dim 2 is out of range for a tensor of rank 2}}
  %0 = dyn.cumsum %x dim 2 : tensor<4x8xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{gather axis 2 is out of range for 'tensor<4x8xf32>'}}
  %0 = dyn.gather %x[%i] axis 2 : tensor<4x8xf32>, tensor<2xi64>
  return
}

// -----

func.func @gather_empty(%x: tensor<0x8xf32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{gather from an empty dimension needs no indices}}
  %0 = dyn.gather %x[%i] axis 0 : tensor<0x8xf32>, tensor<2xi64>
  return
}

// -----

func.func @scatter_shape(%v: tensor<3x8xf32>, %x: tensor<4x8xf32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{scatter updates have shape 'tensor<3x8xf32>', expected 'tensor<2x8xf32>'}}
  %0 = dyn.scatter %v into %x[%i] axis 0 : tensor<3x8xf32> into tensor<4x8xf32>, tensor<2xi64>
  return
}

// -----

// Indices as many as only the graph knows may be some: none fits an empty dimension.
func.func @gather_empty_dynamic(%x: tensor<0x8xf32>, %i: tensor<?xi64>) {
  // expected-error@+1 {{gather from an empty dimension needs no indices}}
  %0 = dyn.gather %x[%i] axis 0 : tensor<0x8xf32>, tensor<?xi64>
  return
}

// -----

func.func @scatter_dynamic_dest(%v: tensor<?x8xf32>, %x: tensor<?x8xf32>, %i: tensor<?xi64>) {
  // expected-error@+1 {{scatter updates have shape 'tensor<?x8xf32>', expected 'tensor<?x8xf32>' (a destination of static shape)}}
  %0 = dyn.scatter %v into %x[%i] axis 0 : tensor<?x8xf32> into tensor<?x8xf32>, tensor<?xi64>
  return
}

// -----

func.func @scatter_element(%v: tensor<2x8xf64>, %x: tensor<4x8xf32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{scatter updates have element type 'f64', the destination 'f32'}}
  %0 = dyn.scatter %v into %x[%i] axis 0 : tensor<2x8xf64> into tensor<4x8xf32>, tensor<2xi64>
  return
}

// -----

func.func @scatter_accumulate_bool(%v: tensor<2xi1>, %x: tensor<4xi1>, %i: tensor<2xi64>) {
  // expected-error@+1 {{an accumulating scatter needs numbers, not booleans}}
  %0 = dyn.scatter %v into %x[%i] axis 0 accumulate : tensor<2xi1> into tensor<4xi1>, tensor<2xi64>
  return
}

// -----

func.func @sort_axis_out_of_range(%x: tensor<3x4xf32>) {
  // expected-error@+1 {{sort axis 2 out of range for 'tensor<3x4xf32>'}}
  %v, %i = dyn.sort %x axis 2 : tensor<3x4xf32>
  return
}

// -----

func.func @sort_complex(%x: tensor<3xf16>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit float or 64-bit float or 1-bit signless integer or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values}}
  %v, %i = dyn.sort %x axis 0 : tensor<3xf16>
  return
}

// -----

func.func @cholesky_not_square(%a: tensor<3x4xf64>) {
  // expected-error@+1 {{expected square matrices of a static shape, got 'tensor<3x4xf64>'}}
  %l, %ok = dyn.cholesky %a : tensor<3x4xf64>
  return
}

// -----

func.func @solve_batch(%a: tensor<2x3x3xf32>, %b: tensor<3x3x1xf32>) {
  // expected-error@+1 {{solve expects right-hand sides of 2, 3 by k columns and 'f32', got 'tensor<3x3x1xf32>'}}
  %x, %ok = dyn.solve %a, %b : tensor<2x3x3xf32>, tensor<3x3x1xf32>
  return
}

// -----

// Complex numbers have no ordering and no sine in dyn (numpy orders them lexicographically):
// the tracer breaks on such an op with this message.
func.func @complex_sin(%x: tensor<3xcomplex<f32>>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %y = dyn.sin %x : tensor<3xcomplex<f32>>
  return
}

// -----

func.func @complex_less(%x: tensor<3xcomplex<f64>>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of}}
  %y = dyn.lt %x, %x : tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>
  return
}

// -----

func.func @real_of_floats(%x: tensor<3xf32>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of complex type with 32-bit float elements or complex type with 64-bit float elements values}}
  %y = dyn.real %x : tensor<3xf32>
  return
}

// -----

func.func @while_yields_no_predicate(%x0: tensor<3xf32>, %p: tensor<i1>) -> tensor<3xf32> {
  %r = dyn.while %p : tensor<i1> iter_args(%x0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf32>):
    // expected-error@+1 {{'dyn.yield' op yields 'tensor<3xf32>' but the enclosing dyn.while needs the next predicate and the carried values, 'tensor<i1>', 'tensor<3xf32>'}}
    dyn.yield %x : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @while_body_arguments(%x0: tensor<3xf32>, %p: tensor<i1>) -> tensor<3xf32> {
  // expected-error@+1 {{'dyn.while' op expects a body taking 'tensor<3xf32>', not 'tensor<3xf64>'}}
  %r = dyn.while %p : tensor<i1> iter_args(%x0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf64>):
    dyn.yield %p, %x0 : tensor<i1>, tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @while_predicate_of_a_vector(%x0: tensor<3xf32>, %p: tensor<2xi1>) -> tensor<3xf32> {
  // expected-error@+1 {{'dyn.while' op operand #0 must be}}
  %r = dyn.while %p : tensor<2xi1> iter_args(%x0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf32>):
    dyn.yield %x : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @conv2d_channels_differ(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{conv2d's filters 'tensor<4x2x3x3xf32>' do not fit the images 'tensor<1x3x8x8xf32>'}}
  %y = dyn.conv2d %x, %w padding [0, 0] : tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @conv2d_filters_larger_than_images(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{conv2d's filters 'tensor<4x3x3x3xf32>' do not fit the images 'tensor<1x3x2x2xf32>'}}
  %y = dyn.conv2d %x, %w padding [0, 0] : tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{conv2d expects two non-negative paddings}}
  %y = dyn.conv2d %x, %w padding [-1, 0] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_of_vectors(%x: tensor<3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{conv2d expects images [N, C, H, W] and filters [F, C, KH, KW] of static shapes}}
  %y = dyn.conv2d %x, %w padding [0, 0] : tensor<3x8xf32>, tensor<4x3x3x3xf32>
  return
}
