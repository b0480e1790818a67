//===- ExportedForms.cpp - What a shared object is generated from ---------===//
//
// A program without a mesh is exported as it is. A program with one is
// exported twice: as its host form (every function keeps its ABI on
// global tensors) and, for N-device execution, as the per-device form of
// each mesh-placed function, on local blocks with collectives, marked
// `kina.per_device` with the function's name.
//
//===----------------------------------------------------------------------===//

#include "Kina/Pipelines/ExportedForms.h"

#include "Kina/AutoShard/Passes.h"
#include "Kina/AutoShard/Predict.h"
#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Differentiate/Passes.h"
#include "Kina/Sharding/Cost.h"
#include "Kina/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kina;

/// `pass` run on a copy of `module`.
static FailureOr<OwningOpRef<ModuleOp>> runOnCopy(ModuleOp module,
                                                  std::unique_ptr<Pass> pass) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  PassManager pm(module.getContext());
  pm.addPass(std::move(pass));
  if (failed(pm.run(*copy)))
    return failure();
  return copy;
}

static std::unique_ptr<Pass> partition(StringRef form) {
  mlir::kina::PartitionPassOptions options;
  options.form = form.str();
  return mlir::kina::createPartitionPass(options);
}

/// Marks every op of the mesh-placed functions of `module` that computes a
/// value of the program (not a constant, not a collective or reshard the
/// propagation added) as probe i, with its global type.
static bool isOnMesh(func::FuncOp fn) {
  return anyPlacement(fn.getFunctionType(),
                      [](PlacementAttr p) { return p.isMesh(); });
}

/// A called function is probed too: returnProbes widens its calls (host
/// callers, an @main, are left out of the probed forms).
static void tagProbes(ModuleOp module) {
  MLIRContext *context = module.getContext();
  KinaDialect::ProbeAttrHelper probe(context);
  KinaDialect::ProbeGlobalAttrHelper probeGlobal(context);
  int64_t next = 0;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!isOnMesh(fn))
      continue;
    fn.walk([&](Operation *op) {
      if (op->getNumResults() != 1 || isa<ConstantOp, ReshardOp>(op) ||
          isa<CollectiveOpInterface>(op) ||
          !isa<KinaTensorType>(op->getResult(0).getType()))
        return;
      probe.setAttr(op,
                    IntegerAttr::get(IntegerType::get(context, 64), next++));
      probeGlobal.setAttr(op, TypeAttr::get(op->getResult(0).getType()));
    });
  }
}

/// The unsharded program: every value on the host, whole; the collectives
/// and reshards propagation added (identities on global values) dropped.
static void dropSharding(ModuleOp module) {
  MLIRContext *context = module.getContext();
  auto onHost = [&](Type type) -> Type {
    auto tensor = dyn_cast<KinaTensorType>(type);
    if (!tensor)
      return type;
    return KinaTensorType::get(context, tensor.getShape(),
                               tensor.getElementType(),
                               PlacementAttr::getHost(context));
  };
  module.walk([&](Operation *op) {
    if (isa<ReshardOp>(op) || isa<CollectiveOpInterface>(op)) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
      return;
    }
    for (Value result : op->getResults())
      result.setType(onHost(result.getType()));
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments())
        arg.setType(onHost(arg.getType()));
  });
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto type = fn.getFunctionType();
    fn.setType(FunctionType::get(
        context, llvm::map_to_vector(type.getInputs(), onHost),
        llvm::map_to_vector(type.getResults(), onHost)));
  }
  for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
    mesh.erase();
}

/// Every probed value of each function becomes an extra result, in probe
/// order, after the function's own.
static void returnProbes(ModuleOp module) {
  KinaDialect::ProbeAttrHelper probe(module.getContext());
  for (auto fn : module.getOps<func::FuncOp>()) {
    SmallVector<std::pair<int64_t, Value>> probes;
    fn.walk([&](Operation *op) {
      if (IntegerAttr id = probe.getAttr(op))
        probes.push_back({id.getInt(), op->getResult(0)});
    });
    if (probes.empty())
      continue;
    llvm::sort(probes, llvm::less_first());
    auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
    // A value may be returned twice (a result and its probe):
    // kina-distinct-results gives each its own buffer after bufferization.
    for (auto &[id, value] : probes)
      ret->insertOperands(ret->getNumOperands(), value);
    fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                                 ret->getOperandTypes()));
  }
  // A call of a probed function gets its probes too, and leaves them: the
  // caller uses the results it had (its own probe attributes kept).
  SymbolTable symbols(module);
  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) { calls.push_back(call); });
  for (func::CallOp call : calls) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.getNumResults() == call.getNumResults())
      continue;
    OpBuilder builder(call);
    auto widened = func::CallOp::create(builder, call.getLoc(), callee,
                                        call.getOperands());
    widened->setDiscardableAttrs(call->getDiscardableAttrDictionary());
    call.replaceAllUsesWith(
        widened.getResults().take_front(call.getNumResults()));
    call.erase();
  }
}

/// Results returned through output buffers, not a parameter's: the
/// simulator's probed forms (the divergence report compares every value,
/// and its inputs are reused across the two forms it runs).
static void dropReuses(ModuleOp module) {
  StringRef reuses = KinaDialect::ReusesAttrHelper::getNameStr();
  for (auto fn : module.getOps<func::FuncOp>())
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      fn.removeResultAttr(i, StringAttr::get(fn.getContext(), reuses));
}

/// The symbol of the per-device form of NAME is `spmd.NAME`: the `.` keeps
/// it apart from every kina function name. Nothing reads it back; the form
/// is known by its `kina.per_device` attribute.
static constexpr llvm::StringLiteral kPerDeviceSymbolPrefix = "spmd.";

/// Moves the functions of `from`, per-device forms, into `into`: each
/// renamed `spmd.NAME` and marked `kina.per_device = "NAME"`.
static LogicalResult moveAsPerDevice(ModuleOp from, ModuleOp into) {
  KinaDialect::PerDeviceAttrHelper perDevice(from.getContext());
  for (auto fn : llvm::to_vector(from.getOps<func::FuncOp>())) {
    StringAttr of = fn.getNameAttr();
    auto name = StringAttr::get(fn.getContext(),
                                kPerDeviceSymbolPrefix + of.getValue());
    if (failed(SymbolTable::replaceAllSymbolUses(fn, name, from)))
      return fn.emitError("internal error: cannot rename to ") << name;
    fn.setName(name);
    perDevice.setAttr(fn, of);
  }
  for (Operation &op : llvm::make_early_inc_range(*from.getBody()))
    op.moveBefore(into.getBody(), into.getBody()->end());
  return success();
}

OpPrintingFlags mlir::kina::printingFlags(bool locations) {
  OpPrintingFlags flags;
  if (locations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false)
        .useLocalScope();
  return flags;
}

bool mlir::kina::isPerDeviceProgram(ModuleOp program) {
  return llvm::any_of(program.getOps<func::FuncOp>(), [](func::FuncOp fn) {
    return anyPlacement(fn.getFunctionType(),
                        [](PlacementAttr p) { return p.isLocal(); });
  });
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::kina::buildExportedForms(ModuleOp program, bool probes,
                               ExportedStages *stages, bool locations,
                               const AutoShardOptions &autoShard) {
  ExportedStages unused;
  ExportedStages &out = stages ? *stages : unused;
  auto print = [locations](ModuleOp module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, printingFlags(locations));
    return text;
  };
  // reverseMode functions become ordinary kina functions first.
  FailureOr<OwningOpRef<ModuleOp>> differentiated =
      runOnCopy(program, createDifferentiatePass());
  if (failed(differentiated))
    return failure();
  // Pipeline declarations are for the runtime, which reads them from the
  // kina IR (kina.pipelining); the forms have no use for them.
  for (PipelineOp pipeline : llvm::make_early_inc_range(
           (*differentiated)->getOps<PipelineOp>()))
    pipeline.erase();
  // Functions with `@auto` parameters or results are placed by the
  // solver before the propagation places the rest.
  if (hasAutoPlacements(**differentiated)) {
    differentiated = runOnCopy(
        **differentiated, createAutoShardPass(autoShard, out.autoShard));
    if (failed(differentiated))
      return failure();
    for (const AutoShardReport &report : out.autoShard)
      out.records.collectives.insert(out.records.collectives.end(),
                                     report.inserted.begin(),
                                     report.inserted.end());
  }
  if (isPerDeviceProgram(program)) {
    if (probes)
      return program.emitError(
          "a per-device (@local) program has no unsharded form to compare "
          "with: compile the global program for the divergence report");
    out.spmd = print(**differentiated);
    OwningOpRef<ModuleOp> exported(ModuleOp::create(program.getLoc()));
    if (failed(moveAsPerDevice(**differentiated, *exported)))
      return failure();
    return exported;
  }
  // Propagated once: its remarks are said once.
  FailureOr<OwningOpRef<ModuleOp>> propagated =
      runOnCopy(**differentiated, createPropagateShardingPass(out.records));
  // (No CSE here: the propagation converts a value once for all the ops
  // that need it, and the gathers a `reshard_after_forward` function
  // repeats in its backward must stay.)
  if (failed(propagated))
    return failure();
  if (!probes)
    for (auto fn : (*propagated)->getOps<func::FuncOp>()) {
      if (failed(remarkCost(fn, &out.records)))
        return failure();
      // Priced by the model automatic sharding solves with, so that a
      // hand-written plan and a solved one compare.
      if (!out.records.costs.empty() &&
          out.records.costs.back().function == fn.getName())
        out.records.costs.back().predictedSeconds =
            predictSeconds(fn, autoShard.machine);
    }
  out.propagated = print(**propagated);
  if (probes && MeshOp::lookup(program)) {
    tagProbes(**propagated);
    // The host functions are the unsharded program, probes returned.
    OwningOpRef<ModuleOp> unsharded(cast<ModuleOp>((*propagated)->clone()));
    // Host functions (an @main) call the probed ones; they are not needed.
    for (auto fn : llvm::to_vector(unsharded->getOps<func::FuncOp>()))
      if (!isOnMesh(fn))
        fn.erase();
    dropSharding(*unsharded);
    returnProbes(*unsharded);
    dropReuses(*unsharded);
    FailureOr<OwningOpRef<ModuleOp>> devices =
        runOnCopy(**propagated, partition("spmd"));
    if (failed(devices))
      return failure();
    returnProbes(**devices);
    dropReuses(**devices);
    if (failed(moveAsPerDevice(**devices, *unsharded)))
      return failure();
    return unsharded;
  }
  FailureOr<OwningOpRef<ModuleOp>> host =
      runOnCopy(**propagated, partition("host"));
  if (succeeded(host))
    out.host = print(**host);
  if (failed(host) || !MeshOp::lookup(program))
    return host;
  FailureOr<OwningOpRef<ModuleOp>> devices =
      runOnCopy(**propagated, partition("spmd"));
  if (failed(devices))
    return failure();
  out.spmd = print(**devices);
  // The host form has no mesh left; the devices' brings it back for the
  // collectives.
  if (failed(moveAsPerDevice(**devices, **host)))
    return failure();
  return host;
}
