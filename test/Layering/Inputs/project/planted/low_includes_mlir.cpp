// Low links no MLIR but includes an MLIR header (never compiled).
#include "Kina/Low/Low.h"
#include "mlir/IR/Builders.h"
