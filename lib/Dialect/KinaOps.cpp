//===- KinaOps.cpp - Op definitions and custom assembly -------------------===//
//
// The ODS-generated op classes, plus the short assembly of the elementwise
// ops (`%a, %b : T`), which names their one type once.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kina;

#include "Kina/Dialect/KinaInterfaces.cpp.inc"

/// Parses `operand (, operand)* attr-dict : type`; all operands and the
/// result have that type.
static ParseResult parseSameTypeOperands(OpAsmParser &parser,
                                         OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  Type type;
  if (parser.parseOperandList(operands) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type) ||
      parser.resolveOperands(operands, type, result.operands))
    return failure();
  result.addTypes(type);
  return success();
}

static void printSameTypeOperands(OpAsmPrinter &printer, Operation *op) {
  printer << " ";
  printer.printOperands(op->getOperands());
  printer.printOptionalAttrDict(op->getAttrs());
  printer << " : " << op->getResult(0).getType();
}

#define KINA_SAME_TYPE_ASSEMBLY(OP)                                            \
  ParseResult OP::parse(OpAsmParser &parser, OperationState &result) {         \
    return parseSameTypeOperands(parser, result);                              \
  }                                                                            \
  void OP::print(OpAsmPrinter &printer) {                                      \
    printSameTypeOperands(printer, getOperation());                            \
  }
KINA_SAME_TYPE_ASSEMBLY(AddOp)
KINA_SAME_TYPE_ASSEMBLY(SubOp)
KINA_SAME_TYPE_ASSEMBLY(MulOp)
KINA_SAME_TYPE_ASSEMBLY(DivOp)
KINA_SAME_TYPE_ASSEMBLY(NegOp)
#undef KINA_SAME_TYPE_ASSEMBLY

#define GET_OP_CLASSES
#include "Kina/Dialect/KinaOps.cpp.inc"
