//===- ExportedSignature.cpp - What a compiled module exports -------------===//
//
// Read from the kina module before it is lowered: parameter names, dtypes,
// shapes, the entry, the per-device forms' placements and the probes.
//
//===----------------------------------------------------------------------===//
#include "Kina/Pipelines/ExportedForms.h"

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Sharding/Partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::kina;

static FailureOr<TensorSignature> tensorSignature(func::FuncOp fn, Type type,
                                                  std::string name) {
  auto tensor = dyn_cast<KinaTensorType>(type);
  if (!tensor)
    return fn.emitError("cannot export '")
           << fn.getName() << "': " << type << " is not a kina tensor";
  return TensorSignature{
      std::move(name), tensor.getDType(),
      std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end()),
      std::nullopt, std::nullopt};
}

/// Result `i` of `fn` written into a parameter's buffer (`@reuses`), as
/// the signature says it.
static void noteReuses(func::FuncOp fn, unsigned i, TensorSignature &result) {
  if (auto param = fn.getResultAttrOfType<IntegerAttr>(
          i, KinaDialect::ReusesAttrHelper::getNameStr()))
    result.reuses = size_t(param.getInt());
}

/// `tensor`, a block of `global` on `mesh`: where it lies.
static mlir::kina::Placement placementOf(KinaTensorType global, MeshOp mesh) {
  mlir::kina::Placement placement;
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

/// The per-device form `fn` of `name`: local tensors, each with the
/// global one it is a block of (its `kina.global` attribute, or the same
/// type when it is on the host).
static FailureOr<FunctionSignature>
deviceSignature(func::FuncOp fn, StringRef name, unsigned results,
                MeshOp mesh) {
  StringRef globalAttr = KinaDialect::GlobalAttrHelper::getNameStr();
  auto describe = [&](Type local, TypeAttr global,
                      std::string tensorName) -> FailureOr<TensorSignature> {
    std::string what =
        tensorName.empty() ? "a result" : "parameter '" + tensorName + "'";
    FailureOr<TensorSignature> tensor =
        tensorSignature(fn, local, std::move(tensorName));
    if (failed(tensor))
      return failure();
    auto globalType =
        cast<KinaTensorType>(global ? global.getValue() : local);
    // A hand-written per-device function may leave it out.
    if (globalType.getPlacement().isLocal())
      return fn.emitError("'")
             << name << "': " << what
             << " is @local without a kina.global attribute naming the "
                "global tensor it is a block of (for example {kina.global = "
                "!kina.tensor<8x3xf32, @sharded(axis=0, over=pp)>})";
    if (!globalType.getPlacement().isMesh())
      globalType = KinaTensorType::get(
          fn.getContext(), globalType.getShape(), globalType.getElementType(),
          PlacementAttr::getReplicated(fn.getContext()));
    // A per-device program may come from outside (an edited .mlir): its
    // local type must be a device's block of its global one.
    PlacementAttr placement = globalType.getPlacement();
    bool onMesh = llvm::all_of(
        llvm::concat<const StringAttr>(placement.getOver(),
                                       placement.getPartial()),
        [&](StringAttr axis) {
          return mesh && mesh.getAxisSize(axis.getValue()).has_value();
        });
    bool divides =
        onMesh && llvm::all_of(llvm::zip_equal(placement.getAxes(),
                                               placement.getOver()),
                               [&](auto split) {
                                 auto [dim, axis] = split;
                                 return globalType.getDimSize(dim) %
                                            *mesh.getAxisSize(
                                                axis.getValue()) ==
                                        0;
                               });
    auto localType = cast<KinaTensorType>(local);
    if (!divides || localType.getElementType() != globalType.getElementType() ||
        ArrayRef<int64_t>(blockShape(globalType, mesh)) !=
            localType.getShape())
      return fn.emitError("'")
             << name << "': " << local
             << " is not a device's block of its global type " << globalType
             << (mesh ? " on the mesh [" + mesh.getAxisList() + "]"
                      : std::string(" (the module has no mesh)"));
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
  for (unsigned i = 0; i < results; ++i) {
    FailureOr<TensorSignature> result = describe(
        type.getResult(i), fn.getResultAttrOfType<TypeAttr>(i, globalAttr), "");
    if (failed(result))
      return failure();
    noteReuses(fn, i, *result);
    function.results.push_back(*result);
  }
  return function;
}

/// `file:line:col` of the first file location in `loc`, marked
/// ` (adjoint)` for an op that an adjoint rule added.
static std::string describeLocation(Location loc) {
  std::string text = locationText(loc, "?");
  // An op of a reverseMode function's backward pass: its forward op's line.
  return isAdjointLoc(loc) ? text + " (adjoint)" : text;
}

/// The source name of the value an op computes (its location named by
/// the frontend, `"h"(file:line:col)`, also under an adjoint's name), or
/// empty.
static std::string sourceName(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    auto named = dyn_cast<NameLoc>(inner);
    if (!named || isAdjointLoc(named))
      return WalkResult::advance();
    name = named.getName().str();
    return WalkResult::interrupt();
  });
  return name;
}

/// The probes `fn` returns after its own results (buildExportedForms): one
/// returned value per op marked `kina.probe`, last. On a device (`mesh`
/// set), each with the placement of its global value.
static FailureOr<std::vector<Probe>> probesOf(func::FuncOp fn, MeshOp mesh) {
  KinaDialect::ProbeAttrHelper probe(fn.getContext());
  KinaDialect::ProbeGlobalAttrHelper probeGlobal(fn.getContext());
  size_t count = 0;
  fn.walk([&](Operation *op) { count += probe.isAttrPresent(op); });
  std::vector<Probe> probes;
  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  if (count >= ret.getNumOperands())
    return fn.emitError("internal error: '")
           << fn.getName() << "' returns no result besides its probes";
  for (Value value : ret.getOperands().take_back(count)) {
    Operation *op = value.getDefiningOp();
    TypeAttr global = op ? probeGlobal.getAttr(op) : TypeAttr();
    if (!global)
      return fn.emitError("internal error: '")
             << fn.getName() << "' returns a probe without its global type";
    FailureOr<TensorSignature> tensor =
        tensorSignature(fn, value.getType(), "");
    if (failed(tensor))
      return failure();
    if (mesh)
      tensor->placement =
          placementOf(cast<KinaTensorType>(global.getValue()), mesh);
    probes.push_back({op->getName().getStringRef().str(),
                      describeLocation(op->getLoc()),
                      sourceName(op->getLoc()), std::move(*tensor)});
  }
  return probes;
}

FailureOr<ModuleSignature> mlir::kina::getModuleSignature(ModuleOp module) {
  ModuleSignature signature;
  if (MeshOp mesh = MeshOp::lookup(module))
    for (auto [axis, size] : llvm::zip_equal(mesh.getAxes(), mesh.getShape()))
      signature.mesh.push_back({cast<StringAttr>(axis).str(), size});
  KinaDialect::EntryAttrHelper entryAttr(module.getContext());
  KinaDialect::PerDeviceAttrHelper perDeviceAttr(module.getContext());
  bool hasEntry = llvm::any_of(module.getOps<func::FuncOp>(), [&](auto fn) {
    return entryAttr.isAttrPresent(fn);
  });
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    FunctionType type = fn.getFunctionType();
    StringAttr perDevice = perDeviceAttr.getAttr(fn);
    FailureOr<std::vector<Probe>> probes =
        probesOf(fn, perDevice ? MeshOp::lookup(module) : MeshOp());
    if (failed(probes))
      return failure();
    unsigned results = type.getNumResults() - probes->size();
    if (perDevice) {
      FailureOr<FunctionSignature> device = deviceSignature(
          fn, perDevice.getValue(), results, MeshOp::lookup(module));
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
    if (llvm::is_contained(mlir::kina::kRuntimeExports, exported))
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
    for (unsigned i = 0; i < results; ++i) {
      auto result = tensorSignature(fn, type.getResult(i), "");
      if (failed(result))
        return failure();
      noteReuses(fn, i, *result);
      function.results.push_back(*result);
    }
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

