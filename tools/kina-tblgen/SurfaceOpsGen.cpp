//===- SurfaceOpsGen.cpp - Frontend op table from the kina ODS ------------===//
//
// `-gen-kina-surface-ops` walks every `KinaSurface` record of the
// frontend's SurfaceSyntax.td and writes one `SurfaceOp` row per op: its
// `.kina` name and forms (from the record), its MLIR name, operands and
// attributes with their kinds (from the op's ODS). The frontend includes
// the table, so the ODS stays the only list of operands and attributes.
//
//===----------------------------------------------------------------------===//

#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Operator.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using mlir::tblgen::Operator;

static StringRef attrKind(const Operator &op,
                          const mlir::tblgen::NamedAttribute &attr) {
  StringRef storage = attr.attr.getStorageType();
  if (storage == "::mlir::IntegerAttr")
    return "Int";
  if (storage == "::mlir::DenseI64ArrayAttr")
    return "IntList";
  if (storage == "::mlir::TypeAttr")
    return "ElementType";
  PrintFatalError(op.getLoc(), "kina-tblgen: attribute '" + attr.name +
                                   "' has a storage type the frontend "
                                   "cannot write: " +
                                   storage);
}

static bool emitSurfaceOps(const RecordKeeper &records, raw_ostream &os) {
  emitSourceFileHeader("Kina surface op table", os);
  std::string rows;
  raw_string_ostream table(rows);
  for (const Record *def : records.getAllDerivedDefinitions("KinaSurface")) {
    Operator op(def->getValueAsDef("op"));
    std::string id = op.getCppClassName().str();

    os << formatv("static const char *const {0}Operands[] = {{", id);
    bool variadic = false;
    for (int i = 0, e = op.getNumOperands(); i < e; ++i) {
      const auto &operand = op.getOperand(i);
      if (operand.isOptional())
        PrintFatalError(op.getLoc(), "kina-tblgen: optional operands are not "
                                     "supported by the frontend");
      variadic |= operand.isVariadic();
      os << formatv("\"{0}\", ", operand.name);
    }
    os << "nullptr};\n";

    os << formatv("static const SurfaceAttr {0}Attrs[] = {{", id);
    for (const auto &attr : op.getAttributes())
      os << formatv("{{\"{0}\", SurfaceAttrKind::{1}}, ", attr.name,
                    attrKind(op, attr));
    os << "{nullptr, SurfaceAttrKind::Int}};\n";

    std::string forms;
    for (StringRef form : def->getValueAsListOfStrings("forms")) {
      if (form != "attr" && form != "call" && form != "method")
        PrintFatalError(op.getLoc(),
                        "kina-tblgen: unknown surface form '" + form + "'");
      forms += (forms.empty() ? "" : " | ") + ("Form" + form.upper());
    }
    table << formatv(
        "  {{\"{0}\", \"{1}\", {2}Operands, {3}, {4}, {2}Attrs, {5}, {6}, "
        "\"{7}\", \"{8}\", {9}},\n",
        def->getValueAsString("name"), op.getOperationName(), id,
        op.getNumOperands(), variadic ? "true" : "false", op.getNumAttributes(),
        forms.empty() ? "0u" : forms, def->getValueAsString("infix"),
        def->getValueAsString("prefix"),
        def->getValueAsBit("contextual") ? "true" : "false");
  }
  os << "\nstatic const SurfaceOp surfaceOpTable[] = {\n" << rows << "};\n";
  return false;
}

static mlir::GenRegistration
    genSurfaceOps("gen-kina-surface-ops",
                  "Generate the Kina frontend's surface op table",
                  emitSurfaceOps);
