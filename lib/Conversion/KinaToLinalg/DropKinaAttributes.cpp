//===- DropKinaAttributes.cpp - No kina attribute left on functions -------===//
#include "Kina/Conversion/Passes.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

namespace mlir::kina {
#define GEN_PASS_DEF_DROPKINAATTRIBUTESPASS
#include "Kina/Conversion/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

/// Drops the `kina.*` discardable attributes of functions, their
/// arguments and their results (parameter names, the entry mark, a
/// per-device value's global type): no kina type may remain in the output.
/// A result's `kina.reuses` (an integer, which stock mlir-opt reads) stays
/// for the bufferization (kina-write-donated-results); its argument is
/// marked `bufferization.writable`.
static void dropKinaAttributes(func::FuncOp fn) {
  StringRef reuses = KinaDialect::ReusesAttrHelper::getNameStr();
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
    if (auto arg = fn.getResultAttrOfType<IntegerAttr>(i, reuses))
      fn.setArgAttr(arg.getInt(),
                    bufferization::BufferizationDialect::kWritableAttrName,
                    BoolAttr::get(fn.getContext(), true));
  auto isKina = [&](NamedAttribute attr) {
    return isa_and_nonnull<KinaDialect>(attr.getNameDialect()) &&
           attr.getName() != reuses;
  };
  for (NamedAttribute attr : llvm::to_vector(fn->getDiscardableAttrs()))
    if (isKina(attr))
      fn->removeDiscardableAttr(attr.getName());
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (DictionaryAttr attrs = fn.getArgAttrDict(i))
      for (NamedAttribute attr : attrs.getValue())
        if (isKina(attr))
          fn.removeArgAttr(i, attr.getName());
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
    if (DictionaryAttr attrs = fn.getResultAttrDict(i))
      for (NamedAttribute attr : attrs.getValue())
        if (isKina(attr))
          fn.removeResultAttr(i, attr.getName());
}

namespace {
struct DropKinaAttributesPass
    : mlir::kina::impl::DropKinaAttributesPassBase<DropKinaAttributesPass> {
  void runOnOperation() override { getOperation().walk(dropKinaAttributes); }
};
} // namespace
