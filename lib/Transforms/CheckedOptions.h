//===- CheckedOptions.h - Passes that reject bad options by name -*- C++
//-*-===//
#ifndef KINA_LIB_TRANSFORMS_CHECKEDOPTIONS_H
#define KINA_LIB_TRANSFORMS_CHECKEDOPTIONS_H

#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace mlir::kina::detail {

/// A generated pass base whose options are checked: `badOption()` says
/// what is wrong (naming the option), which fails the pipeline's parsing
/// (`--pass-pipeline=...{tile-m=0}`), or, for a pass built in C++ with bad
/// options, the run, with an error at the operation.
template <typename Base> struct CheckedOptions : Base {
  using Base::Base;

  virtual std::optional<std::string> badOption() const = 0;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    if (std::optional<std::string> bad = badOption())
      return errorHandler(this->getArgument() + ": " + *bad);
    return success();
  }

  /// False, after an error, when the options are bad.
  bool optionsAreValid() {
    std::optional<std::string> bad = badOption();
    if (!bad)
      return true;
    this->getOperation()->emitError() << this->getArgument() << ": " << *bad;
    this->signalPassFailure();
    return false;
  }
};

} // namespace mlir::kina::detail

#endif // KINA_LIB_TRANSFORMS_CHECKEDOPTIONS_H
