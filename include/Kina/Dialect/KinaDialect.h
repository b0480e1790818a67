//===- KinaDialect.h - The kina dialect -------------------------*- C++ -*-===//
//
// Include this header to use the kina dialect: it brings the dialect, its
// placement attribute, its tensor type and its ops.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_DIALECT_KINADIALECT_H
#define KINA_DIALECT_KINADIALECT_H

#include "Kina/ABI/TensorTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Kina/Dialect/KinaOpsDialect.h.inc"

#include "Kina/Dialect/KinaEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "Kina/Dialect/KinaAttrs.h.inc"

namespace mlir::kina {
/// The name of the one axis of a mesh declared without names (`@mesh([4])`).
inline constexpr llvm::StringLiteral kDefaultMeshAxis = "x";
/// A placement as source and IR write it (`@sharded(axis=1)`), and back.
void printPlacement(llvm::raw_ostream &os, PlacementAttr placement);
FailureOr<PlacementAttr> parsePlacement(AsmParser &parser);
} // namespace mlir::kina

#define GET_TYPEDEF_CLASSES
#include "Kina/Dialect/KinaOpsTypes.h.inc"

namespace mlir::kina {
/// Starts a diagnostic; the shape rules append their message to it.
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// Checks an op's result type against its shape rule, and the placements
/// of its operands and result against the module's mesh (the ops'
/// verifier).
LogicalResult verifyInferredResultType(Operation *op);

/// Whether any kina tensor among `type`'s inputs and results has a
/// placement for which `pred` holds (a function on the mesh, say).
bool anyPlacement(FunctionType type,
                  llvm::function_ref<bool(PlacementAttr)> pred);

/// Whether a result of type `result` may be written into the buffer of a
/// parameter of type `param` (`@reuses`): the same type, or the result
/// `@auto` and the parameter on the mesh otherwise alike (automatic
/// sharding gives the result the parameter's placement).
bool canReuseBuffer(Type param, Type result);

/// Where the ops of `forward`'s adjoint are: its location, marked
/// `"adjoint of <op name>"` (lib/Dialect/AdjointRules.cpp).
Location getAdjointLoc(Operation *forward);

/// Where a reverseMode function places the gradient of `parameter` ("'w'",
/// or "#2" for one without a name): at the parameter's location
/// `declared`, marked `"adjoint of parameter <parameter>"` (an adjoint
/// location).
Location getGradientLoc(StringRef parameter, Location declared);

/// The parameter whose gradient is placed at `loc` ("'w'"), when
/// getGradientLoc made it.
std::optional<std::string> getGradientOf(Location loc);

/// The first `file:line:col` in `loc` (through names and fusions: an
/// adjoint op's location names its forward op's), or `unknown`.
std::string locationText(Location loc,
                         StringRef unknown = "an unknown location");

/// The placement in `value`'s kina tensor type.
inline PlacementAttr placementOf(Value value) {
  return cast<KinaTensorType>(value.getType()).getPlacement();
}

/// Whether `loc` is (or holds) one getAdjointLoc made: an op of a backward
/// pass.
bool isAdjointLoc(Location loc);


class MeshOp;

/// Ops whose result placement is their own to choose (a constant, a
/// reshard), not derived from their operands'.
template <typename ConcreteType>
class ResultPlacementIsFree
    : public OpTrait::TraitBase<ConcreteType, ResultPlacementIsFree> {};

/// Ops that only repeat or move their operand's elements (or make a
/// constant): recomputed, not saved, across a split reverseMode's cut.
template <typename ConcreteType>
class RecomputedNotSaved
    : public OpTrait::TraitBase<ConcreteType, RecomputedNotSaved> {};

/// Ops whose operands all have the result's shape and placement, each
/// result element computed from the operands' elements at its index.
template <typename ConcreteType>
class Elementwise : public OpTrait::TraitBase<ConcreteType, Elementwise> {};

/// The MLIR element type of `dtype`.
Type getElementType(MLIRContext *context, DType dtype);
/// The dtype of an MLIR element type, if the language has it.
std::optional<DType> getDType(Type elementType);
} // namespace mlir::kina

#include "Kina/Dialect/KinaInterfaces.h.inc"

#define GET_OP_CLASSES
#include "Kina/Dialect/KinaOps.h.inc"

namespace mlir::kina {
/// An op's inherent attributes (its properties) as a dictionary, the form
/// the shape rules read.
DictionaryAttr getInherentAttrs(Operation *op);

/// Checks `type`'s placement against `mesh` (null when the module has
/// none): a mesh placement needs a mesh, names its axes, and each split
/// dim divides by its axis size.
LogicalResult verifyPlacement(KinaTensorType type, MeshOp mesh,
                              EmitErrorFn emitError);

namespace detail {
template <typename OpTy, typename... Args>
OpTy createInferred(bool report, OpBuilder &b, Location loc, Args &&...args) {
  OperationState state(loc, OpTy::getOperationName());
  OpTy::build(b, state, b.getNoneType(), std::forward<Args>(args)...);
  DictionaryAttr inherent = b.getDictionaryAttr({});
  if constexpr (!std::is_same_v<typename OpTy::Properties, EmptyProperties>)
    inherent = cast<DictionaryAttr>(OpTy::getPropertiesAsAttr(
        b.getContext(),
        *state.getRawProperties().as<typename OpTy::Properties *>()));
  FailureOr<Type> type = OpTy::inferResultType(
      TypeRange(state.operands), inherent,
      MeshOp::lookup(b.getInsertionBlock()->getParentOp()), [&] {
        if (!report)
          return InFlightDiagnostic();
        return emitError(loc) << "internal error: building "
                              << OpTy::getOperationName() << ": ";
      });
  if (failed(type))
    return nullptr;
  state.types.assign({*type});
  return cast<OpTy>(b.create(state));
}
} // namespace detail

/// Creates `OpTy` with the result type its shape rule infers. `args` are
/// those of OpTy's ODS builder after the result type:
///   createInferred<SliceOp>(b, loc, input, axis, start, stop)
/// so that no rewrite computes a shape by hand. An ill-typed request is an
/// internal error: it is reported at `loc` and yields a null op.
template <typename OpTy, typename... Args>
OpTy createInferred(OpBuilder &b, Location loc, Args &&...args) {
  return detail::createInferred<OpTy>(true, b, loc,
                                      std::forward<Args>(args)...);
}

/// The same for rewrites that only try: an ill-typed request yields a null
/// op and reports nothing.
template <typename OpTy, typename... Args>
OpTy tryCreateInferred(OpBuilder &b, Location loc, Args &&...args) {
  return detail::createInferred<OpTy>(false, b, loc,
                                      std::forward<Args>(args)...);
}
} // namespace mlir::kina

#endif // KINA_DIALECT_KINADIALECT_H
