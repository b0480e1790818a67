//===- Lexer.h - Tokens of `.kina` source -----------------------*- C++ -*-===//
#ifndef KINA_SYNTAX_LEXER_H
#define KINA_SYNTAX_LEXER_H

#include "Kina/Syntax/AST.h"

#include "llvm/ADT/StringRef.h"

namespace mlir::kina {

enum class TokenKind {
  Eof,
  Newline, // ends a statement; not produced inside ( ) or [ ]
  Identifier,
  Integer,
  Float,
  AtWord, // @main, @host, @mesh, @replicated, @sharded, @partial
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equal,
  Plus,
  Minus,
  Star,
  Slash,
  At,         // matmul
  Comparison, // == < <= > >=
  Dot,
  Arrow,
  Error, // already reported
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  std::string text;
  SourceLoc loc;

  bool is(TokenKind k) const { return kind == k; }
  bool isIdentifier(llvm::StringRef word) const {
    return kind == TokenKind::Identifier && text == word;
  }
};

/// Splits `source` into tokens, reporting malformed ones into `diags`.
/// The result always ends with an Eof token.
std::vector<Token> lex(llvm::StringRef source, DiagnosticList &diags);

} // namespace mlir::kina

#endif // KINA_SYNTAX_LEXER_H
