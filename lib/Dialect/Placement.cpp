//===- Placement.cpp - Where a kina tensor lives --------------------------===//
//
// The placement attribute: its invariants, its source-like syntax
// (`@sharded(axis=1, over=vocab)`) and the small algebra passes use to
// move between placements.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::kina;

PlacementAttr PlacementAttr::getHost(MLIRContext *context) {
  return get(context, PlacementKind::host, {}, {}, {});
}
PlacementAttr PlacementAttr::getReplicated(MLIRContext *context) {
  return get(context, PlacementKind::mesh, {}, {}, {});
}
PlacementAttr PlacementAttr::getAuto(MLIRContext *context) {
  return get(context, PlacementKind::auto_, {}, {}, {});
}
bool mlir::kina::anyPlacement(FunctionType type,
                              llvm::function_ref<bool(PlacementAttr)> pred) {
  return llvm::any_of(
      llvm::concat<const Type>(type.getInputs(), type.getResults()),
      [&](Type t) {
        auto tensor = dyn_cast<KinaTensorType>(t);
        return tensor && pred(tensor.getPlacement());
      });
}

PlacementAttr PlacementAttr::getLocal(MLIRContext *context) {
  return get(context, PlacementKind::local, {}, {}, {});
}

PlacementAttr PlacementAttr::getMesh(MLIRContext *context,
                                     ArrayRef<int64_t> axes,
                                     ArrayRef<StringAttr> over,
                                     ArrayRef<StringAttr> partial) {
  // One spelling per placement: splits by tensor axis, partial by name.
  SmallVector<std::pair<int64_t, StringAttr>> splits;
  for (auto [axis, name] : llvm::zip_equal(axes, over))
    splits.push_back({axis, name});
  llvm::sort(splits, [](auto &a, auto &b) { return a.first < b.first; });
  SmallVector<int64_t> sortedAxes;
  SmallVector<StringAttr> sortedOver;
  for (auto [axis, name] : splits) {
    sortedAxes.push_back(axis);
    sortedOver.push_back(name);
  }
  SmallVector<StringAttr> sortedPartial(partial);
  llvm::sort(sortedPartial, [](StringAttr a, StringAttr b) {
    return a.getValue() < b.getValue();
  });
  return get(context, PlacementKind::mesh, sortedAxes, sortedOver,
             sortedPartial);
}

LogicalResult
PlacementAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      PlacementKind kind, ArrayRef<int64_t> axes,
                      ArrayRef<StringAttr> over, ArrayRef<StringAttr> partial) {
  if (kind != PlacementKind::mesh) {
    if (!axes.empty() || !over.empty() || !partial.empty())
      return emitError() << "only a mesh placement splits axes or is partial";
    return success();
  }
  if (axes.size() != over.size())
    return emitError() << "a placement names one mesh axis per split axis";
  llvm::SmallSet<int64_t, 4> seenAxes;
  for (int64_t axis : axes) {
    if (axis < 0)
      return emitError() << "split axis " << axis << " is negative";
    if (!seenAxes.insert(axis).second)
      return emitError() << "tensor axis " << axis
                         << " is split over two mesh axes, which is not "
                            "supported";
  }
  llvm::SmallSet<StringRef, 4> seenNames;
  for (StringAttr name : llvm::concat<const StringAttr>(over, partial)) {
    if (!name || name.empty())
      return emitError() << "a placement names an empty mesh axis";
    if (!seenNames.insert(name.getValue()).second)
      return emitError() << "mesh axis '" << name.getValue()
                         << (llvm::is_contained(partial, name)
                                 ? "' is named twice among the splits and "
                                   "partial sums (a value is split or summed "
                                   "over a mesh axis, not both)"
                                 : "' is used for two tensor axes");
  }
  return success();
}

StringAttr PlacementAttr::getSplitOf(int64_t axis) const {
  for (auto [a, name] : llvm::zip_equal(getAxes(), getOver()))
    if (a == axis)
      return name;
  return {};
}

std::optional<int64_t>
PlacementAttr::getAxisSplitBy(StringAttr meshAxis) const {
  for (auto [a, name] : llvm::zip_equal(getAxes(), getOver()))
    if (name == meshAxis)
      return a;
  return std::nullopt;
}

bool PlacementAttr::isPartialOver(StringAttr meshAxis) const {
  return llvm::is_contained(getPartial(), meshAxis);
}

PlacementAttr PlacementAttr::withSplit(int64_t axis,
                                       StringAttr meshAxis) const {
  PlacementAttr base = withoutSplit(axis);
  SmallVector<int64_t> axes(base.getAxes());
  SmallVector<StringAttr> over(base.getOver());
  axes.push_back(axis);
  over.push_back(meshAxis);
  return getMesh(getContext(), axes, over, getPartial());
}

PlacementAttr PlacementAttr::withoutSplit(int64_t axis) const {
  SmallVector<int64_t> axes;
  SmallVector<StringAttr> over;
  for (auto [a, name] : llvm::zip_equal(getAxes(), getOver()))
    if (a != axis) {
      axes.push_back(a);
      over.push_back(name);
    }
  return getMesh(getContext(), axes, over, getPartial());
}

PlacementAttr PlacementAttr::withPartial(StringAttr meshAxis) const {
  SmallVector<StringAttr> partial(getPartial());
  if (!llvm::is_contained(partial, meshAxis))
    partial.push_back(meshAxis);
  return getMesh(getContext(), getAxes(), getOver(), partial);
}

PlacementAttr PlacementAttr::withoutPartial(StringAttr meshAxis) const {
  SmallVector<StringAttr> partial;
  for (StringAttr name : getPartial())
    if (name != meshAxis)
      partial.push_back(name);
  return getMesh(getContext(), getAxes(), getOver(), partial);
}

//===----------------------------------------------------------------------===//
// Syntax: @host, @replicated, @auto, @local,
//   @sharded(axis=A | [A...], over=M | [M...] [, partial=M | [M...]]),
//   @partial(over=M | [M...])
// `over` (or `@partial`'s whole parenthesis) is left out when it names
// only the default axis of a one-axis mesh.
//===----------------------------------------------------------------------===//

/// `M` or `[M1, M2]`; the default axis alone prints nothing when `elide`.
template <typename Range, typename Print>
static void printList(llvm::raw_ostream &os, const Range &items, Print print) {
  if (items.size() == 1) {
    print(items.front());
    return;
  }
  os << "[";
  llvm::interleaveComma(items, os, print);
  os << "]";
}

static bool isDefaultAxisOnly(ArrayRef<StringAttr> names) {
  return names.size() == 1 && names.front().getValue() == kDefaultMeshAxis;
}

void mlir::kina::printPlacement(llvm::raw_ostream &os,
                                PlacementAttr placement) {
  auto printName = [&](StringAttr name) { os << name.getValue(); };
  switch (placement.getKind()) {
  case PlacementKind::host:
    os << "@host";
    return;
  case PlacementKind::auto_:
    os << "@auto";
    return;
  case PlacementKind::local:
    os << "@local";
    return;
  case PlacementKind::mesh:
    break;
  }
  ArrayRef<StringAttr> over = placement.getOver();
  ArrayRef<StringAttr> partial = placement.getPartial();
  if (placement.getAxes().empty()) {
    if (partial.empty()) {
      os << "@replicated";
      return;
    }
    os << "@partial";
    if (!isDefaultAxisOnly(partial)) {
      os << "(over=";
      printList(os, partial, printName);
      os << ")";
    }
    return;
  }
  os << "@sharded(axis=";
  printList(os, placement.getAxes(), [&](int64_t axis) { os << axis; });
  if (!isDefaultAxisOnly(over)) {
    os << ", over=";
    printList(os, over, printName);
  }
  if (!partial.empty()) {
    os << ", partial=";
    printList(os, partial, printName);
  }
  os << ")";
}

std::string PlacementAttr::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  printPlacement(os, *this);
  return text;
}

/// `item` or `[item, ...]`.
static ParseResult parseList(AsmParser &parser,
                             function_ref<ParseResult()> parseItem) {
  if (succeeded(parser.parseOptionalLSquare()))
    return failure(parser.parseCommaSeparatedList(parseItem) ||
                   parser.parseRSquare());
  return parseItem();
}

FailureOr<PlacementAttr> mlir::kina::parsePlacement(AsmParser &parser) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringAttr word;
  if (parser.parseSymbolName(word))
    return failure();
  StringRef kind = word.getValue();
  if (kind == "host")
    return PlacementAttr::getHost(context);
  if (kind == "auto")
    return PlacementAttr::getAuto(context);
  if (kind == "local")
    return PlacementAttr::getLocal(context);
  if (kind == "replicated")
    return PlacementAttr::getReplicated(context);
  if (kind != "sharded" && kind != "partial") {
    parser.emitError(loc) << "unknown placement @" << kind;
    return failure();
  }
  SmallVector<int64_t> axes;
  SmallVector<StringAttr> over, partial;
  auto parseNames = [&](SmallVectorImpl<StringAttr> &into) {
    return parseList(parser, [&]() -> ParseResult {
      std::string name;
      if (parser.parseKeywordOrString(&name))
        return failure();
      into.push_back(StringAttr::get(context, name));
      return success();
    });
  };
  auto defaultAxis = [&] { return StringAttr::get(context, kDefaultMeshAxis); };
  if (kind == "partial") {
    if (succeeded(parser.parseOptionalLParen())) {
      if (parser.parseKeyword("over") || parser.parseEqual() ||
          parseNames(partial) || parser.parseRParen())
        return failure();
    } else {
      partial.push_back(defaultAxis());
    }
  } else {
    if (parser.parseLParen() || parser.parseKeyword("axis") ||
        parser.parseEqual() || parseList(parser, [&]() -> ParseResult {
          return parser.parseInteger(axes.emplace_back());
        }))
      return failure();
    while (succeeded(parser.parseOptionalComma())) {
      StringRef key;
      if (parser.parseKeyword(&key) || parser.parseEqual())
        return failure();
      if (key == "over" && over.empty()) {
        if (parseNames(over))
          return failure();
      } else if (key == "partial" && partial.empty()) {
        if (parseNames(partial))
          return failure();
      } else {
        parser.emitError(loc) << "unexpected '" << key << "' in @sharded";
        return failure();
      }
    }
    if (parser.parseRParen())
      return failure();
    if (over.empty())
      over.assign(axes.size(), defaultAxis());
  }
  if (failed(PlacementAttr::verify([&] { return parser.emitError(loc); },
                                   PlacementKind::mesh, axes, over, partial)))
    return failure();
  return PlacementAttr::getMesh(context, axes, over, partial);
}

Attribute PlacementAttr::parse(AsmParser &parser, Type) {
  FailureOr<PlacementAttr> placement;
  if (parser.parseLess() || failed(placement = parsePlacement(parser)) ||
      parser.parseGreater())
    return {};
  return *placement;
}

void PlacementAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printPlacement(printer.getStream(), *this);
  printer << ">";
}
