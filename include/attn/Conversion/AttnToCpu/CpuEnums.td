//===- CpuEnums.td - enums of the CPU lowering -------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_ATTNTOCPU_CPUENUMS_TD
#define ATTN_CONVERSION_ATTNTOCPU_CPUENUMS_TD

include "mlir/IR/EnumAttr.td"

// The names are the one spelling of each backend: pass and pipeline options,
// the tools' --backend, and the `attn.cpu_backend` string attribute.
def Attn_SdpaCpuBackend : I32EnumAttr<"SdpaCpuBackend",
    "which attn.sdpa implementation the CPU lowering emits", [
      I32EnumAttrCase<"Auto", 0, "auto">,
      I32EnumAttrCase<"Flash", 1, "flash">,
      I32EnumAttrCase<"Math", 2, "math">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

// What the decode GEMV of attn.quantized_matmul does with its input rows
// (docs/quantization.md, "Integer activations"): `none` multiplies them in
// f32 as given; `int8` quantizes each row to int8 per block of 32 and
// multiplies in integers where the target has an integer dot product.
def Attn_QuantizedActivations : I32EnumAttr<"QuantizedActivations",
    "the activations of quantized decode products", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Int8", 1, "int8">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

#endif // ATTN_CONVERSION_ATTNTOCPU_CPUENUMS_TD
