//===- KinaDialect.cpp - Dialect registration -----------------------------===//
//
// Registers the kina types, attributes and ops, materializes the constants
// that folding produces, and verifies the dialect's discardable attributes
// wherever they appear.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kina;

#include "Kina/Dialect/KinaOpsDialect.cpp.inc"

namespace {
/// Every kina op is pure and has no region: calls of kina functions may be
/// inlined (`--inline`), as `--kina-merge-shards` wants before comparing
/// programs.
struct KinaInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void KinaDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "Kina/Dialect/KinaOps.cpp.inc"
      >();
  addInterfaces<KinaInlinerInterface>();
}

Operation *KinaDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto tensorType = dyn_cast<KinaTensorType>(type);
  auto floatValue = dyn_cast<FloatAttr>(value);
  if (!tensorType || !floatValue || tensorType.getRank() != 0 ||
      tensorType.getElementType() != floatValue.getType())
    return nullptr;
  return ConstantOp::create(builder, loc, type, floatValue);
}

LogicalResult KinaDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringAttr name = attr.getName();
  if (name == getEntryAttrHelper().getName() ||
      name == getParallelBodyAttrHelper().getName() ||
      name == getReshardAfterForwardAttrHelper().getName() ||
      name == getSplitBackwardAttrHelper().getName() ||
      name == getAutoShardedAttrHelper().getName()) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << name.getValue() << "' is a unit attribute of a function";
    return success();
  }
  if (name == getProbeAttrHelper().getName() ||
      name == getProbeGlobalAttrHelper().getName()) {
    // Its value is the first result: a call of a probed function returns
    // the callee's probes after it.
    bool onValue = op->getNumResults() >= 1 &&
                   isa<KinaTensorType>(op->getResult(0).getType()) &&
                   (op->getNumResults() == 1 || isa<CallOpInterface>(op));
    auto type = dyn_cast<TypeAttr>(attr.getValue());
    bool wellTyped = name == getProbeAttrHelper().getName()
                         ? isa<IntegerAttr>(attr.getValue())
                         : type && isa<KinaTensorType>(type.getValue());
    if (!onValue || !wellTyped)
      return op->emitError()
             << "'" << name.getValue()
             << "' marks an op with one kina tensor result, or a call "
                "whose first result is one (an integer probe number, or "
                "that result's kina tensor type)";
    return success();
  }
  if (name == getSplitInputsAttrHelper().getName()) {
    if (!isa<DenseI64ArrayAttr>(attr.getValue()) ||
        !isa<FunctionOpInterface>(op) ||
        !op->hasAttr(getSplitBackwardAttrHelper().getName()))
      return op->emitError()
             << "'" << name.getValue()
             << "' is an i64 array on a function marked '"
             << getSplitBackwardAttrHelper().getName().getValue() << "'";
    return success();
  }
  if (name == getPerDeviceAttrHelper().getName()) {
    auto of = dyn_cast<StringAttr>(attr.getValue());
    if (!of || of.empty() || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name.getValue()
                             << "' is the name of the function a function "
                                "is the per-device form of";
    return success();
  }
  if (name == getPackRowsAttrHelper().getName()) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<LoopLikeOpInterface>(op))
      return op->emitError()
             << "'" << name.getValue() << "' is a unit attribute of a loop";
    return success();
  }
  if (name == getNameAttrHelper().getName())
    return op->emitError() << "'" << name.getValue()
                           << "' names a function argument; it belongs in "
                              "the argument's attributes";
  return op->emitError() << "unknown kina attribute '" << name.getValue()
                         << "'";
}

/// `kina.global`: the global type (a mesh-placed kina tensor) of a
/// per-device argument or result.
static LogicalResult verifyGlobalType(Operation *op, NamedAttribute attr) {
  auto type = dyn_cast<TypeAttr>(attr.getValue());
  auto tensor =
      type ? dyn_cast<KinaTensorType>(type.getValue()) : KinaTensorType();
  if (!tensor || !tensor.getPlacement().isMesh())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is the global type of a per-device value: "
                              "a mesh-placed kina tensor type";
  return success();
}

bool mlir::kina::canReuseBuffer(Type param, Type result) {
  if (param == result)
    return true;
  auto paramTensor = dyn_cast<KinaTensorType>(param);
  auto resultTensor = dyn_cast<KinaTensorType>(result);
  return paramTensor && resultTensor && resultTensor.getPlacement().isAuto() &&
         paramTensor.getPlacement().isOnMesh() &&
         paramTensor.withPlacement(resultTensor.getPlacement()) == result;
}

/// `kina.reuses`: an argument of the function with the result's type (or
/// an `@auto` result, canReuseBuffer), reused by no other result.
static LogicalResult verifyReuses(Operation *op, unsigned resultIndex,
                                  NamedAttribute attr) {
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!index || !fn)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is an integer on a function result";
  int64_t arg = index.getInt();
  if (arg < 0 || arg >= int64_t(fn.getNumArguments()))
    return op->emitError() << "result " << resultIndex << " reuses argument "
                           << arg << ", which the function does not have";
  if (!canReuseBuffer(fn.getArgumentTypes()[arg],
                      fn.getResultTypes()[resultIndex]))
    return op->emitError() << "result " << resultIndex << " reuses argument "
                           << arg << " of another type";
  for (unsigned other = 0; other < resultIndex; ++other)
    if (fn.getResultAttr(other, attr.getName()) == attr.getValue())
      return op->emitError() << "results " << other << " and " << resultIndex
                             << " both reuse argument " << arg;
  return success();
}

LogicalResult KinaDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() == getReusesAttrHelper().getName())
    return verifyReuses(op, resultIndex, attr);
  if (attr.getName() != getGlobalAttrHelper().getName())
    return op->emitError() << "unknown kina result attribute '"
                           << attr.getName().getValue() << "'";
  return verifyGlobalType(op, attr);
}

LogicalResult KinaDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == getGlobalAttrHelper().getName())
    return verifyGlobalType(op, attr);
  if (attr.getName() == getWeightAttrHelper().getName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' is a unit attribute of an argument";
    return success();
  }
  if (attr.getName() != getNameAttrHelper().getName())
    return op->emitError() << "unknown kina argument attribute '"
                           << attr.getName().getValue() << "'";
  auto value = dyn_cast<StringAttr>(attr.getValue());
  if (!value || value.empty())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' of argument " << argIndex
                           << " must be a non-empty string";
  return success();
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
