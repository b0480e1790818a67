//===- InitAll.h - Register everything Kina adds to MLIR --------*- C++ -*-===//
#ifndef KINA_INITALL_H
#define KINA_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kina {
/// The dialects of kina programs: kina and func.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Kina's passes and named pipelines.
void registerAllPasses();
/// `--import-kina` and `--kina-to-so`.
void registerAllTranslations();
/// `--kina-to-so`: `.kina` source or a kina `.mlir` in, a shared object
/// out (`--emit-header` also writes the C header beside it).
void registerKinaToSharedObjectTranslation();
} // namespace kina

#endif // KINA_INITALL_H
