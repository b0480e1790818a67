//===- Differentiate.cpp - The --kina-differentiate pass ------------------===//
//
// Reverse mode over straight-line kina code: the function is copied in
// place of its kina.reverse_mode (calls inlined, so that their ops are
// differentiated like the caller's), every copied op is recorded on a
// tape, and the tape is walked backwards applying each op's own adjoint
// rule (AdjointOpInterface, lib/Dialect/AdjointRules.cpp). There is no
// central switch over ops here. Only active values (those that depend on a
// `wrt` parameter) receive cotangents, as in Enzyme's activity analysis:
// a constant, a mask or an input not differentiated gets none, so that a
// sharded program's backward moves nothing for them; the adjoint ops that
// a rule built for an inactive operand are erased, unused.
//
// A per-device (`@local`, SPMD) function is differentiated as JAX's
// shard_map is: its types do not say which values are the same on every
// device, so that is tracked (from the arguments' `kina.global` types and
// through the collectives), and where a value that is the same on the
// devices of a mesh axis is used by an op whose result differs between
// them, that use's cotangent is summed over the axis (an all_reduce: the
// transpose of the implicit broadcast). The collectives' own adjoints
// need nothing more.
//
//===----------------------------------------------------------------------===//

#include "Kina/Differentiate/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kina {
#define GEN_PASS_DEF_DIFFERENTIATEPASS
#include "Kina/Differentiate/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

namespace {
/// One kina.reverse_mode being replaced.
class ReverseMode {
public:
  ReverseMode(ReverseModeOp op, SymbolTable &symbols)
      : op(op), symbols(symbols), builder(op) {}

  LogicalResult run();

  /// The last op of the forward once `run` succeeded (null: none).
  Operation *lastForward = nullptr;

private:
  LogicalResult copyBody(func::FuncOp fn, IRMapping &map,
                         SmallVectorImpl<Value> &results);
  LogicalResult trackVarying();
  Value constant(float value, Type like, Location loc);
  Value placed(Value value, Type type, Location loc);
  void accumulate(Value value, Value cotangent, Operation *forward);
  void markActive(ArrayRef<Value> params);
  void eraseUnused(Operation *before);

  ReverseModeOp op;
  SymbolTable &symbols;
  OpBuilder builder;
  /// The forward ops, in order.
  SmallVector<Operation *> tape;
  DenseMap<Value, Value> cotangents;
  /// The values that depend on a `wrt` parameter.
  DenseSet<Value> active;
  /// A per-device function's mesh, and for each value the mesh axes
  /// (bit i: the mesh's axis i) over whose devices it differs.
  MeshOp mesh;
  DenseMap<Value, uint64_t> varying;
};
} // namespace

/// Copies `fn`'s body at the builder, arguments mapped by `map`, calls
/// inlined (Kina has no recursion, so this ends); `results` gets what it
/// returns.
LogicalResult ReverseMode::copyBody(func::FuncOp fn, IRMapping &map,
                                    SmallVectorImpl<Value> &results) {
  for (Operation &inner : fn.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(inner)) {
      for (Value value : ret.getOperands())
        results.push_back(map.lookupOrDefault(value));
      return success();
    }
    if (isa<ReverseModeOp>(inner))
      return op.emitOpError("differentiates '")
             << fn.getName()
             << "', which is itself defined by reverseMode: not supported "
                "in this version";
    if (auto call = dyn_cast<func::CallOp>(inner)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return call.emitOpError("calls '")
               << call.getCallee() << "', which has no body to differentiate";
      IRMapping calleeMap;
      for (auto [arg, operand] :
           llvm::zip_equal(callee.getArguments(), call.getOperands()))
        calleeMap.map(arg, map.lookupOrDefault(operand));
      SmallVector<Value> returned;
      if (failed(copyBody(callee, calleeMap, returned)))
        return failure();
      for (auto [result, value] : llvm::zip_equal(call.getResults(), returned))
        map.map(result, value);
      continue;
    }
    if (!isa<KinaDialect>(inner.getDialect()))
      return inner.emitOpError("cannot be differentiated: reverseMode "
                               "differentiates kina ops and calls");
    tape.push_back(builder.clone(inner, map));
  }
  return fn.emitOpError("has no return");
}

/// `value` of `like`'s element type and shape: a rank-0 constant on the host,
/// or replicated over the mesh, broadcast to the shape.
Value ReverseMode::constant(float value, Type like, Location loc) {
  auto type = cast<KinaTensorType>(like);
  PlacementAttr placement = type.getPlacement();
  if (placement.isMesh() || placement.isAuto())
    placement = PlacementAttr::getReplicated(builder.getContext());
  Type element = type.getElementType();
  auto scalar = ConstantOp::create(
      builder, loc,
      KinaTensorType::get(builder.getContext(), {}, element, placement),
      FloatAttr::get(element, value));
  if (type.getRank() == 0)
    return scalar;
  auto filled =
      createInferred<BroadcastOp>(builder, loc, scalar.getResult(),
                                  type.getShape());
  return filled ? filled.getResult() : Value();
}

/// `value` as `type` says: in the global view of a mesh-placed function a
/// cotangent is `@auto` until propagation decides it; a gradient has its
/// parameter's placement, through a kina.reshard at `loc` (the parameter's
/// annotation), which the propagation turns into the collectives it needs
/// (one all-reduce of a replicated weight's partial gradient), remarks
/// naming that annotation.
Value ReverseMode::placed(Value value, Type type, Location loc) {
  if (value.getType() == type)
    return value;
  return ReshardOp::create(builder, loc, cast<KinaTensorType>(type), value);
}

/// Per device: which mesh axes each argument of the function around `op`
/// (from its `kina.global` type) and each tape value differs over.
LogicalResult ReverseMode::trackVarying() {
  auto caller = op->getParentOfType<func::FuncOp>();
  SmallVector<StringRef> axes = llvm::map_to_vector(
      mesh.getAxes(), [](Attribute a) { return cast<StringAttr>(a).strref(); });
  auto bit = [&](StringRef axis) -> uint64_t {
    auto it = llvm::find(axes, axis);
    return it == axes.end() ? 0 : uint64_t(1) << (it - axes.begin());
  };
  StringRef globalName = KinaDialect::GlobalAttrHelper::getNameStr();
  for (Value input : op.getInputs()) {
    auto arg = dyn_cast<BlockArgument>(input);
    auto global =
        arg && caller && arg.getOwner() == &caller.getBody().front()
            ? caller.getArgAttrOfType<TypeAttr>(arg.getArgNumber(), globalName)
            : TypeAttr();
    auto type = global ? dyn_cast<KinaTensorType>(global.getValue())
                       : KinaTensorType();
    if (!type || !type.getPlacement().isMesh())
      return op.emitOpError("differentiates a per-device (@local) function, "
                            "but cannot tell over which mesh axes an input "
                            "differs: its argument has no `kina.global` mesh "
                            "type (--kina-partition=form=spmd gives one)");
    uint64_t mask = 0;
    for (StringAttr axis : type.getPlacement().getOver())
      mask |= bit(axis);
    for (StringAttr axis : type.getPlacement().getPartial())
      mask |= bit(axis);
    varying[input] |= mask;
  }
  for (Operation *forward : tape) {
    uint64_t mask = 0;
    for (Value operand : forward->getOperands())
      mask |= varying.lookup(operand);
    if (auto collective = dyn_cast<CollectiveOpInterface>(forward)) {
      uint64_t over = bit(collective.getOver());
      mask = isa<AllGatherOp, AllReduceOp>(forward) ? mask & ~over
                                                      : mask | over;
    }
    varying[forward->getResult(0)] = mask;
  }
  return success();
}

/// Adds `cotangent` (from the adjoint of `forward`) to what `value` has
/// received so far. Per device, a use that made a value the same on the
/// devices of a mesh axis into one that differs gives a summand per
/// device: they are summed over the axis.
void ReverseMode::accumulate(Value value, Value cotangent,
                             Operation *forward) {
  // (A collective's adjoint places its cotangent itself.)
  if (mesh && !isa<CollectiveOpInterface>(forward)) {
    uint64_t spread =
        varying.lookup(forward->getResult(0)) & ~varying.lookup(value);
    for (auto [i, axis] : llvm::enumerate(mesh.getAxes())) {
      if (!(spread & (uint64_t(1) << i)))
        continue;
      auto summed = createInferred<AllReduceOp>(
          builder, getAdjointLoc(forward), cotangent, ReductionKind::sum,
          cast<StringAttr>(axis).getValue());
      if (summed)
        cotangent = summed.getResult();
    }
  }
  auto [it, inserted] = cotangents.try_emplace(value, cotangent);
  if (inserted)
    return;
  auto sum = createInferred<AddOp>(builder, getAdjointLoc(forward),
                                   it->second, cotangent);
  it->second = sum ? sum.getResult() : cotangent;
}

/// Marks `param`, when it is a parameter of the function around `op`, as
/// a weight (`kina.weight`): the propagation gathers its splits at rest,
/// the memory ledger counts it as a weight.
static void markWeight(Value param) {
  auto arg = dyn_cast<BlockArgument>(param);
  auto fn = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                : func::FuncOp();
  if (fn && arg.getOwner() == &fn.getBody().front())
    fn.setArgAttr(arg.getArgNumber(),
                  KinaDialect::WeightAttrHelper::getNameStr(),
                  UnitAttr::get(fn.getContext()));
}

/// Marks the `params` and every tape value computed from one.
void ReverseMode::markActive(ArrayRef<Value> params) {
  active.insert(params.begin(), params.end());
  for (Operation *forward : tape)
    if (llvm::any_of(forward->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(forward->result_begin(), forward->result_end());
}

/// Erases the unused ops the adjoint rules built (after `before`, the last
/// forward op), last first, so that an op whose users go goes too.
void ReverseMode::eraseUnused(Operation *before) {
  SmallVector<Operation *> built;
  for (Operation *op = before->getNextNode(); op; op = op->getNextNode())
    built.push_back(op);
  for (Operation *op : llvm::reverse(built))
    if (isOpTriviallyDead(op))
      op->erase();
}

LogicalResult ReverseMode::run() {
  auto fn = symbols.lookup<func::FuncOp>(op.getCallee());
  if (!fn) // verifySymbolUses reports it
    return failure();
  bool perDevice = anyPlacement(fn.getFunctionType(),
                                [](PlacementAttr p) { return p.isLocal(); });
  if (perDevice && !(mesh = MeshOp::lookup(op)))
    return op.emitOpError("differentiates '")
           << fn.getName() << "', a per-device (@local) function, in a "
           << "module without a mesh";
  IRMapping map;
  for (auto [arg, input] : llvm::zip(fn.getArguments(), op.getInputs()))
    map.map(arg, input);
  SmallVector<Value> results;
  if (failed(copyBody(fn, map, results)))
    return failure();
  if (perDevice && failed(trackVarying()))
    return failure();
  Value result = results.front();
  Value seed = cast<KinaTensorType>(result.getType()).getRank() == 0
                   ? constant(1.0f, result.getType(), op.getLoc())
                   : op.getInputs().back();
  if (!seed)
    return failure();
  cotangents[result] = seed;
  SmallVector<Value> params;
  for (int64_t position : op.getWrt())
    params.push_back(op.getInputs()[position]);
  markActive(params);
  for (Operation *forward : llvm::reverse(tape)) {
    auto it = cotangents.find(forward->getResult(0));
    if (it == cotangents.end())
      continue; // does not reach the result
    SmallVector<Value> operandCotangents;
    if (failed(cast<AdjointOpInterface>(forward).buildAdjoint(
            builder, it->second, operandCotangents)))
      return failure();
    if (operandCotangents.size() != forward->getNumOperands())
      return forward->emitOpError("internal error: its adjoint gives ")
             << operandCotangents.size() << " cotangents for "
             << forward->getNumOperands() << " operands";
    for (auto [operand, cotangent] :
         llvm::zip_equal(forward->getOperands(), operandCotangents))
      if (cotangent && active.contains(operand))
        accumulate(operand, cotangent, forward);
  }
  SmallVector<Value> replacements = {
      placed(result, op.getResult(0).getType(), op.getLoc())};
  for (auto [index, position] : llvm::enumerate(op.getWrt())) {
    Value param = op.getInputs()[position];
    Type declaredType = op.getResult(index + 1).getType();
    markWeight(param);
    Value gradient = cotangents.lookup(param);
    if (!gradient)
      gradient = constant(0.0f, param.getType(), op.getLoc());
    if (!gradient)
      return failure();
    // At the parameter (its name in the source), marked as its gradient.
    BlockArgument declared = fn.getArgument(position);
    std::string name = "#" + std::to_string(position);
    if (auto attr = fn.getArgAttrOfType<StringAttr>(
            position, KinaDialect::NameAttrHelper::getNameStr()))
      name = "'" + attr.str() + "'";
    // A gradient declared with another placement than its parameter's
    // (`reverseMode(...) -> (...)`: ZeRO-2's split gradients) is placed as
    // soon as it is complete, so that no full-size gradient outlives its
    // reduce-scatter.
    OpBuilder::InsertionGuard guard(builder);
    if (Operation *complete = gradient.getDefiningOp();
        complete && declaredType != param.getType() &&
        complete->getBlock() == builder.getInsertionBlock())
      builder.setInsertionPointAfter(complete);
    replacements.push_back(placed(gradient, declaredType,
                                  getGradientLoc(name, declared.getLoc())));
  }
  lastForward = tape.empty() ? nullptr : tape.back();
  op->replaceAllUsesWith(replacements);
  op->erase();
  if (lastForward)
    eraseUnused(lastForward);
  return success();
}

/// The ops of `region` (in order) that computing `roots` needs, directly
/// or through each other.
static DenseSet<Operation *> opsComputing(ArrayRef<Value> roots,
                                          const DenseSet<Operation *> &region) {
  DenseSet<Operation *> needed;
  SmallVector<Operation *> work;
  auto want = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && region.contains(def) && needed.insert(def).second)
      work.push_back(def);
  };
  for (Value root : roots)
    want(root);
  while (!work.empty())
    work.pop_back_val()->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        want(v);
    });
  return needed;
}

namespace {
/// Builds the functions a split reverseMode `G` becomes, from its body:
/// the forward up to `forwardEnd`, then the backward.
class SplitBuilder {
public:
  /// `recomputed`: forward ops each backward function computes again
  /// where it reads them (RecomputedNotSaved, from the parameters).
  SplitBuilder(func::FuncOp g, Block::iterator forwardEnd, unsigned numParams,
               const DenseSet<Operation *> &recomputed)
      : g(g), body(g.front()), forwardEnd(forwardEnd), numParams(numParams),
        recomputed(recomputed), builder(g) {}

  /// A function `name` whose arguments are `G`'s first `numParams`
  /// arguments, then `values` (named by `names`), then G's seeds, and whose
  /// body is the ops of the backward in `ops` (all of them if null),
  /// returning `results`.
  func::FuncOp build(StringRef name, ArrayRef<Value> values,
                     function_ref<std::string(size_t)> names,
                     const DenseSet<Operation *> *ops,
                     ArrayRef<Value> results) {
    StringRef nameAttr = KinaDialect::NameAttrHelper::getNameStr();
    FunctionType type = g.getFunctionType();
    SmallVector<Type> inputs(type.getInputs().take_front(numParams));
    for (Value v : values)
      inputs.push_back(v.getType());
    auto seeds = type.getInputs().drop_front(numParams);
    llvm::append_range(inputs, seeds);
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    auto fn =
        func::FuncOp::create(builder, g.getLoc(), name,
                             builder.getFunctionType(inputs, resultTypes));
    auto nameArg = [&](unsigned to, unsigned from) {
      if (auto attr = g.getArgAttrOfType<StringAttr>(from, nameAttr))
        fn.setArgAttr(to, nameAttr, attr);
    };
    for (unsigned i = 0; i < numParams; ++i)
      nameArg(i, i);
    for (size_t i = 0; i < values.size(); ++i)
      fn.setArgAttr(numParams + i, nameAttr, builder.getStringAttr(names(i)));
    for (unsigned i = 0; i < seeds.size(); ++i)
      nameArg(numParams + values.size() + i, numParams + i);
    Block *entry = fn.addEntryBlock();
    IRMapping map;
    for (unsigned i = 0; i < numParams; ++i)
      map.map(body.getArgument(i), entry->getArgument(i));
    for (auto [i, v] : llvm::enumerate(values))
      map.map(v, entry->getArgument(numParams + i));
    for (unsigned i = 0; i < seeds.size(); ++i)
      map.map(body.getArgument(numParams + i),
              entry->getArgument(numParams + values.size() + i));
    OpBuilder inside = OpBuilder::atBlockEnd(entry);
    // First the recomputed forward values its ops (or results) read.
    SmallVector<Value> reads(results);
    for (Operation &o : llvm::make_range(forwardEnd, body.end()))
      if (!isa<func::ReturnOp>(o) && (!ops || ops->contains(&o)))
        o.walk([&](Operation *nested) {
          llvm::append_range(reads, nested->getOperands());
        });
    DenseSet<Operation *> again = opsComputing(reads, recomputed);
    for (Operation &o : llvm::make_range(body.begin(), forwardEnd))
      if (again.contains(&o))
        inside.clone(o, map);
    for (Operation &o : llvm::make_range(forwardEnd, body.end()))
      if (!isa<func::ReturnOp>(o) && (!ops || ops->contains(&o)))
        inside.clone(o, map);
    SmallVector<Value> returned;
    for (Value v : results)
      returned.push_back(map.lookupOrDefault(v));
    func::ReturnOp::create(inside, g.getLoc(), returned);
    return fn;
  }

private:
  func::FuncOp g;
  Block &body;
  Block::iterator forwardEnd;
  unsigned numParams;
  const DenseSet<Operation *> &recomputed;
  OpBuilder builder;
};
} // namespace

/// `G` (a split reverseMode, its body the forward up to `lastForward`,
/// then the backward) as G_forward (F's parameters to F's result and every
/// forward value the backward reads) and G_backward (F's parameters, those
/// values and the seed, to the gradients); with `kina.split_inputs`, the
/// backward as G_input (to the gradients of those wrt positions, and what
/// the rest reads of its values) and G_weight (the same arguments and
/// those values, to the other gradients). G is erased.
static LogicalResult splitForwardAndBackward(func::FuncOp g,
                                             Operation *lastForward,
                                             unsigned numParams,
                                             SymbolTable &symbols) {
  auto inputsAttr = g->getAttrOfType<DenseI64ArrayAttr>(
      KinaDialect::SplitInputsAttrHelper::getNameStr());
  SmallVector<std::string> names = {(g.getName() + "_forward").str()};
  for (const char *suffix : inputsAttr
                                ? std::vector<const char *>{"_input", "_weight"}
                                : std::vector<const char *>{"_backward"})
    names.push_back((g.getName() + suffix).str());
  for (const std::string &name : names)
    if (symbols.lookup(name))
      return g.emitError("split=true defines '")
             << name << "', a name already taken";
  Block &body = g.front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  auto forwardEnd =
      lastForward ? std::next(lastForward->getIterator()) : body.begin();
  DenseSet<Operation *> forwardOps, backwardOps, recomputed;
  for (Operation &o : llvm::make_range(body.begin(), forwardEnd)) {
    forwardOps.insert(&o);
    // From the parameters (and constants) alone, through ops that only
    // repeat or move elements: cheaper to make again than to keep.
    auto fromParams = [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v))
        return arg.getArgNumber() < numParams;
      return recomputed.contains(v.getDefiningOp());
    };
    if (o.hasTrait<RecomputedNotSaved>() &&
        llvm::all_of(o.getOperands(), fromParams))
      recomputed.insert(&o);
  }
  for (Operation &o : llvm::make_range(forwardEnd, body.end()))
    if (&o != returnOp.getOperation())
      backwardOps.insert(&o);
  // What the backward (and the gradients returned) read of the forward.
  llvm::SetVector<Value> saved;
  auto save = [&](Value v) {
    if (Operation *def = v.getDefiningOp();
        def && forwardOps.contains(def) && !recomputed.contains(def))
      saved.insert(v);
  };
  for (Value v : returnOp.getOperands().drop_front())
    save(v);
  for (Operation *o : backwardOps)
    o->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        save(v);
    });
  // In body order, so that the saved values' order does not depend on a
  // set's iteration.
  SmallVector<Value> savedInOrder(saved.begin(), saved.end());
  llvm::sort(savedInOrder, [](Value a, Value b) {
    return a.getDefiningOp()->isBeforeInBlock(b.getDefiningOp());
  });
  Value value = returnOp.getOperand(0);
  if (Operation *def = value.getDefiningOp(); def && !forwardOps.contains(def))
    return g.emitError("internal error: the value of a split reverseMode is "
                       "computed after its forward");

  SplitBuilder split(g, forwardEnd, numParams, recomputed);
  auto numbered = [](const char *prefix) {
    return [prefix](size_t i) { return prefix + std::to_string(i); };
  };
  SmallVector<func::FuncOp> made;
  // G_forward: the forward ops, returning the value and the saved values.
  {
    OpBuilder builder(g);
    SmallVector<Type> results = {value.getType()};
    for (Value v : savedInOrder)
      results.push_back(v.getType());
    auto params = g.getFunctionType().getInputs().take_front(numParams);
    auto forward =
        func::FuncOp::create(builder, g.getLoc(), names[0],
                             builder.getFunctionType(params, results));
    StringRef nameAttr = KinaDialect::NameAttrHelper::getNameStr();
    for (unsigned i = 0; i < numParams; ++i)
      if (auto name = g.getArgAttrOfType<StringAttr>(i, nameAttr))
        forward.setArgAttr(i, nameAttr, name);
    Block *entry = forward.addEntryBlock();
    IRMapping map;
    for (unsigned i = 0; i < numParams; ++i)
      map.map(body.getArgument(i), entry->getArgument(i));
    OpBuilder inside = OpBuilder::atBlockEnd(entry);
    for (Operation &o : llvm::make_range(body.begin(), forwardEnd))
      inside.clone(o, map);
    SmallVector<Value> returned = {map.lookupOrDefault(value)};
    for (Value v : savedInOrder)
      returned.push_back(map.lookup(v));
    func::ReturnOp::create(inside, g.getLoc(), returned);
    made.push_back(forward);
  }
  SmallVector<Value> gradients(returnOp.getOperands().drop_front());
  if (!inputsAttr) {
    made.push_back(split.build(names[1], savedInOrder, numbered("saved_"),
                               nullptr, gradients));
  } else {
    SmallVector<Value> inputGradients, weightGradients;
    for (auto [i, gradient] : llvm::enumerate(gradients))
      (llvm::is_contained(inputsAttr.asArrayRef(), int64_t(i))
           ? inputGradients
           : weightGradients)
          .push_back(gradient);
    DenseSet<Operation *> inputOps = opsComputing(inputGradients, backwardOps);
    DenseSet<Operation *> weightOps =
        opsComputing(weightGradients, backwardOps);
    for (Operation *o : inputOps)
      weightOps.erase(o);
    // What G_weight reads of G_input's values, in body order.
    llvm::SetVector<Value> handed;
    auto hand = [&](Value v) {
      if (Operation *def = v.getDefiningOp(); def && inputOps.contains(def))
        handed.insert(v);
    };
    for (Value v : weightGradients)
      hand(v);
    for (Operation &o : llvm::make_range(forwardEnd, body.end()))
      if (weightOps.contains(&o))
        o.walk([&](Operation *nested) {
          for (Value v : nested->getOperands())
            hand(v);
        });
    SmallVector<Value> inputResults(inputGradients);
    llvm::append_range(inputResults, handed);
    // Both take the saved values; G_weight also what G_input handed on.
    SmallVector<Value> weightArgs(savedInOrder);
    llvm::append_range(weightArgs, handed);
    size_t numSaved = savedInOrder.size();
    made.push_back(split.build(names[1], savedInOrder, numbered("saved_"),
                               &inputOps, inputResults));
    made.push_back(split.build(
        names[2], weightArgs,
        [&](size_t i) {
          return i < numSaved ? "saved_" + std::to_string(i)
                              : "handed_" + std::to_string(i - numSaved);
        },
        &weightOps, weightGradients));
  }
  symbols.erase(g);
  for (func::FuncOp fn : made)
    symbols.insert(fn);
  return success();
}

namespace {
struct DifferentiatePass
    : mlir::kina::impl::DifferentiatePassBase<DifferentiatePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<ReverseModeOp> ops;
    module.walk([&](ReverseModeOp op) { ops.push_back(op); });
    for (ReverseModeOp op : ops) {
      auto g = op->getParentOfType<func::FuncOp>();
      auto callee = symbols.lookup<func::FuncOp>(op.getCallee());
      ReverseMode reverse(op, symbols);
      if (failed(reverse.run()))
        return signalPassFailure();
      if (g->hasAttr(KinaDialect::SplitBackwardAttrHelper::getNameStr()) &&
          failed(splitForwardAndBackward(g, reverse.lastForward,
                                         callee.getNumArguments(), symbols)))
        return signalPassFailure();
    }
  }
};
} // namespace
