#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @proj_q0(%arg0: tensor<1x4x4xf32>, %arg1: tensor<4x4xf32>) -> tensor<1x1x4x2xf32> {
    %extracted_slice = tensor.extract_slice %arg1[0, 0] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %0 = tensor.empty() : tensor<1x4x2xf32>
    %broadcasted = linalg.broadcast ins(%extracted_slice : tensor<4x2xf32>) outs(%0 : tensor<1x4x2xf32>) dimensions = [0] 
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<1x4x2xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %3 = linalg.batch_matmul ins(%arg0, %broadcasted : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%2 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %collapsed = tensor.collapse_shape %3 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded = tensor.expand_shape %collapsed [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %4 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed = linalg.transpose ins(%expanded : tensor<1x4x1x2xf32>) outs(%4 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    return %transposed : tensor<1x1x4x2xf32>
  }
  func.func @tp_proj(%arg0: tensor<1x4x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<f32>, %arg5: tensor<4x4xf32>) -> tensor<1x2x4x2xf32> {
    %0 = call @proj_q0(%arg0, %arg1) : (tensor<1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x1x4x2xf32>
    %extracted_slice = tensor.extract_slice %arg2[0, 0] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %1 = tensor.empty() : tensor<1x4x2xf32>
    %broadcasted = linalg.broadcast ins(%extracted_slice : tensor<4x2xf32>) outs(%1 : tensor<1x4x2xf32>) dimensions = [0] 
    %cst = arith.constant 0.000000e+00 : f32
    %2 = tensor.empty() : tensor<1x4x2xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %4 = linalg.batch_matmul ins(%arg0, %broadcasted : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%3 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %collapsed = tensor.collapse_shape %4 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded = tensor.expand_shape %collapsed [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %5 = tensor.empty() : tensor<1x1x2x4xf32>
    %transposed = linalg.transpose ins(%expanded : tensor<1x4x1x2xf32>) outs(%5 : tensor<1x1x2x4xf32>) permutation = [0, 2, 3, 1] 
    %extracted_slice_0 = tensor.extract_slice %arg3[0, 0] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %6 = tensor.empty() : tensor<1x4x2xf32>
    %broadcasted_1 = linalg.broadcast ins(%extracted_slice_0 : tensor<4x2xf32>) outs(%6 : tensor<1x4x2xf32>) dimensions = [0] 
    %cst_2 = arith.constant 0.000000e+00 : f32
    %7 = tensor.empty() : tensor<1x4x2xf32>
    %8 = linalg.fill ins(%cst_2 : f32) outs(%7 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %9 = linalg.batch_matmul ins(%arg0, %broadcasted_1 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%8 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %collapsed_3 = tensor.collapse_shape %9 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_4 = tensor.expand_shape %collapsed_3 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %10 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed_5 = linalg.transpose ins(%expanded_4 : tensor<1x4x1x2xf32>) outs(%10 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_6 = tensor.collapse_shape %0 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %collapsed_7 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x1x2x4xf32> into tensor<1x2x4xf32>
    %cst_8 = arith.constant 0.000000e+00 : f32
    %11 = tensor.empty() : tensor<1x4x4xf32>
    %12 = linalg.fill ins(%cst_8 : f32) outs(%11 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %13 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<1x4x2xf32>, tensor<1x2x4xf32>) outs(%12 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %expanded_9 = tensor.expand_shape %13 [[0, 1], [2], [3]] output_shape [1, 1, 4, 4] : tensor<1x4x4xf32> into tensor<1x1x4x4xf32>
    %14 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_10 = linalg.broadcast ins(%arg4 : tensor<f32>) outs(%14 : tensor<1x1x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %15 = tensor.empty() : tensor<1x1x4x4xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_9, %broadcasted_10 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%15 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.mulf %in, %in_52 : f32
      linalg.yield %67 : f32
    } -> tensor<1x1x4x4xf32>
    %17 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_11 = linalg.broadcast ins(%arg5 : tensor<4x4xf32>) outs(%17 : tensor<1x1x4x4xf32>) dimensions = [0, 1] 
    %18 = tensor.empty() : tensor<1x1x4x4xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16, %broadcasted_11 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%18 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.addf %in, %in_52 : f32
      linalg.yield %67 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_12 = arith.constant 0xFF800000 : f32
    %20 = tensor.empty() : tensor<1x1x4xf32>
    %21 = linalg.fill ins(%cst_12 : f32) outs(%20 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced = linalg.reduce ins(%19 : tensor<1x1x4x4xf32>) outs(%21 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %67 = arith.maximumf %in, %init : f32
        linalg.yield %67 : f32
      }
    %22 = tensor.empty() : tensor<1x1x4x4xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19, %reduced : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%22 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.subf %in, %in_52 : f32
      %68 = math.exp %67 : f32
      linalg.yield %68 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_13 = arith.constant 0.000000e+00 : f32
    %24 = tensor.empty() : tensor<1x1x4xf32>
    %25 = linalg.fill ins(%cst_13 : f32) outs(%24 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_14 = linalg.reduce ins(%23 : tensor<1x1x4x4xf32>) outs(%25 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %67 = arith.addf %in, %init : f32
        linalg.yield %67 : f32
      }
    %26 = tensor.empty() : tensor<1x1x4x4xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %reduced_14 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%26 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.divf %in, %in_52 : f32
      linalg.yield %67 : f32
    } -> tensor<1x1x4x4xf32>
    %collapsed_15 = tensor.collapse_shape %27 [[0, 1], [2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
    %collapsed_16 = tensor.collapse_shape %transposed_5 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %cst_17 = arith.constant 0.000000e+00 : f32
    %28 = tensor.empty() : tensor<1x4x2xf32>
    %29 = linalg.fill ins(%cst_17 : f32) outs(%28 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %30 = linalg.batch_matmul ins(%collapsed_15, %collapsed_16 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%29 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %expanded_18 = tensor.expand_shape %30 [[0, 1], [2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
    %extracted_slice_19 = tensor.extract_slice %arg1[0, 2] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %31 = tensor.empty() : tensor<1x4x2xf32>
    %broadcasted_20 = linalg.broadcast ins(%extracted_slice_19 : tensor<4x2xf32>) outs(%31 : tensor<1x4x2xf32>) dimensions = [0] 
    %cst_21 = arith.constant 0.000000e+00 : f32
    %32 = tensor.empty() : tensor<1x4x2xf32>
    %33 = linalg.fill ins(%cst_21 : f32) outs(%32 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %34 = linalg.batch_matmul ins(%arg0, %broadcasted_20 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%33 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %collapsed_22 = tensor.collapse_shape %34 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_23 = tensor.expand_shape %collapsed_22 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %35 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed_24 = linalg.transpose ins(%expanded_23 : tensor<1x4x1x2xf32>) outs(%35 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    %extracted_slice_25 = tensor.extract_slice %arg2[0, 2] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %36 = tensor.empty() : tensor<1x4x2xf32>
    %broadcasted_26 = linalg.broadcast ins(%extracted_slice_25 : tensor<4x2xf32>) outs(%36 : tensor<1x4x2xf32>) dimensions = [0] 
    %cst_27 = arith.constant 0.000000e+00 : f32
    %37 = tensor.empty() : tensor<1x4x2xf32>
    %38 = linalg.fill ins(%cst_27 : f32) outs(%37 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %39 = linalg.batch_matmul ins(%arg0, %broadcasted_26 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%38 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %collapsed_28 = tensor.collapse_shape %39 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_29 = tensor.expand_shape %collapsed_28 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %40 = tensor.empty() : tensor<1x1x2x4xf32>
    %transposed_30 = linalg.transpose ins(%expanded_29 : tensor<1x4x1x2xf32>) outs(%40 : tensor<1x1x2x4xf32>) permutation = [0, 2, 3, 1] 
    %extracted_slice_31 = tensor.extract_slice %arg3[0, 2] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %41 = tensor.empty() : tensor<1x4x2xf32>
    %broadcasted_32 = linalg.broadcast ins(%extracted_slice_31 : tensor<4x2xf32>) outs(%41 : tensor<1x4x2xf32>) dimensions = [0] 
    %cst_33 = arith.constant 0.000000e+00 : f32
    %42 = tensor.empty() : tensor<1x4x2xf32>
    %43 = linalg.fill ins(%cst_33 : f32) outs(%42 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %44 = linalg.batch_matmul ins(%arg0, %broadcasted_32 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%43 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %collapsed_34 = tensor.collapse_shape %44 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_35 = tensor.expand_shape %collapsed_34 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %45 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed_36 = linalg.transpose ins(%expanded_35 : tensor<1x4x1x2xf32>) outs(%45 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_37 = tensor.collapse_shape %transposed_24 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %collapsed_38 = tensor.collapse_shape %transposed_30 [[0, 1], [2], [3]] : tensor<1x1x2x4xf32> into tensor<1x2x4xf32>
    %cst_39 = arith.constant 0.000000e+00 : f32
    %46 = tensor.empty() : tensor<1x4x4xf32>
    %47 = linalg.fill ins(%cst_39 : f32) outs(%46 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %48 = linalg.batch_matmul ins(%collapsed_37, %collapsed_38 : tensor<1x4x2xf32>, tensor<1x2x4xf32>) outs(%47 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %expanded_40 = tensor.expand_shape %48 [[0, 1], [2], [3]] output_shape [1, 1, 4, 4] : tensor<1x4x4xf32> into tensor<1x1x4x4xf32>
    %49 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_41 = linalg.broadcast ins(%arg4 : tensor<f32>) outs(%49 : tensor<1x1x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %50 = tensor.empty() : tensor<1x1x4x4xf32>
    %51 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_40, %broadcasted_41 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%50 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.mulf %in, %in_52 : f32
      linalg.yield %67 : f32
    } -> tensor<1x1x4x4xf32>
    %52 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_42 = linalg.broadcast ins(%arg5 : tensor<4x4xf32>) outs(%52 : tensor<1x1x4x4xf32>) dimensions = [0, 1] 
    %53 = tensor.empty() : tensor<1x1x4x4xf32>
    %54 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%51, %broadcasted_42 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%53 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.addf %in, %in_52 : f32
      linalg.yield %67 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_43 = arith.constant 0xFF800000 : f32
    %55 = tensor.empty() : tensor<1x1x4xf32>
    %56 = linalg.fill ins(%cst_43 : f32) outs(%55 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_44 = linalg.reduce ins(%54 : tensor<1x1x4x4xf32>) outs(%56 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %67 = arith.maximumf %in, %init : f32
        linalg.yield %67 : f32
      }
    %57 = tensor.empty() : tensor<1x1x4x4xf32>
    %58 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%54, %reduced_44 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%57 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.subf %in, %in_52 : f32
      %68 = math.exp %67 : f32
      linalg.yield %68 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_45 = arith.constant 0.000000e+00 : f32
    %59 = tensor.empty() : tensor<1x1x4xf32>
    %60 = linalg.fill ins(%cst_45 : f32) outs(%59 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_46 = linalg.reduce ins(%58 : tensor<1x1x4x4xf32>) outs(%60 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %67 = arith.addf %in, %init : f32
        linalg.yield %67 : f32
      }
    %61 = tensor.empty() : tensor<1x1x4x4xf32>
    %62 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%58, %reduced_46 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%61 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_52: f32, %out: f32):
      %67 = arith.divf %in, %in_52 : f32
      linalg.yield %67 : f32
    } -> tensor<1x1x4x4xf32>
    %collapsed_47 = tensor.collapse_shape %62 [[0, 1], [2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
    %collapsed_48 = tensor.collapse_shape %transposed_36 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %cst_49 = arith.constant 0.000000e+00 : f32
    %63 = tensor.empty() : tensor<1x4x2xf32>
    %64 = linalg.fill ins(%cst_49 : f32) outs(%63 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %65 = linalg.batch_matmul ins(%collapsed_47, %collapsed_48 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%64 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %expanded_50 = tensor.expand_shape %65 [[0, 1], [2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
    %66 = tensor.empty() : tensor<1x2x4x2xf32>
    %inserted_slice = tensor.insert_slice %expanded_18 into %66[0, 0, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x1x4x2xf32> into tensor<1x2x4x2xf32>
    %inserted_slice_51 = tensor.insert_slice %expanded_50 into %inserted_slice[0, 1, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x1x4x2xf32> into tensor<1x2x4x2xf32>
    return %inserted_slice_51 : tensor<1x2x4x2xf32>
  }
  func.func @storylm0_tp_proj(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0 = tensor.empty() : tensor<1x4x4xf32>
    %1 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4xi64>) outs(%0 : tensor<1x4x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %c0_i64 = arith.constant 0 : i64
      %c7_i64 = arith.constant 7 : i64
      %16 = arith.maxsi %in, %c0_i64 : i64
      %17 = arith.minsi %16, %c7_i64 : i64
      %18 = arith.index_cast %17 : i64 to index
      %19 = linalg.index 2 : index
      %extracted_2 = tensor.extract %arg1[%18, %19] : tensor<8x4xf32>
      linalg.yield %extracted_2 : f32
    } -> tensor<1x4x4xf32>
    %true = arith.constant true
    %2 = tensor.empty() : tensor<i1>
    %3 = linalg.fill ins(%true : i1) outs(%2 : tensor<i1>) -> tensor<i1>
    %reduced = linalg.reduce ins(%arg0 : tensor<1x4xi64>) outs(%3 : tensor<i1>) dimensions = [0, 1] 
      (%in: i64, %init: i1) {
        %c0_i64 = arith.constant 0 : i64
        %c8_i64 = arith.constant 8 : i64
        %16 = arith.cmpi sge, %in, %c0_i64 : i64
        %17 = arith.cmpi slt, %in, %c8_i64 : i64
        %18 = arith.andi %16, %17 : i1
        %19 = arith.andi %18, %init : i1
        linalg.yield %19 : i1
      }
    %extracted = tensor.extract %reduced[] : tensor<i1>
    %4 = call @tp_proj(%1, %arg2, %arg3, %arg4, %arg7, %arg8) : (tensor<1x4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<1x2x4x2xf32>
    %5 = tensor.empty() : tensor<1x4x2x2xf32>
    %transposed = linalg.transpose ins(%4 : tensor<1x2x4x2xf32>) outs(%5 : tensor<1x4x2x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed = tensor.collapse_shape %transposed [[0, 1, 2, 3]] : tensor<1x4x2x2xf32> into tensor<16xf32>
    %expanded = tensor.expand_shape %collapsed [[0, 1, 2]] output_shape [1, 4, 4] : tensor<16xf32> into tensor<1x4x4xf32>
    %6 = tensor.empty() : tensor<1x4x4xf32>
    %broadcasted = linalg.broadcast ins(%arg5 : tensor<4x4xf32>) outs(%6 : tensor<1x4x4xf32>) dimensions = [0] 
    %cst = arith.constant 0.000000e+00 : f32
    %7 = tensor.empty() : tensor<1x4x4xf32>
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %9 = linalg.batch_matmul ins(%expanded, %broadcasted : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%8 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %10 = tensor.empty() : tensor<1x4x4xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %9 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%10 : tensor<1x4x4xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %16 = arith.addf %in, %in_2 : f32
      linalg.yield %16 : f32
    } -> tensor<1x4x4xf32>
    %12 = tensor.empty() : tensor<1x4x8xf32>
    %broadcasted_0 = linalg.broadcast ins(%arg6 : tensor<4x8xf32>) outs(%12 : tensor<1x4x8xf32>) dimensions = [0] 
    %cst_1 = arith.constant 0.000000e+00 : f32
    %13 = tensor.empty() : tensor<1x4x8xf32>
    %14 = linalg.fill ins(%cst_1 : f32) outs(%13 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %15 = linalg.batch_matmul ins(%11, %broadcasted_0 : tensor<1x4x4xf32>, tensor<1x4x8xf32>) outs(%14 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    return %15, %extracted : tensor<1x4x8xf32>, i1
  }
  func.func @main(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0:2 = call @storylm0_tp_proj(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8) : (tensor<1x4xi64>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1)
    return %0#0, %0#1 : tensor<1x4x8xf32>, i1
  }
}

