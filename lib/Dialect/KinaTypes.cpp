//===- KinaTypes.cpp - The kina tensor type -------------------------------===//
//
// `!kina.tensor<1x4x4xf32, @host>`: parsing, printing and the invariants
// every kina tensor type satisfies (static positive dims, an element count
// that fits in 64 bits, an element type of the language).
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kina;

#define GET_TYPEDEF_CLASSES
#include "Kina/Dialect/KinaOpsTypes.cpp.inc"

void KinaDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Kina/Dialect/KinaOpsTypes.cpp.inc"
      >();
}

Type mlir::kina::getElementType(MLIRContext *context, mlir::kina::DType dtype) {
  switch (dtype) {
  case mlir::kina::DType::F32:
    return Float32Type::get(context);
  case mlir::kina::DType::F64:
    return Float64Type::get(context);
  case mlir::kina::DType::F16:
    return Float16Type::get(context);
  case mlir::kina::DType::BF16:
    return BFloat16Type::get(context);
  case mlir::kina::DType::I32:
  case mlir::kina::DType::I64:
    break;
  }
  return IntegerType::get(context, mlir::kina::dtypeInfo(dtype).bytes * 8);
}

std::optional<mlir::kina::DType> mlir::kina::getDType(Type elementType) {
  for (const mlir::kina::DTypeInfo &info : mlir::kina::kDTypes)
    if (elementType &&
        elementType == getElementType(elementType.getContext(), info.dtype))
      return info.dtype;
  return std::nullopt;
}

mlir::kina::DType KinaTensorType::getDType() const {
  return *mlir::kina::getDType(getElementType());
}

Type KinaTensorType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  FailureOr<PlacementAttr> placement;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      failed(placement = parsePlacement(parser)) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    shape, elementType, *placement);
}

void KinaTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape())
    printer << dim << "x";
  printer << getElementType() << ", ";
  printPlacement(printer.getStream(), getPlacement());
  printer << ">";
}

LogicalResult
KinaTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> shape, Type elementType,
                       PlacementAttr placement) {
  if (!mlir::kina::getDType(elementType))
    return emitError() << "kina tensor element type must be one of "
                       << mlir::kina::listDTypeNames() << ", got "
                       << elementType;
  if (!placement)
    return emitError() << "kina tensor needs a placement";
  for (int64_t axis : placement.getAxes())
    if (axis >= int64_t(shape.size()))
      return emitError() << "placement " << placement.str() << " splits axis "
                         << axis << ", out of range for shape "
                         << formatShape(shape) << " (rank " << shape.size()
                         << ")";
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim <= 0)
      return emitError() << "kina tensor dimensions must be static and "
                            "positive, got "
                         << formatShape(shape);
    // Element counts (and so byte sizes) must stay representable.
    if (llvm::MulOverflow(elements, dim, elements) ||
        elements > mlir::kina::kMaxElements)
      return emitError() << "kina tensor of shape " << formatShape(shape)
                         << " has too many elements";
  }
  return success();
}

KinaTensorType KinaTensorType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                                         Type elementType) const {
  return KinaTensorType::get(getContext(), shape ? *shape : getShape(),
                             elementType, getPlacement());
}
