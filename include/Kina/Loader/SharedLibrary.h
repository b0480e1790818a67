//===- SharedLibrary.h - Loading a Kina shared object -----------*- C++ -*-===//
//
// dlopen and the signature only: KinaLoader links no part of the
// compiler, so a program that only runs .so files stays small.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_LOADER_SHAREDLIBRARY_H
#define KINA_LOADER_SHAREDLIBRARY_H

#include "Kina/ABI/ABI.h"
#include "Kina/Signature/Signature.h"

#include <memory>
#include <string>

namespace mlir::kina {

/// `int32_t entry(void **args)`: args are the inputs then the output.
using PackedEntry = int32_t (*)(void **);

/// A loaded Kina shared object: its signature and packed entries.
class SharedLibrary {
public:
  /// Loads `path`; null with `error` set when it cannot be loaded or is
  /// not a Kina shared object.
  static std::unique_ptr<SharedLibrary> open(const std::string &path,
                                             std::string &error);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;

  const ModuleSignature &signature() const { return signature_; }
  PackedEntry entry(size_t function) const { return entries_[function]; }
  /// The packed per-device entry of signature().devices[function]: args
  /// are the struct kina_device, the local inputs, the local output.
  PackedEntry deviceEntry(size_t function) const {
    return deviceEntries_[function];
  }

  /// Threads each call may use (the caller's included); the default is
  /// $KINA_NUM_THREADS, else every usable core. Per loaded object.
  int numThreads() const { return getNumThreads_(); }
  /// n <= 0 restores the default.
  void setNumThreads(int n) const { setNumThreads_(n); }

private:
  SharedLibrary() = default;
  void *handle_ = nullptr;
  ModuleSignature signature_;
  std::vector<PackedEntry> entries_, deviceEntries_;
  int32_t (*getNumThreads_)() = nullptr;
  void (*setNumThreads_)(int32_t) = nullptr;
};

} // namespace mlir::kina

#endif // KINA_LOADER_SHAREDLIBRARY_H
