//===- Pipelines.h - kina to the LLVM dialect -------------------*- C++ -*-===//
//
// The stages every compile runs, composed from Kina's conversion and
// transformation passes and upstream ones. Above both Conversion and
// Transforms; the compiler (Kina/Compiler/CompileModule.h) runs them.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_PIPELINES_PIPELINES_H
#define KINA_PIPELINES_PIPELINES_H

#include "Kina/CPU/CPU.h"
#include "Kina/CPU/MatmulTuning.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kina {

/// `--kina-differentiate`; for mesh-placed programs
/// `--kina-propagate-sharding` and `--kina-partition=form=host`;
/// `--kina-to-linalg` and a canonicalization.
void buildKinaToLinalgPipeline(OpPassManager &pm);

/// `--kina-to-linalg` and a canonicalization, for code one device runs
/// (what buildExportedForms returns).
void buildOneDeviceToLinalgPipeline(OpPassManager &pm);

/// Upstream tensors to the LLVM dialect: tiling and threads, bufferization
/// with caller-owned results (each tensor result becomes a last pointer
/// parameter), loops, and the LLVM dialect with bare-pointer memref
/// arguments. Kernel parameters (the matmul's tiles) are chosen for `cpu`,
/// those of the shapes in `tuned` as measured there.
void buildLinalgToLLVMPipeline(OpPassManager &pm, const CPUDescription &cpu,
                               llvm::ArrayRef<TunedMatmul> tuned = {});

/// Both of the above, for the host CPU: kina to bufferized loops in the
/// LLVM dialect.
void buildKinaToLLVMPipeline(OpPassManager &pm);

/// The dialects and external interface models (bufferization, conversion
/// to LLVM) the pipelines above need; append them to any context that
/// runs the pipelines outside kina-opt.
void registerPipelineDependencies(DialectRegistry &registry);

/// Registers `--kina-to-llvm` (the pipeline above) with the pass registry.
void registerKinaPipelines();

} // namespace mlir::kina

#endif // KINA_PIPELINES_PIPELINES_H
