//===- CInterface.cpp - The C ABI wrappers of a .so -----------------------===//
#include "CInterface.h"

#include "Kina/API/ABI.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/IR/IRBuilder.h"

using namespace mlir;
using ::kina::FunctionSignature;
using ::kina::ModuleSignature;

/// `int32_t kina_NAME(const T *p..., R *out...)` around each lowered
/// function `NAME(ptr p..., ptr out...) -> void | i1` (one output per
/// result, then one per probe; the i1 is "all gather ids were in
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
  unsigned outputs = sig.numOutputs();
  if (!inner || inner->arg_size() != sig.params.size() + outputs) {
    emitError(loc) << "internal error: lowered '" << sig.callee
                   << "' does not take (inputs..., outputs..., probes...)";
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
  for (unsigned i = 0; i < sig.results.size(); ++i)
    wrapper->getArg(leading + sig.params.size() + i)
        ->setName(sig.results.size() == 1 ? "out" : "out" + Twine(i));
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

LogicalResult mlir::kina::addCInterface(llvm::Module &module,
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

