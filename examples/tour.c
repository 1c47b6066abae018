/* The tour (`make demo`): every mixer of lattn in every form, on built-in shapes that exercise
   chunking, with the relative RMS error of each form against its double-precision _ref and its
   speed.      cc -std=c99 -O2 -march=native -fopenmp -I.. tour.c -lm -o tour */
#define _POSIX_C_SOURCE 199309L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec; }
static double rel_rms(const float *x, const float *ref, size_t n) {
    double a = 0, b = 0; size_t i;
    for (i = 0; i < n; i++) { double d = (double)x[i] - ref[i]; a += d * d; b += (double)ref[i] * ref[i]; }
    return b > 0 ? sqrt(a / b) : sqrt(a);
}
/* fastest of three runs of stmt into sec (the first run also starts the thread pool) */
#define BEST3(sec, stmt) do { int r_; sec = 1e30;                                        \
        for (r_ = 0; r_ < 3; r_++) { double t_ = now(); stmt; t_ = now() - t_; if (t_ < sec) sec = t_; } } while (0)
static float *buf(size_t n) { return (float *)calloc(n, sizeof(float)); }
static void line(const char *mixer, const char *form, double err, double sec, double tokens) {
    printf("%-26s %-18s %12.2e %14.0f\n", mixer, form, err, tokens / sec);
}

/* Linear attention and its gated members: _ref, _parallel, _chunk (C = 64), _step loop.
   gate: 0 none, 1 per key (GLA), 2 per head (Simple GLA), 3 fixed RetNet decays (retention). */
static void tour_la(lattn_ctx *ctx, const char *name, lattn_fmap fm, int norm, int gate) {
    enum { T = 320, H = 4, K = 48, V = 64 };
    lattn_la_args a = {0};
    lattn_rng r = lattn_rng_seed(7);
    float *q = buf(T * H * K), *k = buf(T * H * K), *v = buf(T * H * V), *ref = buf(T * H * V), *o = buf(T * H * V);
    float *fw = buf(2 * K * K), *fb = buf(2 * K), *g = buf(T * H * K);
    double t0;
    int form, t;
    for (t = 0; t < K; t++) fw[t * K + t] = 1.0f;          /* hedgehog's init: W = I, b = 0 */
    a.fmap_w = fw; a.fmap_b = fb;
    lattn_rng_fill_normal(&r, q, T * H * K, 0, 1); lattn_rng_fill_normal(&r, k, T * H * K, 0, 1);
    lattn_rng_fill_normal(&r, v, T * H * V, 0, 1);
    a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.fmap = fm; a.normalize = norm;
    lattn_rng_fill_normal(&r, g, T * H * K, 0, 1);
    for (t = 0; t < T * H * K; t++) g[t] = (float)(((g[t] < 0 ? g[t] : 0.0) - log1p(exp(-fabs(g[t])))) / 4.0);  /* logsigmoid/4 */
    if (gate == 1) a.gk = g;
    if (gate == 2) a.g = g;
    if (gate == 3) { lattn_retention_decay(H, g); a.g_gamma = g; }
    a.o = ref;
    a.chunk = 64;
    BEST3(t0, lattn_la_ref(ctx, &a)); line(name, "_ref", 0.0, t0, T);
    for (form = 1; form <= 3; form++) {
        a.o = o;
        if (form == 1) BEST3(t0, lattn_la_parallel(ctx, &a));
        else if (form == 2) BEST3(t0, lattn_la_chunk(ctx, &a));
        else BEST3(t0, lattn_la_step(ctx, &a));        /* _step, one token at a time */
        line(name, form == 1 ? "_parallel" : form == 2 ? "_chunk" : "_step", rel_rms(o, ref, T * H * V), t0, T);
    }
    free(q); free(k); free(v); free(ref); free(o); free(fw); free(fb); free(g);
}

static void tour_conv(lattn_ctx *ctx) {
    enum { T = 512, D = 96, W = 4 };
    lattn_shortconv_args a;
    lattn_rng r = lattn_rng_seed(8);
    float *x = buf(T * D), *w = buf(D * W), *b = buf(D), *ref = buf(T * D), *y = buf(T * D);
    double t0;
    lattn_rng_fill_normal(&r, x, T * D, 0, 1); lattn_rng_fill_normal(&r, w, D * W, 0, 0.5f); lattn_rng_fill_normal(&r, b, D, 0, 0.1f);
    memset(&a, 0, sizeof a);
    a.B = 1; a.T = T; a.D = D; a.W = W; a.x = x; a.w = w; a.bias = b; a.silu = 1; a.y = ref;
    BEST3(t0, lattn_shortconv_ref(ctx, &a)); line("shortconv (k=4, SiLU)", "_ref", 0.0, t0, T);
    a.y = y;
    BEST3(t0, lattn_shortconv_chunk(ctx, &a)); line("shortconv (k=4, SiLU)", "_chunk", rel_rms(y, ref, T * D), t0, T);
    BEST3(t0, lattn_shortconv_step(ctx, &a)); line("shortconv (k=4, SiLU)", "_step", rel_rms(y, ref, T * D), t0, T);
    free(x); free(w); free(b); free(ref); free(y);
}

static void tour_tcn(lattn_ctx *ctx) {
    enum { T = 320, d = 64 };
    lattn_tcn_demo m;
    lattn_tcn_args a;
    lattn_rng r = lattn_rng_seed(9);
    float *x = buf(T * d), *ref = buf(T * d), *y = buf(T * d);
    double t0;
    lattn_tcn_demo_config dc;
    dc.d_in = 2; dc.D = d; dc.W = 3; dc.n_layers = 4;
    lattn_tcn_demo_init(ctx, &m, &dc, 9);
    lattn_rng_fill_normal(&r, x, T * d, 0, 1);
    memset(&a, 0, sizeof a);
    a.B = 1; a.T = T; a.D = d; a.W = 3; a.n_layers = 4; a.layers = m.layers; a.x = x; a.y = ref;
    BEST3(t0, lattn_tcn_ref(ctx, &a)); line("tcn stack (4 x k=3)", "_ref", 0.0, t0, T);
    a.y = y;
    BEST3(t0, lattn_tcn_chunk(ctx, &a)); line("tcn stack (4 x k=3)", "_chunk", rel_rms(y, ref, T * d), t0, T);
    BEST3(t0, lattn_tcn_step(ctx, &a)); line("tcn stack (4 x k=3)", "_step", rel_rms(y, ref, T * d), t0, T);
    lattn_tcn_demo_free(ctx, &m);
    free(x); free(ref); free(y);
}

static void tour_scan(lattn_ctx *ctx) {
    enum { T = 5000, N = 40 };                  /* few channels, T past one block: the time split */
    lattn_scan_args a;
    lattn_rng r = lattn_rng_seed(10);
    float *dec = buf(T * N), *b = buf(T * N), *ref = buf(T * N), *h = buf(T * N);
    double t0;
    memset(&a, 0, sizeof a);
    lattn_rng_fill_uniform(&r, dec, T * N, 0.9f, 1.0f); lattn_rng_fill_normal(&r, b, T * N, 0, 1);
    a.B = 1; a.T = T; a.N = N; a.a = dec; a.b = b; a.y = ref;
    BEST3(t0, lattn_scan_ref(ctx, &a)); line("scan (a in [0.9, 1))", "_ref", 0.0, t0, T);
    a.y = h;
    BEST3(t0, lattn_scan_chunk(ctx, &a)); line("scan (a in [0.9, 1))", "_chunk", rel_rms(h, ref, T * N), t0, T);
    BEST3(t0, lattn_scan_step(ctx, &a)); line("scan (a in [0.9, 1))", "_step", rel_rms(h, ref, T * N), t0, T);
    free(dec); free(b); free(ref); free(h);
}

static void tour_ssm(lattn_ctx *ctx) {
    enum { T = 320, D = 192, N = 16 };
    lattn_ssm_args a;
    lattn_rng r = lattn_rng_seed(11);
    float *x = buf(T * D), *dt = buf(T * D), *A = buf(D * N), *Bm = buf(T * N), *Cm = buf(T * N), *Ds = buf(D);
    float *ref = buf(T * D), *y = buf(T * D);
    double t0;
    memset(&a, 0, sizeof a);
    lattn_rng_fill_normal(&r, x, T * D, 0, 1); lattn_rng_fill_normal(&r, dt, T * D, -1, 1);
    lattn_rng_fill_uniform(&r, A, D * N, -8, -0.5f); lattn_rng_fill_normal(&r, Bm, T * N, 0, 1);
    lattn_rng_fill_normal(&r, Cm, T * N, 0, 1); lattn_rng_fill_normal(&r, Ds, D, 0, 1);
    a.B = 1; a.T = T; a.D = D; a.N = N; a.G = 1; a.dt_softplus = 1;
    a.x = x; a.dt = dt; a.A = A; a.Bm = Bm; a.Cm = Cm; a.Dskip = Ds; a.y = ref;
    BEST3(t0, lattn_ssm_ref(ctx, &a)); line("selective ssm (Mamba-1)", "_ref", 0.0, t0, T);
    a.y = y;
    BEST3(t0, lattn_ssm_chunk(ctx, &a)); line("selective ssm (Mamba-1)", "_chunk", rel_rms(y, ref, T * D), t0, T);
    BEST3(t0, lattn_ssm_step(ctx, &a)); line("selective ssm (Mamba-1)", "_step", rel_rms(y, ref, T * D), t0, T);
    free(x); free(dt); free(A); free(Bm); free(Cm); free(Ds); free(ref); free(y);
}

static void tour_s4d(lattn_ctx *ctx) {
    enum { T = 1024, D = 16, N = 32 };
    lattn_s4d_args a;
    lattn_rng r = lattn_rng_seed(12);
    float *p[6], *ldt = buf(D), *u = buf(T * D), *ref = buf(T * D), *y = buf(T * D);
    double t0;
    int i, form;
    for (i = 0; i < 6; i++) p[i] = buf(D * N);
    for (i = 0; i < D * N; i++) {           /* S4D-Lin */
        p[0][i] = logf(0.5f); p[1][i] = 3.14159265f * (float)(i % N); p[2][i] = 1.0f;
        p[4][i] = (float)(0.7 * lattn_rng_normal_d(&r)); p[5][i] = (float)(0.7 * lattn_rng_normal_d(&r));
    }
    lattn_rng_fill_uniform(&r, ldt, D, logf(1e-3f), logf(1e-1f)); lattn_rng_fill_normal(&r, u, T * D, 0, 1);
    memset(&a, 0, sizeof a);
    a.B = 1; a.T = T; a.D = D; a.N = N; a.complex_modes = 1;
    a.A_re = p[0]; a.A_im = p[1]; a.B_re = p[2]; a.B_im = p[3]; a.C_re = p[4]; a.C_im = p[5]; a.log_dt = ldt;
    a.x = u; a.y = ref;
    BEST3(t0, lattn_s4d_ref(ctx, &a)); line("s4d (S4D-Lin, complex)", "_ref", 0.0, t0, T);
    for (form = 0; form < 4; form++) {
        static const char *const names[4] = { "_chunk (scan)", "_chunk (fft)", "_chunk (conv)", "_step" };
        static const lattn_s4d_method methods[3] = { LATTN_S4D_SCAN, LATTN_S4D_FFT, LATTN_S4D_CONV };
        a.y = y;
        if (form < 3) {
            a.method = methods[form];
            BEST3(t0, lattn_s4d_chunk(ctx, &a));
        } else
            BEST3(t0, lattn_s4d_step(ctx, &a));
        line("s4d (S4D-Lin, complex)", names[form], rel_rms(y, ref, T * D), t0, T);
    }
    for (i = 0; i < 6; i++) free(p[i]);
    free(ldt); free(u); free(ref); free(y);
}

/* The delta-rule core: delta rule, Gated DeltaNet, GDR+I (separate erase key, write scale, two
   injections per token): _ref, _chunk (C = 32), _step loop. */
static void tour_gdr(lattn_ctx *ctx, const char *name, int kind) {
    enum { T = 320, H = 4, K = 64, V = 64, L = 2 };
    lattn_gdr_args a = {0};
    lattn_rng r = lattn_rng_seed(9);
    float *q = buf(T * H * K), *k = buf(T * H * K), *v = buf(T * H * V), *ref = buf(T * H * V), *o = buf(T * H * V);
    float *beta = buf(T * H), *g = buf(T * H), *e = buf(T * H * K), *c = buf(T * H);
    float *ib = buf(T * H * L), *ik = buf(T * H * L * K), *id = buf(T * H * L * V);
    double t0;
    int form;
    lattn_rng_fill_normal(&r, q, T * H * K, 0, 1); lattn_rng_fill_normal(&r, k, T * H * K, 0, 1);
    lattn_rng_fill_normal(&r, v, T * H * V, 0, 1); lattn_rng_fill_uniform(&r, beta, T * H, 0, 1);
    lattn_rng_fill_uniform(&r, g, T * H, -0.3f, 0); lattn_rng_fill_normal(&r, e, T * H * K, 0, 1);
    lattn_rng_fill_uniform(&r, c, T * H, -1, 1); lattn_rng_fill_uniform(&r, ib, T * H * L, -1, 1);
    lattn_rng_fill_normal(&r, ik, T * H * L * K, 0, 0.2f); lattn_rng_fill_normal(&r, id, T * H * L * V, 0, 1);
    a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.beta = beta; a.l2norm = 1;
    if (kind >= 1) a.g = g;
    if (kind == 2) { a.e = e; a.c = c; a.L = L; a.inj_b = ib; a.inj_kap = ik; a.inj_d = id; }
    a.o = ref;
    a.chunk = 32;
    BEST3(t0, lattn_gdr_ref(ctx, &a)); line(name, "_ref", 0.0, t0, T);
    for (form = 1; form <= 2; form++) {
        a.o = o;
        if (form == 1) BEST3(t0, lattn_gdr_chunk(ctx, &a));
        else BEST3(t0, lattn_gdr_step(ctx, &a));
        line(name, form == 1 ? "_chunk" : "_step", rel_rms(o, ref, T * H * V), t0, T);
    }
    free(q); free(k); free(v); free(ref); free(o); free(beta); free(g); free(e); free(c); free(ib); free(ik); free(id);
}

/* PRISM P0 (the paper's model) and P2 (the per-token LM form): _ref (double), _chunk, _step. */
static void tour_prism(lattn_ctx *ctx) {
    enum { T = 160, B = 1 };
    lattn_prism_p0_config c0;
    lattn_prism_p0 m0;
    lattn_prism_config pc = lattn_prism_config_large_130m();
    lattn_prism_p1 p;
    lattn_rng r = lattn_rng_seed(12);
    float *x, *ref, *y, *st;
    double t0;
    size_t sf0, sf2;
    int64_t D = 64, t, i;
    c0.D = D; c0.H = 4; c0.L = 2; c0.Kc = 4;
    pc.D = D; pc.H = 4; pc.S = 2; pc.R = 32; pc.Kc = 5; pc.rg = 8; pc.vocab = 0; pc.n_layers = 1; pc.seq_len = T;
    if (lattn_prism_p0_init(ctx, &m0, &c0, 1) != LATTN_OK || lattn_prism_p1_init(ctx, &p, &pc, 2) != LATTN_OK) return;
    if (lattn_prism_p0_state_floats(&c0, &sf0) != LATTN_OK || lattn_prism_p2_state_floats(&p, &sf2) != LATTN_OK) return;
    for (i = 0; i < (int64_t)m0.n_params; i++) m0.arena[i] += 0.1f * (float)lattn_rng_normal_d(&r);
    x = buf(T * D); ref = buf(T * D); y = buf(T * D);
    st = buf(sf0 + sf2);
    lattn_rng_fill_normal(&r, x, T * D, 0, 1);
    BEST3(t0, lattn_prism_p0_forward_ref(ctx, &m0, B, T, x, ref, NULL, NULL)); line("PRISM P0 (paper, L=2)", "_ref", 0.0, t0, T);
    BEST3(t0, lattn_prism_p0_forward(ctx, &m0, B, T, x, y, NULL)); line("PRISM P0 (paper, L=2)", "_chunk", rel_rms(y, ref, T * D), t0, T);
    BEST3(t0, memset(st, 0, sizeof(float) * sf0);
              for (t = 0; t < T; t++) lattn_prism_p0_step(ctx, &m0, B, x + t * D, y + t * D, st));
    line("PRISM P0 (paper, L=2)", "_step", rel_rms(y, ref, T * D), t0, T);
    BEST3(t0, lattn_prism_p2_forward_ref(ctx, &p, B, T, x, ref, NULL, NULL)); line("PRISM P2 (LM, S=2)", "_ref", 0.0, t0, T);
    BEST3(t0, lattn_prism_p2_forward(ctx, &p, B, T, x, y, NULL) /* chunk 32 */); line("PRISM P2 (LM, S=2)", "_chunk", rel_rms(y, ref, T * D), t0, T);
    BEST3(t0, memset(st, 0, sizeof(float) * sf2);
              for (t = 0; t < T; t++) lattn_prism_p2_step(ctx, &p, B, x + t * D, y + t * D, st));
    line("PRISM P2 (LM, S=2)", "_step", rel_rms(y, ref, T * D), t0, T);
    lattn_prism_p0_free(ctx, &m0); lattn_prism_p1_free(ctx, &p);
    free(x); free(ref); free(y); free(st);
}

/* TTT-Linear / TTT-MLP (mini-batch 16, 4 heads of 64): _ref (double, per token), _chunk (the dual
   form), _step (the primal form) over the whole call and one token at a time. */
static void tour_ttt(lattn_ctx *ctx, const char *name, int mlp) {
    enum { T = 320, H = 4, F = 64, b = 16 };
    lattn_ttt_args a = {0};
    lattn_rng r = lattn_rng_seed(13);
    size_t np;
    const int64_t P = lattn_ttt_params(F, mlp, &np) == LATTN_OK ? (int64_t)np : 0;
    float *q = buf(T * H * F), *k = buf(T * H * F), *v = buf(T * H * F), *lr = buf(T * H), *tok = buf(b);
    float *lw = buf(H * F), *lb = buf(H * F), *s0 = buf((size_t)(H * 2 * P)), *st = buf((size_t)(H * 2 * P));
    float *ref = buf(T * H * F), *o = buf(T * H * F);
    double t0;
    int64_t t, i, pos;
    lattn_rng_fill_normal(&r, q, T * H * F, 0, 1); lattn_rng_fill_normal(&r, k, T * H * F, 0, 1);
    lattn_rng_fill_normal(&r, v, T * H * F, 0, 1); lattn_rng_fill_uniform(&r, lr, T * H, 0.2f / F, 1.0f / F);
    for (i = 0; i < b; i++) tok[i] = 1.0f / (float)(i + 1);     /* the official init: token_idx = 1/(i+1) */
    for (i = 0; i < H * F; i++) lw[i] = 1.0f;
    for (i = 0; i < H; i++) lattn_rng_fill_normal(&r, s0 + i * 2 * P, (size_t)P, 0.0f, 0.125f);
    a.B = 1; a.T = T; a.H = H; a.K = F; a.mlp = mlp; a.mini_batch = b; a.q = q; a.k = k; a.v = v; a.lr = lr; a.tok = tok;
    a.ln_w = lw; a.ln_b = lb; a.h0 = s0; a.o = ref;
    BEST3(t0, lattn_ttt_ref(ctx, &a)); line(name, "_ref", 0.0, t0, T);
    a.o = o;
    BEST3(t0, lattn_ttt_chunk(ctx, &a)); line(name, "_chunk (dual)", rel_rms(o, ref, T * H * F), t0, T);
    BEST3(t0, lattn_ttt_step(ctx, &a)); line(name, "_step (primal)", rel_rms(o, ref, T * H * F), t0, T);
    BEST3(t0, {
        lattn_ttt_args s = a;
        memcpy(st, s0, sizeof(float) * (size_t)(H * 2 * P));
        s.T = 1; s.h0 = st; s.ht = st; s.pos0 = &pos;
        for (t = 0, pos = 0; t < T; t++, pos = (pos + 1) % b) {
            s.q = q + t * H * F; s.k = k + t * H * F; s.v = v + t * H * F; s.lr = lr + t * H; s.o = o + t * H * F;
            lattn_ttt_step(ctx, &s);
        }
    });
    line(name, "_step, T = 1 x 320", rel_rms(o, ref, T * H * F), t0, T);
    free(q); free(k); free(v); free(lr); free(tok); free(lw); free(lb); free(s0); free(st); free(ref); free(o);
}

/* The Laplace model (lattn_laplace_config_small: 2 layers, D 64, vocab 256) over one prompt:
   forward_ref (double), forward, and the decoder (T steps). */
static void tour_laplace(lattn_ctx *ctx) {
    enum { T = 320 };
    lattn_laplace_config c = lattn_laplace_config_small();
    lattn_laplace_model m;
    lattn_rng r = lattn_rng_seed(8);
    int32_t tok[T];
    float *ref, *o, *state;
    double t0;
    size_t sf;
    int t;
    if (lattn_laplace_init(ctx, &m, &c, 1) != LATTN_OK || lattn_laplace_state_floats(&c, &sf) != LATTN_OK) return;
    ref = buf((size_t)(T * c.vocab)); o = buf((size_t)(T * c.vocab)); state = buf(sf);
    for (t = 0; t < T; t++) tok[t] = (int32_t)(lattn_rng_next(&r) % (uint64_t)c.vocab);
    BEST3(t0, lattn_laplace_forward_ref(ctx, &m, 1, T, tok, NULL, ref, NULL, NULL)); line("Laplace model (2 layers)", "_ref", 0.0, t0, T);
    BEST3(t0, lattn_laplace_forward(ctx, &m, 1, T, tok, NULL, o, NULL));
    line("Laplace model (2 layers)", "forward", rel_rms(o, ref, (size_t)(T * c.vocab)), t0, T);
    BEST3(t0, memset(state, 0, sizeof(float) * sf);
              for (t = 0; t < T; t++) lattn_laplace_step(ctx, &m, 1, &tok[t], NULL, o + t * c.vocab, state));
    line("Laplace model (2 layers)", "step", rel_rms(o, ref, (size_t)(T * c.vocab)), t0, T);
    lattn_laplace_free(ctx, &m);
    free(ref); free(o); free(state);
}

/* Softmax attention (causal and a 64-token window; 8 query heads over 2 KV heads): _ref (double),
   _chunk (the flash-attention schedule on the tiler), _step (the decoder over a KV cache). */
static void tour_attn(lattn_ctx *ctx, const char *name, int64_t window) {
    enum { T = 320, H = 8, HKV = 2, K = 64 };
    lattn_attn_args a = {0};
    lattn_rng r = lattn_rng_seed(13);
    float *q = buf(T * H * K), *k = buf(T * HKV * K), *v = buf(T * HKV * K), *ref = buf(T * H * K), *o = buf(T * H * K);
    double t0;
    lattn_rng_fill_normal(&r, q, T * H * K, 0, 1); lattn_rng_fill_normal(&r, k, T * HKV * K, 0, 1);
    lattn_rng_fill_normal(&r, v, T * HKV * K, 0, 1);
    a.B = 1; a.T = T; a.H = H; a.H_kv = HKV; a.K = K; a.V = K; a.q = q; a.k = k; a.v = v;
    if (window >= 0) { a.mask = LATTN_MASK_WINDOW; a.window = window; }
    a.o = ref;
    BEST3(t0, lattn_attn_ref(ctx, &a)); line(name, "_ref", 0.0, t0, T);
    a.o = o;
    BEST3(t0, lattn_attn_chunk(ctx, &a)); line(name, "_chunk", rel_rms(o, ref, T * H * K), t0, T);
    BEST3(t0, lattn_attn_step(ctx, &a, NULL)); line(name, "_step", rel_rms(o, ref, T * H * K), t0, T);
    free(q); free(k); free(v); free(ref); free(o);
}

/* The transformer (lattn_tf_config_small: 2 layers, d 64, vocab 256) over one prompt:
   forward_ref (double), forward, and the decoder (T steps against a KV cache). */
static void tour_transformer(lattn_ctx *ctx) {
    enum { T = 320 };
    lattn_tf_config c = lattn_tf_config_small();
    lattn_tf_model m;
    lattn_tf_cache kc;
    lattn_rng r = lattn_rng_seed(14);
    int32_t tok[T];
    float *ref, *o;
    double t0;
    int t;
    if (lattn_tf_init(ctx, &m, &c, 1) != LATTN_OK || lattn_tf_cache_init(ctx, &kc, &m, 1, T) != LATTN_OK) return;
    ref = buf((size_t)(T * c.vocab)); o = buf((size_t)(T * c.vocab));
    for (t = 0; t < T; t++) tok[t] = (int32_t)(lattn_rng_next(&r) % (uint64_t)c.vocab);
    BEST3(t0, lattn_tf_forward_ref(ctx, &m, 1, T, tok, NULL, ref, NULL, NULL)); line("transformer (2 layers)", "_ref", 0.0, t0, T);
    BEST3(t0, lattn_tf_forward(ctx, &m, 1, T, tok, NULL, o, NULL, NULL));
    line("transformer (2 layers)", "forward", rel_rms(o, ref, (size_t)(T * c.vocab)), t0, T);
    BEST3(t0, lattn_tf_cache_reset(&kc, 0);
              for (t = 0; t < T; t++) lattn_tf_step(ctx, &m, 1, &tok[t], NULL, o + t * c.vocab, &kc));
    line("transformer (2 layers)", "step", rel_rms(o, ref, (size_t)(T * c.vocab)), t0, T);
    lattn_tf_cache_free(ctx, &kc); lattn_tf_free(ctx, &m);
    free(ref); free(o);
}

/* The SPS transformer on the same small model (<predict> = 255, EOS = 254 twice in the stream):
   forward_ref (double), forward (blocked layout, tiles skipped), and the decoder (list + ring). */
static void tour_sps(lattn_ctx *ctx, const char *name, lattn_sps_variant v) {
    enum { T = 320 };
    lattn_tf_config c = lattn_tf_config_small();
    lattn_tf_model m;
    lattn_sps_config s = lattn_sps_config_default(v);
    lattn_sps_cache kc;
    lattn_rng r = lattn_rng_seed(15);
    int32_t tok[T];
    float *ref, *o;
    double t0;
    int t;
    s.w = 8; s.predict_id = 255; s.eos_id = 254; s.pad_id = 253;
    if (lattn_tf_init(ctx, &m, &c, 1) != LATTN_OK) return;
    ref = buf((size_t)(T * c.vocab)); o = buf((size_t)(T * c.vocab));
    for (t = 0; t < T; t++) tok[t] = (int32_t)(lattn_rng_next(&r) % 253);
    tok[100] = tok[250] = 254;
    BEST3(t0, lattn_sps_forward_ref(ctx, &m, &s, 1, T, tok, ref, NULL, NULL)); line(name, "_ref", 0.0, t0, T);
    BEST3(t0, lattn_sps_forward(ctx, &m, &s, 1, T, tok, o, NULL)); line(name, "forward", rel_rms(o, ref, (size_t)(T * c.vocab)), t0, T);
    BEST3(t0, lattn_sps_cache_init(ctx, &kc, &m, &s, 1, T);
              for (t = 0; t < T; t++) lattn_sps_step(ctx, &m, 1, &tok[t], o + t * c.vocab, &kc);
              lattn_sps_cache_free(ctx, &kc));
    line(name, "step", rel_rms(o, ref, (size_t)(T * c.vocab)), t0, T);
    lattn_tf_free(ctx, &m);
    free(ref); free(o);
}

int main(void) {
    lattn_ctx ctx;
    lattn_ctx_init(&ctx);
    printf("%s\n\n%-26s %-18s %12s %14s\n", lattn_build_info(), "mixer", "form", "rel.RMS", "tokens/s");
    tour_conv(&ctx);
    tour_tcn(&ctx);
    tour_la(&ctx, "linear attn (identity)", LATTN_FMAP_IDENTITY, 0, 0);
    tour_la(&ctx, "linear attn (elu+1, norm)", LATTN_FMAP_ELU1, 1, 0);
    tour_la(&ctx, "linear attn (hedgehog)", LATTN_FMAP_HEDGEHOG, 0, 0);
    tour_la(&ctx, "GLA (per-key gates)", LATTN_FMAP_IDENTITY, 0, 1);
    tour_la(&ctx, "Simple GLA (per-head)", LATTN_FMAP_IDENTITY, 0, 2);
    tour_la(&ctx, "retention (fixed decay)", LATTN_FMAP_IDENTITY, 0, 3);
    tour_laplace(&ctx);
    tour_gdr(&ctx, "delta rule", 0);
    tour_gdr(&ctx, "Gated DeltaNet", 1);
    tour_gdr(&ctx, "GDR+I (e, c, 2 injections)", 2);
    tour_prism(&ctx);
    tour_ttt(&ctx, "TTT-Linear (b=16)", 0);
    tour_ttt(&ctx, "TTT-MLP (b=16)", 1);
    tour_scan(&ctx);
    tour_ssm(&ctx);
    tour_s4d(&ctx);
    tour_attn(&ctx, "softmax attn (causal, GQA)", -1);
    tour_attn(&ctx, "softmax attn (window 64)", 64);
    tour_transformer(&ctx);
    tour_sps(&ctx, "SPS transformer (w=8)", LATTN_SPS_SPS);
    tour_sps(&ctx, "SPS Delayed State (w=8)", LATTN_SPS_DELAYED);
    printf("\nrel.RMS: ||form - _ref|| / ||_ref|| (tolerance 1e-5). Shapes: T >= 320; linear attention\n"
           "chunk 64, 4 heads; the scan crosses its 4096-token block; _step rows decode token by token.\n"
           "tokens/s: wall-clock time of one run on this machine, noisy on a shared one (make bench measures).\n");
    return 0;
}
