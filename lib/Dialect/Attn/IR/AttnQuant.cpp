//===- AttnQuant.cpp - #attn.quant and attn.quantized_matmul --------------===//
//
// The quantized weight formats of docs/quantization.md as an attribute (its
// syntax, verifier and byte layout) and the op that multiplies by such a
// weight (its verifier).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// QuantFormatAttr
//===----------------------------------------------------------------------===//

/// Sections of the int layouts start at multiples of this many bytes.
static constexpr int64_t kSectionAlign = 64;

static bool isGgufScheme(QuantScheme scheme) {
  switch (scheme) {
  case QuantScheme::q8_0:
  case QuantScheme::q4_0:
  case QuantScheme::q4_k:
  case QuantScheme::q6_k:
    return true;
  default:
    return false;
  }
}

/// The fixed block of a GGUF scheme.
static int64_t getGgufBlock(QuantScheme scheme) {
  return scheme == QuantScheme::q4_k || scheme == QuantScheme::q6_k ? 256 : 32;
}

static int64_t getSchemeBits(QuantScheme scheme) {
  switch (scheme) {
  case QuantScheme::q8_0:
  case QuantScheme::int8_sym:
  case QuantScheme::int8_asym:
    return 8;
  case QuantScheme::q6_k:
    return 6;
  default:
    return 4;
  }
}

int64_t QuantFormatAttr::getBits() const { return getSchemeBits(getScheme()); }

bool QuantFormatAttr::isGguf() const { return isGgufScheme(getScheme()); }

bool QuantFormatAttr::hasZeroPoints() const {
  return getScheme() == QuantScheme::int8_asym ||
         getScheme() == QuantScheme::int4_asym;
}

int64_t QuantFormatAttr::getBlockBytes() const {
  switch (getScheme()) {
  case QuantScheme::q8_0:
    return 34;
  case QuantScheme::q4_0:
    return 18;
  case QuantScheme::q4_k:
    return 144;
  case QuantScheme::q6_k:
    return 210;
  default:
    return 0;
  }
}

int64_t QuantFormatAttr::getScaleBytes() const {
  return getScale().getIntOrFloatBitWidth() / 8;
}

FailureOr<QuantFormatAttr::Layout> QuantFormatAttr::getLayout(int64_t n,
                                                              int64_t k) const {
  auto mul = [](std::optional<int64_t> a, int64_t b) -> std::optional<int64_t> {
    return a ? llvm::checkedMul(*a, b) : std::nullopt;
  };
  auto add = [](std::optional<int64_t> a,
                std::optional<int64_t> b) -> std::optional<int64_t> {
    return a && b ? llvm::checkedAdd(*a, *b) : std::nullopt;
  };
  auto align = [&](std::optional<int64_t> a) -> std::optional<int64_t> {
    std::optional<int64_t> up = add(a, kSectionAlign - 1);
    return up ? std::optional<int64_t>(*up / kSectionAlign * kSectionAlign)
              : std::nullopt;
  };
  int64_t groups = k / getGroup();
  Layout layout;
  if (isGguf()) {
    std::optional<int64_t> bytes = mul(mul(n, groups), getBlockBytes());
    if (!bytes)
      return failure();
    layout.bytes = *bytes;
    return layout;
  }
  std::optional<int64_t> codes = mul(n, getBits() == 8 ? k : k / 2);
  std::optional<int64_t> scales = align(codes);
  std::optional<int64_t> perGroup = mul(n, groups);
  std::optional<int64_t> end = add(scales, mul(perGroup, getScaleBytes()));
  std::optional<int64_t> zeroPoints = hasZeroPoints() ? align(end) : end;
  std::optional<int64_t> bytes =
      hasZeroPoints() ? add(zeroPoints, perGroup) : end;
  if (!bytes)
    return failure();
  layout.scales = *scales;
  layout.zeroPoints = hasZeroPoints() ? *zeroPoints : 0;
  layout.bytes = *bytes;
  return layout;
}

LogicalResult
QuantFormatAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        QuantScheme scheme, int64_t group, Type scale) {
  StringRef name = stringifyQuantScheme(scheme);
  if (!scale)
    return emitError() << "#attn.quant<" << name << "> needs a scale type";
  if (isGgufScheme(scheme)) {
    int64_t block = getGgufBlock(scheme);
    if (group != block)
      return emitError() << "#attn.quant<" << name << "> has fixed blocks of "
                         << block << " elements, not group = " << group;
    if (!scale.isF16())
      return emitError() << "#attn.quant<" << name << "> has f16 scales, not "
                         << scale;
    return success();
  }
  if (group <= 0)
    return emitError() << "#attn.quant<" << name
                       << ">: group must be positive, got " << group;
  if (!scale.isF16() && !scale.isF32())
    return emitError() << "#attn.quant<" << name
                       << ">: scale must be f16 or f32, got " << scale;
  if (getSchemeBits(scheme) == 4 && group % 32)
    return emitError() << "#attn.quant<" << name
                       << ">: 4-bit codes are packed in chunks of 32, so the "
                          "group must be a multiple of 32, got "
                       << group;
  return success();
}

Attribute QuantFormatAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseLess() || parser.parseKeyword(&name))
    return {};
  std::optional<QuantScheme> scheme = symbolizeQuantScheme(name);
  if (!scheme) {
    parser.emitError(loc) << "unknown quantization scheme '" << name
                          << "' (q8_0, q4_0, q4_k, q6_k, int8_sym, "
                             "int8_asym, int4_sym or int4_asym)";
    return {};
  }
  std::optional<int64_t> group;
  Type scale;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "group" && !group) {
      int64_t value;
      if (parser.parseInteger(value))
        return {};
      group = value;
    } else if (key == "scale" && !scale) {
      if (parser.parseType(scale))
        return {};
    } else {
      parser.emitError(at) << "expected `group = ...` or `scale = ...` (each "
                              "at most once), got '"
                           << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  if (isGgufScheme(*scheme)) {
    group = group.value_or(getGgufBlock(*scheme));
    if (!scale)
      scale = Float16Type::get(parser.getContext());
  } else if (!group || !scale) {
    parser.emitError(loc) << "#attn.quant<" << name
                          << "> needs `group = G` and `scale = f16` or `f32`";
    return {};
  }
  return parser.getChecked<QuantFormatAttr>(loc, parser.getContext(), *scheme,
                                            *group, scale);
}

void QuantFormatAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyQuantScheme(getScheme());
  if (!isGguf())
    printer << ", group = " << getGroup() << ", scale = " << getScale();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// QuantizedMatmulOp
//===----------------------------------------------------------------------===//

/// The input and result shapes: [batch..., M, K] and [batch..., M, N], K
/// and N static and positive.
static LogicalResult verifyMatmulShapes(QuantizedMatmulOp op) {
  RankedTensorType in = op.getInput().getType(), out = op.getType();
  if (in.getRank() < 2)
    return op.emitOpError() << "'input' must have rank >= 2 ([batch..., M, "
                               "K]), got shape "
                            << formatShape(in.getShape());
  if (in.getElementType() != out.getElementType())
    return op.emitOpError()
           << "result element type " << out.getElementType()
           << " differs from the input's " << in.getElementType();
  if (ShapedType::isDynamic(op.getK()))
    return op.emitOpError() << "K (the input's last dim) must be static, "
                               "got input shape "
                            << formatShape(in.getShape());
  if (ShapedType::isDynamic(op.getN()))
    return op.emitOpError() << "N (the result's last dim) must be static, "
                               "got result shape "
                            << formatShape(out.getShape());
  if (op.getK() == 0 || op.getN() == 0)
    return op.emitOpError() << "N and K must be positive, got [N, K] = ["
                            << op.getN() << ", " << op.getK() << "]";
  if (out.getRank() != in.getRank() ||
      in.getShape().drop_back() != out.getShape().drop_back())
    return op.emitOpError()
           << "result shape " << formatShape(out.getShape())
           << " is not [batch..., M, N] for the input shape "
           << formatShape(in.getShape()) << " (the same dims but the last)";
  return success();
}

/// The format (an attribute built in C++ without getChecked is unverified)
/// and the weight's bytes: a static 1-D tensor of the layout's size for an
/// [n, k] weight, k a multiple of the group.
static LogicalResult verifyQuantizedWeight(Operation *op,
                                           QuantFormatAttr format,
                                           RankedTensorType weight, int64_t n,
                                           int64_t k) {
  if (failed(QuantFormatAttr::verify([&] { return op->emitOpError(); },
                                     format.getScheme(), format.getGroup(),
                                     format.getScale())))
    return failure();
  if (k % format.getGroup())
    return op->emitOpError() << "K = " << k
                             << " is not a multiple of the group of "
                             << format.getGroup() << " elements of " << format;
  if (weight.getRank() != 1 || !weight.hasStaticShape())
    return op->emitOpError() << "'weight' must be a static 1-D tensor of "
                                "bytes, got shape "
                             << formatShape(weight.getShape());
  FailureOr<QuantFormatAttr::Layout> layout = format.getLayout(n, k);
  if (failed(layout))
    return op->emitOpError() << "the size of an [N, K] = [" << n << ", " << k
                             << "] weight in " << format
                             << " does not fit in 64 bits";
  if (weight.getDimSize(0) != layout->bytes)
    return op->emitOpError() << "'weight' has " << weight.getDimSize(0)
                             << " bytes, but " << format
                             << " lays out an [N, K] = [" << n << ", " << k
                             << "] weight in " << layout->bytes << " bytes";
  return success();
}

LogicalResult QuantizedMatmulOp::verify() {
  if (failed(verifyMatmulShapes(*this)))
    return failure();
  return verifyQuantizedWeight(*this, getFormat(), getWeight().getType(),
                               getN(), getK());
}

//===----------------------------------------------------------------------===//
// QuantizedEmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizedEmbeddingOp::verify() {
  RankedTensorType indices = getIndices().getType(), out = getType();
  if (out.getRank() != indices.getRank() + 1 ||
      out.getShape().drop_back() != indices.getShape())
    return emitOpError() << "result shape " << formatShape(out.getShape())
                         << " is not the indices' shape "
                         << formatShape(indices.getShape())
                         << " followed by K";
  if (ShapedType::isDynamic(getK()) || getK() == 0)
    return emitOpError() << "K (the result's last dim) must be static and "
                            "positive, got result shape "
                         << formatShape(out.getShape());
  return verifyQuantizedWeight(*this, getFormat(), getWeight().getType(),
                               getN(), getK());
}
