//===- CompileModule.h - A kina module to a shared object -------*- C++ -*-===//
//
// The compile driver over MLIR types, for the tools (`--kina-to-so`) and
// Kina/Compiler/Compiler.h: the forms to export, the pipelines, the back end.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_COMPILER_COMPILEMODULE_H
#define KINA_COMPILER_COMPILEMODULE_H

#include "Kina/AutoShard/AutoShardOptions.h"
#include "Kina/Sharding/CostRecords.h"
#include "Kina/Signature/Signature.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::kina {

/// The IR of each stage, for readers (`m.ir(stage)` in Python), and the
/// records of what the compile decided (`m.cost`, `m.remarks`).
struct CompileArtifacts {
  std::string kinaIR;       // the verified kina module
  std::string propagatedIR; // differentiated, placements propagated
  std::string hostIR;       // the host form (--kina-partition=form=host)
  std::string spmdIR;       // the per-device form; empty without a mesh
  std::string linalgIR;     // after --kina-to-linalg
  std::string llvmIR;   // optimized LLVM IR, with the C ABI wrappers
  ModuleSignature signature;
  CostRecords records; // the propagation's collectives, the costs
  std::vector<AutoShardReport> autoShard; // the plans the solver found
};

struct CompileOptions {
  /// Instrument the generated code with AddressSanitizer. The process that
  /// loads the .so must provide the ASan runtime (an ASan-built driver).
  bool sanitizeAddress = false;
  /// Export the unsharded program and the per-device forms with every
  /// op's value as an extra output (mlir::kina::buildExportedForms), for
  /// the simulator's divergence report; not the program's usual ABI.
  bool probes = false;
  /// The CPU code is generated for: `host`, or a name kina::describeCPU
  /// knows (a .so for another CPU may not run here; for inspecting its
  /// code).
  std::string targetCPU = "host";
  /// A tuning file measured on the target CPU (kina::readMatmulTuning), or
  /// empty: the analytic model's parameters for every matmul.
  std::string matmulTuning;
  /// Print the IR of every stage (CompileArtifacts) with each op's source
  /// location beside it (`loc("prog.kina":3:7)`), and give the LLVM IR
  /// line tables (`!DILocation(line: 3, column: 7, ...)`) for them.
  bool printLocations = false;
  /// How functions with `@auto` placements are auto-sharded.
  AutoShardOptions autoShard;
};

/// Compiles a kina module (it is not modified) to a relocatable object in
/// memory: the whole pipeline up to, not including, the link.
FailureOr<std::string> compileToObject(ModuleOp module,
                                       const CompileOptions &options = {},
                                       CompileArtifacts *artifacts = nullptr);

/// Compiles a kina module (it is not modified) to a shared object at
/// `path` that exports the C ABI of docs/interfaces.md and needs only libc
/// and libm. Code is generated for `options.targetCPU`. On failure,
/// diagnostics name the location and the stage, and no file is left at
/// `path`.
LogicalResult compileToSharedObject(ModuleOp module, llvm::StringRef path,
                                    const CompileOptions &options = {},
                                    CompileArtifacts *artifacts = nullptr);

} // namespace mlir::kina

#endif // KINA_COMPILER_COMPILEMODULE_H
