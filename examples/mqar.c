/* mqar: multi-query associative recall (Zoology, Arora et al. 2023), every architecture at one width.

   A sequence shows P key-value pairs, k_1 v_1 ... k_P v_P (keys from the first half of the
   vocabulary, values from the second, keys distinct), then, at random positions of the rest, each
   key again; there the model must emit the key's value. Every other position is token 0 with no
   target. Zoology places the queries with power-law gaps; here they are uniform over the query
   span. The seeds' claims, in miniature: softmax attention solves the task; the delta rule (GDN)
   beats a fixed-decay linear mixer (the Laplace layer, Simple GLA); PRISM's rank-L writes help
   precise retrieval over GDN.

   Each architecture is a lattn_net of two mixer blocks with their MLPs, trained with AdamW (lr
   3e-3 unless --lr, cosine to 0.1 after 5 % warm-up, weight decay 0.1, clipping at 1) on fresh batches for a
   fixed number of steps, then scored on 512 held-out sequences of length T, 2T and 4T (trained short,
   tested long; the same number of pairs): accuracy over the query positions.

   The first (T, pairs)'s accuracies against the test length go to an SVG chart (--svg PATH, default
   build/mqar_accuracy.svg).

   Usage: mqar [--steps N] [--lr LR] [--T LIST] [--P LIST] [--D D] [--arch LIST] [--seed S] [--svg PATH]
       LIST: comma-separated (T 64,128; P 4,8); arch names: laplace attn gdn prism ttt
   Exit status 1 when a run fails or any accuracy is not a number. */
#define _POSIX_C_SOURCE 199309L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "svg_plot.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VOCAB 128
#define BATCH 32
#define N_TEST 512

/* The architectures: their block lists at the same width. */
static const struct { const char *name, *blocks; } archs[] = {
    { "laplace", "laplace laplace" },    /* Simple GLA with fixed decays, its own MLP */
    { "attn", "attn attn" },             /* softmax attention, RoPE, SwiGLU */
    { "gdn", "gdn ffn gdn ffn" },        /* Gated DeltaNet + SwiGLU */
    { "prism", "prism prism" },          /* PRISM P2, S = 2, its own output MLP */
    { "ttt", "ttt ttt" },                /* TTT-MLP Block */
};
#define N_ARCH (int)(sizeof archs / sizeof archs[0])

/* n sequences of T tokens with P pairs: tokens and targets (-100 where none). */
static void make_batch(lattn_rng *r, int64_t n, int64_t T, int64_t P, int32_t *tok, int32_t *tgt) {
    const int32_t half = VOCAB / 2;
    int64_t b, i, j;
    for (b = 0; b < n; b++) {
        int32_t *x = tok + b * T, *y = tgt + b * T, keys[64], vals[64];
        for (i = 0; i < T; i++) {
            x[i] = 0;
            y[i] = -100;
        }
        for (i = 0; i < P; i++) {
            do {                                   /* distinct keys in [1, half) */
                keys[i] = 1 + (int32_t)(lattn_rng_next(r) % (uint64_t)(half - 1));
                for (j = 0; j < i && keys[j] != keys[i]; j++) {}
            } while (j < i);
            vals[i] = half + (int32_t)(lattn_rng_next(r) % (uint64_t)half);
            x[2 * i] = keys[i];
            x[2 * i + 1] = vals[i];
        }
        for (i = 0; i < P; i++) {                  /* each key once more, at a free position */
            int64_t pos;
            do pos = 2 * P + (int64_t)(lattn_rng_next(r) % (uint64_t)(T - 2 * P));
            while (x[pos] != 0);
            x[pos] = keys[i];
            y[pos] = vals[i];
        }
    }
}
static int64_t parse_list(const char *s, int64_t *out, int max) {
    int64_t n = 0;
    while (*s && n < max) {
        out[n++] = strtoll(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    double lr = 3e-3;
    int64_t steps = 600, D = 64, Ts[8] = { 64, 128 }, Ps[8] = { 4, 8 }, nT = 2, nP = 2, ti, pi;
    const char *only = NULL, *svg = "build/mqar_accuracy.svg";
    double lens[N_ARCH][3], acc[N_ARCH][3];
    svg_series ser[N_ARCH];
    int ns = 0;
    uint64_t seed = 1;
    lattn_ctx ctx;
    int a, i, bad = 0;
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps")) steps = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--T")) nT = parse_list(argv[i + 1], Ts, 8);
        else if (!strcmp(argv[i], "--P")) nP = parse_list(argv[i + 1], Ps, 8);
        else if (!strcmp(argv[i], "--D")) D = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--arch")) only = argv[i + 1];
        else if (!strcmp(argv[i], "--lr")) lr = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--svg")) svg = argv[i + 1];
        else if (!strcmp(argv[i], "--seed")) seed = (uint64_t)atoll(argv[i + 1]);
        else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    lattn_ctx_init(&ctx);
    ctx.keep_workspace = 1;                        /* the layers' workspaces kept between steps */
    printf("MQAR: vocabulary %d, batch %d, %lld steps, lr %g, width %lld (4 heads), test %d sequences, seed %llu\n", VOCAB, BATCH,
           (long long)steps, lr, (long long)D, N_TEST, (unsigned long long)seed);
    printf("| arch | params | T | pairs | accuracy at T | at 2T | at 4T | final loss | train s |\n|---|---|---|---|---|---|---|---|---|\n");
    for (ti = 0; ti < nT; ti++)
        for (pi = 0; pi < nP; pi++)
            for (a = 0; a < N_ARCH; a++) {
                const int64_t T = Ts[ti], P = Ps[pi];
                lattn_net_config c;
                lattn_net m;
                lattn_optim o;
                lattn_lr_schedule sch;
                lattn_rng r = lattn_rng_seed(seed * 1000 + (uint64_t)(ti * 10 + pi));
                int32_t *tok, *tgt;
                float *logits;
                double loss = NAN, f, t0, secs;
                int64_t s, b, t, x, hit = 0, total = 0;
                if (only && !strstr(only, archs[a].name)) continue;
                if (P > 64 || 3 * P > T) continue;
                tok = (int32_t *)malloc((size_t)(N_TEST * 4 * T) * sizeof *tok);
                tgt = (int32_t *)malloc((size_t)(N_TEST * 4 * T) * sizeof *tgt);
                logits = (float *)malloc((size_t)(16 * 4 * T * VOCAB) * sizeof *logits);
                if (lattn_net_config_parse(&ctx, &c, archs[a].blocks, VOCAB, D, 4) != LATTN_OK || lattn_net_init(&ctx, &m, &c, seed) != LATTN_OK ||
                    lattn_optim_init(&ctx, &o, m.tensors, m.n_tensors, 0) != LATTN_OK) {
                    printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                    return 1;
                }
                o.adamw.lr = lr;
                sch.shape = LATTN_LR_COSINE;
                sch.warmup = steps / 20;
                sch.decay = 0;
                sch.total = steps;
                sch.final_ratio = 0.1;
                t0 = now();
                for (s = 1; s <= steps; s++) {
                    make_batch(&r, BATCH, T, P, tok, tgt);
                    if (lattn_lr_factor(&ctx, &sch, s, &f) != LATTN_OK ||
                        lattn_net_train_step(&ctx, &m, &o, f, 1.0, 1, BATCH, T, tok, tgt, &loss, NULL) != LATTN_OK) {
                        printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                        return 1;
                    }
                }
                secs = now() - t0;
                printf("| %s | %zu | %lld | %lld |", archs[a].name, m.n_params, (long long)T, (long long)P);
                for (x = 1; x <= 4; x *= 2) {             /* trained at T, tested at T, 2T, 4T (train short, test long) */
                    const int64_t TT = x * T;
                    hit = total = 0;
                    make_batch(&r, N_TEST, TT, P, tok, tgt);
                    for (b = 0; b < N_TEST; b += 16) {    /* accuracy: argmax at every query position */
                        if (lattn_net_forward(&ctx, &m, 16, TT, tok + b * TT, NULL, logits, NULL) != LATTN_OK) return 1;
                        for (t = 0; t < 16 * TT; t++) {
                            const float *z = logits + t * VOCAB;
                            int32_t best = 0, k;
                            if (tgt[b * TT + t] < 0) continue;
                            for (k = 1; k < VOCAB; k++) if (z[k] > z[best]) best = k;
                            hit += best == tgt[b * TT + t];
                            total++;
                        }
                    }
                    printf(" %.3f |", (double)hit / (double)total);
                    if (ti == 0 && pi == 0) {             /* the first configuration's curve for the chart */
                        lens[ns][x / 2] = (double)TT;
                        acc[ns][x / 2] = (double)hit / (double)total;
                    }
                    bad |= !(total > 0);
                }
                printf(" %.3f | %.1f |\n", loss, secs);
                if (ti == 0 && pi == 0) {
                    ser[ns].name = archs[a].name;
                    ser[ns].n = 3;
                    ser[ns].x = lens[ns];
                    ser[ns].y = acc[ns];
                    ns++;
                }
                fflush(stdout);
                lattn_optim_free(&ctx, &o);
                lattn_net_free(&ctx, &m);
                free(tok);
                free(tgt);
                free(logits);
            }
    if (ns > 0) {
        char title[96];
        svg_axes ax;
        snprintf(title, sizeof title, "MQAR: trained at T = %lld, %lld pairs, %lld steps", (long long)Ts[0], (long long)Ps[0], (long long)steps);
        ax.title = title;
        ax.xlabel = "test sequence length";
        ax.ylabel = "accuracy";
        ax.logx = 1;
        ax.logy = 0;
        if (svg_chart(svg, &ax, ser, ns) != 0) bad = 1;
        else printf("wrote %s\n", svg);
    }
    return bad;
}
