//===- KinaToSharedObject.cpp - The --kina-to-so translation --------------===//
//
// Composes the frontend (for `.kina` input) and the compile driver
// (Kina/Compiler/CompileModule.h); lib/Target itself only turns a lowered
// module into an object and never parses source.
// Input: `.kina` source (by its extension) or a kina dialect `.mlir`.
// Output: the shared object's bytes; with `--emit-header`, the C header is
// written beside the output file (`out.so` -> `out.h`).
//
//===----------------------------------------------------------------------===//

#include "Kina/InitAll.h"

#include "Kina/Compiler/CompileModule.h"
#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Frontend/MLIRGen.h"
#include "Kina/Target/CHeader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::kina;

static llvm::cl::opt<bool>
    emitHeader("emit-header",
               llvm::cl::desc("with --kina-to-so, also write the C header "
                              "beside the output (out.so -> out.h)"),
               llvm::cl::init(false));

static llvm::cl::opt<bool> sanitizeAddress(
    "sanitize-address",
    llvm::cl::desc("with --kina-to-so, instrument the generated code with "
                   "AddressSanitizer (load it from an ASan-built process)"),
    llvm::cl::init(false));

static llvm::cl::opt<std::string> targetCPU(
    "target-cpu",
    llvm::cl::desc("with --kina-to-so, generate code for this CPU (host, "
                   "or a name Kina knows: znver5, skylake-avx512, ...)"),
    llvm::cl::init("host"));

static llvm::cl::opt<bool> printRemarks(
    "remarks",
    llvm::cl::desc("with --kina-to-so, print the sharding remarks (each "
                   "collective the propagation inserted, and each "
                   "function's communication); quiet by default"),
    llvm::cl::init(false));

static llvm::cl::opt<std::string> matmulTuning(
    "matmul-tuning",
    llvm::cl::desc("with --kina-to-so, the matmul parameters measured for "
                   "this CPU (a file python3 -m kina.tune writes)"),
    llvm::cl::init(""));

/// The C header of `signature` beside `output` (out.so -> out.h).
static LogicalResult writeHeader(const mlir::kina::ModuleSignature &signature,
                                 StringRef output, Location loc) {
  if (output == "-")
    return emitError(loc) << "--emit-header needs an output file (-o out.so)";
  SmallString<128> header(output);
  llvm::sys::path::replace_extension(header, "h");
  std::string guard = "KINA_" + llvm::sys::path::stem(header).upper() + "_H";
  for (char &c : guard)
    if (!llvm::isAlnum(static_cast<unsigned char>(c)))
      c = '_';
  std::error_code ec;
  llvm::raw_fd_ostream os(header, ec);
  if (ec)
    return emitError(loc) << "cannot write " << header << ": " << ec.message();
  os << renderCHeader(signature, guard);
  return success();
}

static LogicalResult translateToSharedObject(
    const std::shared_ptr<llvm::SourceMgr> &sourceMgr, raw_ostream &output,
    MLIRContext *context, StringRef outputPath) {
  context->loadDialect<KinaDialect, func::FuncDialect>();
  // Errors and remarks point at the .kina line; the op that MLIR would
  // print beside them is the compiler's business.
  context->printOpOnDiagnostic(false);
  // Remarks only on request (`--remarks`, `kina-opt
  // --kina-propagate-sharding`, or `m.remarks` in Python).
  ScopedDiagnosticHandler quiet(context, [](Diagnostic &diagnostic) {
    return success(diagnostic.getSeverity() == DiagnosticSeverity::Remark &&
                   !printRemarks);
  });
  StringRef name =
      sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID())
          ->getBufferIdentifier();
  OwningOpRef<ModuleOp> module =
      name.ends_with(".kina")
          ? mlir::kina::importKina(*sourceMgr, *context)
          : parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
  if (!module || failed(verify(*module)))
    return failure();
  Location loc = module->getLoc();

  SmallString<128> temporary;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "kina", "so", temporary))
    return emitError(loc) << "cannot create a temporary file: "
                          << ec.message();
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove(temporary); });
  CompileArtifacts artifacts;
  CompileOptions options;
  options.sanitizeAddress = sanitizeAddress;
  options.targetCPU = targetCPU;
  options.matmulTuning = matmulTuning;
  if (failed(compileToSharedObject(*module, temporary, options, &artifacts)))
    return failure();
  auto bytes = llvm::MemoryBuffer::getFile(temporary, /*IsText=*/false);
  if (!bytes)
    return emitError(loc) << "cannot read back the shared object";
  if (emitHeader &&
      failed(writeHeader(artifacts.signature, outputPath, loc)))
    return failure();
  output << (*bytes)->getBuffer();
  return success();
}

void mlir::kina::registerKinaToSharedObjectTranslation(
    const std::string &outputPath) {
  static TranslateRegistration registration(
      "kina-to-so",
      "compile .kina or kina .mlir to a shared object with a C ABI",
      [outputPath](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                   raw_ostream &output, MLIRContext *context) {
        return translateToSharedObject(sourceMgr, output, context,
                                       outputPath);
      });
}
