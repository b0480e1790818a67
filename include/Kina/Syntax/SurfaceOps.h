//===- SurfaceOps.h - The ops as `.kina` source writes them -----*- C++ -*-===//
//
// The frontend's view of the kina ops, generated from KinaOps.td by
// kina-tblgen from SurfaceSyntax.td and KinaOps.td: names, operands,
// attributes and accepted forms. No MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_SYNTAX_SURFACEOPS_H
#define KINA_SYNTAX_SURFACEOPS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::kina {

enum class SurfaceAttrKind { Int, IntList, ElementType };

/// Bits of `SurfaceOp::forms`.
enum SurfaceForm : unsigned {
  FormATTR = 1,   // op[attr=value, ...] operand operand ...
  FormCALL = 2,   // op(operand, ..., attr=value)
  FormMETHOD = 4, // operand.op(...)
};

struct SurfaceAttr {
  const char *name;
  SurfaceAttrKind kind;
};

struct SurfaceOp {
  const char *surfaceName; // "" when the source has no name for it
  const char *opName;      // the MLIR op name, e.g. "kina.slice"
  const char *const *operandNames;
  unsigned numOperands;
  bool variadic; // the (single) operand takes one or more values
  const SurfaceAttr *attrs;
  unsigned numAttrs;
  unsigned forms;
  const char *infix;  // binary operator token, "" if none
  const char *prefix; // unary operator token, "" if none
  bool contextual;    // its attribute may come from the infix operator

  bool accepts(SurfaceForm form) const { return forms & form; }
  const SurfaceAttr *findAttr(llvm::StringRef name) const;
};

/// Every op of the dialect.
llvm::ArrayRef<SurfaceOp> surfaceOps();
/// The op written `name` in source (`slice`), or null.
const SurfaceOp *lookupSurfaceOp(llvm::StringRef name);
/// The op of a binary infix token (`@`, `+`), or null.
const SurfaceOp *lookupInfixOp(llvm::StringRef token);
/// The op of a unary prefix token (`-`), or null.
const SurfaceOp *lookupPrefixOp(llvm::StringRef token);

} // namespace mlir::kina

#endif // KINA_SYNTAX_SURFACEOPS_H
