//===- Library.h - numpy and torch functions on fake tensors ---*- C++ -*-===//
//
// A call of a numpy, torch or torch.nn.functional function (np.sin, torch.max, F.gelu) or of an
// array or tensor method (x.sum(), t.view(...)) is modelled by its name: Tracer::callLibrary
// (Library.cpp) looks the name up in one table, merged from the tables of the family files,
// and runs its handler, which emits dyn ops or breaks. A name no table lists is a break that
// names the function.
//
//   LibraryElementwise.cpp   functions of one float argument (those the dyn ops declare), abs,
//                            negation, relu; the binary functions (a table of Python's
//                            operators, with torch's alpha and rounding_mode), maximum,
//                            minimum, where; casts and copies
//   LibraryMath.cpp          elementwise functions of several ops: sign, isnan/isinf/isfinite,
//                            isclose, allclose, logical_*, fmod, hypot, arctan2, outer, cross,
//                            lerp, addcmul, addcdiv
//   LibraryActivations.cpp   torch.nn.functional's activations (leaky_relu, elu, selu,
//                            softplus, hardtanh, relu6, hardsigmoid, hardswish, mish)
//   LibraryReductions.cpp    sum, mean, prod (with dtype), max, min, argmax, ..., any, all,
//                            count_nonzero, aminmax, ptp, logsumexp, norm, softmax
//   LibraryShapes.cpp        size, reshape/view, transpose/permute, expand_dims, squeeze, concat
//   LibraryRearrange.cpp     flip, roll, swapaxes/moveaxis, unflatten, repeat/tile, the stacks
//                            (hstack, vstack, dstack, column_stack), diagonal and diag
//   LibraryConstructors.cpp  zeros, ones, full, empty (and their *_like and new_* forms), arange,
//                            linspace, eye, array/asarray/tensor of constants, one_hot
//   LibraryPooling.cpp       avg/max pooling whose windows tile the input (by a reshape)
//   Decompositions.cpp       functions made of other calls (var, std, gelu, silu, layer_norm,
//                            clip, square, stack), linear and dropout
//   LibraryScientific.cpp    numpy functions of numerical kernels made of other calls (diff,
//                            vdot, meshgrid, cov, corrcoef, einsum) and numpy scalar types
//   LibraryIndexing.cpp      take, index_select, embedding, gather, take_along_axis: gathers
//                            at integer indices; nonzero, argwhere, masked_select: positions
//                            or elements of a mask; unravel_index
//   LibraryLinalg.cpp        linalg.cholesky and linalg.solve (LAPACK)
//   LibrarySorting.cpp       sort, argsort, msort, topk, median, quantile, percentile
//                            (dyn.sort)
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_LIB_FRONTEND_LIBRARY_H
#define DYNAMIR_LIB_FRONTEND_LIBRARY_H

#include "TracerImpl.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace dynamir::frontend {

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

/// The argument passed by one of the keyword `names` (taken out of `kwargs`), else the
/// positional one at `position`, else null.
VarPtr takeArg(std::vector<VarPtr> &args, KwArgs &kwargs, size_t position,
               llvm::ArrayRef<const char *> names);

/// A Python int argument; anything else is a break.
int64_t intOf(const VarPtr &v);

/// An argument that was not passed or is None.
bool isNone(const VarPtr &v);

/// The Python constant an argument must be (a fill value, a flag); anything else runs for real.
py::handle constant(const VarPtr &v, const std::string &what);

/// A Python number as a 0-d constant of `element`, converted as numpy converts a number it
/// stores into an array of that dtype (an array of it cast unsafely: 1.7 into ints is 1, -1
/// into bools is True): np.pad's constant, a reduction's initial value.
mlir::Value numpyConverted(Tracer &t, py::handle number, mlir::Type element);

/// A device argument (a string or a torch.device, maybe made by the trace): whether it names
/// the CPU; anything else is a break.
bool isCpuDevice(Tracer &t, const VarPtr &v);

/// A tuple or list of arrays passed to `name` (concatenate, stack).
VarPtr sequenceArg(const VarPtr &v, const std::string &name);

/// An int or a tuple/list of ints as normalized dimensions of a rank-`rank` tensor.
SmallVector<int64_t> dimsOf(const VarPtr &v, int64_t rank);

/// One dimension (an int) of a rank-`rank` tensor, normalized.
int64_t singleDim(const VarPtr &v, int64_t rank);

/// A tuple of ints as the frame would build it (what reshape and permute read).
VarPtr intTuple(llvm::ArrayRef<int64_t> ints);

/// The ints of a tuple or list argument (built in the frame, or a constant), or nullopt for
/// anything else.
std::optional<SmallVector<int64_t>> intSequence(const VarPtr &v);

/// An int or a pair of ints (kernel_size=2, stride=(2, 3)) of 2-D convolution and pooling;
/// `fallback` for None or an empty sequence.
std::pair<int64_t, int64_t> intPair(const VarPtr &v, std::pair<int64_t, int64_t> fallback);

/// An optional Python bool argument (keepdims, equal_nan): false when not passed.
bool flagOf(const VarPtr &v, const std::string &what);

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

/// One call of a library function, as its handler sees it.
struct LibraryCall {
  Tracer &t;
  Lib lib;
  const std::string &name;
  /// The positional arguments; for a method, the array or tensor is the first.
  std::vector<VarPtr> &args;
  /// The keyword arguments: a handler takes out those it models (`take`); one left over is a
  /// break (Tracer::callTensorOp).
  KwArgs &kwargs;
  /// Where the call is in the traced program: every op the handler creates gets it.
  Location loc;

  /// Positional argument `i`, which must be an array or tensor.
  VarPtr tensorArg(size_t i) const;
  /// The argument passed as one of the keywords `names`, else at `position`, else null.
  VarPtr take(size_t position, llvm::ArrayRef<const char *> names) const {
    return takeArg(args, kwargs, position, names);
  }
  /// An array or tensor of the call's library.
  VarPtr result(Value v) const { return t.tensorVar(v, lib); }
  /// What a ufunc or reduction returns: a numpy scalar when 0-d.
  VarPtr ufunc(Value v) const { return t.ufuncResult(v, lib); }
};

/// The static shape of x; a dynamic one (dynamic=True) is a break naming the call. Sizes a
/// handler computes with (slice bounds, counts, loop bounds) must come from here, or be checked
/// with ShapedType::isDynamic: a dynamic size reads as a large negative number.
llvm::ArrayRef<int64_t> staticShape(LibraryCall &c, mlir::Value x);

/// x[start:stop] along `dim` (0 <= start <= stop <= size) of a static-shaped x; a dynamic shape
/// is a break (LibraryRearrange.cpp).
mlir::Value rangeOf(LibraryCall &c, mlir::Value x, int64_t dim, int64_t start, int64_t stop);

/// A copy of x as a new object: a value of its own, a cast to the same dtype that folds away,
/// so that a view of the copy is no view of x (a store through it stays out of x). Its layout
/// is the call's (Tracer::resultLayout: row-major for contiguous(), x's order for clone and
/// np.copy).
VarPtr copyOf(Tracer &t, mlir::Location loc, const VarPtr &x);

/// numpy's x.real (`imaginary` false) or x.imag: of a complex x its part, computed as a new
/// array that shares x's memory in numpy (Var::partOf: a store into either breaks); of a
/// real x, x itself and read-only zeros.
VarPtr complexPart(Tracer &t, mlir::Location loc, const VarPtr &x, bool imaginary);

/// Emits the ops of one call and returns its value, or breaks; returns null when the function
/// is not modelled in this form (torch.size of a numpy array, np.add with three arguments),
/// which is then a break naming the function.
/// The position along dimension `dim` of each element of an array of static `shape`, int64
/// (np.indices(shape)[dim]): an arange broadcast, which fusion computes in place.
mlir::Value positionsAlong(Tracer &t, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                           int64_t dim);

/// np.nonzero(a) and the functions of its family (LibraryIndexing.cpp), which np.where(c) and
/// torch.where(c) are.
VarPtr nonzero(LibraryCall &c);

/// np.mgrid[index] (`sparse`: np.ogrid[index]) of constant slices; null where not modelled.
VarPtr indexGrid(Tracer &t, bool sparse, const VarPtr &index);

/// np.add.reduce(a, axis), np.multiply.outer(a, b), np.add.accumulate(a): a numpy ufunc's
/// method as the function it amounts to; null for a method or ufunc not modelled.
VarPtr ufuncMethod(Tracer &t, py::handle ufunc, const std::string &method, std::vector<VarPtr> args,
                   KwArgs kwargs);

using LibraryHandler = VarPtr (*)(LibraryCall &c);

struct LibraryFunction {
  llvm::StringRef name;
  LibraryHandler handler;
};

/// The functions of each family, by name; each file lists its own. A name is in one family.
std::vector<LibraryFunction> elementwiseFunctions(); // LibraryElementwise.cpp
std::vector<LibraryFunction> mathFunctions();        // LibraryMath.cpp
std::vector<LibraryFunction> activationFunctions();  // LibraryActivations.cpp
std::vector<LibraryFunction> reductionFunctions();   // LibraryReductions.cpp
std::vector<LibraryFunction> shapeFunctions();       // LibraryShapes.cpp
std::vector<LibraryFunction> rearrangeFunctions();   // LibraryRearrange.cpp
std::vector<LibraryFunction> constructorFunctions(); // LibraryConstructors.cpp
std::vector<LibraryFunction> poolingFunctions();     // LibraryPooling.cpp
std::vector<LibraryFunction> convolutionFunctions(); // LibraryConvolution.cpp
std::vector<LibraryFunction> decomposedFunctions();  // Decompositions.cpp
std::vector<LibraryFunction> scientificFunctions();  // LibraryScientific.cpp
std::vector<LibraryFunction> indexingFunctions();    // LibraryIndexing.cpp
std::vector<LibraryFunction> linalgFunctions();      // LibraryLinalg.cpp
std::vector<LibraryFunction> sortingFunctions();     // LibrarySorting.cpp

/// Whether the table (of all families) models a function or method named `name`.
bool hasLibraryHandler(llvm::StringRef name);

} // namespace dynamir::frontend

#endif // DYNAMIR_LIB_FRONTEND_LIBRARY_H
