//===- kina-translate.cpp - Kina's translations ---------------------------===//
//
// `--import-kina` (.kina source to the kina dialect) and `--kina-to-so`
// (.kina or kina .mlir to a shared object), on mlir-translate's driver.
//
//===----------------------------------------------------------------------===//
#include "Kina/InitAll.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace {
/// The output file the driver's `-o` names ("-": standard output) and the
/// argument that holds it (`index`, after `prefix`).
struct OutputArgument {
  std::string path = "-";
  int index = -1;
  std::string prefix;
};
} // namespace

/// The spellings LLVM's command line accepts for an option named `o`
/// (`-o F`, `-o=F`, `--o F`, `--o=F`); the last one wins, as there.
static OutputArgument outputArgument(int argc, char **argv) {
  OutputArgument out;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--")
      break;
    if ((arg == "-o" || arg == "--o") && i + 1 < argc) {
      out = {argv[i + 1], i + 1, ""};
      ++i;
      continue;
    }
    for (llvm::StringRef prefix : {"-o=", "--o="})
      if (arg.starts_with(prefix))
        out = {arg.drop_front(prefix.size()).str(), i, prefix.str()};
  }
  return out;
}

int main(int argc, char **argv) {
  OutputArgument out = outputArgument(argc, argv);
  // `--kina-to-so --emit-header` writes the header beside the real path.
  mlir::kina::registerAllTranslations(out.path);
  const char *title = "Kina translation driver\n";
  // A device or a pipe (`-o /dev/null`) is written as it is.
  llvm::sys::fs::file_status status;
  bool regular = llvm::sys::fs::status(out.path, status) ||
                 llvm::sys::fs::is_regular_file(status);
  if (out.path == "-" || !regular)
    return mlir::failed(mlir::mlirTranslateMain(argc, argv, title));
  // The driver truncates its output when it starts. Written beside it and
  // renamed over it instead: a process that has the old shared object
  // loaded keeps its pages (rewritten in place, it crashed), and a failed
  // translation leaves the old file as it was.
  llvm::SmallString<128> staged;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          out.path + ".tmp-%%%%%%", fd, staged)) {
    llvm::errs() << "kina-translate: cannot write " << out.path << ": "
                 << ec.message() << "\n";
    return 1;
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  std::vector<std::string> arguments(argv, argv + argc);
  arguments[out.index] = out.prefix + staged.str().str();
  std::vector<char *> pointers;
  for (std::string &argument : arguments)
    pointers.push_back(argument.data());
  bool ok =
      mlir::succeeded(mlir::mlirTranslateMain(argc, pointers.data(), title));
  if (ok)
    if (std::error_code ec = llvm::sys::fs::rename(staged, out.path)) {
      llvm::errs() << "kina-translate: cannot write " << out.path << ": "
                   << ec.message() << "\n";
      ok = false;
    }
  if (!ok)
    llvm::sys::fs::remove(staged);
  return ok ? 0 : 1;
}
