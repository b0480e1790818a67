//===- KinaOps.cpp - Op definitions and custom assembly -------------------===//
//
// The ODS-generated op classes, plus the short assembly of the elementwise
// ops (`%a, %b : T`), which names their one type once (and every type when
// the operands' placements differ).
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// `T` when the operand and the result have one type, `(T) -> U` else.
static ParseResult parseSameOrFunctionalType(OpAsmParser &parser, Type &input,
                                             Type &result) {
  Type type;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseType(type))
    return failure();
  auto function = dyn_cast<FunctionType>(type);
  if (!function) {
    input = result = type;
    return success();
  }
  if (function.getNumInputs() != 1 || function.getNumResults() != 1)
    return parser.emitError(loc, "expected one operand and one result type");
  input = function.getInput(0);
  result = function.getResult(0);
  return success();
}

static void printSameOrFunctionalType(OpAsmPrinter &printer, Operation *,
                                      Type input, Type result) {
  if (input == result)
    printer << input;
  else
    printer << FunctionType::get(input.getContext(), input, result);
}

/// `sum` or `max`, bare.
static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<ReductionKind> value = symbolizeReductionKind(word);
  if (!value)
    return parser.emitError(loc)
           << "expected 'sum' or 'max', got '" << word << "'";
  kind = ReductionKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr kind) {
  printer << stringifyReductionKind(kind.getValue());
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
KINA_SAME_TYPE_ASSEMBLY(MaximumOp)
KINA_SAME_TYPE_ASSEMBLY(MinimumOp)
KINA_SAME_TYPE_ASSEMBLY(EqualOp)
KINA_SAME_TYPE_ASSEMBLY(LessOp)
KINA_SAME_TYPE_ASSEMBLY(LessEqualOp)
KINA_SAME_TYPE_ASSEMBLY(GreaterOp)
KINA_SAME_TYPE_ASSEMBLY(GreaterEqualOp)
KINA_SAME_TYPE_ASSEMBLY(SelectOp)
KINA_SAME_TYPE_ASSEMBLY(NegOp)
KINA_SAME_TYPE_ASSEMBLY(ExpOp)
KINA_SAME_TYPE_ASSEMBLY(LogOp)
KINA_SAME_TYPE_ASSEMBLY(SqrtOp)
KINA_SAME_TYPE_ASSEMBLY(RsqrtOp)
KINA_SAME_TYPE_ASSEMBLY(TanhOp)
KINA_SAME_TYPE_ASSEMBLY(AbsOp)
KINA_SAME_TYPE_ASSEMBLY(ReluOp)
#undef KINA_SAME_TYPE_ASSEMBLY

/// `5.000000e-01 attr-dict : T`: the value is read as a double and rounded
/// to T's element type. The printer writes the short decimal of the value
/// in its own type where reading it so gives the value back, else the
/// value widened to a double (exact; an inf or NaN as hexadecimal bits).
ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  APFloat value(0.0);
  Type type;
  SMLoc typeLoc;
  if (parser.parseFloat(APFloat::IEEEdouble(), value) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.getCurrentLocation(&typeLoc) || parser.parseType(type))
    return failure();
  auto tensor = dyn_cast<KinaTensorType>(type);
  auto element =
      tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
  if (!element)
    return parser.emitError(typeLoc)
           << "expected a kina tensor of a float element type, got " << type;
  bool inexact;
  value.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &inexact);
  result.addAttribute(getValueAttrName(result.name),
                      FloatAttr::get(element, value));
  result.addTypes(type);
  return success();
}

/// `value` as a decimal that ConstantOp::parse reads back to its bits, or
/// an empty string.
static std::string readableDecimal(const APFloat &value) {
  if (!value.isFinite())
    return "";
  for (unsigned precision : {6u, 0u}) { // the printer's %e form, shortest
    SmallString<32> text;
    value.toString(text, precision, /*FormatMaxPadding=*/0,
                   /*TruncateZero=*/false);
    if (!StringRef(text).contains('.'))
      continue;
    APFloat back(APFloat::IEEEdouble(), text);
    bool inexact;
    back.convert(value.getSemantics(), APFloat::rmNearestTiesToEven, &inexact);
    if (back.bitwiseIsEqual(value))
      return std::string(text);
  }
  return "";
}

void ConstantOp::print(OpAsmPrinter &printer) {
  APFloat value = getValue();
  printer << " ";
  std::string decimal = readableDecimal(value);
  if (!decimal.empty()) {
    printer << decimal;
  } else {
    bool inexact;
    value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &inexact);
    printer.printFloat(value);
  }
  printer.printOptionalAttrDict((*this)->getAttrs(), {getValueAttrName()});
  printer << " : " << getType();
}

/// `@callee` is a function of one f32 result; the operands are its
/// parameters (and the seed of a result of rank > 0); the results are its
/// result and one gradient per `wrt` position, of that parameter's type
/// but for its placement, which may differ (`reverseMode(...) -> (...)`).
LogicalResult
ReverseModeOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto callee =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("names '") << getCallee() << "', which is not a function";
  FunctionType type = callee.getFunctionType();
  if (type.getNumResults() != 1)
    return emitOpError("differentiates a function of one result; '")
           << getCallee() << "' has " << type.getNumResults();
  auto result = cast<KinaTensorType>(type.getResult(0));
  SmallVector<Type> inputs(type.getInputs());
  if (result.getRank() > 0)
    inputs.push_back(result);
  SmallVector<Type> results = {result};
  for (int64_t position : getWrt()) {
    if (position < 0 || position >= int64_t(type.getNumInputs()))
      return emitOpError("wrt position ")
             << position << " is not a parameter of '" << getCallee() << "'";
    results.push_back(type.getInput(position));
  }
  auto withoutPlacement = [](Type t) {
    auto tensor = cast<KinaTensorType>(t);
    return std::make_pair(tensor.getShape(), tensor.getElementType());
  };
  bool resultsMatch =
      getNumResults() == results.size() &&
      llvm::all_of(llvm::zip_equal(getResultTypes(), results), [&](auto pair) {
        auto [have, want] = pair;
        return isa<KinaTensorType>(have) &&
               withoutPlacement(have) == withoutPlacement(want);
      });
  if (TypeRange(getInputs()) != TypeRange(inputs) || !resultsMatch)
    return emitOpError("has type ")
           << FunctionType::get(getContext(), getInputs().getTypes(),
                                getResults().getTypes())
           << ", but differentiating '" << getCallee() << "' gives "
           << FunctionType::get(getContext(), inputs, results);
  return success();
}

#define GET_OP_CLASSES
#include "Kina/Dialect/KinaOps.cpp.inc"
