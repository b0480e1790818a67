//===- Parser.h - `.kina` source to AST -------------------------*- C++ -*-===//
#ifndef KINA_SYNTAX_PARSER_H
#define KINA_SYNTAX_PARSER_H

#include "Kina/Syntax/AST.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::kina {

/// Parses a whole program. Syntax errors go to `diags`; the parser recovers
/// at the next statement or function, so independent errors are all found,
/// and the returned program holds everything that did parse.
Program parseProgram(llvm::StringRef source, DiagnosticList &diags);

/// Whether `word` is reserved: a keyword, an element type or an op name,
/// none of which may name a variable, a parameter or a function.
bool isReservedWord(llvm::StringRef word);

/// Every reserved word, for frontends that make names (`kina.jit`).
std::vector<std::string> reservedWords();

} // namespace mlir::kina

#endif // KINA_SYNTAX_PARSER_H
