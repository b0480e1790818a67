//===- SurfaceSyntax.td - How the kina ops are written in .kina -*- tablegen -*-===//
//
// The frontend's own description of the source syntax of each kina op.
// kina-tblgen (-gen-kina-surface-ops) joins it with the op's ODS (operands,
// attributes and their kinds) into the parser's op table, so an op is
// defined once, in KinaOps.td, and made writable here in one line.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_SYNTAX_SURFACESYNTAX_TD
#define KINA_SYNTAX_SURFACESYNTAX_TD

include "Kina/Dialect/KinaOps.td"

// `op` as source writes it. `forms` are among "attr" (`op[a=v] x y`),
// "call" (`op(x, a=v)`) and "method" (`x.op(...)`).
class KinaSurface<Op kinaOp, list<string> surfaceForms = ["attr"]> {
  Op op = kinaOp;
  // The name in source; "" when the op is only an operator token.
  string name = kinaOp.opName;
  list<string> forms = surfaceForms;
  // A binary infix token (`@`, `+`) or a unary prefix token (`-`).
  string infix = "";
  string prefix = "";
  // The op's only attribute may be left out when the op is an operand of
  // an infix operator, whose op then supplies it (`x @ broadcast(w)`).
  bit contextual = 0;
}

class KinaOperator<Op op, string token> : KinaSurface<op, []> {
  let name = "";
  let infix = token;
}

def : KinaSurface<Kina_SliceOp>;
def : KinaSurface<Kina_ConcatOp>;
def : KinaSurface<Kina_GatherOp, ["attr", "call"]>;
def : KinaSurface<Kina_BroadcastOp, ["attr", "call"]> { let contextual = 1; }
def : KinaSurface<Kina_ReshapeOp, ["call", "method"]>;
def : KinaSurface<Kina_TransposeOp, ["call", "method"]>;
def : KinaSurface<Kina_MatmulOp, ["call"]> { let infix = "@"; }
def : KinaSurface<Kina_SoftmaxOp, ["call"]>;
def : KinaSurface<Kina_LogSoftmaxOp, ["call"]>;
def : KinaSurface<Kina_OneHotOp, ["call"]>;
def : KinaSurface<Kina_MaximumOp, ["call"]>;
def : KinaSurface<Kina_MinimumOp, ["call"]>;
def : KinaSurface<Kina_SelectOp, ["call"]> { let name = "where"; }
def : KinaSurface<Kina_SumOp, ["call"]>;
def : KinaSurface<Kina_MeanOp, ["call"]>;
def : KinaSurface<Kina_MaxOp, ["call"]>;
def : KinaSurface<Kina_ExpOp, ["call"]>;
def : KinaSurface<Kina_LogOp, ["call"]>;
def : KinaSurface<Kina_SqrtOp, ["call"]>;
def : KinaSurface<Kina_RsqrtOp, ["call"]>;
def : KinaSurface<Kina_TanhOp, ["call"]>;
def : KinaSurface<Kina_AbsOp, ["call"]>;
def : KinaSurface<Kina_ReluOp, ["call"]>;
def : KinaSurface<Kina_CastOp, ["attr", "call", "method"]>;
def : KinaOperator<Kina_AddOp, "+">;
def : KinaOperator<Kina_SubOp, "-">;
def : KinaOperator<Kina_MulOp, "*">;
def : KinaOperator<Kina_DivOp, "/">;
def : KinaOperator<Kina_EqualOp, "==">;
def : KinaOperator<Kina_LessOp, "<">;
def : KinaOperator<Kina_LessEqualOp, "<=">;
def : KinaOperator<Kina_GreaterOp, ">">;
def : KinaOperator<Kina_GreaterEqualOp, ">=">;
def : KinaSurface<Kina_NegOp, []> { let name = ""; let prefix = "-"; }

#endif // KINA_SYNTAX_SURFACESYNTAX_TD
