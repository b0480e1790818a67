#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module {
  func.func @storylm0_forward(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0 = tensor.empty() : tensor<1x4x4xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4xi64>) outs(%0 : tensor<1x4x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %c0_i64 = arith.constant 0 : i64
      %c7_i64 = arith.constant 7 : i64
      %50 = arith.maxsi %in, %c0_i64 : i64
      %51 = arith.minsi %50, %c7_i64 : i64
      %52 = arith.index_cast %51 : i64 to index
      %53 = linalg.index 2 : index
      %extracted_31 = tensor.extract %arg1[%52, %53] : tensor<8x4xf32>
      linalg.yield %extracted_31 : f32
    } -> tensor<1x4x4xf32>
    %true = arith.constant true
    %2 = tensor.empty() : tensor<i1>
    %3 = linalg.fill ins(%true : i1) outs(%2 : tensor<i1>) -> tensor<i1>
    %reduced = linalg.reduce ins(%arg0 : tensor<1x4xi64>) outs(%3 : tensor<i1>) dimensions = [0, 1] 
      (%in: i64, %init: i1) {
        %c0_i64 = arith.constant 0 : i64
        %c8_i64 = arith.constant 8 : i64
        %50 = arith.cmpi sge, %in, %c0_i64 : i64
        %51 = arith.cmpi slt, %in, %c8_i64 : i64
        %52 = arith.andi %50, %51 : i1
        %53 = arith.andi %52, %init : i1
        linalg.yield %53 : i1
      }
    %extracted = tensor.extract %reduced[] : tensor<i1>
    %4 = tensor.empty() : tensor<1x4x4xf32>
    %broadcasted = linalg.broadcast ins(%arg2 : tensor<4x4xf32>) outs(%4 : tensor<1x4x4xf32>) dimensions = [0] 
    %cst = arith.constant 0.000000e+00 : f32
    %5 = tensor.empty() : tensor<1x4x4xf32>
    %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %7 = linalg.batch_matmul ins(%1, %broadcasted : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%6 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %collapsed = tensor.collapse_shape %7 [[0, 1, 2]] : tensor<1x4x4xf32> into tensor<16xf32>
    %expanded = tensor.expand_shape %collapsed [[0, 1, 2, 3]] output_shape [1, 4, 2, 2] : tensor<16xf32> into tensor<1x4x2x2xf32>
    %8 = tensor.empty() : tensor<1x2x4x2xf32>
    %transposed = linalg.transpose ins(%expanded : tensor<1x4x2x2xf32>) outs(%8 : tensor<1x2x4x2xf32>) permutation = [0, 2, 1, 3] 
    %9 = tensor.empty() : tensor<1x4x4xf32>
    %broadcasted_0 = linalg.broadcast ins(%arg3 : tensor<4x4xf32>) outs(%9 : tensor<1x4x4xf32>) dimensions = [0] 
    %cst_1 = arith.constant 0.000000e+00 : f32
    %10 = tensor.empty() : tensor<1x4x4xf32>
    %11 = linalg.fill ins(%cst_1 : f32) outs(%10 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %12 = linalg.batch_matmul ins(%1, %broadcasted_0 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%11 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %collapsed_2 = tensor.collapse_shape %12 [[0, 1, 2]] : tensor<1x4x4xf32> into tensor<16xf32>
    %expanded_3 = tensor.expand_shape %collapsed_2 [[0, 1, 2, 3]] output_shape [1, 4, 2, 2] : tensor<16xf32> into tensor<1x4x2x2xf32>
    %13 = tensor.empty() : tensor<1x2x2x4xf32>
    %transposed_4 = linalg.transpose ins(%expanded_3 : tensor<1x4x2x2xf32>) outs(%13 : tensor<1x2x2x4xf32>) permutation = [0, 2, 3, 1] 
    %14 = tensor.empty() : tensor<1x4x4xf32>
    %broadcasted_5 = linalg.broadcast ins(%arg4 : tensor<4x4xf32>) outs(%14 : tensor<1x4x4xf32>) dimensions = [0] 
    %cst_6 = arith.constant 0.000000e+00 : f32
    %15 = tensor.empty() : tensor<1x4x4xf32>
    %16 = linalg.fill ins(%cst_6 : f32) outs(%15 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %17 = linalg.batch_matmul ins(%1, %broadcasted_5 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%16 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %collapsed_7 = tensor.collapse_shape %17 [[0, 1, 2]] : tensor<1x4x4xf32> into tensor<16xf32>
    %expanded_8 = tensor.expand_shape %collapsed_7 [[0, 1, 2, 3]] output_shape [1, 4, 2, 2] : tensor<16xf32> into tensor<1x4x2x2xf32>
    %18 = tensor.empty() : tensor<1x2x4x2xf32>
    %transposed_9 = linalg.transpose ins(%expanded_8 : tensor<1x4x2x2xf32>) outs(%18 : tensor<1x2x4x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_10 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x4x2xf32> into tensor<2x4x2xf32>
    %collapsed_11 = tensor.collapse_shape %transposed_4 [[0, 1], [2], [3]] : tensor<1x2x2x4xf32> into tensor<2x2x4xf32>
    %cst_12 = arith.constant 0.000000e+00 : f32
    %19 = tensor.empty() : tensor<2x4x4xf32>
    %20 = linalg.fill ins(%cst_12 : f32) outs(%19 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %21 = linalg.batch_matmul ins(%collapsed_10, %collapsed_11 : tensor<2x4x2xf32>, tensor<2x2x4xf32>) outs(%20 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %expanded_13 = tensor.expand_shape %21 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
    %22 = tensor.empty() : tensor<1x2x4x4xf32>
    %broadcasted_14 = linalg.broadcast ins(%arg7 : tensor<f32>) outs(%22 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %23 = tensor.empty() : tensor<1x2x4x4xf32>
    %24 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_13, %broadcasted_14 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%23 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_31: f32, %out: f32):
      %50 = arith.mulf %in, %in_31 : f32
      linalg.yield %50 : f32
    } -> tensor<1x2x4x4xf32>
    %25 = tensor.empty() : tensor<1x2x4x4xf32>
    %broadcasted_15 = linalg.broadcast ins(%arg8 : tensor<4x4xf32>) outs(%25 : tensor<1x2x4x4xf32>) dimensions = [0, 1] 
    %26 = tensor.empty() : tensor<1x2x4x4xf32>
    %27 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%24, %broadcasted_15 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%26 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_31: f32, %out: f32):
      %50 = arith.addf %in, %in_31 : f32
      linalg.yield %50 : f32
    } -> tensor<1x2x4x4xf32>
    %cst_16 = arith.constant 0xFF800000 : f32
    %28 = tensor.empty() : tensor<1x2x4xf32>
    %29 = linalg.fill ins(%cst_16 : f32) outs(%28 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %reduced_17 = linalg.reduce ins(%27 : tensor<1x2x4x4xf32>) outs(%29 : tensor<1x2x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %50 = arith.maximumf %in, %init : f32
        linalg.yield %50 : f32
      }
    %30 = tensor.empty() : tensor<1x2x4x4xf32>
    %31 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %reduced_17 : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%30 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_31: f32, %out: f32):
      %50 = arith.subf %in, %in_31 : f32
      %51 = math.exp %50 : f32
      linalg.yield %51 : f32
    } -> tensor<1x2x4x4xf32>
    %cst_18 = arith.constant 0.000000e+00 : f32
    %32 = tensor.empty() : tensor<1x2x4xf32>
    %33 = linalg.fill ins(%cst_18 : f32) outs(%32 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %reduced_19 = linalg.reduce ins(%31 : tensor<1x2x4x4xf32>) outs(%33 : tensor<1x2x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %50 = arith.addf %in, %init : f32
        linalg.yield %50 : f32
      }
    %34 = tensor.empty() : tensor<1x2x4x4xf32>
    %35 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31, %reduced_19 : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%34 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_31: f32, %out: f32):
      %50 = arith.divf %in, %in_31 : f32
      linalg.yield %50 : f32
    } -> tensor<1x2x4x4xf32>
    %collapsed_20 = tensor.collapse_shape %35 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
    %collapsed_21 = tensor.collapse_shape %transposed_9 [[0, 1], [2], [3]] : tensor<1x2x4x2xf32> into tensor<2x4x2xf32>
    %cst_22 = arith.constant 0.000000e+00 : f32
    %36 = tensor.empty() : tensor<2x4x2xf32>
    %37 = linalg.fill ins(%cst_22 : f32) outs(%36 : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
    %38 = linalg.batch_matmul ins(%collapsed_20, %collapsed_21 : tensor<2x4x4xf32>, tensor<2x4x2xf32>) outs(%37 : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
    %expanded_23 = tensor.expand_shape %38 [[0, 1], [2], [3]] output_shape [1, 2, 4, 2] : tensor<2x4x2xf32> into tensor<1x2x4x2xf32>
    %39 = tensor.empty() : tensor<1x4x2x2xf32>
    %transposed_24 = linalg.transpose ins(%expanded_23 : tensor<1x2x4x2xf32>) outs(%39 : tensor<1x4x2x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_25 = tensor.collapse_shape %transposed_24 [[0, 1, 2, 3]] : tensor<1x4x2x2xf32> into tensor<16xf32>
    %expanded_26 = tensor.expand_shape %collapsed_25 [[0, 1, 2]] output_shape [1, 4, 4] : tensor<16xf32> into tensor<1x4x4xf32>
    %40 = tensor.empty() : tensor<1x4x4xf32>
    %broadcasted_27 = linalg.broadcast ins(%arg5 : tensor<4x4xf32>) outs(%40 : tensor<1x4x4xf32>) dimensions = [0] 
    %cst_28 = arith.constant 0.000000e+00 : f32
    %41 = tensor.empty() : tensor<1x4x4xf32>
    %42 = linalg.fill ins(%cst_28 : f32) outs(%41 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %43 = linalg.batch_matmul ins(%expanded_26, %broadcasted_27 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%42 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %44 = tensor.empty() : tensor<1x4x4xf32>
    %45 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %43 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%44 : tensor<1x4x4xf32>) {
    ^bb0(%in: f32, %in_31: f32, %out: f32):
      %50 = arith.addf %in, %in_31 : f32
      linalg.yield %50 : f32
    } -> tensor<1x4x4xf32>
    %46 = tensor.empty() : tensor<1x4x8xf32>
    %broadcasted_29 = linalg.broadcast ins(%arg6 : tensor<4x8xf32>) outs(%46 : tensor<1x4x8xf32>) dimensions = [0] 
    %cst_30 = arith.constant 0.000000e+00 : f32
    %47 = tensor.empty() : tensor<1x4x8xf32>
    %48 = linalg.fill ins(%cst_30 : f32) outs(%47 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %49 = linalg.batch_matmul ins(%45, %broadcasted_29 : tensor<1x4x4xf32>, tensor<1x4x8xf32>) outs(%48 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    return %49, %extracted : tensor<1x4x8xf32>, i1
  }
  func.func @main(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0:2 = call @storylm0_forward(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8) : (tensor<1x4xi64>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1)
    return %0#0, %0#1 : tensor<1x4x8xf32>, i1
  }
}

