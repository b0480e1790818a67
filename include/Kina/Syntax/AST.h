//===- AST.h - The `.kina` abstract syntax tree -----------------*- C++ -*-===//
//
// What the parser produces and MLIRGen consumes. No MLIR here: the AST only
// records what the source says and where; typing is the dialect's.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_SYNTAX_AST_H
#define KINA_SYNTAX_AST_H

#include "Kina/ABI/TensorTypes.h"
#include "Kina/Syntax/SurfaceOps.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::kina {

/// A 1-based line and column in the source file.
struct SourceLoc {
  unsigned line = 0;
  unsigned col = 0;
};

/// A located error found before MLIR is involved.
struct FrontendDiagnostic {
  SourceLoc loc;
  std::string message;
};
using DiagnosticList = std::vector<FrontendDiagnostic>;

/// `Tensor[F32, [1, 4, 4], @host]`, `Tensor[F32, [4, 8], @sharded(axis=1)]`,
/// `Tensor[F32, [4, 8], @partial(over=dp)]` (a result's only).
struct TypeSpec {
  enum class Placement { Host, Replicated, Sharded, Partial, Auto };
  SourceLoc loc;
  DType elementType = DType::F32;
  std::vector<int64_t> dims;
  Placement placement = Placement::Host;
  SourceLoc placementLoc;
  /// @sharded: the tensor axes, and the mesh axes as written (empty when
  /// `over` is left out).
  std::vector<int64_t> splitAxes;
  std::vector<std::string> splitOver;
  /// @partial(over=M), or `partial=M` in @sharded(...): the mesh axes the
  /// value is a partial sum over, as written (empty for a bare @partial).
  std::vector<std::string> partialOver;
  bool isPartial() const {
    return placement == Placement::Partial || !partialOver.empty();
  }
};

/// `@mesh([2, 2], axes=[heads, vocab])`.
struct MeshDecl {
  SourceLoc loc;
  std::vector<int64_t> shape;
  std::vector<std::string> axes; // as written; empty without `axes=`
  bool hasAxes = false;
};

/// An attribute value as written: `1`, `-2`, `[1, 4]` or `BF16`.
struct AttrValue {
  SourceLoc loc;
  SurfaceAttrKind kind = SurfaceAttrKind::Int;
  int64_t intValue = 0;
  std::vector<int64_t> listValue;
  DType dtypeValue = DType::F32;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind { Name, Number, Binary, Unary, Op, Call };
  Kind kind;
  SourceLoc loc;
  std::string name;              // Name: the variable; Call: the callee
  double number = 0;             // Number
  std::string token;             // Binary / Unary: the operator token
  const SurfaceOp *op = nullptr; // Op, Binary, Unary: the kina op
  std::vector<ExprPtr> operands; // Binary: lhs, rhs; Op, Call: arguments
  /// Op: attributes by position in `op->attrs`; unset when not written.
  std::vector<std::optional<AttrValue>> attrs;
  /// Height of the tree below (a leaf is 1). The parser bounds it, so that
  /// everything that walks expressions recursively has bounded depth.
  unsigned height = 1;

  Expr(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  /// An op whose attribute is to come from the infix operator around it.
  bool isContextual() const;
};

/// The name `_` binds nothing: it discards a result of a multiple binding.
inline constexpr const char *kDiscardName = "_";

struct Statement {
  enum class Kind { Bind, Placeholder, Return };
  Kind kind;
  SourceLoc loc;
  std::string name; // Bind / Placeholder: the (first) name bound
  SourceLoc nameLoc;
  /// Bind: `a, b, _ = f(...)` binds one name per result of a call; the
  /// first is `name`, these are the others.
  std::vector<std::pair<std::string, SourceLoc>> moreNames;
  ExprPtr value; // Bind / Return; null when the statement did not parse
  /// Return: `return a, b, ...` returns these after `value`.
  std::vector<ExprPtr> moreValues;
  /// `: [dims]` (shape only) or `: Tensor[...]`; a placeholder's type.
  std::optional<TypeSpec> ascription;
  bool ascribesShapeOnly = false;
};

struct Param {
  std::string name;
  SourceLoc loc;
  TypeSpec type;
};

/// `fn G = reverseMode(F, wrt=[p, ...])`, optionally with
/// `, reshard_after_forward=true`, `, split=true` and `, inputs=[p, ...]`.
struct ReverseModeDecl {
  std::string of; // F
  SourceLoc ofLoc;
  std::vector<std::pair<std::string, SourceLoc>> wrt;
  SourceLoc wrtLoc; // the list's '['
  /// Weights split at rest are gathered again for the backward (FSDP2's
  /// reshard_after_forward) rather than kept from the forward.
  bool reshardAfterForward = false;
  /// Defines G_forward (F's result and what the backward reads of the
  /// forward) and G_backward (the gradients from those) instead of G.
  bool split = false;
  /// With split: the backward itself in two, G_input (the gradients of
  /// these wrt parameters first) and G_weight (the others), instead of
  /// G_backward.
  std::vector<std::pair<std::string, SourceLoc>> inputs;
  SourceLoc inputsLoc; // the list's '['
};

/// `fn P = pipeline(f0, f1, ..., batch=[p, ...], constants=[...],
/// shared=[...])`: a training step whose stages are functions of the
/// program, in order.
struct PipelineDecl {
  std::vector<std::pair<std::string, SourceLoc>> stages;
  std::vector<std::pair<std::string, SourceLoc>> batch, constants, shared;
};
inline constexpr const char *kPipelineWord = "pipeline";

/// The options of a reverseMode after its wrt list.
inline constexpr const char *kReshardAfterForwardWord =
    "reshard_after_forward";
inline constexpr const char *kSplitWord = "split";
inline constexpr const char *kInputsWord = "inputs";

/// The word that defines a function as another's reverse mode.
inline constexpr const char *kReverseModeWord = "reverseMode";

struct Function {
  std::string name;
  SourceLoc loc;
  /// Set for `fn G = reverseMode(...)`, which has no params, results or
  /// body of its own.
  std::optional<ReverseModeDecl> reverseMode;
  /// Set for `fn P = pipeline(...)`, a declaration, not a function.
  std::optional<PipelineDecl> pipeline;
  bool isMain = false;
  std::vector<Param> params;
  /// `-> T`, or `-> (T1, T2, ...)` for two or more results.
  std::vector<TypeSpec> resultTypes;
  /// Per result: `@reuses(p)` after its type names the parameter whose
  /// buffer the exported function writes it into (a donated argument).
  struct Reuse {
    std::string param;
    SourceLoc loc;
  };
  std::vector<std::optional<Reuse>> resultReuses;
  std::vector<Statement> body;
  SourceLoc closeLoc; // the closing `}`
  /// A statement of the body did not parse (a missing return may be its
  /// consequence, so it is not reported).
  bool hadSyntaxError = false;
};

struct Program {
  std::optional<MeshDecl> mesh;
  std::vector<Function> functions;
  /// Functions whose header did not parse: calls to them are not reported
  /// again as calls of unknown functions.
  std::vector<std::string> brokenFunctions;
  /// False when anything failed to parse: the program is then checked for
  /// further errors but never turned into a module.
  bool complete = true;
};

} // namespace mlir::kina

#endif // KINA_SYNTAX_AST_H
