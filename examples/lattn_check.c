/* lattn-check: the conformance checker (binary build/lattn-check).
     lattn-check run CASE FORM OUT         run lattn's FORM (ref parallel chunk step) on CASE's
                                           inputs and write its outputs to OUT
     lattn-check check CASE OUT [PREC]     compare OUT (any backend's outputs, same tensor names
                                           "out.*", any dtype) with CASE; PREC = fp32 (default),
                                           tf32 or bf16 (any case) picks the case's tolerance.
                                           Shapes are compared; a failing tensor reports its first bad
                                           element as an index tuple, the per-token error profile and
                                           whether a transposed reading of its last two axes passes;
                                           a float64 output is compared with the case's out64.*
     lattn-check manifest DIR              run + check every case of DIR/MANIFEST.json in every form
     lattn-check external FILE...          the public reference implementations' cases (float64): every
                                           lattn form of the mixers lattn has, against them; their
                                           gradient files (tests/external/grad) by _ref_backward and
                                           _chunk_backward; PyTorch's AdamW and the Muon reference as
                                           optimizer cases; the TCN article's training run trained
   Exit status: 0 when everything passes, 1 on any failure, 2 on bad usage or unreadable files.
       cc -std=c99 -O2 -march=native -I.. lattn_check.c -lm -o lattn-check */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "torch_rng.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static lattn_ctx g_ctx;

static int load(const char *path, lattn_st_file *f) {
    if (lattn_st_load(&g_ctx, path, f) == LATTN_OK) return 1;
    fprintf(stderr, "lattn-check: %s: %s\n", path, lattn_ctx_error(&g_ctx));
    return 0;
}
static double *as_f64(const lattn_st_tensor *t) {
    double *p = (double *)malloc(t->count * sizeof(double) + 8);
    lattn_st_to_f64(&g_ctx, t, p, t->count);
    return p;
}
static void shape_str(const lattn_st_tensor *t, char *buf, size_t cap) {
    size_t n = 0;
    int i;
    n += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < t->ndim && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)t->shape[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* Axis names of tensor `name` (without its out./out64. prefix) from the case's "layout" metadata,
   e.g. "q, k: [B][T][H][K]; v, o: [B][T][H][V]"; d0, d1, ... when the layout does not name it
   (returns 0 then). */
static int axis_names(const lattn_st_file *c, const char *name, int ndim, char ax[][16]) {
    const char *lay = lattn_st_meta(c, "layout"), *p = lay;
    const char *dot = strchr(name, '.');
    const char *base = dot ? dot + 1 : name;
    size_t bl = strlen(base);
    int i, found = 0;
    for (i = 0; i < ndim; i++) snprintf(ax[i], 16, "d%d", i);
    while (p && *p && !found) {
        const char *colon = strchr(p, ':'), *semi = strchr(p, ';'), *q;
        if (!colon || (semi && semi < colon)) { p = semi ? semi + 1 : NULL; continue; }
        for (q = p; q < colon && !found; q++)       /* is `base` one of the comma-separated names? */
            if ((q == p || q[-1] == ' ' || q[-1] == ',') && strncmp(q, base, bl) == 0 &&
                (q + bl == colon || q[bl] == ',' || q[bl] == ' ')) found = 1;
        if (found) {
            int n = 0;
            for (q = colon + 1; *q == ' '; q++) {}
            while (*q == '[' && n < ndim) {
                const char *e = strchr(q, ']');
                size_t L;
                if (!e) break;
                L = (size_t)(e - q - 1);
                if (L > 15) L = 15;
                memcpy(ax[n], q + 1, L); ax[n][L] = 0;
                n++; q = e + 1;
            }
            if (n != ndim) {
                for (i = 0; i < ndim; i++) snprintf(ax[i], 16, "d%d", i);
                found = 0;
            }
        }
        p = semi ? semi + 1 : NULL;
    }
    return found;
}
static void lower(const char *in, char *out) {
    size_t k;
    for (k = 0; in[k] && k < 15; k++) out[k] = (char)(in[k] >= 'A' && in[k] <= 'Z' ? in[k] - 'A' + 'a' : in[k]);
    out[k] = 0;
}
static void index_str(const lattn_st_tensor *t, char ax[][16], int64_t flat, char *buf, size_t cap) {
    int64_t idx[LATTN_ST_MAX_DIMS];
    size_t n = 0;
    int i;
    for (i = t->ndim - 1; i >= 0; i--) { idx[i] = t->shape[i] ? flat % t->shape[i] : 0; flat = t->shape[i] ? flat / t->shape[i] : 0; }
    n += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < t->ndim && n < cap; i++) {
        char lo[16];
        lower(ax[i], lo);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%lld", i ? ", " : "", lo, (long long)idx[i]);
    }
    if (n < cap) snprintf(buf + n, cap - n, "]");
}
/* got read as the transpose of its last two axes: x[..][j][i] -> y[..][i][j] (want's last two dims a x b). */
static void transpose_last(const double *x, double *y, size_t n, int64_t a, int64_t b) {
    size_t blk, m = (size_t)(a * b), i, j;
    for (blk = 0; blk + m <= n; blk += m)
        for (i = 0; i < (size_t)a; i++)
            for (j = 0; j < (size_t)b; j++) y[blk + i * (size_t)b + j] = x[blk + j * (size_t)a + i];
}

/* One expected tensor against the output; prints its line (and, on failure, where it goes wrong). */
static int check_tensor(const lattn_st_file *c, const lattn_st_tensor *want, const lattn_st_file *got, double tol, const char *prec) {
    const lattn_st_tensor *g = lattn_st_find(got, want->name), *ref = want;
    char sw[96], sg[96], ax[LATTN_ST_MAX_DIMS][16], where[160], name64[128];
    double *x, *y, rms = 0;
    lattn_cmp r;
    size_t i;
    int tax, named, same_shape = want->ndim == 0, d;
    shape_str(want, sw, sizeof sw);
    if (!g) { printf("  FAIL %-10s missing from the output (the case expects shape %s)\n", want->name, sw); return 0; }
    shape_str(g, sg, sizeof sg);
    if (g->count != want->count) {
        printf("  FAIL %-10s wrong size: the output has shape %s (%zu elements), the case %s (%zu)\n", want->name, sg, g->count, sw, want->count);
        return 0;
    }
    snprintf(name64, sizeof name64, "out64.%s", want->name + 4);
    if (g->dtype == LATTN_DTYPE_F64 && lattn_st_find(c, name64)) ref = lattn_st_find(c, name64);   /* a float64 output: the float64 reference */
    if (g->ndim == want->ndim)
        for (same_shape = 1, d = 0; d < want->ndim; d++) same_shape &= g->shape[d] == want->shape[d];
    x = as_f64(g); y = as_f64(ref);
    lattn_compare(x, y, want->count, tol, &r);
    r.pass &= same_shape;
    named = axis_names(c, want->name, want->ndim, ax);
    printf("  %s %-10s rel_rms %.3e  max_abs %.3e", r.pass ? "PASS" : "FAIL", want->name, r.rel_rms, r.max_abs);
    if (r.nonfinite_mismatch) {
        index_str(want, ax, r.first_mismatch, where, sizeof where);
        printf("  FAILS ON %lld NaN/Inf mismatches (first at %s; rel_rms is over the finite positions)", (long long)r.nonfinite_mismatch, where);
    }
    printf("  [tol %.0e %s%s]\n", tol, prec, ref != want ? ", float64 output against out64" : "");
    if (!same_shape) printf("       FAILS ON SHAPE: the output %s, the case %s (same element count; the values are compared in the case's order)\n", sg, sw);
    if (!r.pass && r.nonfinite_mismatch == 0) {
        for (i = 0; i < want->count; i++) rms += y[i] * y[i];
        rms = want->count ? sqrt(rms / (double)want->count) : 0;
        for (i = 0; i < want->count && fabs(x[i] - y[i]) <= tol * rms; i++) {}
        if (i < want->count) {
            index_str(want, ax, (int64_t)i, where, sizeof where);
            printf("       first element off by more than tol x RMS(ref): %s (got %.6g, want %.6g)\n", where, x[i], y[i]);
        }
        /* the per-token profile: the axis named T, else (no layout) axis 1 of a tensor of rank >= 3 */
        for (tax = 0; tax < want->ndim && strcmp(ax[tax], "T") != 0; tax++) {}
        if (tax == want->ndim && want->ndim >= 3 && !named) tax = 1;
        if (tax < want->ndim && want->shape[tax] > 1 && r.rel_rms > tol) {
            int64_t T = want->shape[tax], inner = 1, t, first = -1;
            double *num = (double *)calloc((size_t)(2 * T), sizeof(double)), *den = num + T, before = 0, after = 0;
            int d;
            for (d = tax + 1; d < want->ndim; d++) inner *= want->shape[d];
            for (i = 0; i < want->count; i++) {
                t = (int64_t)(i / (size_t)inner) % T;
                num[t] += (x[i] - y[i]) * (x[i] - y[i]); den[t] += y[i] * y[i];
            }
            char lo[16];
            lower(ax[tax], lo);
            for (t = 0; t < T; t++) {
                double e = den[t] > 0 ? sqrt(num[t] / den[t]) : sqrt(num[t]);
                if (first < 0 && e > tol) first = t;
                if (first < 0) before = e > before ? e : before;
                else after = e > after ? e : after;
            }
            if (first >= 0)
                printf("       per %s: first over tol at %s = %lld; max rel error before it %.3e, from it on %.3e\n",
                       lo, lo, (long long)first, before, after);
            free(num);
        }
    }
    if (!r.pass && r.nonfinite_mismatch == 0 && want->ndim >= 2 && want->shape[want->ndim - 1] > 1 && want->shape[want->ndim - 2] > 1) {
        int64_t a = want->shape[want->ndim - 2], b = want->shape[want->ndim - 1];
        double *xt = (double *)malloc(want->count * sizeof(double) + 8);
        lattn_cmp rt;
        transpose_last(x, xt, want->count, a, b);
        lattn_compare(xt, y, want->count, tol, &rt);
        if (rt.pass)
            printf("       a transposed reading passes (rel_rms %.3e): the output holds [..][%s][%s], the case expects [..][%s][%s]\n",
                   rt.rel_rms, ax[want->ndim - 1], ax[want->ndim - 2], ax[want->ndim - 2], ax[want->ndim - 1]);
        free(xt);
    }
    free(x); free(y);
    return r.pass;
}

/* Every "out.*" tensor of the case (but `skip`) against the same name in `got`; one line each. */
static int check(const lattn_st_file *c, const lattn_st_file *got, const char *prec, const char *label, const char *skip) {
    char key[16];
    const char *tv;
    double tol;
    int64_t i;
    int ok = 1, n = 0;
    snprintf(key, sizeof key, "tol_%s", prec);
    tv = lattn_st_meta(c, key);
    tol = tv ? strtod(tv, NULL) : 1e-5;
    for (i = 0; i < c->n_tensors; i++) {
        const lattn_st_tensor *want = &c->tensors[i];
        if (strncmp(want->name, "out.", 4) != 0 || (skip && strcmp(want->name, skip) == 0)) continue;
        n++;
        ok &= check_tensor(c, want, got, tol, prec);
    }
    if (!n) { printf("  FAIL no out.* tensors in the case\n"); ok = 0; }
    printf("%s %s\n", ok ? "PASS" : "FAIL", label);
    return ok;
}

/* A TTT layer's fast weights after the last token, from the run's out.state, as out.W1_final,
   out.b1_final (out.W2_final, out.b2_final) [B][H][..]: the official code's *_final tensors. */
typedef struct ttt_finals { const lattn_ttt_layer *m; int64_t B; } ttt_finals;
static int add_ttt_finals(const ttt_finals *tf, const lattn_st_file *out, unsigned char **buf2, size_t *n2) {
    static const char *nm[4] = { "out.W1_final", "out.b1_final", "out.W2_final", "out.b2_final" };
    const lattn_st_tensor *st = lattn_st_find(out, "out.state");
    const lattn_ttt_config *cf = &tf->m->cfg;
    int64_t H = cf->H, F = cf->D / H, P, SF;
    int64_t F1 = cf->mlp ? 4 * F : F, sz[4], shp[4][4], s, h, k, i, nw = cf->mlp ? 4 : 2;
    lattn_st_entry e[8];
    float *w, *wk, *state, tok[64];
    int ne = 0, ok;
    size_t np, ns;
    if (lattn_ttt_params(F, cf->mlp, &np) != LATTN_OK || lattn_ttt_state_floats(cf, &ns) != LATTN_OK) return 0;
    P = (int64_t)np;
    SF = (int64_t)ns;
    if (!st || (int64_t)st->count != tf->B * SF || cf->mini_batch > 64) return 0;
    sz[0] = F * F1; sz[1] = F1; sz[2] = F1 * F; sz[3] = F;
    w = (float *)malloc((size_t)(tf->B * H * P) * sizeof(float));
    wk = (float *)malloc((size_t)P * sizeof(float));
    state = (float *)malloc(st->count * sizeof(float));
    lattn_st_to_f32(&g_ctx, st, state, st->count);
    for (i = 0; i < cf->mini_batch; i++) tok[i] = fmaxf(0.0f, 1.0f / (float)(i + 1) + tf->m->tok_idx[i]);
    for (i = 0; i < out->n_tensors; i++) {
        const lattn_st_tensor *t = &out->tensors[i];
        e[ne].name = t->name; e[ne].dtype = t->dtype; e[ne].ndim = t->ndim; e[ne].shape = t->shape; e[ne].data = t->data;
        ne++;
    }
    for (k = 0; k < nw; k++) {                       /* weight k of every (sequence, head), contiguous */
        int64_t off = 0;
        for (i = 0; i < k; i++) off += sz[i];
        for (s = 0; s < tf->B; s++)
            for (h = 0; h < H; h++) {
                lattn_ttt_weights(F, cf->mlp, tok, (int64_t)state[s * SF + SF - 1], state + s * SF + h * 2 * P, wk);
                memcpy(w + (size_t)(tf->B * H) * (size_t)off + (size_t)((s * H + h) * sz[k]), wk + off, (size_t)sz[k] * sizeof(float));
            }
        shp[k][0] = tf->B; shp[k][1] = H;
        shp[k][2] = k % 2 ? 1 : (k == 0 ? F : F1); shp[k][3] = k == 0 ? F1 : k == 2 ? F : sz[k];
        e[ne].name = nm[k]; e[ne].dtype = LATTN_DTYPE_F32; e[ne].ndim = 4; e[ne].shape = shp[k];
        e[ne].data = w + (size_t)(tf->B * H) * (size_t)off;
        ne++;
    }
    ok = lattn_st_serialize(&g_ctx, e, ne, NULL, 0, buf2, n2) == LATTN_OK;
    free(w); free(wk); free(state);
    return ok;
}

/* Run one form of a parsed case and check it; 1 pass, 0 fail. */
static int run_check(const lattn_st_file *c, lattn_form form, const char *label, const ttt_finals *tf) {
    unsigned char *buf, *buf2 = NULL;
    size_t n, n2;
    lattn_st_file got, got2;
    int ok;
    char lab[512];
    snprintf(lab, sizeof lab, "%s [%s]", label, lattn_form_name(form));
    if (lattn_case_run(&g_ctx, c, form, &buf, &n) != LATTN_OK) {
        printf("FAIL %s: %s\n", lab, lattn_ctx_error(&g_ctx));
        return 0;
    }
    if (lattn_st_parse(&g_ctx, buf, n, &got) != LATTN_OK) { printf("FAIL %s: %s\n", lab, lattn_ctx_error(&g_ctx)); lattn_free(&g_ctx, buf); return 0; }
    if (tf) {                                        /* the state as the official final weights */
        if (!add_ttt_finals(tf, &got, &buf2, &n2) || lattn_st_parse(&g_ctx, buf2, n2, &got2) != LATTN_OK) {
            printf("FAIL %s: no final state to compare\n", lab);
            lattn_st_free(&g_ctx, &got); lattn_free(&g_ctx, buf); lattn_free(&g_ctx, buf2);
            return 0;
        }
        ok = check(c, &got2, "fp32", lab, "out.state");
        lattn_st_free(&g_ctx, &got2);
        lattn_free(&g_ctx, buf2);
    } else ok = check(c, &got, "fp32", lab, NULL);
    lattn_st_free(&g_ctx, &got);
    lattn_free(&g_ctx, buf);
    return ok;
}

/* A whole file into memory (NUL-terminated); NULL when it cannot be read. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    if (!f) return NULL;
    do {
        if (len + 4096 + 1 > cap) {
            char *t = (char *)realloc(text, cap = 2 * cap + 8192);
            if (!t) { free(text); fclose(f); return NULL; }
            text = t;
        }
        got = fread(text + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    if (ferror(f)) { free(text); fclose(f); return NULL; }
    fclose(f);
    text[len] = 0;
    return text;
}

/* An S4D case's _chunk by its two convolution methods (the case's "method" metadata), when the
   case expects no final state (the convolutions produce y only) and is a forward case; runs and
   failures are added. */
static void run_s4d_methods(const lattn_st_file *c, const char *rel, int *runs, int *fails) {
    static const char *const methods[2] = { "fft", "conv" };
    const char *keys[64], *vals[64], *mixer = lattn_st_meta(c, "mixer");
    lattn_st_file c2 = *c;
    char lab[600];
    int64_t i;
    int m;
    if (!mixer || strcmp(mixer, "s4d") != 0 || lattn_st_find(c, "out.ht") || lattn_st_meta(c, "pass") || c->n_meta >= 64) return;
    for (i = 0; i < c->n_meta; i++) {
        keys[i] = c->meta_keys[i];
        vals[i] = c->meta_values[i];
    }
    keys[c->n_meta] = "method";
    c2.meta_keys = keys;
    c2.meta_values = vals;
    c2.n_meta = c->n_meta + 1;
    for (m = 0; m < 2; m++) {
        vals[c->n_meta] = methods[m];
        snprintf(lab, sizeof lab, "%s (method %s)", rel, methods[m]);
        (*runs)++;
        *fails += !run_check(&c2, LATTN_FORM_CHUNK, lab, NULL);
    }
}

static int cmd_manifest(const char *dir) {
    char path[1024], *text, *p;
    int fails = 0, runs = 0;
    snprintf(path, sizeof path, "%s/MANIFEST.json", dir);
    text = read_text(path);
    if (!text) { fprintf(stderr, "lattn-check: cannot read %s\n", path); return 2; }
    for (p = strstr(text, "\"file\": \""); p; p = strstr(p + 1, "\"file\": \"")) {
        char rel[512], cpath[1024];
        lattn_st_file c;
        lattn_form fs[8];
        int nf, i;
        size_t k = 0;
        p += 9;
        while (p[k] && p[k] != '"' && k < sizeof rel - 1) { rel[k] = p[k]; k++; }
        rel[k] = 0;
        snprintf(cpath, sizeof cpath, "%s/%s", dir, rel);
        if (!load(cpath, &c)) { fails++; continue; }
        nf = lattn_case_forms(&c, fs, 8);
        for (i = 0; i < nf; i++) { runs++; fails += !run_check(&c, fs[i], rel, NULL); }
        run_s4d_methods(&c, rel, &runs, &fails);
        lattn_st_free(&g_ctx, &c);
    }
    free(text);
    printf("%d case-form runs, %d failed\n", runs, fails);
    return fails ? 1 : 0;
}

/* The case built from an external file (in `e`, `meta`), with out.<out_name> taken from tensor
   `from` and metadata chunk = `chunk` (NULL: the file's); runs every form; 1 pass, 0 fail, -1 error. */
static int external_variant(const char *label, lattn_st_entry *e, int ne, const char **meta, int nm,
                            const char *out_from, const lattn_st_file *f, const char *chunk, const ttt_finals *tf) {
    lattn_st_file c;
    unsigned char *buf;
    size_t n;
    lattn_form fs[8];
    int k, nf, ok = 1, i, ymap = -1;
    const char *m2[24];
    const lattn_st_tensor *src = out_from ? lattn_st_find(f, out_from) : NULL;
    for (i = 0; i < nm; i++) m2[i] = meta[i];
    for (i = 0; chunk && i < nm; i += 2) if (strcmp(m2[i], "chunk") == 0) m2[i + 1] = chunk;
    for (i = 0; src && i < ne; i++) if (strcmp(e[i].name, "out.y") == 0) { ymap = i; e[i].data = src->data; e[i].dtype = src->dtype; }
    if (out_from && (ymap < 0 || !src)) return -1;
    if (lattn_st_serialize(&g_ctx, e, ne, m2, nm / 2, &buf, &n) != LATTN_OK || lattn_st_parse(&g_ctx, buf, n, &c) != LATTN_OK) {
        fprintf(stderr, "lattn-check: %s: %s\n", label, lattn_ctx_error(&g_ctx));
        if (buf) lattn_free(&g_ctx, buf);
        return -1;
    }
    nf = lattn_case_forms(&c, fs, 8);
    for (k = 0; k < nf; k++) ok &= run_check(&c, fs[k], label, tf);
    lattn_st_free(&g_ctx, &c);
    lattn_free(&g_ctx, buf);
    return ok;
}

/* [b][m...][L] -> [b][L][m...] (Mamba's channel-major tensors, token-major), elements of `es` bytes. */
static void *to_token_major(const lattn_st_tensor *t, int64_t *shape, size_t es) {
    const int64_t L = t->shape[t->ndim - 1], nb = t->shape[0], M = (int64_t)t->count / (nb * L);
    unsigned char *d = (unsigned char *)malloc(t->count * es + 8);
    const unsigned char *s = (const unsigned char *)t->data;
    int64_t b, m, l;
    int i;
    shape[0] = nb;
    shape[1] = L;
    for (i = 1; i + 1 < t->ndim; i++) shape[i + 1] = t->shape[i];
    for (b = 0; b < nb; b++)
        for (m = 0; m < M; m++)
            for (l = 0; l < L; l++) memcpy(d + ((size_t)((b * L + l) * M + m)) * es, s + ((size_t)((b * M + m) * L + l)) * es, es);
    return d;
}

/* A gradient file (../shared/external_cases/grad: fla's naive linear attention, GLA, Simple GLA, the
   delta rule, Gated DeltaNet and KDA (q, k raw: l2norm in the kernel), the masked softmax attention
   (causal or a sliding window of window_size_fla keys), fla's ShortConvolution reference, Mamba's
   selective_scan_ref) as a lattn gradient case, metadata
   pass = backward: the upstream gradient (do, dy, dout) -> in.dout, dht / dlast_state -> in.dht,
   d<input> -> out.d<lattn's name> (float64), the inputs under lattn's names; the forward outputs are
   left out (a gradient case holds gradients only). Mamba's [batch][dim][L] and [batch][(G)][N][L]
   tensors are moved token-major; ShortConvolution's weight [D][1][W] is read as [D][W]. */
static int external_grad(const char *path, const lattn_st_file *f, const char *src) {
    static const char *const la[][2] = { { "q", "in.q" }, { "k", "in.k" }, { "v", "in.v" }, { "h0", "in.h0" }, { "do", "in.dout" },
                                         { "dht", "in.dht" }, { "dq", "out.dq" }, { "dk", "out.dk" }, { "dv", "out.dv" }, { "dh0", "out.dh0" },
                                         { "beta", "in.beta" }, { "dbeta", "out.dbeta" } };
    static const char *const conv[][2] = { { "x", "in.x" }, { "weight", "in.w" }, { "bias", "in.bias" }, { "dy", "in.dout" },
                                           { "dx", "out.dx" }, { "dweight", "out.dw" }, { "dbias", "out.dbias" } };
    static const char *const ssm[][2] = { { "u", "in.x" }, { "delta", "in.dt" }, { "A", "in.A" }, { "B", "in.Bm" }, { "C", "in.Cm" },
                                          { "D", "in.Dskip" }, { "z", "in.z" }, { "delta_bias", "in.dt_bias" }, { "dout", "in.dout" },
                                          { "dlast_state", "in.dht" }, { "du", "out.dx" }, { "ddelta", "out.ddt" }, { "dA", "out.dA" },
                                          { "dB", "out.dBm" }, { "dC", "out.dCm" }, { "dD", "out.dDskip" }, { "dz", "out.dz" },
                                          { "ddelta_bias", "out.ddt_bias" } };
    const int is_conv = strstr(src, "conv") != NULL, is_ssm = strstr(src, "selective_scan") != NULL, is_gdr = strstr(src, "delta_rule") || strstr(src, "ops/kda/");
    const int is_attn = strstr(src, "ops/attn/") != NULL;
    const long wfla = lattn_st_meta(f, "window_size_fla") ? strtol(lattn_st_meta(f, "window_size_fla"), NULL, 10) : 0;   /* "None": 0 */
    const char *const (*map)[2] = is_ssm ? ssm : is_conv ? conv : la;
    const int nmap = is_ssm ? 18 : is_conv ? 7 : is_gdr ? 12 : 10;
    const lattn_st_tensor *tb = lattn_st_find(f, "B");
    const char *meta[24];
    char groups[16], window[24];
    lattn_st_entry e[24];
    int64_t shapes[24][4];
    void *owned[24];
    int i, j, ne = 0, nm = 0, no = 0, r;
    snprintf(groups, sizeof groups, "%lld", (long long)(tb && tb->ndim == 4 ? tb->shape[1] : 1));
    snprintf(window, sizeof window, "%ld", wfla > 0 ? wfla - 1 : 0L);   /* fla: keys i - (w - 1) .. i */
    meta[nm++] = "mixer"; meta[nm++] = is_ssm ? "ssm" : is_conv ? "shortconv" : is_gdr ? "gdr" : is_attn ? "attention" : "linear_attn";
    meta[nm++] = "mask"; meta[nm++] = wfla > 0 ? "window" : "causal";
    meta[nm++] = "window"; meta[nm++] = window;
    meta[nm++] = "l2norm"; meta[nm++] = is_gdr ? "1" : "0";
    meta[nm++] = "pass"; meta[nm++] = "backward";
    meta[nm++] = "scale"; meta[nm++] = lattn_st_meta(f, "scale") ? lattn_st_meta(f, "scale") : "0";
    meta[nm++] = "silu"; meta[nm++] = "1";
    meta[nm++] = "groups"; meta[nm++] = groups;
    meta[nm++] = "dt_softplus"; meta[nm++] = "1";
    meta[nm++] = "tol_fp32"; meta[nm++] = "1e-5";
    for (i = 0; i < f->n_tensors && ne < 24; i++) {
        const lattn_st_tensor *t = &f->tensors[i];
        const char *name = NULL;
        for (j = 0; j < nmap && !name; j++) if (strcmp(t->name, map[j][0]) == 0) name = map[j][1];
        if (strcmp(t->name, "g") == 0) name = t->ndim == 4 ? "in.gk" : "in.g";            /* per-key or per-head gates */
        if (strcmp(t->name, "dg") == 0) name = t->ndim == 4 ? "out.dgk" : "out.dg";
        if (!name || t->ndim > 4) continue;                                                  /* o, ht, y, out, last_state */
        e[ne].name = name; e[ne].dtype = t->dtype; e[ne].ndim = t->ndim; e[ne].shape = t->shape; e[ne].data = t->data;
        if (is_conv && t->ndim == 3 && t->shape[1] == 1) {                                   /* [D][1][W] -> [D][W] */
            shapes[ne][0] = t->shape[0]; shapes[ne][1] = t->shape[2];
            e[ne].ndim = 2; e[ne].shape = shapes[ne];
        }
        if (is_ssm && t->ndim >= 3 && strcmp(t->name, "dlast_state") != 0) {              /* channel-major -> token-major */
            e[ne].data = owned[no++] = to_token_major(t, shapes[ne], t->dtype == LATTN_DTYPE_F64 ? 8 : 4);
            e[ne].shape = shapes[ne];
        }
        ne++;
    }
    r = external_variant(path, e, ne, meta, nm, NULL, f, NULL, NULL);
    for (i = 0; i < no; i++) free(owned[i]);
    return r;
}

/* An optimizer file (PyTorch's AdamW; KellerJordan/Muon's NS5 and SingleDeviceMuon) as lattn optimizer
   cases: param0, grads -> in.param0, in.grads and the float64 run (param_f64, exp_avg_f64,
   exp_avg_sq_f64, momentum_f64) -> out.param, out.exp_avg, out.exp_avg_sq, out.momentum; NS5's
   G_<R>x<C> -> in.G and X_f64_<R>x<C> -> out.X, one case per shape. The file's other run is a variant:
   AdamW's float32 run (*_f32, at 1e-6), the as-released bf16 Muon (X_bf16_*, *_asis) in lattn's bf16
   mode, loosely: two bf16 implementations differ by their roundings (measured: NS5 5.6-8.0 %
   relative RMS, each within 5 % of float64; three steps 0.18-0.19 %), so at 1e-1 and 1e-2. */
static int external_optim(const char *path, const lattn_st_file *f, const char *src) {
    static const char *const keys[7] = { "lr", "beta1", "beta2", "eps", "weight_decay", "momentum", "ns_steps" };
    const int adam = strstr(src, "adamw") != NULL, ns = !adam && strstr(src, "SingleDeviceMuon") == NULL;
    const char *nest = lattn_st_meta(f, "nesterov");
    int i, v, ok = 1, r;
    for (v = 0; v < 2 && ok >= 0; v++) {     /* the float64 run, then the other */
        const char *sfx = v == 0 ? "f64" : adam ? "f32" : ns ? "bf16" : "asis";
        const char *meta[24];
        char names[6][64], lab[600];
        lattn_st_entry e[6];
        int nm = 0, ne = 0;
        int64_t t;
        meta[nm++] = "mixer"; meta[nm++] = adam ? "adamw" : ns ? "muon_ns5" : "muon_step";
        for (i = 0; i < 7; i++)
            if (lattn_st_meta(f, keys[i])) { meta[nm++] = keys[i]; meta[nm++] = lattn_st_meta(f, keys[i]); }
        if (nest) { meta[nm++] = "nesterov"; meta[nm++] = strcmp(nest, "True") == 0 ? "1" : "0"; }
        meta[nm++] = "tol_fp32"; meta[nm++] = v == 0 ? (adam ? "1e-6" : "1e-5") : adam ? "1e-6" : ns ? "1e-1" : "1e-2";
        if (v == 1 && !adam) { meta[nm++] = "bf16"; meta[nm++] = "1"; }
        for (t = 0; t < f->n_tensors && ok >= 0; t++) {   /* NS5: a case per G_<shape>; a step: one case */
            const lattn_st_tensor *x = &f->tensors[t];
            static const char *const step_in[2] = { "param0", "grads" };
            static const char *const adam_out[3] = { "param", "exp_avg", "exp_avg_sq" }, *const muon_out[2] = { "param", "momentum" };
            const char *const *outs = adam ? adam_out : muon_out;
            const int n_out = adam ? 3 : 2;
            if (ns ? strncmp(x->name, "G_", 2) != 0 : t > 0) continue;
            ne = 0;
            if (ns) {
                snprintf(names[0], sizeof names[0], "X_%s_%s", sfx, x->name + 2);
                e[ne].name = "in.G"; e[ne].dtype = x->dtype; e[ne].ndim = x->ndim; e[ne].shape = x->shape; e[ne].data = x->data; ne++;
                if (!lattn_st_find(f, names[0])) { fprintf(stderr, "lattn-check: %s: no %s\n", path, names[0]); return 2; }
                x = lattn_st_find(f, names[0]);
                e[ne].name = "out.X"; e[ne].dtype = x->dtype; e[ne].ndim = x->ndim; e[ne].shape = x->shape; e[ne].data = x->data; ne++;
                snprintf(lab, sizeof lab, "%s (%s, %s)", path, names[0] + 2 + strlen(sfx) + 1, sfx);
            } else {
                for (i = 0; i < 2 + n_out; i++) {
                    const lattn_st_tensor *y;
                    if (i < 2) snprintf(names[i], sizeof names[i], "%s", step_in[i]);
                    else snprintf(names[i], sizeof names[i], "%s_%s", outs[i - 2], sfx);
                    y = lattn_st_find(f, names[i]);
                    if (!y) { fprintf(stderr, "lattn-check: %s: no %s\n", path, names[i]); return 2; }
                    snprintf(names[i], sizeof names[i], "%s.%s", i < 2 ? "in" : "out", i < 2 ? step_in[i] : outs[i - 2]);
                    e[ne].name = names[i]; e[ne].dtype = y->dtype; e[ne].ndim = y->ndim; e[ne].shape = y->shape; e[ne].data = y->data; ne++;
                }
                snprintf(lab, sizeof lab, "%s (the %s run)", path, sfx);
            }
            r = external_variant(lab, e, ne, meta, nm, NULL, f, NULL, NULL);
            if (r < 0) ok = -1; else ok &= r;
        }
    }
    return ok;
}

/* The seed article's training run (tcn_demo_train_*: DemoModel's initial weights, 20 batches, the
   float64 losses and the weights after 20 AdamW updates): lattn trains the model from those weights
   on those batches and compares every loss and every final weight tensor (relative RMS).
   The ref form trains in double, as the file's run did: double weights (lattn_tcn_demo_weights64),
   the double forward and backward (_forward_ref, _backward_ref) and lattn_adamw_step64 over the whole
   arena; tolerance 1e-10. The chunk form trains in float32: _forward, _backward and lattn_optim over
   the arena; tolerance 1e-5. Every tensor is decayed, as torch.optim.AdamW(model.parameters()).
   Where the file has the article's float32 curve (loss_f32_script), the chunk form then trains on to
   its end on the batches PyTorch's generator gives after torch.manual_seed(torch_manual_seed)
   (torch_rng.h, which must redraw the initial weights bit for bit) and compares every loss with the
   curve: the largest relative difference, tolerance 1e-4. */
/* One training step of the demo model on batch xs with targets tgt [B]: the MSE loss into *loss, the
   gradient, the AdamW update. form 0: double (weights64, backward_ref's grad64, lattn_adamw_step64 at
   step s + 1); form 1: float32 (lattn_optim). fb: 2B floats, db: 2B doubles of scratch. */
static lattn_status tcn_train_step(int form, lattn_tcn_demo *m, lattn_optim *o, int64_t s, int64_t B, int64_t T, const float *xs,
                                   const double *tgt, float *grad, double *g64, float *fb, double *db, double *loss) {
    const lattn_adamw_config ac = lattn_adamw_default();
    float *pred = fb, *dout = fb + B;
    double *p64 = db, *d64 = db + B;
    lattn_status st = form ? lattn_tcn_demo_forward(&g_ctx, m, B, T, xs, pred) : lattn_tcn_demo_forward_ref(&g_ctx, m, B, T, xs, pred, p64);
    int64_t b;
    *loss = 0;
    for (b = 0; st == LATTN_OK && b < B; b++) {
        const double e = (form ? (double)pred[b] : p64[b]) - tgt[b];
        *loss += e * e / (double)B;
        d64[b] = 2.0 * e / (double)B;
        dout[b] = (float)d64[b];
    }
    if (st == LATTN_OK)
        st = form ? lattn_tcn_demo_backward(&g_ctx, m, B, T, xs, dout, grad, NULL) : lattn_tcn_demo_backward_ref(&g_ctx, m, B, T, xs, d64, NULL, g64, NULL);
    if (st == LATTN_OK)
        st = form ? lattn_optim_step(&g_ctx, o, 1.0, grad)
                  : lattn_adamw_step64(&g_ctx, &ac, s + 1, m->n_params, m->arena64, g64, g64 + m->n_params, g64 + 2 * m->n_params);
    return st;
}
static int external_train(const char *path, const lattn_st_file *f) {
    const lattn_st_tensor *tx = lattn_st_find(f, "x"), *tt = lattn_st_find(f, "target"), *tl = lattn_st_find(f, "loss");
    const lattn_st_tensor *tc = lattn_st_find(f, "loss_f32_script");
    const char *seed = lattn_st_meta(f, "torch_manual_seed");
    int form, ok = 1;
    if (!tx || !tt || !tl || tx->ndim != 4 || tt->count != (size_t)(tx->shape[0] * tx->shape[1]) || tl->count != (size_t)tx->shape[0]) {
        fprintf(stderr, "lattn-check: %s: x [S][B][T][d_in], target [S][B] and loss [S] are needed\n", path);
        return -1;
    }
    for (form = 0; form < 2; form++) {
        const int64_t S = tx->shape[0], B = tx->shape[1], T = tx->shape[2], per = B * T * tx->shape[3];
        const double tol = form ? 1e-5 : 1e-10;
        const int curve = form && tc && seed && tx->shape[3] == 2 && tc->count > (size_t)S;   /* on to the end of the float32 curve */
        lattn_tcn_demo m;
        lattn_optim o;
        lattn_cmp r;
        float *x = (float *)malloc(tx->count * sizeof(float)), *xr = (float *)malloc((size_t)per * sizeof(float)), *grad = NULL;
        float *fb = (float *)malloc(2 * (size_t)B * sizeof(float));
        double *db = (double *)malloc(2 * (size_t)B * sizeof(double));
        double *target = (double *)malloc(tt->count * sizeof(double)), *want = (double *)malloc(tl->count * sizeof(double));
        double *loss = (double *)malloc((curve ? tc->count : tl->count) * sizeof(double)), *g64 = NULL, worst = 0;
        torch_rng g;
        size_t same_w = 0, n_drawn = 0;
        int64_t s, b, i;
        int pass = 1;
        if (lattn_tcn_demo_init_st(&g_ctx, &m, f, "") != LATTN_OK || lattn_optim_init(&g_ctx, &o, m.tensors, m.n_tensors, 0) != LATTN_OK ||
            (!form && lattn_tcn_demo_weights64(&g_ctx, &m) != LATTN_OK)) {
            printf("FAIL %s [%s]: %s\n", path, form ? "chunk" : "ref", lattn_ctx_error(&g_ctx));
            return 0;
        }
        grad = (float *)malloc(m.n_params * sizeof(float));
        g64 = (double *)calloc(3 * m.n_params, sizeof(double));   /* the gradient, AdamW's two moments */
        if (curve) {                                               /* the article's generator, past the stored batches */
            same_w = torch_demo_init(&g, (uint32_t)strtoul(seed, NULL, 10), &m, &n_drawn);
            for (s = 0; s < S; s++) torch_randn(&g, xr, (size_t)per);
        }
        for (i = 0; i < m.n_tensors; i++) o.rules[i].decay = 1;
        lattn_st_to_f32(&g_ctx, tx, x, tx->count);
        lattn_st_to_f64(&g_ctx, tt, target, tt->count);
        lattn_st_to_f64(&g_ctx, tl, want, tl->count);
        for (s = 0; s < S && pass; s++) {
            const lattn_status st = tcn_train_step(form, &m, &o, s, B, T, x + s * per, target + s * B, grad, g64, fb, db, &loss[s]);
            if (st != LATTN_OK) { printf("  FAIL step %lld: %s\n", (long long)s + 1, lattn_ctx_error(&g_ctx)); pass = 0; }
        }
        lattn_compare(loss, want, (size_t)S, tol, &r);
        pass &= r.pass;
        printf("  %s loss       rel_rms %.3e  max_abs %.3e  [tol %.0e, %lld steps]\n", r.pass ? "PASS" : "FAIL", r.rel_rms, r.max_abs, tol, (long long)S);
        for (i = 0; i < m.n_tensors; i++) {
            char name[96];
            const lattn_st_tensor *w;
            double *wv, *gv;
            size_t k;
            snprintf(name, sizeof name, "final.%s", m.tensors[i].name);
            w = lattn_st_find(f, name);
            if (!w || w->count != m.tensors[i].count) { printf("  FAIL %s missing or of another size\n", name); pass = 0; continue; }
            wv = (double *)malloc(w->count * sizeof(double));
            gv = (double *)malloc(w->count * sizeof(double));
            lattn_st_to_f64(&g_ctx, w, wv, w->count);
            for (k = 0; k < w->count; k++) gv[k] = form ? m.tensors[i].data[k] : m.arena64[(m.tensors[i].data - m.arena) + (int64_t)k];
            lattn_compare(gv, wv, w->count, tol, &r);
            pass &= r.pass;
            if (r.rel_rms > worst) worst = r.rel_rms;
            if (!r.pass || i == 0 || i + 1 == m.n_tensors)
                printf("  %s %-10s rel_rms %.3e  max_abs %.3e  [tol %.0e]\n", r.pass ? "PASS" : "FAIL", name, r.rel_rms, r.max_abs, tol);
            free(wv); free(gv);
        }
        printf("  worst final weight tensor: rel_rms %.3e\n", worst);
        if (curve && pass) {                                       /* steps S + 1 ... on the redrawn batches */
            double *ref = (double *)malloc(tc->count * sizeof(double)), tgt[4096], wc = 0;
            lattn_st_to_f64(&g_ctx, tc, ref, tc->count);
            for (s = S; s < (int64_t)tc->count && pass && B <= 4096; s++) {
                torch_randn(&g, xr, (size_t)per);
                for (b = 0; b < B; b++) tgt[b] = (double)(xr[(b * T + T - 1) * 2] + xr[(b * T + T - 1) * 2 + 1]);   /* float32, as torch adds */
                if (tcn_train_step(form, &m, &o, s, B, T, xr, tgt, grad, g64, fb, db, &loss[s]) != LATTN_OK) pass = 0;
            }
            for (s = 0; s < (int64_t)tc->count; s++)
                if (!(fabs(loss[s] - ref[s]) <= wc * ref[s])) wc = fabs(loss[s] - ref[s]) / ref[s];   /* NaN counts */
            pass &= same_w == n_drawn && wc <= 1e-4;
            printf("  %s float32 curve: %zu of %zu initial weights redrawn by PyTorch's generator, %zu losses within %.3e [tol 1e-04]\n",
                   same_w == n_drawn && wc <= 1e-4 ? "PASS" : "FAIL", same_w, n_drawn, tc->count, wc);
            free(ref);
        }
        printf("%s %s (%lld AdamW steps from the article's weights) [%s]\n", pass ? "PASS" : "FAIL", path, curve ? (long long)tc->count : (long long)S,
               form ? "chunk" : "ref");
        ok &= pass;
        free(x); free(xr); free(grad); free(target); free(want); free(loss); free(g64); free(fb); free(db);
        lattn_optim_free(&g_ctx, &o);
        lattn_tcn_demo_free(&g_ctx, &m);
    }
    return ok;
}

/* A layer's gradient file as a lattn gradient case: the official TTTLinear / TTTMLP (ttt_*_grad_*,
   mixer ttt_layer: hidden_states, dy, dhidden_states) or PRISMBlock (prism_block_grad_*, mixer
   prism_p1: x, dy, dx, at the file's chunk_size) under float64 autograd: the input -> in.x, dy ->
   in.dout, the parameters under their names -> in.<name>, the input's gradient -> out.dx,
   grad.<name> -> out.d<name>; y and the positions left out. Every form the mixer has, at 1e-5. */
static int external_layer_grad(const char *path, const lattn_st_file *f, int prism) {
    const char *meta[8], *xn = prism ? "x" : "hidden_states", *dxn = prism ? "dx" : "dhidden_states";
    lattn_st_entry e[64];
    char names[64][80];
    int64_t i;
    int ne = 0, nm = 0;
    meta[nm++] = "mixer"; meta[nm++] = prism ? "prism_p1" : "ttt_layer";
    meta[nm++] = "pass"; meta[nm++] = "backward";
    meta[nm++] = "tol_fp32"; meta[nm++] = "1e-5";
    if (prism) { meta[nm++] = "chunk"; meta[nm++] = lattn_st_meta(f, "chunk_size") ? lattn_st_meta(f, "chunk_size") : "128"; }
    for (i = 0; i < f->n_tensors && ne < 64; i++) {
        const lattn_st_tensor *t = &f->tensors[i];
        if (strcmp(t->name, "y") == 0 || strcmp(t->name, "position_ids") == 0) continue;
        if (strcmp(t->name, xn) == 0) snprintf(names[ne], sizeof names[ne], "in.x");
        else if (strcmp(t->name, "dy") == 0) snprintf(names[ne], sizeof names[ne], "in.dout");
        else if (strcmp(t->name, dxn) == 0) snprintf(names[ne], sizeof names[ne], "out.dx");
        else if (strncmp(t->name, "grad.", 5) == 0) snprintf(names[ne], sizeof names[ne], "out.d%s", t->name + 5);
        else snprintf(names[ne], sizeof names[ne], "in.%s", t->name);
        e[ne].name = names[ne]; e[ne].dtype = t->dtype; e[ne].ndim = t->ndim; e[ne].shape = t->shape; e[ne].data = t->data;
        ne++;
    }
    return external_variant(path, e, ne, meta, nm, NULL, f, NULL, NULL);
}

/* An external reference file as a lattn case: q, k, v, beta, g, h0 (or a PRISM block's parameters
   and x) -> in.*, o, ht (or y) -> out.* (kept float64); fla's delta-rule sources become mixer "gdr",
   the other fla sources "linear_attn" (the gates pick the member), gpr-prism's PRISMBlock "prism_p1",
   the official TTTLinear / TTTMLP "ttt_layer" (hidden_states -> in.x, a fresh in.state0, y and the
   final fast weights *_final compared). Every output of the file is checked: PRISM's y_chunk128 (the
   block at chunk 128) and y_gdn (the official GDNBlock, which the block with its solver off equals)
   as variants of the case. */
static int cmd_external(const char *path) {
    lattn_st_file f;
    const char *src, *meta[16];
    lattn_st_entry e[48];
    int64_t i;
    int ne = 0, nm = 0, ok = 1, prism, ttt, r, have_m = 0;
    float *s0 = NULL, *z = NULL;
    int64_t ss[2];
    char names[48][64], lab[600];
    lattn_ttt_layer m;
    ttt_finals tf;
    if (!load(path, &f)) return 2;
    src = lattn_st_meta(&f, "source");
    if (src && strstr(src, "train_demo.py")) {
        r = external_train(path, &f);
        lattn_st_free(&g_ctx, &f);
        return r < 0 ? 2 : r ? 0 : 1;
    }
    if (src && (strstr(src, "torch/optim/adamw.py") || strstr(src, "KellerJordan/Muon"))) {
        r = external_optim(path, &f, src);
        lattn_st_free(&g_ctx, &f);
        return r < 0 ? 2 : r ? 0 : 1;
    }
    if (src && (lattn_st_find(&f, "do") || lattn_st_find(&f, "dy") || lattn_st_find(&f, "dout")) &&
        (strstr(src, "linear_attn") || strstr(src, "ops/gla/") || strstr(src, "ops/simple_gla/") || strstr(src, "causal_conv1d_ref") ||
         strstr(src, "selective_scan") || strstr(src, "delta_rule") || strstr(src, "ops/kda/") || strstr(src, "ops/attn/"))) {
        r = external_grad(path, &f, src);
        lattn_st_free(&g_ctx, &f);
        return r < 0 ? 2 : r ? 0 : 1;
    }
    if (src && (strstr(src, "ttt.py") || strstr(src, "PRISMBlock")) && lattn_st_find(&f, "dy")) {
        r = external_layer_grad(path, &f, strstr(src, "PRISMBlock") != NULL);
        lattn_st_free(&g_ctx, &f);
        return r < 0 ? 2 : r ? 0 : 1;
    }
    prism = src && strstr(src, "PRISMBlock") != NULL;
    ttt = src && strstr(src, "ttt.py") != NULL;
    if (!src || !(strstr(src, "linear_attn") || strstr(src, "ops/gla/") || strstr(src, "ops/simple_gla/") ||
                  strstr(src, "ops/delta_rule/") || strstr(src, "ops/gated_delta_rule/") || prism || ttt)) {
        printf("SKIP %s: its mixer is not in this version of lattn\n", path);
        lattn_st_free(&g_ctx, &f);
        return 0;
    }
    meta[nm++] = "mixer"; meta[nm++] = prism ? "prism_p1" : ttt ? "ttt_layer" : strstr(src, "delta_rule") ? "gdr" : "linear_attn";
    meta[nm++] = "scale"; meta[nm++] = lattn_st_meta(&f, "scale") ? lattn_st_meta(&f, "scale") : "0";
    meta[nm++] = "normalize"; meta[nm++] = strstr(src, "normalize=True") ? "1" : "0";
    meta[nm++] = "eps"; meta[nm++] = lattn_st_meta(&f, "eps_in_denominator") ? lattn_st_meta(&f, "eps_in_denominator") : "1e-6";
    meta[nm++] = "tol_fp32"; meta[nm++] = "1e-5";
    meta[nm++] = "chunk"; meta[nm++] = lattn_st_meta(&f, "chunk_size") ? lattn_st_meta(&f, "chunk_size") : "0";
    if (ttt) {                           /* a fresh state from the layer's own W1, b1 (W2, b2) */
        const lattn_st_tensor *x = lattn_st_find(&f, "hidden_states");
        int64_t b, SF;
        if (!x || x->ndim != 3 || lattn_ttt_layer_init_st(&g_ctx, &m, &f, "") != LATTN_OK) {
            fprintf(stderr, "lattn-check: %s: %s\n", path, x ? lattn_ctx_error(&g_ctx) : "no hidden_states");
            lattn_st_free(&g_ctx, &f);
            return 2;
        }
        have_m = 1;
        {
            size_t n = 0;
            if (lattn_ttt_state_floats(&m.cfg, &n) != LATTN_OK) return 2;
            SF = (int64_t)n;
        }
        ss[0] = x->shape[0]; ss[1] = SF;
        s0 = (float *)malloc((size_t)(ss[0] * SF) * sizeof(float));
        z = (float *)calloc((size_t)(ss[0] * SF), sizeof(float));
        for (b = 0; b < ss[0]; b++) lattn_ttt_layer_state_init(&m, s0 + b * SF);
        e[ne].name = "in.state0"; e[ne].dtype = LATTN_DTYPE_F32; e[ne].ndim = 2; e[ne].shape = ss; e[ne].data = s0;
        ne++;
        e[ne] = e[ne - 1]; e[ne].name = "out.state"; e[ne].data = z;      /* asks the runner for the state */
        ne++;
        tf.m = &m; tf.B = ss[0];
    }
    for (i = 0; i < f.n_tensors && ne < 48; i++) {
        const lattn_st_tensor *t = &f.tensors[i];
        int is_out = strcmp(t->name, "o") == 0 || strcmp(t->name, "ht") == 0 || strcmp(t->name, "y") == 0 || strstr(t->name, "_final") != NULL;
        const char *nm2 = strcmp(t->name, "g") == 0 && t->ndim == 4 ? "gk" : strcmp(t->name, "hidden_states") == 0 ? "x" : t->name;
        if (ttt && strcmp(t->name, "position_ids") == 0) continue;   /* positions are t mod b in the layer */
        if (strncmp(t->name, "y_", 2) == 0) continue;                  /* PRISM's other outputs: variants below */
        snprintf(names[ne], sizeof names[ne], "%s.%s", is_out ? "out" : "in", nm2);
        e[ne].name = names[ne]; e[ne].dtype = t->dtype; e[ne].ndim = t->ndim; e[ne].shape = t->shape; e[ne].data = t->data;
        ne++;
    }
    r = external_variant(path, e, ne, meta, nm, NULL, &f, NULL, ttt ? &tf : NULL);
    if (r < 0) ok = -1; else ok &= r;
    if (ok >= 0 && prism && lattn_st_find(&f, "y_chunk128")) {
        snprintf(lab, sizeof lab, "%s (y_chunk128: the block at chunk 128)", path);
        r = external_variant(lab, e, ne, meta, nm, "y_chunk128", &f, "128", NULL);
        if (r < 0) ok = -1; else ok &= r;
    }
    if (ok >= 0 && prism && lattn_st_find(&f, "y_gdn")) {
        snprintf(lab, sizeof lab, "%s (y_gdn: the official GDNBlock)", path);
        r = external_variant(lab, e, ne, meta, nm, "y_gdn", &f, NULL, NULL);
        if (r < 0) ok = -1; else ok &= r;
    }
    free(s0); free(z);
    if (have_m) lattn_ttt_layer_free(&g_ctx, &m);
    lattn_st_free(&g_ctx, &f);
    return ok < 0 ? 2 : ok ? 0 : 1;
}

/* "TF32" -> "tf32"; 0 when not one of fp32, tf32, bf16. */
static int precision(const char *in, char *out) {
    lower(in, out);
    return strlen(in) < 8 && (strcmp(out, "fp32") == 0 || strcmp(out, "tf32") == 0 || strcmp(out, "bf16") == 0);
}

static int cmd_run(const char *case_path, const char *form_name, const char *out_path) {
    lattn_st_file c;
    lattn_form form;
    unsigned char *buf;
    size_t n;
    FILE *f;
    int rc = 0;
    if (!lattn_form_parse(form_name, &form)) { fprintf(stderr, "lattn-check: unknown form %s\n", form_name); return 2; }
    if (!load(case_path, &c)) return 2;
    if (lattn_case_run(&g_ctx, &c, form, &buf, &n) != LATTN_OK) {
        fprintf(stderr, "lattn-check: %s\n", lattn_ctx_error(&g_ctx));
        lattn_st_free(&g_ctx, &c);
        return 1;
    }
    f = fopen(out_path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n) { fprintf(stderr, "lattn-check: cannot write %s\n", out_path); rc = 2; }
    if (f && fclose(f) != 0 && rc == 0) { fprintf(stderr, "lattn-check: cannot write %s\n", out_path); rc = 2; }
    lattn_free(&g_ctx, buf);
    lattn_st_free(&g_ctx, &c);
    if (!rc) printf("wrote %s\n", out_path);
    return rc;
}

int main(int argc, char **argv) {
    lattn_ctx_init(&g_ctx);
    if (argc == 5 && strcmp(argv[1], "run") == 0) return cmd_run(argv[2], argv[3], argv[4]);
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "check") == 0) {
        lattn_st_file c, o;
        int ok;
        char prec[16];
        if (!precision(argc == 5 ? argv[4] : "fp32", prec)) { fprintf(stderr, "lattn-check: precision %s? (fp32, tf32 or bf16)\n", argv[4]); return 2; }
        if (!load(argv[2], &c)) return 2;
        if (!load(argv[3], &o)) { lattn_st_free(&g_ctx, &c); return 2; }
        ok = check(&c, &o, prec, argv[3], NULL);
        lattn_st_free(&g_ctx, &c); lattn_st_free(&g_ctx, &o);
        return ok ? 0 : 1;
    }
    if (argc == 3 && strcmp(argv[1], "manifest") == 0) return cmd_manifest(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "external") == 0) {
        int i, worst = 0;
        for (i = 2; i < argc; i++) { int r = cmd_external(argv[i]); if (r > worst) worst = r; }
        return worst;
    }
    fprintf(stderr, "usage: lattn-check run CASE FORM OUT | check CASE OUT [fp32|tf32|bf16] | manifest DIR | external FILE...\n");
    return 2;
}
