//===- Decompositions.cpp - numpy and torch functions made of other calls ---===//
//
// Functions modelled as the calls they are made of (clip, square, var and std, silu, gelu,
// layer_norm, stack, addmm and its kin, GRU and LSTM cells, normalize), each of which is then
// checked and promoted as if the program had made it; and torch.nn.functional's linear (an op
// of its own), dropout (the identity in eval mode) and scaled_dot_product_attention (products,
// a mask and a softmax).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// x clipped to a Python number: the bound where x is strictly beyond it, else x itself, as
/// numpy's and torch's kernels keep it (-0.0 within [0, 1] stays -0.0; maximum would make it
/// 0.0). A NaN bound is not modelled.
VarPtr clipToNumber(LibraryCall &c, const VarPtr &x, const VarPtr &bound, bool upper) {
  Tracer &t = c.t;
  double b = bound->obj.cast<double>();
  if (std::isnan(b))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " to a NaN bound");
  Type element = t.promoted(c.lib, x, bound);
  VarPtr beyond = t.compare(upper ? 4 : 0, x, bound);
  return c.ufunc(t.create<dyn::WhereOp>(
      {beyond->value, t.operandAs(bound, element), t.operandAs(x, element)}));
}

/// np.clip(a, a_min, a_max) / torch.clamp(x, min, max): either bound may be None; bounds that
/// are arrays as maximum and minimum.
VarPtr clip(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr low = c.take(1, {"a_min", "min"});
  VarPtr high = c.take(2, {"a_max", "max"});
  auto isNumber = [](const VarPtr &v) {
    return v->kind == VK::Const && (PyLong_Check(v->obj.ptr()) || PyFloat_Check(v->obj.ptr()));
  };
  if (!isNone(low))
    x = isNumber(low) ? clipToNumber(c, x, low, false)
                      : t.callTensorOp(c.lib, "maximum", {x, low}, {});
  if (!isNone(high))
    x = isNumber(high) ? clipToNumber(c, x, high, true)
                       : t.callTensorOp(c.lib, "minimum", {x, high}, {});
  return x;
}

/// x * x.
VarPtr square(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  // The square of bools is int8 in numpy, int64 in torch (not their and).
  if (t.elementTypeOf(x->value).isInteger(1))
    x = c.result(
        t.castTo(x->value, c.lib == Lib::Numpy ? Type(IntegerType::get(t.ctx, 8)) : t.i64()));
  return t.binary(NB_MULTIPLY, x, x);
}

/// var and std: the mean of the squared deviations, with ddof (numpy) or correction /
/// unbiased (torch).
VarPtr variance(LibraryCall &c) {
  Tracer &t = c.t;
  // numpy: ddof (default 0); torch: correction / unbiased (default 1).
  VarPtr x = c.tensorArg(0);
  VarPtr axis = c.take(1, {"axis", "dim"});
  VarPtr keep = c.take(99, {"keepdims", "keepdim"});
  VarPtr ddofArg = c.take(99, {"ddof", "correction"});
  VarPtr unbiased = c.take(99, {"unbiased"});
  int64_t ddof = c.lib == Lib::Torch ? 1 : 0;
  if (!isNone(ddofArg))
    ddof = intOf(ddofArg);
  if (!isNone(unbiased))
    ddof = constant(unbiased, "unbiased").cast<bool>() ? 1 : 0;
  RankedTensorType type = t.typeOf(x->value);
  SmallVector<int64_t> dims;
  if (isNone(axis))
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back(d);
  else
    dims = dimsOf(axis, type.getRank());
  int64_t count = 1;
  for (int64_t d : dims) {
    if (type.isDynamicDim(d))
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " over a dynamic dimension");
    count *= type.getDimSize(d);
  }
  VarPtr dimsVar = makeVar(VK::Tuple);
  for (int64_t d : dims)
    dimsVar->items.push_back(constVar(py::int_(d)));
  VarPtr mean =
      t.callTensorOp(c.lib, "mean", {x, dimsVar}, {{"keepdims", constVar(py::bool_(true))}});
  VarPtr centered = t.binary(NB_SUBTRACT, x, mean);
  KwArgs keepKw;
  if (keep)
    keepKw.emplace_back("keepdims", keep);
  VarPtr sum =
      t.callTensorOp(c.lib, "sum", {t.binary(NB_MULTIPLY, centered, centered), dimsVar}, keepKw);
  VarPtr variance = t.binary(NB_TRUE_DIVIDE, sum, constVar(py::float_(double(count - ddof))));
  return c.name == "var" ? variance : t.callTensorOp(c.lib, "sqrt", {variance}, {});
}

/// The tensor argument of torch's float-only functions (silu, gelu): torch raises for integers
/// and bools, which sigmoid and erf would compute in a float type.
VarPtr floatsOnly(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  if (!isa<FloatType>(c.t.elementTypeOf(x->value)))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an integer tensor raises");
  return x;
}

/// x * sigmoid(x).
VarPtr silu(LibraryCall &c) {
  Tracer &t = c.t;
  floatsOnly(c);
  return t.binary(NB_MULTIPLY, c.tensorArg(0),
                  t.callTensorOp(c.lib, "sigmoid", {c.tensorArg(0)}, {}));
}

/// gelu by erf, or by tanh with approximate="tanh".
VarPtr gelu(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = floatsOnly(c);
  VarPtr approximate = c.take(99, {"approximate"});
  bool tanhForm = approximate && approximate->kind == VK::Const &&
                  py::str(approximate->obj).cast<std::string>() == "tanh";
  VarPtr inner;
  if (tanhForm) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    VarPtr cube = t.binary(NB_MULTIPLY, t.binary(NB_MULTIPLY, x, x), x);
    VarPtr arg =
        t.binary(NB_MULTIPLY, constVar(py::float_(0.7978845608028654)),
                 t.binary(NB_ADD, x, t.binary(NB_MULTIPLY, constVar(py::float_(0.044715)), cube)));
    inner = t.callTensorOp(c.lib, "tanh", {arg}, {});
  } else {
    // 0.5 x (1 + erf(x / sqrt(2))), torch's default
    VarPtr scaled = t.binary(NB_MULTIPLY, x, constVar(py::float_(0.7071067811865476)));
    inner = t.callTensorOp(c.lib, "erf", {scaled}, {});
  }
  return t.binary(NB_MULTIPLY, t.binary(NB_MULTIPLY, constVar(py::float_(0.5)), x),
                  t.binary(NB_ADD, constVar(py::float_(1.0)), inner));
}

/// F.layer_norm over the trailing normalized_shape dimensions.
VarPtr layerNorm(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr shape = c.take(1, {"normalized_shape"});
  VarPtr weight = c.take(2, {"weight"});
  VarPtr bias = c.take(3, {"bias"});
  VarPtr eps = c.take(4, {"eps"});
  ArrayRef<int64_t> xShape = t.typeOf(x->value).getShape();
  int64_t rank = xShape.size();
  // A sequence of ints (a list, a tuple, a torch.Size such as x.shape[-1:]), each the size of
  // one trailing dimension; torch raises otherwise, and so does the eager call at a break.
  std::optional<SmallVector<int64_t>> ints = intSequence(shape);
  if (!ints)
    breakTrace(dyn::BreakKind::unsupported_call,
               "layer_norm's normalized_shape is not a sequence of ints");
  SmallVector<int64_t> sizes = *ints;
  int64_t count = sizes.size();
  if (count > rank || !llvm::equal(sizes, xShape.take_back(count)))
    breakTrace(dyn::BreakKind::unsupported_call,
               "layer_norm's normalized_shape does not match the input's trailing dimensions");
  VarPtr dims = makeVar(VK::Tuple);
  for (int64_t d = rank - count; d < rank; ++d)
    dims->items.push_back(constVar(py::int_(d)));
  KwArgs keep = {{"keepdim", constVar(py::bool_(true))}};
  VarPtr mean = t.callTensorOp(c.lib, "mean", {x, dims}, keep);
  VarPtr centered = t.binary(NB_SUBTRACT, x, mean);
  VarPtr var =
      t.callTensorOp(c.lib, "mean", {t.binary(NB_MULTIPLY, centered, centered), dims}, keep);
  VarPtr denominator = t.binary(NB_ADD, var, isNone(eps) ? constVar(py::float_(1e-5)) : eps);
  VarPtr y = t.binary(NB_MULTIPLY, centered, t.callTensorOp(c.lib, "rsqrt", {denominator}, {}));
  if (!isNone(weight))
    y = t.binary(NB_MULTIPLY, y, weight);
  if (!isNone(bias))
    y = t.binary(NB_ADD, y, bias);
  return y;
}

/// np.stack / torch.stack as concatenate of expand_dims.
VarPtr stack(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr seq = sequenceArg(c.take(0, {"tensors", "arrays"}), c.name);
  VarPtr axis = c.take(1, {"axis", "dim"});
  if (seq->items.empty() || seq->items[0]->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of non-tensors");
  int64_t d = isNone(axis) ? 0 : intOf(axis);
  int64_t rank = t.typeOf(seq->items[0]->value).getRank();
  if (d < 0)
    d += rank + 1;
  VarPtr expanded = makeVar(VK::Tuple);
  for (const VarPtr &item : seq->items)
    expanded->items.push_back(
        t.callTensorOp(c.lib, "expand_dims", {item, constVar(py::int_(d))}, {}));
  return t.callTensorOp(c.lib, "concatenate", {expanded, constVar(py::int_(d))}, {});
}

/// F.linear(x, weight, bias): dyn.linear.
VarPtr linear(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0), w = c.tensorArg(1);
  VarPtr bias = c.take(2, {"bias"});
  if (isNone(bias))
    return c.result(t.create<dyn::LinearOp>({x->value, w->value}));
  return c.result(t.create<dyn::LinearOp>({x->value, w->value, bias->value}));
}

/// torch.addmm(input, m1, m2, *, beta=1, alpha=1), addmv (a matrix and a vector) and baddbmm
/// (batches of matrices): beta * input + alpha * (m1 @ m2), where input is ignored (NaNs
/// included) when beta is 0, as torch's kernels do. The three tensors have one dtype and input
/// broadcasts to the product's shape (torch raises otherwise).
VarPtr addProduct(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr input = c.tensorArg(0), a = c.tensorArg(1), b = c.tensorArg(2);
  VarPtr beta = c.take(SIZE_MAX, {"beta"}), alpha = c.take(SIZE_MAX, {"alpha"});
  auto [rankA, rankB] = c.name == "addmm"   ? std::pair(2, 2)
                        : c.name == "addmv" ? std::pair(2, 1)
                                            : std::pair(3, 3);
  Type element = t.elementTypeOf(input->value);
  if (c.args.size() != 3 || t.typeOf(a->value).getRank() != rankA ||
      t.typeOf(b->value).getRank() != rankB || t.elementTypeOf(a->value) != element ||
      t.elementTypeOf(b->value) != element)
    return nullptr;
  auto number = [&](const VarPtr &v) -> std::optional<py::object> {
    if (isNone(v))
      return py::object(py::int_(1));
    // torch refuses a float factor for integer tensors.
    if (v->kind != VK::Const ||
        !(PyLong_Check(v->obj.ptr()) || (PyFloat_Check(v->obj.ptr()) && isa<FloatType>(element))))
      return std::nullopt;
    return v->obj;
  };
  std::optional<py::object> betaValue = number(beta), alphaValue = number(alpha);
  if (!betaValue || !alphaValue)
    return nullptr;
  VarPtr product = t.callTensorOp(Lib::Torch, "matmul", {a, b}, {});
  if (!alphaValue->equal(py::int_(1)))
    product = t.callTensorOp(Lib::Torch, "mul", {product, constVar(*alphaValue)}, {});
  ArrayRef<int64_t> out = t.typeOf(product->value).getShape();
  SmallVector<int64_t> in(t.typeOf(input->value).getShape());
  if (in.size() > out.size() || ShapedType::isDynamicShape(in) || ShapedType::isDynamicShape(out))
    return nullptr;
  for (auto [i, size] : llvm::enumerate(llvm::reverse(in)))
    if (size != 1 && size != out[out.size() - 1 - i])
      return nullptr;
  if (betaValue->equal(py::int_(0)))
    return product;
  if (!betaValue->equal(py::int_(1)))
    input = t.callTensorOp(Lib::Torch, "mul", {input, constVar(*betaValue)}, {});
  return t.callTensorOp(Lib::Torch, "add", {input, product}, {});
}

/// torch.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh) (nn.GRUCell) and torch.lstm_cell(x, (h, c),
/// w_ih, w_hh, b_ih, b_hh) (nn.LSTMCell): the gates as ATen's CPU cells compute them, from the
/// two products, chunked; a cell returns h' (GRU) or (h', c') (LSTM).
VarPtr recurrentCell(LibraryCall &c) {
  Tracer &t = c.t;
  bool lstm = c.name == "lstm_cell";
  if (c.lib != Lib::Torch || c.args.size() < 4 || c.args.size() > 6 || !c.kwargs.empty())
    return nullptr;
  VarPtr x = c.tensorArg(0), state = c.args[1];
  VarPtr h = state, cell;
  if (lstm) {
    if (state->kind != VK::Tuple || state->items.size() != 2)
      return nullptr;
    h = state->items[0];
    cell = state->items[1];
  }
  auto product = [&](const VarPtr &input, size_t weight, size_t bias) {
    std::vector<VarPtr> args = {input, c.tensorArg(weight)};
    if (bias < c.args.size() && !isNone(c.args[bias]))
      args.push_back(c.args[bias]);
    return t.callTensorOp(Lib::Torch, "linear", args, {});
  };
  VarPtr gi = product(x, 2, 4), gh = product(h, 3, 5);
  auto act = [&](const char *name, const VarPtr &v) {
    return t.callTensorOp(Lib::Torch, name, {v}, {});
  };
  auto chunks = [&](const VarPtr &v, int64_t n) {
    return t
        .callTensorOp(Lib::Torch, "chunk", {v, constVar(py::int_(n)), constVar(py::int_(1))}, {})
        ->items;
  };
  if (!lstm) {
    std::vector<VarPtr> i = chunks(gi, 3), g = chunks(gh, 3);
    VarPtr reset = act("sigmoid", t.binary(NB_ADD, g[0], i[0]));
    VarPtr input = act("sigmoid", t.binary(NB_ADD, g[1], i[1]));
    VarPtr fresh = act("tanh", t.binary(NB_ADD, i[2], t.binary(NB_MULTIPLY, g[2], reset)));
    return t.binary(NB_ADD, t.binary(NB_MULTIPLY, t.binary(NB_SUBTRACT, h, fresh), input), fresh);
  }
  std::vector<VarPtr> g = chunks(t.binary(NB_ADD, gh, gi), 4);
  VarPtr in = act("sigmoid", g[0]), forget = act("sigmoid", g[1]);
  VarPtr candidate = act("tanh", g[2]), out = act("sigmoid", g[3]);
  VarPtr c2 =
      t.binary(NB_ADD, t.binary(NB_MULTIPLY, forget, cell), t.binary(NB_MULTIPLY, in, candidate));
  VarPtr result = makeVar(VK::Tuple);
  result->items = {t.binary(NB_MULTIPLY, out, act("tanh", c2)), c2};
  return result;
}

/// F.dropout in eval mode (training=False) is the identity.
VarPtr dropout(LibraryCall &c) {
  VarPtr training = c.take(2, {"training"});
  // F.dropout's default is training=True: random masks are not traced.
  if (isNone(training) || training->kind != VK::Const || training->obj.cast<bool>())
    breakTrace(dyn::BreakKind::unsupported_call, "dropout in training mode draws random masks");
  return c.tensorArg(0);
}

/// x.masked_fill(mask, value) / torch.masked_fill: where(mask, value, x) in x's dtype.
VarPtr maskedFill(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr mask = c.take(1, {"mask"});
  VarPtr value = c.take(2, {"value"});
  if (!mask || mask->kind != VK::Tensor || !t.elementTypeOf(mask->value).isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call, "masked_fill with a mask that is not bool raises");
  if (!value || (value->kind != VK::Tensor && value->kind != VK::Const))
    breakTrace(dyn::BreakKind::unsupported_call, "masked_fill with a value that is not a number");
  Type element = t.elementTypeOf(x->value);
  if (!isa<FloatType>(element) && value->kind == VK::Const && !PyLong_Check(value->obj.ptr()))
    breakTrace(dyn::BreakKind::unsupported_call, "masked_fill of integers with a non-integer");
  Value filled = t.operandAs(value, element);
  return c.result(t.create<dyn::WhereOp>({mask->value, filled, x->value}));
}

/// F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
/// scale=None, enable_gqa=False) in inference: softmax(q k^T * scale + mask) v over the last two
/// dimensions, with scale 1/sqrt(E) by default; is_causal keeps key j <= query i (torch's
/// upper-left triangle), a bool attn_mask keeps where it is true, a float one is added.
VarPtr scaledDotProductAttention(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr q = c.tensorArg(0), k = c.tensorArg(1), v = c.tensorArg(2);
  VarPtr mask = c.take(3, {"attn_mask"}), dropout = c.take(4, {"dropout_p"});
  VarPtr causal = c.take(5, {"is_causal"}), scaleArg = c.take(6, {"scale"});
  VarPtr gqa = c.take(7, {"enable_gqa"});
  if (c.args.size() > 8)
    return nullptr;
  if (!isNone(dropout) && constant(dropout, "dropout_p").cast<double>() != 0.0)
    breakTrace(dyn::BreakKind::unsupported_call,
               "scaled_dot_product_attention with dropout (random)");
  if (flagOf(gqa, "enable_gqa"))
    breakTrace(dyn::BreakKind::unsupported_call, "scaled_dot_product_attention with enable_gqa");
  RankedTensorType qt = t.typeOf(q->value), kt = t.typeOf(k->value);
  if (qt.getRank() < 2 || kt.getRank() != qt.getRank() || !qt.hasStaticShape() ||
      !kt.hasStaticShape() || !isa<FloatType>(qt.getElementType()))
    breakTrace(dyn::BreakKind::unsupported_call,
               "scaled_dot_product_attention of tensors that are not float with static shapes of "
               "one rank");
  double scale = isNone(scaleArg) ? 1.0 / std::sqrt(static_cast<double>(qt.getShape().back()))
                                  : constant(scaleArg, "scale").cast<double>();
  VarPtr keys = t.callTensorOp(Lib::Torch, "transpose",
                               {k, constVar(py::int_(-2)), constVar(py::int_(-1))}, {});
  VarPtr scores =
      t.binary(NB_MULTIPLY, t.binary(NB_MATRIX_MULTIPLY, q, keys), constVar(py::float_(scale)));
  VarPtr minusInf = constVar(py::float_(-INFINITY));
  if (flagOf(causal, "is_causal")) {
    if (!isNone(mask))
      breakTrace(dyn::BreakKind::unsupported_call,
                 "scaled_dot_product_attention with is_causal and attn_mask raises");
    int64_t rank = qt.getRank();
    VarPtr ones = t.callTensorOp(
        Lib::Torch, "ones",
        {constVar(py::int_(qt.getDimSize(rank - 2))), constVar(py::int_(kt.getDimSize(rank - 2)))},
        {{"dtype", constVar(py::module_::import("torch").attr("bool"))}});
    mask = t.callTensorOp(Lib::Torch, "tril", {ones}, {});
  }
  if (!isNone(mask) && mask->kind == VK::Tensor && t.elementTypeOf(mask->value).isInteger(1))
    scores = t.callTensorOp(
        Lib::Torch, "masked_fill",
        {scores, t.callTensorOp(Lib::Torch, "logical_not", {mask}, {}), minusInf}, {});
  else if (!isNone(mask))
    scores = t.binary(NB_ADD, scores, mask);
  VarPtr weights = t.callTensorOp(Lib::Torch, "softmax", {scores, constVar(py::int_(-1))}, {});
  return t.binary(NB_MATRIX_MULTIPLY, weights, v);
}

/// tril/triu(x, k): x where the column minus the row is at most (tril) or at least (triu) k,
/// else zero, over the last two dimensions.
VarPtr triangle(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr diagonal = c.take(1, {"diagonal", "k"});
  int64_t k = isNone(diagonal) ? 0 : intOf(diagonal);
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank();
  if (rank < 2 || type.isDynamicDim(rank - 2) || type.isDynamicDim(rank - 1))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " needs two static trailing dimensions");
  auto indices = [&](int64_t n) {
    return dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({n}, t.i64()),
                                 t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1))
        .getResult();
  };
  Value rows = dyn::ExpandDimsOp::create(t.b, c.loc, indices(type.getDimSize(rank - 2)), 1);
  Value offset = t.create<dyn::SubOp>({indices(type.getDimSize(rank - 1)), rows});
  Value bound = t.scalarConstant(py::int_(k), t.i64());
  Value keep = c.name == "tril" ? t.create<dyn::LeOp>({offset, bound})
                                : t.create<dyn::GeOp>({offset, bound});
  Value zero = t.scalarConstant(py::int_(0), type.getElementType());
  return c.result(t.create<dyn::WhereOp>({keep, x->value, zero}));
}

/// F.normalize(input, p=2.0, dim=1, eps=1e-12): input / input.norm(p, dim,
/// keepdim=True).clamp_min(eps), torch's own definition.
VarPtr normalize(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr p = c.take(1, {"p"}), dim = c.take(2, {"dim"}), eps = c.take(3, {"eps"});
  if (!isNone(c.take(4, {"out"})))
    return nullptr;
  VarPtr norm = t.callTensorOp(
      c.lib, "norm",
      {x, isNone(p) ? constVar(py::float_(2.0)) : p, isNone(dim) ? constVar(py::int_(1)) : dim},
      {{"keepdim", constVar(py::bool_(true))}});
  VarPtr denom = t.callTensorOp(c.lib, "clamp", {norm},
                                {{"min", isNone(eps) ? constVar(py::float_(1e-12)) : eps}});
  return t.binary(NB_TRUE_DIVIDE, x, denom);
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::decomposedFunctions() {
  std::vector<LibraryFunction> functions = {
      {"clip", clip},
      {"clamp", clip},
      {"square", square},
      {"var", variance},
      {"std", variance},
      {"silu", silu},
      {"gelu", gelu},
      {"layer_norm", layerNorm},
      {"stack", stack},
      {"linear", linear},
      {"addmm", addProduct},
      {"addmv", addProduct},
      {"baddbmm", addProduct},
      {"gru_cell", recurrentCell},
      {"lstm_cell", recurrentCell},
      {"dropout", dropout},
      {"masked_fill", maskedFill},
      {"tril", triangle},
      {"triu", triangle},
      {"scaled_dot_product_attention", scaledDotProductAttention},
      {"normalize", normalize},
  };
  return functions;
}
