//===- CostRules.cpp - What each kina op computes, for the cost view ------===//
//
// The ops that override the default (one operation per result element) of
// CostOpInterface: those that only move, view or make data (0; the
// collectives' cost is the bytes they send, which the cost view counts
// apart), reductions (one per element read; a mean one division per
// result element more), softmax and log_softmax (their max, subtraction,
// exponential, sum and division or logarithm: five per element),
// scatter_add (one add per update) and matmul (a
// multiply-add per element of the result and step of the contraction).
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

using namespace mlir;
using namespace mlir::kina;

using Shapes = ArrayRef<SmallVector<int64_t>>;

/// What a softmax costs per element (see above).
static constexpr int64_t kSoftmaxOpsPerElement = 5;

#define KINA_MOVES_DATA(Op)                                                    \
  int64_t Op::flops(Shapes, ArrayRef<int64_t>) { return 0; }
KINA_MOVES_DATA(ConstantOp)
KINA_MOVES_DATA(SliceOp)
KINA_MOVES_DATA(ConcatOp)
KINA_MOVES_DATA(GatherOp)
KINA_MOVES_DATA(BroadcastOp)
KINA_MOVES_DATA(ReshapeOp)
KINA_MOVES_DATA(TransposeOp)
KINA_MOVES_DATA(ReshardOp)
KINA_MOVES_DATA(AllGatherOp)
KINA_MOVES_DATA(AllSliceOp)
KINA_MOVES_DATA(AllReduceOp)
KINA_MOVES_DATA(ReduceScatterOp)
KINA_MOVES_DATA(AllToAllOp)
KINA_MOVES_DATA(PermuteOp)
#undef KINA_MOVES_DATA

#define KINA_READS_EACH_ONCE(Op)                                               \
  int64_t Op::flops(Shapes operands, ArrayRef<int64_t>) {                      \
    return ShapedType::getNumElements(operands.front());                      \
  }
KINA_READS_EACH_ONCE(SumOp)
KINA_READS_EACH_ONCE(MaxOp)
KINA_READS_EACH_ONCE(ScatterAddOp) // its updates, operand 0
#undef KINA_READS_EACH_ONCE

/// The sum, then one division per result element: what the propagation
/// and automatic sharding compute a mean as (meanAsSum), priced alike.
int64_t MeanOp::flops(Shapes operands, ArrayRef<int64_t> result) {
  return ShapedType::getNumElements(operands.front()) +
         ShapedType::getNumElements(result);
}

int64_t SoftmaxOp::flops(Shapes operands, ArrayRef<int64_t>) {
  return kSoftmaxOpsPerElement * ShapedType::getNumElements(operands.front());
}

int64_t LogSoftmaxOp::flops(Shapes operands, ArrayRef<int64_t>) {
  return kSoftmaxOpsPerElement * ShapedType::getNumElements(operands.front());
}

int64_t MatmulOp::flops(Shapes operands, ArrayRef<int64_t> result) {
  return 2 * ShapedType::getNumElements(result) * operands.front().back();
}
