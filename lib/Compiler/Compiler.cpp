//===- Compiler.cpp - `.kina` source to a shared object -------------------===//
#include "Kina/Compiler/Compiler.h"

#include "Kina/CPU/MatmulTuning.h"
#include "Kina/Compiler/CompileModule.h"
#include "Kina/Frontend/MLIRGen.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace {
/// One compile: its own context (no thread pool: one compile is small, and
/// embedders compile from many threads at once) and diagnostics collected
/// as text.
struct Session {
  Session(const std::string &text, const std::string &filename,
          mlir::kina::CompileOutput &output)
      : diagnostics(output.diagnostics),
        handler(sourceMgr, &context, diagnostics) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, filename), llvm::SMLoc());
  }

  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  llvm::SourceMgr sourceMgr;
  llvm::raw_string_ostream diagnostics;
  mlir::SourceMgrDiagnosticHandler handler;
};
} // namespace

/// Imports `text`; when that succeeds, `then` fills the rest of the output
/// and says whether it succeeded too.
static mlir::kina::CompileOutput withImported(
    const std::string &text, const std::string &filename,
    llvm::function_ref<bool(mlir::ModuleOp, mlir::kina::CompileOutput &)>
        then) {
  mlir::kina::CompileOutput output;
  Session session(text, filename, output);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::kina::importKina(session.sourceMgr, session.context);
  if (module)
    output.ok = then(*module, output);
  return output;
}

mlir::kina::CompileOutput
mlir::kina::checkKinaSource(const std::string &text,
                            const std::string &filename) {
  return withImported(text, filename,
                      [](mlir::ModuleOp module, CompileOutput &output) {
                        llvm::raw_string_ostream os(output.kinaIR);
                        module->print(os);
                        return true;
                      });
}

mlir::kina::CompileOutput
mlir::kina::compileKinaSource(const std::string &text,
                              const std::string &filename,
                              const std::string &soPath, bool probes,
                              const std::string &matmulTuning, bool locations,
                              const AutoShardOptions &autoShard) {
  return withImported(
      text, filename, [&](mlir::ModuleOp module, CompileOutput &output) {
        mlir::kina::CompileArtifacts artifacts;
        mlir::kina::CompileOptions options;
        options.probes = probes;
        options.matmulTuning = matmulTuning;
        options.printLocations = locations;
        options.autoShard = autoShard;
        bool ok = succeeded(mlir::kina::compileToSharedObject(
            module, soPath, options, &artifacts));
        output.kinaIR = std::move(artifacts.kinaIR);
        output.propagatedIR = std::move(artifacts.propagatedIR);
        output.hostIR = std::move(artifacts.hostIR);
        output.spmdIR = std::move(artifacts.spmdIR);
        output.linalgIR = std::move(artifacts.linalgIR);
        output.llvmIR = std::move(artifacts.llvmIR);
        output.records = std::move(artifacts.records);
        output.autoShard = std::move(artifacts.autoShard);
        return ok;
      });
}

mlir::kina::HostMatmulModel mlir::kina::describeHostMatmulModel() {
  CPUDescription cpu = hostCPU();
  MatmulParameters model = chooseMatmulParameters(cpu);
  return {cpuKey(cpu),  model.tileM,  model.tileN,
          model.cacheM, model.cacheN, model.cacheK};
}
