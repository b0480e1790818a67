//===- Parser.cpp - `.kina` source to AST ---------------------------------===//
//
// Recursive descent over the grammar of docs/language.md. Ops are recognised
// through the generated surface table (SurfaceOps.h), so the parser knows
// no op by name. On a syntax error the parser skips to the end of the
// statement (or function) and goes on.
//
//===----------------------------------------------------------------------===//

#include "Kina/Syntax/Parser.h"

#include "Kina/Syntax/Lexer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <array>
#include <cmath>
#include <cstdlib>

using namespace mlir::kina;

namespace {
/// Thrown-free error signalling: a failed parse returns null / false after
/// reporting once.
class Parser {
public:
  Parser(std::vector<Token> tokens, DiagnosticList &diags)
      : tokens(std::move(tokens)), diags(diags) {}

  Program parseProgram();

private:
  // Tokens.
  const Token &tok() const { return tokens[index]; }
  const Token &peekTok(size_t ahead = 1) const {
    return tokens[std::min(index + ahead, tokens.size() - 1)];
  }
  void consume() {
    if (!tok().is(TokenKind::Eof))
      ++index;
  }
  bool consumeIf(TokenKind kind) {
    if (!tok().is(kind))
      return false;
    consume();
    return true;
  }
  void skipNewlines() {
    while (tok().is(TokenKind::Newline))
      consume();
  }

  // Errors.
  bool error(SourceLoc loc, std::string message) {
    diags.push_back({loc, std::move(message)});
    return false;
  }
  /// Reports `expected X` at the current token (quietly when the lexer has
  /// already reported it).
  bool expected(const std::string &what) {
    if (tok().is(TokenKind::Error))
      return false;
    return error(tok().loc, "expected " + what + ", found " + describe(tok()));
  }
  bool expect(TokenKind kind, const std::string &what) {
    if (consumeIf(kind))
      return true;
    return expected(what);
  }
  /// `what` closing a bracket opened at `open`, naming where it opened.
  bool expectClose(TokenKind kind, const char *what, SourceLoc open) {
    if (consumeIf(kind))
      return true;
    if (tok().is(TokenKind::Eof) || tok().is(TokenKind::Newline) ||
        tok().is(TokenKind::RBrace))
      return error(open, std::string("unterminated bracket: missing '") + what +
                             "' for the one opened here");
    return expected(std::string("'") + what + "' to close the bracket at " +
                    std::to_string(open.line) + ":" + std::to_string(open.col));
  }
  static std::string describe(const Token &token);
  void skipStatement();
  void skipFunction();

  // Grammar.
  bool parseFunction(Program &program);
  bool parseMesh(Program &program);
  bool parseType(TypeSpec &type);
  bool parsePlacement(TypeSpec &type);
  bool parseIntegerOrList(std::vector<int64_t> &values);
  bool parseNameOrList(std::vector<std::string> &names);
  bool parseDims(std::vector<int64_t> &dims);
  bool parseInteger(int64_t &value);
  bool parseResultTypes(Function &fn);
  bool parseReverseMode(Function &fn);
  bool parsePipeline(Function &fn);
  int parseOptionName(llvm::ArrayRef<const char *> words,
                      llvm::MutableArrayRef<bool> seen,
                      const std::string &expectation);
  bool parseNameList(std::vector<std::pair<std::string, SourceLoc>> &names,
                     SourceLoc &open, const char *what);
  bool parseStatement(Function &fn);
  bool parseMoreNames(Statement &stmt);
  ExprPtr parseExpr();
  ExprPtr parseBinary(int level);
  ExprPtr parseUnary();
  ExprPtr parsePostfix();
  ExprPtr parseAtom();
  ExprPtr parseAttrForm(const SurfaceOp &op, SourceLoc loc);
  ExprPtr parseCallForm(const SurfaceOp &op, SourceLoc loc, ExprPtr receiver);
  bool parseAttrValue(const SurfaceAttr &attr, AttrValue &value);
  bool parseNamedAttr(Expr &expr);
  ExprPtr checkHeight(ExprPtr expr);
  bool finishOp(Expr &expr);
  bool checkBindable(const Token &name, const char *what);

  std::vector<Token> tokens;
  size_t index = 0;
  DiagnosticList &diags;
  unsigned depth = 0; // expression nesting, bounded against stack overflow
};

/// The deepest expression tree the parser builds. Operator and method
/// chains are parsed by loops, but everything downstream walks the tree
/// recursively.
constexpr unsigned kMaxTreeHeight = 1024;

/// Bounds recursion so that deeply nested input is an error, not a crash.
class DepthGuard {
public:
  DepthGuard(unsigned &depth) : depth(depth) { ++depth; }
  ~DepthGuard() { --depth; }
  bool tooDeep() const { return depth > kMaxDepth; }
  static constexpr unsigned kMaxDepth = 256;

private:
  unsigned &depth;
};
} // namespace

static constexpr const char *kKeywords[] = {"fn", "return", "Tensor",
                                            kReverseModeWord, "placeholder"};

bool mlir::kina::isReservedWord(llvm::StringRef word) {
  return llvm::is_contained(kKeywords, word) || dtypeFromSource(word) ||
         lookupSurfaceOp(word) != nullptr;
}

/// "F32, I32, ...", as source writes the element types.
static std::string elementTypeNames() {
  std::string names;
  for (const DTypeInfo &info : kDTypes)
    names += (names.empty() ? "" : ", ") + std::string(info.sourceName);
  return names;
}

std::vector<std::string> mlir::kina::reservedWords() {
  std::vector<std::string> words(std::begin(kKeywords), std::end(kKeywords));
  for (const DTypeInfo &info : kDTypes)
    words.emplace_back(info.sourceName);
  for (const SurfaceOp &op : surfaceOps())
    if (*op.surfaceName)
      words.push_back(op.surfaceName);
  return words;
}

std::string Parser::describe(const Token &token) {
  switch (token.kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Newline:
    return "end of line";
  default:
    return "'" + token.text + "'";
  }
}

void Parser::skipStatement() {
  while (!tok().is(TokenKind::Newline) && !tok().is(TokenKind::RBrace) &&
         !tok().is(TokenKind::Eof))
    consume();
}

void Parser::skipFunction() {
  // Resume at the next `fn`, `@main` or `@mesh` that starts a line.
  while (!tok().is(TokenKind::Eof)) {
    if (tok().is(TokenKind::Newline) &&
        (peekTok().isIdentifier("fn") ||
         (peekTok().is(TokenKind::AtWord) &&
          (peekTok().text == "@main" || peekTok().text == "@mesh")))) {
      consume();
      return;
    }
    consume();
  }
}

bool Parser::checkBindable(const Token &name, const char *what) {
  if (!name.is(TokenKind::Identifier))
    return expected(std::string("a name for the ") + what);
  if (isReservedWord(name.text))
    return error(name.loc,
                 "'" + name.text + "' is reserved and cannot name a " + what);
  return true;
}

Program Parser::parseProgram() {
  Program program;
  while (true) {
    skipNewlines();
    if (tok().is(TokenKind::Eof))
      return program;
    if (tok().is(TokenKind::AtWord) && tok().text == "@mesh") {
      if (!parseMesh(program)) {
        program.complete = false;
        skipStatement();
      }
      continue;
    }
    if (!parseFunction(program))
      skipFunction();
  }
}

bool Parser::parseInteger(int64_t &value) {
  SourceLoc loc = tok().loc;
  bool negative = consumeIf(TokenKind::Minus);
  if (!tok().is(TokenKind::Integer))
    return expected("an integer");
  llvm::StringRef text = tok().text;
  uint64_t magnitude;
  if (text.getAsInteger(10, magnitude) ||
      magnitude > uint64_t(INT64_MAX) + (negative ? 1 : 0))
    return error(loc, "integer " + std::string(negative ? "-" : "") +
                          text.str() + " does not fit in 64 bits");
  value = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
  consume();
  return true;
}

bool Parser::parseDims(std::vector<int64_t> &dims) {
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LBracket, "'[' to start a shape"))
    return false;
  if (consumeIf(TokenKind::RBracket))
    return true;
  do {
    int64_t dim;
    if (!parseInteger(dim))
      return false;
    dims.push_back(dim);
  } while (consumeIf(TokenKind::Comma));
  return expectClose(TokenKind::RBracket, "]", open);
}

bool Parser::parseType(TypeSpec &type) {
  type.loc = tok().loc;
  if (!tok().isIdentifier("Tensor"))
    return expected("a type 'Tensor[...]'");
  consume();
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LBracket, "'[' after Tensor"))
    return false;
  std::optional<DType> dtype = tok().is(TokenKind::Identifier)
                                   ? dtypeFromSource(tok().text)
                                   : std::nullopt;
  if (!dtype)
    return expected("an element type (" + elementTypeNames() + ")");
  type.elementType = *dtype;
  consume();
  if (!expect(TokenKind::Comma, "','") || !parseDims(type.dims))
    return false;
  // `Tensor[F32, [4, 8]]`: the placement is part of every written type.
  if (tok().is(TokenKind::RBracket))
    return error(tok().loc, "a tensor type names its placement after its "
                            "shape: Tensor[..., [dims], @host], or "
                            "@replicated or @sharded(...) on a mesh");
  if (!expect(TokenKind::Comma, "','"))
    return false;
  if (!parsePlacement(type))
    return false;
  return expectClose(TokenKind::RBracket, "]", open);
}

bool Parser::parseIntegerOrList(std::vector<int64_t> &values) {
  if (tok().is(TokenKind::LBracket))
    return parseDims(values);
  int64_t value;
  if (!parseInteger(value))
    return false;
  values.push_back(value);
  return true;
}

bool Parser::parseNameOrList(std::vector<std::string> &names) {
  auto name = [&] {
    if (!tok().is(TokenKind::Identifier))
      return expected("a mesh axis name");
    names.push_back(tok().text);
    consume();
    return true;
  };
  if (!tok().is(TokenKind::LBracket))
    return name();
  SourceLoc open = tok().loc;
  consume();
  do {
    if (!name())
      return false;
  } while (consumeIf(TokenKind::Comma));
  return expectClose(TokenKind::RBracket, "]", open);
}

/// `@host`, `@replicated`, `@sharded(axis=A, over=M, partial=P)` with A,
/// M and P single or lists (over= and partial= optional), `@partial` and
/// `@partial(over=P)`; what they mean, and where @partial may stand, is
/// MLIRGen's (and the dialect's) to check.
bool Parser::parsePlacement(TypeSpec &type) {
  type.placementLoc = tok().loc;
  // `@local`: the placement the compiler gives a device's block, which a
  // program does not write.
  if (tok().is(TokenKind::At) && peekTok().is(TokenKind::Identifier))
    return error(tok().loc, "unknown placement '@" + peekTok().text +
                                "': a type says @host, @replicated, "
                                "@sharded(...), @auto or, on a result, "
                                "@partial(...); the compiler places the "
                                "values a program does not annotate");
  if (!tok().is(TokenKind::AtWord) ||
      (tok().text != "@host" && tok().text != "@replicated" &&
       tok().text != "@sharded" && tok().text != "@partial" &&
       tok().text != "@auto"))
    return expected("a placement (@host, @replicated, @sharded(...), @auto "
                    "or @partial(...))");
  std::string word = tok().text;
  consume();
  if (word == "@host")
    return true;
  if (word == "@auto") {
    type.placement = TypeSpec::Placement::Auto;
    return true;
  }
  if (word == "@replicated") {
    type.placement = TypeSpec::Placement::Replicated;
    return true;
  }
  auto partialList = [&](llvm::StringRef keyword) {
    if (!tok().isIdentifier(keyword) || !peekTok().is(TokenKind::Equal))
      return expected("'" + keyword.str() + "='");
    consume();
    consume();
    return parseNameOrList(type.partialOver);
  };
  if (word == "@partial") {
    type.placement = TypeSpec::Placement::Partial;
    SourceLoc open = tok().loc;
    if (!consumeIf(TokenKind::LParen))
      return true; // the one axis of a one-axis mesh
    return partialList("over") && expectClose(TokenKind::RParen, ")", open);
  }
  type.placement = TypeSpec::Placement::Sharded;
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LParen, "'(' after @sharded"))
    return false;
  if (!tok().isIdentifier("axis") || !peekTok().is(TokenKind::Equal))
    return expected("'axis=' in @sharded(...)");
  consume();
  consume();
  if (!parseIntegerOrList(type.splitAxes))
    return false;
  if (!consumeIf(TokenKind::Comma))
    return expectClose(TokenKind::RParen, ")", open);
  if (tok().isIdentifier("over") && peekTok().is(TokenKind::Equal)) {
    consume();
    consume();
    if (!parseNameOrList(type.splitOver))
      return false;
    if (!consumeIf(TokenKind::Comma))
      return expectClose(TokenKind::RParen, ")", open);
  }
  if (!tok().isIdentifier("partial") || !peekTok().is(TokenKind::Equal))
    return expected(type.splitOver.empty()
                        ? "'over=' or 'partial=' in @sharded(...)"
                        : "'partial=' in @sharded(...)");
  return partialList("partial") && expectClose(TokenKind::RParen, ")", open);
}

/// `@mesh([2, 2], axes=[heads, vocab])` on its own line, before the first
/// function; at most one.
bool Parser::parseMesh(Program &program) {
  SourceLoc loc = tok().loc;
  consume();
  if (!program.functions.empty() || !program.brokenFunctions.empty())
    return error(loc, "@mesh must come before the first function");
  if (program.mesh)
    return error(loc, "a program declares one mesh; the first is at line " +
                          std::to_string(program.mesh->loc.line) + ":" +
                          std::to_string(program.mesh->loc.col));
  MeshDecl mesh;
  mesh.loc = loc;
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LParen, "'(' after @mesh") || !parseDims(mesh.shape))
    return false;
  if (consumeIf(TokenKind::Comma)) {
    if (!tok().isIdentifier("axes") || !peekTok().is(TokenKind::Equal))
      return expected("'axes=[...]' in @mesh(...)");
    consume();
    consume();
    if (!tok().is(TokenKind::LBracket))
      return expected("a list of mesh axis names '[...]'");
    mesh.hasAxes = true;
    if (!parseNameOrList(mesh.axes))
      return false;
  }
  if (!expectClose(TokenKind::RParen, ")", open))
    return false;
  if (!tok().is(TokenKind::Newline) && !tok().is(TokenKind::Eof))
    return expected("the end of the line after @mesh(...)");
  program.mesh = std::move(mesh);
  return true;
}

bool Parser::parseFunction(Program &program) {
  Function fn;
  if (tok().is(TokenKind::AtWord) && tok().text == "@main") {
    fn.isMain = true;
    consume();
    skipNewlines();
  }
  fn.loc = tok().loc;
  if (!tok().isIdentifier("fn"))
    return expected("'fn' to start a function");
  consume();
  Token nameTok = tok();
  if (!checkBindable(nameTok, "function"))
    return false;
  consume();
  fn.name = nameTok.text;
  fn.loc = nameTok.loc;
  auto broken = [&]() {
    program.brokenFunctions.push_back(fn.name);
    return false;
  };

  if (consumeIf(TokenKind::Equal)) {
    if (tok().isIdentifier(kPipelineWord)) {
      if (!parsePipeline(fn))
        return broken();
      program.functions.push_back(std::move(fn));
      return true;
    }
    if (!parseReverseMode(fn))
      return broken();
    // `-> (T, ...)`: the placements of G's value and gradients (which
    // may start on the next line).
    if (tok().is(TokenKind::Newline) && peekTok(1).is(TokenKind::Arrow))
      consume();
    if (consumeIf(TokenKind::Arrow)) {
      if (!parseResultTypes(fn))
        return broken();
      for (const std::optional<Function::Reuse> &reuse : fn.resultReuses)
        if (reuse) {
          error(reuse->loc, "a reverseMode function reuses no parameter's "
                            "buffer: @reuses is for a function with a body");
          return broken();
        }
    }
    program.functions.push_back(std::move(fn));
    return true;
  }
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LParen, "'(' after the function name"))
    return broken();
  if (!tok().is(TokenKind::RParen)) {
    do {
      Param param;
      Token paramTok = tok();
      if (!checkBindable(paramTok, "parameter"))
        return broken();
      consume();
      param.name = paramTok.text;
      param.loc = paramTok.loc;
      if (!expect(TokenKind::Colon, "':' after the parameter name") ||
          !parseType(param.type))
        return broken();
      fn.params.push_back(std::move(param));
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expectClose(TokenKind::RParen, ")", open))
    return broken();
  // A long signature may put `-> (...)` on the next line.
  if (tok().is(TokenKind::Newline) && peekTok(1).is(TokenKind::Arrow))
    consume();
  if (!expect(TokenKind::Arrow, "'->' and the result type"))
    return broken();
  if (!parseResultTypes(fn))
    return broken();
  SourceLoc bodyOpen = tok().loc;
  if (!expect(TokenKind::LBrace, "'{' to start the function body"))
    return broken();

  while (true) {
    skipNewlines();
    if (tok().is(TokenKind::RBrace)) {
      fn.closeLoc = tok().loc;
      consume();
      break;
    }
    if (tok().is(TokenKind::Eof)) {
      error(bodyOpen, "unterminated function body: missing '}' for the one "
                      "opened here");
      fn.closeLoc = tok().loc;
      fn.hadSyntaxError = true;
      break;
    }
    size_t errorsBefore = diags.size();
    bool parsed = parseStatement(fn);
    if (!parsed) {
      skipStatement();
    } else if (!tok().is(TokenKind::Newline) && !tok().is(TokenKind::RBrace) &&
               !tok().is(TokenKind::Eof)) {
      expected("the end of the statement");
      skipStatement();
    }
    fn.hadSyntaxError |= !parsed || diags.size() != errorsBefore;
  }
  program.functions.push_back(std::move(fn));
  return true;
}

/// `Tensor[...]`, or `(Tensor[...], Tensor[...], ...)` for two or more
/// results; each may be followed by `@reuses(param)`.
bool Parser::parseResultTypes(Function &fn) {
  auto result = [&] {
    TypeSpec type;
    if (!parseType(type))
      return false;
    fn.resultTypes.push_back(std::move(type));
    fn.resultReuses.emplace_back();
    // `@reuses` is not a token of its own: `a @reuses(b)` in a body stays a
    // matmul by a call of a function named reuses.
    if (!tok().is(TokenKind::At) || !peekTok().isIdentifier("reuses"))
      return true;
    SourceLoc at = tok().loc;
    consume();
    consume();
    SourceLoc open = tok().loc;
    if (!expect(TokenKind::LParen, "'(' after @reuses"))
      return false;
    if (!tok().is(TokenKind::Identifier))
      return expected("the name of a parameter in @reuses(...)");
    fn.resultReuses.back() = Function::Reuse{tok().text, at};
    consume();
    return expectClose(TokenKind::RParen, ")", open);
  };
  if (!tok().is(TokenKind::LParen))
    return result();
  SourceLoc open = tok().loc;
  consume();
  do {
    if (!result())
      return false;
  } while (consumeIf(TokenKind::Comma));
  if (!expectClose(TokenKind::RParen, ")", open))
    return false;
  if (fn.resultTypes.size() < 2)
    return error(open, "a parenthesized result list declares two or more "
                       "results; write '-> Tensor[...]' for one");
  return true;
}

/// `name=` of an option that may be given once: the index of `name` in
/// `words` (marked in `seen`), or -1 after an error (`expectation` says
/// what was expected instead).
int Parser::parseOptionName(llvm::ArrayRef<const char *> words,
                            llvm::MutableArrayRef<bool> seen,
                            const std::string &expectation) {
  int which = -1;
  for (auto [i, word] : llvm::enumerate(words))
    if (tok().isIdentifier(word))
      which = int(i);
  if (which < 0 || !peekTok().is(TokenKind::Equal)) {
    expected(expectation);
    return -1;
  }
  if (seen[which]) {
    error(tok().loc, std::string("'") + words[which] + "' is given twice");
    return -1;
  }
  seen[which] = true;
  consume();
  consume();
  return which;
}

/// `[p, ...]`: a list of parameter names, `open` set to its '['.
bool Parser::parseNameList(
    std::vector<std::pair<std::string, SourceLoc>> &names, SourceLoc &open,
    const char *what) {
  open = tok().loc;
  if (!expect(TokenKind::LBracket,
              std::string("'[' to start the ") + what + " list"))
    return false;
  if (!tok().is(TokenKind::RBracket)) {
    do {
      if (!tok().is(TokenKind::Identifier))
        return expected("a parameter name");
      names.push_back({tok().text, tok().loc});
      consume();
    } while (consumeIf(TokenKind::Comma));
  }
  return expectClose(TokenKind::RBracket, "]", open);
}

/// `reverseMode(F, wrt=[p, ...])` after `fn G =`, optionally with
/// `, reshard_after_forward=true|false`, `, split=true|false` and
/// `, inputs=[p, ...]` after the list, each once.
bool Parser::parseReverseMode(Function &fn) {
  if (!tok().isIdentifier(kReverseModeWord))
    return expected("'reverseMode(F, wrt=[...])' after 'fn " + fn.name +
                    " ='");
  consume();
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LParen, "'(' after reverseMode"))
    return false;
  ReverseModeDecl decl;
  if (!tok().is(TokenKind::Identifier))
    return expected("the name of the function to differentiate");
  decl.of = tok().text;
  decl.ofLoc = tok().loc;
  consume();
  if (!expect(TokenKind::Comma, "',' and wrt=[...]"))
    return false;
  if (!tok().isIdentifier("wrt"))
    return expected("'wrt=[...]'");
  consume();
  if (!expect(TokenKind::Equal, "'=' after wrt") ||
      !parseNameList(decl.wrt, decl.wrtLoc, "wrt"))
    return false;
  // Options, each once: `name=true|false`, or `inputs=[...]`.
  const char *words[3] = {kReshardAfterForwardWord, kSplitWord, kInputsWord};
  bool *flags[2] = {&decl.reshardAfterForward, &decl.split};
  bool seen[3] = {false, false, false};
  while (consumeIf(TokenKind::Comma)) {
    int which = parseOptionName(
        words, seen,
        std::string("'") + kReshardAfterForwardWord + "=true', '" + kSplitWord +
            "=true', '" + kInputsWord +
            "=[...]' or ')' after the wrt list (reverseMode's options)");
    if (which < 0)
      return false;
    if (which == 2) {
      if (!parseNameList(decl.inputs, decl.inputsLoc, kInputsWord))
        return false;
      continue;
    }
    if (!tok().isIdentifier("true") && !tok().isIdentifier("false"))
      return expected(std::string("true or false after ") + words[which] + "=");
    *flags[which] = tok().text == "true";
    consume();
  }
  if (!expectClose(TokenKind::RParen, ")", open))
    return false;
  fn.reverseMode = std::move(decl);
  return true;
}

/// `pipeline(f0, f1, ..., batch=[p, ...])` after `fn P =`, optionally
/// with `, constants=[...]` and `, shared=[...]`, each once.
bool Parser::parsePipeline(Function &fn) {
  consume(); // pipeline
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LParen, "'(' after pipeline"))
    return false;
  PipelineDecl decl;
  // The stages: names not followed by '='.
  while (tok().is(TokenKind::Identifier) && !peekTok().is(TokenKind::Equal)) {
    decl.stages.push_back({tok().text, tok().loc});
    consume();
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  const char *words[3] = {"batch", "constants", "shared"};
  std::vector<std::pair<std::string, SourceLoc>> *lists[3] = {
      &decl.batch, &decl.constants, &decl.shared};
  bool seen[3] = {false, false, false};
  while (tok().is(TokenKind::Identifier) && peekTok().is(TokenKind::Equal)) {
    int which = parseOptionName(words, seen,
                                "'batch=[...]', 'constants=[...]' or "
                                "'shared=[...]' (a pipeline's options)");
    if (which < 0)
      return false;
    SourceLoc listOpen;
    if (!parseNameList(*lists[which], listOpen, words[which]))
      return false;
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (!expectClose(TokenKind::RParen, ")", open))
    return false;
  if (decl.stages.empty())
    return error(open, "a pipeline names its stage functions first: "
                       "'pipeline(f0, f1, ..., batch=[...])'");
  if (!seen[0])
    return error(open, "a pipeline needs batch=[...]: the parameters cut "
                       "into microbatches");
  fn.pipeline = std::move(decl);
  return true;
}

/// `, b, _` after the first name of a multiple binding.
bool Parser::parseMoreNames(Statement &stmt) {
  while (consumeIf(TokenKind::Comma)) {
    Token nameTok = tok();
    if (nameTok.text != kDiscardName && !checkBindable(nameTok, "variable"))
      return false;
    if (!nameTok.is(TokenKind::Identifier))
      return expected("a name to bind");
    stmt.moreNames.push_back({nameTok.text, nameTok.loc});
    consume();
  }
  return expect(TokenKind::Equal, "'=' after the names to bind");
}

bool Parser::parseStatement(Function &fn) {
  Statement stmt;
  stmt.loc = tok().loc;
  if (tok().isIdentifier("return")) {
    stmt.kind = Statement::Kind::Return;
    consume();
    stmt.value = parseExpr();
    bool ok = stmt.value != nullptr;
    while (ok && consumeIf(TokenKind::Comma)) {
      ExprPtr more = parseExpr();
      ok = more != nullptr;
      if (ok)
        stmt.moreValues.push_back(std::move(more));
    }
    // A return that did not parse returns nothing more to check (and its
    // values are never null below).
    if (!ok)
      stmt.value = nullptr;
    fn.body.push_back(std::move(stmt));
    return ok;
  }
  if (!tok().is(TokenKind::Identifier) ||
      !(peekTok().is(TokenKind::Equal) || peekTok().is(TokenKind::Comma)))
    return expected("a statement 'NAME = expression', 'NAME, NAME = "
                    "call(...)' or 'return expression'");
  Token nameTok = tok();
  stmt.name = nameTok.text;
  stmt.nameLoc = nameTok.loc;
  stmt.kind = Statement::Kind::Bind;
  // Record the binding even when the rest fails, so that later uses of the
  // name are not reported again as unknown.
  auto keep = [&](bool ok) {
    if (!ok)
      stmt.value = nullptr;
    fn.body.push_back(std::move(stmt));
    return ok;
  };
  if (nameTok.text != kDiscardName && !checkBindable(nameTok, "variable"))
    return false;
  consume(); // name
  if (tok().is(TokenKind::Comma)) {
    if (!parseMoreNames(stmt))
      return keep(false);
    stmt.value = parseExpr();
    return keep(stmt.value != nullptr);
  }
  consume(); // =
  if (tok().isIdentifier("placeholder")) {
    stmt.kind = Statement::Kind::Placeholder;
    consume();
    TypeSpec type;
    if (!expect(TokenKind::Colon, "': Tensor[...]' after placeholder") ||
        !parseType(type))
      return keep(false);
    stmt.ascription = std::move(type);
    return keep(true);
  }
  stmt.value = parseExpr();
  if (!stmt.value)
    return keep(false);
  if (consumeIf(TokenKind::Colon)) {
    TypeSpec type;
    type.loc = tok().loc;
    if (tok().is(TokenKind::LBracket)) {
      stmt.ascribesShapeOnly = true;
      if (!parseDims(type.dims))
        return keep(false);
    } else if (!parseType(type)) {
      return keep(false);
    }
    stmt.ascription = std::move(type);
  }
  return keep(true);
}

ExprPtr Parser::parseExpr() {
  DepthGuard guard(depth);
  if (guard.tooDeep()) {
    error(tok().loc, "expression is nested too deeply (more than " +
                         std::to_string(DepthGuard::kMaxDepth) + " levels)");
    return nullptr;
  }
  return parseBinary(0);
}

/// Binary levels, loosest first: the comparisons (`== < <= > >=`), `+ -`,
/// `* /`, `@`; all left-associative but the comparisons, which do not
/// chain (`a < b < c` would compare a mask with `c`).
ExprPtr Parser::parseBinary(int level) {
  static constexpr int kLevels = 4;
  static const std::array<std::array<TokenKind, 2>, kLevels> levels = {{
      {TokenKind::Comparison, TokenKind::Comparison},
      {TokenKind::Plus, TokenKind::Minus},
      {TokenKind::Star, TokenKind::Slash},
      {TokenKind::At, TokenKind::At},
  }};
  auto operand = [&]() {
    return level == kLevels - 1 ? parseUnary() : parseBinary(level + 1);
  };
  auto isOperator = [&] {
    return tok().is(levels[level][0]) || tok().is(levels[level][1]);
  };
  bool chains = level != 0;
  ExprPtr lhs = operand();
  while (lhs && isOperator()) {
    Token opTok = tok();
    consume();
    skipNewlines();
    ExprPtr rhs = operand();
    if (!rhs)
      return nullptr;
    auto binary = std::make_unique<Expr>(Expr::Kind::Binary, opTok.loc);
    binary->token = opTok.text;
    binary->op = lookupInfixOp(opTok.text);
    if (!binary->op) {
      error(opTok.loc, "no op implements '" + opTok.text + "'");
      return nullptr;
    }
    binary->operands.push_back(std::move(lhs));
    binary->operands.push_back(std::move(rhs));
    lhs = checkHeight(std::move(binary));
    if (!chains && lhs && isOperator()) {
      error(tok().loc, "comparisons do not chain: parenthesize one, or "
                       "combine the masks with '*'");
      return nullptr;
    }
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  if (!tok().is(TokenKind::Minus))
    return parsePostfix();
  DepthGuard guard(depth);
  if (guard.tooDeep()) {
    error(tok().loc, "expression is nested too deeply (more than " +
                         std::to_string(DepthGuard::kMaxDepth) + " levels)");
    return nullptr;
  }
  Token minus = tok();
  consume();
  // `-3` and `-1e9` are literals, not negations.
  if ((tok().is(TokenKind::Integer) || tok().is(TokenKind::Float)) &&
      !peekTok().is(TokenKind::Dot)) {
    ExprPtr number = parseAtom();
    if (number)
      number->number = -number->number, number->loc = minus.loc;
    return number;
  }
  ExprPtr operand = parseUnary();
  if (!operand)
    return nullptr;
  auto unary = std::make_unique<Expr>(Expr::Kind::Unary, minus.loc);
  unary->token = "-";
  unary->op = lookupPrefixOp("-");
  unary->operands.push_back(std::move(operand));
  return checkHeight(std::move(unary));
}

ExprPtr Parser::parsePostfix() {
  ExprPtr expr = parseAtom();
  while (expr && tok().is(TokenKind::Dot)) {
    consume();
    Token method = tok();
    const SurfaceOp *op = method.is(TokenKind::Identifier)
                              ? lookupSurfaceOp(method.text)
                              : nullptr;
    if (!op || !op->accepts(FormMETHOD)) {
      if (method.is(TokenKind::Identifier))
        error(method.loc, "'" + method.text + "' cannot be called as a method");
      else
        expected("a method name");
      return nullptr;
    }
    consume();
    expr = parseCallForm(*op, method.loc, std::move(expr));
  }
  return expr;
}

ExprPtr Parser::parseAtom() {
  Token first = tok();
  switch (first.kind) {
  case TokenKind::Integer:
  case TokenKind::Float: {
    consume();
    auto number = std::make_unique<Expr>(Expr::Kind::Number, first.loc);
    number->number = std::strtod(first.text.c_str(), nullptr);
    if (!std::isfinite(number->number)) {
      error(first.loc, "number " + first.text + " is out of range for F32");
      return nullptr;
    }
    return number;
  }
  case TokenKind::LParen: {
    consume();
    ExprPtr inner = parseExpr();
    if (!inner || !expectClose(TokenKind::RParen, ")", first.loc))
      return nullptr;
    return inner;
  }
  case TokenKind::Identifier:
    break;
  default:
    expected("an expression");
    return nullptr;
  }
  consume();
  if (const SurfaceOp *op = lookupSurfaceOp(first.text)) {
    if (tok().is(TokenKind::LParen) && op->accepts(FormCALL))
      return parseCallForm(*op, first.loc, nullptr);
    if (op->accepts(FormATTR) && !tok().is(TokenKind::LParen))
      return parseAttrForm(*op, first.loc);
    std::string forms;
    if (op->accepts(FormATTR))
      forms += " '" + first.text + "[...] operands'";
    if (op->accepts(FormCALL))
      forms += " '" + first.text + "(...)'";
    if (op->accepts(FormMETHOD))
      forms += " 'x." + first.text + "(...)'";
    error(first.loc, "'" + first.text + "' is written as" + forms);
    return nullptr;
  }
  if (first.text == kReverseModeWord) {
    error(first.loc, "reverseMode defines a function: write 'fn NAME = "
                     "reverseMode(F, wrt=[...])' at the top level");
    return nullptr;
  }
  if (isReservedWord(first.text)) {
    error(first.loc, "'" + first.text + "' cannot start an expression");
    return nullptr;
  }
  if (!tok().is(TokenKind::LParen)) {
    auto name = std::make_unique<Expr>(Expr::Kind::Name, first.loc);
    name->name = first.text;
    return name;
  }
  // A call of a `fn`.
  SourceLoc open = tok().loc;
  consume();
  auto call = std::make_unique<Expr>(Expr::Kind::Call, first.loc);
  call->name = first.text;
  if (!tok().is(TokenKind::RParen)) {
    do {
      skipNewlines();
      ExprPtr arg = parseExpr();
      if (!arg)
        return nullptr;
      call->operands.push_back(std::move(arg));
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expectClose(TokenKind::RParen, ")", open))
    return nullptr;
  return checkHeight(std::move(call));
}

/// Sets the height of a new node from its operands; null (after an error)
/// when the tree is too deep.
ExprPtr Parser::checkHeight(ExprPtr expr) {
  if (!expr)
    return nullptr;
  for (const ExprPtr &operand : expr->operands)
    expr->height = std::max(expr->height, operand->height + 1);
  if (expr->height <= kMaxTreeHeight)
    return expr;
  error(expr->loc, "expression is nested too deeply (more than " +
                       std::to_string(kMaxTreeHeight) + " operations deep)");
  return nullptr;
}

/// `name=value` for one of the op's attributes, stored in `expr.attrs`.
bool Parser::parseNamedAttr(Expr &expr) {
  const SurfaceOp &op = *expr.op;
  Token attrName = tok();
  const SurfaceAttr *attr = op.findAttr(attrName.text);
  if (!attr) {
    std::vector<std::string> names;
    for (unsigned i = 0; i < op.numAttrs; ++i)
      names.push_back(op.attrs[i].name);
    return error(attrName.loc, std::string("'") + op.surfaceName +
                                   "' has no attribute '" + attrName.text +
                                   "' (it has: " + llvm::join(names, ", ") +
                                   ")");
  }
  consume(); // name
  consume(); // =
  auto &slot = expr.attrs[attr - op.attrs];
  if (slot)
    return error(attrName.loc,
                 "attribute '" + attrName.text + "' is given twice");
  AttrValue value;
  if (!parseAttrValue(*attr, value))
    return false;
  slot = std::move(value);
  return true;
}

bool Parser::parseAttrValue(const SurfaceAttr &attr, AttrValue &value) {
  value.loc = tok().loc;
  value.kind = attr.kind;
  switch (attr.kind) {
  case SurfaceAttrKind::Int:
    if (tok().is(TokenKind::Float) ||
        (tok().is(TokenKind::Minus) && peekTok().is(TokenKind::Float)))
      return error(value.loc, std::string("attribute '") + attr.name +
                                  "' takes an integer");
    return parseInteger(value.intValue);
  case SurfaceAttrKind::IntList:
    if (!tok().is(TokenKind::LBracket))
      return error(value.loc, std::string("attribute '") + attr.name +
                                  "' takes a list of integers '[...]'");
    return parseDims(value.listValue);
  case SurfaceAttrKind::ElementType: {
    std::optional<DType> dtype = tok().is(TokenKind::Identifier)
                                     ? dtypeFromSource(tok().text)
                                     : std::nullopt;
    if (!dtype)
      return error(value.loc, std::string("attribute '") + attr.name +
                                  "' takes an element type (" +
                                  elementTypeNames() + "), got '" +
                                  tok().text + "'");
    value.dtypeValue = *dtype;
    consume();
    return true;
  }
  }
  return false;
}

ExprPtr Parser::parseAttrForm(const SurfaceOp &op, SourceLoc loc) {
  auto expr = std::make_unique<Expr>(Expr::Kind::Op, loc);
  expr->op = &op;
  expr->attrs.resize(op.numAttrs);
  if (tok().is(TokenKind::LBracket)) {
    SourceLoc open = tok().loc;
    consume();
    if (!tok().is(TokenKind::RBracket)) {
      do {
        if (!tok().is(TokenKind::Identifier) ||
            !peekTok().is(TokenKind::Equal)) {
          expected("an attribute 'name=value'");
          return nullptr;
        }
        if (!parseNamedAttr(*expr))
          return nullptr;
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expectClose(TokenKind::RBracket, "]", open))
      return nullptr;
  }
  // Operands: names, literals or parenthesised expressions, up to the end
  // of what can be an operand.
  while (tok().is(TokenKind::Identifier) || tok().is(TokenKind::LParen) ||
         tok().is(TokenKind::Integer) || tok().is(TokenKind::Float)) {
    if (tok().is(TokenKind::Identifier) && isReservedWord(tok().text)) {
      error(tok().loc, "an operand of '" + std::string(op.surfaceName) +
                           "[...]' is a name or a parenthesised "
                           "expression; put '" +
                           tok().text + "' in parentheses");
      return nullptr;
    }
    ExprPtr operand;
    if (tok().is(TokenKind::Identifier)) {
      operand = std::make_unique<Expr>(Expr::Kind::Name, tok().loc);
      operand->name = tok().text;
      consume();
    } else {
      operand = parseAtom();
    }
    if (!operand)
      return nullptr;
    expr->operands.push_back(std::move(operand));
  }
  return finishOp(*expr) ? checkHeight(std::move(expr)) : nullptr;
}

ExprPtr Parser::parseCallForm(const SurfaceOp &op, SourceLoc loc,
                              ExprPtr receiver) {
  auto expr = std::make_unique<Expr>(Expr::Kind::Op, loc);
  expr->op = &op;
  expr->attrs.resize(op.numAttrs);
  if (receiver)
    expr->operands.push_back(std::move(receiver));
  SourceLoc open = tok().loc;
  if (!expect(TokenKind::LParen, "'('"))
    return nullptr;
  unsigned positionalAttrs = 0;
  bool sawKeyword = false;
  if (!tok().is(TokenKind::RParen)) {
    do {
      skipNewlines();
      // `name=value` names an attribute.
      if (tok().is(TokenKind::Identifier) && peekTok().is(TokenKind::Equal)) {
        if (!parseNamedAttr(*expr))
          return nullptr;
        sawKeyword = true;
        continue;
      }
      if (sawKeyword) {
        error(tok().loc, "positional arguments must come before 'name=value' "
                         "attributes");
        return nullptr;
      }
      // Positional: operands first, then attributes in declaration order.
      if (op.variadic || expr->operands.size() < op.numOperands) {
        ExprPtr operand = parseExpr();
        if (!operand)
          return nullptr;
        expr->operands.push_back(std::move(operand));
        continue;
      }
      if (positionalAttrs >= op.numAttrs) {
        error(tok().loc,
              std::string("too many arguments for '") + op.surfaceName + "'");
        return nullptr;
      }
      AttrValue value;
      if (!parseAttrValue(op.attrs[positionalAttrs], value))
        return nullptr;
      expr->attrs[positionalAttrs++] = std::move(value);
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expectClose(TokenKind::RParen, ")", open))
    return nullptr;
  return finishOp(*expr) ? checkHeight(std::move(expr)) : nullptr;
}

/// Checks operand and attribute counts of a parsed op.
bool Parser::finishOp(Expr &expr) {
  const SurfaceOp &op = *expr.op;
  size_t count = expr.operands.size();
  if (op.variadic ? count == 0 : count != op.numOperands)
    return error(expr.loc, std::string("'") + op.surfaceName + "' takes " +
                               (op.variadic ? std::string("one or more")
                                            : std::to_string(op.numOperands)) +
                               " operand(s), got " + std::to_string(count));
  for (unsigned i = 0; i < op.numAttrs; ++i)
    if (!expr.attrs[i] && !op.contextual)
      return error(expr.loc, std::string("'") + op.surfaceName +
                                 "' needs the attribute '" + op.attrs[i].name +
                                 "'");
  return true;
}

bool Expr::isContextual() const {
  return kind == Kind::Op && op->contextual &&
         llvm::any_of(attrs, [](const auto &a) { return !a.has_value(); });
}

Program mlir::kina::parseProgram(llvm::StringRef source,
                                 DiagnosticList &diags) {
  Program program = Parser(lex(source, diags), diags).parseProgram();
  program.complete = diags.empty();
  return program;
}
