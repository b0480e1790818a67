//===- fuzz-compile.cpp - Well-typed programs through the whole compiler --===//
//
// The fuzz input is not source text but the choices of a generator that
// writes a well-typed `.kina` program: random shapes (rank 0 to 4), and
// every op of the language applied where its typing rule allows. Every
// input therefore reaches the lowering, bufferization and code generation;
// the program is compiled to an object in memory (the link is ld.lld's).
// Bad source text is the business of fuzz-frontend.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "Kina/Compiler/CompileModule.h"
#include "Kina/Frontend/MLIRGen.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Shape = std::vector<int64_t>;

struct Value {
  std::string name;
  Shape shape;
  bool isF32 = true;
};

std::string dims(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string type(const Value &v) {
  return std::string("Tensor[") + (v.isF32 ? "F32" : "I64") + ", " +
         dims(v.shape) + ", @host]";
}

class Generator {
public:
  explicit Generator(FuzzedDataProvider &in) : in(in) {}

  std::string program() {
    int statements = in.ConsumeIntegralInRange(1, 12);
    values.push_back(param(randomShape(), true));
    for (int i = 0; i < statements && in.remaining_bytes(); ++i)
      statement();
    std::ostringstream os;
    os << "fn f(";
    for (size_t i = 0; i < params.size(); ++i)
      os << (i ? ", " : "") << params[i].name << ": " << type(params[i]);
    const Value &result = values.back();
    os << ") -> " << type(result) << " {\n" << body.str() << "  return "
       << result.name << "\n}\n";
    return os.str();
  }

private:
  /// Mostly small dims; sometimes multiples of the matmul register tile.
  int64_t randomDim() {
    static const int64_t dims[] = {1, 2, 3, 4, 1, 2, 3, 4, 8, 16, 32, 64};
    return dims[in.ConsumeIntegralInRange<size_t>(0, 11)];
  }

  Shape randomShape(int minRank = 0) {
    Shape shape(in.ConsumeIntegralInRange(minRank, 4));
    for (int64_t &dim : shape)
      dim = randomDim();
    return shape;
  }

  Value param(Shape shape, bool isF32) {
    Value v{"p" + std::to_string(params.size()), std::move(shape), isF32};
    params.push_back(v);
    return v;
  }

  const Value &pickF32() {
    std::vector<size_t> f32;
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i].isF32)
        f32.push_back(i);
    return values[f32[in.ConsumeIntegralInRange<size_t>(0, f32.size() - 1)]];
  }

  void bind(const std::string &expr, Shape shape) {
    Value v{"v" + std::to_string(values.size()), std::move(shape), true};
    body << "  " << v.name << " = " << expr << " : " << dims(v.shape) << "\n";
    values.push_back(v);
  }

  void statement() {
    Value x = pickF32();
    int64_t rank = x.shape.size();
    switch (in.ConsumeIntegralInRange(0, 11)) {
    case 0: { // elementwise with a same-shape partner (a new parameter)
      const char *ops[] = {"+", "-", "*", "/"};
      Value y = param(x.shape, true);
      bind(x.name + " " + ops[in.ConsumeIntegralInRange(0, 3)] + " " + y.name,
           x.shape);
      break;
    }
    case 1:
      bind("-" + x.name, x.shape);
      break;
    case 2: // scalar literal through the contextual broadcast
      bind(x.name + " * broadcast(" +
               std::to_string(in.ConsumeIntegralInRange(-3, 3)) + ".5)",
           x.shape);
      break;
    case 3: { // slice
      if (rank == 0)
        return bind(x.name + " + " + x.name, x.shape);
      int64_t axis = in.ConsumeIntegralInRange<int64_t>(0, rank - 1);
      int64_t start = in.ConsumeIntegralInRange<int64_t>(0, x.shape[axis] - 1);
      int64_t stop =
          in.ConsumeIntegralInRange<int64_t>(start + 1, x.shape[axis]);
      Shape shape = x.shape;
      shape[axis] = stop - start;
      bind("slice[axis=" + std::to_string(axis) + ", start=" +
               std::to_string(start) + ", stop=" + std::to_string(stop) +
               "] " + x.name,
           shape);
      break;
    }
    case 4: { // concat with itself
      if (rank == 0)
        return bind("-" + x.name, x.shape);
      int64_t axis = in.ConsumeIntegralInRange<int64_t>(0, rank - 1);
      Shape shape = x.shape;
      shape[axis] *= 2;
      bind("concat[axis=" + std::to_string(axis) + "] " + x.name + " " +
               x.name,
           shape);
      break;
    }
    case 5: { // matmul with a fresh right-hand side, maybe broadcast
      if (rank < 2)
        return bind(x.name + " * " + x.name, x.shape);
      int64_t n = randomDim();
      Shape result = x.shape;
      result.back() = n;
      if (in.ConsumeBool()) {
        Value w = param({x.shape.back(), n}, true);
        bind(x.name + " @ broadcast(" + w.name + ")", result);
      } else {
        Shape rhs(x.shape.begin(), x.shape.end() - 2);
        rhs.push_back(x.shape.back());
        rhs.push_back(n);
        Value w = param(rhs, true);
        bind("matmul(" + x.name + ", " + w.name + ")", result);
      }
      break;
    }
    case 6: { // transpose by a rotation
      if (rank < 2)
        return bind("-" + x.name, x.shape);
      Shape perm(rank), shape(rank);
      int64_t by = in.ConsumeIntegralInRange<int64_t>(1, rank - 1);
      for (int64_t i = 0; i < rank; ++i) {
        perm[i] = (i + by) % rank;
        shape[i] = x.shape[perm[i]];
      }
      bind(x.name + ".transpose(" + dims(perm) + ")", shape);
      break;
    }
    case 7: { // reshape: flatten, or add a leading 1
      int64_t count = std::accumulate(x.shape.begin(), x.shape.end(),
                                      int64_t(1), std::multiplies<>());
      Shape shape = in.ConsumeBool() ? Shape{count} : x.shape;
      if (shape == x.shape)
        shape.insert(shape.begin(), 1);
      bind("reshape(" + x.name + ", " + dims(shape) + ")", shape);
      break;
    }
    case 8: { // softmax
      if (rank == 0)
        return bind(x.name + " - " + x.name, x.shape);
      int64_t axis = in.ConsumeIntegralInRange<int64_t>(0, rank - 1);
      bind("softmax(" + x.name + ", axis=" + std::to_string(axis) + ")",
           x.shape);
      break;
    }
    case 9: { // explicit broadcast: a leading dim, stretched 1s
      Shape shape = x.shape;
      for (int64_t &dim : shape)
        if (dim == 1)
          dim = in.ConsumeIntegralInRange(1, 3);
      shape.insert(shape.begin(), in.ConsumeIntegralInRange(1, 3));
      bind("broadcast[shape=" + dims(shape) + "] " + x.name, shape);
      break;
    }
    case 10: { // gather rows of a fresh table by fresh ids
      Shape ids = randomShape();
      if (ids.size() > 2)
        ids.resize(2);
      Shape table = {in.ConsumeIntegralInRange(1, 6)};
      Shape row = randomShape();
      if (row.size() > 2)
        row.resize(2);
      table.insert(table.end(), row.begin(), row.end());
      Value t = param(table, true), i = param(ids, false);
      Shape shape = ids;
      shape.insert(shape.end(), row.begin(), row.end());
      bind("gather " + t.name + " " + i.name, shape);
      break;
    }
    default: // x / x: NaN where x is 0, through the same code paths
      bind(x.name + " / " + x.name, x.shape);
      break;
    }
  }

  FuzzedDataProvider &in;
  std::vector<Value> params, values;
  std::ostringstream body;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::string text = Generator(in).program();
  mlir::kina::fuzz::QuietContext quiet;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "generated.kina"),
      llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::kina::importKina(sourceMgr, quiet.context);
  // The generator writes only well-typed programs: a rejection is a bug
  // in the frontend or in the generator, so make it loud.
  if (!module) {
    fprintf(stderr, "generated program rejected:\n%s\n", text.c_str());
    __builtin_trap();
  }
  if (mlir::failed(mlir::kina::compileToObject(*module))) {
    fprintf(stderr, "generated program failed to compile:\n%s\n",
            text.c_str());
    __builtin_trap();
  }
  return 0;
}
