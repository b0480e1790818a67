//===- SourceLocations.cpp - `#loc(...)` comments -------------------------===//

#include "Kina/Frontend/SourceLocations.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::kina;

/// The comment's opening; a comment that does not continue as
/// `"FILE":LINE:COL)` is an ordinary comment.
static constexpr llvm::StringLiteral kLocationComment = "#loc(\"";

/// `FILE":LINE:COL)...` -> (FILE, LINE, COL).
static std::optional<std::tuple<llvm::StringRef, unsigned, unsigned>>
parseDirective(llvm::StringRef rest) {
  size_t quote = rest.find("\":");
  if (quote == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef file = rest.take_front(quote);
  llvm::StringRef numbers = rest.drop_front(quote + 2);
  unsigned line = 0, col = 0;
  if (numbers.consumeInteger(10, line) || !numbers.consume_front(":") ||
      numbers.consumeInteger(10, col) || !numbers.starts_with(")"))
    return std::nullopt;
  return std::make_tuple(file, line, col);
}

SourceLocations::SourceLocations(MLIRContext &context,
                                 llvm::StringRef filename,
                                 llvm::StringRef source)
    : context(context), filename(filename.str()) {
  unsigned lineNumber = 0;
  while (!source.empty()) {
    auto [line, rest] = source.split('\n');
    source = rest;
    ++lineNumber;
    // `.kina` has no string literals: the first `#` opens the comment.
    size_t comment = line.find('#');
    if (comment == llvm::StringRef::npos)
      continue;
    llvm::StringRef text = line.drop_front(comment);
    if (!text.consume_front(kLocationComment))
      continue;
    if (auto directive = parseDirective(text)) {
      auto [file, at, col] = *directive;
      directed.try_emplace(lineNumber,
                           FileLineColLoc::get(&context, file, at, col));
    }
  }
}

Location SourceLocations::at(unsigned line, unsigned col) const {
  auto it = directed.find(line);
  if (it != directed.end())
    return it->second;
  return FileLineColLoc::get(&context, filename, line, col);
}
