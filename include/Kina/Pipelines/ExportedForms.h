//===- ExportedForms.h - What a shared object is generated from -*- C++ -*-===//
//
// The kina module a shared object is generated from (the host form and the
// per-device forms of a program) and the signature it exports, read from
// that module before it is lowered.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_PIPELINES_EXPORTEDFORMS_H
#define KINA_PIPELINES_EXPORTEDFORMS_H

#include "Kina/AutoShard/AutoShardOptions.h"
#include "Kina/Sharding/CostRecords.h"
#include "Kina/Signature/Signature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::kina {

/// What a shared object is generated from, still in kina, after
/// `--kina-differentiate`: the host form of
/// every function of `program` and, when it declares a mesh, the
/// per-device form (`--kina-partition=form=spmd`) of each mesh-placed
/// function, marked `kina.per_device = "NAME"`, with the mesh. Errors are
/// located.
///
/// With `probes` (the simulator's divergence report), the host functions
/// are instead the unsharded program (every placement dropped), and both
/// they and the per-device forms return, after their result, the value of
/// every op of the program that the partitioning keeps: op i carries
/// `kina.probe = i` and `kina.probe_global` (its type with its placement).
///
/// `stages`, when given, receives the module printed after each step, for
/// readers (`m.ir(stage)` in Python): differentiated and propagated
/// (global view, collectives in place), the host form and the per-device
/// form (empty without a mesh), and the records of what the propagation
/// inserted and of what each function costs a device (FLOPs, peak bytes,
/// collectives), which every compile also says as remarks.
///
/// A program already in its per-device form (its functions `@local`, as
/// `--kina-partition=form=spmd` leaves them, with `kina.global` types; it
/// may have been differentiated there) is exported as it is: per-device
/// functions only, no host entries, no probes.
struct ExportedStages {
  std::string propagated, host, spmd;
  CostRecords records;
  /// What --kina-auto-shard found, per function it placed.
  std::vector<AutoShardReport> autoShard;
};

/// Whether `program`'s functions are per-device (`@local`) ones.
bool isPerDeviceProgram(ModuleOp program);
/// With `locations`, `stages` are printed with each op's source location
/// (printingFlags).
FailureOr<OwningOpRef<ModuleOp>>
buildExportedForms(ModuleOp program, bool probes = false,
                   ExportedStages *stages = nullptr, bool locations = false,
                   const AutoShardOptions &autoShard = {});

/// How the stages are printed for readers: with `locations`, each op's
/// source location beside it (`loc("prog.kina":3:7)`, not an alias at the
/// end of the module).
OpPrintingFlags printingFlags(bool locations);

/// Every function of a verified kina module (a program, or what
/// buildExportedForms returns), plus `main` for the `@main` entry and the per-device forms with
/// their placements. Fails (with a diagnostic) on a function the C ABI
/// cannot export.
FailureOr<ModuleSignature> getModuleSignature(ModuleOp module);

} // namespace mlir::kina

#endif // KINA_PIPELINES_EXPORTEDFORMS_H
