//===- AutoShard.cpp - The cheapest placement of a function ---------------===//

#include "Kina/AutoShard/AutoShard.h"

#include "Apply.h"
#include "Problem.h"
#include "Solve.h"

#include "Kina/Sharding/SplitReductions.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::autoshard;

/// The form the problem reads: a placement the program writes on an op's
/// result (a declared result type, an ascription) becomes a reshard after
/// the op, so that the op's own strategy stays free; a reshard to `@auto`
/// (a call's argument placed as its parameter) is nothing.
static void prepare(func::FuncOp fn) {
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    // A mean as a sum and a division, as the propagation computes one over
    // a split axis: the sum's contracting factor lets the space split the
    // axis and reduce a partial sum (data parallelism's loss).
    if (auto mean = dyn_cast<MeanOp>(op)) {
      OpBuilder builder(op);
      SmallVector<Operation *> built = meanAsSum(builder, mean);
      if (!built.empty()) {
        Value result = built.back()->getResult(0);
        if (!placementOf(mean.getResult()).isAuto())
          result = ReshardOp::create(builder, op->getLoc(), mean.getType(),
                                     result);
        mean.getResult().replaceAllUsesWith(result);
        mean->erase();
        continue;
      }
    }
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      if (placementOf(reshard.getResult()).isAuto()) {
        reshard.getResult().replaceAllUsesWith(reshard.getInput());
        reshard->erase();
      }
      continue;
    }
    if (op->getNumResults() != 1 || op->getNumOperands() == 0)
      continue;
    Value result = op->getResult(0);
    auto type = dyn_cast<KinaTensorType>(result.getType());
    if (!type || !type.getPlacement().isMesh())
      continue;
    result.setType(type.withPlacement(PlacementAttr::getAuto(fn.getContext())));
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    auto pin = ReshardOp::create(builder, op->getLoc(), type, result);
    result.replaceAllUsesExcept(pin.getResult(), pin);
  }
}

/// A solve that ran past its seconds limit by more than this fraction of
/// it, and this many seconds, overran it.
static constexpr double kLimitOverrun = 0.1;
static constexpr double kLimitSlackSeconds = 1;
/// Plans within this fraction of the optimum's objective are ties.
static constexpr double kTieTolerance = 1e-9;
/// The programs whose ties are broken by a second solve: those of at most
/// this many decisions (once repeated layers are tied).
static constexpr int64_t kTieBreakDecisions = 1000;

/// The bytes of `value`'s smallest block among its placements.
static int64_t smallestBlock(Problem &problem, Value value) {
  int64_t smallest = INT64_MAX;
  for (auto &[placement, choices] : problem.candidates(value))
    smallest = std::min(smallest, problem.blockBytes(value, placement));
  return smallest;
}

/// Why no plan fits the budget: the program point whose live values,
/// each placed in its smallest block, still exceed it.
static void explainBudget(Problem &problem) {
  int64_t worst = -1, worstBytes = 0;
  for (int64_t i = 0; i < problem.numPoints; ++i) {
    int64_t bytes = 0;
    for (Value value : problem.liveAt(i))
      bytes += smallestBlock(problem, value);
    if (bytes > worstBytes) {
      worst = i;
      worstBytes = bytes;
    }
  }
  func::FuncOp fn = problem.function;
  if (worst < 0 || worstBytes <= problem.options.budgetBytes) {
    emitError(fn.getLoc())
        << "auto-shard: no plan of '" << fn.getName() << "' fits "
        << problem.options.budgetBytes
        << " bytes per device at every program point (each point fits "
           "alone; the placements they need conflict)";
    return;
  }
  Operation *at = &*std::next(fn.getBody().front().begin(), worst);
  InFlightDiagnostic diagnostic = emitError(at->getLoc());
  diagnostic << "auto-shard: no plan of '" << fn.getName() << "' fits "
             << problem.options.budgetBytes
             << " bytes per device: while this op runs every device holds at "
                "least "
             << worstBytes << " bytes (" << worstBytes -
                                             problem.options.budgetBytes
             << " over), split as finely as the mesh allows:";
  SmallVector<std::pair<int64_t, std::string>> held;
  for (Value value : problem.liveAt(worst)) {
    int64_t smallest = smallestBlock(problem, value);
    std::string name;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      name = parameterName(fn, arg.getArgNumber());
      name = name[0] == '#' ? "argument " + name : "'" + name + "'";
    } else {
      name = "the value of " + locationText(value.getLoc());
    }
    held.push_back({smallest, name});
  }
  llvm::sort(held, [](auto &a, auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (auto [i, entry] : llvm::enumerate(held)) {
    if (i == 5) {
      diagnostic << " ...";
      break;
    }
    diagnostic << (i ? ", " : " ") << entry.second << " " << entry.first
               << " B";
  }
}

/// Each parameter's name and placement under `choices`.
static std::vector<std::pair<std::string, std::string>>
parameterPlacements(Problem &problem, ArrayRef<int> choices) {
  std::vector<std::pair<std::string, std::string>> placements;
  for (auto [i, arg] : llvm::enumerate(problem.function.getArguments()))
    placements.push_back({parameterName(problem.function, i),
                          problem.placementOf(arg, choices).str()});
  return placements;
}

static AutoShardReport::Alternative summarize(Problem &problem,
                                              const Solution &solution) {
  return {solution.objective, problem.evaluate(solution.choices).bytes,
          parameterPlacements(problem, solution.choices)};
}

/// The next `options.alternatives` plans: after each, a cut excludes its
/// parameters' placements all together (sum of their s <= count - 1).
static void findAlternatives(Problem &problem,
                                      const Formulation &formulation,
                                      const Solution &best,
                             AutoShardReport &report) {
  SmallVector<int> parameters;
  for (auto [n, node] : llvm::enumerate(problem.nodes))
    if (node.argument >= 0 && node.results.size() > 1)
      parameters.push_back(n);
  if (parameters.empty())
    return;
  Milp program = formulation.milp;
  const Solution *last = &best;
  Solution next;
  for (int64_t i = 0; i < problem.options.alternatives; ++i) {
    std::vector<std::pair<int, double>> cut;
    for (int n : parameters)
      cut.push_back({formulation.column(n, last->choices[n]), 1});
    program.addConstraint("alternative", std::move(cut),
                          Milp::Sense::LessEqual,
                          static_cast<double>(parameters.size()) - 1);
    next = formulation.solve(program);
    if (!next.result.hasSolution())
      break;
    report.alternatives.push_back(summarize(problem, next));
    last = &next;
  }
}

/// For each parameter `options.explain` names: the best plan with each of
/// its other placements pinned.
static void explainParameters(Problem &problem,
                                       const Formulation &formulation,
                                       const Solution &best,
                              AutoShardReport &report) {
  func::FuncOp fn = problem.function;
  for (const std::string &name : problem.options.explain) {
    auto node = llvm::find_if(problem.nodes, [&](const Node &node) {
      return node.argument >= 0 &&
             parameterName(fn, node.argument) == name;
    });
    // Asked of every function placed: one without the parameter (or
    // with it pinned) has nothing to say.
    if (node == problem.nodes.end())
      continue;
    int n = node - problem.nodes.begin();
    for (auto [k, placement] : llvm::enumerate(node->results)) {
      if (static_cast<int>(k) == best.choices[n])
        continue;
      Milp program = formulation.milp;
      program.setBounds(formulation.column(n, k), 1, 1);
      Solution pinned = formulation.solve(program);
      AutoShardReport::WhyNot entry;
      entry.parameter = name;
      entry.placement = placement.str();
      entry.feasible = pinned.result.hasSolution();
      if (entry.feasible)
        entry.plan = summarize(problem, pinned);
      report.whyNot.push_back(std::move(entry));
    }
  }
}

LogicalResult mlir::kina::autoShard(func::FuncOp fn,
                                    const AutoShardOptions &options,
                                    AutoShardReport *report) {
  MeshOp mesh = MeshOp::lookup(fn);
  if (!mesh)
    return fn.emitError("auto-shard needs a mesh: declare one with "
                        "@mesh([...])");
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("auto-shard: a function of one block expected");
  prepare(fn);
  FailureOr<Problem> problem = Problem::build(fn, mesh, options);
  if (failed(problem))
    return failure();
  Formulation formulation(*problem);
  Solution solution = formulation.solve();
  if (!solution.result.hasSolution()) {
    if (options.budgetBytes > 0 &&
        solution.result.status == Milp::Result::Status::Infeasible) {
      explainBudget(*problem);
      return failure();
    }
    // CBC checks its limit between its steps, not inside its first LP
    // relaxation: say how long it ran when that overran the limit.
    double limit = options.secondsLimit;
    std::string stopped =
        solution.result.seconds >
                limit + std::max(kLimitSlackSeconds, kLimitOverrun * limit)
            ? llvm::formatv("CBC stopped after {0:F1} s: the seconds limit "
                            "({1} s) is not checked inside its first LP "
                            "relaxation",
                            solution.result.seconds, limit)
                  .str()
            : llvm::formatv("the seconds limit, {0} s", limit).str();
    return fn.emitError() << "auto-shard: the solver found no plan for '"
                          << fn.getName() << "' (" << stopped << "; "
                          << problem->numGroups() << " decisions, "
                          << solution.variables << " variables)";
  }
  // Ties (plans whose objectives differ by less than CBC's tolerances
  // tell apart) go to the one holding the fewest parameter bytes; on
  // large programs the second solve costs several times the first (a
  // 12-layer GPT step: 278 s against 43), and CBC's choice stands.
  if (problem->numGroups() <= kTieBreakDecisions)
    solution = formulation.breakTies(
        solution,
        kTieTolerance * std::max(1.0, std::fabs(solution.objective)));
  AutoShardReport out;
  out.function = fn.getName().str();
  out.objective = solution.objective;
  out.bytesObjective = options.objective == AutoShardOptions::Objective::Bytes;
  out.bound = solution.bound;
  out.gap = solution.result.gap();
  out.optimal = solution.result.status == Milp::Result::Status::Optimal;
  out.nodes = problem->nodes.size();
  out.groups = problem->numGroups();
  out.variables = solution.variables;
  out.constraints = solution.constraints;
  Problem::Evaluation evaluation = problem->evaluate(solution.choices);
  out.predictedSeconds = evaluation.seconds;
  out.bytesPerDevice = evaluation.bytes;
  out.peakBytes = evaluation.peakBytes;
  out.collectives = evaluation.collectives;
  if (options.enumerateUpTo > 0)
    if (auto all = enumerateAll(*problem, options.enumerateUpTo)) {
      out.enumerated = all->first;
      out.enumeratedBest = all->second;
    }
  out.parameters = parameterPlacements(*problem, solution.choices);
  findAlternatives(*problem, formulation, solution, out);
  explainParameters(*problem, formulation, solution, out);
  if (failed(applyPlan(*problem, solution.choices, out.inserted)))
    return failure();
  KinaDialect::AutoShardedAttrHelper(fn.getContext())
      .setAttr(fn, UnitAttr::get(fn.getContext()));
  emitRemark(fn.getLoc()) << remarkText(out);
  if (report)
    *report = std::move(out);
  return success();
}

std::string mlir::kina::remarkText(const AutoShardReport &report) {
  std::string text = llvm::formatv(
      "auto-shard of '{0}': {1} plan, objective {2:f1} {12} (CBC's bound "
      "{3:f1}, gap {4:e2}); predicted {5:e} s, {6} bytes sent per device in {7} "
      "collectives, {8} bytes at peak; {9} decisions{13}, {10} variables, "
      "{11} constraints",
      report.function, report.optimal ? "optimal" : "feasible",
      report.objective, report.bound, report.gap, report.predictedSeconds,
      report.bytesPerDevice, report.collectives, report.peakBytes,
      report.nodes, report.variables, report.constraints,
      report.bytesObjective ? "B" : "ns",
      report.groups < report.nodes
          ? llvm::formatv(" ({0} once repeated layers are tied)",
                          report.groups)
                .str()
          : std::string());
  text += "; parameters:";
  for (auto [i, parameter] : llvm::enumerate(report.parameters))
    text += (i ? ", " : " ") + parameter.first + " " + parameter.second;
  auto unit = report.bytesObjective ? " B" : " ns";
  auto delta = [&](const AutoShardReport::Alternative &plan) {
    double more = plan.objective - report.objective;
    return llvm::formatv("{0}{1:f1}{2} ({3} B sent)", more >= 0 ? "+" : "",
                         more, unit, plan.bytesPerDevice)
        .str();
  };
  for (auto [i, alternative] : llvm::enumerate(report.alternatives)) {
    text += llvm::formatv("; alternative {0}: ", i + 1).str() +
            delta(alternative) + ",";
    for (auto [name, placement] : alternative.parameters)
      text += " " + name + " " + placement;
  }
  for (const AutoShardReport::WhyNot &entry : report.whyNot)
    text += "; with " + entry.parameter + " " + entry.placement + ": " +
            (entry.feasible ? delta(entry.plan) : std::string("no plan"));
  if (report.enumerated > 0)
    text += llvm::formatv("; enumerated {0} plans: the best's objective {1:f1}",
                          report.enumerated, report.enumeratedBest)
                .str();
  return text;
}
