//===- MatmulTuning.cpp - Measured matmul parameters, per CPU and shape ---===//

#include "Kina/CPU/MatmulTuning.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir::kina;

// The `format` field of a tuning file; python/kina/tune.py writes it.
static constexpr int64_t kTuningFormat = 1;

std::string mlir::kina::cpuKey(const CPUDescription &cpu) {
  auto level = [](const CacheLevel &c) {
    return std::to_string(c.bytes / 1024) + " KiB " + std::to_string(c.ways) +
           "-way";
  };
  return cpu.name + ", " + std::to_string(cpu.vectorBits) + "-bit FMA, L1d " +
         level(cpu.l1d) + ", L2 " + level(cpu.l2);
}

std::optional<std::string>
mlir::kina::checkTunedParameters(const TunedMatmul &t) {
  if (t.tileM < 1 || t.tileM > kMaxTileRows)
    return "'tile-m' must be in [1, " + std::to_string(kMaxTileRows) +
           "], got " + std::to_string(t.tileM);
  for (auto [name, value] :
       {std::pair<const char *, int64_t>{"cache-m", t.cacheM},
        {"cache-n", t.cacheN},
        {"cache-k", t.cacheK}})
    if (value < 1)
      return "'" + std::string(name) + "' must be at least 1, got " +
             std::to_string(value);
  return std::nullopt;
}

std::string mlir::kina::formatTunedMatmul(const TunedMatmul &t) {
  return std::to_string(t.m) + "x" + std::to_string(t.k) + "x" +
         std::to_string(t.n) + ":" + std::to_string(t.tileM) + ":" +
         std::to_string(t.cacheM) + ":" + std::to_string(t.cacheN) + ":" +
         std::to_string(t.cacheK);
}

std::optional<TunedMatmul> mlir::kina::parseTunedMatmul(llvm::StringRef text) {
  auto [shape, parameters] = text.split(':');
  llvm::SmallVector<llvm::StringRef, 3> dims;
  llvm::SmallVector<llvm::StringRef, 4> values;
  shape.split(dims, 'x');
  parameters.split(values, ':');
  if (dims.size() != 3 || values.size() != 4)
    return std::nullopt;
  int64_t numbers[7];
  llvm::SmallVector<llvm::StringRef, 7> fields(dims.begin(), dims.end());
  fields.append(values);
  for (auto [i, field] : llvm::enumerate(fields))
    if (field.getAsInteger(10, numbers[i]) || numbers[i] < 1)
      return std::nullopt;
  return TunedMatmul{numbers[0], numbers[1], numbers[2], numbers[3],
                     numbers[4], numbers[5], numbers[6]};
}

static llvm::Error fail(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

llvm::Expected<std::vector<TunedMatmul>>
mlir::kina::readMatmulTuning(llvm::StringRef path, const CPUDescription &cpu) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path);
  if (!file)
    return fail(path, "cannot read the matmul tuning file: " +
                          file.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*file)->getBuffer());
  if (!json)
    return fail(path, "not a matmul tuning file: " +
                          llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getInteger("format") != kTuningFormat)
    return fail(path, "not a matmul tuning file of format " +
                          llvm::Twine(kTuningFormat) +
                          " (python3 -m kina.tune writes them)");
  std::optional<llvm::StringRef> measuredOn = root->getString("cpu");
  std::string key = cpuKey(cpu);
  if (measuredOn != key)
    return fail(path, "measured on '" + measuredOn.value_or("?") +
                          "', not on this target ('" + key +
                          "'): tune again on this CPU");
  const llvm::json::Array *entries = root->getArray("matmuls");
  if (!entries)
    return fail(path, "no 'matmuls' list");
  auto entryError = [&](size_t index, const llvm::Twine &message) {
    return fail(path, "matmuls[" + llvm::Twine(index) + "]: " + message);
  };
  std::vector<TunedMatmul> tuned;
  for (auto [index, entry] : llvm::enumerate(*entries)) {
    const llvm::json::Object *fields = entry.getAsObject();
    TunedMatmul t;
    std::pair<const char *, int64_t *> wanted[] = {{"m", &t.m},
                                                   {"k", &t.k},
                                                   {"n", &t.n},
                                                   {"tile-m", &t.tileM},
                                                   {"cache-m", &t.cacheM},
                                                   {"cache-n", &t.cacheN},
                                                   {"cache-k", &t.cacheK}};
    for (auto [name, slot] : wanted) {
      std::optional<int64_t> value =
          fields ? fields->getInteger(name) : std::nullopt;
      if (!value)
        return entryError(index, "no integer '" + llvm::Twine(name) + "'");
      *slot = *value;
    }
    if (t.m < 1 || t.k < 1 || t.n < 1)
      return entryError(index, "the shape must be positive");
    if (std::optional<std::string> problem = checkTunedParameters(t))
      return entryError(index, *problem);
    if (llvm::any_of(tuned, [&](const TunedMatmul &other) {
          return other.m == t.m && other.k == t.k && other.n == t.n;
        }))
      return entryError(index, "a second entry for " + llvm::Twine(t.m) + "x" +
                                   llvm::Twine(t.k) + "x" + llvm::Twine(t.n));
    tuned.push_back(t);
  }
  return tuned;
}
