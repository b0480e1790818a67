//===- Pipeline.cpp - kina.pipeline: a training step as stages -----------===//
//
// The rules of a pipeline declaration (docs/language.md, "Pipelines"): its
// stages are functions of the module whose types chain, the last returns a
// rank-0 float loss, and every parameter has one role.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::kina;

/// Parameter `i` of `fn` as the source names it.
static std::string paramName(func::FuncOp fn, unsigned i) {
  if (auto name = fn.getArgAttrOfType<StringAttr>(
          i, KinaDialect::NameAttrHelper::getNameStr()))
    return name.str();
  return "#" + std::to_string(i);
}

/// `F32 [4, 8]`: a tensor's element type and shape, which is what must
/// match between stages (a stage on a mesh may place it otherwise).
static std::string describe(KinaTensorType type) {
  std::string element;
  llvm::raw_string_ostream(element) << type.getElementType();
  std::string text = StringRef(element).upper() + " [";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(type.getShape(), os);
  os << "]";
  return text;
}

LogicalResult PipelineOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto fail = [&] {
    return emitError() << "pipeline '" << getSymName() << "': ";
  };
  auto names = [](ArrayAttr list) {
    llvm::StringSet<> set;
    for (Attribute a : list)
      set.insert(cast<StringAttr>(a).getValue());
    return set;
  };
  llvm::StringSet<> batch = names(getBatch()),
                    constants = names(getConstants()),
                    shared = names(getShared());
  // Each name one role.
  for (auto [first, firstList, second, secondList] :
       {std::tuple{"batch", &batch, "constants", &constants},
        std::tuple{"batch", &batch, "shared", &shared},
        std::tuple{"constants", &constants, "shared", &shared}})
    for (const auto &entry : *firstList)
      if (secondList->contains(entry.getKey()))
        return fail() << "'" << entry.getKey() << "' is named in both "
                      << first << " and " << second
                      << "; a parameter has one role";
  llvm::StringSet<> taken;
  llvm::StringMap<unsigned> weightStage;
  llvm::StringMap<unsigned> readers; // a shared weight's stages
  SmallVector<func::FuncOp> stages;
  ArrayAttr refs = getStages();
  if (refs.empty())
    return fail() << "names no stage";
  // The rules are the kina level's: once a stage is lowered (its types
  // no longer kina tensors), the declaration waits to be erased.
  auto kinaLevel = [](Type t) { return isa<KinaTensorType>(t); };
  for (Attribute ref : refs)
    if (auto fn = symbols.lookupNearestSymbolFrom<func::FuncOp>(
            *this, cast<FlatSymbolRefAttr>(ref)))
      if (!llvm::all_of(fn.getFunctionType().getInputs(), kinaLevel) ||
          !llvm::all_of(fn.getFunctionType().getResults(), kinaLevel))
        return success();
  for (auto [index, ref] : llvm::enumerate(refs)) {
    auto symbol = cast<FlatSymbolRefAttr>(ref);
    auto fn = symbols.lookupNearestSymbolFrom<func::FuncOp>(*this, symbol);
    auto stage = [&, index = index] {
      return fail() << "stage " << index << " ('" << symbol.getValue()
                    << "'): ";
    };
    if (!fn)
      return fail() << "stage " << index << ": no function '"
                    << symbol.getValue() << "' in the module";
    if (llvm::is_contained(stages, fn))
      return stage() << "named as two stages";
    FunctionType type = fn.getFunctionType();
    if (type.getNumResults() != 1)
      return stage() << "returns " << type.getNumResults()
                     << " results; a stage returns one";
    auto result = cast<KinaTensorType>(type.getResult(0));
    bool last = index + 1 == refs.size();
    if (last && (result.getRank() != 0 ||
                 !isa<Float32Type, Float64Type>(result.getElementType())))
      return stage() << "is the last stage, which returns the microbatch's "
                        "loss, a rank-0 F32 or F64; it returns "
                     << describe(result);
    unsigned first = 0;
    if (index > 0) {
      auto before =
          cast<KinaTensorType>(stages.back().getFunctionType().getResult(0));
      if (type.getNumInputs() == 0)
        return stage() << "must take stage " << index - 1 << "'s result ("
                       << describe(before)
                       << ") as its first parameter; it takes nothing";
      auto input = cast<KinaTensorType>(type.getInput(0));
      std::string inputName = paramName(fn, 0);
      if (batch.contains(inputName) || constants.contains(inputName))
        return stage() << "must take stage " << index - 1
                       << "'s result as its first parameter; it takes '"
                       << inputName << "', named as "
                       << (batch.contains(inputName) ? "batch" : "a constant");
      if (input.getElementType() != before.getElementType() ||
          input.getShape() != before.getShape())
        return stage() << "must take stage " << index - 1 << "'s result ("
                       << describe(before) << ") as its first parameter; '"
                       << inputName << "' is " << describe(input);
      first = 1;
    }
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      std::string name = paramName(fn, i);
      taken.insert(name);
      if (i < first || batch.contains(name) || constants.contains(name))
        continue;
      auto param = cast<KinaTensorType>(type.getInput(i));
      if (!isa<FloatType>(param.getElementType()))
        return stage() << "'" << name << "' is " << describe(param)
                       << ", which has no gradient; an integer parameter is "
                          "data: name it in batch or constants";
      ++readers[name];
      auto [seen, inserted] = weightStage.try_emplace(name, index);
      if (!inserted && !shared.contains(name))
        return fail() << "weight '" << name << "' is a parameter of stages "
                      << seen->second << " and " << index
                      << "; a weight belongs to one stage (rename one, "
                         "or name it in shared=[...] to tie it)";
    }
    stages.push_back(fn);
  }
  for (auto [what, list] :
       {std::pair{"batch", getBatch()}, std::pair{"constants", getConstants()},
        std::pair{"shared", getShared()}})
    for (Attribute a : list)
      if (!taken.contains(cast<StringAttr>(a).getValue()))
        return fail() << what << " names '" << cast<StringAttr>(a).getValue()
                      << "', which no stage takes";
  for (Attribute a : getShared())
    if (readers.lookup(cast<StringAttr>(a).getValue()) == 1)
      return fail() << "shared names '" << cast<StringAttr>(a).getValue()
                    << "', which only stage "
                    << weightStage.lookup(cast<StringAttr>(a).getValue())
                    << " takes; shared ties a weight several stages read";
  // A function left out of the list: one no stage is, that nothing calls,
  // taking one stage's result and returning what the next takes (a block
  // of layers between them).
  auto module = cast<ModuleOp>((*this)->getParentOp());
  auto same = [](Type a, Type b) {
    auto x = cast<KinaTensorType>(a), y = cast<KinaTensorType>(b);
    return x.getElementType() == y.getElementType() &&
           x.getShape() == y.getShape();
  };
  for (auto fn : module.getOps<func::FuncOp>()) {
    FunctionType type = fn.getFunctionType();
    if (llvm::is_contained(stages, fn) || type.getNumInputs() == 0 ||
        type.getNumResults() != 1 || fn.isDeclaration() ||
        !llvm::all_of(type.getInputs(), llvm::IsaPred<KinaTensorType>) ||
        !isa<KinaTensorType>(type.getResult(0)) ||
        !SymbolTable::symbolKnownUseEmpty(fn, module))
      continue;
    for (size_t k = 1; k < stages.size(); ++k) {
      FunctionType before = stages[k - 1].getFunctionType();
      FunctionType after = stages[k].getFunctionType();
      if (same(type.getInput(0), before.getResult(0)) &&
          same(type.getResult(0), after.getInput(0)))
        return fail() << "'" << fn.getSymName()
                      << "' is no stage, yet it takes stage " << k - 1
                      << "'s result and returns what stage " << k
                      << " takes, and nothing calls it: a stage left out? "
                         "(list it between '"
                      << stages[k - 1].getSymName() << "' and '"
                      << stages[k].getSymName()
                      << "', or call it from a stage)";
    }
  }
  return success();
}
