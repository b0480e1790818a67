//===- ShapeRules.cpp - The typing rules of every kina op -----------------===//
//
// Each op's `inferResultType` is the one statement of its typing rule
// (docs/language.md, "Ops"). The verifier compares the result type with
// it, `createInferred` builds with it and the frontend asks it for result
// types, so a rule lives only here.
// Rules read attributes defensively: they also run on unverified ops.
//
//===----------------------------------------------------------------------===//

#include "RuleContext.h"

#include "Kina/Dialect/KinaDialect.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kina;

using mlir::kina::detail::RuleContext;

/// The element count of `shape`, or nullopt when it overflows.
static std::optional<int64_t> elementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim <= 0 || llvm::MulOverflow(count, dim, count))
      return std::nullopt;
  return count;
}

static FailureOr<Type> inferConstant(RuleContext &rule) {
  auto attrs = rule.attributesOf<ConstantOp>();
  if (failed(rule.tensors(0)) || failed(attrs))
    return failure();
  FloatAttr value = attrs->getValueAttr();
  MLIRContext *ctx = value.getContext();
  if (!getDType(value.getType()))
    return rule.error() << "expects a value of a float element type ("
                        << listFloatDTypeNames() << "), got "
                        << value.getType();
  return Type(KinaTensorType::get(ctx, {}, value.getType(),
                                  PlacementAttr::getHost(ctx)));
}
KINA_SHAPE_RULE(ConstantOp, inferConstant)

static FailureOr<Type> inferSlice(RuleContext &rule) {
  auto operands = rule.tensors(1);
  auto attrs = rule.attributesOf<SliceOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  int64_t axis = attrs->getAxis(), start = attrs->getStart(),
          stop = attrs->getStop();
  KinaTensorType input = (*operands)[0];
  if (failed(rule.checkAxis(axis, input, "operand")))
    return failure();
  int64_t dim = input.getDimSize(axis);
  if (!(0 <= start && start < stop && stop <= dim))
    return rule.error() << "range [" << start << ", " << stop
                        << ") is not a non-empty part of axis " << axis
                        << " (size " << dim << ") of operand of shape "
                        << formatShape(input.getShape());
  SmallVector<int64_t> shape(input.getShape());
  shape[axis] = stop - start;
  return rule.shaped(input, shape);
}
KINA_SHAPE_RULE(SliceOp, inferSlice)

static FailureOr<Type> inferConcat(RuleContext &rule) {
  auto operands = rule.tensors(-1);
  auto attrs = rule.attributesOf<ConcatOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  int64_t axis = attrs->getAxis();
  KinaTensorType first = operands->front();
  if (failed(rule.checkAxis(axis, first, "operand #0")))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [index, operand] : llvm::enumerate(*operands)) {
    if (index == 0)
      continue;
    std::string name = "operand #" + std::to_string(index);
    if (failed(rule.checkSameElementType(first, "operand #0", operand, name)))
      return failure();
    bool sameRank = operand.getRank() == first.getRank();
    for (int64_t d = 0; sameRank && d < first.getRank(); ++d)
      sameRank = d == axis || operand.getDimSize(d) == first.getDimSize(d);
    if (!sameRank)
      return rule.error() << "operand #0 of shape "
                          << formatShape(first.getShape()) << " and " << name
                          << " of shape " << formatShape(operand.getShape())
                          << " differ on a dimension other than axis " << axis;
    if (llvm::AddOverflow(shape[axis], operand.getDimSize(axis),
                          shape[axis]))
      return rule.error() << "concatenated axis " << axis << " overflows";
  }
  return rule.shaped(first, shape);
}
KINA_SHAPE_RULE(ConcatOp, inferConcat)

static FailureOr<Type> inferGather(RuleContext &rule) {
  auto operands = rule.tensors(2);
  if (failed(operands))
    return failure();
  auto [table, ids] = std::make_pair((*operands)[0], (*operands)[1]);
  if (failed(rule.checkFloat(table, "table")))
    return failure();
  if (table.getRank() < 1)
    return rule.error() << "expects a table of rank >= 1, got shape "
                        << formatShape(table.getShape());
  if (failed(rule.checkIds(ids)))
    return failure();
  SmallVector<int64_t> shape(ids.getShape());
  llvm::append_range(shape, table.getShape().drop_front());
  return rule.shaped(table, shape);
}
KINA_SHAPE_RULE(GatherOp, inferGather)

/// scatter_add: float updates whose leading dims are the ids' shape; a
/// table of `rows` rows of the updates' trailing shape.
static FailureOr<Type> inferScatterAdd(RuleContext &rule) {
  auto operands = rule.tensors(2);
  auto attrs = rule.attributesOf<ScatterAddOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  int64_t rows = attrs->getRows();
  auto [updates, ids] = std::make_pair((*operands)[0], (*operands)[1]);
  if (failed(rule.checkFloat(updates, "updates")) || failed(rule.checkIds(ids)))
    return failure();
  if (rows < 1)
    return rule.error() << "rows must be >= 1, got " << rows;
  if (updates.getRank() < ids.getRank() ||
      !updates.getShape().take_front(ids.getRank()).equals(ids.getShape()))
    return rule.error() << "expects updates whose leading dims are the ids' "
                        << formatShape(ids.getShape()) << ", got shape "
                        << formatShape(updates.getShape());
  SmallVector<int64_t> shape = {rows};
  llvm::append_range(shape, updates.getShape().drop_front(ids.getRank()));
  return rule.shaped(updates, shape);
}
KINA_SHAPE_RULE(ScatterAddOp, inferScatterAdd)

static FailureOr<Type> inferMatmul(RuleContext &rule) {
  auto operands = rule.tensors(2);
  if (failed(operands))
    return failure();
  auto [lhs, rhs] = std::make_pair((*operands)[0], (*operands)[1]);
  if (failed(rule.checkFloat(lhs, "lhs")) ||
      failed(rule.checkFloat(rhs, "rhs")) ||
      failed(rule.checkSameElementType(lhs, "lhs", rhs, "rhs")))
    return failure();
  std::string shapes = "lhs of shape " + formatShape(lhs.getShape()) +
                       " and rhs of shape " + formatShape(rhs.getShape());
  if (lhs.getRank() < 2 || lhs.getRank() != rhs.getRank())
    return rule.error() << "expects operands of equal rank >= 2, got "
                        << shapes;
  int64_t rank = lhs.getRank();
  if (lhs.getShape().drop_back(2) != rhs.getShape().drop_back(2))
    return rule.error() << "batch dimensions differ: " << shapes;
  if (lhs.getDimSize(rank - 1) != rhs.getDimSize(rank - 2))
    return rule.error() << "contracting dimensions differ ("
                        << lhs.getDimSize(rank - 1) << " vs "
                        << rhs.getDimSize(rank - 2) << "): " << shapes;
  SmallVector<int64_t> shape(lhs.getShape());
  shape[rank - 1] = rhs.getDimSize(rank - 1);
  return rule.shaped(lhs, shape);
}
KINA_SHAPE_RULE(MatmulOp, inferMatmul)

/// `x @ broadcast(w)`: w keeps its own matrix dims and takes the batch
/// dims of x.
FailureOr<SmallVector<int64_t>>
MatmulOp::contextualBroadcastShape(KinaTensorType input, KinaTensorType other,
                                   EmitErrorFn emitError) {
  if (input.getRank() < 2 || other.getRank() < 2)
    return emitError() << "as an operand of a matmul, broadcast(x) needs x "
                          "and the other operand of rank >= 2, got "
                       << formatShape(input.getShape()) << " and "
                       << formatShape(other.getShape());
  SmallVector<int64_t> shape(other.getShape().drop_back(2));
  llvm::append_range(shape, input.getShape().take_back(2));
  return shape;
}

static FailureOr<Type> inferBroadcast(RuleContext &rule) {
  auto operands = rule.tensors(1);
  auto attrs = rule.attributesOf<BroadcastOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  ArrayRef<int64_t> target = attrs->getShape();
  KinaTensorType input = (*operands)[0];
  ArrayRef<int64_t> source = input.getShape();
  auto mismatch = [&]() {
    return rule.error() << "cannot broadcast operand of shape "
                        << formatShape(source) << " to shape "
                        << formatShape(target);
  };
  if (source.size() > target.size())
    return mismatch() << ": the target has fewer dimensions";
  size_t offset = target.size() - source.size();
  for (auto [i, dim] : llvm::enumerate(source))
    if (dim != 1 && dim != (target)[offset + i])
      return mismatch() << ": dimension " << i << " is " << dim;
  return rule.shaped(input, target);
}
KINA_SHAPE_RULE(BroadcastOp, inferBroadcast)

static FailureOr<Type> inferReshape(RuleContext &rule) {
  auto operands = rule.tensors(1);
  auto attrs = rule.attributesOf<ReshapeOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  ArrayRef<int64_t> target = attrs->getShape();
  KinaTensorType input = (*operands)[0];
  std::optional<int64_t> count = elementCount(target);
  if (!count || *count != input.getNumElements())
    return rule.error() << "cannot reshape operand of shape "
                        << formatShape(input.getShape()) << " ("
                        << input.getNumElements() << " elements) to shape "
                        << formatShape(target);
  return rule.shaped(input, target);
}
KINA_SHAPE_RULE(ReshapeOp, inferReshape)

static FailureOr<Type> inferTranspose(RuleContext &rule) {
  auto operands = rule.tensors(1);
  auto attrs = rule.attributesOf<TransposeOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  ArrayRef<int64_t> perm = attrs->getPerm();
  KinaTensorType input = (*operands)[0];
  int64_t rank = input.getRank();
  SmallVector<bool> seen(rank, false);
  bool isPermutation = int64_t(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!isPermutation || p < 0 || p >= rank || seen[p]) {
      isPermutation = false;
      break;
    }
    seen[p] = true;
  }
  if (!isPermutation)
    return rule.error() << "permutation " << formatShape(perm)
                        << " is not a permutation of 0.." << rank - 1
                        << " for operand of shape "
                        << formatShape(input.getShape());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(input.getDimSize(p));
  return rule.shaped(input, shape);
}
KINA_SHAPE_RULE(TransposeOp, inferTranspose)

/// softmax, sum, mean, max: a float operand and an axis in range; the
/// result has the operand's shape, with `axis` of size 1 when `reduces`.
template <typename OpTy>
static FailureOr<Type> inferAlongAxis(RuleContext &rule,
                                      bool reduces) {
  auto operands = rule.tensors(1);
  auto attrs = rule.attributesOf<OpTy>();
  if (failed(operands) || failed(attrs))
    return failure();
  int64_t axis = attrs->getAxis();
  KinaTensorType input = (*operands)[0];
  if (failed(rule.checkFloat(input, "operand")) ||
      failed(rule.checkAxis(axis, input, "operand")))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (reduces)
    shape[axis] = 1;
  return rule.shaped(input, shape);
}

template <typename OpTy>
static FailureOr<Type> inferAxisReduction(RuleContext &rule) {
  return inferAlongAxis<OpTy>(rule, true);
}

template <typename OpTy>
static FailureOr<Type> inferSoftmax(RuleContext &rule) {
  return inferAlongAxis<OpTy>(rule,
                              false);
}

/// exp, log, sqrt, rsqrt, tanh, abs, relu: floats, same shape.
static FailureOr<Type> inferUnaryMath(RuleContext &rule) {
  auto operands = rule.tensors(1);
  if (failed(operands) || failed(rule.checkFloat((*operands)[0], "operand")))
    return failure();
  return rule.shaped((*operands)[0], (*operands)[0].getShape());
}

KINA_SHAPE_RULE(SoftmaxOp, inferSoftmax<SoftmaxOp>)
KINA_SHAPE_RULE(LogSoftmaxOp, inferSoftmax<LogSoftmaxOp>)
KINA_SHAPE_RULE(SumOp, inferAxisReduction<SumOp>)
KINA_SHAPE_RULE(MeanOp, inferAxisReduction<MeanOp>)
KINA_SHAPE_RULE(MaxOp, inferAxisReduction<MaxOp>)
KINA_SHAPE_RULE(ExpOp, inferUnaryMath)
KINA_SHAPE_RULE(LogOp, inferUnaryMath)
KINA_SHAPE_RULE(SqrtOp, inferUnaryMath)
KINA_SHAPE_RULE(RsqrtOp, inferUnaryMath)
KINA_SHAPE_RULE(TanhOp, inferUnaryMath)
KINA_SHAPE_RULE(AbsOp, inferUnaryMath)
KINA_SHAPE_RULE(ReluOp, inferUnaryMath)

/// Operands of identical shapes and element types (floats when `floatOnly`),
/// named `names` in errors: the elementwise ops' rule.
static FailureOr<Type> inferElementwise(RuleContext &rule,
                                        ArrayRef<StringRef> names,
                                        bool floatOnly) {
  auto operands = rule.tensors(names.size());
  if (failed(operands))
    return failure();
  KinaTensorType first = (*operands)[0];
  for (auto [operand, name] : llvm::zip(*operands, names)) {
    if (floatOnly && failed(rule.checkFloat(operand, name)))
      return failure();
    if (failed(rule.checkSameElementType(first, names[0], operand, name)))
      return failure();
    if (operand.getShape() != first.getShape())
      return rule.error() << "expects operands of identical shape, got "
                          << names[0] << " of shape "
                          << formatShape(first.getShape()) << " and " << name
                          << " of shape " << formatShape(operand.getShape())
                          << " (broadcast one explicitly: broadcast(x) or broadcast[shape=[...]] x)";
  }
  return rule.shaped(first, first.getShape());
}

static constexpr StringRef kBinaryOperandNames[] = {"lhs", "rhs"};

/// `+ - * /`: identical shapes, element types and placements.
static FailureOr<Type> inferElementwiseBinary(RuleContext &rule) {
  return inferElementwise(rule,
                          kBinaryOperandNames, /*floatOnly=*/false);
}

/// maximum, minimum, the comparisons: the elementwise rule, on floats.
static FailureOr<Type> inferFloatElementwise(RuleContext &rule) {
  return inferElementwise(rule,
                          kBinaryOperandNames, /*floatOnly=*/true);
}

/// select (`where`): a mask and the two choices, floats of one type and shape.
static FailureOr<Type> inferSelect(RuleContext &rule) {
  static constexpr StringRef names[] = {"mask", "on_true", "on_false"};
  return inferElementwise(rule, names,
                          /*floatOnly=*/true);
}

KINA_SHAPE_RULE(AddOp, inferElementwiseBinary)
KINA_SHAPE_RULE(SubOp, inferElementwiseBinary)
KINA_SHAPE_RULE(MulOp, inferElementwiseBinary)
KINA_SHAPE_RULE(DivOp, inferElementwiseBinary)
KINA_SHAPE_RULE(MaximumOp, inferFloatElementwise)
KINA_SHAPE_RULE(MinimumOp, inferFloatElementwise)
KINA_SHAPE_RULE(EqualOp, inferFloatElementwise)
KINA_SHAPE_RULE(LessOp, inferFloatElementwise)
KINA_SHAPE_RULE(LessEqualOp, inferFloatElementwise)
KINA_SHAPE_RULE(GreaterOp, inferFloatElementwise)
KINA_SHAPE_RULE(GreaterEqualOp, inferFloatElementwise)
KINA_SHAPE_RULE(SelectOp, inferSelect)

/// one_hot: integer ids of any shape; f32 of their shape ++ [classes].
static FailureOr<Type> inferOneHot(RuleContext &rule) {
  auto operands = rule.tensors(1);
  auto attrs = rule.attributesOf<OneHotOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  int64_t classes = attrs->getClasses();
  KinaTensorType ids = (*operands)[0];
  if (failed(rule.checkIds(ids)))
    return failure();
  if (classes < 1)
    return rule.error() << "classes must be >= 1, got " << classes;
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(classes);
  MLIRContext *ctx = ids.getContext();
  KinaTensorType like = KinaTensorType::get(ctx, ids.getShape(),
                                            Float32Type::get(ctx),
                                            ids.getPlacement());
  return rule.shaped(like, shape);
}
KINA_SHAPE_RULE(OneHotOp, inferOneHot)

/// cast: any operand; the result has its shape and placement, of the float
/// element type `to`.
static FailureOr<Type> inferCast(RuleContext &rule) {
  auto operands = rule.tensors(1);
  auto attrs = rule.attributesOf<CastOp>();
  if (failed(operands) || failed(attrs))
    return failure();
  Type to = attrs->getTo();
  if (!isa<FloatType>(to) || !getDType(to))
    return rule.error() << "casts to a float element type ("
                        << listFloatDTypeNames() << "), got " << to;
  KinaTensorType input = (*operands)[0];
  KinaTensorType like = KinaTensorType::get(
      input.getContext(), input.getShape(), to, input.getPlacement());
  return rule.shaped(like, input.getShape());
}
KINA_SHAPE_RULE(CastOp, inferCast)

static FailureOr<Type> inferNeg(RuleContext &rule) {
  auto operands = rule.tensors(1);
  if (failed(operands))
    return failure();
  return rule.shaped((*operands)[0], (*operands)[0].getShape());
}
KINA_SHAPE_RULE(NegOp, inferNeg)

DictionaryAttr mlir::kina::getInherentAttrs(Operation *op) {
  auto inherent =
      dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute());
  return inherent ? inherent : DictionaryAttr::get(op->getContext());
}

LogicalResult mlir::kina::verifyInferredResultType(Operation *op) {
  auto iface = cast<InferResultTypeOpInterface>(op);
  MeshOp mesh = MeshOp::lookup(op);
  FailureOr<Type> inferred =
      iface.inferResultType(op->getOperandTypes(), getInherentAttrs(op), mesh,
                            [op] { return op->emitOpError(); });
  if (failed(inferred))
    return failure();
  auto actual = cast<KinaTensorType>(op->getResult(0).getType());
  auto expected = cast<KinaTensorType>(*inferred);
  // Where the rule leaves the placement open (a constant's, a reshard's;
  // `@auto` on the mesh), the op's type may decide it.
  PlacementAttr want = expected.getPlacement(), got = actual.getPlacement();
  bool placementOk = want == got || op->hasTrait<ResultPlacementIsFree>() ||
                     (want.isAuto() && got.isOnMesh());
  if (!placementOk || actual.getShape() != expected.getShape() ||
      actual.getElementType() != expected.getElementType())
    return op->emitOpError()
           << "result type " << actual << " does not match the inferred type "
           << expected;
  for (Type type :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
    if (failed(verifyPlacement(cast<KinaTensorType>(type), mesh,
                               [op] { return op->emitOpError(); })))
      return failure();
  return success();
}
