//===- TypeConverter.cpp - Kina tensors to builtin tensors ----------------===//
#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Dialect/KinaDialect.h"

using namespace mlir;
using namespace mlir::kina;

KinaTypeConverter::KinaTypeConverter() {
  addConversion([](Type type) { return type; });
  // The placement has no meaning below kina: every buffer is a host buffer.
  addConversion([](KinaTensorType type) -> Type {
    return RankedTensorType::get(type.getShape(), type.getElementType());
  });
}
