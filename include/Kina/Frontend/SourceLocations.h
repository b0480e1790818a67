//===- SourceLocations.h - Where each source position comes from -*- C++ -*-===//
//
// A `.kina` position is its own FileLineColLoc, unless its line carries a
// location comment, `#loc("FILE":LINE:COL)`: then every op and error of
// that line is located there. `kina.jit` writes one on each statement it
// traces, so remarks, errors and located IR name the user's Python line
// (as C's `#line` names the file a generated line stands for).
//
//===----------------------------------------------------------------------===//

#ifndef KINA_FRONTEND_SOURCELOCATIONS_H
#define KINA_FRONTEND_SOURCELOCATIONS_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::kina {

class SourceLocations {
public:
  SourceLocations(MLIRContext &context, llvm::StringRef filename,
                  llvm::StringRef source);

  /// The location of `line:col` (1-based) of the source.
  Location at(unsigned line, unsigned col) const;

private:
  MLIRContext &context;
  std::string filename;
  /// Source line -> the position its `#loc(...)` comment names.
  llvm::DenseMap<unsigned, Location> directed;
};

} // namespace mlir::kina

#endif // KINA_FRONTEND_SOURCELOCATIONS_H
