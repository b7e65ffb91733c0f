//===- TracerImpl.h - The tracer's state, shared by its files ---*- C++ -*-===//
//
// The symbolic interpreter of CPython 3.11-3.13 bytecode (decoded by Bytecode.h), split by
// concern over the files of lib/Frontend; this header is what they share. Values on the
// abstract stack are `Var`s (Values.h): fake tensors (an SSA value whose type is the dtype and
// shape), Python constants, containers, modules, functions and nn.Modules. Library calls on
// fake tensors emit `dyn` ops; nothing ever runs on real data. Anything the tracer cannot
// model raises a `Break`, which becomes a `dyn.graph_break` with its reason and line (or,
// inside a data-dependent branch, turns the whole branch into a break).
//
// Where each member of `Tracer` is defined:
//   Tracer.cpp               the traced frame: run, runModule, the entry point
//   Values.cpp               describe, dtypes, Python types of values
//   Layouts.cpp              memory layouts: strides of views, the order of computed arrays
//   Guards.cpp               guards, tensor inputs and `wrap` of real objects with sources
//   Interpreter.cpp          the interpreter loop: runFrame and step (one case per bytecode)
//   Calls.cpp                call: the dispatch on the callee, nn.Modules
//   Functions.cpp            inlined Python functions, closures, generators, iteration, and
//                            the undo log of an inlined call that breaks
//   Builtins.cpp             Python's builtins, and the polyfills inlined in their place
//   Text.cpp                 strings the host formats from values the graph computes
//   Arithmetic.cpp           promotion, binary operators, comparisons, in-place updates
//   Numbers.cpp              Python numbers the graph computes (dynamic scalars)
//   Attributes.cpp           attributes, subscripts, slices
//   Library.cpp              numpy and torch calls: the name -> handler table (Library.h)
//   Library*.cpp,
//   Decompositions.cpp       the handlers, by family
//   Branches.cpp             data-dependent branches (dyn.if)
//   Resume.cpp               resume plans: how the host goes on after a break
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_LIB_FRONTEND_TRACERIMPL_H
#define DYNAMIR_LIB_FRONTEND_TRACERIMPL_H

#include "Bytecode.h"
#include "Values.h"

#include "dynamir/Frontend/Tracer.h"
#include "dynamir/Support/PythonMemory.h"
#include "dynamir/Support/PythonNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <optional>
#include <set>

namespace dynamir::frontend {

/// `v` as a constant attribute when every op it is made of folds on constants, as
/// canonicalization would fold them (Branches.cpp); null otherwise, or when a constant is
/// large (folding copies it). Such a value depends on nothing a guard must cover.
Attribute foldedConstant(Value v, unsigned depth = 0);

//===----------------------------------------------------------------------===//
// The interpreter state of one frame
//===----------------------------------------------------------------------===//

struct Frame {
  std::shared_ptr<Code> code;
  py::dict globals;
  py::dict builtins;
  std::string globalsSource; // prefix for sources of globals: "G" for the traced frame
  std::vector<VarPtr> locals;
  std::vector<VarPtr> stack;
  py::tuple kwNames;
  unsigned depth = 0;
  bool polyfill = false; // dynamir's polyfill of a builtin: ops get the caller's location
  /// except blocks entered (PUSH_EXC_INFO) and not left (POP_EXCEPT): a break inside one
  /// makes the frame run eagerly, as the host could not hand the exception state over.
  int handlersOpen = 0;

  VarPtr pop() {
    if (stack.empty())
      breakTrace(dyn::BreakKind::unsupported_bytecode, "abstract stack underflow");
    VarPtr v = stack.back();
    stack.pop_back();
    return v;
  }
  std::vector<VarPtr> popN(size_t n) {
    if (stack.size() < n)
      breakTrace(dyn::BreakKind::unsupported_bytecode, "abstract stack underflow");
    std::vector<VarPtr> out(stack.end() - n, stack.end());
    stack.resize(stack.size() - n);
    return out;
  }
  VarPtr &peek(size_t i = 1) { return stack[stack.size() - i]; }
};

/// What tells a captured for loop from a while loop (Loops.cpp).
struct LoopPlan;

/// A `break` the body of a captured for loop traced: whether the iteration leaves the loop
/// there, and what the loop's slots hold then.
struct LoopExit {
  Value taken;                // an i1 the graph computes
  std::vector<VarPtr> slots;  // locals, and the stack below the iterator
  std::vector<Value> values;  // the value of each slot holding a tensor or dynamic scalar
  SmallVector<Value> carried; // the carried Vars' values
};

/// The `break`s traced in one pass over a for loop's body (LoopBreaks.cpp).
struct LoopExits {
  const Frame *frame;
  size_t stackSize; // at the body's statements: the iterator on top
  size_t exit;      // where the exhausted loop goes on (an instruction's index)
  size_t slots;
  const std::vector<VarPtr> &carried;
  bool allowed;      // false in a first trace as a dyn.for, which a break makes a dyn.while
  bool popsIterator; // a for loop's `break` pops its iterator
  std::vector<LoopExit> taken;
};

/// Thrown by the first trace of a for loop, as a dyn.for, at a `break` on a tensor: the loop
/// is traced again as a dyn.while.
struct LoopLeftByBreak {};

/// Whether `a` and `c` are one value, or computed again by the same pure ops from the same
/// values (each `x > 0` has its own constant 0), up to a small depth (Stores.cpp).
bool computedAlike(Value a, Value c, unsigned depth = 0);

/// How a run of instructions ended.
struct Outcome {
  enum Kind { Return, ReachedStop, JumpedPast, Yield } kind;
  VarPtr value;        // Return, Yield
  int64_t target = 0;  // JumpedPast: the forward jump target beyond the stop
  size_t resumeAt = 0; // Yield: the instruction the generator goes on at
};

/// A generator the trace made: its frame, suspended at a yield (or not started).
struct GeneratorState {
  Frame frame;
  size_t pc = 0;
  bool running = false, done = false;
  VarPtr returned; // what its `return` gave (the value of a `yield from` it)
};

/// What an inlined call needs of a function object: a real function's, or one the trace made.
struct Callable {
  std::shared_ptr<Code> code;
  py::dict globals;
  std::string globalsSource;
  std::vector<VarPtr> defaults;
  std::vector<std::pair<std::string, VarPtr>> kwDefaults;
  std::vector<VarPtr> closure; // Cell Vars, one per free variable
  /// dynamir's own polyfill of a builtin: inlined up to kPolyfillDepth calls beyond the
  /// inlining limit, and what it makes stands for objects of other types (Var::opaqueType).
  bool polyfill = false;
};
inline constexpr unsigned kPolyfillDepth = 16;

// BINARY_OP argument values in CPython 3.11 (NB_* in opcode.h); in-place forms add 13.
enum BinaryKind {
  NB_ADD = 0,
  NB_AND = 1,
  NB_FLOOR_DIVIDE = 2,
  NB_LSHIFT = 3,
  NB_MATRIX_MULTIPLY = 4,
  NB_MULTIPLY = 5,
  NB_REMAINDER = 6,
  NB_OR = 7,
  NB_POWER = 8,
  NB_RSHIFT = 9,
  NB_SUBTRACT = 10,
  NB_TRUE_DIVIDE = 11,
  NB_XOR = 12
};

//===----------------------------------------------------------------------===//
// The tracer
//===----------------------------------------------------------------------===//

/// One trace. Its members are public: the files of lib/Frontend (and the library handlers,
/// free functions of their files) share them; nothing outside lib/Frontend sees this class.
class Tracer {
public:
  Tracer(MLIRContext *ctx, const TraceOptions &options);

  // --- Tracer.cpp: the traced frame ----------------------------------------------------------
  TraceResult run(py::handle fn, py::tuple args, py::dict kwargs);
  TraceResult runModule(py::handle module, py::tuple args, TraceResult result);

  // --- IR helpers ----------------------------------------------------------------------------
  Location loc() {
    if (!locCode)
      return b.getUnknownLoc();
    return FileLineColLoc::get(ctx, locCode->filename, locInstr.line, locInstr.col + 1);
  }
  Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }
  RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

  VarPtr tensorVar(Value v, Lib lib) {
    VarPtr t = makeVar(VK::Tensor);
    t->value = v;
    t->lib = lib;
    ++varsHolding[v];
    tensorVars.push_back(t);
    if (isView(v.getDefiningOp()))
      viewVars.push_back(t);
    return t;
  }

  /// The result of a numpy ufunc or reduction: a 0-d result is a numpy scalar, as numpy
  /// returns it (torch has no scalars).
  VarPtr ufuncResult(Value v, Lib lib) {
    VarPtr t = tensorVar(v, lib);
    t->scalar = lib == Lib::Numpy && typeOf(v).getRank() == 0;
    return t;
  }

  /// `v` with `element` elements: `v` itself if it has them, else a conversion.
  Value castTo(Value v, Type element) {
    return elementTypeOf(v) == element ? v : convertElements(v, element);
  }
  /// A new tensor of `v`'s elements converted to `element` (dyn.cast), numpy's astype.
  Value convertElements(Value v, Type element);

  /// An i64 tensor constant of `values` in `shape`.
  Value i64Constant(ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, i64());
    return dyn::ConstantOp::create(b, loc(), DenseElementsAttr::get(type, values));
  }

  /// The Python number `value` as an element of the complex `type` (numpy's complex(value)).
  static std::complex<APFloat> complexElement(ComplexType type, py::handle value);
  /// A dyn.constant of complex `type` whose every element is the Python number `value`
  /// (numpy's complex(value)): dyn.full holds no complex fill.
  Value complexSplat(RankedTensorType type, py::handle value, Location at);
  /// A tensor of zeros of `type` (dyn.full, or complexSplat).
  Value zerosOf(RankedTensorType type, Location at) {
    if (isa<ComplexType>(type.getElementType()))
      return complexSplat(type, py::int_(0), at);
    return dyn::FullOp::create(b, at, type, cast<TypedAttr>(b.getZeroAttr(type.getElementType())));
  }
  Value scalarConstant(py::handle value, Type element) {
    auto type = RankedTensorType::get({}, element);
    Attribute attr;
    // An unsigned integer constant may exceed int64 (uint64); a negative one wraps, as torch
    // wraps it (numpy raised before the trace got here).
    bool large = element.isUnsignedInteger() &&
                 PyObject_RichCompareBool(value.ptr(), py::int_(0).ptr(), Py_GE) == 1;
    if (isa<ComplexType>(element))
      return complexSplat(type, value, loc());
    if (isa<FloatType>(element))
      attr = DenseElementsAttr::get(type, FloatAttr::get(element, value.cast<double>()));
    else
      attr = DenseElementsAttr::get(
          type, IntegerAttr::get(element, large ? APInt(element.getIntOrFloatBitWidth(),
                                                        value.cast<uint64_t>(), /*isSigned=*/false,
                                                        /*implicitTrunc=*/true)
                                                : APInt(element.getIntOrFloatBitWidth(),
                                                        value.cast<int64_t>(), /*isSigned=*/true,
                                                        /*implicitTrunc=*/true)));
    return dyn::ConstantOp::create(b, loc(), cast<DenseElementsAttr>(attr));
  }

  /// Creates an op whose result type is inferred from its operands alone, after checking that
  /// inference succeeds: a shape or dtype error in the traced program (`a @ b` with mismatched
  /// sizes) becomes a graph break with the verifier's message, so the host runs it eagerly and
  /// raises exactly what numpy or torch raises.
  template <typename OpTy> Value create(ValueRange operands) {
    std::string message;
    SmallVector<Type> types;
    LogicalResult inferred = failure();
    {
      ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
        message = d.str();
        return success();
      });
      inferred = OpTy::inferReturnTypes(ctx, loc(), operands, DictionaryAttr::get(ctx),
                                        OpaqueProperties(nullptr), RegionRange(), types);
    }
    if (failed(inferred))
      breakTrace(dyn::BreakKind::unsupported_call,
                 std::string(OpTy::getOperationName()) + ": " + message);
    OperationState state(loc(), OpTy::getOperationName());
    state.addOperands(operands);
    state.addTypes(types);
    return b.create(state)->getResult(0);
  }

  // --- dtypes --------------------------------------------------------------------------------
  Type f32() { return Float32Type::get(ctx); }
  Type f64() { return Float64Type::get(ctx); }
  Type i64() { return IntegerType::get(ctx, 64); }
  Type i1() { return IntegerType::get(ctx, 1); }

  // --- Values.cpp: describing values, dtypes, Python types -----------------------------------
  std::string describe(const VarPtr &v);
  void logInstr(const Frame &f, const Instr &in);
  Type dtypeToType(py::handle dtype);
  py::object dtypeObject(Lib lib, Type t);
  Type dtypeArgument(Lib lib, const VarPtr &v);
  static py::object importIfLoaded(const char *name);
  py::object pythonType(const VarPtr &v);
  VarPtr isInstance(const VarPtr &obj, const VarPtr &classes);

  // --- Layouts.cpp: memory layouts ----------------------------------------------------------
  /// Whether the trace knows the array `v` stands for is C-contiguous.
  bool isContiguous(const VarPtr &v);
  bool isContiguous(Value v);
  /// Whether the array is C-contiguous, where the trace knows (else none: a computed array of
  /// an order it does not model, a view of an input whose strides are not guarded).
  std::optional<bool> contiguity(Value v);
  /// The strides (in elements) numpy or torch would report for the array, where the trace
  /// knows them.
  std::optional<llvm::SmallVector<int64_t>> reportedStrides(Value v);
  /// The strides (in elements) of the array `v` stands for, where the trace knows its layout.
  std::optional<llvm::SmallVector<int64_t>> stridesOf(Value v);
  /// Where the first element of the array `v` stands for is in its base's memory (in
  /// elements), where the trace knows the layout.
  std::optional<int64_t> offsetOf(Value v);
  /// Whether two arrays are laid out alike (both row-major, with the same known strides, or
  /// as the same array of a layout the trace does not know).
  bool sameLayout(Value a, Value c);
  Value layoutRoot(Value v);
  /// Arrays a store made that keep the layout (strided, or unknown) of the array they replace
  /// (read where the op's recorded layout says so, which a reused op address does not).
  llvm::DenseMap<Value, Value> layoutTwins;
  Value twinOf(Value v);
  /// How eager code lays out what a library call or operator computes from `operands`.
  enum class ResultLayout {
    Elementwise, // a ufunc (numpy, order K) or a TensorIterator op (torch): like its operands
    RowMajor,    // always C-contiguous (matmul, torch's reductions, contiguous())
    Unknown,     // like its operands, by rules the trace does not model
  };
  static ResultLayout resultLayout(Lib lib, llvm::StringRef name, const std::vector<VarPtr> &args,
                                   const KwArgs &kwargs);
  /// Records the layout of `r`, a computed array (or a tuple of them) made from `operands`, by
  /// `rule`; returns `r`.
  VarPtr layOut(VarPtr r, ArrayRef<VarPtr> operands, ResultLayout rule);
  /// `v` as an array laid out as `like` is: v itself, or a copy of it recorded with that
  /// layout (a store keeps the layout of the object it changes).
  Value laidOutLike(Value v, Value like);
  /// Records that the computed array `v` is laid out as `like`: in its order where it is
  /// dense, else (strided, or unknown) as its twin.
  void recordLayoutLike(Value v, Value like);
  /// Gives each result of `op` the layout of the value at the same position in `from` (the
  /// values a dyn.for starts or ends with), or, with `other`, the layout both share (the sides
  /// of a dyn.if).
  void layOutResults(Operation *op, ValueRange from, ValueRange other = {});
  /// The axes of `v` in memory order (outermost first), where it is a dense array of a known
  /// layout; what the host must transpose the graph's output by to hand it out as eager code
  /// would (empty: row-major).
  std::optional<llvm::SmallVector<int64_t>> denseOrder(Value v);
  /// The order the host hands `v` out in (denseOrder; row-major where it hands out device
  /// arrays).
  std::optional<llvm::SmallVector<int64_t>> hostOrder(Value v);
  /// What the graph outputs for the host to hand out `v`, a dense array in `order`, as eager
  /// code lays it out: `v` transposed into that order, row-major (the host transposes it back).
  Value handedOut(Value v, ArrayRef<int64_t> order);
  /// Removes the orders recorded while tracing from the ops (the trace's own bookkeeping).
  void forgetLayouts();

  // --- Guards.cpp: guards and inputs ---------------------------------------------------------
  void setGuardInsertionPoint();
  void guardOnce(const std::string &key, llvm::function_ref<void()> emit);
  void guardId(const std::string &source, py::handle obj);
  void guardType(const std::string &source, py::handle obj);
  void guardValue(const std::string &source, py::handle obj);
  void guardLen(const std::string &source, int64_t length) {
    if (!source.empty())
      guardOnce("len:" + source,
                [&] { dyn::LenEqGuardOp::create(b, b.getUnknownLoc(), source, length); });
  }
  /// The dict at `source` has exactly these keys, in this order.
  void guardDictKeys(const std::string &source, ArrayRef<Attribute> keys) {
    guardOnce("keys:" + source, [&] {
      dyn::DictKeysGuardOp::create(b, b.getUnknownLoc(), source, b.getArrayAttr(keys));
    });
  }
  /// The names in the str-keyed dict `dict` (an object's __dict__) found at `source`, guarded
  /// by guardDictKeys: whether it holds `name`.
  bool guardNames(const std::string &source, py::handle dict, const std::string &name) {
    SmallVector<Attribute> keys;
    for (auto item : py::reinterpret_borrow<py::dict>(dict))
      keys.push_back(b.getStringAttr(item.first.cast<std::string>()));
    guardDictKeys(source, keys);
    return py::reinterpret_borrow<py::dict>(dict).contains(name);
  }
  bool isTensorObject(py::handle obj);
  static bool isDeviceArray(py::handle obj);
  /// Whether the frame takes a dynamir.cuda.Array: the host then hands out device arrays,
  /// which are row-major.
  bool deviceArrayInputs = false;
  VarPtr tensorInput(py::handle obj, const std::string &source);
  /// Whether a torch tensor requires grad: an input the guard says does (no result of the
  /// trace does, as graphs record no gradients).
  bool requiresGrad(const VarPtr &v);
  /// A Python float or int input that is not guarded by value (options.dynamicScalars).
  VarPtr scalarInput(py::handle obj, const std::string &source);
  static std::string itemSource(const std::string &source, const std::string &key);
  VarPtr wrap(py::handle obj, const std::string &source, bool guard = true);
  VarPtr wrapObject(py::handle obj, const std::string &source, bool guard);

  // --- Interpreter.cpp: the interpreter loop -------------------------------------------------
  Outcome runFrame(Frame &f, size_t start, int64_t stopAt);
  /// Whether a jump from `here` to `target` leaves the range a run stops at `stopAt` for: a
  /// stop ahead is a branch's join (beyond it, past it); a stop behind is the head of a loop
  /// being captured (beyond it, past the loop's exit).
  static bool beyondStop(const Code &code, int64_t target, int64_t stopAt, int64_t here) {
    if (stopAt < 0)
      return false;
    if (stopAt > here)
      return target > stopAt;
    const Instr &head = code.instrs[code.indexOf.lookup(stopAt)];
    return head.op == FOR_ITER && target >= head.target;
  }
  void step(Frame &f, size_t &pc, const Instr &in, int64_t stopAt, std::optional<Outcome> &out);

  // --- Calls.cpp: calls, nn.Modules ---------------------------------------------------------
  VarPtr call(Frame &f, VarPtr callee, std::vector<VarPtr> args, KwArgs kwargs);
  /// `torch.no_grad()`, `enable_grad()` or `set_grad_enabled(b)`: a context manager for
  /// BEFORE_WITH to enter; null for any other call.
  VarPtr gradModeContext(py::handle fn, const std::vector<VarPtr> &args, const KwArgs &kwargs);
  VarPtr callModule(VarPtr module, std::vector<VarPtr> args, KwArgs kwargs, unsigned depth);
  std::optional<std::pair<Lib, std::string>> libraryFunction(py::handle fn);
  /// A call of the numpy or torch function `fn` (named `name` in `lib`), with its out=.
  VarPtr callLibraryFunction(py::handle fn, Lib lib, const std::string &name,
                             std::vector<VarPtr> args, KwArgs kwargs, unsigned depth);
  /// A numpy function that dispatches `__array_function__` (np.average, np.linalg.solve),
  /// inlined from its Python implementation; null for other callables.
  VarPtr callNumpyImplementation(py::handle fn, const std::vector<VarPtr> &args,
                                 const KwArgs &kwargs, unsigned depth);
  py::object callReal(py::handle fn, py::tuple args);

  // --- Builtins.cpp: builtins, pure functions of constants, polyfills, f-strings -------------
  /// A builtin (or operator/math/itertools/functools function) modelled: its value, or null
  /// when it is not one.
  VarPtr callBuiltin(Frame &f, py::handle fn, std::vector<VarPtr> &args, KwArgs &kwargs);
  /// The real object a Var of Python constants stands for (tuples, lists and dicts of them
  /// included), or null.
  py::object asConstant(const VarPtr &v);
  /// A real result of a pure function as a Var: lists and dicts become containers the trace
  /// can change, iterators are drained.
  VarPtr liftConstant(py::handle r);
  /// fn(*args, **kwargs) run for real when every argument is a constant; else null.
  VarPtr callRealOnConstants(py::handle fn, const std::vector<VarPtr> &args, const KwArgs &kwargs);
  VarPtr makeDict(std::vector<VarPtr> &args, KwArgs &kwargs);
  py::object hashableKey(const VarPtr &key);
  /// Whether obj has the attribute, where the tracer can tell without guessing.
  std::optional<bool> hasAttr(const VarPtr &obj, const std::string &name);
  VarPtr convertValue(const VarPtr &v, int conversion);
  VarPtr formatValue(const VarPtr &v, const VarPtr &spec);
  py::object textOf(const VarPtr &v);
  /// str() or repr() of an instance, through the methods its class defines.
  VarPtr instanceText(const VarPtr &v, bool repr);

  // --- Text.cpp: strings formatted from values the graph computes -----------------------------
  /// Whether the host can format `v` once the graph has run: a dynamic scalar, an array, a
  /// Text (outside a captured loop's body).
  bool formattable(const VarPtr &v);
  /// format(conversion(v), spec) as a VK::Text (`conversion` "", "s", "r" or "a"); null where
  /// v is not formattable or the format could raise.
  VarPtr formattedText(const VarPtr &v, const std::string &conversion, const std::string &spec);
  /// `format % args` as a VK::Text where args hold formattable values; else null.
  VarPtr percentText(const VarPtr &format, const VarPtr &args);
  /// The concatenation of literal strings and Texts, at least one a Text; else null.
  VarPtr joinText(const std::vector<VarPtr> &parts);

  // --- Functions.cpp: functions, closures, generators, iteration -----------------------------
  /// Inlines a call of a real Python function (self, when given, goes first).
  VarPtr callFunction(py::handle fn, VarPtr self, std::vector<VarPtr> args, KwArgs kwargs,
                      unsigned depth, const std::string &fnSource);
  Callable realCallable(py::handle fn, const std::string &fnSource);
  Callable madeCallable(const VarPtr &fn);
  /// Binds the arguments as CPython does and runs the function to its return (a generator
  /// function returns its generator, which runs when iterated).
  VarPtr inlineCall(const Callable &c, std::vector<VarPtr> args, KwArgs kwargs, unsigned depth);
  /// MAKE_FUNCTION: 3.11 and 3.12 pop what `flags` names with the code; 3.13 sets each with
  /// SET_FUNCTION_ATTRIBUTE (`setFunctionAttribute`).
  VarPtr makeFunction(Frame &f, VarPtr code, int flags);
  void setFunctionAttribute(const VarPtr &fn, int flag, const VarPtr &value);
  /// iter(v): lists and tuples iterate live, generators and iterators are their own.
  VarPtr getIter(const VarPtr &v);
  /// next(it), or null when it is exhausted.
  VarPtr nextItem(const VarPtr &it);
  /// Every item of an iterable, in order (list(v)).
  std::vector<VarPtr> drain(const VarPtr &v);
  /// The content of the cell in local slot `index` (LOAD_DEREF), or the cell (`forStore`).
  VarPtr cellContents(Frame &f, int index, bool forStore = false);
  /// Inlines dynamir's polyfill `name` (python-bindings/dynamir/_polyfills.py).
  VarPtr callPolyfill(const char *name, std::vector<VarPtr> args, KwArgs kwargs, unsigned depth);
  py::object polyfills();
  /// Records v's state before the trace changes it in place, so that a break restores the
  /// state the host resumes from (the instruction it runs for real starts from there).
  void noteMutation(const VarPtr &v);
  void noteMutation(const std::shared_ptr<GeneratorState> &g);
  void undoMutations();
  /// Puts back what changed since the undo log had these sizes.
  void undoTo(size_t undoSize, size_t generatorSize);
  /// Called before each instruction of the traced frame: what came before it stays.
  void commitMutations();
  std::vector<std::pair<VarPtr, Var>> undoLog;
  std::vector<std::pair<std::shared_ptr<GeneratorState>, GeneratorState>> undoGenerators;
  size_t committedWrites = 0;
  py::object polyfillModule;

  // --- Library.cpp: numpy and torch functions on fake tensors --------------------------------
  VarPtr callTensorOp(Lib lib, const std::string &name, std::vector<VarPtr> args, KwArgs kwargs);
  VarPtr callLibrary(Lib lib, const std::string &name, std::vector<VarPtr> &args, KwArgs &kwargs);
  VarPtr inPlaceMethod(const std::string &name, std::vector<VarPtr> &args, KwArgs &kwargs);

  // --- Numbers.cpp: Python numbers the graph computes ----------------------------------------
  /// A dynamic Python scalar computed as `v` (f64: a float, i64: an int, i1: a bool) from a
  /// and c, whose roots it takes.
  VarPtr scalarVar(Value v, const VarPtr &a, const VarPtr &c = nullptr);
  /// The truth of a one-element tensor as a Python bool the graph computes (bool(t),
  /// torch.allclose).
  VarPtr tensorTruth(const VarPtr &t) {
    VarPtr truth = scalarVar(toPredicate(t), t);
    truth->roots = {kTensorNumber};
    return truth;
  }
  /// The Python number a one-element tensor holds, as the graph computes it: `t.item()`
  /// (`type` empty: a float, int or bool by the tensor's dtype), `float(t)` or `int(t)`
  /// (`type` "float", "int"). Null where Python would not make one of a graph value (a
  /// complex or uint64 tensor, several elements, a dynamic shape): the caller breaks.
  VarPtr tensorNumber(const VarPtr &t, llvm::StringRef type);
  VarPtr scalarArithmetic(int kind, const VarPtr &x, const VarPtr &y);
  /// A comparison of Python numbers the graph computes (a loop's counter, a number read from a
  /// tensor) that the graph can make exactly: a dynamic bool; else null.
  VarPtr numberComparison(int kind, const VarPtr &x, const VarPtr &y);

  // --- Arithmetic.cpp: promotion, operators --------------------------------------------------
  Type promote(Lib lib, Type a, Type other, py::handle scalar);
  Type floatFor(Lib lib, Type t);
  Type integerAccumulator(Lib lib, Type t);
  Type ufuncFloat(Lib lib, Type t);
  Type promoted(Lib lib, const VarPtr &x, const VarPtr &y);
  /// A Python scalar as promotion sees it: by its type alone (weakly), so a dynamic one as a
  /// constant of its type.
  py::object weakScalar(const VarPtr &v);
  /// Whether `v` is a Python int (a constant or a dynamic scalar), not a bool.
  bool isPythonInt(const VarPtr &v);
  /// Whether the Python int `value` is in the range of the signed integer type `element`.
  static bool fitsInteger(py::handle value, Type element);
  Value operandAs(const VarPtr &v, Type element) {
    return v->kind == VK::Tensor || v->kind == VK::Scalar ? castTo(v->value, element)
                                                          : scalarConstant(v->obj, element);
  }
  /// `numpyFunction`: np.power(x, y) and the like, whose fast paths are not the operators'
  /// (`x ** 0.5` is np.sqrt(x) for arrays, np.power(x, 0.5) for float32 and float64).
  VarPtr binary(int kind, VarPtr a, VarPtr b, bool numpyFunction = false);
  /// torch's float16/bfloat16 mul and true division by a scalar, in float32 as torch's CPU
  /// kernels compute them; null for any other operation.
  VarPtr torchScalarProduct(int kind, const VarPtr &x, const VarPtr &y, Type element);
  VarPtr compare(int kind, VarPtr a, VarPtr b);
  /// The dyn comparison `kind` (COMPARE_OP's order: <, <=, ==, !=, >, >=) of a and c.
  Value compareValues(int kind, Value a, Value c);
  /// `~x` of an array: its bitwise not (of bools, their not).
  Value bitwiseNot(Value x);
  VarPtr updateInPlace(int kind, VarPtr x, VarPtr y);
  /// Breaks unless a store into the array or tensor `x` (`what` names it) can be a new value
  /// of x in the trace. The object that changes is x or, for a view, the array it views (its
  /// owner): the caller's object (whose final value the host writes back; it must not share
  /// memory with any other input) or an object the trace made, which one Var holds. Every live
  /// view of the owner must be a true view, taken again after the store. `operands` are what
  /// the new value is computed from (torch refuses a tensor that overlaps x).
  void prepareStore(const VarPtr &x, const std::string &what, ArrayRef<VarPtr> operands = {});
  /// x now holds `v` (after prepareStore): its owner takes the new value, and every live view
  /// of the owner is taken again from it.
  void commitStore(const VarPtr &x, Value v);
  /// The one Var (not a copy) that holds `v`, or null.
  VarPtr holderOf(Value v);
  /// The Vars alive that are views (through slices, reshapes, ...) of `base`.
  std::vector<VarPtr> liveViews(Value base);
  /// Whether a store through the chain of views `view` reaches its base element for element.
  bool writableView(Value view);
  /// The new value of the array the chain of views `view` was taken from, once `view` holds
  /// `updated`.
  Value writeThrough(Value view, Value updated);
  /// The chain of views `view` taken again from `newBase`.
  Value retakeView(Value view, Value newBase);
  /// The caller's object `v` is, by its source (its own, or that of the input it is another
  /// name of: np.asarray(x)); "" for an object the trace made.
  std::string callerSource(const VarPtr &v);
  /// The written inputs' final values appended to `values`, as (source, index) pairs.
  py::list writeBacks(SmallVectorImpl<Value> &values);
  Value toPredicate(VarPtr cond);
  /// A branch's or loop test's value: a dynamic bool as its one-element tensor (a branch on
  /// it is a branch on that tensor), anything else as it is.
  VarPtr branchValue(VarPtr cond) {
    return isDynamicBool(cond) ? tensorVar(cond->value, Lib::Numpy) : cond;
  }

  // --- Attributes.cpp: attributes, subscripts, slices, lists ---------------------------------
  VarPtr getAttr(VarPtr obj, const std::string &name);
  /// A basic index (ints, slices, `...`, None) of a tensor, normalized: the dyn.slice bounds
  /// per dimension, the dimensions integers remove and where None inserts one.
  struct BasicIndex {
    SmallVector<int64_t> starts, stops, steps, squeezed;
    std::vector<int64_t> newAxisAt; // positions in the result, in order
    bool allIntegers = false;       // an element: every dimension indexed by an integer
  };
  BasicIndex basicIndex(const VarPtr &obj, const VarPtr &index);
  VarPtr subscript(VarPtr obj, VarPtr index);
  /// x[mask] with a boolean mask of x's leading static dimensions: the selected elements or rows
  /// in row-major order (dyn.compress), a new array whose first size only the graph knows;
  /// with slices, integers or `...` after the mask (`x[m, 1:]`), those index the result's
  /// other dimensions, as numpy and torch do. Null otherwise.
  VarPtr maskedLoad(const VarPtr &obj, const VarPtr &index);
  /// An advanced index of integer arrays next to one another among slices (see there).
  struct AdvancedIndex {
    BasicIndex slices; // the other parts, with the arrays' dimensions whole
    Value sliced;      // the view through them
    Value merged;      // `sliced` with the arrays' dimensions collapsed into one at `axis`
    Value positions;   // checked indices into that dimension, in the arrays' broadcast shape
    int64_t axis = 0;
  };
  std::optional<AdvancedIndex> advancedIndex(const VarPtr &obj, const VarPtr &index);
  /// `x[..., idx, ...]` through an advanced index: a gather, or null for other indices.
  VarPtr advancedSubscript(const VarPtr &obj, const VarPtr &index);
  /// The indices an index argument of `lib`'s function holds, as an integer tensor: an integer
  /// array (any width and signedness) or an int64 or int32 tensor (a numpy integer scalar too),
  /// a list of ints, or an int (0-d); null for anything else (float indices raise, bool arrays
  /// and torch's uint8 tensors are masks).
  Value integerIndices(const VarPtr &v, Lib lib);
  /// `indices` (any integer type) as i64, with the check that every index is in [-size, size)
  /// (`negative`) or [0, size): at trace time for constant indices, else by a dyn.check at the
  /// end of the trace. `what` names the operation.
  Value checkedIndices(Value indices, int64_t size, bool negative, const std::string &what);
  /// checkedIndices, with negative indices counted from the end: positions in [0, size).
  Value positions(Value indices, int64_t size, bool negative, const std::string &what);
  /// dyn.gather of `x` along `axis` at checked `indices`.
  Value gather(Value x, Value indices, int64_t axis, bool negative, const std::string &what);
  /// Conditions the graph's results rely on (dyn.check), emitted where the trace ends.
  std::vector<std::pair<Value, std::string>> runtimeChecks;
  void emitRuntimeChecks();

  // --- Stores.cpp: stores into arrays and tensors through an index -----------------------------
  void storeSubscript(VarPtr obj, VarPtr index, VarPtr value);
  Value advancedStore(const VarPtr &obj, const VarPtr &index, const VarPtr &value, bool accumulate);
  Value maskedStore(const VarPtr &obj, const VarPtr &mask, Value v, bool accumulate);
  /// `v`, computed from values at the positions `mask` selects, computed at every position of
  /// an array of `shape` (null where it cannot be).
  Value unmasked(Value v, Value mask, ArrayRef<int64_t> shape, unsigned depth = 0);
  Value storedValue(const VarPtr &obj, const VarPtr &value);
  Value broadcastStored(Value v, ArrayRef<int64_t> shape);
  /// Breaks unless torch's `obj[ix] = value` copies between disjoint memory (see there).
  void torchStoreOverlap(const VarPtr &obj, const BasicIndex &ix, const VarPtr &value);

  /// `list`, which `what` is about to change in place: a list the caller can see (a resumed
  /// frame's 3.12 comprehension gets its list from outside) or one changed on one side of a
  /// data-dependent branch is a break.
  VarPtr &mutableList(VarPtr &list, const std::string &what);
  /// Breaks unless the object `v` may change in place (`what` says how): never inside a
  /// data-dependent branch; records its state for the undo log.
  void prepareMutation(const VarPtr &v, const std::string &what);
  /// A slice of constant bounds ([start, stop] or [start, stop, step]).
  VarPtr slice(std::vector<VarPtr> bounds);

  // --- Containers.cpp: lists, tuples, dicts ---------------------------------------------------
  /// A list or dict that `what` is about to change in place: one the caller can see is a
  /// break (the host would have to write it back); inside a data-dependent branch only one
  /// made there may change.
  VarPtr &mutableContainer(VarPtr &c, const std::string &what);
  /// `a is b`, where the tracer can tell.
  std::optional<bool> sameObject(const VarPtr &a, const VarPtr &c);
  /// `a == b` as containers compare items, where it is not data-dependent.
  std::optional<bool> varsEqual(const VarPtr &a, const VarPtr &c);
  VarPtr contains(const VarPtr &container, const VarPtr &item);
  /// bool(v) for a value that is not a tensor, where the tracer knows it.
  std::optional<bool> truthOf(const VarPtr &v);
  int64_t dictIndex(const VarPtr &d, const py::object &key);
  void dictSet(VarPtr d, py::object key, VarPtr value);
  VarPtr dictView(const VarPtr &d, const std::string &name);
  void fillView(const VarPtr &view);
  void refreshViews(const VarPtr &d);
  VarPtr callContainerMethod(VarPtr self, const std::string &name, std::vector<VarPtr> &args,
                             KwArgs &kwargs);
  VarPtr containerItem(const VarPtr &obj, const VarPtr &index);
  void storeContainerItem(VarPtr obj, const VarPtr &index, const VarPtr &value);
  void deleteContainerItem(VarPtr obj, const VarPtr &index);

  // --- Objects.cpp: instances of user-defined classes -----------------------------------------
  /// A class whose instances the tracer models: no metaclass but type/ABCMeta, no builtin base,
  /// made by object.__new__ (not an nn.Module).
  bool isPlainClass(py::handle cls);
  bool computeIsPlainClass(py::handle cls);
  llvm::DenseMap<PyObject *, bool> plainClasses;
  std::vector<py::object> plainClassObjects; // keeps the classes asked about alive
  bool isNamedTupleClass(py::handle cls);
  /// What `cls` or a class of its MRO defines as `name` (inspect.getattr_static), or null.
  py::object classLookup(py::handle cls, const std::string &name);
  /// The class of an instance, a namedtuple, or a real object of a plain class; else null.
  py::object classOf(const VarPtr &v);
  /// `cls(*args, **kwargs)` for a plain class or a namedtuple class; null for other classes.
  VarPtr construct(Frame &f, const VarPtr &clsVar, std::vector<VarPtr> &args, KwArgs &kwargs);
  /// `obj.name` by Python's attribute protocol, for objects classOf knows; else null.
  VarPtr objectAttr(const VarPtr &obj, const std::string &name);
  /// `obj.name = value` on an instance the trace made (a __setattr__ of its own is inlined).
  void setObjectAttr(Frame &f, const VarPtr &obj, const std::string &name, const VarPtr &value);
  void deleteObjectAttr(const VarPtr &obj, const std::string &name);
  void storeInstanceAttr(const VarPtr &obj, const std::string &name, const VarPtr &value);
  /// The class's `name` method inlined on obj, or null when the class does not define it.
  VarPtr callDunder(const VarPtr &obj, const char *name, std::vector<VarPtr> args);
  /// `+x`: numpy's np.positive (a new array), torch's tensor itself, a Python number's own
  /// __pos__ (+True is 1); of bools numpy and torch raise.
  VarPtr positive(const VarPtr &x);
  /// x op y through __op__ / __rop__ (__iop__ first for in-place forms) of instances, or null.
  VarPtr binaryDunder(int kind, const VarPtr &x, const VarPtr &y);
  /// x < y ... through the rich comparisons of instances, or null.
  VarPtr compareDunder(int kind, const VarPtr &x, const VarPtr &y);
  /// super() in frame f (zero-argument form: its __class__ cell and first argument).
  VarPtr makeSuper(Frame &f, const VarPtr &cls, const VarPtr &self);
  VarPtr superAttr(const VarPtr &super, const std::string &name);
  /// `match`'s instructions (MATCH_SEQUENCE, MATCH_MAPPING, GET_LEN, MATCH_KEYS, MATCH_CLASS)
  /// on the values the tracer holds.
  void matchCase(Frame &f, const Instr &in);

  // --- Collections.cpp: sets, OrderedDict, defaultdict, Counter, deque -----------------------
  /// Whether v is of collections' class `name` (v->cls).
  bool isCollection(const VarPtr &v, const char *name);
  /// A Var for a set the trace made (a new real set, changed in place from now on).
  VarPtr makeSet(py::object set);
  void setAdd(const VarPtr &set, const VarPtr &item);
  VarPtr callSetMethod(const VarPtr &self, const std::string &name, std::vector<VarPtr> &args,
                       KwArgs &kwargs);
  /// s | t, s & t, s - t, s ^ t (and in-place) of sets; null for other operands.
  VarPtr setOperator(int kind, const VarPtr &x, const VarPtr &y);
  /// OrderedDict(...), defaultdict(...), Counter(...), deque(...); null for other classes.
  VarPtr constructCollection(py::handle cls, std::vector<VarPtr> &args, KwArgs &kwargs);
  /// d[key] of a key d lacks: a defaultdict's new default, a Counter's 0; else null.
  VarPtr missingKey(const VarPtr &d, const py::object &key);
  void counterUpdate(const VarPtr &c, std::vector<VarPtr> &args, KwArgs &kwargs, int sign);
  void dequeAppend(const VarPtr &d, const VarPtr &item, bool left);
  /// A method only a collections class has, or null (then it behaves as a dict's or list's).
  VarPtr callCollectionMethod(const VarPtr &self, const std::string &name,
                              std::vector<VarPtr> &args, KwArgs &kwargs);

  // --- SideEffects.cpp: changes to objects the caller can see --------------------------------
  void recordSideEffect(const VarPtr &target, const std::string &what);
  /// The Var of the stores into frame f's globals (a dict of the names stored).
  VarPtr globalsVar(Frame &f);
  bool isGlobals(const VarPtr &v);
  /// The value the trace stored into a global or an attribute of a caller's object, or null.
  VarPtr storedGlobal(Frame &f, const std::string &name);
  VarPtr storedAttr(const VarPtr &obj, const std::string &name);
  void storeGlobal(Frame &f, const std::string &name, const VarPtr &value);
  /// STORE_ATTR: an instance the trace made, or a caller's object (replayed by the host).
  void storeAttr(Frame &f, const VarPtr &obj, const std::string &name, const VarPtr &value);
  /// DELETE_ATTR, delattr: the same objects; a caller's object records a NULL Var for the
  /// attribute, which the host replays as delattr.
  void deleteAttr(const VarPtr &obj, const std::string &name);
  std::string unreplayableAttrChange(const VarPtr &obj, const std::string &name,
                                     const VarPtr &value);
  std::string unreplayableClassAttrChange(const VarPtr &cls, const std::string &name,
                                          const VarPtr &value);
  /// A class whose attributes the host can set as the program does: a user's class (a heap
  /// type) whose metaclass is `type`.
  static bool isUserClass(py::handle obj);
  /// What the trace stored into attribute `name` of `cls` or of a class on its MRO, where that
  /// class is where Python finds the attribute; null where the real classes answer.
  VarPtr storedClassAttr(py::handle cls, const std::string &name);
  /// Sets attribute or key `name` of `obj`'s recorded state to `value`.
  void setKey(const VarPtr &obj, const std::string &name, const VarPtr &value);
  void emitDistinctGuards();
  /// The replay of every side effect for a resume plan: (kind, source, keys, value recipes).
  py::list effectRecipes(SmallVectorImpl<Value> &live);
  /// `print(*args, **kwargs)`, recorded for the host to make once the graph has run.
  void recordPrint(std::vector<VarPtr> &args, KwArgs &kwargs);
  /// What print shows of `v` as it is now: numbers and the caller's unchanged objects as
  /// they are, arrays and containers as copies, an instance as its str(); else a break.
  VarPtr printed(const VarPtr &v, int depth);
  /// The prints of a resume plan: (argument recipes, keyword arguments), in order.
  py::list printRecipes(SmallVectorImpl<Value> &live);
  /// Objects the caller can see that the trace changed, in order of their first change, and
  /// the print calls (isPrintCall) in order among them.
  std::vector<VarPtr> sideEffects;
  size_t committedSideEffects = 0;
  llvm::DenseMap<PyObject *, VarPtr> globalsVars;
  /// The traced function's globals, "G" in sources: a function it calls from the same module
  /// reads its globals from there too (one Var per global, not one per path to it).
  py::object tracedGlobals;
  /// Lists, dicts and objects the trace read from the caller, one Var per source (and per
  /// object: `aliased` where two sources reach one), so stores are seen by later reads.
  std::map<std::string, VarPtr> wrappedBySource;
  llvm::DenseMap<PyObject *, VarPtr> wrappedById;

  // --- Loops.cpp: for loops over ranges and while loops on tensors, traced once -------------
  /// At a for loop's first FOR_ITER over a range: traces the body once into a dyn.for and goes
  /// on after the loop (true), or leaves everything as it was, to unroll the loop (false).
  bool captureLoop(Frame &f, size_t &pc, const Instr &in);
  /// At a while loop's first test on the tensor `cond` (popped; `in` jumps to the exit): traces
  /// the body and the second test once into a dyn.while (true), or leaves everything as it was
  /// (false).
  bool captureWhile(Frame &f, size_t &pc, const Instr &in, const VarPtr &cond);
  /// What the two share: the body traced on carried values, the loop's op and the state after.
  bool captureBody(Frame &f, size_t &pc, LoopPlan &plan);
  /// At a test on the tensor `cond` (popped) in the body of a for loop being captured: where
  /// one side is a `break` (`if err < tol: break`), records when the iteration leaves the loop
  /// there and what the variables hold, and goes on with the other side (true).
  bool loopBreak(Frame &f, size_t &pc, const Instr &in, const VarPtr &cond, bool jumpIfTrue);
  LoopExits *loopExits = nullptr; // of the innermost loop being captured, if a for loop
  std::set<std::pair<PyObject *, int64_t>> uncapturedLoops; // (code, FOR_ITER offset)
  std::set<std::pair<PyObject *, int64_t>> peeledLoops;     // captured from the 2nd iteration
  unsigned loopDepth = 0; // loop bodies being traced: their instructions are not committed
  /// What a loop body's block argument stands for: the tensor it starts as, and whether it is
  /// that object in every iteration (a carried Var) or only in the first (a variable the body
  /// rebinds). Its layout is that of its initial value.
  struct LoopArg {
    Value init;
    bool sameObject;
  };
  llvm::DenseMap<Value, LoopArg> loopArgs;

  // --- Branches.cpp: data-dependent branches -------------------------------------------------
  /// The truth value of a tensor made of constants alone (numpy's own checks of constant
  /// arguments, `if np.any(pad_width < 0)`), folded as canonicalization would: a branch on it
  /// is no branch on data. Null when it does not fold.
  std::optional<bool> constantTruth(const VarPtr &cond);
  /// The real array or tensor a tensor made of constants alone stands for (what item(),
  /// tolist(), float() of it read), or a null object.
  py::object constantObject(const VarPtr &v);
  std::optional<Outcome> branchOnTensor(Frame &f, size_t &pc, VarPtr cond, bool jumpIfTrue,
                                        int64_t target, int64_t stopAt);
  /// What the two sides of a data-dependent branch hand over where they rejoin: each side's
  /// values for the dyn.if's results (fall-through side first), the positions of those that
  /// are arrays the side made and those the trace made before the branch (the dyn.yield's
  /// `fresh` and `traced`), and the joined Vars that stand for the results until the op
  /// exists. Vars made in a side have serials above `madeAfter`; `returnsAlone` where the
  /// sides are the traced frame's two returns of one tensor each, and the frame changed no
  /// object the caller sees (nothing else can hold what it returns).
  struct BranchJoin {
    uint64_t madeAfter = 0;
    bool returnsAlone = false;
    SmallVector<Value> values[2];
    SmallVector<int64_t> fresh[2], traced[2];
    std::vector<std::pair<VarPtr, size_t>> fill;
  };
  VarPtr merge(const VarPtr &fall, const VarPtr &jump, BranchJoin &join);
  /// Text (or a str) from one side (0: fall, 1: jump) of a branch, with the numbers it holds
  /// yielded by the dyn.if; null where it holds an array.
  VarPtr yieldedText(const VarPtr &v, BranchJoin &join, int side);

  // --- Resume.cpp: resume plans --------------------------------------------------------------
  py::object resumePlan(const Code &code, const Frame &frame, const Break &brk,
                        SmallVectorImpl<Value> &live);
  py::object rebuildRecipe(const VarPtr &v, SmallVectorImpl<Value> &live);
  py::object rebuildValue(const VarPtr &v, SmallVectorImpl<Value> &live);
  /// A view of one of the caller's arrays that `v` is (x[1:], x.T): which array, and the view's
  /// offset and strides in elements from its first one. Eager code's shares that array's
  /// memory, so the host takes it again (`_v` in a result, a `strided` recipe at a break)
  /// rather than hand out a copy the graph made.
  struct CallerView {
    std::string source;
    int64_t offset;
    std::vector<int64_t> shape, strides;
    bool readOnly; // numpy's broadcast_to and diagonal
  };
  std::optional<CallerView> callerView(const VarPtr &v);
  /// Appends what the graph outputs for the tensor `v` to `results`; the host's expression for
  /// it (`%N`, `%tN`, `%sN`, transposed back by `_p` where eager code lays it out so).
  std::string handOut(const VarPtr &v, SmallVectorImpl<Value> &results);
  std::string resultStructure(const VarPtr &out, SmallVectorImpl<Value> &results,
                              py::list &constants);
  llvm::DenseMap<const Var *, int> rebuiltVars;
  llvm::DenseSet<Value> rebuiltValues;

  // --- State ---------------------------------------------------------------------------------
  MLIRContext *ctx;
  TraceOptions options;
  OpBuilder b;
  ModuleOp module;
  func::FuncOp func;
  Block *entry = nullptr;
  py::object numpy, torch, torchNN;
  std::set<std::string> guardKeys;
  std::map<std::string, VarPtr> inputsBySource;
  /// How many tensor Vars were made for each value: two Vars of one value may be one object
  /// in the program (`np.asarray(y)`), so neither can be updated in place on its own.
  llvm::DenseMap<Value, unsigned> varsHolding;
  /// Forgets what the maps keyed by Value hold for the values of `block`, which is being
  /// discarded (a loop or branch not captured after all): MLIR may give a later op the same
  /// address, which must not inherit them.
  void forgetValues(Block &block);
  /// Every Var made for a tensor (holderOf), and for a view (liveViews), while something
  /// holds it.
  std::vector<std::weak_ptr<Var>> tensorVars, viewVars;
  /// The joins of data-dependent branches that may be an array from before the branch or a
  /// view of one (Var::eitherBases), while something holds them: a store into one of those
  /// arrays would miss the join.
  std::vector<std::weak_ptr<Var>> eitherJoins;
  /// numpy's x.real and x.imag (Var::partOf), while something holds them.
  std::vector<std::weak_ptr<Var>> complexParts;
  /// numpy's read-only views (np.diagonal): a store through one raises.
  llvm::DenseSet<Operation *> readOnlyViews;
  /// The caller's arrays and tensors by source, and those the program stores into, in the
  /// order of their first store: the host writes their final values back.
  std::map<std::string, py::object> inputObjects;
  std::vector<VarPtr> writtenInputs;
  /// Autograd's modes that the trace's `with torch.no_grad()`, `torch.enable_grad()` and
  /// `torch.set_grad_enabled(b)` blocks set, innermost last (none: the caller's mode, which
  /// only a guard may take); the ops made while one disables or enables autograd; the inputs
  /// that require grad, each with whether it records gradients in the caller's mode.
  llvm::SmallVector<bool> gradModes;
  llvm::DenseSet<Operation *> noGradOps, gradOps;
  std::vector<std::pair<Value, bool>> gradInputs;
  /// Sees every op the tracer builds: checks a dyn op on complex numbers against its
  /// definition (one that is not defined on them, a sine of complex numbers, breaks with the
  /// verifier's reason instead of reaching a lowering that cannot build it), derives its
  /// dynamic sizes (Symbols.cpp), and records the grad mode it was made in.
  struct OpListener : OpBuilder::Listener {
    Tracer &t;
    explicit OpListener(Tracer &t) : t(t) {}
    void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
      t.checkDefinition(op);
      t.deriveSymbols(op);
      if (!t.gradModes.empty())
        (t.gradModes.back() ? t.gradOps : t.noGradOps).insert(op);
    }
  } opListener{*this};
  // --- Windows.cpp: indexing by a captured loop's variable ------------------------------------
  /// Each captured loop variable's first and last value, by its block argument.
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> loopRanges;
  /// The affine form of an int (a constant, or a Scalar computed from loop variables).
  std::optional<Var::Affine> affineOf(const VarPtr &v);
  /// The least and greatest value of `a` over the loops' ranges.
  std::pair<int64_t, int64_t> rangeOf(const Var::Affine &a);
  /// `a` computed in the graph (a 0-d i64 tensor).
  Value affineValue(const Var::Affine &a);
  /// `x + y`, `x - y`, `x * k` of ints where one is affine in loop variables: an affine Scalar;
  /// null for anything else.
  VarPtr affineArithmetic(int kind, const VarPtr &x, const VarPtr &y);
  /// A slice with a bound affine in loop variables (BUILD_SLICE, BINARY_SLICE).
  VarPtr loopSlice(std::vector<VarPtr> bounds);
  /// Whether an index has a part affine in loop variables (an int or a slice bound).
  bool indexesByLoop(const VarPtr &index);
  /// A basic index with such parts: the box's offsets, sizes (kDynamic where the next of
  /// `dynamicSizes` gives it) and each size's symbol, and the dimensions an int removes.
  struct Window {
    SmallVector<Value> offsets, dynamicSizes;
    SmallVector<int64_t> sizes, symbols, squeezed;
  };
  Window windowIndex(const VarPtr &obj, const VarPtr &index);
  VarPtr windowSubscript(const VarPtr &obj, const VarPtr &index);
  void windowStore(const VarPtr &obj, const VarPtr &index, const VarPtr &value);
  /// The symbol of each box size that changes with the loops, by its affine form.
  std::map<Var::Affine, int64_t> loopSizeSymbols;

  // --- Symbols.cpp: the sizes of dynamic=True ------------------------------------------------
  /// The symbols of a value's dimensions (-1 for a static one), each a root: equal symbols are
  /// sizes the trace relies on being equal. Symbols are either an input's size (guarded: at
  /// least 2, and equal to the sizes of its root's other inputs), known by its size in this
  /// trace, a size the graph computes (size -1), or one that may also be 0 or 1 (kAnySize): a
  /// box's size that changes with a captured loop's variable (Windows.cpp), a masked load's.
  static constexpr int64_t kAnySize = -2;
  int64_t newSymbol(int64_t size);
  int64_t findSymbol(int64_t s);
  /// Fresh guarded symbols for the dynamic dimensions of an input of `type`, whose sizes in
  /// this trace are `sizes`.
  SmallVector<int64_t> inputSymbols(RankedTensorType type, ArrayRef<int64_t> sizes);
  void setSymbols(Value v, ArrayRef<int64_t> symbols);
  /// The roots for each dimension of `v`; none where a dynamic dimension has no symbol.
  std::optional<SmallVector<int64_t>> symbolsOfValue(Value v);
  bool sameSymbols(Value a, Value b);
  /// Whether dimension `dim` of `v` may be 1 when the graph runs: static 1, or a dynamic size
  /// that is not an input's (guarded at least 2), such as a masked load's count.
  bool mayBeOne(Value v, int64_t dim);
  /// The symbols of the results of the dyn op `op` from its operands', by a rule of its kind;
  /// breaks, erasing it, where there is none or it would need sizes the guards cannot relate.
  void deriveSymbols(Operation *op);
  /// Writes each tensor guard's symbols as their roots, numbered from 0.
  void finishSymbols();
  llvm::DenseMap<Value, SmallVector<int64_t>> symbolsOf;
  SmallVector<int64_t> symbolParent;
  SmallVector<int64_t> symbolSize;

  /// Breaks, erasing `op`, if the dyn op `op` (one without regions, whose contents come later)
  /// has complex operands or results and does not verify. Only those: the tracer makes other
  /// ops that are invalid for a moment and folded at once (an arange of step 0 for a linspace
  /// of one point), and complex elements are what the rest of the tracer's int-or-float code
  /// paths do not know.
  void checkDefinition(Operation *op);
  /// An eager-only frame if an op records gradients eagerly: it reads an input that requires
  /// grad where autograd is on (the caller's mode outside the trace's blocks, guarded).
  void gradInputsRecordNothing();
  llvm::StringSet<> logs_;
  /// The code being interpreted; shared so that a break raised in an inlined frame can still
  /// name its file after that frame is gone.
  std::shared_ptr<const Code> current;
  Instr currentInstr;
  /// Where ops and breaks are located: the current instruction, or inside a polyfill the
  /// user's call that reached it.
  std::shared_ptr<const Code> locCode;
  Instr locInstr;
  void setInstruction(const Frame &f, const Instr &in) {
    current = f.code;
    currentInstr = in;
    if (!f.polyfill) {
      locCode = f.code;
      locInstr = in;
    }
  }
  /// The current instruction, saved around a nested frame that returns normally (one that
  /// breaks leaves it pointing at where it broke).
  struct SavedInstruction {
    std::shared_ptr<const Code> current, locCode;
    Instr currentInstr, locInstr;
    Frame *frame;
    unsigned depth;
  };
  SavedInstruction saveInstruction() const {
    return {current, locCode, currentInstr, locInstr, currentFrame, frameDepth};
  }
  void restoreInstruction(const SavedInstruction &s) {
    current = s.current;
    locCode = s.locCode;
    currentInstr = s.currentInstr;
    locInstr = s.locInstr;
    currentFrame = s.frame;
    frameDepth = s.depth;
  }
  int64_t kernelCalls = 0;
  unsigned branchDepth = 0;
  int64_t branchStart = -1;     // offset of the innermost data-dependent branch
  uint64_t branchSerial = 0;    // Vars made before the innermost branch have serials up to it
  Instr topInstr;               // the traced frame's current instruction
  std::vector<VarPtr> topStack; // its stack before that instruction
  /// The trace's state at a point, to go back to (a loop that is not captured after all).
  struct Snapshot {
    std::vector<VarPtr> locals, stack;
    size_t undo, generators, writes, effects;
    OpBuilder::InsertPoint ip;
    SavedInstruction instruction;
    Instr topInstr;
    std::vector<VarPtr> topStack;
  };
  Snapshot snapshot(const Frame &f) {
    return {f.locals,
            f.stack,
            undoLog.size(),
            undoGenerators.size(),
            writtenInputs.size(),
            sideEffects.size(),
            b.saveInsertionPoint(),
            saveInstruction(),
            topInstr,
            topStack};
  }
  void restore(Frame &f, const Snapshot &s);
  size_t steps = 0;
  unsigned frameDepth = 0;       // the inlining depth of the instruction being interpreted
  Frame *currentFrame = nullptr; // the frame of that instruction
  static constexpr size_t kMaxSteps = 200000;
};

} // namespace dynamir::frontend

#endif // DYNAMIR_LIB_FRONTEND_TRACERIMPL_H
