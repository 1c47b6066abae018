/* lattn benchmarks: `make bench` prints a table and writes bench/last_run.jsonl (one JSON object per
   row: name, shape, threads, ms, tokens_per_s, gflops, gbps, baseline, speedup, pct_peak); a
   partial run (a filter, --quick, --chunk or --threads) writes build/bench_partial.jsonl instead.
   Every time is the median of >= 5 runs after a warm-up; a measured form and its baseline run in
   the same process, interleaved, so that the ratio survives a noisy shared machine. The backward
   floors' rows (<kernel>_fwd_bwd) add round_ratio: the median over the rounds of each round's own
   (forward + backward) / forward.
   Usage: bench [--quick] [--chunk=C] [--threads=LIST] [filter]   (filter: run rows whose name contains it)
   --threads=1,2,4,8,16: the scaling rows (scale_*: Simple GLA, GLA, GDN and causal attention at
   B = 1, forward and backward) at each thread count, with "efficiency" = (1-thread ms) / (threads x ms) from the same run;
   without it the scaling rows run at 1 and 2 threads. */
#define _POSIX_C_SOURCE 200112L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "../examples/comm_threads.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static FILE *g_out;
static int g_quick;
static const char *g_filter;
static double g_peak;                     /* GFLOP/s of one core, measured first */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
typedef void (*bench_fn)(void *);
/* Interleaved medians of n callables (at most 6): after a warm-up of each, runs f[0], f[1], ...,
   f[n-1], f[0], ..., so that a host whose speed drifts between seconds slows every one alike and
   the ratios of the medians ms[i] stay side by side. */
static double g_round[6][64];             /* the last timen's seconds, per callable and round */
static int g_rounds;
static void timen(int n, const bench_fn *f, void *const *u, int runs, double *ms) {
    double t[6][64];
    int i, k;
    for (k = 0; k < n; k++) f[k](u[k]);
    for (i = 0; i < runs; i++)
        for (k = 0; k < n; k++) {
            double t0 = now();
            f[k](u[k]);
            t[k][i] = now() - t0;
        }
    memcpy(g_round, t, sizeof t);
    g_rounds = runs;
    for (k = 0; k < n; k++) {
        qsort(t[k], (size_t)runs, sizeof(double), cmp_d);
        ms[k] = t[k][runs / 2] * 1e3;
    }
}
/* The median over the last timen's rounds of (f[a] + f[b]) / f[den]: each
   quotient from calls a few hundred milliseconds apart, so a host whose speed moves between
   seconds moves numerator and denominator together. The floors' forward + backward ÷ forward. */
static double round_ratio(int a, int b, int den) {
    double q[64];
    int i;
    for (i = 0; i < g_rounds; i++) q[i] = (g_round[a][i] + g_round[b][i]) / g_round[den][i];
    qsort(q, (size_t)g_rounds, sizeof(double), cmp_d);
    return q[g_rounds / 2];
}
/* The same for two (fb may be NULL: *mb, where asked, is then 0). */
static void time2(bench_fn fa, void *ua, bench_fn fb, void *ub, int runs, double *ma, double *mb) {
    const bench_fn f[2] = { fa, fb };
    void *const u[2] = { ua, ub };
    double ms[2];
    timen(fb ? 2 : 1, f, u, runs, ms);
    *ma = ms[0];
    if (mb) *mb = fb ? ms[1] : 0.0;
}
static int wanted(const char *name) { return !g_filter || strstr(name, g_filter) != NULL; }

static double g_bytes;                    /* bytes moved by the next row (0: no gbps) */
static double g_eff = -1;                 /* parallel efficiency of the next row (< 0: none) */
static double g_eff_hw = -1;              /* the same against the FMA peak at that thread count */
static double g_ratio = -1;               /* the next row's round_ratio (< 0: none) */
static void row(const char *name, const char *shape, int threads, double ms, double tokens, double flops,
                const char *baseline, double base_ms) {
    double tps = tokens > 0 ? tokens / (ms * 1e-3) : 0, gf = flops > 0 ? flops / (ms * 1e-3) / 1e9 : 0;
    char gb[32] = "null";
    if (g_bytes > 0) snprintf(gb, sizeof gb, "%.3f", g_bytes / (ms * 1e-3) / 1e9);
    printf("%-22s %-32s %2d %10.3f %12.0f %8.1f %6.1f%% %-18s %7.2f %s", name, shape, threads, ms, tps, gf,
           g_peak > 0 ? 100.0 * gf / (g_peak * threads) : 0.0, baseline ? baseline : "-", baseline ? base_ms / ms : 0.0,
           g_bytes > 0 ? gb : "");
    if (g_ratio >= 0) printf("  %.2fx the forward, median of the rounds", g_ratio);
    printf("\n");
    fprintf(g_out, "{\"name\":\"%s\",\"shape\":\"%s\",\"threads\":%d,\"ms\":%.4f,\"tokens_per_s\":%.1f,"
            "\"gflops\":%.3f,\"gbps\":%s,\"pct_peak\":%.2f,\"baseline\":%s%s%s,\"speedup\":%.3f",
            name, shape, threads, ms, tps, gf, gb, g_peak > 0 ? 100.0 * gf / (g_peak * threads) : 0.0,
            baseline ? "\"" : "", baseline ? baseline : "null", baseline ? "\"" : "", baseline ? base_ms / ms : 0.0);
    if (g_eff >= 0) fprintf(g_out, ",\"efficiency\":%.4f", g_eff);
    if (g_eff_hw >= 0) fprintf(g_out, ",\"efficiency_vs_peak\":%.4f", g_eff_hw);
    if (g_ratio >= 0) fprintf(g_out, ",\"round_ratio\":%.4f", g_ratio);
    fprintf(g_out, "}\n");
    fflush(g_out);
    g_bytes = 0;
    g_eff = -1;
    g_eff_hw = -1;
    g_ratio = -1;
}

/* ---- peak: independent FMA chains on the widest vector, one core --------------------------------- */
typedef struct { long iters; float sink; } peak_u;
static void peak_run(void *p) {
    peak_u *u = (peak_u *)p;
    /* distinct starting values, or the compiler merges the chains */
    lattn__vf a0 = lattn__vset1(1.00f), a1 = lattn__vset1(1.01f), a2 = lattn__vset1(1.02f), a3 = lattn__vset1(1.03f);
    lattn__vf a4 = lattn__vset1(1.04f), a5 = lattn__vset1(1.05f), a6 = lattn__vset1(1.06f), a7 = lattn__vset1(1.07f);
    lattn__vf a8 = lattn__vset1(1.08f), a9 = lattn__vset1(1.09f), a10 = lattn__vset1(1.10f), a11 = lattn__vset1(1.11f);
    lattn__vf m = lattn__vset1(0.999999f), c = lattn__vset1(1e-7f);
    float t[LATTN__VW];
    long i;
    for (i = 0; i < u->iters; i++) {
        a0 = lattn__vfma(a0, m, c); a1 = lattn__vfma(a1, m, c); a2 = lattn__vfma(a2, m, c); a3 = lattn__vfma(a3, m, c);
        a4 = lattn__vfma(a4, m, c); a5 = lattn__vfma(a5, m, c); a6 = lattn__vfma(a6, m, c); a7 = lattn__vfma(a7, m, c);
        a8 = lattn__vfma(a8, m, c); a9 = lattn__vfma(a9, m, c); a10 = lattn__vfma(a10, m, c); a11 = lattn__vfma(a11, m, c);
    }
    a0 = lattn__vadd(lattn__vadd(lattn__vadd(a0, a1), lattn__vadd(a2, a3)), lattn__vadd(lattn__vadd(a4, a5), lattn__vadd(a6, a7)));
    a0 = lattn__vadd(a0, lattn__vadd(lattn__vadd(a8, a9), lattn__vadd(a10, a11)));
    lattn__vstore(t, a0);
    u->sink += t[0];
}
static void bench_peak(void) {
    peak_u u = { 20000000, 0 };
    double ms, unused;
    if (g_quick) u.iters /= 10;
    time2(peak_run, &u, NULL, NULL, 7, &ms, &unused);
    g_peak = 2.0 * 12 * LATTN__VW * (double)u.iters / (ms * 1e-3) / 1e9;
    row("peak", "fp32 FMA, 12 chains", 1, ms, 0, 2.0 * 12 * LATTN__VW * (double)u.iters, NULL, 0);
}

/* ---- SGEMM ------------------------------------------------------------------------------------- */
typedef struct { int n, reps; float *A, *B, *C, *ws; } gemm_u;
static void gemm_run(void *p) {
    gemm_u *u = (gemm_u *)p;
    int i;
    for (i = 0; i < u->reps; i++) lattn__sgemm(0, u->n, u->n, u->n, u->A, u->n, u->B, u->n, u->C, u->n, u->ws);
}
static void bench_gemm(void) {
    static const int ns[3] = { 64, 128, 512 };
    int i;
    for (i = 0; i < 3; i++) {
        gemm_u u;
        lattn_rng r = lattn_rng_seed(1);
        size_t n2 = (size_t)ns[i] * (size_t)ns[i];
        char shape[64];
        double ms, unused;
        if (!wanted("gemm")) return;
        u.n = ns[i]; u.reps = (int)(5e8 / (2.0 * ns[i] * ns[i] * ns[i])) + 1;
        if (g_quick) u.reps = u.reps / 10 + 1;
        u.A = (float *)malloc(n2 * 4); u.B = (float *)malloc(n2 * 4); u.C = (float *)malloc(n2 * 4);
        u.ws = (float *)malloc(lattn__gemm_ws(ns[i], ns[i]) * 4);
        lattn_rng_fill_normal(&r, u.A, n2, 0, 1); lattn_rng_fill_normal(&r, u.B, n2, 0, 1);
        time2(gemm_run, &u, NULL, NULL, 7, &ms, &unused);
        snprintf(shape, sizeof shape, "M=N=K=%d", ns[i]);
        row("gemm", shape, 1, ms / u.reps, 0, 2.0 * ns[i] * ns[i] * ns[i], NULL, 0);
        free(u.A); free(u.B); free(u.C); free(u.ws);
    }
}
/* A projection's three products at the 3B FFN's shape, weights W [N][K] = [8192][3072] read from
   memory, T = 256 rows: the forward y = x·Wᵀ (B transposed: the pack transposes), the backward's
   dX = dY·W and dW = dYᵀ·x (A transposed). One call each, 1 thread. */
typedef struct { int which; float *x, *W, *y, *ws; } proj_u;
static void proj_run(void *p) {
    proj_u *u = (proj_u *)p;
    const int64_t T = 256, N = 8192, K = 3072;
    if (u->which == 0) lattn__sgemm(LATTN_GEMM_TRANS_B, T, N, K, u->x, K, u->W, K, u->y, N, u->ws);
    else if (u->which == 1) lattn__sgemm(0, T, K, N, u->y, N, u->W, K, u->x, K, u->ws);
    else lattn__sgemm(LATTN_GEMM_TRANS_A, N, K, T, u->y, N, u->x, K, u->W, K, u->ws);
}
static void bench_gemm_proj(void) {
    static const char *const name[3] = { "gemm_xWt", "gemm_dYW", "gemm_dYtx" };
    const size_t T = 256, N = 8192, K = 3072;
    lattn_rng r = lattn_rng_seed(2);
    proj_u u;
    int i;
    if (!wanted("gemm")) return;
    u.x = (float *)malloc(T * K * 4); u.W = (float *)malloc(N * K * 4); u.y = (float *)malloc(T * N * 4);
    u.ws = (float *)malloc(lattn__gemm_ws((int64_t)N, (int64_t)N) * 4);
    lattn_rng_fill_normal(&r, u.x, T * K, 0, 1); lattn_rng_fill_normal(&r, u.W, N * K, 0, 0.02f); lattn_rng_fill_normal(&r, u.y, T * N, 0, 1);
    for (i = 0; i < 3; i++) {
        double ms, unused;
        u.which = i;
        time2(proj_run, &u, NULL, NULL, g_quick ? 3 : 5, &ms, &unused);
        row(name[i], "3B FFN: T=256, W [8192][3072]", 1, ms, (double)T, 2.0 * (double)(T * N * K), NULL, 0);
    }
    free(u.x); free(u.W); free(u.y); free(u.ws);
}

/* ---- tiler accounting overhead: the matmuls of 64 linear-attention chunks (C=64, K=V=64), through
   the tiler on the cpu profile against bare SGEMM calls on the same buffers ------------------------ */
typedef struct { lattn_tiler *t; lattn_tile kc, qc, pt, vr, s, at, op; float *ws; int chunks; } tover_u;
static void tover_tiler(void *p) {
    tover_u *u = (tover_u *)p;
    int i;
    for (i = 0; i < u->chunks; i++) {
        lattn_matmul(u->t, &u->at, &u->kc, &u->qc, 0);
        lattn_matmul(u->t, &u->op, &u->pt, &u->vr, 0);
        lattn_matmul(u->t, &u->op, &u->qc, &u->s, 1);
    }
}
static void tover_bare(void *p) {
    tover_u *u = (tover_u *)p;
    int i;
    for (i = 0; i < u->chunks; i++) {
        lattn__sgemm(LATTN_GEMM_TRANS_A, 64, 64, 64, u->kc.data, u->kc.ld, u->qc.data, u->qc.ld, u->at.data, u->at.ld, u->ws);
        lattn__sgemm(LATTN_GEMM_TRANS_A, 64, 64, 64, u->pt.data, u->pt.ld, u->vr.data, u->vr.ld, u->op.data, u->op.ld, u->ws);
        lattn__sgemm(LATTN_GEMM_TRANS_A | LATTN_GEMM_ACCUMULATE, 64, 64, 64, u->qc.data, u->qc.ld, u->s.data, u->s.ld,
                     u->op.data, u->op.ld, u->ws);
    }
}
static void bench_tiler(void) {
    lattn_ctx ctx;
    tover_u u;
    double mt, mb;
    lattn_tile *all[7];
    int i;
    if (!wanted("tiler")) return;
    lattn_ctx_init(&ctx);
    lattn_tiler_create(&ctx, lattn_profile_cpu(), 8 * 64 * 64, &u.t);
    all[0] = &u.kc; all[1] = &u.qc; all[2] = &u.pt; all[3] = &u.vr; all[4] = &u.s; all[5] = &u.at; all[6] = &u.op;
    for (i = 0; i < 5; i++) lattn_sbuf_alloc(u.t, all[i], 64, 64);
    lattn_psum_alloc(u.t, &u.at, 64, 64); lattn_psum_alloc(u.t, &u.op, 64, 64);
    for (i = 0; i < 7; i++) { int j; for (j = 0; j < 64 * all[i]->ld; j++) all[i]->data[j] = 0.001f * (float)(j % 97); }
    u.ws = (float *)malloc(lattn__gemm_ws(64, 64) * 4);
    u.chunks = g_quick ? 64 : 512;
    time2(tover_tiler, &u, tover_bare, &u, 15, &mt, &mb);
    row("tiler_matmuls", "3 matmuls x chunks, 64^3", 1, mt / u.chunks, 0, 3 * 2.0 * 64 * 64 * 64, "bare_sgemm", mb / u.chunks);
    lattn_tiler_destroy(&ctx, u.t);
    free(u.ws);
}

/* ---- linear attention: _chunk against the _step loop ------------------------------------------- */
typedef struct { lattn_ctx *ctx; lattn_la_args a; } la_u;
static int g_chunk;
static void la_chunk_run(void *p) {
    la_u *u = (la_u *)p;
    u->a.chunk = g_chunk;
    lattn_la_chunk(u->ctx, &u->a);
}
static void la_step_run(void *p) { la_u *u = (la_u *)p; lattn_la_step(u->ctx, &u->a); }
static void bench_la(void) {
    static const int64_t Ts[3] = { 256, 1024, 4096 };
    int ti, th;
    if (!wanted("linear_attn")) return;
    for (th = 1; th <= 2; th++)
        for (ti = 0; ti < 3; ti++) {
            int64_t T = Ts[ti], H = 8, K = 64, V = 64;
            lattn_ctx ctx;
            la_u u;
            lattn_rng r = lattn_rng_seed(3);
            char shape[96];
            double mc, ms;
            if (g_quick && T > 1024) continue;
            lattn_ctx_init(&ctx);
            ctx.n_threads = th;
            u.ctx = &ctx; memset(&u.a, 0, sizeof u.a);
            u.a.B = 1; u.a.T = T; u.a.H = H; u.a.K = K; u.a.V = V;
            u.a.q = (float *)malloc(sizeof(float) * (size_t)(T * H * K)); u.a.k = (float *)malloc(sizeof(float) * (size_t)(T * H * K));
            u.a.v = (float *)malloc(sizeof(float) * (size_t)(T * H * V)); u.a.o = (float *)malloc(sizeof(float) * (size_t)(T * H * V));
            lattn_rng_fill_normal(&r, (float *)u.a.q, (size_t)(T * H * K), 0, 1);
            lattn_rng_fill_normal(&r, (float *)u.a.k, (size_t)(T * H * K), 0, 1);
            lattn_rng_fill_normal(&r, (float *)u.a.v, (size_t)(T * H * V), 0, 1);
            time2(la_chunk_run, &u, th == 1 ? la_step_run : NULL, &u, g_quick ? 5 : 9, &mc, &ms);
            snprintf(shape, sizeof shape, "T=%lld,H=8,K=64,V=64,C=%d", (long long)T, g_chunk ? g_chunk : lattn_profile_cpu()->default_chunk);
            if (th == 1) row("linear_attn_step", shape, 1, ms, (double)T, 4.0 * T * H * K * V, NULL, 0);
            row("linear_attn_chunk", shape, th, mc, (double)T, 4.0 * T * H * K * V, th == 1 ? "linear_attn_step" : NULL, ms);
            free((void *)u.a.q); free((void *)u.a.k); free((void *)u.a.v); free(u.a.o);
        }
}

/* ---- gated linear attention: the Laplace mixer shape and fla's GLA layer shape ------------------ */
/* Simple GLA with the fixed RetNet decays (the Laplace mixer) and GLA with per-key gates
   logsigmoid(x)/16 (fla's GLA layer); _chunk at C = 32, 64, 128 against the _step loop, then the
   winning chunk on 2 threads. FLOPs 4·T·H·K·V. */
static void la_alloc(la_u *u, int64_t T, int64_t H, int64_t K, int64_t V, int kind, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V), i;
    memset(&u->a, 0, sizeof u->a);
    u->a.B = 1; u->a.T = T; u->a.H = H; u->a.K = K; u->a.V = V;
    u->a.q = (float *)malloc(sizeof(float) * nq); u->a.k = (float *)malloc(sizeof(float) * nq);
    u->a.v = (float *)malloc(sizeof(float) * nv); u->a.o = (float *)malloc(sizeof(float) * nv);
    lattn_rng_fill_normal(&r, (float *)u->a.q, nq, 0, 1);
    lattn_rng_fill_normal(&r, (float *)u->a.k, nq, 0, 1);
    lattn_rng_fill_normal(&r, (float *)u->a.v, nv, 0, 1);
    if (kind == 0) {
        float *g = (float *)malloc(sizeof(float) * (size_t)H);
        lattn_retention_decay(H, g);
        u->a.g_gamma = g;
    } else {
        float *g = (float *)malloc(sizeof(float) * nq);
        lattn_rng_fill_normal(&r, g, nq, 0, 1);
        for (i = 0; i < nq; i++) g[i] = (float)(((g[i] < 0 ? g[i] : 0.0) - log1p(exp(-fabs(g[i])))) / 16.0);
        u->a.gk = g;
    }
}
static void la_release(la_u *u) {
    free((void *)u->a.q); free((void *)u->a.k); free((void *)u->a.v); free(u->a.o);
    free((void *)u->a.g_gamma); free((void *)u->a.gk); free(u->a.ht);
}
static void bench_gla(void) {
    static const struct { int64_t T, H, K, V; } shapes[3] = { { 2048, 16, 96, 192 }, { 8192, 16, 96, 192 }, { 2048, 4, 256, 512 } };
    static const char *names[2] = { "simple_gla", "gla" };
    static const int Cs[3] = { 32, 64, 128 };
    int si, kind, ci, th;
    if (!wanted("gla")) return;
    for (kind = 0; kind < 2; kind++)
        for (si = 0; si < 3; si++) {
            int64_t T = shapes[si].T, H = shapes[si].H, K = shapes[si].K, V = shapes[si].V;
            double fl = 4.0 * T * H * K * V, ms = 0, best = 1e30, mc, m2;
            int bestC = 0;
            lattn_ctx ctx;
            la_u u;
            char shape[96], nm[40];
            if (g_quick && si > 0) continue;
            lattn_ctx_init(&ctx);
            u.ctx = &ctx; ctx.n_threads = 1;
            la_alloc(&u, T, H, K, V, kind, 11);
            for (ci = 0; ci < 3; ci++) {
                g_chunk = Cs[ci];
                time2(la_chunk_run, &u, ci == 0 ? la_step_run : NULL, &u, g_quick ? 3 : (si == 1 ? 5 : 7), &mc, ci == 0 ? &ms : &m2);
                if (ci == 0) {
                    snprintf(shape, sizeof shape, "T=%lld,H=%lld,K=%lld,V=%lld", (long long)T, (long long)H, (long long)K, (long long)V);
                    snprintf(nm, sizeof nm, "%s_step", names[kind]);
                    row(nm, shape, 1, ms, (double)T, fl, NULL, 0);
                }
                snprintf(shape, sizeof shape, "T=%lld,H=%lld,K=%lld,V=%lld,C=%d", (long long)T, (long long)H, (long long)K, (long long)V, Cs[ci]);
                snprintf(nm, sizeof nm, "%s_chunk", names[kind]);
                snprintf(nm + strlen(nm), sizeof nm - strlen(nm), "%s", "");
                row(nm, shape, 1, mc, (double)T, fl, ci == 0 ? "step" : "step", ms);
                if (mc < best) { best = mc; bestC = Cs[ci]; }
            }
            g_chunk = bestC;
            for (th = 2; th <= 2; th++) {
                ctx.n_threads = th;
                time2(la_chunk_run, &u, NULL, NULL, g_quick ? 3 : 7, &mc, NULL);
                snprintf(shape, sizeof shape, "T=%lld,H=%lld,K=%lld,V=%lld,C=%d", (long long)T, (long long)H, (long long)K, (long long)V, bestC);
                row(nm, shape, th, mc, (double)T, fl, "step(1 thread)", ms);
            }
            g_chunk = 0;
            la_release(&u);
        }
    {   /* decode: one token through a 3B-shaped mixer state (16 x 96 x 192 floats, 1.18 MB) */
        lattn_ctx ctx;
        la_u u;
        double md, reps = 200;
        int i;
        lattn_ctx_init(&ctx);
        u.ctx = &ctx; ctx.n_threads = 1;
        la_alloc(&u, 1, 16, 96, 192, 0, 12);
        u.a.ht = (float *)calloc(16 * 96 * 192, sizeof(float));
        u.a.h0 = u.a.ht;
        {
            double t[9];
            int k;
            for (k = 0; k < 9; k++) {
                double t0 = now();
                for (i = 0; i < (int)reps; i++) lattn_la_step(&ctx, &u.a);
                t[k] = (now() - t0) / reps * 1e3;
            }
            qsort(t, 9, sizeof(double), cmp_d); md = t[4];
        }
        g_bytes = 2.0 * 16 * 96 * 192 * 4;       /* the state read and written once */
        row("simple_gla_decode", "1 token, state 16x96x192", 1, md, 1, 4.0 * 16 * 96 * 192, NULL, 0);
        la_release(&u);
    }
}

/* ---- backward: forward + backward against the forward (linear attention family) ---------------- */
/* Rows <kernel>_fwd (lattn_la_chunk at C = 64), <kernel>_fwd_states (the same writing a->states, the
   chunk-start states the backward reads), <kernel>_bwd (lattn_la_chunk_backward from those states,
   every input's gradient), <kernel>_bwd_recompute (the backward recomputing the states itself) and
   <kernel>_fwd_bwd (forward with states + backward) with baseline the forward row: speedup = forward
   ms / (forward + backward) ms, so >= 0.333 means at most 3.0x. GFLOP/s: the forward's nominal
   4·T·H·K·V; the backward's 8·T·H·K·V (its four T·K·V products: dO·Sᵀ, V·Uᵀ, (Φk ⊙ w)·U and Q̃ᵀ·dO;
   10 with the chunk-state pass of _bwd_recompute; the chunk-local L x L products are not counted).
   Simple GLA: per-head gates logsigmoid(x)/16; GLA: per-key gates likewise. */
typedef struct { la_u f; lattn_la_grads g; float *states; } bw_u;
static void bw_fwd_run(void *p) { bw_u *u = (bw_u *)p; u->f.a.states = NULL; lattn_la_chunk(u->f.ctx, &u->f.a); }
static void bw_fwds_run(void *p) { bw_u *u = (bw_u *)p; u->f.a.states = u->states; lattn_la_chunk(u->f.ctx, &u->f.a); }
static void bw_bwd_run(void *p) { bw_u *u = (bw_u *)p; u->f.a.states = u->states; lattn_la_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void bw_bwdr_run(void *p) { bw_u *u = (bw_u *)p; u->f.a.states = NULL; lattn_la_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void bench_backward(void) {
    static const struct { const char *name; int64_t T, H, K, V; int kind; } ks[5] = {
        { "simple_gla", 2048, 16, 96, 192, 1 }, { "gla", 2048, 16, 96, 192, 2 },
        { "simple_gla", 2048, 4, 256, 512, 1 }, { "gla", 2048, 4, 256, 512, 2 }, { "linear_attn", 4096, 8, 64, 64, 0 } };
    int ki, th;
    for (ki = 0; ki < 5; ki++)
        for (th = 1; th <= 2; th++) {
            const int64_t T = ks[ki].T, H = ks[ki].H, K = ks[ki].K, V = ks[ki].V;
            const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V), ng = ks[ki].kind == 2 ? nq : (size_t)(T * H);
            lattn_ctx ctx;
            lattn_rng r = lattn_rng_seed(31);
            bw_u u;
            char shape[96], nm[5][40];
            float *gate = NULL;
            double mf, mfs, mb, mbr, fl = 4.0 * T * H * K * V;
            size_t i;
            if (!wanted(ks[ki].name) && !wanted("backward")) continue;
            if (g_quick && ki >= 2) continue;
            lattn_ctx_init(&ctx);
            ctx.n_threads = th;
            ctx.keep_workspace = 1;            /* as a training loop runs: later calls fault nothing in */
            memset(&u, 0, sizeof u);
            u.f.ctx = &ctx;
            la_alloc(&u.f, T, H, K, V, 1, 32);    /* q, k, v, o (and gk, replaced below) */
            free((void *)u.f.a.gk);
            u.f.a.gk = NULL;
            if (ks[ki].kind > 0) {
                gate = (float *)malloc(sizeof(float) * ng);
                lattn_rng_fill_normal(&r, gate, ng, 0, 1);
                for (i = 0; i < ng; i++) gate[i] = (float)(((gate[i] < 0 ? gate[i] : 0.0) - log1p(exp(-fabs(gate[i])))) / 16.0);
                if (ks[ki].kind == 1) u.f.a.g = gate;
                else u.f.a.gk = gate;
            }
            u.f.a.chunk = 64;
            u.g.dout = u.f.a.v;
            u.g.dq = (float *)malloc(sizeof(float) * nq);
            u.g.dk = (float *)malloc(sizeof(float) * nq);
            u.g.dv = (float *)malloc(sizeof(float) * nv);
            if (ks[ki].kind == 1) u.g.dg = (float *)malloc(sizeof(float) * ng);
            if (ks[ki].kind == 2) u.g.dgk = (float *)malloc(sizeof(float) * ng);
            u.states = (float *)malloc(sizeof(float) * (size_t)(H * (T / 64 + 1) * K * V));
            {   /* all four in one interleaved loop: the ratios side by side */
                const bench_fn f[4] = { bw_fwd_run, bw_fwds_run, bw_bwd_run, bw_bwdr_run };
                void *const us[4] = { &u, &u, &u, &u };
                double ms[4];
                timen(4, f, us, g_quick ? 3 : 9, ms);
                mf = ms[0]; mfs = ms[1]; mb = ms[2]; mbr = ms[3];
            }
            snprintf(shape, sizeof shape, "T=%lld,H=%lld,K=%lld,V=%lld,C=64", (long long)T, (long long)H, (long long)K, (long long)V);
            snprintf(nm[0], sizeof nm[0], "%s_fwd", ks[ki].name);
            snprintf(nm[1], sizeof nm[1], "%s_fwd_states", ks[ki].name);
            snprintf(nm[2], sizeof nm[2], "%s_bwd", ks[ki].name);
            snprintf(nm[3], sizeof nm[3], "%s_bwd_recompute", ks[ki].name);
            snprintf(nm[4], sizeof nm[4], "%s_fwd_bwd", ks[ki].name);
            row(nm[0], shape, th, mf, (double)T, fl, NULL, 0);
            row(nm[1], shape, th, mfs, (double)T, fl, nm[0], mf);
            row(nm[2], shape, th, mb, (double)T, 2.0 * fl, nm[0], mf);
            row(nm[3], shape, th, mbr, (double)T, 2.5 * fl, nm[0], mf);
            g_ratio = round_ratio(1, 2, 0);
            row(nm[4], shape, th, mfs + mb, (double)T, 3.0 * fl, nm[0], mf);
            u.f.a.g = NULL;
            u.f.a.gk = NULL;
            u.f.a.states = NULL;
            free(u.states);
            free(gate);
            free(u.g.dq); free(u.g.dk); free(u.g.dv); free(u.g.dg); free(u.g.dgk);
            la_release(&u.f);
            lattn_ctx_free(&ctx);
        }
}

/* ---- Gated DeltaNet (the delta-rule core), FLOPs 6·T·H·K·V ------------------------------------- */
typedef struct { lattn_ctx *ctx; lattn_gdr_args a; } gdr_u;
static void gdr_chunk_run(void *p) {
    gdr_u *u = (gdr_u *)p;
    u->a.chunk = g_chunk;
    lattn_gdr_chunk(u->ctx, &u->a);
}
static void gdr_step_run(void *p) { gdr_u *u = (gdr_u *)p; lattn_gdr_step(u->ctx, &u->a); }
static void gdr_alloc(gdr_u *u, int64_t T, int64_t H, int64_t K, int64_t V, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V), nh = (size_t)(T * H);
    float *g;
    memset(&u->a, 0, sizeof u->a);
    u->a.B = 1; u->a.T = T; u->a.H = H; u->a.K = K; u->a.V = V; u->a.l2norm = 1;
    u->a.q = (float *)malloc(sizeof(float) * nq); u->a.k = (float *)malloc(sizeof(float) * nq);
    u->a.v = (float *)malloc(sizeof(float) * nv); u->a.o = (float *)malloc(sizeof(float) * nv);
    u->a.beta = (float *)malloc(sizeof(float) * nh); g = (float *)malloc(sizeof(float) * nh);
    lattn_rng_fill_normal(&r, (float *)u->a.q, nq, 0, 1); lattn_rng_fill_normal(&r, (float *)u->a.k, nq, 0, 1);
    lattn_rng_fill_normal(&r, (float *)u->a.v, nv, 0, 1); lattn_rng_fill_uniform(&r, (float *)u->a.beta, nh, 0, 1);
    lattn_rng_fill_uniform(&r, g, nh, -0.2f, -0.005f);
    u->a.g = g;
}
static void gdr_release(gdr_u *u) {
    free((void *)u->a.q); free((void *)u->a.k); free((void *)u->a.v); free(u->a.o); free((void *)u->a.beta); free((void *)u->a.g);
}
static void bench_gdn(void) {
    static const int64_t Ts[2] = { 2048, 8192 };
    static const int Cs[3] = { 32, 64, 128 };
    int si, ci;
    if (!wanted("gdn")) return;
    for (si = 0; si < 2; si++) {
        int64_t T = Ts[si], H = 16, K = 128, V = 128;
        double fl = 6.0 * T * H * K * V, ms = 0, mc, m2, best = 1e30;
        int bestC = 32;
        lattn_ctx ctx;
        gdr_u u;
        char shape[96];
        if (g_quick && si > 0) continue;
        lattn_ctx_init(&ctx);
        u.ctx = &ctx; ctx.n_threads = 1;
        gdr_alloc(&u, T, H, K, V, 21);
        for (ci = 0; ci < 3; ci++) {
            g_chunk = Cs[ci];
            time2(gdr_chunk_run, &u, ci == 0 ? gdr_step_run : NULL, &u, g_quick ? 3 : (si ? 3 : 7), &mc, ci == 0 ? &ms : &m2);
            if (ci == 0) {
                snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=128", (long long)T);
                row("gdn_step", shape, 1, ms, (double)T, fl, NULL, 0);
            }
            snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=128,C=%d", (long long)T, Cs[ci]);
            row("gdn_chunk", shape, 1, mc, (double)T, fl, "step", ms);
            if (mc < best) { best = mc; bestC = Cs[ci]; }
        }
        g_chunk = bestC; ctx.n_threads = 2;
        time2(gdr_chunk_run, &u, NULL, NULL, g_quick ? 3 : (si ? 3 : 7), &mc, NULL);
        snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=128,C=%d", (long long)T, bestC);
        row("gdn_chunk", shape, 2, mc, (double)T, fl, "step(1 thread)", ms);
        g_chunk = 0;
        gdr_release(&u);
    }
    {   /* decode: one token through a 16 x 128 x 128 state (1 MB) */
        lattn_ctx ctx;
        gdr_u u;
        double t[9], reps = 200;
        int i, k;
        lattn_ctx_init(&ctx);
        u.ctx = &ctx; ctx.n_threads = 1;
        gdr_alloc(&u, 1, 16, 128, 128, 22);
        u.a.ht = (float *)calloc(16 * 128 * 128, sizeof(float));
        u.a.h0 = u.a.ht;
        for (k = 0; k < 9; k++) {
            double t0 = now();
            for (i = 0; i < (int)reps; i++) lattn_gdr_step(&ctx, &u.a);
            t[k] = (now() - t0) / reps * 1e3;
        }
        qsort(t, 9, sizeof(double), cmp_d);
        g_bytes = 2.0 * 16 * 128 * 128 * 4;
        row("gdn_decode", "1 token, state 16x128x128", 1, t[4], 1, 6.0 * 16 * 128 * 128, NULL, 0);
        free(u.a.ht);
        gdr_release(&u);
    }
}

/* ---- PRISM: the P2 mixer (GDR+I with e = k̂, c = 1, per-key gates, S injections) against GDN ------- */
typedef struct { lattn_ctx *ctx; lattn_prism_p1 p; int64_t T; float *x, *y; } p1_u;
static void p1_run(void *q) { p1_u *u = (p1_u *)q; lattn_prism_p1_forward_ref(u->ctx, &u->p, 1, u->T, u->x, u->y, NULL); }
/* The core call of the P2 mixer with S solver steps on gdr_alloc's inputs (as lattn_prism_p2_forward
   makes it: k̂ = k / |k|_ε with write scale c = |k|_ε, per-key gates, S injections); p2_release frees
   what this adds. */
static void p2_setup(gdr_u *u, int64_t T, int64_t H, int64_t K, int64_t S, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    size_t nq = (size_t)(T * H * K), nh = (size_t)(T * H), i;
    float *c = (float *)malloc(sizeof(float) * nh), *gk = (float *)malloc(sizeof(float) * nq);
    float *ib = (float *)malloc(sizeof(float) * nh * (size_t)S), *ik = (float *)malloc(sizeof(float) * nq * (size_t)S);
    float *id = (float *)malloc(sizeof(float) * nq * (size_t)S);
    gdr_alloc(u, T, H, K, K, seed + 1);
    for (i = 0; i < nq; i++) { ((float *)u->a.q)[i] *= 0.1f; ((float *)u->a.k)[i] *= 0.1f; }
    for (i = 0; i < nh; i++) {
        double n = 0;
        int64_t j;
        for (j = 0; j < K; j++) n += (double)u->a.k[i * K + j] * u->a.k[i * K + j];
        c[i] = (float)sqrt(n + 1e-6);
        for (j = 0; j < K; j++) ((float *)u->a.k)[i * K + j] = (float)(u->a.k[i * K + j] / c[i]);
    }
    lattn_rng_fill_uniform(&r, gk, nq, -0.2f, -0.005f);
    lattn_rng_fill_uniform(&r, ib, nh * (size_t)S, 0.0f, 1.0f);
    lattn_rng_fill_normal(&r, ik, nq * (size_t)S, 0.0f, 0.1f);
    lattn_rng_fill_normal(&r, id, nq * (size_t)S, 0.0f, 1.0f);
    u->a.l2norm = 0; u->a.scale = 1.0; u->a.c = c; free((void *)u->a.g); u->a.g = NULL; u->a.gk = gk;
    u->a.L = S; u->a.inj_b = ib; u->a.inj_kap = ik; u->a.inj_d = id;
}
static void p2_release(gdr_u *u) {
    free((void *)u->a.c); free((void *)u->a.gk); free((void *)u->a.inj_b); free((void *)u->a.inj_kap); free((void *)u->a.inj_d);
    u->a.g = NULL;
    gdr_release(u);
}
/* ---- backward: Gated DeltaNet forward + backward against the forward ------------------------------ */
/* Rows gdn_fwd (lattn_gdr_chunk, C = 64), gdn_bwd (lattn_gdr_chunk_backward: dq, dk, dv, dβ, dg,
   dh0 is not asked) and gdn_fwd_bwd, on gdr_alloc's inputs (l2norm, per-head gates in [-0.2,
   -0.005]); baseline the forward row, so speedup >= 0.333 means at most 3.0x. The training pair
   is the forward keeping Ξ and the chunk-start states (gdn_fwd_saved) and the backward reading
   them (gdn_bwd); gdn_fwd_xi and gdn_bwd_xi keep and read Ξ alone, gdn_bwd_recompute neither.
   Then PRISM P2's mixer call (S = 2, p2_setup) forward + backward (every input's gradient, the
   same pair) against GDN's: speedup >= 0.4 means at most 2.5x. GFLOP/s: the forward's nominal
   6·T·H·K·V; the backward's 2.5x that. */
typedef struct { gdr_u f; lattn_gdr_grads g; float *xi, *states; } gbw_u;
static void gbw_set(gbw_u *u, int xi, int states) {
    u->f.a.xi = xi ? u->xi : NULL;
    u->f.a.states = states ? u->states : NULL;
}
static void gbw_fwd_run(void *p) { gbw_u *u = (gbw_u *)p; gbw_set(u, 0, 0); lattn_gdr_chunk(u->f.ctx, &u->f.a); }
static void gbw_fwdx_run(void *p) { gbw_u *u = (gbw_u *)p; gbw_set(u, 1, 0); lattn_gdr_chunk(u->f.ctx, &u->f.a); }
static void gbw_fwds_run(void *p) { gbw_u *u = (gbw_u *)p; gbw_set(u, 1, 1); lattn_gdr_chunk(u->f.ctx, &u->f.a); }
static void gbw_bwd_run(void *p) { gbw_u *u = (gbw_u *)p; gbw_set(u, 1, 1); lattn_gdr_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void gbw_bwdx_run(void *p) { gbw_u *u = (gbw_u *)p; gbw_set(u, 1, 0); lattn_gdr_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void gbw_bwdr_run(void *p) { gbw_u *u = (gbw_u *)p; gbw_set(u, 0, 0); lattn_gdr_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void bench_gdn_backward(void) {
    const int64_t T = 2048, H = 16, K = 128, V = 128;
    const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V), nh = (size_t)(T * H);
    int th;
    if (!wanted("gdn_fwd_bwd") && !wanted("backward")) return;
    for (th = 1; th <= 2; th++) {
        lattn_ctx ctx;
        gbw_u u;
        double mf, mfx, mfs, mb, mbx, mbr, fl = 6.0 * T * H * K * V;
        const char *shape = "T=2048,H=16,K=V=128,C=64";
        lattn_ctx_init(&ctx);
        ctx.n_threads = th;
        ctx.keep_workspace = 1;            /* as a training loop runs: later calls fault nothing in */
        memset(&u, 0, sizeof u);
        u.f.ctx = &ctx;
        gdr_alloc(&u.f, T, H, K, V, 21);
        u.f.a.chunk = 64;
        u.g.dout = u.f.a.v;
        u.g.dq = (float *)malloc(sizeof(float) * nq);
        u.g.dk = (float *)malloc(sizeof(float) * nq);
        u.g.dv = (float *)malloc(sizeof(float) * nv);
        u.g.dbeta = (float *)malloc(sizeof(float) * nh);
        u.g.dg = (float *)malloc(sizeof(float) * nh);
        u.xi = (float *)malloc(sizeof(float) * nv);
        u.states = (float *)malloc(sizeof(float) * (size_t)((T / 64 + 1) * H * K * V));
        {   /* all six in one interleaved loop: the ratios side by side */
            const bench_fn f[6] = { gbw_fwd_run, gbw_fwds_run, gbw_bwd_run, gbw_bwdx_run, gbw_bwdr_run, gbw_fwdx_run };
            void *const us[6] = { &u, &u, &u, &u, &u, &u };
            double ms[6];
            timen(6, f, us, g_quick ? 3 : 5, ms);
            mf = ms[0]; mfs = ms[1]; mb = ms[2]; mbx = ms[3]; mbr = ms[4]; mfx = ms[5];
        }
        row("gdn_fwd", shape, th, mf, (double)T, fl, NULL, 0);
        row("gdn_fwd_xi", shape, th, mfx, (double)T, fl, "gdn_fwd", mf);
        row("gdn_fwd_saved", shape, th, mfs, (double)T, fl, "gdn_fwd", mf);
        row("gdn_bwd", shape, th, mb, (double)T, 2.5 * fl, "gdn_fwd", mf);
        row("gdn_bwd_xi", shape, th, mbx, (double)T, 2.5 * fl, "gdn_fwd", mf);
        row("gdn_bwd_recompute", shape, th, mbr, (double)T, 2.5 * fl, "gdn_fwd", mf);
        g_ratio = round_ratio(1, 2, 0);
        row("gdn_fwd_bwd", shape, th, mfs + mb, (double)T, 3.5 * fl, "gdn_fwd", mf);
        free(u.g.dbeta); free(u.g.dg);
        gdr_release(&u.f);
        {   /* PRISM P2's mixer, S = 2: per-key gates, a write scale, two injections */
            gbw_u p;
            double pf, pb;
            memset(&p, 0, sizeof p);
            p.f.ctx = &ctx;
            p2_setup(&p.f, T, H, K, 2, 34);
            p.f.a.chunk = 64;
            p.xi = u.xi;
            p.states = u.states;
            p.g = u.g;
            p.g.dout = p.f.a.v;
            p.g.dbeta = (float *)malloc(sizeof(float) * nh);
            p.g.dc = (float *)malloc(sizeof(float) * nh);
            p.g.dgk = (float *)malloc(sizeof(float) * nq);
            p.g.dinj_b = (float *)malloc(sizeof(float) * nh * 2);
            p.g.dinj_kap = (float *)malloc(sizeof(float) * nq * 2);
            p.g.dinj_d = (float *)malloc(sizeof(float) * nv * 2);
            time2(gbw_fwds_run, &p, gbw_bwd_run, &p, g_quick ? 3 : 5, &pf, &pb);
            row("prism_p2_mixer_fwd_bwd", "T=2048,H=16,K=V=128,S=2,C=64", th, pf + pb, (double)T, 3.5 * fl, "gdn_fwd_bwd", mfs + mb);
            free(p.g.dbeta); free(p.g.dc); free(p.g.dgk); free(p.g.dinj_b); free(p.g.dinj_kap); free(p.g.dinj_d);
            p2_release(&p.f);
        }
        free(u.g.dq); free(u.g.dk); free(u.g.dv); free(u.xi); free(u.states);
        lattn_ctx_free(&ctx);
    }
}

static void bench_prism(void) {
    int64_t T = g_quick ? 512 : 2048, H = 16, K = 128, V = 128, S;
    lattn_ctx ctx;
    gdr_u g, u;
    double fl = 6.0 * T * H * K * V;
    if (!wanted("prism")) return;
    lattn_ctx_init(&ctx);
    ctx.n_threads = 1;
    g.ctx = &ctx; u.ctx = &ctx;
    gdr_alloc(&g, T, H, K, V, 31);                      /* GDN, per-head gates */
    for (S = 2; S <= 3; S++) {
        double mg, mp;
        char shape[80];
        p2_setup(&u, T, H, K, S, 32 + (uint64_t)S);
        g_chunk = 32;
        time2(gdr_chunk_run, &g, gdr_chunk_run, &u, g_quick ? 3 : 5, &mg, &mp);
        snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=128,C=32", (long long)T);
        if (S == 2) row("gdn_chunk", shape, 1, mg, (double)T, fl, NULL, 0);
        snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=128,S=%lld,C=32", (long long)T, (long long)S);
        row("prism_p2_mixer", shape, 1, mp, (double)T, fl, "gdn_chunk", mg);
        g_chunk = 0;
        p2_release(&u);
    }
    gdr_release(&g);
    {   /* P1, the official block in double (the compatibility reference), D = 2048 = 16 heads of 128 */
        p1_u b;
        lattn_prism_config pc = lattn_prism_config_large_130m();
        lattn_rng r = lattn_rng_seed(34);
        double ms, unused;
        pc.D = 2048; pc.H = 16; pc.S = 2; pc.Kc = 7; pc.rg = 16; pc.vocab = 0; pc.n_layers = 1; pc.seq_len = 256;
        b.ctx = &ctx; b.T = g_quick ? 32 : 64;
        if (lattn_prism_p1_init(&ctx, &b.p, &pc, 5) != LATTN_OK) return;
        b.x = (float *)malloc(sizeof(float) * (size_t)(b.T * pc.D)); b.y = (float *)malloc(sizeof(float) * (size_t)(b.T * pc.D));
        lattn_rng_fill_normal(&r, b.x, (size_t)(b.T * pc.D), 0, 1);
        time2(p1_run, &b, NULL, NULL, 1, &ms, &unused);
        row("prism_p1_block_ref", g_quick ? "T=32,D=2048,H=16,S=2 (double)" : "T=64,D=2048,H=16,S=2 (double)", 1, ms, (double)b.T, 0, NULL, 0);
        lattn_prism_p1_free(&ctx, &b.p);
        free(b.x); free(b.y);
    }
}

/* ---- TTT-Linear / TTT-MLP at T = 2048, 16 heads of 64, b = 16, beside GDN and PRISM P2 ------------
   FLOPs counted as the dual form's products per token and head: 2F(3F + 2b) (TTT-Linear),
   2(28F² + 10bF) (TTT-MLP); the same count for every form, so GFLOP/s compare the forms. The
   backward (lattn_ttt_chunk_backward: the forward recomputed, then two products for each) is
   counted as 3× the forward's, forward + backward as 4×. */
typedef struct { lattn_ctx *ctx; lattn_ttt_args a; lattn_ttt_grads g; float *st; int64_t pos; } ttt_u;
static void ttt_primal_run(void *p) { ttt_u *u = (ttt_u *)p; lattn_ttt_step(u->ctx, &u->a); }
static void ttt_dual_run(void *p) { ttt_u *u = (ttt_u *)p; lattn_ttt_chunk(u->ctx, &u->a); }
static void ttt_bwd_run(void *p) { ttt_u *u = (ttt_u *)p; lattn_ttt_chunk_backward(u->ctx, &u->a, &u->g); }
static void ttt_step_run(void *p) {       /* token by token, the state carried */
    ttt_u *u = (ttt_u *)p;
    lattn_ttt_args s = u->a;
    const int64_t HF = s.H * s.K;
    int64_t t;
    memcpy(u->st, u->a.h0, sizeof(float) * (size_t)(s.H * 2 * lattn__ttt_p(s.K, s.mlp)));
    s.T = 1; s.h0 = u->st; s.ht = u->st; s.pos0 = &u->pos;
    for (t = 0, u->pos = 0; t < u->a.T; t++, u->pos = (u->pos + 1) % s.mini_batch) {
        s.q = u->a.q + t * HF; s.k = u->a.k + t * HF; s.v = u->a.v + t * HF; s.lr = u->a.lr + t * s.H; s.o = u->a.o + t * HF;
        lattn_ttt_step(u->ctx, &s);
    }
}
static void ttt_alloc(ttt_u *u, int64_t T, int64_t H, int64_t F, int mlp, uint64_t seed) {
    lattn_rng r = lattn_rng_seed(seed);
    const int64_t P = lattn__ttt_p(F, mlp), n = T * H * F, b = 16;
    float *tok = (float *)malloc(sizeof(float) * (size_t)b), *lw = (float *)malloc(sizeof(float) * (size_t)(H * F));
    float *s0 = (float *)calloc((size_t)(H * 2 * P), sizeof(float)), *lr = (float *)malloc(sizeof(float) * (size_t)(T * H));
    int64_t i;
    memset(&u->a, 0, sizeof u->a);
    u->a.B = 1; u->a.T = T; u->a.H = H; u->a.K = F; u->a.mlp = mlp; u->a.mini_batch = b;
    u->a.q = (float *)malloc(sizeof(float) * (size_t)n); u->a.k = (float *)malloc(sizeof(float) * (size_t)n);
    u->a.v = (float *)malloc(sizeof(float) * (size_t)n); u->a.o = (float *)malloc(sizeof(float) * (size_t)n);
    lattn_rng_fill_normal(&r, (float *)u->a.q, (size_t)n, 0, 1); lattn_rng_fill_normal(&r, (float *)u->a.k, (size_t)n, 0, 1);
    lattn_rng_fill_normal(&r, (float *)u->a.v, (size_t)n, 0, 1); lattn_rng_fill_uniform(&r, lr, (size_t)(T * H), 0.2f / F, 1.0f / F);
    for (i = 0; i < b; i++) tok[i] = 1.0f / (float)(i + 1);
    for (i = 0; i < H * F; i++) lw[i] = 1.0f;
    for (i = 0; i < H; i++) lattn_rng_fill_normal(&r, s0 + i * 2 * P, (size_t)P, 0.0f, 0.125f);
    u->a.lr = lr; u->a.tok = tok; u->a.ln_w = lw; u->a.ln_b = (float *)calloc((size_t)(H * F), sizeof(float)); u->a.h0 = s0;
    u->st = (float *)malloc(sizeof(float) * (size_t)(H * 2 * P));
    memset(&u->g, 0, sizeof u->g);
    u->g.dout = (float *)malloc(sizeof(float) * (size_t)n);
    lattn_rng_fill_normal(&r, (float *)u->g.dout, (size_t)n, 0, 1);
    u->g.dq = (float *)malloc(sizeof(float) * (size_t)(3 * n)); u->g.dk = u->g.dq + n; u->g.dv = u->g.dk + n;
    u->g.dlr = (float *)malloc(sizeof(float) * (size_t)(T * H + b + 2 * H * F));
    u->g.dtok = u->g.dlr + T * H; u->g.dln_w = u->g.dtok + b; u->g.dln_b = u->g.dln_w + H * F;
}
static void ttt_release(ttt_u *u) {
    free((void *)u->a.q); free((void *)u->a.k); free((void *)u->a.v); free(u->a.o); free((void *)u->a.lr); free((void *)u->a.tok);
    free((void *)u->a.ln_w); free((void *)u->a.ln_b); free((void *)u->a.h0); free(u->st);
    free((void *)u->g.dout); free(u->g.dq); free(u->g.dlr);
}
static void bench_ttt(void) {
    const int64_t T = g_quick ? 512 : 2048, H = 16, F = 64, b = 16;
    const int runs = g_quick ? 3 : 5;
    double ms_p2[3] = { 0, 0, 0 }, ms_gdn[3] = { 0, 0, 0 }, ms_p2fb[3] = { 0, 0, 0 };
    char shape[96];
    int th, mlp;
    lattn_ctx ctx;
    if (!wanted("ttt")) return;
    lattn_ctx_init(&ctx);
    for (th = 1; th <= 2; th++) {        /* the same width on the delta-rule core: GDN and PRISM P2 (S = 2) */
        gdr_u g, u;
        double fl = 6.0 * T * H * F * F;
        ctx.n_threads = th; g.ctx = &ctx; u.ctx = &ctx;
        gdr_alloc(&g, T, H, F, F, 41);
        p2_setup(&u, T, H, F, 2, 42);
        g_chunk = 64;
        time2(gdr_chunk_run, &g, gdr_chunk_run, &u, runs, &ms_gdn[th], &ms_p2[th]);
        snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=64,C=64", (long long)T);
        row("gdn_chunk", shape, th, ms_gdn[th], (double)T, fl, NULL, 0);
        snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=64,S=2,C=64", (long long)T);
        row("prism_p2_mixer", shape, th, ms_p2[th], (double)T, fl, "gdn_chunk", ms_gdn[th]);
        g_chunk = 0;
        {   /* P2's forward + backward (every input's gradient) for the comparison with TTT-MLP's */
            const size_t nq = (size_t)(T * H * F), nh = (size_t)(T * H);
            gbw_u p;
            double pf, pb;
            float *gb = (float *)malloc(sizeof(float) * (4 * nq + 3 * nh + 4 * nq + 2 * nh));
            memset(&p, 0, sizeof p);
            p.f = u;
            p.f.a.chunk = 64;
            p.g.dout = u.a.v;
            p.g.dq = gb; p.g.dk = gb + nq; p.g.dv = gb + 2 * nq; p.g.dgk = gb + 3 * nq;
            p.g.dbeta = gb + 4 * nq; p.g.dc = gb + 4 * nq + nh; p.g.dinj_b = gb + 4 * nq + 2 * nh;
            p.g.dinj_kap = gb + 4 * nq + 4 * nh; p.g.dinj_d = gb + 6 * nq + 4 * nh;
            time2(gbw_fwd_run, &p, gbw_bwd_run, &p, runs, &pf, &pb);
            ms_p2fb[th] = pf + pb;
            free(gb);
        }
        gdr_release(&g); p2_release(&u);
    }
    for (mlp = 0; mlp < 2; mlp++) {
        const double fl = (double)T * H * (mlp ? 2.0 * (28.0 * F * F + 10.0 * b * F) : 2.0 * F * (3.0 * F + 2.0 * b));
        const char *nm[3] = { mlp ? "ttt_mlp_dual" : "ttt_linear_dual", mlp ? "ttt_mlp_primal" : "ttt_linear_primal",
                              mlp ? "ttt_mlp_step" : "ttt_linear_step" };
        ttt_u u;
        u.ctx = &ctx;
        ttt_alloc(&u, T, H, F, mlp, 43 + (uint64_t)mlp);
        for (th = 1; th <= 2; th++) {
            double md, mp, mst, unused;
            ctx.n_threads = th;
            time2(ttt_dual_run, &u, ttt_primal_run, &u, runs, &md, &mp);
            time2(ttt_step_run, &u, NULL, NULL, 3, &mst, &unused);
            snprintf(shape, sizeof shape, "T=%lld,H=16,F=64,b=16", (long long)T);
            row(nm[1], shape, th, mp, (double)T, fl, NULL, 0);
            row(nm[0], shape, th, md, (double)T, fl, "primal", mp);
            row(nm[2], shape, th, mst, (double)T, fl, "dual", md);
            {                            /* the outer gradient: the dual form's backward, and forward + backward */
                double mb;
                char sh2[96];
                char nb[2][32];
                time2(ttt_bwd_run, &u, NULL, NULL, runs, &mb, &unused);
                snprintf(nb[0], sizeof nb[0], "%s_bwd", mlp ? "ttt_mlp" : "ttt_linear");
                snprintf(nb[1], sizeof nb[1], "%s_fwd_bwd", mlp ? "ttt_mlp" : "ttt_linear");
                row(nb[0], shape, th, mb, (double)T, 3.0 * fl, nm[0], md);
                row(nb[1], shape, th, md + mb, (double)T, 4.0 * fl, nm[0], md);
                if (mlp) {               /* PRISM P2 (S = 2) forward + backward against TTT-MLP's */
                    snprintf(sh2, sizeof sh2, "T=%lld,H=16,K=V=64,S=2 vs TTT-MLP fwd+bwd", (long long)T);
                    row("prism_p2_fwd_bwd_vs_ttt_mlp", sh2, th, ms_p2fb[th], (double)T, 0, "ttt_mlp_fwd_bwd", md + mb);
                }
            }
            if (mlp) {                   /* PRISM P2 (S = 2) against TTT-MLP (dual) at the same width */
                snprintf(shape, sizeof shape, "T=%lld,H=16,K=V=64,S=2 vs TTT-MLP", (long long)T);
                row("prism_p2_vs_ttt_mlp", shape, th, ms_p2[th], (double)T, 0, "ttt_mlp_dual", md);
            }
        }
        ttt_release(&u);
    }
}

/* ---- one 3B-shaped Laplace layer: forward at T = 256 and the decoding step ----------------------- */
typedef struct { lattn_ctx *ctx; lattn_laplace_model m; int64_t T; float *x, *y, *state; } lp_u;
static void lp_forward_run(void *p) { lp_u *u = (lp_u *)p; lattn_laplace_forward(u->ctx, &u->m, 1, u->T, NULL, u->x, u->y, NULL); }
static void lp_step_run(void *p) { lp_u *u = (lp_u *)p; lattn_laplace_step(u->ctx, &u->m, 1, NULL, u->x, u->y, u->state); }
/* A training step of the layer: lattn_laplace_backward with dout = y (the forward inside it). */
typedef struct { lp_u f; float *grad, *dx; } lpt_u;
static void lp_train_run(void *p) { lpt_u *u = (lpt_u *)p; lattn_laplace_backward(u->f.ctx, &u->f.m, 1, u->f.T, NULL, u->f.x, u->f.y, NULL, u->grad, u->dx); }
/* The step's GEMMs alone, the same calls on the same shapes: per matrix W [N][K] the forward twice
   (the forward, the layer's recomputation) and the backward's two products. In u->dx, past the
   training step's dx (the first M·8192 floats): x (standard normal, filled once), y = dy, dx, then
   the packing workspace. */
static void lp_gemms_run(void *p) {
    lpt_u *u = (lpt_u *)p;
    const lattn_laplace_config *c = &u->f.m.cfg;
    const int64_t M = u->f.T, D = c->D, HQ = c->H * (2 * c->K + 2 * c->V), HV = c->H * c->V, F = c->ffn;
    const int64_t N[5] = { HQ, D, F, F, D }, K[5] = { D, HV, D, D, F };
    const int nthr = lattn__threads(u->f.ctx);
    float *x = u->dx + M * 8192, *y = x + M * 8192, *dx = y + M * 8192, *ws = dx + M * 8192;
    int i, pass;
    for (i = 0; i < 5; i++) {
        const float *W = u->f.m.arena;
        for (pass = 0; pass < 2; pass++) lattn__linear(nthr, M, N[i], K[i], x, W, y, 0, ws);
        lattn__linear_backward(nthr, M, N[i], K[i], x, W, y, dx, 0, u->grad, 0, ws);
    }
}
/* Live and peak bytes of the context's allocations (a size header before each block). */
typedef struct { size_t live, peak; } lp_count;
static void *lp_alloc(void *user, size_t n) {
    lp_count *c = (lp_count *)user;
    size_t *p = (size_t *)malloc(n + 16);
    if (!p) return NULL;
    p[0] = n;
    c->live += n;
    if (c->live > c->peak) c->peak = c->live;
    return (char *)p + 16;
}
static void lp_free(void *user, void *q) {
    lp_count *c = (lp_count *)user;
    size_t *p = (size_t *)(void *)((char *)q - 16);
    c->live -= p[0];
    free(p);
}
static void bench_laplace(void) {
    lattn_laplace_config c = lattn_laplace_config_3b();
    lattn_ctx ctx;
    lp_u u;
    double P, mix, ms, unused;
    int th;
    lattn_rng r = lattn_rng_seed(5);
    if (!wanted("laplace")) return;
    c.n_layers = 1;
    lattn_ctx_init(&ctx);
    u.ctx = &ctx; u.T = g_quick ? 64 : 256;
    if (lattn_laplace_init(&ctx, &u.m, &c, 3) != LATTN_OK) { printf("laplace: %s\n", lattn_ctx_error(&ctx)); return; }
    u.x = (float *)malloc(sizeof(float) * (size_t)(u.T * c.D)); u.y = (float *)malloc(sizeof(float) * (size_t)(u.T * c.D));
    u.state = (float *)calloc((size_t)lattn__laplace_state_floats(&c), sizeof(float));
    lattn_rng_fill_normal(&r, u.x, (size_t)(u.T * c.D), 0, 1);
    P = (double)lattn__laplace_matrix_params(&c, NULL);
    mix = 4.0 * c.H * c.K * c.V;                 /* the mixer's recurrent FLOPs per token */
    for (th = 1; th <= 2; th++) {
        char shape[64];
        ctx.n_threads = th;
        time2(lp_forward_run, &u, NULL, NULL, g_quick ? 3 : 5, &ms, &unused);
        snprintf(shape, sizeof shape, "3B layer, T=%lld", (long long)u.T);
        row("laplace_layer_forward", shape, th, ms, (double)u.T, (double)u.T * (2.0 * P + mix), NULL, 0);
        time2(lp_step_run, &u, NULL, NULL, g_quick ? 5 : 15, &ms, &unused);
        g_bytes = 4.0 * (u.m.n_params + 2.0 * lattn__laplace_state_floats(&c));   /* weights once, state in and out */
        row("laplace_layer_step", "3B layer, 1 token", th, ms, 1, 2.0 * P + mix, NULL, 0);
    }
    {   /* a training step (forward + backward, no optimizer): tokens/s, and its GEMMs alone; FLOPs
           counted: the matrices' 8·P per token (forward, the recomputation, the backward's two
           products); the mixer's are not counted. The context keeps its workspace between steps,
           as a training loop sets it (ctx.keep_workspace). Then the peak workspace at T = 256 and
           2048. */
        lpt_u t;
        lp_count cnt;
        lattn_ctx cc;
        int64_t Ts[2] = { 256, 2048 }, k;
        t.f = u;
        t.grad = (float *)malloc(sizeof(float) * u.m.n_params);
        t.dx = (float *)calloc((size_t)(u.T * 8 * 8192) + 4 * 1024 * 1024, sizeof(float));
        lattn_rng_fill_normal(&r, t.dx + u.T * 8192, (size_t)(u.T * 8192), 0, 1);   /* lp_gemms_run's x */
        ctx.keep_workspace = 1;
        for (th = 1; th <= 2; th++) {
            double mt, mg, mk, unused;
            ctx.n_threads = th;
            time2(lp_train_run, &t, lp_gemms_run, &t, g_quick ? 1 : 3, &mt, &mg);
            ctx.keep_activations = 1;
            time2(lp_train_run, &t, NULL, NULL, g_quick ? 1 : 3, &mk, &unused);
            ctx.keep_activations = 0;
            row("laplace_layer_train", "3B layer, T=256, fwd+bwd", th, mt, (double)u.T, 8.0 * P * (double)u.T, NULL, 0);
            row("laplace_layer_train_gemms", "3B layer, T=256, its GEMMs", th, mg, (double)u.T, 8.0 * P * (double)u.T, "laplace_layer_train", mt);
            row("laplace_layer_train_keep", "3B layer, T=256, activations kept", th, mk, (double)u.T, 6.0 * P * (double)u.T, "laplace_layer_train", mt);
        }
        for (k = 0; k < (g_quick ? 2 : 4); k++) {
            float *x2 = (float *)calloc((size_t)(Ts[k / 2] * c.D), sizeof(float)), *g2 = (float *)malloc(sizeof(float) * u.m.n_params);
            lattn_ctx_init(&cc);
            cc.n_threads = 2;
            cc.keep_activations = (int)(k % 2);
            memset(&cnt, 0, sizeof cnt);
            cc.allocator.alloc = lp_alloc;
            cc.allocator.free = lp_free;
            cc.allocator.user = &cnt;
            lattn_laplace_backward(&cc, &u.m, 1, Ts[k / 2], NULL, x2, x2, NULL, g2, NULL);
            printf("laplace_layer_train  3B layer, T=%lld, %s: peak workspace %.1f MB (%.0f KB per token), weights %.1f MB\n",
                   (long long)Ts[k / 2], k % 2 ? "activations kept" : "layer recomputed", (double)cnt.peak / 1e6,
                   (double)cnt.peak / 1e3 / (double)Ts[k / 2], 4.0 * (double)u.m.n_params / 1e6);
            free(x2); free(g2);
        }
        free(t.grad); free(t.dx);
    }
    lattn_laplace_free(&ctx, &u.m);
    lattn_ctx_free(&ctx);
    free(u.x); free(u.y); free(u.state);
}

/* ---- ShortConv and the TCN stack --------------------------------------------------------------- */
typedef struct { lattn_ctx *ctx; lattn_shortconv_args a; } conv_u;
static void conv_fast_run(void *p) { conv_u *u = (conv_u *)p; lattn_shortconv_chunk(u->ctx, &u->a); }
static void conv_step_run(void *p) { conv_u *u = (conv_u *)p; lattn_shortconv_step(u->ctx, &u->a); }
typedef struct { conv_u f; lattn_shortconv_grads g; } conv_b;
static void conv_bwd_run(void *p) { conv_b *u = (conv_b *)p; lattn_shortconv_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void bench_conv(void) {
    int th;
    int64_t T = 2048, D = 1536, W = 4;
    if (!wanted("shortconv")) return;
    for (th = 1; th <= 2; th++) {
        lattn_ctx ctx;
        conv_u u;
        lattn_rng r = lattn_rng_seed(4);
        double mf, ms;
        lattn_ctx_init(&ctx); ctx.n_threads = th;
        memset(&u.a, 0, sizeof u.a);
        u.ctx = &ctx; u.a.B = 1; u.a.T = T; u.a.D = D; u.a.W = W;
        u.a.x = (float *)malloc(sizeof(float) * (size_t)(T * D)); u.a.y = (float *)malloc(sizeof(float) * (size_t)(T * D));
        u.a.w = (float *)malloc(sizeof(float) * (size_t)(D * W));
        lattn_rng_fill_normal(&r, (float *)u.a.x, (size_t)(T * D), 0, 1);
        lattn_rng_fill_normal(&r, (float *)u.a.w, (size_t)(D * W), 0, 1);
        time2(conv_fast_run, &u, th == 1 ? conv_step_run : NULL, &u, 9, &mf, &ms);
        if (th == 1) row("shortconv_step", "T=2048,d=1536,k=4", 1, ms, (double)T, 2.0 * T * D * W, NULL, 0);
        row("shortconv", "T=2048,d=1536,k=4", th, mf, (double)T, 2.0 * T * D * W, th == 1 ? "shortconv_step" : NULL, ms);
        {   /* the backward (SiLU, bias; dx, dw, dbias): FLOPs 6·T·d·k (three tap sums) */
            conv_b ub;
            double mff, mb;
            ub.f = u; ub.f.a.silu = 1; ub.f.a.bias = u.a.w;
            memset(&ub.g, 0, sizeof ub.g);
            ub.g.dout = u.a.x; ub.g.dx = (float *)malloc(sizeof(float) * (size_t)(T * D));
            ub.g.dw = (float *)malloc(sizeof(float) * (size_t)(D * W)); ub.g.dbias = (float *)malloc(sizeof(float) * (size_t)D);
            ctx.keep_workspace = 1;            /* as a training loop runs: later calls fault nothing in */
            time2(conv_fast_run, &ub.f, conv_bwd_run, &ub, 9, &mff, &mb);
            row("shortconv_fwd", "T=2048,d=1536,k=4,SiLU", th, mff, (double)T, 2.0 * T * D * W, NULL, 0);
            row("shortconv_bwd", "T=2048,d=1536,k=4,SiLU", th, mb, (double)T, 6.0 * T * D * W, "shortconv_fwd", mff);
            g_ratio = round_ratio(0, 1, 0);
            row("shortconv_fwd_bwd", "T=2048,d=1536,k=4,SiLU", th, mff + mb, (double)T, 8.0 * T * D * W, "shortconv_fwd", mff);
            free(ub.g.dx); free(ub.g.dw); free(ub.g.dbias);
            lattn_ctx_free(&ctx);
        }
        free((void *)u.a.x); free(u.a.y); free((void *)u.a.w);
    }
}

typedef struct { lattn_ctx *ctx; lattn_tcn_args a; } tcn_u;
static void tcn_fast_run(void *p) { tcn_u *u = (tcn_u *)p; lattn_tcn_chunk(u->ctx, &u->a); }
static void tcn_step_run(void *p) { tcn_u *u = (tcn_u *)p; lattn_tcn_step(u->ctx, &u->a); }
static void bench_tcn(void) {
    int th;
    int64_t T = g_quick ? 256 : 2048, d = 1536, Tstep = 64;
    lattn_tcn_demo m;
    lattn_ctx ctx;
    float *x, *y;
    if (!wanted("tcn")) return;
    lattn_tcn_demo_config dc;
    lattn_ctx_init(&ctx);
    dc.d_in = 2; dc.D = d; dc.W = 3; dc.n_layers = 4;
    lattn_tcn_demo_init(&ctx, &m, &dc, 5);
    x = (float *)malloc(sizeof(float) * (size_t)(T * d)); y = (float *)malloc(sizeof(float) * (size_t)(T * d));
    { lattn_rng r = lattn_rng_seed(6); lattn_rng_fill_normal(&r, x, (size_t)(T * d), 0, 1); }
    {   /* the step baseline on the first 64 tokens: its cost per token does not depend on T */
        tcn_u u;
        double ms, unused;
        char shape[64];
        memset(&u.a, 0, sizeof u.a);
        u.ctx = &ctx; u.a.B = 1; u.a.T = Tstep; u.a.D = d; u.a.W = 3; u.a.n_layers = 4; u.a.layers = m.layers;
        u.a.x = x; u.a.y = y;
        time2(tcn_step_run, &u, NULL, NULL, 5, &ms, &unused);
        snprintf(shape, sizeof shape, "T=%lld,d=1536,k=3,L=4", (long long)Tstep);
        row("tcn_step", shape, 1, ms, (double)Tstep, 2.0 * Tstep * d * d * 3 * 4, NULL, 0);
        for (th = 1; th <= 2; th++) {
            tcn_u f = u;
            double mf;
            ctx.n_threads = th;
            f.a.T = T;
            time2(tcn_fast_run, &f, NULL, NULL, 5, &mf, &unused);
            snprintf(shape, sizeof shape, "T=%lld,d=1536,k=3,L=4", (long long)T);
            /* speedup in tokens/s against the step loop (ms per token scaled to T tokens) */
            row("tcn_fast", shape, th, mf, (double)T, 2.0 * T * d * d * 3 * 4, "tcn_step", ms * (double)T / (double)Tstep);
        }
    }
    lattn_tcn_demo_free(&ctx, &m);
    free(x); free(y);
}


/* ---- STREAM triad and the scan ------------------------------------------------------------------ */
typedef struct { int64_t n; float *a, *b, *c; int th; } triad_u;
static void triad_run(void *p) {         /* STREAM triad on the SIMD layer, blocks per thread */
    triad_u *u = (triad_u *)p;
    int64_t blk;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(u->th))
    for (blk = 0; blk < u->n / 4096; blk++) {
        float *a = u->a + blk * 4096;
        const float *b = u->b + blk * 4096, *c = u->c + blk * 4096;
        int i;
        for (i = 0; i < 4096; i += LATTN__VW)
            lattn__vstore(a + i, lattn__vfma(lattn__vset1(3.0f), lattn__vload(c + i), lattn__vload(b + i)));
    }
}
typedef struct { lattn_ctx *ctx; lattn_scan_args a; } scan_u;
static void scan_run(void *p) { scan_u *u = (scan_u *)p; lattn_scan_chunk(u->ctx, &u->a); }
typedef struct { scan_u f; lattn_scan_grads g; } scan_b;
static void scan_bwd_run(void *p) { scan_b *u = (scan_b *)p; lattn_scan_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void fill(float *x, size_t n, float v) { size_t i; for (i = 0; i < n; i++) x[i] = v + 1e-7f * (float)(i % 1000); }
/* The STREAM triad at th threads, its row printed; returns the ms of its *bytes (12 per element). */
static double triad_row(int th, double *bytes) {
    triad_u u;
    double ms, unused;
    u.n = g_quick ? 1 << 22 : 1 << 25; u.th = th;
    u.a = (float *)malloc(sizeof(float) * (size_t)u.n); u.b = (float *)malloc(sizeof(float) * (size_t)u.n);
    u.c = (float *)malloc(sizeof(float) * (size_t)u.n);
    fill(u.a, (size_t)u.n, 0); fill(u.b, (size_t)u.n, 1); fill(u.c, (size_t)u.n, 2);
    time2(triad_run, &u, NULL, NULL, 7, &ms, &unused);
    g_bytes = 12.0 * (double)u.n;
    *bytes = g_bytes;
    row("stream_triad", "a = b + s c, 3 x 128 MiB", th, ms, 0, 2.0 * (double)u.n, NULL, 0);
    free(u.a); free(u.b); free(u.c);
    return ms;
}
static void bench_scan(void) {
    int th;
    double tb, triad_gbs[3];
    if (!wanted("scan")) return;
    for (th = 1; th <= 2; th++) {        /* the bandwidth the scan is held to, measured now */
        const double ms = triad_row(th, &tb);
        triad_gbs[th] = tb / (ms * 1e6);
    }
    {
        static const int64_t shapes[2][2] = { { 4096, 65536 }, { 1 << 20, 64 } };
        int si;
        for (si = 0; si < 2; si++)
            for (th = 1; th <= 2; th++) {
                lattn_ctx ctx;
                scan_u u;
                int64_t T = shapes[si][0], N = shapes[si][1];
                size_t n;
                char shape[64];
                double ms, unused;
                if (si == 0 && th == 2) continue;
                if (g_quick) T /= 16;
                n = (size_t)(T * N);
                lattn_ctx_init(&ctx); ctx.n_threads = th;
                memset(&u.a, 0, sizeof u.a);
                u.ctx = &ctx; u.a.B = 1; u.a.T = T; u.a.N = N;
                u.a.a = (float *)malloc(n * 4); u.a.b = (float *)malloc(n * 4); u.a.y = (float *)malloc(n * 4);
                fill((float *)u.a.a, n, 0.9f); fill((float *)u.a.b, n, 1.0f); fill(u.a.y, n, 0.0f);
                time2(scan_run, &u, NULL, NULL, 5, &ms, &unused);
                snprintf(shape, sizeof shape, "B=1,T=%lld,N=%lld", (long long)T, (long long)N);
                g_bytes = 12.0 * (double)n;
                row(si ? "scan_time_split" : "scan_channel_split", shape, th, ms, (double)T, 2.0 * (double)n, NULL, 0);
                free((void *)u.a.a); free((void *)u.a.b); free(u.a.y);
            }
    }
    for (th = 1; th <= 2; th++) {        /* the backward: a reverse scan, da and db (dh0 too) */
        lattn_ctx ctx;
        scan_b u;
        const int64_t T = g_quick ? 256 : 4096, N = 8192;
        const size_t n = (size_t)(T * N);
        double mf, mf2, mb, mbr;
        lattn_ctx_init(&ctx); ctx.n_threads = th;
        ctx.keep_workspace = 1;            /* as a training loop runs: later calls fault nothing in */
        memset(&u, 0, sizeof u);
        u.f.ctx = &ctx; u.f.a.B = 1; u.f.a.T = T; u.f.a.N = N;
        u.f.a.a = (float *)malloc(n * 4); u.f.a.b = (float *)malloc(n * 4); u.f.a.y = (float *)malloc(n * 4);
        u.g.da = (float *)malloc(n * 4); u.g.db = (float *)malloc(n * 4);
        fill((float *)u.f.a.a, n, 0.9f); fill((float *)u.f.a.b, n, 1.0f); fill(u.f.a.y, n, 0.0f);
        u.g.dout = u.f.a.b;
        time2(scan_run, &u.f, scan_bwd_run, &u, 5, &mf, &mbr);   /* recomputing the states */
        u.g.h = u.f.a.y;                  /* reading them: the forward's y */
        time2(scan_run, &u.f, scan_bwd_run, &u, 5, &mf2, &mb);
        mf = mf < mf2 ? mf : mf2;
        g_bytes = 12.0 * (double)n;      /* a, b read, y written */
        row("scan_fwd", "B=1,T=4096,N=8192", th, mf, (double)T, 2.0 * (double)n, NULL, 0);
        g_bytes = 20.0 * (double)n;      /* a, dy, h read; da, db written */
        row("scan_bwd", "B=1,T=4096,N=8192", th, mb, (double)T, 3.0 * (double)n, "scan_fwd", mf);
        printf("%-22s %.0f %% of the triad's %.1f GB/s at %d threads\n", "", 100.0 * 20.0 * (double)n / (mb * 1e6) / triad_gbs[th],
               triad_gbs[th], th);
        g_bytes = 28.0 * (double)n;      /* a, b (checkpoints); a, b, dy (recompute, reverse); da, db written */
        row("scan_bwd_recompute", "B=1,T=4096,N=8192", th, mbr, (double)T, 5.0 * (double)n, "scan_fwd", mf);
        g_bytes = 32.0 * (double)n;
        g_ratio = round_ratio(0, 1, 0);   /* the second loop's: the backward that reads y */
        row("scan_fwd_bwd", "B=1,T=4096,N=8192", th, mf + mb, (double)T, 5.0 * (double)n, "scan_fwd", mf);
        free((void *)u.f.a.a); free((void *)u.f.a.b); free(u.f.a.y); free(u.g.da); free(u.g.db);
        lattn_ctx_free(&ctx);
    }
}

/* ---- selective SSM: the fused form against a straightforward per-token loop with one expf per
   state element (the shape of ggml's CPU ssm_scan) ---------------------------------------------- */
typedef struct { lattn_ctx *ctx; lattn_ssm_args a; float *h; } ssm_u;
static void ssm_fast_run(void *p) { ssm_u *u = (ssm_u *)p; lattn_ssm_chunk(u->ctx, &u->a); }
static void ssm_loop_run(void *p) {
    ssm_u *u = (ssm_u *)p;
    const lattn_ssm_args *a = &u->a;
    int64_t t, d, n, D = a->D, N = a->N;
    memset(u->h, 0, sizeof(float) * (size_t)(D * N));
    for (t = 0; t < a->T; t++)
        for (d = 0; d < D; d++) {
            float x = a->x[t * D + d], dt = a->dt[t * D + d] + a->dt_bias[d], y = 0;
            dt = dt > 20.0f ? dt : log1pf(expf(dt));
            for (n = 0; n < N; n++) {
                float *h = &u->h[d * N + n];
                *h = *h * expf(dt * a->A[d * N + n]) + a->Bm[t * N + n] * x * dt;
                y += *h * a->Cm[t * N + n];
            }
            a->y[t * D + d] = y + a->Dskip[d] * x;
        }
}
typedef struct { ssm_u f; lattn_ssm_grads g; float *states; } ssm_b;
/* the forward without and with the block-start states, the backward reading them or recomputing */
static void ssm_fwdn_run(void *p) { ssm_b *u = (ssm_b *)p; u->f.a.states = NULL; lattn_ssm_chunk(u->f.ctx, &u->f.a); }
static void ssm_fwds_run(void *p) { ssm_b *u = (ssm_b *)p; u->f.a.states = u->states; lattn_ssm_chunk(u->f.ctx, &u->f.a); }
static void ssm_bwd_run(void *p) { ssm_b *u = (ssm_b *)p; u->f.a.states = u->states; lattn_ssm_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void ssm_bwdr_run(void *p) { ssm_b *u = (ssm_b *)p; u->f.a.states = NULL; lattn_ssm_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void bench_ssm(void) {
    lattn_ctx ctx;
    ssm_u u;
    lattn_rng r = lattn_rng_seed(12);
    int64_t T = g_quick ? 256 : 2048, D = 1536, N = 16;
    double mf, ml;
    char shape[64];
    if (!wanted("ssm")) return;
    lattn_ctx_init(&ctx); ctx.n_threads = 1;
    memset(&u.a, 0, sizeof u.a);
    u.ctx = &ctx; u.a.B = 1; u.a.T = T; u.a.D = D; u.a.N = N; u.a.G = 1; u.a.dt_softplus = 1;
#define BENCH_ARR(field, cnt, lo, hi) do { float *p_ = (float *)malloc(sizeof(float) * (size_t)(cnt)); \
        lattn_rng_fill_uniform(&r, p_, (size_t)(cnt), lo, hi); u.a.field = p_; } while (0)
    BENCH_ARR(x, T * D, -1, 1); BENCH_ARR(dt, T * D, -3, 1); BENCH_ARR(A, D * N, -8, -0.1f);
    BENCH_ARR(Bm, T * N, -1, 1); BENCH_ARR(Cm, T * N, -1, 1); BENCH_ARR(Dskip, D, -1, 1); BENCH_ARR(dt_bias, D, -1, 0);
#undef BENCH_ARR
    u.a.y = (float *)malloc(sizeof(float) * (size_t)(T * D)); u.h = (float *)malloc(sizeof(float) * (size_t)(D * N));
    time2(ssm_fast_run, &u, ssm_loop_run, &u, 9, &mf, &ml);
    snprintf(shape, sizeof shape, "T=%lld,D=1536,N=16 (mamba-130m)", (long long)T);
    row("ssm_expf_loop", shape, 1, ml, (double)T, 4.0 * T * D * N, NULL, 0);
    row("ssm_fast", shape, 1, mf, (double)T, 4.0 * T * D * N, "ssm_expf_loop", ml);
    {   /* the backward (every parameter's gradient) at 1 and 2 threads: FLOPs 10·T·D·N nominal (the
           recompute pass 4, the reverse step's six products; 14 with the checkpoint pass) */
        ssm_b ub;
        int th;
        ub.f = u;
        ub.states = (float *)malloc(sizeof(float) * (size_t)((T / LATTN_SSM_BLOCK + 2) * D * N));
        memset(&ub.g, 0, sizeof ub.g);
        ub.g.dout = u.a.x;
        ub.g.dx = (float *)malloc(sizeof(float) * (size_t)(T * D)); ub.g.ddt = (float *)malloc(sizeof(float) * (size_t)(T * D));
        ub.g.dA = (float *)malloc(sizeof(float) * (size_t)(D * N)); ub.g.dBm = (float *)malloc(sizeof(float) * (size_t)(T * N));
        ub.g.dCm = (float *)malloc(sizeof(float) * (size_t)(T * N)); ub.g.dDskip = (float *)malloc(sizeof(float) * (size_t)D);
        ub.g.ddt_bias = (float *)malloc(sizeof(float) * (size_t)D);
        ctx.keep_workspace = 1;            /* as a training loop runs: later calls fault nothing in */
        for (th = 1; th <= 2; th++) {    /* _bwd reads the forward's block-start states, _bwd_recompute runs the forward again */
            double mff, mfs, mb, mbr;
            ctx.n_threads = th;
            {   /* all four in one interleaved loop: the ratios side by side */
                const bench_fn f[4] = { ssm_fwdn_run, ssm_fwds_run, ssm_bwd_run, ssm_bwdr_run };
                void *const us[4] = { &ub, &ub, &ub, &ub };
                double ms[4];
                timen(4, f, us, 11, ms);
                mff = ms[0]; mfs = ms[1]; mb = ms[2]; mbr = ms[3];
            }
            row("ssm_fwd", shape, th, mff, (double)T, 4.0 * T * D * N, NULL, 0);
            row("ssm_fwd_states", shape, th, mfs, (double)T, 4.0 * T * D * N, "ssm_fwd", mff);
            row("ssm_bwd", shape, th, mb, (double)T, 10.0 * T * D * N, "ssm_fwd", mff);
            row("ssm_bwd_recompute", shape, th, mbr, (double)T, 14.0 * T * D * N, "ssm_fwd", mff);
            g_ratio = round_ratio(1, 2, 0);
            row("ssm_fwd_bwd", shape, th, mfs + mb, (double)T, 14.0 * T * D * N, "ssm_fwd", mff);
        }
        free(ub.states);
        free(ub.g.dx); free(ub.g.ddt); free(ub.g.dA); free(ub.g.dBm); free(ub.g.dCm); free(ub.g.dDskip); free(ub.g.ddt_bias);
        lattn_ctx_free(&ctx);
    }
    free((void *)u.a.x); free((void *)u.a.dt); free((void *)u.a.A); free((void *)u.a.Bm); free((void *)u.a.Cm);
    free((void *)u.a.Dskip); free((void *)u.a.dt_bias); free(u.a.y); free(u.h);
}

/* ---- AdamW over a 100 M-parameter arena against the STREAM triad of the same run: it reads w, g, m,
   v and writes w, m, v, 28 bytes per parameter (the triad 12) -------------------------------------- */
typedef struct { lattn_ctx *ctx; lattn_adamw_config c; size_t n; float *w, *g, *m, *v; } adamw_u;
static void adamw_run(void *p) { adamw_u *u = (adamw_u *)p; lattn_adamw_step(u->ctx, &u->c, 3, u->n, u->w, u->g, u->m, u->v); }
static void bench_adamw(void) {
    adamw_u u;
    lattn_ctx ctx;
    int th;
    if (!wanted("adamw")) return;
    u.n = g_quick ? (size_t)1 << 22 : (size_t)100000000;
    u.w = (float *)malloc(sizeof(float) * u.n); u.g = (float *)malloc(sizeof(float) * u.n);
    u.m = (float *)malloc(sizeof(float) * u.n); u.v = (float *)malloc(sizeof(float) * u.n);
    fill(u.w, u.n, 0.5f); fill(u.g, u.n, 0.01f); fill(u.m, u.n, 0.001f); fill(u.v, u.n, 1e-4f);
    lattn_ctx_init(&ctx);
    u.ctx = &ctx;
    u.c = lattn_adamw_default();
    for (th = 1; th <= 2; th++) {
        double ms, tb, unused, mt = triad_row(th, &tb);
        ctx.n_threads = th;
        time2(adamw_run, &u, NULL, NULL, 5, &ms, &unused);
        g_bytes = 28.0 * (double)u.n;
        /* baseline: the time the triad's rate would take for AdamW's bytes, so speedup = the share of the triad rate */
        row("adamw", g_quick ? "4 M parameters, fp32" : "100 M parameters, fp32", th, ms, 0, 0, "stream_triad", mt * g_bytes / tb);
        g_bytes = 0;
    }
    free(u.w); free(u.g); free(u.m); free(u.v);
}

/* ---- a GDN language model of ~10 M parameters at T = 512 (the net): a training step, and its parts:
   the GDN layers (projections + mixer, forward + backward, lattn_gdn_backward on the same shapes),
   the optimizer (lattn_optim_step, AdamW), the rest (the FFN and head GEMMs, the norms, the
   embedding) = the step less the two. FLOPs counted as 6·parameters·tokens (the mixers' own work
   not counted), against the measured peak ------------------------------------------------------- */
typedef struct { lattn_ctx *ctx; lattn_net *m; lattn_optim *o; lattn_gdn_layer *g; int32_t *tok; float *x, *dy, *grad, *gg, *dx; int64_t B, T; } net_u;
static void net_step_run(void *p) {
    net_u *u = (net_u *)p;
    lattn_net_train_step(u->ctx, u->m, u->o, 1e-3, 1.0, 1, u->B, u->T, u->tok, NULL, NULL, NULL);
}
static void net_optim_run(void *p) {
    net_u *u = (net_u *)p;
    lattn_optim_step(u->ctx, u->o, 1e-3, u->grad);
}
static void net_gdn_run(void *p) {
    net_u *u = (net_u *)p;
    lattn_gdn_backward(u->ctx, u->g, u->B, u->T, u->x, NULL, u->dy, u->gg, u->dx, NULL);
}
static void bench_net(void) {
    lattn_ctx ctx;
    lattn_net m;
    lattn_optim o;
    lattn_net_config c;
    lattn_gdn_layer g;
    net_u u;
    lattn_rng r = lattn_rng_seed(3);
    const int64_t B = g_quick ? 1 : 4, T = g_quick ? 128 : 512, n_gdn = 4;
    char shape[64];
    int th;
    size_t i;
    if (!wanted("net_train")) return;
    lattn_ctx_init(&ctx);
    if (lattn_net_config_parse(&ctx, &c, "gdn ffn gdn ffn gdn ffn gdn ffn", 256, 384, 6) != LATTN_OK || lattn_net_init(&ctx, &m, &c, 1) != LATTN_OK ||
        lattn_optim_init(&ctx, &o, m.tensors, m.n_tensors, 0) != LATTN_OK) {
        printf("net: %s\n", lattn_ctx_error(&ctx));
        return;
    }
    {
        lattn_gdn_config gc = lattn_gdn_config_default();
        gc.D = 384; gc.H = 6; gc.K = 64; gc.V = 64;
        if (lattn_gdn_init(&ctx, &g, &gc, 2) != LATTN_OK) return;
    }
    u.ctx = &ctx; u.m = &m; u.o = &o; u.g = &g; u.B = B; u.T = T;
    u.tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)(B * T));
    u.x = (float *)malloc(sizeof(float) * (size_t)(B * T * 384));
    u.dy = (float *)malloc(sizeof(float) * (size_t)(B * T * 384));
    u.dx = (float *)malloc(sizeof(float) * (size_t)(B * T * 384));
    u.grad = (float *)malloc(sizeof(float) * m.n_params);
    u.gg = (float *)malloc(sizeof(float) * g.n_params);
    for (i = 0; i < (size_t)(B * T); i++) u.tok[i] = (int32_t)(lattn_rng_next(&r) % 256);
    lattn_rng_fill_normal(&r, u.x, (size_t)(B * T * 384), 0, 1);
    lattn_rng_fill_normal(&r, u.dy, (size_t)(B * T * 384), 0, 1e-3f);
    lattn_rng_fill_normal(&r, u.grad, m.n_params, 0, 1e-3f);
    snprintf(shape, sizeof shape, "%.1fM params, B=%lld T=%lld", (double)m.n_params / 1e6, (long long)B, (long long)T);
    for (th = 1; th <= 2; th++) {
        double ms, mo, mg, unused;
        ctx.n_threads = th;
        time2(net_step_run, &u, net_optim_run, &u, g_quick ? 3 : 5, &ms, &mo);
        time2(net_gdn_run, &u, NULL, NULL, g_quick ? 3 : 5, &mg, &unused);
        row("net_train_step_gdn10m", shape, th, ms, (double)(B * T), 6.0 * (double)m.n_params * (double)(B * T), NULL, 0);
        printf("    share of the step: GDN layers %.0f %% (4 x %.1f ms), optimizer %.1f %% (%.2f ms), FFN/head GEMMs and the rest %.0f %%\n",
               100.0 * (double)n_gdn * mg / ms, mg, 100.0 * mo / ms, mo, 100.0 * (ms - (double)n_gdn * mg - mo) / ms);
    }
    free(u.tok); free(u.x); free(u.dy); free(u.dx); free(u.grad); free(u.gg);
    lattn_gdn_free(&ctx, &g);
    lattn_optim_free(&ctx, &o);
    lattn_net_free(&ctx, &m);
}

/* ---- Muon's NS5 in fp32 on the Laplace shapes (GEMM-bound: 5·(4m²n + 2m³) FLOPs, m = min, n =
   max of the sides), one timed run each (seconds per matrix) against the peak of the same run ------ */
static void bench_muon(void) {
    static const int64_t shapes[3][2] = { { 3072, 3072 }, { 3072, 9216 }, { 8192, 3072 } };
    lattn_rng r = lattn_rng_seed(17);
    lattn_ctx ctx;
    int si;
    if (!wanted("muon")) return;
    lattn_ctx_init(&ctx);
    for (si = 0; si < 3; si++) {
        const int64_t R = g_quick ? shapes[si][0] / 8 : shapes[si][0], C = g_quick ? shapes[si][1] / 8 : shapes[si][1];
        const double m = (double)LATTN__MIN(R, C), n = (double)LATTN__MAX(R, C);
        float *G = (float *)malloc(sizeof(float) * (size_t)(R * C)), *X = (float *)malloc(sizeof(float) * (size_t)(R * C));
        char shape[64];
        double t0, ms;
        lattn_rng_fill_normal(&r, G, (size_t)(R * C), 0, 1);
        t0 = now();
        lattn_muon_ns5(&ctx, R, C, 5, LATTN_NS_FP32, G, X);
        ms = (now() - t0) * 1e3;
        snprintf(shape, sizeof shape, "%lld x %lld, 5 steps, fp32", (long long)R, (long long)C);
        row("muon_ns5", shape, 1, ms, 0, 5.0 * (4.0 * m * m * n + 2.0 * m * m * m), NULL, 0);
        free(G); free(X);
    }
}

/* ---- the sharded Muon step on 8 in-process ranks (examples/comm_threads.h) against the one-device
   step on the same matrices: 4 layers of the Laplace shapes / 8, owners by layer, fp32 ----------- */
#define MS_NM 16
typedef struct {
    lattn_mat_desc d[MS_NM];
    int owner[MS_NM];
    float *W[MS_NM], *G[MS_NM], *M[MS_NM];   /* whole matrices; the ranks use their rows of them */
    lattn_muon_traffic tr[LATTN_EMU_MAX];
} ms_u;
static void ms_rank(const lattn_comm *comm, void *p) {
    ms_u *u = (ms_u *)p;
    lattn_muon_config c = lattn_muon_default();
    float *W[MS_NM], *G[MS_NM], *M[MS_NM];
    lattn_ctx ctx;
    int i;
    lattn_ctx_init(&ctx);
    ctx.n_threads = 1;
    for (i = 0; i < MS_NM; i++) {   /* rows of the shared matrices: each rank writes only its own */
        int64_t start;
        lattn_shard_rows(u->d[i].rows, comm->size, comm->rank, &start, NULL);
        W[i] = u->W[i] + start * u->d[i].cols;
        G[i] = u->G[i] + start * u->d[i].cols;
        M[i] = u->M[i] + start * u->d[i].cols;
    }
    lattn_muon_step_sharded(&ctx, &c, comm, MS_NM, u->d, u->owner, LATTN_MUON_A2A, W, G, M, &u->tr[comm->rank]);
    lattn_ctx_free(&ctx);
}
static void ms_sharded(void *p) {
    lattn_emu e;
    lattn_emu_init(&e, 8);
    lattn_emu_run(&e, ms_rank, p);
    lattn_emu_free(&e);
}
static void ms_one(void *p) {
    ms_u *u = (ms_u *)p;
    lattn_muon_config c = lattn_muon_default();
    lattn_ctx ctx;
    int i;
    lattn_ctx_init(&ctx);
    ctx.n_threads = 1;
    for (i = 0; i < MS_NM; i++) lattn_muon_step(&ctx, &c, u->d[i].rows, u->d[i].cols, u->W[i], u->G[i], u->M[i]);
    lattn_ctx_free(&ctx);
}
static void bench_muon_sharded(void) {
    static const int64_t rows[4] = { 9216, 3072, 16384, 3072 }, cols[4] = { 3072, 3072, 3072, 8192 };
    const int64_t div = g_quick ? 32 : 8;
    lattn_rng r = lattn_rng_seed(19);
    ms_u *u;
    double ms, base, flops = 0;
    uint64_t most = 0;
    char shape[96];
    lattn_ctx ctx;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int i;
    if (!wanted("muon_sharded")) return;
    u = (ms_u *)calloc(1, sizeof *u);
    lattn_ctx_init(&ctx);
    for (i = 0; i < MS_NM; i++) {
        const size_t e = (size_t)(rows[i % 4] / div * cols[i % 4] / div);
        u->d[i].rows = rows[i % 4] / div;
        u->d[i].cols = cols[i % 4] / div;
        u->d[i].layer = i / 4;
        u->W[i] = (float *)malloc(e * sizeof(float));
        u->G[i] = (float *)malloc(e * sizeof(float));
        u->M[i] = (float *)calloc(e, sizeof(float));
        lattn_rng_fill_normal(&r, u->W[i], e, 0, 0.02f);
        lattn_rng_fill_normal(&r, u->G[i], e, 0, 1);
        flops += 5.0 * (4.0 * (double)LATTN__MIN(u->d[i].rows, u->d[i].cols) * (double)LATTN__MIN(u->d[i].rows, u->d[i].cols) *
                            (double)LATTN__MAX(u->d[i].rows, u->d[i].cols) + 2.0 * pow((double)LATTN__MIN(u->d[i].rows, u->d[i].cols), 3));
    }
    lattn_muon_plan(&ctx, 8, MS_NM, u->d, LATTN_OWNER_BY_LAYER, u->owner);
    time2(ms_sharded, u, ms_one, u, 3, &ms, &base);
    for (i = 0; i < 8; i++) most = LATTN__MAX(most, u->tr[i].sent[0] + u->tr[i].sent[1] + u->tr[i].recv[0] + u->tr[i].recv[1]);
    snprintf(shape, sizeof shape, "8 ranks, 16 mats /%lld, %.2f MB/rank max", (long long)div, most / 1e6);
    row("muon_sharded", shape, (int)LATTN__MAX(1, LATTN__MIN(8, cores)), ms, 0, flops, "muon_step_1dev", base);   /* 8 threads on the cores there are */
    for (i = 0; i < MS_NM; i++) { free(u->W[i]); free(u->G[i]); free(u->M[i]); }
    free(u);
    lattn_ctx_free(&ctx);
}

/* ---- S4D: recurrence vs FFT convolution vs direct convolution, D = 256, N = 64 complex modes ---- */
typedef struct { lattn_ctx *ctx; lattn_s4d_args a; } s4d_u;
static void s4d_run(void *p) { s4d_u *u = (s4d_u *)p; lattn_s4d_chunk(u->ctx, &u->a); }
typedef struct { s4d_u f; lattn_s4d_grads g; float *gp[6]; } s4d_b;
static void s4d_bwd_run(void *p) { s4d_b *u = (s4d_b *)p; lattn_s4d_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void bench_s4d(void) {
    static const int64_t Ts[5] = { 256, 1024, 4096, 16384, 65536 };
    int ti, form;
    int64_t D = 256, N = 64, i;
    float *par[6], *ldt;
    lattn_rng r = lattn_rng_seed(13);
    if (!wanted("s4d")) return;
    for (i = 0; i < 6; i++) par[i] = (float *)malloc(sizeof(float) * (size_t)(D * N));
    for (i = 0; i < D * N; i++) {
        par[0][i] = logf(0.5f); par[1][i] = 3.14159265f * (float)(i % N); par[2][i] = 1; par[3][i] = 0;
        par[4][i] = (float)(0.7 * lattn_rng_normal_d(&r)); par[5][i] = (float)(0.7 * lattn_rng_normal_d(&r));
    }
    ldt = (float *)malloc(sizeof(float) * (size_t)D);
    lattn_rng_fill_uniform(&r, ldt, (size_t)D, logf(1e-3f), logf(1e-1f));
    for (ti = 0; ti < (g_quick ? 2 : 5); ti++)
        for (form = 0; form < 3; form++) {
            static const char *const names[3] = { "s4d_scan", "s4d_fft", "s4d_conv" };
            lattn_ctx ctx;
            s4d_u u;
            int64_t T = Ts[ti];
            double ms, unused;
            char shape[64];
            if (form == 2 && T > 4096) continue;          /* O(T^2): minutes */
            lattn_ctx_init(&ctx); ctx.n_threads = 1;
            memset(&u.a, 0, sizeof u.a);
            u.ctx = &ctx; u.a.method = (lattn_s4d_method)form;
            u.a.B = 1; u.a.T = T; u.a.D = D; u.a.N = N; u.a.complex_modes = 1;
            u.a.A_re = par[0]; u.a.A_im = par[1]; u.a.B_re = par[2]; u.a.B_im = par[3]; u.a.C_re = par[4]; u.a.C_im = par[5];
            u.a.log_dt = ldt;
            u.a.x = (float *)malloc(sizeof(float) * (size_t)(T * D)); u.a.y = (float *)malloc(sizeof(float) * (size_t)(T * D));
            lattn_rng_fill_normal(&r, (float *)u.a.x, (size_t)(T * D), 0, 1);
            time2(s4d_run, &u, NULL, NULL, T >= 16384 ? 3 : 5, &ms, &unused);
            snprintf(shape, sizeof shape, "T=%lld,D=256,N=64 complex", (long long)T);
            row(names[form], shape, 1, ms, (double)T, 0, NULL, 0);
            free((void *)u.a.x); free(u.a.y);
        }
    {   /* the backward (every parameter's gradient, the SCAN method's blocks) at 1 and 2 threads */
        const int64_t T = g_quick ? 1024 : 4096;
        s4d_b ub;
        lattn_ctx ctx;
        char shape[64];
        int th;
        lattn_ctx_init(&ctx);
        memset(&ub, 0, sizeof ub);
        ub.f.ctx = &ctx;
        ub.f.a.B = 1; ub.f.a.T = T; ub.f.a.D = D; ub.f.a.N = N; ub.f.a.complex_modes = 1;
        ub.f.a.A_re = par[0]; ub.f.a.A_im = par[1]; ub.f.a.B_re = par[2]; ub.f.a.B_im = par[3]; ub.f.a.C_re = par[4]; ub.f.a.C_im = par[5];
        ub.f.a.log_dt = ldt;
        ub.f.a.x = (float *)malloc(sizeof(float) * (size_t)(T * D)); ub.f.a.y = (float *)malloc(sizeof(float) * (size_t)(T * D));
        lattn_rng_fill_normal(&r, (float *)ub.f.a.x, (size_t)(T * D), 0, 1);
        ub.g.dout = ub.f.a.x;
        ub.g.dx = (float *)malloc(sizeof(float) * (size_t)(T * D));
        for (i = 0; i < 6; i++) ub.gp[i] = (float *)malloc(sizeof(float) * (size_t)(D * N));
        ub.g.dA_re = ub.gp[0]; ub.g.dA_im = ub.gp[1]; ub.g.dB_re = ub.gp[2]; ub.g.dB_im = ub.gp[3]; ub.g.dC_re = ub.gp[4]; ub.g.dC_im = ub.gp[5];
        ub.g.dlog_dt = (float *)malloc(sizeof(float) * (size_t)D);
        snprintf(shape, sizeof shape, "T=%lld,D=256,N=64 complex", (long long)T);
        ctx.keep_workspace = 1;            /* as a training loop runs: later calls fault nothing in */
        for (th = 1; th <= 2; th++) {
            double mf, mb;
            ctx.n_threads = th;
            time2(s4d_run, &ub.f, s4d_bwd_run, &ub, 5, &mf, &mb);
            row("s4d_fwd", shape, th, mf, (double)T, 0, NULL, 0);
            row("s4d_bwd", shape, th, mb, (double)T, 0, "s4d_fwd", mf);
            row("s4d_fwd_bwd", shape, th, mf + mb, (double)T, 0, "s4d_fwd", mf);
        }
        for (i = 0; i < 6; i++) free(ub.gp[i]);
        free((void *)ub.f.a.x); free(ub.f.a.y); free(ub.g.dx); free(ub.g.dlog_dt);
        lattn_ctx_free(&ctx);
    }
    for (i = 0; i < 6; i++) free(par[i]);
    free(ldt);
}

/* ---- softmax attention (sdpa): the flash schedule on the tiler against materialised scores ------------- */
typedef struct { lattn_ctx *ctx; lattn_attn_args a; float *S; int threads; } attn_u;
static void attn_chunk_run(void *p) {
    attn_u *u = (attn_u *)p;
    u->a.chunk = g_chunk;
    lattn_attn_chunk(u->ctx, &u->a);
}
/* What a framework does without a fused kernel: per head S = s·Q Kᵀ (T x T, causal part), row
   softmax, O = P V, the two products on lattn's SGEMM; heads spread over the threads. */
static void attn_dense_run(void *p) {
    attn_u *u = (attn_u *)p;
    const int64_t T = u->a.T, H = u->a.H, D = u->a.K;
    int64_t h;
    LATTN__PRAGMA(omp parallel for schedule(static) num_threads(u->threads))
    for (h = 0; h < H; h++) {
        lattn_ctx c;
        float *S = u->S + (size_t)lattn__thread_id() * (size_t)(T * T), s = 1.0f / sqrtf((float)D);
        int64_t i, j;
        lattn_ctx_init(&c);
        lattn_sgemm(&c, LATTN_GEMM_TRANS_B | LATTN_GEMM_LOWER, T, T, D, u->a.q + h * D, H * D, u->a.k + h * D, H * D, S, T);
        for (i = 0; i < T; i++) {
            float *r = S + i * T, m = -HUGE_VALF, z = 0.0f;
            for (j = 0; j <= i; j++) m = r[j] * s > m ? r[j] * s : m;
            for (j = 0; j <= i; j++) { r[j] = expf(r[j] * s - m); z += r[j]; }
            for (j = 0; j <= i; j++) r[j] /= z;
            for (j = i + 1; j < T; j++) r[j] = 0.0f;
        }
        lattn_sgemm(&c, 0, T, D, T, S, T, u->a.v + h * D, H * D, u->a.o + h * D, H * D);
    }
}
/* The flash backward: sdpa_fwd (the forward writing o and lse), sdpa_bwd (lattn_attn_chunk_backward
   from the saved o and lse, every input's gradient) and sdpa_fwd_bwd (their sum) with baseline the
   forward: speedup >= 0.333 means at most 3.0x. GFLOP/s: the forward's 4·D·H·T(T+1)/2; the
   backward's 2.5 times that (its five products a tile pair against the forward's two). */
typedef struct { attn_u f; lattn_attn_grads g; } attn_bw_u;
static void attn_fwd_run(void *p) { attn_bw_u *u = (attn_bw_u *)p; lattn_attn_chunk(u->f.ctx, &u->f.a); }
static void attn_bwd_run(void *p) { attn_bw_u *u = (attn_bw_u *)p; lattn_attn_chunk_backward(u->f.ctx, &u->f.a, &u->g); }
static void bench_attn_backward(void) {
    const int64_t T = 2048, H = 16, D = 128;
    const size_t n = (size_t)(T * H * D);
    const double fl = 4.0 * (double)D * (double)H * (double)T * (double)(T + 1) / 2.0;
    int th;
    if (!wanted("sdpa") && !wanted("backward")) return;
    for (th = 1; th <= 2; th++) {
        lattn_ctx ctx;
        lattn_rng r = lattn_rng_seed(33);
        attn_bw_u u;
        double mf, mb;
        const char *shape = "causal,T=2048,H=16,D=128";
        lattn_ctx_init(&ctx);
        ctx.n_threads = th;
        ctx.keep_workspace = 1;            /* as a training loop runs: later calls fault nothing in */
        memset(&u, 0, sizeof u);
        u.f.ctx = &ctx;
        u.f.a.B = 1; u.f.a.T = T; u.f.a.H = H; u.f.a.K = D; u.f.a.V = D;
        u.f.a.q = (float *)malloc(n * 4); u.f.a.k = (float *)malloc(n * 4); u.f.a.v = (float *)malloc(n * 4);
        u.f.a.o = (float *)malloc(n * 4); u.f.a.lse = (float *)malloc((size_t)(T * H) * 4);
        lattn_rng_fill_normal(&r, (float *)u.f.a.q, n, 0, 1); lattn_rng_fill_normal(&r, (float *)u.f.a.k, n, 0, 1);
        lattn_rng_fill_normal(&r, (float *)u.f.a.v, n, 0, 1);
        u.g.dout = u.f.a.v;
        u.g.dq = (float *)malloc(n * 4); u.g.dk = (float *)malloc(n * 4); u.g.dv = (float *)malloc(n * 4);
        attn_fwd_run(&u);
        time2(attn_fwd_run, &u, attn_bwd_run, &u, g_quick ? 3 : 5, &mf, &mb);
        row("sdpa_fwd", shape, th, mf, (double)T, fl, NULL, 0);
        row("sdpa_bwd", shape, th, mb, (double)T, 2.5 * fl, "sdpa_fwd", mf);
        g_ratio = round_ratio(0, 1, 0);
        row("sdpa_fwd_bwd", shape, th, mf + mb, (double)T, 3.5 * fl, "sdpa_fwd", mf);
        free((void *)u.f.a.q); free((void *)u.f.a.k); free((void *)u.f.a.v); free(u.f.a.o); free(u.f.a.lse);
        free(u.g.dq); free(u.g.dk); free(u.g.dv);
        lattn_ctx_free(&ctx);
    }
}
typedef struct { lattn_ctx *ctx; lattn_attn_args a; lattn_kv_cache kv; int64_t len; } attn_dec_u;
static void attn_step_run(void *p) {
    attn_dec_u *u = (attn_dec_u *)p;
    int i;
    for (i = 0; i < 20; i++) { u->kv.len[0] = u->len; lattn_attn_step(u->ctx, &u->a, &u->kv); }
}
static void bench_attn(void) {
    static const int64_t Ts[2] = { 2048, 4096 }, Ds[2] = { 64, 128 };
    int ti, di, th;
    if (!wanted("sdpa")) return;
    for (ti = 0; ti < 2; ti++)
        for (di = 1; di >= 0; di--) {
            int64_t T = Ts[ti], D = Ds[di], H = 16;
            size_t n = (size_t)(T * H * D);
            double fl = 4.0 * (double)D * (double)H * (double)T * (double)(T + 1) / 2.0, mc, md;
            lattn_ctx ctx;
            lattn_rng r = lattn_rng_seed(31);
            attn_u u;
            char shape[96];
            if (g_quick && ti > 0) continue;
            lattn_ctx_init(&ctx);
            u.ctx = &ctx; memset(&u.a, 0, sizeof u.a);
            u.a.B = 1; u.a.T = T; u.a.H = H; u.a.K = D; u.a.V = D;
            u.a.q = (float *)malloc(n * 4); u.a.k = (float *)malloc(n * 4); u.a.v = (float *)malloc(n * 4); u.a.o = (float *)malloc(n * 4);
            lattn_rng_fill_normal(&r, (float *)u.a.q, n, 0, 1); lattn_rng_fill_normal(&r, (float *)u.a.k, n, 0, 1);
            lattn_rng_fill_normal(&r, (float *)u.a.v, n, 0, 1);
            u.S = ti == 0 ? (float *)malloc(2 * (size_t)(T * T) * 4) : NULL;
            for (th = 1; th <= 2; th++) {
                ctx.n_threads = th; u.threads = th;
                time2(attn_chunk_run, &u, u.S ? attn_dense_run : NULL, &u, g_quick ? 3 : 5, &mc, &md);
                snprintf(shape, sizeof shape, "causal,T=%lld,H=16,D=%lld", (long long)T, (long long)D);
                row("sdpa_chunk", shape, th, mc, (double)T, fl, u.S ? "materialised" : NULL, md);
            }
            free((void *)u.a.q); free((void *)u.a.k); free((void *)u.a.v); free(u.a.o); free(u.S);
        }
    for (th = 1; th <= 2; th++) {   /* decode: one query per head against 4096 cached keys and values */
        attn_dec_u u;
        lattn_ctx ctx;
        lattn_rng r = lattn_rng_seed(32);
        int64_t len[1], D = 128, H = 16, cap = 4097;
        size_t nc = (size_t)(cap * H * D);
        double ms, unused;
        lattn_ctx_init(&ctx);
        ctx.n_threads = th;
        u.ctx = &ctx; u.len = 4096; memset(&u.a, 0, sizeof u.a);
        u.a.B = 1; u.a.T = 1; u.a.H = H; u.a.K = D; u.a.V = D;
        u.a.q = (float *)malloc((size_t)(H * D) * 4); u.a.k = (float *)malloc((size_t)(H * D) * 4);
        u.a.v = (float *)malloc((size_t)(H * D) * 4); u.a.o = (float *)malloc((size_t)(H * D) * 4);
        lattn_rng_fill_normal(&r, (float *)u.a.q, (size_t)(H * D), 0, 1); lattn_rng_fill_normal(&r, (float *)u.a.k, (size_t)(H * D), 0, 1);
        lattn_rng_fill_normal(&r, (float *)u.a.v, (size_t)(H * D), 0, 1);
        u.kv.B = 1; u.kv.cap = cap; u.kv.H_kv = H; u.kv.K = D; u.kv.V = D; u.kv.len = len;
        u.kv.k = (float *)malloc(nc * 4); u.kv.v = (float *)malloc(nc * 4);
        lattn_rng_fill_normal(&r, u.kv.k, nc, 0, 1); lattn_rng_fill_normal(&r, u.kv.v, nc, 0, 1);
        time2(attn_step_run, &u, NULL, NULL, g_quick ? 3 : 7, &ms, &unused);
        g_bytes = 2.0 * 4097 * (double)(H * D) * 4;
        row("sdpa_decode", "1 token, KV cache 4096,H=16,D=128", th, ms / 20, 1, 4.0 * 4097 * (double)(H * D), NULL, 0);
        free((void *)u.a.q); free((void *)u.a.k); free((void *)u.a.v); free(u.a.o); free(u.kv.k); free(u.kv.v);
    }
}

/* ---- the SPS transformer against Standard at the paper's XS size (d 512, 8 layers, vocab 50304) ------ */
typedef struct {
    lattn_ctx *ctx; lattn_tf_model *m; lattn_sps_config s; int64_t T, B; int32_t *tok; float *lg; double loss;
    lattn_sps_cache c; int64_t *save;
} sps_u;
static void sps_fwd_run(void *p) { sps_u *u = (sps_u *)p; lattn_sps_forward(u->ctx, u->m, &u->s, 1, u->T, u->tok, NULL, &u->loss); }
/* 32 decoding steps of B sequences after the prefilled context (the cache's counters restored before each run) */
static void sps_dec_run(void *p) {
    sps_u *u = (sps_u *)p;
    int64_t n = (3 * u->c.n_layers + 1) * u->B;
    int i;
    memcpy(u->c.list_len, u->save, (size_t)n * sizeof(int64_t));
    memset(u->c.doc_start, 0, (size_t)u->B * sizeof(int));
    for (i = 0; i < 32; i++) lattn_sps_step(u->ctx, u->m, u->B, u->tok + i * u->B, u->lg, &u->c);
}
static void bench_sps(void) {
    lattn_tf_config c = lattn_tf_config_sps("xs");
    lattn_tf_model m;
    lattn_ctx ctx;
    lattn_rng r = lattn_rng_seed(41);
    sps_u u[2];
    int64_t T = g_quick ? 256 : 2048, P = g_quick ? 256 : 1024, i;
    double ms, mt, fl;
    char shape[96];
    int k;
    if (!wanted("sps")) return;
    lattn_ctx_init(&ctx);
    ctx.n_threads = 1;
    if (lattn_tf_init(&ctx, &m, &c, 5) != LATTN_OK) return;
    for (k = 0; k < 2; k++) {                    /* u[0]: SPS (w = 64), u[1]: Standard */
        u[k].ctx = &ctx; u[k].m = &m; u[k].T = T; u[k].B = 1;
        u[k].s = lattn_sps_config_default(k ? LATTN_SPS_STANDARD : LATTN_SPS_SPS);
        u[k].tok = (int32_t *)malloc((size_t)LATTN__MAX(T, 16 * 256) * sizeof(int32_t));   /* the batch-16 prefill's too */
        u[k].lg = (float *)malloc((size_t)(LATTN__MAX(P, 16 * 256) * c.vocab) * sizeof(float));
        u[k].save = (int64_t *)malloc((size_t)(3 * c.n_layers + 1) * 16 * sizeof(int64_t));
        for (i = 0; i < LATTN__MAX(T, 16 * 256); i++) u[k].tok[i] = (int32_t)(i * 7919 % 50000);
    }
    (void)r;
    /* forward (prefill / training forward) at T: Standard's FLOPs, 2·params·T + causal scores 4·d·T²/2 per layer */
    fl = 2.0 * (double)lattn__tf_params(&c) * (double)T + 4.0 * (double)c.D * (double)T * (double)(T + 1) / 2.0 * (double)c.n_layers;
    time2(sps_fwd_run, &u[0], sps_fwd_run, &u[1], 3, &ms, &mt);
    snprintf(shape, sizeof shape, "XS (d 512, L 8), T=%lld, w=64", (long long)T);
    row("sps_forward", shape, 1, ms, (double)T, fl, "standard", mt);
    row("sps_standard_forward", shape, 1, mt, (double)T, fl, NULL, 0);
    /* decode: 32 steps after a prefilled context of P tokens, one sequence; then 16 sequences after a
       context of P16 tokens each (tokens [32][16] from the same table) */
    for (i = 0; i < 2; i++) {
        const int64_t B = i ? 16 : 1, Pb = i ? (g_quick ? 64 : 256) : P;
        for (k = 0; k < 2; k++) {
            u[k].T = Pb;
            u[k].B = B;
            if (lattn_sps_cache_init(&ctx, &u[k].c, &m, &u[k].s, B, Pb + 40) != LATTN_OK ||
                lattn_sps_prefill(&ctx, &m, B, Pb, u[k].tok, u[k].lg, NULL, &u[k].c) != LATTN_OK) { printf("sps: %s\n", lattn_ctx_error(&ctx)); return; }
            memcpy(u[k].save, u[k].c.list_len, (size_t)((3 * c.n_layers + 1) * B) * sizeof(int64_t));
        }
        time2(sps_dec_run, &u[0], sps_dec_run, &u[1], 5, &ms, &mt);
        snprintf(shape, sizeof shape, "XS, B=%lld, context %lld, 32 tokens, w=64", (long long)B, (long long)Pb);
        row(i ? "sps_decode_b16" : "sps_decode", shape, 1, ms / 32, (double)B, 0, "standard", mt / 32);
        row(i ? "sps_standard_decode_b16" : "sps_standard_decode", shape, 1, mt / 32, (double)B, 0, NULL, 0);
        for (k = 0; i == 0 && k < 2; k++) lattn_sps_cache_free(&ctx, &u[k].c);
    }
    {   /* KV memory (bf16, the repo's cache) at the benchmark's n = 4096, and weights + KV: printed
           (a count, not a timing row; tests assert the formula) */
        double kv_s = lattn_sps_kv_bytes(&c, &u[0].s, 4096, 2), kv_t = lattn_sps_kv_bytes(&c, &u[1].s, 4096, 2), wb = 2.0 * (double)lattn__tf_params(&c);
        printf("sps memory: KV at n=4096, w=64 (bf16): SPS %.2f MiB / Standard %.2f MiB = %.4f; with the bf16 weights: %.4f\n",
               kv_s / 1048576.0, kv_t / 1048576.0, kv_s / kv_t, (kv_s + wb) / (kv_t + wb));
    }
    for (k = 0; k < 2; k++) { lattn_sps_cache_free(&ctx, &u[k].c); free(u[k].tok); free(u[k].lg); free(u[k].save); }
    lattn_tf_free(&ctx, &m);
}

/* ---- serving: a pool's batched decoding step at 3B width, batch 1 .. 64 (>>serve) ------------------ */
typedef struct { lattn_ctx *ctx; lattn_pool *p; int64_t n; int64_t *slots; int32_t *tok; float *lg; } srv_u;
static void srv_step_run(void *q) {
    srv_u *u = (srv_u *)q;
    lattn_pool_step(u->ctx, u->p, u->n, u->slots, u->tok, u->lg);
}
/* Every slot of the pool live at position ctx: a transformer's pages filled with ctx synthetic
   keys and values (a real prefill of 8,192 tokens at this width would take minutes here; a step's
   work depends on the page's length, not its contents), a Laplace state with synthetic values. */
static void srv_fill(lattn_pool *p, int64_t ctx, lattn_rng *r) {
    int64_t s, l;
    for (s = 0; s < p->n_slots; s++) {
        p->pos[s] = ctx;
        if (p->laplace) lattn_rng_fill_normal(r, p->state + (size_t)s * p->slot_floats, p->slot_floats, 0, 0.1f);
        for (l = 0; p->tf && l < p->kv[0].n_layers; l++) {
            const size_t w = (size_t)(p->kv[0].H_kv * p->kv[0].K), at = (size_t)((l * p->kv[0].B + s) * p->kv[0].cap) * w;
            lattn_rng_fill_normal(r, p->kv[0].k + at, (size_t)ctx * w, 0, 1);
            lattn_rng_fill_normal(r, p->kv[0].v + at, (size_t)ctx * w, 0, 1);
            p->kv[0].len[l * p->kv[0].B + s] = ctx;
        }
        if (p->tf) p->kv[0].pos[s] = ctx;
    }
}
static void bench_serve(void) {
    lattn_laplace_config lc = lattn_laplace_config_3b();
    lattn_tf_config tc;
    lattn_laplace_model lm;
    lattn_tf_model tm;
    lattn_ctx ctx;
    lattn_rng r = lattn_rng_seed(77);
    const int64_t L = g_quick ? 1 : 4, maxb = g_quick ? 16 : 64, ctx_len = 512, runs = g_quick ? 3 : 5;
    int64_t slots[64], b, k;
    int32_t tok[64];
    float *lg;
    double ms1[2] = { 0, 0 };
    size_t wbytes[2];
    if (!wanted("serve")) return;
    lattn_ctx_init(&ctx);
    ctx.n_threads = 2;
    lc.n_layers = L;
    lc.vocab = 256;
    tc = lattn_tf_config_small();
    tc.n_layers = L;                              /* the transformer at the same width: GQA 24 / 12 heads of 128, */
    tc.D = lc.D;                                  /* 12 KiB of KV per token and layer (a 24-layer model at 8,192 */
    tc.H = 24;                                    /* tokens: 82 x the Laplace model's 29.5 MB state) */
    tc.H_kv = 12;
    tc.K = 128;
    tc.ffn = lc.ffn;
    tc.vocab = lc.vocab;
    if (lattn_laplace_init(&ctx, &lm, &lc, 1) != LATTN_OK || lattn_tf_init(&ctx, &tm, &tc, 2) != LATTN_OK) {
        printf("serve: %s\n", lattn_ctx_error(&ctx));
        return;
    }
    wbytes[0] = 4 * lm.n_params;
    wbytes[1] = 4 * tm.n_params;
    lg = (float *)malloc((size_t)(64 * lc.vocab) * sizeof(float));
    for (b = 0; b < 64; b++) { slots[b] = b; tok[b] = (int32_t)(b * 37 % lc.vocab); }
    for (k = 0; k < 2; k++) {                     /* k = 0: Laplace, 1: transformer (context 512) */
        lattn_pool p;
        srv_u u;
        const char *name = k ? "serve_tf_step" : "serve_laplace_step";
        lattn_status st = k ? lattn_pool_init_tf(&ctx, &p, &tm, maxb, ctx_len + 8 * runs + 16) : lattn_pool_init_laplace(&ctx, &p, &lm, maxb);
        if (st != LATTN_OK) { printf("serve: %s\n", lattn_ctx_error(&ctx)); continue; }
        srv_fill(&p, ctx_len, &r);
        u.ctx = &ctx; u.p = &p; u.slots = slots; u.tok = tok; u.lg = lg;
        for (b = 1; b <= maxb; b *= 2) {
            double ms, unused, P = (double)(k ? tm.n_params : lm.n_params);
            char shape[64];
            u.n = b;
            time2(srv_step_run, &u, NULL, NULL, (int)runs, &ms, &unused);
            if (b == 1) ms1[k] = ms;
            g_bytes = (double)wbytes[k] + (double)b * 4.0 * (k ? (double)(2 * L * ctx_len * tc.H_kv * tc.K) : 2.0 * (double)p.slot_floats);
            snprintf(shape, sizeof shape, "3B width, %lld layers, batch %lld", (long long)L, (long long)b);
            row(name, shape, 2, ms, (double)b, 2.0 * P * (double)b, b > 1 ? "batch 1 (tokens/s)" : NULL, (double)b * ms1[k]);
        }
        lattn_pool_free(&ctx, &p);
    }
    for (k = 0; k < 2; k++) {                     /* the per-token cost after a prompt of 2,048 against 8,192 tokens */
        const int64_t cl[2] = { 2048, g_quick ? 4096 : 8192 };
        double ms[2], unused;
        int c;
        for (c = 0; c < 2; c++) {
            lattn_pool p;
            srv_u u;
            char shape[64];
            lattn_status st = k ? lattn_pool_init_tf(&ctx, &p, &tm, 1, cl[c] + 8 * runs + 16) : lattn_pool_init_laplace(&ctx, &p, &lm, 1);
            if (st != LATTN_OK) { printf("serve: %s\n", lattn_ctx_error(&ctx)); ms[c] = NAN; continue; }
            srv_fill(&p, cl[c], &r);
            u.ctx = &ctx; u.p = &p; u.slots = slots; u.tok = tok; u.lg = lg; u.n = 1;
            time2(srv_step_run, &u, NULL, NULL, (int)runs + 2, &ms[c], &unused);
            snprintf(shape, sizeof shape, "3B width, %lld layers, prompt %lld", (long long)L, (long long)cl[c]);
            row(k ? "serve_tf_prompt" : "serve_laplace_prompt", shape, 2, ms[c], 1, 0, c ? "prompt 2048" : NULL, ms[0]);
            lattn_pool_free(&ctx, &p);
        }
        printf("%-22s per-token cost at prompt %lld / 2048: %+.1f %%\n", k ? "serve_tf_prompt" : "serve_laplace_prompt",
               (long long)cl[1], 100.0 * (ms[1] / ms[0] - 1.0));
    }
    {   /* memory per sequence at the full 24 layers: the Laplace state against the same-width KV cache at 8,192 tokens */
        lattn_laplace_config full = lattn_laplace_config_3b();
        size_t sf = 0;
        double kv = 24.0 * 2.0 * 8192.0 * (double)(tc.H_kv * tc.K) * 4.0;
        lattn_laplace_state_floats(&full, &sf);
        printf("serve memory per sequence (24 layers, float32): Laplace state %.0f bytes; transformer KV at 8192 tokens %.0f bytes = %.1f x\n",
               4.0 * (double)sf, kv, kv / (4.0 * (double)sf));
    }
    free(lg);
    lattn_laplace_free(&ctx, &lm);
    lattn_tf_free(&ctx, &tm);
}

/* ---- scaling: the four chunk kernels of the many-core floors at B = 1, each thread count ---------- */
static int g_threads[16] = { 1, 2 }, g_nthreads = 2, g_threads_given;
static void peak_team_run(void *p) {        /* the FMA chains on every thread of the team at once */
    peak_u *u = (peak_u *)p;
    int n = (int)u->sink, t;
    LATTN__PRAGMA(omp parallel for schedule(static, 1) num_threads(n))
    for (t = 0; t < n; t++) {
        peak_u v = { u->iters, 0 };
        peak_run(&v);
        if (v.sink == 12345.0f) printf(" ");      /* keeps the work */
    }
}
/* Kinds 0-3: the forwards of the floors (Simple GLA with fixed decays, GLA, GDN, causal attention);
   4-7: their backwards at C = 64 on the same split (reading the forward's states, Ξ and log-sum-exp). */
static void bench_scaling(void) {
    static const char *names[8] = { "scale_simple_gla", "scale_gla", "scale_gdn", "scale_sdpa_causal",
                                    "scale_simple_gla_bwd", "scale_gla_bwd", "scale_gdn_bwd", "scale_sdpa_causal_bwd" };
    const int64_t T = 2048, H = 16;
    double peak_ms[16];                          /* the team peak's time at each count (same work per thread) */
    int kind, ti;
    for (ti = 0; ti < g_nthreads; ti++) {        /* the peak per core with t cores busy: SMT and clocks show here */
        peak_u u = { g_quick ? 2000000 : 20000000, 0 };
        double ms;
        u.sink = (float)g_threads[ti];
        time2(peak_team_run, &u, NULL, NULL, 5, &ms, NULL);
        peak_ms[ti] = ms;
        row("scale_peak", "fp32 FMA, 12 chains per thread", g_threads[ti], ms, 0, 2.0 * 12 * LATTN__VW * (double)u.iters * g_threads[ti], NULL, 0);
    }
    for (kind = 0; kind < 8; kind++) {
        const int family = kind % 4, bwd = kind >= 4;
        const int64_t K = family < 2 ? 96 : 128, V = family < 2 ? 192 : 128;
        const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V);
        lattn_ctx ctx;
        bw_u lu;
        gbw_u gu;
        attn_bw_u au;
        double ms1 = 0, ms, fl;
        bench_fn fn;
        void *arg;
        char shape[64];
        if (!wanted(names[kind])) continue;
        lattn_ctx_init(&ctx);
        ctx.keep_workspace = 1;                  /* later calls fault nothing in */
        memset(&lu, 0, sizeof lu);
        memset(&gu, 0, sizeof gu);
        memset(&au, 0, sizeof au);
        g_chunk = family == 3 ? 0 : bwd ? 64 : 32;
        if (family < 2) {
            lu.f.ctx = &ctx;
            la_alloc(&lu.f, T, H, K, V, family, 11);
            fl = 4.0 * (double)(T * H * K * V);
            fn = bwd ? bw_bwd_run : la_chunk_run;
            arg = bwd ? (void *)&lu : (void *)&lu.f;
            if (bwd) {
                lu.states = (float *)malloc(sizeof(float) * (size_t)(H * (T / 64 + 1) * K * V));
                lu.f.a.states = lu.states;       /* as bw_bwd_run reads them */
                la_chunk_run(&lu.f);             /* the chunk-start states the backward reads */
                lu.g.dout = lu.f.a.v;
                lu.g.dq = (float *)malloc(sizeof(float) * nq);
                lu.g.dk = (float *)malloc(sizeof(float) * nq);
                lu.g.dv = (float *)malloc(sizeof(float) * nv);
                if (family == 1) lu.g.dgk = (float *)malloc(sizeof(float) * nq);
            }
        } else if (family == 2) {
            gu.f.ctx = &ctx;
            gdr_alloc(&gu.f, T, H, K, V, 13);
            fl = 6.0 * (double)(T * H * K * V);
            fn = bwd ? gbw_bwd_run : gdr_chunk_run;
            arg = bwd ? (void *)&gu : (void *)&gu.f;
            if (bwd) {
                gu.f.a.chunk = 64;
                gu.xi = (float *)malloc(sizeof(float) * nv);
                gu.states = (float *)malloc(sizeof(float) * (size_t)(H * (T / 64 + 1) * K * V));
                gbw_fwds_run(&gu);               /* the Ξ and the chunk-start states the backward reads */
                gu.g.dout = gu.f.a.v;
                gu.g.dq = (float *)malloc(sizeof(float) * nq);
                gu.g.dk = (float *)malloc(sizeof(float) * nq);
                gu.g.dv = (float *)malloc(sizeof(float) * nv);
                gu.g.dbeta = (float *)malloc(sizeof(float) * (size_t)(T * H));
                gu.g.dg = (float *)malloc(sizeof(float) * (size_t)(T * H));
            }
        } else {
            lattn_rng r = lattn_rng_seed(17);
            au.f.ctx = &ctx;
            au.f.a.B = 1; au.f.a.T = T; au.f.a.H = H; au.f.a.K = au.f.a.V = K;
            au.f.a.q = (float *)malloc(nq * 4); au.f.a.k = (float *)malloc(nq * 4); au.f.a.v = (float *)malloc(nq * 4); au.f.a.o = (float *)malloc(nq * 4);
            au.f.a.lse = (float *)malloc((size_t)(T * H) * 4);
            lattn_rng_fill_normal(&r, (float *)au.f.a.q, nq, 0, 1); lattn_rng_fill_normal(&r, (float *)au.f.a.k, nq, 0, 1);
            lattn_rng_fill_normal(&r, (float *)au.f.a.v, nq, 0, 1);
            fl = 4.0 * (double)K * (double)H * (double)T * (double)(T + 1) / 2.0;
            fn = bwd ? attn_bwd_run : attn_chunk_run;
            arg = bwd ? (void *)&au : (void *)&au.f;
            if (bwd) {
                attn_chunk_run(&au.f);           /* the log-sum-exp the backward reads */
                au.g.dout = au.f.a.v;
                au.g.dq = (float *)malloc(nq * 4); au.g.dk = (float *)malloc(nq * 4); au.g.dv = (float *)malloc(nq * 4);
            }
        }
        if (bwd) fl *= family == 2 || family == 3 ? 2.5 : 2.0;    /* the backward rows' FLOP convention */
        if (family == 3) snprintf(shape, sizeof shape, "B=1,T=2048,H=16,D=128");
        else snprintf(shape, sizeof shape, "B=1,T=2048,H=16,K=%lld,V=%lld,C=%d", (long long)K, (long long)V, g_chunk);
        for (ti = 0; ti < g_nthreads; ti++) {
            ctx.n_threads = g_threads[ti];
            time2(fn, arg, NULL, NULL, g_quick ? 3 : 7, &ms, NULL);
            if (ti == 0) ms1 = ms * g_threads[0];          /* the first count is 1 unless told otherwise */
            g_eff = ms1 / ((double)g_threads[ti] * ms);
            g_eff_hw = g_eff * peak_ms[ti] / peak_ms[0];   /* against the cores' measured FMA capacity */
            printf("%-22s efficiency %.1f %% at %d threads (%.1f %% of what the FMA peak at %d threads allows)\n", "",
                   100.0 * g_eff, g_threads[ti], 100.0 * g_eff_hw, g_threads[ti]);
            row(names[kind], shape, g_threads[ti], ms, (double)T, fl, NULL, 0);
        }
        g_chunk = 0;
        lattn_ctx_free(&ctx);
        free(lu.states); free(lu.g.dq); free(lu.g.dk); free(lu.g.dv); free(lu.g.dgk);
        if (family < 2) { lu.f.a.states = NULL; la_release(&lu.f); }
        free(gu.g.dq); free(gu.g.dk); free(gu.g.dv); free(gu.g.dbeta); free(gu.g.dg); free(gu.xi);
        if (family == 2) gdr_release(&gu.f);
        free((void *)au.f.a.q); free((void *)au.f.a.k); free((void *)au.f.a.v); free(au.f.a.o); free(au.f.a.lse);
        free(au.g.dq); free(au.g.dk); free(au.g.dv);
    }
}

int main(int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) g_quick = 1;
        else if (strncmp(argv[i], "--chunk=", 8) == 0) g_chunk = atoi(argv[i] + 8);
        else if (strncmp(argv[i], "--threads=", 10) == 0) {
            const char *p = argv[i] + 10;
            g_nthreads = 0; g_threads_given = 1;
            while (*p && g_nthreads < 16) {
                g_threads[g_nthreads] = atoi(p);
                if (g_threads[g_nthreads] < 1) { fprintf(stderr, "bench: --threads=LIST takes positive counts\n"); return 2; }
                g_nthreads++;
                while (*p && *p != ',') p++;
                if (*p == ',') p++;
            }
        }
        else g_filter = argv[i];
    }
    {   /* only a full run replaces the recorded rows; a partial one writes its rows under build/ */
        const char *path = g_filter || g_quick || g_chunk || g_threads_given ? "build/bench_partial.jsonl" : "bench/last_run.jsonl";
        g_out = fopen(path, "w");
        if (!g_out) { fprintf(stderr, "cannot write %s (run from the repository root)\n", path); return 1; }
    }
    printf("%s\n", lattn_build_info());
    printf("%-22s %-32s %2s %10s %12s %8s %7s %-18s %7s %s\n", "name", "shape", "th", "ms", "tokens/s", "GFLOP/s",
           "%peak", "baseline", "speedup", "GB/s");
    bench_peak();
    if (g_threads_given) {                       /* the scaling rows alone */
        bench_scaling();
        fclose(g_out);
        return 0;
    }
    bench_gemm();
    bench_gemm_proj();
    bench_tiler();
    bench_la();
    bench_gla();
    bench_backward();
    bench_gdn();
    bench_gdn_backward();
    bench_prism();
    bench_ttt();
    bench_laplace();
    bench_conv();
    bench_tcn();
    bench_scan();
    bench_ssm();
    bench_s4d();
    bench_adamw();
    bench_net();
    bench_muon();
    bench_muon_sharded();
    bench_attn();
    bench_attn_backward();
    bench_sps();
    bench_serve();
    bench_scaling();
    fclose(g_out);
    return 0;
}
