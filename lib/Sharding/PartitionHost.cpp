//===- PartitionHost.cpp - Shards as ordinary ops on one host -------------===//
//
// The hand-written splits' form (docs/storylm0.md) of a propagated
// program: every mesh-placed value becomes the blocks its devices hold, as
// `@host` tensors (devices that differ only on axes the value is replicated
// over share one block, computed once); every op computes block by block, on local shapes;
// `all_gather` becomes a `concat`, `all_reduce` a chain of `add`s in device
// order, `all_slice` a `slice`. Functions keep their global signatures,
// now `@host`: a parameter's blocks are slices of it, a result is
// assembled from its blocks. The mesh is gone afterwards.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/Partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

using namespace mlir;
using namespace mlir::kina;

static KinaTensorType typeOf(Value value) {
  return cast<KinaTensorType>(value.getType());
}

/// The result of `op`, or failure when it could not be built (after its
/// error).
template <typename OpT> static FailureOr<Value> built(OpT op) {
  if (!op)
    return failure();
  return op->getResult(0);
}

namespace {
/// A device's coordinate on every mesh axis, in mesh order.
using Coordinate = SmallVector<int64_t>;

/// A mesh-placed value on the host: its placement, the blocks the devices
/// hold (row-major over the mesh axes the placement splits or is partial
/// over; null until made) and the whole tensor, when known.
struct Blocks {
  PlacementAttr placement;
  SmallVector<unsigned> axes; // indices into the mesh's axes
  SmallVector<Value> blocks;
  Value whole;
};

class HostPartition {
public:
  HostPartition(MeshOp mesh) : mesh(mesh), builder(mesh.getContext()) {
    for (auto [axis, size] : llvm::zip_equal(mesh.getAxes(), mesh.getShape())) {
      axisNames.push_back(cast<StringAttr>(axis));
      axisSizes.push_back(size);
    }
  }

  LogicalResult run(func::FuncOp fn);

private:
  Blocks &blocksOf(Value value, PlacementAttr placement);
  /// The global view's placement of `value` (its type may be `@host` by
  /// now: parameters, call results).
  PlacementAttr placementOf(Value value) const {
    auto it = values.find(value);
    return it != values.end() ? it->second.placement
                              : typeOf(value).getPlacement();
  }
  FailureOr<Value> block(Value value, const Coordinate &at);
  FailureOr<Value> whole(Value value);
  /// A block of zeros of `type`'s element type and shape `shape`: a
  /// summand that adds nothing (sums leave it out).
  Value zeros(KinaTensorType type, ArrayRef<int64_t> shape, Location loc);
  /// `parts` added in order, the zero blocks left out (so that a whole
  /// value's sum is that value, to the bit).
  FailureOr<Value> sum(ArrayRef<Value> parts, Location loc);
  /// Every coordinate over the mesh axes `axes` (0 on the others).
  SmallVector<Coordinate> coordinates(ArrayRef<unsigned> axes) const;
  size_t indexOf(const Blocks &blocks, const Coordinate &at) const;
  KinaTensorType hostType(Type type) const;

  LogicalResult partition(Operation *op);
  LogicalResult computePerBlock(Operation *op);
  LogicalResult collective(Operation *op);
  /// The blocks of `value` (placed `placement`) over `axes`, each built by
  /// `make` for its coordinate.
  LogicalResult
  defineBlocks(Value value,
               function_ref<FailureOr<Value>(const Coordinate &)> make);

  MeshOp mesh;
  OpBuilder builder;
  SmallVector<StringAttr> axisNames;
  SmallVector<int64_t> axisSizes;
  DenseMap<Value, Blocks> values;
  DenseSet<Value> zeroBlocks;
};
} // namespace

KinaTensorType HostPartition::hostType(Type type) const {
  return cast<KinaTensorType>(type).withPlacement(
      PlacementAttr::getHost(type.getContext()));
}

Blocks &HostPartition::blocksOf(Value value, PlacementAttr placement) {
  Blocks &blocks = values[value];
  if (blocks.placement)
    return blocks;
  blocks.placement = placement;
  size_t count = 1;
  for (auto [index, name] : llvm::enumerate(axisNames))
    if (placement.getAxisSplitBy(name) || placement.isPartialOver(name)) {
      blocks.axes.push_back(index);
      count *= axisSizes[index];
    }
  blocks.blocks.assign(count, Value());
  return blocks;
}

SmallVector<Coordinate>
HostPartition::coordinates(ArrayRef<unsigned> axes) const {
  SmallVector<Coordinate> all = {Coordinate(axisSizes.size(), 0)};
  for (unsigned axis : axes) {
    SmallVector<Coordinate> next;
    for (const Coordinate &c : all)
      for (int64_t i = 0; i < axisSizes[axis]; ++i) {
        next.push_back(c);
        next.back()[axis] = i;
      }
    all = std::move(next);
  }
  return all;
}

size_t HostPartition::indexOf(const Blocks &blocks,
                              const Coordinate &at) const {
  size_t index = 0;
  for (unsigned axis : blocks.axes)
    index = index * axisSizes[axis] + at[axis];
  return index;
}

Value HostPartition::zeros(KinaTensorType type, ArrayRef<int64_t> shape,
                           Location loc) {
  auto scalar = ConstantOp::create(
      builder, loc,
      KinaTensorType::get(type.getContext(), {}, type.getElementType(),
                          PlacementAttr::getHost(type.getContext())),
      FloatAttr::get(type.getElementType(), 0.0));
  Value block = scalar;
  if (!shape.empty())
    block = createInferred<BroadcastOp>(builder, loc, block, shape);
  if (block)
    zeroBlocks.insert(block);
  return block;
}

FailureOr<Value> HostPartition::sum(ArrayRef<Value> parts, Location loc) {
  SmallVector<Value> terms = llvm::filter_to_vector(
      parts, [&](Value part) { return !zeroBlocks.contains(part); });
  if (terms.empty())
    return parts.front();
  FailureOr<Value> total = terms.front();
  for (Value term : ArrayRef(terms).drop_front())
    if (succeeded(total))
      total = built(createInferred<AddOp>(builder, loc, *total, term));
  return total;
}

/// The block device `at` holds: made, or sliced from the whole tensor.
FailureOr<Value> HostPartition::block(Value value, const Coordinate &at) {
  if (!placementOf(value).isMesh())
    return value; // a host value
  Blocks &blocks = blocksOf(value, placementOf(value));
  Value &slot = blocks.blocks[indexOf(blocks, at)];
  if (slot)
    return slot;
  if (!blocks.whole)
    return emitError(value.getLoc(), "internal error: a block of a value "
                                     "that was never computed");
  // A partial sum known whole (a call's result, summed by the callee's
  // host form): device 0 of its partial axes holds it, the others zeros.
  bool summand = llvm::all_of(blocks.placement.getPartial(), [&](StringAttr a) {
    return at[llvm::find(axisNames, a) - axisNames.begin()] == 0;
  });
  if (!summand)
    return slot = zeros(typeOf(value), blockShape(typeOf(value), mesh),
                        value.getLoc());
  Value cut = blocks.whole;
  SmallVector<int64_t> shape(typeOf(value).getShape());
  for (auto [dim, axis] : llvm::zip_equal(blocks.placement.getAxes(),
                                          blocks.placement.getOver())) {
    unsigned index = llvm::find(axisNames, axis) - axisNames.begin();
    int64_t size = shape[dim] / axisSizes[index];
    cut = createInferred<SliceOp>(builder, value.getLoc(), cut, dim,
                                  at[index] * size, (at[index] + 1) * size);
    if (!cut)
      return failure();
  }
  return slot = cut;
}

/// The global tensor: known, or concatenated from the blocks, innermost
/// split last.
FailureOr<Value> HostPartition::whole(Value value) {
  if (!placementOf(value).isMesh())
    return value;
  Blocks &blocks = blocksOf(value, placementOf(value));
  if (blocks.whole)
    return blocks.whole;
  // A partial sum's whole is its summands added (in device order) block
  // by block; then, row-major blocks over the split axes: join the last
  // axis first.
  SmallVector<unsigned> split, partial;
  for (unsigned axis : blocks.axes)
    (blocks.placement.getAxisSplitBy(axisNames[axis]) ? split : partial)
        .push_back(axis);
  SmallVector<Value> parts;
  for (const Coordinate &at : coordinates(split)) {
    SmallVector<Value> summands;
    for (const Coordinate &of : coordinates(partial)) {
      Coordinate c = at;
      for (unsigned axis : partial)
        c[axis] = of[axis];
      FailureOr<Value> part = block(value, c);
      if (failed(part))
        return failure();
      summands.push_back(*part);
    }
    FailureOr<Value> total = sum(summands, value.getLoc());
    if (failed(total))
      return failure();
    parts.push_back(*total);
  }
  for (unsigned axis : llvm::reverse(split)) {
    int64_t dim = *blocks.placement.getAxisSplitBy(axisNames[axis]);
    int64_t n = axisSizes[axis];
    SmallVector<Value> joined;
    for (size_t i = 0; i < parts.size(); i += n) {
      auto concat = createInferred<ConcatOp>(
          builder, value.getLoc(), ValueRange(parts).slice(i, n), dim);
      if (!concat)
        return failure();
      joined.push_back(concat);
    }
    parts = std::move(joined);
  }
  return blocks.whole = parts.front();
}

LogicalResult HostPartition::defineBlocks(
    Value value, function_ref<FailureOr<Value>(const Coordinate &)> make) {
  Blocks &blocks = blocksOf(value, typeOf(value).getPlacement());
  SmallVector<unsigned> axes = blocks.axes;
  for (const Coordinate &at : coordinates(axes)) {
    FailureOr<Value> made = make(at);
    if (failed(made))
      return failure();
    values[value].blocks[indexOf(values[value], at)] = *made;
  }
  return success();
}

/// An op of the global view, once per block of its result: the operands'
/// blocks at the same coordinate, the attributes that name a shape made
/// local, the result type from the op's own shape rule.
LogicalResult HostPartition::computePerBlock(Operation *op) {
  Value result = op->getResult(0);
  auto resultType = typeOf(result);
  SmallVector<int64_t> local = blockShape(resultType, mesh);
  NamedAttrList attrs(getInherentAttrs(op));
  if (auto named = dyn_cast<NamesShapeOpInterface>(op))
    attrs.set(named.getShapeAttrName(), builder.getDenseI64ArrayAttr(local));
  auto rule = cast<InferResultTypeOpInterface>(op);
  return defineBlocks(result, [&](const Coordinate &at) -> FailureOr<Value> {
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> part = block(operand, at);
      if (failed(part))
        return failure();
      operands.push_back(*part);
    }
    FailureOr<Type> type = rule.inferResultType(
        TypeRange(ValueRange(operands)), attrs.getDictionary(op->getContext()),
        nullptr, [&] { return op->emitOpError("partitioned: "); });
    if (failed(type))
      return failure();
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    state.addTypes(*type);
    return builder.create(state)->getResult(0);
  });
}

/// Collectives on the host: blocks of other devices are at hand.
LogicalResult HostPartition::collective(Operation *op) {
  Value input = op->getOperand(0), result = op->getResult(0);
  Location loc = op->getLoc();
  auto over = StringAttr::get(op->getContext(),
                              cast<CollectiveOpInterface>(op).getOver());
  unsigned axis = llvm::find(axisNames, over) - axisNames.begin();
  int64_t n = axisSizes[axis];
  // The input's blocks of every device on `over`, the others fixed by `at`.
  // What the devices along `over` compute alike (a sum, a concat), once.
  std::map<Coordinate, Value> shared;
  auto once = [&](const Coordinate &at,
                  function_ref<FailureOr<Value>()> make) -> FailureOr<Value> {
    Coordinate group = at;
    group[axis] = 0;
    Value &slot = shared[group];
    if (slot)
      return slot;
    FailureOr<Value> made = make();
    if (succeeded(made))
      slot = *made;
    return made;
  };
  auto alongAxis = [&](const Coordinate &at) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> parts;
    Coordinate c = at;
    for (c[axis] = 0; c[axis] < n; ++c[axis]) {
      FailureOr<Value> part = block(input, c);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    return parts;
  };
  auto concatOn = [&](ArrayRef<Value> parts, int64_t dim) -> FailureOr<Value> {
    return built(createInferred<ConcatOp>(builder, loc, parts, dim));
  };
  auto sliceOf = [&](Value whole, int64_t dim,
                     int64_t index) -> FailureOr<Value> {
    int64_t size = typeOf(whole).getDimSize(dim) / n;
    return built(createInferred<SliceOp>(builder, loc, whole, dim, index * size,
                                         (index + 1) * size));
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AllGatherOp gather) {
        return defineBlocks(result, [&](const Coordinate &at) {
          auto parts = alongAxis(at);
          return failed(parts) ? FailureOr<Value>(failure())
                               : concatOn(*parts, gather.getAxis());
        });
      })
      .Case([&](AllSliceOp slice) {
        return defineBlocks(result, [&](const Coordinate &at) {
          FailureOr<Value> part = block(input, at);
          return failed(part) ? part
                              : sliceOf(*part, slice.getAxis(), at[axis]);
        });
      })
      .Case([&](AllReduceOp) {
        return defineBlocks(result, [&](const Coordinate &at) {
          auto parts = alongAxis(at);
          return failed(parts) ? FailureOr<Value>(failure()) : sum(*parts, loc);
        });
      })
      .Case([&](ReduceScatterOp scatter) {
        return defineBlocks(result, [&](const Coordinate &at) {
          FailureOr<Value> total = once(at, [&]() -> FailureOr<Value> {
            auto parts = alongAxis(at);
            return failed(parts) ? FailureOr<Value>(failure()) : sum(*parts, loc);
          });
          return failed(total) ? total
                               : sliceOf(*total, scatter.getAxis(), at[axis]);
        });
      })
      .Case([&](AllToAllOp move) {
        return defineBlocks(result, [&](const Coordinate &at) {
          FailureOr<Value> joined = once(at, [&]() -> FailureOr<Value> {
            auto parts = alongAxis(at);
            return failed(parts) ? FailureOr<Value>(failure())
                                 : concatOn(*parts, move.getFrom());
          });
          return failed(joined) ? joined
                                : sliceOf(*joined, move.getTo(), at[axis]);
        });
      })
      .Default([](Operation *op) {
        return op->emitError("internal error: not a collective");
      });
}

LogicalResult HostPartition::partition(Operation *op) {
  builder.setInsertionPoint(op);
  auto onMesh = [](Value v) {
    auto type = dyn_cast<KinaTensorType>(v.getType());
    return type && type.getPlacement().isOnMesh();
  };
  for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults()))
    if (auto type = dyn_cast<KinaTensorType>(v.getType());
        type && type.getPlacement().isAuto())
      return op->emitError("a placement is not decided: run "
                           "--kina-propagate-sharding before partitioning");
  if (auto reshard = dyn_cast<ReshardOp>(op)) {
    PlacementAttr from = placementOf(reshard.getInput());
    PlacementAttr to = placementOf(reshard.getResult());
    if (from.isHost() && to.isMesh()) {
      blocksOf(reshard.getResult(), to).whole = reshard.getInput();
      return success();
    }
    if (from.isMesh() && to.isHost()) {
      FailureOr<Value> all = whole(reshard.getInput());
      if (failed(all))
        return failure();
      reshard.getResult().replaceAllUsesWith(*all);
      return success();
    }
    if (from.isHost() && to.isHost()) { // both ends already on the host
      reshard.getResult().replaceAllUsesWith(reshard.getInput());
      return success();
    }
    return op->emitError("a reshard between mesh placements remains: run "
                         "--kina-propagate-sharding before partitioning");
  }
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    if (!onMesh(constant.getResult()))
      return success();
    auto host =
        ConstantOp::create(builder, op->getLoc(), hostType(constant.getType()),
                           constant.getValueAttr());
    blocksOf(constant.getResult(), typeOf(constant.getResult()).getPlacement())
        .whole = host;
    return success();
  }
  if (isa<func::CallOp, ReverseModeOp, func::ReturnOp>(op)) {
    // Calls (a reverseMode too) and returns pass whole (global) tensors.
    for (OpOperand &operand : op->getOpOperands()) {
      if (!onMesh(operand.get()))
        continue;
      FailureOr<Value> all = whole(operand.get());
      if (failed(all))
        return failure();
      operand.set(*all);
    }
    for (Value result : op->getResults())
      if (onMesh(result)) {
        PlacementAttr placement = typeOf(result).getPlacement();
        result.setType(hostType(result.getType()));
        // Uses still see the global view's placement through `values`.
        blocksOf(result, placement).whole = result;
      }
    return success();
  }
  bool placed = llvm::any_of(op->getOperands(), onMesh) ||
                llvm::any_of(op->getResults(), onMesh);
  if (!placed)
    return success();
  if (isa<CollectiveOpInterface>(op))
    return collective(op);
  if (isa<InferResultTypeOpInterface>(op) && op->getNumResults() == 1)
    return computePerBlock(op);
  return op->emitError("cannot partition this op");
}

LogicalResult HostPartition::run(func::FuncOp fn) {
  if (fn.isExternal())
    return success();
  // Global signatures on the host; parameters' blocks are sliced from them.
  for (BlockArgument arg : fn.getArguments()) {
    PlacementAttr placement = typeOf(arg).getPlacement();
    if (!placement.isMesh())
      continue;
    arg.setType(hostType(arg.getType()));
    blocksOf(arg, placement).whole = arg;
  }
  SmallVector<Type> results;
  for (Type type : fn.getFunctionType().getResults())
    results.push_back(hostType(type));
  fn.setType(FunctionType::get(fn.getContext(), fn.getBody().getArgumentTypes(),
                               results));
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front())
    ops.push_back(&op);
  SmallVector<Operation *> replaced;
  for (Operation *op : ops) {
    // Values already turned into host values keep their global placement
    // in `values`; the op is judged by what it computes.
    if (failed(partition(op)))
      return failure();
    if (!isa<func::CallOp, ReverseModeOp, func::ReturnOp>(op) &&
        llvm::any_of(op->getResults(),
                     [&](Value v) { return values.count(v) || v.use_empty(); }))
      replaced.push_back(op);
  }
  for (Operation *op : llvm::reverse(replaced))
    if (op->use_empty())
      op->erase();
    else
      return op->emitError("internal error: a partitioned op is still used");
  return success();
}

LogicalResult mlir::kina::partitionHost(ModuleOp module, MeshOp mesh) {
  HostPartition partition(mesh);
  for (auto fn : module.getOps<func::FuncOp>())
    if (failed(partition.run(fn)))
      return failure();
  mesh.erase();
  return success();
}
