//===- MatmulTuningTest.cpp - Reading tuning files ------------------------===//

#include "Kina/CPU/MatmulTuning.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir::kina;

namespace {

/// A tuning file with `text` that is removed with the object.
struct TuningFile {
  llvm::SmallString<128> path;
  explicit TuningFile(const std::string &text) {
    int fd;
    EXPECT_FALSE(
        llvm::sys::fs::createTemporaryFile("tuning", "json", fd, path));
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
  }
  ~TuningFile() { llvm::sys::fs::remove(path); }
};

CPUDescription zen5() { return *describeCPU("znver5"); }

/// A file of the current format for `cpu` with `matmuls` (a JSON list).
std::string tuningText(const std::string &cpu, const std::string &matmuls) {
  return "{\"format\": 1, \"cpu\": \"" + cpu + "\", \"matmuls\": " + matmuls +
         "}";
}

const char *kEntry = R"({"m": 128, "k": 768, "n": 32000, "tile-m": 8,
  "cache-m": 64, "cache-n": 128, "cache-k": 384, "median-us": 31000.5})";

/// The error reading `text` for Zen 5 gives, or "" if it reads.
std::string errorOf(const std::string &text) {
  TuningFile file(text);
  llvm::Expected<std::vector<TunedMatmul>> read =
      readMatmulTuning(file.path, zen5());
  if (read)
    return "";
  std::string message = llvm::toString(read.takeError());
  EXPECT_NE(message.find(file.path.str()), std::string::npos) << message;
  return message;
}

TEST(MatmulTuning, ReadsItsEntries) {
  TuningFile file(tuningText(cpuKey(zen5()), std::string("[") + kEntry + "]"));
  llvm::Expected<std::vector<TunedMatmul>> read =
      readMatmulTuning(file.path, zen5());
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  ASSERT_EQ(read->size(), 1u);
  const TunedMatmul &t = read->front();
  EXPECT_EQ(formatTunedMatmul(t), "128x768x32000:8:64:128:384");
}

TEST(MatmulTuning, KeyNamesTheCPUAndItsCaches) {
  EXPECT_EQ(cpuKey(zen5()),
            "znver5, 512-bit FMA, L1d 48 KiB 12-way, L2 1024 KiB 16-way");
  EXPECT_NE(cpuKey(zen5()), cpuKey(*describeCPU("znver4")));
}

TEST(MatmulTuning, RejectsFilesOfAnotherCPU) {
  std::string other = cpuKey(*describeCPU("znver4"));
  std::string message =
      errorOf(tuningText(other, std::string("[") + kEntry + "]"));
  EXPECT_NE(message.find("measured on '" + other + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("tune again on this CPU"), std::string::npos);
}

TEST(MatmulTuning, LocatesBadJSON) {
  std::string message = errorOf("{\"format\": 1,\n \"cpu\": }");
  EXPECT_NE(message.find("not a matmul tuning file"), std::string::npos)
      << message;
  EXPECT_NE(message.find("[2:"), std::string::npos) << message;
}

TEST(MatmulTuning, NamesTheBadEntry) {
  std::string key = cpuKey(zen5());
  EXPECT_NE(errorOf(tuningText(key, R"([{"m": 1}])"))
                .find("matmuls[0]: no integer 'k'"),
            std::string::npos);
  std::string outOfRange = std::string("[") + kEntry + R"(, {"m": 1, "k": 2,
    "n": 32, "tile-m": 0, "cache-m": 1, "cache-n": 1, "cache-k": 1}])";
  EXPECT_NE(errorOf(tuningText(key, outOfRange))
                .find("matmuls[1]: 'tile-m' must be in [1, 16], got 0"),
            std::string::npos);
  std::string twice = std::string("[") + kEntry + ", " + kEntry + "]";
  EXPECT_NE(errorOf(tuningText(key, twice))
                .find("matmuls[1]: a second entry for 128x768x32000"),
            std::string::npos);
  EXPECT_NE(errorOf("{\"format\": 2}").find("format 1"), std::string::npos);
  EXPECT_NE(errorOf("").find("not a matmul tuning file"), std::string::npos);
}

TEST(MatmulTuning, PassOptionRoundTrips) {
  std::optional<TunedMatmul> t = parseTunedMatmul("16x64x64:4:16:32:16");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->k, 64);
  EXPECT_EQ(t->cacheN, 32);
  EXPECT_EQ(formatTunedMatmul(*t), "16x64x64:4:16:32:16");
  for (const char *bad : {"16x64:4:16:32:16", "16x64x64:4:16:32",
                          "16x64x64:4:16:32:0", "16x64x-1:4:16:32:16", ""})
    EXPECT_FALSE(parseTunedMatmul(bad).has_value()) << bad;
}

TEST(MatmulTuning, UnreadableFile) {
  llvm::Expected<std::vector<TunedMatmul>> read =
      readMatmulTuning("/nonexistent/tuning.json", zen5());
  ASSERT_FALSE(bool(read));
  EXPECT_NE(llvm::toString(read.takeError())
                .find("cannot read the matmul tuning file"),
            std::string::npos);
}

} // namespace
