//===- RuleContext.h - Checked access for the shape rules -------*- C++ -*-===//
#ifndef KINA_LIB_DIALECT_RULECONTEXT_H
#define KINA_LIB_DIALECT_RULECONTEXT_H

#include "Kina/Dialect/KinaDialect.h"

namespace mlir::kina::detail {

/// Checked access to operand types and attributes for one rule.
class RuleContext {
public:
  RuleContext(TypeRange operandTypes, DictionaryAttr attributes,
              Operation *mesh, EmitErrorFn emitError)
      : operandTypes(operandTypes), attributes(attributes),
        mesh(dyn_cast_or_null<MeshOp>(mesh)), emitError(emitError) {}

  /// The operands as kina tensors, or an error when the count is not
  /// `count` (when `count` is negative: at least one). Also decides the
  /// result's placement: `@host` of host operands, `@local` of per-device
  /// ones, `@auto` (for propagation to decide) of mesh-placed ones; one
  /// op never mixes these.
  FailureOr<SmallVector<KinaTensorType>> tensors(int count) {
    if ((count >= 0 && operandTypes.size() != size_t(count)) ||
        (count < 0 && operandTypes.empty()))
      return error() << "expects "
                     << (count < 0 ? "at least one"
                                   : std::to_string(count).c_str())
                     << " operand(s), got " << operandTypes.size();
    SmallVector<KinaTensorType> result;
    for (Type type : operandTypes) {
      auto tensor = dyn_cast_or_null<KinaTensorType>(type);
      if (!tensor)
        return error() << "expects kina tensor operands, got " << type;
      result.push_back(tensor);
    }
    for (auto [index, tensor] : llvm::enumerate(result)) {
      PlacementAttr placement = tensor.getPlacement();
      if (index == 0) {
        resultPlacement = placement.isOnMesh()
                              ? PlacementAttr::getAuto(placement.getContext())
                              : placement;
        continue;
      }
      if (placement.isOnMesh() != resultPlacement.isOnMesh() ||
          placement.isHost() != resultPlacement.isHost())
        return error() << "operands mix placements: operand #0 is "
                       << result.front().getPlacement().str()
                       << " but operand #" << index << " is " << placement.str()
                       << " (@host and mesh placements never meet in one "
                          "op)";
    }
    return result;
  }

  /// The attributes of an `OpTy`, typed: its generic adaptor over the
  /// operand types, its properties read from the attribute dictionary (the
  /// frontend asks a rule before the op exists, so a rule reads a
  /// dictionary, never an op). An attribute missing or of the wrong kind is
  /// an error.
  template <typename OpTy>
  FailureOr<typename OpTy::template GenericAdaptor<TypeRange>>
  attributesOf() {
    typename OpTy::Properties properties;
    if (!attributes ||
        failed(OpTy::setPropertiesFromAttr(properties, attributes, emitError)))
      return error() << "expects the attributes of "
                     << OpTy::getOperationName();
    return typename OpTy::template GenericAdaptor<TypeRange>(
        operandTypes, attributes, properties);
  }

  /// Checks `0 <= axis < rank` of the operand named `what`.
  LogicalResult checkAxis(int64_t axis, KinaTensorType type, StringRef what) {
    if (axis >= 0 && axis < type.getRank())
      return success();
    return error() << "axis " << axis << " is out of range for " << what
                   << " of shape " << formatShape(type.getShape()) << " (rank "
                   << type.getRank() << ")";
  }

  /// Checks that two operands share their element type.
  LogicalResult checkSameElementType(KinaTensorType a, StringRef aName,
                                     KinaTensorType b, StringRef bName) {
    if (a.getElementType() != b.getElementType())
      return error() << aName << " has element type " << a.getElementType()
                     << " but " << bName << " has " << b.getElementType();
    return success();
  }

  /// The size of mesh axis `name`, or an error naming the mesh's axes.
  FailureOr<int64_t> meshAxisSize(StringRef name) {
    std::optional<int64_t> size = mesh ? mesh.getAxisSize(name) : std::nullopt;
    if (size && *size >= 1)
      return *size;
    if (size) // an invalid mesh, which its own verifier reports
      return failure();
    if (!mesh)
      return error() << "names mesh axis '" << name
                     << "', but the module declares no mesh";
    return error() << "names mesh axis '" << name
                   << "', but the mesh's axes are " << mesh.getAxisList();
  }

  /// Checks that `ids` holds integer ids (i32 or i64).
  LogicalResult checkIds(KinaTensorType ids) {
    Type idType = ids.getElementType();
    if (idType.isInteger(32) || idType.isInteger(64))
      return success();
    return error() << "expects ids of element type i32 or i64, got "
                   << idType << " of shape " << formatShape(ids.getShape());
  }

  /// Checks that `type` holds floats (f32, f64, f16 or bf16).
  LogicalResult checkFloat(KinaTensorType type, StringRef what) {
    if (isa<FloatType>(type.getElementType()))
      return success();
    return error() << "expects " << what
                   << " of a float element type (" << listFloatDTypeNames()
                   << "), got "
                   << type.getElementType() << " of shape "
                   << formatShape(type.getShape());
  }

  /// A tensor type of `shape` (and `like`'s element type), placed as
  /// decided by `tensors()` unless `placement` says otherwise, after
  /// checking that every dim is positive and the element count is
  /// representable.
  FailureOr<Type> shaped(KinaTensorType like, ArrayRef<int64_t> shape,
                         PlacementAttr placement = {}) {
    if (!placement)
      placement = resultPlacement ? resultPlacement : like.getPlacement();
    if (failed(KinaTensorType::verify(emitError, shape, like.getElementType(),
                                      placement)))
      return failure();
    return Type(KinaTensorType::get(like.getContext(), shape,
                                    like.getElementType(), placement));
  }

  InFlightDiagnostic error() { return emitError(); }

private:
  TypeRange operandTypes;
  DictionaryAttr attributes;
  MeshOp mesh;
  EmitErrorFn emitError;
  PlacementAttr resultPlacement;
};
} // namespace mlir::kina::detail

/// Defines `OP::inferResultType` (InferResultTypeOpInterface) as the rule
/// `RULE(RuleContext &)`, which reads the operands and attributes checked.
#define KINA_SHAPE_RULE(OP, RULE)                                              \
  ::mlir::FailureOr<::mlir::Type> OP::inferResultType(                         \
      ::mlir::TypeRange operandTypes, ::mlir::DictionaryAttr attributes,       \
      ::mlir::Operation *mesh, ::mlir::kina::EmitErrorFn emitError) {          \
    ::mlir::kina::detail::RuleContext rule(operandTypes, attributes, mesh,     \
                                           emitError);                         \
    return RULE(rule);                                                         \
  }

#endif // KINA_LIB_DIALECT_RULECONTEXT_H
