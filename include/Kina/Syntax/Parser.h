//===- Parser.h - `.kina` source to AST -------------------------*- C++ -*-===//
#ifndef KINA_SYNTAX_PARSER_H
#define KINA_SYNTAX_PARSER_H

#include "Kina/Syntax/AST.h"

#include "llvm/ADT/StringRef.h"

namespace mlir::kina {

/// Parses a whole program. Syntax errors go to `diags`; the parser recovers
/// at the next statement or function, so independent errors are all found,
/// and the returned program holds everything that did parse.
Program parseProgram(llvm::StringRef source, DiagnosticList &diags);

} // namespace mlir::kina

#endif // KINA_SYNTAX_PARSER_H
