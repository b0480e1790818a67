//===- Lexer.cpp - Tokens of `.kina` source -------------------------------===//
//
// A statement ends at a newline unless a `(` or `[` is open, so the lexer
// drops newlines inside brackets. Reserved words of later language sections
// are rejected here, wherever they appear.
//
//===----------------------------------------------------------------------===//

#include "Kina/Syntax/Lexer.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::kina;

namespace {
class Lexer {
public:
  Lexer(llvm::StringRef source, DiagnosticList &diags)
      : source(source), diags(diags) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      Token token = next();
      if (token.is(TokenKind::Newline) && !tokens.empty() &&
          tokens.back().is(TokenKind::Newline))
        continue;
      tokens.push_back(token);
      if (token.is(TokenKind::Eof))
        return tokens;
    }
  }

private:
  char peek(size_t ahead = 0) const {
    return pos + ahead < source.size() ? source[pos + ahead] : '\0';
  }
  bool atEnd() const { return pos >= source.size(); }
  void advance() {
    if (source[pos] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    ++pos;
  }
  Token make(TokenKind kind, SourceLoc loc, std::string text) {
    return Token{kind, std::move(text), loc};
  }
  Token error(SourceLoc loc, std::string message) {
    diags.push_back({loc, std::move(message)});
    // Binary junk would otherwise yield one diagnostic per byte.
    if (diags.size() >= kMaxLexErrors) {
      diags.push_back({loc, "too many errors; giving up on this file"});
      pos = source.size();
    }
    return make(TokenKind::Error, loc, "");
  }
  static constexpr size_t kMaxLexErrors = 50;

  static bool isIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
  static bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

  Token next();
  Token lexNumber(SourceLoc loc);

  llvm::StringRef source;
  DiagnosticList &diags;
  size_t pos = 0;
  unsigned line = 1, col = 1;
  int bracketDepth = 0;
};
} // namespace

Token Lexer::lexNumber(SourceLoc loc) {
  size_t start = pos;
  bool isFloat = false;
  while (isDigit(peek()))
    advance();
  if (peek() == '.' && isDigit(peek(1))) {
    isFloat = true;
    advance();
    while (isDigit(peek()))
      advance();
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (isDigit(peek(1)) ||
       ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
    isFloat = true;
    advance();
    if (peek() == '+' || peek() == '-')
      advance();
    while (isDigit(peek()))
      advance();
  }
  if (isIdentChar(peek()) || peek() == '.') {
    while (isIdentChar(peek()) || peek() == '.')
      advance();
    return error(loc,
                 "malformed number '" + source.slice(start, pos).str() + "'");
  }
  return make(isFloat ? TokenKind::Float : TokenKind::Integer, loc,
              source.slice(start, pos).str());
}

Token Lexer::next() {
  while (!atEnd()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\r') {
      advance();
    } else if (c == '#') {
      while (!atEnd() && peek() != '\n')
        advance();
    } else if (c == '\n') {
      SourceLoc loc{line, col};
      advance();
      if (bracketDepth == 0)
        return make(TokenKind::Newline, loc, "\n");
    } else {
      break;
    }
  }
  SourceLoc loc{line, col};
  if (atEnd())
    return make(TokenKind::Eof, loc, "");

  char c = peek();
  if (isIdentStart(c)) {
    size_t start = pos;
    while (isIdentChar(peek()))
      advance();
    std::string word = source.slice(start, pos).str();
    return make(TokenKind::Identifier, loc, word);
  }
  if (isDigit(c))
    return lexNumber(loc);
  if (c == '@' && isIdentStart(peek(1))) {
    size_t start = pos;
    advance();
    while (isIdentChar(peek()))
      advance();
    std::string word = source.slice(start, pos).str();
    if (word == "@main" || word == "@host" || word == "@mesh" ||
        word == "@replicated" || word == "@sharded" || word == "@partial" ||
        word == "@auto")
      return make(TokenKind::AtWord, loc, word);
    // `a @b` is a matmul of a and b: step back to lex `b` on its own.
    pos = start + 1;
    col = loc.col + 1;
    return make(TokenKind::At, loc, "@");
  }
  advance();
  switch (c) {
  case '(':
  case '[':
    ++bracketDepth;
    return make(c == '(' ? TokenKind::LParen : TokenKind::LBracket, loc,
                std::string(1, c));
  case ')':
  case ']':
    bracketDepth = bracketDepth > 0 ? bracketDepth - 1 : 0;
    return make(c == ')' ? TokenKind::RParen : TokenKind::RBracket, loc,
                std::string(1, c));
  case '{':
    return make(TokenKind::LBrace, loc, "{");
  case '}':
    return make(TokenKind::RBrace, loc, "}");
  case ',':
    return make(TokenKind::Comma, loc, ",");
  case ':':
    return make(TokenKind::Colon, loc, ":");
  case '=':
    if (peek() == '=') {
      advance();
      return make(TokenKind::Comparison, loc, "==");
    }
    return make(TokenKind::Equal, loc, "=");
  case '<':
  case '>':
    if (peek() == '=') {
      advance();
      return make(TokenKind::Comparison, loc, std::string(1, c) + "=");
    }
    return make(TokenKind::Comparison, loc, std::string(1, c));
  case '+':
    return make(TokenKind::Plus, loc, "+");
  case '-':
    if (peek() == '>') {
      advance();
      return make(TokenKind::Arrow, loc, "->");
    }
    return make(TokenKind::Minus, loc, "-");
  case '*':
    return make(TokenKind::Star, loc, "*");
  case '/':
    return make(TokenKind::Slash, loc, "/");
  case '@':
    return make(TokenKind::At, loc, "@");
  case '.':
    return make(TokenKind::Dot, loc, ".");
  default:
    break;
  }
  std::string shown;
  llvm::raw_string_ostream os(shown);
  if (c >= 0x20 && c < 0x7f)
    os << "'" << c << "'";
  else
    os << "byte 0x" << llvm::format_hex_no_prefix((unsigned char)c, 2);
  return error(loc, "unexpected character " + shown);
}

std::vector<Token> mlir::kina::lex(llvm::StringRef source,
                                   DiagnosticList &diags) {
  return Lexer(source, diags).run();
}
