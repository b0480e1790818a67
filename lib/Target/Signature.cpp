//===- Signature.cpp - What a compiled module exports ---------------------===//
#include "Kina/Target/Signature.h"

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Pipelines/Pipelines.h"
#include "Kina/Target/Runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::kina;
using ::kina::describeStatus;
using ::kina::DType;
using ::kina::dtypeInfo;
using ::kina::FunctionSignature;
using ::kina::ModuleSignature;
using ::kina::Probe;
using ::kina::TensorSignature;

static FailureOr<TensorSignature> tensorSignature(func::FuncOp fn, Type type,
                                                  std::string name) {
  auto tensor = dyn_cast<KinaTensorType>(type);
  if (!tensor)
    return fn.emitError("cannot export '")
           << fn.getName() << "': " << type << " is not a kina tensor";
  return TensorSignature{
      std::move(name), tensor.getDType(),
      std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end()),
      std::nullopt};
}

/// `tensor`, a block of `global` on `mesh`: where it lies.
static ::kina::Placement placementOf(KinaTensorType global, MeshOp mesh) {
  ::kina::Placement placement;
  PlacementAttr attr = global.getPlacement();
  placement.text = attr.str();
  placement.shape.assign(global.getShape().begin(), global.getShape().end());
  auto meshIndex = [&](StringAttr axis) {
    return int(llvm::find(mesh.getAxes(), axis) - mesh.getAxes().begin());
  };
  for (int64_t d = 0; d < global.getRank(); ++d) {
    StringAttr over = attr.getSplitOf(d);
    placement.splitOver.push_back(over ? meshIndex(over) : -1);
  }
  for (StringAttr over : attr.getPartial())
    placement.partialOver.push_back(meshIndex(over));
  return placement;
}

/// The per-device form `spmd.NAME` of `name`: local tensors, each with the
/// global one it is a block of (its `kina.global` attribute, or the same
/// type when it is on the host).
static FailureOr<FunctionSignature> deviceSignature(func::FuncOp fn,
                                                    StringRef name,
                                                    MeshOp mesh) {
  StringRef globalAttr = KinaDialect::GlobalAttrHelper::getNameStr();
  auto describe = [&](Type local, TypeAttr global,
                      std::string tensorName) -> FailureOr<TensorSignature> {
    FailureOr<TensorSignature> tensor =
        tensorSignature(fn, local, std::move(tensorName));
    if (failed(tensor))
      return failure();
    auto globalType =
        cast<KinaTensorType>(global ? global.getValue() : local);
    if (globalType.getPlacement().isLocal())
      return fn.emitError("internal error: '")
             << fn.getName() << "' has a local tensor without its global type";
    if (!globalType.getPlacement().isMesh())
      globalType = KinaTensorType::get(
          fn.getContext(), globalType.getShape(), globalType.getElementType(),
          PlacementAttr::getReplicated(fn.getContext()));
    tensor->placement = placementOf(globalType, mesh);
    return tensor;
  };
  FunctionType type = fn.getFunctionType();
  FunctionSignature function{name.str(), fn.getName().str(), {}, {}, {}};
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto paramName = fn.getArgAttrOfType<StringAttr>(
        i, KinaDialect::NameAttrHelper::getNameStr());
    FailureOr<TensorSignature> param =
        describe(type.getInput(i), fn.getArgAttrOfType<TypeAttr>(i, globalAttr),
                 paramName ? paramName.str() : "arg" + std::to_string(i));
    if (failed(param))
      return failure();
    function.params.push_back(*param);
  }
  FailureOr<TensorSignature> result = describe(
      type.getResult(0), fn.getResultAttrOfType<TypeAttr>(0, globalAttr), "");
  if (failed(result))
    return failure();
  function.result = *result;
  return function;
}

/// `file:line:col` of the first file location in `loc`.
static std::string describeLocation(Location loc) {
  std::string text = "?";
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().str() + ":" + Twine(file.getLine()) + ":" +
              Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// The probes `fn` returns after its result (buildExportedForms): each
/// returned value defined by an op marked kina_probe. On a device (`mesh`
/// set), each with the placement of its global value.
static FailureOr<std::vector<Probe>> probesOf(func::FuncOp fn, MeshOp mesh) {
  std::vector<Probe> probes;
  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  for (Value value : ret.getOperands().drop_front()) {
    Operation *op = value.getDefiningOp();
    auto global =
        op ? op->getAttrOfType<TypeAttr>(kProbeGlobalAttr) : TypeAttr();
    if (!global)
      return probes; // not a probe: the result count check reports it
    FailureOr<TensorSignature> tensor =
        tensorSignature(fn, value.getType(), "");
    if (failed(tensor))
      return failure();
    if (mesh)
      tensor->placement =
          placementOf(cast<KinaTensorType>(global.getValue()), mesh);
    probes.push_back({op->getName().getStringRef().str(),
                      describeLocation(op->getLoc()), std::move(*tensor)});
  }
  return probes;
}

FailureOr<ModuleSignature> mlir::kina::getModuleSignature(ModuleOp module) {
  ModuleSignature signature;
  if (MeshOp mesh = MeshOp::lookup(module))
    for (auto [axis, size] : llvm::zip_equal(mesh.getAxes(), mesh.getShape()))
      signature.mesh.push_back({cast<StringAttr>(axis).str(), size});
  KinaDialect::EntryAttrHelper entryAttr(module.getContext());
  bool hasEntry = llvm::any_of(module.getOps<func::FuncOp>(), [&](auto fn) {
    return entryAttr.isAttrPresent(fn);
  });
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    FunctionType type = fn.getFunctionType();
    bool perDevice = fn.getName().starts_with(kPerDeviceSymbolPrefix);
    FailureOr<std::vector<Probe>> probes =
        probesOf(fn, perDevice ? MeshOp::lookup(module) : MeshOp());
    if (failed(probes))
      return failure();
    if (type.getNumResults() != 1 + probes->size())
      return fn.emitError("cannot export '")
             << fn.getName() << "': a kina function returns one tensor";
    if (perDevice) {
      FailureOr<FunctionSignature> device = deviceSignature(
          fn, fn.getName().drop_front(kPerDeviceSymbolPrefix.size()),
          MeshOp::lookup(module));
      if (failed(device))
        return failure();
      device->probes = std::move(*probes);
      signature.devices.push_back(*device);
      continue;
    }
    bool isEntry = entryAttr.isAttrPresent(fn);
    if (!isEntry && hasEntry && fn.getName() == "main")
      return fn.emitError("function 'main' clashes with the export of the "
                          "@main entry as kina_main");
    std::string exported = KINA_EXPORT_PREFIX + fn.getName().str();
    if (llvm::is_contained(kRuntimeExports, exported))
      return fn.emitError("function '")
             << fn.getName() << "' clashes with the runtime's " << exported
             << "; rename it";
    FunctionSignature function{fn.getName().str(), fn.getName().str(), {}, {}, {}};
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      auto name = fn.getArgAttrOfType<StringAttr>(
          i, KinaDialect::NameAttrHelper::getNameStr());
      auto param = tensorSignature(
          fn, type.getInput(i), name ? name.str() : "arg" + std::to_string(i));
      if (failed(param))
        return failure();
      function.params.push_back(*param);
    }
    auto result = tensorSignature(fn, type.getResult(0), "");
    if (failed(result))
      return failure();
    function.result = *result;
    function.probes = std::move(*probes);
    signature.functions.push_back(function);
    if (isEntry && fn.getName() != "main") {
      function.name = "main";
      signature.functions.push_back(function);
    }
  }
  for (const FunctionSignature &device : signature.devices)
    for (const FunctionSignature &host : signature.functions)
      if (host.name == "spmd_" + device.name)
        return module.emitError("function '")
               << host.name << "' clashes with the per-device export of '"
               << device.name << "' as " KINA_SPMD_PREFIX << device.name
               << "; rename it";
  return signature;
}

std::string mlir::kina::renderCHeader(const ModuleSignature &signature,
                                      llvm::StringRef guard) {
  auto cType = [](DType dtype) { return dtypeInfo(dtype).cType; };
  auto shape = [](const TensorSignature &t) {
    return std::string(dtypeInfo(t.dtype).name) + ::kina::formatShape(t.shape);
  };
  // Kina names are identifiers, but may be C keywords or `out`.
  static const llvm::StringSet<> cKeywords = {
      "auto",     "break",    "case",     "char",    "const",   "continue",
      "default",  "do",       "double",   "else",    "enum",    "extern",
      "float",    "for",      "goto",     "if",      "inline",  "int",
      "long",     "register", "restrict", "return",  "short",   "signed",
      "sizeof",   "static",   "struct",   "switch",  "typedef", "union",
      "unsigned", "void",     "volatile", "while",   "bool",    "true",
      "false",    "int32_t",  "int64_t",  "float_t", "_Bool",   "out"};
  auto cName = [&](std::string name) {
    while (cKeywords.contains(name))
      name += "_";
    return name;
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* Generated by kina-translate --kina-to-so --emit-header. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* Buffers are dense and row-major; the caller owns them all.\n"
     << "   Each function returns " << KINA_STATUS_OK << " ("
     << describeStatus(KINA_STATUS_OK) << "), or "
     << KINA_STATUS_GATHER_OUT_OF_RANGE << " ("
     << describeStatus(KINA_STATUS_GATHER_OUT_OF_RANGE) << "). */\n\n";
  for (const FunctionSignature &fn : signature.functions) {
    os << "/* " << fn.name << "(";
    for (size_t i = 0; i < fn.params.size(); ++i)
      os << (i ? ", " : "") << fn.params[i].name << ": " << shape(fn.params[i]);
    os << ") -> " << shape(fn.result) << " */\n";
    os << "int32_t kina_" << fn.name << "(";
    for (const TensorSignature &param : fn.params)
      os << "const " << cType(param.dtype) << " *" << cName(param.name) << ", ";
    os << cType(fn.result.dtype) << " *out);\n\n";
  }
  if (!signature.devices.empty()) {
    os << "/* Per-device forms on mesh [";
    for (size_t i = 0; i < signature.mesh.size(); ++i)
      os << (i ? ", " : "") << signature.mesh[i].name << " = "
         << signature.mesh[i].size;
    os << "]: each device calls with its own struct kina_device (Kina's\n"
       << "   ABI.h) and its blocks of the global tensors. */\n"
       << "struct kina_device;\n\n";
  }
  for (const FunctionSignature &fn : signature.devices) {
    os << "/* " << fn.name << " per device (";
    for (size_t i = 0; i < fn.params.size(); ++i)
      os << (i ? ", " : "") << fn.params[i].name << ": " << shape(fn.params[i])
         << " of " << fn.params[i].placement->text;
    os << ") -> " << shape(fn.result) << " of " << fn.result.placement->text
       << " */\n";
    os << "int32_t " KINA_SPMD_PREFIX << fn.name
       << "(const struct kina_device *device, ";
    for (const TensorSignature &param : fn.params)
      os << "const " << cType(param.dtype) << " *" << cName(param.name) << ", ";
    os << cType(fn.result.dtype) << " *out);\n\n";
  }
  os << "/* JSON describing every exported function. */\n"
     << "const char *kina_module_signature(void);\n\n"
     << "/* Threads each call may use, the caller's included. The default is\n"
     << "   $KINA_NUM_THREADS, else every usable core; n <= 0 restores it. "
        "*/\n"
     << "int32_t kina_get_num_threads(void);\n"
     << "void kina_set_num_threads(int32_t n);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}
