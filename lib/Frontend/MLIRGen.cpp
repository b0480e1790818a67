//===- MLIRGen.cpp - `.kina` AST to the kina dialect ----------------------===//
//
// Turns the AST into `func.func`s of kina ops. Ops are built generically
// from the surface table and typed by the dialect's own shape rules
// (InferResultTypeOpInterface); this file adds only what the language
// says beyond single ops: names and scopes, calls, placeholders, the
// contextual `broadcast(x)`, ascriptions and return types.
//
//===----------------------------------------------------------------------===//

#include "Kina/Frontend/MLIRGen.h"

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Frontend/SourceLocations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::kina;

/// `Tensor[F32, [1, 4, 4], @host]`, as the source writes types.
static std::string formatType(Type type) {
  auto tensor = dyn_cast<KinaTensorType>(type);
  if (!tensor)
    return "a value that is not a kina tensor";
  std::string element(mlir::kina::dtypeInfo(tensor.getDType()).sourceName);
  return "Tensor[" + element + ", " + formatShape(tensor.getShape()) + ", " +
         tensor.getPlacement().str() + "]";
}

namespace {
class MLIRGen {
public:
  MLIRGen(MLIRContext &context, const SourceLocations &locations)
      : context(context), builder(&context), locations(locations) {}

  OwningOpRef<ModuleOp> run(const Program &program);

private:
  struct FunctionInfo {
    const Function *ast = nullptr;
    func::FuncOp op;
  };

  Location loc(SourceLoc l) {
    return locations.at(l.line, l.col);
  }
  InFlightDiagnostic error(SourceLoc l) {
    hadError = true;
    return emitError(loc(l));
  }

  /// `asResult`: the type of a function's result, the one place a
  /// program may write @partial. `what` ("parameter 'w'") opens the
  /// errors of a placement the mesh cannot hold.
  KinaTensorType convertType(const TypeSpec &spec, bool asResult = false,
                             StringRef what = "");
  PlacementAttr convertPlacement(const TypeSpec &spec, bool asResult);
  /// The mesh axes `names` names, `what` (a placement's word) for errors;
  /// empty names: the one axis of a one-axis mesh.
  std::optional<SmallVector<StringAttr>>
  meshAxes(ArrayRef<std::string> names, size_t count, const TypeSpec &spec,
           StringRef what);
  void genMesh(const mlir::kina::MeshDecl &decl);
  Value placeAs(Value value, PlacementAttr placement, SourceLoc where);
  void declareFunction(const Function &fn);
  void declareReuses(const Function &fn, func::FuncOp op,
                     ArrayRef<std::string> inputNames);
  void declareReverseMode(const Function &fn);
  bool declareGradientPlacements(const Function &fn,
                                 SmallVectorImpl<Type> &results);
  void genFunction(const Function &fn);
  void genReverseMode(const Function &fn);
  std::string paramName(func::FuncOp fn, unsigned i);
  void genStatement(const Statement &stmt, FunctionInfo &info);
  void nameValue(Value value, StringRef name);
  void checkRecursion(const Program &program);

  Value checkAscription(const Statement &stmt, Value value);
  Value genExpr(const Expr &expr);
  Value genLiteral(const Expr &expr);
  /// `expr` generated with its literals of float type `element`, where
  /// `expr` is made of literals alone (`0.5`, `broadcast(0.5)`, `1.0 / 3.0`:
  /// weak typing, as JAX's Python scalars: `x * broadcast(0.5)` is F64
  /// where `x` is); any other expression as genExpr makes it.
  Value genTypedLiteral(const Expr &expr, Type element);
  Value genBinary(const Expr &expr);
  std::optional<SmallVector<Value>> genOperands(const Expr &expr);
  bool isElementwise(const SurfaceOp &op);
  Value genContextual(const Expr &expr, Value other, const SurfaceOp &infix);
  const InferResultTypeOpInterface::Concept *shapeRule(const SurfaceOp &op,
                                                       SourceLoc where);
  Value genOp(const Expr &expr, ValueRange operands,
              SmallVectorImpl<NamedAttribute> &attrs);
  Value genCall(const Expr &expr);
  std::optional<SmallVector<Value>> genCallResults(const Expr &expr);
  std::string exportedOnlyNote(StringRef name);
  void genPipeline(const Function &fn);
  void genReturn(const Statement &stmt, FunctionInfo &info);
  void bind(const std::string &name, SourceLoc where, Value value);
  Value createOp(const SurfaceOp &op, SourceLoc where, ValueRange operands,
                 ArrayRef<NamedAttribute> attrs);
  bool collectAttrs(const Expr &expr, SmallVectorImpl<NamedAttribute> &attrs);

  MLIRContext &context;
  OpBuilder builder;
  const SourceLocations &locations;
  bool hadError = false;
  ModuleOp module;
  MeshOp mesh;
  bool meshDeclared = false;
  llvm::StringMap<FunctionInfo> functions;
  /// Each reverseMode function's `wrt`, as parameter positions.
  llvm::StringMap<SmallVector<int64_t>> wrtPositions;
  llvm::StringSet<> reverseModeNames;
  llvm::StringSet<> pipelineNames;
  llvm::StringSet<> brokenFunctions;
  const Function *mainFunction = nullptr;
  /// Calls made by each function, for the recursion check.
  llvm::StringMap<std::vector<std::pair<std::string, SourceLoc>>> callGraph;

  // The function being generated.
  const Function *current = nullptr;
  llvm::StringMap<Value> scope; // a null Value: bound by a failed statement
  llvm::StringMap<SourceLoc> boundAt;
  unsigned nextPlaceholder = 0;
  /// Its parameters or result are mesh-placed: literals are @replicated.
  bool meshBody = false;
  /// The element type of the literal being generated (null: F32).
  Type literalType;
  bool returned = false;
};
} // namespace

static std::string opDisplayName(const SurfaceOp &op) {
  if (*op.surfaceName)
    return op.surfaceName;
  return std::string("'") + (*op.infix ? op.infix : op.prefix) + "'";
}

/// The placement `spec` writes, resolved against the program's mesh:
/// `over` may be left out on a one-axis mesh only.
PlacementAttr MLIRGen::convertPlacement(const TypeSpec &spec, bool asResult) {
  using Kind = TypeSpec::Placement;
  if (spec.placement == Kind::Host)
    return PlacementAttr::getHost(&context);
  if (!mesh && meshDeclared)
    return {}; // the mesh itself was invalid, and said so
  if (!mesh) {
    error(spec.placementLoc)
        << "a mesh placement needs a mesh: declare one with @mesh([...]) "
           "before the first function";
    return {};
  }
  if (spec.isPartial() && !asResult) {
    error(spec.placementLoc)
        << "@partial is a placement of a function's result (a partial sum "
           "its caller reduces); a parameter, a placeholder or an "
           "ascription takes a whole or split value: declare it "
           "@replicated, or @sharded(...) to receive it reduce-scattered";
    return {};
  }
  if (spec.placement == Kind::Replicated)
    return PlacementAttr::getReplicated(&context);
  // On the mesh, placed by automatic sharding (--kina-auto-shard).
  if (spec.placement == Kind::Auto)
    return PlacementAttr::getAuto(&context);
  std::optional<SmallVector<StringAttr>> over =
      spec.placement == Kind::Partial
          ? SmallVector<StringAttr>()
          : meshAxes(spec.splitOver, spec.splitAxes.size(), spec, "@sharded");
  std::optional<SmallVector<StringAttr>> partial =
      spec.isPartial() ? meshAxes(spec.partialOver, 1, spec, "@partial")
                       : SmallVector<StringAttr>();
  if (!over || !partial)
    return {};
  if (failed(PlacementAttr::verify([&] { return error(spec.placementLoc); },
                                   PlacementKind::mesh, spec.splitAxes, *over,
                                   *partial)))
    return {};
  return PlacementAttr::getMesh(&context, spec.splitAxes, *over, *partial);
}

std::optional<SmallVector<StringAttr>>
MLIRGen::meshAxes(ArrayRef<std::string> names, size_t count,
                  const TypeSpec &spec, StringRef what) {
  size_t meshRank = mesh.getShape().size();
  SmallVector<StringAttr> over;
  if (names.empty()) {
    if (meshRank != 1 || count != 1) {
      if (what == "@sharded")
        error(spec.placementLoc)
            << "@sharded(axis=...) without over= needs a one-axis mesh and "
               "one axis; the mesh has axes "
            << mesh.getAxisList() << ": write over=<axis>";
      else
        error(spec.placementLoc)
            << "@partial without over= needs a one-axis mesh; the mesh has "
               "axes "
            << mesh.getAxisList() << ": write @partial(over=<axis>)";
      return std::nullopt;
    }
    over.push_back(cast<StringAttr>(mesh.getAxes()[0]));
    return over;
  }
  if (what == "@sharded" && names.size() != count) {
    error(spec.placementLoc)
        << "@sharded names " << count << " axis(es) but " << names.size()
        << " mesh axis(es) in over=";
    return std::nullopt;
  }
  for (const std::string &name : names) {
    if (!mesh.getAxisSize(name)) {
      error(spec.placementLoc) << "unknown mesh axis '" << name
                               << "'; the mesh's axes are "
                               << mesh.getAxisList();
      return std::nullopt;
    }
    over.push_back(builder.getStringAttr(name));
  }
  return over;
}

KinaTensorType MLIRGen::convertType(const TypeSpec &spec, bool asResult,
                                    StringRef what) {
  Type element = getElementType(&context, spec.elementType);
  PlacementAttr placement = convertPlacement(spec, asResult);
  if (!placement)
    return {};
  // The shape's errors at the type, the placement's at the placement.
  if (!KinaTensorType::getChecked([&] { return error(spec.loc); }, &context,
                                  ArrayRef<int64_t>(spec.dims), element,
                                  PlacementAttr::getHost(&context)))
    return {};
  auto type = KinaTensorType::getChecked(
      [&] { return error(spec.placementLoc); }, &context,
      ArrayRef<int64_t>(spec.dims), element, placement);
  auto placementError = [&] {
    InFlightDiagnostic diagnostic = error(spec.placementLoc);
    if (!what.empty())
      diagnostic << what << ": ";
    return diagnostic;
  };
  if (type && failed(verifyPlacement(type, mesh, placementError)))
    return {};
  return type;
}

/// `kina.mesh @mesh [...]` from `@mesh([...], axes=[...])`.
void MLIRGen::genMesh(const mlir::kina::MeshDecl &decl) {
  SmallVector<StringRef> names(decl.axes.begin(), decl.axes.end());
  if (!decl.hasAxes) {
    if (decl.shape.size() > 1) {
      error(decl.loc) << "a mesh of " << decl.shape.size()
                      << " axes names them: @mesh(" << formatShape(decl.shape)
                      << ", axes=[...])";
      return;
    }
    names.assign(decl.shape.size(), kDefaultMeshAxis);
  }
  if (failed(MeshOp::verifyAxes(decl.shape, names,
                                [&] { return error(decl.loc); })))
    return;
  builder.setInsertionPointToStart(module.getBody());
  mesh = MeshOp::create(builder, loc(decl.loc), builder.getStringAttr("mesh"),
                        builder.getDenseI64ArrayAttr(decl.shape),
                        builder.getStrArrayAttr(names));
}

/// `value` with `placement`: the value itself when it already has it, or
/// is an op result whose placement is still open (`@auto`); otherwise a
/// `kina.reshard`.
Value MLIRGen::placeAs(Value value, PlacementAttr placement, SourceLoc where) {
  auto type = cast<KinaTensorType>(value.getType());
  if (type.getPlacement() == placement)
    return value;
  auto placed = KinaTensorType::get(&context, type.getShape(),
                                    type.getElementType(), placement);
  if (type.getPlacement().isAuto() && placement.isOnMesh() &&
      isa<OpResult>(value)) {
    value.setType(placed);
    return value;
  }
  return ReshardOp::create(builder, loc(where), placed, value);
}

OwningOpRef<ModuleOp> MLIRGen::run(const Program &program) {
  context.getOrLoadDialect<KinaDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  OwningOpRef<ModuleOp> owned = ModuleOp::create(loc(SourceLoc{1, 1}));
  module = *owned;
  meshDeclared = program.mesh.has_value();
  if (program.mesh)
    genMesh(*program.mesh);
  for (const std::string &name : program.brokenFunctions)
    brokenFunctions.insert(name);
  // Functions defined by reverseMode take their types from the functions
  // they differentiate, so those are declared first.
  for (const Function &fn : program.functions)
    if (!fn.reverseMode && !fn.pipeline)
      declareFunction(fn);
  for (const Function &fn : program.functions)
    if (fn.reverseMode && !functions.count(fn.name))
      reverseModeNames.insert(fn.name);
  for (const Function &fn : program.functions)
    if (fn.reverseMode)
      declareReverseMode(fn);
  for (const Function &fn : program.functions) {
    if (functions.lookup(fn.name).ast != &fn)
      continue;
    if (fn.reverseMode)
      genReverseMode(fn);
    else
      genFunction(fn);
  }
  for (const Function &fn : program.functions)
    if (fn.pipeline)
      genPipeline(fn);
  checkRecursion(program);
  if (hadError || !program.complete || failed(verify(*owned)))
    return nullptr;
  return owned;
}

void MLIRGen::declareFunction(const Function &fn) {
  auto [it, inserted] = functions.try_emplace(fn.name);
  if (!inserted) {
    error(fn.loc) << "function '" << fn.name << "' is defined twice";
    return;
  }
  if (fn.isMain) {
    if (mainFunction)
      error(fn.loc) << "only one function may be @main; '" << mainFunction->name
                    << "' already is";
    else
      mainFunction = &fn;
    if (!fn.params.empty())
      error(fn.params.front().loc)
          << "the @main function takes its inputs as placeholders "
             "('NAME = placeholder : Tensor[...]'), not as parameters";
  }
  SmallVector<Type> inputs;
  SmallVector<std::string> inputNames;
  bool ok = true;
  for (const mlir::kina::Param &param : fn.params) {
    KinaTensorType type =
        convertType(param.type, false, "parameter '" + param.name + "'");
    ok &= bool(type);
    inputs.push_back(type);
    inputNames.push_back(param.name);
  }
  // The entry's placeholders are its inputs, in order of declaration.
  for (const Statement &stmt : fn.body) {
    // A placeholder whose type did not parse declares no input.
    if (stmt.kind != Statement::Kind::Placeholder || !fn.isMain ||
        !stmt.ascription)
      continue;
    KinaTensorType type = convertType(*stmt.ascription, false,
                                      "placeholder '" + stmt.name + "'");
    ok &= bool(type);
    inputs.push_back(type);
    inputNames.push_back(stmt.name);
  }
  SmallVector<Type> results;
  for (const TypeSpec &spec : fn.resultTypes) {
    std::string what = fn.resultTypes.size() == 1
                           ? "the result"
                           : "result #" + std::to_string(results.size());
    KinaTensorType result = convertType(spec, /*asResult=*/true, what);
    ok &= bool(result);
    results.push_back(result);
  }
  if (!ok)
    return;
  builder.setInsertionPointToEnd(module.getBody());
  auto op = func::FuncOp::create(builder, loc(fn.loc), fn.name,
                                 builder.getFunctionType(inputs, results));
  auto *dialect = context.getLoadedDialect<KinaDialect>();
  for (auto [i, name] : llvm::enumerate(inputNames))
    op.setArgAttr(i, dialect->getNameAttrHelper().getName(),
                  builder.getStringAttr(name));
  if (fn.isMain && mainFunction == &fn)
    dialect->getEntryAttrHelper().setAttr(op, builder.getUnitAttr());
  declareReuses(fn, op, inputNames);
  it->second = FunctionInfo{&fn, op};
}

/// `-> T @reuses(p)`: the result is written into parameter p's buffer
/// (`kina.reuses` = p's index), which must have the result's type and
/// serve one result.
void MLIRGen::declareReuses(const Function &fn, func::FuncOp op,
                            ArrayRef<std::string> inputNames) {
  auto *dialect = context.getLoadedDialect<KinaDialect>();
  llvm::StringMap<size_t> reusedBy;
  for (auto [result, reuse] : llvm::enumerate(fn.resultReuses)) {
    if (!reuse)
      continue;
    const auto *param = llvm::find(inputNames, reuse->param);
    if (param == inputNames.end()) {
      error(reuse->loc) << "@reuses(" << reuse->param << "): '" << fn.name
                        << "' has no parameter '" << reuse->param << "'";
      continue;
    }
    size_t index = param - inputNames.begin();
    Type paramType = op.getArgumentTypes()[index];
    Type resultType = op.getResultTypes()[result];
    if (!canReuseBuffer(paramType, resultType)) {
      error(reuse->loc) << "result " << result << " of '" << fn.name
                        << "' cannot reuse the buffer of parameter '"
                        << reuse->param << "': its type is "
                        << formatType(resultType) << ", the parameter's "
                        << formatType(paramType);
      continue;
    }
    auto [previous, first] = reusedBy.try_emplace(reuse->param, result);
    if (!first) {
      error(reuse->loc) << "parameter '" << reuse->param
                        << "' is reused by result " << previous->second
                        << " already; a buffer receives one result";
      continue;
    }
    op.setResultAttr(result, dialect->getReusesAttrHelper().getName(),
                     builder.getI64IntegerAttr(index));
  }
}

/// The source name of parameter `i` of `fn`.
std::string MLIRGen::paramName(func::FuncOp fn, unsigned i) {
  auto name = fn.getArgAttrOfType<StringAttr>(
      i, KinaDialect::NameAttrHelper::getNameStr());
  return name ? name.str() : "arg" + std::to_string(i);
}

/// `fn G = reverseMode(F, wrt=[p, ...])`: G takes F's parameters (and the
/// seed `d_result` when F's result is not rank 0) and returns F's result
/// and the gradient of each `wrt` parameter, of its type.
void MLIRGen::declareReverseMode(const Function &fn) {
  const mlir::kina::ReverseModeDecl &decl = *fn.reverseMode;
  auto [it, inserted] = functions.try_emplace(fn.name);
  if (!inserted) {
    error(fn.loc) << "function '" << fn.name << "' is defined twice";
    return;
  }
  auto of = functions.find(decl.of);
  if (reverseModeNames.contains(decl.of)) {
    error(decl.ofLoc) << "'" << decl.of
                      << "' is itself defined by reverseMode; differentiating "
                         "it is not supported in this version";
    return;
  }
  if (of == functions.end()) {
    if (!brokenFunctions.contains(decl.of))
      error(decl.ofLoc) << "unknown function '" << decl.of << "'";
    return;
  }
  if (!of->second.ast)
    return; // its declaration failed, and said so
  if (of->second.ast->isMain) {
    error(decl.ofLoc) << "the @main function '" << decl.of
                      << "' cannot be differentiated";
    return;
  }
  func::FuncOp callee = of->second.op;
  if (!callee)
    return; // its own declaration failed, and said so
  FunctionType type = callee.getFunctionType();
  if (type.getNumResults() != 1) {
    error(decl.ofLoc) << "reverseMode differentiates a function of one "
                         "result; '"
                      << decl.of << "' has " << type.getNumResults();
    return;
  }
  auto result = cast<KinaTensorType>(type.getResult(0));
  if (!isa<FloatType>(result.getElementType())) {
    error(decl.ofLoc) << "reverseMode differentiates a float result ("
                      << listFloatDTypeNames(/*asSource=*/true) << "); '"
                      << decl.of << "' returns " << formatType(result);
    return;
  }
  if (decl.split) {
    // The saved values' placements would be the propagation's to choose
    // across a function boundary, which it does not do yet.
    auto onHost = [](Type t) {
      return cast<KinaTensorType>(t).getPlacement().isHost();
    };
    if (!llvm::all_of(type.getInputs(), onHost) || !onHost(result)) {
      error(fn.loc) << "split=true differentiates functions on the host; '"
                    << decl.of << "' is placed on a mesh";
      return;
    }
    if (decl.reshardAfterForward) {
      error(fn.loc) << "reshard_after_forward=true chooses how a mesh "
                       "function's split weights are gathered for its "
                       "backward; with split=true '"
                    << decl.of << "' is on the host, where it means nothing";
      return;
    }
    if (!fn.resultTypes.empty()) {
      error(fn.resultTypes.front().loc)
          << "a split reverseMode defines '" << fn.name << "_forward' and '"
          << fn.name << "_backward', whose types are not declared";
      return;
    }
    for (const char *suffix :
         decl.inputs.empty()
             ? std::vector<const char *>{"_forward", "_backward"}
             : std::vector<const char *>{"_forward", "_input", "_weight"})
      if (functions.count(fn.name + suffix)) {
        error(fn.loc) << "split=true defines '" << fn.name << suffix
                      << "', a name already taken";
        return;
      }
  } else if (decl.inputsLoc.line) {
    error(decl.inputsLoc) << "inputs=[...] splits the backward of a split "
                             "reverseMode: it needs split=true";
    return;
  }
  if (decl.inputsLoc.line && decl.inputs.empty()) {
    error(decl.inputsLoc) << "inputs=[] names no parameter: name the wrt "
                             "parameters whose gradients come first, or "
                             "leave inputs out";
    return;
  }
  // As jax.grad, which needs an argument to differentiate: a gradient of
  // nothing would be the function itself under another name.
  if (decl.wrt.empty()) {
    error(decl.wrtLoc) << "wrt names no parameter: reverseMode "
                          "differentiates with respect to at least one";
    return;
  }
  SmallVector<int64_t> positions;
  SmallVector<Type> results = {result};
  bool ok = true;
  for (const auto &[name, where] : decl.wrt) {
    std::optional<unsigned> position;
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      if (paramName(callee, i) == name)
        position = i;
    if (!position) {
      std::string names;
      for (unsigned i = 0; i < type.getNumInputs(); ++i)
        names += (i ? ", " : "") + paramName(callee, i);
      error(where) << "'" << decl.of << "' has no parameter '" << name
                   << "' (its parameters: " << names << ")";
      ok = false;
      continue;
    }
    if (llvm::is_contained(positions, int64_t(*position))) {
      error(where) << "'" << name << "' is named twice in wrt";
      ok = false;
      continue;
    }
    auto param = cast<KinaTensorType>(type.getInput(*position));
    if (!isa<FloatType>(param.getElementType())) {
      error(where) << "parameter '" << name << "' of '" << decl.of << "' is "
                   << formatType(param)
                   << ": only float parameters ("
                   << listFloatDTypeNames(/*asSource=*/true)
                   << ") are differentiable";
      ok = false;
      continue;
    }
    positions.push_back(*position);
    results.push_back(param);
  }
  // inputs=[...]: their positions in wrt, and at least one gradient left
  // for G_weight.
  SmallVector<int64_t> inputPositions;
  for (const auto &[name, where] : decl.inputs) {
    auto inWrt = llvm::find_if(
        decl.wrt, [&name = name](const auto &w) { return w.first == name; });
    if (inWrt == decl.wrt.end()) {
      error(where) << "'" << name << "' is in inputs but not in wrt";
      ok = false;
      continue;
    }
    int64_t index = inWrt - decl.wrt.begin();
    if (llvm::is_contained(inputPositions, index)) {
      error(where) << "'" << name << "' is named twice in inputs";
      ok = false;
      continue;
    }
    inputPositions.push_back(index);
  }
  if (ok && !decl.inputs.empty() && inputPositions.size() == decl.wrt.size()) {
    error(decl.inputsLoc) << "inputs=[...] names every wrt parameter, which "
                             "leaves '"
                          << fn.name
                          << "_weight' nothing to compute: split=true alone "
                             "defines one backward";
    ok = false;
  }
  if (!ok || !declareGradientPlacements(fn, results))
    return;
  SmallVector<Type> inputs(type.getInputs());
  if (result.getRank() > 0)
    inputs.push_back(result);
  builder.setInsertionPointToEnd(module.getBody());
  auto op = func::FuncOp::create(builder, loc(fn.loc), fn.name,
                                 builder.getFunctionType(inputs, results));
  auto *dialect = context.getLoadedDialect<KinaDialect>();
  for (unsigned i = 0; i < inputs.size(); ++i)
    op.setArgAttr(i, dialect->getNameAttrHelper().getName(),
                  builder.getStringAttr(i < type.getNumInputs()
                                            ? paramName(callee, i)
                                            : std::string("d_result")));
  if (decl.reshardAfterForward)
    dialect->getReshardAfterForwardAttrHelper().setAttr(op,
                                                        builder.getUnitAttr());
  if (decl.split)
    dialect->getSplitBackwardAttrHelper().setAttr(op, builder.getUnitAttr());
  if (!inputPositions.empty())
    dialect->getSplitInputsAttrHelper().setAttr(
        op, builder.getDenseI64ArrayAttr(inputPositions));
  wrtPositions[fn.name] = positions;
  it->second = FunctionInfo{&fn, op};
  callGraph[fn.name].push_back({decl.of, decl.ofLoc});
}

/// `fn G = reverseMode(F, wrt=[...]) -> (T, ...)`: `results` (F's result,
/// then each gradient, as computed) placed as the declared types say,
/// which must match them but for their placements; false after an error.
bool MLIRGen::declareGradientPlacements(const Function &fn,
                                        SmallVectorImpl<Type> &results) {
  if (fn.resultTypes.empty())
    return true;
  if (fn.resultTypes.size() != results.size()) {
    error(fn.resultTypes.front().loc)
        << "'" << fn.name << "' returns " << results.size()
        << " values (the value of '" << fn.reverseMode->of
        << "', then a gradient per wrt name), but its declaration names "
        << fn.resultTypes.size() << " result types";
    return false;
  }
  bool ok = true;
  for (auto [i, spec] : llvm::enumerate(fn.resultTypes)) {
    std::string what = i == 0 ? "the value"
                              : "the gradient of '" +
                                    fn.reverseMode->wrt[i - 1].first + "'";
    KinaTensorType declared = convertType(spec, /*asResult=*/true, what);
    auto computed = cast<KinaTensorType>(results[i]);
    if (!declared) {
      ok = false;
      continue;
    }
    if (declared.getShape() != computed.getShape() ||
        declared.getElementType() != computed.getElementType()) {
      error(spec.loc) << what << " is " << formatType(computed)
                      << "; a declared type may change only its placement, "
                         "not "
                      << formatType(declared);
      ok = false;
      continue;
    }
    results[i] = declared;
  }
  return ok;
}

/// G's body: the kina.reverse_mode op that --kina-differentiate expands.
void MLIRGen::genReverseMode(const Function &fn) {
  FunctionInfo &info = functions[fn.name];
  if (!info.op)
    return;
  Block *entry = info.op.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  auto op = ReverseModeOp::create(
      builder, loc(fn.loc), info.op.getFunctionType().getResults(),
      fn.reverseMode->of, wrtPositions.lookup(fn.name),
      entry->getArguments());
  func::ReturnOp::create(builder, loc(fn.loc), op.getResults());
}

void MLIRGen::genFunction(const Function &fn) {
  FunctionInfo &info = functions[fn.name];
  if (!info.op)
    return;
  current = &fn;
  scope.clear();
  boundAt.clear();
  nextPlaceholder = fn.params.size();
  returned = false;
  meshBody = anyPlacement(info.op.getFunctionType(),
                          [](PlacementAttr p) { return p.isOnMesh(); });
  Block *entry = info.op.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (auto [i, param] : llvm::enumerate(fn.params)) {
    // Located at its name: what is said of a parameter (its gradient's
    // all-reduce) points at it, not at the function.
    entry->getArgument(i).setLoc(loc(param.loc));
    if (!scope.try_emplace(param.name, entry->getArgument(i)).second)
      error(param.loc) << "parameter '" << param.name << "' is declared twice";
    boundAt[param.name] = param.loc;
  }
  for (const Statement &stmt : fn.body) {
    if (returned) {
      error(stmt.loc) << "statement after the return of '" << fn.name << "'";
      break;
    }
    genStatement(stmt, info);
  }
  if (!returned && !fn.hadSyntaxError)
    error(fn.closeLoc) << "function '" << fn.name
                       << "' ends without a return statement";
}

/// `return a, b, ...`: one value per declared result, each of its shape
/// and dtype, placed as the result type says (the caller receives that).
void MLIRGen::genReturn(const Statement &stmt, FunctionInfo &info) {
  returned = true;
  if (!stmt.value)
    return;
  SmallVector<const Expr *> exprs = {stmt.value.get()};
  for (const auto &more : stmt.moreValues)
    exprs.push_back(more.get());
  FunctionType type = info.op.getFunctionType();
  if (exprs.size() != type.getNumResults()) {
    error(stmt.loc) << "'" << current->name << "' returns "
                    << type.getNumResults() << " result(s), but this return "
                    << "gives " << exprs.size();
    return;
  }
  SmallVector<Value> values;
  for (auto [expr, resultType] : llvm::zip_equal(exprs, type.getResults())) {
    Value value = genTypedLiteral(
        *expr, cast<KinaTensorType>(resultType).getElementType());
    if (!value)
      return;
    auto expected = cast<KinaTensorType>(resultType);
    auto given = cast<KinaTensorType>(value.getType());
    if (given.getShape() != expected.getShape() ||
        given.getElementType() != expected.getElementType()) {
      error(expr->loc) << "return value has type " << formatType(given)
                       << " but '" << current->name << "' returns "
                       << formatType(expected);
      return;
    }
    values.push_back(placeAs(value, expected.getPlacement(), expr->loc));
  }
  func::ReturnOp::create(builder, loc(stmt.loc), values);
}

/// Binds `name` (once per function; `_` binds nothing) to `value`, null
/// when the statement failed (its uses are then not reported again).
void MLIRGen::bind(const std::string &name, SourceLoc where, Value value) {
  if (name == mlir::kina::kDiscardName)
    return;
  auto previous = boundAt.find(name);
  if (previous != boundAt.end()) {
    error(where) << "'" << name << "' is already bound at line "
                 << previous->second.line << ":" << previous->second.col
                 << "; a name is bound once per function";
    return;
  }
  boundAt[name] = where;
  scope[name] = value;
}

void MLIRGen::genStatement(const Statement &stmt, FunctionInfo &info) {
  if (stmt.kind == Statement::Kind::Return)
    return genReturn(stmt, info);

  if (!stmt.moreNames.empty()) {
    // `a, b, _ = f(...)`: one name per result of the call.
    SmallVector<std::pair<std::string, SourceLoc>> names = {
        {stmt.name, stmt.nameLoc}};
    llvm::append_range(names, stmt.moreNames);
    std::optional<SmallVector<Value>> results;
    if (stmt.value && stmt.value->kind != Expr::Kind::Call)
      error(stmt.value->loc) << "a multiple binding takes the results of a "
                                "function call";
    else if (stmt.value)
      results = genCallResults(*stmt.value);
    if (results && results->size() != names.size()) {
      error(stmt.loc) << "'" << stmt.value->name << "' returns "
                      << results->size() << " result(s), but "
                      << names.size() << " names are bound";
      results.reset();
    }
    for (auto [i, name] : llvm::enumerate(names))
      bind(name.first, name.second, results ? (*results)[i] : Value());
    return;
  }

  Value value;
  if (stmt.kind == Statement::Kind::Placeholder) {
    if (!stmt.ascription)
      ; // did not parse: the name stays poisoned
    else if (!current->isMain)
      error(stmt.loc) << "placeholder '" << stmt.name
                      << "' declares an input of the @main entry, but '"
                      << current->name << "' is not @main";
    else
      value = info.op.getArgument(nextPlaceholder++);
  } else if (stmt.value) {
    value = genExpr(*stmt.value);
    if (value && stmt.ascription)
      value = checkAscription(stmt, value);
    nameValue(value, stmt.name);
  }
  bind(stmt.name, stmt.nameLoc, value);
}

/// The op computing `value`, bound as `name` (`h = x @ w`), gets the
/// location `"h"(file:line:col)`: reports and tables (the simulator's,
/// `show_sharding`) then say `h`. A value bound twice keeps its first
/// name; parameters and several results are not renamed.
void MLIRGen::nameValue(Value value, StringRef name) {
  Operation *op = value ? value.getDefiningOp() : nullptr;
  if (!op || op->getNumResults() != 1 || isa<NameLoc>(op->getLoc()))
    return;
  op->setLoc(NameLoc::get(builder.getStringAttr(name), op->getLoc()));
}

/// `value` when it has the statement's ascribed shape or type; null (after
/// an error) otherwise, or when the ascribed type itself is invalid.
Value MLIRGen::checkAscription(const Statement &stmt, Value value) {
  auto type = cast<KinaTensorType>(value.getType());
  if (stmt.ascribesShapeOnly) {
    if (type.getShape() == ArrayRef<int64_t>(stmt.ascription->dims))
      return value;
    error(stmt.ascription->loc)
        << "'" << stmt.name << "' has type " << formatType(type)
        << " but is ascribed shape " << formatShape(stmt.ascription->dims);
    return nullptr;
  }
  KinaTensorType ascribed = convertType(*stmt.ascription);
  if (!ascribed) // reported by convertType
    return nullptr;
  PlacementAttr want = ascribed.getPlacement(), have = type.getPlacement();
  if (type.getShape() == ascribed.getShape() &&
      type.getElementType() == ascribed.getElementType() &&
      (want == have || (want.isOnMesh() && have.isOnMesh())))
    // A mesh placement ascribed to a mesh value constrains it; the values
    // stay the same.
    return placeAs(value, want, stmt.ascription->loc);
  error(stmt.ascription->loc)
      << "'" << stmt.name << "' has type " << formatType(type)
      << " but is ascribed type " << formatType(ascribed);
  return nullptr;
}

Value MLIRGen::genExpr(const Expr &expr) {
  switch (expr.kind) {
  case Expr::Kind::Name: {
    if (expr.name == mlir::kina::kDiscardName) {
      error(expr.loc) << "'_' discards a value; it cannot be read";
      return nullptr;
    }
    auto it = scope.find(expr.name);
    if (it == scope.end()) {
      if (functions.count(expr.name))
        error(expr.loc) << "'" << expr.name
                        << "' is a function; call it with arguments";
      else
        error(expr.loc) << "unknown name '" << expr.name << "'";
      return nullptr;
    }
    return it->second; // null: already reported where it was bound
  }
  case Expr::Kind::Number:
    return genLiteral(expr);
  case Expr::Kind::Unary: {
    Value operand = genExpr(*expr.operands[0]);
    if (!operand)
      return nullptr;
    return createOp(*expr.op, expr.loc, operand, {});
  }
  case Expr::Kind::Binary:
    return genBinary(expr);
  case Expr::Kind::Op: {
    if (expr.isContextual()) {
      error(expr.loc) << opDisplayName(*expr.op)
                      << "(x) takes its target shape from the op it is an "
                         "operand of (@ + - * / or an elementwise op); "
                         "elsewhere write "
                      << expr.op->surfaceName << "[shape=[...]] x";
      return nullptr;
    }
    std::optional<SmallVector<Value>> operands = genOperands(expr);
    if (!operands)
      return nullptr;
    SmallVector<NamedAttribute> attrs;
    return genOp(expr, *operands, attrs);
  }
  case Expr::Kind::Call:
    return genCall(expr);
  }
  return nullptr;
}

/// A literal: a rank-0 constant of `literalType` (F32 unless the context
/// gives another float type), rounded to nearest even.
Value MLIRGen::genLiteral(const Expr &expr) {
  auto element = dyn_cast_or_null<FloatType>(literalType);
  if (!element)
    element = builder.getF32Type();
  APFloat value(expr.number);
  bool inexact;
  value.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &inexact);
  if (!value.isFinite()) {
    error(expr.loc) << "number " << expr.number << " is out of range for "
                    << dtypeInfo(*getDType(element)).sourceName;
    return nullptr;
  }
  auto type =
      KinaTensorType::get(&context, {}, element,
                          meshBody ? PlacementAttr::getReplicated(&context)
                                   : PlacementAttr::getHost(&context));
  return ConstantOp::create(builder, loc(expr.loc), type,
                            FloatAttr::get(element, value));
}

/// Whether `expr` is made of literals alone: a number, or an operator or
/// op (a broadcast, `exp`) applied to such expressions only, other than
/// a `cast`, whose attribute names its type.
static bool isLiteralTree(const Expr &expr) {
  auto allLiteral = [&] {
    return !expr.operands.empty() &&
           llvm::all_of(expr.operands, [](const mlir::kina::ExprPtr &e) {
             return isLiteralTree(*e);
           });
  };
  switch (expr.kind) {
  case Expr::Kind::Number:
    return true;
  case Expr::Kind::Unary:
  case Expr::Kind::Binary:
    return allLiteral();
  case Expr::Kind::Op:
    for (unsigned i = 0; i < expr.op->numAttrs; ++i)
      if (expr.op->attrs[i].kind == SurfaceAttrKind::ElementType)
        return false;
    return allLiteral();
  default:
    return false;
  }
}

Value MLIRGen::genTypedLiteral(const Expr &expr, Type element) {
  if (!isLiteralTree(expr) || !isa_and_nonnull<FloatType>(element))
    return genExpr(expr);
  Type outer = literalType;
  literalType = element;
  Value value = genExpr(expr);
  literalType = outer;
  return value;
}

Value MLIRGen::genBinary(const Expr &expr) {
  std::optional<SmallVector<Value>> operands = genOperands(expr);
  if (!operands)
    return nullptr;
  return createOp(*expr.op, expr.loc, *operands, {});
}

/// Whether the kina op behind `op` is elementwise.
bool MLIRGen::isElementwise(const SurfaceOp &op) {
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(op.opName, &context);
  return name && name->hasTrait<Elementwise>();
}

/// The operands of an operator or op application. A contextual
/// `broadcast(x)` among them (of an infix operator or an elementwise op)
/// takes its shape from the first operand with a shape of its own, by the
/// op's shape rules; that one is generated first.
std::optional<SmallVector<Value>> MLIRGen::genOperands(const Expr &expr) {
  auto isContextual = [](const mlir::kina::ExprPtr &e) {
    return e->isContextual();
  };
  size_t count = expr.operands.size();
  size_t anchor = llvm::find_if_not(expr.operands, isContextual) -
                  expr.operands.begin();
  bool anyContextual = llvm::any_of(expr.operands, isContextual);
  if (anyContextual && expr.kind == Expr::Kind::Op &&
      !isElementwise(*expr.op)) {
    error(expr.loc) << opDisplayName(*expr.op)
                    << " is not elementwise: broadcast(x) cannot take its "
                       "shape from another operand here; write broadcast"
                       "[shape=[...]] x";
    return std::nullopt;
  }
  if (anyContextual && anchor == count) {
    if (expr.kind == Expr::Kind::Binary)
      error(expr.loc) << "both operands of '" << expr.token
                      << "' take their shape from the other; give one an "
                         "explicit shape";
    else
      error(expr.loc) << "every operand of " << opDisplayName(*expr.op)
                      << " takes its shape from another; give one an "
                         "explicit shape";
    return std::nullopt;
  }
  // Literals (and expressions of literals) come last: they take the float
  // type of the other operands, or the type an op's attribute names
  // (`cast(0.1, to=F64)`), or the one the enclosing literal expression
  // was given.
  SmallVector<Value> operands(count);
  bool ok = true;
  Type literalElement = literalType;
  for (size_t i = 0; i < count; ++i)
    if (!isContextual(expr.operands[i]) && !isLiteralTree(*expr.operands[i])) {
      ok &= bool(operands[i] = genExpr(*expr.operands[i]));
      if (operands[i] && literalElement == literalType)
        literalElement =
            cast<KinaTensorType>(operands[i].getType()).getElementType();
    }
  if (expr.kind == Expr::Kind::Op)
    for (unsigned i = 0; i < expr.op->numAttrs; ++i)
      if (expr.attrs[i] && expr.attrs[i]->kind == SurfaceAttrKind::ElementType)
        literalElement = getElementType(&context, expr.attrs[i]->dtypeValue);
  for (size_t i = 0; i < count; ++i)
    if (!isContextual(expr.operands[i]) && isLiteralTree(*expr.operands[i]))
      ok &= bool(operands[i] =
                     genTypedLiteral(*expr.operands[i], literalElement));
  for (size_t i = 0; i < count; ++i)
    if (isContextual(expr.operands[i]))
      ok &= operands[anchor] &&
            bool(operands[i] = genContextual(*expr.operands[i],
                                             operands[anchor], *expr.op));
  if (!ok)
    return std::nullopt;
  return operands;
}

/// `broadcast(x)` as an operand of the op of `infix`, whose shape rules
/// say what target shape that is.
Value MLIRGen::genContextual(const Expr &expr, Value other,
                             const SurfaceOp &infix) {
  Value input =
      genTypedLiteral(*expr.operands[0],
                      cast<KinaTensorType>(other.getType()).getElementType());
  const InferResultTypeOpInterface::Concept *rule = shapeRule(infix, expr.loc);
  if (!input || !rule)
    return nullptr;
  FailureOr<SmallVector<int64_t>> target = rule->contextualBroadcastShape(
      cast<KinaTensorType>(input.getType()),
      cast<KinaTensorType>(other.getType()),
      [&] { return error(expr.loc) << opDisplayName(*expr.op) << ": "; });
  if (failed(target))
    return nullptr;
  SmallVector<NamedAttribute> attrs;
  for (unsigned i = 0; i < expr.op->numAttrs; ++i)
    if (!expr.attrs[i])
      attrs.push_back(builder.getNamedAttr(
          expr.op->attrs[i].name, builder.getDenseI64ArrayAttr(*target)));
  return genOp(expr, input, attrs);
}

/// The shape rules of the kina op behind `op`.
const InferResultTypeOpInterface::Concept *
MLIRGen::shapeRule(const SurfaceOp &op, SourceLoc where) {
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(op.opName, &context);
  auto *rule =
      name ? name->getInterface<InferResultTypeOpInterface>() : nullptr;
  if (!rule)
    error(where) << "internal error: " << op.opName << " has no shape rule";
  return rule;
}

bool MLIRGen::collectAttrs(const Expr &expr,
                           SmallVectorImpl<NamedAttribute> &attrs) {
  for (unsigned i = 0; i < expr.op->numAttrs; ++i) {
    if (!expr.attrs[i])
      continue;
    const mlir::kina::AttrValue &value = *expr.attrs[i];
    Attribute attr;
    switch (value.kind) {
    case SurfaceAttrKind::Int:
      attr = builder.getI64IntegerAttr(value.intValue);
      break;
    case SurfaceAttrKind::IntList:
      attr = builder.getDenseI64ArrayAttr(value.listValue);
      break;
    case SurfaceAttrKind::ElementType:
      attr = TypeAttr::get(getElementType(&context, value.dtypeValue));
      break;
    }
    attrs.push_back(builder.getNamedAttr(expr.op->attrs[i].name, attr));
  }
  return true;
}

Value MLIRGen::genOp(const Expr &expr, ValueRange operands,
                     SmallVectorImpl<NamedAttribute> &attrs) {
  collectAttrs(expr, attrs);
  return createOp(*expr.op, expr.loc, operands, attrs);
}

/// Builds any kina op from its name; its result type comes from the op's
/// own shape rule, whose diagnostics point at `where`.
Value MLIRGen::createOp(const SurfaceOp &op, SourceLoc where,
                        ValueRange operands, ArrayRef<NamedAttribute> attrs) {
  const InferResultTypeOpInterface::Concept *rule = shapeRule(op, where);
  if (!rule)
    return nullptr;
  FailureOr<Type> type = rule->inferResultType(
      TypeRange(operands), builder.getDictionaryAttr(attrs), mesh,
      [&] { return error(where) << opDisplayName(op) << ": "; });
  if (failed(type))
    return nullptr;
  OperationState state(loc(where), op.opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(*type);
  return builder.create(state)->getResult(0);
}

/// A call used as a value: of a function with one result.
Value MLIRGen::genCall(const Expr &expr) {
  std::optional<SmallVector<Value>> results = genCallResults(expr);
  if (!results)
    return nullptr;
  if (results->size() != 1) {
    error(expr.loc) << "'" << expr.name << "' returns " << results->size()
                    << " results; bind them with 'NAME, NAME = " << expr.name
                    << "(...)'";
    return nullptr;
  }
  return results->front();
}

/// `fn P = pipeline(f0, ..., batch=[...])`: a kina.pipeline declaration,
/// whose verifier checks the stages' types and the parameters' roles.
void MLIRGen::genPipeline(const Function &fn) {
  const PipelineDecl &decl = *fn.pipeline;
  if (functions.count(fn.name) || pipelineNames.contains(fn.name)) {
    error(fn.loc) << "'" << fn.name << "' is defined twice";
    return;
  }
  pipelineNames.insert(fn.name);
  SmallVector<Attribute> stages;
  bool ok = true;
  for (const auto &[name, where] : decl.stages) {
    auto it = functions.find(name);
    if (it == functions.end()) {
      if (!brokenFunctions.contains(name))
        error(where) << "unknown function '" << name << "'"
                     << exportedOnlyNote(name);
      ok = false;
      continue;
    }
    if (!it->second.op || it->second.ast->reverseMode) {
      if (it->second.ast && it->second.ast->reverseMode)
        error(where) << "'" << name
                     << "' is defined by reverseMode; a "
                        "stage is a function with a body";
      ok = false;
      continue;
    }
    stages.push_back(FlatSymbolRefAttr::get(&context, name));
  }
  if (!ok)
    return;
  auto strings = [&](const std::vector<std::pair<std::string, SourceLoc>> &l) {
    SmallVector<StringRef> names;
    for (const auto &entry : l)
      names.push_back(entry.first);
    return builder.getStrArrayAttr(names);
  };
  builder.setInsertionPointToEnd(module.getBody());
  auto op = PipelineOp::create(
      builder, loc(fn.loc), fn.name, builder.getArrayAttr(stages),
      strings(decl.batch), strings(decl.constants), strings(decl.shared));
  // Its rules now, so that each pipeline's error is reported.
  SymbolTableCollection symbols;
  if (failed(op.verifySymbolUses(symbols))) {
    hadError = true;
    op.erase();
  }
}

/// For a call of `G_forward` or `G_backward` where G is a split
/// reverseMode: why the program cannot call it (empty otherwise).
std::string MLIRGen::exportedOnlyNote(StringRef name) {
  for (StringRef suffix : {"_forward", "_backward", "_input", "_weight"}) {
    if (!name.ends_with(suffix))
      continue;
    std::string gradient = name.drop_back(suffix.size()).str();
    auto split = functions.find(gradient);
    if (split != functions.end() && split->second.op &&
        split->second.op->hasAttr(context.getLoadedDialect<KinaDialect>()
                                      ->getSplitBackwardAttrHelper()
                                      .getName()))
      return (": '" + name + "' is exported by '" + gradient +
              "''s reverseMode(..., split=true) for the host to call, not "
              "defined inside the program")
          .str();
  }
  return "";
}

/// The results of a call; nothing (after an error) when it is ill-formed.
std::optional<SmallVector<Value>>
MLIRGen::genCallResults(const Expr &expr) {
  auto it = functions.find(expr.name);
  if (it == functions.end()) {
    if (!brokenFunctions.contains(expr.name))
      error(expr.loc) << "unknown function '" << expr.name << "'"
                      << exportedOnlyNote(expr.name);
    return std::nullopt;
  }
  func::FuncOp callee = it->second.op;
  const Function *calleeAst = it->second.ast;
  if (calleeAst && calleeAst->reverseMode && calleeAst->reverseMode->split) {
    error(expr.loc) << "'" << expr.name
                    << "' is a split reverseMode: it defines '" << expr.name
                    << "_forward' and '" << expr.name
                    << (calleeAst->reverseMode->inputs.empty()
                            ? "_backward'"
                            : "_input' and '" + expr.name + "_weight'")
                    << " for the host to call, not '" << expr.name
                    << "' itself; inside the program, call a reverseMode "
                       "without split=true";
    return std::nullopt;
  }
  SmallVector<Value> args;
  bool ok = true;
  FunctionType calleeType = callee ? callee.getFunctionType() : FunctionType();
  for (auto [i, arg] : llvm::enumerate(expr.operands)) {
    // A literal argument takes its parameter's element type.
    Type element =
        calleeType && i < calleeType.getNumInputs()
            ? cast<KinaTensorType>(calleeType.getInput(i)).getElementType()
            : Type();
    args.push_back(genTypedLiteral(*arg, element));
    ok &= bool(args.back());
  }
  if (!callee || !ok)
    return std::nullopt;
  if (calleeAst->isMain) {
    error(expr.loc) << "the @main function '" << expr.name
                    << "' cannot be called";
    return std::nullopt;
  }
  callGraph[current->name].push_back({expr.name, expr.loc});
  FunctionType type = callee.getFunctionType();
  if (args.size() != type.getNumInputs()) {
    error(expr.loc) << "'" << expr.name << "' takes " << type.getNumInputs()
                    << " argument(s), got " << args.size();
    return std::nullopt;
  }
  for (auto [i, arg] : llvm::enumerate(args)) {
    auto given = cast<KinaTensorType>(arg.getType());
    auto param = cast<KinaTensorType>(type.getInput(i));
    if (given.getShape() == param.getShape() &&
        given.getElementType() == param.getElementType()) {
      // Placements never make a call ill-typed: the argument is
      // distributed or resharded as the parameter says.
      arg = placeAs(arg, param.getPlacement(), expr.operands[i]->loc);
      continue;
    }
    error(expr.operands[i]->loc)
        << "argument " << i + 1 << " of '" << expr.name << "' has type "
        << formatType(arg.getType()) << " but parameter '"
        << paramName(callee, i) << "' is " << formatType(type.getInput(i));
    return std::nullopt;
  }
  return SmallVector<Value>(
      func::CallOp::create(builder, loc(expr.loc), callee, args).getResults());
}

/// Functions may call each other in any order, but not recursively.
void MLIRGen::checkRecursion(const Program &program) {
  enum class State { Unvisited, Active, Done };
  llvm::StringMap<State> state;
  std::function<void(StringRef)> visit = [&](StringRef name) {
    state[name] = State::Active;
    for (auto &[callee, where] : callGraph.lookup(name)) {
      State s = state.lookup(callee);
      if (s == State::Active)
        error(where) << "recursive call of '" << callee << "' is not supported";
      else if (s == State::Unvisited)
        visit(callee);
    }
    state[name] = State::Done;
  };
  for (const Function &fn : program.functions)
    if (state.lookup(fn.name) == State::Unvisited)
      visit(fn.name);
}

namespace mlir::kina {
OwningOpRef<ModuleOp> mlirGen(MLIRContext &context, const Program &program,
                              const SourceLocations &locations) {
  return MLIRGen(context, locations).run(program);
}
} // namespace mlir::kina
