//===- Mesh.cpp - The mesh of devices and placements on it ----------------===//
//
// `kina.mesh @mesh [heads = 2, vocab = 2]`: its syntax and invariants, and
// the check of any placement against it (mesh axes exist, split dims
// divide), shared by the ops' verifiers and the frontend.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::kina;

/// The one symbol name of a module's mesh.
static constexpr llvm::StringLiteral kMeshSymbol = "mesh";

ParseResult MeshOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  SmallVector<int64_t> shape;
  SmallVector<Attribute> axes;
  if (parser.parseSymbolName(name) ||
      parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square,
          [&]() -> ParseResult {
            std::string axis;
            if (parser.parseKeywordOrString(&axis) || parser.parseEqual() ||
                parser.parseInteger(shape.emplace_back()))
              return failure();
            axes.push_back(parser.getBuilder().getStringAttr(axis));
            return success();
          }) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Builder &b = parser.getBuilder();
  auto &props = result.getOrAddProperties<Properties>();
  props.sym_name = name;
  props.shape = b.getDenseI64ArrayAttr(shape);
  props.axes = b.getArrayAttr(axes);
  return success();
}

void MeshOp::print(OpAsmPrinter &printer) {
  printer << " ";
  printer.printSymbolName(getSymName());
  printer << " [";
  llvm::interleaveComma(
      llvm::zip_equal(getAxes(), getShape()), printer, [&](auto axisAndSize) {
        auto [axis, size] = axisAndSize;
        printer.printKeywordOrString(cast<StringAttr>(axis).getValue());
        printer << " = " << size;
      });
  printer << "]";
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                {"sym_name", "shape", "axes"});
}

LogicalResult MeshOp::verifyAxes(ArrayRef<int64_t> shape,
                                 ArrayRef<StringRef> names,
                                 EmitErrorFn emitError) {
  if (shape.empty())
    return emitError() << "a mesh needs at least one axis";
  if (shape.size() != names.size())
    return emitError() << "a mesh of " << shape.size()
                       << " axes needs one name per axis (axes=[...]), got "
                       << names.size();
  llvm::StringSet<> seen;
  int64_t devices = 1;
  for (auto [name, size] : llvm::zip_equal(names, shape)) {
    if (name.empty())
      return emitError() << "a mesh axis name is empty";
    if (!seen.insert(name).second)
      return emitError() << "mesh axis name '" << name << "' is repeated";
    if (size < 1)
      return emitError() << "mesh axis '" << name << "' has " << size
                         << " devices; each axis needs at least one";
    if (size > KINA_MAX_MESH_DEVICES ||
        (devices *= size) > KINA_MAX_MESH_DEVICES)
      return emitError() << "the mesh " << formatShape(shape)
                         << " has more than " << KINA_MAX_MESH_DEVICES
                         << " devices, the most supported";
  }
  return success();
}

LogicalResult MeshOp::verify() {
  if (getSymName() != kMeshSymbol)
    return emitOpError("the mesh is named @") << kMeshSymbol;
  SmallVector<StringRef> names;
  for (Attribute axis : getAxes())
    names.push_back(cast<StringAttr>(axis).getValue());
  if (failed(verifyAxes(getShape(), names, [&] { return emitOpError(); })))
    return failure();
  auto module = cast<ModuleOp>((*this)->getParentOp());
  if (*module.getOps<MeshOp>().begin() != *this)
    return emitOpError("a module declares at most one mesh");
  return success();
}

std::optional<int64_t> MeshOp::getAxisSize(StringRef name) {
  for (auto [axis, size] : llvm::zip_equal(getAxes(), getShape()))
    if (cast<StringAttr>(axis).getValue() == name)
      return size;
  return std::nullopt;
}

std::optional<int64_t> MeshOp::getAxisStride(StringRef name) {
  std::optional<int64_t> stride;
  for (auto [axis, size] : llvm::zip_equal(getAxes(), getShape())) {
    if (stride)
      *stride *= size;
    else if (cast<StringAttr>(axis).getValue() == name)
      stride = 1;
  }
  return stride;
}

int64_t MeshOp::getNumDevices() {
  int64_t devices = 1;
  for (int64_t size : getShape())
    // Bounded: sizes are checked one by one, so saturate past the limit.
    devices = std::min<int64_t>(devices * std::max<int64_t>(size, 0),
                                int64_t(KINA_MAX_MESH_DEVICES) + 1);
  return devices;
}

std::string MeshOp::getAxisList() {
  std::string text;
  for (Attribute axis : getAxes())
    text += (text.empty() ? "" : ", ") + cast<StringAttr>(axis).str();
  return text;
}

MeshOp MeshOp::lookup(Operation *from) {
  auto module = from ? dyn_cast<ModuleOp>(from) : ModuleOp();
  if (!module && from)
    module = from->getParentOfType<ModuleOp>();
  if (!module)
    return {};
  auto meshes = module.getOps<MeshOp>();
  return meshes.empty() ? MeshOp() : *meshes.begin();
}

LogicalResult mlir::kina::verifyPlacement(KinaTensorType type, MeshOp mesh,
                                          EmitErrorFn emitError) {
  PlacementAttr placement = type.getPlacement();
  if (placement.isHost())
    return success();
  if (!mesh)
    return emitError() << "placement " << placement.str()
                       << " needs a mesh, and the program declares none "
                          "(write @mesh([...]) before the first function)";
  for (StringAttr name : llvm::concat<const StringAttr>(placement.getOver(),
                                                        placement.getPartial()))
    if (!mesh.getAxisSize(name.getValue()))
      return emitError() << "placement " << placement.str()
                         << " names mesh axis '" << name.getValue()
                         << "', but the mesh's axes are " << mesh.getAxisList();
  for (auto [axis, name] :
       llvm::zip_equal(placement.getAxes(), placement.getOver())) {
    int64_t size = *mesh.getAxisSize(name.getValue());
    if (size < 1) // an invalid mesh, which its own verifier reports
      return failure();
    if (type.getDimSize(axis) % size != 0)
      return emitError() << "placement " << placement.str() << " cuts axis "
                         << axis << " of size " << type.getDimSize(axis)
                         << " over mesh axis '" << name.getValue()
                         << "' of size " << size
                         << ", which does not divide it";
  }
  return success();
}
