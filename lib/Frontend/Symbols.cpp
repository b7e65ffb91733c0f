//===- Symbols.cpp - the sizes of dynamic=True, as symbols ---------------===//
//
// With `dynamic=True` an input's sizes are not guarded by value: the graph's types say `?`.
// The trace still relies on what it combined: `x + y` of two `?` sizes computes elementwise
// only if they are equal, `a @ b` only if the contracted sizes are, and broadcasting depends
// on whether a size is 1. numpy raises where they differ, and a graph compiled without
// knowing it read out of bounds (`x + y` of sizes 3 and 4 returned three values). So, as
// Dynamo's symbolic shapes do:
//   - a size of 0 or 1 is traced as a static size (guarded exactly); the others are symbols
//     guarded to be at least 2, so that a `?` never broadcasts;
//   - each dyn op with a dynamic size in its operands or results derives its results' symbols
//     from its operands' by a rule of its kind below; where two symbols must be equal they
//     become one, and the tensor guards check it (`symbols` of dyn.guard.tensor_match);
//   - sizes that the graph computes (a reshape's, a concat's) are symbols no guard can relate:
//     an op that needs one to equal another breaks, as does an op of a kind without a rule,
//     or a dynamic size that meets a static one other than 1 (it would have to equal it).
// The same symbols give the sizes of boxes that change with a captured loop's variable
// (`L[i, :i]`, Windows.cpp: one per affine form, equal where the forms are) and of masked
// loads (`x[x > 0]`, one each): any size, 0 and 1 included.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// One dimension of a traced value: its static size, or a symbol for a dynamic one.
struct Dim {
  int64_t size;
  int64_t symbol = -1;
  bool isDynamic() const { return symbol >= 0; }
};
using Dims = SmallVector<Dim>;

/// An op whose dynamic sizes cannot be derived; the trace breaks with this reason.
struct NoRule {
  std::string why;
};

/// Dimensions of `rank` counted from the end.
int64_t normalizedDim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }
} // namespace

int64_t Tracer::newSymbol(int64_t size) {
  symbolParent.push_back(static_cast<int64_t>(symbolParent.size()));
  symbolSize.push_back(size);
  return symbolParent.back();
}

bool Tracer::mayBeOne(Value v, int64_t dim) {
  RankedTensorType type = typeOf(v);
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim) == 1;
  std::optional<SmallVector<int64_t>> symbols = symbolsOfValue(v);
  return !symbols || (*symbols)[dim] < 0 || symbolSize[(*symbols)[dim]] < 2;
}

int64_t Tracer::findSymbol(int64_t s) {
  while (symbolParent[s] != s)
    s = symbolParent[s] = symbolParent[symbolParent[s]];
  return s;
}

SmallVector<int64_t> Tracer::inputSymbols(RankedTensorType type, ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> symbols;
  for (int64_t d = 0; d < type.getRank(); ++d)
    symbols.push_back(type.isDynamicDim(d) ? newSymbol(sizes[d]) : -1);
  return symbols;
}

void Tracer::setSymbols(Value v, ArrayRef<int64_t> symbols) {
  if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
    symbolsOf[v] = SmallVector<int64_t>(symbols);
}

std::optional<SmallVector<int64_t>> Tracer::symbolsOfValue(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return std::nullopt;
  SmallVector<int64_t> symbols(type.getRank(), -1);
  if (type.hasStaticShape())
    return symbols;
  auto it = symbolsOf.find(v);
  if (it == symbolsOf.end() || static_cast<int64_t>(it->second.size()) != type.getRank())
    return std::nullopt;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d) != (it->second[d] >= 0))
      return std::nullopt;
    if (type.isDynamicDim(d))
      symbols[d] = findSymbol(it->second[d]);
  }
  return symbols;
}

bool Tracer::sameSymbols(Value a, Value b) {
  if (!isa<RankedTensorType>(a.getType()) || !isa<RankedTensorType>(b.getType()))
    return a.getType() == b.getType();
  std::optional<SmallVector<int64_t>> sa = symbolsOfValue(a), sb = symbolsOfValue(b);
  return sa && sb && *sa == *sb;
}

namespace {
/// Derives the symbols of an op's results; `unify` makes two symbols one or throws NoRule.
class SymbolRules {
public:
  SymbolRules(llvm::function_ref<std::optional<SmallVector<int64_t>>(Value)> symbols,
              llvm::function_ref<void(int64_t, int64_t)> unify)
      : symbols(symbols), unify(unify) {}

  /// Dims of a tensor value (throws NoRule for one without symbols).
  Dims dimsOf(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    std::optional<SmallVector<int64_t>> s = symbols(v);
    if (!s)
      throw NoRule{"a tensor of dynamic sizes the trace cannot relate to its inputs'"};
    Dims dims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back({type.getDimSize(d), (*s)[d]});
    return dims;
  }

  /// numpy's broadcasting of the dims of several operands.
  Dims broadcast(ArrayRef<Dims> operands) {
    size_t rank = 0;
    for (const Dims &o : operands)
      rank = std::max(rank, o.size());
    Dims out(rank, Dim{1});
    for (const Dims &o : operands) {
      size_t offset = rank - o.size();
      for (auto [i, dim] : llvm::enumerate(o)) {
        Dim &r = out[offset + i];
        if (!dim.isDynamic() && dim.size == 1)
          continue;
        if (!r.isDynamic() && r.size == 1) {
          r = dim;
          continue;
        }
        if (dim.isDynamic() && r.isDynamic()) {
          unify(r.symbol, dim.symbol);
          continue;
        }
        if (dim.isDynamic() || r.isDynamic())
          throw NoRule{"a size only the graph knows broadcast against the static size " +
                       std::to_string(dim.isDynamic() ? r.size : dim.size)};
      }
    }
    return out;
  }

  /// The contracted sizes of a product must be equal.
  void contract(Dim a, Dim b) {
    if (a.isDynamic() && b.isDynamic())
      unify(a.symbol, b.symbol);
    else if (a.isDynamic() || b.isDynamic())
      throw NoRule{"a product contracting a dynamic size with a static one"};
  }

  Dims matmul(Dims a, Dims b) {
    bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
    if (lhsVector)
      a.insert(a.begin(), Dim{1});
    if (rhsVector)
      b.push_back(Dim{1});
    contract(a.back(), b[b.size() - 2]);
    Dims batchA(ArrayRef(a).drop_back(2)), batchB(ArrayRef(b).drop_back(2));
    Dims out = broadcast({batchA, batchB});
    if (!lhsVector)
      out.push_back(a[a.size() - 2]);
    if (!rhsVector)
      out.push_back(b.back());
    return out;
  }

  Dims reduce(Dims x, ArrayRef<int64_t> dims, bool keepdim) {
    Dims out;
    for (auto [d, dim] : llvm::enumerate(x)) {
      bool reduced = llvm::any_of(dims, [&, d = d](int64_t r) {
        return normalizedDim(r, x.size()) == static_cast<int64_t>(d);
      });
      if (!reduced)
        out.push_back(dim);
      else if (keepdim)
        out.push_back(Dim{1});
    }
    return out;
  }

  /// The results' dims of `op`.
  SmallVector<Dims> derive(Operation *op) {
    auto operand = [&](unsigned i) { return dimsOf(op->getOperand(i)); };
    auto tensorOperands = [&] {
      SmallVector<Dims> all;
      for (Value v : op->getOperands())
        if (isa<RankedTensorType>(v.getType()))
          all.push_back(dimsOf(v));
      return all;
    };
    return TypeSwitch<Operation *, SmallVector<Dims>>(op)
        .Case<dyn::WhereOp, dyn::FmaOp, dyn::ElementwiseOpInterface>([&](Operation *) {
          return SmallVector<Dims>(op->getNumResults(), broadcast(tensorOperands()));
        })
        .Case<dyn::SumOp, dyn::MeanOp, dyn::ProdOp, dyn::MaxOp, dyn::MinOp, dyn::ArgMaxOp,
              dyn::ArgMinOp>([&](auto r) {
          return SmallVector<Dims>{reduce(operand(0), r.getDims(), r.getKeepdim())};
        })
        .Case<dyn::SoftmaxOp, dyn::LogSoftmaxOp, dyn::CumsumOp, dyn::CumprodOp, dyn::CummaxOp,
              dyn::CumminOp, dyn::SortOp>(
            [&](Operation *) { return SmallVector<Dims>(op->getNumResults(), operand(0)); })
        .Case([&](dyn::TransposeOp t) {
          Dims x = operand(0), out;
          for (int64_t p : t.getPerm())
            out.push_back(x[p]);
          return SmallVector<Dims>{out};
        })
        .Case([&](dyn::ExpandDimsOp e) {
          Dims x = operand(0);
          x.insert(x.begin() + normalizedDim(e.getDim(), x.size() + 1), Dim{1});
          return SmallVector<Dims>{x};
        })
        .Case([&](dyn::SqueezeOp s) {
          Dims x = operand(0);
          return SmallVector<Dims>{reduce(x, s.getDims(), /*keepdim=*/false)};
        })
        .Case([&](dyn::MatmulOp m) { return SmallVector<Dims>{matmul(operand(0), operand(1))}; })
        .Case([&](dyn::LinearOp l) {
          Dims x = operand(0), w = dimsOf(l.getWeight());
          contract(x.back(), w.back());
          x.back() = w.front();
          if (Value bias = l.getBias())
            broadcast({x, dimsOf(bias)});
          return SmallVector<Dims>{x};
        })
        .Case([&](dyn::GatherOp g) {
          // x's dims with the axis replaced by those of the indices (np.nonzero's, say).
          Dims x = operand(0), out(x.begin(), x.begin() + g.getAxis());
          llvm::append_range(out, dimsOf(g.getIndices()));
          out.append(x.begin() + g.getAxis() + 1, x.end());
          return SmallVector<Dims>{out};
        })
        .Case([&](dyn::ScatterOp sc) {
          // The updates are dest's dims with the axis replaced by the indices' count.
          Dims updates = operand(0), dest = dimsOf(sc.getDest());
          for (auto [d, dim] : llvm::enumerate(dest))
            contract(updates[d], static_cast<int64_t>(d) == static_cast<int64_t>(sc.getAxis())
                                     ? dimsOf(sc.getIndices()).front()
                                     : dim);
          return SmallVector<Dims>{dest};
        })
        .Case([&](dyn::ConcatOp c) {
          SmallVector<Dims> inputs = tensorOperands();
          int64_t axis = normalizedDim(c.getDim(), inputs.front().size());
          Dims out = inputs.front();
          for (const Dims &in : ArrayRef(inputs).drop_front())
            for (auto [d, dim] : llvm::enumerate(in))
              if (static_cast<int64_t>(d) != axis)
                contract(out[d], dim);
          out[axis] = Dim{ShapedType::kDynamic}; // a size the graph computes, where dynamic
          return SmallVector<Dims>{out};
        })
        .Case([&](dyn::ReshapeOp r) {
          // numpy checks that the element counts agree, the graph does not: only a reshape
          // whose count agrees for every size is one, with one dynamic size (the lowering
          // computes it) and static sizes whose product divides the input's.
          auto type = cast<RankedTensorType>(r.getType());
          int64_t in = 1, out = 1;
          for (Dim d : operand(0))
            in *= d.isDynamic() ? 1 : d.size;
          for (int64_t d : type.getShape())
            out *= ShapedType::isDynamic(d) ? 1 : d;
          if (llvm::count_if(type.getShape(), ShapedType::isDynamic) != 1 || in == 0 || out == 0 ||
              in % out != 0) // (no elements: a dynamic size of 0)
            throw NoRule{"a reshape whose element count agrees for some sizes only"};
          return SmallVector<Dims>(); // a size the graph computes
        })
        .Default([&](Operation *) -> SmallVector<Dims> {
          throw NoRule{op->getName().getStringRef().str() + " on tensors of dynamic sizes"};
        });
  }

private:
  llvm::function_ref<std::optional<SmallVector<int64_t>>(Value)> symbols;
  llvm::function_ref<void(int64_t, int64_t)> unify;
};
} // namespace

void Tracer::deriveSymbols(Operation *op) {
  auto dynamicType = [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked && !ranked.hasStaticShape();
  };
  if (!isa<dyn::DynDialect>(op->getDialect()) || op->hasTrait<OpTrait::IsTerminator>() ||
      isa<dyn::GuardOpInterface>(op) ||
      !(llvm::any_of(op->getOperandTypes(), dynamicType) ||
        llvm::any_of(op->getResultTypes(), dynamicType)))
    return;
  if (isa<dyn::ForOp, dyn::WhileOp>(op)) { // results: the carried values' symbols
    ValueRange inits =
        isa<dyn::ForOp>(op) ? cast<dyn::ForOp>(op).getInits() : cast<dyn::WhileOp>(op).getInits();
    for (auto [result, init] : llvm::zip(op->getResults(), inits))
      if (std::optional<SmallVector<int64_t>> s = symbolsOfValue(init))
        setSymbols(result, *s);
    return;
  }
  if (op->getNumRegions()) // dyn.if: set by the branch join from its sides
    return;
  if (isa<dyn::WindowOp, dyn::InsertWindowOp, dyn::CompressOp>(op)) // sizes the tracer sets
    return;
  // Unifications are made only once the whole rule succeeded.
  SmallVector<std::pair<int64_t, int64_t>> unified;
  llvm::DenseMap<int64_t, int64_t> pending; // symbol -> the one it joins, within this op
  auto root = [&](int64_t s) {
    s = findSymbol(s);
    while (pending.count(s))
      s = pending[s];
    return s;
  };
  auto unify = [&](int64_t a, int64_t b) {
    a = root(a);
    b = root(b);
    if (a == b)
      return;
    if (symbolSize[a] < 0 || symbolSize[b] < 0)
      throw NoRule{"two sizes that must be equal, one of them computed by the graph (where "
                   "they differ the program raises)"};
    if (symbolSize[a] != symbolSize[b])
      throw NoRule{"sizes " + std::to_string(symbolSize[a]) + " and " +
                   std::to_string(symbolSize[b]) + " that must be equal (the program raises)"};
    pending[b] = a;
    unified.emplace_back(a, b);
  };
  auto symbols = [&](Value v) -> std::optional<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> s = symbolsOfValue(v);
    if (s)
      for (int64_t &symbol : *s)
        if (symbol >= 0)
          symbol = root(symbol);
    return s;
  };
  SmallVector<Dims> results;
  try {
    // A box's size that changes with a loop, a masked load's, may be 0 or 1: only ops whose
    // results stay right for those take it (not a max of no elements, which raises; a
    // gather's, scatter's or linear's sizes are those of its operands).
    bool loopVariant = llvm::any_of(op->getOperands(), [&](Value v) {
      std::optional<SmallVector<int64_t>> s = symbols(v);
      return s && llvm::any_of(*s, [&](int64_t symbol) {
               return symbol >= 0 && symbolSize[symbol] == kAnySize;
             });
    });
    if (loopVariant && !isa<dyn::ElementwiseOpInterface, dyn::WhereOp, dyn::FmaOp, dyn::SumOp,
                            dyn::ProdOp, dyn::MatmulOp, dyn::LinearOp, dyn::TransposeOp,
                            dyn::ExpandDimsOp, dyn::SqueezeOp, dyn::GatherOp, dyn::ScatterOp>(op))
      throw NoRule{"a size that may be 0 or 1 (a box that changes with a loop, a masked load)"};
    results = SymbolRules(symbols, unify).derive(op);
  } catch (NoRule &none) {
    std::string name = op->getName().getStringRef().str();
    op->erase();
    breakTrace(dyn::BreakKind::unsupported_call,
               name + " of sizes the trace does not know: " + none.why);
  }
  for (auto [a, b] : unified)
    symbolParent[findSymbol(b)] = findSymbol(a);
  // A result dim that the rule gives as a static size or whose rule gave none is a size the
  // graph computes.
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || type.hasStaticShape())
      continue;
    SmallVector<int64_t> s;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        s.push_back(-1);
        continue;
      }
      bool known = i < results.size() &&
                   static_cast<int64_t>(results[i].size()) == type.getRank() &&
                   results[i][d].isDynamic();
      s.push_back(known ? findSymbol(results[i][d].symbol) : newSymbol(/*size=*/-1));
    }
    setSymbols(result, s);
  }
}

void Tracer::finishSymbols() {
  if (symbolParent.empty())
    return;
  // Renumber the roots 0, 1, ... in the order the guards meet them.
  llvm::DenseMap<int64_t, int64_t> number;
  for (auto guard : entry->getOps<dyn::TensorMatchGuardOp>()) {
    std::optional<ArrayRef<int64_t>> symbols = guard.getSymbols();
    if (!symbols)
      continue;
    SmallVector<int64_t> roots;
    for (int64_t s : *symbols)
      roots.push_back(s < 0 ? -1 : number.try_emplace(findSymbol(s), number.size()).first->second);
    guard.setSymbols(roots);
  }
}
