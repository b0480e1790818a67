//===- KinaToLinalgPass.cpp - The --kina-convert-to-linalg pass -----------===//
#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Conversion/Passes.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kina {
#define GEN_PASS_DEF_CONVERTKINATOLINALGPASS
#include "Kina/Conversion/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

/// The lowering is of code one device runs: host programs, and the
/// per-device (`@local`) functions of `--kina-partition=form=spmd`. Fails
/// at the first value still placed on the mesh.
static LogicalResult checkOneDevice(ModuleOp module) {
  auto onMesh = [](Type type) {
    auto tensor = dyn_cast<KinaTensorType>(type);
    return tensor && !tensor.getPlacement().isHost() &&
           !tensor.getPlacement().isLocal();
  };
  Operation *where = nullptr;
  std::string what;
  module.walk([&](Operation *op) {
    SmallVector<Type> types(op->getResultTypes());
    for (Region &region : op->getRegions())
      llvm::append_range(types, region.getArgumentTypes());
    auto placed = llvm::find_if(types, onMesh);
    if (placed == types.end())
      return WalkResult::advance();
    where = op;
    what = "this value is placed " +
           cast<KinaTensorType>(*placed).getPlacement().str();
    return WalkResult::interrupt();
  });
  if (!where)
    return success();
  return where->emitError("--kina-to-linalg lowers code that one device runs "
                          "(@host, or @local per device); ")
         << what
         << ": run --kina-propagate-sharding and --kina-partition first (the "
            "--kina-to-llvm pipeline and --kina-to-so do)";
}

namespace {
struct ConvertKinaToLinalgPass
    : mlir::kina::impl::ConvertKinaToLinalgPassBase<ConvertKinaToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (failed(checkOneDevice(module)))
      return signalPassFailure();
    KinaTypeConverter converter;
    RewritePatternSet patterns(context);
    populateKinaToLinalgPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*context);
    target.addIllegalDialect<KinaDialect>();
    target.addLegalOp<ModuleOp>();
    // The upstream dialects the patterns produce are the output.
    target.addLegalDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                           linalg::LinalgDialect, math::MathDialect,
                           memref::MemRefDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    // Collectives read the mesh while they lower; it goes afterwards.
    target.addLegalOp<MeshOp, PipelineOp>();
    // The gather's run-time check, which kina-asserts-to-status turns
    // into a status.
    target.addLegalOp<cf::AssertOp>();
    // func ops stay, once their types carry no kina tensor.
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::CallOp, func::ReturnOp>(
        [&](Operation *op) { return converter.isLegal(op); });

    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // Values left unused (a weight broadcast that no matmul reads any
    // more): drop them, users before producers.
    module.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
      if (isOpTriviallyDead(op))
        op->erase();
    });
  }
};
} // namespace
