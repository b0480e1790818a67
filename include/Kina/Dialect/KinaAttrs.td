//===- KinaAttrs.td - Placement attributes -----------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINAATTRS_TD
#define KINA_DIALECT_KINAATTRS_TD

include "Kina/Dialect/KinaDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Kina_PlacementKind : I32EnumAttr<"PlacementKind", "what a placement is", [
    I32EnumAttrCase<"host", 0>,
    I32EnumAttrCase<"mesh", 1>,
    I32EnumAttrCase<"auto_", 2, "auto">,
    I32EnumAttrCase<"local", 3>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::kina";
}

def Kina_PlacementAttr : AttrDef<Kina_Dialect, "Placement"> {
  let mnemonic = "placement";
  let summary = "where a kina tensor lives";
  let description = [{
    The third part of every `!kina.tensor` type. Types of mesh-placed
    values keep the GLOBAL shape; the placement says which block each
    device of the module's mesh (`kina.mesh`) holds.

    - `@host`: one device.
    - `@replicated`: every device of the mesh holds the whole tensor.
    - `@sharded(axis=A, over=M)`: tensor axis `A` is cut into equal
      contiguous blocks over mesh axis `M` (device coordinate `i` on `M`
      holds block `i`); replicated over the other mesh axes. Several axes:
      `@sharded(axis=[A1, A2], over=[M1, M2])`. `over` is left out for the
      default axis `x` of a one-axis mesh declared without names.
    - `partial=[M...]` (IR only; alone: `@partial(over=M)`): each device
      holds a summand of the value over mesh axis `M`, as after a matmul
      whose contracting axis is split; an all-reduce makes it whole.
    - `@auto` (IR only): on the mesh, placement not decided yet; the
      frontend gives it to intermediate values of mesh-placed functions
      and `--kina-propagate-sharding` replaces it.
    - `@local` (IR only): this device's block, in the per-device (SPMD)
      functions of `--kina-partition=form=spmd`, whose shapes are local.

    Splits and partial axes name mesh axes; a mesh axis cuts at most one
    tensor axis, and a tensor axis is cut over at most one mesh axis.
  }];
  let parameters = (ins
    EnumParameter<Kina_PlacementKind>:$kind,
    OptionalArrayRefParameter<"int64_t">:$axes,
    OptionalArrayRefParameter<"::mlir::StringAttr">:$over,
    OptionalArrayRefParameter<"::mlir::StringAttr">:$partial
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static PlacementAttr getHost(::mlir::MLIRContext *context);
    static PlacementAttr getReplicated(::mlir::MLIRContext *context);
    static PlacementAttr getAuto(::mlir::MLIRContext *context);
    static PlacementAttr getLocal(::mlir::MLIRContext *context);
    /// A mesh placement, its splits sorted by tensor axis.
    static PlacementAttr getMesh(::mlir::MLIRContext *context,
                                 ::llvm::ArrayRef<int64_t> axes,
                                 ::llvm::ArrayRef<::mlir::StringAttr> over,
                                 ::llvm::ArrayRef<::mlir::StringAttr> partial = {});

    bool isHost() const { return getKind() == PlacementKind::host; }
    bool isAuto() const { return getKind() == PlacementKind::auto_; }
    bool isLocal() const { return getKind() == PlacementKind::local; }
    /// A decided mesh placement (replicated, sharded and/or partial).
    bool isMesh() const { return getKind() == PlacementKind::mesh; }
    /// On the mesh: decided or not.
    bool isOnMesh() const { return isMesh() || isAuto(); }
    bool isReplicated() const {
      return isMesh() && getAxes().empty() && getPartial().empty();
    }

    /// The mesh axis that cuts tensor axis `axis`, if any.
    ::mlir::StringAttr getSplitOf(int64_t axis) const;
    /// The tensor axis that mesh axis `meshAxis` cuts, if any.
    std::optional<int64_t> getAxisSplitBy(::mlir::StringAttr meshAxis) const;
    bool isPartialOver(::mlir::StringAttr meshAxis) const;

    /// This placement with tensor axis `axis` cut (or no longer cut) over
    /// `meshAxis`, or partial (or no longer partial) over it.
    PlacementAttr withSplit(int64_t axis, ::mlir::StringAttr meshAxis) const;
    PlacementAttr withoutSplit(int64_t axis) const;
    PlacementAttr withPartial(::mlir::StringAttr meshAxis) const;
    PlacementAttr withoutPartial(::mlir::StringAttr meshAxis) const;

    /// As source and IR write it: `@sharded(axis=1)`.
    std::string str() const;
  }];
}

def Kina_ReductionKind : I32EnumAttr<"ReductionKind", "how partial values combine", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::kina";
}
def Kina_ReductionKindAttr : EnumAttr<Kina_Dialect, Kina_ReductionKind, "reduction"> {
  let assemblyFormat = "$value";
}

#endif // KINA_DIALECT_KINAATTRS_TD
