//===- KinaTypes.td - The kina tensor type -----------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINATYPES_TD
#define KINA_DIALECT_KINATYPES_TD

include "Kina/Dialect/KinaAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/BuiltinTypes.td"

class Kina_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kina_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Kina_TensorType : Kina_Type<"KinaTensor", "tensor",
                                [ShapedTypeInterface, ValueSemantics]> {
  let summary = "static-shape tensor with a placement";
  let description = [{
    A ranked tensor whose every dimension is a static positive integer, whose
    element type is `f32`, `i32` or `i64`, and whose placement is part of
    the type. Rank 0 is a scalar.

    ```mlir
    !kina.tensor<1x4x4xf32, @host>
    !kina.tensor<f32, @host>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::kina::PlacementAttr":$placement);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 0;
  let extraClassDeclaration = [{
    using ::mlir::ShapedType::Trait<KinaTensorType>::getRank;
    using ::mlir::ShapedType::Trait<KinaTensorType>::getNumElements;
    using ::mlir::ShapedType::Trait<KinaTensorType>::getDimSize;
    bool hasRank() const { return true; }
    KinaTensorType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                             ::mlir::Type elementType) const;
    /// The element type as the ABI names it (the verifier admits no other).
    ::mlir::kina::DType getDType() const;
    /// The same shape and element type, placed otherwise.
    KinaTensorType withPlacement(::mlir::kina::PlacementAttr placement) const {
      return get(getContext(), getShape(), getElementType(), placement);
    }
    /// The same element type and placement with another shape.
    KinaTensorType withShape(::llvm::ArrayRef<int64_t> shape) const {
      return cloneWith(shape, getElementType());
    }
  }];
}

// The C++ type stays `::mlir::Type` so that assembly formats print the full
// `!kina.tensor<...>` rather than its stripped `<...>` body.
def Kina_Tensor : Type<CPred<"::llvm::isa<::mlir::kina::KinaTensorType>($_self)">,
                       "kina tensor">;

#endif // KINA_DIALECT_KINATYPES_TD
