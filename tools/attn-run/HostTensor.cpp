//===- HostTensor.cpp - host buffers, dtypes and .npy files for attn-run --===//

#include "HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

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
// f16 / bf16 bit conversions (round to nearest even)
//===----------------------------------------------------------------------===//

static uint32_t floatBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

static float bitsFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

static uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) // inf or NaN (keep NaNs quiet)
    return sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0);
  if (absx >= 0x47800000) // >= 2^16: overflows to inf
    return sign | 0x7c00;
  if (absx < 0x38800000) { // below 2^-14: subnormal half or zero
    // Units of 2^-24; nearbyint rounds to nearest even by default.
    return sign |
           static_cast<uint16_t>(std::nearbyint(bitsFloat(absx) * 16777216.0f));
  }
  uint32_t mant = absx & 0x7fffff;
  uint32_t h = (((absx >> 23) - 127 + 15) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h; // may carry into the exponent, up to inf: correct
  return sign | h;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000 | (mant << 13));
  return bitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

static uint16_t floatToBF16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

static float bf16ToFloat(uint16_t b) {
  return bitsFloat(static_cast<uint32_t>(b) << 16);
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

void HostTensor::FreeDeleter::operator()(void *p) const { std::free(p); }

HostTensor::HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape)
    : dtype(dtype), shape(shape) {
  int64_t bytes = getNumBytes();
  size_t rounded = static_cast<size_t>((bytes + 63) / 64 * 64);
  data.reset(std::aligned_alloc(64, rounded ? rounded : 64));
  if (!data) {
    llvm::errs() << "attn-run: out of memory allocating " << bytes
                 << " bytes\n";
    std::exit(1);
  }
  std::memset(data.get(), 0, rounded ? rounded : 64);
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
    return halfToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
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
    reinterpret_cast<uint16_t *>(p)[i] = floatToHalf(static_cast<float>(value));
    return;
  case DType::BF16:
    reinterpret_cast<uint16_t *>(p)[i] = floatToBF16(static_cast<float>(value));
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

HostTensor HostTensor::clone() const {
  HostTensor copy(dtype, shape);
  std::memcpy(copy.getData(), getData(), getNumBytes());
  return copy;
}

llvm::SmallVector<int64_t> HostTensor::makeDescriptor() const {
  int64_t rank = shape.size();
  llvm::SmallVector<int64_t> desc(3 + 2 * rank);
  desc[0] = desc[1] = reinterpret_cast<intptr_t>(data.get());
  desc[2] = 0;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    desc[3 + d] = shape[d];
    desc[3 + rank + d] = stride;
    stride *= shape[d];
  }
  return desc;
}

std::string HostTensor::describe() const {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + getName(dtype).str();
}

HostTensor attnrun::copyFromDescriptor(const int64_t *desc, int64_t rank,
                                       DType dtype) {
  const char *aligned = reinterpret_cast<const char *>(desc[1]);
  int64_t offset = desc[2];
  llvm::ArrayRef<int64_t> sizes(desc + 3, rank);
  llvm::ArrayRef<int64_t> strides(desc + 3 + rank, rank);
  HostTensor out(dtype, sizes);
  int64_t n = out.getNumElements();
  int64_t elem = getByteSize(dtype);
  char *dst = static_cast<char *>(out.getData());
  llvm::SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = offset;
    for (int64_t d = 0; d < rank; ++d)
      src += index[d] * strides[d];
    std::memcpy(dst + i * elem, aligned + src * elem, elem);
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

static std::optional<DType> dtypeFromDescr(llvm::StringRef descr) {
  // Single-byte types may be written with '|' or '<' / '='.
  if (descr.size() == 3 &&
      (descr[0] == '|' || descr[0] == '<' || descr[0] == '=')) {
    llvm::StringRef t = descr.drop_front();
    if (t == "b1")
      return DType::I1;
    if (t == "i1")
      return DType::I8;
  }
  return llvm::StringSwitch<std::optional<DType>>(descr)
      .Case("<f2", DType::F16)
      .Case("<u2", DType::BF16)
      .Case("<f4", DType::F32)
      .Case("<f8", DType::F64)
      .Case("<i2", DType::I16)
      .Case("<i4", DType::I32)
      .Case("<i8", DType::I64)
      .Default(std::nullopt);
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

/// The text after `'key':` in a .npy header dict, up to the next ',' at
/// nesting depth 0 (or the closing brace).
static std::optional<llvm::StringRef> headerValue(llvm::StringRef header,
                                                  llvm::StringRef key) {
  std::string quoted = "'" + key.str() + "'";
  size_t pos = header.find(quoted);
  if (pos == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = header.drop_front(pos + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  int depth = 0;
  size_t end = 0;
  for (; end < rest.size(); ++end) {
    char c = rest[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  return rest.take_front(end).trim();
}

std::optional<HostTensor> attnrun::readNpy(llvm::StringRef path,
                                           std::string &error) {
  auto bufferOr = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
  if (!bufferOr) {
    error =
        "cannot read '" + path.str() + "': " + bufferOr.getError().message();
    return std::nullopt;
  }
  llvm::StringRef bytes = (*bufferOr)->getBuffer();
  auto bad = [&](const llvm::Twine &why) {
    error = "'" + path.str() + "' is not a valid .npy file: " + why.str();
    return std::nullopt;
  };
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return bad("missing the \\x93NUMPY magic");
  uint8_t major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) |
                (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                   << (8 * i);
    headerStart = 12;
  } else {
    return bad("unsupported version " + llvm::Twine(major));
  }
  if (bytes.size() < headerStart + headerLen)
    return bad("truncated header");
  llvm::StringRef header = bytes.substr(headerStart, headerLen);

  auto descr = headerValue(header, "descr");
  auto fortran = headerValue(header, "fortran_order");
  auto shapeText = headerValue(header, "shape");
  if (!descr || !fortran || !shapeText)
    return bad("header lacks descr, fortran_order or shape");
  if (*fortran != "False")
    return bad("Fortran-order arrays are not supported");
  llvm::StringRef descrText = descr->trim("'\"");
  std::optional<DType> dtype = dtypeFromDescr(descrText);
  if (!dtype) {
    error = "'" + path.str() + "' has dtype '" + descrText.str() +
            "', which attn-run cannot read (expected <f2, <u2 (bf16 bits), "
            "<f4, <f8, |b1, |i1, <i2, <i4 or <i8)";
    return std::nullopt;
  }
  llvm::SmallVector<int64_t> shape;
  llvm::StringRef dims = shapeText->trim("() ");
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t d;
    if (part.getAsInteger(10, d) || d < 0)
      return bad("bad shape '" + shapeText->str() + "'");
    shape.push_back(d);
  }
  HostTensor tensor(*dtype, shape);
  size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart != static_cast<size_t>(tensor.getNumBytes()))
    return bad("holds " + llvm::Twine(bytes.size() - dataStart) +
               " data bytes, shape and dtype need " +
               llvm::Twine(tensor.getNumBytes()));
  std::memcpy(tensor.getData(), bytes.data() + dataStart, tensor.getNumBytes());
  return tensor;
}

bool attnrun::writeNpy(llvm::StringRef path, const HostTensor &tensor,
                       std::string &error) {
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

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return false;
  }
  os << "\x93NUMPY" << '\x01' << '\x00';
  os << static_cast<char>(header.size() & 0xff)
     << static_cast<char>((header.size() >> 8) & 0xff);
  os << header;
  os.write(static_cast<const char *>(tensor.getData()), tensor.getNumBytes());
  os.close();
  if (os.has_error()) {
    error = "cannot write '" + path.str() + "': " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}
