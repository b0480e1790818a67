#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @proj_q0(%arg0: tensor<1x4x4xf32>, %arg1: tensor<4x4xf32>) -> tensor<1x1x4x2xf32> {
    %extracted_slice = tensor.extract_slice %arg1[0, 0] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x2xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %2 = linalg.matmul ins(%collapsed, %extracted_slice : tensor<4x4xf32>, tensor<4x2xf32>) outs(%1 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %expanded = tensor.expand_shape %2 [[0, 1], [2]] output_shape [1, 4, 2] : tensor<4x2xf32> into tensor<1x4x2xf32>
    %collapsed_0 = tensor.collapse_shape %expanded [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_1 = tensor.expand_shape %collapsed_0 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %3 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed = linalg.transpose ins(%expanded_1 : tensor<1x4x1x2xf32>) outs(%3 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    return %transposed : tensor<1x1x4x2xf32>
  }
  func.func @tp_proj(%arg0: tensor<1x4x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<f32>, %arg5: tensor<4x4xf32>) -> tensor<1x2x4x2xf32> {
    %0 = call @proj_q0(%arg0, %arg1) : (tensor<1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x1x4x2xf32>
    %extracted_slice = tensor.extract_slice %arg2[0, 0] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<4x2xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %3 = linalg.matmul ins(%collapsed, %extracted_slice : tensor<4x4xf32>, tensor<4x2xf32>) outs(%2 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %expanded = tensor.expand_shape %3 [[0, 1], [2]] output_shape [1, 4, 2] : tensor<4x2xf32> into tensor<1x4x2xf32>
    %collapsed_0 = tensor.collapse_shape %expanded [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_1 = tensor.expand_shape %collapsed_0 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %4 = tensor.empty() : tensor<1x1x2x4xf32>
    %transposed = linalg.transpose ins(%expanded_1 : tensor<1x4x1x2xf32>) outs(%4 : tensor<1x1x2x4xf32>) permutation = [0, 2, 3, 1] 
    %extracted_slice_2 = tensor.extract_slice %arg3[0, 0] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %collapsed_3 = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_4 = arith.constant 0.000000e+00 : f32
    %5 = tensor.empty() : tensor<4x2xf32>
    %6 = linalg.fill ins(%cst_4 : f32) outs(%5 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %7 = linalg.matmul ins(%collapsed_3, %extracted_slice_2 : tensor<4x4xf32>, tensor<4x2xf32>) outs(%6 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %expanded_5 = tensor.expand_shape %7 [[0, 1], [2]] output_shape [1, 4, 2] : tensor<4x2xf32> into tensor<1x4x2xf32>
    %collapsed_6 = tensor.collapse_shape %expanded_5 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_7 = tensor.expand_shape %collapsed_6 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %8 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed_8 = linalg.transpose ins(%expanded_7 : tensor<1x4x1x2xf32>) outs(%8 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_9 = tensor.collapse_shape %0 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %collapsed_10 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x1x2x4xf32> into tensor<1x2x4xf32>
    %cst_11 = arith.constant 0.000000e+00 : f32
    %9 = tensor.empty() : tensor<1x4x4xf32>
    %10 = linalg.fill ins(%cst_11 : f32) outs(%9 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %11 = linalg.batch_matmul ins(%collapsed_9, %collapsed_10 : tensor<1x4x2xf32>, tensor<1x2x4xf32>) outs(%10 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %expanded_12 = tensor.expand_shape %11 [[0, 1], [2], [3]] output_shape [1, 1, 4, 4] : tensor<1x4x4xf32> into tensor<1x1x4x4xf32>
    %12 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted = linalg.broadcast ins(%arg4 : tensor<f32>) outs(%12 : tensor<1x1x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %13 = tensor.empty() : tensor<1x1x4x4xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_12, %broadcasted : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%13 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.mulf %in, %in_57 : f32
      linalg.yield %62 : f32
    } -> tensor<1x1x4x4xf32>
    %15 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_13 = linalg.broadcast ins(%arg5 : tensor<4x4xf32>) outs(%15 : tensor<1x1x4x4xf32>) dimensions = [0, 1] 
    %16 = tensor.empty() : tensor<1x1x4x4xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %broadcasted_13 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%16 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.addf %in, %in_57 : f32
      linalg.yield %62 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_14 = arith.constant 0xFF800000 : f32
    %18 = tensor.empty() : tensor<1x1x4xf32>
    %19 = linalg.fill ins(%cst_14 : f32) outs(%18 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced = linalg.reduce ins(%17 : tensor<1x1x4x4xf32>) outs(%19 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %62 = arith.maximumf %in, %init : f32
        linalg.yield %62 : f32
      }
    %20 = tensor.empty() : tensor<1x1x4x4xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %reduced : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%20 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.subf %in, %in_57 : f32
      %63 = math.exp %62 : f32
      linalg.yield %63 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_15 = arith.constant 0.000000e+00 : f32
    %22 = tensor.empty() : tensor<1x1x4xf32>
    %23 = linalg.fill ins(%cst_15 : f32) outs(%22 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_16 = linalg.reduce ins(%21 : tensor<1x1x4x4xf32>) outs(%23 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %62 = arith.addf %in, %init : f32
        linalg.yield %62 : f32
      }
    %24 = tensor.empty() : tensor<1x1x4x4xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %reduced_16 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%24 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.divf %in, %in_57 : f32
      linalg.yield %62 : f32
    } -> tensor<1x1x4x4xf32>
    %collapsed_17 = tensor.collapse_shape %25 [[0, 1], [2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
    %collapsed_18 = tensor.collapse_shape %transposed_8 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %cst_19 = arith.constant 0.000000e+00 : f32
    %26 = tensor.empty() : tensor<1x4x2xf32>
    %27 = linalg.fill ins(%cst_19 : f32) outs(%26 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %28 = linalg.batch_matmul ins(%collapsed_17, %collapsed_18 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%27 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %expanded_20 = tensor.expand_shape %28 [[0, 1], [2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
    %extracted_slice_21 = tensor.extract_slice %arg1[0, 2] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %collapsed_22 = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_23 = arith.constant 0.000000e+00 : f32
    %29 = tensor.empty() : tensor<4x2xf32>
    %30 = linalg.fill ins(%cst_23 : f32) outs(%29 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %31 = linalg.matmul ins(%collapsed_22, %extracted_slice_21 : tensor<4x4xf32>, tensor<4x2xf32>) outs(%30 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %expanded_24 = tensor.expand_shape %31 [[0, 1], [2]] output_shape [1, 4, 2] : tensor<4x2xf32> into tensor<1x4x2xf32>
    %collapsed_25 = tensor.collapse_shape %expanded_24 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_26 = tensor.expand_shape %collapsed_25 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %32 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed_27 = linalg.transpose ins(%expanded_26 : tensor<1x4x1x2xf32>) outs(%32 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    %extracted_slice_28 = tensor.extract_slice %arg2[0, 2] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %collapsed_29 = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_30 = arith.constant 0.000000e+00 : f32
    %33 = tensor.empty() : tensor<4x2xf32>
    %34 = linalg.fill ins(%cst_30 : f32) outs(%33 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %35 = linalg.matmul ins(%collapsed_29, %extracted_slice_28 : tensor<4x4xf32>, tensor<4x2xf32>) outs(%34 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %expanded_31 = tensor.expand_shape %35 [[0, 1], [2]] output_shape [1, 4, 2] : tensor<4x2xf32> into tensor<1x4x2xf32>
    %collapsed_32 = tensor.collapse_shape %expanded_31 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_33 = tensor.expand_shape %collapsed_32 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %36 = tensor.empty() : tensor<1x1x2x4xf32>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<1x4x1x2xf32>) outs(%36 : tensor<1x1x2x4xf32>) permutation = [0, 2, 3, 1] 
    %extracted_slice_35 = tensor.extract_slice %arg3[0, 2] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
    %collapsed_36 = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_37 = arith.constant 0.000000e+00 : f32
    %37 = tensor.empty() : tensor<4x2xf32>
    %38 = linalg.fill ins(%cst_37 : f32) outs(%37 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %39 = linalg.matmul ins(%collapsed_36, %extracted_slice_35 : tensor<4x4xf32>, tensor<4x2xf32>) outs(%38 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %expanded_38 = tensor.expand_shape %39 [[0, 1], [2]] output_shape [1, 4, 2] : tensor<4x2xf32> into tensor<1x4x2xf32>
    %collapsed_39 = tensor.collapse_shape %expanded_38 [[0, 1, 2]] : tensor<1x4x2xf32> into tensor<8xf32>
    %expanded_40 = tensor.expand_shape %collapsed_39 [[0, 1, 2, 3]] output_shape [1, 4, 1, 2] : tensor<8xf32> into tensor<1x4x1x2xf32>
    %40 = tensor.empty() : tensor<1x1x4x2xf32>
    %transposed_41 = linalg.transpose ins(%expanded_40 : tensor<1x4x1x2xf32>) outs(%40 : tensor<1x1x4x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_42 = tensor.collapse_shape %transposed_27 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %collapsed_43 = tensor.collapse_shape %transposed_34 [[0, 1], [2], [3]] : tensor<1x1x2x4xf32> into tensor<1x2x4xf32>
    %cst_44 = arith.constant 0.000000e+00 : f32
    %41 = tensor.empty() : tensor<1x4x4xf32>
    %42 = linalg.fill ins(%cst_44 : f32) outs(%41 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %43 = linalg.batch_matmul ins(%collapsed_42, %collapsed_43 : tensor<1x4x2xf32>, tensor<1x2x4xf32>) outs(%42 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %expanded_45 = tensor.expand_shape %43 [[0, 1], [2], [3]] output_shape [1, 1, 4, 4] : tensor<1x4x4xf32> into tensor<1x1x4x4xf32>
    %44 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_46 = linalg.broadcast ins(%arg4 : tensor<f32>) outs(%44 : tensor<1x1x4x4xf32>) dimensions = [0, 1, 2, 3] 
    %45 = tensor.empty() : tensor<1x1x4x4xf32>
    %46 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_45, %broadcasted_46 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%45 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.mulf %in, %in_57 : f32
      linalg.yield %62 : f32
    } -> tensor<1x1x4x4xf32>
    %47 = tensor.empty() : tensor<1x1x4x4xf32>
    %broadcasted_47 = linalg.broadcast ins(%arg5 : tensor<4x4xf32>) outs(%47 : tensor<1x1x4x4xf32>) dimensions = [0, 1] 
    %48 = tensor.empty() : tensor<1x1x4x4xf32>
    %49 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%46, %broadcasted_47 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%48 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.addf %in, %in_57 : f32
      linalg.yield %62 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_48 = arith.constant 0xFF800000 : f32
    %50 = tensor.empty() : tensor<1x1x4xf32>
    %51 = linalg.fill ins(%cst_48 : f32) outs(%50 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_49 = linalg.reduce ins(%49 : tensor<1x1x4x4xf32>) outs(%51 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %62 = arith.maximumf %in, %init : f32
        linalg.yield %62 : f32
      }
    %52 = tensor.empty() : tensor<1x1x4x4xf32>
    %53 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%49, %reduced_49 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%52 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.subf %in, %in_57 : f32
      %63 = math.exp %62 : f32
      linalg.yield %63 : f32
    } -> tensor<1x1x4x4xf32>
    %cst_50 = arith.constant 0.000000e+00 : f32
    %54 = tensor.empty() : tensor<1x1x4xf32>
    %55 = linalg.fill ins(%cst_50 : f32) outs(%54 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
    %reduced_51 = linalg.reduce ins(%53 : tensor<1x1x4x4xf32>) outs(%55 : tensor<1x1x4xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %62 = arith.addf %in, %init : f32
        linalg.yield %62 : f32
      }
    %56 = tensor.empty() : tensor<1x1x4x4xf32>
    %57 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%53, %reduced_51 : tensor<1x1x4x4xf32>, tensor<1x1x4xf32>) outs(%56 : tensor<1x1x4x4xf32>) {
    ^bb0(%in: f32, %in_57: f32, %out: f32):
      %62 = arith.divf %in, %in_57 : f32
      linalg.yield %62 : f32
    } -> tensor<1x1x4x4xf32>
    %collapsed_52 = tensor.collapse_shape %57 [[0, 1], [2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
    %collapsed_53 = tensor.collapse_shape %transposed_41 [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
    %cst_54 = arith.constant 0.000000e+00 : f32
    %58 = tensor.empty() : tensor<1x4x2xf32>
    %59 = linalg.fill ins(%cst_54 : f32) outs(%58 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %60 = linalg.batch_matmul ins(%collapsed_52, %collapsed_53 : tensor<1x4x4xf32>, tensor<1x4x2xf32>) outs(%59 : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %expanded_55 = tensor.expand_shape %60 [[0, 1], [2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
    %61 = tensor.empty() : tensor<1x2x4x2xf32>
    %inserted_slice = tensor.insert_slice %expanded_20 into %61[0, 0, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x1x4x2xf32> into tensor<1x2x4x2xf32>
    %inserted_slice_56 = tensor.insert_slice %expanded_55 into %inserted_slice[0, 1, 0, 0] [1, 1, 4, 2] [1, 1, 1, 1] : tensor<1x1x4x2xf32> into tensor<1x2x4x2xf32>
    return %inserted_slice_56 : tensor<1x2x4x2xf32>
  }
  func.func @storylm0_tp_proj(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0 = tensor.empty() : tensor<1x4x4xf32>
    %1 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4xi64>) outs(%0 : tensor<1x4x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %c0_i64 = arith.constant 0 : i64
      %c7_i64 = arith.constant 7 : i64
      %14 = arith.maxsi %in, %c0_i64 : i64
      %15 = arith.minsi %14, %c7_i64 : i64
      %16 = arith.index_cast %15 : i64 to index
      %17 = linalg.index 2 : index
      %extracted_5 = tensor.extract %arg1[%16, %17] : tensor<8x4xf32>
      linalg.yield %extracted_5 : f32
    } -> tensor<1x4x4xf32>
    %true = arith.constant true
    %2 = tensor.empty() : tensor<i1>
    %3 = linalg.fill ins(%true : i1) outs(%2 : tensor<i1>) -> tensor<i1>
    %reduced = linalg.reduce ins(%arg0 : tensor<1x4xi64>) outs(%3 : tensor<i1>) dimensions = [0, 1] 
      (%in: i64, %init: i1) {
        %c0_i64 = arith.constant 0 : i64
        %c8_i64 = arith.constant 8 : i64
        %14 = arith.cmpi sge, %in, %c0_i64 : i64
        %15 = arith.cmpi slt, %in, %c8_i64 : i64
        %16 = arith.andi %14, %15 : i1
        %17 = arith.andi %16, %init : i1
        linalg.yield %17 : i1
      }
    %extracted = tensor.extract %reduced[] : tensor<i1>
    %4 = call @tp_proj(%1, %arg2, %arg3, %arg4, %arg7, %arg8) : (tensor<1x4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<1x2x4x2xf32>
    %5 = tensor.empty() : tensor<1x4x2x2xf32>
    %transposed = linalg.transpose ins(%4 : tensor<1x2x4x2xf32>) outs(%5 : tensor<1x4x2x2xf32>) permutation = [0, 2, 1, 3] 
    %collapsed = tensor.collapse_shape %transposed [[0, 1, 2, 3]] : tensor<1x4x2x2xf32> into tensor<16xf32>
    %expanded = tensor.expand_shape %collapsed [[0, 1, 2]] output_shape [1, 4, 4] : tensor<16xf32> into tensor<1x4x4xf32>
    %collapsed_0 = tensor.collapse_shape %expanded [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %6 = tensor.empty() : tensor<4x4xf32>
    %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %8 = linalg.matmul ins(%collapsed_0, %arg5 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%7 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %expanded_1 = tensor.expand_shape %8 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
    %9 = tensor.empty() : tensor<1x4x4xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %expanded_1 : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%9 : tensor<1x4x4xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %14 = arith.addf %in, %in_5 : f32
      linalg.yield %14 : f32
    } -> tensor<1x4x4xf32>
    %collapsed_2 = tensor.collapse_shape %10 [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %11 = tensor.empty() : tensor<4x8xf32>
    %12 = linalg.fill ins(%cst_3 : f32) outs(%11 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %13 = linalg.matmul ins(%collapsed_2, %arg6 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%12 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %expanded_4 = tensor.expand_shape %13 [[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
    return %expanded_4, %extracted : tensor<1x4x8xf32>, i1
  }
  func.func @main(%arg0: tensor<1x4xi64>, %arg1: tensor<8x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x8xf32>, %arg7: tensor<f32>, %arg8: tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1) {
    %0:2 = call @storylm0_tp_proj(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8) : (tensor<1x4xi64>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x4xf32>) -> (tensor<1x4x8xf32>, i1)
    return %0#0, %0#1 : tensor<1x4x8xf32>, i1
  }
}

