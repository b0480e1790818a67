//===- Passes.h - Kina conversion passes ------------------------*- C++ -*-===//
#ifndef KINA_CONVERSION_PASSES_H
#define KINA_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Kina/Conversion/Passes.h.inc"

/// `--kina-to-linalg`: prepare, convert, asserts to status, erase the
/// mesh, drop the kina attributes.
void buildKinaToLinalgPasses(OpPassManager &pm);
/// Registers `--kina-to-linalg` as that pipeline.
void registerKinaToLinalgPipeline();
} // namespace mlir::kina

#endif // KINA_CONVERSION_PASSES_H
