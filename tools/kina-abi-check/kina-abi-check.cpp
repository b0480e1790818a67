//===- kina-abi-check.cpp - Call every function of a Kina .so -------------===//
//
// Loads a shared object, and calls each exported function once with every
// buffer (inputs and output) on the heap at exactly its size, so that an
// AddressSanitizer build of this tool catches any access outside them, also
// by generated code compiled with `kina-translate --sanitize-address`.
// Integer inputs are filled with the id chosen by --ids. Prints one line
// per function: `NAME: status S`.
//
//===----------------------------------------------------------------------===//

#include "Kina/ABI/TensorTypes.h"
#include "Kina/Loader/SharedLibrary.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <limits>

using namespace llvm;

static cl::opt<std::string> input(cl::Positional, cl::desc("<module.so>"),
                                  cl::Required);
enum class Ids { InRange, Negative, Huge };
static cl::opt<Ids>
    ids("ids", cl::desc("the value of every integer input"),
        cl::values(clEnumValN(Ids::InRange, "in-range", "0 (a valid id)"),
                   clEnumValN(Ids::Negative, "negative", "-1"),
                   clEnumValN(Ids::Huge, "huge", "the type's maximum")),
        cl::init(Ids::InRange));

/// A heap buffer of exactly `bytes` (at least one byte, so it is a real
/// allocation with redzones on both sides under ASan).
static void *allocate(size_t bytes) { return std::malloc(bytes ? bytes : 1); }

/// A value of every element: small floats, or the id --ids asks for at the
/// element's width (kina::dtypeInfo).
static void fill(void *buffer, const mlir::kina::TensorSignature &tensor) {
  int64_t count = tensor.numElements();
  const mlir::kina::DTypeInfo &info = mlir::kina::dtypeInfo(tensor.dtype);
  if (info.isFloat) {
    // Eighths in [-1, 1]: exact in every float type.
    for (int64_t i = 0; i < count; ++i) {
      float value = float((i * 7919) % 17 - 8) / 8.0f;
      switch (tensor.dtype) {
      case mlir::kina::DType::F64:
        static_cast<double *>(buffer)[i] = value;
        break;
      case mlir::kina::DType::F16:
        static_cast<_Float16 *>(buffer)[i] = _Float16(value);
        break;
      case mlir::kina::DType::BF16: { // the upper half of the float's bits
        uint32_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        static_cast<uint16_t *>(buffer)[i] = uint16_t(bits >> 16);
        break;
      }
      default:
        static_cast<float *>(buffer)[i] = value;
      }
    }
    return;
  }
  bool wide = info.bytes == sizeof(int64_t);
  int64_t id = ids == Ids::InRange    ? 0
               : ids == Ids::Negative ? -1
               : wide                 ? std::numeric_limits<int64_t>::max()
                                      : std::numeric_limits<int32_t>::max();
  for (int64_t i = 0; i < count; ++i) {
    if (wide)
      static_cast<int64_t *>(buffer)[i] = id;
    else
      static_cast<int32_t *>(buffer)[i] = int32_t(id);
  }
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "Call every function of a Kina shared object\n");
  std::string error;
  std::unique_ptr<mlir::kina::SharedLibrary> library =
      mlir::kina::SharedLibrary::open(input, error);
  if (!library) {
    errs() << "kina-abi-check: " << error << "\n";
    return 1;
  }
  const auto &functions = library->signature().functions;
  for (size_t f = 0; f < functions.size(); ++f) {
    const mlir::kina::FunctionSignature &fn = functions[f];
    std::vector<void *> buffers;
    for (const mlir::kina::TensorSignature &param : fn.params) {
      buffers.push_back(allocate(size_t(param.numBytes())));
      fill(buffers.back(), param);
    }
    std::vector<const mlir::kina::TensorSignature *> outputs;
    for (const mlir::kina::TensorSignature &result : fn.results)
      if (!result.reuses) // written into its parameter's buffer
        outputs.push_back(&result);
    for (const mlir::kina::Probe &probe : fn.probes)
      outputs.push_back(&probe.tensor);
    for (const mlir::kina::TensorSignature *output : outputs) {
      size_t bytes = size_t(output->numBytes());
      buffers.push_back(allocate(bytes));
      std::memset(buffers.back(), 0xff, bytes ? bytes : 1);
    }
    int32_t status = library->entry(f)(buffers.data());
    outs() << fn.name << ": status " << status << "\n";
    for (void *buffer : buffers)
      std::free(buffer);
  }
  return 0;
}
