/* lattn test runner: `make test` (all checks) and `make test-quick` (same checks, smaller shapes).
   Usage: run_tests [--quick] [NAME ...]   run every named test, or the NAMEs given
          run_tests --list                  print the names (rng vec gemm ... verbs models hardening split)
   Environment: LATTN_TEST_SEED=n re-runs every randomised check with another seed.
   Ends with exactly "N passed, M failed"; exit status 1 when anything failed. */
#define _POSIX_C_SOURCE 200112L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "../examples/comm_threads.h"
#include "../examples/svg_plot.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static int g_pass, g_fail, g_quick;
static uint64_t g_seed = 20261129;

#define CHECK(cond, ...) do {                                                               \
        if (cond) g_pass++;                                                                 \
        else {                                                                              \
            g_fail++;                                                                       \
            printf("FAIL %s:%d (seed %llu): ", __FILE__, __LINE__, (unsigned long long)g_seed); \
            printf(__VA_ARGS__);                                                            \
            printf("\n");                                                                   \
        }                                                                                   \
    } while (0)

/* ---------------------------------------------------------------------------------------------- */
/* helpers                                                                                        */
/* ---------------------------------------------------------------------------------------------- */
static float *fnew(size_t n) {                 /* NaN-poisoned buffer */
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    size_t i;
    for (i = 0; i < n; i++) p[i] = NAN;
    return p;
}
static float *frand(lattn_rng *r, size_t n, float lo, float hi) {
    float *p = fnew(n);
    lattn_rng_fill_uniform(r, p, n, lo, hi);
    return p;
}
static float *fnormal(lattn_rng *r, size_t n) {
    float *p = fnew(n);
    lattn_rng_fill_normal(r, p, n, 0.0f, 1.0f);
    return p;
}
static void poison(float *p, size_t n) { size_t i; for (i = 0; i < n; i++) p[i] = NAN; }
/* The models take their chunk from the context's profile: the cpu profile with chunk C. */
static void use_chunk(lattn_ctx *ctx, lattn_dev_profile *p, int C) {
    *p = *lattn_profile_cpu();
    p->default_chunk = C;
    ctx->profile = p;
}
/* The root mean square of x. */
static double rms_of(const float *x, size_t n) {
    double s = 0;
    size_t i;
    for (i = 0; i < n; i++) s += (double)x[i] * x[i];
    return n > 0 ? sqrt(s / (double)n) : 0.0;
}
/* The RMS of x - y over the larger of y's RMS and fl (a scale the caller knows the terms of y to have):
   a sum whose terms cancel to far below their size carries their float32 rounding. NaN: HUGE_VAL. */
static double rel_rms_floor(const float *x, const float *y, size_t n, double fl) {
    double num = 0, den = 0, d;
    size_t i;
    for (i = 0; i < n; i++) {
        if (x[i] != x[i] || y[i] != y[i]) return HUGE_VAL;
        num += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
        den += (double)y[i] * y[i];
    }
    if (n == 0) return 0;
    d = fmax(sqrt(den / (double)n), fl);
    if (d == 0) return num == 0 ? 0 : HUGE_VAL;
    return sqrt(num / (double)n) / d;
}
/* Relative RMS of two float arrays (NaN anywhere: HUGE_VAL). */
static double rel_rms(const float *x, const float *y, size_t n) { return rel_rms_floor(x, y, n, 0.0); }
static int same_bits(const float *x, const float *y, size_t n) { return memcmp(x, y, n * sizeof(float)) == 0; }
/* A tensor-name prefix of LATTN_NAME_MAX characters: one too long for any name built on it. */
static const char *long_prefix(void) {
    static char p[LATTN_NAME_MAX + 1];
    memset(p, 'p', LATTN_NAME_MAX);
    p[LATTN_NAME_MAX] = '\0';
    return p;
}
static float *fdup(const float *x, size_t n) { float *p = fnew(n); memcpy(p, x, n * sizeof(float)); return p; }

/* A counting allocator: fails the k-th allocation (k >= 1) and tracks what is outstanding. */
typedef struct { long count, fail_at, live; } counting_alloc;
static void *ta_alloc(void *u, size_t n) {
    counting_alloc *a = (counting_alloc *)u;
    a->count++;
    if (a->fail_at > 0 && a->count == a->fail_at) return NULL;
    a->live++;
    return malloc(n);
}
static void ta_free(void *u, void *p) { counting_alloc *a = (counting_alloc *)u; a->live--; free(p); }
/* Runs `run` with its k-th allocation failing, k = 1, 2, ... until a run makes fewer than k
   allocations. Every failing run must return LATTN_E_NOMEM and leave nothing allocated; `run`
   reports other damage (a partial write) by returning another status. Returns the bad runs. */
typedef lattn_status (*alloc_run_fn)(lattn_ctx *ctx, void *user);
static int fail_each_alloc(alloc_run_fn run, void *user, int kmax, int *failing) {
    int k, bad = 0;
    *failing = 0;
    for (k = 1; k < kmax; k++) {
        counting_alloc ta;
        lattn_ctx c2;
        lattn_status st;
        lattn_ctx_init(&c2);
        memset(&ta, 0, sizeof ta); ta.fail_at = k;
        c2.allocator.alloc = ta_alloc; c2.allocator.free = ta_free; c2.allocator.user = &ta;
        st = run(&c2, user);
        if (ta.live != 0) bad++;
        if (ta.count < k) break;
        ++*failing;
        if (st != LATTN_E_NOMEM) bad++;
    }
    return bad;
}

/* ---------------------------------------------------------------------------------------------- */
/* rng                                                                                            */
/* ---------------------------------------------------------------------------------------------- */
static void test_rng(void) {
    /* known values, computed by the Python function in the header's >>rng comment */
    static const uint32_t uni[4] = { 0x3f3dd732u, 0x3e23bf8cu, 0x3e8ea4ceu, 0x3eb039c2u };
    static const uint32_t nrm[4] = { 0x3f61db12u, 0xbee6d5c2u, 0x3e40df7bu, 0x3e60db31u };
    float u[4], n[4];
    lattn_rng r = lattn_rng_seed(0);
    int i, ok = 1, okn = 1;
    CHECK(lattn_rng_next(&r) == 0xe220a8397b1dcdafull, "splitmix64 first output of seed 0");
    r = lattn_rng_seed(42); lattn_rng_fill_uniform(&r, u, 4, 0.0f, 1.0f);
    r = lattn_rng_seed(42); lattn_rng_fill_normal(&r, n, 4, 0.0f, 1.0f);
    for (i = 0; i < 4; i++) {
        uint32_t bu, bn;
        memcpy(&bu, &u[i], 4); memcpy(&bn, &n[i], 4);
        ok &= bu == uni[i]; okn &= bn == nrm[i];
    }
    CHECK(ok, "uniform known values of seed 42");
    CHECK(okn, "normal known values of seed 42");
    {   /* u = 0 is safe: the normal takes log(1 - u) */
        double mean = 0, var = 0; int k, m = 20000;
        r = lattn_rng_seed(g_seed);
        for (k = 0; k < m; k++) { double x = lattn_rng_normal_d(&r); mean += x; var += x * x; }
        mean /= m; var = var / m - mean * mean;
        CHECK(fabs(mean) < 0.05 && fabs(var - 1) < 0.05, "normal moments mean %.3f var %.3f", mean, var);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* vec                                                                                            */
/* ---------------------------------------------------------------------------------------------- */
static double ulp_err(float got, double want) {
    double u;
    if (isnan(want)) return isnan(got) ? 0 : 1e9;
    if (isinf(want)) return (isinf(got) && (got > 0) == (want > 0)) ? 0 : 1e9;
    if (want == 0) return got == 0 ? 0 : 1e9;
    u = ldexp(1.0, ilogb(want) - 23);
    if (fabs(want) < FLT_MIN) u = ldexp(1.0, -149);
    return fabs((double)got - want) / u;
}
static double d_sigmoid(double x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }
static double d_softplus(double x) { return (x > 0 ? x : 0) + log1p(exp(-fabs(x))); }

static void test_vec(void) {
    static const size_t lens[] = { 1, 3, 15, 17, 33, 1000 };
    lattn_rng r = lattn_rng_seed(g_seed);
    size_t li;
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li], i;
        float *x = fnormal(&r, n), *y = fnormal(&r, n), *y2 = fdup(y, n);
        double dot = 0, sum = 0, amax = 0, mx = -HUGE_VAL, e1 = 0, e2 = 0;
        for (i = 0; i < n; i++) { dot += (double)x[i] * y[i]; sum += x[i]; amax += fabs((double)x[i] * y[i]); mx = x[i] > mx ? x[i] : mx; }
        CHECK(fabs(lattn_vec_dot(n, x, y) - dot) <= 1e-6 * (amax + 1), "dot n=%zu", n);
        CHECK(fabs(lattn_vec_sum(n, x) - sum) <= 1e-6 * (double)n, "sum n=%zu", n);
        CHECK(lattn_vec_max(n, x) == (float)mx, "max n=%zu", n);
        lattn_vec_axpy(n, 0.75f, x, y2);
        for (i = 0; i < n; i++) e1 = fmax(e1, fabs(y2[i] - (0.75 * x[i] + y[i])));
        CHECK(e1 <= 1e-6 * 8, "axpy n=%zu err %g", n, e1);
        memcpy(y2, x, n * sizeof(float));
        lattn_vec_scale(n, -3.0f, y2);
        for (i = 0; i < n; i++) { float want = -3.0f * x[i]; e2 = fmax(e2, fabs(y2[i] - want)); }  /* no FMA contraction */
        CHECK(e2 == 0, "scale n=%zu", n);
        free(x); free(y); free(y2);
    }
    {   /* NaN in max */
        float v[5] = { 1, 2, NAN, 4, 5 };
        CHECK(isnan(lattn_vec_max(5, v)), "max propagates NaN");
        CHECK(lattn_vec_max(0, v) == -HUGE_VALF, "max of nothing is -inf");
    }
    {   /* transcendentals against libm in double: random values over wide ranges + specials */
        enum { N = 20000 };
        static float x[N + 16], y[N + 16];
        static const float specials[] = { 0.0f, -0.0f, 1.0f, -1.0f, 88.0f, 88.7f, 89.0f, -87.0f, -87.3f, -88.0f,
                                          -104.0f, 1e-30f, 1e-40f, FLT_MIN, FLT_MAX, -FLT_MAX, 20.0f, -20.0f,
                                          1e-7f, -1e-7f, HUGE_VALF, -HUGE_VALF, NAN, 0.5f, 2.0f };
        const int nsp = (int)(sizeof specials / sizeof specials[0]);
        double worst[5] = { 0, 0, 0, 0, 0 };
        int i, f;
        for (f = 0; f < 5; f++) {
            for (i = 0; i < N; i++) {
                float u = lattn_rng_uniform(&r);
                if (i < nsp) x[i] = specials[i];
                else if (f == 1) x[i] = (float)exp((u - 0.5) * 170.0);        /* log: positive, wide */
                else x[i] = (u - 0.5f) * (f == 0 ? 200.0f : 120.0f);
            }
            switch (f) {
            case 0: lattn_vec_exp(N, x, y); break;
            case 1: lattn_vec_log(N, x, y); break;
            case 2: lattn_vec_sigmoid(N, x, y); break;
            case 3: lattn_vec_softplus(N, x, y); break;
            default: lattn_vec_silu(N, x, y); break;
            }
            for (i = 0; i < N; i++) {
                double w, e;
                switch (f) {
                case 0: w = exp((double)x[i]); if (x[i] < -87.33654f && x[i] == x[i]) { if (y[i] != 0) e = 1e9; else e = 0; goto have; } break;
                case 1: w = log((double)x[i]); break;
                case 2: w = d_sigmoid(x[i]); break;
                case 3: w = d_softplus(x[i]); break;
                default: w = x[i] * d_sigmoid(x[i]); break;
                }
                if (w != 0 && fabs(w) < FLT_MIN) { e = fabs(y[i] - w) < 1e-37 ? 0 : 1e9; goto have; }
                if (f >= 3 && fabs(w) < 1e-30) { e = fabs(y[i] - w) < 1e-30 ? 0 : 1e9; goto have; }
                if (w > FLT_MAX) w = HUGE_VAL;
                if (w < -FLT_MAX) w = -HUGE_VAL;
                e = ulp_err(y[i], w);
            have:
                if (e > worst[f]) worst[f] = e;
                if (e > 8) { printf("  f=%d x=%.9g got %.9g want %.9g\n", f, x[i], y[i], w); break; }
            }
        }
        CHECK(worst[0] <= 2, "exp worst %.2f ulp", worst[0]);
        CHECK(worst[1] <= 2, "log worst %.2f ulp", worst[1]);
        CHECK(worst[2] <= 4, "sigmoid worst %.2f ulp", worst[2]);
        CHECK(worst[3] <= 4, "softplus worst %.2f ulp", worst[3]);
        CHECK(worst[4] <= 4, "silu worst %.2f ulp", worst[4]);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* gemm                                                                                           */
/* ---------------------------------------------------------------------------------------------- */
/* One lattn_sgemm call against a naive double loop: the worst error relative to Σ|a·b| + 1 (1e9 when
   an element it must not touch changed). */
static double gemm_case(lattn_ctx *ctx, lattn_rng *r, int M, int N, int K, int fl) {
    int lda = ((fl & 1) ? M : K) + 3, ldb = ((fl & 2) ? K : N) + 1, ldc = N + 2, i, j, k;
    float *A = fnormal(r, (size_t)((fl & 1) ? K : M) * lda), *B = fnormal(r, (size_t)((fl & 2) ? N : K) * ldb);
    float *C = fnormal(r, (size_t)M * ldc), *C0 = fdup(C, (size_t)M * ldc);
    double err = 0;
    lattn_sgemm(ctx, fl, M, N, K, A, lda, B, ldb, C, ldc);
    for (i = 0; i < M; i++)
        for (j = 0; j < N + 2; j++) {
            double s = 0, want, sc = 0;
            if (j >= N || ((fl & 8) && j > i)) { if (!same_bits(&C[i * ldc + j], &C0[i * ldc + j], 1)) err = 1e9; continue; }
            for (k = 0; k < K; k++) {
                double av = (fl & 1) ? A[k * lda + i] : A[i * lda + k];
                double bv = (fl & 2) ? B[j * ldb + k] : B[k * ldb + j];
                s += av * bv; sc += fabs(av * bv);
            }
            want = s + ((fl & 4) ? C0[i * ldc + j] : 0);
            err = fmax(err, fabs(C[i * ldc + j] - want) / (sc + 1));
        }
    free(A); free(B); free(C); free(C0);
    return err;
}

static void test_gemm(void) {
    static const int sz[] = { 1, 7, 17, 64, 129, 200 };
    /* past one packed block in N and K (several column blocks, several K blocks, partial panels,
       K not a multiple of the vector width), and Aᵀ with rows 1103 floats apart (its strips are
       copied): (M, N, K) */
    static const int big[][3] = { { 9, 300, 530 }, { 70, 531, 300 }, { 1100, 40, 300 } };
    const int nsz = g_quick ? 4 : 6;
    lattn_rng r = lattn_rng_seed(g_seed);
    lattn_ctx ctx;
    int a, b, c, fl, bad = 0, cases = 0;
    lattn_ctx_init(&ctx);
    for (a = 0; a < nsz; a++)
        for (b = 0; b < nsz; b++)
            for (c = 0; c < nsz; c++)
                for (fl = 0; fl < 16; fl++) {
                    double err;
                    if ((a + b + c + fl) % 3 && !(sz[a] == 200 || sz[b] == 200 || sz[c] == 200)) continue;
                    cases++;
                    err = gemm_case(&ctx, &r, sz[a], sz[b], sz[c], fl);
                    if (err > 2e-6) { bad++; printf("  gemm M=%d N=%d K=%d flags=%d err %g\n", sz[a], sz[b], sz[c], fl, err); }
                }
    for (a = 0; a < 3; a++)
        for (fl = 0; fl < 8; fl++) {
            double err = gemm_case(&ctx, &r, big[a][0], big[a][1], big[a][2], fl);
            cases++;
            if (err > 2e-6) { bad++; printf("  gemm M=%d N=%d K=%d flags=%d err %g\n", big[a][0], big[a][1], big[a][2], fl, err); }
        }
    CHECK(bad == 0 && cases > 100, "sgemm variants against a naive loop (%d cases, %d bad)", cases, bad);
    {   /* A Bᵀ made as (B Aᵀ)ᵀ where Bᵀ is the wide operand: the same bits as the direct product, in
           the regime that swaps (m, n, k) = (64, 256, 512), partial blocks (33, 170, 300), and one
           that does not (64, 96, 192) */
        static const int64_t sh[3][3] = { { 64, 256, 512 }, { 33, 170, 300 }, { 64, 96, 192 } };
        int q, same = 1, swaps = 0;
        for (q = 0; q < 3; q++) {
            const int64_t m = sh[q][0], n = sh[q][1], k = sh[q][2];
            float *A = fnew((size_t)(m * (k + 3))), *B = fnew((size_t)(n * k)), *c1 = fnew((size_t)(m * n)), *c2 = fnew((size_t)(m * n));
            float *tmp = fnew((size_t)(m * n)), *ws = fnew(lattn__gemm_ws(LATTN__MAX(m, n), k));
            lattn_rng_fill_normal(&r, A, (size_t)(m * (k + 3)), 0, 1);
            lattn_rng_fill_normal(&r, B, (size_t)(n * k), 0, 1);
            lattn__sgemm(LATTN_GEMM_TRANS_B, m, n, k, A, k + 3, B, k, c1, n, ws);
            lattn__sgemm_abt(m, n, k, A, k + 3, B, k, c2, tmp, ws);
            same &= memcmp(c1, c2, sizeof(float) * (size_t)(m * n)) == 0;
            swaps += n * k > m * (k + n);
            free(A); free(B); free(c1); free(c2); free(tmp); free(ws);
        }
        CHECK(same && swaps == 2, "A Bᵀ through (B Aᵀ)ᵀ: the same bits as the direct product (%d of 3 shapes swap)", swaps);
    }
    CHECK(lattn_sgemm(&ctx, 0, -1, 2, 2, NULL, 2, NULL, 2, NULL, 2) == LATTN_E_SHAPE, "sgemm negative size");
    CHECK(lattn_sgemm(&ctx, 0, 2, 2, 2, NULL, 2, NULL, 2, NULL, 2) == LATTN_E_NULL, "sgemm NULL");
    CHECK(lattn_sgemm(&ctx, 64, 2, 2, 2, NULL, 2, NULL, 2, NULL, 2) == LATTN_E_DOMAIN, "sgemm bad flags");
    {
        float x[4] = { 0 };
        CHECK(lattn_sgemm(&ctx, 0, 2, 2, 2, x, 1, x, 2, x, 2) == LATTN_E_SHAPE, "sgemm lda too small");
        CHECK(lattn_sgemm(&ctx, 0, INT64_MAX / 2, 2, 2, x, 2, x, 2, x, 2) == LATTN_E_OVERFLOW, "sgemm overflowing size");
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* tiler                                                                                          */
/* ---------------------------------------------------------------------------------------------- */
static void test_tiler(void) {
    lattn_ctx ctx;
    lattn_tiler *t = NULL;
    lattn_tile a, b, c, d, ps[9];
    const lattn_tiler_stats *st;
    int i;
    lattn_ctx_init(&ctx);
    CHECK(lattn_tiler_create(&ctx, lattn_profile_trn2(), 1 << 20, &t) == LATTN_OK, "tiler create");
    /* rules */
    CHECK(lattn_sbuf_alloc(t, &a, 129, 8) == LATTN_E_TILE_PARTITION, "129 partitions");
    lattn_tiler_destroy(&ctx, t); lattn_tiler_create(&ctx, lattn_profile_trn2(), 1 << 20, &t);
    lattn_sbuf_alloc(t, &a, 128, 128); lattn_sbuf_alloc(t, &b, 128, 513); lattn_psum_alloc(t, &c, 128, 512);
    CHECK(lattn_matmul(t, &c, &a, &b, 0) == LATTN_E_TILE_NMAX, "513-wide moving tile");
    CHECK(lattn_psum_alloc(t, &d, 128, 513) == LATTN_E_BANK_OVERFLOW, "PSUM tile wider than a bank");
    lattn_tiler_destroy(&ctx, t); lattn_tiler_create(&ctx, lattn_profile_trn2(), 1 << 20, &t);
    for (i = 0; i < 8; i++) lattn_psum_alloc(t, &ps[i], 128, 512);
    CHECK(lattn_psum_alloc(t, &ps[8], 128, 16) == LATTN_E_PSUM_FULL, "ninth live PSUM bank");
    lattn_tile_release(t, &ps[3]);
    CHECK(lattn_psum_alloc(t, &ps[8], 128, 16) == LATTN_OK && ps[8].off == 3, "a freed bank is reused");
    lattn_tiler_destroy(&ctx, t); lattn_tiler_create(&ctx, lattn_profile_trn2(), 128 * 57344 + 64, &t);
    CHECK(lattn_sbuf_alloc(t, &a, 128, 229376 / 4) == LATTN_OK, "a tile filling SBUF fits");
    CHECK(lattn_sbuf_alloc(t, &b, 1, 16) == LATTN_E_SBUF_FULL, "SBUF overflow");
    {
        const char *msg;
        CHECK(lattn_tiler_error(t, &msg) == LATTN_E_SBUF_FULL && strstr(msg, "capacity"), "first error kept: %s", msg);
    }
    lattn_tiler_destroy(&ctx, t); lattn_tiler_create(&ctx, lattn_profile_trn2(), 1 << 20, &t);
    lattn_sbuf_alloc(t, &a, 128, 64); lattn_psum_alloc(t, &c, 64, 64);
    b = lattn_tile_view(&a, 16, 48, 0, 64);
    CHECK(lattn_tile_copy(t, &c, &b) == LATTN_E_TILE_PARTITION, "start partition 16 with 48 partitions");
    b = lattn_tile_view(&a, 64, 64, 0, 64);
    CHECK(lattn_tile_copy(t, &c, &b) == LATTN_OK, "start partition 64 with 64 partitions");
    CHECK(lattn_matmul(t, &c, &c, &c, 0) == LATTN_E_TILE_SPACE, "matmul operand in PSUM");
    CHECK(lattn_dma_load(t, &c, a.data, 64) == LATTN_E_TILE_SPACE, "DMA into PSUM");
    lattn_tiler_destroy(&ctx, t);
    {   /* LATTN_MM_CAUSAL: an upper-triangular stationary gives the full product; a full one does not */
        lattn_rng r = lattn_rng_seed(g_seed + 3);
        int k, m, n, K = 45, M = 45, N = 70, tri;
        float *want = fnew((size_t)(M * N));
        lattn_tiler_create(&ctx, lattn_profile_cpu(), 1 << 20, &t);
        lattn_sbuf_alloc(t, &a, K, M); lattn_sbuf_alloc(t, &b, K, N); lattn_psum_alloc(t, &c, M, N);
        for (tri = 1; tri >= 0; tri--) {
            double err = 0;
            for (k = 0; k < K; k++)
                for (m = 0; m < M; m++) a.data[k * a.ld + m] = (tri && k > m) ? 0.0f : (float)lattn_rng_normal_d(&r);
            for (k = 0; k < K; k++) for (n = 0; n < N; n++) b.data[k * b.ld + n] = (float)lattn_rng_normal_d(&r);
            for (m = 0; m < M; m++)
                for (n = 0; n < N; n++) {
                    double acc = 0;
                    for (k = 0; k < K; k++) acc += (double)a.data[k * a.ld + m] * b.data[k * b.ld + n];
                    want[m * N + n] = (float)acc;
                }
            lattn_matmul(t, &c, &a, &b, LATTN_MM_CAUSAL);
            for (m = 0; m < M; m++) for (n = 0; n < N; n++) err = fmax(err, fabs(c.data[m * c.ld + n] - want[m * N + n]));
            if (tri) CHECK(err < 1e-4, "causal matmul of a triangular stationary = the product (%g)", err);
            else CHECK(err > 1e-2, "causal matmul skips the lower half (a full stationary differs: %g)", err);
        }
        free(want);
        lattn_tiler_destroy(&ctx, t);
    }
    {   /* transposes of every shape class: full register blocks, edges, odd sizes; exact */
        static const int shp[5][2] = { { 16, 16 }, { 45, 37 }, { 128, 96 }, { 7, 33 }, { 64, 128 } };
        int si, bad = 0;
        lattn_rng r = lattn_rng_seed(g_seed + 4);
        lattn_tiler_create(&ctx, lattn_profile_trn2(), 1 << 20, &t);
        for (si = 0; si < 5; si++) {
            int np = shp[si][0], nf = shp[si][1], p2, f2;
            lattn_sbuf_alloc(t, &a, np, nf); lattn_psum_alloc(t, &c, nf, np);
            for (p2 = 0; p2 < np; p2++) for (f2 = 0; f2 < nf; f2++) a.data[p2 * a.ld + f2] = (float)lattn_rng_normal_d(&r);
            lattn_transpose(t, &c, &a);
            for (p2 = 0; p2 < np; p2++) for (f2 = 0; f2 < nf; f2++) bad += c.data[f2 * c.ld + p2] != a.data[p2 * a.ld + f2];
            lattn_tile_release(t, &c); lattn_tile_release(t, &a);
        }
        CHECK(bad == 0, "transposes exact for 16x16, 45x37, 128x96, 7x33, 64x128 (%d wrong)", bad);
        lattn_tiler_destroy(&ctx, t);
    }
    {   /* transposes limited to 128 x 128 */
        lattn_tiler_create(&ctx, lattn_profile_trn2(), 1 << 20, &t);
        lattn_sbuf_alloc(t, &a, 8, 129); lattn_psum_alloc(t, &c, 129 > 128 ? 128 : 129, 8);
        CHECK(lattn_transpose(t, &c, &a) == LATTN_E_TILE_KMAX, "transpose of 8 x 129");
        lattn_tiler_destroy(&ctx, t);
    }
    /* matmul semantics and closed-form counters: R matmuls [K x M]ᵀ·[K x N] then one store */
    {
        const int K = 96, M = 128, N = 192, R = 3;
        lattn_rng r = lattn_rng_seed(g_seed);
        float *hs = fnormal(&r, (size_t)K * M), *hm = fnormal(&r, (size_t)K * N), *out = fnew((size_t)M * N);
        double err = 0;
        int p, f, k;
        lattn_tiler_create(&ctx, lattn_profile_trn2(), 1 << 20, &t);
        lattn_sbuf_alloc(t, &a, K, M); lattn_sbuf_alloc(t, &b, K, N); lattn_psum_alloc(t, &c, M, N); lattn_sbuf_alloc(t, &d, M, N);
        lattn_dma_load(t, &a, hs, M); lattn_dma_load(t, &b, hm, N);
        for (i = 0; i < R; i++) lattn_matmul(t, &c, &a, &b, i > 0);
        lattn_tile_copy(t, &d, &c);
        lattn_dma_store(t, out, N, &d);
        for (p = 0; p < M; p++)
            for (f = 0; f < N; f++) {
                double s = 0;
                for (k = 0; k < K; k++) s += (double)hs[k * M + p] * hm[k * N + f];
                double e = fabs(out[p * N + f] - R * s) / (R * 10.0);
                if (e > err) err = e;
            }
        CHECK(err < 1e-5, "matmul computes stationaryᵀ·moving (err %g)", err);
        st = lattn_tiler_get_stats(t);
        CHECK(st->matmuls == (uint64_t)R && st->macs == (uint64_t)R * K * M * N && st->psum_accum == (uint64_t)R - 1,
              "matmul counters");
        CHECK(st->dma_in_bytes == (uint64_t)4 * (K * M + K * N) && st->dma_out_bytes == (uint64_t)4 * M * N &&
              st->dma_buffers == (uint64_t)(2 * K + M), "DMA byte counters");
        CHECK(st->instructions == (uint64_t)(2 + R + 1 + 1) && st->vec_ops == 1, "instruction count %llu",
              (unsigned long long)st->instructions);
        CHECK(st->pe_cycles == (uint64_t)R * N * 4, "pe cycles");
        /* column allocator: 3 SBUF tiles of 128, 192, 192 fp32 -> 512 + 768 + 768 bytes per partition */
        CHECK(st->sbuf_peak_bytes_per_partition == 2048 && st->sbuf_peak_bytes_total == 2048 * 128 &&
              st->psum_peak_banks == 1, "SBUF and PSUM peaks (%llu)", (unsigned long long)st->sbuf_peak_bytes_per_partition);
        {
            char js[1024];
            size_t n = lattn_tiler_stats_json(st, lattn_profile_trn2(), js, sizeof js);
            CHECK(n > 0 && n < sizeof js && strstr(js, "\"matmuls\":3") && strstr(js, "\"profile\":\"trn2\""), "stats JSON");
        }
        lattn_tiler_destroy(&ctx, t);
        free(hs); free(hm); free(out);
    }
    /* vector engine ops on odd sizes */
    {
        float x[3 * 19], y[3 * 19], z[3 * 19], col[3] = { 2, 3, 4 };
        lattn_tile tx, ty, tc, tz;
        int ok = 1;
        lattn_tiler_create(&ctx, lattn_profile_cpu(), 4096, &t);
        lattn_sbuf_alloc(t, &tz, 3, 19);
        for (i = 0; i < 57; i++) { x[i] = (float)i - 20; y[i] = 0.5f * (float)i; }
        lattn_sbuf_alloc(t, &tx, 3, 19); lattn_sbuf_alloc(t, &ty, 3, 19); lattn_sbuf_alloc(t, &tc, 3, 1);
        lattn_dma_load(t, &tx, x, 19); lattn_dma_load(t, &ty, y, 19); lattn_dma_load(t, &tc, col, 1);
        lattn_tile_stt(t, &tz, &tx, &tc, 0, LATTN_TOP_SUB, &ty, LATTN_TOP_MUL);   /* (x - col) ⊙ y */
        lattn_dma_store(t, z, 19, &tz);
        for (i = 0; i < 57; i++) if (!(z[i] == ((float)i - 20 - col[i / 19]) * (0.5f * (float)i))) ok = 0;
        lattn_tile_stt(t, &tz, &tx, NULL, 3.0f, LATTN_TOP_MAX, &ty, LATTN_TOP_DIV);  /* max(x, 3) / y */
        lattn_dma_store(t, z, 19, &tz);
        for (i = 1; i < 57; i++) if (!(z[i] == fmaxf((float)i - 20, 3.0f) / (0.5f * (float)i))) ok = 0;
        lattn_tile_stt(t, &tx, &tx, &tc, 0, LATTN_TOP_MUL, &ty, LATTN_TOP_ADD);   /* x = x·col + y */
        lattn_dma_store(t, z, 19, &tx);
        for (i = 0; i < 57; i++) if (!(z[i] == ((float)i - 20) * col[i / 19] + 0.5f * (float)i)) ok = 0;
        lattn_tile_select_tri(t, &tx, &tx, 0, -1.0f);
        lattn_dma_store(t, z, 19, &tx);
        for (i = 0; i < 57; i++) if (!((i % 19 >= i / 19) ? z[i] == ((float)i - 20) * col[i / 19] + 0.5f * (float)i : z[i] == -1.0f)) ok = 0;
        lattn_tile_act(t, &ty, &ty, LATTN_ACT_EXP, -0.1f, 0.0f);
        lattn_dma_store(t, z, 19, &ty);
        for (i = 0; i < 57; i++) if (!(fabs(z[i] - exp(-0.05 * i)) < 1e-6)) ok = 0;
        lattn_tile_reduce(t, &tc, &ty, LATTN_TOP_ADD);
        lattn_dma_store(t, col, 1, &tc);
        if (!(fabs(col[0] - lattn_vec_sum(19, z)) < 1e-5)) ok = 0;
        CHECK(ok, "vector-engine ops (stt with its op pairs, affine_select, exp activation, reduce)");
        CHECK(lattn_tiler_get_stats(t)->gpsimd_ops == 1 && lattn_tiler_get_stats(t)->act_ops == 1, "engine counters");
        lattn_tiler_destroy(&ctx, t);
    }
    /* GPU profile: flat shared memory; the spec's example (bf16 counted as fp32 pairs here) */
    {
        lattn_tiler_create(&ctx, lattn_profile_h100(), 1 << 20, &t);
        CHECK(lattn_sbuf_alloc(t, &a, 256, 200) == LATTN_OK, "gpu tile of 256 rows");
        CHECK(lattn_sbuf_alloc(t, &b, 256, 32) == LATTN_E_SBUF_FULL, "gpu shared memory overflow");
        lattn_tiler_destroy(&ctx, t);
    }
    CHECK(lattn_profile_by_name("trn2") == lattn_profile_trn2() && lattn_profile_by_name("x") == NULL, "profile lookup");
}

/* ---------------------------------------------------------------------------------------------- */
/* conv                                                                                           */
/* ---------------------------------------------------------------------------------------------- */
static int64_t g_off[5];
static void make_offsets(int64_t T) {      /* 4 sequences, one empty */
    g_off[0] = 0; g_off[1] = T / 3; g_off[2] = T / 3; g_off[3] = T / 3 + T / 4; g_off[4] = T;
}

static void test_conv(void) {
    static const int64_t Ts[] = { 0, 1, 3, 63, 64, 65, 200 };
    lattn_rng r = lattn_rng_seed(g_seed);
    lattn_ctx ctx;
    int ti, variant;
    lattn_ctx_init(&ctx);
    for (variant = 0; variant < 4; variant++)
        for (ti = 0; ti < 7; ti++) {
            int64_t B = 3, T = Ts[ti], D = variant & 1 ? 37 : 16, W = variant & 2 ? 3 : 4, n = B;
            int var = variant == 3;                 /* variable lengths */
            lattn_shortconv_args a;
            float *x, *w, *bias, *h0, *y0, *y1, *y2, *ht0, *ht1, *ht2;
            double e1, e2;
            if (var) { B = 1; T = 3 * T; make_offsets(T); n = 4; }
            x = fnormal(&r, (size_t)(B * T * D)); w = fnormal(&r, (size_t)(D * W)); bias = fnormal(&r, (size_t)D);
            h0 = fnormal(&r, (size_t)(n * D * W));
            y0 = fnew((size_t)(B * T * D)); y1 = fnew((size_t)(B * T * D)); y2 = fnew((size_t)(B * T * D));
            ht0 = fnew((size_t)(n * D * W)); ht1 = fnew((size_t)(n * D * W)); ht2 = fnew((size_t)(n * D * W));
            memset(&a, 0, sizeof a);
            a.B = B; a.T = T; a.D = D; a.W = W; a.x = x; a.w = w; a.bias = variant ? bias : NULL; a.silu = variant >= 2;
            a.h0 = h0; a.offsets = var ? g_off : NULL; a.n_seqs = var ? 4 : 0;
            a.y = y0; a.ht = ht0; lattn_shortconv_ref(&ctx, &a);
            a.y = y1; a.ht = ht1;
            CHECK(lattn_shortconv_chunk(&ctx, &a) == LATTN_OK, "conv fast status");
            e1 = rel_rms(y1, y0, (size_t)(B * T * D)); e2 = rel_rms(ht1, ht0, (size_t)(n * D * W));
            CHECK(e1 <= 1e-5 && e2 <= 1e-6, "conv fast vs ref T=%lld D=%lld W=%lld v=%d: y %g ht %g", (long long)T, (long long)D, (long long)W, variant, e1, e2);
            a.y = y2; a.ht = ht2;          /* _step token by token from h0 equals the whole sequence */
            CHECK(lattn_shortconv_step(&ctx, &a) == LATTN_OK, "conv decode status");
            e1 = rel_rms(y2, y0, (size_t)(B * T * D)); e2 = rel_rms(ht2, ht0, (size_t)(n * D * W));
            CHECK(e1 <= 1e-5 && e2 == 0, "conv step x T vs ref T=%lld v=%d: y %g ht %g", (long long)T, variant, e1, e2);
            free(x); free(w); free(bias); free(h0); free(y0); free(y1); free(y2); free(ht0); free(ht1); free(ht2);
        }
    {   /* causality and NaN isolation; thread-count determinism */
        int64_t B = 3, T = 150, D = 40, W = 4, t0 = 77;
        float *x = fnormal(&r, (size_t)(B * T * D)), *w = fnormal(&r, (size_t)(D * W)), *y0 = fnew((size_t)(B * T * D)), *y1 = fnew((size_t)(B * T * D));
        lattn_shortconv_args a;
        int th, ok = 1, causal = 1;
        int64_t i;
        memset(&a, 0, sizeof a);
        a.B = B; a.T = T; a.D = D; a.W = W; a.x = x; a.w = w; a.silu = 1; a.y = y0;
        ctx.n_threads = 1; lattn_shortconv_chunk(&ctx, &a);
        for (th = 2; th <= 7; th += (th == 3 ? 4 : 1)) {
            ctx.n_threads = th; a.y = y1; poison(y1, (size_t)(B * T * D)); lattn_shortconv_chunk(&ctx, &a);
            ok &= same_bits(y0, y1, (size_t)(B * T * D));
        }
        CHECK(ok, "conv bit-identical at 1, 2, 3, 7 threads");
        x[(1 * T + t0) * D + 5] = NAN;           /* batch 1, token t0, channel 5 */
        poison(y1, (size_t)(B * T * D)); lattn_shortconv_chunk(&ctx, &a);
        for (i = 0; i < B * T * D; i++) {
            int64_t b = i / (T * D), t = (i / D) % T, c = i % D;
            int touched = b == 1 && c == 5 && t >= t0 && t < t0 + W;
            if (!touched && !same_bits(&y0[i], &y1[i], 1)) causal = 0;
            if (touched && !isnan(y1[i])) causal = 0;
        }
        CHECK(causal, "conv: a NaN reaches only its own channel and the next W-1 tokens");
        ctx.n_threads = 0;
        free(x); free(w); free(y0); free(y1);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* scan                                                                                           */
/* ---------------------------------------------------------------------------------------------- */
static void scan_inputs(lattn_rng *r, float *a, float *b, size_t n, int log_space, int extreme) {
    size_t i;
    lattn_rng_fill_normal(r, b, n, 0, 1);
    for (i = 0; i < n; i++) {
        float u = lattn_rng_uniform(r);
        float d = extreme ? (i % 3 == 0 ? 1e-7f * u : i % 3 == 1 ? 1.0f - 1e-6f * u : u) : 0.5f + 0.5f * u;
        a[i] = log_space ? (d > 0 ? logf(d) : -HUGE_VALF) : d;
    }
}

static void test_scan(void) {
    static const int64_t Ts[] = { 0, 1, 2, 255, 256, 257, 4099 };
    lattn_rng r = lattn_rng_seed(g_seed);
    lattn_ctx ctx;
    int ti, v;
    lattn_ctx_init(&ctx);
    for (v = 0; v < 4; v++)
        for (ti = 0; ti < 7; ti++) {
            int64_t B = v == 3 ? 1 : 3, N = v == 3 ? 1500 : 37, T = Ts[ti];
            size_t n, ns;
            float *a, *b, *h0, *h1, *h2, *t1, *t2;
            lattn_scan_args s;
            double e1, e2;
            if (v == 3 && T > 300) T = 300;
            n = (size_t)(B * T * N); ns = (size_t)(B * N);
            a = fnew(n); b = fnew(n); h0 = fnormal(&r, ns); h1 = fnew(n); h2 = fnew(n); t1 = fnew(ns); t2 = fnew(ns);
            scan_inputs(&r, a, b, n, v == 1, v == 2);
            memset(&s, 0, sizeof s);
            s.B = B; s.T = T; s.N = N; s.a = a; s.b = b; s.log_space = v == 1; s.h0 = h0;
            s.y = h1; s.ht = t1; lattn_scan_ref(&ctx, &s);
            s.y = h2; s.ht = t2;
            CHECK(lattn_scan_chunk(&ctx, &s) == LATTN_OK, "scan fast status");
            e1 = rel_rms(h2, h1, n); e2 = rel_rms(t2, t1, ns);
            CHECK(e1 <= 1e-5 && e2 <= 1e-5, "scan fast vs ref (variant %d, T=%lld, N=%lld): h %g ht %g", v, (long long)T, (long long)N, e1, e2);
            s.y = NULL; poison(t2, ns);
            lattn_scan_chunk(&ctx, &s);
            CHECK(rel_rms(t2, t1, ns) <= 1e-5, "scan final state alone (variant %d, T=%lld)", v, (long long)T);
            s.y = h2; poison(h2, n); poison(t2, ns);
            CHECK(lattn_scan_step(&ctx, &s) == LATTN_OK && rel_rms(h2, h1, n) <= 1e-5 && rel_rms(t2, t1, ns) <= 1e-5,
                  "scan step vs ref (variant %d, T=%lld): h %g ht %g", v, (long long)T, rel_rms(h2, h1, n), rel_rms(t2, t1, ns));
            if (T > 1 && B == 1) {       /* two calls, the state in place (ht = h0) = one call */
                memcpy(t2, h0, ns * sizeof(float));
                s.h0 = t2; s.T = T / 2; poison(h2, n);
                lattn_scan_step(&ctx, &s);
                s.a = a + (size_t)((T / 2) * N); s.b = b + (size_t)((T / 2) * N); s.T = T - T / 2;
                lattn_scan_step(&ctx, &s);
                CHECK(rel_rms(t2, t1, ns) <= 1e-5, "scan step in place over two calls (variant %d, T=%lld)", v, (long long)T);
                s.a = a; s.b = b; s.T = T; s.h0 = h0;
            }
            s.ht = NULL; s.h0 = NULL; poison(h2, n); s.y = h2;
            lattn_scan_step(&ctx, &s);
            CHECK(isfinite(h2[n ? n - 1 : 0]) || n == 0, "scan step without h0 and ht");
            free(a); free(b); free(h0); free(h1); free(h2); free(t1); free(t2);
        }
    {   /* both split strategies: bit-identical at 1, 2, 3, 7 threads; NaN stays in its channel */
        int strat;
        for (strat = 0; strat < 2; strat++) {
            int64_t B = 2, N = strat ? 700 : 19, T = strat ? 300 : 3 * LATTN_SCAN_TIME_BLOCK + 77;
            size_t n = (size_t)(B * T * N), i;
            float *a = fnew(n), *b = fnew(n), *h1 = fnew(n), *h2 = fnew(n);
            lattn_scan_args s;
            int th, ok = 1, iso = 1;
            scan_inputs(&r, a, b, n, 0, 0);
            memset(&s, 0, sizeof s);
            s.B = B; s.T = T; s.N = N; s.a = a; s.b = b; s.y = h1;
            ctx.n_threads = 1; lattn_scan_chunk(&ctx, &s);
            for (th = 2; th <= 7; th += (th == 3 ? 4 : 1)) {
                ctx.n_threads = th; s.y = h2; poison(h2, n); lattn_scan_chunk(&ctx, &s);
                ok &= same_bits(h1, h2, n);
            }
            CHECK(ok, "scan (%s split) bit-identical at 1, 2, 3, 7 threads", strat ? "channel" : "time");
            b[(size_t)((1 * T + 5) * N + 3)] = NAN;
            s.y = h2; lattn_scan_chunk(&ctx, &s);
            for (i = 0; i < n; i++) {
                int64_t bb = (int64_t)i / (T * N), t = ((int64_t)i / N) % T, c = (int64_t)i % N;
                int hit = bb == 1 && c == 3 && t >= 5;
                if (hit ? !isnan(h2[i]) : !same_bits(&h1[i], &h2[i], 1)) iso = 0;
            }
            CHECK(iso, "scan (%s split): a NaN reaches only its channel's later states", strat ? "channel" : "time");
            ctx.n_threads = 0;
            free(a); free(b); free(h1); free(h2);
        }
    }
    {   /* time split, a block's product of decays under FLT_MIN (0.9788^4096 ≈ 8e-39, taken as zero)
           or just above it (0.98^4096 ≈ 1e-36), a large h0: the same states as _ref */
        const int64_t T = 2 * LATTN_SCAN_TIME_BLOCK + 9, N = 6;
        const size_t n = (size_t)(T * N);
        float *a = fnew(n), *b = frand(&r, n, -1, 1), *h1 = fnew(n), *h2 = fnew(n), h0[6] = { 1e3f, -1e3f, 1e30f, 0, 5, -7 };
        lattn_scan_args s;
        size_t i;
        for (i = 0; i < n; i++) a[i] = i % 2 ? 0.9788f : 0.98f;
        memset(&s, 0, sizeof s);
        s.B = 1; s.T = T; s.N = N; s.a = a; s.b = b; s.h0 = h0; s.y = h1;
        lattn_scan_ref(&ctx, &s);
        s.y = h2;
        CHECK(lattn_scan_chunk(&ctx, &s) == LATTN_OK && rel_rms(h2, h1, n) <= 1e-5,
              "scan time split with block products under FLT_MIN = scan_ref: %.3g", rel_rms(h2, h1, n));
        free(a); free(b); free(h1); free(h2);
    }
    {   /* errors: nothing written */
        float a[4] = { -1, 0.5f, -1, -1 }, b[4] = { 1, 1, 1, 1 }, h[4] = { NAN, NAN, NAN, NAN };
        lattn_scan_args s;
        memset(&s, 0, sizeof s);
        s.B = 1; s.T = 4; s.N = 1; s.a = a; s.b = b; s.y = h; s.log_space = 1;
        CHECK(lattn_scan_chunk(&ctx, &s) == LATTN_E_DOMAIN && isnan(h[0]), "positive log decay: domain error, nothing written");
        s.log_space = 0; s.N = 0;
        CHECK(lattn_scan_ref(&ctx, &s) == LATTN_E_SHAPE, "scan N = 0");
        s.N = 1; s.b = NULL;
        CHECK(lattn_scan_chunk(&ctx, &s) == LATTN_E_NULL, "scan b NULL");
        s.b = b; s.N = INT64_MAX / 2;
        CHECK(lattn_scan_chunk(&ctx, &s) == LATTN_E_OVERFLOW, "scan overflowing N");
        CHECK(lattn_scan_ref(&ctx, NULL) == LATTN_E_NULL, "scan NULL args");
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* ssm                                                                                            */
/* ---------------------------------------------------------------------------------------------- */
typedef struct { lattn_ssm_args a; float *x, *dt, *A, *Bm, *Cm, *Ds, *bias, *z, *h0; size_t ny, ns; } ssm_case;
static void ssm_make(ssm_case *c, lattn_rng *r, int64_t B, int64_t T, int64_t D, int64_t N, int64_t G, int varlen, int extreme) {
    int64_t n = B, i;
    memset(c, 0, sizeof *c);
    if (varlen) { make_offsets(T); n = 4; c->a.offsets = g_off; c->a.n_seqs = 4; }
    c->a.B = B; c->a.T = T; c->a.D = D; c->a.N = N; c->a.G = G; c->a.dt_softplus = 1;
    c->ny = (size_t)(B * T * D); c->ns = (size_t)(n * D * N);
    c->x = fnormal(r, c->ny); c->dt = fnormal(r, c->ny); c->z = fnormal(r, c->ny);
    c->A = frand(r, (size_t)(D * N), extreme ? -100.0f : -4.0f, -0.01f);
    c->Bm = fnormal(r, (size_t)(B * T * G * N)); c->Cm = fnormal(r, (size_t)(B * T * G * N));
    c->Ds = fnormal(r, (size_t)D); c->bias = frand(r, (size_t)D, -2, 0.5f); c->h0 = fnormal(r, c->ns);
    if (extreme) for (i = 0; i < (int64_t)c->ny; i++) c->dt[i] = i % 2 ? 20.0f * c->dt[i] : -12.0f;   /* Δ up to ~40, and ~6e-6 */
    c->a.x = c->x; c->a.dt = c->dt; c->a.A = c->A; c->a.Bm = c->Bm; c->a.Cm = c->Cm;
    c->a.Dskip = c->Ds; c->a.dt_bias = c->bias; c->a.z = c->z; c->a.h0 = c->h0;
}
static void ssm_free(ssm_case *c) { free(c->x); free(c->dt); free(c->A); free(c->Bm); free(c->Cm); free(c->Ds); free(c->bias); free(c->z); free(c->h0); }

static void test_ssm(void) {
    static const int64_t Ts[] = { 0, 1, 2, 255, 256, 257, 4099 };
    lattn_rng r = lattn_rng_seed(g_seed);
    lattn_ctx ctx;
    int ti, v;
    lattn_ctx_init(&ctx);
    for (v = 0; v < 4; v++)
        for (ti = 0; ti < (g_quick ? 6 : 7); ti++) {
            /* v0: plain; v1: groups whose lanes straddle vectors; v2: extreme decays; v3: variable lengths */
            int64_t T = Ts[ti], D = v == 1 ? 36 : 37, N = v == 2 ? 16 : 5, G = v == 1 ? 3 : 1, B = v == 3 ? 1 : 3;
            ssm_case c;
            float *y0, *y1, *y2, *h0, *h1, *h2;
            double e1, e2;
            if (v == 3 && T > 300) continue;
            ssm_make(&c, &r, B, v == 3 ? 3 * T : T, D, N, G, v == 3, v == 2);
            y0 = fnew(c.ny); y1 = fnew(c.ny); y2 = fnew(c.ny); h0 = fnew(c.ns); h1 = fnew(c.ns); h2 = fnew(c.ns);
            c.a.y = y0; c.a.ht = h0; lattn_ssm_ref(&ctx, &c.a);
            c.a.y = y1; c.a.ht = h1;
            CHECK(lattn_ssm_chunk(&ctx, &c.a) == LATTN_OK, "ssm fast: %s", lattn_ctx_error(&ctx));
            e1 = rel_rms(y1, y0, c.ny); e2 = rel_rms(h1, h0, c.ns);
            CHECK(e1 <= (v == 2 ? 1e-4 : 1e-5) && e2 <= (v == 2 ? 1e-4 : 1e-5), "ssm fast vs ref (variant %d, T=%lld): y %g ht %g", v, (long long)c.a.T, e1, e2);
            c.a.y = y2; c.a.ht = h2;     /* _step token by token */
            CHECK(lattn_ssm_step(&ctx, &c.a) == LATTN_OK, "ssm decode");
            e1 = rel_rms(y2, y0, c.ny); e2 = rel_rms(h2, h0, c.ns);
            CHECK(e1 <= (v == 2 ? 1e-4 : 1e-5) && e2 <= (v == 2 ? 1e-4 : 1e-5), "ssm step x T vs ref (variant %d, T=%lld): y %g ht %g", v, (long long)c.a.T, e1, e2);
            free(y0); free(y1); free(y2); free(h0); free(h1); free(h2);
            ssm_free(&c);
        }
    {   /* identity (spec tcn_ssm.md §3): a selective SSM whose channels share one decay is one head
           of Simple GLA with q = C, k = B, v = Δ·x, g = Δ·A, scale 1 (lattn_la_ref with a.g) */
        int64_t T = 90, D = 20, N = 12, t, d;
        ssm_case c;
        float *y = fnew((size_t)(T * D)), *o = fnew((size_t)(T * D)), *dx = fnew((size_t)(T * D)), *g = fnew((size_t)T);
        lattn_la_args la = LATTN__ZERO;
        ssm_make(&c, &r, 1, T, D, N, 1, 0, 0);
        for (t = 0; t < T; t++) for (d = 1; d < D; d++) c.dt[t * D + d] = c.dt[t * D];
        for (d = 0; d < D * N; d++) c.A[d] = c.A[0];
        for (d = 0; d < D; d++) c.bias[d] = c.bias[0];
        c.a.Dskip = NULL; c.a.z = NULL; c.a.h0 = NULL; c.a.y = y; c.a.ht = NULL;
        lattn_ssm_chunk(&ctx, &c.a);
        for (t = 0; t < T; t++) {
            double dl = log1p(exp((double)c.dt[t * D] + c.bias[0]));      /* Δ = softplus(dt + bias) */
            g[t] = (float)(dl * c.A[0]);
            for (d = 0; d < D; d++) dx[t * D + d] = (float)(dl * c.x[t * D + d]);
        }
        la.B = 1; la.T = T; la.H = 1; la.K = N; la.V = D; la.q = c.Cm; la.k = c.Bm; la.v = dx; la.g = g; la.scale = 1.0;
        la.o = o;
        CHECK(lattn_la_ref(&ctx, &la) == LATTN_OK && rel_rms(y, o, (size_t)(T * D)) <= 1e-5,
              "ssm = Simple GLA (q=C, k=B, v=dx, g=dA, scale 1): %g", rel_rms(y, o, (size_t)(T * D)));
        free(y); free(o); free(dx); free(g); ssm_free(&c);
    }
    {   /* threads, NaN isolation, errors */
        ssm_case c;
        int64_t B = 2, T = 100, D = 150, N = 8, i;
        float *y1, *y2;
        int th, ok = 1, iso = 1;
        ssm_make(&c, &r, B, T, D, N, 1, 0, 0);
        y1 = fnew(c.ny); y2 = fnew(c.ny);
        c.a.y = y1; ctx.n_threads = 1; lattn_ssm_chunk(&ctx, &c.a);
        for (th = 2; th <= 7; th += (th == 3 ? 4 : 1)) { ctx.n_threads = th; c.a.y = y2; poison(y2, c.ny); lattn_ssm_chunk(&ctx, &c.a); ok &= same_bits(y1, y2, c.ny); }
        CHECK(ok, "ssm bit-identical at 1, 2, 3, 7 threads");
        c.x[(1 * T + 10) * D + 77] = NAN;
        lattn_ssm_chunk(&ctx, &c.a);
        for (i = 0; i < (int64_t)c.ny; i++) {
            int64_t b = i / (T * D), t = (i / D) % T, d = i % D;
            int hit = b == 1 && d == 77 && t >= 10;
            if (hit ? !isnan(y2[i]) : !same_bits(&y1[i], &y2[i], 1)) iso = 0;
        }
        CHECK(iso, "ssm: a NaN stays in its channel and sequence");
        ctx.n_threads = 0;
        c.A[5] = 0.5f;
        poison(y2, c.ny);
        CHECK(lattn_ssm_chunk(&ctx, &c.a) == LATTN_E_DOMAIN && isnan(y2[0]), "ssm: A > 0 is a domain error, nothing written");
        c.A[5] = -1.0f; c.a.G = 7;
        CHECK(lattn_ssm_ref(&ctx, &c.a) == LATTN_E_SHAPE, "ssm: D not a multiple of G");
        c.a.G = 1;
        free(y1); free(y2); ssm_free(&c);
    }
    {   /* runs of tiles: D = 300 is three tiles, at 2 threads one run of two and one of one; y, ht and
           the block-start states the same bits at 1, 2, 3 and 7 threads, with variable lengths */
        ssm_case c;
        const int64_t T = 75, D = 300, N = 5, nbk = (T + LATTN_SSM_BLOCK - 1) / LATTN_SSM_BLOCK;
        const size_t nst = (size_t)(4 * (nbk + 1) * D * N);
        float *y[2], *ht[2], *st[2];
        int th, k, ok = 1;
        ssm_make(&c, &r, 1, T, D, N, 3, 1, 0);
        for (k = 0; k < 2; k++) { y[k] = fnew(c.ny); ht[k] = fnew(c.ns); st[k] = fnew(nst); }
        for (th = 1; th <= 7; th += (th == 3 ? 4 : 1)) {
            k = th > 1;
            poison(y[k], c.ny); poison(ht[k], c.ns); memset(st[k], 0, nst * sizeof(float));   /* slots past a short sequence stay unwritten */
            c.a.y = y[k]; c.a.ht = ht[k]; c.a.states = st[k];
            ctx.n_threads = th;
            CHECK(lattn_ssm_chunk(&ctx, &c.a) == LATTN_OK, "ssm runs of tiles: %s", lattn_ctx_error(&ctx));
            if (k) ok &= same_bits(y[0], y[1], c.ny) && same_bits(ht[0], ht[1], c.ns) && same_bits(st[0], st[1], nst);
        }
        ctx.n_threads = 1;
        CHECK(ok, "ssm (D = 300, variable lengths): y, ht and the states the same bits at 1, 2, 3 and 7 threads");
        {   /* the states go around the caches in whole aligned vectors: a buffer one float off the
               vector alignment gets the same bits */
            float *su = fnew(nst + 1);
            memset(su, 0, (nst + 1) * sizeof(float));
            c.a.y = y[1]; c.a.ht = ht[1]; c.a.states = su + 1;
            ctx.n_threads = 2;
            CHECK(lattn_ssm_chunk(&ctx, &c.a) == LATTN_OK && same_bits(st[0], su + 1, nst) && su[0] == 0.0f,
                  "ssm: states at an unaligned address, the same bits and nothing written before them");
            ctx.n_threads = 1;
            free(su);
        }
        for (k = 0; k < 2; k++) { free(y[k]); free(ht[k]); free(st[k]); }
        ssm_free(&c);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* s4d                                                                                            */
/* ---------------------------------------------------------------------------------------------- */
typedef struct { lattn_s4d_args a; float *p[9], *u; size_t ny, ns; } s4d_case;
static void s4d_make(s4d_case *c, lattn_rng *r, int64_t B, int64_t T, int64_t D, int64_t N, int cplx) {
    int64_t i, dn = D * N;
    memset(c, 0, sizeof *c);
    c->ny = (size_t)(B * T * D); c->ns = (size_t)(B * D * N * 2);
    for (i = 0; i < 6; i++) c->p[i] = fnew((size_t)dn);
    for (i = 0; i < dn; i++) {                          /* S4D-Lin initialisation */
        c->p[0][i] = logf(0.5f) + (cplx ? 0.0f : 0.3f * lattn_rng_uniform(r));
        c->p[1][i] = 3.14159265f * (float)(i % N);
        c->p[2][i] = 1.0f; c->p[3][i] = 0.0f;
        c->p[4][i] = (float)(0.70710678 * lattn_rng_normal_d(r)); c->p[5][i] = (float)(0.70710678 * lattn_rng_normal_d(r));
    }
    c->p[6] = frand(r, (size_t)D, logf(1e-3f), logf(1e-1f));
    c->p[7] = fnormal(r, (size_t)D);
    c->p[8] = fnormal(r, c->ns);
    c->u = fnormal(r, c->ny);
    c->a.x = c->u;
    c->a.B = B; c->a.T = T; c->a.D = D; c->a.N = N; c->a.complex_modes = cplx;
    c->a.A_re = c->p[0]; c->a.A_im = c->p[1]; c->a.B_re = c->p[2]; c->a.B_im = c->p[3]; c->a.C_re = c->p[4]; c->a.C_im = c->p[5];
    c->a.log_dt = c->p[6]; c->a.Dskip = c->p[7]; c->a.h0 = c->p[8];
}
/* _chunk by one method (the args keep the default, the scan). */
static lattn_status s4d_by(lattn_ctx *ctx, lattn_s4d_args *a, lattn_s4d_method m) {
    lattn_status st;
    a->method = m;
    st = lattn_s4d_chunk(ctx, a);
    a->method = LATTN_S4D_SCAN;
    return st;
}
static void s4d_free(s4d_case *c) { int i; for (i = 0; i < 9; i++) free(c->p[i]); free(c->u); }

static void test_s4d(void) {
    static const int64_t Ts[] = { 0, 1, 2, 255, 256, 257, 4099 };
    lattn_rng r = lattn_rng_seed(g_seed);
    lattn_ctx ctx;
    int ti, cplx, form;
    lattn_ctx_init(&ctx);
    for (cplx = 0; cplx < 2; cplx++)
        for (ti = 0; ti < 7; ti++) {
            int64_t B = 2, T = Ts[ti], D = 3, N = 5;
            s4d_case c;
            float *y0, *y1, *h0, *h1;
            s4d_make(&c, &r, B, T, D, N, cplx);
            y0 = fnew(c.ny); y1 = fnew(c.ny); h0 = fnew(c.ns); h1 = fnew(c.ns);
            c.a.y = y0; c.a.ht = h0; lattn_s4d_ref(&ctx, &c.a);
            for (form = 0; form < 4; form++) {   /* _chunk by its three methods, and _step */
                static const lattn_s4d_method me[3] = { LATTN_S4D_SCAN, LATTN_S4D_CONV, LATTN_S4D_FFT };
                lattn_status st;
                double e1, e2 = 0;
                int conv = form == 1 || form == 2;
                if (form == 1 && T > 300 && g_quick) continue;
                c.a.y = y1; c.a.ht = conv ? NULL : h1;
                poison(y1, c.ny); poison(h1, c.ns);
                st = form == 3 ? lattn_s4d_step(&ctx, &c.a) : s4d_by(&ctx, &c.a, me[form]);
                e1 = rel_rms(y1, y0, c.ny);
                if (!conv) e2 = rel_rms(h1, h0, c.ns);
                CHECK(st == LATTN_OK && e1 <= 1e-5 && e2 <= 1e-5, "s4d %s form %d vs ref (T=%lld): y %g ht %g [%s]",
                      cplx ? "complex" : "real", form, (long long)T, e1, e2, lattn_ctx_error(&ctx));
            }
            free(y0); free(y1); free(h0); free(h1);
            s4d_free(&c);
        }
    {   /* the real kernel equals the scan (>>scan) of each mode on an impulse (the scan takes Ā
           rounded to float32, so the two drift apart by ~T·ε: T = 100 keeps that below 1e-5) */
        int64_t T = 100, N = 6, t, n;
        s4d_case c;
        float *u = fnew((size_t)T), *y = fnew((size_t)T), *a = fnew((size_t)(T * N)), *b = fnew((size_t)(T * N)), *h = fnew((size_t)(T * N));
        double err = 0, nrm = 0;
        lattn_scan_args sa;
        s4d_make(&c, &r, 1, T, 1, N, 0);
        c.a.Dskip = NULL; c.a.h0 = NULL;
        for (t = 0; t < T; t++) u[t] = t == 0 ? 1.0f : 0.0f;
        c.a.x = u; c.a.y = y;
        s4d_by(&ctx, &c.a, LATTN_S4D_CONV);
        for (n = 0; n < N; n++) {       /* Ā and B̄ of the real modes, in double */
            double dt = exp((double)c.p[6][0]), A = -exp((double)c.p[0][n]), Ab = exp(dt * A), Bb = (Ab - 1) / A;
            for (t = 0; t < T; t++) { a[t * N + n] = (float)Ab; b[t * N + n] = t == 0 ? (float)Bb : 0.0f; }
        }
        memset(&sa, 0, sizeof sa);
        sa.B = 1; sa.T = T; sa.N = N; sa.a = a; sa.b = b; sa.y = h;
        lattn_scan_chunk(&ctx, &sa);
        for (t = 0; t < T; t++) {
            double k = 0;
            for (n = 0; n < N; n++) k += (double)c.p[4][n] * h[t * N + n];
            err += (k - y[t]) * (k - y[t]); nrm += k * k;
        }
        CHECK(sqrt(err / nrm) <= 1e-5, "s4d real kernel = the scan on an impulse: %g", sqrt(err / nrm));
        free(u); free(y); free(a); free(b); free(h); s4d_free(&c);
    }
    {   /* every form: bit-identical at 1, 2, 3, 7 threads; a NaN stays in its channel and row */
        s4d_case c;
        int64_t B = 2, T = 200, D = 5, i;
        float *y1, *y2;
        int f, th, ok = 1, iso = 1;
        s4d_make(&c, &r, B, T, D, 6, 1);
        y1 = fnew(c.ny); y2 = fnew(c.ny);
        for (f = 0; f < 3; f++) {
            lattn_s4d_method me = f == 0 ? LATTN_S4D_SCAN : f == 1 ? LATTN_S4D_FFT : LATTN_S4D_CONV;
            c.a.y = y1; ctx.n_threads = 1; s4d_by(&ctx, &c.a, me);
            for (th = 2; th <= 7; th += (th == 3 ? 4 : 1)) { ctx.n_threads = th; c.a.y = y2; poison(y2, c.ny); s4d_by(&ctx, &c.a, me); ok &= same_bits(y1, y2, c.ny); }
            ctx.n_threads = 0;
            if (f == 0) {
                c.u[(1 * T + 50) * D + 2] = NAN;
                c.a.y = y2; s4d_by(&ctx, &c.a, me);
                for (i = 0; i < (int64_t)c.ny; i++) {
                    int64_t b = i / (T * D), t = (i / D) % T, d = i % D;
                    int hit = b == 1 && d == 2 && t >= 50;
                    if (hit ? !isnan(y2[i]) : !same_bits(&y1[i], &y2[i], 1)) iso = 0;
                }
                c.u[(1 * T + 50) * D + 2] = 0.5f;
            }
        }
        CHECK(ok, "s4d scan, fft, conv bit-identical at 1, 2, 3, 7 threads");
        CHECK(iso, "s4d: a NaN stays in its channel and batch row");
        free(y1); free(y2); s4d_free(&c);
    }
    {   /* errors and the FFT itself */
        double re[8] = { 1, 2, 3, 4, 0, 0, 0, 0 }, im[8] = { 0 }, re0[8];
        s4d_case c;
        float y[8];
        int i, ok = 1;
        memcpy(re0, re, sizeof re);
        lattn_fft(&ctx, re, im, 8, 0); lattn_fft(&ctx, re, im, 8, 1);
        for (i = 0; i < 8; i++) if (fabs(re[i] - re0[i]) > 1e-12 || fabs(im[i]) > 1e-12) ok = 0;
        CHECK(ok, "inverse FFT undoes the FFT");
        CHECK(lattn_fft(&ctx, re, im, 6, 0) == LATTN_E_SHAPE, "FFT of 6 points refused");
        s4d_make(&c, &r, 1, 2, 1, 2, 1);
        c.a.x = y; c.a.y = y; c.a.ht = y;
        CHECK(s4d_by(&ctx, &c.a, LATTN_S4D_FFT) == LATTN_E_UNSUPPORTED, "a convolution form with a state out");
        c.a.ht = NULL; c.a.A_im = NULL;
        CHECK(lattn_s4d_chunk(&ctx, &c.a) == LATTN_E_NULL, "complex modes without A_im");
        s4d_free(&c);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* tcn                                                                                            */
/* ---------------------------------------------------------------------------------------------- */
static void test_tcn(void) {
    lattn_ctx ctx;
    lattn_tcn_demo m;
    lattn_tcn_args a;
    lattn_rng r = lattn_rng_seed(g_seed);
    int64_t B = 2, T = g_quick ? 40 : 70, d = 32, t, b;
    size_t n = (size_t)(B * T * d), sf;
    float *x, *y0, *y1, *y2;
    double e;
    lattn_ctx_init(&ctx);
    {
        lattn_tcn_demo_config dc;
        dc.d_in = 2; dc.D = d; dc.W = 3; dc.n_layers = 4;
        CHECK(lattn_tcn_demo_init(&ctx, &m, &dc, g_seed) == LATTN_OK, "demo init");
    }
    /* LayerNorm weights away from 1/0 so the test sees them */
    for (b = 0; b < 4; b++)
        for (t = 0; t < d; t++) { ((float *)m.layers[b].ln_w)[t] = 1.0f + 0.1f * (float)((t * 7 + b) % 5); ((float *)m.layers[b].ln_b)[t] = 0.05f * (float)(t % 3); }
    x = fnormal(&r, n); y0 = fnew(n); y1 = fnew(n); y2 = fnew(n);
    memset(&a, 0, sizeof a);
    a.B = B; a.T = T; a.D = d; a.W = 3; a.n_layers = 4; a.layers = m.layers; a.x = x; a.y = y0;
    CHECK(lattn_tcn_ref(&ctx, &a) == LATTN_OK, "tcn ref");
    a.y = y1;
    CHECK(lattn_tcn_chunk(&ctx, &a) == LATTN_OK, "tcn fast");
    e = rel_rms(y1, y0, n);
    CHECK(e <= 1e-5, "tcn fast vs ref: %g", e);
    lattn_tcn_state_floats(d, 3, 4, &sf);
    CHECK(sf == (size_t)(2 * 15 * d), "state floats: (k-1)(2^L - 1) rows");
    a.y = y2;
    CHECK(lattn_tcn_step(&ctx, &a) == LATTN_OK, "tcn decode");
    e = rel_rms(y2, y0, n);
    CHECK(e <= 1e-5, "tcn step x T vs ref: %g", e);
    {   /* the article's causality test: input non-zero only at the last position */
        float *z = fnew(n), *yz = fnew(n), *yz2 = fnew(n);
        int ok = 1;
        memset(z, 0, n * sizeof(float));
        a.x = z; a.y = yz; lattn_tcn_chunk(&ctx, &a);
        for (b = 0; b < B; b++) for (t = 0; t < d; t++) z[(b * T + T - 1) * d + t] = 1.0f;
        a.y = yz2; lattn_tcn_chunk(&ctx, &a);
        for (b = 0; b < B; b++) ok &= same_bits(yz + b * T * d, yz2 + b * T * d, (size_t)((T - 1) * d));
        ok &= !same_bits(yz + (T - 1) * d, yz2 + (T - 1) * d, (size_t)d);
        CHECK(ok, "tcn causality: a change at the last position leaves earlier outputs bit-identical");
        free(z); free(yz); free(yz2);
    }
    {   /* demo model: 32 x 16 x 2 input, fast vs double encoder */
        float *xi = fnormal(&r, 32 * 16 * 2), o1[32], o2[32];
        CHECK(lattn_tcn_demo_forward(&ctx, &m, 32, 16, xi, o1) == LATTN_OK &&
              lattn_tcn_demo_forward_ref(&ctx, &m, 32, 16, xi, o2, NULL) == LATTN_OK, "demo forward");
        e = rel_rms(o1, o2, 32);
        CHECK(e <= 1e-5, "demo forward fast vs ref: %g", e);
        free(xi);
    }
    a.x = x; a.y = y1; a.n_layers = 0;
    CHECK(lattn_tcn_chunk(&ctx, &a) == LATTN_E_SHAPE, "tcn zero layers");
    a.n_layers = 4; a.layers = NULL;
    CHECK(lattn_tcn_ref(&ctx, &a) == LATTN_E_NULL, "tcn NULL layers");
    lattn_tcn_demo_free(&ctx, &m);
    free(x); free(y0); free(y1); free(y2);
}

/* ---------------------------------------------------------------------------------------------- */
/* linear attention                                                                               */
/* ---------------------------------------------------------------------------------------------- */
typedef struct {
    lattn_la_args a;
    float *q, *k, *v, *h0, *z0, *fw, *fb;
    size_t no, ns, nz;
} la_case;

static void la_make(la_case *c, lattn_rng *r, int64_t B, int64_t T, int64_t H, int64_t K, int64_t V,
                    lattn_fmap fm, int norm, int with_h0, int varlen) {
    int64_t n = B, Kf = lattn_fmap_width(fm, K);
    memset(c, 0, sizeof *c);
    memset(&c->a, 0, sizeof c->a);
    if (varlen) { make_offsets(T); n = 4; c->a.offsets = g_off; c->a.n_seqs = 4; }
    c->a.B = B; c->a.T = T; c->a.H = H; c->a.K = K; c->a.V = V; c->a.fmap = fm; c->a.normalize = norm;
    c->q = fnormal(r, (size_t)(B * T * H * K)); c->k = fnormal(r, (size_t)(B * T * H * K));
    c->v = fnormal(r, (size_t)(B * T * H * V));
    if (norm) {   /* a positive map keeps the normaliser away from 0 */
        size_t i;
        for (i = 0; i < (size_t)(B * T * H * K); i++) { c->q[i] = 0.5f * c->q[i]; c->k[i] = 0.5f * c->k[i]; }
    }
    c->ns = (size_t)(n * H * Kf * V); c->nz = (size_t)(n * H * Kf); c->no = (size_t)(B * T * H * V);
    c->h0 = with_h0 ? fnormal(r, c->ns) : NULL;
    c->z0 = with_h0 && norm ? frand(r, c->nz, 0.5f, 2.0f) : NULL;
    c->fw = fnormal(r, (size_t)(2 * K * K)); c->fb = fnormal(r, (size_t)(2 * K));
    { size_t i; for (i = 0; i < (size_t)(2 * K * K); i++) c->fw[i] *= (float)(0.5 / sqrt((double)K)); }
    c->a.q = c->q; c->a.k = c->k; c->a.v = c->v; c->a.h0 = c->h0; c->a.z0 = c->z0;
    c->a.fmap_w = c->fw; c->a.fmap_b = c->fb;
}
static void la_free(la_case *c) { free(c->q); free(c->k); free(c->v); free(c->h0); free(c->z0); free(c->fw); free(c->fb); }

/* Run one form (0 ref, 1 parallel, 2 chunk, 3 decode = _step per token) into NaN-poisoned outputs. */
static lattn_status la_run(lattn_ctx *ctx, la_case *c, lattn_form form, int chunk, float *o, float *ht, float *zt) {
    lattn_la_args a = c->a;
    poison(o, c->no); poison(ht, c->ns); poison(zt, c->nz);
    a.o = o; a.ht = ht; a.zt = a.normalize ? zt : NULL;
    a.chunk = chunk;
    if (form == LATTN_FORM_REF) return lattn_la_ref(ctx, &a);
    if (form == LATTN_FORM_PARALLEL) return lattn_la_parallel(ctx, &a);
    if (form == LATTN_FORM_CHUNK) return lattn_la_chunk(ctx, &a);
    return lattn_la_step(ctx, &a);
}

static void test_la(void) {
    lattn_rng r = lattn_rng_seed(g_seed);
    lattn_ctx ctx;
    static const int chunks[] = { 1, 16, 64, 128 };
    int ci, ti, form, variant;
    int64_t C = g_quick ? 16 : 64;
    int64_t Ts[6];
    Ts[0] = 0; Ts[1] = 1; Ts[2] = C - 1; Ts[3] = C; Ts[4] = C + 1; Ts[5] = 3 * C + 5;
    lattn_ctx_init(&ctx);
    /* every form against _ref: sizes, maps, normaliser, initial state, batch 3, varlen */
    for (variant = 0; variant < 6; variant++)
        for (ti = 0; ti < 6; ti++) {
            static const lattn_fmap maps[6] = { LATTN_FMAP_IDENTITY, LATTN_FMAP_ELU1, LATTN_FMAP_RELU,
                                                LATTN_FMAP_HADAMARD, LATTN_FMAP_HEDGEHOG, LATTN_FMAP_IDENTITY };
            int norm = variant == 1 || variant == 4, varlen = variant == 5;
            int64_t K = variant == 0 ? 37 : 16, V = variant == 0 ? 45 : 20, T = Ts[ti], B = varlen ? 1 : 3;
            la_case c;
            float *o0, *o1, *h0, *h1, *z0, *z1;
            if (varlen) T = 3 * T;
            la_make(&c, &r, B, T, 2, K, V, maps[variant], norm, 1, varlen);
            o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
            CHECK(la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0) == LATTN_OK, "la ref status");
            for (form = 1; form <= 3; form++) {
                int nch = form == 2 ? 4 : 1;
                for (ci = 0; ci < nch; ci++) {
                    double eo, eh, ez = 0;
                    lattn_status s = la_run(&ctx, &c, (lattn_form)form, chunks[ci], o1, h1, z1);
                    eo = rel_rms(o1, o0, c.no); eh = rel_rms(h1, h0, c.ns);
                    if (norm) ez = rel_rms(z1, z0, c.nz);
                    CHECK(s == LATTN_OK && eo <= 1e-5 && eh <= 1e-5 && ez <= 1e-5,
                          "la form %d chunk %d vs ref (variant %d T=%lld K=%lld V=%lld): o %g ht %g zt %g [%s]",
                          form, chunks[ci], variant, (long long)T, (long long)K, (long long)V, eo, eh, ez, lattn_ctx_error(&ctx));
                }
            }
            free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
            la_free(&c);
        }
    /* profiles: the same chunk code on trn2 (C = 128, K' = 160 spans 2 partition tiles, V = 600 two
       moving blocks) and on h100 (C = 64, flat) */
    {
        la_case c;
        float *o0, *o1, *h0, *h1, *z0, *z1;
        const lattn_dev_profile *profs[2];
        int pi;
        int64_t T = g_quick ? 150 : 300;
        profs[0] = lattn_profile_trn2(); profs[1] = lattn_profile_h100();
        la_make(&c, &r, 1, T, 2, 160, 600, LATTN_FMAP_IDENTITY, 0, 1, 0);
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
        for (pi = 0; pi < 2; pi++) {
            double eo, eh;
            lattn_status s;
            if (pi == 1) {   /* a gpu block keeps the whole value width: use one that fits 227 KiB */
                la_free(&c); free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
                la_make(&c, &r, 1, T, 2, 64, 150, LATTN_FMAP_ELU1, 1, 1, 0);   /* 3 value slices of 64 */
                o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
                ctx.profile = NULL; la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
            }
            ctx.profile = profs[pi];
            memset(&ctx.stats, 0, sizeof ctx.stats);
            s = la_run(&ctx, &c, LATTN_FORM_CHUNK, 0, o1, h1, z1);
            eo = rel_rms(o1, o0, c.no); eh = rel_rms(h1, h0, c.ns);
            CHECK(s == LATTN_OK && eo <= 1e-5 && eh <= 1e-5 && (pi == 0 || rel_rms(z1, z0, c.nz) <= 1e-5),
                  "la chunk on %s: o %g ht %g [%s]", profs[pi]->name, eo, eh, lattn_ctx_error(&ctx));
            CHECK(ctx.stats.unrolled_steps == (uint64_t)(2 * (pi ? 3 : 1) * ((T + profs[pi]->default_chunk - 1) / profs[pi]->default_chunk)),
                  "chunk bodies counted on %s", profs[pi]->name);
        }
        ctx.profile = lattn_profile_trn2();
        {   /* C = 256 on trn2: two blocks of 128 tokens per chunk (linear attention and fixed decays);
               a chunk that is not a multiple of the partitions, or gated, is refused */
            float *gt = fnew((size_t)(T * 2));
            size_t i;
            for (i = 0; i < (size_t)(T * 2); i++) gt[i] = -0.01f;
            poison(o1, c.no); poison(h1, c.ns); poison(z1, c.nz);
            CHECK(la_run(&ctx, &c, LATTN_FORM_CHUNK, 256, o1, h1, z1) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5 && rel_rms(h1, h0, c.ns) <= 1e-5 &&
                  rel_rms(z1, z0, c.nz) <= 1e-5, "la chunk 256 on trn2 (2 partition tiles per chunk) = ref: %g", rel_rms(o1, o0, c.no));
            c.a.o = o1;
            CHECK((c.a.chunk = 200, lattn_la_chunk(&ctx, &c.a)) == LATTN_E_SHAPE, "chunk 200 on trn2 is not a multiple of 128");
            c.a.g = gt;
            CHECK((c.a.chunk = 256, lattn_la_chunk(&ctx, &c.a)) == LATTN_E_SHAPE, "gated chunk 256 exceeds 128 partitions on trn2");
            c.a.g = NULL;
            free(gt);
        }
        ctx.profile = NULL;
        free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* trn2 per-chunk instruction count of the streaming schedule (K=96, V=192, C=128, no normaliser):
       3 loads + 4 (transposes, copies) + 1 + 1 + 2 + 1 + 1 store + 2 (ΔS, add) = 15 per chunk, plus
       per head the state load and the final store: spec §5.2 has 17 with the checkpoint store and
       the decay step folded differently (see README). */
    {
        la_case c;
        float *o1, *h1, *z1;
        int64_t T = 256;
        la_make(&c, &r, 1, T, 1, 96, 192, LATTN_FMAP_IDENTITY, 0, 1, 0);
        o1 = fnew(c.no); h1 = fnew(c.ns); z1 = fnew(c.nz);
        ctx.profile = lattn_profile_trn2();
        memset(&ctx.stats, 0, sizeof ctx.stats);
        la_run(&ctx, &c, LATTN_FORM_CHUNK, 128, o1, h1, z1);
        CHECK(ctx.stats.instructions == 2 * 15 + 2, "trn2 instructions for 2 chunks + setup: %llu", (unsigned long long)ctx.stats.instructions);
        CHECK(ctx.stats.matmuls == 2 * 4 && ctx.stats.macs == 2ull * (128 * 128 * 96 + 128 * 128 * 192 + 96 * 128 * 192 + 128 * 96 * 192),
              "trn2 matmul count and MACs");
        CHECK(ctx.stats.dma_in_bytes == 4ull * (2 * 128 * (96 + 96 + 192) + 96 * 192) && ctx.stats.dma_out_bytes == 4ull * (2 * 128 * 192 + 96 * 192),
              "trn2 HBM bytes");
        CHECK(ctx.stats.psum_peak_banks == 4, "trn2 PSUM banks: %llu", (unsigned long long)ctx.stats.psum_peak_banks);
        ctx.profile = NULL;
        free(o1); free(h1); free(z1);
        la_free(&c);
    }
    /* the Laplace mixer (fixed decays) on trn2 is spec §5.2 chunk for chunk: 3 loads, transpose +
       copy of Q and K, Aᵀ, Pᵀ = Aᵀ ⊙ Mt, intra, inter, O = Ox ⊙ qd + Oi, store, Kw = K ⊙ w, ΔS,
       S = γ^C S + ΔS: 16 per (head, chunk), the spec's 17 without F14 (the training checkpoint
       store; lattn has no backward); per head 7 setup instructions build the resident Mt, qd, w
       (iota, exp, select; iota, exp; iota, exp) and one zeroes the state; ≤ 5 PSUM banks; HBM bytes
       are the spec's §5.4 bf16 figures times 2 (lattn streams fp32). A ragged last chunk (T = 300)
       adds its own w column (2 instructions) and stays equal to _ref. */
    {
        la_case c;
        float *o0, *o1, *h0, *h1, *z0, *z1, gg[2];
        int64_t T = 2 * 128 + 44, H = 2, N = 3;
        la_make(&c, &r, 1, T, H, 96, 192, LATTN_FMAP_IDENTITY, 0, 0, 0);
        lattn_retention_decay(H, gg);
        c.a.g_gamma = gg;
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
        ctx.profile = lattn_profile_trn2();
        memset(&ctx.stats, 0, sizeof ctx.stats);
        CHECK(la_run(&ctx, &c, LATTN_FORM_CHUNK, 128, o1, h1, z1) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5 && rel_rms(h1, h0, c.ns) <= 1e-5,
              "fixed decays on trn2 = _ref: o %g ht %g", rel_rms(o1, o0, c.no), rel_rms(h1, h0, c.ns));
        CHECK(ctx.stats.instructions == (uint64_t)(H * N * 16 + H * (7 + 1 + 1) + H * 2),
              "trn2 fixed decays: 16 per (head, chunk) + setup: %llu", (unsigned long long)ctx.stats.instructions);
        CHECK(ctx.stats.unrolled_steps == (uint64_t)(H * N) && ctx.stats.psum_peak_banks <= 5 && ctx.stats.matmuls == (uint64_t)(H * N * 4),
              "trn2 fixed decays: bodies, PSUM banks (%llu), matmuls", (unsigned long long)ctx.stats.psum_peak_banks);
        CHECK(ctx.stats.dma_in_bytes == 4ull * (uint64_t)(T * H * (96 + 96 + 192)) && ctx.stats.dma_out_bytes == 4ull * (uint64_t)(T * H * 192 + H * 96 * 192),
              "trn2 fixed decays: HBM bytes");
        ctx.profile = NULL;
        free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* trn2's two schedules (spec sbuf_tiler.md §6.1) and chunks of one or two partition tiles, with
       and without the fixed decays, normaliser, initial state and variable lengths: = _ref */
    {
        static const int Cs[3] = { 64, 128, 256 };
        int sched, fixed, ci2;
        for (fixed = 0; fixed < 2; fixed++)
            for (sched = 0; sched < 2; sched++)
                for (ci2 = 0; ci2 < 3; ci2++) {
                    la_case c;
                    float *o0, *o1, *h0, *h1, *z0, *z1, gg[3];
                    int64_t T = g_quick ? 300 : 600;
                    lattn_status st;
                    la_make(&c, &r, 1, T, 3, 96, 40, fixed ? LATTN_FMAP_IDENTITY : LATTN_FMAP_ELU1, !fixed, 1, 1);
                    lattn_retention_decay(3, gg);
                    gg[2] = -0.3f;
                    if (fixed) c.a.g_gamma = gg;
                    o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
                    la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
                    ctx.profile = lattn_profile_trn2(); c.a.schedule = sched;
                    st = la_run(&ctx, &c, LATTN_FORM_CHUNK, Cs[ci2], o1, h1, z1);
                    CHECK(st == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5 && rel_rms(h1, h0, c.ns) <= 1e-5 && (fixed || rel_rms(z1, z0, c.nz) <= 1e-5),
                          "trn2 %s schedule, C %d, %s = ref: o %g ht %g [%s]", sched ? "chunk-parallel" : "streaming", Cs[ci2],
                          fixed ? "fixed decays" : "normalised", rel_rms(o1, o0, c.no), rel_rms(h1, h0, c.ns), st ? lattn_ctx_error(&ctx) : "");
                    ctx.profile = NULL;
                    free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
                    la_free(&c);
                }
    }
    /* the chunk-parallel schedule's counts (spec §6.1): phase A loads Q and K, forms Qc and Kc, Aᵀ, Pᵀ
       (8); phase B loads Q, K, V, forms Qc, then intra, inter, O, store, Kw, ΔS, S (12): 20 per
       (head, chunk), the spec's 21 without the checkpoint store; one body per chunk of every head.
       Resident scores H·N·C·4 bytes per partition; over SBUF they spill (spill_bytes, refill_bytes)
       on a profile that allows it, else LATTN_E_SBUF_FULL; bf16 streams halve the DMA bytes. */
    {
        la_case c;
        float *o0, *o1, *h0, *h1, *z0, *z1, gg[4];
        const int64_t H = 4, T = 1024, N = T / 128;
        lattn_dev_profile small = *lattn_profile_trn2();
        la_make(&c, &r, 1, T, H, 96, 64, LATTN_FMAP_IDENTITY, 0, 0, 0);
        lattn_retention_decay(H, gg);
        c.a.g_gamma = gg;
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
        ctx.profile = lattn_profile_trn2(); c.a.schedule = LATTN_SCHED_CHUNK_PARALLEL;
        memset(&ctx.stats, 0, sizeof ctx.stats);
        CHECK(la_run(&ctx, &c, LATTN_FORM_CHUNK, 128, o1, h1, z1) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5, "chunk-parallel on trn2 = ref");
        CHECK(ctx.stats.instructions == (uint64_t)(H * N * 20 + H * 9) && ctx.stats.unrolled_steps == (uint64_t)N,
              "chunk-parallel: 20 per (head, chunk) + setup, %lld bodies: %llu, %llu", (long long)N,
              (unsigned long long)ctx.stats.instructions, (unsigned long long)ctx.stats.unrolled_steps);
        CHECK(ctx.stats.dma_in_bytes == 4ull * (uint64_t)(T * H * (2 * 96 + 2 * 96 + 64)) && ctx.stats.spill_bytes == 0 &&
              ctx.stats.sbuf_peak_bytes_per_partition >= (uint64_t)(H * N * 128 * 4), "chunk-parallel: Q and K read twice; scores resident");
        small.sbuf_bytes_per_partition = (size_t)(H * N * 128 * 4 + 16384);   /* holds C = 128's scores, not C = 256's */
        small.spill = 1; small.stream_bytes = 2;
        ctx.profile = &small;
        memset(&ctx.stats, 0, sizeof ctx.stats);
        CHECK(la_run(&ctx, &c, LATTN_FORM_CHUNK, 128, o1, h1, z1) == LATTN_OK && ctx.stats.spill_bytes == 0 && ctx.stats.refill_bytes == 0 &&
              ctx.stats.dma_in_bytes == 2ull * (uint64_t)(T * H * (2 * 96 + 2 * 96 + 64)), "C = 128 fits; bf16 streams halve the DMA bytes");
        memset(&ctx.stats, 0, sizeof ctx.stats);
        poison(o1, c.no);
        CHECK(la_run(&ctx, &c, LATTN_FORM_CHUNK, 256, o1, h1, z1) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5 &&
              ctx.stats.spill_bytes >= (uint64_t)(H * (N / 2) * 2 * 256 * 4) * 128 && ctx.stats.refill_bytes > 0,
              "C = 256 spills its resident scores (%llu bytes, refill %llu) and stays = ref",
              (unsigned long long)ctx.stats.spill_bytes, (unsigned long long)ctx.stats.refill_bytes);
        small.spill = 0;
        c.a.o = o1;
        CHECK((c.a.chunk = 256, lattn_la_chunk(&ctx, &c.a)) == LATTN_E_SBUF_FULL, "without spilling, C = 256 is LATTN_E_SBUF_FULL");
        {   /* the graph verdict: over the profile's unrolled bodies or instructions */
            lattn_tiler_stats gs;
            memset(&gs, 0, sizeof gs);
            gs.unrolled_steps = 48; gs.instructions = 24576;
            CHECK(!lattn_tiler_graph_overflow(&gs, lattn_profile_trn2()), "graph at the limits fits");
            gs.unrolled_steps = 49;
            CHECK(lattn_tiler_graph_overflow(&gs, lattn_profile_trn2()) && !lattn_tiler_graph_overflow(&gs, lattn_profile_cpu()),
                  "graph over 48 bodies overflows on trn2, never on the cpu");
        }
        {
            float *gt = fnew((size_t)(T * H));
            size_t i;
            for (i = 0; i < (size_t)(T * H); i++) gt[i] = -0.01f;
            c.a.g_gamma = NULL; c.a.g = gt; c.a.schedule = LATTN_SCHED_CHUNK_PARALLEL; ctx.profile = lattn_profile_trn2();
            CHECK((c.a.chunk = 128, lattn_la_chunk(&ctx, &c.a)) == LATTN_E_UNSUPPORTED, "chunk-parallel with dynamic gates: unsupported");
            free(gt);
        }
        {   /* the GPU path's shared-memory budget (spec §7): the Laplace head at C = 64 fits a block, at
               C = 128 it does not (LATTN_E_SBUF_FULL: a GPU never spills) */
            la_case g2;
            float *o2 = fnew((size_t)(130 * 192));
            la_make(&g2, &r, 1, 130, 1, 96, 192, LATTN_FMAP_IDENTITY, 0, 0, 0);
            g2.a.g_gamma = gg; g2.a.o = o2;
            small = *lattn_profile_h100(); small.stream_bytes = 2;
            ctx.profile = &small;
            CHECK((g2.a.chunk = 64, lattn_la_chunk(&ctx, &g2.a)) == LATTN_OK && (g2.a.chunk = 128, lattn_la_chunk(&ctx, &g2.a)) == LATTN_E_SBUF_FULL,
                  "h100: the Laplace head fits shared memory at C = 64, not at C = 128");
            free(o2); la_free(&g2);
        }
        if (!g_quick) {   /* the experiment at the Laplace layer's size (spec §6.4-1, -3): C = 128 fits trn2
                             with one token per partition, C = 256 spills its resident scores */
            la_case L2;
            float *o2 = fnew((size_t)(2048 * 16 * 192)), g16[16];
            uint64_t sp[2];
            int k2;
            la_make(&L2, &r, 1, 2048, 16, 96, 192, LATTN_FMAP_IDENTITY, 0, 0, 0);
            lattn_retention_decay(16, g16);
            L2.a.g_gamma = g16; L2.a.o = o2; L2.a.schedule = LATTN_SCHED_CHUNK_PARALLEL;
            small = *lattn_profile_trn2(); small.spill = 1; small.stream_bytes = 2;
            ctx.profile = &small;
            for (k2 = 0; k2 < 2; k2++) {
                memset(&ctx.stats, 0, sizeof ctx.stats);
                CHECK((L2.a.chunk = 128 << k2, lattn_la_chunk(&ctx, &L2.a)) == LATTN_OK, "Laplace mixer on trn2, chunk-parallel, C = %d", 128 << k2);
                sp[k2] = ctx.stats.spill_bytes;
                if (k2 == 0)
                    CHECK(ctx.stats.sbuf_peak_bytes_per_partition >= 131072 + 8192 + 12288 &&
                          ctx.stats.sbuf_peak_bytes_per_partition <= 229376 && ctx.stats.psum_peak_banks <= 5 &&
                          ctx.stats.unrolled_steps == 16 && ctx.stats.instructions == 16 * 16 * 20 + 16 * 7 + 16 &&
                          ctx.stats.dma_in_bytes == 37748736ull && !lattn_tiler_graph_overflow(&ctx.stats, &small),
                          "C = 128: resident scores, masks and states fit trn2 (%llu B per partition)",
                          (unsigned long long)ctx.stats.sbuf_peak_bytes_per_partition);
            }
            CHECK(sp[0] == 0 && sp[1] >= 16ull * 2048 * 256 * 4, "C = 128 does not spill, C = 256 does (%llu bytes)", (unsigned long long)sp[1]);
            L2.a.schedule = LATTN_SCHED_STREAMING;   /* spec §5.4: the streaming forward's HBM bytes, exactly */
            memset(&ctx.stats, 0, sizeof ctx.stats);
            CHECK((L2.a.chunk = 128, lattn_la_chunk(&ctx, &L2.a)) == LATTN_OK && ctx.stats.dma_in_bytes == 25165824ull &&
                  ctx.stats.dma_out_bytes == 12582912ull && ctx.stats.instructions == 16 * 16 * 16 + 16 * 8 &&
                  ctx.stats.psum_peak_banks == 5, "streaming Laplace mixer on trn2: §5.4 bytes, 16 per (head, chunk)");
            free(o2); la_free(&L2);
        }
        {   /* profiles with the same rules and accumulation order give the same bits: trn1 = trn2 = trn3
               (they differ in capacity only), h100 = h200 (in HBM only) */
            const lattn_dev_profile *pp[5];
            float *ob[5];
            int k3;
            pp[0] = lattn_profile_trn1(); pp[1] = lattn_profile_trn2(); pp[2] = lattn_profile_trn3();
            pp[3] = lattn_profile_h100(); pp[4] = lattn_profile_h200();
            c.a.schedule = LATTN_SCHED_STREAMING; c.a.g_gamma = gg; c.a.g = NULL;
            c.a.chunk = 0;
            for (k3 = 0; k3 < 5; k3++) {
                ob[k3] = fnew(c.no); c.a.o = ob[k3];
                ctx.profile = pp[k3];
                CHECK(lattn_la_chunk(&ctx, &c.a) == LATTN_OK && rel_rms(ob[k3], o0, c.no) <= 1e-5, "%s = ref", pp[k3]->name);
            }
            CHECK(same_bits(ob[0], ob[1], c.no) && same_bits(ob[1], ob[2], c.no) && same_bits(ob[3], ob[4], c.no),
                  "trn1 = trn2 = trn3 and h100 = h200, bit for bit");
            for (k3 = 0; k3 < 5; k3++) free(ob[k3]);
            c.a.o = o1; ctx.profile = lattn_profile_trn2();
        }
        c.a.g = NULL; c.a.schedule = 7;
        CHECK((c.a.chunk = 128, lattn_la_chunk(&ctx, &c.a)) == LATTN_E_DOMAIN, "unknown schedule");
        c.a.schedule = LATTN_SCHED_CHUNK_PARALLEL; ctx.profile = lattn_profile_h100();
        CHECK((c.a.chunk = 64, lattn_la_chunk(&ctx, &c.a)) == LATTN_E_UNSUPPORTED, "chunk-parallel on a gpu profile: unsupported");
        ctx.profile = NULL;
        free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* determinism across threads, causality, NaN isolation */
    {
        la_case c;
        int64_t B = 3, T = 3 * C + 5, H = 3, K = 24, V = 40, t0 = C + 3;
        float *o0, *o1, *h0, *h1, *z0, *z1;
        int th, ok = 1;
        la_make(&c, &r, B, T, H, K, V, LATTN_FMAP_IDENTITY, 0, 1, 0);
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        for (form = 1; form <= 2; form++) {
            ok = 1;
            ctx.n_threads = 1; la_run(&ctx, &c, (lattn_form)form, 0, o0, h0, z0);
            for (th = 2; th <= 7; th += (th == 3 ? 4 : 1)) {
                ctx.n_threads = th; la_run(&ctx, &c, (lattn_form)form, 0, o1, h1, z1);
                ok &= same_bits(o0, o1, c.no) && same_bits(h0, h1, c.ns);
            }
            CHECK(ok, "la form %d bit-identical at 1, 2, 3, 7 threads", form);
        }
        ctx.n_threads = 0;
        for (form = 0; form <= 3; form++) {
            int64_t i, bad_iso = 0, bad_causal = 0;
            la_run(&ctx, &c, (lattn_form)form, 0, o0, h0, z0);
            c.q[((1 * T + t0) * H + 1) * K + 2] = NAN;        /* batch 1, head 1, token t0 */
            c.v[((1 * T + t0 + 1) * H + 1) * V + 3] += 1.0f;   /* and a change one token later */
            la_run(&ctx, &c, (lattn_form)form, 0, o1, h1, z1);
            for (i = 0; i < (int64_t)c.no; i++) {
                int64_t b = i / (T * H * V), t = (i / (H * V)) % T, h = (i / V) % H;
                if ((b != 1 || h != 1) && !same_bits(&o0[i], &o1[i], 1)) bad_iso++;
                if (b == 1 && h == 1 && t < t0 && (form == 0 || form == 3) && !same_bits(&o0[i], &o1[i], 1)) bad_causal++;
            }
            CHECK(bad_iso == 0, "la form %d: NaN in one sequence/head leaves the others bit-identical (%lld differ)", form, (long long)bad_iso);
            if (form == 0 || form == 3) CHECK(bad_causal == 0, "la form %d: strictly causal (%lld earlier outputs changed)", form, (long long)bad_causal);
            if (form == 2) {   /* chunked: earlier chunks untouched */
                int64_t t, hv, bad = 0, cstart = (t0 / C) * C;
                for (t = 0; t < cstart; t++) for (hv = 0; hv < V; hv++) if (!same_bits(&o0[((T + t) * H + 1) * V + hv], &o1[((T + t) * H + 1) * V + hv], 1)) bad++;
                CHECK(bad == 0, "la chunk: a NaN stays inside its chunk and later ones");
            }
            c.q[((1 * T + t0) * H + 1) * K + 2] = 0.5f;
            c.v[((1 * T + t0 + 1) * H + 1) * V + 3] -= 1.0f;
        }
        /* identity: no state change if v = 0 ... and linearity in v */
        free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* error paths: nothing is written on error */
    {
        la_case c;
        float *o1 = fnew(64), *h1 = fnew(64);
        lattn_la_args a;
        la_make(&c, &r, 1, 2, 1, 4, 4, LATTN_FMAP_IDENTITY, 0, 0, 0);
        a = c.a; a.o = o1; a.ht = h1;
        a.B = 0;  CHECK(lattn_la_chunk(&ctx, &a) == LATTN_E_SHAPE && strstr(lattn_ctx_error(&ctx), "B"), "B = 0: %s", lattn_ctx_error(&ctx));
        a.B = 1; a.T = -1; CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_SHAPE, "T < 0");
        a.T = 2; a.K = 0; CHECK(lattn_la_parallel(&ctx, &a) == LATTN_E_SHAPE, "K = 0");
        a.K = 4; a.q = NULL; CHECK(lattn_la_chunk(&ctx, &a) == LATTN_E_NULL, "q NULL");
        a.q = c.q; a.H = INT64_MAX / 4; CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_OVERFLOW, "overflowing H: %s", lattn_ctx_error(&ctx));
        a.H = 1; a.fmap = (lattn_fmap)99; CHECK(lattn_la_step(&ctx, &a) == LATTN_E_DOMAIN, "unknown feature map");
        a.fmap = LATTN_FMAP_HEDGEHOG; a.fmap_w = NULL; CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_NULL, "hedgehog without weights");
        a.fmap = LATTN_FMAP_IDENTITY; a.scale = NAN; CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_DOMAIN, "NaN scale");
        a.scale = 0; CHECK((a.chunk = -3, lattn_la_chunk(&ctx, &a)) == LATTN_E_SHAPE, "negative chunk");
        {
            int64_t bad[3] = { 0, 3, 2 };
            a.offsets = bad; a.n_seqs = 2; CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_SHAPE, "decreasing offsets");
            a.offsets = NULL;
        }
        CHECK(lattn_la_ref(&ctx, NULL) == LATTN_E_NULL, "NULL args");
        {
            int ok = 1, i;
            for (i = 0; i < 64; i++) ok &= isnan(o1[i]) && isnan(h1[i]);
            CHECK(ok, "no output written by a failed call");
        }
        free(o1); free(h1);
        la_free(&c);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* gated linear attention: GLA (per-key gates), Simple GLA (per-head), fixed decay (retention)     */
/* ---------------------------------------------------------------------------------------------- */
enum { GATE_KEY = 0, GATE_HEAD = 1, GATE_GAMMA = 2 };
/* Gates for a case: log gates logsigmoid(x)/n, x ~ N(0,1) (fla's test recipe); n = 0 gives the
   extreme logsigmoid(20·N(0,1) - 20) of spec §7.3-iv; every 17th token gets -inf when hard = 1. */
static float *la_gates(la_case *c, lattn_rng *r, int kind, double n, int hard) {
    int64_t T = c->a.B * c->a.T, H = c->a.H, K = c->a.K, per = kind == GATE_KEY ? K : 1;
    size_t cnt = kind == GATE_GAMMA ? (size_t)H : (size_t)(T * H * per), i;
    float *g = fnew(cnt ? cnt : 1);
    for (i = 0; i < cnt; i++) {
        double x = lattn_rng_normal_d(r), y = n > 0 ? x : 20.0 * x - 20.0;
        double ls = (y < 0 ? y : 0.0) - log1p(exp(-fabs(y)));
        g[i] = (float)(n > 0 ? ls / n : ls);
        if (hard && kind != GATE_GAMMA && (i / (size_t)(H * per)) % 17 == 5) g[i] = -HUGE_VALF;
    }
    if (kind == GATE_GAMMA) lattn_retention_decay(H, g);
    c->a.gk = kind == GATE_KEY ? g : NULL; c->a.g = kind == GATE_HEAD ? g : NULL; c->a.g_gamma = kind == GATE_GAMMA ? g : NULL;
    return g;
}

static void test_gla(void) {
    lattn_rng r = lattn_rng_seed(g_seed + 7);
    lattn_ctx ctx;
    static const int chunks[] = { 1, 16, 64, 128, 256 };
    static const char *kinds[3] = { "GLA", "Simple GLA", "fixed decay" };
    lattn_dev_profile flat = *lattn_profile_cpu();    /* no partition limit: chunk 256 */
    int ci, ti, form, kind, variant;
    int64_t C = g_quick ? 16 : 64, Ts[6];
    Ts[0] = 0; Ts[1] = 1; Ts[2] = C - 1; Ts[3] = C; Ts[4] = C + 1; Ts[5] = 3 * C + 5;
    flat.name = "flat"; flat.partitions = 0; flat.mm_kmax = flat.mm_mmax = flat.mm_nmax = 0; flat.transpose_max = 0;
    lattn_ctx_init(&ctx);
    {   /* RetNet's decays */
        float gg[16];
        lattn_retention_decay(16, gg);
        CHECK(fabs(exp(gg[0]) - 0.96875) < 1e-7 && fabs(exp(gg[15]) - (1.0 - ldexp(1.0, -20))) < 1e-9, "retention decays γ_h = 1 - 2^(-5-h)");
    }
    /* every form against _ref: gate kinds, strengths (n = 0.1 strong, 1, 10 weak), sizes, maps,
       normaliser, initial state, batch 3 and varlen; chunk sizes 1 ... 256 */
    for (kind = 0; kind < 3; kind++)
        for (variant = 0; variant < 4; variant++)
            for (ti = 0; ti < 6; ti++) {
                static const double strength[4] = { 0.1, 1.0, 10.0, 1.0 };
                int norm = variant == 2, varlen = variant == 3;
                int64_t K = variant == 0 ? 37 : 16, V = variant == 0 ? 45 : 20, T = Ts[ti], B = varlen ? 1 : 3;
                la_case c;
                float *g, *o0, *o1, *h0, *h1, *z0, *z1;
                if (g_quick && (ti == 2 || ti == 3)) continue;
                if (varlen) T = 3 * T;
                la_make(&c, &r, B, T, 2, K, V, norm ? LATTN_FMAP_ELU1 : LATTN_FMAP_IDENTITY, norm, 1, varlen);
                g = la_gates(&c, &r, kind, strength[variant], variant == 1);
                o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
                CHECK(la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0) == LATTN_OK, "gla ref status: %s", lattn_ctx_error(&ctx));
                for (form = 1; form <= 3; form++) {
                    int nch = form == 2 ? 5 : 1;
                    for (ci = 0; ci < nch; ci++) {
                        double eo, eh, ez = 0;
                        lattn_status s;
                        if (g_quick && form == 2 && (ci == 0 || ci == 3)) continue;
                        ctx.profile = chunks[ci] > 128 ? &flat : NULL;
                        s = la_run(&ctx, &c, (lattn_form)form, chunks[ci], o1, h1, z1);
                        ctx.profile = NULL;
                        eo = rel_rms(o1, o0, c.no); eh = rel_rms(h1, h0, c.ns);
                        if (norm) ez = rel_rms(z1, z0, c.nz);
                        /* variant 1 has hard resets (-inf, clamped to LATTN_LOG_GATE_MIN = -64) every
                           17 tokens: a chunk of 64 tokens or more holds four, its fp32 cumsum reaches
                           -256 (ulp 3e-5) and carries ~1e-5 absolute error in the exponent, the
                           extreme-gate regime of spec §7.2 (bound 1e-4; chunk 128 at T = 65 measured
                           1.2e-5 at LATTN_TEST_SEED = 7); so does the parallel form's, over the whole sequence */
                        double tol = variant == 1 && (form == 1 || chunks[ci] >= 64) ? 1e-4 : 1e-5;
                        CHECK(s == LATTN_OK && eo <= tol && eh <= tol && ez <= tol,
                              "%s form %d chunk %d vs ref (variant %d T=%lld K=%lld V=%lld): o %g ht %g zt %g [%s]",
                              kinds[kind], form, chunks[ci], variant, (long long)T, (long long)K, (long long)V, eo, eh, ez,
                              s ? lattn_ctx_error(&ctx) : "");
                    }
                }
                free(g); free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
                la_free(&c);
            }
    /* the three routes of the per-key intra scores at chunk 32: weak gates (reference: the chunk's
       start), a strong first gate then weak ones (reference: the block's first query), strong gates
       throughout (one product per query); K = 13 and 130 (two partition tiles) */
    for (variant = 0; variant < 2; variant++) {
        const int64_t T = 100, H = 2, K = variant ? 130 : 13;
        la_case c;
        float *gk, *o0, *o1, *h0, *h1, *z;
        int64_t i, d;
        double eo, eh;
        la_make(&c, &r, 1, T, H, K, 19, LATTN_FMAP_IDENTITY, 0, 1, 0);
        gk = fnew((size_t)(T * H * K));
        for (i = 0; i < T; i++)
            for (d = 0; d < H * K; d++)
                gk[i * H * K + d] = i == 32 ? -25.0f : i < 64 || i >= 96 ? -0.05f : -2.0f - 0.01f * (float)(d % 7);
        c.a.gk = gk;
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z = fnew(c.nz);
        CHECK(la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z) == LATTN_OK && la_run(&ctx, &c, LATTN_FORM_CHUNK, 32, o1, h1, z) == LATTN_OK,
              "GLA routes: %s", lattn_ctx_error(&ctx));
        eo = rel_rms(o1, o0, c.no); eh = rel_rms(h1, h0, c.ns);
        CHECK(eo <= 1e-5 && eh <= 1e-5, "GLA chunk 32, the three score routes, K = %lld: o %g ht %g", (long long)K, eo, eh);
        free(gk); free(o0); free(o1); free(h0); free(h1); free(z);
        la_free(&c);
    }
    /* the extreme gates of spec §7.3-iv: finite everywhere, ratio <= 1e-4 */
    for (kind = 0; kind < 2; kind++) {
        la_case c;
        float *g, *o0, *o1, *h0, *h1, *z0, *z1;
        int64_t T = g_quick ? 150 : 300;
        size_t i;
        int fin = 1;
        la_make(&c, &r, 1, T, 2, 32, 24, LATTN_FMAP_IDENTITY, 0, 1, 0);
        g = la_gates(&c, &r, kind, 0.0, 0);
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
        for (ci = 2; ci <= 3; ci++) {
            double eo, eh;
            la_run(&ctx, &c, LATTN_FORM_CHUNK, chunks[ci], o1, h1, z1);
            for (i = 0; i < c.no; i++) fin &= isfinite(o1[i]);
            eo = rel_rms(o1, o0, c.no); eh = rel_rms(h1, h0, c.ns);
            CHECK(fin && eo <= 1e-4 && eh <= 1e-4, "%s extreme gates, chunk %d: finite, o %g ht %g", kinds[kind], chunks[ci], eo, eh);
        }
        free(g); free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* identities (spec §7.3-ii, ix): Simple GLA = GLA with the gate broadcast over K; fixed decay =
       Simple GLA with a constant gate; linear attention = GLA with gates 0; gates of -inf forget */
    {
        la_case c;
        int64_t B = 2, T = 2 * C + 3, H = 2, K = 12, V = 10, i, j;
        float *g, *gk, *gc, *o0, *o1, *h0, *h1, *z0, *z1;
        double e;
        la_make(&c, &r, B, T, H, K, V, LATTN_FMAP_IDENTITY, 0, 1, 0);
        g = la_gates(&c, &r, GATE_HEAD, 1.0, 0);
        gk = fnew((size_t)(B * T * H * K)); gc = fnew((size_t)(B * T * H));
        for (i = 0; i < B * T * H; i++) for (j = 0; j < K; j++) gk[i * K + j] = g[i];
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        for (form = 0; form <= 2; form += 2) {
            c.a.g = g; c.a.gk = NULL; la_run(&ctx, &c, (lattn_form)form, 0, o0, h0, z0);
            c.a.g = NULL; c.a.gk = gk; la_run(&ctx, &c, (lattn_form)form, 0, o1, h1, z1);
            e = rel_rms(o1, o0, c.no);
            CHECK(e <= (form ? 1e-5 : 1e-7), "Simple GLA = GLA with the gate broadcast (form %d): %g", form, e);
        }
        c.a.gk = NULL; c.a.g_gamma = NULL;
        {
            float gg[2];
            lattn_retention_decay(H, gg);
            for (i = 0; i < B * T * H; i++) gc[i] = gg[i % H];
            c.a.g = gc; la_run(&ctx, &c, LATTN_FORM_CHUNK, 0, o0, h0, z0);
            c.a.g = NULL; c.a.g_gamma = gg; la_run(&ctx, &c, LATTN_FORM_CHUNK, 0, o1, h1, z1);
            e = rel_rms(o1, o0, c.no);
            CHECK(e <= 1e-6, "fixed decay = Simple GLA with a constant gate: %g", e);
            c.a.g_gamma = NULL;
        }
        for (i = 0; i < B * T * H * K; i++) gk[i] = 0.0f;
        for (form = 0; form <= 3; form++) {
            c.a.gk = NULL; la_run(&ctx, &c, (lattn_form)form, 0, o0, h0, z0);
            c.a.gk = gk; la_run(&ctx, &c, (lattn_form)form, 0, o1, h1, z1);
            e = rel_rms(o1, o0, c.no);
            CHECK(e <= (form == 0 ? 0.0 : 1e-6), "linear attention = GLA with gates 0 (form %d): %g", form, e);
        }
        for (i = 0; i < B * T * H * K; i++) gk[i] = -HUGE_VALF;
        c.a.gk = gk; la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
        {   /* α = 0: o_t = s (q_t·k_t) v_t */
            double num = 0, den = 0;
            for (i = 0; i < B * T * H; i++)
                for (j = 0; j < V; j++) {
                    double qk = 0, want;
                    int64_t m;
                    for (m = 0; m < K; m++) qk += (double)c.q[i * K + m] * c.k[i * K + m];
                    want = qk * c.v[i * V + j] / sqrt((double)K);
                    num += (o0[i * V + j] - want) * (o0[i * V + j] - want); den += want * want;
                }
            CHECK(sqrt(num / den) <= 1e-6, "gates of -inf: o_t = s(q_t·k_t)v_t (%g)", sqrt(num / den));
            la_run(&ctx, &c, LATTN_FORM_CHUNK, 0, o1, h1, z1);
            e = rel_rms(o1, o0, c.no);
            CHECK(e <= 1e-5, "gates of -inf, chunked: %g", e);
        }
        /* state passing (§7.3-v): run(x[0:T]) = run(x[T1:T], S0 = final state of x[0:T1]) */
        {
            la_case d;
            int64_t T1 = C + 5;
            float *oa, *ha, *gd;
            la_make(&d, &r, 1, T, H, K, V, LATTN_FMAP_IDENTITY, 0, 0, 0);
            gd = la_gates(&d, &r, GATE_KEY, 1.0, 0);
            oa = fnew(d.no); ha = fnew(d.ns);
            d.a.o = o0; d.a.ht = h0; lattn_la_chunk(&ctx, &d.a);
            d.a.T = T1; d.a.o = oa; d.a.ht = ha; lattn_la_chunk(&ctx, &d.a);
            d.a.T = T - T1; d.a.q += T1 * H * K; d.a.k += T1 * H * K; d.a.v += T1 * H * V; d.a.gk += T1 * H * K;
            d.a.h0 = ha; d.a.o = oa + T1 * H * V; d.a.ht = h1; lattn_la_chunk(&ctx, &d.a);
            CHECK(rel_rms(oa, o0, d.no) <= 1e-5 && rel_rms(h1, h0, d.ns) <= 1e-5, "GLA state passing at T1 = C + 5: o %g ht %g",
                  rel_rms(oa, o0, d.no), rel_rms(h1, h0, d.ns));
            free(oa); free(ha); free(gd);
            la_free(&d);
        }
        free(g); free(gk); free(gc); free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* profiles: trn2 (C = 128, K' = 160 spans 2 partition tiles) and h100 (C = 64, flat) */
    for (kind = 0; kind < 3; kind++) {
        la_case c;
        float *g, *o0, *o1, *h0, *h1, *z0, *z1;
        int pi;
        la_make(&c, &r, 1, g_quick ? 150 : 300, 2, kind == GATE_KEY ? 160 : 96, 192, LATTN_FMAP_IDENTITY, 0, 1, 0);
        g = la_gates(&c, &r, kind, 1.0, 0);
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        la_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0, z0);
        for (pi = 0; pi < 2; pi++) {
            double eo, eh;
            lattn_status s;
            ctx.profile = pi ? lattn_profile_h100() : lattn_profile_trn2();
            s = la_run(&ctx, &c, LATTN_FORM_CHUNK, pi ? 16 : 0, o1, h1, z1);     /* gated tiles of C = 64 overflow 227 KiB */
            eo = rel_rms(o1, o0, c.no); eh = rel_rms(h1, h0, c.ns);
            CHECK(s == LATTN_OK && eo <= 1e-5 && eh <= 1e-5, "%s chunk on %s: o %g ht %g [%s]", kinds[kind], ctx.profile->name, eo, eh,
                  s ? lattn_ctx_error(&ctx) : "");
        }
        ctx.profile = NULL;
        free(g); free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* determinism across threads */
    for (kind = 0; kind < 3; kind++) {
        la_case c;
        float *g, *o0, *o1, *h0, *h1, *z0, *z1;
        int th, ok = 1;
        la_make(&c, &r, 3, 2 * C + 7, 3, 24, 40, LATTN_FMAP_IDENTITY, 0, 1, 0);
        g = la_gates(&c, &r, kind, 1.0, 0);
        o0 = fnew(c.no); o1 = fnew(c.no); h0 = fnew(c.ns); h1 = fnew(c.ns); z0 = fnew(c.nz); z1 = fnew(c.nz);
        for (form = 1; form <= 2; form++) {
            ctx.n_threads = 1; la_run(&ctx, &c, (lattn_form)form, 0, o0, h0, z0);
            for (th = 2; th <= 7; th += (th == 3 ? 4 : 1)) {
                ctx.n_threads = th; la_run(&ctx, &c, (lattn_form)form, 0, o1, h1, z1);
                ok &= same_bits(o0, o1, c.no) && same_bits(h0, h1, c.ns);
            }
        }
        ctx.n_threads = 0;
        CHECK(ok, "%s parallel and chunk bit-identical at 1, 2, 3, 7 threads", kinds[kind]);
        free(g); free(o0); free(o1); free(h0); free(h1); free(z0); free(z1);
        la_free(&c);
    }
    /* error paths: nothing is written on error */
    {
        la_case c;
        float *o1 = fnew(64), *h1 = fnew(64), g[8], gk[32];
        lattn_la_args a;
        int i, ok = 1;
        la_make(&c, &r, 1, 2, 1, 4, 4, LATTN_FMAP_IDENTITY, 0, 0, 0);
        for (i = 0; i < 8; i++) g[i] = -0.5f;
        for (i = 0; i < 32; i++) gk[i] = -0.5f;
        a = c.a; a.o = o1; a.ht = h1; a.g = g;
        g[1] = 0.25f; CHECK(lattn_la_chunk(&ctx, &a) == LATTN_E_DOMAIN && strstr(lattn_ctx_error(&ctx), "<= 0"), "positive log gate: %s", lattn_ctx_error(&ctx));
        g[1] = NAN; CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_DOMAIN, "NaN log gate");
        g[1] = -HUGE_VALF; a.gk = gk; CHECK(lattn_la_parallel(&ctx, &a) == LATTN_E_DOMAIN, "two gates at once");
        a.g = NULL; a.fmap = LATTN_FMAP_HEDGEHOG; CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_UNSUPPORTED, "per-key gates with hedgehog (K' = 2K)");
        a.fmap = LATTN_FMAP_IDENTITY; a.K = 0; CHECK(lattn_la_chunk(&ctx, &a) == LATTN_E_SHAPE, "K = 0");
        a.K = 4; a.V = 0; CHECK(lattn_la_chunk(&ctx, &a) == LATTN_E_SHAPE, "V = 0");
        a.V = 4; CHECK((a.chunk = -1, lattn_la_chunk(&ctx, &a)) == LATTN_E_SHAPE, "chunk < 0");
        a.v = NULL; CHECK(lattn_la_step(&ctx, &a) == LATTN_E_NULL, "NULL v");
        for (i = 0; i < 64; i++) ok &= isnan(o1[i]) && isnan(h1[i]);
        CHECK(ok, "no output written by a failed gated call");
        free(o1); free(h1);
        la_free(&c);
    }
    {   /* the gate check's vector filter: 2400 per-key gates (two blocks and a tail); -inf (first
           block only), 0 and -0 pass; the first NaN, +inf or positive gate is named wherever it lies */
        static const int64_t at[4] = { 1500, 2399, 1030, 7 };
        static const float bad[4] = { NAN, HUGE_VALF, 1e-45f, 0.5f };
        la_case c;
        float *gk = fnew(2400), *o1 = fnew(300 * 2 * 4);
        char want[64];
        int i, j;
        la_make(&c, &r, 1, 300, 2, 4, 4, LATTN_FMAP_IDENTITY, 0, 0, 0);
        c.a.o = o1; c.a.gk = gk;
        for (i = 0; i < 2400; i++) gk[i] = i % 7 == 0 && i < 1024 ? -HUGE_VALF : i % 11 == 0 ? 0.0f : i % 13 == 0 ? -0.0f : -0.5f;
        CHECK(lattn_la_chunk(&ctx, &c.a) == LATTN_OK, "gates with -inf, 0 and -0 pass the check: %s", lattn_ctx_error(&ctx));
        for (j = 0; j < 4; j++) {
            const float keep = gk[at[j]];
            gk[at[j]] = bad[j];
            snprintf(want, sizeof want, "log gate %lld is", (long long)at[j]);
            CHECK(lattn_la_chunk(&ctx, &c.a) == LATTN_E_DOMAIN && strstr(lattn_ctx_error(&ctx), want),
                  "gate %g at %lld is named: %s", (double)bad[j], (long long)at[j], lattn_ctx_error(&ctx));
            gk[at[j]] = keep;
        }
        free(gk); free(o1);
        la_free(&c);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* allocation failure injection: fail the k-th allocation of a call, for every k                 */
/* ---------------------------------------------------------------------------------------------- */
static void test_alloc(void) {
    lattn_rng r = lattn_rng_seed(g_seed);
    la_case c;
    counting_alloc ta;
    lattn_ctx ctx;
    float *o = NULL, *ht = NULL;
    int form, k, bad = 0, total = 0;
    la_make(&c, &r, 2, 70, 2, 12, 10, LATTN_FMAP_ELU1, 1, 1, 0);
    o = fnew(c.no); ht = fnew(c.ns);
    for (form = 0; form < 4; form++) {
        for (k = 1; k < 40; k++) {
            lattn_status s;
            lattn_la_args a = c.a;
            float *zt = fnew(c.nz);
            lattn_ctx_init(&ctx);
            memset(&ta, 0, sizeof ta); ta.fail_at = k;
            ctx.allocator.alloc = ta_alloc; ctx.allocator.free = ta_free; ctx.allocator.user = &ta;
            ctx.n_threads = 2;
            a.o = o; a.ht = ht; a.zt = zt;
            if (form == 0) s = lattn_la_ref(&ctx, &a);
            else if (form == 1) s = lattn_la_parallel(&ctx, &a);
            else if (form == 2) s = (a.chunk = 16, lattn_la_chunk(&ctx, &a));
            else {
                lattn_shortconv_args cv;
                memset(&cv, 0, sizeof cv);
                cv.B = 2; cv.T = 70; cv.D = 12; cv.W = 4; cv.x = c.q; cv.w = c.fw; cv.y = o;
                s = lattn_shortconv_chunk(&ctx, &cv);
            }
            free(zt);
            if (ta.live != 0) bad++;
            if (ta.count < k) break;                          /* the call needed fewer allocations */
            total++;
            if (s != LATTN_E_NOMEM) bad++;
        }
    }
    CHECK(bad == 0 && total >= 6, "failing the k-th allocation: clean LATTN_E_NOMEM, nothing leaked (%d injections, %d bad)", total, bad);
    free(o); free(ht);
    la_free(&c);
}

/* ---------------------------------------------------------------------------------------------- */
/* the Laplace layer and model                                                                    */
/* ---------------------------------------------------------------------------------------------- */
/* A small model with every weight moved off its initial value (norm weights and biases included),
   so that each path of the layer carries signal. */
static void laplace_model(lattn_ctx *ctx, lattn_laplace_model *m, const lattn_laplace_config *c, lattn_rng *r) {
    size_t i;
    lattn_status s = lattn_laplace_init(ctx, m, c, 5);
    CHECK(s == LATTN_OK, "laplace init: %s", lattn_ctx_error(ctx));
    for (i = 0; s == LATTN_OK && i < m->n_params; i++) m->arena[i] += 0.1f * (float)lattn_rng_normal_d(r);
}
/* forward, or T calls of step (decode = 1), over B sequences of tokens or hidden states. */
static lattn_status laplace_run(lattn_ctx *ctx, const lattn_laplace_model *m, int decode, int64_t B, int64_t T,
                                const int32_t *tok, const float *x, float *out, float *state) {
    int64_t nin = m->cfg.vocab > 0 ? 1 : m->cfg.D, nout = m->cfg.vocab > 0 ? m->cfg.vocab : m->cfg.D, t, b;
    float *xi, *oi;
    int32_t *ti;
    lattn_status s = LATTN_OK;
    if (decode == 2) return lattn_laplace_forward_ref(ctx, m, B, T, tok, x, out, state, NULL);
    if (!decode) return lattn_laplace_forward(ctx, m, B, T, tok, x, out, state);
    xi = fnew((size_t)(B * nin)); oi = fnew((size_t)(B * nout)); ti = (int32_t *)malloc((size_t)B * sizeof(int32_t));
    for (t = 0; t < T && s == LATTN_OK; t++) {
        for (b = 0; b < B; b++) {
            if (tok) ti[b] = tok[b * T + t]; else memcpy(xi + b * nin, x + (b * T + t) * nin, (size_t)nin * sizeof(float));
        }
        s = lattn_laplace_step(ctx, m, B, tok ? ti : NULL, tok ? NULL : xi, oi, state);
        for (b = 0; b < B; b++) memcpy(out + (b * T + t) * nout, oi + b * nout, (size_t)nout * sizeof(float));
    }
    free(xi); free(oi); free(ti);
    return s;
}

/* init + forward of a Laplace model; the state must be untouched when the forward fails */
typedef struct { const lattn_laplace_config *c; int64_t SF; float *o, *s, *s0; } laplace_alloc_run;
static lattn_status laplace_alloc_run_fn(lattn_ctx *ctx, void *user) {
    laplace_alloc_run *u = (laplace_alloc_run *)user;
    int32_t tok[6] = { 1, 2, 3, 4, 5, 6 };
    lattn_laplace_model mb;
    lattn_status st = lattn_laplace_init(ctx, &mb, u->c, 3);
    if (st == LATTN_OK) st = lattn_laplace_forward(ctx, &mb, 2, 3, tok, NULL, u->o, u->s);
    lattn_laplace_free(ctx, &mb);
    return st != LATTN_OK && !same_bits(u->s, u->s0, (size_t)(2 * u->SF)) ? LATTN_E_DOMAIN : st;   /* partial write */
}
static void test_laplace(void) {
    lattn_rng r = lattn_rng_seed(g_seed + 11);
    lattn_ctx ctx;
    lattn_laplace_config c = lattn_laplace_config_small();
    lattn_laplace_model m;
    int gate, hidden;
    int64_t B = 3, T = g_quick ? 19 : 45, SF;
    lattn_ctx_init(&ctx);
    {   /* the Laplace 3B shapes (spec §6.4, §7.3-xiv) */
        lattn_laplace_config lc = lattn_laplace_config_3b();
        int64_t nm = 0, np = lattn__laplace_matrix_params(&lc, &nm);
        CHECK(lattn__laplace_state_floats(&lc) == 7372800 && 4 * lattn__laplace_state_floats(&lc) == 29491200,
              "Laplace 3B state: 7,372,800 floats = 29,491,200 bytes (%lld)", (long long)lattn__laplace_state_floats(&lc));
        CHECK(np == 2717908992LL && nm == 96, "Laplace 3B matrices: %lld parameters in %lld matrices", (long long)np, (long long)nm);
        lc.D = INT64_MAX / 2;
        CHECK(lattn__laplace_state_floats(&lc) == -1 && lattn__laplace_matrix_params(&lc, &nm) == -1 && nm == -1, "overflowing Laplace shapes");
        lc.D = 0;
        CHECK(lattn__laplace_state_floats(&lc) == -1 && lattn__laplace_state_floats(NULL) == -1, "zero or missing Laplace shapes");
    }
    /* the arena: names, shapes, parameter count (matrices + norms + conv + embedding) */
    c.K = 12; c.V = 20; c.ffn = 88;                  /* head dims off the vector width */
    SF = lattn__laplace_state_floats(&c);
    laplace_model(&ctx, &m, &c, &r);
    {
        lattn_tensor *q = lattn_laplace_tensor(&m, "layers.1.attn.qkvg_proj.weight"), *e = lattn_laplace_tensor(&m, "embeddings.weight");
        int64_t small = c.n_layers * (4 * c.D + c.D * c.conv_w + c.V) + 2 * c.D + c.vocab * c.D;
        CHECK(q && q->ndim == 2 && q->shape[0] == c.H * (2 * c.K + 2 * c.V) && q->shape[1] == c.D && e && e->shape[0] == c.vocab,
              "named tensors with their shapes");
        CHECK((int64_t)m.n_params == lattn__laplace_matrix_params(&c, NULL) + small && m.n_tensors == 11 * c.n_layers + 3,
              "arena: %zu parameters in %lld tensors", m.n_params, (long long)m.n_tensors);
        CHECK(lattn_laplace_tensor(&m, "layers.2.attn.conv.weight") == NULL && lattn_laplace_tensor(NULL, "x") == NULL, "unknown names: NULL");
        CHECK(fabs(exp(m.g_gamma[1]) - 0.984375) < 1e-7, "the fixed decays are RetNet's");
    }
    /* every gate mode; tokens -> logits and hidden states -> hidden states: forward and T steps
       against the double reference, outputs and final states, from a nonzero initial state */
    for (hidden = 0; hidden < 2; hidden++)
        for (gate = 0; gate < 4; gate++) {
            lattn_laplace_config cc = c;
            lattn_laplace_model mm;
            int64_t nout, ni, d;
            int32_t *tok;
            float *x = NULL, *s0, *out[3], *st[3];
            cc.gate_mode = (lattn_out_gate)gate;
            if (hidden) { cc.vocab = 0; cc.n_layers = 1; }
            laplace_model(&ctx, &mm, &cc, &r);
            nout = hidden ? cc.D : cc.vocab; ni = B * T;
            tok = (int32_t *)malloc((size_t)ni * sizeof(int32_t));
            for (d = 0; d < ni; d++) tok[d] = hidden ? 0 : (int32_t)(lattn_rng_next(&r) % (uint64_t)cc.vocab);
            if (hidden) x = fnormal(&r, (size_t)(ni * cc.D));
            s0 = fnormal(&r, (size_t)(B * lattn__laplace_state_floats(&cc)));
            for (d = 0; d < 3; d++) {
                size_t ns = (size_t)(B * lattn__laplace_state_floats(&cc));
                lattn_status s;
                out[d] = fnew((size_t)(ni * nout)); st[d] = fdup(s0, ns);
                s = laplace_run(&ctx, &mm, d == 0 ? 2 : d - 1, B, T, hidden ? NULL : tok, x, out[d], st[d]);
                CHECK(s == LATTN_OK, "laplace run %d: %s", (int)d, lattn_ctx_error(&ctx));
                if (d > 0)
                    CHECK(rel_rms(out[d], out[0], (size_t)(ni * nout)) <= 1e-5 && rel_rms(st[d], st[0], ns) <= 1e-5,
                          "Laplace %s (%s, gate %d) vs _ref: out %.3g state %.3g", d == 1 ? "forward" : "step x T",
                          hidden ? "hidden states" : "tokens", gate, rel_rms(out[d], out[0], (size_t)(ni * nout)), rel_rms(st[d], st[0], ns));
            }
            for (d = 0; d < 3; d++) { free(out[d]); free(st[d]); }
            free(tok); free(x); free(s0);
            lattn_laplace_free(&ctx, &mm);
        }
    {   /* prefill in two calls = one call; T = 0 and T = 1; no state; threads bit-identical */
        int64_t T1 = 7, V = c.vocab, i;
        int32_t *tok = (int32_t *)malloc((size_t)(B * T) * sizeof(int32_t)), *tA, *tB;
        float *o1 = fnew((size_t)(B * T * V)), *o2 = fnew((size_t)(B * T * V)), *s1 = fnormal(&r, (size_t)(B * SF));
        float *s2 = fdup(s1, (size_t)(B * SF)), *s3 = fdup(s1, (size_t)(B * SF)), *oA, *oB;
        int same = 1;
        for (i = 0; i < B * T; i++) tok[i] = (int32_t)(lattn_rng_next(&r) % (uint64_t)V);
        CHECK(lattn_laplace_forward(&ctx, &m, B, T, tok, NULL, o1, s1) == LATTN_OK, "prefill");
        tA = (int32_t *)malloc((size_t)(B * T1) * sizeof(int32_t)); tB = (int32_t *)malloc((size_t)(B * (T - T1)) * sizeof(int32_t));
        for (i = 0; i < B; i++) {
            memcpy(tA + i * T1, tok + i * T, (size_t)T1 * sizeof(int32_t));
            memcpy(tB + i * (T - T1), tok + i * T + T1, (size_t)(T - T1) * sizeof(int32_t));
        }
        oA = fnew((size_t)(B * T1 * V)); oB = fnew((size_t)(B * (T - T1) * V));
        CHECK(lattn_laplace_forward(&ctx, &m, B, T1, tA, NULL, oA, s2) == LATTN_OK &&
              lattn_laplace_forward(&ctx, &m, B, T - T1, tB, NULL, oB, s2) == LATTN_OK, "prefill in two calls");
        for (i = 0; i < B; i++) {
            memcpy(o2 + i * T * V, oA + i * T1 * V, (size_t)(T1 * V) * sizeof(float));
            memcpy(o2 + (i * T + T1) * V, oB + i * (T - T1) * V, (size_t)((T - T1) * V) * sizeof(float));
        }
        CHECK(rel_rms(o2, o1, (size_t)(B * T * V)) <= 1e-5 && rel_rms(s2, s1, (size_t)(B * SF)) <= 1e-5,
              "two prefill calls = one: %.3g %.3g", rel_rms(o2, o1, (size_t)(B * T * V)), rel_rms(s2, s1, (size_t)(B * SF)));
        poison(o2, (size_t)(B * T * V)); memcpy(s2, s3, (size_t)(B * SF) * sizeof(float));
        CHECK(lattn_laplace_forward(&ctx, &m, B, 0, tok, NULL, o2, s2) == LATTN_OK && same_bits(s2, s3, (size_t)(B * SF)) && o2[0] != o2[0],
              "T = 0: state unchanged, nothing written");
        CHECK(lattn_laplace_forward(&ctx, &m, B, 1, tok, NULL, o2, NULL) == LATTN_OK && rel_rms(o2, o2, (size_t)(B * V)) == 0,
              "T = 1 without a state");
#ifdef _OPENMP
        {
            int nt;
            float *ref = NULL;
            for (nt = 1; nt <= 3; nt++) {
                memcpy(s2, s3, (size_t)(B * SF) * sizeof(float));
                ctx.n_threads = nt;
                lattn_laplace_forward(&ctx, &m, B, T, tok, NULL, o2, s2);
                if (!ref) ref = fdup(o2, (size_t)(B * T * V)), memcpy(s1, s2, (size_t)(B * SF) * sizeof(float));
                else same &= same_bits(o2, ref, (size_t)(B * T * V)) && same_bits(s2, s1, (size_t)(B * SF));
            }
            ctx.n_threads = 0;
            free(ref);
        }
#endif
        CHECK(same, "Laplace forward bit-identical on 1, 2, 3 threads");
        free(tok); free(tA); free(tB); free(o1); free(o2); free(oA); free(oB); free(s1); free(s2); free(s3);
    }
    {   /* weights through safetensors: in memory and through a file; the same bits come back */
        unsigned char *buf = NULL;
        size_t size = 0;
        lattn_st_file f;
        lattn_laplace_model m2;
        CHECK(lattn_laplace_serialize(&ctx, &m, &buf, &size) == LATTN_OK && lattn_st_parse(&ctx, buf, size, &f) == LATTN_OK,
              "serialize the weights");
        CHECK(lattn_laplace_init_st(&ctx, &m2, &f, "") == LATTN_OK && m2.n_params == m.n_params &&
              same_bits(m2.arena, m.arena, m.n_params) && memcmp(&m2.cfg, &m.cfg, sizeof m.cfg) == 0, "load: the same weights and configuration");
        lattn_laplace_free(&ctx, &m2);
        CHECK(lattn_laplace_init_st(&ctx, &m2, &f, "in.") == LATTN_E_FORMAT && m2.arena == NULL, "load with a prefix the file lacks: LATTN_E_FORMAT");
        lattn_st_free(&ctx, &f);
        {   /* hostile variants: a missing tensor, a wrong shape, bad or missing metadata, truncation */
            lattn_st_entry *e = (lattn_st_entry *)malloc((size_t)m.n_tensors * sizeof *e);
            int64_t i, bad_shape[2] = { 3, 3 };
            const char *meta[20];
            int v, fails = 0;
            static const char *const badval[][2] = {
                { "laplace.D", "0" }, { "laplace.D", "64x" }, { "laplace.D", "99999999999999999999" },
                { "laplace.H", "4611686018427387904" }, { "laplace.gate_mode", "tanh" }, { "laplace.norm_eps", "-1" },
                { "laplace.n_layers", "" }, { "laplace.vocab", "-2" } };
            char vals[10][32];
            static const char *const keys[10] = { "laplace.n_layers", "laplace.D", "laplace.H", "laplace.K", "laplace.V",
                                                  "laplace.ffn", "laplace.conv_w", "laplace.vocab", "laplace.gate_mode", "laplace.norm_eps" };
            snprintf(vals[0], 32, "%lld", (long long)c.n_layers); snprintf(vals[1], 32, "%lld", (long long)c.D);
            snprintf(vals[2], 32, "%lld", (long long)c.H); snprintf(vals[3], 32, "%lld", (long long)c.K);
            snprintf(vals[4], 32, "%lld", (long long)c.V); snprintf(vals[5], 32, "%lld", (long long)c.ffn);
            snprintf(vals[6], 32, "%lld", (long long)c.conv_w); snprintf(vals[7], 32, "%lld", (long long)c.vocab);
            snprintf(vals[8], 32, "rmsnorm_swish"); snprintf(vals[9], 32, "1e-5");
            for (i = 0; i < m.n_tensors; i++) {
                e[i].name = m.tensors[i].name; e[i].dtype = LATTN_DTYPE_F32; e[i].ndim = m.tensors[i].ndim;
                e[i].shape = m.tensors[i].shape; e[i].data = m.tensors[i].data;
            }
            for (v = -3; v < (int)(sizeof badval / sizeof badval[0]); v++) {
                int64_t n = m.n_tensors, nmeta = 10;
                unsigned char *b2 = NULL;
                size_t s2 = 0;
                lattn_status s;
                for (i = 0; i < 10; i++) { meta[2 * i] = keys[i]; meta[2 * i + 1] = vals[i]; }
                if (v == -3) n--;                                   /* the last tensor missing */
                if (v == -2) e[4].shape = bad_shape;                /* a misshapen tensor */
                if (v == -1) nmeta = 9;                             /* no norm_eps */
                for (i = 0; v >= 0 && i < 10; i++) if (strcmp(keys[i], badval[v][0]) == 0) meta[2 * i + 1] = badval[v][1];
                if (v == -2) { e[4].data = malloc(9 * sizeof(float)); }
                lattn_st_serialize(&ctx, e, n, meta, nmeta, &b2, &s2);
                if (lattn_st_parse(&ctx, b2, s2, &f) == LATTN_OK) {
                    s = lattn_laplace_init_st(&ctx, &m2, &f, "");
                    if (s == LATTN_OK || m2.arena != NULL) { fails++; printf("  hostile variant %d loaded\n", v); }
                    if (s == LATTN_OK) lattn_laplace_free(&ctx, &m2);
                    lattn_st_free(&ctx, &f);
                } else fails++;
                if (v == -2) { free((void *)e[4].data); e[4].shape = m.tensors[4].shape; e[4].data = m.tensors[4].data; }
                lattn_free(&ctx, b2);
            }
            CHECK(fails == 0, "hostile weight files: missing tensor, wrong shape, missing or bad metadata all refused (%d loaded)", fails);
            CHECK(lattn_st_parse(&ctx, buf, size - 7, &f) == LATTN_E_FORMAT, "a truncated weight file is refused");
            free(e);
        }
        lattn_free(&ctx, buf);
#ifndef LATTN_NO_STDIO
        {
            const char *path = "build/laplace_test.safetensors";
            lattn_status s = lattn_laplace_save(&ctx, &m, path);
            if (s == LATTN_E_IO) { path = "laplace_test.safetensors"; s = lattn_laplace_save(&ctx, &m, path); }
            CHECK(s == LATTN_OK && lattn_laplace_init_file(&ctx, &m2, path) == LATTN_OK && same_bits(m2.arena, m.arena, m.n_params),
                  "save and load through a file");
            lattn_laplace_free(&ctx, &m2);
            remove(path);
            CHECK(lattn_laplace_init_file(&ctx, &m2, "tests/no/such.safetensors") == LATTN_E_IO && m2.arena == NULL, "load a missing file: LATTN_E_IO");
        }
#endif
    }
    {   /* errors: nothing written */
        int32_t tok[4] = { 1, 2, 3, 4 };
        float *o = fnew((size_t)(4 * c.vocab)), *s = fnormal(&r, (size_t)(2 * SF)), *s0 = fdup(s, (size_t)(2 * SF));
        lattn_laplace_config bad = c;
        lattn_laplace_model mb;
        CHECK(lattn_laplace_forward(&ctx, NULL, 2, 2, tok, NULL, o, s) == LATTN_E_NULL, "forward: NULL model");
        CHECK(lattn_laplace_forward(&ctx, &m, 2, 2, NULL, NULL, o, s) == LATTN_E_NULL, "forward: NULL tokens");
        CHECK(lattn_laplace_forward(&ctx, &m, 2, 2, tok, NULL, NULL, s) == LATTN_E_NULL, "forward: NULL output");
        CHECK(lattn_laplace_forward(&ctx, &m, 0, 2, tok, NULL, o, s) == LATTN_E_SHAPE, "forward: B = 0");
        CHECK(lattn_laplace_forward_ref(&ctx, &m, 2, -1, tok, NULL, o, s, NULL) == LATTN_E_SHAPE, "forward_ref: T < 0");
        CHECK(lattn_laplace_forward(&ctx, &m, INT64_MAX / 2, 4, tok, NULL, o, s) == LATTN_E_OVERFLOW, "forward: overflowing B·T");
        tok[3] = (int32_t)c.vocab;
        CHECK(lattn_laplace_forward(&ctx, &m, 2, 2, tok, NULL, o, s) == LATTN_E_DOMAIN, "forward: token id = vocab");
        tok[3] = -1;
        CHECK(lattn_laplace_step(&ctx, &m, 4, tok, NULL, o, s) == LATTN_E_DOMAIN, "step: negative token id");
        tok[3] = 4;
        CHECK(lattn_laplace_step(&ctx, &m, 2, tok, NULL, o, NULL) == LATTN_E_NULL, "step: NULL state");
        CHECK(o[0] != o[0] && same_bits(s, s0, (size_t)(2 * SF)), "after the errors: output and state untouched");
        bad.D = 0;   CHECK(lattn_laplace_init(&ctx, &mb, &bad, 1) == LATTN_E_SHAPE && mb.arena == NULL, "init: D = 0");
        bad = c; bad.gate_mode = (lattn_out_gate)7; CHECK(lattn_laplace_init(&ctx, &mb, &bad, 1) == LATTN_E_DOMAIN, "init: unknown gate mode");
        bad = c; bad.norm_eps = 0; CHECK(lattn_laplace_init(&ctx, &mb, &bad, 1) == LATTN_E_DOMAIN, "init: norm_eps = 0");
        bad = c; bad.ffn = INT64_MAX / 4; CHECK(lattn_laplace_init(&ctx, &mb, &bad, 1) == LATTN_E_OVERFLOW, "init: overflowing FFN");
        bad = c; bad.vocab = INT64_MAX / 4; CHECK(lattn_laplace_init(&ctx, &mb, &bad, 1) == LATTN_E_OVERFLOW, "init: overflowing vocabulary");
        CHECK(lattn_laplace_init(&ctx, NULL, &c, 1) == LATTN_E_NULL && lattn_laplace_init(&ctx, &mb, NULL, 1) == LATTN_E_NULL, "init: NULL");
        free(o); free(s); free(s0);
    }
    {   /* allocation failures: LATTN_E_NOMEM, nothing leaked, the state untouched */
        laplace_alloc_run u;
        int bad, total;
        u.c = &c; u.SF = SF;
        u.o = fnew((size_t)(6 * c.vocab)); u.s = fnormal(&r, (size_t)(2 * SF)); u.s0 = fdup(u.s, (size_t)(2 * SF));
        bad = fail_each_alloc(laplace_alloc_run_fn, &u, 30, &total);
        CHECK(bad == 0 && total >= 4, "Laplace init + forward under failing allocations: %d injections, %d bad", total, bad);
        free(u.o); free(u.s); free(u.s0);
    }
    lattn_laplace_free(&ctx, &m);
}

/* ---------------------------------------------------------------------------------------------- */
/* errors of the foundations                                                                       */
/* ---------------------------------------------------------------------------------------------- */
static void test_errors(void) {
    size_t out = 0;
    lattn_ctx ctx;
    int s, named = 1;
    lattn_ctx_init(&ctx);
    CHECK(lattn_size_mul(&out, SIZE_MAX / 2, 3) == LATTN_E_OVERFLOW, "size_mul overflow");
    CHECK(lattn_size_mul(&out, 1000, 1000) == LATTN_OK && out == 1000000, "size_mul");
    CHECK(lattn_size_add(&out, SIZE_MAX, 1) == LATTN_E_OVERFLOW, "size_add overflow");
    for (s = 0; s >= LATTN_STATUS_MIN; s--) named &= strcmp(lattn_status_string((lattn_status)s), "unknown status") != 0;
    CHECK(named && strcmp(lattn_status_string((lattn_status)5), "unknown status") == 0, "a message for every status");
    CHECK(strstr(lattn_build_info(), "simd=") != NULL, "build info names the SIMD back end");
    {
        lattn_shortconv_args a;
        float x[8] = { 0 };
        memset(&a, 0, sizeof a);
        a.B = 1; a.T = 2; a.D = 1; a.W = 0; a.x = x; a.w = x; a.y = x;
        CHECK(lattn_shortconv_chunk(&ctx, &a) == LATTN_E_SHAPE, "conv W = 0");
        a.W = 2; a.w = NULL;
        CHECK(lattn_shortconv_ref(&ctx, &a) == LATTN_E_NULL, "conv w NULL");
        a.w = x; a.D = INT64_MAX / 3;
        CHECK(lattn_shortconv_chunk(&ctx, &a) == LATTN_E_OVERFLOW, "conv overflowing D");
        a.D = 1;
        CHECK(lattn_tiler_create(&ctx, NULL, SIZE_MAX / 2, NULL) == LATTN_E_NULL, "tiler create NULL out");
    }
    {
        lattn_tiler *t;
        CHECK(lattn_tiler_create(&ctx, NULL, SIZE_MAX - 5, &t) == LATTN_E_OVERFLOW, "tiler arena overflow");
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* io: safetensors                                                                                */
/* ---------------------------------------------------------------------------------------------- */
static const struct { const char *name; lattn_status s; } g_status_names[] = {
#define STATUS_ROW(name, value, msg) { #name, name },
    LATTN_STATUS_LIST(STATUS_ROW)
#undef STATUS_ROW
};
static int status_by_name(const char *name, lattn_status *s) {
    size_t i;
    for (i = 0; i < sizeof g_status_names / sizeof g_status_names[0]; i++)
        if (strcmp(g_status_names[i].name, name) == 0) { *s = g_status_names[i].s; return 1; }
    return 0;
}

typedef struct { const unsigned char *buf; size_t size; } st_parse_run;
static lattn_status st_parse_run_fn(lattn_ctx *ctx, void *user) {
    st_parse_run *u = (st_parse_run *)user;
    lattn_st_file f;
    lattn_status st = lattn_st_parse(ctx, u->buf, u->size, &f);
    if (st == LATTN_OK) lattn_st_free(ctx, &f);
    return st;
}
static void test_io(void) {
    lattn_ctx ctx;
    lattn_rng r = lattn_rng_seed(g_seed);
    float a[6], zero[1];
    double d[3] = { 1.5, -2.25, 1e300 };
    uint16_t h[4] = { 0x3C00, 0xC000, 0x0001, 0x7C00 };      /* 1, -2, 2^-24, +inf */
    uint16_t bf[2] = { 0x3F80, 0xC0A0 };                     /* 1, -5 */
    int32_t i32[2] = { -7, 1 << 30 };
    int64_t i64[1] = { -((int64_t)1 << 40) };
    int64_t s23[2] = { 2, 3 }, s0[2] = { 0, 5 }, s3[1] = { 3 }, s4[1] = { 4 }, s2[1] = { 2 }, s1[1] = { 1 };
    lattn_st_entry e[7];
    const char *meta[4] = { "source", "lattn \"test\"\n\u00e9\u4e2d", "empty", "" };
    unsigned char *buf = NULL;
    size_t size = 0;
    lattn_st_file f;
    lattn_ctx_init(&ctx);
    lattn_rng_fill_normal(&r, a, 6, 0, 1);
    memset(e, 0, sizeof e);
    e[0].name = "in.a"; e[0].dtype = LATTN_DTYPE_F32; e[0].ndim = 2; e[0].shape = s23; e[0].data = a;
    e[1].name = "empty"; e[1].dtype = LATTN_DTYPE_F32; e[1].ndim = 2; e[1].shape = s0; e[1].data = zero;
    e[2].name = "d"; e[2].dtype = LATTN_DTYPE_F64; e[2].ndim = 1; e[2].shape = s3; e[2].data = d;
    e[3].name = "h"; e[3].dtype = LATTN_DTYPE_F16; e[3].ndim = 1; e[3].shape = s4; e[3].data = h;
    e[4].name = "bf"; e[4].dtype = LATTN_DTYPE_BF16; e[4].ndim = 1; e[4].shape = s2; e[4].data = bf;
    e[5].name = "i\"32"; e[5].dtype = LATTN_DTYPE_I32; e[5].ndim = 1; e[5].shape = s2; e[5].data = i32;
    e[6].name = "scalar"; e[6].dtype = LATTN_DTYPE_I64; e[6].ndim = 0; e[6].shape = s1; e[6].data = i64;
    CHECK(lattn_st_serialize(&ctx, e, 7, meta, 2, &buf, &size) == LATTN_OK, "serialize: %s", lattn_ctx_error(&ctx));
    CHECK(lattn_st_parse(&ctx, buf, size, &f) == LATTN_OK, "parse what we wrote: %s", lattn_ctx_error(&ctx));
    if (f.n_tensors == 7) {
        float hv[4], bv[2], iv[2];
        double dv[3], lv[1];
        const lattn_st_tensor *t = lattn_st_find(&f, "in.a");
        CHECK(t && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 && memcmp(t->data, a, 24) == 0, "F32 round trip");
        t = lattn_st_find(&f, "empty");
        CHECK(t && t->count == 0 && t->shape[1] == 5, "zero-sized tensor round trip");
        lattn_st_to_f64(&ctx, lattn_st_find(&f, "d"), dv, 3);
        CHECK(dv[0] == 1.5 && dv[1] == -2.25 && dv[2] == 1e300, "F64 round trip");
        lattn_st_to_f32(&ctx, lattn_st_find(&f, "h"), hv, 4);
        CHECK(hv[0] == 1.0f && hv[1] == -2.0f && hv[2] == ldexpf(1.0f, -24) && hv[3] == HUGE_VALF, "F16 to float");
        lattn_st_to_f32(&ctx, lattn_st_find(&f, "bf"), bv, 2);
        CHECK(bv[0] == 1.0f && bv[1] == -5.0f, "BF16 to float");
        lattn_st_to_f32(&ctx, lattn_st_find(&f, "i\"32"), iv, 2);
        lattn_st_to_f64(&ctx, lattn_st_find(&f, "scalar"), lv, 1);
        CHECK(iv[0] == -7.0f && iv[1] == 1073741824.0f && lv[0] == -1099511627776.0, "I32, I64 (0-dim) to float");
        CHECK(lattn_st_meta(&f, "source") && strcmp(lattn_st_meta(&f, "source"), meta[1]) == 0 &&
              lattn_st_meta(&f, "empty") && lattn_st_meta(&f, "missing") == NULL, "metadata round trip with escapes and UTF-8");
        CHECK(lattn_st_to_f32(&ctx, lattn_st_find(&f, "d"), hv, 2) == LATTN_E_SHAPE, "conversion with the wrong count");
    } else CHECK(0, "7 tensors expected, got %lld", (long long)f.n_tensors);
    CHECK(buf[0] % 8 == 0 && buf[8] == '{', "header padded to 8 bytes");
    lattn_st_free(&ctx, &f);
    {   /* every truncation fails cleanly; every single-byte change is either accepted or rejected */
        size_t cut, bad = 0, pos;
        lattn_st_file g;
        unsigned char *m = (unsigned char *)malloc(size);
        for (cut = 0; cut < size; cut++) {
            lattn_status st = lattn_st_parse(&ctx, buf, cut, &g);
            if (st == LATTN_OK) { bad++; lattn_st_free(&ctx, &g); }
        }
        CHECK(bad == 0, "every truncated file is rejected (%zu accepted)", bad);
        for (pos = 0; pos < size; pos += (pos < 400 ? 1 : 7)) {
            lattn_status st;
            memcpy(m, buf, size);
            m[pos] ^= (unsigned char)(1 + (pos * 37) % 255);
            st = lattn_st_parse(&ctx, m, size, &g);
            if (st == LATTN_OK) lattn_st_free(&ctx, &g);
            else if (st != LATTN_E_FORMAT && st != LATTN_E_UNSUPPORTED) bad++;
        }
        CHECK(bad == 0, "byte flips give LATTN_OK, LATTN_E_FORMAT or LATTN_E_UNSUPPORTED");
        free(m);
    }
    {   /* allocation failures while parsing */
        st_parse_run u;
        int bad, total;
        u.buf = buf; u.size = size;
        bad = fail_each_alloc(st_parse_run_fn, &u, 8, &total);
        CHECK(bad == 0 && total >= 1, "allocation failure while parsing: LATTN_E_NOMEM and no leak (%d injections)", total);
    }
    lattn_free(&ctx, buf);
    {   /* writer errors */
        lattn_st_entry x = e[0];
        x.name = "__metadata__";
        CHECK(lattn_st_serialize(&ctx, &x, 1, NULL, 0, &buf, &size) == LATTN_E_DOMAIN, "reserved name refused");
        x = e[0]; x.data = NULL;
        CHECK(lattn_st_serialize(&ctx, &x, 1, NULL, 0, &buf, &size) == LATTN_E_NULL, "NULL data refused");
        x = e[0]; x.ndim = 9;
        CHECK(lattn_st_serialize(&ctx, &x, 1, NULL, 0, &buf, &size) == LATTN_E_SHAPE, "too many dims refused");
        CHECK(lattn_st_load(&ctx, "tests/no/such/file.safetensors", &f) == LATTN_E_IO, "missing file: LATTN_E_IO");
    }
    {   /* the catalogue of corrupt files */
        FILE *ex = fopen("tests/corrupt/EXPECTED", "r");
        char name[128], sname[64], path[256];
        int n = 0, bad = 0;
        if (!ex) { CHECK(0, "cannot open tests/corrupt/EXPECTED"); return; }
        while (fscanf(ex, "%127s %63s", name, sname) == 2) {
            lattn_status want, got;
            lattn_st_file g;
            snprintf(path, sizeof path, "tests/corrupt/%s", name);
            if (!status_by_name(sname, &want)) { bad++; continue; }
            got = lattn_st_load(&ctx, path, &g);
            if (got == LATTN_OK) lattn_st_free(&ctx, &g);
            if (got != want) { bad++; printf("  %s: got %s (%s), want %s\n", name, lattn_status_string(got), lattn_ctx_error(&ctx), sname); }
            n++;
        }
        fclose(ex);
        CHECK(n >= 30 && bad == 0, "corrupt-file catalogue: %d files, %d wrong", n, bad);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* external cases: flash-linear-attention's reference outputs (float64)                           */
/* ---------------------------------------------------------------------------------------------- */
static double rel_rms_d(const float *x, const double *y, size_t n) {
    double num = 0, den = 0; size_t i;
    for (i = 0; i < n; i++) { double d = x[i] - y[i]; if (x[i] != x[i]) return HUGE_VAL; num += d * d; den += y[i] * y[i]; }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double *tensor_f64(const lattn_st_file *f, const char *name, size_t *n) {
    const lattn_st_tensor *t = lattn_st_find(f, name);
    double *p;
    if (!t) return NULL;
    p = (double *)malloc((t->count ? t->count : 1) * sizeof(double));
    lattn_st_to_f64(NULL, t, p, t->count);
    if (n) *n = t->count;
    return p;
}
static float *tensor_f32(const lattn_st_file *f, const char *name) {
    const lattn_st_tensor *t = lattn_st_find(f, name);
    float *p;
    if (!t) return NULL;
    p = fnew(t->count);
    lattn_st_to_f32(NULL, t, p, t->count);
    return p;
}

static void test_external(void) {
    static const char *cases[8] = { "linear_attn_0", "linear_attn_1", "linear_attn_norm_0", "linear_attn_norm_1",
                                    "gla_0", "gla_1", "simple_gla_0", "simple_gla_1" };
    lattn_ctx ctx;
    int ci, form;
    lattn_ctx_init(&ctx);
    for (ci = 0; ci < 8; ci++) {
        char path[256];
        lattn_st_file f;
        const lattn_st_tensor *eq, *ev;
        lattn_la_args a = LATTN__ZERO;
        float *q, *k, *v, *h0, *o, *ht, *g;
        double *wo, *wht;
        int norm = ci == 2 || ci == 3;
        size_t no, ns;
        snprintf(path, sizeof path, "tests/external/%s.safetensors", cases[ci]);
        if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "cannot read %s: %s (run from the repository root)", path, lattn_ctx_error(&ctx)); continue; }
        eq = lattn_st_find(&f, "q"); ev = lattn_st_find(&f, "v");
        q = tensor_f32(&f, "q"); k = tensor_f32(&f, "k"); v = tensor_f32(&f, "v"); h0 = tensor_f32(&f, "h0");
        wo = tensor_f64(&f, "o", NULL); wht = tensor_f64(&f, "ht", NULL);
        a.B = eq->shape[0]; a.T = eq->shape[1]; a.H = eq->shape[2]; a.K = eq->shape[3]; a.V = ev->shape[3];
        a.q = q; a.k = k; a.v = v; a.h0 = h0; a.scale = strtod(lattn_st_meta(&f, "scale"), NULL);
        g = tensor_f32(&f, "g");                 /* gla: per key; simple_gla: per head */
        if (ci >= 4 && ci < 6) a.gk = g;
        if (ci >= 6) a.g = g;
        a.normalize = norm;
        if (norm) a.eps = (float)strtod(lattn_st_meta(&f, "eps_in_denominator"), NULL);
        no = (size_t)(a.B * a.T * a.H * a.V); ns = (size_t)(a.B * a.H * a.K * a.V);
        o = fnew(no); ht = fnew(ns);
        {   /* _ref in double: within 1e-12 of the float64 reference outputs */
            double *o64 = (double *)malloc(no * sizeof(double)), *h64 = (double *)malloc(ns * sizeof(double));
            double num = 0, den = 0, hn = 0, hd = 0;
            size_t i;
            lattn_la_args b = a;
            b.o = o; b.ht = ht; b.o64 = o64; b.ht64 = h64;
            CHECK(lattn_la_ref(&ctx, &b) == LATTN_OK, "ref with float64 outputs");
            for (i = 0; i < no; i++) { num += (o64[i] - wo[i]) * (o64[i] - wo[i]); den += wo[i] * wo[i]; }
            for (i = 0; wht && i < ns; i++) { hn += (h64[i] - wht[i]) * (h64[i] - wht[i]); hd += wht[i] * wht[i]; }
            CHECK(sqrt(num / den) <= 1e-12 && (!wht || sqrt(hn / hd) <= 1e-12), "external %s _ref (double): o %g ht %g",
                  cases[ci], sqrt(num / den), wht ? sqrt(hn / hd) : 0.0);
            free(o64); free(h64);
        }
        for (form = 0; form < 4; form++) {
            double eo, eh = 0, tol = form == 0 ? 1e-7 : 1e-5;
            lattn_la_args b = a;
            poison(o, no); poison(ht, ns);
            b.o = o; b.ht = wht ? ht : NULL;
            if (form == 0) lattn_la_ref(&ctx, &b);
            else if (form == 1) lattn_la_parallel(&ctx, &b);
            else if (form == 2) (b.chunk = 16, lattn_la_chunk(&ctx, &b));
            else lattn_la_step(&ctx, &b);
            eo = rel_rms_d(o, wo, no);
            if (wht) eh = rel_rms_d(ht, wht, ns);
            /* _ref stores float32: its error against the float64 outputs is float32 rounding (~3e-8) */
            CHECK(eo <= tol && eh <= tol, "external %s form %d: o %g ht %g", cases[ci], form, eo, eh);
        }
        free(q); free(k); free(v); free(h0); free(g); free(wo); free(wht); free(o); free(ht);
        lattn_st_free(&ctx, &f);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* the delta rule core: delta rule, Gated DeltaNet, GDR+I                                          */
/* ---------------------------------------------------------------------------------------------- */
typedef struct { lattn_gdr_args a; float *p[12]; size_t no, ns; } gdr_case;
enum { GDR_DELTA, GDR_GDN, GDR_GDN_KEY, GDR_FULL };
/* Random inputs: q, k normal (l2norm in the kernel) or unit-norm rows; β in [0, bmax]; per-head log
   gates logsigmoid(x)/n; the full core adds e, c and L injections. */
static void gdr_make(gdr_case *c, lattn_rng *r, int64_t B, int64_t T, int64_t H, int64_t K, int64_t V,
                     int kind, int64_t L, double n, float bmax, int l2norm, int varlen) {
    size_t nq = (size_t)(B * T * H * K), nv = (size_t)(B * T * H * V), nh = (size_t)(B * T * H), i;
    int64_t ns = varlen ? 4 : B;
    memset(c, 0, sizeof *c);
    memset(&c->a, 0, sizeof c->a);
    c->a.B = B; c->a.T = T; c->a.H = H; c->a.K = K; c->a.V = V; c->a.l2norm = l2norm;
    c->a.allow_neg_eigval = bmax > 1.0f;
    c->p[0] = fnormal(r, nq); c->p[1] = fnormal(r, nq); c->p[2] = fnormal(r, nv);
    c->p[3] = frand(r, nh, 0.0f, bmax);
    if (!l2norm)                          /* unit rows, as fla's naive references take them */
        for (i = 0; i < nh; i++) {
            int j; double sq = 0, sk = 0;
            for (j = 0; j < K; j++) { sq += c->p[0][i * K + j] * c->p[0][i * K + j]; sk += c->p[1][i * K + j] * c->p[1][i * K + j]; }
            for (j = 0; j < K; j++) { c->p[0][i * K + j] /= (float)sqrt(sq); c->p[1][i * K + j] /= (float)sqrt(sk); }
        }
    c->a.q = c->p[0]; c->a.k = c->p[1]; c->a.v = c->p[2]; c->a.beta = c->p[3];
    if (kind == GDR_GDN || kind == GDR_FULL || kind == GDR_GDN_KEY) {
        size_t ng = kind == GDR_GDN_KEY ? nq : nh;
        c->p[4] = fnormal(r, ng);
        for (i = 0; i < ng; i++) c->p[4][i] = (float)(((c->p[4][i] < 0 ? c->p[4][i] : 0.0) - log1p(exp(-fabs(c->p[4][i])))) / n);
        if (kind == GDR_GDN_KEY) c->a.gk = c->p[4]; else c->a.g = c->p[4];
    }
    if (kind == GDR_FULL) {
        c->p[5] = fnormal(r, nq); c->p[6] = frand(r, nh, -1.0f, 1.0f);
        c->a.e = c->p[5]; c->a.c = c->p[6]; c->a.L = L;
        if (L > 0) {
            c->p[7] = frand(r, nh * (size_t)L, -1.0f, 1.0f); c->p[8] = fnormal(r, nq * (size_t)L); c->p[9] = fnormal(r, nv * (size_t)L);
            for (i = 0; i < nq * (size_t)L; i++) c->p[8][i] *= 0.2f;
            c->a.inj_b = c->p[7]; c->a.inj_kap = c->p[8]; c->a.inj_d = c->p[9];
        }
    }
    c->p[10] = fnormal(r, (size_t)(ns * H * K * V));
    c->a.h0 = c->p[10];
    if (varlen) { make_offsets(T); c->a.offsets = g_off; c->a.n_seqs = 4; }
    c->no = nv; c->ns = (size_t)(ns * H * K * V);
}
static void gdr_free(gdr_case *c) { int i; for (i = 0; i < 12; i++) free(c->p[i]); }
/* form 0 _ref, 1 _chunk, 2 _decode */
static lattn_status gdr_run(lattn_ctx *ctx, const gdr_case *c, lattn_form form, int chunk, float *o, float *ht) {
    lattn_gdr_args a = c->a;
    poison(o, c->no); poison(ht, c->ns);
    a.o = o; a.ht = ht;
    a.chunk = chunk;
    if (form == LATTN_FORM_REF) return lattn_gdr_ref(ctx, &a);
    return form == LATTN_FORM_CHUNK ? lattn_gdr_chunk(ctx, &a) : lattn_gdr_step(ctx, &a);
}

/* The error per position of a chunk: rows t of [T][n] into position t mod C (num: squared error
   against the float64 reference, den: its square). */
static void chunk_profile_add(const float *x, const double *ref, int64_t T, int64_t n, int C, double *num, double *den) {
    int64_t t, j;
    for (t = 0; t < T; t++)
        for (j = 0; j < n; j++) {
            const double e = (double)x[t * n + j] - ref[t * n + j];
            num[t % C] += e * e;
            den[t % C] += ref[t * n + j] * ref[t * n + j];
        }
}
/* The profile is flat: every position within 10x of the worst of positions 0-15, all <= 1e-5. */
static void chunk_profile_check(const double *num, const double *den, int C, const char *kind, const char *what) {
    double e16 = 0, emax = 0;
    int t;
    for (t = 0; t < C; t++) {
        const double e = sqrt(num[t] / den[t]);
        if (t < 16) e16 = fmax(e16, e);
        emax = fmax(emax, e);
    }
    CHECK(emax <= 10.0 * e16 && emax <= 1e-5, "%s%s, C = %d: the error per position of a chunk is flat (worst %.3g, tokens 0-15 %.3g)",
          kind, what, C, emax, e16);
    if (getenv("LATTN_TEST_VERBOSE")) printf("  %s%s, C = %d: worst position %.3g, positions 0-15 %.3g\n", kind, what, C, emax, e16);
}
static void test_delta(void) {
    lattn_rng r = lattn_rng_seed(g_seed + 13);
    lattn_ctx ctx;
    static const char *kinds[4] = { "delta rule", "GDN", "GDN per-key gates", "GDR+I" };
    static const int chunks[] = { 1, 16, 32, 64, 128 };
    int kind, ti, variant, ci;
    int64_t C = g_quick ? 16 : 32, Ts[6];
    Ts[0] = 0; Ts[1] = 1; Ts[2] = C - 1; Ts[3] = C; Ts[4] = C + 1; Ts[5] = 3 * C + 5;
    lattn_ctx_init(&ctx);
    /* every form against _ref: kinds, sizes, l2norm in the kernel or unit rows, batch 3 with an
       initial state, variable lengths; β in [0, 1] or [0, 2]; strong and weak gates */
    for (kind = 0; kind < 4; kind++)
        for (ti = 0; ti < 6; ti++)
            for (variant = 0; variant < 3; variant++) {
                gdr_case c;
                float *o0, *ht0, *o, *ht;
                int form;
                int64_t B = variant == 1 ? 1 : 3, K = variant == 2 ? 37 : 20, V = variant == 2 ? 45 : 24;
                gdr_make(&c, &r, B, Ts[ti], 2, K, V, kind, kind == GDR_FULL ? 1 + ti % 3 : 0,
                         variant == 2 ? 0.1 : 1.0, variant == 2 ? 2.0f : 1.0f, variant != 1, variant == 1 && Ts[ti] > 0);
                o0 = fnew(c.no); ht0 = fnew(c.ns); o = fnew(c.no); ht = fnew(c.ns);
                CHECK(gdr_run(&ctx, &c, LATTN_FORM_REF, 0, o0, ht0) == LATTN_OK, "%s _ref: %s", kinds[kind], lattn_ctx_error(&ctx));
                for (form = LATTN_FORM_CHUNK; form <= LATTN_FORM_STEP; form++) {
                    lattn_status s = gdr_run(&ctx, &c, (lattn_form)form, (int)C, o, ht);
                    CHECK(s == LATTN_OK && rel_rms(o, o0, c.no) <= 1e-5 && rel_rms(ht, ht0, c.ns) <= 1e-5,
                          "%s %s T=%lld variant %d: o %.3g ht %.3g (%s)", kinds[kind], lattn_form_name((lattn_form)form),
                          (long long)Ts[ti], variant, rel_rms(o, o0, c.no), rel_rms(ht, ht0, c.ns), s ? lattn_ctx_error(&ctx) : "");
                }
                free(o0); free(ht0); free(o); free(ht); gdr_free(&c);
            }
    /* chunk sizes 1 ... 128 agree; the trn2 (C = 128) and h100 (C = 64, value slices) profiles */
    {
        gdr_case c;
        int64_t T = g_quick ? 150 : 300;
        float *o0, *ht0, *o, *ht;
        int prof;
        gdr_make(&c, &r, 1, T, 2, 64, 96, GDR_FULL, 2, 1.0, 1.0f, 1, 0);
        o0 = fnew(c.no); ht0 = fnew(c.ns); o = fnew(c.no); ht = fnew(c.ns);
        gdr_run(&ctx, &c, LATTN_FORM_REF, 0, o0, ht0);
        for (ci = 0; ci < 5; ci++) {
            lattn_status s = gdr_run(&ctx, &c, LATTN_FORM_CHUNK, chunks[ci], o, ht);
            CHECK(s == LATTN_OK && rel_rms(o, o0, c.no) <= 1e-5 && rel_rms(ht, ht0, c.ns) <= 1e-5,
                  "GDR+I chunk %d: o %.3g ht %.3g", chunks[ci], rel_rms(o, o0, c.no), rel_rms(ht, ht0, c.ns));
        }
        free(o0); free(ht0); free(o); free(ht); gdr_free(&c);
        /* GDR+I on trn2 (C = 128), GDN on h100 (C = 32, value slices of 64), per-key GDN on trn2 */
        for (prof = 0; prof < 3; prof++) {
            lattn_ctx c2;
            lattn_status s;
            lattn_ctx_init(&c2);
            c2.profile = prof == 1 ? lattn_profile_h100() : lattn_profile_trn2();
            gdr_make(&c, &r, 1, T, 2, 64, 96, prof == 1 ? GDR_GDN : prof == 2 ? GDR_GDN_KEY : GDR_FULL, 2, 1.0, 1.0f, 1, 0);
            o0 = fnew(c.no); ht0 = fnew(c.ns); o = fnew(c.no); ht = fnew(c.ns);
            gdr_run(&ctx, &c, LATTN_FORM_REF, 0, o0, ht0);
            s = gdr_run(&c2, &c, LATTN_FORM_CHUNK, 0, o, ht);
            CHECK(s == LATTN_OK && rel_rms(o, o0, c.no) <= 1e-5 && rel_rms(ht, ht0, c.ns) <= 1e-5,
                  "%s on %s: o %.3g ht %.3g %s", prof == 1 ? "GDN" : prof ? "per-key GDN" : "GDR+I", prof == 1 ? "h100" : "trn2", rel_rms(o, o0, c.no),
                  rel_rms(ht, ht0, c.ns), s ? lattn_ctx_error(&c2) : "");
            if (prof == 1) CHECK(gdr_run(&c2, &c, LATTN_FORM_CHUNK, 64, o, ht) == LATTN_E_SBUF_FULL, "GDN at C = 64 exceeds an h100 block's shared memory");
            free(o0); free(ht0); free(o); free(ht); gdr_free(&c);
        }
    }
    /* the error inside a chunk is flat: fla's fp32 delta-rule kernels are ~1e-7 accurate on tokens
       0-15 of each chunk and 1e-5 ... 5e-4 from token 16 on (its merged WY inverse); per position p of
       a chunk (C = 64, 128), the relative error against _ref's float64 over every chunk and head stays
       within 10× of the worst of positions 0-15 */
    {
        int cc, kd;
        for (cc = 0; cc < 2; cc++)
            for (kd = 0; kd < 3; kd++) {
                const int Cc = 64 << cc;
                const int64_t T = 4 * Cc;
                gdr_case c;
                lattn_gdr_args a;
                float *o, *ht;
                double *o64 = (double *)malloc((size_t)(T * 2 * 64) * sizeof(double)), num[128], den[128];
                gdr_make(&c, &r, 1, T, 2, 64, 64, kd == 0 ? GDR_DELTA : kd == 1 ? GDR_GDN : GDR_GDN_KEY, 0, 8.0, 1.0f, 1, 0);
                o = fnew(c.no); ht = fnew(c.ns);
                a = c.a; a.o = o; a.o64 = o64;
                lattn_gdr_ref(&ctx, &a);
                CHECK(gdr_run(&ctx, &c, LATTN_FORM_CHUNK, Cc, o, ht) == LATTN_OK, "gdr chunk %d: %s", Cc, lattn_ctx_error(&ctx));
                memset(num, 0, sizeof num); memset(den, 0, sizeof den);
                chunk_profile_add(o, o64, T, 128, Cc, num, den);
                chunk_profile_check(num, den, Cc, kinds[kd == 0 ? 0 : kd == 1 ? 1 : 2], "");
                free(o); free(ht); free(o64); gdr_free(&c);
            }
    }
    /* the same for the chunked backward: per position of a chunk, the relative error of dq, dk and
       dv together against lattn_gdr_ref_backward stays within 10x of its worst on positions 0-15 */
    {
        int cc, kd;
        for (cc = 0; cc < 2; cc++)
            for (kd = 0; kd < 3; kd++) {
                const int Cc = 64 << cc;
                const int64_t T = 4 * Cc, nq = T * 2 * 64;
                gdr_case c;
                lattn_gdr_args a;
                lattn_gdr_grads gw = LATTN__ZERO, gc = LATTN__ZERO;
                float *dout, *d[3];
                double *w64[3], num[128], den[128];
                int x;
                gdr_make(&c, &r, 1, T, 2, 64, 64, kd == 0 ? GDR_DELTA : kd == 1 ? GDR_GDN : GDR_GDN_KEY, 0, 8.0, 1.0f, 1, 0);
                dout = fnormal(&r, c.no);
                for (x = 0; x < 3; x++) { d[x] = fnew((size_t)nq); w64[x] = (double *)malloc((size_t)nq * sizeof(double)); }
                a = c.a; a.chunk = Cc;
                gw.dout = gc.dout = dout;
                gw.dq64 = w64[0]; gw.dk64 = w64[1]; gw.dv64 = w64[2];
                gc.dq = d[0]; gc.dk = d[1]; gc.dv = d[2];
                CHECK(lattn_gdr_ref_backward(&ctx, &a, &gw) == LATTN_OK && lattn_gdr_chunk_backward(&ctx, &a, &gc) == LATTN_OK,
                      "gdr backward, C = %d: %s", Cc, lattn_ctx_error(&ctx));
                memset(num, 0, sizeof num); memset(den, 0, sizeof den);
                for (x = 0; x < 3; x++) chunk_profile_add(d[x], w64[x], T, 128, Cc, num, den);
                chunk_profile_check(num, den, Cc, kinds[kd == 0 ? 0 : kd == 1 ? 1 : 2], " backward");
                for (x = 0; x < 3; x++) { free(d[x]); free(w64[x]); }
                free(dout); gdr_free(&c);
            }
    }
    /* strong gates down to -20 per token and -inf (hard resets), weak gates; β near 0, 1 and 2 */
    {
        int g;
        for (g = 0; g < 5; g++) {
            gdr_case c;
            float *o0, *ht0, *o, *ht;
            size_t i;
            gdr_make(&c, &r, 2, 2 * C + 7, 2, 16, 20, g == 4 ? GDR_GDN_KEY : GDR_GDN, 0, 1.0, g == 3 ? 2.0f : 1.0f, 1, 0);
            for (i = 0; g == 4 && i < (size_t)(c.a.B * c.a.T * c.a.H * c.a.K); i++)   /* per-key: -20 .. 0, some -inf */
                ((float *)c.a.gk)[i] = i % 37 == 5 ? -HUGE_VALF : -20.0f * (float)lattn_rng_uniform(&r) * (float)(i % 3);
            for (i = 0; g < 4 && i < (size_t)(c.a.B * c.a.T * c.a.H); i++) {
                float *gg = (float *)c.a.g, *bb = (float *)c.a.beta;
                if (g == 0) gg[i] = -20.0f * (float)lattn_rng_uniform(&r);
                if (g == 1 && i % 7 == 3) gg[i] = -HUGE_VALF;
                if (g == 2) { gg[i] *= 0.01f; bb[i] = i % 2 ? 1e-4f : 1.0f - 1e-4f; }
                if (g == 3) bb[i] = i % 2 ? 2.0f - 1e-3f : 1.9f;
            }
            o0 = fnew(c.no); ht0 = fnew(c.ns); o = fnew(c.no); ht = fnew(c.ns);
            gdr_run(&ctx, &c, LATTN_FORM_REF, 0, o0, ht0);
            CHECK(gdr_run(&ctx, &c, LATTN_FORM_CHUNK, (int)C, o, ht) == LATTN_OK && rel_rms(o, o0, c.no) <= 1e-4 && rel_rms(ht, ht0, c.ns) <= 1e-4,
                  "GDN extreme case %d: o %.3g ht %.3g", g, rel_rms(o, o0, c.no), rel_rms(ht, ht0, c.ns));
            CHECK(gdr_run(&ctx, &c, LATTN_FORM_STEP, 0, o, ht) == LATTN_OK && rel_rms(o, o0, c.no) <= 1e-5 && rel_rms(ht, ht0, c.ns) <= 1e-5,
                  "GDN extreme case %d (_decode): o %.3g ht %.3g", g, rel_rms(o, o0, c.no), rel_rms(ht, ht0, c.ns));
            free(o0); free(ht0); free(o); free(ht); gdr_free(&c);
        }
    }
    /* identities (spec §6): delta rule = GDN with g = 0; e = k and c = β given explicitly = the
       defaults; GLA = GDR+I with β = 0, c = 1 (against lattn_la_ref with per-head gates) */
    {
        gdr_case c;
        float *o0, *o1, *ht0, *ht1, *zg, *ones, *zb;
        lattn_gdr_args a;
        size_t nh, i;
        gdr_make(&c, &r, 2, 70, 2, 16, 24, GDR_DELTA, 0, 1.0, 1.0f, 0, 0);
        nh = (size_t)(c.a.B * c.a.T * c.a.H);
        o0 = fnew(c.no); o1 = fnew(c.no); ht0 = fnew(c.ns); ht1 = fnew(c.ns);
        zg = fnew(nh); for (i = 0; i < nh; i++) zg[i] = 0.0f;
        gdr_run(&ctx, &c, LATTN_FORM_REF, 0, o0, ht0);
        a = c.a; a.g = zg; a.o = o1; a.ht = ht1;
        CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_OK && same_bits(o0, o1, c.no) && same_bits(ht0, ht1, c.ns), "delta rule = GDN with g = 0 (_ref, bit for bit)");
        CHECK((a.chunk = 16, lattn_gdr_chunk(&ctx, &a)) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5, "delta rule = GDN with g = 0 (_chunk)");
        a = c.a; a.e = c.a.k; a.c = c.a.beta; a.o = o1; a.ht = ht1;
        CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_OK && same_bits(o0, o1, c.no) && same_bits(ht0, ht1, c.ns), "e = k, c = beta given = the defaults");
        {   /* GLA: no erase (β = 0), write scale 1, per-head gate */
            lattn_la_args la = LATTN__ZERO;
            float *g = fnew(nh);
            zb = fnew(nh); ones = fnew(nh);
            for (i = 0; i < nh; i++) { zb[i] = 0.0f; ones[i] = 1.0f; g[i] = -0.3f * (float)lattn_rng_uniform(&r); }
            a = c.a; a.beta = zb; a.c = ones; a.g = g; a.o = o1; a.ht = ht1;
            CHECK((a.chunk = 16, lattn_gdr_chunk(&ctx, &a)) == LATTN_OK, "GDR+I as GLA");
            la.B = a.B; la.T = a.T; la.H = a.H; la.K = a.K; la.V = a.V; la.q = a.q; la.k = a.k; la.v = a.v; la.g = g;
            la.h0 = a.h0; la.o = o0; la.ht = ht0; la.scale = 1.0 / sqrt(16.0);
            CHECK(lattn_la_ref(&ctx, &la) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5 && rel_rms(ht1, ht0, c.ns) <= 1e-5,
                  "GDR+I with beta = 0, c = 1 = Simple GLA: %.3g %.3g", rel_rms(o1, o0, c.no), rel_rms(ht1, ht0, c.ns));
            free(g); free(zb); free(ones);
        }
        free(o0); free(o1); free(ht0); free(ht1); free(zg); gdr_free(&c);
    }
    /* threads: bit-identical chunked results at 1, 2, 3 threads */
#ifdef _OPENMP
    {
        gdr_case c;
        float *o1, *ht1, *o, *ht;
        int nt, same = 1;
        gdr_make(&c, &r, 2, 100, 3, 24, 32, GDR_FULL, 1, 1.0, 1.0f, 1, 0);
        o1 = fnew(c.no); ht1 = fnew(c.ns); o = fnew(c.no); ht = fnew(c.ns);
        ctx.n_threads = 1; gdr_run(&ctx, &c, LATTN_FORM_CHUNK, 16, o1, ht1);
        for (nt = 2; nt <= 3; nt++) { ctx.n_threads = nt; gdr_run(&ctx, &c, LATTN_FORM_CHUNK, 16, o, ht); same &= same_bits(o, o1, c.no) && same_bits(ht, ht1, c.ns); }
        ctx.n_threads = 0;
        CHECK(same, "GDR chunk bit-identical on 1, 2, 3 threads");
        free(o1); free(ht1); free(o); free(ht); gdr_free(&c);
    }
#endif
    /* errors: nothing written */
    {
        gdr_case c;
        lattn_gdr_args a;
        float *o, *ht;
        gdr_make(&c, &r, 1, 5, 1, 4, 4, GDR_GDN, 0, 1.0, 1.0f, 1, 0);
        o = fnew(c.no); ht = fnew(c.ns);
        a = c.a; a.o = o; a.ht = ht;
        ((float *)a.beta)[2] = 1.5f;
        CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_E_DOMAIN, "beta 1.5 without allow_neg_eigval");
        a.allow_neg_eigval = 1;
        CHECK(lattn_gdr_chunk(&ctx, &a) == LATTN_OK, "beta 1.5 with allow_neg_eigval");
        a.allow_neg_eigval = 0; ((float *)a.beta)[2] = NAN;
        poison(o, c.no);
        CHECK(lattn_gdr_chunk(&ctx, &a) == LATTN_E_DOMAIN && o[0] != o[0], "NaN beta, nothing written");
        ((float *)a.beta)[2] = 0.5f; ((float *)a.g)[1] = 0.25f;
        CHECK(lattn_gdr_step(&ctx, &a) == LATTN_E_DOMAIN, "positive log gate");
        ((float *)a.g)[1] = -0.25f;
        a.gk = a.q; CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_E_DOMAIN, "g and gk together");
        a.gk = NULL; a.L = 1; CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_E_NULL, "L = 1 without injections");
        a.L = 0; a.q = NULL; CHECK(lattn_gdr_chunk(&ctx, &a) == LATTN_E_NULL, "q NULL");
        a.q = c.a.q; a.B = 0; CHECK(lattn_gdr_chunk(&ctx, &a) == LATTN_E_SHAPE, "B = 0");
        a.B = 1; CHECK((a.chunk = -1, lattn_gdr_chunk(&ctx, &a)) == LATTN_E_SHAPE, "chunk < 0");
        a.K = 0; CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_E_SHAPE, "K = 0");
        a.K = 4; a.V = INT64_MAX / 4; CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_E_OVERFLOW, "overflowing V");
        a.V = 4; a.T = 1;
        a.ht = ht; a.scale = NAN; CHECK(lattn_gdr_step(&ctx, &a) == LATTN_E_DOMAIN, "NaN scale");
        a.scale = 0; a.L = 9; a.inj_b = a.beta; a.inj_kap = a.q; a.inj_d = a.v;
        CHECK(lattn_gdr_chunk(&ctx, &a) == LATTN_E_UNSUPPORTED, "9 injections in the chunked form");
        free(o); free(ht); gdr_free(&c);
    }
    {   /* the error profile inside a chunk (fla's fp32 delta-rule kernels: ~1e-7 for tokens 0-15, then
           1e-5..5e-4 where the off-diagonal blocks of its merged WY inverse start): per position p in
           the chunk, the relative RMS error of _chunk against _ref's float64 o over every chunk, head
           and value; tokens 16.. must stay within 10x of tokens 0..15, at C = 64 and 128 */
        int cc, kind2;
        for (cc = 0; cc < 2; cc++)
            for (kind2 = 0; kind2 < 2; kind2++) {
                const int C = 64 << cc;
                const int64_t T = 4 * C, H = 2, K = 64, V = 64;
                gdr_case c;
                lattn_gdr_args a;
                float *o = fnew((size_t)(T * H * V));
                double *o64 = (double *)malloc(sizeof(double) * (size_t)(T * H * V)), num[128], den[128], head = 0, tail = 0;
                int64_t t, j;
                gdr_make(&c, &r, 1, T, H, K, V, kind2 ? GDR_GDN : GDR_DELTA, 0, 4.0, 1.0f, 1, 0);
                a = c.a;
                a.o = o; a.ht = NULL; a.o64 = o64;
                CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_OK, "profile ref");
                a.o64 = NULL; a.chunk = C;
                poison(o, (size_t)(T * H * V));
                CHECK(lattn_gdr_chunk(&ctx, &a) == LATTN_OK, "profile chunk: %s", lattn_ctx_error(&ctx));
                for (j = 0; j < C; j++) num[j] = den[j] = 0;
                for (t = 0; t < T; t++)
                    for (j = 0; j < H * V; j++) {
                        double d = (double)o[t * H * V + j] - o64[t * H * V + j];
                        num[t % C] += d * d;
                        den[t % C] += o64[t * H * V + j] * o64[t * H * V + j];
                    }
                for (j = 0; j < C; j++) {
                    double e = sqrt(num[j] / den[j]);
                    if (j < 16) head = fmax(head, e); else tail = fmax(tail, e);
                }
                CHECK(tail <= 10.0 * head && head <= 1e-5, "%s at C = %d: the error inside a chunk is flat (tokens 0-15 %.3g, 16-%d %.3g)",
                      kind2 ? "Gated DeltaNet" : "delta rule", C, head, C - 1, tail);
                free(o); free(o64); gdr_free(&c);
            }
    }
    /* flash-linear-attention's own float64 outputs: _ref <= 1e-12, fast forms <= 1e-5 */
    {
        static const char *cases[4] = { "delta_rule_0", "delta_rule_1", "gated_delta_rule_0", "gated_delta_rule_1" };
        for (ci = 0; ci < 4; ci++) {
            char path[256];
            lattn_st_file f;
            const lattn_st_tensor *eq, *ev;
            lattn_gdr_args a = LATTN__ZERO;
            float *q, *k, *v, *h0, *beta, *g, *o, *ht;
            double *wo, *wht, *o64, *h64;
            size_t no, ns;
            int form;
            snprintf(path, sizeof path, "tests/external/%s.safetensors", cases[ci]);
            if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "cannot read %s", path); continue; }
            eq = lattn_st_find(&f, "q"); ev = lattn_st_find(&f, "v");
            q = tensor_f32(&f, "q"); k = tensor_f32(&f, "k"); v = tensor_f32(&f, "v"); h0 = tensor_f32(&f, "h0");
            beta = tensor_f32(&f, "beta"); g = tensor_f32(&f, "g");
            wo = tensor_f64(&f, "o", NULL); wht = tensor_f64(&f, "ht", NULL);
            a.B = eq->shape[0]; a.T = eq->shape[1]; a.H = eq->shape[2]; a.K = eq->shape[3]; a.V = ev->shape[3];
            a.q = q; a.k = k; a.v = v; a.h0 = h0; a.beta = beta; a.g = g;
            a.scale = strtod(lattn_st_meta(&f, "scale"), NULL);
            no = (size_t)(a.B * a.T * a.H * a.V); ns = (size_t)(a.B * a.H * a.K * a.V);
            o = fnew(no); ht = fnew(ns);
            o64 = (double *)malloc(no * sizeof(double)); h64 = (double *)malloc(ns * sizeof(double));
            a.o = o; a.ht = ht; a.o64 = o64; a.ht64 = h64;
            CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_OK, "gdr ref with float64 outputs");
            a.o64 = a.ht64 = NULL;
            {
                double num = 0, den = 0, hn = 0, hd = 0;
                size_t i;
                for (i = 0; i < no; i++) { num += (o64[i] - wo[i]) * (o64[i] - wo[i]); den += wo[i] * wo[i]; }
                for (i = 0; i < ns; i++) { hn += (h64[i] - wht[i]) * (h64[i] - wht[i]); hd += wht[i] * wht[i]; }
                CHECK(sqrt(num / den) <= 1e-12 && sqrt(hn / hd) <= 1e-12, "external %s _ref (double): o %g ht %g", cases[ci], sqrt(num / den), sqrt(hn / hd));
            }
            for (form = LATTN_FORM_CHUNK; form <= LATTN_FORM_STEP; form++) {
                poison(o, no); poison(ht, ns);
                a.chunk = 16;
                if (form == LATTN_FORM_CHUNK) lattn_gdr_chunk(&ctx, &a); else lattn_gdr_step(&ctx, &a);
                CHECK(rel_rms_d(o, wo, no) <= 1e-5 && rel_rms_d(ht, wht, ns) <= 1e-5, "external %s form %d: o %g ht %g",
                      cases[ci], form, rel_rms_d(o, wo, no), rel_rms_d(ht, wht, ns));
            }
            free(q); free(k); free(v); free(h0); free(beta); free(g); free(wo); free(wht); free(o); free(ht); free(o64); free(h64);
            lattn_st_free(&ctx, &f);
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* the Gated DeltaNet layer                                                                        */
/* ---------------------------------------------------------------------------------------------- */
typedef struct { const lattn_gdn_config *c; const float *x; float *y; } gdn_alloc_run;
static lattn_status gdn_alloc_run_fn(lattn_ctx *ctx, void *user) {
    gdn_alloc_run *u = (gdn_alloc_run *)user;
    lattn_gdn_layer mb;
    lattn_status st = lattn_gdn_init(ctx, &mb, u->c, 3);
    if (st == LATTN_OK) st = lattn_gdn_forward(ctx, &mb, 1, 1, u->x, u->y, NULL);
    lattn_gdn_free(ctx, &mb);
    return st;
}
/* Two GDN-layer configurations are the same (field by field: the struct has padding). */
static int same_gdn_cfg(const lattn_gdn_config *a, const lattn_gdn_config *b) {
    return a->D == b->D && a->H == b->H && a->K == b->K && a->V == b->V && a->conv_w == b->conv_w &&
           a->allow_neg_eigval == b->allow_neg_eigval && same_bits(&a->norm_eps, &b->norm_eps, 1) && a->mixer == b->mixer;
}
/* The GDN layer's four variants: the delta core with β in [0, 1] and in [0, 2], GLA, linear. */
static const char *gdn_variant(lattn_gdn_config *c, int v) {
    static const char *const names[4] = { "delta", "delta, neg eigval", "gla", "linear" };
    c->allow_neg_eigval = v == 1;
    c->mixer = v < 2 ? LATTN_GDN_DELTA : v == 2 ? LATTN_GDN_GLA : LATTN_GDN_LINEAR;
    return names[v];
}
static void test_gdnlayer(void) {
    lattn_rng r = lattn_rng_seed(g_seed + 17);
    lattn_ctx ctx;
    lattn_gdn_config c = lattn_gdn_config_default();
    lattn_gdn_layer m;
    int64_t B = 2, T = g_quick ? 21 : 45, SF, D;
    size_t i;
    int v;
    lattn_ctx_init(&ctx);
    c.D = 48; c.H = 3; c.K = 20; c.V = 28;         /* head dims off the vector width */
    CHECK(lattn__gdn_state_floats(&c) == (2 * 3 * 20 + 3 * 28) * 4 + 3 * 20 * 28, "GDN state floats");
    for (v = 0; v < 4; v++) {
        float *x, *y0, *y1, *y2, *s0, *s1, *s2, *sin, *xi, *yi;
        int64_t t, b;
        lattn_status st;
        const char *vn = gdn_variant(&c, v);
        CHECK(lattn_gdn_init(&ctx, &m, &c, 3) == LATTN_OK, "gdn init: %s", lattn_ctx_error(&ctx));
        for (i = 0; i < m.n_params; i++) m.arena[i] += 0.05f * (float)lattn_rng_normal_d(&r);   /* off the init */
        D = c.D; SF = lattn__gdn_state_floats(&c);
        x = fnormal(&r, (size_t)(B * T * D)); sin = fnormal(&r, (size_t)(B * SF));
        y0 = fnew((size_t)(B * T * D)); y1 = fnew((size_t)(B * T * D)); y2 = fnew((size_t)(B * T * D));
        s0 = fdup(sin, (size_t)(B * SF)); s1 = fdup(sin, (size_t)(B * SF)); s2 = fdup(sin, (size_t)(B * SF));
        xi = fnew((size_t)(B * D)); yi = fnew((size_t)(B * D));
        CHECK(lattn_gdn_forward_ref(&ctx, &m, B, T, x, y0, s0, NULL) == LATTN_OK, "gdn forward_ref");
        CHECK(lattn_gdn_forward(&ctx, &m, B, T, x, y1, s1) == LATTN_OK, "gdn forward: %s", lattn_ctx_error(&ctx));
        for (t = 0, st = LATTN_OK; t < T && st == LATTN_OK; t++) {
            for (b = 0; b < B; b++) memcpy(xi + b * D, x + (b * T + t) * D, (size_t)D * sizeof(float));
            st = lattn_gdn_step(&ctx, &m, B, xi, yi, s2);
            for (b = 0; b < B; b++) memcpy(y2 + (b * T + t) * D, yi + b * D, (size_t)D * sizeof(float));
        }
        CHECK(st == LATTN_OK, "gdn step: %s", lattn_ctx_error(&ctx));
        CHECK(rel_rms(y1, y0, (size_t)(B * T * D)) <= 1e-5 && rel_rms(s1, s0, (size_t)(B * SF)) <= 1e-5,
              "GDN layer forward vs _ref (%s): y %.3g state %.3g", vn, rel_rms(y1, y0, (size_t)(B * T * D)), rel_rms(s1, s0, (size_t)(B * SF)));
        CHECK(rel_rms(y2, y0, (size_t)(B * T * D)) <= 1e-5 && rel_rms(s2, s0, (size_t)(B * SF)) <= 1e-5,
              "GDN layer T steps vs _ref (%s): y %.3g state %.3g", vn, rel_rms(y2, y0, (size_t)(B * T * D)), rel_rms(s2, s0, (size_t)(B * SF)));
        if (v >= 2) {                    /* the mixer's tensors and its file round trip */
            unsigned char *sb = NULL;
            size_t sn = 0;
            lattn_st_file f;
            lattn_gdn_layer m2;
            const int64_t gates = v == 2 ? c.H * c.K : 0;
            CHECK(lattn_gdn_tensor(&m, "b_proj.weight") == NULL && (lattn_gdn_tensor(&m, "A_log") != NULL) == (v == 2) &&
                  (v == 3 || (lattn_gdn_tensor(&m, "a_proj.weight")->shape[0] == gates && lattn_gdn_tensor(&m, "dt_bias")->shape[0] == gates)) &&
                  m.n_tensors == (v == 2 ? 12 : 9), "GDN layer (%s): its tensors", vn);
            CHECK(lattn_gdn_serialize(&ctx, &m, &sb, &sn) == LATTN_OK && lattn_st_parse(&ctx, sb, sn, &f) == LATTN_OK &&
                  lattn_st_meta(&f, "gdn.mixer") && strcmp(lattn_st_meta(&f, "gdn.mixer"), vn) == 0 &&
                  lattn_gdn_init_st(&ctx, &m2, &f, "") == LATTN_OK && same_gdn_cfg(&m2.cfg, &m.cfg) && m2.n_params == m.n_params &&
                  same_bits(m2.arena, m.arena, m.n_params), "GDN layer (%s): file round trip with gdn.mixer", vn);
            lattn_gdn_free(&ctx, &m2);
            lattn_st_free(&ctx, &f);
            lattn_free(&ctx, sb);
        }
        if (v != 1) {                    /* prefill split in two calls = one call; threads bit-identical */
            int64_t T1 = 13;
            float *xa = fnew((size_t)(T1 * D)), *xb = fnew((size_t)((T - T1) * D)), *ya = fnew((size_t)(T1 * D)), *yb = fnew((size_t)((T - T1) * D));
            float *sa = fdup(sin, (size_t)SF), *sb = fdup(sin, (size_t)SF), *y3 = fnew((size_t)(T * D));
            memcpy(xa, x, (size_t)(T1 * D) * sizeof(float)); memcpy(xb, x + T1 * D, (size_t)((T - T1) * D) * sizeof(float));
            lattn_gdn_forward(&ctx, &m, 1, T, x, y3, sb);
            lattn_gdn_forward(&ctx, &m, 1, T1, xa, ya, sa); lattn_gdn_forward(&ctx, &m, 1, T - T1, xb, yb, sa);
            CHECK(rel_rms(ya, y3, (size_t)(T1 * D)) <= 1e-5 && rel_rms(yb, y3 + T1 * D, (size_t)((T - T1) * D)) <= 1e-5 &&
                  rel_rms(sa, sb, (size_t)SF) <= 1e-5, "GDN layer (%s): prefill in two calls = one", vn);
#ifdef _OPENMP
            {
                int nt, same = 1;
                ctx.n_threads = 1; memcpy(s1, sin, (size_t)(B * SF) * sizeof(float)); lattn_gdn_forward(&ctx, &m, B, T, x, y1, s1);
                for (nt = 2; nt <= 3; nt++) {
                    ctx.n_threads = nt; memcpy(s2, sin, (size_t)(B * SF) * sizeof(float)); lattn_gdn_forward(&ctx, &m, B, T, x, y2, s2);
                    same &= same_bits(y1, y2, (size_t)(B * T * D)) && same_bits(s1, s2, (size_t)(B * SF));
                }
                ctx.n_threads = 0;
                CHECK(same, "GDN layer (%s) forward bit-identical on 1, 2, 3 threads", vn);
            }
#endif
            free(xa); free(xb); free(ya); free(yb); free(sa); free(sb); free(y3);
        }
        free(x); free(y0); free(y1); free(y2); free(s0); free(s1); free(s2); free(sin); free(xi); free(yi);
        lattn_gdn_free(&ctx, &m);
    }
    {   /* names, init, errors, failing allocations */
        lattn_gdn_config bad = c;
        lattn_tensor *al, *dt;
        float xx[48], yy[48];
        int badc = 0, total = 0;
        gdn_variant(&c, 0);
        lattn_gdn_init(&ctx, &m, &c, 5);
        al = lattn_gdn_tensor(&m, "A_log"); dt = lattn_gdn_tensor(&m, "dt_bias");
        CHECK(al && dt && lattn_gdn_tensor(&m, "q_conv1d.weight")->shape[1] == 4 && lattn_gdn_tensor(&m, "o_proj.weight")->shape[1] == 84 &&
              al->data[0] <= logf(16.0f) && log1pf(expf(dt->data[1])) >= 1e-4f && log1pf(expf(dt->data[1])) <= 0.1001f,
              "GDN tensors: fla names, shapes, A_log and dt_bias drawn as fla does");
        poison(yy, 48);
        for (i = 0; i < 48; i++) xx[i] = 0.1f;
        CHECK(lattn_gdn_step(&ctx, &m, 1, xx, yy, NULL) == LATTN_E_NULL && yy[0] != yy[0], "gdn step without a state");
        CHECK(lattn_gdn_forward(&ctx, &m, 0, 1, xx, yy, NULL) == LATTN_E_SHAPE, "gdn forward B = 0");
        CHECK(lattn_gdn_forward(&ctx, NULL, 1, 1, xx, yy, NULL) == LATTN_E_NULL, "gdn forward NULL layer");
        CHECK(lattn_gdn_forward(&ctx, &m, 1, 0, xx, yy, NULL) == LATTN_OK && yy[0] != yy[0], "gdn forward T = 0 writes nothing");
        {   /* safetensors round trip, a prefix the file lacks, a truncated file */
            unsigned char *sb = NULL;
            size_t sn = 0;
            lattn_st_file f;
            lattn_gdn_layer m2;
            CHECK(lattn_gdn_serialize(&ctx, &m, &sb, &sn) == LATTN_OK && lattn_st_parse(&ctx, sb, sn, &f) == LATTN_OK, "gdn serialize");
            CHECK(lattn_gdn_init_st(&ctx, &m2, &f, "") == LATTN_OK && m2.n_params == m.n_params && same_bits(m2.arena, m.arena, m.n_params) &&
                  same_gdn_cfg(&m2.cfg, &m.cfg) && lattn_st_meta(&f, "gdn.mixer") == NULL, "gdn load: the same weights and configuration (no gdn.mixer)");
            lattn_gdn_free(&ctx, &m2);
            CHECK(lattn_gdn_init_st(&ctx, &m2, &f, "in.") == LATTN_E_FORMAT && m2.arena == NULL, "gdn load: missing tensors refused");
            lattn_st_free(&ctx, &f);
            CHECK(lattn_st_parse(&ctx, sb, sn - 3, &f) == LATTN_E_FORMAT, "gdn: a truncated weight file is refused");
            lattn_free(&ctx, sb);
        }
        lattn_gdn_free(&ctx, &m);
        bad.K = 0; CHECK(lattn_gdn_init(&ctx, &m, &bad, 1) == LATTN_E_SHAPE && m.arena == NULL, "gdn init K = 0");
        bad = c; bad.D = INT64_MAX / 8; CHECK(lattn_gdn_init(&ctx, &m, &bad, 1) == LATTN_E_OVERFLOW, "gdn init overflowing D");
        bad = c; bad.norm_eps = NAN; CHECK(lattn_gdn_init(&ctx, &m, &bad, 1) == LATTN_E_DOMAIN, "gdn init NaN eps");
        bad = c; bad.mixer = (lattn_gdn_mixer)3; CHECK(lattn_gdn_init(&ctx, &m, &bad, 1) == LATTN_E_DOMAIN && m.arena == NULL, "gdn init: mixer 3 refused");
        {
            gdn_alloc_run u;
            u.c = &c; u.x = xx; u.y = yy;
            badc = fail_each_alloc(gdn_alloc_run_fn, &u, 30, &total);
        }
        CHECK(badc == 0 && total >= 4, "GDN layer under failing allocations: %d injections, %d bad", total, badc);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* PRISM P1: the official LM block, against the official code's float64 outputs                    */
/* ---------------------------------------------------------------------------------------------- */
static void test_prism(void) {
    static const char *cases[3] = { "prism_p1_c128", "prism_p1_c64", "prism_p1_solver_off_vs_gdn" };
    lattn_dev_profile cp;
    lattn_ctx ctx;
    int ci;
    lattn_ctx_init(&ctx);
    {   /* P0: _chunk at every chunk size and T steps against _ref, a split sequence, errors */
        lattn_rng r = lattn_rng_seed(g_seed + 19);
        lattn_prism_p0_config pc;
        lattn_prism_p0 m;
        int64_t B = 2, T = g_quick ? 29 : 77, D, SF, tt, bb;
        static const int Cs[4] = { 1, 16, 64, 128 };
        float *x, *y0, *y1, *s0, *s1, *sin, *xi, *yi;
        size_t i;
        int k2;
        lattn_status st = LATTN_OK;
        pc.D = 36; pc.H = 3; pc.L = 3; pc.Kc = 4;
        CHECK(lattn_prism_p0_init(&ctx, &m, &pc, 5) == LATTN_OK, "P0 init");
        for (i = 0; i < m.n_params; i++) m.arena[i] += 0.1f * (float)lattn_rng_normal_d(&r);
        D = pc.D; SF = lattn__prism_p0_state_floats(&pc);
        x = fnormal(&r, (size_t)(B * T * D)); sin = fnormal(&r, (size_t)(B * SF));
        for (i = 0; i < (size_t)(B * SF); i++) sin[i] *= 0.3f;
        y0 = fnew((size_t)(B * T * D)); y1 = fnew((size_t)(B * T * D)); s0 = fdup(sin, (size_t)(B * SF)); s1 = fnew((size_t)(B * SF));
        xi = fnew((size_t)(B * D)); yi = fnew((size_t)(B * D));
        CHECK(lattn_prism_p0_forward_ref(&ctx, &m, B, T, x, y0, s0, NULL) == LATTN_OK, "P0 ref");
        for (k2 = 0; k2 < 4; k2++) {
            memcpy(s1, sin, (size_t)(B * SF) * sizeof(float)); poison(y1, (size_t)(B * T * D));
            use_chunk(&ctx, &cp, Cs[k2]);
            CHECK(lattn_prism_p0_forward(&ctx, &m, B, T, x, y1, s1) == LATTN_OK && rel_rms(y1, y0, (size_t)(B * T * D)) <= 1e-5 &&
                  rel_rms(s1, s0, (size_t)(B * SF)) <= 1e-5, "P0 chunk %d = _ref: y %.3g", Cs[k2], rel_rms(y1, y0, (size_t)(B * T * D)));
        }
        ctx.profile = NULL;
        memcpy(s1, sin, (size_t)(B * SF) * sizeof(float)); poison(y1, (size_t)(B * T * D));
        for (tt = 0; tt < T && st == LATTN_OK; tt++) {
            for (bb = 0; bb < B; bb++) memcpy(xi + bb * D, x + (bb * T + tt) * D, (size_t)D * sizeof(float));
            st = lattn_prism_p0_step(&ctx, &m, B, xi, yi, s1);
            for (bb = 0; bb < B; bb++) memcpy(y1 + (bb * T + tt) * D, yi + bb * D, (size_t)D * sizeof(float));
        }
        CHECK(st == LATTN_OK && rel_rms(y1, y0, (size_t)(B * T * D)) <= 1e-5 && rel_rms(s1, s0, (size_t)(B * SF)) <= 1e-5,
              "P0 T steps = _ref: y %.3g", rel_rms(y1, y0, (size_t)(B * T * D)));
        CHECK(lattn_prism_p0_step(&ctx, &m, B, xi, yi, NULL) == LATTN_E_NULL, "P0 step without a state");
        lattn_prism_p0_free(&ctx, &m);
        pc.H = 5; CHECK(lattn_prism_p0_init(&ctx, &m, &pc, 1) == LATTN_E_SHAPE && m.arena == NULL, "P0 init: H does not divide D");
        free(x); free(y0); free(y1); free(s0); free(s1); free(sin); free(xi); free(yi);
    }
    {   /* a block from a configuration: init, serialize under the official names, load back; the
           LM ablations: R2|R4 = R5 (every step on the base key), R3 is a no-op with one solver step;
           P2 bit-identical across threads */
        lattn_prism_config pc = lattn_prism_config_large_130m();
        lattn_prism_p1 p, q;
        lattn_st_file f;
        unsigned char *buf = NULL;
        size_t n = 0, nx;
        int64_t blk, T = 24;
        float *x, *y0, *y1;
        lattn_rng r = lattn_rng_seed(g_seed + 29);
        pc.D = 32; pc.H = 2; pc.S = 2; pc.R = 16; pc.Kc = 4; pc.rg = 8; pc.vocab = 0; pc.n_layers = 1; pc.seq_len = T;
        lattn__prism_params(&pc, &blk);
        CHECK(lattn_prism_p1_init(&ctx, &p, &pc, 3) == LATTN_OK && lattn_prism_p1_serialize(&ctx, &p, &buf, &n) == LATTN_OK &&
              lattn_st_parse(&ctx, buf, n, &f) == LATTN_OK && lattn_prism_p1_init_st(&ctx, &q, &f, "") == LATTN_OK &&
              same_bits(p.arena, q.arena, (size_t)blk), "PRISM block init -> official names -> load: the same %lld parameters", (long long)blk);
        nx = (size_t)(T * pc.D);
        x = fnormal(&r, nx); y0 = fnew(nx); y1 = fnew(nx);
        {   size_t i; for (i = 0; i < (size_t)blk; i++) p.arena[i] += 0.2f * (float)lattn_rng_normal_d(&r); }
        p.C = 8;
        p.ablate = LATTN_PRISM_R5; lattn_prism_p1_forward_ref(&ctx, &p, 1, T, x, y0, NULL);
        p.ablate = LATTN_PRISM_R2 | LATTN_PRISM_R4; lattn_prism_p1_forward_ref(&ctx, &p, 1, T, x, y1, NULL);
        CHECK(same_bits(y0, y1, nx), "P1 ablations: R2 + R4 = R5");
        p.ablate = 0; lattn_prism_p1_forward_ref(&ctx, &p, 1, T, x, y1, NULL);
        CHECK(rel_rms(y0, y1, nx) > 1e-3, "P1 ablation R5 changes the output");
#ifdef _OPENMP
        {
            float *y2 = fnew(nx);
            ctx.n_threads = 1; lattn_prism_p2_forward(&ctx, &p, 1, T, x, y1, NULL);
            ctx.n_threads = 2; lattn_prism_p2_forward(&ctx, &p, 1, T, x, y2, NULL);
            ctx.n_threads = 0;
            CHECK(same_bits(y1, y2, nx), "P2 chunk bit-identical on 1 and 2 threads");
            free(y2);
        }
#endif
        lattn_prism_p1_free(&ctx, &q); lattn_st_free(&ctx, &f); lattn_free(&ctx, buf); lattn_prism_p1_free(&ctx, &p);
        pc.S = 1;
        lattn_prism_p1_init(&ctx, &p, &pc, 4);
        {   size_t i; for (i = 0; i < (size_t)blk; i++) if (i < 1000) p.arena[i] += 0.2f * (float)lattn_rng_normal_d(&r); }
        p.C = 8;
        lattn_prism_p1_forward_ref(&ctx, &p, 1, T, x, y0, NULL);
        p.ablate = LATTN_PRISM_R3; lattn_prism_p1_forward_ref(&ctx, &p, 1, T, x, y1, NULL);
        CHECK(same_bits(y0, y1, nx), "P1 ablation R3 (no retain) is a no-op with one solver step");
        lattn_prism_p1_free(&ctx, &p);
        pc.S = 0; CHECK(lattn_prism_p1_init(&ctx, &p, &pc, 4) == LATTN_E_SHAPE && p.arena == NULL, "PRISM block init needs S >= 1");
        free(x); free(y0); free(y1);
    }
    {   /* I9: the solver's closed form. The L residual steps δ_l = P_l ∘ r_l, r_{l+1} = r_l - δ_l
           (the loop, written here) against lattn_prism_split; Σ_l δ_l + π_{L+1} ∘ v = v; no retain = P ∘ v */
        enum { N9 = 37, L9 = 5 };
        double P[L9 * N9], v[N9], r9[N9], d0[L9 * N9], d1[L9 * N9], rest[N9], e_loop = 0, e_sum = 0, e_r3 = 0;
        int l, c;
        lattn_rng r = lattn_rng_seed(g_seed + 29);
        for (c = 0; c < L9 * N9; c++) P[c] = 0.001 + 0.998 * (double)lattn_rng_uniform(&r);   /* in (0, 1) */
        for (c = 0; c < N9; c++) r9[c] = v[c] = lattn_rng_normal_d(&r);
        for (l = 0; l < L9; l++)
            for (c = 0; c < N9; c++) { d0[l * N9 + c] = P[l * N9 + c] * r9[c]; r9[c] -= d0[l * N9 + c]; }
        for (c = 0; c < L9 * N9; c++) d1[c] = rest[c % N9] = NAN;
        lattn_prism_split(N9, L9, P, v, 1, d1, rest);
        for (c = 0; c < N9; c++) {
            double sum = rest[c];
            for (l = 0; l < L9; l++) { sum += d1[l * N9 + c]; e_loop = fmax(e_loop, fabs(d1[l * N9 + c] - d0[l * N9 + c])); }
            e_sum = fmax(e_sum, fabs(sum - v[c]));
            e_loop = fmax(e_loop, fabs(rest[c] - r9[c]));
            if (!(sum == sum) || !(rest[c] == rest[c])) e_sum = INFINITY;
        }
        CHECK(e_loop <= 1e-14 && e_sum <= 1e-14, "I9: solver loop = closed form (%.2g), sum of steps + remainder = v (%.2g)",
              e_loop, e_sum);
        lattn_prism_split(N9, L9, P, v, 0, d1, NULL);
        for (c = 0; c < L9 * N9; c++) {
            double pv = P[c] * v[c % N9];    /* its own statement: no fused multiply-subtract */
            e_r3 = fmax(e_r3, fabs(d1[c] - pv));
        }
        CHECK(e_r3 == 0, "I9: without retain every step takes P ∘ v");
    }
    {   /* I13 on the core: P0's write with GELU -> identity, p = 1, u = 0, L = 1 (δ = v) is GDN's
           (erase along k̂ with β, base write off, one injection (k̂, β, v)) */
        gdr_case c;
        lattn_gdr_args a;
        float *o0, *o1, *h0_, *h1, *zc;
        size_t nh, i;
        lattn_rng r = lattn_rng_seed(g_seed + 23);
        gdr_make(&c, &r, 2, 50, 2, 16, 16, GDR_GDN, 0, 1.0, 1.0f, 0, 0);
        nh = (size_t)(c.a.B * c.a.T * c.a.H);
        o0 = fnew(c.no); o1 = fnew(c.no); h0_ = fnew(c.ns); h1 = fnew(c.ns); zc = fnew(nh);
        for (i = 0; i < nh; i++) zc[i] = 0.0f;
        gdr_run(&ctx, &c, LATTN_FORM_REF, 0, o0, h0_);
        a = c.a; a.e = c.a.k; a.c = zc; a.L = 1; a.inj_b = c.a.beta; a.inj_kap = c.a.k; a.inj_d = c.a.v; a.o = o1; a.ht = h1;
        CHECK(lattn_gdr_ref(&ctx, &a) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-12 && rel_rms(h1, h0_, c.ns) <= 1e-12,
              "P0 reduced (L = 1, δ = v) = GDN: %.3g", rel_rms(o1, o0, c.no));
        CHECK((a.chunk = 16, lattn_gdr_chunk(&ctx, &a)) == LATTN_OK && rel_rms(o1, o0, c.no) <= 1e-5, "P0 reduced = GDN (_chunk)");
        free(o0); free(o1); free(h0_); free(h1); free(zc); gdr_free(&c);
    }
    {   /* parameter counts (spec §4.6): large_130m, its GDN twin, and the README's 12-layer GDN */
        lattn_prism_config pc = lattn_prism_config_large_130m();
        int64_t b2 = 0, b0 = 0, np = lattn__prism_params(&pc, &b2);
        pc.S = 0;
        CHECK(np == 107520512LL && lattn__prism_params(&pc, &b0) == 101126528LL, "PRISM large_130m 107,520,512; GDN 101,126,528 (%lld)", (long long)np);
        CHECK(b2 - b0 == 2 * (4 * 128 * 768 + 8 * 768 + 2 * 128 + 8), "PRISM overhead per block S(4RD + HD + 2R + H)");
        pc.n_layers = 12; pc.H = 12;
        CHECK(lattn__prism_params(&pc, NULL) == 132033984LL, "GDN with 12 layers and 12 heads: 132,033,984");
        pc.D = 0; CHECK(lattn__prism_params(&pc, &b0) == -1 && b0 == -1, "PRISM params: D = 0");
        pc.D = (int64_t)1 << 30; CHECK(lattn__prism_params(&pc, NULL) == -1, "PRISM params: D out of range");
    }
    for (ci = 0; ci < 3; ci++) {
        char path[256];
        lattn_st_file f;
        lattn_prism_p1 p;
        const lattn_st_tensor *tx;
        float *x, *y;
        double *y64, *w, *w2;
        int64_t B, T, D;
        size_t n;
        snprintf(path, sizeof path, "tests/external/%s.safetensors", cases[ci]);
        if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "cannot read %s", path); continue; }
        CHECK(lattn_prism_p1_init_st(&ctx, &p, &f, "") == LATTN_OK, "P1 load %s: %s", cases[ci], lattn_ctx_error(&ctx));
        p.C = (int64_t)strtol(lattn_st_meta(&f, "chunk_size"), NULL, 10);
        {   /* the loaded block's size is the formula's P_blk */
            lattn_prism_config pc;
            size_t np = 0, i;
            int64_t blk;
            pc.vocab = 0; pc.seq_len = 1; pc.D = p.D; pc.n_layers = 1; pc.H = p.H; pc.S = p.S; pc.R = p.R; pc.Kc = p.Kc; pc.rg = p.rg;
            lattn__prism_params(&pc, &blk);
            for (i = 0; i < (size_t)f.n_tensors; i++)
                if (strcmp(f.tensors[i].name, "x") && strncmp(f.tensors[i].name, "y", 1) && strncmp(f.tensors[i].name, "_uvqk", 5)) np += f.tensors[i].count;
            CHECK((int64_t)np == blk, "P1 %s: %zu parameters = P_blk %lld", cases[ci], np, (long long)blk);
        }
        tx = lattn_st_find(&f, "x");
        B = tx->shape[0]; T = tx->shape[1]; D = tx->shape[2]; n = (size_t)(B * T * D);
        x = tensor_f32(&f, "x"); w = tensor_f64(&f, "y", NULL);
        y = fnew(n); y64 = (double *)malloc(n * sizeof(double));
        CHECK(lattn_prism_p1_forward_ref(&ctx, &p, B, T, x, y, y64) == LATTN_OK, "P1 ref");
        CHECK(rel_rms_d(y, w, n) <= 1e-6, "P1 %s float32 output: %g", cases[ci], rel_rms_d(y, w, n));
        {
            double num = 0, den = 0;
            size_t i;
            for (i = 0; i < n; i++) { num += (y64[i] - w[i]) * (y64[i] - w[i]); den += w[i] * w[i]; }
            CHECK(sqrt(num / den) <= 1e-12, "P1 %s = the official PRISMBlock (float64): %g", cases[ci], sqrt(num / den));
        }
        if (ci == 1) {                   /* the official output depends on C: 64 vs 128 */
            w2 = tensor_f64(&f, "y_chunk128", NULL);
            CHECK(rel_rms_d(y, w2, n) > 0.01, "P1 at C = 64 differs from C = 128 (the chunk dependence of the official code)");
            p.C = 128;
            lattn_prism_p1_forward_ref(&ctx, &p, B, T, x, y, NULL);
            CHECK(rel_rms_d(y, w2, n) <= 1e-6, "P1 at C = 128 on the C = 64 case's weights = its y_chunk128");
            free(w2);
        }
        if (ci == 2) {                   /* solver gates and keys zero: PRISMBlock = the repo's GDNBlock */
            w2 = tensor_f64(&f, "y_gdn", NULL);
            CHECK(rel_rms_d(y, w2, n) <= 1e-6, "P1 with the solver off = the official GDNBlock: %g", rel_rms_d(y, w2, n));
            free(w2);
        }
        if (ci == 1) {                   /* P2 on the same weights: chunk sizes, steps, state carried across calls */
            int64_t T2 = g_quick ? 40 : 100, SF = lattn__prism_p2_state_floats(&p), tt, bb, T1 = 37;
            static const int Cs[4] = { 1, 16, 64, 128 };
            int k2;
            float *x2 = fnew((size_t)(B * T2 * D)), *r0 = fnew((size_t)(B * T2 * D)), *r1 = fnew((size_t)(B * T2 * D));
            float *s0 = fnew((size_t)(B * SF)), *s1 = fnew((size_t)(B * SF)), *xi = fnew((size_t)(B * D)), *yi = fnew((size_t)(B * D));
            lattn_status st2 = LATTN_OK;
            for (bb = 0; bb < B; bb++) memcpy(x2 + bb * T2 * D, x + bb * T * D, (size_t)(T2 * D) * sizeof(float));
            memset(s0, 0, (size_t)(B * SF) * sizeof(float));
            CHECK(lattn_prism_p2_forward_ref(&ctx, &p, B, T2, x2, r0, s0, NULL) == LATTN_OK, "P2 ref");
            for (k2 = 0; k2 < 4; k2++) {
                memset(s1, 0, (size_t)(B * SF) * sizeof(float)); poison(r1, (size_t)(B * T2 * D));
                use_chunk(&ctx, &cp, Cs[k2]);
                CHECK(lattn_prism_p2_forward(&ctx, &p, B, T2, x2, r1, s1) == LATTN_OK &&
                      rel_rms(r1, r0, (size_t)(B * T2 * D)) <= 1e-5 && rel_rms(s1, s0, (size_t)(B * SF)) <= 1e-5,
                      "P2 chunk %d = P2 per token: y %.3g state %.3g", Cs[k2], rel_rms(r1, r0, (size_t)(B * T2 * D)), rel_rms(s1, s0, (size_t)(B * SF)));
            }
            ctx.profile = NULL;
            memset(s1, 0, (size_t)(B * SF) * sizeof(float)); poison(r1, (size_t)(B * T2 * D));
            for (tt = 0; tt < T2 && st2 == LATTN_OK; tt++) {
                for (bb = 0; bb < B; bb++) memcpy(xi + bb * D, x2 + (bb * T2 + tt) * D, (size_t)D * sizeof(float));
                st2 = lattn_prism_p2_step(&ctx, &p, B, xi, yi, s1);
                for (bb = 0; bb < B; bb++) memcpy(r1 + (bb * T2 + tt) * D, yi + bb * D, (size_t)D * sizeof(float));
            }
            CHECK(st2 == LATTN_OK && rel_rms(r1, r0, (size_t)(B * T2 * D)) <= 1e-5 && rel_rms(s1, s0, (size_t)(B * SF)) <= 1e-5,
                  "P2 T steps = P2 per token: y %.3g", rel_rms(r1, r0, (size_t)(B * T2 * D)));
            {   /* two calls carrying the state = one call (the conv history included) */
                float *xa = fnew((size_t)(T1 * D)), *xb2 = fnew((size_t)((T2 - T1) * D)), *ya = fnew((size_t)(T1 * D));
                float *yb = fnew((size_t)((T2 - T1) * D)), *sa = fnew((size_t)SF);
                memcpy(xa, x2, (size_t)(T1 * D) * sizeof(float)); memcpy(xb2, x2 + T1 * D, (size_t)((T2 - T1) * D) * sizeof(float));
                memset(sa, 0, (size_t)SF * sizeof(float));
                lattn_prism_p2_forward(&ctx, &p, 1, T1, xa, ya, sa); lattn_prism_p2_forward(&ctx, &p, 1, T2 - T1, xb2, yb, sa);
                CHECK(rel_rms(ya, r0, (size_t)(T1 * D)) <= 1e-5 && rel_rms(yb, r0 + T1 * D, (size_t)((T2 - T1) * D)) <= 1e-5 &&
                      rel_rms(sa, s0, (size_t)SF) <= 1e-5, "P2: a sequence split over two calls = one call");
                free(xa); free(xb2); free(ya); free(yb); free(sa);
            }
            CHECK(lattn_prism_p2_step(&ctx, &p, B, xi, yi, NULL) == LATTN_E_NULL, "P2 step without a state");
            free(x2); free(r0); free(r1); free(s0); free(s1); free(xi); free(yi);
        }
        if (ci == 0) {                   /* errors */
            lattn_prism_p1 q;
            CHECK(lattn_prism_p1_forward_ref(&ctx, &p, B, T - 1, x, y, NULL) == LATTN_E_SHAPE, "P1: T not a multiple of C");
            CHECK(lattn_prism_p1_forward_ref(&ctx, &p, 0, T, x, y, NULL) == LATTN_E_SHAPE, "P1: B = 0");
            CHECK(lattn_prism_p1_forward_ref(&ctx, NULL, B, T, x, y, NULL) == LATTN_E_NULL, "P1: NULL block");
            CHECK(lattn_prism_p1_init_st(&ctx, &q, &f, "blk.") == LATTN_E_FORMAT && q.arena == NULL, "P1 load: missing tensors");
        }
        free(x); free(y); free(y64); free(w);
        lattn_prism_p1_free(&ctx, &p);
        lattn_st_free(&ctx, &f);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* ---------------------------------------------------------------------------------------------- */
/* softmax attention                                                                              */
/* ---------------------------------------------------------------------------------------------- */
typedef struct { lattn_attn_args a; float *q, *k, *v; size_t nq, nkv, no, nl; } attn_case;
/* a pseudo-random causal visibility: hides some keys, and every key of queries i % 11 == 4 */
static int vis_random(const void *u, int64_t n, int64_t i, int64_t j) {
    (void)u; (void)n;
    if (i % 11 == 4 || j > i) return 0;
    return ((uint64_t)(i * 7919 + j * 104729) * 0x9E3779B97F4A7C15ull >> 61) != 0;
}
/* causal with a hole: keys j in (i - 9, i - 3) are hidden; the classifier knows it */
static int vis_holes(const void *u, int64_t n, int64_t i, int64_t j) { (void)u; (void)n; return j <= i && !(j > i - 9 && j < i - 3); }
static int vis_holes_block(const void *u, int64_t n, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    (void)u; (void)n;
    if (j0 > i1 - 1) return LATTN_VIS_NONE;
    if (j1 - 1 <= i0 - 9) return LATTN_VIS_ALL;
    return LATTN_VIS_SOME;
}
enum { AM_CAUSAL, AM_WIN5, AM_WIN70, AM_RANDOM, AM_HOLES, AM_FULL, AM_N };
static const char *const am_names[AM_N] = { "causal", "window 5", "window 70", "random fn", "fn+classifier", "full" };
static void attn_make(attn_case *c, lattn_rng *r, int64_t B, int64_t T, int64_t H, int64_t Hkv, int64_t K, int64_t V,
                      int mask, int varlen) {
    memset(c, 0, sizeof *c);
    memset(&c->a, 0, sizeof c->a);
    c->a.B = B; c->a.T = T; c->a.H = H; c->a.H_kv = Hkv; c->a.K = K; c->a.V = V;
    c->nq = (size_t)(B * T * H * K); c->nkv = (size_t)(B * T * Hkv * (K > V ? K : V));
    c->no = (size_t)(B * T * H * V); c->nl = (size_t)(B * T * H);
    c->q = fnormal(r, c->nq); c->k = fnormal(r, c->nkv); c->v = fnormal(r, c->nkv);
    c->a.q = c->q; c->a.k = c->k; c->a.v = c->v;
    c->a.mask = mask == AM_CAUSAL ? LATTN_MASK_CAUSAL : mask == AM_FULL ? LATTN_MASK_FULL
              : mask <= AM_WIN70 ? LATTN_MASK_WINDOW : LATTN_MASK_FN;
    c->a.window = mask == AM_WIN5 ? 5 : 70;
    c->a.visible = mask == AM_RANDOM ? vis_random : vis_holes;
    c->a.visible_block = mask == AM_HOLES ? vis_holes_block : NULL;
    if (varlen) { make_offsets(T); c->a.offsets = g_off; c->a.n_seqs = 4; }
}
static void attn_free(attn_case *c) { free(c->q); free(c->k); free(c->v); }
/* lse agrees: both -inf, or within tol relative */
static int lse_ok(const float *x, const float *y, size_t n, double tol) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (y[i] == -HUGE_VALF) { if (x[i] != -HUGE_VALF) return 0; continue; }
        if (!(fabs((double)x[i] - y[i]) <= tol * (1.0 + fabs((double)y[i])))) return 0;
    }
    return 1;
}
static lattn_status attn_run(lattn_ctx *ctx, attn_case *c, lattn_form form, int chunk, float *o, float *lse) {
    c->a.o = o; c->a.lse = lse;
    c->a.chunk = chunk;
    if (form == LATTN_FORM_REF) return lattn_attn_ref(ctx, &c->a);
    return form == LATTN_FORM_CHUNK ? lattn_attn_chunk(ctx, &c->a) : lattn_attn_step(ctx, &c->a, NULL);
}

static void test_attn(void) {
    lattn_rng r = lattn_rng_seed(g_seed + 29);
    lattn_ctx ctx;
    static const int64_t Ts[6] = { 0, 1, 63, 64, 65, 300 };
    static const int64_t dims[2][2] = { { 60, 60 }, { 100, 72 } };
    int mask, ti, di, var;
    lattn_ctx_init(&ctx);
    /* every mask, odd sizes, head dims 60 and 100, GQA, batch and variable lengths: the tiled
       form (tiles 64, and 32 for the windows) and the decoder against _ref */
    for (mask = 0; mask < AM_N; mask++)
        for (ti = 0; ti < 6; ti++)
            for (di = 0; di < 2; di++)
                for (var = 0; var < 2; var++) {
                    attn_case c;
                    int64_t T = g_quick && Ts[ti] == 300 ? 150 : Ts[ti];
                    float *o0, *l0, *o, *l;
                    int form;
                    if (g_quick && di == 1 && var == 1) continue;
                    attn_make(&c, &r, var ? 1 : 2, T, 4, di ? 2 : 4, dims[di][0], dims[di][1], mask, var);
                    o0 = fnew(c.no); l0 = fnew(c.nl); o = fnew(c.no); l = fnew(c.nl);
                    CHECK(attn_run(&ctx, &c, LATTN_FORM_REF, 0, o0, l0) == LATTN_OK, "attn _ref %s: %s", am_names[mask], lattn_ctx_error(&ctx));
                    for (form = LATTN_FORM_CHUNK; form <= LATTN_FORM_STEP; form++) {
                        lattn_status s;
                        if (form == LATTN_FORM_STEP && mask == AM_FULL) continue;
                        poison(o, c.no); poison(l, c.nl);
                        s = attn_run(&ctx, &c, (lattn_form)form, mask == AM_WIN5 || mask == AM_WIN70 ? 32 : 0, o, l);
                        CHECK(s == LATTN_OK && rel_rms(o, o0, c.no) <= 1e-5 && lse_ok(l, l0, c.nl, 1e-5),
                              "attn %s %s T=%lld K=%lld %s: o %.3g (%s)", lattn_form_name((lattn_form)form), am_names[mask],
                              (long long)T, (long long)c.a.K, var ? "varlen" : "batch 2", rel_rms(o, o0, c.no), s ? lattn_ctx_error(&ctx) : "");
                    }
                    free(o0); free(l0); free(o); free(l); attn_free(&c);
                }
    /* rows that see no key: o = 0, lse = -inf, in every form */
    {
        attn_case c;
        float *o, *l;
        int form;
        int64_t i;
        attn_make(&c, &r, 1, 40, 1, 1, 16, 16, AM_RANDOM, 0);
        o = fnew(c.no); l = fnew(c.nl);
        for (form = LATTN_FORM_REF; form <= LATTN_FORM_STEP; form++) {
            int ok = form != LATTN_FORM_PARALLEL && attn_run(&ctx, &c, (lattn_form)form, 16, o, l) == LATTN_OK;
            if (form == LATTN_FORM_PARALLEL) continue;
            for (i = 4; i < 40; i += 11) ok = ok && o[i * 16] == 0.0f && o[i * 16 + 15] == 0.0f && l[i] == -HUGE_VALF;
            CHECK(ok, "attn form %d: a row with no visible key gives o = 0, lse = -inf", form);
        }
        free(o); free(l); attn_free(&c);
    }
    /* the same function on the trn2 (C = 128, head dim 160 over two partition tiles) and h100
       (C = 64) profiles; tile sizes 16, 128; tiles the mask hides are never visited */
    {
        attn_case c;
        lattn_ctx c2;
        float *o0, *o;
        int prof;
        attn_make(&c, &r, 1, 300, 2, 1, 160, 96, AM_CAUSAL, 0);
        o0 = fnew(c.no); o = fnew(c.no);
        attn_run(&ctx, &c, LATTN_FORM_REF, 0, o0, NULL);
        for (prof = 0; prof < 4; prof++) {
            lattn_status s;
            lattn_ctx_init(&c2);
            c2.profile = prof == 0 ? lattn_profile_trn2() : prof == 1 ? lattn_profile_h100() : lattn_profile_cpu();
            poison(o, c.no);
            s = attn_run(&c2, &c, LATTN_FORM_CHUNK, prof == 2 ? 16 : prof == 3 ? 128 : 0, o, NULL);
            CHECK(s == LATTN_OK && rel_rms(o, o0, c.no) <= 1e-5, "attn _chunk on %s tile %d: %.3g %s", c2.profile->name,
                  prof == 2 ? 16 : prof == 3 ? 128 : 0, rel_rms(o, o0, c.no), s ? lattn_ctx_error(&c2) : "");
            if (prof == 0) /* 3 query tiles of 128: 1 + 2 + 3 visited key tiles per head */
                CHECK(c2.stats.unrolled_steps == 12 && c2.stats.sbuf_peak_bytes_per_partition <= c2.profile->sbuf_bytes_per_partition,
                      "attn on trn2: %llu tile steps (12 expected)", (unsigned long long)c2.stats.unrolled_steps);
        }
        /* window 5 at tile 16: each query tile meets only its own key tile and the one before */
        c.a.mask = LATTN_MASK_WINDOW; c.a.window = 5;
        lattn_ctx_init(&c2);
        attn_run(&c2, &c, LATTN_FORM_CHUNK, 16, o, NULL);
        CHECK(c2.stats.unrolled_steps == 2 * (1 + 2 * 18), "window 5, tile 16: %llu tile steps (74 expected)",
              (unsigned long long)c2.stats.unrolled_steps);
        CHECK(attn_run(&c2, &c, LATTN_FORM_CHUNK, 256, o, NULL) == LATTN_E_SHAPE, "tile 256 exceeds 128 partitions");
        free(o0); free(o); attn_free(&c);
    }
    /* bit-identical for 1, 2 and 3 threads */
    {
        attn_case c;
        float *o1, *o2;
        int th, ok = 1;
        attn_make(&c, &r, 2, 200, 3, 3, 32, 40, AM_WIN70, 0);
        o1 = fnew(c.no); o2 = fnew(c.no);
        ctx.n_threads = 1; attn_run(&ctx, &c, LATTN_FORM_CHUNK, 0, o1, NULL);
        for (th = 2; th <= 3; th++) { ctx.n_threads = th; poison(o2, c.no); attn_run(&ctx, &c, LATTN_FORM_CHUNK, 0, o2, NULL); ok = ok && same_bits(o1, o2, c.no); }
        CHECK(ok, "attn _chunk bit-identical across thread counts");
        ctx.n_threads = 0;
        free(o1); free(o2); attn_free(&c);
    }
    /* NaN in one document's K and V: the other documents' outputs are bit-identical */
    {
        attn_case c;
        float *o1, *o2;
        int64_t i, d;
        int form, ok;
        attn_make(&c, &r, 1, 130, 2, 2, 24, 24, AM_CAUSAL, 1);       /* documents [0,32) [32,32) [32,65) [65,130) */
        o1 = fnew(c.no); o2 = fnew(c.no);
        for (form = LATTN_FORM_REF; form <= LATTN_FORM_STEP; form++) {
            if (form == LATTN_FORM_PARALLEL) continue;
            attn_run(&ctx, &c, (lattn_form)form, 16, o1, NULL);
            for (i = g_off[2]; i < g_off[3]; i++) for (d = 0; d < 2 * 24; d++) { c.k[i * 48 + d] = NAN; c.v[i * 48 + d] = NAN; }
            attn_run(&ctx, &c, (lattn_form)form, 16, o2, NULL);
            ok = same_bits(o1, o2, (size_t)(g_off[2] * 48)) && same_bits(o1 + g_off[3] * 48, o2 + g_off[3] * 48, (size_t)((130 - g_off[3]) * 48));
            CHECK(ok && o2[g_off[2] * 48] != o2[g_off[2] * 48], "attn form %d: NaN in one document stays in it", form);
            attn_free(&c);
            attn_make(&c, &r, 1, 130, 2, 2, 24, 24, AM_CAUSAL, 1);
        }
        free(o1); free(o2); attn_free(&c);
    }
    /* _step against a KV cache = _chunk, token by token, batch 2 with different cache fills */
    {
        attn_case c, one;
        lattn_kv_cache kv;
        int64_t len[2] = { 0, 0 }, T = 70, t, b, h;
        float *o0, *o, *kc, *vc, qs[2 * 4 * 16], ks[2 * 2 * 16], vs[2 * 2 * 12];
        int ok = 1;
        attn_make(&c, &r, 2, T, 4, 2, 16, 12, AM_WIN70, 0);
        c.a.window = 20;
        o0 = fnew(c.no); o = fnew(2 * 4 * 12);
        attn_run(&ctx, &c, LATTN_FORM_CHUNK, 0, o0, NULL);
        kc = fnew((size_t)(2 * T * 2 * 16)); vc = fnew((size_t)(2 * T * 2 * 12));
        kv.B = 2; kv.cap = T; kv.H_kv = 2; kv.K = 16; kv.V = 12; kv.k = kc; kv.v = vc; kv.len = len;
        one = c; one.a.T = 1; one.a.q = qs; one.a.k = ks; one.a.v = vs; one.a.o = o; one.a.lse = NULL;
        for (t = 0; t < T; t++) {
            for (b = 0; b < 2; b++) {
                memcpy(qs + b * 64, c.q + (b * T + t) * 64, 64 * sizeof(float));
                memcpy(ks + b * 32, c.k + (b * T + t) * 32, 32 * sizeof(float));
                memcpy(vs + b * 24, c.v + (b * T + t) * 24, 24 * sizeof(float));
            }
            ok = ok && lattn_attn_step(&ctx, &one.a, &kv) == LATTN_OK;
            for (b = 0; b < 2; b++) for (h = 0; h < 48; h++) {
                double d = fabs((double)o[b * 48 + h] - o0[(b * T + t) * 48 + h]);
                ok = ok && d <= 1e-5 * (1 + fabs((double)o0[(b * T + t) * 48 + h]));
            }
        }
        CHECK(ok && len[0] == T && len[1] == T, "attn _step x T = _chunk (window 20, GQA, batch 2)");
        poison(o, 96);
        CHECK(lattn_attn_step(&ctx, &one.a, &kv) == LATTN_E_SHAPE && len[0] == T && o[0] != o[0], "attn _step on a full cache: error, nothing written");
        len[1] = 3; kv.cap = T;
        kv.V = 13;
        CHECK(lattn_attn_step(&ctx, &one.a, &kv) == LATTN_E_SHAPE, "attn _step: cache shape mismatch");
        kv.V = 12; one.a.T = 2;
        CHECK(lattn_attn_step(&ctx, &one.a, &kv) == LATTN_E_SHAPE, "attn _step: T = 2");
        one.a.T = 1; one.a.mask = LATTN_MASK_FULL;
        CHECK(lattn_attn_step(&ctx, &one.a, &kv) == LATTN_E_UNSUPPORTED, "attn _step: mask FULL");
        CHECK(lattn_attn_step(&ctx, &c.a, NULL) == LATTN_E_SHAPE || lattn_attn_step(&ctx, &one.a, NULL) != LATTN_OK, "attn _step: no cache");
        free(o0); free(o); free(kc); free(vc); attn_free(&c);
    }
    /* bad arguments: a clear error, nothing written */
    {
        attn_case c;
        lattn_attn_args b;
        float *o;
        int k;
        attn_make(&c, &r, 1, 20, 4, 2, 8, 8, AM_CAUSAL, 0);
        o = fnew(c.no);
        c.a.o = o;
        for (k = 0; k < 9; k++) {
            lattn_status want = LATTN_E_SHAPE, s;
            b = c.a;
            switch (k) {
            case 0: b.H_kv = 3; break;
            case 1: b.mask = LATTN_MASK_WINDOW; b.window = -1; want = LATTN_E_DOMAIN; break;
            case 2: b.mask = LATTN_MASK_FN; b.visible = NULL; want = LATTN_E_NULL; break;
            case 3: b.mask = (lattn_mask)7; want = LATTN_E_DOMAIN; break;
            case 4: b.k = NULL; want = LATTN_E_NULL; break;
            case 5: b.K = 0; break;
            case 6: b.T = -1; break;
            case 7: b.scale = NAN; want = LATTN_E_DOMAIN; break;
            default: b.T = INT64_MAX / 2; b.H = 4; want = LATTN_E_OVERFLOW; break;
            }
            s = lattn_attn_chunk(&ctx, &b);
            CHECK(s == want && lattn_attn_ref(&ctx, &b) == want && lattn_attn_step(&ctx, &b, NULL) == want && o[0] != o[0],
                  "attn bad args case %d: %d (%s)", k, (int)s, lattn_ctx_error(&ctx));
        }
        CHECK(lattn_attn_chunk(&ctx, NULL) == LATTN_E_NULL && (c.a.chunk = -1, lattn_attn_chunk(&ctx, &c.a)) == LATTN_E_SHAPE, "attn NULL args, chunk -1");
        c.a.chunk = 0;
        {
            lattn_ctx c2;
            lattn_ctx_init(&c2);
            c2.profile = lattn_profile_trn2();
            b = c.a; b.K = 600;
            free(c.q); free(c.k); c.q = fnormal(&r, 20 * 4 * 600); c.k = fnormal(&r, 20 * 2 * 600); b.q = c.q; b.k = c.k;
            CHECK(lattn_attn_chunk(&c2, &b) == LATTN_E_UNSUPPORTED && o[0] != o[0], "attn head dim 600 on trn2: unsupported");
        }
        free(o); attn_free(&c);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* the transformer                                                                                */
/* ---------------------------------------------------------------------------------------------- */
static int32_t *tokens_new(lattn_rng *r, int64_t n, int64_t vocab) {
    int32_t *t = (int32_t *)malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    int64_t i;
    for (i = 0; i < n; i++) t[i] = (int32_t)(lattn_rng_next(r) % (uint64_t)vocab);
    return t;
}
typedef struct { const lattn_tf_config *c; const int32_t *tok; float *o; lattn_tf_cache *kc; } tf_alloc_run;
static lattn_status tf_alloc_run_fn(lattn_ctx *ctx, void *user) {
    tf_alloc_run *u = (tf_alloc_run *)user;
    lattn_tf_model mb;
    lattn_tf_cache cache;
    double loss;
    lattn_status st = lattn_tf_init(ctx, &mb, u->c, 3);
    memset(&cache, 0, sizeof cache);
    if (st == LATTN_OK) st = lattn_tf_cache_init(ctx, &cache, &mb, 2, 8);
    if (st == LATTN_OK) st = lattn_tf_forward(ctx, &mb, 2, 5, u->tok, NULL, u->o, &loss, &cache);
    if (st == LATTN_OK) st = lattn_tf_step(ctx, &mb, 2, u->tok, NULL, u->o, &cache);
    if (st != LATTN_OK && cache.len && cache.len[0] != 0 && cache.len[0] != 5) st = LATTN_E_DOMAIN;   /* half-advanced cache */
    lattn_tf_cache_free(ctx, &cache);
    lattn_tf_free(ctx, &mb);
    return st;
}
static void test_transformer(void) {
    lattn_rng r = lattn_rng_seed(g_seed + 31);
    lattn_ctx ctx;
    lattn_tf_config c = lattn_tf_config_small();
    lattn_tf_model m;
    static const char *const scales[5] = { "xs", "s", "m", "l", "xl" };
    static const int64_t sizes[5] = { 53027328, 130665216, 378717184, 831253760, 1678081600 };
    int i, w;
    lattn_ctx_init(&ctx);
    /* the paper's parameter counts from V·d + L(13d² + 2d) + d */
    for (i = 0; i < 5; i++) {
        lattn_tf_config s = lattn_tf_config_sps(scales[i]);
        int64_t d = s.D;
        CHECK(lattn__tf_params(&s) == sizes[i] && sizes[i] == s.vocab * d + s.n_layers * (13 * d * d + 2 * d) + d,
              "tf params %s: %lld", scales[i], (long long)lattn__tf_params(&s));
    }
    CHECK(lattn_tf_config_sps("xxl").n_layers == 0 && lattn__tf_params(NULL) == -1, "tf unknown scale");
    CHECK(lattn_tf_init(&ctx, &m, &c, 5) == LATTN_OK && (int64_t)m.n_params == lattn__tf_params(&c), "tf init: %s", lattn_ctx_error(&ctx));
    {   /* init: c_proj ~ N(0, 0.02/sqrt(2L)), the rest N(0, 0.02), gains 1 */
        lattn_tensor *wo = lattn_tf_tensor(&m, "layers.1.attn.c_proj.weight"), *wq = lattn_tf_tensor(&m, "layers.0.attn.qkv_proj.weight");
        lattn_tensor *g = lattn_tf_tensor(&m, "norm.weight");
        double s1 = 0, s2 = 0;
        size_t j;
        for (j = 0; wo && j < wo->count; j++) s1 += (double)wo->data[j] * wo->data[j];
        for (j = 0; wq && j < wq->count; j++) s2 += (double)wq->data[j] * wq->data[j];
        CHECK(wo && wq && g && g->data[3] == 1.0f && fabs(sqrt(s1 / wo->count) / 0.01 - 1) < 0.1 && fabs(sqrt(s2 / wq->count) / 0.02 - 1) < 0.1,
              "tf init std: c_proj %.4f, qkv %.4f", wo ? sqrt(s1 / wo->count) : 0, wq ? sqrt(s2 / wq->count) : 0);
    }
    /* fast forward = _ref (logits and loss), causal and windowed, batch 2 */
    for (w = 0; w < 2; w++) {
        int64_t B = 2, T = g_quick ? 40 : 77, n;
        int32_t *tok = tokens_new(&r, B * T, c.vocab);
        float *o0, *o1;
        double l0, l1;
        m.cfg.window = w ? 9 : -1;
        n = B * T * c.vocab;
        o0 = fnew((size_t)n); o1 = fnew((size_t)n);
        CHECK(lattn_tf_forward_ref(&ctx, &m, B, T, tok, NULL, o0, &l0, NULL) == LATTN_OK, "tf ref: %s", lattn_ctx_error(&ctx));
        CHECK(lattn_tf_forward(&ctx, &m, B, T, tok, NULL, o1, &l1, NULL) == LATTN_OK && rel_rms(o1, o0, (size_t)n) <= 1e-5 &&
              fabs(l1 - l0) <= 1e-5 * l0 && fabs(l0 - log((double)c.vocab)) < 0.1,
              "tf forward %s: logits %.3g, loss %.7f vs %.7f", w ? "window 9" : "causal", rel_rms(o1, o0, (size_t)n), l1, l0);
        l1 = 0;
        CHECK(lattn_tf_forward(&ctx, &m, B, T, tok, NULL, NULL, &l1, NULL) == LATTN_OK && fabs(l1 - l0) <= 1e-5 * l0, "tf loss without logits");
        /* step decoding = forward logits; prefill of 30 tokens then steps */
        {
            lattn_tf_cache kc;
            int32_t tt[2];
            int64_t t, b, P;
            int ok = 1;
            for (P = 0; P <= 30; P += 30) {
                CHECK(lattn_tf_cache_init(&ctx, &kc, &m, B, T) == LATTN_OK, "tf cache");
                if (P) {
                    int32_t *tp = (int32_t *)malloc((size_t)(B * P) * sizeof(int32_t));
                    float *op = fnew((size_t)(B * P * c.vocab));
                    for (b = 0; b < B; b++) memcpy(tp + b * P, tok + b * T, (size_t)P * sizeof(int32_t));
                    ok = ok && lattn_tf_forward(&ctx, &m, B, P, tp, NULL, op, NULL, &kc) == LATTN_OK && kc.pos[1] == P && kc.len[3] == P;
                    for (b = 0; b < B; b++) ok = ok && rel_rms(op + b * P * c.vocab, o1 + b * T * c.vocab, (size_t)(P * c.vocab)) <= 1e-5;
                    free(tp); free(op);
                }
                for (t = P; t < T; t++) {
                    float lg[2 * 256];
                    for (b = 0; b < B; b++) tt[b] = tok[b * T + t];
                    ok = ok && lattn_tf_step(&ctx, &m, B, tt, NULL, lg, &kc) == LATTN_OK;
                    for (b = 0; b < B; b++) ok = ok && rel_rms(lg + b * c.vocab, o0 + (b * T + t) * c.vocab, (size_t)c.vocab) <= 1e-5;
                }
                CHECK(ok && kc.pos[0] == T, "tf %s: prefill %lld + steps = forward logits", w ? "window 9" : "causal", (long long)P);
                tt[0] = tt[1] = 1;
                CHECK(lattn_tf_step(&ctx, &m, B, tt, NULL, o1, &kc) == LATTN_E_SHAPE && kc.pos[0] == T, "tf step on a full cache");
                lattn_tf_cache_reset(&kc, 0);
                CHECK(kc.pos[0] == 0 && kc.len[0] == 0 && kc.len[2] == 0 && kc.pos[1] == T, "tf cache reset");
                CHECK(lattn_tf_forward(&ctx, &m, B, 3, tok, NULL, o1, NULL, &kc) == LATTN_E_SHAPE, "tf prefill into a used cache");
                lattn_tf_cache_free(&ctx, &kc);
            }
        }
        /* bit-identical across thread counts */
        ctx.n_threads = 1; lattn_tf_forward(&ctx, &m, B, T, tok, NULL, o0, NULL, NULL);
        ctx.n_threads = 2; lattn_tf_forward(&ctx, &m, B, T, tok, NULL, o1, NULL, NULL);
        ctx.n_threads = 0;
        CHECK(same_bits(o0, o1, (size_t)n), "tf forward bit-identical for 1 and 2 threads");
        free(o0); free(o1); free(tok);
    }
    m.cfg.window = -1;
    /* save and load; errors */
    {
        unsigned char *buf;
        size_t sz;
        lattn_st_file f;
        lattn_tf_model m2;
        int32_t tok[6] = { 1, 2, 3, 4, 5, 255 }, bad[2] = { 1, 256 };
        float o0[6 * 256], o1[6 * 256];
        CHECK(lattn_tf_serialize(&ctx, &m, &buf, &sz) == LATTN_OK && lattn_st_parse(&ctx, buf, sz, &f) == LATTN_OK &&
              lattn_tf_init_st(&ctx, &m2, &f, "") == LATTN_OK, "tf serialize/load: %s", lattn_ctx_error(&ctx));
        lattn_tf_forward(&ctx, &m, 2, 3, tok, NULL, o0, NULL, NULL);
        lattn_tf_forward(&ctx, &m2, 2, 3, tok, NULL, o1, NULL, NULL);
        CHECK(same_bits(o0, o1, 6 * 256), "tf loaded model gives the same logits");
        lattn_tf_free(&ctx, &m2); lattn_st_free(&ctx, &f); lattn_free(&ctx, buf);
        poison(o1, 6 * 256);
        CHECK(lattn_tf_forward(&ctx, &m, 1, 2, bad, NULL, o1, NULL, NULL) == LATTN_E_DOMAIN && o1[0] != o1[0], "tf token out of range");
        CHECK(lattn_tf_forward(&ctx, NULL, 1, 2, tok, NULL, o1, NULL, NULL) == LATTN_E_NULL, "tf NULL model");
        CHECK(lattn_tf_forward(&ctx, &m, 1, 2, tok, NULL, NULL, NULL, NULL) == LATTN_E_NULL, "tf no output");
        CHECK(lattn_tf_step(&ctx, &m, 1, tok, NULL, o1, NULL) == LATTN_E_NULL, "tf step without cache");
        CHECK(lattn_tf_forward(&ctx, &m, 0, 2, tok, NULL, o1, NULL, NULL) == LATTN_E_SHAPE && o1[0] != o1[0], "tf B = 0");
        {
            lattn_tf_config b2 = c;
            b2.K = 15;
            CHECK(lattn_tf_init(&ctx, &m2, &b2, 1) == LATTN_E_SHAPE, "tf odd head_dim");
            b2 = c; b2.H_kv = 3;
            CHECK(lattn_tf_init(&ctx, &m2, &b2, 1) == LATTN_E_SHAPE, "tf H not a multiple of H_kv");
            b2 = c; b2.D = INT64_MAX / 2;
            CHECK(lattn_tf_init(&ctx, &m2, &b2, 1) == LATTN_E_OVERFLOW, "tf overflowing sizes");
            b2 = c; b2.norm_eps = 0;
            CHECK(lattn_tf_init(&ctx, &m2, &b2, 1) == LATTN_E_DOMAIN, "tf norm_eps 0");
        }
        {   /* a file with a missing tensor, and one whose metadata is hostile */
            lattn_st_entry e[1];
            int64_t shp[1] = { 64 };
            const char *meta[2] = { "tf.D", "-5" };
            e[0].name = "norm.weight"; e[0].dtype = LATTN_DTYPE_F32; e[0].ndim = 1; e[0].shape = shp; e[0].data = o0;
            CHECK(lattn_st_serialize(&ctx, e, 1, meta, 1, &buf, &sz) == LATTN_OK && lattn_st_parse(&ctx, buf, sz, &f) == LATTN_OK &&
                  lattn_tf_init_st(&ctx, &m2, &f, "") == LATTN_E_FORMAT && m2.arena == NULL, "tf load: hostile metadata");
            lattn_st_free(&ctx, &f); lattn_free(&ctx, buf);
        }
        {   /* every allocation failing in turn: NOMEM, nothing leaked, the cache never half-advanced */
            tf_alloc_run u;
            float *o = fnew(2 * 5 * 256);
            int32_t tok10[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };   /* B = 2, T = 5 */
            int total, badruns;
            u.c = &c; u.tok = tok10; u.o = o;
            badruns = fail_each_alloc(tf_alloc_run_fn, &u, 40, &total);
            CHECK(badruns == 0 && total >= 4, "tf failing allocations: %d bad of %d", badruns, total);
            free(o);
        }
    }
    /* hidden states in and out (vocab 0), one layer: forward = _ref; NaN in one sequence leaves
       the others bit-identical */
    {
        lattn_tf_config hc = c;
        lattn_tf_model hm;
        int64_t B = 3, T = 50, n = B * T * hc.D;
        float *x, *y0, *y1;
        hc.vocab = 0; hc.n_layers = 1;
        CHECK(lattn_tf_init(&ctx, &hm, &hc, 9) == LATTN_OK, "tf vocab 0 init");
        x = fnormal(&r, (size_t)n); y0 = fnew((size_t)n); y1 = fnew((size_t)n);
        lattn_tf_forward_ref(&ctx, &hm, B, T, NULL, x, y0, NULL, NULL);
        CHECK(lattn_tf_forward(&ctx, &hm, B, T, NULL, x, y1, NULL, NULL) == LATTN_OK && rel_rms(y1, y0, (size_t)n) <= 1e-5,
              "tf vocab 0: %.3g", rel_rms(y1, y0, (size_t)n));
        x[T * hc.D + 7 * hc.D + 5] = NAN;                     /* sequence 1, token 7 */
        lattn_tf_forward(&ctx, &hm, B, T, NULL, x, y0, NULL, NULL);
        CHECK(same_bits(y0, y1, (size_t)(T * hc.D)) && same_bits(y0 + 2 * T * hc.D, y1 + 2 * T * hc.D, (size_t)(T * hc.D)) &&
              y0[T * hc.D + 7 * hc.D] != y0[T * hc.D + 7 * hc.D], "tf: NaN in one sequence stays in it");
        free(x); free(y0); free(y1); lattn_tf_free(&ctx, &hm);
    }
    lattn_tf_free(&ctx, &m);
}

/* ---------------------------------------------------------------------------------------------- */
/* the SPS transformer                                                                            */
/* ---------------------------------------------------------------------------------------------- */
static lattn_sps_config sps_cfg(lattn_sps_variant v, int64_t w) {
    lattn_sps_config s = lattn_sps_config_default(v);
    s.w = w; s.predict_id = 255; s.eos_id = 254; s.pad_id = 253;
    return s;
}
/* The T = 4, w = 1 drawings of spec §1 (rows: queries x1 p1 x2 ...; columns: keys). */
static int sps_drawing_ok(lattn_sps_variant v, int64_t w, const char *const *rows, int n) {
    lattn_sps_config s = sps_cfg(v, w);
    int a, b, ok = 1;
    for (a = 0; a < n; a++)
        for (b = 0; b < n; b++) ok = ok && (rows[a][b] == '#') == (lattn_sps_visible(&s, 0, a, b) != 0);
    return ok;
}
static void test_sps(void) {
    static const char *const d_sps[8] = { "#.......", "##......", "###.....", "####....", "#.###...", "#.####..", "#.#.###.", "#.#.####" };
    static const char *const d_2x[8] = { "#.......", "##......", "###.....", "####....", "#####...", "######..", "#######.", "########" };
    static const char *const d_w0[8] = { "#.......", "##......", "#.#.....", "#.##....", "#.#.#...", "#.#.##..", "#.#.#.#.", "#.#.#.##" };
    static const char *const d_del[8] = { "#.......", "##......", "###.....", "####....", ".####...", ".#####..", ".#.####.", ".#.#####" };
    static const char *const d_std[4] = { "#...", "##..", "###.", "####" };
    static const int64_t ws_[6] = { 0, 1, 2, 5, -1, -2 };            /* -1: T-1, -2: T+3 */
    lattn_rng r = lattn_rng_seed(g_seed + 37);
    lattn_ctx ctx;
    lattn_tf_config c = lattn_tf_config_small();
    lattn_tf_model m;
    int v, wi;
    size_t i;
    lattn_ctx_init(&ctx);
    CHECK(sps_drawing_ok(LATTN_SPS_SPS, 1, d_sps, 8) && sps_drawing_ok(LATTN_SPS_2X_MEMORY, 1, d_2x, 8) &&
          sps_drawing_ok(LATTN_SPS_SPS, 3, d_2x, 8) && sps_drawing_ok(LATTN_SPS_SPS, 0, d_w0, 8) &&
          sps_drawing_ok(LATTN_SPS_DELAYED, 1, d_del, 8) && sps_drawing_ok(LATTN_SPS_REVERSE, 1, d_del, 8) &&
          sps_drawing_ok(LATTN_SPS_STANDARD, 1, d_std, 4), "sps: the T = 4, w = 1 masks of the paper");
    {   /* I12: the inclusive token rule differs from the exclusive rule and from the slot-space rule */
        lattn_sps_config s = sps_cfg(LATTN_SPS_SPS, 2);
        int64_t a, b, excl = 0, slot = 0;
        for (a = 0; a < 20; a++)
            for (b = 0; b <= a; b++) {
                int t = lattn_sps_visible(&s, 0, a, b);
                excl += t && (b & 1) && (a >> 1) - (b >> 1) == 2;                       /* i - k = w: in, not in i - k < w */
                slot += !t && (a - b) / 2 <= 2;                                         /* (a - b) div 2 <= w would show it */
            }
        CHECK(excl > 0 && slot > 0, "sps: inclusive window (%lld pairs at i - k = w), token-space distance (%lld pairs the slot rule would add)",
              (long long)excl, (long long)slot);
    }
    {   /* the block classifier never contradicts the rule */
        int vv, ok = 1;
        int64_t a0, a1, b0, b1, a, b;
        for (vv = 0; vv < 5; vv++) {
            lattn_sps_config s = sps_cfg((lattn_sps_variant)vv, 3);
            for (a0 = 0; a0 < 24; a0 += 3) for (a1 = a0 + 1; a1 <= 24; a1 += 5)
                for (b0 = 0; b0 < 24; b0 += 2) for (b1 = b0 + 1; b1 <= 24; b1 += 3) {
                    int cls = lattn_sps_visible_block(&s, 0, a0, a1, b0, b1), all = 1, none = 1;
                    for (a = a0; a < a1; a++) for (b = b0; b < b1; b++) { int t = lattn_sps_visible(&s, 0, a, b); all &= t; none &= !t; }
                    ok = ok && (cls != LATTN_VIS_ALL || all) && (cls != LATTN_VIS_NONE || none);
                }
        }
        CHECK(ok, "sps: the block classifier agrees with the rule");
    }
    {   /* the fast form's blocked layout: a permutation whose inverse gives the slots back, and a
           block classifier that never contradicts the rule on it */
        static const int64_t ns[5] = { 1, 127, 128, 129, 300 };
        int k2, ok = 1, okc = 1;
        for (k2 = 0; k2 < 5; k2++) {
            int64_t n = ns[k2], u, st, seen = 0;
            char *hit = (char *)calloc((size_t)(2 * n), 1);
            for (u = 0; u < n; u++)
                for (st = 0; st < 2; st++) {
                    int64_t rr = lattn__sps_row(n, u, st);
                    ok = ok && rr >= 0 && rr < 2 * n && !hit[rr] && lattn__sps_slot(n, rr) == 2 * u + st;
                    if (rr >= 0 && rr < 2 * n && !hit[rr]) { hit[rr] = 1; seen++; }
                }
            ok = ok && seen == 2 * n;
            free(hit);
        }
        for (v = 1; v < 5; v++) {
            lattn_sps_config s = sps_cfg((lattn_sps_variant)v, 40);
            int64_t len[1] = { 300 }, i0, j0, ii, jj, step2;
            lattn__sps_user us2;
            us2.s = &s; us2.doclen = len;
            for (step2 = 64; step2 <= 128; step2 += 64)   /* aligned tiles, and tiles straddling the streams */
                for (i0 = 0; i0 < 600; i0 += step2 + (step2 == 128 ? 0 : 13))
                    for (j0 = 0; j0 < 600; j0 += step2) {
                        int64_t i1 = LATTN__MIN(600, i0 + step2), j1 = LATTN__MIN(600, j0 + step2);
                        int cls = lattn__sps_vis_blk_block(&us2, 0, i0, i1, j0, j1), all = 1, none = 1;
                        for (ii = i0; ii < i1; ii++) for (jj = j0; jj < j1; jj++) { int t = lattn__sps_vis_blk(&us2, 0, ii, jj); all &= t; none &= !t; }
                        okc = okc && (cls != LATTN_VIS_ALL || all) && (cls != LATTN_VIS_NONE || none);
                    }
        }
        CHECK(ok && okc, "sps blocked layout: permutation %d, classifier %d", ok, okc);
    }
    /* the tiled attention under every variant's mask, several documents, odd sizes = _ref */
    for (v = 0; v < 5; v++)
        for (wi = 0; wi < 3; wi++) {
            lattn_sps_config s = sps_cfg((lattn_sps_variant)v, ws_[wi] == 2 ? 5 : ws_[wi]);
            int64_t off[4] = { 0, 30, 74, 131 }, nq = 131 * 2 * 24;
            lattn_attn_args a = LATTN__ZERO;
            float *q = fnormal(&r, (size_t)nq), *k = fnormal(&r, (size_t)nq / 2), *vv = fnormal(&r, (size_t)nq / 2), *o0 = fnew((size_t)nq), *o1 = fnew((size_t)nq);
            a.B = 1; a.T = 131; a.H = 2; a.H_kv = 1; a.K = a.V = 24; a.q = q; a.k = k; a.v = vv; a.offsets = off; a.n_seqs = 3;
            a.mask = LATTN_MASK_FN; a.visible = lattn_sps_visible; a.visible_block = lattn_sps_visible_block; a.mask_user = &s;
            a.o = o0; lattn_attn_ref(&ctx, &a);
            a.o = o1;
            CHECK((a.chunk = 16, lattn_attn_chunk(&ctx, &a)) == LATTN_OK && rel_rms(o1, o0, (size_t)nq) <= 1e-5, "sps mask %s w=%lld: tiled %.3g",
                  lattn_sps_variant_name(s.variant), (long long)s.w, rel_rms(o1, o0, (size_t)nq));
            free(q); free(k); free(vv); free(o0); free(o1);
        }
    /* the model: every variant and window against _ref, the decoder and prefill against forward */
    CHECK(lattn_tf_init(&ctx, &m, &c, 17) == LATTN_OK, "sps model");
    for (i = 0; i < m.n_params; i++) m.arena[i] *= (m.arena[i] == 1.0f) ? 1.0f : 6.0f;   /* sharper attention */
    {
        int64_t B = 2, T = g_quick ? 23 : 37, n = B * T * c.vocab, t, b;
        int32_t *tok = tokens_new(&r, B * T, 253);
        float *o0 = fnew((size_t)n), *o1 = fnew((size_t)n), lg[2 * 256];
        tok[7] = 254; tok[15] = 254; tok[T + 20] = 254; tok[T] = tok[T + 1] = 253;      /* EOS (three documents), left pads */
        for (v = 0; v < 5; v++)
            for (wi = 0; wi < 6; wi++) {
                lattn_sps_config s = sps_cfg((lattn_sps_variant)v, ws_[wi] == -1 ? T - 1 : ws_[wi] == -2 ? T + 3 : ws_[wi]);
                lattn_sps_cache kc;
                double l0, l1;
                int ok = 1;
                if ((v == LATTN_SPS_STANDARD || v == LATTN_SPS_2X_MEMORY) && wi > 0) continue;
                poison(o0, (size_t)n); poison(o1, (size_t)n);
                CHECK(lattn_sps_forward_ref(&ctx, &m, &s, B, T, tok, o0, &l0, NULL) == LATTN_OK, "sps ref: %s", lattn_ctx_error(&ctx));
                CHECK(lattn_sps_forward(&ctx, &m, &s, B, T, tok, o1, &l1) == LATTN_OK && rel_rms(o1, o0, (size_t)n) <= 1e-5 &&
                      fabs(l1 - l0) <= 1e-5 * l0, "sps forward %s w=%lld: %.3g, loss %.6f / %.6f", lattn_sps_variant_name(s.variant),
                      (long long)s.w, rel_rms(o1, o0, (size_t)n), l1, l0);
                CHECK(lattn_sps_cache_init(&ctx, &kc, &m, &s, B, T) == LATTN_OK, "sps cache");
                for (t = 0; t < T; t++) {
                    int32_t tt[2];
                    tt[0] = tok[t]; tt[1] = tok[T + t];
                    ok = ok && lattn_sps_step(&ctx, &m, B, tt, lg, &kc) == LATTN_OK;
                    for (b = 0; b < B; b++) ok = ok && rel_rms(lg + b * c.vocab, o0 + (b * T + t) * c.vocab, (size_t)c.vocab) <= 1e-5;
                }
                CHECK(ok, "sps %s w=%lld: step x T = forward logits across EOS", lattn_sps_variant_name(s.variant), (long long)s.w);
                lattn_sps_cache_free(&ctx, &kc);
                if (wi == 2 || v == LATTN_SPS_STANDARD) {          /* prefill 20 tokens (past an EOS), then steps */
                    int64_t P = 20;
                    int32_t *tp = (int32_t *)malloc((size_t)(B * P) * sizeof(int32_t));
                    float *op = fnew((size_t)(B * P * c.vocab));
                    for (b = 0; b < B; b++) memcpy(tp + b * P, tok + b * T, (size_t)P * sizeof(int32_t));
                    ok = lattn_sps_cache_init(&ctx, &kc, &m, &s, B, T) == LATTN_OK && lattn_sps_prefill(&ctx, &m, B, P, tp, op, NULL, &kc) == LATTN_OK;
                    for (b = 0; b < B; b++) ok = ok && rel_rms(op + b * P * c.vocab, o0 + b * T * c.vocab, (size_t)(P * c.vocab)) <= 1e-5;
                    for (t = P; t < T; t++) {
                        int32_t tt[2];
                        tt[0] = tok[t]; tt[1] = tok[T + t];
                        ok = ok && lattn_sps_step(&ctx, &m, B, tt, lg, &kc) == LATTN_OK;
                        for (b = 0; b < B; b++) ok = ok && rel_rms(lg + b * c.vocab, o0 + (b * T + t) * c.vocab, (size_t)c.vocab) <= 1e-5;
                    }
                    CHECK(ok, "sps %s w=%lld: prefill 20 + steps = forward", lattn_sps_variant_name(s.variant), (long long)s.w);
                    CHECK(lattn_sps_prefill(&ctx, &m, B, P, tp, op, NULL, &kc) == LATTN_E_DOMAIN, "sps prefill into a used cache");
                    lattn_sps_cache_free(&ctx, &kc); free(tp); free(op);
                }
            }
        if (!g_quick) {   /* documents longer than a layout block (141 and 159 tokens): forward, and the decoder */
            int64_t T2 = 300, n2 = T2 * c.vocab, t2;
            int32_t *tk = tokens_new(&r, T2, 253);
            float *p0 = fnew((size_t)n2), *p1 = fnew((size_t)n2);
            static const lattn_sps_variant v3[3] = { LATTN_SPS_SPS, LATTN_SPS_DELAYED, LATTN_SPS_REVERSE };
            static const int64_t w3[3] = { 5, 70, 0 };
            tk[140] = 254;
            for (v = 0; v < 3; v++) {
                lattn_sps_config s = sps_cfg(v3[v], w3[v]);
                lattn_sps_cache kc;
                int ok = 1;
                lattn_sps_forward_ref(&ctx, &m, &s, 1, T2, tk, p0, NULL, NULL);
                CHECK(lattn_sps_forward(&ctx, &m, &s, 1, T2, tk, p1, NULL) == LATTN_OK && rel_rms(p1, p0, (size_t)n2) <= 1e-5,
                      "sps %s w=%lld, T = 300: forward %.3g", lattn_sps_variant_name(s.variant), (long long)s.w, rel_rms(p1, p0, (size_t)n2));
                if (v) continue;
                lattn_sps_cache_init(&ctx, &kc, &m, &s, 1, 200);
                ok = lattn_sps_prefill(&ctx, &m, 1, 150, tk, p1, NULL, &kc) == LATTN_OK;
                for (t2 = 150; t2 < T2; t2++) {
                    ok = ok && lattn_sps_step(&ctx, &m, 1, tk + t2, lg, &kc) == LATTN_OK;
                    ok = ok && rel_rms(lg, p0 + t2 * c.vocab, (size_t)c.vocab) <= 1e-5;
                }
                CHECK(ok, "sps w=5, T = 300: prefill 150 (a document of 9 tokens after an EOS at 140) + steps = forward");
                lattn_sps_cache_free(&ctx, &kc);
            }
            free(tk); free(p0); free(p1);
        }
        {   /* I3: 2x Memory = SPS with w >= T - 1 (bit for bit); 1 and 2 threads bit-identical */
            lattn_sps_config a2 = sps_cfg(LATTN_SPS_2X_MEMORY, 0), a3 = sps_cfg(LATTN_SPS_SPS, T + 3);
            lattn_sps_forward(&ctx, &m, &a2, B, T, tok, o0, NULL);
            lattn_sps_forward(&ctx, &m, &a3, B, T, tok, o1, NULL);
            CHECK(same_bits(o0, o1, (size_t)n), "sps: 2x Memory = SPS(w = T + 3), bit for bit");
            a3.w = 2;
            ctx.n_threads = 1; lattn_sps_forward(&ctx, &m, &a3, B, T, tok, o0, NULL);
            ctx.n_threads = 2; lattn_sps_forward(&ctx, &m, &a3, B, T, tok, o1, NULL);
            ctx.n_threads = 0;
            CHECK(same_bits(o0, o1, (size_t)n), "sps forward bit-identical for 1 and 2 threads");
        }
        {   /* Standard = the plain transformer on a sequence without EOS (logits and loss) */
            lattn_sps_config st = sps_cfg(LATTN_SPS_STANDARD, 0);
            double l0, l1;
            int32_t *clean = tokens_new(&r, B * T, 253);
            lattn_sps_forward(&ctx, &m, &st, B, T, clean, o0, &l0);
            lattn_tf_forward(&ctx, &m, B, T, clean, NULL, o1, &l1, NULL);
            CHECK(rel_rms(o0, o1, (size_t)n) <= 1e-6 && fabs(l0 - l1) <= 1e-6 * l1, "sps Standard = the transformer: %.3g",
                  rel_rms(o0, o1, (size_t)n));
            free(clean);
        }
        free(tok); free(o0); free(o1);
    }
    {   /* pads as the official code: left pads only, each its own document; [pad,pad,5,7,EOS,9] */
        const int64_t T6 = 6, V = c.vocab, d = c.D;
        int32_t tk[6] = { 253, 253, 5, 7, 254, 9 }, bad[6] = { 5, 253, 7, 9, 1, 2 };
        float *l0 = fnew((size_t)(T6 * V)), *l1 = fnew((size_t)(T6 * V)), *pad_row = NULL, lg[256];
        const lattn_tensor *wte = NULL;
        int vv, okr = 1, okd = 1, okf = 1;
        for (i = 0; i < (size_t)m.n_tensors; i++) if (strcmp(m.tensors[i].name, "wte.weight") == 0) wte = &m.tensors[i];
        for (vv = 0; vv < 5; vv++) {
            lattn_sps_config s = sps_cfg((lattn_sps_variant)vv, 2);
            lattn_sps_cache kc;
            int64_t t, e;
            float *row = wte->data + 253 * d;
            double loss0, loss1;
            lattn_sps_forward_ref(&ctx, &m, &s, 1, T6, tk, l0, &loss0, NULL);
            pad_row = fdup(row, (size_t)d);
            for (e = 0; e < d; e++) row[e] += 3.0f;                      /* another pad embedding */
            lattn_sps_forward_ref(&ctx, &m, &s, 1, T6, tk, l1, &loss1, NULL);
            for (t = 2; t < T6; t++)                                    /* real tokens never see a pad: */
                for (e = 0; e < V; e++)                                 /* every logit but the pad's own */
                    okr &= e == 253 || memcmp(&l0[t * V + e], &l1[t * V + e], sizeof(float)) == 0;
            memcpy(row, pad_row, (size_t)d * sizeof(float));
            free(pad_row);
            lattn_sps_forward(&ctx, &m, &s, 1, T6, tk, l1, &loss1);
            okf &= rel_rms(l1, l0, (size_t)(T6 * V)) <= 1e-5 && fabs(loss1 - loss0) <= 1e-5 * loss0;
            /* the decoder: pads first, then the documents; a pad after a real token is refused */
            lattn_sps_cache_init(&ctx, &kc, &m, &s, 1, 8);
            for (t = 0; t < T6; t++) {
                okd &= lattn_sps_step(&ctx, &m, 1, tk + t, lg, &kc) == LATTN_OK;
                okd &= rel_rms(lg, l0 + t * V, (size_t)V) <= 1e-5;
            }
            poison(lg, 256);
            okd &= lattn_sps_step(&ctx, &m, 1, tk, lg, &kc) == LATTN_E_DOMAIN && lg[0] != lg[0] && kc.pos[0] == T6;
            lattn_sps_cache_free(&ctx, &kc);
            poison(l1, (size_t)(T6 * V));
            okd &= lattn_sps_forward_ref(&ctx, &m, &s, 1, T6, bad, l1, NULL, NULL) == LATTN_E_DOMAIN && l1[0] != l1[0];
            okd &= lattn_sps_forward(&ctx, &m, &s, 1, T6, bad, l1, NULL) == LATTN_E_DOMAIN && l1[0] != l1[0];
            lattn_sps_cache_init(&ctx, &kc, &m, &s, 1, 8);
            okd &= lattn_sps_prefill(&ctx, &m, 1, T6, bad, l1, NULL, &kc) == LATTN_E_DOMAIN && kc.pos[0] == 0;
            lattn_sps_cache_free(&ctx, &kc);
        }
        CHECK(okr, "sps pads: a pad's embedding leaves every real token's logits bit-identical (each pad its own document)");
        CHECK(okf, "sps pads: the fast form agrees");
        CHECK(okd, "sps pads: decoding pads then tokens = forward; a pad after a real token is LATTN_E_DOMAIN (forward, prefill, step)");
        free(l0); free(l1);
    }
    {   /* memory: (n + w)·2·L·d·bytes, 1.015625 at n = 4096, w = 64 */
        lattn_tf_config xs = lattn_tf_config_sps("s");
        lattn_sps_config s = lattn_sps_config_default(LATTN_SPS_SPS), st = lattn_sps_config_default(LATTN_SPS_STANDARD);
        lattn_sps_config s2 = lattn_sps_config_default(LATTN_SPS_2X_MEMORY);
        double a = lattn_sps_kv_bytes(&xs, &s, 4096, 2), b = lattn_sps_kv_bytes(&xs, &st, 4096, 2);
        CHECK(a / b == 1.015625 && b == 4096.0 * 2 * 12 * 768 * 2 && lattn_sps_kv_bytes(&xs, &s2, 4096, 2) == 2 * b &&
              a - b == 64.0 * 36 * 1024, "sps memory: ratio %.6f, ring %.0f bytes (2.25 MiB at S)", a / b, a - b);
    }
    {   /* the ring: 1, 2, 3 into a w = 2 ring gives [3, 2], len 2, pos 1; errors */
        lattn_sps_config s = sps_cfg(LATTN_SPS_SPS, 2);
        lattn_sps_cache kc;
        float kv[2 * 32];
        int32_t tt[1] = { 3 };
        float lg[256];
        int k2;
        CHECK(lattn_sps_cache_init(&ctx, &kc, &m, &s, 1, 4) == LATTN_OK, "sps ring cache");
        for (k2 = 1; k2 <= 3; k2++) { for (i = 0; i < 64; i++) kv[i] = (float)k2; lattn__sps_push(&kc, 0, 0, kv, kv); }
        CHECK(kc.ring_len[0] == 2 && kc.ring_pos[0] == 1 && kc.rk[0] == 3.0f && kc.rk[32] == 2.0f && kc.list_len[0] == 3,
              "sps ring wrap: [%g, %g], len %lld, pos %lld", kc.rk[0], kc.rk[32], (long long)kc.ring_len[0], (long long)kc.ring_pos[0]);
        lattn_sps_cache_free(&ctx, &kc);
        lattn_sps_cache_init(&ctx, &kc, &m, &s, 1, 2);
        lattn_sps_step(&ctx, &m, 1, tt, lg, &kc); lattn_sps_step(&ctx, &m, 1, tt, lg, &kc);
        poison(lg, 256);
        CHECK(lattn_sps_step(&ctx, &m, 1, tt, lg, &kc) == LATTN_E_SHAPE && lg[0] != lg[0] && kc.pos[0] == 2, "sps step on a full cache");
        tt[0] = 254; kc.list_len[0] = 1; kc.list_len[1] = 1;
        lattn_sps_cache_free(&ctx, &kc);
        s.w = -1;
        CHECK(lattn_sps_forward(&ctx, &m, &s, 1, 1, tt, lg, NULL) == LATTN_E_DOMAIN, "sps w < 0");
        s.w = 2; s.variant = (lattn_sps_variant)9;
        CHECK(lattn_sps_forward(&ctx, &m, &s, 1, 1, tt, lg, NULL) == LATTN_E_DOMAIN && strcmp(lattn_sps_variant_name(s.variant), "unknown") == 0,
              "sps unknown variant");
        s.variant = LATTN_SPS_SPS; s.predict_id = 256;
        CHECK(lattn_sps_forward(&ctx, &m, &s, 1, 1, tt, lg, NULL) == LATTN_E_DOMAIN, "sps <predict> outside the vocabulary");
        s.predict_id = 255; tt[0] = 300;
        CHECK(lattn_sps_forward(&ctx, &m, &s, 1, 1, tt, lg, NULL) == LATTN_E_DOMAIN, "sps token outside the vocabulary");
    }
    lattn_tf_free(&ctx, &m);
}

/* ---------------------------------------------------------------------------------------------- */
/* ttt: TTT-Linear and TTT-MLP (mixer forms, the layer, the official code's outputs)              */
/* ---------------------------------------------------------------------------------------------- */
typedef struct { lattn_ttt_args a; float *p[8]; int64_t *pos; } ttt_case;   /* q k v lr tok ln_w ln_b s0 */
/* Random inputs of the scale the official layer produces: q, k, v O(1), lr ~ 1/F, tok in [0, 1.2]
   (two of them 0, as the clamp makes them), LN weights 1 ± 0.3, a random state whose gradient part
   is nonzero where the open mini-batch position is. */
static void ttt_make(ttt_case *c, lattn_rng *r, int64_t B, int64_t T, int64_t H, int64_t F, int mlp, int64_t b, int open) {
    int64_t n = B * T * H * F, P = lattn__ttt_p(F, mlp), i, s;
    memset(c, 0, sizeof *c);
    memset(&c->a, 0, sizeof c->a);
    c->a.B = B; c->a.T = T; c->a.H = H; c->a.K = F; c->a.mlp = mlp; c->a.mini_batch = b;
    c->p[0] = fnormal(r, (size_t)n); c->p[1] = fnormal(r, (size_t)n); c->p[2] = fnormal(r, (size_t)n);
    c->p[3] = frand(r, (size_t)(B * T * H), 0.2f / (float)F, 1.0f / (float)F);
    c->p[4] = frand(r, (size_t)b, 0.0f, 1.2f);
    if (b > 3) c->p[4][2] = 0.0f;
    c->p[5] = frand(r, (size_t)(H * F), 0.7f, 1.3f); c->p[6] = frand(r, (size_t)(H * F), -0.3f, 0.3f);
    c->p[7] = fnew((size_t)(B * H * 2 * P));
    c->pos = (int64_t *)malloc((size_t)B * sizeof(int64_t));
    for (s = 0; s < B; s++) {
        c->pos[s] = open ? (s * 5 + 3) % b : 0;
        for (i = 0; i < H; i++) {
            float *st = c->p[7] + (s * H + i) * 2 * P;
            lattn_rng_fill_normal(r, st, (size_t)P, 0.0f, (float)(1.0 / sqrt((double)F)));
            if (c->pos[s]) lattn_rng_fill_normal(r, st + P, (size_t)P, 0.0f, 0.05f);
            else memset(st + P, 0, (size_t)P * sizeof(float));
        }
    }
    c->a.q = c->p[0]; c->a.k = c->p[1]; c->a.v = c->p[2]; c->a.lr = c->p[3]; c->a.tok = c->p[4];
    c->a.ln_w = c->p[5]; c->a.ln_b = c->p[6]; c->a.h0 = c->p[7]; c->a.pos0 = c->pos;
}
static void ttt_free(ttt_case *c) { int i; for (i = 0; i < 8; i++) free(c->p[i]); free(c->pos); }
/* form 0 ref, 1 primal, 2 dual, 3 step by step (the positions advanced here) */
/* The forms of the TTT mixer, and one more: _step called once per token (the decoder). */
#define TTT_STEP_EACH 4
static lattn_status ttt_run(lattn_ctx *ctx, const ttt_case *c, int form, float *o, float *st) {
    lattn_ttt_args a = c->a;
    int64_t t, s, HF = a.H * a.K, SP = a.H * 2 * lattn__ttt_p(a.K, a.mlp);
    a.o = o; a.ht = st;
    if (form == LATTN_FORM_REF) return lattn_ttt_ref(ctx, &a);
    if (form == LATTN_FORM_STEP) return lattn_ttt_step(ctx, &a);
    if (form == LATTN_FORM_CHUNK) return lattn_ttt_chunk(ctx, &a);
    {
        int64_t *pos = (int64_t *)malloc((size_t)a.B * sizeof(int64_t));
        float *q = fnew((size_t)(a.B * HF * 3)), *ob = fnew((size_t)(a.B * HF)), *lr = fnew((size_t)(a.B * a.H));
        lattn_status r = LATTN_OK;
        memcpy(st, c->a.h0, (size_t)(a.B * SP) * sizeof(float));
        memcpy(pos, c->pos, (size_t)a.B * sizeof(int64_t));
        for (t = 0; t < a.T && r == LATTN_OK; t++) {
            lattn_ttt_args s1 = a;
            for (s = 0; s < a.B; s++) {
                memcpy(q + s * HF, a.q + (s * a.T + t) * HF, (size_t)HF * sizeof(float));
                memcpy(q + (a.B + s) * HF, a.k + (s * a.T + t) * HF, (size_t)HF * sizeof(float));
                memcpy(q + (2 * a.B + s) * HF, a.v + (s * a.T + t) * HF, (size_t)HF * sizeof(float));
                memcpy(lr + s * a.H, a.lr + (s * a.T + t) * a.H, (size_t)a.H * sizeof(float));
            }
            s1.T = 1; s1.q = q; s1.k = q + a.B * HF; s1.v = q + 2 * a.B * HF; s1.lr = lr; s1.h0 = st; s1.ht = st; s1.pos0 = pos; s1.o = ob;
            r = lattn_ttt_step(ctx, &s1);
            for (s = 0; s < a.B; s++) {
                memcpy(o + (s * a.T + t) * HF, ob + s * HF, (size_t)HF * sizeof(float));
                pos[s] = (pos[s] + 1) % a.mini_batch;
            }
        }
        free(pos); free(q); free(ob); free(lr);
        return r;
    }
}
/* An independent online gradient descent (b = 1) for TTT-Linear in double, written from spec §5.7:
   W_t = W_{t-1} - η_t k_tᵀ G_t(W_{t-1}) with η_t = tok_0 lr_t, then o_t = q_t + LN(q_t W_t + b_t). */
static void ttt_online_linear(const ttt_case *c, double *o) {
    const int64_t F = c->a.K, H = c->a.H, P = F * F + F;
    int64_t s, h, t, i, j;
    double *W = (double *)malloc((size_t)P * sizeof(double)), z[64], g[64], zh[64];
    for (s = 0; s < c->a.B; s++)
        for (h = 0; h < H; h++) {
            const float *s0 = c->a.h0 + (s * H + h) * 2 * P, *gw = c->a.ln_w + h * F, *gb = c->a.ln_b + h * F;
            for (i = 0; i < P; i++) W[i] = s0[i];
            for (t = 0; t < c->a.T; t++) {
                const int64_t row = (s * c->a.T + t) * H + h;
                const float *q = c->a.q + row * F, *k = c->a.k + row * F, *v = c->a.v + row * F;
                double eta = (double)c->a.tok[0] * c->a.lr[row], mu = 0, var = 0, s1 = 0, s2 = 0;
                for (j = 0; j < F; j++) { z[j] = W[F * F + j]; for (i = 0; i < F; i++) z[j] += k[i] * W[i * F + j]; mu += z[j]; }
                mu /= F;
                for (j = 0; j < F; j++) var += (z[j] - mu) * (z[j] - mu);
                var = sqrt(var / F + 1e-6);
                for (j = 0; j < F; j++) {   /* ∂/∂z ½|γ ẑ + β - (v - k)|² through the LayerNorm */
                    zh[j] = (z[j] - mu) / var;
                    g[j] = (gw[j] * zh[j] + gb[j] - (v[j] - k[j])) * gw[j];
                    s1 += g[j]; s2 += g[j] * zh[j];
                }
                for (j = 0; j < F; j++) g[j] = (g[j] - s1 / F - zh[j] * s2 / F) / var;
                for (i = 0; i < F; i++) for (j = 0; j < F; j++) W[i * F + j] -= eta * k[i] * g[j];
                for (j = 0; j < F; j++) W[F * F + j] -= eta * g[j];
                for (mu = 0, var = 0, j = 0; j < F; j++) { z[j] = W[F * F + j]; for (i = 0; i < F; i++) z[j] += q[i] * W[i * F + j]; mu += z[j]; }
                mu /= F;
                for (j = 0; j < F; j++) var += (z[j] - mu) * (z[j] - mu);
                var = sqrt(var / F + 1e-6);
                for (j = 0; j < F; j++) o[row * F + j] = q[j] + gw[j] * (z[j] - mu) / var + gb[j];
            }
        }
    free(W);
}
static lattn_status ttt_layer_alloc_run_fn(lattn_ctx *ctx, void *user) {
    const lattn_ttt_layer *m = (const lattn_ttt_layer *)user;
    float x[2 * 5 * 24], y[2 * 5 * 24];
    int i;
    for (i = 0; i < 2 * 5 * 24; i++) x[i] = (float)sin(i * 0.37);
    return lattn_ttt_layer_forward(ctx, m, 2, 5, x, y, NULL);
}
static void test_ttt(void) {
    static const char *ext[4] = { "ttt_linear_T48", "ttt_linear_T37", "ttt_mlp_T48", "ttt_mlp_T37" };
    lattn_ctx ctx;
    lattn_rng r = lattn_rng_seed(g_seed + 47);
    int mlp, ci, bi, form;
    lattn_ctx_init(&ctx);
    CHECK(lattn__ttt_p(64, 0) == 64 * 64 + 64 && lattn__ttt_p(64, 1) == 8 * 64 * 64 + 5 * 64 && lattn__ttt_p(0, 0) == -1,
          "ttt params: F² + F, 8F² + 5F");
    /* every form against _ref, odd sizes, open mini-batches, batch and variable lengths */
    for (mlp = 0; mlp < 2; mlp++) {
        static const int64_t bs[3] = { 1, 4, 16 };
        static const int64_t Ts[6] = { 0, 1, 15, 16, 17, 37 };
        for (bi = 0; bi < 3; bi++) {
            int ti;
            for (ti = 0; ti < 6; ti++) {
                const int64_t B = 2, H = 2, F = (ti % 2) ? 13 : 16, T = Ts[ti], b = bs[bi];
                const int64_t n = B * T * H * F, ns = B * H * 2 * lattn__ttt_p(F, mlp);
                ttt_case c;
                float *o0 = fnew((size_t)n), *s0 = fnew((size_t)ns), *o1 = fnew((size_t)n), *s1 = fnew((size_t)ns);
                ttt_make(&c, &r, B, T, H, F, mlp, b, ti >= 3);
                CHECK(ttt_run(&ctx, &c, LATTN_FORM_REF, o0, s0) == LATTN_OK, "ttt ref: %s", lattn_ctx_error(&ctx));
                for (form = LATTN_FORM_CHUNK; form <= TTT_STEP_EACH; form++) {
                    poison(o1, (size_t)n); poison(s1, (size_t)ns);
                    CHECK(ttt_run(&ctx, &c, form, o1, s1) == LATTN_OK && rel_rms(o1, o0, (size_t)n) <= 1e-5 && rel_rms(s1, s0, (size_t)ns) <= 1e-5,
                          "ttt %s form %d = ref (b %lld, T %lld, F %lld): o %.3g state %.3g", mlp ? "mlp" : "linear", form, (long long)b,
                          (long long)T, (long long)F, rel_rms(o1, o0, (size_t)n), rel_rms(s1, s0, (size_t)ns));
                }
                ttt_free(&c); free(o0); free(s0); free(o1); free(s1);
            }
        }
    }
    {   /* b = 1 is online gradient descent (an independent implementation); T split across calls */
        const int64_t B = 2, T = 23, H = 2, F = 16, n = B * T * H * F;
        ttt_case c;
        double *w = (double *)malloc((size_t)n * sizeof(double));
        float *o = fnew((size_t)n), *o2 = fnew((size_t)n), *st = fnew((size_t)(B * H * 2 * (F * F + F)));
        ttt_make(&c, &r, B, T, H, F, 0, 1, 0);
        ttt_online_linear(&c, w);
        CHECK(ttt_run(&ctx, &c, LATTN_FORM_REF, o, st) == LATTN_OK && rel_rms_d(o, w, (size_t)n) <= 1e-6,
              "ttt b = 1: _ref = online gradient descent (%.3g)", rel_rms_d(o, w, (size_t)n));
        ttt_free(&c); free(w);
        free(o); free(o2); free(st);
    }
    {   /* one call = 21 tokens, then 2 from the carried state (the open mini-batch continues at 5);
           variable lengths = each sequence alone */
        const int64_t T = 23, H = 2, F = 16, HF = H * F, P = lattn__ttt_p(F, 1);
        int64_t off[4] = { 0, 7, 7, 23 }, pos[3] = { 0, 0, 0 }, sq;
        ttt_case c;
        lattn_ttt_args a;
        float *o = fnew((size_t)(T * HF)), *o2 = fnew((size_t)(T * HF)), *s2 = fnew((size_t)(3 * H * 2 * P));
        float *st = fnew((size_t)(H * 2 * P));
        ttt_make(&c, &r, 1, T, H, F, 1, 16, 0);
        CHECK(ttt_run(&ctx, &c, LATTN_FORM_REF, o, st) == LATTN_OK, "ttt ref, 23 tokens");
        a = c.a; a.T = 21; a.o = o2; a.ht = s2;
        CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_OK, "ttt dual, 21 tokens");
        pos[0] = 5; a.T = 2; a.q += 21 * HF; a.k += 21 * HF; a.v += 21 * HF; a.lr += 21 * H; a.o = o2 + 21 * HF; a.h0 = s2; a.pos0 = pos;
        CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_OK && rel_rms(o2, o, (size_t)(T * HF)) <= 1e-5 && rel_rms(s2, st, (size_t)(H * 2 * P)) <= 1e-5,
              "ttt dual over 21 + 2 tokens = one call (%.3g, state %.3g)", rel_rms(o2, o, (size_t)(T * HF)), rel_rms(s2, st, (size_t)(H * 2 * P)));
        a = c.a; a.offsets = off; a.n_seqs = 3; a.o = o2; a.ht = s2; a.pos0 = NULL;
        a.h0 = s2; memcpy(s2, c.a.h0, (size_t)(H * 2 * P) * sizeof(float));
        memcpy(s2 + H * 2 * P, c.a.h0, (size_t)(H * 2 * P) * sizeof(float)); memcpy(s2 + 2 * H * 2 * P, c.a.h0, (size_t)(H * 2 * P) * sizeof(float));
        poison(o2, (size_t)(T * HF));
        CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_OK, "ttt dual with offsets");
        for (sq = 0; sq < 3; sq++) {
            lattn_ttt_args b1 = c.a;
            int64_t L = off[sq + 1] - off[sq];
            b1.T = L; b1.q += off[sq] * HF; b1.k += off[sq] * HF; b1.v += off[sq] * HF; b1.lr += off[sq] * H; b1.o = o; b1.ht = st; b1.pos0 = NULL;
            CHECK(lattn_ttt_ref(&ctx, &b1) == LATTN_OK && rel_rms(o2 + off[sq] * HF, o, (size_t)(L * HF)) <= 1e-5 &&
                  rel_rms(s2 + sq * H * 2 * P, st, (size_t)(H * 2 * P)) <= 1e-5, "ttt offsets: sequence %lld = alone", (long long)sq);
        }
        ttt_free(&c); free(o); free(o2); free(s2); free(st);
    }
    {   /* threads: bit-identical */
        ttt_case c;
        const int64_t n = 2 * 40 * 4 * 16, ns = 2 * 4 * 2 * lattn__ttt_p(16, 1);
        float *o1 = fnew((size_t)n), *o2 = fnew((size_t)n), *s1 = fnew((size_t)ns), *s2 = fnew((size_t)ns);
        ttt_make(&c, &r, 2, 40, 4, 16, 1, 16, 1);
        for (form = LATTN_FORM_CHUNK; form <= LATTN_FORM_STEP; form++) {
            ctx.n_threads = 1; ttt_run(&ctx, &c, form, o1, s1);
            ctx.n_threads = 2; ttt_run(&ctx, &c, form, o2, s2);
            CHECK(same_bits(o1, o2, (size_t)n) && same_bits(s1, s2, (size_t)ns), "ttt form %d: 1 and 2 threads bit-identical", form);
        }
        ctx.n_threads = 0;
        /* errors: nothing written */
        {
            lattn_ttt_args a = c.a;
            poison(o1, (size_t)n);
            a.o = o1;
            a.K = 0; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_SHAPE, "ttt K = 0");
            a.K = 16; a.mini_batch = 0; CHECK(lattn_ttt_step(&ctx, &a) == LATTN_E_SHAPE, "ttt mini_batch = 0");
            a.mini_batch = 16; a.mlp = 2; CHECK(lattn_ttt_ref(&ctx, &a) == LATTN_E_SHAPE, "ttt mlp = 2");
            a.mlp = 1; a.H = 0; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_SHAPE, "ttt H = 0");
            a.H = 4; a.T = -1; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_SHAPE, "ttt T < 0");
            a.T = 40; a.h0 = NULL; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_NULL, "ttt h0 NULL");
            a.h0 = c.a.h0; a.lr = NULL; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_NULL, "ttt lr NULL");
            a.lr = c.a.lr; c.p[4][3] = -0.5f; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_DOMAIN, "ttt tok < 0");
            c.p[4][3] = NAN; CHECK(lattn_ttt_ref(&ctx, &a) == LATTN_E_DOMAIN, "ttt tok NaN");
            c.p[4][3] = 0.5f; c.pos[1] = 16; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_DOMAIN, "ttt pos0 = b");
            c.pos[1] = 0; a.B = (int64_t)1 << 62; CHECK(lattn_ttt_chunk(&ctx, &a) == LATTN_E_OVERFLOW, "ttt size overflow");
            a.B = 2;
            CHECK(lattn_ttt_chunk(&ctx, NULL) == LATTN_E_NULL, "ttt args NULL");
            {
                int64_t i, wrote = 0;
                for (i = 0; i < n; i++) wrote += o1[i] == o1[i];
                CHECK(wrote == 0, "ttt errors leave o unwritten (%lld written)", (long long)wrote);
            }
        }
        ttt_free(&c); free(o1); free(o2); free(s1); free(s2);
    }
    /* the official code's outputs (float64): the layer loaded under the official names */
    for (ci = 0; ci < 4; ci++) {
        char path[256];
        lattn_st_file f;
        lattn_ttt_layer m;
        const lattn_st_tensor *tx;
        int64_t B, T, D, SF, H, F, P, s, h, nw = 0;
        float *x, *y, *st, *wk, tok[16];
        double *wy, *y64, *wf[4];
        static const char *fin[4] = { "W1_final", "b1_final", "W2_final", "b2_final" };
        size_t n;
        snprintf(path, sizeof path, "tests/external/%s.safetensors", ext[ci]);
        if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "cannot read %s", path); continue; }
        CHECK(lattn_ttt_layer_init_st(&ctx, &m, &f, "") == LATTN_OK, "ttt load %s: %s", ext[ci], lattn_ctx_error(&ctx));
        tx = lattn_st_find(&f, "hidden_states");
        B = tx->shape[0]; T = tx->shape[1]; D = tx->shape[2]; n = (size_t)(B * T * D);
        H = m.cfg.H; F = D / H; P = lattn__ttt_p(F, m.cfg.mlp); SF = lattn__ttt_state_floats(&m.cfg);
        CHECK(m.cfg.mlp == (ci >= 2) && m.cfg.mini_batch == 16 && H == 4, "ttt %s configuration from the shapes", ext[ci]);
        x = tensor_f32(&f, "hidden_states"); wy = tensor_f64(&f, "y", NULL);
        for (s = 0; s < 4; s++) wf[s] = tensor_f64(&f, fin[s], NULL);
        y = fnew(n); y64 = (double *)malloc(n * sizeof(double)); st = fnew((size_t)(B * SF)); wk = fnew((size_t)P);
        for (s = 0; s < 16; s++) tok[s] = fmaxf(0.0f, 1.0f / (float)(s + 1) + m.tok_idx[s]);
        for (form = 0; form < 4; form++) {
            double ew = 0, dw = 0;
            int64_t t;
            for (s = 0; s < B; s++) lattn_ttt_layer_state_init(&m, st + s * SF);
            poison(y, n);
            if (form == 0) CHECK(lattn_ttt_layer_forward_ref(&ctx, &m, B, T, x, y, st, y64) == LATTN_OK, "ttt layer ref");
            else if (form < 3) CHECK(lattn__ttt_layer_run(&ctx, &m, B, T, x, y, st, (form == 2) ? LATTN_FORM_STEP : LATTN_FORM_CHUNK, "test") == LATTN_OK, "ttt layer forward");
            else {
                float *xb = fnew((size_t)(B * D)), *yb = fnew((size_t)(B * D));
                for (t = 0; t < T; t++) {
                    for (s = 0; s < B; s++) memcpy(xb + s * D, x + (s * T + t) * D, (size_t)D * sizeof(float));
                    CHECK(lattn_ttt_layer_step(&ctx, &m, B, xb, yb, st) == LATTN_OK, "ttt layer step");
                    for (s = 0; s < B; s++) memcpy(y + (s * T + t) * D, yb + s * D, (size_t)D * sizeof(float));
                }
                free(xb); free(yb);
            }
            for (s = 0; s < B; s++)   /* the fast weights after the last token against W1_final, ... */
                for (h = 0; h < H; h++) {
                    int64_t i, k, off = 0, F1 = m.cfg.mlp ? 4 * F : F;
                    const int64_t sz[4] = { F * F1, F1, F1 * F, F };
                    lattn_ttt_weights(F, m.cfg.mlp, tok, (int64_t)st[s * SF + SF - 1], st + s * SF + h * 2 * P, wk);
                    for (k = 0; k < (m.cfg.mlp ? 4 : 2); off += sz[k], k++)
                        for (i = 0; i < sz[k]; i++) {
                            double d = wk[off + i] - wf[k][(s * H + h) * sz[k] + i];
                            ew += d * d; dw += wf[k][(s * H + h) * sz[k] + i] * wf[k][(s * H + h) * sz[k] + i];
                        }
                    nw++;
                }
            CHECK(rel_rms_d(y, wy, n) <= (form ? 1e-5 : 1e-6) && sqrt(ew / dw) <= (form ? 1e-5 : 1e-6),
                  "ttt %s form %d = the official layer: y %.3g, final weights %.3g", ext[ci], form, rel_rms_d(y, wy, n), sqrt(ew / dw));
            if (form == 0) {
                double num = 0, den = 0;
                size_t i;
                for (i = 0; i < n; i++) { num += (y64[i] - wy[i]) * (y64[i] - wy[i]); den += wy[i] * wy[i]; }
                CHECK(sqrt(num / den) <= 1e-10, "ttt %s _ref (double) = the official float64 output: %.3g", ext[ci], sqrt(num / den));
                if (getenv("LATTN_TEST_VERBOSE")) printf("  ttt %s: _ref in double %.3g, float32 %.3g\n", ext[ci], sqrt(num / den), rel_rms_d(y, wy, n));
            }
        }
        (void)nw;
        for (s = 0; s < 4; s++) free(wf[s]);
        free(x); free(wy); free(y); free(y64); free(st); free(wk);
        lattn_ttt_layer_free(&ctx, &m);
        lattn_st_free(&ctx, &f);
    }
    {   /* the layer: forms against _ref (gate on, TTT-MLP and -Linear), state carried across calls,
           weights round trip, errors, failing allocations */
        for (mlp = 0; mlp < 2; mlp++) {
            lattn_ttt_config cf = lattn_ttt_config_default();
            lattn_ttt_layer m, m2;
            const int64_t B = 2, T = g_quick ? 21 : 37, D = 24, T1 = 19;
            int64_t SF, s, t, i;
            float *x, *y0, *y1, *s0, *s1, *xb, *yb;
            unsigned char *blob = NULL;
            size_t nb = 0;
            lattn_st_file f;
            int fl = 0;
            cf.D = D; cf.H = 3; cf.mini_batch = 8; cf.mlp = mlp; cf.use_gate = 1; cf.base_lr = 0.7; cf.rope_theta = 500.0;
            CHECK(lattn_ttt_layer_init(&ctx, &m, &cf, 7 + mlp) == LATTN_OK, "ttt layer init");
            {   /* weights of a trained scale, not the init's 0.02 */
                float *mats[6];
                mats[0] = m.q_w; mats[1] = m.k_w; mats[2] = m.v_w; mats[3] = m.o_w; mats[4] = m.g_w; mats[5] = m.W1;
                for (i = 0; i < 6; i++) lattn_rng_fill_normal(&r, mats[i], (size_t)(i < 5 ? D * D : cf.H * 8 * (mlp ? 32 : 8)), 0.0f, (float)(1.0 / sqrt((double)(i < 5 ? D : 8))));
                if (mlp) lattn_rng_fill_normal(&r, m.W2, (size_t)(cf.H * 32 * 8), 0.0f, (float)(1.0 / sqrt(32.0)));
                lattn_rng_fill_normal(&r, m.lr_w, (size_t)(cf.H * D), 0.0f, 0.3f);
                lattn_rng_fill_normal(&r, m.tok_idx, 8, 0.0f, 0.2f);
                m.tok_idx[2] = -0.9f;                    /* tok_2 clamps to 0 */
                lattn_rng_fill_uniform(&r, m.ln_w, (size_t)(cf.H * 8), 0.7f, 1.3f);
                lattn_rng_fill_uniform(&r, m.b1, (size_t)(cf.H * (mlp ? 32 : 8)), -0.3f, 0.3f);
                lattn_rng_fill_uniform(&r, m.post_b, (size_t)D, -0.3f, 0.3f);
            }
            SF = lattn__ttt_state_floats(&cf);
            CHECK(SF == 3 * 2 * lattn__ttt_p(8, mlp) + 1, "ttt layer state floats");
            x = fnormal(&r, (size_t)(B * T * D)); y0 = fnew((size_t)(B * T * D)); y1 = fnew((size_t)(B * T * D));
            s0 = fnew((size_t)(B * SF)); s1 = fnew((size_t)(B * SF)); xb = fnew((size_t)(B * D)); yb = fnew((size_t)(B * D));
            for (s = 0; s < B; s++) lattn_ttt_layer_state_init(&m, s0 + s * SF);
            CHECK(lattn_ttt_layer_forward_ref(&ctx, &m, B, T, x, y0, s0, NULL) == LATTN_OK, "ttt layer ref: %s", lattn_ctx_error(&ctx));
            for (form = 0; form < 3; form++) {
                poison(y1, (size_t)(B * T * D));
                if (form < 2) CHECK(lattn__ttt_layer_run(&ctx, &m, B, T, x, y1, NULL, (form) ? LATTN_FORM_STEP : LATTN_FORM_CHUNK, "test") == LATTN_OK, "ttt layer forward");
                if (form < 2) {   /* T1 tokens, then the rest from the carried state */
                    float *x2 = fnew((size_t)(B * T * D)), *y2 = fnew((size_t)(B * T * D));
                    for (s = 0; s < B; s++) lattn_ttt_layer_state_init(&m, s1 + s * SF);
                    for (s = 0; s < B; s++) {
                        memcpy(x2 + s * T1 * D, x + s * T * D, (size_t)(T1 * D) * sizeof(float));
                        memcpy(x2 + (B * T1 + s * (T - T1)) * D, x + (s * T + T1) * D, (size_t)((T - T1) * D) * sizeof(float));
                    }
                    lattn__ttt_layer_run(&ctx, &m, B, T1, x2, y2, s1, (form) ? LATTN_FORM_STEP : LATTN_FORM_CHUNK, "test");
                    lattn__ttt_layer_run(&ctx, &m, B, T - T1, x2 + B * T1 * D, y2 + B * T1 * D, s1, (form) ? LATTN_FORM_STEP : LATTN_FORM_CHUNK, "test");
                    for (s = 0; s < B; s++) {
                        double e1 = rel_rms(y2 + s * T1 * D, y0 + s * T * D, (size_t)(T1 * D));
                        double e2 = rel_rms(y2 + (B * T1 + s * (T - T1)) * D, y0 + (s * T + T1) * D, (size_t)((T - T1) * D));
                        CHECK(e1 <= 1e-5 && e2 <= 1e-5, "ttt layer %s form %d: %lld + %lld tokens across calls = _ref (%.3g, %.3g)",
                              mlp ? "mlp" : "linear", form, (long long)T1, (long long)(T - T1), e1, e2);
                    }
                    CHECK(rel_rms(s1, s0, (size_t)(B * SF)) <= 1e-5, "ttt layer form %d: state after two calls = _ref's", form);
                    free(x2); free(y2);
                } else {
                    for (s = 0; s < B; s++) lattn_ttt_layer_state_init(&m, s1 + s * SF);
                    for (t = 0; t < T; t++) {
                        for (s = 0; s < B; s++) memcpy(xb + s * D, x + (s * T + t) * D, (size_t)D * sizeof(float));
                        lattn_ttt_layer_step(&ctx, &m, B, xb, yb, s1);
                        for (s = 0; s < B; s++) memcpy(y1 + (s * T + t) * D, yb + s * D, (size_t)D * sizeof(float));
                    }
                    CHECK(rel_rms(s1, s0, (size_t)(B * SF)) <= 1e-5, "ttt layer steps: state = _ref's");
                }
                CHECK(rel_rms(y1, y0, (size_t)(B * T * D)) <= 1e-5, "ttt layer %s form %d = _ref: %.3g", mlp ? "mlp" : "linear", form,
                      rel_rms(y1, y0, (size_t)(B * T * D)));
            }
            /* weights round trip */
            CHECK(lattn_ttt_layer_serialize(&ctx, &m, &blob, &nb) == LATTN_OK && lattn_st_parse(&ctx, blob, nb, &f) == LATTN_OK,
                  "ttt layer serialize: %s", lattn_ctx_error(&ctx));
            CHECK(lattn_ttt_layer_init_st(&ctx, &m2, &f, "") == LATTN_OK && m2.n_params == m.n_params && m2.cfg.base_lr == 0.7 &&
                  m2.cfg.rope_theta == 500.0 && m2.cfg.use_gate == 1 && m2.cfg.mlp == mlp &&
                  memcmp(m2.arena, m.arena, m.n_params * sizeof(float)) == 0, "ttt layer weights round trip");
            lattn_ttt_layer_free(&ctx, &m2);
            {   /* a misshapen tensor: LATTN_E_FORMAT, nothing kept */
                lattn_st_tensor *tt = (lattn_st_tensor *)(void *)lattn_st_find(&f, "ttt_norm_bias");
                tt->shape[1] = 7;
                CHECK(lattn_ttt_layer_init_st(&ctx, &m2, &f, "") == LATTN_E_FORMAT && m2.arena == NULL, "ttt layer load: misshapen tensor");
                tt->shape[1] = 8;
                CHECK(lattn_ttt_layer_init_st(&ctx, &m2, &f, "model.") == LATTN_E_FORMAT, "ttt layer load: missing tensors");
            }
            lattn_st_free(&ctx, &f); lattn_free(&ctx, blob);
            /* errors */
            poison(y1, (size_t)(B * T * D));
            s1[SF - 1] = 8.0f; CHECK(lattn_ttt_layer_forward(&ctx, &m, B, T, x, y1, s1) == LATTN_E_DOMAIN, "ttt layer: state position = b");
            s1[SF - 1] = 1.5f; CHECK(lattn_ttt_layer_forward_ref(&ctx, &m, B, T, x, y1, s1, NULL) == LATTN_E_DOMAIN, "ttt layer: fractional position");
            s1[SF - 1] = 0.0f;
            CHECK(lattn_ttt_layer_forward(&ctx, &m, 0, T, x, y1, s1) == LATTN_E_SHAPE, "ttt layer: B = 0");
            CHECK(lattn_ttt_layer_forward(&ctx, &m, B, T, NULL, y1, s1) == LATTN_E_NULL, "ttt layer: x NULL");
            CHECK(lattn_ttt_layer_step(&ctx, &m, B, x, y1, NULL) == LATTN_E_NULL, "ttt layer step: state NULL");
            CHECK(rel_rms(y1, y1, 1) == HUGE_VAL && rel_rms(y1 + B * T * D - 1, y1, 1) == HUGE_VAL, "ttt layer errors leave y unwritten");
            cf.H = 5; CHECK(lattn_ttt_layer_init(&ctx, &m2, &cf, 1) == LATTN_E_SHAPE && m2.arena == NULL, "ttt layer: H does not divide D");
            cf.H = 8; CHECK(lattn_ttt_layer_init(&ctx, &m2, &cf, 1) == LATTN_E_SHAPE, "ttt layer: odd head width (RoPE pairs)");
            cf.H = 3; cf.mini_batch = 0; CHECK(lattn_ttt_layer_init(&ctx, &m2, &cf, 1) == LATTN_E_SHAPE, "ttt layer: mini_batch 0");
            CHECK(lattn__ttt_state_floats(&cf) == -1, "ttt state floats of a bad configuration");
            CHECK(fail_each_alloc(ttt_layer_alloc_run_fn, &m, 12, &fl) == 0 && fl >= 2, "ttt layer: failing allocations (%d)", fl);
            lattn_ttt_layer_free(&ctx, &m);
            free(x); free(y0); free(y1); free(s0); free(s1); free(xb); free(yb);
        }
        {   /* the official Block around the layer (seq_norm, TTT, residual; ffn_norm, SwiGLU, residual):
               forward (dual, primal) and steps = forward_ref; weights under the Block's names round trip */
            lattn_ttt_config cf = lattn_ttt_config_default();
            lattn_ttt_layer m, m2;
            const int64_t B = 2, T = 21, D = 16;
            int64_t SF, s2, t, i;
            float *x, *y0, *y1, *st0, *st1, *xb, *yb;
            unsigned char *blob = NULL;
            size_t nb = 0;
            lattn_st_file f;
            cf.D = D; cf.H = 2; cf.mini_batch = 4; cf.mlp = 1; cf.ffn = 40;
            CHECK(lattn_ttt_layer_init(&ctx, &m, &cf, 11) == LATTN_OK && m.gate_w && m.seq_norm[0] == 1.0f, "ttt block init");
            for (i = 0; i < (int64_t)m.n_params; i++) m.arena[i] += 0.2f * (float)lattn_rng_normal_d(&r);
            SF = lattn__ttt_state_floats(&cf);
            x = fnormal(&r, (size_t)(B * T * D)); y0 = fnew((size_t)(B * T * D)); y1 = fnew((size_t)(B * T * D));
            st0 = fnew((size_t)(B * SF)); st1 = fnew((size_t)(B * SF)); xb = fnew((size_t)(B * D)); yb = fnew((size_t)(B * D));
            for (s2 = 0; s2 < B; s2++) lattn_ttt_layer_state_init(&m, st0 + s2 * SF);
            CHECK(lattn_ttt_layer_forward_ref(&ctx, &m, B, T, x, y0, st0, NULL) == LATTN_OK, "ttt block ref: %s", lattn_ctx_error(&ctx));
            for (form = 0; form < 3; form++) {
                for (s2 = 0; s2 < B; s2++) lattn_ttt_layer_state_init(&m, st1 + s2 * SF);
                poison(y1, (size_t)(B * T * D));
                if (form < 2) lattn__ttt_layer_run(&ctx, &m, B, T, x, y1, st1, (form) ? LATTN_FORM_STEP : LATTN_FORM_CHUNK, "test");
                else
                    for (t = 0; t < T; t++) {
                        for (s2 = 0; s2 < B; s2++) memcpy(xb + s2 * D, x + (s2 * T + t) * D, (size_t)D * sizeof(float));
                        lattn_ttt_layer_step(&ctx, &m, B, xb, yb, st1);
                        for (s2 = 0; s2 < B; s2++) memcpy(y1 + (s2 * T + t) * D, yb + s2 * D, (size_t)D * sizeof(float));
                    }
                CHECK(rel_rms(y1, y0, (size_t)(B * T * D)) <= 1e-5 && rel_rms(st1, st0, (size_t)(B * SF)) <= 1e-5,
                      "ttt block form %d = ref: y %.3g state %.3g", form, rel_rms(y1, y0, (size_t)(B * T * D)), rel_rms(st1, st0, (size_t)(B * SF)));
            }
            CHECK(lattn_ttt_layer_serialize(&ctx, &m, &blob, &nb) == LATTN_OK && lattn_st_parse(&ctx, blob, nb, &f) == LATTN_OK &&
                  lattn_st_find(&f, "seq_modeling_block.W1") && lattn_st_find(&f, "mlp.down_proj.weight"), "ttt block: the official Block names");
            CHECK(lattn_ttt_layer_init_st(&ctx, &m2, &f, "") == LATTN_OK && m2.cfg.ffn == 40 && m2.n_params == m.n_params &&
                  memcmp(m2.arena, m.arena, m.n_params * sizeof(float)) == 0, "ttt block weights round trip");
            lattn_ttt_layer_free(&ctx, &m2);
            {
                lattn_st_tensor *tt = (lattn_st_tensor *)(void *)lattn_st_find(&f, "seq_modeling_block.W1");
                tt->name = "renamed";     /* the Block without its layer's W1 */
                CHECK(lattn_ttt_layer_init_st(&ctx, &m2, &f, "") == LATTN_E_FORMAT && m2.arena == NULL, "ttt block: missing layer tensor");
            }
            lattn_st_free(&ctx, &f); lattn_free(&ctx, blob);
            cf.ffn = -1; CHECK(lattn_ttt_layer_init(&ctx, &m2, &cf, 1) == LATTN_E_SHAPE, "ttt block: ffn < 0");
            lattn_ttt_layer_free(&ctx, &m);
            free(x); free(y0); free(y1); free(st0); free(st1); free(xb); free(yb);
        }
        {   /* the published configurations' state: TTT-Linear 1b (32 heads of 64), per layer */
            lattn_ttt_config cf = lattn_ttt_config_default();
            CHECK(lattn__ttt_state_floats(&cf) == 32 * 2 * (64 * 64 + 64) + 1, "ttt 1b state per layer");
        }
    }
    (void)bi;
}

/* ---------------------------------------------------------------------------------------------- */
/* Backward: lattn_la_ref_backward against central differences of lattn_la_ref (every gate kind,  */
/* the element-wise maps, h0 and dht, batch and variable lengths) and fla's float64 autograd      */
/* ---------------------------------------------------------------------------------------------- */
/* Relative RMS of two double arrays. */
static double rel_rms_dd(const double *x, const double *y, size_t n) {
    double num = 0, den = 0;
    size_t i;
    for (i = 0; i < n; i++) { num += (x[i] - y[i]) * (x[i] - y[i]); den += y[i] * y[i]; }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
/* The gradient in coordinate *x by central differences at h = 2^-12 and h/2 (the float steps
   actually taken), Richardson-extrapolated so the h² term cancels; LOSS is re-evaluated with *x
   moved, and *x is restored. (At h = 2^-10 the h⁴ term left up to 2e-6 of relative error where
   LATTN_TEST_SEED = 7 or 55 drew a strongly curved TCN or attention case.) Where the two quotients
   differ by more than 1e-3 of their size the function is strongly curved there (a LayerNorm over
   three nearly equal values: 1.2e-6 left at LATTN_TEST_SEED = 7), and a third level at h/4
   cancels the h⁴ term too. Where x0 - h or x0 + h crosses into a binade of coarser floats, the
   step that side is rounded: the points x0 + a and x0 - b with a != b, and the plain difference
   quotient is off by f''·(a - b)/2 (1.3e-6 of relative error in a TTT-MLP case at
   LATTN_TEST_SEED = 12345). Then the three-point form for unequal steps,
   (b²·(f(x0+a) - f0) - a²·(f(x0-b) - f0)) / (a·b·(a + b)), with f0 = f(x0), is exact for
   quadratics as the central difference is. */
#define FD_RICHARDSON(x, LOSS, out)                                                                  \
    do {                                                                                             \
        const float x0_ = *(x), h_ = 1.0f / 4096;                                                    \
        double d_[3], f0_ = 0.0;                                                                     \
        int i_, have_f0_ = 0;                                                                        \
        for (i_ = 0; i_ < 3; i_++) {                                                                 \
            const float p_ = x0_ + h_ / (float)(1 << i_), m_ = x0_ - h_ / (float)(1 << i_);          \
            const double a_ = (double)p_ - (double)x0_, b_ = (double)x0_ - (double)m_;               \
            double lp_, lm_;                                                                         \
            if (i_ == 2 && !(fabs(d_[0] - d_[1]) > 1e-3 * fabs(d_[1]))) break;                      \
            *(x) = p_;                                                                               \
            lp_ = (LOSS);                                                                            \
            *(x) = m_;                                                                               \
            lm_ = (LOSS);                                                                            \
            if (a_ == b_) {                                                                          \
                d_[i_] = (lp_ - lm_) / (a_ + b_);                                                    \
                continue;                                                                            \
            }                                                                                        \
            if (!have_f0_) {                                                                         \
                *(x) = x0_;                                                                          \
                f0_ = (LOSS);                                                                        \
                have_f0_ = 1;                                                                        \
            }                                                                                        \
            d_[i_] = (b_ * b_ * (lp_ - f0_) - a_ * a_ * (lm_ - f0_)) / (a_ * b_ * (a_ + b_));        \
        }                                                                                            \
        *(x) = x0_;                                                                                  \
        (out) = i_ == 3 ? (64.0 * d_[2] - 20.0 * d_[1] + d_[0]) / 45.0 : (4.0 * d_[1] - d_[0]) / 3.0; \
    } while (0)
/* One coordinate's finite difference against the analytic gradient: the relative error with the
   floor 1e-3·max|grad| goes into *worst, and a miss of 1e-6 into *bad. */
static void fd_compare(double fd, double ad, double gmax, double *worst, int *bad) {
    double e = fabs(fd - ad) / fmax(fabs(ad), 1e-3 * gmax);
    *worst = fmax(*worst, e);
    *bad += !(e <= 1e-6);
}
/* The worst error over a model's tensors of gradient a against b (both in the arena's layout): each
   tensor's RMS difference over its own RMS, or over the RMS of the whole gradient b where the
   tensor's is smaller. A gate's bias sums terms that cancel to a hundredth of their size, and its
   float32 error follows the terms: in PRISM P0 at LATTN_TEST_SEED = 42, 5.4e-4 of its own RMS and
   7e-6 of the whole gradient's. A NaN anywhere: HUGE_VAL. */
static double worst_tensor(const float *a, const float *b, const float *arena, const lattn_tensor *t, int64_t nt) {
    double e = 0, all = 0;
    size_t n = 0, j;
    int64_t i;
    for (i = 0; i < nt; i++)
        for (j = 0, n += t[i].count; j < t[i].count; j++) all += (double)b[(t[i].data - arena) + j] * b[(t[i].data - arena) + j];
    all = n > 0 ? sqrt(all / (double)n) : 0.0;
    for (i = 0; i < nt; i++) e = fmax(e, rel_rms_floor(a + (t[i].data - arena), b + (t[i].data - arena), t[i].count, all));
    return e;
}
/* A model's float64 gradients g64 against an official file's grad.<name> (each ≤ 1e-10); the worst. */
static double official_grads(const char *path, const lattn_st_file *f, const double *g64, const float *arena, const lattn_tensor *t, int64_t nt) {
    double worst = 0, e, *want;
    size_t n;
    int64_t i;
    for (i = 0; i < nt; i++) {
        char nm[96];
        snprintf(nm, sizeof nm, "grad.%s", t[i].name);
        want = tensor_f64(f, nm, &n);
        CHECK(want && n == t[i].count, "%s: %s present", path, nm);
        if (!want) continue;
        e = rel_rms_dd(g64 + (t[i].data - arena), want, n);
        worst = fmax(worst, e);
        CHECK(e <= 1e-10, "%s: %s = the official module's float64 autograd (%.3g)", path, nm, e);
        free(want);
    }
    return worst;
}
/* ℒ = Σ dout·o + Σ dht·ht (+ Σ dzt·zt) from _ref's float64 outputs. */
static double la_loss(lattn_ctx *ctx, lattn_la_args a, const float *dout, const float *dht, const float *dzt, size_t no, size_t ns,
                      size_t nz, double *o64, double *h64, double *z64, float *o, float *ht, float *zt) {
    double l = 0;
    size_t i;
    a.o = o; a.ht = ht; a.zt = zt; a.o64 = o64; a.ht64 = h64; a.zt64 = z64;
    lattn_la_ref(ctx, &a);
    for (i = 0; i < no; i++) l += (double)dout[i] * o64[i];
    for (i = 0; i < ns; i++) l += (double)dht[i] * h64[i];
    for (i = 0; dzt && i < nz; i++) l += (double)dzt[i] * z64[i];
    return l;
}
/* ℒ = Σ dy·y + Σ dht·ht from the ShortConv _ref's float64 outputs. */
static double conv_loss(lattn_ctx *ctx, lattn_shortconv_args a, const float *dy, const float *dht, size_t ny, size_t ns,
                        double *y64, double *h64, float *y, float *ht) {
    double l = 0;
    size_t i;
    a.y = y; a.ht = ht; a.y64 = y64; a.ht64 = h64;
    lattn_shortconv_ref(ctx, &a);
    for (i = 0; i < ny; i++) l += (double)dy[i] * y64[i];
    for (i = 0; i < ns; i++) l += (double)dht[i] * h64[i];
    return l;
}
static void test_conv_backward(lattn_ctx *ctx, lattn_rng *r) {
    int vl, act, ci;
    for (vl = 0; vl < 2; vl++)
        for (act = 0; act < 2; act++) {
            static const int64_t off[4] = { 0, 2, 2, 11 };      /* one short sequence (T < W), one empty */
            const int64_t B = vl ? 1 : 2, T = 11, D = 3, W = 4, N = vl ? 3 : B;
            const size_t nx = (size_t)(B * T * D), ns = (size_t)(N * D * W);
            float *x = fnormal(r, nx), *w = fnormal(r, (size_t)(D * W)), *bias = fnormal(r, (size_t)D), *h0 = fnormal(r, ns);
            float *dy = fnormal(r, nx), *dht = fnormal(r, ns), *y = fnew(nx), *ht = fnew(ns);
            double *y64 = (double *)malloc(nx * sizeof(double)), *h64 = (double *)malloc(ns * sizeof(double));
            double *ad[4], worst = 0;
            float *in[4];
            size_t nin[4], c;
            lattn_shortconv_args a;
            lattn_shortconv_grads gr = LATTN__ZERO;
            int k2, bad = 0;
            memset(&a, 0, sizeof a);
            a.B = B; a.T = T; a.D = D; a.W = W; a.x = x; a.w = w; a.bias = bias; a.h0 = h0; a.silu = act;
            if (vl) { a.offsets = off; a.n_seqs = 3; }
            in[0] = x; in[1] = w; in[2] = bias; in[3] = h0;
            nin[0] = nx; nin[1] = (size_t)(D * W); nin[2] = (size_t)D; nin[3] = ns;
            for (k2 = 0; k2 < 4; k2++) ad[k2] = (double *)malloc(nin[k2] * sizeof(double));
            gr.dout = dy; gr.dht = dht; gr.dx64 = ad[0]; gr.dw64 = ad[1]; gr.dbias64 = ad[2]; gr.dh064 = ad[3];
            CHECK(lattn_shortconv_ref_backward(ctx, &a, &gr) == LATTN_OK, "conv backward: %s", lattn_ctx_error(ctx));
            for (k2 = 0; k2 < 4; k2++) {
                double gmax = 0;
                for (c = 0; c < nin[k2]; c++) gmax = fmax(gmax, fabs(ad[k2][c]));
                for (c = 0; c < nin[k2]; c++) {
                    double fd;
                    FD_RICHARDSON(&in[k2][c], conv_loss(ctx, a, dy, dht, nx, ns, y64, h64, y, ht), fd);
                    fd_compare(fd, ad[k2][c], gmax, &worst, &bad);
                }
            }
            CHECK(bad == 0, "shortconv_ref_backward = central differences (%s, %s): worst %.3g", act ? "SiLU" : "identity",
                  vl ? "3 sequences" : "B = 2", worst);
            for (k2 = 0; k2 < 4; k2++) free(ad[k2]);
            free(x); free(w); free(bias); free(h0); free(dy); free(dht); free(y); free(ht); free(y64); free(h64);
        }
    {   /* refused: no grads, no dy */
        float x[4] = { 1, 2, 3, 4 };
        lattn_shortconv_args a;
        lattn_shortconv_grads gr = LATTN__ZERO;
        memset(&a, 0, sizeof a);
        a.B = 1; a.T = 4; a.D = 1; a.W = 2; a.x = x; a.w = x;
        CHECK(lattn_shortconv_ref_backward(ctx, &a, NULL) == LATTN_E_NULL && lattn_shortconv_ref_backward(ctx, &a, &gr) == LATTN_E_NULL,
              "conv backward: grads or dout NULL");
        a.W = 0; gr.dout = x;
        CHECK(lattn_shortconv_ref_backward(ctx, &a, &gr) == LATTN_E_SHAPE, "conv backward: W = 0");
    }
    for (ci = 0; ci < 2; ci++) {   /* fla's ShortConvolution reference under float64 autograd */
        static const char *const outs[3] = { "dx", "dweight", "dbias" };
        char path[256];
        lattn_st_file f;
        const lattn_st_tensor *tx, *tw;
        lattn_shortconv_args a;
        lattn_shortconv_grads gr = LATTN__ZERO;
        double *got[3], *want[3];
        size_t n[3];
        float *x, *w, *bias, *dy;
        int k2;
        snprintf(path, sizeof path, "tests/external/grad/short_conv_grad_%d.safetensors", ci);
        if (lattn_st_load(ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        tx = lattn_st_find(&f, "x"); tw = lattn_st_find(&f, "weight");
        x = tensor_f32(&f, "x"); w = tensor_f32(&f, "weight"); bias = tensor_f32(&f, "bias"); dy = tensor_f32(&f, "dy");
        memset(&a, 0, sizeof a);
        a.B = tx->shape[0]; a.T = tx->shape[1]; a.D = tx->shape[2]; a.W = tw->shape[2];
        a.x = x; a.w = w; a.bias = bias; a.silu = 1;
        for (k2 = 0; k2 < 3; k2++) {
            want[k2] = tensor_f64(&f, outs[k2], &n[k2]);
            got[k2] = (double *)malloc(n[k2] * sizeof(double));
        }
        gr.dout = dy; gr.dx64 = got[0]; gr.dw64 = got[1]; gr.dbias64 = got[2];
        CHECK(lattn_shortconv_ref_backward(ctx, &a, &gr) == LATTN_OK, "short_conv_grad_%d: %s", ci, lattn_ctx_error(ctx));
        for (k2 = 0; k2 < 3; k2++)
            CHECK(rel_rms_dd(got[k2], want[k2], n[k2]) <= 1e-12, "short_conv_grad_%d: %s = fla's float64 autograd (%.3g)", ci,
                  outs[k2], rel_rms_dd(got[k2], want[k2], n[k2]));
        {   /* the float32 backward: <= 1e-5 */
            lattn_shortconv_grads gf = LATTN__ZERO;
            float *fg[3];
            for (k2 = 0; k2 < 3; k2++) fg[k2] = fnew(n[k2]);
            gf.dout = dy; gf.dx = fg[0]; gf.dw = fg[1]; gf.dbias = fg[2];
            CHECK(lattn_shortconv_chunk_backward(ctx, &a, &gf) == LATTN_OK, "short_conv_grad_%d chunk: %s", ci, lattn_ctx_error(ctx));
            for (k2 = 0; k2 < 3; k2++)
                CHECK(rel_rms_d(fg[k2], want[k2], n[k2]) <= 1e-5, "short_conv_grad_%d: %s of shortconv_chunk_backward = fla's float64 autograd (%.3g)",
                      ci, outs[k2], rel_rms_d(fg[k2], want[k2], n[k2]));
            for (k2 = 0; k2 < 3; k2++) free(fg[k2]);
        }
        for (k2 = 0; k2 < 3; k2++) { free(got[k2]); free(want[k2]); }
        free(x); free(w); free(bias); free(dy);
        lattn_st_free(ctx, &f);
    }
}
/* lattn_shortconv_chunk_backward against lattn_shortconv_ref_backward: T = 0, 1, 63, 64, 65, 200
   (blocks of 64), D not a multiple of the vector width, W = 1, 3, 4, 6 (taps in groups of 4), SiLU or not, bias, h0 and dht
   set or not, B = 2 or variable lengths (one sequence shorter than W, one empty); outputs
   NaN-poisoned; the same bits at 1, 2 and 3 threads. */
static void conv_bw_run(lattn_ctx *ctx, const lattn_shortconv_args *a, const lattn_shortconv_grads *g0, float *const *out,
                        const size_t *n, int fast) {
    lattn_shortconv_grads g = *g0;
    int w;
    for (w = 0; w < 4; w++) poison(out[w], n[w]);
    g.dx = out[0]; g.dw = out[1]; g.dbias = out[2]; g.dh0 = out[3];
    CHECK((fast ? lattn_shortconv_chunk_backward : lattn_shortconv_ref_backward)(ctx, a, &g) == LATTN_OK, "conv %s backward: %s",
          fast ? "chunk" : "ref", lattn_ctx_error(ctx));
}
static void test_conv_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const char *const names[4] = { "dx", "dw", "dbias", "dh0" };
    const int64_t Ts[6] = { 0, 1, 63, 64, 65, 200 }, Ds[3] = { 3, 17, 40 }, Ws[4] = { 1, 3, 4, 6 };
    int ti, di, wi, combo = 0;
    for (ti = 0; ti < 6; ti++)
        for (di = 0; di < 3; di++)
            for (wi = 0; wi < 4; wi++) {
                const int vl = combo % 2, act = combo / 2 % 2;
                const int64_t T = Ts[ti], D = Ds[di], W = Ws[wi], B = vl ? 1 : 2, N = vl ? 3 : B;
                const size_t nx = (size_t)(B * T * D), ns = (size_t)(N * D * W), n[4] = { nx, (size_t)(D * W), (size_t)D, ns };
                float *x = fnormal(r, nx), *w = fnormal(r, (size_t)(D * W)), *bias = fnormal(r, (size_t)D), *h0 = fnormal(r, ns);
                float *dy = fnormal(r, nx), *dht = fnormal(r, ns), *want[4], *got[4], *again[4];
                int64_t off[4];
                lattn_shortconv_args a;
                lattn_shortconv_grads g = LATTN__ZERO;
                int k, th, same = 1;
                off[0] = 0; off[1] = T > 2 ? 2 : 0; off[2] = off[1]; off[3] = T;
                memset(&a, 0, sizeof a);
                a.B = B; a.T = T; a.D = D; a.W = W; a.x = x; a.w = w; a.silu = act;
                if (combo % 3 != 2) a.bias = bias;
                if (combo % 4 != 3) a.h0 = h0;
                if (vl) { a.offsets = off; a.n_seqs = 3; }
                g.dout = dy;
                if (combo % 5 != 4) g.dht = dht;
                combo++;
                for (k = 0; k < 4; k++) { want[k] = fnew(n[k]); got[k] = fnew(n[k]); again[k] = fnew(n[k]); }
                conv_bw_run(ctx, &a, &g, want, n, 0);
                conv_bw_run(ctx, &a, &g, got, n, 1);
                for (k = 0; k < 4; k++)
                    CHECK(rel_rms(got[k], want[k], n[k]) <= 1e-5, "shortconv_chunk_backward = shortconv_ref_backward: %s (T = %lld, D = %lld, W = %lld%s, %s): %.3g",
                          names[k], (long long)T, (long long)D, (long long)W, act ? ", SiLU" : "", vl ? "variable lengths" : "B = 2",
                          rel_rms(got[k], want[k], n[k]));
                for (th = 2; th <= 3 && ti == 5; th++) {   /* the same bits at any thread count; at 3 twice, in the kept workspace */
                    int rep;
                    ctx->n_threads = th;
                    ctx->keep_workspace = th == 3;
                    for (rep = 0; rep < 1 + (th == 3); rep++) {
                        conv_bw_run(ctx, &a, &g, again, n, 1);
                        for (k = 0; k < 4; k++) same &= memcmp(got[k], again[k], n[k] * sizeof(float)) == 0;
                    }
                    ctx->n_threads = 1;
                    ctx->keep_workspace = 0;
                }
                lattn_ctx_trim(ctx);
                CHECK(same, "shortconv_chunk_backward: the same bits at 1, 2 and 3 threads, and in the kept workspace (D = %lld, W = %lld)", (long long)D, (long long)W);
                for (k = 0; k < 4; k++) { free(want[k]); free(got[k]); free(again[k]); }
                free(x); free(w); free(bias); free(h0); free(dy); free(dht);
            }
    {   /* refused without writing */
        float x[4] = { 1, 2, 3, 4 }, d[4];
        lattn_shortconv_args a;
        lattn_shortconv_grads g = LATTN__ZERO;
        int i;
        for (i = 0; i < 4; i++) d[i] = NAN;
        memset(&a, 0, sizeof a);
        a.B = 1; a.T = 4; a.D = 1; a.W = 2; a.x = x; a.w = x;
        g.dx = d;
        CHECK(lattn_shortconv_chunk_backward(ctx, &a, NULL) == LATTN_E_NULL && lattn_shortconv_chunk_backward(ctx, &a, &g) == LATTN_E_NULL,
              "shortconv_chunk_backward: grads or dout NULL");
        g.dout = x;
        a.W = 0;
        CHECK(lattn_shortconv_chunk_backward(ctx, &a, &g) == LATTN_E_SHAPE, "shortconv_chunk_backward: W = 0 refused");
        for (i = 0; i < 4; i++) if (!isnan(d[i])) break;
        CHECK(i == 4, "shortconv_chunk_backward: nothing written by a refused call");
    }
}
/* ℒ = Σ dy·y + Σ dht·ht from the scan _ref's float64 outputs. */
static double scan_loss(lattn_ctx *ctx, lattn_scan_args a, const float *dy, const float *dht, size_t ny, size_t ns,
                        double *y64, double *h64) {
    double l = 0;
    size_t i;
    a.y = NULL; a.ht = NULL; a.y64 = y64; a.ht64 = h64;
    lattn_scan_ref(ctx, &a);
    for (i = 0; i < ny; i++) l += (double)dy[i] * y64[i];
    for (i = 0; i < ns; i++) l += (double)dht[i] * h64[i];
    return l;
}
static void test_scan_backward(lattn_ctx *ctx, lattn_rng *r) {
    int ls;
    for (ls = 0; ls < 2; ls++) {
        const int64_t B = 2, T = 17, N = 3;
        const size_t ny = (size_t)(B * T * N), ns = (size_t)(B * N);
        float *av = frand(r, ny, ls ? -0.7f : 0.5f, ls ? -0.01f : 1.0f), *bv = fnormal(r, ny), *h0 = fnormal(r, ns);
        float *dy = fnormal(r, ny), *dht = fnormal(r, ns);
        double *y64 = (double *)malloc(ny * sizeof(double)), *h64 = (double *)malloc(ns * sizeof(double));
        double *ad[3], worst = 0;
        float *in[3];
        size_t nin[3], c;
        lattn_scan_args a;
        lattn_scan_grads gr = LATTN__ZERO;
        int k2, bad = 0;
        memset(&a, 0, sizeof a);
        a.B = B; a.T = T; a.N = N; a.a = av; a.b = bv; a.h0 = h0; a.log_space = ls;
        in[0] = av; in[1] = bv; in[2] = h0;
        nin[0] = ny; nin[1] = ny; nin[2] = ns;
        for (k2 = 0; k2 < 3; k2++) ad[k2] = (double *)malloc(nin[k2] * sizeof(double));
        gr.dout = dy; gr.dht = dht; gr.da64 = ad[0]; gr.db64 = ad[1]; gr.dh064 = ad[2];
        CHECK(lattn_scan_ref_backward(ctx, &a, &gr) == LATTN_OK, "scan backward: %s", lattn_ctx_error(ctx));
        for (k2 = 0; k2 < 3; k2++) {
            double gmax = 0;
            for (c = 0; c < nin[k2]; c++) gmax = fmax(gmax, fabs(ad[k2][c]));
            for (c = 0; c < nin[k2]; c++) {
                double fd;
                FD_RICHARDSON(&in[k2][c], scan_loss(ctx, a, dy, dht, ny, ns, y64, h64), fd);
                fd_compare(fd, ad[k2][c], gmax, &worst, &bad);
            }
        }
        CHECK(bad == 0, "scan_ref_backward = central differences (%s decays): worst %.3g", ls ? "log" : "linear", worst);
        for (k2 = 0; k2 < 3; k2++) free(ad[k2]);
        free(av); free(bv); free(h0); free(dy); free(dht); free(y64); free(h64);
    }
}
/* lattn_scan_chunk_backward against lattn_scan_ref_backward: T = 0, 1, 15, 16, 17, 200 (blocks of
   16), N across the 4096-channel item, linear and log decays (some clamped), h0 and dht set or not,
   outputs NaN-poisoned; recomputing the states and reading them (g.h); the same bits at 1, 2 and 3
   threads; outputs of 16 MiB, which go around the caches, at rows and pointers off a line. */
static void scan_bw_run(lattn_ctx *ctx, const lattn_scan_args *a, const lattn_scan_grads *g0, float *const *out, const size_t *n, int fast) {
    lattn_scan_grads g = *g0;
    int w;
    for (w = 0; w < 3; w++) poison(out[w], n[w]);
    g.da = out[0]; g.db = out[1]; g.dh0 = out[2];
    CHECK((fast ? lattn_scan_chunk_backward : lattn_scan_ref_backward)(ctx, a, &g) == LATTN_OK, "scan %s backward: %s",
          fast ? "chunk" : "ref", lattn_ctx_error(ctx));
}
static void test_scan_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const char *const names[3] = { "da", "db", "dh0" };
    const int64_t Ts[6] = { 0, 1, 15, 16, 17, 200 }, Ns[3] = { 3, 17, 4100 };
    int ti, ni, ls, combo = 0;
    for (ti = 0; ti < 6; ti++)
        for (ni = 0; ni < 3; ni++)
            for (ls = 0; ls < 2; ls++) {
                if (g_quick && ni == 2 && ti < 5) continue;   /* before anything is allocated */
                const int64_t B = 2, T = Ts[ti], N = Ns[ni];
                const size_t ny = (size_t)(B * T * N), ns = (size_t)(B * N), n[3] = { ny, ny, ns };
                float *av = frand(r, ny, ls ? -0.7f : 0.5f, ls ? -0.01f : 1.0f), *bv = fnormal(r, ny), *h0 = fnormal(r, ns);
                float *dy = fnormal(r, ny), *dht = fnormal(r, ns), *want[3], *got[3], *again[3];
                lattn_scan_args a;
                lattn_scan_grads g = LATTN__ZERO;
                size_t i;
                int w, th, same = 1;
                if (ls) for (i = 0; i < ny; i += 7) av[i] = LATTN_LOG_GATE_MIN * 2.0f;   /* clamped: da = 0 */
                memset(&a, 0, sizeof a);
                a.B = B; a.T = T; a.N = N; a.a = av; a.b = bv; a.log_space = ls;
                if (combo % 2 == 0) a.h0 = h0;
                g.dout = dy;
                if (combo++ % 3 != 1) g.dht = dht;
                for (w = 0; w < 3; w++) { want[w] = fnew(n[w]); got[w] = fnew(n[w]); again[w] = fnew(n[w]); }
                scan_bw_run(ctx, &a, &g, want, n, 0);
                scan_bw_run(ctx, &a, &g, got, n, 1);
                for (w = 0; w < 3; w++)
                    CHECK(rel_rms(got[w], want[w], n[w]) <= 1e-5, "scan_chunk_backward = scan_ref_backward: %s (T = %lld, N = %lld, %s): %.3g",
                          names[w], (long long)T, (long long)N, ls ? "log" : "linear", rel_rms(got[w], want[w], n[w]));
                {   /* from the states: g.h = the _chunk forward's y (NaN-poisoned before it runs) */
                    lattn_scan_args af = a;
                    lattn_scan_grads gh = g;
                    float *y = fnew(ny);
                    af.y = y;
                    CHECK(lattn_scan_chunk(ctx, &af) == LATTN_OK, "scan_chunk for the states: %s", lattn_ctx_error(ctx));
                    gh.h = y;
                    scan_bw_run(ctx, &a, &gh, again, n, 1);
                    for (w = 0; w < 3; w++)
                        CHECK(rel_rms(again[w], want[w], n[w]) <= 1e-5, "scan_chunk_backward from the states = scan_ref_backward: %s (T = %lld, N = %lld, %s): %.3g",
                              names[w], (long long)T, (long long)N, ls ? "log" : "linear", rel_rms(again[w], want[w], n[w]));
                    free(y);
                }
                for (th = 2; th <= 3 && ti == 5; th++) {   /* the same bits at any thread count; at 3 twice, in the kept workspace */
                    int rep;
                    ctx->n_threads = th;
                    ctx->keep_workspace = th == 3;
                    for (rep = 0; rep < 1 + (th == 3); rep++) {
                        scan_bw_run(ctx, &a, &g, again, n, 1);
                        for (w = 0; w < 3; w++) same &= memcmp(got[w], again[w], n[w] * sizeof(float)) == 0;
                    }
                    ctx->n_threads = 1;
                    ctx->keep_workspace = 0;
                }
                lattn_ctx_trim(ctx);
                CHECK(same, "scan_chunk_backward: the same bits at 1, 2 and 3 threads, and in the kept workspace (N = %lld)", (long long)N);
                for (w = 0; w < 3; w++) { free(want[w]); free(got[w]); free(again[w]); }
                free(av); free(bv); free(h0); free(dy); free(dht);
            }
    if (!g_quick) {   /* outputs of 16 MiB and more, stored around the caches: rows of 8195 floats (each row
                         off a line by another amount), db 3 floats off a line, da 1 (then 3) */
        const int64_t T = 520, N = 8195;
        const size_t ny = (size_t)(T * N), n[3] = { ny, ny, (size_t)N };
        float *av = frand(r, ny, 0.5f, 1.0f), *bv = fnormal(r, ny), *dy = fnormal(r, ny), *y = fnew(ny), *want[3], *got[3], *buf[2];
        lattn_scan_args a;
        lattn_scan_grads g = LATTN__ZERO;
        int w, th;
        memset(&a, 0, sizeof a);
        a.B = 1; a.T = T; a.N = N; a.a = av; a.b = bv; a.y = y;
        g.dout = dy;
        for (w = 0; w < 3; w++) want[w] = fnew(n[w]);
        buf[0] = fnew(ny + 4); buf[1] = fnew(ny + 4);
        got[1] = buf[1] + 3; got[2] = fnew((size_t)N);
        scan_bw_run(ctx, &a, &g, want, n, 0);
        CHECK(lattn_scan_chunk(ctx, &a) == LATTN_OK, "scan_chunk for the states: %s", lattn_ctx_error(ctx));
        for (th = 1; th <= 2; th++) {    /* recomputing the states, then reading them */
            ctx->n_threads = th;
            g.h = th == 2 ? y : NULL;
            got[0] = buf[0] + (th == 2 ? 3 : 1);
            scan_bw_run(ctx, &a, &g, got, n, 1);
            for (w = 0; w < 3; w++)
                CHECK(rel_rms(got[w], want[w], n[w]) <= 1e-5, "scan_chunk_backward = scan_ref_backward: %s, outputs stored around the caches (%s): %.3g",
                      names[w], th == 2 ? "the states read, 2 threads" : "the states recomputed", rel_rms(got[w], want[w], n[w]));
        }
        {   /* the forward's y of 16 MiB, stored around the caches: 1 to 3 floats off a line, the
               channels in 1, 2 and 3 blocks (widths 8195, 4112 and 2736 as threads ask) */
            float *ref = fnew(ny), *hr = fnew((size_t)N), *ht = fnew((size_t)N), *y1 = fnew(ny);
            a.y = ref; a.ht = hr;
            CHECK(lattn_scan_ref(ctx, &a) == LATTN_OK, "scan_ref: %s", lattn_ctx_error(ctx));
            for (th = 1; th <= 3; th++) {
                float *yb = buf[0] + th;
                ctx->n_threads = th;
                poison(buf[0], ny + 4);
                poison(ht, (size_t)N);
                a.y = yb; a.ht = ht;
                CHECK(lattn_scan_chunk(ctx, &a) == LATTN_OK, "scan_chunk, y around the caches: %s", lattn_ctx_error(ctx));
                CHECK(rel_rms(yb, ref, ny) <= 1e-5 && rel_rms(ht, hr, (size_t)N) <= 1e-5,
                      "scan_chunk = scan_ref, y of 16 MiB stored around the caches, %d thread(s): %.3g, ht %.3g", th, rel_rms(yb, ref, ny),
                      rel_rms(ht, hr, (size_t)N));
                if (th == 1) memcpy(y1, yb, ny * sizeof(float));
                else CHECK(same_bits(yb, y1, ny), "scan_chunk: the same bits at %d threads (channel blocks narrowed)", th);
            }
            a.y = y; a.ht = NULL;
            free(ref); free(hr); free(ht); free(y1);
        }
        ctx->n_threads = 1;
        for (w = 0; w < 3; w++) free(want[w]);
        free(buf[0]); free(buf[1]); free(got[2]); free(av); free(bv); free(dy); free(y);
    }
    {   /* refused without writing: no grads; a positive log decay */
        float x[4] = { 0.5f, 0.5f, 0.5f, 0.5f }, d[4];
        lattn_scan_args a;
        lattn_scan_grads g = LATTN__ZERO;
        int i;
        for (i = 0; i < 4; i++) d[i] = NAN;
        memset(&a, 0, sizeof a);
        a.B = 1; a.T = 4; a.N = 1; a.a = x; a.b = x; a.log_space = 1;
        g.dout = x; g.db = d;
        CHECK(lattn_scan_chunk_backward(ctx, &a, NULL) == LATTN_E_NULL, "scan_chunk_backward: grads NULL");
        CHECK(lattn_scan_chunk_backward(ctx, &a, &g) == LATTN_E_DOMAIN, "scan_chunk_backward: a positive log decay refused");
        for (i = 0; i < 4; i++) if (!isnan(d[i])) break;
        CHECK(i == 4, "scan_chunk_backward: nothing written by a refused call");
    }
}
/* ℒ = Σ dy·y + Σ dht·ht from the SSM _ref's float64 outputs. */
static double ssm_loss(lattn_ctx *ctx, lattn_ssm_args a, const float *dy, const float *dht, size_t ny, size_t ns,
                       double *y64, double *h64, float *y) {
    double l = 0;
    size_t i;
    a.y = y; a.ht = NULL; a.y64 = y64; a.ht64 = h64;
    lattn_ssm_ref(ctx, &a);
    for (i = 0; i < ny; i++) l += (double)dy[i] * y64[i];
    for (i = 0; i < ns; i++) l += (double)dht[i] * h64[i];
    return l;
}
static void test_ssm_backward(lattn_ctx *ctx, lattn_rng *r) {
    int vl, ci;
    for (vl = 0; vl < 2; vl++) {     /* every input; groups of 2 channels; B = 2 or three sequences */
        static const int64_t off[4] = { 0, 5, 5, 11 };
        const int64_t B = vl ? 1 : 2, T = 11, D = 4, N = 3, G = 2, NS = vl ? 3 : B;
        const size_t nx = (size_t)(B * T * D), nb = (size_t)(B * T * G * N), ns = (size_t)(NS * D * N);
        float *x = fnormal(r, nx), *dt = frand(r, nx, -2.0f, 0.5f), *A = frand(r, (size_t)(D * N), -2.0f, -0.2f);
        float *Bm = fnormal(r, nb), *Cm = fnormal(r, nb), *Ds = fnormal(r, (size_t)D), *bias = frand(r, (size_t)D, -1.0f, 0.5f);
        float *z = fnormal(r, nx), *h0 = fnormal(r, ns), *dy = fnormal(r, nx), *dht = fnormal(r, ns), *y = fnew(nx);
        double *y64 = (double *)malloc(nx * sizeof(double)), *h64 = (double *)malloc(ns * sizeof(double));
        double *ad[9], worst = 0;
        float *in[9];
        size_t nin[9], c;
        lattn_ssm_args a;
        lattn_ssm_grads gr = LATTN__ZERO;
        int k2, bad = 0;
        memset(&a, 0, sizeof a);
        a.B = B; a.T = T; a.D = D; a.N = N; a.G = G; a.dt_softplus = 1;
        a.x = x; a.dt = dt; a.A = A; a.Bm = Bm; a.Cm = Cm; a.Dskip = Ds; a.dt_bias = bias; a.z = z; a.h0 = h0;
        if (vl) { a.offsets = off; a.n_seqs = 3; }
        in[0] = x; in[1] = dt; in[2] = A; in[3] = Bm; in[4] = Cm; in[5] = Ds; in[6] = bias; in[7] = z; in[8] = h0;
        nin[0] = nx; nin[1] = nx; nin[2] = (size_t)(D * N); nin[3] = nb; nin[4] = nb; nin[5] = (size_t)D; nin[6] = (size_t)D;
        nin[7] = nx; nin[8] = ns;
        for (k2 = 0; k2 < 9; k2++) ad[k2] = (double *)malloc(nin[k2] * sizeof(double));
        gr.dout = dy; gr.dht = dht;
        gr.dx64 = ad[0]; gr.ddt64 = ad[1]; gr.dA64 = ad[2]; gr.dBm64 = ad[3]; gr.dCm64 = ad[4]; gr.dDskip64 = ad[5];
        gr.ddt_bias64 = ad[6]; gr.dz64 = ad[7]; gr.dh064 = ad[8];
        CHECK(lattn_ssm_ref_backward(ctx, &a, &gr) == LATTN_OK, "ssm backward: %s", lattn_ctx_error(ctx));
        for (k2 = 0; k2 < 9; k2++) {
            double gmax = 0;
            for (c = 0; c < nin[k2]; c++) gmax = fmax(gmax, fabs(ad[k2][c]));
            for (c = 0; c < nin[k2]; c += 1 + (size_t)(lattn_rng_next(r) % 3)) {
                double fd;
                FD_RICHARDSON(&in[k2][c], ssm_loss(ctx, a, dy, dht, nx, ns, y64, h64, y), fd);
                fd_compare(fd, ad[k2][c], gmax, &worst, &bad);
            }
        }
        CHECK(bad == 0, "ssm_ref_backward = central differences (%s): worst %.3g", vl ? "3 sequences" : "B = 2", worst);
        for (k2 = 0; k2 < 9; k2++) free(ad[k2]);
        free(x); free(dt); free(A); free(Bm); free(Cm); free(Ds); free(bias); free(z); free(h0); free(dy); free(dht); free(y);
        free(y64); free(h64);
    }
    for (ci = 0; ci < 2; ci++) {   /* Mamba's selective_scan_ref under float64 autograd: [batch][dim][L] -> [B][T][D] */
        static const char *const outs[8] = { "du", "ddelta", "dz", "dA", "dB", "dC", "dD", "ddelta_bias" };
        char path[256];
        lattn_st_file f;
        const lattn_st_tensor *tu, *tA;
        lattn_ssm_args a;
        lattn_ssm_grads gr = LATTN__ZERO;
        double *got[8], *want[8];
        size_t n[8];
        float *u, *dl, *z, *dout, *dls, *Bc, *Cc, *A, *Dv, *bias, *x, *dt, *zz, *dy, *Bm, *Cm;
        int64_t Bn, D, L, N, G, b, d, t, k, i, gi;
        int k2;
        snprintf(path, sizeof path, "tests/external/grad/mamba_selective_scan_grad_%d.safetensors", ci);
        if (lattn_st_load(ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        tu = lattn_st_find(&f, "u"); tA = lattn_st_find(&f, "A");
        Bn = tu->shape[0]; D = tu->shape[1]; L = tu->shape[2]; N = tA->shape[1];
        G = lattn_st_find(&f, "B")->ndim == 4 ? lattn_st_find(&f, "B")->shape[1] : 1;   /* [batch][G][N][L] or [batch][N][L] */
        u = tensor_f32(&f, "u"); dl = tensor_f32(&f, "delta"); z = tensor_f32(&f, "z"); dout = tensor_f32(&f, "dout");
        dls = tensor_f32(&f, "dlast_state"); Bc = tensor_f32(&f, "B"); Cc = tensor_f32(&f, "C"); A = tensor_f32(&f, "A");
        Dv = tensor_f32(&f, "D"); bias = tensor_f32(&f, "delta_bias");
        x = fnew((size_t)(Bn * L * D)); dt = fnew((size_t)(Bn * L * D)); zz = fnew((size_t)(Bn * L * D)); dy = fnew((size_t)(Bn * L * D));
        Bm = fnew((size_t)(Bn * L * G * N)); Cm = fnew((size_t)(Bn * L * G * N));
        for (b = 0; b < Bn; b++)
            for (t = 0; t < L; t++) {
                for (d = 0; d < D; d++) {
                    i = (b * D + d) * L + t;
                    x[(b * L + t) * D + d] = u[i]; dt[(b * L + t) * D + d] = dl[i]; zz[(b * L + t) * D + d] = z[i]; dy[(b * L + t) * D + d] = dout[i];
                }
                for (gi = 0; gi < G; gi++)
                    for (k = 0; k < N; k++) {
                        Bm[((b * L + t) * G + gi) * N + k] = Bc[((b * G + gi) * N + k) * L + t];
                        Cm[((b * L + t) * G + gi) * N + k] = Cc[((b * G + gi) * N + k) * L + t];
                    }
            }
        memset(&a, 0, sizeof a);
        a.B = Bn; a.T = L; a.D = D; a.N = N; a.G = G; a.dt_softplus = 1;
        a.x = x; a.dt = dt; a.A = A; a.Bm = Bm; a.Cm = Cm; a.Dskip = Dv; a.dt_bias = bias; a.z = zz;
        for (k2 = 0; k2 < 8; k2++) {
            want[k2] = tensor_f64(&f, outs[k2], &n[k2]);
            got[k2] = (double *)malloc(n[k2] * sizeof(double));
        }
        gr.dout = dy; gr.dht = dls;
        gr.dx64 = got[0]; gr.ddt64 = got[1]; gr.dz64 = got[2]; gr.dA64 = got[3]; gr.dBm64 = got[4]; gr.dCm64 = got[5];
        gr.dDskip64 = got[6]; gr.ddt_bias64 = got[7];
        CHECK(lattn_ssm_ref_backward(ctx, &a, &gr) == LATTN_OK, "mamba grad %d: %s", ci, lattn_ctx_error(ctx));
        for (k2 = 0; k2 < 8; k2++) {   /* the token-major results back to the reference's layout */
            double *back = (double *)malloc(n[k2] * sizeof(double));
            for (i = 0; i < (int64_t)n[k2]; i++) back[i] = got[k2][i];
            if (k2 <= 2)
                for (b = 0; b < Bn; b++) for (d = 0; d < D; d++) for (t = 0; t < L; t++) back[(b * D + d) * L + t] = got[k2][(b * L + t) * D + d];
            if (k2 == 4 || k2 == 5)
                for (b = 0; b < Bn; b++)
                    for (gi = 0; gi < G; gi++)
                        for (k = 0; k < N; k++)
                            for (t = 0; t < L; t++) back[((b * G + gi) * N + k) * L + t] = got[k2][((b * L + t) * G + gi) * N + k];
            CHECK(rel_rms_dd(back, want[k2], n[k2]) <= 1e-12, "mamba_selective_scan_grad_%d: %s = the reference's float64 autograd (%.3g)", ci,
                  outs[k2], rel_rms_dd(back, want[k2], n[k2]));
            free(back);
        }
        {   /* the float32 backward: <= 1e-5 (against the float64 results, already checked equal to the reference's) */
            lattn_ssm_grads gf = LATTN__ZERO;
            float *fg[8];
            for (k2 = 0; k2 < 8; k2++) fg[k2] = fnew(n[k2]);
            gf.dout = dy; gf.dht = dls;
            gf.dx = fg[0]; gf.ddt = fg[1]; gf.dz = fg[2]; gf.dA = fg[3]; gf.dBm = fg[4]; gf.dCm = fg[5]; gf.dDskip = fg[6]; gf.ddt_bias = fg[7];
            CHECK(lattn_ssm_chunk_backward(ctx, &a, &gf) == LATTN_OK, "mamba grad %d chunk: %s", ci, lattn_ctx_error(ctx));
            for (k2 = 0; k2 < 8; k2++)
                CHECK(rel_rms_d(fg[k2], got[k2], n[k2]) <= 1e-5, "mamba_selective_scan_grad_%d: %s of ssm_chunk_backward = the reference's float64 autograd (%.3g)",
                      ci, outs[k2], rel_rms_d(fg[k2], got[k2], n[k2]));
            for (k2 = 0; k2 < 8; k2++) free(fg[k2]);
        }
        for (k2 = 0; k2 < 8; k2++) { free(got[k2]); free(want[k2]); }
        free(u); free(dl); free(z); free(dout); free(dls); free(Bc); free(Cc); free(A); free(Dv); free(bias);
        free(x); free(dt); free(zz); free(dy); free(Bm); free(Cm);
        lattn_st_free(ctx, &f);
    }
}
/* lattn_ssm_chunk_backward against lattn_ssm_ref_backward: T = 0, 1, 31, 32, 33, 150 (blocks of 32),
   D = 5 (one group), 36 in 3 groups (vectors across groups), 260 in 2 groups (tiles across groups),
   N = 3 or 35 (whole and partial register transposes of the states); z, Dskip, dt_bias, h0, dht,
   softplus on or off, B = 2 or variable lengths, some decays clamped; outputs NaN-poisoned;
   recomputing the block-start states and reading the forward's (args.states); the same bits at
   1, 2 and 3 threads. */
static void ssm_bw_run(lattn_ctx *ctx, const lattn_ssm_args *a, const lattn_ssm_grads *g0, float *const *out, const size_t *n, int fast) {
    lattn_ssm_grads g = *g0;
    int w;
    for (w = 0; w < 9; w++) poison(out[w], n[w]);
    g.dx = out[0]; g.ddt = out[1]; g.dA = out[2]; g.dBm = out[3]; g.dCm = out[4];
    g.dDskip = a->Dskip ? out[5] : NULL; g.ddt_bias = a->dt_bias ? out[6] : NULL; g.dz = a->z ? out[7] : NULL; g.dh0 = out[8];
    CHECK((fast ? lattn_ssm_chunk_backward : lattn_ssm_ref_backward)(ctx, a, &g) == LATTN_OK, "ssm %s backward: %s",
          fast ? "chunk" : "ref", lattn_ctx_error(ctx));
}
static void test_ssm_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const char *const names[9] = { "dx", "ddt", "dA", "dBm", "dCm", "dDskip", "ddt_bias", "dz", "dh0" };
    const int64_t Ts[6] = { 0, 1, 31, 32, 33, 150 }, Ds[3] = { 5, 36, 260 }, Gs[3] = { 1, 3, 2 }, Ns[2] = { 3, 35 };
    int ti, di, ni, combo = 0;
    for (ti = 0; ti < 6; ti++)
        for (di = 0; di < 3; di++)
            for (ni = 0; ni < 2; ni++) {
                if (g_quick && di == 2 && ti < 5) continue;   /* before anything is allocated */
                const int vl = combo % 2, opt = combo % 4;
                const int64_t T = Ts[ti], D = Ds[di], G = Gs[di], N = Ns[ni], B = vl ? 1 : 2, NS = vl ? 3 : B;
                const size_t nx = (size_t)(B * T * D), nb = (size_t)(B * T * G * N), ns = (size_t)(NS * D * N);
                const size_t n[9] = { nx, nx, (size_t)(D * N), nb, nb, (size_t)D, (size_t)D, nx, ns };
                float *x = fnormal(r, nx), *dt = frand(r, nx, -2.0f, 0.5f), *A = frand(r, (size_t)(D * N), -2.0f, -0.2f);
                float *Bm = fnormal(r, nb), *Cm = fnormal(r, nb), *Ds_ = fnormal(r, (size_t)D), *bias = frand(r, (size_t)D, -1.0f, 0.5f);
                float *z = fnormal(r, nx), *h0 = fnormal(r, ns), *dy = fnormal(r, nx), *dht = fnormal(r, ns);
                float *want[9], *got[9], *again[9];
                int64_t off[4];
                lattn_ssm_args a;
                lattn_ssm_grads g = LATTN__ZERO;
                int k, th, same = 1;
                off[0] = 0; off[1] = T / 3; off[2] = T / 3; off[3] = T;
                if (combo % 3 == 0) A[0] = -5000.0f;      /* Δ·A below the clamp */
                memset(&a, 0, sizeof a);
                a.B = B; a.T = T; a.D = D; a.N = N; a.G = G; a.dt_softplus = opt != 3;
                a.x = x; a.dt = dt; a.A = A; a.Bm = Bm; a.Cm = Cm;
                if (opt != 3) { size_t i; for (i = 0; i < nx; i++) dt[i] = dt[i] < 0 ? -dt[i] : dt[i]; }
                else { size_t i; for (i = 0; i < nx; i++) dt[i] = 0.1f + (dt[i] < 0 ? -dt[i] : dt[i]); }
                if (opt != 1) a.Dskip = Ds_;
                if (opt != 2) a.dt_bias = opt == 3 ? NULL : bias;
                if (opt != 0) a.z = z;
                if (combo % 5 != 4) a.h0 = h0;
                if (vl) { a.offsets = off; a.n_seqs = 3; }
                g.dout = dy;
                if (combo % 3 != 1) g.dht = dht;
                combo++;
                for (k = 0; k < 9; k++) { want[k] = fnew(n[k]); got[k] = fnew(n[k]); again[k] = fnew(n[k]); }
                ssm_bw_run(ctx, &a, &g, want, n, 0);
                ssm_bw_run(ctx, &a, &g, got, n, 1);
                for (k = 0; k < 9; k++) {
                    size_t m = (k == 5 && !a.Dskip) || (k == 6 && !a.dt_bias) || (k == 7 && !a.z) ? 0 : n[k];
                    CHECK(rel_rms(got[k], want[k], m) <= 1e-5, "ssm_chunk_backward = ssm_ref_backward: %s (T = %lld, D = %lld, G = %lld, N = %lld, %s): %.3g",
                          names[k], (long long)T, (long long)D, (long long)G, (long long)N, vl ? "variable lengths" : "B = 2", rel_rms(got[k], want[k], m));
                }
                {   /* from the forward's block-start states: _chunk writes them (NaN-poisoned), the backward reads them */
                    const int64_t longest = vl ? LATTN__MAX(T / 3, T - T / 3) : T, nbk = (longest + LATTN_SSM_BLOCK - 1) / LATTN_SSM_BLOCK;
                    const size_t nst = (size_t)(NS * (nbk + 1) * D * N);
                    float *st = fnew(nst), *y = fnew(nx), *y2 = fnew(nx), *ht = fnew(ns);
                    lattn_ssm_args af = a;
                    int s2, same_y, fin = 1;
                    af.y = y2;
                    CHECK(lattn_ssm_chunk(ctx, &af) == LATTN_OK, "ssm_chunk: %s", lattn_ctx_error(ctx));
                    af.y = y; af.ht = ht; af.states = st;
                    CHECK(lattn_ssm_chunk(ctx, &af) == LATTN_OK, "ssm_chunk with states: %s", lattn_ctx_error(ctx));
                    same_y = memcmp(y, y2, nx * sizeof(float)) == 0;
                    for (s2 = 0; s2 < NS; s2++) fin &= memcmp(st + (s2 * (nbk + 1) + nbk) * D * N, ht + s2 * D * N, (size_t)(D * N) * sizeof(float)) == 0;
                    CHECK(same_y && fin, "ssm_chunk with states: y unchanged (%d), the last slot = ht (%d)", same_y, fin);
                    af = a;
                    af.states = st;
                    ssm_bw_run(ctx, &af, &g, again, n, 1);
                    for (k = 0; k < 9; k++) {
                        size_t m = (k == 5 && !a.Dskip) || (k == 6 && !a.dt_bias) || (k == 7 && !a.z) ? 0 : n[k];
                        CHECK(rel_rms(again[k], want[k], m) <= 1e-5, "ssm_chunk_backward from the states = ssm_ref_backward: %s (T = %lld, D = %lld, G = %lld, N = %lld, %s): %.3g",
                              names[k], (long long)T, (long long)D, (long long)G, (long long)N, vl ? "variable lengths" : "B = 2", rel_rms(again[k], want[k], m));
                    }
                    free(st); free(y); free(y2); free(ht);
                }
                for (th = 2; th <= 3 && ti == 5; th++) {   /* the same bits at any thread count; at 3 twice, in the kept workspace */
                    int rep;
                    ctx->n_threads = th;
                    ctx->keep_workspace = th == 3;
                    for (rep = 0; rep < 1 + (th == 3); rep++) {
                        ssm_bw_run(ctx, &a, &g, again, n, 1);
                        for (k = 0; k < 9; k++) same &= memcmp(got[k], again[k], n[k] * sizeof(float)) == 0;
                    }
                    ctx->n_threads = 1;
                    ctx->keep_workspace = 0;
                }
                lattn_ctx_trim(ctx);
                CHECK(same, "ssm_chunk_backward: the same bits at 1, 2 and 3 threads, and in the kept workspace (D = %lld, G = %lld)", (long long)D, (long long)G);
                for (k = 0; k < 9; k++) { free(want[k]); free(got[k]); free(again[k]); }
                free(x); free(dt); free(A); free(Bm); free(Cm); free(Ds_); free(bias); free(z); free(h0); free(dy); free(dht);
            }
    {   /* refused without writing */
        float v[4] = { 0.5f, 0.5f, 0.5f, 0.5f }, d[4];
        lattn_ssm_args a;
        lattn_ssm_grads g = LATTN__ZERO;
        int i;
        for (i = 0; i < 4; i++) d[i] = NAN;
        memset(&a, 0, sizeof a);
        a.B = 1; a.T = 4; a.D = 1; a.N = 1; a.x = a.dt = a.Bm = a.Cm = v; a.A = v;   /* A > 0 */
        g.dx = d;
        CHECK(lattn_ssm_chunk_backward(ctx, &a, NULL) == LATTN_E_NULL, "ssm_chunk_backward: grads NULL");
        g.dout = v;
        CHECK(lattn_ssm_chunk_backward(ctx, &a, &g) == LATTN_E_DOMAIN, "ssm_chunk_backward: A > 0 refused");
        for (i = 0; i < 4; i++) if (!isnan(d[i])) break;
        CHECK(i == 4, "ssm_chunk_backward: nothing written by a refused call");
    }
}
/* ℒ = Σ dy·y + Σ dht·ht from the S4D _ref's float64 outputs. */
static double s4d_loss(lattn_ctx *ctx, lattn_s4d_args a, const float *dy, const float *dht, size_t ny, size_t ns, double *y64, double *h64,
                       float *y) {
    double l = 0;
    size_t i;
    a.y = y; a.ht = NULL; a.y64 = y64; a.ht64 = h64;
    lattn_s4d_ref(ctx, &a);
    for (i = 0; i < ny; i++) l += (double)dy[i] * y64[i];
    for (i = 0; i < ns; i++) l += (double)dht[i] * h64[i];
    return l;
}
/* The ten gradients of an S4D backward into out[] (NaN-poisoned first): x, A_re, A_im, B_re, B_im,
   C_re, C_im, log_dt, Dskip, h0. */
static void s4d_bw_run(lattn_ctx *ctx, const lattn_s4d_args *a, const lattn_s4d_grads *g0, float *const *out, const size_t *n, int fast) {
    lattn_s4d_grads g = *g0;
    int w;
    for (w = 0; w < 10; w++) poison(out[w], n[w]);
    g.dx = out[0]; g.dA_re = out[1]; g.dA_im = out[2]; g.dB_re = out[3]; g.dB_im = out[4]; g.dC_re = out[5]; g.dC_im = out[6];
    g.dlog_dt = out[7]; g.dDskip = out[8]; g.dh0 = out[9];
    CHECK((fast ? lattn_s4d_chunk_backward : lattn_s4d_ref_backward)(ctx, a, &g) == LATTN_OK, "s4d %s backward: %s", fast ? "chunk" : "ref",
          lattn_ctx_error(ctx));
}
/* lattn_s4d_ref_backward against central differences of lattn_s4d_ref (complex and real modes,
   B = 2, h0 and dht); lattn_s4d_chunk_backward against it over T = 0, 1, 63, 64, 65, 200 and a long
   T with |Ā| near 1 (the adjoint carried across 32 blocks), N = 3 and 16, h0 and dht present or
   not; outputs NaN-poisoned; the same bits at 1, 2 and 3 threads; refusals write nothing. */
static void test_s4d_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const char *const names[10] = { "dx", "dA_re", "dA_im", "dB_re", "dB_im", "dC_re", "dC_im", "dlog_dt", "dDskip", "dh0" };
    const int64_t Ts[7] = { 0, 1, 63, 64, 65, 200, 2048 }, Ns[2] = { 3, 16 };
    int cplx, ti, ni, combo = 0;
    for (cplx = 0; cplx < 2; cplx++) {   /* every input by central differences */
        const int64_t B = 2, T = 11, D = 2, N = 3;
        s4d_case c;
        float *dy, *dht, *y, *in[10];
        double *y64, *h64, *ad[10], worst = 0;
        size_t nin[10], k;
        lattn_s4d_grads gr = LATTN__ZERO;
        int w, bad = 0;
        s4d_make(&c, r, B, T, D, N, cplx);
        for (k = 0; k < (size_t)(D * N); k++) c.p[3][k] = 0.3f * (float)lattn_rng_normal_d(r);   /* B_im too */
        for (k = 0; k < (size_t)D; k++) c.p[6][k] = -1.0f + 0.5f * (float)k;                      /* Δ ~ 0.4, 0.6: the modes move */
        dy = fnormal(r, c.ny); dht = fnormal(r, c.ns); y = fnew(c.ny);
        y64 = (double *)malloc(c.ny * sizeof(double)); h64 = (double *)malloc(c.ns * sizeof(double));
        in[0] = c.u;
        for (w = 0; w < 8; w++) in[w + 1] = c.p[w];
        in[9] = c.p[8];
        nin[0] = c.ny;
        for (w = 1; w < 7; w++) nin[w] = (size_t)(D * N);
        nin[7] = nin[8] = (size_t)D;
        nin[9] = c.ns;
        for (w = 0; w < 10; w++) ad[w] = (double *)malloc(nin[w] * sizeof(double));
        gr.dout = dy; gr.dht = dht;
        gr.dx64 = ad[0]; gr.dA_re64 = ad[1]; gr.dA_im64 = ad[2]; gr.dB_re64 = ad[3]; gr.dB_im64 = ad[4]; gr.dC_re64 = ad[5]; gr.dC_im64 = ad[6];
        gr.dlog_dt64 = ad[7]; gr.dDskip64 = ad[8]; gr.dh064 = ad[9];
        CHECK(lattn_s4d_ref_backward(ctx, &c.a, &gr) == LATTN_OK, "s4d backward: %s", lattn_ctx_error(ctx));
        for (w = 0; w < 10; w++) {
            double gmax = 0;
            if (!cplx && (w == 2 || w == 4 || w == 6)) continue;   /* real modes: the _im inputs are not read */
            for (k = 0; k < nin[w]; k++) gmax = fmax(gmax, fabs(ad[w][k]));
            for (k = 0; k < nin[w]; k += 1 + (size_t)(lattn_rng_next(r) % 2)) {
                double fd;
                FD_RICHARDSON(&in[w][k], s4d_loss(ctx, c.a, dy, dht, c.ny, c.ns, y64, h64, y), fd);
                fd_compare(fd, ad[w][k], gmax, &worst, &bad);
            }
        }
        CHECK(bad == 0, "s4d_ref_backward = central differences (%s modes): worst %.3g", cplx ? "complex" : "real", worst);
        for (w = 0; w < 10; w++) free(ad[w]);
        free(dy); free(dht); free(y); free(y64); free(h64);
        s4d_free(&c);
    }
    for (cplx = 0; cplx < 2; cplx++)
        for (ti = 0; ti < 7; ti++)
            for (ni = 0; ni < 2; ni++) {
                if (g_quick && Ts[ti] == 2048) continue;   /* before anything is allocated */
                const int64_t B = 2, T = Ts[ti], D = 3, N = Ns[ni];
                s4d_case c;
                float *dht, *dy, *want[10], *got[10], *again[10];
                size_t n[10];
                lattn_s4d_grads g = LATTN__ZERO;
                int k, th, same = 1;
                s4d_make(&c, r, B, T, D, N, cplx);
                if (T == 2048) c.p[6][0] = -7.0f;   /* Δ ~ 1e-3: |Ā| = 1 - 5e-4 */
                dy = fnormal(r, c.ny); dht = fnormal(r, c.ns);
                n[0] = c.ny;
                for (k = 1; k < 7; k++) n[k] = (size_t)(D * N);
                n[7] = n[8] = (size_t)D;
                n[9] = c.ns;
                if (combo % 3 == 2) c.a.h0 = NULL;
                g.dout = dy;
                if (combo % 2 == 1) g.dht = dht;
                combo++;
                for (k = 0; k < 10; k++) { want[k] = fnew(n[k]); got[k] = fnew(n[k]); again[k] = fnew(n[k]); }
                s4d_bw_run(ctx, &c.a, &g, want, n, 0);
                s4d_bw_run(ctx, &c.a, &g, got, n, 1);
                for (k = 0; k < 10; k++) {
                    size_t m = !cplx && (k == 2 || k == 4 || k == 6) ? 0 : n[k];
                    double e = rel_rms(got[k], want[k], m);
                    if (m < n[k]) CHECK(isnan(got[k][0]) && isnan(want[k][0]), "s4d backward, real modes: %s not written", names[k]);
                    CHECK(e <= 1e-5, "s4d_chunk_backward = s4d_ref_backward: %s (T = %lld, N = %lld, %s): %.3g", names[k], (long long)T,
                          (long long)N, cplx ? "complex" : "real", e);
                }
                for (th = 2; th <= 3 && ti == 5; th++) {   /* the same bits at any thread count; at 3 twice, in the kept workspace */
                    int rep;
                    ctx->n_threads = th;
                    ctx->keep_workspace = th == 3;
                    for (rep = 0; rep < 1 + (th == 3); rep++) {
                        s4d_bw_run(ctx, &c.a, &g, again, n, 1);
                        for (k = 0; k < 10; k++) same &= memcmp(got[k], again[k], n[k] * sizeof(float)) == 0;
                    }
                    ctx->n_threads = 1;
                    ctx->keep_workspace = 0;
                }
                lattn_ctx_trim(ctx);
                CHECK(same, "s4d_chunk_backward: the same bits at 1, 2 and 3 threads, and in the kept workspace (T = %lld, N = %lld)", (long long)T, (long long)N);
                for (k = 0; k < 10; k++) { free(want[k]); free(got[k]); free(again[k]); }
                free(dy); free(dht);
                s4d_free(&c);
            }
    {   /* the adjoint over 20000 tokens with |Ā| = 1 - 5e-6, carried between blocks by Ā^64 from double.
           Its error is a sum of roundings, so a single draw is noisy: over 40 draws dh0 had a mean
           relative RMS of 4.0e-7 and dA_re 6.1e-7 (sd 3.8e-7, worst 1.7e-6), where a plain float
           recurrence drifts to ~3e-6. The test takes the mean of 8 draws (4 with --quick) against
           1.5e-6 (over 6 standard deviations of that mean), and every draw against 5e-6. */
        const int64_t T = 20000, N = 16;
        const int draws = g_quick ? 4 : 8;
        double mean[2] = { 0, 0 }, worst = 0;
        int d;
        for (d = 0; d < draws; d++) {
            s4d_case c;
            float *dy, *got[10], *want[10];
            size_t n[10];
            lattn_s4d_grads g = LATTN__ZERO;
            int k;
            s4d_make(&c, r, 1, T, 1, N, 1);
            c.p[6][0] = -11.5f;
            c.a.h0 = NULL;
            dy = fnormal(r, c.ny);
            n[0] = c.ny;
            for (k = 1; k < 9; k++) n[k] = k < 7 ? (size_t)N : 1;
            n[9] = c.ns;
            for (k = 0; k < 10; k++) { want[k] = fnew(n[k]); got[k] = fnew(n[k]); }
            g.dout = dy;
            s4d_bw_run(ctx, &c.a, &g, want, n, 0);
            s4d_bw_run(ctx, &c.a, &g, got, n, 1);
            mean[0] += rel_rms(got[9], want[9], n[9]) / draws;
            mean[1] += rel_rms(got[1], want[1], n[1]) / draws;
            worst = fmax(worst, fmax(rel_rms(got[9], want[9], n[9]), rel_rms(got[1], want[1], n[1])));
            for (k = 0; k < 10; k++) { free(want[k]); free(got[k]); }
            free(dy);
            s4d_free(&c);
        }
        CHECK(mean[0] <= 1.5e-6 && mean[1] <= 1.5e-6 && worst <= 5e-6,
              "s4d_chunk_backward over 20000 tokens, |Ā| near 1, %d draws: mean dh0 %.3g, dA_re %.3g; worst %.3g", draws, mean[0], mean[1], worst);
    }
    {   /* refused without writing */
        s4d_case c;
        float d[4];
        lattn_s4d_grads g = LATTN__ZERO;
        int i, f;
        s4d_make(&c, r, 1, 4, 1, 1, 1);
        for (f = 0; f < 2; f++) {
            lattn_status (*bw)(lattn_ctx *, const lattn_s4d_args *, const lattn_s4d_grads *) = f ? lattn_s4d_chunk_backward : lattn_s4d_ref_backward;
            for (i = 0; i < 4; i++) d[i] = NAN;
            g.dx = d; g.dout = NULL;
            CHECK(bw(ctx, &c.a, NULL) == LATTN_E_NULL, "s4d backward: grads NULL");
            CHECK(bw(ctx, &c.a, &g) == LATTN_E_NULL, "s4d backward: dout NULL");
            g.dout = c.u; c.a.N = -1;
            CHECK(bw(ctx, &c.a, &g) == LATTN_E_SHAPE, "s4d backward: N < 0");
            c.a.N = 1;
            for (i = 0; i < 4; i++) if (!isnan(d[i])) break;
            CHECK(i == 4, "s4d %s backward: nothing written by a refused call", f ? "chunk" : "ref");
        }
        s4d_free(&c);
    }
}
/* lattn_la_chunk_backward against lattn_la_ref_backward: every gate kind x every feature map (tied
   and untied) x normalised or not, over T = 0, 1, C - 1, C, C + 1, 2C + 3, B = 2 or variable lengths,
   h0, dht and dzt set, K and V not multiples of the vector width; outputs NaN-poisoned; the same bits
   at 1, 2 and 3 threads; strong gates (the element-wise chunks); the identities between gate kinds. */
static void la_bw_run(lattn_ctx *ctx, const lattn_la_args *a, const lattn_la_grads *g0, float *const *out, const size_t *n, int fast) {
    lattn_la_grads g = *g0;
    int w;
    for (w = 0; w < 11; w++) poison(out[w], n[w]);
    g.dq = out[0]; g.dk = out[1]; g.dv = out[2]; g.dh0 = out[3]; g.dgk = a->gk ? out[4] : NULL; g.dg = a->g ? out[5] : NULL;
    g.dz0 = a->normalize ? out[6] : NULL;
    if (a->fmap_w) { g.dfmap_w = out[7]; g.dfmap_b = out[8]; }
    if (a->fmap_wk) { g.dfmap_wk = out[9]; g.dfmap_bk = out[10]; }
    CHECK((fast ? lattn_la_chunk_backward : lattn_la_ref_backward)(ctx, a, &g) == LATTN_OK, "la %s backward: %s", fast ? "chunk" : "ref",
          lattn_ctx_error(ctx));
}
/* A gate gradient's error. The chunked form gets dg from the identity dg = Σ q⊙dq - Σ k⊙dk (reverse
   cumulative sums, as fla does), whose float32 terms cancel where the decays are strong and dg is
   small: its error is measured against the size of those terms, ||got - want|| / max(||want||,
   ||m||) with m = Σ over `per` keys of |q dq| + |k dk| (per = K for a per-head gate, 1 per key). */
static double gate_grad_err(const float *got, const float *want, size_t n, const float *q, const float *dq, const float *k, const float *dk, int64_t per) {
    double num = 0, den = 0, dm = 0;
    size_t i;
    int64_t j;
    for (i = 0; i < n; i++) {
        double m = 0;
        for (j = 0; j < per; j++) m += fabs((double)q[i * per + j] * dq[i * per + j]) + fabs((double)k[i * per + j] * dk[i * per + j]);
        num += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        den += (double)want[i] * want[i];
        dm += m * m;
    }
    return n ? sqrt(num / fmax(fmax(den, dm), 1e-300)) : 0.0;
}
/* Every gradient of a fast backward (`what`) against the double form's: rel_rms, the gate gradients
   by gate_grad_err; the case's description after it. */
static void la_bw_check(float *const *got, float *const *want, const size_t *n, const float *q, const float *k, int64_t K, double tol,
                        const char *what, const char *desc) {
    static const char *const names[11] = { "dq", "dk", "dv", "dh0", "dgk", "dg", "dz0", "dfmap_w", "dfmap_b", "dfmap_wk", "dfmap_bk" };
    int w;
    for (w = 0; w < 11; w++) {
        const double err = w == 4 || w == 5 ? gate_grad_err(got[w], want[w], n[w], q, want[0], k, want[1], w == 5 ? K : 1)
                                            : rel_rms(got[w], want[w], n[w]);
        CHECK(err <= tol, "%s = la_ref_backward: %s (%s): %.3g", what, names[w], desc, err);
    }
}
static void test_la_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const char *const gates[7] = { "none", "g", "gk", "g_gamma", "retnet", "strong gk", "strong g" };
    static const lattn_fmap maps[6] = { LATTN_FMAP_IDENTITY, LATTN_FMAP_RELU, LATTN_FMAP_ELU1, LATTN_FMAP_HADAMARD,
                                        LATTN_FMAP_HEDGEHOG, LATTN_FMAP_HEDGEHOG };
    static const char *const names[11] = { "dq", "dk", "dv", "dh0", "dgk", "dg", "dz0", "dfmap_w", "dfmap_b", "dfmap_wk", "dfmap_bk" };
    const int C = 16, Ts[6] = { 0, 1, 15, 16, 17, 35 };
    int gi, mi, nz, ti, combo = 0;
    for (gi = 0; gi < 7; gi++)
        for (mi = 0; mi < 6; mi++)
            for (nz = 0; nz < 2; nz++)
                for (ti = 0; ti < 6; ti++) {
                    const int strong = gi >= 5, vl = combo % 2;
                    const int64_t T = Ts[ti], B = vl ? 1 : 2, H = 2, K = 5 + 2 * (combo % 2), V = 3 + 6 * (combo / 2 % 2), N = vl ? 4 : B;
                    const lattn_fmap fm = maps[mi];
                    const int64_t Kf = lattn_fmap_width(fm, K), nwr = fm == LATTN_FMAP_HADAMARD ? 2 * K : K;
                    const size_t nq = (size_t)(B * T * H * K), nv = (size_t)(B * T * H * V), ns = (size_t)(N * H * Kf * V), nzs = (size_t)(N * H * Kf);
                    float *q, *k, *v, *h0, *gk, *gh, gg[2] = { -0.3f, -0.05f }, *z0, *fw, *fb, *fwk, *fbk, *dout, *dht, *dzt;
                    float *want[11], *got[11], *again[11];
                    char desc[128];
                    size_t n[11];
                    int64_t off[5];
                    lattn_la_args a = LATTN__ZERO;
                    lattn_la_grads g = LATTN__ZERO;
                    int w, th, same = 1;
                    double tol = strong || nz ? 1e-4 : 1e-5;
                    if (nz && fm != LATTN_FMAP_ELU1 && fm != LATTN_FMAP_HEDGEHOG) continue;
                    if ((gi == 2 || gi == 5) && fm == LATTN_FMAP_HEDGEHOG) continue;
                    if (g_quick && ti % 2 == 1 && ti != 5) continue;
                    if (ti != 5 && mi > 0 && (combo++ % 3) != 0) continue;   /* every map at the long T, a third of the rest */
                    combo++;
                    off[0] = 0; off[1] = T / 3; off[2] = T / 3; off[3] = T / 3 + (T + 1) / 2; off[4] = T;   /* one empty sequence */
                    q = fnormal(r, nq); k = fnormal(r, nq); v = fnormal(r, nv); h0 = fnormal(r, ns);
                    gk = frand(r, nq, strong ? -6.0f : -0.6f, strong ? -1.0f : -0.01f);
                    gh = frand(r, (size_t)(B * T * H), gi == 6 ? -8.0f : -0.6f, gi == 6 ? -1.5f : -0.01f);
                    z0 = frand(r, nzs, 0.5f, 2.0f); fw = frand(r, (size_t)(nwr * K), -0.5f, 0.5f); fb = frand(r, (size_t)nwr, -0.3f, 0.3f);
                    fwk = frand(r, (size_t)(nwr * K), -0.5f, 0.5f); fbk = frand(r, (size_t)nwr, -0.3f, 0.3f);
                    dout = fnormal(r, nv); dht = fnormal(r, ns); dzt = fnormal(r, nzs);
                    if (nz) { size_t i; for (i = 0; i < nq; i++) { q[i] *= 0.5f; k[i] *= 0.5f; } }
                    a.B = B; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.h0 = h0; a.fmap = fm; a.chunk = C;
                    if (fm == LATTN_FMAP_HADAMARD || fm == LATTN_FMAP_HEDGEHOG) { a.fmap_w = fw; a.fmap_b = fb; }
                    if (mi == 5) { a.fmap_wk = fwk; a.fmap_bk = fbk; }
                    if (nz) { a.normalize = 1; a.z0 = z0; }
                    if (vl) { a.offsets = off; a.n_seqs = 4; }
                    if (gi == 1 || gi == 6) a.g = gh;
                    if (gi == 2 || gi == 5) a.gk = gk;
                    if (gi == 3) a.g_gamma = gg;
                    if (gi == 4) a.retnet_decay = 1;
                    n[0] = n[1] = nq; n[2] = nv; n[3] = ns; n[4] = a.gk ? nq : 0; n[5] = a.g ? (size_t)(B * T * H) : 0; n[6] = nz ? nzs : 0;
                    n[7] = a.fmap_w ? (size_t)(nwr * K) : 0; n[8] = a.fmap_w ? (size_t)nwr : 0;
                    n[9] = a.fmap_wk ? (size_t)(nwr * K) : 0; n[10] = a.fmap_wk ? (size_t)nwr : 0;
                    for (w = 0; w < 11; w++) { want[w] = fnew(n[w]); got[w] = fnew(n[w]); again[w] = fnew(n[w]); }
                    g.dout = dout; g.dht = dht; g.dzt = nz ? dzt : NULL;
                    snprintf(desc, sizeof desc, "gate %s, map %d%s%s, T = %lld, %s", gates[gi], (int)fm, mi == 5 ? " untied" : "",
                             nz ? ", normalised" : "", (long long)T, vl ? "variable lengths" : "B = 2");
                    la_bw_run(ctx, &a, &g, want, n, 0);
                    la_bw_run(ctx, &a, &g, got, n, 1);
                    la_bw_check(got, want, n, q, k, K, tol, "la_chunk_backward", desc);
                    {   /* the forward's checkpoints: _chunk writes a->states (NaN-poisoned), _chunk_backward reads them */
                        lattn_la_args as = a;
                        const size_t nst = (size_t)(N * H * ((T + C - 1) / C + 1) * Kf * (V + nz));
                        float *st = fnew(nst + 1), *o = fnew(nv + 1);
                        as.states = st;
                        as.o = o;
                        CHECK(lattn_la_chunk(ctx, &as) == LATTN_OK, "la_chunk writing its states: %s", lattn_ctx_error(ctx));
                        la_bw_run(ctx, &as, &g, again, n, 1);
                        la_bw_check(again, want, n, q, k, K, tol, "la_chunk_backward from the forward's states", desc);
                        free(st);
                        free(o);
                    }
                    for (th = 2; th <= 3 && ti == 5; th++) {   /* the same bits at any thread count; at 3 twice, in the kept workspace */
                        int rep;
                        ctx->n_threads = th;
                        ctx->keep_workspace = th == 3;
                        for (rep = 0; rep < 1 + (th == 3); rep++) {
                            la_bw_run(ctx, &a, &g, again, n, 1);
                            for (w = 0; w < 11; w++) same &= memcmp(got[w], again[w], n[w] * sizeof(float)) == 0;
                        }
                        ctx->n_threads = 1;
                        ctx->keep_workspace = 0;
                    }
                    lattn_ctx_trim(ctx);
                    CHECK(same, "la_chunk_backward: the same bits at 1, 2 and 3 threads, and in the kept workspace (gate %s, map %d)", gates[gi], (int)fm);
                    for (w = 0; w < 11; w++) { free(want[w]); free(got[w]); free(again[w]); }
                    free(q); free(k); free(v); free(h0); free(gk); free(gh); free(z0); free(fw); free(fb); free(fwk); free(fbk);
                    free(dout); free(dht); free(dzt);
                }
    {   /* identities: linear attention = GLA with zero gates; a fixed decay = Simple GLA with that gate everywhere; default chunk */
        const int64_t T = 150, H = 2, K = 9, V = 11;
        const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V), ns = (size_t)(H * K * V);
        float *q = fnormal(r, nq), *k = fnormal(r, nq), *v = fnormal(r, nv), *dout = fnormal(r, nv), *dht = fnormal(r, ns);
        float *zero = frand(r, nq, 0.0f, 0.0f), *gh = fnew((size_t)(T * H)), gg[2] = { -0.2f, -0.01f };
        float *x[11], *y[11];
        size_t n[11] = { 0 };
        lattn_la_args a = LATTN__ZERO, b;
        lattn_la_grads g = LATTN__ZERO;
        int64_t i;
        int w;
        for (i = 0; i < T * H; i++) gh[i] = gg[i % H];
        n[0] = n[1] = n[4] = nq; n[2] = nv; n[3] = ns; n[5] = (size_t)(T * H);
        for (w = 0; w < 11; w++) { x[w] = fnew(n[w]); y[w] = fnew(n[w]); }
        a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v;
        g.dout = dout; g.dht = dht;
        b = a;
        b.gk = zero;
        la_bw_run(ctx, &a, &g, x, n, 1);
        la_bw_run(ctx, &b, &g, y, n, 1);
        for (w = 0; w < 4; w++) CHECK(rel_rms(y[w], x[w], n[w]) <= 1e-6, "la_chunk_backward: GLA with zero gates = linear attention (%s)", names[w]);
        a.g_gamma = gg;
        b.gk = NULL;
        b.g = gh;
        la_bw_run(ctx, &a, &g, x, n, 1);
        la_bw_run(ctx, &b, &g, y, n, 1);
        for (w = 0; w < 4; w++) CHECK(rel_rms(y[w], x[w], n[w]) <= 1e-6, "la_chunk_backward: Simple GLA with constant gates = the fixed decay (%s)", names[w]);
        for (w = 0; w < 11; w++) { free(x[w]); free(y[w]); }
        free(q); free(k); free(v); free(dout); free(dht); free(zero); free(gh);
    }
    {   /* per-key gates below LATTN_LOG_GATE_MIN are clamped and get dgk = 0, whole vectors and a tail (K = 19) */
        const int64_t T = 40, H = 2, K = 19, V = 5;
        const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V);
        float *q = fnormal(r, nq), *k = fnormal(r, nq), *v = fnormal(r, nv), *dout = fnormal(r, nv), *gk = frand(r, nq, -0.5f, -0.01f);
        float *x[11], *y[11];
        size_t n[11] = { 0 }, i;
        lattn_la_args a = LATTN__ZERO;
        lattn_la_grads g = LATTN__ZERO;
        int w, zeros = 1;
        for (i = 0; i < nq; i += 5) gk[i] = 2.0f * LATTN_LOG_GATE_MIN;
        n[0] = n[1] = n[4] = nq; n[2] = nv; n[3] = (size_t)(H * K * V);
        for (w = 0; w < 11; w++) { x[w] = fnew(n[w]); y[w] = fnew(n[w]); }
        a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.gk = gk; a.chunk = 16;
        g.dout = dout;
        la_bw_run(ctx, &a, &g, x, n, 0);
        la_bw_run(ctx, &a, &g, y, n, 1);
        la_bw_check(y, x, n, q, k, K, 1e-4, "la_chunk_backward", "clamped per-key gates, K = 19");
        for (i = 0; i < nq; i += 5) zeros &= x[4][i] == 0.0f && y[4][i] == 0.0f;
        CHECK(zeros, "la backward: a clamped per-key gate gets dgk = 0 (ref and chunk, K = 19)");
        for (w = 0; w < 11; w++) { free(x[w]); free(y[w]); }
        free(q); free(k); free(v); free(dout); free(gk);
    }
    {   /* the forward's states from value blocks (V = 150 on 3 threads: three blocks, the normaliser's
           column from the last), the default chunk, the plain and the gated paths; normalised as in
           the grid above: a positive map (ELU + 1) and q, k halved, so no denominator nears 0 */
        const int64_t T = 77, H = 1, K = 7, V = 150;
        const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V);
        float *q = fnormal(r, nq), *k = fnormal(r, nq), *v = fnormal(r, nv), *dout = fnormal(r, nv), *qh = fnew(nq), *kh = fnew(nq);
        float *gh = frand(r, (size_t)(T * H), -0.5f, -0.01f), *gk = frand(r, nq, -0.5f, -0.01f), gg[1] = { -0.1f };
        float *x[11], *y[11], *o = fnew(nv);
        char desc[64];
        size_t n[11], i;
        int gi, nz, w;
        for (i = 0; i < nq; i++) { qh[i] = 0.5f * q[i]; kh[i] = 0.5f * k[i]; }
        for (gi = 0; gi < 3; gi++)
            for (nz = 0; nz < 2; nz++) {
                const int64_t nc = (T + 31) / 32;          /* the cpu profile's default chunk */
                float *st = fnew((size_t)(H * (nc + 1) * K * (V + nz)));
                lattn_la_args a = LATTN__ZERO, as;
                lattn_la_grads g = LATTN__ZERO;
                a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = nz ? qh : q; a.k = nz ? kh : k; a.v = v; a.normalize = nz;
                if (nz) a.fmap = LATTN_FMAP_ELU1;
                if (gi == 0) a.g_gamma = gg;
                if (gi == 1) a.g = gh;
                if (gi == 2) a.gk = gk;
                n[0] = n[1] = nq; n[2] = nv; n[3] = (size_t)(H * K * V); n[4] = gi == 2 ? nq : 0; n[5] = gi == 1 ? (size_t)(T * H) : 0;
                n[6] = nz ? (size_t)(H * K) : 0; n[7] = n[8] = n[9] = n[10] = 0;
                for (w = 0; w < 11; w++) { x[w] = fnew(n[w] + 1); y[w] = fnew(n[w] + 1); }
                g.dout = dout;
                la_bw_run(ctx, &a, &g, x, n, 0);
                as = a;
                as.states = st;
                as.o = o;
                ctx->n_threads = 3;
                CHECK(lattn_la_chunk(ctx, &as) == LATTN_OK, "la_chunk writing its states in value blocks: %s", lattn_ctx_error(ctx));
                ctx->n_threads = 1;
                la_bw_run(ctx, &as, &g, y, n, 1);
                snprintf(desc, sizeof desc, "gate %d%s", gi, nz ? ", normalised" : "");
                la_bw_check(y, x, n, a.q, a.k, K, nz ? 1e-4 : 1e-5, "la_chunk_backward from states written in value blocks", desc);
                for (w = 0; w < 11; w++) { free(x[w]); free(y[w]); }
                free(st);
            }
        free(q); free(k); free(qh); free(kh); free(v); free(dout); free(gh); free(gk); free(o);
    }
    {   /* refused without writing */
        float q[8], dq[8];
        lattn_la_args a = LATTN__ZERO;
        lattn_la_grads g = LATTN__ZERO;
        int i;
        for (i = 0; i < 8; i++) { q[i] = 0.5f; dq[i] = NAN; }
        a.B = 1; a.T = 2; a.H = 1; a.K = 4; a.V = 4; a.q = a.k = a.v = q;
        g.dq = dq;
        CHECK(lattn_la_chunk_backward(ctx, &a, NULL) == LATTN_E_NULL && lattn_la_chunk_backward(ctx, &a, &g) == LATTN_E_NULL,
              "la_chunk_backward: grads or dout NULL");
        g.dout = q;
        a.chunk = -1;
        CHECK(lattn_la_chunk_backward(ctx, &a, &g) == LATTN_E_SHAPE, "la_chunk_backward: chunk -1 refused");
        for (i = 0; i < 8; i++) if (!isnan(dq[i])) break;
        CHECK(i == 8, "la_chunk_backward: nothing written by a refused call");
    }
}
/* The fixed-decay backward on the trn2 tiler (spec sbuf_tiler.md §5.3): the gradients of
   lattn_la_ref_backward (C = 32, 64, 128; streaming and chunk-parallel; ragged chunks; variable
   lengths with an empty sequence; RetNet's decays), NaN-poisoned outputs, the same bits at 1-3
   threads; 51 instructions per (head, chunk) and 68 with the forward, §5.4's HBM bytes, at most 8
   PSUM banks; the seed's verdicts at the Laplace layer's size (C = 32, 64 over the graph capacity,
   C = 128 fits); what it does not take is refused without writing. */
static void tb_run(lattn_ctx *ctx, const lattn_la_args *a, const lattn_la_grads *g0, float *const *out, const size_t *n, int tiled) {
    lattn_la_grads g = *g0;
    int w;
    for (w = 0; w < 4; w++) poison(out[w], n[w]);
    g.dq = out[0]; g.dk = out[1]; g.dv = out[2]; g.dh0 = out[3];
    CHECK((tiled ? lattn_la_chunk_backward : lattn_la_ref_backward)(ctx, a, &g) == LATTN_OK, "la %s backward: %s", tiled ? "tiled" : "ref",
          lattn_ctx_error(ctx));
}
static void test_tiled_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const char *const names[4] = { "dq", "dk", "dv", "dh0" };
    lattn_dev_profile tp = *lattn_profile_trn2();
    const lattn_dev_profile *keep = ctx->profile;
    int ci, sch, vl, k;
    tp.spill = 1; tp.stream_bytes = 2;
    for (vl = 0; vl < 2; vl++)
        for (ci = 0; ci < 3; ci++)
            for (sch = 0; sch < 2; sch++) {
                const int C = 32 << ci;
                const int64_t T = vl ? 77 : 300, H = vl ? 3 : 2, K = vl ? 20 : 96, V = vl ? 30 : 192;
                la_case c;
                float gam[3] = { -0.05f, -0.3f, -0.01f }, *dout, *dht, *want[4], *got[4], *again[4];
                size_t n[4];
                lattn_la_grads g = LATTN__ZERO;
                int th, same = 1;
                if (g_quick && vl == 0 && ci < 2) continue;   /* before anything is allocated */
                la_make(&c, r, 1, T, H, K, V, LATTN_FMAP_IDENTITY, 0, 1, vl);
                if (vl) c.a.retnet_decay = 1; else c.a.g_gamma = gam;
                c.a.chunk = C; c.a.schedule = sch ? LATTN_SCHED_CHUNK_PARALLEL : LATTN_SCHED_STREAMING;
                dout = fnormal(r, c.no); dht = fnormal(r, c.ns);
                n[0] = n[1] = (size_t)(T * H * K); n[2] = c.no; n[3] = c.ns;
                for (k = 0; k < 4; k++) { want[k] = fnew(n[k]); got[k] = fnew(n[k]); again[k] = fnew(n[k]); }
                g.dout = dout; g.dht = dht;
                ctx->profile = keep;
                tb_run(ctx, &c.a, &g, want, n, 0);
                ctx->profile = &tp;
                tb_run(ctx, &c.a, &g, got, n, 1);
                for (k = 0; k < 4; k++)
                    CHECK(rel_rms(got[k], want[k], n[k]) <= 1e-5, "tiled la backward on trn2 = la_ref_backward: %s (C = %d, %s, %s): %.3g",
                          names[k], C, sch ? "chunk-parallel" : "streaming", vl ? "variable lengths, RetNet decays" : "T = 300", rel_rms(got[k], want[k], n[k]));
                for (th = 2; th <= 3; th++) {
                    ctx->n_threads = th;
                    tb_run(ctx, &c.a, &g, again, n, 1);
                    for (k = 0; k < 4; k++) same &= same_bits(got[k], again[k], n[k]);
                    ctx->n_threads = 1;
                }
                CHECK(same, "tiled la backward: the same bits at 1, 2 and 3 threads (C = %d)", C);
                for (k = 0; k < 4; k++) { free(want[k]); free(got[k]); free(again[k]); }
                free(dout); free(dht);
                la_free(&c);
            }
    {   /* the counts: T = 256 = 2 chunks of 128, H = 2, K = 96, V = 192, h0 and dht */
        const int64_t T = 256, H = 2, K = 96, V = 192, N = 2;
        la_case c;
        float gam[2] = { -0.05f, -0.3f }, *dout, *dht, *gr[4], *o;
        size_t n[4];
        lattn_la_grads g = LATTN__ZERO;
        lattn_tiler_stats fw, all;
        la_make(&c, r, 1, T, H, K, V, LATTN_FMAP_IDENTITY, 0, 1, 0);
        c.a.g_gamma = gam; c.a.chunk = 128;
        dout = fnormal(r, c.no); dht = fnormal(r, c.ns); o = fnew(c.no);
        n[0] = n[1] = (size_t)(T * H * K); n[2] = c.no; n[3] = c.ns;
        for (k = 0; k < 4; k++) gr[k] = fnew(n[k]);
        ctx->profile = &tp;
        memset(&ctx->stats, 0, sizeof ctx->stats);
        c.a.o = o;
        CHECK(lattn_la_chunk(ctx, &c.a) == LATTN_OK, "trn2 forward: %s", lattn_ctx_error(ctx));
        fw = ctx->stats;
        c.a.o = NULL;
        g.dout = dout; g.dht = dht;
        memset(&ctx->stats, 0, sizeof ctx->stats);
        tb_run(ctx, &c.a, &g, gr, n, 1);
        all = ctx->stats;
        CHECK(fw.instructions == (uint64_t)(16 * H * N + 8 * H) && all.instructions == (uint64_t)(68 * H * N + 17 * H) &&
              all.instructions - fw.instructions == (uint64_t)(52 * H * N + 9 * H),
              "trn2 C = 128: 16 forward + F14 + 51 backward = 68 instructions per (head, chunk); setup 8 + 9 per head (%llu, %llu)",
              (unsigned long long)fw.instructions, (unsigned long long)all.instructions);
        CHECK(all.dma_in_bytes - fw.dma_in_bytes == (uint64_t)(T * H * (2 * K + 2 * V) * 2 + (N + 1) * H * K * V * 4) &&
              all.dma_out_bytes - fw.dma_out_bytes == (uint64_t)(N * H * K * V * 4 + T * H * (2 * K + V) * 2 + H * K * V * 4),
              "§5.4: the backward loads Q, K, V, dO (bf16), the checkpoints and dht, stores dQ, dK, dV (bf16) and dh0; F14 stores the checkpoints");
        CHECK(all.psum_peak_banks <= 8 && all.spill_bytes == 0 && all.unrolled_steps == (uint64_t)(2 * H * N),
              "the backward uses %llu of 8 PSUM banks, spills nothing, a body per (head, chunk) each way", (unsigned long long)all.psum_peak_banks);
        for (k = 0; k < 4; k++) free(gr[k]);
        free(dout); free(dht); free(o);
        la_free(&c);
    }
    if (!g_quick) {   /* spec §6.3/§6.4: the Laplace layer (T = 2048, H = 16, dk = 96, dv = 192), chunk-parallel, forward + backward */
        const int64_t T = 2048, H = 16, K = 96, V = 192;
        la_case c;
        float g16[16], *dout, *gr[4];
        size_t n[4];
        lattn_la_grads g = LATTN__ZERO;
        la_make(&c, r, 1, T, H, K, V, LATTN_FMAP_IDENTITY, 0, 0, 0);
        lattn_retention_decay(16, g16);
        c.a.g_gamma = g16; c.a.schedule = LATTN_SCHED_CHUNK_PARALLEL;
        dout = fnormal(r, c.no);
        n[0] = n[1] = (size_t)(T * H * K); n[2] = c.no; n[3] = c.ns;
        for (k = 0; k < 4; k++) gr[k] = fnew(n[k]);
        g.dout = dout;
        ctx->profile = &tp;
        for (ci = 0; ci < 3; ci++) {
            const int C = 32 << ci;
            const int64_t N = T / C;
            c.a.chunk = C;
            memset(&ctx->stats, 0, sizeof ctx->stats);
            tb_run(ctx, &c.a, &g, gr, n, 1);
            CHECK(ctx->stats.unrolled_steps == (uint64_t)(2 * N) && ctx->stats.instructions == (uint64_t)(72 * H * N + 17 * H) &&
                  ctx->stats.spill_bytes == 0 && lattn_tiler_graph_overflow(&ctx->stats, &tp) == (C < 128),
                  "Laplace layer, trn2, C = %d: %llu bodies, %llu instructions forward + backward: %s", C,
                  (unsigned long long)ctx->stats.unrolled_steps, (unsigned long long)ctx->stats.instructions,
                  C < 128 ? "over the graph capacity" : "fits");
        }
        for (k = 0; k < 4; k++) free(gr[k]);
        free(dout);
        la_free(&c);
    }
    {   /* refused without writing: per-key gates, the normaliser, a chunk over the partitions, a gpu profile */
        la_case c;
        float gam[2] = { -0.05f, -0.3f }, *gk, *d, *dout;
        lattn_la_grads g = LATTN__ZERO;
        size_t i;
        la_make(&c, r, 1, 40, 2, 8, 8, LATTN_FMAP_IDENTITY, 0, 0, 0);
        gk = frand(r, (size_t)(40 * 2 * 8), -0.5f, -0.01f); d = fnew((size_t)(40 * 2 * 8)); dout = fnormal(r, c.no);
        poison(d, (size_t)(40 * 2 * 8));
        g.dout = dout; g.dq = g.dk = g.dv = d;
        ctx->profile = &tp;
        c.a.gk = gk;
        CHECK(lattn_la_chunk_backward(ctx, &c.a, &g) == LATTN_E_UNSUPPORTED, "trn2 backward: per-key gates unsupported");
        c.a.gk = NULL; c.a.g_gamma = gam; c.a.normalize = 1;
        CHECK(lattn_la_chunk_backward(ctx, &c.a, &g) == LATTN_E_UNSUPPORTED, "trn2 backward: the normaliser unsupported");
        c.a.normalize = 0; c.a.chunk = 256;
        CHECK(lattn_la_chunk_backward(ctx, &c.a, &g) == LATTN_E_UNSUPPORTED, "trn2 backward: a chunk over 128 partitions unsupported");
        c.a.chunk = 0;
        ctx->profile = lattn_profile_h100();
        CHECK(lattn_la_chunk_backward(ctx, &c.a, &g) == LATTN_E_UNSUPPORTED, "h100: no tiled backward");
        for (i = 0; i < (size_t)(40 * 2 * 8); i++) if (!isnan(d[i])) break;
        CHECK(i == (size_t)(40 * 2 * 8), "tiled backward: nothing written by a refused call");
        free(gk); free(d); free(dout);
        la_free(&c);
    }
    ctx->profile = keep;
}
/* ℒ = Σ dout·o + Σ dht·ht from the GDR+I _ref's float64 outputs. */
static double gdr_loss(lattn_ctx *ctx, lattn_gdr_args a, const float *dout, const float *dht, size_t no, size_t ns, double *o64, double *h64,
                       float *o) {
    double l = 0;
    size_t i;
    a.o = o; a.ht = NULL; a.o64 = o64; a.ht64 = h64;
    lattn_gdr_ref(ctx, &a);
    for (i = 0; i < no; i++) l += (double)dout[i] * o64[i];
    for (i = 0; i < ns; i++) l += (double)dht[i] * h64[i];
    return l;
}
/* A delta-rule backward refuses without writing: grads or dout NULL, H = -1, β outside [0, 1], and
   (the chunked form, which reads it) a chunk outside [0, LATTN_MAX_CHUNK]. */
typedef lattn_status (*gdr_backward_fn)(lattn_ctx *, const lattn_gdr_args *, const lattn_gdr_grads *);
static void gdr_backward_refusals(lattn_ctx *ctx, gdr_backward_fn fn, const char *name) {
    float v[4] = { 0.5f, 0.5f, 0.5f, 0.5f }, d[4], bad = 0.5f;
    lattn_gdr_args a;
    lattn_gdr_grads g = LATTN__ZERO;
    int i;
    for (i = 0; i < 4; i++) d[i] = NAN;
    memset(&a, 0, sizeof a);
    a.B = 1; a.T = 1; a.H = 1; a.K = 2; a.V = 2; a.q = a.k = a.v = v; a.beta = &bad;
    g.dq = d;
    CHECK(fn(ctx, &a, NULL) == LATTN_E_NULL, "%s: grads NULL", name);
    CHECK(fn(ctx, &a, &g) == LATTN_E_NULL, "%s: dout NULL", name);
    g.dout = v;
    if (fn == lattn_gdr_chunk_backward) {
        a.chunk = -1;
        CHECK(fn(ctx, &a, &g) == LATTN_E_SHAPE, "%s: chunk -1", name);
        a.chunk = LATTN_MAX_CHUNK + 1;
        CHECK(fn(ctx, &a, &g) == LATTN_E_SHAPE, "%s: chunk over LATTN_MAX_CHUNK", name);
        a.chunk = 0;
    }
    a.H = -1;
    CHECK(fn(ctx, &a, &g) == LATTN_E_SHAPE, "%s: H = -1", name);
    a.H = 1;
    bad = 1.5f;
    CHECK(fn(ctx, &a, &g) == LATTN_E_DOMAIN, "%s: beta outside [0, 1]", name);
    for (i = 0; i < 4; i++) if (!isnan(d[i])) break;
    CHECK(i == 4, "%s: nothing written by a refused call", name);
}
/* lattn_gdr_ref_backward against central differences of lattn_gdr_ref: the delta rule; Gated
   DeltaNet with the in-kernel l2norm; per-key gates with β in [0, 2]; the full core (a separate
   erase key, a write scale, two injections) over variable lengths; then fla's naive recurrences
   under float64 autograd (delta rule, Gated DeltaNet, KDA: q, k raw, normalised in the graph). */
static void test_gdr_backward(lattn_ctx *ctx, lattn_rng *r) {
    int var, ci;
    for (var = 0; var < 4; var++) {
        static const int64_t off[4] = { 0, 4, 4, 9 };
        const int vl = var == 3;
        const int64_t B = vl ? 1 : 2, T = 9, H = 2, K = 4, V = 3, L = var == 3 ? 2 : 0, N = vl ? 3 : B;
        const size_t nq = (size_t)(B * T * H * K), nv = (size_t)(B * T * H * V), nh = (size_t)(B * T * H), ns = (size_t)(N * H * K * V);
        float *in[12], *dout = fnormal(r, nv), *dht = fnormal(r, ns), *o = fnew(nv);
        double *ad[12], *o64 = (double *)malloc(nv * sizeof(double)), *h64 = (double *)malloc(ns * sizeof(double)), worst = 0;
        size_t nin[12], c;
        lattn_gdr_args a;
        lattn_gdr_grads gr = LATTN__ZERO;
        int w, bad = 0;
        memset(&a, 0, sizeof a);
        nin[0] = nin[1] = nq; nin[2] = nv; nin[3] = nh; nin[4] = nh; nin[5] = nq; nin[6] = nq; nin[7] = nh;
        nin[8] = nh * (size_t)L; nin[9] = nq * (size_t)L; nin[10] = nv * (size_t)L; nin[11] = ns;
        in[0] = fnormal(r, nq); in[1] = fnormal(r, nq); in[2] = fnormal(r, nv);
        in[3] = frand(r, nh, 0.1f, var == 2 ? 1.8f : 0.9f);
        in[4] = frand(r, nh, -1.0f, -0.05f); in[5] = frand(r, nq, -1.0f, -0.05f);
        in[6] = fnormal(r, nq); in[7] = frand(r, nh, 0.2f, 1.2f);
        in[8] = fnormal(r, nin[8] + 1); in[9] = fnormal(r, nin[9] + 1); in[10] = fnormal(r, nin[10] + 1); in[11] = fnormal(r, ns);
        a.B = B; a.T = T; a.H = H; a.K = K; a.V = V; a.q = in[0]; a.k = in[1]; a.v = in[2]; a.beta = in[3]; a.h0 = in[11];
        a.l2norm = var > 0; a.allow_neg_eigval = var == 2;
        if (var == 1 || var == 3) a.g = in[4];
        if (var == 2) a.gk = in[5];
        if (var == 3) { a.e = in[6]; a.c = in[7]; a.L = L; a.inj_b = in[8]; a.inj_kap = in[9]; a.inj_d = in[10]; a.offsets = off; a.n_seqs = 3; }
        for (w = 0; w < 12; w++) ad[w] = (double *)malloc((nin[w] + 1) * sizeof(double));
        gr.dout = dout; gr.dht = dht;
        gr.dq64 = ad[0]; gr.dk64 = ad[1]; gr.dv64 = ad[2]; gr.dbeta64 = ad[3]; gr.dg64 = ad[4]; gr.dgk64 = ad[5]; gr.de64 = ad[6];
        gr.dc64 = ad[7]; gr.dinj_b64 = ad[8]; gr.dinj_kap64 = ad[9]; gr.dinj_d64 = ad[10]; gr.dh064 = ad[11];
        CHECK(lattn_gdr_ref_backward(ctx, &a, &gr) == LATTN_OK, "gdr backward: %s", lattn_ctx_error(ctx));
        for (w = 0; w < 12; w++) {
            const int used = w < 4 || w == 11 || (w == 4 && a.g) || (w == 5 && a.gk) || (w >= 6 && var == 3);
            double gmax = 0;
            if (!used) continue;
            for (c = 0; c < nin[w]; c++) gmax = fmax(gmax, fabs(ad[w][c]));
            for (c = 0; c < nin[w]; c += 1 + (size_t)(lattn_rng_next(r) % 3)) {
                double fd;
                FD_RICHARDSON(&in[w][c], gdr_loss(ctx, a, dout, dht, nv, ns, o64, h64, o), fd);
                fd_compare(fd, ad[w][c], gmax, &worst, &bad);
            }
        }
        CHECK(bad == 0, "gdr_ref_backward = central differences (%s): worst %.3g",
              var == 0 ? "delta rule" : var == 1 ? "Gated DeltaNet, l2norm" : var == 2 ? "per-key gates, beta in [0, 2]" : "erase key, write scale, injections, variable lengths",
              worst);
        for (w = 0; w < 12; w++) { free(ad[w]); free(in[w]); }
        free(dout); free(dht); free(o); free(o64); free(h64);
    }
    for (ci = 0; ci < 6; ci++) {   /* fla's naive recurrences under float64 autograd */
        static const char *const kinds[3] = { "delta_rule", "gated_delta_rule", "kda" };
        static const char *const outs[6] = { "dq", "dk", "dv", "dbeta", "dg", "dh0" };
        char path[256];
        lattn_st_file f;
        const lattn_st_tensor *tq, *tv;
        lattn_gdr_args a;
        lattn_gdr_grads gr = LATTN__ZERO;
        double *got[6], *want[6];
        size_t n[6];
        float *x[6];
        int k2;
        snprintf(path, sizeof path, "tests/external/grad/%s_grad_%d.safetensors", kinds[ci / 2], ci % 2);
        if (lattn_st_load(ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        tq = lattn_st_find(&f, "q"); tv = lattn_st_find(&f, "v");
        memset(&a, 0, sizeof a);
        a.B = tq->shape[0]; a.T = tq->shape[1]; a.H = tq->shape[2]; a.K = tq->shape[3]; a.V = tv->shape[3]; a.l2norm = 1;
        x[0] = tensor_f32(&f, "q"); x[1] = tensor_f32(&f, "k"); x[2] = tensor_f32(&f, "v"); x[3] = tensor_f32(&f, "beta");
        x[4] = ci >= 2 ? tensor_f32(&f, "g") : NULL; x[5] = tensor_f32(&f, "h0");
        a.q = x[0]; a.k = x[1]; a.v = x[2]; a.beta = x[3]; a.h0 = x[5];
        if (ci / 2 == 1) a.g = x[4];
        if (ci / 2 == 2) a.gk = x[4];
        a.scale = strtod(lattn_st_meta(&f, "scale"), NULL);
        for (k2 = 0; k2 < 6; k2++) {
            want[k2] = lattn_st_find(&f, outs[k2]) ? tensor_f64(&f, outs[k2], &n[k2]) : NULL;
            got[k2] = want[k2] ? (double *)malloc(n[k2] * sizeof(double)) : NULL;
        }
        gr.dout = tensor_f32(&f, "do"); gr.dht = tensor_f32(&f, "dht");
        gr.dq64 = got[0]; gr.dk64 = got[1]; gr.dv64 = got[2]; gr.dbeta64 = got[3]; gr.dh064 = got[5];
        if (a.g) gr.dg64 = got[4];
        if (a.gk) gr.dgk64 = got[4];
        CHECK(lattn_gdr_ref_backward(ctx, &a, &gr) == LATTN_OK, "%s: %s", path, lattn_ctx_error(ctx));
        for (k2 = 0; k2 < 6; k2++)
            if (want[k2])
                CHECK(rel_rms_dd(got[k2], want[k2], n[k2]) <= 1e-12, "%s_grad_%d: %s = fla's float64 autograd (%.3g)", kinds[ci / 2], ci % 2,
                      outs[k2], rel_rms_dd(got[k2], want[k2], n[k2]));
        for (k2 = 0; k2 < 6; k2++) { free(got[k2]); free(want[k2]); free(x[k2]); }
        free((void *)gr.dout); free((void *)gr.dht);
        lattn_st_free(ctx, &f);
    }
    gdr_backward_refusals(ctx, lattn_gdr_ref_backward, "gdr_ref_backward");
}
/* lattn_gdr_chunk_backward (float32) against lattn_gdr_ref_backward (double): the delta rule; GDN
   with the l2norm; per-key gates with β in [0, 2]; the full core (erase key, write scale, two
   injections, variable lengths); per-head gates strong enough to end chunks early; per-key gates
   with an erase key and an injection; PRISM P2's mixer call (e = k, a write scale, per-key gates,
   two injections, no l2norm) at C = 16 and 64. T = 0, 1, C - 1, C, C + 1 and several chunks, K and V off the
   vector width, batch 2, nonzero h0 and dht, outputs NaN-poisoned; the same bits at 1 and 2 threads.
   Each case again from the forward's Ξ (a->xi, NaN-poisoned, written by _chunk at another chunk
   size; against _ref's Ξ to 1e-5), which the backward then reads instead of solving for it; and
   from the forward's Ξ and chunk-start states (a->states, NaN-poisoned, written by _chunk at the
   same chunk), which replace its pass over the states: they are read (poisoned again, the gradients
   turn NaN), except where the backward's chunks end early and the forward's do not (the strong
   per-head gates: the backward makes its own, and the gradients from the states still match). */
static void test_gdr_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const int64_t Ts[7] = { 0, 1, 15, 16, 17, 45, 130 };
    static const char *const names[12] = { "dq", "dk", "dv", "dbeta", "dg", "dgk", "de", "dc", "dinj_b", "dinj_kap", "dinj_d", "dh0" };
    int var, ti, nbad = 0;
    double worst = 0, worst_xi = 0;
    for (var = 0; var < 7; var++)
        for (ti = 0; ti < 7; ti++) {
            const int vl = var == 3, C = ti == 6 ? (var == 4 ? 0 : 64) : 16, th = 1 + (int)(ti % 2);
            const int64_t T = Ts[ti], B = vl ? 1 : 2, H = 2, K = 13, V = 11, L = var == 3 || var == 6 ? 2 : var == 5 ? 1 : 0, N = vl ? 3 : B;
            const int64_t off[4] = { 0, T / 3, T / 3, T };
            const size_t nq = (size_t)(B * T * H * K), nv = (size_t)(B * T * H * V), nh = (size_t)(B * T * H), ns = (size_t)(N * H * K * V);
            float *in[12], *dout = fnormal(r, nv + 1), *dht = fnormal(r, ns), *got[12], *got2[12], *got3[12];
            float *xi = fnew(nv + 1), *xr = fnew(nv + 1), *o = fnew(nv + 1), *xs = fnew(nv + 1), *got4[12];
            const int Cf = C > 0 ? C : lattn_ctx_profile(ctx)->default_chunk;
            const int64_t nst = ((vl ? T - T / 3 : T) + Cf - 1) / Cf + 1;
            const size_t nsl = (size_t)(N * H * nst * K * V);
            float *sts = fnew(nsl + 1);
            double *want[12];
            size_t nin[12], i;
            lattn_gdr_args a;
            lattn_gdr_grads gw = LATTN__ZERO, gc = LATTN__ZERO;
            int w;
            memset(&a, 0, sizeof a);
            nin[0] = nin[1] = nq; nin[2] = nv; nin[3] = nh; nin[4] = nh; nin[5] = nq; nin[6] = nq; nin[7] = nh;
            nin[8] = nh * (size_t)L; nin[9] = nq * (size_t)L; nin[10] = nv * (size_t)L; nin[11] = ns;
            in[0] = fnormal(r, nq + 1); in[1] = fnormal(r, nq + 1); in[2] = fnormal(r, nv + 1);
            in[3] = frand(r, nh + 1, 0.0f, var == 2 ? 2.0f : 1.0f);
            in[4] = frand(r, nh + 1, var == 4 ? -3.0f : -0.4f, var == 4 ? -0.5f : -0.01f);
            in[5] = frand(r, nq + 1, -0.6f, -0.01f);
            in[6] = fnormal(r, nq + 1); in[7] = frand(r, nh + 1, 0.2f, 1.2f);
            in[8] = frand(r, nin[8] + 1, -0.5f, 0.5f); in[9] = fnormal(r, nin[9] + 1); in[10] = fnormal(r, nin[10] + 1);
            in[11] = fnormal(r, ns);
            a.l2norm = var != 0 && var != 5 && var != 6;
            if (!a.l2norm) {                /* raw keys of norm ~1: |1 - β|k|²| <= 1 */
                for (i = 0; i < nq; i++) { in[1][i] *= 0.25f; in[6][i] *= 0.25f; }
                for (i = 0; i < nin[9]; i++) in[9][i] *= 0.25f;
            }
            a.B = B; a.T = T; a.H = H; a.K = K; a.V = V; a.q = in[0]; a.k = in[1]; a.v = in[2]; a.beta = in[3]; a.h0 = in[11];
            a.allow_neg_eigval = var == 2; a.chunk = C;
            if (var == 1 || var == 3 || var == 4) a.g = in[4];
            if (var == 2 || var == 5 || var == 6) a.gk = in[5];
            if (var == 3 || var == 5 || var == 6) { a.L = L; a.inj_b = in[8]; a.inj_kap = in[9]; a.inj_d = in[10]; }
            if (var == 3 || var == 5) a.e = in[6];
            if (var == 6) a.c = in[7];
            if (var == 3) { a.c = in[7]; a.offsets = off; a.n_seqs = 3; }
            for (w = 0; w < 12; w++) {
                want[w] = (double *)malloc((nin[w] + 1) * sizeof(double));
                got[w] = fnew(nin[w] + 1);
                got2[w] = fnew(nin[w] + 1);
                got3[w] = fnew(nin[w] + 1);
                got4[w] = fnew(nin[w] + 1);
            }
            gw.dout = gc.dout = dout; gw.dht = gc.dht = dht;
            gw.dq64 = want[0]; gw.dk64 = want[1]; gw.dv64 = want[2]; gw.dbeta64 = want[3]; gw.dg64 = want[4]; gw.dgk64 = want[5];
            gw.de64 = want[6]; gw.dc64 = want[7]; gw.dinj_b64 = want[8]; gw.dinj_kap64 = want[9]; gw.dinj_d64 = want[10]; gw.dh064 = want[11];
            CHECK(lattn_gdr_ref_backward(ctx, &a, &gw) == LATTN_OK, "gdr ref backward: %s", lattn_ctx_error(ctx));
            {   /* Ξ: _ref's, then _chunk's at another chunk size */
                lattn_gdr_args f = a;
                f.o = o;
                f.xi = xr;
                CHECK(lattn_gdr_ref(ctx, &f) == LATTN_OK, "gdr ref with xi: %s", lattn_ctx_error(ctx));
                f.xi = xi;
                f.chunk = C == 16 ? 32 : 16;
                CHECK(lattn_gdr_chunk(ctx, &f) == LATTN_OK, "gdr chunk with xi: %s", lattn_ctx_error(ctx));
                worst_xi = fmax(worst_xi, rel_rms(xi, xr, nv));
                if (!(rel_rms(xi, xr, nv) <= 1e-5)) nbad++;
                f.xi = xs;               /* Ξ and the states at the backward's chunk */
                f.states = sts;
                f.chunk = C;
                CHECK(lattn_gdr_chunk(ctx, &f) == LATTN_OK, "gdr chunk with states: %s", lattn_ctx_error(ctx));
            }
            for (w = 0; w < 4; w++) {
                float **o3 = w == 3 ? got4 : w == 2 ? got3 : w ? got2 : got;
                gc.dq = o3[0]; gc.dk = o3[1]; gc.dv = o3[2]; gc.dbeta = o3[3]; gc.dg = o3[4]; gc.dgk = o3[5]; gc.de = o3[6]; gc.dc = o3[7];
                gc.dinj_b = o3[8]; gc.dinj_kap = o3[9]; gc.dinj_d = o3[10]; gc.dh0 = o3[11];
                ctx->n_threads = w == 1 ? 3 - th : th;
                ctx->keep_workspace = w == 1;    /* the second run in the kept workspace: its repeat allocates nothing */
                a.xi = w == 2 ? xi : w == 3 ? xs : NULL;   /* the third from the forward's Ξ, the fourth with its states */
                a.states = w == 3 ? sts : NULL;
                CHECK(lattn_gdr_chunk_backward(ctx, &a, &gc) == LATTN_OK, "gdr chunk backward: %s", lattn_ctx_error(ctx));
                if (w == 3 && T > 0 && var != 4) {   /* the states are read: poisoned, the gradients turn NaN */
                    lattn_gdr_grads gp = LATTN__ZERO;
                    float *dq2 = fnew(nq + 1);
                    size_t nnan = 0;
                    for (i = 0; i < nsl; i++) sts[i] = NAN;
                    gp.dout = dout;
                    gp.dq = dq2;
                    CHECK(lattn_gdr_chunk_backward(ctx, &a, &gp) == LATTN_OK, "gdr chunk backward, poisoned states: %s", lattn_ctx_error(ctx));
                    for (i = 0; i < nq; i++) nnan += dq2[i] != dq2[i];
                    if (nnan == 0) {
                        nbad++;
                        printf("  gdr chunk backward var %d, T = %lld: the forward's states were not read\n", var, (long long)T);
                    }
                    free(dq2);
                }
                a.xi = NULL;
                a.states = NULL;
                if (w == 1) {
                    const uint64_t n0 = ctx->n_allocs;
                    CHECK(lattn_gdr_chunk_backward(ctx, &a, &gc) == LATTN_OK && ctx->n_allocs == n0,
                          "gdr chunk backward: a repeat in the kept workspace allocates nothing (%llu)", (unsigned long long)(ctx->n_allocs - n0));
                }
            }
            lattn_ctx_trim(ctx);
            ctx->keep_workspace = 0;
            ctx->n_threads = 1;
            for (w = 0; w < 12; w++) {
                const int used = w < 4 || w == 11 || (w == 4 && a.g) || (w == 5 && a.gk) || (w == 6 && a.e) || (w == 7 && a.c) || (w >= 8 && w <= 10 && L > 0);
                const double e = used ? rel_rms_d(got[w], want[w], nin[w]) : 0.0, e3 = used ? rel_rms_d(got3[w], want[w], nin[w]) : 0.0;
                const double e4 = used ? rel_rms_d(got4[w], want[w], nin[w]) : 0.0;
                if (!used) continue;
                worst = fmax(worst, fmax(e, fmax(e3, e4)));
                if (e > 1e-5 || e3 > 1e-5 || e4 > 1e-5 || !same_bits(got[w], got2[w], nin[w])) {
                    nbad++;
                    if (nbad < 8) printf("  gdr chunk backward var %d, T = %lld, C = %d: %s off by %.3g (from the forward's xi %.3g, and states %.3g)%s\n",
                                         var, (long long)T, C, names[w], e, e3, e4, same_bits(got[w], got2[w], nin[w]) ? "" : " (threads differ)");
                }
            }
            for (w = 0; w < 12; w++) { free(want[w]); free(got[w]); free(got2[w]); free(got3[w]); free(got4[w]); free(in[w]); }
            free(dout); free(dht); free(xi); free(xr); free(o); free(xs); free(sts);
        }
    if (getenv("LATTN_TEST_VERBOSE")) printf("  gdr_chunk_backward: worst relative RMS %.3g, forward xi %.3g\n", worst, worst_xi);
    gdr_backward_refusals(ctx, lattn_gdr_chunk_backward, "gdr_chunk_backward");
    CHECK(nbad == 0, "gdr_chunk_backward = gdr_ref_backward over 7 configurations x 7 lengths, recomputing Xi, from the forward's "
          "and from its Xi and states (worst relative RMS %.3g <= 1e-5; the forward's xi %.3g <= 1e-5), the same bits at 1 and 2 threads",
          worst, worst_xi);
}
/* ℒ = Σ dy·y from the GDN layer's _ref (float64 output); the initial state copied first (the
   forward overwrites it). */
static double gdn_loss(lattn_ctx *ctx, const lattn_gdn_layer *m, int64_t B, int64_t T, const float *x, const float *s0, float *s,
                       size_t ns, const float *dy, float *y, double *y64) {
    double l = 0;
    size_t i;
    memcpy(s, s0, ns * sizeof(float));
    lattn_gdn_forward_ref(ctx, m, B, T, x, y, s, y64);
    for (i = 0; i < (size_t)(B * T * m->cfg.D); i++) l += (double)dy[i] * y64[i];
    return l;
}
/* lattn_gdn_backward (float32) against central differences of lattn_gdn_forward_ref (double):
   a few coordinates of every weight tensor, of x and of the initial state (conv caches and
   delta-rule states), T = 70 (two chunks of the core), batch 2, β in [0, 1] and [0, 2]; the same
   bits at 1 and 2 threads; refusals. */
static void test_gdn_backward(lattn_ctx *ctx, lattn_rng *r) {
    int neg;
    for (neg = 0; neg < 4; neg++) {      /* the four variants of gdn_variant */
        lattn_gdn_config c = lattn_gdn_config_default();
        const char *vn = gdn_variant(&c, neg);
        lattn_gdn_layer m;
        const int64_t B = 2, T = 70;
        int64_t SF, D, ti;
        size_t nx, ns, i;
        float *x, *s0, *s, *dy, *y, *grad, *grad2, *dx, *dst;
        double *y64, worst = 0;
        int bad = 0;
        c.D = 10; c.H = 2; c.K = 5; c.V = 6; c.conv_w = 4;
        CHECK(lattn_gdn_init(ctx, &m, &c, 11 + (uint64_t)neg) == LATTN_OK, "gdn init: %s", lattn_ctx_error(ctx));
        for (i = 0; i < m.n_params; i++) m.arena[i] += 0.1f * (float)lattn_rng_normal_d(r);
        D = c.D; SF = lattn__gdn_state_floats(&c);
        nx = (size_t)(B * T * D); ns = (size_t)(B * SF);
        x = fnormal(r, nx); s0 = fnormal(r, ns); s = fnew(ns); dy = fnormal(r, nx); y = fnew(nx);
        for (i = 0; i < ns; i++) s0[i] *= 0.3f;
        y64 = (double *)malloc(nx * sizeof(double));
        grad = fnew(m.n_params); grad2 = fnew(m.n_params); dx = fnew(nx); dst = fnew(ns);
        ctx->n_threads = 1;
        memset(dst, 0, ns * sizeof(float));
        CHECK(lattn_gdn_backward(ctx, &m, B, T, x, s0, dy, grad, dx, dst) == LATTN_OK, "gdn backward: %s", lattn_ctx_error(ctx));
        ctx->n_threads = 2;
        CHECK(lattn_gdn_backward(ctx, &m, B, T, x, s0, dy, grad2, NULL, NULL) == LATTN_OK && same_bits(grad, grad2, m.n_params),
              "gdn backward: the same bits at 1 and 2 threads");
        ctx->n_threads = 1;
        for (ti = 0; ti < m.n_tensors + 2; ti++) {   /* every tensor, then x, then the state */
            float *base = ti < m.n_tensors ? m.tensors[ti].data : ti == m.n_tensors ? x : s0;
            const float *gb = ti < m.n_tensors ? grad + (m.tensors[ti].data - m.arena) : ti == m.n_tensors ? dx : dst;
            const size_t cnt = ti < m.n_tensors ? m.tensors[ti].count : ti == m.n_tensors ? nx : ns;
            double gmax = 0;
            int k;
            for (i = 0; i < cnt; i++) gmax = fmax(gmax, fabs((double)gb[i]));
            for (k = 0; k < 4; k++) {
                const size_t c0 = (size_t)(lattn_rng_next(r) % cnt);
                double fd, e;
                FD_RICHARDSON(&base[c0], gdn_loss(ctx, &m, B, T, x, s0, s, ns, dy, y, y64), fd);
                e = fabs(fd - (double)gb[c0]) / fmax(fabs(fd), 1e-2 * gmax + 1e-12);
                worst = fmax(worst, e);
                if (!(e <= 1e-3)) {
                    bad++;
                    if (bad < 5) printf("  gdn backward: %s[%zu] %.6g, differences %.6g\n", ti < m.n_tensors ? m.tensors[ti].name : ti == m.n_tensors ? "x" : "state",
                                        c0, (double)gb[c0], fd);
                }
            }
        }
        if (getenv("LATTN_TEST_VERBOSE")) printf("  gdn backward (%s): worst %.3g against central differences\n", vn, worst);
        CHECK(bad == 0, "GDN layer backward = central differences of forward_ref (every tensor, x, state; %s): worst %.3g", vn, worst);
        {   /* backward_ref: central differences in double; the float32 form against it under a final-state gradient */
            float *gr = fnew(m.n_params), *dxr = fnew(nx), *dsr = fnew(ns), *dsi = fnormal(r, ns), *dsf = fnew(ns), *dxf = fnew(nx);
            double *g64 = (double *)malloc(m.n_params * sizeof(double)), w2 = 0, e = 0;
            int bad2 = 0;
            memset(dsr, 0, ns * sizeof(float));
            CHECK(lattn_gdn_backward_ref(ctx, &m, B, T, x, s0, dy, gr, g64, dxr, dsr) == LATTN_OK, "gdn backward_ref: %s", lattn_ctx_error(ctx));
            for (ti = 0; ti < m.n_tensors + 2; ti++) {
                float *base = ti < m.n_tensors ? m.tensors[ti].data : ti == m.n_tensors ? x : s0;
                const size_t cnt = ti < m.n_tensors ? m.tensors[ti].count : ti == m.n_tensors ? nx : ns;
                double gmax = 0;
                int k;
                for (i = 0; i < cnt; i++)
                    gmax = fmax(gmax, fabs(ti < m.n_tensors ? g64[(m.tensors[ti].data - m.arena) + i] : (double)(ti == m.n_tensors ? dxr : dsr)[i]));
                for (k = 0; k < 3; k++) {
                    const size_t c0 = (size_t)(lattn_rng_next(r) % cnt);
                    const double ad = ti < m.n_tensors ? g64[(m.tensors[ti].data - m.arena) + c0] : (double)(ti == m.n_tensors ? dxr : dsr)[c0];
                    double fd, ee;
                    FD_RICHARDSON(&base[c0], gdn_loss(ctx, &m, B, T, x, s0, s, ns, dy, y, y64), fd);
                    ee = fabs(fd - ad) / fmax(fabs(ad), 1e-3 * gmax + 1e-300);
                    if (ti < m.n_tensors) w2 = fmax(w2, ee);
                    bad2 += !(ee <= 1e-5);           /* the differences' noise: the float inputs' rounding of x ± h */
                }
            }
            if (getenv("LATTN_TEST_VERBOSE")) printf("  gdn backward_ref (%s): worst weight %.3g against central differences\n", vn, w2);
            CHECK(bad2 == 0, "GDN layer backward_ref = central differences of forward_ref (every tensor, x, state; %s): worst %.3g", vn, w2);
            memcpy(dsr, dsi, ns * sizeof(float));
            memcpy(dsf, dsi, ns * sizeof(float));
            CHECK(lattn_gdn_backward_ref(ctx, &m, B, T, x, s0, dy, gr, NULL, dxr, dsr) == LATTN_OK &&
                  lattn_gdn_backward(ctx, &m, B, T, x, s0, dy, grad2, dxf, dsf) == LATTN_OK, "gdn backward with a final-state gradient");
            e = worst_tensor(grad2, gr, m.arena, m.tensors, m.n_tensors);
            e = fmax(e, fmax(rel_rms(dxf, dxr, nx), rel_rms(dsf, dsr, ns)));
            CHECK(e <= 1e-4, "GDN layer backward (float32) = backward_ref per tensor, dx and dstate, under a final-state gradient (%s): %.3g", vn, e);
            free(gr); free(dxr); free(dsr); free(dsi); free(dsf); free(dxf); free(g64);
        }
        if (neg == 1) {                  /* refused without writing */
            float *g3 = fnew(m.n_params);
            CHECK(lattn_gdn_backward(ctx, &m, B, T, x, s0, dy, NULL, dx, NULL) == LATTN_E_NULL, "gdn backward: grad NULL");
            CHECK(lattn_gdn_backward(ctx, &m, B, T, x, s0, NULL, g3, NULL, NULL) == LATTN_E_NULL, "gdn backward: dy NULL");
            CHECK(lattn_gdn_backward(ctx, &m, 0, T, x, s0, dy, g3, NULL, NULL) == LATTN_E_SHAPE, "gdn backward: B = 0");
            CHECK(lattn_gdn_backward(ctx, &m, B, -1, x, s0, dy, g3, NULL, NULL) == LATTN_E_SHAPE, "gdn backward: T < 0");
            CHECK(lattn_gdn_backward(ctx, &m, B, T, x, NULL, dy, g3, NULL, dst) == LATTN_E_NULL, "gdn backward: dstate without state");
            CHECK(lattn_gdn_backward_ref(ctx, &m, B, T, x, NULL, dy, g3, NULL, NULL, dst) == LATTN_E_NULL, "gdn backward_ref: dstate without state");
            CHECK(lattn_gdn_backward_ref(ctx, &m, B, T, x, s0, NULL, g3, NULL, NULL, NULL) == LATTN_E_NULL, "gdn backward_ref: dy NULL");
            for (i = 0; i < m.n_params; i++) if (!isnan(g3[i])) break;
            CHECK(i == m.n_params, "gdn backward: nothing written by a refused call");
            free(g3);
        }
        free(x); free(s0); free(s); free(dy); free(y); free(y64); free(grad); free(grad2); free(dx); free(dst);
        lattn_gdn_free(ctx, &m);
    }
}
/* The loss Σ dy·y of a PRISM block (P1, or P2 from the initial states s0) from forward_ref's float64 output. */
static double prism_loss(lattn_ctx *ctx, const lattn_prism_p1 *p, int p2, int64_t B, int64_t T, const float *x, const float *s0, float *s,
                         size_t ns, const float *dy, float *y, double *y64) {
    double l = 0;
    size_t i;
    if (p2) {
        if (s0) memcpy(s, s0, ns * sizeof(float));
        lattn_prism_p2_forward_ref(ctx, p, B, T, x, y, s0 ? s : NULL, y64);
    } else
        lattn_prism_p1_forward_ref(ctx, p, B, T, x, y, y64);
    for (i = 0; i < (size_t)(B * T * p->D); i++) l += (double)dy[i] * y64[i];
    return l;
}
/* The loss Σ dy·y of a P0 block from the initial states s0, from forward_ref's float64 output. */
static double p0_loss(lattn_ctx *ctx, const lattn_prism_p0 *m, int64_t B, int64_t T, const float *x, const float *s0, float *s, size_t ns,
                      const float *dy, float *y, double *y64) {
    double l = 0;
    size_t i;
    memcpy(s, s0, ns * sizeof(float));
    lattn_prism_p0_forward_ref(ctx, m, B, T, x, y, s, y64);
    for (i = 0; i < (size_t)(B * T * m->cfg.D); i++) l += (double)dy[i] * y64[i];
    return l;
}
/* PRISM backward: P1's and P2's backward_ref against central differences of their forward_ref (every
   tensor, x and P2's initial states; the block as published and the ablations R2 + R4, R3, R5); P2's
   carried states (the backward of a split sequence, the final states' gradient passed back, equals the
   whole one's); P2's float32 backward against its _ref at chunks 16 and 64 (the gradients do not depend on
   the chunk size); P0's backward_ref against central differences and its float32 form against _ref; the official
   PRISMBlock's float64 autograd (prism_block_grad_*, ≤ 1e-10); refusals. */
static void test_prism_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const int abl[4] = { 0, LATTN_PRISM_R2 | LATTN_PRISM_R4, LATTN_PRISM_R3, LATTN_PRISM_R5 };
    lattn_prism_config pc;
    int p2, ai, ci;
    memset(&pc, 0, sizeof pc);
    pc.seq_len = 64; pc.D = 8; pc.n_layers = 1; pc.H = 2; pc.S = 2; pc.R = 5; pc.Kc = 3; pc.rg = 3;
    for (p2 = 0; p2 < 2; p2++)
        for (ai = 0; ai < 4; ai++) {
            const int64_t B = 2, T = 12, D = pc.D;
            lattn_prism_p1 p;
            size_t nx, ns = 0, i;
            float *x, *dy, *y, *g, *dx, *s0 = NULL, *s = NULL, *ds = NULL;
            double *g64, *y64, worst = 0;
            int64_t ti;
            int bad = 0;
            if (p2 && (ai == 1 || ai == 3)) continue;
            CHECK(lattn_prism_p1_init(ctx, &p, &pc, 21 + (uint64_t)ai) == LATTN_OK, "prism init: %s", lattn_ctx_error(ctx));
            for (i = 0; i < p.n_params; i++) p.arena[i] += 0.2f * (float)lattn_rng_normal_d(r);
            p.C = 4;                     /* P1: three chunks */
            p.ablate = abl[ai];
            nx = (size_t)(B * T * D);
            x = fnormal(r, nx); dy = fnormal(r, nx); y = fnew(nx); dx = fnew(nx); g = fnew(p.n_params);
            g64 = (double *)malloc(p.n_params * sizeof(double)); y64 = (double *)malloc(nx * sizeof(double));
            if (p2) {
                lattn_prism_p2_state_floats(&p, &ns);
                ns *= (size_t)B;
                s0 = fnormal(r, ns); s = fnew(ns); ds = fnew(ns);
                for (i = 0; i < ns; i++) { s0[i] *= 0.3f; ds[i] = 0.0f; }
                CHECK(lattn_prism_p2_backward_ref(ctx, &p, B, T, x, s0, dy, g, g64, dx, ds) == LATTN_OK, "p2 backward_ref: %s", lattn_ctx_error(ctx));
            } else
                CHECK(lattn_prism_p1_backward_ref(ctx, &p, B, T, x, dy, g, g64, dx) == LATTN_OK, "p1 backward_ref: %s", lattn_ctx_error(ctx));
            for (ti = 0; ti < p.n_tensors + 2; ti++) {   /* every tensor, x, the initial states */
                float *base = ti < p.n_tensors ? p.tensors[ti].data : ti == p.n_tensors ? x : s0;
                const size_t cnt = ti < p.n_tensors ? p.tensors[ti].count : ti == p.n_tensors ? nx : ns;
                double gmax = 0;
                size_t c;
                if (!base) continue;
                for (c = 0; c < cnt; c++)
                    gmax = fmax(gmax, fabs(ti < p.n_tensors ? g64[(p.tensors[ti].data - p.arena) + c] : (double)(ti == p.n_tensors ? dx : ds)[c]));
                for (c = lattn_rng_next(r) % 3; c < cnt; c += 1 + (size_t)(lattn_rng_next(r) % (cnt / 6 + 1))) {
                    const double ad = ti < p.n_tensors ? g64[(p.tensors[ti].data - p.arena) + c] : (double)(ti == p.n_tensors ? dx : ds)[c];
                    double fd, e;
                    FD_RICHARDSON(&base[c], prism_loss(ctx, &p, p2, B, T, x, s0, s, ns, dy, y, y64), fd);
                    e = fabs(fd - ad) / fmax(fabs(ad), 1e-3 * gmax + 1e-300);
                    worst = fmax(worst, ti < p.n_tensors ? e : 0.0);
                    if (!(e <= 1e-5)) {          /* the differences' noise: the float inputs' rounding of x ± h */
                        bad++;
                        if (bad < 4) printf("  prism backward: %s[%zu] %.9g, differences %.9g\n", ti < p.n_tensors ? p.tensors[ti].name : ti == p.n_tensors ? "x" : "state", c, ad, fd);
                    }
                }
            }
            if (getenv("LATTN_TEST_VERBOSE")) printf("  prism %s backward_ref (ablate %d): worst weight %.3g against central differences\n", p2 ? "P2" : "P1", abl[ai], worst);
            CHECK(bad == 0, "PRISM %s backward_ref = central differences of forward_ref (every tensor, x%s; ablate %d): worst %.3g", p2 ? "P2" : "P1",
                  p2 ? ", state" : "", abl[ai], worst);
            for (i = 0; i < p.n_params; i++) if ((float)g64[i] != g[i]) break;
            CHECK(i == p.n_params, "prism backward_ref: grad = (float)grad64");
            if (p2) {                    /* a split sequence: 5 then 7 tokens, the final states' gradient passed back */
                const int64_t T1 = 5, T2 = T - T1;
                float *xa = fnew((size_t)(B * T1 * D)), *xb = fnew((size_t)(B * T2 * D)), *da = fnew((size_t)(B * T1 * D)), *db = fnew((size_t)(B * T2 * D));
                float *dxa = fnew((size_t)(B * T1 * D)), *dxb = fnew((size_t)(B * T2 * D)), *sm = fnew(ns), *dsm = fnew(ns), *ya = fnew((size_t)(B * T1 * D));
                double *ga = (double *)malloc(p.n_params * sizeof(double)), *gb = (double *)malloc(p.n_params * sizeof(double)), e = 0;
                int64_t b, t;
                for (b = 0; b < B; b++)
                    for (t = 0; t < T; t++) {
                        float *dst = t < T1 ? xa + (b * T1 + t) * D : xb + (b * T2 + t - T1) * D, *dd = t < T1 ? da + (b * T1 + t) * D : db + (b * T2 + t - T1) * D;
                        memcpy(dst, x + (b * T + t) * D, (size_t)D * sizeof(float));
                        memcpy(dd, dy + (b * T + t) * D, (size_t)D * sizeof(float));
                    }
                memcpy(sm, s0, ns * sizeof(float));
                lattn_prism_p2_forward_ref(ctx, &p, B, T1, xa, ya, sm, NULL);   /* the states after 5 tokens */
                for (i = 0; i < ns; i++) dsm[i] = 0.0f;
                CHECK(lattn_prism_p2_backward_ref(ctx, &p, B, T2, xb, sm, db, NULL, gb, dxb, dsm) == LATTN_OK &&
                      lattn_prism_p2_backward_ref(ctx, &p, B, T1, xa, s0, da, NULL, ga, dxa, dsm) == LATTN_OK, "p2 backward_ref, split");
                for (i = 0; i < p.n_params; i++) ga[i] += gb[i];
                e = rel_rms_dd(ga, g64, p.n_params);
                for (b = 0; b < B; b++) {
                    e = fmax(e, rel_rms(dxa + b * T1 * D, dx + b * T * D, (size_t)(T1 * D)));
                    e = fmax(e, rel_rms(dxb + b * T2 * D, dx + (b * T + T1) * D, (size_t)(T2 * D)));
                }
                e = fmax(e, rel_rms(dsm, ds, ns));
                CHECK(e <= 1e-6, "p2 backward_ref: a sequence split in two, dstate carried back, = the whole (%.3g)", e);
                free(xa); free(xb); free(da); free(db); free(dxa); free(dxb); free(sm); free(dsm); free(ya); free(ga); free(gb);
            }
            if (p2) {                    /* the float32 form at two chunk sizes, T = 70, a nonzero final-state gradient */
                const int64_t T3 = 70;
                const size_t n3 = (size_t)(B * T3 * D);
                float *x3 = fnormal(r, n3), *dy3 = fnormal(r, n3), *dsr = fnew(ns), *dsc = fnew(ns), *dsi = fnormal(r, ns);
                float *gr = fnew(p.n_params), *gc = fnew(p.n_params), *dxr = fnew(n3), *dxc = fnew(n3), *gprev = fnew(p.n_params);
                double e = 0, inv = 0;
                int cc;
                memcpy(dsr, dsi, ns * sizeof(float));
                CHECK(lattn_prism_p2_backward_ref(ctx, &p, B, T3, x3, s0, dy3, gr, NULL, dxr, dsr) == LATTN_OK, "p2 backward_ref T = 70");
                for (cc = 0; cc < 2; cc++) {
                    p.C = cc ? 64 : 16;
                    memcpy(dsc, dsi, ns * sizeof(float));
                    poison(gc, p.n_params); poison(dxc, n3);
                    CHECK(lattn_prism_p2_backward(ctx, &p, B, T3, x3, s0, dy3, gc, dxc, dsc) == LATTN_OK, "p2 backward: %s", lattn_ctx_error(ctx));
                    e = worst_tensor(gc, gr, p.arena, p.tensors, p.n_tensors);
                    if (cc) inv = worst_tensor(gc, gprev, p.arena, p.tensors, p.n_tensors);
                    e = fmax(e, fmax(rel_rms(dxc, dxr, n3), rel_rms(dsc, dsr, ns)));
                    if (getenv("LATTN_TEST_VERBOSE")) printf("  prism P2 backward (float32, C = %lld, ablate %d): worst tensor %.3g against _ref\n", (long long)p.C, abl[ai], e);
                    CHECK(e <= 1e-4, "p2 backward (float32, chunk %lld) = backward_ref, every tensor, dx, dstate (ablate %d): %.3g", (long long)p.C, abl[ai], e);
                    memcpy(gprev, gc, p.n_params * sizeof(float));
                }
                CHECK(inv <= 1e-4, "p2 backward: the gradients at chunks 16 and 64 agree (%.3g)", inv);
                free(x3); free(dy3); free(dsr); free(dsc); free(dsi); free(gr); free(gc); free(dxr); free(dxc); free(gprev);
                p.C = 4;
            }
            if (ai == 0) {               /* refusals write nothing */
                float *g3 = fnew(p.n_params);
                if (p2) {
                    CHECK(lattn_prism_p2_backward(ctx, &p, B, T, x, NULL, dy, g3, NULL, ds) == LATTN_E_NULL, "p2 backward: dstate without state");
                    CHECK(lattn_prism_p2_backward(ctx, &p, B, T, NULL, s0, dy, g3, NULL, NULL) == LATTN_E_NULL, "p2 backward: x NULL");
                    CHECK(lattn_prism_p2_backward_ref(ctx, &p, 0, T, x, s0, dy, g3, NULL, NULL, NULL) == LATTN_E_SHAPE, "p2 backward_ref: B = 0");
                    CHECK(lattn_prism_p2_backward_ref(ctx, &p, B, -1, x, s0, dy, g3, NULL, NULL, NULL) == LATTN_E_SHAPE, "p2 backward_ref: T < 0");
                    CHECK(lattn_prism_p2_backward(ctx, NULL, B, T, x, s0, dy, g3, NULL, NULL) == LATTN_E_NULL, "p2 backward: NULL block");
                } else {
                    CHECK(lattn_prism_p1_backward_ref(ctx, &p, B, T, x, NULL, g3, NULL, dx) == LATTN_E_NULL, "p1 backward_ref: dy NULL");
                    CHECK(lattn_prism_p1_backward_ref(ctx, &p, B, 10, x, dy, g3, NULL, NULL) == LATTN_E_SHAPE, "p1 backward_ref: T not a multiple of C");
                    p.tau = 0;
                    CHECK(lattn_prism_p1_backward_ref(ctx, &p, B, T, x, dy, g3, NULL, NULL) == LATTN_E_DOMAIN, "p1 backward_ref: tau = 0");
                    p.tau = 16;
                }
                for (i = 0; i < p.n_params; i++) if (!isnan(g3[i])) break;
                CHECK(i == p.n_params, "prism backward: nothing written by a refused call");
                free(g3);
            }
            free(x); free(dy); free(y); free(dx); free(g); free(g64); free(y64); free(s0); free(s); free(ds);
            lattn_prism_p1_free(ctx, &p);
        }
    {   /* P0: central differences of its forward_ref; the float32 form against _ref under a final-state gradient */
        const int64_t B = 2, T = 21;
        lattn_prism_p0_config c0;
        lattn_prism_p0 m;
        size_t nx, ns = 0, i;
        float *x, *dy, *y, *s0, *s, *ds, *dsi, *g, *g2, *dx, *dx2, *ds2;
        double *g64, *y64, worst = 0, e = 0;
        int64_t ti;
        int bad = 0;
        c0.D = 12; c0.H = 2; c0.L = 3; c0.Kc = 4;
        CHECK(lattn_prism_p0_init(ctx, &m, &c0, 31) == LATTN_OK, "p0 init");
        for (i = 0; i < m.n_params; i++) m.arena[i] += 0.1f * (float)lattn_rng_normal_d(r);
        lattn_prism_p0_state_floats(&c0, &ns);
        ns *= (size_t)B;
        nx = (size_t)(B * T * c0.D);
        x = fnormal(r, nx); dy = fnormal(r, nx); y = fnew(nx); dx = fnew(nx); dx2 = fnew(nx); g = fnew(m.n_params); g2 = fnew(m.n_params);
        s0 = fnormal(r, ns); s = fnew(ns); ds = fnew(ns); dsi = fnormal(r, ns); ds2 = fnew(ns);
        g64 = (double *)malloc(m.n_params * sizeof(double)); y64 = (double *)malloc(nx * sizeof(double));
        for (i = 0; i < ns; i++) { s0[i] *= 0.3f; ds[i] = 0.0f; }
        CHECK(lattn_prism_p0_backward_ref(ctx, &m, B, T, x, s0, dy, g, g64, dx, ds) == LATTN_OK, "p0 backward_ref: %s", lattn_ctx_error(ctx));
        for (ti = 0; ti < m.n_tensors + 2; ti++) {
            float *base = ti < m.n_tensors ? m.tensors[ti].data : ti == m.n_tensors ? x : s0;
            const size_t cnt = ti < m.n_tensors ? m.tensors[ti].count : ti == m.n_tensors ? nx : ns;
            double gmax = 0;
            int k;
            for (i = 0; i < cnt; i++) gmax = fmax(gmax, fabs(ti < m.n_tensors ? g64[(m.tensors[ti].data - m.arena) + i] : (double)(ti == m.n_tensors ? dx : ds)[i]));
            for (k = 0; k < 3; k++) {
                const size_t c1 = (size_t)(lattn_rng_next(r) % cnt);
                const double ad = ti < m.n_tensors ? g64[(m.tensors[ti].data - m.arena) + c1] : (double)(ti == m.n_tensors ? dx : ds)[c1];
                double fd, ee;
                FD_RICHARDSON(&base[c1], p0_loss(ctx, &m, B, T, x, s0, s, ns, dy, y, y64), fd);
                ee = fabs(fd - ad) / fmax(fabs(ad), 1e-3 * gmax + 1e-300);
                if (ti < m.n_tensors) worst = fmax(worst, ee);
                if (!(ee <= 1e-5) && ++bad < 4)
                    printf("  p0 backward_ref: %s[%zu] %.9g, differences %.9g\n", ti < m.n_tensors ? m.tensors[ti].name : ti == m.n_tensors ? "x" : "state", c1, ad, fd);
            }
        }
        if (getenv("LATTN_TEST_VERBOSE")) printf("  prism P0 backward_ref: worst weight %.3g against central differences\n", worst);
        CHECK(bad == 0, "PRISM P0 backward_ref = central differences of forward_ref (every tensor, x, state): worst %.3g", worst);
        memcpy(ds, dsi, ns * sizeof(float));
        memcpy(ds2, dsi, ns * sizeof(float));
        poison(g2, m.n_params); poison(dx2, nx);
        CHECK(lattn_prism_p0_backward_ref(ctx, &m, B, T, x, s0, dy, g, NULL, dx, ds) == LATTN_OK &&
              lattn_prism_p0_backward(ctx, &m, B, T, x, s0, dy, g2, dx2, ds2) == LATTN_OK, "p0 backward: %s", lattn_ctx_error(ctx));
        e = worst_tensor(g2, g, m.arena, m.tensors, m.n_tensors);
        e = fmax(e, fmax(rel_rms(dx2, dx, nx), rel_rms(ds2, ds, ns)));
        if (getenv("LATTN_TEST_VERBOSE")) printf("  prism P0 backward (float32) against _ref: worst tensor %.3g\n", e);
        CHECK(e <= 1e-4, "PRISM P0 backward (float32) = backward_ref per tensor, dx and dstate, under a final-state gradient: %.3g", e);
        CHECK(lattn_prism_p0_backward(ctx, &m, B, T, x, NULL, dy, g2, NULL, ds2) == LATTN_E_NULL, "p0 backward: dstate without state");
        CHECK(lattn_prism_p0_backward_ref(ctx, &m, B, T, x, s0, NULL, g2, NULL, NULL, NULL) == LATTN_E_NULL, "p0 backward_ref: dy NULL");
        free(x); free(dy); free(y); free(s0); free(s); free(ds); free(dsi); free(g); free(g2); free(dx); free(dx2); free(ds2); free(g64); free(y64);
        lattn_prism_p0_free(ctx, &m);
    }
    for (ci = 0; ci < 2; ci++) {         /* the official block, float64 autograd */
        char path[256];
        lattn_st_file f;
        lattn_prism_p1 p;
        const lattn_st_tensor *tx;
        float *x, *dy, *dx;
        double *g64, *want, worst = 0, e;
        size_t n;
        snprintf(path, sizeof path, "tests/external/grad/prism_block_grad_%d.safetensors", ci);
        if (lattn_st_load(ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        CHECK(lattn_prism_p1_init_st(ctx, &p, &f, "") == LATTN_OK, "%s: %s", path, lattn_ctx_error(ctx));
        p.C = atoi(lattn_st_meta(&f, "chunk_size"));
        tx = lattn_st_find(&f, "x");
        x = tensor_f32(&f, "x"); dy = tensor_f32(&f, "dy"); dx = fnew(tx->count);
        g64 = (double *)malloc(p.n_params * sizeof(double));
        CHECK(lattn_prism_p1_backward_ref(ctx, &p, tx->shape[0], tx->shape[1], x, dy, NULL, g64, dx) == LATTN_OK, "%s: %s", path, lattn_ctx_error(ctx));
        worst = official_grads(path, &f, g64, p.arena, p.tensors, p.n_tensors);
        want = tensor_f64(&f, "dx", &n);
        e = rel_rms_d(dx, want, n);
        CHECK(e <= 1e-6, "%s: dx = the official dx (%.3g, float)", path, e);
        if (getenv("LATTN_TEST_VERBOSE")) printf("  %s: P1 backward_ref, worst weight gradient %.3g, dx %.3g (float)\n", path, worst, e);
        free(want); free(x); free(dy); free(dx); free(g64);
        lattn_prism_p1_free(ctx, &p);
        lattn_st_free(ctx, &f);
    }
}
/* The Laplace model's loss from forward_ref's float64 output: the mean next-token cross-entropy
   (vocab > 0) or Σ dout·out. */
static double laplace_loss(lattn_ctx *ctx, const lattn_laplace_model *m, int64_t B, int64_t T, const int32_t *tok, const float *x,
                           const float *dout, float *out, double *o64) {
    const int64_t V = m->cfg.vocab, n = V > 0 ? V : m->cfg.D;
    double l = 0;
    int64_t r, k;
    lattn_laplace_forward_ref(ctx, m, B, T, tok, x, out, NULL, o64);
    if (V == 0) {
        for (r = 0; r < B * T * n; r++) l += (double)dout[r] * o64[r];
        return l;
    }
    for (r = 0; r < B * T; r++) {
        double mx = -HUGE_VAL, sum = 0;
        if (r % T == T - 1) continue;
        for (k = 0; k < n; k++) mx = fmax(mx, o64[r * n + k]);
        for (k = 0; k < n; k++) sum += exp(o64[r * n + k] - mx);
        l += mx + log(sum) - o64[r * n + tok[r + 1]];
    }
    return l / (double)(B * (T - 1));
}
/* lattn_laplace_backward (float32) against central differences of lattn_laplace_forward_ref
   (double): a few coordinates of every weight tensor (and of x), the loss of the model (tied head,
   cross-entropy) with the default gate and with σ gates without the norm, and a hidden-state block
   (vocab = 0) under an upstream dout; the reported loss; the same bits at 1 and 2 threads and with
   every activation kept (keep_activations); refusals. */
static void test_laplace_backward(lattn_ctx *ctx, lattn_rng *r) {
    int var;
    for (var = 0; var < 3; var++) {
        lattn_laplace_config c = lattn_laplace_config_small();
        lattn_laplace_model m;
        const int64_t B = 2, T = 19;
        int64_t ti, nout;
        size_t nx, no, i;
        float *x = NULL, *dout = NULL, *out, *grad, *grad2, *dx;
        int32_t *tok = (int32_t *)malloc((size_t)(B * T) * sizeof(int32_t));
        double *o64, worst = 0, loss = 0, l0;
        int bad = 0;
        c.D = 24; c.H = 2; c.K = 6; c.V = 10; c.ffn = 40; c.vocab = var == 2 ? 0 : 50;
        if (var == 1) c.gate_mode = LATTN_OUT_SIGMOID;
        CHECK(lattn_laplace_init(ctx, &m, &c, 21 + (uint64_t)var) == LATTN_OK, "laplace init: %s", lattn_ctx_error(ctx));
        for (i = 0; i < m.n_params; i++) m.arena[i] += 0.05f * (float)lattn_rng_normal_d(r);
        nout = c.vocab > 0 ? c.vocab : c.D;
        nx = (size_t)(B * T * c.D); no = (size_t)(B * T * nout);
        for (i = 0; i < (size_t)(B * T); i++) tok[i] = (int32_t)(lattn_rng_next(r) % 50);
        if (c.vocab == 0) { x = fnormal(r, nx); dout = fnormal(r, no); }
        out = fnew(no); o64 = (double *)malloc(no * sizeof(double));
        grad = fnew(m.n_params); grad2 = fnew(m.n_params); dx = fnew(nx);
        ctx->n_threads = 1;
        CHECK(lattn_laplace_backward(ctx, &m, B, T, tok, x, dout, &loss, grad, dx) == LATTN_OK, "laplace backward: %s", lattn_ctx_error(ctx));
        ctx->n_threads = 2;
        CHECK(lattn_laplace_backward(ctx, &m, B, T, tok, x, dout, NULL, grad2, NULL) == LATTN_OK && same_bits(grad, grad2, m.n_params),
              "laplace backward: the same bits at 1 and 2 threads");
        ctx->n_threads = 1;
        ctx->keep_activations = 1;
        poison(grad2, m.n_params);
        CHECK(lattn_laplace_backward(ctx, &m, B, T, tok, x, dout, NULL, grad2, NULL) == LATTN_OK && same_bits(grad, grad2, m.n_params),
              "laplace backward: every activation kept = each layer recomputed, bit for bit");
        ctx->keep_activations = 0;
        l0 = laplace_loss(ctx, &m, B, T, tok, x, dout, out, o64);
        if (c.vocab > 0) CHECK(fabs(loss - l0) <= 1e-5 * fabs(l0), "laplace backward: the loss %.9g = forward_ref's %.9g", loss, l0);
        for (ti = 0; ti < m.n_tensors + (x ? 1 : 0); ti++) {
            float *base = ti < m.n_tensors ? m.tensors[ti].data : x;
            const float *gb = ti < m.n_tensors ? grad + (m.tensors[ti].data - m.arena) : dx;
            const size_t cnt = ti < m.n_tensors ? m.tensors[ti].count : nx;
            double gmax = 0;
            int k;
            for (i = 0; i < cnt; i++) gmax = fmax(gmax, fabs((double)gb[i]));
            for (k = 0; k < 3; k++) {
                size_t c0 = (size_t)(lattn_rng_next(r) % cnt);
                double fd, e;
                if (ti == 0 && c.vocab > 0) c0 = (size_t)tok[k] * (size_t)c.D + (size_t)(lattn_rng_next(r) % (uint64_t)c.D);   /* used rows */
                FD_RICHARDSON(&base[c0], laplace_loss(ctx, &m, B, T, tok, x, dout, out, o64), fd);
                e = fabs(fd - (double)gb[c0]) / fmax(fabs(fd), 1e-2 * gmax + 1e-12);
                worst = fmax(worst, e);
                if (!(e <= 1e-3)) {
                    bad++;
                    if (bad < 5) printf("  laplace backward (%d): %s[%zu] %.6g, differences %.6g\n", var, ti < m.n_tensors ? m.tensors[ti].name : "x", c0,
                                        (double)gb[c0], fd);
                }
            }
        }
        if (getenv("LATTN_TEST_VERBOSE")) printf("  laplace backward (%s): worst %.3g against central differences\n",
                                                 var == 0 ? "LM" : var == 1 ? "LM, sigmoid gate" : "hidden states", worst);
        CHECK(bad == 0, "Laplace backward = central differences of forward_ref (%s; every tensor): worst %.3g",
              var == 0 ? "LM, cross-entropy" : var == 1 ? "LM, sigmoid gate without the norm" : "hidden states, dout", worst);
        {   /* backward_ref: central differences in double (every tensor, x); the float32 form against it per tensor */
            double *g64 = (double *)malloc(m.n_params * sizeof(double)), lr = 0, w2 = 0, e = 0;
            float *gr = fnew(m.n_params), *dxr = fnew(nx);
            int bad2 = 0;
            CHECK(lattn_laplace_backward_ref(ctx, &m, B, T, tok, x, dout, &lr, gr, g64, dxr) == LATTN_OK, "laplace backward_ref: %s", lattn_ctx_error(ctx));
            if (c.vocab > 0) CHECK(fabs(lr - l0) <= 1e-12 * fabs(l0), "laplace backward_ref: the loss %.17g = forward_ref's %.17g", lr, l0);
            for (ti = 0; ti < m.n_tensors + (x ? 1 : 0); ti++) {
                float *base = ti < m.n_tensors ? m.tensors[ti].data : x;
                const size_t cnt = ti < m.n_tensors ? m.tensors[ti].count : nx;
                double gmax = 0;
                int k;
                for (i = 0; i < cnt; i++) gmax = fmax(gmax, fabs(ti < m.n_tensors ? g64[(m.tensors[ti].data - m.arena) + i] : (double)dxr[i]));
                for (k = 0; k < 3; k++) {
                    size_t c0 = (size_t)(lattn_rng_next(r) % cnt);
                    double fd, ad, ee;
                    if (ti == 0 && c.vocab > 0) c0 = (size_t)tok[k] * (size_t)c.D + (size_t)(lattn_rng_next(r) % (uint64_t)c.D);
                    ad = ti < m.n_tensors ? g64[(m.tensors[ti].data - m.arena) + c0] : (double)dxr[c0];
                    FD_RICHARDSON(&base[c0], laplace_loss(ctx, &m, B, T, tok, x, dout, out, o64), fd);
                    ee = fabs(fd - ad) / fmax(fabs(ad), 1e-3 * gmax + 1e-6);   /* the differences' noise: ~1e-11 absolute */
                    if (ti < m.n_tensors) w2 = fmax(w2, ee);
                    if (!(ee <= 1e-5) && ++bad2 < 4)
                        printf("  laplace backward_ref (%d): %s[%zu] %.9g, differences %.9g (largest %.3g)\n", var, ti < m.n_tensors ? m.tensors[ti].name : "x", c0, ad, fd, gmax);
                }
            }
            if (getenv("LATTN_TEST_VERBOSE")) printf("  laplace backward_ref (%d): worst weight %.3g against central differences\n", var, w2);
            CHECK(bad2 == 0, "Laplace backward_ref = central differences of forward_ref (%s; every tensor): worst %.3g",
                  var == 0 ? "LM, cross-entropy" : var == 1 ? "LM, sigmoid gate without the norm" : "hidden states, dout", w2);
            e = worst_tensor(grad, gr, m.arena, m.tensors, m.n_tensors);
            e = fmax(e, rel_rms(dx, dxr, nx));
            if (getenv("LATTN_TEST_VERBOSE")) printf("  laplace backward (float32, %d) against backward_ref: worst tensor %.3g\n", var, e);
            CHECK(e <= 1e-4, "Laplace backward (float32) = backward_ref per tensor and dx (%d): %.3g", var, e);
            CHECK(lattn_laplace_backward_ref(ctx, &m, B, T, tok, x, NULL, NULL, gr, NULL, NULL) == (c.vocab ? LATTN_OK : LATTN_E_NULL),
                  "laplace backward_ref: vocab 0 needs dout");
            free(g64); free(gr); free(dxr);
        }
        if (var == 2) {                  /* refused without writing */
            float *g3 = fnew(m.n_params);
            CHECK(lattn_laplace_backward(ctx, &m, B, T, tok, x, NULL, NULL, g3, NULL) == LATTN_E_NULL, "laplace backward: vocab 0 without dout");
            CHECK(lattn_laplace_backward(ctx, &m, B, T, tok, x, dout, NULL, NULL, NULL) == LATTN_E_NULL, "laplace backward: grad NULL");
            CHECK(lattn_laplace_backward(ctx, &m, 0, T, tok, x, dout, NULL, g3, NULL) == LATTN_E_SHAPE, "laplace backward: B = 0");
            CHECK(lattn_laplace_backward(ctx, &m, B, T, tok, NULL, dout, NULL, g3, NULL) == LATTN_E_NULL, "laplace backward: x NULL");
            for (i = 0; i < m.n_params; i++) if (!isnan(g3[i])) break;
            CHECK(i == m.n_params, "laplace backward: nothing written by a refused call");
            free(g3);
        }
        free(x); free(dout); free(out); free(o64); free(grad); free(grad2); free(dx); free(tok);
        lattn_laplace_free(ctx, &m);
    }
}
/* ℒ = Σ dout·o + Σ dlse·lse from the attention _ref's float64 outputs. */
static double attn_loss(lattn_ctx *ctx, lattn_attn_args a, const float *dout, const float *dlse, size_t no, size_t nl, double *o64, double *l64,
                        float *o) {
    double l = 0;
    size_t i;
    a.o = o; a.lse = NULL; a.o64 = o64; a.lse64 = l64;
    lattn_attn_ref(ctx, &a);
    for (i = 0; i < no; i++) l += (double)dout[i] * o64[i];
    for (i = 0; i < nl; i++) l += (double)dlse[i] * l64[i];
    return l;
}
/* lattn_attn_ref_backward against central differences of lattn_attn_ref (causal with B = 2; a
   grouped-query sliding window over variable lengths, dlse too), then fla's naive_parallel_attn
   under float64 autograd (causal, and GQA with an 8-key window). */
static void test_attn_backward(lattn_ctx *ctx, lattn_rng *r) {
    int var, ci;
    for (var = 0; var < 2; var++) {
        static const int64_t off[4] = { 0, 5, 5, 13 };
        const int64_t B = var ? 1 : 2, T = 13, H = var ? 4 : 2, Hkv = 2, K = 5, V = 3;
        const size_t nq = (size_t)(B * T * H * K), nk = (size_t)(B * T * Hkv * K), nv = (size_t)(B * T * Hkv * V), no = (size_t)(B * T * H * V);
        const size_t nl = (size_t)(B * T * H);
        float *in[3], *dout = fnormal(r, no), *dlse = fnormal(r, nl), *o = fnew(no);
        double *ad[3], *o64 = (double *)malloc(no * sizeof(double)), *l64 = (double *)malloc(nl * sizeof(double)), worst = 0;
        size_t nin[3], c;
        lattn_attn_args a = LATTN__ZERO;
        lattn_attn_grads gr = LATTN__ZERO;
        int w, bad = 0;
        nin[0] = nq; nin[1] = nk; nin[2] = nv;
        for (w = 0; w < 3; w++) { in[w] = fnormal(r, nin[w]); ad[w] = (double *)malloc(nin[w] * sizeof(double)); }
        a.B = B; a.T = T; a.H = H; a.H_kv = Hkv; a.K = K; a.V = V; a.q = in[0]; a.k = in[1]; a.v = in[2];
        if (var) { a.mask = LATTN_MASK_WINDOW; a.window = 3; a.offsets = off; a.n_seqs = 3; }
        gr.dout = dout; gr.dlse = var ? dlse : NULL;
        gr.dq64 = ad[0]; gr.dk64 = ad[1]; gr.dv64 = ad[2];
        CHECK(lattn_attn_ref_backward(ctx, &a, &gr) == LATTN_OK, "attn backward: %s", lattn_ctx_error(ctx));
        for (w = 0; w < 3; w++) {
            double gmax = 0;
            for (c = 0; c < nin[w]; c++) gmax = fmax(gmax, fabs(ad[w][c]));
            for (c = 0; c < nin[w]; c += 1 + (size_t)(lattn_rng_next(r) % 3)) {
                double fd;
                FD_RICHARDSON(&in[w][c], attn_loss(ctx, a, dout, dlse, no, var ? nl : 0, o64, l64, o), fd);
                fd_compare(fd, ad[w][c], gmax, &worst, &bad);
            }
        }
        CHECK(bad == 0, "attn_ref_backward = central differences (%s): worst %.3g", var ? "GQA window, variable lengths, dlse" : "causal, B = 2", worst);
        for (w = 0; w < 3; w++) { free(in[w]); free(ad[w]); }
        free(dout); free(dlse); free(o); free(o64); free(l64);
    }
    for (ci = 0; ci < 4; ci++) {   /* fla's naive_parallel_attn under float64 autograd: ref (1e-12) and chunk (1e-5) */
        static const char *const outs[3] = { "dq", "dk", "dv" };
        char path[256];
        lattn_st_file f;
        const lattn_st_tensor *tq, *tk;
        lattn_attn_args a = LATTN__ZERO;
        lattn_attn_grads gr = LATTN__ZERO, gc = LATTN__ZERO;
        double *got[3], *want[3];
        size_t n[3];
        float *x[4], *gf[3], *wf[3];
        int k2;
        snprintf(path, sizeof path, "tests/external/grad/%s_grad_%d.safetensors", ci < 2 ? "attn_causal" : "attn_swa_gqa", ci % 2);
        if (lattn_st_load(ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        tq = lattn_st_find(&f, "q"); tk = lattn_st_find(&f, "k");
        a.B = tq->shape[0]; a.T = tq->shape[1]; a.H = tq->shape[2]; a.H_kv = tk->shape[2]; a.K = tq->shape[3]; a.V = lattn_st_find(&f, "v")->shape[3];
        if (ci >= 2) { a.mask = LATTN_MASK_WINDOW; a.window = 7; }   /* fla's window_size = 8 keys, i - 7 .. i */
        x[0] = tensor_f32(&f, "q"); x[1] = tensor_f32(&f, "k"); x[2] = tensor_f32(&f, "v"); x[3] = tensor_f32(&f, "do");
        a.q = x[0]; a.k = x[1]; a.v = x[2];
        for (k2 = 0; k2 < 3; k2++) {
            want[k2] = tensor_f64(&f, outs[k2], &n[k2]);
            wf[k2] = tensor_f32(&f, outs[k2]);
            got[k2] = (double *)malloc(n[k2] * sizeof(double));
            gf[k2] = fnew(n[k2]);
        }
        gr.dout = x[3]; gr.dq64 = got[0]; gr.dk64 = got[1]; gr.dv64 = got[2];
        gc.dout = x[3]; gc.dq = gf[0]; gc.dk = gf[1]; gc.dv = gf[2];
        CHECK(lattn_attn_ref_backward(ctx, &a, &gr) == LATTN_OK && lattn_attn_chunk_backward(ctx, &a, &gc) == LATTN_OK, "%s: %s", path,
              lattn_ctx_error(ctx));
        for (k2 = 0; k2 < 3; k2++) {
            CHECK(rel_rms_dd(got[k2], want[k2], n[k2]) <= 1e-12, "%s: %s = fla's float64 autograd (%.3g)", path, outs[k2],
                  rel_rms_dd(got[k2], want[k2], n[k2]));
            CHECK(rel_rms(gf[k2], wf[k2], n[k2]) <= 1e-5, "%s: chunk %s = fla's float64 autograd (%.3g)", path, outs[k2],
                  rel_rms(gf[k2], wf[k2], n[k2]));
        }
        for (k2 = 0; k2 < 3; k2++) { free(got[k2]); free(want[k2]); free(gf[k2]); free(wf[k2]); }
        for (k2 = 0; k2 < 4; k2++) free(x[k2]);
        lattn_st_free(ctx, &f);
    }
    for (ci = 0; ci < 2; ci++) {   /* refused without writing: ref, then chunk */
        lattn_status (*bw)(lattn_ctx *, const lattn_attn_args *, const lattn_attn_grads *) = ci ? lattn_attn_chunk_backward : lattn_attn_ref_backward;
        const char *nm = ci ? "attn_chunk_backward" : "attn_ref_backward";
        float v[8] = { 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f }, d[8];
        lattn_attn_args a = LATTN__ZERO;
        lattn_attn_grads g = LATTN__ZERO;
        int i;
        for (i = 0; i < 8; i++) d[i] = NAN;
        a.B = 1; a.T = 2; a.H = 2; a.H_kv = 2; a.K = 2; a.V = 2; a.q = a.k = a.v = v;
        g.dq = d;
        CHECK(bw(ctx, &a, NULL) == LATTN_E_NULL, "%s: grads NULL", nm);
        CHECK(bw(ctx, &a, &g) == LATTN_E_NULL, "%s: dout NULL", nm);
        g.dout = v;
        a.H = 3;
        CHECK(bw(ctx, &a, &g) == LATTN_E_SHAPE, "%s: H not a multiple of H_kv", nm);
        a.H = 2;
        if (ci) {
            a.chunk = -1;
            CHECK(bw(ctx, &a, &g) == LATTN_E_SHAPE, "%s: chunk -1 refused", nm);
            a.chunk = 0;
            a.K = 600;
            ctx->profile = lattn_profile_trn2();
            CHECK(bw(ctx, &a, &g) == LATTN_E_UNSUPPORTED, "%s: K = 600 on trn2 (5 partition tiles)", nm);
            ctx->profile = NULL;
        }
        for (i = 0; i < 8; i++) if (!isnan(d[i])) break;
        CHECK(i == 8, "%s: nothing written by a refused call", nm);
    }
}
/* A function mask with rows that see no key (query 4), keys no query sees (16 .. 31: with tiles of
   16, a key tile whose dK, dV come from no pair), keys past the diagonal and holes; its block
   classifier proves the tiles right of the band and the hidden keys' tile invisible. */
static int fb_visible(const void *u, int64_t n, int64_t i, int64_t j) {
    (void)u; (void)n;
    return i != 4 && (j < 16 || j >= 32) && j <= i + 2 && (i + j) % 5 != 0;
}
static int fb_visible_block(const void *u, int64_t n, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    (void)u; (void)n; (void)i0;
    return j0 > i1 + 1 || (j0 >= 16 && j1 <= 32) ? LATTN_VIS_NONE : LATTN_VIS_SOME;
}
static void attn_bw_run(lattn_ctx *ctx, const lattn_attn_args *a, const lattn_attn_grads *g0, float *const *out, const size_t *n, int fast) {
    lattn_attn_grads g = *g0;
    int w;
    for (w = 0; w < 3; w++) poison(out[w], n[w]);
    g.dq = out[0]; g.dk = out[1]; g.dv = out[2];
    CHECK((fast ? lattn_attn_chunk_backward : lattn_attn_ref_backward)(ctx, a, &g) == LATTN_OK, "attn %s backward: %s",
          fast ? "chunk" : "ref", lattn_ctx_error(ctx));
}
/* lattn_attn_chunk_backward against lattn_attn_ref_backward: causal, window (narrower and wider than
   a tile), full and function masks (with and without a block classifier), grouped-query and
   multi-head, T = 0, 1, C - 1, C, C + 1, 2C + 3 with C = 16, B = 2 or variable lengths (one empty),
   K, V not multiples of the vector width, dlse on or off, the forward saved or recomputed; outputs
   NaN-poisoned; the same bits at 1, 2 and 3 threads; then the default tile, the trn2 profile, a
   subset of the outputs (fla's oracle cases and the refusals: test_attn_backward). */
static void test_attn_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const char *const masks[6] = { "causal", "window 5", "window 40", "full", "fn", "fn + blocks" };
    static const char *const names[3] = { "dq", "dk", "dv" };
    const int Ts[6] = { 0, 1, 15, 16, 17, 35 };
    int mi, ti, combo = 0, ci;
    for (mi = 0; mi < 6; mi++)
        for (ti = 0; ti < 6; ti++) {
            const int vl = combo % 2, gqa = combo / 2 % 2, saved = combo / 4 % 2;
            const int64_t T = Ts[ti], B = vl ? 1 : 2, H = gqa ? 4 : 2, Hkv = gqa ? 2 : 0, K = 5 + 4 * (combo % 3), V = 7 - 4 * (combo % 2);
            const int64_t hk = Hkv ? Hkv : H;
            const size_t nq = (size_t)(B * T * H * K), nk = (size_t)(B * T * hk * K), nv = (size_t)(B * T * hk * V), no = (size_t)(B * T * H * V);
            float *q = fnormal(r, nq), *k = fnormal(r, nk), *v = fnormal(r, nv), *dout = fnormal(r, no), *dlse = fnormal(r, (size_t)(B * T * H));
            float *o = fnew(no), *lse = fnew((size_t)(B * T * H)), *want[3], *got[3], *again[3];
            size_t n[3];
            int64_t off[5];
            lattn_attn_args a = LATTN__ZERO;
            lattn_attn_grads g = LATTN__ZERO;
            int w, th, same = 1;
            combo++;
            if (g_quick && ti % 2 == 1 && ti != 5) { free(q); free(k); free(v); free(dout); free(dlse); free(o); free(lse); continue; }
            off[0] = 0; off[1] = T / 3; off[2] = T / 3; off[3] = T / 3 + (T + 1) / 2; off[4] = T;
            a.B = B; a.T = T; a.H = H; a.H_kv = Hkv; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.chunk = 16;
            if (vl) { a.offsets = off; a.n_seqs = 4; }
            if (mi == 1 || mi == 2) { a.mask = LATTN_MASK_WINDOW; a.window = mi == 1 ? 5 : 40; }
            if (mi == 3) a.mask = LATTN_MASK_FULL;
            if (mi >= 4) { a.mask = LATTN_MASK_FN; a.visible = fb_visible; a.visible_block = mi == 5 ? fb_visible_block : NULL; }
            n[0] = nq; n[1] = nk; n[2] = nv;
            for (w = 0; w < 3; w++) { want[w] = fnew(n[w]); got[w] = fnew(n[w]); again[w] = fnew(n[w]); }
            g.dout = dout; g.dlse = combo % 3 ? dlse : NULL;
            attn_bw_run(ctx, &a, &g, want, n, 0);
            if (saved) {
                a.o = o; a.lse = lse;
                CHECK(lattn_attn_chunk(ctx, &a) == LATTN_OK, "attn_chunk: %s", lattn_ctx_error(ctx));
            }
            attn_bw_run(ctx, &a, &g, got, n, 1);
            for (w = 0; w < 3; w++)
                CHECK(rel_rms(got[w], want[w], n[w]) <= 1e-5, "attn_chunk_backward = attn_ref_backward: %s (%s, %s, T = %lld, K = %lld, V = %lld, %s%s): %.3g",
                      names[w], masks[mi], gqa ? "GQA" : "MHA", (long long)T, (long long)K, (long long)V, vl ? "variable lengths" : "B = 2",
                      saved ? ", forward saved" : "", rel_rms(got[w], want[w], n[w]));
            for (th = 2; th <= 3 && ti == 5; th++) {   /* the same bits at any thread count; at 3 twice, in the kept workspace */
                int rep;
                ctx->n_threads = th;
                ctx->keep_workspace = th == 3;
                for (rep = 0; rep < 1 + (th == 3); rep++) {
                    attn_bw_run(ctx, &a, &g, again, n, 1);
                    for (w = 0; w < 3; w++) same &= memcmp(got[w], again[w], n[w] * sizeof(float)) == 0;
                }
                ctx->n_threads = 1;
                ctx->keep_workspace = 0;
            }
            lattn_ctx_trim(ctx);
            CHECK(same, "attn_chunk_backward: the same bits at 1, 2 and 3 threads, and in the kept workspace (%s)", masks[mi]);
            for (w = 0; w < 3; w++) { free(want[w]); free(got[w]); free(again[w]); }
            free(q); free(k); free(v); free(dout); free(dlse); free(o); free(lse);
        }
    for (ci = 0; ci < 3; ci++) {   /* the default tile (128 rows, T past it) on the cpu; the trn2 profile; dv alone */
        const int64_t T = 300, H = 2, K = 64, V = 48;
        const size_t nq = (size_t)(T * H * K), nv = (size_t)(T * H * V);
        float *q = fnormal(r, nq), *k = fnormal(r, nq), *v = fnormal(r, nv), *dout = fnormal(r, nv), *want[3], *got[3];
        size_t n[3];
        lattn_attn_args a = LATTN__ZERO;
        lattn_attn_grads g = LATTN__ZERO;
        int w;
        n[0] = n[1] = nq; n[2] = nv;
        for (w = 0; w < 3; w++) { want[w] = fnew(n[w]); got[w] = fnew(n[w]); }
        a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v;
        g.dout = dout;
        attn_bw_run(ctx, &a, &g, want, n, 0);
        if (ci == 1) ctx->profile = lattn_profile_trn2();
        if (ci < 2) attn_bw_run(ctx, &a, &g, got, n, 1);
        else {
            g.dv = got[2];
            CHECK(lattn_attn_chunk_backward(ctx, &a, &g) == LATTN_OK, "attn_chunk_backward, dv alone: %s", lattn_ctx_error(ctx));
        }
        ctx->profile = NULL;
        for (w = ci < 2 ? 0 : 2; w < 3; w++)
            CHECK(rel_rms(got[w], want[w], n[w]) <= 1e-5, "attn_chunk_backward = attn_ref_backward: %s (%s): %.3g", names[w],
                  ci == 0 ? "default tile" : ci == 1 ? "trn2" : "dv alone", rel_rms(got[w], want[w], n[w]));
        for (w = 0; w < 3; w++) { free(want[w]); free(got[w]); }
        free(q); free(k); free(v); free(dout);
    }
}
/* ℒ = Σ dy·y from the TCN stack's _ref float64 output. */
static double tcn_loss(lattn_ctx *ctx, lattn_tcn_args a, const float *dy, size_t ny, double *y64, float *y) {
    double l = 0;
    size_t i;
    a.y = y; a.y64 = y64;
    lattn_tcn_ref(ctx, &a);
    for (i = 0; i < ny; i++) l += (double)dy[i] * y64[i];
    return l;
}
/* ℒ = Σ dout·out of the demo model's forward_ref (float64 throughout). */
static double tcn_demo_loss(lattn_ctx *ctx, const lattn_tcn_demo *m, int64_t B, int64_t T, const float *x, const double *dout) {
    double l = 0, out64[4];
    float out[4];
    int64_t b;
    lattn_tcn_demo_forward_ref(ctx, m, B, T, x, out, out64);
    for (b = 0; b < B; b++) l += dout[b] * out64[b];
    return l;
}
/* lattn_tcn_chunk_backward against lattn_tcn_ref_backward: T = 0, 1, 17 and 300 (two row blocks,
   dilations past the start), D not a multiple of the vector width, W = 2 and 3; outputs poisoned;
   the same bits at 1, 2 and 3 threads; refusals write nothing. */
static void test_tcn_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const int64_t Ts[4] = { 0, 1, 17, 300 }, Ds[4] = { 5, 3, 9, 32 }, Ws[4] = { 3, 2, 3, 3 }, Ls[4] = { 2, 3, 4, 4 };
    int ci;
    for (ci = 0; ci < 4; ci++) {
        const int64_t B = 2, T = Ts[ci], D = Ds[ci], W = Ws[ci], L = Ls[ci];
        const size_t ny = (size_t)(B * T * D), nw = (size_t)(D * D * W), per = nw + 3 * (size_t)D;
        lattn_tcn_layer ly[4];
        lattn_tcn_layer_grads lr[4], lc[4];
        lattn_tcn_args a;
        lattn_tcn_grads gr, gc;
        float *x = fnormal(r, ny), *dy = fnormal(r, ny), *p[16], *wr = fnew(ny + L * per), *wc = fnew(ny + L * per), *again = fnew(ny + L * per);
        double err[2] = { 0, 0 };
        int l, th, same = 1;
        memset(&a, 0, sizeof a);
        for (l = 0; l < L; l++) {
            size_t c;
            p[4 * l] = fnormal(r, nw); p[4 * l + 1] = fnormal(r, (size_t)D); p[4 * l + 2] = frand(r, (size_t)D, 0.5f, 1.5f); p[4 * l + 3] = fnormal(r, (size_t)D);
            for (c = 0; c < nw; c++) p[4 * l][c] *= (float)(1.0 / sqrt((double)(D * W)));
            ly[l].w = p[4 * l]; ly[l].b = p[4 * l + 1]; ly[l].ln_w = p[4 * l + 2]; ly[l].ln_b = p[4 * l + 3];
        }
        a.B = B; a.T = T; a.D = D; a.W = W; a.n_layers = L; a.layers = ly; a.x = x;
        for (th = 0; th < 4; th++) {     /* the reference, then the chunk form at 1, 2 and 3 threads */
            float *o = th == 0 ? wr : th == 1 ? wc : again;
            lattn_tcn_layer_grads *lg = th == 0 ? lr : lc;
            lattn_tcn_grads *g = th == 0 ? &gr : &gc;
            poison(o, ny + L * per);
            memset(g, 0, sizeof *g);
            g->dout = dy; g->dx = o; g->layers = lg;
            for (l = 0; l < L; l++) {
                float *q = o + ny + (size_t)l * per;
                memset(&lg[l], 0, sizeof lg[l]);
                lg[l].dw = q; lg[l].db = q + nw; lg[l].dln_w = q + nw + D; lg[l].dln_b = q + nw + 2 * D;
            }
            ctx->n_threads = th < 2 ? 1 : th;
            CHECK((th == 0 ? lattn_tcn_ref_backward : lattn_tcn_chunk_backward)(ctx, &a, g) == LATTN_OK, "tcn backward: %s", lattn_ctx_error(ctx));
            if (th >= 2) same &= memcmp(wc, again, (ny + L * per) * sizeof(float)) == 0;
        }
        ctx->n_threads = 1;
        err[0] = rel_rms(wc, wr, ny);
        err[1] = rel_rms(wc + ny, wr + ny, (size_t)L * per);
        CHECK(err[0] <= 1e-5 && err[1] <= 1e-5 && same, "tcn_chunk_backward = tcn_ref_backward (T = %lld, D = %lld, W = %lld, %lld layers): dx %.3g, "
              "weights %.3g; the same bits at 1, 2, 3 threads: %d", (long long)T, (long long)D, (long long)W, (long long)L, err[0], err[1], same);
        if (ci == 2) {
            gc.dout = NULL;
            poison(wc, ny + L * per);
            CHECK(lattn_tcn_chunk_backward(ctx, &a, &gc) == LATTN_E_NULL && lattn_tcn_chunk_backward(ctx, &a, NULL) == LATTN_E_NULL &&
                  isnan(wc[0]) && isnan(wc[ny]), "tcn_chunk_backward: dout or grads NULL refused, nothing written");
            a.n_layers = LATTN_TCN_MAX_LAYERS + 1;
            gc.dout = dy;
            CHECK(lattn_tcn_chunk_backward(ctx, &a, &gc) == LATTN_E_SHAPE && isnan(wc[0]), "tcn_chunk_backward: too many layers refused");
            a.n_layers = L;
        }
        for (l = 0; l < 4 * L; l++) free(p[l]);
        free(x); free(dy); free(wr); free(wc); free(again);
    }
}
/* lattn_tcn_ref_backward and lattn_tcn_demo_backward_ref against central differences (3 layers,
   W = 2, dilations 1, 2, 4 reaching past the start); the article's own float64 gradients are
   matched in test_models. */
static void test_tcn_backward(lattn_ctx *ctx, lattn_rng *r) {
    const int64_t B = 2, T = 9, D = 3, W = 2, L = 3;
    const size_t ny = (size_t)(B * T * D), nw = (size_t)(D * D * W);
    lattn_tcn_layer ly[3];
    lattn_tcn_layer_grads lg[3];
    lattn_tcn_args a;
    lattn_tcn_grads g;
    float *x = fnormal(r, ny), *dy = fnormal(r, ny), *y = fnew(ny), *p[12], *dxf = fnew(ny);
    double *y64 = (double *)malloc(ny * sizeof(double)), *dx = (double *)malloc(ny * sizeof(double)), *ad[12], worst = 0;
    size_t c;
    int l, w, bad = 0;
    memset(&a, 0, sizeof a);
    memset(&g, 0, sizeof g);
    for (l = 0; l < L; l++) {
        p[4 * l] = fnormal(r, nw); p[4 * l + 1] = fnormal(r, (size_t)D); p[4 * l + 2] = frand(r, (size_t)D, 0.5f, 1.5f); p[4 * l + 3] = fnormal(r, (size_t)D);
        for (c = 0; c < nw; c++) p[4 * l][c] *= 0.5f;
        ly[l].w = p[4 * l]; ly[l].b = p[4 * l + 1]; ly[l].ln_w = p[4 * l + 2]; ly[l].ln_b = p[4 * l + 3];
        for (w = 0; w < 4; w++) ad[4 * l + w] = (double *)malloc((w == 0 ? nw : (size_t)D) * sizeof(double));
        memset(&lg[l], 0, sizeof lg[l]);
        lg[l].dw64 = ad[4 * l]; lg[l].db64 = ad[4 * l + 1]; lg[l].dln_w64 = ad[4 * l + 2]; lg[l].dln_b64 = ad[4 * l + 3];
    }
    a.B = B; a.T = T; a.D = D; a.W = W; a.n_layers = L; a.layers = ly; a.x = x;
    g.dout = dy; g.dx = dxf; g.dx64 = dx; g.layers = lg;
    CHECK(lattn_tcn_ref_backward(ctx, &a, &g) == LATTN_OK, "tcn backward: %s", lattn_ctx_error(ctx));
    for (w = -1; w < 12; w++) {
        float *v = w < 0 ? x : p[w];
        const double *an = w < 0 ? dx : ad[w];
        const size_t n = w < 0 ? ny : w % 4 == 0 ? nw : (size_t)D;
        double gmax = 0;
        for (c = 0; c < n; c++) gmax = fmax(gmax, fabs(an[c]));
        for (c = 0; c < n; c += 1 + (size_t)(lattn_rng_next(r) % 2)) {
            double fd;
            FD_RICHARDSON(&v[c], tcn_loss(ctx, a, dy, ny, y64, y), fd);
            fd_compare(fd, an[c], gmax, &worst, &bad);
        }
    }
    CHECK(bad == 0, "tcn_ref_backward = central differences (x and every layer's weights): worst %.3g", worst);
    {   /* the demo model: embedding -> the stack -> the head on the last token */
        lattn_tcn_demo_config cfg;
        lattn_tcn_demo m;
        double dout[2] = { 0.7, -1.3 }, *gm = NULL;
        float *xi = fnormal(r, (size_t)(2 * 11 * 2)), *dxi = fnew((size_t)(2 * 11 * 2));
        size_t i;
        int64_t ti;
        cfg.d_in = 2; cfg.D = 4; cfg.W = 3; cfg.n_layers = 2;
        worst = 0; bad = 0;
        CHECK(lattn_tcn_demo_init(ctx, &m, &cfg, 9) == LATTN_OK, "demo init");
        gm = (double *)malloc(m.n_params * sizeof(double));
        CHECK(lattn_tcn_demo_backward_ref(ctx, &m, 2, 11, xi, dout, NULL, gm, dxi) == LATTN_OK, "demo backward: %s", lattn_ctx_error(ctx));
        for (ti = 0; ti < m.n_tensors; ti++) {   /* every tensor, a few coordinates each */
            const size_t off = (size_t)(m.tensors[ti].data - m.arena), n = m.tensors[ti].count;
            double gmax = 0;
            for (i = 0; i < n; i++) gmax = fmax(gmax, fabs(gm[off + i]));
            for (i = 0; i < n; i += 1 + (size_t)(lattn_rng_next(r) % 5)) {
                double fd;
                FD_RICHARDSON(&m.arena[off + i], tcn_demo_loss(ctx, &m, 2, 11, xi, dout), fd);
                fd_compare(fd, gm[off + i], gmax, &worst, &bad);
            }
        }
        for (i = 0; i < 44; i += 3) {
            double fd;
            FD_RICHARDSON(&xi[i], tcn_demo_loss(ctx, &m, 2, 11, xi, dout), fd);
            fd_compare(fd, dxi[i], 1.0, &worst, &bad);
        }
        CHECK(bad == 0, "tcn_demo_backward_ref = central differences (every tensor, dx): worst %.3g", worst);
        CHECK(lattn_tcn_demo_backward_ref(ctx, &m, 2, 11, xi, NULL, NULL, gm, NULL) == LATTN_E_NULL, "demo backward: dout NULL");
        {   /* the float32 backward against the double one */
            const float doutf[2] = { 0.7f, -1.3f };
            float *gf = fnew(m.n_params), *gr = fnew(m.n_params), *dxf2 = fnew(44), *dxr = fnew(44);
            CHECK(lattn_tcn_demo_backward_ref(ctx, &m, 2, 11, xi, dout, gr, NULL, dxr) == LATTN_OK &&
                  lattn_tcn_demo_backward(ctx, &m, 2, 11, xi, doutf, gf, dxf2) == LATTN_OK, "demo backward: %s", lattn_ctx_error(ctx));
            CHECK(rel_rms(gf, gr, m.n_params) <= 1e-5 && rel_rms(dxf2, dxr, 44) <= 1e-5, "tcn_demo_backward (float32) = backward_ref: weights %.3g, dx %.3g",
                  rel_rms(gf, gr, m.n_params), rel_rms(dxf2, dxr, 44));
            poison(gf, m.n_params);
            CHECK(lattn_tcn_demo_backward(ctx, &m, 2, 11, xi, doutf, NULL, NULL) == LATTN_E_NULL &&
                  lattn_tcn_demo_backward(ctx, &m, 0, 11, xi, doutf, gf, NULL) == LATTN_E_SHAPE && isnan(gf[0]), "demo backward: grad NULL, B = 0 refused");
            free(gf); free(gr); free(dxf2); free(dxr);
        }
        free(gm); free(xi); free(dxi);
        lattn_tcn_demo_free(ctx, &m);
    }
    for (w = 0; w < 12; w++) { free(p[w]); free(ad[w]); }
    free(x); free(dy); free(y); free(dxf); free(y64); free(dx);
}
/* ---------------------------------------------------------------------------------------------- */
/* optim: AdamW against PyTorch's single-tensor AdamW, Muon against the reference (float64 runs)   */
/* ---------------------------------------------------------------------------------------------- */
static void test_optim(void) {
    lattn_ctx ctx;
    int ci;
    lattn_ctx_init(&ctx);
    for (ci = 0; ci < 2; ci++) {
        char path[128];
        lattn_st_file f;
        lattn_adamw_config c;
        float *w, *m, *v, *g, *want;
        double *wd, *md, *vd, *gd, *wantd, *wm, *wv, worst32 = 0, worst64 = 0;
        size_t n, i, same = 0;
        int st;
        snprintf(path, sizeof path, "tests/external/grad/adamw_%d.safetensors", ci);
        if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        n = lattn_st_find(&f, "param0")->count;
        w = tensor_f32(&f, "param0"); g = tensor_f32(&f, "grads"); want = tensor_f32(&f, "param_f32");
        wantd = tensor_f64(&f, "param_f64", NULL); wm = tensor_f64(&f, "exp_avg_f64", NULL); wv = tensor_f64(&f, "exp_avg_sq_f64", NULL);
        m = fnew(n); v = fnew(n);
        wd = (double *)malloc(n * sizeof(double)); md = (double *)calloc(n, sizeof(double)); vd = (double *)calloc(n, sizeof(double));
        gd = (double *)malloc(5 * n * sizeof(double));
        for (i = 0; i < n; i++) { wd[i] = w[i]; m[i] = v[i] = 0.0f; }
        for (i = 0; i < 5 * n; i++) gd[i] = g[i];
        c.lr = strtod(lattn_st_meta(&f, "lr"), NULL); c.beta1 = strtod(lattn_st_meta(&f, "beta1"), NULL);
        c.beta2 = strtod(lattn_st_meta(&f, "beta2"), NULL); c.eps = strtod(lattn_st_meta(&f, "eps"), NULL);
        c.weight_decay = strtod(lattn_st_meta(&f, "weight_decay"), NULL);
        for (st = 0; st < 5; st++) {
            CHECK(lattn_adamw_step(&ctx, &c, st + 1, n, w, g + (size_t)st * n, m, v) == LATTN_OK &&
                  lattn_adamw_step64(&ctx, &c, st + 1, n, wd, gd + (size_t)st * n, md, vd) == LATTN_OK, "adamw step %d", st + 1);
            for (i = 0; i < n; i++) {
                const double a = want[(size_t)st * n + i], b = wantd[(size_t)st * n + i];
                worst32 = fmax(worst32, fabs((double)w[i] - a) / fmax(fabs(a), 1e-30));
                worst64 = fmax(worst64, fabs(wd[i] - b) / fmax(fabs(b), 1e-30));
                same += st == 4 && same_bits(&w[i], &want[(size_t)st * n + i], 1);
            }
        }
        CHECK(worst64 <= 1e-15 && rel_rms_dd(md, wm, n) <= 1e-15 && rel_rms_dd(vd, wv, n) <= 1e-15,
              "adamw_%d: lattn_adamw_step64 = PyTorch's float64 AdamW over 5 steps (worst %.3g)", ci, worst64);
        CHECK(worst32 <= 1e-6, "adamw_%d: lattn_adamw_step = PyTorch's float32 AdamW within 1e-6 (worst %.3g; %zu of %zu bit-identical after 5 steps)",
              ci, worst32, same, n);
        free(w); free(g); free(want); free(wantd); free(wm); free(wv); free(m); free(v); free(wd); free(md); free(vd); free(gd);
        lattn_st_free(&ctx, &f);
    }
    for (ci = 0; ci < 2; ci++) {   /* Muon's NS5: the reference patched to float64, on 48x80, 80x48 and 64x64 */
        static const char *const sh[3] = { "48x80", "80x48", "64x64" };
        static const int64_t Rs[3] = { 48, 80, 64 }, Cs[3] = { 80, 48, 64 };
        char path[128], nm[64];
        lattn_st_file f;
        int k;
        snprintf(path, sizeof path, "tests/external/grad/muon_ns5_%d.safetensors", ci);
        if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        for (k = 0; k < 3; k++) {
            const size_t n = (size_t)(Rs[k] * Cs[k]);
            float *g, *x = fnew(n);
            double *gd = (double *)malloc(n * sizeof(double)), *xd = (double *)malloc(n * sizeof(double)), *want;
            size_t i;
            snprintf(nm, sizeof nm, "G_%s", sh[k]); g = tensor_f32(&f, nm);
            snprintf(nm, sizeof nm, "X_f64_%s", sh[k]); want = tensor_f64(&f, nm, NULL);
            for (i = 0; i < n; i++) gd[i] = g[i];
            poison(x, n);
            CHECK(lattn_muon_ns5_64(&ctx, Rs[k], Cs[k], 5, gd, xd) == LATTN_OK && lattn_muon_ns5(&ctx, Rs[k], Cs[k], 5, LATTN_NS_FP32, g, x) == LATTN_OK, "ns5");
            CHECK(rel_rms_dd(xd, want, n) <= 1e-12 && rel_rms_d(x, want, n) <= 1e-5, "muon_ns5_%d %s: float64 %.3g, float32 %.3g against the reference",
                  ci, sh[k], rel_rms_dd(xd, want, n), rel_rms_d(x, want, n));
            {   /* the bf16 mode against the float64 reference: spec §1.1's bounds (< 5e-2, cosine > 0.999) */
                double dot = 0, na = 0, nb = 0;
                CHECK(lattn_muon_ns5(&ctx, Rs[k], Cs[k], 5, LATTN_NS_BF16, g, x) == LATTN_OK, "ns5 bf16");
                for (i = 0; i < n; i++) { dot += (double)x[i] * want[i]; na += (double)x[i] * x[i]; nb += want[i] * want[i]; }
                CHECK(rel_rms_d(x, want, n) < 5e-2 && dot / sqrt(na * nb) > 0.999, "muon_ns5_%d %s, bf16 mode: %.3g from float64, cosine %.5f", ci, sh[k],
                      rel_rms_d(x, want, n), dot / sqrt(na * nb));
            }
            free(g); free(x); free(gd); free(xd); free(want);
        }
        lattn_st_free(&ctx, &f);
    }
    for (ci = 0; ci < 2; ci++) {   /* three Muon steps (Nesterov, wd 0.01): the reference patched to float64 */
        char path[128];
        lattn_st_file f;
        const lattn_st_tensor *p0;
        lattn_muon_config c = lattn_muon_default();
        float *w, *g, *m, *gs;
        double *wd, *gd, *md, *gsd, *want, *wm, worst32 = 0, worst64 = 0;
        int64_t R, C;
        size_t n, i;
        int st;
        snprintf(path, sizeof path, "tests/external/grad/muon_step_%d.safetensors", ci);
        if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        p0 = lattn_st_find(&f, "param0");
        R = p0->shape[0]; C = p0->shape[1]; n = p0->count;
        c.weight_decay = strtod(lattn_st_meta(&f, "weight_decay"), NULL);
        w = tensor_f32(&f, "param0"); g = tensor_f32(&f, "grads"); want = tensor_f64(&f, "param_f64", NULL); wm = tensor_f64(&f, "momentum_f64", NULL);
        m = fnew(n); gs = fnew(n);
        wd = (double *)malloc(n * sizeof(double)); md = (double *)calloc(n, sizeof(double)); gsd = (double *)malloc(n * sizeof(double));
        gd = (double *)malloc(3 * n * sizeof(double));
        for (i = 0; i < n; i++) { wd[i] = w[i]; m[i] = 0.0f; }
        for (i = 0; i < 3 * n; i++) gd[i] = g[i];
        for (st = 0; st < 3; st++) {
            double e32 = 0, e64 = 0, den = 0;
            memcpy(gs, g + (size_t)st * n, n * sizeof(float));
            memcpy(gsd, gd + (size_t)st * n, n * sizeof(double));
            CHECK(lattn_muon_step(&ctx, &c, R, C, w, gs, m) == LATTN_OK && lattn_muon_step64(&ctx, &c, R, C, wd, gsd, md) == LATTN_OK, "muon step");
            for (i = 0; i < n; i++) {
                const double t = want[(size_t)st * n + i];
                e32 += ((double)w[i] - t) * ((double)w[i] - t);
                e64 += (wd[i] - t) * (wd[i] - t);
                den += t * t;
            }
            worst32 = fmax(worst32, sqrt(e32 / den));
            worst64 = fmax(worst64, sqrt(e64 / den));
        }
        CHECK(worst64 <= 1e-12 && rel_rms_dd(md, wm, n) <= 1e-12 && worst32 <= 1e-5,
              "muon_step_%d (%lldx%lld): float64 %.3g, float32 %.3g against the reference over 3 steps", ci, (long long)R, (long long)C, worst64, worst32);
        free(w); free(g); free(want); free(wm); free(m); free(gs); free(wd); free(md); free(gsd); free(gd);
        lattn_st_free(&ctx, &f);
    }
    {   /* the shape scale: LATTN_MUON_SCALE_RMS_MATCH's update is 0.2·sqrt(max(R, C)) / sqrt(max(1, R/C)) times the reference's */
        static const int64_t dims[2][2] = { { 12, 20 }, { 20, 12 } };
        lattn_rng rng = lattn_rng_seed(g_seed + 5);
        int d;
        for (d = 0; d < 2; d++) {
            const int64_t R = dims[d][0], C = dims[d][1];
            const double want = 0.2 * sqrt(20.0) / sqrt(fmax(1.0, (double)R / (double)C));
            float W0[240], G0[240], W[2][240], G[240], M[240];
            double worst = 0;
            int s, i;
            lattn_muon_config c = lattn_muon_default();
            lattn_rng_fill_normal(&rng, W0, 240, 0.0f, 1.0f);
            lattn_rng_fill_normal(&rng, G0, 240, 0.0f, 1.0f);
            c.lr = 1e-2;
            for (s = 0; s < 2; s++) {
                c.scale = s ? LATTN_MUON_SCALE_RMS_MATCH : LATTN_MUON_SCALE_SHAPE_RATIO;
                memcpy(W[s], W0, sizeof W0); memcpy(G, G0, sizeof G0); memset(M, 0, sizeof M);
                CHECK(lattn_muon_step(&ctx, &c, R, C, W[s], G, M) == LATTN_OK, "muon step, scale %d", s);
            }
            for (i = 0; i < 240; i++) {
                const double a = (double)W[0][i] - W0[i], b = (double)W[1][i] - W0[i];
                if (fabs(a) > 1e-4) worst = fmax(worst, fabs(b / a - want) / want);
            }
            CHECK(worst < 1e-2, "Muon %lldx%lld, RMS-match scale: the update is %.4f x the shape-ratio one (worst relative deviation %.2g; float32 W)",
                  (long long)R, (long long)C, want, worst);
            c.scale = (lattn_muon_scale)2;
            CHECK(lattn_muon_step(&ctx, &c, R, C, W[0], G, M) == LATTN_E_DOMAIN, "an unknown scale refused");
        }
    }
    {   /* Muon: refusals write nothing; the zero matrix stays finite (the 1e-7) */
        lattn_muon_config c = lattn_muon_default(), bad = c;
        float W[6] = { 1, 2, 3, 4, 5, 6 }, G[6] = { 0 }, M[6] = { 0 }, X[6];
        int i, fin = 1;
        bad.momentum = 1.0;
        CHECK(lattn_muon_step(&ctx, &bad, 2, 3, W, G, M) == LATTN_E_DOMAIN && lattn_muon_step(&ctx, &c, 0, 3, W, G, M) == LATTN_E_SHAPE &&
              lattn_muon_step(&ctx, &c, 2, 3, NULL, G, M) == LATTN_E_NULL && W[0] == 1 && W[5] == 6, "muon: refusals write nothing");
        CHECK(lattn_muon_ns5(&ctx, 2, 3, 5, LATTN_NS_FP32, G, X) == LATTN_OK, "ns5 of zeros");
        for (i = 0; i < 6; i++) fin &= X[i] == 0.0f;
        CHECK(fin, "ns5 of the zero matrix is zero");
        G[4] = NAN;
        CHECK(lattn_muon_step(&ctx, &c, 2, 3, W, G, M) == LATTN_OK, "muon step, a NaN gradient");
        for (i = 0, fin = 0; i < 6; i++) fin += isnan(W[i]) != 0;
        CHECK(fin == 6 && isnan(M[4]) && M[0] == 0.0f, "muon: a NaN gradient element makes the whole matrix's W NaN (the norm), M NaN only there");
    }
    {   /* bad input refused without writing; a NaN gradient poisons its own element only */
        lattn_adamw_config c = lattn_adamw_default(), bad;
        float w[3] = { 1, 2, 3 }, g[3] = { 0.5f, NAN, -0.5f }, m[3] = { 0, 0, 0 }, v[3] = { 0, 0, 0 };
        bad = c; bad.beta1 = 1.0;
        CHECK(lattn_adamw_step(&ctx, &bad, 1, 3, w, g, m, v) == LATTN_E_DOMAIN, "adamw: beta1 = 1 refused");
        bad = c; bad.lr = NAN;
        CHECK(lattn_adamw_step(&ctx, &bad, 1, 3, w, g, m, v) == LATTN_E_DOMAIN, "adamw: NaN lr refused");
        bad = c; bad.eps = -1;
        CHECK(lattn_adamw_step(&ctx, &bad, 1, 3, w, g, m, v) == LATTN_E_DOMAIN, "adamw: eps < 0 refused");
        CHECK(lattn_adamw_step(&ctx, &c, 0, 3, w, g, m, v) == LATTN_E_DOMAIN, "adamw: step 0 refused");
        CHECK(lattn_adamw_step(&ctx, &c, 1, 3, w, NULL, m, v) == LATTN_E_NULL && lattn_adamw_step(&ctx, NULL, 1, 3, w, g, m, v) == LATTN_E_NULL,
              "adamw: NULL refused");
        CHECK(w[0] == 1 && w[1] == 2 && w[2] == 3 && m[1] == 0 && v[1] == 0, "adamw: nothing written by a refused call");
        CHECK(lattn_adamw_step(&ctx, &c, 1, 3, w, g, m, v) == LATTN_OK && isnan(w[1]) && isnan(m[1]) && isnan(v[1]) && !isnan(w[0]) &&
              !isnan(w[2]) && w[0] < 1 && w[2] > 3, "adamw: a NaN gradient makes its element NaN, the others step");
        CHECK(lattn_adamw_step(&ctx, &c, 1, 0, NULL, NULL, NULL, NULL) == LATTN_OK, "adamw: n = 0");
    }
    lattn_ctx_free(&ctx);
}

/* ---------------------------------------------------------------------------------------------- */
/* sharded: the sharded Muon step on R emulated ranks, byte for byte against the one-device step  */
/* ---------------------------------------------------------------------------------------------- */
#define SH_NM 7
#define SH_STEPS 3
static const lattn_mat_desc sh_mats[SH_NM] = { { 37, 20, 0 }, { 20, 37, 0 }, { 16, 16, 1 }, { 3, 40, 1 }, { 45, 9, 2 }, { 23, 11, 2 }, { 64, 24, 3 } };
typedef struct sh_run {
    lattn_muon_config c;
    lattn_muon_scheme scheme;
    const int *owner;
    float *W0[SH_NM], *G[SH_NM][SH_STEPS];      /* whole matrices: start, the gradients of each step */
    float *Wref[SH_NM][SH_STEPS], *Mref[SH_NM][SH_STEPS], *Uref[SH_NM][SH_STEPS];   /* the one-device run */
    int bad[LATTN_EMU_MAX];                     /* per rank: steps whose shards differ, or a wrong status / count */
    lattn_status want;                          /* the status every step must return (a failing collective) */
} sh_run;
/* One rank: its rows of every matrix, SH_STEPS steps, each compared with the one-device run. */
static void sh_rank(const lattn_comm *comm, void *arg) {
    sh_run *a = (sh_run *)arg;
    lattn_ctx ctx;
    float *W[SH_NM], *G[SH_NM], *M[SH_NM];
    int i, s;
    lattn_ctx_init(&ctx);
    ctx.n_threads = 1;
    for (i = 0; i < SH_NM; i++) {
        int64_t st, len;
        lattn_shard_rows(sh_mats[i].rows, comm->size, comm->rank, &st, &len);
        W[i] = fnew((size_t)(len * sh_mats[i].cols)); G[i] = fnew((size_t)(len * sh_mats[i].cols)); M[i] = fnew((size_t)(len * sh_mats[i].cols));
        if (len) memcpy(W[i], a->W0[i] + st * sh_mats[i].cols, (size_t)(len * sh_mats[i].cols) * 4);
        memset(M[i], 0, (size_t)(len * sh_mats[i].cols) * 4);
    }
    for (s = 0; s < SH_STEPS; s++) {
        lattn_muon_traffic tr, want;
        for (i = 0; i < SH_NM; i++) {
            int64_t st, len;
            lattn_shard_rows(sh_mats[i].rows, comm->size, comm->rank, &st, &len);
            if (len) memcpy(G[i], a->G[i][s] + st * sh_mats[i].cols, (size_t)(len * sh_mats[i].cols) * 4);
        }
        if (a->want != LATTN_OK) {   /* a failing collective: that status, nothing changed */
            float *w0 = fnew((size_t)(sh_mats[6].rows * sh_mats[6].cols));
            int64_t st, len;
            lattn_shard_rows(sh_mats[6].rows, comm->size, comm->rank, &st, &len);
            memcpy(w0, W[6], (size_t)(len * sh_mats[6].cols) * 4);
            if (lattn_muon_step_sharded(&ctx, &a->c, comm, SH_NM, sh_mats, a->owner, a->scheme, W, G, M, NULL) != a->want ||
                !same_bits(w0, W[6], (size_t)(len * sh_mats[6].cols)) || (len && (M[6][0] != 0.0f || G[6][0] != a->G[6][s][st * sh_mats[6].cols])))
                a->bad[comm->rank]++;
            free(w0);
            break;
        }
        if (lattn_muon_step_sharded(&ctx, &a->c, comm, SH_NM, sh_mats, a->owner, a->scheme, W, G, M, &tr) != LATTN_OK ||
            lattn_muon_traffic_of(&ctx, &a->c, comm->size, comm->rank, SH_NM, sh_mats, a->owner, a->scheme, &want) != LATTN_OK ||
            memcmp(&tr, &want, sizeof tr) != 0) {
            a->bad[comm->rank]++;
            continue;
        }
        for (i = 0; i < SH_NM; i++) {
            int64_t st, len;
            size_t e;
            lattn_shard_rows(sh_mats[i].rows, comm->size, comm->rank, &st, &len);
            e = (size_t)(len * sh_mats[i].cols);
            if (!same_bits(W[i], a->Wref[i][s] + st * sh_mats[i].cols, e) || !same_bits(M[i], a->Mref[i][s] + st * sh_mats[i].cols, e) ||
                !same_bits(G[i], a->Uref[i][s] + st * sh_mats[i].cols, e))
                a->bad[comm->rank]++;
        }
    }
    for (i = 0; i < SH_NM; i++) { free(W[i]); free(G[i]); free(M[i]); }
    lattn_ctx_free(&ctx);
}
/* The one-device reference (two threads) for a run's configuration. */
static void sh_reference(lattn_ctx *ctx, sh_run *a) {
    int i, s;
    for (i = 0; i < SH_NM; i++) {
        const size_t e = (size_t)(sh_mats[i].rows * sh_mats[i].cols);
        float *w = fnew(e), *m = fnew(e);
        memcpy(w, a->W0[i], e * 4);
        memset(m, 0, e * 4);
        for (s = 0; s < SH_STEPS; s++) {
            float *g = a->Uref[i][s];
            memcpy(g, a->G[i][s], e * 4);
            CHECK(lattn_muon_step(ctx, &a->c, sh_mats[i].rows, sh_mats[i].cols, w, g, m) == LATTN_OK, "one-device step");
            memcpy(a->Wref[i][s], w, e * 4);
            memcpy(a->Mref[i][s], m, e * 4);
        }
        free(w); free(m);
    }
}
static int sh_bad(const sh_run *a, int R) {
    int r, n = 0;
    for (r = 0; r < R; r++) n += a->bad[r];
    return n;
}
/* The Laplace 3B Muon set (spec muon.md §3): per layer W_qkvg, W_o, W_12 (stacked), W_3. */
static void sh_laplace(lattn_mat_desc *d) {
    int l;
    for (l = 0; l < 24; l++) {
        const lattn_mat_desc q = { 9216, 3072, 0 }, o = { 3072, 3072, 0 }, w12 = { 16384, 3072, 0 }, w3 = { 3072, 8192, 0 };
        d[4 * l] = q; d[4 * l + 1] = o; d[4 * l + 2] = w12; d[4 * l + 3] = w3;
        d[4 * l].layer = d[4 * l + 1].layer = d[4 * l + 2].layer = d[4 * l + 3].layer = l;
    }
}
static void test_sharded(void) {
    static const int Rs[6] = { 1, 2, 3, 5, 8, 64 };
    static const char *const pol[3] = { "by layer", "round robin", "LPT" }, *const sch[3] = { "A2A", "gather", "all-gather" };
    lattn_ctx ctx;
    lattn_rng rng = lattn_rng_seed(g_seed + 77);
    sh_run a;
    int i, s, ri, combo = 0;
    lattn_ctx_init(&ctx);
    ctx.n_threads = 2;
    memset(&a, 0, sizeof a);
    for (i = 0; i < SH_NM; i++) {
        const size_t e = (size_t)(sh_mats[i].rows * sh_mats[i].cols);
        a.W0[i] = fnew(e);
        lattn_rng_fill_normal(&rng, a.W0[i], e, 0.0f, 0.1f);
        for (s = 0; s < SH_STEPS; s++) {
            a.G[i][s] = fnew(e); a.Wref[i][s] = fnew(e); a.Mref[i][s] = fnew(e); a.Uref[i][s] = fnew(e);
            lattn_rng_fill_normal(&rng, a.G[i][s], e, 0.0f, 1.0f);
        }
    }
    for (ri = 0; ri < (g_quick ? 4 : 6); ri++) {
        const int R = Rs[ri];
        int sc, po, mode;
        for (mode = 0; mode < 2; mode++)
            for (sc = 0; sc < 3; sc++)
                for (po = 0; po < (sc == 0 ? 3 : 1); po++) {
                    int owner[SH_NM];
                    lattn_emu e;
                    a.c = lattn_muon_default();
                    a.c.ns_mode = mode ? LATTN_NS_BF16 : LATTN_NS_FP32;
                    a.c.nesterov = combo % 2 == 0;
                    a.c.weight_decay = combo / 2 % 2 ? 0.01 : 0.0;
                    combo++;
                    a.scheme = (lattn_muon_scheme)sc;
                    a.owner = sc == 0 ? owner : NULL;
                    a.want = LATTN_OK;
                    CHECK(lattn_muon_plan(&ctx, R, SH_NM, sh_mats, (lattn_muon_owner)po, owner) == LATTN_OK, "plan");
                    sh_reference(&ctx, &a);
                    memset(a.bad, 0, sizeof a.bad);
                    lattn_emu_init(&e, R);
                    lattn_emu_run(&e, sh_rank, &a);
                    lattn_emu_free(&e);
                    CHECK(sh_bad(&a, R) == 0, "sharded Muon, R = %d, %s%s%s, %s, nesterov %d, wd %g: %d shard-steps differ from the one-device step "
                          "(or their traffic from lattn_muon_traffic_of)", R, sch[sc], sc == 0 ? ", " : "", sc == 0 ? pol[po] : "",
                          mode ? "bf16" : "fp32", a.c.nesterov, a.c.weight_decay, sh_bad(&a, R));
                }
    }
    {   /* each collective fails in turn: every rank returns its status and changes nothing */
        static const int calls[5][2] = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { 1, 1 }, { 2, 0 } };   /* scheme, failing call */
        int owner[SH_NM], k;
        CHECK(lattn_muon_plan(&ctx, 3, SH_NM, sh_mats, LATTN_OWNER_LPT, owner) == LATTN_OK, "plan");
        for (k = 0; k < 5; k++) {
            lattn_emu e;
            a.c = lattn_muon_default();
            a.scheme = (lattn_muon_scheme)calls[k][0];
            a.owner = owner;
            a.want = LATTN_E_IO;
            memset(a.bad, 0, sizeof a.bad);
            lattn_emu_init(&e, 3);
            e.fail_call = calls[k][1];
            lattn_emu_run(&e, sh_rank, &a);
            lattn_emu_free(&e);
            CHECK(sh_bad(&a, 3) == 0, "%s, collective %d fails: every rank returns LATTN_E_IO with W, G and M unchanged", sch[calls[k][0]], calls[k][1]);
        }
    }
    for (i = 0; i < SH_NM; i++) {
        free(a.W0[i]);
        for (s = 0; s < SH_STEPS; s++) { free(a.G[i][s]); free(a.Wref[i][s]); free(a.Mref[i][s]); free(a.Uref[i][s]); }
    }
    {   /* the seed's numbers from the plan alone (spec muon.md §4, §5.4): Laplace 3B, 64 ranks, bf16 */
        lattn_mat_desc d[96];
        lattn_muon_config c = lattn_muon_default();
        lattn_muon_traffic t;
        int owner[96], pol_i, r;
        uint64_t P = 0;
        static const uint64_t busiest[3] = { 445906944ull, 297271296ull, 198180864ull };   /* owner-only bytes, (R-1)/R counted */
        c.ns_mode = LATTN_NS_BF16;
        sh_laplace(d);
        for (i = 0; i < 96; i++) P += (uint64_t)(d[i].rows * d[i].cols);
        CHECK(P == 2717908992ull, "the Laplace Muon set: %llu parameters", (unsigned long long)P);
        CHECK(lattn_muon_traffic_of(&ctx, &c, 64, 0, 96, d, NULL, LATTN_MUON_GATHER, &t) == LATTN_OK && t.whole[0] == 5435817984ull &&
              t.whole[0] + t.whole[1] == 10871635968ull && t.recv[0] + t.sent[1] == P * 2 / 64 * 63 + P * 2 &&
              t.ns_flops == 194819716546560.0,
              "naive scheme at the root: full gradient %llu B, gather + broadcast %llu B (the seed's 10.87 GB), NS FLOPs %.0f",
              (unsigned long long)t.whole[0], (unsigned long long)(t.whole[0] + t.whole[1]), t.ns_flops);
        for (pol_i = 0; pol_i < 3; pol_i++) {
            uint64_t most = 0, most_whole = 0, agg = 0;
            double flops = 0, most_flops = 0;
            int owners = 0;
            CHECK(lattn_muon_plan(&ctx, 64, 96, d, (lattn_muon_owner)pol_i, owner) == LATTN_OK, "plan");
            for (r = 0; r < 64; r++) {
                CHECK(lattn_muon_traffic_of(&ctx, &c, 64, r, 96, d, owner, LATTN_MUON_A2A, &t) == LATTN_OK, "traffic");
                most = LATTN__MAX(most, t.recv[0] + t.sent[1]);
                most_whole = LATTN__MAX(most_whole, t.whole[0] + t.whole[1]);
                agg += t.sent[0] + t.sent[1];
                flops += t.ns_flops;
                most_flops = fmax(most_flops, t.ns_flops);
                owners += t.whole[0] > 0;
            }
            CHECK(most == busiest[pol_i] && agg == 10701766656ull && flops == 194819716546560.0,
                  "A2A, %s: busiest owner %llu B (want %llu), aggregate %llu B (want 10,701,766,656), NS FLOPs %.0f",
                  pol[pol_i], (unsigned long long)most, (unsigned long long)busiest[pol_i], (unsigned long long)agg, flops);
            if (pol_i == 0)
                CHECK(most_whole == 452984832ull && most_whole * 24 == 10871635968ull && owners == 24 && fabs(most_flops - 8.1175e12) < 1e8,
                      "by layer: an owner moves %llu B of whole matrices (the seed's 0.45 GB, 1/24 of the naive root), %d owners, %.4g FLOPs each",
                      (unsigned long long)most_whole, owners, most_flops);
        }
        CHECK(lattn_muon_traffic_of(&ctx, &c, 64, 0, 96, d, owner, LATTN_MUON_A2A, &t) == LATTN_OK, "traffic");
        CHECK(lattn_muon_plan(&ctx, 64, 96, d, LATTN_OWNER_BY_LAYER, owner) == LATTN_OK &&
              lattn_muon_traffic_of(&ctx, &c, 64, 0, 96, d, owner, LATTN_MUON_A2A, &t) == LATTN_OK &&
              t.sent[0] + t.recv[0] + t.sent[1] + t.recv[1] == 608698368ull, "by layer: rank 0's full traffic %llu B (spec: 0.609 GB)",
              (unsigned long long)(t.sent[0] + t.recv[0] + t.sent[1] + t.recv[1]));
    }
    {   /* ragged shards (torch.chunk), and the controls that must break identity */
        int64_t st, len, tot = 0;
        int r;
        for (r = 0; r < 5; r++) { lattn_shard_rows(9216, 5, r, &st, &len); tot += len; }
        lattn_shard_rows(9216, 5, 4, &st, &len);
        CHECK(tot == 9216 && len == 1840 && st == 7376, "9216 rows on 5 ranks: 1844 x 4 + 1840");
        lattn_shard_rows(3, 8, 5, &st, &len);
        CHECK(len == 0 && st == 3, "3 rows on 8 ranks: rank 5 holds none");
    }
    {
        const int64_t Rr = 40, C = 30;
        float *g = fnew((size_t)(Rr * C)), *x = fnew((size_t)(Rr * C)), *xs = fnew((size_t)(Rr * C)), *gt = fnew((size_t)(Rr * C));
        float *xt = fnew((size_t)(Rr * C));
        double diff;
        int64_t p, q2;
        int tr_same = 1;
        lattn_rng_fill_normal(&rng, g, (size_t)(Rr * C), 0.0f, 1.0f);
        CHECK(lattn_muon_ns5(&ctx, Rr, C, 5, LATTN_NS_FP32, g, x) == LATTN_OK && lattn_muon_ns5(&ctx, Rr / 2, C, 5, LATTN_NS_FP32, g, xs) == LATTN_OK, "ns5");
        diff = rel_rms(xs, x, (size_t)(Rr / 2 * C));
        CHECK(diff > 1e-2, "control: NS5 on a row shard is not the shard of NS5 (relative RMS difference %.3g)", diff);
        for (p = 0; p < Rr; p++)
            for (q2 = 0; q2 < C; q2++) gt[q2 * Rr + p] = g[p * C + q2];
        CHECK(lattn_muon_ns5(&ctx, C, Rr, 5, LATTN_NS_FP32, gt, xt) == LATTN_OK, "ns5 transposed");
        for (p = 0; p < Rr; p++)
            for (q2 = 0; q2 < C; q2++) tr_same &= same_bits(&xt[q2 * Rr + p], &x[p * C + q2], 1);
        CHECK(tr_same, "NS5(Gᵀ) = NS5(G)ᵀ bit for bit (40 x 30)");
        free(g); free(x); free(xs); free(gt); free(xt);
    }
    {   /* bad input */
        lattn_muon_config c = lattn_muon_default();
        lattn_comm cm;
        int owner[SH_NM] = { 0 }, bad_owner[SH_NM] = { 0, 0, 0, 9, 0, 0, 0 };
        lattn_muon_traffic t;
        lattn_mat_desc neg[1] = { { -3, 4, 0 } };
        float *W[SH_NM] = { 0 };
        memset(&cm, 0, sizeof cm);
        cm.size = 2;
        CHECK(lattn_muon_step_sharded(&ctx, &c, NULL, SH_NM, sh_mats, owner, LATTN_MUON_A2A, W, W, W, NULL) == LATTN_E_NULL, "comm NULL refused");
        CHECK(lattn_muon_step_sharded(&ctx, &c, &cm, SH_NM, sh_mats, owner, LATTN_MUON_A2A, W, W, W, NULL) == LATTN_E_NULL, "a missing callback refused");
        cm.rank = 2;
        CHECK(lattn_muon_step_sharded(&ctx, &c, &cm, SH_NM, sh_mats, owner, LATTN_MUON_A2A, W, W, W, NULL) == LATTN_E_DOMAIN, "rank >= size refused");
        CHECK(lattn_muon_traffic_of(&ctx, &c, 4, 0, SH_NM, sh_mats, bad_owner, LATTN_MUON_A2A, &t) == LATTN_E_DOMAIN, "owner outside the ranks refused");
        CHECK(lattn_muon_traffic_of(&ctx, &c, 0, 0, SH_NM, sh_mats, owner, LATTN_MUON_A2A, &t) == LATTN_E_DOMAIN &&
              lattn_muon_traffic_of(&ctx, &c, 1 << 30, 0, SH_NM, sh_mats, owner, LATTN_MUON_A2A, &t) == LATTN_E_DOMAIN, "0 or 2^30 ranks refused");
        CHECK(lattn_muon_plan(&ctx, 4, 1, neg, LATTN_OWNER_LPT, owner) == LATTN_E_SHAPE, "a negative shape refused");
        CHECK(lattn_muon_plan(&ctx, 4, SH_NM, sh_mats, (lattn_muon_owner)7, owner) == LATTN_E_DOMAIN, "an unknown policy refused");
        CHECK(lattn_muon_traffic_of(&ctx, &c, 4, 0, SH_NM, sh_mats, NULL, LATTN_MUON_A2A, &t) == LATTN_E_NULL, "A2A without a plan refused");
        c.ns_mode = (lattn_ns_mode)5;
        CHECK(lattn_muon_traffic_of(&ctx, &c, 4, 0, SH_NM, sh_mats, owner, LATTN_MUON_A2A, &t) == LATTN_E_DOMAIN, "an unknown NS mode refused");
    }
    lattn_ctx_free(&ctx);
}

/* ℒ of the transformer's _ref: its loss (dout NULL) or Σ dout·out in double; s (non-NULL): the SPS variant. */
static double tf_loss(lattn_ctx *ctx, const lattn_tf_model *m, const lattn_sps_config *s, int64_t B, int64_t T, const int32_t *tok,
                      const float *x, const float *dout, float *out, double *out64) {
    const size_t n = (size_t)(B * T * (m->cfg.vocab > 0 ? m->cfg.vocab : m->cfg.D));
    double l = 0;
    size_t i;
    if (s) lattn_sps_forward_ref(ctx, m, s, B, T, tok, out, dout ? NULL : &l, out64);
    else lattn_tf_forward_ref(ctx, m, B, T, tok, x, out, dout ? NULL : &l, out64);
    for (i = 0; dout && i < n; i++) l += (double)dout[i] * out64[i];
    return l;
}
/* The configuration c without a vocabulary (hidden states in and out), sliding window w. */
static lattn_tf_config tf_cfg_hidden(lattn_tf_config c, int64_t w) {
    c.vocab = 0;
    c.window = w;
    return c;
}
/* Weights of a few tenths (attention far from uniform), norm gains in [0.5, 1.5]. */
static void tf_randomise(lattn_rng *r, lattn_tf_model *m) {
    int64_t t;
    size_t i;
    for (t = 0; t < m->n_tensors; t++)
        for (i = 0; i < m->tensors[t].count; i++)
            m->tensors[t].data[i] = strstr(m->tensors[t].name, "norm") ? 0.5f + (float)lattn_rng_uniform(r) : 0.3f * (float)lattn_rng_normal_d(r);
}
/* lattn_tf_backward_ref against central differences of _ref (the loss; Σ dout·out without a
   vocabulary, with the input's gradient and a window; SPS), every tensor at random coordinates;
   lattn_tf_backward and lattn_sps_backward (all five variants) against it per tensor (grouped-query
   heads, T = 0, 1, 7, 150 past the 128-row attention tile), the same bits at 1, 2, 3 threads,
   NaN-poisoned outputs, refusals. */
static void test_tf_backward(lattn_ctx *ctx, lattn_rng *r) {
    lattn_tf_config c = lattn_tf_config_small();
    int mode, ti, v;
    c.n_layers = 2; c.D = 12; c.H = 4; c.H_kv = 2; c.K = 4; c.ffn = 10; c.vocab = 256;
    for (mode = 0; mode < 3; mode++) {   /* central differences: loss; Σ dout·out, vocab 0, window 2; SPS(w = 2) */
        const lattn_tf_config cm = mode == 1 ? tf_cfg_hidden(c, 2) : c;
        lattn_tf_model m;
        lattn_sps_config s = sps_cfg(LATTN_SPS_SPS, 2);
        const int64_t B = 2, T = 6;
        int32_t tok[12];
        float *x, *dout = NULL, *out, *dx;
        double *g64, *out64, worst = 0;
        int64_t t;
        size_t i, n;
        int bad = 0;
        CHECK(lattn_tf_init(ctx, &m, &cm, 5 + (uint64_t)mode) == LATTN_OK, "tf init: %s", lattn_ctx_error(ctx));
        tf_randomise(r, &m);
        for (i = 0; i < 12; i++) tok[i] = (int32_t)(lattn_rng_next(r) % 250);
        tok[8] = 254;                                          /* an end of document (SPS) */
        n = (size_t)(B * T * (cm.vocab > 0 ? cm.vocab : cm.D));
        x = fnormal(r, (size_t)(B * T * cm.D));
        if (mode == 1) dout = fnormal(r, n);
        out = fnew(n);
        dx = fnew((size_t)(B * T * cm.D));
        out64 = (double *)malloc(n * sizeof(double));
        g64 = (double *)malloc(m.n_params * sizeof(double));
        CHECK((mode == 2 ? lattn_sps_backward_ref(ctx, &m, &s, B, T, tok, dout, NULL, NULL, g64, NULL)
                         : lattn_tf_backward_ref(ctx, &m, B, T, tok, x, dout, NULL, NULL, g64, dx)) == LATTN_OK,
              "tf backward_ref: %s", lattn_ctx_error(ctx));
        for (t = 0; t < m.n_tensors; t++) {
            const size_t off = (size_t)(m.tensors[t].data - m.arena), cnt = m.tensors[t].count;
            double gmax = 0;
            for (i = 0; i < cnt; i++) gmax = fmax(gmax, fabs(g64[off + i]));
            for (i = lattn_rng_next(r) % 7; i < cnt; i += 1 + (size_t)(lattn_rng_next(r) % (cnt / 6 + 1))) {
                double fd;
                FD_RICHARDSON(&m.arena[off + i], tf_loss(ctx, &m, mode == 2 ? &s : NULL, B, T, tok, x, dout, out, out64), fd);
                fd_compare(fd, g64[off + i], gmax, &worst, &bad);
            }
        }
        for (i = 0; mode == 1 && i < (size_t)(B * T * cm.D); i += 5) {
            double fd;
            FD_RICHARDSON(&x[i], tf_loss(ctx, &m, NULL, B, T, tok, x, dout, out, out64), fd);
            fd_compare(fd, dx[i], 1.0, &worst, &bad);
        }
        CHECK(bad == 0, "%s = central differences (every tensor%s): worst %.3g",
              mode == 2 ? "sps_backward_ref" : "tf_backward_ref", mode == 0 ? ", the loss" : mode == 1 ? ", dx, no vocabulary, window 2" : ", SPS w = 2",
              worst);
        lattn_tf_free(ctx, &m);
        free(x); free(dout); free(out); free(dx); free(out64); free(g64);
    }
    for (v = -2; v < 5; v++)   /* the fast form against _ref: the transformer without a vocabulary and with a window
                                  of 5 (v = -2), with its vocabulary (v = -1), then each SPS variant */
        for (ti = 0; ti < 4; ti++) {
            static const int64_t Ts[4] = { 0, 1, 7, 150 };
            const int64_t B = 2, T = Ts[ti];
            const lattn_tf_config cm = v == -2 ? tf_cfg_hidden(c, 5) : c;
            float *x = v == -2 ? fnormal(r, (size_t)(B * T * c.D)) : NULL;
            lattn_tf_model m;
            lattn_sps_config s = sps_cfg((lattn_sps_variant)(v < 0 ? 0 : v), 3);
            int32_t *tok = (int32_t *)malloc((size_t)(B * T + 1) * sizeof(int32_t));
            const int64_t nx = (size_t)(B * T * (v > 0 ? 2 : 1) * c.D);
            float *gr, *gf, *again, *dout = NULL, *xr = fnew((size_t)nx), *xf = fnew((size_t)nx);
            double lr = 0, lf = 0;
            int64_t t, th;
            int same = 1, ok = 1, i, use_dout = ti == 2 || v == -2;
            if (g_quick && T == 150 && v > 0) { free(tok); free(xr); free(xf); free(x); continue; }
            CHECK(lattn_tf_init(ctx, &m, &cm, 11) == LATTN_OK, "tf init: %s", lattn_ctx_error(ctx));
            tf_randomise(r, &m);
            for (i = 0; i < B * T; i++) tok[i] = (int32_t)(lattn_rng_next(r) % 250);
            if (T > 5) tok[T + 3] = 254;
            if (use_dout) dout = fnormal(r, (size_t)(B * T * (cm.vocab > 0 ? cm.vocab : cm.D)));
            gr = fnew(m.n_params); gf = fnew(m.n_params); again = fnew(m.n_params);
            CHECK((v < 0 ? lattn_tf_backward_ref(ctx, &m, B, T, tok, x, dout, &lr, gr, NULL, xr)
                         : lattn_sps_backward_ref(ctx, &m, &s, B, T, tok, dout, &lr, gr, NULL, xr)) == LATTN_OK &&
                  (v < 0 ? lattn_tf_backward(ctx, &m, B, T, tok, x, dout, &lf, gf, xf)
                         : lattn_sps_backward(ctx, &m, &s, B, T, tok, dout, &lf, gf, xf)) == LATTN_OK, "tf backward: %s", lattn_ctx_error(ctx));
            CHECK(rel_rms(xf, xr, (size_t)nx) <= 1e-5, "%s_backward: dx (the embedded rows, slot order) = _ref's: %.3g",
                  v < 0 ? "tf" : "sps", rel_rms(xf, xr, (size_t)nx));
            for (t = 0; t < m.n_tensors; t++) {
                const size_t off = (size_t)(m.tensors[t].data - m.arena), cnt = m.tensors[t].count;
                double e = rel_rms(gf + off, gr + off, cnt);
                if (!(e <= 1e-5)) {
                    ok = 0;
                    printf("  %s: %s %.3g\n", v < 0 ? "tf" : lattn_sps_variant_name(s.variant), m.tensors[t].name, e);
                }
            }
            CHECK(ok, "%s_backward = %s_backward_ref per tensor (T = %lld, %s)", v < 0 ? "tf" : "sps", v < 0 ? "tf" : "sps", (long long)T,
                  v < 0 ? "transformer" : lattn_sps_variant_name(s.variant));
            CHECK(use_dout || T < 2 ? 1 : fabs(lf - lr) <= 1e-5 * fabs(lr), "tf backward: the loss %.9g = %.9g", lf, lr);
            for (th = 2; th <= 3 && T == 150; th++) {
                ctx->n_threads = (int)th;
                poison(again, m.n_params);
                CHECK((v < 0 ? lattn_tf_backward(ctx, &m, B, T, tok, x, dout, NULL, again, NULL)
                             : lattn_sps_backward(ctx, &m, &s, B, T, tok, dout, NULL, again, NULL)) == LATTN_OK, "tf backward: %s", lattn_ctx_error(ctx));
                same &= memcmp(again, gf, m.n_params * sizeof(float)) == 0;
                ctx->n_threads = 1;
            }
            CHECK(same, "tf backward: the same bits at 1, 2 and 3 threads (%s)", v < 0 ? "transformer" : lattn_sps_variant_name(s.variant));
            lattn_tf_free(ctx, &m);
            free(tok); free(gr); free(gf); free(again); free(dout); free(xr); free(xf); free(x);
        }
    {   /* refusals write nothing */
        lattn_tf_model m;
        lattn_tf_config c0 = c;
        int32_t tok[4] = { 1, 2, 3, 4 };
        float *g, x[48];
        c0.vocab = 0;
        CHECK(lattn_tf_init(ctx, &m, &c, 3) == LATTN_OK, "tf init");
        g = fnew(m.n_params);
        CHECK(lattn_tf_backward(ctx, &m, 1, 4, tok, NULL, NULL, NULL, NULL, NULL) == LATTN_E_NULL, "tf_backward: grad NULL");
        CHECK(lattn_tf_backward_ref(ctx, &m, 1, 4, tok, NULL, NULL, NULL, NULL, NULL, NULL) == LATTN_E_NULL, "tf_backward_ref: no gradient output");
        CHECK(lattn_tf_backward(ctx, &m, 0, 4, tok, NULL, NULL, NULL, g, NULL) == LATTN_E_SHAPE, "tf_backward: B = 0");
        tok[2] = 256;
        CHECK(lattn_tf_backward(ctx, &m, 1, 4, tok, NULL, NULL, NULL, g, NULL) == LATTN_E_DOMAIN, "tf_backward: a token outside the vocabulary");
        CHECK(lattn_tf_backward(ctx, NULL, 1, 4, tok, NULL, NULL, NULL, g, NULL) == LATTN_E_NULL, "tf_backward: model NULL");
        lattn_tf_free(ctx, &m);
        CHECK(lattn_tf_init(ctx, &m, &c0, 3) == LATTN_OK, "tf init");
        memset(x, 0, sizeof x);
        CHECK(lattn_tf_backward(ctx, &m, 1, 4, NULL, x, NULL, NULL, g, NULL) == LATTN_E_NULL, "tf_backward: dout NULL without a vocabulary");
        CHECK(isnan(g[0]) && isnan(g[m.n_params - 1]), "tf_backward: nothing written by a refused call");
        lattn_tf_free(ctx, &m);
        free(g);
    }
}
/* ℒ = Σ dout·o + Σ dht·ht from the TTT _ref's float64 outputs. */
static double ttt_loss(lattn_ctx *ctx, lattn_ttt_args a, const float *dout, const float *dht, size_t no, size_t ns, double *o64,
                       double *h64, float *o) {
    double l = 0;
    size_t i;
    a.o = o; a.ht = NULL; a.o64 = o64; a.ht64 = h64;
    lattn_ttt_ref(ctx, &a);
    for (i = 0; i < no; i++) l += (double)dout[i] * o64[i];
    for (i = 0; i < ns; i++) l += (double)dht[i] * h64[i];
    return l;
}
/* lattn_ttt_ref_backward against central differences of lattn_ttt_ref: TTT-Linear and TTT-MLP,
   mini-batch 4 over T = 11 (a ragged last one), fresh and open mini-batches carried in the state,
   variable lengths (one sequence empty); every input, a random third of the coordinates. */
static void test_ttt_backward(lattn_ctx *ctx, lattn_rng *r) {
    int mlp, var;
    for (mlp = 0; mlp < 2; mlp++)
        for (var = 0; var < 3; var++) {
            static const int64_t off[4] = { 0, 5, 5, 12 };
            const int vl = var == 2;
            const int64_t B = vl ? 3 : 2, T = vl ? 4 : 11, H = 2, F = 8, b = 4;   /* F = 8: LN over a few values has a tiny σ */
            ttt_case c;
            lattn_ttt_grads gr = LATTN__ZERO;
            size_t nin[8], no, ns, cc;
            double *ad[8], *o64, *h64, worst = 0;
            float *dout, *dht, *o;
            int w, bad = 0;
            ttt_make(&c, r, B, T, H, F, mlp, b, var > 0);
            no = (size_t)(B * T * H * F);
            ns = (size_t)(B * H * 2 * lattn__ttt_p(F, mlp));
            if (vl) { c.a.B = 1; c.a.T = B * T; c.a.offsets = off; c.a.n_seqs = 3; }
            nin[0] = nin[1] = nin[2] = no; nin[3] = no / (size_t)F; nin[4] = (size_t)b; nin[5] = nin[6] = (size_t)(H * F); nin[7] = ns;
            for (w = 0; w < 8; w++) ad[w] = (double *)malloc(nin[w] * sizeof(double));
            dout = fnormal(r, no); dht = fnormal(r, ns); o = fnew(no);
            o64 = (double *)malloc(no * sizeof(double)); h64 = (double *)malloc(ns * sizeof(double));
            gr.dout = dout; gr.dht = dht;
            gr.dq64 = ad[0]; gr.dk64 = ad[1]; gr.dv64 = ad[2]; gr.dlr64 = ad[3]; gr.dtok64 = ad[4]; gr.dln_w64 = ad[5]; gr.dln_b64 = ad[6];
            gr.dh064 = ad[7];
            CHECK(lattn_ttt_ref_backward(ctx, &c.a, &gr) == LATTN_OK, "ttt backward: %s", lattn_ctx_error(ctx));
            for (w = 0; w < 8; w++) {
                double gmax = 0;
                for (cc = 0; cc < nin[w]; cc++) gmax = fmax(gmax, fabs(ad[w][cc]));
                for (cc = lattn_rng_next(r) % 2; cc < nin[w]; cc += 1 + (size_t)(lattn_rng_next(r) % (w == 7 ? 16 : 4))) {
                    double fd;
                    if (w == 4 && c.p[4][cc] == 0.0f) continue;   /* tok >= 0: no central difference at 0 */
                    FD_RICHARDSON(&c.p[w][cc], ttt_loss(ctx, c.a, dout, dht, no, ns, o64, h64, o), fd);
                    fd_compare(fd, ad[w][cc], gmax, &worst, &bad);
                }
            }
            CHECK(bad == 0, "ttt_ref_backward = central differences (%s, %s): worst %.3g", mlp ? "TTT-MLP" : "TTT-Linear",
                  var == 0 ? "fresh" : var == 1 ? "open mini-batches" : "variable lengths", worst);
            for (w = 0; w < 8; w++) free(ad[w]);
            free(dout); free(dht); free(o); free(o64); free(h64);
            ttt_free(&c);
        }
    {   /* refused without writing: no grads, no dout, a negative token factor, a layer without grad,
           dstate without a state */
        ttt_case c;
        lattn_ttt_grads g = LATTN__ZERO;
        lattn_ttt_layer m;
        lattn_ttt_config cf = lattn_ttt_config_default();
        float *d = fnew(64), x[16] = { 0 }, neg = -1.0f, st[1];
        size_t i;
        poison(d, 64);
        ttt_make(&c, r, 1, 2, 1, 4, 0, 4, 0);
        g.dq = d;
        CHECK(lattn_ttt_ref_backward(ctx, &c.a, NULL) == LATTN_E_NULL && lattn_ttt_chunk_backward(ctx, &c.a, NULL) == LATTN_E_NULL,
              "ttt backward: grads NULL refused");
        CHECK(lattn_ttt_ref_backward(ctx, &c.a, &g) == LATTN_E_NULL && lattn_ttt_chunk_backward(ctx, &c.a, &g) == LATTN_E_NULL,
              "ttt backward: dout NULL refused");
        g.dout = x;
        c.a.tok = &neg;
        c.a.mini_batch = 1;
        CHECK(lattn_ttt_ref_backward(ctx, &c.a, &g) == LATTN_E_DOMAIN && lattn_ttt_chunk_backward(ctx, &c.a, &g) == LATTN_E_DOMAIN,
              "ttt backward: a negative token factor refused");
        for (i = 0; i < 64; i++) if (!isnan(d[i])) break;
        CHECK(i == 64, "ttt backward: nothing written by a refused call");
        cf.D = 8; cf.H = 2; cf.mini_batch = 4;
        CHECK(lattn_ttt_layer_init(ctx, &m, &cf, 3) == LATTN_OK, "ttt layer init");
        CHECK(lattn_ttt_layer_backward(ctx, &m, 1, 2, x, NULL, x, NULL, d, NULL) == LATTN_E_NULL, "ttt layer backward: grad NULL refused");
        CHECK(lattn_ttt_layer_backward_ref(ctx, &m, 1, 2, x, NULL, x, NULL, NULL, d, st) == LATTN_E_NULL &&
              lattn_ttt_layer_backward(ctx, &m, 1, 2, x, NULL, x, d, d, st) == LATTN_E_NULL, "ttt layer backward: dstate without a state refused");
        CHECK(lattn_ttt_layer_backward_ref(ctx, &m, 1, 2, x, NULL, NULL, NULL, NULL, d, NULL) == LATTN_E_NULL &&
              lattn_ttt_layer_backward_ref(ctx, NULL, 1, 2, x, NULL, x, NULL, NULL, d, NULL) == LATTN_E_NULL &&
              lattn_ttt_layer_backward(ctx, &m, -1, 2, x, NULL, x, d, d, NULL) == LATTN_E_SHAPE, "ttt layer backward: NULL dy, NULL layer, B < 0 refused");
        for (i = 0; i < 64; i++) if (!isnan(d[i])) break;
        CHECK(i == 64, "ttt layer backward: nothing written by a refused call");
        lattn_ttt_layer_free(ctx, &m);
        free(d);
        ttt_free(&c);
    }
}
/* Σ dy·y from the TTT layer's double forward (state copied: the forward advances it). */
static double tt_loss(lattn_ctx *ctx, const lattn_ttt_layer *m, int64_t B, int64_t T, const float *x, const float *s0, float *s,
                      size_t ns, const float *dy, float *y, double *y64) {
    double l = 0;
    size_t i;
    if (s0) memcpy(s, s0, ns * sizeof(float));
    lattn_ttt_layer_forward_ref(ctx, m, B, T, x, y, s0 ? s : NULL, y64);
    for (i = 0; i < (size_t)(B * T * m->cfg.D); i++) l += (double)dy[i] * y64[i];
    return l;
}
/* lattn_ttt_layer_backward_ref: central differences through the whole layer (every weight tensor,
   the input and the initial state) for TTT-Linear, TTT-MLP with the output gate, and the Block
   around TTT-Linear from an open mini-batch; then the official layers under float64 autograd
   (ttt_*_grad_*: T = 37 with a 5-token last mini-batch, learnable_token_idx with two clamped
   entries) at 1e-10; refusals. */
static void test_ttt_layer_backward(lattn_ctx *ctx, lattn_rng *r) {
    int var, ci;
    for (var = 0; var < 3; var++) {
        const int64_t B = 2, T = 7, D = 16;
        lattn_ttt_config cf = lattn_ttt_config_default();
        lattn_ttt_layer m;
        size_t ns = 0, nx, i, cc;
        float *x, *dy, *y, *s0 = NULL, *s = NULL, *ds = NULL, *g, *dx;
        double *g64, *y64, worst = 0;
        int64_t ti, b;
        int bad = 0;
        cf.D = D; cf.H = 2; cf.mini_batch = 4; cf.mlp = var == 1; cf.use_gate = var == 1; cf.ffn = var == 2 ? 6 : 0;
        CHECK(lattn_ttt_layer_init(ctx, &m, &cf, 11 + var) == LATTN_OK, "ttt layer init");
        lattn_rng_fill_normal(r, m.arena, m.n_params, 0.0f, 0.3f);
        for (i = 0; i < (size_t)(cf.H * D / cf.H); i++) { m.ln_w[i] += 1.0f; m.post_w[i] += 1.0f; }
        nx = (size_t)(B * T * D);
        x = fnormal(r, nx); dy = fnormal(r, nx); y = fnew(nx); dx = fnew(nx); g = fnew(m.n_params);
        g64 = (double *)malloc(m.n_params * sizeof(double)); y64 = (double *)malloc(nx * sizeof(double));
        lattn_ttt_state_floats(&cf, &ns);
        if (var == 2) {                  /* a carried state: random weights, accumulated gradient and position */
            s0 = fnew(ns * (size_t)B); s = fnew(ns * (size_t)B); ds = fnew(ns * (size_t)B);
            for (b = 0; b < B; b++) {
                lattn_rng_fill_normal(r, s0 + (size_t)b * ns, ns - 1, 0.0f, 0.3f);
                s0[(size_t)b * ns + ns - 1] = (float)(1 + 2 * b);
            }
            memset(ds, 0, ns * (size_t)B * sizeof(float));
            ns *= (size_t)B;
        }
        poison(g, m.n_params); poison(dx, nx);
        CHECK(lattn_ttt_layer_backward_ref(ctx, &m, B, T, x, s0, dy, g, g64, dx, ds) == LATTN_OK, "ttt layer backward: %s", lattn_ctx_error(ctx));
        for (ti = 0; ti < m.n_tensors; ti++) {
            const lattn_tensor *tn = &m.tensors[ti];
            const double *ad = g64 + (tn->data - m.arena);
            double gmax = 0;
            for (cc = 0; cc < tn->count; cc++) gmax = fmax(gmax, fabs(ad[cc]));
            for (cc = lattn_rng_next(r) % 3; cc < tn->count; cc += 1 + (size_t)(lattn_rng_next(r) % 5)) {
                double fd;
                FD_RICHARDSON(&tn->data[cc], tt_loss(ctx, &m, B, T, x, s0, s, ns, dy, y, y64), fd);
                if (gmax == 0.0) bad += !(fabs(fd) <= 1e-9);   /* W1, b1 (W2, b2) under a carried state */
                else fd_compare(fd, ad[cc], gmax, &worst, &bad);
            }
        }
        for (i = 0; i < 2; i++) {        /* the input, the initial state */
            float *in = i ? s0 : x, *gout = i ? ds : dx;
            const size_t n = i ? ns : nx;
            double gmax = 0;
            if (!in) continue;
            for (cc = 0; cc < n; cc++) gmax = fmax(gmax, fabs((double)gout[cc]));
            for (cc = lattn_rng_next(r) % 3; cc < n; cc += 1 + (size_t)(lattn_rng_next(r) % 5)) {
                double fd;
                if (i && cc % (ns / (size_t)B) == ns / (size_t)B - 1) continue;   /* the position is not differentiable */
                FD_RICHARDSON(&in[cc], tt_loss(ctx, &m, B, T, x, s0, s, ns, dy, y, y64), fd);
                fd_compare(fd, (double)gout[cc], gmax, &worst, &bad);
                if (fabs(fd - (double)gout[cc]) > 1e-5 * fmax(fabs(fd), 1e-3 * gmax)) bad++;   /* float outputs: 1e-5 */
            }
        }
        CHECK(bad == 0, "ttt layer backward_ref = central differences (%s): worst %.3g",
              var == 0 ? "TTT-Linear" : var == 1 ? "TTT-MLP with the gate" : "the Block, carried states", worst);
        for (i = 0; i < m.n_params; i++) if ((float)g64[i] != g[i]) break;
        CHECK(i == m.n_params, "ttt layer backward_ref: grad = (float)grad64");
        {   /* the float32 form against _ref, per tensor; the same bits at 1 and 3 threads */
            float *g2 = fnew(m.n_params), *dx2 = fnew(nx), *ds2 = ds ? fnew(ns) : NULL, *g3 = fnew(m.n_params);
            double e = 0;
            if (ds) memset(ds2, 0, ns * sizeof(float));
            poison(g2, m.n_params); poison(dx2, nx);
            CHECK(lattn_ttt_layer_backward(ctx, &m, B, T, x, s0, dy, g2, dx2, ds2) == LATTN_OK, "ttt layer backward: %s", lattn_ctx_error(ctx));
            for (ti = 0; ti < m.n_tensors; ti++) {
                const size_t o = (size_t)(m.tensors[ti].data - m.arena);
                const int tk = strcmp(m.tensors[ti].name, "learnable_token_idx") == 0;   /* a sum over every token: 10× looser */
                if (m.tensors[ti].count) e = fmax(e, rel_rms(g2 + o, g + o, m.tensors[ti].count) * (tk ? 0.1 : 1.0));
            }
            e = fmax(e, rel_rms(dx2, dx, nx));
            if (ds) e = fmax(e, rel_rms(ds2, ds, ns));
            CHECK(e <= 1e-5, "ttt layer backward (float32) = backward_ref (%s): worst tensor %.3g",
                  var == 0 ? "TTT-Linear" : var == 1 ? "TTT-MLP with the gate" : "the Block, carried states", e);
            ctx->n_threads = 3;
            if (ds) memset(ds2, 0, ns * sizeof(float));
            CHECK(lattn_ttt_layer_backward(ctx, &m, B, T, x, s0, dy, g3, dx2, ds2) == LATTN_OK && memcmp(g2, g3, m.n_params * sizeof(float)) == 0,
                  "ttt layer backward: the same bits at 1 and 3 threads");
            ctx->n_threads = 0;
            free(g2); free(dx2); free(ds2); free(g3);
        }
        lattn_ttt_layer_free(ctx, &m);
        free(x); free(dy); free(y); free(dx); free(g); free(g64); free(y64); free(s0); free(s); free(ds);
    }
    for (ci = 0; ci < 4; ci++) {         /* the official layers, float64 autograd */
        char path[256];
        lattn_st_file f;
        lattn_ttt_layer m;
        const lattn_st_tensor *tx;
        float *x, *dy, *dx;
        double *g64, *want, worst = 0, e;
        int64_t ti;
        size_t n;
        snprintf(path, sizeof path, "tests/external/grad/ttt_%s_grad_%d.safetensors", ci < 2 ? "linear" : "mlp", ci % 2);
        if (lattn_st_load(ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        CHECK(lattn_ttt_layer_init_st(ctx, &m, &f, "") == LATTN_OK, "%s: %s", path, lattn_ctx_error(ctx));
        tx = lattn_st_find(&f, "hidden_states");
        x = tensor_f32(&f, "hidden_states"); dy = tensor_f32(&f, "dy"); dx = fnew(tx->count);
        g64 = (double *)malloc(m.n_params * sizeof(double));
        CHECK(lattn_ttt_layer_backward_ref(ctx, &m, tx->shape[0], tx->shape[1], x, NULL, dy, NULL, g64, dx, NULL) == LATTN_OK, "%s: %s", path,
              lattn_ctx_error(ctx));
        worst = official_grads(path, &f, g64, m.arena, m.tensors, m.n_tensors);
        want = tensor_f64(&f, "dhidden_states", &n);
        e = rel_rms_d(dx, want, n);
        CHECK(e <= 1e-6, "%s: dx = dhidden_states (%.3g, float)", path, e);
        CHECK(worst <= 1e-10, "%s: every weight's gradient within 1e-10 (worst %.3g)", path, worst);
        {   /* the float32 form */
            float *g2 = fnew(m.n_params);
            double w2 = 0;
            CHECK(lattn_ttt_layer_backward(ctx, &m, tx->shape[0], tx->shape[1], x, NULL, dy, g2, dx, NULL) == LATTN_OK, "%s: %s", path,
                  lattn_ctx_error(ctx));
            for (ti = 0; ti < m.n_tensors; ti++) {
                char nm[96];
                snprintf(nm, sizeof nm, "grad.%s", m.tensors[ti].name);
                double *w64 = tensor_f64(&f, nm, &n);
                if (w64) w2 = fmax(w2, rel_rms_d(g2 + (m.tensors[ti].data - m.arena), w64, n));
                free(w64);
            }
            CHECK(w2 <= 1e-5, "%s: the float32 backward within 1e-5 (worst tensor %.3g)", path, w2);
            if (getenv("LATTN_TEST_VERBOSE")) printf("  %s: backward (float32), worst weight gradient %.3g\n", path, w2);
            free(g2);
        }
        if (getenv("LATTN_TEST_VERBOSE")) printf("  %s: backward_ref, worst weight gradient %.3g, dx %.3g (float)\n", path, worst, e);
        free(want); free(x); free(dy); free(dx); free(g64);
        lattn_ttt_layer_free(ctx, &m);
        lattn_st_free(ctx, &f);
    }
}
/* lattn_ttt_chunk_backward (float32, the dual form) against lattn_ttt_ref_backward: TTT-Linear and
   TTT-MLP, mini-batches 1, 4, 16 over T = 0, 1, 15, 16, 17, 37, fresh and open mini-batches,
   variable lengths, head widths 13 and 16, every output poisoned first; the same bits at 1 and 3
   threads. */
static void test_ttt_chunk_backward(lattn_ctx *ctx, lattn_rng *r) {
    static const int64_t bs[3] = { 1, 4, 16 }, Ts[6] = { 0, 1, 15, 16, 17, 37 };
    int mlp, bi, ti;
    for (mlp = 0; mlp < 2; mlp++)
        for (bi = 0; bi < 3; bi++)
            for (ti = 0; ti < 6; ti++) {
                const int vl = ti == 5 && bi == 1;
                const int64_t B = 2, H = 2, F = (ti % 2) ? 13 : 16, T = Ts[ti], b = bs[bi], P = lattn__ttt_p(F, mlp);
                int64_t offs[4];
                size_t nin[8], no, ns;
                ttt_case c;
                lattn_ttt_grads g1 = LATTN__ZERO, g2;
                float *ref[8], *got[8], *dout, *dht;
                double worst = 0;
                int w, pass = 1, n_thr;
                ttt_make(&c, r, B, T, H, F, mlp, b, ti >= 3);
                no = (size_t)(B * T * H * F);
                ns = (size_t)(B * H * 2 * P);
                if (vl) {                    /* one batch row: sequences of 20 and 54 tokens */
                    offs[0] = 0; offs[1] = 20; offs[2] = 2 * T;
                    c.a.B = 1; c.a.T = 2 * T; c.a.offsets = offs; c.a.n_seqs = 2;
                }
                nin[0] = nin[1] = nin[2] = no; nin[3] = no / (size_t)F; nin[4] = (size_t)b; nin[5] = nin[6] = (size_t)(H * F); nin[7] = ns;
                dout = fnormal(r, no + 1); dht = fnormal(r, ns);
                for (w = 0; w < 8; w++) { ref[w] = fnew(nin[w] + 1); got[w] = fnew(nin[w] + 1); }
                g1.dout = dout; g1.dht = dht;
                g1.dq = ref[0]; g1.dk = ref[1]; g1.dv = ref[2]; g1.dlr = ref[3]; g1.dtok = ref[4]; g1.dln_w = ref[5]; g1.dln_b = ref[6]; g1.dh0 = ref[7];
                CHECK(lattn_ttt_ref_backward(ctx, &c.a, &g1) == LATTN_OK, "ttt ref backward: %s", lattn_ctx_error(ctx));
                for (n_thr = 1; n_thr <= 3; n_thr += 2) {
                    g2 = g1;
                    g2.dq = got[0]; g2.dk = got[1]; g2.dv = got[2]; g2.dlr = got[3]; g2.dtok = got[4]; g2.dln_w = got[5]; g2.dln_b = got[6]; g2.dh0 = got[7];
                    if (n_thr == 3) for (w = 0; w < 8; w++) memcpy(ref[w], got[w], nin[w] * sizeof(float));   /* one thread's bits */
                    for (w = 0; w < 8; w++) poison(got[w], nin[w]);
                    ctx->n_threads = n_thr;
                    CHECK(lattn_ttt_chunk_backward(ctx, &c.a, &g2) == LATTN_OK, "ttt chunk backward: %s", lattn_ctx_error(ctx));
                    for (w = 0; w < 8; w++) {
                        if (n_thr == 1) {
                            /* dtok: sums over every pair and token that cancel, so the float32 rounding of their
                               terms sets the relative error: 1e-4, and 1e-3 at b = 1 (one factor for all tokens);
                               it sums the factors dlr sums, so it is judged at least at a thousandth of dlr's
                               RMS (at LATTN_TEST_SEED = 26 one token's four terms of RMS 11 cancelled to 5e-4) */
                            const double e = w == 4 ? rel_rms_floor(got[w], ref[w], nin[w], 1e-3 * rms_of(ref[3], nin[3]))
                                                    : rel_rms(got[w], ref[w], nin[w]);
                            worst = fmax(worst, e);
                            if (!(e <= (w != 4 ? 1e-5 : b > 1 ? 1e-4 : 1e-3)) && nin[w] > 0) pass = 0;
                        } else if (memcmp(got[w], ref[w], nin[w] * sizeof(float)) != 0) pass = 0;
                    }
                }
                ctx->n_threads = 0;
                CHECK(pass, "ttt %s chunk_backward = ref_backward (b %lld, T %lld, F %lld%s): worst %.3g, same bits at 1 and 3 threads",
                      mlp ? "mlp" : "linear", (long long)b, (long long)T, (long long)F, vl ? ", variable lengths" : "", worst);
                for (w = 0; w < 8; w++) { free(ref[w]); free(got[w]); }
                free(dout); free(dht);
                ttt_free(&c);
            }
}
static void test_backward(void) {
    static const char *const gates[4] = { "none", "g", "gk", "g_gamma" };
    static const lattn_fmap maps[6] = { LATTN_FMAP_IDENTITY, LATTN_FMAP_RELU, LATTN_FMAP_ELU1, LATTN_FMAP_HADAMARD,
                                        LATTN_FMAP_HEDGEHOG, LATTN_FMAP_HEDGEHOG };   /* the last: untied */
    lattn_ctx ctx;
    lattn_rng r = lattn_rng_seed(g_seed + 23);
    int gi, mi, vl, nz, ci;
    lattn_ctx_init(&ctx);
    {   /* the differences themselves: f(x) = e^{3x} at x0 = 1 - 2^-24, where x0 + h rounds to the
           coarser floats above 1 (an uneven step: the plain quotient is off by 9e-8 relative) */
        float x = 1.0f - ldexp(1.0, -24);
        double fd;
        FD_RICHARDSON(&x, exp(3.0 * (double)x), fd);
        CHECK(fabs(fd / (3.0 * exp(3.0 * (double)x)) - 1.0) < 1e-10 && x == 1.0f - ldexp(1.0, -24),
              "FD_RICHARDSON across a binade: relative error %.3g", fabs(fd / (3.0 * exp(3.0 * (double)x)) - 1.0));
    }
    {   /* TTT on a stream of its own: the tests below keep their draws */
        lattn_rng rt = lattn_rng_seed(g_seed + 71);
        test_ttt_backward(&ctx, &rt);
        test_ttt_layer_backward(&ctx, &rt);
        test_ttt_chunk_backward(&ctx, &rt);
    }
    for (vl = 0; vl < 2; vl++)
        for (gi = 0; gi < 4; gi++)
            for (mi = 0; mi < 6; mi++)
                for (nz = 0; nz < 2; nz++) {
                    /* B = 2 (or one batch row of three sequences, one empty), T = 13, K = 5, V = 3 */
                    static const int64_t off[4] = { 0, 6, 6, 13 };
                    const int64_t B = vl ? 1 : 2, T = 13, H = 2, K = 5, V = 3, N = vl ? 3 : B;
                    const lattn_fmap fm = maps[mi];
                    const int64_t Kf = fm == LATTN_FMAP_HEDGEHOG ? 2 * K : K, nwr = fm == LATTN_FMAP_HADAMARD ? 2 * K : K;
                    const size_t nq = (size_t)(B * T * H * K), nv = (size_t)(B * T * H * V), ns = (size_t)(N * H * Kf * V);
                    const size_t nzs = (size_t)(N * H * Kf);
                    float *q, *k, *v, *h0, *gk, *gh, gg[2] = { -0.3f, -0.05f }, *z0, *fw, *fb, *fwk, *fbk, *dout, *dht, *dzt, *o, *ht, *zt;
                    double *o64, *h64, *z64, *ad[12], worst = 0;
                    float *x[12];
                    size_t nx[12], c;
                    lattn_la_args a = LATTN__ZERO;
                    lattn_la_grads gr = LATTN__ZERO;
                    int w, bad = 0;
                    if (nz && fm != LATTN_FMAP_ELU1 && fm != LATTN_FMAP_HEDGEHOG) continue;   /* a positive map keeps the denominator away from 0 */
                    if (gi == 2 && fm == LATTN_FMAP_HEDGEHOG) continue;                         /* per-key gates need K' = K */
                    q = fnormal(&r, nq); k = fnormal(&r, nq); v = fnormal(&r, nv); h0 = fnormal(&r, ns);
                    gk = frand(&r, nq, -0.6f, -0.01f); gh = frand(&r, (size_t)(B * T * H), -0.6f, -0.01f);
                    z0 = frand(&r, nzs, 0.5f, 2.0f); fw = frand(&r, (size_t)(nwr * K), -0.5f, 0.5f); fb = frand(&r, (size_t)nwr, -0.3f, 0.3f);
                    fwk = frand(&r, (size_t)(nwr * K), -0.5f, 0.5f); fbk = frand(&r, (size_t)nwr, -0.3f, 0.3f);
                    dout = fnormal(&r, nv); dht = fnormal(&r, ns); dzt = fnormal(&r, nzs); o = fnew(nv); ht = fnew(ns); zt = fnew(nzs);
                    o64 = (double *)malloc(nv * sizeof(double)); h64 = (double *)malloc(ns * sizeof(double)); z64 = (double *)malloc(nzs * sizeof(double));
                    a.B = B; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.h0 = h0; a.fmap = fm;
                    if (fm == LATTN_FMAP_HADAMARD || fm == LATTN_FMAP_HEDGEHOG) { a.fmap_w = fw; a.fmap_b = fb; }
                    if (mi == 5) { a.fmap_wk = fwk; a.fmap_bk = fbk; }
                    if (nz) { a.normalize = 1; a.z0 = z0; }
                    if (vl) { a.offsets = off; a.n_seqs = 3; }
                    if (gi == 1) a.g = gh;
                    if (gi == 2) a.gk = gk;
                    if (gi == 3) a.g_gamma = gg;
                    x[0] = q; x[1] = k; x[2] = v; x[3] = h0; x[4] = gk; x[5] = gh; x[6] = z0; x[7] = fw; x[8] = fb; x[9] = fwk; x[10] = fbk;
                    nx[0] = nq; nx[1] = nq; nx[2] = nv; nx[3] = ns; nx[4] = gi == 2 ? nq : 0; nx[5] = gi == 1 ? (size_t)(B * T * H) : 0;
                    nx[6] = nz ? nzs : 0; nx[7] = a.fmap_w ? (size_t)(nwr * K) : 0; nx[8] = a.fmap_w ? (size_t)nwr : 0;
                    nx[9] = a.fmap_wk ? (size_t)(nwr * K) : 0; nx[10] = a.fmap_wk ? (size_t)nwr : 0;
                    for (w = 0; w < 11; w++) ad[w] = (double *)malloc((nx[w] ? nx[w] : 1) * sizeof(double));
                    gr.dout = dout; gr.dht = dht; gr.dzt = nz ? dzt : NULL;
                    gr.dq64 = ad[0]; gr.dk64 = ad[1]; gr.dv64 = ad[2]; gr.dh064 = ad[3]; gr.dgk64 = ad[4]; gr.dg64 = ad[5]; gr.dz064 = ad[6];
                    gr.dfmap_w64 = ad[7]; gr.dfmap_b64 = ad[8]; gr.dfmap_wk64 = ad[9]; gr.dfmap_bk64 = ad[10];
                    CHECK(lattn_la_ref_backward(&ctx, &a, &gr) == LATTN_OK, "la backward: %s", lattn_ctx_error(&ctx));
                    for (w = 0; w < 11; w++) {
                        double gmax = 0;
                        for (c = 0; c < nx[w]; c++) gmax = fmax(gmax, fabs(ad[w][c]));
                        for (c = 0; c < nx[w]; c += 1 + (size_t)(lattn_rng_next(&r) % 4)) {   /* random coordinates */
                            double fd;
                            if ((fm == LATTN_FMAP_RELU || fm == LATTN_FMAP_ELU1) && (w == 0 || w == 1) && fabsf(x[w][c]) < 2.0f / 1024) continue;   /* the kink */
                            FD_RICHARDSON(&x[w][c], la_loss(&ctx, a, dout, dht, nz ? dzt : NULL, nv, ns, nzs, o64, h64, z64, o, ht, zt), fd);
                            fd_compare(fd, ad[w][c], gmax, &worst, &bad);
                        }
                    }
                    CHECK(bad == 0, "la_ref_backward = central differences of la_ref (gate %s, map %d%s%s, %s): worst %.3g", gates[gi], (int)fm,
                          mi == 5 ? " untied" : "", nz ? ", normalised" : "", vl ? "3 sequences" : "B = 2", worst);
                    for (w = 0; w < 11; w++) free(ad[w]);
                    free(q); free(k); free(v); free(h0); free(gk); free(gh); free(z0); free(fw); free(fb); free(fwk); free(fbk);
                    free(dout); free(dht); free(dzt); free(o); free(ht); free(zt); free(o64); free(h64); free(z64);
                }
    {   /* refused without writing: no grads, no dout */
        float q[8], dq[8];
        lattn_la_args a = LATTN__ZERO;
        lattn_la_grads gr = LATTN__ZERO;
        int i;
        for (i = 0; i < 8; i++) { q[i] = 0.5f; dq[i] = NAN; }
        a.B = 1; a.T = 2; a.H = 1; a.K = 4; a.V = 4; a.q = a.k = a.v = q;
        gr.dq = dq;
        CHECK(lattn_la_ref_backward(&ctx, &a, NULL) == LATTN_E_NULL && lattn_la_ref_backward(&ctx, &a, &gr) == LATTN_E_NULL,
              "la backward: grads or dout NULL");
        for (i = 0; i < 8; i++) if (!isnan(dq[i])) break;
        CHECK(i == 8, "la backward: nothing written by a refused call");
    }
    {   /* a gradient case: the ref and chunk forms; "pass" must be forward or backward */
        lattn_st_file f, f2;
        const char *keys[64], *vals[64];
        unsigned char *out = NULL;
        size_t nout = 0;
        int64_t i;
        if (lattn_st_load(&ctx, "reference_outputs/gla/gla_grad_small.safetensors", &f) != LATTN_OK) CHECK(0, "load the gla gradient case");
        else {
            CHECK(lattn_case_run(&ctx, &f, LATTN_FORM_REF, &out, &nout) == LATTN_OK, "gradient case, ref: %s", lattn_ctx_error(&ctx));
            lattn_free(&ctx, out);
            CHECK(lattn_case_run(&ctx, &f, LATTN_FORM_CHUNK, &out, &nout) == LATTN_OK, "gradient case, chunk: %s", lattn_ctx_error(&ctx));
            lattn_free(&ctx, out);
            CHECK(lattn_case_run(&ctx, &f, LATTN_FORM_STEP, &out, &nout) == LATTN_E_UNSUPPORTED, "gradient case, step: unsupported");
            f2 = f;
            for (i = 0; i < f.n_meta && i < 64; i++) {
                keys[i] = f.meta_keys[i];
                vals[i] = strcmp(f.meta_keys[i], "pass") == 0 ? "sideways" : f.meta_values[i];
            }
            f2.meta_keys = keys;
            f2.meta_values = vals;
            CHECK(lattn_case_run(&ctx, &f2, LATTN_FORM_REF, &out, &nout) == LATTN_E_FORMAT, "pass = sideways: refused");
            lattn_st_free(&ctx, &f);
        }
    }
    test_la_chunk_backward(&ctx, &r);
    test_conv_backward(&ctx, &r);
    test_conv_chunk_backward(&ctx, &r);
    test_scan_backward(&ctx, &r);
    test_scan_chunk_backward(&ctx, &r);
    test_ssm_backward(&ctx, &r);
    test_ssm_chunk_backward(&ctx, &r);
    test_s4d_backward(&ctx, &r);
    test_tiled_backward(&ctx, &r);
    test_gdr_backward(&ctx, &r);
    test_gdr_chunk_backward(&ctx, &r);
    test_gdn_backward(&ctx, &r);
    test_laplace_backward(&ctx, &r);
    test_prism_backward(&ctx, &r);
    test_attn_backward(&ctx, &r);
    test_attn_chunk_backward(&ctx, &r);
    test_tf_backward(&ctx, &r);
    test_tcn_backward(&ctx, &r);
    test_tcn_chunk_backward(&ctx, &r);
    for (ci = 0; ci < 6; ci++) {   /* fla's naive recurrences under float64 autograd */
        static const char *const cases[6] = { "linear_attn_grad_0", "linear_attn_grad_1", "gla_grad_0", "gla_grad_1",
                                              "simple_gla_grad_0", "simple_gla_grad_1" };
        static const char *const outs[5] = { "dq", "dk", "dv", "dh0", "dg" };
        char path[256];
        lattn_st_file f;
        const lattn_st_tensor *tq, *tv;
        lattn_la_args a = LATTN__ZERO;
        lattn_la_grads gr = LATTN__ZERO;
        double *got[5], *want[5];
        size_t n[5];
        float *q, *k, *v, *g, *h0, *dout, *dht;
        int w;
        snprintf(path, sizeof path, "tests/external/grad/%s.safetensors", cases[ci]);
        if (lattn_st_load(&ctx, path, &f) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
        tq = lattn_st_find(&f, "q"); tv = lattn_st_find(&f, "v");
        q = tensor_f32(&f, "q"); k = tensor_f32(&f, "k"); v = tensor_f32(&f, "v"); g = tensor_f32(&f, "g");
        h0 = tensor_f32(&f, "h0"); dout = tensor_f32(&f, "do"); dht = tensor_f32(&f, "dht");
        a.B = tq->shape[0]; a.T = tq->shape[1]; a.H = tq->shape[2]; a.K = tq->shape[3]; a.V = tv->shape[3];
        a.q = q; a.k = k; a.v = v; a.h0 = h0;
        if (ci >= 2 && ci < 4) a.gk = g;
        if (ci >= 4) a.g = g;
        for (w = 0; w < 5; w++) {
            want[w] = tensor_f64(&f, outs[w], &n[w]);
            got[w] = (double *)malloc(((want[w] ? n[w] : 0) + 1) * sizeof(double));
        }
        gr.dout = dout; gr.dht = dht;
        gr.dq64 = got[0]; gr.dk64 = got[1]; gr.dv64 = got[2]; gr.dh064 = got[3];
        if (a.gk) gr.dgk64 = got[4];
        if (a.g) gr.dg64 = got[4];
        CHECK(lattn_la_ref_backward(&ctx, &a, &gr) == LATTN_OK, "%s: %s", cases[ci], lattn_ctx_error(&ctx));
        for (w = 0; w < 5; w++) {
            if (!want[w]) continue;
            CHECK(rel_rms_dd(got[w], want[w], n[w]) <= 1e-12, "%s: %s = fla's float64 autograd (%.3g)", cases[ci], outs[w],
                  rel_rms_dd(got[w], want[w], n[w]));
        }
        {   /* the chunked float32 backward against the same autograd gradients, chunk 16 */
            float *fo[5];
            lattn_la_grads gf = LATTN__ZERO;
            size_t j;
            for (w = 0; w < 5; w++) fo[w] = fnew(want[w] ? n[w] : 0);
            gf.dout = dout; gf.dht = dht; gf.dq = fo[0]; gf.dk = fo[1]; gf.dv = fo[2]; gf.dh0 = fo[3];
            if (a.gk) gf.dgk = fo[4];
            if (a.g) gf.dg = fo[4];
            a.chunk = 16;
            CHECK(lattn_la_chunk_backward(&ctx, &a, &gf) == LATTN_OK, "%s chunk: %s", cases[ci], lattn_ctx_error(&ctx));
            for (w = 0; w < 5; w++) {
                if (!want[w]) continue;
                for (j = 0; j < n[w]; j++) got[w][j] = fo[w][j];
                CHECK(rel_rms_dd(got[w], want[w], n[w]) <= 1e-5, "%s: %s of la_chunk_backward = fla's float64 autograd (%.3g)", cases[ci], outs[w],
                      rel_rms_dd(got[w], want[w], n[w]));
            }
            for (w = 0; w < 5; w++) free(fo[w]);
        }
        for (w = 0; w < 5; w++) { free(got[w]); free(want[w]); }
        free(q); free(k); free(v); free(g); free(h0); free(dout); free(dht);
        lattn_st_free(&ctx, &f);
    }
    lattn_ctx_free(&ctx);
}

/* ---------------------------------------------------------------------------------------------- */
/* The verb table (lattn.h >>verbs) as code: the address of every function it names, so a family  */
/* without a form the table promises does not build; every mixer has _ref, _chunk and _step       */
/* ---------------------------------------------------------------------------------------------- */
typedef void (*any_fn)(void);
typedef struct verb { const char *family, *form; any_fn fn; } verb;
#define TAKE_FORM(fam, form) { #fam, #form, (any_fn)lattn_##fam##_##form },
#define TAKE_BACKWARD(fam, form) { #fam, #form "_backward", (any_fn)lattn_##fam##_##form##_backward },
#define TAKE_WEIGHTS(fam) TAKE_FORM(fam, init) TAKE_FORM(fam, init_st) TAKE_FORM(fam, init_file) TAKE_FORM(fam, serialize) \
                          TAKE_FORM(fam, save) TAKE_FORM(fam, tensor) TAKE_FORM(fam, free)
static int has_form(const verb *v, int n, const char *family, const char *form) {
    int i;
    for (i = 0; i < n; i++) if (strcmp(v[i].family, family) == 0 && strcmp(v[i].form, form) == 0 && v[i].fn) return 1;
    return 0;
}
/* ---------------------------------------------------------------------------------------------- */
/* serve: the pool, its batched step and batch invariance                                         */
/* ---------------------------------------------------------------------------------------------- */
#define SV_SEQS 6
#define SV_MAXP 21
#define SV_MAXG 9
/* Six sequences, each a prompt of P tokens then G teacher-forced tokens, decoded in one of several
   batch compositions; every decoded row's logits and the final slot's bytes are kept. */
typedef struct {
    int is_tf;                           /* 0 Laplace, 1 transformer, 2 a net of every block kind, 3 SPS */
    lattn_laplace_model lap;
    lattn_tf_model tf;                   /* (1 and 3) */
    lattn_sps_config sps;
    lattn_net net;
    int64_t vocab, P[SV_SEQS], G[SV_SEQS];
    int32_t tok[SV_SEQS][SV_MAXP + SV_MAXG];
} sv_case;
typedef struct {
    float *logits[SV_SEQS];              /* [P + G][vocab]: the prompt's, then each step's */
    unsigned char *slot[SV_SEQS];        /* the saved slot after the last token */
    size_t slot_size[SV_SEQS];
} sv_out;
/* How a run batches: n_slots, sequence i admitted at step start[i] (in that order, so it gets
   whichever slot is free), rows shuffled each step (shuffle), padded with -1 rows to width pad
   (0: none), threads. */
typedef struct { int64_t n_slots, start[SV_SEQS], pad; int shuffle, threads; } sv_plan;
static lattn_status sv_pool(lattn_ctx *ctx, sv_case *c, lattn_pool *p, int64_t n_slots) {
    return c->is_tf == 3 ? lattn_pool_init_sps(ctx, p, &c->tf, &c->sps, n_slots, SV_MAXP + SV_MAXG)
         : c->is_tf == 2 ? lattn_pool_init_net(ctx, p, &c->net, n_slots, SV_MAXP + SV_MAXG)
         : c->is_tf ? lattn_pool_init_tf(ctx, p, &c->tf, n_slots, SV_MAXP + SV_MAXG) : lattn_pool_init_laplace(ctx, p, &c->lap, n_slots);
}
static int sv_run(sv_case *c, const sv_plan *pl, sv_out *o, uint64_t seed) {
    lattn_ctx ctx;
    lattn_pool p;
    lattn_rng r = lattn_rng_seed(seed);
    int64_t slot[SV_SEQS], done[SV_SEQS], rows[64], step, i, n, left = SV_SEQS;
    int32_t toks[64];
    float *lg = fnew((size_t)(64 * c->vocab));
    int ok = 1;
    lattn_ctx_init(&ctx);
    ctx.n_threads = pl->threads;
    if (sv_pool(&ctx, c, &p, pl->n_slots) != LATTN_OK) { free(lg); return 0; }
    for (i = 0; i < SV_SEQS; i++) { slot[i] = -1; done[i] = 0; o->logits[i] = fnew((size_t)((c->P[i] + c->G[i]) * c->vocab)); }
    for (step = 0; ok && left > 0; step++) {
        for (i = 0; ok && i < SV_SEQS; i++)
            if (pl->start[i] == step) {
                ok &= lattn_pool_admit(&ctx, &p, &slot[i]) == LATTN_OK;
                ok &= lattn_pool_prefill(&ctx, &p, slot[i], c->P[i], c->tok[i], o->logits[i]) == LATTN_OK;
            }
        for (i = 0, n = 0; i < SV_SEQS; i++)
            if (slot[i] >= 0 && done[i] < c->G[i]) { rows[n] = i; n++; }
        if (pl->shuffle)
            for (i = n - 1; i > 0; i--) { int64_t j = (int64_t)(lattn_rng_next(&r) % (uint64_t)(i + 1)), t = rows[i]; rows[i] = rows[j]; rows[j] = t; }
        {
            int64_t sl[64], m = 0, k;
            for (k = 0; k < n; k++) {
                if (pl->pad && lattn_rng_next(&r) % 2) { sl[m] = -1; toks[m++] = 7; }   /* a pad row between */
                sl[m] = slot[rows[k]];
                toks[m++] = c->tok[rows[k]][c->P[rows[k]] + done[rows[k]]];
            }
            while (pl->pad && m < pl->pad) { sl[m] = -1; toks[m++] = 0; }
            if (m == 0) continue;
            poison(lg, (size_t)(64 * c->vocab));
            ok &= lattn_pool_step(&ctx, &p, m, sl, toks, lg) == LATTN_OK;
            for (k = 0, m = 0; ok && k < n; k++) {
                int64_t s = rows[k];
                while (sl[m] < 0) m++;
                memcpy(o->logits[s] + (c->P[s] + done[s]) * c->vocab, lg + m * c->vocab, (size_t)c->vocab * sizeof(float));
                m++;
                if (++done[s] == c->G[s]) {
                    ok &= lattn_pool_save_slot(&ctx, &p, slot[s], &o->slot[s], &o->slot_size[s]) == LATTN_OK;
                    ok &= lattn_pool_evict(&ctx, &p, slot[s]) == LATTN_OK;
                    slot[s] = -1;
                    left--;
                }
            }
        }
    }
    if (!ok) printf("  sv_run: %s\n", lattn_ctx_error(&ctx));
    lattn_pool_free(&ctx, &p);
    free(lg);
    return ok;
}
static void sv_free(sv_out *o, lattn_ctx *ctx) {
    int i;
    for (i = 0; i < SV_SEQS; i++) { free(o->logits[i]); lattn_free(ctx, o->slot[i]); }
}
static int sv_same(const sv_case *c, const sv_out *a, const sv_out *b) {
    int i, same = 1;
    for (i = 0; i < SV_SEQS; i++)
        same &= same_bits(a->logits[i], b->logits[i], (size_t)((c->P[i] + c->G[i]) * c->vocab)) && a->slot_size[i] == b->slot_size[i] &&
                memcmp(a->slot[i], b->slot[i], a->slot_size[i]) == 0;
    return same;
}
/* The refusals of one pool: each leaves every slot's bytes as they were. */
static void sv_refusals(sv_case *c) {
    lattn_ctx ctx;
    lattn_pool p;
    int64_t s0 = -1, s1 = -1, s2 = -1, sl[3];
    int32_t tk[3] = { 1, 2, 3 };
    unsigned char *b0 = NULL, *b1 = NULL, *a0 = NULL, *a1 = NULL, *other = NULL;
    size_t n0 = 0, n1 = 0, m0 = 0, m1 = 0, no = 0;
    float *lg = fnew((size_t)((SV_MAXP + SV_MAXG) * c->vocab));
    lattn_st_file f;
    static const char *const names[4] = { "laplace", "tf", "net", "sps" };
    const char *name = names[c->is_tf];
    lattn_ctx_init(&ctx);
    CHECK(sv_pool(&ctx, c, &p, 2) == LATTN_OK && lattn_pool_admit(&ctx, &p, &s0) == LATTN_OK && lattn_pool_admit(&ctx, &p, &s1) == LATTN_OK &&
          s0 == 0 && s1 == 1, "%s pool: two slots admitted", name);
    if (!p.pos) { free(lg); return; }
    CHECK(lattn_pool_prefill(&ctx, &p, s0, 5, c->tok[0], lg) == LATTN_OK && lattn_pool_prefill(&ctx, &p, s1, 3, c->tok[1], lg) == LATTN_OK,
          "%s pool: prefill", name);
    lattn_pool_save_slot(&ctx, &p, s0, &b0, &n0);
    lattn_pool_save_slot(&ctx, &p, s1, &b1, &n1);
    CHECK(lattn_pool_admit(&ctx, &p, &s2) == LATTN_E_FULL && s2 == -1, "%s pool: admitting into a full pool is LATTN_E_FULL", name);
    sl[0] = s0; sl[1] = s1;
    tk[1] = (int32_t)c->vocab;
    CHECK(lattn_pool_step(&ctx, &p, 2, sl, tk, lg) == LATTN_E_DOMAIN, "%s pool: a token out of the vocabulary is refused", name);
    tk[1] = 2;
    sl[1] = s0;
    CHECK(lattn_pool_step(&ctx, &p, 2, sl, tk, lg) == LATTN_E_DOMAIN, "%s pool: a slot twice in one step is refused", name);
    sl[1] = -2;
    CHECK(lattn_pool_step(&ctx, &p, 2, sl, tk, lg) == LATTN_E_DOMAIN, "%s pool: slot -2 is refused", name);
    sl[1] = 2;
    CHECK(lattn_pool_step(&ctx, &p, 2, sl, tk, lg) == LATTN_E_DOMAIN, "%s pool: a slot past the pool is refused", name);
    CHECK(lattn_pool_step(&ctx, &p, 2, sl, NULL, lg) == LATTN_E_NULL && lattn_pool_step(&ctx, &p, -1, sl, tk, lg) == LATTN_E_SHAPE &&
          lattn_pool_step(&ctx, NULL, 1, sl, tk, lg) == LATTN_E_NULL && lattn_pool_step(&ctx, &p, 0, NULL, NULL, NULL) == LATTN_OK,
          "%s pool: NULL, negative and empty steps", name);
    CHECK(lattn_pool_evict(&ctx, &p, s1) == LATTN_OK && lattn_pool_step(&ctx, &p, 1, &s1, tk, lg) == LATTN_E_DOMAIN &&
          lattn_pool_evict(&ctx, &p, s1) == LATTN_E_DOMAIN && lattn_pool_reset(&ctx, &p, s1) == LATTN_E_DOMAIN &&
          lattn_pool_save_slot(&ctx, &p, s1, &a1, &m1) == LATTN_E_DOMAIN && lattn_pool_prefill(&ctx, &p, s1, 1, tk, lg) == LATTN_E_DOMAIN,
          "%s pool: stepping, evicting, resetting, saving or prefilling an evicted slot is refused", name);
    CHECK(lattn_pool_admit(&ctx, &p, &s2) == LATTN_OK && s2 == s1, "%s pool: the evicted slot is admitted again", name);
    if (c->is_tf) {                                      /* a KV page */
        int32_t big[SV_MAXP + SV_MAXG + 1];
        memset(big, 0, sizeof big);
        CHECK(lattn_pool_prefill(&ctx, &p, s2, 4, big, NULL) == LATTN_E_NULL &&
              lattn_pool_prefill(&ctx, &p, s2, SV_MAXP + SV_MAXG + 1, big, lg) == LATTN_E_SHAPE && p.pos[s2] == 0,
              "%s pool: a prompt past the page or without logits is refused", name);
    }
    /* the refusals above left slot 0 as it was */
    lattn_pool_save_slot(&ctx, &p, s0, &a0, &m0);
    CHECK(a0 && m0 == n0 && memcmp(a0, b0, n0) == 0, "%s pool: every refused call left slot 0's bytes unchanged", name);
    lattn_free(&ctx, a0);
    a0 = NULL;
    /* restore: a slot of this pool's model loads; another model's or shape's file is refused, nothing changed */
    CHECK(lattn_st_parse(&ctx, b1, n1, &f) == LATTN_OK && lattn_pool_load_slot(&ctx, &p, s2, &f) == LATTN_OK &&
          lattn_pool_save_slot(&ctx, &p, s2, &a1, &m1) == LATTN_OK && m1 == n1 && memcmp(a1, b1, n1) == 0,
          "%s pool: a saved slot restores byte for byte", name);
    lattn_st_free(&ctx, &f);
    {
        sv_case d = *c;
        lattn_pool q;
        lattn_laplace_config lc = lattn_laplace_config_small();
        lattn_tf_config tc = lattn_tf_config_small();
        int64_t s;
        d.is_tf = !c->is_tf;                              /* another model */
        if (c->is_tf) { lc.vocab = c->vocab; lattn_laplace_init(&ctx, &d.lap, &lc, 3); }
        else { tc.vocab = c->vocab; lattn_tf_init(&ctx, &d.tf, &tc, 3); }
        if (sv_pool(&ctx, &d, &q, 1) == LATTN_OK && lattn_pool_admit(&ctx, &q, &s) == LATTN_OK &&
            lattn_pool_save_slot(&ctx, &q, s, &other, &no) == LATTN_OK && lattn_st_parse(&ctx, other, no, &f) == LATTN_OK) {
            CHECK(lattn_pool_load_slot(&ctx, &p, s0, &f) == LATTN_E_FORMAT, "%s pool: a slot of another model is LATTN_E_FORMAT", name);
            lattn_st_free(&ctx, &f);
        } else CHECK(0, "the other model's slot: %s", lattn_ctx_error(&ctx));
        lattn_pool_free(&ctx, &q);
        if (c->is_tf) lattn_laplace_free(&ctx, &d.lap); else lattn_tf_free(&ctx, &d.tf);
    }
    {   /* hostile edits of this model's file: another shape in the config, a position past the page, a
           missing tensor, an SPS ring longer than the pool's */
        static const char *const from[4] = { " D=", "\"pool.pos\":\"3\"", "\"v.0\":", "\"pool.sps\":\"3 " };
        static const char *const to[4] = { " E=", "\"pool.pos\":\"9\"", "\"w.0\":", "\"pool.sps\":\"9 " };
        int e, refused = 1;
        for (e = 0; e < 4; e++) {
            unsigned char *h = (unsigned char *)malloc(n1);
            char *at;
            memcpy(h, b1, n1);
            at = strstr((char *)h + 8, from[e]);
            if (!at || (e == 1 && (c->is_tf == 0 || c->is_tf == 3)) || (e == 2 && !c->is_tf)) { free(h); continue; }
            memcpy(at, to[e], strlen(to[e]));
            if (e == 1) p.cap = 8;                        /* a page of 8: position 9 does not fit */
            if (lattn_st_parse(&ctx, h, n1, &f) == LATTN_OK) {
                refused &= lattn_pool_load_slot(&ctx, &p, s0, &f) == LATTN_E_FORMAT;
                lattn_st_free(&ctx, &f);
            }
            if (e == 1) p.cap = SV_MAXP + SV_MAXG;
            free(h);
        }
        lattn_pool_save_slot(&ctx, &p, s0, &a0, &m0);
        CHECK(refused && a0 && m0 == n0 && memcmp(a0, b0, n0) == 0, "%s pool: hostile slot files are LATTN_E_FORMAT, slot 0 unchanged", name);
    }
    lattn_free(&ctx, a0); lattn_free(&ctx, a1); lattn_free(&ctx, b0); lattn_free(&ctx, b1); lattn_free(&ctx, other);
    lattn_pool_free(&ctx, &p);
    free(lg);
}
/* A net pool's whole life on a context whose k-th allocation fails (fail_each_alloc): init, admit,
   prefill, a step with a pad row, save, free. Every failure must be LATTN_E_NOMEM, nothing left. */
static lattn_status sv_alloc_run(lattn_ctx *ctx, void *user) {
    sv_case *c = (sv_case *)user;
    lattn_pool p;
    int64_t s = -1, rows[2];
    int32_t tk[2] = { 3, 0 };
    float lg[4 * 97];
    unsigned char *buf = NULL;
    size_t n = 0;
    lattn_status st = lattn_pool_init_net(ctx, &p, &c->net, 2, 8);
    if (st != LATTN_OK) return p.pos == NULL ? st : LATTN_E_DOMAIN;
    if ((st = lattn_pool_admit(ctx, &p, &s)) == LATTN_OK && (st = lattn_pool_prefill(ctx, &p, s, 2, c->tok[0], lg)) == LATTN_OK) {
        rows[0] = s;
        rows[1] = -1;
        if ((st = lattn_pool_step(ctx, &p, 2, rows, tk, lg)) == LATTN_OK) st = lattn_pool_save_slot(ctx, &p, s, &buf, &n);
    }
    lattn_free(ctx, buf);
    lattn_pool_free(ctx, &p);
    return st;
}
static void test_serve(void) {
    lattn_ctx ctx;
    lattn_rng r = lattn_rng_seed(g_seed + 131);
    int mdl;
    lattn_ctx_init(&ctx);
    for (mdl = 0; mdl < 4; mdl++) {
        sv_case c;
        sv_out alone, o;
        sv_plan pl;
        static const char *const names[4] = { "laplace", "tf", "net", "sps" };
        const char *name = names[mdl];
        int i, k, ok;
        memset(&c, 0, sizeof c);
        c.is_tf = mdl;
        c.vocab = 97;
        if (mdl == 2) {                                   /* every block kind, D 24 (not a multiple of the vector width) */
            lattn_net_config nc;
            if (lattn_net_config_parse(&ctx, &nc, "laplace attn gdn prism ttt ffn gla la p0", c.vocab, 24, 2) != LATTN_OK ||
                lattn_net_init(&ctx, &c.net, &nc, 11) != LATTN_OK) { CHECK(0, "net init: %s", lattn_ctx_error(&ctx)); continue; }
        } else if (mdl) {
            lattn_tf_config tc = lattn_tf_config_small();
            tc.vocab = c.vocab;
            tc.D = 48;                                    /* K = 12: not a multiple of the vector width */
            tc.H = 4; tc.H_kv = 2; tc.K = 12; tc.ffn = 100;
            c.sps = lattn_sps_config_default(LATTN_SPS_SPS);   /* SPS: a window of 4, EOS 5 (documents end inside) */
            c.sps.w = 4; c.sps.predict_id = (int32_t)c.vocab - 1; c.sps.eos_id = 5; c.sps.pad_id = -1;
            if (lattn_tf_init(&ctx, &c.tf, &tc, 11) != LATTN_OK) { CHECK(0, "tf init: %s", lattn_ctx_error(&ctx)); continue; }
        } else {
            lattn_laplace_config lc = lattn_laplace_config_small();
            lc.vocab = c.vocab;
            lc.ffn = 100;
            if (lattn_laplace_init(&ctx, &c.lap, &lc, 11) != LATTN_OK) { CHECK(0, "laplace init: %s", lattn_ctx_error(&ctx)); continue; }
        }
        for (i = 0; i < SV_SEQS; i++) {
            c.P[i] = i == 0 ? 0 : i == 1 ? 1 : (int64_t)(lattn_rng_next(&r) % SV_MAXP);
            c.G[i] = 1 + (int64_t)(lattn_rng_next(&r) % SV_MAXG);
            for (k = 0; k < SV_MAXP + SV_MAXG; k++) c.tok[i][k] = (int32_t)(lattn_rng_next(&r) % (uint64_t)(c.vocab - (mdl == 3)));
        }
        if (mdl == 3) c.tok[2][3] = c.tok[4][1] = 5;      /* an EOS in a prompt, then one decoded */
        if (mdl == 3) c.G[4] = SV_MAXG;
        /* the reference: each sequence alone in a pool of one, one after the other */
        memset(&pl, 0, sizeof pl);
        pl.n_slots = 1;
        pl.threads = 1;
        for (i = 0; i < SV_SEQS; i++) pl.start[i] = i * (SV_MAXG + 1);
        memset(&alone, 0, sizeof alone);
        ok = sv_run(&c, &pl, &alone, 1);
        CHECK(ok, "%s: every sequence decoded alone", name);
        if (ok) {   /* the steps compute the model: each sequence's logits against one forward over all its tokens */
            double worst = 0;
            for (i = 0; i < SV_SEQS; i++) {
                const int64_t T = c.P[i] + c.G[i];
                float *ref = fnew((size_t)(T * c.vocab));
                lattn_status st = mdl == 3 ? lattn_sps_forward(&ctx, &c.tf, &c.sps, 1, T, c.tok[i], ref, NULL)
                                : mdl == 2 ? lattn_net_forward(&ctx, &c.net, 1, T, c.tok[i], NULL, ref, NULL)
                                : mdl ? lattn_tf_forward(&ctx, &c.tf, 1, T, c.tok[i], NULL, ref, NULL, NULL)
                                      : lattn_laplace_forward(&ctx, &c.lap, 1, T, c.tok[i], NULL, ref, NULL);
                double e = st == LATTN_OK ? rel_rms(alone.logits[i], ref, (size_t)(T * c.vocab)) : HUGE_VAL;
                worst = e > worst ? e : worst;
                free(ref);
            }
            CHECK(worst <= 1e-5, "%s: prefill + steps match the forward over each whole sequence (rel RMS %.2e <= 1e-5)", name, worst);
        }
        {   /* the compositions: all at once; staggered and shuffled with pad rows; 2 threads; a wide padded batch */
            static const struct { int64_t slots, pad; int shuffle, threads, stagger; const char *what; } comp[5] = {
                { 6, 0, 0, 1, 0, "all six in one batch" },
                { 8, 0, 1, 1, 1, "admitted as they arrive, rows shuffled every step" },
                { 3, 0, 1, 1, 1, "three slots reused by six sequences" },
                { 8, 12, 1, 2, 1, "pad rows between and after, width 12, 2 threads" },
                { 64, 64, 1, 2, 0, "64 slots padded to a batch of 64, 2 threads" } };
            int q;
            for (q = 0; q < 5 && ok; q++) {
                memset(&pl, 0, sizeof pl);
                pl.n_slots = comp[q].slots;
                pl.pad = comp[q].pad;
                pl.shuffle = comp[q].shuffle;
                pl.threads = comp[q].threads;
                for (i = 0; i < SV_SEQS; i++) pl.start[i] = comp[q].stagger ? (int64_t)(lattn_rng_next(&r) % 7) : 0;
                if (comp[q].slots == 3) for (i = 0; i < SV_SEQS; i++) pl.start[i] = i < 3 ? 0 : 10 + i;
                memset(&o, 0, sizeof o);
                CHECK(sv_run(&c, &pl, &o, 100 + (uint64_t)q) && sv_same(&c, &alone, &o),
                      "%s: %s gives every sequence's logits and final slot bit for bit as decoding it alone", name, comp[q].what);
                sv_free(&o, &ctx);
            }
        }
        sv_free(&alone, &ctx);
        sv_refusals(&c);
        if (mdl == 2) {
            int failing, bad = fail_each_alloc(sv_alloc_run, &c, 400, &failing);
            CHECK(bad == 0 && failing > 10, "net pool: each of %d failing allocations gives LATTN_E_NOMEM and leaks nothing (%d bad)", failing, bad);
        }
        if (mdl == 2) lattn_net_free(&ctx, &c.net); else if (mdl) lattn_tf_free(&ctx, &c.tf); else lattn_laplace_free(&ctx, &c.lap);
    }
    {   /* init refusals */
        lattn_pool p;
        lattn_laplace_model m;
        lattn_laplace_config lc = lattn_laplace_config_small();
        lc.vocab = 0;
        CHECK(lattn_pool_init_laplace(&ctx, NULL, NULL, 1) == LATTN_E_NULL && lattn_pool_init_laplace(&ctx, &p, NULL, 1) == LATTN_E_NULL &&
              p.pos == NULL, "pool init: NULL pool or model");
        if (lattn_laplace_init(&ctx, &m, &lc, 1) == LATTN_OK) {
            CHECK(lattn_pool_init_laplace(&ctx, &p, &m, 4) == LATTN_E_UNSUPPORTED && p.pos == NULL, "pool init: a model without vocabulary");
            m.cfg.vocab = 10;
            CHECK(lattn_pool_init_laplace(&ctx, &p, &m, 0) == LATTN_E_SHAPE && lattn_pool_init_laplace(&ctx, &p, &m, -3) == LATTN_E_SHAPE &&
                  lattn_pool_init_laplace(&ctx, &p, &m, (int64_t)1 << 50) == LATTN_E_SHAPE && p.pos == NULL,
                  "pool init: zero, negative and absurd slot counts");
            lattn_laplace_free(&ctx, &m);
        }
        {
            lattn_tf_model tm;
            lattn_tf_config tc = lattn_tf_config_small();
            lattn_sps_config sc = lattn_sps_config_default(LATTN_SPS_SPS);
            sc.predict_id = 1; sc.eos_id = 2; sc.pad_id = -1;
            if (lattn_tf_init(&ctx, &tm, &tc, 1) == LATTN_OK) {
                CHECK(lattn_pool_init_sps(&ctx, &p, &tm, NULL, 2, 8) == LATTN_E_NULL && lattn_pool_init_sps(&ctx, &p, &tm, &sc, 2, 0) == LATTN_E_SHAPE &&
                      lattn_pool_init_sps(&ctx, &p, &tm, &sc, 0, 8) == LATTN_E_SHAPE && p.pos == NULL, "SPS pool init: no configuration, cap 0, no slots");
                sc.predict_id = 999;
                CHECK(lattn_pool_init_sps(&ctx, &p, &tm, &sc, 2, 8) != LATTN_OK && p.pos == NULL, "SPS pool init: a predict id past the vocabulary");
                lattn_tf_free(&ctx, &tm);
            }
        }
        lattn_pool_free(&ctx, NULL);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* train: schedules, gradient clipping, the arena optimizer and its saved state                   */
/* ---------------------------------------------------------------------------------------------- */
typedef struct clip_run { float *g[3]; size_t n[3]; double norm[3]; lattn_status st[3]; float *before[3]; } clip_run;
static void clip_rank(const lattn_comm *comm, void *arg) {
    clip_run *a = (clip_run *)arg;
    lattn_ctx ctx;
    lattn_ctx_init(&ctx);
    a->st[comm->rank] = lattn_grad_clip(&ctx, comm, a->n[comm->rank], a->g[comm->rank], 1.0, &a->norm[comm->rank]);
    lattn_ctx_free(&ctx);
}
/* ---- the net: any sequence of blocks, its loss, its training step -------------------------------- */
/* A net's batch: tokens and targets, or (a regression net) features and targets. */
typedef struct net_data { const int32_t *tok, *tgt; const float *x, *y; } net_data;
/* The net's loss at its current weights (float32 forward). */
static double net_loss(lattn_ctx *ctx, const lattn_net *m, int64_t B, int64_t T, const net_data *d) {
    double l = NAN;
    lattn_status st = d->x ? lattn_net_forward_x(ctx, m, B, T, d->x, d->y, NULL, &l) : lattn_net_forward(ctx, m, B, T, d->tok, d->tgt, NULL, &l);
    return st == LATTN_OK ? l : NAN;
}
/* Each tensor's gradient against central differences of the loss along a random unit direction of
   that tensor: the best of four steps (the forward is float32, so a small step meets rounding and
   a large one curvature: the TTT biases are strongly curved). Returns the worst excess over the
   bound 2e-2 |g·u| + 1e-4 ‖g‖ + 2e-6 (<= 0: within), ‖g‖ the tensor's gradient norm: where u
   happens to be nearly orthogonal to g, the float32 forward's differences and the float32
   gradient still differ by about 1e-5 ‖g‖ (1.2e-5 to 2.8e-5 at LATTN_TEST_SEED = 3 and 55); an
   error of a fraction ε of ‖g‖ in a tensor of n entries shows as about ε ‖g‖ / √n along u, so the
   bound still fails ε above 0.3 % at n = 1024. */
static double net_fd_worst(lattn_ctx *ctx, lattn_net *m, int64_t B, int64_t T, const net_data *d, const float *g,
                           lattn_rng *rng, char *worst_name) {
    static const double hs[4] = { 1e-2, 1e-3, 1e-4, 1e-5 };
    float *w0 = fnew(m->n_params), *u = fnew(m->n_params);
    double worst = -1;
    int64_t i;
    memcpy(w0, m->arena, m->n_params * sizeof(float));
    for (i = 0; i < m->n_tensors; i++) {
        lattn_tensor *t = &m->tensors[i];
        const size_t off = (size_t)(t->data - m->arena);
        double n2 = 0, gu = 0, gn = 0, best = HUGE_VAL, bound;
        size_t j;
        int k;
        for (j = 0; j < t->count; j++) gn += (double)g[off + j] * g[off + j];
        for (j = 0; j < t->count; j++) { u[j] = (float)lattn_rng_normal_d(rng); n2 += (double)u[j] * u[j]; }
        for (j = 0; j < t->count; j++) { u[j] = (float)(u[j] / sqrt(n2)); gu += (double)u[j] * g[off + j]; }
        for (k = 0; k < 4; k++) {
            double lp, lm;
            for (j = 0; j < t->count; j++) t->data[j] = (float)(w0[off + j] + hs[k] * u[j]);
            lp = net_loss(ctx, m, B, T, d);
            for (j = 0; j < t->count; j++) t->data[j] = (float)(w0[off + j] - hs[k] * u[j]);
            lm = net_loss(ctx, m, B, T, d);
            memcpy(t->data, w0 + off, t->count * sizeof(float));
            best = LATTN__MIN(best, fabs((lp - lm) / (2 * hs[k]) - gu));
        }
        bound = 2e-2 * fabs(gu) + 1e-4 * sqrt(gn) + 2e-6;
        if (best - bound > worst) {
            worst = best - bound;
            snprintf(worst_name, 96, "%.48s (|g·u| %.3g, error %.3g)", t->name, fabs(gu), best);
        }
    }
    free(w0);
    free(u);
    return worst;
}
static void test_net(void) {
    lattn_ctx ctx;
    lattn_rng rng = lattn_rng_seed(g_seed + 97);
    lattn_net_config c;
    lattn_net m;
    const int64_t V = 50, B = 2, T = g_quick ? 21 : 37;
    int32_t tok[4 * 37], tgt[4 * 37];
    float *g, *g2;
    double l1 = 0, l2 = 0, worst;
    char name[96] = "";
    int64_t i;
    lattn_ctx_init(&ctx);
    memset(&m, 0, sizeof m);                 /* a refused configuration leaves no arena */
    for (i = 0; i < 4 * T; i++) {
        tok[i] = (int32_t)(lattn_rng_next(&rng) % V);
        tgt[i] = lattn_rng_next(&rng) % 3 == 0 ? (int32_t)(lattn_rng_next(&rng) % V) : -100;   /* MQAR-style: a third of the rows */
    }
    CHECK(lattn_net_config_parse(&ctx, &c, "laplace, attn gdn prism ttt ffn gla la p0", V, 32, 4) == LATTN_OK && c.n_blocks == 9 &&
          c.blocks[6] == LATTN_BLOCK_GLA && c.blocks[7] == LATTN_BLOCK_LA && c.blocks[8] == LATTN_BLOCK_P0 &&
          strcmp(lattn_block_name(LATTN_BLOCK_P0), "p0") == 0 && strcmp(lattn_block_name((lattn_block_kind)9), "unknown") == 0 &&
          lattn_net_init(&ctx, &m, &c, 7) == LATTN_OK, "a net of every block kind: %s", lattn_ctx_error(&ctx));
    if (!m.arena) return;
    g = fnew(m.n_params);
    g2 = fnew(m.n_params);
    {   /* gradients: finite differences per tensor, next-token targets and sparse targets */
        int pass;
        for (pass = g_quick; pass < 2; pass++) {   /* --quick: sparse targets only */
            const int32_t *tg = pass ? tgt : NULL;
            const net_data nd = { tok, tg, NULL, NULL };
            poison(g, m.n_params);
            CHECK(lattn_net_backward(&ctx, &m, B, T, tok, tg, &l1, g) == LATTN_OK && isfinite(l1), "net backward: %s", lattn_ctx_error(&ctx));
            worst = net_fd_worst(&ctx, &m, B, T, &nd, g, &rng, name);
            CHECK(worst <= 0, "net gradient (%s targets) against differences: worst %s", pass ? "sparse" : "next-token", name);
            if (getenv("LATTN_TEST_VERBOSE")) printf("    net FD (%s targets): worst %s, excess %.3g\n", pass ? "sparse" : "next-token", name, worst);
        }
    }
    {   /* the same bits at 1 and 2 threads; the forward's loss equals the backward's */
        const net_data nd = { tok, tgt, NULL, NULL };
        ctx.n_threads = 1;
        CHECK(lattn_net_backward(&ctx, &m, B, T, tok, tgt, &l1, g) == LATTN_OK, "1 thread");
        ctx.n_threads = 2;
        poison(g2, m.n_params);
        CHECK(lattn_net_backward(&ctx, &m, B, T, tok, tgt, &l2, g2) == LATTN_OK && same_bits(g, g2, m.n_params) &&
              memcmp(&l1, &l2, sizeof l1) == 0, "net gradient: the same bits at 1 and 2 threads");
        CHECK(net_loss(&ctx, &m, B, T, &nd) == l1, "forward and backward give one loss");
        ctx.keep_workspace = 1;                          /* the kept workspaces: the same bits, twice */
        poison(g2, m.n_params);
        CHECK(lattn_net_backward(&ctx, &m, B, T, tok, tgt, &l2, g2) == LATTN_OK && same_bits(g, g2, m.n_params) &&
              lattn_net_backward(&ctx, &m, B, T, tok, tgt, &l2, g2) == LATTN_OK && same_bits(g, g2, m.n_params),
              "net gradient with the context's kept workspace: the same bits on two calls");
        lattn_ctx_trim(&ctx);
        ctx.keep_workspace = 0;
        ctx.n_threads = 0;
    }
    {   /* the train step: accumulation as the mean of the micro-batches, a resumed run bit for bit */
        lattn_net a, b2, r;
        lattn_optim oa, ob, orr;
        unsigned char *wb = NULL, *ob_buf = NULL;
        size_t nw = 0, no = 0;
        double la = 0, gn = 0, first = 0;
        lattn_st_file fw, fo;
        int s;
        memset(&a, 0, sizeof a);
        CHECK(lattn_net_config_parse(&ctx, &c, "gdn ffn attn", V, 32, 4) == LATTN_OK && lattn_net_init(&ctx, &a, &c, 3) == LATTN_OK &&
              lattn_net_init(&ctx, &b2, &c, 3) == LATTN_OK && lattn_optim_init(&ctx, &oa, a.tensors, a.n_tensors, 1) == LATTN_OK &&
              lattn_optim_init(&ctx, &ob, b2.tensors, b2.n_tensors, 1) == LATTN_OK, "two nets and their optimizers");
        {   /* accumulation: step of 2 micro-batches = the manual mean of their gradients */
            float *ga = fnew(a.n_params), *gb = fnew(a.n_params);
            size_t j;
            CHECK(lattn_net_backward(&ctx, &b2, B, T, tok, tgt, NULL, ga) == LATTN_OK &&
                  lattn_net_backward(&ctx, &b2, B, T, tok + B * T, tgt + B * T, NULL, gb) == LATTN_OK, "micro-batch gradients");
            for (j = 0; j < a.n_params; j++) ga[j] = (ga[j] + gb[j]) / 2.0f;
            CHECK(lattn_grad_clip(&ctx, NULL, a.n_params, ga, 1.0, NULL) == LATTN_OK && lattn_optim_step(&ctx, &ob, 1.0, ga) == LATTN_OK, "manual step");
            CHECK(lattn_net_train_step(&ctx, &a, &oa, 1.0, 1.0, 2, B, T, tok, tgt, &la, &gn) == LATTN_OK && isfinite(la) && gn > 0,
                  "train step: %s", lattn_ctx_error(&ctx));
            CHECK(same_bits(a.arena, b2.arena, a.n_params), "2 micro-batches: the step of their mean gradient, bit for bit");
            free(ga);
            free(gb);
        }
        for (s = 0; s < 2; s++) CHECK(lattn_net_train_step(&ctx, &a, &oa, 1.0, INFINITY, 1, B, T, tok, NULL, &la, NULL) == LATTN_OK, "step");
        CHECK(lattn_net_serialize(&ctx, &a, &wb, &nw) == LATTN_OK && lattn_optim_serialize(&ctx, &oa, &ob_buf, &no) == LATTN_OK &&
              lattn_st_parse(&ctx, wb, nw, &fw) == LATTN_OK && lattn_st_parse(&ctx, ob_buf, no, &fo) == LATTN_OK &&
              lattn_net_init_st(&ctx, &r, &fw, "") == LATTN_OK && lattn_optim_init_st(&ctx, &orr, r.tensors, r.n_tensors, &fo, "") == LATTN_OK,
              "checkpoint: weights and optimizer state as safetensors, and back: %s", lattn_ctx_error(&ctx));
        for (s = 0; s < 3; s++) {
            CHECK(lattn_net_train_step(&ctx, &a, &oa, 0.5, INFINITY, 1, B, T, tok + s % 2 * B * T, NULL, &la, NULL) == LATTN_OK &&
                  lattn_net_train_step(&ctx, &r, &orr, 0.5, INFINITY, 1, B, T, tok + s % 2 * B * T, NULL, &l2, NULL) == LATTN_OK, "steps");
        }
        CHECK(r.arena && same_bits(a.arena, r.arena, a.n_params) && la == l2, "a resumed run takes the same steps, bit for bit");
        for (s = 0; s < (g_quick ? 0 : 30); s++) {   /* one batch learned: the loss falls */
            CHECK(lattn_net_train_step(&ctx, &a, &oa, 3.0, 1.0, 1, B, T, tok, NULL, &la, NULL) == LATTN_OK, "step");
            if (s == 0) first = la;
        }
        CHECK(g_quick || la < 0.5 * first, "30 steps on one batch: loss %.4f -> %.4f", first, la);
        {   /* Muon for the hidden matrices, AdamW for the rest (lattn_optim_init's split), through the net */
            lattn_optim om;
            int64_t k, n_muon = 0;
            double lm0 = 0, lm = 0;
            CHECK(lattn_optim_init(&ctx, &om, a.tensors, a.n_tensors, 1) == LATTN_OK, "Muon + AdamW over the net");
            for (k = 0; k < a.n_tensors; k++) n_muon += om.rules[k].kind == LATTN_OPT_MUON;
            for (s = 0; s < (g_quick ? 2 : 10); s++) {
                CHECK(lattn_net_train_step(&ctx, &a, &om, 1.0, 1.0, 1, B, T, tok + B * T, NULL, &lm, NULL) == LATTN_OK, "Muon step");
                if (s == 0) lm0 = lm;
            }
            CHECK(n_muon > 0 && lattn_net_tensor(&a, "embeddings.weight") == &a.tensors[0] &&
                  om.rules[0].kind == LATTN_OPT_ADAMW && isfinite(lm) && (g_quick || lm < lm0),
                  "%lld matrices on Muon, the embedding on AdamW; the loss %.4f -> %.4f", (long long)n_muon, lm0, lm);
            lattn_optim_free(&ctx, &om);
        }
        {   /* refusals */
            int32_t bad[4] = { 1, 2, 3, 50 };
            CHECK(lattn_net_train_step(&ctx, &a, &ob, 1.0, 1.0, 1, B, T, tok, NULL, NULL, NULL) == LATTN_E_DOMAIN, "another net's optimizer refused");
            CHECK(lattn_net_train_step(&ctx, &a, &oa, 1.0, 1.0, 0, B, T, tok, NULL, NULL, NULL) == LATTN_E_SHAPE, "0 micro-batches refused");
            CHECK(lattn_net_forward(&ctx, &a, 1, 4, bad, NULL, NULL, &la) == LATTN_E_DOMAIN, "a token out of the vocabulary refused");
            bad[3] = 1;
            CHECK(lattn_net_forward(&ctx, &a, 1, 4, tok, bad, NULL, &la) == LATTN_OK, "targets in range");
            bad[0] = 50;
            CHECK(lattn_net_forward(&ctx, &a, 1, 4, tok, bad, NULL, &la) == LATTN_E_DOMAIN, "a target out of the vocabulary refused");
            CHECK(lattn_net_forward(&ctx, &a, 1, 4, NULL, NULL, NULL, &la) == LATTN_E_NULL && lattn_net_forward(&ctx, &a, -1, 4, tok, NULL, NULL, &la) == LATTN_E_SHAPE &&
                  lattn_net_forward(&ctx, &a, INT64_MAX / 2, 4, tok, NULL, NULL, &la) == LATTN_E_OVERFLOW &&
                  lattn_net_backward(&ctx, &a, 1, 4, tok, NULL, NULL, NULL) == LATTN_E_NULL, "NULL, negative and overflowing sizes refused");
            poison(g, a.n_params);
            CHECK(lattn_net_backward(&ctx, &a, 0, 4, tok, NULL, &la, g) == LATTN_OK && isnan(la) && g[0] == 0 && g[a.n_params - 1] == 0,
                  "B = 0: a zero gradient and a NaN loss");
            CHECK(lattn_net_forward(&ctx, &a, 1, 1, tok, NULL, NULL, &la) == LATTN_OK && isnan(la), "T = 1, next-token targets: no target, NaN loss");
        }
        lattn_st_free(&ctx, &fw);
        lattn_st_free(&ctx, &fo);
        lattn_free(&ctx, wb);
        lattn_free(&ctx, ob_buf);
        lattn_optim_free(&ctx, &oa);
        lattn_optim_free(&ctx, &ob);
        lattn_optim_free(&ctx, &orr);
        lattn_net_free(&ctx, &a);
        lattn_net_free(&ctx, &b2);
        lattn_net_free(&ctx, &r);
    }
    {   /* a regression net (features in, values out, the mean squared error): gradients against
           differences, y with gaps, threads, the file round trip, the train step, the refusals */
        const int64_t Tr = g_quick ? 9 : 17, din = 3, dout = 2;
        lattn_net_config rc;
        lattn_net rn, rl;
        lattn_optim ro;
        lattn_pool pl;
        float *xr = fnormal(&rng, (size_t)(2 * B * Tr * din)), *yr = fnormal(&rng, (size_t)(2 * B * Tr * dout)), *gr, *gr2;
        float *o1 = fnew((size_t)(B * Tr * dout)), *o2 = fnew((size_t)(B * Tr * dout));
        unsigned char *buf = NULL;
        size_t nb = 0;
        lattn_st_file f;
        double lr1 = 0, lr2 = 0, first = 0;
        int32_t one_tok = 0;
        int s2;
        for (i = 0; i < 2 * B * Tr * dout; i++)
            if (i % 5 == 1) yr[i] = NAN;                        /* positions without a target */
        memset(&rn, 0, sizeof rn);
        CHECK(lattn_net_config_parse(&ctx, &rc, g_quick ? "gdn ffn attn" : "gdn ffn attn prism la", 0, 32, 4) == LATTN_OK, "parse");
        rc.d_in = din;
        rc.d_out = dout;
        CHECK(lattn_net_init(&ctx, &rn, &rc, 5) == LATTN_OK && strcmp(rn.tensors[0].name, "in_proj.weight") == 0 &&
              rn.tensors[0].shape[0] == 32 && rn.tensors[0].shape[1] == din && strcmp(rn.tensors[rn.n_tensors - 2].name, "head.weight") == 0 &&
              strcmp(rn.tensors[rn.n_tensors - 3].name, "norm.weight") == 0 && rn.tensors[rn.n_tensors - 1].data[0] == 0.0f,
              "regression net: in_proj, norm, head [d_out][D] with a zero bias: %s", lattn_ctx_error(&ctx));
        if (rn.arena) {
            const net_data nd = { NULL, NULL, xr, yr };
            gr = fnew(rn.n_params);
            gr2 = fnew(rn.n_params);
            poison(gr, rn.n_params);
            CHECK(lattn_net_backward_x(&ctx, &rn, B, Tr, xr, yr, &lr1, gr) == LATTN_OK && isfinite(lr1), "backward_x: %s", lattn_ctx_error(&ctx));
            worst = net_fd_worst(&ctx, &rn, B, Tr, &nd, gr, &rng, name);
            CHECK(worst <= 0, "regression net gradient (MSE, y with gaps) against differences: worst %s", name);
            {   /* the loss by hand from the outputs */
                double sse = 0;
                int64_t cnt = 0;
                poison(o1, (size_t)(B * Tr * dout));
                CHECK(lattn_net_forward_x(&ctx, &rn, B, Tr, xr, yr, o1, &lr2) == LATTN_OK && lr2 == lr1, "forward_x: the backward's loss");
                for (i = 0; i < B * Tr * dout; i++)
                    if (!isnan(yr[i])) { sse += ((double)o1[i] - yr[i]) * ((double)o1[i] - yr[i]); cnt++; }
                CHECK(fabs(sse / (double)cnt - lr2) <= 1e-12 * lr2, "the loss is the mean squared error over the targets present");
                CHECK(lattn_net_forward_x(&ctx, &rn, B, Tr, xr, NULL, o2, &lr2) == LATTN_OK && isnan(lr2) && same_bits(o1, o2, (size_t)(B * Tr * dout)),
                      "forward_x without targets: the same outputs, no loss");
            }
            ctx.n_threads = 2;
            poison(gr2, rn.n_params);
            CHECK(lattn_net_backward_x(&ctx, &rn, B, Tr, xr, yr, &lr2, gr2) == LATTN_OK && same_bits(gr, gr2, rn.n_params), "regression: 1 and 2 threads, the same bits");
            ctx.n_threads = 0;
            CHECK(lattn_net_serialize(&ctx, &rn, &buf, &nb) == LATTN_OK && lattn_st_parse(&ctx, buf, nb, &f) == LATTN_OK &&
                  lattn_st_meta(&f, "net.d_in") && lattn_net_init_st(&ctx, &rl, &f, "") == LATTN_OK && rl.cfg.d_in == din && rl.cfg.d_out == dout &&
                  lattn_net_forward_x(&ctx, &rl, B, Tr, xr, yr, o2, &lr2) == LATTN_OK && same_bits(o1, o2, (size_t)(B * Tr * dout)),
                  "regression net: saved with net.d_in / net.d_out and loaded, the same outputs: %s", lattn_ctx_error(&ctx));
            lattn_net_free(&ctx, &rl);
            {   /* the same file without net.d_out, or with net.d_out = 0: LATTN_E_FORMAT, nothing left allocated */
                lattn_st_entry *e = (lattn_st_entry *)malloc((size_t)f.n_tensors * sizeof *e);
                const char *meta[64];
                unsigned char *b2 = NULL;
                size_t n2 = 0;
                lattn_st_file f2;
                int64_t k, nm;
                int v, refused = 1;
                for (k = 0; k < f.n_tensors; k++) {
                    e[k].name = f.tensors[k].name; e[k].dtype = f.tensors[k].dtype; e[k].ndim = f.tensors[k].ndim;
                    e[k].shape = f.tensors[k].shape; e[k].data = f.tensors[k].data;
                }
                for (v = 0; v < 2; v++) {
                    for (k = 0, nm = 0; k < f.n_meta && nm < 31; k++) {
                        if (strcmp(f.meta_keys[k], "net.d_out") == 0 && v == 0) continue;
                        meta[2 * nm] = f.meta_keys[k];
                        meta[2 * nm + 1] = strcmp(f.meta_keys[k], "net.d_out") == 0 ? "0" : f.meta_values[k];
                        nm++;
                    }
                    memset(&rl, 0, sizeof rl);
                    memset(&f2, 0, sizeof f2);
                    b2 = NULL;
                    refused &= lattn_st_serialize(&ctx, e, f.n_tensors, meta, nm, &b2, &n2) == LATTN_OK &&
                               lattn_st_parse(&ctx, b2, n2, &f2) == LATTN_OK && lattn_net_init_st(&ctx, &rl, &f2, "") == LATTN_E_FORMAT && !rl.arena;
                    lattn_st_free(&ctx, &f2);
                    lattn_free(&ctx, b2);
                }
                CHECK(refused, "a regression net's file without net.d_out, or with d_out 0: LATTN_E_FORMAT");
                free(e);
            }
            lattn_st_free(&ctx, &f);
            lattn_free(&ctx, buf);
            CHECK(lattn_net_forward(&ctx, &rn, 1, 1, &one_tok, NULL, NULL, &lr2) == LATTN_E_DOMAIN &&
                  lattn_net_forward_x(&ctx, &m, 1, 1, xr, NULL, NULL, &lr2) == LATTN_E_DOMAIN &&
                  lattn_net_backward_x(&ctx, &rn, B, Tr, xr, NULL, &lr2, gr2) == LATTN_E_NULL &&
                  lattn_net_forward_x(&ctx, &rn, B, Tr, NULL, yr, NULL, &lr2) == LATTN_E_NULL &&
                  lattn_pool_init_net(&ctx, &pl, &rn, 2, 8) == LATTN_E_DOMAIN, "the token verbs, the pool and missing data refused");
            CHECK(lattn_optim_init(&ctx, &ro, rn.tensors, rn.n_tensors, 0) == LATTN_OK, "AdamW over the regression net");
            {   /* 2 micro-batches: the step of the mean gradient; then the loss falls on one batch */
                float *gb = fnew(rn.n_params);
                lattn_net rb2;
                lattn_optim ob2;
                size_t j;
                CHECK(lattn_net_init(&ctx, &rb2, &rc, 5) == LATTN_OK && lattn_optim_init(&ctx, &ob2, rb2.tensors, rb2.n_tensors, 0) == LATTN_OK &&
                      lattn_net_backward_x(&ctx, &rb2, B, Tr, xr + B * Tr * din, yr + B * Tr * dout, NULL, gb) == LATTN_OK, "second micro-batch");
                for (j = 0; j < rn.n_params; j++) gb[j] = (gr[j] + gb[j]) / 2.0f;
                CHECK(lattn_grad_clip(&ctx, NULL, rn.n_params, gb, 1.0, NULL) == LATTN_OK && lattn_optim_step(&ctx, &ob2, 1.0, gb) == LATTN_OK &&
                      lattn_net_train_step_x(&ctx, &rn, &ro, 1.0, 1.0, 2, B, Tr, xr, yr, &lr2, NULL) == LATTN_OK &&
                      same_bits(rn.arena, rb2.arena, rn.n_params), "train_step_x over 2 micro-batches = the step of their mean gradient");
                lattn_optim_free(&ctx, &ob2);
                lattn_net_free(&ctx, &rb2);
                free(gb);
            }
            for (s2 = 0; s2 < (g_quick ? 0 : 40); s2++) {
                CHECK(lattn_net_train_step_x(&ctx, &rn, &ro, 3.0, 1.0, 1, B, Tr, xr, yr, &lr2, NULL) == LATTN_OK, "step");
                if (s2 == 0) first = lr2;
            }
            CHECK(g_quick || lr2 < 0.5 * first, "40 steps on one batch: the MSE falls %.4f -> %.4f", first, lr2);
            lattn_optim_free(&ctx, &ro);
            free(gr);
            free(gr2);
        }
        rc.d_out = 0;
        CHECK(lattn_net_init(&ctx, &rl, &rc, 5) == LATTN_E_SHAPE && !rl.arena, "d_in without d_out refused");
        lattn_net_free(&ctx, &rn);
        free(xr); free(yr); free(o1); free(o2);
    }
    {   /* configurations and files that are refused */
        lattn_net x;
        lattn_net_config d;
        unsigned char *buf = NULL;
        size_t nb = 0;
        lattn_st_file f;
        const char *meta[2] = { "net.blocks", "gdn mamba" };
        lattn_st_entry e;
        int64_t shape[1] = { 1 };
        float one = 1;
        CHECK(lattn_net_config_parse(&ctx, &d, "gdn mamba", V, 32, 4) == LATTN_E_DOMAIN && strstr(lattn_ctx_error(&ctx), "mamba"), "an unknown block named in the error");
        CHECK(lattn_net_config_parse(&ctx, &d, " , ", V, 32, 4) == LATTN_E_DOMAIN && lattn_net_config_parse(&ctx, NULL, "gdn", V, 32, 4) == LATTN_E_NULL,
              "an empty list and NULL refused");
        CHECK(lattn_net_config_parse(&ctx, &d, "gdn", 0, 32, 4) == LATTN_OK && lattn_net_init(&ctx, &x, &d, 1) == LATTN_E_SHAPE && !x.arena, "vocab 0 refused");
        CHECK(lattn_net_config_parse(&ctx, &d, "gdn", V, 30, 4) == LATTN_OK && lattn_net_init(&ctx, &x, &d, 1) == LATTN_E_SHAPE, "H not dividing D refused");
        d.D = 32;
        d.blocks[0] = (lattn_block_kind)9;
        CHECK(lattn_net_init(&ctx, &x, &d, 1) == LATTN_E_DOMAIN, "an unknown kind refused");
        CHECK(lattn_net_config_parse(&ctx, &d, "ttt", V, 30, 6) == LATTN_OK && lattn_net_init(&ctx, &x, &d, 1) == LATTN_E_SHAPE && !x.arena,
              "a layer's own refusal (odd TTT heads) passes through, nothing left allocated");
        e.name = "embeddings.weight"; e.dtype = LATTN_DTYPE_F32; e.ndim = 1; e.shape = shape; e.data = &one;
        CHECK(lattn_st_serialize(&ctx, &e, 1, meta, 1, &buf, &nb) == LATTN_OK && lattn_st_parse(&ctx, buf, nb, &f) == LATTN_OK &&
              lattn_net_init_st(&ctx, &x, &f, "") == LATTN_E_FORMAT && !x.arena, "a file naming an unknown block: LATTN_E_FORMAT");
        lattn_st_free(&ctx, &f);
        lattn_free(&ctx, buf);
        meta[1] = "gdn";
        CHECK(lattn_st_serialize(&ctx, &e, 1, meta, 1, &buf, &nb) == LATTN_OK && lattn_st_parse(&ctx, buf, nb, &f) == LATTN_OK &&
              lattn_net_init_st(&ctx, &x, &f, "") == LATTN_E_FORMAT && !x.arena, "a file without the sizes: LATTN_E_FORMAT");
        CHECK(lattn_net_init_st(&ctx, &x, &f, long_prefix()) == LATTN_E_DOMAIN && !x.arena, "a prefix of LATTN_NAME_MAX characters: LATTN_E_DOMAIN");
        lattn_st_free(&ctx, &f);
        lattn_free(&ctx, buf);
    }
    free(g);
    free(g2);
    lattn_net_free(&ctx, &m);
}

/* Is the file at path well-formed XML of the kind svg_chart writes (every tag closed in order, no
   stray '<' or '&' in text), an <svg> root, and holding want_lines polylines (want_lines < 0: at least one)? */
static int svg_well_formed(const char *path, int want_lines) {
    char stack[32][16], *buf;
    long n;
    int depth = 0, lines = 0, roots = 0, ok = 1;
    FILE *f = fopen(path, "rb");
    const char *p;
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = (char *)malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) ok = 0;
    fclose(f);
    if (!ok || n < 100) { free(buf); return 0; }
    buf[n] = '\0';
    for (p = buf; *p && ok; p++) {
        if (*p == '&') ok = !strncmp(p, "&lt;", 4) || !strncmp(p, "&gt;", 4) || !strncmp(p, "&amp;", 5) || !strncmp(p, "&quot;", 6) || !strncmp(p, "&apos;", 6);
        if (*p != '<') continue;
        {
            const char *e = strchr(p, '>');
            int closing = p[1] == '/', selfc, len = 0;
            char name[16];
            if (!e) { ok = 0; break; }
            selfc = e[-1] == '/';
            while (len < 15 && isalpha((unsigned char)p[1 + closing + len])) { name[len] = p[1 + closing + len]; len++; }
            name[len] = '\0';
            if (len == 0 || memchr(p + 1, '<', (size_t)(e - p - 1))) ok = 0;
            else if (closing) ok = depth > 0 && strcmp(stack[--depth], name) == 0;
            else if (!selfc) {
                if (depth == 0) roots++;
                if (depth == 32) ok = 0; else strcpy(stack[depth++], name);
            }
            lines += !closing && strcmp(name, "polyline") == 0;
            if (depth == 0 && !closing && !selfc) ok = 0;   /* unreachable: a root is pushed */
            p = e;
        }
    }
    ok = ok && depth == 0 && roots == 1 && strncmp(buf, "<svg ", 5) == 0 && (want_lines < 0 ? lines > 0 : lines == want_lines);
    free(buf);
    return ok;
}
static void test_svg(void) {
    static const double x[4] = { 256, 512, 1024, 2048 }, y1[4] = { 1e4, 9e3, NAN, 5e3 }, y2[4] = { 3e4, 2e4, 1e4, 0 };
    svg_series s[2] = { { "a & <b>", 4, x, y1 }, { "c", 4, x, y2 } };
    svg_axes ax = { "title \"quoted\"", "T", "tokens / s", 1, 1 };
    const char *path = "build/test_chart.svg";
    CHECK(svg_chart(path, &ax, s, 2) == 0 && svg_well_formed(path, 2), "an SVG chart (log axes, a NaN and a 0 left out, escaped names) is well-formed");
    ax.logx = ax.logy = 0;
    s[0].n = 0;
    CHECK(svg_chart(path, &ax, s, 2) == 0 && svg_well_formed(path, 2), "linear axes, an empty series: well-formed");
    CHECK(svg_chart("build/no/such/dir/x.svg", &ax, s, 2) == -1, "an unwritable path: -1");
    CHECK(svg_listed("la,gla attn", "la") && svg_listed("la,gla attn", "gla") && svg_listed("la,gla attn", "attn") && !svg_listed("gla", "la") &&
          !svg_listed("laplace", "la") && !svg_listed("", "la"), "--arch lists: whole names only (la is not in gla or laplace)");
    {   /* the checker itself rejects a tag left open and a raw '&' */
        static const char *const broken[2] = { "<svg x=\"1\"><g><polyline/><polyline/></svg>", "<svg x=\"1\"><text>a & b</text><polyline/><polyline/></svg>" };
        int k, rejected = 1;
        for (k = 0; k < 2; k++) {
            FILE *f = fopen(path, "w");
            if (f) { fprintf(f, "%s%100s\n", broken[k], ""); fclose(f); }
            rejected &= !svg_well_formed(path, 2);
        }
        CHECK(rejected, "the SVG checker rejects an unclosed tag and a raw '&'");
    }
    {   /* the charts committed with bench/RESULTS.md and the README */
        static const char *const charts[] = { "charlm_loss", "charlm_long", "decode_vs_T", "memory_vs_T", "mqar_accuracy", "prefill_vs_T",
                                              "state_vs_T", "throughput_vs_T" };
        char name[64];
        size_t k;
        for (k = 0; k < sizeof charts / sizeof charts[0]; k++) {
            snprintf(name, sizeof name, "bench/plots/%s.svg", charts[k]);
            CHECK(svg_well_formed(name, -1), "%s: well-formed, with a line", name);
        }
    }
    remove(path);
}

static void test_train(void) {
    lattn_ctx ctx;
    lattn_rng rng = lattn_rng_seed(g_seed + 91);
    lattn_ctx_init(&ctx);
    {   /* schedules at their corners */
        const lattn_lr_schedule wsd = { LATTN_LR_WSD, 10, 20, 100, 0.1 }, cosn = { LATTN_LR_COSINE, 10, 0, 110, 0.1 }, cst = { LATTN_LR_CONSTANT, 4, 0, 8, 0 };
        static const int64_t ts[7] = { 1, 5, 10, 80, 90, 100, 1000 };
        static const double want_wsd[7] = { 0.1, 0.5, 1.0, 1.0, 0.55, 0.1, 0.1 };
        lattn_lr_schedule bad = wsd;
        double f = 0;
        int i;
        for (i = 0; i < 7; i++) {
            CHECK(lattn_lr_factor(&ctx, &wsd, ts[i], &f) == LATTN_OK && fabs(f - want_wsd[i]) < 1e-15, "WSD at step %lld: %.17g, want %g", (long long)ts[i], f, want_wsd[i]);
        }
        CHECK(lattn_lr_factor(&ctx, &cosn, 60, &f) == LATTN_OK && fabs(f - 0.55) < 1e-15, "cosine half way: %.17g", f);
        CHECK(lattn_lr_factor(&ctx, &cosn, 110, &f) == LATTN_OK && fabs(f - 0.1) < 1e-15, "cosine at the end: the floor (%.17g)", f);
        CHECK(lattn_lr_factor(&ctx, &cosn, 11, &f) == LATTN_OK && f < 1.0 && f > 0.999, "cosine just after the warm-up: %.17g", f);
        CHECK(lattn_lr_factor(&ctx, &cst, 2, &f) == LATTN_OK && f == 0.5 && lattn_lr_factor(&ctx, &cst, 7, &f) == LATTN_OK && f == 1.0, "constant");
        bad.decay = 91;
        CHECK(lattn_lr_factor(&ctx, &bad, 1, &f) == LATTN_E_DOMAIN, "WSD: warm-up + decay > total refused");
        bad = wsd; bad.warmup = 101;
        CHECK(lattn_lr_factor(&ctx, &bad, 1, &f) == LATTN_E_DOMAIN, "warm-up > total refused");
        bad = wsd; bad.final_ratio = NAN;
        CHECK(lattn_lr_factor(&ctx, &bad, 1, &f) == LATTN_E_DOMAIN, "NaN final ratio refused");
        bad = wsd; bad.shape = (lattn_lr_shape)7;
        CHECK(lattn_lr_factor(&ctx, &bad, 1, &f) == LATTN_E_DOMAIN, "unknown shape refused");
        CHECK(lattn_lr_factor(&ctx, &wsd, 0, &f) == LATTN_E_DOMAIN && lattn_lr_factor(&ctx, NULL, 1, &f) == LATTN_E_NULL &&
              lattn_lr_factor(&ctx, &wsd, 1, NULL) == LATTN_E_NULL, "step 0, NULL refused");
    }
    {   /* clipping: the norm against double, the same bits at 1 and 2 threads, the scaling */
        const size_t n = 3 * 4096 + 17;
        float *g = fnew(n), *g1 = fnew(n), *g2 = fnew(n);
        double want = 0, n1 = 0, n2 = 0, nn;
        size_t i;
        int ok = 1;
        lattn_rng_fill_normal(&rng, g, n, 0.0f, 0.1f);
        for (i = 0; i < n; i++) want += (double)g[i] * g[i];
        want = sqrt(want);
        memcpy(g1, g, n * 4); memcpy(g2, g, n * 4);
        ctx.n_threads = 1;
        CHECK(lattn_grad_clip(&ctx, NULL, n, g1, 1.0, &n1) == LATTN_OK, "clip");
        ctx.n_threads = 2;
        CHECK(lattn_grad_clip(&ctx, NULL, n, g2, 1.0, &n2) == LATTN_OK, "clip");
        CHECK(fabs(n1 - want) <= 1e-14 * want && memcmp(&n1, &n2, sizeof n1) == 0 && same_bits(g1, g2, n),
              "clip: norm %.17g = %.17g (double), the same bits at 1 and 2 threads", n1, want);
        for (i = 0; i < n; i++) ok &= g1[i] == g[i] * (float)(1.0 / (want + 1e-6));
        CHECK(want > 1.0 && ok, "clip: g scaled by max_norm / (norm + 1e-6)");
        memcpy(g1, g, n * 4);
        CHECK(lattn_grad_clip(&ctx, NULL, n, g1, 2 * want, &nn) == LATTN_OK && same_bits(g1, g, n), "clip: below max_norm, g unchanged");
        CHECK(lattn_grad_clip(&ctx, NULL, n, g1, INFINITY, &nn) == LATTN_OK && same_bits(g1, g, n) && nn == n2, "clip: max_norm inf measures only");
        g1[5] = NAN;
        CHECK(lattn_grad_clip(&ctx, NULL, n, g1, 1.0, &nn) == LATTN_OK && isnan(nn) && isnan(g1[0]) && isnan(g1[n - 1]),
              "clip: a NaN gradient makes the norm and every value NaN (as PyTorch)");
        memcpy(g1, g, n * 4);
        CHECK(lattn_grad_clip(&ctx, NULL, n, g1, 0.0, NULL) == LATTN_E_DOMAIN && lattn_grad_clip(&ctx, NULL, n, g1, NAN, NULL) == LATTN_E_DOMAIN &&
              lattn_grad_clip(&ctx, NULL, n, NULL, 1.0, NULL) == LATTN_E_NULL && same_bits(g1, g, n), "clip: bad max_norm or NULL refused");
        CHECK(lattn_grad_clip(&ctx, NULL, 0, NULL, 1.0, &nn) == LATTN_OK && nn == 0.0, "clip: n = 0");
        {   /* three ranks hold shards: each clips by the global norm; a failing all_reduce changes nothing */
            clip_run a;
            lattn_emu e;
            int r, f;
            for (f = 0; f < 2; f++) {
                size_t at = 0;
                memset(&a, 0, sizeof a);
                for (r = 0; r < 3; r++) {
                    a.n[r] = r == 0 ? 4096 + 3 : r == 1 ? 5 : n - 4096 - 8;
                    a.g[r] = fnew(a.n[r]);
                    memcpy(a.g[r], g + at, a.n[r] * 4);
                    at += a.n[r];
                }
                lattn_emu_init(&e, 3);
                if (f) e.fail_call = 0;
                lattn_emu_run(&e, clip_rank, &a);
                lattn_emu_free(&e);
                for (at = 0, r = 0; r < 3; r++) {
                    if (f) {
                        CHECK(a.st[r] == LATTN_E_IO && same_bits(a.g[r], g + at, a.n[r]), "clip: a failing all_reduce: its status on rank %d, g unchanged", r);
                    } else {
                        for (ok = 1, i = 0; i < a.n[r]; i++) ok &= a.g[r][i] == g[at + i] * (float)(1.0 / (a.norm[r] + 1e-6));
                        CHECK(a.st[r] == LATTN_OK && fabs(a.norm[r] - want) <= 1e-14 * want && ok, "clip on rank %d of 3: the global norm %.17g (want %.17g)", r,
                              a.norm[r], want);
                    }
                    at += a.n[r];
                    free(a.g[r]);
                }
            }
        }
        free(g); free(g1); free(g2);
    }
    {   /* optimizer cases in the conformance runner: shapes and options from a hostile file are refused */
        static const int64_t s3[1] = { 3 }, s7[1] = { 7 }, s23[2] = { 2, 3 };
        static const float x[7] = { 1, 2, 3, 4, 5, 6, 7 };
        const char *meta[6] = { "mixer", "adamw", "lr", "0.1", "bf16", "0" };
        lattn_st_entry e[2] = { { "in.param0", LATTN_DTYPE_F32, 1, s3, x }, { "in.grads", LATTN_DTYPE_F32, 1, s7, x } };
        lattn_form fs[4];
        int k;
        for (k = 0; k < 4; k++) {
            unsigned char *buf = NULL, *out = NULL;
            size_t nb = 0, no = 0;
            lattn_st_file fl;
            lattn_status want = k == 0 ? LATTN_E_FORMAT : k == 1 ? LATTN_E_FORMAT : k == 2 ? LATTN_E_UNSUPPORTED : LATTN_OK;
            if (k == 1) { meta[3] = "-1"; e[1].shape = s3; }
            if (k == 2) { meta[1] = "muon_ns5"; meta[3] = "0.1"; meta[5] = "1"; e[0].name = "in.G"; e[0].ndim = 2; e[0].shape = s23; }
            if (k == 3) { meta[1] = "adamw"; meta[5] = "0"; e[0].name = "in.param0"; e[0].ndim = 1; e[0].shape = s3; }
            CHECK(lattn_st_serialize(&ctx, e, 2, meta, 3, &buf, &nb) == LATTN_OK && lattn_st_parse(&ctx, buf, nb, &fl) == LATTN_OK, "case %d", k);
            CHECK(lattn_case_run(&ctx, &fl, LATTN_FORM_REF, &out, &no) == want, "optimizer case %d: %s (want %s)", k, lattn_ctx_error(&ctx),
                  lattn_status_string(want));
            if (k == 2) CHECK(lattn_case_forms(&fl, fs, 4) == 1 && fs[0] == LATTN_FORM_CHUNK, "a bf16 Muon case: the float32 form only");
            lattn_free(&ctx, out);
            out = NULL;
            if (k == 3) CHECK(lattn_case_forms(&fl, fs, 4) == 2 && lattn_case_run(&ctx, &fl, LATTN_FORM_STEP, &out, &no) == LATTN_E_UNSUPPORTED,
                              "an AdamW case: ref and chunk");
            lattn_free(&ctx, out);
            lattn_st_free(&ctx, &fl);
            lattn_free(&ctx, buf);
        }
    }
    {   /* the arena optimizer on the small Laplace model: the split, the steps against per-tensor calls,
           save after 2 steps and resume: bit for bit the run that never stopped */
        const lattn_laplace_config c = lattn_laplace_config_small();
        const lattn_lr_schedule sch = { LATTN_LR_WSD, 2, 2, 5, 0.1 };
        lattn_laplace_model a, b, ref;
        lattn_optim oa, ob;
        float *grads, *g1, *ms, *vs;
        unsigned char *buf = NULL;
        size_t nb = 0;
        int64_t i, n_muon = 0, n_decay = 0;
        int s;
        CHECK(lattn_laplace_init(&ctx, &a, &c, 5) == LATTN_OK && lattn_laplace_init(&ctx, &ref, &c, 5) == LATTN_OK, "init");
        CHECK(lattn_optim_init(&ctx, &oa, a.tensors, a.n_tensors, 1) == LATTN_OK, "optim init");
        for (i = 0; i < a.n_tensors; i++) { n_muon += oa.rules[i].kind == LATTN_OPT_MUON; n_decay += oa.rules[i].decay; }
        CHECK(n_muon == 5 * c.n_layers && oa.rules[0].kind == LATTN_OPT_ADAMW && lattn_laplace_tensor(&a, "embeddings.weight") &&
              oa.rules[lattn_laplace_tensor(&a, "embeddings.weight") - a.tensors].kind == LATTN_OPT_ADAMW &&
              oa.rules[lattn_laplace_tensor(&a, "layers.0.attn.conv.weight") - a.tensors].kind == LATTN_OPT_ADAMW &&
              oa.rules[lattn_laplace_tensor(&a, "layers.0.attn.conv.weight") - a.tensors].decay &&
              !oa.rules[lattn_laplace_tensor(&a, "layers.1.mlp_norm.bias") - a.tensors].decay,
              "split: %lld Muon matrices (5 per layer), %lld decayed tensors", (long long)n_muon, (long long)n_decay);
        oa.rules[lattn_laplace_tensor(&a, "embeddings.weight") - a.tensors].lr_scale = 0.5;   /* a group of its own */
        oa.adamw.weight_decay = 0.1;
        oa.muon.weight_decay = 0.01;
        oa.muon.scale = LATTN_MUON_SCALE_RMS_MATCH;
        grads = fnew(a.n_params); g1 = fnew(a.n_params);
        ms = (float *)calloc(a.n_params, 4); vs = (float *)calloc(a.n_params, 4);
        for (s = 1; s <= 5; s++) {
            double f;
            lattn_rng_fill_normal(&rng, grads, a.n_params, 0.0f, 0.01f);
            memcpy(g1, grads, a.n_params * 4);
            CHECK(lattn_lr_factor(&ctx, &sch, s, &f) == LATTN_OK, "factor");
            for (i = 0; i < a.n_tensors; i++) {      /* the per-tensor calls */
                const lattn_tensor *t = &ref.tensors[i];
                const size_t off = (size_t)(t->data - ref.arena);
                const lattn_param_rule *r = &oa.rules[i];
                if (r->kind == LATTN_OPT_MUON) {
                    lattn_muon_config mc = oa.muon;
                    mc.lr *= f * r->lr_scale;
                    mc.weight_decay = r->decay ? mc.weight_decay : 0;
                    CHECK(lattn_muon_step(&ctx, &mc, t->shape[0], t->shape[1], t->data, g1 + off, ms + off) == LATTN_OK, "muon");
                } else {
                    lattn_adamw_config ac = oa.adamw;
                    ac.lr *= f * r->lr_scale;
                    ac.weight_decay = r->decay ? ac.weight_decay : 0;
                    CHECK(lattn_adamw_step(&ctx, &ac, s, t->count, t->data, g1 + off, ms + off, vs + off) == LATTN_OK, "adamw");
                }
            }
            if (s <= 2 || s == 5) CHECK(lattn_optim_step(&ctx, &oa, f, grads) == LATTN_OK, "optim step %d", s);
            if (s == 2) {                             /* save, resume in a fresh model and optimizer */
                CHECK(lattn_optim_serialize(&ctx, &oa, &buf, &nb) == LATTN_OK && lattn_laplace_init(&ctx, &b, &c, 5) == LATTN_OK, "serialize");
                memcpy(b.arena, a.arena, a.n_params * 4);
                {
                    lattn_st_file fl;
                    CHECK(lattn_st_parse(&ctx, buf, nb, &fl) == LATTN_OK && lattn_optim_init_st(&ctx, &ob, b.tensors, b.n_tensors, &fl, "") == LATTN_OK &&
                          ob.t == 2 && ob.rules[0].lr_scale == oa.rules[0].lr_scale && ob.adamw.weight_decay == 0.1 && ob.muon.weight_decay == 0.01 &&
                          ob.muon.scale == LATTN_MUON_SCALE_RMS_MATCH,
                          "resume: %s", lattn_ctx_error(&ctx));
                    lattn_st_free(&ctx, &fl);
                }
            }
            if (s == 3 || s == 4) {                   /* the original carries on, and the resumed copy */
                float *gb = fnew(a.n_params);
                memcpy(gb, grads, a.n_params * 4);
                CHECK(lattn_optim_step(&ctx, &oa, f, grads) == LATTN_OK && lattn_optim_step(&ctx, &ob, f, gb) == LATTN_OK, "steps %d", s);
                CHECK(same_bits(a.arena, b.arena, a.n_params) && same_bits(oa.m, ob.m, a.n_params) && same_bits(oa.v, ob.v, a.n_params),
                      "step %d after resuming: the same bits as the run that never stopped", s);
                free(gb);
            }
            CHECK(same_bits(a.arena, ref.arena, a.n_params) && same_bits(oa.m, ms, a.n_params) && same_bits(grads, g1, a.n_params),
                  "optim step %d = the per-tensor AdamW and Muon calls, bit for bit", s);
        }
        CHECK(oa.t == 5, "5 steps counted");
        {   /* bad input: nothing changes */
            float *w0 = fnew(a.n_params);
            lattn_st_file fl;
            lattn_optim oc;
            lattn_tensor moved[3];
            const int64_t vec = lattn_laplace_tensor(&a, "layers.0.attn_norm.weight") - a.tensors;
            memcpy(w0, a.arena, a.n_params * 4);
            oa.rules[vec].kind = LATTN_OPT_MUON;      /* a vector */
            CHECK(oa.tensors[vec].ndim == 1 && lattn_optim_step(&ctx, &oa, 1.0, grads) == LATTN_E_DOMAIN && same_bits(w0, a.arena, a.n_params) && oa.t == 5,
                  "Muon on a vector refused, nothing changed");
            oa.rules[vec].kind = LATTN_OPT_ADAMW;
            CHECK(lattn_optim_step(&ctx, &oa, NAN, grads) == LATTN_E_DOMAIN && lattn_optim_step(&ctx, &oa, 1.0, NULL) == LATTN_E_NULL &&
                  lattn_optim_step(&ctx, NULL, 1.0, grads) == LATTN_E_NULL, "NaN factor, NULL refused");
            oa.adamw.beta1 = 1.0;
            CHECK(lattn_optim_step(&ctx, &oa, 1.0, grads) == LATTN_E_DOMAIN && same_bits(w0, a.arena, a.n_params), "a bad configuration refused, nothing changed");
            oa.adamw.beta1 = 0.9;
            memcpy(moved, a.tensors, sizeof moved);
            moved[2].data += 1;
            CHECK(lattn_optim_init(&ctx, &oc, moved, 3, 1) == LATTN_E_SHAPE && lattn_optim_init(&ctx, &oc, a.tensors, 0, 1) == LATTN_E_SHAPE &&
                  lattn_optim_init(&ctx, &oc, NULL, 3, 1) == LATTN_E_NULL, "init: a table that is not one arena, no tensors, NULL refused");
            CHECK(lattn_st_parse(&ctx, buf, nb, &fl) == LATTN_OK, "parse");
            CHECK(lattn_optim_init_st(&ctx, &oc, a.tensors, a.n_tensors - 1, &fl, "") == LATTN_E_FORMAT &&
                  lattn_optim_init_st(&ctx, &oc, ref.tensors + 1, a.n_tensors - 1, &fl, "") != LATTN_OK &&
                  lattn_optim_init_st(&ctx, &oc, a.tensors, a.n_tensors, &fl, "x.") == LATTN_E_FORMAT, "init_st: another table or prefix refused");
            CHECK(lattn_optim_init_st(&ctx, &oc, a.tensors, a.n_tensors, &fl, long_prefix()) == LATTN_E_DOMAIN && !oc.m && !oc.rules,
                  "init_st: a prefix of LATTN_NAME_MAX characters refused, nothing left allocated");
            lattn_st_free(&ctx, &fl);
            {   /* a file whose rules or step are damaged */
                static const char *const keys[3] = { "\"optim.step\":\"2\"", "\"optim.muon.ns_mode\":\"fp32\"", "\"optim.adamw.beta2\":\"0.999" };
                static const char *const repl[3] = { "\"optim.step\":\"-\"", "\"optim.muon.ns_mode\":\"fp64\"", "\"optim.adamw.beta2\":\"1.999" };
                int k;
                for (k = 0; k < 3; k++) {
                    unsigned char *cp = (unsigned char *)malloc(nb);
                    char *hit;
                    memcpy(cp, buf, nb);
                    hit = strstr((char *)cp + 8, keys[k]);
                    CHECK(hit != NULL, "the file holds %s", keys[k]);
                    if (hit) memcpy(hit, repl[k], strlen(repl[k]));
                    CHECK(lattn_st_parse(&ctx, cp, nb, &fl) == LATTN_OK && lattn_optim_init_st(&ctx, &oc, a.tensors, a.n_tensors, &fl, "") == LATTN_E_FORMAT &&
                          oc.rules == NULL, "a damaged %s refused: %s", keys[k], lattn_ctx_error(&ctx));
                    lattn_st_free(&ctx, &fl);
                    free(cp);
                }
            }
            free(w0);
        }
        {   /* save and init_file */
            lattn_optim oc;
            const char *path = "build/test_optim.safetensors";
            CHECK(lattn_optim_save(&ctx, &oa, path) == LATTN_OK && lattn_optim_init_file(&ctx, &oc, a.tensors, a.n_tensors, path) == LATTN_OK &&
                  oc.t == 5 && same_bits(oc.m, oa.m, a.n_params) && same_bits(oc.v, oa.v, a.n_params), "save, init_file");
            remove(path);
            lattn_optim_free(&ctx, &oc);
            CHECK(lattn_optim_init_file(&ctx, &oc, a.tensors, a.n_tensors, "/nonexistent/x") == LATTN_E_IO, "init_file: a missing file");
        }
        lattn_free(&ctx, buf);
        lattn_optim_free(&ctx, &oa); lattn_optim_free(&ctx, &ob);
        lattn_laplace_free(&ctx, &a); lattn_laplace_free(&ctx, &b); lattn_laplace_free(&ctx, &ref);
        free(grads); free(g1); free(ms); free(vs);
    }
    lattn_ctx_free(&ctx);
}
static void test_verbs(void) {
    static const verb mixers[] = { LATTN_MIXER_FORMS(TAKE_FORM) };
    static const verb models[] = { LATTN_MODEL_FORMS(TAKE_FORM) LATTN_MODEL_WEIGHTS(TAKE_WEIGHTS) };
    static const verb backward[] = { LATTN_MIXER_BACKWARD(TAKE_BACKWARD) };
    const int nm = (int)(sizeof mixers / sizeof mixers[0]), nd = (int)(sizeof models / sizeof models[0]);
    int i, all = 1, forms = 0;
    for (i = 0; i < nm; i++) {
        all &= has_form(mixers, nm, mixers[i].family, "ref") && has_form(mixers, nm, mixers[i].family, "chunk") &&
               has_form(mixers, nm, mixers[i].family, "step");
        forms += strcmp(mixers[i].form, "parallel") == 0;
    }
    CHECK(nm == 28 && all && forms == 1, "%d mixer functions: every family has _ref, _chunk and _step; _parallel once", nm);
    for (i = 0, all = 1; i < nd; i++)   /* the net composes the layers: its parts' _ref forms are theirs */
        all &= models[i].fn != NULL && (has_form(models, nd, models[i].family, "forward_ref") || strcmp(models[i].family, "net") == 0);
    CHECK(all, "%d model functions: every model but the net (a composition of the others) has forward_ref", nd);
    for (i = 0, all = 1; i < (int)(sizeof backward / sizeof backward[0]); i++)
        all &= backward[i].fn != NULL && has_form(mixers, nm, backward[i].family, "ref");
    CHECK(all, "every backward form belongs to a mixer's forward form");
    CHECK(lattn_form_parse("chunk", &(lattn_form){ LATTN_FORM_REF }) == 1 && strcmp(lattn_form_name(LATTN_FORM_STEP), "step") == 0 &&
          strcmp(lattn_form_name((lattn_form)4), "?") == 0, "forms by name: ref, parallel, chunk, step");
}
#undef TAKE_FORM
#undef TAKE_WEIGHTS
#undef TAKE_BACKWARD

/* ---------------------------------------------------------------------------------------------- */
/* Models: the one weights grammar (init, init_st, init_file, serialize, save, tensor, free) of every */
/* model; the article's own TCN weights load as they are                                            */
/* ---------------------------------------------------------------------------------------------- */
/* A model's weights survive serialize -> init_st and save -> init_file bit for bit: the serialized
   bytes of the copies equal the original's. */
#define MODEL_ROUND_TRIP(fam, T, m, label)                                                           \
    do {                                                                                             \
        T m2, m3, m4;                                                                                \
        unsigned char *b1 = NULL, *b2 = NULL, *b3 = NULL;                                            \
        size_t n1 = 0, n2 = 0, n3 = 0;                                                               \
        lattn_st_file f;                                                                             \
        int ok, parsed;                                                                              \
        memset(&m2, 0, sizeof m2);                                                                   \
        memset(&m3, 0, sizeof m3);                                                                   \
        ok = lattn_##fam##_serialize(&ctx, &m, &b1, &n1) == LATTN_OK &&                              \
                 lattn_st_parse(&ctx, b1, n1, &f) == LATTN_OK;                                       \
        parsed = ok;                                                                                 \
        ok = ok && lattn_##fam##_init_st(&ctx, &m2, &f, "") == LATTN_OK;                             \
        ok = ok && lattn_##fam##_save(&ctx, &m, path) == LATTN_OK;                                   \
        ok = ok && lattn_##fam##_init_file(&ctx, &m3, path) == LATTN_OK;                             \
        ok = ok && lattn_##fam##_serialize(&ctx, &m2, &b2, &n2) == LATTN_OK;                         \
        ok = ok && lattn_##fam##_serialize(&ctx, &m3, &b3, &n3) == LATTN_OK;                         \
        CHECK(ok && n1 == n2 && n1 == n3 && memcmp(b1, b2, n1) == 0 && memcmp(b1, b3, n1) == 0,      \
              "%s: serialize/init_st and save/init_file round trips (%s)", label, lattn_ctx_error(&ctx)); \
        CHECK(lattn_##fam##_init_file(&ctx, &m4, "/nonexistent/x.safetensors") == LATTN_E_IO &&    \
              lattn_##fam##_save(&ctx, &m, NULL) == LATTN_E_NULL, "%s: file errors", label);          \
        CHECK(lattn_##fam##_tensor(&m, m.tensors[0].name) == &m.tensors[0] &&                        \
              lattn_##fam##_tensor(&m, "no.such.tensor") == NULL, "%s: tensor by name", label);      \
        lattn_##fam##_free(&ctx, &m2); lattn_##fam##_free(&ctx, &m3); lattn_##fam##_free(&ctx, &m);  \
        if (parsed) lattn_st_free(&ctx, &f);                                                         \
        lattn_free(&ctx, b1); lattn_free(&ctx, b2); lattn_free(&ctx, b3);                            \
    } while (0)
static void test_models(void) {
    const char *path = "build/test_model.safetensors";
    lattn_ctx ctx;
    lattn_ctx_init(&ctx);
    {
        lattn_laplace_config c = lattn_laplace_config_small();
        lattn_laplace_model m;
        CHECK(lattn_laplace_init(&ctx, &m, &c, 1) == LATTN_OK, "laplace init");
        MODEL_ROUND_TRIP(laplace, lattn_laplace_model, m, "laplace");
    }
    {
        lattn_gdn_config c = lattn_gdn_config_default();
        lattn_gdn_layer m;
        c.D = 32; c.H = 2; c.K = 8; c.V = 16;
        CHECK(lattn_gdn_init(&ctx, &m, &c, 2) == LATTN_OK, "gdn init");
        MODEL_ROUND_TRIP(gdn, lattn_gdn_layer, m, "gdn");
    }
    {
        lattn_tf_config c = lattn_tf_config_small();
        lattn_tf_model m;
        CHECK(lattn_tf_init(&ctx, &m, &c, 3) == LATTN_OK, "tf init");
        MODEL_ROUND_TRIP(tf, lattn_tf_model, m, "tf");
    }
    {
        lattn_ttt_config c = lattn_ttt_config_default();
        lattn_ttt_layer m;
        c.D = 32; c.H = 2; c.mlp = 1; c.use_gate = 1; c.ffn = 48;
        CHECK(lattn_ttt_layer_init(&ctx, &m, &c, 4) == LATTN_OK, "ttt layer init");
        CHECK(lattn_ttt_layer_tensor(&m, "seq_modeling_block.W2") && lattn_ttt_layer_tensor(&m, "seq_modeling_block.W2")->data == m.W2,
              "ttt layer: the Block's tensors under their file names, the views into the arena");
        MODEL_ROUND_TRIP(ttt_layer, lattn_ttt_layer, m, "ttt_layer");
    }
    {
        lattn_prism_p0_config c;
        lattn_prism_p0 m;
        c.D = 24; c.H = 2; c.L = 2; c.Kc = 4;
        CHECK(lattn_prism_p0_init(&ctx, &m, &c, 5) == LATTN_OK, "prism p0 init");
        MODEL_ROUND_TRIP(prism_p0, lattn_prism_p0, m, "prism_p0");
    }
    {
        lattn_prism_config c = lattn_prism_config_large_130m();
        lattn_prism_p1 m;
        c.D = 32; c.H = 2; c.S = 2; c.R = 16; c.Kc = 5; c.rg = 8; c.vocab = 0; c.n_layers = 1; c.seq_len = 64;
        CHECK(lattn_prism_p1_init(&ctx, &m, &c, 6) == LATTN_OK, "prism p1 init");
        CHECK(lattn_prism_p1_tensor(&m, "solver_up_k_weight") && lattn_prism_p1_tensor(&m, "solver_up_k_weight")->ndim == 3 &&
              lattn_prism_p1_tensor(&m, "solver_up_k_weight")->data == m.up_k, "prism p1: a 3-D tensor, its view");
        MODEL_ROUND_TRIP(prism_p1, lattn_prism_p1, m, "prism_p1");
    }
    {
        lattn_tcn_demo_config c;
        lattn_tcn_demo m;
        c.d_in = 2; c.D = 8; c.W = 3; c.n_layers = 3;
        CHECK(lattn_tcn_demo_init(&ctx, &m, &c, 7) == LATTN_OK, "tcn demo init");
        MODEL_ROUND_TRIP(tcn_demo, lattn_tcn_demo, m, "tcn_demo");
        c.n_layers = LATTN_TCN_MAX_LAYERS + 1;
        CHECK(lattn_tcn_demo_init(&ctx, &m, &c, 7) == LATTN_E_SHAPE && m.tensors == NULL, "tcn demo: too many layers");
    }
    {   /* the article's DemoModel weights (its state_dict names) load as they are, and the first
           prediction matches the float64 run of the article's code */
        lattn_st_file f;
        lattn_tcn_demo m;
        if (lattn_st_load(&ctx, "tests/external/grad/tcn_demo_train_0.safetensors", &f) != LATTN_OK) CHECK(0, "load the TCN file");
        else {
            float *x = tensor_f32(&f, "x"), out[32];
            double *want = tensor_f64(&f, "pred_step1", NULL), got[32], num = 0, den = 0;
            int i;
            CHECK(lattn_tcn_demo_init_st(&ctx, &m, &f, "") == LATTN_OK && m.cfg.d_in == 2 && m.cfg.D == 32 && m.cfg.W == 3 &&
                  m.cfg.n_layers == 4, "the article's DemoModel from its state_dict: %s", lattn_ctx_error(&ctx));
            CHECK(lattn_tcn_demo_forward_ref(&ctx, &m, 32, 16, x, out, got) == LATTN_OK, "demo forward_ref");
            for (i = 0; i < 32; i++) { num += (got[i] - want[i]) * (got[i] - want[i]); den += want[i] * want[i]; }
            CHECK(sqrt(num / den) <= 1e-12, "demo forward_ref = the article's first prediction (float64 run): %.3g", sqrt(num / den));
            {   /* the gradients at step 1 (MSE against the stored target): = PyTorch's float64 autograd */
                double *target = tensor_f64(&f, "target", NULL), *g64 = (double *)malloc(m.n_params * sizeof(double));
                double dout[32];
                int64_t ti;
                size_t nw;
                for (i = 0; i < 32; i++) dout[i] = 2.0 * (got[i] - target[i]) / 32.0;   /* target row 0 = batch 0 */
                CHECK(lattn_tcn_demo_backward_ref(&ctx, &m, 32, 16, x, dout, NULL, g64, NULL) == LATTN_OK, "demo backward_ref: %s",
                      lattn_ctx_error(&ctx));
                for (ti = 0; ti < m.n_tensors; ti++) {
                    char nm[96];
                    double *w2;
                    snprintf(nm, sizeof nm, "grad_step1.%s", m.tensors[ti].name);
                    w2 = tensor_f64(&f, nm, &nw);
                    CHECK(w2 && rel_rms_dd(g64 + (m.tensors[ti].data - m.arena), w2, nw) <= 1e-12,
                          "demo backward_ref: %s = PyTorch's float64 autograd (%.3g)", nm, w2 ? rel_rms_dd(g64 + (m.tensors[ti].data - m.arena), w2, nw) : -1.0);
                    free(w2);
                }
                free(target); free(g64);
            }
            {   /* double weights (lattn_tcn_demo_weights64): the _ref forms read them, the float forms do not;
                   grad64 = central differences of forward_ref in the double weights */
                double got2[32], up[32], dn[32], dout[32], *g64 = (double *)malloc(m.n_params * sizeof(double)), worst = 0;
                float f1[32], f2[32];
                const size_t probe[4] = { 5, 70, m.n_params / 2, m.n_params - 1 };
                int k;
                for (i = 0; i < 32; i++) dout[i] = 0.1 * (i % 5) - 0.2;
                CHECK(lattn_tcn_demo_weights64(&ctx, NULL) == LATTN_E_NULL, "weights64: NULL model");
                CHECK(lattn_tcn_demo_weights64(&ctx, &m) == LATTN_OK && m.arena64 && m.arena64[3] == (double)m.arena[3], "weights64: a copy");
                CHECK(lattn_tcn_demo_forward_ref(&ctx, &m, 32, 16, x, NULL, got2) == LATTN_E_NULL, "weights64: out is still required");
                CHECK(lattn_tcn_demo_forward_ref(&ctx, &m, 32, 16, x, out, got2) == LATTN_OK && memcmp(got, got2, sizeof got) == 0,
                      "weights64: the same weights give the same bits");
                lattn_tcn_demo_forward(&ctx, &m, 32, 16, x, f1);
                m.arena64[probe[2]] += 1e-3;
                lattn_tcn_demo_forward(&ctx, &m, 32, 16, x, f2);
                lattn_tcn_demo_forward_ref(&ctx, &m, 32, 16, x, out, got2);
                CHECK(memcmp(f1, f2, sizeof f1) == 0 && memcmp(got, got2, sizeof got) != 0, "weights64: read by forward_ref only");
                m.arena64[probe[2]] -= 1e-3;
                CHECK(lattn_tcn_demo_backward_ref(&ctx, &m, 32, 16, x, dout, NULL, g64, NULL) == LATTN_OK, "weights64: backward_ref");
                for (k = 0; k < 4; k++) {
                    const double w0 = m.arena64[probe[k]], h = 1e-5 * (fabs(w0) + 1e-2);
                    double fd = 0;
                    m.arena64[probe[k]] = w0 + h;
                    lattn_tcn_demo_forward_ref(&ctx, &m, 32, 16, x, out, up);
                    m.arena64[probe[k]] = w0 - h;
                    lattn_tcn_demo_forward_ref(&ctx, &m, 32, 16, x, out, dn);
                    m.arena64[probe[k]] = w0;
                    for (i = 0; i < 32; i++) fd += dout[i] * (up[i] - dn[i]) / (2 * h);
                    worst = fmax(worst, fabs(fd - g64[probe[k]]) / fmax(fabs(g64[probe[k]]), 1e-6));
                }
                CHECK(worst <= 1e-6, "weights64: backward_ref's grad64 = central differences in the double weights (worst %.3g)", worst);
                free(g64);
            }
            lattn_tcn_demo_free(&ctx, &m);
            CHECK(m.arena64 == NULL, "weights64: freed with the model");
            free(x); free(want);
            lattn_st_free(&ctx, &f);
        }
    }
    remove(path);
    lattn_ctx_free(&ctx);
}
#undef MODEL_ROUND_TRIP

/* ---------------------------------------------------------------------------------------------- */
/* hardening: the regression tests of the 0.1 audit (one block per finding)                       */
/* ---------------------------------------------------------------------------------------------- */
#include <time.h>
#include <limits.h>

/* A safetensors file in memory from a header string (no tensors' data unless given). */
static unsigned char *st_from_header(const char *hdr, size_t hl, const void *data, size_t dn, size_t *size) {
    unsigned char *b = (unsigned char *)malloc(8 + hl + dn + 1);
    size_t i;
    for (i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(b + 8, hdr, hl);
    if (dn) memcpy(b + 8 + hl, data, dn);
    *size = 8 + hl + dn;
    return b;
}
/* A header of n metadata keys "k<i>" (the last one repeating key 0 when dup). */
static char *header_many_keys(long n, int dup, size_t *len) {
    char *h = (char *)malloc((size_t)n * 24 + 64), *p = h;
    long i;
    p += sprintf(p, "{\"__metadata__\":{");
    for (i = 0; i < n; i++) p += sprintf(p, "%s\"k%ld\":\"v\"", i ? "," : "", dup && i == n - 1 ? 0L : i);
    p += sprintf(p, "}}");
    *len = (size_t)(p - h);
    return h;
}
/* The golden case files named in reference_outputs/MANIFEST.json (NULL-terminated list). */
static char **manifest_files(int *n) {
    FILE *fp = fopen("reference_outputs/MANIFEST.json", "rb");
    static char buf[1 << 16];
    char **out = (char **)calloc(128, sizeof(char *)), *p;
    size_t len;
    *n = 0;
    if (!fp) return out;
    len = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[len] = 0;
    for (p = buf; (p = strstr(p, "\"file\": \"")) != NULL && *n < 127; ) {
        char *q;
        p += 9;
        q = strchr(p, '"');
        if (!q) break;
        out[*n] = (char *)malloc((size_t)(q - p) + 32);
        sprintf(out[*n], "reference_outputs/%.*s", (int)(q - p), p);
        ++*n;
        p = q;
    }
    return out;
}
/* Runs one form of a case; the serialised outputs (malloc'd copy) or NULL on failure. */
static unsigned char *run_case(lattn_ctx *ctx, const lattn_st_file *c, lattn_form form, size_t *n, lattn_status *st) {
    unsigned char *b = NULL, *copy;
    *st = lattn_case_run(ctx, c, form, &b, n);
    if (*st != LATTN_OK) return NULL;
    copy = (unsigned char *)malloc(*n);
    memcpy(copy, b, *n);
    lattn_free(ctx, b);
    return copy;
}
/* The case c with metadata key set to value (added when absent), parsed into *out (buffer in *buf). */
static lattn_status case_with_meta(const lattn_st_file *c, const char *key, const char *value, unsigned char **buf, lattn_st_file *out) {
    lattn_st_entry e[64];
    const char *meta[128];
    int64_t i, nm = 0, found = 0;
    size_t size;
    lattn_status st;
    for (i = 0; i < c->n_tensors && i < 64; i++) {
        e[i].name = c->tensors[i].name; e[i].dtype = c->tensors[i].dtype; e[i].ndim = c->tensors[i].ndim;
        e[i].shape = c->tensors[i].shape; e[i].data = c->tensors[i].data;
    }
    for (i = 0; i < c->n_meta && nm < 63; i++, nm++) {
        meta[2 * nm] = c->meta_keys[i];
        meta[2 * nm + 1] = strcmp(c->meta_keys[i], key) == 0 ? (found = 1, value) : c->meta_values[i];
    }
    if (!found) { meta[2 * nm] = key; meta[2 * nm + 1] = value; nm++; }
    st = lattn_st_serialize(NULL, e, c->n_tensors, meta, nm, buf, &size);
    if (st != LATTN_OK) return st;
    return lattn_st_parse(NULL, *buf, size, out);
}

static void test_hardening(void) {
    lattn_ctx ctx;
    lattn_ctx_init(&ctx);
    {   /* 1. duplicate detection is O(n log n): a million metadata keys parse at once; a repeat is found */
        long n = g_quick ? 100000 : 1000000;
        size_t hl, size;
        char *h = header_many_keys(n, 0, &hl);
        unsigned char *b = st_from_header(h, hl, NULL, 0, &size);
        lattn_st_file f;
        clock_t t0 = clock();
        lattn_status st = lattn_st_parse(&ctx, b, size, &f);
        double sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECK(st == LATTN_OK && f.n_meta == n, "%ld metadata keys parse (%s)", n, lattn_ctx_error(&ctx));
        CHECK(sec < 20.0, "%ld metadata keys in %.2f s: the duplicate check is not quadratic", n, sec);
        if (st == LATTN_OK) lattn_st_free(&ctx, &f);
        free(h); free(b);
        h = header_many_keys(n, 1, &hl);
        b = st_from_header(h, hl, NULL, 0, &size);
        st = lattn_st_parse(&ctx, b, size, &f);
        CHECK(st == LATTN_E_FORMAT && strstr(lattn_ctx_error(&ctx), "duplicate __metadata__ key 'k0'"),
              "a repeated key among %ld is refused: %s", n, lattn_ctx_error(&ctx));
        free(h); free(b);
    }
    {   /* 1. many tensor names: zero-sized tensors, one repeated name */
        long n = g_quick ? 20000 : 200000, i;
        char *h = (char *)malloc((size_t)n * 64 + 16), *p = h;
        size_t size;
        unsigned char *b;
        lattn_st_file f;
        lattn_status st;
        p += sprintf(p, "{");
        for (i = 0; i < n; i++) p += sprintf(p, "%s\"t%ld\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}", i ? "," : "", i == n - 1 ? 7L : i);
        p += sprintf(p, "}");
        b = st_from_header(h, (size_t)(p - h), NULL, 0, &size);
        st = lattn_st_parse(&ctx, b, size, &f);
        CHECK(st == LATTN_E_FORMAT && strstr(lattn_ctx_error(&ctx), "duplicate tensor name 't7'"), "a repeated name among %ld tensors: %s", n, lattn_ctx_error(&ctx));
        free(h); free(b);
    }
    {   /* 7. keys and dtypes compare decoded: an escaped __metadata__ is the metadata, an escaped F32 is F32 */
        static const char h1[] = "{\"\\u005f_metadata__\":{\"a\":\"b\"},\"x\":{\"dtype\":\"\\u0046\\u0033\\u0032\",\"shape\":[1],\"data_offsets\":[0,4]}}";
        static const char h2[] = "{\"__metadata__\":{},\"\\u005f_metadata__\":{}}";
        float one = 1.0f;
        size_t size;
        unsigned char *b = st_from_header(h1, sizeof h1 - 1, &one, 4, &size);
        lattn_st_file f;
        lattn_status st = lattn_st_parse(&ctx, b, size, &f);
        CHECK(st == LATTN_OK && f.n_meta == 1 && f.n_tensors == 1 && strcmp(f.meta_keys[0], "a") == 0 &&
              f.tensors[0].dtype == LATTN_DTYPE_F32, "escaped __metadata__ and F32 read decoded (%s)", lattn_ctx_error(&ctx));
        if (st == LATTN_OK) lattn_st_free(&ctx, &f);
        free(b);
        b = st_from_header(h2, sizeof h2 - 1, NULL, 0, &size);
        CHECK(lattn_st_parse(&ctx, b, size, &f) == LATTN_E_FORMAT, "__metadata__ twice, once escaped");
        free(b);
    }
    {   /* 7. the writer refuses what the reader refuses; what it writes reads back */
        const char *meta[4] = { "k", "1", "k", "2" };
        const char *meta2[4] = { "k", "1", "j", "2" };
        int64_t shp[1] = { 2 };
        float d[2] = { 1, 2 };
        lattn_st_entry e[2];
        unsigned char *b = NULL;
        size_t size;
        lattn_st_file f;
        e[0].name = "a"; e[0].dtype = LATTN_DTYPE_F32; e[0].ndim = 1; e[0].shape = shp; e[0].data = d;
        e[1] = e[0];
        CHECK(lattn_st_serialize(&ctx, e, 1, meta, 2, &b, &size) == LATTN_E_DOMAIN && !b, "writer: duplicate metadata key");
        CHECK(lattn_st_serialize(&ctx, e, 2, meta2, 2, &b, &size) == LATTN_E_DOMAIN && !b, "writer: duplicate tensor name");
        e[1].name = "b";
        CHECK(lattn_st_serialize(&ctx, e, 2, meta2, 2, &b, &size) == LATTN_OK, "writer: distinct names");
        CHECK(b && lattn_st_parse(&ctx, b, size, &f) == LATTN_OK && f.n_tensors == 2 && f.n_meta == 2 &&
              strcmp(lattn_st_meta(&f, "j"), "2") == 0, "round trip");
        lattn_st_free(&ctx, &f);
        lattn_free(&ctx, b);
    }
    {   /* 2, 3. every golden case in every form: NULL context, 10^5 and INT_MAX threads give the same bytes */
        int nf, i, fi, runs = 0, same_null = 0, same_thr = 0;
        char **files = manifest_files(&nf);
        CHECK(nf >= 40, "the manifest lists %d cases", nf);
        for (i = 0; i < nf; i++) {
            lattn_st_file c;
            lattn_form forms[8];
            int nfm;
            if (lattn_st_load(&ctx, files[i], &c) != LATTN_OK) { CHECK(0, "load %s", files[i]); continue; }
            nfm = lattn_case_forms(&c, forms, 8);
            for (fi = 0; fi < nfm; fi++) {
                size_t n1, n2, n3;
                lattn_status s1, s2, s3 = LATTN_OK;
                unsigned char *r1, *r2, *r3 = NULL;
                ctx.n_threads = 1;
                r1 = run_case(&ctx, &c, forms[fi], &n1, &s1);
                r2 = run_case(NULL, &c, forms[fi], &n2, &s2);
                runs++;
                same_null += r1 && r2 && n1 == n2 && memcmp(r1, r2, n1) == 0;
                if (!g_quick || forms[fi] == LATTN_FORM_CHUNK) {
                    ctx.n_threads = (i + fi) % 2 ? 100000 : INT_MAX;
                    r3 = run_case(&ctx, &c, forms[fi], &n3, &s3);
                    same_thr += r1 && r3 && n1 == n3 && memcmp(r1, r3, n1) == 0;
                } else same_thr++;
                if (!(r1 && r2 && s1 == LATTN_OK && s2 == LATTN_OK && s3 == LATTN_OK))
                    CHECK(0, "%s [%s]: ctx %d, NULL ctx %d, many threads %d", files[i], lattn_form_name(forms[fi]), s1, s2, s3);
                free(r1); free(r2); free(r3);
            }
            lattn_st_free(&ctx, &c);
            free(files[i]);
        }
        free(files);
        ctx.n_threads = 0;
        CHECK(runs >= 120 && same_null == runs, "NULL context: %d of %d case-form runs bit-identical", same_null, runs);
        CHECK(same_thr == runs, "n_threads 1e5 / INT_MAX: %d of %d runs bit-identical to 1 thread", same_thr, runs);
    }
    {   /* 3. NULL context on the entry points the audit named, and the helpers */
        enum { T = 40, H = 2, K = 5, V = 3 };
        lattn_rng r = lattn_rng_seed(g_seed);
        float *q = fnormal(&r, T * H * K), *k = fnormal(&r, T * H * K), *v = fnormal(&r, T * H * V), *o = fnew(T * H * V);
        float *o2 = fnew(T * H * V), *st = fnew(H * K * V), *b1 = frand(&r, T * H, 0.0f, 1.0f), *g = frand(&r, T * H, -0.5f, 0.0f);
        lattn_la_args a = LATTN__ZERO;
        lattn_gdr_args ga = LATTN__ZERO;
        lattn_attn_args aa = LATTN__ZERO;
        lattn_shortconv_args ca;
        char js[16];
        a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.o = o;
        CHECK(lattn_la_chunk(NULL, &a) == LATTN_OK, "la_chunk NULL ctx");
        a.o = o2;
        CHECK(lattn_la_parallel(NULL, &a) == LATTN_OK && rel_rms(o2, o, T * H * V) < 1e-5, "la_parallel NULL ctx");
        a.T = 1; a.ht = st;
        CHECK(lattn_la_step(NULL, &a) == LATTN_OK, "la_step NULL ctx");
        ga.B = 1; ga.T = T; ga.H = H; ga.K = K; ga.V = V; ga.q = q; ga.k = k; ga.v = v; ga.beta = b1; ga.g = g; ga.o = o;
        CHECK(lattn_gdr_chunk(NULL, &ga) == LATTN_OK, "gdr_chunk NULL ctx");
        aa.B = 1; aa.T = T; aa.H = H; aa.H_kv = H; aa.K = K; aa.V = V; aa.q = q; aa.k = k; aa.v = v; aa.o = o;
        CHECK(lattn_attn_chunk(NULL, &aa) == LATTN_OK, "attn_chunk NULL ctx");
        memset(&ca, 0, sizeof ca);
        ca.B = 1; ca.T = T; ca.D = H; ca.W = 4; ca.x = q; ca.w = k; ca.y = o;
        CHECK(lattn_shortconv_chunk(NULL, &ca) == LATTN_OK, "shortconv_fast NULL ctx");
        CHECK(strcmp(lattn_ctx_error(NULL), "no context") == 0 && lattn_ctx_profile(NULL) == lattn_profile_cpu(), "ctx helpers on NULL");
        CHECK(lattn_sgemm(NULL, 0, 2, 2, 2, q, 2, k, 2, o, 2) == LATTN_OK, "sgemm NULL ctx");
        /* 8. stats_json on NULL */
        CHECK(lattn_tiler_stats_json(NULL, lattn_profile_cpu(), js, sizeof js) == 0 && js[0] == 0, "stats_json(NULL) prints nothing");
        CHECK(lattn_tiler_stats_json(&ctx.stats, NULL, NULL, 0) > 0, "stats_json size query");
        free(q); free(k); free(v); free(o); free(o2); free(st); free(b1); free(g);
    }
    {   /* 4. a copied profile with bad fields is refused by name, never divides by zero */
        enum { T = 20, H = 1, K = 4, V = 4 };
        lattn_rng r = lattn_rng_seed(g_seed + 1);
        float *q = fnormal(&r, T * H * K), *o = fnew(T * H * V);
        lattn_la_args a = LATTN__ZERO;
        lattn_dev_profile p = *lattn_profile_trn2();
        lattn_tiler *t = NULL;
        struct { const char *field; int *f; int bad; } cases[5];
        int i;
        a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = q; a.v = q; a.o = o;
        cases[0].field = "default_chunk"; cases[0].f = &p.default_chunk; cases[0].bad = 0;
        cases[1].field = "partitions"; cases[1].f = &p.partitions; cases[1].bad = -1;
        cases[2].field = "psum_banks"; cases[2].f = &p.psum_banks; cases[2].bad = -8;
        cases[3].field = "stream_bytes"; cases[3].f = &p.stream_bytes; cases[3].bad = -4;
        cases[4].field = "mm_kmax"; cases[4].f = &p.mm_kmax; cases[4].bad = -128;
        ctx.profile = &p;
        for (i = 0; i < 5; i++) {
            int keep = *cases[i].f;
            lattn_status s;
            *cases[i].f = cases[i].bad;
            poison(o, T * H * V);
            s = lattn_la_chunk(&ctx, &a);
            CHECK(s == LATTN_E_DOMAIN && strstr(lattn_ctx_error(&ctx), cases[i].field) && o[0] != o[0],
                  "profile %s = %d: %d %s", cases[i].field, cases[i].bad, s, lattn_ctx_error(&ctx));
            CHECK(lattn_tiler_create(&ctx, &p, 16, &t) == LATTN_E_DOMAIN && !t, "tiler_create with bad %s", cases[i].field);
            CHECK(lattn_profile_check(NULL, &p) == LATTN_E_DOMAIN, "profile_check %s", cases[i].field);
            *cases[i].f = keep;
        }
        CHECK(lattn_profile_check(NULL, NULL) == LATTN_E_NULL, "profile_check NULL");
        for (i = 0; i < 6; i++) {
            const char *names[6] = { "cpu", "trn1", "trn2", "trn3", "h100", "h200" };
            CHECK(lattn_profile_check(NULL, lattn_profile_by_name(names[i])) == LATTN_OK, "built-in profile %s is valid", names[i]);
        }
        /* 8. a chunk of 100 000 on h100 is a shape error, not an 80 GB allocation */
        ctx.profile = lattn_profile_h100();
        CHECK((a.chunk = 100000, lattn_la_chunk(&ctx, &a)) == LATTN_E_SHAPE, "h100 chunk 100000: %s", lattn_ctx_error(&ctx));
        CHECK((a.chunk = INT_MAX, lattn_la_chunk(&ctx, &a)) == LATTN_E_SHAPE, "chunk INT_MAX");
        ctx.profile = NULL;
        free(q); free(o);
    }
    {   /* 5. no signed overflow inside validation (UBSan build), and the status says what the message says */
        float x[4] = { 0, 0, 0, 0 };
        lattn_la_args a = LATTN__ZERO;
        lattn_status s;
        CHECK(lattn_fmap_width(LATTN_FMAP_HEDGEHOG, INT64_MAX) == INT64_MAX, "fmap_width saturates");
        a.B = 1; a.T = 1; a.H = 1; a.K = 1; a.V = INT64_MAX; a.q = x; a.k = x; a.v = x; a.o = x;
        s = lattn_la_ref(&ctx, &a);
        CHECK(s == LATTN_E_OVERFLOW && strstr(lattn_ctx_error(&ctx), "overflow"), "V = INT64_MAX: %d %s", s, lattn_ctx_error(&ctx));
        a.V = 1; a.K = INT64_MAX / 2 + 7; a.fmap = LATTN_FMAP_HEDGEHOG; a.fmap_w = x; a.fmap_b = x;
        s = lattn_la_chunk(&ctx, &a);
        CHECK(s == LATTN_E_OVERFLOW && strstr(lattn_ctx_error(&ctx), "overflow"), "hedgehog huge K: %d %s", s, lattn_ctx_error(&ctx));
        a.K = 1; a.fmap = LATTN_FMAP_IDENTITY;
        s = (a.chunk = INT_MAX, lattn_la_chunk(&ctx, &a));
        CHECK(s == LATTN_E_SHAPE && !strstr(lattn_ctx_error(&ctx), "overflow"), "chunk INT_MAX: %d %s", s, lattn_ctx_error(&ctx));
    }
    {   /* 5. every size field of the kernel families set to an extreme: a clean refusal, no UB (UBSan) */
        static float buf[64];
        static const int64_t ext[5] = { INT64_MAX, INT64_MAX / 2 + 1, INT64_MIN, -1, (int64_t)1 << 62 };
        int f, e, bad = 0, runs = 0;
        for (e = 0; e < 5; e++)
            for (f = 0; f < 6; f++) {
                lattn_la_args la = LATTN__ZERO;
                lattn_gdr_args ga = LATTN__ZERO;
                lattn_attn_args aa = LATTN__ZERO;
                lattn_shortconv_args ca;
                lattn_scan_args sa;
                int64_t *lf[6], *gf[6], *af[6], *cf[6], *sf[6];
                int k;
                memset(&ca, 0, sizeof ca); memset(&sa, 0, sizeof sa);
                la.q = la.k = la.v = buf; la.o = buf; ga.q = ga.k = ga.v = ga.beta = buf; ga.o = buf;
                aa.q = aa.k = aa.v = buf; aa.o = buf; ca.x = ca.w = buf; ca.y = buf; sa.a = sa.b = buf; sa.y = buf;
                lf[0] = &la.B; lf[1] = &la.T; lf[2] = &la.H; lf[3] = &la.K; lf[4] = &la.V; lf[5] = &la.T;
                gf[0] = &ga.B; gf[1] = &ga.T; gf[2] = &ga.H; gf[3] = &ga.K; gf[4] = &ga.V; gf[5] = &ga.L;
                af[0] = &aa.B; af[1] = &aa.T; af[2] = &aa.H; af[3] = &aa.K; af[4] = &aa.V; af[5] = &aa.window;
                cf[0] = &ca.B; cf[1] = &ca.T; cf[2] = &ca.D; cf[3] = &ca.W; cf[4] = &ca.T; cf[5] = &ca.D;
                sf[0] = &sa.B; sf[1] = &sa.T; sf[2] = &sa.N; sf[3] = &sa.B; sf[4] = &sa.T; sf[5] = &sa.N;
                for (k = 0; k < 6; k++) { *lf[k] = 2; *af[k] = 2; *cf[k] = 2; *sf[k] = 2; *gf[k] = 2; }
                ga.L = 0; aa.window = 1; aa.mask = f == 5 ? LATTN_MASK_WINDOW : LATTN_MASK_CAUSAL;
                *lf[f] = ext[e]; *gf[f] = ext[e]; *af[f] = ext[e]; *cf[f] = ext[e]; *sf[f] = ext[e];
                if (f == 5 && ext[e] > 0) continue;           /* a huge window or L is legal or refused later */
                bad += lattn_la_ref(&ctx, &la) >= 0; bad += lattn_la_parallel(&ctx, &la) >= 0; bad += lattn_la_chunk(&ctx, &la) >= 0;
                bad += lattn_gdr_ref(&ctx, &ga) >= 0; bad += lattn_gdr_chunk(&ctx, &ga) >= 0;
                bad += lattn_attn_ref(&ctx, &aa) >= 0; bad += lattn_attn_chunk(&ctx, &aa) >= 0;
                bad += lattn_shortconv_ref(&ctx, &ca) >= 0; bad += lattn_shortconv_chunk(&ctx, &ca) >= 0;
                bad += lattn_scan_ref(&ctx, &sa) >= 0; bad += lattn_scan_chunk(&ctx, &sa) >= 0;
                runs += 11;
            }
        CHECK(bad == 0, "extreme sizes: %d of %d calls accepted", bad, runs);
    }
    {   /* 6. hostile case metadata: numbers read strictly, the case refused */
        static const struct { const char *file, *key, *value; } bad[] = {
            { "linear_attn/linear_attn_small", "chunk", "1e20" }, { "linear_attn/linear_attn_small", "chunk", "nan" },
            { "linear_attn/linear_attn_small", "scale", "abc" }, { "linear_attn/linear_attn_small", "normalize", "2" },
            { "linear_attn/linear_attn_small", "eps", "inf" }, { "tcn/tcn_small", "k", "1e20" },
            { "tcn/tcn_small", "layers", "nan" }, { "attention/attention_window", "window", "1e300" },
            { "ssm/ssm_groups_varlen", "groups", "-1e20" }, { "sps/sps_w2", "sps.w", "1e20" },
            { "sps/sps_w2", "sps.pad_id", "3.5" }, { "linear_attn/linear_attn_small", "chunk", "32x" }
        };
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char path[256];
            lattn_st_file c, c2;
            unsigned char *buf = NULL, *out = NULL;
            size_t n;
            lattn_status s;
            snprintf(path, sizeof path, "reference_outputs/%s.safetensors", bad[i].file);
            if (lattn_st_load(&ctx, path, &c) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
            if (case_with_meta(&c, bad[i].key, bad[i].value, &buf, &c2) != LATTN_OK) { CHECK(0, "rewrite %s", path); lattn_st_free(&ctx, &c); continue; }
            s = lattn_case_run(&ctx, &c2, LATTN_FORM_REF, &out, &n);
            CHECK(s == LATTN_E_FORMAT && !out && strstr(lattn_ctx_error(&ctx), bad[i].key),
                  "%s with %s = %s: %d %s", bad[i].file, bad[i].key, bad[i].value, s, lattn_ctx_error(&ctx));
            lattn_st_free(&ctx, &c2); lattn_free(NULL, buf); lattn_st_free(&ctx, &c);
        }
    }
    {   /* 11. the TTT golden cases with the output gate have it (g_proj.weight), and it changes y */
        static const char *gated[2] = { "ttt_linear_gate_b16", "ttt_mlp_gate_b16" };
        int i;
        for (i = 0; i < 2; i++) {
            char path[128];
            lattn_st_file c;
            lattn_ttt_layer m;
            snprintf(path, sizeof path, "reference_outputs/ttt_layer/%s.safetensors", gated[i]);
            if (lattn_st_load(&ctx, path, &c) != LATTN_OK) { CHECK(0, "load %s", path); continue; }
            CHECK(lattn_ttt_layer_init_st(&ctx, &m, &c, "in.") == LATTN_OK && m.cfg.use_gate == 1 && m.cfg.mlp == i,
                  "%s: use_gate %d, mlp %d", gated[i], m.cfg.use_gate, m.cfg.mlp);
            lattn_ttt_layer_free(&ctx, &m);
            lattn_st_free(&ctx, &c);
        }
    }
    {   /* 12. hedgehog maps, tied and untied; 13. RetNet decays in double */
        enum { T = 45, H = 4, K = 8, V = 6 };
        lattn_rng r = lattn_rng_seed(g_seed + 13);
        float *q = fnormal(&r, T * H * K), *k = fnormal(&r, T * H * K), *v = fnormal(&r, T * H * V);
        float *w = frand(&r, K * K, -0.3f, 0.3f), *b = frand(&r, K, -0.1f, 0.1f), *w2 = frand(&r, K * K, -0.3f, 0.3f);
        float *o0 = fnew(T * H * V), *o1 = fnew(T * H * V), *o2 = fnew(T * H * V), gam[H];
        double *d0 = (double *)malloc(T * H * V * sizeof(double)), *d1 = (double *)malloc(T * H * V * sizeof(double));
        double num = 0, den = 0, e64, e32;
        lattn_la_args a = LATTN__ZERO;
        int t, h, i, j, form, ok = 1;
        a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.fmap = LATTN_FMAP_HEDGEHOG; a.fmap_w = w; a.fmap_b = b;
        a.o = o0; lattn_la_ref(&ctx, &a);
        a.fmap_wk = w; a.fmap_bk = b; a.o = o1; lattn_la_ref(&ctx, &a);
        CHECK(same_bits(o0, o1, T * H * V), "untied hedgehog with the query's weights = tied, bit for bit");
        a.fmap_wk = w2; a.o = o1; lattn_la_ref(&ctx, &a);
        CHECK(rel_rms(o1, o0, T * H * V) > 1e-3, "untied hedgehog: the key map's own weights count (%.3g)", rel_rms(o1, o0, T * H * V));
        for (form = 0; form < 3; form++) {
            poison(o2, T * H * V); a.o = o2;
            lattn_status st = form == 0 ? lattn_la_parallel(&ctx, &a) : form == 1 ? (a.chunk = 16, lattn_la_chunk(&ctx, &a)) : lattn_la_chunk(&ctx, &a);
            ok &= st == LATTN_OK && rel_rms(o2, o1, T * H * V) <= 1e-5;
        }
        CHECK(ok, "untied hedgehog: parallel and chunked forms = _ref");
        a.fmap_bk = NULL;
        CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_DOMAIN, "fmap_wk without fmap_bk");
        a.fmap_wk = NULL; a.fmap = LATTN_FMAP_IDENTITY; a.fmap_w = a.fmap_b = NULL;
        /* RetNet decays: _ref in double against the recurrence written with γ = 1 - 2^(-5-h) itself */
        a.retnet_decay = 1; a.o = o0; a.o64 = d0;
        CHECK(lattn_la_ref(&ctx, &a) == LATTN_OK, "retnet_decay ref: %s", lattn_ctx_error(&ctx));
        for (h = 0; h < H; h++) {
            double gh = 1.0 - ldexp(1.0, -5 - h), S[K * V];
            memset(S, 0, sizeof S);
            for (t = 0; t < T; t++) {
                const float *qt = q + (t * H + h) * K, *kt = k + (t * H + h) * K, *vt = v + (t * H + h) * V;
                for (i = 0; i < K; i++) for (j = 0; j < V; j++) S[i * V + j] = gh * S[i * V + j] + (double)kt[i] * vt[j];
                for (j = 0; j < V; j++) {
                    double acc = 0;
                    for (i = 0; i < K; i++) acc += (double)qt[i] * S[i * V + j];
                    d1[(t * H + h) * V + j] = acc / sqrt((double)K);
                }
            }
        }
        for (i = 0; i < T * H * V; i++) { num += (d0[i] - d1[i]) * (d0[i] - d1[i]); den += d1[i] * d1[i]; }
        e64 = sqrt(num / den);
        lattn_retention_decay(H, gam);
        a.retnet_decay = 0; a.g_gamma = gam;
        lattn_la_ref(&ctx, &a);
        for (num = 0, i = 0; i < T * H * V; i++) num += (d0[i] - d1[i]) * (d0[i] - d1[i]);
        e32 = sqrt(num / den);
        if (getenv("LATTN_TEST_VERBOSE")) printf("  retnet_decay: _ref %.3g from the double recurrence, float32 g_gamma %.3g\n", e64, e32);
        CHECK(e64 <= 1e-14 && e32 > 1e-10, "retnet_decay: _ref %.2g from the double recurrence (float32 g_gamma: %.2g)", e64, e32);
        for (form = 0, ok = 1; form < 3; form++) {   /* fast forms: the same bits as float32 g_gamma */
            a.retnet_decay = 0; a.g_gamma = gam; a.o = o1;
            if (form == 0) lattn_la_parallel(&ctx, &a); else (a.chunk = form == 1 ? 16 : 0, lattn_la_chunk(&ctx, &a));
            a.retnet_decay = 1; a.g_gamma = NULL; a.o = o2; poison(o2, T * H * V);
            ok &= (form == 0 ? lattn_la_parallel(&ctx, &a) : (a.chunk = form == 1 ? 16 : 0, lattn_la_chunk(&ctx, &a))) == LATTN_OK && same_bits(o1, o2, T * H * V);
        }
        CHECK(ok, "retnet_decay: the fast forms round ln(gamma) to float once (bit-identical to lattn_retention_decay)");
        a.g_gamma = gam;
        CHECK(lattn_la_ref(&ctx, &a) == LATTN_E_DOMAIN, "retnet_decay with g_gamma");
        free(q); free(k); free(v); free(w); free(b); free(w2); free(o0); free(o1); free(o2); free(d0); free(d1);
    }
    {   /* 6. a weights file's float configuration is read strictly too: NaN, inf, beyond float refused */
        static const char *bad[3] = { "nan", "inf", "1e300" };
        lattn_laplace_config cf = lattn_laplace_config_small();
        lattn_laplace_model m, m2;
        unsigned char *blob = NULL, *buf;
        size_t n;
        lattn_st_file f, f2;
        int i;
        CHECK(lattn_laplace_init(&ctx, &m, &cf, 5) == LATTN_OK && lattn_laplace_serialize(&ctx, &m, &blob, &n) == LATTN_OK &&
              lattn_st_parse(&ctx, blob, n, &f) == LATTN_OK, "laplace serialize");
        for (i = 0; i < 3; i++) {
            lattn_status s;
            buf = NULL;
            if (case_with_meta(&f, "laplace.norm_eps", bad[i], &buf, &f2) != LATTN_OK) { CHECK(0, "rewrite"); continue; }
            s = lattn_laplace_init_st(&ctx, &m2, &f2, "");
            CHECK(s == LATTN_E_FORMAT && strstr(lattn_ctx_error(&ctx), "norm_eps"), "laplace.norm_eps = %s: %d %s", bad[i], s, lattn_ctx_error(&ctx));
            if (s == LATTN_OK) lattn_laplace_free(&ctx, &m2);
            lattn_st_free(&ctx, &f2); lattn_free(NULL, buf);
        }
        lattn_st_free(&ctx, &f); lattn_free(&ctx, blob); lattn_laplace_free(&ctx, &m);
    }
    {   /* 8. a directory is an I/O error, not an allocation of 2^63 bytes */
        lattn_st_file f;
        lattn_status s = lattn_st_load(&ctx, "tests", &f);
        CHECK(s == LATTN_E_IO, "st_load on a directory: %d %s", s, lattn_ctx_error(&ctx));
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* split: the work split adapts to the threads, the bits do not                                   */
/* ---------------------------------------------------------------------------------------------- */
/* A chunked GLA call on a context that keeps its workspace, then released (for fail_each_alloc). */
typedef struct { lattn_la_args a; } kept_run;
static lattn_status kept_run_fn(lattn_ctx *ctx, void *user) {
    kept_run *u = (kept_run *)user;
    lattn_status st;
    ctx->keep_workspace = 1;
    ctx->n_threads = 2;
    st = (u->a.chunk = 16, lattn_la_chunk(ctx, &u->a));
    if (st == LATTN_OK) st = (u->a.chunk = 16, lattn_la_chunk(ctx, &u->a));    /* the second call reuses it */
    lattn_ctx_free(ctx);
    return st;
}
static void test_split(void) {
    static const int thr[5] = { 1, 2, 3, 7, 16 };
    lattn_ctx ctx;
    lattn_rng r = lattn_rng_seed(g_seed + 22);
    const int64_t T = g_quick ? 70 : 150, H = 3, K = 40, V = 200;
    float *q = fnormal(&r, (size_t)(T * H * K)), *k = fnormal(&r, (size_t)(T * H * K)), *v = fnormal(&r, (size_t)(T * H * V));
    float *gk = frand(&r, (size_t)(T * H * K), -0.3f, 0.0f), *g = frand(&r, (size_t)(T * H), -0.3f, 0.0f), *beta = frand(&r, (size_t)(T * H), 0.0f, 1.0f);
    float *h0 = fnormal(&r, (size_t)(H * K * V)), *o0 = fnew((size_t)(T * H * V)), *o1 = fnew((size_t)(T * H * V));
    float *s0 = fnew((size_t)(H * K * V)), *s1 = fnew((size_t)(H * K * V)), *ref = fnew((size_t)(T * H * V)), gam[3];
    int kind, ti;
    lattn_ctx_init(&ctx);
    lattn_retention_decay(H, gam);
    for (kind = 0; kind < 5; kind++) {      /* linear attn (normalised), GLA, Simple GLA, fixed decay, GDN */
        int same = 1, close = 1;
        uint64_t mm1 = 0, mm16 = 0;
        for (ti = 0; ti < 5; ti++) {
            lattn_status st;
            float *o = ti ? o1 : o0, *ht = ti ? s1 : s0;
            poison(o, (size_t)(T * H * V)); poison(ht, (size_t)(H * K * V));
            ctx.n_threads = thr[ti];
            memset(&ctx.stats, 0, sizeof ctx.stats);
            if (kind < 4) {
                lattn_la_args a = LATTN__ZERO;
                a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.h0 = h0; a.o = o; a.ht = ht;
                a.normalize = kind == 0; a.fmap = kind == 0 ? LATTN_FMAP_ELU1 : LATTN_FMAP_IDENTITY;
                a.gk = kind == 1 ? gk : NULL; a.g = kind == 2 ? g : NULL; a.g_gamma = kind == 3 ? gam : NULL;
                if (kind == 0) a.h0 = NULL;
                st = (a.chunk = 32, lattn_la_chunk(&ctx, &a));
                if (ti == 0) { a.o = ref; a.ht = NULL; lattn_la_ref(&ctx, &a); }
            } else {
                lattn_gdr_args a = LATTN__ZERO;
                a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.beta = beta; a.g = g; a.l2norm = 1;
                a.h0 = h0; a.o = o; a.ht = ht;
                st = (a.chunk = 32, lattn_gdr_chunk(&ctx, &a));
                if (ti == 0) { a.o = ref; a.ht = NULL; lattn_gdr_ref(&ctx, &a); }
            }
            if (ti == 0) mm1 = ctx.stats.matmuls;
            if (ti == 4) mm16 = ctx.stats.matmuls;
            close &= st == LATTN_OK && rel_rms(o, ref, (size_t)(T * H * V)) <= 1e-5;
            if (ti) same &= same_bits(o1, o0, (size_t)(T * H * V)) && same_bits(s1, s0, (size_t)(H * K * V));
        }
        if (strstr(lattn_build_info(), "openmp=1"))            /* without threads the split cannot change */
            CHECK(mm16 > mm1, "kind %d: 16 threads split the value columns (%llu matmuls against %llu)", kind,
              (unsigned long long)mm16, (unsigned long long)mm1);
        CHECK(close && same, "kind %d: B = 1, 3 heads, V = 200: 1, 2, 3, 7 and 16 threads (value blocks of 200, 96 and 64) "
              "bit-identical (%d) and = _ref (%d)", kind, same, close);
    }
    {   /* causal attention with GQA: query groups of 8, 4, 2, 1 tiles */
        const int64_t Ta = g_quick ? 300 : 600, Ha = 4, D = 64;
        float *aq = fnormal(&r, (size_t)(Ta * Ha * D)), *ak = fnormal(&r, (size_t)(Ta * 2 * D)), *av = fnormal(&r, (size_t)(Ta * 2 * D));
        float *a0 = fnew((size_t)(Ta * Ha * D)), *a1 = fnew((size_t)(Ta * Ha * D));
        uint64_t dma1 = 0, dma16 = 0;
        int same = 1;
        for (ti = 0; ti < 5; ti++) {
            lattn_attn_args a = LATTN__ZERO;
            float *o = ti ? a1 : a0;
            a.B = 1; a.T = Ta; a.H = Ha; a.H_kv = 2; a.K = a.V = D; a.q = aq; a.k = ak; a.v = av; a.o = o;
            poison(o, (size_t)(Ta * Ha * D));
            ctx.n_threads = thr[ti];
            memset(&ctx.stats, 0, sizeof ctx.stats);
            same &= lattn_attn_chunk(&ctx, &a) == LATTN_OK;
            if (ti == 0) dma1 = ctx.stats.dma_in_bytes;
            if (ti == 4) dma16 = ctx.stats.dma_in_bytes;
            if (ti) same &= same_bits(a1, a0, (size_t)(Ta * Ha * D));
        }
        if (strstr(lattn_build_info(), "openmp=1"))
            CHECK(dma16 > dma1, "attention: 16 threads use smaller query groups (%llu bytes in against %llu)",
              (unsigned long long)dma16, (unsigned long long)dma1);
        CHECK(same, "attention: 1, 2, 3, 7 and 16 threads bit-identical");
        free(aq); free(ak); free(av); free(a0); free(a1);
    }
    {   /* the kept workspace: later calls allocate nothing, give the same bits, survive shape changes */
        lattn_ctx kc;
        lattn_la_args a = LATTN__ZERO;
        uint64_t n0, n1, n2;
        int same = 1, i, bad, failing;
        kept_run u;
        lattn_ctx_init(&kc);
        kc.keep_workspace = 1; kc.n_threads = 2;
        a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.gk = gk; a.o = ref;
        ctx.n_threads = 2;
        (a.chunk = 32, lattn_la_chunk(&ctx, &a));                             /* the answer, workspace per call */
        for (i = 0; i < 4; i++) {
            int64_t Ti = i == 2 ? T / 3 : T;                      /* a smaller call between the large ones */
            lattn_la_args b = a;
            b.T = Ti; b.o = o0;
            n0 = kc.n_allocs;
            poison(o0, (size_t)(T * H * V));
            same &= (b.chunk = i == 3 ? 16 : 32, lattn_la_chunk(&kc, &b)) == LATTN_OK;
            n1 = kc.n_allocs;
            if (i < 2) same &= same_bits(o0, ref, (size_t)(T * H * V));
            if (i == 1) CHECK(n1 == n0, "kept workspace: the second call of a shape allocates nothing (%llu)", (unsigned long long)(n1 - n0));
        }
        n2 = kc.n_allocs;
        CHECK(same && kc.scratch != NULL, "kept workspace: the same bits as a workspace per call, across shapes and chunks");
        lattn_ctx_trim(&kc);
        CHECK(kc.scratch == NULL && kc.keep_workspace == 1, "ctx_trim releases it (%llu allocations)", (unsigned long long)n2);
        (a.chunk = 32, lattn_la_chunk(&kc, &a));
        lattn_ctx_free(&kc);
        CHECK(kc.scratch == NULL && kc.keep_workspace == 1 && kc.n_threads == 2, "ctx_free keeps the settings");
        u.a = a; u.a.o = o1;
        bad = fail_each_alloc(kept_run_fn, &u, 200, &failing);
        CHECK(bad == 0 && failing > 3, "kept workspace: every failing allocation is LATTN_E_NOMEM, nothing leaked (%d runs)", failing);
    }
    free(q); free(k); free(v); free(gk); free(g); free(beta); free(h0); free(o0); free(o1); free(s0); free(s1); free(ref);
}

int main(int argc, char **argv) {
    static const struct { const char *name; void (*fn)(void); } areas[] = {
        { "rng", test_rng }, { "vec", test_vec }, { "gemm", test_gemm }, { "tiler", test_tiler },
        { "errors", test_errors }, { "alloc", test_alloc }, { "conv", test_conv }, { "scan", test_scan }, { "ssm", test_ssm }, { "s4d", test_s4d }, { "tcn", test_tcn },
        { "la", test_la }, { "gla", test_gla }, { "laplace", test_laplace }, { "io", test_io }, { "external", test_external },
        { "delta", test_delta }, { "gdnlayer", test_gdnlayer }, { "prism", test_prism }, { "attn", test_attn }, { "transformer", test_transformer }, { "sps", test_sps }, { "ttt", test_ttt },
        { "backward", test_backward }, { "optim", test_optim }, { "sharded", test_sharded }, { "train", test_train }, { "net", test_net }, { "serve", test_serve }, { "svg", test_svg }, { "verbs", test_verbs }, { "models", test_models }, { "hardening", test_hardening }, { "split", test_split }
    };
    const char *env = getenv("LATTN_TEST_SEED");
    const int n_areas = (int)(sizeof areas / sizeof areas[0]);
    int i, j, any = 0;
    if (env) g_seed = strtoull(env, NULL, 10);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {                /* the named tests, one per line */
            for (j = 0; j < n_areas; j++) printf("%s\n", areas[j].name);
            return 0;
        }
        if (strcmp(argv[i], "--quick") == 0) { g_quick = 1; continue; }
        for (j = 0; j < n_areas && strcmp(argv[i], areas[j].name) != 0; j++) {}
        if (j == n_areas) {
            fprintf(stderr, "run_tests: no test named '%s' (run_tests --list names them)\n", argv[i]);
            return 2;
        }
        any = 1;
    }
    printf("%s\nseed %llu%s\n", lattn_build_info(), (unsigned long long)g_seed, g_quick ? " (quick)" : "");
    for (j = 0; j < n_areas; j++) {
        int run = !any;
        for (i = 1; i < argc; i++) if (strcmp(argv[i], areas[j].name) == 0) run = 1;
        if (run) {
            int f0 = g_fail, p0 = g_pass;
            areas[j].fn();
            printf("%-9s %d passed, %d failed\n", areas[j].name, g_pass - p0, g_fail - f0);
        }
    }
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
