//===- RunInputs.cpp - attn-run's inputs: --shape, --input, --output ------===//
//
// The arguments attn-run feeds a function: seeded random data of each
// argument's type, or .npy files, with the dynamic dims --shape gives; and
// the indexed options that say so. Separate from the driver so that a fuzz
// target (fuzz/attn-run-input-fuzzer.cpp) runs the same code.
//
//===----------------------------------------------------------------------===//

#include "RunInputs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace attnrun;

static LogicalResult reportError(const llvm::Twine &message) {
  llvm::errs() << "attn-run: error: " << message << "\n";
  return failure();
}

static void fail(const llvm::Twine &message) { (void)reportError(message); }

/// Parses "I=rest" into (I, rest).
static bool parseIndexed(StringRef text, unsigned &index, StringRef &rest) {
  auto [lhs, rhs] = text.split('=');
  if (rhs.empty() && !text.contains('='))
    return false;
  rest = rhs;
  return !lhs.trim().getAsInteger(10, index);
}

bool attnrun::parseShape(StringRef text, SmallVectorImpl<int64_t> &shape) {
  if (text.empty())
    return true; // rank 0
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  for (StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return false;
    shape.push_back(d);
  }
  return true;
}

std::string attnrun::shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s;
}

static std::optional<HostTensor> makeRandom(DType dtype,
                                            ArrayRef<int64_t> shape,
                                            uint64_t argSeed, bool normal,
                                            std::string &error) {
  std::optional<HostTensor> tensor = HostTensor::allocate(dtype, shape, error);
  if (!tensor)
    return std::nullopt;
  HostTensor &t = *tensor;
  Rng rng(argSeed);
  int64_t n = t.getNumElements();
  if (isFloat(dtype)) {
    for (int64_t i = 0; i < n; ++i)
      t.set(i, normal ? rng.normal() : 2.0 * rng.uniform() - 1.0);
  } else if (dtype == DType::I1) {
    int64_t rowLen = shape.empty() ? 1 : std::max<int64_t>(shape.back(), 1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t row = i / rowLen;
      bool value = row % 7 == 0   ? false
                   : row % 7 == 1 ? true
                                  : (rng.next() >> 63) != 0;
      t.set(i, value);
    }
  } else {
    for (int64_t i = 0; i < n; ++i)
      t.set(i, static_cast<double>(rng.next() % 8));
  }
  return tensor;
}

/// The `I=value` items of a list option such as `--input 0=q.npy`, by I.
/// `parse` reads a value (none: malformed, `expected <form>`); I must be
/// below `count`, the number of the entry's `what` (arguments or results).
template <typename T>
static FailureOr<DenseMap<unsigned, T>>
parseIndexedOption(ArrayRef<std::string> items, StringRef flag, StringRef form,
                   unsigned count, StringRef what, StringRef entryName,
                   llvm::function_ref<std::optional<T>(StringRef)> parse) {
  DenseMap<unsigned, T> values;
  for (StringRef item : items) {
    unsigned index;
    StringRef rest;
    std::optional<T> value;
    if (parseIndexed(item, index, rest))
      value = parse(rest);
    if (!value)
      return reportError("--" + flag + " " + item + ": expected " + form);
    if (index >= count)
      return reportError("--" + flag + " " + item + ": @" + entryName +
                         " has " + Twine(count) + " " + what);
    values[index] = std::move(*value);
  }
  return values;
}

FailureOr<IndexedOptions>
attnrun::parseIndexedOptions(const InputOptions &options, FunctionType type) {
  auto parseShapeValue =
      [](StringRef text) -> std::optional<SmallVector<int64_t>> {
    SmallVector<int64_t> shape;
    if (!parseShape(text, shape))
      return std::nullopt;
    return shape;
  };
  auto parsePath = [](StringRef text) -> std::optional<std::string> {
    if (text.empty())
      return std::nullopt;
    return text.str();
  };
  auto shapesOr = parseIndexedOption<SmallVector<int64_t>>(
      options.shapes, "shape", "I=AxBx... (e.g. 0=2x8x100x64)",
      type.getNumInputs(), "arguments", options.entryName, parseShapeValue);
  if (failed(shapesOr))
    return failure();
  auto inputsOr = parseIndexedOption<std::string>(
      options.inputs, "input", "I=path.npy", type.getNumInputs(), "arguments",
      options.entryName, parsePath);
  if (failed(inputsOr))
    return failure();
  auto outputsOr = parseIndexedOption<std::string>(
      options.outputs, "output", "I=path.npy", type.getNumResults(), "results",
      options.entryName, parsePath);
  if (failed(outputsOr))
    return failure();
  return IndexedOptions{std::move(*shapesOr), std::move(*inputsOr),
                        std::move(*outputsOr)};
}

std::string attnrun::typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return text;
}

/// Argument `i` read from the .npy file `path`: it must hold `dtype` in
/// `shape` (the argument's `type`, with the dims --shape gives).
static std::optional<HostTensor> readInput(unsigned i, StringRef path,
                                           ArrayRef<int64_t> shape,
                                           RankedTensorType type, DType dtype,
                                           StringRef entryName) {
  std::string error;
  std::optional<HostTensor> t = readNpy(path, error);
  if (!t) {
    fail("--input " + Twine(i) + ": " + error);
    return std::nullopt;
  }
  if (t->getDType() != dtype) {
    fail("--input " + Twine(i) + ": '" + path + "' holds " +
         getName(t->getDType()) + ", argument " + Twine(i) + " of @" +
         entryName + " is " + typeString(type));
    return std::nullopt;
  }
  if (failed(verifyCompatibleShape(shape, t->getShape()))) {
    fail("--input " + Twine(i) + ": '" + path + "' has shape " +
         shapeString(t->getShape()) + ", argument " + Twine(i) + " of @" +
         entryName + " is " + typeString(type));
    return std::nullopt;
  }
  return t;
}

/// Argument `i` of type `type`: from its --input file, else seeded random
/// data of its type's shape (the dynamic dims given by --shape).
static std::optional<HostTensor> makeInput(unsigned i, RankedTensorType type,
                                           DType dtype,
                                           const InputOptions &inputOptions,
                                           const IndexedOptions &options) {
  StringRef entryName = inputOptions.entryName;
  SmallVector<int64_t> shape(type.getShape());
  if (auto given = options.shapes.find(i); given != options.shapes.end()) {
    if (failed(verifyCompatibleShape(shape, given->second))) {
      fail("--shape " + Twine(i) + "=" + shapeString(given->second) +
           " does not fit argument " + Twine(i) + " of type " +
           typeString(type));
      return std::nullopt;
    }
    shape = given->second;
  }
  if (auto path = options.inputPaths.find(i); path != options.inputPaths.end())
    return readInput(i, path->second, shape, type, dtype, entryName);
  if (llvm::any_of(shape, ShapedType::isDynamic)) {
    fail("argument " + Twine(i) + " of @" + entryName + " (" +
         typeString(type) + ") has dynamic dims: give its shape with --shape " +
         Twine(i) + "=AxBx...");
    return std::nullopt;
  }
  std::string error;
  std::optional<HostTensor> t = makeRandom(
      dtype, shape,
      inputOptions.seed * 0x100000001b3ull + i * 0x9e3779b97f4a7c15ull,
      inputOptions.normalDist, error);
  if (!t)
    fail("argument " + Twine(i) + " of @" + entryName + ": " + error);
  return t;
}

/// The element type of a ranked tensor type whose elements attn-run handles.
std::optional<DType> attnrun::getTensorDType(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  return tensorType ? getDType(tensorType.getElementType()) : std::nullopt;
}

/// Every argument of `entry`, in order.
FailureOr<SmallVector<HostTensor>>
attnrun::makeInputs(func::FuncOp entry, const InputOptions &inputOptions,
                    const IndexedOptions &options) {
  StringRef entryName = inputOptions.entryName;
  SmallVector<HostTensor> inputs;
  for (auto [i, argType] : llvm::enumerate(entry.getArgumentTypes())) {
    std::optional<DType> dtype = getTensorDType(argType);
    if (!dtype)
      return entry.emitError()
             << "argument " << i << " of @" << entryName << " has type "
             << argType
             << ", which attn-run cannot feed (supported: ranked tensors of "
                "f16, bf16, f32, f64, i1, i8, i16, i32, i64)";
    std::optional<HostTensor> t =
        makeInput(i, cast<RankedTensorType>(argType), *dtype, inputOptions,
                  options);
    if (!t)
      return failure();
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

