//===- CostRecords.cpp - The remarks the records say ----------------------===//
#include "Kina/Sharding/CostRecords.h"

#include <sstream>

std::string mlir::kina::remarkText(const CollectiveRecord &record) {
  std::ostringstream os;
  os << "inserted kina." << record.kind << " over mesh axis '" << record.over
     << "' of a value placed " << record.placement;
  if (!record.origin.empty())
    os << ", from " << record.origin;
  if (!record.serves.empty())
    os << ", for " << record.serves;
  os << ": " << record.reason << "; each device sends "
     << record.bytesPerDevice << " bytes in '" << record.function << "'";
  const char *separator = "; weighed: ";
  for (const WeighedPlan &plan : record.weighed) {
    os << separator << plan.choice << " " << plan.bytes << " B";
    separator = ", ";
  }
  return os.str();
}

std::string mlir::kina::remarkText(const FunctionCostRecord &record) {
  std::ostringstream os;
  os << "cost of '" << record.function << "', per device: " << record.flops
     << " FLOPs, " << record.peakBytes << " bytes at peak;";
  // The traffic comes grouped by direction, forward first.
  for (size_t i = 0; i < record.traffic.size(); ++i) {
    const TrafficRecord &t = record.traffic[i];
    bool opens = i == 0 || record.traffic[i - 1].backward != t.backward;
    if (opens)
      os << (i ? ";" : "") << (t.backward ? " backward " : " forward ");
    else
      os << ", ";
    os << t.count << " " << t.kind << " over " << t.over << " (" << t.bytes
       << " B)";
  }
  const MemoryBytes &peak = record.atPeak;
  os << (record.traffic.empty() ? "" : ";") << " " << record.bytesSent
     << " bytes sent in all; held at peak: weights " << peak.weights
     << " B, gradients " << peak.gradients << " B, optimizer state "
     << peak.optimizerState << " B, activations " << peak.activations << " B";
  return os.str();
}
