//===- attn-npy-fuzzer.cpp - fuzz attn-run's .npy reader ------------------===//
//
// Each input is a .npy file for attnrun::readNpyBytes. A file it rejects is
// an expected result (its message is dropped); a file it accepts must come
// back unchanged through serializeNpy and a second read (dtype, shape,
// bytes), and bool arrays may hold only 0 and 1: anything else aborts.
//
//===----------------------------------------------------------------------===//

#include "HostTensor.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace attnrun;

static void check(bool ok, const char *what) {
  if (ok)
    return;
  llvm::errs() << "attn fuzz: " << what << "\n";
  abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::optional<HostTensor> tensor = readNpyBytes(
      "input.npy", llvm::StringRef(reinterpret_cast<const char *>(data), size),
      error);
  if (!tensor) {
    check(!error.empty(), "a rejected file without a message");
    return 0;
  }
  if (tensor->getDType() == DType::I1) {
    const auto *bytes = static_cast<const uint8_t *>(tensor->getData());
    for (int64_t i = 0; i < tensor->getNumBytes(); ++i)
      check(bytes[i] <= 1, "a bool array with a byte other than 0 and 1");
  }
  std::string again = serializeNpy(*tensor);
  std::optional<HostTensor> reread = readNpyBytes("again.npy", again, error);
  check(reread.has_value(), "serializeNpy wrote a file readNpyBytes rejects");
  check(reread->getDType() == tensor->getDType() &&
            reread->getShape() == tensor->getShape() &&
            reread->getNumBytes() == tensor->getNumBytes() &&
            std::memcmp(reread->getData(), tensor->getData(),
                        tensor->getNumBytes()) == 0,
        "a .npy round trip changed the array");
  return 0;
}
