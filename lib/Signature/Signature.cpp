//===- Signature.cpp - The signature JSON, written and read ---------------===//
#include "Kina/Signature/Signature.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir::kina;

int64_t TensorSignature::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

size_t FunctionSignature::numOutputs() const {
  size_t outputs = probes.size();
  for (const TensorSignature &result : results)
    outputs += !result.reuses;
  return outputs;
}

bool FunctionSignature::isDonated(size_t param) const {
  for (const TensorSignature &result : results)
    if (result.reuses == param)
      return true;
  return false;
}

int64_t ModuleSignature::numDevices() const {
  int64_t devices = 1;
  for (const MeshAxis &axis : mesh)
    devices *= axis.size;
  return devices;
}

static llvm::json::Object renderTensor(const TensorSignature &t, bool named) {
  llvm::json::Object object;
  if (named)
    object["name"] = t.name;
  object["dtype"] = std::string(dtypeInfo(t.dtype).name);
  object["shape"] = llvm::json::Array(t.shape);
  if (t.placement)
    object["global"] =
        llvm::json::Object{{"placement", t.placement->text},
                           {"shape", llvm::json::Array(t.placement->shape)},
                           {"split", llvm::json::Array(t.placement->splitOver)},
                           {"partial",
                            llvm::json::Array(t.placement->partialOver)}};
  return object;
}

static llvm::json::Array
renderFunctions(const std::vector<FunctionSignature> &list) {
  llvm::json::Array functions;
  for (const FunctionSignature &fn : list) {
    llvm::json::Array params;
    for (const TensorSignature &param : fn.params)
      params.push_back(renderTensor(param, true));
    llvm::json::Array results;
    for (const TensorSignature &result : fn.results) {
      llvm::json::Object entry = renderTensor(result, false);
      if (result.reuses)
        entry["reuses"] = fn.params[*result.reuses].name;
      results.push_back(std::move(entry));
    }
    llvm::json::Object function{{"name", fn.name},
                                {"params", std::move(params)},
                                {"results", std::move(results)}};
    if (fn.results.size() == 1)
      function["result"] = renderTensor(fn.results.front(), false);
    if (!fn.probes.empty()) {
      llvm::json::Array probes;
      for (const Probe &probe : fn.probes) {
        llvm::json::Object entry{{"op", probe.op},
                                 {"location", probe.location},
                                 {"tensor", renderTensor(probe.tensor, false)}};
        if (!probe.name.empty())
          entry["name"] = probe.name;
        probes.push_back(std::move(entry));
      }
      function["probes"] = std::move(probes);
    }
    functions.push_back(std::move(function));
  }
  return functions;
}

std::string mlir::kina::renderSignatureJson(const ModuleSignature &signature) {
  llvm::json::Object root{{"functions", renderFunctions(signature.functions)}};
  if (!signature.mesh.empty()) {
    llvm::json::Array mesh;
    for (const MeshAxis &axis : signature.mesh)
      mesh.push_back(llvm::json::Object{{"name", axis.name}, {"size", axis.size}});
    root["mesh"] = std::move(mesh);
    root["devices"] = renderFunctions(signature.devices);
  }
  return llvm::formatv("{0}", llvm::json::Value(std::move(root)));
}

static std::optional<std::vector<int64_t>>
parseIntegers(const llvm::json::Array *array) {
  if (!array)
    return std::nullopt;
  std::vector<int64_t> values;
  for (const llvm::json::Value &value : *array) {
    std::optional<int64_t> number = value.getAsInteger();
    if (!number)
      return std::nullopt;
    values.push_back(*number);
  }
  return values;
}

/// A device tensor's global placement, consistent with its local shape
/// and the mesh: a loader may cut and assemble blocks by it.
static bool parsePlacement(const llvm::json::Object *object,
                           const std::vector<MeshAxis> &mesh,
                           TensorSignature &tensor) {
  if (!object)
    return false;
  auto text = object->getString("placement");
  auto shape = parseIntegers(object->getArray("shape"));
  auto split = parseIntegers(object->getArray("split"));
  auto partial = parseIntegers(object->getArray("partial"));
  if (!text || !shape || !split || !partial ||
      shape->size() != tensor.shape.size() || split->size() != shape->size())
    return false;
  Placement placement{text->str(), *shape, {}, {}};
  int64_t axes = int64_t(mesh.size());
  for (size_t d = 0; d < shape->size(); ++d) {
    int64_t over = (*split)[d];
    if (over < -1 || over >= axes)
      return false;
    int64_t factor = over < 0 ? 1 : mesh[over].size;
    if ((*shape)[d] != tensor.shape[d] * factor)
      return false;
    placement.splitOver.push_back(int(over));
  }
  for (int64_t over : *partial) {
    if (over < 0 || over >= axes)
      return false;
    placement.partialOver.push_back(int(over));
  }
  tensor.placement = std::move(placement);
  return true;
}

static bool parseTensor(const llvm::json::Object *object, bool named,
                        const std::vector<MeshAxis> *mesh,
                        TensorSignature &tensor) {
  if (!object)
    return false;
  auto dtypeName = object->getString("dtype");
  std::optional<DType> dtype =
      dtypeName ? dtypeNamed(std::string_view(*dtypeName)) : std::nullopt;
  const llvm::json::Array *shape = object->getArray("shape");
  if (!dtype || !shape)
    return false;
  tensor.dtype = *dtype;
  if (named) {
    auto name = object->getString("name");
    if (!name)
      return false;
    tensor.name = name->str();
  }
  int64_t count = 1;
  for (const llvm::json::Value &dim : *shape) {
    std::optional<int64_t> value = dim.getAsInteger();
    // The same bounds the compiler enforces on every type.
    if (!value || *value <= 0 || *value > kMaxElements / count)
      return false;
    count *= *value;
    tensor.shape.push_back(*value);
  }
  return !mesh || parsePlacement(object->getObject("global"), *mesh, tensor);
}

/// `mesh` is set for the list of per-device functions.
static bool parseFunctions(const llvm::json::Array *functions,
                           const std::vector<MeshAxis> *mesh,
                           std::vector<FunctionSignature> &into,
                           std::string &error) {
  for (const llvm::json::Value &entry : *functions) {
    const llvm::json::Object *object = entry.getAsObject();
    FunctionSignature fn;
    auto name = object ? object->getString("name") : std::nullopt;
    const llvm::json::Array *params =
        object ? object->getArray("params") : nullptr;
    const llvm::json::Array *results =
        object ? object->getArray("results") : nullptr;
    bool ok = name && params && results && !results->empty();
    for (size_t i = 0; ok && params && i < params->size(); ++i) {
      TensorSignature param;
      ok = parseTensor((*params)[i].getAsObject(), true, mesh, param);
      fn.params.push_back(std::move(param));
    }
    for (size_t i = 0; ok && i < results->size(); ++i) {
      TensorSignature result;
      const llvm::json::Object *entry = (*results)[i].getAsObject();
      ok = parseTensor(entry, false, mesh, result);
      // `"reuses": "w"`: a parameter of the same type, reused once.
      if (auto reused = ok ? entry->getString("reuses") : std::nullopt) {
        auto param = llvm::find_if(fn.params, [&](const TensorSignature &p) {
          return p.name == *reused;
        });
        ok = param != fn.params.end() && param->dtype == result.dtype &&
             param->shape == result.shape &&
             !fn.isDonated(size_t(param - fn.params.begin()));
        if (ok)
          result.reuses = size_t(param - fn.params.begin());
      }
      fn.results.push_back(std::move(result));
    }
    const llvm::json::Array *probes = object ? object->getArray("probes")
                                             : nullptr;
    for (size_t i = 0; ok && probes && i < probes->size(); ++i) {
      const llvm::json::Object *entry = (*probes)[i].getAsObject();
      auto op = entry ? entry->getString("op") : std::nullopt;
      auto location = entry ? entry->getString("location") : std::nullopt;
      Probe probe;
      ok = op && location &&
           parseTensor(entry->getObject("tensor"), false, mesh, probe.tensor);
      if (ok) {
        probe.op = op->str();
        probe.location = location->str();
        if (auto name = entry->getString("name"))
          probe.name = name->str();
        fn.probes.push_back(std::move(probe));
      }
    }
    if (!ok) {
      error = "signature JSON has a malformed function entry";
      return false;
    }
    fn.name = fn.callee = name->str();
    into.push_back(std::move(fn));
  }
  return true;
}

static bool parseMesh(const llvm::json::Array *axes,
                      std::vector<MeshAxis> &mesh) {
  int64_t devices = 1;
  for (const llvm::json::Value &entry : *axes) {
    const llvm::json::Object *object = entry.getAsObject();
    auto name = object ? object->getString("name") : std::nullopt;
    auto size = object ? object->getInteger("size") : std::nullopt;
    if (!name || !size || *size < 1 || *size > KINA_MAX_MESH_DEVICES / devices)
      return false;
    devices *= *size;
    mesh.push_back({name->str(), *size});
  }
  return !mesh.empty();
}

std::optional<ModuleSignature>
mlir::kina::parseSignatureJson(const std::string &json, std::string &error) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  if (!value) {
    error = "malformed signature JSON: " + llvm::toString(value.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *root = value->getAsObject();
  const llvm::json::Array *functions =
      root ? root->getArray("functions") : nullptr;
  if (!functions) {
    error = "signature JSON has no \"functions\" list";
    return std::nullopt;
  }
  ModuleSignature signature;
  if (!parseFunctions(functions, nullptr, signature.functions, error))
    return std::nullopt;
  const llvm::json::Array *mesh = root->getArray("mesh");
  const llvm::json::Array *devices = root->getArray("devices");
  if (!mesh && !devices)
    return signature;
  if (!mesh || !devices || !parseMesh(mesh, signature.mesh)) {
    error = "signature JSON has a malformed mesh";
    return std::nullopt;
  }
  if (!parseFunctions(devices, &signature.mesh, signature.devices, error))
    return std::nullopt;
  return signature;
}
