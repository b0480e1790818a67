//===- InitAll.h - Register everything Kina adds to MLIR --------*- C++ -*-===//
#ifndef KINA_INITALL_H
#define KINA_INITALL_H

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::kina {
/// The dialects of kina programs: kina and func.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Kina's passes and named pipelines.
void registerAllPasses();
/// `--import-kina` and `--kina-to-so`; `outputPath` is the driver's `-o`
/// ("-" for standard output), beside which `--emit-header` writes.
void registerAllTranslations(const std::string &outputPath);
/// `--kina-to-so`: `.kina` source or a kina `.mlir` in, a shared object
/// out (`--emit-header` also writes the C header beside `outputPath`).
void registerKinaToSharedObjectTranslation(const std::string &outputPath);
} // namespace mlir::kina

#endif // KINA_INITALL_H
