//===- Passes.td - CPU transforms and ABI passes -----------*- tablegen -*-===//

#ifndef ATTN_TRANSFORMS_CPU_PASSES_TD
#define ATTN_TRANSFORMS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnInstrumentTrace : Pass<"attn-instrument-trace", "::mlir::ModuleOp"> {
  let summary = "Bracket each attn op with attnrt_trace_begin/end calls";
  let description = [{
    Numbers the attn ops of the module in walk order (`attn.yield` excepted:
    it goes with its `attn.sdpa`) and puts a call of
    `attnrt_trace_begin(i64 id)` before each and `attnrt_trace_end(i64 id)`
    after it, declaring both as private functions. The module gets
    `attn.trace_names`, the op names (without the dialect) indexed by id.

    Run it before `attn-lower-to-cpu`: the lowered code of an op then sits
    between its two calls, and the calls' unknown side effects keep later
    passes from moving it out. The runtime (lib/Runtime) records the calls
    as timed spans.

    With `locations`, a name also says where the op came from: the first
    file location of the op's location (through fused, call-site and name
    locations; attn-opt's own `<stdin>` and `-` skipped), as
    `sdpa model.py:12`. The Python front end's profiling
    (`attnfuse.compile(..., profile=True)`) names its profiler events so.

    With `linalg-ops`, the linalg ops directly in a function's body (the
    products and elementwise generics that a frontend, such as the Python
    exporter, writes in linalg; not those nested in loops) are bracketed
    too, named with their dialect (`linalg.matmul`).
  }];
  let options = [
    Option<"locations", "locations", "bool", /*default=*/"false",
           "Names carry the op's source file and line: `sdpa model.py:12`">,
    Option<"linalgOps", "linalg-ops", "bool", /*default=*/"false",
           "Also bracket the linalg ops of function bodies (`linalg.matmul`)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"
  ];
}

def AttnCpuEmitCInterface : Pass<"attn-cpu-emit-c-interface", "::mlir::func::FuncOp"> {
  let summary = "Mark public functions with llvm.emit_c_interface";
  let description = [{
    Sets the `llvm.emit_c_interface` unit attribute on a public `func.func`
    with a body, so that `convert-func-to-llvm` emits
    `_mlir_ciface_<name>` wrappers taking memref descriptors (what the JIT
    and AOT drivers call).
  }];
}

def AttnCpuFuseElementwise : Pass<"attn-cpu-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg.generics into one loop nest";
  let description = [{
    The lowering gives each elementwise op its own `linalg.generic`, often
    in place (the init is the input it replaces, so that bufferization
    reuses the buffer). Unfused, every op is its own small loop nest; LLVM
    fully unrolls small static ones and merges them into one basic block,
    and instruction selection is superlinear in the size of a block (its
    x86 FMA combine scans every user of a shared constant, such as the
    coefficients of the polynomial exp, for every FMA): a chain of a few
    hundred `attn.exp` on 4x8 took minutes to compile.

    This pass runs upstream linalg elementwise fusion
    (`populateElementwiseOpsFusionPatterns`) on tensors: a producer is fused
    into its consumer when the consumer is its only user (no computation is
    duplicated) and the fused body stays under `max-body-ops` operations
    (so code size and block size stay linear in the program). In-place
    generics are first rewritten to read their init as an input (fusion
    only takes producers of inputs), and afterwards each remaining generic
    that writes a new tensor takes an
    input as its init again where the lowering would have
    (`findReusableInput`: a buffer the lowering allocated, at its last use,
    of the result's type and indexing). Each generic computes exactly what
    the ops did: the scalar bodies, their roundings included, are only
    concatenated.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "int64_t", /*default=*/"256",
           "Largest fused body (operations) a fusion may create">
  ];
}

def AttnCpuFuseProductConsumers : Pass<"attn-cpu-fuse-product-consumers", "::mlir::func::FuncOp"> {
  let summary = "Make the elementwise consumers of each linalg product one generic";
  let description = [{
    A GEMM applies the elementwise generics that read its result once, one
    after the other, as it stores (attn-lower-to-cpu). Models write their
    activations as several ops that read the product more than once (GPT-2's
    GELU, `0.5 * x * (1 + tanh(c * (x + 0.044715 * x^3)))`, is nine attn
    ops, three of them reading x), which no such chain covers. This pass
    lowers the elementwise attn ops to generics (as attn-lower-to-cpu does
    first), then runs attn-cpu-fuse-elementwise's fusion on the generics
    that read a `linalg.matmul`/`linalg.batch_matmul` result (through
    reshapes and other such generics) only, except the rounding of a
    product's f32 result to bf16/f16, which the product folds itself (fused
    into a consumer that another product applies, such as Llama's gate
    reading `up`, it would leave its own product writing f32): the nine
    become one generic that reads x once, with its splat constants folded
    into the body.
    Nothing else changes. The CPU pipeline runs it before
    attn-cpu-outline-kernels, so that an outlined product takes the one
    generic with it.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect"
  ];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "int64_t", /*default=*/"256",
           "Largest fused body (operations) a fusion may create">
  ];
}

def AttnCpuTileAndFuse : Pass<"attn-cpu-tile-and-fuse", "::mlir::func::FuncOp"> {
  let summary = "Tile large linalg ops into parallel row blocks and fuse their producers";
  let description = [{
    After the elementwise fusion each linalg op still runs over its whole
    tensor on one thread: a norm is a pass for its squares, one for their
    mean and one for the normalised rows, each reading and writing the whole
    activation. This pass tiles each large linalg op (upstream
    `tileConsumerAndFuseProducersUsingSCF`) into an `scf.forall` over blocks
    of rows (the leading parallel dims; the innermost loop dim stays whole,
    so each tile's inner loop vectorises as before) and fuses into each tile
    the producers it reads only through that tile: a norm's reductions and
    the elementwise ops before them then run per block of rows, while the
    rows are in cache, and the blocks run in parallel (OpenMP).

    An op of static size is tiled when its loop sizes' product is at least
    `min-elements`; tiles hold about `tile-elements` iterations in whole
    inner rows. An op whose leading (row) loops have dynamic sizes is
    tiled when its inner rows are static and a tile holds at least half of
    `tile-elements` iterations; the number of tiles is then known only at
    run time (a loop of one tile runs without forking threads:
    attn-cpu-omp-fork-guard). Loops before the blocked one are tiled by
    one, so a run-time batch of short sequences makes one tile per
    sequence. A producer is fused when it is a linalg op other than a
    matmul, its results have no other user, and the tile reads a proper
    slice of it (a producer read whole by every tile, such as a weight cast,
    is computed once before the loop). What each tile computes is what the
    ops computed for its rows: the scalar bodies and the order of every
    reduction are unchanged.

    ```mlir
    %sq = linalg.generic ... ins(%x : tensor<512x896xf32>) -> tensor<512xf32>   // sum of squares
    %y = linalg.generic ... ins(%x, %sq, %w ...) -> tensor<512x896xf32>          // x * rsqrt(mean + eps) * w
    // becomes
    %y = scf.forall (%i) in (52) shared_outs(%o = %e) -> (tensor<512x896xf32>) {
      ... the sum of squares of rows [10 i, 10 i + 10), then their normalised rows
    }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"32768",
           "Tile ops with at least this many loop iterations">,
    Option<"tileElements", "tile-elements", "int64_t", /*default=*/"8192",
           "Loop iterations per tile (whole inner rows)">,
  ];
}

def AttnCpuSplitLargeFunctions
    : Pass<"attn-cpu-split-large-functions", "::mlir::ModuleOp"> {
  let summary = "Split a function block of many calls into noinline parts";
  let description = [{
    A whole model's entry point is one block of thousands of calls (an
    outlined kernel per product and attention, a loop per elementwise
    chain). The values every call takes (the weights' and the caches'
    descriptors) are live across all of them, and LLVM's greedy register
    allocator splits such live ranges at each call, in time quadratic in
    their number (1600 attention blocks: 12 s in one function). This pass
    moves each run of `max-calls` calls (a call, or an op with regions) of
    a function whose body is one block of more calls, with the ops between
    them, into a private `noinline` function `<name>_part<i>`: the values
    the run uses from before it are its arguments, the values used after
    it its results, and the block calls it in the run's place. Every
    function then has at most `max-calls` calls plus one call per part, so
    compile time stays linear in the model's length.

    Runs on buffers, after deallocation and before the loops are lowered.
    A block with a `memref.alloca` stays whole (a stack buffer must not
    outlive a part), as does one of several blocks.

    ```mlir
    func.func @f(%x: memref<8xf32>) -> memref<8xf32> {
      %a = call @k(%x) ...   // max-calls = 2: three calls, two parts
      %b = call @k(%a) ...
      %c = call @k(%b) ...
      return %c
    }
    // becomes
    func.func @f(%x: memref<8xf32>) -> memref<8xf32> {
      %b = call @f_part0(%x) ...
      %c = call @f_part1(%b) ...
      return %c
    }
    func.func private @f_part0(%x: ...) -> ... attributes {passthrough = ["noinline"]}
    func.func private @f_part1(%b: ...) -> ... attributes {passthrough = ["noinline"]}
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let options = [
    Option<"maxCalls", "max-calls", "int64_t", /*default=*/"32",
           "Calls (or ops with regions) per part">,
  ];
}

def AttnCpuOmpForkGuard : Pass<"attn-cpu-omp-fork-guard"> {
  let summary = "Fork OpenMP threads only for loops of more than one iteration";
  let description = [{
    convert-scf-to-openmp turns each parallel loop into an `omp.parallel`
    around an `omp.wsloop`: every call forks the thread team and joins it,
    even when the loop has one iteration. Loops whose trip count is known
    only at run time (the row blocks of a sequence or batch of dynamic size,
    the work items of a GEMM of dynamic M) often have one in the cases that
    are cheap anyway: a decode step's batch of one, a short prompt. This
    pass gives such an `omp.parallel` the condition `if(trips > 1)`, the
    product of the loop nest's trip counts computed before it; with one
    iteration OpenMP runs the region on the calling thread without forking.
    Loops with constant bounds are left alone (a constant single iteration
    was folded away before), as are regions whose body is not one
    worksharing loop, inclusive bounds and bounds computed inside the
    region.

    ```mlir
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) { ... }
      }
      omp.terminator
    }
    // becomes
    %trips = ... ceildiv(max(%n - %c0, 0), %c1)
    %several = arith.cmpi sgt, %trips, %c1
    omp.parallel if(%several) { ... }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::omp::OpenMPDialect"];
}

def AttnCpuOutlineKernels : Pass<"attn-cpu-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Emit each repeated kernel once, as a noinline private function";
  let description = [{
    A model of N identical layers holds N copies of each GEMM, attention and
    fused elementwise loop; lowered in place, LLVM would optimise, unroll and
    vectorise every copy again. This pass outlines the top-level kernel ops
    of each public function into private functions, one per distinct form,
    and calls them:

    - always: `attn.sdpa`, `attn.matmul`, `linalg.matmul`,
      `linalg.batch_matmul` on tensors (a linalg product with the reshapes,
      the rounding of its f32 result to bf16/f16 and the elementwise
      consumers that the CPU lowering applies as it stores, generics or
      elementwise attn ops whose operands have the result's shape; the
      function returns the last one's result and takes their other
      operands, and its call stands where the last one was);
    - with `linalg-ops`: every other linalg op on tensors except
      `linalg.fill`, and the `scf.forall` loops of attn-cpu-tile-and-fuse
      (the pipeline runs this after the elementwise fusion and the tiling).

    Two ops share a function when their outlined functions print the same
    (generic form, no locations): same op, attributes, region bodies,
    operand and result types, and the same operands repeated in the same
    places. The function takes the op's operands and the values its regions
    use from above; `tensor.empty`, `linalg.fill` and constants that are
    scalars or splats feeding the op are cloned into it, since the lowering
    matches on them (a GEMM onto a fill starts its accumulators at the fill
    value). Only forms used at least `min-uses` times are outlined: a kernel
    used once stays where it is. So does a kernel that reads a slice of
    dynamic size (`tensor.extract_slice`): bufferization cannot prove such
    a view dense, so the call would take a copy of it (see
    attn-cpu-dense-call-arguments), where the op in place reads the view
    (the attention over a KV cache's filled prefix).

    An attention kernel takes a transpose that keeps the last dim and has
    the attention as its one user (a [B, T, H, D] projection viewed as
    [B, H, T, D]) into the kernel, whose lowering reads the transpose's
    input through a permuted view; arguments that it reads only as q, k or
    v get `bufferization.buffer_layout = strided<[?, ..., ?, 1], offset:
    ?>`, so that the caller passes a view (a head's slice of a fused QKV
    projection) as it is instead of a dense copy.

    The functions are private, `llvm.linkage` internal, marked `attn.kernel`
    and `passthrough = ["noinline"]` so that LLVM keeps one copy instead of
    inlining and specialising it at each call.

    ```mlir
    %0 = linalg.matmul ins(%x, %w0 : tensor<16x64xf32>, tensor<64x64xf32>)
        outs(%zero : tensor<16x64xf32>) -> tensor<16x64xf32>
    %1 = linalg.matmul ins(%0, %w1 : tensor<16x64xf32>, tensor<64x64xf32>)
        outs(%zero : tensor<16x64xf32>) -> tensor<16x64xf32>
    // becomes
    %0 = call @attn_kernel_linalg_matmul(%x, %w0) : (...) -> tensor<16x64xf32>
    %1 = call @attn_kernel_linalg_matmul(%0, %w1) : (...) -> tensor<16x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"linalgOps", "linalg-ops", "bool", /*default=*/"false",
           "Also outline linalg ops other than matmuls and fills">,
    Option<"minUses", "min-uses", "int64_t", /*default=*/"2",
           "Outline a form only when it occurs at least this many times">
  ];
}

def AttnCpuPrepackWeights : Pass<"attn-cpu-prepack-weights", "::mlir::ModuleOp"> {
  let summary = "Take GEMM weights packed once, with an entry point that packs them";
  let description = [{
    An argument of a public function marked `attn.weight` (the Python
    exporter marks parameters) that is used only as the right operand of
    the CPU GEMM (2-D `linalg.matmul` on tensors with an f32 result),
    directly (`[K, N]`, GPT-2's Conv1D) or through one 2-D
    `linalg.transpose` (nn.Linear's `[N, K]` weight), becomes the
    `[NB, KB, kc, nc]` f32 panels that the GEMM would otherwise pack on
    every call (`attn.pack_weight` describes the layout; kc and nc are the
    GEMM's blocks for `vector-bits`). The GEMMs read the panels through
    `attn.unpack_weight`. A new public function `@<f>_pack_<i>` packs the
    raw weight of argument `i`; the argument gets the attribute
    `attn.packed = {entry = "<f>_pack_<i>", transposed}` so that callers
    (attn-compile's manifest) know which arguments take packed panels.

    With `bf16-pairs` (a target whose bf16 GEMMs multiply pairs with
    AVX512-BF16's `vdpbf16ps`: attn-compile sets it from the target), a
    bf16 weight that GEMMs multiply by bf16 left operands becomes the
    `[NB, KB, kc / 2, 2 * nc]` bf16 pairs of that path. With `amx-tiles`
    too (a target with AMX tiles, whose vdpbf16ps path is the fallback
    where the process may not use them), kc and nc are rounded up to 32 so
    that the AMX path reads the same panels as whole tiles (grouped: see
    `attn.pack_weight`). Weights that
    are not static f32 (or such bf16) matrices, that have any other use (an
    embedding tied to the output projection) or that GEMMs read both as
    stored and transposed are left alone with a remark.

    ```mlir
    func.func @f(%x: tensor<128x768xf32>,
                 %w: tensor<3072x768xf32> {attn.weight}) -> tensor<128x3072xf32>
    // becomes
    func.func @f(%x: tensor<128x768xf32>,
                 %w: tensor<48x3x256x64xf32> {attn.packed = {...}, attn.weight})
    func.func @f_pack_1(%w: tensor<3072x768xf32>) -> tensor<48x3x256x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t",
           /*default=*/"::mlir::attn::kDefaultVectorBits",
           "The target's vector width (128, 256 or 512), which sets the "
           "panels' layout: it must be the CPU lowering's">,
    Option<"bf16Pairs", "bf16-pairs", "bool", /*default=*/"false",
           "Also pack bf16 weights, in pairs of k for vdpbf16ps: only for "
           "a target whose CPU lowering has bf16-dot">,
    Option<"amxTiles", "amx-tiles", "bool", /*default=*/"false",
           "With bf16-pairs: round the bf16 panels' blocks up to whole AMX "
           "tiles (32 k, 32 columns), for a target whose CPU lowering has "
           "amx">
  ];
}

def AttnCpuLowerStridedCopies : Pass<"attn-cpu-lower-strided-copies"> {
  let summary = "Copy buffers of contiguous rows, not dense as a whole, in "
                "vector loops";
  let description = [{
    A `memref.copy` whose source and target have contiguous rows (last
    stride 1) but are not both dense (a KV cache's rows, the dense copy of
    a view that attn-cpu-dense-call-arguments makes, a slice of a wider
    buffer) becomes loops over the rows, each row moved in whole vectors
    of `vector-bits` and one masked vector for its last elements.
    memref-to-llvm lowers such a copy to the MLIR runtime's `memrefCopy`,
    one element per step of a generic index walk. Copies of dense buffers
    (one memcpy there), of rows with another stride, and of elements that
    are not whole bytes (i1) are left as they are.

    ```mlir
    memref.copy %a, %b : memref<?x4x?x64xf32> to
        memref<?x4x?x64xf32, strided<[43776, 10944, 64, 1]>>
    // becomes, for each %i, %j, %k over the first three dims:
    %v = vector.load %a[%i, %j, %k, %c0] : memref<?x4x?x64xf32>, vector<8xf32>
    vector.store %v, %b[%i, %j, %k, %c0] : ...
    // ... then a vector.maskedload / vector.maskedstore of the last
    // (64 mod 8) elements when there are any
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t",
           /*default=*/"::mlir::attn::kDefaultVectorBits",
           "The width of the vectors a row moves in">
  ];
}

def AttnCpuDenseCallArguments : Pass<"attn-cpu-dense-call-arguments", "::mlir::ModuleOp"> {
  let summary = "Copy strided views passed as dense call arguments";
  let description = [{
    Runs after one-shot bufferization with identity-layout function
    boundaries. A call argument whose buffer is a view (a subview of a KV
    cache, a slice computed in its destination) reaches an identity-layout
    parameter through a `memref.cast`. With static sizes bufferization
    copies a view that cannot be dense; with a dynamic size it casts
    (llvm/llvm-project#83276), and the callee then reads and writes the
    view as a dense row-major array: wrong elements. This pass replaces each
    such cast by a copy into a fresh dense buffer and, when the callee may
    write the parameter, copies the buffer back into the view after the
    call.

    ```mlir
    %c = memref.cast %view : memref<?x2x?x8xf32, strided<[528, 264, 8, 1]>>
        to memref<?x2x?x8xf32>
    %r = call @kernel(%c) : (memref<?x2x?x8xf32>) -> memref<?x2x?x8xf32>
    // becomes
    %a = memref.alloc(%d0, %d2) : memref<?x2x?x8xf32>
    memref.copy %view, %a : ... to memref<?x2x?x8xf32>
    %r = call @kernel(%a) : (memref<?x2x?x8xf32>) -> memref<?x2x?x8xf32>
    memref.copy %a, %view : memref<?x2x?x8xf32> to ...  // kernel writes it
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnMarkInPlaceResults : Pass<"attn-mark-inplace-results", "::mlir::ModuleOp"> {
  let summary = "Check and mark the results that write arguments in place";
  let description = [{
    A public function writes a tensor argument in place when the argument
    is marked `bufferization.writable = true` and the function returns its
    new value as `bufferization.materialize_in_destination %new in %argN`
    (a state result; include/attn/Transforms/Cpu/InPlaceArguments.h).
    This pass checks that contract on every public function with a body
    (each writable argument has exactly one state result, each state result
    writes a writable argument, every return agrees, and no call inside the
    module uses such a function) and marks each state result with
    `attn.inplace_argument = N`, the argument it writes, for
    `attn-drop-inplace-results` after bufferization. A violation is a
    located error.

    ```mlir
    func.func @step(%cache: tensor<4x8xf32> {bufferization.writable = true},
                    %row: tensor<1x8xf32>, %pos: index) -> tensor<4x8xf32> {
      %0 = tensor.insert_slice %row into %cache[%pos, 0] [1, 8] [1, 1]
          : tensor<1x8xf32> into tensor<4x8xf32>
      %1 = bufferization.materialize_in_destination %0 in %cache
          : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      return %1 : tensor<4x8xf32>
    }
    ```
  }];
}

def AttnDropInPlaceResults : Pass<"attn-drop-inplace-results", "::mlir::ModuleOp"> {
  let summary = "Remove the state results of bufferized functions";
  let description = [{
    Runs after one-shot bufferization with function boundaries: a result
    marked `attn.inplace_argument = N` by `attn-mark-inplace-results` is
    argument N's buffer, written in place, so the function stops returning
    it (the C entry point then has only the other results, and no copy of
    the argument is made to return it). A marked result that is not
    argument N's buffer (through `memref.cast`s) is a located error.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnCpuDeallocAfterLastUse
    : Pass<"attn-cpu-dealloc-after-last-use", "::mlir::ModuleOp"> {
  let summary = "Free each buffer right after its last use instead of at "
                "the end of its block";
  let description = [{
    Runs after upstream's `ownership-based-buffer-deallocation` and before
    `buffer-deallocation-simplification` and `lower-deallocations` (the
    simplification's alias queries between the memrefs of one dealloc take
    time quadratic in their number: it sees only what this pass leaves). The
    ownership-based deallocation frees all the buffers a block owns in one
    `bufferization.dealloc` before the block's terminator, so a whole
    model's entry point keeps every layer's activations until it returns.
    This pass gives each memref of such a dealloc a dealloc of its own
    right after the last op of the block that uses the buffer or any alias
    of it, and leaves the rest (and every retained value) in the original
    dealloc:

    ```mlir
    %a = call @kernel(%x) : (memref<32xf32>) -> memref<32xf32>
    %b = call @kernel(%a) : (memref<32xf32>) -> memref<32xf32>
    %c = call @kernel(%b) : (memref<32xf32>) -> memref<32xf32>
    %base_a, ... = memref.extract_strided_metadata %a ...
    %base_b, ... = memref.extract_strided_metadata %b ...
    bufferization.dealloc (%base_a, %base_b : ...) if (%true, %true) retain (%c : ...)
    return %c
    // becomes
    %a = call @kernel(%x)
    %b = call @kernel(%a)
    bufferization.dealloc (base of %a) if (%true)
    %c = call @kernel(%b)
    bufferization.dealloc (base of %b) if (%true)
    return %c
    ```

    The aliases of a buffer are the values reachable from its allocation
    through views and through the memref results of any op that takes an
    alias, except calls to functions of the module: under the deallocation's
    function boundary ABI a callee returns buffers its caller owns, never
    one of its arguments. A memref stays in the block-end dealloc when its
    allocation is not a `memref.alloc` or the result of a call to a function
    with a body, when an alias is used outside the block or leaves it
    through a terminator, or when another operand of the dealloc may alias
    it (the dealloc's run-time alias checks decide then).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnCpuMathApproximation : Pass<"attn-cpu-math-approximation"> {
  let summary = "Replace transcendental math ops by MLIR's polynomial "
                "approximations, which vectorise";
  let description = [{
    A libm call per element (`tanhf`, `erff`, `expf`, ...) stops LLVM from
    vectorising the loop around it: a score_mod region, an elementwise loop
    or a norm then runs one element at a time. This pass rewrites the math
    ops whose upstream polynomial approximation
    (`populateMathPolynomialApproximationPatterns`) was measured accurate to
    PyTorch's f32 tolerances on a dense sweep of f32 inputs (docs/cpu-math.md
    has the numbers): by default `math.exp`, `math.expm1`, `math.tanh`,
    `math.erf`, `math.log1p`. The result is arith and
    math ops that LLVM lowers to vector instructions (fma, floor, bit
    operations), on scalars and on vectors alike.

    f16 and bf16 operands are extended to f32, approximated and rounded back
    once (what libm's promotion did). f64 and the other math ops (`sin`,
    `cos`, whose range reduction loses accuracy on large arguments; `log`,
    `log2`, wrong on denormal inputs; `rsqrt`, which needs AVX2 intrinsics)
    are left to the LLVM intrinsics and libm.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "math ops to approximate, e.g. `ops=math.exp,math.tanh` "
               "(default: the accurate set above)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnCpuExpandNarrowFloats : Pass<"attn-cpu-expand-narrow-floats"> {
  let summary = "Expand f16/bf16 conversions that LLVM would lower to libcalls";
  let description = [{
    LLVM's x86 backend lowers a float conversion it has no instruction for
    to a compiler-rt call (`__truncdfbf2`, `__truncdfhf2`, `__truncsfbf2`
    without AVX512-BF16, and without F16C `__extendhfsf2`/`__truncsfhf2`),
    which neither a library from attn-compile nor the JIT can resolve on
    every host. This pass rewrites those conversions, on scalars and
    vectors, into integer and f32 code (the pipeline runs it after
    `math-extend-to-supported-types` and `arith-emulate-unsupported-floats`
    have moved f16/bf16 arithmetic to f32):

    - `arith.truncf` f64 -> f16/bf16: rounded to odd into f32, then rounded
      to nearest even into the result type, which is the correctly rounded
      result (f32 has more than p + 2 bits for either type).
    - `arith.extf` f16/bf16 -> f64: through f32 (exact).
    - `arith.extf` bf16 -> f32: upstream's integer code
      (`arith::populateExpandBFloat16Patterns`, what
      `arith-expand{include-bf16}` runs).
    - `arith.truncf` f32 -> bf16: upstream's rounding (to nearest even,
      subnormals exact, every NaN the quiet NaN 0x7fc0), except that a NaN
      input is replaced by 0x7fc00000 before the rounding rather than its
      result chosen after it: LLVM turns upstream's final select into a
      select on `bfloat`, which it legalises without native bf16 through
      `__truncsfbf2`.
    - with `native-bf16` (a target with AVX512-BF16), `arith.truncf` f32 ->
      bf16 of the default rounding stays: LLVM lowers it to one
      `vcvtneps2bf16` per vector, which rounds to nearest even as the
      integer code does except that f32 subnormal inputs (|x| < 2^-126)
      become a zero of their sign, not a bf16 subnormal (an absolute
      difference below 2^-126; oneDNN's bf16 kernels, which PyTorch's bf16
      `nn.Linear` calls on such CPUs, round the same way).
    - with `expand-f16` (a target without F16C): `arith.extf` f16 -> f32
      and `arith.truncf` f32 -> f16 (round to nearest even; NaN stays NaN,
      quiet) in integer code.

    Truncations with an explicit rounding mode are left alone. The `fastmath` flags of
    `arith.extf`/`arith.truncf` are dropped (they mean nothing for a
    conversion, and convert-arith-to-llvm would copy them onto LLVM ops as
    an arith attribute).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let options = [
    Option<"expandF16", "expand-f16", "bool", /*default=*/"false",
           "Also expand f16 <-> f32 conversions (targets without F16C)">,
    Option<"nativeBf16", "native-bf16", "bool", /*default=*/"false",
           "Keep f32 -> bf16 truncations for the target's vcvtneps2bf16 "
           "(AVX512-BF16; subnormals become zero)">
  ];
}

def AttnCheckAllocations : Pass<"attn-check-allocations"> {
  let summary = "Check the size and the result of every memref.alloc at run time";
  let description = [{
    LLVM's lowering of `memref.alloc` multiplies the sizes without an
    overflow check and never looks at what `malloc` returned: a buffer of
    more than 2^63 bytes wraps to a small one that the code then overruns,
    and a failed allocation is written through a null pointer. Before each
    `memref.alloc` with dynamic sizes this pass computes the byte size with
    overflow checks (`cf.assert` that it stays below 2^63 - 4096, room for
    the alignment padding the lowering adds), and after every
    `memref.alloc` it asserts that the aligned pointer is not null unless
    the buffer is empty. The messages name the buffer's type and the
    source location of the op the buffer belongs to. With
    `attn-check-failure-calls` a failed check reaches the runtime's
    check-failure handler. A static shape of 2^63 bytes or more is a
    compile-time error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttnCpuRejectOpenMPInput : Pass<"attn-cpu-reject-openmp-input", "::mlir::ModuleOp"> {
  let summary = "Reject input that already holds OpenMP ops";
  let description = [{
    The CPU pipeline makes its parallel loops itself (scf.forall to OpenMP,
    after bufferization and deallocation). Upstream's ownership-based buffer
    deallocation cannot place its code inside an `omp.wsloop` (a loop
    wrapper holds exactly one loop nest) and would leave invalid IR, so the
    pipeline's first step fails on the first OpenMP op of its input with an
    error located there. Input without OpenMP ops is left as it is.
  }];
}

def AttnCpuRejectRecursion : Pass<"attn-cpu-reject-recursion", "::mlir::ModuleOp"> {
  let summary = "Reject functions that call themselves, directly or not";
  let description = [{
    Compiled code runs on the caller's stack with no bound on its depth, so a
    recursive function would run until the stack or the memory is gone.
    This pass follows every use of a function symbol inside a function (a
    `func.call`, a `func.constant` for `func.call_indirect`, any other
    symbol reference) and fails with an error located at the use that closes
    a cycle, naming the cycle. Modules without recursion are left as they
    are.
  }];
}

def AttnCheckFailureCalls : Pass<"attn-check-failure-calls", "::mlir::ModuleOp"> {
  let summary = "Lower cf.assert to calls of attnrt_check_failed(message)";
  let description = [{
    LLVM's lowering of `cf.assert` prints the message with `puts` and aborts:
    the process dies with a stack dump and a program calling compiled code
    cannot recover. This pass rewrites every `cf.assert` into a branch to a
    call of the runtime's `attnrt_check_failed(ptr message)` (which calls a
    handler the program can set, `attnrt_set_check_failure_handler`; the
    default prints `error: run-time check failed: <message>` and exits with
    status 70), one private constant global per distinct message. It runs on
    cf with LLVM-typed operands, just before cf is lowered to LLVM (the
    pipeline's `check-failure-calls` option; the tools always use it).

    A `cf.assert` inside an `omp.loop_nest` of an `omp.parallel` region does
    not jump out of the region (a worker thread has no caller to return to;
    a master thread that left would leave its team at the barrier): its
    failure calls `attnrt_check_failed_deferred(ptr slot, ptr message)`,
    which records the first message in a slot of the function, and the
    iteration ends there (`omp.yield`; the rest of its body does not run).
    Right after the outermost `omp.parallel`, where the slot holds a
    message, the calling thread calls `attnrt_check_failed` with it. A
    failed check therefore reaches the caller the same way on every thread.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::omp::OpenMPDialect"
  ];
}

#endif // ATTN_TRANSFORMS_CPU_PASSES_TD
