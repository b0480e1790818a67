//===- kina-translate.cpp - Kina's translations ---------------------------===//
//
// `--import-kina` (.kina source to the kina dialect) and `--kina-to-so`
// (.kina or kina .mlir to a shared object), on mlir-translate's driver.
//
//===----------------------------------------------------------------------===//
#include "Kina/InitAll.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"

/// The output file the driver's `-o` names ("-": standard output), which
/// `--kina-to-so --emit-header` writes beside: the spellings LLVM's
/// command line accepts for an option named `o` (`-o F`, `-o=F`, `--o F`,
/// `--o=F`); the last one wins, as there.
static std::string outputPath(int argc, char **argv) {
  std::string path = "-";
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--")
      break;
    if ((arg == "-o" || arg == "--o") && i + 1 < argc)
      path = argv[++i];
    else if (arg.consume_front("-o=") || arg.consume_front("--o="))
      path = arg.str();
  }
  return path;
}

int main(int argc, char **argv) {
  mlir::kina::registerAllTranslations(outputPath(argc, argv));
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Kina translation driver\n"));
}
