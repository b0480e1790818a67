//===- Pipelines.h - kina to the LLVM dialect -------------------*- C++ -*-===//
//
// The stages every compile runs, composed from Kina's conversion and
// transformation passes and upstream ones. Above both Conversion and
// Transforms, below Target.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_PIPELINES_PIPELINES_H
#define KINA_PIPELINES_PIPELINES_H

#include "Kina/CPU/CPU.h"
#include "Kina/CPU/MatmulTuning.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kina {

/// For mesh-placed programs `--kina-propagate-sharding` and
/// `--kina-partition=form=host` first; `--kina-to-linalg` and a
/// canonicalization.
void buildKinaToLinalgPipeline(OpPassManager &pm);

/// `--kina-to-linalg` and a canonicalization, for code one device runs
/// (what buildExportedForms returns).
void buildOneDeviceToLinalgPipeline(OpPassManager &pm);

/// The symbol prefix of per-device functions: `spmd.NAME` (a `.` keeps it
/// apart from every kina function name); exported as kina_spmd_NAME.
inline constexpr llvm::StringLiteral kPerDeviceSymbolPrefix = "spmd.";

/// What a shared object is generated from, still in kina: the host form of
/// every function of `program` and, when it declares a mesh, the
/// per-device form (`--kina-partition=form=spmd`) of each mesh-placed
/// function as `spmd.NAME`, with the mesh. Errors are located.
///
/// With `probes` (the simulator's divergence report), the host functions
/// are instead the unsharded program (every placement dropped), and both
/// they and the per-device forms return, after their result, the value of
/// every op of the program that the partitioning keeps: op i carries
/// `kina_probe = i` and `kina_probe_global` (its type with its placement).
FailureOr<OwningOpRef<ModuleOp>> buildExportedForms(ModuleOp program,
                                                    bool probes = false);

/// The attributes of probed ops (see buildExportedForms).
inline constexpr llvm::StringLiteral kProbeAttr = "kina_probe";
inline constexpr llvm::StringLiteral kProbeGlobalAttr = "kina_probe_global";

/// Upstream tensors to the LLVM dialect: tiling and threads, bufferization
/// with caller-owned results (each tensor result becomes a last pointer
/// parameter), loops, and the LLVM dialect with bare-pointer memref
/// arguments. Kernel parameters (the matmul's tiles) are chosen for `cpu`,
/// those of the shapes in `tuned` as measured there.
void buildLinalgToLLVMPipeline(OpPassManager &pm,
                               const ::kina::CPUDescription &cpu,
                               llvm::ArrayRef<::kina::TunedMatmul> tuned = {});

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
