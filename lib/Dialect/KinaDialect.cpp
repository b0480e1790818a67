//===- KinaDialect.cpp - Dialect registration -----------------------------===//
//
// Registers the kina types, attributes and ops, and materializes the
// constants that folding produces.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kina;

#include "Kina/Dialect/KinaOpsDialect.cpp.inc"

void KinaDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "Kina/Dialect/KinaOps.cpp.inc"
      >();
}

Operation *KinaDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  auto tensorType = dyn_cast<KinaTensorType>(type);
  auto floatValue = dyn_cast<FloatAttr>(value);
  if (!tensorType || !floatValue || tensorType.getRank() != 0 ||
      !tensorType.getElementType().isF32())
    return nullptr;
  return ConstantOp::create(builder, loc, type, floatValue);
}

//===----------------------------------------------------------------------===//
// Placement attribute
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "Kina/Dialect/KinaAttrs.cpp.inc"

void KinaDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Kina/Dialect/KinaAttrs.cpp.inc"
      >();
}
