/* lattn-check: the conformance checker (binary build/lattn-check).
     lattn-check run CASE FORM OUT         run lattn's FORM (ref parallel chunk step fast fft conv) on CASE's
                                           inputs and write its outputs to OUT
     lattn-check check CASE OUT [PREC]     compare OUT (any backend's outputs, same tensor names
                                           "out.*", any dtype) with CASE; PREC = fp32 (default),
                                           tf32 or bf16 picks the case's tolerance
     lattn-check manifest DIR              run + check every case of DIR/MANIFEST.json in every form
     lattn-check external FILE...          the public reference implementations' cases (float64): every
                                           lattn form of the mixers lattn has, against them
   Exit status: 0 when everything passes, 1 on any failure, 2 on bad usage or unreadable files.
       cc -std=c99 -O2 -march=native -I.. lattn_check.c -lm -o lattn-check */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Every "out.*" tensor of the case against the same name in `got`; prints one line each. */
static int check(const lattn_st_file *c, const lattn_st_file *got, const char *prec, const char *label) {
    char key[16];
    const char *tv;
    double tol;
    int64_t i;
    int ok = 1, n = 0;
    snprintf(key, sizeof key, "tol_%s", prec);
    tv = lattn_st_meta(c, key);
    tol = tv ? strtod(tv, NULL) : 1e-5;
    for (i = 0; i < c->n_tensors; i++) {
        const lattn_st_tensor *want = &c->tensors[i], *g;
        double *x, *y;
        lattn_cmp r;
        if (strncmp(want->name, "out.", 4) != 0) continue;
        n++;
        g = lattn_st_find(got, want->name);
        if (!g || g->count != want->count) {
            printf("  FAIL %-10s missing or wrong size in the output\n", want->name);
            ok = 0;
            continue;
        }
        x = as_f64(g); y = as_f64(want);
        lattn_compare(x, y, want->count, tol, &r);
        printf("  %s %-10s rel_rms %.3e  max_abs %.3e  nan/inf mismatches %lld", r.pass ? "PASS" : "FAIL", want->name,
               r.rel_rms, r.max_abs, (long long)r.nonfinite_mismatch);
        if (r.first_mismatch >= 0) printf(" (first at %lld)", (long long)r.first_mismatch);
        printf("  [tol %.0e %s]\n", tol, prec);
        ok &= r.pass;
        free(x); free(y);
    }
    if (!n) { printf("  FAIL no out.* tensors in the case\n"); ok = 0; }
    printf("%s %s\n", ok ? "PASS" : "FAIL", label);
    return ok;
}

/* Run one form of a parsed case and check it; 1 pass, 0 fail. */
static int run_check(const lattn_st_file *c, lattn_form form, const char *label) {
    unsigned char *buf;
    size_t n;
    lattn_st_file got;
    int ok;
    char lab[512];
    snprintf(lab, sizeof lab, "%s [%s]", label, lattn_form_name(form));
    if (lattn_case_run(&g_ctx, c, form, &buf, &n) != LATTN_OK) {
        printf("FAIL %s: %s\n", lab, lattn_ctx_error(&g_ctx));
        return 0;
    }
    if (lattn_st_parse(&g_ctx, buf, n, &got) != LATTN_OK) { lattn_free(&g_ctx, buf); return 0; }
    ok = check(c, &got, "fp32", lab);
    lattn_st_free(&g_ctx, &got);
    lattn_free(&g_ctx, buf);
    return ok;
}

static int cmd_manifest(const char *dir) {
    char path[1024], *text, *p;
    FILE *f;
    long len;
    int fails = 0, runs = 0;
    snprintf(path, sizeof path, "%s/MANIFEST.json", dir);
    f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "lattn-check: cannot open %s\n", path); return 2; }
    fseek(f, 0, SEEK_END); len = ftell(f); fseek(f, 0, SEEK_SET);
    text = (char *)malloc((size_t)len + 1);
    if (fread(text, 1, (size_t)len, f) != (size_t)len) { fclose(f); free(text); return 2; }
    text[len] = 0;
    fclose(f);
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
        for (i = 0; i < nf; i++) { runs++; fails += !run_check(&c, fs[i], rel); }
        lattn_st_free(&g_ctx, &c);
    }
    free(text);
    printf("%d case-form runs, %d failed\n", runs, fails);
    return fails ? 1 : 0;
}

/* An external reference file as a lattn case: q, k, v, beta, g, h0 (or a PRISM block's parameters
   and x) -> in.*, o, ht (or y) -> out.* (kept float64); fla's delta-rule sources become mixer "gdr",
   the other fla sources "linear_attn" (the gates pick the member), gpr-prism's PRISMBlock "prism_p1",
   the official TTTLinear / TTTMLP "ttt_layer" (hidden_states -> in.x, a fresh in.state0, y compared;
   the final fast weights are checked by tests/run_tests.c). */
static int cmd_external(const char *path) {
    lattn_st_file f, c;
    const char *src, *meta[12];
    lattn_st_entry e[40];
    unsigned char *buf;
    size_t n;
    int64_t i;
    int ne = 0, nm = 0, ok = 1, nf, k, prism, ttt;
    float *s0 = NULL;
    int64_t ss[2];
    lattn_form fs[8];
    char names[40][64];
    if (!load(path, &f)) return 2;
    src = lattn_st_meta(&f, "source");
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
        lattn_ttt_layer m;
        const lattn_st_tensor *x = lattn_st_find(&f, "hidden_states");
        int64_t b, SF;
        if (!x || x->ndim != 3 || lattn_ttt_layer_load_st(&g_ctx, &m, &f, "") != LATTN_OK) {
            fprintf(stderr, "lattn-check: %s: %s\n", path, x ? lattn_ctx_error(&g_ctx) : "no hidden_states");
            lattn_st_free(&g_ctx, &f);
            return 2;
        }
        SF = lattn_ttt_state_floats(&m.cfg);
        ss[0] = x->shape[0]; ss[1] = SF;
        s0 = (float *)malloc((size_t)(ss[0] * SF) * sizeof(float));
        for (b = 0; b < ss[0]; b++) lattn_ttt_layer_state_init(&m, s0 + b * SF);
        lattn_ttt_layer_free(&g_ctx, &m);
        e[ne].name = "in.state0"; e[ne].dtype = LATTN_DTYPE_F32; e[ne].ndim = 2; e[ne].shape = ss; e[ne].data = s0;
        ne++;
    }
    for (i = 0; i < f.n_tensors && ne < 40; i++) {
        const lattn_st_tensor *t = &f.tensors[i];
        int is_out = strcmp(t->name, "o") == 0 || strcmp(t->name, "ht") == 0 || strcmp(t->name, "y") == 0;
        if (ttt && (strstr(t->name, "_final") || strcmp(t->name, "position_ids") == 0)) continue;   /* checked by the tests */
        const char *nm2 = strcmp(t->name, "g") == 0 && t->ndim == 4 ? "gk" : strcmp(t->name, "hidden_states") == 0 ? "x" : t->name;
        if (strncmp(t->name, "y_", 2) == 0) continue;            /* PRISM's comparison outputs (other blocks) */
        snprintf(names[ne], sizeof names[ne], "%s.%s", is_out ? "out" : "in", nm2);
        e[ne].name = names[ne]; e[ne].dtype = t->dtype; e[ne].ndim = t->ndim; e[ne].shape = t->shape; e[ne].data = t->data;
        ne++;
    }
    if (lattn_st_serialize(&g_ctx, e, ne, meta, nm / 2, &buf, &n) != LATTN_OK || lattn_st_parse(&g_ctx, buf, n, &c) != LATTN_OK) {
        fprintf(stderr, "lattn-check: %s: %s\n", path, lattn_ctx_error(&g_ctx));
        lattn_st_free(&g_ctx, &f);
        free(s0);
        return 2;
    }
    free(s0);
    nf = lattn_case_forms(&c, fs, 8);
    for (k = 0; k < nf; k++) ok &= run_check(&c, fs[k], path);
    lattn_st_free(&g_ctx, &c);
    lattn_free(&g_ctx, buf);
    lattn_st_free(&g_ctx, &f);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    lattn_ctx_init(&g_ctx);
    if (argc >= 5 && strcmp(argv[1], "run") == 0) {
        lattn_st_file c;
        lattn_form form;
        unsigned char *buf;
        size_t n;
        FILE *f;
        if (!lattn_form_parse(argv[3], &form)) { fprintf(stderr, "lattn-check: unknown form %s\n", argv[3]); return 2; }
        if (!load(argv[2], &c)) return 2;
        if (lattn_case_run(&g_ctx, &c, form, &buf, &n) != LATTN_OK) {
            fprintf(stderr, "lattn-check: %s\n", lattn_ctx_error(&g_ctx));
            return 1;
        }
        f = fopen(argv[4], "wb");
        if (!f || fwrite(buf, 1, n, f) != n) { fprintf(stderr, "lattn-check: cannot write %s\n", argv[4]); return 2; }
        fclose(f);
        lattn_free(&g_ctx, buf);
        lattn_st_free(&g_ctx, &c);
        printf("wrote %s\n", argv[4]);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "check") == 0) {
        lattn_st_file c, o;
        int ok;
        const char *prec = argc >= 5 ? argv[4] : "fp32";
        if (strcmp(prec, "fp32") && strcmp(prec, "tf32") && strcmp(prec, "bf16")) { fprintf(stderr, "lattn-check: precision %s?\n", prec); return 2; }
        if (!load(argv[2], &c)) return 2;
        if (!load(argv[3], &o)) { lattn_st_free(&g_ctx, &c); return 2; }
        ok = check(&c, &o, prec, argv[3]);
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
