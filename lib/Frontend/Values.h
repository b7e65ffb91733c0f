//===- Values.h - The tracer's abstract values and breaks -------*- C++ -*-===//
//
// What the symbolic interpreter puts on its abstract stack (`Var`, one kind per `VK`) and how
// a trace stops (`Break`, `EagerOnly`). Private to lib/Frontend.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_LIB_FRONTEND_VALUES_H
#define DYNAMIR_LIB_FRONTEND_VALUES_H

#include "dynamir/Dialect/Dyn/DynOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <pybind11/pybind11.h>
// Every file of the tracer sees the same casters (std::vector <-> list, ...): a cast that a
// file without them compiles fails only at run time.
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dynamir::frontend {

namespace py = pybind11;
using namespace mlir;

//===----------------------------------------------------------------------===//
// Abstract values
//===----------------------------------------------------------------------===//

enum class Lib { Numpy, Torch };

enum class VK {
  Tensor,    // a fake tensor: `value` carries dtype and shape
  Const,     // a Python constant (number, string, None, dtype, ...) in `obj`
  Tuple,     // `items`
  List,      // `items` (mutable outside data-dependent branches)
  Dict,      // `keys` (Python constants) with values in `items`
  Object,    // a module, class, builtin or library function in `obj`
  Function,  // a Python function, inlined when called: a real one in `obj`, or one the trace
             // made (MAKE_FUNCTION, a polyfill's closure) in `made`
  NNModule,  // an nn.Module instance in `obj`
  Method,    // `name` bound to items[0] (tensor, list or nn.Module)
  Null,      // the NULL LOAD_GLOBAL/LOAD_METHOD push
  Iterator,  // over `items`, next at `iterPos`
  Slice,     // items: start, stop, step (Const or None)
  Cell,      // a closure cell: items[0] is its content, or null while it is empty
  Generator, // a generator object the trace made: its suspended frame in `generator`
  Instance,  // an object of a plain Python class the trace made: `cls`, attributes by name in
             // `keys` (str) with values in `items`
  Set,       // a set of Python constants the trace made: a real set in `obj`
  Scalar,    // a Python float or int whose value is not a constant of the trace (a dynamic
             // scalar): its type in `obj`, its value the 0-d tensor `value` (f64 or i64)
  LoopSlice, // a slice with a bound computed from captured loops' variables (`x[:i]` in a
             // loop, Windows.cpp): items start, stop, step (Const or such a Scalar); only
             // arrays and tensors take it, anything else breaks
  Text,      // a str the host formats once the graph has run (Text.cpp): the concatenation of
             // `items`, each a literal (a Const str, `keys` None) or a value formatted as its
             // `keys` say ((conversion, spec), ('%', template) of a tuple, or ('?',) of a
             // tuple (taken, a, c): a branch's join of two strings)
};

struct Var;
using VarPtr = std::shared_ptr<Var>;
struct GeneratorState; // TracerImpl.h

/// A function the trace made (MAKE_FUNCTION): what CPython's function object would hold.
struct MadeFunction {
  py::object code;
  py::dict globals;
  std::string globalsSource; // the sources of its globals, as in the frame that made it
  std::vector<VarPtr> defaults;
  std::vector<std::pair<std::string, VarPtr>> kwDefaults;
  std::vector<VarPtr> closure; // Cell Vars
  std::string qualname;
};

/// A number that orders Vars by creation: a data-dependent branch lets only objects made inside
/// it change (Tracer::prepareMutation).
inline uint64_t nextVarSerial() {
  static uint64_t counter = 0;
  return ++counter;
}

struct Var {
  VK kind;
  uint64_t serial = nextVarSerial();
  Value value;
  Lib lib = Lib::Numpy;
  py::object obj;
  std::vector<VarPtr> items;
  std::vector<py::object> keys;
  std::string name;
  std::string source;
  size_t iterPos = 0;
  /// A numpy 0-d result that numpy hands out as a scalar (np.float64), not a 0-d array: what
  /// ufuncs, reductions and integer indexing return.
  bool scalar = false;
  /// A tensor that is an object of its own although it may hold the same SSA value as another
  /// Var (`y = x.copy()`): the host must never hand out the other object for it.
  bool copy = false;
  /// A tuple whose Python type is a structseq such as torch.return_types.max, by import path.
  std::string structType;
  /// dict.keys()/values()/items() (`name`) of this dict: a live view, not a snapshot. The
  /// trace never mutates a dict in place (that is a graph break), so the items are exact
  /// while tracing; after a break the host rebuilds the real view of the real dict.
  VarPtr viewOf;
  /// The live views of this dict (dict.keys() ...), refreshed when it changes.
  std::vector<std::weak_ptr<Var>> views;
  /// The type of the caller's object a tensor input was read from.
  py::object inputType;
  /// The join of a data-dependent branch where one side is the caller's object or a view:
  /// at run time it is one object or another, which no rebuild recipe can say.
  bool eitherObject = false;
  /// Such a join's arrays it may be (or be a view of), from before the branch.
  SmallVector<Value, 2> eitherBases;
  /// numpy's x.real or x.imag (the array `partOf` is x's value), which is a view of x's
  /// memory of a kind the trace computes as a new array: a store into it, or into x while it
  /// lives, is a break.
  Value partOf;
  /// The caller's object that the trace also reached through another source: one Var, so
  /// changing it is a break (the host could not tell which source to replay on).
  bool aliased = false;
  /// A function the trace made (VK::Function without `obj`).
  std::shared_ptr<MadeFunction> made;
  /// A generator the trace made (VK::Generator).
  std::shared_ptr<GeneratorState> generator;
  /// The class of a VK::Instance, a namedtuple (a Tuple), an OrderedDict, defaultdict or
  /// Counter (a Dict) or a deque (a List); where the trace read it from.
  py::object cls;
  std::string clsSource;
  /// A defaultdict's default_factory; a deque's maxlen (a constant).
  VarPtr extra;
  /// A Scalar: the sources of the dynamic inputs its value is computed from.
  std::vector<std::string> roots;
  /// A Scalar int that is `offset + sum(coefficient * variable)` of captured loops' variables
  /// (each the block argument of its dyn.for's body), as Python computes it: `i`, `i + 1`,
  /// `n - 1 - i` (Windows.cpp).
  struct Affine {
    int64_t offset = 0;
    SmallVector<std::pair<Value, int64_t>, 2> terms;
    bool operator<(const Affine &o) const {
      auto key = [](const Affine &a) {
        SmallVector<std::pair<void *, int64_t>> k;
        for (auto [v, c] : a.terms)
          k.emplace_back(v.getAsOpaquePointer(), c);
        return std::make_pair(a.offset, k);
      };
      return key(*this) < key(o);
    }
  };
  std::optional<Affine> affine;
  /// An object a polyfill made in place of a builtin one (the iterator `enumerate` returns is
  /// a generator of ours): its Python type is not what eager code would see, so asking for it
  /// is a break.
  bool opaqueType = false;
  /// An exception the trace raised and a handler caught (a VK::Object): each call raises its
  /// own, so the one the trace made is never handed out (returned, stored where the caller
  /// sees it).
  bool raised = false;
};

inline VarPtr makeVar(VK kind) {
  auto v = std::make_shared<Var>();
  v->kind = kind;
  return v;
}

inline VarPtr constVar(py::object obj, std::string source = "") {
  VarPtr v = makeVar(VK::Const);
  v->obj = std::move(obj);
  v->source = std::move(source);
  return v;
}

/// The bytes of one element of `element` in numpy and torch (a bool is a byte).
inline int64_t itemBytes(Type element) {
  if (auto complex = dyn_cast<ComplexType>(element))
    return 2 * itemBytes(complex.getElementType());
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

/// Ops whose result shares memory with their operand in numpy and torch (a view): a store
/// through one is seen through the other.
inline bool isView(Operation *op) {
  return isa_and_present<dyn::ReshapeOp, dyn::TransposeOp, dyn::BroadcastToOp, dyn::ExpandDimsOp,
                         dyn::SqueezeOp, dyn::SliceOp, dyn::WindowOp>(op);
}

/// The strides of `oldShape` (with `oldStrides`) viewed as `newShape` by torch's view, or none
/// where torch raises (the view would need a copy).
std::optional<llvm::SmallVector<int64_t>> viewStrides(llvm::ArrayRef<int64_t> oldShape,
                                                      llvm::ArrayRef<int64_t> oldStrides,
                                                      llvm::ArrayRef<int64_t> newShape);

/// The array a chain of views of `v` was taken from (v itself when it is no view).
inline Value viewBase(Value v) {
  while (isView(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

/// Whether `v` may be an array of the caller's on the host: an argument, a view of one, or a
/// result of a branch or loop (the host's branch hands back each side's own object).
inline bool mayBeCallersArray(Value v) {
  if (isa<BlockArgument>(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (isView(def))
    return mayBeCallersArray(def->getOperand(0));
  return isa<dyn::IfOp, dyn::ForOp, dyn::WhileOp>(def);
}

//===----------------------------------------------------------------------===//
// Breaks
//===----------------------------------------------------------------------===//

/// Thrown when the trace cannot continue; becomes a dyn.graph_break.
struct Break {
  dyn::BreakKind kind;
  std::string reason;
  /// Set for a data-dependent branch that could not be kept: its predicate and the offsets
  /// the host resumes at for true and false.
  Value predicate;
  std::vector<int64_t> resume;
  /// The inlining depth of the frame the break happened in (0: the traced frame).
  int depth = -1;
};

[[noreturn]] inline void breakTrace(dyn::BreakKind kind, std::string reason) {
  throw Break{kind, std::move(reason), Value(), {}};
}

/// A Python exception an instruction raises where the trace knows it does (a dict's missing
/// key, a division of constants by zero, next() of an exhausted iterator): the frame's handler
/// takes it where a try block covers the instruction (Tracer::runFrame), else it is a break
/// with `reason` and the instruction raises for real.
struct PythonRaise {
  py::object exception;
  std::string reason;
};

/// A new exception of a builtin class (KeyError(key); StopIteration() for None).
inline py::object builtinException(const char *type, py::handle argument) {
  py::object cls = py::module_::import("builtins").attr(type);
  return argument.is_none() ? cls() : cls(argument);
}

/// A break for a Python construct the tracer does not model.
[[noreturn]] inline void unsupported(const std::string &what) {
  breakTrace(dyn::BreakKind::unsupported_call, what);
}

/// Thrown for frames that can never be traced: the function runs eagerly.
struct EagerOnly {
  std::string reason;
};

/// Thrown where the trace needs the value of a dynamic scalar (a branch on it, a shape, an
/// index, Python arithmetic that could overflow): the trace starts again with these inputs
/// as constants, guarded by value.
struct Specialize {
  std::vector<std::string> sources;
};

/// The root of a dynamic scalar computed from a captured loop's variable (Loops.cpp).
inline const char *const kLoopVariable = "<loop variable>";
/// The root of a Python number the graph reads from a tensor: `t.item()`, `float(t)`, `int(t)`,
/// `t.tolist()`, a bool (`bool(t)`, `np.allclose`) and what Python computes from them.
inline const char *const kTensorNumber = "<number read from a tensor>";
/// The root of a Python int a captured while loop steps by constants (`n += 1`, Loops.cpp):
/// the graph knows its value, after as many iterations as the loop's test decides.
inline const char *const kLoopCounter = "<while loop's counter>";
inline bool isLoopCounter(const VarPtr &v) {
  return v && v->kind == VK::Scalar && llvm::is_contained(v->roots, std::string(kLoopCounter));
}

/// A Python number the graph reads from a tensor (`t.item()`, `float(t)`, `bool(t)`) or
/// computes from one.
inline bool isTensorNumber(const VarPtr &v) {
  return v && v->kind == VK::Scalar && llvm::is_contained(v->roots, std::string(kTensorNumber));
}

/// The `name` of a print call among the side effects (Tracer::recordPrint): a Tuple of what it
/// prints, with its keyword arguments in `obj` (a dict).
inline const char *const kPrintCall = "<print>";
inline bool isPrintCall(const VarPtr &v) { return v->kind == VK::Tuple && v->name == kPrintCall; }

/// A Var whose value the graph computes: a tensor or a dynamic scalar.
inline bool isValueVar(const VarPtr &v) {
  return v && (v->kind == VK::Tensor || v->kind == VK::Scalar);
}

/// A Python bool the graph computes (from a tensor): branches and `not` take it as they take
/// a tensor, the frame's result and the host a bool; anything else needs its value.
inline bool isDynamicBool(const VarPtr &v) {
  return v && v->kind == VK::Scalar &&
         cast<RankedTensorType>(v->value.getType()).getElementType().isInteger(1);
}

/// Where the trace needs the value of a captured loop's variable: an error of the tracer that
/// becomes a graph break, which makes the capture fail (the loop then unrolls).
struct LoopVariableNeeded : std::runtime_error {
  LoopVariableNeeded() : std::runtime_error("the value of a loop's variable") {}
};

/// The constant a Var must be here; a dynamic scalar is specialized instead.
inline void needConstant(const VarPtr &v) {
  if (v && v->kind == VK::Text)
    breakTrace(dyn::BreakKind::data_dependent_value,
               "the characters of a str formatted from values the graph computes are needed "
               "on the host");
  if (!v || v->kind != VK::Scalar)
    return;
  for (const char *root : {kTensorNumber, kLoopCounter})
    if (llvm::is_contained(v->roots, std::string(root)))
      breakTrace(dyn::BreakKind::data_dependent_value,
                 "the value of a number the graph computes (" + std::string(root) +
                     ") is needed on the host");
  if (v->roots.empty() || llvm::is_contained(v->roots, std::string(kLoopVariable)))
    throw LoopVariableNeeded();
  throw Specialize{v->roots};
}

/// Keyword arguments of a call, in the order they were passed.
using KwArgs = std::vector<std::pair<std::string, VarPtr>>;

} // namespace dynamir::frontend

#endif // DYNAMIR_LIB_FRONTEND_VALUES_H
