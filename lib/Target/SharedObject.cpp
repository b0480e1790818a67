//===- SharedObject.cpp - An object to a shared object --------------------===//
//
// ld.lld links the object into a `.so` that needs only libc and libm, in a
// private directory; the result is copied into place only when complete.
//
//===----------------------------------------------------------------------===//
#include "Kina/Target/SharedObject.h"

#include "Kina/Config.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static LogicalResult runLinker(StringRef object, StringRef output, Location loc) {
  SmallVector<StringRef> args = {
      KINA_LLD_PATH, "-shared",     "--as-needed",
      "-z",          "noexecstack", "-o",
      output,        object,        "-L" KINA_SYSTEM_LIBRARY_DIR,
      "-lm",         "-lc"};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(KINA_LLD_PATH, args, std::nullopt, {},
                                         0, 0, &error);
  if (status != 0)
    return emitError(loc) << "linking with " << KINA_LLD_PATH
                          << " failed (status " << status << ") " << error;
  return success();
}

LogicalResult mlir::kina::linkSharedObject(StringRef object, StringRef path,
                                           Location loc) {
  // Object and link in a private directory; the result is copied into
  // place only when complete.
  SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kina", dir))
    return emitError(loc) << "cannot create a temporary directory: "
                          << ec.message();
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  SmallString<128> objectPath(dir), linked(dir);
  llvm::sys::path::append(objectPath, "module.o");
  llvm::sys::path::append(linked, "module.so");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return emitError(loc)
             << "cannot write " << objectPath << ": " << ec.message();
    os << object;
  }
  if (failed(runLinker(objectPath, linked, loc)))
    return failure();
  if (std::error_code ec = llvm::sys::fs::copy_file(linked, path))
    return emitError(loc) << "cannot write " << path << ": " << ec.message();
  return success();
}
