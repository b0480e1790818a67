//===- SplitReductions.h - Reductions over a split axis ---------*- C++ -*-===//
#ifndef KINA_SHARDING_SPLITREDUCTIONS_H
#define KINA_SHARDING_SPLITREDUCTIONS_H

#include "Kina/Dialect/KinaDialect.h"

namespace mlir::kina {

/// When `op` is a softmax, log_softmax, max or mean along an axis that its
/// operand (placed) splits over a mesh axis, builds before it the same
/// value from per-device statistics, as Megatron's vocab-parallel
/// cross-entropy does: the axis viewed as [devices, block], each block's
/// max and sum of exponentials, a max over the devices' maxima (a gather
/// of one value per row and device) and a sum over their sums (an
/// all-reduce of one value per row); a mean is the sum's plan, divided by
/// the count.
/// Returns the ops built, in order, the last one's result standing for
/// `op`'s (the new ops are `@auto`, for the propagation to place); empty
/// when `op` is none of these, its axis is not split, or an annotation
/// wants a softmax's axis whole (gathering the input is cheaper then).
SmallVector<Operation *> expandOverSplitAxis(OpBuilder &builder, Operation *op,
                                             MeshOp mesh);

/// `mean` built again before it as a sum over its axis divided by the
/// count (the ops built, in order, `@auto`; the last stands for `mean`):
/// the form in which a split axis leaves each device a partial sum, as
/// automatic sharding poses every mean so that its space has them.
SmallVector<Operation *> meanAsSum(OpBuilder &builder, MeanOp mean);

} // namespace mlir::kina

#endif // KINA_SHARDING_SPLITREDUCTIONS_H
