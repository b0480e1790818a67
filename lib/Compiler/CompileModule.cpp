//===- CompileModule.cpp - A kina module to a shared object ---------------===//
//
// The compile driver: which forms a module is exported as, the pipelines
// that lower them (Kina/Pipelines), and the back end's steps
// (Kina/Target). Diagnostics carry the stage they come from.
//
//===----------------------------------------------------------------------===//

#include "Kina/Compiler/CompileModule.h"

#include "Kina/Pipelines/ExportedForms.h"
#include "Kina/Pipelines/Pipelines.h"
#include "Kina/Target/LLVMIR.h"
#include "Kina/Target/ObjectFile.h"
#include "Kina/Target/Optimize.h"
#include "Kina/Target/SharedObject.h"
#include "Kina/Target/TargetMachine.h"

#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/LLVMContext.h"

using namespace mlir;
using namespace mlir::kina;

namespace {
/// Adds "while <stage>" to every error emitted in its scope.
class StageScope {
public:
  StageScope(MLIRContext *context, StringRef stage)
      : handler(context, [stage](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            diag.attachNote() << "while " << stage;
          return failure(); // let the next handler print it
        }) {}

private:
  ScopedDiagnosticHandler handler;
};
} // namespace

/// A split reverseMode `G` (`split=true`) is exported as G_forward and
/// G_backward (with `inputs=[...]`: G_input and G_weight), whose types only
/// differentiation gives: `declared` (the
/// program's functions as written) takes them from `exported`.
static void replaceSplitReverseModes(ModuleSignature &declared,
                                     const ModuleSignature &exported) {
  auto find = [&](const std::string &name) -> const FunctionSignature * {
    for (const FunctionSignature &f : exported.functions)
      if (f.name == name)
        return &f;
    return nullptr;
  };
  std::vector<FunctionSignature> functions;
  for (FunctionSignature &f : declared.functions) {
    const FunctionSignature *forward = find(f.name + "_forward");
    if (find(f.name) || !forward) {
      functions.push_back(std::move(f));
      continue;
    }
    // G_forward, then G_backward or G_input and G_weight.
    functions.push_back(*forward);
    for (const char *suffix : {"_backward", "_input", "_weight"})
      if (const FunctionSignature *part = find(f.name + suffix))
        functions.push_back(*part);
  }
  declared.functions = std::move(functions);
}

static std::string printed(Operation *op, const CompileOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, printingFlags(options.printLocations));
  return text;
}

FailureOr<std::string>
mlir::kina::compileToObject(ModuleOp kinaModule, const CompileOptions &options,
                            CompileArtifacts *artifacts) {
  MLIRContext *context = kinaModule.getContext();
  Location loc = kinaModule.getLoc();
  CompileArtifacts local;
  CompileArtifacts &out = artifacts ? *artifacts : local;
  out.kinaIR = printed(kinaModule, options);

  std::optional<mlir::kina::CPUDescription> cpu =
      mlir::kina::describeCPU(options.targetCPU);
  if (!cpu)
    return emitError(loc) << "unknown target CPU '" << options.targetCPU
                          << "'; known: " << mlir::kina::describableCPUNames();
  bool host = options.targetCPU == "host";
  std::vector<mlir::kina::TunedMatmul> tuned;
  if (!options.matmulTuning.empty()) {
    llvm::Expected<std::vector<mlir::kina::TunedMatmul>> read =
        mlir::kina::readMatmulTuning(options.matmulTuning, *cpu);
    if (!read)
      return emitError(loc) << llvm::toString(read.takeError());
    tuned = std::move(*read);
  }
  FailureOr<ModuleSignature> signature = getModuleSignature(kinaModule);
  if (failed(signature))
    return failure();

  DialectRegistry registry;
  registerPipelineDependencies(registry);
  context->appendDialectRegistry(registry);
  OwningOpRef<ModuleOp> module;
  {
    StageScope stage(context, "building the host and per-device forms (reverse "
                           "mode, automatic sharding, propagation, "
                           "partitioning)");
    ExportedStages stages;
    FailureOr<OwningOpRef<ModuleOp>> exported =
        buildExportedForms(kinaModule, options.probes, &stages,
                           options.printLocations, options.autoShard);
    if (failed(exported))
      return failure();
    out.propagatedIR = std::move(stages.propagated);
    out.hostIR = std::move(stages.host);
    out.spmdIR = std::move(stages.spmd);
    out.records = std::move(stages.records);
    out.autoShard = std::move(stages.autoShard);
    module = std::move(*exported);
    // The host functions as the program declares them (parameter names,
    // entry) and the per-device forms of the mesh-placed ones; with
    // probes, all of it as exported.
    FailureOr<ModuleSignature> exportedSignature = getModuleSignature(*module);
    if (failed(exportedSignature))
      return failure();
    // A per-device program has no host entries.
    if (options.probes || isPerDeviceProgram(kinaModule)) {
      signature = exportedSignature;
    } else {
      signature->mesh = exportedSignature->mesh;
      signature->devices = exportedSignature->devices;
      replaceSplitReverseModes(*signature, *exportedSignature);
    }
  }
  out.signature = *signature;
  {
    StageScope stage(context, "lowering kina to linalg (--kina-to-linalg)");
    PassManager pm(context);
    buildOneDeviceToLinalgPipeline(pm);
    if (failed(pm.run(*module)))
      return failure();
  }
  out.linalgIR = printed(*module, options);
  {
    StageScope stage(context, "lowering linalg to the LLVM dialect");
    PassManager pm(context);
    buildLinalgToLLVMPipeline(pm, *cpu, tuned);
    // Line tables: the translation gives an op's location to the LLVM IR
    // only in a function with a debug-info subprogram.
    if (options.printLocations)
      pm.addPass(LLVM::createDIScopeForLLVMFuncOpPass());
    if (failed(pm.run(*module)))
      return failure();
  }

  std::string codegenStage =
      "generating code for the " + (host ? "host CPU" : "CPU " + cpu->name);
  StageScope stage(context, codegenStage);
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(*cpu, host, loc);
  if (!machine)
    return failure();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateToLLVMIR(*module, *signature, *machine, llvmContext);
  if (!llvmModule)
    return failure();
  optimizeModule(*llvmModule, *machine, options.sanitizeAddress);
  {
    llvm::raw_string_ostream os(out.llvmIR);
    llvmModule->print(os, nullptr);
  }
  return emitObject(*llvmModule, *machine, loc);
}

LogicalResult mlir::kina::compileToSharedObject(ModuleOp kinaModule,
                                                StringRef path,
                                                const CompileOptions &options,
                                                CompileArtifacts *artifacts) {
  FailureOr<std::string> object =
      compileToObject(kinaModule, options, artifacts);
  if (failed(object))
    return failure();
  StageScope stage(kinaModule.getContext(), "linking the shared object");
  return linkSharedObject(*object, path, kinaModule.getLoc());
}

