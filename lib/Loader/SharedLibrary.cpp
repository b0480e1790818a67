//===- SharedLibrary.cpp - Loading a Kina shared object -------------------===//
#include "Kina/Loader/SharedLibrary.h"

#include <cstring>
#include <dlfcn.h>
#include <elf.h>

#include <fstream>
#include <vector>

using namespace mlir::kina;

/// dlopen trusts the file: a truncated shared object gets segments mapped
/// past its end, and touching them is SIGBUS. So check, before dlopen,
/// that `path` is a 64-bit little-endian x86-64 shared object whose
/// program headers and segments all lie inside the file.
static bool checkElfShape(const std::string &path, std::string &error) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) {
    error = "cannot load " + path + ": cannot open it";
    return false;
  }
  uint64_t size = uint64_t(file.tellg());
  auto fail = [&](const char *why) {
    error = "cannot load " + path + ": " + why;
    return false;
  };
  Elf64_Ehdr header;
  file.seekg(0);
  if (size < sizeof(header) ||
      !file.read(reinterpret_cast<char *>(&header), sizeof(header)))
    return fail("not an ELF file (too short)");
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return fail("not an ELF file");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_type != ET_DYN ||
      header.e_machine != EM_X86_64)
    return fail("not an x86-64 shared object");
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phoff > size ||
      uint64_t(header.e_phnum) * sizeof(Elf64_Phdr) > size - header.e_phoff)
    return fail("truncated or malformed ELF program headers");
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  file.seekg(std::streamoff(header.e_phoff));
  if (!file.read(reinterpret_cast<char *>(segments.data()),
                 std::streamsize(segments.size() * sizeof(Elf64_Phdr))))
    return fail("truncated ELF program headers");
  for (const Elf64_Phdr &segment : segments)
    if (segment.p_offset > size || segment.p_filesz > size - segment.p_offset)
      return fail("truncated: a segment extends past the end of the file");
  return true;
}

std::unique_ptr<SharedLibrary> SharedLibrary::open(const std::string &path,
                                                   std::string &error) {
  if (!checkElfShape(path, error))
    return nullptr;
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
      reinterpret_cast<SignatureFn>(dlsym(handle, KINA_SIGNATURE_SYMBOL));
  if (!getSignature) {
    error = path + " is not a Kina shared object (no " KINA_SIGNATURE_SYMBOL ")";
    return nullptr;
  }
  std::optional<ModuleSignature> signature =
      parseSignatureJson(getSignature(), error);
  if (!signature) {
    error = path + ": " + error;
    return nullptr;
  }
  library->getNumThreads_ = reinterpret_cast<int32_t (*)()>(
      dlsym(handle, KINA_GET_NUM_THREADS_SYMBOL));
  library->setNumThreads_ = reinterpret_cast<void (*)(int32_t)>(
      dlsym(handle, KINA_SET_NUM_THREADS_SYMBOL));
  if (!library->getNumThreads_ || !library->setNumThreads_) {
    error = path + " has no kina_get/set_num_threads (built by an older "
                   "Kina?)";
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
  for (const FunctionSignature &fn : signature->devices) {
    auto entry = reinterpret_cast<PackedEntry>(
        dlsym(handle, packedDeviceEntrySymbol(fn.name).c_str()));
    if (!entry) {
      error = path + " has no per-device entry for '" + fn.name + "'";
      return nullptr;
    }
    library->deviceEntries_.push_back(entry);
  }
  library->signature_ = std::move(*signature);
  return library;
}

SharedLibrary::~SharedLibrary() {
  if (handle_)
    dlclose(handle_);
}
