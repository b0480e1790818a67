//===- TensorTypes.h - Element types, shapes and statuses -------*- C++ -*-===//
//
// Plain C++ (no MLIR, no LLVM), header-only: the one table of Kina's
// element types with every name each layer writes them by, the element
// limit, and the text of each status. The dialect, the frontend, the .so
// signature, the Python bindings and the tools all read it from here.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_ABI_TENSORTYPES_H
#define KINA_ABI_TENSORTYPES_H

#include "Kina/ABI/ABI.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlir::kina {

enum class DType { F32, I32, I64, F64, F16, BF16 };

struct DTypeInfo {
  DType dtype;
  std::string_view name;       // the signature JSON and Python: "f32"
  std::string_view sourceName; // `.kina` source: "F32"
  std::string_view cType;      // the C header: "float"
  std::string_view numpyName;  // NumPy: "float32"
  unsigned bytes;
  bool isFloat;
};

// NumPy has no bfloat16: BF16 tensors cross the ABI as their 16-bit words
// (uint16), and C sees both 16-bit float types as uint16_t bits.

inline constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", "F32", "float", "float32", 4, true},
    {DType::I32, "i32", "I32", "int32_t", "int32", 4, false},
    {DType::I64, "i64", "I64", "int64_t", "int64", 8, false},
    {DType::F64, "f64", "F64", "double", "float64", 8, true},
    {DType::F16, "f16", "F16", "uint16_t", "float16", 2, true},
    {DType::BF16, "bf16", "BF16", "uint16_t", "uint16", 2, true},
};

static_assert(int(DType::F32) == KINA_DTYPE_F32 &&
                  int(DType::I32) == KINA_DTYPE_I32 &&
                  int(DType::I64) == KINA_DTYPE_I64 &&
                  int(DType::F64) == KINA_DTYPE_F64 &&
                  int(DType::F16) == KINA_DTYPE_F16 &&
                  int(DType::BF16) == KINA_DTYPE_BF16,
              "ABI.h numbers the dtypes as kina::DType does");

inline const DTypeInfo &dtypeInfo(DType dtype) {
  return kDTypes[static_cast<int>(dtype)];
}

/// The dtype named `name` ("f32"), or nullopt.
inline std::optional<DType> dtypeNamed(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (info.name == name)
      return info.dtype;
  return std::nullopt;
}

/// The dtype written `name` in `.kina` source ("F32"), or nullopt.
inline std::optional<DType> dtypeFromSource(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (info.sourceName == name)
      return info.dtype;
  return std::nullopt;
}

/// "f32, i32, i64, ...": every dtype's signature name, for diagnostics.
inline std::string listDTypeNames() {
  std::string names;
  for (const DTypeInfo &info : kDTypes)
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

/// "f32, f64, f16, bf16" (or, `asSource`, "F32, F64, ..."): the float
/// dtypes, for diagnostics.
inline std::string listFloatDTypeNames(bool asSource = false) {
  std::string names;
  for (const DTypeInfo &info : kDTypes)
    if (info.isFloat)
      names += (names.empty() ? "" : ", ") +
               std::string(asSource ? info.sourceName : info.name);
  return names;
}

/// The most elements a tensor may have (see ABI.h).
inline constexpr int64_t kMaxElements = int64_t(1) << KINA_MAX_ELEMENTS_LOG2;

/// `[1, 4, 4]`, as every diagnostic writes a shape.
template <typename Range> std::string formatShape(const Range &shape) {
  std::string text = "[";
  bool first = true;
  for (int64_t dim : shape) {
    text += (first ? "" : ", ") + std::to_string(dim);
    first = false;
  }
  return text + "]";
}

/// What a status returned by an export means.
inline const char *describeStatus(int32_t status) {
  switch (status) {
  case KINA_STATUS_OK:
    return "success";
  case KINA_STATUS_GATHER_OUT_OF_RANGE:
    return "a gather id is outside [0, rows)";
  case KINA_STATUS_COLLECTIVE_FAILED:
    return "a collective failed on some device";
  case KINA_STATUS_BUFFERS_OVERLAP:
    return "a buffer the call writes (an output, or a parameter a result "
           "reuses) overlaps another of its buffers";
  default:
    return "unknown status";
  }
}

} // namespace mlir::kina

#endif // KINA_ABI_TENSORTYPES_H
