//===- kina-tblgen.cpp - TableGen driver for Kina's own backends ----------===//
#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"

int main(int argc, char **argv) { return mlir::MlirTblgenMain(argc, argv); }
