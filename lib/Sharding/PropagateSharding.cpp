//===- PropagateSharding.cpp - A placement for every value ----------------===//
//
// Walks each function in order. Every op with a sharding rule gets its
// result placement from its operands' (ShardingRules.h), one mesh axis at
// a time: operands that split the same factor over an axis keep it (the
// others are cut to match, which moves nothing); a contracting factor
// makes the result partial; where operands conflict, the cheapest
// operands to gather are gathered. Partial operands of non-linear ops are
// all-reduced, blocked axes gathered. Where an annotation (an ascription,
// a return or a call) asks for another placement than the one computed,
// the collectives that convert it follow the op. Every collective that
// moves data comes with a remark at the op that forced it, naming the
// placements involved, where they came from, and the bytes each device
// sends.
//
// Functions are propagated callees first, so that a call's results have
// the placements its callee returns: a reverseMode function called from
// another mesh-placed function returns a gradient that is a partial sum
// as such (`@partial`), and its caller reduces it where it uses it, with
// a reduce_scatter where that use is split (ZeRO's optimizer state). A
// weight split over a mesh axis that also splits an input is split at
// rest (ZeRO-3, FSDP): it is gathered for its uses, whatever the greedy
// choice would have kept. A value converted once to a placement is reused
// for the later ops that need it so (the backward reuses the forward's
// gathered weights), except across a `reshard_after_forward` function's
// forward and backward: there the backward gathers a split weight again,
// and makes again the views of it the forward made (`broadcast(w)`).
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/AxisDecision.h"
#include "Kina/Sharding/Cost.h"
#include "Kina/Sharding/Partition.h"
#include "Kina/Sharding/Passes.h"
#include "Kina/Sharding/Reshard.h"
#include "Kina/Sharding/ShardingRules.h"
#include "Kina/Sharding/SimplifyCollectives.h"
#include "Kina/Sharding/SplitReductions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

#include <functional>


namespace mlir::kina {
#define GEN_PASS_DEF_PROPAGATESHARDINGPASS
#include "Kina/Sharding/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

namespace {
class Propagation {
public:
  /// `calledFromMesh`: the functions that a mesh-placed function calls;
  /// `axisOrder`: the order in which each op decides its mesh axes.
  Propagation(MeshOp mesh, mlir::kina::CostRecords *records,
              DenseSet<StringAttr> calledFromMesh,
              ArrayRef<StringAttr> axisOrder)
      : mesh(mesh), records(records),
        calledFromMesh(std::move(calledFromMesh)), axisOrder(axisOrder) {}

  LogicalResult run(func::FuncOp fn);

private:
  /// The partial sums `value` (to be converted to `to` for a gradient
  /// result) may stay, when the caller of its function reduces them.
  PlacementAttr leftPartial(Value value, PlacementAttr to);
  /// The dim of operand `operand` of `op` to reduce-scatter its partial
  /// sum over `axis` to: the split over `axis` that the op's result is
  /// declared or asked to have, or that another operand has, on a
  /// parallel factor the operand has; none: an all_reduce.
  std::optional<int64_t> scatterDim(Operation *op, const ShardingRule &rule,
                                    unsigned operand, StringAttr axis);
  /// Gathers the weights among `op`'s operands split at rest (over a mesh
  /// axis that splits an input of the function), each remark saying what
  /// the greedy choice would have sent.
  LogicalResult gatherAtRest(Operation *op, const ShardingRule &rule);
  LogicalResult propagate(Operation *op, const ShardingRule &rule);
  /// Converts each value `ret` returns to its declared result placement
  /// (or leaves it partial, leftPartial): a value no op of the function
  /// placed, a call's result (a callee's gradient returned partial).
  LogicalResult placeReturned(func::ReturnOp ret);
  LogicalResult lowerReshard(ReshardOp op);
  /// `value` converted to `target` before `at`, with a remark at `at`
  /// saying why and, where the decision had a choice, what it weighed;
  /// `serves`: the value the conversion is for (a gradient), or "".
  /// `value`, a broadcast used only by `at`, converted to `target` by
  /// converting the broadcast's input and broadcasting it again (its block
  /// of the target): a gather before the broadcast grows the value sends
  /// fewer bytes. None when that does not apply.
  std::optional<FailureOr<Value>>
  convertBroadcastInput(Operation *at, Value value, PlacementAttr target,
                        const Twine &why, Location loc);
  /// The broadcasts convertBroadcastInput made again, erased once the
  /// function is propagated.
  SmallVector<Operation *> replacedViews;
  /// The collectives that convert `value` to `target`, before `at` and
  /// located at `where` (default: `at`'s location).
  FailureOr<Value> convert(Operation *at, Value value, PlacementAttr target,
                           const Twine &why,
                           ArrayRef<mlir::kina::WeighedPlan> weighed = {},
                           StringRef serves = "",
                           std::optional<Location> where = std::nullopt);
  /// Why claiming operand `operand` of `op`, split on `dim` over `axis`,
  /// is gathered under `decision`.
  std::string whyGathered(Operation *op, const AxisDecision &decision,
                          StringAttr axis, unsigned operand,
                          int64_t dim) const;
  std::string describe(Value value) const;
  /// What asks for placement `asked` of `op`'s result: the function's
  /// result type when the result is returned where that placement is
  /// declared (the frontend gives the returned op the declared type), else
  /// the annotation on `op`'s line.
  std::string requester(Operation *op, PlacementAttr asked) const;

  MeshOp mesh;
  /// Where the records of the collectives inserted go, when anywhere.
  mlir::kina::CostRecords *records;
  DenseSet<StringAttr> calledFromMesh;
  SmallVector<StringAttr> axisOrder;
  /// The function being propagated, whether it reuses no conversion of
  /// its forward in its backward, and the mesh axes that split one of
  /// its inputs (parameters that are not weights).
  func::FuncOp function;
  bool reshardAfterForward = false;
  llvm::SetVector<StringAttr> dataAxes;
  /// Conversions made: (value, placement, in the backward) -> the
  /// converted value, reused by later ops that need the same.
  DenseMap<std::tuple<Value, Attribute, int>, Value> converted;
  /// Where each value's placement came from (an annotation), for remarks.
  DenseMap<Value, std::string> origin;
  /// Where a value's split or partial sum over one mesh axis came from,
  /// when an op's rule chose it (a value split over two axes may owe each
  /// to another annotation); else `origin`.
  DenseMap<std::pair<Value, StringAttr>, std::string> axisOrigin;
  std::string originOver(Value value, StringAttr axis) const {
    auto it = axisOrigin.find({value, axis});
    return it != axisOrigin.end() ? it->second : origin.lookup(value);
  }
  /// Splits asked of undecided values by the ops that use them, flowed
  /// back from annotations (`askBackward`), with the annotation's text.
  struct Asked {
    PlacementAttr placement;
    std::string by;
  };
  DenseMap<Value, Asked> asked;
  void askBackward(ArrayRef<Operation *> ops);
  /// The split that `asked` wants for `op`'s result over `axis`, when the
  /// operands can all be cut to it (a free all_slice): then they are, and
  /// the result dim is returned.
  FailureOr<std::optional<int64_t>>
  splitAsAsked(Operation *op, const ShardingRule &rule, StringAttr axis,
               PlacementAttr result);
};
} // namespace

std::string Propagation::describe(Value value) const {
  std::string text = placementOf(value).str();
  auto it = origin.find(value);
  if (it != origin.end() && !it->second.empty())
    text += ", from " + it->second;
  return text;
}

LogicalResult Propagation::placeReturned(func::ReturnOp ret) {
  for (OpOperand &returned : ret->getOpOperands()) {
    Value value = returned.get();
    auto declared = dyn_cast<KinaTensorType>(
        function.getResultTypes()[returned.getOperandNumber()]);
    if (!declared || !declared.getPlacement().isMesh() ||
        !placementOf(value).isMesh())
      continue;
    PlacementAttr to = leftPartial(value, declared.getPlacement());
    if (placementOf(value) == to)
      continue;
    FailureOr<Value> converted =
        convert(ret, value, to,
                "the result type of '" + function.getName() + "' (" +
                    locationText(function.getLoc()) + ") asks for " +
                    declared.getPlacement().str());
    if (failed(converted))
      return failure();
    returned.set(*converted);
  }
  return success();
}

std::string Propagation::requester(Operation *op, PlacementAttr asked) const {
  Value value = op->getResult(0);
  auto fn = op->getParentOfType<func::FuncOp>();
  for (OpOperand &use : value.getUses())
    if (isa<func::ReturnOp>(use.getOwner()) &&
        cast<KinaTensorType>(
            fn.getResultTypes()[use.getOperandNumber()]).getPlacement() ==
            asked)
      return "the result type of '" + fn.getName().str() + "' (" +
             locationText(fn.getLoc()) + ")";
  return "the annotation at " + locationText(op->getLoc());
}

/// The parameter `value` is, or is a broadcast, reshape or transpose of;
/// null for any other value.
static BlockArgument parameterViewed(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<BroadcastOp, ReshapeOp, TransposeOp>(op))
      return {};
    value = op->getOperand(0);
  }
  return cast<BlockArgument>(value);
}

/// Whether `value` is a view of a parameter: its split is the parameter's
/// own annotation, not one it inherited.
static bool isParameterView(Value value) {
  return bool(parameterViewed(value));
}

std::optional<FailureOr<Value>>
Propagation::convertBroadcastInput(Operation *at, Value value,
                                   PlacementAttr target, const Twine &why,
                                   Location loc) {
  auto broadcast = value.getDefiningOp<BroadcastOp>();
  PlacementAttr placement = placementOf(value);
  if (!broadcast || !value.hasOneUse() || !placement.isMesh() ||
      !target.isMesh() || !placement.getPartial().empty() ||
      !target.getPartial().empty())
    return std::nullopt;
  Value input = broadcast.getInput();
  auto inputType = cast<KinaTensorType>(input.getType());
  auto resultType = cast<KinaTensorType>(value.getType());
  int64_t offset = resultType.getRank() - inputType.getRank();
  // The input dim a result dim comes from, unless the broadcast
  // stretches it (each device fills its block of a stretched dim).
  auto inputDim = [&](int64_t dim) -> std::optional<int64_t> {
    int64_t i = dim - offset;
    if (i < 0 || inputType.getDimSize(i) != resultType.getDimSize(dim))
      return std::nullopt;
    return i;
  };
  // Worth it only where a split of the input must go: that gather then
  // moves the input's bytes, not the grown result's.
  bool gathersInput = false;
  for (int64_t dim : placement.getAxes())
    if (inputDim(dim) && target.getSplitOf(dim) != placement.getSplitOf(dim))
      gathersInput = true;
  if (!gathersInput)
    return std::nullopt;
  PlacementAttr inputTarget = PlacementAttr::getReplicated(value.getContext());
  for (int64_t dim : target.getAxes())
    if (std::optional<int64_t> i = inputDim(dim))
      inputTarget = inputTarget.withSplit(*i, target.getSplitOf(dim));
  FailureOr<Value> whole = convert(at, input, inputTarget, why, {}, "", loc);
  if (failed(whole))
    return FailureOr<Value>(failure());
  OpBuilder builder(at);
  Operation *again = builder.clone(*broadcast);
  again->setOperand(0, *whole);
  again->getResult(0).setType(resultType.withPlacement(target));
  origin[again->getResult(0)] = origin.lookup(value);
  replacedViews.push_back(broadcast);
  return FailureOr<Value>(again->getResult(0));
}

FailureOr<Value> Propagation::convert(Operation *at, Value value,
                                      PlacementAttr target, const Twine &why,
                                      ArrayRef<mlir::kina::WeighedPlan> weighed,
                                      StringRef serves,
                                      std::optional<Location> where) {
  // The same conversion made for an earlier op serves this one.
  Location loc = where.value_or(at->getLoc());
  bool backward = reshardAfterForward && isAdjointLoc(loc);
  auto key = std::make_tuple(value, Attribute(target), int(backward));
  if (Value earlier = converted.lookup(key);
      earlier && earlier.getDefiningOp()->getBlock() == at->getBlock() &&
      earlier.getDefiningOp()->isBeforeInBlock(at))
    return earlier;
  if (std::optional<FailureOr<Value>> rebroadcast =
          convertBroadcastInput(at, value, target, why, loc)) {
    if (succeeded(*rebroadcast))
      converted[key] = **rebroadcast;
    return *rebroadcast;
  }
  OpBuilder builder(at);
  SmallVector<Operation *> made;
  std::vector<mlir::kina::WeighedPlan> orders;
  FailureOr<Value> result =
      convertPlacement(builder, loc, value, target,
                       [&](Operation *op) { made.push_back(op); }, &orders);
  if (failed(result))
    return failure();
  if (*result != value)
    converted[key] = *result;
  ArrayRef<mlir::kina::WeighedPlan> alternatives =
      !orders.empty() ? ArrayRef<mlir::kina::WeighedPlan>(orders) : weighed;
  auto fn = at->getParentOfType<func::FuncOp>();
  for (Operation *op : made) {
    // Each step of a chain says the placement its own input has, and the
    // annotation behind the mesh axis it moves data over.
    Value input = op->getOperand(0);
    auto over = StringAttr::get(op->getContext(),
                                cast<CollectiveOpInterface>(op).getOver());
    origin[op->getResult(0)] = origin.lookup(value);
    for (Attribute axis : mesh.getAxes())
      if (axisOrigin.count({input, cast<StringAttr>(axis)}))
        axisOrigin[{op->getResult(0), cast<StringAttr>(axis)}] =
            axisOrigin.lookup({input, cast<StringAttr>(axis)});
    int64_t bytes = bytesSentPerDevice(op);
    if (bytes == 0)
      continue; // all_slice: each device keeps its block, nothing moves
    mlir::kina::CollectiveRecord record;
    record.function = fn.getName().str();
    record.location = locationText(loc);
    record.kind = op->getName().stripDialect().str();
    record.over = over.str();
    record.placement = placementOf(input).str();
    record.origin = originOver(input, over);
    record.serves = serves.str();
    record.reason = why.str();
    record.bytesPerDevice = bytes;
    record.weighed.assign(alternatives.begin(), alternatives.end());
    // At the op's location, without the op (Operation::emitRemark would
    // print it beside the remark): a remark is one located line.
    mlir::emitRemark(loc) << mlir::kina::remarkText(record);
    if (records)
      records->collectives.push_back(std::move(record));
  }
  return result;
}

LogicalResult Propagation::lowerReshard(ReshardOp op) {
  PlacementAttr from = placementOf(op.getInput());
  PlacementAttr to = placementOf(op.getResult());
  // Distributions from and gathers to the host stay: they are the
  // boundary of the mesh-placed computation.
  if (!from.isMesh() || !to.isMesh())
    return success();
  // A reverseMode function's gradient takes its parameter's placement, at
  // the parameter's location: what converts it serves that gradient.
  std::optional<std::string> gradient = getGradientOf(op.getLoc());
  if (gradient) {
    PlacementAttr partial = leftPartial(op.getInput(), to);
    if (partial != to) {
      mlir::emitRemark(op.getLoc())
          << "the gradient of " << *gradient << " is returned " << partial.str()
          << ", a partial sum: the callers of '"
          << op->getParentOfType<func::FuncOp>().getName()
          << "' reduce it where they use it (an all_reduce where whole, a "
             "reduce_scatter where split)";
      to = partial;
    }
  }
  FailureOr<Value> converted =
      convert(op, op.getInput(), to,
              "the annotation at " + locationText(op.getLoc()) + " asks for " +
                  to.str(),
              /*weighed=*/{}, gradient ? "the gradient of " + *gradient : "");
  if (failed(converted))
    return failure();
  op.getResult().replaceAllUsesWith(*converted);
  op.erase();
  return success();
}

PlacementAttr Propagation::leftPartial(Value value, PlacementAttr to) {
  // Only a value returned as it is, from a function whose callers are on
  // the mesh (a host caller would need it summed).
  if (!value.getDefiningOp() || !function ||
      !calledFromMesh.contains(function.getSymNameAttr()))
    return to;
  PlacementAttr placement = placementOf(value);
  for (StringAttr axis : placement.getPartial())
    if (!to.getAxisSplitBy(axis) && !to.isPartialOver(axis))
      to = to.withPartial(axis);
  return to;
}

std::optional<int64_t> Propagation::scatterDim(Operation *op,
                                               const ShardingRule &rule,
                                               unsigned operand,
                                               StringAttr axis) {
  int64_t size = *mesh.getAxisSize(axis.getValue());
  auto type = cast<KinaTensorType>(op->getOperand(operand).getType());
  auto viaFactor = [&](int64_t factor) -> std::optional<int64_t> {
    if (factor < 0 || rule.factors[factor] != ShardingRule::Kind::Parallel)
      return std::nullopt;
    std::optional<int64_t> dim = rule.operandDimOf(operand, factor);
    if (!dim || type.getPlacement().getSplitOf(*dim) ||
        type.getPlacement().getAxisSplitBy(axis) ||
        type.getDimSize(*dim) % size != 0)
      return std::nullopt;
    return dim;
  };
  PlacementAttr wants = placementOf(op->getResult(0));
  if (!wants.isMesh()) {
    auto it = asked.find(op->getResult(0));
    wants = it != asked.end() ? it->second.placement : PlacementAttr();
  }
  if (wants)
    if (std::optional<int64_t> dim = wants.getAxisSplitBy(axis))
      if (std::optional<int64_t> found = viaFactor(rule.resultDims[*dim]))
        return found;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (i != operand)
      if (std::optional<int64_t> dim =
              placementOf(op->getOperand(i)).getAxisSplitBy(axis))
        if (std::optional<int64_t> found =
                viaFactor(rule.operandDims[i][*dim]))
          return found;
  return std::nullopt;
}

/// The weight (a `kina.weight` parameter) that `value` is, or a broadcast,
/// reshape or transpose of; null for any other value.
static BlockArgument weightOf(Value value) {
  BlockArgument arg = parameterViewed(value);
  if (!arg)
    return {};
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!fn || !fn.getArgAttr(arg.getArgNumber(),
                            KinaDialect::WeightAttrHelper::getNameStr()))
    return {};
  return arg;
}

/// `view` (a chain of views of a parameter) made again from the
/// parameter at `builder`'s point, each op located at `loc`.
static Value viewAgain(Value view, OpBuilder &builder, Location loc) {
  Operation *def = view.getDefiningOp();
  if (!def)
    return view;
  IRMapping sources;
  sources.map(def->getOperand(0),
              viewAgain(def->getOperand(0), builder, loc));
  Operation *copy = builder.clone(*def, sources);
  copy->setLoc(loc);
  return copy->getResult(0);
}

/// In a `reshard_after_forward` function, the backward reads a view of a
/// split weight that the forward computed (`x @ broadcast(w)`'s
/// `broadcast(w)`, which the product's adjoint multiplies by) as a view
/// made again from the weight where the backward first needs it: the
/// backward gathers the weight again, and the forward's gathered copy
/// dies with its last forward use instead of living until the backward.
static void viewWeightsAgainInBackward(func::FuncOp fn) {
  DenseMap<Value, Value> again; // the forward's view -> the backward's
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    if (!isAdjointLoc(op->getLoc()))
      continue;
    for (OpOperand &use : op->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      BlockArgument weight = weightOf(use.get());
      if (!def || isAdjointLoc(def->getLoc()) || !weight ||
          placementOf(weight).getAxes().empty())
        continue;
      Value &made = again[use.get()];
      if (!made) {
        OpBuilder builder(op);
        made = viewAgain(use.get(), builder, op->getLoc());
      }
      use.set(made);
    }
  }
}

LogicalResult Propagation::gatherAtRest(Operation *op,
                                        const ShardingRule &rule) {
  for (StringAttr axis : dataAxes) {
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      std::optional<int64_t> dim =
          placementOf(op->getOperand(i)).getAxisSplitBy(axis);
      // A view of a weight that is itself split over the axis (not a
      // broadcast cut over the batch).
      BlockArgument weight = dim ? weightOf(op->getOperand(i)) : nullptr;
      if (!weight || !placementOf(weight).getAxisSplitBy(axis))
        continue;
      // What the greedy choice weighed, for the remark.
      AxisDecision decision =
          decideAxis(op, rule, axis, placementOf(op->getResult(0)), mesh);
      std::string why =
          origin.lookup(weight) + " is split over '" +
          axis.getValue().str() + "' at rest ('" + axis.getValue().str() +
          "' splits an input of '" + function.getName().str() +
          "'): gathered for its use, as ZeRO-3 and FSDP do";
      FailureOr<Value> whole =
          convert(op, op->getOperand(i),
                  placementOf(op->getOperand(i)).withoutSplit(*dim), why,
                  decision.weighed);
      if (failed(whole))
        return failure();
      op->setOperand(i, *whole);
    }
  }
  return success();
}

std::string Propagation::whyGathered(Operation *op,
                                     const AxisDecision &decision,
                                     StringAttr axis, unsigned operand,
                                     int64_t dim) const {
  std::string name = "operand #" + std::to_string(operand);
  if (!decision.keep)
    return "gathering costs fewer bytes than keeping axis " +
           std::to_string(dim) + " of " + name +
           " split (which would need an all_reduce of the result)";
  if (!decision.keepable)
    return op->getName().getStringRef().str() + " cannot keep axis " +
           std::to_string(dim) + " of " + name + " split over '" +
           axis.getValue().str() + "'";
  // The first operand that keeps the split, as its remark names it.
  std::string kept;
  for (auto [i, factor] : decision.claims)
    if (factor == *decision.keep && kept.empty())
      kept = "operand #" + std::to_string(i) + " (" +
             describe(op->getOperand(i)) + ")";
  return name + " splits another axis over '" + axis.getValue().str() +
         "' than " + kept;
}

LogicalResult Propagation::propagate(Operation *op, const ShardingRule &rule) {
  std::string opName = op->getName().getStringRef().str();
  auto operandName = [](unsigned i) { return "operand #" + std::to_string(i); };
  auto replaceOperand =
      [&](unsigned i, PlacementAttr target, const Twine &why,
          ArrayRef<mlir::kina::WeighedPlan> weighed = {}) -> LogicalResult {
    FailureOr<Value> converted =
        convert(op, op->getOperand(i), target, why, weighed);
    if (failed(converted))
      return failure();
    op->setOperand(i, *converted);
    return success();
  };

  // Partial sums stay partial through a sum of equally placed values, and
  // through a linear op of one operand that does not grow it and is that
  // operand's only user: reducing after a sum over another axis (a bias's
  // gradient summed over the batch, then the positions) moves fewer bytes
  // than before it. (With other users, one reduction serves them all.)
  bool linear =
      passesPartialSums(op) &&
      (isa<AddOp, SubOp>(op)
           ? llvm::all_equal(llvm::map_range(op->getOperands(), placementOf))
           : op->getOperand(0).hasOneUse());
  // A partial operand of any other op is reduced: scattered to the split
  // the op keeps over the axis (its result's, another operand's), else
  // all-reduced.
  for (unsigned i = 0; i < op->getNumOperands() && !linear; ++i) {
    PlacementAttr placement = placementOf(op->getOperand(i));
    for (StringAttr axis : placement.getPartial()) {
      PlacementAttr whole = placementOf(op->getOperand(i)).withoutPartial(axis);
      std::optional<int64_t> dim = scatterDim(op, rule, i, axis);
      if (failed(replaceOperand(
              i, dim ? whole.withSplit(*dim, axis) : whole,
              operandName(i) + " is a partial sum, and " + opName +
                  (dim ? " keeps axis " + std::to_string(*dim) +
                             " split over '" + axis.getValue().str() + "'"
                       : std::string(" needs whole values")))))
        return failure();
    }
  }
  // Axes the op needs whole.
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    PlacementAttr placement = placementOf(op->getOperand(i));
    for (int64_t dim : placement.getAxes()) {
      int64_t factor = rule.operandDims[i][dim];
      if (factor >= 0 && rule.factors[factor] != ShardingRule::Kind::Blocked)
        continue;
      if (failed(replaceOperand(
              i, placementOf(op->getOperand(i)).withoutSplit(dim),
              opName + " needs axis " + Twine(dim) + " of " + operandName(i) +
                  " whole")))
        return failure();
    }
  }

  if (failed(gatherAtRest(op, rule)))
    return failure();

  // A sum of values partial over the same axes is partial over them too,
  // a partial sum that comes from where the first operand's came from.
  PlacementAttr result = PlacementAttr::getReplicated(op->getContext());
  std::string resultOrigin;
  if (linear)
    for (StringAttr axis : placementOf(op->getOperand(0)).getPartial()) {
      result = result.withPartial(axis);
      axisOrigin[{op->getResult(0), axis}] =
          originOver(op->getOperand(0), axis);
      if (resultOrigin.empty())
        resultOrigin = originOver(op->getOperand(0), axis);
    }
  auto resultType = cast<KinaTensorType>(op->getResult(0).getType());
  for (StringAttr axis : axisOrder) {
    // A gradient function's products and its backward's sums keep the
    // batch split over a data axis (a weight's gradient, a broadcast
    // weight's summed over the batch, is then a partial sum over it,
    // reduced once), even where gathering the batch would send fewer
    // bytes: data parallelism is what the annotations ask for.
    bool keepData =
        dataAxes.contains(axis) &&
        (isa<MatmulOp>(op) || (isa<SumOp>(op) && isAdjointLoc(op->getLoc())));
    AxisDecision decision = decideAxis(op, rule, axis, result, mesh, keepData);
    if (keepData && decision.keep && !decision.weighed.empty() &&
        decision.weighed.back().bytes < decision.chosenBytes)
      mlir::emitRemark(op->getLoc())
          << "kept the split over '" << axis.getValue()
          << "', the data axis of '" << function.getName()
          << "' (the annotations ask for data parallelism): "
          << decision.chosenBytes << " bytes per device where gathering "
          << "every operand would send " << decision.weighed.back().bytes;
    if (decision.claims.empty()) {
      FailureOr<std::optional<int64_t>> dim =
          splitAsAsked(op, rule, axis, result);
      if (failed(dim))
        return failure();
      if (*dim) {
        result = result.withSplit(**dim, axis);
        axisOrigin[{op->getResult(0), axis}] = asked[op->getResult(0)].by;
        if (resultOrigin.empty())
          resultOrigin = asked[op->getResult(0)].by;
      }
      continue;
    }
    // Gather the operands whose split is not kept, each remark saying why
    // and what was weighed.
    for (auto [i, factor] : decision.claims) {
      if (decision.keeps(i))
        continue;
      int64_t dim = *placementOf(op->getOperand(i)).getAxisSplitBy(axis);
      if (failed(replaceOperand(
              i, placementOf(op->getOperand(i)).withoutSplit(dim),
              whyGathered(op, decision, axis, i, dim), decision.weighed)))
        return failure();
    }
    if (!decision.keepable)
      continue;
    int64_t keep = *decision.keep;
    // Cut the operands that have the factor whole: nothing moves.
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      std::optional<int64_t> dim = rule.operandDimOf(i, keep);
      PlacementAttr placement = placementOf(op->getOperand(i));
      if (dim && placement.getSplitOf(*dim) != axis &&
          failed(replaceOperand(i, placement.withSplit(*dim, axis), "")))
        return failure();
    }
    // The result's split over this axis comes from the operands that keep
    // it; a parameter's own annotation first (a row-parallel weight makes
    // a product partial, more than the activation split before it).
    std::string keptFrom;
    for (bool direct : {true, false})
      for (auto [i, factor] : decision.claims)
        if (factor == keep && keptFrom.empty() &&
            (!direct || isParameterView(op->getOperand(i))))
          keptFrom = originOver(op->getOperand(i), axis);
    axisOrigin[{op->getResult(0), axis}] = keptFrom;
    if (resultOrigin.empty())
      resultOrigin = keptFrom;
    result = decision.resultDim ? result.withSplit(*decision.resultDim, axis)
                                : result.withPartial(axis);
  }

  Value value = op->getResult(0);
  PlacementAttr wanted = resultType.getPlacement();
  value.setType(resultType.withPlacement(result));
  origin[value] = resultOrigin;
  if (wanted.isAuto() || wanted == result)
    return success();
  // An annotation asks for another placement: convert after the op (and
  // say so at the op).
  Operation *next = op->getNextNode();
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : value.getUses())
    uses.push_back(&use);
  std::string asker = requester(op, wanted);
  FailureOr<Value> converted =
      convert(next, value, wanted, asker + " asks for " + wanted.str(), {},
              "", op->getLoc());
  if (failed(converted))
    return failure();
  for (OpOperand *use : uses)
    use->set(*converted);
  origin[*converted] = asker;
  return success();
}

void Propagation::askBackward(ArrayRef<Operation *> ops) {
  // Placements flow both ways, as in GSPMD and Shardy: a split that an
  // annotation asks of a value (an ascription, a reshard) is asked of the
  // undecided values it is computed from, dim by dim through each op's
  // rule, so that they are computed split rather than computed whole and
  // then cut. The last use in program order asks first; a split that
  // conflicts with one already asked is dropped.
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1)
      continue;
    Value value = op->getResult(0);
    auto type = dyn_cast<KinaTensorType>(value.getType());
    if (!type)
      continue;
    std::optional<ShardingRule> rule = getShardingRule(op);
    Asked wants{type.getPlacement(),
                "the annotation at " + locationText(op->getLoc())};
    // An annotated result asks its own op too (cut operands that are
    // parameters rather than compute it whole and cut it after).
    if (wants.placement.isMesh() && rule && !wants.placement.getAxes().empty())
      asked.try_emplace(value, wants);
    if (!wants.placement.isMesh()) {
      auto it = asked.find(value);
      if (it == asked.end())
        continue;
      wants = it->second;
    }
    if (!rule && !isa<ReshardOp>(op))
      continue;
    // A gradient split over a data axis (ZeRO-3's weights at rest) is a
    // partial sum over the batch reduce-scattered at the end: asking its
    // split back would cut the forward's activations across the batch's
    // split.
    bool gradient = isa<ReshardOp>(op) && getGradientOf(op->getLoc());
    for (auto [dim, axis] : llvm::zip_equal(wants.placement.getAxes(),
                                            wants.placement.getOver())) {
      if (gradient && dataAxes.contains(axis))
        continue;
      int64_t size = *mesh.getAxisSize(axis.getValue());
      int64_t factor = rule ? rule->resultDims[dim] : -1;
      if (rule && (factor < 0 ||
                   rule->factors[factor] != ShardingRule::Kind::Parallel))
        continue;
      for (unsigned i = 0; i < op->getNumOperands(); ++i) {
        // A reshard's operand is the same tensor, dim for dim.
        std::optional<int64_t> operandDim =
            rule ? rule->operandDimOf(i, factor) : std::optional(dim);
        Value operand = op->getOperand(i);
        auto operandType = dyn_cast<KinaTensorType>(operand.getType());
        if (!operandDim || !operandType ||
            !operandType.getPlacement().isAuto() ||
            operandType.getDimSize(*operandDim) % size != 0)
          continue;
        Asked &before = asked[operand];
        if (!before.placement)
          before = {PlacementAttr::getReplicated(op->getContext()), wants.by};
        if (before.placement.getSplitOf(*operandDim) ||
            before.placement.getAxisSplitBy(axis))
          continue;
        before.placement = before.placement.withSplit(*operandDim, axis);
      }
    }
  }
}

FailureOr<std::optional<int64_t>>
Propagation::splitAsAsked(Operation *op, const ShardingRule &rule,
                          StringAttr axis, PlacementAttr result) {
  auto it = asked.find(op->getResult(0));
  if (it == asked.end() || result.isPartialOver(axis))
    return std::optional<int64_t>();
  std::optional<int64_t> dim = it->second.placement.getAxisSplitBy(axis);
  int64_t factor = dim ? rule.resultDims[*dim] : -1;
  if (factor < 0 || rule.factors[factor] != ShardingRule::Kind::Parallel)
    return std::optional<int64_t>();
  int64_t size = *mesh.getAxisSize(axis.getValue());
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    std::optional<int64_t> operandDim = rule.operandDimOf(i, factor);
    PlacementAttr placement = placementOf(op->getOperand(i));
    if (operandDim &&
        (placement.getSplitOf(*operandDim) || placement.getAxisSplitBy(axis) ||
         placement.isPartialOver(axis) ||
         cast<KinaTensorType>(op->getOperand(i).getType())
                     .getDimSize(*operandDim) %
                 size !=
             0))
      return std::optional<int64_t>();
  }
  // Cut the operands that have the factor: nothing moves.
  OpBuilder builder(op);
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    std::optional<int64_t> operandDim = rule.operandDimOf(i, factor);
    if (!operandDim)
      continue;
    FailureOr<Value> cut =
        convert(op, op->getOperand(i),
                placementOf(op->getOperand(i)).withSplit(*operandDim, axis), "");
    if (failed(cut))
      return failure();
    op->setOperand(i, *cut);
  }
  return dim;
}

LogicalResult Propagation::run(func::FuncOp fn) {
  if (fn.isExternal())
    return success();
  function = fn;
  reshardAfterForward =
      KinaDialect::ReshardAfterForwardAttrHelper(fn.getContext()).isAttrPresent(
          fn);
  converted.clear();
  dataAxes.clear();
  if (reshardAfterForward)
    viewWeightsAgainInBackward(fn);
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    auto name = fn.getArgAttrOfType<StringAttr>(
        i, KinaDialect::NameAttrHelper::getNameStr());
    origin[arg] = name ? "parameter '" + name.str() + "'"
                       : "argument #" + std::to_string(i);
    auto type = dyn_cast<KinaTensorType>(arg.getType());
    if (!fn.getArgAttr(i, KinaDialect::WeightAttrHelper::getNameStr()) &&
        type && type.getPlacement().isMesh())
      dataAxes.insert_range(type.getPlacement().getOver());
  }
  // Data axes are a gradient function's (one with weights).
  if (llvm::none_of(fn.getArguments(),
                    [](BlockArgument arg) { return bool(weightOf(arg)); }))
    dataAxes.clear();
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) { ops.push_back(op); });
  askBackward(ops);
  for (Operation *op : ops) {
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      if (failed(lowerReshard(reshard)))
        return failure();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(placeReturned(ret)))
        return failure();
      continue;
    }
    std::optional<ShardingRule> rule = getShardingRule(op);
    if (!rule || llvm::none_of(op->getOperands(), [](Value v) {
          return placementOf(v).isOnMesh();
        })) {
      // Results the frontend placed (constants, annotated values) are
      // where annotations come from; a call's, its callee's result.
      auto call = dyn_cast<func::CallOp>(op);
      for (OpResult result : op->getResults())
        if (auto type = dyn_cast<KinaTensorType>(result.getType());
            type && type.getPlacement().isMesh() && !origin.count(result))
          origin[result] =
              call ? "result #" + std::to_string(result.getResultNumber()) +
                         " of '" + call.getCallee().str() + "'"
                   : "the annotation at " + locationText(op->getLoc());
      continue;
    }
    for (Value operand : op->getOperands())
      if (placementOf(operand).isAuto())
        return op->emitError("internal error: operand placement undecided");
    auto type = cast<KinaTensorType>(op->getResult(0).getType());
    if (!type.getPlacement().isAuto())
      origin[op->getResult(0)] = requester(op, type.getPlacement());
    // A reduction over a split axis computed from per-device statistics:
    // its ops are placed in turn, and the last stands for it (with the
    // placement an annotation asked of it).
    OpBuilder builder(op);
    SmallVector<Operation *> expanded = expandOverSplitAxis(builder, op, mesh);
    for (Operation *step : expanded) {
      std::optional<ShardingRule> stepRule = getShardingRule(step);
      if (stepRule && failed(propagate(step, *stepRule)))
        return failure();
    }
    if (!expanded.empty()) {
      Value whole = expanded.back()->getResult(0);
      if (!type.getPlacement().isAuto())
        whole = ReshardOp::create(builder, op->getLoc(), type, whole);
      op->getResult(0).replaceAllUsesWith(whole);
      op->erase();
      if (auto reshard = whole.getDefiningOp<ReshardOp>();
          reshard && failed(lowerReshard(reshard)))
        return failure();
      continue;
    }
    if (failed(propagate(op, *rule)))
      return failure();
  }
  for (Operation *view : llvm::reverse(replacedViews))
    if (view->use_empty())
      view->erase();
  replacedViews.clear();
  return success();
}

/// An all_gather of a transpose or reshape (of nothing else) gathers the
/// value they move instead: the same bytes, the communication right after
/// the computation that split it, as the hand-written splits place their
/// concats (the context of per-head attention, not its reshaped copy).
static void hoistGathers(func::FuncOp fn) {
  SmallVector<AllGatherOp> gathers;
  fn.walk([&](AllGatherOp gather) { gathers.push_back(gather); });
  for (AllGatherOp gather : gathers) {
    while (true) {
      Operation *mover = gather.getInput().getDefiningOp();
      if (!mover || !isa<TransposeOp, ReshapeOp>(mover) || !mover->hasOneUse())
        break;
      std::optional<ShardingRule> rule = getShardingRule(mover);
      int64_t factor = rule->resultDims[gather.getAxis()];
      std::optional<int64_t> dim =
          factor >= 0 ? rule->operandDimOf(0, factor) : std::nullopt;
      Value moved = mover->getOperand(0);
      if (!dim || placementOf(moved).getSplitOf(*dim) !=
                      StringAttr::get(fn.getContext(), gather.getOver()))
        break;
      OpBuilder builder(mover);
      auto earlier = createInferred<AllGatherOp>(builder, gather.getLoc(),
                                                 moved, *dim, gather.getOver());
      if (!earlier)
        break;
      mover->setOperand(0, earlier);
      // The moved value is now whole: the gather's placement, its shape.
      Value result = mover->getResult(0);
      result.setType(cast<KinaTensorType>(result.getType())
                         .withPlacement(placementOf(gather.getResult())));
      gather.getResult().replaceAllUsesWith(mover->getResult(0));
      gather.erase();
      gather = earlier;
    }
  }
}

/// The module's functions, each after the functions it calls (a program
/// has no recursion), otherwise in the module's order.
static SmallVector<func::FuncOp> calleesFirst(ModuleOp module,
                                              SymbolTable &symbols) {
  SmallVector<func::FuncOp> order;
  DenseSet<Operation *> visited;
  std::function<void(func::FuncOp)> visit = [&](func::FuncOp fn) {
    if (!visited.insert(fn).second)
      return;
    fn.walk([&](func::CallOp call) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        visit(callee);
    });
    order.push_back(fn);
  };
  for (auto fn : module.getOps<func::FuncOp>())
    visit(fn);
  return order;
}

/// `fn`'s result types as its return now places them (a gradient left
/// partial), and its calls' results with them, before their callers are
/// propagated.
static void returnPlacementsAsComputed(func::FuncOp fn, ModuleOp module) {
  if (fn.isExternal())
    return;
  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  if (TypeRange(ret.getOperandTypes()) == fn.getResultTypes())
    return;
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                               ret.getOperandTypes()));
  module.walk([&](func::CallOp call) {
    if (call.getCallee() != fn.getName())
      return;
    for (auto [result, type] :
         llvm::zip_equal(call.getResults(), ret.getOperandTypes()))
      result.setType(type);
  });
}

/// Propagates every function of `module`, callees first, each op deciding
/// the mesh axes in `axisOrder`.
static LogicalResult propagateModule(ModuleOp module,
                                     ArrayRef<StringAttr> axisOrder,
                                     mlir::kina::CostRecords *records) {
  SymbolTable symbols(module);
  DenseSet<StringAttr> calledFromMesh;
  module.walk([&](func::CallOp call) {
    auto caller = call->getParentOfType<func::FuncOp>();
    if (caller && anyPlacement(caller.getFunctionType(), [](PlacementAttr p) {
          return p.isOnMesh();
        }))
      calledFromMesh.insert(call.getCalleeAttr().getAttr());
  });
  Propagation propagation(MeshOp::lookup(module), records,
                          std::move(calledFromMesh), axisOrder);
  for (func::FuncOp fn : calleesFirst(module, symbols)) {
    // A plan --kina-auto-shard wrote is placed, collectives and all, as
    // its solver priced it: nothing here may change its bytes.
    if (KinaDialect::AutoShardedAttrHelper(fn.getContext()).isAttrPresent(fn))
      continue;
    if (failed(propagation.run(fn)))
      return failure();
    hoistGathers(fn);
    simplifyCollectives(fn);
    returnPlacementsAsComputed(fn, module);
  }
  return success();
}

/// The order in which ops decide the mesh axes: each order propagated on
/// a copy of `module` (quietly), the one whose collectives send the
/// fewest bytes per device kept, ties the axes' name order. An op's
/// choice over one axis prices the axes decided before it (keeping a
/// batch split over `dp` before `tp` is decided prices an all-reduce of
/// a whole gradient), so one fixed order, the declared one, made a plan
/// depend on how the mesh was written.
static SmallVector<StringAttr> cheapestAxisOrder(ModuleOp module) {
  SmallVector<StringAttr> names = axesInNameOrder(MeshOp::lookup(module));
  if (names.size() < 2)
    return names;
  SmallVector<StringAttr> cheapest = names;
  std::optional<int64_t> fewest;
  SmallVector<StringAttr> order = names;
  do {
    OwningOpRef<ModuleOp> copy = module.clone();
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    if (failed(propagateModule(*copy, order, /*records=*/nullptr)))
      continue;
    int64_t bytes = 0;
    copy->walk([&](Operation *op) {
      if (isa<CollectiveOpInterface>(op))
        bytes += bytesSentPerDevice(op);
    });
    if (!fewest || bytes < *fewest) {
      fewest = bytes;
      cheapest = order;
    }
  } while (std::next_permutation(
      order.begin(), order.end(), [](StringAttr a, StringAttr b) {
        return a.getValue() < b.getValue();
      }));
  return cheapest;
}

namespace {
struct PropagateShardingPass
    : mlir::kina::impl::PropagateShardingPassBase<PropagateShardingPass> {
  PropagateShardingPass() = default;
  explicit PropagateShardingPass(mlir::kina::CostRecords *records)
      : records(records) {}

  mlir::kina::CostRecords *records = nullptr;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshOp mesh = MeshOp::lookup(module);
    if (!mesh)
      return; // nothing is placed on a mesh
    if (failed(propagateModule(module, cheapestAxisOrder(module), records)))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass>
mlir::kina::createPropagateShardingPass(mlir::kina::CostRecords &records) {
  return std::make_unique<PropagateShardingPass>(&records);
}
