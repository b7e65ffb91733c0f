//===- GPUKernels.cpp - elementwise and row-reduction kernels for NVIDIA GPUs ===//
//
// Upstream maps parallel loops to GPUs one scalar per thread and cannot map reductions at all
// (convert-parallel-loops-to-gpu rejects scf.reduce). dyn-gpu-map (GPUMap.cpp) writes the
// kernel shapes that carry Dynamir's graphs itself, here, as gpu.launch ops on the bufferized
// linalg ops:
//
//  * elementwise generics (and fills): each thread handles 16 bytes of the output, read and
//    written with aligned vector loads and stores (ld.global.v4.b32 for f32), the body
//    computed per lane; one element per thread where rows are not a multiple of 16 bytes;
//  * reductions over the innermost dimension (row sums, row maxima): one block per row,
//    threads stride over the row (16-byte loads where the row allows), then a gpu.all_reduce,
//    which upstream lowers to warp shuffles and shared memory;
//  * row reductions followed by an elementwise op on the same rows (softmax): one kernel that
//    keeps each thread's part of the row in registers, so the input is read once.
//
// Everything else with a parallel loop (column reductions, gathers) is left to the generic
// parallel-loop path (see GPUMap.cpp).
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using dynamir::isPlainBuffer;

namespace {
constexpr int64_t kVectorBytes = 16;

int64_t elementBytes(Value v) {
  Type element = cast<MemRefType>(v.getType()).getElementType();
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits % 8 == 0 ? bits / 8 : 0;
}

/// Whether `lanes` consecutive iterations of the innermost loop read consecutive elements of
/// an operand with this map, starting at a multiple of `lanes` (so one aligned vector load
/// serves them): the map's last result is the innermost loop, which no other result uses,
/// and the operand's rows are a multiple of `lanes` long (the output's rows, or a bias row).
bool isContiguousAlongLastLoop(AffineMap map, MemRefType type, int64_t lanes) {
  unsigned last = map.getNumDims() - 1;
  if (map.getNumResults() == 0 || type.getRank() == 0 ||
      map.getResults().back() != getAffineDimExpr(last, map.getContext()) ||
      type.getShape().back() % lanes)
    return false;
  return llvm::none_of(map.getResults().drop_back(),
                       [&](AffineExpr e) { return e.isFunctionOfDim(last); });
}

/// The gpu.all_reduce operation and the identity of a combiner the reduction body ends in.
struct Combiner {
  gpu::AllReduceOperation kind;
  TypedAttr identity;
};

std::optional<Combiner> combinerOf(Operation *op) {
  Type t = op->getResult(0).getType();
  auto floatIdentity = [&](double v) -> TypedAttr { return FloatAttr::get(t, v); };
  auto intIdentity = [&](APInt v) -> TypedAttr { return IntegerAttr::get(t, v); };
  unsigned bits = t.getIntOrFloatBitWidth();
  // Warp shuffles (nvvm.shfl.sync) move 32-bit values: narrower elements (int8, uint16, f16
  // maxima) reduce in each thread's own loop instead.
  if (bits < 32)
    return std::nullopt;
  double inf = std::numeric_limits<double>::infinity();
  return llvm::TypeSwitch<Operation *, std::optional<Combiner>>(op)
      .Case([&](arith::AddFOp) {
        return Combiner{gpu::AllReduceOperation::ADD, floatIdentity(0)};
      })
      .Case([&](arith::MulFOp) {
        return Combiner{gpu::AllReduceOperation::MUL, floatIdentity(1)};
      })
      .Case([&](arith::MaximumFOp) {
        return Combiner{gpu::AllReduceOperation::MAXIMUMF, floatIdentity(-inf)};
      })
      .Case([&](arith::MinimumFOp) {
        return Combiner{gpu::AllReduceOperation::MINIMUMF, floatIdentity(inf)};
      })
      .Case([&](arith::MaxNumFOp) {
        return Combiner{gpu::AllReduceOperation::MAXNUMF, floatIdentity(-inf)};
      })
      .Case([&](arith::MinNumFOp) {
        return Combiner{gpu::AllReduceOperation::MINNUMF, floatIdentity(inf)};
      })
      .Case([&](arith::AddIOp) {
        return Combiner{gpu::AllReduceOperation::ADD, intIdentity(APInt::getZero(bits))};
      })
      .Case([&](arith::MaxSIOp) {
        return Combiner{gpu::AllReduceOperation::MAXSI,
                        intIdentity(APInt::getSignedMinValue(bits))};
      })
      .Case([&](arith::MinSIOp) {
        return Combiner{gpu::AllReduceOperation::MINSI,
                        intIdentity(APInt::getSignedMaxValue(bits))};
      })
      .Case([&](arith::MaxUIOp) {
        return Combiner{gpu::AllReduceOperation::MAXUI, intIdentity(APInt::getMinValue(bits))};
      })
      .Case([&](arith::MinUIOp) {
        return Combiner{gpu::AllReduceOperation::MINUI, intIdentity(APInt::getMaxValue(bits))};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// A reduction body `acc = combine(value, acc)`, the accumulator used nowhere else.
struct ReductionBody {
  Operation *combine;
  BlockArgument acc;
  Value perElement;
  Combiner combiner;
};

std::optional<ReductionBody> reductionBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  BlockArgument acc = body.getArguments().back();
  Operation *combine = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 || !acc.hasOneUse() ||
      acc.getUses().begin()->getOwner() != combine)
    return std::nullopt;
  std::optional<Combiner> combiner = combinerOf(combine);
  if (!combiner)
    return std::nullopt;
  Value perElement = combine->getOperand(combine->getOperand(0) == acc ? 1 : 0);
  return ReductionBody{combine, acc, perElement, *combiner};
}

/// The linalg.fill right before `op` that writes the start value of its (only) output, if
/// any: kernels use the value and the fill goes.
linalg::FillOp startFill(linalg::GenericOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (fill && fill.hasPureBufferSemantics() && fill.getOutputs()[0] == op.getDpsInits()[0])
    return fill;
  return nullptr;
}

/// Builds kernels for one function.
class KernelBuilder {
public:
  KernelBuilder(linalg::GenericOp op, int64_t blockSize, unsigned &kernels)
      : op(op), b(op), loc(op.getLoc()), blockSize(blockSize), kernels(kernels) {}

  LogicalResult mapElementwise();
  LogicalResult mapRowReduction();
  /// One kernel for a chain of row reductions ending in an elementwise op over the same rows
  /// (softmax): the chain's ops, in order, `op` first; see the pass description.
  LogicalResult mapRowChain(ArrayRef<linalg::GenericOp> chain);

private:
  linalg::GenericOp op;
  OpBuilder b;
  Location loc;
  int64_t blockSize;
  unsigned &kernels; // kernels made in this function so far, for unique names

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// A launch of `grid` x `blockSize` threads; the builder is left inside its body. The
  /// kernel is named after the function, its kind and the source line it computes
  /// (`forward_reduce1_line12`), so that profiles and driver errors point at the program.
  gpu::LaunchOp launch(int64_t grid, StringRef kind) {
    Value one = index(1);
    // The runtime compiles a copy of each graph under a fixed name (for its cache) and says
    // which graph it is in `dyn.kernel_prefix`.
    auto func = op->getParentOfType<FunctionOpInterface>();
    auto prefix = func->getAttrOfType<StringAttr>("dyn.kernel_prefix");
    std::string name = (prefix ? prefix.str() : func.getName().str()) + "_" + kind.str() +
                       std::to_string(kernels++);
    loc->walk([&](Location inner) {
      if (auto fileLine = dyn_cast<FileLineColLoc>(inner)) {
        name += "_line" + std::to_string(fileLine.getLine());
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    auto symbol = FlatSymbolRefAttr::get(b.getContext(), name);
    auto launchOp = gpu::LaunchOp::create(b, loc, index(grid), one, one, index(blockSize), one, one,
                                          Value(), Type(), ValueRange(), TypeRange(), TypeRange(),
                                          Value(), Value(), Value(), symbol, symbol);
    b.setInsertionPointToEnd(&launchOp.getBody().front());
    auto terminator = gpu::TerminatorOp::create(b, loc);
    b.setInsertionPoint(terminator);
    return launchOp;
  }

  /// The operand's indices for the loop indices `dims`, through its indexing map.
  SmallVector<Value> indicesFor(OpOperand &operand, ValueRange dims) {
    return indicesFor(op, operand, dims);
  }
  SmallVector<Value> indicesFor(linalg::GenericOp g, OpOperand &operand, ValueRange dims) {
    AffineMap map = g.getMatchingIndexingMap(&operand);
    SmallVector<Value> out;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        out.push_back(dims[d.getPosition()]);
        continue;
      }
      out.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, e, b.getContext()), dims));
    }
    return out;
  }

  /// Clones the body of `g` for one element, except its terminator and `skip`: block
  /// arguments and linalg.index ops become `args` and `dims`. Returns the mapping.
  IRMapping cloneOps(linalg::GenericOp g, ValueRange args, ValueRange dims,
                     Operation *skip = nullptr) {
    Block &body = g.getRegion().front();
    IRMapping mapping;
    for (auto [arg, value] : llvm::zip(body.getArguments(), args))
      if (value)
        mapping.map(arg, value);
    for (Operation &inner : body.without_terminator()) {
      if (&inner == skip)
        continue;
      if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(idx.getResult(), dims[idx.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    return mapping;
  }

  /// The values the body of `g` yields for one element.
  SmallVector<Value> cloneBody(linalg::GenericOp g, ValueRange args, ValueRange dims) {
    IRMapping mapping = cloneOps(g, args, dims);
    SmallVector<Value> yielded;
    for (Value v : g.getRegion().front().getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(v));
    return yielded;
  }

  /// Folds one element into `partial`: the reduction body without its combiner gives the
  /// element's value, a clone of the combiner (the accumulator where the body had it) folds.
  Value foldElement(linalg::GenericOp g, const ReductionBody &reduction, ValueRange args,
                    ValueRange dims, Value partial) {
    IRMapping mapping = cloneOps(g, args, dims, reduction.combine);
    Value element = mapping.lookupOrDefault(reduction.perElement);
    mapping.map(reduction.acc, partial);
    mapping.map(reduction.perElement, element);
    return b.clone(*reduction.combine, mapping)->getResult(0);
  }

  /// Row-major indices of flat element `flat` in `shape`.
  SmallVector<Value> delinearize(Value flat, ArrayRef<int64_t> shape) {
    SmallVector<Value> out(shape.size());
    int64_t stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      Value q = stride == 1 ? flat : arith::DivUIOp::create(b, loc, flat, index(stride));
      out[d] = d == 0 ? q : arith::RemUIOp::create(b, loc, q, index(shape[d]));
      stride *= shape[d];
    }
    return out;
  }
};

LogicalResult KernelBuilder::mapElementwise() {
  if (op.getNumReductionLoops() != 0 || op.getNumDpsInits() == 0)
    return failure();
  Value out0 = op.getDpsInitOperand(0)->get();
  if (!isPlainBuffer(out0))
    return failure();
  ArrayRef<int64_t> shape = cast<MemRefType>(out0.getType()).getShape();
  // 16 bytes per thread where rows allow it, else one element per thread (odd row lengths,
  // 0-d results such as a predicate, bool outputs): every buffer of a GPU graph is device
  // memory, so even a scalar is computed by a kernel.
  int64_t bytes = elementBytes(out0);
  int64_t lanes = 1;
  if (!shape.empty() && bytes && kVectorBytes % bytes == 0 &&
      shape.back() % (kVectorBytes / bytes) == 0)
    lanes = kVectorBytes / bytes;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!isPlainBuffer(init.get()) || (lanes > 1 && elementBytes(init.get()) != bytes) ||
        cast<MemRefType>(init.get().getType()).getShape() != shape ||
        !op.getMatchingIndexingMap(&init).isIdentity())
      return failure();
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<ShapedType>(input->get().getType()) && !isPlainBuffer(input->get()))
      return failure();

  int64_t elements = ShapedType::getNumElements(shape);
  int64_t threads = elements / lanes;
  gpu::LaunchOp launchOp = launch(llvm::divideCeil(threads, blockSize), "map");
  Value thread = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launchOp.getBlockIds().x, index(blockSize)),
      launchOp.getThreadIds().x);
  Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread, index(threads));
  auto ifOp = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());

  SmallVector<Value> first =
      delinearize(arith::MulIOp::create(b, loc, thread, index(lanes)), shape);
  SmallVector<SmallVector<Value>> laneDims(lanes, first);
  for (int64_t l = 1; l < lanes; ++l)
    laneDims[l].back() = arith::AddIOp::create(b, loc, first.back(), index(l));

  // Per lane, the value of each block argument: extracted from one 16-byte load where the
  // operand is read in the output's order, else loaded on its own (broadcasts, transposes).
  Block &body = op.getRegion().front();
  SmallVector<SmallVector<Value>> laneArgs(lanes, SmallVector<Value>(body.getNumArguments()));
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = body.getArgument(operand.getOperandNumber());
    if (arg.use_empty())
      continue;
    Value v = operand.get();
    if (!isa<ShapedType>(v.getType())) {
      for (int64_t l = 0; l < lanes; ++l)
        laneArgs[l][arg.getArgNumber()] = v;
      continue;
    }
    auto type = cast<MemRefType>(v.getType());
    if (lanes > 1 && isContiguousAlongLastLoop(op.getMatchingIndexingMap(&operand), type, lanes) &&
        elementBytes(v) == bytes) {
      auto vecType = VectorType::get({lanes}, type.getElementType());
      Value vec = vector::LoadOp::create(b, loc, vecType, v, indicesFor(operand, first),
                                         /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes));
      for (int64_t l = 0; l < lanes; ++l)
        laneArgs[l][arg.getArgNumber()] = vector::ExtractOp::create(b, loc, vec, l);
      continue;
    }
    // An operand that does not move along the innermost dimension is the same for all
    // lanes (a row's statistic, a scalar): one load.
    bool perLane =
        lanes > 1 && op.getMatchingIndexingMap(&operand).isFunctionOfDim(shape.size() - 1);
    Value shared =
        perLane ? Value() : memref::LoadOp::create(b, loc, v, indicesFor(operand, first));
    for (int64_t l = 0; l < lanes; ++l)
      laneArgs[l][arg.getArgNumber()] =
          shared ? shared : memref::LoadOp::create(b, loc, v, indicesFor(operand, laneDims[l]));
  }

  SmallVector<SmallVector<Value>> results;
  for (int64_t l = 0; l < lanes; ++l)
    results.push_back(cloneBody(op, laneArgs[l], laneDims[l]));
  for (auto [i, init] : llvm::enumerate(op.getDpsInits())) {
    if (lanes == 1) {
      memref::StoreOp::create(b, loc, results[0][i], init, first);
      continue;
    }
    SmallVector<Value> elementsOut;
    for (int64_t l = 0; l < lanes; ++l)
      elementsOut.push_back(results[l][i]);
    auto vecType = VectorType::get({lanes}, cast<MemRefType>(init.getType()).getElementType());
    Value vec = vector::FromElementsOp::create(b, loc, vecType, elementsOut);
    vector::StoreOp::create(b, loc, vec, init, first, /*nontemporal=*/false,
                            llvm::MaybeAlign(kVectorBytes));
  }
  return success();
}

LogicalResult KernelBuilder::mapRowReduction() {
  unsigned loops = op.getNumLoops();
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 || loops > 2 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return failure();
  OpOperand *init = op.getDpsInitOperand(0);
  if (!isPlainBuffer(init->get()))
    return failure();
  // The output holds one element per row (keepdim outputs add constant indices).
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (outMap.isFunctionOfDim(loops - 1) || (loops == 2 && !outMap.isFunctionOfDim(0)))
    return failure();

  std::optional<ReductionBody> reduction = reductionBody(op);
  if (!reduction)
    return failure();
  Block &body = op.getRegion().front();
  Operation *combine = reduction->combine;
  BlockArgument acc = reduction->acc;
  Value perElement = reduction->perElement;
  const Combiner *combiner = &reduction->combiner;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = loops == 2 ? ranges[0] : 1, length = ranges.back();
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(length))
    return failure();

  // Inputs are read along the row (map (d0, d1) -> (d0, d1), or (d0) -> (d0) for one row) or
  // are the same for the whole row (softmax's row maximum).
  AffineMap rowMap = AffineMap::getMultiDimIdentityMap(loops, b.getContext());
  int64_t lanes = 0;
  SmallVector<OpOperand *> alongRow, perRow;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value v = input->get();
    if (!isa<ShapedType>(v.getType()))
      continue;
    if (!isPlainBuffer(v))
      return failure();
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map == rowMap) {
      int64_t bytes = elementBytes(v);
      int64_t inputLanes = bytes && kVectorBytes % bytes == 0 ? kVectorBytes / bytes : 1;
      lanes = lanes == 0 || lanes == inputLanes ? inputLanes : 1;
      alongRow.push_back(input);
    } else if (!map.isFunctionOfDim(loops - 1)) {
      perRow.push_back(input);
    } else {
      return failure();
    }
  }
  if (lanes == 0 || length % lanes || length / lanes < 1)
    lanes = 1;

  linalg::FillOp fill = startFill(op);
  gpu::LaunchOp launchOp = launch(rows, "reduce");
  Value row = launchOp.getBlockIds().x;
  Value tid = launchOp.getThreadIds().x;
  SmallVector<Value> args(body.getNumArguments());
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isa<ShapedType>(input->get().getType()))
      args[input->getOperandNumber()] = input->get();
  SmallVector<Value> firstColumn = {row, index(0)};
  firstColumn.resize(loops);
  for (OpOperand *input : perRow)
    args[input->getOperandNumber()] =
        memref::LoadOp::create(b, loc, input->get(), indicesFor(*input, firstColumn));

  // Each thread folds its part of the row: elements tid*lanes, tid*lanes + 1, ... then
  // blockSize*lanes further on.
  Value identity = arith::ConstantOp::create(b, loc, combiner->identity);
  Value start = arith::MulIOp::create(b, loc, tid, index(lanes));
  auto loop = scf::ForOp::create(b, loc, start, index(length), index(blockSize * lanes),
                                 ValueRange{identity});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value column = loop.getInductionVar();
    Value partial = loop.getRegionIterArgs()[0];
    SmallVector<SmallVector<Value>> laneArgs(lanes, args);
    SmallVector<Value> rowIndex =
        loops == 2 ? SmallVector<Value>{row, column} : SmallVector<Value>{column};
    for (OpOperand *input : alongRow) {
      Value v = input->get();
      auto type = cast<MemRefType>(v.getType());
      if (lanes == 1) {
        laneArgs[0][input->getOperandNumber()] = memref::LoadOp::create(b, loc, v, rowIndex);
        continue;
      }
      Value vec = vector::LoadOp::create(b, loc, VectorType::get({lanes}, type.getElementType()), v,
                                         rowIndex, false, llvm::MaybeAlign(kVectorBytes));
      for (int64_t l = 0; l < lanes; ++l)
        laneArgs[l][input->getOperandNumber()] = vector::ExtractOp::create(b, loc, vec, l);
    }
    for (int64_t l = 0; l < lanes; ++l) {
      Value col = l == 0 ? column : arith::AddIOp::create(b, loc, column, index(l));
      SmallVector<Value> dims = loops == 2 ? SmallVector<Value>{row, col} : SmallVector<Value>{col};
      partial = foldElement(op, *reduction, laneArgs[l], dims, partial);
    }
    scf::YieldOp::create(b, loc, partial);
  }

  // Warp shuffles and shared memory (upstream's gpu.all_reduce lowering), then thread 0 folds
  // the row's total into the output's initial value.
  Value total = gpu::AllReduceOp::create(
      b, loc, loop.getResult(0), gpu::AllReduceOperationAttr::get(b.getContext(), combiner->kind),
      b.getUnitAttr());
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0));
  auto ifOp = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  SmallVector<Value> outIndex = indicesFor(*init, firstColumn);
  // The output was just filled with the reduction's start value (bufferized linalg.fill):
  // use that value and drop the fill kernel, since every output element is written here.
  Value initial;
  if (fill)
    initial = fill.getInputs()[0];
  else
    initial = memref::LoadOp::create(b, loc, init->get(), outIndex);
  IRMapping mapping;
  mapping.map(acc, initial);
  mapping.map(perElement, total);
  Value result = b.clone(*combine, mapping)->getResult(0);
  memref::StoreOp::create(b, loc, result, init->get(), outIndex);
  if (fill)
    fill.erase();
  return success();
}

LogicalResult KernelBuilder::mapRowChain(ArrayRef<linalg::GenericOp> chain) {
  // The rows: [rows, length] of the one input every op reads in full.
  AffineMap rowMap = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  Value input;
  for (OpOperand *operand : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(operand) == rowMap)
      input = operand->get();
  if (!input || !isPlainBuffer(input))
    return failure();
  ArrayRef<int64_t> shape = cast<MemRefType>(input.getType()).getShape();
  int64_t rows = shape[0], length = shape[1], bytes = elementBytes(input);
  if (bytes == 0 || kVectorBytes % bytes)
    return failure();
  int64_t lanes = kVectorBytes / bytes;
  // Each thread keeps its part of the row in registers: at most 8 vectors of 16 bytes.
  int64_t perThread = blockSize * lanes;
  if (length % perThread || length / perThread > 8)
    return failure();
  int64_t iterations = length / perThread;

  llvm::DenseSet<Value> rowResults; // outputs of the chain's reductions, one value per row
  for (size_t position = 0; position < chain.size(); ++position) {
    linalg::GenericOp g = chain[position];
    bool last = position + 1 == chain.size();
    if (g.getNumLoops() != 2 || g.getNumDpsInits() != 1 || !isPlainBuffer(g.getDpsInits()[0]) ||
        g.getDpsInits()[0] == input)
      return failure();
    for (OpOperand *operand : g.getDpsInputOperands()) {
      if (!isa<ShapedType>(operand->get().getType()))
        continue;
      AffineMap map = g.getMatchingIndexingMap(operand);
      if (map == rowMap ? operand->get() != input
                        : map.isFunctionOfDim(1) || !isPlainBuffer(operand->get()))
        return failure();
    }
    AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
    if (last) {
      // The end of the chain: elementwise, writing [rows, length].
      if (g.getNumReductionLoops() != 0 || outMap != rowMap ||
          cast<MemRefType>(g.getDpsInits()[0].getType()).getShape() != shape ||
          elementBytes(g.getDpsInits()[0]) != bytes)
        return failure();
    } else {
      if (g.getNumReductionLoops() != 1 ||
          g.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
          outMap.isFunctionOfDim(1) || !outMap.isFunctionOfDim(0) || !reductionBody(g))
        return failure();
      rowResults.insert(g.getDpsInits()[0]);
    }
  }

  SmallVector<linalg::FillOp> fills;
  for (linalg::GenericOp g : ArrayRef(chain).drop_back())
    fills.push_back(startFill(g));
  // The kernel replaces everything from the first op to the last: a fill in between that does
  // not start one of the reductions would run after the kernel that should see its values.
  linalg::GenericOp last = chain.back();
  for (Operation *at = chain.front(); at != last.getOperation(); at = at->getNextNode())
    if (auto fill = dyn_cast<linalg::FillOp>(at); fill && !llvm::is_contained(fills, fill))
      return failure();
  gpu::LaunchOp launchOp = launch(rows, "rows");
  Value row = launchOp.getBlockIds().x;
  Value tid = launchOp.getThreadIds().x;
  Value zero = index(0);

  // The thread's elements of the row, loaded once.
  SmallVector<Value> columns, elements;
  for (int64_t it = 0; it < iterations; ++it) {
    Value column = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, tid, index(lanes)),
                                         index(it * perThread));
    Value vec = vector::LoadOp::create(
        b, loc, VectorType::get({lanes}, cast<MemRefType>(input.getType()).getElementType()), input,
        ValueRange{row, column}, false, llvm::MaybeAlign(kVectorBytes));
    for (int64_t l = 0; l < lanes; ++l) {
      columns.push_back(l == 0 ? column : arith::AddIOp::create(b, loc, column, index(l)));
      elements.push_back(vector::ExtractOp::create(b, loc, vec, l));
    }
  }

  llvm::DenseMap<Value, Value> rowValues; // reduction output -> this row's value
  for (size_t position = 0; position < chain.size(); ++position) {
    linalg::GenericOp g = chain[position];
    // Arguments per element: the row's element, a row value of an earlier reduction, another
    // per-row input (loaded once), or a scalar.
    Block &body = g.getRegion().front();
    SmallVector<Value> rowArgs(body.getNumArguments());
    int elementArg = -1;
    for (OpOperand *operand : g.getDpsInputOperands()) {
      Value v = operand->get();
      unsigned n = operand->getOperandNumber();
      if (!isa<ShapedType>(v.getType()))
        rowArgs[n] = v;
      else if (g.getMatchingIndexingMap(operand) == rowMap)
        elementArg = n;
      else if (rowValues.count(v))
        rowArgs[n] = rowValues.lookup(v);
      else
        rowArgs[n] = memref::LoadOp::create(b, loc, v, indicesFor(g, *operand, {row, zero}));
    }
    auto argsFor = [&](size_t e) {
      SmallVector<Value> args = rowArgs;
      if (elementArg >= 0)
        args[elementArg] = elements[e];
      return args;
    };
    if (position + 1 == chain.size()) {
      Value out = g.getDpsInits()[0];
      auto vecType = VectorType::get({lanes}, cast<MemRefType>(out.getType()).getElementType());
      for (int64_t it = 0; it < iterations; ++it) {
        SmallVector<Value> results;
        for (int64_t l = 0; l < lanes; ++l) {
          size_t e = it * lanes + l;
          results.push_back(cloneBody(g, argsFor(e), {row, columns[e]})[0]);
        }
        vector::StoreOp::create(b, loc, vector::FromElementsOp::create(b, loc, vecType, results),
                                out, ValueRange{row, columns[it * lanes]}, false,
                                llvm::MaybeAlign(kVectorBytes));
      }
      break;
    }
    ReductionBody reduction = *reductionBody(g);
    Value partial = arith::ConstantOp::create(b, loc, reduction.combiner.identity);
    for (size_t e = 0; e < elements.size(); ++e)
      partial = foldElement(g, reduction, argsFor(e), {row, columns[e]}, partial);
    Value total = gpu::AllReduceOp::create(
        b, loc, partial, gpu::AllReduceOperationAttr::get(b.getContext(), reduction.combiner.kind),
        b.getUnitAttr());
    Value out = g.getDpsInits()[0];
    SmallVector<Value> outIndex = indicesFor(g, *g.getDpsInitOperand(0), {row, zero});
    Value initial = fills[position] ? fills[position].getInputs()[0]
                                    : memref::LoadOp::create(b, loc, out, outIndex).getResult();
    IRMapping mapping;
    mapping.map(reduction.acc, initial);
    mapping.map(reduction.perElement, total);
    Value value = b.clone(*reduction.combine, mapping)->getResult(0);
    rowValues[out] = value;
    // Every thread has the row value; one stores it for whoever else reads the buffer.
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero);
    auto ifOp = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, value, out, outIndex);
  }
  for (linalg::FillOp fill : fills)
    if (fill)
      fill.erase();
  return success();
}

} // namespace

bool dynamir::isPlainBuffer(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

LogicalResult dynamir::mapElementwise(linalg::GenericOp op, int64_t blockSize, unsigned &kernels) {
  return KernelBuilder(op, blockSize, kernels).mapElementwise();
}

LogicalResult dynamir::mapRowReduction(linalg::GenericOp op, int64_t blockSize, unsigned &kernels) {
  return KernelBuilder(op, blockSize, kernels).mapRowReduction();
}

LogicalResult dynamir::mapRowChain(ArrayRef<linalg::GenericOp> chain, int64_t blockSize,
                                   unsigned &kernels) {
  return KernelBuilder(chain.front(), blockSize, kernels).mapRowChain(chain);
}

SmallVector<SmallVector<linalg::GenericOp>> dynamir::rowChains(Operation *root) {
  SmallVector<SmallVector<linalg::GenericOp>> chains;
  root->walk([&](Block *block) {
    SmallVector<linalg::GenericOp> chain;
    for (Operation &op : *block) {
      auto g = dyn_cast<linalg::GenericOp>(op);
      if (!g) {
        if (!isa<linalg::FillOp>(op))
          chain.clear();
        continue;
      }
      if (!g.hasPureBufferSemantics()) {
        chain.clear();
        continue;
      }
      if (g.getNumReductionLoops() == 1) {
        chain.push_back(g);
        continue;
      }
      if (!chain.empty() && g.getNumReductionLoops() == 0) {
        chain.push_back(g);
        chains.push_back(chain);
      }
      chain.clear();
    }
  });
  return chains;
}
