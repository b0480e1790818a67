//===- CostRecords.h - What the compiler decided, as data --------*- C++ -*-===//
//
// The records behind the sharding remarks, in plain C++ (no MLIR), so that
// the compile driver can return them to embedders (Python's `m.cost` and
// `m.remarks`) as data: the remarks are rendered from the same records,
// and nothing reads the remarks' text back.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_SHARDING_COSTRECORDS_H
#define KINA_SHARDING_COSTRECORDS_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kina {

/// One plan weighed for a collective: what it keeps ("keeping operand #0's
/// split", "gathering every operand", the order of the mesh axes "x then
/// y"), and the bytes each device would send.
struct WeighedPlan {
  std::string choice;
  int64_t bytes = 0;
};

/// A collective the placement propagation inserted.
struct CollectiveRecord {
  std::string function; // the function it is in
  std::string location; // `file:line:col` of the op that needed it
  std::string kind;     // all_gather, all_reduce, reduce_scatter, all_to_all
  std::string over;     // the mesh axis whose devices take part
  /// The placement of the value it moves, and what that placement over
  /// `over` comes from ("parameter 'w1'", "the annotation at ..."), or "".
  std::string placement, origin;
  /// The value it serves: "the gradient of 'w1'" for an adjoint, else "".
  std::string serves;
  std::string reason; // why
  int64_t bytesPerDevice = 0;
  /// The plans weighed, the chosen one among them; empty when there was
  /// no choice.
  std::vector<WeighedPlan> weighed;
};

/// What the collectives of one kind over one mesh axis send, per device,
/// in one direction of a function.
struct TrafficRecord {
  bool backward = false; // the adjoint ops of a reverseMode function
  std::string kind, over;
  int64_t count = 0, bytes = 0;
};

/// Bytes one device holds, by what they are, classified from the
/// program's structure: weights (the parameters a reverseMode
/// differentiates, and what is passed to them), gradients (adjoint
/// values, and a gradient function's gradients where they are called),
/// optimizer state (the other parameters a result reuses, `@reuses`, and
/// the results written into them) and activations (everything else: the
/// batch, intermediates).
struct MemoryBytes {
  int64_t weights = 0, gradients = 0, optimizerState = 0, activations = 0;
  int64_t total() const {
    return weights + gradients + optimizerState + activations;
  }
};

/// What running one function costs a device, before anything runs.
struct FunctionCostRecord {
  std::string function;
  std::string location; // `file:line:col` of the function
  int64_t flops = 0;
  int64_t peakBytes = 0; // arguments included
  int64_t bytesSent = 0; // callees included
  /// Seconds under the time model of automatic sharding (the compile's
  /// machine figures: kina.calibrate's, or the defaults), callees
  /// included.
  double predictedSeconds = 0;
  std::vector<TrafficRecord> traffic;
  /// The memory ledger: the arguments (what a device keeps between
  /// calls), and every value live at the peak, in program order; where
  /// the peak is (`file:line:col` of the op that reaches it, a call for a
  /// peak inside its callee; "" when the arguments are the peak).
  MemoryBytes atRest, atPeak;
  std::string peakLocation;
};

/// Every record of one compile.
struct CostRecords {
  std::vector<CollectiveRecord> collectives;
  std::vector<FunctionCostRecord> costs;
};

/// The remark that says `record` (one located line without its location):
/// "inserted kina.KIND over mesh axis 'X' of a value placed P, from O: WHY;
/// each device sends B bytes in 'F'; weighed: CHOICE B B, ...".
std::string remarkText(const CollectiveRecord &record);
/// "cost of 'F', per device: N FLOPs, P bytes at peak; forward C KIND over
/// X (B B), ...; backward ...; T bytes sent in all; held at peak: weights
/// W B, gradients G B, optimizer state O B, activations A B".
std::string remarkText(const FunctionCostRecord &record);

} // namespace mlir::kina

#endif // KINA_SHARDING_COSTRECORDS_H
