//===- CHeader.cpp - C declarations of compiled attn functions ------------===//
//
// Mirrors what `llvm.emit_c_interface` + bufferization with identity-layout
// function boundaries produce: every ranked tensor becomes a pointer to a
// strided memref descriptor; results that pack into a struct (any tensor
// result, or several results) come back through a pointer passed first.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Transforms/Cpu/InPlaceArguments.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// How one element type appears in C.
struct CElement {
  StringRef cType; // "float"
  StringRef tag;   // "f32", used in descriptor type names
};
} // namespace

static std::optional<CElement> getCElement(Type type) {
  if (type.isF32())
    return CElement{"float", "f32"};
  if (type.isF64())
    return CElement{"double", "f64"};
  if (type.isF16())
    return CElement{"uint16_t", "f16"};
  if (type.isBF16())
    return CElement{"uint16_t", "bf16"};
  if (type.isIndex())
    return CElement{"int64_t", "index"};
  if (type.isSignlessInteger(1))
    return CElement{"bool", "i1"};
  if (type.isSignlessInteger(8))
    return CElement{"int8_t", "i8"};
  if (type.isSignlessInteger(16))
    return CElement{"int16_t", "i16"};
  if (type.isSignlessInteger(32))
    return CElement{"int32_t", "i32"};
  if (type.isSignlessInteger(64))
    return CElement{"int64_t", "i64"};
  return std::nullopt;
}

/// The C type of one argument or result, defining descriptor structs on
/// first use. Empty on an unsupported type.
static std::string getCType(Type type, llvm::StringSet<> &defined,
                            llvm::raw_ostream &defs) {
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    if (!shaped.hasRank() || !isa<TensorType, MemRefType>(type))
      return "";
    std::optional<CElement> elem = getCElement(shaped.getElementType());
    if (!elem)
      return "";
    int64_t rank = shaped.getRank();
    std::string name =
        ("attn_memref_" + elem->tag + "_" + Twine(rank) + "d").str();
    if (defined.insert(name).second) {
      std::string guard = StringRef(name).upper();
      defs << "#ifndef " << guard << "\n#define " << guard << "\n";
      defs << "/* Strided memref descriptor, rank " << rank
           << ": element (i0, i1, ...) is aligned[offset + i0 * strides[0] + "
              "...]. */\n";
      defs << "typedef struct {\n  " << elem->cType << " *allocated;\n  "
           << elem->cType << " *aligned;\n  int64_t offset;\n";
      if (rank > 0)
        defs << "  int64_t sizes[" << rank << "];\n  int64_t strides[" << rank
             << "];\n";
      defs << "} " << name << ";\n#endif\n\n";
    }
    return name;
  }
  std::optional<CElement> elem = getCElement(type);
  return elem ? elem->cType.str() : "";
}

/// What every entry point requires of its tensor arguments and how it
/// reports a violation (insertArgumentChecks, lib/Runtime/Checks.c).
static constexpr llvm::StringLiteral kArgumentContract =
    R"(/* Tensor arguments must be dense row-major arrays starting at `aligned`:
   offset 0, the row-major strides of their sizes (a dim of size 1 may have
   any stride), the sizes of their type where it has them and sizes >= 0
   where it has `?`. Every entry point checks this, and the compiled code
   checks that `?` sizes which must agree do. A failed check calls the
   check-failure handler: by default it prints "error: run-time check
   failed: <message>" on stderr and exits with status 70. A handler set with
   attnrt_set_check_failure_handler (NULL: the default again) must not
   return: it may exit, or longjmp out of the call, which leaks the buffers
   the call had allocated. A caller that wants a status instead calls
   attnrt_call_packed(attn_packed_<f>, args, message, size), where args[i]
   points to argument i of _mlir_ciface_<f>: it returns 0, or 1 with the
   message of a check that failed on the calling thread (the buffers the
   call had allocated are leaked). */
typedef void (*attnrt_check_failure_handler)(const char *message);
attnrt_check_failure_handler
attnrt_set_check_failure_handler(attnrt_check_failure_handler handler);
typedef void (*attnrt_packed_function)(void **args);
int attnrt_call_packed(attnrt_packed_function function, void **args,
                       char *message, int64_t messageSize);

)";

static bool isCIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// A name the library's own symbols use: a public function with it would
/// clash with another function's entry point or records.
static bool isReservedName(StringRef name) {
  return name == attn::kTargetSymbol ||
         name.starts_with(attn::kSignatureSymbolPrefix) ||
         name.starts_with(attn::kPackedSymbolPrefix) ||
         name.starts_with("attnrt_") ||
         name.starts_with("_mlir_");
}

LogicalResult attn::verifyCFunctionNames(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal() ||
        isCIdentifier(func.getSymName()))
      continue;
    std::string quoted;
    llvm::raw_string_ostream os(quoted);
    os << "\"";
    llvm::printEscapedString(func.getSymName(), os);
    os << "\"";
    return func.emitError("public function @")
           << quoted
           << " has no C name: its entry point _mlir_ciface_<name> and the "
              "C header need a C identifier (letters, digits and '_', not "
              "starting with a digit); rename it or make it private";
  }
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal() &&
        isReservedName(func.getSymName()))
      return func.emitError("public function @")
             << func.getSymName()
             << " has a name reserved for the symbols a library defines "
                "(attn_target, attn_signature_*, attn_packed_*, attnrt_*, "
                "_mlir_*); rename it or make it private";
  return success();
}

/// Which arguments take packed weight panels (attn-cpu-prepack-weights)
/// and which entry point packs them.
static void writePackedComment(llvm::raw_ostream &decls, func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto info = func.getArgAttrOfType<DictionaryAttr>(i, "attn.packed");
    auto entry = info ? info.getAs<StringAttr>("entry") : StringAttr();
    if (!entry)
      continue;
    decls << "/* arg" << i << ": the weight's panels, as _mlir_ciface_"
          << entry.getValue()
          << " returns them: pack once,\n   pass on every call. */\n";
  }
}

/// The comment above a function's declaration: its MLIR type, which
/// arguments it writes in place, and who frees the result buffers.
static void writeFunctionComment(llvm::raw_ostream &decls, StringRef name,
                                 FunctionType type,
                                 ArrayRef<std::string> written,
                                 bool cudaManaged) {
  decls << "/* @" << name << ": " << type << "\n";
  if (written.empty()) {
    decls << "   Tensor arguments are read, never written.";
  } else {
    decls << "   Written in place: ";
    llvm::interleave(written, decls, ", ");
    decls << " (on return their buffers hold the\n   new values; they must "
             "not overlap other arguments). The other tensor\n   arguments "
             "are read, never written.";
  }
  if (cudaManaged)
    decls << " Tensors must be device-accessible\n   (cudaMalloc, or "
             "cudaMallocManaged where an op runs on the CPU). Result\n   "
             "buffers are CUDA managed memory: "
             "attnrt_cuda_free(result->allocated)\n   when done. */\n";
  else
    decls << " Result buffers are malloc'ed by\n   the callee: "
             "free(result->allocated) when done (a result that is a\n   "
             "compile-time constant has allocated == (void *)0xdeadbeef; do "
             "not free that). */\n";
}

LogicalResult attn::emitCHeader(ModuleOp module, llvm::raw_ostream &os,
                                bool cudaManaged,
                                StringRef guardName) {
  if (failed(verifyCFunctionNames(module)))
    return failure();
  std::string defsStorage, declsStorage;
  llvm::raw_string_ostream defs(defsStorage), decls(declsStorage);
  llvm::StringSet<> defined;

  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    // Results that are the new value of an argument written in place are
    // not returned: the argument's buffer holds them.
    FunctionType type = getCInterfaceType(func);
    auto unsupported = [&](Type t) {
      return func.emitError("function '")
             << func.getSymName() << "' has type " << t
             << " with no C mapping (supported: ranked tensors and scalars of "
                "f16, bf16, f32, f64, i1, i8, i16, i32, i64, index)";
    };

    SmallVector<std::string> resultTypes;
    for (Type t : type.getResults()) {
      std::string c = getCType(t, defined, defs);
      if (c.empty())
        return unsupported(t);
      resultTypes.push_back(c);
    }
    SmallVector<std::string> argTypes;
    for (Type t : type.getInputs()) {
      std::string c = getCType(t, defined, defs);
      if (c.empty())
        return unsupported(t);
      argTypes.push_back(c);
    }

    // verifyCFunctionNames: the name is a C identifier.
    std::string cName = func.getSymName().str();
    std::string returnType = "void";
    SmallVector<std::string> params;
    bool packed =
        type.getNumResults() > 1 ||
        (type.getNumResults() == 1 && isa<ShapedType>(type.getResult(0)));
    if (type.getNumResults() > 1) {
      decls << "/* Results of @" << func.getSymName()
            << ". */\ntypedef struct {\n";
      for (auto [i, t] : llvm::enumerate(resultTypes))
        decls << "  " << t << " r" << i << ";\n";
      decls << "} " << cName << "_results;\n";
      params.push_back(cName + "_results *results");
    } else if (packed) {
      params.push_back(resultTypes.front() + " *result");
    } else if (type.getNumResults() == 1) {
      returnType = resultTypes.front();
    }
    SmallVector<std::string> written;
    for (auto [i, t] : llvm::enumerate(argTypes)) {
      bool isDescriptor = isa<ShapedType>(type.getInput(i));
      std::string name = "arg" + std::to_string(i);
      if (isWrittenInPlace(func, i)) {
        written.push_back(name);
        params.push_back(t + " *" + name);
        continue;
      }
      params.push_back((isDescriptor ? "const " + t + " *" : t + " ") + name);
    }

    writeFunctionComment(decls, func.getSymName(), type, written,
                         cudaManaged);
    writePackedComment(decls, func);
    decls << returnType << " _mlir_ciface_" << cName << "(";
    llvm::interleave(params, decls, ", ");
    if (params.empty())
      decls << "void";
    decls << ");\n";
    decls << "void attn_packed_" << cName << "(void **args);\n\n";
  }

  os << "/* Generated by attn-compile: the C ABI of the compiled functions. "
        "f16 and bf16\n   elements are uint16_t bit patterns. */\n";
  os << "#ifndef " << guardName << "\n#define " << guardName << "\n\n";
  os << "#include <stdbool.h>\n#include <stdint.h>\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  os << kArgumentContract << defsStorage << declsStorage;
  if (cudaManaged)
    os << "/* Frees a result buffer of the functions above (CUDA managed "
          "memory). */\nvoid attnrt_cuda_free(void *ptr);\n\n";
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guardName << " */\n";
  return success();
}
