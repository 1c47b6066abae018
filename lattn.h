/* lattn.h — linear-attention sequence mixers in one C99 header.          v0.1.0
   MIT licence (full text at the end of this file).

   =====================================================================================================
   WHAT IT IS
   =====================================================================================================
   lattn implements the linear-attention family of sequence mixers and the baselines they are judged
   against, each in its simplest readable form next to its fast forms:

     causal convolutions (ShortConv, the dilated TCN stack)        >>conv   >>tcn
     the diagonal scan h_t = a_t h_{t-1} + b_t                     >>scan
     diagonal SSMs: selective (Mamba-1) and S4D (FFT convolution)  >>ssm    >>s4d
     linear attention (Katharopoulos et al. 2020) and its gated
       members GLA, Simple GLA, retention                          >>linattn
     the Laplace layer and model (Simple GLA language model)       >>laplace
     the delta rule, Gated DeltaNet, the general core GDR+I        >>delta
     the Gated DeltaNet layer                                      >>gdnlayer
     PRISM: the paper's model (P0), the official LM block (P1),
       and the per-token LM form (P2)                              >>prism
     softmax attention: flash-tiled on the tiler, KV-cache decoding  >>attn
     the pre-norm transformer (RMSNorm, RoPE, GQA, SwiGLU)         >>transformer
     the SPS transformer (State-Prediction Separation, 5 variants) >>sps
     TTT-Linear and TTT-MLP: per-token, mini-batch primal and dual
       forms, and the TTT layer                                    >>ttt

   The conformance kit (>>safetensors, >>conformance) reads and writes golden cases so that other
   backends (CUDA, Triton, NKI) can check themselves against lattn's double-precision _ref forms.

   Under the mixers sit the substrate they share: a compile-time SIMD layer (AVX-512, AVX2+FMA, NEON,
   scalar), an SGEMM micro-kernel family, a documented PRNG, and a simulated 128-partition SBUF/PSUM
   tiler on which every chunked kernel is written once: with the `cpu` profile the tiles are the
   cache blocking, with `trn2` and chunk 128 the same code is the Trainium tiling path, with `h100`
   and chunk 64 it is the GPU path.

   Not covered: training beyond the double backward of ShortConv, the scan, the selective SSM and
   the linear-attention family (lattn_*_ref_backward; the other backward passes are to come), GPU
   execution, half precision.

   =====================================================================================================
   USE
   =====================================================================================================
   In exactly one C or C++ file, define LATTN_IMPLEMENTATION before including the header:

       one.c:    #define LATTN_IMPLEMENTATION
       one.c:    #include "lattn.h"

   Everywhere else include it without the define. Link with -lm; add -fopenmp for threads.

   Example (linear attention over 300 random tokens, chunked form, checksum):

       lattn_ctx ctx; lattn_ctx_init(&ctx);
       enum { T = 300, H = 4, K = 64, V = 64 };
       static float q[T*H*K], k[T*H*K], v[T*H*V], o[T*H*V];
       lattn_rng r = lattn_rng_seed(1);
       lattn_rng_fill_normal(&r, q, T*H*K, 0, 1);
       lattn_rng_fill_normal(&r, k, T*H*K, 0, 1);
       lattn_rng_fill_normal(&r, v, T*H*V, 0, 1);
       lattn_la_args a = {0};                            (zero is the default of every field)
       a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.o = o;
       if (lattn_la_chunk(&ctx, &a) != LATTN_OK) puts(lattn_ctx_error(&ctx));
       double s = 0; for (int i = 0; i < T*H*V; i++) s += o[i];
       printf("checksum %.6f\n", s);

   =====================================================================================================
   VERBS  (>>verbs)  every family and every form, by name; LATTN_MIXER_FORMS and LATTN_MODEL_FORMS
   below are this table as code, and a test takes the address of every entry
   =====================================================================================================
   A mixer is called as lattn_<family>_<form>(lattn_ctx *ctx, const lattn_<family>_args *a). The
   forms are the same four everywhere, numbered by lattn_form:
     _ref       double, token by token: the teaching form; the golden outputs; the *64 fields
     _parallel  quadratic, every token at once (where the algorithm has one)
     _chunk     the fast float32 sequence form: tokens in chunks (time blocks), matrix products inside
                a chunk, the state carried between chunks; on the tiler where the family has a kernel
     _step      float32, token by token on a caller-held state h0 -> ht (ht may equal h0): T = 1 is
                one decoding step; a whole call runs the decoder's loop
   A genuinely different way to evaluate the fast form is a method of _chunk (S4D), never a verb.
   A backward form takes its forward form's name with _backward and a lattn_<family>_grads struct
   (the upstream gradients in, always dout for the main output and dht for the final state; the
   gradient of every input out, d + its name): so far shortconv, scan, ssm, s4d, la and tcn, each
   with the double _ref_backward and the float32 _chunk_backward, and the _ref_backward of gdr and
   attn (LATTN_MIXER_BACKWARD); models: lattn_tcn_demo_backward_ref and lattn_tcn_demo_backward.

     family      args struct            _ref  _parallel  _chunk                        _step
     shortconv   lattn_shortconv_args    x               x  channels x time blocks      x
     scan        lattn_scan_args         x               x  blocks of 4096, carries     x
     ssm         lattn_ssm_args          x               x  fused, tiles of 128         x
     s4d         lattn_s4d_args          x               x  method SCAN, FFT or CONV    x
     tcn         lattn_tcn_args          x               x  one GEMM per tap            x
     la          lattn_la_args           x     x         x  tiler                       x
     gdr         lattn_gdr_args          x               x  tiler, WY transform         x
     ttt         lattn_ttt_args          x               x  dual form                   x  primal form
     attn        lattn_attn_args         x               x  tiler, flash schedule       x  (KV cache)

   A model (or block) is called as lattn_<model>_<verb>(ctx, model, B, T, inputs, outputs, state):
     forward_ref  double, token by token (and a float64 copy of the output, *64)
     forward      float32: threaded GEMMs around the mixers' _chunk
     step         one token of B sequences on their states (GEMVs around the mixers' _step)
   and its weights live in one arena of named tensors, with one grammar:
     init (configuration, seed)   init_st (a parsed safetensors file, a name prefix)   init_file (path)
     serialize (to memory)   save (to a path)   tensor (one by name)   free

     model       struct               forward_ref  forward  step   weights   state
     laplace     lattn_laplace_model       x          x       x       x       lattn_laplace_state_floats
     gdn         lattn_gdn_layer           x          x       x       x       lattn_gdn_state_floats
     prism_p0    lattn_prism_p0            x          x       x       x       lattn_prism_p0_state_floats
     prism_p1    lattn_prism_p1            x                          x       (chunk-level: no per-token form)
     prism_p2    the P1 block              x          x       x      (P1's)   lattn_prism_p2_state_floats
     ttt_layer   lattn_ttt_layer           x          x       x       x       lattn_ttt_state_floats
     tf          lattn_tf_model            x          x       x       x       a KV cache (lattn_tf_cache)
     sps         the tf model              x          x       x      (tf's)   lattn_sps_cache (+ prefill)
     tcn_demo    lattn_tcn_demo            x          x               x       (reads the last token)

   =====================================================================================================
   TABLE OF CONTENTS  (grep the tag, e.g.  grep -n '>>tiler' lattn.h)
   =====================================================================================================
     >>verbs       the verb table: every family x every form
     >>conventions where lattn's defaults differ from fla's and the official code, and the conversion
     >>config      configuration macros, version, LATTN_API
     >>status      status codes and messages
     >>ctx         context: allocator, threads, device profile, counters, last error
     >>rng         the documented PRNG (splitmix64, uniform, Box-Muller normal)
     >>vec         vector kernels (dot, axpy, scale, sum, max, exp, log, sigmoid, softplus, SiLU)
     >>gemm        SGEMM micro-kernel family (A·B, A·Bᵀ, Aᵀ·B; accumulate; lower-triangular output)
     >>tiler       device profiles and the simulated SBUF/PSUM tiler
     >>conv        depthwise short convolution (ShortConv)
     >>scan        the diagonal linear recurrence h_t = a_t h_{t-1} + b_t: SIMD, two-level threads
     >>ssm         selective diagonal SSM (Mamba-1), fused: _ref, _chunk, _step
     >>s4d         S4D: time-invariant diagonal SSM as recurrence, FFT convolution, direct conv
     >>tcn         dilated causal convolution stack (TCN) and the article's demo model
     >>linattn     linear attention, GLA, Simple GLA: _ref, _parallel, _chunk (on the tiler), _step
     >>delta       the delta rule core GDR+I (DeltaNet, Gated DeltaNet, PRISM's injections): _ref,
                   _chunk (the WY transform on the tiler), _step
     >>safetensors hardened safetensors reader and writer (golden cases, weights)
     >>laplace     the Laplace layer and model: weights arena, forward_ref, forward, step
     >>gdnlayer    the Gated DeltaNet layer: projections, ShortConv, gates, output gate
     >>prism       PRISM P1, the official LM block (chunk-size dependent), matching the official code
     >>ttt         TTT-Linear / TTT-MLP: _ref, _chunk (dual form), _step (primal form); the TTT layer
     >>attn        softmax attention: masks (causal, window, full, any function), GQA, _ref, _chunk
                   (the flash-attention schedule on the tiler), _step (KV cache)
     >>transformer the pre-norm transformer: config (the SPS paper's scales), weights, forward_ref,
                   forward (logits, loss, prefill), step with a KV cache
     >>sps         the SPS transformer: visibility rule and block classifier of the five variants,
                   forward_ref, forward (blocked stream layout), prefill, step (list + window ring)
     >>optim       optimizers: AdamW exactly as PyTorch's single-tensor path; Muon (NS5); sharded
                   Muon over a caller's collectives; schedules, clipping, the arena optimizer
     >>conformance golden-case runner and comparison (the checker's engine)
     >>impl        ---- implementation (only with LATTN_IMPLEMENTATION) ----
     >>simd        the SIMD back ends
     >>history     revision history
     >>license     licence text

   =====================================================================================================
   CONFIGURATION MACROS (define before including)
   =====================================================================================================
     LATTN_IMPLEMENTATION   emit the implementation in this translation unit
     LATTN_STATIC           make every public function static (several copies may coexist)
     LATTN_API              override the decoration of public functions (default: extern)
     LATTN_MALLOC(n)        default allocator (libc malloc); define LATTN_FREE(p) with it
     LATTN_ASSERT(x)        internal invariants only (default: assert); never validates input
     LATTN_NO_SIMD          force the scalar back end
     LATTN_NO_AVX512        veto AVX-512 (AVX2+FMA is used when available)
     LATTN_NO_AVX2          veto AVX2
     LATTN_NO_FMA           no fused multiply-add in the fast forms (_ref never depends on it)
     LATTN_NO_OPENMP        ignore OpenMP even when compiled with -fopenmp
     LATTN_NO_STDIO         drop the file-path functions (memory readers and writers stay)
     LATTN_NO_MODELS        drop the models and blocks (>>laplace, >>gdnlayer, >>prism, the TTT layer,
                            >>transformer, >>sps, the TCN demo model) and their golden-case runners:
                            the mixers and the substrate remain
     LATTN_NO_CONFORMANCE   drop the golden-case runner and comparison (>>conformance)
     LATTN_ST_MAX_HEADER    cap on a safetensors header, bytes (default 100 MiB)
     LATTN_MAX_THREADS      most threads one call starts (default 256; ctx.n_threads is clamped)

   =====================================================================================================
   CONTRACTS
   =====================================================================================================
   Layout.     Row-major, token-major. Activations [B][T][H][D]; per-head scalars [B][T][H];
               recurrent state per head K x V ([B][H][K][V]), read as o = s·Sᵀq. Log gates are
               natural-log decays (<= 0). Variable-length batches: B == 1 and offsets[0..N] (offsets[0]
               = 0, non-decreasing, offsets[N] = T); sequence n covers tokens [offsets[n], offsets[n+1])
               and has its own initial and final state.
   Precision.  Public tensors are float32. _ref computes in double. Fast forms compute in float32 and
               match _ref to a relative RMS error ||out - ref||2 / ||ref||2 <= 1e-5 on the standard
               cases, for any thread count, chunk size, with or without SIMD.
   Threads.    OpenMP when compiled with it (ctx.n_threads, <= 0 = OpenMP default), clamped to
               min(LATTN_MAX_THREADS = 256, omp_get_thread_limit()) and, in the chunked kernels, to
               the call's work items: no count (10^5, INT_MAX) can exhaust threads. Work is split over
               batch x head (or channels / time blocks fixed by the shape); the chunked kernels split
               further, into value blocks (linear attention, GLA, the delta rule) and query groups
               (attention), until every thread has an item, since an output element's arithmetic does
               not depend on its block. Every fast form gives bit-identical results for every thread
               count. Items are handed out dynamically, the longest first (a core that the system
               takes away does not hold the others back); an item's arithmetic does not depend on the
               thread that runs it.
   Numerics.   NaN/Inf in one sequence, batch element or head never reach another. _ref and _step are
               strictly causal even for NaN; a chunked form may spread a NaN/Inf of token t to other
               tokens of the same chunk (masked matrix products multiply 0·NaN) — the one exception.
               No function changes the floating-point environment. -ffast-math is unsupported (it
               deletes NaN checks). Golden outputs are generated with -ffp-contract=off.
   Errors.     Every public function that can fail returns lattn_status. Bad shapes, null pointers,
               overflowing sizes: a negative status, a message naming the argument in the context
               (lattn_ctx_error), nothing written to outputs, nothing leaked. The library never
               aborts the process and never prints.
   Memory.     The caller owns every tensor. Workspace comes from the context's allocator and is
               released before the call returns, unless ctx.keep_workspace = 1: then the chunked
               kernels keep their tilers and tiles in the context, reuse them in later calls of the
               same or a smaller shape, and lattn_ctx_trim / lattn_ctx_free release them. Outputs
               never alias inputs unless a function says so.

   =====================================================================================================
   CONVENTIONS AGAINST THE PUBLIC CODE  (>>conventions)
   =====================================================================================================
   Where lattn's default differs from the code a user compares with, and the conversion:
     fla chunk_linear_attn, fused_chunk_linear_attn: normalize=True by default, denominator eps 1e-10;
         lattn: normalize = 0 by default -> set a.normalize = 1, a.eps = 1e-10 (fla's
         fused_recurrent and naive forms default to normalize=False, as lattn)
     fla feature maps with weights (hedgehog, hadamard): tie_feature_map_qk=False by default (q and k
         maps separate); lattn: tied unless a.fmap_wk, a.fmap_bk are set
     fla retention / chunk_retention: γ_h = 1 - 2^(-5-h) computed in the inputs' precision (float64
         for a float64 reference); lattn's g_gamma is a float32 ln γ_h -> set a.retnet_decay = 1
     fla GatedDeltaNet layer's cache: state_v_first ([H][V][K]); lattn: [H][K][V] everywhere ->
         transpose the last two axes (lattn-check reports a transposed reading that passes)
     fla use_qk_l2norm_in_kernel=True: lattn_gdr_args.l2norm = 1 (eps 1e-6 inside the sqrt)
     flash-attn window_size = (w, 0): lattn LATTN_MASK_WINDOW with window = w (w + 1 keys, inclusive)
     fla ops layout head_first=False [B][T][H][D]: lattn's layout; head_first=True: transpose T and H
     official SPS (lil-lab/sps): left pads only, each pad its own document: lattn follows it
     official TTT (ttt-lm-pytorch): a last short mini-batch read with tok_0..tok_{r-1}, no padding;
         lattn follows it (fla's TTT pads the last mini-batch)
     official PRISM block: its output depends on the chunk size (C = min(128, T)); lattn's P1
         reproduces that, P2 is the chunk-invariant per-token form
   The golden cases record every such choice in their metadata (normalize, eps, fmap and the
   in.fmap_wk tensors, retnet_decay, chunk, window).

   =====================================================================================================
   GLOSSARY
   =====================================================================================================
     state      the K x V matrix a linear-attention head carries from token to token
     chunk      C consecutive tokens processed together with matrix products (the "chunked form")
     gate       a per-token decay in (0, 1]; stored as its natural log (the log gate, <= 0)
     partition  one of the 128 lanes of a Trainium SBUF; a tile's first axis is the partition axis
     tile       a 2-D block [P partitions][F free elements] living in SBUF or PSUM
     PSUM       the accumulator memory TensorE writes matmul results to (8 banks x 2 KiB/partition)
     scan       evaluation of h_t = a_t h_{t-1} + b_t with an associative operator
     rel. RMS   ||x - y||2 / ||y||2, the one error metric of the library
*/
#ifndef LATTN_H_INCLUDED
#define LATTN_H_INCLUDED

/* ================================================================================================ */
/* >>config                                                                                         */
/* ================================================================================================ */
#define LATTN_VERSION_MAJOR 0
#define LATTN_VERSION_MINOR 1
#define LATTN_VERSION_PATCH 0
#define LATTN_VERSION_STRING "0.1.0"

#include <stddef.h>
#include <stdint.h>

#ifndef LATTN_API
#  if defined(LATTN_STATIC) && (defined(__GNUC__) || defined(__clang__))
#    define LATTN_API static __attribute__((unused))   /* a program may use only part of the API */
#  elif defined(LATTN_STATIC)
#    define LATTN_API static
#  else
#    define LATTN_API extern
#  endif
#endif

/* The most threads one call starts; ctx.n_threads above it is clamped (>>ctx). */
#ifndef LATTN_MAX_THREADS
#  define LATTN_MAX_THREADS 256
#endif
/* The largest chunk (tile rows) a chunked form takes: 1024 tokens, a scores tile of 4 MiB. */
#define LATTN_MAX_CHUNK 1024

/* Log gates are clamped to [LATTN_LOG_GATE_MIN, 0] in every form: -inf is a hard reset. */
#define LATTN_LOG_GATE_MIN (-64.0f)

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================================================ */
/* >>status                                                                                         */
/* ================================================================================================ */
/* One X-macro list gives the enum and the messages, so they cannot drift apart. */
#define LATTN_STATUS_LIST(X)                                                                        \
    X(LATTN_OK,                0, "ok")                                                             \
    X(LATTN_E_NULL,           -1, "a required pointer is NULL")                                     \
    X(LATTN_E_SHAPE,          -2, "a size is zero, negative or inconsistent")                       \
    X(LATTN_E_OVERFLOW,       -3, "a size computation overflows")                                   \
    X(LATTN_E_NOMEM,          -4, "the allocator returned NULL")                                    \
    X(LATTN_E_DOMAIN,         -5, "an argument is outside its domain")                              \
    X(LATTN_E_TILE_KMAX,      -6, "tiler: contraction exceeds the partitions of the profile")       \
    X(LATTN_E_TILE_MMAX,      -7, "tiler: stationary free size exceeds the profile's limit")        \
    X(LATTN_E_TILE_NMAX,      -8, "tiler: moving free size exceeds the profile's limit")            \
    X(LATTN_E_TILE_SHAPE,     -9, "tiler: operand shapes do not match")                             \
    X(LATTN_E_TILE_PARTITION, -10, "tiler: illegal partition count or start partition")            \
    X(LATTN_E_TILE_SPACE,     -11, "tiler: operand in the wrong memory")                            \
    X(LATTN_E_SBUF_FULL,      -12, "tiler: SBUF capacity exceeded")                                 \
    X(LATTN_E_PSUM_FULL,      -13, "tiler: no free PSUM bank")                                      \
    X(LATTN_E_BANK_OVERFLOW,  -14, "tiler: PSUM tile larger than one bank")                         \
    X(LATTN_E_UNSUPPORTED,    -15, "not supported in this build or configuration")             \
    X(LATTN_E_FORMAT,         -16, "malformed or hostile file")                                      \
    X(LATTN_E_IO,             -17, "file could not be read or written")

typedef enum lattn_status {
#define LATTN__STATUS_ENUM(name, value, msg) name = value,
    LATTN_STATUS_LIST(LATTN__STATUS_ENUM)
#undef LATTN__STATUS_ENUM
    LATTN_STATUS_MIN = -17
} lattn_status;

/* A static string for every code ("unknown status" for anything else). */
LATTN_API const char *lattn_status_string(lattn_status s);
/* "lattn 0.1.0; simd=avx512; fma=on; openmp=on; compiler=gcc 12.2.0" */
LATTN_API const char *lattn_build_info(void);
LATTN_API const char *lattn_version(void);
/* Width in floats of the SIMD vector of the compiled back end (16, 8, 4 or 1). */
LATTN_API int lattn_simd_width(void);

/* ================================================================================================ */
/* >>tiler (public types; functions below)                                                          */
/* ================================================================================================ */
/* A device profile is a plain struct: copy a built-in one and change fields to explore.
   A limit of 0 means "unlimited" (the cpu profile has no capacity limits, but keeps the TensorE
   shape rules so that the same code exercises them). */
enum { LATTN_DEV_CPU = 0, LATTN_DEV_NEURON = 1, LATTN_DEV_GPU = 2 };

typedef struct lattn_dev_profile {
    const char *name;                   /* "cpu", "trn1", "trn2", "trn3", "h100", "h200" */
    int    kind;                        /* LATTN_DEV_* */
    int    partitions;                  /* max partitions of a tile: 128; 0 = flat memory (gpu) */
    size_t sbuf_bytes_per_partition;    /* 196608 / 229376 / 262144; gpu: smem per block; 0 = inf */
    size_t sbuf_reserved_per_partition; /* bytes the compiler keeps (default 0) */
    int    psum_banks;                  /* 8; 0 = accumulators are registers (acc_bytes) */
    size_t psum_bank_bytes;             /* 2048 = 512 fp32 per partition; 0 = unlimited */
    size_t acc_bytes;                   /* gpu register budget for accumulators; 0 = unlimited */
    int    mm_kmax, mm_mmax, mm_nmax;   /* TensorE limits 128 / 128 / 512; 0 = unlimited */
    int    transpose_max;               /* 128; 0 = transposes are free (a load layout, gpu) */
    int    default_chunk;               /* 128 neuron, 64 gpu, 32 cpu (fastest measured) */
    /* the compiler-side model of spec §6 [model: calibrated, not measured; 0 = off] */
    uint64_t graph_limit_instr;         /* instructions of one layer's graph (trn: 24576) */
    uint64_t graph_limit_unrolled;      /* unrolled chunk bodies of one layer's graph (trn: 48) */
    int    spill;                       /* 1: an SBUF request over capacity spills to HBM and is
                                           counted (spill_bytes, refill_bytes); 0: LATTN_E_SBUF_FULL */
    int    stream_bytes;                /* bytes per element of streamed activations in the DMA and
                                           SBUF accounting: 4 (fp32, default), 2 (bf16 streams) */
} lattn_dev_profile;

LATTN_API const lattn_dev_profile *lattn_profile_cpu(void);
LATTN_API const lattn_dev_profile *lattn_profile_trn1(void);
LATTN_API const lattn_dev_profile *lattn_profile_trn2(void);
LATTN_API const lattn_dev_profile *lattn_profile_trn3(void);
LATTN_API const lattn_dev_profile *lattn_profile_h100(void);
LATTN_API const lattn_dev_profile *lattn_profile_h200(void);
/* Look a profile up by name; NULL when unknown. */
LATTN_API const lattn_dev_profile *lattn_profile_by_name(const char *name);

/* Per-run report of the tiler (spec sbuf_tiler.md §2.4). Counters are sums over all tilers a call
   used (one per thread); on a device profile they do not depend on the thread count (its work split
   is its program); on the cpu profile the split follows the threads and the counters with it (scores
   recomputed per value block, K/V tiles per query group). Peaks are maxima. */
typedef struct lattn_tiler_stats {
    uint64_t dma_in_bytes, dma_out_bytes, dma_buffers;
    uint64_t matmuls, macs, transposes, transpose_macs, psum_accum, pe_cycles;
    uint64_t vec_ops, vec_elems, act_ops, gpsimd_ops;
    uint64_t instructions;              /* every op above, DMA included */
    uint64_t unrolled_steps;            /* chunk bodies emitted */
    uint64_t sbuf_peak_bytes_per_partition, sbuf_peak_bytes_total;
    uint64_t psum_peak_banks, live_tiles_peak;
    uint64_t util_partitions, util_operands; /* partition_util = util_partitions/(128·util_operands) */
    uint64_t spill_bytes;               /* bytes of tiles placed in HBM because SBUF was full */
    uint64_t refill_bytes;              /* bytes engines moved between HBM and SBUF for spilled tiles
                                           (every operand use: reads and writes together) */
} lattn_tiler_stats;
/* The compiler-capacity verdict of spec §6.3 for a report: instructions or unrolled bodies over the
   profile's limits (0 when the profile sets none). */
LATTN_API int lattn_tiler_graph_overflow(const lattn_tiler_stats *s, const lattn_dev_profile *p);

/* ================================================================================================ */
/* >>ctx                                                                                            */
/* ================================================================================================ */
/* Allocator callbacks with a user pointer; both NULL means LATTN_MALLOC / LATTN_FREE. */
typedef struct lattn_allocator {
    void *(*alloc)(void *user, size_t bytes);
    void  (*free)(void *user, void *ptr);
    void  *user;
} lattn_allocator;

/* The context: one call at a time per context; several contexts may run concurrently.
   NULL is a valid context everywhere: the default context (LATTN_MALLOC, OpenMP's default threads,
   the cpu profile), keeping no counters and no message (lattn_ctx_error(NULL) = "no context"). */
struct lattn__scratch;                   /* the kept workspace (opaque) */
typedef struct lattn_ctx {
    lattn_allocator allocator;
    int n_threads;                       /* 0 = OpenMP default; ignored without OpenMP */
    int keep_workspace;                  /* 1: the chunked kernels keep their workspace (tilers, tiles)
                                            in the context between calls, so that later calls of the
                                            same shape allocate and fault in nothing; release it with
                                            lattn_ctx_trim or lattn_ctx_free. 0: released per call */
    struct lattn__scratch *scratch;      /* owned by the library; NULL until a kept workspace exists */
    const lattn_dev_profile *profile;    /* NULL = lattn_profile_cpu() */
    lattn_tiler_stats stats;             /* accumulated by every tiled call; reset it at will */
    uint64_t n_allocs;                   /* successful allocations so far (for tests, accounting) */
    lattn_status last_status;
    char error[256];                     /* message of the last failure */
} lattn_ctx;

LATTN_API void        lattn_ctx_init(lattn_ctx *ctx);
/* Release the kept workspace (keep_workspace); the context stays usable. */
LATTN_API void        lattn_ctx_trim(lattn_ctx *ctx);
/* lattn_ctx_trim; then the context is as after lattn_ctx_init but for its allocator and settings. */
LATTN_API void        lattn_ctx_free(lattn_ctx *ctx);
LATTN_API const char *lattn_ctx_error(const lattn_ctx *ctx);
/* The effective profile (ctx->profile or cpu). */
LATTN_API const lattn_dev_profile *lattn_ctx_profile(const lattn_ctx *ctx);
/* Validate a (copied, edited) profile: a name, a known kind, no negative field, default_chunk in
   [1, LATTN_MAX_CHUNK], spill 0 or 1, stream_bytes 2 or 4. LATTN_E_DOMAIN naming the field
   otherwise. Every chunked form and lattn_tiler_create check the profile they are given. */
LATTN_API lattn_status lattn_profile_check(lattn_ctx *ctx, const lattn_dev_profile *p);
/* Checked size arithmetic: *out = a·b (a + b); LATTN_E_OVERFLOW when it does not fit a size_t
   (or a is negative). Every caller- or file-supplied size goes through these. */
LATTN_API lattn_status lattn_size_mul(size_t *out, size_t a, size_t b);
LATTN_API lattn_status lattn_size_add(size_t *out, size_t a, size_t b);

/* ================================================================================================ */
/* >>verbs (the table at the top, as code)                                                          */
/* ================================================================================================ */
/* The four forms of a mixer, the number every table, runner and golden case uses. */
typedef enum lattn_form {
    LATTN_FORM_REF, LATTN_FORM_PARALLEL, LATTN_FORM_CHUNK, LATTN_FORM_STEP
} lattn_form;
LATTN_API const char *lattn_form_name(lattn_form f);          /* "ref", "parallel", ... */
LATTN_API int lattn_form_parse(const char *name, lattn_form *f);  /* 1 when known */
/* X(family, form) for every mixer function: lattn_<family>_<form>. */
#define LATTN_MIXER_FORMS(X)                                                                         \
    X(shortconv, ref) X(shortconv, chunk) X(shortconv, step)                                         \
    X(scan, ref) X(scan, chunk) X(scan, step)                                                        \
    X(ssm, ref) X(ssm, chunk) X(ssm, step)                                                           \
    X(s4d, ref) X(s4d, chunk) X(s4d, step)                                                           \
    X(tcn, ref) X(tcn, chunk) X(tcn, step)                                                           \
    X(la, ref) X(la, parallel) X(la, chunk) X(la, step)                                              \
    X(gdr, ref) X(gdr, chunk) X(gdr, step)                                                           \
    X(ttt, ref) X(ttt, chunk) X(ttt, step)                                                           \
    X(attn, ref) X(attn, chunk) X(attn, step)
/* X(model, verb) for every model function; X(model) for the models with the weights grammar
   (init, init_st, serialize, tensor, free; init_file and save without LATTN_NO_STDIO). */
#define LATTN_MODEL_FORMS(X)                                                                         \
    X(laplace, forward_ref) X(laplace, forward) X(laplace, step)                                     \
    X(gdn, forward_ref) X(gdn, forward) X(gdn, step)                                                 \
    X(prism_p0, forward_ref) X(prism_p0, forward) X(prism_p0, step)                                  \
    X(prism_p1, forward_ref)                                                                         \
    X(prism_p2, forward_ref) X(prism_p2, forward) X(prism_p2, step)                                  \
    X(ttt_layer, forward_ref) X(ttt_layer, forward) X(ttt_layer, step)                               \
    X(tf, forward_ref) X(tf, forward) X(tf, step)                                                    \
    X(sps, forward_ref) X(sps, forward) X(sps, step)                                                 \
    X(tcn_demo, forward_ref) X(tcn_demo, forward) X(tcn_demo, backward_ref)
#define LATTN_MODEL_WEIGHTS(X) X(laplace) X(gdn) X(prism_p0) X(prism_p1) X(ttt_layer) X(tf) X(tcn_demo)
/* X(family, form) for every backward function: lattn_<family>_<form>_backward. */
#define LATTN_MIXER_BACKWARD(X)                                                                      \
    X(shortconv, ref) X(shortconv, chunk) X(scan, ref) X(scan, chunk) X(ssm, ref) X(ssm, chunk)      \
    X(s4d, ref) X(s4d, chunk) X(tcn, ref) X(tcn, chunk) X(la, ref) X(la, chunk) X(gdr, ref)          \
    X(attn, ref) X(attn, chunk)

/* ================================================================================================ */
/* >>rng                                                                                            */
/* ================================================================================================ */
/* splitmix64 (Steele, Lea, Flood 2014). Every random tensor of the tests and golden cases comes
   from here, and this Python function reproduces it bit for bit:

       def lattn_rng(seed, n, kind="normal"):          # returns a list of float32 values
           import math, struct
           s, out = seed & (2**64 - 1), []
           def nxt():
               nonlocal s
               s = (s + 0x9E3779B97F4A7C15) & (2**64 - 1); z = s
               z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
               z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
               return z ^ (z >> 31)
           f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
           for _ in range(n):
               u1 = (nxt() >> 40) * 2.0**-24
               if kind == "uniform": out.append(f32(u1)); continue
               u2 = (nxt() >> 40) * 2.0**-24
               out.append(f32(math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)))
           return out

   next():     s += 0x9E3779B97F4A7C15; z = s; z = (z ^ z>>30)·0xBF58476D1CE4E5B9;
               z = (z ^ z>>27)·0x94D049BB133111EB; return z ^ z>>31          (all mod 2^64)
   uniform:    u = (next() >> 40) · 2^-24, exactly representable in float, in [0, 1)
   normal:     u1, u2 = two uniforms; n = sqrt(-2 ln(1 - u1)) · cos(2π u2) in double, rounded to
               float (log of 1 - u1, so u1 = 0 is safe); one normal per two draws.
   range maps: uniform in [lo, hi) = (float)(lo + (hi - lo)·u); normal(mean, std) = (float)(mean +
               std·n) with n in double. */
typedef struct lattn_rng { uint64_t s; } lattn_rng;

LATTN_API lattn_rng lattn_rng_seed(uint64_t seed);
LATTN_API uint64_t  lattn_rng_next(lattn_rng *r);
LATTN_API float     lattn_rng_uniform(lattn_rng *r);                 /* [0, 1) */
LATTN_API double    lattn_rng_normal_d(lattn_rng *r);                /* N(0, 1), double */
LATTN_API void      lattn_rng_fill_uniform(lattn_rng *r, float *x, size_t n, float lo, float hi);
LATTN_API void      lattn_rng_fill_normal(lattn_rng *r, float *x, size_t n, float mean, float std);

/* ================================================================================================ */
/* >>vec                                                                                            */
/* ================================================================================================ */
/* Float kernels on the SIMD layer. Reductions use a fixed order (four vector accumulators, then a
   fixed tree), so a given build always returns the same bits. Tails go through the same vector
   code on a zero-padded copy. Accuracy of the transcendentals against libm in double, over the
   whole float range (tests/run_tests.c checks it):
     exp       <= 2 ulp for x >= -87.336; 0 below (no subnormal results); +inf above 88.72
     log       <= 2 ulp; log(0) = -inf, log(x<0) = NaN; subnormal x handled
     sigmoid   <= 4 ulp; computed from exp(-|x|), never overflows
     softplus  <= 4 ulp, = max(x,0) + log1p(exp(-|x|))
     silu      <= 4 ulp, x·sigmoid(x)
   (sigmoid, softplus and silu results below 1e-30 in magnitude may flush to 0.)
   NaN in gives NaN out for every function. */
LATTN_API float lattn_vec_dot(size_t n, const float *x, const float *y);
LATTN_API float lattn_vec_sum(size_t n, const float *x);
LATTN_API float lattn_vec_max(size_t n, const float *x);       /* -inf for n = 0 */
LATTN_API void  lattn_vec_axpy(size_t n, float a, const float *x, float *y);  /* y += a·x */
LATTN_API void  lattn_vec_scale(size_t n, float a, float *x);                 /* x *= a  */
LATTN_API void  lattn_vec_exp(size_t n, const float *x, float *y);
LATTN_API void  lattn_vec_log(size_t n, const float *x, float *y);
LATTN_API void  lattn_vec_sigmoid(size_t n, const float *x, float *y);
LATTN_API void  lattn_vec_softplus(size_t n, const float *x, float *y);
LATTN_API void  lattn_vec_silu(size_t n, const float *x, float *y);

/* ================================================================================================ */
/* >>gemm                                                                                           */
/* ================================================================================================ */
/* C (+)= op(A)·op(B), C: M x N, op(A): M x K, op(B): K x N, row-major with leading dimensions.
   Flags: TRANS_A reads A stored K x M (Aᵀ·B), TRANS_B reads B stored N x K (A·Bᵀ), ACCUMULATE adds
   to C instead of overwriting, LOWER writes only C[i][j] with j <= i (the causal part; the rest of
   C is not touched). Single-threaded per call. The micro-kernel computes MR x (2 vectors) blocks
   from a packed panel of B and broadcasts of A; packing buffers come from the context. */
enum {
    LATTN_GEMM_TRANS_A    = 1,
    LATTN_GEMM_TRANS_B    = 2,
    LATTN_GEMM_ACCUMULATE = 4,
    LATTN_GEMM_LOWER      = 8
};
LATTN_API lattn_status lattn_sgemm(lattn_ctx *ctx, int flags, int64_t M, int64_t N, int64_t K,
                                   const float *A, int64_t lda, const float *B, int64_t ldb,
                                   float *C, int64_t ldc);

/* ================================================================================================ */
/* >>tiler (functions)                                                                              */
/* ================================================================================================ */
/* The simulated tiler (spec sbuf_tiler.md §2–3). Every operand lives in a tile; every op is one
   counted instruction; every rule of the profile is checked and a violation returns its status
   (the message is kept in the tiler, see lattn_tiler_error). Real float math runs on the CPU:
   matmuls on the SGEMM kernel, vector ops on the SIMD layer. */
typedef enum lattn_space { LATTN_SPACE_SBUF = 1, LATTN_SPACE_PSUM = 2 } lattn_space;

typedef struct lattn_tile {
    lattn_space space;
    int    p0, np;          /* first partition and partition count */
    int    nf;              /* free elements per partition (fp32) */
    int    ld;              /* row stride of the host backing store, in floats */
    size_t off;             /* SBUF: free-byte offset in every partition; PSUM: bank index */
    float *data;            /* host backing store: row p is partition p0 + p */
    int    slot;            /* allocator slot (-1 for a view) */
    int    esz;             /* bytes per element in the accounting (4; a stream tile: profile stream_bytes) */
    int    spilled;         /* 1: over SBUF capacity, held in HBM (profile spill) */
} lattn_tile;

typedef struct lattn_tiler lattn_tiler;

/* Vector-engine operations. */
typedef enum lattn_tile_op {
    LATTN_TOP_ADD, LATTN_TOP_SUB, LATTN_TOP_MUL, LATTN_TOP_MAX, LATTN_TOP_DIV
} lattn_tile_op;
typedef enum lattn_tile_act {
    LATTN_ACT_IDENTITY, LATTN_ACT_EXP, LATTN_ACT_SILU, LATTN_ACT_SIGMOID, LATTN_ACT_SQUARE,
    LATTN_ACT_RELU, LATTN_ACT_RSQRT, LATTN_ACT_LOG
} lattn_act_fn;

/* A tiler for one thread. host_floats: size of its host arena for tile data (tiles are carved
   from it at allocation); lattn_tiler_host_floats() computes it for a list of tile shapes. */
LATTN_API lattn_status lattn_tiler_create(lattn_ctx *ctx, const lattn_dev_profile *p,
                                          size_t host_floats, lattn_tiler **out);
LATTN_API void lattn_tiler_destroy(lattn_ctx *ctx, lattn_tiler *t);
/* The first error the tiler met (status and message), or LATTN_OK. */
LATTN_API lattn_status lattn_tiler_error(const lattn_tiler *t, const char **msg);
LATTN_API const lattn_tiler_stats *lattn_tiler_get_stats(const lattn_tiler *t);
/* Floats of host arena that tiles of these free sizes (np = partitions each) take. */
LATTN_API size_t lattn_tiler_tile_floats(int np, int nf);

LATTN_API lattn_status lattn_sbuf_alloc(lattn_tiler *t, lattn_tile *tile, int np, int nf);
/* An SBUF tile of streamed activations: accounted at the profile's stream_bytes per element (bf16
   streams at 2; values stay fp32 on the host: accounting only). */
LATTN_API lattn_status lattn_sbuf_alloc_stream(lattn_tiler *t, lattn_tile *tile, int np, int nf);
LATTN_API lattn_status lattn_psum_alloc(lattn_tiler *t, lattn_tile *tile, int np, int nf);
LATTN_API void         lattn_tile_release(lattn_tiler *t, lattn_tile *tile);
/* A view of partitions [p, p+np) and free elements [f, f+nf) of a tile (no instruction). */
LATTN_API lattn_tile   lattn_tile_view(const lattn_tile *tile, int p, int np, int f, int nf);

/* DMA: one row of hbm per partition; row_stride in floats. */
LATTN_API lattn_status lattn_dma_load(lattn_tiler *t, lattn_tile *dst, const float *hbm,
                                      int64_t row_stride);
LATTN_API lattn_status lattn_dma_store(lattn_tiler *t, float *hbm, int64_t row_stride,
                                       const lattn_tile *src);
/* TensorE: psum[M][N] (+)= stationary[K][M]ᵀ · moving[K][N]; K on the partition axis.
   flags: LATTN_MM_ACCUMULATE (1) adds into psum; LATTN_MM_CAUSAL promises that the stationary is
   zero below its diagonal (stat[k][m] = 0 for k > m, a causal score block): the emulation skips
   those terms, which changes nothing but a 0·Inf (the engine multiplies them; counters count them).
   LATTN_MM_LOWER promises that nothing reads the result above its diagonal (psum[m][n], n > m: a
   causal score block's invisible part): the emulation leaves it unwritten (counters count it). */
enum { LATTN_MM_ACCUMULATE = 1, LATTN_MM_CAUSAL = 2, LATTN_MM_LOWER = 4 };
LATTN_API lattn_status lattn_matmul(lattn_tiler *t, lattn_tile *psum, const lattn_tile *stat,
                                    const lattn_tile *mov, int flags);
/* TensorE transpose: psum[nf][np] = src[np][nf]ᵀ. */
LATTN_API lattn_status lattn_transpose(lattn_tiler *t, lattn_tile *psum, const lattn_tile *src);
/* Vector / scalar / gpsimd engines. col: optional per-partition scalar tile [np][1]. */
LATTN_API lattn_status lattn_tile_copy(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src);
LATTN_API lattn_status lattn_tile_tt(lattn_tiler *t, lattn_tile *dst, const lattn_tile *a,
                                     const lattn_tile *b, lattn_tile_op op);
/* dst = a op (col ? col[p] : imm) */
LATTN_API lattn_status lattn_tile_ts(lattn_tiler *t, lattn_tile *dst, const lattn_tile *a,
                                     const lattn_tile *col, float imm, lattn_tile_op op);
/* dst = a·(col ? col[p] : imm) + b */
LATTN_API lattn_status lattn_tile_stt(lattn_tiler *t, lattn_tile *dst, const lattn_tile *a,
                                      const lattn_tile *col, float imm, const lattn_tile *b);
/* dst = func(src·scale + bias) */
LATTN_API lattn_status lattn_tile_act(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                      lattn_act_fn func, float scale, float bias);
/* dst = func(src·scale + bias[p]) with a per-partition bias column [np][1] (NULL: 0) and, when
   sum is not NULL, sum[p][0] = Σ_f dst[p][f] in the same pass (NKI's activation with accum_out:
   the softmax's exp and row sums in one ScalarE instruction). */
LATTN_API lattn_status lattn_tile_act_reduce(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                             lattn_act_fn func, float scale, const lattn_tile *bias,
                                             lattn_tile *sum);
/* dst[p][0] = sum (or max) over the free axis of src[p][:] */
LATTN_API lattn_status lattn_tile_reduce(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                         lattn_tile_op op);
/* ScalarE square with accumulation along the free axis (NKI's activation accum_out): the sum of
   squares of each partition's row into dst [np][1], one pass. */
LATTN_API lattn_status lattn_tile_sumsq(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src);
LATTN_API lattn_status lattn_tile_memset(lattn_tiler *t, lattn_tile *dst, float value);
/* GpSimd iota: dst[p][f] = base + cp·p + cf·f (the index patterns constant masks are built from). */
LATTN_API lattn_status lattn_tile_iota(lattn_tiler *t, lattn_tile *dst, float base, int cp, int cf);
/* affine_select: dst[p][f] = (f - p >= shift) ? src[p][f] : fill  (selects, never multiplies,
   so NaN above the kept triangle cannot leak). shift = 0 keeps f >= p. */
LATTN_API lattn_status lattn_tile_select_tri(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                             int shift, float fill);
/* affine_select in general: dst[p][f] = (c0 + cp·p + cf·f >= 0) ? src[p][f] : fill. A causal
   score block with queries from i0 on the partitions and keys from j0 on the free axis keeps
   j <= i with (c0, cp, cf) = (i0 - j0, 1, -1); select_tri(shift) is (-shift, -1, 1). */
LATTN_API lattn_status lattn_tile_select_affine(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                                int64_t c0, int cp, int cf, float fill);
/* dst[p][f] = mask[p][f] != 0 ? src[p][f] : fill (a mask tile loaded like any operand). */
LATTN_API lattn_status lattn_tile_select_mask(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                              const lattn_tile *mask, float fill);
/* GpSimd: in-place forward substitution x <- (I + diag(β)·M)^{-1} x for a strictly lower M [L][L]
   given transposed (mt[j][i] = M[i][j], the layout the matmuls produce; only j < i is read), β an
   optional per-partition column [L][1] (NULL: 1), x [L][n]. Row i reads rows < i of x: L dependent
   steps, counted as L GpSimd instructions (the delta rule's in-chunk solve, spec §3.3). */
LATTN_API lattn_status lattn_tile_tri_solve(lattn_tiler *t, lattn_tile *x, const lattn_tile *mt,
                                            const lattn_tile *beta);
/* Count one emitted chunk body. */
LATTN_API void lattn_tiler_mark_step(lattn_tiler *t);
/* Print stats as one JSON object into buf (always NUL-terminated); returns the length needed.
   s NULL (or buf NULL with cap > 0): nothing is printed and 0 is returned. */
LATTN_API size_t lattn_tiler_stats_json(const lattn_tiler_stats *s, const lattn_dev_profile *p,
                                        char *buf, size_t cap);

/* ================================================================================================ */
/* >>safetensors                                                                                    */
/* ================================================================================================ */
/* safetensors files (huggingface/safetensors): 8-byte little-endian header length N, N bytes of
   UTF-8 JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
   "__metadata__": {"key": "value", ...}} padded with spaces, then the data region, row-major and
   little-endian. The reader treats every file as hostile: header at most LATTN_ST_MAX_HEADER bytes,
   valid UTF-8, strict JSON (no duplicate keys, integers only, at most LATTN_ST_MAX_DIMS dims, a
   fixed nesting depth of 3), each tensor's byte range equal to dtype size x shape (checked
   arithmetic), ranges tiling the data region in order with no gap, overlap or trailing byte.
   Zero-sized tensors are valid. A rejection is LATTN_E_FORMAT with a message naming the tensor or
   the header byte offset; nothing is leaked. Hosts are assumed little-endian. */
#ifndef LATTN_ST_MAX_HEADER
#  define LATTN_ST_MAX_HEADER (100u << 20)      /* 100 MiB, the reference implementation's cap */
#endif
#define LATTN_ST_MAX_DIMS 8

typedef enum lattn_dtype {
    LATTN_DTYPE_F32, LATTN_DTYPE_F64, LATTN_DTYPE_F16, LATTN_DTYPE_BF16, LATTN_DTYPE_I32, LATTN_DTYPE_I64
} lattn_dtype;

typedef struct lattn_st_tensor {
    const char *name;                    /* NUL-terminated, owned by the file */
    lattn_dtype dtype;
    int ndim;
    int64_t shape[LATTN_ST_MAX_DIMS];
    size_t count;                        /* elements */
    const unsigned char *data;           /* count x dtype size bytes inside the file's buffer */
} lattn_st_tensor;

typedef struct lattn_st_file {
    lattn_st_tensor *tensors;
    int64_t n_tensors; /* in header order */
    const char **meta_keys, **meta_values; int64_t n_meta;
    void *block;                         /* one allocation: arrays and decoded strings */
    void *owned;                         /* the file bytes, when read from a path */
} lattn_st_file;

/* A tensor for the writer: data holds count x dtype size little-endian bytes. */
typedef struct lattn_st_entry {
    const char *name;
    lattn_dtype dtype;
    int ndim;
    const int64_t *shape;
    const void *data;
} lattn_st_entry;

LATTN_API size_t      lattn_dtype_size(lattn_dtype d);           /* 0 for an unknown dtype */
LATTN_API const char *lattn_dtype_name(lattn_dtype d);           /* "F32", ...; "?" if unknown */
/* Parse a file held in memory; buf must outlive f. */
LATTN_API lattn_status lattn_st_parse(lattn_ctx *ctx, const void *buf, size_t size, lattn_st_file *f);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_st_load(lattn_ctx *ctx, const char *path, lattn_st_file *f);
#endif
LATTN_API void lattn_st_free(lattn_ctx *ctx, lattn_st_file *f);
LATTN_API const lattn_st_tensor *lattn_st_find(const lattn_st_file *f, const char *name);
LATTN_API const char *lattn_st_meta(const lattn_st_file *f, const char *key);   /* NULL if absent */
/* Convert any dtype to float / double; n must equal t->count. */
LATTN_API lattn_status lattn_st_to_f32(lattn_ctx *ctx, const lattn_st_tensor *t, float *out, size_t n);
LATTN_API lattn_status lattn_st_to_f64(lattn_ctx *ctx, const lattn_st_tensor *t, double *out, size_t n);
/* Serialise n tensors (data in entry order) and n_meta key/value pairs (meta[2i], meta[2i+1]) into a
   buffer from the context's allocator; release it with lattn_free. */
LATTN_API lattn_status lattn_st_serialize(lattn_ctx *ctx, const lattn_st_entry *e, int64_t n,
                                          const char *const *meta, int64_t n_meta,
                                          unsigned char **out, size_t *size);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_st_save(lattn_ctx *ctx, const char *path, const lattn_st_entry *e, int64_t n,
                                     const char *const *meta, int64_t n_meta);
#endif
/* Release memory the library handed out (lattn_st_serialize). */
LATTN_API void lattn_free(lattn_ctx *ctx, void *p);

/* One named tensor of a model's weight arena (every model keeps its weights as one block of floats
   and a table of these, in file order; lattn_<model>_tensor finds one by name). */
#define LATTN_NAME_MAX 64
typedef struct lattn_tensor {
    char name[LATTN_NAME_MAX];
    int ndim;
    int64_t shape[3];
    size_t count;
    float *data;                          /* inside the model's arena */
} lattn_tensor;

/* ================================================================================================ */
/* >>conv                                                                                           */
/* ================================================================================================ */
/* Depthwise causal short convolution (fla ShortConvolution; spec tcn_ssm.md §1):
       y[t][c] = act( bias[c] + Σ_{j<W} w[c][j] · x[t-(W-1)+j][c] ),   x[t'] = history for t' < 0
   x, y: [B][T][D]; w: [D][W] (w[c][W-1] multiplies the current token); bias: [D] or NULL;
   act: identity or SiLU. State (fla convention): the last W inputs per channel, [D][W], newest
   last; only W-1 columns reach the output. h0/ht: [B][D][W] (or [N][D][W] with offsets), h0 NULL =
   zeros. Forms (>>verbs): _ref (double), _chunk (float32, SIMD over channels, threads over blocks
   of time), _step (float32, token by token: T == 1 is one decoding step, ht may equal h0). */
typedef struct lattn_shortconv_args {
    int64_t B, T, D, W;
    const float *x, *w, *bias;
    int silu;                            /* 1 = apply SiLU to the output */
    const float *h0;
    const int64_t *offsets;              /* optional: B == 1, offsets[0..n_seqs] */
    int64_t n_seqs;
    float *y, *ht;                       /* ht optional */
    double *y64, *ht64;                  /* _ref only, optional: float64 copies of y, ht */
} lattn_shortconv_args;

LATTN_API lattn_status lattn_shortconv_ref  (lattn_ctx *ctx, const lattn_shortconv_args *a);
LATTN_API lattn_status lattn_shortconv_chunk(lattn_ctx *ctx, const lattn_shortconv_args *a);
LATTN_API lattn_status lattn_shortconv_step (lattn_ctx *ctx, const lattn_shortconv_args *a);
/* Gradients for ℒ = Σ ⟨dout, y⟩ + Σ ⟨dht, ht⟩; every output optional (NULL: not wanted); dw and
   dbias are summed over the batch and the sequences. */
typedef struct lattn_shortconv_grads {
    const float *dout;                   /* ∂ℒ/∂y [B][T][D] (required) */
    const float *dht;                    /* ∂ℒ/∂ht [N][D][W] (NULL: zero) */
    float *dx, *dw, *dbias, *dh0;        /* [B][T][D], [D][W], [D], [N][D][W] */
    double *dx64, *dw64, *dbias64, *dh064;
} lattn_shortconv_grads;
/* The backward of _ref in double: dpre = dout ⊙ act'(pre), then every tap's transpose. */
LATTN_API lattn_status lattn_shortconv_ref_backward(lattn_ctx *ctx, const lattn_shortconv_args *a,
                                                    const lattn_shortconv_grads *g);
/* The float32 backward (the _chunk form's): blocks of 64 tokens, SIMD over channels, dw and dbias
   summed per fixed group of blocks. */
LATTN_API lattn_status lattn_shortconv_chunk_backward(lattn_ctx *ctx, const lattn_shortconv_args *a,
                                                      const lattn_shortconv_grads *g);

/* ================================================================================================ */
/* >>scan                                                                                           */
/* ================================================================================================ */
/* The diagonal linear recurrence, channel by channel (spec tcn_ssm.md §5):
       h_t = a_t ⊙ h_{t-1} + b_t,      h_{-1} = h0 (default 0)
   a, b and the output y = h: [B][T][N] (channels contiguous); h0, ht: [B][N]. log_space: a holds l_t = log a_t
   (l <= 0, clamped below at LATTN_LOG_GATE_MIN; a positive l is a domain error).
   The associative operator  (a1, b1) ∘ (a2, b2) = (a1·a2, a2·b1 + b2)  (apply left, then right)
   makes it parallel: the fast form scans fixed blocks of 4096 tokens locally, combines the block
   carries with ∘, then rescans each block from its carry. The same operator passes the K x V
   chunk states of the matrix-state mixers (S_n = diag(decay) S_{n-1} + ΔS_n). Forms (>>verbs):
   _ref (sequential, double), _chunk (SIMD across channels; threads take blocks of channels when
   there are at least LATTN_SCAN_CHANNEL_SPLIT of them (or T fits one block), else blocks of time;
   the choice and the block sizes depend on the shape only, so any thread count gives the same
   bits), _step (float32, token by token; ht may equal h0). y and ht are each optional. */
#define LATTN_SCAN_CHANNEL_SPLIT 1024
#define LATTN_SCAN_TIME_BLOCK 4096
typedef struct lattn_scan_args {
    int64_t B, T, N;
    const float *a, *b;
    int log_space;
    const float *h0;
    float *y, *ht;
    double *y64, *ht64;                  /* _ref only, optional: float64 copies of y, ht */
} lattn_scan_args;
LATTN_API lattn_status lattn_scan_ref  (lattn_ctx *ctx, const lattn_scan_args *a);
LATTN_API lattn_status lattn_scan_chunk(lattn_ctx *ctx, const lattn_scan_args *a);
LATTN_API lattn_status lattn_scan_step (lattn_ctx *ctx, const lattn_scan_args *a);
/* Gradients for ℒ = Σ ⟨dout, y⟩ + Σ ⟨dht, ht⟩ (every output optional; da is with respect to a as
   given: the decay, or its log in log space, 0 where the log is clamped). */
typedef struct lattn_scan_grads {
    const float *dout, *dht;             /* [B][T][N], [B][N] (either may be NULL: zero) */
    float *da, *db, *dh0;                /* [B][T][N], [B][T][N], [B][N] */
    double *da64, *db64, *dh064;
} lattn_scan_grads;
LATTN_API lattn_status lattn_scan_ref_backward(lattn_ctx *ctx, const lattn_scan_args *a, const lattn_scan_grads *g);
/* The float32 backward (the _chunk form's): a reverse scan over blocks of 64 tokens, each block's
   states recomputed from checkpoints of the forward's block-start states. */
LATTN_API lattn_status lattn_scan_chunk_backward(lattn_ctx *ctx, const lattn_scan_args *a, const lattn_scan_grads *g);

/* ================================================================================================ */
/* >>ssm                                                                                            */
/* ================================================================================================ */
/* Selective diagonal state-space model, Mamba-1 conventions (Gu & Dao 2023, state-spaces/mamba
   selective_scan_ref; spec tcn_ssm.md §3). Per channel d (group g = d / (D/G)) and state n:
       Δ_t[d]   = softplus(dt_t[d] + dt_bias[d])          (dt_softplus = 1; else dt + dt_bias)
       h_t[d,n] = exp(Δ_t[d]·A[d,n]) · h_{t-1}[d,n] + Δ_t[d] · Bm_t[g,n] · x_t[d]
       y_t[d]   = Σ_n Cm_t[g,n] · h_t[d,n] + Dskip[d] · x_t[d],   then y *= SiLU(z_t[d]) if z
   x, dt, z, y: [B][T][D]; A: [D][N] (<= 0; Mamba's -exp(A_log)); Bm, Cm: [B][T][G][N] (G = 1:
   shared by all channels); Dskip, dt_bias: [D]; h0, ht: [B][D][N] (or [n_seqs] with offsets).
   Δ·A is a log decay: clamped at LATTN_LOG_GATE_MIN; A > 0, or Δ < 0 without softplus, is a
   domain error. Identity: with N = K, one A per head and Δ shared within a head this is Simple
   GLA with q = Cm, k = Bm, v = Δ·x, g = Δ·A, scale 1 (tested). Forms (>>verbs): _ref (double),
   _chunk (float32; discretisation, recurrence and read-out fused per vector of channels inside
   tiles of 128 tokens, so exp(ΔA) and ΔBx never exist beyond one vector; exp(ΔA) = 2^(Δ·A·log2 e)
   by a polynomial that needs no range fix-ups), _step (float32, token by token; ht may equal h0). */
typedef struct lattn_ssm_args {
    int64_t B, T, D, N, G;
    const float *x, *dt, *A, *Bm, *Cm;
    const float *Dskip, *dt_bias, *z;
    int dt_softplus;
    const float *h0;
    const int64_t *offsets;              /* optional: B == 1, offsets[0..n_seqs] */
    int64_t n_seqs;
    float *y, *ht;
    double *y64, *ht64;                  /* _ref only, optional: float64 copies of y, ht */
} lattn_ssm_args;
LATTN_API lattn_status lattn_ssm_ref  (lattn_ctx *ctx, const lattn_ssm_args *a);
LATTN_API lattn_status lattn_ssm_chunk(lattn_ctx *ctx, const lattn_ssm_args *a);
LATTN_API lattn_status lattn_ssm_step (lattn_ctx *ctx, const lattn_ssm_args *a);
/* Gradients for ℒ = Σ ⟨dout, y⟩ + Σ ⟨dht, ht⟩ (every output optional; dA, dDskip, ddt_bias summed
   over the batch; dBm, dCm over the channels of a group; 0 where Δ·A is clamped). */
typedef struct lattn_ssm_grads {
    const float *dout, *dht;             /* [B][T][D] (required), [N][D][Nstate] (NULL: zero) */
    float *dx, *ddt, *dz;                /* [B][T][D] */
    float *dA;                           /* [D][N] */
    float *dBm, *dCm;                    /* [B][T][G][N] */
    float *dDskip, *ddt_bias;            /* [D] */
    float *dh0;                          /* [N][D][Nstate] */
    double *dx64, *ddt64, *dz64, *dA64, *dBm64, *dCm64, *dDskip64, *ddt_bias64, *dh064;
} lattn_ssm_grads;
LATTN_API lattn_status lattn_ssm_ref_backward(lattn_ctx *ctx, const lattn_ssm_args *a, const lattn_ssm_grads *g);
/* The float32 backward (the _chunk form's): the forward's tiles of 128 channels, blocks of 64 tokens
   in reverse, each block's states recomputed from checkpoints of the forward's block-start states. */
LATTN_API lattn_status lattn_ssm_chunk_backward(lattn_ctx *ctx, const lattn_ssm_args *a, const lattn_ssm_grads *g);

/* ================================================================================================ */
/* >>s4d                                                                                            */
/* ================================================================================================ */
/* Time-invariant diagonal SSM, S4D (Gu et al. 2022, "On the Parameterization and Initialization of
   Diagonal State Space Models"; spec tcn_ssm.md §4). Per channel d and mode n:
       A_n = -exp(A_re[d,n]) + i·A_im[d,n],  Δ = exp(log_dt[d]),  Ā = exp(ΔA),  B̄ = (Ā - 1)/A · B
       h_t = Ā ⊙ h_{t-1} + B̄ x_t,            y_t = s · Re(Σ_n C_n h_t,n) + Dskip[d] x_t
   s = 2 for complex modes (each stands for a conjugate pair), 1 for real modes (complex_modes = 0:
   A_im, B_im, C_im are ignored and may be NULL). Being time-invariant, y is one causal convolution
   y = K * x + Dskip·x with K_j = s·Re(Σ_n C_n B̄_n Ā_n^j), plus the zero-input response
   s·Re(Σ_n C_n Ā_n^(t+1) h0_n) of an initial state.
   x, y: [B][T][D]; A_re, A_im, B_re, B_im, C_re, C_im: [D][N]; log_dt, Dskip: [D];
   h0, ht: [B][D][N][2] (complex: re, im). Forms (>>verbs): _ref (recurrence, double), _chunk
   (float32) by one of three methods, _step (token by token, the update in double; ht may equal
   h0). The methods of _chunk are the three ways to evaluate a time-invariant SSM:
     LATTN_S4D_SCAN  (default) the recurrence, SIMD across modes, time in blocks of 64 so the state
                     rounds ~T/64 times rather than T
     LATTN_S4D_FFT   kernel in double, then FFT convolution per channel with the library's radix-2
                     FFT; the kernel is built once per channel and shared by the batch
     LATTN_S4D_CONV  kernel in double, then the direct O(T^2) convolution
   The convolution methods produce y only (ht must be NULL); they accept h0. Powers Ā^j are
   re-anchored with exp(jΔA) every 32 steps. */
typedef enum lattn_s4d_method { LATTN_S4D_SCAN, LATTN_S4D_FFT, LATTN_S4D_CONV } lattn_s4d_method;
typedef struct lattn_s4d_args {
    int64_t B, T, D, N;
    int complex_modes;
    const float *A_re, *A_im, *B_re, *B_im, *C_re, *C_im, *log_dt, *Dskip;
    const float *x;
    const float *h0;
    lattn_s4d_method method;             /* _chunk only */
    float *y, *ht;
    double *y64, *ht64;                  /* _ref only, optional: float64 copies of y, ht */
} lattn_s4d_args;
LATTN_API lattn_status lattn_s4d_ref  (lattn_ctx *ctx, const lattn_s4d_args *a);
LATTN_API lattn_status lattn_s4d_chunk(lattn_ctx *ctx, const lattn_s4d_args *a);
LATTN_API lattn_status lattn_s4d_step (lattn_ctx *ctx, const lattn_s4d_args *a);
/* Gradients for ℒ = Σ ⟨dout, y⟩ + Σ ⟨dht, ht⟩ (every output optional; the [D][N] and [D] ones
   summed over the batch; the _im ones only with complex modes). */
typedef struct lattn_s4d_grads {
    const float *dout, *dht;             /* [B][T][D] (required), [B][D][N][2] (NULL: zero) */
    float *dx;                           /* [B][T][D] */
    float *dA_re, *dA_im, *dB_re, *dB_im, *dC_re, *dC_im;   /* [D][N] */
    float *dlog_dt, *dDskip;             /* [D] */
    float *dh0;                          /* [B][D][N][2] */
    double *dx64, *dA_re64, *dA_im64, *dB_re64, *dB_im64, *dC_re64, *dC_im64, *dlog_dt64, *dDskip64, *dh064;
} lattn_s4d_grads;
LATTN_API lattn_status lattn_s4d_ref_backward(lattn_ctx *ctx, const lattn_s4d_args *a, const lattn_s4d_grads *g);
/* The float32 backward (the _chunk form's, whatever its method): the SCAN method's blocks of 64 in
   reverse, each block's states recomputed from checkpoints of the forward's block-start states,
   the adjoint carried between blocks the way the forward carries the state. */
LATTN_API lattn_status lattn_s4d_chunk_backward(lattn_ctx *ctx, const lattn_s4d_args *a, const lattn_s4d_grads *g);
/* In-place radix-2 complex FFT of n = 2^k points (re[], im[]); inverse = 1 divides by n. */
LATTN_API lattn_status lattn_fft(lattn_ctx *ctx, double *re, double *im, int64_t n, int inverse);

/* ================================================================================================ */
/* >>tcn                                                                                            */
/* ================================================================================================ */
/* The dilated TCN stack of the "recurrence-free RNN" article (spec tcn_ssm.md §2). Layer i:
       c   = b + Σ_{j<W} w[:, :, j] · x[t - (W-1-j)·2^i]      (causal Conv1d D->D, zero history)
       out = GELU(LayerNorm(c)) + x                             (LayerNorm eps 1e-5, exact erf GELU)
   w: [D_out][D_in][W] (PyTorch Conv1d layout; W the kernel size), b, ln_w, ln_b: [D]. x, y:
   [B][T][D]. State of a sequence, lattn_tcn_state_floats() floats: each layer's last (W-1)·2^i
   inputs, oldest first (zeros = the start of a sequence); h0, ht [B][state floats].
   Forms (>>verbs): _ref (double, from zero history), _chunk (float32; each tap is one GEMM; from
   zero history), _step (float32, token by token from h0, NULL = zeros; ht may equal h0). The
   receptive field is 1 + (W-1)(2^L - 1) tokens. */
#define LATTN_TCN_MAX_LAYERS 16
typedef struct lattn_tcn_layer { const float *w, *b, *ln_w, *ln_b; } lattn_tcn_layer;
typedef struct lattn_tcn_args {
    int64_t B, T, D, W, n_layers;
    const lattn_tcn_layer *layers;
    const float *x;
    const float *h0;                     /* _step: initial state, NULL = zeros */
    float *y;
    float *ht;                           /* _step: final state (optional; may equal h0) */
    double *y64;                         /* _ref only, optional: a float64 copy of y */
} lattn_tcn_args;

LATTN_API lattn_status lattn_tcn_state_floats(int64_t D, int64_t W, int64_t n_layers, size_t *out);
LATTN_API lattn_status lattn_tcn_ref  (lattn_ctx *ctx, const lattn_tcn_args *a);
LATTN_API lattn_status lattn_tcn_chunk(lattn_ctx *ctx, const lattn_tcn_args *a);
LATTN_API lattn_status lattn_tcn_step (lattn_ctx *ctx, const lattn_tcn_args *a);
/* Gradients for ℒ = Σ ⟨dout, y⟩: dx, and per layer the weights' gradients summed over the batch
   (every output optional). */
typedef struct lattn_tcn_layer_grads {
    float *dw, *db, *dln_w, *dln_b;      /* [D][D][W], [D], [D], [D] */
    double *dw64, *db64, *dln_w64, *dln_b64;
} lattn_tcn_layer_grads;
typedef struct lattn_tcn_grads {
    const float *dout;                   /* [B][T][D] (required) */
    float *dx;                           /* [B][T][D] */
    double *dx64;
    lattn_tcn_layer_grads *layers;       /* [n_layers]; NULL: no weight gradients */
} lattn_tcn_grads;
/* The backward of _ref in double: per batch row every layer's input kept ((L+1)·T·D doubles),
   the layers in reverse, each token's conv and LayerNorm recomputed. */
LATTN_API lattn_status lattn_tcn_ref_backward(lattn_ctx *ctx, const lattn_tcn_args *a, const lattn_tcn_grads *g);
/* The float32 backward: the _chunk forward keeping every layer's input and conv output
   ((2L + 1)·B·T·D floats), then per layer in reverse one GEMM a tap for dW (Xᵀ·dc) and one for dx
   (dc·W_jᵀ), LayerNorm and GELU row by row; the same bits for any thread count. a->y (optional)
   receives the forward's output (_chunk's bits). */
LATTN_API lattn_status lattn_tcn_chunk_backward(lattn_ctx *ctx, const lattn_tcn_args *a, const lattn_tcn_grads *g);

#ifndef LATTN_NO_MODELS
/* The article's DemoModel: h = Linear(d_in -> D)(x); h = StackedEncoder(h); out = Linear(D -> 1)
   of the last token. Weights in one arena of named tensors, the article's state_dict names and
   torch shapes: embedding.weight [D][d_in], embedding.bias [D]; per layer l
   encoder.layers.{l}.conv.conv.weight [D][D][W], .conv.conv.bias [D], encoder.layers.{l}.norm.weight,
   .norm.bias [D]; head.weight [1][D], head.bias [1]. lattn_tcn_demo_init draws them as PyTorch does
   (U(±1/sqrt(fan_in)) for weights and biases; LayerNorm weight 1, bias 0) from the library PRNG;
   lattn_tcn_demo_init_st reads the sizes from the shapes (no metadata needed: the article's own
   files load as they are). */
typedef struct lattn_tcn_demo_config { int64_t d_in, D, W, n_layers; } lattn_tcn_demo_config;
typedef struct lattn_tcn_demo {
    lattn_tcn_demo_config cfg;
    float *arena; size_t n_params;
    lattn_tensor *tensors;
    int64_t n_tensors;
    lattn_tcn_layer layers[LATTN_TCN_MAX_LAYERS];   /* views of the encoder's tensors */
} lattn_tcn_demo;
LATTN_API lattn_status lattn_tcn_demo_init(lattn_ctx *ctx, lattn_tcn_demo *m, const lattn_tcn_demo_config *c,
                                           uint64_t seed);
LATTN_API lattn_status lattn_tcn_demo_init_st(lattn_ctx *ctx, lattn_tcn_demo *m, const lattn_st_file *f,
                                              const char *prefix);
LATTN_API lattn_status lattn_tcn_demo_serialize(lattn_ctx *ctx, const lattn_tcn_demo *m, unsigned char **out,
                                                size_t *size);
LATTN_API void lattn_tcn_demo_free(lattn_ctx *ctx, lattn_tcn_demo *m);
LATTN_API lattn_tensor *lattn_tcn_demo_tensor(const lattn_tcn_demo *m, const char *name);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_tcn_demo_save(lattn_ctx *ctx, const lattn_tcn_demo *m, const char *path);
LATTN_API lattn_status lattn_tcn_demo_init_file(lattn_ctx *ctx, lattn_tcn_demo *m, const char *path);
#endif
/* x: [B][T][d_in] -> out: [B]. forward_ref runs the whole model in double (embedding, the stack,
   the head), forward in float32 (the stack by lattn_tcn_chunk). */
LATTN_API lattn_status lattn_tcn_demo_forward_ref(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B,
                                                  int64_t T, const float *x, float *out, double *out64);
LATTN_API lattn_status lattn_tcn_demo_forward(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B,
                                              int64_t T, const float *x, float *out);
/* The gradients of ℒ = Σ_b dout[b]·out[b] in double (the forward recomputed in double): every
   weight into grad / grad64 (optional; the arena's layout, m->n_params values: grad[i] belongs to
   m->arena[i]) and dx [B][T][d_in] (optional). dout [B] is the loss's gradient in double (the
   model has one output per sequence; for the article's MSE loss dout = 2 (out - target) / B). */
LATTN_API lattn_status lattn_tcn_demo_backward_ref(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T,
                                                   const float *x, const double *dout, float *grad, double *grad64, float *dx);
/* The same gradients in float32: the stack by lattn_tcn_chunk_backward, the embedding and the head
   summed in double; grad (required) in the arena's layout, dx (optional). */
LATTN_API lattn_status lattn_tcn_demo_backward(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T,
                                               const float *x, const float *dout, float *grad, float *dx);

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>linattn                                                                                        */
/* ================================================================================================ */
/* Causal linear attention (Katharopoulos et al. 2020, "Transformers are RNNs"; fla ops/linear_attn;
   spec gla_laplace.md §2). Per head, with feature map φ (width K' = K, or 2K for hedgehog):
       S_t = S_{t-1} + φ(k_t) v_tᵀ              (K' x V state; S_{-1} = h0, default 0)
       o_t = s · S_tᵀ φ(q_t)                    (un-normalised: lattn's default, not fla's; >>conventions)
   normalised (fla form): z_t = z_{t-1} + φ(k_t);  o_t = s·S_tᵀφ(q_t) / (s·φ(q_t)·z_t + eps)
   Scale s defaults to K'^-1/2. Chunked form, chunk n of L tokens (rows r, columns c):
       O_n = s·tril(Φq Φkᵀ)·V + s·Φq·S_{n-1};   S_n = S_{n-1} + Φkᵀ V
   and the normaliser rides along as one extra value column of ones (its state column is z).
   Feature maps (fla modules/feature_map.py): identity; relu; elu+1; hadamard (x W1ᵀ + b1) ⊙ (x W2ᵀ
   + b2) with fmap_w = [W1; W2] ([2][K][K]) and fmap_b = [b1; b2] ([2][K]); hedgehog softmax([2y,
   -2y]) over 2K features, y = x Wᵀ + b, fmap_w [K][K], fmap_b [K]. The maps with weights are tied
   (q and k share fmap_w, fmap_b) unless fmap_wk, fmap_bk give the key map its own weights of the
   same shapes: fla's default tie_feature_map_qk=False is the untied form.
   Shapes: q, k [B][T][H][K]; v, o [B][T][H][V]; h0, ht [B][H][K'][V] (or [N] with offsets);
   z0, zt [B][H][K'] (normalised form only).

   Gated linear attention: the same functions with a log forget gate (natural log, <= 0; at most
   one of the three gate fields is set). Per head, α_t = exp(gate_t):
       S_t = diag(α_t) S_{t-1} + φ(k_t) v_tᵀ,    o_t = s · S_tᵀ φ(q_t)     (z decays the same way)
     GLA (Yang et al. 2024, fla ops/gla):          gk [B][T][H][K], one gate per key channel
     Simple GLA (fla ops/simple_gla):              g  [B][T][H],    one gate per head and token
     fixed decay: retention (Sun et al. 2023) and the Laplace mixer: g_gamma [H]
                  (lattn_retention_decay fills RetNet's γ_h = 1 - 2^(-5-h) as ln γ_h), or
                  retnet_decay = 1: the same decays computed in double inside (the float32 ln γ_h
                  of g_gamma is up to 1.9e-8 relative away from fla's float64 retention at T = 300,
                  growing with T; with retnet_decay _ref matches it to rounding; fast forms round
                  ln γ_h to float once)
   Linear attention is GLA with every gate 0 (spec gla_laplace.md §5). Chunked form, chunk of L
   tokens with the chunk-local inclusive cumsum b_r = Σ_{τ<=r} gate_τ (so every b_r <= 0):
       A[r][c] = s Σ_i q_r[i] k_c[i] e^{b_r[i] - b_c[i]}  (c <= r)
       O_n = A·V + s·(Q ⊙ e^{b})·S_{n-1}
       S_n = diag(e^{b_last}) S_{n-1} + (K ⊙ e^{b_last - b})ᵀ V
   Only non-positive differences are exponentiated (spec §5.4); per-key gates take the sub-chunk
   route of spec §5.5 inside a chunk. Log gates are clamped below at LATTN_LOG_GATE_MIN in every
   form (-inf is a hard reset); a positive or NaN gate is a domain error. */
typedef enum lattn_fmap {
    LATTN_FMAP_IDENTITY, LATTN_FMAP_RELU, LATTN_FMAP_ELU1, LATTN_FMAP_HADAMARD, LATTN_FMAP_HEDGEHOG
} lattn_fmap;

typedef enum lattn_sched { LATTN_SCHED_STREAMING, LATTN_SCHED_CHUNK_PARALLEL } lattn_sched;
typedef struct lattn_la_args {
    int64_t B, T, H, K, V;
    const float *q, *k, *v;
    lattn_fmap fmap;
    const float *fmap_w, *fmap_b;        /* hadamard / hedgehog weights (of the query map; tied) */
    const float *fmap_wk, *fmap_bk;      /* the key map's own weights (untied), or NULL: tied */
    int normalize;                       /* 1 = divide by s·φ(q)·z + eps */
    float eps;                           /* normaliser epsilon (0 = 1e-6) */
    double scale;                        /* 0 = K'^-1/2 (double, so _ref matches float64 references) */
    const float *gk;                     /* GLA: per-key log gates [B][T][H][K] (needs K' = K) */
    const float *g;                      /* Simple GLA: per-head log gates [B][T][H] */
    const float *g_gamma;                /* fixed per-head log decay [H] (retention, Laplace) */
    int retnet_decay;                    /* 1: RetNet's fixed decays in double (g_gamma NULL) */
    const float *h0, *z0;                /* optional initial state / key sum */
    const int64_t *offsets;              /* optional: B == 1, offsets[0..n_seqs] */
    int64_t n_seqs;
    float *o;
    float *ht, *zt;                      /* optional final state / key sum */
    double *o64, *ht64, *zt64;           /* _ref only, optional: float64 copies of o, ht, zt */
    int chunk;                           /* _chunk: tokens per chunk (0 = the profile's default) */
    lattn_sched schedule;                /* _chunk without dynamic gates */
} lattn_la_args;
/* Schedules of _chunk (spec sbuf_tiler.md §6.1), for linear attention and the fixed decays:
   STREAMING (default) runs chunk by chunk and keeps nothing; CHUNK_PARALLEL mirrors the PyTorch/XLA
   port of the Laplace model: phase A computes every head's and chunk's decayed scores Pᵀ and keeps
   them resident, phase B runs the state chain chunk by chunk from them (Q and K read twice; one
   work item holds every head; a chunk body is one chunk of all heads). Same results either way. */

/* Width K' of the feature map's output (saturates at INT64_MAX, which every size check refuses). */
LATTN_API int64_t lattn_fmap_width(lattn_fmap f, int64_t K);
/* RetNet's per-head decays as log gates: g_gamma[h] = ln(1 - 2^(-5-h)), h < H. */
LATTN_API void lattn_retention_decay(int64_t H, float *g_gamma);
/* Forms (>>verbs). _ref writes the float64 copies o64 [B][T][H][V], ht64 [..][H][K'][V], zt64
   [..][H][K'] where they are set (golden files, conformance) besides the float outputs. _chunk:
   a->chunk = 0 is the profile's default chunk (cpu 32, trn 128, gpu 64); without dynamic gates a
   chunk may span up to 4 partition tiles of tokens (C = 256 on trn2: two blocks of 128 per
   chunk). _step: token by token in float32 (T == 1 is one decoding step); ht may equal h0 and zt
   may equal z0. */
LATTN_API lattn_status lattn_la_ref     (lattn_ctx *ctx, const lattn_la_args *a);
LATTN_API lattn_status lattn_la_parallel(lattn_ctx *ctx, const lattn_la_args *a);
LATTN_API lattn_status lattn_la_chunk   (lattn_ctx *ctx, const lattn_la_args *a);
LATTN_API lattn_status lattn_la_step    (lattn_ctx *ctx, const lattn_la_args *a);

/* Gradients of a call, for the loss ℒ = Σ ⟨dout, o⟩ + Σ ⟨dht, ht⟩ (spec gla_laplace.md §5.7): the
   upstream gradients in, the gradient of every input out. Every output is optional (NULL: not
   wanted); the float64 copies are written by _ref_backward. */
typedef struct lattn_la_grads {
    const float *dout;                   /* ∂ℒ/∂o [B][T][H][V] (required) */
    const float *dht, *dzt;              /* ∂ℒ/∂ht [N][H][K'][V], ∂ℒ/∂zt [N][H][K'] (NULL: zero) */
    float *dq, *dk;                      /* [B][T][H][K] */
    float *dv;                           /* [B][T][H][V] */
    float *dgk, *dg;                     /* the log gates' gradients: gk [B][T][H][K], g [B][T][H] (0 where clamped) */
    float *dh0, *dz0;                    /* [N][H][K'][V], [N][H][K'] */
    float *dfmap_w, *dfmap_b;            /* the query map's weights (and the key map's when tied), summed */
    float *dfmap_wk, *dfmap_bk;          /* the key map's own weights (untied) */
    double *dq64, *dk64, *dv64, *dgk64, *dg64, *dh064, *dz064, *dfmap_w64, *dfmap_b64, *dfmap_wk64, *dfmap_bk64;
} lattn_la_grads;
/* The backward of _ref, in double: the recurrence in reverse time with every state of one head
   kept (T·K'·(V+1) doubles; the teaching form and the golden gradients). Every gate kind (the
   fixed decays, g_gamma and retnet_decay, have no gradient), every feature map with its weights,
   the normaliser and its key sum. */
LATTN_API lattn_status lattn_la_ref_backward(lattn_ctx *ctx, const lattn_la_args *a, const lattn_la_grads *g);
/* The backward of _chunk in float32: chunks of a->chunk tokens (0 = 64) in reverse on the SGEMM
   kernel, the chunk-start states checkpointed by a pass over the chunk states, one work item per
   (sequence, head): the same bits at any thread count. Every gate kind, feature map and the
   normaliser; the float outputs only (the *64 fields are _ref_backward's). On a Trainium profile
   (ctx->profile trn1/2/3) it runs on the tiler instead, spec sbuf_tiler.md §5.3: the fixed decays
   with the identity map (the Laplace mixer), K and the chunk (0 = the profile's 128) within the
   partitions, V <= 512; the forward with its checkpoints, then 51 instructions per head and chunk
   (>>linattn.tiled_backward); anything else there, and any GPU profile, is LATTN_E_UNSUPPORTED. */
LATTN_API lattn_status lattn_la_chunk_backward(lattn_ctx *ctx, const lattn_la_args *a, const lattn_la_grads *g);

/* ================================================================================================ */
/* >>delta                                                                                          */
/* ================================================================================================ */
/* The delta rule family on one general core, "GDR+I" (spec gdn_prism_ttt.md §2–3.4): per head,
   with a log forget gate G_t (per head or per key; none for the delta rule), an erase key e_t of
   strength β_t, a write key k_t with write scale c_t, and L state-independent injections
   (b, κ, d) per token (PRISM's solver steps):
       S' = Diag(e^{G_t}) S_{t-1}                                    (gates first)
       S' = S' - β_t e_t (e_tᵀ S')                                   (erase)
       S_t = S' + c_t k_t v_tᵀ + Σ_l b_t^(l) κ_t^(l) d_t^(l)ᵀ          (write, injections)
       o_t = s · S_tᵀ q_t                                            (read after the write)
     delta rule (DeltaNet, Yang et al. 2024; fla ops/delta_rule):  e = k, c = β, no gate
     Gated DeltaNet (Yang, Kautz, Hatamizadeh 2025; fla ops/gated_delta_rule): e = k, c = β, g
       (both: S_t = S' + β_t k_t (v_t - S'ᵀ k_t)ᵀ)
     GDN with per-key gates: gk instead of g;  GLA: β = 0, c = 1
   Shapes: q, k, e [B][T][H][K]; v, o [B][T][H][V]; β, c, g [B][T][H]; gk [B][T][H][K];
   inj_b [B][T][H][L], inj_kap [B][T][H][L][K], inj_d [B][T][H][L][V]; h0, ht [B][H][K][V] (or
   [N] with offsets). l2norm = 1 normalises q, k and e in the kernel as fla does:
   x / sqrt(Σ x² + 1e-6). β lies in [0, 1], or [0, 2] with allow_neg_eigval (fla's 2·sigmoid,
   eigenvalues 1 - β|k|² in [-1, 1]). Gates: natural-log decays <= 0, clamped at
   LATTN_LOG_GATE_MIN like every gated form.
   Chunked form (WY / UT transform, spec §3.3–3.4), chunk of L tokens, γ the chunk-local cumsum of
   the per-head gate, Γ = e^γ, products decayed as <x_i, y_j> = x_i·y_j e^{γ_i - γ_j} (i >= j):
       A   = diag(β) strict(<E, E>)              T = (I + A)^{-1} (forward substitution)
       W   = T diag(β Γ) E                       U = -T diag(β) Σ_pairs strict(<E, Kw>) Vw
       Ξ   = U - W S                             (the erased amounts, the only state-dependent step)
       O   = diag(Γ) sQ S + incl(<sQ, E>) Ξ + Σ_pairs incl(<sQ, Kw>) Vw
       S  <- Γ_L S + (diag(Γ_L/Γ) E)ᵀ Ξ + Σ_pairs (diag(Γ_L/Γ) Kw)ᵀ Vw
   where the write pairs are (k, c·v) and the injections (κ^(l), b^(l)·d^(l)). */
typedef struct lattn_gdr_args {
    int64_t B, T, H, K, V;
    const float *q, *k, *v;
    const float *beta;                   /* erase strength [B][T][H] (required) */
    const float *g, *gk;                 /* per-head [B][T][H] or per-key [B][T][H][K] log gates */
    const float *e;                      /* erase key; NULL: e = k */
    const float *c;                      /* write scale; NULL: c = β */
    int64_t L;                           /* injections per token (0: none) */
    const float *inj_b, *inj_kap, *inj_d;
    int l2norm;                          /* 1: q, k, e normalised in the kernel (eps 1e-6) */
    int allow_neg_eigval;                /* 1: β in [0, 2] */
    double scale;                        /* 0 = K^-1/2 */
    const float *h0;
    const int64_t *offsets;              /* optional: B == 1, offsets[0..n_seqs] */
    int64_t n_seqs;
    float *o, *ht;                       /* ht optional */
    double *o64, *ht64;                  /* _ref only, optional: float64 copies of o, ht */
    int chunk;                           /* _chunk: tokens per chunk (0 = the profile's default) */
} lattn_gdr_args;

/* Forms (>>verbs). _ref also writes the float64 copies o64, ht64 where set. _chunk: a->chunk = 0
   is the profile's default (32 on a GPU profile, whose shared memory holds the WY kernel's tiles
   at that size). Per-key gates (gk): the decayed products take the reference point at the chunk
   start (query sides ⊙ e^{Gm}, key sides ⊙ e^{-Gm}), and a chunk ends early where some key's gates
   would fall by more than LATTN__LA_SPAN (20) inside it, so every factor stays below e^20. _step:
   token by token in float32 (T == 1 is one decoding step); ht may equal h0. */
LATTN_API lattn_status lattn_gdr_ref  (lattn_ctx *ctx, const lattn_gdr_args *a);
LATTN_API lattn_status lattn_gdr_chunk(lattn_ctx *ctx, const lattn_gdr_args *a);
LATTN_API lattn_status lattn_gdr_step (lattn_ctx *ctx, const lattn_gdr_args *a);
/* Gradients for ℒ = Σ ⟨dout, o⟩ + Σ ⟨dht, ht⟩ (every output optional; with l2norm, dq, dk and
   de are taken through the normalisation, with respect to the raw inputs; de and dc only where e
   and c are given, else they are part of dk and dbeta; 0 where a gate is clamped). */
typedef struct lattn_gdr_grads {
    const float *dout, *dht;             /* [B][T][H][V] (required), [N][H][K][V] (NULL: zero) */
    float *dq, *dk, *de;                 /* [B][T][H][K] */
    float *dv;                           /* [B][T][H][V] */
    float *dbeta, *dc, *dg;              /* [B][T][H] */
    float *dgk;                          /* [B][T][H][K] */
    float *dinj_b, *dinj_kap, *dinj_d;   /* [B][T][H][L], [B][T][H][L][K], [B][T][H][L][V] */
    float *dh0;                          /* [N][H][K][V] */
    double *dq64, *dk64, *de64, *dv64, *dbeta64, *dc64, *dg64, *dgk64, *dinj_b64, *dinj_kap64, *dinj_d64, *dh064;
} lattn_gdr_grads;
/* The backward of _ref in double: the recurrence in reverse time, every state of one head kept
   (T·K·V doubles); every option of the core. */
LATTN_API lattn_status lattn_gdr_ref_backward(lattn_ctx *ctx, const lattn_gdr_args *a, const lattn_gdr_grads *g);

#ifndef LATTN_NO_MODELS
/* ================================================================================================ */
/* >>laplace                                                                                        */
/* ================================================================================================ */
/* The Laplace layer and model: the Simple-GLA language model trained on Trainium2 (spec
   gla_laplace.md §6). It is a RECONSTRUCTION: the published description gives the widths (24
   layers, D = 3072, 16 heads of dk = 96 and dv = 192, FFN 8192), the fused QKVG projection, the
   width-4 ShortConv with SiLU, the fixed geometric per-head decay, LayerNorm and the GLU FFN; what
   lattn chose where it is silent is marked [recon]. One layer, x: [T][D]:
       h   = LayerNorm₁(x)                                   (affine, eps = norm_eps [recon] 1e-5)
       u   = SiLU(ShortConv_W(h))                            (depthwise, no bias [recon], W = 4)
       q | k | v | g = u · W_qkvgᵀ                           (rows q [0, H·dk), k, v, g: [recon])
       o_h = SimpleGLA(q_h, k_h, v_h; g_gamma[h], s = dk^-1/2)   (g_gamma: RetNet's γ_h [recon], in double in _ref)
       y_h = gate(o_h, g_h)                                  (gate_mode; default [recon] fla's
                                                              RMSNorm_head(o_h)·w_n ⊙ SiLU(g_h))
       x   = x + y · W_oᵀ                                    (W_o [recon]: the parameter count needs it)
       x   = x + (SiLU(h₂ W₁ᵀ) ⊙ h₂ W₂ᵀ) · W₃ᵀ,   h₂ = LayerNorm₂(x)
   Model = [embedding E [vocab][D]] → n_layers layers → [final LayerNorm → logits = h·Eᵀ (tied
   [recon])]. vocab = 0 leaves out the embedding and the head: the model maps hidden states
   [B][T][D] to hidden states (one layer as a block of a host model).
   Weights live in one arena of named tensors (safetensors-style names, fla's where fla has one):
       layers.{l}.attn_norm.weight / .bias      [D]          layers.{l}.attn.conv.weight   [D][W]
       layers.{l}.attn.qkvg_proj.weight          [H(2dk+2dv)][D]
       layers.{l}.attn.g_norm.weight             [dv]         layers.{l}.attn.o_proj.weight [D][H·dv]
       layers.{l}.mlp_norm.weight / .bias        [D]
       layers.{l}.mlp.gate_proj.weight, .up_proj.weight [ffn][D]    layers.{l}.mlp.down_proj.weight [D][ffn]
       embeddings.weight [vocab][D], norm.weight / norm.bias [D]       (vocab > 0 only)
   lattn_laplace_init fills them from a seed: matrices and embedding N(0, 0.02²) (fla's
   initializer_range), conv U(±W^-1/2) (PyTorch's Conv1d default), norm weights 1, biases 0.
   The decoding state of one sequence is lattn__laplace_state_floats() floats, zeros for a fresh
   sequence: per layer the ShortConv cache [D][W] (fla: the last W inputs, newest last) and then the
   GLA states [H][dk][dv]. It is plain memory: copy it, save it, restore it. */
typedef enum lattn_out_gate {
    LATTN_OUT_RMSNORM_SWISH,              /* RMSNorm_head(o)·w_n ⊙ SiLU(g)   (default, fla) */
    LATTN_OUT_SWISH,                      /* o ⊙ SiLU(g) */
    LATTN_OUT_SIGMOID,                    /* o ⊙ σ(g) */
    LATTN_OUT_RMSNORM_SIGMOID             /* RMSNorm_head(o)·w_n ⊙ σ(g) */
} lattn_out_gate;

typedef struct lattn_laplace_config {
    int64_t n_layers, D, H, K, V, ffn, conv_w, vocab;   /* H heads of K x V */
    lattn_out_gate gate_mode;
    float norm_eps;                       /* LayerNorm and head RMSNorm epsilon (1e-5) */
} lattn_laplace_config;
LATTN_API lattn_laplace_config lattn_laplace_config_3b(void);    /* vocab 0: not published */
/* A small model for tests and examples: 2 layers, D 64, 4 heads of 16 x 32, FFN 176, vocab 256. */
LATTN_API lattn_laplace_config lattn_laplace_config_small(void);
/* Floats of one sequence's decoding state: L·(H·dk·dv + D·W) (3B: 7,372,800 = 29,491,200 bytes in
   float32, the published "29.5 MB"). LATTN_E_SHAPE on overflow or a non-positive size. */
LATTN_API lattn_status lattn_laplace_state_floats(const lattn_laplace_config *c, size_t *out);
/* Parameters of the layer matrices: per layer W_qkvg [H(2dk+2dv)][D], W_o [D][H·dv], W_1 and W_2
   [ffn][D] (one stacked matrix for the optimiser), W_3 [D][ffn]; *n_matrices = 4 per layer
   (3B: 2,717,908,992 in 96 matrices). LATTN_E_SHAPE on overflow or a non-positive size. */
LATTN_API lattn_status lattn_laplace_matrix_params(const lattn_laplace_config *c, size_t *out, int64_t *n_matrices);


typedef struct lattn_laplace_model {
    lattn_laplace_config cfg;
    float *arena; size_t n_params;        /* every weight, tensors[] in order */
    lattn_tensor *tensors;
    int64_t n_tensors;
    float *g_gamma;                       /* [H] the fixed log decays (derived, not saved) */
} lattn_laplace_model;

LATTN_API lattn_status lattn_laplace_init(lattn_ctx *ctx, lattn_laplace_model *m,
                                          const lattn_laplace_config *c, uint64_t seed);
LATTN_API void lattn_laplace_free(lattn_ctx *ctx, lattn_laplace_model *m);
/* The tensor called `name`, or NULL. */
LATTN_API lattn_tensor *lattn_laplace_tensor(const lattn_laplace_model *m, const char *name);
/* Weights as safetensors (float32; the configuration in __metadata__ as "laplace.<field>"), into a
   buffer to release with lattn_free, or into a file. */
LATTN_API lattn_status lattn_laplace_serialize(lattn_ctx *ctx, const lattn_laplace_model *m,
                                               unsigned char **out, size_t *size);
/* A model from a parsed file: configuration from the metadata, every tensor `prefix`+name with
   exactly its shape (any float dtype). Missing, misshapen or extra-large entries are LATTN_E_FORMAT
   and leave *m empty. */
LATTN_API lattn_status lattn_laplace_init_st(lattn_ctx *ctx, lattn_laplace_model *m,
                                             const lattn_st_file *f, const char *prefix);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_laplace_save(lattn_ctx *ctx, const lattn_laplace_model *m, const char *path);
LATTN_API lattn_status lattn_laplace_init_file(lattn_ctx *ctx, lattn_laplace_model *m, const char *path);
#endif
/* Forward over a batch. Input: tokens [B][T] (ids in [0, vocab)) when vocab > 0, else x [B][T][D].
   Output: logits [B][T][vocab] when vocab > 0, else hidden states [B][T][D]. state: NULL (every
   sequence starts fresh, no state out) or [B][state_floats], read as the initial and overwritten
   with the final state. _ref computes in double, one token at a time (the teaching form); the
   fast form runs layer by layer over all B·T tokens with threaded GEMMs and lattn_la_chunk. */
LATTN_API lattn_status lattn_laplace_forward_ref(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B,
                                                 int64_t T, const int32_t *tokens, const float *x,
                                                 float *out, float *state, double *out64);
LATTN_API lattn_status lattn_laplace_forward(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B,
                                             int64_t T, const int32_t *tokens, const float *x,
                                             float *out, float *state);
/* One decoding step for B sequences: tokens [B] or x [B][D] -> out [B][vocab or D]; state
   [B][state_floats] (required) advanced by one token (GEMV projections, lattn_la_step). */
LATTN_API lattn_status lattn_laplace_step(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B,
                                          const int32_t *tokens, const float *x, float *out, float *state);

/* ================================================================================================ */
/* >>gdnlayer                                                                                       */
/* ================================================================================================ */
/* The Gated DeltaNet layer (fla layers/gated_deltanet.py; spec gdn_prism_ttt.md §3.1), x [T][D]:
       q = SiLU(ShortConv(x W_qᵀ)),  k = SiLU(ShortConv(x W_kᵀ)),  v = SiLU(ShortConv(x W_vᵀ))
       g = -exp(A_log) · softplus(x W_aᵀ + dt_bias)         (one log gate per head and token)
       β = sigmoid(x W_bᵀ)   (2·sigmoid with allow_neg_eigval)
       o = GDN(q, k, v; g, β), q and k L2-normalised in the kernel, s = K^-1/2
       y = (RMSNorm_head(o)·w ⊙ SiLU(x W_gᵀ)) W_oᵀ
   Tensors (fla's names): q_proj.weight, k_proj.weight [H·K][D]; v_proj.weight, g_proj.weight [H·V][D];
   a_proj.weight, b_proj.weight [H][D]; o_proj.weight [D][H·V]; q_conv1d.weight, k_conv1d.weight
   [H·K][W]; v_conv1d.weight [H·V][W]; A_log, dt_bias [H]; o_norm.weight [V]. lattn_gdn_init draws
   them as fla does: A ~ U(0, 16), dt log-uniform in [1e-3, 1e-1] (clamped >= 1e-4) with
   dt_bias = softplus⁻¹(dt), convolutions U(±W^-1/2), o_norm 1, matrices N(0, 0.02²). State of one
   sequence (lattn_gdn_state_floats): the conv caches of q, k, v ([H·K][W], [H·K][W], [H·V][W], fla's
   W columns, newest last), then the delta-rule states [H][K][V]; zeros for a fresh sequence. */
typedef struct lattn_gdn_config {
    int64_t D, H, K, V, conv_w;
    int allow_neg_eigval;
    float norm_eps;                      /* output RMSNorm epsilon (1e-5) */
} lattn_gdn_config;
LATTN_API lattn_gdn_config lattn_gdn_config_default(void);   /* fla: D 2048, H 6, K 256, V 512, W 4 */
typedef struct lattn_gdn_layer {
    lattn_gdn_config cfg;
    float *arena; size_t n_params;
    lattn_tensor *tensors;
    int64_t n_tensors;
} lattn_gdn_layer;
LATTN_API lattn_status lattn_gdn_init(lattn_ctx *ctx, lattn_gdn_layer *m, const lattn_gdn_config *c, uint64_t seed);
LATTN_API void lattn_gdn_free(lattn_ctx *ctx, lattn_gdn_layer *m);
LATTN_API lattn_tensor *lattn_gdn_tensor(const lattn_gdn_layer *m, const char *name);
/* Weights as safetensors (float32, the configuration as "gdn.<field>" metadata) and back: every
   tensor prefix+name with exactly its shape; anything else is LATTN_E_FORMAT and leaves *m empty. */
LATTN_API lattn_status lattn_gdn_serialize(lattn_ctx *ctx, const lattn_gdn_layer *m, unsigned char **out, size_t *size);
LATTN_API lattn_status lattn_gdn_init_st(lattn_ctx *ctx, lattn_gdn_layer *m, const lattn_st_file *f, const char *prefix);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_gdn_save(lattn_ctx *ctx, const lattn_gdn_layer *m, const char *path);
LATTN_API lattn_status lattn_gdn_init_file(lattn_ctx *ctx, lattn_gdn_layer *m, const char *path);
#endif
/* Floats of one sequence's state: (2·H·K + H·V)·W + H·K·V; LATTN_E_SHAPE on overflow or a bad size. */
LATTN_API lattn_status lattn_gdn_state_floats(const lattn_gdn_config *c, size_t *out);
/* x, y [B][T][D]; state NULL or [B][state floats] (initial in, final out). _ref: double, token by
   token; forward: threaded GEMMs and lattn_gdr_chunk; step: T = 1, GEMV and lattn_gdr_step. */
LATTN_API lattn_status lattn_gdn_forward_ref(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, int64_t T,
                                             const float *x, float *y, float *state, double *y64);
LATTN_API lattn_status lattn_gdn_forward(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, int64_t T,
                                         const float *x, float *y, float *state);
LATTN_API lattn_status lattn_gdn_step(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, const float *x,
                                      float *y, float *state);


/* ================================================================================================ */
/* >>prism                                                                                          */
/* ================================================================================================ */
/* PRISM (ICML 2026, "Parallel Residual Iterative Sequence Model"; spec gdn_prism_ttt.md §4).
   This version has P1: the official LM block (gpr-prism/prism llm/models/prism.py PRISMBlock.forward,
   eval mode) exactly as coded, a chunk-level computation whose output depends on the chunk size C
   (spec §4.2, its steps 1–9 below; it is not the chunked form of any per-token recurrence). P0 (the
   paper's model) and P2 (a per-token LM form) follow below, on the delta-rule core. Per batch row:
       x̂ = LN_in(x);  a = LN_anchor(causal depthwise conv_Kc(x̂) + bias)
       [u | v | q | k | gain_down_l | key_down_l | gate_l] = W_f a + b_f      (l = 1..S, rank R)
       gk = clamp(sigmoid(W2 (W1 x̂ + b1) + b2)^(1/τ) (after max(., 1e-6)), max(gate_min, 0.01), 1)
       β = sigmoid(W_b x̂) per head;  P_l = sigmoid(gain_down_l Wg_up[l]);  κ_l = key_down_l Wk_up[l]
       b_l = sigmoid(gate_l) per head;  δ_l = P_l ∘ π_l ∘ v,  π_1 = 1, π_{l+1} = π_l ∘ (1 - P_l)
     per head and chunk n (local s; λ = log max(gk, 1e-6); Ls, Le, Lt the inclusive prefix, suffix
     and total sums of λ, each clamped to [-20, 20]):
       dS_n = Σ_s (k_s ∘ e^{Le_s}) v_sᵀ + Σ_l Σ_s (κ_l,s ∘ e^{Le_s}) (b_l,s δ_l,s)ᵀ
       M_{n+1} = clamp(Diag(e^{Lt_n}) (M_n - β̄_n k̄_n (k̄_nᵀ M_n)) + dS_n, ±50),  M_0 = 0
         (k̄ the chunk's mean key / (its norm + 1e-6), β̄ the mean β)
       o_s = M_nᵀ (q_s ∘ e^{Ls_s}) + Σ_{m<=s} clamp((q_s ∘ e^{Ls_s})·(kc_m / max(e^{Ls_m} + 1e-3, 1e-6)), ±100) vc_m
         kc = k + Σ_l κ_l,  vc = v + Σ_l b_l δ_l
       y = SiLU(W_g x̂ + b_g) ∘ o;  out = x + W_o2 SiLU(W_o1 (u ∘ LN_out(y)) + b_o1) + b_o2
   Parameters under the official state_dict names (torch shapes, nn.Linear weights [out][in]). */
typedef struct lattn_prism_p1 {
    int64_t D, H, S, R, Kc, rg, C;       /* width, heads, solver steps, solver rank (128), conv width,
                                            gate rank, chunk (the code's min(128, T)) */
    double tau, gate_min;                /* gate temperature (16), gate_min (1e-4; floor max(., 0.01)) */
    const float *fused_w, *fused_b;      /* _fused_proj: [4D + 2RS + HS][D], [..] */
    const float *conv_w, *conv_b;        /* short_conv: [D][1][Kc], [D] */
    const float *anchor_w, *anchor_b, *ln_in_w, *ln_in_b, *ln_out_w, *ln_out_b;   /* [D] */
    const float *gate0_w, *gate0_b, *gate1_w, *gate1_b;   /* _gate.0 [rg][D], [rg]; _gate.1 [D][rg], [D] */
    const float *g_w, *g_b;              /* _g [D][D], [D] */
    const float *b_w;                    /* b_proj [H][D] */
    const float *o0_w, *o0_b, *o2_w, *o2_b;   /* _o.0 [4D][D], [4D]; _o.2 [D][4D], [D] */
    const float *up_gain, *up_k;         /* solver_up_gain_weight, solver_up_k_weight [S][R][D] */
    float *arena; size_t n_params;       /* every tensor, tensors[] in order; the fields above view it */
    lattn_tensor *tensors;
    int64_t n_tensors;
    int ablate;                          /* LATTN_PRISM_R2 | ... (0: the block as published) */
} lattn_prism_p1;
/* The LM-track ablations (llm/models/prism_ablations.py; spec §4.7), for P1 and P2: R2 every solver
   step uses step 1's key κ_1; R3 no retain, δ_l = P_l ∘ v; R4 step 1 uses the base key k; R5 every
   step uses the base key (Wk_up unused). */
enum { LATTN_PRISM_R2 = 1, LATTN_PRISM_R3 = 2, LATTN_PRISM_R4 = 4, LATTN_PRISM_R5 = 8 };
/* The block's tensors from a parsed file under their official names (after prefix), converted to
   float32 into one owned arena; D, H, S, R, Kc and rg come from the shapes (checked against each
   other), C = 128 (the code's min(128, T) is applied per call; set p->C for another chunk size),
   tau 16, gate_min 1e-4. LATTN_E_FORMAT for a missing or misshapen tensor; *p is then empty. */
LATTN_API lattn_status lattn_prism_p1_init_st(lattn_ctx *ctx, lattn_prism_p1 *p, const lattn_st_file *f, const char *prefix);
LATTN_API void lattn_prism_p1_free(lattn_ctx *ctx, lattn_prism_p1 *p);
LATTN_API lattn_tensor *lattn_prism_p1_tensor(const lattn_prism_p1 *p, const char *name);
/* The block in double: x [B][T][D] -> y [B][T][D] (and y64 in double, may be NULL). T must be a
   multiple of C (the official reshapes); initial state zero, no final state. */
LATTN_API lattn_status lattn_prism_p1_forward_ref(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, int64_t T,
                                          const float *x, float *y, double *y64);
/* The PRISM LM's sizes (spec §4.6): vocabulary, positions, width, layers, heads, solver steps S,
   solver rank R (128), anchor conv width Kc, gate rank. Parameters of one block
       P_blk = 2D + (Kc+1)D + 2D + (D+1)(4D + 2RS + HS) + (2D·r_g + r_g + D) + 2D + (D² + D) + DH + (8D² + 5D) + 2SRD
   and of the model V·D + T·D + 2D + layers·P_blk (tied head, learned positions, final LayerNorm);
   S = 0 is the repository's GDN LM. LATTN_E_SHAPE for a size out of range (each must be in [1, 2^24], S and
   vocab may be 0). */
typedef struct lattn_prism_config { int64_t vocab, seq_len, D, n_layers, H, S, R, Kc, rg; } lattn_prism_config;
LATTN_API lattn_prism_config lattn_prism_config_large_130m(void);   /* D 768, 8 layers, 8 heads, T 1024, S 2, Kc 7 */
LATTN_API lattn_status lattn_prism_params(const lattn_prism_config *c, size_t *out, int64_t *per_block);
/* A block from a configuration (S >= 1), initialised as the official CausalLM does, and its
   tensors as safetensors under the official names. */
LATTN_API lattn_status lattn_prism_p1_init(lattn_ctx *ctx, lattn_prism_p1 *p, const lattn_prism_config *c, uint64_t seed);
LATTN_API lattn_status lattn_prism_p1_serialize(lattn_ctx *ctx, const lattn_prism_p1 *p, unsigned char **out, size_t *size);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_prism_p1_save(lattn_ctx *ctx, const lattn_prism_p1 *m, const char *path);
LATTN_API lattn_status lattn_prism_p1_init_file(lattn_ctx *ctx, lattn_prism_p1 *m, const char *path);
#endif
/* P2 (spec §4.4; lattn's definition, "PRISM-like", not in the sources): the same block and
   parameters as P1 with the chunk-level step 7 replaced by a per-token recurrence on the delta-rule
   core, so its chunked form equals its recurrence for every chunk size:
       S' = Diag(gk_t) S_{t-1};  S' -= β_t k̂_t (k̂_tᵀ S');  S_t = S' + k_t v_tᵀ + Σ_l κ_l,t (b_l,t δ_l,t)ᵀ
       o_t = S_tᵀ q_t       (k̂ = k / sqrt(|k|² + 1e-6); q, k otherwise raw; no 1/sqrt(d) scale)
   i.e. GDR+I with per-key gates log gk and L = S injections; since k = |k|_ε k̂ (|k|_ε the root
   above), the erase and the base write share the key k̂ with write scale c = |k|_ε, so the fast forms
   pass the core e = k = k̂ and merge the two terms as GDN does. The state of one
   sequence (lattn_prism_p2_state_floats): the anchor conv's history of x̂ [D][Kc] (newest last),
   then the heads' states [H][d][d]; NULL state = a fresh sequence. _ref: double throughout; _chunk:
   the recurrence by lattn_gdr_chunk (projections in double in this version); _step: T = 1 by
   lattn_gdr_step. */
/* P0 (spec §4.1): the paper's per-token model, with lattn's documented choices where the paper is
   silent: H heads of width d = D/H; u = SiLU(ShortConv_Kc(x)) (depthwise, no bias); q = W_q u,
   v = W_v u (u and v of equal width D); α = sigmoid(W_α u + b_α), one per head; per solver step l:
   k_l = W_k,l u, p_l = W_p,l u, β_l = sigmoid(W_β,l u + b_β,l) per head; r_1 = v - u,
   δ_l = GELU(p_l ∘ r_l) (exact erf GELU), r_{l+1} = r_l - δ_l; k_1 L2-normalised (eps 1e-6 in the
   root); per head
       S_t = α_t (I - β_1 k_1 k_1ᵀ) S_{t-1} + Σ_l β_l k_l δ_lᵀ,      y_t = W_o concat_h(S_tᵀ q_t / sqrt(d))
   — GDR+I with a per-head gate log α, e = k_1, β = β_1, c = 0 and L injections (k_l, β_l, δ_l).
   Tensors: conv.weight [D][Kc], q_proj.weight, v_proj.weight, o_proj.weight [D][D], alpha_proj.weight
   [H][D] and .bias [H], then per step l: solver.{l}.k_proj.weight, solver.{l}.p_proj.weight [D][D],
   solver.{l}.beta_proj.weight [H][D] and .bias [H]. State of one sequence: the conv history of x
   [D][Kc] (newest last), then [H][d][d]. */
typedef struct lattn_prism_p0_config { int64_t D, H, L, Kc; } lattn_prism_p0_config;
typedef struct lattn_prism_p0 {
    lattn_prism_p0_config cfg;
    float *arena; size_t n_params;
    lattn_tensor *tensors;
    int64_t n_tensors;
} lattn_prism_p0;
LATTN_API lattn_status lattn_prism_p0_init(lattn_ctx *ctx, lattn_prism_p0 *m, const lattn_prism_p0_config *c, uint64_t seed);
LATTN_API void lattn_prism_p0_free(lattn_ctx *ctx, lattn_prism_p0 *m);
LATTN_API lattn_tensor *lattn_prism_p0_tensor(const lattn_prism_p0 *m, const char *name);
LATTN_API lattn_status lattn_prism_p0_state_floats(const lattn_prism_p0_config *c, size_t *out);
/* A P0 block from a parsed file: configuration from "p0.D", "p0.H", "p0.L", "p0.Kc" metadata, every
   tensor prefix+name with exactly its shape; anything else is LATTN_E_FORMAT and leaves *m empty. */
LATTN_API lattn_status lattn_prism_p0_init_st(lattn_ctx *ctx, lattn_prism_p0 *m, const lattn_st_file *f, const char *prefix);
LATTN_API lattn_status lattn_prism_p0_serialize(lattn_ctx *ctx, const lattn_prism_p0 *m, unsigned char **out, size_t *size);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_prism_p0_save(lattn_ctx *ctx, const lattn_prism_p0 *m, const char *path);
LATTN_API lattn_status lattn_prism_p0_init_file(lattn_ctx *ctx, lattn_prism_p0 *m, const char *path);
#endif
/* x, y [B][T][D]; state NULL (fresh) or [B][state floats], initial in and final out. */
LATTN_API lattn_status lattn_prism_p0_forward_ref(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, int64_t T,
                                                  const float *x, float *y, float *state, double *y64);
LATTN_API lattn_status lattn_prism_p0_forward(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, int64_t T,
                                            const float *x, float *y, float *state);
LATTN_API lattn_status lattn_prism_p0_step(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, const float *x,
                                           float *y, float *state);

/* The solver's closed form (spec §4.3, the LM code's δ without GELU): L steps of
       δ_l = P_l ∘ r_l,  r_{l+1} = r_l - δ_l,  r_1 = v
   telescope to r_l = π_l ∘ v with π_l = Π_{j<l} (1 - P_j), so δ_l = P_l ∘ π_l ∘ v and
   Σ_l δ_l + π_{L+1} ∘ v = v: a per-channel stick-breaking split of v over the L solver keys, with no
   serial dependence between the steps. P [L][n], v [n] → delta [L][n]; rest (may be NULL) = π_{L+1} ∘ v.
   retain = 0 is the R3 ablation (δ_l = P_l ∘ v, no remainder carried). */
LATTN_API void lattn_prism_split(int64_t n, int64_t L, const double *P, const double *v, int retain, double *delta,
                                 double *rest);
LATTN_API lattn_status lattn_prism_p2_state_floats(const lattn_prism_p1 *p, size_t *out);
LATTN_API lattn_status lattn_prism_p2_forward_ref(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, int64_t T,
                                          const float *x, float *y, float *state, double *y64);
LATTN_API lattn_status lattn_prism_p2_forward(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, int64_t T,
                                            const float *x, float *y, float *state);
LATTN_API lattn_status lattn_prism_p2_step(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, const float *x,
                                           float *y, float *state);


#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>ttt                                                                                            */
/* ================================================================================================ */
/* TTT-Linear and TTT-MLP (Sun et al. 2024, "Learning to (Learn at Test Time)"; the official
   test-time-training/ttt-lm-pytorch ttt.py; spec gdn_prism_ttt.md §5). The state of a head is the
   weights of an inner model f trained by gradient descent while the sequence is read:
       f(x) = x + LN(z(x)),  z(x) = x W1 + b1                 (TTT-Linear, W1: K x K)
                             z(x) = gelu_tanh(x W1 + b1) W2 + b2   (TTT-MLP, W1: K x 4K, W2: 4K x K)
       loss of token j:  ½ |LN(z(k_j)) - (v_j - k_j)|²    (LN: per-head γ, β, biased variance, eps 1e-6)
   Mini-batch gradient descent with mini-batch b: every gradient G_j of a mini-batch is taken at the
   weights W0 of its start, and token i of the mini-batch (i = 0..b-1) reads with
       W_i = W0 - tok_i Σ_{j<=i} lr_j ∇_W loss_j(W0)          (the same for every bias)
       o_i = q_i + LN(z_i(q_i)) under W_i                       (read after the write)
   where lr_j (the key token's learning rate, [B][T][H]) and tok_i >= 0 (the query position's factor,
   [b]) are given; the layer below makes them as the official code does. The next mini-batch starts
   from W_{b-1}. b = 1 is online gradient descent. A sequence whose length is not a multiple of b ends
   in a short mini-batch of r tokens that reads with tok_0..tok_{r-1} (the official TTTBase.forward);
   it is simply a mini-batch still open, so the state below carries it and a later call continues
   it exactly (the official code cannot continue such a state; its final weights are W_{r-1}, see
   lattn_ttt_weights).
   Gradients (the official ln_fused_l2_bwd, and gelu_bwd with its truncated constants 0.79788456 and
   0.1070322243; the forward gelu_tanh uses sqrt(2/π) in full):
       ẑ = (z - μ)/σ,  e = γ ẑ + β - (v - k),  g = e γ,   G = (K g - Σg - ẑ Σ(g ẑ)) / (K σ)
       TTT-MLP: G2 = G at z, G1 = (G2 W2ᵀ) ∘ gelu_tanh'(k W1 + b1)
   Forms (>>verbs), all with the same semantics:
     _ref     per token in double: the update of each token written out (the teaching form)
     _chunk   float32, the official dual form (spec §5.5), one GEMM-sized step per mini-batch, the
              per-token weights never formed:
                  Z̄ = Q W0 + b0 - tok ∘ (Q A_prev + a_prev) - (η ∘ tril(Q Xᵀ)) G - tril(η) G,
                  η_ij = tok_i lr_j;  A += (lr ∘ X)ᵀ G
              (TTT-MLP runs it on layer 1 with Q = q, X = k, then on layer 2 with Q = gelu(Z̄1),
              X = gelu(k W1 + b1))
     _step    float32, the primal form, which can stop after any token (T = 1 is one decoding step):
              the accumulated gradient A = Σ_{j<=i} lr_j x_jᵀ G_j is updated by a rank-one product
              per token and each query reads q (W0 - tok_i A); the gradients of the tokens at hand
              come from one GEMM at W0
   Fast weights of a head, P = lattn_ttt_params(K, mlp) floats: W1 [K][K1], b1 [K1], and for TTT-MLP
   W2 [K1][K], b2 [K] (K1 = K or 4K). State of a head, 2P floats: the fast weights at the start of
   the open mini-batch, then the accumulated gradient (A for each weight, Σ lr_j G_j for each bias;
   zero at a mini-batch boundary). Shapes: q, k, v, o [B][T][H][K]; lr [B][T][H]; tok [b]; ln_w, ln_b
   [H][K]; h0, ht [N][H][2P] (N = B, or n_seqs with offsets); pos0 [N] the tokens already in each
   sequence's open mini-batch (NULL: 0); after a call it is (pos0 + length) mod b, which the caller
   keeps. Threads split the (sequence, head) pairs: bit-identical for every thread count. */
typedef struct lattn_ttt_args {
    int64_t B, T, H, K;
    int mlp;                             /* 0: TTT-Linear; 1: TTT-MLP (hidden 4K) */
    int64_t mini_batch;                  /* b >= 1 */
    const float *q, *k, *v, *lr, *tok, *ln_w, *ln_b;
    const float *h0;                     /* initial state (required) */
    const int64_t *pos0;                 /* optional, each in [0, b) */
    const int64_t *offsets;              /* optional: B == 1, offsets[0..n_seqs] */
    int64_t n_seqs;
    float *o;
    float *ht;                           /* final state (optional; may equal h0) */
} lattn_ttt_args;
/* Floats of one head's fast weights (P); LATTN_E_SHAPE for K < 1 or K > 2^14. */
LATTN_API lattn_status lattn_ttt_params(int64_t K, int mlp, size_t *out);
LATTN_API lattn_status lattn_ttt_ref  (lattn_ctx *ctx, const lattn_ttt_args *a);
LATTN_API lattn_status lattn_ttt_chunk(lattn_ctx *ctx, const lattn_ttt_args *a);
LATTN_API lattn_status lattn_ttt_step (lattn_ctx *ctx, const lattn_ttt_args *a);
/* The fast weights after the last token read, from one head's state s [2P] and its open mini-batch
   position pos: w = s[0..P) - tok_{pos-1} s[P..2P) (w = s[0..P) when pos = 0); w [P]. */
LATTN_API void lattn_ttt_weights(int64_t K, int mlp, const float *tok, int64_t pos, const float *s, float *w);

#ifndef LATTN_NO_MODELS
/* The TTT layer (TTTLinear / TTTMLP .forward, spec §5.1), x [B][T][D] -> y [B][T][D], H heads of
   F = D/H:
       q, k, v = x W_qᵀ, x W_kᵀ, x W_vᵀ;  RoPE on q and k at position (t mod b), interleaved pairs
         (2i, 2i+1) rotated by (t mod b)·θ^(-2i/F)  (the official permute/rotate_half/unpermute)
       lr_t,h = base_lr · σ(<lr_w[h], x_t> + lr_b[h]) / F;   tok_i = max(0, 1/(i+1) + token_idx[i])
       o = the inner loop above;  y = (LN_post(o) [∘ gelu_tanh(x W_gᵀ)]) W_oᵀ   (eps 1e-6, affine)
   Tensors under the official names and shapes: q_proj.weight, k_proj.weight, v_proj.weight,
   o_proj.weight [D][D]; learnable_ttt_lr_weight [H][1][D]; learnable_ttt_lr_bias [H][1];
   learnable_token_idx [b]; ttt_norm_weight, ttt_norm_bias [H][F]; W1 [H][F][F1]; b1 [H][1][F1];
   (TTT-MLP) W2 [H][F1][F], b2 [H][1][F]; post_norm.weight, post_norm.bias [D]; (use_gate)
   g_proj.weight [D][D]. lattn_ttt_layer_init draws them as the official module does: projections and the
   fast weights N(0, 0.02²), the lr weight N(0, 0.02²), biases and token_idx 0, norms 1 and 0.
   State of one sequence (lattn_ttt_state_floats = H·2P + 1): the heads' states, then the open
   mini-batch's position as a float; state NULL = a fresh sequence from W1, b1 (W2, b2). */
typedef struct lattn_ttt_config {
    int64_t D, H, mini_batch;
    int mlp, use_gate;
    double base_lr, rope_theta;          /* 1, 10000 */
    int64_t ffn;                         /* 0: the TTT layer alone; > 0: the official Block around it */
} lattn_ttt_config;
/* With ffn > 0 the layer is the official Block (ttt.py Block, pre_conv off as in every published
   configuration; RMSNorm eps 1e-6):
       h = x + TTT(RMSNorm(x)·seq_norm);   y = h + W_down (SiLU(W_gate f) ⊙ W_up f),  f = RMSNorm(h)·ffn_norm
   with the extra tensors seq_norm.weight, ffn_norm.weight [D], mlp.gate_proj.weight,
   mlp.up_proj.weight [ffn][D], mlp.down_proj.weight [D][ffn], and the TTT layer's under
   "seq_modeling_block.". The state is the TTT layer's. */
LATTN_API lattn_ttt_config lattn_ttt_config_default(void);   /* the 1b shapes: D 2048, H 32, b 16, linear */
typedef struct lattn_ttt_layer {
    lattn_ttt_config cfg;
    float *arena; size_t n_params;
    float *q_w, *k_w, *v_w, *o_w, *g_w, *lr_w, *lr_b, *tok_idx, *ln_w, *ln_b, *W1, *b1, *W2, *b2, *post_w, *post_b;
    float *seq_norm, *ffn_norm, *gate_w, *up_w, *down_w;   /* the Block (ffn > 0) */
    lattn_tensor *tensors;
    int64_t n_tensors; /* the arena's tensors under their file names; the fields above view it */
} lattn_ttt_layer;
LATTN_API lattn_status lattn_ttt_layer_init(lattn_ctx *ctx, lattn_ttt_layer *m, const lattn_ttt_config *c, uint64_t seed);
LATTN_API void lattn_ttt_layer_free(lattn_ctx *ctx, lattn_ttt_layer *m);
LATTN_API lattn_tensor *lattn_ttt_layer_tensor(const lattn_ttt_layer *m, const char *name);
/* The tensors under their official names after prefix (sizes from the shapes; TTT-MLP when W2 is
   present; use_gate when g_proj.weight is; the Block when seq_norm.weight is), with metadata
   "ttt.base_lr" and "ttt.rope_theta" when present (else 1 and 10000); LATTN_E_FORMAT for anything
   missing or misshapen, *m then empty. */
LATTN_API lattn_status lattn_ttt_layer_init_st(lattn_ctx *ctx, lattn_ttt_layer *m, const lattn_st_file *f, const char *prefix);
LATTN_API lattn_status lattn_ttt_layer_serialize(lattn_ctx *ctx, const lattn_ttt_layer *m, unsigned char **out, size_t *size);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_ttt_layer_save(lattn_ctx *ctx, const lattn_ttt_layer *m, const char *path);
LATTN_API lattn_status lattn_ttt_layer_init_file(lattn_ctx *ctx, lattn_ttt_layer *m, const char *path);
#endif
LATTN_API lattn_status lattn_ttt_state_floats(const lattn_ttt_config *c, size_t *out);
/* One fresh sequence's state: every head's fast weights from the layer's W1, b1 (W2, b2), zero
   gradients, position 0. */
LATTN_API void lattn_ttt_layer_state_init(const lattn_ttt_layer *m, float *state);
/* Layer forms: _ref in double throughout (projections, RoPE, the per-token inner loop); forward in
   float32 (threaded GEMMs, the inner loop by lattn_ttt_chunk, the dual form); step in float32 with
   the inner loop by lattn_ttt_step (the primal form; T = 1 is one decoding step). state NULL or
   [B][state floats], initial in, final out. */
LATTN_API lattn_status lattn_ttt_layer_forward_ref(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, int64_t T,
                                                   const float *x, float *y, float *state, double *y64);
LATTN_API lattn_status lattn_ttt_layer_forward(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, int64_t T,
                                               const float *x, float *y, float *state);
LATTN_API lattn_status lattn_ttt_layer_step(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, const float *x,
                                            float *y, float *state);

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>attn                                                                                           */
/* ================================================================================================ */
/* Softmax attention (Vaswani et al. 2017), the baseline every linear-attention paper measures itself
   against. Per sequence, query head h and query token i (sequence-local indices):
       o_i = Σ_{j ∈ vis(i)} p_ij v_j,   p_ij = e^{s·q_i·k_j - m_i} / ℓ_i,
       m_i = max_{j ∈ vis(i)} s·q_i·k_j,   ℓ_i = Σ_{j ∈ vis(i)} e^{s·q_i·k_j - m_i},   lse_i = m_i + ln ℓ_i
   with k_j, v_j of the key/value head h / (H / H_kv) (grouped-query attention; H_kv = H is
   multi-head attention, H_kv = 1 multi-query). A row that sees no key gives o_i = 0, lse_i = -inf.
   Visibility vis(i) = { j : visible(i, j) }, from the mask:
       LATTN_MASK_CAUSAL   j <= i
       LATTN_MASK_WINDOW   i - window <= j <= i      (the window is inclusive: window + 1 keys, as
                                                      flash-attn's window_size = (window, 0))
       LATTN_MASK_FULL     every j (bidirectional)
       LATTN_MASK_FN       visible(mask_user, n, i, j) != 0 for sequence n (batch row, or the
                           n-th sequence of the offsets), any j < len (it need not be causal);
                           visible_block (optional) classifies a block of queries [i0, i1) against
                           keys [j0, j1) as LATTN_VIS_NONE, LATTN_VIS_ALL or LATTN_VIS_SOME, so the
                           tiled form skips invisible tiles and skips the mask on fully visible ones.
   Sequences (batch rows, or the offsets of a variable-length batch) never see each other.
   Forms (>>verbs): _ref (the formula in double), _chunk (the flash-attention schedule on the
   tiler, below), _step (token by token against a KV cache).

   The flash-attention schedule (Dao et al. 2022, FlashAttention-2 2023): query tiles of C rows; for
   each, the visible key tiles of C keys in order, with the running row max m, sum ℓ and output
   accumulator O kept on chip (online softmax):
       S = (s·Q)·Kᵀ                  (TensorE; s folded into the Q tile)
       S = select(mask, S, -inf)     (only tiles the mask classifies as partial)
       m' = max(m, rowmax S);   c = e^{m - m'};   P = e^{S - m'} with its row sums r (one ScalarE op)
       ℓ = c·ℓ + r;   O = c·O + P·V  (Pᵀ by a TensorE transpose);   m = m'
   and at the end O / ℓ and lse = m + ln ℓ. Fully invisible tiles are never visited; m starts at
   -FLT_MAX, so a row with no visible key so far gets P = 0 and c = 1 (no NaN from -inf - -inf).

   Shapes: q [B][T][H][K], k [B][T][H_kv][K], v [B][T][H_kv][V], o [B][T][H][V], lse [B][T][H]. */
typedef enum lattn_mask {
    LATTN_MASK_CAUSAL, LATTN_MASK_WINDOW, LATTN_MASK_FULL, LATTN_MASK_FN
} lattn_mask;
enum { LATTN_VIS_NONE = 0, LATTN_VIS_ALL = 1, LATTN_VIS_SOME = 2 };
typedef int (*lattn_visible_fn)(const void *user, int64_t n, int64_t i, int64_t j);
typedef int (*lattn_visible_block_fn)(const void *user, int64_t n, int64_t i0, int64_t i1, int64_t j0, int64_t j1);

typedef struct lattn_attn_args {
    int64_t B, T, H, H_kv, K, V;         /* H_kv = 0 means H */
    const float *q, *k, *v;
    lattn_mask mask;
    int64_t window;                      /* LATTN_MASK_WINDOW: keys i - window .. i (window >= 0) */
    lattn_visible_fn visible;            /* LATTN_MASK_FN */
    lattn_visible_block_fn visible_block;   /* optional */
    const void *mask_user;
    double scale;                        /* 0 = K^-1/2 */
    const int64_t *offsets;              /* optional: B == 1, offsets[0..n_seqs] */
    int64_t n_seqs;
    float *o;
    float *lse;                          /* optional */
    double *o64, *lse64;                 /* _ref only, optional: float64 copies of o, lse */
    int chunk;                           /* _chunk: query and key tile rows (0 = the profile's
                                            attention tile: cpu 128, trn 128, gpu 64) */
} lattn_attn_args;

/* A KV cache for _step: entries [0, len[b]) of sequence b are filled (keys after any positional
   rotation the caller applied). k [B][cap][H_kv][K], v [B][cap][H_kv][V], len [B]; all caller memory. */
typedef struct lattn_kv_cache {
    int64_t B, cap, H_kv, K, V;
    float *k, *v;
    int64_t *len;
} lattn_kv_cache;

LATTN_API lattn_status lattn_attn_ref  (lattn_ctx *ctx, const lattn_attn_args *a);
LATTN_API lattn_status lattn_attn_chunk(lattn_ctx *ctx, const lattn_attn_args *a);
/* Gradients for ℒ = Σ ⟨dout, o⟩ + Σ ⟨dlse, lse⟩ (every output optional; dk, dv summed over the
   query heads that share a key head; a query that sees no key contributes nothing). */
typedef struct lattn_attn_grads {
    const float *dout, *dlse;            /* [B][T][H][V] (required), [B][T][H] (NULL: zero) */
    float *dq;                           /* [B][T][H][K] */
    float *dk, *dv;                      /* [B][T][H_kv][K], [B][T][H_kv][V] */
    double *dq64, *dk64, *dv64;
} lattn_attn_grads;
/* The backward of _ref in double, query by query: the softmax recomputed, then
   dS = P ⊙ (dP - rowsum(dO ⊙ O) + dlse) with dP = dO Vᵀ; dQ = s·dS K, dK = s·dSᵀ Q, dV = Pᵀ dO. */
LATTN_API lattn_status lattn_attn_ref_backward(lattn_ctx *ctx, const lattn_attn_args *a, const lattn_attn_grads *g);
/* The same gradients in float32 by the flash-attention backward on the tiler (>>attn.chunk_backward):
   P recomputed tile by tile from the forward's saved a->o and a->lse (both set: read as the forward
   of this call wrote them; either NULL: the forward runs first, into workspace), nothing of size T²
   kept. The float64 outputs are _ref_backward's only. */
LATTN_API lattn_status lattn_attn_chunk_backward(lattn_ctx *ctx, const lattn_attn_args *a, const lattn_attn_grads *g);
/* _step with a cache c: one decoding step, T == 1 (no offsets): for each b the new k, v are stored
   at entry len[b] of the cache, the query i = len[b] attends to the visible entries of [0, len[b]],
   and len[b] grows by one. The cache's shapes must match the call (H_kv, K, V) and len[b] < cap.
   c = NULL: token by token over the whole call (batch or variable lengths), the call's own k and v
   serving as the cache, as a decoder runs it. */
LATTN_API lattn_status lattn_attn_step (lattn_ctx *ctx, const lattn_attn_args *a, lattn_kv_cache *c);

#ifndef LATTN_NO_MODELS
/* ================================================================================================ */
/* >>transformer                                                                                    */
/* ================================================================================================ */
/* The pre-norm softmax transformer: the baseline of the linear-attention papers and the "Standard"
   model of the SPS paper (spec sps.md §2–3; the Llama recipe without biases). Per layer, rows h:
       a = RMSNorm(h)·g_attn                      (RMSNorm(x) = x / sqrt(mean(x²) + eps), eps 1e-6)
       q | k | v = a·W_qkvᵀ                       (W_qkv rows: q [0, H·hd), k, v [H_kv·hd each])
       q, k = RoPE(q, pos), RoPE(k, pos)          (per head, interleaved pairs (u_2j, u_2j+1) turned
                                                   by pos·θ^(-2j/hd), θ = 10000; never v)
       h = h + Attn(q, k, v)·W_oᵀ                 (causal softmax attention, s = hd^-1/2, >>attn;
                                                   window >= 0: the causal sliding window)
       b = RMSNorm(h)·g_mlp
       h = h + (SiLU(b·W_gᵀ) ⊙ b·W_uᵀ)·W_dᵀ       (SwiGLU, hidden ffn = 3d in the paper)
   Model: h⁰ = E[token] (no scaling, no absolute positions) → n_layers layers → RMSNorm·g_f →
   logits = ·Eᵀ (tied). vocab = 0 leaves out the embedding, the final norm and the head: hidden
   states [B][T][d] in and out (the blocks alone, as a layer of a host model).
   Weights (one arena of named tensors):
       wte.weight [vocab][d]                      norm.weight [d]                    (vocab > 0)
       layers.{l}.attn_norm.weight [d]            layers.{l}.attn.qkv_proj.weight [(H+2H_kv)·hd][d]
       layers.{l}.attn.c_proj.weight [d][H·hd]    layers.{l}.mlp_norm.weight [d]
       layers.{l}.mlp.gate_proj.weight, layers.{l}.mlp.up_proj.weight [ffn][d]
       layers.{l}.mlp.down_proj.weight [d][ffn]
   lattn_tf_init (spec §3, GPT-2's recipe): every matrix and the embedding N(0, 0.02²), then the
   attention output projections c_proj redrawn from N(0, (0.02/√(2L))²); norm gains 1.
   Parameters: vocab·d + L·(d·(H+2H_kv)·hd + H·hd·d + 3·d·ffn + 2d) + d, which is the paper's
   V·d + L(13d² + 2d) + d when H·hd = d, H_kv = H and ffn = 3d.
   Decoding keeps a KV cache per layer (lattn_tf_cache, keys stored after RoPE at their position). */
typedef struct lattn_tf_config {
    int64_t n_layers, D, H, H_kv, K, ffn, vocab;   /* width D; H query and H_kv key/value heads of K */
    int64_t window;                       /* -1: causal attention; >= 0: keys i - window .. i */
    double rope_theta;                    /* 10000 */
    float norm_eps;                       /* 1e-6 */
} lattn_tf_config;
/* The SPS paper's scales (spec sps.md §3 table), vocab 50304: "xs" 53,027,328 parameters, "s"
   130,665,216, "m" 378,717,184, "l" 831,253,760, "xl" 1,678,081,600. n_layers = 0 for an unknown name. */
LATTN_API lattn_tf_config lattn_tf_config_sps(const char *scale);
/* A small model for tests and examples: 2 layers, d 64, 4 heads of 16 (2 KV heads), ffn 192, vocab 256. */
LATTN_API lattn_tf_config lattn_tf_config_small(void);
/* The parameter count above; LATTN_E_SHAPE on overflow or an invalid configuration. */
LATTN_API lattn_status lattn_tf_params(const lattn_tf_config *c, size_t *out);

typedef struct lattn_tf_model {
    lattn_tf_config cfg;
    float *arena; size_t n_params;
    lattn_tensor *tensors;
    int64_t n_tensors;
} lattn_tf_model;
LATTN_API lattn_status lattn_tf_init(lattn_ctx *ctx, lattn_tf_model *m, const lattn_tf_config *c, uint64_t seed);
LATTN_API void lattn_tf_free(lattn_ctx *ctx, lattn_tf_model *m);
LATTN_API lattn_tensor *lattn_tf_tensor(const lattn_tf_model *m, const char *name);
/* Weights as safetensors (configuration as "tf.<field>" in __metadata__), and back (LATTN_E_FORMAT
   for a missing or misshapen tensor, *m then empty). */
LATTN_API lattn_status lattn_tf_serialize(lattn_ctx *ctx, const lattn_tf_model *m, unsigned char **out, size_t *size);
LATTN_API lattn_status lattn_tf_init_st(lattn_ctx *ctx, lattn_tf_model *m, const lattn_st_file *f, const char *prefix);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_tf_save(lattn_ctx *ctx, const lattn_tf_model *m, const char *path);
LATTN_API lattn_status lattn_tf_init_file(lattn_ctx *ctx, lattn_tf_model *m, const char *path);
#endif

/* KV cache of B sequences with room for cap tokens: k, v [n_layers][B][cap][H_kv][head_dim],
   len [n_layers][B] (lattn_kv_cache views of each layer), pos [B] the position of the next token. */
typedef struct lattn_tf_cache {
    int64_t B, cap, n_layers, H_kv, K;
    float *k, *v;
    int64_t *len, *pos;
} lattn_tf_cache;
LATTN_API lattn_status lattn_tf_cache_init(lattn_ctx *ctx, lattn_tf_cache *c, const lattn_tf_model *m, int64_t B, int64_t cap);
LATTN_API void lattn_tf_cache_free(lattn_ctx *ctx, lattn_tf_cache *c);
/* Forget sequence b (a new document starts at position 0). */
LATTN_API void lattn_tf_cache_reset(lattn_tf_cache *c, int64_t b);

/* Forward over B sequences of T tokens (positions 0 .. T-1). Input tokens [B][T] when vocab > 0,
   else x [B][T][d]. Output logits [B][T][vocab] (hidden states [B][T][d] when vocab = 0); may be
   NULL when only the loss is wanted. loss (optional, vocab > 0): the mean next-token cross-entropy
   -ln softmax(logits[b][t])[tokens[b][t+1]] over the B·(T-1) predictions (NaN when T < 2).
   cache (optional, fast form): an empty cache (len 0) receives the T tokens' keys and values, so
   decoding continues with lattn_tf_step (prefill). _ref: each sequence token by token in double
   with a KV cache in double (the teaching form); the fast form: threaded GEMMs, lattn_attn_chunk. */
LATTN_API lattn_status lattn_tf_forward_ref(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, int64_t T,
                                            const int32_t *tokens, const float *x, float *logits, double *loss,
                                            double *logits64);
LATTN_API lattn_status lattn_tf_forward(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, int64_t T,
                                        const int32_t *tokens, const float *x, float *logits, double *loss,
                                        lattn_tf_cache *cache);
/* One decoding step of B sequences: tokens [B] (or x [B][d]) at position cache->pos[b] -> logits
   [B][vocab] (or hidden [B][d]); the cache grows by one entry per layer. */
LATTN_API lattn_status lattn_tf_step(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, const int32_t *tokens,
                                     const float *x, float *logits, lattn_tf_cache *cache);

/* ================================================================================================ */
/* >>sps                                                                                            */
/* ================================================================================================ */
/* The State-Prediction Separation transformer (Monea, Godey, Brantley, Artzi 2026; spec sps.md).
   After each input token x_i a <predict> token ρ (one vocabulary id) is interleaved: slot 2i holds
   x_i, slot 2i+1 holds ρ_i, both at RoPE position i (positions global, not restarting per
   document). The backbone is lattn's transformer (>>transformer) with the same weights; only the
   mask, the interleaving and the readout change. Visibility (§1; a = query slot of token i, b = key
   slot of token k, same document; "persistent" keys are always visible, "windowed" keys only when
   i - k <= w, inclusive, in token units):
       Standard        no ρ at all: plain causal attention over the tokens; logits from x_i
       SPS(w)          persistent x, windowed ρ; causal in slot order (x_i never sees ρ_i); logits from ρ_i
       2x Memory       SPS with w = ∞ (every ρ kept)
       Delayed State   persistent ρ, windowed x; logits from ρ_i
       Reverse SPS     the Delayed State mask; logits from x_i
   Documents end at EOS (the EOS belongs to the document it ends); no key crosses a document. Pads
   are left pads only, as in the official code (lil-lab/sps model.py): each pad is a document of its
   own, so no real token attends to a pad ([pad, pad, 5, 7, EOS, 9] has documents 0, 1, 2, 2, 2, 3),
   and a pad after a real token of its row is refused (LATTN_E_DOMAIN). The loss is the mean
   next-token cross-entropy over the readouts of tokens that are neither EOS nor pad.
   Decoding keeps, per layer, the persistent-slot K/V of the current document (a list) and the last
   w windowed-slot K/V (a ring of max(w, 1) entries; 2x Memory keeps every one), reset at EOS; one
   step runs the two rows [x_t; ρ] through the model at position p, each row attending to ring ∪
   list ∪ {k_x} (the ρ row also to its own k_ρ), then pushes the windowed row and appends the
   persistent row (§4). Memory per sequence: (n + min(w, n))·2·L·d_kv·bytes against n·2·L·d_kv·bytes. */
typedef enum lattn_sps_variant {
    LATTN_SPS_STANDARD, LATTN_SPS_SPS, LATTN_SPS_2X_MEMORY, LATTN_SPS_DELAYED, LATTN_SPS_REVERSE
} lattn_sps_variant;
typedef struct lattn_sps_config {
    lattn_sps_variant variant;
    int64_t w;                            /* window, >= 0 (64 in every paper experiment) */
    int32_t predict_id, eos_id, pad_id;   /* GPT-2 vocabulary: 50257, 50256, 50303; eos, pad -1 = none */
} lattn_sps_config;
/* w = 64 and the GPT-2 ids (the paper's vocabulary of 50304). */
LATTN_API lattn_sps_config lattn_sps_config_default(lattn_sps_variant v);
LATTN_API const char *lattn_sps_variant_name(lattn_sps_variant v);   /* "standard", "sps", "2x_memory", ... */
/* The visibility rule on document-local slot indices in natural order (token indices for
   Standard); cfg is a const lattn_sps_config *, n (the sequence) is not used: ready to use as
   lattn_attn_args.visible / visible_block with the slots of each document as one sequence. */
LATTN_API int lattn_sps_visible(const void *cfg, int64_t n, int64_t a, int64_t b);
LATTN_API int lattn_sps_visible_block(const void *cfg, int64_t n, int64_t a0, int64_t a1, int64_t b0, int64_t b1);
/* Bytes of KV cache for one sequence after n context tokens, bytes_per_elem per value. */
LATTN_API double lattn_sps_kv_bytes(const lattn_tf_config *c, const lattn_sps_config *s, int64_t n, int bytes_per_elem);

/* Forward over B sequences of T input tokens (ids in [0, vocab)): logits [B][T][vocab] of each
   token's readout slot (may be NULL), loss (optional). _ref in double, row by row; the fast form
   on lattn_attn_chunk with the variant's visibility function and its block classifier. */
LATTN_API lattn_status lattn_sps_forward_ref(lattn_ctx *ctx, const lattn_tf_model *m, const lattn_sps_config *s,
                                             int64_t B, int64_t T, const int32_t *tokens, float *logits, double *loss,
                                             double *logits64);
LATTN_API lattn_status lattn_sps_forward(lattn_ctx *ctx, const lattn_tf_model *m, const lattn_sps_config *s,
                                         int64_t B, int64_t T, const int32_t *tokens, float *logits, double *loss);

/* Decoding state of B sequences, cap tokens of one document at most: per layer and sequence the
   persistent list k, v [cap][H_kv·hd] and the ring rk, rv [ring][H_kv·hd] (ring = max(w, 1), cap
   for 2x Memory, 0 for Standard); counts list_len, ring_len, ring_pos [L][B]; pos [B] (tokens
   seen) and doc_start [B] (1: the next token starts a document; 2: and the row has seen no real
   token yet, so a left pad may still come). */
typedef struct lattn_sps_cache {
    int64_t B, cap, ring, n_layers, width;   /* width = H_kv·hd */
    lattn_sps_config cfg;
    float *k, *v, *rk, *rv;
    int64_t *list_len, *ring_len, *ring_pos, *pos;
    int *doc_start;
} lattn_sps_cache;
LATTN_API lattn_status lattn_sps_cache_init(lattn_ctx *ctx, lattn_sps_cache *c, const lattn_tf_model *m,
                                            const lattn_sps_config *s, int64_t B, int64_t cap);
LATTN_API void lattn_sps_cache_free(lattn_ctx *ctx, lattn_sps_cache *c);
/* Prefill: the dense forward over a prompt (logits required, loss as lattn_sps_forward), then the cache holds
   the prompt's last document: its persistent K/V in the list and its last min(w, n_doc) windowed
   K/V in the ring (oldest first), pos = T, doc_start as after the prompt's last token (EOS or pad).
   The cache must be fresh. */
LATTN_API lattn_status lattn_sps_prefill(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, int64_t T,
                                         const int32_t *tokens, float *logits, double *loss, lattn_sps_cache *c);
/* One step: tokens [B] -> logits [B][vocab] (the readout row); the cache advances one token. */
LATTN_API lattn_status lattn_sps_step(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, const int32_t *tokens,
                                      float *logits, lattn_sps_cache *c);

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>optim                                                                                          */
/* ================================================================================================ */
/* AdamW (Loshchilov & Hutter 2019) exactly as PyTorch's torch.optim.AdamW single-tensor path
   (spec muon.md §2), step t = 1, 2, ...; m, v zero before the first step:
       w  = w·(1 - lr·wd)                       decoupled decay first
       m  = lerp(m, g, 1 - β1)                  = m + (1-β1)(g - m)  (PyTorch's lerp for a weight < 0.5)
       v  = v·β2 + ((1 - β2)·g)·g               (mul, then addcmul)
       den = sqrt(v) / sqrt(1 - β2^t) + eps
       w  = w + ((-lr / (1 - β1^t))·m) / den    (addcdiv)
   the bias corrections in double, every array operation in the arrays' precision with the scalars
   rounded to it first, in PyTorch's operand order: the float32 step reproduces PyTorch's float32
   run bit for bit, the float64 step its float64 run. A NaN gradient makes that element's w, m and v
   NaN (as in PyTorch); the other elements are unaffected. Hyper-parameters are refused unless
   lr >= 0, eps >= 0, wd >= 0 and 0 <= β < 1 (PyTorch's checks), all finite. */
typedef struct lattn_adamw_config { double lr, beta1, beta2, eps, weight_decay; } lattn_adamw_config;
LATTN_API lattn_adamw_config lattn_adamw_default(void);     /* PyTorch's: 1e-3, (0.9, 0.999), 1e-8, 1e-2 */
LATTN_API lattn_status lattn_adamw_step(lattn_ctx *ctx, const lattn_adamw_config *c, int64_t t, size_t n,
                                        float *w, const float *g, float *m, float *v);
LATTN_API lattn_status lattn_adamw_step64(lattn_ctx *ctx, const lattn_adamw_config *c, int64_t t, size_t n,
                                          double *w, const double *g, double *m, double *v);
/* Muon (K. Jordan et al. 2024, KellerJordan/Muon muon_update; spec muon.md §1) for one R x C
   matrix W (nn.Linear layout), gradient G, momentum M (zero before the first step):
       M = lerp(M, G, 1 - β)              = M + (1-β)(G - M)
       U = lerp(G, M, β) (Nesterov)       = M - (M - G)(1 - β), written into G as the reference does;
                                            U = M without Nesterov
       O = NS5(U) · s;                    W = W·(1 - lr·wd);    W = W - lr·O
   with the shape scale s = sqrt(max(1, R/C)) (the reference's, LATTN_MUON_SCALE_SHAPE_RATIO) or
   s = 0.2·sqrt(max(R, C)) (LATTN_MUON_SCALE_RMS_MATCH, Moonlight's: the update's RMS near AdamW's).
   NS5, the quintic Newton-Schulz "zeroth power" with (a, b, c) = (3.4445, -4.7750, 2.0315): on the
   wide orientation (X = Uᵀ when R > C), X = X / (‖X‖_F + 1e-7), then steps times A = X Xᵀ,
   B = b·A + c·A·A, X = a·X + B X. lattn_muon_ns5 runs it in float32 on the SGEMM kernel, A and
   A·A as their lower halves mirrored (they are symmetric; 3m²n + m³ multiply-adds per step instead
   of 4m²n + 2m³); the reference runs it in bf16, lattn's float32 is spec §1.1's LATTN_NS_FP32 mode;
   lattn_muon_ns5_64 runs it in double (the golden form). Defaults (lattn_muon_default): lr 0.02,
   momentum 0.95, weight decay 0, Nesterov, 5 steps, LATTN_NS_FP32, the shape-ratio scale. A NaN or infinity anywhere in G reaches the Frobenius norm, so
   the whole matrix's update and W become NaN (as in the reference); M is NaN where G was. */
typedef enum lattn_ns_mode {
    LATTN_NS_FP32,                       /* every operation in float32 */
    LATTN_NS_BF16                        /* the reference's: every operation's result rounded to bf16 (GEMMs
                                            accumulate in float32 and round once; the norm is a float32 sum) */
} lattn_ns_mode;
typedef enum lattn_muon_scale { LATTN_MUON_SCALE_SHAPE_RATIO, LATTN_MUON_SCALE_RMS_MATCH } lattn_muon_scale;
typedef struct lattn_muon_config {
    double lr, momentum, weight_decay;
    int nesterov, ns_steps;
    lattn_ns_mode ns_mode;
    lattn_muon_scale scale;
} lattn_muon_config;
LATTN_API lattn_muon_config lattn_muon_default(void);
LATTN_API lattn_status lattn_muon_ns5   (lattn_ctx *ctx, int64_t R, int64_t C, int steps, lattn_ns_mode mode, const float *G, float *X);
LATTN_API lattn_status lattn_muon_ns5_64(lattn_ctx *ctx, int64_t R, int64_t C, int steps, const double *G, double *X);
LATTN_API lattn_status lattn_muon_step  (lattn_ctx *ctx, const lattn_muon_config *c, int64_t R, int64_t C, float *W, float *G, float *M);
LATTN_API lattn_status lattn_muon_step64(lattn_ctx *ctx, const lattn_muon_config *c, int64_t R, int64_t C, double *W, double *G, double *M);
/* Sharded Muon (spec muon.md §4-§5; the Laplace 3B port's optimizer step under FSDP2). Rank ρ of R
   holds rows [ρ·⌈r/R⌉, min((ρ+1)·⌈r/R⌉, r)) of every r x c matrix (torch.chunk's split, which FSDP2
   uses: trailing ranks may hold fewer rows or none; lattn_shard_rows gives a rank's rows) for the
   weight, the gradient and the momentum. Momentum, Nesterov, decay and update are elementwise and run
   on the shards; NS5 needs the whole matrix, so whole matrices are moved to where NS runs:
     LATTN_MUON_A2A         two all_to_all exchanges: every rank sends its rows of matrix i to the
                            owner of i, which assembles it in rank order, runs NS5 and sends each rank
                            its rows of the update (the production scheme);
     LATTN_MUON_GATHER      every rank sends all its rows to rank 0, which runs NS5 on every matrix
                            and broadcasts all updates (the naive scheme);
     LATTN_MUON_ALL_GATHER  one all_gather of all rows; every rank runs NS5 on every matrix.
   Every scheme gives each rank exactly the bits lattn_muon_step gives the whole matrix (the same
   elementwise code, byte copies, NS5 on the assembled matrix with its full shape; tested for
   R = 1 .. 64). On the wire: float32, or bf16 in LATTN_NS_BF16 mode (NS5 rounds its input to bf16
   first and the update is a bf16 tensor, so nothing is lost). The owner plan (lattn_muon_plan):
   by layer (owner = layer mod R, the Laplace port's: a rank gets a layer's four matrices), round
   robin in the reference's order (shapes descending, matrix i of that order to rank i mod R), or
   greedy by size (LPT: largest first, each to the least-loaded rank).
   The collectives are the caller's (MPI, NCCL, torch.distributed, the in-process emulator of
   examples/comm_threads.h): each returns LATTN_OK or an error status, and every rank must see the
   same status (as a communicator failure is reported by MPI and NCCL). A failed collective stops the
   step with that status and leaves every weight, gradient and momentum unchanged. */
typedef struct lattn_comm {
    int rank, size;                      /* this rank in [0, size); size <= LATTN_MAX_RANKS */
    void *user;                          /* handed to every callback */
    /* send_bytes[r] bytes at send + send_off[r] go to rank r; recv_bytes[r] bytes from rank r land at
       recv + recv_off[r] (MPI_Alltoallv on bytes; the rank's own part included) */
    lattn_status (*all_to_all)(void *user, const void *send, const size_t *send_bytes, const size_t *send_off,
                               void *recv, const size_t *recv_bytes, const size_t *recv_off);
    /* rank r's bytes[r] bytes at buf + off[r] reach buf + off[r] of every rank (MPI_Allgatherv in place) */
    lattn_status (*all_gather)(void *user, void *buf, const size_t *bytes, const size_t *off);
    lattn_status (*broadcast)(void *user, void *buf, size_t bytes, int root);
    /* n doubles summed over the ranks in place, the same bits on every rank (for the caller's global
       reductions, such as a gradient norm over shards; the Muon step does not use it) */
    lattn_status (*all_reduce)(void *user, double *buf, size_t n);
} lattn_comm;
#define LATTN_MAX_RANKS 65536
typedef struct lattn_mat_desc { int64_t rows, cols; int layer; } lattn_mat_desc;   /* the whole matrix */
typedef enum lattn_muon_owner { LATTN_OWNER_BY_LAYER, LATTN_OWNER_ROUND_ROBIN, LATTN_OWNER_LPT } lattn_muon_owner;
typedef enum lattn_muon_scheme { LATTN_MUON_A2A, LATTN_MUON_GATHER, LATTN_MUON_ALL_GATHER } lattn_muon_scheme;
/* A rank's share of one step. Bytes sent to and received from other ranks in exchange 1 (the
   gradients) and 2 (the updates), the rank's own rows not counted; a broadcast's payload counts once,
   as sent by its root and received by each other rank. whole: bytes of the whole matrices the rank
   assembles (1) and hands back (2), its own rows included (the seed's counting). ns_flops: NS5 FLOPs
   the rank runs, ns_steps·(4m²n + 2m³) per m x n matrix (m <= n), spec §1.1's count. */
typedef struct lattn_muon_traffic { uint64_t sent[2], recv[2], whole[2]; double ns_flops; } lattn_muon_traffic;
LATTN_API void lattn_shard_rows(int64_t rows, int R, int rank, int64_t *start, int64_t *len);
/* owner[n]: the rank that runs NS5 on each matrix. */
LATTN_API lattn_status lattn_muon_plan(lattn_ctx *ctx, int R, int64_t n, const lattn_mat_desc *m, lattn_muon_owner policy, int *owner);
/* The traffic of one step for rank `rank` as a closed form of the plan (no data; any size). owner is
   ignored by the GATHER and ALL_GATHER schemes. */
LATTN_API lattn_status lattn_muon_traffic_of(lattn_ctx *ctx, const lattn_muon_config *c, int R, int rank, int64_t n, const lattn_mat_desc *m,
                                             const int *owner, lattn_muon_scheme scheme, lattn_muon_traffic *out);
/* One step on this rank's shards: W[i], G[i], M[i] hold rows lattn_shard_rows(m[i].rows, size, rank)
   of matrix i (NULL where the rank holds none); G is overwritten with the Nesterov blend as in
   lattn_muon_step. tr (optional) receives the bytes this step handed to the collectives. Collective:
   every rank calls it with the same c, n, m, owner and scheme. */
LATTN_API lattn_status lattn_muon_step_sharded(lattn_ctx *ctx, const lattn_muon_config *c, const lattn_comm *comm, int64_t n,
                                               const lattn_mat_desc *m, const int *owner, lattn_muon_scheme scheme,
                                               float *const *W, float *const *G, float *const *M, lattn_muon_traffic *tr);
/* >>optim.train: what a training loop needs around the optimizers --------------------------------- */
/* Learning-rate schedules, as a factor of the optimizers' base lr, for step t = 1, 2, ... (the
   optimizers' count); warm-up is linear, t / warmup for t <= warmup, reaching 1 at t = warmup:
     LATTN_LR_CONSTANT  1 after the warm-up;
     LATTN_LR_WSD       1, then over the last `decay` steps a linear fall to final_ratio at t = total
                        (warm-up, stable, decay: the SPS paper's 6e-4 to 6e-5 over the last 10 %,
                        final_ratio 0.1);
     LATTN_LR_COSINE    final_ratio + (1 - final_ratio)·(1 + cos(π·p))/2, p = (t - warmup)/(total -
                        warmup) (PRISM's: a floor of 0.1).
   Past `total` the factor stays at its value for t = total. LATTN_E_DOMAIN unless 0 <= warmup <=
   total, warmup + decay <= total (WSD), 0 <= final_ratio <= 1 and t >= 1. */
typedef enum lattn_lr_shape { LATTN_LR_CONSTANT, LATTN_LR_WSD, LATTN_LR_COSINE } lattn_lr_shape;
typedef struct lattn_lr_schedule {
    lattn_lr_shape shape;
    int64_t warmup, decay, total;        /* steps */
    double final_ratio;                  /* the factor at t = total (WSD, cosine) */
} lattn_lr_schedule;
LATTN_API lattn_status lattn_lr_factor(lattn_ctx *ctx, const lattn_lr_schedule *s, int64_t t, double *factor);
/* Gradient-norm clipping as PyTorch's clip_grad_norm_ (2-norm): norm = ‖g‖₂ over the n values, then
   g = g·min(1, max_norm / (norm + 1e-6)); *norm (optional) gets the norm before clipping. The sum of
   squares is taken in double, in blocks of 4096 added in order: the same bits for any thread count.
   comm (optional): g is this rank's shard and the sums of squares are added over the ranks with
   comm->all_reduce first, so every rank clips by the global norm. max_norm = INFINITY only measures.
   A NaN or infinite gradient makes the norm NaN or infinite and, as in PyTorch, every value NaN
   (factor NaN) or 0 and NaN (factor 0). LATTN_E_DOMAIN for max_norm <= 0 or NaN. */
LATTN_API lattn_status lattn_grad_clip(lattn_ctx *ctx, const lattn_comm *comm, size_t n, float *g, double max_norm, double *norm);

#ifndef LATTN_NO_MODELS
/* One optimizer step over a model's weights arena (its tensors[] table, n_tensors entries, data
   contiguous in table order as every lattn model lays them out). Each tensor has a rule: Muon or
   AdamW, decayed or not, an lr scale. lattn_optim_init's rules are spec muon.md §1.2's split when
   use_muon is set: Muon for the hidden matrices (2 dimensions, both > 1, a name without "emb",
   "wte", "lm_head" or "conv"), AdamW for the embeddings, convolution kernels and every vector;
   decay for every tensor of 2 or more dimensions, none for vectors (norm gains, biases; the SPS
   recipe). Change rules[] before the first step to set other groups. lattn_optim_step(ctx, o,
   factor, grads): grads holds the gradient of every weight at its arena offset; each tensor is
   updated with lr = base lr · factor · lr_scale (factor from a schedule), AdamW's tensors by
   lattn_adamw_step (consecutive tensors of the same rule in one call), Muon's by lattn_muon_step
   (grads of those tensors are overwritten with the Nesterov blend); o->t counts the steps. The
   state (AdamW's exp_avg, exp_avg_sq; Muon's momentum buffer) is float32 in the arena's layout:
   serialize and save write it as safetensors ("exp_avg.<name>", "exp_avg_sq.<name>",
   "momentum_buffer.<name>", the rules as "optim.rules" [n][3], the configurations and the step
   count as "optim.*" metadata); init_st and init_file restore it for the same table, refusing a
   file whose names or shapes differ (LATTN_E_FORMAT): a resumed run takes the same steps, bit for
   bit, as one that never stopped. */
typedef enum lattn_opt_kind { LATTN_OPT_ADAMW, LATTN_OPT_MUON } lattn_opt_kind;
typedef struct lattn_param_rule { lattn_opt_kind kind; int decay; double lr_scale; } lattn_param_rule;
typedef struct lattn_optim {
    lattn_adamw_config adamw;            /* lattn_adamw_default(), wd 0.1 (the SPS recipe) */
    lattn_muon_config muon;              /* lattn_muon_default() */
    const lattn_tensor *tensors;         /* the model's table (not owned) */
    int64_t n_tensors;
    size_t n_params;
    lattn_param_rule *rules;             /* [n_tensors] */
    float *m, *v;                        /* [n_params] each: exp_avg (or the momentum), exp_avg_sq */
    int64_t t;                           /* steps taken */
} lattn_optim;
LATTN_API lattn_status lattn_optim_init(lattn_ctx *ctx, lattn_optim *o, const lattn_tensor *tensors, int64_t n_tensors, int use_muon);
LATTN_API lattn_status lattn_optim_step(lattn_ctx *ctx, lattn_optim *o, double factor, float *grads);
LATTN_API lattn_status lattn_optim_serialize(lattn_ctx *ctx, const lattn_optim *o, unsigned char **out, size_t *size);
LATTN_API lattn_status lattn_optim_init_st(lattn_ctx *ctx, lattn_optim *o, const lattn_tensor *tensors, int64_t n_tensors,
                                           const lattn_st_file *f, const char *prefix);
#ifndef LATTN_NO_STDIO
LATTN_API lattn_status lattn_optim_save(lattn_ctx *ctx, const lattn_optim *o, const char *path);
LATTN_API lattn_status lattn_optim_init_file(lattn_ctx *ctx, lattn_optim *o, const lattn_tensor *tensors, int64_t n_tensors, const char *path);
#endif
LATTN_API void lattn_optim_free(lattn_ctx *ctx, lattn_optim *o);
#endif /* LATTN_NO_MODELS */
#ifndef LATTN_NO_CONFORMANCE
/* ================================================================================================ */
/* >>conformance                                                                                    */
/* ================================================================================================ */
/* Golden cases (reference_outputs/, DESIGN.md §4): one safetensors file per case with the inputs
   "in.*" (float32, offsets int64), the expected outputs "out.*" (float32, from _ref in double) and
   "out64.*" float64 copies where small, and metadata: "mixer" (shortconv | tcn | linear_attn |
   gla | simple_gla | retention | gdr | scan | ssm | s4d | prism_p0 | prism_p1 | prism_p2 | ttt_layer | laplace_layer | gdn_layer: a layer's tensors under
   "in.<name>" and its laplace.* configuration, see >>laplace | attention | transformer | sps: a model's tensors under "in.<name>",
   its tf.* configuration (and sps.*), in.tokens I32 [B][T] | adamw | muon_step | muon_ns5: an optimizer's
   steps, in.param0 and in.grads [S][..] -> out.param [S][..] and out.exp_avg, out.exp_avg_sq or
   out.momentum, or in.G -> out.X, with the options lr, beta1, beta2, eps, weight_decay, momentum,
   nesterov, ns_steps, bf16; forms ref (float64) and chunk (float32)), the mixer's options ("silu", "k", "layers", "fmap", "normalize", "eps",
   "scale", "chunk", "log_space", "groups", "dt_softplus", "complex", "l2norm", "allow_neg_eigval", "mask", "window",
   "retnet_decay": RetNet's decays computed in double, lattn_la_args.retnet_decay; "method": scan,
   fft or conv, the S4D _chunk method a caller adds to run one case by each; "pass": backward for a
   gradient case, the upstream gradients in.dout, in.dht, in.dzt in and out.d<name> out of the
   family's _ref_backward (ref form) or _chunk_backward (chunk form): the linear-attention family so far), "seed",
   "layout" and tolerances "tol_fp32", "tol_tf32", "tol_bf16" (relative RMS). */
/* Run the case's mixer with one form (STEP: the whole call token by token, as a decoder runs it) on
   its inputs and serialise the outputs under the case's "out.*" names (float32) into a buffer to
   release with lattn_free. LATTN_E_UNSUPPORTED when the mixer has no such form. */
LATTN_API lattn_status lattn_case_run(lattn_ctx *ctx, const lattn_st_file *c, lattn_form form,
                                      unsigned char **out, size_t *size);

/* The forms a case can be run in (its mixer's forms); returns how many were written to out (at
   most max). */
LATTN_API int lattn_case_forms(const lattn_st_file *c, lattn_form *out, int max);

/* got against want: relative RMS error ||got - want|| / ||want|| over the finite positions
   (absolute when want is all zero), max abs error, and positions where NaN/Inf differ (a NaN
   must meet a NaN, an Inf an Inf of the same sign). pass = no such position and rel_rms <= tol. */
typedef struct lattn_cmp {
    double rel_rms, max_abs;
    int64_t n, nonfinite_mismatch, first_mismatch;   /* first_mismatch = -1 when none */
    int pass;
} lattn_cmp;
LATTN_API void lattn_compare(const double *got, const double *want, size_t n, double tol, lattn_cmp *r);

#endif /* LATTN_NO_CONFORMANCE */

#ifdef __cplusplus
}
#endif
#endif /* LATTN_H_INCLUDED */

/* ================================================================================================ */
/* ================================================================================================ */
/* >>impl   IMPLEMENTATION. Readers of the API can stop here.                                       */
/* ================================================================================================ */
/* ================================================================================================ */
#if defined(LATTN_IMPLEMENTATION) && !defined(LATTN__IMPLEMENTATION_DONE)
#define LATTN__IMPLEMENTATION_DONE

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <float.h>
#include <errno.h>

#if defined(__FAST_MATH__)
#  error "lattn: -ffast-math breaks the NaN/Inf contract; build lattn without it"
#endif

#if defined(LATTN_MALLOC) != defined(LATTN_FREE)
#  error "lattn: define both LATTN_MALLOC and LATTN_FREE, or neither"
#endif
#ifndef LATTN_MALLOC
#  define LATTN_MALLOC(n) malloc(n)
#  define LATTN_FREE(p) free(p)
#endif
#ifndef LATTN_ASSERT
#  include <assert.h>
#  define LATTN_ASSERT(x) assert(x)
#endif

#if defined(_OPENMP) && !defined(LATTN_NO_OPENMP)
#  include <omp.h>
#  define LATTN__OMP 1
#  define LATTN__PRAGMA(x) _Pragma(#x)
#else
#  define LATTN__OMP 0
#  define LATTN__PRAGMA(x)
#endif

/* One gradient element, float and (when wanted) double. */
static void lattn__put(float *f, double *d, int64_t i, double v) {
    if (f) f[i] = (float)v;
    if (d) d[i] = v;
}
/* A struct with every field zero (the library's "default" for every args struct). */
#ifdef __cplusplus
#  define LATTN__ZERO {}
#else
#  define LATTN__ZERO {0}
#endif

#ifdef LATTN_STATIC
#  define LATTN__DEF static
#else
#  define LATTN__DEF
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define LATTN__INLINE static __inline__
/* a hint to fetch the line at address a (an integer) into L2; never faults */
#  define LATTN__PREFETCH_L2(a) __builtin_prefetch((const void *)(a), 0, 2)
#else
#  define LATTN__INLINE static
#  define LATTN__PREFETCH_L2(a) ((void)(a))
#endif

#define LATTN__MIN(a, b) ((a) < (b) ? (a) : (b))
#define LATTN__MAX(a, b) ((a) > (b) ? (a) : (b))

/* ================================================================================================ */
/* >>simd   The SIMD back ends, chosen at compile time.                                             */
/* ================================================================================================ */
/* Every kernel is written once against this vocabulary:
     lattn__vf            a vector of LATTN__VW floats
     vload/vstore         unaligned load / store
     vstream, vfence      store bypassing the caches (p aligned to the vector; a plain store where
                          the ISA has none), and the fence that orders such stores
     vset1, vzero         broadcast, zero
     vadd vsub vmul vdiv  lane-wise arithmetic
     vfma(a, b, c)        a·b + c (fused unless LATTN_NO_FMA)
     vmax(a, b), vmin     lane-wise; return b when a lane of either is NaN on x86 (put x second to
                          propagate NaN), NaN on NEON — both propagate a NaN in b
     vsel_lt(a, b, x, y)  a < b ? x : y per lane (false for NaN)
     vabs                 clear the sign bit
     vhsum                horizontal sum in a fixed tree
     vpow2i(n)            2^n for integer-valued n in [-126, 127]; vldexp(p, n) = p·2^n
     vsplit(x, &e)        x = m·2^e with m in [sqrt(1/2), sqrt(2)), for positive normal x
   LATTN__NRV is the number of vectors per row of the GEMM micro-kernel (its width is NRV·VW). */
#if !defined(LATTN_NO_SIMD) && defined(__AVX512F__) && !defined(LATTN_NO_AVX512)
/* gcc 12's intrinsics start masked AVX-512 ops from _mm512_undefined_ps(), which in C++ is the
   self-initialisation `__m512 __Y = __Y;`: -Wuninitialized fires inside the system header at every
   inlined use (gcc bug 105593, fixed in later releases). Silenced for that header's text only. */
#  if defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__)
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wuninitialized"
#    pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#  endif
#  include <immintrin.h>
#  if defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__)
#    pragma GCC diagnostic pop
#  endif
#  define LATTN__SIMD_NAME "avx512"
#  define LATTN__VW 16
#  define LATTN__NRV 2
typedef __m512 lattn__vf;
#  define lattn__vload(p) _mm512_loadu_ps(p)
#  define lattn__vstore(p, v) _mm512_storeu_ps(p, v)
#  define lattn__vstream(p, v) _mm512_stream_ps(p, v)
#  define lattn__vfence() _mm_sfence()
#  define lattn__vset1(x) _mm512_set1_ps(x)
#  define lattn__vzero() _mm512_setzero_ps()
#  define lattn__vadd(a, b) _mm512_add_ps(a, b)
#  define lattn__vsub(a, b) _mm512_sub_ps(a, b)
#  define lattn__vmul(a, b) _mm512_mul_ps(a, b)
#  define lattn__vdiv(a, b) _mm512_div_ps(a, b)
#  define lattn__vsqrt(a) _mm512_sqrt_ps(a)
#  define lattn__vmax(a, b) _mm512_max_ps(a, b)
#  define lattn__vmin(a, b) _mm512_min_ps(a, b)
#  define lattn__vabs(a) _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)))
#  define lattn__vsel_lt(a, b, x, y) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x)
#  ifndef LATTN_NO_FMA
#    define lattn__vfma(a, b, c) _mm512_fmadd_ps(a, b, c)
#  endif
LATTN__INLINE float lattn__vhsum(lattn__vf v) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
}
#  define lattn__vpow2i(n) _mm512_scalef_ps(_mm512_set1_ps(1.0f), n)
#  define lattn__vldexp(p, n) _mm512_scalef_ps(p, n)
#  define LATTN__LDEXP_ANY_N                  /* scalef takes n = 128 without overflowing first */
LATTN__INLINE lattn__vf lattn__vsplit(lattn__vf x, lattn__vf *e) {
    __m512i b = _mm512_castps_si512(x);
    __m512i ei = _mm512_sub_epi32(_mm512_srli_epi32(b, 23), _mm512_set1_epi32(127));
    __m512 m = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi32(0x007fffff)),
                                                   _mm512_set1_epi32(0x3f800000)));
    __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GT_OQ);
    m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
    ei = _mm512_mask_add_epi32(ei, big, ei, _mm512_set1_epi32(1));
    *e = _mm512_cvtepi32_ps(ei);
    return m;
}
/* d[j][i] = s[i][j] for a 16 x 16 block (rows of s lds apart, of d ldd apart): three rounds of
   in-lane unpacks and 128-bit lane shuffles, 64 register ops for 256 elements. */
#  define LATTN__TB 16
LATTN__INLINE void lattn__tblock(const float *s, size_t lds, float *d, size_t ldd) {
    __m512 r[16], u[16], v[8], w[8];
    int i, c;
    for (i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(s + (size_t)i * lds);
    for (i = 0; i < 16; i += 2) { u[i] = _mm512_unpacklo_ps(r[i], r[i + 1]); u[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]); }
    for (i = 0; i < 16; i += 4) {        /* r[i + c], lane L: column 4L + c of rows i .. i+3 */
        r[i]     = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(u[i]), _mm512_castps_pd(u[i + 2])));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(u[i]), _mm512_castps_pd(u[i + 2])));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(u[i + 1]), _mm512_castps_pd(u[i + 3])));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(u[i + 1]), _mm512_castps_pd(u[i + 3])));
    }
    for (c = 0; c < 4; c++) {
        v[c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
        v[4 + c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
        w[c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
        w[4 + c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);
    }
    for (c = 0; c < 4; c++) {
        _mm512_storeu_ps(d + (size_t)c * ldd, _mm512_shuffle_f32x4(v[c], w[c], 0x88));
        _mm512_storeu_ps(d + (size_t)(8 + c) * ldd, _mm512_shuffle_f32x4(v[c], w[c], 0xdd));
        _mm512_storeu_ps(d + (size_t)(4 + c) * ldd, _mm512_shuffle_f32x4(v[4 + c], w[4 + c], 0x88));
        _mm512_storeu_ps(d + (size_t)(12 + c) * ldd, _mm512_shuffle_f32x4(v[4 + c], w[4 + c], 0xdd));
    }
}
#elif !defined(LATTN_NO_SIMD) && defined(__AVX2__) && defined(__FMA__) && !defined(LATTN_NO_AVX2)
#  include <immintrin.h>
#  define LATTN__SIMD_NAME "avx2"
#  define LATTN__VW 8
#  define LATTN__NRV 1
typedef __m256 lattn__vf;
#  define lattn__vload(p) _mm256_loadu_ps(p)
#  define lattn__vstore(p, v) _mm256_storeu_ps(p, v)
#  define lattn__vstream(p, v) _mm256_stream_ps(p, v)
#  define lattn__vfence() _mm_sfence()
#  define lattn__vset1(x) _mm256_set1_ps(x)
#  define lattn__vzero() _mm256_setzero_ps()
#  define lattn__vadd(a, b) _mm256_add_ps(a, b)
#  define lattn__vsub(a, b) _mm256_sub_ps(a, b)
#  define lattn__vmul(a, b) _mm256_mul_ps(a, b)
#  define lattn__vdiv(a, b) _mm256_div_ps(a, b)
#  define lattn__vsqrt(a) _mm256_sqrt_ps(a)
#  define lattn__vmax(a, b) _mm256_max_ps(a, b)
#  define lattn__vmin(a, b) _mm256_min_ps(a, b)
#  define lattn__vabs(a) _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)))
#  define lattn__vsel_lt(a, b, x, y) _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ))
#  ifndef LATTN_NO_FMA
#    define lattn__vfma(a, b, c) _mm256_fmadd_ps(a, b, c)
#  endif
LATTN__INLINE float lattn__vhsum(lattn__vf v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
}
LATTN__INLINE lattn__vf lattn__vpow2i(lattn__vf n) {
    __m256i i = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(i, 23));
}
LATTN__INLINE lattn__vf lattn__vsplit(lattn__vf x, lattn__vf *e) {
    __m256i b = _mm256_castps_si256(x);
    __m256i ei = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127));
    __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)),
                                                   _mm256_set1_epi32(0x3f800000)));
    __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
    m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
    *e = _mm256_add_ps(_mm256_cvtepi32_ps(ei), _mm256_and_ps(big, _mm256_set1_ps(1.0f)));
    return m;
}
/* d[j][i] = s[i][j] for an 8 x 8 block: in-lane unpacks, then the two 128-bit lanes swapped. */
#  define LATTN__TB 8
LATTN__INLINE void lattn__tblock(const float *s, size_t lds, float *d, size_t ldd) {
    __m256 r[8], u[8];
    int i, c;
    for (i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(s + (size_t)i * lds);
    for (i = 0; i < 8; i += 2) { u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]); u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]); }
    for (i = 0; i < 8; i += 4) {         /* r[i + c], lane L: column 4L + c of rows i .. i+3 */
        r[i]     = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(u[i]), _mm256_castps_pd(u[i + 2])));
        r[i + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(u[i]), _mm256_castps_pd(u[i + 2])));
        r[i + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(u[i + 1]), _mm256_castps_pd(u[i + 3])));
        r[i + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(u[i + 1]), _mm256_castps_pd(u[i + 3])));
    }
    for (c = 0; c < 4; c++) {
        _mm256_storeu_ps(d + (size_t)c * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x20));
        _mm256_storeu_ps(d + (size_t)(4 + c) * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x31));
    }
}
#elif !defined(LATTN_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__)
#  include <arm_neon.h>
#  define LATTN__SIMD_NAME "neon"
#  define LATTN__VW 4
#  define LATTN__NRV 2
typedef float32x4_t lattn__vf;
#  define lattn__vload(p) vld1q_f32(p)
#  define lattn__vstore(p, v) vst1q_f32(p, v)
#  define lattn__vstream(p, v) vst1q_f32(p, v)
#  define lattn__vfence() ((void)0)
#  define lattn__vset1(x) vdupq_n_f32(x)
#  define lattn__vzero() vdupq_n_f32(0.0f)
#  define lattn__vadd(a, b) vaddq_f32(a, b)
#  define lattn__vsub(a, b) vsubq_f32(a, b)
#  define lattn__vmul(a, b) vmulq_f32(a, b)
#  define lattn__vdiv(a, b) vdivq_f32(a, b)
#  define lattn__vsqrt(a) vsqrtq_f32(a)
#  define lattn__vmax(a, b) vmaxq_f32(a, b)
#  define lattn__vmin(a, b) vminq_f32(a, b)
#  define lattn__vabs(a) vabsq_f32(a)
#  define lattn__vsel_lt(a, b, x, y) vbslq_f32(vcltq_f32(a, b), x, y)
#  ifndef LATTN_NO_FMA
#    define lattn__vfma(a, b, c) vfmaq_f32(c, a, b)
#  endif
LATTN__INLINE float lattn__vhsum(lattn__vf v) {
    float32x2_t h = vadd_f32(vget_low_f32(v), vget_high_f32(v));
    return vget_lane_f32(h, 0) + vget_lane_f32(h, 1);
}
LATTN__INLINE lattn__vf lattn__vpow2i(lattn__vf n) {
    int32x4_t i = vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127));
    return vreinterpretq_f32_s32(vshlq_n_s32(i, 23));
}
LATTN__INLINE lattn__vf lattn__vsplit(lattn__vf x, lattn__vf *e) {
    int32x4_t b = vreinterpretq_s32_f32(x);
    int32x4_t ei = vsubq_s32(vshrq_n_s32(b, 23), vdupq_n_s32(127));
    float32x4_t m = vreinterpretq_f32_s32(vorrq_s32(vandq_s32(b, vdupq_n_s32(0x007fffff)),
                                                    vdupq_n_s32(0x3f800000)));
    uint32x4_t big = vcgtq_f32(m, vdupq_n_f32(1.41421356f));
    m = vbslq_f32(big, vmulq_f32(m, vdupq_n_f32(0.5f)), m);
    *e = vaddq_f32(vcvtq_f32_s32(ei), vbslq_f32(big, vdupq_n_f32(1.0f), vdupq_n_f32(0.0f)));
    return m;
}
#else
/* Scalar back end: a "vector" of one float. The micro-kernel is 8 x 1 here: gcc 12 vectorises
   an 8 x 2 scalar kernel into SSE code that also loads the packed panel's next row, 8 bytes past
   its end on the last k (valgrind sees it); one column keeps every load in bounds. */
#  define LATTN__SIMD_NAME "scalar"
#  define LATTN__VW 1
#  define LATTN__NRV 1
typedef float lattn__vf;
#  define lattn__vload(p) (*(p))
#  define lattn__vstore(p, v) (*(p) = (v))
#  define lattn__vstream(p, v) (*(p) = (v))
#  define lattn__vfence() ((void)0)
#  define lattn__vset1(x) (x)
#  define lattn__vzero() 0.0f
#  define lattn__vadd(a, b) ((a) + (b))
#  define lattn__vsub(a, b) ((a) - (b))
#  define lattn__vmul(a, b) ((a) * (b))
#  define lattn__vdiv(a, b) ((a) / (b))
#  define lattn__vsqrt(a) sqrtf(a)
#  define lattn__vmax(a, b) ((a) > (b) ? (a) : (b))
#  define lattn__vmin(a, b) ((a) < (b) ? (a) : (b))
#  define lattn__vabs(a) fabsf(a)
#  define lattn__vsel_lt(a, b, x, y) ((a) < (b) ? (x) : (y))
#  if !defined(LATTN_NO_FMA) && defined(FP_FAST_FMAF)
#    define lattn__vfma(a, b, c) fmaf(a, b, c)
#  endif
#  define lattn__vhsum(v) (v)
#  define lattn__vpow2i(n) ldexpf(1.0f, (int)(n))
LATTN__INLINE float lattn__vsplit(float x, float *e) {
    int ei; float m = frexpf(x, &ei);          /* m in [0.5, 1) */
    if (m < 0.70710678f) { m *= 2.0f; ei -= 1; }
    *e = (float)ei;
    return m;
}
#endif
#ifndef lattn__vldexp
#  define lattn__vldexp(p, n) lattn__vmul(p, lattn__vpow2i(n))   /* p·2^n, n integer-valued */
#endif
#ifndef lattn__vfma
#  define lattn__vfma(a, b, c) lattn__vadd(lattn__vmul(a, b), c)
#  define LATTN__FMA_NAME "off"
#else
#  define LATTN__FMA_NAME "on"
#endif
#define LATTN__MR 8                         /* rows of the GEMM micro-kernel */
#define LATTN__NR (LATTN__NRV * LATTN__VW)  /* columns of the GEMM micro-kernel */

/* ------------------------------------------------------------------------------------------------ */
/* Vector transcendentals. One implementation for every back end (Cephes-style range reduction and
   minimax polynomials), so all paths share the same accuracy figures.                               */
/* exp(x) = 2^n · p(r), n = round(x/ln2), r = x - n·ln2 (two-part ln2), p a degree-6 polynomial.
   lattn__vexp_pn returns p(r) and n; the callers apply 2^n. */
LATTN__INLINE lattn__vf lattn__vexp_pn(lattn__vf x, lattn__vf *n) {
    lattn__vf t = lattn__vfma(x, lattn__vset1(1.44269504088896341f), lattn__vset1(12582912.0f));
    lattn__vf r, p;
    *n = lattn__vsub(t, lattn__vset1(12582912.0f));               /* round to nearest integer */
    r = lattn__vfma(*n, lattn__vset1(-0.693359375f), x);
    r = lattn__vfma(*n, lattn__vset1(2.12194440e-4f), r);
    p = lattn__vset1(1.9875691500e-4f);
    p = lattn__vfma(p, r, lattn__vset1(1.3981999507e-3f));
    p = lattn__vfma(p, r, lattn__vset1(8.3334519073e-3f));
    p = lattn__vfma(p, r, lattn__vset1(4.1665795894e-2f));
    p = lattn__vfma(p, r, lattn__vset1(1.6666665459e-1f));
    p = lattn__vfma(p, r, lattn__vset1(5.0000001201e-1f));
    return lattn__vfma(p, lattn__vmul(r, r), lattn__vadd(r, lattn__vset1(1.0f)));
}
LATTN__INLINE lattn__vf lattn__vexp(lattn__vf x) {
    const lattn__vf hi = lattn__vset1(88.72283f), lo = lattn__vset1(-87.33654f), n127 = lattn__vset1(127.0f);
    lattn__vf xc = lattn__vmin(hi, lattn__vmax(lo, x));          /* NaN in x stays NaN */
    lattn__vf n, y = lattn__vexp_pn(xc, &n);
#ifdef LATTN__LDEXP_ANY_N
    y = lattn__vldexp(y, n);
    (void)n127;
#else
    /* n reaches 128 just below 88.72: apply 2^min(n,127), then one more factor 2 */
    y = lattn__vmul(y, lattn__vpow2i(lattn__vmin(n, n127)));
    y = lattn__vmul(y, lattn__vsel_lt(n127, n, lattn__vset1(2.0f), lattn__vset1(1.0f)));
#endif
    y = lattn__vsel_lt(x, lo, lattn__vzero(), y);
    y = lattn__vsel_lt(hi, x, lattn__vset1(HUGE_VALF), y);
    return y;
}
/* 2^x for a clamped log2 gate, x in [LATTN_LOG_GATE_MIN·log2(e), 0] (or NaN): x = n + f with
   |f| <= 1/2, 2^f by its degree-6 Taylor polynomial (relative error < 1.4e-7), no range fix-ups.
   The hot loops of the gated mixers pre-scale their log gates by log2(e) to call it. */
LATTN__INLINE lattn__vf lattn__vexp2_gate(lattn__vf x) {
    lattn__vf n = lattn__vsub(lattn__vadd(x, lattn__vset1(12582912.0f)), lattn__vset1(12582912.0f));
    lattn__vf f = lattn__vsub(x, n), p = lattn__vset1(1.5403530393381606e-4f);
    p = lattn__vfma(p, f, lattn__vset1(1.3333558146428443e-3f));
    p = lattn__vfma(p, f, lattn__vset1(9.6181291076284772e-3f));
    p = lattn__vfma(p, f, lattn__vset1(5.5504108664821580e-2f));
    p = lattn__vfma(p, f, lattn__vset1(2.4022650695910071e-1f));
    p = lattn__vfma(p, f, lattn__vset1(6.9314718055994531e-1f));
    p = lattn__vfma(p, f, lattn__vset1(1.0f));
    return lattn__vldexp(p, n);
}

/* log(x) = e·ln2 + log(m), x = m·2^e, m in [sqrt(1/2), sqrt(2)); log(1+f) by the Cephes logf
   polynomial; subnormal x are scaled by 2^23 first. */
LATTN__INLINE lattn__vf lattn__vlog(lattn__vf x) {
    const lattn__vf one = lattn__vset1(1.0f);
    lattn__vf sub = lattn__vsel_lt(x, lattn__vset1(FLT_MIN), one, lattn__vzero());
    lattn__vf xs = lattn__vmul(x, lattn__vfma(sub, lattn__vset1(8388607.0f), one));
    lattn__vf e, m = lattn__vsplit(xs, &e), f, z, p, r;
    e = lattn__vfma(sub, lattn__vset1(-23.0f), e);
    f = lattn__vsub(m, one);
    z = lattn__vmul(f, f);
    p = lattn__vset1(7.0376836292e-2f);
    p = lattn__vfma(p, f, lattn__vset1(-1.1514610310e-1f));
    p = lattn__vfma(p, f, lattn__vset1(1.1676998740e-1f));
    p = lattn__vfma(p, f, lattn__vset1(-1.2420140846e-1f));
    p = lattn__vfma(p, f, lattn__vset1(1.4249322787e-1f));
    p = lattn__vfma(p, f, lattn__vset1(-1.6668057665e-1f));
    p = lattn__vfma(p, f, lattn__vset1(2.0000714765e-1f));
    p = lattn__vfma(p, f, lattn__vset1(-2.4999993993e-1f));
    p = lattn__vfma(p, f, lattn__vset1(3.3333331174e-1f));
    p = lattn__vmul(lattn__vmul(p, f), z);
    p = lattn__vfma(e, lattn__vset1(-2.12194440e-4f), p);
    p = lattn__vfma(z, lattn__vset1(-0.5f), p);
    r = lattn__vadd(f, p);
    r = lattn__vfma(e, lattn__vset1(0.693359375f), r);
    r = lattn__vadd(r, lattn__vmul(lattn__vsub(x, x), lattn__vzero()));   /* NaN stays NaN */
    r = lattn__vsel_lt(x, lattn__vset1(1.4e-45f), lattn__vset1(-HUGE_VALF), r);
    r = lattn__vsel_lt(x, lattn__vzero(), lattn__vset1(NAN), r);
    r = lattn__vsel_lt(lattn__vset1(FLT_MAX), x, lattn__vset1(HUGE_VALF), r);
    return r;
}
/* sigmoid(x) from z = exp(-|x|): 1/(1+z) for x >= 0, z/(1+z) for x < 0 — never overflows. */
LATTN__INLINE lattn__vf lattn__vsigmoid(lattn__vf x) {
    const lattn__vf one = lattn__vset1(1.0f);
    lattn__vf z = lattn__vexp(lattn__vsub(lattn__vzero(), lattn__vabs(x)));
    return lattn__vdiv(lattn__vsel_lt(x, lattn__vzero(), z, one), lattn__vadd(one, z));
}
/* softplus(x) = max(x, 0) + log1p(z), z = exp(-|x|) in (0, 1]: log1p(z) = 2 atanh(s) with
   s = z / (2 + z) <= 1/3, by the odd series to s^13 (truncation < 5e-9 relative). */
LATTN__INLINE lattn__vf lattn__vsoftplus(lattn__vf x) {
    lattn__vf z = lattn__vexp(lattn__vsub(lattn__vzero(), lattn__vabs(x)));
    lattn__vf s = lattn__vdiv(z, lattn__vadd(lattn__vset1(2.0f), z)), s2 = lattn__vmul(s, s);
    lattn__vf p = lattn__vset1(1.0f / 13.0f);
    p = lattn__vfma(p, s2, lattn__vset1(1.0f / 11.0f));
    p = lattn__vfma(p, s2, lattn__vset1(1.0f / 9.0f));
    p = lattn__vfma(p, s2, lattn__vset1(1.0f / 7.0f));
    p = lattn__vfma(p, s2, lattn__vset1(1.0f / 5.0f));
    p = lattn__vfma(p, s2, lattn__vset1(1.0f / 3.0f));
    p = lattn__vfma(p, s2, lattn__vset1(1.0f));
    return lattn__vfma(lattn__vadd(s, s), p, lattn__vmax(lattn__vzero(), x));
}
LATTN__INLINE lattn__vf lattn__vsilu(lattn__vf x) { return lattn__vmul(x, lattn__vsigmoid(x)); }

/* ================================================================================================ */
/* Foundations: status strings, build info, context, checked sizes, errors, allocation              */
/* ================================================================================================ */
LATTN__DEF const char *lattn_status_string(lattn_status s) {
    switch (s) {
#define LATTN__STATUS_CASE(name, value, msg) case name: return msg;
    LATTN_STATUS_LIST(LATTN__STATUS_CASE)
#undef LATTN__STATUS_CASE
    default: return "unknown status";
    }
}

#define LATTN__STR2(x) #x
#define LATTN__STR(x) LATTN__STR2(x)
#if defined(__clang__)
#  define LATTN__COMPILER "clang " LATTN__STR(__clang_major__) "." LATTN__STR(__clang_minor__) "." LATTN__STR(__clang_patchlevel__)
#elif defined(__GNUC__)
#  define LATTN__COMPILER "gcc " LATTN__STR(__GNUC__) "." LATTN__STR(__GNUC_MINOR__) "." LATTN__STR(__GNUC_PATCHLEVEL__)
#else
#  define LATTN__COMPILER "unknown compiler"
#endif
LATTN__DEF const char *lattn_build_info(void) {
    return "lattn " LATTN_VERSION_STRING "; simd=" LATTN__SIMD_NAME "; fma=" LATTN__FMA_NAME
           "; openmp=" LATTN__STR(LATTN__OMP) "; compiler=" LATTN__COMPILER;
}
LATTN__DEF const char *lattn_version(void) { return LATTN_VERSION_STRING; }
LATTN__DEF int lattn_simd_width(void) { return LATTN__VW; }

LATTN__DEF void lattn_ctx_init(lattn_ctx *ctx) {
    if (!ctx) return;
    memset(ctx, 0, sizeof *ctx);
}
LATTN__DEF const char *lattn_ctx_error(const lattn_ctx *ctx) {
    return ctx ? ctx->error : "no context";
}

/* Return the status of x when it is not LATTN_OK. */
#define LATTN__TRY(x) do { lattn_status s_ = (x); if (s_ != LATTN_OK) return s_; } while (0)
/* Record a failure in the context and return its status. */
static lattn_status lattn__fail(lattn_ctx *ctx, lattn_status s, const char *fmt, ...) {
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
        ctx->last_status = s;
    }
    return s;
}
static lattn_status lattn__ok(lattn_ctx *ctx) {
    if (ctx) { ctx->last_status = LATTN_OK; ctx->error[0] = 0; }
    return LATTN_OK;
}

/* A size computed as int64_t with -1 for "out of range", as the status of a size query. */
static lattn_status lattn__size_out(int64_t n, size_t *out) {
    if (!out) return LATTN_E_NULL;
    if (n < 0) return LATTN_E_SHAPE;
    *out = (size_t)n;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_size_mul(size_t *out, size_t a, size_t b) {
    if (a != 0 && b > SIZE_MAX / a) return LATTN_E_OVERFLOW;
    *out = a * b;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_size_add(size_t *out, size_t a, size_t b) {
    if (b > SIZE_MAX - a) return LATTN_E_OVERFLOW;
    *out = a + b;
    return LATTN_OK;
}
/* Product of n non-negative int64 sizes as a size_t count; also bounded so that the count in bytes
   of doubles fits (every tensor may be staged in double by _ref). */
static lattn_status lattn__count(size_t *out, int n, const int64_t *dims) {
    size_t c = 1; int i;
    for (i = 0; i < n; i++) {
        if (dims[i] < 0) return LATTN_E_SHAPE;
        if ((uint64_t)dims[i] > (uint64_t)(SIZE_MAX / 8)) return LATTN_E_OVERFLOW;
        if (lattn_size_mul(&c, c, (size_t)dims[i]) != LATTN_OK) return LATTN_E_OVERFLOW;
    }
    if (c > SIZE_MAX / 8) return LATTN_E_OVERFLOW;
    *out = c;
    return LATTN_OK;
}

static void *lattn__alloc(lattn_ctx *ctx, size_t bytes) {
    void *p;
    if (bytes == 0) bytes = 1;
    p = (ctx && ctx->allocator.alloc) ? ctx->allocator.alloc(ctx->allocator.user, bytes)
                                      : LATTN_MALLOC(bytes);
    if (p && ctx) ctx->n_allocs++;
    return p;
}
static void lattn__free(lattn_ctx *ctx, void *p) {
    if (!p) return;
    if (ctx && ctx->allocator.free) ctx->allocator.free(ctx->allocator.user, p);
    else LATTN_FREE(p);
}
/* Allocate n floats (checked); records LATTN_E_NOMEM / LATTN_E_OVERFLOW in ctx. */
/* n elements of `size` bytes from the context's allocator (checked), or NULL with *st the failure. */
static void *lattn__alloc_array(lattn_ctx *ctx, size_t n, size_t size, const char *what, lattn_status *st) {
    size_t bytes;
    void *p;
    *st = LATTN_OK;
    if (lattn_size_mul(&bytes, n, size) != LATTN_OK) {
        *st = lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", what);
        return NULL;
    }
    p = lattn__alloc(ctx, bytes);
    if (!p) *st = lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate %zu bytes", what, bytes);
    return p;
}
static lattn_status lattn__alloc_floats(lattn_ctx *ctx, float **out, size_t n, const char *what) {
    lattn_status st;
    *out = (float *)lattn__alloc_array(ctx, n, sizeof(float), what, &st);
    return st;
}
static lattn_status lattn__alloc_doubles(lattn_ctx *ctx, double **out, size_t n, const char *what) {
    lattn_status st;
    *out = (double *)lattn__alloc_array(ctx, n, sizeof(double), what, &st);
    return st;
}

/* Threads: the number a parallel region uses (1 without OpenMP). */
/* The threads a call may start: ctx->n_threads (<= 0 or no context: OpenMP's default), clamped to
   [1, min(LATTN_MAX_THREADS, omp_get_thread_limit())], so an absurd count (10^5, INT_MAX) can
   neither exhaust the process's threads nor overflow a per-thread workspace. */
static int lattn__threads(const lattn_ctx *ctx) {
#if LATTN__OMP
    int n = (ctx && ctx->n_threads > 0) ? ctx->n_threads : omp_get_max_threads();
    int lim = omp_get_thread_limit();
    if (lim > 0 && n > lim) n = lim;
    if (n > LATTN_MAX_THREADS) n = LATTN_MAX_THREADS;
    return n < 1 ? 1 : n;
#else
    (void)ctx;
    return 1;
#endif
}
static int lattn__thread_id(void) {
#if LATTN__OMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* ================================================================================================ */
/* >>rng implementation                                                                             */
/* ================================================================================================ */
LATTN__DEF lattn_rng lattn_rng_seed(uint64_t seed) { lattn_rng r; r.s = seed; return r; }
LATTN__DEF uint64_t lattn_rng_next(lattn_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
LATTN__DEF float lattn_rng_uniform(lattn_rng *r) {
    return (float)(lattn_rng_next(r) >> 40) * (1.0f / 16777216.0f);
}
LATTN__DEF double lattn_rng_normal_d(lattn_rng *r) {
    double u1 = (double)(lattn_rng_next(r) >> 40) * (1.0 / 16777216.0);
    double u2 = (double)(lattn_rng_next(r) >> 40) * (1.0 / 16777216.0);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}
LATTN__DEF void lattn_rng_fill_uniform(lattn_rng *r, float *x, size_t n, float lo, float hi) {
    size_t i;
    for (i = 0; i < n; i++)
        x[i] = (float)((double)lo + ((double)hi - (double)lo) * (double)lattn_rng_uniform(r));
}
LATTN__DEF void lattn_rng_fill_normal(lattn_rng *r, float *x, size_t n, float mean, float std) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)((double)mean + (double)std * lattn_rng_normal_d(r));
}

/* ================================================================================================ */
/* >>vec implementation                                                                             */
/* ================================================================================================ */
/* Load up to VW floats (zero-padded) into a vector; store the first n lanes back. */
LATTN__INLINE lattn__vf lattn__vload_n(const float *x, size_t n) {
    float t[LATTN__VW];
    memset(t, 0, sizeof t);
    memcpy(t, x, n * sizeof(float));
    return lattn__vload(t);
}
LATTN__INLINE void lattn__vstore_n(float *y, lattn__vf v, size_t n) {
    float t[LATTN__VW];
    lattn__vstore(t, v);
    memcpy(y, t, n * sizeof(float));
}
/* w lanes: a plain load / store when w is the full width, else the padded copies above. */
LATTN__INLINE lattn__vf lattn__vload_w(const float *x, size_t w) {
    return w == LATTN__VW ? lattn__vload(x) : lattn__vload_n(x, w);
}
LATTN__INLINE void lattn__vstore_w(float *y, lattn__vf v, size_t w) {
    if (w == LATTN__VW) lattn__vstore(y, v); else lattn__vstore_n(y, v, w);
}

/* Copy n floats with vector moves (short rows: cheaper than a libc call). */
LATTN__INLINE void lattn__copy_row(float *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i + LATTN__VW <= n; i += LATTN__VW) lattn__vstore(dst + i, lattn__vload(src + i));
    for (; i < n; i++) dst[i] = src[i];
}
/* The same with the aligned body stored around the caches (the caller fences once after its rows):
   an output row is not read again soon, and a cached store would first read its lines from memory. */
static void lattn__copy_row_nt(float *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i < n && ((uintptr_t)(dst + i) % (LATTN__VW * sizeof(float))) != 0; i++) dst[i] = src[i];
    for (; i + LATTN__VW <= n; i += LATTN__VW) lattn__vstream(dst + i, lattn__vload(src + i));
    for (; i < n; i++) dst[i] = src[i];
}

LATTN__DEF float lattn_vec_dot(size_t n, const float *x, const float *y) {
    lattn__vf a0 = lattn__vzero(), a1 = lattn__vzero(), a2 = lattn__vzero(), a3 = lattn__vzero();
    size_t i = 0;
    for (; i + 4 * LATTN__VW <= n; i += 4 * LATTN__VW) {
        a0 = lattn__vfma(lattn__vload(x + i), lattn__vload(y + i), a0);
        a1 = lattn__vfma(lattn__vload(x + i + LATTN__VW), lattn__vload(y + i + LATTN__VW), a1);
        a2 = lattn__vfma(lattn__vload(x + i + 2 * LATTN__VW), lattn__vload(y + i + 2 * LATTN__VW), a2);
        a3 = lattn__vfma(lattn__vload(x + i + 3 * LATTN__VW), lattn__vload(y + i + 3 * LATTN__VW), a3);
    }
    for (; i + LATTN__VW <= n; i += LATTN__VW)
        a0 = lattn__vfma(lattn__vload(x + i), lattn__vload(y + i), a0);
    if (i < n) a1 = lattn__vfma(lattn__vload_n(x + i, n - i), lattn__vload_n(y + i, n - i), a1);
    return lattn__vhsum(lattn__vadd(lattn__vadd(a0, a1), lattn__vadd(a2, a3)));
}
LATTN__DEF float lattn_vec_sum(size_t n, const float *x) {
    lattn__vf a0 = lattn__vzero(), a1 = lattn__vzero();
    size_t i = 0;
    for (; i + 2 * LATTN__VW <= n; i += 2 * LATTN__VW) {
        a0 = lattn__vadd(a0, lattn__vload(x + i));
        a1 = lattn__vadd(a1, lattn__vload(x + i + LATTN__VW));
    }
    for (; i + LATTN__VW <= n; i += LATTN__VW) a0 = lattn__vadd(a0, lattn__vload(x + i));
    if (i < n) a1 = lattn__vadd(a1, lattn__vload_n(x + i, n - i));
    return lattn__vhsum(lattn__vadd(a0, a1));
}
LATTN__DEF float lattn_vec_max(size_t n, const float *x) {
    lattn__vf m = lattn__vset1(-HUGE_VALF), z = lattn__vzero();
    float t[LATTN__VW], r = -HUGE_VALF;
    size_t i = 0; int j;
    for (; i + LATTN__VW <= n; i += LATTN__VW) {
        lattn__vf v = lattn__vload(x + i);
        m = lattn__vmax(m, v);
        z = lattn__vfma(v, lattn__vzero(), z);          /* x·0: NaN for a NaN or an infinity */
    }
    lattn__vstore(t, m);
    for (j = 0; j < LATTN__VW; j++) r = t[j] > r ? t[j] : r;
    for (; i < n; i++) r = x[i] > r ? x[i] : r;
    for (i = lattn__vhsum(z) != lattn__vhsum(z) ? 0 : n - n % LATTN__VW; i < n; i++)
        if (x[i] != x[i]) return x[i];                  /* NaN wins (only rows flagged above rescan) */
    return r;
}
LATTN__DEF void lattn_vec_axpy(size_t n, float a, const float *x, float *y) {
    lattn__vf va = lattn__vset1(a);
    size_t i = 0;
    for (; i + LATTN__VW <= n; i += LATTN__VW)
        lattn__vstore(y + i, lattn__vfma(va, lattn__vload(x + i), lattn__vload(y + i)));
    if (i < n)
        lattn__vstore_n(y + i, lattn__vfma(va, lattn__vload_n(x + i, n - i), lattn__vload_n(y + i, n - i)), n - i);
}
LATTN__DEF void lattn_vec_scale(size_t n, float a, float *x) {
    lattn__vf va = lattn__vset1(a);
    size_t i = 0;
    for (; i + LATTN__VW <= n; i += LATTN__VW) lattn__vstore(x + i, lattn__vmul(va, lattn__vload(x + i)));
    if (i < n) lattn__vstore_n(x + i, lattn__vmul(va, lattn__vload_n(x + i, n - i)), n - i);
}
/* y = fn(x) element-wise; the tail runs the same vector code on a zero-padded copy. */
static void lattn__vec_map(lattn__vf (*fn)(lattn__vf), size_t n, const float *x, float *y) {
    size_t i = 0;
    for (; i + LATTN__VW <= n; i += LATTN__VW) lattn__vstore(y + i, fn(lattn__vload(x + i)));
    if (i < n) lattn__vstore_n(y + i, fn(lattn__vload_n(x + i, n - i)), n - i);
}
LATTN__DEF void lattn_vec_exp(size_t n, const float *x, float *y) { lattn__vec_map(lattn__vexp, n, x, y); }
LATTN__DEF void lattn_vec_log(size_t n, const float *x, float *y) { lattn__vec_map(lattn__vlog, n, x, y); }
LATTN__DEF void lattn_vec_sigmoid(size_t n, const float *x, float *y) { lattn__vec_map(lattn__vsigmoid, n, x, y); }
LATTN__DEF void lattn_vec_softplus(size_t n, const float *x, float *y) { lattn__vec_map(lattn__vsoftplus, n, x, y); }
LATTN__DEF void lattn_vec_silu(size_t n, const float *x, float *y) { lattn__vec_map(lattn__vsilu, n, x, y); }

/* ================================================================================================ */
/* >>gemm implementation                                                                            */
/* ================================================================================================ */
/* Blocking (BLIS order, row-major):
     for jc in N step NC:  for pc in K step KC:  pack B[pc:pc+KC][jc:jc+NC] into NR-wide panels
       for ir in M step MR:  for jr in panels:  micro-kernel MR x NR over KC
   A is not packed: the micro-kernel broadcasts A[i][k] straight from memory with strides (rs, cs)
   — (lda, 1) for A, (1, lda) for Aᵀ — so Aᵀ·B costs nothing extra. The MR x KC strip of A stays in
   L1 while the packed KC x NC block of B streams from L2. */
#define LATTN__KC 256
#define LATTN__NC 512
/* Internal flag: op(A)[i][k] = 0 for k > i, so row block i0.. stops the contraction at i0 + MR. */
#define LATTN__GEMM_TRIU_A 16

/* Floats of packing workspace for a call with these sizes (0 when nothing to do). */
static size_t lattn__gemm_ws(int64_t N, int64_t K) {
    size_t kc = (size_t)LATTN__MIN(K, LATTN__KC), nc = (size_t)LATTN__MIN(N, LATTN__NC);
    return kc * ((nc + LATTN__NR - 1) / LATTN__NR * LATTN__NR);
}

/* Pack op(B)[k0:k0+kc][j0:j0+nc] as panels of NR columns: panel p holds, for each k, the NR values
   op(B)[k][j0 + p·NR + 0..NR-1], zero-padded past nc. */
static void lattn__pack_b(int transb, const float *B, int64_t ldb, int64_t k0, int64_t kc,
                          int64_t j0, int64_t nc, float *bp) {
    int64_t p, k, j;
    for (p = 0; p < nc; p += LATTN__NR) {
        int64_t w = LATTN__MIN(LATTN__NR, nc - p);
        for (k = 0; k < kc; k++, bp += LATTN__NR) {
            if (!transb && w == LATTN__NR) {
                const float *src = B + (k0 + k) * ldb + j0 + p;
                lattn__vstore(bp, lattn__vload(src));
#if LATTN__NRV == 2
                lattn__vstore(bp + LATTN__VW, lattn__vload(src + LATTN__VW));
#endif
                continue;
            } else if (!transb) {
                for (j = 0; j < w; j++) bp[j] = B[(k0 + k) * ldb + j0 + p + j];
            } else {
                const float *src = B + (j0 + p) * ldb + k0 + k;
                for (j = 0; j < w; j++) bp[j] = src[j * ldb];
            }
            for (j = w; j < LATTN__NR; j++) bp[j] = 0.0f;
        }
    }
}

/* One MR x NR block: C[i0.., j0..] (+)= A-strip · B-panel over kc. m, n: valid rows / columns.
   lower: write only entries with global column <= global row. */
static void lattn__ukernel(int64_t kc, const float *A, int64_t rs, int64_t cs, const float *bp, int64_t bs,
                           float *C, int64_t ldc, int acc, int m, int n, int64_t i0, int64_t j0,
                           int lower) {
    lattn__vf c00 = lattn__vzero(), c10 = lattn__vzero(), c20 = lattn__vzero(), c30 = lattn__vzero();
    lattn__vf c40 = lattn__vzero(), c50 = lattn__vzero(), c60 = lattn__vzero(), c70 = lattn__vzero();
#if LATTN__NRV == 2
    lattn__vf c01 = lattn__vzero(), c11 = lattn__vzero(), c21 = lattn__vzero(), c31 = lattn__vzero();
    lattn__vf c41 = lattn__vzero(), c51 = lattn__vzero(), c61 = lattn__vzero(), c71 = lattn__vzero();
#endif
    float tmp[LATTN__MR * LATTN__NR];
    int64_t o[LATTN__MR], k;
    int i, j;
    /* the loop over k, with row r of the strip at LATTN__UK_A(r) (a: this k's column of the strip) */
#if LATTN__NRV == 2
#  define LATTN__UK_ROW(r) av = lattn__vset1(LATTN__UK_A(r)); c##r##0 = lattn__vfma(av, b0, c##r##0); \
                           c##r##1 = lattn__vfma(av, b1, c##r##1);
#  define LATTN__UK_B lattn__vf b0 = lattn__vload(bp), b1 = lattn__vload(bp + LATTN__VW), av;
#else
#  define LATTN__UK_ROW(r) av = lattn__vset1(LATTN__UK_A(r)); c##r##0 = lattn__vfma(av, b0, c##r##0);
#  define LATTN__UK_B lattn__vf b0 = lattn__vload(bp), av;
#endif
#define LATTN__UK_LOOP                                                                             \
    for (k = 0; k < kc; k++, bp += bs) {                                                           \
        const float *a = A + k * cs;                                                               \
        LATTN__UK_B                                                                                \
        LATTN__UK_ROW(0) LATTN__UK_ROW(1) LATTN__UK_ROW(2) LATTN__UK_ROW(3)                        \
        LATTN__UK_ROW(4) LATTN__UK_ROW(5) LATTN__UK_ROW(6) LATTN__UK_ROW(7)                        \
    }
    /* Three instances of one loop, so that the row addresses take few registers (a spilled index
       costs ~10 %): rows side by side (rs = 1: Aᵀ·B, every tiler matmul), a full block of strided
       rows (two bases and the stride), and a partial block through an offset table whose rows past
       m re-read row 0 (valid memory; their results are discarded). */
    if (rs == 1 && m == LATTN__MR) {
#define LATTN__UK_A(r) a[r]
        LATTN__UK_LOOP
#undef LATTN__UK_A
    } else if (m == LATTN__MR) {
        const int64_t a4 = 4 * rs;
#define LATTN__UK_A(r) ((r) < 4 ? a[(r) * rs] : a[a4 + ((r) - 4) * rs])
        LATTN__UK_LOOP
#undef LATTN__UK_A
    } else {
        for (i = 0; i < LATTN__MR; i++) o[i] = (i < m ? i : 0) * rs;
#define LATTN__UK_A(r) a[o[r]]
        LATTN__UK_LOOP
#undef LATTN__UK_A
    }
#undef LATTN__UK_LOOP
#undef LATTN__UK_B
#undef LATTN__UK_ROW
    if (m == LATTN__MR && n == LATTN__NR && !(lower && j0 + LATTN__NR - 1 > i0)) {
        /* full block: accumulators go straight to C */
#if LATTN__NRV == 2
#  define LATTN__UK_ST(r) { float *cr = C + r * ldc;                                              \
            if (acc) { c##r##0 = lattn__vadd(lattn__vload(cr), c##r##0);                          \
                       c##r##1 = lattn__vadd(lattn__vload(cr + LATTN__VW), c##r##1); }            \
            lattn__vstore(cr, c##r##0); lattn__vstore(cr + LATTN__VW, c##r##1); }
#else
#  define LATTN__UK_ST(r) { float *cr = C + r * ldc;                                              \
            if (acc) c##r##0 = lattn__vadd(lattn__vload(cr), c##r##0);                            \
            lattn__vstore(cr, c##r##0); }
#endif
        LATTN__UK_ST(0) LATTN__UK_ST(1) LATTN__UK_ST(2) LATTN__UK_ST(3)
        LATTN__UK_ST(4) LATTN__UK_ST(5) LATTN__UK_ST(6) LATTN__UK_ST(7)
#undef LATTN__UK_ST
        return;
    }
#if LATTN__NRV == 2
#  define LATTN__UK_OUT(r) lattn__vstore(tmp + r * LATTN__NR, c##r##0); \
                           lattn__vstore(tmp + r * LATTN__NR + LATTN__VW, c##r##1);
#else
#  define LATTN__UK_OUT(r) lattn__vstore(tmp + r * LATTN__NR, c##r##0);
#endif
    LATTN__UK_OUT(0) LATTN__UK_OUT(1) LATTN__UK_OUT(2) LATTN__UK_OUT(3)
    LATTN__UK_OUT(4) LATTN__UK_OUT(5) LATTN__UK_OUT(6) LATTN__UK_OUT(7)
#undef LATTN__UK_OUT
    for (i = 0; i < m; i++) {
        int jn = n;
        if (lower) jn = (int)LATTN__MIN((int64_t)n, i0 + i - j0 + 1);
        for (j = 0; j < jn; j++) C[i * ldc + j] = acc ? C[i * ldc + j] + tmp[i * LATTN__NR + j]
                                                      : tmp[i * LATTN__NR + j];
    }
}

/* The kernel behind lattn_sgemm and the tiler; ws: lattn__gemm_ws(N, K) floats. Arguments are
   trusted (validated by the callers). */
static void lattn__sgemm(int flags, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         const float *B, int64_t ldb, float *C, int64_t ldc, float *ws) {
    int64_t rs = (flags & LATTN_GEMM_TRANS_A) ? 1 : lda, cs = (flags & LATTN_GEMM_TRANS_A) ? lda : 1;
    int lower = (flags & LATTN_GEMM_LOWER) != 0;
    /* a short contraction over rows of B (the tiler's products: K <= 128 partitions) reads full
       NR-wide panels of B where they lie; packing would copy more than the kernel reuses */
    int in_place = !(flags & LATTN_GEMM_TRANS_B) && K <= 128, triu = (flags & LATTN__GEMM_TRIU_A) != 0;
    int64_t jc, pc, ir, jr;
    LATTN_ASSERT(ldc >= N && ws != NULL);
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {                                   /* empty sum: C = 0 (or unchanged) */
        if (!(flags & LATTN_GEMM_ACCUMULATE))
            for (ir = 0; ir < M; ir++)
                for (jr = 0; jr < (lower ? LATTN__MIN(N, ir + 1) : N); jr++) C[ir * ldc + jr] = 0.0f;
        return;
    }
    for (jc = 0; jc < N; jc += LATTN__NC) {
        int64_t nc = LATTN__MIN(LATTN__NC, N - jc);
        if (lower && jc > M - 1) break;
        for (pc = 0; pc < K; pc += LATTN__KC) {
            int64_t kc = LATTN__MIN(LATTN__KC, K - pc);
            int acc = pc > 0 || (flags & LATTN_GEMM_ACCUMULATE);
            if (!in_place) lattn__pack_b((flags & LATTN_GEMM_TRANS_B) != 0, B, ldb, pc, kc, jc, nc, ws);
            else if (nc % LATTN__NR)                    /* only the last, partial panel */
                lattn__pack_b(0, B, ldb, pc, kc, jc + nc / LATTN__NR * LATTN__NR, nc % LATTN__NR, ws + nc / LATTN__NR * LATTN__NR * kc);
            for (ir = 0; ir < M; ir += LATTN__MR) {
                int m = (int)LATTN__MIN((int64_t)LATTN__MR, M - ir);
                const float *a = A + ir * rs + pc * cs;
                for (jr = 0; jr < nc; jr += LATTN__NR) {
                    int n = (int)LATTN__MIN((int64_t)LATTN__NR, nc - jr), direct = in_place && n == LATTN__NR;
                    if (lower && jc + jr > ir + m - 1) break;   /* block entirely above diagonal */
                    lattn__ukernel(triu ? LATTN__MAX(0, LATTN__MIN(kc, ir + m - pc)) : kc, a, rs, cs,
                                   direct ? B + pc * ldb + jc + jr : ws + jr * kc, direct ? ldb : LATTN__NR,
                                   C + ir * ldc + jc + jr, ldc, acc,
                                   m, n, ir, jc + jr, lower);
                }
            }
        }
    }
}

LATTN__DEF lattn_status lattn_sgemm(lattn_ctx *ctx, int flags, int64_t M, int64_t N, int64_t K,
                                    const float *A, int64_t lda, const float *B, int64_t ldb,
                                    float *C, int64_t ldc) {
    float *ws;
    size_t cnt;
    int64_t dims[2];
    lattn_status st;
    if (flags & ~(LATTN_GEMM_TRANS_A | LATTN_GEMM_TRANS_B | LATTN_GEMM_ACCUMULATE | LATTN_GEMM_LOWER))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "lattn_sgemm: unknown flags 0x%x", flags);
    if (M < 0 || N < 0 || K < 0)
        return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_sgemm: negative size (M=%lld N=%lld K=%lld)",
                           (long long)M, (long long)N, (long long)K);
    if (M == 0 || N == 0) return lattn__ok(ctx);
    if ((K > 0 && (!A || !B)) || !C) return lattn__fail(ctx, LATTN_E_NULL, "lattn_sgemm: A, B or C is NULL");
    if (ldc < N || (K > 0 && lda < ((flags & LATTN_GEMM_TRANS_A) ? M : K)) ||
        (K > 0 && ldb < ((flags & LATTN_GEMM_TRANS_B) ? K : N)))
        return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_sgemm: leading dimension smaller than the row");
    dims[0] = M;
    dims[1] = ldc;
    if ((st = lattn__count(&cnt, 2, dims)) != LATTN_OK) return lattn__fail(ctx, st, "lattn_sgemm: C too large");
    dims[0] = (flags & LATTN_GEMM_TRANS_A) ? K : M;
    dims[1] = lda;
    if ((st = lattn__count(&cnt, 2, dims)) != LATTN_OK) return lattn__fail(ctx, st, "lattn_sgemm: A too large");
    dims[0] = (flags & LATTN_GEMM_TRANS_B) ? N : K;
    dims[1] = ldb;
    if ((st = lattn__count(&cnt, 2, dims)) != LATTN_OK) return lattn__fail(ctx, st, "lattn_sgemm: B too large");
    if ((st = lattn__alloc_floats(ctx, &ws, lattn__gemm_ws(N, K), "lattn_sgemm")) != LATTN_OK) return st;
    lattn__sgemm(flags, M, N, K, A, lda, B, ldb, C, ldc, ws);
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* ================================================================================================ */
/* >>tiler implementation                                                                           */
/* ================================================================================================ */
/* Built-in profiles (spec sbuf_tiler.md §1, §7). Fields: name, kind, partitions, SBUF bytes per
   partition, reserved, PSUM banks, bank bytes, accumulator bytes, kmax, mmax, nmax, transpose max,
   default chunk, graph limits (instructions, unrolled bodies: spec §6.3's calibrated model, set
   between the 16- and 32-chunk graphs of the Laplace layer), spill, stream bytes. */
static const lattn_dev_profile lattn__profiles[] = {
    { "cpu",  LATTN_DEV_CPU,    128, 0,      0, 0, 2048, 0,      128, 128, 512, 128, 32,  0,     0,  0, 4 },
    { "trn1", LATTN_DEV_NEURON, 128, 196608, 0, 8, 2048, 0,      128, 128, 512, 128, 128, 24576, 48, 0, 4 },
    { "trn2", LATTN_DEV_NEURON, 128, 229376, 0, 8, 2048, 0,      128, 128, 512, 128, 128, 24576, 48, 0, 4 },
    { "trn3", LATTN_DEV_NEURON, 128, 262144, 0, 8, 2048, 0,      128, 128, 512, 128, 128, 24576, 48, 0, 4 },
    { "h100", LATTN_DEV_GPU,    0,   232448, 0, 0, 0,    262144, 0,   0,   0,   0,   64,  0,     0,  0, 4 },
    { "h200", LATTN_DEV_GPU,    0,   232448, 0, 0, 0,    262144, 0,   0,   0,   0,   64,  0,     0,  0, 4 }
};
LATTN__DEF const lattn_dev_profile *lattn_profile_cpu(void)  { return &lattn__profiles[0]; }
LATTN__DEF const lattn_dev_profile *lattn_profile_trn1(void) { return &lattn__profiles[1]; }
LATTN__DEF const lattn_dev_profile *lattn_profile_trn2(void) { return &lattn__profiles[2]; }
LATTN__DEF const lattn_dev_profile *lattn_profile_trn3(void) { return &lattn__profiles[3]; }
LATTN__DEF const lattn_dev_profile *lattn_profile_h100(void) { return &lattn__profiles[4]; }
LATTN__DEF const lattn_dev_profile *lattn_profile_h200(void) { return &lattn__profiles[5]; }
LATTN__DEF const lattn_dev_profile *lattn_profile_by_name(const char *name) {
    size_t i;
    if (!name) return NULL;
    for (i = 0; i < sizeof lattn__profiles / sizeof lattn__profiles[0]; i++)
        if (strcmp(lattn__profiles[i].name, name) == 0) return &lattn__profiles[i];
    return NULL;
}
LATTN__DEF const lattn_dev_profile *lattn_ctx_profile(const lattn_ctx *ctx) {
    return (ctx && ctx->profile) ? ctx->profile : lattn_profile_cpu();
}
LATTN__DEF lattn_status lattn_profile_check(lattn_ctx *ctx, const lattn_dev_profile *p) {
    const char *bad = NULL;
    if (!p) return lattn__fail(ctx, LATTN_E_NULL, "lattn_profile_check: profile is NULL");
    if (!p->name) bad = "name (NULL)";
    else if (p->kind < LATTN_DEV_CPU || p->kind > LATTN_DEV_GPU) bad = "kind";
    else if (p->partitions < 0) bad = "partitions";
    else if (p->psum_banks < 0) bad = "psum_banks";
    else if (p->mm_kmax < 0) bad = "mm_kmax";
    else if (p->mm_mmax < 0) bad = "mm_mmax";
    else if (p->mm_nmax < 0) bad = "mm_nmax";
    else if (p->transpose_max < 0) bad = "transpose_max";
    else if (p->default_chunk < 1 || p->default_chunk > LATTN_MAX_CHUNK) bad = "default_chunk";
    else if (p->spill != 0 && p->spill != 1) bad = "spill";
    else if (p->stream_bytes != 2 && p->stream_bytes != 4) bad = "stream_bytes";
    else if (p->sbuf_reserved_per_partition > p->sbuf_bytes_per_partition && p->sbuf_bytes_per_partition > 0)
        bad = "sbuf_reserved_per_partition (more than sbuf_bytes_per_partition)";
    if (bad) return lattn__fail(ctx, LATTN_E_DOMAIN, "device profile '%s': field %s is out of range", p->name ? p->name : "?", bad);
    return LATTN_OK;
}
/* The context's profile, checked: every chunked form starts here. */
static lattn_status lattn__profile(lattn_ctx *ctx, const lattn_dev_profile **out) {
    *out = lattn_ctx_profile(ctx);
    return lattn_profile_check(ctx, *out);
}

#define LATTN__TILER_SLOTS 64
#define LATTN__SBUF_ALIGN 64
typedef struct lattn__slot {
    int live, space;
    size_t off, len;                     /* SBUF byte range per partition; PSUM: bank, bytes */
    size_t host_start, host_len;         /* floats of the host arena */
} lattn__slot;

struct lattn_tiler {
    lattn_dev_profile prof;
    lattn_tiler_stats st;
    lattn__slot slot[LATTN__TILER_SLOTS];
    int n_live;
    uint64_t psum_live;                  /* banks (or accumulator tiles) in use */
    size_t acc_used;                     /* gpu accumulator bytes in use */
    float *host; size_t host_cap, host_top;
    float *gemm_ws;
    lattn_status err;
    char msg[192];
};

/* Record the tiler's first error and return the status. */
static lattn_status lattn__tfail(lattn_tiler *t, lattn_status s, const char *fmt, ...) {
    if (t->err == LATTN_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->msg, sizeof t->msg, fmt, ap);
        va_end(ap);
        t->err = s;
    }
    return s;
}

LATTN__DEF size_t lattn_tiler_tile_floats(int np, int nf) {
    return (size_t)(np > 0 ? np : 0) * (((size_t)(nf > 0 ? nf : 0) + 15) / 16 * 16);
}

LATTN__DEF lattn_status lattn_tiler_create(lattn_ctx *ctx, const lattn_dev_profile *p,
                                           size_t host_floats, lattn_tiler **out) {
    lattn_tiler *t;
    size_t wsf = lattn__gemm_ws(LATTN__NC, LATTN__KC), total, bytes;
    if (!out) return lattn__fail(ctx, LATTN_E_NULL, "lattn_tiler_create: out is NULL");
    *out = NULL;
    if (!p) p = lattn_ctx_profile(ctx);
    LATTN__TRY(lattn_profile_check(ctx, p));
    if (lattn_size_add(&total, host_floats, wsf) != LATTN_OK || lattn_size_mul(&bytes, total, sizeof(float)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "lattn_tiler_create: host arena of %zu floats overflows", host_floats);
    t = (lattn_tiler *)lattn__alloc(ctx, sizeof *t);
    if (!t) return lattn__fail(ctx, LATTN_E_NOMEM, "lattn_tiler_create: out of memory");
    memset(t, 0, sizeof *t);
    t->prof = *p;
    t->host = (float *)lattn__alloc(ctx, bytes);
    if (!t->host) {
        lattn__free(ctx, t);
        return lattn__fail(ctx, LATTN_E_NOMEM, "lattn_tiler_create: cannot allocate %zu bytes", bytes);
    }
    t->gemm_ws = t->host + host_floats;
    t->host_cap = host_floats;
    *out = t;
    return LATTN_OK;
}
LATTN__DEF void lattn_tiler_destroy(lattn_ctx *ctx, lattn_tiler *t) {
    if (!t) return;
    lattn__free(ctx, t->host);
    lattn__free(ctx, t);
}
LATTN__DEF lattn_status lattn_tiler_error(const lattn_tiler *t, const char **msg) {
    if (msg) *msg = t ? t->msg : "no tiler";
    return t ? t->err : LATTN_E_NULL;
}
LATTN__DEF const lattn_tiler_stats *lattn_tiler_get_stats(const lattn_tiler *t) { return t ? &t->st : NULL; }
LATTN__DEF void lattn_tiler_mark_step(lattn_tiler *t) { if (t) t->st.unrolled_steps++; }

/* Fold one tiler's report into another (sums; maxima for the peaks). */
static void lattn__stats_merge(lattn_tiler_stats *d, const lattn_tiler_stats *s) {
    d->dma_in_bytes += s->dma_in_bytes;
    d->dma_out_bytes += s->dma_out_bytes;
    d->dma_buffers += s->dma_buffers;
    d->matmuls += s->matmuls;
    d->macs += s->macs;
    d->transposes += s->transposes;
    d->transpose_macs += s->transpose_macs;
    d->psum_accum += s->psum_accum;
    d->pe_cycles += s->pe_cycles;
    d->vec_ops += s->vec_ops;
    d->vec_elems += s->vec_elems;
    d->act_ops += s->act_ops;
    d->gpsimd_ops += s->gpsimd_ops;
    d->instructions += s->instructions;
    d->unrolled_steps += s->unrolled_steps;
    d->util_partitions += s->util_partitions;
    d->util_operands += s->util_operands;
    d->sbuf_peak_bytes_per_partition = LATTN__MAX(d->sbuf_peak_bytes_per_partition, s->sbuf_peak_bytes_per_partition);
    d->sbuf_peak_bytes_total = LATTN__MAX(d->sbuf_peak_bytes_total, s->sbuf_peak_bytes_total);
    d->psum_peak_banks = LATTN__MAX(d->psum_peak_banks, s->psum_peak_banks);
    d->live_tiles_peak = LATTN__MAX(d->live_tiles_peak, s->live_tiles_peak);
    d->spill_bytes += s->spill_bytes;
    d->refill_bytes += s->refill_bytes;
}

/* Carve a tile's backing store and a slot; `len` is its byte footprint for the capacity model. */
static lattn_status lattn__tile_new(lattn_tiler *t, lattn_tile *tile, lattn_space sp, int np, int nf,
                                    size_t off, size_t len) {
    size_t need = lattn_tiler_tile_floats(np, nf);
    int i;
    LATTN_ASSERT(np > 0 && nf > 0);      /* the callers check shapes first */
    for (i = 0; i < LATTN__TILER_SLOTS && t->slot[i].live; i++) {}
    if (i == LATTN__TILER_SLOTS)
        return lattn__tfail(t, LATTN_E_SBUF_FULL, "more than %d live tiles", LATTN__TILER_SLOTS);
    if (need > t->host_cap - t->host_top)
        return lattn__tfail(t, LATTN_E_NOMEM, "host arena exhausted: tile [%d x %d] needs %zu floats, %zu left",
                            np, nf, need, t->host_cap - t->host_top);
    t->slot[i].live = 1;
    t->slot[i].space = (int)sp;
    t->slot[i].off = off;
    t->slot[i].len = len;
    t->slot[i].host_start = t->host_top;
    t->slot[i].host_len = need;
    tile->space = sp;
    tile->p0 = 0;
    tile->np = np;
    tile->nf = nf;
    tile->ld = (nf + 15) / 16 * 16;
    tile->off = off;
    tile->data = t->host + t->host_top;
    tile->slot = i;
    tile->esz = (int)sizeof(float);
    tile->spilled = 0;
    t->host_top += need;
    t->n_live++;
    t->st.live_tiles_peak = LATTN__MAX(t->st.live_tiles_peak, (uint64_t)t->n_live);
    return LATTN_OK;
}

static lattn_status lattn__check_np(lattn_tiler *t, int np, int nf, const char *who) {
    if (np < 1 || nf < 1)
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "%s: empty tile [%d x %d]", who, np, nf);
    if (t->prof.partitions > 0 && np > t->prof.partitions)
        return lattn__tfail(t, LATTN_E_TILE_PARTITION, "%s: %d partitions > %d", who, np, t->prof.partitions);
    return LATTN_OK;
}

static lattn_status lattn__sbuf_alloc(lattn_tiler *t, lattn_tile *tile, int np, int nf, int esz) {
    size_t len, off = 0, cap, end;
    int i, moved = 1;
    lattn_status s;
    if (!t || !tile) return LATTN_E_NULL;
    if ((s = lattn__check_np(t, np, nf, "sbuf_alloc")) != LATTN_OK) return s;
    /* column model: the byte range is reserved on every partition (flat memory on a gpu) */
    len = (size_t)nf * (size_t)esz * (t->prof.partitions > 0 ? 1 : (size_t)np);
    len = (len + LATTN__SBUF_ALIGN - 1) / LATTN__SBUF_ALIGN * LATTN__SBUF_ALIGN;
    while (moved) {                       /* first fit: lowest offset clear of every live range */
        moved = 0;
        for (i = 0; i < LATTN__TILER_SLOTS; i++) {
            const lattn__slot *sl = &t->slot[i];
            if (sl->live && sl->space == LATTN_SPACE_SBUF && off < sl->off + sl->len && sl->off < off + len) {
                off = sl->off + sl->len;
                moved = 1;
            }
        }
    }
    cap = t->prof.sbuf_bytes_per_partition;
    end = off + len;
    if (cap > 0 && end > cap - LATTN__MIN(cap, t->prof.sbuf_reserved_per_partition)) {
        if (!t->prof.spill)
            return lattn__tfail(t, LATTN_E_SBUF_FULL, "sbuf_alloc: tile [%d x %d] needs bytes [%zu, %zu) > capacity %zu per partition",
                                np, nf, off, end, cap - t->prof.sbuf_reserved_per_partition);
        /* spill (spec §2.2): the tile lives in HBM, takes no SBUF column; its uses are counted */
        if ((s = lattn__tile_new(t, tile, LATTN_SPACE_SBUF, np, nf, 0, 0)) != LATTN_OK) return s;
        tile->esz = esz;
        tile->spilled = 1;
        t->st.spill_bytes += (uint64_t)np * (uint64_t)nf * (uint64_t)esz;
        return LATTN_OK;
    }
    if ((s = lattn__tile_new(t, tile, LATTN_SPACE_SBUF, np, nf, off, len)) != LATTN_OK) return s;
    tile->esz = esz;
    t->st.sbuf_peak_bytes_per_partition = LATTN__MAX(t->st.sbuf_peak_bytes_per_partition, (uint64_t)end);
    t->st.sbuf_peak_bytes_total = t->st.sbuf_peak_bytes_per_partition *
                                  (uint64_t)(t->prof.partitions > 0 ? t->prof.partitions : 1);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_sbuf_alloc(lattn_tiler *t, lattn_tile *tile, int np, int nf) {
    return lattn__sbuf_alloc(t, tile, np, nf, (int)sizeof(float));
}
LATTN__DEF lattn_status lattn_sbuf_alloc_stream(lattn_tiler *t, lattn_tile *tile, int np, int nf) {
    return lattn__sbuf_alloc(t, tile, np, nf, t && t->prof.stream_bytes > 0 ? t->prof.stream_bytes : (int)sizeof(float));
}
LATTN__DEF lattn_status lattn_psum_alloc(lattn_tiler *t, lattn_tile *tile, int np, int nf) {
    size_t bytes = (size_t)(nf > 0 ? nf : 0) * sizeof(float), bank = 0;
    int i;
    lattn_status s;
    if (!t || !tile) return LATTN_E_NULL;
    if ((s = lattn__check_np(t, np, nf, "psum_alloc")) != LATTN_OK) return s;
    if (t->prof.psum_bank_bytes > 0 && bytes > t->prof.psum_bank_bytes)
        return lattn__tfail(t, LATTN_E_BANK_OVERFLOW, "psum_alloc: %d fp32 per partition > one bank (%zu bytes)",
                            nf, t->prof.psum_bank_bytes);
    if (t->prof.psum_banks > 0) {        /* whole banks: lowest free index */
        for (bank = 0; bank < (size_t)t->prof.psum_banks; bank++) {
            int used = 0;
            for (i = 0; i < LATTN__TILER_SLOTS; i++)
                if (t->slot[i].live && t->slot[i].space == LATTN_SPACE_PSUM && t->slot[i].off == bank) used = 1;
            if (!used) break;
        }
        if (bank == (size_t)t->prof.psum_banks)
            return lattn__tfail(t, LATTN_E_PSUM_FULL, "psum_alloc: all %d banks live", t->prof.psum_banks);
    } else {
        size_t acc = (size_t)np * bytes;
        if (t->prof.acc_bytes > 0 && t->acc_used + acc > t->prof.acc_bytes)
            return lattn__tfail(t, LATTN_E_PSUM_FULL, "psum_alloc: accumulators need %zu bytes > %zu",
                                t->acc_used + acc, t->prof.acc_bytes);
        bank = (size_t)t->psum_live;
    }
    if ((s = lattn__tile_new(t, tile, LATTN_SPACE_PSUM, np, nf, bank, (size_t)np * bytes)) != LATTN_OK) return s;
    if (t->prof.psum_banks == 0) t->acc_used += (size_t)np * bytes;
    t->psum_live++;
    t->st.psum_peak_banks = LATTN__MAX(t->st.psum_peak_banks, t->psum_live);
    return LATTN_OK;
}

LATTN__DEF void lattn_tile_release(lattn_tiler *t, lattn_tile *tile) {
    lattn__slot *sl;
    if (!t || !tile || tile->slot < 0 || tile->slot >= LATTN__TILER_SLOTS) return;
    sl = &t->slot[tile->slot];
    if (!sl->live) return;
    if (sl->space == LATTN_SPACE_PSUM) {
        t->psum_live--;
        if (t->prof.psum_banks == 0) t->acc_used -= sl->len;
    }
    if (sl->host_start + sl->host_len == t->host_top) t->host_top = sl->host_start;
    sl->live = 0;
    t->n_live--;
    tile->slot = -1;
}

LATTN__DEF lattn_tile lattn_tile_view(const lattn_tile *tile, int p, int np, int f, int nf) {
    lattn_tile v = *tile;
    v.p0 = tile->p0 + p;
    v.np = np;
    v.nf = nf;
    v.data = tile->data + (size_t)p * (size_t)tile->ld + (size_t)f;
    if (tile->space == LATTN_SPACE_SBUF) v.off = tile->off + (size_t)f * sizeof(float);
    v.slot = -1;
    return v;
}

/* Engine operand rules: space, partition count, start partition (spec §1.2). */
static lattn_status lattn__operand(lattn_tiler *t, const lattn_tile *x, int space_mask, const char *who) {
    lattn_status s;
    if (!x || !x->data) return lattn__tfail(t, LATTN_E_NULL, "%s: NULL tile", who);
    if (!((int)x->space & space_mask))
        return lattn__tfail(t, LATTN_E_TILE_SPACE, "%s: operand in %s", who, x->space == LATTN_SPACE_PSUM ? "PSUM" : "SBUF");
    if ((s = lattn__check_np(t, x->np, x->nf, who)) != LATTN_OK) return s;
    if (t->prof.partitions == 128) {
        int ok = x->np > 64 ? x->p0 == 0 : x->np > 32 ? (x->p0 == 0 || x->p0 == 64) : (x->p0 % 32 == 0);
        if (!ok || x->p0 + x->np > 128)
            return lattn__tfail(t, LATTN_E_TILE_PARTITION, "%s: %d partitions may not start at partition %d",
                                who, x->np, x->p0);
    }
    t->st.util_partitions += (uint64_t)x->np;
    t->st.util_operands++;
    if (x->spilled) t->st.refill_bytes += (uint64_t)x->np * (uint64_t)x->nf * (uint64_t)x->esz;
    return LATTN_OK;
}
static lattn_status lattn__same(lattn_tiler *t, const lattn_tile *a, const lattn_tile *b, const char *who) {
    if (a->np != b->np || a->nf != b->nf)
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "%s: shapes [%d x %d] and [%d x %d] differ",
                            who, a->np, a->nf, b->np, b->nf);
    return LATTN_OK;
}
static void lattn__count_vec(lattn_tiler *t, const lattn_tile *d, uint64_t *which) {
    (*which)++;
    t->st.vec_elems += (uint64_t)d->np * (uint64_t)d->nf;
    t->st.instructions++;
}
#define LATTN__SP_ANY (LATTN_SPACE_SBUF | LATTN_SPACE_PSUM)

LATTN__DEF lattn_status lattn_dma_load(lattn_tiler *t, lattn_tile *dst, const float *hbm, int64_t row_stride) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN_SPACE_SBUF, "dma_load"));
    if (!hbm) return lattn__tfail(t, LATTN_E_NULL, "dma_load: NULL source");
    for (p = 0; p < dst->np; p++)
        lattn__copy_row(dst->data + (size_t)p * dst->ld, hbm + p * row_stride, (size_t)dst->nf);
    if (dst->nf >= 16) {                 /* the DMA queue runs ahead: the stream's next block of rows
                                            (the next chunk) comes into L2 while the engines work */
        const uintptr_t next = (uintptr_t)hbm + (uintptr_t)((int64_t)dst->np * row_stride) * sizeof(float);
        int f;
        for (p = 0; p < dst->np; p++)
            for (f = 0; f < dst->nf; f += 16)
                LATTN__PREFETCH_L2(next + (uintptr_t)(p * row_stride + f) * sizeof(float));
    }
    t->st.dma_in_bytes += (uint64_t)dst->np * (uint64_t)dst->nf * (uint64_t)dst->esz;
    t->st.dma_buffers += (uint64_t)dst->np;
    t->st.instructions++;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_dma_store(lattn_tiler *t, float *hbm, int64_t row_stride, const lattn_tile *src) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, src, LATTN_SPACE_SBUF, "dma_store"));
    if (!hbm) return lattn__tfail(t, LATTN_E_NULL, "dma_store: NULL destination");
    for (p = 0; p < src->np; p++)      /* HBM is not the cache: rows of 64 floats or more go around it */
        if (src->nf >= 64) lattn__copy_row_nt(hbm + p * row_stride, src->data + (size_t)p * src->ld, (size_t)src->nf);
        else lattn__copy_row(hbm + p * row_stride, src->data + (size_t)p * src->ld, (size_t)src->nf);
    if (src->nf >= 64) lattn__vfence();
    t->st.dma_out_bytes += (uint64_t)src->np * (uint64_t)src->nf * (uint64_t)src->esz;
    t->st.dma_buffers += (uint64_t)src->np;
    t->st.instructions++;
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_matmul(lattn_tiler *t, lattn_tile *psum, const lattn_tile *stat,
                                     const lattn_tile *mov, int flags) {
    int accumulate = flags & LATTN_MM_ACCUMULATE;
    const lattn_dev_profile *p;
    if (!t) return LATTN_E_NULL;
    p = &t->prof;
    LATTN__TRY(lattn__operand(t, stat, LATTN_SPACE_SBUF, "matmul stationary"));
    LATTN__TRY(lattn__operand(t, mov, LATTN_SPACE_SBUF, "matmul moving"));
    LATTN__TRY(lattn__operand(t, psum, LATTN_SPACE_PSUM, "matmul result"));
    if (stat->np != mov->np)
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "matmul: contraction %d (stationary) != %d (moving)", stat->np, mov->np);
    if (p->mm_kmax > 0 && stat->np > p->mm_kmax)
        return lattn__tfail(t, LATTN_E_TILE_KMAX, "matmul: contraction %d > %d", stat->np, p->mm_kmax);
    if (p->mm_mmax > 0 && stat->nf > p->mm_mmax)
        return lattn__tfail(t, LATTN_E_TILE_MMAX, "matmul: stationary free size %d > %d", stat->nf, p->mm_mmax);
    if (p->mm_nmax > 0 && mov->nf > p->mm_nmax)
        return lattn__tfail(t, LATTN_E_TILE_NMAX, "matmul: moving free size %d > %d", mov->nf, p->mm_nmax);
    if (psum->np != stat->nf || psum->nf != mov->nf)
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "matmul: result [%d x %d] for product [%d x %d]",
                            psum->np, psum->nf, stat->nf, mov->nf);
    lattn__sgemm(LATTN_GEMM_TRANS_A | (accumulate ? LATTN_GEMM_ACCUMULATE : 0) | (flags & LATTN_MM_CAUSAL ? LATTN__GEMM_TRIU_A : 0) |
                 (flags & LATTN_MM_LOWER ? LATTN_GEMM_LOWER : 0),
                 stat->nf, mov->nf, stat->np,
                 stat->data, stat->ld, mov->data, mov->ld, psum->data, psum->ld, t->gemm_ws);
    t->st.matmuls++;
    t->st.macs += (uint64_t)stat->np * stat->nf * mov->nf;
    t->st.psum_accum += accumulate ? 1u : 0u;
    t->st.pe_cycles += (uint64_t)LATTN__MAX(mov->nf, 64) * 4u;   /* fp32 runs at 1/4 rate */
    t->st.instructions++;
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_transpose(lattn_tiler *t, lattn_tile *psum, const lattn_tile *src) {
    int p, f, tm;
    if (!t) return LATTN_E_NULL;
    tm = t->prof.transpose_max;
    LATTN__TRY(lattn__operand(t, src, LATTN_SPACE_SBUF, "transpose source"));
    LATTN__TRY(lattn__operand(t, psum, LATTN_SPACE_PSUM, "transpose result"));
    if (tm > 0 && (src->np > tm || src->nf > tm))
        return lattn__tfail(t, LATTN_E_TILE_KMAX, "transpose: [%d x %d] exceeds %d x %d", src->np, src->nf, tm, tm);
    if (psum->np != src->nf || psum->nf != src->np)
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "transpose: result [%d x %d] for source [%d x %d]",
                            psum->np, psum->nf, src->np, src->nf);
#ifdef LATTN__TB
    for (p = 0; p + LATTN__TB <= src->np; p += LATTN__TB)      /* full blocks in registers */
        for (f = 0; f + LATTN__TB <= src->nf; f += LATTN__TB)
            lattn__tblock(src->data + (size_t)p * src->ld + f, src->ld, psum->data + (size_t)f * psum->ld + p, psum->ld);
#endif
    for (p = 0; p < src->np; p += 8)                 /* 8 x 8 blocks keep both sides in cache lines */
        for (f = 0; f < src->nf; f += 8) {
#ifdef LATTN__TB
            if (p + 8 <= src->np / LATTN__TB * LATTN__TB && f + 8 <= src->nf / LATTN__TB * LATTN__TB) continue;   /* done above */
#endif
            int pe = LATTN__MIN(p + 8, src->np), fe = LATTN__MIN(f + 8, src->nf), i, j;
            const float *s0 = src->data + (size_t)p * src->ld + f;
            float *d0 = psum->data + (size_t)f * psum->ld + p;
            if (pe - p == 8 && fe - f == 8) {        /* full block: fixed trip counts unroll */
                float blk[64];
                for (i = 0; i < 8; i++)
                    for (j = 0; j < 8; j++) blk[j * 8 + i] = s0[(size_t)i * src->ld + j];
                for (j = 0; j < 8; j++) memcpy(d0 + (size_t)j * psum->ld, blk + j * 8, 8 * sizeof(float));
                continue;
            }
            for (j = f; j < fe; j++)
                for (i = p; i < pe; i++) psum->data[(size_t)j * psum->ld + i] = src->data[(size_t)i * src->ld + j];
        }
    if (tm > 0) {                        /* a gpu transposes for free, as a load layout */
        t->st.transposes++;
        t->st.transpose_macs += (uint64_t)src->np * src->nf * src->np;
        t->st.instructions++;
    }
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_copy(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "copy"));
    LATTN__TRY(lattn__operand(t, src, LATTN__SP_ANY, "copy"));
    LATTN__TRY(lattn__same(t, dst, src, "copy"));
    for (p = 0; p < dst->np && dst->data != src->data; p++)
        lattn__copy_row(dst->data + (size_t)p * dst->ld, src->data + (size_t)p * src->ld, (size_t)dst->nf);
    lattn__count_vec(t, dst, &t->st.vec_ops);
    return LATTN_OK;
}

/* y[i] = x[i] op b[i] (b_stride 1) or x[i] op b[0] (b_stride 0), over n floats. */
/* One element of a vector-engine op (the scalar tails and column tiles). */
static float lattn__op1(lattn_tile_op op, float x, float b) {
    switch (op) {
    case LATTN_TOP_ADD: return x + b;
    case LATTN_TOP_SUB: return x - b;
    case LATTN_TOP_MUL: return x * b;
    case LATTN_TOP_MAX: return b > x ? b : x;
    default:            return x / b;
    }
}
static void lattn__row_op(lattn_tile_op op, int n, const float *x, const float *b, int b_stride, float *y) {
    int i = 0;
    lattn__vf vb = lattn__vset1(b[0]);
    for (; i + LATTN__VW <= n; i += LATTN__VW) {
        lattn__vf vx = lattn__vload(x + i), r;
        if (b_stride) vb = lattn__vload(b + i);
        switch (op) {
        case LATTN_TOP_ADD: r = lattn__vadd(vx, vb); break;
        case LATTN_TOP_SUB: r = lattn__vsub(vx, vb); break;
        case LATTN_TOP_MUL: r = lattn__vmul(vx, vb); break;
        case LATTN_TOP_MAX: r = lattn__vmax(vb, vx); break;
        default:            r = lattn__vdiv(vx, vb); break;
        }
        lattn__vstore(y + i, r);
    }
    for (; i < n; i++) y[i] = lattn__op1(op, x[i], b[b_stride ? i : 0]);
}

LATTN__DEF lattn_status lattn_tile_tt(lattn_tiler *t, lattn_tile *dst, const lattn_tile *a,
                                      const lattn_tile *b, lattn_tile_op op) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "tensor_tensor"));
    LATTN__TRY(lattn__operand(t, a, LATTN__SP_ANY, "tensor_tensor"));
    LATTN__TRY(lattn__operand(t, b, LATTN__SP_ANY, "tensor_tensor"));
    LATTN__TRY(lattn__same(t, dst, a, "tensor_tensor"));
    LATTN__TRY(lattn__same(t, dst, b, "tensor_tensor"));
    if (dst->nf == 1)                    /* a column: one scalar per partition, no per-row call */
        for (p = 0; p < dst->np; p++)
            dst->data[(size_t)p * dst->ld] = lattn__op1(op, a->data[(size_t)p * a->ld], b->data[(size_t)p * b->ld]);
    else
        for (p = 0; p < dst->np; p++)
            lattn__row_op(op, dst->nf, a->data + (size_t)p * a->ld, b->data + (size_t)p * b->ld, 1,
                          dst->data + (size_t)p * dst->ld);
    lattn__count_vec(t, dst, &t->st.vec_ops);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_ts(lattn_tiler *t, lattn_tile *dst, const lattn_tile *a,
                                      const lattn_tile *col, float imm, lattn_tile_op op) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "tensor_scalar"));
    LATTN__TRY(lattn__operand(t, a, LATTN__SP_ANY, "tensor_scalar"));
    LATTN__TRY(lattn__same(t, dst, a, "tensor_scalar"));
    if (col) {
        LATTN__TRY(lattn__operand(t, col, LATTN__SP_ANY, "tensor_scalar column"));
        if (col->np != a->np) return lattn__tfail(t, LATTN_E_TILE_SHAPE, "tensor_scalar: column of %d partitions for %d", col->np, a->np);
    }
    if (dst->nf == 1)
        for (p = 0; p < dst->np; p++)
            dst->data[(size_t)p * dst->ld] = lattn__op1(op, a->data[(size_t)p * a->ld], col ? col->data[(size_t)p * col->ld] : imm);
    else
        for (p = 0; p < dst->np; p++)
            lattn__row_op(op, dst->nf, a->data + (size_t)p * a->ld, col ? col->data + (size_t)p * col->ld : &imm, 0,
                          dst->data + (size_t)p * dst->ld);
    lattn__count_vec(t, dst, &t->st.vec_ops);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_stt(lattn_tiler *t, lattn_tile *dst, const lattn_tile *a,
                                       const lattn_tile *col, float imm, const lattn_tile *b) {
    int p, f;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "scalar_tensor_tensor"));
    LATTN__TRY(lattn__operand(t, a, LATTN__SP_ANY, "scalar_tensor_tensor"));
    LATTN__TRY(lattn__operand(t, b, LATTN__SP_ANY, "scalar_tensor_tensor"));
    LATTN__TRY(lattn__same(t, dst, a, "scalar_tensor_tensor"));
    LATTN__TRY(lattn__same(t, dst, b, "scalar_tensor_tensor"));
    if (col) {
        LATTN__TRY(lattn__operand(t, col, LATTN__SP_ANY, "scalar_tensor_tensor column"));
        if (col->np != a->np) return lattn__tfail(t, LATTN_E_TILE_SHAPE, "scalar_tensor_tensor: column of %d partitions for %d", col->np, a->np);
    }
    for (p = 0; p < dst->np; p++) {
        const float *x = a->data + (size_t)p * a->ld, *y = b->data + (size_t)p * b->ld;
        float *d = dst->data + (size_t)p * dst->ld, s = col ? col->data[(size_t)p * col->ld] : imm;
        lattn__vf vs = lattn__vset1(s);
        for (f = 0; f + LATTN__VW <= dst->nf; f += LATTN__VW)
            lattn__vstore(d + f, lattn__vfma(lattn__vload(x + f), vs, lattn__vload(y + f)));
        for (; f < dst->nf; f++) d[f] = x[f] * s + y[f];
    }
    lattn__count_vec(t, dst, &t->st.vec_ops);
    return LATTN_OK;
}

/* y = func(x·scale + bias) over n floats; the tail runs the same vector code. sum (optional)
   receives Σ y, accumulated in vector lanes in a fixed order. */
static void lattn__act_row(lattn_act_fn func, int n, const float *x, float *y, float scale, float bias, float *sum) {
    int i = 0;
    lattn__vf vs = lattn__vset1(scale), vb = lattn__vset1(bias), acc = lattn__vzero();
    if (func == LATTN_ACT_RSQRT) {       /* 1/sqrt, per element (norms: one value per partition) */
        float a = 0.0f;
        for (; i < n; i++) { y[i] = 1.0f / sqrtf(scale * x[i] + bias); a += y[i]; }
        if (sum) *sum = a;
        return;
    }
    while (i < n) {
        int w = LATTN__MIN(LATTN__VW, n - i);
        lattn__vf v = lattn__vfma(w == LATTN__VW ? lattn__vload(x + i) : lattn__vload_n(x + i, (size_t)w), vs, vb);
        switch (func) {
        case LATTN_ACT_EXP:     v = lattn__vexp(v); break;
        case LATTN_ACT_SILU:    v = lattn__vsilu(v); break;
        case LATTN_ACT_SIGMOID: v = lattn__vsigmoid(v); break;
        case LATTN_ACT_SQUARE:  v = lattn__vmul(v, v); break;
        case LATTN_ACT_RELU:    v = lattn__vmax(lattn__vzero(), v); break;
        case LATTN_ACT_LOG:     v = lattn__vlog(v); break;
        default: break;
        }
        if (w == LATTN__VW) lattn__vstore(y + i, v); else lattn__vstore_n(y + i, v, (size_t)w);
        if (sum) acc = lattn__vadd(acc, w == LATTN__VW ? v : lattn__vload_n(y + i, (size_t)w));
        i += w;
    }
    if (sum) *sum = lattn__vhsum(acc);
}

LATTN__DEF lattn_status lattn_tile_act(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                       lattn_act_fn func, float scale, float bias) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "activation"));
    LATTN__TRY(lattn__operand(t, src, LATTN__SP_ANY, "activation"));
    LATTN__TRY(lattn__same(t, dst, src, "activation"));
    if (dst->nf == 1) {                  /* a column: gathered, so the vector code runs full width */
        float col[256];
        int p0, n, i;
        for (p0 = 0; p0 < dst->np; p0 += n) {
            n = LATTN__MIN(256, dst->np - p0);
            for (i = 0; i < n; i++) col[i] = src->data[(size_t)(p0 + i) * src->ld];
            lattn__act_row(func, n, col, col, scale, bias, NULL);
            for (i = 0; i < n; i++) dst->data[(size_t)(p0 + i) * dst->ld] = col[i];
        }
    } else
        for (p = 0; p < dst->np; p++)
            lattn__act_row(func, dst->nf, src->data + (size_t)p * src->ld, dst->data + (size_t)p * dst->ld, scale, bias, NULL);
    lattn__count_vec(t, dst, &t->st.act_ops);
    return LATTN_OK;
}
static lattn_status lattn__col_operand(lattn_tiler *t, const lattn_tile *col, int np, const char *who) {
    LATTN__TRY(lattn__operand(t, col, LATTN__SP_ANY, who));
    if (col->np != np || col->nf != 1)
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "%s: column [%d x %d] for %d partitions", who, col->np, col->nf, np);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_tile_act_reduce(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                              lattn_act_fn func, float scale, const lattn_tile *bias,
                                              lattn_tile *sum) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "activation_reduce"));
    LATTN__TRY(lattn__operand(t, src, LATTN__SP_ANY, "activation_reduce"));
    LATTN__TRY(lattn__same(t, dst, src, "activation_reduce"));
    if (bias) LATTN__TRY(lattn__col_operand(t, bias, dst->np, "activation_reduce bias"));
    if (sum) LATTN__TRY(lattn__col_operand(t, sum, dst->np, "activation_reduce sum"));
    for (p = 0; p < dst->np; p++)
        lattn__act_row(func, dst->nf, src->data + (size_t)p * src->ld, dst->data + (size_t)p * dst->ld, scale,
                       bias ? bias->data[(size_t)p * bias->ld] : 0.0f, sum ? sum->data + (size_t)p * sum->ld : NULL);
    lattn__count_vec(t, dst, &t->st.act_ops);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_reduce(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src, lattn_tile_op op) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "reduce"));
    LATTN__TRY(lattn__operand(t, src, LATTN__SP_ANY, "reduce"));
    if (dst->np != src->np || op == LATTN_TOP_SUB || op == LATTN_TOP_DIV || op == LATTN_TOP_MUL)
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "reduce: needs equal partitions and op add or max");
    for (p = 0; p < dst->np; p++) {
        const float *x = src->data + (size_t)p * src->ld;
        dst->data[(size_t)p * dst->ld] = op == LATTN_TOP_ADD ? lattn_vec_sum((size_t)src->nf, x)
                                                             : lattn_vec_max((size_t)src->nf, x);
    }
    lattn__count_vec(t, src, &t->st.vec_ops);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_sumsq(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src) {
    int p;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "sumsq"));
    LATTN__TRY(lattn__operand(t, src, LATTN__SP_ANY, "sumsq"));
    if (dst->np != src->np || dst->nf != 1) return lattn__tfail(t, LATTN_E_TILE_SHAPE, "sumsq: needs dst [%d x 1]", src->np);
    for (p = 0; p < dst->np; p++) {
        const float *x = src->data + (size_t)p * src->ld;
        dst->data[(size_t)p * dst->ld] = lattn_vec_dot((size_t)src->nf, x, x);
    }
    lattn__count_vec(t, src, &t->st.act_ops);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_memset(lattn_tiler *t, lattn_tile *dst, float value) {
    int p, f;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "memset"));
    for (p = 0; p < dst->np; p++)
        for (f = 0; f < dst->nf; f++) dst->data[(size_t)p * dst->ld + f] = value;
    lattn__count_vec(t, dst, &t->st.gpsimd_ops);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_iota(lattn_tiler *t, lattn_tile *dst, float base, int cp, int cf) {
    int p, f;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "iota"));
    for (p = 0; p < dst->np; p++)
        for (f = 0; f < dst->nf; f++) dst->data[(size_t)p * dst->ld + f] = base + (float)cp * (float)p + (float)cf * (float)f;
    lattn__count_vec(t, dst, &t->st.gpsimd_ops);
    return LATTN_OK;
}

/* First kept column of row p for the affine predicate c0 + cp·p + cf·f >= 0 (cf > 0), or one past the
   last kept one (cf < 0), clamped to [0, nf]; cf = 0 keeps every column or none. */
static int lattn__affine_edge(int64_t c0, int cp, int cf, int p, int nf) {
    int64_t r = c0 + (int64_t)cp * p, e;
    if (cf == 0) return r >= 0 ? 0 : nf;
    if (cf > 0) e = r >= 0 ? -(r / cf) : (-r + cf - 1) / cf;          /* ceil(-r / cf) */
    else e = (r >= 0 ? r / -cf : -((-r + -cf - 1) / -cf)) + 1;         /* floor(r / -cf) + 1 */
    return (int)LATTN__MAX((int64_t)0, LATTN__MIN((int64_t)nf, e));
}
LATTN__DEF lattn_status lattn_tile_select_affine(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                                 int64_t c0, int cp, int cf, float fill) {
    int p, f;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "affine_select"));
    LATTN__TRY(lattn__operand(t, src, LATTN__SP_ANY, "affine_select"));
    LATTN__TRY(lattn__same(t, dst, src, "affine_select"));
    if (c0 > INT32_MAX || c0 < -(int64_t)INT32_MAX) c0 = c0 > 0 ? INT32_MAX : -(int64_t)INT32_MAX;   /* far past any tile */
    for (p = 0; p < dst->np; p++) {
        const float *x = src->data + (size_t)p * src->ld;
        float *y = dst->data + (size_t)p * dst->ld;
        int e = lattn__affine_edge(c0, cp, cf, p, dst->nf);
        int k0 = cf < 0 ? 0 : e, k1 = cf < 0 ? e : dst->nf;              /* kept columns [k0, k1) */
        if (cf == 0) { k0 = e; k1 = dst->nf; }
        for (f = 0; f < k0; f++) y[f] = fill;
        if (y != x && k1 > k0) memmove(y + k0, x + k0, (size_t)(k1 - k0) * sizeof(float));
        for (f = LATTN__MAX(k1, k0); f < dst->nf; f++) y[f] = fill;
    }
    lattn__count_vec(t, dst, &t->st.gpsimd_ops);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_tile_select_tri(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                              int shift, float fill) {
    return lattn_tile_select_affine(t, dst, src, -(int64_t)shift, -1, 1, fill);
}
LATTN__DEF lattn_status lattn_tile_select_mask(lattn_tiler *t, lattn_tile *dst, const lattn_tile *src,
                                               const lattn_tile *mask, float fill) {
    int p, f;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, dst, LATTN__SP_ANY, "select"));
    LATTN__TRY(lattn__operand(t, src, LATTN__SP_ANY, "select"));
    LATTN__TRY(lattn__operand(t, mask, LATTN__SP_ANY, "select mask"));
    LATTN__TRY(lattn__same(t, dst, src, "select"));
    LATTN__TRY(lattn__same(t, dst, mask, "select"));
    for (p = 0; p < dst->np; p++) {
        const float *x = src->data + (size_t)p * src->ld, *mk = mask->data + (size_t)p * mask->ld;
        float *y = dst->data + (size_t)p * dst->ld;
        for (f = 0; f < dst->nf; f++) y[f] = mk[f] != 0.0f ? x[f] : fill;
    }
    lattn__count_vec(t, dst, &t->st.vec_ops);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_tile_tri_solve(lattn_tiler *t, lattn_tile *x, const lattn_tile *mt, const lattn_tile *beta) {
    int i, j;
    if (!t) return LATTN_E_NULL;
    LATTN__TRY(lattn__operand(t, x, LATTN_SPACE_SBUF, "tri_solve"));
    LATTN__TRY(lattn__operand(t, mt, LATTN_SPACE_SBUF, "tri_solve"));
    if (beta) LATTN__TRY(lattn__operand(t, beta, LATTN_SPACE_SBUF, "tri_solve"));
    if (mt->np != x->np || mt->nf != x->np || (beta && (beta->np != x->np || beta->nf != 1)))
        return lattn__tfail(t, LATTN_E_TILE_SHAPE, "tri_solve: needs M [%d x %d] and beta [%d x 1]", x->np, x->np, x->np);
    for (i = 1; i < x->np; i++) {       /* row i -= β_i Σ_{j<i} M[i][j] row j, 4 vectors at a time */
        float *xi = x->data + (size_t)i * x->ld, bi = beta ? beta->data[(size_t)i * beta->ld] : 1.0f;
        int f0 = 0;
        for (; f0 + 4 * LATTN__VW <= x->nf; f0 += 4 * LATTN__VW) {
            lattn__vf a0 = lattn__vload(xi + f0), a1 = lattn__vload(xi + f0 + LATTN__VW);
            lattn__vf a2 = lattn__vload(xi + f0 + 2 * LATTN__VW), a3 = lattn__vload(xi + f0 + 3 * LATTN__VW);
            for (j = 0; j < i; j++) {
                const float *xj = x->data + (size_t)j * x->ld + f0;
                lattn__vf m = lattn__vset1(-bi * mt->data[(size_t)j * mt->ld + i]);
                a0 = lattn__vfma(m, lattn__vload(xj), a0);
                a1 = lattn__vfma(m, lattn__vload(xj + LATTN__VW), a1);
                a2 = lattn__vfma(m, lattn__vload(xj + 2 * LATTN__VW), a2);
                a3 = lattn__vfma(m, lattn__vload(xj + 3 * LATTN__VW), a3);
            }
            lattn__vstore(xi + f0, a0);
            lattn__vstore(xi + f0 + LATTN__VW, a1);
            lattn__vstore(xi + f0 + 2 * LATTN__VW, a2);
            lattn__vstore(xi + f0 + 3 * LATTN__VW, a3);
        }
        for (j = 0; j < i && f0 < x->nf; j++)
            lattn_vec_axpy((size_t)(x->nf - f0), -bi * mt->data[(size_t)j * mt->ld + i], x->data + (size_t)j * x->ld + f0, xi + f0);
    }
    t->st.gpsimd_ops += (uint64_t)x->np;
    t->st.vec_elems += (uint64_t)x->np * (uint64_t)x->nf;
    t->st.instructions += (uint64_t)x->np;
    return LATTN_OK;
}

LATTN__DEF size_t lattn_tiler_stats_json(const lattn_tiler_stats *s, const lattn_dev_profile *p,
                                         char *buf, size_t cap) {
    int n;
    double util;
    if (!s || (!buf && cap)) {
        if (buf && cap) buf[0] = 0;
        return 0;
    }
    util = s->util_operands ? (double)s->util_partitions / (128.0 * (double)s->util_operands) : 0.0;
    n = snprintf(buf, cap,
        "{\"profile\":\"%s\",\"dma_in_bytes\":%llu,\"dma_out_bytes\":%llu,\"dma_buffers\":%llu,"
        "\"matmuls\":%llu,\"macs\":%llu,\"transposes\":%llu,\"transpose_macs\":%llu,\"psum_accum\":%llu,"
        "\"pe_cycles\":%llu,\"vec_ops\":%llu,\"act_ops\":%llu,\"gpsimd_ops\":%llu,\"instructions\":%llu,"
        "\"unrolled_steps\":%llu,\"sbuf_peak_bytes_per_partition\":%llu,\"sbuf_peak_bytes_total\":%llu,"
        "\"psum_peak_banks\":%llu,\"live_tiles_peak\":%llu,\"partition_util\":%.4f,\"spill_bytes\":%llu,"
        "\"refill_bytes\":%llu,\"graph_overflow\":%s}",
        p ? p->name : "?", (unsigned long long)s->dma_in_bytes, (unsigned long long)s->dma_out_bytes,
        (unsigned long long)s->dma_buffers, (unsigned long long)s->matmuls, (unsigned long long)s->macs,
        (unsigned long long)s->transposes, (unsigned long long)s->transpose_macs,
        (unsigned long long)s->psum_accum, (unsigned long long)s->pe_cycles, (unsigned long long)s->vec_ops,
        (unsigned long long)s->act_ops, (unsigned long long)s->gpsimd_ops,
        (unsigned long long)s->instructions, (unsigned long long)s->unrolled_steps,
        (unsigned long long)s->sbuf_peak_bytes_per_partition, (unsigned long long)s->sbuf_peak_bytes_total,
        (unsigned long long)s->psum_peak_banks, (unsigned long long)s->live_tiles_peak, util,
        (unsigned long long)s->spill_bytes, (unsigned long long)s->refill_bytes,
        lattn_tiler_graph_overflow(s, p) ? "true" : "false");
    return n < 0 ? 0 : (size_t)n;
}
LATTN__DEF int lattn_tiler_graph_overflow(const lattn_tiler_stats *s, const lattn_dev_profile *p) {
    if (!s || !p) return 0;
    return (p->graph_limit_instr > 0 && s->instructions > p->graph_limit_instr) ||
           (p->graph_limit_unrolled > 0 && s->unrolled_steps > p->graph_limit_unrolled);
}

/* ================================================================================================ */
/* Shared helpers of the mixers: sequences, validation, parallel loops                              */
/* ================================================================================================ */
/* A call holds N sequences: the B rows of the batch, or the n_seqs packed sequences of offsets. */
/* 1 when every g[0..n) is <= 0 (-inf allowed; NaN is not): a vector pass keeps the max and Σ x·0
   (NaN for a NaN or an infinity); only a block that may hold a bad value is scanned one by one. */
static int lattn__gates_ok(const float *g, int64_t n) {
    lattn__vf mx = lattn__vset1(-1.0f), nz = lattn__vzero();
    float lane[LATTN__VW];
    int64_t i;
    int ok;
    for (i = 0; i + LATTN__VW <= n; i += LATTN__VW) {
        const lattn__vf x = lattn__vload(g + i);
        mx = lattn__vmax(mx, x);
        nz = lattn__vadd(nz, lattn__vmul(x, lattn__vzero()));
    }
    lattn__vstore(lane, mx);
    ok = lattn__vhsum(nz) == 0.0f;
    for (i = 0; i < LATTN__VW; i++) ok &= lane[i] <= 0.0f;
    for (i = n - n % LATTN__VW; i < n; i++) ok &= g[i] <= 0.0f;
    for (i = 0; !ok && i < n; i++)
        if (!(g[i] <= 0.0f)) return 0;
    return 1;
}
/* Every log gate must be <= 0: the first NaN or positive gate is an error naming it. Blocks of
   1024 gates, checked on the context's threads (a long gate tensor is a stream from memory). */
static lattn_status lattn__check_gates(lattn_ctx *ctx, const char *who, const float *g, int64_t n) {
    const int64_t nb = (n + 1023) / 1024;
    int64_t b, first = nb, i;
    if (!g) return LATTN_OK;
    LATTN__PRAGMA(omp parallel for schedule(static) reduction(min: first) num_threads(n > 65536 ? lattn__threads(ctx) : 1))
    for (b = 0; b < nb; b++)
        if (b < first && !lattn__gates_ok(g + b * 1024, LATTN__MIN(1024, n - b * 1024))) first = b;
    for (i = first * 1024; first < nb && i < n; i++)
        if (!(g[i] <= 0.0f))
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: log gate %lld is %g (must be <= 0)", who, (long long)i, (double)g[i]);
    return LATTN_OK;
}

static lattn_status lattn__check_seqs(lattn_ctx *ctx, const char *who, int64_t B, int64_t T,
                                      const int64_t *off, int64_t n_seqs, int64_t *n_out) {
    int64_t i;
    if (B < 1) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld (must be >= 1)", who, (long long)B);
    if (T < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: T = %lld (must be >= 0)", who, (long long)T);
    if (!off) { *n_out = B; return LATTN_OK; }
    if (B != 1) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: offsets need B == 1 (B = %lld)", who, (long long)B);
    if (n_seqs < 1) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: n_seqs = %lld with offsets", who, (long long)n_seqs);
    if (off[0] != 0 || off[n_seqs] != T)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: offsets must run from 0 to T = %lld", who, (long long)T);
    for (i = 0; i < n_seqs; i++)
        if (off[i + 1] < off[i])
            return lattn__fail(ctx, LATTN_E_SHAPE, "%s: offsets decrease at %lld", who, (long long)i);
    *n_out = n_seqs;
    return LATTN_OK;
}
/* First token (on the flattened B·T token axis) and length of sequence i. */
static void lattn__seq(const int64_t *off, int64_t T, int64_t i, int64_t *tok0, int64_t *len) {
    if (off) { *tok0 = off[i]; *len = off[i + 1] - off[i]; }
    else     { *tok0 = i * T;  *len = T; }
}
/* Check that the products of the given dimension lists fit; message names the tensor. */
static lattn_status lattn__check_count(lattn_ctx *ctx, const char *who, const char *what, int n, const int64_t *d) {
    size_t c;
    lattn_status s = lattn__count(&c, n, d);
    if (s != LATTN_OK) return lattn__fail(ctx, s, s == LATTN_E_SHAPE ? "%s: %s has a negative size" : "%s: size of %s overflows", who, what);
    return LATTN_OK;
}
/* a + b for sizes in validation: saturates at INT64_MAX (then refused as an overflow), never wraps. */
static int64_t lattn__sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

static double lattn__gelu_d(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }
static float  lattn__gelu(float x)    { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
static double lattn__silu_d(double x) { return x / (1.0 + exp(-x)); }

/* A workspace carved from one block: *part[i] gets the next n[i] elements (names beside sizes at
   the call, instead of a chain of pointer sums). */
static void lattn__carve_floats(float *base, float **const *part, const int64_t *n, int k) {
    int i;
    for (i = 0; i < k; base += n[i], i++) *part[i] = base;
}
#ifndef LATTN_NO_MODELS   /* used by the models only */
static void lattn__carve_doubles(double *base, double **const *part, const int64_t *n, int k) {
    int i;
    for (i = 0; i < k; base += n[i], i++) *part[i] = base;
}
#endif

#ifndef LATTN_NO_MODELS
/* ================================================================================================ */
/* >>arena implementation: the weights of every model, and their safetensors form                   */
/* ================================================================================================ */
/* ---- weight arenas: named tensors (at most 3 dimensions) in one block of floats ----------------- */
/* A zeroed table of nt tensors followed by `extra` floats of the caller's (derived buffers). */
static lattn_status lattn__table_new(lattn_ctx *ctx, const char *who, int64_t nt, size_t extra, lattn_tensor **tab) {
    size_t bytes = (size_t)nt * sizeof(lattn_tensor) + extra * sizeof(float);
    *tab = (lattn_tensor *)lattn__alloc(ctx, bytes);
    if (!*tab) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate %zu bytes", who, bytes);
    memset(*tab, 0, bytes);
    return LATTN_OK;
}
/* Once names and shapes are set (sizes checked by the caller's configuration check): counts, one
   arena, data pointers in table order. On failure the table is released too. */
static lattn_status lattn__arena_bind(lattn_ctx *ctx, const char *who, lattn_tensor *tab, int64_t nt,
                                      float **arena, size_t *n_params) {
    size_t total = 0;
    int64_t i;
    for (i = 0; i < nt; i++) {
        int d;
        tab[i].count = 1;
        for (d = 0; d < tab[i].ndim; d++) tab[i].count *= (size_t)tab[i].shape[d];
        total += tab[i].count;
    }
    if (lattn__alloc_floats(ctx, arena, total, who) != LATTN_OK) { lattn__free(ctx, tab); return LATTN_E_NOMEM; }
    *n_params = total;
    for (i = 0, total = 0; i < nt; i++) { tab[i].data = *arena + total; total += tab[i].count; }
    return LATTN_OK;
}
static lattn_tensor *lattn__arena_find(lattn_tensor *tab, int64_t nt, const char *name) {
    int64_t i;
    for (i = 0; tab && name && i < nt; i++) if (strcmp(tab[i].name, name) == 0) return &tab[i];
    return NULL;
}
/* The seeded initialisation every layer uses: biases 0, vectors (norm weights) 1, convolutions
   U(±W^-1/2) (PyTorch's Conv1d default), every other matrix N(0, 0.02²) (fla's initializer_range). */
static void lattn__arena_init(lattn_tensor *tab, int64_t nt, lattn_rng *r) {
    int64_t i;
    for (i = 0; i < nt; i++) {
        lattn_tensor *t = &tab[i];
        const char *dot = strrchr(t->name, '.');
        size_t j;
        if (dot && strcmp(dot, ".bias") == 0) memset(t->data, 0, t->count * sizeof(float));
        else if (t->ndim == 1) for (j = 0; j < t->count; j++) t->data[j] = 1.0f;
        else if (strstr(t->name, "conv")) {
            float bound = (float)(1.0 / sqrt((double)t->shape[1]));
            lattn_rng_fill_uniform(r, t->data, t->count, -bound, bound);
        } else lattn_rng_fill_normal(r, t->data, t->count, 0.0f, 0.02f);
    }
}

/* ---- weights as safetensors: the configuration rides in __metadata__ ---------------------------- */
/* One configuration field in the metadata: an integer (i), a float (f), or an index into a list of
   names (e, names). Written with lattn__cfg_write, read back strictly with lattn__cfg_read. */
typedef struct lattn__cfield { const char *key; int64_t *i; float *f; double *d; int *e; const char *const *names; int n_names; } lattn__cfield;
#define LATTN__CFG_MAX 16
static void lattn__cfg_write(const lattn__cfield *fl, int n, char (*vals)[32], const char **meta) {
    int i;
    for (i = 0; i < n; i++) {
        if (fl[i].i) snprintf(vals[i], 32, "%lld", (long long)*fl[i].i);
        else if (fl[i].f) snprintf(vals[i], 32, "%.9g", (double)*fl[i].f);
        else if (fl[i].d) snprintf(vals[i], 32, "%.17g", *fl[i].d);
        else snprintf(vals[i], 32, "%s", fl[i].names[*fl[i].e]);
        meta[2 * i] = fl[i].key;
        meta[2 * i + 1] = vals[i];
    }
}
static lattn_status lattn__cfg_read(lattn_ctx *ctx, const char *who, const lattn_st_file *f, const lattn__cfield *fl, int n) {
    int i, d;
    for (i = 0; i < n; i++) {
        const char *v = lattn_st_meta(f, fl[i].key);
        char *end = NULL;
        if (!v) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: metadata has no \"%s\"", who, fl[i].key);
        errno = 0;
        if (fl[i].i) *fl[i].i = (int64_t)strtoll(v, &end, 10);
        else if (fl[i].f) {
            double x = strtod(v, &end);
            if (!(fabs(x) <= FLT_MAX)) end = (char *)(size_t)v;    /* NaN, inf or beyond float: refused */
            else *fl[i].f = (float)x;
        } else if (fl[i].d) {
            *fl[i].d = strtod(v, &end);
            if (!isfinite(*fl[i].d)) end = (char *)(size_t)v;
        } else {
            for (d = 0; d < fl[i].n_names && strcmp(v, fl[i].names[d]) != 0; d++) {}
            *fl[i].e = d;
            end = (char *)(size_t)(d < fl[i].n_names ? v + strlen(v) : v);
        }
        if (end == v || *end != '\0' || errno)
            return lattn__fail(ctx, LATTN_E_FORMAT, "%s: metadata \"%s\" = \"%s\" is not valid", who, fl[i].key, v);
    }
    return LATTN_OK;
}
/* The tensors of an arena as safetensors (float32) with the configuration's metadata. */
static lattn_status lattn__arena_serialize(lattn_ctx *ctx, const char *who, const lattn_tensor *tab, int64_t nt,
                                           const lattn__cfield *fl, int n_fl, unsigned char **out, size_t *size) {
    char vals[LATTN__CFG_MAX][32];
    const char *meta[2 * LATTN__CFG_MAX];
    lattn_st_entry *e;
    int64_t i;
    lattn_status st;
    lattn__cfg_write(fl, n_fl, vals, meta);
    e = (lattn_st_entry *)lattn__alloc(ctx, (size_t)nt * sizeof *e);
    if (!e) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    for (i = 0; i < nt; i++) {
        e[i].name = tab[i].name;
        e[i].dtype = LATTN_DTYPE_F32;
        e[i].ndim = tab[i].ndim;
        e[i].shape = tab[i].shape;
        e[i].data = tab[i].data;
    }
    st = lattn_st_serialize(ctx, e, nt, meta, n_fl, out, size);
    lattn__free(ctx, e);
    return st;
}
/* Every tensor of the arena from `prefix`+name in f, with exactly its shape (any float dtype). */
static lattn_status lattn__arena_load(lattn_ctx *ctx, const char *who, lattn_tensor *tab, int64_t nt,
                                      const lattn_st_file *f, const char *prefix) {
    char name[2 * LATTN_NAME_MAX];
    int64_t i;
    int d;
    for (i = 0; i < nt; i++) {
        lattn_tensor *t = &tab[i];
        const lattn_st_tensor *s;
        snprintf(name, sizeof name, "%s%s", prefix, t->name);
        s = lattn_st_find(f, name);
        if (!s) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: missing tensor '%s'", who, name);
        if (s->ndim != t->ndim || s->dtype == LATTN_DTYPE_I32 || s->dtype == LATTN_DTYPE_I64)
            return lattn__fail(ctx, LATTN_E_FORMAT, "%s: '%s' must be a float tensor of %d dimensions", who, name, t->ndim);
        for (d = 0; d < t->ndim; d++)
            if (s->shape[d] != t->shape[d])
                return lattn__fail(ctx, LATTN_E_FORMAT, "%s: '%s' has dimension %d = %lld, the configuration needs %lld",
                                   who, name, d, (long long)s->shape[d], (long long)t->shape[d]);
        LATTN__TRY(lattn_st_to_f32(ctx, s, t->data, t->count));
    }
    return LATTN_OK;
}
/* A configuration-check failure met while loading is the file's fault: LATTN_E_FORMAT, same text. */
static lattn_status lattn__as_format(lattn_ctx *ctx, lattn_status st) {
    char msg[256];
    if (st == LATTN_E_NOMEM || st == LATTN_OK) return st;
    snprintf(msg, sizeof msg, "%s", lattn_ctx_error(ctx));
    return lattn__fail(ctx, LATTN_E_FORMAT, "%s (from the file's metadata)", msg);
}

#ifndef LATTN_NO_STDIO
/* n bytes into the file at path (a model's _save). */
static lattn_status lattn__write_file(lattn_ctx *ctx, const char *who, const char *path, const unsigned char *buf, size_t n) {
    FILE *fp = fopen(path, "wb");
    int ok = fp && fwrite(buf, 1, n, fp) == n;
    if (fp && fclose(fp) != 0) ok = 0;
    return ok ? LATTN_OK : lattn__fail(ctx, LATTN_E_IO, "%s: cannot write '%s'", who, path);
}
/* The file forms of a model's weights I/O, from its memory forms: lattn_<fam>_save (the weights as
   lattn_<fam>_serialize writes them, into a file) and lattn_<fam>_init_file (lattn_<fam>_init_st on
   a file's tensors, no prefix). Every model has the four, so the two file forms are written once. */
#define LATTN__MODEL_FILES(fam, T)                                                                  \
    LATTN__DEF lattn_status lattn_##fam##_save(lattn_ctx *ctx, const T *m, const char *path) {      \
        unsigned char *buf = NULL;                                                                  \
        size_t n = 0;                                                                               \
        lattn_status st;                                                                            \
        if (!path) return lattn__fail(ctx, LATTN_E_NULL, "lattn_" #fam "_save: path is NULL");      \
        LATTN__TRY(lattn_##fam##_serialize(ctx, m, &buf, &n));                                      \
        st = lattn__write_file(ctx, "lattn_" #fam "_save", path, buf, n);                           \
        lattn__free(ctx, buf);                                                                      \
        return st == LATTN_OK ? lattn__ok(ctx) : st;                                                \
    }                                                                                               \
    LATTN__DEF lattn_status lattn_##fam##_init_file(lattn_ctx *ctx, T *m, const char *path) {       \
        lattn_st_file f;                                                                            \
        lattn_status st;                                                                            \
        if (m) memset(m, 0, sizeof *m);                                                             \
        LATTN__TRY(lattn_st_load(ctx, path, &f));                                                   \
        st = lattn_##fam##_init_st(ctx, m, &f, "");                                                 \
        lattn_st_free(ctx, &f);                                                                     \
        return st;                                                                                  \
    }
#endif

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>conv implementation                                                                            */
/* ================================================================================================ */
static lattn_status lattn__conv_check_in(lattn_ctx *ctx, const char *who, const lattn_shortconv_args *a, int64_t *n) {
    int64_t d[3];
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    LATTN__TRY(lattn__check_seqs(ctx, who, a->B, a->T, a->offsets, a->n_seqs, n));
    if (a->D < 1 || a->W < 1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: D = %lld, W = %lld (must be >= 1)", who, (long long)a->D, (long long)a->W);
    if (!a->w) return lattn__fail(ctx, LATTN_E_NULL, "%s: w is NULL", who);
    if (a->T > 0 && !a->x) return lattn__fail(ctx, LATTN_E_NULL, "%s: x is NULL", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->D;
    LATTN__TRY(lattn__check_count(ctx, who, "x", 3, d));
    d[0] = *n;
    d[1] = a->D;
    d[2] = a->W;
    LATTN__TRY(lattn__check_count(ctx, who, "state", 3, d));
    return LATTN_OK;
}
/* The inputs, and the output y of a forward form. */
static lattn_status lattn__conv_check(lattn_ctx *ctx, const char *who, const lattn_shortconv_args *a, int64_t *n) {
    LATTN__TRY(lattn__conv_check_in(ctx, who, a, n));
    if (a->T > 0 && !a->y) return lattn__fail(ctx, LATTN_E_NULL, "%s: y is NULL", who);
    return LATTN_OK;
}

/* >>conv.ref -------------------------------------------------------------------------------------
   y[t][c] = act(bias[c] + Σ_j w[c][j] x[t-(W-1)+j][c]), the history from h0; in double */
/* Reference: one channel, one token at a time, in double. */
LATTN__DEF lattn_status lattn_shortconv_ref(lattn_ctx *ctx, const lattn_shortconv_args *a) {
    int64_t n, s, t, c, j, D, W;
    LATTN__TRY(lattn__conv_check(ctx, "lattn_shortconv_ref", a, &n));
    D = a->D;
    W = a->W;
    for (s = 0; s < n; s++) {
        int64_t tok0, len;
        const float *h0 = a->h0 ? a->h0 + s * D * W : NULL;
        lattn__seq(a->offsets, a->T, s, &tok0, &len);
        for (c = 0; c < D; c++) {
            /* input at position p of the sequence; p < 0 reads the initial window */
#define LATTN__CONV_IN(p) ((p) >= 0 ? (double)a->x[(tok0 + (p)) * D + c] \
                                    : (h0 ? (double)h0[c * W + W + (p)] : 0.0))
            for (t = 0; t < len; t++) {
                double acc = a->bias ? (double)a->bias[c] : 0.0;
                for (j = 0; j < W; j++) acc += (double)a->w[c * W + j] * LATTN__CONV_IN(t - (W - 1) + j);
                acc = a->silu ? lattn__silu_d(acc) : acc;
                a->y[(tok0 + t) * D + c] = (float)acc;
                if (a->y64) a->y64[(tok0 + t) * D + c] = acc;
            }
            for (j = 0; j < W; j++) {
                if (a->ht) a->ht[(s * D + c) * W + j] = (float)LATTN__CONV_IN(len - W + j);
                if (a->ht64) a->ht64[(s * D + c) * W + j] = LATTN__CONV_IN(len - W + j);
            }
#undef LATTN__CONV_IN
        }
    }
    return lattn__ok(ctx);
}

/* >>conv.ref_backward ------------------------------------------------------------------------------
   pre_t = bias + Σ_j w[j] x[t-(W-1)+j], y_t = act(pre_t):  dpre_t = dy_t act'(pre_t);  dbias = Σ_t dpre_t;
   dw[j] = Σ_t dpre_t x[t-(W-1)+j];  dx[p] = Σ_j dpre_{p+(W-1)-j} w[j] (+ dht where ht reads x[p]);
   the history positions p < 0 give dh0 the same way */
static double lattn__silu_grad_d(double x) {
    double s = 1.0 / (1.0 + exp(-x));
    return s * (1.0 + x * (1.0 - s));
}
LATTN__DEF lattn_status lattn_shortconv_ref_backward(lattn_ctx *ctx, const lattn_shortconv_args *a,
                                                     const lattn_shortconv_grads *g) {
    const char *who = "lattn_shortconv_ref_backward";
    int64_t n, s, t, c, j, p, D, W, maxlen = 0;
    double *dpre, *dxs, *dw, *db;
    size_t cnt;
    LATTN__TRY(lattn__conv_check_in(ctx, who, a, &n));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    D = a->D;
    W = a->W;
    for (s = 0; s < n; s++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, s, &tok0, &len);
        maxlen = LATTN__MAX(maxlen, len);
    }
    /* per channel dpre [len] and the input gradient over positions -W .. len-1; the sums dw, dbias */
    cnt = (size_t)(2 * maxlen + W) + (size_t)(D * W + D);
    LATTN__TRY(lattn__alloc_doubles(ctx, &dpre, cnt, who));
    dxs = dpre + maxlen;                 /* dxs[p + W] = ∂ℒ/∂(the input at position p) */
    dw = dxs + maxlen + W;
    db = dw + D * W;
    memset(dw, 0, (size_t)(D * W + D) * sizeof(double));
    for (s = 0; s < n; s++) {
        int64_t tok0, len;
        const float *h0 = a->h0 ? a->h0 + s * D * W : NULL;
        lattn__seq(a->offsets, a->T, s, &tok0, &len);
        for (c = 0; c < D; c++) {
#define LATTN__CONV_IN(q) ((q) >= 0 ? (double)a->x[(tok0 + (q)) * D + c] : (h0 ? (double)h0[c * W + W + (q)] : 0.0))
            for (t = 0; t < len; t++) {
                double pre = a->bias ? (double)a->bias[c] : 0.0, dyt = (double)g->dout[(tok0 + t) * D + c];
                for (j = 0; j < W; j++) pre += (double)a->w[c * W + j] * LATTN__CONV_IN(t - (W - 1) + j);
                dpre[t] = a->silu ? dyt * lattn__silu_grad_d(pre) : dyt;
            }
            for (p = 0; p < len + W; p++) dxs[p] = 0;
            for (t = 0; t < len; t++) {
                db[c] += dpre[t];
                for (j = 0; j < W; j++) {
                    p = t - (W - 1) + j;
                    dw[c * W + j] += dpre[t] * LATTN__CONV_IN(p);
                    dxs[p + W] += dpre[t] * (double)a->w[c * W + j];
                }
            }
            for (j = 0; g->dht && j < W; j++) dxs[len + j] += (double)g->dht[(s * D + c) * W + j];   /* ht reads position len - W + j */
#undef LATTN__CONV_IN
            for (t = 0; t < len; t++) lattn__put(g->dx, g->dx64, (tok0 + t) * D + c, dxs[t + W]);
            for (j = 0; j < W; j++) lattn__put(g->dh0, g->dh064, (s * D + c) * W + j, dxs[j]);
        }
    }
    for (c = 0; c < D * W; c++) lattn__put(g->dw, g->dw64, c, dw[c]);
    for (c = 0; c < D; c++) lattn__put(g->dbias, g->dbias64, c, db[c]);
    lattn__free(ctx, dpre);
    return lattn__ok(ctx);
}

/* >>conv.chunk -----------------------------------------------------------------------------------
   the same sum over blocks of 64 tokens, SIMD over channels, threads over the blocks */
/* Fast: channels in SIMD vectors with the weights transposed to [W][D]; the history of each
   sequence is staged as W rows [W][D] so that every tap reads a contiguous row. Threads take fixed
   blocks of 64 tokens (the split depends on the shape only). */
#define LATTN__CONV_BLOCK 64
LATTN__DEF lattn_status lattn_shortconv_chunk(lattn_ctx *ctx, const lattn_shortconv_args *a) {
    int64_t n, s, D, W, nblk_total = 0, *blk_start = NULL, b;
    float *ws, *wt, *hist;
    size_t nws;
    LATTN__TRY(lattn__conv_check(ctx, "lattn_shortconv_chunk", a, &n));
    D = a->D;
    W = a->W;
    nws = ((size_t)(W * D) * (size_t)(1 + n) + 1) / 2 * 2;     /* even: int64 block table follows */
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, nws + (size_t)(n + 1) * 2, "lattn_shortconv_chunk"));
    wt = ws;
    hist = ws + W * D;
    blk_start = (int64_t *)(void *)(ws + nws);    /* n + 1 prefix counts of blocks (8 bytes each) */
    for (s = 0; s <= n; s++) {
        int64_t tok0, len;
        blk_start[s] = nblk_total;
        if (s == n) break;
        lattn__seq(a->offsets, a->T, s, &tok0, &len);
        nblk_total += (len + LATTN__CONV_BLOCK - 1) / LATTN__CONV_BLOCK;
    }
    for (b = 0; b < W; b++)
        for (s = 0; s < D; s++) wt[b * D + s] = a->w[s * W + b];
    for (s = 0; s < n; s++) {
        int64_t c, j;
        for (j = 0; j < W; j++)
            for (c = 0; c < D; c++) hist[(s * W + j) * D + c] = a->h0 ? a->h0[(s * D + c) * W + j] : 0.0f;
    }
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(lattn__threads(ctx)))
    for (b = 0; b < nblk_total; b++) {
        int64_t sq = 0, tok0, len, t, t_end, c, j;
        while (blk_start[sq + 1] <= b) sq++;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        t = (b - blk_start[sq]) * LATTN__CONV_BLOCK;
        t_end = LATTN__MIN(len, t + LATTN__CONV_BLOCK);
        for (; t < t_end; t++) {
            float *y = a->y + (tok0 + t) * D;
            for (c = 0; c < D; c += LATTN__VW) {
                int64_t w = LATTN__MIN((int64_t)LATTN__VW, D - c);
                lattn__vf acc = a->bias ? (w == LATTN__VW ? lattn__vload(a->bias + c) : lattn__vload_n(a->bias + c, (size_t)w))
                                        : lattn__vzero();
                for (j = 0; j < W; j++) {
                    int64_t p = t - (W - 1) + j;
                    const float *xr = p >= 0 ? a->x + (tok0 + p) * D : hist + (sq * W + W + p) * D;
                    if (w == LATTN__VW) acc = lattn__vfma(lattn__vload(wt + j * D + c), lattn__vload(xr + c), acc);
                    else acc = lattn__vfma(lattn__vload_n(wt + j * D + c, (size_t)w), lattn__vload_n(xr + c, (size_t)w), acc);
                }
                if (a->silu) acc = lattn__vsilu(acc);
                if (w == LATTN__VW) lattn__vstore(y + c, acc); else lattn__vstore_n(y + c, acc, (size_t)w);
            }
        }
    }
    if (a->ht)
        for (s = 0; s < n; s++) {
            int64_t tok0, len, c, j;
            lattn__seq(a->offsets, a->T, s, &tok0, &len);
            for (c = 0; c < D; c++)
                for (j = 0; j < W; j++) {
                    int64_t p = len - W + j;
                    a->ht[(s * D + c) * W + j] = p >= 0 ? a->x[(tok0 + p) * D + c] : hist[(s * W + W + p) * D + c];
                }
        }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* >>conv.chunk_backward --------------------------------------------------------------------------
   per block of 64 tokens, SIMD over channels: dpre_t = dout_t ⊙ act'(pre_t) (pre recomputed), kept for
   the last W rows; dx_p = Σ_j w[j] ⊙ dpre_{p+W-1-j}; dw[j] += dpre_t ⊙ x_{t-(W-1)+j}, dbias += dpre_t */
/* Work items are fixed groups of blocks (at most 64, each with its own partial sums of dw and
   dbias, added in item order at the end): the split depends on the shape only, so any thread
   count gives the same bits. Each block recomputes the W-1 rows of dpre past its end; the block at
   a sequence's start writes the history's gradient dh0, and dht is added after the blocks. */
#define LATTN__CONV_BW_ITEMS 64
static void lattn__conv_dpre_row(const lattn_shortconv_args *a, const float *wt, const float *hist, int64_t sq, int64_t tok0,
                                 int64_t t, const float *dout, float *dp) {
    const int64_t D = a->D, W = a->W;
    int64_t c, j;
    for (c = 0; c < D; c += LATTN__VW) {
        const size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, D - c);
        lattn__vf pre = a->bias ? lattn__vload_w(a->bias + c, w) : lattn__vzero(), d = lattn__vload_w(dout + c, w);
        for (j = 0; j < W; j++) {
            const int64_t p = t - (W - 1) + j;
            const float *xr = p >= 0 ? a->x + (tok0 + p) * D : hist + (sq * W + W + p) * D;
            pre = lattn__vfma(lattn__vload_w(wt + j * D + c, w), lattn__vload_w(xr + c, w), pre);
        }
        if (a->silu) {                   /* SiLU'(x) = s (1 + x (1 - s)), s = sigmoid(x) */
            const lattn__vf one = lattn__vset1(1.0f), sg = lattn__vsigmoid(pre);
            d = lattn__vmul(d, lattn__vmul(sg, lattn__vfma(pre, lattn__vsub(one, sg), one)));
        }
        lattn__vstore_w(dp + c, d, w);
    }
}
LATTN__DEF lattn_status lattn_shortconv_chunk_backward(lattn_ctx *ctx, const lattn_shortconv_args *a,
                                                       const lattn_shortconv_grads *g) {
    const char *who = "lattn_shortconv_chunk_backward";
    int64_t n, s, D, W, nblk = 0, ni, it, *blk, c, j, i;
    float *ws, *wt, *hist, *part, *ring;
    size_t nws, npart, nring;
    int nthr;
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    LATTN__TRY(lattn__conv_check_in(ctx, who, a, &n));
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    D = a->D;
    W = a->W;
    nthr = lattn__threads(ctx);
    for (s = 0; s < n; s++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, s, &tok0, &len);
        nblk += (len + LATTN__CONV_BLOCK - 1) / LATTN__CONV_BLOCK;
    }
    ni = LATTN__MIN(nblk, (int64_t)LATTN__CONV_BW_ITEMS);
    npart = (size_t)(ni * (W + 1) * D);
    nring = (size_t)(W * D);
    nws = ((size_t)(W * D) * (size_t)(1 + n) + npart + nring * (size_t)nthr + 1) / 2 * 2;   /* even: int64 block table follows */
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, nws + (size_t)(4 * nblk + 2), who));   /* 2 int64 a block */
    wt = ws;
    hist = wt + W * D;
    part = hist + n * W * D;             /* per item: dw [W][D], then dbias [D] */
    ring = part + npart;                 /* per thread: dpre of the last W rows */
    blk = (int64_t *)(void *)(ws + nws); /* per block: sequence, first token */
    for (s = 0, i = 0; s < n; s++) {
        int64_t tok0, len, t;
        lattn__seq(a->offsets, a->T, s, &tok0, &len);
        for (t = 0; t < len; t += LATTN__CONV_BLOCK, i++) { blk[2 * i] = s; blk[2 * i + 1] = t; }
    }
    for (j = 0; j < W; j++)
        for (c = 0; c < D; c++) wt[j * D + c] = a->w[c * W + j];
    for (s = 0; s < n; s++)
        for (j = 0; j < W; j++)
            for (c = 0; c < D; c++) hist[(s * W + j) * D + c] = a->h0 ? a->h0[(s * D + c) * W + j] : 0.0f;
    if (g->dh0) memset(g->dh0, 0, sizeof(float) * (size_t)(n * D * W));
    LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(nthr))
    for (it = 0; it < ni; it++) {
        float *pw = part + it * (W + 1) * D, *pb = pw + W * D, *rg = ring + (size_t)lattn__thread_id() * nring;
        int64_t b;
        memset(pw, 0, sizeof(float) * (size_t)((W + 1) * D));
        for (b = nblk * it / ni; b < nblk * (it + 1) / ni; b++) {
            const int64_t sq = blk[2 * b], t0 = blk[2 * b + 1];
            int64_t tok0, len, t, t1, cc, jj;
            lattn__seq(a->offsets, a->T, sq, &tok0, &len);
            t1 = LATTN__MIN(len, t0 + LATTN__CONV_BLOCK);
            for (t = t0; t < t1 + W - 1; t++) {
                float *dp = rg + (t - t0) % W * D;
                const int64_t p = t - (W - 1);          /* the input position whose dx is complete now */
                if (t < len) lattn__conv_dpre_row(a, wt, hist, sq, tok0, t, g->dout + (tok0 + t) * D, dp);
                else memset(dp, 0, sizeof(float) * (size_t)D);
                for (cc = 0; t < t1 && cc < D; cc += LATTN__VW) {   /* dbias, dw of the block's rows */
                    const size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, D - cc);
                    const lattn__vf d = lattn__vload_w(dp + cc, w);
                    lattn__vstore_w(pb + cc, lattn__vadd(lattn__vload_w(pb + cc, w), d), w);
                    for (jj = 0; jj < W; jj++) {
                        const int64_t q = t - (W - 1) + jj;
                        const float *xr = q >= 0 ? a->x + (tok0 + q) * D : hist + (sq * W + W + q) * D;
                        lattn__vstore_w(pw + jj * D + cc, lattn__vfma(d, lattn__vload_w(xr + cc, w), lattn__vload_w(pw + jj * D + cc, w)), w);
                    }
                }
                if (p < (t0 == 0 ? -(W - 1) : t0) || p >= t1) continue;
                if (p >= 0 && !g->dx) continue;
                if (p < 0 && !g->dh0) continue;
                for (cc = 0; cc < D; cc += LATTN__VW) {   /* dx_p = Σ_j w[j] dpre_{p+W-1-j} */
                    const size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, D - cc);
                    lattn__vf acc = lattn__vzero();
                    float lane[LATTN__VW];
                    size_t l;
                    for (jj = 0; jj < W; jj++) {
                        const int64_t r = p + (W - 1) - jj;
                        if (r < t0) continue;               /* before the sequence: no term */
                        acc = lattn__vfma(lattn__vload_w(wt + jj * D + cc, w), lattn__vload_w(rg + (r - t0) % W * D + cc, w), acc);
                    }
                    if (p >= 0) { lattn__vstore_w(g->dx + (tok0 + p) * D + cc, acc, w); continue; }
                    lattn__vstore_w(lane, acc, w);              /* history: dh0 [D][W] */
                    for (l = 0; l < w; l++) g->dh0[(sq * D + cc + (int64_t)l) * W + W + p] = lane[l];
                }
            }
        }
    }
    for (s = 0; g->dht && s < n; s++) {  /* ht reads position len - W + j */
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, s, &tok0, &len);
        for (c = 0; c < D; c++)
            for (j = 0; j < W; j++) {
                const int64_t p = len - W + j;
                const float d = g->dht[(s * D + c) * W + j];
                if (p >= 0 && g->dx) g->dx[(tok0 + p) * D + c] += d;
                if (p < 0 && g->dh0) g->dh0[(s * D + c) * W + W + p] += d;
            }
    }
    for (c = 0; c < D && (g->dw || g->dbias); c++) {   /* the items' partial sums, in item order */
        for (j = 0; j <= W; j++) {
            float acc = 0.0f;
            for (it = 0; it < ni; it++) acc += part[(it * (W + 1) + j) * D + c];
            if (j < W && g->dw) g->dw[c * W + j] = acc;
            if (j == W && g->dbias) g->dbias[c] = acc;
        }
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* One decoding step: shift the window left, append x_t, convolve the window. */
static lattn_status lattn__shortconv_step1(lattn_ctx *ctx, const lattn_shortconv_args *a) {
    int64_t n, s, c, j, D, W;
    LATTN__TRY(lattn__conv_check(ctx, "lattn_shortconv_step", a, &n));
    D = a->D;
    W = a->W;
    for (s = 0; s < n; s++)
        for (c = 0; c < D; c++) {
            const float *h0 = a->h0 ? a->h0 + (s * D + c) * W : NULL;
            float *ht = a->ht + (s * D + c) * W, acc = a->bias ? a->bias[c] : 0.0f;
            for (j = 0; j + 1 < W; j++) ht[j] = h0 ? h0[j + 1] : 0.0f;   /* safe in place: reads ahead */
            ht[W - 1] = a->x[s * D + c];
            for (j = 0; j < W; j++) acc += a->w[c * W + j] * ht[j];
            a->y[s * D + c] = a->silu ? acc / (1.0f + expf(-acc)) : acc;
        }
    return lattn__ok(ctx);
}

/* >>conv.step ------------------------------------------------------------------------------------
   the window [D][W] shifted by one token, x_t appended, y = act(bias + w·window) */
/* _step: one token on the caller's state goes straight to the kernel; a whole call runs it token by
   token on a private copy of each sequence's state (h0 may then be NULL = zeros, ht NULL = not kept). */
LATTN__DEF lattn_status lattn_shortconv_step(lattn_ctx *ctx, const lattn_shortconv_args *a) {
    int64_t n, sq, t, DW;
    float *S;
    lattn_status st = LATTN_OK;
    if (a && a->T == 1 && !a->offsets && a->ht) return lattn__shortconv_step1(ctx, a);
    LATTN__TRY(lattn__conv_check(ctx, "lattn_shortconv_step", a, &n));
    DW = a->D * a->W;
    LATTN__TRY(lattn__alloc_floats(ctx, &S, (size_t)DW, "lattn_shortconv_step"));
    for (sq = 0; sq < n && st == LATTN_OK; sq++) {
        int64_t tok0, len;
        lattn_shortconv_args s = *a;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        if (a->h0) memcpy(S, a->h0 + sq * DW, sizeof(float) * (size_t)DW); else memset(S, 0, sizeof(float) * (size_t)DW);
        s.B = 1;
        s.T = 1;
        s.offsets = NULL;
        s.n_seqs = 0;
        s.h0 = S;
        s.ht = S;
        for (t = 0; t < len && st == LATTN_OK; t++) {
            s.x = a->x + (tok0 + t) * a->D;
            s.y = a->y + (tok0 + t) * a->D;
            st = lattn__shortconv_step1(ctx, &s);
        }
        if (a->ht) memcpy(a->ht + sq * DW, S, sizeof(float) * (size_t)DW);
    }
    lattn__free(ctx, S);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

/* ================================================================================================ */
/* >>scan implementation                                                                            */
/* ================================================================================================ */
static lattn_status lattn__scan_check(lattn_ctx *ctx, const char *who, const lattn_scan_args *a) {
    int64_t d[3];
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    if (a->B < 1 || a->T < 0 || a->N < 1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld, N = %lld", who, (long long)a->B, (long long)a->T, (long long)a->N);
    if (a->T > 0 && (!a->a || !a->b)) return lattn__fail(ctx, LATTN_E_NULL, "%s: a or b is NULL", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->N;
    LATTN__TRY(lattn__check_count(ctx, who, "a/b/h", 3, d));
    if (a->log_space) {                  /* validated before anything is written */
        size_t i, n = (size_t)(a->B * a->T * a->N);
        for (i = 0; i < n; i++)
            if (a->a[i] > 0.0f)
                return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: log decay %g > 0 at index %zu", who, (double)a->a[i], i);
    }
    return LATTN_OK;
}
static double lattn__decay_d(float a, int log_space) {
    return log_space ? exp(LATTN__MAX((double)a, (double)LATTN_LOG_GATE_MIN)) : (double)a;
}

/* >>scan.ref -------------------------------------------------------------------------------------
   h_t = a_t h_{t-1} + b_t (a_t = e^{l_t} in log space), sequentially in double */
LATTN__DEF lattn_status lattn_scan_ref(lattn_ctx *ctx, const lattn_scan_args *a) {
    int64_t b, t, n, N;
    LATTN__TRY(lattn__scan_check(ctx, "lattn_scan_ref", a));
    N = a->N;
    for (b = 0; b < a->B; b++)
        for (n = 0; n < N; n++) {
            double h = a->h0 ? (double)a->h0[b * N + n] : 0.0;
            for (t = 0; t < a->T; t++) {
                size_t i = (size_t)((b * a->T + t) * N + n);
                h = lattn__decay_d(a->a[i], a->log_space) * h + (double)a->b[i];
                if (a->y) a->y[i] = (float)h;
                if (a->y64) a->y64[i] = h;
            }
            if (a->ht) a->ht[b * N + n] = (float)h;
            if (a->ht64) a->ht64[b * N + n] = h;
        }
    return lattn__ok(ctx);
}

/* >>scan.ref_backward ------------------------------------------------------------------------------
   t = T-1 .. 0 with U = ∂ℒ/∂h_t (from dht):  U += dy_t;  db_t = U;  da_t = U h_{t-1} (log space:
   U a_t h_{t-1});  U = a_t U;  and dh0 = U at the end */
LATTN__DEF lattn_status lattn_scan_ref_backward(lattn_ctx *ctx, const lattn_scan_args *a, const lattn_scan_grads *g) {
    const char *who = "lattn_scan_ref_backward";
    int64_t b, t, n, N;
    double *h;
    LATTN__TRY(lattn__scan_check(ctx, who, a));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    N = a->N;
    LATTN__TRY(lattn__alloc_doubles(ctx, &h, (size_t)(a->T + 1), who));   /* h[t + 1] = h_t, h[0] = h0 */
    for (b = 0; b < a->B; b++)
        for (n = 0; n < N; n++) {
            double U = g->dht ? (double)g->dht[b * N + n] : 0.0;
            h[0] = a->h0 ? (double)a->h0[b * N + n] : 0.0;
            for (t = 0; t < a->T; t++) {
                size_t i = (size_t)((b * a->T + t) * N + n);
                h[t + 1] = lattn__decay_d(a->a[i], a->log_space) * h[t] + (double)a->b[i];
            }
            for (t = a->T - 1; t >= 0; t--) {
                size_t i = (size_t)((b * a->T + t) * N + n);
                double at = lattn__decay_d(a->a[i], a->log_space), da;
                if (g->dout) U += (double)g->dout[i];
                da = U * h[t];
                if (a->log_space) da = a->a[i] < LATTN_LOG_GATE_MIN ? 0.0 : da * at;
                lattn__put(g->db, g->db64, (int64_t)i, U);
                lattn__put(g->da, g->da64, (int64_t)i, da);
                U *= at;
            }
            lattn__put(g->dh0, g->dh064, b * N + n, U);
        }
    lattn__free(ctx, h);
    return lattn__ok(ctx);
}

/* Scan `len` rows of nc channels (row stride N) from the state in st (updated in place); writes
   every row to h (row stride ldh) when given and, when prod is given, the product of the decays
   into it. */
static void lattn__scan_rows(int64_t len, int64_t nc, int64_t N, const float *a, const float *b, int log_space,
                             float *st, float *h, int64_t ldh, float *prod) {
    const lattn__vf lo = lattn__vset1(LATTN_LOG_GATE_MIN);
    int64_t t, c;
    if (prod) for (c = 0; c < nc; c++) prod[c] = 1.0f;
    for (t = 0; t < len; t++) {
        const float *at = a + t * N, *bt = b + t * N;
        float *ht = h ? h + t * ldh : NULL;
        for (c = 0; c < nc; c += LATTN__VW) {
            size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, nc - c);
            lattn__vf va = lattn__vload_w(at + c, w), vb = lattn__vload_w(bt + c, w), vh = lattn__vload_w(st + c, w);
            if (log_space) va = lattn__vexp(lattn__vmax(lo, va));
            vh = lattn__vfma(va, vh, vb);
            lattn__vstore_w(st + c, vh, w);
            if (ht) lattn__vstore_w(ht + c, vh, w);
            if (prod) lattn__vstore_w(prod + c, lattn__vmul(lattn__vload_w(prod + c, w), va), w);
        }
    }
}

/* >>scan.chunk -----------------------------------------------------------------------------------
   (a1, b1) ∘ (a2, b2) = (a1 a2, a2 b1 + b2): blocks scanned locally, carries combined, blocks
   rescanned from their carries (or blocks of channels, each scanned whole) */
#define LATTN__SCAN_CHANNEL_BLOCK 16384   /* 64 KiB of state: rows stream contiguously */
LATTN__DEF lattn_status lattn_scan_chunk(lattn_ctx *ctx, const lattn_scan_args *a) {
    const int64_t N = a ? a->N : 0, T = a ? a->T : 0, TB = LATTN_SCAN_TIME_BLOCK;
    int64_t w, nw, nblk;
    int nthr;
    float *ws;
    LATTN__TRY(lattn__scan_check(ctx, "lattn_scan_chunk", a));
    nthr = lattn__threads(ctx);
    if (a->B * N >= LATTN_SCAN_CHANNEL_SPLIT || T <= TB) {
        /* channel split: each work item scans blocks of channels over the whole sequence */
        int64_t ncb = (N + LATTN__SCAN_CHANNEL_BLOCK - 1) / LATTN__SCAN_CHANNEL_BLOCK;
        nw = a->B * ncb;
        LATTN__TRY(lattn__alloc_floats(ctx, &ws, (size_t)(LATTN__SCAN_CHANNEL_BLOCK * nthr), "lattn_scan_chunk"));
        LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
        for (w = 0; w < nw; w++) {
            int64_t b = w / ncb, c0 = (w % ncb) * LATTN__SCAN_CHANNEL_BLOCK, nc = LATTN__MIN(LATTN__SCAN_CHANNEL_BLOCK, N - c0);
            float *st = ws + (size_t)lattn__thread_id() * LATTN__SCAN_CHANNEL_BLOCK;
            size_t off = (size_t)(b * T * N + c0);
            if (a->h0) memcpy(st, a->h0 + b * N + c0, (size_t)nc * sizeof(float)); else memset(st, 0, (size_t)nc * sizeof(float));
            lattn__scan_rows(T, nc, N, a->a + off, a->b + off, a->log_space, st, a->y ? a->y + off : NULL, N, NULL);
            if (a->ht) memcpy(a->ht + b * N + c0, st, (size_t)nc * sizeof(float));
        }
        lattn__free(ctx, ws);
        return lattn__ok(ctx);
    }
    /* time split: (1) each block scanned from zero gives its carry (Π a, local h); (2) carries
       combined in order with ∘; (3) each block rescanned from its true initial state */
    nblk = (T + TB - 1) / TB;
    nw = a->B * nblk;
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, (size_t)(2 * nw * N), "lattn_scan_chunk"));
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < nw; w++) {
        int64_t b = w / nblk, t0 = (w % nblk) * TB;
        size_t off = (size_t)((b * T + t0) * N);
        float *prod = ws + 2 * w * N, *loc = prod + N;
        memset(loc, 0, (size_t)N * sizeof(float));
        lattn__scan_rows(LATTN__MIN(TB, T - t0), N, N, a->a + off, a->b + off, a->log_space, loc, NULL, N, prod);
    }
    for (w = 0; w < nw; w++) {           /* carry_k = (Π a)_k · carry_{k-1} + local_k, in block order */
        int64_t b = w / nblk, k = w % nblk, c;
        float *prod = ws + 2 * w * N, *loc = prod + N;
        const float *prev = k > 0 ? ws + 2 * (w - 1) * N + N : a->h0 ? a->h0 + b * N : NULL;
        for (c = 0; c < N; c++) {
            float init = prev ? prev[c] : 0.0f, carry = prod[c] * init + loc[c];
            prod[c] = init;              /* now the block's initial state */
            loc[c] = carry;
        }
    }
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < nw; w++) {           /* rescan (only the last block when h is not wanted) */
        int64_t b = w / nblk, k = w % nblk, t0 = k * TB;
        size_t off = (size_t)((b * T + t0) * N);
        float *st = ws + 2 * w * N;
        if (!a->y && k != nblk - 1) continue;
        lattn__scan_rows(LATTN__MIN(TB, T - t0), N, N, a->a + off, a->b + off, a->log_space, st, a->y ? a->y + off : NULL, N, NULL);
        if (a->ht && k == nblk - 1) memcpy(a->ht + b * N, st, (size_t)N * sizeof(float));
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* >>scan.chunk_backward --------------------------------------------------------------------------
   the reverse scan U_t = dy_t + a_{t+1} U_{t+1} from U_{T-1} = dht + dy_{T-1}, over blocks of 16 tokens
   in reverse; db_t = U_t, da_t = U_t h_{t-1} (log space: U_t a_t h_{t-1}), dh0 = a_0 U_0 */
/* One block backward: rows t = len-1 .. 0 of nc channels (row stride N), hp[t] = h_{t-1} (row
   stride ldh), U = ∂ℒ/∂h at the block's end in, at its start (times a_0) out. dy, da, db may be NULL. */
static void lattn__scan_rows_back(int64_t len, int64_t nc, int64_t N, const float *a, const float *dy, int log_space,
                                  const float *hp, int64_t ldh, float *U, float *da, float *db) {
    const lattn__vf lo = lattn__vset1(LATTN_LOG_GATE_MIN), zero = lattn__vzero();
    int64_t t, c;
    for (t = len - 1; t >= 0; t--)
        for (c = 0; c < nc; c += LATTN__VW) {
            size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, nc - c);
            const size_t i = (size_t)(t * N + c);
            lattn__vf u = lattn__vload_w(U + c, w), l = lattn__vload_w(a + i, w), at = l;
            if (dy) u = lattn__vadd(u, lattn__vload_w(dy + i, w));
            if (log_space) at = lattn__vexp(lattn__vmax(lo, l));
            if (db) lattn__vstore_w(db + i, u, w);
            if (da) {
                lattn__vf d = lattn__vmul(u, lattn__vload_w(hp + t * ldh + c, w));
                if (log_space) d = lattn__vsel_lt(l, lo, zero, lattn__vmul(d, at));   /* clamped: 0 */
                lattn__vstore_w(da + i, d, w);
            }
            lattn__vstore_w(U + c, lattn__vmul(u, at), w);
        }
}
/* Float32: work items of (batch row, block of 4096 channels), one thread each (the split depends on
   the shape only: any thread count gives the same bits). A forward pass keeps the state at the
   start of every block of 16 tokens; the backward then recomputes each block's states from its
   checkpoint while its rows are hot and runs the reverse scan over them. Rows of 16 KiB per block
   ran at twice the rate of 2 KiB ones (fewer pages touched per row). Memory per thread:
   (T/16 + 20) x 4096 floats. One batch row of few channels is one item: the time split of the
   forward has no backward counterpart here. */
#define LATTN__SCAN_BW_CHANNELS 4096
#define LATTN__SCAN_BW_ROWS 16
LATTN__DEF lattn_status lattn_scan_chunk_backward(lattn_ctx *ctx, const lattn_scan_args *a, const lattn_scan_grads *g) {
    const char *who = "lattn_scan_chunk_backward";
    const int64_t CB = LATTN__SCAN_BW_CHANNELS, R = LATTN__SCAN_BW_ROWS;
    int64_t w, nw, ncb, nblk, per;
    int nthr;
    float *ws;
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    LATTN__TRY(lattn__scan_check(ctx, who, a));
    nthr = lattn__threads(ctx);
    ncb = (a->N + CB - 1) / CB;
    nw = a->B * ncb;
    nblk = (a->T + R - 1) / R;
    per = (nblk + R + 3) * CB;           /* checkpoints, states h_{t-1} of a block, the state, U */
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, (size_t)(per * LATTN__MIN((int64_t)nthr, nw)), who));
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < nw; w++) {
        const int64_t b = w / ncb, c0 = (w % ncb) * CB, nc = LATTN__MIN(CB, a->N - c0), N = a->N;
        float *ck = ws + (size_t)lattn__thread_id() * (size_t)per, *hp = ck + nblk * CB, *st = hp + (R + 1) * CB, *U = st + CB;
        int64_t k;
        if (a->h0) memcpy(st, a->h0 + b * N + c0, (size_t)nc * sizeof(float)); else memset(st, 0, (size_t)nc * sizeof(float));
        for (k = 0; k < nblk; k++) {     /* the checkpoints: each block's initial state */
            const size_t off = (size_t)((b * a->T + k * R) * N + c0);
            memcpy(ck + k * CB, st, (size_t)nc * sizeof(float));
            lattn__scan_rows(LATTN__MIN(R, a->T - k * R), nc, N, a->a + off, a->b + off, a->log_space, st, NULL, 0, NULL);
        }
        if (g->dht) memcpy(U, g->dht + b * N + c0, (size_t)nc * sizeof(float)); else memset(U, 0, (size_t)nc * sizeof(float));
        for (k = nblk - 1; k >= 0; k--) {
            const size_t off = (size_t)((b * a->T + k * R) * N + c0);
            const int64_t len = LATTN__MIN(R, a->T - k * R);
            memcpy(hp, ck + k * CB, (size_t)nc * sizeof(float));
            memcpy(st, hp, (size_t)nc * sizeof(float));
            lattn__scan_rows(len - 1, nc, N, a->a + off, a->b + off, a->log_space, st, hp + CB, CB, NULL);   /* hp[t] = h_{t-1} */
            lattn__scan_rows_back(len, nc, N, a->a + off, g->dout ? g->dout + off : NULL, a->log_space, hp, CB, U,
                                  g->da ? g->da + off : NULL, g->db ? g->db + off : NULL);
        }
        if (g->dh0) memcpy(g->dh0 + b * N + c0, U, (size_t)nc * sizeof(float));
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* >>scan.step ------------------------------------------------------------------------------------
   h = a_t h + b_t per token in float32, the state in ht */
/* _step: the recurrence token by token in float32, as a decoder runs it. The state lives in ht
   (or a private row when ht is NULL), so ht may equal h0. */
LATTN__DEF lattn_status lattn_scan_step(lattn_ctx *ctx, const lattn_scan_args *a) {
    int64_t b, t, n, N;
    float *row = NULL;
    LATTN__TRY(lattn__scan_check(ctx, "lattn_scan_step", a));
    N = a->N;
    if (!a->ht) LATTN__TRY(lattn__alloc_floats(ctx, &row, (size_t)N, "lattn_scan_step"));
    for (b = 0; b < a->B; b++) {
        float *h = a->ht ? a->ht + b * N : row;
        if (!a->ht || a->h0 != a->ht) {
            if (a->h0) memcpy(h, a->h0 + b * N, (size_t)N * sizeof(float));
            else memset(h, 0, (size_t)N * sizeof(float));
        }
        for (t = 0; t < a->T; t++) {
            size_t i = (size_t)((b * a->T + t) * N);
            for (n = 0; n < N; n++) {
                float an = a->a[i + n];
                if (a->log_space) an = expf(LATTN__MAX(an, LATTN_LOG_GATE_MIN));
                h[n] = an * h[n] + a->b[i + n];
                if (a->y) a->y[i + n] = h[n];
            }
        }
    }
    lattn__free(ctx, row);
    return lattn__ok(ctx);
}

/* ================================================================================================ */
/* >>ssm implementation                                                                             */
/* ================================================================================================ */
static lattn_status lattn__ssm_check_in(lattn_ctx *ctx, const char *who, const lattn_ssm_args *a, int64_t *n, int64_t *G) {
    int64_t d[4];
    size_t i, cnt;
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    LATTN__TRY(lattn__check_seqs(ctx, who, a->B, a->T, a->offsets, a->n_seqs, n));
    *G = a->G > 0 ? a->G : 1;
    if (a->D < 1 || a->N < 1 || a->G < 0 || a->D % *G)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: D = %lld, N = %lld, G = %lld (D must be a multiple of G)", who,
                           (long long)a->D, (long long)a->N, (long long)a->G);
    if (!a->A) return lattn__fail(ctx, LATTN_E_NULL, "%s: A is NULL", who);
    if (a->T > 0 && (!a->x || !a->dt || !a->Bm || !a->Cm))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: x, dt, Bm or Cm is NULL", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = LATTN__MAX(a->D, *G * a->N);
    d[3] = 1;
    LATTN__TRY(lattn__check_count(ctx, who, "x/Bm", 4, d));
    d[0] = *n;
    d[1] = a->D;
    d[2] = a->N;
    LATTN__TRY(lattn__check_count(ctx, who, "state", 3, d));
    for (i = 0; i < (size_t)(a->D * a->N); i++)
        if (a->A[i] > 0.0f) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: A[%zu] = %g > 0", who, i, (double)a->A[i]);
    if (!a->dt_softplus)
        for (cnt = (size_t)(a->B * a->T * a->D), i = 0; i < cnt; i++)
            if (a->dt[i] + (a->dt_bias ? a->dt_bias[i % (size_t)a->D] : 0.0f) < 0.0f)
                return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: dt + dt_bias < 0 at %zu without softplus", who, i);
    return LATTN_OK;
}
/* The inputs, and the output y of a forward form. */
static lattn_status lattn__ssm_check(lattn_ctx *ctx, const char *who, const lattn_ssm_args *a, int64_t *n, int64_t *G) {
    LATTN__TRY(lattn__ssm_check_in(ctx, who, a, n, G));
    if (a->T > 0 && !a->y) return lattn__fail(ctx, LATTN_E_NULL, "%s: y is NULL", who);
    return LATTN_OK;
}
static double lattn__softplus_d(double x) { return LATTN__MAX(x, 0.0) + log1p(exp(-fabs(x))); }

/* >>ssm.ref --------------------------------------------------------------------------------------
   Δ = softplus(dt + dt_bias), h = e^{ΔA} h + Δ B x, y = C·h + D x (⊙ SiLU(z)), in double */
LATTN__DEF lattn_status lattn_ssm_ref(lattn_ctx *ctx, const lattn_ssm_args *a) {
    int64_t n, G, sq, t, d, k, D, N;
    double *h;
    LATTN__TRY(lattn__ssm_check(ctx, "lattn_ssm_ref", a, &n, &G));
    D = a->D;
    N = a->N;
    LATTN__TRY(lattn__alloc_doubles(ctx, &h, (size_t)N, "lattn_ssm_ref"));
    for (sq = 0; sq < n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (d = 0; d < D; d++) {
            int64_t g = d / (D / G);
            for (k = 0; k < N; k++) h[k] = a->h0 ? (double)a->h0[(sq * D + d) * N + k] : 0.0;
            for (t = 0; t < len; t++) {
                int64_t tok = tok0 + t;
                double x = a->x[tok * D + d], dl = (double)a->dt[tok * D + d] + (a->dt_bias ? (double)a->dt_bias[d] : 0.0), y = 0;
                const float *Bt = a->Bm + (tok * G + g) * N, *Ct = a->Cm + (tok * G + g) * N;
                if (a->dt_softplus) dl = lattn__softplus_d(dl);
                for (k = 0; k < N; k++) {
                    h[k] = exp(LATTN__MAX(dl * (double)a->A[d * N + k], (double)LATTN_LOG_GATE_MIN)) * h[k] + dl * (double)Bt[k] * x;
                    y += (double)Ct[k] * h[k];
                }
                if (a->Dskip) y += (double)a->Dskip[d] * x;
                if (a->z) y *= lattn__silu_d((double)a->z[tok * D + d]);
                a->y[tok * D + d] = (float)y;
                if (a->y64) a->y64[tok * D + d] = y;
            }
            for (k = 0; k < N; k++) {
                if (a->ht) a->ht[(sq * D + d) * N + k] = (float)h[k];
                if (a->ht64) a->ht64[(sq * D + d) * N + k] = h[k];
            }
        }
    }
    lattn__free(ctx, h);
    return lattn__ok(ctx);
}

/* >>ssm.ref_backward -------------------------------------------------------------------------------
   per channel, with r_t = Σ_n C_t[n] h_t[n] + D x_t and y_t = r_t SiLU(z_t):  dr_t = dy_t SiLU(z_t);
   t = T-1 .. 0 with U = ∂ℒ/∂h_t (from dht):  U += dr_t C_t;  dC_t += dr_t h_t;  dB_t += U Δ_t x_t;
   dΔ_t = Σ_n U (B_t x_t + A h_{t-1} e^{Δ_t A});  dA += U Δ_t h_{t-1} e^{Δ_t A};  U = e^{Δ_t A} U;
   dh0 = U; ddt = dΔ softplus'(dt + dt_bias) = dΔ σ(dt + dt_bias) */
LATTN__DEF lattn_status lattn_ssm_ref_backward(lattn_ctx *ctx, const lattn_ssm_args *a, const lattn_ssm_grads *g) {
    const char *who = "lattn_ssm_ref_backward";
    int64_t n, G, sq, t, d, k, D, N, maxlen = 0;
    double *H, *U, *dA, *dBC, *dD, *dbias;
    size_t cnt, nbc;
    LATTN__TRY(lattn__ssm_check_in(ctx, who, a, &n, &G));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    D = a->D;
    N = a->N;
    for (sq = 0; sq < n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        maxlen = LATTN__MAX(maxlen, len);
    }
    nbc = (size_t)(a->B * a->T * G * N);  /* dBm, then dCm, summed over the channels of a group */
    cnt = (size_t)((maxlen + 1) * N + N + D * N + 2 * D) + 2 * nbc;
    LATTN__TRY(lattn__alloc_doubles(ctx, &H, cnt, who));
    U = H + (maxlen + 1) * N;            /* H[t + 1] = h_t, H[0] = h0 */
    dA = U + N;
    dD = dA + D * N;
    dbias = dD + D;
    dBC = dbias + D;
    memset(dA, 0, (size_t)(D * N + 2 * D) * sizeof(double) + 2 * nbc * sizeof(double));
    for (sq = 0; sq < n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (d = 0; d < D; d++) {
            int64_t gi = d / (D / G);
            for (k = 0; k < N; k++) H[k] = a->h0 ? (double)a->h0[(sq * D + d) * N + k] : 0.0;
            for (t = 0; t < len; t++) {          /* forward: every state kept */
                int64_t tok = tok0 + t;
                double x = a->x[tok * D + d], dl = (double)a->dt[tok * D + d] + (a->dt_bias ? (double)a->dt_bias[d] : 0.0);
                const float *Bt = a->Bm + (tok * G + gi) * N;
                if (a->dt_softplus) dl = lattn__softplus_d(dl);
                for (k = 0; k < N; k++)
                    H[(t + 1) * N + k] = exp(LATTN__MAX(dl * (double)a->A[d * N + k], (double)LATTN_LOG_GATE_MIN)) * H[t * N + k] +
                                         dl * (double)Bt[k] * x;
            }
            for (k = 0; k < N; k++) U[k] = g->dht ? (double)g->dht[(sq * D + d) * N + k] : 0.0;
            for (t = len - 1; t >= 0; t--) {     /* backward */
                int64_t tok = tok0 + t;
                double x = a->x[tok * D + d], pre = (double)a->dt[tok * D + d] + (a->dt_bias ? (double)a->dt_bias[d] : 0.0);
                double dl = a->dt_softplus ? lattn__softplus_d(pre) : pre, r = 0, dr, ddl = 0, dx = 0;
                const float *Bt = a->Bm + (tok * G + gi) * N, *Ct = a->Cm + (tok * G + gi) * N;
                double *dBt = dBC + (tok * G + gi) * N, *dCt = dBC + nbc + (tok * G + gi) * N;
                for (k = 0; k < N; k++) r += (double)Ct[k] * H[(t + 1) * N + k];
                if (a->Dskip) r += (double)a->Dskip[d] * x;
                dr = (double)g->dout[tok * D + d];
                if (a->z) {
                    double zt = a->z[tok * D + d];
                    lattn__put(g->dz, g->dz64, tok * D + d, dr * r * lattn__silu_grad_d(zt));
                    dr *= lattn__silu_d(zt);
                }
                if (a->Dskip) {
                    dD[d] += dr * x;
                    dx += dr * (double)a->Dskip[d];
                }
                for (k = 0; k < N; k++) {
                    double la = dl * (double)a->A[d * N + k], e = exp(LATTN__MAX(la, (double)LATTN_LOG_GATE_MIN));
                    double hp = H[t * N + k], live = la < (double)LATTN_LOG_GATE_MIN ? 0.0 : 1.0;
                    U[k] += dr * (double)Ct[k];
                    dCt[k] += dr * H[(t + 1) * N + k];
                    dBt[k] += U[k] * dl * x;
                    dx += U[k] * dl * (double)Bt[k];
                    ddl += U[k] * ((double)Bt[k] * x + live * (double)a->A[d * N + k] * hp * e);
                    dA[d * N + k] += live * U[k] * dl * hp * e;
                    U[k] *= e;
                }
                if (a->dt_softplus) ddl *= 1.0 / (1.0 + exp(-pre));
                dbias[d] += ddl;
                lattn__put(g->dx, g->dx64, tok * D + d, dx);
                lattn__put(g->ddt, g->ddt64, tok * D + d, ddl);
            }
            for (k = 0; k < N; k++) lattn__put(g->dh0, g->dh064, (sq * D + d) * N + k, U[k]);
        }
    }
    for (k = 0; k < D * N; k++) lattn__put(g->dA, g->dA64, k, dA[k]);
    for (d = 0; d < D; d++) {
        if (a->Dskip) lattn__put(g->dDskip, g->dDskip64, d, dD[d]);
        if (a->dt_bias) lattn__put(g->ddt_bias, g->ddt_bias64, d, dbias[d]);
    }
    for (k = 0; k < (int64_t)nbc; k++) {
        lattn__put(g->dBm, g->dBm64, k, dBC[k]);
        lattn__put(g->dCm, g->dCm64, k, dBC[nbc + k]);
    }
    lattn__free(ctx, H);
    return lattn__ok(ctx);
}

/* One token of the channels [c0, c1) (nv vectors): the fused discretisation, recurrence and
   read-out. State n of vector v sits at st[(v·N + n)·VW]; At is A·log2(e) as [N][D]. Loop order:
   states outer, vectors inner, so B_n and C_n are broadcast once for the whole tile; when the tile's
   lanes span several groups, bl and cl hold each lane's B and C rows instead. sc is scratch for
   Δ, Δ·x and the read-out of every vector; y_out NULL: the states only. */
static void lattn__ssm_token(const lattn_ssm_args *a, int64_t G, int64_t tok, int64_t c0, int64_t c1,
                             const float *At, float *st, float *bl, float *cl, float *sc, float *y_out) {
    const int64_t D = a->D, N = a->N, per = D / G, nv = (c1 - c0 + LATTN__VW - 1) / LATTN__VW;
    const int64_t Dp = (D + LATTN__VW - 1) / LATTN__VW * LATTN__VW;   /* At's padded row length */
    const int one_group = c0 / per == (c1 - 1) / per;
    const lattn__vf lo = lattn__vset1(LATTN_LOG_GATE_MIN * 1.44269504f);       /* in log2 units */
    const float *Bt = a->Bm + (tok * G + c0 / per) * N, *Ct = a->Cm + (tok * G + c0 / per) * N;
    float *dls = sc, *dxs = sc + nv * LATTN__VW, *ys = dxs + nv * LATTN__VW;
    int64_t k, v;
    for (v = 0; v < nv; v++) {           /* Δ = softplus(dt + bias) and Δ·x per vector */
        int64_t c = c0 + v * LATTN__VW;
        size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, c1 - c);
        lattn__vf dl = lattn__vload_w(a->dt + tok * D + c, w);
        if (a->dt_bias) dl = lattn__vadd(dl, lattn__vload_w(a->dt_bias + c, w));
        if (a->dt_softplus) dl = lattn__vsoftplus(dl);
        lattn__vstore(dls + v * LATTN__VW, dl);
        lattn__vstore(dxs + v * LATTN__VW, lattn__vmul(dl, lattn__vload_w(a->x + tok * D + c, w)));
        if (!one_group) {                /* lanes in different groups: gather each lane's rows */
            size_t l;
            for (l = 0; l < w; l++)
                for (k = 0; k < N; k++) {
                    int64_t g = (c + (int64_t)l) / per;
                    bl[(v * N + k) * LATTN__VW + l] = a->Bm[(tok * G + g) * N + k];
                    cl[(v * N + k) * LATTN__VW + l] = a->Cm[(tok * G + g) * N + k];
                }
        }
    }
    for (v = 0; v < nv; v++) {           /* per vector of channels: the N states in registers' reach */
        const float *Av = At + c0 + v * LATTN__VW, *sb = bl + v * N * LATTN__VW, *sc2 = cl + v * N * LATTN__VW;
        const lattn__vf dl = lattn__vload(dls + v * LATTN__VW), dx = lattn__vload(dxs + v * LATTN__VW);
        lattn__vf y0 = lattn__vzero(), y1 = lattn__vzero();
        float *s = st + v * N * LATTN__VW;
        /* two states per step: independent exp chains and two accumulators */
#define LATTN__SSM_STATE(kk, y) {                                                                         \
            lattn__vf dA = lattn__vexp2_gate(lattn__vmax(lo, lattn__vmul(dl, lattn__vload(Av + (kk) * Dp)))); \
            lattn__vf vb = one_group ? lattn__vset1(Bt[kk]) : lattn__vload(sb + (kk) * LATTN__VW);          \
            lattn__vf vc = one_group ? lattn__vset1(Ct[kk]) : lattn__vload(sc2 + (kk) * LATTN__VW);         \
            lattn__vf h = lattn__vfma(dA, lattn__vload(s + (kk) * LATTN__VW), lattn__vmul(dx, vb));         \
            lattn__vstore(s + (kk) * LATTN__VW, h);                                                         \
            y = lattn__vfma(vc, h, y); }
        for (k = 0; k + 1 < N; k += 2) { LATTN__SSM_STATE(k, y0) LATTN__SSM_STATE(k + 1, y1) }
        if (k < N) LATTN__SSM_STATE(k, y0)
#undef LATTN__SSM_STATE
        lattn__vstore(ys + v * LATTN__VW, lattn__vadd(y0, y1));
    }
    for (v = 0; y_out && v < nv; v++) {  /* y = Σ C h + Dskip·x, gated by SiLU(z) */
        int64_t c = c0 + v * LATTN__VW;
        size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, c1 - c);
        lattn__vf y = lattn__vload(ys + v * LATTN__VW);
        if (a->Dskip) y = lattn__vfma(lattn__vload_w(a->Dskip + c, w), lattn__vload_w(a->x + tok * D + c, w), y);
        if (a->z) y = lattn__vmul(y, lattn__vsilu(lattn__vload_w(a->z + tok * D + c, w)));
        lattn__vstore_w(y_out + tok * D + c, y, w);
    }
}

/* The fast form and _step: work items are (sequence, 128 channels); within one, tokens outer, so
   each token's rows stream once and the tile's state stays in L1. Any thread count, same bits. */
#define LATTN__SSM_TILE 128
static lattn_status lattn__ssm_run(lattn_ctx *ctx, const lattn_ssm_args *a, const char *who) {
    int64_t n, G, w, nt, D, N, c, k, Dp;
    int nthr;
    size_t per;
    float *ws, *At;
    LATTN__TRY(lattn__ssm_check(ctx, who, a, &n, &G));
    D = a->D;
    N = a->N;
    nt = (D + LATTN__SSM_TILE - 1) / LATTN__SSM_TILE;
    nthr = lattn__threads(ctx);
    per = (size_t)(3 * LATTN__SSM_TILE * N + 3 * LATTN__SSM_TILE);   /* state, per-lane B and C, scratch */
    Dp = (D + LATTN__VW - 1) / LATTN__VW * LATTN__VW;
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, (size_t)(Dp * N) + per * (size_t)nthr, who));
    At = ws;
    /* A transposed and in log2 units, exp(ΔA) = 2^(Δ·A·log2 e); rows padded with zeros to whole vectors */
    for (k = 0; k < N; k++)
        for (c = 0; c < Dp; c++) At[k * Dp + c] = c < D ? (float)((double)a->A[c * N + k] * 1.4426950408889634) : 0.0f;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < n * nt; w++) {
        int64_t sq = w / nt, c0 = (w % nt) * LATTN__SSM_TILE, c1 = LATTN__MIN(D, c0 + LATTN__SSM_TILE), tok0, len, v, kk, t, l;
        int64_t nv = (c1 - c0 + LATTN__VW - 1) / LATTN__VW;
        float *st = ws + Dp * N + per * (size_t)lattn__thread_id(), *bl = st + LATTN__SSM_TILE * N, *cl = bl + LATTN__SSM_TILE * N;
        float *sc = cl + LATTN__SSM_TILE * N;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (v = 0; v < nv; v++)         /* state in: [vector][N][VW] from [D][N] */
            for (kk = 0; kk < N; kk++)
                for (l = 0; l < LATTN__VW; l++) {
                    int64_t c2 = c0 + v * LATTN__VW + l;
                    st[(v * N + kk) * LATTN__VW + l] = (c2 < c1 && a->h0) ? a->h0[(sq * D + c2) * N + kk] : 0.0f;
                }
        for (t = 0; t < len; t++) lattn__ssm_token(a, G, tok0 + t, c0, c1, At, st, bl, cl, sc, a->y);
        if (a->ht)
            for (v = 0; v < nv; v++)
                for (kk = 0; kk < N; kk++)
                    for (l = 0; l < LATTN__VW && c0 + v * LATTN__VW + l < c1; l++)
                        a->ht[(sq * D + c0 + v * LATTN__VW + l) * N + kk] = st[(v * N + kk) * LATTN__VW + l];
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}
/* >>ssm.chunk ------------------------------------------------------------------------------------
   the same recurrence fused per vector of channels inside tiles of 128 tokens */
LATTN__DEF lattn_status lattn_ssm_chunk(lattn_ctx *ctx, const lattn_ssm_args *a) { return lattn__ssm_run(ctx, a, "lattn_ssm_chunk"); }

/* >>ssm.chunk_backward ---------------------------------------------------------------------------
   the reverse step of lattn_ssm_ref_backward per vector of channels, on the forward's tiles of 128
   channels: blocks of 64 tokens in reverse, each block's states recomputed from a checkpoint */
/* The gathered (per-lane) B and C rows of token tok for the tile's vectors, when its lanes span groups. */
static void lattn__ssm_gather(const lattn_ssm_args *a, int64_t G, int64_t tok, int64_t c0, int64_t c1, float *bl, float *cl) {
    const int64_t per = a->D / G, N = a->N;
    int64_t c, k;
    for (c = c0; c < c1; c++)
        for (k = 0; k < N; k++) {
            const int64_t v = (c - c0) / LATTN__VW, l = (c - c0) % LATTN__VW, gi = c / per;
            bl[(v * N + k) * LATTN__VW + l] = a->Bm[(tok * G + gi) * N + k];
            cl[(v * N + k) * LATTN__VW + l] = a->Cm[(tok * G + gi) * N + k];
        }
}
/* One token backward over the channels [c0, c1) of a tile, states in [vector][N][VW]: hq = h_t,
   hp = h_{t-1}, U = ∂ℒ/∂h_t's part from the tokens after (in: times their decays; out: this
   token's, times e^{ΔA}). Writes dx, ddt, dz of the token; pB, pC (the token's [groups of the
   tile][N] rows of dBm, dCm, summed over the tile's channels); adds to the tile's dA (pa, as the
   states), dDskip (pd) and ddt_bias (pz) sums. At = A·log2 e and An = A as [N][Dp]; acc is scratch
   of 2·N vectors. */
typedef struct lattn__ssm_bw {
    const float *At, *An;
    float *bl, *cl, *acc;
    int64_t G, Dp;
} lattn__ssm_bw;
static void lattn__ssm_token_back(const lattn_ssm_args *a, const lattn_ssm_grads *g, const lattn__ssm_bw *b, int64_t tok, int64_t c0,
                                  int64_t c1, const float *hq, const float *hp, float *U, float *pB, float *pC, float *pa, float *pd, float *pz) {
    const int64_t D = a->D, N = a->N, per = D / b->G, nv = (c1 - c0 + LATTN__VW - 1) / LATTN__VW, g0 = c0 / per;
    const int one_group = g0 == (c1 - 1) / per;
    const lattn__vf lo = lattn__vset1(LATTN_LOG_GATE_MIN * 1.44269504f), zero = lattn__vzero(), one = lattn__vset1(1.0f);
    const float *Bt = a->Bm + (tok * b->G + g0) * N, *Ct = a->Cm + (tok * b->G + g0) * N;
    float *accB = b->acc, *accC = b->acc + N * LATTN__VW;
    int64_t v, k;
    if (one_group) memset(b->acc, 0, sizeof(float) * (size_t)(2 * N * LATTN__VW));
    else {
        lattn__ssm_gather(a, b->G, tok, c0, c1, b->bl, b->cl);
        memset(pB, 0, sizeof(float) * (size_t)(((c1 - 1) / per - g0 + 1) * N));
        memset(pC, 0, sizeof(float) * (size_t)(((c1 - 1) / per - g0 + 1) * N));
    }
    for (v = 0; v < nv; v++) {
        const int64_t c = c0 + v * LATTN__VW, i = tok * D + c;
        const size_t w = (size_t)LATTN__MIN((int64_t)LATTN__VW, c1 - c);
        const float *hv = hq + v * N * LATTN__VW, *pv = hp + v * N * LATTN__VW;
        float *uv = U + v * N * LATTN__VW, *av = pa + v * N * LATTN__VW;
        lattn__vf pre = lattn__vload_w(a->dt + i, w), x = lattn__vload_w(a->x + i, w), dl, dlx, r, dr, dx, ddl = zero;
        if (a->dt_bias) pre = lattn__vadd(pre, lattn__vload_w(a->dt_bias + c, w));
        dl = a->dt_softplus ? lattn__vsoftplus(pre) : pre;
        dlx = lattn__vmul(dl, x);
        r = a->Dskip ? lattn__vmul(lattn__vload_w(a->Dskip + c, w), x) : zero;   /* r = Σ C h_t + Dskip·x */
        for (k = 0; k < N; k++)
            r = lattn__vfma(one_group ? lattn__vset1(Ct[k]) : lattn__vload(b->cl + (v * N + k) * LATTN__VW), lattn__vload(hv + k * LATTN__VW), r);
        dr = lattn__vload_w(g->dout + i, w);
        if (a->z) {                      /* y = r SiLU(z): dz = dy r SiLU'(z), dr = dy SiLU(z) */
            const lattn__vf z = lattn__vload_w(a->z + i, w), sg = lattn__vsigmoid(z);
            if (g->dz) lattn__vstore_w(g->dz + i, lattn__vmul(lattn__vmul(dr, r), lattn__vmul(sg, lattn__vfma(z, lattn__vsub(one, sg), one))), w);
            dr = lattn__vmul(dr, lattn__vmul(z, sg));
        }
        dx = a->Dskip ? lattn__vmul(dr, lattn__vload_w(a->Dskip + c, w)) : zero;
        if (a->Dskip) lattn__vstore(pd + v * LATTN__VW, lattn__vfma(dr, x, lattn__vload(pd + v * LATTN__VW)));
        for (k = 0; k < N; k++) {
            const lattn__vf vb = one_group ? lattn__vset1(Bt[k]) : lattn__vload(b->bl + (v * N + k) * LATTN__VW);
            const lattn__vf vc = one_group ? lattn__vset1(Ct[k]) : lattn__vload(b->cl + (v * N + k) * LATTN__VW);
            const lattn__vf la = lattn__vmul(dl, lattn__vload(b->At + k * b->Dp + c));
            const lattn__vf e = lattn__vexp2_gate(lattn__vmax(lo, la));
            const lattn__vf u = lattn__vfma(dr, vc, lattn__vload(uv + k * LATTN__VW));
            const lattn__vf q = lattn__vsel_lt(la, lo, zero, lattn__vmul(lattn__vmul(u, lattn__vload(pv + k * LATTN__VW)), e));   /* U h_{t-1} e^{ΔA}, 0 clamped */
            const lattn__vf gB = lattn__vmul(u, dlx), gC = lattn__vmul(dr, lattn__vload(hv + k * LATTN__VW));
            dx = lattn__vfma(lattn__vmul(u, dl), vb, dx);
            ddl = lattn__vfma(u, lattn__vmul(vb, x), lattn__vfma(lattn__vload(b->An + k * b->Dp + c), q, ddl));
            lattn__vstore(av + k * LATTN__VW, lattn__vfma(dl, q, lattn__vload(av + k * LATTN__VW)));
            lattn__vstore(uv + k * LATTN__VW, lattn__vmul(u, e));
            if (one_group) {
                lattn__vstore(accB + k * LATTN__VW, lattn__vadd(lattn__vload(accB + k * LATTN__VW), gB));
                lattn__vstore(accC + k * LATTN__VW, lattn__vadd(lattn__vload(accC + k * LATTN__VW), gC));
            } else {                     /* each lane into its group's row */
                float lb[LATTN__VW], lc[LATTN__VW];
                size_t l;
                lattn__vstore(lb, gB);
                lattn__vstore(lc, gC);
                for (l = 0; l < w; l++) {
                    pB[((c + (int64_t)l) / per - g0) * N + k] += lb[l];
                    pC[((c + (int64_t)l) / per - g0) * N + k] += lc[l];
                }
            }
        }
        if (a->dt_softplus) ddl = lattn__vmul(ddl, lattn__vsigmoid(pre));
        lattn__vstore(pz + v * LATTN__VW, lattn__vadd(lattn__vload(pz + v * LATTN__VW), ddl));
        if (g->dx) lattn__vstore_w(g->dx + i, dx, w);
        if (g->ddt) lattn__vstore_w(g->ddt + i, ddl, w);
    }
    for (k = 0; one_group && k < N; k++) {
        pB[k] = lattn__vhsum(lattn__vload(accB + k * LATTN__VW));
        pC[k] = lattn__vhsum(lattn__vload(accC + k * LATTN__VW));
    }
}
/* Float32, on the work items of the forward (sequence, tile of 128 channels), one thread each. Per
   item: a forward pass keeps the state at the start of every block of 64 tokens; then, blocks in
   reverse, the block's states are recomputed from its checkpoint and the tokens run backward.
   dBm and dCm of an item are its own rows (the tile's channels of each group), added over the
   tiles in order; dA, dDskip and ddt_bias are added over the sequences in order: any thread count
   gives the same bits. Memory per thread: (T/64 + 68)·128·N floats; the items' dBm, dCm rows:
   2·T·N floats per tile and group it touches. */
#define LATTN__SSM_BW_ROWS 64
LATTN__DEF lattn_status lattn_ssm_chunk_backward(lattn_ctx *ctx, const lattn_ssm_args *a, const lattn_ssm_grads *g) {
    const char *who = "lattn_ssm_chunk_backward";
    const int64_t TL = LATTN__SSM_TILE, R = LATTN__SSM_BW_ROWS;
    int64_t n, G, nt, D, N, Dp, S, c, k, w, sq, maxlen = 0, nblk, per, *boff;
    size_t pth, nbc = 0, nit;
    int nthr;
    float *ws, *At, *An, *pbc, *part, *thr;
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    LATTN__TRY(lattn__ssm_check_in(ctx, who, a, &n, &G));
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    D = a->D;
    N = a->N;
    per = D / G;
    nt = (D + TL - 1) / TL;
    nthr = lattn__threads(ctx);
    Dp = (D + LATTN__VW - 1) / LATTN__VW * LATTN__VW;
    S = TL * N;                          /* one tile's states */
    nit = (size_t)(n * nt);
    for (sq = 0; sq < n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        maxlen = LATTN__MAX(maxlen, len);
        for (k = 0; k < nt; k++) nbc += (size_t)(len * ((LATTN__MIN(D, (k + 1) * TL) - 1) / per - k * TL / per + 1) * N);
    }
    nblk = (maxlen + R - 1) / R;
    pth = (size_t)((nblk + R + 4) * S + 2 * N * LATTN__VW + 3 * TL);
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, (size_t)(2 * Dp * N) + 2 * nbc + nit * (size_t)(S + 2 * TL) + pth * (size_t)nthr +
                                                 2 * (nit + 1), who));
    At = ws;
    An = At + Dp * N;
    pbc = An + Dp * N;                   /* the items' dBm rows, then their dCm rows */
    part = pbc + 2 * nbc;                /* per item: dA [vector][N][VW], dDskip, ddt_bias [TL] */
    thr = part + nit * (size_t)(S + 2 * TL);
    boff = (int64_t *)(void *)(thr + pth * (size_t)nthr);   /* per item: its first dBm row (8-byte aligned: every count before is even) */
    for (k = 0; k < N; k++)
        for (c = 0; c < Dp; c++) {
            At[k * Dp + c] = c < D ? (float)((double)a->A[c * N + k] * 1.4426950408889634) : 0.0f;
            An[k * Dp + c] = c < D ? a->A[c * N + k] : 0.0f;
        }
    for (sq = 0, boff[0] = 0; sq < n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (k = 0; k < nt; k++)
            boff[sq * nt + k + 1] = boff[sq * nt + k] + len * ((LATTN__MIN(D, (k + 1) * TL) - 1) / per - k * TL / per + 1) * N;
    }
    memset(part, 0, sizeof(float) * nit * (size_t)(S + 2 * TL));
    LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(nthr))
    for (w = 0; w < (int64_t)nit; w++) {
        const int64_t s2 = w / nt, c0 = (w % nt) * TL, c1 = LATTN__MIN(D, c0 + TL), nv = (c1 - c0 + LATTN__VW - 1) / LATTN__VW;
        const int64_t ng = (c1 - 1) / per - c0 / per + 1;
        float *ck = thr + pth * (size_t)lattn__thread_id(), *hb = ck + nblk * S, *U = hb + (R + 1) * S, *bl = U + S, *cl = bl + S;
        float *acc = cl + S, *sc = acc + 2 * N * LATTN__VW, *pa = part + (size_t)w * (size_t)(S + 2 * TL), *pd = pa + S, *pz = pd + TL;
        float *pB = pbc + boff[w], *pC = pbc + nbc + boff[w];
        int64_t tok0, len, t, kb, v, kk, l;
        lattn__ssm_bw bw;
        bw.At = At; bw.An = An; bw.bl = bl; bw.cl = cl; bw.acc = acc; bw.G = G; bw.Dp = Dp;
        lattn__seq(a->offsets, a->T, s2, &tok0, &len);
        for (v = 0; v < nv; v++)         /* [D][N] to [vector][N][VW]: h0 into ck (the first checkpoint), dht into U */
            for (kk = 0; kk < N; kk++)
                for (l = 0; l < LATTN__VW; l++) {
                    const int64_t c2 = c0 + v * LATTN__VW + l, j = (v * N + kk) * LATTN__VW + l;
                    hb[j] = c2 < c1 && a->h0 ? a->h0[(s2 * D + c2) * N + kk] : 0.0f;
                    U[j] = c2 < c1 && g->dht ? g->dht[(s2 * D + c2) * N + kk] : 0.0f;
                }
        for (kb = 0; kb * R < len; kb++) {   /* the checkpoints */
            memcpy(ck + kb * S, hb, sizeof(float) * (size_t)S);
            for (t = kb * R; t < LATTN__MIN(len, kb * R + R); t++) lattn__ssm_token(a, G, tok0 + t, c0, c1, At, hb, bl, cl, sc, NULL);
        }
        for (kb = (len + R - 1) / R - 1; kb >= 0; kb--) {
            const int64_t t0 = kb * R, t1 = LATTN__MIN(len, t0 + R);
            memcpy(hb, ck + kb * S, sizeof(float) * (size_t)S);
            for (t = t0; t < t1; t++) {  /* hb[t - t0 + 1] = h_t */
                float *h = hb + (t - t0 + 1) * S;
                memcpy(h, h - S, sizeof(float) * (size_t)S);
                lattn__ssm_token(a, G, tok0 + t, c0, c1, At, h, bl, cl, sc, NULL);
            }
            for (t = t1 - 1; t >= t0; t--)
                lattn__ssm_token_back(a, g, &bw, tok0 + t, c0, c1, hb + (t - t0 + 1) * S, hb + (t - t0) * S, U,
                                      pB + t * ng * N, pC + t * ng * N, pa, pd, pz);
        }
        for (v = 0; g->dh0 && v < nv; v++)
            for (kk = 0; kk < N; kk++)
                for (l = 0; l < LATTN__VW && c0 + v * LATTN__VW + l < c1; l++)
                    g->dh0[(s2 * D + c0 + v * LATTN__VW + l) * N + kk] = U[(v * N + kk) * LATTN__VW + l];
    }
    for (sq = 0; sq < n && (g->dBm || g->dCm); sq++) {   /* dBm, dCm: the tiles' rows of each group, in tile order */
        int64_t tok0, len, t;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
        for (t = 0; t < len; t++) {
            int64_t gi, kk, ti;
            for (gi = 0; gi < G; gi++)
                for (kk = 0; kk < N; kk++) {
                    float sb = 0.0f, scc = 0.0f;
                    for (ti = gi * per / TL; ti <= ((gi + 1) * per - 1) / TL; ti++) {
                        const int64_t it = sq * nt + ti, ng = (LATTN__MIN(D, (ti + 1) * TL) - 1) / per - ti * TL / per + 1;
                        const int64_t j = boff[it] + (t * ng + gi - ti * TL / per) * N + kk;
                        sb += pbc[j];
                        scc += pbc[nbc + j];
                    }
                    if (g->dBm) g->dBm[((tok0 + t) * G + gi) * N + kk] = sb;
                    if (g->dCm) g->dCm[((tok0 + t) * G + gi) * N + kk] = scc;
                }
        }
    }
    for (c = 0; c < D; c++) {            /* dA, dDskip, ddt_bias: the sequences' sums in order */
        const int64_t ti = c / TL, v = (c % TL) / LATTN__VW, l = c % LATTN__VW;
        float sd = 0.0f, sz = 0.0f;
        for (k = 0; k < N; k++) {
            float sa = 0.0f;
            for (sq = 0; sq < n; sq++) sa += part[(size_t)(sq * nt + ti) * (size_t)(S + 2 * TL) + (size_t)((v * N + k) * LATTN__VW + l)];
            if (g->dA) g->dA[c * N + k] = sa;
        }
        for (sq = 0; sq < n; sq++) {
            const float *p = part + (size_t)(sq * nt + ti) * (size_t)(S + 2 * TL) + S;
            sd += p[c % TL];
            sz += p[TL + c % TL];
        }
        if (g->dDskip && a->Dskip) g->dDskip[c] = sd;
        if (g->ddt_bias && a->dt_bias) g->ddt_bias[c] = sz;
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* >>ssm.step -------------------------------------------------------------------------------------
   token by token on the caller's state: h = e^{ΔA} h + Δ B x, y = C·h + D x */
LATTN__DEF lattn_status lattn_ssm_step(lattn_ctx *ctx, const lattn_ssm_args *a) {
    int64_t n, G, sq, t, DN;
    float *S;
    lattn_status st = LATTN_OK;
    if (a && a->T == 1 && !a->offsets && a->ht) return lattn__ssm_run(ctx, a, "lattn_ssm_step");
    LATTN__TRY(lattn__ssm_check(ctx, "lattn_ssm_step", a, &n, &G));
    DN = a->D * a->N;
    LATTN__TRY(lattn__alloc_floats(ctx, &S, (size_t)DN, "lattn_ssm_step"));
    for (sq = 0; sq < n && st == LATTN_OK; sq++) {
        int64_t tok0, len;
        lattn_ssm_args s = *a;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        if (a->h0) memcpy(S, a->h0 + sq * DN, sizeof(float) * (size_t)DN); else memset(S, 0, sizeof(float) * (size_t)DN);
        s.B = 1;
        s.T = 1;
        s.offsets = NULL;
        s.n_seqs = 0;
        s.h0 = S;
        s.ht = S;
        for (t = 0; t < len && st == LATTN_OK; t++) {
            int64_t tok = tok0 + t;
            s.x = a->x + tok * a->D;
            s.dt = a->dt + tok * a->D;
            s.y = a->y + tok * a->D;
            s.z = a->z ? a->z + tok * a->D : NULL;
            s.Bm = a->Bm + tok * G * a->N;
            s.Cm = a->Cm + tok * G * a->N;
            st = lattn__ssm_run(ctx, &s, "lattn_ssm_step");
        }
        if (a->ht) memcpy(a->ht + sq * DN, S, sizeof(float) * (size_t)DN);
    }
    lattn__free(ctx, S);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

/* ================================================================================================ */
/* >>s4d implementation                                                                             */
/* ================================================================================================ */
typedef struct lattn__cplx { double re, im; } lattn__cplx;     /* a struct: the header stays C++ */
static lattn__cplx lattn__cmul(lattn__cplx a, lattn__cplx b) {
    lattn__cplx r; r.re = a.re * b.re - a.im * b.im; r.im = a.re * b.im + a.im * b.re; return r;
}
static lattn__cplx lattn__cexp(double re, double im) {
    lattn__cplx r; double m = exp(re); r.re = m * cos(im); r.im = m * sin(im); return r;
}

/* Twiddles w_k = exp(-2πik/n), k < n/2, as (cos, sin) pairs: computed once, shared by every FFT
   of that size. */
static void lattn__fft_twiddles(int64_t n, double *tw) {
    int64_t k;
    for (k = 0; k < n / 2; k++) {
        tw[2 * k] = cos(-2.0 * 3.14159265358979323846 * (double)k / (double)n);
        tw[2 * k + 1] = sin(-2.0 * 3.14159265358979323846 * (double)k / (double)n);
    }
}
/* Iterative radix-2 FFT (bit reversal, then butterflies); the inverse conjugates the twiddles and
   divides by n. */
static void lattn__fft(double *re, double *im, int64_t n, int inverse, const double *tw) {
    int64_t i, j, len;
    for (i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) { double t = re[i]; re[i] = re[j]; re[j] = t; t = im[i]; im[i] = im[j]; im[j] = t; }
    }
    for (len = 2; len <= n; len <<= 1) {
        int64_t h = len / 2, stride = n / len, k;
        for (k = 0; k < h; k++) {
            double wr = tw[2 * k * stride], wi = inverse ? -tw[2 * k * stride + 1] : tw[2 * k * stride + 1];
            for (i = k; i < n; i += len) {
                double xr = re[i + h] * wr - im[i + h] * wi, xi = re[i + h] * wi + im[i + h] * wr;
                re[i + h] = re[i] - xr;
                im[i + h] = im[i] - xi;
                re[i] += xr;
                im[i] += xi;
            }
        }
    }
    if (inverse) for (i = 0; i < n; i++) { re[i] /= (double)n; im[i] /= (double)n; }
}
LATTN__DEF lattn_status lattn_fft(lattn_ctx *ctx, double *re, double *im, int64_t n, int inverse) {
    double *tw;
    if (!re || !im) return lattn__fail(ctx, LATTN_E_NULL, "lattn_fft: NULL buffer");
    if (n < 1 || (n & (n - 1)) || n > (int64_t)(SIZE_MAX / 16)) return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_fft: n = %lld is not a power of two", (long long)n);
    LATTN__TRY(lattn__alloc_doubles(ctx, &tw, (size_t)n + 1, "lattn_fft"));
    lattn__fft_twiddles(n, tw);
    lattn__fft(re, im, n, inverse, tw);
    lattn__free(ctx, tw);
    return lattn__ok(ctx);
}

/* need_y: a forward form (y is written); the backward reads x only. */
static lattn_status lattn__s4d_check(lattn_ctx *ctx, const char *who, const lattn_s4d_args *a, int need_y) {
    int64_t d[3];
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    if (a->B < 1 || a->T < 0 || a->D < 1 || a->N < 1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld, D = %lld, N = %lld", who,
                           (long long)a->B, (long long)a->T, (long long)a->D, (long long)a->N);
    if (!a->A_re || !a->B_re || !a->C_re || !a->log_dt) return lattn__fail(ctx, LATTN_E_NULL, "%s: A_re, B_re, C_re or log_dt is NULL", who);
    if (a->complex_modes && (!a->A_im || !a->B_im || !a->C_im)) return lattn__fail(ctx, LATTN_E_NULL, "%s: complex modes need A_im, B_im, C_im", who);
    if (a->T > 0 && (!a->x || (need_y && !a->y))) return lattn__fail(ctx, LATTN_E_NULL, "%s: x or y is NULL", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->D;
    LATTN__TRY(lattn__check_count(ctx, who, "u", 3, d));
    d[0] = a->B;
    d[1] = a->D;
    d[2] = 2 * a->N;
    LATTN__TRY(lattn__check_count(ctx, who, "state", 3, d));
    return LATTN_OK;
}
/* Discretised mode n of channel d: Ā, B̄ and C (double). */
static void lattn__s4d_mode(const lattn_s4d_args *a, int64_t d, int64_t n, lattn__cplx *Ab, lattn__cplx *Bb, lattn__cplx *C) {
    int64_t i = d * a->N + n;
    double dt = exp((double)a->log_dt[d]), ar = -exp((double)a->A_re[i]), ai = a->complex_modes ? (double)a->A_im[i] : 0.0;
    lattn__cplx B, num, den;
    double q;
    *Ab = lattn__cexp(dt * ar, dt * ai);
    B.re = a->B_re[i];
    B.im = a->complex_modes ? (double)a->B_im[i] : 0.0;
    C->re = a->C_re[i];
    C->im = a->complex_modes ? (double)a->C_im[i] : 0.0;
    num.re = Ab->re - 1.0;
    num.im = Ab->im; /* (Ā - 1) / A · B */
    den.re = ar;
    den.im = ai;
    q = den.re * den.re + den.im * den.im;
    num = lattn__cmul(num, B);
    Bb->re = (num.re * den.re + num.im * den.im) / q;
    Bb->im = (num.im * den.re - num.re * den.im) / q;
}

/* >>s4d.ref --------------------------------------------------------------------------------------
   h_t = Ā h_{t-1} + B̄ x_t per complex mode, y = s·Re(C·h) + D x, in double */
LATTN__DEF lattn_status lattn_s4d_ref(lattn_ctx *ctx, const lattn_s4d_args *a) {
    int64_t b, d, n, t, D, N;
    double s;
    lattn__cplx *m;
    lattn_status st;
    LATTN__TRY(lattn__s4d_check(ctx, "lattn_s4d_ref", a, 1));
    D = a->D;
    N = a->N;
    s = a->complex_modes ? 2.0 : 1.0;
    m = (lattn__cplx *)lattn__alloc_array(ctx, (size_t)(4 * N), sizeof *m, "lattn_s4d_ref", &st);   /* Ā, B̄, C, h */
    if (!m) return st;
    for (b = 0; b < a->B; b++)
        for (d = 0; d < D; d++) {
            lattn__cplx *Ab = m, *Bb = m + N, *C = m + 2 * N, *h = m + 3 * N;
            for (n = 0; n < N; n++) {
                lattn__s4d_mode(a, d, n, &Ab[n], &Bb[n], &C[n]);
                h[n].re = a->h0 ? (double)a->h0[((b * D + d) * N + n) * 2] : 0.0;
                h[n].im = a->h0 ? (double)a->h0[((b * D + d) * N + n) * 2 + 1] : 0.0;
            }
            for (t = 0; t < a->T; t++) {
                double u = a->x[(b * a->T + t) * D + d], y = 0;
                for (n = 0; n < N; n++) {
                    h[n] = lattn__cmul(Ab[n], h[n]);
                    h[n].re += Bb[n].re * u;
                    h[n].im += Bb[n].im * u;
                    y += C[n].re * h[n].re - C[n].im * h[n].im;
                }
                lattn__put(a->y, a->y64, (b * a->T + t) * D + d, s * y + (a->Dskip ? (double)a->Dskip[d] * u : 0.0));
            }
            for (n = 0; n < N; n++) {
                lattn__put(a->ht, a->ht64, ((b * D + d) * N + n) * 2, h[n].re);
                lattn__put(a->ht, a->ht64, ((b * D + d) * N + n) * 2 + 1, h[n].im);
            }
        }
    lattn__free(ctx, m);
    return lattn__ok(ctx);
}

/* (p + q)·x + c for complex vectors, p = Ā rounded to float and q = Ā - p: the low part keeps the
   powers Ā^j from drifting by j·ε. */
LATTN__INLINE void lattn__s4d_cmadd(lattn__vf pr, lattn__vf pi, lattn__vf qr, lattn__vf qi, lattn__vf xr, lattn__vf xi,
                                    lattn__vf cr, lattn__vf ci, lattn__vf *nr, lattn__vf *ni) {
    lattn__vf tr = lattn__vsub(lattn__vfma(qr, xr, cr), lattn__vmul(qi, xi));
    lattn__vf ti = lattn__vfma(qi, xr, lattn__vfma(qr, xi, ci));
    *nr = lattn__vfma(pr, xr, lattn__vsub(tr, lattn__vmul(pi, xi)));
    *ni = lattn__vfma(pr, xi, lattn__vfma(pi, xr, ti));
}

/* _scan and _step: the recurrence in float32, modes in SIMD vectors (re and im in separate rows).
   Rounding errors of a float recurrence with |Ā| near 1 are correlated and add up over T, so time
   runs in blocks of 64: inside a block, g = Ā^j h_start and the block's own response l (from zero)
   are separate recurrences, y = s·Re(C(g + l)) + Dskip·u; at a block's end the carried state is
   h = Ā^64·h_start + l with Ā^64 from double. A state then takes ~T/64 roundings, not T. */
#define LATTN__S4D_BLOCK 64
/* The per-channel constants of the float recurrence, rows of Np floats in m: Ā (hi ar, ai; lo lr,
   li), Ā^64 (hi Pr, Pi; lo Qr, Qi), B̄ (br, bi), C (cr, ci); the padded modes zero. */
enum { LATTN__S4D_AR, LATTN__S4D_AI, LATTN__S4D_LR, LATTN__S4D_LI, LATTN__S4D_PR, LATTN__S4D_PI, LATTN__S4D_QR, LATTN__S4D_QI,
       LATTN__S4D_BR, LATTN__S4D_BI, LATTN__S4D_CR, LATTN__S4D_CI, LATTN__S4D_CONSTS };
static void lattn__s4d_consts(const lattn_s4d_args *a, int64_t d, int64_t Np, float *m) {
    const double dt = exp((double)a->log_dt[d]);
    int64_t n;
    memset(m, 0, (size_t)(LATTN__S4D_CONSTS * Np) * sizeof(float));
    for (n = 0; n < a->N; n++) {
        lattn__cplx Ab, Bb, C, P;
        lattn__s4d_mode(a, d, n, &Ab, &Bb, &C);
        P = lattn__cexp(-exp((double)a->A_re[d * a->N + n]) * dt * LATTN__S4D_BLOCK,
                        (a->complex_modes ? (double)a->A_im[d * a->N + n] : 0.0) * dt * LATTN__S4D_BLOCK);
        m[LATTN__S4D_AR * Np + n] = (float)Ab.re;
        m[LATTN__S4D_AI * Np + n] = (float)Ab.im;
        m[LATTN__S4D_LR * Np + n] = (float)(Ab.re - (double)m[LATTN__S4D_AR * Np + n]);
        m[LATTN__S4D_LI * Np + n] = (float)(Ab.im - (double)m[LATTN__S4D_AI * Np + n]);
        m[LATTN__S4D_PR * Np + n] = (float)P.re;
        m[LATTN__S4D_PI * Np + n] = (float)P.im;
        m[LATTN__S4D_QR * Np + n] = (float)(P.re - (double)m[LATTN__S4D_PR * Np + n]);
        m[LATTN__S4D_QI * Np + n] = (float)(P.im - (double)m[LATTN__S4D_PI * Np + n]);
        m[LATTN__S4D_BR * Np + n] = (float)Bb.re;
        m[LATTN__S4D_BI * Np + n] = (float)Bb.im;
        m[LATTN__S4D_CR * Np + n] = (float)C.re;
        m[LATTN__S4D_CI * Np + n] = (float)C.im;
    }
}

/* One block of L <= 64 tokens from t0 of batch row b, channel d, from its start state st (re row,
   im row): g = Ā^j·st and the block's own response l (from zero) are separate recurrences; y_j =
   s·Re(C(g + l)) + Dskip·u into y_out (NULL: none), h_j = g + l into hs rows [j][re | im] (NULL:
   none), and st becomes the state carried out, Ā^64·st + l for a whole block with Ā^64 from double.
   sc: scratch of 4 rows. */
static void lattn__s4d_block(const lattn_s4d_args *a, int64_t b, int64_t d, int64_t t0, int64_t L, const float *m, int64_t Np,
                             float *st, float *sc, float *y_out, float *hs) {
    const float *ar = m + LATTN__S4D_AR * Np, *ai = m + LATTN__S4D_AI * Np, *lr = m + LATTN__S4D_LR * Np, *li = m + LATTN__S4D_LI * Np;
    const float *br = m + LATTN__S4D_BR * Np, *bi = m + LATTN__S4D_BI * Np, *cr = m + LATTN__S4D_CR * Np, *ci = m + LATTN__S4D_CI * Np;
    const float s = a->complex_modes ? 2.0f : 1.0f, dk = a->Dskip ? a->Dskip[d] : 0.0f;
    float *sr = st, *si = st + Np, *gr = sc, *gi = sc + Np, *xr = sc + 2 * Np, *xi = sc + 3 * Np;
    int64_t j, k;
    memcpy(gr, sr, (size_t)Np * sizeof(float));
    memcpy(gi, si, (size_t)Np * sizeof(float));
    memset(xr, 0, (size_t)(2 * Np) * sizeof(float));
    for (j = 0; j < L; j++) {
        float u = a->x[(b * a->T + t0 + j) * a->D + d];
        lattn__vf vu = lattn__vset1(u), acc = lattn__vzero(), z = lattn__vzero();
        for (k = 0; k < Np; k += LATTN__VW) {
            lattn__vf pr = lattn__vload(ar + k), pi = lattn__vload(ai + k), qr = lattn__vload(lr + k), qi = lattn__vload(li + k);
            lattn__vf ngr, ngi, nxr, nxi, hr, hi;
            lattn__s4d_cmadd(pr, pi, qr, qi, lattn__vload(gr + k), lattn__vload(gi + k), z, z, &ngr, &ngi);
            lattn__s4d_cmadd(pr, pi, qr, qi, lattn__vload(xr + k), lattn__vload(xi + k),
                             lattn__vmul(lattn__vload(br + k), vu), lattn__vmul(lattn__vload(bi + k), vu), &nxr, &nxi);
            lattn__vstore(gr + k, ngr);
            lattn__vstore(gi + k, ngi);
            lattn__vstore(xr + k, nxr);
            lattn__vstore(xi + k, nxi);
            hr = lattn__vadd(ngr, nxr);
            hi = lattn__vadd(ngi, nxi);
            if (hs) {
                lattn__vstore(hs + 2 * j * Np + k, hr);
                lattn__vstore(hs + (2 * j + 1) * Np + k, hi);
            }
            acc = lattn__vfma(lattn__vload(cr + k), hr, acc);
            acc = lattn__vsub(acc, lattn__vmul(lattn__vload(ci + k), hi));
        }
        if (y_out) y_out[(b * a->T + t0 + j) * a->D + d] = s * lattn__vhsum(acc) + dk * u;
    }
    for (k = 0; k < Np; k += LATTN__VW) {   /* the state carried out of the block */
        lattn__vf nr, ni;
        if (L == LATTN__S4D_BLOCK)
            lattn__s4d_cmadd(lattn__vload(m + LATTN__S4D_PR * Np + k), lattn__vload(m + LATTN__S4D_PI * Np + k),
                             lattn__vload(m + LATTN__S4D_QR * Np + k), lattn__vload(m + LATTN__S4D_QI * Np + k),
                             lattn__vload(sr + k), lattn__vload(si + k), lattn__vload(xr + k), lattn__vload(xi + k), &nr, &ni);
        else {
            nr = lattn__vadd(lattn__vload(gr + k), lattn__vload(xr + k));
            ni = lattn__vadd(lattn__vload(gi + k), lattn__vload(xi + k));
        }
        lattn__vstore(sr + k, nr);
        lattn__vstore(si + k, ni);
    }
}

/* The initial state of (b, d) into st (re row, im row; zero without h0 and in the padding). */
static void lattn__s4d_state_in(const lattn_s4d_args *a, const float *h, int64_t b, int64_t d, int64_t Np, float *st) {
    int64_t n;
    memset(st, 0, (size_t)(2 * Np) * sizeof(float));
    for (n = 0; h && n < a->N; n++) {
        st[n] = h[((b * a->D + d) * a->N + n) * 2];
        st[Np + n] = h[((b * a->D + d) * a->N + n) * 2 + 1];
    }
}

/* _scan and _step: the recurrence in float32, modes in SIMD vectors (re and im in separate rows).
   Rounding errors of a float recurrence with |Ā| near 1 are correlated and add up over T, so time
   runs in blocks of 64 (lattn__s4d_block): a state then takes ~T/64 roundings, not T. */
static lattn_status lattn__s4d_rec(lattn_ctx *ctx, const lattn_s4d_args *a, const char *who) {
    int64_t w, D, N, Np;
    int nthr;
    size_t per;
    float *ws;
    LATTN__TRY(lattn__s4d_check(ctx, who, a, 1));
    D = a->D;
    N = a->N;
    Np = (N + LATTN__VW - 1) / LATTN__VW * LATTN__VW;
    nthr = lattn__threads(ctx);
    per = (size_t)((LATTN__S4D_CONSTS + 6) * Np);   /* constants, state, block scratch */
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, per * (size_t)nthr, who));
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < a->B * D; w++) {
        int64_t b = w / D, d = w % D, n, t0;
        float *m = ws + per * (size_t)lattn__thread_id(), *st = m + LATTN__S4D_CONSTS * Np, *sc = st + 2 * Np;
        lattn__s4d_consts(a, d, Np, m);
        lattn__s4d_state_in(a, a->h0, b, d, Np, st);
        for (t0 = 0; t0 < a->T; t0 += LATTN__S4D_BLOCK)
            lattn__s4d_block(a, b, d, t0, LATTN__MIN((int64_t)LATTN__S4D_BLOCK, a->T - t0), m, Np, st, sc, a->y, NULL);
        if (a->ht)
            for (n = 0; n < N; n++) { a->ht[((b * D + d) * N + n) * 2] = st[n]; a->ht[((b * D + d) * N + n) * 2 + 1] = st[Np + n]; }
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* One decoding step. The state is float32 in and out, so each step rounds it once; the update
   itself runs in double (no FMA-dependent double rounding, which would add up over long decodes of
   |Ā| near 1). h0 -> ht, in place allowed. */
static lattn_status lattn__s4d_step1(lattn_ctx *ctx, const lattn_s4d_args *a) {
    int64_t b, d, n, D, N;
    LATTN__TRY(lattn__s4d_check(ctx, "lattn_s4d_step", a, 1));
    D = a->D;
    N = a->N;
    for (b = 0; b < a->B; b++)
        for (d = 0; d < D; d++) {
            double u = a->x[b * D + d], y = 0;
            for (n = 0; n < N; n++) {
                size_t i = (size_t)(((b * D + d) * N + n) * 2);
                lattn__cplx Ab, Bb, C, h;
                lattn__s4d_mode(a, d, n, &Ab, &Bb, &C);
                h.re = a->h0 ? (double)a->h0[i] : 0.0;
                h.im = a->h0 ? (double)a->h0[i + 1] : 0.0;
                h = lattn__cmul(Ab, h);
                h.re += Bb.re * u;
                h.im += Bb.im * u;
                a->ht[i] = (float)h.re;
                a->ht[i + 1] = (float)h.im;
                y += C.re * (double)a->ht[i] - C.im * (double)a->ht[i + 1];   /* read the state as stored */
            }
            a->y[b * D + d] = (float)((a->complex_modes ? 2.0 : 1.0) * y + (a->Dskip ? (double)a->Dskip[d] * u : 0.0));
        }
    return lattn__ok(ctx);
}

/* >>s4d.step -------------------------------------------------------------------------------------
   the recurrence token by token, the update in double, the state float32 in and out */
LATTN__DEF lattn_status lattn_s4d_step(lattn_ctx *ctx, const lattn_s4d_args *a) {
    int64_t t, b, D, sn;
    float *buf;
    lattn_s4d_args s;
    lattn_status st = LATTN_OK;
    if (a && a->T == 1 && a->ht) return lattn__s4d_step1(ctx, a);
    LATTN__TRY(lattn__s4d_check(ctx, "lattn_s4d_step", a, 1));
    D = a->D;
    sn = a->B * D * a->N * 2;
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, (size_t)(sn + 2 * a->B * D), "lattn_s4d_step"));
    if (a->h0) memcpy(buf, a->h0, sizeof(float) * (size_t)sn); else memset(buf, 0, sizeof(float) * (size_t)sn);
    s = *a;
    s.T = 1;
    s.h0 = buf;
    s.ht = buf;
    s.x = buf + sn;
    s.y = buf + sn + a->B * D;
    for (t = 0; t < a->T && st == LATTN_OK; t++) {
        for (b = 0; b < a->B; b++) memcpy((float *)s.x + b * D, a->x + (b * a->T + t) * D, sizeof(float) * (size_t)D);
        st = lattn__s4d_step1(ctx, &s);
        for (b = 0; b < a->B; b++) memcpy(a->y + (b * a->T + t) * D, s.y + b * D, sizeof(float) * (size_t)D);
    }
    if (a->ht && st == LATTN_OK) memcpy(a->ht, buf, sizeof(float) * (size_t)sn);
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

/* Σ_n w_n Ā_n^(j + shift) for j < T (its real part, times s): the kernel (w = C B̄, shift 0) and
   the zero-input response (w = C h0, shift 1). Powers re-anchored with exp((j+shift)ΔA) every 32. */
static void lattn__s4d_powsum(const lattn_s4d_args *a, int64_t d, const lattn__cplx *w, int64_t T, int64_t shift, double *out) {
    int64_t n, j, N = a->N;
    double s = a->complex_modes ? 2.0 : 1.0, dt = exp((double)a->log_dt[d]);
    for (j = 0; j < T; j++) out[j] = 0.0;
    for (n = 0; n < N; n++) {
        int64_t i = d * N + n;
        double ar = -exp((double)a->A_re[i]) * dt, ai = a->complex_modes ? (double)a->A_im[i] * dt : 0.0;
        lattn__cplx step = lattn__cexp(ar, ai), p;
        p.re = p.im = 0.0;
        for (j = 0; j < T; j++) {
            if (j % 32 == 0) p = lattn__cexp(ar * (double)(j + shift), ai * (double)(j + shift));
            else p = lattn__cmul(p, step);
            out[j] += s * (w[n].re * p.re - w[n].im * p.im);
        }
    }
}

/* The convolution forms: the kernel per channel, then each batch row by FFT or directly. */
static lattn_status lattn__s4d_convform(lattn_ctx *ctx, const lattn_s4d_args *a, int use_fft, const char *who) {
    int64_t w, D, N, T, P = 1;
    int nthr;
    size_t per;
    double *ws, *tw;
    LATTN__TRY(lattn__s4d_check(ctx, who, a, 1));
    if (a->ht) return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: a convolution form has no state out (use _scan or _step)", who);
    D = a->D;
    N = a->N;
    T = a->T;
    if (T == 0) return lattn__ok(ctx);
    while (P < 2 * T) P <<= 1;
    nthr = lattn__threads(ctx);
    per = (size_t)(T + 4 * P + 2 * N) + 2;   /* zero-input response; kernel and signal spectra; weights */
    LATTN__TRY(lattn__alloc_doubles(ctx, &ws, per * (size_t)nthr + (size_t)P, who));
    tw = ws + per * (size_t)nthr;
    if (use_fft) lattn__fft_twiddles(P, tw);
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < D; w++) {
        int64_t d = w, b, j, t, n;
        double *m = ws + per * (size_t)lattn__thread_id();
        double *zir = m, *kr = zir + T, *ki = kr + P, *xr = ki + P, *xi = xr + P;
        lattn__cplx *wt = (lattn__cplx *)(void *)(xi + P);
        for (n = 0; n < N; n++) {        /* kernel weights C_n B̄_n */
            lattn__cplx Ab, Bb, C;
            lattn__s4d_mode(a, d, n, &Ab, &Bb, &C);
            wt[n] = lattn__cmul(C, Bb);
        }
        lattn__s4d_powsum(a, d, wt, T, 0, kr);
        for (j = T; j < P; j++) kr[j] = 0.0;
        for (j = 0; j < P; j++) ki[j] = 0.0;
        if (use_fft) lattn__fft(kr, ki, P, 0, tw);
        for (b = 0; b < a->B; b++) {
            const float *u = a->x + b * T * D + d;
            if (a->h0) {                 /* zero-input response of the initial state */
                for (n = 0; n < N; n++) {
                    lattn__cplx Ab, Bb, C, h;
                    lattn__s4d_mode(a, d, n, &Ab, &Bb, &C);
                    h.re = a->h0[((b * D + d) * N + n) * 2];
                    h.im = a->h0[((b * D + d) * N + n) * 2 + 1];
                    wt[n] = lattn__cmul(C, h);
                }
                lattn__s4d_powsum(a, d, wt, T, 1, zir);
            } else for (t = 0; t < T; t++) zir[t] = 0.0;
            if (use_fft) {
                for (t = 0; t < P; t++) { xr[t] = t < T ? (double)u[t * D] : 0.0; xi[t] = 0.0; }
                lattn__fft(xr, xi, P, 0, tw);
                for (t = 0; t < P; t++) {
                    double r = xr[t] * kr[t] - xi[t] * ki[t], im = xr[t] * ki[t] + xi[t] * kr[t];
                    xr[t] = r;
                    xi[t] = im;
                }
                lattn__fft(xr, xi, P, 1, tw);
            } else
                for (t = 0; t < T; t++) {  /* y_t = Σ_{j<=t} K_j u_{t-j} */
                    double acc = 0;
                    for (j = 0; j <= t; j++) acc += kr[j] * (double)u[(t - j) * D];
                    xr[t] = acc;
                }
            for (t = 0; t < T; t++)
                a->y[(b * T + t) * D + d] = (float)(xr[t] + zir[t] + (a->Dskip ? (double)a->Dskip[d] * u[t * D] : 0.0));
        }
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}
/* >>s4d.chunk ------------------------------------------------------------------------------------
   by method: the recurrence in blocks of 64 (SCAN), y = K * x by FFT (FFT) or directly (CONV),
   K_j = s·Re(Σ_n C_n B̄_n Ā_n^j), plus the zero-input response of h0 */
LATTN__DEF lattn_status lattn_s4d_chunk(lattn_ctx *ctx, const lattn_s4d_args *a) {
    const char *who = "lattn_s4d_chunk";
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    switch (a->method) {
    case LATTN_S4D_SCAN: return lattn__s4d_rec(ctx, a, who);
    case LATTN_S4D_FFT: return lattn__s4d_convform(ctx, a, 1, who);
    case LATTN_S4D_CONV: return lattn__s4d_convform(ctx, a, 0, who);
    }
    return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: method %d is not a lattn_s4d_method", who, (int)a->method);
}

/* >>s4d.ref_backward -------------------------------------------------------------------------------
   For every complex z write G(z) = ∂ℒ/∂Re z + i·∂ℒ/∂Im z; then w = a·z gives G(z) = conj(a)·G(w) and
   G(a) = conj(z)·G(w), and y = s·Re(C·h) gives G(h) = s·conj(C)·dy, G(C) = s·conj(h)·dy. Per channel
   and mode, t = T-1 .. 0 with U = G(h_t) (from dht):
       U += s·conj(C)·dy_t;  G(C) += s·conj(h_t)·dy_t;  G(B̄) += x_t·U;  G(Ā) += conj(h_{t-1})·U;
       dx_t = Σ_n Re(conj(B̄)·U) + Dskip·dy_t;  U = conj(Ā)·U;        finally dh0 = U.
   Then through B̄ = E·B, E = (Ā - 1)/A, Ā = exp(ΔA), each holomorphic (G(z) = conj(f'(z))·G(f)):
       G(B) = conj(E)·G(B̄);  G(E) = conj(B)·G(B̄);  G(Ā)' = G(Ā) + conj(1/A)·G(E);
       G(A) = -conj(E/A)·G(E) + conj(ΔĀ)·G(Ā)';      dΔ = Σ_n Re(conj(AĀ)·G(Ā)')
   and A = -exp(A_re) + i·A_im, Δ = exp(log_dt): dA_re = -exp(A_re)·Re G(A), dA_im = Im G(A),
   dlog_dt = Δ·dΔ, dB_re + i·dB_im = G(B), dC_re + i·dC_im = G(C), dDskip = Σ dy·x. Real modes are
   the same with every imaginary part zero. */
static lattn_status lattn__s4d_grads_check(lattn_ctx *ctx, const char *who, const lattn_s4d_args *a, const lattn_s4d_grads *g) {
    LATTN__TRY(lattn__s4d_check(ctx, who, a, 0));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    return LATTN_OK;
}
/* Channel d's parameter gradients from acc = G(Ā), G(B̄), G(C) summed over the batch (rows re, im
   of N each: Ā re, Ā im, B̄ re, B̄ im, C re, C im) and acc[6N] = Σ dy·x. */
static void lattn__s4d_param_grads(const lattn_s4d_args *a, const lattn_s4d_grads *g, int64_t d, const double *acc) {
    const int64_t N = a->N;
    const double dt = exp((double)a->log_dt[d]);
    double ddt = 0;
    int64_t n;
    for (n = 0; n < N; n++) {
        const int64_t i = d * N + n;
        lattn__cplx Ab, Bb, C, A, B, iA, E, EA, GAb, GBb, GE, GA, GB, AAb, t1, t2;
        double q;
        lattn__s4d_mode(a, d, n, &Ab, &Bb, &C);
        A.re = -exp((double)a->A_re[i]);
        A.im = a->complex_modes ? (double)a->A_im[i] : 0.0;
        B.re = a->B_re[i];
        B.im = a->complex_modes ? (double)a->B_im[i] : 0.0;
        q = A.re * A.re + A.im * A.im;
        iA.re = A.re / q;                /* 1/A */
        iA.im = -A.im / q;
        E.re = Ab.re - 1.0;
        E.im = Ab.im;
        E = lattn__cmul(E, iA);
        EA = lattn__cmul(E, iA);         /* E/A = -∂E/∂A */
        GAb.re = acc[n];
        GAb.im = acc[N + n];
        GBb.re = acc[2 * N + n];
        GBb.im = acc[3 * N + n];
        E.im = -E.im;                    /* conj(E) */
        GB = lattn__cmul(E, GBb);
        B.im = -B.im;                    /* conj(B) */
        GE = lattn__cmul(B, GBb);
        iA.im = -iA.im;                  /* conj(1/A) */
        t1 = lattn__cmul(iA, GE);
        GAb.re += t1.re;
        GAb.im += t1.im;
        EA.im = -EA.im;                  /* conj(E/A) */
        t1 = lattn__cmul(EA, GE);
        t2.re = dt * Ab.re;              /* conj(ΔĀ) */
        t2.im = -dt * Ab.im;
        t2 = lattn__cmul(t2, GAb);
        GA.re = t2.re - t1.re;
        GA.im = t2.im - t1.im;
        AAb = lattn__cmul(A, Ab);
        ddt += AAb.re * GAb.re + AAb.im * GAb.im;   /* Re(conj(AĀ)·G(Ā)') */
        lattn__put(g->dA_re, g->dA_re64, i, A.re * GA.re);
        lattn__put(g->dB_re, g->dB_re64, i, GB.re);
        lattn__put(g->dC_re, g->dC_re64, i, acc[4 * N + n]);
        if (a->complex_modes) {
            lattn__put(g->dA_im, g->dA_im64, i, GA.im);
            lattn__put(g->dB_im, g->dB_im64, i, GB.im);
            lattn__put(g->dC_im, g->dC_im64, i, acc[5 * N + n]);
        }
    }
    lattn__put(g->dlog_dt, g->dlog_dt64, d, dt * ddt);
    if (a->Dskip) lattn__put(g->dDskip, g->dDskip64, d, acc[6 * N]);
}
LATTN__DEF lattn_status lattn_s4d_ref_backward(lattn_ctx *ctx, const lattn_s4d_args *a, const lattn_s4d_grads *g) {
    const char *who = "lattn_s4d_ref_backward";
    int64_t b, d, n, t, D, N, T;
    double s, *buf, *acc;
    size_t cnt;
    lattn__cplx *H, *Ab, *Bb, *C, *U;
    LATTN__TRY(lattn__s4d_grads_check(ctx, who, a, g));
    D = a->D;
    N = a->N;
    T = a->T;
    s = a->complex_modes ? 2.0 : 1.0;
    if (lattn_size_mul(&cnt, (size_t)(T + 5), (size_t)(2 * N)) != LATTN_OK || lattn_size_add(&cnt, cnt, (size_t)(6 * N + 1)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    LATTN__TRY(lattn__alloc_doubles(ctx, &buf, cnt, who));
    H = (lattn__cplx *)(void *)buf;      /* H[t + 1] = h_t, H[0] = h0 */
    Ab = H + (T + 1) * N;
    Bb = Ab + N;
    C = Bb + N;
    U = C + N;
    acc = (double *)(void *)(U + N);
    for (d = 0; d < D; d++) {
        memset(acc, 0, (size_t)(6 * N + 1) * sizeof(double));
        for (n = 0; n < N; n++) lattn__s4d_mode(a, d, n, &Ab[n], &Bb[n], &C[n]);
        for (b = 0; b < a->B; b++) {
            for (n = 0; n < N; n++) {    /* forward: every state kept */
                H[n].re = a->h0 ? (double)a->h0[((b * D + d) * N + n) * 2] : 0.0;
                H[n].im = a->h0 ? (double)a->h0[((b * D + d) * N + n) * 2 + 1] : 0.0;
                U[n].re = g->dht ? (double)g->dht[((b * D + d) * N + n) * 2] : 0.0;
                U[n].im = g->dht ? (double)g->dht[((b * D + d) * N + n) * 2 + 1] : 0.0;
            }
            for (t = 0; t < T; t++)
                for (n = 0; n < N; n++) {
                    double u = a->x[(b * T + t) * D + d];
                    H[(t + 1) * N + n] = lattn__cmul(Ab[n], H[t * N + n]);
                    H[(t + 1) * N + n].re += Bb[n].re * u;
                    H[(t + 1) * N + n].im += Bb[n].im * u;
                }
            for (t = T - 1; t >= 0; t--) {   /* backward */
                const double dy = g->dout[(b * T + t) * D + d], u = a->x[(b * T + t) * D + d];
                double dx = a->Dskip ? (double)a->Dskip[d] * dy : 0.0;
                acc[6 * N] += dy * u;
                for (n = 0; n < N; n++) {
                    const lattn__cplx h = H[(t + 1) * N + n], hp = H[t * N + n];
                    double ur, ui;
                    U[n].re += s * C[n].re * dy;
                    U[n].im -= s * C[n].im * dy;
                    acc[4 * N + n] += s * h.re * dy;
                    acc[5 * N + n] -= s * h.im * dy;
                    acc[2 * N + n] += u * U[n].re;
                    acc[3 * N + n] += u * U[n].im;
                    dx += Bb[n].re * U[n].re + Bb[n].im * U[n].im;
                    acc[n] += hp.re * U[n].re + hp.im * U[n].im;
                    acc[N + n] += hp.re * U[n].im - hp.im * U[n].re;
                    ur = Ab[n].re * U[n].re + Ab[n].im * U[n].im;   /* U = conj(Ā)·U */
                    ui = Ab[n].re * U[n].im - Ab[n].im * U[n].re;
                    U[n].re = ur;
                    U[n].im = ui;
                }
                lattn__put(g->dx, g->dx64, (b * T + t) * D + d, dx);
            }
            for (n = 0; n < N; n++) {
                lattn__put(g->dh0, g->dh064, ((b * D + d) * N + n) * 2, U[n].re);
                lattn__put(g->dh0, g->dh064, ((b * D + d) * N + n) * 2 + 1, U[n].im);
            }
        }
        lattn__s4d_param_grads(a, g, d, acc);
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* >>s4d.chunk_backward ---------------------------------------------------------------------------
   the reverse step of lattn_s4d_ref_backward per vector of modes, work items (batch row, channel):
   a forward pass keeps the state at every block start; blocks then run in reverse, each one's
   states rebuilt from its checkpoint (lattn__s4d_block). The adjoint is split the way the forward
   splits the state: inside a block g = conj(Ā)^j·V (V: the adjoint entering from the right) and
   the block's own part l are separate, and the adjoint leaving a whole block is conj(Ā^64)·V + l
   with Ā^64 from double. The block's G(Ā), G(B̄), G(C) are float sums over ≤ 64 tokens, added into
   the item's double sums; channels' sums over the batch are taken in batch order, so any thread
   count gives the same bits. */
LATTN__DEF lattn_status lattn_s4d_chunk_backward(lattn_ctx *ctx, const lattn_s4d_args *a, const lattn_s4d_grads *g) {
    const char *who = "lattn_s4d_chunk_backward";
    int64_t w, D, N, Np, nblk, npart;
    int nthr;
    size_t per, cnt, np;
    float *ws;
    double *part;
    lattn_status st;
    LATTN__TRY(lattn__s4d_grads_check(ctx, who, a, g));
    D = a->D;
    N = a->N;
    Np = (N + LATTN__VW - 1) / LATTN__VW * LATTN__VW;
    nblk = (a->T + LATTN__S4D_BLOCK - 1) / LATTN__S4D_BLOCK;
    npart = 6 * N + 1;
    nthr = lattn__threads(ctx);
    /* constants, conj rows, state, block scratch, checkpoints, block states, adjoint (V, g, l), sums */
    if (lattn_size_mul(&per, (size_t)(LATTN__S4D_CONSTS + 4 + 2 + 4 + 2 * nblk + 2 * LATTN__S4D_BLOCK + 6 + 6), (size_t)Np) != LATTN_OK ||
        lattn_size_mul(&cnt, per, (size_t)nthr) != LATTN_OK || lattn_size_mul(&np, (size_t)(a->B * D), (size_t)npart) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, cnt, who));
    if ((st = lattn__alloc_doubles(ctx, &part, np, who)) != LATTN_OK) {
        lattn__free(ctx, ws);
        return st;
    }
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < a->B * D; w++) {
        const int64_t b = w / D, d = w % D;
        const float s = a->complex_modes ? 2.0f : 1.0f, dk = a->Dskip ? a->Dskip[d] : 0.0f;
        float *m = ws + per * (size_t)lattn__thread_id(), *cj = m + LATTN__S4D_CONSTS * Np, *st = cj + 4 * Np, *sc = st + 2 * Np;
        float *ck = sc + 4 * Np, *hs = ck + 2 * nblk * Np, *V = hs + 2 * LATTN__S4D_BLOCK * Np, *gv = V + 2 * Np, *lv = gv + 2 * Np;
        float *fs = lv + 2 * Np;         /* the block's sums, rows Ā re, Ā im, B̄ re, B̄ im, C re, C im */
        double *pp = part + w * npart;
        const float *ar = m + LATTN__S4D_AR * Np, *lr = m + LATTN__S4D_LR * Np, *br = m + LATTN__S4D_BR * Np, *bi = m + LATTN__S4D_BI * Np;
        const float *cr = m + LATTN__S4D_CR * Np, *ci = m + LATTN__S4D_CI * Np;
        int64_t n, k, i, j;
        lattn__s4d_consts(a, d, Np, m);
        for (k = 0; k < Np; k++) {       /* conj(Ā), conj(Ā^64): the imaginary rows negated */
            cj[k] = -m[LATTN__S4D_AI * Np + k];
            cj[Np + k] = -m[LATTN__S4D_LI * Np + k];
            cj[2 * Np + k] = -m[LATTN__S4D_PI * Np + k];
            cj[3 * Np + k] = -m[LATTN__S4D_QI * Np + k];
        }
        memset(pp, 0, (size_t)npart * sizeof(double));
        lattn__s4d_state_in(a, a->h0, b, d, Np, st);
        for (i = 0; i < nblk; i++) {     /* forward: the block-start states */
            memcpy(ck + 2 * i * Np, st, (size_t)(2 * Np) * sizeof(float));
            lattn__s4d_block(a, b, d, i * LATTN__S4D_BLOCK, LATTN__MIN((int64_t)LATTN__S4D_BLOCK, a->T - i * LATTN__S4D_BLOCK), m, Np, st, sc,
                             NULL, NULL);
        }
        lattn__s4d_state_in(a, g->dht, b, d, Np, V);
        for (i = nblk - 1; i >= 0; i--) {
            const int64_t t0 = i * LATTN__S4D_BLOCK, L = LATTN__MIN((int64_t)LATTN__S4D_BLOCK, a->T - t0);
            memcpy(st, ck + 2 * i * Np, (size_t)(2 * Np) * sizeof(float));
            lattn__s4d_block(a, b, d, t0, L, m, Np, st, sc, NULL, hs);
            memcpy(gv, V, (size_t)(2 * Np) * sizeof(float));
            memset(lv, 0, (size_t)(2 * Np) * sizeof(float));
            memset(fs, 0, (size_t)(6 * Np) * sizeof(float));
            for (j = L - 1; j >= 0; j--) {
                const int64_t tok = (b * a->T + t0 + j) * D + d;
                const float dy = g->dout[tok], u = a->x[tok];
                const float *h = hs + 2 * j * Np, *hp = j > 0 ? hs + 2 * (j - 1) * Np : ck + 2 * i * Np;
                const lattn__vf vs = lattn__vset1(s * dy), vu = lattn__vset1(u), z = lattn__vzero();
                lattn__vf dx = lattn__vzero();
                for (k = 0; k < Np; k += LATTN__VW) {
                    const lattn__vf hr = lattn__vload(h + k), hi = lattn__vload(h + Np + k);
                    const lattn__vf pr = lattn__vload(hp + k), pi = lattn__vload(hp + Np + k);
                    const lattn__vf lr2 = lattn__vfma(lattn__vload(cr + k), vs, lattn__vload(lv + k));
                    const lattn__vf li2 = lattn__vsub(lattn__vload(lv + Np + k), lattn__vmul(lattn__vload(ci + k), vs));
                    const lattn__vf ur = lattn__vadd(lattn__vload(gv + k), lr2), ui = lattn__vadd(lattn__vload(gv + Np + k), li2);
                    lattn__vf ngr, ngi, nlr, nli;
                    lattn__vstore(fs + k, lattn__vfma(pr, ur, lattn__vfma(pi, ui, lattn__vload(fs + k))));
                    lattn__vstore(fs + Np + k, lattn__vsub(lattn__vfma(pr, ui, lattn__vload(fs + Np + k)), lattn__vmul(pi, ur)));
                    lattn__vstore(fs + 2 * Np + k, lattn__vfma(vu, ur, lattn__vload(fs + 2 * Np + k)));
                    lattn__vstore(fs + 3 * Np + k, lattn__vfma(vu, ui, lattn__vload(fs + 3 * Np + k)));
                    lattn__vstore(fs + 4 * Np + k, lattn__vfma(hr, vs, lattn__vload(fs + 4 * Np + k)));
                    lattn__vstore(fs + 5 * Np + k, lattn__vsub(lattn__vload(fs + 5 * Np + k), lattn__vmul(hi, vs)));
                    dx = lattn__vfma(lattn__vload(br + k), ur, lattn__vfma(lattn__vload(bi + k), ui, dx));
                    lattn__s4d_cmadd(lattn__vload(ar + k), lattn__vload(cj + k), lattn__vload(lr + k), lattn__vload(cj + Np + k),
                                     lattn__vload(gv + k), lattn__vload(gv + Np + k), z, z, &ngr, &ngi);
                    lattn__s4d_cmadd(lattn__vload(ar + k), lattn__vload(cj + k), lattn__vload(lr + k), lattn__vload(cj + Np + k), lr2, li2, z, z,
                                     &nlr, &nli);
                    lattn__vstore(gv + k, ngr);
                    lattn__vstore(gv + Np + k, ngi);
                    lattn__vstore(lv + k, nlr);
                    lattn__vstore(lv + Np + k, nli);
                }
                lattn__put(g->dx, g->dx64, tok, (double)(lattn__vhsum(dx) + dk * dy));
                pp[6 * N] += (double)dy * (double)u;   /* dDskip */
            }
            for (k = 0; k < Np; k += LATTN__VW) {   /* the adjoint leaving the block */
                lattn__vf nr, ni;
                if (L == LATTN__S4D_BLOCK)
                    lattn__s4d_cmadd(lattn__vload(m + LATTN__S4D_PR * Np + k), lattn__vload(cj + 2 * Np + k), lattn__vload(m + LATTN__S4D_QR * Np + k),
                                     lattn__vload(cj + 3 * Np + k), lattn__vload(V + k), lattn__vload(V + Np + k), lattn__vload(lv + k),
                                     lattn__vload(lv + Np + k), &nr, &ni);
                else {
                    nr = lattn__vadd(lattn__vload(gv + k), lattn__vload(lv + k));
                    ni = lattn__vadd(lattn__vload(gv + Np + k), lattn__vload(lv + Np + k));
                }
                lattn__vstore(V + k, nr);
                lattn__vstore(V + Np + k, ni);
            }
            for (k = 0; k < 6; k++)
                for (n = 0; n < N; n++) pp[k * N + n] += (double)fs[k * Np + n];
        }
        for (n = 0; n < N; n++) {
            lattn__put(g->dh0, g->dh064, ((b * D + d) * N + n) * 2, (double)V[n]);
            lattn__put(g->dh0, g->dh064, ((b * D + d) * N + n) * 2 + 1, (double)V[Np + n]);
        }
    }
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < D; w++) {            /* each channel's sums over the batch, in batch order */
        int64_t b, k;
        for (b = 1; b < a->B; b++)
            for (k = 0; k < npart; k++) part[w * npart + k] += part[(b * D + w) * npart + k];
        lattn__s4d_param_grads(a, g, w, part + w * npart);
    }
    lattn__free(ctx, part);
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* ================================================================================================ */
/* >>tcn implementation                                                                             */
/* ================================================================================================ */
/* need_y: a forward form (y is written); the backward reads x only. */
static lattn_status lattn__tcn_check(lattn_ctx *ctx, const char *who, const lattn_tcn_args *a, int need_y) {
    int64_t d[3], l;
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    if (a->B < 1 || a->T < 0 || a->D < 1 || a->W < 1 || a->n_layers < 1 || a->n_layers > LATTN_TCN_MAX_LAYERS)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: bad sizes (B=%lld T=%lld d=%lld k=%lld layers=%lld)", who,
                           (long long)a->B, (long long)a->T, (long long)a->D, (long long)a->W, (long long)a->n_layers);
    if (!a->layers) return lattn__fail(ctx, LATTN_E_NULL, "%s: layers is NULL", who);
    for (l = 0; l < a->n_layers; l++)
        if (!a->layers[l].w || !a->layers[l].b || !a->layers[l].ln_w || !a->layers[l].ln_b)
            return lattn__fail(ctx, LATTN_E_NULL, "%s: a weight of layer %lld is NULL", who, (long long)l);
    if (a->T > 0 && (!a->x || (need_y && !a->y))) return lattn__fail(ctx, LATTN_E_NULL, "%s: x or y is NULL", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->D;
    LATTN__TRY(lattn__check_count(ctx, who, "x", 3, d));
    d[0] = a->D;
    d[1] = a->D;
    d[2] = a->W;
    LATTN__TRY(lattn__check_count(ctx, who, "conv weight", 3, d));
    if ((a->W - 1) > (INT64_MAX >> a->n_layers) / (a->D > 0 ? a->D : 1))
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: receptive field overflows", who);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_tcn_state_floats(int64_t d, int64_t k, int64_t n_layers, size_t *out) {
    size_t rows = 0, r; int64_t l;
    if (!out) return LATTN_E_NULL;
    if (d < 1 || k < 1 || n_layers < 1 || n_layers > LATTN_TCN_MAX_LAYERS) return LATTN_E_SHAPE;
    for (l = 0; l < n_layers; l++)
        if (lattn_size_add(&rows, rows, (size_t)(k - 1) << l) != LATTN_OK) return LATTN_E_OVERFLOW;
    if (lattn_size_mul(&r, rows, (size_t)d) != LATTN_OK || r > SIZE_MAX / 8) return LATTN_E_OVERFLOW;
    *out = r;
    return LATTN_OK;
}

/* LayerNorm (eps 1e-5, biased variance) then exact GELU then residual, on one row, in double. */
static void lattn__tcn_post_d(int64_t d, const double *c, const float *lw, const float *lb,
                              const double *res, double *out) {
    double mean = 0, var = 0; int64_t i;
    for (i = 0; i < d; i++) mean += c[i];
    mean /= (double)d;
    for (i = 0; i < d; i++) var += (c[i] - mean) * (c[i] - mean);
    var /= (double)d;
    for (i = 0; i < d; i++)
        out[i] = lattn__gelu_d((c[i] - mean) / sqrt(var + 1e-5) * lw[i] + lb[i]) + res[i];
}
/* The row's LayerNorm statistics as the float32 forms compute them: the mean, 1/σ. */
static float lattn__tcn_stats(int64_t d, const float *c, float *inv) {
    float mean = lattn_vec_sum((size_t)d, c) / (float)d, var = 0; int64_t i;
    for (i = 0; i < d; i++) var += (c[i] - mean) * (c[i] - mean);
    *inv = 1.0f / sqrtf(var / (float)d + 1e-5f);
    return mean;
}
/* out = GELU(LN(c)) + res in float32 (out may be c). */
static void lattn__tcn_post(int64_t d, const float *c, const float *lw, const float *lb, const float *res, float *out) {
    float inv, mean = lattn__tcn_stats(d, c, &inv); int64_t i;
    for (i = 0; i < d; i++) out[i] = lattn__gelu((c[i] - mean) * inv * lw[i] + lb[i]) + res[i];
}

/* >>tcn.ref --------------------------------------------------------------------------------------
   per layer c = b + Σ_j W_j x[t - (W-1-j)·2^l], out = GELU(LN(c)) + x, in double */
/* The dilated inputs of token t as W[o] reads them: z[i·k + j] = x[t - (k-1-j)·2^l][i] (0 before the start). */
static void lattn__tcn_taps_d(int64_t d, int64_t k, int64_t l, int64_t t, const double *x, double *z) {
    int64_t i, j, dil = (int64_t)1 << l;
    for (j = 0; j < k; j++) {
        int64_t p = t - (k - 1 - j) * dil;
        for (i = 0; i < d; i++) z[i * k + j] = p >= 0 ? x[p * d + i] : 0.0;
    }
}
static void lattn__tcn_conv_d(int64_t d, int64_t k, const lattn_tcn_layer *L, const double *z, double *c) {
    int64_t o, i;
    for (o = 0; o < d; o++) {
        double acc = L->b[o];
        for (i = 0; i < d * k; i++) acc += (double)L->w[o * d * k + i] * z[i];
        c[o] = acc;
    }
}
/* The stack in double on one batch row: acts[0] = x (T·D), acts[l + 1] = layer l of acts[l]; z, c scratch. */
static void lattn__tcn_row_d(const lattn_tcn_args *a, double *acts, double *z, double *c) {
    const int64_t d = a->D, k = a->W, T = a->T;
    int64_t l, t;
    for (l = 0; l < a->n_layers; l++)
        for (t = 0; t < T; t++) {
            lattn__tcn_taps_d(d, k, l, t, acts + l * T * d, z);
            lattn__tcn_conv_d(d, k, &a->layers[l], z, c);
            lattn__tcn_post_d(d, c, a->layers[l].ln_w, a->layers[l].ln_b, acts + l * T * d + t * d, acts + (l + 1) * T * d + t * d);
        }
}
/* The stack in double over the batch: input xf (float) or xd (double), output yf and / or yd. */
static lattn_status lattn__tcn_ref_d(lattn_ctx *ctx, const char *who, const lattn_tcn_args *a, const float *xf, const double *xd,
                                     float *yf, double *yd) {
    const int64_t d = a->D, k = a->W, T = a->T, L = a->n_layers;
    int64_t b, i;
    double *acts, *z, *c;
    size_t n;
    if (lattn_size_mul(&n, (size_t)(L + 1) * (size_t)T, (size_t)d) != LATTN_OK || lattn_size_add(&n, n, (size_t)(d * k + d)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the activations overflow", who);
    LATTN__TRY(lattn__alloc_doubles(ctx, &acts, n, who));
    z = acts + (L + 1) * T * d;
    c = z + d * k;
    for (b = 0; b < a->B; b++) {
        for (i = 0; i < T * d; i++) acts[i] = xd ? xd[b * T * d + i] : (double)xf[b * T * d + i];
        lattn__tcn_row_d(a, acts, z, c);
        for (i = 0; i < T * d; i++) lattn__put(yf, yd, b * T * d + i, acts[L * T * d + i]);
    }
    lattn__free(ctx, acts);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_tcn_ref(lattn_ctx *ctx, const lattn_tcn_args *a) {
    LATTN__TRY(lattn__tcn_check(ctx, "lattn_tcn_ref", a, 1));
    LATTN__TRY(lattn__tcn_ref_d(ctx, "lattn_tcn_ref", a, a->x, NULL, a->y, a->y64));
    return lattn__ok(ctx);
}

/* >>tcn.ref_backward ---------------------------------------------------------------------------------
   per batch row, every layer's input kept; layers in reverse with G = ∂ℒ/∂out, per token:
       dn = G ⊙ GELU'(n), n = ĉ γ + β, ĉ = (c - μ)/σ:   dγ += dn ⊙ ĉ;  dβ += dn
       dc = (dĉ - mean(dĉ) - ĉ·mean(dĉ ⊙ ĉ)) / σ with dĉ = dn ⊙ γ;     db += dc
       dW[:, :, j] += dc ⊗ x[t - (W-1-j)·2^l];   dx[t - (W-1-j)·2^l] += W[:, :, j]ᵀ dc;   dx[t] += G (residual)
   GELU'(n) = Φ(n) + n·φ(n). dwts: per layer [D·D·W | D | D | D], summed over the batch. */
static lattn_status lattn__tcn_bw_d(lattn_ctx *ctx, const char *who, const lattn_tcn_args *a, const float *xf, const double *xd,
                                    const float *dyf, const double *dyd, double *dx, double *dwts) {
    const int64_t d = a->D, k = a->W, T = a->T, L = a->n_layers, nl = d * d * k + 3 * d;
    int64_t b, l, t, i, j, o;
    double *acts, *G, *Gin, *z, *c, *dc;
    size_t n;
    if (lattn_size_mul(&n, (size_t)(L + 3) * (size_t)T, (size_t)d) != LATTN_OK || lattn_size_add(&n, n, (size_t)(d * k + 2 * d)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the activations overflow", who);
    LATTN__TRY(lattn__alloc_doubles(ctx, &acts, n, who));
    G = acts + (L + 1) * T * d;
    Gin = G + T * d;
    z = Gin + T * d;
    c = z + d * k;
    dc = c + d;
    if (dwts) memset(dwts, 0, (size_t)(L * nl) * sizeof(double));
    for (b = 0; b < a->B; b++) {
        for (i = 0; i < T * d; i++) {
            acts[i] = xd ? xd[b * T * d + i] : (double)xf[b * T * d + i];
            G[i] = dyd ? dyd[b * T * d + i] : (double)dyf[b * T * d + i];
        }
        lattn__tcn_row_d(a, acts, z, c);
        for (l = L - 1; l >= 0; l--) {
            const lattn_tcn_layer *Ly = &a->layers[l];
            const double *xl = acts + l * T * d;
            double *dw = dwts ? dwts + l * nl : NULL;
            const int64_t dil = (int64_t)1 << l;
            for (i = 0; i < T * d; i++) Gin[i] = G[i];        /* the residual */
            for (t = 0; t < T; t++) {
                double mean = 0, var = 0, sd, m1 = 0, m2 = 0;
                lattn__tcn_taps_d(d, k, l, t, xl, z);
                lattn__tcn_conv_d(d, k, Ly, z, c);
                for (o = 0; o < d; o++) mean += c[o];
                mean /= (double)d;
                for (o = 0; o < d; o++) var += (c[o] - mean) * (c[o] - mean);
                sd = sqrt(var / (double)d + 1e-5);
                for (o = 0; o < d; o++) {
                    const double ch = (c[o] - mean) / sd, nn = ch * (double)Ly->ln_w[o] + (double)Ly->ln_b[o];
                    const double gp = 0.5 * (1.0 + erf(nn * 0.70710678118654752440)) + nn * exp(-0.5 * nn * nn) * 0.39894228040143267794;
                    const double dn = G[t * d + o] * gp;
                    if (dw) {
                        dw[d * d * k + d + o] += dn * ch;
                        dw[d * d * k + 2 * d + o] += dn;
                    }
                    dc[o] = dn * (double)Ly->ln_w[o];  /* dĉ */
                    m1 += dc[o];
                    m2 += dc[o] * ch;
                    c[o] = ch;
                }
                m1 /= (double)d;
                m2 /= (double)d;
                for (o = 0; o < d; o++) {
                    dc[o] = (dc[o] - m1 - c[o] * m2) / sd;
                    if (dw) dw[d * d * k + o] += dc[o];
                }
                for (j = 0; j < k; j++) {
                    const int64_t p = t - (k - 1 - j) * dil;
                    if (p < 0) continue;
                    for (o = 0; o < d; o++)
                        for (i = 0; i < d; i++) {
                            if (dw) dw[(o * d + i) * k + j] += dc[o] * xl[p * d + i];
                            Gin[p * d + i] += (double)Ly->w[(o * d + i) * k + j] * dc[o];
                        }
                }
            }
            for (i = 0; i < T * d; i++) G[i] = Gin[i];
        }
        for (i = 0; dx && i < T * d; i++) dx[b * T * d + i] = G[i];
    }
    lattn__free(ctx, acts);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_tcn_ref_backward(lattn_ctx *ctx, const lattn_tcn_args *a, const lattn_tcn_grads *g) {
    const char *who = "lattn_tcn_ref_backward";
    double *dx = NULL, *dw = NULL;
    int64_t l, i, nl, n;
    lattn_status st;
    LATTN__TRY(lattn__tcn_check(ctx, who, a, 0));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    n = a->B * a->T * a->D;
    nl = a->D * a->D * a->W + 3 * a->D;
    LATTN__TRY(lattn__alloc_doubles(ctx, &dx, (size_t)(n + a->n_layers * nl), who));
    dw = dx + n;
    st = lattn__tcn_bw_d(ctx, who, a, a->x, NULL, g->dout, NULL, dx, dw);
    for (i = 0; st == LATTN_OK && i < n; i++) lattn__put(g->dx, g->dx64, i, dx[i]);
    for (l = 0; st == LATTN_OK && g->layers && l < a->n_layers; l++) {
        const lattn_tcn_layer_grads *lg = &g->layers[l];
        const double *p = dw + l * nl;
        const int64_t nw = a->D * a->D * a->W;
        for (i = 0; i < nw; i++) lattn__put(lg->dw, lg->dw64, i, p[i]);
        for (i = 0; i < a->D; i++) {
            lattn__put(lg->db, lg->db64, i, p[nw + i]);
            lattn__put(lg->dln_w, lg->dln_w64, i, p[nw + a->D + i]);
            lattn__put(lg->dln_b, lg->dln_b64, i, p[nw + 2 * a->D + i]);
        }
    }
    lattn__free(ctx, dx);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

/* >>tcn.chunk ------------------------------------------------------------------------------------
   each tap one GEMM over a block of 256 tokens, then LayerNorm, GELU and the residual */
/* Fast: tap j of layer l is one GEMM, C[s:T] += X[0:T-s] · W_j with s = (k-1-j)·2^l and W_j the
   [d_in][d_out] slice stored contiguously. Threads take fixed blocks of 256 output rows (the split
   depends on the shape only). */
#define LATTN__TCN_BLOCK 256
/* Layer l's weights as k slices W_j [d_in][d_out]: wp[(j·d + i)·d + o] = w[o][i][j]. */
static void lattn__tcn_pack(const lattn_tcn_layer *L, int64_t d, int64_t k, float *wp) {
    int64_t o, i, j;
    for (j = 0; j < k; j++)
        for (o = 0; o < d; o++)
            for (i = 0; i < d; i++) wp[(j * d + i) * d + o] = L->w[(o * d + i) * k + j];
}
/* One layer in float32 over the batch: C = conv(X) (pre-LayerNorm), Y = GELU(LN(C)) + X (Y may be C). */
static void lattn__tcn_layer32(int nthr, const lattn_tcn_args *a, int64_t l, const float *wp, const float *act, float *cpre,
                               float *out, float *gws, size_t gw) {
    const int64_t d = a->D, k = a->W, T = a->T, dil = (int64_t)1 << l, nb = (T + LATTN__TCN_BLOCK - 1) / LATTN__TCN_BLOCK;
    const lattn_tcn_layer *L = &a->layers[l];
    int64_t w;
    (void)nthr;                          /* without OpenMP */
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < a->B * nb; w++) {
        int64_t bb = w / nb, r0 = (w % nb) * LATTN__TCN_BLOCK, r1 = LATTN__MIN(T, r0 + LATTN__TCN_BLOCK), r, jj;
        const float *X = act + bb * T * d;
        float *C = cpre + bb * T * d, *Y = out + bb * T * d, *ws = gws + (size_t)lattn__thread_id() * gw;
        for (r = r0; r < r1; r++) memcpy(C + r * d, L->b, (size_t)d * sizeof(float));
        for (jj = 0; jj < k; jj++) {
            int64_t s = (k - 1 - jj) * dil, lo = LATTN__MAX(r0, s);   /* rows r >= s read X[r - s] */
            if (lo < r1)
                lattn__sgemm(LATTN_GEMM_ACCUMULATE, r1 - lo, d, d, X + (lo - s) * d, d, wp + jj * d * d, d, C + lo * d, d, ws);
        }
        for (r = r0; r < r1; r++) lattn__tcn_post(d, C + r * d, L->ln_w, L->ln_b, X + r * d, Y + r * d);
    }
}
/* The float32 stack with every layer kept for a backward pass: acts[l] (l = 0 .. L) the inputs of
   layer l and the output, cpre[l] its conv output; wp every layer's packed weights. keep = 0: acts
   and cpre are two ping-pong buffers and the output lands in a->y. */
static void lattn__tcn_fwd32(int nthr, const lattn_tcn_args *a, int keep, float *wp, float *acts, float *cpre, float *gws, size_t gw) {
    const int64_t d = a->D, k = a->W, n = a->B * a->T * d;
    int64_t l;
    memcpy(acts, a->x, (size_t)n * sizeof(float));
    for (l = 0; l < a->n_layers; l++) {
        float *X = keep ? acts + l * n : acts, *C = keep ? cpre + l * n : cpre;
        lattn__tcn_pack(&a->layers[l], d, k, wp + (keep ? l * k * d * d : 0));
        lattn__tcn_layer32(nthr, a, l, wp + (keep ? l * k * d * d : 0), X, C, keep ? X + n : C, gws, gw);
        if (!keep) { float *t = acts; acts = cpre; cpre = t; }
    }
    if (a->y != (keep ? acts + a->n_layers * n : acts)) memcpy(a->y, keep ? acts + a->n_layers * n : acts, (size_t)n * sizeof(float));
}
/* Workspace of the float32 forms: packed weights (1 layer; the backward: L layers and one layer's
   dW), activations (2; the backward: L+1 inputs and outputs, L conv outputs, dn and dc), then one
   GEMM workspace per thread. */
static lattn_status lattn__tcn_ws(lattn_ctx *ctx, const char *who, const lattn_tcn_args *a, int nthr, int backward, float **buf, size_t *gw) {
    const size_t L = (size_t)a->n_layers, nw = backward ? L + 1 : 1, na = backward ? 2 * L + 3 : 2;
    size_t p1, p2, p3, n;
    *gw = lattn__gemm_ws(a->D, LATTN__MAX(a->D, a->T));
    if (lattn_size_mul(&p1, (size_t)(a->D * a->D), (size_t)a->W) || lattn_size_mul(&p1, p1, nw) ||
        lattn_size_mul(&p2, (size_t)(a->B * a->T), (size_t)a->D) || lattn_size_mul(&p2, p2, na) ||
        lattn_size_mul(&p3, *gw, (size_t)nthr) || lattn_size_add(&n, p1, p2) || lattn_size_add(&n, n, p3))
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    return lattn__alloc_floats(ctx, buf, n, who);
}
LATTN__DEF lattn_status lattn_tcn_chunk(lattn_ctx *ctx, const lattn_tcn_args *a) {
    const char *who = "lattn_tcn_chunk";
    float *buf;
    size_t gw, n;
    int nthr;
    LATTN__TRY(lattn__tcn_check(ctx, who, a, 1));
    if (a->T == 0) return lattn__ok(ctx);
    nthr = lattn__threads(ctx);
    LATTN__TRY(lattn__tcn_ws(ctx, who, a, nthr, 0, &buf, &gw));
    n = (size_t)(a->B * a->T * a->D);
    lattn__tcn_fwd32(nthr, a, 0, buf, buf + a->D * a->D * a->W, buf + a->D * a->D * a->W + n, buf + a->D * a->D * a->W + 2 * n, gw);
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* >>tcn.chunk_backward ------------------------------------------------------------------------------
   the float32 forward keeps every layer's input and conv output; layers in reverse, with G = ∂ℒ/∂out:
     per row (blocks of 256, threads): dn = G ⊙ GELU'(n), dĉ = dn ⊙ γ, dc = (dĉ - mean(dĉ) - ĉ·mean(dĉ ⊙ ĉ))/σ
     sums over the rows in row order (double): dβ = Σ dn, dγ = Σ dn ⊙ ĉ, db = Σ dc
     per tap j (a thread each, batch rows in order): dW_j += X[0:T-s]ᵀ · dc[s:T]    (one GEMM Aᵀ·B)
     per row block: G[p] += Σ_j dc[p + s] · W_jᵀ (one GEMM A·Bᵀ a tap; G is the residual's gradient)
   The same bits for every thread count. */
static void lattn__tcn_bw_rows(int nthr, const lattn_tcn_args *a, int64_t l, const float *G, float *cpre, float *dn, float *dc) {
    const int64_t d = a->D, rows = a->B * a->T, nb = (rows + LATTN__TCN_BLOCK - 1) / LATTN__TCN_BLOCK;
    const lattn_tcn_layer *L = &a->layers[l];
    int64_t w;
    (void)nthr;                          /* without OpenMP */
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < nb; w++) {
        int64_t r, o;
        for (r = w * LATTN__TCN_BLOCK; r < LATTN__MIN(rows, (w + 1) * LATTN__TCN_BLOCK); r++) {
            float *c = cpre + r * d, *n_ = dn + r * d, *e = dc + r * d, inv, mean = lattn__tcn_stats(d, c, &inv), m1 = 0, m2 = 0;
            for (o = 0; o < d; o++) {
                const float ch = (c[o] - mean) * inv, nn = ch * L->ln_w[o] + L->ln_b[o];
                const float gp = 0.5f * (1.0f + erff(nn * 0.70710678118654752f)) + nn * expf(-0.5f * nn * nn) * 0.39894228040143267794f;
                n_[o] = G[r * d + o] * gp;
                e[o] = n_[o] * L->ln_w[o];       /* dĉ */
                m1 += e[o];
                m2 += e[o] * ch;
                c[o] = ch;                       /* ĉ, for dγ */
            }
            m1 /= (float)d;
            m2 /= (float)d;
            for (o = 0; o < d; o++) e[o] = (e[o] - m1 - c[o] * m2) * inv;
        }
    }
}
LATTN__DEF lattn_status lattn_tcn_chunk_backward(lattn_ctx *ctx, const lattn_tcn_args *a, const lattn_tcn_grads *g) {
    const char *who = "lattn_tcn_chunk_backward";
    lattn_tcn_args f;
    float *buf, *wp, *dwt, *acts, *cpre, *G, *dn, *dc, *gws;
    double *sums;
    int64_t d, k, T, L, n, l, nb, w, i, j, o;
    size_t gw;
    int nthr;
    LATTN__TRY(lattn__tcn_check(ctx, who, a, 0));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    d = a->D; k = a->W; T = a->T; L = a->n_layers;
    n = a->B * T * d;
    nthr = lattn__threads(ctx);
    LATTN__TRY(lattn__tcn_ws(ctx, who, a, nthr, 1, &buf, &gw));
    if (lattn__alloc_doubles(ctx, &sums, (size_t)(3 * d), who) != LATTN_OK) { lattn__free(ctx, buf); return LATTN_E_NOMEM; }
    wp = buf;
    dwt = wp + L * k * d * d;            /* k slices [d_in][d_out] of one layer's dW */
    acts = dwt + k * d * d;
    cpre = acts + (L + 1) * n;
    G = acts + L * n;                    /* the forward's output slot, free once the forward is done */
    dn = cpre + L * n;
    dc = dn + n;
    gws = dc + n;
    f = *a;
    f.y = acts + L * n;                  /* the forward's output lands in place */
    if (T > 0) lattn__tcn_fwd32(nthr, &f, 1, wp, acts, cpre, gws, gw);
    if (n > 0 && a->y) memcpy(a->y, f.y, (size_t)n * sizeof(float));
    if (n > 0) memcpy(G, g->dout, (size_t)n * sizeof(float));
    nb = (T + LATTN__TCN_BLOCK - 1) / LATTN__TCN_BLOCK;
    for (l = L - 1; l >= 0; l--) {
        const int64_t dil = (int64_t)1 << l;
        const float *X = acts + l * n, *Wl = wp + l * k * d * d;
        lattn_tcn_layer_grads *lg = g->layers ? &g->layers[l] : NULL;
        lattn__tcn_bw_rows(nthr, a, l, G, cpre + l * n, dn, dc);
        if (lg) {
            memset(sums, 0, (size_t)(3 * d) * sizeof(double));
            for (i = 0; i < a->B * T; i++)
                for (o = 0; o < d; o++) {
                    sums[o] += dn[i * d + o];
                    sums[d + o] += (double)dn[i * d + o] * cpre[l * n + i * d + o];
                    sums[2 * d + o] += dc[i * d + o];
                }
            LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
            for (j = 0; j < k; j++) {
                const int64_t s = (k - 1 - j) * dil;
                float *ws = gws + (size_t)lattn__thread_id() * gw, *dWj = dwt + j * d * d;
                int64_t bb;
                memset(dWj, 0, (size_t)(d * d) * sizeof(float));
                for (bb = 0; bb < a->B && s < T; bb++)
                    lattn__sgemm(LATTN_GEMM_TRANS_A | LATTN_GEMM_ACCUMULATE, d, d, T - s, X + bb * T * d, d, dc + bb * T * d + s * d, d, dWj, d, ws);
            }
            for (o = 0; o < d; o++) {
                lattn__put(lg->db, lg->db64, o, sums[2 * d + o]);
                lattn__put(lg->dln_w, lg->dln_w64, o, sums[d + o]);
                lattn__put(lg->dln_b, lg->dln_b64, o, sums[o]);
                for (i = 0; i < d; i++)
                    for (j = 0; j < k; j++) lattn__put(lg->dw, lg->dw64, (o * d + i) * k + j, dwt[(j * d + i) * d + o]);
            }
        }
        LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
        for (w = 0; w < a->B * nb; w++) {   /* G += Σ_j dc[p + s] · W_jᵀ over the rows p of the block */
            int64_t bb = w / nb, r0 = (w % nb) * LATTN__TCN_BLOCK, r1 = LATTN__MIN(T, r0 + LATTN__TCN_BLOCK), jj;
            float *ws = gws + (size_t)lattn__thread_id() * gw;
            for (jj = 0; jj < k; jj++) {
                const int64_t s = (k - 1 - jj) * dil, hi = LATTN__MIN(r1, T - s);   /* rows p < T - s read dc[p + s] */
                if (r0 < hi)
                    lattn__sgemm(LATTN_GEMM_TRANS_B | LATTN_GEMM_ACCUMULATE, hi - r0, d, d, dc + bb * T * d + (r0 + s) * d, d, Wl + jj * d * d, d,
                                 G + bb * T * d + r0 * d, d, ws);
            }
        }
    }
    for (i = 0; i < n; i++) lattn__put(g->dx, g->dx64, i, G[i]);
    lattn__free(ctx, sums);
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* Streaming: per layer a shift register of the last (k-1)·2^l inputs (oldest first). */
static lattn_status lattn__tcn_step1(lattn_ctx *ctx, const lattn_tcn_args *a) {
    int64_t d, k, b, l, i, j, o;
    size_t sf;
    float *buf, *u, *c, *z;
    LATTN__TRY(lattn__tcn_check(ctx, "lattn_tcn_step", a, 1));
    if (a->T != 1) return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_tcn_step: needs T == 1");
    d = a->D;
    k = a->W;
    LATTN__TRY(lattn_tcn_state_floats(d, k, a->n_layers, &sf));
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, (size_t)(2 * d + d * k), "lattn_tcn_step"));
    u = buf;
    c = u + d;
    z = c + d;
    for (b = 0; b < a->B; b++) {
        float *hist = a->ht + (size_t)b * sf;
        if (a->h0 != a->ht) {
            if (a->h0) memcpy(hist, a->h0 + (size_t)b * sf, sf * sizeof(float));
            else memset(hist, 0, sf * sizeof(float));
        }
        memcpy(u, a->x + b * d, (size_t)d * sizeof(float));
        for (l = 0; l < a->n_layers; l++) {
            const lattn_tcn_layer *L = &a->layers[l];
            int64_t dil = (int64_t)1 << l, R = (k - 1) * dil;
            for (j = 0; j < k; j++) {
                int64_t m = (k - 1 - j) * dil;          /* this tap reads the input m steps back */
                const float *src = m == 0 ? u : hist + (R - m) * d;
                for (i = 0; i < d; i++) z[i * k + j] = src[i];
            }
            for (o = 0; o < d; o++) c[o] = L->b[o] + lattn_vec_dot((size_t)(d * k), L->w + o * d * k, z);
            if (R > 0) {                                 /* shift in the layer's input */
                memmove(hist, hist + d, (size_t)((R - 1) * d) * sizeof(float));
                memcpy(hist + (R - 1) * d, u, (size_t)d * sizeof(float));
            }
            lattn__tcn_post(d, c, L->ln_w, L->ln_b, u, c);
            memcpy(u, c, (size_t)d * sizeof(float));
            hist += R * d;
        }
        memcpy(a->y + b * d, u, (size_t)d * sizeof(float));
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* >>tcn.step -------------------------------------------------------------------------------------
   per layer a shift register of the last (W-1)·2^l inputs; each token through every layer */
LATTN__DEF lattn_status lattn_tcn_step(lattn_ctx *ctx, const lattn_tcn_args *a) {
    int64_t t, b, d;
    size_t sf;
    float *buf;
    lattn_tcn_args s;
    lattn_status st = LATTN_OK;
    if (a && a->T == 1 && a->ht) return lattn__tcn_step1(ctx, a);
    LATTN__TRY(lattn__tcn_check(ctx, "lattn_tcn_step", a, 1));
    d = a->D;
    LATTN__TRY(lattn_tcn_state_floats(d, a->W, a->n_layers, &sf));
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, sf * (size_t)a->B + (size_t)(2 * a->B * d), "lattn_tcn_step"));
    if (a->h0) memcpy(buf, a->h0, sizeof(float) * sf * (size_t)a->B);
    else memset(buf, 0, sizeof(float) * sf * (size_t)a->B);
    s = *a;
    s.T = 1;
    s.h0 = buf;
    s.ht = buf;
    s.x = buf + sf * (size_t)a->B;
    s.y = buf + sf * (size_t)a->B + a->B * d;
    for (t = 0; t < a->T && st == LATTN_OK; t++) {
        for (b = 0; b < a->B; b++) memcpy((float *)s.x + b * d, a->x + (b * a->T + t) * d, sizeof(float) * (size_t)d);
        st = lattn__tcn_step1(ctx, &s);
        for (b = 0; b < a->B; b++) memcpy(a->y + (b * a->T + t) * d, s.y + b * d, sizeof(float) * (size_t)d);
    }
    if (a->ht && st == LATTN_OK) memcpy(a->ht, buf, sizeof(float) * sf * (size_t)a->B);
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

/* The demo model: Linear(d_in -> d), the stack, Linear(d -> 1) on the last token. */
#ifndef LATTN_NO_MODELS
/* The tensor table and arena of a demo model (weights uninitialised), the encoder's views bound. */
static lattn_status lattn__tcn_demo_alloc(lattn_ctx *ctx, const char *who, lattn_tcn_demo *m, const lattn_tcn_demo_config *c) {
    static const char *const layer_names[4] = { "conv.conv.weight", "conv.conv.bias", "norm.weight", "norm.bias" };
    int64_t dims[3], l, i, nt;
    memset(m, 0, sizeof *m);
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: configuration is NULL", who);
    if (c->d_in < 1 || c->D < 1 || c->W < 1 || c->n_layers < 1 || c->n_layers > LATTN_TCN_MAX_LAYERS)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: d_in = %lld, D = %lld, W = %lld, n_layers = %lld (1 .. %d)", who,
                           (long long)c->d_in, (long long)c->D, (long long)c->W, (long long)c->n_layers, LATTN_TCN_MAX_LAYERS);
    dims[0] = c->D;
    dims[1] = LATTN__MAX(c->D, c->d_in);
    dims[2] = c->W + 1;
    LATTN__TRY(lattn__check_count(ctx, who, "weights", 3, dims));
    nt = 4 + 4 * c->n_layers;
    LATTN__TRY(lattn__table_new(ctx, who, nt, 0, &m->tensors));
    for (i = 0; i < nt; i++) {
        lattn_tensor *t = &m->tensors[i];
        l = (i - 2) / 4;
        if (i == 0 || i == 1) snprintf(t->name, sizeof t->name, "embedding.%s", i == 0 ? "weight" : "bias");
        else if (i >= nt - 2) snprintf(t->name, sizeof t->name, "head.%s", i == nt - 2 ? "weight" : "bias");
        else snprintf(t->name, sizeof t->name, "encoder.layers.%lld.%s", (long long)l, layer_names[(i - 2) % 4]);
        t->ndim = i == 0 || i == nt - 2 ? 2 : i >= nt - 2 || (i - 2) % 4 != 0 ? 1 : 3;
        t->shape[0] = i == nt - 2 || i == nt - 1 ? 1 : c->D;
        t->shape[1] = i == 0 ? c->d_in : c->D;
        t->shape[2] = c->W;
    }
    if (lattn__arena_bind(ctx, who, m->tensors, nt, &m->arena, &m->n_params) != LATTN_OK) {
        m->tensors = NULL;                /* released by the bind */
        return LATTN_E_NOMEM;
    }
    m->n_tensors = nt;
    m->cfg = *c;
    for (l = 0; l < c->n_layers; l++) {
        m->layers[l].w = m->tensors[2 + 4 * l].data;
        m->layers[l].b = m->tensors[3 + 4 * l].data;
        m->layers[l].ln_w = m->tensors[4 + 4 * l].data;
        m->layers[l].ln_b = m->tensors[5 + 4 * l].data;
    }
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_tcn_demo_init(lattn_ctx *ctx, lattn_tcn_demo *m, const lattn_tcn_demo_config *c, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    int64_t i;
    if (!m) return lattn__fail(ctx, LATTN_E_NULL, "lattn_tcn_demo_init: model is NULL");
    LATTN__TRY(lattn__tcn_demo_alloc(ctx, "lattn_tcn_demo_init", m, c));
    for (i = 0; i < m->n_tensors; i++) {  /* in state_dict order; a tensor's fan_in is its row length */
        lattn_tensor *t = &m->tensors[i];
        int norm = strstr(t->name, ".norm.") != NULL;
        int64_t fan = i < 2 ? c->d_in : i >= m->n_tensors - 2 ? c->D : c->D * c->W;
        size_t j;
        float bound = (float)(1.0 / sqrt((double)fan));
        if (norm) for (j = 0; j < t->count; j++) t->data[j] = strstr(t->name, "weight") ? 1.0f : 0.0f;
        else lattn_rng_fill_uniform(&r, t->data, t->count, -bound, bound);
    }
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_tcn_demo_init_st(lattn_ctx *ctx, lattn_tcn_demo *m, const lattn_st_file *f, const char *prefix) {
    const char *who = "lattn_tcn_demo_init_st";
    const lattn_st_tensor *emb, *conv;
    lattn_tcn_demo_config c;
    char name[2 * LATTN_NAME_MAX];
    lattn_status st;
    if (!m || !f) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    memset(m, 0, sizeof *m);
    if (!prefix) prefix = "";
    if (strlen(prefix) >= LATTN_NAME_MAX) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: prefix too long", who);
    snprintf(name, sizeof name, "%sembedding.weight", prefix);
    emb = lattn_st_find(f, name);
    snprintf(name, sizeof name, "%sencoder.layers.0.conv.conv.weight", prefix);
    conv = lattn_st_find(f, name);
    if (!emb || emb->ndim != 2 || !conv || conv->ndim != 3)
        return lattn__fail(ctx, LATTN_E_FORMAT, "%s: needs %sembedding.weight [D][d_in] and %sencoder.layers.0.conv.conv.weight [D][D][W]",
                           who, prefix, prefix);
    c.D = emb->shape[0];
    c.d_in = emb->shape[1];
    c.W = conv->shape[2];
    for (c.n_layers = 1; c.n_layers < LATTN_TCN_MAX_LAYERS; c.n_layers++) {
        snprintf(name, sizeof name, "%sencoder.layers.%lld.conv.conv.weight", prefix, (long long)c.n_layers);
        if (!lattn_st_find(f, name)) break;
    }
    if ((st = lattn__tcn_demo_alloc(ctx, who, m, &c)) != LATTN_OK) return lattn__as_format(ctx, st);
    if ((st = lattn__arena_load(ctx, who, m->tensors, m->n_tensors, f, prefix)) != LATTN_OK) {
        lattn_tcn_demo_free(ctx, m);
        return st;
    }
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_tcn_demo_serialize(lattn_ctx *ctx, const lattn_tcn_demo *m, unsigned char **out, size_t *size) {
    const char *who = "lattn_tcn_demo_serialize";
    if (!m || !m->tensors || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    return lattn__arena_serialize(ctx, who, m->tensors, m->n_tensors, NULL, 0, out, size);
}
LATTN__DEF void lattn_tcn_demo_free(lattn_ctx *ctx, lattn_tcn_demo *m) {
    if (!m) return;
    lattn__free(ctx, m->arena);
    lattn__free(ctx, m->tensors);
    memset(m, 0, sizeof *m);
}
LATTN__DEF lattn_tensor *lattn_tcn_demo_tensor(const lattn_tcn_demo *m, const char *name) {
    return m ? lattn__arena_find(m->tensors, m->n_tensors, name) : NULL;
}
#ifndef LATTN_NO_STDIO
LATTN__MODEL_FILES(tcn_demo, lattn_tcn_demo)
#endif
/* The demo model with the encoder in double (form REF) or float32 (CHUNK); the two linear maps
   accumulate in double. */
/* The demo's stack arguments over h (B rows of T tokens). */
static lattn_tcn_args lattn__tcn_demo_args(const lattn_tcn_demo *m, int64_t B, int64_t T) {
    lattn_tcn_args a;
    memset(&a, 0, sizeof a);
    a.B = B;
    a.T = T;
    a.D = m->cfg.D;
    a.W = m->cfg.W;
    a.n_layers = m->cfg.n_layers;
    a.layers = m->layers;
    return a;
}
/* h = x W_inᵀ + b_in for every token, into hf (float) or hd (double). */
static void lattn__tcn_demo_embed(const lattn_tcn_demo *m, int64_t rows, const float *x, float *hf, double *hd) {
    const int64_t d = m->cfg.D, d_in = m->cfg.d_in;
    const float *w_in = m->tensors[0].data, *b_in = m->tensors[1].data;
    int64_t t, o, i;
    for (t = 0; t < rows; t++)
        for (o = 0; o < d; o++) {
            double acc = b_in[o];
            for (i = 0; i < d_in; i++) acc += (double)w_in[o * d_in + i] * x[t * d_in + i];
            lattn__put(hf, hd, t * d + o, acc);
        }
}
static lattn_status lattn__tcn_demo_check(lattn_ctx *ctx, const char *who, const lattn_tcn_demo *m, int64_t B, int64_t T, const float *x,
                                          const void *out, size_t *n) {
    if (!m || !m->tensors || !x || !out) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    if (B < 1 || T < 1) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B and T must be >= 1", who);
    if (lattn_size_mul(n, (size_t)B, (size_t)T) || lattn_size_mul(n, *n, (size_t)m->cfg.D * 2))
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: sizes overflow", who);
    return LATTN_OK;
}
/* forward_ref: everything in double; forward: the stack in float32. */
static lattn_status lattn__tcn_demo_run(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T, const float *x,
                                        float *out, double *out64, lattn_form form) {
    const char *who = form == LATTN_FORM_REF ? "lattn_tcn_demo_forward_ref" : "lattn_tcn_demo_forward";
    lattn_tcn_args a;
    int64_t b, o, d;
    size_t n;
    lattn_status st;
    LATTN__TRY(lattn__tcn_demo_check(ctx, who, m, B, T, x, out, &n));
    d = m->cfg.D;
    a = lattn__tcn_demo_args(m, B, T);
    if (form == LATTN_FORM_REF) {
        double *h;
        const float *w_out = m->tensors[m->n_tensors - 2].data, *b_out = m->tensors[m->n_tensors - 1].data;
        LATTN__TRY(lattn__alloc_doubles(ctx, &h, n, who));
        lattn__tcn_demo_embed(m, B * T, x, NULL, h);
        st = lattn__tcn_ref_d(ctx, who, &a, NULL, h, NULL, h + B * T * d);
        for (b = 0; st == LATTN_OK && b < B; b++) {
            const double *last = h + B * T * d + (b * T + T - 1) * d;
            double acc = b_out[0];
            for (o = 0; o < d; o++) acc += (double)w_out[o] * last[o];
            lattn__put(out, out64, b, acc);
        }
        lattn__free(ctx, h);
    } else {
        float *h;
        const float *w_out = m->tensors[m->n_tensors - 2].data, *b_out = m->tensors[m->n_tensors - 1].data;
        LATTN__TRY(lattn__alloc_floats(ctx, &h, n, who));
        lattn__tcn_demo_embed(m, B * T, x, h, NULL);
        a.x = h;
        a.y = h + B * T * d;
        st = lattn_tcn_chunk(ctx, &a);
        for (b = 0; st == LATTN_OK && b < B; b++) {
            const float *last = a.y + (b * T + T - 1) * d;
            double acc = b_out[0];
            for (o = 0; o < d; o++) acc += (double)w_out[o] * last[o];
            out[b] = (float)acc;
        }
        lattn__free(ctx, h);
    }
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_tcn_demo_forward_ref(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T,
                                                   const float *x, float *out, double *out64) {
    return lattn__tcn_demo_run(ctx, m, B, T, x, out, out64, LATTN_FORM_REF);
}
LATTN__DEF lattn_status lattn_tcn_demo_forward(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T,
                                               const float *x, float *out) {
    return lattn__tcn_demo_run(ctx, m, B, T, x, out, NULL, LATTN_FORM_CHUNK);
}
/* >>tcn.demo_backward ----------------------------------------------------------------------------
   out_b = w_out·y_b[T-1] + b_out:  dw_out = Σ_b dout_b y_b[T-1], db_out = Σ_b dout_b, dy_b[T-1] = dout_b w_out;
   the stack's backward (lattn__tcn_bw_d) to dh; h = x W_inᵀ + b_in: dW_in = Σ dh ⊗ x, db_in = Σ dh, dx = dh W_in. */
LATTN__DEF lattn_status lattn_tcn_demo_backward_ref(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T,
                                                    const float *x, const double *dout, float *grad, double *grad64, float *dx) {
    const char *who = "lattn_tcn_demo_backward_ref";
    lattn_tcn_args a;
    int64_t b, t, o, i, l, d, d_in, nl, L;
    size_t n;
    double *h, *y, *dy, *dh, *dw, *gs;
    const float *w_in, *w_out;
    lattn_status st;
    LATTN__TRY(lattn__tcn_demo_check(ctx, who, m, B, T, x, dout, &n));
    d = m->cfg.D;
    d_in = m->cfg.d_in;
    L = m->cfg.n_layers;
    nl = d * d * m->cfg.W + 3 * d;
    w_in = m->tensors[0].data;
    w_out = m->tensors[m->n_tensors - 2].data;
    a = lattn__tcn_demo_args(m, B, T);
    LATTN__TRY(lattn__alloc_doubles(ctx, &h, 2 * n + (size_t)(L * nl) + m->n_params, who));   /* h, y, dy, dh; layer sums; the arena's */
    y = h + B * T * d;
    dy = y + B * T * d;
    dh = dy + B * T * d;
    dw = dh + B * T * d;
    gs = dw + L * nl;
    lattn__tcn_demo_embed(m, B * T, x, NULL, h);
    st = lattn__tcn_ref_d(ctx, who, &a, NULL, h, NULL, y);
    memset(dy, 0, (size_t)(B * T * d) * sizeof(double));
    memset(gs, 0, m->n_params * sizeof(double));
    for (b = 0; st == LATTN_OK && b < B; b++) {   /* the head */
        const double *last = y + (b * T + T - 1) * d;
        double *dwo = gs + (m->tensors[m->n_tensors - 2].data - m->arena);
        for (o = 0; o < d; o++) {
            dwo[o] += dout[b] * last[o];
            dy[(b * T + T - 1) * d + o] = dout[b] * (double)w_out[o];
        }
        gs[m->tensors[m->n_tensors - 1].data - m->arena] += dout[b];
    }
    if (st == LATTN_OK) st = lattn__tcn_bw_d(ctx, who, &a, NULL, h, NULL, dy, dh, dw);
    for (l = 0; st == LATTN_OK && l < L; l++) {   /* the layers' sums into their tensors */
        const int64_t nw = d * d * m->cfg.W;
        double *p = dw + l * nl;
        double *gw = gs + (m->tensors[2 + 4 * l].data - m->arena), *gb = gs + (m->tensors[3 + 4 * l].data - m->arena);
        double *glw = gs + (m->tensors[4 + 4 * l].data - m->arena), *glb = gs + (m->tensors[5 + 4 * l].data - m->arena);
        for (i = 0; i < nw; i++) gw[i] = p[i];
        for (i = 0; i < d; i++) {
            gb[i] = p[nw + i];
            glw[i] = p[nw + d + i];
            glb[i] = p[nw + 2 * d + i];
        }
    }
    for (t = 0; st == LATTN_OK && t < B * T; t++)   /* the embedding */
        for (o = 0; o < d; o++) {
            const double g = dh[t * d + o];
            gs[m->tensors[1].data - m->arena + o] += g;
            for (i = 0; i < d_in; i++) gs[(m->tensors[0].data - m->arena) + o * d_in + i] += g * (double)x[t * d_in + i];
        }
    for (t = 0; st == LATTN_OK && dx && t < B * T; t++)
        for (i = 0; i < d_in; i++) {
            double acc = 0;
            for (o = 0; o < d; o++) acc += dh[t * d + o] * (double)w_in[o * d_in + i];
            dx[t * d_in + i] = (float)acc;
        }
    for (i = 0; st == LATTN_OK && i < (int64_t)m->n_params; i++) lattn__put(grad, grad64, i, gs[i]);
    lattn__free(ctx, h);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
/* float32: the embedding into h, the stack's backward (its forward's output y on the way), the head
   and the embedding's sums in double over the tokens in order. */
LATTN__DEF lattn_status lattn_tcn_demo_backward(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T,
                                                const float *x, const float *dout, float *grad, float *dx) {
    const char *who = "lattn_tcn_demo_backward";
    lattn_tcn_layer_grads lg[LATTN_TCN_MAX_LAYERS];
    lattn_tcn_args a;
    lattn_tcn_grads g;
    int64_t b, t, o, i, l, d, d_in;
    size_t n;
    float *h, *y, *dy, *dh;
    const float *w_in, *w_out;
    float *gwo, *gbo, *gwi, *gbi;
    lattn_status st;
    LATTN__TRY(lattn__tcn_demo_check(ctx, who, m, B, T, x, dout, &n));
    if (!grad) return lattn__fail(ctx, LATTN_E_NULL, "%s: grad is NULL", who);
    d = m->cfg.D;
    d_in = m->cfg.d_in;
    w_in = m->tensors[0].data;
    w_out = m->tensors[m->n_tensors - 2].data;
    gwi = grad + (m->tensors[0].data - m->arena);
    gbi = grad + (m->tensors[1].data - m->arena);
    gwo = grad + (m->tensors[m->n_tensors - 2].data - m->arena);
    gbo = grad + (m->tensors[m->n_tensors - 1].data - m->arena);
    LATTN__TRY(lattn__alloc_floats(ctx, &h, 2 * n, who));    /* h, y, dy, dh */
    y = h + B * T * d;
    dy = y + B * T * d;
    dh = dy + B * T * d;
    lattn__tcn_demo_embed(m, B * T, x, h, NULL);
    memset(dy, 0, (size_t)(B * T * d) * sizeof(float));
    for (b = 0; b < B; b++)
        for (o = 0; o < d; o++) dy[(b * T + T - 1) * d + o] = dout[b] * w_out[o];
    a = lattn__tcn_demo_args(m, B, T);
    a.x = h;
    a.y = y;
    memset(&g, 0, sizeof g);
    g.dout = dy;
    g.dx = dh;
    g.layers = lg;
    for (l = 0; l < m->cfg.n_layers; l++) {
        memset(&lg[l], 0, sizeof lg[l]);
        lg[l].dw = grad + (m->tensors[2 + 4 * l].data - m->arena);
        lg[l].db = grad + (m->tensors[3 + 4 * l].data - m->arena);
        lg[l].dln_w = grad + (m->tensors[4 + 4 * l].data - m->arena);
        lg[l].dln_b = grad + (m->tensors[5 + 4 * l].data - m->arena);
    }
    st = lattn_tcn_chunk_backward(ctx, &a, &g);
    if (st == LATTN_OK) {
        double s = 0;
        for (o = 0; o < d; o++) {                               /* the head */
            double acc = 0;
            for (b = 0; b < B; b++) acc += (double)dout[b] * y[(b * T + T - 1) * d + o];
            gwo[o] = (float)acc;
        }
        for (b = 0; b < B; b++) s += dout[b];
        gbo[0] = (float)s;
        for (o = 0; o < d; o++) {                               /* the embedding */
            double acc = 0;
            for (t = 0; t < B * T; t++) acc += dh[t * d + o];
            gbi[o] = (float)acc;
            for (i = 0; i < d_in; i++) {
                for (acc = 0, t = 0; t < B * T; t++) acc += (double)dh[t * d + o] * x[t * d_in + i];
                gwi[o * d_in + i] = (float)acc;
            }
        }
        for (t = 0; dx && t < B * T; t++)
            for (i = 0; i < d_in; i++) {
                double acc = 0;
                for (o = 0; o < d; o++) acc += (double)dh[t * d + o] * w_in[o * d_in + i];
                dx[t * d_in + i] = (float)acc;
            }
    }
    lattn__free(ctx, h);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>linattn implementation                                                                         */
/* ================================================================================================ */
LATTN__DEF int64_t lattn_fmap_width(lattn_fmap f, int64_t K) {
    if (f != LATTN_FMAP_HEDGEHOG) return K;
    return K > INT64_MAX / 2 ? INT64_MAX : 2 * K;      /* saturates: a size check then refuses it */
}
/* RetNet's ln γ_h = ln(1 - 2^(-5-h)) in double (1 - 2^(-5-h) is exact). */
static double lattn__retnet_lg(int64_t h) { return log(1.0 - ldexp(1.0, (int)(-5 - LATTN__MIN(h, 200)))); }
LATTN__DEF void lattn_retention_decay(int64_t H, float *g_gamma) {
    int64_t h;
    for (h = 0; g_gamma && h < H; h++) g_gamma[h] = (float)lattn__retnet_lg(h);
}

/* The normaliser's epsilon: 0 means the default 1e-6. */
static float lattn__la_eps(const lattn_la_args *a) { return a->eps > 0.0f ? a->eps : 1e-6f; }

/* Gate kinds: none (plain linear attention), one gate per head (g, g_gamma), one per key (gk). */
enum { LATTN__GATE_NONE = 0, LATTN__GATE_HEAD = 1, LATTN__GATE_KEY = 2 };
static int lattn__la_gate_kind(const lattn_la_args *a) {
    return a->gk ? LATTN__GATE_KEY : (a->g || a->g_gamma || a->retnet_decay) ? LATTN__GATE_HEAD : LATTN__GATE_NONE;
}
/* The clamped log gate of (token, head, key i) in double (the float inputs widened, or RetNet's
   decay); 0 without gates. The fast forms round it to float. */
static double lattn__la_gate(const lattn_la_args *a, int64_t tok, int64_t h, int64_t i) {
    double g = a->gk ? a->gk[(tok * a->H + h) * a->K + i] : a->g ? a->g[tok * a->H + h] : a->g_gamma ? a->g_gamma[h]
             : a->retnet_decay ? lattn__retnet_lg(h) : 0.0;
    return LATTN__MAX(g, (double)LATTN_LOG_GATE_MIN);
}

/* The key map's weights: its own (untied, fmap_wk) or the query's (tied). */
static void lattn__fmap_key(const lattn_la_args *a, const float **w, const float **b) {
    *w = a->fmap_wk ? a->fmap_wk : a->fmap_w;
    *b = a->fmap_wk ? a->fmap_bk : a->fmap_b;
}

/* φ(x) for one head row, in double (fast forms call it too: the map is O(K) or O(K²) per token,
   against O(K·V) for the mixer, and double costs nothing in accuracy). */
static void lattn__fmap_row(lattn_fmap f, int64_t K, const float *x, const float *W, const float *b, double *out) {
    int64_t i, j;
    switch (f) {
    case LATTN_FMAP_RELU:
        for (i = 0; i < K; i++) out[i] = x[i] > 0 ? (double)x[i] : 0.0;
        break;
    case LATTN_FMAP_ELU1:
        for (i = 0; i < K; i++) out[i] = x[i] > 0 ? (double)x[i] + 1.0 : exp((double)x[i]);
        break;
    case LATTN_FMAP_HADAMARD:                    /* (x W1ᵀ + b1) ⊙ (x W2ᵀ + b2) */
        for (i = 0; i < K; i++) {
            double y1 = b[i], y2 = b[K + i];
            for (j = 0; j < K; j++) { y1 += (double)W[i * K + j] * x[j]; y2 += (double)W[(K + i) * K + j] * x[j]; }
            out[i] = y1 * y2;
        }
        break;
    case LATTN_FMAP_HEDGEHOG: {                  /* softmax([2y, -2y]), y = x Wᵀ + b */
        double mx = -HUGE_VAL, sum = 0;
        for (i = 0; i < K; i++) {
            double y = b[i];
            for (j = 0; j < K; j++) y += (double)W[i * K + j] * x[j];
            out[i] = 2 * y;
            out[K + i] = -2 * y;
            mx = LATTN__MAX(mx, LATTN__MAX(out[i], out[K + i]));
        }
        for (i = 0; i < 2 * K; i++) { out[i] = exp(out[i] - mx); sum += out[i]; }
        for (i = 0; i < 2 * K; i++) out[i] /= sum;
        break;
    }
    default:
        for (i = 0; i < K; i++) out[i] = x[i];
        break;
    }
}

/* Validation shared by every form; fills the derived sizes. */
typedef struct lattn__la_dims { int64_t n, Kf; float s; double sd; int gate; } lattn__la_dims;
static lattn_status lattn__la_check_in(lattn_ctx *ctx, const char *who, const lattn_la_args *a, lattn__la_dims *dm) {
    int64_t d[4];
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    LATTN__TRY(lattn__check_seqs(ctx, who, a->B, a->T, a->offsets, a->n_seqs, &dm->n));
    if (a->H < 1 || a->K < 1 || a->V < 1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: H = %lld, K = %lld, V = %lld (must be >= 1)", who,
                           (long long)a->H, (long long)a->K, (long long)a->V);
    if ((unsigned)a->fmap > (unsigned)LATTN_FMAP_HEDGEHOG)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: unknown feature map %d", who, (int)a->fmap);
    if ((a->fmap == LATTN_FMAP_HADAMARD || a->fmap == LATTN_FMAP_HEDGEHOG) && (!a->fmap_w || !a->fmap_b))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: feature map needs fmap_w and fmap_b", who);
    if (a->T > 0 && (!a->q || !a->k || !a->v))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: q, k or v is NULL", who);
    if (!(a->scale == a->scale) || a->scale == HUGE_VAL || a->scale == -HUGE_VAL)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: scale is not finite", who);
    if (a->normalize && !(a->eps >= 0.0f && a->eps < HUGE_VALF))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: eps must be finite and >= 0", who);
    dm->Kf = lattn_fmap_width(a->fmap, a->K);
    if ((a->gk != NULL) + (a->g != NULL) + (a->g_gamma != NULL) + (a->retnet_decay != 0) > 1 || (unsigned)a->retnet_decay > 1u)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: set at most one of gk, g, g_gamma and retnet_decay (0 or 1)", who);
    if ((a->fmap_wk != NULL) != (a->fmap_bk != NULL) || (a->fmap_wk && a->fmap != LATTN_FMAP_HADAMARD && a->fmap != LATTN_FMAP_HEDGEHOG))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: fmap_wk and fmap_bk come together, with a hadamard or hedgehog map", who);
    if (a->gk && dm->Kf != a->K)
        return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: per-key gates need a feature map of width K", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->H;
    d[3] = LATTN__MAX(dm->Kf, lattn__sat_add(a->V, 1));
    LATTN__TRY(lattn__check_count(ctx, who, "q/k/v", 4, d));
    d[0] = dm->n;
    d[1] = a->H;
    d[2] = dm->Kf;
    d[3] = a->V + 1;
    LATTN__TRY(lattn__check_count(ctx, who, "state", 4, d));
    if (a->T > 0) {                      /* _parallel keeps a T x T score block */
        d[0] = a->T;
        d[1] = lattn__sat_add(a->T, dm->Kf + a->V + 1);
        LATTN__TRY(lattn__check_count(ctx, who, "scores", 2, d));
    }
    LATTN__TRY(lattn__check_gates(ctx, who, a->gk ? a->gk : a->g ? a->g : a->g_gamma,
                                  a->gk ? a->B * a->T * a->H * a->K : a->g ? a->B * a->T * a->H : a->H));
    dm->sd = a->scale != 0.0 ? a->scale : 1.0 / sqrt((double)dm->Kf);
    dm->s = (float)dm->sd;
    dm->gate = lattn__la_gate_kind(a);
    return LATTN_OK;
}
/* The inputs, and the output o of a forward form. */
static lattn_status lattn__la_check(lattn_ctx *ctx, const char *who, const lattn_la_args *a, lattn__la_dims *dm) {
    LATTN__TRY(lattn__la_check_in(ctx, who, a, dm));
    if (a->T > 0 && !a->o) return lattn__fail(ctx, LATTN_E_NULL, "%s: o is NULL", who);
    return LATTN_OK;
}

/* >>linattn.ref ----------------------------------------------------------------------------------
   S_t = diag(α_t) S_{t-1} + φ(k_t) v_tᵀ,  o_t = s S_tᵀ φ(q_t)  (z_t likewise when normalised),
   token by token in double */
/* --- _ref: the recurrence, token by token, in double ------------------------------------------- */
LATTN__DEF lattn_status lattn_la_ref(lattn_ctx *ctx, const lattn_la_args *a) {
    lattn__la_dims dm;
    int64_t sq, h, t, i, j, H, K, V, Kf;
    double *S, *z, *fq, *fk, *o;
    const float *kw, *kb;
    LATTN__TRY(lattn__la_check(ctx, "lattn_la_ref", a, &dm));
    lattn__fmap_key(a, &kw, &kb);
    if (a->T > 0 && !a->o) return lattn__fail(ctx, LATTN_E_NULL, "lattn_la_ref: o is NULL");
    H = a->H;
    K = a->K;
    V = a->V;
    Kf = dm.Kf;
    LATTN__TRY(lattn__alloc_doubles(ctx, &S, (size_t)(Kf * V + 3 * Kf + V), "lattn_la_ref"));
    z = S + Kf * V;
    fq = z + Kf;
    fk = fq + Kf;
    o = fk + Kf;
    for (sq = 0; sq < dm.n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (h = 0; h < H; h++) {
            int64_t sidx = (sq * H + h) * Kf;
            for (i = 0; i < Kf * V; i++) S[i] = a->h0 ? (double)a->h0[sidx * V + i] : 0.0;
            for (i = 0; i < Kf; i++) z[i] = a->z0 ? (double)a->z0[sidx + i] : 0.0;
            for (t = 0; t < len; t++) {
                int64_t row = (tok0 + t) * H + h;
                double den = 0;
                lattn__fmap_row(a->fmap, K, a->q + row * K, a->fmap_w, a->fmap_b, fq);
                lattn__fmap_row(a->fmap, K, a->k + row * K, kw, kb, fk);
                for (i = 0; i < Kf; i++) {                       /* S = α S + φk vᵀ, z = α z + φk */
                    double al = dm.gate ? exp(lattn__la_gate(a, tok0 + t, h, i)) : 1.0;
                    for (j = 0; j < V; j++) S[i * V + j] = al * S[i * V + j] + fk[i] * (double)a->v[row * V + j];
                    z[i] = al * z[i] + fk[i];
                }
                for (j = 0; j < V; j++) o[j] = 0;
                for (i = 0; i < Kf; i++) {                       /* o = Sᵀ (s φq) */
                    double qi = dm.sd * fq[i];
                    for (j = 0; j < V; j++) o[j] += qi * S[i * V + j];
                    den += qi * z[i];
                }
                for (j = 0; j < V; j++) {
                    double oj = a->normalize ? o[j] / (den + (double)lattn__la_eps(a)) : o[j];
                    a->o[row * V + j] = (float)oj;
                    if (a->o64) a->o64[row * V + j] = oj;
                }
            }
            for (i = 0; i < Kf * V; i++) {
                if (a->ht) a->ht[sidx * V + i] = (float)S[i];
                if (a->ht64) a->ht64[sidx * V + i] = S[i];
            }
            for (i = 0; a->normalize && i < Kf; i++) {
                if (a->zt) a->zt[sidx + i] = (float)z[i];
                if (a->zt64) a->zt64[sidx + i] = z[i];
            }
        }
    }
    lattn__free(ctx, S);
    return lattn__ok(ctx);
}

/* >>linattn.ref_backward ---------------------------------------------------------------------------
   t = T-1 .. 0 with U = ∂ℒ/∂S_t (starting from dht):  U += s φ(q_t) dout_tᵀ;  dφ(q_t) = s S_t dout_t;
   dφ(k_t) = U v_t;  dv_t = Uᵀ φ(k_t);  dgk_t[i] = α_t[i] Σ_j U[i][j] S_{t-1}[i][j];  U = diag(α_t) U;
   and dh0 = U at the end (spec gla_laplace.md §5.7); normalised, o = num / den adds the key sum's
   U_z the same way; dq, dk through the feature map, with its weights' gradients */
/* φ'(x) of the element-wise maps. */
static double lattn__fmap_deriv(lattn_fmap f, float x) {
    if (f == LATTN_FMAP_RELU) return x > 0 ? 1.0 : 0.0;
    if (f == LATTN_FMAP_ELU1) return x > 0 ? 1.0 : exp((double)x);
    return 1.0;
}
/* The gradient dy of the pre-activations of a map with weights (hadamard: y1, y2, 2K values;
   hedgehog: y, K values) from dφ, into tmp[0 .. nw) (tmp: 3K doubles of scratch). */
static void lattn__fmap_dy(lattn_fmap f, int64_t K, const float *x, const float *W, const float *b, const double *dphi, double *tmp) {
    int64_t i, j;
    if (f == LATTN_FMAP_HADAMARD) {      /* φ = y1 ⊙ y2:  dy1 = dφ ⊙ y2, dy2 = dφ ⊙ y1 */
        for (i = 0; i < K; i++) {
            double y1 = b[i], y2 = b[K + i];
            for (j = 0; j < K; j++) {
                y1 += (double)W[i * K + j] * x[j];
                y2 += (double)W[(K + i) * K + j] * x[j];
            }
            tmp[i] = dphi[i] * y2;
            tmp[K + i] = dphi[i] * y1;
        }
    } else {                             /* φ = softmax(l), l = [2y, -2y]:  dl = φ ⊙ (dφ - φ·dφ), dy = 2 dl₁ - 2 dl₂ */
        double *phi = tmp + K, dot = 0;
        lattn__fmap_row(f, K, x, W, b, phi);
        for (i = 0; i < 2 * K; i++) dot += phi[i] * dphi[i];
        for (i = 0; i < K; i++) tmp[i] = 2.0 * (phi[i] * (dphi[i] - dot) - phi[K + i] * (dphi[K + i] - dot));
    }
}
/* Rows of fmap_w (the pre-activations a map with weights has): 2K, K, or 0. */
static int64_t lattn__fmap_rows(lattn_fmap f, int64_t K) {
    return f == LATTN_FMAP_HADAMARD ? 2 * K : f == LATTN_FMAP_HEDGEHOG ? K : 0;
}
/* The backward of one row of the feature map: dx = (∂φ/∂x)ᵀ dφ, and the map's weight gradients
   summed into dW, db (hadamard: [2][K][K], [2][K]; hedgehog: [K][K], [K]). */
static void lattn__fmap_back(lattn_fmap f, int64_t K, const float *x, const float *W, const float *b, const double *dphi,
                             double *dx, double *dW, double *db, double *tmp) {
    int64_t i, j;
    if (f != LATTN_FMAP_HADAMARD && f != LATTN_FMAP_HEDGEHOG) {
        for (i = 0; i < K; i++) dx[i] = dphi[i] * lattn__fmap_deriv(f, x[i]);
        return;
    }
    lattn__fmap_dy(f, K, x, W, b, dphi, tmp);
    for (j = 0; j < K; j++) dx[j] = 0;
    for (i = 0; i < lattn__fmap_rows(f, K); i++) {   /* rows of W and their dy */
        for (j = 0; j < K; j++) {
            dx[j] += (double)W[i * K + j] * tmp[i];
            dW[i * K + j] += tmp[i] * (double)x[j];
        }
        db[i] += tmp[i];
    }
}
LATTN__DEF lattn_status lattn_la_ref_backward(lattn_ctx *ctx, const lattn_la_args *a, const lattn_la_grads *g) {
    const char *who = "lattn_la_ref_backward";
    lattn__la_dims dm;
    int64_t sq, h, t, i, j, H, K, V, Kf, nw, maxlen = 0;
    double *St, *Zt, *U, *Uz, *fq, *fk, *dq, *dk, *dv, *dx, *tmp, *dwq, *dbq, *dwk, *dbk;
    const float *kw, *kb;
    size_t n;
    LATTN__TRY(lattn__la_check_in(ctx, who, a, &dm));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    lattn__fmap_key(a, &kw, &kb);
    H = a->H;
    K = a->K;
    V = a->V;
    Kf = dm.Kf;
    nw = lattn__fmap_rows(a->fmap, K);
    for (sq = 0; sq < dm.n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        maxlen = LATTN__MAX(maxlen, len);
    }
    if (lattn_size_mul(&n, (size_t)(maxlen + 2), (size_t)(Kf * V + Kf)) != LATTN_OK ||
        lattn_size_add(&n, n, (size_t)(6 * Kf + 2 * K + V + 3 * K + 2 * nw * (K + 1))) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the states of one head overflow", who);
    LATTN__TRY(lattn__alloc_doubles(ctx, &St, n, who));
    Zt = St + (maxlen + 1) * Kf * V;     /* St[t] = S_{t-1}, Zt[t] = z_{t-1}: [0] = h0, z0; [len] = the final ones */
    U = Zt + (maxlen + 1) * Kf;
    Uz = U + Kf * V;
    fq = Uz + Kf;
    fk = fq + Kf;
    dq = fk + Kf;                        /* dφ(q), dφ(k) [K'] */
    dk = dq + Kf;
    dv = dk + Kf;
    dx = dv + V;                         /* dq or dk through the map [K] */
    tmp = dx + K;                        /* the map's scratch [3K] */
    dwq = tmp + 3 * K;                   /* the maps' weight gradients */
    dbq = dwq + nw * K;
    dwk = dbq + nw;
    dbk = dwk + nw * K;
    memset(dwq, 0, (size_t)(2 * nw * (K + 1)) * sizeof(double));
    for (sq = 0; sq < dm.n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (h = 0; h < H; h++) {
            int64_t sidx = (sq * H + h) * Kf;
            for (i = 0; i < Kf * V; i++) St[i] = a->h0 ? (double)a->h0[sidx * V + i] : 0.0;
            for (i = 0; i < Kf; i++) Zt[i] = a->z0 && a->normalize ? (double)a->z0[sidx + i] : 0.0;
            for (t = 0; t < len; t++) {          /* forward: every state kept */
                int64_t row = (tok0 + t) * H + h;
                lattn__fmap_row(a->fmap, K, a->k + row * K, kw, kb, fk);
                for (i = 0; i < Kf; i++) {
                    double al = dm.gate ? exp(lattn__la_gate(a, tok0 + t, h, i)) : 1.0;
                    for (j = 0; j < V; j++)
                        St[((t + 1) * Kf + i) * V + j] = al * St[(t * Kf + i) * V + j] + fk[i] * (double)a->v[row * V + j];
                    Zt[(t + 1) * Kf + i] = al * Zt[t * Kf + i] + fk[i];
                }
            }
            for (i = 0; i < Kf * V; i++) U[i] = g->dht ? (double)g->dht[sidx * V + i] : 0.0;
            for (i = 0; i < Kf; i++) Uz[i] = g->dzt && a->normalize ? (double)g->dzt[sidx + i] : 0.0;
            for (t = len - 1; t >= 0; t--) {     /* backward */
                int64_t row = (tok0 + t) * H + h;
                const double *S0 = St + t * Kf * V, *S1 = St + (t + 1) * Kf * V, *z0 = Zt + t * Kf, *z1 = Zt + (t + 1) * Kf;
                const float *dO = g->dout + row * V, *vt = a->v + row * V;
                double den = 0, dden = 0, dgh = 0;
                lattn__fmap_row(a->fmap, K, a->q + row * K, a->fmap_w, a->fmap_b, fq);
                lattn__fmap_row(a->fmap, K, a->k + row * K, kw, kb, fk);
                for (j = 0; j < V; j++) dv[j] = (double)dO[j];   /* ∂ℒ/∂(s Sᵀφq), divided below when normalised */
                if (a->normalize) {              /* o = num / den:  dnum = do / den, dden = -do·num / den² */
                    for (i = 0; i < Kf; i++) den += dm.sd * fq[i] * z1[i];
                    den += (double)lattn__la_eps(a);
                    for (j = 0; j < V; j++) {
                        double num = 0;
                        for (i = 0; i < Kf; i++) num += dm.sd * fq[i] * S1[i * V + j];
                        dden -= (double)dO[j] * num / (den * den);
                        dv[j] /= den;
                    }
                }
                for (i = 0; i < Kf; i++) {       /* U += s φq dnumᵀ, Uz += s φq dden; dφq = s S dnum + s z dden */
                    double acc = 0;
                    for (j = 0; j < V; j++) {
                        U[i * V + j] += dm.sd * fq[i] * dv[j];
                        acc += S1[i * V + j] * dv[j];
                    }
                    Uz[i] += dm.sd * fq[i] * dden;
                    dq[i] = dm.sd * (acc + z1[i] * dden);
                }
                for (j = 0; j < V; j++) dv[j] = 0;
                for (i = 0; i < Kf; i++) {       /* dφk = U v + Uz, dv = Uᵀ φk, the gates, U = diag(α) U */
                    double acc = 0, dgi = 0;
                    for (j = 0; j < V; j++) {
                        acc += U[i * V + j] * (double)vt[j];
                        dv[j] += U[i * V + j] * fk[i];
                    }
                    dk[i] = acc + Uz[i];
                    if (dm.gate) {
                        double lg = a->gk ? (double)a->gk[row * K + i] : a->g ? (double)a->g[row] : 0.0;
                        double al = exp(lattn__la_gate(a, tok0 + t, h, i));
                        for (j = 0; j < V; j++) dgi += U[i * V + j] * S0[i * V + j];
                        dgi = lg < (double)LATTN_LOG_GATE_MIN ? 0.0 : al * (dgi + Uz[i] * z0[i]);   /* a clamped gate passes nothing */
                        for (j = 0; j < V; j++) U[i * V + j] *= al;
                        Uz[i] *= al;
                    }
                    if (a->gk) lattn__put(g->dgk, g->dgk64, row * K + i, dgi);
                    dgh += dgi;
                }
                for (j = 0; j < V; j++) lattn__put(g->dv, g->dv64, row * V + j, dv[j]);
                if (a->g) lattn__put(g->dg, g->dg64, row, dgh);
                lattn__fmap_back(a->fmap, K, a->q + row * K, a->fmap_w, a->fmap_b, dq, dx, dwq, dbq, tmp);
                for (i = 0; i < K; i++) lattn__put(g->dq, g->dq64, row * K + i, dx[i]);
                lattn__fmap_back(a->fmap, K, a->k + row * K, kw, kb, dk, dx, a->fmap_wk ? dwk : dwq, a->fmap_wk ? dbk : dbq, tmp);
                for (i = 0; i < K; i++) lattn__put(g->dk, g->dk64, row * K + i, dx[i]);
            }
            for (i = 0; i < Kf * V; i++) lattn__put(g->dh0, g->dh064, sidx * V + i, U[i]);
            for (i = 0; a->normalize && i < Kf; i++) lattn__put(g->dz0, g->dz064, sidx + i, Uz[i]);
        }
    }
    for (i = 0; i < nw * K; i++) {
        lattn__put(g->dfmap_w, g->dfmap_w64, i, dwq[i]);
        if (a->fmap_wk) lattn__put(g->dfmap_wk, g->dfmap_wk64, i, dwk[i]);
    }
    for (i = 0; i < nw; i++) {
        lattn__put(g->dfmap_b, g->dfmap_b64, i, dbq[i]);
        if (a->fmap_wk) lattn__put(g->dfmap_bk, g->dfmap_bk64, i, dbk[i]);
    }
    lattn__free(ctx, St);
    return lattn__ok(ctx);
}

/* The fast forms read φ(q), φ(k) as float rows [tokens][H][K']: the inputs themselves for the
   identity map, else a mapped copy (the copy is the only workspace that grows with T). */
typedef struct lattn__la_in { const float *q, *k; float *buf; } lattn__la_in;
static lattn_status lattn__la_map(lattn_ctx *ctx, const lattn_la_args *a, const lattn__la_dims *dm,
                                  lattn__la_in *in, const char *who) {
    int64_t r, rows = a->B * a->T * a->H;
    int nthr = lattn__threads(ctx);
    double *tmp;
    const float *kw, *kb;
    lattn__fmap_key(a, &kw, &kb);
    in->q = a->q;
    in->k = a->k;
    in->buf = NULL;
    if (a->fmap == LATTN_FMAP_IDENTITY || a->T == 0) return LATTN_OK;
    /* both maps, then one row of doubles per thread */
    LATTN__TRY(lattn__alloc_floats(ctx, &in->buf, (size_t)(2 * rows * dm->Kf + 2 * dm->Kf * nthr), who));
    tmp = (double *)(void *)(in->buf + 2 * rows * dm->Kf);
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (r = 0; r < 2 * rows; r++) {
        float *dst = in->buf + r * dm->Kf;
        double *row = tmp + (size_t)lattn__thread_id() * (size_t)dm->Kf;
        int64_t i;
        const int key = r >= rows;
        lattn__fmap_row(a->fmap, a->K, (key ? a->k : a->q) + (r % rows) * a->K, key ? kw : a->fmap_w, key ? kb : a->fmap_b, row);
        for (i = 0; i < dm->Kf; i++) dst[i] = (float)row[i];
    }
    in->q = in->buf;
    in->k = in->buf + rows * dm->Kf;
    return LATTN_OK;
}

/* --- _step: one token; S += φk vᵀ and o += (s φq_i) S_i fused in one pass over each state row ---- */
static lattn_status lattn__la_step1(lattn_ctx *ctx, const lattn_la_args *a) {
    lattn__la_dims dm;
    lattn__la_in in;
    int64_t b, h, i, j, H, V, Kf;
    LATTN__TRY(lattn__la_check(ctx, "lattn_la_step", a, &dm));
    H = a->H;
    V = a->V;
    Kf = dm.Kf;
    LATTN__TRY(lattn__la_map(ctx, a, &dm, &in, "lattn_la_step"));
    for (b = 0; b < a->B; b++)
        for (h = 0; h < H; h++) {
            int64_t row = b * H + h;
            const float *q = in.q + row * Kf, *k = in.k + row * Kf, *v = a->v + row * V;
            float *S = a->ht + row * Kf * V, *o = a->o + row * V, den = 0;
            float alh = dm.gate == LATTN__GATE_HEAD ? expf((float)lattn__la_gate(a, b, h, 0)) : 1.0f;   /* per head: once */
            if (a->h0 != a->ht) {
                if (a->h0) memcpy(S, a->h0 + row * Kf * V, (size_t)(Kf * V) * sizeof(float));
                else memset(S, 0, (size_t)(Kf * V) * sizeof(float));
            }
            for (j = 0; j < V; j++) o[j] = 0.0f;
            for (i = 0; i < Kf; i++) {
                float *Si = S + i * V, qi = dm.s * q[i], al = dm.gate == LATTN__GATE_KEY ? expf((float)lattn__la_gate(a, b, h, i)) : alh;
                lattn__vf vk = lattn__vset1(k[i]), vq = lattn__vset1(qi), va = lattn__vset1(al);
                for (j = 0; j + LATTN__VW <= V; j += LATTN__VW) {
                    lattn__vf sv = lattn__vfma(vk, lattn__vload(v + j), lattn__vmul(va, lattn__vload(Si + j)));
                    lattn__vstore(Si + j, sv);
                    lattn__vstore(o + j, lattn__vfma(vq, sv, lattn__vload(o + j)));
                }
                for (; j < V; j++) { Si[j] = k[i] * v[j] + al * Si[j]; o[j] += qi * Si[j]; }
            }
            if (a->normalize) {
                float *z = a->zt + row * Kf;
                for (i = 0; i < Kf; i++) {
                    float al = dm.gate == LATTN__GATE_KEY ? expf((float)lattn__la_gate(a, b, h, i)) : alh;
                    z[i] = al * (a->z0 ? a->z0[row * Kf + i] : 0.0f) + k[i];
                    den += dm.s * q[i] * z[i];
                }
                for (j = 0; j < V; j++) o[j] /= den + lattn__la_eps(a);
            }
        }
    lattn__free(ctx, in.buf);
    return lattn__ok(ctx);
}

/* >>linattn.step ---------------------------------------------------------------------------------
   token by token: S = diag(α) S + φ(k) vᵀ, o = s Sᵀ φ(q), the state in place */
/* --- decode: _step over every token of every sequence ------------------------------------------ */
LATTN__DEF lattn_status lattn_la_step(lattn_ctx *ctx, const lattn_la_args *a) {
    lattn__la_dims dm;
    int64_t sq, t, HS, HZ;
    float *S;
    lattn_status st = LATTN_OK;
    if (a && a->T == 1 && !a->offsets && a->ht && (!a->normalize || a->zt)) return lattn__la_step1(ctx, a);
    LATTN__TRY(lattn__la_check(ctx, "lattn_la_step", a, &dm));
    HS = a->H * dm.Kf * a->V;
    HZ = a->H * dm.Kf;
    LATTN__TRY(lattn__alloc_floats(ctx, &S, (size_t)(HS + HZ), "lattn_la_step"));
    for (sq = 0; sq < dm.n && st == LATTN_OK; sq++) {
        int64_t tok0, len;
        lattn_la_args s = *a;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        if (a->h0) memcpy(S, a->h0 + sq * HS, sizeof(float) * (size_t)HS); else memset(S, 0, sizeof(float) * (size_t)HS);
        if (a->z0) memcpy(S + HS, a->z0 + sq * HZ, sizeof(float) * (size_t)HZ); else memset(S + HS, 0, sizeof(float) * (size_t)HZ);
        s.B = 1;
        s.T = 1;
        s.offsets = NULL;
        s.n_seqs = 0;
        s.h0 = S;
        s.ht = S;
        s.z0 = S + HS;
        s.zt = S + HS;
        for (t = 0; t < len && st == LATTN_OK; t++) {
            int64_t tok = tok0 + t;
            s.q = a->q + tok * a->H * a->K;
            s.k = a->k + tok * a->H * a->K;
            s.v = a->v + tok * a->H * a->V;
            s.o = a->o + tok * a->H * a->V;
            if (a->gk) s.gk = a->gk + tok * a->H * a->K;
            if (a->g) s.g = a->g + tok * a->H;
            st = lattn__la_step1(ctx, &s);
        }
        if (a->ht) memcpy(a->ht + sq * HS, S, sizeof(float) * (size_t)HS);
        if (a->zt && a->normalize) memcpy(a->zt + sq * HZ, S + HS, sizeof(float) * (size_t)HZ);
    }
    lattn__free(ctx, S);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

/* >>linattn.parallel -----------------------------------------------------------------------------
   O = (s·tril(ΦqΦkᵀ) ⊙ e^{G_r - G_c}) V + s (Φq ⊙ e^G) S0 over the whole sequence */
/* --- _parallel: O = (s·tril(ΦqΦkᵀ) ⊙ M)V + s·(Φq ⊙ e^G) S0 per head, on the SGEMM kernel -------
   G_r = Σ_{τ<=r} gate_τ over the whole sequence (float32), M[r][c] = e^{G_r - G_c}: a teaching form
   for moderate T (spec §5.2: the global cumsum loses relative precision for long, gated T). Per-key
   gates cannot leave the K-contraction, so their scores are summed element by element. */
LATTN__DEF lattn_status lattn_la_parallel(lattn_ctx *ctx, const lattn_la_args *a) {
    lattn__la_dims dm;
    lattn__la_in in;
    int64_t w, H, V, Kf, Kg, Tmax = 0, sq;
    int nthr;
    size_t per, gw;
    float *ws;
    lattn_status st;
    LATTN__TRY(lattn__la_check(ctx, "lattn_la_parallel", a, &dm));
    H = a->H;
    V = a->V;
    Kf = dm.Kf;
    Kg = dm.gate == LATTN__GATE_KEY ? Kf : 1;
    for (sq = 0; sq < dm.n; sq++) { int64_t t0, len; lattn__seq(a->offsets, a->T, sq, &t0, &len); Tmax = LATTN__MAX(Tmax, len); }
    nthr = lattn__threads(ctx);
    gw = LATTN__MAX(lattn__gemm_ws(Tmax, Kf), LATTN__MAX(lattn__gemm_ws(V, Tmax), lattn__gemm_ws(V, Kf)));
    per = (size_t)(Tmax * Tmax + 2 * Tmax * Kf + Tmax * Kg) + gw;   /* scores, s·φq, decayed φk, G, packing */
    LATTN__TRY(lattn__la_map(ctx, a, &dm, &in, "lattn_la_parallel"));
    if ((st = lattn__alloc_floats(ctx, &ws, per * (size_t)nthr, "lattn_la_parallel")) != LATTN_OK) {
        lattn__free(ctx, in.buf);
        return st;
    }
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < dm.n * H; w++) {
        int64_t s = w / H, h = w % H, t0, L, r, c, i, ld = H * Kf;
        float *A = ws + (size_t)lattn__thread_id() * per, *qs, *kd, *G, *g;
        const float *Q, *Kr, *Ks;
        float *O;
        int64_t sidx = (s * H + h) * Kf;
        lattn__seq(a->offsets, a->T, s, &t0, &L);
        qs = A + Tmax * Tmax;
        kd = qs + Tmax * Kf;
        G = kd + Tmax * Kf;
        g = G + Tmax * Kg;
        Q = in.q + t0 * ld + h * Kf;
        Kr = in.k + t0 * ld + h * Kf;
        O = a->o + (t0 * H + h) * V;
        for (r = 0; r < L; r++)
            for (i = 0; i < Kf; i++) qs[r * Kf + i] = dm.s * Q[r * ld + i];
        for (r = 0; dm.gate && r < L; r++)      /* inclusive cumsum of the clamped log gates */
            for (i = 0; i < Kg; i++) G[r * Kg + i] = (r ? G[(r - 1) * Kg + i] : 0.0f) + (float)lattn__la_gate(a, t0 + r, h, i);
        memset(A, 0, (size_t)(L * L) * sizeof(float));
        if (dm.gate == LATTN__GATE_KEY) {       /* A[r][c] = Σ_i sq_r[i] k_c[i] e^{G_r[i] - G_c[i]} */
            for (r = 0; r < L; r++)
                for (c = 0; c <= r; c++) {
                    float acc = 0.0f;
                    for (i = 0; i < Kf; i++) acc += qs[r * Kf + i] * Kr[c * ld + i] * expf(G[r * Kf + i] - G[c * Kf + i]);
                    A[r * L + c] = acc;
                }
        } else {
            lattn__sgemm(LATTN_GEMM_TRANS_B | LATTN_GEMM_LOWER, L, L, Kf, qs, Kf, Kr, ld, A, L, g);  /* A = tril(sΦqΦkᵀ) */
            for (r = 0; dm.gate && r < L; r++)
                for (c = 0; c <= r; c++) A[r * L + c] *= expf(G[r] - G[c]);
        }
        lattn__sgemm(0, L, V, L, A, L, a->v + (t0 * H + h) * V, H * V, O, H * V, g);            /* O = A V */
        for (r = 0; dm.gate && r < L; r++)     /* the inter term reads S0 through e^{G_r} */
            for (i = 0; i < Kf; i++) qs[r * Kf + i] *= expf(G[r * Kg + (Kg > 1 ? i : 0)]);
        if (a->h0) lattn__sgemm(LATTN_GEMM_ACCUMULATE, L, V, Kf, qs, Kf, a->h0 + sidx * V, V, O, H * V, g);
        if (a->normalize) {              /* den_r = Σ_c A[r][c] + s(φq_r ⊙ e^{G_r})·z0 */
            for (r = 0; r < L; r++) {
                float dr = lattn_vec_sum((size_t)(r + 1), A + r * L);
                if (a->z0) dr += lattn_vec_dot((size_t)Kf, qs + r * Kf, a->z0 + sidx);
                lattn_vec_scale((size_t)V, 1.0f / (dr + lattn__la_eps(a)), O + r * H * V);
            }
        }
        Ks = Kr;                         /* keys as the final state sees them: φk_c ⊙ e^{G_last - G_c} */
        if (dm.gate && L > 0) {
            for (c = 0; c < L; c++)
                for (i = 0; i < Kf; i++)
                    kd[c * Kf + i] = Kr[c * ld + i] * expf(G[(L - 1) * Kg + (Kg > 1 ? i : 0)] - G[c * Kg + (Kg > 1 ? i : 0)]);
            Ks = kd;
        }
        if (a->ht) {                     /* S = diag(e^{G_last}) S0 + Ksᵀ V */
            float *S = a->ht + sidx * V;
            if (a->h0) {
                memcpy(S, a->h0 + sidx * V, (size_t)(Kf * V) * sizeof(float));
                for (i = 0; dm.gate && L > 0 && i < Kf; i++)
                    lattn_vec_scale((size_t)V, expf(G[(L - 1) * Kg + (Kg > 1 ? i : 0)]), S + i * V);
            }
            lattn__sgemm(LATTN_GEMM_TRANS_A | (a->h0 ? LATTN_GEMM_ACCUMULATE : 0), Kf, V, L, Ks, Ks == Kr ? ld : Kf,
                         a->v + (t0 * H + h) * V, H * V, S, V, g);
        }
        if (a->zt && a->normalize) {
            for (i = 0; i < Kf; i++) {
                float zi = a->z0 ? a->z0[sidx + i] : 0.0f;
                if (a->z0 && dm.gate && L > 0) zi *= expf(G[(L - 1) * Kg + (Kg > 1 ? i : 0)]);
                for (r = 0; r < L; r++) zi += Ks[r * (Ks == Kr ? ld : Kf) + i];
                a->zt[sidx + i] = zi;
            }
        }
    }
    lattn__free(ctx, ws);
    lattn__free(ctx, in.buf);
    return lattn__ok(ctx);
}

/* --- _chunk: the chunked form written once on the tiler ---------------------------------------- */
/* Per (sequence, head) and chunk of L <= C tokens (row layout [L (P), d (F)] = one token per
   partition; column layout [d (P), L (F)] = one feature per partition):
     1-3   dma_load Q, K, V rows                  (V has one extra column of ones when normalising)
     4-7   transpose + copy: Qc = s·Qᵀ, Kc = Kᵀ    (K' > 128 is split into partition tiles kt)
     8     matmul(stat=Kc, mov=Qc) -> Aᵀ[c][r]     (accumulation group over kt)
     9     affine_select: Pᵀ = Aᵀ where r >= c, else 0 (selects: NaN above the diagonal stays out)
     10    matmul(stat=Pᵀ, mov=V) -> O              intra-chunk
     11    matmul(stat=Qc, mov=S), accumulating     inter-chunk (per kt)
     12    copy O to SBUF                           (normalised: O[:, :V] / (O[:, V] + eps))
     13    dma_store O
     14-15 matmul(stat=K rows, mov=V) -> ΔS; S += ΔS  (per kt; the only sequential dependency)
   V wider than the moving limit (512) runs in column blocks.
   Fixed decays (g_gamma: retention, the Laplace mixer; spec sbuf_tiler.md §5.2) keep per head three
   resident tiles built once (iota, exp, select: 7 instructions): Mt[c][r] = γ^{r-c} (r >= c, else 0),
   qd[r] = γ^{r+1}, w[c] = γ^{C-1-c}. Step 9 becomes Pᵀ = Aᵀ ⊙ Mt, step 11 writes its own PSUM tile
   Ox and step 12 is O = Ox ⊙ qd + Oi (one scalar_tensor_tensor), and the state update uses
   Kw = K ⊙ w and S = γ^L S + ΔS: 16 instructions per (head, chunk) on trn2, the spec's 17 without
   F14 (the checkpoint of S for a backward pass, which lattn does not have). A ragged last chunk of
   L < C tokens builds its own w = γ^{L-1-c} (2 instructions).
   Gated chunks add (Gr = the gate rows, [L][1] per head or [L][K] per key, clamped on load):
     cumsums as matmuls with constant 0/1 tiles: b rows = Uᵀ·Gr, b columns bᵀ = Grᵀ·U (per head:
     b row [1][L], broadcast to [K][L] by a 1-row matmul), b_last rows = 1ᵀ·Gr (U[c][r] = c <= r);
     K rows decayed by e^{b_last - b}; Qc = s·Qᵀ ⊙ e^{bᵀ} (inter); S = e^{b_last} ⊙_rows S + ΔS.
     Intra scores: per head, Pᵀ = Aᵀ ⊙ e^{b_r - b_c} (the exponent masked to -inf above the
     diagonal before the exp); per key, spec §5.5 with 32-row query blocks J (the engines' partition
     quadrant): keys before J against J's first row β (one matmul of factors e^{b - β} <= 1 and
     e^{β - b} <= 1), keys inside J against the query itself (one matrix-vector product per query).
     Every exponent is <= 0. */
#define LATTN__LA_MAX_KT 8
#define LATTN__LA_SUB 32
typedef struct lattn__la_tiles {
    lattn_tile qr, kr, vr, pt, ob, dcol, tp, at, op, ds;
    lattn_tile qc[LATTN__LA_MAX_KT], kc[LATTN__LA_MAX_KT], s[LATTN__LA_MAX_KT];
    /* gated only (kd also with fixed decays: the decayed key rows) */
    lattn_tile U, one, gr, gb, wd, kd, brow, erow, dmask, xq, xk, el, gp, bm;
    /* fixed decays only: per head of the work item Mt = γ^{r-c} (r >= c), and the columns qd = γ^{r+1}
       and w = γ^{C-1-c} (wr: the ragged last chunk's), the inter-chunk product ox */
    lattn_tile mt, qd, wc, wr, ox;
    /* plain chunks: the row blocks of a chunk, their scores, and the resident scores (chunk-parallel) */
    lattn_tile qrb[4], krb[4], vrb[4], ptb[4], sc;
    lattn_tile qt[LATTN__LA_MAX_KT], bt[LATTN__LA_MAX_KT];
} lattn__la_tiles;
/* C chunk; kp partitions per K' tile, nkt tiles; vw value columns per work item (all of V, or 64
   on a gpu where each block owns a slice of V as fla's kernels do), Vn = vw + 1 when normalising
   (the ones column), vb the moving-size block of a matmul; hb heads per work item; gate kind and
   gate columns per token Kg (1 per head, K' per key); fixed: the fixed per-head decays (g_gamma),
   run with gate = none and the resident decay tiles. Without dynamic gates a chunk is pt blocks of
   P token rows (P = C up to the partitions); sched the schedule, N the chunks of the longest
   sequence (the chunk-parallel schedule's resident scores). */
typedef struct lattn__la_plan { int C, kp, nkt, vb, Vn, vw, Kf, hb, gate, Kg, fixed, P, pt, sched, N; } lattn__la_plan;

static int lattn__kw(const lattn__la_plan *p, int kt) { return LATTN__MIN(p->kp, p->Kf - kt * p->kp); }

/* A kernel's tile plan: LATTN__PLAN appends a tile (0 SBUF, 1 PSUM, 2 SBUF stream; shape) to the local list[n];
   lattn__tplan_apply then returns the host-arena size of the plan (t == NULL) or allocates it. */
typedef struct lattn__tplan { lattn_tile *tile; int psum, np, nf; } lattn__tplan;
#define LATTN__PLAN(tl, ps, a_, b_) do { list[n].tile = (tl); list[n].psum = (ps); list[n].np = (a_); list[n].nf = (b_); n++; } while (0)
static lattn_status lattn__tplan_apply(lattn_tiler *t, const lattn__tplan *list, int n, size_t *host_floats) {
    int i;
    if (!t) {
        size_t f = 0;
        for (i = 0; i < n; i++) f += lattn_tiler_tile_floats(list[i].np, list[i].nf);
        *host_floats = f;
        return LATTN_OK;
    }
    for (i = 0; i < n; i++)
        LATTN__TRY(list[i].psum == 1 ? lattn_psum_alloc(t, list[i].tile, list[i].np, list[i].nf)
                   : list[i].psum == 2 ? lattn_sbuf_alloc_stream(t, list[i].tile, list[i].np, list[i].nf)
                                       : lattn_sbuf_alloc(t, list[i].tile, list[i].np, list[i].nf));
    return LATTN_OK;
}

/* Allocate every tile of the plan; host_floats alone (t == NULL) returns the arena size. Streamed
   activations (rows and columns of q, k, v, o) are stream tiles (the profile's stream_bytes). */
static lattn_status lattn__la_tiles_alloc(lattn_tiler *t, const lattn__la_plan *p, lattn__la_tiles *x, size_t *host_floats) {
    lattn__tplan list[32 + 5 * LATTN__LA_MAX_KT];
    int n = 0, kt, b, gkp = p->gate == LATTN__GATE_KEY ? p->kp : 1;
    LATTN__PLAN(&x->ob, 2, p->P, p->Vn);
    LATTN__PLAN(&x->dcol, 0, p->P, 1);
    for (kt = 0; kt < p->nkt; kt++) {
        LATTN__PLAN(&x->qc[kt], 2, lattn__kw(p, kt), p->C);
        LATTN__PLAN(&x->kc[kt], 2, lattn__kw(p, kt), p->C);
        LATTN__PLAN(&x->s[kt], 0, lattn__kw(p, kt), p->Vn * p->hb);    /* one state per head of the block */
        if (p->gate) { LATTN__PLAN(&x->qt[kt], 0, lattn__kw(p, kt), p->C); LATTN__PLAN(&x->bt[kt], 0, lattn__kw(p, kt), p->C); }
    }
    if (p->gate) {
        LATTN__PLAN(&x->qr, 2, p->C, p->Kf);
        LATTN__PLAN(&x->kr, 2, p->C, p->Kf);
        LATTN__PLAN(&x->vr, 2, p->C, p->Vn);
        LATTN__PLAN(&x->pt, 0, p->C, p->C);
        LATTN__PLAN(&x->U, 0, p->C, p->C);
        LATTN__PLAN(&x->one, 0, p->C, LATTN__MAX(p->C, p->kp));
        LATTN__PLAN(&x->gr, 0, p->C, p->Kg);
        LATTN__PLAN(&x->gb, 0, p->C, gkp);
        LATTN__PLAN(&x->wd, 0, p->C, gkp);
        LATTN__PLAN(&x->kd, 0, p->C, p->Kf);
        LATTN__PLAN(&x->brow, 0, 1, p->C);
        LATTN__PLAN(&x->el, 0, p->kp, 1);
        LATTN__PLAN(&x->xq, 0, p->kp, p->C);
        if (p->gate == LATTN__GATE_HEAD) { LATTN__PLAN(&x->dmask, 0, p->C, p->C); LATTN__PLAN(&x->erow, 0, 1, p->C); }
        else LATTN__PLAN(&x->xk, 0, p->kp, p->C);
        LATTN__PLAN(&x->gp, 1, p->C, gkp);
        LATTN__PLAN(&x->bm, 1, p->C, p->C);
    } else {
        for (b = 0; b < p->pt; b++) {
            LATTN__PLAN(&x->qrb[b], 2, p->P, p->Kf);
            LATTN__PLAN(&x->krb[b], 2, p->P, p->Kf);
            LATTN__PLAN(&x->vrb[b], 2, p->P, p->Vn);
            if (p->sched == LATTN_SCHED_STREAMING) LATTN__PLAN(&x->ptb[b], 0, p->P, p->C);
        }
        if (p->sched == LATTN_SCHED_CHUNK_PARALLEL) LATTN__PLAN(&x->sc, 0, p->P, p->hb * p->N * p->pt * p->C);
        if (p->fixed) {
            LATTN__PLAN(&x->mt, 0, p->P, p->hb * p->pt * p->C);
            LATTN__PLAN(&x->qd, 0, p->P, p->hb * p->pt);
            LATTN__PLAN(&x->wc, 0, p->P, p->hb * p->pt);
            LATTN__PLAN(&x->wr, 0, p->P, p->pt);
            LATTN__PLAN(&x->ox, 1, p->P, p->vb);
        }
    }
    LATTN__PLAN(&x->tp, 1, p->kp, p->P);
    LATTN__PLAN(&x->at, 1, p->P, p->C);
    LATTN__PLAN(&x->op, 1, p->P, p->vb);
    LATTN__PLAN(&x->ds, 1, p->kp, p->vb);
    LATTN__TRY(lattn__tplan_apply(t, list, n, host_floats));
    if (!t) return LATTN_OK;
    if (p->gate) {                       /* constants: U[c][r] = (c <= r), and ones */
        lattn_tile sq = lattn_tile_view(&x->one, 0, p->C, 0, p->C);
        LATTN__TRY(lattn_tile_memset(t, &x->one, 1.0f));
        LATTN__TRY(lattn_tile_select_tri(t, &x->U, &sq, 0, 0.0f));
    }
    return LATTN_OK;
}

/* The L output rows in ob, normalised when asked (O[:, :vw] / (O[:, vw] + eps)), stored to o (rows
   of H·V floats). */
static lattn_status lattn__la_store_o(lattn_tiler *t, lattn__la_tiles *x, const lattn_la_args *a, int L, int vw, float *o) {
    lattn_tile v = lattn_tile_view(&x->ob, 0, L, 0, vw);
    if (a->normalize) {
        lattn_tile dc = lattn_tile_view(&x->dcol, 0, L, 0, 1), z = lattn_tile_view(&x->ob, 0, L, vw, 1);
        LATTN__TRY(lattn_tile_act(t, &dc, &z, LATTN_ACT_IDENTITY, 1.0f, lattn__la_eps(a)));
        LATTN__TRY(lattn_tile_ts(t, &v, &v, &dc, 0.0f, LATTN_TOP_DIV));
    }
    return lattn_dma_store(t, o, a->H * a->V, &v);
}

/* Gated chunk, before the scores (see the kernel comment): gate rows in, cumsums, decayed keys
   kd, b in column layout bt, and Qc = s·Qᵀ ⊙ e^{bᵀ}. qt holds s·Qᵀ (ungated) for the scores.
   Per key, the one cumsum is bᵀ = Grᵀ·U; the key decays come back from it as the transpose of
   bᵀ - b_lastᵀ (b_last = its last column), exponentiated with the sign turned (every exponent <= 0). */
static lattn_status lattn__la_gates(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p,
                                    const lattn_la_args *a, int64_t tok, int64_t h, int L) {
    lattn_tile v1, v2, v3, Ul = lattn_tile_view(&x->U, 0, L, 0, L);
    int kt;
    v1 = lattn_tile_view(&x->gr, 0, L, 0, p->Kg);
    if (a->gk) LATTN__TRY(lattn_dma_load(t, &v1, a->gk + (tok * a->H + h) * a->K, a->H * a->K));
    else if (a->g) LATTN__TRY(lattn_dma_load(t, &v1, a->g + tok * a->H + h, a->H));
    else LATTN__TRY(lattn_tile_memset(t, &v1, a->g_gamma[h]));
    LATTN__TRY(lattn_tile_ts(t, &v1, &v1, NULL, LATTN_LOG_GATE_MIN, LATTN_TOP_MAX));      /* clamp */
    if (p->gate == LATTN__GATE_HEAD) {   /* one column: b and b_last rows, e^{b_last - b}; b and e^{b} as rows */
        lattn_tile gp = lattn_tile_view(&x->gp, 0, L, 0, 1), gb = lattn_tile_view(&x->gb, 0, L, 0, 1);
        lattn_tile wd = lattn_tile_view(&x->wd, 0, L, 0, 1);
        lattn_tile br = lattn_tile_view(&x->brow, 0, 1, 0, L), bp = lattn_tile_view(&x->bm, 0, 1, 0, L);
        LATTN__TRY(lattn_matmul(t, &gp, &Ul, &v1, 0));                                   /* b rows */
        LATTN__TRY(lattn_tile_copy(t, &gb, &gp));
        v2 = lattn_tile_view(&x->one, 0, L, 0, L);
        LATTN__TRY(lattn_matmul(t, &gp, &v2, &v1, 0));                                   /* b_last rows */
        LATTN__TRY(lattn_tile_tt(t, &wd, &gp, &gb, LATTN_TOP_SUB));
        LATTN__TRY(lattn_tile_act(t, &wd, &wd, LATTN_ACT_EXP, 1.0f, 0.0f));               /* e^{b_last - b} */
        v2 = lattn_tile_view(&x->kd, 0, L, 0, p->Kf);
        v3 = lattn_tile_view(&x->kr, 0, L, 0, p->Kf);
        LATTN__TRY(lattn_tile_ts(t, &v2, &v3, &wd, 0.0f, LATTN_TOP_MUL));
        LATTN__TRY(lattn_matmul(t, &bp, &v1, &Ul, 0));
        LATTN__TRY(lattn_tile_copy(t, &br, &bp));
        v1 = lattn_tile_view(&x->erow, 0, 1, 0, L);
        LATTN__TRY(lattn_tile_act(t, &v1, &br, LATTN_ACT_EXP, 1.0f, 0.0f));
    }
    for (kt = 0; kt < p->nkt; kt++) {
        int kw = lattn__kw(p, kt);
        lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, L), bt = lattn_tile_view(&x->bt[kt], 0, kw, 0, L);
        lattn_tile xq = lattn_tile_view(&x->xq, 0, kw, 0, L);
        v1 = lattn_tile_view(&x->qc[kt], 0, kw, 0, L);
        v2 = lattn_tile_view(&x->qt[kt], 0, kw, 0, L);
        if (p->gate == LATTN__GATE_KEY) {
            lattn_tile gp = lattn_tile_view(&x->gp, 0, L, 0, kw), wd = lattn_tile_view(&x->wd, 0, L, 0, kw);
            v3 = lattn_tile_view(&x->gr, 0, L, kt * p->kp, kw);
            LATTN__TRY(lattn_matmul(t, &tp, &v3, &Ul, 0));                               /* bᵀ */
            LATTN__TRY(lattn_tile_copy(t, &bt, &tp));
            LATTN__TRY(lattn_tile_act(t, &xq, &bt, LATTN_ACT_EXP, 1.0f, 0.0f));
            LATTN__TRY(lattn_tile_tt(t, &v1, &v2, &xq, LATTN_TOP_MUL));                  /* Qc = s·Qᵀ ⊙ e^{bᵀ} */
            v3 = lattn_tile_view(&x->bt[kt], 0, kw, L - 1, 1);
            LATTN__TRY(lattn_tile_ts(t, &xq, &bt, &v3, 0.0f, LATTN_TOP_SUB));            /* (b - b_last)ᵀ */
            LATTN__TRY(lattn_transpose(t, &gp, &xq));
            LATTN__TRY(lattn_tile_act(t, &wd, &gp, LATTN_ACT_EXP, -1.0f, 0.0f));         /* e^{b_last - b} */
            v2 = lattn_tile_view(&x->kd, 0, L, kt * p->kp, kw);
            v3 = lattn_tile_view(&x->kr, 0, L, kt * p->kp, kw);
            LATTN__TRY(lattn_tile_tt(t, &v2, &v3, &wd, LATTN_TOP_MUL));
        } else {                         /* one gate per head: broadcast e^{b} (32 exps, not kw·L) */
            v3 = lattn_tile_view(&x->one, 0, 1, 0, kw);
            xq = lattn_tile_view(&x->erow, 0, 1, 0, L);
            LATTN__TRY(lattn_matmul(t, &tp, &v3, &xq, 0));                               /* e^{bᵀ} */
            LATTN__TRY(lattn_tile_copy(t, &bt, &tp));
            LATTN__TRY(lattn_tile_tt(t, &v1, &v2, &bt, LATTN_TOP_MUL));                  /* Qc = s·Qᵀ ⊙ e^{bᵀ} */
        }
    }
    return LATTN_OK;
}

/* Aᵀ[c][r] (in at, r >= c) with per-key gates: see the kernel comment. A query block whose gates
   fall by at most LATTN__LA_SPAN (in every key channel of every partition tile) also takes its
   own keys into the reference-β matmul: their factors e^{β - b_c} are then at most e^{SPAN}, and a
   product of two factors has the same relative rounding as the pairwise exponent. Larger spans
   (strong gates) keep the per-query route, where every exponent is <= 0. When the gates fall by at
   most the span from the chunk's start to the block's end, the reference is the chunk's start
   (β = 0, fla's choice): the query side is then Qc itself and the key side e^{-b_c} ⊙ Kc. */
#define LATTN__LA_SPAN 20.0f
static int lattn__la_block_fits(const lattn__la_tiles *x, const lattn__la_plan *p, int i0, int i1, int from_start) {
    int kt, i;        /* a partition-axis max of β - b_(i1-1) (GpSimd on a NeuronCore) */
    for (kt = 0; kt < p->nkt; kt++)
        for (i = 0; i < lattn__kw(p, kt); i++) {
            const float *row = x->bt[kt].data + (size_t)i * x->bt[kt].ld;
            if (!((from_start ? 0.0f : row[i0]) - row[i1 - 1] <= LATTN__LA_SPAN)) return 0;
        }
    return 1;
}
static lattn_status lattn__la_scores_key(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p, int L) {
    int kt, i0, r;
    lattn_tile v1, v2, v3;
    for (i0 = 0; i0 < L; i0 += LATTN__LA_SUB) {
        int i1 = LATTN__MIN(i0 + LATTN__LA_SUB, L), nI = i1 - i0, zero = lattn__la_block_fits(x, p, i0, i1, 1);
        int fits = zero || lattn__la_block_fits(x, p, i0, i1, 0), nk = fits ? i1 : i0;   /* keys [0, nk) in the matmul */
        for (kt = 0; kt < p->nkt; kt++) {
            int kw = lattn__kw(p, kt);
            lattn_tile beta = lattn_tile_view(&x->bt[kt], 0, kw, i0, 1);
            if (nk > 0 && zero) {        /* keys [0, nk) against queries [i0, i1), reference 0 */
                lattn_tile xk = lattn_tile_view(&x->xk, 0, kw, 0, nk), out = lattn_tile_view(&x->at, 0, nk, i0, nI);
                v1 = lattn_tile_view(&x->bt[kt], 0, kw, 0, nk);
                LATTN__TRY(lattn_tile_act(t, &xk, &v1, LATTN_ACT_EXP, -1.0f, 0.0f));      /* e^{-b_c} */
                v1 = lattn_tile_view(&x->kc[kt], 0, kw, 0, nk);
                LATTN__TRY(lattn_tile_tt(t, &xk, &xk, &v1, LATTN_TOP_MUL));
                v1 = lattn_tile_view(&x->qc[kt], 0, kw, i0, nI);                           /* s·Qᵀ ⊙ e^{bᵀ} */
                LATTN__TRY(lattn_matmul(t, &out, &xk, &v1, kt > 0));
            } else if (nk > 0) {         /* keys [0, nk) against queries [i0, i1), reference β = b_i0 */
                lattn_tile xq = lattn_tile_view(&x->xq, 0, kw, 0, nI), xk = lattn_tile_view(&x->xk, 0, kw, 0, nk);
                lattn_tile out = lattn_tile_view(&x->at, 0, nk, i0, nI);
                v1 = lattn_tile_view(&x->bt[kt], 0, kw, i0, nI);
                LATTN__TRY(lattn_tile_ts(t, &xq, &v1, &beta, 0.0f, LATTN_TOP_SUB));
                LATTN__TRY(lattn_tile_act(t, &xq, &xq, LATTN_ACT_EXP, 1.0f, 0.0f));      /* e^{b_r - β} */
                v1 = lattn_tile_view(&x->qt[kt], 0, kw, i0, nI);
                LATTN__TRY(lattn_tile_tt(t, &xq, &xq, &v1, LATTN_TOP_MUL));
                v1 = lattn_tile_view(&x->bt[kt], 0, kw, 0, nk);
                LATTN__TRY(lattn_tile_ts(t, &xk, &v1, &beta, 0.0f, LATTN_TOP_SUB));
                LATTN__TRY(lattn_tile_act(t, &xk, &xk, LATTN_ACT_EXP, -1.0f, 0.0f));     /* e^{β - b_c} */
                v1 = lattn_tile_view(&x->kc[kt], 0, kw, 0, nk);
                LATTN__TRY(lattn_tile_tt(t, &xk, &xk, &v1, LATTN_TOP_MUL));
                LATTN__TRY(lattn_matmul(t, &out, &xk, &xq, kt > 0));
            }
            for (r = i0; !fits && r < i1; r++) {  /* keys [i0, r] against query r, reference b_r */
                int nr = r + 1 - i0;
                lattn_tile xk = lattn_tile_view(&x->xk, 0, kw, 0, nr), out = lattn_tile_view(&x->at, i0, nr, r, 1);
                v1 = lattn_tile_view(&x->bt[kt], 0, kw, i0, nr);
                v2 = lattn_tile_view(&x->bt[kt], 0, kw, r, 1);
                LATTN__TRY(lattn_tile_ts(t, &xk, &v1, &v2, 0.0f, LATTN_TOP_SUB));
                LATTN__TRY(lattn_tile_act(t, &xk, &xk, LATTN_ACT_EXP, -1.0f, 0.0f));     /* e^{b_r - b_c} */
                v1 = lattn_tile_view(&x->kc[kt], 0, kw, i0, nr);
                LATTN__TRY(lattn_tile_tt(t, &xk, &xk, &v1, LATTN_TOP_MUL));
                v3 = lattn_tile_view(&x->qt[kt], 0, kw, r, 1);
                LATTN__TRY(lattn_matmul(t, &out, &xk, &v3, kt > 0));
            }
        }
    }
    return LATTN_OK;
}

/* The states of a work item's nh heads in (dir 0: initial state and key sums, or zeros) or out
   (dir 1: final state and key sums, when asked). Head j's state is columns [j·Vn, (j+1)·Vn) of the
   state tiles; value columns [v0, v0 + vw). */
static lattn_status lattn__la_states(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p, const lattn_la_args *a,
                                     int dir, int64_t sq, int64_t h0, int nh, int64_t v0, int vw) {
    int j, kt;
    for (j = 0; j < nh; j++)
        for (kt = 0; kt < p->nkt; kt++) {
            const int kw = lattn__kw(p, kt);
            const int64_t sidx = (sq * a->H + h0 + j) * p->Kf + kt * p->kp;
            lattn_tile v = lattn_tile_view(&x->s[kt], 0, kw, j * p->Vn, vw), z = lattn_tile_view(&x->s[kt], 0, kw, j * p->Vn + vw, 1);
            if (dir == 0) {
                LATTN__TRY(a->h0 ? lattn_dma_load(t, &v, a->h0 + sidx * a->V + v0, a->V) : lattn_tile_memset(t, &v, 0.0f));
                if (a->normalize) LATTN__TRY(a->z0 ? lattn_dma_load(t, &z, a->z0 + sidx, 1) : lattn_tile_memset(t, &z, 0.0f));
            } else {
                if (a->ht) LATTN__TRY(lattn_dma_store(t, a->ht + sidx * a->V + v0, a->V, &v));
                if (a->zt && a->normalize && v0 == 0) LATTN__TRY(lattn_dma_store(t, a->zt + sidx, 1, &z));
            }
        }
    return LATTN_OK;
}

/* Gated chunks: one (sequence, block of hb heads) on one tiler: chunks outer, heads inner, so the
   rows the DMA reads for consecutive heads are neighbours in memory. */
static lattn_status lattn__la_chunk_block(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p,
                                          const lattn_la_args *a, const lattn__la_in *in, float s,
                                          int64_t tok0, int64_t len, int64_t sq, int64_t h0, int nh,
                                          int64_t v0, int vw) {
    const int64_t H = a->H, VS = a->V, ldq = H * p->Kf;
    const int V = vw, Vn = vw + (a->normalize ? 1 : 0);   /* value columns [v0, v0 + vw) */
    int kt, c0, j;
    lattn_tile v1, v2, v3;
    LATTN__TRY(lattn__la_states(t, x, p, a, 0, sq, h0, nh, v0, vw));
    if (a->normalize) { v1 = lattn_tile_view(&x->vr, 0, p->C, V, 1); LATTN__TRY(lattn_tile_memset(t, &v1, 1.0f)); }
    for (c0 = 0; c0 < len; c0 += p->C)
        for (j = 0; j < nh; j++) {
            int L = (int)LATTN__MIN((int64_t)p->C, len - c0), vb0, so = j * p->Vn;
            int64_t tok = tok0 + c0, h = h0 + j;
            lattn_tile at = lattn_tile_view(&x->at, 0, L, 0, L), pt = lattn_tile_view(&x->pt, 0, L, 0, L);
            const lattn_tile *krows = &x->kd;   /* keys as the state update sees them: decayed */
            v1 = lattn_tile_view(&x->qr, 0, L, 0, p->Kf);
            LATTN__TRY(lattn_dma_load(t, &v1, in->q + tok * ldq + h * p->Kf, ldq));
            v1 = lattn_tile_view(&x->kr, 0, L, 0, p->Kf);
            LATTN__TRY(lattn_dma_load(t, &v1, in->k + tok * ldq + h * p->Kf, ldq));
            v1 = lattn_tile_view(&x->vr, 0, L, 0, V);
            LATTN__TRY(lattn_dma_load(t, &v1, a->v + (tok * H + h) * VS + v0, H * VS));
            for (kt = 0; kt < p->nkt; kt++) {
                int kw = lattn__kw(p, kt);
                lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, L);
                v1 = lattn_tile_view(&x->qr, 0, L, kt * p->kp, kw);
                v2 = lattn_tile_view(&x->qt[kt], 0, kw, 0, L);
                LATTN__TRY(lattn_transpose(t, &tp, &v1));
                LATTN__TRY(lattn_tile_act(t, &v2, &tp, LATTN_ACT_IDENTITY, s, 0.0f));      /* s·Qᵀ */
                v1 = lattn_tile_view(&x->kr, 0, L, kt * p->kp, kw);
                v2 = lattn_tile_view(&x->kc[kt], 0, kw, 0, L);
                LATTN__TRY(lattn_transpose(t, &tp, &v1));
                LATTN__TRY(lattn_tile_copy(t, &v2, &tp));
            }
            LATTN__TRY(lattn__la_gates(t, x, p, a, tok, h, L));
            if (p->gate == LATTN__GATE_KEY) {
                LATTN__TRY(lattn__la_scores_key(t, x, p, L));
                LATTN__TRY(lattn_tile_select_tri(t, &pt, &at, 0, 0.0f));                    /* keep r >= c */
            } else {
                for (kt = 0; kt < p->nkt; kt++) {
                    v1 = lattn_tile_view(&x->kc[kt], 0, lattn__kw(p, kt), 0, L);
                    v2 = lattn_tile_view(&x->qt[kt], 0, lattn__kw(p, kt), 0, L);
                    LATTN__TRY(lattn_matmul(t, &at, &v1, &v2, kt > 0));                     /* Aᵀ = K Qᵀ s */
                }
                {                        /* Pᵀ = Aᵀ ⊙ e^{b_r - b_c}, exponent -inf above the diagonal */
                    lattn_tile bm = lattn_tile_view(&x->bm, 0, L, 0, L), dm = lattn_tile_view(&x->dmask, 0, L, 0, L);
                    v1 = lattn_tile_view(&x->one, 0, 1, 0, L);
                    v2 = lattn_tile_view(&x->brow, 0, 1, 0, L);
                    LATTN__TRY(lattn_matmul(t, &bm, &v1, &v2, 0));                          /* [c][r] = b_r */
                    v3 = lattn_tile_view(&x->gb, 0, L, 0, 1);
                    LATTN__TRY(lattn_tile_ts(t, &dm, &bm, &v3, 0.0f, LATTN_TOP_SUB));
                    LATTN__TRY(lattn_tile_select_tri(t, &dm, &dm, 0, -HUGE_VALF));
                    LATTN__TRY(lattn_tile_act(t, &dm, &dm, LATTN_ACT_EXP, 1.0f, 0.0f));
                    LATTN__TRY(lattn_tile_tt(t, &pt, &at, &dm, LATTN_TOP_MUL));
                }
            }
            for (vb0 = 0; vb0 < Vn; vb0 += p->vb) {
                int w = LATTN__MIN(p->vb, Vn - vb0);
                lattn_tile op = lattn_tile_view(&x->op, 0, L, 0, w);
                v1 = lattn_tile_view(&x->vr, 0, L, vb0, w);
                LATTN__TRY(lattn_matmul(t, &op, &pt, &v1, LATTN_MM_CAUSAL));                 /* intra */
                for (kt = 0; kt < p->nkt; kt++) {
                    v2 = lattn_tile_view(&x->qc[kt], 0, lattn__kw(p, kt), 0, L);
                    v3 = lattn_tile_view(&x->s[kt], 0, lattn__kw(p, kt), so + vb0, w);
                    LATTN__TRY(lattn_matmul(t, &op, &v2, &v3, 1));                           /* inter */
                }
                v1 = lattn_tile_view(&x->ob, 0, L, vb0, w);
                LATTN__TRY(lattn_tile_copy(t, &v1, &op));
            }
            LATTN__TRY(lattn__la_store_o(t, x, a, L, V, a->o + (tok * H + h) * VS + v0));
            for (kt = 0; kt < p->nkt; kt++) {
                int kw = lattn__kw(p, kt);
                lattn_tile el = lattn_tile_view(&x->el, 0, kw, 0, 1);
                if (p->gate == LATTN__GATE_KEY) {    /* e^{b_last}, one per key row of the state */
                    v1 = lattn_tile_view(&x->bt[kt], 0, kw, L - 1, 1);
                    LATTN__TRY(lattn_tile_act(t, &el, &v1, LATTN_ACT_EXP, 1.0f, 0.0f));
                } else el = lattn_tile_view(&x->bt[kt], 0, kw, L - 1, 1);                /* already e^{b} */
                for (vb0 = 0; vb0 < Vn; vb0 += p->vb) {
                    int w = LATTN__MIN(p->vb, Vn - vb0);
                    lattn_tile ds = lattn_tile_view(&x->ds, 0, kw, 0, w);
                    v1 = lattn_tile_view(krows, 0, L, kt * p->kp, kw);
                    v2 = lattn_tile_view(&x->vr, 0, L, vb0, w);
                    v3 = lattn_tile_view(&x->s[kt], 0, kw, so + vb0, w);
                    LATTN__TRY(lattn_matmul(t, &ds, &v1, &v2, 0));                           /* ΔS = Kᵀ V */
                    LATTN__TRY(lattn_tile_stt(t, &v3, &v3, &el, 0.0f, &ds));                /* S = e^{b_last} S + ΔS */
                }
            }
            lattn_tiler_mark_step(t);
        }
    return lattn__la_states(t, x, p, a, 1, sq, h0, nh, v0, vw);
}

/* Plain chunks (linear attention, or the fixed decays): a chunk of L <= C tokens is nb blocks of
   at most P token rows (one token per partition; C = 256 on a 128-partition profile is two blocks).
   Block pairs (c, r) with c <= r carry the scores; Mt, qd and w are the fixed decays' resident tiles
   (Mt for key block c is [P][C]: γ^{r-c} over every query r, zero where r < c). The phases, per
   (head j, chunk n):
     rows     dma_load the Q (and K, V) row blocks
     cols     transpose + copy them into Qc = s·Qᵀ (and Kc = Kᵀ), [K' (P)][C]
     scores   per key block c: Aᵀ = Kc_cᵀ·Qc (query blocks r >= c), Pᵀ = Aᵀ ⊙ Mt_c (fixed decays) or
              selected r >= c; into dst (the streaming tile, or the resident scores)
     rest     per query block r: O_r = Σ_{c<=r} (Pᵀ_c)ᵀ V_c + (Qc_r)ᵀ S (fixed decays: Ox ⊙ qd + Oi),
              normalise, store; then Kw = K ⊙ w (fixed decays), ΔS = Σ_c Kw_cᵀ V_c, S = γ^L S + ΔS
   STREAMING runs rows, cols, scores, rest per (n, j). CHUNK_PARALLEL runs phase A (Q and K rows and
   columns, scores into the resident tile) for every (n, j), then phase B (all rows, Q's columns,
   rest) for every n and j: spec §6.1's 4 extra instructions per (head, chunk). */
static lattn_tile lattn__la_sc_view(const lattn__la_tiles *x, const lattn__la_plan *p, int j, int64_t n, int c, int rows) {
    return p->sched == LATTN_SCHED_CHUNK_PARALLEL ? lattn_tile_view(&x->sc, 0, rows, (int)((((int64_t)j * p->N + n) * p->pt + c) * p->C), p->C)
                                                  : lattn_tile_view(&x->ptb[c], 0, rows, 0, p->C);
}
static int lattn__blk(const lattn__la_plan *p, int L, int b) { return (int)LATTN__MAX(0, LATTN__MIN(p->P, L - b * p->P)); }
static lattn_status lattn__la_plain_rows(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p, const lattn_la_args *a,
                                         const lattn__la_in *in, int64_t tok, int64_t h, int L, int64_t v0, int vw, int with_v) {
    const int64_t ldq = a->H * p->Kf;
    int b;
    for (b = 0; b < p->pt && lattn__blk(p, L, b) > 0; b++) {
        const int Lb = lattn__blk(p, L, b);
        const int64_t r0 = tok + (int64_t)b * p->P;
        lattn_tile v = lattn_tile_view(&x->qrb[b], 0, Lb, 0, p->Kf);
        LATTN__TRY(lattn_dma_load(t, &v, in->q + r0 * ldq + h * p->Kf, ldq));
        v = lattn_tile_view(&x->krb[b], 0, Lb, 0, p->Kf);
        LATTN__TRY(lattn_dma_load(t, &v, in->k + r0 * ldq + h * p->Kf, ldq));
        v = lattn_tile_view(&x->vrb[b], 0, Lb, 0, vw);
        if (with_v) LATTN__TRY(lattn_dma_load(t, &v, a->v + (r0 * a->H + h) * a->V + v0, a->H * a->V));
    }
    return LATTN_OK;
}
/* Columns of the row blocks: Qc = s·Qᵀ, and Kc = Kᵀ when with_k. */
static lattn_status lattn__la_plain_cols(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p, float s, int L, int with_k) {
    int b, kt;
    for (b = 0; b < p->pt && lattn__blk(p, L, b) > 0; b++)
        for (kt = 0; kt < p->nkt; kt++) {
            const int kw = lattn__kw(p, kt), Lb = lattn__blk(p, L, b);
            lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, Lb), src = lattn_tile_view(&x->qrb[b], 0, Lb, kt * p->kp, kw);
            lattn_tile dst = lattn_tile_view(&x->qc[kt], 0, kw, b * p->P, Lb);
            LATTN__TRY(lattn_transpose(t, &tp, &src));
            LATTN__TRY(lattn_tile_act(t, &dst, &tp, LATTN_ACT_IDENTITY, s, 0.0f));                   /* s·Qᵀ */
            if (!with_k) continue;
            src = lattn_tile_view(&x->krb[b], 0, Lb, kt * p->kp, kw);
            dst = lattn_tile_view(&x->kc[kt], 0, kw, b * p->P, Lb);
            LATTN__TRY(lattn_transpose(t, &tp, &src));
            LATTN__TRY(lattn_tile_copy(t, &dst, &tp));
        }
    return LATTN_OK;
}
static lattn_status lattn__la_plain_scores(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p, int L, int j, int64_t n) {
    int c, kt;
    for (c = 0; c < p->pt && lattn__blk(p, L, c) > 0; c++) {
        const int Lc = lattn__blk(p, L, c), r0 = c * p->P;       /* query columns [r0, L) */
        lattn_tile at = lattn_tile_view(&x->at, 0, Lc, r0, L - r0), pt = lattn__la_sc_view(x, p, j, n, c, Lc);
        pt = lattn_tile_view(&pt, 0, Lc, r0, L - r0);
        for (kt = 0; kt < p->nkt; kt++) {
            lattn_tile kc = lattn_tile_view(&x->kc[kt], 0, lattn__kw(p, kt), r0, Lc);
            lattn_tile qc = lattn_tile_view(&x->qc[kt], 0, lattn__kw(p, kt), r0, L - r0);
            LATTN__TRY(lattn_matmul(t, &at, &kc, &qc, kt > 0));                                      /* Aᵀ = Kc_cᵀ Qc */
        }
        if (p->fixed) {
            lattn_tile mt = lattn_tile_view(&x->mt, 0, Lc, (j * p->pt + c) * p->C + r0, L - r0);
            LATTN__TRY(lattn_tile_tt(t, &pt, &at, &mt, LATTN_TOP_MUL));                             /* Pᵀ = Aᵀ ⊙ Mt */
        } else LATTN__TRY(lattn_tile_select_tri(t, &pt, &at, 0, 0.0f));                             /* keep r >= c */
    }
    return LATTN_OK;
}
static lattn_status lattn__la_plain_rest(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p, const lattn_la_args *a,
                                         int64_t tok, int64_t h, int L, int j, int64_t n, int64_t v0, int vw, float *ck) {
    const int Vn = vw + (a->normalize ? 1 : 0), so = j * p->Vn;
    const float lg = p->fixed ? (a->g_gamma[h] < LATTN_LOG_GATE_MIN ? LATTN_LOG_GATE_MIN : a->g_gamma[h]) : 0.0f;
    int r, c, kt, vb0;
    lattn_tile v1, v2, v3;
    for (r = 0; r < p->pt && lattn__blk(p, L, r) > 0; r++) {
        const int Lr = lattn__blk(p, L, r);
        for (vb0 = 0; vb0 < Vn; vb0 += p->vb) {
            const int w = LATTN__MIN(p->vb, Vn - vb0);
            lattn_tile op = lattn_tile_view(&x->op, 0, Lr, 0, w), ox = lattn_tile_view(p->fixed ? &x->ox : &x->op, 0, Lr, 0, w);
            for (c = 0; c <= r; c++) {                                                                /* intra */
                v1 = lattn__la_sc_view(x, p, j, n, c, lattn__blk(p, L, c));
                v1 = lattn_tile_view(&v1, 0, lattn__blk(p, L, c), r * p->P, Lr);
                v2 = lattn_tile_view(&x->vrb[c], 0, lattn__blk(p, L, c), vb0, w);
                LATTN__TRY(lattn_matmul(t, &op, &v1, &v2, (c > 0 ? LATTN_MM_ACCUMULATE : 0) | (c == r ? LATTN_MM_CAUSAL : 0)));
            }
            for (kt = 0; kt < p->nkt; kt++) {                                                         /* inter */
                v2 = lattn_tile_view(&x->qc[kt], 0, lattn__kw(p, kt), r * p->P, Lr);
                v3 = lattn_tile_view(&x->s[kt], 0, lattn__kw(p, kt), so + vb0, w);
                LATTN__TRY(lattn_matmul(t, &ox, &v2, &v3, p->fixed ? kt > 0 : 1));
            }
            v1 = lattn_tile_view(&x->ob, 0, Lr, vb0, w);
            if (p->fixed) {                                                                           /* O = Ox ⊙ qd + Oi */
                v2 = lattn_tile_view(&x->qd, 0, Lr, j * p->pt + r, 1);
                LATTN__TRY(lattn_tile_stt(t, &v1, &ox, &v2, 0.0f, &op));
            } else LATTN__TRY(lattn_tile_copy(t, &v1, &op));
        }
        LATTN__TRY(lattn__la_store_o(t, x, a, Lr, vw, a->o + ((tok + (int64_t)r * p->P) * a->H + h) * a->V + v0));
    }
    for (c = 0; p->fixed && c < p->pt && lattn__blk(p, L, c) > 0; c++) {   /* Kw = K ⊙ γ^{L-1-c}, in place */
        const int Lc = lattn__blk(p, L, c);
        v2 = lattn_tile_view(&x->wc, 0, Lc, j * p->pt + c, 1);
        if (L < p->C) {                  /* a ragged last chunk: its own column */
            v2 = lattn_tile_view(&x->wr, 0, Lc, c, 1);
            LATTN__TRY(lattn_tile_iota(t, &v2, (float)(L - 1 - c * p->P), -1, 0));
            LATTN__TRY(lattn_tile_act(t, &v2, &v2, LATTN_ACT_EXP, lg, 0.0f));
        }
        v1 = lattn_tile_view(&x->krb[c], 0, Lc, 0, p->Kf);
        LATTN__TRY(lattn_tile_ts(t, &v1, &v1, &v2, 0.0f, LATTN_TOP_MUL));
    }
    for (kt = 0; ck && kt < p->nkt; kt++) {   /* F14: S before its update, the backward's checkpoint [K'][V] */
        v3 = lattn_tile_view(&x->s[kt], 0, lattn__kw(p, kt), so, vw);
        LATTN__TRY(lattn_dma_store(t, ck + (int64_t)kt * p->kp * a->V + v0, a->V, &v3));
    }
    for (kt = 0; kt < p->nkt; kt++) {
        const int kw = lattn__kw(p, kt);
        for (vb0 = 0; vb0 < Vn; vb0 += p->vb) {
            const int w = LATTN__MIN(p->vb, Vn - vb0);
            lattn_tile ds = lattn_tile_view(&x->ds, 0, kw, 0, w);
            for (c = 0; c < p->pt && lattn__blk(p, L, c) > 0; c++) {                                  /* ΔS = Σ_c Kw_cᵀ V_c */
                v1 = lattn_tile_view(&x->krb[c], 0, lattn__blk(p, L, c), kt * p->kp, kw);
                v2 = lattn_tile_view(&x->vrb[c], 0, lattn__blk(p, L, c), vb0, w);
                LATTN__TRY(lattn_matmul(t, &ds, &v1, &v2, c > 0));
            }
            v3 = lattn_tile_view(&x->s[kt], 0, kw, so + vb0, w);
            if (p->fixed) LATTN__TRY(lattn_tile_stt(t, &v3, &v3, NULL, expf((float)L * lg), &ds));   /* S = γ^L S + ΔS */
            else LATTN__TRY(lattn_tile_tt(t, &v3, &v3, &ds, LATTN_TOP_ADD));                         /* S += ΔS */
        }
    }
    return LATTN_OK;
}
/* ck (NULL: none): the sequence's checkpoints [H][ckn chunks][K'][V], written by F14. */
static lattn_status lattn__la_chunk_plain(lattn_tiler *t, lattn__la_tiles *x, const lattn__la_plan *p,
                                          const lattn_la_args *a, const lattn__la_in *in, float s,
                                          int64_t tok0, int64_t len, int64_t sq, int64_t h0, int nh,
                                          int64_t v0, int vw, float *ck, int64_t ckn) {
    const int par = p->sched == LATTN_SCHED_CHUNK_PARALLEL;
    int64_t c0;
    int j, b;
    lattn_tile v1, v2;
    LATTN__TRY(lattn__la_states(t, x, p, a, 0, sq, h0, nh, v0, vw));
    for (b = 0; a->normalize && b < p->pt; b++) { v1 = lattn_tile_view(&x->vrb[b], 0, p->P, vw, 1); LATTN__TRY(lattn_tile_memset(t, &v1, 1.0f)); }
    for (j = 0; p->fixed && j < nh; j++) {   /* the resident decay tiles of each head: 7 instructions per block */
        const float lg = a->g_gamma[h0 + j] < LATTN_LOG_GATE_MIN ? LATTN_LOG_GATE_MIN : a->g_gamma[h0 + j];
        for (b = 0; b < p->pt; b++) {
            lattn_tile mt = lattn_tile_view(&x->mt, 0, p->P, (j * p->pt + b) * p->C, p->C);
            v1 = lattn_tile_view(&x->qd, 0, p->P, j * p->pt + b, 1);
            v2 = lattn_tile_view(&x->wc, 0, p->P, j * p->pt + b, 1);
            LATTN__TRY(lattn_tile_iota(t, &mt, (float)(-b * p->P), -1, 1));                          /* r - c */
            LATTN__TRY(lattn_tile_act(t, &mt, &mt, LATTN_ACT_EXP, lg, 0.0f));
            LATTN__TRY(lattn_tile_select_affine(t, &mt, &mt, -(int64_t)b * p->P, -1, 1, 0.0f));      /* γ^{r-c}, r >= c */
            LATTN__TRY(lattn_tile_iota(t, &v1, (float)(b * p->P + 1), 1, 0));
            LATTN__TRY(lattn_tile_act(t, &v1, &v1, LATTN_ACT_EXP, lg, 0.0f));                         /* γ^{r+1} */
            LATTN__TRY(lattn_tile_iota(t, &v2, (float)(p->C - 1 - b * p->P), -1, 0));
            LATTN__TRY(lattn_tile_act(t, &v2, &v2, LATTN_ACT_EXP, lg, 0.0f));                         /* γ^{C-1-c} */
        }
    }
    for (c0 = 0; par && c0 < len; c0 += p->C)   /* phase A: every chunk's scores, kept */
        for (j = 0; j < nh; j++) {
            const int L = (int)LATTN__MIN((int64_t)p->C, len - c0);
            LATTN__TRY(lattn__la_plain_rows(t, x, p, a, in, tok0 + c0, h0 + j, L, v0, vw, 0));
            LATTN__TRY(lattn__la_plain_cols(t, x, p, s, L, 1));
            LATTN__TRY(lattn__la_plain_scores(t, x, p, L, j, c0 / p->C));
        }
    for (c0 = 0; c0 < len; c0 += p->C) {
        for (j = 0; j < nh; j++) {
            const int L = (int)LATTN__MIN((int64_t)p->C, len - c0);
            LATTN__TRY(lattn__la_plain_rows(t, x, p, a, in, tok0 + c0, h0 + j, L, v0, vw, 1));
            LATTN__TRY(lattn__la_plain_cols(t, x, p, s, L, !par));
            if (!par) LATTN__TRY(lattn__la_plain_scores(t, x, p, L, j, 0));
            LATTN__TRY(lattn__la_plain_rest(t, x, p, a, tok0 + c0, h0 + j, L, j, c0 / p->C, v0, vw,
                                            ck ? ck + ((h0 + j) * ckn + c0 / p->C) * p->Kf * a->V : NULL));
            if (!par) lattn_tiler_mark_step(t);
        }
        if (par) lattn_tiler_mark_step(t);   /* one body: the chunk of every head */
    }
    return lattn__la_states(t, x, p, a, 1, sq, h0, nh, v0, vw);
}

/* The work split of the chunked kernels, one rule for all of them: items of (sequence, block of hb
   heads, block of vw value columns). A gpu block holds one head and at most 64 value columns (fla's
   BV). Elsewhere the split is the coarsest that gives each thread an item: 2 heads an item, then 1,
   then value blocks halved down to 64 columns (multiples of 16); a finer split recomputes each
   chunk's scores per value block, which costs more than the balance it buys (measured at 16
   threads: GLA 5.1-5.8 ms with one item a thread, 8.0-9.0 with four, bench/RESULTS.md). The value
   columns of a linear-attention or delta-rule state are independent and an output element's
   arithmetic does not depend on the block that holds its column, so every split gives the same
   bits (tested at 1 to 16 threads). Only the cpu profile adapts the split to the call's threads (its
   counters then include the scores recomputed per value block); a device profile's split is its
   program, fixed by the shape. max_hb = 1 for kernels of one head an item. */
#define LATTN__ITEMS_PER_THREAD 1
static void lattn__split(const lattn_dev_profile *pr, int threads, int64_t n, int64_t H, int64_t V, int max_hb, int *hb, int *vw) {
    const int64_t want = (int64_t)LATTN__ITEMS_PER_THREAD * threads;
    *hb = pr->kind == LATTN_DEV_GPU ? 1 : (int)LATTN__MIN(H, (int64_t)max_hb);
    *vw = pr->kind == LATTN_DEV_GPU ? (int)LATTN__MIN(V, 64) : (int)V;
    if (pr->kind != LATTN_DEV_CPU) return;
    if (n * ((H + *hb - 1) / *hb) < want) *hb = 1;
    while (n * H * ((V + *vw - 1) / *vw) < want && *vw > 64) *vw = LATTN__MAX(64, (*vw / 2 + 15) / 16 * 16);
}

/* Tile plan from the profile: chunk C, partition tiles of K', value blocks of the moving limit, the
   work split for n sequences of H heads on `threads` threads. */
static lattn_status lattn__la_plan_make(lattn_ctx *ctx, const lattn_dev_profile *pr, int chunk, int64_t Kf,
                                        int64_t V, int64_t n, int64_t H, int max_hb, int threads, int normalize, int gate,
                                        int fixed, lattn__la_plan *p) {
    int64_t plim = pr->partitions > 0 ? pr->partitions : INT32_MAX, kp = Kf, rows;
    if (chunk < 0 || chunk > LATTN_MAX_CHUNK)
        return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_la_chunk: chunk = %d (0 = the profile's default, else 1 .. %d)", chunk, LATTN_MAX_CHUNK);
    p->C = chunk > 0 ? chunk : pr->default_chunk;
    rows = plim;                         /* token rows per block: partitions, stationary and transpose limits */
    if (pr->mm_mmax > 0) rows = LATTN__MIN(rows, (int64_t)pr->mm_mmax);
    if (pr->transpose_max > 0) rows = LATTN__MIN(rows, (int64_t)pr->transpose_max);
    p->P = (int)LATTN__MIN((int64_t)p->C, rows);
    p->pt = (p->C + p->P - 1) / p->P;
    if (p->pt > 1 && (gate != LATTN__GATE_NONE && !fixed))
        return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_la_chunk: chunk %d exceeds the %s profile's %lld partitions "
                           "(larger chunks are for linear attention and fixed decays)", p->C, pr->name, (long long)rows);
    if (p->pt > 4 || p->C % p->P != 0 || (pr->psum_bank_bytes > 0 && (size_t)p->C * sizeof(float) > pr->psum_bank_bytes))
        return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_la_chunk: chunk %d on %s must be a multiple of %lld, at most 4 "
                           "partition tiles and one PSUM bank of scores", p->C, pr->name, (long long)rows);
    if (pr->mm_kmax > 0) kp = LATTN__MIN(kp, pr->mm_kmax);
    if (pr->transpose_max > 0) kp = LATTN__MIN(kp, pr->transpose_max);
    kp = LATTN__MIN(kp, plim);
    if ((Kf + kp - 1) / kp > LATTN__LA_MAX_KT || V + 1 > INT32_MAX / 2 || Kf > INT32_MAX / 2)
        return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "lattn_la_chunk: K' = %lld needs more than %d partition tiles",
                           (long long)Kf, LATTN__LA_MAX_KT);
    p->kp = (int)kp;
    p->Kf = (int)Kf;
    p->nkt = (int)((Kf + kp - 1) / kp);
    lattn__split(pr, threads, n, H, V, max_hb, &p->hb, &p->vw);
    p->Vn = p->vw + (normalize ? 1 : 0);
    p->vb = p->Vn;
    if (pr->mm_nmax > 0) p->vb = LATTN__MIN(p->vb, pr->mm_nmax);
    if (pr->psum_bank_bytes > 0) p->vb = LATTN__MIN(p->vb, (int)(pr->psum_bank_bytes / sizeof(float)));
    p->fixed = fixed;
    p->gate = fixed ? LATTN__GATE_NONE : gate;
    p->sched = LATTN_SCHED_STREAMING;
    p->N = 0;
    p->Kg = gate == LATTN__GATE_KEY ? p->Kf : 1;
    return LATTN_OK;
}

/* The launch scaffolding every _chunk kernel shares: one tiler per thread (a core's SBUF / a GPU
   block's shared memory), each holding that kernel's tiles; at the end the first tiler error becomes
   the call's status and every tiler's counters are added to ctx->stats. `alloc` is the kernel's tile
   allocator (tiler NULL: only the sizes, host floats in *host). */
typedef lattn_status (*lattn__tiles_alloc_fn)(lattn_tiler *t, const void *plan, void *tiles, size_t *host_floats);
typedef struct lattn__team {
    lattn_tiler *tl[LATTN_MAX_THREADS];
    unsigned char *tiles;                  /* n tile sets of tsz bytes */
    size_t tsz;
    int n;
    int kept;                              /* the tilers and tiles belong to ctx->scratch */
} lattn__team;
/* A context's kept workspace: the last team's tilers and tile buffer, reused when large enough. */
struct lattn__scratch {
    lattn_tiler *tl[LATTN_MAX_THREADS];
    unsigned char *tiles;
    size_t tiles_bytes;
    int busy;                              /* a call holds it (contexts run one call at a time) */
};
/* A kept tiler as new: its host arena stays, everything else is reset to the profile p. */
static void lattn__tiler_renew(lattn_tiler *t, const lattn_dev_profile *p) {
    float *host = t->host, *ws = t->gemm_ws;
    size_t cap = t->host_cap;
    memset(t, 0, sizeof *t);
    t->prof = *p;
    t->host = host;
    t->gemm_ws = ws;
    t->host_cap = cap;
}
LATTN__DEF void lattn_ctx_trim(lattn_ctx *ctx) {
    int i;
    if (!ctx || !ctx->scratch) return;
    for (i = 0; i < LATTN_MAX_THREADS; i++) lattn_tiler_destroy(ctx, ctx->scratch->tl[i]);
    lattn__free(ctx, ctx->scratch->tiles);
    lattn__free(ctx, ctx->scratch);
    ctx->scratch = NULL;
}
LATTN__DEF void lattn_ctx_free(lattn_ctx *ctx) {
    lattn_allocator al;
    int nt, keep;
    if (!ctx) return;
    lattn_ctx_trim(ctx);
    al = ctx->allocator;
    nt = ctx->n_threads;
    keep = ctx->keep_workspace;
    lattn_ctx_init(ctx);
    ctx->allocator = al;
    ctx->n_threads = nt;
    ctx->keep_workspace = keep;
}
static lattn_status lattn__team_make(lattn_ctx *ctx, lattn__team *tm, const char *who, int64_t items, size_t tsz,
                                     lattn__tiles_alloc_fn alloc, const void *plan) {
    const lattn_dev_profile *pr = lattn_ctx_profile(ctx);
    lattn_status st = LATTN_OK;
    size_t host;
    int i;
    struct lattn__scratch *sc = NULL;
    memset(tm, 0, sizeof *tm);
    tm->tsz = tsz;
    tm->n = (int)LATTN__MIN((int64_t)lattn__threads(ctx), LATTN__MAX(items, 1));
    alloc(NULL, plan, NULL, &host);
    if (ctx && ctx->keep_workspace) {         /* the kept workspace, made on first use */
        if (!ctx->scratch) {
            ctx->scratch = (struct lattn__scratch *)lattn__alloc(ctx, sizeof *ctx->scratch);
            if (!ctx->scratch) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
            memset(ctx->scratch, 0, sizeof *ctx->scratch);
        }
        if (!ctx->scratch->busy) sc = ctx->scratch;
    }
    if (sc) {
        sc->busy = 1;
        tm->kept = 1;
        if (sc->tiles_bytes < tsz * (size_t)tm->n) {
            lattn__free(ctx, sc->tiles);
            sc->tiles_bytes = 0;
            sc->tiles = (unsigned char *)lattn__alloc(ctx, tsz * (size_t)tm->n);
            if (sc->tiles) sc->tiles_bytes = tsz * (size_t)tm->n;
        }
        tm->tiles = sc->tiles;
    } else tm->tiles = (unsigned char *)lattn__alloc(ctx, tsz * (size_t)tm->n);
    if (!tm->tiles) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    for (i = 0; i < tm->n && st == LATTN_OK; i++) {
        const char *msg;
        if (sc && sc->tl[i] && sc->tl[i]->host_cap >= host) lattn__tiler_renew(sc->tl[i], pr);
        else if (sc) {
            lattn_tiler_destroy(ctx, sc->tl[i]);
            sc->tl[i] = NULL;
            if ((st = lattn_tiler_create(ctx, pr, host, &sc->tl[i])) != LATTN_OK) break;
        } else if ((st = lattn_tiler_create(ctx, pr, host, &tm->tl[i])) != LATTN_OK) break;
        if (sc) tm->tl[i] = sc->tl[i];
        if ((st = alloc(tm->tl[i], plan, tm->tiles + tsz * (size_t)i, NULL)) != LATTN_OK) {
            lattn_tiler_error(tm->tl[i], &msg);
            st = lattn__fail(ctx, st, "%s: on profile %s: %s", who, pr->name, msg);
        }
    }
    return st;
}
/* Ends a team: `st` is the launch's status so far (not OK: the kernel never ran); returns the call's. */
static lattn_status lattn__team_end(lattn_ctx *ctx, lattn__team *tm, const char *who, lattn_status st) {
    int i, ran = st == LATTN_OK;
    for (i = 0; i < tm->n; i++) {
        const char *msg;
        lattn_status e;
        if (!tm->tl[i]) continue;
        if (ran) {
            e = lattn_tiler_error(tm->tl[i], &msg);
            if (e != LATTN_OK && st == LATTN_OK)
                st = lattn__fail(ctx, e, "%s: on profile %s: %s", who, lattn_ctx_profile(ctx)->name, msg);
            if (ctx) lattn__stats_merge(&ctx->stats, &tm->tl[i]->st);
        }
        if (!tm->kept) lattn_tiler_destroy(ctx, tm->tl[i]);
    }
    if (tm->kept) ctx->scratch->busy = 0;
    else lattn__free(ctx, tm->tiles);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
static lattn_status lattn__la_tiles_fn(lattn_tiler *t, const void *plan, void *tiles, size_t *host_floats) {
    lattn__la_tiles dummy;
    return lattn__la_tiles_alloc(t, (const lattn__la_plan *)plan, tiles ? (lattn__la_tiles *)tiles : &dummy, host_floats);
}

/* >>linattn.chunk --------------------------------------------------------------------------------
   per chunk: O = (s·QKᵀ ⊙ decay mask) V + s (Q ⊙ e^b) S,  S = diag(e^{b_L}) S + (K ⊙ e^{b_L - b})ᵀ V,
   on the tiler (the cpu profile's cache blocking, the Trainium and GPU paths) */
/* The forward on the tiler; ck (NULL: none) receives every chunk's start state (F14), [n_seqs][H][ckn][K'][V]. */
static lattn_status lattn__la_chunk_run(lattn_ctx *ctx, const lattn_la_args *a, float *ck, int64_t ckn) {
    lattn__la_dims dm;
    lattn__la_in in;
    lattn__la_plan plan;
    lattn__team tm;
    int64_t w, nblk, nvb;
    lattn_status st;
    const lattn_dev_profile *pr;
    lattn_la_args ar;
    float *gam = NULL;
    LATTN__TRY(lattn__la_check(ctx, "lattn_la_chunk", a, &dm));
    LATTN__TRY(lattn__profile(ctx, &pr));
    if (a->retnet_decay) {               /* RetNet's decays as resident float log gates */
        LATTN__TRY(lattn__alloc_floats(ctx, &gam, (size_t)a->H, "lattn_la_chunk"));
        lattn_retention_decay(a->H, gam);
        ar = *a;
        ar.g_gamma = gam;
        ar.retnet_decay = 0;
        st = lattn__la_chunk_run(ctx, &ar, ck, ckn);
        lattn__free(ctx, gam);
        return st;
    }
    memset(&plan, 0, sizeof plan);
    LATTN__TRY(lattn__la_plan_make(ctx, pr, a->chunk, dm.Kf, a->V, dm.n, a->H, 2, lattn__threads(ctx), a->normalize, dm.gate,
                                   a->g_gamma && !a->g && !a->gk, &plan));
    if (a->schedule != LATTN_SCHED_STREAMING) {
        int64_t sq, t0, len, mx = 0;
        if (a->schedule != LATTN_SCHED_CHUNK_PARALLEL || plan.gate || pr->kind == LATTN_DEV_GPU)
            return lattn__fail(ctx, a->schedule == LATTN_SCHED_CHUNK_PARALLEL ? LATTN_E_UNSUPPORTED : LATTN_E_DOMAIN,
                               "lattn_la_chunk: schedule %d (the chunk-parallel schedule takes linear attention or fixed decays, "
                               "off a gpu profile)", a->schedule);
        for (sq = 0; sq < dm.n; sq++) { lattn__seq(a->offsets, a->T, sq, &t0, &len); mx = LATTN__MAX(mx, len); }
        plan.sched = LATTN_SCHED_CHUNK_PARALLEL;
        plan.hb = (int)a->H;             /* one work item holds every head: the port's batched program */
        plan.N = (int)LATTN__MAX((int64_t)1, (mx + plan.C - 1) / plan.C);
        if ((int64_t)plan.hb * plan.N * plan.pt * plan.C > INT32_MAX / 2 || plan.hb > 1024)
            return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_la_chunk: the chunk-parallel scores of %lld heads x %d chunks do not fit a tile",
                               (long long)a->H, plan.N);
    }
    nblk = (a->H + plan.hb - 1) / plan.hb;
    nvb = (a->V + plan.vw - 1) / plan.vw;
    LATTN__TRY(lattn__la_map(ctx, a, &dm, &in, "lattn_la_chunk"));
    st = lattn__team_make(ctx, &tm, "lattn_la_chunk", dm.n * nblk * nvb, sizeof(lattn__la_tiles), lattn__la_tiles_fn, &plan);
    if (st == LATTN_OK) {
        LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(tm.n))
        for (w = 0; w < dm.n * nblk * nvb; w++) {
            int id = lattn__thread_id();
            int64_t sq = w / (nblk * nvb), h0 = (w / nvb % nblk) * plan.hb, v0 = (w % nvb) * plan.vw, tok0, len;
            const int nh = (int)LATTN__MIN((int64_t)plan.hb, a->H - h0), vw = (int)LATTN__MIN((int64_t)plan.vw, a->V - v0);
            lattn__seq(a->offsets, a->T, sq, &tok0, &len);
            if (tm.tl[id]->err != LATTN_OK) continue;
            if (plan.gate) lattn__la_chunk_block(tm.tl[id], (lattn__la_tiles *)tm.tiles + id, &plan, a, &in, dm.s, tok0, len, sq, h0, nh, v0, vw);
            else lattn__la_chunk_plain(tm.tl[id], (lattn__la_tiles *)tm.tiles + id, &plan, a, &in, dm.s, tok0, len, sq, h0, nh, v0, vw,
                                       ck ? ck + sq * a->H * ckn * dm.Kf * a->V : NULL, ckn);
        }
    }
    st = lattn__team_end(ctx, &tm, "lattn_la_chunk", st);
    lattn__free(ctx, in.buf);
    return st;
}
LATTN__DEF lattn_status lattn_la_chunk(lattn_ctx *ctx, const lattn_la_args *a) { return lattn__la_chunk_run(ctx, a, NULL, 0); }

/* >>linattn.tiled_backward -----------------------------------------------------------------------
   The fixed-decay backward on a device profile's tiler, spec sbuf_tiler.md §5.3 chunk for chunk.
   Per (head, chunk of L tokens), chunks in reverse, with U = ∂ℒ/∂S_n resident and Mt[c][r] =
   s·γ^{r-c} (r >= c), qd[r] = s·γ^{r+1}, w[c] = γ^{L-1-c}:
     loads (5)        Q, K, V, dO rows; the checkpoint S_{n-1} (F14 of the forward)
     columns (12)     Qc = Qᵀ, Kc = Kᵀ, Vc = Vᵀ, dOc = dOᵀ (transpose + copy; V, dO in 128-row tiles)
     Pᵀ = (K Qᵀ) ⊙ Mt,  dPᵀ = (V dOᵀ) ⊙ Mt,  dP = (dPᵀ)ᵀ,  P = (Pᵀ)ᵀ   (all [C][C], keys c x queries r)
     dQ = (dO Sᵀ) ⊙ qd + dP K                 (Sᵀ: S transposed in 128-column blocks)
     dK = (V Uᵀ) ⊙ w + dPᵀ Q
     dV = (K U) ⊙ w + Pᵀ dO
     U  = γ^L U + (Q ⊙ qd)ᵀ dO
   51 instructions for K <= 128 and V in two 128-row tiles; a ragged chunk builds its own w (2).
   Per head once: Mt, qd, w (7), U from dht (1), dh0 out (1). The call first runs the forward with
   F14 (lattn__la_chunk_run, 17 per head and chunk on trn2), so forward + backward is 68. Items are
   (sequence, head) in the streaming schedule, a chunk body per head and chunk; in the chunk-parallel
   schedule (sequence, every head) with one body per chunk for all heads, the port's unrolled graph.
   The plan: K <= the partitions, C <= the partitions (one token tile), V within one PSUM bank. */
typedef struct lattn__la_tb {
    lattn_tile qr, kr, vr, dor, qc, kc, s, u, pt, dpt, p, dp, mt, qd, wc, wr, qdr, ob;
    lattn_tile vc[4], dc[4], st[4], ut[4];
    lattn_tile pa, ptr, pq1, pq2, pk1, pk2, pv1, pv2;          /* PSUM: eight banks */
} lattn__la_tb;
typedef struct lattn__la_tbplan { int C, K, V, nvt, hb, par; } lattn__la_tbplan;
static lattn_status lattn__la_tb_alloc(lattn_tiler *t, const lattn__la_tbplan *p, lattn__la_tb *x, size_t *host_floats) {
    lattn__tplan list[48];
    int n = 0, i, tf = LATTN__MAX(p->C, p->K);
    LATTN__PLAN(&x->qr, 2, p->C, p->K);
    LATTN__PLAN(&x->kr, 2, p->C, p->K);
    LATTN__PLAN(&x->vr, 2, p->C, p->V);
    LATTN__PLAN(&x->dor, 2, p->C, p->V);
    LATTN__PLAN(&x->qc, 2, p->K, p->C);
    LATTN__PLAN(&x->kc, 2, p->K, p->C);
    for (i = 0; i < p->nvt; i++) {
        const int rows = LATTN__MIN(128, p->V - 128 * i);
        LATTN__PLAN(&x->vc[i], 2, rows, p->C);
        LATTN__PLAN(&x->dc[i], 2, rows, p->C);
        LATTN__PLAN(&x->st[i], 0, rows, p->K);
        LATTN__PLAN(&x->ut[i], 0, rows, p->K);
    }
    LATTN__PLAN(&x->s, 0, p->K, p->V);
    LATTN__PLAN(&x->u, 0, p->K, p->hb * p->V);
    LATTN__PLAN(&x->pt, 0, p->C, p->C);
    LATTN__PLAN(&x->dpt, 0, p->C, p->C);
    LATTN__PLAN(&x->p, 0, p->C, p->C);
    LATTN__PLAN(&x->dp, 0, p->C, p->C);
    LATTN__PLAN(&x->mt, 0, p->C, p->hb * p->C);
    LATTN__PLAN(&x->qd, 0, p->C, p->hb);
    LATTN__PLAN(&x->wc, 0, p->C, p->hb);
    LATTN__PLAN(&x->wr, 0, p->C, 1);
    LATTN__PLAN(&x->qdr, 0, p->C, p->K);
    LATTN__PLAN(&x->ob, 2, p->C, LATTN__MAX(p->K, p->V));
    LATTN__PLAN(&x->pa, 1, p->C, p->C);
    LATTN__PLAN(&x->ptr, 1, 128, tf);                     /* every transpose's output: at most 128 rows */
    LATTN__PLAN(&x->pq1, 1, LATTN__MAX(p->C, p->K), LATTN__MAX(p->K, p->V));
    LATTN__PLAN(&x->pq2, 1, p->C, p->K);
    LATTN__PLAN(&x->pk1, 1, p->C, p->K);
    LATTN__PLAN(&x->pk2, 1, p->C, p->K);
    LATTN__PLAN(&x->pv1, 1, p->C, p->V);
    LATTN__PLAN(&x->pv2, 1, p->C, p->V);
    return lattn__tplan_apply(t, list, n, host_floats);
}
static lattn_status lattn__la_tb_fn(lattn_tiler *t, const void *plan, void *tiles, size_t *host_floats) {
    lattn__la_tb dummy;
    return lattn__la_tb_alloc(t, (const lattn__la_tbplan *)plan, tiles ? (lattn__la_tb *)tiles : &dummy, host_floats);
}
/* dst [cols][rows] = src [rows][cols] through the transpose PSUM tile: transpose + copy. */
static lattn_status lattn__la_tb_tr(lattn_tiler *t, lattn__la_tb *x, lattn_tile *dst, const lattn_tile *src) {
    lattn_tile ps = lattn_tile_view(&x->ptr, 0, src->nf, 0, src->np);
    LATTN__TRY(lattn_transpose(t, &ps, src));
    return lattn_tile_copy(t, dst, &ps);
}
/* One (head, chunk) of the reverse loop: L tokens from tok, head h (j-th of the item), S_{n-1} at ck. */
static lattn_status lattn__la_tb_chunk(lattn_tiler *t, lattn__la_tb *x, const lattn__la_tbplan *p, const lattn_la_args *a,
                                       const lattn_la_grads *g, int64_t tok, int64_t h, int j, int L, const float *ck, float lg) {
    const int64_t ldk = a->H * a->K, ldv = a->H * a->V;
    const int K = p->K, V = p->V;
    lattn_tile qr = lattn_tile_view(&x->qr, 0, L, 0, K), kr = lattn_tile_view(&x->kr, 0, L, 0, K);
    lattn_tile vr = lattn_tile_view(&x->vr, 0, L, 0, V), dor = lattn_tile_view(&x->dor, 0, L, 0, V);
    lattn_tile qc = lattn_tile_view(&x->qc, 0, K, 0, L), kc = lattn_tile_view(&x->kc, 0, K, 0, L);
    lattn_tile pa = lattn_tile_view(&x->pa, 0, L, 0, L), pt = lattn_tile_view(&x->pt, 0, L, 0, L), dpt = lattn_tile_view(&x->dpt, 0, L, 0, L);
    lattn_tile pm = lattn_tile_view(&x->p, 0, L, 0, L), dp = lattn_tile_view(&x->dp, 0, L, 0, L);
    lattn_tile mt = lattn_tile_view(&x->mt, 0, L, j * p->C, L), qd = lattn_tile_view(&x->qd, 0, L, j, 1);
    lattn_tile w = lattn_tile_view(&x->wc, 0, L, j, 1), u = lattn_tile_view(&x->u, 0, K, j * V, V);
    lattn_tile ok = lattn_tile_view(&x->ob, 0, L, 0, K), ov = lattn_tile_view(&x->ob, 0, L, 0, V), v1, v2;
    lattn_tile pq1 = lattn_tile_view(&x->pq1, 0, L, 0, K), pq2 = lattn_tile_view(&x->pq2, 0, L, 0, K);
    lattn_tile pk1 = lattn_tile_view(&x->pk1, 0, L, 0, K), pk2 = lattn_tile_view(&x->pk2, 0, L, 0, K);
    lattn_tile pv1 = lattn_tile_view(&x->pv1, 0, L, 0, V), pv2 = lattn_tile_view(&x->pv2, 0, L, 0, V);
    lattn_tile pu = lattn_tile_view(&x->pq1, 0, K, 0, V);
    int i;
    LATTN__TRY(lattn_dma_load(t, &qr, a->q + tok * ldk + h * K, ldk));                            /* loads (5) */
    LATTN__TRY(lattn_dma_load(t, &kr, a->k + tok * ldk + h * K, ldk));
    LATTN__TRY(lattn_dma_load(t, &vr, a->v + tok * ldv + h * V, ldv));
    LATTN__TRY(lattn_dma_load(t, &dor, g->dout + tok * ldv + h * V, ldv));
    LATTN__TRY(lattn_dma_load(t, &x->s, ck, V));
    LATTN__TRY(lattn__la_tb_tr(t, x, &qc, &qr));                                                  /* columns (12) */
    LATTN__TRY(lattn__la_tb_tr(t, x, &kc, &kr));
    for (i = 0; i < p->nvt; i++) {
        const int rows = LATTN__MIN(128, V - 128 * i);
        v1 = lattn_tile_view(&x->vc[i], 0, rows, 0, L);
        v2 = lattn_tile_view(&vr, 0, L, 128 * i, rows);
        LATTN__TRY(lattn__la_tb_tr(t, x, &v1, &v2));
        v1 = lattn_tile_view(&x->dc[i], 0, rows, 0, L);
        v2 = lattn_tile_view(&dor, 0, L, 128 * i, rows);
        LATTN__TRY(lattn__la_tb_tr(t, x, &v1, &v2));
    }
    LATTN__TRY(lattn_matmul(t, &pa, &kc, &qc, 0));                                                /* Aᵀ */
    LATTN__TRY(lattn_tile_tt(t, &pt, &pa, &mt, LATTN_TOP_MUL));                                   /* Pᵀ = Aᵀ ⊙ Mt */
    for (i = 0; i < p->nvt; i++) {                                                                /* (V dOᵀ)ᵀ */
        v1 = lattn_tile_view(&x->vc[i], 0, LATTN__MIN(128, V - 128 * i), 0, L);
        v2 = lattn_tile_view(&x->dc[i], 0, LATTN__MIN(128, V - 128 * i), 0, L);
        LATTN__TRY(lattn_matmul(t, &pa, &v1, &v2, i > 0));
    }
    LATTN__TRY(lattn_tile_tt(t, &dpt, &pa, &mt, LATTN_TOP_MUL));                                  /* dPᵀ */
    LATTN__TRY(lattn__la_tb_tr(t, x, &dp, &dpt));                                                 /* dP */
    LATTN__TRY(lattn_matmul(t, &pq1, &dpt, &kr, 0));                                              /* dQ intra */
    for (i = 0; i < p->nvt; i++) {                                                                /* Sᵀ */
        const int rows = LATTN__MIN(128, V - 128 * i);
        v1 = lattn_tile_view(&x->st[i], 0, rows, 0, K);
        v2 = lattn_tile_view(&x->s, 0, K, 128 * i, rows);
        LATTN__TRY(lattn__la_tb_tr(t, x, &v1, &v2));
    }
    for (i = 0; i < p->nvt; i++) {                                                                /* dQ inter = dO Sᵀ */
        v1 = lattn_tile_view(&x->dc[i], 0, LATTN__MIN(128, V - 128 * i), 0, L);
        v2 = lattn_tile_view(&x->st[i], 0, LATTN__MIN(128, V - 128 * i), 0, K);
        LATTN__TRY(lattn_matmul(t, &pq2, &v1, &v2, i > 0));
    }
    LATTN__TRY(lattn_tile_stt(t, &ok, &pq2, &qd, 0.0f, &pq1));                                    /* dQ */
    LATTN__TRY(lattn_dma_store(t, g->dq + tok * ldk + h * K, ldk, &ok));
    LATTN__TRY(lattn_matmul(t, &pk1, &dp, &qr, 0));                                               /* dK intra */
    for (i = 0; i < p->nvt; i++) {                                                                /* Uᵀ */
        const int rows = LATTN__MIN(128, V - 128 * i);
        v1 = lattn_tile_view(&x->ut[i], 0, rows, 0, K);
        v2 = lattn_tile_view(&u, 0, K, 128 * i, rows);
        LATTN__TRY(lattn__la_tb_tr(t, x, &v1, &v2));
    }
    for (i = 0; i < p->nvt; i++) {                                                                /* dK state = V Uᵀ */
        v1 = lattn_tile_view(&x->vc[i], 0, LATTN__MIN(128, V - 128 * i), 0, L);
        v2 = lattn_tile_view(&x->ut[i], 0, LATTN__MIN(128, V - 128 * i), 0, K);
        LATTN__TRY(lattn_matmul(t, &pk2, &v1, &v2, i > 0));
    }
    if (L < p->C) {                      /* a ragged chunk: its own w = γ^{L-1-c} */
        w = lattn_tile_view(&x->wr, 0, L, 0, 1);
        LATTN__TRY(lattn_tile_iota(t, &w, (float)(L - 1), -1, 0));
        LATTN__TRY(lattn_tile_act(t, &w, &w, LATTN_ACT_EXP, lg, 0.0f));
    }
    LATTN__TRY(lattn_tile_stt(t, &ok, &pk2, &w, 0.0f, &pk1));                                     /* dK */
    LATTN__TRY(lattn_dma_store(t, g->dk + tok * ldk + h * K, ldk, &ok));
    LATTN__TRY(lattn__la_tb_tr(t, x, &pm, &pt));                                                  /* P */
    LATTN__TRY(lattn_matmul(t, &pv1, &pm, &dor, 0));                                              /* dV intra */
    LATTN__TRY(lattn_matmul(t, &pv2, &kc, &u, 0));                                                /* dV state = K U */
    LATTN__TRY(lattn_tile_stt(t, &ov, &pv2, &w, 0.0f, &pv1));                                     /* dV */
    LATTN__TRY(lattn_dma_store(t, g->dv + tok * ldv + h * V, ldv, &ov));
    v1 = lattn_tile_view(&x->qdr, 0, L, 0, K);
    LATTN__TRY(lattn_tile_ts(t, &v1, &qr, &qd, 0.0f, LATTN_TOP_MUL));                             /* Qd = Q ⊙ qd */
    LATTN__TRY(lattn_matmul(t, &pu, &v1, &dor, 0));
    return lattn_tile_stt(t, &u, &u, NULL, expf((float)L * lg), &pu);                             /* U = γ^L U + Qdᵀ dO */
}
/* One item: sequence sq (tok0, len), heads [h0, h0 + nh); the sequence's checkpoints ck [H][ckn][K][V]. */
static lattn_status lattn__la_tb_item(lattn_tiler *t, lattn__la_tb *x, const lattn__la_tbplan *p, const lattn_la_args *a,
                                      const lattn_la_grads *g, float s, int64_t tok0, int64_t len, int64_t sq, int64_t h0, int nh,
                                      const float *ck, int64_t ckn) {
    const int C = p->C, K = p->K, V = p->V;
    int64_t c0;
    int j;
    for (j = 0; j < nh; j++) {           /* per head: Mt = s·γ^{r-c} (r >= c), qd = s·γ^{r+1}, w = γ^{C-1-c}; U from dht */
        const float lg = a->g_gamma[h0 + j] < LATTN_LOG_GATE_MIN ? LATTN_LOG_GATE_MIN : a->g_gamma[h0 + j];
        lattn_tile mt = lattn_tile_view(&x->mt, 0, C, j * C, C), qd = lattn_tile_view(&x->qd, 0, C, j, 1);
        lattn_tile w = lattn_tile_view(&x->wc, 0, C, j, 1), u = lattn_tile_view(&x->u, 0, K, j * V, V);
        LATTN__TRY(lattn_tile_iota(t, &mt, 0.0f, -1, 1));
        LATTN__TRY(lattn_tile_act(t, &mt, &mt, LATTN_ACT_EXP, lg, logf(s)));
        LATTN__TRY(lattn_tile_select_tri(t, &mt, &mt, 0, 0.0f));
        LATTN__TRY(lattn_tile_iota(t, &qd, 1.0f, 1, 0));
        LATTN__TRY(lattn_tile_act(t, &qd, &qd, LATTN_ACT_EXP, lg, logf(s)));
        LATTN__TRY(lattn_tile_iota(t, &w, (float)(C - 1), -1, 0));
        LATTN__TRY(lattn_tile_act(t, &w, &w, LATTN_ACT_EXP, lg, 0.0f));
        if (g->dht) LATTN__TRY(lattn_dma_load(t, &u, g->dht + (sq * a->H + h0 + j) * K * V, V));
        else LATTN__TRY(lattn_tile_memset(t, &u, 0.0f));
    }
    for (c0 = (len - 1) / C * C; len > 0 && c0 >= 0; c0 -= C) {
        const int L = (int)LATTN__MIN((int64_t)C, len - c0);
        for (j = 0; j < nh; j++) {
            const float lg = a->g_gamma[h0 + j] < LATTN_LOG_GATE_MIN ? LATTN_LOG_GATE_MIN : a->g_gamma[h0 + j];
            LATTN__TRY(lattn__la_tb_chunk(t, x, p, a, g, tok0 + c0, h0 + j, j, L, ck + ((h0 + j) * ckn + c0 / C) * K * V, lg));
            if (!p->par) lattn_tiler_mark_step(t);
        }
        if (p->par) lattn_tiler_mark_step(t);
    }
    for (j = 0; g->dh0 && j < nh; j++) {
        lattn_tile u = lattn_tile_view(&x->u, 0, K, j * V, V);
        LATTN__TRY(lattn_dma_store(t, g->dh0 + (sq * a->H + h0 + j) * K * V, V, &u));
    }
    return LATTN_OK;
}
/* The backward on a device profile: fixed decays only (the Laplace mixer), identity map, no
   normaliser. The forward with checkpoints, then the reverse loop; dq, dk, dv and dh0 written. */
static lattn_status lattn__la_backward_tiled(lattn_ctx *ctx, const lattn_la_args *a, const lattn_la_grads *g, const lattn__la_dims *dm,
                                             const char *who) {
    const lattn_dev_profile *pr = lattn_ctx_profile(ctx);
    const int64_t C = a->chunk > 0 ? a->chunk : pr->default_chunk, plim = pr->partitions > 0 ? pr->partitions : 128;
    lattn__la_tbplan plan;
    lattn__team tm;
    lattn_la_args fa;
    float *ck = NULL, *o = NULL;
    int64_t sq, w, maxlen = 0, ckn, nblk;
    size_t nck, no;
    lattn_status st;
    if (!a->g_gamma || a->g || a->gk || a->fmap != LATTN_FMAP_IDENTITY || a->normalize || a->K > plim || C > plim ||
        a->V > 512 || pr->kind != LATTN_DEV_NEURON)
        return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: on profile %s the tiled backward takes fixed decays (g_gamma or retnet_decay), "
                           "the identity map without the normaliser, K and the chunk within %lld partitions and V <= 512 (got chunk %lld)",
                           who, pr->name, (long long)plim, (long long)C);
    if (g->dgk || g->dg || g->dz0 || g->dfmap_w || g->dfmap_b || g->dfmap_wk || g->dfmap_bk)
        return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: fixed decays have no gate, normaliser or map gradient to write", who);
    if (a->T > 0 && (!g->dq || !g->dk || !g->dv))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: the tiled backward writes dq, dk and dv: one of them is NULL", who);
    for (sq = 0; sq < dm->n; sq++) {
        int64_t t0, len;
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        maxlen = LATTN__MAX(maxlen, len);
    }
    ckn = LATTN__MAX((maxlen + C - 1) / C, 1);
    if (lattn_size_mul(&nck, (size_t)(dm->n * a->H * ckn), (size_t)(a->K * a->V)) != LATTN_OK ||
        lattn_size_mul(&no, (size_t)(a->B * a->T * a->H), (size_t)a->V) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the checkpoints overflow", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &ck, nck + no + 1, who));
    o = ck + nck;                        /* the forward's output, stored as F13 does (not returned) */
    fa = *a;
    fa.o = o;
    fa.ht = NULL;
    fa.zt = NULL;
    fa.o64 = NULL;
    fa.ht64 = NULL;
    st = lattn__la_chunk_run(ctx, &fa, ck, ckn);
    plan.C = (int)C;
    plan.K = (int)a->K;
    plan.V = (int)a->V;
    plan.nvt = (int)((a->V + 127) / 128);
    plan.par = a->schedule == LATTN_SCHED_CHUNK_PARALLEL;
    plan.hb = plan.par ? (int)a->H : 1;
    nblk = (a->H + plan.hb - 1) / plan.hb;
    if (st == LATTN_OK) {
        st = lattn__team_make(ctx, &tm, who, dm->n * nblk, sizeof(lattn__la_tb), lattn__la_tb_fn, &plan);
        if (st == LATTN_OK) {
            LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(tm.n))
            for (w = 0; w < dm->n * nblk; w++) {
                int id = lattn__thread_id();
                int64_t s2 = w / nblk, h0 = (w % nblk) * plan.hb, tok0, len;
                lattn__seq(a->offsets, a->T, s2, &tok0, &len);
                if (tm.tl[id]->err == LATTN_OK)
                    lattn__la_tb_item(tm.tl[id], (lattn__la_tb *)tm.tiles + id, &plan, a, g, dm->s, tok0, len, s2, h0,
                                      (int)LATTN__MIN((int64_t)plan.hb, a->H - h0), ck + s2 * a->H * ckn * a->K * a->V, ckn);
            }
        }
        st = lattn__team_end(ctx, &tm, who, st);
    }
    lattn__free(ctx, ck);
    return st;
}

/* >>linattn.chunk_backward -----------------------------------------------------------------------
   chunks in reverse with U = ∂ℒ/∂S_n (from dht), b the chunk-local inclusive cumsum of the clamped
   log gates (0 without gates), Q̃ = s·Φq ⊙ e^{b}, K̃ = Φk ⊙ e^{-b}, w = e^{b_last - b}:
       A   = tril(Q̃ K̃ᵀ)                       (the forward's scores, recomputed)
       D   = tril(dO Vᵀ)
       dΦq = s·e^{b} ⊙ (D K̃ + dO S_{n-1}ᵀ)    dΦk = e^{-b} ⊙ (Dᵀ Q̃) + w ⊙ (V Uᵀ)
       dV  = Aᵀ dO + (Φk ⊙ w) U                U  = diag(e^{b_last}) U + Q̃ᵀ dO
   then dh0 = U, and the log gates by fla's identity (spec gla_laplace.md §5.7)
       dgk_t = Σ_{τ>=t} (Φq ⊙ dΦq − Φk ⊙ dΦk)_τ + Σ_j (S_T ⊙ dS_T)[·][j]   (summed over keys for g)
   on the SGEMM kernel */
/* --- _chunk_backward: the chunked backward, chunk-start states checkpointed ------------------- */
/* The state S_{n-1} at the start of every chunk comes from a forward pass over the chunk states
   alone (one product per chunk, no outputs), kept in the work item's workspace: the checkpoints
   F14 of spec sbuf_tiler.md §5.2, made by the backward call itself. Normalised, the value rows
   carry a ones column (its state column is z), the output's numerator and denominator come back
   from A and S_{n-1}, and dO becomes [dO / den, -dO·num / den²]: the same products, one column
   wider. The factors e^{-b} stay below e^{LATTN__LA_SPAN} when the gates fall by at most the span
   within the chunk; a chunk with stronger gates sums its scores and their gradients element by
   element, every exponent b_r - b_c <= 0. */
typedef struct lattn__la_bw {
    float *ck, *U;                       /* chunk-start states [N + 1][K'][Vn] (the last: S_T), ∂ℒ/∂S */
    float *q, *k, *qt, *kt, *kd, *gq, *gk, *tk;   /* [C][K'] rows: Φq, Φk (element-wise chunks), Q̃, K̃, Φk ⊙ w, products */
    float *b, *eb, *ei, *wk;             /* [C][Kg]: b, e^{b}, e^{-b}, w */
    float *v, *dO, *dv, *on;             /* [C][Vn]: V', dO', dV', the recomputed O' (normalised) */
    const float *vp, *dOp;               /* V' and dO' rows as the products read them: v, dO or the inputs */
    int64_t ldv, ldo;
    float *A, *D;                        /* [C][C] */
    float *gw;                           /* packing */
    float *acc, *cmp, *fin;              /* [K']: the gate identity's running sums (and their compensation), Σ_j S_T ⊙ dS_T */
    double sum, fsum;                    /* per head: the running sum, Σ fin */
} lattn__la_bw;
/* chunk C, K', gate columns Kg, value columns Vn (V + the ones column), chunks N, packing floats gw */
typedef struct lattn__la_bw_dims { int64_t C, Kf, Kg, Vn, N, gw; } lattn__la_bw_dims;
static void lattn__la_bw_carve(const lattn__la_bw_dims *z, float *base, lattn__la_bw *w) {
    float **const part[24] = { &w->ck, &w->U, &w->q, &w->k, &w->qt, &w->kt, &w->kd, &w->gq, &w->gk, &w->tk,
                               &w->b, &w->eb, &w->ei, &w->wk, &w->v, &w->dO, &w->dv, &w->on, &w->A, &w->D,
                               &w->acc, &w->cmp, &w->fin, &w->gw };
    const int64_t CK = z->C * z->Kf, CG = z->C * z->Kg, CV = z->C * z->Vn, SV = z->Kf * z->Vn;
    const int64_t n[24] = { (z->N + 1) * SV, SV, CK, CK, CK, CK, CK, CK, CK, CK, CG, CG, CG, CG, CV, CV, CV, CV,
                            z->C * z->C, z->C * z->C, z->Kf, z->Kf, z->Kf, z->gw };
    lattn__carve_floats(base, part, n, 24);
}
/* dst[r][i] (row stride ld) = s·(fa[r][i]·x[r][i] + fb[r][i]·y[r][i]) for L rows of K' (x: row stride
   ldx, y: [L][K']), the factors [L][Kg] broadcast over the keys when Kg = 1; fa NULL: 1; y NULL: no
   second term. */
static void lattn__la_bw_rows(float *dst, int64_t ld, float s, const float *fa, const float *x, int64_t ldx, const float *fb,
                              const float *y, int64_t L, int64_t Kf, int64_t Kg) {
    const lattn__vf vs = lattn__vset1(s);
    int64_t r, i;
    for (r = 0; r < L; r++) {
        float *d = dst + r * ld;
        const float *xr = x + r * ldx, *yr = y ? y + r * Kf : NULL, *ar = fa ? fa + r * Kg : NULL, *br = fb ? fb + r * Kg : NULL;
        const float sa = s * (ar ? ar[0] : 1.0f), sb = s * (br ? br[0] : 0.0f);   /* Kg = 1 */
        const lattn__vf va = lattn__vset1(sa), vb = lattn__vset1(sb);
        for (i = 0; i + LATTN__VW <= Kf; i += LATTN__VW) {
            lattn__vf t = lattn__vload(xr + i);
            if (Kg > 1) {
                if (ar) t = lattn__vmul(lattn__vload(ar + i), t);
                if (yr) t = lattn__vfma(lattn__vload(br + i), lattn__vload(yr + i), t);
                t = lattn__vmul(vs, t);
            } else {
                t = lattn__vmul(va, t);
                if (yr) t = lattn__vfma(vb, lattn__vload(yr + i), t);
            }
            lattn__vstore(d + i, t);
        }
        for (; i < Kf; i++) {
            if (Kg > 1) d[i] = s * ((ar ? ar[i] : 1.0f) * xr[i] + (yr ? br[i] * yr[i] : 0.0f));
            else d[i] = sa * xr[i] + (yr ? sb * yr[i] : 0.0f);
        }
    }
}
/* One chunk of L tokens from tok: the gates' cumsum b and w = e^{b_last - b}, Φk ⊙ w, the value rows
   (a copy with the ones column when normalised); full (the backward's loads) adds e^{b}, Q̃, and K̃
   with e^{-b} when the chunk fits the span, else the rows Φq, Φk for the element-wise sums.
   Returns whether it fits. */
static int lattn__la_bw_load(const lattn_la_args *a, const lattn__la_in *in, const lattn__la_dims *dm,
                             const lattn__la_bw_dims *z, lattn__la_bw *w, int64_t tok, int64_t h, int L, int full) {
    const int64_t Kf = z->Kf, Kg = z->Kg, Vn = z->Vn, ld = a->H * Kf, LG = L * Kg;
    const float *Q = in->q + tok * ld + h * Kf, *K = in->k + tok * ld + h * Kf;
    int64_t r, i;
    int fits = 1;
    for (r = 0; r < L; r++) {            /* b_r = b_{r-1} + max(gate_r, LATTN_LOG_GATE_MIN) */
        const int64_t row = (tok + r) * a->H + h;
        const float *gr = a->gk ? a->gk + row * a->K : a->g ? a->g + row : a->g_gamma ? a->g_gamma + h : NULL;
        float *br = w->b + r * Kg;
        const float *bp = r > 0 ? br - Kg : NULL;
        for (i = 0; i + LATTN__VW <= Kg && gr; i += LATTN__VW) {
            const lattn__vf gv = lattn__vmax(lattn__vload(gr + i), lattn__vset1(LATTN_LOG_GATE_MIN));
            lattn__vstore(br + i, bp ? lattn__vadd(lattn__vload(bp + i), gv) : gv);
        }
        for (; i < Kg; i++) br[i] = (bp ? bp[i] : 0.0f) + (gr ? LATTN__MAX(gr[i], LATTN_LOG_GATE_MIN) : 0.0f);
    }
    for (i = 0; i < Kg; i++) fits &= w->b[(L - 1) * Kg + i] >= -LATTN__LA_SPAN;
    for (r = 0; r < L; r++)
        for (i = 0; i < Kg; i++) w->ei[r * Kg + i] = w->b[(L - 1) * Kg + i] - w->b[r * Kg + i];
    lattn_vec_exp((size_t)LG, w->ei, w->wk);
    lattn__la_bw_rows(w->kd, Kf, 1.0f, w->wk, K, ld, NULL, NULL, L, Kf, Kg);
    if (a->normalize) {
        for (r = 0; r < L; r++) {
            memcpy(w->v + r * Vn, a->v + ((tok + r) * a->H + h) * a->V, (size_t)a->V * sizeof(float));
            w->v[r * Vn + a->V] = 1.0f;
        }
        w->vp = w->v;
        w->ldv = Vn;
    } else {
        w->vp = a->v + (tok * a->H + h) * a->V;
        w->ldv = a->H * a->V;
    }
    if (!full) return fits;
    lattn_vec_exp((size_t)LG, w->b, w->eb);
    lattn__la_bw_rows(w->qt, Kf, dm->s, w->eb, Q, ld, NULL, NULL, L, Kf, Kg);
    if (fits) {
        for (r = 0; r < LG; r++) w->ei[r] = -w->b[r];
        lattn_vec_exp((size_t)LG, w->ei, w->ei);
        lattn__la_bw_rows(w->kt, Kf, 1.0f, w->ei, K, ld, NULL, NULL, L, Kf, Kg);
    } else
        for (r = 0; r < L; r++) {
            memcpy(w->q + r * Kf, Q + r * ld, (size_t)Kf * sizeof(float));
            memcpy(w->k + r * Kf, K + r * ld, (size_t)Kf * sizeof(float));
        }
    return fits;
}
/* A chunk whose gates fall by more than the span, element by element (every exponent <= 0):
   grads 0: the scores A[r][c] = s Σ_i Φq_r Φk_c e^{b_r - b_c};  grads 1: tk = Σ_c D[r][c] Φk_c e^{b_r - b_c},
   gk = s Σ_r D[r][c] Φq_r e^{b_r - b_c}. */
static void lattn__la_bw_direct(const lattn__la_dims *dm, const lattn__la_bw_dims *z, lattn__la_bw *w, int L, int grads) {
    const int64_t Kf = z->Kf, Kg = z->Kg;
    int64_t r, c, i;
    if (grads) {
        memset(w->tk, 0, (size_t)(L * Kf) * sizeof(float));
        memset(w->gk, 0, (size_t)(L * Kf) * sizeof(float));
    }
    for (r = 0; r < L; r++)
        for (c = 0; c <= r; c++) {
            float acc = 0.0f;
            for (i = 0; i < Kf; i++) {
                const int64_t gi = Kg > 1 ? i : 0;
                const float e = expf(w->b[r * Kg + gi] - w->b[c * Kg + gi]);
                if (!grads) acc += w->q[r * Kf + i] * w->k[c * Kf + i] * e;
                else {
                    w->tk[r * Kf + i] += w->D[r * L + c] * w->k[c * Kf + i] * e;
                    w->gk[c * Kf + i] += dm->s * w->D[r * L + c] * w->q[r * Kf + i] * e;
                }
            }
            if (!grads) w->A[r * L + c] = dm->s * acc;
        }
}
/* The backward of one chunk (rows loaded): dΦq, dΦk into their rows (stride H·K'), dv, and U
   becomes ∂ℒ/∂S_{n-1}. S0 is the chunk's start state. */
static void lattn__la_bw_chunk(const lattn_la_args *a, const lattn_la_grads *g, const lattn__la_dims *dm,
                               const lattn__la_bw_dims *z, lattn__la_bw *w, const float *S0, int64_t tok, int64_t h,
                               int L, int fits, float *dphq, float *dphk) {
    const int64_t Kf = z->Kf, Kg = z->Kg, Vn = z->Vn, V = a->V, ld = a->H * Kf, ldv = w->ldv;
    const float *Vr = w->vp;
    float *dv = Vn == V && g->dv ? g->dv + (tok * a->H + h) * V : w->dv;
    int64_t r, j, ldo = Vn, lddv = Vn == V && g->dv ? a->H * V : Vn;
    memset(w->A, 0, (size_t)(L * L) * sizeof(float));
    if (fits) lattn__sgemm(LATTN_GEMM_TRANS_B | LATTN_GEMM_LOWER, L, L, Kf, w->qt, Kf, w->kt, Kf, w->A, L, w->gw);
    else lattn__la_bw_direct(dm, z, w, L, 0);
    if (a->normalize) {                  /* O' = A V' + Q̃ S0: numerator and denominator; dO' = [dO / den, -dO·num / den²] */
        lattn__sgemm(0, L, Vn, L, w->A, L, Vr, ldv, w->on, Vn, w->gw);
        lattn__sgemm(LATTN_GEMM_ACCUMULATE, L, Vn, Kf, w->qt, Kf, S0, Vn, w->on, Vn, w->gw);
        for (r = 0; r < L; r++) {
            const float *dOr = g->dout + ((tok + r) * a->H + h) * V;
            const float den = w->on[r * Vn + V] + lattn__la_eps(a);
            float dd = 0.0f;
            for (j = 0; j < V; j++) dd -= dOr[j] * w->on[r * Vn + j] / (den * den);
            for (j = 0; j < V; j++) w->dO[r * Vn + j] = dOr[j] / den;
            w->dO[r * Vn + V] = dd;
        }
        w->dOp = w->dO;
    } else {
        w->dOp = g->dout + (tok * a->H + h) * V;
        ldo = a->H * V;
    }
    memset(w->D, 0, (size_t)(L * L) * sizeof(float));
    lattn__sgemm(LATTN_GEMM_TRANS_B | LATTN_GEMM_LOWER, L, L, Vn, w->dOp, ldo, Vr, ldv, w->D, L, w->gw);   /* D = tril(dO Vᵀ) */
    lattn__sgemm(LATTN_GEMM_TRANS_B, L, Kf, Vn, w->dOp, ldo, S0, Vn, w->gq, Kf, w->gw);                    /* dO S0ᵀ */
    if (fits) {                          /* dΦq = s e^{b} ⊙ (D K̃ + dO S0ᵀ), gk = Dᵀ Q̃ */
        lattn__sgemm(LATTN_GEMM_ACCUMULATE, L, Kf, L, w->D, L, w->kt, Kf, w->gq, Kf, w->gw);
        lattn__sgemm(LATTN_GEMM_TRANS_A, L, Kf, L, w->D, L, w->qt, Kf, w->gk, Kf, w->gw);
        lattn__la_bw_rows(dphq + tok * ld + h * Kf, ld, dm->s, w->eb, w->gq, Kf, NULL, NULL, L, Kf, Kg);
    } else {
        lattn__la_bw_direct(dm, z, w, L, 1);
        lattn__la_bw_rows(dphq + tok * ld + h * Kf, ld, dm->s, NULL, w->tk, Kf, w->eb, w->gq, L, Kf, Kg);
    }
    lattn__sgemm(LATTN_GEMM_TRANS_B, L, Kf, Vn, Vr, ldv, w->U, Vn, w->tk, Kf, w->gw);                       /* V' Uᵀ */
    lattn__la_bw_rows(dphk + tok * ld + h * Kf, ld, 1.0f, fits ? w->ei : NULL, w->gk, Kf, w->wk, w->tk, L, Kf, Kg);
    if (g->dv) {                         /* dV' = Aᵀ dO' + (Φk ⊙ w) U */
        lattn__sgemm(LATTN_GEMM_TRANS_A, L, Vn, L, w->A, L, w->dOp, ldo, dv, lddv, w->gw);
        lattn__sgemm(LATTN_GEMM_ACCUMULATE, L, Vn, Kf, w->kd, Kf, w->U, Vn, dv, lddv, w->gw);
        for (r = 0; dv == w->dv && r < L; r++) memcpy(g->dv + ((tok + r) * a->H + h) * V, w->dv + r * Vn, (size_t)V * sizeof(float));
    }
    for (j = 0; j < Kf; j++) lattn_vec_scale((size_t)Vn, w->eb[(L - 1) * Kg + (Kg > 1 ? j : 0)], w->U + j * Vn);
    lattn__sgemm(LATTN_GEMM_TRANS_A | LATTN_GEMM_ACCUMULATE, Kf, Vn, L, w->qt, Kf, w->dOp, ldo, w->U, Vn, w->gw);
}
/* The gate identity over one chunk of L tokens from tok, newest first, while its rows are in cache:
   per key acc += Φq ⊙ dΦq − Φk ⊙ dΦk (compensated float sums in acc, cmp) and dgk = acc + fin; per head
   the two dot products, summed in double in acc[0], dg = acc + Σ fin. A clamped gate gets 0. */
static void lattn__la_bw_gates(const lattn_la_args *a, const lattn_la_grads *g, const lattn__la_in *in, const lattn__la_bw_dims *z,
                               lattn__la_bw *w, const float *dphq, const float *dphk, int64_t tok, int64_t h, int L) {
    const int64_t Kf = z->Kf, ld = a->H * Kf;
    int64_t r, i;
    for (r = L - 1; r >= 0; r--) {
        const int64_t row = (tok + r) * a->H + h, e = (tok + r) * ld + h * Kf;
        const float *q = in->q + e, *k = in->k + e, *dq = dphq + e, *dk = dphk + e;
        if (a->g) {
            w->sum += (double)lattn_vec_dot((size_t)Kf, q, dq) - (double)lattn_vec_dot((size_t)Kf, k, dk);
            if (g->dg) g->dg[row] = a->g[row] < LATTN_LOG_GATE_MIN ? 0.0f : (float)(w->sum + w->fsum);
            continue;
        }
        for (i = 0; i + LATTN__VW <= Kf; i += LATTN__VW) {   /* Kahan: y = x - c, t = s + y, c = (t - s) - y, s = t */
            const lattn__vf x = lattn__vsub(lattn__vmul(lattn__vload(q + i), lattn__vload(dq + i)), lattn__vmul(lattn__vload(k + i), lattn__vload(dk + i)));
            const lattn__vf y = lattn__vsub(x, lattn__vload(w->cmp + i)), s0 = lattn__vload(w->acc + i), t = lattn__vadd(s0, y);
            lattn__vstore(w->cmp + i, lattn__vsub(lattn__vsub(t, s0), y));
            lattn__vstore(w->acc + i, t);
        }
        for (; i < Kf; i++) {
            const float y = (q[i] * dq[i] - k[i] * dk[i]) - w->cmp[i], t = w->acc[i] + y;
            w->cmp[i] = (t - w->acc[i]) - y;
            w->acc[i] = t;
        }
        if (g->dgk) {
            float *d = g->dgk + row * a->K;
            const float *raw = a->gk + row * a->K;
            for (i = 0; i < Kf; i++) d[i] = raw[i] < LATTN_LOG_GATE_MIN ? 0.0f : w->acc[i] + w->fin[i];
        }
    }
}
/* One work item (sequence sq from tok0, len tokens; head h): the checkpoints, the chunks in reverse,
   dh0 / dz0, and the gates' gradients from dΦq, dΦk. */
static void lattn__la_bw_item(const lattn_la_args *a, const lattn_la_grads *g, const lattn__la_dims *dm, const lattn__la_in *in,
                              const lattn__la_bw_dims *z, lattn__la_bw *w, int64_t sq, int64_t tok0, int64_t len, int64_t h,
                              float *dphq, float *dphk) {
    const int64_t Kf = z->Kf, Vn = z->Vn, V = a->V, SV = Kf * Vn, sidx = (sq * a->H + h) * Kf, C = z->C;
    const int64_t nc = (len + C - 1) / C;
    const float *ST = w->ck + nc * SV;
    int64_t n, i, j;
    for (i = 0; i < Kf; i++) {           /* S' = [h0, z0], U' = [dht, dzt] */
        for (j = 0; j < V; j++) {
            w->ck[i * Vn + j] = a->h0 ? a->h0[(sidx + i) * V + j] : 0.0f;
            w->U[i * Vn + j] = g->dht ? g->dht[(sidx + i) * V + j] : 0.0f;
        }
        if (Vn > V) {
            w->ck[i * Vn + V] = a->z0 ? a->z0[sidx + i] : 0.0f;
            w->U[i * Vn + V] = g->dzt ? g->dzt[sidx + i] : 0.0f;
        }
    }
    for (n = 0; n < nc; n++) {           /* the chunk states forward: S_n = diag(e^{b_last}) S_{n-1} + (Φk ⊙ w)ᵀ V' */
        const int L = (int)LATTN__MIN(C, len - n * C);
        const float *S0 = w->ck + n * SV;
        float *S1 = w->ck + (n + 1) * SV;
        lattn__la_bw_load(a, in, dm, z, w, tok0 + n * C, h, L, 0);
        for (i = 0; i < Kf; i++) {
            const float e = expf(w->b[(L - 1) * z->Kg + (z->Kg > 1 ? i : 0)]);
            for (j = 0; j < Vn; j++) S1[i * Vn + j] = e * S0[i * Vn + j];
        }
        lattn__sgemm(LATTN_GEMM_TRANS_A | LATTN_GEMM_ACCUMULATE, Kf, Vn, L, w->kd, Kf, w->vp, w->ldv, S1, Vn, w->gw);
    }
    w->sum = 0;
    w->fsum = 0;
    for (i = 0; i < Kf; i++) {           /* the final state's share of every gate */
        double f = 0;
        for (j = 0; j < Vn; j++) f += (double)ST[i * Vn + j] * w->U[i * Vn + j];
        w->fin[i] = (float)f;
        w->fsum += f;
        w->acc[i] = 0;
        w->cmp[i] = 0;
    }
    for (n = nc - 1; n >= 0; n--) {
        const int L = (int)LATTN__MIN(C, len - n * C);
        const int fits = lattn__la_bw_load(a, in, dm, z, w, tok0 + n * C, h, L, 1);
        lattn__la_bw_chunk(a, g, dm, z, w, w->ck + n * SV, tok0 + n * C, h, L, fits, dphq, dphk);
        if (a->g || a->gk) lattn__la_bw_gates(a, g, in, z, w, dphq, dphk, tok0 + n * C, h, L);
    }
    for (i = 0; i < Kf; i++) {
        for (j = 0; g->dh0 && j < V; j++) g->dh0[(sidx + i) * V + j] = w->U[i * Vn + j];
        if (g->dz0 && Vn > V) g->dz0[sidx + i] = w->U[i * Vn + V];
    }
}
/* Through the feature map, rows [0, rows) of one input (q or k): dx from dΦ, and for a map with
   weights dy (the pre-activations' gradients, [rows][nw]) for the weight products. */
static void lattn__la_bw_map(const lattn_la_args *a, int key, const float *dph, float *dx, float *dy, int64_t rows, int nthr, double *tmp) {
    const int64_t K = a->K, Kf = lattn_fmap_width(a->fmap, K), nw = lattn__fmap_rows(a->fmap, K);
    const float *x = key ? a->k : a->q, *W = a->fmap_w, *bb = a->fmap_b;
    int64_t r;
    if (key) lattn__fmap_key(a, &W, &bb);
    (void)nthr;                          /* without OpenMP */
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (r = 0; r < rows; r++) {
        double *d = tmp + (size_t)lattn__thread_id() * (size_t)(5 * K);   /* dΦ [K'], dy and scratch [3K] */
        int64_t i, j;
        if (nw == 0) {
            for (i = 0; dx && i < K; i++) dx[r * K + i] = (float)(dph[r * Kf + i] * lattn__fmap_deriv(a->fmap, x[r * K + i]));
            continue;
        }
        for (i = 0; i < Kf; i++) d[i] = dph[r * Kf + i];
        lattn__fmap_dy(a->fmap, K, x + r * K, W, bb, d, d + 2 * K);
        for (i = 0; i < nw; i++) dy[r * nw + i] = (float)d[2 * K + i];
        for (j = 0; dx && j < K; j++) {
            double acc = 0;
            for (i = 0; i < nw; i++) acc += (double)W[i * K + j] * d[2 * K + i];
            dx[r * K + j] = (float)acc;
        }
    }
}
LATTN__DEF lattn_status lattn_la_chunk_backward(lattn_ctx *ctx, const lattn_la_args *a, const lattn_la_grads *g) {
    const char *who = "lattn_la_chunk_backward";
    lattn__la_dims dm;
    lattn__la_in in;
    lattn__la_bw_dims z;
    lattn_la_args ar;
    float *gam = NULL, *ws = NULL, *dph = NULL, *dyb = NULL, *gwW;
    double *dbl = NULL;
    int64_t sq, w, maxlen = 0, rows, nw, K;
    size_t per, nd, cnt;
    int nthr;
    lattn_status st;
    LATTN__TRY(lattn__la_check_in(ctx, who, a, &dm));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    if (a->chunk < 0 || a->chunk > LATTN_MAX_CHUNK)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: chunk = %d (0 = 64, else 1 .. %d)", who, a->chunk, LATTN_MAX_CHUNK);
    if (a->retnet_decay) {               /* RetNet's decays as float log gates, as _chunk runs them */
        LATTN__TRY(lattn__alloc_floats(ctx, &gam, (size_t)a->H, who));
        lattn_retention_decay(a->H, gam);
        ar = *a;
        ar.g_gamma = gam;
        ar.retnet_decay = 0;
        st = lattn_la_chunk_backward(ctx, &ar, g);
        lattn__free(ctx, gam);
        return st;
    }
    if (lattn_ctx_profile(ctx)->kind != LATTN_DEV_CPU) return lattn__la_backward_tiled(ctx, a, g, &dm, who);
    for (sq = 0; sq < dm.n; sq++) {
        int64_t t0, len;
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        maxlen = LATTN__MAX(maxlen, len);
    }
    K = a->K;
    rows = a->B * a->T * a->H;
    nw = lattn__fmap_rows(a->fmap, K);
    z.C = a->chunk > 0 ? a->chunk : 64;
    z.Kf = dm.Kf;
    z.Kg = dm.gate == LATTN__GATE_KEY ? dm.Kf : 1;
    z.Vn = a->V + (a->normalize ? 1 : 0);
    z.N = LATTN__MAX((maxlen + z.C - 1) / z.C, 1);
    z.gw = (int64_t)LATTN__MAX(LATTN__MAX(lattn__gemm_ws(z.C, z.Kf), lattn__gemm_ws(z.C, z.Vn)),
                               LATTN__MAX(lattn__gemm_ws(z.Kf, LATTN__MAX(z.C, z.Vn)), lattn__gemm_ws(z.Vn, LATTN__MAX(z.C, z.Kf))));
    nthr = lattn__threads(ctx);
    /* per thread: checkpoints, U, 8 [C][K'] and 4 [C][Kg] and 4 [C][Vn] rows, two [C][C], 3 [K'], packing;
       then dΦq, dΦk and the maps' dy for every row, and the weight product's packing */
    if (lattn_size_mul(&per, (size_t)z.N + 2, (size_t)(z.Kf * z.Vn)) != LATTN_OK ||
        lattn_size_add(&per, per, (size_t)(z.C * (8 * z.Kf + 4 * z.Kg + 4 * z.Vn + 2 * z.C) + 3 * z.Kf + z.gw)) != LATTN_OK ||
        lattn_size_mul(&cnt, per, (size_t)nthr) != LATTN_OK ||
        lattn_size_mul(&nd, (size_t)rows, (size_t)(2 * dm.Kf + 2 * nw)) != LATTN_OK ||
        lattn_size_add(&cnt, cnt, nd) != LATTN_OK || lattn_size_add(&cnt, cnt, lattn__gemm_ws(K, rows)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the workspace overflows", who);
    LATTN__TRY(lattn__la_map(ctx, a, &dm, &in, who));
    st = lattn__alloc_floats(ctx, &ws, cnt, who);
    if (st == LATTN_OK) st = lattn__alloc_doubles(ctx, &dbl, (size_t)(nthr * 5 * K), who);
    if (st != LATTN_OK) {
        lattn__free(ctx, ws);
        lattn__free(ctx, in.buf);
        return st;
    }
    dph = ws + per * (size_t)nthr;       /* dΦq, dΦk [rows][K'] (identity map: straight into dq, dk) */
    dyb = dph + 2 * rows * dm.Kf;        /* the maps' dy [rows][nw], q then k */
    gwW = dyb + 2 * rows * nw;
    {
        float *dphq = a->fmap == LATTN_FMAP_IDENTITY && g->dq ? g->dq : dph;
        float *dphk = a->fmap == LATTN_FMAP_IDENTITY && g->dk ? g->dk : dph + rows * dm.Kf;
        LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(nthr))
        for (w = 0; w < dm.n * a->H; w++) {
            lattn__la_bw b;
            int64_t tok0, len;
            lattn__la_bw_carve(&z, ws + per * (size_t)lattn__thread_id(), &b);
            lattn__seq(a->offsets, a->T, w / a->H, &tok0, &len);
            lattn__la_bw_item(a, g, &dm, &in, &z, &b, w / a->H, tok0, len, w % a->H, dphq, dphk);
        }
        if (a->fmap != LATTN_FMAP_IDENTITY) {
            const float *kw, *kb;
            int key;
            lattn__fmap_key(a, &kw, &kb);
            for (key = 0; key < 2; key++)
                lattn__la_bw_map(a, key, key ? dphk : dphq, key ? g->dk : g->dq, dyb + key * rows * nw, rows, nthr, dbl);
            for (key = 0; nw > 0 && key < 2; key++) {   /* dW = Σ_rows dy ⊗ x, db = Σ_rows dy (q's into the tied map) */
                float *dW = key && a->fmap_wk ? g->dfmap_wk : g->dfmap_w, *db = key && a->fmap_wk ? g->dfmap_bk : g->dfmap_b;
                const float *dy = dyb + key * rows * nw;
                int64_t r, i;
                if (dW) {
                    if (key == 0 || a->fmap_wk) memset(dW, 0, (size_t)(nw * K) * sizeof(float));
                    lattn__sgemm(LATTN_GEMM_TRANS_A | LATTN_GEMM_ACCUMULATE, nw, K, rows, dy, nw, key ? a->k : a->q, K, dW, K, gwW);
                }
                for (i = 0; db && i < nw; i++) {
                    double s = key && !a->fmap_wk ? db[i] : 0.0;
                    for (r = 0; r < rows; r++) s += dy[r * nw + i];
                    db[i] = (float)s;
                }
            }
        }
    }
    lattn__free(ctx, dbl);
    lattn__free(ctx, ws);
    lattn__free(ctx, in.buf);
    return lattn__ok(ctx);
}

/* ================================================================================================ */
/* >>delta implementation                                                                           */
/* ================================================================================================ */
#define LATTN__L2_EPS 1e-6                /* fla's in-kernel l2norm: x / sqrt(Σx² + eps) */

typedef struct lattn__gdr_dims { int64_t n, P; double sd; float s; int gate; } lattn__gdr_dims;
/* need_o: a forward form (o is written); the backward reads the inputs only. */
static lattn_status lattn__gdr_check(lattn_ctx *ctx, const char *who, const lattn_gdr_args *a, int need_o, lattn__gdr_dims *dm) {
    int64_t d[5], i, n;
    double bmax;
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    LATTN__TRY(lattn__check_seqs(ctx, who, a->B, a->T, a->offsets, a->n_seqs, &dm->n));
    if (a->H < 1 || a->K < 1 || a->V < 1 || a->L < 0)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: H = %lld, K = %lld, V = %lld, L = %lld", who,
                           (long long)a->H, (long long)a->K, (long long)a->V, (long long)a->L);
    if (a->T > 0 && (!a->q || !a->k || !a->v || !a->beta || (need_o && !a->o)))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: q, k, v, beta or o is NULL", who);
    if (a->T > 0 && a->L > 0 && (!a->inj_b || !a->inj_kap || !a->inj_d))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: L > 0 needs inj_b, inj_kap and inj_d", who);
    if (a->g && a->gk) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: set at most one of g and gk", who);
    if (!(a->scale == a->scale) || a->scale == HUGE_VAL || a->scale == -HUGE_VAL)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: scale is not finite", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->H;
    d[3] = LATTN__MIN(a->L, INT64_MAX / 2) + 1;
    d[4] = LATTN__MAX(a->K, a->V);
    LATTN__TRY(lattn__check_count(ctx, who, "the inputs", 5, d));
    d[0] = dm->n;
    d[1] = a->H;
    d[2] = a->K;
    d[3] = a->V;
    LATTN__TRY(lattn__check_count(ctx, who, "the state", 4, d));
    n = a->B * a->T * a->H;
    bmax = a->allow_neg_eigval ? 2.0 : 1.0;
    for (i = 0; i < n; i++)
        if (!(a->beta[i] >= 0.0f && a->beta[i] <= bmax))
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: beta[%lld] = %g is outside [0, %g]", who, (long long)i, (double)a->beta[i], bmax);
    LATTN__TRY(lattn__check_gates(ctx, who, a->gk ? a->gk : a->g, a->gk ? n * a->K : n));
    dm->P = 1 + a->L;
    dm->sd = a->scale != 0.0 ? a->scale : 1.0 / sqrt((double)a->K);
    dm->s = (float)dm->sd;
    dm->gate = a->gk ? LATTN__GATE_KEY : a->g ? LATTN__GATE_HEAD : LATTN__GATE_NONE;
    return LATTN_OK;
}
/* The clamped log gate of (row = token·H + head, key i); 0 without gates. */
static float lattn__gdr_gate(const lattn_gdr_args *a, int64_t row, int64_t i) {
    float g = a->gk ? a->gk[row * a->K + i] : a->g ? a->g[row] : 0.0f;
    return g < LATTN_LOG_GATE_MIN ? LATTN_LOG_GATE_MIN : g;
}
/* x (n floats) into y in double, L2-normalised when asked. */
static void lattn__l2_row_d(int64_t n, const float *x, int norm, double *y) {
    double s = 0; int64_t i;
    for (i = 0; i < n; i++) { y[i] = x[i]; s += y[i] * y[i]; }
    if (norm) for (s = 1.0 / sqrt(s + LATTN__L2_EPS), i = 0; i < n; i++) y[i] *= s;
}

/* >>delta.ref ------------------------------------------------------------------------------------
   S' = Diag(e^G) S; S' -= β e (eᵀ S'); S = S' + c k vᵀ + Σ_l b κ dᵀ; o = s Sᵀ q, in double */
/* --- _ref: the recurrence, token by token, in double ------------------------------------------- */
LATTN__DEF lattn_status lattn_gdr_ref(lattn_ctx *ctx, const lattn_gdr_args *a) {
    lattn__gdr_dims dm;
    int64_t sq, h, t, i, j, l, H, K, V;
    double *S, *q, *k, *e, *w;
    LATTN__TRY(lattn__gdr_check(ctx, "lattn_gdr_ref", a, 1, &dm));
    H = a->H;
    K = a->K;
    V = a->V;
    LATTN__TRY(lattn__alloc_doubles(ctx, &S, (size_t)(K * V + 3 * K + V), "lattn_gdr_ref"));
    q = S + K * V;
    k = q + K;
    e = k + K;
    w = e + K;
    for (sq = 0; sq < dm.n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (h = 0; h < H; h++) {
            int64_t sidx = (sq * H + h) * K;
            for (i = 0; i < K * V; i++) S[i] = a->h0 ? (double)a->h0[sidx * V + i] : 0.0;
            for (t = 0; t < len; t++) {
                int64_t row = (tok0 + t) * H + h;
                const float *v = a->v + row * V;
                double beta = a->beta[row], c = a->c ? (double)a->c[row] : beta;
                lattn__l2_row_d(K, a->q + row * K, a->l2norm, q);
                lattn__l2_row_d(K, a->k + row * K, a->l2norm, k);
                lattn__l2_row_d(K, (a->e ? a->e : a->k) + row * K, a->l2norm, e);
                for (i = 0; i < K; i++) {                        /* S' = Diag(e^G) S */
                    double al = dm.gate ? exp((double)lattn__gdr_gate(a, row, i)) : 1.0;
                    for (j = 0; j < V; j++) S[i * V + j] *= al;
                }
                for (j = 0; j < V; j++) w[j] = 0;                /* w = S'ᵀ e;  S' -= β e wᵀ */
                for (i = 0; i < K; i++) for (j = 0; j < V; j++) w[j] += e[i] * S[i * V + j];
                for (i = 0; i < K; i++) for (j = 0; j < V; j++) S[i * V + j] -= beta * e[i] * w[j];
                for (i = 0; i < K; i++)                          /* S += c k vᵀ */
                    for (j = 0; j < V; j++) S[i * V + j] += c * k[i] * (double)v[j];
                for (l = 0; l < a->L; l++) {                     /* S += b κ dᵀ, per injection */
                    const float *kap = a->inj_kap + (row * a->L + l) * K, *dd = a->inj_d + (row * a->L + l) * V;
                    double b = a->inj_b[row * a->L + l];
                    for (i = 0; i < K; i++) for (j = 0; j < V; j++) S[i * V + j] += b * (double)kap[i] * (double)dd[j];
                }
                for (j = 0; j < V; j++) w[j] = 0;                /* o = s Sᵀ q */
                for (i = 0; i < K; i++) for (j = 0; j < V; j++) w[j] += dm.sd * q[i] * S[i * V + j];
                for (j = 0; j < V; j++) {
                    a->o[row * V + j] = (float)w[j];
                    if (a->o64) a->o64[row * V + j] = w[j];
                }
            }
            for (i = 0; i < K * V; i++) {
                if (a->ht) a->ht[sidx * V + i] = (float)S[i];
                if (a->ht64) a->ht64[sidx * V + i] = S[i];
            }
        }
    }
    lattn__free(ctx, S);
    return lattn__ok(ctx);
}

/* >>delta.ref_backward -----------------------------------------------------------------------------
   per head, every S_t kept, U = ∂ℒ/∂S_t (from dht), x̂ the (normalised) q, k, e; t = T-1 .. 0:
       read-out   U += s q̂ doᵀ;        dq̂ = s S_t do
       write      dc = k̂ᵀ U v;  dk̂ = c U v;  dv = c Uᵀ k̂;  per injection db = κᵀ U d, dκ = b U d, dd = b Uᵀ κ
       erase      with S' = Diag(e^G) S_{t-1}, w = S'ᵀ ê, u = Uᵀ ê:
                  dβ = -u·w;  dê = -β (U w + S' u);  U ← U - β ê uᵀ   (I - β ê êᵀ is symmetric)
       gate       dG_i = Σ_j U_ij S'_ij (0 where clamped; summed over the keys for g);  U ← Diag(e^G) U
   then dh0 = U. With e = k (e NULL) dê joins dk̂, with c = β (c NULL) dc joins dβ; through x̂ =
   x / n, n = sqrt(Σx² + ε): dx = (dx̂ - x̂ (x̂·dx̂)) / n. */
static void lattn__l2_back_d(int64_t K, const float *x, const double *xh, int norm, double *dxh) {
    double n = 0, dot = 0;
    int64_t i;
    if (!norm) return;
    for (i = 0; i < K; i++) {
        n += (double)x[i] * (double)x[i];
        dot += xh[i] * dxh[i];
    }
    n = sqrt(n + LATTN__L2_EPS);
    for (i = 0; i < K; i++) dxh[i] = (dxh[i] - xh[i] * dot) / n;
}
LATTN__DEF lattn_status lattn_gdr_ref_backward(lattn_ctx *ctx, const lattn_gdr_args *a, const lattn_gdr_grads *g) {
    const char *who = "lattn_gdr_ref_backward";
    lattn__gdr_dims dm;
    int64_t sq, h, t, i, j, l, H, K, V, maxlen = 0;
    double *S, *U, *Sp, *qh, *kh, *eh, *dqh, *dkh, *deh, *w, *u;
    size_t cnt;
    LATTN__TRY(lattn__gdr_check(ctx, who, a, 0, &dm));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    H = a->H;
    K = a->K;
    V = a->V;
    for (sq = 0; sq < dm.n; sq++) {
        int64_t t0, len;
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        maxlen = LATTN__MAX(maxlen, len);
    }
    if (lattn_size_mul(&cnt, (size_t)(maxlen + 3), (size_t)(K * V)) != LATTN_OK || lattn_size_add(&cnt, cnt, (size_t)(6 * K + 2 * V)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the states of one head overflow", who);
    LATTN__TRY(lattn__alloc_doubles(ctx, &S, cnt, who));
    U = S + (maxlen + 1) * K * V;        /* S[t + 1] = S_t, S[0] = h0 */
    Sp = U + K * V;
    qh = Sp + K * V;
    kh = qh + K;
    eh = kh + K;
    dqh = eh + K;
    dkh = dqh + K;
    deh = dkh + K;
    w = deh + K;
    u = w + V;
    for (sq = 0; sq < dm.n; sq++) {
        int64_t tok0, len;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        for (h = 0; h < H; h++) {
            const int64_t sidx = (sq * H + h) * K;
            for (i = 0; i < K * V; i++) {
                S[i] = a->h0 ? (double)a->h0[sidx * V + i] : 0.0;
                U[i] = g->dht ? (double)g->dht[sidx * V + i] : 0.0;
            }
            for (t = 0; t < len; t++) {      /* forward: every state kept */
                const int64_t row = (tok0 + t) * H + h;
                const float *v = a->v + row * V;
                const double beta = a->beta[row], c = a->c ? (double)a->c[row] : beta;
                double *Sn = S + (t + 1) * K * V;
                lattn__l2_row_d(K, a->k + row * K, a->l2norm, kh);
                lattn__l2_row_d(K, (a->e ? a->e : a->k) + row * K, a->l2norm, eh);
                for (i = 0; i < K; i++) {
                    const double al = dm.gate ? exp((double)lattn__gdr_gate(a, row, i)) : 1.0;
                    for (j = 0; j < V; j++) Sn[i * V + j] = al * S[t * K * V + i * V + j];
                }
                for (j = 0; j < V; j++) w[j] = 0;
                for (i = 0; i < K; i++) for (j = 0; j < V; j++) w[j] += eh[i] * Sn[i * V + j];
                for (i = 0; i < K; i++) for (j = 0; j < V; j++) Sn[i * V + j] += c * kh[i] * (double)v[j] - beta * eh[i] * w[j];
                for (l = 0; l < a->L; l++) {
                    const float *kap = a->inj_kap + (row * a->L + l) * K, *dd = a->inj_d + (row * a->L + l) * V;
                    const double b = a->inj_b[row * a->L + l];
                    for (i = 0; i < K; i++) for (j = 0; j < V; j++) Sn[i * V + j] += b * (double)kap[i] * (double)dd[j];
                }
            }
            for (t = len - 1; t >= 0; t--) {   /* backward */
                const int64_t row = (tok0 + t) * H + h;
                const float *v = a->v + row * V, *dout = g->dout + row * V;
                const double beta = a->beta[row], c = a->c ? (double)a->c[row] : beta, *St = S + (t + 1) * K * V;
                double dc = 0, db = 0, dgh = 0;
                lattn__l2_row_d(K, a->q + row * K, a->l2norm, qh);
                lattn__l2_row_d(K, a->k + row * K, a->l2norm, kh);
                lattn__l2_row_d(K, (a->e ? a->e : a->k) + row * K, a->l2norm, eh);
                for (i = 0; i < K; i++) {    /* read-out */
                    double acc = 0;
                    for (j = 0; j < V; j++) {
                        acc += St[i * V + j] * (double)dout[j];
                        U[i * V + j] += dm.sd * qh[i] * (double)dout[j];
                    }
                    dqh[i] = dm.sd * acc;
                }
                for (i = 0; i < K; i++) {    /* write */
                    double uv = 0;
                    for (j = 0; j < V; j++) uv += U[i * V + j] * (double)v[j];
                    dc += kh[i] * uv;
                    dkh[i] = c * uv;
                }
                for (j = 0; j < V; j++) {
                    double uk = 0;
                    for (i = 0; i < K; i++) uk += U[i * V + j] * kh[i];
                    lattn__put(g->dv, g->dv64, row * V + j, c * uk);
                }
                for (l = 0; l < a->L; l++) {
                    const int64_t il = row * a->L + l;
                    const float *kap = a->inj_kap + il * K, *dd = a->inj_d + il * V;
                    const double b = a->inj_b[il];
                    double dbl = 0;
                    for (i = 0; i < K; i++) {
                        double ud = 0;
                        for (j = 0; j < V; j++) ud += U[i * V + j] * (double)dd[j];
                        dbl += (double)kap[i] * ud;
                        lattn__put(g->dinj_kap, g->dinj_kap64, il * K + i, b * ud);
                    }
                    for (j = 0; j < V; j++) {
                        double uk = 0;
                        for (i = 0; i < K; i++) uk += U[i * V + j] * (double)kap[i];
                        lattn__put(g->dinj_d, g->dinj_d64, il * V + j, b * uk);
                    }
                    lattn__put(g->dinj_b, g->dinj_b64, il, dbl);
                }
                for (i = 0; i < K; i++) {    /* erase, on S' = Diag(e^G) S_{t-1} */
                    const double al = dm.gate ? exp((double)lattn__gdr_gate(a, row, i)) : 1.0;
                    for (j = 0; j < V; j++) Sp[i * V + j] = al * S[t * K * V + i * V + j];
                }
                for (j = 0; j < V; j++) {
                    w[j] = 0;
                    u[j] = 0;
                    for (i = 0; i < K; i++) {
                        w[j] += eh[i] * Sp[i * V + j];
                        u[j] += eh[i] * U[i * V + j];
                    }
                    db -= u[j] * w[j];
                }
                for (i = 0; i < K; i++) {
                    double uw = 0, su = 0;
                    for (j = 0; j < V; j++) {
                        uw += U[i * V + j] * w[j];
                        su += Sp[i * V + j] * u[j];
                    }
                    deh[i] = -beta * (uw + su);
                    for (j = 0; j < V; j++) U[i * V + j] -= beta * eh[i] * u[j];
                }
                for (i = 0; i < K; i++) {    /* gate */
                    const float raw = a->gk ? a->gk[row * K + i] : a->g ? a->g[row] : 0.0f;
                    const double al = dm.gate ? exp((double)lattn__gdr_gate(a, row, i)) : 1.0;
                    double dgi = 0;
                    for (j = 0; j < V; j++) {
                        dgi += U[i * V + j] * Sp[i * V + j];
                        U[i * V + j] *= al;
                    }
                    if (raw < LATTN_LOG_GATE_MIN) dgi = 0.0;
                    if (a->gk) lattn__put(g->dgk, g->dgk64, row * K + i, dgi);
                    dgh += dgi;
                }
                if (a->g) lattn__put(g->dg, g->dg64, row, dgh);
                if (a->c) lattn__put(g->dc, g->dc64, row, dc);
                else db += dc;
                lattn__put(g->dbeta, g->dbeta64, row, db);
                if (!a->e) for (i = 0; i < K; i++) dkh[i] += deh[i];
                lattn__l2_back_d(K, a->q + row * K, qh, a->l2norm, dqh);
                lattn__l2_back_d(K, a->k + row * K, kh, a->l2norm, dkh);
                if (a->e) lattn__l2_back_d(K, a->e + row * K, eh, a->l2norm, deh);
                for (i = 0; i < K; i++) {
                    lattn__put(g->dq, g->dq64, row * K + i, dqh[i]);
                    lattn__put(g->dk, g->dk64, row * K + i, dkh[i]);
                    if (a->e) lattn__put(g->de, g->de64, row * K + i, deh[i]);
                }
            }
            for (i = 0; i < K * V; i++) lattn__put(g->dh0, g->dh064, sidx * V + i, U[i]);
        }
    }
    lattn__free(ctx, S);
    return lattn__ok(ctx);
}

/* --- _step: one token per head in float32, the state updated in place ------------------------- */
static lattn_status lattn__gdr_step1(lattn_ctx *ctx, const lattn_gdr_args *a) {
    lattn__gdr_dims dm;
    int64_t b, h, i, l, H, K, V;
    float *buf;
    LATTN__TRY(lattn__gdr_check(ctx, "lattn_gdr_step", a, 1, &dm));
    H = a->H;
    K = a->K;
    V = a->V;
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, (size_t)(3 * K + V), "lattn_gdr_step"));
    for (b = 0; b < a->B; b++)
        for (h = 0; h < H; h++) {
            int64_t row = b * H + h;
            float *S = a->ht + row * K * V, *q = buf, *k = q + K, *e = k + K, *w = e + K, *o = a->o + row * V;
            const float *v = a->v + row * V;
            float beta = a->beta[row], c = a->c ? a->c[row] : beta;
            float alh = dm.gate == LATTN__GATE_HEAD ? expf(lattn__gdr_gate(a, row, 0)) : 1.0f;
            const float *src[3];
            float *dst[3];
            int r;
            if (a->h0 != a->ht) {
                if (a->h0) memcpy(S, a->h0 + row * K * V, (size_t)(K * V) * sizeof(float));
                else memset(S, 0, (size_t)(K * V) * sizeof(float));
            }
            src[0] = a->q + row * K;
            src[1] = a->k + row * K;
            src[2] = (a->e ? a->e : a->k) + row * K;
            dst[0] = q;
            dst[1] = k;
            dst[2] = e;
            for (r = 0; r < 3; r++) {                            /* (normalised) q, k, e */
                float sc = 1.0f;
                if (a->l2norm) sc = 1.0f / sqrtf(lattn_vec_dot((size_t)K, src[r], src[r]) + (float)LATTN__L2_EPS);
                for (i = 0; i < K; i++) dst[r][i] = sc * src[r][i];
            }
            /* pass 1 reads S: w = (Diag(e^G) S)ᵀ e. Pass 2 rewrites each row once:
               S_i = e^{G_i} S_i - β e_i w + c k_i v (+ injections), and reads it out, o += s q_i S_i */
            memset(w, 0, (size_t)V * sizeof(float));
            for (i = 0; i < K; i++)
                lattn_vec_axpy((size_t)V, e[i] * (dm.gate == LATTN__GATE_KEY ? expf(lattn__gdr_gate(a, row, i)) : alh), S + i * V, w);
            memset(o, 0, (size_t)V * sizeof(float));
            for (i = 0; i < K; i++) {
                float *Si = S + i * V, al = dm.gate == LATTN__GATE_KEY ? expf(lattn__gdr_gate(a, row, i)) : alh;
                lattn__vf va = lattn__vset1(al), ve = lattn__vset1(-beta * e[i]), vk = lattn__vset1(c * k[i]);
                lattn__vf vq = lattn__vset1(dm.s * q[i]);
                int64_t jj = 0;
                for (; jj + LATTN__VW <= V; jj += LATTN__VW) {
                    lattn__vf sv = lattn__vmul(va, lattn__vload(Si + jj));
                    sv = lattn__vfma(ve, lattn__vload(w + jj), sv);
                    sv = lattn__vfma(vk, lattn__vload(v + jj), sv);
                    lattn__vstore(Si + jj, sv);
                    lattn__vstore(o + jj, lattn__vfma(vq, sv, lattn__vload(o + jj)));
                }
                for (; jj < V; jj++) {
                    Si[jj] = al * Si[jj] - beta * e[i] * w[jj] + c * k[i] * v[jj];
                    o[jj] += dm.s * q[i] * Si[jj];
                }
            }
            for (l = 0; l < a->L; l++) {     /* injections: S += b κ dᵀ, o += s (q·κ) b d */
                const float *kap = a->inj_kap + (row * a->L + l) * K, *dd = a->inj_d + (row * a->L + l) * V;
                float bb = a->inj_b[row * a->L + l];
                for (i = 0; i < K; i++) lattn_vec_axpy((size_t)V, bb * kap[i], dd, S + i * V);
                lattn_vec_axpy((size_t)V, dm.s * bb * lattn_vec_dot((size_t)K, q, kap), dd, o);
            }
        }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* >>delta.step -----------------------------------------------------------------------------------
   the same update token by token, two passes over the state (read S'ᵀe, then rewrite and read out) */
LATTN__DEF lattn_status lattn_gdr_step(lattn_ctx *ctx, const lattn_gdr_args *a) {
    lattn__gdr_dims dm;
    int64_t sq, t, H, K, V, KV;
    float *S;
    lattn_status st = LATTN_OK;
    if (a && a->T == 1 && !a->offsets && a->ht) return lattn__gdr_step1(ctx, a);
    LATTN__TRY(lattn__gdr_check(ctx, "lattn_gdr_step", a, 1, &dm));
    H = a->H;
    K = a->K;
    V = a->V;
    KV = H * K * V;
    LATTN__TRY(lattn__alloc_floats(ctx, &S, (size_t)KV, "lattn_gdr_step"));
    for (sq = 0; sq < dm.n && st == LATTN_OK; sq++) {
        int64_t tok0, len;
        lattn_gdr_args s = *a;
        lattn__seq(a->offsets, a->T, sq, &tok0, &len);
        if (a->h0) memcpy(S, a->h0 + sq * KV, sizeof(float) * (size_t)KV); else memset(S, 0, sizeof(float) * (size_t)KV);
        s.B = 1;
        s.T = 1;
        s.offsets = NULL;
        s.n_seqs = 0;
        s.h0 = S;
        s.ht = S;
        for (t = 0; t < len && st == LATTN_OK; t++) {
            int64_t tok = tok0 + t, row = tok * H;
            s.q = a->q + row * K;
            s.k = a->k + row * K;
            s.v = a->v + row * V;
            s.o = a->o + row * V;
            s.beta = a->beta + row;
            s.e = a->e ? a->e + row * K : NULL;
            s.c = a->c ? a->c + row : NULL;
            s.g = a->g ? a->g + row : NULL;
            s.gk = a->gk ? a->gk + row * K : NULL;
            s.inj_b = a->inj_b ? a->inj_b + row * a->L : NULL;
            s.inj_kap = a->inj_kap ? a->inj_kap + row * a->L * K : NULL;
            s.inj_d = a->inj_d ? a->inj_d + row * a->L * V : NULL;
            st = lattn__gdr_step1(ctx, &s);
        }
        if (a->ht) memcpy(a->ht + sq * KV, S, sizeof(float) * (size_t)KV);
    }
    lattn__free(ctx, S);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}

/* --- _chunk on the tiler: the WY / UT transform, one (sequence, head, value slice) per work item -- */
#define LATTN__GDR_MAX_P 9               /* write pairs per token in the chunked form: 1 + L <= 9 */
typedef struct lattn__gdr_tiles {
    lattn_tile qr, er, wu, sc, xi, ob, dI, dS, at, mqe, U, one;    /* wu = [W | U], one solve */
    lattn_tile gcol, bcol, glc, gcolT, brow, erow, eb, bet, nbet, ccol, bl, nrm, qn;
    lattn_tile kw[LATTN__GDR_MAX_P], vw[LATTN__GDR_MAX_P], mew[LATTN__GDR_MAX_P], mqw[LATTN__GDR_MAX_P];
    lattn_tile qT[LATTN__LA_MAX_KT], eT[LATTN__LA_MAX_KT], wT[LATTN__LA_MAX_KT], s[LATTN__LA_MAX_KT];
    lattn_tile kwT[LATTN__GDR_MAX_P][LATTN__LA_MAX_KT];
    lattn_tile gkr, xq, xk, eqT[LATTN__LA_MAX_KT];   /* per-key gates only */
    lattn_tile qw[LATTN__LA_MAX_KT];      /* [Eqᵀ | sQᵀ | Wᵀ]: the query sides and Wᵀ side by side */
    lattn_tile tp, sq, big, bigw, ds, gp, gmp;  /* PSUM; bigw: W·S when it is not big's second half */
} lattn__gdr_tiles;
/* pair: Q·S and W·S as one product of 2C rows ([sQᵀ | Wᵀ] side by side, PSUM rows of both), where
   the profile's partitions hold 2C and W·S starts on a partition quadrant (C a multiple of 32; not on
   a GPU block, whose shared memory is the tight budget) */
typedef struct lattn__gdr_plan { lattn__la_plan la; int P, own_e, keyed, pair; } lattn__gdr_plan;

static lattn_status lattn__gdr_tiles_alloc(lattn_tiler *t, const lattn__gdr_plan *g, lattn__gdr_tiles *x, size_t *host_floats) {
    const lattn__la_plan *p = &g->la;
    lattn__tplan list[40 + (4 + LATTN__LA_MAX_KT) * LATTN__GDR_MAX_P + 6 * LATTN__LA_MAX_KT];
    int n = 0, i, kt, C = p->C, K = p->Kf, Vs = p->vw, ko = LATTN__MAX(C, p->kp);
    LATTN__PLAN(&x->qr, 0, C, K);
    LATTN__PLAN(&x->wu, 0, C, K + Vs);
    LATTN__PLAN(&x->sc, 0, C, K);
    if (g->own_e) LATTN__PLAN(&x->er, 0, C, K);
    LATTN__PLAN(&x->xi, 0, C, Vs);
    LATTN__PLAN(&x->ob, 0, C, Vs);
    LATTN__PLAN(&x->dI, 0, C, C);
    LATTN__PLAN(&x->dS, 0, C, C);
    LATTN__PLAN(&x->at, 0, C, C);
    LATTN__PLAN(&x->mqe, 0, C, C);
    LATTN__PLAN(&x->U, 0, C, C);
    LATTN__PLAN(&x->one, 0, C, ko);
    LATTN__PLAN(&x->gcol, 0, C, 1);
    LATTN__PLAN(&x->bcol, 0, C, 1);
    LATTN__PLAN(&x->glc, 0, C, 1);
    LATTN__PLAN(&x->gcolT, 0, C, 1);
    LATTN__PLAN(&x->brow, 0, 1, C);
    LATTN__PLAN(&x->erow, 0, 1, C);
    LATTN__PLAN(&x->eb, 0, p->kp, 1);
    LATTN__PLAN(&x->bet, 0, C, 1);
    LATTN__PLAN(&x->nbet, 0, C, 1);
    LATTN__PLAN(&x->ccol, 0, C, 1);
    LATTN__PLAN(&x->bl, 0, C, LATTN__MAX(g->P - 1, 1));
    LATTN__PLAN(&x->nrm, 0, C, 1);
    LATTN__PLAN(&x->qn, 0, C, 1);
    for (i = 0; i < g->P; i++) {
        LATTN__PLAN(&x->kw[i], 0, C, K);
        LATTN__PLAN(&x->vw[i], 0, C, Vs);
        if (i > 0 || g->own_e) { LATTN__PLAN(&x->mew[i], 0, C, C); LATTN__PLAN(&x->mqw[i], 0, C, C); }
        for (kt = 0; kt < p->nkt && (i > 0 || g->own_e); kt++) LATTN__PLAN(&x->kwT[i][kt], 0, lattn__kw(p, kt), C);
    }
    for (kt = 0; kt < p->nkt; kt++) {
        LATTN__PLAN(&x->qw[kt], 0, lattn__kw(p, kt), 3 * C);
        if (g->keyed) LATTN__PLAN(&x->eT[kt], 0, lattn__kw(p, kt), C);
        LATTN__PLAN(&x->s[kt], 0, lattn__kw(p, kt), Vs);
    }
    if (g->keyed) {
        LATTN__PLAN(&x->gkr, 0, C, K);
        LATTN__PLAN(&x->xq, 0, C, K);
        LATTN__PLAN(&x->xk, 0, C, K);
        LATTN__PLAN(&x->gmp, 1, C, p->kp);
    }
    LATTN__PLAN(&x->tp, 1, p->kp, C);
    LATTN__PLAN(&x->sq, 1, C, 2 * C);
    LATTN__PLAN(&x->big, 1, g->pair ? 2 * C : C, p->vb);
    if (!g->pair) LATTN__PLAN(&x->bigw, 1, C, p->vb);
    LATTN__PLAN(&x->ds, 1, p->kp, p->vb);
    LATTN__PLAN(&x->gp, 1, C, 1);
    LATTN__TRY(lattn__tplan_apply(t, list, n, host_floats));
    if (!t) return LATTN_OK;
    for (kt = 0; kt < p->nkt; kt++) {    /* Eq: the erase keys on the query side (E, or E ⊙ e^{Gm}) */
        *(g->keyed ? &x->eqT[kt] : &x->eT[kt]) = lattn_tile_view(&x->qw[kt], 0, lattn__kw(p, kt), 0, C);
        x->qT[kt] = lattn_tile_view(&x->qw[kt], 0, lattn__kw(p, kt), C, C);
        x->wT[kt] = lattn_tile_view(&x->qw[kt], 0, lattn__kw(p, kt), 2 * C, C);
    }
    {   /* constants: U[c][r] = (c <= r), ones; the decay masks of an ungated call */
        lattn_tile sq = lattn_tile_view(&x->one, 0, C, 0, C);
        LATTN__TRY(lattn_tile_memset(t, &x->one, 1.0f));
        LATTN__TRY(lattn_tile_select_tri(t, &x->U, &sq, 0, 0.0f));
        LATTN__TRY(lattn_tile_copy(t, &x->dI, &x->U));
        LATTN__TRY(lattn_tile_select_tri(t, &x->dS, &sq, 1, 0.0f));
    }
    return LATTN_OK;
}

/* 1/sqrt(Σx² + eps) of each row of `rows` [L][K] into col [L][1] (fla's in-kernel l2norm, eps
   inside the root); scale = 1 also normalises the rows in place. */
static lattn_status lattn__gdr_l2(lattn_tiler *t, lattn_tile *rows, lattn_tile *col, int scale) {
    LATTN__TRY(lattn_tile_sumsq(t, col, rows));
    LATTN__TRY(lattn_tile_act(t, col, col, LATTN_ACT_RSQRT, 1.0f, (float)LATTN__L2_EPS));
    return scale ? lattn_tile_ts(t, rows, rows, col, 0.0f, LATTN_TOP_MUL) : LATTN_OK;
}
/* dst[kt] = transpose of the kt-th key block of rows [L][K] (times s), evacuated from PSUM. */
static lattn_status lattn__gdr_T(lattn_tiler *t, lattn__gdr_tiles *x, const lattn__la_plan *p, const lattn_tile *rows,
                                 lattn_tile *dst, int L, float s) {
    int kt;
    for (kt = 0; kt < p->nkt; kt++) {
        int kw = lattn__kw(p, kt);
        lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, L), v1 = lattn_tile_view(rows, 0, L, kt * p->kp, kw);
        lattn_tile v2 = lattn_tile_view(&dst[kt], 0, kw, 0, L);
        LATTN__TRY(lattn_transpose(t, &tp, &v1));
        LATTN__TRY(lattn_tile_act(t, &v2, &tp, LATTN_ACT_IDENTITY, s, 0.0f));
    }
    return LATTN_OK;
}
/* The two products of a key side a (rows j) with the query sides (columns i), in SBUF:
       oe[j][i] = <Eq_i, a_j> ⊙ dS,   oq[j][i] = <sQ_i, a_j> ⊙ dI
   a whole chunk as one product of 2C columns ([Eqᵀ | sQᵀ] are side by side in qw), a shorter last
   chunk as two. */
static lattn_status lattn__gdr_sq(lattn_tiler *t, lattn__gdr_tiles *x, const lattn__la_plan *p, const lattn_tile *a,
                                  lattn_tile *oe, lattn_tile *oq, int L) {
    const int n = L == p->C ? 1 : 2, w = L == p->C ? 2 * L : L;
    lattn_tile sq = lattn_tile_view(&x->sq, 0, L, 0, w), v1, v2, o, m;
    int kt, half;
    for (half = 0; half < 2; half++) {
        if (half < n)
            for (kt = 0; kt < p->nkt; kt++) {
                v1 = lattn_tile_view(&a[kt], 0, lattn__kw(p, kt), 0, L);
                v2 = lattn_tile_view(&x->qw[kt], 0, lattn__kw(p, kt), half * p->C, w);
                LATTN__TRY(lattn_matmul(t, &sq, &v1, &v2, kt > 0));
            }
        v1 = lattn_tile_view(&sq, 0, L, n == 1 ? half * L : 0, L);
        o = lattn_tile_view(half ? oq : oe, 0, L, 0, L);
        m = lattn_tile_view(half ? &x->dI : &x->dS, 0, L, 0, L);
        LATTN__TRY(lattn_tile_tt(t, &o, &v1, &m, LATTN_TOP_MUL));
    }
    return LATTN_OK;
}

/* The per-head gates of one chunk: γ (bcol), e^{γ_L - γ} (glc), e^{γ} (gcolT, a column), e^{γ_L}
   on every key row (eb), and the decay masks dI (i >= j) and dS (i > j), [j][i] = e^{γ_i - γ_j}. */
static lattn_status lattn__gdr_gates(lattn_tiler *t, lattn__gdr_tiles *x, const lattn_gdr_args *a, int64_t tok, int64_t h, int L) {
    lattn_tile Ul = lattn_tile_view(&x->U, 0, L, 0, L), gc = lattn_tile_view(&x->gcol, 0, L, 0, 1);
    lattn_tile gp = lattn_tile_view(&x->gp, 0, L, 0, 1), bc = lattn_tile_view(&x->bcol, 0, L, 0, 1);
    lattn_tile gl = lattn_tile_view(&x->glc, 0, L, 0, 1), br = lattn_tile_view(&x->brow, 0, 1, 0, L);
    lattn_tile er = lattn_tile_view(&x->erow, 0, 1, 0, L), sq = lattn_tile_view(&x->sq, 0, L, 0, L);
    lattn_tile dI = lattn_tile_view(&x->dI, 0, L, 0, L), dS = lattn_tile_view(&x->dS, 0, L, 0, L), v1, v2, v3;
    LATTN__TRY(lattn_dma_load(t, &gc, a->g + tok * a->H + h, a->H));
    LATTN__TRY(lattn_tile_ts(t, &gc, &gc, NULL, LATTN_LOG_GATE_MIN, LATTN_TOP_MAX));     /* clamp */
    LATTN__TRY(lattn_matmul(t, &gp, &Ul, &gc, 0));                                        /* γ */
    LATTN__TRY(lattn_tile_copy(t, &bc, &gp));
    v1 = lattn_tile_view(&x->one, 0, L, 0, L);
    LATTN__TRY(lattn_matmul(t, &gp, &v1, &gc, 0));                                        /* γ_L */
    LATTN__TRY(lattn_tile_tt(t, &gl, &gp, &bc, LATTN_TOP_SUB));
    LATTN__TRY(lattn_tile_act(t, &gl, &gl, LATTN_ACT_EXP, 1.0f, 0.0f));                   /* e^{γ_L - γ} */
    v1 = lattn_tile_view(&x->gcolT, 0, L, 0, 1);
    LATTN__TRY(lattn_tile_act(t, &v1, &bc, LATTN_ACT_EXP, 1.0f, 0.0f));                   /* Γ = e^{γ} */
    v1 = lattn_tile_view(&x->sq, 0, 1, 0, L);
    LATTN__TRY(lattn_matmul(t, &v1, &gc, &Ul, 0));                                        /* γ as a row */
    LATTN__TRY(lattn_tile_copy(t, &br, &v1));
    LATTN__TRY(lattn_tile_act(t, &er, &br, LATTN_ACT_EXP, 1.0f, 0.0f));
    v1 = lattn_tile_view(&x->tp, 0, x->eb.np, 0, 1);
    v2 = lattn_tile_view(&x->one, 0, 1, 0, x->eb.np);
    v3 = lattn_tile_view(&x->erow, 0, 1, L - 1, 1);
    LATTN__TRY(lattn_matmul(t, &v1, &v2, &v3, 0));                                       /* e^{γ_L} per key row */
    LATTN__TRY(lattn_tile_copy(t, &x->eb, &v1));
    v1 = lattn_tile_view(&x->one, 0, 1, 0, L);
    LATTN__TRY(lattn_matmul(t, &sq, &v1, &br, 0));                                        /* [j][i] = γ_i */
    LATTN__TRY(lattn_tile_ts(t, &dI, &sq, &bc, 0.0f, LATTN_TOP_SUB));                     /* γ_i - γ_j */
    LATTN__TRY(lattn_tile_select_tri(t, &dI, &dI, 0, -HUGE_VALF));
    LATTN__TRY(lattn_tile_act(t, &dI, &dI, LATTN_ACT_EXP, 1.0f, 0.0f));
    return lattn_tile_select_tri(t, &dS, &dI, 1, 0.0f);
}

/* Per-key gates of one chunk (spec §3.4 with the reference point at the chunk start): Gm the
   chunk-local cumsum per key, xq = e^{Gm} (<= 1, the query side), xk = e^{-Gm} (the key side, at most
   e^{LATTN__LA_SPAN} since chunks end before any key's gates fall further: lattn__gdr_key_len).
   Decayed products are then plain products of (x ⊙ xq) and (y ⊙ xk), masked by the constant 0/1
   triangles, and the state update is S ← e^{Gm_L} ⊙ (S + Σ_s (k_s ⊙ xk_s) v_sᵀ), one row scale. */
static lattn_status lattn__gdr_keygates(lattn_tiler *t, lattn__gdr_tiles *x, const lattn__la_plan *p,
                                        const lattn_gdr_args *a, int64_t row, int L) {
    lattn_tile gk = lattn_tile_view(&x->gkr, 0, L, 0, p->Kf), Ul = lattn_tile_view(&x->U, 0, L, 0, L), v1, v2;
    int kt;
    LATTN__TRY(lattn_dma_load(t, &gk, a->gk + row * a->K, a->H * a->K));
    LATTN__TRY(lattn_tile_ts(t, &gk, &gk, NULL, LATTN_LOG_GATE_MIN, LATTN_TOP_MAX));      /* clamp */
    for (kt = 0; kt < p->nkt; kt++) {
        int kw = lattn__kw(p, kt), k0 = kt * p->kp;
        lattn_tile gp = lattn_tile_view(&x->gmp, 0, L, 0, kw);
        v1 = lattn_tile_view(&x->gkr, 0, L, k0, kw);
        LATTN__TRY(lattn_matmul(t, &gp, &Ul, &v1, 0));                                    /* Gm */
        v2 = lattn_tile_view(&x->xq, 0, L, k0, kw);
        LATTN__TRY(lattn_tile_act(t, &v2, &gp, LATTN_ACT_EXP, 1.0f, 0.0f));
        v2 = lattn_tile_view(&x->xk, 0, L, k0, kw);
        LATTN__TRY(lattn_tile_act(t, &v2, &gp, LATTN_ACT_EXP, -1.0f, 0.0f));
    }
    return LATTN_OK;
}
/* The chunk length for per-key gates from token tok: at most maxL, and short enough that no key's
   clamped log gates sum below -LATTN__LA_SPAN inside it (at least one token). A host-side look at
   the gates (on a NeuronCore: a GpSimd partition-axis reduction before the chunk is issued). */
static int lattn__gdr_key_len(const lattn_gdr_args *a, int64_t tok, int64_t h, int maxL) {
    float sum[64];                       /* running sums of a block of keys, token by token (vectorises) */
    int64_t d0, d;
    int L = maxL, n;
    for (d0 = 0; d0 < a->K; d0 += 64) {
        const int64_t nd = LATTN__MIN(a->K - d0, 64);
        for (d = 0; d < nd; d++) sum[d] = 0.0f;
        for (n = 0; n < L; n++) {
            const float *g = a->gk + ((tok + n) * a->H + h) * a->K + d0;
            float lo = 0.0f;
            for (d = 0; d < nd; d++) {
                sum[d] += g[d] < LATTN_LOG_GATE_MIN ? LATTN_LOG_GATE_MIN : g[d];
                lo = sum[d] < lo ? sum[d] : lo;
            }
            if (lo < -LATTN__LA_SPAN) { L = LATTN__MAX(n, 1); break; }
        }
    }
    return L;
}

static lattn_status lattn__gdr_chunk_item(lattn_tiler *t, lattn__gdr_tiles *x, const lattn__gdr_plan *g,
                                          const lattn_gdr_args *a, float s, int64_t tok0, int64_t len,
                                          int64_t sq, int64_t h, int64_t v0, int Vs) {
    const lattn__la_plan *p = &g->la;
    const int64_t H = a->H, K = a->K, V = a->V, Lj = a->L;
    const int gated = a->g != NULL, keyed = a->gk != NULL;
    /* e = k (delta rule, GDN): the erase and the write share their key, so <E, Kw_0> = <E, E>,
       <sQ, Kw_0> = <sQ, E> and the two state terms merge: u = Ξ + c·v, fla's "new value" */
    const int j0 = g->own_e ? 0 : 1;
    int kt, c0, j, vb0, L;
    lattn_tile v1, v2, v3;
    for (kt = 0; kt < p->nkt; kt++) {     /* initial state */
        v1 = lattn_tile_view(&x->s[kt], 0, lattn__kw(p, kt), 0, Vs);
        LATTN__TRY(a->h0 ? lattn_dma_load(t, &v1, a->h0 + ((sq * H + h) * K + kt * p->kp) * V + v0, V) : lattn_tile_memset(t, &v1, 0.0f));
    }
    for (c0 = 0; c0 < len; c0 += L) {
        int64_t tok = tok0 + c0, row = tok * H + h;
        lattn_tile qr, E, ew, bet, nbet, wu, at, mqe, sc;
        L = (int)LATTN__MIN((int64_t)p->C, len - c0);
        if (keyed) L = lattn__gdr_key_len(a, tok, h, L);
        qr = lattn_tile_view(&x->qr, 0, L, 0, (int)K);
        ew = lattn_tile_view(&x->wu, 0, L, 0, (int)K);
        bet = lattn_tile_view(&x->bet, 0, L, 0, 1);
        nbet = lattn_tile_view(&x->nbet, 0, L, 0, 1);
        wu = lattn_tile_view(&x->wu, 0, L, 0, (int)K + Vs);
        sc = lattn_tile_view(&x->sc, 0, L, 0, (int)K);
        at = lattn_tile_view(&x->at, 0, L, 0, L);
        mqe = lattn_tile_view(&x->mqe, 0, L, 0, L);
        /* ---- loads: q, write pairs (k, c·v) and (κ, b·d), erase keys, β; l2norm ---- */
        LATTN__TRY(lattn_dma_load(t, &qr, a->q + row * K, H * K));
        for (j = 0; j < g->P; j++) {
            v1 = lattn_tile_view(&x->kw[j], 0, L, 0, (int)K);
            v2 = lattn_tile_view(&x->vw[j], 0, L, 0, Vs);
            if (j == 0) {
                LATTN__TRY(lattn_dma_load(t, &v1, a->k + row * K, H * K));
                LATTN__TRY(lattn_dma_load(t, &v2, a->v + row * V + v0, H * V));
            } else {
                LATTN__TRY(lattn_dma_load(t, &v1, a->inj_kap + (row * Lj + j - 1) * K, H * Lj * K));
                LATTN__TRY(lattn_dma_load(t, &v2, a->inj_d + (row * Lj + j - 1) * V + v0, H * Lj * V));
            }
        }
        LATTN__TRY(lattn_dma_load(t, &bet, a->beta + row, H));
        LATTN__TRY(lattn_tile_act(t, &nbet, &bet, LATTN_ACT_IDENTITY, -1.0f, 0.0f));
        v1 = lattn_tile_view(&x->ccol, 0, L, 0, 1);
        if (a->c) LATTN__TRY(lattn_dma_load(t, &v1, a->c + row, H));
        v2 = lattn_tile_view(&x->vw[0], 0, L, 0, Vs);
        LATTN__TRY(lattn_tile_ts(t, &v2, &v2, a->c ? &v1 : &bet, 0.0f, LATTN_TOP_MUL));   /* c·v */
        if (Lj > 0) {
            v1 = lattn_tile_view(&x->bl, 0, L, 0, (int)Lj);
            LATTN__TRY(lattn_dma_load(t, &v1, a->inj_b + row * Lj, H * Lj));
            for (j = 1; j < g->P; j++) {
                v2 = lattn_tile_view(&x->vw[j], 0, L, 0, Vs);
                v3 = lattn_tile_view(&x->bl, 0, L, j - 1, 1);
                LATTN__TRY(lattn_tile_ts(t, &v2, &v2, &v3, 0.0f, LATTN_TOP_MUL));          /* b·d */
            }
        }
        if (g->own_e) {
            E = lattn_tile_view(&x->er, 0, L, 0, (int)K);
            LATTN__TRY(lattn_dma_load(t, &E, a->e + row * K, H * K));
        } else E = lattn_tile_view(&x->kw[0], 0, L, 0, (int)K);
        if (a->l2norm) {                 /* q's norms scale the output rows at the end (every term of O is linear in q) */
            v2 = lattn_tile_view(&x->qn, 0, L, 0, 1);
            LATTN__TRY(lattn__gdr_l2(t, &qr, &v2, 0));
            v1 = lattn_tile_view(&x->kw[0], 0, L, 0, (int)K);
            v2 = lattn_tile_view(&x->nrm, 0, L, 0, 1);
            LATTN__TRY(lattn__gdr_l2(t, &v1, &v2, 1));
            if (g->own_e) LATTN__TRY(lattn__gdr_l2(t, &E, &v2, 1));
        }
        /* ---- gates, transposes, the decayed products ---- */
        if (gated) LATTN__TRY(lattn__gdr_gates(t, x, a, tok, h, L));
        if (keyed) {                     /* query sides ⊙ e^{Gm}, key sides ⊙ e^{-Gm} (in place), then transposed */
            lattn_tile xq = lattn_tile_view(&x->xq, 0, L, 0, (int)K), xk = lattn_tile_view(&x->xk, 0, L, 0, (int)K);
            LATTN__TRY(lattn__gdr_keygates(t, x, p, a, row, L));
            LATTN__TRY(lattn_tile_tt(t, &sc, &qr, &xq, LATTN_TOP_MUL));
            LATTN__TRY(lattn__gdr_T(t, x, p, &sc, x->qT, L, s));
            LATTN__TRY(lattn_tile_tt(t, &sc, &E, &xq, LATTN_TOP_MUL));
            LATTN__TRY(lattn__gdr_T(t, x, p, &sc, x->eqT, L, 1.0f));
            LATTN__TRY(lattn_tile_ts(t, &ew, &sc, &bet, 0.0f, LATTN_TOP_MUL));           /* W's rows: β (E ⊙ e^{Gm}) */
            LATTN__TRY(lattn_tile_tt(t, &E, &E, &xk, LATTN_TOP_MUL));
            LATTN__TRY(lattn__gdr_T(t, x, p, &E, x->eT, L, 1.0f));
            for (j = j0; j < g->P; j++) {
                v1 = lattn_tile_view(&x->kw[j], 0, L, 0, (int)K);
                LATTN__TRY(lattn_tile_tt(t, &v1, &v1, &xk, LATTN_TOP_MUL));
                LATTN__TRY(lattn__gdr_T(t, x, p, &v1, x->kwT[j], L, 1.0f));
            }
        } else {
            LATTN__TRY(lattn__gdr_T(t, x, p, &qr, x->qT, L, s));
            LATTN__TRY(lattn__gdr_T(t, x, p, &E, x->eT, L, 1.0f));
            for (j = j0; j < g->P; j++) LATTN__TRY(lattn__gdr_T(t, x, p, &x->kw[j], x->kwT[j], L, 1.0f));
        }
        /* the products, [j][i] with j the key side and i the query side: Aᵀ/β = <e_i, e_j> (i > j) and
           <sq_i, e_j> (i >= j); per write pair <e_i, kw_j> (i > j) and <sq_i, kw_j> (i >= j) */
        LATTN__TRY(lattn__gdr_sq(t, x, p, x->eT, &at, &mqe, L));
        for (j = j0; j < g->P; j++) LATTN__TRY(lattn__gdr_sq(t, x, p, x->kwT[j], &x->mew[j], &x->mqw[j], L));
        /* ---- W = T diag(βΓ) E and U = -T diag(β) R (state-independent), then Wᵀ ---- */
        if (gated) {                     /* β Γ as one column, then one pass over E */
            v1 = lattn_tile_view(&x->gcolT, 0, L, 0, 1);
            v2 = lattn_tile_view(&x->nrm, 0, L, 0, 1);
            LATTN__TRY(lattn_tile_tt(t, &v2, &v1, &bet, LATTN_TOP_MUL));
            LATTN__TRY(lattn_tile_ts(t, &ew, &E, &v2, 0.0f, LATTN_TOP_MUL));
        } else if (!keyed) LATTN__TRY(lattn_tile_ts(t, &ew, &E, &bet, 0.0f, LATTN_TOP_MUL));   /* keyed: above */
        for (vb0 = 0; vb0 < Vs; vb0 += p->vb) {
            int w = LATTN__MIN(p->vb, Vs - vb0);
            lattn_tile big = lattn_tile_view(&x->big, 0, L, 0, w);
            for (j = 0; j < g->P; j++) {
                v1 = lattn_tile_view(j < j0 ? &x->at : &x->mew[j], 0, L, 0, L);
                v2 = lattn_tile_view(&x->vw[j], 0, L, vb0, w);
                LATTN__TRY(lattn_matmul(t, &big, &v1, &v2, (j > 0) | LATTN_MM_CAUSAL));        /* R */
            }
            v1 = lattn_tile_view(&x->wu, 0, L, (int)K + vb0, w);
            LATTN__TRY(lattn_tile_ts(t, &v1, &big, &nbet, 0.0f, LATTN_TOP_MUL));          /* -β R */
        }
        LATTN__TRY(lattn_tile_tri_solve(t, &wu, &at, &bet));                             /* [W | U] */
        LATTN__TRY(lattn__gdr_T(t, x, p, &ew, x->wT, L, 1.0f));
        /* ---- Ξ = U - W S, O = Γ sQ S + <sQ, E> Ξ + Σ <sQ, Kw> Vw ---- */
        for (vb0 = 0; vb0 < Vs; vb0 += p->vb) {
            int w = LATTN__MIN(p->vb, Vs - vb0);
            lattn_tile big = lattn_tile_view(&x->big, 0, L, 0, w);
            lattn_tile bw = g->pair ? lattn_tile_view(&x->big, p->C, L, 0, w) : lattn_tile_view(&x->bigw, 0, L, 0, w);
            for (kt = 0; kt < p->nkt; kt++) {   /* Q·S (rows of big) and W·S (rows of bw) */
                v2 = lattn_tile_view(&x->s[kt], 0, lattn__kw(p, kt), vb0, w);
                if (g->pair && L == p->C) {
                    lattn_tile b2 = lattn_tile_view(&x->big, 0, 2 * L, 0, w);
                    v1 = lattn_tile_view(&x->qw[kt], 0, lattn__kw(p, kt), p->C, 2 * L);
                    LATTN__TRY(lattn_matmul(t, &b2, &v1, &v2, kt > 0));
                } else {
                    v1 = lattn_tile_view(&x->qT[kt], 0, lattn__kw(p, kt), 0, L);
                    LATTN__TRY(lattn_matmul(t, &big, &v1, &v2, kt > 0));
                    v1 = lattn_tile_view(&x->wT[kt], 0, lattn__kw(p, kt), 0, L);
                    LATTN__TRY(lattn_matmul(t, &bw, &v1, &v2, kt > 0));
                }
            }
            v1 = lattn_tile_view(&x->xi, 0, L, vb0, w);
            v2 = lattn_tile_view(&x->wu, 0, L, (int)K + vb0, w);
            LATTN__TRY(lattn_tile_tt(t, &v1, &v2, &bw, LATTN_TOP_SUB));
            if (j0) { v2 = lattn_tile_view(&x->vw[0], 0, L, vb0, w); LATTN__TRY(lattn_tile_tt(t, &v1, &v1, &v2, LATTN_TOP_ADD)); }
            if (gated) {                 /* diag(Γ) sQ S: the rows scaled in PSUM, then accumulated on */
                v1 = lattn_tile_view(&x->gcolT, 0, L, 0, 1);
                LATTN__TRY(lattn_tile_ts(t, &big, &big, &v1, 0.0f, LATTN_TOP_MUL));
            }
            v2 = lattn_tile_view(&x->xi, 0, L, vb0, w);
            LATTN__TRY(lattn_matmul(t, &big, &mqe, &v2, LATTN_MM_ACCUMULATE | LATTN_MM_CAUSAL));
            for (j = j0; j < g->P; j++) {
                v1 = lattn_tile_view(&x->mqw[j], 0, L, 0, L);
                v2 = lattn_tile_view(&x->vw[j], 0, L, vb0, w);
                LATTN__TRY(lattn_matmul(t, &big, &v1, &v2, LATTN_MM_ACCUMULATE | LATTN_MM_CAUSAL));
            }
            v1 = lattn_tile_view(&x->ob, 0, L, vb0, w);
            if (a->l2norm) { v2 = lattn_tile_view(&x->qn, 0, L, 0, 1); LATTN__TRY(lattn_tile_ts(t, &v1, &big, &v2, 0.0f, LATTN_TOP_MUL)); }
            else LATTN__TRY(lattn_tile_copy(t, &v1, &big));
        }
        v1 = lattn_tile_view(&x->ob, 0, L, 0, Vs);
        LATTN__TRY(lattn_dma_store(t, a->o + row * V + v0, H * V, &v1));
        /* ---- S = Γ_L S + (e^{γ_L-γ} E)ᵀ Ξ + Σ (e^{γ_L-γ} Kw)ᵀ Vw ---- */
        for (kt = 0; kt < p->nkt; kt++) {
            int kw = lattn__kw(p, kt);
            lattn_tile el = lattn_tile_view(&x->eb, 0, kw, 0, 1), scv = lattn_tile_view(&x->sc, 0, L, 0, kw);
            if (keyed) {                 /* e^{Gm_L} of this key block as a column: Gkᵀ·1 over the tokens */
                lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, 1);
                v1 = lattn_tile_view(&x->gkr, 0, L, kt * p->kp, kw);
                v2 = lattn_tile_view(&x->one, 0, L, 0, 1);
                LATTN__TRY(lattn_matmul(t, &tp, &v1, &v2, 0));
                LATTN__TRY(lattn_tile_act(t, &el, &tp, LATTN_ACT_EXP, 1.0f, 0.0f));
            }
            for (vb0 = 0; vb0 < Vs; vb0 += p->vb) {
                int w = LATTN__MIN(p->vb, Vs - vb0);
                lattn_tile ds = lattn_tile_view(&x->ds, 0, kw, 0, w);
                for (j = -1; j < g->P; j++) {                        /* j = -1: the erase term */
                    const lattn_tile *src = j < 0 ? &E : &x->kw[j];
                    if (j >= 0 && j < j0) continue;                  /* merged into Ξ + c·v */
                    v1 = lattn_tile_view(src, 0, L, kt * p->kp, kw);
                    if (gated) {
                        v3 = lattn_tile_view(&x->glc, 0, L, 0, 1);
                        LATTN__TRY(lattn_tile_ts(t, &scv, &v1, &v3, 0.0f, LATTN_TOP_MUL));
                        v1 = scv;
                    }                            /* keyed: the key sides are already ⊙ e^{-Gm} */
                    v2 = j < 0 ? lattn_tile_view(&x->xi, 0, L, vb0, w) : lattn_tile_view(&x->vw[j], 0, L, vb0, w);
                    LATTN__TRY(lattn_matmul(t, &ds, &v1, &v2, j >= 0));
                }
                v3 = lattn_tile_view(&x->s[kt], 0, kw, vb0, w);
                if (gated) LATTN__TRY(lattn_tile_stt(t, &v3, &v3, &el, 0.0f, &ds));      /* Γ_L S + ΔS */
                else LATTN__TRY(lattn_tile_tt(t, &v3, &v3, &ds, LATTN_TOP_ADD));
                if (keyed) LATTN__TRY(lattn_tile_ts(t, &v3, &v3, &el, 0.0f, LATTN_TOP_MUL));   /* e^{Gm_L} (S + ΔS) */
            }
        }
        lattn_tiler_mark_step(t);
    }
    for (kt = 0; kt < p->nkt && a->ht; kt++) {
        v1 = lattn_tile_view(&x->s[kt], 0, lattn__kw(p, kt), 0, Vs);
        LATTN__TRY(lattn_dma_store(t, a->ht + ((sq * H + h) * K + kt * p->kp) * V + v0, V, &v1));
    }
    return LATTN_OK;
}

static lattn_status lattn__gdr_tiles_fn(lattn_tiler *t, const void *plan, void *tiles, size_t *host_floats) {
    lattn__gdr_tiles dummy;
    return lattn__gdr_tiles_alloc(t, (const lattn__gdr_plan *)plan, tiles ? (lattn__gdr_tiles *)tiles : &dummy, host_floats);
}
/* >>delta.chunk ----------------------------------------------------------------------------------
   per chunk the WY / UT transform: T = (I + A)⁻¹ by forward substitution, W = T diag(βΓ) E,
   U = -T diag(β) Σ strict(<E, Kw>) Vw, Ξ = U - W S, O and S from Ξ (header >>delta) */
LATTN__DEF lattn_status lattn_gdr_chunk(lattn_ctx *ctx, const lattn_gdr_args *a) {
    lattn__gdr_dims dm;
    lattn__gdr_plan plan;
    lattn__team tm;
    int64_t w, nvb;
    lattn_status st;
    const lattn_dev_profile *pr;
    int chunk;
    LATTN__TRY(lattn__gdr_check(ctx, "lattn_gdr_chunk", a, 1, &dm));
    LATTN__TRY(lattn__profile(ctx, &pr));
    if (dm.P > LATTN__GDR_MAX_P)
        return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "lattn_gdr_chunk: L = %lld injections (the chunked form takes at most %d)",
                           (long long)a->L, LATTN__GDR_MAX_P - 1);
    memset(&plan, 0, sizeof plan);
    /* The WY kernel keeps ~20 tiles live per head; a GPU block's 227 KB of shared memory holds them
       at C = 32 (fla's C = 64 spreads the same work over five kernels), so that is the GPU default. */
    chunk = a->chunk == 0 && pr->kind == LATTN_DEV_GPU ? 32 : a->chunk;
    LATTN__TRY(lattn__la_plan_make(ctx, pr, chunk, a->K, a->V, dm.n, a->H, 1, lattn__threads(ctx), 0, 0, 0, &plan.la));
    plan.P = (int)dm.P;
    plan.own_e = a->e != NULL;
    plan.keyed = a->gk != NULL;
    plan.pair = pr->kind != LATTN_DEV_GPU && plan.la.C % 32 == 0 && (pr->partitions <= 0 || 2 * plan.la.C <= pr->partitions);
    nvb = (a->V + plan.la.vw - 1) / plan.la.vw;
    st = lattn__team_make(ctx, &tm, "lattn_gdr_chunk", dm.n * a->H * nvb, sizeof(lattn__gdr_tiles), lattn__gdr_tiles_fn, &plan);
    if (st == LATTN_OK) {
        LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(tm.n))
        for (w = 0; w < dm.n * a->H * nvb; w++) {
            int id = lattn__thread_id();
            int64_t sq = w / (a->H * nvb), h = w / nvb % a->H, v0 = (w % nvb) * plan.la.vw, tok0, len;
            lattn__seq(a->offsets, a->T, sq, &tok0, &len);
            if (tm.tl[id]->err == LATTN_OK)
                lattn__gdr_chunk_item(tm.tl[id], (lattn__gdr_tiles *)tm.tiles + id, &plan, a, dm.s, tok0, len, sq, h, v0,
                                      (int)LATTN__MIN((int64_t)plan.la.vw, a->V - v0));
        }
    }
    return lattn__team_end(ctx, &tm, "lattn_gdr_chunk", st);
}

/* ================================================================================================ */
/* >>safetensors implementation                                                                     */
/* ================================================================================================ */
static const char *const lattn__dtype_names[] = { "F32", "F64", "F16", "BF16", "I32", "I64" };
static const size_t lattn__dtype_sizes[] = { 4, 8, 2, 2, 4, 8 };
LATTN__DEF size_t lattn_dtype_size(lattn_dtype d) { return (unsigned)d <= (unsigned)LATTN_DTYPE_I64 ? lattn__dtype_sizes[d] : 0; }
LATTN__DEF const char *lattn_dtype_name(lattn_dtype d) { return (unsigned)d <= (unsigned)LATTN_DTYPE_I64 ? lattn__dtype_names[d] : "?"; }
LATTN__DEF void lattn_free(lattn_ctx *ctx, void *p) { lattn__free(ctx, p); }

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 when invalid (overlong forms,
   surrogates and code points above U+10FFFF are invalid). */
static size_t lattn__utf8_len(const unsigned char *s, size_t n) {
    uint32_t c;
    size_t len, i;
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xE0) == 0xC0) { len = 2; c = s[0] & 0x1Fu; }
    else if ((s[0] & 0xF0) == 0xE0) { len = 3; c = s[0] & 0x0Fu; }
    else if ((s[0] & 0xF8) == 0xF0) { len = 4; c = s[0] & 0x07u; }
    else return 0;
    if (len > n) return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
        c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    return len;
}

/* The JSON reader: a fixed-shape recursive descent (depth <= 3) run twice, first counting the
   tensors, metadata entries and string bytes, then storing them. */
typedef struct lattn__js {
    const unsigned char *p, *b, *e;      /* cursor, header begin and end */
    lattn_ctx *ctx;
    int store;
    char *pool; size_t pool_used;        /* decoded strings (store pass) */
    size_t str_bytes;                    /* bytes the strings need (count pass) */
    char last[16]; size_t last_len;      /* the last string decoded (its first 15 bytes, its length):
                                            both passes compare keys and dtypes decoded, not raw */
} lattn__js;

static lattn_status lattn__jfail(lattn__js *j, const char *what) {
    return lattn__fail(j->ctx, LATTN_E_FORMAT, "safetensors: header byte %zu: %s", (size_t)(j->p - j->b), what);
}
static void lattn__jws(lattn__js *j) {
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}
static int lattn__jlit(lattn__js *j, char c) {
    lattn__jws(j);
    if (j->p < j->e && *j->p == (unsigned char)c) { j->p++; return 1; }
    return 0;
}
/* Append one byte of a decoded string (or count it). */
static void lattn__jput(lattn__js *j, unsigned char c) {
    if (j->store) j->pool[j->pool_used++] = (char)c;
    else j->str_bytes++;
    if (c && j->last_len < sizeof j->last - 1) j->last[j->last_len] = (char)c;
    if (c) j->last_len++;
}
/* 1 when the last decoded string is exactly `lit` (so "\u005f_metadata__" is "__metadata__"). */
static int lattn__jis(const lattn__js *j, const char *lit) {
    size_t n = strlen(lit);
    return n < sizeof j->last && j->last_len == n && memcmp(j->last, lit, n) == 0;
}
static int lattn__hex4(const unsigned char *p, uint32_t *v) {
    int i; *v = 0;
    for (i = 0; i < 4; i++) {
        unsigned char c = p[i];
        *v <<= 4;
        if (c >= '0' && c <= '9') *v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') *v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    return 1;
}
/* A JSON string, decoded to UTF-8 and NUL-terminated in the pool; *out is NULL in the count pass. */
static lattn_status lattn__jstring(lattn__js *j, const char **out) {
    const char *start = j->store ? j->pool + j->pool_used : NULL;
    j->last_len = 0;
    if (!lattn__jlit(j, '"')) return lattn__jfail(j, "expected a string");
    for (;;) {
        unsigned char c;
        if (j->p >= j->e) return lattn__jfail(j, "unterminated string");
        c = *j->p++;
        if (c == '"') break;
        if (c < 0x20) return lattn__jfail(j, "control character in a string");
        if (c != '\\') { lattn__jput(j, c); continue; }
        if (j->p >= j->e) return lattn__jfail(j, "unterminated escape");
        c = *j->p++;
        switch (c) {
        case '"': case '\\': case '/': lattn__jput(j, c); break;
        case 'b': lattn__jput(j, '\b'); break;
        case 'f': lattn__jput(j, '\f'); break;
        case 'n': lattn__jput(j, '\n'); break;
        case 'r': lattn__jput(j, '\r'); break;
        case 't': lattn__jput(j, '\t'); break;
        case 'u': {
            uint32_t u, lo;
            if (j->e - j->p < 4 || !lattn__hex4(j->p, &u)) return lattn__jfail(j, "bad \\u escape");
            j->p += 4;
            if (u >= 0xD800 && u <= 0xDBFF) {            /* a surrogate pair */
                if (j->e - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' || !lattn__hex4(j->p + 2, &lo) ||
                    lo < 0xDC00 || lo > 0xDFFF) return lattn__jfail(j, "unpaired surrogate in \\u escape");
                j->p += 6;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            } else if (u >= 0xDC00 && u <= 0xDFFF) return lattn__jfail(j, "unpaired surrogate in \\u escape");
            if (u == 0) return lattn__jfail(j, "NUL character in a string");
            if (u < 0x80) lattn__jput(j, (unsigned char)u);
            else if (u < 0x800) { lattn__jput(j, (unsigned char)(0xC0 | (u >> 6))); lattn__jput(j, (unsigned char)(0x80 | (u & 0x3F))); }
            else if (u < 0x10000) {
                lattn__jput(j, (unsigned char)(0xE0 | (u >> 12)));
                lattn__jput(j, (unsigned char)(0x80 | ((u >> 6) & 0x3F)));
                lattn__jput(j, (unsigned char)(0x80 | (u & 0x3F)));
            } else {
                lattn__jput(j, (unsigned char)(0xF0 | (u >> 18)));
                lattn__jput(j, (unsigned char)(0x80 | ((u >> 12) & 0x3F)));
                lattn__jput(j, (unsigned char)(0x80 | ((u >> 6) & 0x3F)));
                lattn__jput(j, (unsigned char)(0x80 | (u & 0x3F)));
            }
            break;
        }
        default: return lattn__jfail(j, "unknown escape in a string");
        }
    }
    lattn__jput(j, 0);
    if (out) *out = start;
    return LATTN_OK;
}
/* A key: a string and its ':' (lattn__jis then tests the decoded key). */
static lattn_status lattn__jkey(lattn__js *j, const char **out) {
    LATTN__TRY(lattn__jstring(j, out));
    if (!lattn__jlit(j, ':')) return lattn__jfail(j, "expected ':'");
    return LATTN_OK;
}
/* A non-negative integer without sign, fraction, exponent or leading zeros, below 2^63. */
static lattn_status lattn__jint(lattn__js *j, int64_t *out) {
    uint64_t v = 0;
    const unsigned char *s;
    lattn__jws(j);
    s = j->p;
    while (j->p < j->e && *j->p >= '0' && *j->p <= '9') {
        if (v > (uint64_t)(INT64_MAX - 9) / 10) return lattn__jfail(j, "integer too large");
        v = v * 10 + (uint64_t)(*j->p++ - '0');
    }
    if (j->p == s) return lattn__jfail(j, "expected a non-negative integer");
    if (j->p - s > 1 && *s == '0') return lattn__jfail(j, "integer with a leading zero");
    if (j->p < j->e && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) return lattn__jfail(j, "expected an integer, found a real number");
    *out = (int64_t)v;
    return LATTN_OK;
}
static lattn_status lattn__jints(lattn__js *j, int64_t *v, int maxn, int *n, const char *what) {
    *n = 0;
    if (!lattn__jlit(j, '[')) return lattn__jfail(j, what);
    if (lattn__jlit(j, ']')) return LATTN_OK;
    do {
        if (*n == maxn) return lattn__jfail(j, "too many integers in an array");
        LATTN__TRY(lattn__jint(j, &v[(*n)++]));
    } while (lattn__jlit(j, ','));
    if (!lattn__jlit(j, ']')) return lattn__jfail(j, "expected ',' or ']'");
    return LATTN_OK;
}

/* One parse pass over the header; in the store pass fills f and the begin/end offsets. */
static lattn_status lattn__st_pass(lattn__js *j, lattn_st_file *f, size_t *begin, size_t *end) {
    int seen_meta = 0;
    f->n_tensors = 0;
    f->n_meta = 0;
    if (!lattn__jlit(j, '{')) return lattn__jfail(j, "the header is not a JSON object");
    if (!lattn__jlit(j, '}')) {
        do {
            const char *key = NULL;
            LATTN__TRY(lattn__jkey(j, &key));
            if (lattn__jis(j, "__metadata__")) {
                if (seen_meta++) return lattn__jfail(j, "duplicate __metadata__");
                if (!lattn__jlit(j, '{')) return lattn__jfail(j, "__metadata__ is not an object");
                if (!lattn__jlit(j, '}')) {
                    do {
                        const char *k2 = NULL, *v2 = NULL;
                        LATTN__TRY(lattn__jkey(j, &k2));
                        LATTN__TRY(lattn__jstring(j, &v2));
                        if (j->store) { f->meta_keys[f->n_meta] = k2; f->meta_values[f->n_meta] = v2; }
                        f->n_meta++;
                    } while (lattn__jlit(j, ','));
                    if (!lattn__jlit(j, '}')) return lattn__jfail(j, "expected ',' or '}' in __metadata__");
                }
            } else {
                int have = 0, nd = 0, no = 0, i;
                int64_t shape[LATTN_ST_MAX_DIMS], offs[2];
                lattn_dtype dt = LATTN_DTYPE_F32;
                if (!lattn__jlit(j, '{')) return lattn__jfail(j, "a tensor entry is not an object");
                do {
                    const char *fld = NULL;
                    LATTN__TRY(lattn__jkey(j, &fld));
                    if (lattn__jis(j, "dtype")) {
                        const unsigned char *vs;
                        if (have & 1) return lattn__jfail(j, "duplicate dtype");
                        have |= 1;
                        lattn__jws(j);
                        vs = j->p;
                        LATTN__TRY(lattn__jstring(j, NULL));
                        for (i = 0; i < 6 && !lattn__jis(j, lattn__dtype_names[i]); i++) {}
                        if (i == 6) return lattn__fail(j->ctx, LATTN_E_UNSUPPORTED, "safetensors: header byte %zu: dtype %.*s is not supported (F32 F64 F16 BF16 I32 I64)",
                                                       (size_t)(vs - j->b), (int)LATTN__MIN(j->p - vs, 16), (const char *)vs);
                        dt = (lattn_dtype)i;
                    } else if (lattn__jis(j, "shape")) {
                        if (have & 2) return lattn__jfail(j, "duplicate shape");
                        have |= 2;
                        LATTN__TRY(lattn__jints(j, shape, LATTN_ST_MAX_DIMS, &nd, "shape is not an array"));
                    } else if (lattn__jis(j, "data_offsets")) {
                        if (have & 4) return lattn__jfail(j, "duplicate data_offsets");
                        have |= 4;
                        LATTN__TRY(lattn__jints(j, offs, 2, &no, "data_offsets is not an array"));
                        if (no != 2) return lattn__jfail(j, "data_offsets needs two integers");
                    } else return lattn__jfail(j, "unknown field in a tensor entry");
                } while (lattn__jlit(j, ','));
                if (!lattn__jlit(j, '}')) return lattn__jfail(j, "expected ',' or '}' in a tensor entry");
                if (have != 7) return lattn__jfail(j, "a tensor entry needs dtype, shape and data_offsets");
                if (j->store) {
                    lattn_st_tensor *t = &f->tensors[f->n_tensors];
                    t->name = key;
                    t->dtype = dt;
                    t->ndim = nd;
                    for (i = 0; i < nd; i++) t->shape[i] = shape[i];
                    begin[f->n_tensors] = (size_t)offs[0];
                    end[f->n_tensors] = (size_t)offs[1];
                }
                f->n_tensors++;
            }
        } while (lattn__jlit(j, ','));
        if (!lattn__jlit(j, '}')) return lattn__jfail(j, "expected ',' or '}'");
    }
    lattn__jws(j);
    if (j->p != j->e) return lattn__jfail(j, "characters after the header object");
    return LATTN_OK;
}

typedef struct lattn__range { size_t begin, end; int64_t i; } lattn__range;
static int lattn__range_cmp(const void *a, const void *b) {
    const lattn__range *x = (const lattn__range *)a, *y = (const lattn__range *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}
static int lattn__name_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}
/* Sorts names[0..n) and returns a name that occurs twice, or NULL: O(n log n), so a header of a
   million keys is checked in a fraction of a second. */
static const char *lattn__first_dup(const char **names, size_t n) {
    size_t i;
    qsort((void *)names, n, sizeof *names, lattn__name_cmp);
    for (i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) return names[i];
    return NULL;
}

LATTN__DEF lattn_status lattn_st_parse(lattn_ctx *ctx, const void *buf, size_t size, lattn_st_file *f) {
    const unsigned char *u = (const unsigned char *)buf;
    uint64_t hl = 0;
    size_t i, data_len, need, arr, off, nn;
    const char *dup;
    lattn__js j;
    lattn_status st;
    lattn__range *rg = NULL;
    const char **names = NULL;
    size_t *bounds = NULL;
    if (!f) return lattn__fail(ctx, LATTN_E_NULL, "lattn_st_parse: file is NULL");
    memset(f, 0, sizeof *f);
    if (!buf && size) return lattn__fail(ctx, LATTN_E_NULL, "lattn_st_parse: buffer is NULL");
    if (size < 8) return lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: %zu bytes, shorter than the 8-byte header length", size);
    for (i = 0; i < 8; i++) hl |= (uint64_t)u[i] << (8 * i);
    if (hl > (uint64_t)LATTN_ST_MAX_HEADER)
        return lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: header length %llu exceeds LATTN_ST_MAX_HEADER (%llu)",
                           (unsigned long long)hl, (unsigned long long)LATTN_ST_MAX_HEADER);
    if (hl > (uint64_t)(size - 8))
        return lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: header length %llu runs past the end of the %zu-byte file",
                           (unsigned long long)hl, size);
    for (i = 0; i < (size_t)hl;) {       /* the whole header must be UTF-8 */
        size_t L = lattn__utf8_len(u + 8 + i, (size_t)hl - i);
        if (!L) return lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: header byte %zu: invalid UTF-8", i);
        i += L;
    }
    data_len = size - 8 - (size_t)hl;
    memset(&j, 0, sizeof j);
    j.ctx = ctx;
    j.b = u + 8;
    j.e = u + 8 + hl;
    j.p = j.b;
    LATTN__TRY(lattn__st_pass(&j, f, NULL, NULL));            /* count */
    arr = (size_t)f->n_tensors * sizeof(lattn_st_tensor) + 2 * (size_t)f->n_meta * sizeof(char *);
    need = arr + j.str_bytes;                                  /* bounded by the header size */
    f->block = lattn__alloc(ctx, need);
    bounds = (size_t *)lattn__alloc(ctx, 2 * sizeof(size_t) * (size_t)(f->n_tensors + 1));
    rg = (lattn__range *)lattn__alloc(ctx, sizeof(lattn__range) * (size_t)(f->n_tensors + 1));
    nn = (size_t)LATTN__MAX(f->n_tensors, f->n_meta);
    names = (const char **)lattn__alloc(ctx, sizeof(char *) * (nn + 1));
    if (!f->block || !bounds || !rg || !names) {
        st = lattn__fail(ctx, LATTN_E_NOMEM, "lattn_st_parse: out of memory");
        goto fail;
    }
    memset(f->block, 0, need);
    f->tensors = (lattn_st_tensor *)f->block;
    f->meta_keys = (const char **)(void *)((char *)f->block + (size_t)f->n_tensors * sizeof(lattn_st_tensor));
    f->meta_values = f->meta_keys + f->n_meta;
    j.store = 1;
    j.p = j.b;
    j.pool = (char *)f->block + arr;
    j.pool_used = 0;
    if ((st = lattn__st_pass(&j, f, bounds, bounds + f->n_tensors + 1)) != LATTN_OK) goto fail;
    /* sizes, then the ranges must tile the data region in order */
    for (i = 0; i < (size_t)f->n_tensors; i++) {
        lattn_st_tensor *t = &f->tensors[i];
        size_t b = bounds[i], e = bounds[f->n_tensors + 1 + i], bytes;
        if (lattn__count(&t->count, t->ndim, t->shape) != LATTN_OK ||
            lattn_size_mul(&bytes, t->count, lattn_dtype_size(t->dtype)) != LATTN_OK) {
            st = lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: tensor '%s': shape overflows", t->name);
            goto fail;
        }
        if (e < b || e - b != bytes) {
            st = lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: tensor '%s': data_offsets [%zu, %zu) hold %s bytes, %s x shape needs %zu",
                             t->name, b, e, e < b ? "negative" : "a different number of", lattn_dtype_name(t->dtype), bytes);
            goto fail;
        }
        if (e > data_len) {
            st = lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: tensor '%s': data_offsets end %zu past the %zu-byte data region",
                             t->name, e, data_len);
            goto fail;
        }
        t->data = u + 8 + hl + b;
        rg[i].begin = b;
        rg[i].end = e;
        rg[i].i = (int64_t)i;
        names[i] = t->name;
    }
    qsort(rg, (size_t)f->n_tensors, sizeof *rg, lattn__range_cmp);
    for (off = 0, i = 0; i < (size_t)f->n_tensors; i++) {
        if (rg[i].begin != off) {
            st = lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: tensor '%s': data starts at %zu, expected %zu (%s)",
                             f->tensors[rg[i].i].name, rg[i].begin, off, rg[i].begin > off ? "a gap" : "overlapping ranges");
            goto fail;
        }
        off = rg[i].end;
    }
    if (off != data_len) {
        st = lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: %zu trailing bytes after the last tensor", data_len - off);
        goto fail;
    }
    if ((dup = lattn__first_dup(names, (size_t)f->n_tensors)) != NULL) {
        st = lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: duplicate tensor name '%s'", dup);
        goto fail;
    }
    memcpy((void *)names, (const void *)f->meta_keys, sizeof(char *) * (size_t)f->n_meta);
    if ((dup = lattn__first_dup(names, (size_t)f->n_meta)) != NULL) {
        st = lattn__fail(ctx, LATTN_E_FORMAT, "safetensors: duplicate __metadata__ key '%s'", dup);
        goto fail;
    }
    lattn__free(ctx, bounds);
    lattn__free(ctx, rg);
    lattn__free(ctx, (void *)names);
    return lattn__ok(ctx);
fail:
    lattn__free(ctx, bounds);
    lattn__free(ctx, rg);
    lattn__free(ctx, (void *)names);
    lattn__free(ctx, f->block);
    memset(f, 0, sizeof *f);
    return st;
}

LATTN__DEF void lattn_st_free(lattn_ctx *ctx, lattn_st_file *f) {
    if (!f) return;
    lattn__free(ctx, f->block);
    lattn__free(ctx, f->owned);
    memset(f, 0, sizeof *f);
}
LATTN__DEF const lattn_st_tensor *lattn_st_find(const lattn_st_file *f, const char *name) {
    int64_t i;
    if (!f || !name) return NULL;
    for (i = 0; i < f->n_tensors; i++) if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}
LATTN__DEF const char *lattn_st_meta(const lattn_st_file *f, const char *key) {
    int64_t i;
    if (!f || !key) return NULL;
    for (i = 0; i < f->n_meta; i++) if (strcmp(f->meta_keys[i], key) == 0) return f->meta_values[i];
    return NULL;
}

/* IEEE half to double: subnormals, infinities and NaN included. */
static double lattn__half(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double r = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : HUGE_VAL) : ldexp((double)(m | 1024), e - 25);
    return (h & 0x8000) ? -r : r;
}
/* Element i of a tensor as a double. */
static double lattn__st_elem(const lattn_st_tensor *t, size_t i) {
    const unsigned char *p = t->data + i * lattn_dtype_size(t->dtype);
    switch (t->dtype) {
    case LATTN_DTYPE_F32: { float v; memcpy(&v, p, 4); return v; }
    case LATTN_DTYPE_F64: { double v; memcpy(&v, p, 8); return v; }
    case LATTN_DTYPE_F16: { uint16_t h; memcpy(&h, p, 2); return lattn__half(h); }
    case LATTN_DTYPE_BF16: { uint32_t b = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 24; float v; memcpy(&v, &b, 4); return v; }
    case LATTN_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); return (double)v; }
    default: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    }
}
static lattn_status lattn__st_conv(lattn_ctx *ctx, const lattn_st_tensor *t, size_t n, const char *who) {
    if (!t) return lattn__fail(ctx, LATTN_E_NULL, "%s: tensor is NULL", who);
    if (n != t->count)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: tensor '%s' has %zu elements, %zu requested", who, t->name, t->count, n);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_st_to_f32(lattn_ctx *ctx, const lattn_st_tensor *t, float *out, size_t n) {
    size_t i;
    LATTN__TRY(lattn__st_conv(ctx, t, n, "lattn_st_to_f32"));
    if (n && !out) return lattn__fail(ctx, LATTN_E_NULL, "lattn_st_to_f32: out is NULL");
    if (t->dtype == LATTN_DTYPE_F32) { if (n) memcpy(out, t->data, n * 4); }
    else for (i = 0; i < n; i++) out[i] = (float)lattn__st_elem(t, i);
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_st_to_f64(lattn_ctx *ctx, const lattn_st_tensor *t, double *out, size_t n) {
    size_t i;
    LATTN__TRY(lattn__st_conv(ctx, t, n, "lattn_st_to_f64"));
    if (n && !out) return lattn__fail(ctx, LATTN_E_NULL, "lattn_st_to_f64: out is NULL");
    for (i = 0; i < n; i++) out[i] = lattn__st_elem(t, i);
    return lattn__ok(ctx);
}

/* Writer: JSON text appended to a buffer (or only measured when buf is NULL). */
typedef struct lattn__sb { char *buf; size_t len; } lattn__sb;
static void lattn__sb_put(lattn__sb *s, const char *x, size_t n) {
    if (s->buf) memcpy(s->buf + s->len, x, n);
    s->len += n;
}
static void lattn__sb_str(lattn__sb *s, const char *x) {
    lattn__sb_put(s, "\"", 1);
    for (; *x; x++) {
        unsigned char c = (unsigned char)*x;
        char esc[8];
        if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = (char)c; lattn__sb_put(s, esc, 2); }
        else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); lattn__sb_put(s, esc, 6); }
        else lattn__sb_put(s, x, 1);
    }
    lattn__sb_put(s, "\"", 1);
}
static void lattn__sb_int(lattn__sb *s, uint64_t v) {
    char t[24];
    int n = snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    lattn__sb_put(s, t, (size_t)n);
}
/* The header text for entries whose byte sizes are given. */
static void lattn__st_header(lattn__sb *s, const lattn_st_entry *e, int64_t n, const size_t *bytes,
                             const char *const *meta, int64_t n_meta) {
    int64_t i; int d; size_t off = 0;
    lattn__sb_put(s, "{", 1);
    if (n_meta > 0) {
        lattn__sb_str(s, "__metadata__"); lattn__sb_put(s, ":{", 2);
        for (i = 0; i < n_meta; i++) {
            if (i) lattn__sb_put(s, ",", 1);
            lattn__sb_str(s, meta[2 * i]);
            lattn__sb_put(s, ":", 1);
            lattn__sb_str(s, meta[2 * i + 1]);
        }
        lattn__sb_put(s, "}", 1);
    }
    for (i = 0; i < n; i++) {
        if (i || n_meta > 0) lattn__sb_put(s, ",", 1);
        lattn__sb_str(s, e[i].name);
        lattn__sb_put(s, ":{\"dtype\":", 10); lattn__sb_str(s, lattn_dtype_name(e[i].dtype));
        lattn__sb_put(s, ",\"shape\":[", 10);
        for (d = 0; d < e[i].ndim; d++) { if (d) lattn__sb_put(s, ",", 1); lattn__sb_int(s, (uint64_t)e[i].shape[d]); }
        lattn__sb_put(s, "],\"data_offsets\":[", 18);
        lattn__sb_int(s, off);
        lattn__sb_put(s, ",", 1);
        off += bytes[i];
        lattn__sb_int(s, off);
        lattn__sb_put(s, "]}", 2);
    }
    lattn__sb_put(s, "}", 1);
}
static int lattn__utf8_ok(const char *x) {
    size_t n = strlen(x), i = 0;
    while (i < n) { size_t L = lattn__utf8_len((const unsigned char *)x + i, n - i); if (!L) return 0; i += L; }
    return 1;
}

LATTN__DEF lattn_status lattn_st_serialize(lattn_ctx *ctx, const lattn_st_entry *e, int64_t n,
                                           const char *const *meta, int64_t n_meta,
                                           unsigned char **out, size_t *size) {
    size_t *bytes, data = 0, hl, total, pos;
    lattn__sb sb;
    int64_t i;
    unsigned char *b;
    const char **names, *dup;
    if (!out || !size || (n > 0 && !e) || (n_meta > 0 && !meta))
        return lattn__fail(ctx, LATTN_E_NULL, "lattn_st_serialize: NULL argument");
    *out = NULL;
    *size = 0;
    if (n < 0 || n_meta < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "lattn_st_serialize: negative count");
    for (i = 0; i < n_meta; i++)
        if (!meta[2 * i] || !meta[2 * i + 1] || !lattn__utf8_ok(meta[2 * i]) || !lattn__utf8_ok(meta[2 * i + 1]))
            return lattn__fail(ctx, LATTN_E_DOMAIN, "lattn_st_serialize: metadata entry %lld is NULL or not UTF-8", (long long)i);
    if (n > (int64_t)(SIZE_MAX / sizeof(size_t))) return lattn__fail(ctx, LATTN_E_OVERFLOW, "lattn_st_serialize: too many tensors");
    if (n_meta > (int64_t)(SIZE_MAX / sizeof(char *))) return lattn__fail(ctx, LATTN_E_OVERFLOW, "lattn_st_serialize: too many metadata entries");
    bytes = (size_t *)lattn__alloc(ctx, sizeof(size_t) * (size_t)(n + 1));
    names = (const char **)lattn__alloc(ctx, sizeof(char *) * (size_t)(LATTN__MAX(n, n_meta) + 1));
    if (!bytes || !names) {
        lattn__free(ctx, bytes);
        lattn__free(ctx, (void *)names);
        return lattn__fail(ctx, LATTN_E_NOMEM, "lattn_st_serialize: out of memory");
    }
    for (i = 0; i < n; i++) {
        size_t cnt;
        lattn_status s = LATTN_OK;
        if (!e[i].name || !e[i].name[0] || !lattn__utf8_ok(e[i].name) || strcmp(e[i].name, "__metadata__") == 0)
            s = lattn__fail(ctx, LATTN_E_DOMAIN, "lattn_st_serialize: tensor %lld has no valid name", (long long)i);
        else if (!lattn_dtype_size(e[i].dtype) || e[i].ndim < 0 || e[i].ndim > LATTN_ST_MAX_DIMS || (e[i].ndim && !e[i].shape))
            s = lattn__fail(ctx, LATTN_E_SHAPE, "lattn_st_serialize: tensor '%s': bad dtype or dims", e[i].name);
        else if (lattn__count(&cnt, e[i].ndim, e[i].shape) != LATTN_OK || lattn_size_mul(&bytes[i], cnt, lattn_dtype_size(e[i].dtype)) != LATTN_OK ||
                 lattn_size_add(&data, data, bytes[i]) != LATTN_OK)
            s = lattn__fail(ctx, LATTN_E_OVERFLOW, "lattn_st_serialize: tensor '%s': size overflows", e[i].name);
        else if (bytes[i] && !e[i].data)
            s = lattn__fail(ctx, LATTN_E_NULL, "lattn_st_serialize: tensor '%s': data is NULL", e[i].name);
        if (s != LATTN_OK) { lattn__free(ctx, bytes); lattn__free(ctx, (void *)names); return s; }
        names[i] = e[i].name;
    }
    /* the writer refuses what lattn_st_parse refuses: a repeated tensor name or metadata key */
    dup = lattn__first_dup(names, (size_t)n);
    if (!dup) {
        for (i = 0; i < n_meta; i++) names[i] = meta[2 * i];
        if ((dup = lattn__first_dup(names, (size_t)n_meta)) != NULL) {
            lattn__free(ctx, bytes);
            lattn__free(ctx, (void *)names);
            return lattn__fail(ctx, LATTN_E_DOMAIN, "lattn_st_serialize: duplicate metadata key '%s'", dup);
        }
    }
    lattn__free(ctx, (void *)names);
    if (dup) { lattn__free(ctx, bytes); return lattn__fail(ctx, LATTN_E_DOMAIN, "lattn_st_serialize: duplicate name '%s'", dup); }
    sb.buf = NULL;
    sb.len = 0;
    lattn__st_header(&sb, e, n, bytes, meta, n_meta);
    hl = (sb.len + 7) / 8 * 8;                               /* padded with spaces to 8 bytes */
    if (hl > LATTN_ST_MAX_HEADER || lattn_size_add(&total, 8 + hl, data) != LATTN_OK) {
        lattn__free(ctx, bytes);
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "lattn_st_serialize: header or file too large");
    }
    b = (unsigned char *)lattn__alloc(ctx, total);
    if (!b) { lattn__free(ctx, bytes); return lattn__fail(ctx, LATTN_E_NOMEM, "lattn_st_serialize: cannot allocate %zu bytes", total); }
    for (i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    sb.buf = (char *)b + 8;
    sb.len = 0;
    lattn__st_header(&sb, e, n, bytes, meta, n_meta);
    memset(b + 8 + sb.len, ' ', hl - sb.len);
    for (pos = 8 + hl, i = 0; i < n; i++) { if (bytes[i]) memcpy(b + pos, e[i].data, bytes[i]); pos += bytes[i]; }
    lattn__free(ctx, bytes);
    *out = b;
    *size = total;
    return lattn__ok(ctx);
}

#ifndef LATTN_NO_STDIO
LATTN__DEF lattn_status lattn_st_load(lattn_ctx *ctx, const char *path, lattn_st_file *f) {
    FILE *fp;
    long len;
    unsigned char *b;
    lattn_status s;
    if (!path || !f) return lattn__fail(ctx, LATTN_E_NULL, "lattn_st_load: NULL argument");
    memset(f, 0, sizeof *f);
    fp = fopen(path, "rb");
    if (!fp) return lattn__fail(ctx, LATTN_E_IO, "lattn_st_load: cannot open '%s'", path);
    if (fgetc(fp) == EOF && ferror(fp)) {          /* a directory opens, but does not read */
        fclose(fp);
        return lattn__fail(ctx, LATTN_E_IO, "lattn_st_load: cannot read '%s' (a directory?)", path);
    }
    if (fseek(fp, 0, SEEK_END) != 0 || (len = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        fclose(fp);
        return lattn__fail(ctx, LATTN_E_IO, "lattn_st_load: cannot size '%s'", path);
    }
    b = (unsigned char *)lattn__alloc(ctx, (size_t)len);
    if (!b) { fclose(fp); return lattn__fail(ctx, LATTN_E_NOMEM, "lattn_st_load: cannot allocate %ld bytes", len); }
    if (len > 0 && fread(b, 1, (size_t)len, fp) != (size_t)len) {
        fclose(fp);
        lattn__free(ctx, b);
        return lattn__fail(ctx, LATTN_E_IO, "lattn_st_load: short read from '%s'", path);
    }
    fclose(fp);
    s = lattn_st_parse(ctx, b, (size_t)len, f);
    if (s != LATTN_OK) { lattn__free(ctx, b); return s; }
    f->owned = b;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_st_save(lattn_ctx *ctx, const char *path, const lattn_st_entry *e, int64_t n,
                                      const char *const *meta, int64_t n_meta) {
    unsigned char *b;
    size_t size;
    FILE *fp;
    int ok;
    if (!path) return lattn__fail(ctx, LATTN_E_NULL, "lattn_st_save: path is NULL");
    LATTN__TRY(lattn_st_serialize(ctx, e, n, meta, n_meta, &b, &size));
    fp = fopen(path, "wb");
    if (!fp) { lattn__free(ctx, b); return lattn__fail(ctx, LATTN_E_IO, "lattn_st_save: cannot create '%s'", path); }
    ok = fwrite(b, 1, size, fp) == size;
    ok = (fclose(fp) == 0) && ok;
    lattn__free(ctx, b);
    return ok ? lattn__ok(ctx) : lattn__fail(ctx, LATTN_E_IO, "lattn_st_save: cannot write '%s'", path);
}
#endif

#ifndef LATTN_NO_MODELS
/* ================================================================================================ */
/* >>laplace implementation                                                                         */
/* ================================================================================================ */
LATTN__DEF lattn_laplace_config lattn_laplace_config_3b(void) {
    lattn_laplace_config c;
    c.n_layers = 24;
    c.D = 3072;
    c.H = 16;
    c.K = 96;
    c.V = 192;
    c.ffn = 8192;
    c.conv_w = 4;
    c.vocab = 0;
    c.gate_mode = LATTN_OUT_RMSNORM_SWISH;
    c.norm_eps = 1e-5f;
    return c;
}
LATTN__DEF lattn_laplace_config lattn_laplace_config_small(void) {
    lattn_laplace_config c = lattn_laplace_config_3b();
    c.n_layers = 2;
    c.D = 64;
    c.H = 4;
    c.K = 16;
    c.V = 32;
    c.ffn = 176;
    c.vocab = 256;
    return c;
}
/* Σ_j Π_i terms[j][i] over nt products of 4 sizes, with lattn__count's overflow checks; -1 when
   it does not fit (or a size is not positive). */
static int64_t lattn__laplace_sum(int nt, int64_t (*terms)[4]) {
    size_t sum = 0, c;
    int j, i;
    for (j = 0; j < nt; j++) {
        for (i = 0; i < 4; i++) if (terms[j][i] < 1) return -1;
        if (lattn__count(&c, 4, terms[j]) != LATTN_OK || lattn_size_add(&sum, sum, c) != LATTN_OK) return -1;
    }
    return sum > (size_t)INT64_MAX ? -1 : (int64_t)sum;
}
static int64_t lattn__laplace_state_floats(const lattn_laplace_config *c) {
    int64_t t[2][4];
    if (!c) return -1;
    t[0][0] = c->n_layers;
    t[0][1] = c->H;
    t[0][2] = c->K;
    t[0][3] = c->V; /* GLA states */
    t[1][0] = c->n_layers;
    t[1][1] = c->D;
    t[1][2] = c->conv_w;
    t[1][3] = 1; /* conv caches */
    return lattn__laplace_sum(2, t);
}
LATTN__DEF lattn_status lattn_laplace_state_floats(const lattn_laplace_config *c, size_t *out) {
    return lattn__size_out(lattn__laplace_state_floats(c), out);
}
static int64_t lattn__laplace_matrix_params(const lattn_laplace_config *c, int64_t *n_matrices) {
    int64_t t[5][4], n;
    if (n_matrices) *n_matrices = -1;
    if (!c) return -1;
    t[0][0] = c->n_layers;
    t[0][1] = c->H;
    t[0][2] = 2 * LATTN__MIN(c->K, INT64_MAX / 4);
    t[0][3] = c->D; /* W_qkvg: q, k */
    t[1][0] = c->n_layers;
    t[1][1] = c->H;
    t[1][2] = 2 * LATTN__MIN(c->V, INT64_MAX / 4);
    t[1][3] = c->D; /*          v, g */
    t[2][0] = c->n_layers;
    t[2][1] = c->H;
    t[2][2] = c->V;
    t[2][3] = c->D; /* W_o */
    t[3][0] = c->n_layers;
    t[3][1] = 2;
    t[3][2] = c->ffn;
    t[3][3] = c->D; /* W_1, W_2 */
    t[4][0] = c->n_layers;
    t[4][1] = 1;
    t[4][2] = c->ffn;
    t[4][3] = c->D; /* W_3 */
    n = lattn__laplace_sum(5, t);
    if (n >= 0 && n_matrices) *n_matrices = 4 * c->n_layers;
    return n;
}
LATTN__DEF lattn_status lattn_laplace_matrix_params(const lattn_laplace_config *c, size_t *out, int64_t *n_matrices) {
    return lattn__size_out(lattn__laplace_matrix_params(c, n_matrices), out);
}

/* The tensors of one layer, in arena order; the model's three global tensors follow the layers. */
enum {
    LATTN__LP_LN1_W, LATTN__LP_LN1_B, LATTN__LP_CONV, LATTN__LP_QKVG, LATTN__LP_GNORM, LATTN__LP_WO,
    LATTN__LP_LN2_W, LATTN__LP_LN2_B, LATTN__LP_W1, LATTN__LP_W2, LATTN__LP_W3, LATTN__LP_N
};
enum { LATTN__LG_EMBED, LATTN__LG_NORM_W, LATTN__LG_NORM_B, LATTN__LG_N };
static const char *const lattn__lp_names[LATTN__LP_N] = {
    "attn_norm.weight", "attn_norm.bias", "attn.conv.weight", "attn.qkvg_proj.weight", "attn.g_norm.weight",
    "attn.o_proj.weight", "mlp_norm.weight", "mlp_norm.bias", "mlp.gate_proj.weight", "mlp.up_proj.weight",
    "mlp.down_proj.weight"
};
static const char *const lattn__lg_names[LATTN__LG_N] = { "embeddings.weight", "norm.weight", "norm.bias" };
static const char *const lattn__gate_names[] = { "rmsnorm_swish", "swish", "sigmoid", "rmsnorm_sigmoid" };
#define LATTN__LAPLACE_MAX_LAYERS 100000

static float *lattn__lw(const lattn_laplace_model *m, int64_t l, int slot) {
    return m->tensors[l * LATTN__LP_N + slot].data;
}
static float *lattn__lg(const lattn_laplace_model *m, int slot) {
    return m->tensors[m->cfg.n_layers * LATTN__LP_N + slot].data;
}
/* Shape of layer tensor `slot` (slot >= LATTN__LP_N: global tensor slot - LATTN__LP_N). */
static int lattn__laplace_shape(const lattn_laplace_config *c, int slot, int64_t *s) {
    int64_t D = c->D;
    switch (slot) {
    case LATTN__LP_CONV: s[0] = D; s[1] = c->conv_w; return 2;
    case LATTN__LP_QKVG: s[0] = c->H * (2 * c->K + 2 * c->V); s[1] = D; return 2;
    case LATTN__LP_GNORM: s[0] = c->V; return 1;
    case LATTN__LP_WO: s[0] = D; s[1] = c->H * c->V; return 2;
    case LATTN__LP_W1: case LATTN__LP_W2: s[0] = c->ffn; s[1] = D; return 2;
    case LATTN__LP_W3: s[0] = D; s[1] = c->ffn; return 2;
    case LATTN__LP_N + LATTN__LG_EMBED: s[0] = c->vocab; s[1] = D; return 2;
    default: s[0] = D; return 1;                                 /* the LayerNorm vectors */
    }
}

static lattn_status lattn__laplace_check_cfg(lattn_ctx *ctx, const char *who, const lattn_laplace_config *c) {
    int64_t t[1][4];
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: configuration is NULL", who);
    if (c->n_layers < 1 || c->D < 1 || c->H < 1 || c->K < 1 || c->V < 1 || c->ffn < 1 || c->conv_w < 1 || c->vocab < 0)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: every size must be >= 1 (vocab >= 0)", who);
    if (c->n_layers > LATTN__LAPLACE_MAX_LAYERS)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: n_layers = %lld (at most %d)", who, (long long)c->n_layers, LATTN__LAPLACE_MAX_LAYERS);
    if ((unsigned)c->gate_mode > (unsigned)LATTN_OUT_RMSNORM_SIGMOID)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: unknown gate_mode %d", who, (int)c->gate_mode);
    if (!(c->norm_eps > 0.0f) || !isfinite(c->norm_eps))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: norm_eps must be positive and finite", who);
    t[0][0] = 1;
    t[0][1] = 1;
    t[0][2] = c->vocab + 1;
    t[0][3] = c->D;
    if (lattn__laplace_matrix_params(c, NULL) < 0 || lattn__laplace_state_floats(c) < 0 || lattn__laplace_sum(1, t) < 0)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the model's sizes overflow", who);
    return LATTN_OK;
}

/* Lay out the tensor table and the arena (weights uninitialised). */
static lattn_status lattn__laplace_alloc(lattn_ctx *ctx, lattn_laplace_model *m, const lattn_laplace_config *c,
                                         const char *who) {
    int64_t L, i, nt;
    memset(m, 0, sizeof *m);
    LATTN__TRY(lattn__laplace_check_cfg(ctx, who, c));
    L = c->n_layers;
    nt = L * LATTN__LP_N + (c->vocab > 0 ? LATTN__LG_N : 0);
    LATTN__TRY(lattn__table_new(ctx, who, nt, (size_t)c->H, &m->tensors));
    m->g_gamma = (float *)(void *)(m->tensors + nt);
    for (i = 0; i < nt; i++) {
        lattn_tensor *t = &m->tensors[i];
        int slot = i < L * LATTN__LP_N ? (int)(i % LATTN__LP_N) : LATTN__LP_N + (int)(i - L * LATTN__LP_N);
        if (slot < LATTN__LP_N) snprintf(t->name, sizeof t->name, "layers.%lld.%s", (long long)(i / LATTN__LP_N), lattn__lp_names[slot]);
        else snprintf(t->name, sizeof t->name, "%s", lattn__lg_names[slot - LATTN__LP_N]);
        t->ndim = lattn__laplace_shape(c, slot, t->shape);
    }
    if (lattn__arena_bind(ctx, who, m->tensors, nt, &m->arena, &m->n_params) != LATTN_OK) { memset(m, 0, sizeof *m); return LATTN_E_NOMEM; }
    m->cfg = *c;
    m->n_tensors = nt;
    lattn_retention_decay(c->H, m->g_gamma);
    return LATTN_OK;
}

LATTN__DEF lattn_status lattn_laplace_init(lattn_ctx *ctx, lattn_laplace_model *m, const lattn_laplace_config *c,
                                           uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    if (!m) return lattn__fail(ctx, LATTN_E_NULL, "lattn_laplace_init: model is NULL");
    LATTN__TRY(lattn__laplace_alloc(ctx, m, c, "lattn_laplace_init"));
    lattn__arena_init(m->tensors, m->n_tensors, &r);
    return lattn__ok(ctx);
}
LATTN__DEF void lattn_laplace_free(lattn_ctx *ctx, lattn_laplace_model *m) {
    if (!m) return;
    lattn__free(ctx, m->arena);
    lattn__free(ctx, m->tensors);
    memset(m, 0, sizeof *m);
}
LATTN__DEF lattn_tensor *lattn_laplace_tensor(const lattn_laplace_model *m, const char *name) {
    return m ? lattn__arena_find(m->tensors, m->n_tensors, name) : NULL;
}

/* The Laplace configuration's fields (gate_mode travels as an int). */
static int lattn__laplace_fields(lattn_laplace_config *c, int *gate, lattn__cfield *fl) {
    static const char *const keys[8] = { "laplace.n_layers", "laplace.D", "laplace.H", "laplace.K", "laplace.V",
                                         "laplace.ffn", "laplace.conv_w", "laplace.vocab" };
    int64_t *p[8];
    int i;
    p[0] = &c->n_layers;
    p[1] = &c->D;
    p[2] = &c->H;
    p[3] = &c->K;
    p[4] = &c->V;
    p[5] = &c->ffn;
    p[6] = &c->conv_w;
    p[7] = &c->vocab;
    memset(fl, 0, 10 * sizeof *fl);
    for (i = 0; i < 8; i++) { fl[i].key = keys[i]; fl[i].i = p[i]; }
    fl[8].key = "laplace.gate_mode";
    fl[8].e = gate;
    fl[8].names = lattn__gate_names;
    fl[8].n_names = 4;
    fl[9].key = "laplace.norm_eps";
    fl[9].f = &c->norm_eps;
    return 10;
}
LATTN__DEF lattn_status lattn_laplace_serialize(lattn_ctx *ctx, const lattn_laplace_model *m,
                                                unsigned char **out, size_t *size) {
    lattn__cfield fl[LATTN__CFG_MAX];
    lattn_laplace_config c;
    int gate, n;
    if (!m || !m->arena || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "lattn_laplace_serialize: NULL argument");
    c = m->cfg;
    gate = (int)c.gate_mode;
    n = lattn__laplace_fields(&c, &gate, fl);
    return lattn__arena_serialize(ctx, "lattn_laplace_serialize", m->tensors, m->n_tensors, fl, n, out, size);
}
LATTN__DEF lattn_status lattn_laplace_init_st(lattn_ctx *ctx, lattn_laplace_model *m, const lattn_st_file *f,
                                              const char *prefix) {
    const char *who = "lattn_laplace_init_file";
    lattn_laplace_config c = lattn_laplace_config_3b();
    lattn__cfield fl[LATTN__CFG_MAX];
    int gate = 0, n;
    lattn_status st;
    if (!m || !f) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    memset(m, 0, sizeof *m);
    if (!prefix) prefix = "";
    if (strlen(prefix) >= LATTN_NAME_MAX) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: prefix too long", who);
    n = lattn__laplace_fields(&c, &gate, fl);
    LATTN__TRY(lattn__cfg_read(ctx, who, f, fl, n));
    c.gate_mode = (lattn_out_gate)gate;
    if ((st = lattn__laplace_alloc(ctx, m, &c, who)) != LATTN_OK) return lattn__as_format(ctx, st);
    if ((st = lattn__arena_load(ctx, who, m->tensors, m->n_tensors, f, prefix)) != LATTN_OK) { lattn_laplace_free(ctx, m); return st; }
    return lattn__ok(ctx);
}
#ifndef LATTN_NO_STDIO
LATTN__MODEL_FILES(laplace, lattn_laplace_model)
#endif

/* ---- forward --------------------------------------------------------------------------------- */
static lattn_status lattn__laplace_args(lattn_ctx *ctx, const char *who, const lattn_laplace_model *m, int64_t B,
                                        int64_t T, const int32_t *tokens, const float *x, const float *out) {
    int64_t i, dims[3];
    if (!m || !m->arena || !out) return lattn__fail(ctx, LATTN_E_NULL, "%s: model or output is NULL", who);
    if (m->cfg.vocab > 0 ? !tokens : !x)
        return lattn__fail(ctx, LATTN_E_NULL, "%s: %s is NULL", who, m->cfg.vocab > 0 ? "tokens" : "x");
    if (B < 1 || T < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld", who, (long long)B, (long long)T);
    dims[0] = B;
    dims[1] = T;
    dims[2] = LATTN__MAX(LATTN__MAX(m->cfg.D, m->cfg.vocab), LATTN__MAX(m->cfg.ffn, m->cfg.H * (2 * m->cfg.K + 2 * m->cfg.V)));
    LATTN__TRY(lattn__check_count(ctx, who, "the activations", 3, dims));
    for (i = 0; tokens && m->cfg.vocab > 0 && i < B * T; i++)
        if (tokens[i] < 0 || tokens[i] >= m->cfg.vocab)
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: tokens[%lld] = %d is outside [0, %lld)", who, (long long)i,
                               (int)tokens[i], (long long)m->cfg.vocab);
    return LATTN_OK;
}

static double lattn__rsqrt_mean_sq_d(int64_t n, const double *x, double eps) {
    double s = 0; int64_t i;
    for (i = 0; i < n; i++) s += x[i] * x[i];
    return 1.0 / sqrt(s / (double)n + eps);
}
static void lattn__layernorm_d(int64_t n, const double *x, const float *w, const float *b, double eps, double *y) {
    double mean = 0, var = 0; int64_t i;
    for (i = 0; i < n; i++) mean += x[i];
    mean /= (double)n;
    for (i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    var = 1.0 / sqrt(var / (double)n + eps);
    for (i = 0; i < n; i++) y[i] = (x[i] - mean) * var * w[i] + b[i];
}
/* y[j] (+)= W[j]·x over the rows of a [rows][n] weight. */
static void lattn__matvec_d(int64_t rows, int64_t n, const float *W, const double *x, double *y, int acc) {
    int64_t j, i;
    for (j = 0; j < rows; j++) {
        double s = 0;
        for (i = 0; i < n; i++) s += (double)W[j * n + i] * x[i];
        y[j] = acc ? y[j] + s : s;
    }
}
static double lattn__sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
/* The output gate of the gated linear-attention layers (fla's GLA, Simple GLA, GDN; the Laplace
   layer), per row of dv values: y = [RMSNorm(o)·w] ⊙ [SiLU(g) or σ(g)]; norm, swish pick the parts. */
static void lattn__gate_row_d(int64_t dv, double *o, const double *g, const float *w, int norm, int swish, double eps) {
    double r = norm ? lattn__rsqrt_mean_sq_d(dv, o, eps) : 1.0;
    int64_t j;
    for (j = 0; j < dv; j++)
        o[j] *= r * (norm ? (double)w[j] : 1.0) * (swish ? lattn__silu_d(g[j]) : lattn__sigmoid_d(g[j]));
}
/* The same in float32 over `rows` rows of O (G is overwritten with its activation). */
static void lattn__gate_rows(int nthr, int64_t rows, int64_t dv, float *O, float *G, const float *w, int norm, int swish,
                             float eps) {
    int64_t r;
    (void)nthr;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (r = 0; r < rows; r++) {
        float *o = O + r * dv, *g = G + r * dv, rs = 1.0f;
        int64_t j;
        if (swish) lattn_vec_silu((size_t)dv, g, g); else lattn_vec_sigmoid((size_t)dv, g, g);
        if (norm) rs = 1.0f / sqrtf(lattn_vec_dot((size_t)dv, o, o) / (float)dv + eps);
        for (j = 0; j < dv; j++) o[j] *= g[j] * rs * (norm ? w[j] : 1.0f);
    }
}

/* The reference: each sequence token by token through every layer, in double, its state kept in
   double while it runs. This is the recurrent form of the equations above, line for line. */
LATTN__DEF lattn_status lattn_laplace_forward_ref(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B,
                                                  int64_t T, const int32_t *tokens, const float *x,
                                                  float *out, float *state, double *out64) {
    const char *who = "lattn_laplace_forward_ref";
    const lattn_laplace_config *c;
    int64_t D, H, dk, dv, W, SF, LS, b, t, l, i, j, h, NQ, nout;
    double *buf, *st, *xd, *hd, *zd, *yd, *f1, *f2, *lg;
    size_t n;
    int norm, swish;
    LATTN__TRY(lattn__laplace_args(ctx, who, m, B, T, tokens, x, out));
    c = &m->cfg;
    norm = c->gate_mode == LATTN_OUT_RMSNORM_SWISH || c->gate_mode == LATTN_OUT_RMSNORM_SIGMOID;
    swish = c->gate_mode == LATTN_OUT_RMSNORM_SWISH || c->gate_mode == LATTN_OUT_SWISH;
    D = c->D;
    H = c->H;
    dk = c->K;
    dv = c->V;
    W = c->conv_w;
    SF = lattn__laplace_state_floats(c);
    LS = SF / c->n_layers;
    NQ = H * (2 * dk + 2 * dv);
    nout = c->vocab > 0 ? c->vocab : D;
    if (T == 0) return lattn__ok(ctx);
    n = (size_t)SF + 2 * (size_t)D + (size_t)NQ + (size_t)(H * dv) + 2 * (size_t)c->ffn + (size_t)nout;
    if (lattn_size_mul(&n, n, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, n)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    st = buf;
    xd = st + SF;
    hd = xd + D;
    zd = hd + D;
    yd = zd + NQ;
    f1 = yd + H * dv;
    f2 = f1 + c->ffn;
    lg = f2 + c->ffn;
    for (b = 0; b < B; b++) {
        for (i = 0; i < SF; i++) st[i] = state ? (double)state[b * SF + i] : 0.0;
        for (t = 0; t < T; t++) {
            int64_t tok = b * T + t;
            for (i = 0; i < D; i++) xd[i] = c->vocab > 0 ? lattn__lg(m, LATTN__LG_EMBED)[(int64_t)tokens[tok] * D + i] : x[tok * D + i];
            for (l = 0; l < c->n_layers; l++) {
                double *cache = st + l * LS, *S = cache + D * W;
                const double s = 1.0 / sqrt((double)dk);
                /* h = LayerNorm1(x); u = SiLU(conv(h)) (cache: shift left, newest last) */
                lattn__layernorm_d(D, xd, lattn__lw(m, l, LATTN__LP_LN1_W), lattn__lw(m, l, LATTN__LP_LN1_B), c->norm_eps, hd);
                for (i = 0; i < D; i++) {
                    double acc = 0;
                    for (j = 0; j + 1 < W; j++) cache[i * W + j] = cache[i * W + j + 1];
                    cache[i * W + W - 1] = hd[i];
                    for (j = 0; j < W; j++) acc += (double)lattn__lw(m, l, LATTN__LP_CONV)[i * W + j] * cache[i * W + j];
                    hd[i] = lattn__silu_d(acc);
                }
                /* q | k | v | g = W_qkvg u */
                lattn__matvec_d(NQ, D, lattn__lw(m, l, LATTN__LP_QKVG), hd, zd, 0);
                for (h = 0; h < H; h++) {
                    const double *q = zd + h * dk, *k = zd + H * dk + h * dk, *v = zd + 2 * H * dk + h * dv;
                    const double *g = zd + 2 * H * dk + H * dv + h * dv, gam = exp(lattn__retnet_lg(h));   /* in double */
                    double *o = yd + h * dv, *Sh = S + h * dk * dv;
                    /* S = γ S + k vᵀ;  o = s Sᵀ q */
                    for (j = 0; j < dv; j++) o[j] = 0;
                    for (i = 0; i < dk; i++)
                        for (j = 0; j < dv; j++) {
                            Sh[i * dv + j] = gam * Sh[i * dv + j] + k[i] * v[j];
                            o[j] += s * q[i] * Sh[i * dv + j];
                        }
                    lattn__gate_row_d(dv, o, g, lattn__lw(m, l, LATTN__LP_GNORM), norm, swish, c->norm_eps);   /* y = gate(o, g) */
                }
                lattn__matvec_d(D, H * dv, lattn__lw(m, l, LATTN__LP_WO), yd, xd, 1);       /* x += W_o y */
                /* x += W3 (SiLU(W1 h2) ⊙ W2 h2), h2 = LayerNorm2(x) */
                lattn__layernorm_d(D, xd, lattn__lw(m, l, LATTN__LP_LN2_W), lattn__lw(m, l, LATTN__LP_LN2_B), c->norm_eps, hd);
                lattn__matvec_d(c->ffn, D, lattn__lw(m, l, LATTN__LP_W1), hd, f1, 0);
                lattn__matvec_d(c->ffn, D, lattn__lw(m, l, LATTN__LP_W2), hd, f2, 0);
                for (i = 0; i < c->ffn; i++) f1[i] = lattn__silu_d(f1[i]) * f2[i];
                lattn__matvec_d(D, c->ffn, lattn__lw(m, l, LATTN__LP_W3), f1, xd, 1);
            }
            if (c->vocab > 0) {
                lattn__layernorm_d(D, xd, lattn__lg(m, LATTN__LG_NORM_W), lattn__lg(m, LATTN__LG_NORM_B), c->norm_eps, hd);
                lattn__matvec_d(c->vocab, D, lattn__lg(m, LATTN__LG_EMBED), hd, lg, 0);
                for (i = 0; i < nout; i++) out[tok * nout + i] = (float)lg[i];
                for (i = 0; out64 && i < nout; i++) out64[tok * nout + i] = lg[i];
            } else {
                for (i = 0; i < D; i++) out[tok * D + i] = (float)xd[i];
                for (i = 0; out64 && i < D; i++) out64[tok * D + i] = xd[i];
            }
        }
        if (state) for (i = 0; i < SF; i++) state[b * SF + i] = (float)st[i];
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* Y[M][N] (+)= X[M][K]·W[N][K]ᵀ, W stored as a torch Linear stores its weight. Decoding (M <= 4)
   reads each weight row once for all M inputs (a GEMV: the step is bound by weight traffic);
   otherwise the SGEMM kernel runs on column blocks of LATTN__LIN_NB spread over the threads. Each
   output is computed by one thread in an order fixed by the shape: bit-identical for any thread
   count. ws: LATTN__LIN_WS(K) floats per thread. */
#define LATTN__LIN_NB 256
#define LATTN__LIN_WS(K) lattn__gemm_ws(LATTN__LIN_NB, K)
static void lattn__linear(int nthr, int64_t M, int64_t N, int64_t K, const float *X, const float *W, float *Y,
                          int acc, float *ws) {
    int64_t blk, nb = (N + LATTN__LIN_NB - 1) / LATTN__LIN_NB;
    (void)nthr;                                   /* unused without OpenMP */
    if (M <= 0 || N <= 0) return;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (blk = 0; blk < nb; blk++) {
        int64_t j0 = blk * LATTN__LIN_NB, nc = LATTN__MIN(LATTN__LIN_NB, N - j0), i, j;
        if (M <= 4)
            for (j = j0; j < j0 + nc; j++)
                for (i = 0; i < M; i++) {
                    float s = lattn_vec_dot((size_t)K, X + i * K, W + j * K);
                    Y[i * N + j] = acc ? Y[i * N + j] + s : s;
                }
        else
            lattn__sgemm(LATTN_GEMM_TRANS_B | (acc ? LATTN_GEMM_ACCUMULATE : 0), M, nc, K, X, K, W + j0 * K, K,
                         Y + j0, N, ws + (size_t)lattn__thread_id() * LATTN__LIN_WS(K));
    }
}
/* Row-wise LayerNorm of X [M][n] into Y. */
static void lattn__layernorm_rows(int nthr, int64_t M, int64_t n, const float *X, const float *w, const float *b,
                                  float eps, float *Y) {
    int64_t r;
    (void)nthr;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (r = 0; r < M; r++) {
        const float *x = X + r * n;
        float *y = Y + r * n, mean = lattn_vec_sum((size_t)n, x) / (float)n, var = 0, inv;
        int64_t i;
        for (i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
        inv = 1.0f / sqrtf(var / (float)n + eps);
        for (i = 0; i < n; i++) y[i] = (x[i] - mean) * inv * w[i] + b[i];
    }
}

/* The fast forward (decode = 0: lattn_shortconv_chunk + lattn_la_chunk over T tokens) and the step
   (decode = 1, T = 1: lattn_shortconv_step + lattn_la_step), layer by layer over all B·T tokens.
   The state is advanced in a copy and committed at the end, so a failure leaves it untouched. */
static lattn_status lattn__laplace_run(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B, int64_t T,
                                       const int32_t *tokens, const float *x, float *out, float *state,
                                       lattn_form form, const char *who) {
    const lattn_laplace_config *c;
    int64_t D, H, dk, dv, W, SF, LS, M, l, b, r, nout;
    int nthr = lattn__threads(ctx), norm, swish;
    float *buf, *st_in, *st_out, *X, *Hn, *U, *Q, *Kb, *Vb, *G, *O, *F1, *F2, *ws;
    size_t n, attn, ffn, tmp;
    lattn_status st = LATTN_OK;
    LATTN__TRY(lattn__laplace_args(ctx, who, m, B, T, tokens, x, out));
    if (form == LATTN_FORM_STEP && !state) return lattn__fail(ctx, LATTN_E_NULL, "%s: state is NULL", who);
    c = &m->cfg;
    D = c->D;
    H = c->H;
    dk = c->K;
    dv = c->V;
    W = c->conv_w;
    SF = lattn__laplace_state_floats(c);
    LS = SF / c->n_layers;
    M = B * T;
    nout = c->vocab > 0 ? c->vocab : D;
    norm = c->gate_mode == LATTN_OUT_RMSNORM_SWISH || c->gate_mode == LATTN_OUT_RMSNORM_SIGMOID;
    swish = c->gate_mode == LATTN_OUT_RMSNORM_SWISH || c->gate_mode == LATTN_OUT_SWISH;
    if (T == 0) return lattn__ok(ctx);
    /* two state copies, X and Hn, then either the attention buffers U Q K V G O or F1 F2, then
       the GEMM workspaces (all products bounded by lattn__laplace_args / the configuration check) */
    attn = (size_t)(D + 2 * H * dk + 3 * H * dv);
    ffn = 2 * (size_t)c->ffn;
    if (lattn_size_mul(&n, (size_t)B, 2 * (size_t)SF) || lattn_size_mul(&tmp, (size_t)M, 2 * (size_t)D + LATTN__MAX(attn, ffn)) ||
        lattn_size_add(&n, n, tmp) || lattn_size_mul(&tmp, (size_t)nthr, LATTN__LIN_WS(LATTN__MAX(D, LATTN__MAX(c->ffn, H * dv)))) ||
        lattn_size_add(&n, n, tmp))
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, n, who));
    st_in = buf;
    st_out = st_in + B * SF;
    X = st_out + B * SF;
    Hn = X + M * D;
    U = Hn + M * D;
    Q = U + M * D;
    Kb = Q + M * H * dk;
    Vb = Kb + M * H * dk;
    G = Vb + M * H * dv;
    O = G + M * H * dv;
    F1 = U;
    F2 = F1 + M * c->ffn;
    ws = U + M * (int64_t)LATTN__MAX(attn, ffn);
    if (state) memcpy(st_in, state, (size_t)(B * SF) * sizeof(float));
    else memset(st_in, 0, (size_t)(B * SF) * sizeof(float));
    if (c->vocab > 0)
        for (r = 0; r < M; r++) memcpy(X + r * D, lattn__lg(m, LATTN__LG_EMBED) + (int64_t)tokens[r] * D, (size_t)D * sizeof(float));
    else memcpy(X, x, (size_t)(M * D) * sizeof(float));

    for (l = 0; l < c->n_layers && st == LATTN_OK; l++) {
        const float *Wq = lattn__lw(m, l, LATTN__LP_QKVG);
        /* h = LayerNorm1(x); u = SiLU(ShortConv(h)) per sequence, on its own conv cache */
        lattn__layernorm_rows(nthr, M, D, X, lattn__lw(m, l, LATTN__LP_LN1_W), lattn__lw(m, l, LATTN__LP_LN1_B), c->norm_eps, Hn);
        for (b = 0; b < B && st == LATTN_OK; b++) {
            lattn_shortconv_args ca;
            memset(&ca, 0, sizeof ca);
            ca.B = 1;
            ca.T = T;
            ca.D = D;
            ca.W = W;
            ca.x = Hn + b * T * D;
            ca.w = lattn__lw(m, l, LATTN__LP_CONV);
            ca.silu = 1;
            ca.h0 = st_in + b * SF + l * LS;
            ca.y = U + b * T * D;
            ca.ht = st_out + b * SF + l * LS;
            st = form == LATTN_FORM_STEP ? lattn_shortconv_step(ctx, &ca) : lattn_shortconv_chunk(ctx, &ca);
        }
        /* q | k | v | g = u W_qkvgᵀ, each into its own [B][T][H][d] buffer */
        lattn__linear(nthr, M, H * dk, D, U, Wq, Q, 0, ws);
        lattn__linear(nthr, M, H * dk, D, U, Wq + H * dk * D, Kb, 0, ws);
        lattn__linear(nthr, M, H * dv, D, U, Wq + 2 * H * dk * D, Vb, 0, ws);
        lattn__linear(nthr, M, H * dv, D, U, Wq + (2 * H * dk + H * dv) * D, G, 0, ws);
        /* o = Simple GLA with the fixed decays, per sequence on its own GLA states */
        for (b = 0; b < B && st == LATTN_OK; b++) {
            lattn_la_args a = LATTN__ZERO;
            a.B = 1;
            a.T = T;
            a.H = H;
            a.K = dk;
            a.V = dv;
            a.q = Q + b * T * H * dk;
            a.k = Kb + b * T * H * dk;
            a.v = Vb + b * T * H * dv;
            a.g_gamma = m->g_gamma;
            a.h0 = st_in + b * SF + l * LS + D * W;
            a.ht = st_out + b * SF + l * LS + D * W;
            a.o = O + b * T * H * dv;
            st = form == LATTN_FORM_STEP ? lattn_la_step(ctx, &a) : lattn_la_chunk(ctx, &a);
        }
        if (st != LATTN_OK) break;
        lattn__gate_rows(nthr, M * H, dv, O, G, lattn__lw(m, l, LATTN__LP_GNORM), norm, swish, c->norm_eps);   /* y = gate(o, g) */
        lattn__linear(nthr, M, D, H * dv, O, lattn__lw(m, l, LATTN__LP_WO), X, 1, ws);          /* x += y W_oᵀ */
        /* x += (SiLU(h2 W1ᵀ) ⊙ h2 W2ᵀ) W3ᵀ,  h2 = LayerNorm2(x) */
        lattn__layernorm_rows(nthr, M, D, X, lattn__lw(m, l, LATTN__LP_LN2_W), lattn__lw(m, l, LATTN__LP_LN2_B), c->norm_eps, Hn);
        lattn__linear(nthr, M, c->ffn, D, Hn, lattn__lw(m, l, LATTN__LP_W1), F1, 0, ws);
        lattn__linear(nthr, M, c->ffn, D, Hn, lattn__lw(m, l, LATTN__LP_W2), F2, 0, ws);
        LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
        for (r = 0; r < M; r++) {
            float *f1 = F1 + r * c->ffn, *f2 = F2 + r * c->ffn;
            int64_t j;
            lattn_vec_silu((size_t)c->ffn, f1, f1);
            for (j = 0; j < c->ffn; j++) f1[j] *= f2[j];
        }
        lattn__linear(nthr, M, D, c->ffn, F1, lattn__lw(m, l, LATTN__LP_W3), X, 1, ws);
    }
    if (st == LATTN_OK) {
        if (c->vocab > 0) {
            lattn__layernorm_rows(nthr, M, D, X, lattn__lg(m, LATTN__LG_NORM_W), lattn__lg(m, LATTN__LG_NORM_B), c->norm_eps, Hn);
            lattn__linear(nthr, M, nout, D, Hn, lattn__lg(m, LATTN__LG_EMBED), out, 0, ws);
        } else memcpy(out, X, (size_t)(M * D) * sizeof(float));
        if (state) memcpy(state, st_out, (size_t)(B * SF) * sizeof(float));
    }
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_laplace_forward(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B, int64_t T,
                                              const int32_t *tokens, const float *x, float *out, float *state) {
    return lattn__laplace_run(ctx, m, B, T, tokens, x, out, state, LATTN_FORM_CHUNK, "lattn_laplace_forward");
}
LATTN__DEF lattn_status lattn_laplace_step(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B,
                                           const int32_t *tokens, const float *x, float *out, float *state) {
    return lattn__laplace_run(ctx, m, B, 1, tokens, x, out, state, LATTN_FORM_STEP, "lattn_laplace_step");
}

/* ================================================================================================ */
/* >>gdnlayer implementation                                                                        */
/* ================================================================================================ */
LATTN__DEF lattn_gdn_config lattn_gdn_config_default(void) {
    lattn_gdn_config c;
    c.D = 2048;
    c.H = 6;
    c.K = 256;
    c.V = 512;
    c.conv_w = 4;
    c.allow_neg_eigval = 0;
    c.norm_eps = 1e-5f;
    return c;
}
enum { LATTN__GD_Q, LATTN__GD_K, LATTN__GD_V, LATTN__GD_A, LATTN__GD_B, LATTN__GD_G, LATTN__GD_O,
       LATTN__GD_QC, LATTN__GD_KC, LATTN__GD_VC, LATTN__GD_ALOG, LATTN__GD_DT, LATTN__GD_ON, LATTN__GD_N };
static const char *const lattn__gd_names[LATTN__GD_N] = {
    "q_proj.weight", "k_proj.weight", "v_proj.weight", "a_proj.weight", "b_proj.weight", "g_proj.weight",
    "o_proj.weight", "q_conv1d.weight", "k_conv1d.weight", "v_conv1d.weight", "A_log", "dt_bias", "o_norm.weight"
};
static int64_t lattn__gdn_state_floats(const lattn_gdn_config *c) {
    int64_t t[3][4];
    if (!c) return -1;
    t[0][0] = 2 * LATTN__MIN(c->H, INT64_MAX / 4);
    t[0][1] = c->K;
    t[0][2] = c->conv_w;
    t[0][3] = 1; /* q, k caches */
    t[1][0] = c->H;
    t[1][1] = c->V;
    t[1][2] = c->conv_w;
    t[1][3] = 1; /* v cache */
    t[2][0] = c->H;
    t[2][1] = c->K;
    t[2][2] = c->V;
    t[2][3] = 1; /* S */
    return lattn__laplace_sum(3, t);
}
LATTN__DEF lattn_status lattn_gdn_state_floats(const lattn_gdn_config *c, size_t *out) {
    return lattn__size_out(lattn__gdn_state_floats(c), out);
}
static lattn_status lattn__gdn_check_cfg(lattn_ctx *ctx, const char *who, const lattn_gdn_config *c) {
    int64_t t[1][4];
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: configuration is NULL", who);
    if (c->D < 1 || c->H < 1 || c->K < 1 || c->V < 1 || c->conv_w < 1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: every size must be >= 1", who);
    if (!(c->norm_eps > 0.0f) || !isfinite(c->norm_eps))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: norm_eps must be positive and finite", who);
    t[0][0] = 4;
    t[0][1] = c->H;
    t[0][2] = LATTN__MAX(c->K, c->V);
    t[0][3] = LATTN__MAX(c->D, c->conv_w);
    if (lattn__gdn_state_floats(c) < 0 || lattn__laplace_sum(1, t) < 0)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the layer's sizes overflow", who);
    return LATTN_OK;
}
static lattn_status lattn__gdn_alloc(lattn_ctx *ctx, lattn_gdn_layer *m, const lattn_gdn_config *c, const char *who) {
    int64_t i, HK, HV;
    memset(m, 0, sizeof *m);
    LATTN__TRY(lattn__gdn_check_cfg(ctx, who, c));
    HK = c->H * c->K;
    HV = c->H * c->V;
    LATTN__TRY(lattn__table_new(ctx, who, LATTN__GD_N, 0, &m->tensors));
    for (i = 0; i < LATTN__GD_N; i++) {
        lattn_tensor *t = &m->tensors[i];
        static const int rows[LATTN__GD_N] = { 0, 0, 1, 2, 2, 1, 3, 0, 0, 1, 2, 2, 4 };   /* HK, HV, H, D, V */
        int64_t n0 = rows[i] == 0 ? HK : rows[i] == 1 ? HV : rows[i] == 2 ? c->H : rows[i] == 3 ? c->D : c->V;
        snprintf(t->name, sizeof t->name, "%s", lattn__gd_names[i]);
        t->shape[0] = n0;
        t->ndim = i >= LATTN__GD_ALOG ? 1 : 2;
        t->shape[1] = i == LATTN__GD_O ? HV : i >= LATTN__GD_QC ? c->conv_w : c->D;
    }
    if (lattn__arena_bind(ctx, who, m->tensors, LATTN__GD_N, &m->arena, &m->n_params) != LATTN_OK) { memset(m, 0, sizeof *m); return LATTN_E_NOMEM; }
    m->cfg = *c;
    m->n_tensors = LATTN__GD_N;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_gdn_init(lattn_ctx *ctx, lattn_gdn_layer *m, const lattn_gdn_config *c, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    int64_t i;
    if (!m) return lattn__fail(ctx, LATTN_E_NULL, "lattn_gdn_init: layer is NULL");
    LATTN__TRY(lattn__gdn_alloc(ctx, m, c, "lattn_gdn_init"));
    lattn__arena_init(m->tensors, m->n_tensors, &r);
    for (i = 0; i < c->H; i++) {         /* fla: A ~ U(0, 16); dt log-uniform in [1e-3, 1e-1], >= 1e-4 */
        double A = 16.0 * LATTN__MAX((double)lattn_rng_uniform(&r), 1e-6);
        double dt = exp(log(1e-3) + (double)lattn_rng_uniform(&r) * (log(1e-1) - log(1e-3)));
        dt = LATTN__MAX(dt, 1e-4);
        m->tensors[LATTN__GD_ALOG].data[i] = (float)log(A);
        m->tensors[LATTN__GD_DT].data[i] = (float)(dt + log(-expm1(-dt)));             /* softplus⁻¹(dt) */
    }
    return lattn__ok(ctx);
}
LATTN__DEF void lattn_gdn_free(lattn_ctx *ctx, lattn_gdn_layer *m) {
    if (!m) return;
    lattn__free(ctx, m->arena);
    lattn__free(ctx, m->tensors);
    memset(m, 0, sizeof *m);
}
LATTN__DEF lattn_tensor *lattn_gdn_tensor(const lattn_gdn_layer *m, const char *name) {
    return m ? lattn__arena_find(m->tensors, m->n_tensors, name) : NULL;
}
/* The GDN configuration's fields in safetensors metadata ("gdn.<field>"). */
static int lattn__gdn_fields(lattn_gdn_config *c, int64_t *neg, lattn__cfield *fl) {
    static const char *const keys[6] = { "gdn.D", "gdn.H", "gdn.K", "gdn.V", "gdn.conv_w", "gdn.allow_neg_eigval" };
    int64_t *p[6];
    int i;
    p[0] = &c->D;
    p[1] = &c->H;
    p[2] = &c->K;
    p[3] = &c->V;
    p[4] = &c->conv_w;
    p[5] = neg;
    memset(fl, 0, 7 * sizeof *fl);
    for (i = 0; i < 6; i++) { fl[i].key = keys[i]; fl[i].i = p[i]; }
    fl[6].key = "gdn.norm_eps";
    fl[6].f = &c->norm_eps;
    return 7;
}
LATTN__DEF lattn_status lattn_gdn_serialize(lattn_ctx *ctx, const lattn_gdn_layer *m, unsigned char **out, size_t *size) {
    lattn__cfield fl[LATTN__CFG_MAX];
    lattn_gdn_config c;
    int64_t neg;
    int n;
    if (!m || !m->arena || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "lattn_gdn_serialize: NULL argument");
    c = m->cfg;
    neg = c.allow_neg_eigval;
    n = lattn__gdn_fields(&c, &neg, fl);
    return lattn__arena_serialize(ctx, "lattn_gdn_serialize", m->tensors, m->n_tensors, fl, n, out, size);
}
LATTN__DEF lattn_status lattn_gdn_init_st(lattn_ctx *ctx, lattn_gdn_layer *m, const lattn_st_file *f, const char *prefix) {
    const char *who = "lattn_gdn_init_st";
    lattn_gdn_config c = lattn_gdn_config_default();
    lattn__cfield fl[LATTN__CFG_MAX];
    int64_t neg = 0;
    int n;
    lattn_status st;
    if (!m || !f) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    memset(m, 0, sizeof *m);
    if (!prefix) prefix = "";
    if (strlen(prefix) >= LATTN_NAME_MAX) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: prefix too long", who);
    n = lattn__gdn_fields(&c, &neg, fl);
    LATTN__TRY(lattn__cfg_read(ctx, who, f, fl, n));
    if (neg != 0 && neg != 1) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: gdn.allow_neg_eigval must be 0 or 1", who);
    c.allow_neg_eigval = (int)neg;
    if ((st = lattn__gdn_alloc(ctx, m, &c, who)) != LATTN_OK) return lattn__as_format(ctx, st);
    if ((st = lattn__arena_load(ctx, who, m->tensors, m->n_tensors, f, prefix)) != LATTN_OK) { lattn_gdn_free(ctx, m); return st; }
    return lattn__ok(ctx);
}
#ifndef LATTN_NO_STDIO
LATTN__MODEL_FILES(gdn, lattn_gdn_layer)
#endif
static const float *lattn__gdw(const lattn_gdn_layer *m, int i) { return m->tensors[i].data; }
static lattn_status lattn__gdn_args(lattn_ctx *ctx, const char *who, const lattn_gdn_layer *m, int64_t B, int64_t T,
                                    const float *x, const float *y) {
    int64_t d[3];
    if (!m || !m->arena || !x || !y) return lattn__fail(ctx, LATTN_E_NULL, "%s: layer, x or y is NULL", who);
    if (B < 1 || T < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld", who, (long long)B, (long long)T);
    d[0] = B;
    d[1] = T;
    d[2] = 4 * m->cfg.H * LATTN__MAX(m->cfg.D, LATTN__MAX(m->cfg.K, m->cfg.V));
    return lattn__check_count(ctx, who, "the activations", 3, d);
}

/* The reference: token by token in double, the state kept in double while a sequence runs. */
LATTN__DEF lattn_status lattn_gdn_forward_ref(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, int64_t T,
                                              const float *x, float *y, float *state, double *y64) {
    const char *who = "lattn_gdn_forward_ref";
    const lattn_gdn_config *c;
    int64_t D, H, K, V, W, HK, HV, SF, b, t, i, j, h, ch;
    double *buf, *st, *xd, *z, *a, *bb, *gg, *o, *out, sc;
    size_t n;
    LATTN__TRY(lattn__gdn_args(ctx, who, m, B, T, x, y));
    c = &m->cfg;
    D = c->D;
    H = c->H;
    K = c->K;
    V = c->V;
    W = c->conv_w;
    HK = H * K;
    HV = H * V;
    SF = lattn__gdn_state_floats(c);
    sc = 1.0 / sqrt((double)K);
    n = (size_t)SF + (size_t)D + (size_t)(2 * HK + HV) + 2 * (size_t)H + 2 * (size_t)HV + (size_t)D;
    if (lattn_size_mul(&n, n, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, n)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    st = buf;
    xd = st + SF;
    z = xd + D;
    a = z + 2 * HK + HV;
    bb = a + H;
    gg = bb + H;
    o = gg + HV;
    out = o + HV;
    for (b = 0; b < B; b++) {
        for (i = 0; i < SF; i++) st[i] = state ? (double)state[b * SF + i] : 0.0;
        for (t = 0; t < T; t++) {
            const float *xt = x + (b * T + t) * D;
            double *S = st + (2 * HK + HV) * W;
            for (i = 0; i < D; i++) xd[i] = xt[i];
            /* q | k | v projections, then the causal conv (cache shifted, newest last) and SiLU */
            lattn__matvec_d(HK, D, lattn__gdw(m, LATTN__GD_Q), xd, z, 0);
            lattn__matvec_d(HK, D, lattn__gdw(m, LATTN__GD_K), xd, z + HK, 0);
            lattn__matvec_d(HV, D, lattn__gdw(m, LATTN__GD_V), xd, z + 2 * HK, 0);
            for (ch = 0; ch < 2 * HK + HV; ch++) {
                const float *w = ch < HK ? lattn__gdw(m, LATTN__GD_QC) + ch * W : ch < 2 * HK ? lattn__gdw(m, LATTN__GD_KC) + (ch - HK) * W
                                                                                 : lattn__gdw(m, LATTN__GD_VC) + (ch - 2 * HK) * W;
                double *cache = st + ch * W, acc = 0;
                for (j = 0; j + 1 < W; j++) cache[j] = cache[j + 1];
                cache[W - 1] = z[ch];
                for (j = 0; j < W; j++) acc += (double)w[j] * cache[j];
                z[ch] = lattn__silu_d(acc);
            }
            lattn__matvec_d(H, D, lattn__gdw(m, LATTN__GD_A), xd, a, 0);
            lattn__matvec_d(H, D, lattn__gdw(m, LATTN__GD_B), xd, bb, 0);
            lattn__matvec_d(HV, D, lattn__gdw(m, LATTN__GD_G), xd, gg, 0);
            for (h = 0; h < H; h++) {
                double *q = z + h * K, *k = z + HK + h * K, *v = z + 2 * HK + h * V, *Sh = S + h * K * V, *oh = o + h * V;
                double g = -exp((double)lattn__gdw(m, LATTN__GD_ALOG)[h]) * lattn__softplus_d(a[h] + lattn__gdw(m, LATTN__GD_DT)[h]);
                double beta = (c->allow_neg_eigval ? 2.0 : 1.0) * lattn__sigmoid_d(bb[h]), nq = 0, nk = 0, al = exp(g);
                for (i = 0; i < K; i++) { nq += q[i] * q[i]; nk += k[i] * k[i]; }
                nq = 1.0 / sqrt(nq + LATTN__L2_EPS);
                nk = 1.0 / sqrt(nk + LATTN__L2_EPS);
                /* S = α S;  u = β (v - Sᵀ k̂);  S += k̂ uᵀ;  o = s Sᵀ q̂ */
                for (j = 0; j < V; j++) {
                    double u = 0;
                    for (i = 0; i < K; i++) { Sh[i * V + j] *= al; u += Sh[i * V + j] * k[i] * nk; }
                    u = beta * (v[j] - u);
                    oh[j] = 0;
                    for (i = 0; i < K; i++) { Sh[i * V + j] += k[i] * nk * u; oh[j] += sc * q[i] * nq * Sh[i * V + j]; }
                }
                lattn__gate_row_d(V, oh, gg + h * V, lattn__gdw(m, LATTN__GD_ON), 1, 1, c->norm_eps);
            }
            lattn__matvec_d(D, HV, lattn__gdw(m, LATTN__GD_O), o, out, 0);
            for (i = 0; i < D; i++) y[(b * T + t) * D + i] = (float)out[i];
            for (i = 0; y64 && i < D; i++) y64[(b * T + t) * D + i] = out[i];
        }
        if (state) for (i = 0; i < SF; i++) state[b * SF + i] = (float)st[i];
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* forward (decode = 0) and step (decode = 1, T = 1): layer-wide GEMMs, then per sequence the
   ShortConvs and the delta-rule core on that sequence's state, advanced in a copy and committed. */
static lattn_status lattn__gdn_run(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, int64_t T, const float *x,
                                   float *y, float *state, lattn_form form, const char *who) {
    const lattn_gdn_config *c;
    int64_t D, H, K, V, W, HK, HV, SF, M, b, i, ch;
    int nthr = lattn__threads(ctx);
    float *buf, *st_in, *st_out, *P, *Cv, *A, *Bt, *G, *O, *ws;
    size_t n, tmp;
    lattn_status st = LATTN_OK;
    LATTN__TRY(lattn__gdn_args(ctx, who, m, B, T, x, y));
    if (form == LATTN_FORM_STEP && !state) return lattn__fail(ctx, LATTN_E_NULL, "%s: state is NULL", who);
    c = &m->cfg;
    D = c->D;
    H = c->H;
    K = c->K;
    V = c->V;
    W = c->conv_w;
    HK = H * K;
    HV = H * V;
    SF = lattn__gdn_state_floats(c);
    M = B * T;
    if (T == 0) return lattn__ok(ctx);
    /* two state copies; projections P (q | k | v), their conv outputs Cv, a, b, the gate input G,
       the mixer output O; GEMM workspaces */
    if (lattn_size_mul(&n, (size_t)B, 2 * (size_t)SF) ||
        lattn_size_mul(&tmp, (size_t)M, 2 * (size_t)(2 * HK + HV) + 2 * (size_t)H + 2 * (size_t)HV) || lattn_size_add(&n, n, tmp) ||
        lattn_size_mul(&tmp, (size_t)nthr, LATTN__LIN_WS(LATTN__MAX(D, HV))) || lattn_size_add(&n, n, tmp))
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, n, who));
    st_in = buf;
    st_out = st_in + B * SF;
    P = st_out + B * SF;
    Cv = P + M * (2 * HK + HV);
    A = Cv + M * (2 * HK + HV);
    Bt = A + M * H;
    G = Bt + M * H;
    O = G + M * HV;
    ws = O + M * HV;
    if (state) memcpy(st_in, state, (size_t)(B * SF) * sizeof(float));
    else memset(st_in, 0, (size_t)(B * SF) * sizeof(float));
    /* projections: q, k, v into P as three [M][·] blocks; a, b, g */
    lattn__linear(nthr, M, HK, D, x, lattn__gdw(m, LATTN__GD_Q), P, 0, ws);
    lattn__linear(nthr, M, HK, D, x, lattn__gdw(m, LATTN__GD_K), P + M * HK, 0, ws);
    lattn__linear(nthr, M, HV, D, x, lattn__gdw(m, LATTN__GD_V), P + 2 * M * HK, 0, ws);
    lattn__linear(nthr, M, H, D, x, lattn__gdw(m, LATTN__GD_A), A, 0, ws);
    lattn__linear(nthr, M, H, D, x, lattn__gdw(m, LATTN__GD_B), Bt, 0, ws);
    lattn__linear(nthr, M, HV, D, x, lattn__gdw(m, LATTN__GD_G), G, 0, ws);
    for (i = 0; i < M * H; i++) {        /* g = -exp(A_log)·softplus(a + dt_bias);  β = (2·)sigmoid(b) */
        int64_t h = i % H;
        float u = A[i] + lattn__gdw(m, LATTN__GD_DT)[h];
        A[i] = -expf(lattn__gdw(m, LATTN__GD_ALOG)[h]) * (u > 20.0f ? u : log1pf(expf(u)));
        Bt[i] = (c->allow_neg_eigval ? 2.0f : 1.0f) / (1.0f + expf(-Bt[i]));
    }
    for (b = 0; b < B && st == LATTN_OK; b++) {
        int64_t off = 0;
        lattn_gdr_args a = LATTN__ZERO;
        for (ch = 0; ch < 3 && st == LATTN_OK; ch++) {       /* the three ShortConvs + SiLU */
            int64_t Dc = ch < 2 ? HK : HV, base = ch == 0 ? 0 : ch == 1 ? M * HK : 2 * M * HK;
            lattn_shortconv_args ca;
            memset(&ca, 0, sizeof ca);
            ca.B = 1;
            ca.T = T;
            ca.D = Dc;
            ca.W = W;
            ca.x = P + base + b * T * Dc;
            ca.y = Cv + base + b * T * Dc;
            ca.w = lattn__gdw(m, ch == 0 ? LATTN__GD_QC : ch == 1 ? LATTN__GD_KC : LATTN__GD_VC);
            ca.silu = 1;
            ca.h0 = st_in + b * SF + off;
            ca.ht = st_out + b * SF + off;
            st = form == LATTN_FORM_STEP ? lattn_shortconv_step(ctx, &ca) : lattn_shortconv_chunk(ctx, &ca);
            off += Dc * W;
        }
        if (st != LATTN_OK) break;
        a.B = 1;
        a.T = T;
        a.H = H;
        a.K = K;
        a.V = V;
        a.l2norm = 1;
        a.allow_neg_eigval = c->allow_neg_eigval;
        a.q = Cv + b * T * HK;
        a.k = Cv + M * HK + b * T * HK;
        a.v = Cv + 2 * M * HK + b * T * HV;
        a.g = A + b * T * H;
        a.beta = Bt + b * T * H;
        a.h0 = st_in + b * SF + off;
        a.ht = st_out + b * SF + off;
        a.o = O + b * T * HV;
        st = form == LATTN_FORM_STEP ? lattn_gdr_step(ctx, &a) : lattn_gdr_chunk(ctx, &a);
    }
    if (st == LATTN_OK) {
        lattn__gate_rows(nthr, M * H, V, O, G, lattn__gdw(m, LATTN__GD_ON), 1, 1, c->norm_eps);
        lattn__linear(nthr, M, D, HV, O, lattn__gdw(m, LATTN__GD_O), y, 0, ws);
        if (state) memcpy(state, st_out, (size_t)(B * SF) * sizeof(float));
    }
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_gdn_forward(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, int64_t T,
                                          const float *x, float *y, float *state) {
    return lattn__gdn_run(ctx, m, B, T, x, y, state, LATTN_FORM_CHUNK, "lattn_gdn_forward");
}
LATTN__DEF lattn_status lattn_gdn_step(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, const float *x,
                                       float *y, float *state) {
    return lattn__gdn_run(ctx, m, B, 1, x, y, state, LATTN_FORM_STEP, "lattn_gdn_step");
}

/* ================================================================================================ */
/* >>prism implementation                                                                           */
/* ================================================================================================ */
static int64_t lattn__prism_params(const lattn_prism_config *c, int64_t *per_block);
/* The tensors of P1 in arena order: official name, rank, and which sizes make each dimension. */
enum { LATTN__P1_FW, LATTN__P1_FB, LATTN__P1_CW, LATTN__P1_CB, LATTN__P1_AW, LATTN__P1_AB, LATTN__P1_IW, LATTN__P1_IB,
       LATTN__P1_OW, LATTN__P1_OB, LATTN__P1_G0W, LATTN__P1_G0B, LATTN__P1_G1W, LATTN__P1_G1B, LATTN__P1_GW,
       LATTN__P1_GB, LATTN__P1_BW, LATTN__P1_O0W, LATTN__P1_O0B, LATTN__P1_O2W, LATTN__P1_O2B, LATTN__P1_UG,
       LATTN__P1_UK, LATTN__P1_N };
static const char *const lattn__p1_names[LATTN__P1_N] = {
    "_fused_proj.weight", "_fused_proj.bias", "short_conv.weight", "short_conv.bias", "anchor_norm.weight",
    "anchor_norm.bias", "layer_norm_input.weight", "layer_norm_input.bias", "layer_norm_output.weight",
    "layer_norm_output.bias", "_gate.0.weight", "_gate.0.bias", "_gate.1.weight", "_gate.1.bias", "_g.weight",
    "_g.bias", "b_proj.weight", "_o.0.weight", "_o.0.bias", "_o.2.weight", "_o.2.bias", "solver_up_gain_weight",
    "solver_up_k_weight"
};
LATTN__DEF void lattn_prism_p1_free(lattn_ctx *ctx, lattn_prism_p1 *p) {
    if (!p) return;
    lattn__free(ctx, p->arena);
    lattn__free(ctx, p->tensors);
    memset(p, 0, sizeof *p);
}
LATTN__DEF lattn_tensor *lattn_prism_p1_tensor(const lattn_prism_p1 *p, const char *name) {
    return p ? lattn__arena_find(p->tensors, p->n_tensors, name) : NULL;
}
/* Rank and dimensions of each tensor in arena order, from the block's sizes. */
static void lattn__p1_shapes(int64_t D, int64_t H, int64_t S, int64_t R, int64_t Kc, int64_t rg, int64_t (*w)[4]) {
    const int64_t F = 4 * D + 2 * R * S + H * S;
    int64_t v[LATTN__P1_N][4] = {
        { 2, F, D, 0 }, { 1, F, 0, 0 }, { 3, D, 1, Kc }, { 1, D, 0, 0 }, { 1, D, 0, 0 }, { 1, D, 0, 0 }, { 1, D, 0, 0 },
        { 1, D, 0, 0 }, { 1, D, 0, 0 }, { 1, D, 0, 0 }, { 2, rg, D, 0 }, { 1, rg, 0, 0 }, { 2, D, rg, 0 }, { 1, D, 0, 0 },
        { 2, D, D, 0 }, { 1, D, 0, 0 }, { 2, H, D, 0 }, { 2, 4 * D, D, 0 }, { 1, 4 * D, 0, 0 }, { 2, D, 4 * D, 0 },
        { 1, D, 0, 0 }, { 3, S, R, D }, { 3, S, R, D } };
    memcpy(w, v, sizeof v);
}
/* The block's tensor table and arena (weights uninitialised) from its sizes, and the named views
   (p->fused_w, ...) into it, in arena order. */
static lattn_status lattn__p1_alloc(lattn_ctx *ctx, const char *who, lattn_prism_p1 *p, int64_t D, int64_t H, int64_t S,
                                    int64_t R, int64_t Kc, int64_t rg) {
    const float **view[LATTN__P1_N];
    int64_t w[LATTN__P1_N][4];
    int i, d;
    view[LATTN__P1_FW] = &p->fused_w;
    view[LATTN__P1_FB] = &p->fused_b;
    view[LATTN__P1_CW] = &p->conv_w;
    view[LATTN__P1_CB] = &p->conv_b;
    view[LATTN__P1_AW] = &p->anchor_w;
    view[LATTN__P1_AB] = &p->anchor_b;
    view[LATTN__P1_IW] = &p->ln_in_w;
    view[LATTN__P1_IB] = &p->ln_in_b;
    view[LATTN__P1_OW] = &p->ln_out_w;
    view[LATTN__P1_OB] = &p->ln_out_b;
    view[LATTN__P1_G0W] = &p->gate0_w;
    view[LATTN__P1_G0B] = &p->gate0_b;
    view[LATTN__P1_G1W] = &p->gate1_w;
    view[LATTN__P1_G1B] = &p->gate1_b;
    view[LATTN__P1_GW] = &p->g_w;
    view[LATTN__P1_GB] = &p->g_b;
    view[LATTN__P1_BW] = &p->b_w;
    view[LATTN__P1_O0W] = &p->o0_w;
    view[LATTN__P1_O0B] = &p->o0_b;
    view[LATTN__P1_O2W] = &p->o2_w;
    view[LATTN__P1_O2B] = &p->o2_b;
    view[LATTN__P1_UG] = &p->up_gain;
    view[LATTN__P1_UK] = &p->up_k;
    lattn__p1_shapes(D, H, S, R, Kc, rg, w);
    LATTN__TRY(lattn__table_new(ctx, who, LATTN__P1_N, 0, &p->tensors));
    for (i = 0; i < LATTN__P1_N; i++) {
        lattn_tensor *t = &p->tensors[i];
        snprintf(t->name, sizeof t->name, "%s", lattn__p1_names[i]);
        t->ndim = (int)w[i][0];
        for (d = 0; d < t->ndim; d++) t->shape[d] = w[i][d + 1];
    }
    if (lattn__arena_bind(ctx, who, p->tensors, LATTN__P1_N, &p->arena, &p->n_params) != LATTN_OK) {
        p->tensors = NULL;                /* released by the bind */
        return LATTN_E_NOMEM;
    }
    p->n_tensors = LATTN__P1_N;
    for (i = 0; i < LATTN__P1_N; i++) *view[i] = p->tensors[i].data;
    p->D = D;
    p->H = H;
    p->S = S;
    p->R = R;
    p->Kc = Kc;
    p->rg = rg;
    p->C = 128;
    p->tau = 16.0;
    p->gate_min = 1e-4;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_prism_p1_init_st(lattn_ctx *ctx, lattn_prism_p1 *p, const lattn_st_file *f, const char *prefix) {
    const char *who = "lattn_prism_p1_init_st";
    static const int sizes[5] = { LATTN__P1_IW, LATTN__P1_BW, LATTN__P1_UG, LATTN__P1_CW, LATTN__P1_G0W };
    static const int ranks[5] = { 1, 2, 3, 3, 2 };
    const lattn_st_tensor *t[5];
    int64_t D, H, S, R, Kc, rg;
    lattn_status st;
    int i;
    char name[2 * LATTN_NAME_MAX];
    if (!p || !f) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    memset(p, 0, sizeof *p);
    if (!prefix) prefix = "";
    if (strlen(prefix) >= LATTN_NAME_MAX) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: prefix too long", who);
    for (i = 0; i < 5; i++) {             /* the tensors whose shapes give the sizes */
        snprintf(name, sizeof name, "%s%s", prefix, lattn__p1_names[sizes[i]]);
        if (!(t[i] = lattn_st_find(f, name))) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: missing tensor '%s'", who, name);
        if (t[i]->ndim != ranks[i]) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: '%s' has %d dimensions, not %d", who, name, t[i]->ndim, ranks[i]);
    }
    D = t[0]->shape[0];
    H = t[1]->shape[0];
    S = t[2]->shape[0];
    R = t[2]->shape[1];
    Kc = t[3]->shape[2];
    rg = t[4]->shape[0];
    if (D < 1 || H < 1 || S < 1 || R < 1 || Kc < 1 || rg < 1 || D % H != 0 || D > (1 << 20) || S > 64 || R > (1 << 16) || Kc > 64 || rg > (1 << 16))
        return lattn__fail(ctx, LATTN_E_FORMAT, "%s: sizes D %lld, H %lld, S %lld, R %lld, Kc %lld, rank %lld are not usable",
                           who, (long long)D, (long long)H, (long long)S, (long long)R, (long long)Kc, (long long)rg);
    LATTN__TRY(lattn__p1_alloc(ctx, who, p, D, H, S, R, Kc, rg));
    st = lattn__arena_load(ctx, who, p->tensors, p->n_tensors, f, prefix);
    if (st != LATTN_OK) {
        lattn_prism_p1_free(ctx, p);
        return st;
    }
    return lattn__ok(ctx);
}
/* A block from a configuration, initialised as CausalLM does (spec §4.2 step 3): every Linear N(0,
   0.02²) with bias 0, LayerNorms 1 and 0, the depthwise conv and the bare solver up-projections with
   PyTorch's default kaiming-uniform bound 1/sqrt(fan_in) (Kc, and R·D for the [S][R][D] parameters). */
LATTN__DEF lattn_status lattn_prism_p1_init(lattn_ctx *ctx, lattn_prism_p1 *p, const lattn_prism_config *c, uint64_t seed) {
    const char *who = "lattn_prism_p1_init";
    lattn_rng r = lattn_rng_seed(seed);
    int i;
    if (!p) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL block", who);
    memset(p, 0, sizeof *p);
    if (!c || lattn__prism_params(c, NULL) < 0 || c->S < 1 || c->D % c->H != 0 || c->D > (1 << 20) || c->S > 64 || c->R > (1 << 16) || c->Kc > 64)
        return lattn__fail(ctx, c ? LATTN_E_SHAPE : LATTN_E_NULL, "%s: unusable configuration (S >= 1, H divides D)", who);
    LATTN__TRY(lattn__p1_alloc(ctx, who, p, c->D, c->H, c->S, c->R, c->Kc, c->rg));
    for (i = 0; i < LATTN__P1_N; i++) {
        lattn_tensor *t = &p->tensors[i];
        size_t j;
        if (i == LATTN__P1_CW || i == LATTN__P1_CB) {
            float bound = (float)(1.0 / sqrt((double)c->Kc));
            lattn_rng_fill_uniform(&r, t->data, t->count, -bound, bound);
        } else if (i == LATTN__P1_UG || i == LATTN__P1_UK) {
            float bound = (float)(1.0 / sqrt((double)(c->R * c->D)));
            lattn_rng_fill_uniform(&r, t->data, t->count, -bound, bound);
        } else if (strstr(t->name, "norm")) for (j = 0; j < t->count; j++) t->data[j] = strstr(t->name, "weight") ? 1.0f : 0.0f;
        else if (t->ndim == 1) memset(t->data, 0, t->count * sizeof(float));
        else lattn_rng_fill_normal(&r, t->data, t->count, 0.0f, 0.02f);
    }
    return lattn__ok(ctx);
}
/* The block's tensors under their official names (float32), for lattn_prism_p1_init_st or torch. */
LATTN__DEF lattn_status lattn_prism_p1_serialize(lattn_ctx *ctx, const lattn_prism_p1 *p, unsigned char **out, size_t *size) {
    const char *who = "lattn_prism_p1_serialize";
    if (!p || !p->tensors || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    return lattn__arena_serialize(ctx, who, p->tensors, p->n_tensors, NULL, 0, out, size);
}
#ifndef LATTN_NO_STDIO
LATTN__MODEL_FILES(prism_p1, lattn_prism_p1)
#endif

static void lattn__ln_d(int64_t n, const double *x, const float *w, const float *b, double *y) {
    double m = 0, v = 0; int64_t i;
    for (i = 0; i < n; i++) m += x[i];
    m /= (double)n;
    for (i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
    v = 1.0 / sqrt(v / (double)n + 1e-5);
    for (i = 0; i < n; i++) y[i] = (x[i] - m) * v * w[i] + b[i];
}
static double lattn__clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* The per-row workspace of the PRISM block in double, carved from one buffer (lattn__prism_ws
   doubles): x̂ [T][D], the fused projection F [T][F], the decay gate gk [T][D], β [T][H], the
   solver's P, κ, δ [T][S][D] and b [T][S][H], the read-out o [T][D], the anchor conv's history
   cache [D][Kc], and scratch w1 (4D + rg) and w2 (8D). */
typedef struct lattn__prism_rows { double *xh, *F, *gk, *bt, *P, *kap, *del, *bl, *o, *cache, *w1, *w2; } lattn__prism_rows;
static size_t lattn__prism_ws(const lattn_prism_p1 *p, int64_t T) {
    const int64_t D = p->D, H = p->H, S = p->S, F = 4 * D + 2 * p->R * S + H * S;
    return (size_t)(T * (3 * D + F + H + 3 * S * D + S * H)) + (size_t)(D * p->Kc + 12 * D + p->rg);
}
/* The rows from buf; returns the first double after them. */
static double *lattn__prism_carve(const lattn_prism_p1 *p, int64_t T, double *buf, lattn__prism_rows *r) {
    const int64_t D = p->D, H = p->H, S = p->S, F = 4 * D + 2 * p->R * S + H * S;
    r->xh = buf;
    r->F = r->xh + T * D;
    r->gk = r->F + T * F;
    r->bt = r->gk + T * D;
    r->P = r->bt + T * H;
    r->kap = r->P + T * S * D;
    r->del = r->kap + T * S * D;
    r->bl = r->del + T * S * D;
    r->o = r->bl + T * S * H;
    r->cache = r->o + T * D;
    r->w1 = r->cache + D * p->Kc;
    r->w2 = r->w1 + 4 * D + p->rg;
    return r->w2 + 8 * D;
}

/* Steps 1-6 of the block for T tokens of one row, in double: x̂, the fused projection F, the decay
   gate gk, β, and the solver's P, κ, δ, b. cache: the anchor conv's history of x̂ ([D][Kc], newest
   last; read and advanced), or NULL for the official zero padding; the results in w's rows. */
static void lattn__prism_project(const lattn_prism_p1 *p, int64_t T, const float *xb, double *cache,
                                 const lattn__prism_rows *w) {
    const int64_t D = p->D, H = p->H, S = p->S, R = p->R, Kc = p->Kc, F = 4 * D + 2 * R * S + H * S;
    const double floor_ = LATTN__MAX(p->gate_min, 0.01);
    int64_t t, i, j, l, h, c;
    for (t = 0; t < T; t++) {            /* 1. x̂ = LN_in(x) */
        for (i = 0; i < D; i++) w->w1[i] = xb[t * D + i];
        lattn__ln_d(D, w->w1, p->ln_in_w, p->ln_in_b, w->xh + t * D);
    }
    for (t = 0; t < T; t++) {
        /* 2. anchor: causal depthwise conv with bias over x̂ (history from the cache or zeros), LN_anchor */
        for (c = 0; c < D; c++) {
            double acc = p->conv_b[c];
            if (cache) {
                for (j = 0; j + 1 < Kc; j++) cache[c * Kc + j] = cache[c * Kc + j + 1];
                cache[c * Kc + Kc - 1] = w->xh[t * D + c];
                for (j = 0; j < Kc; j++) acc += (double)p->conv_w[c * Kc + j] * cache[c * Kc + j];
            } else
                for (j = 0; j < Kc; j++) {
                    int64_t tt = t - Kc + 1 + j;
                    if (tt >= 0) acc += (double)p->conv_w[c * Kc + j] * w->xh[tt * D + c];
                }
            w->w1[c] = acc;
        }
        lattn__ln_d(D, w->w1, p->anchor_w, p->anchor_b, w->w2);
        /* 3. the fused projection of the anchor */
        for (i = 0; i < F; i++) {
            double acc = p->fused_b[i];
            for (c = 0; c < D; c++) acc += (double)p->fused_w[i * D + c] * w->w2[c];
            w->F[t * F + i] = acc;
        }
        /* 4. decay gate from x̂: sigmoid(W2 (W1 x̂ + b1) + b2), max 1e-6, ^(1/τ), clamp [floor, 1] */
        for (i = 0; i < p->rg; i++) {
            double acc = p->gate0_b[i];
            for (c = 0; c < D; c++) acc += (double)p->gate0_w[i * D + c] * w->xh[t * D + c];
            w->w1[i] = acc;
        }
        for (c = 0; c < D; c++) {
            double acc = p->gate1_b[c], g;
            for (i = 0; i < p->rg; i++) acc += (double)p->gate1_w[c * p->rg + i] * w->w1[i];
            g = lattn__sigmoid_d(acc);
            g = exp(log(LATTN__MAX(g, 1e-6)) / p->tau);
            w->gk[t * D + c] = lattn__clampd(g, floor_, 1.0);
        }
        /* 5. β = sigmoid(W_b x̂) per head */
        for (h = 0; h < H; h++) {
            double acc = 0;
            for (c = 0; c < D; c++) acc += (double)p->b_w[h * D + c] * w->xh[t * D + c];
            w->bt[t * H + h] = lattn__sigmoid_d(acc);
        }
        /* 6. solver: P_l, κ_l, b_l, then δ_l = P_l ∘ π_l ∘ v (lattn_prism_split) */
        for (l = 0; l < S; l++) {
            const double *gd = w->F + t * F + 4 * D + l * R, *kd = w->F + t * F + 4 * D + R * S + l * R;
            for (c = 0; c < D; c++) {
                double ag = 0, ak = 0, Pc;
                for (i = 0; i < R; i++) {
                    ag += gd[i] * (double)p->up_gain[(l * R + i) * D + c];
                    ak += kd[i] * (double)p->up_k[(l * R + i) * D + c];
                }
                if ((p->ablate & LATTN_PRISM_R5) || (l == 0 && (p->ablate & LATTN_PRISM_R4))) ak = w->F[t * F + 3 * D + c];   /* base k */
                else if (l > 0 && (p->ablate & LATTN_PRISM_R2)) ak = w->kap[(t * S) * D + c];                                 /* κ_1 */
                Pc = lattn__sigmoid_d(ag);
                w->P[(t * S + l) * D + c] = Pc;
                w->kap[(t * S + l) * D + c] = ak;
            }
            for (h = 0; h < H; h++) w->bl[(t * S + l) * H + h] = lattn__sigmoid_d(w->F[t * F + 4 * D + 2 * R * S + l * H + h]);
        }
        lattn_prism_split(D, S, w->P + t * S * D, w->F + t * F + D, !(p->ablate & LATTN_PRISM_R3), w->del + t * S * D, NULL);
    }
}
LATTN__DEF void lattn_prism_split(int64_t n, int64_t L, const double *P, const double *v, int retain, double *delta,
                                 double *rest) {
    int64_t l, c;
    for (c = 0; c < n; c++) {
        double pi = 1.0;                          /* π_l, the part of v no step has taken yet */
        for (l = 0; l < L; l++) {
            delta[l * n + c] = P[l * n + c] * (retain ? pi : 1.0) * v[c];
            pi *= 1.0 - P[l * n + c];
        }
        if (rest) rest[c] = pi * v[c];
    }
}
/* Step 8: y = SiLU(W_g x̂ + b) ∘ o; z = u ∘ LN_out(y); out = x + W_o2 SiLU(W_o1 z + b_o1) + b_o2. */
static void lattn__prism_output(const lattn_prism_p1 *p, int64_t T, const float *xb, const double *xh, const double *F_,
                                const double *o, double *w1, double *w2, float *y, double *y64) {
    const int64_t D = p->D, F = 4 * D + 2 * p->R * p->S + p->H * p->S;
    int64_t t, i, c;
    for (t = 0; t < T; t++) {
        for (c = 0; c < D; c++) {
            double acc = p->g_b[c];
            for (i = 0; i < D; i++) acc += (double)p->g_w[c * D + i] * xh[t * D + i];
            w1[c] = lattn__silu_d(acc) * o[t * D + c];
        }
        lattn__ln_d(D, w1, p->ln_out_w, p->ln_out_b, w2);
        for (c = 0; c < D; c++) w2[c] *= F_[t * F + c];           /* u ∘ LN_out(y) */
        for (i = 0; i < 4 * D; i++) {
            double acc = p->o0_b[i];
            for (c = 0; c < D; c++) acc += (double)p->o0_w[i * D + c] * w2[c];
            w2[D + i] = lattn__silu_d(acc);
        }
        for (c = 0; c < D; c++) {
            double acc = p->o2_b[c] + (double)xb[t * D + c];
            for (i = 0; i < 4 * D; i++) acc += (double)p->o2_w[c * 4 * D + i] * w2[D + i];
            y[t * D + c] = (float)acc;
            if (y64) y64[t * D + c] = acc;
        }
    }
}

LATTN__DEF lattn_status lattn_prism_p1_forward_ref(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, int64_t T,
                                           const float *x, float *y, double *y64) {
    const char *who = "lattn_prism_p1_forward_ref";
    int64_t D, H, S, R, d, C, F, N, b, i, j, l, h, n, s, m;
    double *buf, *M, *dS, *kb, *lam, *Ls, *Le;
    lattn__prism_rows r;
    size_t cnt;
    if (!p || !p->arena || !x || !y) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    if (B < 1 || T < 1) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld", who, (long long)B, (long long)T);
    D = p->D;
    H = p->H;
    S = p->S;
    R = p->R;
    d = D / H;
    C = LATTN__MIN(p->C, T);
    if (C < 1 || T % C != 0)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: T = %lld is not a multiple of the chunk size %lld (the official code's reshapes)",
                           who, (long long)T, (long long)C);
    if (!(p->tau > 0)) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: tau must be positive", who);
    F = 4 * D + 2 * R * S + H * S;
    N = T / C;
    {   /* per batch row: x̂, F, r.gk, β, r.P, κ, b, δ, r.o [T][...]; chunk work: M, dS [d][d], k̄, λ, Ls, Le */
        int64_t dims[2];
        dims[0] = T;
        dims[1] = 3 * D + F + H + 3 * S * D + S * H + D + 2 * D + 8 * D;
        LATTN__TRY(lattn__check_count(ctx, who, "the workspace", 2, dims));
        cnt = lattn__prism_ws(p, T) + (size_t)(2 * d * d + d + 3 * C * d);
    }
    if (lattn_size_mul(&cnt, cnt, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, cnt)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    M = lattn__prism_carve(p, T, buf, &r);   /* then the chunk work: M, dS [d][d], k̄ [d], λ, Ls, Le [C][d] */
    dS = M + d * d;
    kb = dS + d * d;
    lam = kb + d;
    Ls = lam + C * d;
    Le = Ls + C * d;
    for (b = 0; b < B; b++) {
        const float *xb = x + b * T * D;
        lattn__prism_project(p, T, xb, NULL, &r);   /* steps 1-6 */
        /* 7. the chunked recurrence, per head */
        for (h = 0; h < H; h++) {
            for (i = 0; i < d * d; i++) M[i] = 0.0;
            for (n = 0; n < N; n++) {
                int64_t t0 = n * C;
                double bbar = 0, kn = 0;
                for (i = 0; i < d; i++) {                        /* λ, Ls (prefix), Le (suffix), Lt */
                    double acc = 0;
                    for (s = 0; s < C; s++) {
                        lam[s * d + i] = log(LATTN__MAX(r.gk[(t0 + s) * D + h * d + i], 1e-6));
                        acc += lam[s * d + i];
                        Ls[s * d + i] = lattn__clampd(acc, -20.0, 20.0);
                    }
                    acc = 0;
                    for (s = C - 1; s >= 0; s--) { acc += lam[s * d + i]; Le[s * d + i] = lattn__clampd(acc, -20.0, 20.0); }
                    lam[i] = lattn__clampd(acc, -20.0, 20.0);        /* Lt of key i (λ's first row, no longer needed) */
                }
                /* outputs of the chunk from M_n and the intra-chunk scores */
                for (s = 0; s < C; s++) {
                    int64_t ts = t0 + s;
                    const double *q = r.F + ts * F + 2 * D + h * d;
                    double *os = r.o + ts * D + h * d;
                    for (i = 0; i < d; i++) r.w1[i] = q[i] * exp(Ls[s * d + i]);     /* q~_s */
                    for (j = 0; j < d; j++) {
                        double acc = 0;
                        for (i = 0; i < d; i++) acc += M[i * d + j] * r.w1[i];
                        os[j] = acc;
                    }
                    for (m = 0; m <= s; m++) {
                        int64_t tm = t0 + m;
                        const double *km = r.F + tm * F + 3 * D + h * d, *vm = r.F + tm * F + D + h * d;
                        double sc = 0;
                        for (i = 0; i < d; i++) {
                            double kc = km[i];
                            for (l = 0; l < S; l++) kc += r.kap[(tm * S + l) * D + h * d + i];
                            sc += r.w1[i] * (kc / LATTN__MAX(exp(Ls[m * d + i]) + 1e-3, 1e-6));
                        }
                        sc = lattn__clampd(sc, -100.0, 100.0);
                        for (j = 0; j < d; j++) {
                            double vc = vm[j];
                            for (l = 0; l < S; l++) vc += r.bl[(tm * S + l) * H + h] * r.del[(tm * S + l) * D + h * d + j];
                            os[j] += sc * vc;
                        }
                    }
                }
                if (n == N - 1) break;                           /* the last chunk's state is never used */
                /* dS_n, the chunk's mean key and β */
                for (i = 0; i < d * d; i++) dS[i] = 0.0;
                for (i = 0; i < d; i++) kb[i] = 0.0;
                for (s = 0; s < C; s++) {
                    int64_t ts = t0 + s;
                    const double *ks = r.F + ts * F + 3 * D + h * d, *vs = r.F + ts * F + D + h * d;
                    for (i = 0; i < d; i++) {
                        double e = exp(Le[s * d + i]);
                        kb[i] += ks[i];
                        for (j = 0; j < d; j++) {
                            double acc = ks[i] * vs[j];
                            for (l = 0; l < S; l++)
                                acc += r.kap[(ts * S + l) * D + h * d + i] * r.bl[(ts * S + l) * H + h] * r.del[(ts * S + l) * D + h * d + j];
                            dS[i * d + j] += e * acc;
                        }
                    }
                    bbar += r.bt[ts * H + h];
                }
                bbar /= (double)C;
                for (i = 0; i < d; i++) { kb[i] /= (double)C; kn += kb[i] * kb[i]; }
                kn = sqrt(kn) + 1e-6;
                for (i = 0; i < d; i++) kb[i] /= kn;
                /* M <- clamp(Diag(e^{Lt}) (M - β̄ k̄ (k̄ᵀ M)) + dS, ±50) */
                for (j = 0; j < d; j++) {
                    double acc = 0;
                    for (i = 0; i < d; i++) acc += kb[i] * M[i * d + j];
                    r.w2[j] = acc;
                }
                for (i = 0; i < d; i++)
                    for (j = 0; j < d; j++) {
                        double mm = (M[i * d + j] - bbar * kb[i] * r.w2[j]) * exp(lam[i]) + dS[i * d + j];
                        M[i * d + j] = lattn__clampd(mm, -50.0, 50.0);
                    }
            }
        }
        lattn__prism_output(p, T, xb, r.xh, r.F, r.o, r.w1, r.w2, y + b * T * D, y64 ? y64 + b * T * D : NULL);   /* step 8 */
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

LATTN__DEF lattn_prism_config lattn_prism_config_large_130m(void) {
    lattn_prism_config c;
    c.vocab = 50257;
    c.seq_len = 1024;
    c.D = 768;
    c.n_layers = 8;
    c.H = 8;
    c.S = 2;
    c.R = 128;
    c.Kc = 7;
    c.rg = 16;
    return c;
}
static int64_t lattn__prism_params(const lattn_prism_config *c, int64_t *per_block) {
    const int64_t lim = (int64_t)1 << 24;
    int64_t D, H, S, R, Kc, rg, blk;
    if (per_block) *per_block = -1;
    if (!c || c->D < 1 || c->H < 1 || c->R < 1 || c->Kc < 1 || c->rg < 1 || c->n_layers < 1 || c->seq_len < 1 || c->S < 0 || c->vocab < 0 ||
        c->D > lim || c->H > lim || c->R > lim || c->Kc > lim || c->rg > lim || c->n_layers > lim || c->seq_len > lim || c->S > lim || c->vocab > lim)
        return -1;
    D = c->D;
    H = c->H;
    S = c->S;
    R = c->R;
    Kc = c->Kc;
    rg = c->rg;
    if ((double)(D + 1) * (double)(4 * D + 2 * R * S + H * S) * (double)c->n_layers > 4e18) return -1;   /* fits int64 */
    blk = 2 * D + (Kc + 1) * D + 2 * D + (D + 1) * (4 * D + 2 * R * S + H * S) + (2 * D * rg + rg + D) + 2 * D
        + (D * D + D) + D * H + (8 * D * D + 5 * D) + 2 * S * R * D;
    if (per_block) *per_block = blk;
    return c->vocab * D + c->seq_len * D + 2 * D + c->n_layers * blk;
}
LATTN__DEF lattn_status lattn_prism_params(const lattn_prism_config *c, size_t *out, int64_t *per_block) {
    return lattn__size_out(lattn__prism_params(c, per_block), out);
}

/* ---- P2: the per-token LM form on the delta-rule core ------------------------------------------ */
static int64_t lattn__prism_p2_state_floats(const lattn_prism_p1 *p) {
    if (!p || p->D < 1 || p->H < 1 || p->Kc < 1) return -1;
    return p->D * p->Kc + p->D * (p->D / p->H);                  /* D·Kc + H·d·d */
}
LATTN__DEF lattn_status lattn_prism_p2_state_floats(const lattn_prism_p1 *p, size_t *out) {
    return lattn__size_out(lattn__prism_p2_state_floats(p), out);
}
/* Workspace of one row in double: x̂, F, gk, β, P, κ, δ, b, o, the conv cache and scratch. */
static lattn_status lattn__prism_p2_args(lattn_ctx *ctx, const char *who, const lattn_prism_p1 *p, int64_t B, int64_t T,
                                         const float *x, const float *y) {
    int64_t dims[2];
    if (!p || !p->arena || !x || !y) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    if (B < 1 || T < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld", who, (long long)B, (long long)T);
    if (!(p->tau > 0)) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: tau must be positive", who);
    dims[0] = B * LATTN__MAX(T, 1);
    dims[1] = 4 * p->D + 2 * p->R * p->S + p->H * p->S + 3 * p->S * p->D + 8 * p->D;
    return lattn__check_count(ctx, who, "the workspace", 2, dims);
}

LATTN__DEF lattn_status lattn_prism_p2_forward_ref(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, int64_t T,
                                           const float *x, float *y, float *state, double *y64) {
    const char *who = "lattn_prism_p2_forward_ref";
    int64_t D, H, S, d, F, SF, b, t, i, j, l, h;
    double *buf, *St;
    lattn__prism_rows r;
    size_t cnt;
    LATTN__TRY(lattn__prism_p2_args(ctx, who, p, B, T, x, y));
    D = p->D;
    H = p->H;
    S = p->S;
    d = D / H;
    F = 4 * D + 2 * p->R * S + H * S;
    SF = lattn__prism_p2_state_floats(p);
    if (T == 0) return lattn__ok(ctx);
    cnt = lattn__prism_ws(p, T) + (size_t)(H * d * d + d);
    if (lattn_size_mul(&cnt, cnt, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, cnt)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    St = lattn__prism_carve(p, T, buf, &r);
    for (b = 0; b < B; b++) {
        const float *xb = x + b * T * D;
        double *kh = St + H * d * d;
        for (i = 0; i < D * p->Kc; i++) r.cache[i] = state ? (double)state[b * SF + i] : 0.0;
        for (i = 0; i < H * d * d; i++) St[i] = state ? (double)state[b * SF + D * p->Kc + i] : 0.0;
        lattn__prism_project(p, T, xb, r.cache, &r);
        for (t = 0; t < T; t++)
            for (h = 0; h < H; h++) {
                const double *q = r.F + t * F + 2 * D + h * d, *k = r.F + t * F + 3 * D + h * d, *v = r.F + t * F + D + h * d;
                double *Sh = St + h * d * d, nk = 0, beta = r.bt[t * H + h];
                for (i = 0; i < d; i++) nk += k[i] * k[i];
                nk = 1.0 / sqrt(nk + LATTN__L2_EPS);
                for (i = 0; i < d; i++) kh[i] = k[i] * nk;
                /* S' = Diag(r.gk) S; w = S'ᵀ k̂; S = S' - β k̂ wᵀ + k vᵀ + Σ_l κ_l (b_l δ_l)ᵀ; r.o = Sᵀ q */
                for (j = 0; j < d; j++) {
                    double w = 0;
                    for (i = 0; i < d; i++) { Sh[i * d + j] *= r.gk[t * D + h * d + i]; w += kh[i] * Sh[i * d + j]; }
                    for (i = 0; i < d; i++) {
                        double add = k[i] * v[j] - beta * kh[i] * w;
                        for (l = 0; l < S; l++)
                            add += r.kap[(t * S + l) * D + h * d + i] * r.bl[(t * S + l) * H + h] * r.del[(t * S + l) * D + h * d + j];
                        Sh[i * d + j] += add;
                    }
                }
                for (j = 0; j < d; j++) {
                    double acc = 0;
                    for (i = 0; i < d; i++) acc += Sh[i * d + j] * q[i];
                    r.o[t * D + h * d + j] = acc;
                }
            }
        lattn__prism_output(p, T, xb, r.xh, r.F, r.o, r.w1, r.w2, y + b * T * D, y64 ? y64 + b * T * D : NULL);
        if (state) {
            for (i = 0; i < D * p->Kc; i++) state[b * SF + i] = (float)r.cache[i];
            for (i = 0; i < H * d * d; i++) state[b * SF + D * p->Kc + i] = (float)St[i];
        }
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* _chunk and _step: steps 1-6 (double), the recurrence on the core in float32, step 8 (double). */
static lattn_status lattn__prism_p2_run(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, int64_t T, const float *x,
                                        float *y, float *state, lattn_form form, const char *who) {
    int64_t D, H, S, d, F, SF, b, t, i, l, h;
    double *buf;
    lattn__prism_rows r;
    float *fb, *q, *k, *v, *c, *be, *g, *ib, *ik, *id, *of, *S0, *S1;
    size_t cnt, fcnt;
    lattn_status st = LATTN_OK;
    LATTN__TRY(lattn__prism_p2_args(ctx, who, p, B, T, x, y));
    if (form == LATTN_FORM_STEP && !state) return lattn__fail(ctx, LATTN_E_NULL, "%s: state is NULL", who);
    D = p->D;
    H = p->H;
    S = p->S;
    d = D / H;
    F = 4 * D + 2 * p->R * S + H * S;
    SF = lattn__prism_p2_state_floats(p);
    if (T == 0) return lattn__ok(ctx);
    cnt = lattn__prism_ws(p, T);
    fcnt = (size_t)(T * (5 * D + 2 * H + S * H + 2 * S * D)) + 2 * (size_t)(H * d * d);
    if (lattn_size_mul(&cnt, cnt, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, cnt)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    if (lattn__alloc_floats(ctx, &fb, fcnt, who) != LATTN_OK) { lattn__free(ctx, buf); return LATTN_E_NOMEM; }
    lattn__prism_carve(p, T, buf, &r);
    {   /* the core's inputs and outputs, token-major, and the two head-state buffers */
        float **const part[12] = { &q, &k, &v, &g, &of, &c, &be, &ib, &ik, &id, &S0, &S1 };
        const int64_t n[12] = { T * D, T * D, T * D, T * D, T * D, T * H, T * H, T * S * H, T * S * D, T * S * D, H * d * d, H * d * d };
        lattn__carve_floats(fb, part, n, 12);
    }
    for (b = 0; b < B && st == LATTN_OK; b++) {
        const float *xb = x + b * T * D;
        lattn_gdr_args a = LATTN__ZERO;
        for (i = 0; i < D * p->Kc; i++) r.cache[i] = state ? (double)state[b * SF + i] : 0.0;
        lattn__prism_project(p, T, xb, r.cache, &r);
        /* the core's inputs, token-major [T][H][·]. The erase key k̂ and the write key k are parallel:
           k vᵀ = k̂ (c v)ᵀ with c = |k|_ε = sqrt(|k|² + ε), so k̂ is the core's one key (e = k) and the
           erase and base write merge as in GDN (the chunk kernel then has one write pair fewer) */
        for (t = 0; t < T; t++) {
            for (h = 0; h < H; h++) {
                double nk = 0;
                for (i = 0; i < d; i++) nk += r.F[t * F + 3 * D + h * d + i] * r.F[t * F + 3 * D + h * d + i];
                nk = sqrt(nk + LATTN__L2_EPS);
                for (i = 0; i < d; i++) {
                    int64_t ch = h * d + i;
                    q[t * D + ch] = (float)r.F[t * F + 2 * D + ch];
                    k[t * D + ch] = (float)(r.F[t * F + 3 * D + ch] / nk);
                    v[t * D + ch] = (float)r.F[t * F + D + ch];
                    g[t * D + ch] = (float)log(r.gk[t * D + ch]);
                    for (l = 0; l < S; l++) {
                        ik[((t * H + h) * S + l) * d + i] = (float)r.kap[(t * S + l) * D + ch];
                        id[((t * H + h) * S + l) * d + i] = (float)r.del[(t * S + l) * D + ch];
                    }
                }
                c[t * H + h] = (float)nk;
                be[t * H + h] = (float)r.bt[t * H + h];
                for (l = 0; l < S; l++) ib[(t * H + h) * S + l] = (float)r.bl[(t * S + l) * H + h];
            }
        }
        for (i = 0; i < H * d * d; i++) S0[i] = state ? state[b * SF + D * p->Kc + i] : 0.0f;
        a.B = 1;
        a.T = T;
        a.H = H;
        a.K = d;
        a.V = d;
        a.q = q;
        a.k = k;
        a.v = v;
        a.c = c;
        a.beta = be;
        a.gk = g;
        a.L = S;
        a.inj_b = ib;
        a.inj_kap = ik;
        a.inj_d = id;
        a.scale = 1.0;
        a.h0 = S0;
        a.ht = S1;
        a.o = of;
        st = form == LATTN_FORM_STEP ? lattn_gdr_step(ctx, &a) : lattn_gdr_chunk(ctx, &a);
        if (st != LATTN_OK) break;
        for (i = 0; i < T * D; i++) r.o[i] = of[i];
        lattn__prism_output(p, T, xb, r.xh, r.F, r.o, r.w1, r.w2, y + b * T * D, NULL);
        if (state) {
            for (i = 0; i < D * p->Kc; i++) state[b * SF + i] = (float)r.cache[i];
            memcpy(state + b * SF + D * p->Kc, S1, sizeof(float) * (size_t)(H * d * d));
        }
    }
    lattn__free(ctx, fb);
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_prism_p2_forward(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, int64_t T,
                                             const float *x, float *y, float *state) {
    return lattn__prism_p2_run(ctx, p, B, T, x, y, state, LATTN_FORM_CHUNK, "lattn_prism_p2_forward");
}
LATTN__DEF lattn_status lattn_prism_p2_step(lattn_ctx *ctx, const lattn_prism_p1 *p, int64_t B, const float *x,
                                            float *y, float *state) {
    return lattn__prism_p2_run(ctx, p, B, 1, x, y, state, LATTN_FORM_STEP, "lattn_prism_p2_step");
}

/* ---- P0: the paper's per-token model ------------------------------------------------------------ */
enum { LATTN__P0_CONV, LATTN__P0_Q, LATTN__P0_V, LATTN__P0_O, LATTN__P0_AW, LATTN__P0_AB, LATTN__P0_G };   /* then 4 per step */
static int64_t lattn__prism_p0_state_floats(const lattn_prism_p0_config *c) {
    if (!c || c->D < 1 || c->H < 1 || c->Kc < 1 || c->D % c->H || c->D > (1 << 20) || c->Kc > 64) return -1;
    return c->D * c->Kc + c->D * (c->D / c->H);
}
LATTN__DEF lattn_status lattn_prism_p0_state_floats(const lattn_prism_p0_config *c, size_t *out) {
    return lattn__size_out(lattn__prism_p0_state_floats(c), out);
}
static lattn_status lattn__p0_alloc(lattn_ctx *ctx, lattn_prism_p0 *m, const lattn_prism_p0_config *c, const char *who) {
    int64_t nt, i, D, H;
    memset(m, 0, sizeof *m);
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: configuration is NULL", who);
    if (lattn__prism_p0_state_floats(c) < 0 || c->L < 1 || c->L > 64)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: D = %lld, H = %lld (must divide D), L = %lld, Kc = %lld", who,
                           (long long)c->D, (long long)c->H, (long long)c->L, (long long)c->Kc);
    D = c->D;
    H = c->H;
    nt = LATTN__P0_G + 4 * c->L;
    LATTN__TRY(lattn__table_new(ctx, who, nt, 0, &m->tensors));
    for (i = 0; i < nt; i++) {
        lattn_tensor *t = &m->tensors[i];
        static const char *const base[LATTN__P0_G] = { "conv.weight", "q_proj.weight", "v_proj.weight", "o_proj.weight",
                                                        "alpha_proj.weight", "alpha_proj.bias" };
        static const char *const step[4] = { "k_proj.weight", "p_proj.weight", "beta_proj.weight", "beta_proj.bias" };
        int sl = i < LATTN__P0_G ? -1 : (int)((i - LATTN__P0_G) % 4);
        if (sl < 0) snprintf(t->name, sizeof t->name, "%s", base[i]);
        else snprintf(t->name, sizeof t->name, "solver.%lld.%s", (long long)((i - LATTN__P0_G) / 4), step[sl]);
        t->ndim = (i == LATTN__P0_AB || sl == 3) ? 1 : 2;
        t->shape[0] = (i == LATTN__P0_AW || i == LATTN__P0_AB || sl >= 2) ? H : D;
        t->shape[1] = i == LATTN__P0_CONV ? c->Kc : D;
    }
    if (lattn__arena_bind(ctx, who, m->tensors, nt, &m->arena, &m->n_params) != LATTN_OK) { memset(m, 0, sizeof *m); return LATTN_E_NOMEM; }
    m->cfg = *c;
    m->n_tensors = nt;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_prism_p0_init(lattn_ctx *ctx, lattn_prism_p0 *m, const lattn_prism_p0_config *c, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    int64_t i, D;
    if (!m) return lattn__fail(ctx, LATTN_E_NULL, "lattn_prism_p0_init: NULL model");
    LATTN__TRY(lattn__p0_alloc(ctx, m, c, "lattn_prism_p0_init"));
    D = c->D;
    lattn__arena_init(m->tensors, m->n_tensors, &r);
    for (i = 0; i < m->n_tensors; i++)   /* matrices N(0, 1/D) so that u, q, v, p carry O(1) signal */
        if (m->tensors[i].ndim == 2 && i != LATTN__P0_CONV) {
            size_t j;
            lattn_rng_fill_normal(&r, m->tensors[i].data, m->tensors[i].count, 0.0f, (float)(1.0 / sqrt((double)D)));
            for (j = 0; i == LATTN__P0_O && j < m->tensors[i].count; j++) m->tensors[i].data[j] *= 0.5f;
        }
    return lattn__ok(ctx);
}
/* The P0 configuration's fields in the metadata ("p0.D", "p0.H", "p0.L", "p0.Kc"). */
static void lattn__p0_fields(lattn_prism_p0_config *c, lattn__cfield fl[4]) {
    memset(fl, 0, 4 * sizeof *fl);
    fl[0].key = "p0.D";
    fl[0].i = &c->D;
    fl[1].key = "p0.H";
    fl[1].i = &c->H;
    fl[2].key = "p0.L";
    fl[2].i = &c->L;
    fl[3].key = "p0.Kc";
    fl[3].i = &c->Kc;
}
LATTN__DEF lattn_status lattn_prism_p0_serialize(lattn_ctx *ctx, const lattn_prism_p0 *m, unsigned char **out, size_t *size) {
    lattn__cfield fl[4];
    lattn_prism_p0_config c;
    if (!m || !m->tensors || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "lattn_prism_p0_serialize: NULL argument");
    c = m->cfg;
    lattn__p0_fields(&c, fl);
    return lattn__arena_serialize(ctx, "lattn_prism_p0_serialize", m->tensors, m->n_tensors, fl, 4, out, size);
}
LATTN__DEF lattn_status lattn_prism_p0_init_st(lattn_ctx *ctx, lattn_prism_p0 *m, const lattn_st_file *f, const char *prefix) {
    const char *who = "lattn_prism_p0_init_st";
    lattn_prism_p0_config c;
    lattn__cfield fl[4];
    lattn_status st;
    if (!m || !f) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    memset(m, 0, sizeof *m);
    if (!prefix) prefix = "";
    if (strlen(prefix) >= LATTN_NAME_MAX) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: prefix too long", who);
    lattn__p0_fields(&c, fl);
    LATTN__TRY(lattn__cfg_read(ctx, who, f, fl, 4));
    if ((st = lattn__p0_alloc(ctx, m, &c, who)) != LATTN_OK) return lattn__as_format(ctx, st);
    if ((st = lattn__arena_load(ctx, who, m->tensors, m->n_tensors, f, prefix)) != LATTN_OK) { lattn_prism_p0_free(ctx, m); return st; }
    return lattn__ok(ctx);
}
#ifndef LATTN_NO_STDIO
LATTN__MODEL_FILES(prism_p0, lattn_prism_p0)
#endif
LATTN__DEF void lattn_prism_p0_free(lattn_ctx *ctx, lattn_prism_p0 *m) {
    if (!m) return;
    lattn__free(ctx, m->arena);
    lattn__free(ctx, m->tensors);
    memset(m, 0, sizeof *m);
}
LATTN__DEF lattn_tensor *lattn_prism_p0_tensor(const lattn_prism_p0 *m, const char *name) {
    return m ? lattn__arena_find(m->tensors, m->n_tensors, name) : NULL;
}
static const float *lattn__p0w(const lattn_prism_p0 *m, int64_t i) { return m->tensors[i].data; }
/* The token-wise part of P0 for T tokens in double: u (conv history in cache, advanced), q, v, α,
   and per step k_l (k_1 normalised), δ_l, β_l. */
static void lattn__p0_project(const lattn_prism_p0 *m, int64_t T, const float *xb, double *cache, double *u, double *q,
                              double *v, double *al, double *kl, double *dl, double *bl, double *r) {
    const int64_t D = m->cfg.D, H = m->cfg.H, L = m->cfg.L, Kc = m->cfg.Kc, d = D / H;
    int64_t t, c, j, l, h;
    for (t = 0; t < T; t++) {
        double *ut = u + t * D;
        for (c = 0; c < D; c++) {        /* u = SiLU(causal depthwise conv of x) */
            double acc = 0;
            for (j = 0; j + 1 < Kc; j++) cache[c * Kc + j] = cache[c * Kc + j + 1];
            cache[c * Kc + Kc - 1] = xb[t * D + c];
            for (j = 0; j < Kc; j++) acc += (double)lattn__p0w(m, LATTN__P0_CONV)[c * Kc + j] * cache[c * Kc + j];
            ut[c] = lattn__silu_d(acc);
        }
        lattn__matvec_d(D, D, lattn__p0w(m, LATTN__P0_Q), ut, q + t * D, 0);
        lattn__matvec_d(D, D, lattn__p0w(m, LATTN__P0_V), ut, v + t * D, 0);
        lattn__matvec_d(H, D, lattn__p0w(m, LATTN__P0_AW), ut, al + t * H, 0);
        for (h = 0; h < H; h++) al[t * H + h] = lattn__sigmoid_d(al[t * H + h] + lattn__p0w(m, LATTN__P0_AB)[h]);
        for (c = 0; c < D; c++) r[c] = v[t * D + c] - ut[c];                                   /* r_1 = v - u */
        for (l = 0; l < L; l++) {
            double *k = kl + (t * L + l) * D, *dd = dl + (t * L + l) * D, *pp = dd;
            lattn__matvec_d(D, D, lattn__p0w(m, LATTN__P0_G + 4 * l), ut, k, 0);
            lattn__matvec_d(D, D, lattn__p0w(m, LATTN__P0_G + 4 * l + 1), ut, pp, 0);
            lattn__matvec_d(H, D, lattn__p0w(m, LATTN__P0_G + 4 * l + 2), ut, bl + (t * L + l) * H, 0);
            for (h = 0; h < H; h++) bl[(t * L + l) * H + h] = lattn__sigmoid_d(bl[(t * L + l) * H + h] + lattn__p0w(m, LATTN__P0_G + 4 * l + 3)[h]);
            for (c = 0; c < D; c++) { dd[c] = lattn__gelu_d(pp[c] * r[c]); r[c] -= dd[c]; }   /* δ_l, r_{l+1} */
            if (l == 0)
                for (h = 0; h < H; h++) {   /* k_1 normalised per head */
                    double n = 0;
                    for (c = 0; c < d; c++) n += k[h * d + c] * k[h * d + c];
                    n = 1.0 / sqrt(n + LATTN__L2_EPS);
                    for (c = 0; c < d; c++) k[h * d + c] *= n;
                }
        }
    }
}
static lattn_status lattn__p0_args(lattn_ctx *ctx, const char *who, const lattn_prism_p0 *m, int64_t B, int64_t T,
                                   const float *x, const float *y) {
    int64_t dims[3];
    if (!m || !m->arena || !x || !y) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    if (B < 1 || T < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld", who, (long long)B, (long long)T);
    dims[0] = B * LATTN__MAX(T, 1);
    dims[1] = 4 + 3 * m->cfg.L;
    dims[2] = m->cfg.D + m->cfg.Kc;
    return lattn__check_count(ctx, who, "the workspace", 3, dims);
}
/* One row through P0; the recurrence in double (form REF) or on the core (CHUNK: _chunk, STEP: _step). */
static lattn_status lattn__p0_run(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, int64_t T, const float *x, float *y,
                                  float *state, double *y64, lattn_form form, const char *who) {
    const int64_t D = m ? m->cfg.D : 0, H = m ? m->cfg.H : 1, L = m ? m->cfg.L : 0, Kc = m ? m->cfg.Kc : 0;
    int64_t d, SF, b, t, i, j, l, h;
    double *buf, *cache, *u, *q, *v, *al, *kl, *dl, *bl, *r, *o, *S;
    float *fb = NULL;
    size_t cnt;
    lattn_status st = LATTN_OK;
    LATTN__TRY(lattn__p0_args(ctx, who, m, B, T, x, y));
    if (form == LATTN_FORM_STEP && !state) return lattn__fail(ctx, LATTN_E_NULL, "%s: state is NULL", who);
    d = D / H;
    SF = lattn__prism_p0_state_floats(&m->cfg);
    if (T == 0) return lattn__ok(ctx);
    cnt = (size_t)(D * Kc + T * (5 * D + H + 2 * L * D + L * H) + H * d * d + D);
    if (lattn_size_mul(&cnt, cnt, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, cnt)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    if (form != LATTN_FORM_REF && lattn__alloc_floats(ctx, &fb, (size_t)(T * (5 * D + H + 2 * L * D + 2 * L * H) + 2 * H * d * d), who) != LATTN_OK) {
        lattn__free(ctx, buf);
        return LATTN_E_NOMEM;
    }
    {   /* the conv history, u, q, v, o [T][D], α [T][H], k_l, δ_l [T][L][D], β_l [T][L][H], S, r */
        double **const part[11] = { &cache, &u, &q, &v, &o, &al, &kl, &dl, &bl, &S, &r };
        const int64_t n[11] = { D * Kc, T * D, T * D, T * D, T * D, T * H, T * L * D, T * L * D, T * L * H, H * d * d, D };
        lattn__carve_doubles(buf, part, n, 11);
    }
    for (b = 0; b < B && st == LATTN_OK; b++) {
        const float *xb = x + b * T * D;
        for (i = 0; i < D * Kc; i++) cache[i] = state ? (double)state[b * SF + i] : 0.0;
        lattn__p0_project(m, T, xb, cache, u, q, v, al, kl, dl, bl, r);
        if (form == LATTN_FORM_REF) {                /* the recurrence in double, token by token */
            for (i = 0; i < H * d * d; i++) S[i] = state ? (double)state[b * SF + D * Kc + i] : 0.0;
            for (t = 0; t < T; t++)
                for (h = 0; h < H; h++) {
                    double *Sh = S + h * d * d, a = al[t * H + h], be = bl[(t * L) * H + h];
                    const double *k1 = kl + (t * L) * D + h * d;
                    for (j = 0; j < d; j++) {  /* S = α (S - β_1 k_1 (k_1ᵀ S)) + Σ_l β_l k_l δ_lᵀ */
                        double w = 0;
                        for (i = 0; i < d; i++) w += k1[i] * Sh[i * d + j];
                        for (i = 0; i < d; i++) {
                            double add = 0;
                            for (l = 0; l < L; l++)
                                add += bl[(t * L + l) * H + h] * kl[(t * L + l) * D + h * d + i] * dl[(t * L + l) * D + h * d + j];
                            Sh[i * d + j] = a * (Sh[i * d + j] - be * k1[i] * w) + add;
                        }
                    }
                    for (j = 0; j < d; j++) {
                        double acc = 0;
                        for (i = 0; i < d; i++) acc += Sh[i * d + j] * q[t * D + h * d + i];
                        o[t * D + h * d + j] = acc / sqrt((double)d);
                    }
                }
            if (state) for (i = 0; i < H * d * d; i++) state[b * SF + D * Kc + i] = (float)S[i];
        } else {                         /* on the core: gate log α, e = k_1, c = 0, L injections */
            lattn_gdr_args a = LATTN__ZERO;
            float *fq = fb, *fe = fq + T * D, *fo = fe + T * D, *fg = fo + T * D, *fc = fg + T * H, *fbe = fc + T * H;
            float *fv = fbe + T * H, *ib = fv + T * D, *ik = ib + T * L * H, *id = ik + T * L * D, *S0 = id + T * L * D, *S1 = S0 + H * d * d;
            for (t = 0; t < T; t++)
                for (h = 0; h < H; h++) {
                    fg[t * H + h] = (float)log(al[t * H + h]);
                    fc[t * H + h] = 0.0f;
                    fbe[t * H + h] = (float)bl[(t * L) * H + h];
                    for (i = 0; i < d; i++) {
                        fq[t * D + h * d + i] = (float)q[t * D + h * d + i];
                        fe[t * D + h * d + i] = (float)kl[(t * L) * D + h * d + i];
                        fv[t * D + h * d + i] = 0.0f;                     /* the base write is off (c = 0) */
                    }
                    for (l = 0; l < L; l++) {
                        ib[(t * H + h) * L + l] = (float)bl[(t * L + l) * H + h];
                        for (i = 0; i < d; i++) {
                            ik[((t * H + h) * L + l) * d + i] = (float)kl[(t * L + l) * D + h * d + i];
                            id[((t * H + h) * L + l) * d + i] = (float)dl[(t * L + l) * D + h * d + i];
                        }
                    }
                }
            for (i = 0; i < H * d * d; i++) S0[i] = state ? state[b * SF + D * Kc + i] : 0.0f;
            a.B = 1;
            a.T = T;
            a.H = H;
            a.K = d;
            a.V = d;
            a.q = fq;
            a.k = fe;
            a.v = fv;
            a.e = fe;
            a.c = fc;
            a.beta = fbe;
            a.g = fg;
            a.L = L;
            a.inj_b = ib;
            a.inj_kap = ik;
            a.inj_d = id;
            a.scale = 1.0 / sqrt((double)d);
            a.h0 = S0;
            a.ht = S1;
            a.o = fo;
            st = form == LATTN_FORM_STEP ? lattn_gdr_step(ctx, &a) : lattn_gdr_chunk(ctx, &a);
            if (st != LATTN_OK) break;
            for (i = 0; i < T * D; i++) o[i] = fo[i];
            if (state) memcpy(state + b * SF + D * Kc, S1, sizeof(float) * (size_t)(H * d * d));
        }
        for (t = 0; t < T; t++) {        /* y = W_o o */
            for (i = 0; i < D; i++) {
                double acc = 0;
                for (j = 0; j < D; j++) acc += (double)lattn__p0w(m, LATTN__P0_O)[i * D + j] * o[t * D + j];
                y[(b * T + t) * D + i] = (float)acc;
                if (y64) y64[(b * T + t) * D + i] = acc;
            }
        }
        if (state) for (i = 0; i < D * Kc; i++) state[b * SF + i] = (float)cache[i];
    }
    lattn__free(ctx, fb);
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_prism_p0_forward_ref(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, int64_t T,
                                                   const float *x, float *y, float *state, double *y64) {
    return lattn__p0_run(ctx, m, B, T, x, y, state, y64, LATTN_FORM_REF, "lattn_prism_p0_forward_ref");
}
LATTN__DEF lattn_status lattn_prism_p0_forward(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, int64_t T,
                                             const float *x, float *y, float *state) {
    return lattn__p0_run(ctx, m, B, T, x, y, state, NULL, LATTN_FORM_CHUNK, "lattn_prism_p0_forward");
}
LATTN__DEF lattn_status lattn_prism_p0_step(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, const float *x,
                                            float *y, float *state) {
    return lattn__p0_run(ctx, m, B, 1, x, y, state, NULL, LATTN_FORM_STEP, "lattn_prism_p0_step");
}

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>ttt implementation                                                                             */
/* ================================================================================================ */
/* Floats of one head's fast weights, -1 for a width out of range. */
static int64_t lattn__ttt_p(int64_t K, int mlp) {
    if (K < 1 || K > (1 << 14)) return -1;
    return mlp ? 8 * K * K + 5 * K : K * K + K;
}
LATTN__DEF lattn_status lattn_ttt_params(int64_t K, int mlp, size_t *out) {
    return lattn__size_out(lattn__ttt_p(K, mlp), out);
}
LATTN__DEF void lattn_ttt_weights(int64_t K, int mlp, const float *tok, int64_t pos, const float *s, float *w) {
    int64_t P = lattn__ttt_p(K, mlp), i;
    float t = pos > 0 ? tok[pos - 1] : 0.0f;
    for (i = 0; i < P; i++) w[i] = s[i] - t * s[P + i];
}

#define LATTN__TTT_EPS 1e-6               /* the inner LayerNorm's and post_norm's epsilon */
#define LATTN__TTT_MAXB (1 << 16)
/* gelu_tanh (torch's F.gelu(approximate="tanh"), sqrt(2/π) in full) and the official gelu_bwd with
   its truncated constants, in double. */
static double lattn__gelu_tanh_d(double x) { return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
/* The float forms over n values through the vector sigmoid, with 0.5 (1 + tanh u) = σ(2u):
   gelu_tanh(x) = x σ(2u), and gelu_bwd = 2x s (1 - s)(c' + 0.1070322243 x²) + s, s = σ(2u'). */
static void lattn__gelu_tanh_n(size_t n, const float *x, float *y, float *tmp) {   /* tmp may be y, not x */
    size_t i;
    for (i = 0; i < n; i++) tmp[i] = 1.5957691216057308f * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
    lattn_vec_sigmoid(n, tmp, tmp);
    for (i = 0; i < n; i++) y[i] = x[i] * tmp[i];
}
static void lattn__gelu_bwd_mul_n(size_t n, const float *x, float *g, float *tmp) {   /* g *= gelu_bwd(x) */
    size_t i;
    for (i = 0; i < n; i++) tmp[i] = 1.59576912f * x[i] * (1.0f + 0.044715f * x[i] * x[i]);
    lattn_vec_sigmoid(n, tmp, tmp);
    for (i = 0; i < n; i++) {
        float s = tmp[i];
        g[i] *= 2.0f * x[i] * s * (1.0f - s) * (0.79788456f + 0.1070322243f * x[i] * x[i]) + s;
    }
}
static double lattn__gelu_bwd_d(double x) {
    double t = tanh(0.79788456 * x * (1.0 + 0.044715 * x * x));
    return 0.5 * x * ((1.0 - t * t) * (0.79788456 + 0.1070322243 * x * x)) + 0.5 * (1.0 + t);
}
/* The inner loss's gradient at z (the official ln_fused_l2_bwd), target y = v - k:
   ẑ = (z - μ)/σ, g = (γ ẑ + β - y) γ, G = (F g - Σg - ẑ Σ(g ẑ)) / (F σ). Then the output row
   o = q + γ Z̄̂ + β (lattn__ttt_out). Double and float. */
static void lattn__ttt_grad_d(int64_t F, const double *z, const double *v, const double *k, const float *gw,
                              const float *gb, double *g) {
    double mu = 0, var = 0, sig, s1 = 0, s2 = 0;
    int64_t i;
    for (i = 0; i < F; i++) mu += z[i];
    mu /= (double)F;
    for (i = 0; i < F; i++) var += (z[i] - mu) * (z[i] - mu);
    sig = sqrt(var / (double)F + LATTN__TTT_EPS);
    for (i = 0; i < F; i++) {
        double zh = (z[i] - mu) / sig;
        g[i] = ((double)gw[i] * zh + (double)gb[i] - (v[i] - k[i])) * (double)gw[i];
        s1 += g[i];
        s2 += g[i] * zh;
    }
    for (i = 0; i < F; i++) g[i] = ((double)F * g[i] - s1 - (z[i] - mu) / sig * s2) / ((double)F * sig);
}
static void lattn__ttt_grad(int64_t F, const float *z, const float *v, const float *k, const float *gw,
                            const float *gb, float *g, float *zh) {
    const size_t n = (size_t)F;
    const lattn__vf mu = lattn__vset1(lattn_vec_sum(n, z) / (float)F);
    lattn__vf inv, c1, c2;
    size_t i, w;
    for (i = 0; i < n; i += w) { w = LATTN__MIN(n - i, (size_t)LATTN__VW); lattn__vstore_w(zh + i, lattn__vsub(lattn__vload_w(z + i, w), mu), w); }
    inv = lattn__vset1(1.0f / sqrtf(lattn_vec_dot(n, zh, zh) / (float)F + (float)LATTN__TTT_EPS));
    for (i = 0; i < n; i += w) {         /* ẑ, and g = (γ ẑ + β - (v - k)) γ */
        lattn__vf x, gg;
        w = LATTN__MIN(n - i, (size_t)LATTN__VW);
        x = lattn__vmul(lattn__vload_w(zh + i, w), inv);
        gg = lattn__vsub(lattn__vfma(lattn__vload_w(gw + i, w), x, lattn__vload_w(gb + i, w)),
                         lattn__vsub(lattn__vload_w(v + i, w), lattn__vload_w(k + i, w)));
        lattn__vstore_w(zh + i, x, w);
        lattn__vstore_w(g + i, lattn__vmul(gg, lattn__vload_w(gw + i, w)), w);
    }
    c1 = lattn__vset1(lattn_vec_sum(n, g));
    c2 = lattn__vset1(lattn_vec_dot(n, g, zh));
    inv = lattn__vmul(inv, lattn__vset1(1.0f / (float)F));
    for (i = 0; i < n; i += w) {         /* G = (F g - Σg - ẑ Σ(g ẑ)) / (F σ) */
        lattn__vf gg;
        w = LATTN__MIN(n - i, (size_t)LATTN__VW);
        gg = lattn__vsub(lattn__vsub(lattn__vmul(lattn__vset1((float)F), lattn__vload_w(g + i, w)), c1),
                         lattn__vmul(lattn__vload_w(zh + i, w), c2));
        lattn__vstore_w(g + i, lattn__vmul(gg, inv), w);
    }
}
static void lattn__ttt_out(int64_t F, const float *z, const float *q, const float *gw, const float *gb, float *o, float *zc) {
    const size_t n = (size_t)F;
    const lattn__vf mu = lattn__vset1(lattn_vec_sum(n, z) / (float)F);
    lattn__vf inv;
    size_t i, w;
    for (i = 0; i < n; i += w) { w = LATTN__MIN(n - i, (size_t)LATTN__VW); lattn__vstore_w(zc + i, lattn__vsub(lattn__vload_w(z + i, w), mu), w); }
    inv = lattn__vset1(1.0f / sqrtf(lattn_vec_dot(n, zc, zc) / (float)F + (float)LATTN__TTT_EPS));
    for (i = 0; i < n; i += w) {         /* o = q + γ ẑ + β */
        w = LATTN__MIN(n - i, (size_t)LATTN__VW);
        lattn__vstore_w(o + i, lattn__vadd(lattn__vload_w(q + i, w), lattn__vfma(lattn__vload_w(gw + i, w),
                        lattn__vmul(lattn__vload_w(zc + i, w), inv), lattn__vload_w(gb + i, w))), w);
    }
}

typedef struct lattn__ttt_dims { int64_t n, F, F1, P, b; } lattn__ttt_dims;
static lattn_status lattn__ttt_check(lattn_ctx *ctx, const char *who, const lattn_ttt_args *a, lattn__ttt_dims *dm) {
    int64_t d[4], i;
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    LATTN__TRY(lattn__check_seqs(ctx, who, a->B, a->T, a->offsets, a->n_seqs, &dm->n));
    if (a->H < 1 || (a->mlp != 0 && a->mlp != 1) || lattn__ttt_p(a->K, a->mlp) < 0 || a->mini_batch < 1 ||
        a->mini_batch > LATTN__TTT_MAXB)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: H = %lld, F = %lld (1..16384), mlp = %d, mini_batch = %lld (1..65536)", who,
                           (long long)a->H, (long long)a->K, a->mlp, (long long)a->mini_batch);
    if (!a->h0 || !a->tok || !a->ln_w || !a->ln_b) return lattn__fail(ctx, LATTN_E_NULL, "%s: h0, tok, ln_w or ln_b is NULL", who);
    if (a->T > 0 && (!a->q || !a->k || !a->v || !a->lr || !a->o))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: q, k, v, lr or o is NULL", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->H;
    d[3] = a->K;
    LATTN__TRY(lattn__check_count(ctx, who, "the inputs", 4, d));
    dm->F = a->K;
    dm->F1 = a->mlp ? 4 * a->K : a->K;
    dm->P = lattn__ttt_p(a->K, a->mlp);
    dm->b = a->mini_batch;
    d[0] = dm->n;
    d[1] = a->H;
    d[2] = 2;
    d[3] = dm->P;
    LATTN__TRY(lattn__check_count(ctx, who, "the state", 4, d));
    for (i = 0; i < dm->b; i++)
        if (!(a->tok[i] >= 0.0f && a->tok[i] <= FLT_MAX))
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: tok[%lld] = %g (must be finite and >= 0)", who, (long long)i, (double)a->tok[i]);
    for (i = 0; a->pos0 && i < dm->n; i++)
        if (a->pos0[i] < 0 || a->pos0[i] >= dm->b)
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: pos0[%lld] = %lld is outside [0, %lld)", who, (long long)i,
                               (long long)a->pos0[i], (long long)dm->b);
    return LATTN_OK;
}

/* --- _ref: token by token in double ----------------------------------------------------------- */
/* One head over len tokens (q, k, v [len][F], lr [len], contiguous), from the open mini-batch
   position pos; s [2P] the state (weights W0, then the accumulated gradient A), updated; o [len][F].
   tmp: 4·F1 + 2·F doubles. */
static void lattn__ttt_ref_head(int64_t F, int mlp, int64_t b, int64_t len, int64_t pos, const double *q, const double *k,
                                const double *v, const double *lr, const double *tok, const float *gw, const float *gb,
                                double *s, double *o, double *tmp) {
    const int64_t F1 = mlp ? 4 * F : F, P = mlp ? 8 * F * F + 5 * F : F * F + F;
    double *W1 = s, *b1 = W1 + F * F1, *W2 = b1 + F1, *b2 = W2 + F1 * F, *A1 = s + P, *a1 = A1 + F * F1, *A2 = a1 + F1, *a2 = A2 + F1 * F;
    double *z1 = tmp, *x2 = z1 + F1, *g1 = x2 + F1, *zb = g1 + F1, *z2 = zb + F1, *g2 = z2 + F;
    int64_t t, i, j;
    for (t = 0; t < len; t++, pos = (pos + 1) % b) {
        const double *qt = q + t * F, *kt = k + t * F, *vt = v + t * F, tk = tok[pos];
        /* the gradients of token t at the mini-batch's start W0 */
        for (j = 0; j < F1; j++) { z1[j] = b1[j]; for (i = 0; i < F; i++) z1[j] += kt[i] * W1[i * F1 + j]; }
        if (mlp) {
            for (j = 0; j < F1; j++) x2[j] = lattn__gelu_tanh_d(z1[j]);
            for (j = 0; j < F; j++) { z2[j] = b2[j]; for (i = 0; i < F1; i++) z2[j] += x2[i] * W2[i * F + j]; }
            lattn__ttt_grad_d(F, z2, vt, kt, gw, gb, g2);
            for (i = 0; i < F1; i++) {                    /* G1 = (G2 W2ᵀ) ∘ gelu'(z1) */
                g1[i] = 0;
                for (j = 0; j < F; j++) g1[i] += g2[j] * W2[i * F + j];
                g1[i] *= lattn__gelu_bwd_d(z1[i]);
            }
        } else lattn__ttt_grad_d(F, z1, vt, kt, gw, gb, g1);
        /* A += lr k Gᵀ per layer, a += lr G */
        for (i = 0; i < F; i++) for (j = 0; j < F1; j++) A1[i * F1 + j] += lr[t] * kt[i] * g1[j];
        for (j = 0; j < F1; j++) a1[j] += lr[t] * g1[j];
        for (i = 0; mlp && i < F1; i++) for (j = 0; j < F; j++) A2[i * F + j] += lr[t] * x2[i] * g2[j];
        for (j = 0; mlp && j < F; j++) a2[j] += lr[t] * g2[j];
        /* read with W_t = W0 - tok A */
        for (j = 0; j < F1; j++) {
            zb[j] = b1[j] - tk * a1[j];
            for (i = 0; i < F; i++) zb[j] += qt[i] * (W1[i * F1 + j] - tk * A1[i * F1 + j]);
        }
        if (mlp) {
            for (j = 0; j < F1; j++) x2[j] = lattn__gelu_tanh_d(zb[j]);
            for (j = 0; j < F; j++) {
                zb[j] = b2[j] - tk * a2[j];
                for (i = 0; i < F1; i++) zb[j] += x2[i] * (W2[i * F + j] - tk * A2[i * F + j]);
            }
        }
        {   /* o = q + LN(z̄) */
            double mu = 0, var = 0;
            for (j = 0; j < F; j++) mu += zb[j];
            mu /= (double)F;
            for (j = 0; j < F; j++) var += (zb[j] - mu) * (zb[j] - mu);
            var = sqrt(var / (double)F + LATTN__TTT_EPS);
            for (j = 0; j < F; j++) o[t * F + j] = qt[j] + ((double)gw[j] * ((zb[j] - mu) / var) + (double)gb[j]);
        }
        if (pos == b - 1)                                 /* the mini-batch closes: W0 = W_t, A = 0 */
            for (i = 0; i < P; i++) { s[i] -= tk * s[P + i]; s[P + i] = 0; }
    }
}
/* >>ttt.ref --------------------------------------------------------------------------------------
   per token: the gradient of ½|LN(z(k)) - (v - k)|² at the mini-batch's start weights W0, and
   the read o_i = q_i + LN(z_i(q_i)) under W_i = W0 - tok_i Σ_{j<=i} lr_j ∇_j, in double */
LATTN__DEF lattn_status lattn_ttt_ref(lattn_ctx *ctx, const lattn_ttt_args *a) {
    lattn__ttt_dims dm;
    int64_t sq, h, t, i, F, H;
    double *buf, *s, *q, *k, *v, *lr, *tok, *o, *tmp;
    size_t n;
    LATTN__TRY(lattn__ttt_check(ctx, "lattn_ttt_ref", a, &dm));
    F = dm.F;
    H = a->H;
    {   /* the longest sequence sets the buffers */
        int64_t mx = 0;
        for (sq = 0; sq < dm.n; sq++) { int64_t t0, len; lattn__seq(a->offsets, a->T, sq, &t0, &len); mx = LATTN__MAX(mx, len); }
        n = (size_t)(2 * dm.P + mx * (4 * F + 1) + dm.b + 4 * dm.F1 + 2 * F);
    }
    if (lattn_size_mul(&n, n, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, n)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "lattn_ttt_ref: cannot allocate the workspace");
    s = buf;
    tok = s + 2 * dm.P;
    tmp = tok + dm.b;
    for (i = 0; i < dm.b; i++) tok[i] = a->tok[i];
    for (sq = 0; sq < dm.n; sq++) {
        int64_t t0, len;
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        q = tmp + 4 * dm.F1 + 2 * F;
        k = q + len * F;
        v = k + len * F;
        o = v + len * F;
        lr = o + len * F;
        for (h = 0; h < H; h++) {
            const float *s0 = a->h0 + (sq * H + h) * 2 * dm.P;
            for (i = 0; i < 2 * dm.P; i++) s[i] = s0[i];
            for (t = 0; t < len; t++) {
                int64_t row = (t0 + t) * H + h;
                for (i = 0; i < F; i++) { q[t * F + i] = a->q[row * F + i]; k[t * F + i] = a->k[row * F + i]; v[t * F + i] = a->v[row * F + i]; }
                lr[t] = a->lr[row];
            }
            lattn__ttt_ref_head(F, a->mlp, dm.b, len, a->pos0 ? a->pos0[sq] : 0, q, k, v, lr, tok, a->ln_w + h * F, a->ln_b + h * F,
                                s, o, tmp);
            for (t = 0; t < len; t++) for (i = 0; i < F; i++) a->o[((t0 + t) * H + h) * F + i] = (float)o[t * F + i];
            for (i = 0; a->ht && i < 2 * dm.P; i++) a->ht[(sq * H + h) * 2 * dm.P + i] = (float)s[i];
        }
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* --- _step (the primal form) and _chunk (the dual form) in float32 ---------------------------- */
/* C [n][N] = A B (B [K][N]) or A Bᵀ (transb, B [N][K]); A rows lda apart. The SGEMM kernel, or for
   one or two rows (decoding) a single pass over B without packing it. */
static void lattn__ttt_mm(int transb, int64_t n, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                          float *C, float *ws) {
    int64_t i, j;
    if (n > 2) { lattn__sgemm(transb ? LATTN_GEMM_TRANS_B : 0, n, N, K, A, lda, B, transb ? K : N, C, N, ws); return; }
    for (i = 0; i < n; i++) {
        if (transb) for (j = 0; j < N; j++) C[i * N + j] = lattn_vec_dot((size_t)K, A + i * lda, B + j * K);
        else {
            memset(C + i * N, 0, (size_t)N * sizeof(float));
            for (j = 0; j < K; j++) lattn_vec_axpy((size_t)N, A[i * lda + j], B + j * N, C + i * N);
        }
    }
}
/* One inner linear layer (din -> dout) over n tokens of an open mini-batch: rows Xq (query side) and
   Xk (key side, where the gradients G were taken), learning rates lr[n], factors tok[n] (from the
   open position on); W0 [din][dout] then b0 [dout]; A, a the accumulated gradient, updated. Writes
   Z̄ [n][dout] = Xq W_i + b_i per row i. dual = 0: the primal per-token update; 1: the dual form.
   fresh: A, a are known to be zero (a mini-batch this call closed); the dual form skips their term. S: n·max(din, dout) floats,
   M: n·n, ws: the GEMM's packing. */
static void lattn__ttt_lin(int dual, int fresh, int64_t n, int64_t din, int64_t dout, const float *Xq, int64_t ldq,
                           const float *Xk, int64_t ldk, const float *G, const float *lr, const float *tok,
                           const float *W0, float *A, float *Zb, float *S, float *M, float *ws) {
    const float *b0 = W0 + din * dout;
    float *a = A + din * dout;
    int64_t i, j;
    lattn__ttt_mm(0, n, dout, din, Xq, ldq, W0, Zb, ws);                           /* Z̄ = Xq W0 + b0 */
    for (i = 0; i < n; i++) lattn_vec_axpy((size_t)dout, 1.0f, b0, Zb + i * dout);
    if (!dual) {
        for (i = 0; i < n; i++) {        /* per token, one pass over A: A += lr x Gᵀ, then S = xq A + a */
            lattn_vec_axpy((size_t)dout, lr[i], G + i * dout, a);
            memcpy(S, a, (size_t)dout * sizeof(float));
            for (j = 0; j < din; j++) {
                lattn_vec_axpy((size_t)dout, lr[i] * Xk[i * ldk + j], G + i * dout, A + j * dout);
                lattn_vec_axpy((size_t)dout, Xq[i * ldq + j], A + j * dout, S);
            }
            lattn_vec_axpy((size_t)dout, -tok[i], S, Zb + i * dout);                /* Z̄ -= tok S */
        }
        return;
    }
    if (!fresh) {                                                                   /* Z̄ -= tok ∘ (Xq A + a) */
        lattn__sgemm(0, n, dout, din, Xq, ldq, A, dout, S, dout, ws);
        for (i = 0; i < n; i++) {
            lattn_vec_axpy((size_t)dout, 1.0f, a, S + i * dout);
            lattn_vec_axpy((size_t)dout, -tok[i], S + i * dout, Zb + i * dout);
        }
    }
    lattn__sgemm(LATTN_GEMM_TRANS_B | LATTN_GEMM_LOWER, n, n, din, Xq, ldq, Xk, ldk, M, n, ws);   /* tril(Xq Xkᵀ) */
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) M[i * n + j] = j <= i ? -tok[i] * lr[j] * (M[i * n + j] + 1.0f) : 0.0f;
    lattn__sgemm(LATTN_GEMM_ACCUMULATE, n, dout, n, M, n, G, dout, Zb, dout, ws);  /* Z̄ -= (η∘(Att + 1)) G */
    for (i = 0; i < n; i++) {                                                       /* A += (lr ∘ Xk)ᵀ G */
        for (j = 0; j < din; j++) S[i * din + j] = lr[i] * Xk[i * ldk + j];
        lattn_vec_axpy((size_t)dout, lr[i], G + i * dout, a);
    }
    lattn__sgemm(LATTN_GEMM_TRANS_A | LATTN_GEMM_ACCUMULATE, din, dout, n, S, din, G, dout, A, dout, ws);
}
/* Floats of one (sequence, head) run's workspace. */
static size_t lattn__ttt_ws(const lattn__ttt_dims *dm) {
    int64_t b = dm->b, F = dm->F, F1 = dm->F1, mx = LATTN__MAX(F1, b);
    return (size_t)(2 * dm->P + b + 4 * b * F1 + 3 * b * F + b * b) + lattn__gemm_ws(mx, mx);
}
/* One head of one sequence over len tokens from position pos; s [2P] the state, updated. */
static void lattn__ttt_head(const lattn_ttt_args *a, const lattn__ttt_dims *dm, int dual, int64_t t0, int64_t len, int64_t pos,
                            int64_t h, float *s, float *w) {
    const int64_t H = a->H, F = dm->F, F1 = dm->F1, P = dm->P, b = dm->b, ld = H * F;
    const float *gw = a->ln_w + h * F, *gb = a->ln_b + h * F;
    float *W1 = s, *W2 = s + F * F1 + F1, *A1 = s + P, *A2 = A1 + F * F1 + F1;
    float *lr = w, *Z1 = lr + b, *X2 = Z1 + b * F1, *G1 = X2 + b * F1, *S = G1 + b * F1, *Z2 = S + b * F1, *G2 = Z2 + b * F;
    float *O = G2 + b * F, *M = O + b * F, *ws = M + b * b;
    int64_t t = 0, i;
    while (t < len) {
        const int64_t n = LATTN__MIN(b - pos, len - t), row = (t0 + t) * H + h;
        const float *Q = a->q + row * F, *K = a->k + row * F, *V = a->v + row * F;
        float *Zk = a->mlp ? Z2 : Z1, *Gk = a->mlp ? G2 : G1;
        for (i = 0; i < n; i++) lr[i] = a->lr[row + i * H];
        /* the key side at W0: Z1 = K W1 + b1 (TTT-MLP: X2 = gelu(Z1), Z2 = X2 W2 + b2) and the gradients */
        lattn__ttt_mm(0, n, F1, F, K, ld, W1, Z1, ws);
        for (i = 0; i < n; i++) lattn_vec_axpy((size_t)F1, 1.0f, W1 + F * F1, Z1 + i * F1);
        if (a->mlp) {
            lattn__gelu_tanh_n((size_t)(n * F1), Z1, X2, X2);
            lattn__ttt_mm(0, n, F, F1, X2, F1, W2, Z2, ws);
            for (i = 0; i < n; i++) lattn_vec_axpy((size_t)F, 1.0f, W2 + F1 * F, Z2 + i * F);
        }
        for (i = 0; i < n; i++) lattn__ttt_grad(F, Zk + i * F, V + i * ld, K + i * ld, gw, gb, Gk + i * F, S);
        if (a->mlp) {                                                    /* G1 = (G2 W2ᵀ) ∘ gelu'(Z1) */
            lattn__ttt_mm(1, n, F1, F, G2, F, W2, G1, ws);
            lattn__gelu_bwd_mul_n((size_t)(n * F1), Z1, G1, S);
        }
        /* the query side: Z̄1 under W_i (TTT-MLP: then Z̄2 from gelu(Z̄1) under W2_i) */
        lattn__ttt_lin(dual, pos == 0 && t > 0, n, F, F1, Q, ld, K, ld, G1, lr, a->tok + pos, W1, A1, Z1, S, M, ws);
        if (a->mlp) {
            lattn__gelu_tanh_n((size_t)(n * F1), Z1, Z1, S);
            lattn__ttt_lin(dual, pos == 0 && t > 0, n, F1, F, Z1, F1, X2, F1, G2, lr, a->tok + pos, W2, A2, O, S, M, ws);
        }
        for (i = 0; i < n; i++) lattn__ttt_out(F, (a->mlp ? O : Z1) + i * F, Q + i * ld, gw, gb, a->o + row * F + i * ld, S);
        if (pos + n == b) {                                              /* the mini-batch closes */
            lattn_vec_axpy((size_t)P, -a->tok[b - 1], s + P, s);
            memset(s + P, 0, (size_t)P * sizeof(float));
        }
        pos = (pos + n) % b;
        t += n;
    }
}
static lattn_status lattn__ttt_run(lattn_ctx *ctx, const lattn_ttt_args *a, int dual, const char *who) {
    lattn__ttt_dims dm;
    int nthr = lattn__threads(ctx);
    int64_t pr, np;
    size_t per, n;
    float *ws;
    LATTN__TRY(lattn__ttt_check(ctx, who, a, &dm));
    per = lattn__ttt_ws(&dm);
    if (lattn_size_mul(&n, per, (size_t)nthr) != LATTN_OK) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: workspace overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, n, who));
    np = dm.n * a->H;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (pr = 0; pr < np; pr++) {
        const int64_t sq = pr / a->H, h = pr % a->H;
        float *w = ws + per * (size_t)lattn__thread_id(), *s = a->ht ? a->ht + pr * 2 * dm.P : w;   /* in place */
        int64_t t0, len;
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        if (s != a->h0 + pr * 2 * dm.P) memcpy(s, a->h0 + pr * 2 * dm.P, (size_t)(2 * dm.P) * sizeof(float));
        lattn__ttt_head(a, &dm, dual, t0, len, a->pos0 ? a->pos0[sq] : 0, h, s, w + 2 * dm.P);
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}
/* >>ttt.chunk ------------------------------------------------------------------------------------
   the dual form: Z̄ = Q W0 + b0 - tok ∘ (Q A + a) - (η ∘ tril(Q Xᵀ)) G - tril(η) G per mini-batch,
   A += (lr ∘ X)ᵀ G; the per-token weights never formed */
LATTN__DEF lattn_status lattn_ttt_chunk(lattn_ctx *ctx, const lattn_ttt_args *a) { return lattn__ttt_run(ctx, a, 1, "lattn_ttt_chunk"); }
/* >>ttt.step -------------------------------------------------------------------------------------
   the primal form: A += lr_j x_jᵀ G_j per token (rank one), the read q (W0 - tok_i A) */
LATTN__DEF lattn_status lattn_ttt_step(lattn_ctx *ctx, const lattn_ttt_args *a) { return lattn__ttt_run(ctx, a, 0, "lattn_ttt_step"); }

#ifndef LATTN_NO_MODELS
/* ---- the layer ---------------------------------------------------------------------------------- */
/* the transformer's RMSNorms (>>transformer implementation), for the Block */
static void lattn__rmsnorm_d(int64_t n, const double *x, const float *g, double eps, double *y);
static void lattn__rmsnorm_rows(int nthr, int64_t M, int64_t n, const float *X, const float *g, float eps, float *Y);
enum { LATTN__TT_Q, LATTN__TT_K, LATTN__TT_V, LATTN__TT_O, LATTN__TT_LRW, LATTN__TT_LRB, LATTN__TT_TOK, LATTN__TT_LNW,
       LATTN__TT_LNB, LATTN__TT_W1, LATTN__TT_B1, LATTN__TT_W2, LATTN__TT_B2, LATTN__TT_PW, LATTN__TT_PB, LATTN__TT_G,
       LATTN__TT_SN, LATTN__TT_FN, LATTN__TT_GATE, LATTN__TT_UP, LATTN__TT_DOWN, LATTN__TT_N };   /* from SN: the Block's */
static const char *const lattn__tt_names[LATTN__TT_N] = {
    "q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight", "learnable_ttt_lr_weight", "learnable_ttt_lr_bias",
    "learnable_token_idx", "ttt_norm_weight", "ttt_norm_bias", "W1", "b1", "W2", "b2", "post_norm.weight", "post_norm.bias",
    "g_proj.weight", "seq_norm.weight", "ffn_norm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight" };
/* A tensor's name in a file: prefix, then (in a Block) the TTT layer's own under seq_modeling_block. */
static void lattn__tt_name(char *buf, size_t cap, const char *prefix, int block, int i) {
    snprintf(buf, cap, "%s%s%s", prefix, block && i < LATTN__TT_SN ? "seq_modeling_block." : "", lattn__tt_names[i]);
}
LATTN__DEF lattn_ttt_config lattn_ttt_config_default(void) {
    lattn_ttt_config c;
    memset(&c, 0, sizeof c);
    c.D = 2048;
    c.H = 32;
    c.mini_batch = 16;
    c.base_lr = 1.0;
    c.rope_theta = 10000.0;
    return c;
}
static lattn_status lattn__tt_check_cfg(lattn_ctx *ctx, const char *who, const lattn_ttt_config *c) {
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: configuration is NULL", who);
    if (c->D < 2 || c->H < 1 || c->D > (1 << 16) || c->D % c->H || (c->D / c->H) % 2 || c->mini_batch < 1 ||
        c->mini_batch > LATTN__TTT_MAXB || (c->mlp != 0 && c->mlp != 1) || (c->use_gate != 0 && c->use_gate != 1) ||
        !(fabs(c->base_lr) <= DBL_MAX) || !(c->rope_theta > 0 && c->rope_theta <= DBL_MAX) || c->ffn < 0 || c->ffn > (1 << 20))
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: D = %lld, H = %lld (must divide D into even heads), mini_batch = %lld, "
                           "mlp = %d, use_gate = %d, base_lr = %g, rope_theta = %g, ffn = %lld", who, (long long)c->D, (long long)c->H,
                           (long long)c->mini_batch, c->mlp, c->use_gate, c->base_lr, c->rope_theta, (long long)c->ffn);
    return LATTN_OK;
}
/* The official shapes { ndim, d0, d1, d2 } (ndim 0: not in this configuration). */
static void lattn__tt_shapes(const lattn_ttt_config *c, int64_t w[LATTN__TT_N][4]) {
    const int64_t D = c->D, H = c->H, F = D / H, F1 = c->mlp ? 4 * F : F;
    static const signed char nd[LATTN__TT_N] = { 2, 2, 2, 2, 3, 2, 1, 2, 2, 3, 3, 3, 3, 1, 1, 2, 1, 1, 2, 2, 2 };
    const int64_t d[LATTN__TT_N][3] = { { D, D, 0 }, { D, D, 0 }, { D, D, 0 }, { D, D, 0 }, { H, 1, D }, { H, 1, 0 },
                                        { c->mini_batch, 0, 0 }, { H, F, 0 }, { H, F, 0 }, { H, F, F1 }, { H, 1, F1 },
                                        { H, F1, F }, { H, 1, F }, { D, 0, 0 }, { D, 0, 0 }, { D, D, 0 },
                                        { D, 0, 0 }, { D, 0, 0 }, { c->ffn, D, 0 }, { c->ffn, D, 0 }, { D, c->ffn, 0 } };
    int i;
    for (i = 0; i < LATTN__TT_N; i++) {
        int on = (i != LATTN__TT_W2 && i != LATTN__TT_B2) || c->mlp;
        on = on && (i != LATTN__TT_G || c->use_gate) && (i < LATTN__TT_SN || c->ffn > 0);
        w[i][0] = on ? nd[i] : 0;
        w[i][1] = d[i][0];
        w[i][2] = d[i][1];
        w[i][3] = d[i][2];
    }
}
static int64_t lattn__tt_count(const int64_t *w) {
    int64_t n = w[0] ? 1 : 0, d;
    for (d = 1; d <= w[0]; d++) n *= w[d];
    return n;
}
/* The tensor table (the tensors of this configuration, under their names in a file: the Block's
   TTT layer under seq_modeling_block.) and the arena for a checked configuration, every named view
   bound (NULL when absent). */
static lattn_status lattn__tt_alloc(lattn_ctx *ctx, lattn_ttt_layer *m, const lattn_ttt_config *c, int64_t w[LATTN__TT_N][4],
                                    const char *who) {
    float **view[LATTN__TT_N];
    int64_t nt = 0;
    int i, d;
    memset(m, 0, sizeof *m);
    LATTN__TRY(lattn__tt_check_cfg(ctx, who, c));
    lattn__tt_shapes(c, w);
    view[0] = &m->q_w;
    view[1] = &m->k_w;
    view[2] = &m->v_w;
    view[3] = &m->o_w;
    view[4] = &m->lr_w;
    view[5] = &m->lr_b;
    view[6] = &m->tok_idx;
    view[7] = &m->ln_w;
    view[8] = &m->ln_b;
    view[9] = &m->W1;
    view[10] = &m->b1;
    view[11] = &m->W2;
    view[12] = &m->b2;
    view[13] = &m->post_w;
    view[14] = &m->post_b;
    view[15] = &m->g_w;
    view[16] = &m->seq_norm;
    view[17] = &m->ffn_norm;
    view[18] = &m->gate_w;
    view[19] = &m->up_w;
    view[20] = &m->down_w;
    LATTN__TRY(lattn__table_new(ctx, who, LATTN__TT_N, 0, &m->tensors));
    for (i = 0; i < LATTN__TT_N; i++) {
        lattn_tensor *t = &m->tensors[nt];
        if (!w[i][0]) continue;
        lattn__tt_name(t->name, sizeof t->name, "", c->ffn > 0, i);
        t->ndim = (int)w[i][0];
        for (d = 0; d < t->ndim; d++) t->shape[d] = w[i][d + 1];
        nt++;
    }
    if (lattn__arena_bind(ctx, who, m->tensors, nt, &m->arena, &m->n_params) != LATTN_OK) {
        m->tensors = NULL;                /* released by the bind */
        return LATTN_E_NOMEM;
    }
    m->n_tensors = nt;
    for (i = 0, nt = 0; i < LATTN__TT_N; i++) *view[i] = w[i][0] ? m->tensors[nt++].data : NULL;
    m->cfg = *c;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_ttt_layer_init(lattn_ctx *ctx, lattn_ttt_layer *m, const lattn_ttt_config *c, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    int64_t w[LATTN__TT_N][4];
    float *p;
    int i;
    if (!m) return lattn__fail(ctx, LATTN_E_NULL, "lattn_ttt_layer_init: NULL layer");
    LATTN__TRY(lattn__tt_alloc(ctx, m, c, w, "lattn_ttt_layer_init"));
    for (i = 0, p = m->arena; i < LATTN__TT_N; i++) {   /* matrices N(0, 0.02²); LN weights 1; the rest 0 */
        size_t n = (size_t)lattn__tt_count(w[i]), j;
        if (w[i][0] >= 2 && i != LATTN__TT_LRB && i != LATTN__TT_LNW && i != LATTN__TT_LNB && i != LATTN__TT_B1 && i != LATTN__TT_B2)
            lattn_rng_fill_normal(&r, p, n, 0.0f, 0.02f);
        else for (j = 0; j < n; j++) p[j] = (i == LATTN__TT_LNW || i == LATTN__TT_PW || i == LATTN__TT_SN || i == LATTN__TT_FN) ? 1.0f : 0.0f;
        p += n;
    }
    return lattn__ok(ctx);
}
LATTN__DEF void lattn_ttt_layer_free(lattn_ctx *ctx, lattn_ttt_layer *m) {
    if (!m) return;
    lattn__free(ctx, m->arena);
    lattn__free(ctx, m->tensors);
    memset(m, 0, sizeof *m);
}
LATTN__DEF lattn_tensor *lattn_ttt_layer_tensor(const lattn_ttt_layer *m, const char *name) {
    return m ? lattn__arena_find(m->tensors, m->n_tensors, name) : NULL;
}
LATTN__DEF lattn_status lattn_ttt_layer_init_st(lattn_ctx *ctx, lattn_ttt_layer *m, const lattn_st_file *f, const char *prefix) {
    const char *who = "lattn_ttt_layer_init_st";
    const lattn_st_tensor *t[LATTN__TT_N];
    lattn_ttt_config c = lattn_ttt_config_default();
    int64_t w[LATTN__TT_N][4];
    char name[2 * LATTN_NAME_MAX];
    int i, block;
    lattn_status st;
    if (!m || !f) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    memset(m, 0, sizeof *m);
    if (!prefix) prefix = "";
    if (strlen(prefix) >= LATTN_NAME_MAX) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: prefix too long", who);
    lattn__tt_name(name, sizeof name, prefix, 0, LATTN__TT_SN);
    block = lattn_st_find(f, name) != NULL;
    for (i = 0; i < LATTN__TT_N; i++) {
        lattn__tt_name(name, sizeof name, prefix, block, i);
        t[i] = lattn_st_find(f, name);
        if (!t[i] && i != LATTN__TT_W2 && i != LATTN__TT_B2 && i != LATTN__TT_G && (i < LATTN__TT_SN || block))
            return lattn__fail(ctx, LATTN_E_FORMAT, "%s: missing tensor '%s'", who, name);
        if (t[i] && (t[i]->dtype == LATTN_DTYPE_I32 || t[i]->dtype == LATTN_DTYPE_I64))
            return lattn__fail(ctx, LATTN_E_FORMAT, "%s: '%s' is not a float tensor", who, name);
    }
    if (t[LATTN__TT_Q]->ndim != 2 || t[LATTN__TT_LNW]->ndim != 2 || t[LATTN__TT_TOK]->ndim != 1)
        return lattn__fail(ctx, LATTN_E_FORMAT, "%s: unexpected ranks", who);
    c.D = t[LATTN__TT_Q]->shape[1];
    c.H = t[LATTN__TT_LNW]->shape[0];
    c.mini_batch = t[LATTN__TT_TOK]->shape[0];
    c.mlp = t[LATTN__TT_W2] != NULL;
    c.use_gate = t[LATTN__TT_G] != NULL;
    c.ffn = block && t[LATTN__TT_GATE]->ndim == 2 ? t[LATTN__TT_GATE]->shape[0] : 0;
    if (block && c.ffn < 1) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: the Block's mlp.gate_proj.weight must be [ffn][D]", who);
    {
        const char *keys[2] = { "ttt.base_lr", "ttt.rope_theta" };
        double *vals[2];
        vals[0] = &c.base_lr;
        vals[1] = &c.rope_theta;
        for (i = 0; i < 2; i++) {
            const char *v = lattn_st_meta(f, keys[i]);
            char *end = NULL;
            if (!v) continue;
            errno = 0;
            *vals[i] = strtod(v, &end);
            if (end == v || *end != '\0' || errno || !isfinite(*vals[i])) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: metadata \"%s\" = \"%s\" is not a number", who, keys[i], v);
        }
    }
    if ((st = lattn__tt_alloc(ctx, m, &c, w, who)) != LATTN_OK) return lattn__as_format(ctx, st);
    if ((st = lattn__arena_load(ctx, who, m->tensors, m->n_tensors, f, prefix)) != LATTN_OK) {
        lattn_ttt_layer_free(ctx, m);
        return st;
    }
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_ttt_layer_serialize(lattn_ctx *ctx, const lattn_ttt_layer *m, unsigned char **out, size_t *size) {
    lattn__cfield fl[2];
    lattn_ttt_config c;
    if (!m || !m->tensors || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "lattn_ttt_layer_serialize: NULL argument");
    c = m->cfg;
    memset(fl, 0, sizeof fl);
    fl[0].key = "ttt.base_lr";
    fl[0].d = &c.base_lr;
    fl[1].key = "ttt.rope_theta";
    fl[1].d = &c.rope_theta;
    return lattn__arena_serialize(ctx, "lattn_ttt_layer_serialize", m->tensors, m->n_tensors, fl, 2, out, size);
}
#ifndef LATTN_NO_STDIO
LATTN__MODEL_FILES(ttt_layer, lattn_ttt_layer)
#endif
static int64_t lattn__ttt_state_floats(const lattn_ttt_config *c) {
    if (lattn__tt_check_cfg(NULL, "", c) != LATTN_OK) return -1;
    return c->H * 2 * lattn__ttt_p(c->D / c->H, c->mlp) + 1;
}
LATTN__DEF lattn_status lattn_ttt_state_floats(const lattn_ttt_config *c, size_t *out) {
    return lattn__size_out(lattn__ttt_state_floats(c), out);
}
LATTN__DEF void lattn_ttt_layer_state_init(const lattn_ttt_layer *m, float *state) {
    const int64_t H = m->cfg.H, F = m->cfg.D / H, F1 = m->cfg.mlp ? 4 * F : F, P = lattn__ttt_p(F, m->cfg.mlp);
    int64_t h;
    for (h = 0; h < H; h++) {
        float *s = state + h * 2 * P;
        memcpy(s, m->W1 + h * F * F1, (size_t)(F * F1) * sizeof(float));
        memcpy(s + F * F1, m->b1 + h * F1, (size_t)F1 * sizeof(float));
        if (m->cfg.mlp) {
            memcpy(s + F * F1 + F1, m->W2 + h * F1 * F, (size_t)(F1 * F) * sizeof(float));
            memcpy(s + 2 * F * F1 + F1, m->b2 + h * F, (size_t)F * sizeof(float));
        }
        memset(s + P, 0, (size_t)P * sizeof(float));
    }
    state[H * 2 * P] = 0.0f;
}
/* Arguments of a layer call; the open mini-batch positions of the states must be integers in [0, b). */
static lattn_status lattn__tt_args(lattn_ctx *ctx, const char *who, const lattn_ttt_layer *m, int64_t B, int64_t T,
                                   const float *x, const float *y, const float *state) {
    int64_t d[3], b, SF;
    if (!m || !m->arena || !x || !y) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    if (B < 1 || T < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld", who, (long long)B, (long long)T);
    d[0] = B;
    d[1] = LATTN__MAX(T, 1);
    d[2] = 6 * m->cfg.D + 2 * m->cfg.H;
    LATTN__TRY(lattn__check_count(ctx, who, "the activations", 3, d));
    SF = lattn__ttt_state_floats(&m->cfg);
    d[0] = B;
    d[1] = SF;
    LATTN__TRY(lattn__check_count(ctx, who, "the states", 2, d));
    for (b = 0; state && b < B; b++) {
        float p = state[b * SF + SF - 1];
        if (!(p >= 0.0f && p < (float)m->cfg.mini_batch && p == (float)(int64_t)p))
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: state %lld has position %g (must be an integer in [0, %lld))", who,
                               (long long)b, (double)p, (long long)m->cfg.mini_batch);
    }
    return LATTN_OK;
}
/* RoPE's angle of pair i at position p in a head of F (the official inv_freq θ^(-2i/F)). */
static double lattn__tt_angle(const lattn_ttt_config *c, int64_t p, int64_t i) {
    return (double)p * pow(c->rope_theta, -2.0 * (double)i / (double)(c->D / c->H));
}

LATTN__DEF lattn_status lattn_ttt_layer_forward_ref(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, int64_t T,
                                                    const float *x, float *y, float *state, double *y64) {
    const char *who = "lattn_ttt_layer_forward_ref";
    int64_t D, H, F, P, mb, SF, b, t, h, i, j;
    double *buf, *X, *Q, *K, *V, *O, *LR, *qh, *kh, *vh, *oh, *lrh, *s, *tok, *tmp, *row, *g, *yr, *fr, *dr, *gv, *uv;
    size_t n;
    LATTN__TRY(lattn__tt_args(ctx, who, m, B, T, x, y, state));
    D = m->cfg.D;
    H = m->cfg.H;
    F = D / H;
    mb = m->cfg.mini_batch;
    P = lattn__ttt_p(F, m->cfg.mlp);
    SF = lattn__ttt_state_floats(&m->cfg);
    n = (size_t)(T * (6 * D + 2 * H + 4 * F + 1) + 2 * P + mb + 4 * (m->cfg.mlp ? 4 * F : F) + 2 * F + 5 * D + 2 * m->cfg.ffn);
    if (lattn_size_mul(&n, n, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, n)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    X = buf;
    Q = X + T * D;
    K = Q + T * D;
    V = K + T * D;
    O = V + T * D;
    LR = O + T * D;
    qh = LR + T * H;
    kh = qh + T * F;
    vh = kh + T * F;
    oh = vh + T * F;
    lrh = oh + T * F;
    s = lrh + T;
    tok = s + 2 * P;
    row = tok + mb;
    g = row + D;
    yr = g + D;
    fr = yr + D;
    dr = fr + D;
    gv = dr + D;
    uv = gv + m->cfg.ffn;
    tmp = uv + m->cfg.ffn;
    for (i = 0; i < mb; i++) tok[i] = LATTN__MAX(0.0, 1.0 / (double)(i + 1) + (double)m->tok_idx[i]);
    for (b = 0; b < B; b++) {
        float *sb = state ? state + b * SF : NULL;
        const int64_t pos0 = sb ? (int64_t)sb[SF - 1] : 0;
        for (t = 0; t < T; t++) {                        /* projections, learning rates, RoPE at (t mod b) */
            double *xt = X + t * D;
            for (i = 0; i < D; i++) xt[i] = x[(b * T + t) * D + i];
            if (m->cfg.ffn) lattn__rmsnorm_d(D, xt, m->seq_norm, LATTN__TTT_EPS, xt);   /* the Block's seq_norm */
            lattn__matvec_d(D, D, m->q_w, xt, Q + t * D, 0);
            lattn__matvec_d(D, D, m->k_w, xt, K + t * D, 0);
            lattn__matvec_d(D, D, m->v_w, xt, V + t * D, 0);
            lattn__matvec_d(H, D, m->lr_w, xt, LR + t * H, 0);
            for (h = 0; h < H; h++)
                LR[t * H + h] = m->cfg.base_lr * lattn__sigmoid_d(LR[t * H + h] + (double)m->lr_b[h]) / (double)F;
            for (h = 0; h < H; h++)
                for (i = 0; i < F / 2; i++) {
                    double an = lattn__tt_angle(&m->cfg, (pos0 + t) % mb, i), c = cos(an), sn = sin(an);
                    double *u = Q + t * D + h * F + 2 * i, *w = K + t * D + h * F + 2 * i, u0 = u[0], w0 = w[0];
                    u[0] = u0 * c - u[1] * sn;
                    u[1] = u[1] * c + u0 * sn;
                    w[0] = w0 * c - w[1] * sn;
                    w[1] = w[1] * c + w0 * sn;
                }
        }
        for (h = 0; h < H; h++) {                        /* the inner loop, head by head */
            const float *s0 = sb ? sb + h * 2 * P : NULL;
            for (t = 0; t < T; t++) {
                for (i = 0; i < F; i++) { qh[t * F + i] = Q[t * D + h * F + i]; kh[t * F + i] = K[t * D + h * F + i]; vh[t * F + i] = V[t * D + h * F + i]; }
                lrh[t] = LR[t * H + h];
            }
            if (s0) for (i = 0; i < 2 * P; i++) s[i] = s0[i];
            else {
                const int64_t F1 = m->cfg.mlp ? 4 * F : F;
                for (i = 0; i < F * F1; i++) s[i] = m->W1[h * F * F1 + i];
                for (i = 0; i < F1; i++) s[F * F1 + i] = m->b1[h * F1 + i];
                for (i = 0; m->cfg.mlp && i < F1 * F; i++) s[F * F1 + F1 + i] = m->W2[h * F1 * F + i];
                for (i = 0; m->cfg.mlp && i < F; i++) s[2 * F * F1 + F1 + i] = m->b2[h * F + i];
                for (i = 0; i < P; i++) s[P + i] = 0;
            }
            lattn__ttt_ref_head(F, m->cfg.mlp, mb, T, pos0, qh, kh, vh, lrh, tok, m->ln_w + h * F, m->ln_b + h * F, s, oh, tmp);
            for (t = 0; t < T; t++) for (i = 0; i < F; i++) O[t * D + h * F + i] = oh[t * F + i];
            for (i = 0; sb && i < 2 * P; i++) sb[h * 2 * P + i] = (float)s[i];
        }
        for (t = 0; t < T; t++) {                        /* post_norm, the gate, o_proj */
            lattn__layernorm_d(D, O + t * D, m->post_w, m->post_b, LATTN__TTT_EPS, row);
            if (m->cfg.use_gate) {
                lattn__matvec_d(D, D, m->g_w, X + t * D, g, 0);
                for (i = 0; i < D; i++) row[i] *= lattn__gelu_tanh_d(g[i]);
            }
            lattn__matvec_d(D, D, m->o_w, row, yr, 0);
            if (m->cfg.ffn) {            /* the Block: h = x + TTT(..), y = h + W_down(SiLU(W_gate f) ⊙ W_up f) */
                const int64_t Fn = m->cfg.ffn;
                for (j = 0; j < D; j++) yr[j] += (double)x[(b * T + t) * D + j];
                lattn__rmsnorm_d(D, yr, m->ffn_norm, LATTN__TTT_EPS, fr);
                lattn__matvec_d(Fn, D, m->gate_w, fr, gv, 0);
                lattn__matvec_d(Fn, D, m->up_w, fr, uv, 0);
                for (j = 0; j < Fn; j++) gv[j] = lattn__silu_d(gv[j]) * uv[j];
                lattn__matvec_d(D, Fn, m->down_w, gv, dr, 0);
                for (j = 0; j < D; j++) yr[j] += dr[j];
            }
            for (j = 0; j < D; j++) {
                y[(b * T + t) * D + j] = (float)yr[j];
                if (y64) y64[(b * T + t) * D + j] = yr[j];
            }
        }
        if (sb) sb[SF - 1] = (float)((pos0 + T) % mb);
    }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

/* The float32 TTT layer: threaded GEMMs around lattn_ttt_chunk (form CHUNK) or lattn_ttt_step (STEP). */
static lattn_status lattn__tt_forward(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, int64_t T,
                                      const float *x, float *y, float *state, lattn_form form, const char *who) {
    int nthr = lattn__threads(ctx);
    int64_t D, H, F, mb, SF, M, b, t, h, i, *pos;
    float *buf, *Q, *K, *V, *O, *G, *LR, *S, *tok, *cs, *ws;
    lattn_ttt_args a = LATTN__ZERO;
    lattn_status st;
    size_t n;
    LATTN__TRY(lattn__tt_args(ctx, who, m, B, T, x, y, state));
    D = m->cfg.D;
    H = m->cfg.H;
    F = D / H;
    mb = m->cfg.mini_batch;
    SF = lattn__ttt_state_floats(&m->cfg);
    M = B * T;
    n = (size_t)(2 * B + M * (5 * D + H) + B * SF + mb + mb * F) + (size_t)nthr * LATTN__LIN_WS(D);
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, n, who));
    pos = (int64_t *)(void *)buf;                        /* first: the allocation's alignment */
    Q = buf + 2 * B;
    K = Q + M * D;
    V = K + M * D;
    O = V + M * D;
    G = O + M * D;
    LR = G + M * D;
    S = LR + M * H;
    tok = S + B * SF;
    cs = tok + mb;
    ws = cs + mb * F;
    lattn__linear(nthr, M, D, D, x, m->q_w, Q, 0, ws);
    lattn__linear(nthr, M, D, D, x, m->k_w, K, 0, ws);
    lattn__linear(nthr, M, D, D, x, m->v_w, V, 0, ws);
    lattn__linear(nthr, M, H, D, x, m->lr_w, LR, 0, ws);
    for (i = 0; i < M * H; i++) {
        double z = (double)(LR[i] + m->lr_b[i % H]);
        LR[i] = (float)(m->cfg.base_lr * (1.0 / (1.0 + exp(-z))) / (double)F);
    }
    for (t = 0; t < mb; t++) {                           /* tok, and cos / sin of every position mod b */
        tok[t] = LATTN__MAX(0.0f, 1.0f / (float)(t + 1) + m->tok_idx[t]);
        for (i = 0; i < F / 2; i++) {
            double an = lattn__tt_angle(&m->cfg, t, i);
            cs[t * F + 2 * i] = (float)cos(an);
            cs[t * F + 2 * i + 1] = (float)sin(an);
        }
    }
    for (b = 0; b < B; b++) {
        pos[b] = state ? (int64_t)state[b * SF + SF - 1] : 0;
        if (state) memcpy(S + b * (SF - 1), state + b * SF, (size_t)(SF - 1) * sizeof(float));
        else lattn_ttt_layer_state_init(m, S + b * (SF - 1));
        for (t = 0; t < T; t++) {
            const float *c = cs + ((pos[b] + t) % mb) * F;
            for (h = 0; h < H; h++)
                for (i = 0; i < F; i += 2) {
                    float *u = Q + (b * T + t) * D + h * F + i, *w = K + (b * T + t) * D + h * F + i, u0 = u[0], w0 = w[0];
                    u[0] = u0 * c[i] - u[1] * c[i + 1];
                    u[1] = u[1] * c[i] + u0 * c[i + 1];
                    w[0] = w0 * c[i] - w[1] * c[i + 1];
                    w[1] = w[1] * c[i] + w0 * c[i + 1];
                }
        }
    }
    a.B = B;
    a.T = T;
    a.H = H;
    a.K = F;
    a.mlp = m->cfg.mlp;
    a.mini_batch = mb;
    a.q = Q;
    a.k = K;
    a.v = V;
    a.lr = LR;
    a.tok = tok;
    a.ln_w = m->ln_w;
    a.ln_b = m->ln_b;
    a.h0 = S;
    a.pos0 = pos;
    a.o = O;
    a.ht = S;
    st = form == LATTN_FORM_STEP ? lattn_ttt_step(ctx, &a) : lattn_ttt_chunk(ctx, &a);
    if (st == LATTN_OK) {
        lattn__layernorm_rows(nthr, M, D, O, m->post_w, m->post_b, (float)LATTN__TTT_EPS, Q);
        if (m->cfg.use_gate) {
            lattn__linear(nthr, M, D, D, x, m->g_w, G, 0, ws);
            lattn__gelu_tanh_n((size_t)(M * D), G, G, O);
            for (i = 0; i < M * D; i++) Q[i] *= G[i];
        }
        lattn__linear(nthr, M, D, D, Q, m->o_w, y, 0, ws);
        for (b = 0; state && b < B; b++) {
            memcpy(state + b * SF, S + b * (SF - 1), (size_t)(SF - 1) * sizeof(float));
            state[b * SF + SF - 1] = (float)((pos[b] + T) % mb);
        }
    }
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
/* The layer, or the Block around it (ffn > 0): RMSNorm, the layer, residual; RMSNorm, SwiGLU, residual.
   form: CHUNK (the inner loop's dual form) or STEP (its primal form). */
static lattn_status lattn__ttt_layer_run(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, int64_t T, const float *x,
                                         float *y, float *state, lattn_form form, const char *who) {
    int nthr = lattn__threads(ctx);
    int64_t D, Fn, M, i;
    float *buf, *Hn, *G, *U, *ws;
    lattn_status st;
    LATTN__TRY(lattn__tt_args(ctx, who, m, B, T, x, y, state));
    if (m->cfg.ffn == 0) return lattn__tt_forward(ctx, m, B, T, x, y, state, form, who);
    D = m->cfg.D;
    Fn = m->cfg.ffn;
    M = B * T;
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, (size_t)(M * (D + 2 * Fn)) + (size_t)nthr * LATTN__LIN_WS(LATTN__MAX(D, Fn)), who));
    Hn = buf;
    G = Hn + M * D;
    U = G + M * Fn;
    ws = U + M * Fn;
    lattn__rmsnorm_rows(nthr, M, D, x, m->seq_norm, (float)LATTN__TTT_EPS, Hn);
    st = lattn__tt_forward(ctx, m, B, T, Hn, y, state, form, who);
    if (st == LATTN_OK) {
        for (i = 0; i < M * D; i++) y[i] += x[i];                    /* h = x + TTT(seq_norm(x)) */
        lattn__rmsnorm_rows(nthr, M, D, y, m->ffn_norm, (float)LATTN__TTT_EPS, Hn);
        lattn__linear(nthr, M, Fn, D, Hn, m->gate_w, G, 0, ws);
        lattn__linear(nthr, M, Fn, D, Hn, m->up_w, U, 0, ws);
        lattn_vec_silu((size_t)(M * Fn), G, G);
        for (i = 0; i < M * Fn; i++) G[i] *= U[i];
        lattn__linear(nthr, M, D, Fn, G, m->down_w, y, 1, ws);     /* y = h + SwiGLU(ffn_norm(h)) */
    }
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_ttt_layer_forward(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, int64_t T,
                                                const float *x, float *y, float *state) {
    return lattn__ttt_layer_run(ctx, m, B, T, x, y, state, LATTN_FORM_CHUNK, "lattn_ttt_layer_forward");
}
LATTN__DEF lattn_status lattn_ttt_layer_step(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, const float *x,
                                             float *y, float *state) {
    if (!state) return lattn__fail(ctx, LATTN_E_NULL, "lattn_ttt_layer_step: state is NULL");
    return lattn__ttt_layer_run(ctx, m, B, 1, x, y, state, LATTN_FORM_STEP, "lattn_ttt_layer_step");
}

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>attn implementation                                                                            */
/* ================================================================================================ */
#define LATTN__ATTN_MAX_KT 4              /* head dims up to 4 partition tiles (512 on a NeuronCore) */
#define LATTN__ATTN_CPU_TILE 128          /* the cpu profile's tile (chunk = 0; fastest measured, bench/RESULTS.md) */
#define LATTN__ATTN_QG 8                  /* query tiles sharing each K/V tile (cpu; 1 elsewhere) */

typedef struct lattn__attn_dims { int64_t n, Hkv, G, maxlen; double sd; float s; } lattn__attn_dims;
/* need_o: a forward form (o is written); the backward reads q, k, v only. */
static lattn_status lattn__attn_check(lattn_ctx *ctx, const char *who, const lattn_attn_args *a, int need_o, lattn__attn_dims *dm) {
    int64_t d[4], i;
    if (!a) return lattn__fail(ctx, LATTN_E_NULL, "%s: args is NULL", who);
    LATTN__TRY(lattn__check_seqs(ctx, who, a->B, a->T, a->offsets, a->n_seqs, &dm->n));
    dm->Hkv = a->H_kv == 0 ? a->H : a->H_kv;
    if (a->H < 1 || a->K < 1 || a->V < 1 || dm->Hkv < 1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: H = %lld, H_kv = %lld, K = %lld, V = %lld (must be >= 1)", who,
                           (long long)a->H, (long long)a->H_kv, (long long)a->K, (long long)a->V);
    if (a->H % dm->Hkv != 0)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: H = %lld is not a multiple of H_kv = %lld", who, (long long)a->H,
                           (long long)dm->Hkv);
    dm->G = a->H / dm->Hkv;
    if ((unsigned)a->mask > (unsigned)LATTN_MASK_FN) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: unknown mask %d", who, (int)a->mask);
    if (a->mask == LATTN_MASK_WINDOW && a->window < 0)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: window = %lld (must be >= 0)", who, (long long)a->window);
    if (a->mask == LATTN_MASK_FN && !a->visible) return lattn__fail(ctx, LATTN_E_NULL, "%s: mask FN without a visible function", who);
    if (!isfinite(a->scale)) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: scale is not finite", who);
    d[0] = a->B;
    d[1] = a->T;
    d[2] = a->H;
    d[3] = LATTN__MAX(a->K, a->V);
    LATTN__TRY(lattn__check_count(ctx, who, "q / o", 4, d));
    if (a->T > 0 && (!a->q || !a->k || !a->v || (need_o && !a->o))) return lattn__fail(ctx, LATTN_E_NULL, "%s: q, k, v or o is NULL", who);
    dm->sd = a->scale != 0.0 ? a->scale : 1.0 / sqrt((double)a->K);
    dm->s = (float)dm->sd;
    for (i = 0, dm->maxlen = 0; i < dm->n; i++) {
        int64_t t0, len;
        lattn__seq(a->offsets, a->T, i, &t0, &len);
        dm->maxlen = LATTN__MAX(dm->maxlen, len);
    }
    return LATTN_OK;
}
/* visible(i, j) of the mask in sequence sq (sequence-local indices). */
static int lattn__vis(const lattn_attn_args *a, int64_t sq, int64_t i, int64_t j) {
    switch (a->mask) {
    case LATTN_MASK_CAUSAL: return j <= i;
    case LATTN_MASK_WINDOW: return j <= i && i - j <= a->window;
    case LATTN_MASK_FULL:   return 1;
    default:                return a->visible(a->mask_user, sq, i, j) != 0;
    }
}
/* Queries [i0, i1) against keys [j0, j1): LATTN_VIS_NONE, _ALL or _SOME. */
static int lattn__vis_block(const lattn_attn_args *a, int64_t sq, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    int c;
    switch (a->mask) {
    case LATTN_MASK_CAUSAL: return j0 > i1 - 1 ? LATTN_VIS_NONE : j1 - 1 <= i0 ? LATTN_VIS_ALL : LATTN_VIS_SOME;
    case LATTN_MASK_WINDOW:
        if (j0 > i1 - 1 || i0 - (j1 - 1) > a->window) return LATTN_VIS_NONE;
        return j1 - 1 <= i0 && (i1 - 1) - j0 <= a->window ? LATTN_VIS_ALL : LATTN_VIS_SOME;
    case LATTN_MASK_FULL: return LATTN_VIS_ALL;
    default:
        c = a->visible_block ? a->visible_block(a->mask_user, sq, i0, i1, j0, j1) : LATTN_VIS_SOME;
        return c == LATTN_VIS_NONE || c == LATTN_VIS_ALL ? c : LATTN_VIS_SOME;
    }
}

/* >>attn.ref -------------------------------------------------------------------------------------
   o_i = Σ_j p_ij v_j, p_ij = e^{s q_i·k_j - m_i} / ℓ_i over the visible j, lse_i = m_i + ln ℓ_i, in double */
/* The formula, in double: for each sequence, head and query, the visible scores, their max, the
   normaliser and the weighted sum of values. */
LATTN__DEF lattn_status lattn_attn_ref(lattn_ctx *ctx, const lattn_attn_args *a) {
    const char *who = "lattn_attn_ref";
    lattn__attn_dims dm;
    int64_t sq, h, i, j, c, t0, len;
    double *w, *acc;
    LATTN__TRY(lattn__attn_check(ctx, who, a, 1, &dm));
    if (a->T == 0) return lattn__ok(ctx);
    w = (double *)lattn__alloc(ctx, (size_t)(dm.maxlen + a->V) * sizeof(double));
    if (!w) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    acc = w + dm.maxlen;
    for (sq = 0; sq < dm.n; sq++) {
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        for (h = 0; h < a->H; h++)
            for (i = 0; i < len; i++) {
                const float *q = a->q + ((t0 + i) * a->H + h) * a->K;
                int64_t row = (t0 + i) * a->H + h, kvh = h / dm.G;
                double m = -HUGE_VAL, l = 0.0;
                for (j = 0; j < len; j++) {
                    const float *k = a->k + ((t0 + j) * dm.Hkv + kvh) * a->K;
                    double s = 0.0;
                    if (!lattn__vis(a, sq, i, j)) { w[j] = -HUGE_VAL; continue; }
                    for (c = 0; c < a->K; c++) s += (double)q[c] * (double)k[c];
                    w[j] = dm.sd * s;
                    if (!(w[j] <= m)) m = w[j];                  /* NaN sticks */
                }
                for (c = 0; c < a->V; c++) acc[c] = 0.0;
                for (j = 0; j < len && m != -HUGE_VAL; j++) {       /* (a NaN max spreads) */
                    const float *v = a->v + ((t0 + j) * dm.Hkv + kvh) * a->V;
                    double p;
                    if (w[j] == -HUGE_VAL) continue;
                    p = exp(w[j] - m);
                    l += p;
                    for (c = 0; c < a->V; c++) acc[c] += p * (double)v[c];
                }
                for (c = 0; c < a->V; c++) {
                    double y = l == 0.0 ? 0.0 : acc[c] / l;
                    a->o[row * a->V + c] = (float)y;
                    if (a->o64) a->o64[row * a->V + c] = y;
                }
                if (a->lse) a->lse[row] = (float)(m + log(l));
                if (a->lse64) a->lse64[row] = m + log(l);
            }
    }
    lattn__free(ctx, w);
    return lattn__ok(ctx);
}

/* >>attn.ref_backward -------------------------------------------------------------------------------
   per query i of head h: p_j = e^{s_ij - m} / ℓ over the visible keys, o_i = Σ_j p_j v_j, and with
   D_i = dO_i·o_i:  dv_j += p_j dO_i;  ds_j = p_j (dO_i·v_j - D_i + dlse_i);  dq_i = s Σ_j ds_j k_j;
   dk_j += s ds_j q_i. dk and dv are summed in double over the group's query heads. */
LATTN__DEF lattn_status lattn_attn_ref_backward(lattn_ctx *ctx, const lattn_attn_args *a, const lattn_attn_grads *g) {
    const char *who = "lattn_attn_ref_backward";
    lattn__attn_dims dm;
    int64_t sq, h, i, j, c, t0, len, nkv;
    double *w, *o, *dq, *dk, *dv;
    size_t cnt;
    LATTN__TRY(lattn__attn_check(ctx, who, a, 0, &dm));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    nkv = a->B * a->T * dm.Hkv;
    if (lattn_size_mul(&cnt, (size_t)nkv, (size_t)(a->K + a->V)) != LATTN_OK ||
        lattn_size_add(&cnt, cnt, (size_t)(dm.maxlen + a->V + a->K)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the key gradients overflow", who);
    LATTN__TRY(lattn__alloc_doubles(ctx, &w, cnt, who));
    o = w + dm.maxlen;
    dq = o + a->V;
    dk = dq + a->K;                      /* [B][T][H_kv][K], then dv [B][T][H_kv][V] */
    dv = dk + nkv * a->K;
    memset(dk, 0, (size_t)(nkv * (a->K + a->V)) * sizeof(double));
    for (sq = 0; sq < dm.n; sq++) {
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        for (h = 0; h < a->H; h++)
            for (i = 0; i < len; i++) {
                const int64_t row = (t0 + i) * a->H + h, kvh = h / dm.G;
                const float *q = a->q + row * a->K, *dout = g->dout + row * a->V;
                double m = -HUGE_VAL, l = 0.0, D = 0.0, dl = g->dlse ? (double)g->dlse[row] : 0.0;
                for (c = 0; c < a->K; c++) dq[c] = 0.0;
                for (c = 0; c < a->V; c++) o[c] = 0.0;
                for (j = 0; j < len; j++) {  /* the scores, their max */
                    const float *k = a->k + ((t0 + j) * dm.Hkv + kvh) * a->K;
                    double s = 0.0;
                    if (!lattn__vis(a, sq, i, j)) { w[j] = -HUGE_VAL; continue; }
                    for (c = 0; c < a->K; c++) s += (double)q[c] * (double)k[c];
                    w[j] = dm.sd * s;
                    if (!(w[j] <= m)) m = w[j];
                }
                for (j = 0; j < len && m != -HUGE_VAL; j++) l += w[j] == -HUGE_VAL ? 0.0 : exp(w[j] - m);
                for (j = 0; j < len && l > 0.0; j++) {   /* p and o */
                    const float *v = a->v + ((t0 + j) * dm.Hkv + kvh) * a->V;
                    w[j] = w[j] == -HUGE_VAL ? 0.0 : exp(w[j] - m) / l;
                    for (c = 0; c < a->V; c++) o[c] += w[j] * (double)v[c];
                }
                for (c = 0; l > 0.0 && c < a->V; c++) D += (double)dout[c] * o[c];
                for (j = 0; j < len && l > 0.0; j++) {
                    const int64_t kr = (t0 + j) * dm.Hkv + kvh;
                    const float *k = a->k + kr * a->K, *v = a->v + kr * a->V;
                    double dp = 0.0, ds;
                    if (w[j] == 0.0) continue;
                    for (c = 0; c < a->V; c++) {
                        dp += (double)dout[c] * (double)v[c];
                        dv[kr * a->V + c] += w[j] * (double)dout[c];
                    }
                    ds = w[j] * (dp - D + dl);
                    for (c = 0; c < a->K; c++) {
                        dq[c] += dm.sd * ds * (double)k[c];
                        dk[kr * a->K + c] += dm.sd * ds * (double)q[c];
                    }
                }
                for (c = 0; c < a->K; c++) lattn__put(g->dq, g->dq64, row * a->K + c, dq[c]);
            }
    }
    for (i = 0; i < nkv * a->K; i++) lattn__put(g->dk, g->dk64, i, dk[i]);
    for (i = 0; i < nkv * a->V; i++) lattn__put(g->dv, g->dv64, i, dv[i]);
    lattn__free(ctx, w);
    return lattn__ok(ctx);
}

/* ---- the flash-attention schedule on the tiler ---------------------------------------------------- */
typedef struct lattn__fa_plan { int C, kp, nkt, K, V, vb, fn, qg; } lattn__fa_plan;   /* C query rows and keys per tile */
typedef struct lattn__fa_tiles {
    lattn_tile qr, kr, vr;                                       /* rows: Q, K, V (SBUF) */
    lattn_tile kt[LATTN__ATTN_MAX_KT];                           /* Kᵀ: head dim on partitions */
    lattn_tile p, pt, mk;                                        /* P, Pᵀ, mask (FN masks only) */
    lattn_tile rm, c, nb, rs;                                    /* columns: row max, e^{m-m'}, -m', row sums */
    /* per query tile of the group: s·Qᵀ, O, the max m (two generations) and ℓ */
    lattn_tile qt[LATTN__ATTN_QG][LATTN__ATTN_MAX_KT], acc[LATTN__ATTN_QG], m[LATTN__ATTN_QG][2], l[LATTN__ATTN_QG];
    lattn_tile tp, sp, ptp, op;                                  /* PSUM */
    float *mhost;                                                /* this thread's mask rows ("HBM") */
} lattn__fa_tiles;
static int lattn__fa_kw(const lattn__fa_plan *p, int kt) { return LATTN__MIN(p->kp, p->K - kt * p->kp); }

static lattn_status lattn__fa_tiles_fn(lattn_tiler *t, const void *plan, void *tiles, size_t *host_floats) {
    const lattn__fa_plan *p = (const lattn__fa_plan *)plan;
    lattn__fa_tiles dummy, *x = tiles ? (lattn__fa_tiles *)tiles : &dummy;
    lattn__tplan list[16 + LATTN__ATTN_MAX_KT + LATTN__ATTN_QG * (4 + LATTN__ATTN_MAX_KT)];
    int n = 0, kt, g;
    LATTN__PLAN(&x->kr, 0, p->C, p->K);
    LATTN__PLAN(&x->vr, 0, p->C, p->V);
    for (kt = 0; kt < p->nkt; kt++) LATTN__PLAN(&x->kt[kt], 0, lattn__fa_kw(p, kt), p->C);
    LATTN__PLAN(&x->p, 0, p->C, p->C);
    LATTN__PLAN(&x->pt, 0, p->C, p->C);
    if (p->fn) LATTN__PLAN(&x->mk, 0, p->C, p->C);
    LATTN__PLAN(&x->rm, 0, p->C, 1);
    LATTN__PLAN(&x->c, 0, p->C, 1);
    LATTN__PLAN(&x->nb, 0, p->C, 1);
    LATTN__PLAN(&x->rs, 0, p->C, 1);
    for (g = 0; g < p->qg; g++) {
        for (kt = 0; kt < p->nkt; kt++) LATTN__PLAN(&x->qt[g][kt], 0, lattn__fa_kw(p, kt), p->C);
        LATTN__PLAN(&x->acc[g], 0, p->C, p->V);
        LATTN__PLAN(&x->m[g][0], 0, p->C, 1);
        LATTN__PLAN(&x->m[g][1], 0, p->C, 1);
        LATTN__PLAN(&x->l[g], 0, p->C, 1);
    }
    LATTN__PLAN(&x->tp, 1, p->kp, p->C);
    LATTN__PLAN(&x->sp, 1, p->C, p->C);
    LATTN__PLAN(&x->ptp, 1, p->C, p->C);
    LATTN__PLAN(&x->op, 1, p->C, p->vb);
    LATTN__TRY(lattn__tplan_apply(t, list, n, host_floats));
    if (!t) return LATTN_OK;
    x->qr = x->kr;                       /* Q rows pass through the K-row tile before the key loop */
    return LATTN_OK;
}

/* A partially visible score block (queries from i0 on the partitions, keys from j0 on the free axis):
   dst = src where visible, fill elsewhere; by selection (affine for the causal and window masks, a
   mask tile built from visible() in the thread's host rows mhost of stride ld for FN masks). */
static lattn_status lattn__fa_mask(lattn_tiler *t, lattn_tile *mk, float *mhost, int ld, const lattn_attn_args *a, int64_t sq,
                                   int64_t i0, int64_t j0, lattn_tile *dst, const lattn_tile *src, float fill) {
    int r, c;
    if (a->mask == LATTN_MASK_FN) {
        lattn_tile m = lattn_tile_view(mk, 0, src->np, 0, src->nf);
        for (r = 0; r < src->np; r++)
            for (c = 0; c < src->nf; c++) mhost[r * ld + c] = (float)lattn__vis(a, sq, i0 + r, j0 + c);
        LATTN__TRY(lattn_dma_load(t, &m, mhost, ld));
        return lattn_tile_select_mask(t, dst, src, &m, fill);
    }
    LATTN__TRY(lattn_tile_select_affine(t, dst, src, i0 - j0, 1, -1, fill));                 /* j <= i */
    if (a->mask == LATTN_MASK_WINDOW) return lattn_tile_select_affine(t, dst, dst, a->window - i0 + j0, -1, 1, fill);   /* i - j <= w */
    return LATTN_OK;
}

/* One (sequence, head, group of qg query tiles from i0): the schedule of the section comment, each
   K/V tile loaded and transposed once for every query tile of the group that sees it. */
static lattn_status lattn__fa_item(lattn_tiler *t, lattn__fa_tiles *x, const lattn__fa_plan *p, const lattn_attn_args *a,
                                   const lattn__attn_dims *dm, int64_t sq, int64_t t0, int64_t len, int64_t h, int64_t i0) {
    const int K = p->K, V = p->V, ng = (int)LATTN__MIN((int64_t)p->qg, (len - i0 + p->C - 1) / p->C);
    const int64_t H = a->H, Hkv = dm->Hkv, kvh = h / dm->G;
    int kt, g, vb0, cur[LATTN__ATTN_QG], Lq[LATTN__ATTN_QG], cls[LATTN__ATTN_QG];
    int64_t j0, q0[LATTN__ATTN_QG];
    lattn_tile v1, v2;
    for (g = 0; g < ng; g++) {                                                      /* s·Qᵀ, m, ℓ, O */
        q0[g] = i0 + (int64_t)g * p->C;
        Lq[g] = (int)LATTN__MIN((int64_t)p->C, len - q0[g]);
        cur[g] = 0;
        v1 = lattn_tile_view(&x->qr, 0, Lq[g], 0, K);
        LATTN__TRY(lattn_dma_load(t, &v1, a->q + ((t0 + q0[g]) * H + h) * K, H * K));
        for (kt = 0; kt < p->nkt; kt++) {
            int kw = lattn__fa_kw(p, kt);
            lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, Lq[g]);
            v1 = lattn_tile_view(&x->qr, 0, Lq[g], kt * p->kp, kw);
            v2 = lattn_tile_view(&x->qt[g][kt], 0, kw, 0, Lq[g]);
            LATTN__TRY(lattn_transpose(t, &tp, &v1));
            LATTN__TRY(lattn_tile_act(t, &v2, &tp, LATTN_ACT_IDENTITY, dm->s, 0.0f));
        }
        v1 = lattn_tile_view(&x->m[g][0], 0, Lq[g], 0, 1);
        LATTN__TRY(lattn_tile_memset(t, &v1, -FLT_MAX));
        v1 = lattn_tile_view(&x->l[g], 0, Lq[g], 0, 1);
        LATTN__TRY(lattn_tile_memset(t, &v1, 0.0f));
        v1 = lattn_tile_view(&x->acc[g], 0, Lq[g], 0, V);
        LATTN__TRY(lattn_tile_memset(t, &v1, 0.0f));
    }
    for (j0 = 0; j0 < len; j0 += p->C) {
        const int Lk = (int)LATTN__MIN((int64_t)p->C, len - j0);
        int any = 0;
        for (g = 0; g < ng; g++) any |= (cls[g] = lattn__vis_block(a, sq, q0[g], q0[g] + Lq[g], j0, j0 + Lk)) != LATTN_VIS_NONE;
        if (!any) continue;
        v1 = lattn_tile_view(&x->kr, 0, Lk, 0, K);
        LATTN__TRY(lattn_dma_load(t, &v1, a->k + ((t0 + j0) * Hkv + kvh) * K, Hkv * K));
        v1 = lattn_tile_view(&x->vr, 0, Lk, 0, V);
        LATTN__TRY(lattn_dma_load(t, &v1, a->v + ((t0 + j0) * Hkv + kvh) * V, Hkv * V));
        for (kt = 0; kt < p->nkt; kt++) {                                           /* Kᵀ */
            int kw = lattn__fa_kw(p, kt);
            lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, Lk);
            v1 = lattn_tile_view(&x->kr, 0, Lk, kt * p->kp, kw);
            v2 = lattn_tile_view(&x->kt[kt], 0, kw, 0, Lk);
            LATTN__TRY(lattn_transpose(t, &tp, &v1));
            LATTN__TRY(lattn_tile_copy(t, &v2, &tp));
        }
        for (g = 0; g < ng; g++) {
            const int L = Lq[g], diag = cls[g] == LATTN_VIS_SOME && j0 == q0[g] &&
                                        (a->mask == LATTN_MASK_CAUSAL || a->mask == LATTN_MASK_WINDOW);
            lattn_tile sp = lattn_tile_view(&x->sp, 0, L, 0, Lk), P = lattn_tile_view(&x->p, 0, L, 0, Lk);
            lattn_tile pt = lattn_tile_view(&x->pt, 0, Lk, 0, L), ptp = lattn_tile_view(&x->ptp, 0, Lk, 0, L);
            lattn_tile rm = lattn_tile_view(&x->rm, 0, L, 0, 1), c = lattn_tile_view(&x->c, 0, L, 0, 1);
            lattn_tile nb = lattn_tile_view(&x->nb, 0, L, 0, 1), rs = lattn_tile_view(&x->rs, 0, L, 0, 1);
            lattn_tile l = lattn_tile_view(&x->l[g], 0, L, 0, 1), m0 = lattn_tile_view(&x->m[g][cur[g]], 0, L, 0, 1);
            lattn_tile m1 = lattn_tile_view(&x->m[g][1 - cur[g]], 0, L, 0, 1);
            const lattn_tile *src = &sp;
            if (cls[g] == LATTN_VIS_NONE) continue;
            for (kt = 0; kt < p->nkt; kt++) {                                       /* S = s·Q Kᵀ */
                int kw = lattn__fa_kw(p, kt);
                v1 = lattn_tile_view(&x->qt[g][kt], 0, kw, 0, L);
                v2 = lattn_tile_view(&x->kt[kt], 0, kw, 0, Lk);
                LATTN__TRY(lattn_matmul(t, &sp, &v1, &v2, (kt > 0 ? LATTN_MM_ACCUMULATE : 0) | (diag ? LATTN_MM_LOWER : 0)));
            }
            if (cls[g] == LATTN_VIS_SOME) {                                         /* mask by selection */
                src = &P;
                LATTN__TRY(lattn__fa_mask(t, &x->mk, x->mhost, p->C, a, sq, q0[g], j0, &P, &sp, -HUGE_VALF));
            }
            LATTN__TRY(lattn_tile_reduce(t, &rm, src, LATTN_TOP_MAX));
            LATTN__TRY(lattn_tile_tt(t, &m1, &m0, &rm, LATTN_TOP_MAX));             /* m' */
            LATTN__TRY(lattn_tile_tt(t, &c, &m0, &m1, LATTN_TOP_SUB));
            LATTN__TRY(lattn_tile_act(t, &c, &c, LATTN_ACT_EXP, 1.0f, 0.0f));        /* c = e^{m - m'} */
            LATTN__TRY(lattn_tile_act(t, &nb, &m1, LATTN_ACT_IDENTITY, -1.0f, 0.0f));
            LATTN__TRY(lattn_tile_act_reduce(t, &P, src, LATTN_ACT_EXP, 1.0f, &nb, &rs));   /* P = e^{S - m'}, r */
            LATTN__TRY(lattn_tile_stt(t, &l, &l, &c, 0.0f, &rs));                    /* ℓ = c·ℓ + r */
            LATTN__TRY(lattn_transpose(t, &ptp, &P));
            LATTN__TRY(lattn_tile_copy(t, &pt, &ptp));
            for (vb0 = 0; vb0 < V; vb0 += p->vb) {                                  /* O = c·O + P V */
                int w = LATTN__MIN(p->vb, V - vb0);
                lattn_tile op = lattn_tile_view(&x->op, 0, L, 0, w);
                v1 = lattn_tile_view(&x->vr, 0, Lk, vb0, w);
                v2 = lattn_tile_view(&x->acc[g], 0, L, vb0, w);
                LATTN__TRY(lattn_matmul(t, &op, &pt, &v1, diag ? LATTN_MM_CAUSAL : 0));
                LATTN__TRY(lattn_tile_stt(t, &v2, &v2, &c, 0.0f, &op));
            }
            cur[g] = 1 - cur[g];
            lattn_tiler_mark_step(t);
        }
    }
    for (g = 0; g < ng; g++) {
        lattn_tile l = lattn_tile_view(&x->l[g], 0, Lq[g], 0, 1), rs = lattn_tile_view(&x->rs, 0, Lq[g], 0, 1);
        lattn_tile acc = lattn_tile_view(&x->acc[g], 0, Lq[g], 0, V);
        if (a->lse) {                                                               /* lse = m + ln ℓ */
            v1 = lattn_tile_view(&x->m[g][cur[g]], 0, Lq[g], 0, 1);
            LATTN__TRY(lattn_tile_act(t, &rs, &l, LATTN_ACT_LOG, 1.0f, 0.0f));
            LATTN__TRY(lattn_tile_tt(t, &rs, &rs, &v1, LATTN_TOP_ADD));
            LATTN__TRY(lattn_dma_store(t, a->lse + (t0 + q0[g]) * H + h, H, &rs));
        }
        LATTN__TRY(lattn_tile_ts(t, &l, &l, NULL, FLT_MIN, LATTN_TOP_MAX));        /* no key: O = 0 / ℓ = 0 */
        LATTN__TRY(lattn_tile_ts(t, &acc, &acc, &l, 0.0f, LATTN_TOP_DIV));
        LATTN__TRY(lattn_dma_store(t, a->o + ((t0 + q0[g]) * H + h) * V, H * V, &acc));
    }
    return LATTN_OK;
}

/* The tiles of the call: C rows (the chunk, or the profile's attention tile), partition tiles of kp
   rows for head dims up to pdim (K in the forward, max(K, V) in the backward, whose dP contracts
   over V), free blocks of vb from the moving limit and a PSUM bank. */
static lattn_status lattn__fa_plan_make(lattn_ctx *ctx, const char *who, const lattn_attn_args *a, const lattn_dev_profile *pr,
                                        int64_t pdim, lattn__fa_plan *plan) {
    const int64_t plim = pr->partitions > 0 ? pr->partitions : INT32_MAX;
    int64_t kp;
    if (a->chunk < 0 || a->chunk > LATTN_MAX_CHUNK)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: chunk = %d (0 = the profile's default, else 1 .. %d)", who, a->chunk, LATTN_MAX_CHUNK);
    plan->C = a->chunk > 0 ? a->chunk : pr->kind == LATTN_DEV_CPU ? LATTN__ATTN_CPU_TILE : pr->default_chunk;
    if (plan->C > plim || (pr->mm_mmax > 0 && plan->C > pr->mm_mmax) || (pr->transpose_max > 0 && plan->C > pr->transpose_max))
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: tile of %d rows exceeds the %s profile's partitions", who, plan->C, pr->name);
    kp = LATTN__MIN(pdim, plim);
    if (pr->mm_kmax > 0) kp = LATTN__MIN(kp, pr->mm_kmax);
    if (pr->transpose_max > 0) kp = LATTN__MIN(kp, pr->transpose_max);
    if ((pdim + kp - 1) / kp > LATTN__ATTN_MAX_KT || a->K > INT32_MAX / 2 || a->V > INT32_MAX / 2)
        return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: a head dim of %lld needs more than %d partition tiles", who,
                           (long long)pdim, LATTN__ATTN_MAX_KT);
    plan->kp = (int)kp;
    plan->K = (int)a->K;
    plan->V = (int)a->V;
    plan->nkt = (int)((a->K + kp - 1) / kp);
    plan->vb = LATTN__MAX(plan->K, plan->V);
    plan->fn = a->mask == LATTN_MASK_FN;
    plan->qg = pr->kind == LATTN_DEV_CPU ? LATTN__ATTN_QG : 1;
    if (pr->mm_nmax > 0) plan->vb = LATTN__MIN(plan->vb, pr->mm_nmax);
    if (pr->psum_bank_bytes > 0) plan->vb = LATTN__MIN(plan->vb, (int)(pr->psum_bank_bytes / sizeof(float)));
    return LATTN_OK;
}

/* >>attn.chunk -----------------------------------------------------------------------------------
   the flash schedule: per query tile, the visible key tiles in order with the running max m,
   sum ℓ and output O on chip (online softmax); invisible tiles skipped, partial ones masked */
LATTN__DEF lattn_status lattn_attn_chunk(lattn_ctx *ctx, const lattn_attn_args *a) {
    const char *who = "lattn_attn_chunk";
    const lattn_dev_profile *pr;
    lattn__attn_dims dm;
    lattn__fa_plan plan;
    lattn__team tm;
    float *mbuf = NULL;
    int64_t nq, items, w;
    lattn_status st;
    int i;
    LATTN__TRY(lattn__attn_check(ctx, who, a, 1, &dm));
    LATTN__TRY(lattn__profile(ctx, &pr));
    LATTN__TRY(lattn__fa_plan_make(ctx, who, a, pr, a->K, &plan));
    if (a->T == 0) return lattn__ok(ctx);
    /* the work split: (sequence, head, group of qg query tiles); on the cpu the groups shrink until
       every thread has an item (a query row's arithmetic is the same in any group) */
    for (;;) {
        nq = (dm.maxlen + (int64_t)plan.C * plan.qg - 1) / ((int64_t)plan.C * plan.qg);   /* query groups */
        items = dm.n * a->H * nq;
        if (plan.qg == 1 || items >= (int64_t)LATTN__ITEMS_PER_THREAD * lattn__threads(ctx)) break;
        plan.qg /= 2;
    }
    st = lattn__team_make(ctx, &tm, who, items, sizeof(lattn__fa_tiles), lattn__fa_tiles_fn, &plan);
    if (st == LATTN_OK && a->mask == LATTN_MASK_FN)
        st = lattn__alloc_floats(ctx, &mbuf, (size_t)tm.n * (size_t)plan.C * (size_t)plan.C, who);
    for (i = 0; st == LATTN_OK && i < tm.n; i++)
        ((lattn__fa_tiles *)tm.tiles)[i].mhost = mbuf ? mbuf + (size_t)i * (size_t)plan.C * (size_t)plan.C : NULL;
    if (st == LATTN_OK) {
        /* the longest rows (the last query groups of every head) first: the dynamic schedule then
           balances the causal triangle; each item is one thread's from start to end, so the results
           do not depend on which thread ran it */
        LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(tm.n))
        for (w = 0; w < items; w++) {
            int id = lattn__thread_id();
            int64_t qt = nq - 1 - w / (dm.n * a->H), sq = w % (dm.n * a->H) / a->H, h = w % a->H, t0, len;
            lattn__seq(a->offsets, a->T, sq, &t0, &len);
            if (qt * plan.C * plan.qg < len && tm.tl[id]->err == LATTN_OK)
                lattn__fa_item(tm.tl[id], (lattn__fa_tiles *)tm.tiles + id, &plan, a, &dm, sq, t0, len, h, qt * plan.C * plan.qg);
        }
    }
    st = lattn__team_end(ctx, &tm, who, st);
    lattn__free(ctx, mbuf);
    return st;
}

/* ---- the flash-attention backward on the tiler ------------------------------------------------------
   FlashAttention-2's backward (Dao 2023, Algorithm 2). Per (sequence, query head), the key tiles in
   groups of kg (cpu; 1 elsewhere). For each group, every query tile that sees it is loaded and
   transposed once, and each visible (query tile, key tile) pair runs
       S = (s·Q)·Kᵀ;   P = e^{S - lse}          (the forward's saved log-sum-exp; masked by selection)
       dP = dO·Vᵀ;     dS = P ⊙ (dP - D')       (D' = rowsum(dO ⊙ O) - dlse, once per query row)
       dV += Pᵀ·dO;    dK += dSᵀ·Q;    dQ += dS·K
   with dK, dV accumulating in PSUM over the group's query tiles, dQ in PSUM over the group's key
   tiles and then added to its rows in HBM, and s applied once to each. Five products a pair against the forward's
   two; nothing of size T² is kept. An item owns its head's dQ rows, so every sum runs in one order
   fixed by the shape: the same bits at any thread count. With grouped-query heads each query head
   writes its dK, dV to rows of its own, summed over the group in head order at the end. */
#ifndef LATTN__ATTN_KG
#define LATTN__ATTN_KG 4                  /* key tiles sharing each loaded query tile (cpu; 1 elsewhere) */
#endif

typedef struct lattn__fb_plan { lattn__fa_plan f; int nvt, kg, dq, dk, dv; } lattn__fb_plan;
typedef struct lattn__fb_tiles {
    /* per key tile of the group: K rows, Kᵀ, Vᵀ, the dK and dV accumulators (PSUM) */
    lattn_tile kr[LATTN__ATTN_KG], kt[LATTN__ATTN_KG][LATTN__ATTN_MAX_KT], vt[LATTN__ATTN_KG][LATTN__ATTN_MAX_KT];
    lattn_tile dk[LATTN__ATTN_KG], dv[LATTN__ATTN_KG];
    lattn_tile qr, dor, rows;                                    /* rows: Q, dO; O, V and dQ pass through rows */
    lattn_tile qt[LATTN__ATTN_MAX_KT], dot[LATTN__ATTN_MAX_KT];  /* s·Qᵀ, dOᵀ */
    lattn_tile p, ds, dst, mk;                                   /* P, dS, dSᵀ, mask (FN masks only) */
    lattn_tile nb, dd, col;                                      /* columns: -lse, D', scratch */
    lattn_tile tp, sp, dp, dsp, qp;                              /* PSUM: transposes, S, dP, dSᵀ, dQ */
    float *mhost;
} lattn__fb_tiles;
/* Where an item reads the forward's outputs and writes its per-row terms and key gradients. */
typedef struct lattn__fb_io {
    const float *o, *lse;                /* the forward's o [B][T][H][V], lse [B][T][H] */
    float *dd, *nb;                      /* [B][T][H]: D' and -lse of every query row */
    float *dk, *dv;                      /* key gradient rows [B][T][hk][K | V] (NULL: not wanted) */
    int64_t hk;                          /* H_kv (written in place) or H (one set per query head) */
} lattn__fb_io;
static int lattn__fb_vw(const lattn__fb_plan *b, int vt) { return LATTN__MIN(b->f.kp, b->f.V - vt * b->f.kp); }

static lattn_status lattn__fb_tiles_fn(lattn_tiler *t, const void *plan, void *tiles, size_t *host_floats) {
    const lattn__fb_plan *b = (const lattn__fb_plan *)plan;
    const lattn__fa_plan *p = &b->f;
    lattn__fb_tiles dummy, *x = tiles ? (lattn__fb_tiles *)tiles : &dummy;
    lattn__tplan list[16 + 2 * LATTN__ATTN_MAX_KT + LATTN__ATTN_KG * (3 + 2 * LATTN__ATTN_MAX_KT)];
    int n = 0, j, kt;
    for (j = 0; j < b->kg; j++) {
        LATTN__PLAN(&x->kr[j], 0, p->C, p->K);
        for (kt = 0; kt < p->nkt; kt++) LATTN__PLAN(&x->kt[j][kt], 0, lattn__fa_kw(p, kt), p->C);
        for (kt = 0; kt < b->nvt; kt++) LATTN__PLAN(&x->vt[j][kt], 0, lattn__fb_vw(b, kt), p->C);
        LATTN__PLAN(&x->dk[j], 1, p->C, p->K);
        LATTN__PLAN(&x->dv[j], 1, p->C, p->V);
    }
    LATTN__PLAN(&x->qr, 0, p->C, p->K);
    LATTN__PLAN(&x->dor, 0, p->C, p->V);
    LATTN__PLAN(&x->rows, 0, p->C, LATTN__MAX(p->K, p->V));
    for (kt = 0; kt < p->nkt; kt++) LATTN__PLAN(&x->qt[kt], 0, lattn__fa_kw(p, kt), p->C);
    for (kt = 0; kt < b->nvt; kt++) LATTN__PLAN(&x->dot[kt], 0, lattn__fb_vw(b, kt), p->C);
    LATTN__PLAN(&x->p, 0, p->C, p->C);
    LATTN__PLAN(&x->ds, 0, p->C, p->C);
    LATTN__PLAN(&x->dst, 0, p->C, p->C);
    if (p->fn) LATTN__PLAN(&x->mk, 0, p->C, p->C);
    LATTN__PLAN(&x->nb, 0, p->C, 1);
    LATTN__PLAN(&x->dd, 0, p->C, 1);
    LATTN__PLAN(&x->col, 0, p->C, 1);
    LATTN__PLAN(&x->tp, 1, p->kp, p->C);
    LATTN__PLAN(&x->sp, 1, p->C, p->C);
    LATTN__PLAN(&x->dp, 1, p->C, p->C);
    LATTN__PLAN(&x->dsp, 1, p->C, p->C);
    LATTN__PLAN(&x->qp, 1, p->C, p->K);
    return lattn__tplan_apply(t, list, n, host_floats);
}

/* rows [L][w] of hbm (row stride ld) into tile src, then dst = srcᵀ by partition tiles of kp rows
   through the PSUM tile tp (scaled by s on the way). */
static lattn_status lattn__fb_load_t(lattn_tiler *t, lattn__fb_tiles *x, int kp, lattn_tile *src, lattn_tile *dst, const float *hbm,
                                     int64_t ld, int L, int w, float s) {
    int kt;
    lattn_tile v = lattn_tile_view(src, 0, L, 0, w);
    LATTN__TRY(lattn_dma_load(t, &v, hbm, ld));
    for (kt = 0; kt * kp < w; kt++) {
        const int kw = LATTN__MIN(kp, w - kt * kp);
        lattn_tile tp = lattn_tile_view(&x->tp, 0, kw, 0, L), d = lattn_tile_view(&dst[kt], 0, kw, 0, L);
        v = lattn_tile_view(src, 0, L, kt * kp, kw);
        LATTN__TRY(lattn_transpose(t, &tp, &v));
        LATTN__TRY(lattn_tile_act(t, &d, &tp, LATTN_ACT_IDENTITY, s, 0.0f));
    }
    return LATTN_OK;
}

/* One visible pair: query tile i0 (L rows, loaded) against key tile j of the group (from j0, Lk keys);
   first_q: the first key tile of the group this query tile sees (dQ's PSUM starts anew); first_k:
   the first query tile key tile j sees (its dK, dV start anew). */
static lattn_status lattn__fb_pair(lattn_tiler *t, lattn__fb_tiles *x, const lattn__fb_plan *b, const lattn_attn_args *a, int64_t sq,
                                   int64_t i0, int L, int64_t j0, int Lk, int j, int cls, int first_q, int first_k) {
    const lattn__fa_plan *p = &b->f;
    const int diag = cls == LATTN_VIS_SOME && j0 == i0 && (a->mask == LATTN_MASK_CAUSAL || a->mask == LATTN_MASK_WINDOW);
    lattn_tile sp = lattn_tile_view(&x->sp, 0, L, 0, Lk), P = lattn_tile_view(&x->p, 0, L, 0, Lk);
    lattn_tile dp = lattn_tile_view(&x->dp, 0, L, 0, Lk), ds = lattn_tile_view(&x->ds, 0, L, 0, Lk);
    lattn_tile dsp = lattn_tile_view(&x->dsp, 0, Lk, 0, L), dst = lattn_tile_view(&x->dst, 0, Lk, 0, L);
    lattn_tile nb = lattn_tile_view(&x->nb, 0, L, 0, 1), dd = lattn_tile_view(&x->dd, 0, L, 0, 1);
    lattn_tile stat, mov, ps;
    const lattn_tile *src = &sp;
    int kt, c0, w;
    for (kt = 0; kt < p->nkt; kt++) {                                               /* S = s·Q Kᵀ */
        const int kw = lattn__fa_kw(p, kt);
        stat = lattn_tile_view(&x->qt[kt], 0, kw, 0, L);
        mov = lattn_tile_view(&x->kt[j][kt], 0, kw, 0, Lk);
        LATTN__TRY(lattn_matmul(t, &sp, &stat, &mov, (kt > 0 ? LATTN_MM_ACCUMULATE : 0) | (diag ? LATTN_MM_LOWER : 0)));
    }
    if (cls == LATTN_VIS_SOME) {
        LATTN__TRY(lattn__fa_mask(t, &x->mk, x->mhost, p->C, a, sq, i0, j0, &P, &sp, -HUGE_VALF));
        src = &P;
    }
    LATTN__TRY(lattn_tile_act_reduce(t, &P, src, LATTN_ACT_EXP, 1.0f, &nb, NULL));  /* P = e^{S - lse} */
    for (kt = 0; kt < b->nvt; kt++) {                                               /* dP = dO Vᵀ */
        const int vw = lattn__fb_vw(b, kt);
        stat = lattn_tile_view(&x->dot[kt], 0, vw, 0, L);
        mov = lattn_tile_view(&x->vt[j][kt], 0, vw, 0, Lk);
        LATTN__TRY(lattn_matmul(t, &dp, &stat, &mov, (kt > 0 ? LATTN_MM_ACCUMULATE : 0) | (diag ? LATTN_MM_LOWER : 0)));
    }
    LATTN__TRY(lattn_tile_ts(t, &ds, &dp, &dd, 0.0f, LATTN_TOP_SUB));               /* dS = P ⊙ (dP - D') */
    LATTN__TRY(lattn_tile_tt(t, &ds, &ds, &P, LATTN_TOP_MUL));
    if (diag) LATTN__TRY(lattn_tile_select_affine(t, &ds, &ds, 0, 1, -1, 0.0f));    /* dP is unwritten above the diagonal */
    for (c0 = 0; b->dv && c0 < p->V; c0 += p->vb) {                                 /* dV += Pᵀ dO */
        w = LATTN__MIN(p->vb, p->V - c0);
        ps = lattn_tile_view(&x->dv[j], 0, Lk, c0, w);
        mov = lattn_tile_view(&x->dor, 0, L, c0, w);
        LATTN__TRY(lattn_matmul(t, &ps, &P, &mov, first_k ? 0 : LATTN_MM_ACCUMULATE));
    }
    for (c0 = 0; b->dk && c0 < p->K; c0 += p->vb) {                                 /* dK += dSᵀ Q */
        w = LATTN__MIN(p->vb, p->K - c0);
        ps = lattn_tile_view(&x->dk[j], 0, Lk, c0, w);
        mov = lattn_tile_view(&x->qr, 0, L, c0, w);
        LATTN__TRY(lattn_matmul(t, &ps, &ds, &mov, first_k ? 0 : LATTN_MM_ACCUMULATE));
    }
    if (!b->dq) return LATTN_OK;
    LATTN__TRY(lattn_transpose(t, &dsp, &ds));                                      /* dQ += dS K */
    LATTN__TRY(lattn_tile_copy(t, &dst, &dsp));
    for (c0 = 0; c0 < p->K; c0 += p->vb) {
        w = LATTN__MIN(p->vb, p->K - c0);
        ps = lattn_tile_view(&x->qp, 0, L, c0, w);
        mov = lattn_tile_view(&x->kr[j], 0, Lk, c0, w);
        LATTN__TRY(lattn_matmul(t, &ps, &dst, &mov, (first_q ? 0 : LATTN_MM_ACCUMULATE) | (diag ? LATTN_MM_CAUSAL : 0)));
    }
    return LATTN_OK;
}

/* One (sequence, query head): D' and -lse of its rows, its dQ rows zeroed, then the key groups. */
static lattn_status lattn__fb_item(lattn_tiler *t, lattn__fb_tiles *x, const lattn__fb_plan *b, const lattn_attn_args *a,
                                   const lattn_attn_grads *g, const lattn__attn_dims *dm, const lattn__fb_io *io, int64_t sq,
                                   int64_t t0, int64_t len, int64_t h) {
    const lattn__fa_plan *p = &b->f;
    const int C = p->C, K = p->K, V = p->V;
    const int64_t H = a->H, Hkv = dm->Hkv, kvh = h / dm->G, hd = io->hk == H ? h : kvh;
    int64_t i0, jg;
    int j, nk, first, cls[LATTN__ATTN_KG], fresh[LATTN__ATTN_KG];
    lattn_tile v1, v2;
    for (i0 = 0; i0 < len; i0 += C) {
        const int L = (int)LATTN__MIN((int64_t)C, len - i0);
        const int64_t row = (t0 + i0) * H + h;
        lattn_tile dd = lattn_tile_view(&x->dd, 0, L, 0, 1), nb = lattn_tile_view(&x->nb, 0, L, 0, 1);
        lattn_tile col = lattn_tile_view(&x->col, 0, L, 0, 1);
        v1 = lattn_tile_view(&x->rows, 0, L, 0, V);
        v2 = lattn_tile_view(&x->dor, 0, L, 0, V);
        LATTN__TRY(lattn_dma_load(t, &v1, io->o + row * V, H * V));
        LATTN__TRY(lattn_dma_load(t, &v2, g->dout + row * V, H * V));
        LATTN__TRY(lattn_tile_tt(t, &v1, &v1, &v2, LATTN_TOP_MUL));
        LATTN__TRY(lattn_tile_reduce(t, &dd, &v1, LATTN_TOP_ADD));                  /* D' = rowsum(dO ⊙ O) - dlse */
        if (g->dlse) {
            LATTN__TRY(lattn_dma_load(t, &col, g->dlse + row, H));
            LATTN__TRY(lattn_tile_tt(t, &dd, &dd, &col, LATTN_TOP_SUB));
        }
        LATTN__TRY(lattn_dma_store(t, io->dd + row, H, &dd));
        LATTN__TRY(lattn_dma_load(t, &col, io->lse + row, H));
        LATTN__TRY(lattn_tile_ts(t, &col, &col, NULL, -FLT_MAX, LATTN_TOP_MAX));    /* a row that sees no key: lse = -inf */
        LATTN__TRY(lattn_tile_act(t, &nb, &col, LATTN_ACT_IDENTITY, -1.0f, 0.0f));
        LATTN__TRY(lattn_dma_store(t, io->nb + row, H, &nb));
        if (!b->dq) continue;
        v1 = lattn_tile_view(&x->rows, 0, L, 0, K);
        LATTN__TRY(lattn_tile_memset(t, &v1, 0.0f));
        LATTN__TRY(lattn_dma_store(t, g->dq + row * K, H * K, &v1));
    }
    for (jg = 0; jg < len; jg += (int64_t)b->kg * C) {
        nk = (int)LATTN__MIN((int64_t)b->kg, (len - jg + C - 1) / C);
        for (j = 0; j < nk; j++) {                                                  /* K rows, Kᵀ, Vᵀ */
            const int64_t j0 = jg + (int64_t)j * C, kr = (t0 + j0) * Hkv + kvh;
            const int Lk = (int)LATTN__MIN((int64_t)C, len - j0);
            LATTN__TRY(lattn__fb_load_t(t, x, p->kp, &x->kr[j], x->kt[j], a->k + kr * K, Hkv * K, Lk, K, 1.0f));
            LATTN__TRY(lattn__fb_load_t(t, x, p->kp, &x->rows, x->vt[j], a->v + kr * V, Hkv * V, Lk, V, 1.0f));
            fresh[j] = 1;
        }
        for (i0 = 0; i0 < len; i0 += C) {                                           /* the query tiles that see the group */
            const int L = (int)LATTN__MIN((int64_t)C, len - i0);
            const int64_t row = (t0 + i0) * H + h;
            int any = 0;
            for (j = 0; j < nk; j++) {
                const int64_t j0 = jg + (int64_t)j * C;
                any |= (cls[j] = lattn__vis_block(a, sq, i0, i0 + L, j0, LATTN__MIN(j0 + C, len))) != LATTN_VIS_NONE;
            }
            if (!any) continue;
            LATTN__TRY(lattn__fb_load_t(t, x, p->kp, &x->qr, x->qt, a->q + row * K, H * K, L, K, (float)dm->sd));
            LATTN__TRY(lattn__fb_load_t(t, x, p->kp, &x->dor, x->dot, g->dout + row * V, H * V, L, V, 1.0f));
            v1 = lattn_tile_view(&x->nb, 0, L, 0, 1);
            LATTN__TRY(lattn_dma_load(t, &v1, io->nb + row, H));
            v1 = lattn_tile_view(&x->dd, 0, L, 0, 1);
            LATTN__TRY(lattn_dma_load(t, &v1, io->dd + row, H));
            for (j = 0, first = 1; j < nk; j++) {
                const int64_t j0 = jg + (int64_t)j * C;
                if (cls[j] == LATTN_VIS_NONE) continue;
                LATTN__TRY(lattn__fb_pair(t, x, b, a, sq, i0, L, j0, (int)LATTN__MIN((int64_t)C, len - j0), j, cls[j], first, fresh[j]));
                first = 0;
                fresh[j] = 0;
            }
            if (b->dq) {                                                            /* dQ rows += s·(dS K) */
                lattn_tile qp = lattn_tile_view(&x->qp, 0, L, 0, K);
                v1 = lattn_tile_view(&x->rows, 0, L, 0, K);
                LATTN__TRY(lattn_dma_load(t, &v1, g->dq + row * K, H * K));
                LATTN__TRY(lattn_tile_stt(t, &v1, &qp, NULL, (float)dm->sd, &v1));
                LATTN__TRY(lattn_dma_store(t, g->dq + row * K, H * K, &v1));
            }
            lattn_tiler_mark_step(t);
        }
        for (j = 0; j < nk; j++) {                         /* the group's dK = s·Σ dSᵀ Q, dV out of PSUM (0: no query sees it) */
            const int64_t j0 = jg + (int64_t)j * C, kr = (t0 + j0) * io->hk + hd;
            const int Lk = (int)LATTN__MIN((int64_t)C, len - j0);
            if (b->dk) {
                v1 = lattn_tile_view(&x->rows, 0, Lk, 0, K);
                v2 = lattn_tile_view(&x->dk[j], 0, Lk, 0, K);
                LATTN__TRY(fresh[j] ? lattn_tile_memset(t, &v1, 0.0f) : lattn_tile_act(t, &v1, &v2, LATTN_ACT_IDENTITY, (float)dm->sd, 0.0f));
                LATTN__TRY(lattn_dma_store(t, io->dk + kr * K, io->hk * K, &v1));
            }
            if (b->dv) {
                v1 = lattn_tile_view(&x->rows, 0, Lk, 0, V);
                v2 = lattn_tile_view(&x->dv[j], 0, Lk, 0, V);
                LATTN__TRY(fresh[j] ? lattn_tile_memset(t, &v1, 0.0f) : lattn_tile_copy(t, &v1, &v2));
                LATTN__TRY(lattn_dma_store(t, io->dv + kr * V, io->hk * V, &v1));
            }
        }
    }
    return LATTN_OK;
}

/* >>attn.chunk_backward --------------------------------------------------------------------------
   the flash backward: per (sequence, query head), key tiles in groups, P recomputed from the saved
   log-sum-exp, dK and dV in PSUM, dQ accumulated in its rows; five products a visible tile pair */
LATTN__DEF lattn_status lattn_attn_chunk_backward(lattn_ctx *ctx, const lattn_attn_args *a, const lattn_attn_grads *g) {
    const char *who = "lattn_attn_chunk_backward";
    const lattn_dev_profile *pr;
    lattn__attn_dims dm;
    lattn__fb_plan plan;
    lattn__fb_io io;
    lattn__team tm;
    float *ws = NULL, *mbuf = NULL, *part;
    int64_t rows, nkv, w;
    size_t cnt, fwd, np;
    lattn_status st = LATTN_OK;
    int i;
    LATTN__TRY(lattn__attn_check(ctx, who, a, 0, &dm));
    if (!g) return lattn__fail(ctx, LATTN_E_NULL, "%s: grads is NULL", who);
    if (a->T > 0 && !g->dout) return lattn__fail(ctx, LATTN_E_NULL, "%s: dout is NULL", who);
    LATTN__TRY(lattn__profile(ctx, &pr));
    LATTN__TRY(lattn__fa_plan_make(ctx, who, a, pr, LATTN__MAX(a->K, a->V), &plan.f));
    plan.nvt = (plan.f.V + plan.f.kp - 1) / plan.f.kp;
    plan.kg = pr->kind == LATTN_DEV_CPU ? LATTN__ATTN_KG : 1;
    plan.dq = g->dq != NULL;
    plan.dk = g->dk != NULL;
    plan.dv = g->dv != NULL;
    if (a->T == 0 || !(plan.dq || plan.dk || plan.dv)) return lattn__ok(ctx);
    rows = a->B * a->T * a->H;
    nkv = a->B * a->T * dm.Hkv;
    fwd = a->o && a->lse ? 0 : (size_t)rows * (size_t)(a->V + 1);              /* the forward, when not saved */
    np = dm.G > 1 && (plan.dk || plan.dv) ? (size_t)rows * (size_t)(a->K + a->V) : 0;   /* per query head dK, dV */
    if (lattn_size_add(&cnt, 2 * (size_t)rows, fwd) != LATTN_OK || lattn_size_add(&cnt, cnt, np) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the workspace overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, cnt, who));
    io.dd = ws;
    io.nb = ws + rows;
    io.o = a->o;
    io.lse = a->lse;
    if (fwd) {
        lattn_attn_args fa = *a;
        fa.o = ws + 2 * rows;
        fa.lse = fa.o + rows * a->V;
        fa.o64 = fa.lse64 = NULL;
        st = lattn_attn_chunk(ctx, &fa);
        io.o = fa.o;
        io.lse = fa.lse;
    }
    part = ws + 2 * rows + fwd;
    io.hk = np ? a->H : dm.Hkv;
    io.dk = !plan.dk ? NULL : np ? part : g->dk;
    io.dv = !plan.dv ? NULL : np ? part + rows * a->K : g->dv;
    if (st == LATTN_OK) st = lattn__team_make(ctx, &tm, who, dm.n * a->H, sizeof(lattn__fb_tiles), lattn__fb_tiles_fn, &plan);
    else memset(&tm, 0, sizeof tm);
    if (st == LATTN_OK && plan.f.fn)
        st = lattn__alloc_floats(ctx, &mbuf, (size_t)tm.n * (size_t)plan.f.C * (size_t)plan.f.C, who);
    for (i = 0; st == LATTN_OK && i < tm.n; i++)
        ((lattn__fb_tiles *)tm.tiles)[i].mhost = mbuf ? mbuf + (size_t)i * (size_t)plan.f.C * (size_t)plan.f.C : NULL;
    if (st == LATTN_OK) {
        LATTN__PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(tm.n))
        for (w = 0; w < dm.n * a->H; w++) {
            int id = lattn__thread_id();
            int64_t t0, len;
            lattn__seq(a->offsets, a->T, w / a->H, &t0, &len);
            if (len > 0 && tm.tl[id]->err == LATTN_OK)
                lattn__fb_item(tm.tl[id], (lattn__fb_tiles *)tm.tiles + id, &plan, a, g, &dm, &io, w / a->H, t0, len, w % a->H);
        }
    }
    if (tm.tiles) st = lattn__team_end(ctx, &tm, who, st);
    if (st == LATTN_OK && np) {          /* dK, dV of a KV head: its query heads' sums, in head order */
        LATTN__PRAGMA(omp parallel for schedule(static) num_threads(lattn__threads(ctx)))
        for (w = 0; w < nkv; w++) {
            const int64_t r0 = w / dm.Hkv * a->H + w % dm.Hkv * dm.G;
            int64_t c, e;
            for (c = 0; plan.dk && c < a->K; c++) {
                float s = 0.0f;
                for (e = 0; e < dm.G; e++) s += io.dk[(r0 + e) * a->K + c];
                g->dk[w * a->K + c] = s;
            }
            for (c = 0; plan.dv && c < a->V; c++) {
                float s = 0.0f;
                for (e = 0; e < dm.G; e++) s += io.dv[(r0 + e) * a->V + c];
                g->dv[w * a->V + c] = s;
            }
        }
    }
    lattn__free(ctx, mbuf);
    lattn__free(ctx, ws);
    return st;
}

/* ---- decoding: one query per head against a key range --------------------------------------------- */
/* The keys [j_lo, i] of query i are cut into segments of LATTN__AQ_SEG from j_lo (fixed by the
   shape, never by the thread count); each segment's partial softmax (m_s, ℓ_s, O_s = Σ e^{x - m_s} v)
   runs on its own, and the segments merge in order: m = max m_s, ℓ = Σ e^{m_s - m} ℓ_s,
   o = Σ e^{m_s - m} O_s / ℓ (flash-decoding). Within a segment, blocks of LATTN__AQ_BLK keys read
   each cache entry once for all the heads (one contiguous row), so the cache streams in order. */
#define LATTN__AQ_BLK 64
#define LATTN__AQ_SEG 512
static int64_t lattn__attn_jlo(const lattn_attn_args *a, int64_t i) {
    return a->mask == LATTN_MASK_WINDOW ? LATTN__MAX((int64_t)0, i - a->window) : 0;
}
static int64_t lattn__attn_nseg(const lattn_attn_args *a, int64_t i) {
    return (i + 1 - lattn__attn_jlo(a, i) + LATTN__AQ_SEG - 1) / LATTN__AQ_SEG;
}
/* Segment sg of query position i of sequence sq, all H heads, for nq queries at q + qi·qs (each
   [H][K]) that share the key set of position i: part + qi·ps = O [H][V], then m [H], ℓ [H]. Cache
   entry j at kc + j·ks (values vc + j·vs); a block of keys is read once for all the queries.
   sc: nq·H·LATTN__AQ_BLK floats. */
static void lattn__attn_seg(const lattn_attn_args *a, const lattn__attn_dims *dm, int64_t sq, int nq, const float *q, int64_t qs,
                            const float *kc, int64_t ks, const float *vc, int64_t vs, int64_t i, int64_t sg, float *part,
                            size_t ps, float *sc) {
    const int64_t H = a->H, G = dm->G, K = a->K, V = a->V, NH = nq * H;
    const int64_t ja = lattn__attn_jlo(a, i) + sg * LATTN__AQ_SEG, jb = LATTN__MIN(i + 1, ja + LATTN__AQ_SEG);
    int64_t j0, j, h, qi;
    for (qi = 0; qi < nq; qi++) {
        float *acc = part + (size_t)qi * ps, *m = acc + H * V, *l = m + H;
        for (h = 0; h < H; h++) { m[h] = -FLT_MAX; l[h] = 0.0f; }
        memset(acc, 0, (size_t)(H * V) * sizeof(float));
    }
    for (j0 = ja; j0 < jb; j0 += LATTN__AQ_BLK) {
        const int64_t n = LATTN__MIN((int64_t)LATTN__AQ_BLK, jb - j0);
        for (j = 0; j < n; j++) {                                    /* scores, entry by entry */
            int vis = a->mask != LATTN_MASK_FN || lattn__vis(a, sq, i, j0 + j);
            for (qi = 0; qi < nq; qi++)
                for (h = 0; h < H; h++)
                    sc[(qi * H + h) * LATTN__AQ_BLK + j] = vis ? dm->s * lattn_vec_dot((size_t)K, q + qi * qs + h * K, kc + (j0 + j) * ks + h / G * K)
                                                               : -HUGE_VALF;
        }
        for (h = 0; h < NH; h++) {                                   /* per query and head: max, rescale, exp */
            float *r = sc + h * LATTN__AQ_BLK, *acc = part + (size_t)(h / H) * ps, *m = acc + H * V + h % H, *l = m + H, mb = -HUGE_VALF, c;
            for (j = 0; j < n; j++) if (!(r[j] <= mb)) mb = r[j];    /* NaN sticks */
            if (mb == -HUGE_VALF) { for (j = 0; j < n; j++) r[j] = 0.0f; continue; }
            mb = mb > *m ? mb : *m;
            c = expf(*m - mb);
            for (j = 0; j < n; j++) r[j] -= mb;
            lattn_vec_exp((size_t)n, r, r);
            lattn_vec_scale((size_t)V, c, acc + h % H * V);
            *l = c * *l + lattn_vec_sum((size_t)n, r);
            *m = mb;
        }
        for (j = 0; j < n; j++)                                      /* values, entry by entry */
            for (h = 0; h < NH; h++)
                lattn_vec_axpy((size_t)V, sc[h * LATTN__AQ_BLK + j], vc + (j0 + j) * vs + h % H / G * V, part + (size_t)(h / H) * ps + h % H * V);
    }
}
/* Merge the nseg partials of one query (all heads) into o [H][V] and lse [H]. */
static void lattn__attn_merge(int64_t H, int64_t V, int64_t nseg, float *parts, float *o, float *lse) {
    const int64_t P = H * (V + 2);
    int64_t h, s, c;
    for (h = 0; h < H; h++) {
        float m = -FLT_MAX, l = 0.0f, *y = o + h * V;
        for (s = 0; s < nseg; s++) { float ms = parts[s * P + H * V + h]; if (!(ms <= m)) m = ms; }
        for (c = 0; c < V; c++) y[c] = 0.0f;
        for (s = 0; s < nseg; s++) {
            float f = expf(parts[s * P + H * V + h] - m);
            l += f * parts[s * P + H * V + H + h];
            lattn_vec_axpy((size_t)V, f, parts + s * P + h * V, y);
        }
        if (lse) lse[h] = m + logf(l);
        lattn_vec_scale((size_t)V, 1.0f / (l > FLT_MIN ? l : FLT_MIN), y);
    }
}

static lattn_status lattn__attn_steps(lattn_ctx *ctx, const lattn_attn_args *a);
/* >>attn.step ------------------------------------------------------------------------------------
   each query against its KV cache (or the call's own keys), segments of 512 keys merged by lse */
LATTN__DEF lattn_status lattn_attn_step(lattn_ctx *ctx, const lattn_attn_args *a, lattn_kv_cache *c) {
    const char *who = "lattn_attn_step";
    lattn__attn_dims dm;
    int64_t b, w, K, V, ns;
    size_t n, P;
    float *ws;
    int nthr = lattn__threads(ctx);
    if (!c) return lattn__attn_steps(ctx, a);
    LATTN__TRY(lattn__attn_check(ctx, who, a, 1, &dm));
    if (a->T != 1 || a->offsets) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: with a cache, needs T == 1 and no offsets", who);
    if (a->mask == LATTN_MASK_FULL) return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: a decoder cannot see future keys (mask FULL)", who);
    if (!c->k || !c->v || !c->len) return lattn__fail(ctx, LATTN_E_NULL, "%s: the cache's buffers are NULL", who);
    K = a->K;
    V = a->V;
    if (c->B != a->B || c->H_kv != dm.Hkv || c->K != K || c->V != V || c->cap < 1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: cache [%lld][%lld][%lld][%lld|%lld] does not match the call", who,
                           (long long)c->B, (long long)c->cap, (long long)c->H_kv, (long long)c->K, (long long)c->V);
    for (b = 0; b < a->B; b++)
        if (c->len[b] < 0 || c->len[b] >= c->cap)
            return lattn__fail(ctx, LATTN_E_SHAPE, "%s: cache of sequence %lld holds %lld of %lld entries", who,
                               (long long)b, (long long)c->len[b], (long long)c->cap);
    for (b = 0, ns = 1; b < a->B; b++) ns = LATTN__MAX(ns, lattn__attn_nseg(a, c->len[b]));
    P = (size_t)(a->H * (V + 2));
    if (lattn_size_mul(&n, (size_t)(a->B * ns), P) != LATTN_OK || lattn_size_add(&n, n, (size_t)nthr * (size_t)(a->H * LATTN__AQ_BLK)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, n, who));
    for (b = 0; b < a->B; b++) {
        int64_t e = (b * c->cap + c->len[b]) * dm.Hkv;
        memcpy(c->k + e * K, a->k + b * dm.Hkv * K, (size_t)(dm.Hkv * K) * sizeof(float));
        memcpy(c->v + e * V, a->v + b * dm.Hkv * V, (size_t)(dm.Hkv * V) * sizeof(float));
    }
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (w = 0; w < a->B * ns; w++) {                                /* (sequence, segment) */
        int64_t bb = w / ns, sg = w % ns;
        if (sg < lattn__attn_nseg(a, c->len[bb]))
            lattn__attn_seg(a, &dm, bb, 1, a->q + bb * a->H * K, 0, c->k + bb * c->cap * dm.Hkv * K, dm.Hkv * K,
                            c->v + bb * c->cap * dm.Hkv * V, dm.Hkv * V, c->len[bb], sg, ws + (size_t)w * P, 0,
                            ws + (size_t)(a->B * ns) * P + (size_t)lattn__thread_id() * (size_t)(a->H * LATTN__AQ_BLK));
    }
    for (b = 0; b < a->B; b++)
        lattn__attn_merge(a->H, V, lattn__attn_nseg(a, c->len[b]), ws + (size_t)(b * ns) * P, a->o + b * a->H * V,
                          a->lse ? a->lse + b * a->H : NULL);
    for (b = 0; b < a->B; b++) c->len[b]++;
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

/* _step without a cache, the decoder's loop over a whole call: query i of a sequence meets keys [0, i] of the same
   sequence through the step's kernel (segments, merge), the call's k and v serving as the cache. */
static lattn_status lattn__attn_steps(lattn_ctx *ctx, const lattn_attn_args *a) {
    const char *who = "lattn_attn_step";
    lattn__attn_dims dm;
    int64_t w, ns;
    size_t P;
    float *ws;
    int nthr = lattn__threads(ctx);
    LATTN__TRY(lattn__attn_check(ctx, who, a, 1, &dm));
    if (a->mask == LATTN_MASK_FULL) return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: a decoder cannot see future keys (mask FULL)", who);
    if (a->T == 0) return lattn__ok(ctx);
    ns = (dm.maxlen + LATTN__AQ_SEG - 1) / LATTN__AQ_SEG;            /* the most segments a query has */
    P = (size_t)(a->H * (a->V + 2));
    LATTN__TRY(lattn__alloc_floats(ctx, &ws, (size_t)nthr * ((size_t)ns * P + (size_t)(a->H * LATTN__AQ_BLK)), who));
    LATTN__PRAGMA(omp parallel for schedule(dynamic, 16) num_threads(nthr))
    for (w = 0; w < a->B * a->T; w++) {                               /* each query row of the call */
        float *parts = ws + (size_t)lattn__thread_id() * ((size_t)ns * P + (size_t)(a->H * LATTN__AQ_BLK));
        int64_t sq = 0, t0, len, i, sg;
        while (a->offsets && w >= a->offsets[sq + 1]) sq++;
        if (!a->offsets) sq = w / a->T;
        lattn__seq(a->offsets, a->T, sq, &t0, &len);
        i = w - t0;
        for (sg = 0; sg < lattn__attn_nseg(a, i); sg++)
            lattn__attn_seg(a, &dm, sq, 1, a->q + w * a->H * a->K, 0, a->k + t0 * dm.Hkv * a->K, dm.Hkv * a->K, a->v + t0 * dm.Hkv * a->V,
                            dm.Hkv * a->V, i, sg, parts + (size_t)sg * P, 0, parts + (size_t)ns * P);
        lattn__attn_merge(a->H, a->V, lattn__attn_nseg(a, i), parts, a->o + w * a->H * a->V, a->lse ? a->lse + w * a->H : NULL);
    }
    lattn__free(ctx, ws);
    return lattn__ok(ctx);
}

#ifndef LATTN_NO_MODELS
/* ================================================================================================ */
/* >>transformer implementation                                                                     */
/* ================================================================================================ */
enum { LATTN__TF_LN1, LATTN__TF_QKV, LATTN__TF_WO, LATTN__TF_LN2, LATTN__TF_WG, LATTN__TF_WU, LATTN__TF_WD, LATTN__TF_N };
enum { LATTN__TG_EMBED, LATTN__TG_NORM, LATTN__TG_N };
static const char *const lattn__tf_names[LATTN__TF_N] = {
    "attn_norm.weight", "attn.qkv_proj.weight", "attn.c_proj.weight", "mlp_norm.weight", "mlp.gate_proj.weight",
    "mlp.up_proj.weight", "mlp.down_proj.weight"
};
static const char *const lattn__tg_names[LATTN__TG_N] = { "wte.weight", "norm.weight" };

LATTN__DEF lattn_tf_config lattn_tf_config_sps(const char *scale) {
    static const struct { const char *name; int64_t d, L; } t[5] = {
        { "xs", 512, 8 }, { "s", 768, 12 }, { "m", 1024, 24 }, { "l", 1280, 36 }, { "xl", 1600, 48 } };
    lattn_tf_config c;
    int i;
    memset(&c, 0, sizeof c);
    for (i = 0; i < 5 && scale; i++)
        if (strcmp(scale, t[i].name) == 0) {
            c.n_layers = t[i].L;
            c.D = t[i].d;
            c.K = 64;
            c.H = c.H_kv = t[i].d / 64;
            c.ffn = 3 * t[i].d;
            c.vocab = 50304;
        }
    c.window = -1;
    c.rope_theta = 10000.0;
    c.norm_eps = 1e-6f;
    return c;
}
LATTN__DEF lattn_tf_config lattn_tf_config_small(void) {
    lattn_tf_config c;
    c.n_layers = 2;
    c.D = 64;
    c.H = 4;
    c.H_kv = 2;
    c.K = 16;
    c.ffn = 192;
    c.vocab = 256;
    c.window = -1;
    c.rope_theta = 10000.0;
    c.norm_eps = 1e-6f;
    return c;
}
static int64_t lattn__tf_params(const lattn_tf_config *c) {
    int64_t t[6][4];
    int n = 0;
    if (!c || c->n_layers < 1 || c->D < 1 || c->H < 1 || c->H_kv < 1 || c->K < 1 || c->ffn < 1 || c->vocab < 0) return -1;
    if (c->H > INT64_MAX / 4 || c->H_kv > INT64_MAX / 4) return -1;
#define LATTN__TERM(a_, b_, c_, d_) do { t[n][0] = (a_); t[n][1] = (b_); t[n][2] = (c_); t[n][3] = (d_); n++; } while (0)
    if (c->vocab > 0) LATTN__TERM(c->vocab, c->D, 1, 1);                 /* tied embedding */
    LATTN__TERM(c->n_layers, c->D, c->H + 2 * c->H_kv, c->K);     /* W_qkv */
    LATTN__TERM(c->n_layers, c->H, c->K, c->D);                   /* W_o */
    LATTN__TERM(c->n_layers, 3, c->D, c->ffn);                           /* W_g, W_u, W_d */
    LATTN__TERM(c->n_layers, 2, c->D, 1);                                /* the two norm gains */
    if (c->vocab > 0) LATTN__TERM(c->D, 1, 1, 1);                        /* final norm */
#undef LATTN__TERM
    return lattn__laplace_sum(n, t);
}
LATTN__DEF lattn_status lattn_tf_params(const lattn_tf_config *c, size_t *out) {
    return lattn__size_out(lattn__tf_params(c), out);
}
static lattn_status lattn__tf_check_cfg(lattn_ctx *ctx, const char *who, const lattn_tf_config *c) {
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: configuration is NULL", who);
    if (c->n_layers < 1 || c->D < 1 || c->H < 1 || c->H_kv < 1 || c->K < 2 || c->ffn < 1 || c->vocab < 0 || c->window < -1)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: every size must be >= 1 (head_dim >= 2, vocab >= 0, window >= -1)", who);
    if (c->n_layers > LATTN__LAPLACE_MAX_LAYERS || c->K % 2 || c->H % c->H_kv)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: n_layers = %lld, head_dim = %lld (even), H = %lld (a multiple of H_kv = %lld)",
                           who, (long long)c->n_layers, (long long)c->K, (long long)c->H, (long long)c->H_kv);
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta) || !(c->norm_eps > 0.0f) || !isfinite(c->norm_eps))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: rope_theta and norm_eps must be positive and finite", who);
    if (lattn__tf_params(c) < 0 || c->D > INT32_MAX || c->ffn > INT32_MAX || c->vocab > INT32_MAX ||
        (c->H + 2 * c->H_kv) * c->K > INT32_MAX)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the model's sizes overflow", who);
    return LATTN_OK;
}
static float *lattn__tw(const lattn_tf_model *m, int64_t l, int slot) { return m->tensors[l * LATTN__TF_N + slot].data; }
static float *lattn__tg(const lattn_tf_model *m, int slot) { return m->tensors[m->cfg.n_layers * LATTN__TF_N + slot].data; }

static lattn_status lattn__tf_alloc(lattn_ctx *ctx, lattn_tf_model *m, const lattn_tf_config *c, const char *who) {
    int64_t L, i, nt, hd;
    memset(m, 0, sizeof *m);
    LATTN__TRY(lattn__tf_check_cfg(ctx, who, c));
    L = c->n_layers;
    hd = c->K;
    nt = L * LATTN__TF_N + (c->vocab > 0 ? LATTN__TG_N : 0);
    LATTN__TRY(lattn__table_new(ctx, who, nt, 0, &m->tensors));
    for (i = 0; i < nt; i++) {
        lattn_tensor *t = &m->tensors[i];
        int slot = i < L * LATTN__TF_N ? (int)(i % LATTN__TF_N) : LATTN__TF_N + (int)(i - L * LATTN__TF_N);
        if (slot < LATTN__TF_N) snprintf(t->name, sizeof t->name, "layers.%lld.%s", (long long)(i / LATTN__TF_N), lattn__tf_names[slot]);
        else snprintf(t->name, sizeof t->name, "%s", lattn__tg_names[slot - LATTN__TF_N]);
        t->ndim = 2;
        switch (slot) {
        case LATTN__TF_QKV: t->shape[0] = (c->H + 2 * c->H_kv) * hd; t->shape[1] = c->D; break;
        case LATTN__TF_WO:  t->shape[0] = c->D; t->shape[1] = c->H * hd; break;
        case LATTN__TF_WG: case LATTN__TF_WU: t->shape[0] = c->ffn; t->shape[1] = c->D; break;
        case LATTN__TF_WD:  t->shape[0] = c->D; t->shape[1] = c->ffn; break;
        case LATTN__TF_N + LATTN__TG_EMBED: t->shape[0] = c->vocab; t->shape[1] = c->D; break;
        default: t->ndim = 1; t->shape[0] = c->D; break;                /* norm gains */
        }
    }
    if (lattn__arena_bind(ctx, who, m->tensors, nt, &m->arena, &m->n_params) != LATTN_OK) { memset(m, 0, sizeof *m); return LATTN_E_NOMEM; }
    m->cfg = *c;
    m->n_tensors = nt;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_tf_init(lattn_ctx *ctx, lattn_tf_model *m, const lattn_tf_config *c, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    int64_t l;
    if (!m) return lattn__fail(ctx, LATTN_E_NULL, "lattn_tf_init: model is NULL");
    LATTN__TRY(lattn__tf_alloc(ctx, m, c, "lattn_tf_init"));
    lattn__arena_init(m->tensors, m->n_tensors, &r);
    for (l = 0; l < c->n_layers; l++) {                  /* GPT-2's scaled residual projections */
        lattn_tensor *t = &m->tensors[l * LATTN__TF_N + LATTN__TF_WO];
        lattn_rng_fill_normal(&r, t->data, t->count, 0.0f, (float)(0.02 / sqrt(2.0 * (double)c->n_layers)));
    }
    return lattn__ok(ctx);
}
LATTN__DEF void lattn_tf_free(lattn_ctx *ctx, lattn_tf_model *m) {
    if (!m) return;
    lattn__free(ctx, m->arena);
    lattn__free(ctx, m->tensors);
    memset(m, 0, sizeof *m);
}
LATTN__DEF lattn_tensor *lattn_tf_tensor(const lattn_tf_model *m, const char *name) {
    return m ? lattn__arena_find(m->tensors, m->n_tensors, name) : NULL;
}
static int lattn__tf_fields(lattn_tf_config *c, lattn__cfield *fl) {
    static const char *const keys[8] = { "tf.n_layers", "tf.D", "tf.H", "tf.H_kv", "tf.K", "tf.ffn", "tf.vocab", "tf.window" };
    int64_t *p[8];
    int i;
    p[0] = &c->n_layers;
    p[1] = &c->D;
    p[2] = &c->H;
    p[3] = &c->H_kv;
    p[4] = &c->K;
    p[5] = &c->ffn;
    p[6] = &c->vocab;
    p[7] = &c->window;
    memset(fl, 0, 10 * sizeof *fl);
    for (i = 0; i < 8; i++) { fl[i].key = keys[i]; fl[i].i = p[i]; }
    fl[8].key = "tf.rope_theta";
    fl[8].d = &c->rope_theta;
    fl[9].key = "tf.norm_eps";
    fl[9].f = &c->norm_eps;
    return 10;
}
LATTN__DEF lattn_status lattn_tf_serialize(lattn_ctx *ctx, const lattn_tf_model *m, unsigned char **out, size_t *size) {
    lattn__cfield fl[LATTN__CFG_MAX];
    lattn_tf_config c;
    int n;
    if (!m || !m->arena || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "lattn_tf_serialize: NULL argument");
    c = m->cfg;
    n = lattn__tf_fields(&c, fl);
    return lattn__arena_serialize(ctx, "lattn_tf_serialize", m->tensors, m->n_tensors, fl, n, out, size);
}
LATTN__DEF lattn_status lattn_tf_init_st(lattn_ctx *ctx, lattn_tf_model *m, const lattn_st_file *f, const char *prefix) {
    const char *who = "lattn_tf_load";
    lattn_tf_config c = lattn_tf_config_small();
    lattn__cfield fl[LATTN__CFG_MAX];
    int n;
    lattn_status st;
    if (!m || !f) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    memset(m, 0, sizeof *m);
    if (!prefix) prefix = "";
    if (strlen(prefix) >= LATTN_NAME_MAX) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: prefix too long", who);
    n = lattn__tf_fields(&c, fl);
    LATTN__TRY(lattn__cfg_read(ctx, who, f, fl, n));
    if ((st = lattn__tf_alloc(ctx, m, &c, who)) != LATTN_OK) return lattn__as_format(ctx, st);
    if ((st = lattn__arena_load(ctx, who, m->tensors, m->n_tensors, f, prefix)) != LATTN_OK) { lattn_tf_free(ctx, m); return st; }
    return lattn__ok(ctx);
}
#ifndef LATTN_NO_STDIO
LATTN__MODEL_FILES(tf, lattn_tf_model)
#endif

LATTN__DEF lattn_status lattn_tf_cache_init(lattn_ctx *ctx, lattn_tf_cache *c, const lattn_tf_model *m, int64_t B, int64_t cap) {
    const char *who = "lattn_tf_cache_init";
    int64_t d[5];
    size_t n, nl;
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: cache is NULL", who);
    memset(c, 0, sizeof *c);
    if (!m || !m->arena) return lattn__fail(ctx, LATTN_E_NULL, "%s: model is NULL", who);
    if (B < 1 || cap < 1) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, cap = %lld", who, (long long)B, (long long)cap);
    d[0] = 2 * m->cfg.n_layers;
    d[1] = B;
    d[2] = cap;
    d[3] = m->cfg.H_kv;
    d[4] = m->cfg.K;
    LATTN__TRY(lattn__check_count(ctx, who, "the cache", 5, d));
    n = (size_t)(2 * m->cfg.n_layers * B) * (size_t)(cap * m->cfg.H_kv * m->cfg.K);
    nl = (size_t)((m->cfg.n_layers + 1) * B);
    LATTN__TRY(lattn__alloc_floats(ctx, &c->k, n, who));
    c->len = (int64_t *)lattn__alloc(ctx, nl * sizeof(int64_t));
    if (!c->len) { lattn__free(ctx, c->k); memset(c, 0, sizeof *c); return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who); }
    memset(c->len, 0, nl * sizeof(int64_t));
    c->v = c->k + n / 2;
    c->pos = c->len + m->cfg.n_layers * B;
    c->B = B;
    c->cap = cap;
    c->n_layers = m->cfg.n_layers;
    c->H_kv = m->cfg.H_kv;
    c->K = m->cfg.K;
    return lattn__ok(ctx);
}
LATTN__DEF void lattn_tf_cache_free(lattn_ctx *ctx, lattn_tf_cache *c) {
    if (!c) return;
    lattn__free(ctx, c->k);
    lattn__free(ctx, c->len);
    memset(c, 0, sizeof *c);
}
LATTN__DEF void lattn_tf_cache_reset(lattn_tf_cache *c, int64_t b) {
    int64_t l;
    if (!c || !c->len || b < 0 || b >= c->B) return;
    for (l = 0; l < c->n_layers; l++) c->len[l * c->B + b] = 0;
    c->pos[b] = 0;
}

/* ---- forward ------------------------------------------------------------------------------------ */
static lattn_status lattn__tf_args(lattn_ctx *ctx, const char *who, const lattn_tf_model *m, int64_t B, int64_t T,
                                   const int32_t *tokens, const float *x, const float *out, const double *loss) {
    int64_t i, dims[3];
    const lattn_tf_config *c;
    if (!m || !m->arena) return lattn__fail(ctx, LATTN_E_NULL, "%s: model is NULL", who);
    c = &m->cfg;
    if (c->vocab > 0 ? !tokens : !x) return lattn__fail(ctx, LATTN_E_NULL, "%s: %s is NULL", who, c->vocab > 0 ? "tokens" : "x");
    if (!out && !(loss && c->vocab > 0)) return lattn__fail(ctx, LATTN_E_NULL, "%s: no output (logits or loss)", who);
    if (B < 1 || T < 0) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, T = %lld", who, (long long)B, (long long)T);
    dims[0] = B;
    dims[1] = T;
    dims[2] = LATTN__MAX(LATTN__MAX(c->D, c->vocab), LATTN__MAX(c->ffn, (c->H + 2 * c->H_kv) * c->K));
    LATTN__TRY(lattn__check_count(ctx, who, "the activations", 3, dims));
    for (i = 0; tokens && c->vocab > 0 && i < B * T; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab)
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: tokens[%lld] = %d is outside [0, %lld)", who, (long long)i,
                               (int)tokens[i], (long long)c->vocab);
    return LATTN_OK;
}
/* RoPE's angle of pair j at position p (in double: every form rounds the same cos and sin). */
static double lattn__rope_angle(const lattn_tf_config *c, int64_t p, int64_t j) {
    return (double)p * pow(c->rope_theta, -2.0 * (double)j / (double)c->K);
}
static void lattn__rmsnorm_d(int64_t n, const double *x, const float *g, double eps, double *y) {
    double r = lattn__rsqrt_mean_sq_d(n, x, eps);
    int64_t i;
    for (i = 0; i < n; i++) y[i] = x[i] * r * (double)g[i];
}
/* -ln softmax(z)[target] over n logits, in double. */
static double lattn__nll_d(int64_t n, const double *z, int64_t target) {
    double mx = -HUGE_VAL, s = 0;
    int64_t i;
    for (i = 0; i < n; i++) if (!(z[i] <= mx)) mx = z[i];
    for (i = 0; i < n; i++) s += exp(z[i] - mx);
    return mx + log(s) - z[target];
}

/* What a forward runs over: R rows per sequence (T tokens, or the 2T slots of the SPS transformer),
   each with an embedding id (or a hidden-state row), a RoPE position and a document; attention under
   the model's causal / window mask or a visibility function on document-local row indices; the
   logits of token t read from row ro0 + t·ros; the loss over t < T-1 with target tokens[t+1],
   skipping t whose token is skip0 or skip1 (-1: none). */
typedef struct lattn__tf_rows {
    int64_t R, T;
    const int32_t *ids;                  /* [B][R] (vocab > 0) */
    const float *x;                      /* [B][R][d] (vocab = 0) */
    const int64_t *pos;                  /* [B][R]; NULL: r */
    const int64_t *off; int64_t n_off;   /* documents over the B·R rows; NULL: one per sequence */
    lattn_visible_fn vis;
    lattn_visible_block_fn vis_block;
    const void *user;
    int64_t ro0, ros;
    const int64_t *ro_rows;              /* [B][T] readout row of each token (sequence-local); NULL: ro0 + t·ros */
    const int32_t *tokens;               /* [B][T] */
    int32_t skip0, skip1;
    void (*kv_hook)(void *user, int64_t layer, const float *k, const float *v);   /* after RoPE (prefill) */
    void *hook_user;
} lattn__tf_rows;
static void lattn__tf_rows_plain(lattn__tf_rows *rw, int64_t T, const int32_t *tokens, const float *x) {
    memset(rw, 0, sizeof *rw);
    rw->R = rw->T = T;
    rw->ids = tokens;
    rw->x = x;
    rw->ros = 1;
    rw->tokens = tokens;
    rw->skip0 = rw->skip1 = -1;
}
static int lattn__tf_counted(const lattn__tf_rows *rw, int64_t b, int64_t t) {
    int32_t tok;
    if (t + 1 >= rw->T) return 0;
    tok = rw->tokens[b * rw->T + t];
    return tok != rw->skip0 && tok != rw->skip1;
}
/* First row (sequence-local) of the document holding row r of sequence b; *doc: its index. */
static int64_t lattn__tf_doc0(const lattn__tf_rows *rw, int64_t b, int64_t r, int64_t *doc) {
    int64_t g = b * rw->R + r, i;
    *doc = b;
    if (!rw->off) return 0;
    for (i = 0; i < rw->n_off && rw->off[i + 1] <= g; i++) {}
    *doc = i;
    return rw->off[i] - b * rw->R;
}
static int64_t lattn__tf_readout(const lattn__tf_rows *rw, int64_t b, int64_t t) {
    return rw->ro_rows ? rw->ro_rows[b * rw->T + t] : rw->ro0 + t * rw->ros;
}

/* The teaching form: every sequence row by row, in double, with its KV cache in double. */
static lattn_status lattn__tf_ref_rows(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, const lattn__tf_rows *rw,
                                       float *logits, double *logits64, double *loss, const char *who) {
    const lattn_tf_config *c = &m->cfg;
    const int64_t d = c->D, H = c->H, G = c->H / c->H_kv, hd = c->K, L = c->n_layers, R = rw->R;
    const int64_t NQ = (H + 2 * c->H_kv) * hd, nout = c->vocab > 0 ? c->vocab : d;
    int64_t b, r, l, h, i, e, cnt = 0;
    double *buf, *kc, *vc, *xd, *ad, *qkv, *od, *f1, *f2, *lg, *sc, nll = 0.0, s;
    size_t n;
    if (loss) *loss = NAN;
    if (R == 0) return lattn__ok(ctx);
    /* cache 2·L·R·H_kv·hd, then x, a, qkv, o, f1, f2, logits, scores */
    n = 2 * (size_t)(L * R) * (size_t)(c->H_kv * hd) + 2 * (size_t)d + (size_t)NQ + (size_t)(H * hd) + 2 * (size_t)c->ffn +
        (size_t)nout + (size_t)R;
    if (lattn_size_mul(&n, n, sizeof(double)) != LATTN_OK || !(buf = (double *)lattn__alloc(ctx, n)))
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the workspace", who);
    kc = buf;
    vc = kc + L * R * c->H_kv * hd;
    xd = vc + L * R * c->H_kv * hd;
    ad = xd + d;
    qkv = ad + d;
    od = qkv + NQ;
    f1 = od + H * hd;
    f2 = f1 + c->ffn;
    lg = f2 + c->ffn;
    sc = lg + nout;
    for (b = 0; b < B; b++)
        for (r = 0; r < R; r++) {
            int64_t doc;
            const int64_t row = b * R + r, ds = lattn__tf_doc0(rw, b, r, &doc), p = rw->pos ? rw->pos[row] : r;
            for (i = 0; i < d; i++) xd[i] = c->vocab > 0 ? (double)lattn__tg(m, LATTN__TG_EMBED)[(int64_t)rw->ids[row] * d + i] : (double)rw->x[row * d + i];
            for (l = 0; l < L; l++) {
                double *kl = kc + l * R * c->H_kv * hd, *vl = vc + l * R * c->H_kv * hd;
                /* q | k | v = W_qkv RMSNorm(x); RoPE on q and k at position p; k, v into the cache */
                lattn__rmsnorm_d(d, xd, lattn__tw(m, l, LATTN__TF_LN1), c->norm_eps, ad);
                lattn__matvec_d(NQ, d, lattn__tw(m, l, LATTN__TF_QKV), ad, qkv, 0);
                for (h = 0; h < H + c->H_kv; h++)
                    for (i = 0; i < hd / 2; i++) {
                        double *u = qkv + h * hd + 2 * i, an = lattn__rope_angle(c, p, i), u0 = u[0], u1 = u[1];
                        u[0] = u0 * cos(an) - u1 * sin(an);
                        u[1] = u0 * sin(an) + u1 * cos(an);
                    }
                memcpy(kl + r * c->H_kv * hd, qkv + H * hd, (size_t)(c->H_kv * hd) * sizeof(double));
                memcpy(vl + r * c->H_kv * hd, qkv + (H + c->H_kv) * hd, (size_t)(c->H_kv * hd) * sizeof(double));
                /* o_h = Σ_e softmax_e(q_h·k_e / sqrt(hd)) v_e over the visible rows e <= r of this document */
                for (h = 0; h < H; h++) {
                    int64_t kvh = h / G;
                    double mx = -HUGE_VAL, den = 0.0;
                    for (e = ds; e <= r; e++) {
                        int v = rw->vis ? rw->vis(rw->user, doc, r - ds, e - ds) != 0 : c->window < 0 || r - e <= c->window;
                        for (s = 0.0, i = 0; v && i < hd; i++) s += qkv[h * hd + i] * kl[(e * c->H_kv + kvh) * hd + i];
                        sc[e] = v ? s / sqrt((double)hd) : -HUGE_VAL;
                        if (!(sc[e] <= mx)) mx = sc[e];
                    }
                    for (i = 0; i < hd; i++) od[h * hd + i] = 0.0;
                    for (e = ds; e <= r && mx != -HUGE_VAL; e++) {
                        double pe = sc[e] == -HUGE_VAL ? 0.0 : exp(sc[e] - mx);
                        den += pe;
                        for (i = 0; pe != 0.0 && i < hd; i++) od[h * hd + i] += pe * vl[(e * c->H_kv + kvh) * hd + i];
                    }
                    for (i = 0; den != 0.0 && i < hd; i++) od[h * hd + i] /= den;
                }
                lattn__matvec_d(d, H * hd, lattn__tw(m, l, LATTN__TF_WO), od, xd, 1);             /* x += W_o o */
                /* x += W_d (SiLU(W_g a) ⊙ W_u a),  a = RMSNorm(x) */
                lattn__rmsnorm_d(d, xd, lattn__tw(m, l, LATTN__TF_LN2), c->norm_eps, ad);
                lattn__matvec_d(c->ffn, d, lattn__tw(m, l, LATTN__TF_WG), ad, f1, 0);
                lattn__matvec_d(c->ffn, d, lattn__tw(m, l, LATTN__TF_WU), ad, f2, 0);
                for (i = 0; i < c->ffn; i++) f1[i] = lattn__silu_d(f1[i]) * f2[i];
                lattn__matvec_d(d, c->ffn, lattn__tw(m, l, LATTN__TF_WD), f1, xd, 1);
            }
            if (r >= rw->ro0 && (r - rw->ro0) % rw->ros == 0 && (r - rw->ro0) / rw->ros < rw->T) {   /* a readout row */
                const int64_t t = (r - rw->ro0) / rw->ros, orow = b * rw->T + t;
                if (c->vocab > 0) {                                                       /* tied head */
                    lattn__rmsnorm_d(d, xd, lattn__tg(m, LATTN__TG_NORM), c->norm_eps, ad);
                    lattn__matvec_d(c->vocab, d, lattn__tg(m, LATTN__TG_EMBED), ad, lg, 0);
                    if (lattn__tf_counted(rw, b, t)) { nll += lattn__nll_d(c->vocab, lg, rw->tokens[orow + 1]); cnt++; }
                } else memcpy(lg, xd, (size_t)d * sizeof(double));
                for (i = 0; logits && i < nout; i++) logits[orow * nout + i] = (float)lg[i];
                for (i = 0; logits64 && i < nout; i++) logits64[orow * nout + i] = lg[i];
            }
        }
    if (loss && cnt > 0) *loss = nll / (double)cnt;
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_tf_forward_ref(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, int64_t T,
                                             const int32_t *tokens, const float *x, float *logits, double *loss,
                                             double *logits64) {
    lattn__tf_rows rw;
    LATTN__TRY(lattn__tf_args(ctx, "lattn_tf_forward_ref", m, B, T, tokens, x, logits, loss));
    lattn__tf_rows_plain(&rw, T, tokens, x);
    return lattn__tf_ref_rows(ctx, m, B, &rw, logits, logits64, loss, "lattn_tf_forward_ref");
}

/* Row-wise RMSNorm of X [M][n] times the gain g, into Y. */
static void lattn__rmsnorm_rows(int nthr, int64_t M, int64_t n, const float *X, const float *g, float eps, float *Y) {
    int64_t r;
    (void)nthr;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (r = 0; r < M; r++) {
        const float *x = X + r * n;
        float *y = Y + r * n, inv = 1.0f / sqrtf(lattn_vec_dot((size_t)n, x, x) / (float)n + eps);
        int64_t i;
        for (i = 0; i < n; i++) y[i] = x[i] * inv * g[i];
    }
}
/* q, k rows of QKV [M][NQ] turned by RoPE into Q [M][H·hd] and Kb [M][H_kv·hd], v copied into Vb;
   row r reads its cos, sin pairs at cs + pi[r]·hd (pi NULL: row r's own entry). */
static void lattn__tf_rope_rows(int nthr, const lattn_tf_config *c, int64_t M, const int64_t *pi, const float *QKV, float *Q,
                                float *Kb, float *Vb, const float *cs) {
    const int64_t hd = c->K, H = c->H, Hk = c->H_kv, NQ = (H + 2 * Hk) * hd, half = hd / 2;
    int64_t r;
    (void)nthr;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (r = 0; r < M; r++) {
        const float *src = QKV + r * NQ, *tab = cs + (pi ? pi[r] : r) * hd;
        int64_t h, j;
        for (h = 0; h < H + Hk; h++) {
            float *dst = h < H ? Q + r * H * hd + h * hd : Kb + r * Hk * hd + (h - H) * hd;
            const float *u = src + h * hd;
            for (j = 0; j < half; j++) {
                float co = tab[2 * j], si = tab[2 * j + 1], u0 = u[2 * j], u1 = u[2 * j + 1];
                dst[2 * j] = u0 * co - u1 * si;
                dst[2 * j + 1] = u0 * si + u1 * co;
            }
        }
        memcpy(Vb + r * Hk * hd, src + (H + Hk) * hd, (size_t)(Hk * hd) * sizeof(float));
    }
}

/* The two halves of a layer around attention, shared by the forward, the step and the SPS step:
   rows X [M][d] → q, k (RoPE at table entries pi[r], NULL: r), v; and after attention's O,
   X += O W_oᵀ, then X += (SiLU(b W_gᵀ) ⊙ b W_uᵀ) W_dᵀ with b = RMSNorm(X). F1 aliases QKV. */
typedef struct lattn__tf_buf { float *X, *Hn, *QKV, *Q, *Kb, *Vb, *O, *F1, *F2, *CS, *ws; } lattn__tf_buf;
static void lattn__tf_pre(int nthr, const lattn_tf_model *m, int64_t l, int64_t M, const int64_t *pi, const lattn__tf_buf *u) {
    const lattn_tf_config *c = &m->cfg;
    lattn__rmsnorm_rows(nthr, M, c->D, u->X, lattn__tw(m, l, LATTN__TF_LN1), c->norm_eps, u->Hn);
    lattn__linear(nthr, M, (c->H + 2 * c->H_kv) * c->K, c->D, u->Hn, lattn__tw(m, l, LATTN__TF_QKV), u->QKV, 0, u->ws);
    lattn__tf_rope_rows(nthr, c, M, pi, u->QKV, u->Q, u->Kb, u->Vb, u->CS);
}
static void lattn__tf_post(int nthr, const lattn_tf_model *m, int64_t l, int64_t M, const lattn__tf_buf *u) {
    const lattn_tf_config *c = &m->cfg;
    int64_t r;
    lattn__linear(nthr, M, c->D, c->H * c->K, u->O, lattn__tw(m, l, LATTN__TF_WO), u->X, 1, u->ws);   /* x += o W_oᵀ */
    lattn__rmsnorm_rows(nthr, M, c->D, u->X, lattn__tw(m, l, LATTN__TF_LN2), c->norm_eps, u->Hn);
    lattn__linear(nthr, M, c->ffn, c->D, u->Hn, lattn__tw(m, l, LATTN__TF_WG), u->F1, 0, u->ws);
    lattn__linear(nthr, M, c->ffn, c->D, u->Hn, lattn__tw(m, l, LATTN__TF_WU), u->F2, 0, u->ws);
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (r = 0; r < M; r++) {
        float *f1 = u->F1 + r * c->ffn, *f2 = u->F2 + r * c->ffn;
        int64_t j;
        lattn_vec_silu((size_t)c->ffn, f1, f1);
        for (j = 0; j < c->ffn; j++) f1[j] *= f2[j];
    }
    lattn__linear(nthr, M, c->D, c->ffn, u->F1, lattn__tw(m, l, LATTN__TF_WD), u->X, 1, u->ws);             /* x += f W_dᵀ */
}

/* The fast forward (decode = 0) over the rows rw describes, and the step (decode = 1, one row per
   sequence at the cache's positions, cache required), layer by layer over all B·R rows: threaded
   GEMMs (lattn__linear), lattn_attn_chunk or lattn_attn_step. A plain forward may prefill a cache. */
static lattn_status lattn__tf_run(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, const lattn__tf_rows *rw, float *out,
                                  double *loss, lattn_tf_cache *cache, lattn_form form, const char *who) {
    const lattn_tf_config *c = &m->cfg;
    const int64_t d = c->D, H = c->H, Hk = c->H_kv, hd = c->K, NQ = (H + 2 * Hk) * hd, R = rw->R, M = B * R;
    const int64_t nout = c->vocab > 0 ? c->vocab : d, MO = B * rw->T, RB = 64;
    int64_t l, r, b, t, npos, cnt = 0;
    int nthr = lattn__threads(ctx);
    float *buf, *LG;
    int64_t *PI = NULL;
    lattn__tf_buf u;
    size_t n, tmp, attn, ffn;
    lattn_status st = LATTN_OK;
    if (form != LATTN_FORM_STEP && loss) *loss = NAN;
    if (cache) {
        if (!cache->k || !cache->len) return lattn__fail(ctx, LATTN_E_NULL, "%s: the cache is not initialised", who);
        if (cache->B != B || cache->n_layers != c->n_layers || cache->H_kv != Hk || cache->K != hd)
            return lattn__fail(ctx, LATTN_E_SHAPE, "%s: the cache was made for another model or batch", who);
        for (b = 0; b < B; b++)
            for (l = 0; l < c->n_layers; l++) {
                int64_t len = cache->len[l * B + b];
                if (form == LATTN_FORM_STEP ? len + 1 > cache->cap : len != 0 || R > cache->cap)
                    return lattn__fail(ctx, LATTN_E_SHAPE, form == LATTN_FORM_STEP ? "%s: the cache of sequence %lld is full (%lld entries)"
                                                               : "%s: prefill needs an empty cache with room for T (sequence %lld, %lld entries)",
                                       who, (long long)b, (long long)cache->cap);
            }
    } else if (form == LATTN_FORM_STEP) return lattn__fail(ctx, LATTN_E_NULL, "%s: cache is NULL", who);
    if (R == 0) return lattn__ok(ctx);
    /* RoPE table: one entry per row when decoding, else one per position 0 .. max */
    for (r = 0, npos = R; form != LATTN_FORM_STEP && rw->pos && r < M; r++) npos = LATTN__MAX(npos, rw->pos[r] + 1);
    if (form == LATTN_FORM_STEP) npos = B;
    /* row positions (2 floats each, first: aligned), u.X, u.Hn, then u.QKV u.Q K V u.O or u.F1 u.F2, RoPE table,
       logit block, GEMM workspaces */
    attn = (size_t)(NQ + 2 * H * hd + 2 * Hk * hd);
    ffn = 2 * (size_t)c->ffn;
    if (lattn_size_mul(&n, (size_t)M, 2 * (size_t)d + LATTN__MAX(attn, ffn)) ||
        lattn_size_mul(&tmp, (size_t)npos, (size_t)hd) || lattn_size_add(&n, n, tmp) ||
        lattn_size_mul(&tmp, (size_t)RB, (size_t)nout) || lattn_size_add(&n, n, tmp) ||
        lattn_size_mul(&tmp, (size_t)nthr, LATTN__LIN_WS(LATTN__MAX(d, LATTN__MAX(c->ffn, H * hd)))) || lattn_size_add(&n, n, tmp) ||
        lattn_size_mul(&tmp, (size_t)M, 2) || lattn_size_add(&n, n, tmp))
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, n, who));
    PI = (int64_t *)(void *)buf;
    u.X = buf + 2 * M;
    u.Hn = u.X + M * d;
    u.QKV = u.Hn + M * d;
    u.Q = u.QKV + M * NQ;
    u.Kb = u.Q + M * H * hd;
    u.Vb = u.Kb + M * Hk * hd;
    u.O = u.Vb + M * Hk * hd;
    u.F1 = u.QKV;
    u.F2 = u.F1 + M * c->ffn;
    u.CS = u.QKV + M * (int64_t)LATTN__MAX(attn, ffn);
    LG = u.CS + npos * hd;
    u.ws = LG + RB * nout;
    for (t = 0; t < hd / 2; t++) {                               /* cos, sin of each pair at each position */
        double inv = pow(c->rope_theta, -2.0 * (double)t / (double)hd);
        for (r = 0; r < npos; r++) {
            double an = (double)(form == LATTN_FORM_STEP ? cache->pos[r] : r) * inv;
            u.CS[r * hd + 2 * t] = (float)cos(an);
            u.CS[r * hd + 2 * t + 1] = (float)sin(an);
        }
    }
    for (r = 0; r < M; r++) PI[r] = form == LATTN_FORM_STEP ? r : rw->pos ? rw->pos[r] : r % R;
    if (c->vocab > 0)
        for (r = 0; r < M; r++) memcpy(u.X + r * d, lattn__tg(m, LATTN__TG_EMBED) + (int64_t)rw->ids[r] * d, (size_t)d * sizeof(float));
    else memcpy(u.X, rw->x, (size_t)(M * d) * sizeof(float));

    for (l = 0; l < c->n_layers && st == LATTN_OK; l++) {
        lattn_attn_args a = LATTN__ZERO;
        lattn__tf_pre(nthr, m, l, M, PI, &u);
        if (rw->kv_hook && form != LATTN_FORM_STEP) rw->kv_hook(rw->hook_user, l, u.Kb, u.Vb);
        a.B = rw->off ? 1 : B;
        a.T = rw->off ? M : R;
        a.offsets = rw->off;
        a.n_seqs = rw->n_off;
        a.H = H;
        a.H_kv = Hk;
        a.K = hd;
        a.V = hd;
        a.q = u.Q;
        a.k = u.Kb;
        a.v = u.Vb;
        a.o = u.O;
        if (rw->vis) { a.mask = LATTN_MASK_FN; a.visible = rw->vis; a.visible_block = rw->vis_block; a.mask_user = rw->user; }
        else if (c->window >= 0) { a.mask = LATTN_MASK_WINDOW; a.window = c->window; }
        if (form == LATTN_FORM_STEP) {
            lattn_kv_cache kv;
            kv.B = B;
            kv.cap = cache->cap;
            kv.H_kv = Hk;
            kv.K = hd;
            kv.V = hd;
            kv.k = cache->k + l * B * cache->cap * Hk * hd;
            kv.v = cache->v + l * B * cache->cap * Hk * hd;
            kv.len = cache->len + l * B;
            st = lattn_attn_step(ctx, &a, &kv);
        } else {
            st = lattn_attn_chunk(ctx, &a);
            for (b = 0; st == LATTN_OK && cache && b < B; b++) {   /* prefill: the keys and values stay */
                int64_t e = (l * B + b) * cache->cap * Hk * hd;
                memcpy(cache->k + e, u.Kb + b * R * Hk * hd, (size_t)(R * Hk * hd) * sizeof(float));
                memcpy(cache->v + e, u.Vb + b * R * Hk * hd, (size_t)(R * Hk * hd) * sizeof(float));
                cache->len[l * B + b] = R;
            }
        }
        if (st != LATTN_OK) break;
        lattn__tf_post(nthr, m, l, M, &u);
    }
    if (st == LATTN_OK) {                                        /* the readout rows, gathered */
        for (r = 0; r < MO; r++)
            memmove(u.X + r * d, u.X + (r / rw->T * R + lattn__tf_readout(rw, r / rw->T, r % rw->T)) * d, (size_t)d * sizeof(float));
    }
    if (st == LATTN_OK && c->vocab > 0) {                        /* tied head, RB rows at a time */
        double nll = 0.0;
        lattn__rmsnorm_rows(nthr, MO, d, u.X, lattn__tg(m, LATTN__TG_NORM), c->norm_eps, u.Hn);
        for (r = 0; r < MO; r += RB) {
            int64_t rb = LATTN__MIN(RB, MO - r), i;
            float *z = out ? out + r * nout : LG;
            lattn__linear(nthr, rb, nout, d, u.Hn + r * d, lattn__tg(m, LATTN__TG_EMBED), z, 0, u.ws);
            for (i = 0; form != LATTN_FORM_STEP && loss && i < rb; i++) {
                int64_t row = r + i, k;
                float mx;
                double sum = 0.0;
                if (!lattn__tf_counted(rw, row / rw->T, row % rw->T)) continue;
                mx = lattn_vec_max((size_t)nout, z + i * nout);
                for (k = 0; k < nout; k++) sum += exp((double)(z[i * nout + k] - mx));
                nll += (double)mx + log(sum) - (double)z[i * nout + rw->tokens[row + 1]];
                cnt++;
            }
        }
        if (form != LATTN_FORM_STEP && loss && cnt > 0) *loss = nll / (double)cnt;
    } else if (st == LATTN_OK) memcpy(out, u.X, (size_t)(MO * d) * sizeof(float));
    if (st == LATTN_OK && cache) for (b = 0; b < B; b++) cache->pos[b] = form == LATTN_FORM_STEP ? cache->pos[b] + 1 : R;
    else if (cache)                                              /* a failure at layer l: undo layers < l */
        for (r = 0; r < l * B; r++) cache->len[r] = form == LATTN_FORM_STEP ? cache->len[r] - 1 : 0;
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_tf_forward(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, int64_t T, const int32_t *tokens,
                                         const float *x, float *logits, double *loss, lattn_tf_cache *cache) {
    lattn__tf_rows rw;
    LATTN__TRY(lattn__tf_args(ctx, "lattn_tf_forward", m, B, T, tokens, x, logits, loss));
    lattn__tf_rows_plain(&rw, T, tokens, x);
    return lattn__tf_run(ctx, m, B, &rw, logits, loss, cache, LATTN_FORM_CHUNK, "lattn_tf_forward");
}
LATTN__DEF lattn_status lattn_tf_step(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, const int32_t *tokens,
                                      const float *x, float *logits, lattn_tf_cache *cache) {
    lattn__tf_rows rw;
    LATTN__TRY(lattn__tf_args(ctx, "lattn_tf_step", m, B, 1, tokens, x, logits, NULL));
    lattn__tf_rows_plain(&rw, 1, tokens, x);
    return lattn__tf_run(ctx, m, B, &rw, logits, NULL, cache, LATTN_FORM_STEP, "lattn_tf_step");
}

/* ================================================================================================ */
/* >>sps implementation                                                                             */
/* ================================================================================================ */
static const char *const lattn__sps_names[5] = { "standard", "sps", "2x_memory", "delayed_state", "reverse_sps" };
LATTN__DEF lattn_sps_config lattn_sps_config_default(lattn_sps_variant v) {
    lattn_sps_config s;
    s.variant = v;
    s.w = 64;
    s.predict_id = 50257;
    s.eos_id = 50256;
    s.pad_id = 50303;
    return s;
}
LATTN__DEF const char *lattn_sps_variant_name(lattn_sps_variant v) {
    return (unsigned)v <= (unsigned)LATTN_SPS_REVERSE ? lattn__sps_names[v] : "unknown";
}
/* Slot parity of the persistent stream (SPS, 2x: x at even slots; Delayed, Reverse: ρ at odd). */
static int64_t lattn__sps_persist(lattn_sps_variant v) { return v == LATTN_SPS_SPS || v == LATTN_SPS_2X_MEMORY ? 0 : 1; }
/* Window in tokens of the windowed stream (2x Memory: every key). */
static int64_t lattn__sps_w(const lattn_sps_config *s) { return s->variant == LATTN_SPS_2X_MEMORY ? INT64_MAX : s->w; }
LATTN__DEF int lattn_sps_visible(const void *cfg, int64_t n, int64_t a, int64_t b) {
    const lattn_sps_config *s = (const lattn_sps_config *)cfg;
    (void)n;
    if (b > a) return 0;                                          /* causal in slot order */
    if (s->variant == LATTN_SPS_STANDARD) return 1;
    if ((b & 1) == lattn__sps_persist(s->variant)) return 1;      /* persistent key */
    return (a >> 1) - (b >> 1) <= lattn__sps_w(s);                /* windowed key: inclusive, in tokens */
}
/* A block of query slots [a0, a1) against key slots [b0, b1) (spec §5): invisible when causality
   hides it (or it is one windowed column out of reach), visible when causal and every windowed
   column is within the window, partial otherwise. */
LATTN__DEF int lattn_sps_visible_block(const void *cfg, int64_t n, int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
    const lattn_sps_config *s = (const lattn_sps_config *)cfg;
    int64_t w = lattn__sps_w(s);
    (void)n;
    if (b0 > a1 - 1) return LATTN_VIS_NONE;
    if (s->variant == LATTN_SPS_STANDARD) return b1 - 1 <= a0 ? LATTN_VIS_ALL : LATTN_VIS_SOME;
    if (b1 - b0 == 1 && (b0 & 1) != lattn__sps_persist(s->variant) && (a0 >> 1) - (b0 >> 1) > w) return LATTN_VIS_NONE;
    return b1 - 1 <= a0 && ((a1 - 1) >> 1) - (b0 >> 1) <= w ? LATTN_VIS_ALL : LATTN_VIS_SOME;
}
LATTN__DEF double lattn_sps_kv_bytes(const lattn_tf_config *c, const lattn_sps_config *s, int64_t n, int bytes_per_elem) {
    double tok, extra;
    if (!c || !s || n < 0) return -1.0;
    tok = 2.0 * (double)c->n_layers * (double)(c->H_kv * c->K) * (double)bytes_per_elem;
    extra = s->variant == LATTN_SPS_STANDARD ? 0.0 : s->variant == LATTN_SPS_2X_MEMORY ? (double)n : (double)LATTN__MIN(s->w, n);
    return ((double)n + extra) * tok;
}
static lattn_status lattn__sps_check(lattn_ctx *ctx, const char *who, const lattn_tf_model *m, const lattn_sps_config *s) {
    if (!m || !m->arena || !s) return lattn__fail(ctx, LATTN_E_NULL, "%s: model or SPS configuration is NULL", who);
    if ((unsigned)s->variant > (unsigned)LATTN_SPS_REVERSE) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: unknown variant %d", who, (int)s->variant);
    if (s->w < 0) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: window w = %lld (must be >= 0)", who, (long long)s->w);
    if (m->cfg.vocab < 1 || s->predict_id < 0 || s->predict_id >= m->cfg.vocab || s->eos_id < -1 || s->eos_id >= m->cfg.vocab ||
        s->pad_id < -1 || s->pad_id >= m->cfg.vocab)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: the <predict>, EOS and pad ids must be tokens of the model's vocabulary (%lld)",
                           who, (long long)m->cfg.vocab);
    return LATTN_OK;
}
/* 1 when token `tok` ends its document: an EOS, or a (left) pad, which is a document of its own. */
static int lattn__sps_ends(const lattn_sps_config *s, int32_t tok) { return tok == s->eos_id || (s->pad_id >= 0 && tok == s->pad_id); }
/* The official rule for pads: left pads only. */
static lattn_status lattn__sps_pads(lattn_ctx *ctx, const char *who, const lattn_sps_config *s, int64_t B, int64_t T, const int32_t *tokens) {
    int64_t b, t;
    for (b = 0; s->pad_id >= 0 && b < B; b++) {
        for (t = 0; t < T && tokens[b * T + t] == s->pad_id; t++) {}
        for (; t < T; t++)
            if (tokens[b * T + t] == s->pad_id)
                return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: token %lld of row %lld is a pad after a real token (SPS takes left pads only, "
                                   "as the official code)", who, (long long)t, (long long)b);
    }
    return LATTN_OK;
}
/* The fast form lays each document out in blocks of LATTN__SPS_BLK tokens, the block's x slots
   first, then its ρ slots ([x_0 .. x_127][ρ_0 .. ρ_127][x_128 ..] ...; a last block of m tokens
   is [x m][ρ m]): a tile of keys then holds one stream, so the window hides whole tiles of the
   windowed stream far from the diagonal (skipped), and the persistent stream's far tiles are fully
   visible (no mask). Attention does not care about the order of its rows; the visibility function
   maps rows back to slots. _ref keeps the natural order (slot 2i = x_i, 2i+1 = ρ_i). */
#define LATTN__SPS_BLK 128
/* Document-local row of token u's slot in stream s (0 = x, 1 = ρ), document of n tokens. */
static int64_t lattn__sps_row(int64_t n, int64_t u, int64_t s) {
    int64_t blk = u / LATTN__SPS_BLK, m = LATTN__MIN((int64_t)LATTN__SPS_BLK, n - blk * LATTN__SPS_BLK);
    return 2 * blk * LATTN__SPS_BLK + s * m + u % LATTN__SPS_BLK;
}
/* Inverse: the slot (2u + s) of document-local row r. */
static int64_t lattn__sps_slot(int64_t n, int64_t r) {
    int64_t blk = r / (2 * LATTN__SPS_BLK), m = LATTN__MIN((int64_t)LATTN__SPS_BLK, n - blk * LATTN__SPS_BLK);
    int64_t w = r - 2 * blk * LATTN__SPS_BLK, st = w >= m;
    return 2 * (blk * LATTN__SPS_BLK + w - st * m) + st;
}
typedef struct lattn__sps_user { const lattn_sps_config *s; const int64_t *doclen; } lattn__sps_user;
static int lattn__sps_vis_blk(const void *u, int64_t doc, int64_t i, int64_t j) {
    const lattn__sps_user *x = (const lattn__sps_user *)u;
    return lattn_sps_visible(x->s, doc, lattn__sps_slot(x->doclen[doc], i), lattn__sps_slot(x->doclen[doc], j));
}
/* A block of rows [i0, i1) x [j0, j1): when each side lies in one stream of one block, its token
   ranges decide (spec §5 in token space); otherwise partial. */
static int lattn__sps_vis_blk_block(const void *u, int64_t doc, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const lattn__sps_user *x = (const lattn__sps_user *)u;
    const int64_t n = x->doclen[doc], w = lattn__sps_w(x->s);
    int64_t a0 = lattn__sps_slot(n, i0), a1 = lattn__sps_slot(n, i1 - 1), b0 = lattn__sps_slot(n, j0), b1 = lattn__sps_slot(n, j1 - 1);
    int64_t qs = a0 & 1, ks = b0 & 1, qa = a0 >> 1, qb = (a1 >> 1) + 1, ka = b0 >> 1, kb = (b1 >> 1) + 1;
    if ((a1 & 1) != qs || (b1 & 1) != ks || qb - qa != i1 - i0 || kb - ka != j1 - j0) return LATTN_VIS_SOME;   /* mixed streams */
    if (ka > qb - 1 || (ka == qb - 1 && ks > qs)) return LATTN_VIS_NONE;                /* after every query */
    if (ks != lattn__sps_persist(x->s->variant) && qa - (kb - 1) > w) return LATTN_VIS_NONE;  /* windowed, out of reach */
    if (!(kb - 1 < qa || (kb - 1 == qa && ks <= qs))) return LATTN_VIS_SOME;             /* the causal edge */
    return ks == lattn__sps_persist(x->s->variant) || (qb - 1) - ka <= w ? LATTN_VIS_ALL : LATTN_VIS_SOME;
}
/* The rows of an SPS forward (natural order for _ref, blocked for the fast form): ids, positions,
   documents, readouts, and the visibility adapter (one allocation, released by the caller). */
typedef struct lattn__sps_plan { lattn__tf_rows rw; lattn__sps_user user; void *mem; } lattn__sps_plan;
static lattn_status lattn__sps_rows(lattn_ctx *ctx, const char *who, const lattn_tf_model *m, const lattn_sps_config *s,
                                    int64_t B, int64_t T, const int32_t *tokens, const float *logits, const double *loss,
                                    int blocked, lattn__sps_plan *pl) {
    const int64_t S = s->variant == LATTN_SPS_STANDARD ? 1 : 2, RS = S == 1 || s->variant == LATTN_SPS_REVERSE ? 0 : 1;
    lattn__tf_rows *rw = &pl->rw;
    int64_t b, i, j, n, u, d[3], *pos, *off, *len, *ro;
    int32_t *ids;
    pl->mem = NULL;
    LATTN__TRY(lattn__sps_check(ctx, who, m, s));
    LATTN__TRY(lattn__tf_args(ctx, who, m, B, T, tokens, NULL, logits, loss));
    LATTN__TRY(lattn__sps_pads(ctx, who, s, B, T, tokens));
    d[0] = B;
    d[1] = 2 * T + 1;
    d[2] = 40;
    LATTN__TRY(lattn__check_count(ctx, who, "the interleaved rows", 3, d));
    lattn__tf_rows_plain(rw, T, tokens, NULL);
    rw->R = S * T;
    rw->ro0 = RS;
    rw->ros = S;
    rw->vis = blocked && S == 2 ? lattn__sps_vis_blk : lattn_sps_visible;
    rw->vis_block = blocked && S == 2 ? lattn__sps_vis_blk_block : lattn_sps_visible_block;
    pl->user.s = s;
    rw->user = blocked && S == 2 ? (const void *)&pl->user : (const void *)s;
    rw->skip0 = s->eos_id;
    rw->skip1 = s->pad_id;
    /* positions and ids [B·S·T], offsets [B·T + 1], document lengths [B·T], readouts [B·T] */
    pl->mem = lattn__alloc(ctx, (size_t)(B * T) * (size_t)(3 * S + 4) * sizeof(int64_t) + sizeof(int64_t));
    if (!pl->mem) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    pos = (int64_t *)pl->mem;
    off = pos + B * S * T;
    len = off + B * T + 1;
    ro = len + B * T;
    ids = (int32_t *)(void *)(ro + B * T);
    for (b = 0, n = 0; b < B; b++)
        for (i = 0; i < T; i++)
            if (i == 0 || lattn__sps_ends(s, tokens[b * T + i - 1])) off[n++] = (b * T + i) * S;   /* a document starts */
    off[n] = B * S * T;
    for (i = 0; i < n; i++) {                         /* each document: its rows, natural or blocked */
        int64_t r0 = off[i], nd = (off[i + 1] - off[i]) / S, tok0 = r0 / S;
        len[i] = nd;
        for (u = 0; u < nd; u++) {
            int64_t t = tok0 + u;
            for (j = 0; j < S; j++) {
                int64_t r = r0 + (blocked && S == 2 ? lattn__sps_row(nd, u, j) : S * u + j);
                ids[r] = j ? s->predict_id : tokens[t];
                pos[r] = t % T;
                if (j == RS) ro[t] = r - t / T * S * T;
            }
        }
    }
    rw->ids = ids;
    rw->pos = pos;
    rw->off = n > 0 ? off : NULL;
    rw->n_off = n;
    rw->ro_rows = blocked ? ro : NULL;
    pl->user.doclen = len;
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_sps_forward_ref(lattn_ctx *ctx, const lattn_tf_model *m, const lattn_sps_config *s, int64_t B,
                                              int64_t T, const int32_t *tokens, float *logits, double *loss,
                                              double *logits64) {
    const char *who = "lattn_sps_forward_ref";
    lattn__sps_plan pl;
    lattn_status st;
    LATTN__TRY(lattn__sps_rows(ctx, who, m, s, B, T, tokens, logits, loss, 0, &pl));
    st = lattn__tf_ref_rows(ctx, m, B, &pl.rw, logits, logits64, loss, who);
    lattn__free(ctx, pl.mem);
    return st;
}
LATTN__DEF lattn_status lattn_sps_forward(lattn_ctx *ctx, const lattn_tf_model *m, const lattn_sps_config *s, int64_t B,
                                          int64_t T, const int32_t *tokens, float *logits, double *loss) {
    const char *who = "lattn_sps_forward";
    lattn__sps_plan pl;
    lattn_status st;
    LATTN__TRY(lattn__sps_rows(ctx, who, m, s, B, T, tokens, logits, loss, 1, &pl));
    st = lattn__tf_run(ctx, m, B, &pl.rw, logits, loss, NULL, LATTN_FORM_CHUNK, who);
    lattn__free(ctx, pl.mem);
    return st;
}

/* ---- decoding: the persistent list and the window ring ------------------------------------------ */
LATTN__DEF lattn_status lattn_sps_cache_init(lattn_ctx *ctx, lattn_sps_cache *c, const lattn_tf_model *m,
                                             const lattn_sps_config *s, int64_t B, int64_t cap) {
    const char *who = "lattn_sps_cache_init";
    int64_t d[4], L;
    size_t nl, nr, ni;
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: cache is NULL", who);
    memset(c, 0, sizeof *c);
    LATTN__TRY(lattn__sps_check(ctx, who, m, s));
    if (B < 1 || cap < 1) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: B = %lld, cap = %lld", who, (long long)B, (long long)cap);
    L = m->cfg.n_layers;
    c->width = m->cfg.H_kv * m->cfg.K;
    c->ring = s->variant == LATTN_SPS_STANDARD ? 0 : s->variant == LATTN_SPS_2X_MEMORY ? cap : LATTN__MAX((int64_t)1, LATTN__MIN(s->w, cap));
    d[0] = 2 * L;
    d[1] = B;
    d[2] = cap + c->ring;
    d[3] = c->width;
    LATTN__TRY(lattn__check_count(ctx, who, "the cache", 4, d));
    nl = (size_t)(L * B) * (size_t)(cap * c->width);
    nr = (size_t)(L * B) * (size_t)(c->ring * c->width);
    ni = (size_t)(3 * L * B + B);
    LATTN__TRY(lattn__alloc_floats(ctx, &c->k, 2 * (nl + nr), who));
    c->list_len = (int64_t *)lattn__alloc(ctx, ni * sizeof(int64_t) + (size_t)B * sizeof(int));
    if (!c->list_len) { lattn__free(ctx, c->k); memset(c, 0, sizeof *c); return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who); }
    memset(c->list_len, 0, ni * sizeof(int64_t));
    c->v = c->k + nl;
    c->rk = c->v + nl;
    c->rv = c->rk + nr;
    c->ring_len = c->list_len + L * B;
    c->ring_pos = c->ring_len + L * B;
    c->pos = c->ring_pos + L * B;
    c->doc_start = (int *)(void *)(c->pos + B);
    for (d[0] = 0; d[0] < B; d[0]++) c->doc_start[d[0]] = 2;
    c->B = B;
    c->cap = cap;
    c->n_layers = L;
    c->cfg = *s;
    return lattn__ok(ctx);
}
LATTN__DEF void lattn_sps_cache_free(lattn_ctx *ctx, lattn_sps_cache *c) {
    if (!c) return;
    lattn__free(ctx, c->k);
    lattn__free(ctx, c->list_len);
    memset(c, 0, sizeof *c);
}
static lattn_status lattn__sps_cache_ok(lattn_ctx *ctx, const char *who, const lattn_tf_model *m, const lattn_sps_cache *c, int64_t B) {
    if (!c || !c->k) return lattn__fail(ctx, LATTN_E_NULL, "%s: the cache is not initialised", who);
    LATTN__TRY(lattn__sps_check(ctx, who, m, &c->cfg));
    if (c->B != B || c->n_layers != m->cfg.n_layers || c->width != m->cfg.H_kv * m->cfg.K)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: the cache was made for another model or batch", who);
    return LATTN_OK;
}
/* Store entry e of layer l, sequence b: the list (ring = 0) or the ring (ring = 1). */
static float *lattn__sps_at(const lattn_sps_cache *c, int ring, int v, int64_t l, int64_t b, int64_t e) {
    float *base = ring ? (v ? c->rv : c->rk) : (v ? c->v : c->k);
    return base + ((l * c->B + b) * (ring ? c->ring : c->cap) + e) * c->width;
}
/* After layer l's attention: the windowed row joins the ring (a full ring overwrites its oldest
   entry), the persistent row joins the list. k, v: the two rows (x, ρ) of this token. */
static void lattn__sps_push(lattn_sps_cache *c, int64_t l, int64_t b, const float *k, const float *v) {
    const int64_t P = c->cfg.variant == LATTN_SPS_STANDARD ? 0 : lattn__sps_persist(c->cfg.variant), W = 1 - P, i = l * c->B + b;
    const size_t bytes = (size_t)c->width * sizeof(float);
    if (c->cfg.variant != LATTN_SPS_STANDARD && (c->cfg.w > 0 || c->cfg.variant == LATTN_SPS_2X_MEMORY)) {
        int64_t e;
        if (c->ring_len[i] < c->ring) e = c->ring_len[i]++;
        else { e = c->ring_pos[i]; c->ring_pos[i] = (e + 1) % c->ring; }
        memcpy(lattn__sps_at(c, 1, 0, l, b, e), k + W * c->width, bytes);
        memcpy(lattn__sps_at(c, 1, 1, l, b, e), v + W * c->width, bytes);
    }
    memcpy(lattn__sps_at(c, 0, 0, l, b, c->list_len[i]), k + P * c->width, bytes);
    memcpy(lattn__sps_at(c, 0, 1, l, b, c->list_len[i]), v + P * c->width, bytes);
    c->list_len[i]++;
}

/* The prefill hook: after RoPE in layer l of the dense forward, the last document of each sequence
   goes into the cache (persistent slots to the list, the last min(w, n_doc) windowed slots to the
   ring, oldest first). */
typedef struct lattn__sps_fill { lattn_sps_cache *c; int64_t T; const int32_t *tokens; } lattn__sps_fill;
/* Row (sequence-local, blocked layout) of slot s of token t in the document [i0, i0 + nd). */
static int64_t lattn__sps_fill_row(int64_t S, int64_t i0, int64_t nd, int64_t t, int64_t s) {
    return S == 1 ? t : 2 * i0 + lattn__sps_row(nd, t - i0, s);
}
static void lattn__sps_fill_fn(void *user, int64_t l, const float *Kb, const float *Vb) {
    const lattn__sps_fill *u = (const lattn__sps_fill *)user;
    lattn_sps_cache *c = u->c;
    const int64_t S = c->cfg.variant == LATTN_SPS_STANDARD ? 1 : 2, T = u->T, wd = c->width;
    const int64_t P = S == 1 ? 0 : lattn__sps_persist(c->cfg.variant);
    int64_t b, i, i0, nd, nw;
    for (b = 0; b < c->B; b++) {
        const int64_t idx = l * c->B + b;
        for (i0 = T; i0 > 0 && !lattn__sps_ends(&c->cfg, u->tokens[b * T + i0 - 1]); i0--) {}   /* the last document: [i0, T) */
        nd = T - i0;
        nw = S == 1 || (c->cfg.w == 0 && c->cfg.variant != LATTN_SPS_2X_MEMORY) ? 0 : LATTN__MIN(nd, c->ring);
        for (i = 0; i < nd; i++) {
            int64_t row = b * S * T + lattn__sps_fill_row(S, i0, nd, i0 + i, P);
            memcpy(lattn__sps_at(c, 0, 0, l, b, i), Kb + row * wd, (size_t)wd * sizeof(float));
            memcpy(lattn__sps_at(c, 0, 1, l, b, i), Vb + row * wd, (size_t)wd * sizeof(float));
        }
        for (i = 0; i < nw; i++) {
            int64_t row = b * S * T + lattn__sps_fill_row(S, i0, nd, T - nw + i, 1 - P);
            memcpy(lattn__sps_at(c, 1, 0, l, b, i), Kb + row * wd, (size_t)wd * sizeof(float));
            memcpy(lattn__sps_at(c, 1, 1, l, b, i), Vb + row * wd, (size_t)wd * sizeof(float));
        }
        c->list_len[idx] = nd;
        c->ring_len[idx] = nw;
        c->ring_pos[idx] = 0;
    }
}
LATTN__DEF lattn_status lattn_sps_prefill(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, int64_t T,
                                          const int32_t *tokens, float *logits, double *loss, lattn_sps_cache *c) {
    const char *who = "lattn_sps_prefill";
    lattn__sps_plan pl;
    lattn__sps_fill fill;
    int64_t b, l, i0;
    lattn_status st;
    LATTN__TRY(lattn__sps_cache_ok(ctx, who, m, c, B));
    for (b = 0; b < B; b++) {
        if (c->pos[b] != 0 || !c->doc_start[b]) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: the cache of sequence %lld is not fresh", who, (long long)b);
        for (i0 = T; tokens && i0 > 0 && !lattn__sps_ends(&c->cfg, tokens[b * T + i0 - 1]); i0--) {}
        if (T - i0 > c->cap) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: the last document of sequence %lld has %lld tokens, the cache %lld",
                                                who, (long long)b, (long long)(T - i0), (long long)c->cap);
    }
    if (!logits) return lattn__fail(ctx, LATTN_E_NULL, "%s: logits is NULL", who);
    LATTN__TRY(lattn__sps_rows(ctx, who, m, &c->cfg, B, T, tokens, logits, loss, 1, &pl));
    fill.c = c;
    fill.T = T;
    fill.tokens = tokens;
    pl.rw.kv_hook = lattn__sps_fill_fn;
    pl.rw.hook_user = &fill;
    st = lattn__tf_run(ctx, m, B, &pl.rw, logits, loss, NULL, LATTN_FORM_CHUNK, who);
    lattn__free(ctx, pl.mem);
    if (st != LATTN_OK) {                                        /* the cache stays fresh */
        for (l = 0; l < c->n_layers * B; l++) c->list_len[l] = c->ring_len[l] = c->ring_pos[l] = 0;
        return st;
    }
    for (b = 0; b < B; b++) {
        c->pos[b] = T;
        c->doc_start[b] = T == 0 || tokens[b * T + T - 1] == c->cfg.pad_id ? 2 : tokens[b * T + T - 1] == c->cfg.eos_id;
    }
    return lattn__ok(ctx);
}

/* One step (spec §4): rows [x_t; ρ] (Standard: [x_t]) at position pos[b]; each row attends to the
   ring, then the list, then the current x key (the ρ row also to its own key), each store a
   partial softmax (flash-decoding segments) merged in that order; then the stores grow. */
LATTN__DEF lattn_status lattn_sps_step(lattn_ctx *ctx, const lattn_tf_model *m, int64_t B, const int32_t *tokens,
                                       float *logits, lattn_sps_cache *c) {
    const char *who = "lattn_sps_step";
    const lattn_tf_config *tc;
    int64_t S, d, H, Hk, hd, NQ, M, wd, l, r, b, t, np, V;
    int nthr = lattn__threads(ctx);
    float *buf, *parts;
    size_t n, P, tmp;
    lattn_attn_args qa = LATTN__ZERO;
    lattn__attn_dims dm;
    lattn__tf_buf u;
    LATTN__TRY(lattn__sps_cache_ok(ctx, who, m, c, B));
    LATTN__TRY(lattn__tf_args(ctx, who, m, B, 1, tokens, NULL, logits, NULL));
    tc = &m->cfg;
    S = c->cfg.variant == LATTN_SPS_STANDARD ? 1 : 2;
    d = tc->D;
    H = tc->H;
    Hk = tc->H_kv;
    hd = tc->K;
    NQ = (H + 2 * Hk) * hd;
    M = B * S;
    wd = c->width;
    V = tc->vocab;
    for (b = 0; b < B; b++) {
        if (!c->doc_start[b] && c->list_len[b] + 1 > c->cap)
            return lattn__fail(ctx, LATTN_E_SHAPE, "%s: the document of sequence %lld fills the cache (%lld tokens)", who,
                               (long long)b, (long long)c->cap);
        if (c->cfg.pad_id >= 0 && tokens[b] == c->cfg.pad_id && c->doc_start[b] != 2)
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: sequence %lld: a pad after a real token (SPS takes left pads only, as the official code)",
                               who, (long long)b);
    }
    /* partials per (sequence, row): ring and list segments, and the current keys */
    np = (c->ring + LATTN__AQ_SEG - 1) / LATTN__AQ_SEG + (c->cap + LATTN__AQ_SEG - 1) / LATTN__AQ_SEG + 1;   /* per row */
    P = (size_t)(H * (hd + 2));
    if (lattn_size_mul(&n, (size_t)M, 2 * (size_t)d + (size_t)LATTN__MAX(NQ + 2 * H * hd + 2 * wd, 2 * tc->ffn) + (size_t)hd) ||
        lattn_size_mul(&tmp, (size_t)(M * np), P) || lattn_size_add(&n, n, tmp) ||
        lattn_size_mul(&tmp, (size_t)nthr, LATTN__LIN_WS(LATTN__MAX(d, LATTN__MAX(tc->ffn, H * hd))) + (size_t)(2 * H * LATTN__AQ_BLK)) ||
        lattn_size_add(&n, n, tmp) || lattn_size_add(&n, n, (size_t)V))
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: workspace size overflows", who);
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, n, who));
    u.X = buf;
    u.Hn = u.X + M * d;
    u.QKV = u.Hn + M * d;
    u.Q = u.QKV + M * NQ;
    u.Kb = u.Q + M * H * hd;
    u.Vb = u.Kb + M * wd;
    u.O = u.Vb + M * wd;
    u.F1 = u.QKV;
    u.F2 = u.F1 + M * tc->ffn;
    u.CS = u.QKV + M * LATTN__MAX(NQ + 2 * H * hd + 2 * wd, 2 * tc->ffn);
    parts = u.CS + M * hd;
    u.ws = parts + (size_t)(M * np) * P;
    /* nothing can fail from here on: the cache changes */
    for (b = 0; b < B; b++)
        if (c->doc_start[b])
            for (l = 0; l < c->n_layers; l++) c->list_len[l * B + b] = c->ring_len[l * B + b] = c->ring_pos[l * B + b] = 0;
    for (r = 0; r < M; r++) {
        int32_t id = r % S ? c->cfg.predict_id : tokens[r / S];
        memcpy(u.X + r * d, lattn__tg(m, LATTN__TG_EMBED) + (int64_t)id * d, (size_t)d * sizeof(float));
        for (t = 0; t < hd / 2; t++) {
            double an = lattn__rope_angle(tc, c->pos[r / S], t);
            u.CS[r * hd + 2 * t] = (float)cos(an);
            u.CS[r * hd + 2 * t + 1] = (float)sin(an);
        }
    }
    qa.H = H;
    qa.H_kv = Hk;
    qa.K = hd;
    qa.V = hd;
    dm.G = H / Hk;
    dm.Hkv = Hk;
    dm.sd = 1.0 / sqrt((double)hd);
    dm.s = (float)dm.sd;
    for (l = 0; l < c->n_layers; l++) {
        lattn__tf_pre(nthr, m, l, M, NULL, &u);
        LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
        for (b = 0; b < B; b++) {                                /* both rows of a sequence share each store's reads */
            const int64_t i = l * B + b;
            float *pr = parts + (size_t)(b * S * np) * P, *sc = u.ws + (size_t)nthr * LATTN__LIN_WS(LATTN__MAX(d, LATTN__MAX(tc->ffn, H * hd))) +
                                                               (size_t)lattn__thread_id() * (size_t)(2 * H * LATTN__AQ_BLK);
            int64_t k = 0, sg, e, rr;
            struct { const float *k, *v; int64_t n; } st2[2];
            st2[0].k = lattn__sps_at(c, 1, 0, l, b, 0);
            st2[0].v = lattn__sps_at(c, 1, 1, l, b, 0);
            st2[0].n = c->ring ? c->ring_len[i] : 0;
            st2[1].k = lattn__sps_at(c, 0, 0, l, b, 0);
            st2[1].v = lattn__sps_at(c, 0, 1, l, b, 0);
            st2[1].n = c->list_len[i];
            for (e = 0; e < 2; e++)                              /* the ring, then the list */
                for (sg = 0; st2[e].n > 0 && sg < lattn__attn_nseg(&qa, st2[e].n - 1); sg++, k++)
                    lattn__attn_seg(&qa, &dm, b, (int)S, u.Q + b * S * H * hd, H * hd, st2[e].k, wd, st2[e].v, wd, st2[e].n - 1, sg,
                                    pr + (size_t)k * P, (size_t)np * P, sc);
            for (rr = 0; rr < S; rr++) {                         /* the current keys: x (and ρ for the ρ row) */
                float *prr = pr + (size_t)(rr * np) * P;
                lattn__attn_seg(&qa, &dm, b, 1, u.Q + (b * S + rr) * H * hd, 0, u.Kb + b * S * wd, wd, u.Vb + b * S * wd, wd, rr, 0,
                                prr + (size_t)k * P, 0, sc);
                lattn__attn_merge(H, hd, k + 1, prr, u.O + (b * S + rr) * H * hd, NULL);
            }
        }
        for (b = 0; b < B; b++) lattn__sps_push(c, l, b, u.Kb + b * S * wd, u.Vb + b * S * wd);
        lattn__tf_post(nthr, m, l, M, &u);
    }
    for (b = 0; b < B; b++) {                                    /* the readout row, the tied head */
        int64_t ro = S == 1 || c->cfg.variant == LATTN_SPS_REVERSE ? 0 : 1;
        memmove(u.X + b * d, u.X + (b * S + ro) * d, (size_t)d * sizeof(float));
        c->pos[b]++;
        c->doc_start[b] = tokens[b] == c->cfg.pad_id && c->cfg.pad_id >= 0 ? 2 : tokens[b] == c->cfg.eos_id;
    }
    lattn__rmsnorm_rows(nthr, B, d, u.X, lattn__tg(m, LATTN__TG_NORM), tc->norm_eps, u.Hn);
    lattn__linear(nthr, B, V, d, u.Hn, lattn__tg(m, LATTN__TG_EMBED), logits, 0, u.ws);
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}

#endif /* LATTN_NO_MODELS */
/* ================================================================================================ */
/* >>verbs implementation                                                                           */
/* ================================================================================================ */
static const char *const lattn__form_names[] = { "ref", "parallel", "chunk", "step" };
LATTN__DEF const char *lattn_form_name(lattn_form f) {
    return (unsigned)f <= (unsigned)LATTN_FORM_STEP ? lattn__form_names[f] : "?";
}
LATTN__DEF int lattn_form_parse(const char *name, lattn_form *f) {
    int i;
    for (i = 0; name && i <= (int)LATTN_FORM_STEP; i++)
        if (strcmp(name, lattn__form_names[i]) == 0) { *f = (lattn_form)i; return 1; }
    return 0;
}


/* ================================================================================================ */
/* >>optim implementation                                                                           */
/* ================================================================================================ */
LATTN__DEF lattn_adamw_config lattn_adamw_default(void) {
    lattn_adamw_config c;
    c.lr = 1e-3;
    c.beta1 = 0.9;
    c.beta2 = 0.999;
    c.eps = 1e-8;
    c.weight_decay = 1e-2;
    return c;
}
static lattn_status lattn__adamw_check(lattn_ctx *ctx, const char *who, const lattn_adamw_config *c, int64_t t, size_t n, const void *w,
                                       const void *g, const void *m, const void *v) {
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: config is NULL", who);
    if (n > 0 && (!w || !g || !m || !v)) return lattn__fail(ctx, LATTN_E_NULL, "%s: w, g, m or v is NULL", who);
    if (n > (size_t)INT64_MAX / 16) return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: n = %zu parameters", who, n);
    if (t < 1) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: step t = %lld (the first step is 1)", who, (long long)t);
    if (!(c->lr >= 0 && c->lr < HUGE_VAL) || !(c->eps >= 0 && c->eps < HUGE_VAL) || !(c->weight_decay >= 0 && c->weight_decay < HUGE_VAL) ||
        !(c->beta1 >= 0 && c->beta1 < 1) || !(c->beta2 >= 0 && c->beta2 < 1))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: lr %g, betas (%g, %g), eps %g, weight decay %g (need lr, eps, wd >= 0, 0 <= beta < 1)", who,
                           c->lr, c->beta1, c->beta2, c->eps, c->weight_decay);
    return LATTN_OK;
}
/* The step's scalars, in double as Python computes them: decay 1 - lr·wd, 1 - β1, β2, 1 - β2,
   sqrt(1 - β2^t), -lr / (1 - β1^t), eps. */
typedef struct lattn__adamw_k { double dec, w1, b2, w2, bc2s, step, eps; } lattn__adamw_k;
static lattn__adamw_k lattn__adamw_scalars(const lattn_adamw_config *c, int64_t t) {
    lattn__adamw_k k;
    k.dec = 1.0 - c->lr * c->weight_decay;
    k.w1 = 1.0 - c->beta1;
    k.b2 = c->beta2;
    k.w2 = 1.0 - c->beta2;
    k.bc2s = sqrt(1.0 - pow(c->beta2, (double)t));
    k.step = -(c->lr / (1.0 - pow(c->beta1, (double)t)));
    k.eps = c->eps;
    return k;
}
/* float32: the same operations on the SIMD layer (each rounds as its scalar form does: mul, add,
   sub, div and sqrt are correctly rounded on every back end), blocks of 4096 per thread. */
LATTN__DEF lattn_status lattn_adamw_step(lattn_ctx *ctx, const lattn_adamw_config *c, int64_t t, size_t n,
                                         float *w, const float *g, float *m, float *v) {
    lattn__adamw_k k;
    int64_t blk;
    int nthr = lattn__threads(ctx);
    LATTN__TRY(lattn__adamw_check(ctx, "lattn_adamw_step", c, t, n, w, g, m, v));
    k = lattn__adamw_scalars(c, t);
    (void)nthr;                          /* without OpenMP */
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (blk = 0; blk < (int64_t)((n + 4095) / 4096); blk++) {
        const lattn__vf dec = lattn__vset1((float)k.dec), w1 = lattn__vset1((float)k.w1), b2 = lattn__vset1((float)k.b2);
        const lattn__vf w2 = lattn__vset1((float)k.w2), bc2s = lattn__vset1((float)k.bc2s), step = lattn__vset1((float)k.step);
        const lattn__vf eps = lattn__vset1((float)k.eps);
        const size_t i1 = LATTN__MIN(n, (size_t)(blk + 1) * 4096);
        size_t i;
        for (i = (size_t)blk * 4096; i < i1; i += LATTN__VW) {
            const size_t nw = LATTN__MIN((size_t)LATTN__VW, i1 - i);
            const lattn__vf gi = lattn__vload_w(g + i, nw);
            lattn__vf wi = lattn__vmul(lattn__vload_w(w + i, nw), dec), mi = lattn__vload_w(m + i, nw), vi = lattn__vload_w(v + i, nw), d, e;
            d = lattn__vmul(w1, lattn__vsub(gi, mi));
            mi = lattn__vadd(mi, d);
            e = lattn__vmul(lattn__vmul(w2, gi), gi);
            vi = lattn__vadd(lattn__vmul(vi, b2), e);
            d = lattn__vadd(lattn__vdiv(lattn__vsqrt(vi), bc2s), eps);
            e = lattn__vdiv(lattn__vmul(step, mi), d);
            wi = lattn__vadd(wi, e);
            lattn__vstore_w(w + i, wi, nw);
            lattn__vstore_w(m + i, mi, nw);
            lattn__vstore_w(v + i, vi, nw);
        }
    }
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_adamw_step64(lattn_ctx *ctx, const lattn_adamw_config *c, int64_t t, size_t n,
                                           double *w, const double *g, double *m, double *v) {
    lattn__adamw_k k;
    int64_t i;
    int nthr = lattn__threads(ctx);
    LATTN__TRY(lattn__adamw_check(ctx, "lattn_adamw_step64", c, t, n, w, g, m, v));
    k = lattn__adamw_scalars(c, t);
    (void)nthr;                          /* without OpenMP */
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (i = 0; i < (int64_t)n; i++) {   /* the listing's operations, in its order */
        const double d = k.w1 * (g[i] - m[i]), e = k.w2 * g[i] * g[i];
        double den;
        w[i] = w[i] * k.dec;
        m[i] = m[i] + d;
        v[i] = v[i] * k.b2 + e;
        den = sqrt(v[i]) / k.bc2s + k.eps;
        w[i] = w[i] + k.step * m[i] / den;
    }
    return lattn__ok(ctx);
}

/* >>optim.muon ------------------------------------------------------------------------------------ */
#define LATTN__NS_A 3.4445
#define LATTN__NS_B (-4.7750)
#define LATTN__NS_C 2.0315
LATTN__DEF lattn_muon_config lattn_muon_default(void) {
    lattn_muon_config c;
    c.lr = 0.02;
    c.momentum = 0.95;
    c.weight_decay = 0.0;
    c.nesterov = 1;
    c.ns_steps = 5;
    c.ns_mode = LATTN_NS_FP32;
    c.scale = LATTN_MUON_SCALE_SHAPE_RATIO;
    return c;
}
/* x rounded to bfloat16 (nearest, ties to even; NaN stays NaN), as a float. */
static float lattn__bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return x;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}
/* Round n floats to bf16 when bf is set (LATTN_NS_BF16), else leave them. */
static void lattn__bf16_all(int bf, size_t n, float *x) {
    size_t i;
    for (i = 0; bf && i < n; i++) x[i] = lattn__bf16(x[i]);
}
static lattn_status lattn__ns_check(lattn_ctx *ctx, const char *who, int64_t R, int64_t C, int steps, const void *G, const void *X) {
    int64_t d[2];
    if (!G || !X) return lattn__fail(ctx, LATTN_E_NULL, "%s: G or X is NULL", who);
    if (R < 1 || C < 1 || steps < 0 || steps > 100)
        return lattn__fail(ctx, LATTN_E_SHAPE, "%s: R = %lld, C = %lld, steps = %d (R, C >= 1, steps 0 .. 100)", who, (long long)R, (long long)C, steps);
    d[0] = R;
    d[1] = C;
    return lattn__check_count(ctx, who, "the matrix", 2, d);
}
/* The upper triangle of an m x m matrix from its lower one. */
static void lattn__ns_mirror(int64_t m, float *A) {
    int64_t i, j;
    for (i = 0; i < m; i++)
        for (j = i + 1; j < m; j++) A[i * m + j] = A[j * m + i];
}
LATTN__DEF lattn_status lattn_muon_ns5(lattn_ctx *ctx, int64_t R, int64_t C, int steps, lattn_ns_mode mode, const float *G, float *X) {
    const char *who = "lattn_muon_ns5";
    const int64_t m = LATTN__MIN(R, C), n = LATTN__MAX(R, C);
    const int bf = mode == LATTN_NS_BF16;
    float *buf, *x, *y, *A, *AA, *ws;
    double nrm = 0;
    int64_t i, j;
    int k;
    LATTN__TRY(lattn__ns_check(ctx, who, R, C, steps, G, X));
    if (mode != LATTN_NS_FP32 && mode != LATTN_NS_BF16) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: mode %d is not a lattn_ns_mode", who, (int)mode);
    LATTN__TRY(lattn__alloc_floats(ctx, &buf, (size_t)(2 * m * n + 2 * m * m) + lattn__gemm_ws(n, n), who));
    x = buf;
    y = x + m * n;
    A = y + m * n;
    AA = A + m * m;
    ws = AA + m * m;
    for (i = 0; i < m; i++)              /* the wide orientation: x is m x n */
        for (j = 0; j < n; j++) x[i * n + j] = R > C ? G[j * C + i] : G[i * C + j];
    if (bf) {                            /* X = bf16(G) / bf16(bf16(‖X‖) + 1e-7), the norm a float32 sum */
        float acc = 0.0f, den;
        lattn__bf16_all(1, (size_t)(m * n), x);
        for (i = 0; i < m * n; i++) acc += x[i] * x[i];
        den = lattn__bf16(lattn__bf16(sqrtf(acc)) + 1e-7f);
        for (i = 0; i < m * n; i++) x[i] = lattn__bf16(x[i] / den);
    } else {
        for (i = 0; i < m * n; i++) nrm += (double)x[i] * (double)x[i];
        lattn_vec_scale((size_t)(m * n), (float)(1.0 / (sqrt(nrm) + 1e-7)), x);
    }
    for (k = 0; k < steps; k++) {        /* A and A·A are symmetric: their lower halves, mirrored (the same sums) */
        lattn__sgemm(LATTN_GEMM_TRANS_B | LATTN_GEMM_LOWER, m, m, n, x, n, x, n, A, m, ws);   /* A = X Xᵀ */
        lattn__ns_mirror(m, A);
        lattn__bf16_all(bf, (size_t)(m * m), A);
        lattn__sgemm(LATTN_GEMM_LOWER, m, m, m, A, m, A, m, AA, m, ws);                        /* A·A */
        lattn__ns_mirror(m, AA);
        lattn__bf16_all(bf, (size_t)(m * m), AA);
        for (i = 0; i < m * m; i++) {   /* B = b·A + c·A·A (each product and the sum rounded in bf16 mode) */
            float ba = (float)LATTN__NS_B * A[i], caa = (float)LATTN__NS_C * AA[i];
            if (bf) { ba = lattn__bf16(ba); caa = lattn__bf16(caa); }
            A[i] = ba + caa;
        }
        lattn__bf16_all(bf, (size_t)(m * m), A);
        lattn__sgemm(0, m, n, m, A, m, x, n, y, n, ws);                      /* B X */
        lattn__bf16_all(bf, (size_t)(m * n), y);
        for (i = 0; i < m * n; i++) {
            float ax = (float)LATTN__NS_A * x[i];
            if (bf) ax = lattn__bf16(ax);
            x[i] = ax + y[i];
        }
        lattn__bf16_all(bf, (size_t)(m * n), x);
    }
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            if (R > C) X[j * C + i] = x[i * n + j];
            else X[i * C + j] = x[i * n + j];
        }
    lattn__free(ctx, buf);
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_muon_ns5_64(lattn_ctx *ctx, int64_t R, int64_t C, int steps, const double *G, double *X) {
    const char *who = "lattn_muon_ns5_64";
    const int64_t m = LATTN__MIN(R, C), n = LATTN__MAX(R, C);
    double *x, *y, *A, *AA, nrm = 0;
    int64_t i, j, l;
    int k;
    LATTN__TRY(lattn__ns_check(ctx, who, R, C, steps, G, X));
    LATTN__TRY(lattn__alloc_doubles(ctx, &x, (size_t)(2 * m * n + 2 * m * m), who));
    y = x + m * n;
    A = y + m * n;
    AA = A + m * m;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) x[i * n + j] = R > C ? G[j * C + i] : G[i * C + j];
    for (i = 0; i < m * n; i++) nrm += x[i] * x[i];
    nrm = sqrt(nrm) + 1e-7;
    for (i = 0; i < m * n; i++) x[i] /= nrm;
    for (k = 0; k < steps; k++) {        /* the products as plain sums over ascending index */
        for (i = 0; i < m; i++)
            for (j = 0; j < m; j++) {
                double s = 0;
                for (l = 0; l < n; l++) s += x[i * n + l] * x[j * n + l];
                A[i * m + j] = s;
            }
        for (i = 0; i < m; i++)
            for (j = 0; j < m; j++) {
                double s = 0;
                for (l = 0; l < m; l++) s += A[i * m + l] * A[l * m + j];
                AA[i * m + j] = s;
            }
        for (i = 0; i < m * m; i++) A[i] = LATTN__NS_B * A[i] + LATTN__NS_C * AA[i];
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) {
                double s = 0;
                for (l = 0; l < m; l++) s += A[i * m + l] * x[l * n + j];
                y[i * n + j] = s;
            }
        for (i = 0; i < m * n; i++) x[i] = LATTN__NS_A * x[i] + y[i];
    }
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            if (R > C) X[j * C + i] = x[i * n + j];
            else X[i * C + j] = x[i * n + j];
        }
    lattn__free(ctx, x);
    return lattn__ok(ctx);
}
static lattn_status lattn__muon_config_check(lattn_ctx *ctx, const char *who, const lattn_muon_config *c) {
    if (!c) return lattn__fail(ctx, LATTN_E_NULL, "%s: config is NULL", who);
    if (!(c->lr >= 0 && c->lr < HUGE_VAL) || !(c->momentum >= 0 && c->momentum < 1) || !(c->weight_decay >= 0 && c->weight_decay < HUGE_VAL))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: lr %g, momentum %g, weight decay %g (need lr, wd >= 0, 0 <= momentum < 1)", who, c->lr,
                           c->momentum, c->weight_decay);
    if (c->ns_mode != LATTN_NS_FP32 && c->ns_mode != LATTN_NS_BF16) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: ns_mode %d is not a lattn_ns_mode", who, (int)c->ns_mode);
    if (c->ns_steps < 0 || c->ns_steps > 100) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: ns_steps = %d (0 .. 100)", who, c->ns_steps);
    if (c->scale != LATTN_MUON_SCALE_SHAPE_RATIO && c->scale != LATTN_MUON_SCALE_RMS_MATCH)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: scale %d is not a lattn_muon_scale", who, (int)c->scale);
    return LATTN_OK;
}
static lattn_status lattn__muon_check(lattn_ctx *ctx, const char *who, const lattn_muon_config *c, const void *W, const void *G, const void *M) {
    if (!c || !W || !G || !M) return lattn__fail(ctx, LATTN_E_NULL, "%s: config, W, G or M is NULL", who);
    return lattn__muon_config_check(ctx, who, c);
}
/* The elementwise parts of a step in type T, one function each, so that the one-device and the
   sharded step run the same code on every element (spec §5.3, obligation 1):
     blend: Mo = lerp(M, G, 1 - β), U = lerp(G, Mo, β) (Nesterov) or Mo, as PyTorch's lerp rounds
            them (weight 1 - β < 0.5: a + w(e - a); weight β >= 0.5: e - (e - a)(1 - w), w and 1 - w
            in T); Mo may be M and U may be G;
     scale: O = O·s (s of the whole matrix's shape), a bf16 tensor in bf16 mode;
     apply: W = W·(1 - lr·wd), then W = W - lr·O. */
#define LATTN__MUON_ELEMENTWISE(T, SFX)                                                                              \
    static void lattn__muon_blend##SFX(const lattn_muon_config *c, int64_t n, const T *G, const T *M, T *Mo, T *U) { \
        const T w1 = (T)(1.0 - c->momentum), om = (T)1 - (T)c->momentum;                                          \
        int64_t i;                                                                                                 \
        for (i = 0; i < n; i++) {                                                                                  \
            const T g = G[i], mo = M[i] + w1 * (g - M[i]);                                                         \
            Mo[i] = mo;                                                                                            \
            U[i] = c->nesterov ? mo - (mo - g) * om : mo;                                                          \
        }                                                                                                          \
    }                                                                                                              \
    static void lattn__muon_scale##SFX(const lattn_muon_config *c, int64_t R, int64_t C, int64_t n, T *O) {         \
        const T scale = (T)(c->scale == LATTN_MUON_SCALE_RMS_MATCH ? 0.2 * sqrt((double)LATTN__MAX(R, C))            \
                                                                 : sqrt(LATTN__MAX(1.0, (double)R / (double)C)));       \
        int64_t i;                                                                                                 \
        for (i = 0; i < n; i++) {                                                                                  \
            O[i] = O[i] * scale;                                                                                   \
            if (c->ns_mode == LATTN_NS_BF16) O[i] = (T)lattn__bf16((float)O[i]);                                  \
        }                                                                                                          \
    }                                                                                                              \
    static void lattn__muon_apply##SFX(const lattn_muon_config *c, int64_t n, T *W, const T *O) {                   \
        const T dec = (T)(1.0 - c->lr * c->weight_decay), lr = (T)c->lr;                                         \
        int64_t i;                                                                                                 \
        for (i = 0; i < n; i++) {                                                                                  \
            W[i] = W[i] * dec;                                                                                     \
            W[i] = W[i] - lr * O[i];                                                                               \
        }                                                                                                          \
    }
LATTN__MUON_ELEMENTWISE(float, 32)
LATTN__MUON_ELEMENTWISE(double, 64)
#undef LATTN__MUON_ELEMENTWISE
/* The step in type T: O allocated first (a failure changes nothing), blend, NS in T's precision,
   scale, apply. */
#define LATTN__MUON_STEP(T, SFX, NS)                                                                 \
    {                                                                                                \
        const int64_t n = R * C;                                                                     \
        lattn_status st;                                                                             \
        T *O = (T *)lattn__alloc_array(ctx, (size_t)n, sizeof(T), who, &st);                        \
        if (!O) return st;                                                                           \
        lattn__muon_blend##SFX(c, n, G, M, M, G);                                                    \
        if ((st = NS) != LATTN_OK) {                                                                 \
            lattn__free(ctx, O);                                                                     \
            return st;                                                                               \
        }                                                                                            \
        lattn__muon_scale##SFX(c, R, C, n, O);                                                       \
        lattn__muon_apply##SFX(c, n, W, O);                                                          \
        lattn__free(ctx, O);                                                                         \
    }
LATTN__DEF lattn_status lattn_muon_step(lattn_ctx *ctx, const lattn_muon_config *c, int64_t R, int64_t C, float *W, float *G, float *M) {
    const char *who = "lattn_muon_step";
    LATTN__TRY(lattn__muon_check(ctx, who, c, W, G, M));
    LATTN__TRY(lattn__ns_check(ctx, who, R, C, c->ns_steps, G, W));
    LATTN__MUON_STEP(float, 32, lattn_muon_ns5(ctx, R, C, c->ns_steps, c->ns_mode, G, O))
    return lattn__ok(ctx);
}
LATTN__DEF lattn_status lattn_muon_step64(lattn_ctx *ctx, const lattn_muon_config *c, int64_t R, int64_t C, double *W, double *G, double *M) {
    const char *who = "lattn_muon_step64";
    LATTN__TRY(lattn__muon_check(ctx, who, c, W, G, M));
    LATTN__TRY(lattn__ns_check(ctx, who, R, C, c->ns_steps, G, W));
    if (c->ns_mode != LATTN_NS_FP32) return lattn__fail(ctx, LATTN_E_UNSUPPORTED, "%s: the float64 step has no bf16 mode", who);
    LATTN__MUON_STEP(double, 64, lattn_muon_ns5_64(ctx, R, C, c->ns_steps, G, O))
    return lattn__ok(ctx);
}
#undef LATTN__MUON_STEP

/* >>optim.sharded ---------------------------------------------------------------------------------- */
LATTN__DEF void lattn_shard_rows(int64_t rows, int R, int rank, int64_t *start, int64_t *len) {
    const int64_t per = R > 0 ? (rows + R - 1) / R : rows;
    const int64_t s = LATTN__MIN(rows, per * (int64_t)rank);
    if (start) *start = s;
    if (len) *len = LATTN__MAX((int64_t)0, LATTN__MIN(per, rows - s));
}
static lattn_status lattn__mats_check(lattn_ctx *ctx, const char *who, int R, int64_t n, const lattn_mat_desc *m, const int *owner) {
    size_t total = 0;
    int64_t i;
    if (R < 1 || R > LATTN_MAX_RANKS) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: %d ranks (1 .. %d)", who, R, LATTN_MAX_RANKS);
    if (n < 0 || n > INT32_MAX) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: %lld matrices", who, (long long)n);
    if (n > 0 && !m) return lattn__fail(ctx, LATTN_E_NULL, "%s: the matrix descriptors are NULL", who);
    for (i = 0; i < n; i++) {
        size_t e;
        if (m[i].rows < 1 || m[i].cols < 1 || m[i].layer < 0)
            return lattn__fail(ctx, LATTN_E_SHAPE, "%s: matrix %lld is %lld x %lld, layer %d", who, (long long)i, (long long)m[i].rows,
                               (long long)m[i].cols, m[i].layer);
        if (lattn_size_mul(&e, (size_t)m[i].rows, (size_t)m[i].cols) != LATTN_OK || lattn_size_mul(&e, e, 8) != LATTN_OK ||
            lattn_size_add(&total, total, e) != LATTN_OK)
            return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the matrices' bytes overflow", who);
        if (owner && (owner[i] < 0 || owner[i] >= R))
            return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: owner[%lld] = %d is not a rank of %d", who, (long long)i, owner[i], R);
    }
    return LATTN_OK;
}
/* Matrix order for a policy: by layer keeps the given order; the others sort by shape (round
   robin: the shape tuple, as the reference's sorted(key=size, reverse=True); LPT: the element
   count), descending, ties in the given order. Insertion sort: plans are small. */
static int lattn__plan_before(const lattn_mat_desc *m, lattn_muon_owner p, int a, int b) {
    if (p == LATTN_OWNER_LPT) return m[a].rows * m[a].cols > m[b].rows * m[b].cols;
    return m[a].rows > m[b].rows || (m[a].rows == m[b].rows && m[a].cols > m[b].cols);
}
LATTN__DEF lattn_status lattn_muon_plan(lattn_ctx *ctx, int R, int64_t n, const lattn_mat_desc *m, lattn_muon_owner policy, int *owner) {
    const char *who = "lattn_muon_plan";
    int *ord;
    uint64_t *load;
    int64_t i, j;
    LATTN__TRY(lattn__mats_check(ctx, who, R, n, m, NULL));
    if (policy != LATTN_OWNER_BY_LAYER && policy != LATTN_OWNER_ROUND_ROBIN && policy != LATTN_OWNER_LPT)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: policy %d is not a lattn_muon_owner", who, (int)policy);
    if (n > 0 && !owner) return lattn__fail(ctx, LATTN_E_NULL, "%s: owner is NULL", who);
    if (policy == LATTN_OWNER_BY_LAYER) {
        for (i = 0; i < n; i++) owner[i] = m[i].layer % R;
        return lattn__ok(ctx);
    }
    ord = (int *)lattn__alloc(ctx, ((size_t)n + 2) * sizeof(int) + (size_t)R * sizeof(uint64_t));   /* load: 8-byte aligned after ord */
    if (!ord) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    load = (uint64_t *)(void *)(ord + ((n + 2) & ~(int64_t)1));
    for (i = 0; i < n; i++) {
        for (j = i; j > 0 && lattn__plan_before(m, policy, (int)i, ord[j - 1]); j--) ord[j] = ord[j - 1];
        ord[j] = (int)i;
    }
    memset(load, 0, (size_t)R * sizeof(uint64_t));
    for (i = 0; i < n; i++) {
        int r = (int)(i % R), q;
        if (policy == LATTN_OWNER_LPT)
            for (q = 0, r = 0; q < R; q++) if (load[q] < load[r]) r = q;
        owner[ord[i]] = r;
        load[r] += (uint64_t)(m[ord[i]].rows * m[ord[i]].cols);
    }
    lattn__free(ctx, ord);
    return lattn__ok(ctx);
}
/* Does `rank` run NS5 on matrix i? Every matrix for the all-gather scheme, all at rank 0 for the
   gather scheme, the owner's for A2A. */
static int lattn__muon_runs(lattn_muon_scheme s, const int *owner, int64_t i, int rank) {
    if (s == LATTN_MUON_ALL_GATHER) return 1;
    if (s == LATTN_MUON_GATHER) return rank == 0;
    return owner[i] == rank;
}
static double lattn__ns_flops(int steps, int64_t R, int64_t C) {
    const double a = (double)LATTN__MIN(R, C), b = (double)LATTN__MAX(R, C);
    return steps * (4 * a * a * b + 2 * a * a * a);
}
static lattn_status lattn__sharded_check(lattn_ctx *ctx, const char *who, const lattn_muon_config *c, int R, int rank, int64_t n,
                                         const lattn_mat_desc *m, const int *owner, lattn_muon_scheme s) {
    LATTN__TRY(lattn__muon_config_check(ctx, who, c));
    if (s != LATTN_MUON_A2A && s != LATTN_MUON_GATHER && s != LATTN_MUON_ALL_GATHER)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: scheme %d is not a lattn_muon_scheme", who, (int)s);
    if (s == LATTN_MUON_A2A && n > 0 && !owner) return lattn__fail(ctx, LATTN_E_NULL, "%s: the A2A scheme needs an owner plan", who);
    LATTN__TRY(lattn__mats_check(ctx, who, R, n, m, s == LATTN_MUON_A2A ? owner : NULL));
    if (rank < 0 || rank >= R) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: rank %d of %d", who, rank, R);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_muon_traffic_of(lattn_ctx *ctx, const lattn_muon_config *c, int R, int rank, int64_t n, const lattn_mat_desc *m,
                                              const int *owner, lattn_muon_scheme scheme, lattn_muon_traffic *out) {
    const char *who = "lattn_muon_traffic_of";
    const uint64_t b = c && c->ns_mode == LATTN_NS_BF16 ? 2 : 4;
    int64_t i;
    LATTN__TRY(lattn__sharded_check(ctx, who, c, R, rank, n, m, owner, scheme));
    if (!out) return lattn__fail(ctx, LATTN_E_NULL, "%s: out is NULL", who);
    memset(out, 0, sizeof *out);
    for (i = 0; i < n; i++) {
        const uint64_t whole = (uint64_t)(m[i].rows * m[i].cols) * b;
        int64_t len;
        uint64_t mine;
        lattn_shard_rows(m[i].rows, R, rank, NULL, &len);
        mine = (uint64_t)(len * m[i].cols) * b;
        if (lattn__muon_runs(scheme, owner, i, rank)) out->ns_flops += lattn__ns_flops(c->ns_steps, m[i].rows, m[i].cols);
        if (scheme == LATTN_MUON_A2A) {
            const int own = owner[i] == rank;
            out->sent[0] += own ? 0 : mine;
            out->recv[0] += own ? whole - mine : 0;
            out->sent[1] += own ? whole - mine : 0;
            out->recv[1] += own ? 0 : mine;
            out->whole[0] += own ? whole : 0;
            out->whole[1] += own ? whole : 0;
        } else if (scheme == LATTN_MUON_GATHER) {
            out->sent[0] += rank == 0 ? 0 : mine;
            out->recv[0] += rank == 0 ? whole - mine : 0;
            out->sent[1] += rank == 0 ? whole : 0;
            out->recv[1] += rank == 0 ? 0 : whole;
            out->whole[0] += rank == 0 ? whole : 0;
            out->whole[1] += rank == 0 ? whole : 0;
        } else {
            out->sent[0] += mine;
            out->recv[0] += whole - mine;
            out->whole[0] += whole;
        }
    }
    if (R == 1) {                        /* nothing moves */
        memset(out->sent, 0, sizeof out->sent);
        memset(out->recv, 0, sizeof out->recv);
    }
    return lattn__ok(ctx);
}
/* Floats to the wire (float32, or bf16: the high half of lattn__bf16's float) and back; both return
   the bytes they moved. */
static size_t lattn__wire_put(int bf, int64_t n, const float *x, unsigned char *out) {
    int64_t i;
    if (n > 0 && !bf) memcpy(out, x, (size_t)n * 4);
    for (i = 0; bf && i < n; i++) {
        const float r = lattn__bf16(x[i]);
        uint32_t u;
        uint16_t h;
        memcpy(&u, &r, 4);
        h = (uint16_t)(u >> 16);
        memcpy(out + 2 * i, &h, 2);
    }
    return (size_t)n * (bf ? 2 : 4);
}
static size_t lattn__wire_get(int bf, int64_t n, const unsigned char *in, float *x) {
    int64_t i;
    if (n > 0 && !bf) memcpy(x, in, (size_t)n * 4);
    for (i = 0; bf && i < n; i++) {
        uint16_t h;
        uint32_t u;
        memcpy(&h, in + 2 * i, 2);
        u = (uint32_t)h << 16;
        memcpy(&x[i], &u, 4);
    }
    return (size_t)n * (bf ? 2 : 4);
}
/* The bytes of a count array that go to or come from other ranks. */
static uint64_t lattn__others(int R, int me, const size_t *bytes) {
    uint64_t s = 0;
    int r;
    for (r = 0; r < R; r++) s += r == me ? 0 : (uint64_t)bytes[r];
    return s;
}
/* The block of rank r's rows of every matrix that runs on rank d, ascending, in a buffer at *pos
   (put: from this rank's rows x + lo[i]; get: into x + lo[i]); or, with whole set, the block of the
   assembled matrices of rank d (x + fo[i]) restricted to rank r's rows. Returns the block's bytes. */
typedef struct lattn__xchg {
    const lattn_mat_desc *m;
    const int *owner;
    lattn_muon_scheme scheme;
    int64_t n;
    int R, bf;
} lattn__xchg;
static size_t lattn__block(const lattn__xchg *x, int put, int whole, int r, int d, const size_t *off, float *buf, unsigned char *wire) {
    size_t pos = 0;
    int64_t i;
    for (i = 0; i < x->n; i++) {
        int64_t start, len;
        float *rows;
        if (!lattn__muon_runs(x->scheme, x->owner, i, d)) continue;
        lattn_shard_rows(x->m[i].rows, x->R, r, &start, &len);
        rows = buf ? buf + off[i] + (whole ? start * x->m[i].cols : 0) : NULL;
        if (!wire) pos += (size_t)(len * x->m[i].cols) * (x->bf ? 2 : 4);
        else if (put) pos += lattn__wire_put(x->bf, len * x->m[i].cols, rows, wire + pos);
        else pos += lattn__wire_get(x->bf, len * x->m[i].cols, wire + pos, rows);
    }
    return pos;
}
/* Sharded step. Scratch, allocated before anything moves: per matrix its offsets among this rank's
   rows (lo) and among the matrices it assembles (fo); the new momentum Mn, the blend U and the
   update's rows Ol (this rank's rows); the assembled matrices Uf and their updates Of; a send and a
   receive buffer. What rank r sends rank d in exchange 1 is lattn__block(r, d): r's rows of every
   matrix whose NS5 runs on d; exchange 2 (A2A) is its mirror. The gather scheme broadcasts the whole
   updates instead, the all-gather scheme needs no second exchange. W, G and M are written only after
   every collective has succeeded. */
LATTN__DEF lattn_status lattn_muon_step_sharded(lattn_ctx *ctx, const lattn_muon_config *c, const lattn_comm *comm, int64_t n,
                                                const lattn_mat_desc *m, const int *owner, lattn_muon_scheme scheme,
                                                float *const *W, float *const *G, float *const *M, lattn_muon_traffic *tr) {
    const char *who = "lattn_muon_step_sharded";
    lattn_muon_traffic t;
    lattn__xchg x;
    lattn_status st = LATTN_OK;
    const char *what = "";
    size_t L = 0, P = 0, Pme = 0, bytes = 0, pos, *lo, *fo, *sb, *so, *rb, *ro;
    float *Mn, *U, *Ol, *Uf, *Of;
    unsigned char *sbuf, *rbuf;
    void *blk;
    int R, me, r;
    int64_t i;
    if (!comm) return lattn__fail(ctx, LATTN_E_NULL, "%s: comm is NULL", who);
    R = comm->size;
    me = comm->rank;
    LATTN__TRY(lattn__sharded_check(ctx, who, c, R, me, n, m, owner, scheme));
    if (n > 0 && (!W || !G || !M)) return lattn__fail(ctx, LATTN_E_NULL, "%s: W, G or M is NULL", who);
    if ((scheme != LATTN_MUON_ALL_GATHER && !comm->all_to_all) || (scheme == LATTN_MUON_GATHER && !comm->broadcast) ||
        (scheme == LATTN_MUON_ALL_GATHER && !comm->all_gather))
        return lattn__fail(ctx, LATTN_E_NULL, "%s: the communicator lacks a collective this scheme uses", who);
    for (i = 0; i < n; i++) {
        int64_t len;
        lattn_shard_rows(m[i].rows, R, me, NULL, &len);
        if (len > 0 && (!W[i] || !G[i] || !M[i]))
            return lattn__fail(ctx, LATTN_E_NULL, "%s: matrix %lld: this rank holds %lld rows but W, G or M is NULL", who, (long long)i,
                               (long long)len);
        L += (size_t)(len * m[i].cols);
        P += (size_t)(m[i].rows * m[i].cols);
        Pme += lattn__muon_runs(scheme, owner, i, me) ? (size_t)(m[i].rows * m[i].cols) : 0;
    }
    x.m = m;
    x.owner = owner;
    x.scheme = scheme;
    x.n = n;
    x.R = R;
    x.bf = c->ns_mode == LATTN_NS_BF16;
    if (lattn_size_mul(&bytes, (size_t)(2 * n + 4 * (int64_t)R), sizeof(size_t)) != LATTN_OK ||
        lattn_size_add(&bytes, bytes, (3 * L + 2 * Pme) * sizeof(float)) != LATTN_OK ||
        lattn_size_add(&bytes, bytes, (L + (scheme == LATTN_MUON_A2A ? Pme : P)) * (x.bf ? 2 : 4)) != LATTN_OK)
        return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: the scratch size overflows", who);
    blk = lattn__alloc(ctx, bytes);
    if (!blk) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate %zu bytes of scratch", who, bytes);
    lo = (size_t *)blk;
    fo = lo + n;
    sb = fo + n;
    so = sb + R;
    rb = so + R;
    ro = rb + R;
    Mn = (float *)(ro + R);
    U = Mn + L;
    Ol = U + L;
    Uf = Ol + L;
    Of = Uf + Pme;
    sbuf = (unsigned char *)(Of + Pme);
    rbuf = sbuf + L * (x.bf ? 2 : 4);
    memset(&t, 0, sizeof t);
    for (i = 0, L = 0, Pme = 0; i < n; i++) {   /* offsets; the elementwise first half of the step */
        int64_t len;
        lattn_shard_rows(m[i].rows, R, me, NULL, &len);
        lo[i] = L;
        fo[i] = Pme;
        if (len > 0) lattn__muon_blend32(c, len * m[i].cols, G[i], M[i], Mn + L, U + L);
        L += (size_t)(len * m[i].cols);
        Pme += lattn__muon_runs(scheme, owner, i, me) ? (size_t)(m[i].rows * m[i].cols) : 0;
    }
    /* ---- exchange 1: every rank's rows of U to the ranks that run NS5 on them */
    for (r = 0, pos = 0; r < R; r++) {
        ro[r] = pos;
        rb[r] = lattn__block(&x, 0, 0, r, scheme == LATTN_MUON_ALL_GATHER ? r : me, NULL, NULL, NULL);
        pos += rb[r];
    }
    if (scheme == LATTN_MUON_ALL_GATHER) {   /* this rank's block in place, then everyone's */
        lattn__block(&x, 1, 0, me, me, lo, U, rbuf + ro[me]);
        what = "all_gather";
        st = R > 1 ? comm->all_gather(comm->user, rbuf, rb, ro) : LATTN_OK;
        t.sent[0] = R > 1 ? (uint64_t)rb[me] : 0;
    } else {
        for (r = 0, pos = 0; r < R; r++) {
            so[r] = pos;
            sb[r] = lattn__block(&x, 1, 0, me, r, lo, U, sbuf + pos);
            pos += sb[r];
        }
        what = "first all_to_all";
        st = comm->all_to_all(comm->user, sbuf, sb, so, rbuf, rb, ro);
        t.sent[0] = lattn__others(R, me, sb);
    }
    t.recv[0] = lattn__others(R, me, rb);
    if (st != LATTN_OK) goto fail;
    /* ---- NS5 on the assembled matrices (rows in rank order), scaled */
    for (r = 0; r < R; r++) lattn__block(&x, 0, 1, r, me, fo, Uf, rbuf + ro[r]);
    for (i = 0; i < n; i++) {
        const int64_t e = m[i].rows * m[i].cols;
        if (!lattn__muon_runs(scheme, owner, i, me)) continue;
        what = "NS5";
        if ((st = lattn_muon_ns5(ctx, m[i].rows, m[i].cols, c->ns_steps, c->ns_mode, Uf + fo[i], Of + fo[i])) != LATTN_OK) goto fail;
        lattn__muon_scale32(c, m[i].rows, m[i].cols, e, Of + fo[i]);
        t.whole[0] += (uint64_t)e * (x.bf ? 2 : 4);
        t.whole[1] += scheme == LATTN_MUON_ALL_GATHER ? 0 : (uint64_t)e * (x.bf ? 2 : 4);
        t.ns_flops += lattn__ns_flops(c->ns_steps, m[i].rows, m[i].cols);
    }
    /* ---- exchange 2: every rank's rows of the updates back */
    if (scheme == LATTN_MUON_A2A) {
        for (r = 0, pos = 0; r < R; r++) {   /* the mirror of exchange 1: rb, ro now send, sb, so receive */
            lattn__block(&x, 1, 1, r, me, fo, Of, rbuf + ro[r]);
            so[r] = pos;
            sb[r] = lattn__block(&x, 0, 0, me, r, NULL, NULL, NULL);
            pos += sb[r];
        }
        what = "second all_to_all";
        if ((st = comm->all_to_all(comm->user, rbuf, rb, ro, sbuf, sb, so)) != LATTN_OK) goto fail;
        for (r = 0; r < R; r++) lattn__block(&x, 0, 0, me, r, lo, Ol, sbuf + so[r]);
        t.sent[1] = lattn__others(R, me, rb);
        t.recv[1] = lattn__others(R, me, sb);
    } else {   /* the whole updates, matrix after matrix, at rank 0 (gather) or on every rank (all-gather) */
        if (scheme == LATTN_MUON_GATHER) {
            if (me == 0)
                for (i = 0, pos = 0; i < n; i++) pos += lattn__wire_put(x.bf, m[i].rows * m[i].cols, Of + fo[i], rbuf + pos);
            what = "broadcast";
            if (R > 1 && (st = comm->broadcast(comm->user, rbuf, P * (x.bf ? 2 : 4), 0)) != LATTN_OK) goto fail;
            t.sent[1] = R > 1 && me == 0 ? (uint64_t)P * (x.bf ? 2 : 4) : 0;
            t.recv[1] = R > 1 && me != 0 ? (uint64_t)P * (x.bf ? 2 : 4) : 0;
        }
        for (i = 0, pos = 0; i < n; i++) {
            int64_t start, len;
            lattn_shard_rows(m[i].rows, R, me, &start, &len);
            if (scheme == LATTN_MUON_GATHER) lattn__wire_get(x.bf, len * m[i].cols, rbuf + pos + (size_t)(start * m[i].cols) * (x.bf ? 2 : 4), Ol + lo[i]);
            else if (len > 0) memcpy(Ol + lo[i], Of + fo[i] + start * m[i].cols, (size_t)(len * m[i].cols) * sizeof(float));
            pos += (size_t)(m[i].rows * m[i].cols) * (x.bf ? 2 : 4);
        }
    }
    /* ---- commit: the elementwise second half */
    for (i = 0; i < n; i++) {
        int64_t len;
        lattn_shard_rows(m[i].rows, R, me, NULL, &len);
        if (len == 0) continue;
        memcpy(M[i], Mn + lo[i], (size_t)(len * m[i].cols) * sizeof(float));
        memcpy(G[i], U + lo[i], (size_t)(len * m[i].cols) * sizeof(float));
        lattn__muon_apply32(c, len * m[i].cols, W[i], Ol + lo[i]);
    }
    lattn__free(ctx, blk);
    if (tr) *tr = t;
    return lattn__ok(ctx);
fail:
    lattn__free(ctx, blk);
    return lattn__fail(ctx, st, "%s: %s failed on rank %d of %d (%s); nothing was changed", who, what, me, R, lattn_status_string(st));
}

/* >>optim.train ----------------------------------------------------------------------------------- */
LATTN__DEF lattn_status lattn_lr_factor(lattn_ctx *ctx, const lattn_lr_schedule *s, int64_t t, double *factor) {
    const char *who = "lattn_lr_factor";
    int64_t u, start;
    if (!s || !factor) return lattn__fail(ctx, LATTN_E_NULL, "%s: schedule or factor is NULL", who);
    if ((unsigned)s->shape > (unsigned)LATTN_LR_COSINE) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: shape %d is not a lattn_lr_shape", who, (int)s->shape);
    if (s->total < 1 || s->warmup < 0 || s->warmup > s->total || s->decay < 0 || (s->shape == LATTN_LR_WSD && s->decay > s->total - s->warmup) ||
        !(s->final_ratio >= 0 && s->final_ratio <= 1) || t < 1)
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: step %lld of warm-up %lld, decay %lld, total %lld, final ratio %g", who, (long long)t,
                           (long long)s->warmup, (long long)s->decay, (long long)s->total, s->final_ratio);
    u = LATTN__MIN(t, s->total);
    start = s->total - s->decay;                                    /* WSD: the last step at the peak */
    if (u <= s->warmup) *factor = (double)u / (double)s->warmup;
    else if (s->shape == LATTN_LR_WSD && u > start) *factor = 1.0 + (s->final_ratio - 1.0) * (double)(u - start) / (double)s->decay;
    else if (s->shape == LATTN_LR_COSINE) {
        const double p = (double)(u - s->warmup) / (double)(s->total - s->warmup);
        *factor = s->final_ratio + (1.0 - s->final_ratio) * 0.5 * (1.0 + cos(3.14159265358979323846 * p));
    } else *factor = 1.0;
    return lattn__ok(ctx);
}

LATTN__DEF lattn_status lattn_grad_clip(lattn_ctx *ctx, const lattn_comm *comm, size_t n, float *g, double max_norm, double *norm) {
    const char *who = "lattn_grad_clip";
    const int64_t nb = (int64_t)((n + 4095) / 4096);
    int nthr = lattn__threads(ctx);
    double *part, ss = 0, nrm, f;
    int64_t blk;
    lattn_status st;
    if (n > 0 && !g) return lattn__fail(ctx, LATTN_E_NULL, "%s: g is NULL", who);
    if (comm && !comm->all_reduce) return lattn__fail(ctx, LATTN_E_NULL, "%s: the communicator has no all_reduce", who);
    if (!(max_norm > 0)) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: max_norm %g (must be > 0)", who, max_norm);
    if (n > (size_t)INT64_MAX / 16) return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: n = %zu values", who, n);
    part = (double *)lattn__alloc(ctx, (size_t)(nb + 1) * sizeof(double));
    if (!part) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    (void)nthr;                          /* without OpenMP */
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (blk = 0; blk < nb; blk++) {
        const size_t i1 = LATTN__MIN(n, (size_t)(blk + 1) * 4096);
        double s = 0;
        size_t i;
        for (i = (size_t)blk * 4096; i < i1; i++) s += (double)g[i] * (double)g[i];
        part[blk] = s;
    }
    for (blk = 0; blk < nb; blk++) ss += part[blk];
    lattn__free(ctx, part);
    if (comm && (st = comm->all_reduce(comm->user, &ss, 1)) != LATTN_OK)
        return lattn__fail(ctx, st, "%s: all_reduce failed on rank %d (%s); nothing was changed", who, comm->rank, lattn_status_string(st));
    nrm = sqrt(ss);
    if (norm) *norm = nrm;
    f = max_norm / (nrm + 1e-6);
    if (f >= 1.0) return lattn__ok(ctx);                    /* PyTorch's clamp(max = 1); a NaN factor scales */
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(nthr))
    for (blk = 0; blk < nb; blk++) {
        const size_t i0 = (size_t)blk * 4096;
        lattn_vec_scale(LATTN__MIN(n, i0 + 4096) - i0, (float)f, g + i0);
    }
    return lattn__ok(ctx);
}

#ifndef LATTN_NO_MODELS
/* The table's tensors must lie in one arena in table order (lattn__arena_bind's layout). */
static lattn_status lattn__optim_bind(lattn_ctx *ctx, const char *who, lattn_optim *o, const lattn_tensor *tab, int64_t nt) {
    size_t total = 0;
    int64_t i;
    if (!o) return lattn__fail(ctx, LATTN_E_NULL, "%s: optimizer is NULL", who);
    memset(o, 0, sizeof *o);
    if (!tab) return lattn__fail(ctx, LATTN_E_NULL, "%s: tensors is NULL", who);
    if (nt < 1 || nt > INT32_MAX) return lattn__fail(ctx, LATTN_E_SHAPE, "%s: %lld tensors", who, (long long)nt);
    for (i = 0; i < nt; i++) {
        if (!tab[i].data || tab[i].data != tab[0].data + total || tab[i].ndim < 1 || tab[i].ndim > 3)
            return lattn__fail(ctx, LATTN_E_SHAPE, "%s: tensor %lld ('%.64s') is not the next block of one arena", who, (long long)i, tab[i].name);
        total += tab[i].count;
    }
    o->rules = (lattn_param_rule *)lattn__alloc(ctx, (size_t)nt * sizeof *o->rules);
    if (!o->rules || lattn__alloc_floats(ctx, &o->m, total, who) != LATTN_OK || lattn__alloc_floats(ctx, &o->v, total, who) != LATTN_OK) {
        lattn_optim_free(ctx, o);
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: cannot allocate the state of %zu parameters", who, total);
    }
    memset(o->m, 0, total * sizeof(float));
    memset(o->v, 0, total * sizeof(float));
    o->adamw = lattn_adamw_default();
    o->muon = lattn_muon_default();
    o->tensors = tab;
    o->n_tensors = nt;
    o->n_params = total;
    return LATTN_OK;
}
/* Spec muon.md §1.2's split (see lattn_optim_init). */
static lattn_param_rule lattn__param_rule(const lattn_tensor *t, int use_muon) {
    static const char *const aux[4] = { "emb", "wte", "lm_head", "conv" };
    lattn_param_rule r;
    int i, hidden = t->ndim == 2 && t->shape[0] > 1 && t->shape[1] > 1;
    for (i = 0; i < 4; i++) hidden &= strstr(t->name, aux[i]) == NULL;
    r.kind = use_muon && hidden ? LATTN_OPT_MUON : LATTN_OPT_ADAMW;
    r.decay = t->ndim >= 2;
    r.lr_scale = 1.0;
    return r;
}
LATTN__DEF lattn_status lattn_optim_init(lattn_ctx *ctx, lattn_optim *o, const lattn_tensor *tensors, int64_t n_tensors, int use_muon) {
    int64_t i;
    LATTN__TRY(lattn__optim_bind(ctx, "lattn_optim_init", o, tensors, n_tensors));
    for (i = 0; i < n_tensors; i++) o->rules[i] = lattn__param_rule(&tensors[i], use_muon);
    return lattn__ok(ctx);
}
LATTN__DEF void lattn_optim_free(lattn_ctx *ctx, lattn_optim *o) {
    if (!o) return;
    lattn__free(ctx, o->rules);
    lattn__free(ctx, o->m);
    lattn__free(ctx, o->v);
    memset(o, 0, sizeof *o);
}
/* A rule in its domain; Muon only for a tensor of two or more dimensions (rows = shape[0]). */
static lattn_status lattn__rule_check(lattn_ctx *ctx, const char *who, const lattn_param_rule *r, const lattn_tensor *t) {
    if ((r->kind != LATTN_OPT_ADAMW && r->kind != LATTN_OPT_MUON) || (r->decay != 0 && r->decay != 1) || !(r->lr_scale >= 0 && r->lr_scale < HUGE_VAL) ||
        (r->kind == LATTN_OPT_MUON && t->ndim < 2))
        return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: tensor '%.64s': rule (kind %d, decay %d, lr scale %g) is not valid for %d dimensions", who, t->name,
                           (int)r->kind, r->decay, r->lr_scale, t->ndim);
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_optim_step(lattn_ctx *ctx, lattn_optim *o, double factor, float *grads) {
    const char *who = "lattn_optim_step";
    int64_t i, j;
    if (!o || !grads || !o->rules) return lattn__fail(ctx, LATTN_E_NULL, "%s: optimizer, its state or grads is NULL", who);
    if (!(factor >= 0 && factor < HUGE_VAL)) return lattn__fail(ctx, LATTN_E_DOMAIN, "%s: lr factor %g", who, factor);
    if (o->t == INT64_MAX) return lattn__fail(ctx, LATTN_E_OVERFLOW, "%s: step count", who);
    LATTN__TRY(lattn__adamw_check(ctx, who, &o->adamw, o->t + 1, 0, NULL, NULL, NULL, NULL));
    LATTN__TRY(lattn__muon_config_check(ctx, who, &o->muon));
    for (i = 0; i < o->n_tensors; i++) LATTN__TRY(lattn__rule_check(ctx, who, &o->rules[i], &o->tensors[i]));
    for (i = 0; i < o->n_tensors; i = j) {                 /* a run of tensors of one rule, or one Muon tensor */
        const lattn_param_rule *r = &o->rules[i];
        const lattn_tensor *t = &o->tensors[i];
        const size_t off = (size_t)(t->data - o->tensors[0].data);
        const double lr = factor * r->lr_scale;
        size_t n = t->count;
        lattn_status st;
        for (j = i + 1; r->kind == LATTN_OPT_ADAMW && j < o->n_tensors && o->rules[j].kind == LATTN_OPT_ADAMW &&
                        o->rules[j].decay == r->decay && o->rules[j].lr_scale == r->lr_scale; j++)
            n += o->tensors[j].count;
        if (r->kind == LATTN_OPT_ADAMW) {
            lattn_adamw_config c = o->adamw;
            c.lr *= lr;
            c.weight_decay = r->decay ? c.weight_decay : 0.0;
            st = lattn_adamw_step(ctx, &c, o->t + 1, n, t->data, grads + off, o->m + off, o->v + off);
        } else {
            lattn_muon_config c = o->muon;
            c.lr *= lr;
            c.weight_decay = r->decay ? c.weight_decay : 0.0;
            st = lattn_muon_step(ctx, &c, t->shape[0], (int64_t)t->count / t->shape[0], t->data, grads + off, o->m + off);
        }
        if (st != LATTN_OK) return st;   /* LATTN_E_NOMEM only: every input was checked above */
    }
    o->t++;
    return lattn__ok(ctx);
}

/* ---- the optimizer's state as safetensors ------------------------------------------------------- */
/* The configurations and the step count as "optim.*" metadata. */
#define LATTN__OPTIM_NF 13
static void lattn__optim_fields(lattn_optim *o, int64_t *ns_steps, int *nesterov, int *mode, int *scale, lattn__cfield *fl) {
    static const char *const onoff[2] = { "0", "1" }, *const modes[2] = { "fp32", "bf16" }, *const scales[2] = { "shape_ratio", "rms_match" };
    const lattn__cfield f[LATTN__OPTIM_NF] = {
        { "optim.step", &o->t, NULL, NULL, NULL, NULL, 0 },
        { "optim.adamw.lr", NULL, NULL, &o->adamw.lr, NULL, NULL, 0 },
        { "optim.adamw.beta1", NULL, NULL, &o->adamw.beta1, NULL, NULL, 0 },
        { "optim.adamw.beta2", NULL, NULL, &o->adamw.beta2, NULL, NULL, 0 },
        { "optim.adamw.eps", NULL, NULL, &o->adamw.eps, NULL, NULL, 0 },
        { "optim.adamw.weight_decay", NULL, NULL, &o->adamw.weight_decay, NULL, NULL, 0 },
        { "optim.muon.lr", NULL, NULL, &o->muon.lr, NULL, NULL, 0 },
        { "optim.muon.momentum", NULL, NULL, &o->muon.momentum, NULL, NULL, 0 },
        { "optim.muon.weight_decay", NULL, NULL, &o->muon.weight_decay, NULL, NULL, 0 },
        { "optim.muon.nesterov", NULL, NULL, NULL, nesterov, onoff, 2 },
        { "optim.muon.ns_steps", ns_steps, NULL, NULL, NULL, NULL, 0 },
        { "optim.muon.ns_mode", NULL, NULL, NULL, mode, modes, 2 },
        { "optim.muon.scale", NULL, NULL, NULL, scale, scales, 2 },
    };
    memcpy(fl, f, sizeof f);
}
/* Tensor i's state names: "exp_avg." / "momentum_buffer." and "exp_avg_sq." + its name. */
static void lattn__optim_names(const lattn_optim *o, int64_t i, const char *prefix, char (*nm)[2 * LATTN_NAME_MAX + 32]) {
    const int muon = o->rules[i].kind == LATTN_OPT_MUON;
    snprintf(nm[0], sizeof nm[0], "%s%s%s", prefix, muon ? "momentum_buffer." : "exp_avg.", o->tensors[i].name);
    snprintf(nm[1], sizeof nm[1], "%sexp_avg_sq.%s", prefix, o->tensors[i].name);
}
LATTN__DEF lattn_status lattn_optim_serialize(lattn_ctx *ctx, const lattn_optim *o, unsigned char **out, size_t *size) {
    const char *who = "lattn_optim_serialize";
    lattn_optim cp;
    lattn__cfield fl[LATTN__OPTIM_NF];
    char vals[LATTN__CFG_MAX][32], (*names)[2 * LATTN_NAME_MAX + 32];
    const char *meta[2 * LATTN__CFG_MAX];
    lattn_st_entry *e;
    double *rules;
    int64_t i, ne = 0, ns, rshape[2];
    int nesterov, mode, scale;
    lattn_status st;
    if (!o || !o->rules || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "%s: NULL argument", who);
    cp = *o;
    ns = cp.muon.ns_steps;
    nesterov = cp.muon.nesterov != 0;
    mode = cp.muon.ns_mode == LATTN_NS_BF16;
    scale = cp.muon.scale == LATTN_MUON_SCALE_RMS_MATCH;
    lattn__optim_fields(&cp, &ns, &nesterov, &mode, &scale, fl);
    lattn__cfg_write(fl, LATTN__OPTIM_NF, vals, meta);
    e = (lattn_st_entry *)lattn__alloc(ctx, (size_t)(2 * o->n_tensors + 1) * sizeof *e);
    names = (char (*)[2 * LATTN_NAME_MAX + 32])lattn__alloc(ctx, (size_t)(2 * o->n_tensors) * sizeof *names);
    rules = (double *)lattn__alloc(ctx, (size_t)(3 * o->n_tensors) * sizeof(double));
    if (!e || !names || !rules) {
        lattn__free(ctx, e); lattn__free(ctx, names); lattn__free(ctx, rules);
        return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    }
    for (i = 0; i < o->n_tensors; i++) {
        const lattn_tensor *t = &o->tensors[i];
        const size_t off = (size_t)(t->data - o->tensors[0].data);
        int k;
        lattn__optim_names(o, i, "", names + 2 * i);
        for (k = 0; k < (o->rules[i].kind == LATTN_OPT_MUON ? 1 : 2); k++, ne++) {
            e[ne].name = names[2 * i + k];
            e[ne].dtype = LATTN_DTYPE_F32;
            e[ne].ndim = t->ndim;
            e[ne].shape = t->shape;
            e[ne].data = (k ? o->v : o->m) + off;
        }
        rules[3 * i] = (double)o->rules[i].kind;
        rules[3 * i + 1] = (double)o->rules[i].decay;
        rules[3 * i + 2] = o->rules[i].lr_scale;
    }
    rshape[0] = o->n_tensors;
    rshape[1] = 3;
    e[ne].name = "optim.rules";
    e[ne].dtype = LATTN_DTYPE_F64;
    e[ne].ndim = 2;
    e[ne].shape = rshape;
    e[ne].data = rules;
    st = lattn_st_serialize(ctx, e, ne + 1, meta, LATTN__OPTIM_NF, out, size);
    lattn__free(ctx, e); lattn__free(ctx, names); lattn__free(ctx, rules);
    return st;
}
/* The file's state into a bound optimizer: metadata, rules, then every tensor's buffers. */
static lattn_status lattn__optim_read(lattn_ctx *ctx, const char *who, lattn_optim *o, const lattn_st_file *f, const char *prefix) {
    char key[2 * LATTN_NAME_MAX + 32], nm[2][2 * LATTN_NAME_MAX + 32];
    lattn__cfield fl[LATTN__OPTIM_NF];
    const lattn_st_tensor *rt;
    double *rules;
    int64_t i, ns = 0;
    int nesterov = 0, mode = 0, scale = 0, k;
    lattn_status st;
    lattn__optim_fields(o, &ns, &nesterov, &mode, &scale, fl);
    LATTN__TRY(lattn__cfg_read(ctx, who, f, fl, LATTN__OPTIM_NF));
    o->muon.nesterov = nesterov;
    o->muon.ns_mode = mode ? LATTN_NS_BF16 : LATTN_NS_FP32;
    o->muon.scale = scale ? LATTN_MUON_SCALE_RMS_MATCH : LATTN_MUON_SCALE_SHAPE_RATIO;
    o->muon.ns_steps = ns < 0 || ns > 100 ? -1 : (int)ns;
    if (o->t < 0) return lattn__fail(ctx, LATTN_E_FORMAT, "%s: optim.step = %lld", who, (long long)o->t);
    if ((st = lattn__adamw_check(ctx, who, &o->adamw, 1, 0, NULL, NULL, NULL, NULL)) != LATTN_OK ||
        (st = lattn__muon_config_check(ctx, who, &o->muon)) != LATTN_OK)
        return lattn__as_format(ctx, st);
    snprintf(key, sizeof key, "%soptim.rules", prefix);
    rt = lattn_st_find(f, key);
    if (!rt || rt->ndim != 2 || rt->shape[0] != o->n_tensors || rt->shape[1] != 3)
        return lattn__fail(ctx, LATTN_E_FORMAT, "%s: '%s' must be [%lld][3]", who, key, (long long)o->n_tensors);
    rules = (double *)lattn__alloc(ctx, rt->count * sizeof(double));
    if (!rules) return lattn__fail(ctx, LATTN_E_NOMEM, "%s: out of memory", who);
    st = lattn_st_to_f64(ctx, rt, rules, rt->count);
    for (i = 0; st == LATTN_OK && i < o->n_tensors; i++) {
        const double kd = rules[3 * i], dd = rules[3 * i + 1];
        o->rules[i].kind = kd == 1.0 ? LATTN_OPT_MUON : LATTN_OPT_ADAMW;
        o->rules[i].decay = dd == 1.0;
        o->rules[i].lr_scale = rules[3 * i + 2];
        if ((kd != 0.0 && kd != 1.0) || (dd != 0.0 && dd != 1.0) || lattn__rule_check(ctx, who, &o->rules[i], &o->tensors[i]) != LATTN_OK)
            st = lattn__fail(ctx, LATTN_E_FORMAT, "%s: '%s' row %lld (%g, %g, %g) is not a rule for '%.64s'", who, key, (long long)i, kd, dd,
                             rules[3 * i + 2], o->tensors[i].name);
    }
    lattn__free(ctx, rules);
    LATTN__TRY(st);
    for (i = 0; i < o->n_tensors; i++) {
        const lattn_tensor *t = &o->tensors[i];
        const size_t off = (size_t)(t->data - o->tensors[0].data);
        lattn__optim_names(o, i, prefix, nm);
        for (k = 0; k < (o->rules[i].kind == LATTN_OPT_MUON ? 1 : 2); k++) {
            lattn_tensor b = *t;
            b.name[0] = '\0';
            b.data = (k ? o->v : o->m) + off;
            LATTN__TRY(lattn__arena_load(ctx, who, &b, 1, f, nm[k]));
        }
    }
    return LATTN_OK;
}
LATTN__DEF lattn_status lattn_optim_init_st(lattn_ctx *ctx, lattn_optim *o, const lattn_tensor *tensors, int64_t n_tensors,
                                            const lattn_st_file *f, const char *prefix) {
    const char *who = "lattn_optim_init_st";
    lattn_status st;
    LATTN__TRY(lattn__optim_bind(ctx, who, o, tensors, n_tensors));
    if (!f || !prefix) st = lattn__fail(ctx, LATTN_E_NULL, "%s: file or prefix is NULL", who);
    else st = lattn__optim_read(ctx, who, o, f, prefix);
    if (st != LATTN_OK) { lattn_optim_free(ctx, o); return st; }
    return lattn__ok(ctx);
}
#ifndef LATTN_NO_STDIO
LATTN__DEF lattn_status lattn_optim_save(lattn_ctx *ctx, const lattn_optim *o, const char *path) {
    unsigned char *buf = NULL;
    size_t n = 0;
    lattn_status st;
    if (!path) return lattn__fail(ctx, LATTN_E_NULL, "lattn_optim_save: path is NULL");
    LATTN__TRY(lattn_optim_serialize(ctx, o, &buf, &n));
    st = lattn__write_file(ctx, "lattn_optim_save", path, buf, n);
    lattn__free(ctx, buf);
    return st == LATTN_OK ? lattn__ok(ctx) : st;
}
LATTN__DEF lattn_status lattn_optim_init_file(lattn_ctx *ctx, lattn_optim *o, const lattn_tensor *tensors, int64_t n_tensors, const char *path) {
    lattn_st_file f;
    lattn_status st;
    if (o) memset(o, 0, sizeof *o);
    LATTN__TRY(lattn_st_load(ctx, path, &f));
    st = lattn_optim_init_st(ctx, o, tensors, n_tensors, &f, "");
    lattn_st_free(ctx, &f);
    return st;
}
#endif
#endif /* LATTN_NO_MODELS */

#ifndef LATTN_NO_CONFORMANCE
/* ================================================================================================ */
/* >>conformance implementation                                                                     */
/* ================================================================================================ */
LATTN__DEF void lattn_compare(const double *got, const double *want, size_t n, double tol, lattn_cmp *r) {
    double num = 0, den = 0;
    size_t i;
    memset(r, 0, sizeof *r);
    r->n = (int64_t)n;
    r->first_mismatch = -1;
    for (i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (!isfinite(g) || !isfinite(w)) {
            int same = (isnan(g) && isnan(w)) || (isinf(g) && isinf(w) && (g > 0) == (w > 0));
            if (!same) { if (r->first_mismatch < 0) r->first_mismatch = (int64_t)i; r->nonfinite_mismatch++; }
            continue;
        }
        num += (g - w) * (g - w);
        den += w * w;
        if (fabs(g - w) > r->max_abs) r->max_abs = fabs(g - w);
    }
    r->rel_rms = den > 0 ? sqrt(num / den) : sqrt(num);
    r->pass = r->nonfinite_mismatch == 0 && r->rel_rms <= tol;
}

/* Inputs of a case as float32 copies (owned by the runner) and the outputs it produces. */
#define LATTN__CASE_MAX 64
typedef struct lattn__case {
    lattn_ctx *ctx;
    const lattn_st_file *c;
    void *own[LATTN__CASE_MAX];
    int n_own;
    lattn_st_entry out[16];
    int n_out;
    lattn_status bad;
    char bad_msg[200]; /* the first metadata number refused (the case is refused) */
} lattn__case;

static void *lattn__case_keep(lattn__case *k, size_t bytes) {
    void *p;
    if (k->n_own == LATTN__CASE_MAX) return NULL;
    p = lattn__alloc(k->ctx, bytes);
    if (p) k->own[k->n_own++] = p;
    return p;
}
/* A float copy of tensor `name`; *x stays NULL when it is absent and optional. */
static lattn_status lattn__case_in(lattn__case *k, const char *name, int required, const float **x,
                                   const lattn_st_tensor **tt) {
    const lattn_st_tensor *t = lattn_st_find(k->c, name);
    float *p;
    *x = NULL;
    if (tt) *tt = t;
    if (!t) return required ? lattn__fail(k->ctx, LATTN_E_FORMAT, "case: missing tensor '%s'", name) : LATTN_OK;
    p = (float *)lattn__case_keep(k, t->count * sizeof(float));
    if (!p) return lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory");
    LATTN__TRY(lattn_st_to_f32(k->ctx, t, p, t->count));
    *x = p;
    return LATTN_OK;
}
/* An output buffer for "out.<name>" when the case expects it; NULL otherwise. */
static lattn_status lattn__case_out(lattn__case *k, const char *name, float **x) {
    const lattn_st_tensor *t = lattn_st_find(k->c, name);
    lattn_st_entry *e;
    *x = NULL;
    if (!t) return LATTN_OK;
    if (k->n_out == 16) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: too many outputs");
    *x = (float *)lattn__case_keep(k, t->count * sizeof(float) + 1);
    if (!*x) return lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory");
    e = &k->out[k->n_out++];
    e->name = t->name;
    e->dtype = LATTN_DTYPE_F32;
    e->ndim = t->ndim;
    e->shape = t->shape;
    e->data = *x;
    return LATTN_OK;
}
/* The numeric options of a case's metadata and their domains (integral: an integer is required). */
static const struct lattn__case_opt { const char *key; double lo, hi; int integral; } lattn__case_opts[] = {
    { "chunk", 0, 1 << 20, 1 },       { "k", 1, 1 << 20, 1 },            { "layers", 1, 1 << 16, 1 },
    { "window", 0, 9007199254740992.0, 1 }, { "groups", 1, INT32_MAX, 1 }, { "silu", 0, 1, 1 },
    { "normalize", 0, 1, 1 },         { "l2norm", 0, 1, 1 },             { "allow_neg_eigval", 0, 1, 1 },
    { "log_space", 0, 1, 1 },         { "dt_softplus", 0, 1, 1 },        { "complex", 0, 1, 1 },
    { "retnet_decay", 0, 1, 1 },      { "nesterov", 0, 1, 1 },           { "bf16", 0, 1, 1 },
    { "ns_steps", 0, 100, 1 },        { "lr", 0, FLT_MAX, 0 },           { "beta1", 0, 1, 0 },
    { "beta2", 0, 1, 0 },             { "momentum", 0, 1, 0 },           { "weight_decay", 0, FLT_MAX, 0 },
    { "eps", 0, FLT_MAX, 0 },         { "scale", -FLT_MAX, FLT_MAX, 0 }, { "sps.w", 0, INT32_MAX, 1 },
    { "sps.predict_id", -1, INT32_MAX, 1 }, { "sps.eos_id", -1, INT32_MAX, 1 }, { "sps.pad_id", -1, INT32_MAX, 1 }
};
/* Option `key` of the case, read strictly: the whole string, finite, in its domain; absent: dflt.
   Anything else refuses the case (k->bad, whatever the form) and returns dflt. */
static double lattn__case_num(lattn__case *k, const char *key, double dflt) {
    const char *v = lattn_st_meta(k->c, key);
    const struct lattn__case_opt *o = lattn__case_opts;
    char *end = NULL;
    double x;
    while (strcmp(o->key, key) != 0) o++;          /* every caller names a listed option */
    if (!v) return dflt;
    errno = 0;
    x = strtod(v, &end);
    if (end != v && *end == '\0' && errno == 0 && isfinite(x) && x >= o->lo && x <= o->hi && (!o->integral || x == floor(x))) return x;
    if (k->bad == LATTN_OK) {
        k->bad = LATTN_E_FORMAT;
        snprintf(k->bad_msg, sizeof k->bad_msg, "case: metadata \"%s\" = \"%.40s\" is not %s in [%.17g, %.17g]",
                 key, v, o->integral ? "an integer" : "a finite number", o->lo, o->hi);
    }
    return dflt;
}
static int64_t lattn__case_int(lattn__case *k, const char *key, int64_t dflt) { return (int64_t)lattn__case_num(k, key, (double)dflt); }
static int lattn__case_flag(lattn__case *k, const char *key, int dflt) { return (int)lattn__case_num(k, key, dflt); }
/* The case's "pass": 0 forward (absent or "forward"), 1 backward (a gradient case: in.dout in,
   out.d<name> out); anything else refuses the case. */
static int lattn__case_pass(lattn__case *k) {
    const char *v = lattn_st_meta(k->c, "pass");
    if (!v || strcmp(v, "forward") == 0) return 0;
    if (strcmp(v, "backward") == 0) return 1;
    if (k->bad == LATTN_OK) {
        k->bad = LATTN_E_FORMAT;
        snprintf(k->bad_msg, sizeof k->bad_msg, "case: metadata \"pass\" = \"%.40s\" is not forward or backward", v);
    }
    return -1;
}
/* Offsets "in.offsets" (I64, N+1 values), or NULL. */
static lattn_status lattn__case_offsets(lattn__case *k, const int64_t **off, int64_t *n) {
    const lattn_st_tensor *t = lattn_st_find(k->c, "in.offsets");
    int64_t *p;
    *off = NULL;
    *n = 0;
    if (!t) return LATTN_OK;
    if (t->dtype != LATTN_DTYPE_I64 || t->count < 2) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.offsets must be I64 with >= 2 values");
    p = (int64_t *)lattn__case_keep(k, t->count * sizeof(int64_t));
    if (!p) return lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory");
    memcpy(p, t->data, t->count * sizeof(int64_t));
    *off = p;
    *n = (int64_t)t->count - 1;
    return LATTN_OK;
}
static lattn_status lattn__case_dims(lattn__case *k, const lattn_st_tensor *t, int nd, const char *name) {
    if (!t || t->ndim != nd) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: %s must have %d dimensions", name, nd);
    return LATTN_OK;
}
/* A tensor the case holds must have exactly the count its shape implies (a hostile file may not
   make a mixer read or write past a buffer). want < 0: the count overflowed. */
static lattn_status lattn__case_count(lattn__case *k, const char *name, int64_t want) {
    const lattn_st_tensor *t = lattn_st_find(k->c, name);
    if (t && (want < 0 || t->count != (size_t)want))
        return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: %s holds %zu values, its shape needs %lld", name, t->count, (long long)want);
    return LATTN_OK;
}

/* A gradient case's tensors: names[0], names[1] are in.dout (required when need_dout) and in.dht,
   read into *dout, *dht; the rest out.d<name>, buffers into *out[i - 2]; each against its count. */
static lattn_status lattn__case_grad_io(lattn__case *k, int n, const char *const *names, const int64_t *counts, int need_dout,
                                        const float **dout, const float **dht, float **const *out) {
    int i;
    for (i = 0; i < n; i++) LATTN__TRY(lattn__case_count(k, names[i], counts[i]));
    LATTN__TRY(lattn__case_in(k, names[0], need_dout, dout, NULL));
    LATTN__TRY(lattn__case_in(k, names[1], 0, dht, NULL));
    for (i = 2; i < n; i++) LATTN__TRY(lattn__case_out(k, names[i], out[i - 2]));
    return LATTN_OK;
}

static lattn_status lattn__case_conv(lattn__case *k, lattn_form form) {
    lattn_shortconv_args a;
    const lattn_st_tensor *tx, *tw;
    float *y, *ht;
    memset(&a, 0, sizeof a);
    LATTN__TRY(lattn__case_in(k, "in.x", 1, &a.x, &tx));
    LATTN__TRY(lattn__case_in(k, "in.w", 1, &a.w, &tw));
    LATTN__TRY(lattn__case_dims(k, tx, 3, "in.x"));
    LATTN__TRY(lattn__case_dims(k, tw, 2, "in.w"));
    LATTN__TRY(lattn__case_in(k, "in.bias", 0, &a.bias, NULL));
    LATTN__TRY(lattn__case_in(k, "in.h0", 0, &a.h0, NULL));
    LATTN__TRY(lattn__case_offsets(k, &a.offsets, &a.n_seqs));
    LATTN__TRY(lattn__case_out(k, "out.y", &y));
    LATTN__TRY(lattn__case_out(k, "out.ht", &ht));
    a.B = tx->shape[0];
    a.T = tx->shape[1];
    a.D = tx->shape[2];
    a.W = tw->shape[1];
    a.silu = lattn__case_flag(k, "silu", 0);
    a.y = y;
    a.ht = ht;
    {   /* every tensor against the shapes of x and w */
        const int64_t n = a.offsets ? a.n_seqs : a.B, BTD = a.B * a.T * a.D, nDW = n * a.D * a.W;
        if (tw->shape[0] != a.D) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.w does not match in.x's D");
        LATTN__TRY(lattn__case_count(k, "in.bias", a.D));
        LATTN__TRY(lattn__case_count(k, "in.h0", nDW));
        LATTN__TRY(lattn__case_count(k, "out.y", BTD));
        LATTN__TRY(lattn__case_count(k, "out.ht", nDW));
        if (lattn__case_pass(k) == 1) {   /* a gradient case: lattn_shortconv_ref_backward or _chunk_backward */
            static const char *const dn[6] = { "in.dout", "in.dht", "out.dx", "out.dw", "out.dbias", "out.dh0" };
            const int64_t dc[6] = { BTD, nDW, BTD, a.D * a.W, a.D, nDW };
            lattn_shortconv_grads gr;
            memset(&gr, 0, sizeof gr);
            {
                float **const o[4] = { &gr.dx, &gr.dw, &gr.dbias, &gr.dh0 };
                LATTN__TRY(lattn__case_grad_io(k, 6, dn, dc, 1, &gr.dout, &gr.dht, o));
            }
            if (form == LATTN_FORM_REF) return lattn_shortconv_ref_backward(k->ctx, &a, &gr);
            if (form == LATTN_FORM_CHUNK) return lattn_shortconv_chunk_backward(k->ctx, &a, &gr);
            return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: a gradient case has the ref and chunk forms, not %s", lattn_form_name(form));
        }
    }
    if (form == LATTN_FORM_REF) return lattn_shortconv_ref(k->ctx, &a);
    if (form == LATTN_FORM_CHUNK) return lattn_shortconv_chunk(k->ctx, &a);
    if (form == LATTN_FORM_STEP) return lattn_shortconv_step(k->ctx, &a);
    return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: shortconv has no %s form", lattn_form_name(form));
}

static lattn_status lattn__case_tcn(lattn__case *k, lattn_form form) {
    lattn_tcn_args a;
    lattn_tcn_layer L[LATTN_TCN_MAX_LAYERS];
    const lattn_st_tensor *tx;
    float *y;
    int64_t l;
    char nm[32];
    memset(&a, 0, sizeof a);
    LATTN__TRY(lattn__case_in(k, "in.x", 1, &a.x, &tx));
    LATTN__TRY(lattn__case_dims(k, tx, 3, "in.x"));
    a.B = tx->shape[0];
    a.T = tx->shape[1];
    a.D = tx->shape[2];
    a.W = lattn__case_int(k, "k", 3);
    a.n_layers = lattn__case_int(k, "layers", 4);
    if (a.n_layers < 1 || a.n_layers > LATTN_TCN_MAX_LAYERS) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: bad layer count");
    for (l = 0; l < a.n_layers; l++) {
        snprintf(nm, sizeof nm, "in.w.%d", (int)l);
        LATTN__TRY(lattn__case_in(k, nm, 1, &L[l].w, NULL));
        snprintf(nm, sizeof nm, "in.b.%d", (int)l);
        LATTN__TRY(lattn__case_in(k, nm, 1, &L[l].b, NULL));
        snprintf(nm, sizeof nm, "in.ln_w.%d", (int)l);
        LATTN__TRY(lattn__case_in(k, nm, 1, &L[l].ln_w, NULL));
        snprintf(nm, sizeof nm, "in.ln_b.%d", (int)l);
        LATTN__TRY(lattn__case_in(k, nm, 1, &L[l].ln_b, NULL));
        snprintf(nm, sizeof nm, "in.w.%d", (int)l);
        if (lattn_st_find(k->c, nm)->count != (size_t)(a.D * a.D * a.W))
            return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: %s does not hold D x D x W values", nm);
    }
    LATTN__TRY(lattn__case_out(k, "out.y", &y));
    a.layers = L;
    a.y = y;
    if (form == LATTN_FORM_REF) return lattn_tcn_ref(k->ctx, &a);
    if (form == LATTN_FORM_CHUNK) return lattn_tcn_chunk(k->ctx, &a);
    if (form == LATTN_FORM_STEP) return lattn_tcn_step(k->ctx, &a);
    return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: tcn has no %s form", lattn_form_name(form));
}

/* The linear-attention family in case files: one runner, the gates decide the member. */
static int lattn__is_la(const char *m) {
    return strcmp(m, "linear_attn") == 0 || strcmp(m, "gla") == 0 || strcmp(m, "simple_gla") == 0 || strcmp(m, "retention") == 0;
}
static lattn_status lattn__case_la(lattn__case *k, lattn_form form) {
    static const char *const maps[] = { "identity", "relu", "elu1", "hadamard", "hedgehog" };
    lattn_la_args a = LATTN__ZERO;
    const lattn_st_tensor *tq, *tv;
    const char *fm = lattn_st_meta(k->c, "fmap");
    float *o, *ht, *zt;
    int i;
    LATTN__TRY(lattn__case_in(k, "in.q", 1, &a.q, &tq));
    LATTN__TRY(lattn__case_in(k, "in.k", 1, &a.k, NULL));
    LATTN__TRY(lattn__case_in(k, "in.v", 1, &a.v, &tv));
    LATTN__TRY(lattn__case_dims(k, tq, 4, "in.q"));
    LATTN__TRY(lattn__case_dims(k, tv, 4, "in.v"));
    LATTN__TRY(lattn__case_in(k, "in.h0", 0, &a.h0, NULL));
    LATTN__TRY(lattn__case_in(k, "in.z0", 0, &a.z0, NULL));
    LATTN__TRY(lattn__case_in(k, "in.fmap_w", 0, &a.fmap_w, NULL));
    LATTN__TRY(lattn__case_in(k, "in.fmap_b", 0, &a.fmap_b, NULL));
    LATTN__TRY(lattn__case_in(k, "in.fmap_wk", 0, &a.fmap_wk, NULL));
    LATTN__TRY(lattn__case_in(k, "in.fmap_bk", 0, &a.fmap_bk, NULL));
    LATTN__TRY(lattn__case_in(k, "in.gk", 0, &a.gk, NULL));
    LATTN__TRY(lattn__case_in(k, "in.g", 0, &a.g, NULL));
    LATTN__TRY(lattn__case_in(k, "in.g_gamma", 0, &a.g_gamma, NULL));
    LATTN__TRY(lattn__case_offsets(k, &a.offsets, &a.n_seqs));
    LATTN__TRY(lattn__case_out(k, "out.o", &o));
    LATTN__TRY(lattn__case_out(k, "out.ht", &ht));
    LATTN__TRY(lattn__case_out(k, "out.zt", &zt));
    for (i = 0; fm && i < 5 && strcmp(fm, maps[i]) != 0; i++) {}
    if (fm && i == 5) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: unknown fmap '%s'", fm);
    a.fmap = fm ? (lattn_fmap)i : LATTN_FMAP_IDENTITY;
    a.B = tq->shape[0];
    a.T = tq->shape[1];
    a.H = tq->shape[2];
    a.K = tq->shape[3];
    a.V = tv->shape[3];
    a.normalize = lattn__case_flag(k, "normalize", 0);
    a.retnet_decay = lattn__case_flag(k, "retnet_decay", 0);
    a.eps = (float)lattn__case_num(k, "eps", 1e-6);
    a.scale = lattn__case_num(k, "scale", 0);
    a.o = o;
    a.ht = ht;
    a.zt = zt;
    a.chunk = (int)lattn__case_int(k, "chunk", 0);
    {   /* every tensor against the shape q and v set (sizes are small: no product overflows
           once each factor fits the checked shape of q or v, which the parser bounds) */
        int64_t n = a.offsets ? a.n_seqs : a.B, Kf = lattn_fmap_width(a.fmap, a.K), BTH = a.B * a.T * a.H;
        LATTN__TRY(lattn__case_count(k, "in.k", BTH * a.K));
        LATTN__TRY(lattn__case_count(k, "in.gk", BTH * a.K));
        LATTN__TRY(lattn__case_count(k, "in.g", BTH));
        LATTN__TRY(lattn__case_count(k, "in.g_gamma", a.H));
        LATTN__TRY(lattn__case_count(k, "in.h0", n * a.H * Kf * a.V));
        LATTN__TRY(lattn__case_count(k, "in.z0", n * a.H * Kf));
        LATTN__TRY(lattn__case_count(k, "in.fmap_w", (a.fmap == LATTN_FMAP_HADAMARD ? 2 : 1) * a.K * a.K));
        LATTN__TRY(lattn__case_count(k, "in.fmap_b", (a.fmap == LATTN_FMAP_HADAMARD ? 2 : 1) * a.K));
        LATTN__TRY(lattn__case_count(k, "in.fmap_wk", (a.fmap == LATTN_FMAP_HADAMARD ? 2 : 1) * a.K * a.K));
        LATTN__TRY(lattn__case_count(k, "in.fmap_bk", (a.fmap == LATTN_FMAP_HADAMARD ? 2 : 1) * a.K));
        LATTN__TRY(lattn__case_count(k, "out.o", BTH * a.V));
        LATTN__TRY(lattn__case_count(k, "out.ht", n * a.H * Kf * a.V));
        LATTN__TRY(lattn__case_count(k, "out.zt", n * a.H * Kf));
        if (lattn_st_find(k->c, "in.v")->count != (size_t)(BTH * a.V) || tv->shape[0] != a.B || tv->shape[1] != a.T || tv->shape[2] != a.H)
            return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.v does not match in.q's [B][T][H]");
        if (lattn__case_pass(k) == 1) {   /* a gradient case: lattn_la_ref_backward or lattn_la_chunk_backward */
            const int64_t nw = a.fmap == LATTN_FMAP_HADAMARD ? 2 * a.K : a.fmap == LATTN_FMAP_HEDGEHOG ? a.K : 0;
            static const char *const dn[9] = { "in.dout", "in.dht", "in.dzt", "out.dq", "out.dk", "out.dv", "out.dgk", "out.dg", "out.dh0" };
            const int64_t dc[9] = { BTH * a.V, n * a.H * Kf * a.V, n * a.H * Kf, BTH * a.K, BTH * a.K, BTH * a.V, BTH * a.K, BTH,
                                    n * a.H * Kf * a.V };
            lattn_la_grads gr = LATTN__ZERO;
            for (i = 0; i < 9; i++) LATTN__TRY(lattn__case_count(k, dn[i], dc[i]));
            LATTN__TRY(lattn__case_count(k, "out.dz0", n * a.H * Kf));
            LATTN__TRY(lattn__case_count(k, "out.dfmap_w", nw * a.K));
            LATTN__TRY(lattn__case_count(k, "out.dfmap_b", nw));
            LATTN__TRY(lattn__case_in(k, "in.dout", 1, &gr.dout, NULL));
            LATTN__TRY(lattn__case_in(k, "in.dht", 0, &gr.dht, NULL));
            LATTN__TRY(lattn__case_in(k, "in.dzt", 0, &gr.dzt, NULL));
            LATTN__TRY(lattn__case_out(k, "out.dq", &gr.dq));
            LATTN__TRY(lattn__case_out(k, "out.dk", &gr.dk));
            LATTN__TRY(lattn__case_out(k, "out.dv", &gr.dv));
            LATTN__TRY(lattn__case_out(k, "out.dgk", &gr.dgk));
            LATTN__TRY(lattn__case_out(k, "out.dg", &gr.dg));
            LATTN__TRY(lattn__case_out(k, "out.dh0", &gr.dh0));
            LATTN__TRY(lattn__case_out(k, "out.dz0", &gr.dz0));
            LATTN__TRY(lattn__case_out(k, "out.dfmap_w", &gr.dfmap_w));
            LATTN__TRY(lattn__case_out(k, "out.dfmap_b", &gr.dfmap_b));
            if (form == LATTN_FORM_CHUNK) return lattn_la_chunk_backward(k->ctx, &a, &gr);
            if (form != LATTN_FORM_REF)
                return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: a gradient case has the ref and chunk forms, not %s", lattn_form_name(form));
            return lattn_la_ref_backward(k->ctx, &a, &gr);
        }
    }
    switch (form) {
    case LATTN_FORM_REF: return lattn_la_ref(k->ctx, &a);
    case LATTN_FORM_PARALLEL: return lattn_la_parallel(k->ctx, &a);
    case LATTN_FORM_CHUNK: return lattn_la_chunk(k->ctx, &a);
    case LATTN_FORM_STEP: return lattn_la_step(k->ctx, &a);
    default: return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: linear_attn has no %s form", lattn_form_name(form));
    }
}

/* The delta-rule family (mixer "gdr"; fla's delta_rule and gated_delta_rule map onto it). */
static lattn_status lattn__case_gdr(lattn__case *k, lattn_form form) {
    lattn_gdr_args a = LATTN__ZERO;
    const lattn_st_tensor *tq, *tv, *tb;
    float *o, *ht;
    LATTN__TRY(lattn__case_in(k, "in.q", 1, &a.q, &tq));
    LATTN__TRY(lattn__case_in(k, "in.k", 1, &a.k, NULL));
    LATTN__TRY(lattn__case_in(k, "in.v", 1, &a.v, &tv));
    LATTN__TRY(lattn__case_in(k, "in.beta", 1, &a.beta, NULL));
    LATTN__TRY(lattn__case_dims(k, tq, 4, "in.q"));
    LATTN__TRY(lattn__case_dims(k, tv, 4, "in.v"));
    LATTN__TRY(lattn__case_in(k, "in.g", 0, &a.g, NULL));
    LATTN__TRY(lattn__case_in(k, "in.gk", 0, &a.gk, NULL));
    LATTN__TRY(lattn__case_in(k, "in.e", 0, &a.e, NULL));
    LATTN__TRY(lattn__case_in(k, "in.c", 0, &a.c, NULL));
    LATTN__TRY(lattn__case_in(k, "in.inj_b", 0, &a.inj_b, &tb));
    LATTN__TRY(lattn__case_in(k, "in.inj_kap", 0, &a.inj_kap, NULL));
    LATTN__TRY(lattn__case_in(k, "in.inj_d", 0, &a.inj_d, NULL));
    LATTN__TRY(lattn__case_in(k, "in.h0", 0, &a.h0, NULL));
    LATTN__TRY(lattn__case_offsets(k, &a.offsets, &a.n_seqs));
    LATTN__TRY(lattn__case_out(k, "out.o", &o));
    LATTN__TRY(lattn__case_out(k, "out.ht", &ht));
    a.B = tq->shape[0];
    a.T = tq->shape[1];
    a.H = tq->shape[2];
    a.K = tq->shape[3];
    a.V = tv->shape[3];
    a.L = tb ? (tb->ndim == 4 ? tb->shape[3] : -1) : 0;
    a.l2norm = lattn__case_flag(k, "l2norm", 0);
    a.allow_neg_eigval = lattn__case_flag(k, "allow_neg_eigval", 0);
    a.scale = lattn__case_num(k, "scale", 0);
    a.o = o;
    a.ht = ht;
    {   /* every tensor against the shapes q and v set */
        int64_t n = a.offsets ? a.n_seqs : a.B, BTH = a.B * a.T * a.H, Lc = LATTN__MAX(a.L, 0);
        if (a.L < 0) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.inj_b must be [B][T][H][L]");
        LATTN__TRY(lattn__case_count(k, "in.k", BTH * a.K));
        LATTN__TRY(lattn__case_count(k, "in.e", BTH * a.K));
        LATTN__TRY(lattn__case_count(k, "in.gk", BTH * a.K));
        LATTN__TRY(lattn__case_count(k, "in.beta", BTH));
        LATTN__TRY(lattn__case_count(k, "in.g", BTH));
        LATTN__TRY(lattn__case_count(k, "in.c", BTH));
        LATTN__TRY(lattn__case_count(k, "in.inj_b", BTH * Lc));
        LATTN__TRY(lattn__case_count(k, "in.inj_kap", BTH * Lc * a.K));
        LATTN__TRY(lattn__case_count(k, "in.inj_d", BTH * Lc * a.V));
        LATTN__TRY(lattn__case_count(k, "in.h0", n * a.H * a.K * a.V));
        LATTN__TRY(lattn__case_count(k, "out.o", BTH * a.V));
        LATTN__TRY(lattn__case_count(k, "out.ht", n * a.H * a.K * a.V));
        if (lattn_st_find(k->c, "in.v")->count != (size_t)(BTH * a.V) || tv->shape[0] != a.B || tv->shape[1] != a.T || tv->shape[2] != a.H)
            return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.v does not match in.q's [B][T][H]");
        if (a.L > 0 && (!a.inj_kap || !a.inj_d)) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.inj_b without in.inj_kap and in.inj_d");
        if (lattn__case_pass(k) == 1) {   /* a gradient case: lattn_gdr_ref_backward (the ref form only) */
            const int64_t nS = n * a.H * a.K * a.V;
            static const char *const dn[14] = { "in.dout", "in.dht", "out.dq", "out.dk", "out.de", "out.dv", "out.dbeta", "out.dc",
                                                "out.dg", "out.dgk", "out.dinj_b", "out.dinj_kap", "out.dinj_d", "out.dh0" };
            const int64_t dc[14] = { BTH * a.V, nS, BTH * a.K, BTH * a.K, BTH * a.K, BTH * a.V, BTH, BTH, BTH, BTH * a.K, BTH * Lc,
                                     BTH * Lc * a.K, BTH * Lc * a.V, nS };
            lattn_gdr_grads gr = LATTN__ZERO;
            {
                float **const oo[12] = { &gr.dq, &gr.dk, &gr.de, &gr.dv, &gr.dbeta, &gr.dc, &gr.dg, &gr.dgk, &gr.dinj_b, &gr.dinj_kap,
                                         &gr.dinj_d, &gr.dh0 };
                LATTN__TRY(lattn__case_grad_io(k, 14, dn, dc, 1, &gr.dout, &gr.dht, oo));
            }
            if (form == LATTN_FORM_REF) return lattn_gdr_ref_backward(k->ctx, &a, &gr);
            return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: a delta-rule gradient case has the ref form only, not %s", lattn_form_name(form));
        }
    }
    a.chunk = (int)lattn__case_int(k, "chunk", 0);
    switch (form) {
    case LATTN_FORM_REF: return lattn_gdr_ref(k->ctx, &a);
    case LATTN_FORM_CHUNK: return lattn_gdr_chunk(k->ctx, &a);
    case LATTN_FORM_STEP: return lattn_gdr_step(k->ctx, &a);
    default: return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: gdr has no %s form", lattn_form_name(form));
    }
}

/* attention: in.q [B][T][H][K], in.k [B][T][H_kv][K], in.v [B][T][H_kv][V], optional in.offsets;
   "mask" causal | window (with "window"); out.o, out.lse. */
static lattn_status lattn__case_attn(lattn__case *k, lattn_form form) {
    lattn_attn_args a = LATTN__ZERO;
    const lattn_st_tensor *tq, *tk, *tv;
    const char *mask = lattn_st_meta(k->c, "mask");
    float *o, *lse;
    LATTN__TRY(lattn__case_in(k, "in.q", 1, &a.q, &tq));
    LATTN__TRY(lattn__case_in(k, "in.k", 1, &a.k, &tk));
    LATTN__TRY(lattn__case_in(k, "in.v", 1, &a.v, &tv));
    LATTN__TRY(lattn__case_dims(k, tq, 4, "in.q"));
    LATTN__TRY(lattn__case_dims(k, tk, 4, "in.k"));
    LATTN__TRY(lattn__case_dims(k, tv, 4, "in.v"));
    LATTN__TRY(lattn__case_offsets(k, &a.offsets, &a.n_seqs));
    LATTN__TRY(lattn__case_out(k, "out.o", &o));
    LATTN__TRY(lattn__case_out(k, "out.lse", &lse));
    a.B = tq->shape[0];
    a.T = tq->shape[1];
    a.H = tq->shape[2];
    a.K = tq->shape[3];
    a.H_kv = tk->shape[2];
    a.V = tv->shape[3];
    if (tk->shape[0] != a.B || tk->shape[1] != a.T || tk->shape[3] != a.K || tv->shape[0] != a.B || tv->shape[1] != a.T ||
        tv->shape[2] != a.H_kv || a.H_kv < 1)
        return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.k, in.v do not match in.q");
    LATTN__TRY(lattn__case_count(k, "out.o", a.B * a.T * a.H * a.V));
    LATTN__TRY(lattn__case_count(k, "out.lse", a.B * a.T * a.H));
    if (mask && strcmp(mask, "window") == 0) { a.mask = LATTN_MASK_WINDOW; a.window = lattn__case_int(k, "window", 0); }
    else if (mask && strcmp(mask, "causal") != 0) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: unknown mask '%s'", mask);
    a.scale = lattn__case_num(k, "scale", 0);
    if (lattn__case_pass(k) == 1) {       /* a gradient case: lattn_attn_ref_backward (the ref form only) */
        const int64_t BTH = a.B * a.T * a.H, BTHkv = a.B * a.T * a.H_kv;
        static const char *const dn[5] = { "in.dout", "in.dlse", "out.dq", "out.dk", "out.dv" };
        const int64_t dc[5] = { BTH * a.V, BTH, BTH * a.K, BTHkv * a.K, BTHkv * a.V };
        lattn_attn_grads gr = LATTN__ZERO;
        {
            float **const oo[3] = { &gr.dq, &gr.dk, &gr.dv };
            LATTN__TRY(lattn__case_grad_io(k, 5, dn, dc, 1, &gr.dout, &gr.dlse, oo));
        }
        if (form == LATTN_FORM_REF) return lattn_attn_ref_backward(k->ctx, &a, &gr);
        return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: an attention gradient case has the ref form only, not %s", lattn_form_name(form));
    }
    if (!o) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: attention needs out.o");
    a.o = o;
    a.lse = lse;
    a.chunk = (int)lattn__case_int(k, "chunk", 0);
    switch (form) {
    case LATTN_FORM_REF: return lattn_attn_ref(k->ctx, &a);
    case LATTN_FORM_CHUNK: return lattn_attn_chunk(k->ctx, &a);
    case LATTN_FORM_STEP: return lattn_attn_step(k->ctx, &a, NULL);
    default: return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: attention has no %s form", lattn_form_name(form));
    }
}
/* transformer / sps: the model's tensors under in.<name> with its tf.* configuration (sps: the
   variant as sps.variant, sps.w, sps.predict_id, sps.eos_id, sps.pad_id), in.tokens [B][T] (I32);
   out.logits [B][T][vocab], out.loss [1]. The step form decodes token by token. */
#ifndef LATTN_NO_MODELS
static lattn_status lattn__case_tf(lattn__case *k, lattn_form form, int sps) {
    const lattn_st_tensor *tt = lattn_st_find(k->c, "in.tokens");
    const char *vn = lattn_st_meta(k->c, "sps.variant");
    lattn_tf_model m;
    lattn_tf_cache cache;
    lattn_sps_cache sc;
    lattn_sps_config s;
    int vi;
    float *lg, *loss, *row;
    int32_t *tok, *step;
    double l = 0.0;
    int64_t B, T, t, b, V;
    lattn_status st;
    if (!tt || tt->dtype != LATTN_DTYPE_I32 || tt->ndim != 2) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.tokens must be I32 [B][T]");
    B = tt->shape[0];
    T = tt->shape[1];
    tok = (int32_t *)lattn__case_keep(k, tt->count * sizeof(int32_t) + B * sizeof(int32_t) + 1);
    if (!tok) return lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory");
    memcpy(tok, tt->data, tt->count * sizeof(int32_t));
    step = tok + tt->count;
    for (vi = 0; sps && vn && vi <= (int)LATTN_SPS_REVERSE && strcmp(vn, lattn_sps_variant_name((lattn_sps_variant)vi)) != 0; vi++) {}
    if (sps && (!vn || vi > (int)LATTN_SPS_REVERSE)) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: sps.variant is missing or unknown");
    s = lattn_sps_config_default((lattn_sps_variant)vi);
    s.w = lattn__case_int(k, "sps.w", 64);
    s.predict_id = (int32_t)lattn__case_int(k, "sps.predict_id", -1);
    s.eos_id = (int32_t)lattn__case_int(k, "sps.eos_id", -1);
    s.pad_id = (int32_t)lattn__case_int(k, "sps.pad_id", -1);
    LATTN__TRY(lattn_tf_init_st(k->ctx, &m, k->c, "in."));
    V = m.cfg.vocab;
    if ((st = lattn__case_count(k, "out.logits", V > 0 ? B * T * V : -1)) == LATTN_OK) st = lattn__case_count(k, "out.loss", 1);
    if (st == LATTN_OK) st = lattn__case_out(k, "out.logits", &lg);
    if (st == LATTN_OK) st = lattn__case_out(k, "out.loss", &loss);
    if (st == LATTN_OK && !lg) st = lattn__fail(k->ctx, LATTN_E_FORMAT, "case: transformer needs out.logits");
    if (st == LATTN_OK && B < 1) st = lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.tokens is empty");
    if (st == LATTN_OK && form == LATTN_FORM_REF)
        st = sps ? lattn_sps_forward_ref(k->ctx, &m, &s, B, T, tok, lg, &l, NULL) : lattn_tf_forward_ref(k->ctx, &m, B, T, tok, NULL, lg, &l, NULL);
    else if (st == LATTN_OK && form == LATTN_FORM_CHUNK)
        st = sps ? lattn_sps_forward(k->ctx, &m, &s, B, T, tok, lg, &l) : lattn_tf_forward(k->ctx, &m, B, T, tok, NULL, lg, &l, NULL);
    else if (st == LATTN_OK && form == LATTN_FORM_STEP) {
        int64_t cnt = 0;
        row = (float *)lattn__case_keep(k, (size_t)(B * V) * sizeof(float) + 1);
        st = !row ? lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory")
           : sps ? lattn_sps_cache_init(k->ctx, &sc, &m, &s, B, LATTN__MAX(T, 1)) : lattn_tf_cache_init(k->ctx, &cache, &m, B, LATTN__MAX(T, 1));
        for (t = 0; st == LATTN_OK && t < T; t++) {
            for (b = 0; b < B; b++) step[b] = tok[b * T + t];
            st = sps ? lattn_sps_step(k->ctx, &m, B, step, row, &sc) : lattn_tf_step(k->ctx, &m, B, step, NULL, row, &cache);
            for (b = 0; st == LATTN_OK && b < B; b++) {
                memcpy(lg + (b * T + t) * V, row + b * V, (size_t)V * sizeof(float));
                if (t + 1 < T && (!sps || (step[b] != s.eos_id && step[b] != s.pad_id))) {   /* the loss from the decoded logits */
                    float mx = lattn_vec_max((size_t)V, row + b * V);
                    double z = 0.0;
                    int64_t i;
                    for (i = 0; i < V; i++) z += exp((double)(row[b * V + i] - mx));
                    l += (double)mx + log(z) - (double)row[b * V + tok[b * T + t + 1]];
                    cnt++;
                }
            }
        }
        if (row && sps) lattn_sps_cache_free(k->ctx, &sc);
        else if (row) lattn_tf_cache_free(k->ctx, &cache);
        l = cnt > 0 ? l / (double)cnt : NAN;
    } else if (st == LATTN_OK) st = lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: transformer has no %s form", lattn_form_name(form));
    if (st == LATTN_OK && loss) loss[0] = (float)l;
    lattn_tf_free(k->ctx, &m);
    return st;
}

#endif /* LATTN_NO_MODELS */
static lattn_status lattn__case_scan(lattn__case *k, lattn_form form) {
    lattn_scan_args a;
    const lattn_st_tensor *ta;
    float *h, *ht;
    memset(&a, 0, sizeof a);
    LATTN__TRY(lattn__case_in(k, "in.a", 1, &a.a, &ta));
    LATTN__TRY(lattn__case_dims(k, ta, 3, "in.a"));
    LATTN__TRY(lattn__case_in(k, "in.b", 1, &a.b, NULL));
    LATTN__TRY(lattn__case_in(k, "in.h0", 0, &a.h0, NULL));
    LATTN__TRY(lattn__case_out(k, "out.y", &h));
    LATTN__TRY(lattn__case_out(k, "out.ht", &ht));
    a.B = ta->shape[0];
    a.T = ta->shape[1];
    a.N = ta->shape[2];
    a.y = h;
    a.ht = ht;
    a.log_space = lattn__case_flag(k, "log_space", 0);
    {   /* every tensor against the shape of a */
        const int64_t BTN = a.B * a.T * a.N, BN = a.B * a.N;
        LATTN__TRY(lattn__case_count(k, "in.b", BTN));
        LATTN__TRY(lattn__case_count(k, "in.h0", BN));
        LATTN__TRY(lattn__case_count(k, "out.y", BTN));
        LATTN__TRY(lattn__case_count(k, "out.ht", BN));
        if (lattn__case_pass(k) == 1) {   /* a gradient case: lattn_scan_ref_backward or _chunk_backward */
            static const char *const dn[5] = { "in.dout", "in.dht", "out.da", "out.db", "out.dh0" };
            const int64_t dc[5] = { BTN, BN, BTN, BTN, BN };
            lattn_scan_grads gr;
            memset(&gr, 0, sizeof gr);
            {
                float **const o[3] = { &gr.da, &gr.db, &gr.dh0 };
                LATTN__TRY(lattn__case_grad_io(k, 5, dn, dc, 0, &gr.dout, &gr.dht, o));
            }
            if (form == LATTN_FORM_REF) return lattn_scan_ref_backward(k->ctx, &a, &gr);
            if (form == LATTN_FORM_CHUNK) return lattn_scan_chunk_backward(k->ctx, &a, &gr);
            return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: a gradient case has the ref and chunk forms, not %s", lattn_form_name(form));
        }
    }
    if (form == LATTN_FORM_REF) return lattn_scan_ref(k->ctx, &a);
    if (form == LATTN_FORM_CHUNK) return lattn_scan_chunk(k->ctx, &a);
    if (form == LATTN_FORM_STEP) return lattn_scan_step(k->ctx, &a);
    return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: scan has no %s form", lattn_form_name(form));
}

static lattn_status lattn__case_ssm(lattn__case *k, lattn_form form) {
    lattn_ssm_args a;
    const lattn_st_tensor *tx, *tA;
    float *y, *ht;
    memset(&a, 0, sizeof a);
    LATTN__TRY(lattn__case_in(k, "in.x", 1, &a.x, &tx));
    LATTN__TRY(lattn__case_dims(k, tx, 3, "in.x"));
    LATTN__TRY(lattn__case_in(k, "in.A", 1, &a.A, &tA));
    LATTN__TRY(lattn__case_dims(k, tA, 2, "in.A"));
    LATTN__TRY(lattn__case_in(k, "in.dt", 1, &a.dt, NULL));
    LATTN__TRY(lattn__case_in(k, "in.Bm", 1, &a.Bm, NULL));
    LATTN__TRY(lattn__case_in(k, "in.Cm", 1, &a.Cm, NULL));
    LATTN__TRY(lattn__case_in(k, "in.Dskip", 0, &a.Dskip, NULL));
    LATTN__TRY(lattn__case_in(k, "in.dt_bias", 0, &a.dt_bias, NULL));
    LATTN__TRY(lattn__case_in(k, "in.z", 0, &a.z, NULL));
    LATTN__TRY(lattn__case_in(k, "in.h0", 0, &a.h0, NULL));
    LATTN__TRY(lattn__case_offsets(k, &a.offsets, &a.n_seqs));
    LATTN__TRY(lattn__case_out(k, "out.y", &y));
    LATTN__TRY(lattn__case_out(k, "out.ht", &ht));
    a.B = tx->shape[0];
    a.T = tx->shape[1];
    a.D = tx->shape[2];
    a.N = tA->shape[1];
    a.G = lattn__case_int(k, "groups", 1);
    a.dt_softplus = lattn__case_flag(k, "dt_softplus", 1);
    a.y = y;
    a.ht = ht;
    {   /* every tensor against the shapes of x and A (the group count is checked by the mixer) */
        const int64_t n = a.offsets ? a.n_seqs : a.B, BTD = a.B * a.T * a.D, BTGN = a.B * a.T * a.G * a.N, nDN = n * a.D * a.N;
        if (tA->shape[0] != a.D || a.G > a.D) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.A or groups does not match in.x's D");
        LATTN__TRY(lattn__case_count(k, "in.dt", BTD));
        LATTN__TRY(lattn__case_count(k, "in.z", BTD));
        LATTN__TRY(lattn__case_count(k, "in.Bm", BTGN));
        LATTN__TRY(lattn__case_count(k, "in.Cm", BTGN));
        LATTN__TRY(lattn__case_count(k, "in.Dskip", a.D));
        LATTN__TRY(lattn__case_count(k, "in.dt_bias", a.D));
        LATTN__TRY(lattn__case_count(k, "in.h0", nDN));
        LATTN__TRY(lattn__case_count(k, "out.y", BTD));
        LATTN__TRY(lattn__case_count(k, "out.ht", nDN));
        if (lattn__case_pass(k) == 1) {   /* a gradient case: lattn_ssm_ref_backward or _chunk_backward */
            static const char *const dn[11] = { "in.dout", "in.dht", "out.dx", "out.ddt", "out.dz", "out.dA", "out.dBm", "out.dCm",
                                                "out.dDskip", "out.ddt_bias", "out.dh0" };
            const int64_t dc[11] = { BTD, nDN, BTD, BTD, BTD, a.D * a.N, BTGN, BTGN, a.D, a.D, nDN };
            lattn_ssm_grads gr;
            memset(&gr, 0, sizeof gr);
            {
                float **const o[9] = { &gr.dx, &gr.ddt, &gr.dz, &gr.dA, &gr.dBm, &gr.dCm, &gr.dDskip, &gr.ddt_bias, &gr.dh0 };
                LATTN__TRY(lattn__case_grad_io(k, 11, dn, dc, 1, &gr.dout, &gr.dht, o));
            }
            if (form == LATTN_FORM_REF) return lattn_ssm_ref_backward(k->ctx, &a, &gr);
            if (form == LATTN_FORM_CHUNK) return lattn_ssm_chunk_backward(k->ctx, &a, &gr);
            return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: a gradient case has the ref and chunk forms, not %s", lattn_form_name(form));
        }
    }
    if (form == LATTN_FORM_REF) return lattn_ssm_ref(k->ctx, &a);
    if (form == LATTN_FORM_CHUNK) return lattn_ssm_chunk(k->ctx, &a);
    if (form == LATTN_FORM_STEP) return lattn_ssm_step(k->ctx, &a);
    return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: ssm has no %s form", lattn_form_name(form));
}

/* The method of _chunk is the case's "method" metadata (scan, fft or conv; default scan), so a
   caller may run one case by each method. */
static lattn_status lattn__case_s4d(lattn__case *k, lattn_form form) {
    lattn_s4d_args a;
    const lattn_st_tensor *tu, *tA;
    const char *method = lattn_st_meta(k->c, "method");
    float *y, *ht;
    memset(&a, 0, sizeof a);
    LATTN__TRY(lattn__case_in(k, "in.x", 1, &a.x, &tu));
    LATTN__TRY(lattn__case_dims(k, tu, 3, "in.x"));
    LATTN__TRY(lattn__case_in(k, "in.A_re", 1, &a.A_re, &tA));
    LATTN__TRY(lattn__case_dims(k, tA, 2, "in.A_re"));
    LATTN__TRY(lattn__case_in(k, "in.B_re", 1, &a.B_re, NULL));
    LATTN__TRY(lattn__case_in(k, "in.C_re", 1, &a.C_re, NULL));
    LATTN__TRY(lattn__case_in(k, "in.log_dt", 1, &a.log_dt, NULL));
    LATTN__TRY(lattn__case_in(k, "in.A_im", 0, &a.A_im, NULL));
    LATTN__TRY(lattn__case_in(k, "in.B_im", 0, &a.B_im, NULL));
    LATTN__TRY(lattn__case_in(k, "in.C_im", 0, &a.C_im, NULL));
    LATTN__TRY(lattn__case_in(k, "in.Dskip", 0, &a.Dskip, NULL));
    LATTN__TRY(lattn__case_in(k, "in.h0", 0, &a.h0, NULL));
    LATTN__TRY(lattn__case_out(k, "out.y", &y));
    LATTN__TRY(lattn__case_out(k, "out.ht", &ht));
    a.B = tu->shape[0];
    a.T = tu->shape[1];
    a.D = tu->shape[2];
    a.N = tA->shape[1];
    a.complex_modes = lattn__case_flag(k, "complex", 0);
    if (method && strcmp(method, "scan") != 0 && strcmp(method, "fft") != 0 && strcmp(method, "conv") != 0)
        return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: method \"%.40s\" is not scan, fft or conv", method);
    a.method = !method || method[0] == 's' ? LATTN_S4D_SCAN : method[0] == 'f' ? LATTN_S4D_FFT : LATTN_S4D_CONV;
    a.y = y;
    a.ht = ht;
    {   /* every tensor against the shapes of x and A_re */
        const int64_t BTD = a.B * a.T * a.D, DN = a.D * a.N, nS = a.B * a.D * a.N * 2;
        static const char *const pn[5] = { "in.A_im", "in.B_re", "in.B_im", "in.C_re", "in.C_im" };
        int i;
        if (tA->shape[0] != a.D) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.A_re does not match in.x's D");
        for (i = 0; i < 5; i++) LATTN__TRY(lattn__case_count(k, pn[i], DN));
        LATTN__TRY(lattn__case_count(k, "in.log_dt", a.D));
        LATTN__TRY(lattn__case_count(k, "in.Dskip", a.D));
        LATTN__TRY(lattn__case_count(k, "in.h0", nS));
        LATTN__TRY(lattn__case_count(k, "out.y", BTD));
        LATTN__TRY(lattn__case_count(k, "out.ht", nS));
        if (lattn__case_pass(k) == 1) {   /* a gradient case: lattn_s4d_ref_backward or _chunk_backward */
            static const char *const dn[12] = { "in.dout", "in.dht", "out.dx", "out.dA_re", "out.dA_im", "out.dB_re", "out.dB_im",
                                                "out.dC_re", "out.dC_im", "out.dlog_dt", "out.dDskip", "out.dh0" };
            const int64_t dc[12] = { BTD, nS, BTD, DN, DN, DN, DN, DN, DN, a.D, a.D, nS };
            lattn_s4d_grads gr;
            memset(&gr, 0, sizeof gr);
            {
                float **const o[10] = { &gr.dx, &gr.dA_re, &gr.dA_im, &gr.dB_re, &gr.dB_im, &gr.dC_re, &gr.dC_im, &gr.dlog_dt, &gr.dDskip, &gr.dh0 };
                LATTN__TRY(lattn__case_grad_io(k, 12, dn, dc, 1, &gr.dout, &gr.dht, o));
            }
            if (form == LATTN_FORM_REF) return lattn_s4d_ref_backward(k->ctx, &a, &gr);
            if (form == LATTN_FORM_CHUNK) return lattn_s4d_chunk_backward(k->ctx, &a, &gr);
            return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: a gradient case has the ref and chunk forms, not %s", lattn_form_name(form));
        }
    }
    switch (form) {
    case LATTN_FORM_REF: return lattn_s4d_ref(k->ctx, &a);
    case LATTN_FORM_CHUNK: return lattn_s4d_chunk(k->ctx, &a);
    case LATTN_FORM_STEP: return lattn_s4d_step(k->ctx, &a);
    default: return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: s4d has no %s form", lattn_form_name(form));
    }
}

/* Optimizer cases (the oracles of spec muon.md as golden cases):
     adamw      in.param0 [..], in.grads [S][..] (the gradient of step s + 1) -> out.param [S][..]
                (the parameter after each step), out.exp_avg, out.exp_avg_sq (after the last);
                options lr, beta1, beta2, eps, weight_decay (lattn_adamw_default()'s when absent);
     muon_step  in.param0 [R][C], in.grads [S][R][C] -> out.param [S][R][C], out.momentum; options
                lr, momentum, weight_decay, nesterov, ns_steps, bf16 (lattn_muon_default()'s);
     muon_ns5   in.G [R][C] -> out.X; options ns_steps, bf16.
   Form ref runs the float64 optimizer (which has no bf16 mode), chunk the float32 one. */
static lattn_status lattn__case_optim(lattn__case *k, lattn_form form, const char *mixer) {
    const int adam = mixer[0] == 'a', ns = strcmp(mixer, "muon_ns5") == 0, ref = form == LATTN_FORM_REF;
    const char *first = ns ? "in.G" : "in.param0";
    lattn_adamw_config ac = lattn_adamw_default();
    lattn_muon_config mc = lattn_muon_default();
    const lattn_st_tensor *tp, *tg = NULL;
    const float *p0, *g = NULL;
    float *P, *M = NULL, *V = NULL, *wf = NULL;
    double *wd = NULL;
    int64_t R = 1, C, S = 1, s;
    size_t n, i;
    lattn_status st = LATTN_OK;
    if (form != LATTN_FORM_REF && form != LATTN_FORM_CHUNK)
        return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: an optimizer case has the ref and chunk forms, not %s", lattn_form_name(form));
    mc.ns_steps = (int)lattn__case_int(k, "ns_steps", mc.ns_steps);
    mc.ns_mode = lattn__case_flag(k, "bf16", 0) ? LATTN_NS_BF16 : LATTN_NS_FP32;
    if (ref && mc.ns_mode == LATTN_NS_BF16) return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: the float64 optimizer has no bf16 mode");
    LATTN__TRY(lattn__case_in(k, first, 1, &p0, &tp));
    if (!adam) {
        LATTN__TRY(lattn__case_dims(k, tp, 2, first));
        R = tp->shape[0];
    }
    n = tp->count;
    C = (int64_t)n / LATTN__MAX(R, 1);
    if (!ns) {
        LATTN__TRY(lattn__case_in(k, "in.grads", 1, &g, &tg));
        S = n ? (int64_t)(tg->count / n) : 0;
        if (S < 1 || tg->count != (size_t)S * n)
            return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.grads must hold S >= 1 gradients of %s's %zu values", first, n);
    }
    LATTN__TRY(lattn__case_out(k, ns ? "out.X" : "out.param", &P));
    LATTN__TRY(lattn__case_count(k, ns ? "out.X" : "out.param", S * (int64_t)n));
    LATTN__TRY(lattn__case_out(k, adam ? "out.exp_avg" : "out.momentum", &M));
    LATTN__TRY(lattn__case_count(k, adam ? "out.exp_avg" : "out.momentum", (int64_t)n));
    LATTN__TRY(lattn__case_out(k, "out.exp_avg_sq", &V));
    LATTN__TRY(lattn__case_count(k, "out.exp_avg_sq", (int64_t)n));
    ac.lr = lattn__case_num(k, "lr", ac.lr);
    ac.beta1 = lattn__case_num(k, "beta1", ac.beta1);
    ac.beta2 = lattn__case_num(k, "beta2", ac.beta2);
    ac.eps = lattn__case_num(k, "eps", ac.eps);
    ac.weight_decay = lattn__case_num(k, "weight_decay", ac.weight_decay);
    mc.lr = lattn__case_num(k, "lr", mc.lr);
    mc.momentum = lattn__case_num(k, "momentum", mc.momentum);
    mc.weight_decay = lattn__case_num(k, "weight_decay", mc.weight_decay);
    mc.nesterov = lattn__case_flag(k, "nesterov", mc.nesterov);
    if (ref) wd = (double *)lattn__case_keep(k, 5 * n * sizeof(double) + 1);    /* w, g, m, v, X */
    else wf = (float *)lattn__case_keep(k, 5 * n * sizeof(float) + 1);
    if (!wd && !wf) return lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory");
    for (i = 0; i < n; i++) {            /* w = param0 (or G), m = v = 0 */
        if (ref) { wd[i] = p0[i]; wd[2 * n + i] = wd[3 * n + i] = 0.0; }
        else { wf[i] = p0[i]; wf[2 * n + i] = wf[3 * n + i] = 0.0f; }
    }
    if (ns) {
        st = ref ? lattn_muon_ns5_64(k->ctx, R, C, mc.ns_steps, wd, wd + 4 * n) : lattn_muon_ns5(k->ctx, R, C, mc.ns_steps, mc.ns_mode, wf, wf + 4 * n);
        for (i = 0; st == LATTN_OK && P && i < n; i++) P[i] = ref ? (float)wd[4 * n + i] : wf[4 * n + i];
        return st;
    }
    for (s = 0; s < S && st == LATTN_OK; s++) {
        const float *gs = g + (size_t)s * n;
        if (ref) {
            double *w = wd, *gg = wd + n, *m = wd + 2 * n, *v = wd + 3 * n;
            for (i = 0; i < n; i++) gg[i] = gs[i];
            st = adam ? lattn_adamw_step64(k->ctx, &ac, s + 1, n, w, gg, m, v) : lattn_muon_step64(k->ctx, &mc, R, C, w, gg, m);
        } else {
            float *w = wf, *gg = wf + n, *m = wf + 2 * n, *v = wf + 3 * n;
            memcpy(gg, gs, n * sizeof(float));
            st = adam ? lattn_adamw_step(k->ctx, &ac, s + 1, n, w, gg, m, v) : lattn_muon_step(k->ctx, &mc, R, C, w, gg, m);
        }
        for (i = 0; P && i < n; i++) P[(size_t)s * n + i] = ref ? (float)wd[i] : wf[i];
    }
    for (i = 0; i < n; i++) {            /* the state after the last step */
        if (M) M[i] = ref ? (float)wd[2 * n + i] : wf[2 * n + i];
        if (V) V[i] = ref ? (float)wd[3 * n + i] : wf[3 * n + i];
    }
    return st;
}
#ifndef LATTN_NO_MODELS
/* Layer cases: a layer's tensors under "in.<tensor name>", its configuration in the metadata,
   in.x [B][T][D], in.state0 [B][state floats] (optional) -> out.y [B][T][D], out.state; forms REF
   (forward_ref), CHUNK (forward) and STEP (the decoder: step, one token of every sequence per call). */
typedef lattn_status (*lattn__layer_run)(lattn_ctx *ctx, const void *layer, lattn_form form, int64_t B, int64_t T,
                                         const float *x, float *y, float *state);
static lattn_status lattn__case_layer(lattn__case *k, lattn_form form, const void *layer, int64_t D, int64_t SF,
                                      lattn__layer_run run) {
    const lattn_st_tensor *tx;
    const float *x, *s0;
    float *y, *state, *buf;
    int64_t B, T, t, b;
    lattn_status st = LATTN_OK;
    LATTN__TRY(lattn__case_in(k, "in.x", 1, &x, &tx));
    LATTN__TRY(lattn__case_dims(k, tx, 3, "in.x"));
    if (tx->shape[2] != D) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.x must be [B][T][%lld]", (long long)D);
    B = tx->shape[0];
    T = tx->shape[1];
    LATTN__TRY(lattn__case_in(k, "in.state0", 0, &s0, NULL));
    LATTN__TRY(lattn__case_count(k, "in.state0", B * SF));
    LATTN__TRY(lattn__case_count(k, "out.state", B * SF));
    LATTN__TRY(lattn__case_count(k, "out.y", B * T * D));
    LATTN__TRY(lattn__case_out(k, "out.y", &y));
    LATTN__TRY(lattn__case_out(k, "out.state", &state));
    if (!y) return lattn__fail(k->ctx, LATTN_E_FORMAT, "case: a layer case needs out.y");
    if (!state && (state = (float *)lattn__case_keep(k, (size_t)(B * SF) * sizeof(float) + 1)) == NULL)   /* not compared */
        return lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory");
    if (s0) memcpy(state, s0, (size_t)(B * SF) * sizeof(float)); else memset(state, 0, (size_t)(B * SF) * sizeof(float));
    if (form == LATTN_FORM_REF || form == LATTN_FORM_CHUNK) return run(k->ctx, layer, form, B, T, x, y, state);
    if (form != LATTN_FORM_STEP) return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: a layer has no %s form", lattn_form_name(form));
    if ((buf = (float *)lattn__case_keep(k, (size_t)(2 * B * D) * sizeof(float))) == NULL)
        return lattn__fail(k->ctx, LATTN_E_NOMEM, "case: out of memory");
    for (t = 0; t < T && st == LATTN_OK; t++) {
        for (b = 0; b < B; b++) memcpy(buf + b * D, x + (b * T + t) * D, (size_t)D * sizeof(float));
        st = run(k->ctx, layer, LATTN_FORM_STEP, B, 1, buf, buf + B * D, state);
        for (b = 0; b < B; b++) memcpy(y + (b * T + t) * D, buf + (B + b) * D, (size_t)D * sizeof(float));
    }
    return st;
}
static lattn_status lattn__laplace_case_run(lattn_ctx *ctx, const void *layer, lattn_form form, int64_t B, int64_t T,
                                            const float *x, float *y, float *state) {
    const lattn_laplace_model *m = (const lattn_laplace_model *)layer;
    if (form == LATTN_FORM_REF) return lattn_laplace_forward_ref(ctx, m, B, T, NULL, x, y, state, NULL);
    if (form == LATTN_FORM_CHUNK) return lattn_laplace_forward(ctx, m, B, T, NULL, x, y, state);
    return lattn_laplace_step(ctx, m, B, NULL, x, y, state);
}
static lattn_status lattn__case_laplace(lattn__case *k, lattn_form form) {
    lattn_laplace_model m;
    lattn_status st;
    LATTN__TRY(lattn_laplace_init_st(k->ctx, &m, k->c, "in."));
    st = m.cfg.vocab != 0 ? lattn__fail(k->ctx, LATTN_E_FORMAT, "case: laplace_layer needs vocab 0")
                          : lattn__case_layer(k, form, &m, m.cfg.D, lattn__laplace_state_floats(&m.cfg), lattn__laplace_case_run);
    lattn_laplace_free(k->ctx, &m);
    return st;
}
static lattn_status lattn__gdn_case_run(lattn_ctx *ctx, const void *layer, lattn_form form, int64_t B, int64_t T,
                                        const float *x, float *y, float *state) {
    const lattn_gdn_layer *m = (const lattn_gdn_layer *)layer;
    if (form == LATTN_FORM_REF) return lattn_gdn_forward_ref(ctx, m, B, T, x, y, state, NULL);
    if (form == LATTN_FORM_CHUNK) return lattn_gdn_forward(ctx, m, B, T, x, y, state);
    return lattn_gdn_step(ctx, m, B, x, y, state);
}
static lattn_status lattn__case_gdn(lattn__case *k, lattn_form form) {
    lattn_gdn_layer m;
    lattn_status st;
    LATTN__TRY(lattn_gdn_init_st(k->ctx, &m, k->c, "in."));
    st = lattn__case_layer(k, form, &m, m.cfg.D, lattn__gdn_state_floats(&m.cfg), lattn__gdn_case_run);
    lattn_gdn_free(k->ctx, &m);
    return st;
}

/* PRISM P1 (mixer "prism_p1"): the official block's tensors under "in.<official name>", in.x
   [B][T][D] -> out.y, chunk size from "chunk" (default 128, capped at T as the code does). */
static lattn_status lattn__case_prism(lattn__case *k, lattn_form form) {
    lattn_prism_p1 p;
    const lattn_st_tensor *tx;
    const float *x;
    float *y;
    lattn_status st;
    if (form != LATTN_FORM_REF) return lattn__fail(k->ctx, LATTN_E_UNSUPPORTED, "case: prism_p1 has no %s form", lattn_form_name(form));
    LATTN__TRY(lattn_prism_p1_init_st(k->ctx, &p, k->c, "in."));
    p.C = lattn__case_int(k, "chunk", 128);
    st = lattn__case_in(k, "in.x", 1, &x, &tx);
    if (st == LATTN_OK) st = lattn__case_dims(k, tx, 3, "in.x");
    if (st == LATTN_OK && tx->shape[2] != p.D) st = lattn__fail(k->ctx, LATTN_E_FORMAT, "case: in.x must be [B][T][%lld]", (long long)p.D);
    if (st == LATTN_OK) st = lattn__case_count(k, "out.y", tx->shape[0] * tx->shape[1] * p.D);
    if (st == LATTN_OK) st = lattn__case_out(k, "out.y", &y);
    if (st == LATTN_OK && !y) st = lattn__fail(k->ctx, LATTN_E_FORMAT, "case: prism_p1 needs out.y");
    if (st == LATTN_OK) st = lattn_prism_p1_forward_ref(k->ctx, &p, tx->shape[0], tx->shape[1], x, y, NULL);
    lattn_prism_p1_free(k->ctx, &p);
    return st;
}

static lattn_status lattn__p2_case_run(lattn_ctx *ctx, const void *layer, lattn_form form, int64_t B, int64_t T,
                                       const float *x, float *y, float *state) {
    const lattn_prism_p1 *p = (const lattn_prism_p1 *)layer;
    if (form == LATTN_FORM_REF) return lattn_prism_p2_forward_ref(ctx, p, B, T, x, y, state, NULL);
    if (form == LATTN_FORM_CHUNK) return lattn_prism_p2_forward(ctx, p, B, T, x, y, state);
    return lattn_prism_p2_step(ctx, p, B, x, y, state);
}
/* PRISM P2 (mixer "prism_p2"): the block's tensors as for prism_p1, a layer case (x, state0 ->
   y, state); "chunk" is the _chunk form's chunk size (0: the profile's). */
static lattn_status lattn__case_p2(lattn__case *k, lattn_form form) {
    lattn_prism_p1 p;
    lattn_status st;
    LATTN__TRY(lattn_prism_p1_init_st(k->ctx, &p, k->c, "in."));
    p.C = lattn__case_int(k, "chunk", 0);
    st = lattn__case_layer(k, form, &p, p.D, lattn__prism_p2_state_floats(&p), lattn__p2_case_run);
    lattn_prism_p1_free(k->ctx, &p);
    return st;
}

static lattn_status lattn__p0_case_run(lattn_ctx *ctx, const void *layer, lattn_form form, int64_t B, int64_t T,
                                       const float *x, float *y, float *state) {
    const lattn_prism_p0 *m = (const lattn_prism_p0 *)layer;
    if (form == LATTN_FORM_REF) return lattn_prism_p0_forward_ref(ctx, m, B, T, x, y, state, NULL);
    if (form == LATTN_FORM_CHUNK) return lattn_prism_p0_forward(ctx, m, B, T, x, y, state);
    return lattn_prism_p0_step(ctx, m, B, x, y, state);
}
static lattn_status lattn__ttt_case_run(lattn_ctx *ctx, const void *layer, lattn_form form, int64_t B, int64_t T,
                                        const float *x, float *y, float *state) {
    const lattn_ttt_layer *m = (const lattn_ttt_layer *)layer;
    if (form == LATTN_FORM_REF) return lattn_ttt_layer_forward_ref(ctx, m, B, T, x, y, state, NULL);
    if (form == LATTN_FORM_CHUNK) return lattn_ttt_layer_forward(ctx, m, B, T, x, y, state);
    return lattn_ttt_layer_step(ctx, m, B, x, y, state);
}
/* The TTT layer (mixer "ttt_layer"): the official tensor names under "in.", a layer case; _chunk is
   the dual form, _step the primal one token at a time. */
static lattn_status lattn__case_ttt(lattn__case *k, lattn_form form) {
    lattn_ttt_layer m;
    lattn_status st;
    LATTN__TRY(lattn_ttt_layer_init_st(k->ctx, &m, k->c, "in."));
    st = lattn__case_layer(k, form, &m, m.cfg.D, lattn__ttt_state_floats(&m.cfg), lattn__ttt_case_run);
    lattn_ttt_layer_free(k->ctx, &m);
    return st;
}

/* PRISM P0 (mixer "prism_p0"): a layer case with the p0.* configuration and the tensors under "in.". */
static lattn_status lattn__case_p0(lattn__case *k, lattn_form form) {
    lattn_prism_p0 m;
    lattn_status st;
    LATTN__TRY(lattn_prism_p0_init_st(k->ctx, &m, k->c, "in."));
    st = lattn__case_layer(k, form, &m, m.cfg.D, lattn__prism_p0_state_floats(&m.cfg), lattn__p0_case_run);
    lattn_prism_p0_free(k->ctx, &m);
    return st;
}

#endif /* LATTN_NO_MODELS */
LATTN__DEF int lattn_case_forms(const lattn_st_file *c, lattn_form *out, int max) {
    static const lattn_form la[] = { LATTN_FORM_REF, LATTN_FORM_PARALLEL, LATTN_FORM_CHUNK, LATTN_FORM_STEP };
    static const lattn_form gdr[] = { LATTN_FORM_REF, LATTN_FORM_STEP, LATTN_FORM_CHUNK };
    static const lattn_form rfs[] = { LATTN_FORM_REF, LATTN_FORM_CHUNK, LATTN_FORM_STEP };   /* also a gradient case's two */
    static const lattn_form chunk_only[] = { LATTN_FORM_CHUNK };
    const char *m = c ? lattn_st_meta(c, "mixer") : NULL;
    const lattn_form *f = rfs;
    int n = 3, i;
    if (!m) return 0;
    if (lattn_st_meta(c, "pass") && strcmp(lattn_st_meta(c, "pass"), "backward") == 0) n = strcmp(m, "gdr") == 0 || strcmp(m, "attention") == 0 ? 1 : 2;   /* gradient cases: ref, chunk */
    else if (lattn__is_la(m)) { f = la; n = 4; }
    else if (strcmp(m, "gdr") == 0 || strcmp(m, "attention") == 0 || strcmp(m, "transformer") == 0 || strcmp(m, "sps") == 0) { f = gdr; n = 3; }
    else if (strcmp(m, "prism_p1") == 0) n = 1;
    else if (strcmp(m, "prism_p2") == 0 || strcmp(m, "prism_p0") == 0 || strcmp(m, "ttt_layer") == 0) { f = gdr; n = 3; }
    else if (strcmp(m, "scan") == 0) n = 3;
    else if (strncmp(m, "muon_", 5) == 0 || strcmp(m, "adamw") == 0) {   /* the float64 and the float32 optimizer; bf16: float32 only */
        const char *b = lattn_st_meta(c, "bf16");
        n = b && strcmp(b, "1") == 0 ? 1 : 2;
        f = n == 1 ? chunk_only : rfs;
    }
    for (i = 0; i < n && i < max; i++) out[i] = f[i];
    return i;
}

LATTN__DEF lattn_status lattn_case_run(lattn_ctx *ctx, const lattn_st_file *c, lattn_form form,
                                       unsigned char **out, size_t *size) {
    lattn__case k;
    const char *mixer = c ? lattn_st_meta(c, "mixer") : NULL;
    lattn_status st;
    int i;
    if (!c || !out || !size) return lattn__fail(ctx, LATTN_E_NULL, "lattn_case_run: NULL argument");
    *out = NULL;
    *size = 0;
    memset(&k, 0, sizeof k);
    k.ctx = ctx;
    k.c = c;
    for (i = 0; i < (int)(sizeof lattn__case_opts / sizeof lattn__case_opts[0]); i++)
        (void)lattn__case_num(&k, lattn__case_opts[i].key, 0);       /* every option, whatever the form */
    (void)lattn__case_pass(&k);
    if (k.bad != LATTN_OK) st = lattn__fail(ctx, k.bad, "%s", k.bad_msg);
    else if (!mixer) st = lattn__fail(ctx, LATTN_E_FORMAT, "case: no \"mixer\" in __metadata__");
    else if (strcmp(mixer, "shortconv") == 0) st = lattn__case_conv(&k, form);
    else if (strcmp(mixer, "tcn") == 0) st = lattn__case_tcn(&k, form);
    else if (lattn__is_la(mixer)) st = lattn__case_la(&k, form);
    else if (strcmp(mixer, "gdr") == 0) st = lattn__case_gdr(&k, form);
    else if (strcmp(mixer, "scan") == 0) st = lattn__case_scan(&k, form);
    else if (strcmp(mixer, "ssm") == 0) st = lattn__case_ssm(&k, form);
    else if (strcmp(mixer, "s4d") == 0) st = lattn__case_s4d(&k, form);
    else if (strcmp(mixer, "attention") == 0) st = lattn__case_attn(&k, form);
    else if (strcmp(mixer, "adamw") == 0 || strcmp(mixer, "muon_step") == 0 || strcmp(mixer, "muon_ns5") == 0) st = lattn__case_optim(&k, form, mixer);
#ifndef LATTN_NO_MODELS
    else if (strcmp(mixer, "laplace_layer") == 0) st = lattn__case_laplace(&k, form);
    else if (strcmp(mixer, "gdn_layer") == 0) st = lattn__case_gdn(&k, form);
    else if (strcmp(mixer, "prism_p1") == 0) st = lattn__case_prism(&k, form);
    else if (strcmp(mixer, "prism_p2") == 0) st = lattn__case_p2(&k, form);
    else if (strcmp(mixer, "prism_p0") == 0) st = lattn__case_p0(&k, form);
    else if (strcmp(mixer, "ttt_layer") == 0) st = lattn__case_ttt(&k, form);
    else if (strcmp(mixer, "transformer") == 0 || strcmp(mixer, "sps") == 0) st = lattn__case_tf(&k, form, mixer[0] == 's');
#endif
    else st = lattn__fail(ctx, LATTN_E_UNSUPPORTED, "case: mixer '%s' is not in this version of lattn", mixer);
    if (st == LATTN_OK) st = lattn_st_serialize(ctx, k.out, k.n_out, NULL, 0, out, size);
    for (i = 0; i < k.n_own; i++) lattn__free(ctx, k.own[i]);
    return st;
}

#endif /* LATTN_NO_CONFORMANCE */

/* ================================================================================================ */
/* >>history                                                                                        */
/* ================================================================================================ */
/* 2026-11-29  0.1.0: foundations (status, context, PRNG, SIMD layer, SGEMM, tiler), ShortConv, the TCN
               stack and demo model, linear attention in four forms, the scan, the selective SSM, S4D
               with FFT convolution, safetensors I/O, the golden-case runner; golden outputs v1.
   2026-11-30  GLA, Simple GLA and retention as the gate fields of lattn_la_args (every form).
   2026-11-30  the Laplace layer and model (weights arena, safetensors, forward_ref, forward, step).
   2026-11-30  the delta-rule core GDR+I (_ref, _chunk on the tiler, _step); the Gated DeltaNet layer.
   2026-11-30  PRISM P1 (the official block), P2 (per-token, chunk-invariant), P0 (the paper's model).
   2026-11-30  the Trainium path of the tiler: lattn_la_args.schedule, chunks of up to 4 partition
               tiles, resident tiles for fixed decays, spilling and bf16 stream accounting.
   2026-11-30  softmax attention (>>attn) and the transformer (>>transformer); the SPS transformer.
   2026-11-30  TTT-Linear and TTT-MLP, the TTT layer and the official Block.
   2026-11-30  speed: the GEMM micro-kernel at 95-98 % of peak, dynamic work items (bit-identical).
   2026-12-01  hardening: O(n log n) duplicate checks, the writer refuses what the reader refuses, a
               NULL context is the default one, LATTN_MAX_THREADS, lattn_profile_check,
               LATTN_MAX_CHUNK, strict case metadata; SPS pads as the official code; untied
               feature maps (fmap_wk, fmap_bk); retnet_decay.
   2026-12-01  many cores: the chunked kernels split into value blocks and query groups until every
               thread has an item (bit-identical for every split); ctx.keep_workspace.
   2026-12-01  API 1.0: one grammar (>>verbs). Mixers: _ref, _parallel, _chunk, _step in every family
               (_fast, s4d _scan/_fft/_conv, ttt _primal/_dual and _decode are gone: _chunk with
               lattn_s4d_args.method, ttt _chunk = dual, _step = primal and any T); chunk and the
               float64 outputs (o64, ht64, zt64, lse64) are args fields; size queries return a
               status; no _args_default (zero is the default). Models: forward_ref (with a *64
               output), forward, step; init, init_st, init_file, serialize, save, tensor, free for
               every model on the shared arena; names K, V, D, h0, ht everywhere (TTT, TCN, Laplace,
               transformer); LATTN_NO_MODELS, LATTN_NO_CONFORMANCE. Golden cases with renamed
               tensors or metadata regenerated (values unchanged).
   2026-12-01  lattn_la_ref_backward: the double backward of linear attention, GLA, Simple GLA and
               the fixed decays (every feature map and its weights, the normaliser, h0/dht,
               variable lengths); the double backward
               of ShortConv, the scan and the selective SSM; y64, ht64 in their args.
   2026-12-02  the float32 _chunk_backward of ShortConv, the scan, the selective SSM and S4D; S4D's
               double backward (y64, ht64 in lattn_s4d_args); seven golden gradient cases;
               lattn-check external runs the public gradient files; the fixed-decay backward on the
               Trainium tiler (spec sbuf_tiler.md §5.3); lattn_gdr_ref_backward, lattn_attn_ref_backward,
               lattn_tcn_ref_backward, lattn_tcn_demo_backward_ref; the demo's forward_ref in double
               throughout (y64 in lattn_tcn_args).
   2026-12-02  optimizers: AdamW as PyTorch's single-tensor path (float32, float64), Muon with NS5 in
               fp32, bf16 and double; sharded Muon over a caller's collectives (lattn_comm: two
               all_to_all, gather + broadcast, all-gather; owner plans; closed-form traffic).
   2026-12-03  training: lr schedules, gradient clipping, lattn_optim over a model's arena with its
               state as safetensors, Muon's RMS-match scale; optimizer golden cases in the runner;
               lattn_tcn_chunk_backward and lattn_tcn_demo_backward (float32). */

#endif /* LATTN_IMPLEMENTATION */

/* ================================================================================================ */
/* >>license                                                                                        */
/* ================================================================================================ */
/*
MIT License

Copyright (c) 2026 the lattn authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or substantial
portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
*/
