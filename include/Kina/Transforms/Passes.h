//===- Passes.h - Kina transformation passes and pipelines ------*- C++ -*-===//
#ifndef KINA_TRANSFORMS_PASSES_H
#define KINA_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Kina/Transforms/Passes.h.inc"

/// `--kina-to-linalg` and a canonicalization.
void buildKinaToLinalgPipeline(OpPassManager &pm);
/// Upstream tensors to the LLVM dialect (see below).
void buildLinalgToLLVMPipeline(OpPassManager &pm);

/// kina to bufferized loops in the LLVM dialect: `--kina-to-linalg`,
/// bufferization with caller-owned results (each tensor result becomes a
/// last pointer parameter), loops, and the LLVM dialect with bare-pointer
/// memref arguments.
void buildKinaToLLVMPipeline(OpPassManager &pm);

/// The dialects and external interface models (bufferization, conversion
/// to LLVM) the pipelines above need; append them to any context that
/// runs the pipelines outside kina-opt.
void registerPipelineDependencies(DialectRegistry &registry);

/// Registers `--kina-to-llvm` (the pipeline above) with the pass registry.
void registerKinaPipelines();
} // namespace mlir::kina

#endif // KINA_TRANSFORMS_PASSES_H
