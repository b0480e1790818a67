//===- kina-translate.cpp - Kina's translations ---------------------------===//
//
// `--import-kina` (.kina source to the kina dialect) and `--kina-to-so`
// (.kina or kina .mlir to a shared object), on mlir-translate's driver.
//
//===----------------------------------------------------------------------===//
#include "Kina/InitAll.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  kina::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Kina translation driver\n"));
}
