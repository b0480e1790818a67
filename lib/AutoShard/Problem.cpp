//===- Problem.cpp - Automatic sharding as choices and their costs --------===//

#include "Problem.h"

#include "Apply.h"

#include "Kina/AutoShard/Predict.h"
#include "Kina/AutoShard/Strategies.h"
#include "Kina/Sharding/Partition.h"
#include "Kina/Sharding/Reshard.h"
#include "Kina/Sharding/ShardingRules.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::autoshard;

static std::string nodeName(Operation *op) {
  return op->getName().getStringRef().str() + " at " +
         locationText(op->getLoc());
}

std::string mlir::kina::autoshard::parameterName(func::FuncOp fn,
                                                 unsigned i) {
  auto name = fn.getArgAttrOfType<StringAttr>(
      i, KinaDialect::NameAttrHelper::getNameStr());
  return name ? name.str() : "#" + std::to_string(i);
}

/// "parameter 'w'", or "argument #i" for one without a name.
static std::string describeParameter(func::FuncOp fn, unsigned i) {
  std::string name = parameterName(fn, i);
  return name[0] == '#' ? "argument " + name : "parameter '" + name + "'";
}

int64_t Problem::blockBytes(Value value, PlacementAttr placement) const {
  auto type = cast<KinaTensorType>(value.getType());
  int64_t elements = 1;
  for (int64_t size : blockShape(type.withPlacement(placement), mesh))
    elements *= size;
  return elements *
         static_cast<int64_t>(type.getElementType().getIntOrFloatBitWidth() /
                              8);
}

FailureOr<Problem> Problem::build(func::FuncOp fn, MeshOp mesh,
                                  const AutoShardOptions &options) {
  Problem problem;
  problem.mesh = mesh;
  problem.options = options;
  problem.function = fn;
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    auto type = dyn_cast<KinaTensorType>(arg.getType());
    if (!type)
      return emitError(arg.getLoc()) << "auto-shard: " << describeParameter(fn, i)
                                      << " is not a kina tensor";
    PlacementAttr placement = type.getPlacement();
    if (placement.isMesh()) {
      problem.fixed[arg] = placement;
      continue;
    }
    if (!placement.isAuto())
      return emitError(arg.getLoc())
             << "auto-shard places values on the mesh; "
             << describeParameter(fn, i) << " is " << placement.str();
    Node node;
    node.name = describeParameter(fn, i);
    node.argument = i;
    for (PlacementAttr candidate : enumeratePlacements(type, mesh)) {
      node.results.push_back(candidate);
      node.operands.emplace_back();
      node.compute.push_back(0);
      node.text.push_back(candidate.str());
    }
    problem.nodeOf[arg] = problem.nodes.size();
    problem.nodes.push_back(std::move(node));
  }

  Block &body = fn.getBody().front();
  DenseMap<Value, int64_t> lastUse;
  SmallVector<Value> defined;
  int64_t index = 0;
  for (Operation &op : body) {
    ++index;
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [j, returned] : llvm::enumerate(ret.getOperands())) {
        auto declared = cast<KinaTensorType>(fn.getResultTypes()[j]);
        if (auto reuses = fn.getResultAttrOfType<IntegerAttr>(
                j, KinaDialect::ReusesAttrHelper::getNameStr())) {
          // A result written into a parameter's buffer takes its placement.
          BlockArgument param = fn.getArgument(reuses.getInt());
          if (problem.nodeOf.count(param)) {
            int node = problem.nodeOf.lookup(param);
            for (auto [k, placement] :
                 llvm::enumerate(problem.nodes[node].results))
              problem.demands.push_back(
                  {returned, placement, node, static_cast<int>(k)});
          } else {
            problem.demands.push_back(
                {returned, problem.fixed.lookup(param), -1, -1});
          }
        } else if (declared.getPlacement().isAuto()) {
          problem.madeWhole.push_back(returned);
        } else {
          // Converted after the last op, at the return's point.
          problem.demands.push_back(
              {returned, declared.getPlacement(), -1, -1, -1, index - 1});
        }
        lastUse[returned] = index; // returned: live to the end
      }
      continue;
    }
    if (op.getNumResults() != 1 ||
        !isa<KinaTensorType>(op.getResult(0).getType()))
      return op.emitError("auto-shard: cannot place this op (one tensor "
                          "result expected; inline calls first)");
    Value result = op.getResult(0);
    defined.push_back(result);
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      // An ascription: the value is converted to its placement.
      PlacementAttr target = kina::placementOf(result);
      if (!target.isMesh() || !kina::placementOf(reshard.getInput()).isOnMesh())
        return op.emitError("auto-shard: a reshard between @host and the "
                            "mesh in a function it places");
      problem.demands.push_back({reshard.getInput(), target, -1, -1});
      problem.fixed[result] = target;
      continue;
    }
    std::optional<ShardingRule> rule = getShardingRule(&op);
    if (!rule || op.getNumOperands() == 0) {
      PlacementAttr placement = kina::placementOf(result);
      if (!placement.isMesh())
        return op.emitError("auto-shard: no sharding rule places this op");
      problem.fixed[result] = placement;
      continue;
    }
    Node node;
    node.name = nodeName(&op);
    node.op = &op;
    for (Strategy &strategy : enumerateStrategies(&op, *rule, mesh)) {
      int k = node.results.size();
      for (auto [i, operand] : llvm::enumerate(op.getOperands()))
        problem.demands.push_back({operand, strategy.operands[i],
                                   static_cast<int>(problem.nodes.size()), k,
                                   static_cast<int>(i), index - 1});
      node.compute.push_back(
          computeSeconds(&op, strategy.operands, strategy.result, mesh,
                         options.machine));
      node.results.push_back(strategy.result);
      node.operands.push_back(strategy.operands);
      node.text.push_back(strategy.text);
    }
    problem.nodeOf[result] = problem.nodes.size();
    problem.nodes.push_back(std::move(node));
  }

  // The points each value is live at: from its definition to its last
  // use, that use included (an op reads its operands while it writes its
  // result, as the ledger, Module.cost, counts them); a value never used
  // is live where it is made.
  index = 0;
  for (Operation &op : body) {
    ++index;
    if (isa<func::ReturnOp>(op))
      break;
    int64_t last = std::max(index, lastUse.lookup(op.getResult(0)));
    problem.lifetimes.push_back({op.getResult(0), index - 1, last - 1});
    ++problem.numPoints;
  }
  // The return's point: the values returned, and what converts them.
  ++problem.numPoints;
  for (Problem::Lifetime &lifetime : problem.lifetimes)
    lifetime.to = std::min(lifetime.to, problem.numPoints - 1);
  if (options.tieLayers) {
    problem.tieRepeatedLayers();
  } else {
    for (size_t n = 0; n < problem.nodes.size(); ++n)
      problem.groupOf.push_back(n);
  }
  return problem;
}

SmallVector<Value> Problem::liveAt(int64_t point) const {
  func::FuncOp fn = function;
  SmallVector<Value> live(fn.getArguments().begin(), fn.getArguments().end());
  for (const Lifetime &lifetime : lifetimes)
    if (lifetime.from <= point && point <= lifetime.to)
      live.push_back(lifetime.value);
  return live;
}

int64_t Problem::numGroups() const {
  int64_t count = 0;
  for (auto [n, group] : llvm::enumerate(groupOf))
    count += static_cast<int>(n) == group;
  return count;
}

PlacementAttr Problem::placementOf(Value value, ArrayRef<int> choices) const {
  auto it = nodeOf.find(value);
  if (it != nodeOf.end())
    return nodes[it->second].results[choices[it->second]];
  return fixed.lookup(value);
}

SmallVector<std::pair<PlacementAttr, SmallVector<int>>>
Problem::candidates(Value value) const {
  SmallVector<std::pair<PlacementAttr, SmallVector<int>>> out;
  auto it = nodeOf.find(value);
  if (it == nodeOf.end()) {
    out.push_back({fixed.lookup(value), {}});
    return out;
  }
  for (auto [k, placement] : llvm::enumerate(nodes[it->second].results)) {
    PlacementAttr p = placement;
    auto same = llvm::find_if(out, [&](auto &c) { return c.first == p; });
    if (same == out.end())
      out.push_back({placement, {static_cast<int>(k)}});
    else
      same->second.push_back(k);
  }
  return out;
}

const Conversion &Problem::conversion(Value value, PlacementAttr from,
                                      PlacementAttr to) {
  auto type = cast<KinaTensorType>(value.getType()).withPlacement(from);
  auto key = std::make_pair(type.getAsOpaquePointer(), to.getAsOpaquePointer());
  auto it = conversions.find(key);
  if (it != conversions.end())
    return it->second;
  Conversion conversion;
  if (from != to) {
    // Built in a scratch spot of the function and erased: the bytes are
    // those of the collectives the rewrite will build.
    OpBuilder builder(&function.getBody().front(),
                      function.getBody().front().begin());
    Location loc = function.getLoc();
    auto source = UnrealizedConversionCastOp::create(builder, loc,
                                                     TypeRange{type},
                                                     ValueRange{});
    SmallVector<Operation *> made;
    {
      ScopedDiagnosticHandler quiet(function.getContext(),
                                    [](Diagnostic &) { return success(); });
      builder.setInsertionPointAfter(source);
      conversion.possible = succeeded(convertPlacement(
          builder, loc, source.getResult(0), to,
          [&](Operation *op) { made.push_back(op); }));
    }
    for (Operation *op : made) {
      int64_t bytes = bytesSentPerDevice(op);
      if (int kind = collectiveKind(op); kind >= 0 && bytes > 0) {
        conversion.bytes[kind] += bytes;
        ++conversion.count[kind];
      }
    }
    for (Operation *op : llvm::reverse(made))
      op->erase();
    source->erase();
  }
  return conversions[key] = conversion;
}

int64_t Conversion::totalBytes() const {
  int64_t total = 0;
  for (int64_t b : bytes)
    total += b;
  return total;
}

int64_t Conversion::collectives() const {
  int64_t total = 0;
  for (int64_t c : count)
    total += c;
  return total;
}

double Conversion::seconds(const MachineModel &machine) const {
  double total = 0;
  for (int k = 0; k < kNumCollectiveKinds; ++k)
    total += collectiveSeconds(k, count[k], bytes[k], machine);
  return total;
}

double Problem::price(const Conversion &conversion) const {
  if (options.objective == AutoShardOptions::Objective::Bytes)
    return static_cast<double>(conversion.totalBytes());
  return computePrice(conversion.seconds(options.machine));
}

/// The placement whose partial sums are reduced, its splits kept.

Problem::Evaluation Problem::evaluate(ArrayRef<int> choices) {
  Evaluation evaluation;
  auto add = [&](const Conversion &conversion) {
    if (!conversion.possible)
      evaluation.feasible = false;
    evaluation.bytes += conversion.totalBytes();
    evaluation.collectives += conversion.collectives();
    evaluation.objective += price(conversion);
    evaluation.seconds += conversion.seconds(options.machine);
  };
  for (auto [n, node] : llvm::enumerate(nodes)) {
    evaluation.objective += computePrice(node.compute[choices[n]]);
    evaluation.seconds += node.compute[choices[n]];
  }
  // One conversion per (value, target) that some active demand needs.
  llvm::SetVector<std::pair<Value, Attribute>> needed;
  for (const Demand &demand : demands)
    if (demand.node < 0 || choices[demand.node] == demand.choice)
      needed.insert({demand.value, demand.target});
  for (auto [value, target] : needed)
    add(conversion(value, placementOf(value, choices),
                   cast<PlacementAttr>(target)));
  for (Value value : madeWhole) {
    PlacementAttr placement = placementOf(value, choices);
    add(conversion(value, placement, whole(placement)));
  }
  // The bytes live at each point, swept: each value's block added where
  // it is made and taken away after its last use.
  if (numPoints > 0) {
    int64_t held = 0;
    for (Value arg : function.getArguments())
      held += blockBytes(arg, placementOf(arg, choices));
    std::vector<int64_t> change(numPoints + 1, 0);
    for (const Lifetime &lifetime : lifetimes) {
      int64_t bytes =
          blockBytes(lifetime.value, placementOf(lifetime.value, choices));
      change[lifetime.from] += bytes;
      change[lifetime.to + 1] -= bytes;
    }
    // The conversions' results, over their spans; a result returned
    // @auto reduced after the last op.
    llvm::MapVector<std::pair<Value, Attribute>, Span> spans;
    for (const Demand &demand : demands) {
      if (demand.point < 0 ||
          (demand.node >= 0 && choices[demand.node] != demand.choice) ||
          placementOf(demand.value, choices) == demand.target)
        continue;
      auto [it, added] = spans.insert(
          {{demand.value, demand.target}, {demand.point, demand.point}});
      it->second.from = std::min(it->second.from, demand.point);
      it->second.to = std::max(it->second.to, demand.point);
    }
    for (auto &[key, span] : spans) {
      int64_t bytes = blockBytes(key.first, cast<PlacementAttr>(key.second));
      change[span.from] += bytes;
      change[span.to + 1] -= bytes;
    }
    for (Value value : madeWhole) {
      PlacementAttr placement = placementOf(value, choices);
      if (whole(placement) != placement)
        change[numPoints - 1] += blockBytes(value, whole(placement));
    }
    for (int64_t point = 0; point < numPoints; ++point) {
      held += change[point];
      evaluation.peakBytes = std::max(evaluation.peakBytes, held);
    }
  }
  if (options.budgetBytes > 0 && evaluation.peakBytes > options.budgetBytes)
    evaluation.feasible = false;
  return evaluation;
}
