//===- CInterface.cpp - The C ABI wrappers of a .so -----------------------===//
#include "CInterface.h"

#include "Kina/ABI/ABI.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"

using namespace mlir;
using mlir::kina::FunctionSignature;
using mlir::kina::ModuleSignature;

/// In `wrapper`: when a buffer the call writes overlaps another
/// (kina_buffers_overlap, lib/Runtime/Buffers.c), return
/// KINA_STATUS_BUFFERS_OVERLAP; continue in a new block otherwise.
static void refuseOverlaps(llvm::Module &module, llvm::IRBuilder<> &b,
                           const FunctionSignature &sig,
                           llvm::Function *wrapper) {
  llvm::LLVMContext &ctx = module.getContext();
  SmallVector<llvm::Constant *> bytes, written;
  auto add = [&](const mlir::kina::TensorSignature &tensor, bool writes) {
    bytes.push_back(b.getInt64(tensor.numBytes()));
    written.push_back(b.getInt8(writes));
  };
  for (unsigned i = 0; i < sig.params.size(); ++i)
    add(sig.params[i], sig.isDonated(i));
  for (const mlir::kina::TensorSignature &result : sig.results)
    if (!result.reuses)
      add(result, true);
  for (const mlir::kina::Probe &probe : sig.probes)
    add(probe.tensor, true);
  auto constantArray = [&](llvm::Type *element,
                           ArrayRef<llvm::Constant *> values) {
    auto *type = llvm::ArrayType::get(element, values.size());
    auto *global = new llvm::GlobalVariable(
        module, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(type, values));
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return global;
  };
  unsigned count = bytes.size();
  llvm::Value *buffers =
      b.CreateAlloca(b.getPtrTy(), b.getInt32(count), "buffers");
  for (unsigned i = 0; i < count; ++i)
    b.CreateStore(wrapper->getArg(i),
                  b.CreateConstInBoundsGEP1_64(b.getPtrTy(), buffers, i));
  llvm::FunctionCallee check = module.getOrInsertFunction(
      "kina_buffers_overlap",
      llvm::FunctionType::get(
          b.getInt32Ty(),
          {b.getPtrTy(), b.getPtrTy(), b.getPtrTy(), b.getInt32Ty()}, false));
  llvm::Value *overlap = b.CreateCall(
      check, {buffers, constantArray(b.getInt64Ty(), bytes),
              constantArray(b.getInt8Ty(), written), b.getInt32(count)});
  auto *refuse = llvm::BasicBlock::Create(ctx, "overlap", wrapper);
  auto *call = llvm::BasicBlock::Create(ctx, "call", wrapper);
  b.CreateCondBr(b.CreateIsNotNull(overlap), refuse, call);
  b.SetInsertPoint(refuse);
  b.CreateRet(b.getInt32(KINA_STATUS_BUFFERS_OVERLAP));
  b.SetInsertPoint(call);
}

/// `int32_t kina_NAME(const T *p..., R *out...)` around each lowered
/// function `NAME(ptr p..., ptr out...) -> void | i1` (one output per
/// result but those that reuse a parameter's buffer, then one per probe;
/// the i1 is "all gather ids were in range"), which first refuses
/// buffers that overlap where the call writes; for the per-device form of
/// NAME, `int32_t kina_spmd_NAME(const struct kina_device *device, ...)`,
/// which tells the runtime which device runs (lib/Runtime/Collectives.c)
/// and returns the status every device agrees on. Each also gets a packed entry
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
    if (!sig.isDonated(i))
      wrapper->addParamAttr(leading + i, llvm::Attribute::ReadOnly);
  }
  unsigned output = leading + sig.params.size();
  for (unsigned i = 0; i < sig.results.size(); ++i)
    if (!sig.results[i].reuses)
      wrapper->getArg(output++)->setName(
          sig.results.size() == 1 ? "out" : "out" + Twine(i));
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  auto runtime = [&](StringRef name, llvm::Type *result, llvm::Type *arg) {
    return module.getOrInsertFunction(
        name, llvm::FunctionType::get(result, {arg}, false));
  };
  // Per-device forms are called by Kina's runtimes on buffers they
  // allocate; a check there could fail on one device and leave the others
  // waiting in a collective.
  if (!perDevice)
    refuseOverlaps(module, b, sig, wrapper);
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
      perDevice ? mlir::kina::packedDeviceEntrySymbol(sig.name)
                : mlir::kina::packedEntrySymbol(sig.name),
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
  auto *json = b.CreateGlobalString(mlir::kina::renderSignatureJson(signature),
                                    "kina.signature", 0, &module);
  json->setLinkage(llvm::GlobalValue::PrivateLinkage);
  auto *getter = llvm::Function::Create(
      llvm::FunctionType::get(b.getPtrTy(), false),
      llvm::GlobalValue::ExternalLinkage, KINA_SIGNATURE_SYMBOL, module);
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", getter));
  b.CreateRet(json);
  return success();
}

