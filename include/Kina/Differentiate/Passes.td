//===- Passes.td - Reverse mode ----------------------------*- tablegen -*-===//
#ifndef KINA_DIFFERENTIATE_PASSES_TD
#define KINA_DIFFERENTIATE_PASSES_TD

include "mlir/Pass/PassBase.td"

def DifferentiatePass : Pass<"kina-differentiate", "::mlir::ModuleOp"> {
  let summary = "Replace each kina.reverse_mode by its forward and adjoint "
                "computation";
  let description = [{
    For `%v, %g... = kina.reverse_mode @F(%args..., [%seed]) wrt = [...]`
    (the body of `fn G = reverseMode(F, wrt=[...])`), the function `F` is
    copied in place, with every function it calls inlined, and then
    walked backwards: each op's rule (`AdjointOpInterface`, declared with
    the op) turns its result's cotangent into its operands'; the
    cotangents of a value used several times are added. The seed is 1 for
    a rank-0 result and the extra parameter otherwise. `%v` is `F`'s
    result and each `%g` the cotangent of the parameter `wrt` names (zeros
    where it does not reach the result). Ops the adjoints add carry the
    forward op's location marked `adjoint of <op>`. The output is
    ordinary kina IR.

    ```mlir
    func.func @g(%x: !kina.tensor<4xf32, @host>) -> (!kina.tensor<f32, @host>, !kina.tensor<4xf32, @host>) {
      %v, %d = kina.reverse_mode @f(%x) wrt = [0] : ...
      return %v, %d : ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::kina::KinaDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // KINA_DIFFERENTIATE_PASSES_TD
