//===- PrefetchPackedRows.cpp - Prefetch the rows of B a packing loop reads
//===//
//
// Packing a block of B reads its rows one after the other, each in a page
// of its own (rows are N floats apart), a run too short for the hardware
// prefetchers to follow: the loop waits on memory at every row. Each read
// of row r also prefetches the same columns of row r + distance, which
// past the block's last row are the first rows of the next K block.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "Kina/CPU/CPU.h"

#include "CheckedOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kina {
#define GEN_PASS_DEF_PREFETCHPACKEDROWSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

using mlir::kina::kCacheLineBytes;

namespace {
struct PrefetchPackedRowsPass
    : mlir::kina::detail::CheckedOptions<
          mlir::kina::impl::PrefetchPackedRowsPassBase<
              PrefetchPackedRowsPass>> {
  using CheckedOptions::CheckedOptions;

  std::optional<std::string> badOption() const override {
    if (distance < 1)
      return "option 'distance' must be at least 1, got " +
             std::to_string(distance);
    return std::nullopt;
  }

  void runOnOperation() override {
    if (!optionsAreValid())
      return;
    mlir::kina::KinaDialect::PackRowsAttrHelper packRows(&getContext());
    getOperation()->walk([&](scf::ForOp rows) {
      if (!packRows.isAttrPresent(rows))
        return;
      rows->walk([&](vector::TransferReadOp read) { prefetch(read); });
    });
  }

  /// Before `read` of B[row, column...], prefetches the lines of the same
  /// columns `distance` rows further.
  void prefetch(vector::TransferReadOp read) {
    auto source = dyn_cast<TypedValue<MemRefType>>(read.getBase());
    if (!source || source.getType().getRank() != 2 ||
        read.getVectorType().getRank() != 1)
      return;
    OpBuilder b(read);
    Location loc = read.getLoc();
    int64_t bytes = read.getVectorType().getNumElements() *
                    source.getType().getElementTypeBitWidth() / 8;
    int64_t perLine =
        kCacheLineBytes * 8 / source.getType().getElementTypeBitWidth();
    Value ahead =
        arith::AddIOp::create(b, loc, read.getIndices()[0],
                              arith::ConstantIndexOp::create(b, loc, distance));
    for (int64_t line = 0; line * kCacheLineBytes < bytes; ++line) {
      Value column = read.getIndices()[1];
      if (line)
        column = arith::AddIOp::create(
            b, loc, column,
            arith::ConstantIndexOp::create(b, loc, line * perLine));
      memref::PrefetchOp::create(b, loc, source, ValueRange{ahead, column},
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
    }
  }
};
} // namespace
