//===- KinaModule.cpp - The `_kina` Python extension ----------------------===//
//
// Glue only: compile through Kina/Compiler/Compiler.h, load and call through
// Kina/Loader/SharedLibrary.h; dtypes, shapes and statuses are described by
// Kina/ABI/TensorTypes.h. Every argument is checked against the signature
// before any pointer reaches compiled code; the GIL is released while
// compiling and while compiled code runs.
//
//===----------------------------------------------------------------------===//

#include "Kina/ABI/TensorTypes.h"
#include "Kina/Compiler/Compiler.h"
#include "Kina/Loader/SharedLibrary.h"
#include "Kina/Loader/Simulator.h"
#include "Kina/Syntax/Parser.h"
#include "PipelineScheduleBindings.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <algorithm>
#include <map>
#include <tuple>

namespace py = pybind11;

namespace {

using mlir::kina::formatShape;

std::string describe(const mlir::kina::TensorSignature &t) {
  // NumPy has no bfloat16: BF16 crosses as its 16-bit words.
  std::string dtype =
      t.dtype == mlir::kina::DType::BF16
          ? "uint16 (BF16 words: kina.to_bf16)"
          : std::string(mlir::kina::dtypeInfo(t.dtype).numpyName);
  return dtype + " of shape " + formatShape(t.shape);
}

/// `numpy.generic`, the base of NumPy's scalar types (looked up once).
py::handle numpyGeneric() {
  static py::object generic = py::module_::import("numpy").attr("generic");
  return generic;
}

py::dtype numpyDtype(mlir::kina::DType dtype) {
  return py::dtype(std::string(mlir::kina::dtypeInfo(dtype).numpyName));
}

/// The data of `arg` as compiled code reads it (dense, aligned, native
/// order), checked against `param` first; copies land in `made`. `where`
/// names the parameter in errors (built only when one is raised). With
/// `written` (a parameter that a result reuses), the buffer must also be
/// writable, and `written` is the array it belongs to: the argument
/// itself, or the copy made when the argument cannot be written in place.
template <typename Where>
void *argumentData(py::handle argument,
                   const mlir::kina::TensorSignature &param,
                   const py::dtype &want, std::vector<py::array> &made,
                   Where where, py::array *written = nullptr) {
  auto &api = py::detail::npy_api::get();
  PyObject *arg = argument.ptr();
  PyObject *array = arg;
  if (!api.PyArray_Check_(arg)) {
    // NumPy scalars (np.float32(0.5)) are 0-d arrays in all but type.
    if (!py::isinstance(arg, numpyGeneric()))
      throw py::type_error(
          where() + " expects a NumPy array of " + describe(param) + ", got " +
          std::string(py::str(py::handle(arg).get_type().attr("__name__"))));
    made.push_back(py::reinterpret_steal<py::array>(api.PyArray_FromAny_(
        arg, nullptr, 0, 0, py::detail::npy_api::NPY_ARRAY_ENSUREARRAY_,
        nullptr)));
    if (!made.back())
      throw py::error_already_set();
    array = made.back().ptr();
  }
  auto *proxy = py::detail::array_proxy(array);
  if (!api.PyArray_EquivTypes_(proxy->descr, want.ptr()))
    throw py::type_error(where() + " expects " + describe(param) +
                         ", got dtype " +
                         std::string(py::str(py::handle(proxy->descr))));
  bool sameShape = size_t(proxy->nd) == param.shape.size();
  for (size_t d = 0; sameShape && d < param.shape.size(); ++d)
    sameShape = proxy->dimensions[d] == param.shape[d];
  if (!sameShape) {
    std::vector<int64_t> got(proxy->dimensions, proxy->dimensions + proxy->nd);
    throw py::value_error(where() + " expects " + describe(param) +
                          ", got shape " + formatShape(got));
  }
  // Compiled code reads dense, aligned, native-order buffers: copy
  // anything else (a view with strides, an unaligned buffer).
  constexpr int dense = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ |
                        py::detail::npy_api::NPY_ARRAY_ALIGNED_;
  int required =
      written ? dense | py::detail::npy_api::NPY_ARRAY_WRITEABLE_ : dense;
  if ((proxy->flags & required) != required) {
    // NumPy's NPY_ARRAY_ENSURECOPY (pybind11 names no constant for it): a
    // read-only argument is copied rather than refused.
    constexpr int ensureCopy = 0x0020;
    int copy = written ? dense | ensureCopy : dense;
    made.push_back(py::reinterpret_steal<py::array>(api.PyArray_FromAny_(
        array, want.inc_ref().ptr(), 0, 0, copy, nullptr)));
    if (!made.back())
      throw py::error_already_set();
    array = made.back().ptr();
    proxy = py::detail::array_proxy(array);
  }
  if (written)
    *written = py::reinterpret_borrow<py::array>(array);
  return proxy->data;
}

/// `count` slots holding no array yet. (A default-constructed py::array
/// is an empty NumPy array, made on every call: a microsecond of a toy
/// model's call went to making and freeing nine of them.)
std::vector<py::array> nullArrays(size_t count) {
  return std::vector<py::array>(count,
                                py::reinterpret_steal<py::array>(py::handle()));
}

/// A fresh C-ordered array of `dtype` and `shape`.
py::array newArray(const py::dtype &dtype, const std::vector<int64_t> &shape) {
  // NumPy's own constructor: py::array's copies the shape into vectors
  // first, two allocations more per result of every call.
  static_assert(sizeof(int64_t) == sizeof(Py_intptr_t));
  auto &api = py::detail::npy_api::get();
  PyObject *array = api.PyArray_NewFromDescr_(
      api.PyArray_Type_, dtype.inc_ref().ptr(), static_cast<int>(shape.size()),
      reinterpret_cast<Py_intptr_t *>(const_cast<int64_t *>(shape.data())),
      nullptr, nullptr, 0, nullptr);
  if (!array)
    throw py::error_already_set();
  return py::reinterpret_steal<py::array>(array);
}

py::dtype numpyDtype(mlir::kina::DType dtype);

/// `results` as Python returns them: the array of a function with one
/// result, a tuple for several.
py::object asValue(const std::vector<py::array> &results) {
  if (results.size() == 1)
    return results.front();
  py::tuple tuple(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    tuple[i] = results[i];
  return std::move(tuple);
}

/// The probe outputs of `fn` (none unless compiled with probes), their
/// data appended to `pointers`.
py::list probeOutputs(const mlir::kina::FunctionSignature &fn,
                      std::vector<void *> &pointers) {
  py::list probes;
  for (const mlir::kina::Probe &probe : fn.probes) {
    py::array array =
        newArray(numpyDtype(probe.tensor.dtype), probe.tensor.shape);
    pointers.push_back(array.mutable_data());
    probes.append(array);
  }
  return probes;
}

/// Large results come from arrays the caller no longer holds (the pool's
/// is their only reference): a model called in a loop writes into memory
/// it has touched before instead of faulting in fresh pages, which costs
/// tens of milliseconds for the 16 MB logits of a realistic forward.
class ResultPool {
public:
  /// (function, device, result): a key of its own for every result.
  using Slot = std::tuple<size_t, int, size_t>;

  py::array take(Slot slot, const py::dtype &dtype,
                 const std::vector<int64_t> &shape) {
    int64_t bytes = dtype.itemsize();
    for (int64_t dim : shape)
      bytes *= dim;
    if (bytes < kMinBytes)
      return newArray(dtype, shape);
    std::vector<py::array> &arrays = pool[slot];
    for (py::array &array : arrays)
      if (array.ref_count() == 1 && array.dtype().equal(dtype) &&
          std::equal(shape.begin(), shape.end(), array.shape(),
                     array.shape() + array.ndim()))
        return array;
    py::array array = newArray(dtype, shape);
    if (arrays.size() < kKeep)
      arrays.push_back(array);
    return array;
  }

  /// Result `result` of function `index` on device `device` (-1: the
  /// host form).
  static Slot slot(size_t index, int device, size_t result) {
    return {index, device, result};
  }

private:
  static constexpr int64_t kMinBytes = int64_t(1) << 20;
  static constexpr size_t kKeep = 3; // a loop holds one while making the next
  std::map<Slot, std::vector<py::array>> pool;
};

/// The result arrays of function `index` (on `device`, -1 for the host
/// form): from the pool, their data appended to `pointers`, but for a
/// result that reuses parameter p, which is `donated[p]` (no pointer).
std::vector<py::array> resultOutputs(ResultPool &pool,
                                     const mlir::kina::FunctionSignature &fn,
                                     size_t index, int device,
                                     std::vector<void *> &pointers,
                                     const std::vector<py::array> &donated) {
  std::vector<py::array> results;
  for (size_t i = 0; i < fn.results.size(); ++i) {
    if (fn.results[i].reuses) {
      results.push_back(donated[*fn.results[i].reuses]);
      continue;
    }
    results.push_back(pool.take(ResultPool::slot(index, device, i),
                                numpyDtype(fn.results[i].dtype),
                                fn.results[i].shape));
    pointers.push_back(results.back().mutable_data());
  }
  return results;
}

/// A fresh copy of `array`, for a parameter that a result reuses where the
/// caller's block must survive the call (the simulator's inputs, which
/// `m.distribute` lets a caller pass again).
py::array freshCopy(const py::array &array, std::vector<py::array> &made) {
  made.push_back(py::reinterpret_steal<py::array>(
      py::detail::npy_api::get().PyArray_NewCopy_(array.ptr(), 0)));
  if (!made.back())
    throw py::error_already_set();
  return made.back();
}

/// The two buffers of a call that the check of lib/Runtime/Buffers.c
/// refused (KINA_STATUS_BUFFERS_OVERLAP), found again the same way:
/// `pointers` holds the parameters, then the outputs (results that reuse
/// no parameter), then the probes. Named for the caller ("parameter 'w'
/// (a result reuses it) and parameter 'g'"); empty when none overlap.
std::string overlappingPair(const mlir::kina::FunctionSignature &fn,
                            void *const *pointers) {
  std::vector<std::pair<std::string, int64_t>> buffers;
  std::vector<bool> written;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    bool donated = fn.isDonated(i);
    buffers.push_back({"parameter '" + fn.params[i].name + "'" +
                           (donated ? " (a result reuses it)" : ""),
                       fn.params[i].numBytes()});
    written.push_back(donated);
  }
  for (size_t i = 0; i < fn.results.size(); ++i)
    if (!fn.results[i].reuses) {
      buffers.push_back({"result " + std::to_string(i),
                         fn.results[i].numBytes()});
      written.push_back(true);
    }
  for (const mlir::kina::Probe &probe : fn.probes) {
    buffers.push_back({"the probe of " + probe.name, probe.tensor.numBytes()});
    written.push_back(true);
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!written[i])
      continue;
    auto begin = reinterpret_cast<uintptr_t>(pointers[i]);
    uintptr_t end = begin + uintptr_t(buffers[i].second);
    for (size_t j = 0; j < buffers.size(); ++j) {
      auto otherBegin = reinterpret_cast<uintptr_t>(pointers[j]);
      uintptr_t otherEnd = otherBegin + uintptr_t(buffers[j].second);
      if (j != i && begin < otherEnd && otherBegin < end)
        return buffers[std::min(i, j)].first + " and " +
               buffers[std::max(i, j)].first;
    }
  }
  return "";
}

/// A loaded shared object. Functions keep it alive.
struct Library {
  ResultPool results;
  std::unique_ptr<mlir::kina::SharedLibrary> shared;
  std::vector<py::dtype> paramDtypes; // flattened, per function
  std::vector<size_t> firstParam;
  std::vector<py::dtype> resultDtypes; // flattened, per function
  std::vector<size_t> firstResult;

  explicit Library(const std::string &path) {
    std::string error;
    shared = mlir::kina::SharedLibrary::open(path, error);
    if (!shared)
      throw py::value_error(error);
    for (const mlir::kina::FunctionSignature &fn :
         shared->signature().functions) {
      firstParam.push_back(paramDtypes.size());
      for (const mlir::kina::TensorSignature &param : fn.params)
        paramDtypes.push_back(numpyDtype(param.dtype));
      firstResult.push_back(resultDtypes.size());
      for (const mlir::kina::TensorSignature &result : fn.results)
        resultDtypes.push_back(numpyDtype(result.dtype));
    }
  }
};

class Function {
public:
  Function(std::shared_ptr<Library> library, size_t index)
      : library(std::move(library)), index(index) {}

  std::string name() const { return signature().name; }

  std::string repr() const {
    const mlir::kina::FunctionSignature &fn = signature();
    std::string text = "<kina function " + fn.name + "(";
    for (size_t i = 0; i < fn.params.size(); ++i)
      text +=
          (i ? ", " : "") + fn.params[i].name + ": " + describe(fn.params[i]);
    text += ") -> ";
    for (size_t i = 0; i < fn.results.size(); ++i) {
      text += (i ? ", " : "") + describe(fn.results[i]);
      if (fn.results[i].reuses)
        text += " @reuses(" + fn.params[*fn.results[i].reuses].name + ")";
    }
    return text + ">";
  }

  /// The arguments in parameter order: positional ones first, then each
  /// keyword one in its parameter's place. Errors name parameters, never
  /// the arrays (whose repr may be megabytes).
  std::vector<py::handle> bound(const py::args &args,
                                const py::kwargs &kwargs) const {
    const mlir::kina::FunctionSignature &fn = signature();
    size_t count = fn.params.size();
    // Made for an error only: a call's few microseconds have no room for
    // building strings.
    auto parameterNames = [&] {
      std::string names;
      for (size_t i = 0; i < count; ++i)
        names += (i ? ", " : "") + fn.params[i].name;
      return names;
    };
    if (args.size() > count)
      throw py::value_error(fn.name + "() takes " + std::to_string(count) +
                            " argument(s) (" + parameterNames() +
                            "), got " +
                            std::to_string(args.size() + kwargs.size()));
    std::vector<py::handle> values(count);
    for (size_t i = 0; i < args.size(); ++i)
      values[i] = args[i];
    for (auto [key, value] : kwargs) {
      std::string name = py::str(key);
      auto param = std::find_if(
          fn.params.begin(), fn.params.end(),
          [&](const mlir::kina::TensorSignature &p) { return p.name == name; });
      if (param == fn.params.end())
        throw py::type_error(fn.name + "() got an unexpected keyword "
                             "argument '" + name + "' (its parameters: " +
                             parameterNames() + ")");
      size_t index = param - fn.params.begin();
      if (values[index])
        throw py::type_error(fn.name + "() got two values for parameter '" +
                             name + "'");
      values[index] = value;
    }
    std::string missing;
    for (size_t i = 0; i < count; ++i)
      if (!values[i])
        missing += (missing.empty() ? "'" : ", '") + fn.params[i].name + "'";
    if (!missing.empty())
      throw py::value_error(fn.name + "() takes " + std::to_string(count) +
                            " argument(s) (" + parameterNames() +
                            "), got " +
                            std::to_string(args.size() + kwargs.size()) +
                            ": missing " + missing);
    return values;
  }

  py::object call(py::args positional, py::kwargs kwargs) const {
    const mlir::kina::FunctionSignature &fn = signature();
    size_t count = fn.params.size();
    std::vector<py::handle> args = bound(positional, kwargs);
    // The argument tuple and dict keep every ndarray alive; only arrays
    // made here (from NumPy scalars, or dense copies) need holding.
    std::vector<py::array> made;
    constexpr size_t kInline = 32;
    void *inlinePointers[kInline];
    std::vector<void *> heapPointers;
    void **pointers = inlinePointers;
    size_t outputs = fn.numOutputs() - fn.probes.size();
    if (count + outputs > kInline) {
      heapPointers.resize(count + outputs);
      pointers = heapPointers.data();
    }
    // A parameter a result reuses: the array the call writes.
    std::vector<py::array> donated = nullArrays(count);
    for (size_t i = 0; i < count; ++i)
      pointers[i] = argumentData(
          args[i], fn.params[i],
          library->paramDtypes[library->firstParam[index] + i], made,
          [&] { return fn.name + "(): parameter '" + fn.params[i].name + "'"; },
          fn.isDonated(i) ? &donated[i] : nullptr);
    std::vector<py::array> results;
    size_t output = count;
    for (size_t i = 0; i < fn.results.size(); ++i) {
      if (fn.results[i].reuses) {
        results.push_back(donated[*fn.results[i].reuses]);
        continue;
      }
      results.push_back(library->results.take(
          ResultPool::slot(index, -1, i),
          library->resultDtypes[library->firstResult[index] + i],
          fn.results[i].shape));
      pointers[output++] = py::detail::array_proxy(results[i].ptr())->data;
    }
    // A module compiled with probes also returns every op's value.
    py::object probes;
    if (!fn.probes.empty()) {
      std::vector<void *> all(pointers, pointers + count + outputs);
      probes = probeOutputs(fn, all);
      heapPointers = std::move(all);
      pointers = heapPointers.data();
    }
    mlir::kina::PackedEntry entry = library->shared->entry(index);
    int32_t status;
    {
      py::gil_scoped_release release;
      status = entry(pointers);
    }
    if (status != KINA_STATUS_OK)
      throwCallFailure(fn, status, pointers);
    if (!fn.probes.empty())
      return py::make_tuple(asValue(results), probes);
    return asValue(results);
  }

private:
  /// The error for a call that returned `status`.
  [[noreturn]] static void
  throwCallFailure(const mlir::kina::FunctionSignature &fn, int32_t status,
                   void *const *pointers) {
    std::string failure = fn.name + "(): " + mlir::kina::describeStatus(status);
    if (status == KINA_STATUS_GATHER_OUT_OF_RANGE)
      throw py::index_error(failure);
    if (status == KINA_STATUS_BUFFERS_OVERLAP) {
      // Which two: one array passed for a donated parameter and another.
      std::string pair = overlappingPair(fn, pointers);
      throw py::value_error(
          pair.empty() ? failure
                       : failure + ": " + pair +
                             " share memory (pass a copy of one of them)");
    }
    throw std::runtime_error(failure + " (status " + std::to_string(status) +
                             ")");
  }

  const mlir::kina::FunctionSignature &signature() const {
    return library->shared->signature().functions[index];
  }

  std::shared_ptr<Library> library;
  size_t index;
};

/// Runs per-device function `index` of `library` on the threaded
/// simulator: `perDevice[d]` holds device d's local inputs. Returns (each
/// device's list of local results, statuses, bytes moved, seconds in
/// collectives, error, each device's probe values).
py::tuple simulate(const Library &library, size_t index, py::list perDevice,
                   int threadsPerDevice, double timeoutSeconds) {
  const mlir::kina::ModuleSignature &signature = library.shared->signature();
  if (index >= signature.devices.size())
    throw py::index_error("no per-device function #" + std::to_string(index));
  const mlir::kina::FunctionSignature &fn = signature.devices[index];
  size_t devices = size_t(signature.numDevices());
  if (perDevice.size() != devices)
    throw py::value_error(fn.name + " runs on " + std::to_string(devices) +
                          " devices, got inputs for " +
                          std::to_string(perDevice.size()));
  if (!(timeoutSeconds > 0) || timeoutSeconds > 86400)
    throw py::value_error("timeout must be in (0, 86400] seconds");
  std::vector<py::array> made;
  py::list results, probes;
  std::vector<std::vector<void *>> args(devices);
  for (size_t d = 0; d < devices; ++d) {
    py::sequence inputs = perDevice[d];
    if (inputs.size() != fn.params.size())
      throw py::value_error(fn.name + " per device takes " +
                            std::to_string(fn.params.size()) + " inputs");
    // A parameter a result reuses gets a copy of the device's block: the
    // caller's blocks stay as they were (docs/interfaces.md).
    std::vector<py::array> donated = nullArrays(fn.params.size());
    for (size_t i = 0; i < fn.params.size(); ++i) {
      void *data = argumentData(
          inputs[i], fn.params[i], numpyDtype(fn.params[i].dtype), made,
          [&] {
            return fn.name + "() on device " + std::to_string(d) +
                   ": parameter '" + fn.params[i].name + "'";
          },
          fn.isDonated(i) ? &donated[i] : nullptr);
      if (fn.isDonated(i)) {
        donated[i] = freshCopy(donated[i], made);
        data = donated[i].mutable_data();
      }
      args[d].push_back(data);
    }
    results.append(py::cast(resultOutputs(const_cast<Library &>(library).results,
                                          fn, index, int(d), args[d],
                                          donated)));
    probes.append(probeOutputs(fn, args[d]));
  }
  mlir::kina::SimulationOptions options;
  options.threadsPerDevice = threadsPerDevice;
  options.timeout = std::chrono::milliseconds(int64_t(timeoutSeconds * 1000));
  mlir::kina::SimulationResult run;
  {
    py::gil_scoped_release release;
    run =
        mlir::kina::simulate(library.shared->deviceEntry(index), args, options);
  }
  return py::make_tuple(results, run.status, run.bytesMoved,
                        run.collectiveSeconds, run.error, probes);
}

/// Runs per-device function `index` as the device at address `device` (a
/// struct kina_device from an MPI rank's backend) on its local inputs.
/// Returns (the list of local results, status).
py::tuple runDevice(const Library &library, size_t index, uintptr_t device,
                    py::sequence inputs) {
  const mlir::kina::ModuleSignature &signature = library.shared->signature();
  if (index >= signature.devices.size())
    throw py::index_error("no per-device function #" + std::to_string(index));
  if (!device)
    throw py::value_error("no device");
  const mlir::kina::FunctionSignature &fn = signature.devices[index];
  if (inputs.size() != fn.params.size())
    throw py::value_error(fn.name + " per device takes " +
                          std::to_string(fn.params.size()) + " inputs");
  std::vector<py::array> made;
  std::vector<void *> args = {reinterpret_cast<void *>(device)};
  // A parameter a result reuses is written in place (an MPI rank's own
  // weights and moments), or in a copy when it cannot be.
  std::vector<py::array> donated = nullArrays(fn.params.size());
  for (size_t i = 0; i < fn.params.size(); ++i)
    args.push_back(argumentData(
        inputs[i], fn.params[i], numpyDtype(fn.params[i].dtype), made,
        [&] { return fn.name + "(): parameter '" + fn.params[i].name + "'"; },
        fn.isDonated(i) ? &donated[i] : nullptr));
  std::vector<py::array> results = resultOutputs(
      const_cast<Library &>(library).results, fn, index, 0, args, donated);
  py::list probes = probeOutputs(fn, args);
  int32_t status;
  {
    py::gil_scoped_release release;
    status = library.shared->deviceEntry(index)(args.data());
  }
  return py::make_tuple(py::cast(results), status);
}

/// A tensor of the signature as Python reads it: the keys of the JSON
/// that renderSignatureJson writes, plus `numpy_dtype`.
py::dict toDict(const mlir::kina::TensorSignature &t, bool named) {
  py::dict d;
  if (named)
    d["name"] = t.name;
  d["dtype"] = std::string(mlir::kina::dtypeInfo(t.dtype).name);
  d["numpy_dtype"] = numpyDtype(t.dtype);
  d["shape"] = py::tuple(py::cast(t.shape));
  if (t.placement) {
    py::dict global;
    global["placement"] = t.placement->text;
    global["shape"] = py::tuple(py::cast(t.placement->shape));
    global["split"] = py::tuple(py::cast(t.placement->splitOver));
    global["partial"] = py::tuple(py::cast(t.placement->partialOver));
    d["global"] = global;
  }
  return d;
}

py::dict toDict(const mlir::kina::FunctionSignature &fn) {
  py::list params, results, probes;
  for (const mlir::kina::TensorSignature &param : fn.params)
    params.append(toDict(param, true));
  for (const mlir::kina::TensorSignature &result : fn.results) {
    py::dict entry = toDict(result, false);
    if (result.reuses)
      entry["reuses"] = fn.params[*result.reuses].name;
    results.append(entry);
  }
  for (const mlir::kina::Probe &probe : fn.probes) {
    py::dict entry;
    entry["op"] = probe.op;
    entry["location"] = probe.location;
    entry["name"] = probe.name;
    entry["tensor"] = toDict(probe.tensor, false);
    probes.append(entry);
  }
  py::dict entry;
  entry["name"] = fn.name;
  entry["params"] = params;
  entry["results"] = results;
  entry["probes"] = probes;
  return entry;
}

/// The whole signature, parsed once in C++ (kina::parseSignatureJson).
py::dict toDict(const mlir::kina::ModuleSignature &signature) {
  py::list functions, mesh, devices;
  for (const mlir::kina::FunctionSignature &fn : signature.functions)
    functions.append(toDict(fn));
  for (const mlir::kina::MeshAxis &axis : signature.mesh) {
    py::dict entry;
    entry["name"] = axis.name;
    entry["size"] = axis.size;
    mesh.append(entry);
  }
  for (const mlir::kina::FunctionSignature &fn : signature.devices)
    devices.append(toDict(fn));
  py::dict d;
  d["functions"] = functions;
  d["mesh"] = mesh;
  d["devices"] = devices;
  return d;
}

/// The options of automatic sharding from Python's dict (kina.auto_shard
/// writes it; unknown keys are its bug, so they raise).
mlir::kina::AutoShardOptions autoShardOptions(const py::dict &given) {
  mlir::kina::AutoShardOptions options;
  for (auto [key, value] : given) {
    std::string name = py::cast<std::string>(key);
    if (name == "objective") {
      std::string objective = py::cast<std::string>(value);
      if (objective != "time" && objective != "bytes")
        throw py::value_error("objective is 'time' or 'bytes', got '" +
                              objective + "'");
      options.objective = objective == "bytes"
                              ? mlir::kina::AutoShardOptions::Objective::Bytes
                              : mlir::kina::AutoShardOptions::Objective::Time;
    } else if (name == "budget_bytes") {
      options.budgetBytes = py::cast<int64_t>(value);
    } else if (name == "enumerate") {
      options.enumerateUpTo = py::cast<int64_t>(value);
    } else if (name == "alternatives") {
      options.alternatives = py::cast<int64_t>(value);
    } else if (name == "explain") {
      options.explain = py::cast<std::vector<std::string>>(value);
    } else if (name == "seconds_limit") {
      options.secondsLimit = py::cast<double>(value);
    } else if (name == "tie_layers") {
      options.tieLayers = py::cast<bool>(value);
    } else if (name == "flops_per_second") {
      options.machine.flopsPerSecond = py::cast<double>(value);
    } else if (name == "memory_bytes_per_second") {
      options.machine.memoryBytesPerSecond = py::cast<double>(value);
    } else if (name == "collectives") {
      for (auto [kind, figures] : py::cast<py::dict>(value)) {
        std::string k = py::cast<std::string>(kind);
        auto it = std::find_if(
            std::begin(mlir::kina::kCollectiveKinds),
            std::end(mlir::kina::kCollectiveKinds),
            [&](const char *known) { return k == known; });
        if (it == std::end(mlir::kina::kCollectiveKinds))
          throw py::value_error("unknown collective kind '" + k + "'");
        auto [latency, bandwidth] =
            py::cast<std::pair<double, double>>(figures);
        options.machine
            .collectives[it - std::begin(mlir::kina::kCollectiveKinds)] = {
            latency, bandwidth};
      }
    } else {
      throw py::value_error("unknown auto-shard option '" + name + "'");
    }
  }
  return options;
}

} // namespace

PYBIND11_MODULE(_kina, m) {
  m.doc() = "Kina's compiler and runtime (use the `kina` package)";
  m.attr("MAX_THREADS") = KINA_MAX_THREADS;
  m.attr("STATUS_GATHER_OUT_OF_RANGE") = int(KINA_STATUS_GATHER_OUT_OF_RANGE);
  m.def("describe_status", &mlir::kina::describeStatus, py::arg("status"),
        "What a status returned by an export means.");

  // What a compile decided (Kina/Sharding/CostRecords.h), read-only.
  py::class_<mlir::kina::WeighedPlan>(m, "WeighedPlan")
      .def_readonly("choice", &mlir::kina::WeighedPlan::choice)
      .def_readonly("bytes", &mlir::kina::WeighedPlan::bytes);
  py::class_<mlir::kina::CollectiveRecord>(m, "CollectiveRecord")
      .def_readonly("function", &mlir::kina::CollectiveRecord::function)
      .def_readonly("location", &mlir::kina::CollectiveRecord::location)
      .def_readonly("kind", &mlir::kina::CollectiveRecord::kind)
      .def_readonly("over", &mlir::kina::CollectiveRecord::over)
      .def_readonly("placement", &mlir::kina::CollectiveRecord::placement)
      .def_readonly("origin", &mlir::kina::CollectiveRecord::origin)
      .def_readonly("serves", &mlir::kina::CollectiveRecord::serves)
      .def_readonly("reason", &mlir::kina::CollectiveRecord::reason)
      .def_readonly("bytes_per_device",
                    &mlir::kina::CollectiveRecord::bytesPerDevice)
      .def_readonly("weighed", &mlir::kina::CollectiveRecord::weighed)
      .def("remark", [](const mlir::kina::CollectiveRecord &r) {
        return mlir::kina::remarkText(r);
      });
  py::class_<mlir::kina::TrafficRecord>(m, "TrafficRecord")
      .def_readonly("backward", &mlir::kina::TrafficRecord::backward)
      .def_readonly("kind", &mlir::kina::TrafficRecord::kind)
      .def_readonly("over", &mlir::kina::TrafficRecord::over)
      .def_readonly("count", &mlir::kina::TrafficRecord::count)
      .def_readonly("bytes", &mlir::kina::TrafficRecord::bytes);
  py::class_<mlir::kina::MemoryBytes>(m, "MemoryBytes")
      .def_readonly("weights", &mlir::kina::MemoryBytes::weights)
      .def_readonly("gradients", &mlir::kina::MemoryBytes::gradients)
      .def_readonly("optimizer_state",
                    &mlir::kina::MemoryBytes::optimizerState)
      .def_readonly("activations", &mlir::kina::MemoryBytes::activations);
  py::class_<mlir::kina::FunctionCostRecord>(m, "FunctionCostRecord")
      .def_readonly("function", &mlir::kina::FunctionCostRecord::function)
      .def_readonly("location", &mlir::kina::FunctionCostRecord::location)
      .def_readonly("flops", &mlir::kina::FunctionCostRecord::flops)
      .def_readonly("peak_bytes", &mlir::kina::FunctionCostRecord::peakBytes)
      .def_readonly("bytes_sent", &mlir::kina::FunctionCostRecord::bytesSent)
      .def_readonly("traffic", &mlir::kina::FunctionCostRecord::traffic)
      .def_readonly("at_rest", &mlir::kina::FunctionCostRecord::atRest)
      .def_readonly("at_peak", &mlir::kina::FunctionCostRecord::atPeak)
      .def_readonly("peak_location",
                    &mlir::kina::FunctionCostRecord::peakLocation)
      .def_readonly("predicted_seconds",
                    &mlir::kina::FunctionCostRecord::predictedSeconds)
      .def("remark", [](const mlir::kina::FunctionCostRecord &r) {
        return mlir::kina::remarkText(r);
      });
  py::class_<mlir::kina::CostRecords>(m, "CostRecords")
      .def_readonly("collectives", &mlir::kina::CostRecords::collectives)
      .def_readonly("costs", &mlir::kina::CostRecords::costs);

  py::class_<mlir::kina::AutoShardReport::Alternative>(m, "AutoShardPlan")
      .def_readonly("objective",
                    &mlir::kina::AutoShardReport::Alternative::objective)
      .def_readonly("bytes_per_device",
                    &mlir::kina::AutoShardReport::Alternative::bytesPerDevice)
      .def_readonly("parameters",
                    &mlir::kina::AutoShardReport::Alternative::parameters);
  py::class_<mlir::kina::AutoShardReport::WhyNot>(m, "AutoShardWhyNot")
      .def_readonly("parameter",
                    &mlir::kina::AutoShardReport::WhyNot::parameter)
      .def_readonly("placement",
                    &mlir::kina::AutoShardReport::WhyNot::placement)
      .def_readonly("feasible", &mlir::kina::AutoShardReport::WhyNot::feasible)
      .def_readonly("plan", &mlir::kina::AutoShardReport::WhyNot::plan);
  py::class_<mlir::kina::AutoShardReport>(m, "AutoShardReport")
      .def_readonly("function", &mlir::kina::AutoShardReport::function)
      .def_readonly("objective", &mlir::kina::AutoShardReport::objective)
      .def_readonly("bound", &mlir::kina::AutoShardReport::bound)
      .def_readonly("gap", &mlir::kina::AutoShardReport::gap)
      .def_readonly("optimal", &mlir::kina::AutoShardReport::optimal)
      .def_readonly("bytes_objective",
                    &mlir::kina::AutoShardReport::bytesObjective)
      .def_readonly("predicted_seconds",
                    &mlir::kina::AutoShardReport::predictedSeconds)
      .def_readonly("bytes_per_device",
                    &mlir::kina::AutoShardReport::bytesPerDevice)
      .def_readonly("peak_bytes", &mlir::kina::AutoShardReport::peakBytes)
      .def_readonly("collectives", &mlir::kina::AutoShardReport::collectives)
      .def_readonly("decisions", &mlir::kina::AutoShardReport::nodes)
      .def_readonly("tied_decisions", &mlir::kina::AutoShardReport::groups)
      .def_readonly("variables", &mlir::kina::AutoShardReport::variables)
      .def_readonly("constraints", &mlir::kina::AutoShardReport::constraints)
      .def_readonly("parameters", &mlir::kina::AutoShardReport::parameters)
      .def_readonly("enumerated", &mlir::kina::AutoShardReport::enumerated)
      .def_readonly("alternatives",
                    &mlir::kina::AutoShardReport::alternatives)
      .def_readonly("why_not", &mlir::kina::AutoShardReport::whyNot)
      .def_readonly("enumerated_best",
                    &mlir::kina::AutoShardReport::enumeratedBest)
      .def("remark", [](const mlir::kina::AutoShardReport &r) {
        return mlir::kina::remarkText(r);
      });

  m.def(
      "compile_to_file",
      [](const std::string &text, const std::string &filename,
         const std::string &soPath, bool probes,
         const std::string &matmulTuning, bool locations,
         const py::dict &autoShard) {
        mlir::kina::AutoShardOptions options = autoShardOptions(autoShard);
        mlir::kina::CompileOutput output;
        {
          py::gil_scoped_release release;
          output = mlir::kina::compileKinaSource(text, filename, soPath, probes,
                                                 matmulTuning, locations,
                                                 options);
        }
        py::dict ir;
        ir["kina"] = output.kinaIR;
        ir["propagated"] = output.propagatedIR;
        ir["host"] = output.hostIR;
        ir["spmd"] = output.spmdIR;
        ir["linalg"] = output.linalgIR;
        ir["llvm"] = output.llvmIR;
        return py::make_tuple(output.ok, output.diagnostics, ir,
                              std::move(output.records),
                              std::move(output.autoShard));
      },
      py::arg("text"), py::arg("filename"), py::arg("so_path"),
      py::arg("probes") = false, py::arg("matmul_tuning") = "",
      py::arg("locations") = false, py::arg("auto_shard") = py::dict(),
      "Compile .kina source to a shared object: (ok, diagnostics, {stage: "
      "IR}, CostRecords, [AutoShardReport]) for the stages kina, "
      "propagated, host, spmd, linalg, llvm; with locations, each op's "
      "source location in the IR. `auto_shard`: how functions with @auto "
      "placements are placed (keys objective, budget_bytes, enumerate, "
      "alternatives, explain, seconds_limit, tie_layers, flops_per_second, memory_bytes_per_second, "
      "collectives: {kind: (latency_s, bytes_per_s)}).");

  bindPipelineSchedule(m);

  m.def("reserved_words", &mlir::kina::reservedWords,
        "The words no variable, parameter or function may be named: "
        "keywords, element types and op names.");

  m.def(
      "host_cpu",
      [] {
        mlir::kina::HostMatmulModel model =
            mlir::kina::describeHostMatmulModel();
        py::dict parameters;
        parameters["tile-m"] = model.tileM;
        parameters["cache-m"] = model.cacheM;
        parameters["cache-n"] = model.cacheN;
        parameters["cache-k"] = model.cacheK;
        parameters["tile-n"] = model.tileN;
        return py::make_tuple(model.cpuKey, parameters);
      },
      "This CPU as tuning files name it, and the matmul parameters the "
      "analytic model chooses for it: (key, {tile-m, cache-m, cache-n, "
      "cache-k, tile-n}); tile-n is not tunable.");

  m.def(
      "check",
      [](const std::string &text, const std::string &filename) {
        mlir::kina::CompileOutput output;
        {
          py::gil_scoped_release release;
          output = mlir::kina::checkKinaSource(text, filename);
        }
        return py::make_tuple(output.ok, output.diagnostics, output.kinaIR);
      },
      py::arg("text"), py::arg("filename"),
      "Parse and type-check .kina source: (ok, diagnostics, kina IR).");

  py::class_<Function>(m, "Function")
      .def_property_readonly("name", &Function::name)
      .def("__call__", &Function::call)
      .def("__repr__", &Function::repr);

  py::class_<Library, std::shared_ptr<Library>>(m, "Library")
      .def(py::init<const std::string &>(), py::arg("path"))
      .def_property_readonly(
          "signature",
          [](const Library &library) {
            return toDict(library.shared->signature());
          },
          "What the .so exports: {functions, mesh, devices}, each function "
          "{name, params, result, probes}, each tensor {name, dtype, "
          "numpy_dtype, shape, global}.")
      .def("run_device", &runDevice, py::arg("index"), py::arg("device"),
           py::arg("inputs"))
      .def("simulate", &simulate, py::arg("index"), py::arg("per_device"),
           py::arg("threads_per_device"), py::arg("timeout"))
      .def_property(
          "num_threads",
          [](const Library &library) { return library.shared->numThreads(); },
          [](const Library &library, int n) {
            library.shared->setNumThreads(n);
          })
      .def("function", [](std::shared_ptr<Library> library, size_t index) {
        if (index >= library->shared->signature().functions.size())
          throw py::index_error("no function #" + std::to_string(index));
        return Function(library, index);
      });
}
