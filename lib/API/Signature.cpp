//===- Signature.cpp - The signature JSON, written and read ---------------===//
#include "Kina/API/Signature.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace kina;

int64_t TensorSignature::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::string kina::renderSignatureJson(const ModuleSignature &signature) {
  auto tensor = [](const TensorSignature &t, bool named) {
    llvm::json::Object object;
    if (named)
      object["name"] = t.name;
    object["dtype"] = std::string(dtypeInfo(t.dtype).name);
    object["shape"] = llvm::json::Array(t.shape);
    return object;
  };
  llvm::json::Array functions;
  for (const FunctionSignature &fn : signature.functions) {
    llvm::json::Array params;
    for (const TensorSignature &param : fn.params)
      params.push_back(tensor(param, true));
    functions.push_back(llvm::json::Object{{"name", fn.name},
                                           {"params", std::move(params)},
                                           {"result", tensor(fn.result, false)}});
  }
  return llvm::formatv("{0}", llvm::json::Value(llvm::json::Object{
                                  {"functions", std::move(functions)}}));
}

static bool parseTensor(const llvm::json::Object *object, bool named,
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
  return true;
}

std::optional<ModuleSignature>
kina::parseSignatureJson(const std::string &json, std::string &error) {
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
  for (const llvm::json::Value &entry : *functions) {
    const llvm::json::Object *object = entry.getAsObject();
    FunctionSignature fn;
    auto name = object ? object->getString("name") : std::nullopt;
    const llvm::json::Array *params =
        object ? object->getArray("params") : nullptr;
    bool ok = name && params &&
              parseTensor(object->getObject("result"), false, fn.result);
    for (size_t i = 0; ok && params && i < params->size(); ++i) {
      TensorSignature param;
      ok = parseTensor((*params)[i].getAsObject(), true, param);
      fn.params.push_back(std::move(param));
    }
    if (!ok) {
      error = "signature JSON has a malformed function entry";
      return std::nullopt;
    }
    fn.name = fn.callee = name->str();
    signature.functions.push_back(std::move(fn));
  }
  return signature;
}
