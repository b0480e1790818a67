//===- KinaOps.cpp - Op definitions and custom assembly -------------------===//
//
// The ODS-generated op classes, plus the short assembly of the elementwise
// ops (`%a, %b : T`), which names their one type once (and every type when
// the operands' placements differ).
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kina;

#include "Kina/Dialect/KinaInterfaces.cpp.inc"

/// Parses `operand (, operand)* attr-dict : type`, where all operands and
/// the result have that type, or `: (types) -> type` where they differ
/// (mesh placements may, before propagation).
static ParseResult parseSameTypeOperands(OpAsmParser &parser,
                                         OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  Type type;
  SMLoc typeLoc;
  if (parser.parseOperandList(operands) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.getCurrentLocation(&typeLoc) || parser.parseType(type))
    return failure();
  if (auto function = dyn_cast<FunctionType>(type)) {
    result.addTypes(function.getResults());
    return parser.resolveOperands(operands, function.getInputs(), typeLoc,
                                  result.operands);
  }
  result.addTypes(type);
  return parser.resolveOperands(operands, type, result.operands);
}

static void printSameTypeOperands(OpAsmPrinter &printer, Operation *op) {
  printer << " ";
  printer.printOperands(op->getOperands());
  printer.printOptionalAttrDict(op->getAttrs());
  Type type = op->getResult(0).getType();
  printer << " : ";
  if (llvm::all_of(op->getOperandTypes(), [&](Type t) { return t == type; }))
    printer << type;
  else
    printer.printFunctionalType(op);
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
