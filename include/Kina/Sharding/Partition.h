//===- Partition.h - The two forms of a partitioned program -----*- C++ -*-===//
#ifndef KINA_SHARDING_PARTITION_H
#define KINA_SHARDING_PARTITION_H

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// The shape of the block each device holds of a value of `type`.
SmallVector<int64_t> blockShape(KinaTensorType type, MeshOp mesh);

/// The host form: every shard as ordinary ops on one host (the design
/// sections' programs), `@host` types, global signatures; erases the mesh.
LogicalResult partitionHost(ModuleOp module, MeshOp mesh);

/// The per-device (SPMD) form of the mesh-placed function `fn`, in place:
/// local shapes, `@local` types, collectives in their per-device view; each
/// argument and result records its global type (`kina.global`).
LogicalResult partitionSpmd(func::FuncOp fn, MeshOp mesh);

} // namespace mlir::kina

#endif // KINA_SHARDING_PARTITION_H
