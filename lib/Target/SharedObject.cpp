//===- SharedObject.cpp - kina module to a shared object ------------------===//
//
// kina -> linalg -> LLVM dialect (Kina's pipeline), then LLVM IR with the C
// ABI wrappers and the signature added, optimized for the host CPU,
// emitted as an object in process and linked by ld.lld into a `.so` that
// needs only libc and libm. Diagnostics carry the stage they come from.
//
//===----------------------------------------------------------------------===//

#include "Kina/Target/SharedObject.h"

#include "Kina/Config.h"
#include "Kina/Pipelines/Pipelines.h"
#include "Kina/Target/OutlineLoops.h"
#include "Kina/Target/Runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Instrumentation/AddressSanitizer.h"

using namespace mlir;
using namespace mlir::kina;
using ::kina::FunctionSignature;
using ::kina::ModuleSignature;

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

static std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

/// A target machine for `cpu`: the host's own features for the host, else
/// those LLVM gives the named CPU.
static std::unique_ptr<llvm::TargetMachine>
targetMachine(const ::kina::CPUDescription &cpu, bool host, Location loc) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << "no LLVM target for " << triple.str() << ": " << error;
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  if (host)
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.getKey(), feature.getValue());
  // .init_array/.fini_array, which glibc runs at dlopen/dlclose: the
  // runtime's destructors (stopping the thread pool, dropping its pthread
  // keys) must run before its code is unmapped. The default is the old
  // .ctors/.dtors, which only crtbegin.o runs, and the link has none.
  llvm::TargetOptions options;
  options.UseInitArray = true;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu.name, features.getString(), options,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

/// `int32_t kina_NAME(const T *p..., R *out)` around each lowered function
/// `NAME(ptr p..., ptr out) -> void | i1` (the i1 is "all gather ids were in
/// range"); for a per-device form `spmd.NAME`, `int32_t
/// kina_spmd_NAME(const struct kina_device *device, ...)`, which tells the
/// runtime which device runs (lib/Runtime/Collectives.c) and returns the
/// status every device agrees on. Each also gets a packed entry
/// `int32_t (void **args)`, for embedders that call functions of any arity
/// (the Python bindings).
static LogicalResult addWrapper(llvm::Module &module,
                                const FunctionSignature &sig, bool perDevice,
                                Location loc) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Function *inner = module.getFunction(sig.callee);
  unsigned outputs = 1 + sig.probes.size();
  if (!inner || inner->arg_size() != sig.params.size() + outputs) {
    emitError(loc) << "internal error: lowered '" << sig.callee
                   << "' does not take (inputs..., out, probes...)";
    return failure();
  }
  unsigned leading = perDevice ? 1 : 0; // the device
  unsigned arity = leading + sig.params.size() + outputs;
  auto *type = llvm::FunctionType::get(
      b.getInt32Ty(), SmallVector<llvm::Type *>(arity, b.getPtrTy()), false);
  auto *wrapper = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage,
      (perDevice ? KINA_SPMD_PREFIX : KINA_EXPORT_PREFIX) + sig.name, module);
  for (unsigned i = 0; i < arity; ++i)
    wrapper->addParamAttr(i, llvm::Attribute::NoUndef);
  if (perDevice)
    wrapper->getArg(0)->setName("device");
  for (unsigned i = 0; i < sig.params.size(); ++i) {
    wrapper->getArg(leading + i)->setName(sig.params[i].name);
    wrapper->addParamAttr(leading + i, llvm::Attribute::ReadOnly);
  }
  wrapper->getArg(leading + sig.params.size())->setName("out");
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  auto runtime = [&](StringRef name, llvm::Type *result, llvm::Type *arg) {
    return module.getOrInsertFunction(
        name, llvm::FunctionType::get(result, {arg}, false));
  };
  if (perDevice)
    b.CreateCall(runtime("kina_device_enter", b.getVoidTy(), b.getPtrTy()),
                 {wrapper->getArg(0)});
  SmallVector<llvm::Value *> args;
  for (unsigned i = leading; i < arity; ++i)
    args.push_back(wrapper->getArg(i));
  llvm::Value *ok = b.CreateCall(inner, args);
  llvm::Value *status =
      inner->getReturnType()->isVoidTy()
          ? b.getInt32(KINA_STATUS_OK)
          : b.CreateSelect(ok, b.getInt32(KINA_STATUS_OK),
                           b.getInt32(KINA_STATUS_GATHER_OUT_OF_RANGE));
  if (perDevice)
    status = b.CreateCall(
        runtime("kina_device_leave", b.getInt32Ty(), b.getInt32Ty()), {status});
  b.CreateRet(status);

  auto *packed = llvm::Function::Create(
      llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy()}, false),
      llvm::GlobalValue::ExternalLinkage,
      perDevice ? ::kina::packedDeviceEntrySymbol(sig.name)
                : ::kina::packedEntrySymbol(sig.name),
      module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", packed));
  SmallVector<llvm::Value *> unpacked;
  for (unsigned i = 0; i < arity; ++i)
    unpacked.push_back(b.CreateLoad(
        b.getPtrTy(),
        b.CreateConstInBoundsGEP1_64(b.getPtrTy(), packed->getArg(0), i)));
  b.CreateRet(b.CreateCall(wrapper, unpacked));
  return success();
}

/// The wrappers of every function and the signature JSON.
static LogicalResult addCInterface(llvm::Module &module,
                                   const ModuleSignature &signature,
                                   Location loc) {
  std::vector<llvm::Function *> lowered;
  for (llvm::Function &fn : module)
    if (!fn.isDeclaration())
      lowered.push_back(&fn);
  for (const FunctionSignature &sig : signature.functions)
    if (failed(addWrapper(module, sig, /*perDevice=*/false, loc)))
      return failure();
  for (const FunctionSignature &sig : signature.devices)
    if (failed(addWrapper(module, sig, /*perDevice=*/true, loc)))
      return failure();
  // Only the kina_* symbols are the interface; `main` must not leak.
  for (llvm::Function *fn : lowered)
    fn->setLinkage(llvm::GlobalValue::InternalLinkage);

  llvm::IRBuilder<> b(module.getContext());
  auto *json = b.CreateGlobalString(::kina::renderSignatureJson(signature),
                                    "kina.signature", 0, &module);
  json->setLinkage(llvm::GlobalValue::PrivateLinkage);
  auto *getter = llvm::Function::Create(
      llvm::FunctionType::get(b.getPtrTy(), false),
      llvm::GlobalValue::ExternalLinkage, KINA_SIGNATURE_SYMBOL, module);
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", getter));
  b.CreateRet(json);
  return success();
}

static void optimize(llvm::Module &module, llvm::TargetMachine &machine,
                     const CompileOptions &options) {
  outlineTopLevelLoops(module);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // No LLVM loop unrolling: the register tiles are unrolled already (in
  // MLIR); LLVM would fully unroll every static-trip-count loop of every
  // op, scalar fallbacks included, which grows a GPT block to hundreds of
  // thousands of instructions and its compile to tens of seconds.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  // LLVM's tuning for recent x86 prefers 256-bit vectors; the matmul
  // register tile is sized for 512-bit registers where they exist.
  if (machine.getMCSubtargetInfo()->checkFeatures("+avx512f"))
    for (llvm::Function &fn : module)
      if (!fn.isDeclaration())
        fn.addFnAttr("prefer-vector-width", "512");
  if (options.sanitizeAddress) {
    for (llvm::Function &fn : module)
      if (!fn.isDeclaration())
        fn.addFnAttr(llvm::Attribute::SanitizeAddress);
    builder.registerOptimizerLastEPCallback([](llvm::ModulePassManager &pm,
                                               llvm::OptimizationLevel,
                                               llvm::ThinOrFullLTOPhase) {
      pm.addPass(llvm::AddressSanitizerPass(llvm::AddressSanitizerOptions()));
    });
  }
  // The outlined loop bodies of a model's repeated blocks are identical
  // but for their names: one copy of each is optimized and emitted.
  builder.registerPipelineStartEPCallback(
      [](llvm::ModulePassManager &pm, llvm::OptimizationLevel) {
        pm.addPass(llvm::MergeFunctionsPass());
      });
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

static FailureOr<std::string>
emitObject(llvm::Module &module, llvm::TargetMachine &machine, Location loc) {
  SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return emitError(loc) << "the host target cannot emit object files";
  codegen.run(module);
  return std::string(buffer.begin(), buffer.end());
}

static LogicalResult link(StringRef object, StringRef output, Location loc) {
  SmallVector<StringRef> args = {
      KINA_LLD_PATH, "-shared",     "--as-needed",
      "-z",          "noexecstack", "-o",
      output,        object,        "-L" KINA_SYSTEM_LIBRARY_DIR,
      "-lm",         "-lc"};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(KINA_LLD_PATH, args, std::nullopt, {},
                                         0, 0, &error);
  if (status != 0)
    return emitError(loc) << "linking with " << KINA_LLD_PATH
                          << " failed (status " << status << ") " << error;
  return success();
}

FailureOr<std::string>
mlir::kina::compileToObject(ModuleOp kinaModule, const CompileOptions &options,
                            CompileArtifacts *artifacts) {
  MLIRContext *context = kinaModule.getContext();
  Location loc = kinaModule.getLoc();
  CompileArtifacts local;
  CompileArtifacts &out = artifacts ? *artifacts : local;
  out.kinaIR = printed(kinaModule);

  std::optional<::kina::CPUDescription> cpu =
      ::kina::describeCPU(options.targetCPU);
  if (!cpu)
    return emitError(loc) << "unknown target CPU '" << options.targetCPU
                          << "'; known: " << ::kina::describableCPUNames();
  bool host = options.targetCPU == "host";
  std::vector<::kina::TunedMatmul> tuned;
  if (!options.matmulTuning.empty()) {
    llvm::Expected<std::vector<::kina::TunedMatmul>> read =
        ::kina::readMatmulTuning(options.matmulTuning, *cpu);
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
    StageScope stage(context, "partitioning over the mesh (--kina-partition)");
    FailureOr<OwningOpRef<ModuleOp>> exported = buildExportedForms(kinaModule, options.probes);
    if (failed(exported))
      return failure();
    module = std::move(*exported);
    // The host functions as the program declares them (parameter names,
    // entry) and the per-device forms of the mesh-placed ones; with
    // probes, all of it as exported.
    FailureOr<ModuleSignature> exportedSignature = getModuleSignature(*module);
    if (failed(exportedSignature))
      return failure();
    if (options.probes) {
      signature = exportedSignature;
    } else {
      signature->mesh = exportedSignature->mesh;
      signature->devices = exportedSignature->devices;
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
  out.linalgIR = printed(*module);
  {
    StageScope stage(context, "lowering linalg to the LLVM dialect");
    PassManager pm(context);
    buildLinalgToLLVMPipeline(pm, *cpu, tuned);
    if (failed(pm.run(*module)))
      return failure();
  }

  std::string codegenStage =
      "generating code for the " + (host ? "host CPU" : "CPU " + cpu->name);
  StageScope stage(context, codegenStage);
  // The per-device arguments' global types (`kina.global`) are in the
  // signature already; LLVM IR has no place for them (it would warn).
  StringAttr global = StringAttr::get(context, "kina.global");
  module->walk([&](LLVM::LLVMFuncOp fn) {
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      fn.removeArgAttr(i, global);
  });
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "kina");
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";
  std::unique_ptr<llvm::TargetMachine> machine =
      targetMachine(*cpu, host, loc);
  if (!machine)
    return failure();
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());
  if (failed(addCInterface(*llvmModule, *signature, loc)) ||
      failed(linkRuntime(*llvmModule, loc)))
    return failure();
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return emitError(loc) << "internal error: invalid LLVM IR";
  optimize(*llvmModule, *machine, options);
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
  Location loc = kinaModule.getLoc();
  StageScope stage(kinaModule.getContext(), "linking the shared object");
  // Object and link in a private directory; the result is copied into
  // place only when complete.
  SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kina", dir))
    return emitError(loc) << "cannot create a temporary directory: "
                          << ec.message();
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  SmallString<128> objectPath(dir), linked(dir);
  llvm::sys::path::append(objectPath, "module.o");
  llvm::sys::path::append(linked, "module.so");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return emitError(loc)
             << "cannot write " << objectPath << ": " << ec.message();
    os << *object;
  }
  if (failed(link(objectPath, linked, loc)))
    return failure();
  if (std::error_code ec = llvm::sys::fs::copy_file(linked, path))
    return emitError(loc) << "cannot write " << path << ": " << ec.message();
  return success();
}
