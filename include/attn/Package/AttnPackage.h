/*===- AttnPackage.h - run a saved attnfuse package from C ------*- C -*-===*\
|*                                                                            *|
|* A package is the directory that `CompiledModule.save` or                  *|
|* `Generator.save` writes (docs/python.md, "Saving and loading"):           *|
|* manifest.json, model.so, model.h and weights.bin. This library opens one  *|
|* without Python: it checks the manifest (format version, checksum, fields, *|
|* attnfuse version and ABI), each file's size and SHA-256, the host's       *|
|* machine and CPU features, maps weights.bin read-only, loads model.so and  *|
|* checks its own record of its target and of each entry point's signature  *|
|* against the manifest. Then a caller lists the entry points and their      *|
|* arguments, binds the inputs of a call, runs it and reads its outputs;     *|
|* the weights are bound by the package.                                      *|
|*                                                                            *|
|* Every function returns a status (or NULL / -1) and never aborts: the      *|
|* message of the last failure on the calling thread is                      *|
|* attn_package_last_error(). A run-time check of the compiled code that     *|
|* fails (an index out of range, sizes that must agree) is ATTN_ERROR_CHECK. *|
|*                                                                            *|
|* Ownership: the package owns its entries and the strings and dims of every *|
|* attn_arg_info; a call owns its outputs until its next run or              *|
|* attn_call_free; the caller owns the buffers it binds and must keep them   *|
|* alive and unchanged by others until the run returns. Close a package      *|
|* after freeing its calls (attn_package_close refuses while any is live).   *|
|*                                                                            *|
|* Threads: an open package and its entries are read-only and may be used    *|
|* from any number of threads; a call is one thread's at a time (make one    *|
|* call per thread). A run that writes state bound by the package (a         *|
|* module's buffer written in place) holds the package's lock.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_PACKAGE_ATTNPACKAGE_H
#define ATTN_PACKAGE_ATTNPACKAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What the shared library exports (it is built with hidden visibility).
#if defined(__GNUC__)
#define ATTN_PACKAGE_API __attribute__((visibility("default")))
#else
#define ATTN_PACKAGE_API
#endif

/// The package format, attnfuse version and signature ABI this library
/// reads (attnfuse/package.py's FORMAT_VERSION, VERSION and ABI).
#define ATTN_PACKAGE_FORMAT_VERSION 1
#define ATTN_PACKAGE_ATTNFUSE_VERSION "0.1.0"
#define ATTN_PACKAGE_ABI "attn-signature 1"

typedef enum {
  ATTN_OK = 0,
  /// A NULL pointer, an index out of range, no such name.
  ATTN_ERROR_ARGUMENT,
  /// A file missing or unreadable, a failed mapping.
  ATTN_ERROR_IO,
  /// A malformed, edited, truncated or foreign file.
  ATTN_ERROR_PACKAGE,
  /// Another format version, attnfuse version or ABI.
  ATTN_ERROR_VERSION,
  /// Another machine, or CPU features the host lacks.
  ATTN_ERROR_TARGET,
  /// model.so cannot be loaded or lacks a symbol.
  ATTN_ERROR_LIBRARY,
  /// A bound buffer of another dtype.
  ATTN_ERROR_DTYPE,
  /// Another rank, size or byte size; a dynamic dim out of its bounds.
  ATTN_ERROR_SHAPE,
  /// An argument bound neither by the call nor by the package.
  ATTN_ERROR_UNBOUND,
  /// A run-time check of the compiled code failed.
  ATTN_ERROR_CHECK,
  /// Out of order: an output before a run, a close with live calls.
  ATTN_ERROR_STATE,
  /// A manifest path that is absent, null or of another type.
  ATTN_ERROR_NOT_FOUND,
  /// Out of memory.
  ATTN_ERROR_MEMORY,
} attn_status;

/// Element types, as the manifest names them (float32, ..., int64). f16 and
/// bf16 elements are uint16_t bit patterns, bool one byte.
typedef enum {
  ATTN_FLOAT32,
  ATTN_FLOAT16,
  ATTN_BFLOAT16,
  ATTN_FLOAT64,
  ATTN_BOOL,
  ATTN_INT8,
  ATTN_UINT8,
  ATTN_INT16,
  ATTN_INT32,
  ATTN_INT64,
} attn_dtype;

/// What an argument is: a user input, or state the package binds from
/// weights.bin (a parameter, a buffer, a constant folded at export); or an
/// output.
typedef enum {
  ATTN_ARG_INPUT,
  ATTN_ARG_PARAMETER,
  ATTN_ARG_BUFFER,
  ATTN_ARG_CONSTANT,
  ATTN_ARG_OUTPUT,
} attn_arg_kind;

typedef struct attn_package attn_package;
typedef struct attn_entry attn_entry;
typedef struct attn_call attn_call;

/// An argument or an output of an entry point. `dims[i]` is the size of
/// dim i, or -1 where it is dynamic; `dim_min[i]`..`dim_max[i]` bound a
/// dynamic dim named in the manifest's `dims` (0 and INT64_MAX where
/// unbounded; the static size for a static dim).
typedef struct {
  const char *name; /* the argument's name; "output<i>" for an output */
  attn_arg_kind kind;
  attn_dtype dtype;
  int32_t rank;
  const int64_t *dims;
  const int64_t *dim_min;
  const int64_t *dim_max;
  int written; /* the run writes the bound buffer in place (a KV cache) */
  int bound;   /* the package binds it (weights.bin); a call may rebind it */
} attn_arg_info;

/// A dense row-major tensor: an output of a run.
typedef struct {
  attn_dtype dtype;
  int32_t rank;
  const int64_t *dims;
  const void *data;
  size_t nbytes;
} attn_tensor;

/// The message of the last call on this thread that failed ("" if none);
/// valid until the next failure on this thread.
ATTN_PACKAGE_API const char *attn_package_last_error(void);
/// "ATTN_OK", "ATTN_ERROR_IO", ...
ATTN_PACKAGE_API const char *attn_status_name(attn_status status);
/// "float32", ...; NULL for a value that is no dtype.
ATTN_PACKAGE_API const char *attn_dtype_name(attn_dtype dtype);
/// Bytes per element (0 for a value that is no dtype).
ATTN_PACKAGE_API size_t attn_dtype_size(attn_dtype dtype);

/// Options of attn_package_open_flags.
enum {
  /// Check weights.bin's size only, not its SHA-256 (which reads the whole
  /// file): Python's load(path, verify_weights=False).
  ATTN_PACKAGE_SKIP_WEIGHTS_SHA256 = 1,
};

/// Opens the package directory `dir` (all checks above; the weights'
/// SHA-256 included). On success `*package` is set; on failure it is NULL.
ATTN_PACKAGE_API attn_status attn_package_open(const char *dir,
                                               attn_package **package);
ATTN_PACKAGE_API attn_status attn_package_open_flags(const char *dir,
                                                     unsigned flags,
                                                     attn_package **package);
/// Unloads the library and unmaps the weights. ATTN_ERROR_STATE (and
/// nothing closed) while a call of the package is live; NULL is ignored.
ATTN_PACKAGE_API attn_status attn_package_close(attn_package *package);

/// "module" or "generator".
ATTN_PACKAGE_API const char *attn_package_kind(const attn_package *package);
ATTN_PACKAGE_API int64_t attn_package_num_entries(const attn_package *package);
/// Entry `index`, or NULL (ATTN_ERROR_ARGUMENT) outside [0, num_entries).
ATTN_PACKAGE_API const attn_entry *
attn_package_entry(const attn_package *package, int64_t index);
/// The entry named `name` (a module's "forward"; a generator's "prefill",
/// "decode_1", ...), or NULL.
ATTN_PACKAGE_API const attn_entry *
attn_package_entry_named(const attn_package *package, const char *name);

/// A value of the manifest by its path, dot-separated keys and array
/// indices ("generator.max_cache_len", "generator.cache.0.keys.1").
/// ATTN_ERROR_NOT_FOUND where it is absent, null or of another type.
ATTN_PACKAGE_API attn_status attn_package_manifest_int(
    const attn_package *package, const char *path, int64_t *value);
ATTN_PACKAGE_API attn_status attn_package_manifest_string(
    const attn_package *package, const char *path, const char **value);
/// The number of elements of an array or members of an object.
ATTN_PACKAGE_API attn_status attn_package_manifest_length(
    const attn_package *package, const char *path, int64_t *length);

ATTN_PACKAGE_API const char *attn_entry_name(const attn_entry *entry);
/// The arguments the library takes, in order (a module's arguments that
/// export fixed, the manifest's "static" ones, are not among them).
ATTN_PACKAGE_API int64_t attn_entry_num_args(const attn_entry *entry);
ATTN_PACKAGE_API attn_status attn_entry_arg(const attn_entry *entry,
                                            int64_t index, attn_arg_info *info);
/// The index of the argument named `name`, or -1 (ATTN_ERROR_ARGUMENT).
ATTN_PACKAGE_API int64_t attn_entry_arg_index(const attn_entry *entry,
                                              const char *name);
ATTN_PACKAGE_API int64_t attn_entry_num_outputs(const attn_entry *entry);
ATTN_PACKAGE_API attn_status attn_entry_output_info(const attn_entry *entry,
                                                    int64_t index,
                                                    attn_arg_info *info);

/// A call of `entry`: its bindings and its outputs.
ATTN_PACKAGE_API attn_status attn_call_create(const attn_entry *entry,
                                              attn_call **call);
/// Frees the call and its outputs; NULL is ignored.
ATTN_PACKAGE_API void attn_call_free(attn_call *call);

/// Binds argument `index` to the caller's dense row-major buffer `data` of
/// `nbytes` bytes, a tensor of `dtype` and `dims[rank]`. Checked here: the
/// argument's dtype (ATTN_ERROR_DTYPE), rank, static sizes, the bounds of
/// its dynamic dims and nbytes (ATTN_ERROR_SHAPE); at the run, that dims
/// of one name agree across arguments. The buffer is written only where
/// the argument is `written`, and must not overlap another argument then.
ATTN_PACKAGE_API attn_status attn_call_bind(attn_call *call, int64_t index,
                                            attn_dtype dtype, int32_t rank,
                                            const int64_t *dims, void *data,
                                            size_t nbytes);
/// attn_call_bind of the argument named `name`.
ATTN_PACKAGE_API attn_status attn_call_bind_named(
    attn_call *call, const char *name, attn_dtype dtype, int32_t rank,
    const int64_t *dims, void *data, size_t nbytes);

/// Runs the entry on the bound arguments; the outputs of the previous run
/// are freed. On ATTN_ERROR_CHECK the buffers the compiled code had
/// allocated are leaked and the call stays usable.
ATTN_PACKAGE_API attn_status attn_call_run(attn_call *call);

/// Output `index` of the last successful run; valid until the next run or
/// attn_call_free.
ATTN_PACKAGE_API attn_status attn_call_output(const attn_call *call,
                                              int64_t index,
                                              attn_tensor *output);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_PACKAGE_ATTNPACKAGE_H */
