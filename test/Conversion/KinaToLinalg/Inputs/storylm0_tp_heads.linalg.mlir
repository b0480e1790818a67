#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @tp_heads(%arg0: tensor<1x2x4x2xf32>, %arg1: tensor<1x2x2x4xf32>, %arg2: tensor<1x2x4x2xf32>, %arg3: tensor<f32>, %arg4: tensor<4x4xf32>) -> tensor<1x2x4x2xf32> {
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x2x4x2xf32> to tensor<1x1x4x2xf32>
    %extracted_slice_0 = tensor.extract_slice %arg1[0, 0, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1] : tensor<1x2x2x4xf32> to tensor<1x1x2x4xf32>
    %extracted_slice_1 = tensor.extract_slice %arg2[0, 0, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x2x4x2xf32> to tensor<1x1x4x2xf32>
    %collapsed = tensor.collapse_shape %extracted_slice [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %collapsed_2 = tensor.collapse_shape %extracted_slice_0 [[0, 1], [2], [3]] : tensor<1x1x2x4xf32> into tensor<1x2x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x4x4xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %2 = linalg.batch_matmul ins(%collapsed, %collapsed_2 : tensor<1x4x2xf32>, tensor<1x2x4xf32>) outs(%1 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %expanded = tensor.expand_shape %2 [[0, 1], [2], [3]] output_shape [1, 1, 4, 4] : tensor<1x4x4xf32> into tensor<1x1x4x4xf32>
    %3 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted = linalg.broadcast ins(%arg3 : tensor<f32>) outs(%3 : tensor<1x1x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %4 = tensor.empty() : tensor<1x1x4x4xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %broadcasted : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%4 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.mulf %in, %in_29 : f32
      linalg.yield %41 : f32
    } -> tensor<1x1x4x4xf32>
    %6 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_3 = linalg.broadcast ins(%arg4 : tensor<4x4xf32>) outs(%6 : tensor<1x1x4x4xf32>) dimensions = [0, 1] 
    %7 = tensor.empty() : tensor<1x1x4x4xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %broadcasted_3 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%7 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.addf %in, %in_29 : f32
      linalg.yield %41 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_4 = arith.constant 0xFF800000 : f32
    %9 = tensor.empty() : tensor<1x1x4xf32>
    %10 = linalg.fill ins(%cst_4 : f32) outs(%9 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced = linalg.reduce ins(%8 : tensor<1x1x4x4xf32>) outs(%10 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %41 = arith.maximumf %in, %init : f32
        linalg.yield %41 : f32
      }
    %11 = tensor.empty() : tensor<1x1x4x4xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %reduced : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%11 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.subf %in, %in_29 : f32
      %42 = math.exp %41 : f32
      linalg.yield %42 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_5 = arith.constant 0.000000e+00 : f32
    %13 = tensor.empty() : tensor<1x1x4xf32>
    %14 = linalg.fill ins(%cst_5 : f32) outs(%13 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_6 = linalg.reduce ins(%12 : tensor<1x1x4x4xf32>) outs(%14 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %41 = arith.addf %in, %init : f32
        linalg.yield %41 : f32
      }
    %15 = tensor.empty() : tensor<1x1x4x4xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %reduced_6 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%15 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.divf %in, %in_29 : f32
      linalg.yield %41 : f32
    } -> tensor<1x1x4x4xf32>
    %collapsed_7 = tensor.collapse_shape %16 [[0, 1], [2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
    %collapsed_8 = tensor.collapse_shape %extracted_slice_1 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %cst_9 = arith.constant 0.000000e+00 : f32
    %17 = tensor.empty() : tensor<1x4x2xf32>
    %18 = linalg.fill ins(%cst_9 : f32) outs(%17 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %19 = linalg.batch_matmul ins(%collapsed_7, %collapsed_8 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%18 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %expanded_10 = tensor.expand_shape %19 [[0, 1], [2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
    %extracted_slice_11 = tensor.extract_slice %arg0[0, 1, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x2x4x2xf32> to tensor<1x1x4x2xf32>
    %extracted_slice_12 = tensor.extract_slice %arg1[0, 1, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1] : tensor<1x2x2x4xf32> to tensor<1x1x2x4xf32>
    %extracted_slice_13 = tensor.extract_slice %arg2[0, 1, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x2x4x2xf32> to tensor<1x1x4x2xf32>
    %collapsed_14 = tensor.collapse_shape %extracted_slice_11 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %collapsed_15 = tensor.collapse_shape %extracted_slice_12 [[0, 1], [2], [3]] : tensor<1x1x2x4xf32> into tensor<1x2x4xf32>
    %cst_16 = arith.constant 0.000000e+00 : f32
    %20 = tensor.empty() : tensor<1x4x4xf32>
    %21 = linalg.fill ins(%cst_16 : f32) outs(%20 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %22 = linalg.batch_matmul ins(%collapsed_14, %collapsed_15 : tensor<1x4x2xf32>, tensor<1x2x4xf32>) outs(%21 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %expanded_17 = tensor.expand_shape %22 [[0, 1], [2], [3]] output_shape [1, 1, 4, 4] : tensor<1x4x4xf32> into tensor<1x1x4x4xf32>
    %23 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_18 = linalg.broadcast ins(%arg3 : tensor<f32>) outs(%23 : tensor<1x1x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %24 = tensor.empty() : tensor<1x1x4x4xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_17, %broadcasted_18 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%24 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.mulf %in, %in_29 : f32
      linalg.yield %41 : f32
    } -> tensor<1x1x4x4xf32>
    %26 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_19 = linalg.broadcast ins(%arg4 : tensor<4x4xf32>) outs(%26 : tensor<1x1x4x4xf32>) dimensions = [0, 1] 
    %27 = tensor.empty() : tensor<1x1x4x4xf32>
    %28 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%25, %broadcasted_19 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%27 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.addf %in, %in_29 : f32
      linalg.yield %41 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_20 = arith.constant 0xFF800000 : f32
    %29 = tensor.empty() : tensor<1x1x4xf32>
    %30 = linalg.fill ins(%cst_20 : f32) outs(%29 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_21 = linalg.reduce ins(%28 : tensor<1x1x4x4xf32>) outs(%30 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %41 = arith.maximumf %in, %init : f32
        linalg.yield %41 : f32
      }
    %31 = tensor.empty() : tensor<1x1x4x4xf32>
    %32 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%28, %reduced_21 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%31 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.subf %in, %in_29 : f32
      %42 = math.exp %41 : f32
      linalg.yield %42 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_22 = arith.constant 0.000000e+00 : f32
    %33 = tensor.empty() : tensor<1x1x4xf32>
    %34 = linalg.fill ins(%cst_22 : f32) outs(%33 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_23 = linalg.reduce ins(%32 : tensor<1x1x4x4xf32>) outs(%34 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %41 = arith.addf %in, %init : f32
        linalg.yield %41 : f32
      }
    %35 = tensor.empty() : tensor<1x1x4x4xf32>
    %36 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32, %reduced_23 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%35 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_29: f32, %out: f32):
      %41 = arith.divf %in, %in_29 : f32
      linalg.yield %41 : f32
    } -> tensor<1x1x4x4xf32>
    %collapsed_24 = tensor.collapse_shape %36 [[0, 1], [2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
    %collapsed_25 = tensor.collapse_shape %extracted_slice_13 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %cst_26 = arith.constant 0.000000e+00 : f32
    %37 = tensor.empty() : tensor<1x4x2xf32>
    %38 = linalg.fill ins(%cst_26 : f32) outs(%37 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %39 = linalg.batch_matmul ins(%collapsed_24, %collapsed_25 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%38 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %expanded_27 = tensor.expand_shape %39 [[0, 1], [2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
    %40 = tensor.empty() : tensor<1x2x4x2xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %40[0, 0, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x1x4x2xf32> into tensor<1x2x4x2xf32>
    %inserted_slice_28 = tensor.insert_slice %expanded_27 into %inserted_slice[0, 1, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x1x4x2xf32> into tensor<1x2x4x2xf32>
    return %inserted_slice_28 : tensor<1x2x4x2xf32>
  }
  func.func @storylm0_tp_heads(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0 = tensor.empty() : tensor<1x4x4xf32>
    %1 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4xi64>) outs(%0 : tensor<1x4x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %c0_i64 = arith.constant 0 : i64
      %c7_i64 = arith.constant 7 : i64
      %26 = arith.maxsi %in, %c0_i64 : i64
      %27 = arith.minsi %26, %c7_i64 : i64
      %28 = arith.index_cast %27 : i64 to index
      %29 = linalg.index 2 : index
      %extracted_23 = tensor.extract %arg1[%28, %29] : tensor<8x4xf32>
      linalg.yield %extracted_23 : f32
    } -> tensor<1x4x4xf32>
    %true = arith.constant true
    %2 = tensor.empty() : tensor<i1>
    %3 = linalg.fill ins(%true : i1) outs(%2 : tensor<i1>) -> tensor<i1>
    %reduced = linalg.reduce ins(%arg0 : tensor<1x4xi64>) outs(%3 : tensor<i1>) dimensions = [0, 1] 
      (%in: i64, %init: i1) {
        %c0_i64 = arith.constant 0 : i64
        %c8_i64 = arith.constant 8 : i64
        %26 = arith.cmpi sge, %in, %c0_i64 : i64
        %27 = arith.cmpi slt, %in, %c8_i64 : i64
        %28 = arith.andi %26, %27 : i1
        %29 = arith.andi %28, %init : i1
        linalg.yield %29 : i1
      }
    %extracted = tensor.extract %reduced[] : tensor<i1>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %4 = tensor.empty() : tensor<4x4xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %6 = linalg.matmul ins(%collapsed, %arg2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%5 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %collapsed_0 = tensor.collapse_shape %expanded [[0, 1, 2]] : tensor<1x4x4xf32> into tensor<16xf32>
    %expanded_1 = tensor.expand_shape %collapsed_0 [[0, 1, 2, 3]] output_shape [1, 4, 2, 2] : tensor<16xf32> into tensor<1x4x2x2xf32>
    %7 = tensor.empty() : tensor<1x2x4x2xf32>
    %transposed = linalg.transpose ins(%expanded_1 : tensor<1x4x2x2xf32>) outs(%7 : tensor<1x2x4x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_2 = tensor.collapse_shape %1 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %8 = tensor.empty() : tensor<4x4xf32>
    %9 = linalg.fill ins(%cst_3 : f32) outs(%8 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %10 = linalg.matmul ins(%collapsed_2, %arg3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%9 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded_4 = tensor.expand_shape %10 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %collapsed_5 = tensor.collapse_shape %expanded_4 [[0, 1, 2]] : tensor<1x4x4xf32> into tensor<16xf32>
    %expanded_6 = tensor.expand_shape %collapsed_5 [[0, 1, 2, 3]] output_shape [1, 4, 2, 2] : tensor<16xf32> into tensor<1x4x2x2xf32>
    %11 = tensor.empty() : tensor<1x2x2x4xf32>
    %transposed_7 = linalg.transpose ins(%expanded_6 : tensor<1x4x2x2xf32>) outs(%11 : tensor<1x2x2x4xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_8 = tensor.collapse_shape %1 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_9 = arith.constant 0.000000e+00 : f32
    %12 = tensor.empty() : tensor<4x4xf32>
    %13 = linalg.fill ins(%cst_9 : f32) outs(%12 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %14 = linalg.matmul ins(%collapsed_8, %arg4 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%13 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded_10 = tensor.expand_shape %14 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %collapsed_11 = tensor.collapse_shape %expanded_10 [[0, 1, 2]] : tensor<1x4x4xf32> into tensor<16xf32>
    %expanded_12 = tensor.expand_shape %collapsed_11 [[0, 1, 2, 3]] output_shape [1, 4, 2, 2] : tensor<16xf32> into tensor<1x4x2x2xf32>
    %15 = tensor.empty() : tensor<1x2x4x2xf32>
    %transposed_13 = linalg.transpose ins(%expanded_12 : tensor<1x4x2x2xf32>) outs(%15 : tensor<1x2x4x2xf32>) permutation = [0, 2, 1, 3] 
    %16 = call @tp_heads(%transposed, %transposed_7, %transposed_13, %arg7, %arg8) : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<1x2x4x2xf32>
    %17 = tensor.empty() : tensor<1x4x2x2xf32>
    %transposed_14 = linalg.transpose ins(%16 : tensor<1x2x4x2xf32>) outs(%17 : tensor<1x4x2x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_15 = tensor.collapse_shape %transposed_14 [[0, 1, 2, 3]] : tensor<1x4x2x2xf32> into tensor<16xf32>
    %expanded_16 = tensor.expand_shape %collapsed_15 [[0, 1, 2]] output_shape [1, 4, 4] : tensor<16xf32> into tensor<1x4x4xf32>
    %collapsed_17 = tensor.collapse_shape %expanded_16 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_18 = arith.constant 0.000000e+00 : f32
    %18 = tensor.empty() : tensor<4x4xf32>
    %19 = linalg.fill ins(%cst_18 : f32) outs(%18 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %20 = linalg.matmul ins(%collapsed_17, %arg5 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%19 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded_19 = tensor.expand_shape %20 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %21 = tensor.empty() : tensor<1x4x4xf32>
    %22 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %expanded_19 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%21 : tensor<1x4x4xf32>) {
    ^bb0(%in: f32, %in_23: f32, %out: f32):
      %26 = arith.addf %in, %in_23 : f32
      linalg.yield %26 : f32
    } -> tensor<1x4x4xf32>
    %collapsed_20 = tensor.collapse_shape %22 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_21 = arith.constant 0.000000e+00 : f32
    %23 = tensor.empty() : tensor<4x8xf32>
    %24 = linalg.fill ins(%cst_21 : f32) outs(%23 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %25 = linalg.matmul ins(%collapsed_20, %arg6 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%24 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %expanded_22 = tensor.expand_shape %25 [[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
    return %expanded_22, %extracted : tensor<1x4x8xf32>, i1
  }
  func.func @main(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0:2 = call @storylm0_tp_heads(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8) : (tensor<1x4xi64>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1)
    return %0#0, %0#1 : tensor<1x4x8xf32>, i1
  }
}

