//===- AdjointRules.cpp - How every kina op differentiates ----------------===//
//
// Each op's `buildAdjoint` (AdjointOpInterface, declared by every kina op)
// turns the cotangent of its result into one per operand, with kina ops
// whose types come from their own shape rules, so the adjoint of a sharded
// program is typed like any program. Every op built here carries the
// location of the forward op, marked `adjoint` (a NameLoc around it), so
// diagnostics and the simulator's report point at the `.kina` line.
// `--kina-differentiate` (lib/Differentiate) applies the rules.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::kina;

namespace {
/// Builds the adjoint ops of one forward op: its location marked as an
/// adjoint, every op typed by its shape rule; `failed` once any build
/// failed (createInferred reported it).
class AdjointBuilder {
public:
  AdjointBuilder(OpBuilder &b, Operation *forward)
      : b(b), loc(getAdjointLoc(forward)) {}

  template <typename OpTy, typename... Args> Value make(Args &&...args) {
    auto op = createInferred<OpTy>(b, loc, std::forward<Args>(args)...);
    failed |= !op;
    return op ? op->getResult(0) : Value();
  }

  /// `value` in `like`'s element type, broadcast to `shape` (by default
  /// `like`'s), placed as `like` is.
  Value filled(double value, Value like,
               std::optional<ArrayRef<int64_t>> shape = std::nullopt) {
    auto type = cast<KinaTensorType>(like.getType());
    ArrayRef<int64_t> target = shape ? *shape : type.getShape();
    Type element = type.getElementType();
    auto scalarType = KinaTensorType::get(b.getContext(), {}, element,
                                          scalarPlacement(type));
    Value scalar = ConstantOp::create(b, loc, scalarType,
                                      FloatAttr::get(element, value));
    if (target.empty())
      return scalar;
    return make<BroadcastOp>(scalar, target);
  }

  /// `value` where `mask` is not 0, 0 elsewhere: a select, so that an inf
  /// or NaN of `value` stays out of the elements it does not reach.
  Value onlyWhere(Value mask, Value value) {
    return make<SelectOp>(mask, value, filled(0.0f, value));
  }

  /// `value` broadcast back over `axis` to the shape of `like`.
  Value spread(Value value, Value like) {
    return make<BroadcastOp>(value,
                             cast<KinaTensorType>(like.getType()).getShape());
  }

  /// `value` with `shape` (itself when it has it).
  Value reshaped(Value value, ArrayRef<int64_t> shape) {
    if (cast<KinaTensorType>(value.getType()).getShape() == shape)
      return value;
    return make<ReshapeOp>(value, shape);
  }

  /// The transpose of the last two dims.
  Value swapLastTwo(Value value) {
    int64_t rank = cast<KinaTensorType>(value.getType()).getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    return make<TransposeOp>(value, perm);
  }

  LogicalResult result() const { return success(!failed); }

private:
  /// A literal's placement beside a value of `type`: the host's, a
  /// device's own (`@local`) or replicated over the mesh.
  static PlacementAttr scalarPlacement(KinaTensorType type) {
    PlacementAttr placement = type.getPlacement();
    if (placement.isHost() || placement.isLocal())
      return placement;
    return PlacementAttr::getReplicated(type.getContext());
  }

  OpBuilder &b;
  Location loc;
  bool failed = false;
};

bool isFloat(Value value) {
  return isa<FloatType>(
      cast<KinaTensorType>(value.getType()).getElementType());
}
} // namespace

/// What every adjoint location's name starts with.
static constexpr llvm::StringLiteral kAdjointPrefix = "adjoint of ";

Location mlir::kina::getAdjointLoc(Operation *forward) {
  return NameLoc::get(
      StringAttr::get(forward->getContext(),
                      kAdjointPrefix + forward->getName().getStringRef()),
      forward->getLoc());
}

/// What a gradient's location is named (getGradientLoc), before its
/// parameter.
static constexpr llvm::StringLiteral kGradientPrefix = "adjoint of parameter ";

Location mlir::kina::getGradientLoc(StringRef parameter, Location declared) {
  return NameLoc::get(
      StringAttr::get(declared->getContext(), kGradientPrefix + parameter),
      declared);
}

std::optional<std::string> mlir::kina::getGradientOf(Location loc) {
  auto name = dyn_cast<NameLoc>(loc);
  if (!name || !name.getName().strref().starts_with(kGradientPrefix))
    return std::nullopt;
  return name.getName().strref().drop_front(kGradientPrefix.size()).str();
}

std::string mlir::kina::locationText(Location loc, StringRef unknown) {
  std::string text = unknown.str();
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file)
      return WalkResult::advance();
    text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
               .str();
    return WalkResult::interrupt();
  });
  return text;
}

bool mlir::kina::isAdjointLoc(Location loc) {
  bool adjoint = false;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner))
      adjoint |= name.getName().strref().starts_with(kAdjointPrefix);
    return WalkResult::advance();
  });
  return adjoint;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::buildAdjoint(OpBuilder &, Value,
                                       SmallVectorImpl<Value> &) {
  return success(); // no operands
}

/// The cotangent in its place, zeros around it on the sliced axis.
LogicalResult SliceOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                    SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  auto input = cast<KinaTensorType>(getInput().getType());
  int64_t axis = getAxis();
  auto zeros = [&](int64_t size) {
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    return adjoint.filled(0.0f, cotangent, shape);
  };
  SmallVector<Value> parts;
  if (getStart() > 0)
    parts.push_back(zeros(getStart()));
  parts.push_back(cotangent);
  if (static_cast<int64_t>(getStop()) < input.getDimSize(axis))
    parts.push_back(zeros(input.getDimSize(axis) - getStop()));
  cotangents.push_back(parts.size() == 1
                           ? cotangent
                           : adjoint.make<ConcatOp>(ValueRange(parts), axis));
  return adjoint.result();
}

/// Each input's part of the cotangent.
LogicalResult ConcatOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                     SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  int64_t axis = getAxis(), offset = 0;
  for (Value input : getInputs()) {
    int64_t size = cast<KinaTensorType>(input.getType()).getDimSize(axis);
    cotangents.push_back(
        isFloat(input)
            ? adjoint.make<SliceOp>(cotangent, axis, offset, offset + size)
            : Value());
    offset += size;
  }
  return adjoint.result();
}

/// The cotangent's rows added into a zero table at the ids (a scatter-add:
/// repeated ids add). No gradient flows to the ids.
LogicalResult GatherOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                     SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  int64_t rows = cast<KinaTensorType>(getTable().getType()).getDimSize(0);
  cotangents.push_back(adjoint.make<ScatterAddOp>(cotangent, getIds(), rows));
  cotangents.push_back(Value());
  return adjoint.result();
}

/// Its transpose: the cotangent's rows read back at the ids.
LogicalResult ScatterAddOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                         SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.make<GatherOp>(cotangent, getIds()));
  cotangents.push_back(Value());
  return adjoint.result();
}

/// The cotangent summed over every stretched dim, then reshaped back.
LogicalResult BroadcastOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                        SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  auto input = cast<KinaTensorType>(getInput().getType());
  auto result = cast<KinaTensorType>(getType());
  int64_t offset = result.getRank() - input.getRank();
  Value summed = cotangent;
  for (int64_t d = 0; d < result.getRank(); ++d) {
    bool stretched =
        d < offset || input.getDimSize(d - offset) != result.getDimSize(d);
    if (stretched)
      summed = adjoint.make<SumOp>(summed, d);
  }
  cotangents.push_back(adjoint.reshaped(summed, input.getShape()));
  return adjoint.result();
}

LogicalResult ReshapeOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                      SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.reshaped(
      cotangent, cast<KinaTensorType>(getInput().getType()).getShape()));
  return adjoint.result();
}

/// The inverse permutation.
LogicalResult TransposeOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                        SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = int64_t(i);
  cotangents.push_back(adjoint.make<TransposeOp>(cotangent, inverse));
  return adjoint.result();
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

/// d lhs = c @ rhs^T, d rhs = lhs^T @ c (per batch).
LogicalResult MatmulOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                     SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(
      adjoint.make<MatmulOp>(cotangent, adjoint.swapLastTwo(getRhs())));
  cotangents.push_back(
      adjoint.make<MatmulOp>(adjoint.swapLastTwo(getLhs()), cotangent));
  return adjoint.result();
}

/// dx = y * (c - sum(c * y)), the sum along the axis.
LogicalResult SoftmaxOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                      SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value y = getResult();
  Value dot = adjoint.make<SumOp>(adjoint.make<MulOp>(cotangent, y), getAxis());
  cotangents.push_back(adjoint.make<MulOp>(
      y, adjoint.make<SubOp>(cotangent, adjoint.spread(dot, y))));
  return adjoint.result();
}

/// dx = c - exp(y) * sum(c), the sum along the axis.
LogicalResult LogSoftmaxOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                         SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value y = getResult();
  Value total = adjoint.make<SumOp>(cotangent, getAxis());
  cotangents.push_back(adjoint.make<SubOp>(
      cotangent, adjoint.make<MulOp>(adjoint.make<ExpOp>(y),
                                     adjoint.spread(total, y))));
  return adjoint.result();
}

/// Integer arithmetic carries no gradient.
#define KINA_INTEGER_HAS_NO_ADJOINT(operands)                                  \
  if (!isFloat(getResult())) {                                                 \
    cotangents.append(operands, Value());                                      \
    return success();                                                          \
  }

LogicalResult AddOp::buildAdjoint(OpBuilder &, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  KINA_INTEGER_HAS_NO_ADJOINT(2)
  cotangents.append({cotangent, cotangent});
  return success();
}

LogicalResult SubOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  KINA_INTEGER_HAS_NO_ADJOINT(2)
  AdjointBuilder adjoint(b, *this);
  cotangents.append({cotangent, adjoint.make<NegOp>(cotangent)});
  return adjoint.result();
}

LogicalResult MulOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  KINA_INTEGER_HAS_NO_ADJOINT(2)
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.make<MulOp>(cotangent, getRhs()));
  cotangents.push_back(adjoint.make<MulOp>(cotangent, getLhs()));
  return adjoint.result();
}

/// d lhs = c / rhs; d rhs = -(c / rhs) * (lhs / rhs).
LogicalResult DivOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  KINA_INTEGER_HAS_NO_ADJOINT(2)
  AdjointBuilder adjoint(b, *this);
  Value scaled = adjoint.make<DivOp>(cotangent, getRhs());
  cotangents.push_back(scaled);
  cotangents.push_back(
      adjoint.make<NegOp>(adjoint.make<MulOp>(scaled, getResult())));
  return adjoint.result();
}

/// The cotangent cast back to the operand's type; an integer operand
/// gets none.
LogicalResult CastOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                   SmallVectorImpl<Value> &cotangents) {
  if (!isFloat(getInput())) {
    cotangents.push_back(Value());
    return success();
  }
  AdjointBuilder adjoint(b, *this);
  Type element =
      cast<KinaTensorType>(getInput().getType()).getElementType();
  cotangents.push_back(
      adjoint.make<CastOp>(cotangent, TypeAttr::get(element)));
  return adjoint.result();
}

LogicalResult NegOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  KINA_INTEGER_HAS_NO_ADJOINT(1)
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.make<NegOp>(cotangent));
  return adjoint.result();
}

/// To the operand `y` took, shared equally between equal ones (PyTorch's
/// rule for maximum and minimum): d lhs = c * [y == lhs] / ([y == lhs] +
/// [y == rhs]).
static LogicalResult toChosenOperand(OpBuilder &b, Operation *op, Value lhs,
                                     Value rhs, Value cotangent,
                                     SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, op);
  Value y = op->getResult(0);
  Value toLhs = adjoint.make<EqualOp>(y, lhs);
  Value toRhs = adjoint.make<EqualOp>(y, rhs);
  Value shares = adjoint.make<AddOp>(toLhs, toRhs);
  for (Value mask : {toLhs, toRhs})
    cotangents.push_back(adjoint.make<DivOp>(
        adjoint.make<MulOp>(cotangent, mask), shares));
  return adjoint.result();
}

LogicalResult MaximumOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                      SmallVectorImpl<Value> &cotangents) {
  return toChosenOperand(b, *this, getLhs(), getRhs(), cotangent, cotangents);
}

LogicalResult MinimumOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                      SmallVectorImpl<Value> &cotangents) {
  return toChosenOperand(b, *this, getLhs(), getRhs(), cotangent, cotangents);
}

/// A mask is constant almost everywhere: no gradient.
#define KINA_MASK_HAS_NO_ADJOINT(OP)                                           \
  LogicalResult OP::buildAdjoint(OpBuilder &, Value,                           \
                                 SmallVectorImpl<Value> &cotangents) {         \
    cotangents.append(2, Value());                                             \
    return success();                                                          \
  }
KINA_MASK_HAS_NO_ADJOINT(EqualOp)
KINA_MASK_HAS_NO_ADJOINT(LessOp)
KINA_MASK_HAS_NO_ADJOINT(LessEqualOp)
KINA_MASK_HAS_NO_ADJOINT(GreaterOp)
KINA_MASK_HAS_NO_ADJOINT(GreaterEqualOp)
#undef KINA_MASK_HAS_NO_ADJOINT

/// To the chosen operand: d on_true = where(mask, c, 0), d on_false =
/// where(mask, 0, c); the mask gets none.
LogicalResult SelectOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                     SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(Value());
  cotangents.push_back(adjoint.onlyWhere(getMask(), cotangent));
  cotangents.push_back(adjoint.make<SelectOp>(
      getMask(), adjoint.filled(0.0f, cotangent), cotangent));
  return adjoint.result();
}

LogicalResult OneHotOp::buildAdjoint(OpBuilder &, Value,
                                     SmallVectorImpl<Value> &cotangents) {
  cotangents.push_back(Value()); // ids are not differentiable
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult SumOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.spread(cotangent, getInput()));
  return adjoint.result();
}

LogicalResult MeanOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                   SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  int64_t count =
      cast<KinaTensorType>(getInput().getType()).getDimSize(getAxis());
  Value share = adjoint.make<DivOp>(
      cotangent, adjoint.filled(float(count), cotangent));
  cotangents.push_back(adjoint.spread(share, getInput()));
  return adjoint.result();
}

/// To the elements equal to the maximum, shared equally among ties.
LogicalResult MaxOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value x = getInput();
  Value ties = adjoint.make<EqualOp>(x, adjoint.spread(getResult(), x));
  Value count = adjoint.make<SumOp>(ties, getAxis());
  Value share = adjoint.make<DivOp>(cotangent, count);
  cotangents.push_back(adjoint.make<MulOp>(ties, adjoint.spread(share, x)));
  return adjoint.result();
}

//===----------------------------------------------------------------------===//
// Math
//===----------------------------------------------------------------------===//

LogicalResult ExpOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.make<MulOp>(cotangent, getResult()));
  return adjoint.result();
}

LogicalResult LogOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.make<DivOp>(cotangent, getInput()));
  return adjoint.result();
}

/// c / (2 sqrt(x)), as PyTorch: inf at 0.
LogicalResult SqrtOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                   SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value y = getResult();
  cotangents.push_back(adjoint.make<DivOp>(
      cotangent, adjoint.make<MulOp>(adjoint.filled(2.0f, y), y)));
  return adjoint.result();
}

/// -c y^3 / 2, as PyTorch.
LogicalResult RsqrtOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                    SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value y = getResult();
  Value cube = adjoint.make<MulOp>(adjoint.make<MulOp>(y, y), y);
  cotangents.push_back(adjoint.make<MulOp>(
      adjoint.make<MulOp>(cotangent, adjoint.filled(-0.5f, y)), cube));
  return adjoint.result();
}

/// c (1 - y^2).
LogicalResult TanhOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                   SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value y = getResult();
  cotangents.push_back(adjoint.make<MulOp>(
      cotangent,
      adjoint.make<SubOp>(adjoint.filled(1.0f, y), adjoint.make<MulOp>(y, y))));
  return adjoint.result();
}

/// where(y > 0, c, 0): 0 at 0, as PyTorch's (y = max(x, 0) is above 0
/// exactly where x is).
LogicalResult ReluOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                   SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value y = getResult();
  cotangents.push_back(adjoint.onlyWhere(
      adjoint.make<GreaterOp>(y, adjoint.filled(0.0f, y)), cotangent));
  return adjoint.result();
}

/// c * sign(x), 0 at 0 (PyTorch's): where(x > 0, c, where(x < 0, -c, 0)).
LogicalResult AbsOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Value x = getInput();
  Value zero = adjoint.filled(0.0f, x);
  Value belowZero = adjoint.make<SelectOp>(adjoint.make<LessOp>(x, zero),
                                           adjoint.make<NegOp>(cotangent), zero);
  cotangents.push_back(adjoint.make<SelectOp>(adjoint.make<GreaterOp>(x, zero),
                                              cotangent, belowZero));
  return adjoint.result();
}

//===----------------------------------------------------------------------===//
// Collectives (the global view: each is the identity on the global value,
// so its adjoint moves the cotangent back to where the input was; a
// partial input's cotangent is replicated, as JAX's psum transposes to a
// free cast). Where the cotangent is placed as the result is, the rule
// names its collective; otherwise (an @auto cotangent, or one placed
// elsewhere) a kina.reshard, which the propagation turns into the
// cheapest collective. In the per-device (@local) form every placement is
// the result's, so the named transposes apply; --kina-differentiate sums
// the cotangents of values the same on every device where they meet one
// that is not (lib/Differentiate/Differentiate.cpp).
//===----------------------------------------------------------------------===//

/// The placement a cotangent of `value` takes: its own, but a partial
/// value's cotangent is replicated over the partial axes (each summand's
/// cotangent is the whole cotangent).
static PlacementAttr cotangentPlacement(Value value) {
  PlacementAttr placement =
      cast<KinaTensorType>(value.getType()).getPlacement();
  for (StringAttr axis : llvm::to_vector(placement.getPartial()))
    placement = placement.withoutPartial(axis);
  return placement;
}

/// `cotangent` as a cotangent of `input`: itself when placed so, else a
/// kina.reshard (placed by --kina-propagate-sharding).
static Value reshardedTo(OpBuilder &b, Location loc, Value cotangent,
                         Value input) {
  PlacementAttr want = cotangentPlacement(input);
  auto type = cast<KinaTensorType>(cotangent.getType());
  if (type.getPlacement() == want)
    return cotangent;
  return ReshardOp::create(b, loc,
                           KinaTensorType::get(b.getContext(), type.getShape(),
                                               type.getElementType(), want),
                           cotangent);
}

/// Whether `cotangent` is placed as `result`, so that the named transpose
/// applies.
static bool placedAsResult(Value cotangent, Value result) {
  return cast<KinaTensorType>(cotangent.getType()).getPlacement() ==
         cotangentPlacement(result);
}

static bool isPartial(Value value) {
  return !cast<KinaTensorType>(value.getType())
              .getPlacement()
              .getPartial()
              .empty();
}

/// The cotangent placed as the input was.
LogicalResult ReshardOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                      SmallVectorImpl<Value> &cotangents) {
  cotangents.push_back(
      reshardedTo(b, getAdjointLoc(*this), cotangent, getInput()));
  return success();
}

/// Each device keeps its own block of the replicated cotangent (an
/// all_slice, free); a partial cotangent is summed into the blocks
/// (reduce_scatter).
LogicalResult AllGatherOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                        SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  Location loc = getAdjointLoc(*this);
  if (placedAsResult(cotangent, getResult()))
    cotangents.push_back(
        adjoint.make<AllSliceOp>(cotangent, getAxis(), getOver()));
  else if (isPartial(cotangent))
    cotangents.push_back(
        adjoint.make<ReduceScatterOp>(cotangent, getAxis(), getOver()));
  else
    cotangents.push_back(reshardedTo(b, loc, cotangent, getInput()));
  return adjoint.result();
}

/// The cotangent of `op`'s input (an all_slice or reduce_scatter: a split
/// result): the blocks' cotangents gathered when placed as the result is,
/// else resharded.
template <typename OpTy>
static LogicalResult gatherBlocks(OpTy op, OpBuilder &b, Value cotangent,
                                  SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, op);
  cotangents.push_back(
      placedAsResult(cotangent, op.getResult())
          ? adjoint.make<AllGatherOp>(cotangent, op.getAxis(), op.getOver())
          : reshardedTo(b, getAdjointLoc(op), cotangent, op.getInput()));
  return adjoint.result();
}

/// The blocks' cotangents gathered.
LogicalResult AllSliceOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                       SmallVectorImpl<Value> &cotangents) {
  return gatherBlocks(*this, b, cotangent, cotangents);
}

/// A free cast: every summand's cotangent is the replicated cotangent (no
/// all-reduce here; PyTorch's `_AllReduce.backward` adds one). A max over
/// devices is not differentiated.
LogicalResult AllReduceOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                        SmallVectorImpl<Value> &cotangents) {
  if (getKind() != ReductionKind::sum)
    return emitOpError("cannot be differentiated: an all_reduce of kind "
                       "max has no adjoint in this version");
  cotangents.push_back(
      reshardedTo(b, getAdjointLoc(*this), cotangent, getInput()));
  return success();
}

/// Every summand's cotangent is the whole cotangent: the blocks gathered.
LogicalResult
ReduceScatterOp::buildAdjoint(OpBuilder &b, Value cotangent,
                              SmallVectorImpl<Value> &cotangents) {
  return gatherBlocks(*this, b, cotangent, cotangents);
}

/// The split moved back.
LogicalResult AllToAllOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                       SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(
      placedAsResult(cotangent, getResult())
          ? adjoint.make<AllToAllOp>(cotangent, getTo(), getFrom(), getOver())
          : reshardedTo(b, getAdjointLoc(*this), cotangent, getInput()));
  return adjoint.result();
}

/// The transpose of a shift is the opposite shift: a device's cotangent
/// goes back to the device its value came from (zeros where nothing came).
LogicalResult PermuteOp::buildAdjoint(OpBuilder &b, Value cotangent,
                                      SmallVectorImpl<Value> &cotangents) {
  AdjointBuilder adjoint(b, *this);
  cotangents.push_back(adjoint.make<PermuteOp>(
      cotangent, -static_cast<int64_t>(getShift()), getOver(), getCyclic()));
  return adjoint.result();
}
