//===- KinaAttrs.td - Placement attributes -----------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINAATTRS_TD
#define KINA_DIALECT_KINAATTRS_TD

include "Kina/Dialect/KinaDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// Where a tensor lives. Only `host` exists today; device, replicated and
// sharded placements will be further cases (or parameterised attributes)
// without changing the tensor type's shape.
def Kina_Placement : I32EnumAttr<"Placement", "where a tensor lives", [
    I32EnumAttrCase<"host", 0>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::kina";
}

def Kina_PlacementAttr : EnumAttr<Kina_Dialect, Kina_Placement, "placement"> {
  let summary = "placement of a kina tensor";
}

#endif // KINA_DIALECT_KINAATTRS_TD
