//===- HostTensor.cpp - host buffers, dtypes and .npy files for attn-run --===//

#include "HostTensor.h"

// Plain C++ shared with the CUDA kernels (no CUDA needed to include it).
#include "attn/kernels/float_bits.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace attnrun;

std::optional<DType> attnrun::getDType(mlir::Type type) {
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isSignlessInteger(1))
    return DType::I1;
  if (type.isSignlessInteger(8))
    return DType::I8;
  if (type.isSignlessInteger(16))
    return DType::I16;
  if (type.isSignlessInteger(32))
    return DType::I32;
  if (type.isSignlessInteger(64))
    return DType::I64;
  return std::nullopt;
}

int64_t attnrun::getByteSize(DType dtype) {
  switch (dtype) {
  case DType::I1:
  case DType::I8:
    return 1;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  llvm_unreachable("unknown dtype");
}

llvm::StringRef attnrun::getName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I1:
    return "i1";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  llvm_unreachable("unknown dtype");
}

bool attnrun::isFloat(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 ||
         dtype == DType::F64;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

void HostTensor::FreeDeleter::operator()(void *p) const { std::free(p); }

std::optional<int64_t> attnrun::getNumBytes(DType dtype,
                                            llvm::ArrayRef<int64_t> shape) {
  int64_t bytes = getByteSize(dtype);
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> product = llvm::checkedMul(bytes, d);
    if (!product)
      return std::nullopt;
    bytes = *product;
  }
  return bytes;
}

/// "2x3xf32" for messages, from any shape.
static std::string describeShape(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + getName(dtype).str();
}

static uint64_t getPhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

std::optional<HostTensor> HostTensor::allocate(DType dtype,
                                               llvm::ArrayRef<int64_t> shape,
                                               std::string &error) {
  std::string what = "a " + describeShape(dtype, shape) + " array";
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
    error = what + " has a negative size";
    return std::nullopt;
  }
  std::optional<int64_t> bytes = attnrun::getNumBytes(dtype, shape);
  // Rounded up to the alignment, as aligned_alloc requires.
  if (!bytes || *bytes > INT64_MAX - 63) {
    error = what + " needs more than 2^63 - 1 bytes";
    return std::nullopt;
  }
  uint64_t rounded = std::max<uint64_t>((*bytes + 63) / 64 * 64, 64);
  // Overcommit would let a larger buffer be allocated and then kill the
  // process when it is filled.
  if (uint64_t memory = getPhysicalMemoryBytes(); rounded > memory) {
    error = what + " needs " + std::to_string(*bytes) +
            " bytes, more than this machine's " + std::to_string(memory) +
            " bytes of memory";
    return std::nullopt;
  }
  HostTensor t;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  t.data.reset(std::aligned_alloc(64, rounded));
  if (!t.data) {
    error = "cannot allocate " + std::to_string(*bytes) + " bytes for " + what;
    return std::nullopt;
  }
  std::memset(t.data.get(), 0, rounded);
  return t;
}

int64_t HostTensor::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double HostTensor::get(int64_t i) const {
  const char *p = static_cast<const char *>(data.get());
  switch (dtype) {
  case DType::F16:
    return attn::f16_bits_to_f32(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return attn::bf16_bits_to_f32(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::F32:
    return reinterpret_cast<const float *>(p)[i];
  case DType::F64:
    return reinterpret_cast<const double *>(p)[i];
  case DType::I1:
    return p[i] & 1;
  case DType::I8:
    return reinterpret_cast<const int8_t *>(p)[i];
  case DType::I16:
    return reinterpret_cast<const int16_t *>(p)[i];
  case DType::I32:
    return reinterpret_cast<const int32_t *>(p)[i];
  case DType::I64:
    return static_cast<double>(reinterpret_cast<const int64_t *>(p)[i]);
  }
  llvm_unreachable("unknown dtype");
}

void HostTensor::set(int64_t i, double value) {
  char *p = static_cast<char *>(data.get());
  switch (dtype) {
  case DType::F16:
    reinterpret_cast<uint16_t *>(p)[i] = attn::f32_to_f16_bits(static_cast<float>(value));
    return;
  case DType::BF16:
    reinterpret_cast<uint16_t *>(p)[i] = attn::f32_to_bf16_bits(static_cast<float>(value));
    return;
  case DType::F32:
    reinterpret_cast<float *>(p)[i] = static_cast<float>(value);
    return;
  case DType::F64:
    reinterpret_cast<double *>(p)[i] = value;
    return;
  case DType::I1:
    p[i] = value != 0.0;
    return;
  case DType::I8:
    reinterpret_cast<int8_t *>(p)[i] = static_cast<int8_t>(value);
    return;
  case DType::I16:
    reinterpret_cast<int16_t *>(p)[i] = static_cast<int16_t>(value);
    return;
  case DType::I32:
    reinterpret_cast<int32_t *>(p)[i] = static_cast<int32_t>(value);
    return;
  case DType::I64:
    reinterpret_cast<int64_t *>(p)[i] = static_cast<int64_t>(value);
    return;
  }
}

std::optional<HostTensor> HostTensor::clone(std::string &error) const {
  std::optional<HostTensor> copy = allocate(dtype, shape, error);
  if (copy)
    std::memcpy(copy->getData(), getData(), getNumBytes());
  return copy;
}

void HostTensor::writeDescriptor(void *descriptor) const {
  // Read and written as DynamicMemRefType does: the sizes, then the strides
  // right after them.
  auto *desc = static_cast<StridedMemRefType<char, 1> *>(descriptor);
  desc->basePtr = desc->data = static_cast<char *>(data.get());
  desc->offset = 0;
  int64_t rank = shape.size();
  if (rank == 0)
    return;
  int64_t *sizes = desc->sizes;
  int64_t *strides = sizes + rank;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    sizes[d] = shape[d];
    strides[d] = stride;
    stride *= shape[d];
  }
}

std::string HostTensor::describe() const { return describeShape(dtype, shape); }

/// Bytes of a StridedMemRefType<T, rank> for a run-time rank: the rank-0
/// fields, then a size and a stride per dim.
static size_t getDescriptorBytes(int64_t rank) {
  constexpr size_t header = sizeof(StridedMemRefType<char, 0>);
  constexpr size_t perDim = sizeof(StridedMemRefType<char, 1>) - header;
  return header + rank * perDim;
}

MemRefDescriptors::MemRefDescriptors(llvm::ArrayRef<int64_t> ranks)
    : ranks(ranks) {
  size_t total = 0;
  for (int64_t rank : ranks) {
    offsets.push_back(total);
    total += getDescriptorBytes(rank) / sizeof(int64_t);
  }
  // One word at least: the callee may be handed a pointer to an empty struct.
  words.assign(std::max<size_t>(total, 1), 0);
}

DynamicMemRefType<char> MemRefDescriptors::read(unsigned i) const {
  UnrankedMemRefType<char> unranked{
      ranks[i], const_cast<int64_t *>(words.data() + offsets[i])};
  return DynamicMemRefType<char>(unranked);
}

std::optional<HostTensor>
attnrun::copyFromMemRef(const DynamicMemRefType<char> &memref, DType dtype,
                        std::string &error) {
  int64_t rank = memref.rank;
  llvm::ArrayRef<int64_t> sizes(memref.sizes, rank);
  llvm::ArrayRef<int64_t> strides(memref.strides, rank);
  std::optional<HostTensor> out = HostTensor::allocate(dtype, sizes, error);
  if (!out)
    return std::nullopt;
  int64_t n = out->getNumElements();
  int64_t elem = getByteSize(dtype);
  char *dst = static_cast<char *>(out->getData());
  llvm::SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = memref.offset;
    for (int64_t d = 0; d < rank; ++d)
      src += index[d] * strides[d];
    std::memcpy(dst + i * elem, memref.data + src * elem, elem);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Rng
//===----------------------------------------------------------------------===//

uint64_t Rng::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }

double Rng::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300)
    u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

/// Supported numpy type codes (after the byte-order character).
static std::optional<DType> dtypeFromCode(llvm::StringRef code) {
  return llvm::StringSwitch<std::optional<DType>>(code)
      .Case("b1", DType::I1)
      .Case("i1", DType::I8)
      .Case("f2", DType::F16)
      .Case("u2", DType::BF16)
      .Case("f4", DType::F32)
      .Case("f8", DType::F64)
      .Case("i2", DType::I16)
      .Case("i4", DType::I32)
      .Case("i8", DType::I64)
      .Default(std::nullopt);
}

/// The DType of a numpy `descr` such as "<f4"; `why` says what is wrong
/// otherwise.
static std::optional<DType> dtypeFromDescr(llvm::StringRef descr,
                                           std::string &why) {
  std::optional<DType> dtype =
      descr.empty() ? std::nullopt : dtypeFromCode(descr.drop_front());
  if (!dtype || !llvm::StringRef("<>|=").contains(descr.front())) {
    why = "dtype '" + descr.str() +
          "' is not one attn-run reads (expected <f2, <u2 (bf16 bits), <f4, "
          "<f8, |b1, |i1, <i2, <i4 or <i8)";
    return std::nullopt;
  }
  // Single bytes have no byte order; '=' is the host's, little endian.
  char order = descr.front();
  bool little = order == '<' || (order == '=' && llvm::sys::IsLittleEndianHost);
  if (getByteSize(*dtype) > 1 && !little) {
    why = "dtype '" + descr.str() +
          "' is not little endian; attn-run reads little-endian data only";
    return std::nullopt;
  }
  return dtype;
}

static llvm::StringRef descrFromDType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I1:
    return "|b1";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  }
  llvm_unreachable("unknown dtype");
}

namespace {
/// The dict of a .npy header, e.g.
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  llvm::SmallVector<int64_t> shape;
};

/// A strict parser of the header dict: exactly the three keys, each once,
/// with a string, a boolean and a tuple of non-negative int64 values.
class NpyHeaderParser {
public:
  explicit NpyHeaderParser(llvm::StringRef text) : rest(text) {}

  std::optional<NpyHeader> parse(std::string &why);

private:
  bool consume(char c) {
    rest = rest.ltrim();
    return rest.consume_front(llvm::StringRef(&c, 1));
  }
  std::optional<std::string> parseString();
  bool parseShape(llvm::SmallVectorImpl<int64_t> &shape, std::string &why);
  /// The value of `key` into `header`; false (`why` may say more) if it is
  /// malformed.
  bool parseValue(llvm::StringRef key, NpyHeader &header, std::string &why);

  llvm::StringRef rest;
};
} // namespace

std::optional<std::string> NpyHeaderParser::parseString() {
  rest = rest.ltrim();
  if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
    return std::nullopt;
  char quote = rest.front();
  size_t end = rest.find(quote, 1);
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  std::string value = rest.slice(1, end).str();
  rest = rest.drop_front(end + 1);
  return value;
}

bool NpyHeaderParser::parseShape(llvm::SmallVectorImpl<int64_t> &shape,
                                 std::string &why) {
  if (!consume('('))
    return false;
  while (!consume(')')) {
    rest = rest.ltrim();
    size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
    llvm::StringRef number = rest.take_front(digits);
    int64_t d;
    if (number.empty())
      return false;
    if (number.getAsInteger(10, d)) {
      why = "shape dim " + number.str() + " does not fit in 64 bits";
      return false;
    }
    shape.push_back(d);
    rest = rest.drop_front(digits);
    if (!consume(',')) {
      if (!consume(')'))
        return false;
      // "(5)" is an int in parentheses, not a tuple, but numpy reads it too.
      return true;
    }
  }
  return true;
}

bool NpyHeaderParser::parseValue(llvm::StringRef key, NpyHeader &header,
                                 std::string &why) {
  if (key == "descr") {
    std::optional<std::string> descr = parseString();
    header.descr = descr.value_or("");
    return descr.has_value();
  }
  if (key == "fortran_order") {
    rest = rest.ltrim();
    header.fortranOrder = rest.consume_front("True");
    return header.fortranOrder || rest.consume_front("False");
  }
  return parseShape(header.shape, why);
}

std::optional<NpyHeader> NpyHeaderParser::parse(std::string &why) {
  NpyHeader header;
  bool seenDescr = false, seenFortran = false, seenShape = false;
  if (!consume('{')) {
    why = "the header is not a dict";
    return std::nullopt;
  }
  while (!consume('}')) {
    std::optional<std::string> key = parseString();
    if (!key || !consume(':')) {
      why = "malformed header dict";
      return std::nullopt;
    }
    bool *seen = *key == "descr"           ? &seenDescr
                 : *key == "fortran_order" ? &seenFortran
                 : *key == "shape"         ? &seenShape
                                           : nullptr;
    if (!seen) {
      why = "unknown header key '" + *key + "'";
      return std::nullopt;
    }
    if (*seen) {
      why = "header key '" + *key + "' appears twice";
      return std::nullopt;
    }
    *seen = true;
    if (!parseValue(*key, header, why)) {
      if (why.empty())
        why = "malformed value of header key '" + *key + "'";
      return std::nullopt;
    }
    if (!consume(',') && !llvm::StringRef(rest.ltrim()).starts_with("}")) {
      why = "malformed header dict";
      return std::nullopt;
    }
  }
  if (!rest.trim().empty()) {
    why = "unexpected text after the header dict";
    return std::nullopt;
  }
  if (!seenDescr || !seenFortran || !seenShape) {
    why = "the header lacks 'descr', 'fortran_order' or 'shape'";
    return std::nullopt;
  }
  return header;
}

/// numpy's own limit (np.load's max_header_size): larger headers are not
/// written for plain arrays and are not read without allow_pickle.
static constexpr size_t kMaxNpyHeaderBytes = 10000;

/// The header text and where the data starts, or the reason it is unusable.
static std::optional<std::pair<llvm::StringRef, size_t>>
splitNpyHeader(llvm::StringRef bytes, std::string &why) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY")) {
    why = "missing the \\x93NUMPY magic";
    return std::nullopt;
  }
  uint8_t major = bytes[6];
  if (major < 1 || major > 3) {
    why = "unsupported version " + std::to_string(major);
    return std::nullopt;
  }
  // Version 1: 2-byte little-endian header length; 2 and 3: 4 bytes.
  size_t lengthBytes = major == 1 ? 2 : 4, start = 8 + lengthBytes;
  if (bytes.size() < start) {
    why = "truncated header";
    return std::nullopt;
  }
  size_t length = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    length |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
              << (8 * i);
  if (length > kMaxNpyHeaderBytes) {
    why = "header of " + std::to_string(length) + " bytes is larger than " +
          std::to_string(kMaxNpyHeaderBytes) + " bytes";
    return std::nullopt;
  }
  if (bytes.size() - start < length) {
    why = "truncated header";
    return std::nullopt;
  }
  return std::make_pair(bytes.substr(start, length), start + length);
}

/// The index of the first byte of a bool array that is neither 0 nor 1.
static std::optional<int64_t> findNonBoolByte(const HostTensor &t) {
  const uint8_t *p = static_cast<const uint8_t *>(t.getData());
  for (int64_t i = 0, n = t.getNumElements(); i < n; ++i)
    if (p[i] > 1)
      return i;
  return std::nullopt;
}

std::optional<HostTensor> attnrun::readNpy(llvm::StringRef path,
                                           std::string &error) {
  // Only a regular file has a size to check the header against (/dev/zero
  // or a pipe would be read without end).
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    error = "cannot read '" + path.str() + "': " + ec.message();
    return std::nullopt;
  }
  if (!llvm::sys::fs::is_regular_file(status)) {
    error = "'" + path.str() + "' is not a regular file";
    return std::nullopt;
  }
  auto bufferOr = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
  if (!bufferOr) {
    error =
        "cannot read '" + path.str() + "': " + bufferOr.getError().message();
    return std::nullopt;
  }
  return readNpyBytes(path, (*bufferOr)->getBuffer(), error);
}

std::optional<HostTensor> attnrun::readNpyBytes(llvm::StringRef path,
                                                llvm::StringRef bytes,
                                                std::string &error) {
  auto bad = [&](const llvm::Twine &why) {
    error = "'" + path.str() + "' is not a valid .npy file: " + why.str();
    return std::nullopt;
  };
  std::string why;
  auto split = splitNpyHeader(bytes, why);
  if (!split)
    return bad(why);
  std::optional<NpyHeader> header = NpyHeaderParser(split->first).parse(why);
  if (!header)
    return bad(why);
  if (header->fortranOrder)
    return bad("Fortran-order arrays are not supported");
  std::optional<DType> dtype = dtypeFromDescr(header->descr, why);
  if (!dtype) {
    error = "'" + path.str() + "': " + why;
    return std::nullopt;
  }
  std::optional<int64_t> need = getNumBytes(*dtype, header->shape);
  if (!need)
    return bad("shape " + describeShape(*dtype, header->shape) +
               " needs more than 2^63 - 1 bytes");
  uint64_t have = bytes.size() - split->second;
  if (have < static_cast<uint64_t>(*need))
    return bad("truncated data: " + llvm::Twine(have) + " bytes, shape " +
               describeShape(*dtype, header->shape) + " needs " +
               llvm::Twine(*need));
  if (have > static_cast<uint64_t>(*need))
    return bad(llvm::Twine(have - *need) +
               " bytes of trailing data after the " + llvm::Twine(*need) +
               " that shape " + describeShape(*dtype, header->shape) +
               " needs");
  std::optional<HostTensor> tensor =
      HostTensor::allocate(*dtype, header->shape, error);
  if (!tensor) {
    error = "'" + path.str() + "': " + error;
    return std::nullopt;
  }
  std::memcpy(tensor->getData(), bytes.data() + split->second, *need);
  if (*dtype == DType::I1)
    if (std::optional<int64_t> at = findNonBoolByte(*tensor))
      return bad("bool element " + llvm::Twine(*at) + " is byte " +
                 llvm::Twine(static_cast<unsigned>(
                     static_cast<const uint8_t *>(tensor->getData())[*at])) +
                 "; bools must be 0 or 1");
  return tensor;
}

/// Writes `write`'s bytes to `path` through a temporary file in the same
/// directory that is then renamed over `path`: a reader (or a run that
/// fails half way) never leaves a partial file. A path that exists and is
/// not a regular file (a FIFO, /dev/stdout) is written in place.
static bool writeAtomically(llvm::StringRef path,
                            llvm::function_ref<void(llvm::raw_ostream &)> write,
                            std::string &error) {
  std::string shown = path.str();
  auto fail = [&](const std::string &why) {
    error = "cannot write '" + shown + "': " + why;
    return false;
  };
  // Through a symbolic link: replace the file it names, not the link.
  llvm::SmallString<256> target;
  if (llvm::sys::fs::real_path(path, target))
    target = path;
  path = target;
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      !llvm::sys::fs::is_regular_file(status)) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return fail(ec.message());
    write(os);
    os.close();
    if (std::error_code ec = os.error()) {
      os.clear_error();
      return fail(ec.message());
    }
    return true;
  }
  int fd;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          path + ".tmp-%%%%%%", fd, temp))
    return fail(ec.message());
  llvm::FileRemover removeTemp(temp);
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  write(os);
  os.close();
  if (std::error_code ec = os.error()) {
    os.clear_error();
    return fail(ec.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return fail(ec.message());
  removeTemp.releaseFile();
  return true;
}

std::string attnrun::serializeNpy(const HostTensor &tensor) {
  std::string header = "{'descr': '" + descrFromDType(tensor.getDType()).str() +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t d : tensor.getShape())
    header += std::to_string(d) + ", ";
  if (tensor.getShape().size() > 1)
    header.resize(header.size() - 2); // "(2, 3)"
  else if (tensor.getShape().size() == 1)
    header.resize(header.size() - 1); // "(5,)"
  header += "), }";
  // Pad with spaces so that magic + len + header + '\n' is 64-byte aligned.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  os << "\x93NUMPY" << '\x01' << '\x00';
  os << static_cast<char>(header.size() & 0xff)
     << static_cast<char>((header.size() >> 8) & 0xff);
  os << header;
  os.write(static_cast<const char *>(tensor.getData()), tensor.getNumBytes());
  return bytes;
}

bool attnrun::writeNpy(llvm::StringRef path, const HostTensor &tensor,
                       std::string &error) {
  std::string bytes = serializeNpy(tensor);
  return writeAtomically(
      path, [&](llvm::raw_ostream &os) { os << bytes; }, error);
}
