//===- FuzzSupport.h - Shared by the libFuzzer harnesses --------*- C++ -*-===//
#ifndef KINA_FUZZ_FUZZSUPPORT_H
#define KINA_FUZZ_FUZZSUPPORT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace mlir::kina::fuzz {

/// A context that drops diagnostics: a fuzzer only looks for crashes,
/// hangs and sanitizer reports, and bad input is expected to be rejected.
struct QuietContext {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::ScopedDiagnosticHandler quiet{
      &context, [](mlir::Diagnostic &) { return mlir::success(); }};
};

} // namespace mlir::kina::fuzz

#endif // KINA_FUZZ_FUZZSUPPORT_H
