// RUN: kina-opt %s --kina-merge-parallel-bodies | FileCheck %s

// Identical bodies (a model's repeated blocks) become one; a body that
// differs stays, and so does a function that is not a parallel body.
// CHECK-LABEL: func.func @f
// CHECK: call @f_parallel(%{{.*}}, %{{.*}}, %[[A:.*]])
// CHECK: call @f_parallel(%{{.*}}, %{{.*}}, %[[B:.*]])
// CHECK: call @f_parallel_2(
// CHECK: call @plain_0(
// CHECK: call @plain_1(
func.func @f(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  call @f_parallel(%c0, %c4, %a) : (index, index, memref<64xf32>) -> ()
  call @f_parallel_1(%c0, %c4, %b) : (index, index, memref<64xf32>) -> ()
  call @f_parallel_2(%c0, %c4, %b) : (index, index, memref<64xf32>) -> ()
  call @plain_0(%a) : (memref<64xf32>) -> ()
  call @plain_1(%a) : (memref<64xf32>) -> ()
  return
}
// CHECK: func.func private @f_parallel(
// CHECK-NOT: func.func private @f_parallel_1(
// CHECK: func.func private @f_parallel_2(
func.func private @f_parallel(%begin: index, %end: index, %m: memref<64xf32>) attributes {kina.parallel_body} {
  %one = arith.constant 1.0 : f32
  scf.for %i = %begin to %end step %begin {
    memref.store %one, %m[%i] : memref<64xf32>
  }
  return
}
func.func private @f_parallel_1(%begin: index, %end: index, %m: memref<64xf32>) attributes {kina.parallel_body} {
  %one = arith.constant 1.0 : f32
  scf.for %i = %begin to %end step %begin {
    memref.store %one, %m[%i] : memref<64xf32>
  }
  return
}
func.func private @f_parallel_2(%begin: index, %end: index, %m: memref<64xf32>) attributes {kina.parallel_body} {
  %two = arith.constant 2.0 : f32
  scf.for %i = %begin to %end step %begin {
    memref.store %two, %m[%i] : memref<64xf32>
  }
  return
}
// CHECK: func.func private @plain_0(
// CHECK: func.func private @plain_1(
func.func private @plain_0(%m: memref<64xf32>) {
  return
}
func.func private @plain_1(%m: memref<64xf32>) {
  return
}
