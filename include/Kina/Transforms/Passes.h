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
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Kina/Transforms/Passes.h.inc"

/// Marks the loop of `--kina-tile-matmuls` that packs a block of B, row by
/// row; `--kina-prefetch-packed-rows` prefetches the rows it reads next.
inline constexpr llvm::StringLiteral kPackRowsAttr = "kina_pack_rows";

/// Marks the loop of `--kina-tile-matmuls` over a matmul's K blocks; its
/// first iteration writes every element of the accumulator, so
/// `--kina-zero-first-k-block` may start that iteration from zeros instead
/// of the zero-filled result.
inline constexpr llvm::StringLiteral kKBlocksAttr = "kina_k_blocks";

/// Marks the loop of `--kina-tile-matmuls` over a matmul's M cache tiles
/// when K is one block: it reads each element of the accumulator once,
/// then writes its final value, so `--kina-zero-first-k-block` may start
/// every tile from zeros instead of the zero-filled result.
inline constexpr llvm::StringLiteral kOneKBlockAttr = "kina_one_k_block";

/// The step of `--kina-asserts-to-status`, for passes that end with it.
LogicalResult convertAssertsToStatus(ModuleOp module);

} // namespace mlir::kina

#endif // KINA_TRANSFORMS_PASSES_H
