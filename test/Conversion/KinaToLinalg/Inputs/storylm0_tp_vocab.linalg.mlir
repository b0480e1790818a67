#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module {
  func.func @tp_logits(%arg0: tensor<1x4x4xf32>, %arg1: tensor<4x8xf32>) -> tensor<1x4x8xf32> {
    %extracted_slice = tensor.extract_slice %arg1[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
    %extracted_slice_0 = tensor.extract_slice %arg1[0, 4] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x4xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = linalg.matmul ins(%collapsed, %extracted_slice : tensor<4x4xf32>, tensor<4x4xf32>) outs(%1 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded = tensor.expand_shape %2 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %collapsed_1 = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_2 = arith.constant 0.000000e+00 : f32
    %3 = tensor.empty() : tensor<4x4xf32>
    %4 = linalg.fill ins(%cst_2 : f32) outs(%3 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %5 = linalg.matmul ins(%collapsed_1, %extracted_slice_0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%4 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded_3 = tensor.expand_shape %5 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %6 = tensor.empty() : tensor<1x4x8xf32>
    %inserted_slice = tensor.insert_slice %expanded into %6[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<1x4x4xf32> into tensor<1x4x8xf32>
    %inserted_slice_4 = tensor.insert_slice %expanded_3 into %inserted_slice[0, 0, 4] [1, 4, 4] [1, 1, 1] : tensor<1x4x4xf32> into tensor<1x4x8xf32>
    return %inserted_slice_4 : tensor<1x4x8xf32>
  }
  func.func @storylm0_tp_vocab(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0 = tensor.empty() : tensor<1x4x4xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4xi64>) outs(%0 : tensor<1x4x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %c0_i64 = arith.constant 0 : i64
      %c7_i64 = arith.constant 7 : i64
      %43 = arith.maxsi %in, %c0_i64 : i64
      %44 = arith.minsi %43, %c7_i64 : i64
      %45 = arith.index_cast %44 : i64 to index
      %46 = linalg.index 2 : index
      %extracted_33 = tensor.extract %arg1[%45, %46] : tensor<8x4xf32>
      linalg.yield %extracted_33 : f32
    } -> tensor<1x4x4xf32>
    %true = arith.constant true
    %2 = tensor.empty() : tensor<i1>
    %3 = linalg.fill ins(%true : i1) outs(%2 : tensor<i1>) -> tensor<i1>
    %reduced = linalg.reduce ins(%arg0 : tensor<1x4xi64>) outs(%3 : tensor<i1>) dimensions = [0, 1] 
      (%in: i64, %init: i1) {
        %c0_i64 = arith.constant 0 : i64
        %c8_i64 = arith.constant 8 : i64
        %43 = arith.cmpi sge, %in, %c0_i64 : i64
        %44 = arith.cmpi slt, %in, %c8_i64 : i64
        %45 = arith.andi %43, %44 : i1
        %46 = arith.andi %45, %init : i1
        linalg.yield %46 : i1
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
    %collapsed_14 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x4x2xf32> into tensor<2x4x2xf32>
    %collapsed_15 = tensor.collapse_shape %transposed_7 [[0, 1], [2], [3]] : tensor<1x2x2x4xf32> into tensor<2x2x4xf32>
    %cst_16 = arith.constant 0.000000e+00 : f32
    %16 = tensor.empty() : tensor<2x4x4xf32>
    %17 = linalg.fill ins(%cst_16 : f32) outs(%16 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %18 = linalg.batch_matmul ins(%collapsed_14, %collapsed_15 : tensor<2x4x2xf32>, tensor<2x2x4xf32>) outs(%17 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %expanded_17 = tensor.expand_shape %18 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
    %19 = tensor.empty() : tensor<1x2x4x4xf32>
    %broadcasted = linalg.broadcast ins(%arg7 : tensor<f32>) outs(%19 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %20 = tensor.empty() : tensor<1x2x4x4xf32>
    %21 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_17, %broadcasted : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%20 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_33: f32, %out: f32):
      %43 = arith.mulf %in, %in_33 : f32
      linalg.yield %43 : f32
    } -> tensor<1x2x4x4xf32>
    %22 = tensor.empty() : tensor<1x2x4x4xf32>
    %broadcasted_18 = linalg.broadcast ins(%arg8 : tensor<4x4xf32>) outs(%22 : tensor<1x2x4x4xf32>) dimensions = [0, 1] 
    %23 = tensor.empty() : tensor<1x2x4x4xf32>
    %24 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %broadcasted_18 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%23 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_33: f32, %out: f32):
      %43 = arith.addf %in, %in_33 : f32
      linalg.yield %43 : f32
    } -> tensor<1x2x4x4xf32>
    %cst_19 = arith.constant 0xFF800000 : f32
    %25 = tensor.empty() : tensor<1x2x4xf32>
    %26 = linalg.fill ins(%cst_19 : f32) outs(%25 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %reduced_20 = linalg.reduce ins(%24 : tensor<1x2x4x4xf32>) outs(%26 : tensor<1x2x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %43 = arith.maximumf %in, %init : f32
        linalg.yield %43 : f32
      }
    %27 = tensor.empty() : tensor<1x2x4x4xf32>
    %28 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%24, %reduced_20 : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%27 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_33: f32, %out: f32):
      %43 = arith.subf %in, %in_33 : f32
      %44 = math.exp %43 : f32
      linalg.yield %44 : f32
    } -> tensor<1x2x4x4xf32>
    %cst_21 = arith.constant 0.000000e+00 : f32
    %29 = tensor.empty() : tensor<1x2x4xf32>
    %30 = linalg.fill ins(%cst_21 : f32) outs(%29 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %reduced_22 = linalg.reduce ins(%28 : tensor<1x2x4x4xf32>) outs(%30 : tensor<1x2x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %43 = arith.addf %in, %init : f32
        linalg.yield %43 : f32
      }
    %31 = tensor.empty() : tensor<1x2x4x4xf32>
    %32 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%28, %reduced_22 : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%31 : tensor<1x2x4x4xf32>) {
    ^bb0(%in: f32, %in_33: f32, %out: f32):
      %43 = arith.divf %in, %in_33 : f32
      linalg.yield %43 : f32
    } -> tensor<1x2x4x4xf32>
    %collapsed_23 = tensor.collapse_shape %32 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
    %collapsed_24 = tensor.collapse_shape %transposed_13 [[0, 1], [2], [3]] : tensor<1x2x4x2xf32> into tensor<2x4x2xf32>
    %cst_25 = arith.constant 0.000000e+00 : f32
    %33 = tensor.empty() : tensor<2x4x2xf32>
    %34 = linalg.fill ins(%cst_25 : f32) outs(%33 : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
    %35 = linalg.batch_matmul ins(%collapsed_23, %collapsed_24 : tensor<2x4x4xf32>, tensor<2x4x2xf32>) outs(%34 : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
    %expanded_26 = tensor.expand_shape %35 [[0, 1], [2], [3]] output_shape [1, 2, 4, 2] : tensor<2x4x2xf32> into tensor<1x2x4x2xf32>
    %36 = tensor.empty() : tensor<1x4x2x2xf32>
    %transposed_27 = linalg.transpose ins(%expanded_26 : tensor<1x2x4x2xf32>) outs(%36 : tensor<1x4x2x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_28 = tensor.collapse_shape %transposed_27 [[0, 1, 2, 3]] : tensor<1x4x2x2xf32> into tensor<16xf32>
    %expanded_29 = tensor.expand_shape %collapsed_28 [[0, 1, 2]] output_shape [1, 4, 4] : tensor<16xf32> into tensor<1x4x4xf32>
    %collapsed_30 = tensor.collapse_shape %expanded_29 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_31 = arith.constant 0.000000e+00 : f32
    %37 = tensor.empty() : tensor<4x4xf32>
    %38 = linalg.fill ins(%cst_31 : f32) outs(%37 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %39 = linalg.matmul ins(%collapsed_30, %arg5 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%38 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded_32 = tensor.expand_shape %39 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %40 = tensor.empty() : tensor<1x4x4xf32>
    %41 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %expanded_32 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%40 : tensor<1x4x4xf32>) {
    ^bb0(%in: f32, %in_33: f32, %out: f32):
      %43 = arith.addf %in, %in_33 : f32
      linalg.yield %43 : f32
    } -> tensor<1x4x4xf32>
    %42 = call @tp_logits(%41, %arg6) : (tensor<1x4x4xf32>, tensor<4x8xf32>) -> tensor<1x4x8xf32>
    return %42, %extracted : tensor<1x4x8xf32>, i1
  }
  func.func @main(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0:2 = call @storylm0_tp_vocab(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8) : (tensor<1x4xi64>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1)
    return %0#0, %0#1 : tensor<1x4x8xf32>, i1
  }
}

