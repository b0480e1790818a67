//===- Runtime.cpp - Loading a Kina shared object -------------------------===//
#include "Kina/API/Runtime.h"

#include <dlfcn.h>

using namespace kina;

std::unique_ptr<SharedLibrary> SharedLibrary::open(const std::string &path,
                                                   std::string &error) {
  // RTLD_LOCAL: two loaded modules never resolve into each other.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    error = "cannot load " + path + ": " + (reason ? reason : "unknown error");
    return nullptr;
  }
  std::unique_ptr<SharedLibrary> library(new SharedLibrary());
  library->handle_ = handle;
  using SignatureFn = const char *(*)();
  auto getSignature =
      reinterpret_cast<SignatureFn>(dlsym(handle, "kina_module_signature"));
  if (!getSignature) {
    error = path + " is not a Kina shared object (no kina_module_signature)";
    return nullptr;
  }
  std::optional<ModuleSignature> signature =
      parseSignatureJson(getSignature(), error);
  if (!signature) {
    error = path + ": " + error;
    return nullptr;
  }
  for (const FunctionSignature &fn : signature->functions) {
    auto entry = reinterpret_cast<PackedEntry>(
        dlsym(handle, packedEntrySymbol(fn.name).c_str()));
    if (!entry) {
      error = path + " has no packed entry for '" + fn.name +
              "' (built by an older Kina?)";
      return nullptr;
    }
    library->entries_.push_back(entry);
  }
  library->signature_ = std::move(*signature);
  return library;
}

SharedLibrary::~SharedLibrary() {
  if (handle_)
    dlclose(handle_);
}
