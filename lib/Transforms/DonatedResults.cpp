//===- DonatedResults.cpp - Results written into donated arguments --------===//
//
// A result declared `@reuses(p)` (`kina.reuses` on the function result) is
// returned in parameter p's buffer, as JAX's donated arguments are: a
// training step overwrites the weights and moments it was given instead
// of keeping a second copy. Two passes around One-Shot Bufferize: before,
// the result's destination becomes the argument, so that the analysis
// writes it in place wherever no later read forbids it; after, the result
// leaves the function's signature, copied into the argument where the
// analysis could not write it there.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"
#include "FreshCopy.h"
#include "ViewedBuffer.h"
#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::kina {
#define GEN_PASS_DEF_DONATEDESTINATIONSPASS
#define GEN_PASS_DEF_DROPDONATEDRESULTSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using mlir::kina::freshCopy;
using mlir::kina::KinaDialect;

/// (result, argument) for each result of `fn` marked `kina.reuses`.
static SmallVector<std::pair<unsigned, unsigned>> donatedResults(func::FuncOp fn) {
  SmallVector<std::pair<unsigned, unsigned>> pairs;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
    if (auto arg = fn.getResultAttrOfType<IntegerAttr>(
            i, KinaDialect::ReusesAttrHelper::getNameStr()))
      pairs.push_back({i, unsigned(arg.getInt())});
  return pairs;
}

/// The destination operand tied to `value`, the result of a linalg op (any
/// destination-style op), an scf.forall or an scf.for, or the tensor a
/// runtime call filled (a collective's result, `to_tensor` of the buffer
/// of a tensor: an all_gather's insert_slice of its own block); null
/// otherwise.
static OpOperand *tiedDestination(Value value) {
  if (auto filled = value.getDefiningOp<bufferization::ToTensorOp>())
    if (auto buffer =
            filled.getBuffer().getDefiningOp<bufferization::ToBufferOp>())
      value = buffer.getTensor();
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return nullptr;
  Operation *op = result.getOwner();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.getTiedOpOperand(result);
  if (auto forall = dyn_cast<scf::ForallOp>(op))
    return forall.getTiedOpOperand(result);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return loop.getTiedLoopInit(result);
  return nullptr;
}

/// After bufferization: `value` through memref.cast to what it casts.
static Value withoutCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

namespace {
struct DonateDestinationsPass
    : mlir::kina::impl::DonateDestinationsPassBase<DonateDestinationsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
      for (auto [result, arg] : donatedResults(fn)) {
        Value value = ret.getOperand(result);
        while (OpOperand *destination = tiedDestination(value)) {
          if (destination->get().getDefiningOp<tensor::EmptyOp>()) {
            destination->set(fn.getArgument(arg));
            break;
          }
          value = destination->get();
        }
      }
    }
  }
};

struct DropDonatedResultsPass
    : mlir::kina::impl::DropDonatedResultsPassBase<DropDonatedResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : module.getOps<func::FuncOp>()) {
      SmallVector<std::pair<unsigned, unsigned>> donated = donatedResults(fn);
      if (donated.empty() || fn.isExternal())
        continue;
      auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
      OpBuilder b(ret);
      Location loc = ret.getLoc();
      llvm::BitVector dropped(fn.getNumResults());
      for (auto [result, arg] : donated) {
        dropped.set(result);
        Value buffer = fn.getArgument(arg);
        Value value = ret.getOperand(result);
        if (withoutCasts(value) == buffer)
          continue;
        // Copied in at the end: first save what else is returned as a
        // view of the argument (its old value), and the value itself if
        // it is one.
        auto saved = [&](Value view) { return freshCopy(b, loc, view); };
        for (OpOperand &other : ret->getOpOperands())
          if (other.getOperandNumber() != result &&
              isa<MemRefType>(other.get().getType()) &&
              mlir::kina::viewedBuffer(other.get()) == buffer)
            other.set(saved(other.get()));
        if (mlir::kina::viewedBuffer(value) == buffer)
          value = saved(value);
        memref::CopyOp::create(b, loc, value, buffer);
      }
      // A call passes a copy of each donated argument (the copy in, above,
      // writes a buffer that the bufferization believed only read) and
      // sees the result in it.
      std::optional<SymbolTable::UseRange> uses = fn.getSymbolUses(module);
      for (SymbolTable::SymbolUse use : uses ? *uses : SymbolTable::UseRange({})) {
        auto call = dyn_cast<func::CallOp>(use.getUser());
        if (!call) {
          use.getUser()->emitError("kina-drop-donated-results: '")
              << fn.getName() << "' is used other than by calls";
          return signalPassFailure();
        }
        OpBuilder at(call);
        for (auto [result, arg] : donated) {
          Value copy = freshCopy(at, call.getLoc(), call.getOperand(arg));
          call->setOperand(arg, copy);
          call.getResult(result).replaceAllUsesWith(copy);
        }
        SmallVector<Type> kept;
        for (unsigned i = 0; i < call.getNumResults(); ++i)
          if (!dropped.test(i))
            kept.push_back(call.getResult(i).getType());
        auto replacement = func::CallOp::create(at, call.getLoc(), fn.getName(),
                                                kept, call.getOperands());
        unsigned next = 0;
        for (unsigned i = 0; i < call.getNumResults(); ++i)
          if (!dropped.test(i))
            call.getResult(i).replaceAllUsesWith(replacement.getResult(next++));
        call.erase();
      }
      ret->eraseOperands(dropped);
      if (failed(fn.eraseResults(dropped)))
        return signalPassFailure();
    }
  }
};
} // namespace
