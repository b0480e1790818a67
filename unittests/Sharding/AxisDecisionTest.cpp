//===- AxisDecisionTest.cpp - The propagation's choice, on its own --------===//
//
// decideAxis on small products, against the bytes worked out by hand from
// the collectives' formulas (Reshard.h): it changes no IR.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/AxisDecision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::kina;

namespace {
class AxisDecisionTest : public ::testing::Test {
protected:
  AxisDecisionTest() { context.loadDialect<KinaDialect, func::FuncDialect>(); }

  /// `x @ w` on a mesh of one axis `x` of `devices` devices, its operands
  /// and result of these kina tensor types (`4x8xf32, @replicated`).
  MatmulOp parseProduct(int devices, StringRef lhs, StringRef rhs,
                        StringRef result) {
    std::string source =
        ("kina.mesh @mesh [x = " + Twine(devices) + "]\n" +
         "func.func @f(%x: !kina.tensor<" + lhs + ">, %w: !kina.tensor<" + rhs +
         ">) {\n  %y = kina.matmul %x, %w : (!kina.tensor<" + lhs +
         ">, !kina.tensor<" + rhs + ">) -> !kina.tensor<" + result +
         ">\n  return\n}\n")
            .str();
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    MatmulOp product;
    module->walk([&](MatmulOp op) { product = op; });
    EXPECT_TRUE(product);
    return product;
  }

  AxisDecision decide(MatmulOp product) {
    std::optional<ShardingRule> rule = getShardingRule(product);
    EXPECT_TRUE(rule);
    return decideAxis(product, *rule, StringAttr::get(&context, "x"),
                      PlacementAttr::getReplicated(&context),
                      MeshOp::lookup(product));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// x [4, 8] split on K, w [8, 16] split on N, over x of 2 devices. Keeping
// K gathers w's block (1 x 8 x 8 x 4 = 256 B) and all-reduces the [4, 16]
// result (2 x 1 x 32 x 4 = 256 B); keeping N gathers x's block (1 x 4 x 4
// x 4 = 64 B); gathering both sends 320 B. N is kept, and the result is
// split on its columns.
TEST_F(AxisDecisionTest, KeepsTheSplitWhoseGatherIsCheapest) {
  MatmulOp product =
      parseProduct(2, "4x8xf32, @sharded(axis=1)", "8x16xf32, @sharded(axis=1)",
                   "4x16xf32, @auto");
  std::string before;
  llvm::raw_string_ostream(before) << *module;
  AxisDecision decision = decide(product);
  ASSERT_EQ(decision.claims.size(), 2u);
  ASSERT_TRUE(decision.keep);
  EXPECT_TRUE(decision.keepable);
  EXPECT_EQ(decision.resultDim, std::optional<int64_t>(1));
  EXPECT_FALSE(decision.keeps(0));
  EXPECT_TRUE(decision.keeps(1));
  ASSERT_EQ(decision.weighed.size(), 3u);
  EXPECT_EQ(decision.weighed[0].choice, "keeping operand #0's split");
  EXPECT_EQ(decision.weighed[0].bytes, 512);
  EXPECT_EQ(decision.weighed[1].choice, "keeping operand #1's split");
  EXPECT_EQ(decision.weighed[1].bytes, 64);
  EXPECT_EQ(decision.weighed[2].choice, "gathering every operand");
  EXPECT_EQ(decision.weighed[2].bytes, 320);
  std::string after;
  llvm::raw_string_ostream(after) << *module;
  EXPECT_EQ(before, after); // no IR changed
}

// Both operands split K: keeping it sends only the result's all-reduce
// (2 x 1 x ceil(12 / 2) x 4 = 48 B for [3, 4]); the result is partial.
TEST_F(AxisDecisionTest, AContractingSplitLeavesThePartialResult) {
  MatmulOp product =
      parseProduct(2, "3x8xf32, @sharded(axis=1)", "8x4xf32, @sharded(axis=0)",
                   "3x4xf32, @auto");
  AxisDecision decision = decide(product);
  ASSERT_TRUE(decision.keep);
  EXPECT_TRUE(decision.keepable);
  EXPECT_EQ(decision.resultDim, std::nullopt);
  EXPECT_TRUE(decision.keeps(0) && decision.keeps(1));
  ASSERT_EQ(decision.weighed.size(), 2u);
  EXPECT_EQ(decision.weighed[0].bytes, 48);
  // Gathering both: 3 x 4 x 4 + 4 x 4 x 4 = 112 B.
  EXPECT_EQ(decision.weighed[1].bytes, 112);
}

// One operand splits N: keeping it moves nothing; gathering it would send
// 3 x 8 x 1 x 4 = 96 B.
TEST_F(AxisDecisionTest, ALoneSplitIsKeptForFree) {
  MatmulOp product = parseProduct(
      4, "4x8xf32, @replicated", "8x4xf32, @sharded(axis=1)", "4x4xf32, @auto");
  AxisDecision decision = decide(product);
  ASSERT_EQ(decision.claims.size(), 1u);
  ASSERT_TRUE(decision.keep);
  EXPECT_TRUE(decision.keepable);
  EXPECT_TRUE(decision.keeps(1));
  ASSERT_EQ(decision.weighed.size(), 2u);
  EXPECT_EQ(decision.weighed[0].bytes, 0);
  EXPECT_EQ(decision.weighed[1].bytes, 96);
}

TEST_F(AxisDecisionTest, NoClaimsIsAnEmptyDecision) {
  MatmulOp product = parseProduct(2, "4x8xf32, @replicated",
                                  "8x4xf32, @replicated", "4x4xf32, @auto");
  AxisDecision decision = decide(product);
  EXPECT_TRUE(decision.claims.empty());
  EXPECT_TRUE(decision.weighed.empty());
}
} // namespace
