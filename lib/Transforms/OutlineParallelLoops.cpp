//===- OutlineParallelLoops.cpp - scf.forall bodies as functions ----------===//
//
// The thread pool calls a function on a range of iterations; this pass
// makes that function. Outlining happens on memrefs, where a body's inputs
// are plain values; kina-lower-parallel-calls packs them for the pool once
// the module is in the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::kina {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// Memrefs the bare-pointer convention passes as they are.
static bool passesAsPointer(MemRefType type) {
  return type.hasStaticShape() && type.getLayout().isIdentity();
}

namespace {
/// A value the loop body uses from outside, and what the call passes for
/// it (the value itself, or a memref's base buffer and dynamic metadata).
struct Capture {
  Value outside;
  SmallVector<Value> arguments; // at the call site
};
} // namespace

static Capture captureAt(OpBuilder &b, Location loc, Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || passesAsPointer(type))
    return {value, {value}};
  // Base buffer, then only the dynamic offset, sizes and strides.
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, value);
  Capture capture{value, {metadata.getBaseBuffer()}};
  auto [strides, offset] = type.getStridesAndOffset();
  if (ShapedType::isDynamic(offset))
    capture.arguments.push_back(metadata.getOffset());
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      capture.arguments.push_back(metadata.getSizes()[i]);
  for (auto [i, stride] : llvm::enumerate(strides))
    if (ShapedType::isDynamic(stride))
      capture.arguments.push_back(metadata.getStrides()[i]);
  return capture;
}

/// Inside the outlined function: the captured value from its parameters.
static Value rebuildAt(OpBuilder &b, Location loc, const Capture &capture,
                       ValueRange params) {
  auto type = dyn_cast<MemRefType>(capture.outside.getType());
  if (!type || passesAsPointer(type))
    return params.front();
  auto [strides, offset] = type.getStridesAndOffset();
  unsigned next = 1;
  auto staticOr = [&](int64_t value) -> OpFoldResult {
    return ShapedType::isDynamic(value) ? OpFoldResult(params[next++])
                                        : b.getIndexAttr(value);
  };
  OpFoldResult newOffset = staticOr(offset);
  SmallVector<OpFoldResult> sizes, newStrides;
  for (int64_t size : type.getShape())
    sizes.push_back(staticOr(size));
  for (int64_t stride : strides)
    newStrides.push_back(staticOr(stride));
  return memref::ReinterpretCastOp::create(b, loc, type, params.front(),
                                           newOffset, sizes, newStrides);
}

static LogicalResult outline(scf::ForallOp loop, SymbolTable &symbols) {
  std::optional<SmallVector<int64_t>> lowers = getConstantIntValues(
                                          loop.getMixedLowerBound()),
                                      uppers = getConstantIntValues(
                                          loop.getMixedUpperBound()),
                                      steps = getConstantIntValues(
                                          loop.getMixedStep());
  if (loop.getNumResults() != 0 || !lowers || !uppers || !steps)
    return success(); // stays a loop (scf-forall-to-for)
  auto parent = loop->getParentOfType<func::FuncOp>();
  Location loc = loop.getLoc();
  SmallVector<int64_t> trips;
  int64_t total = 1;
  for (auto [lower, upper, step] : llvm::zip(*lowers, *uppers, *steps)) {
    trips.push_back(
        step > 0 && upper > lower ? llvm::divideCeil(upper - lower, step) : 0);
    total *= trips.back();
  }

  // Constants are rematerialized inside; everything else is a parameter.
  SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  SmallVector<Value> constants;
  SmallVector<Capture> captures;
  OpBuilder b(loop);
  for (Value value : used) {
    if (matchPattern(value, m_Constant()))
      constants.push_back(value);
    else if (auto type = dyn_cast<MemRefType>(value.getType());
             type && !type.isStrided())
      return loop.emitError("cannot outline a loop that captures ")
             << type << " (not strided)";
    else
      captures.push_back(captureAt(b, loc, value));
  }

  SmallVector<Type> paramTypes = {b.getIndexType(), b.getIndexType()};
  SmallVector<Value> callArgs = {arith::ConstantIndexOp::create(b, loc, 0),
                                 arith::ConstantIndexOp::create(b, loc, total)};
  for (const Capture &capture : captures)
    for (Value argument : capture.arguments) {
      paramTypes.push_back(argument.getType());
      callArgs.push_back(argument);
    }

  OpBuilder moduleBuilder(parent);
  auto body = func::FuncOp::create(moduleBuilder, loc,
                                   (parent.getName() + "_parallel").str(),
                                   b.getFunctionType(paramTypes, {}));
  body.setPrivate();
  mlir::kina::KinaDialect::ParallelBodyAttrHelper(b.getContext())
      .setAttr(body, b.getUnitAttr());
  symbols.insert(body); // renames on a clash
  Block *entry = body.addEntryBlock();
  OpBuilder inner = OpBuilder::atBlockBegin(entry);
  IRMapping mapping;
  for (Value constant : constants)
    inner.clone(*constant.getDefiningOp(), mapping);
  unsigned next = 2;
  for (const Capture &capture : captures) {
    ValueRange params =
        entry->getArguments().slice(next, capture.arguments.size());
    next += capture.arguments.size();
    mapping.map(capture.outside, rebuildAt(inner, loc, capture, params));
  }

  // One iteration per linear index: delinearize, scale, offset.
  Value one = arith::ConstantIndexOp::create(inner, loc, 1);
  auto serial = scf::ForOp::create(inner, loc, entry->getArgument(0),
                                   entry->getArgument(1), one);
  func::ReturnOp::create(inner, loc);
  inner.setInsertionPointToStart(serial.getBody());
  Value rest = serial.getInductionVar();
  SmallVector<Value> ivs(trips.size());
  for (int64_t d = trips.size() - 1; d >= 0; --d) {
    Value index = rest;
    if (d > 0) {
      Value trip = arith::ConstantIndexOp::create(inner, loc, trips[d]);
      index = arith::RemUIOp::create(inner, loc, rest, trip);
      rest = arith::DivUIOp::create(inner, loc, rest, trip);
    }
    if ((*steps)[d] != 1)
      index = arith::MulIOp::create(
          inner, loc, index,
          arith::ConstantIndexOp::create(inner, loc, (*steps)[d]));
    if ((*lowers)[d] != 0)
      index = arith::AddIOp::create(
          inner, loc, index,
          arith::ConstantIndexOp::create(inner, loc, (*lowers)[d]));
    ivs[d] = index;
  }
  mapping.map(loop.getInductionVars(), ivs);
  for (Operation &op : loop.getBody()->without_terminator())
    inner.clone(op, mapping);

  func::CallOp::create(b, loc, body, callArgs);
  loop.erase();
  return success();
}

namespace {
struct OutlineParallelLoopsPass
    : mlir::kina::impl::OutlineParallelLoopsPassBase<OutlineParallelLoopsPass> {
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    SmallVector<scf::ForallOp> outermost;
    getOperation().walk([&](scf::ForallOp loop) {
      if (!loop->getParentOfType<scf::ForallOp>())
        outermost.push_back(loop);
    });
    for (scf::ForallOp loop : outermost)
      if (failed(outline(loop, symbols)))
        return signalPassFailure();
  }
};
} // namespace
