// RUN: not kina-opt %s --kina-partition=form=spmd 2>&1 | FileCheck %s
// The per-device form is named but not built yet: a clear error.
// CHECK: error: kina-partition: form=spmd is not implemented yet (form=host is)
kina.mesh @mesh [x = 2]
