//===- Passes.h - Kina transformation passes and pipelines ------*- C++ -*-===//
#ifndef KINA_TRANSFORMS_PASSES_H
#define KINA_TRANSFORMS_PASSES_H

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Kina/Transforms/Passes.h.inc"

/// The step of `--kina-asserts-to-status`, for passes that end with it.
LogicalResult convertAssertsToStatus(ModuleOp module);

} // namespace mlir::kina

#endif // KINA_TRANSFORMS_PASSES_H
