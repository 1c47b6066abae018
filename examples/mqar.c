/* mqar: multi-query associative recall (Zoology, Arora et al. 2023), every architecture at one width.

   A sequence shows P key-value pairs, k_1 v_1 ... k_P v_P (keys from the first half of the
   vocabulary, values from the second, keys distinct), then, at random positions of the rest, each
   key again; there the model must emit the key's value. Every other position is token 0 with no
   target. Zoology places the queries with power-law gaps; here they are uniform over the query
   span. The seeds' claims, in miniature: softmax attention solves the task; the delta rule (GDN)
   beats plain linear attention and gating (la, gla: the same layer around the other two cores)
   and a fixed-decay linear mixer (the Laplace layer, Simple GLA); PRISM's rank-L writes help
   precise retrieval over GDN.

   Each architecture is a lattn_net of two mixer blocks with their MLPs, trained with AdamW (lr
   3e-3 unless --lr, cosine to 0.1 after 5 % warm-up, weight decay 0.1, clipping at 1) on fresh batches for a
   fixed number of steps, then scored on 512 held-out sequences of length T, 2T and 4T (trained short,
   tested long; the same number of pairs): accuracy over the query positions.

   The first (T, pairs)'s accuracies against the test length go to an SVG chart (--svg PATH, default
   build/mqar_accuracy.svg).

   Usage: mqar [--steps N] [--lr LR] [--T LIST] [--P LIST] [--D D] [--arch LIST] [--seed S] [--svg PATH]
       LIST: comma-separated (T 64,128; P 4,8); arch names: laplace attn la gla gdn prism ttt
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

/* The architectures at the same width: a lattn_net's block list, or (blocks NULL) a two-layer
   transformer (lattn_tf_model) run as an SPS variant. */
static const struct { const char *name, *blocks; lattn_sps_variant variant; } archs[] = {
    { "laplace", "laplace laplace", LATTN_SPS_STANDARD },    /* Simple GLA with fixed decays, its own MLP */
    { "attn", "attn attn", LATTN_SPS_STANDARD },             /* softmax attention, RoPE, SwiGLU */
    { "la", "la ffn la ffn", LATTN_SPS_STANDARD },           /* linear attention in the GDN layer + SwiGLU */
    { "gla", "gla ffn gla ffn", LATTN_SPS_STANDARD },        /* GLA (per-key gates) in the GDN layer + SwiGLU */
    { "gdn", "gdn ffn gdn ffn", LATTN_SPS_STANDARD },        /* Gated DeltaNet + SwiGLU */
    { "prism", "prism prism", LATTN_SPS_STANDARD },          /* PRISM P2, S = 2, its own output MLP */
    { "ttt", "ttt ttt", LATTN_SPS_STANDARD },                /* TTT-MLP Block */
    { "std", NULL, LATTN_SPS_STANDARD },                     /* the SPS paper's Standard transformer */
    { "sps", NULL, LATTN_SPS_SPS },                          /* the same weights' shape with a ρ slot per token, w 64 */
};
#define N_ARCH (int)(sizeof archs / sizeof archs[0])

/* One architecture's model: a net, or a transformer with its SPS variant (the predict token is
   the extra vocabulary entry VOCAB; no EOS, no pads), with its optimizer and scratch. */
typedef struct {
    int is_tf;
    lattn_net net;
    lattn_tf_model tf;
    lattn_sps_config sps;
    lattn_optim opt;
    float *grad, *dlog;                  /* the transformer's gradient and logits / their gradient */
    int64_t vocab;                       /* logits per row: VOCAB, or VOCAB + 1 */
} model;
static lattn_status model_init(lattn_ctx *ctx, model *md, int a, int64_t D, uint64_t seed) {
    lattn_status st;
    memset(md, 0, sizeof *md);
    md->is_tf = archs[a].blocks == NULL;
    if (!md->is_tf) {
        lattn_net_config c;
        md->vocab = VOCAB;
        if ((st = lattn_net_config_parse(ctx, &c, archs[a].blocks, VOCAB, D, 4)) != LATTN_OK || (st = lattn_net_init(ctx, &md->net, &c, seed)) != LATTN_OK)
            return st;
        return lattn_optim_init(ctx, &md->opt, md->net.tensors, md->net.n_tensors, 0);
    } else {                             /* the net's attn blocks' shape: 4 heads of D/4, SwiGLU of 4D */
        lattn_tf_config c = lattn_tf_config_small();
        c.n_layers = 2;
        c.D = D;
        c.H = 4;
        c.H_kv = 4;
        c.K = D / 4;
        c.ffn = 4 * D;
        c.vocab = VOCAB + 1;
        c.norm_eps = 1e-5f;
        md->vocab = VOCAB + 1;
        md->sps = lattn_sps_config_default(archs[a].variant);
        md->sps.predict_id = VOCAB;
        md->sps.eos_id = -1;
        md->sps.pad_id = -1;
        if ((st = lattn_tf_init(ctx, &md->tf, &c, seed)) != LATTN_OK) return st;
        md->grad = (float *)malloc(md->tf.n_params * sizeof(float));
        return lattn_optim_init(ctx, &md->opt, md->tf.tensors, md->tf.n_tensors, 0);
    }
}
static size_t model_params(const model *md) { return md->is_tf ? md->tf.n_params : md->net.n_params; }
/* Logits [n][T][vocab] of n sequences. */
static lattn_status model_logits(lattn_ctx *ctx, const model *md, int64_t n, int64_t T, const int32_t *tok, float *logits) {
    return md->is_tf ? lattn_sps_forward(ctx, &md->tf, &md->sps, n, T, tok, logits, NULL) : lattn_net_forward(ctx, &md->net, n, T, tok, NULL, logits, NULL);
}
/* One training step on the query positions (the mean cross-entropy over the rows with a target),
   gradients clipped at norm 1, the optimizer's step at the schedule's factor f. A transformer:
   its logits, the loss's gradient with respect to them, lattn_sps_backward of that. */
static lattn_status model_step(lattn_ctx *ctx, model *md, double f, int64_t B, int64_t T, const int32_t *tok, const int32_t *tgt,
                               float *dlog, double *loss) {
    const int64_t V = md->vocab;
    int64_t r, k, n = 0;
    double l = 0;
    lattn_status st;
    if (!md->is_tf) return lattn_net_train_step(ctx, &md->net, &md->opt, f, 1.0, 1, B, T, tok, tgt, loss, NULL);
    if ((st = lattn_sps_forward(ctx, &md->tf, &md->sps, B, T, tok, dlog, NULL)) != LATTN_OK) return st;
    for (r = 0; r < B * T; r++) n += tgt[r] >= 0;
    for (r = 0; r < B * T; r++) {        /* softmax - one-hot, over the rows with a target */
        float *z = dlog + r * V;
        double mx = z[0], sum = 0;
        if (tgt[r] < 0) {
            memset(z, 0, (size_t)V * sizeof *z);
            continue;
        }
        for (k = 1; k < V; k++) mx = z[k] > mx ? z[k] : mx;
        for (k = 0; k < V; k++) sum += exp((double)z[k] - mx);
        l += log(sum) + mx - (double)z[tgt[r]];
        for (k = 0; k < V; k++) z[k] = (float)((exp((double)z[k] - mx) / sum - (k == tgt[r])) / (double)n);
    }
    *loss = l / (double)n;
    if ((st = lattn_sps_backward(ctx, &md->tf, &md->sps, B, T, tok, dlog, NULL, md->grad, NULL)) != LATTN_OK ||
        (st = lattn_grad_clip(ctx, NULL, md->tf.n_params, md->grad, 1.0, NULL)) != LATTN_OK)
        return st;
    return lattn_optim_step(ctx, &md->opt, f, md->grad);
}
static void model_free(lattn_ctx *ctx, model *md) {
    lattn_optim_free(ctx, &md->opt);
    if (md->is_tf) lattn_tf_free(ctx, &md->tf);
    else lattn_net_free(ctx, &md->net);
    free(md->grad);
}

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
                model md;
                lattn_lr_schedule sch;
                lattn_rng r = lattn_rng_seed(seed * 1000 + (uint64_t)(ti * 10 + pi));
                int32_t *tok, *tgt;
                float *logits;
                double loss = NAN, f, t0, secs;
                int64_t s, b, t, x, hit = 0, total = 0;
                if (only && !svg_listed(only, archs[a].name)) continue;
                if (P > 64 || 3 * P > T) continue;
                tok = (int32_t *)malloc((size_t)(N_TEST * 4 * T) * sizeof *tok);
                tgt = (int32_t *)malloc((size_t)(N_TEST * 4 * T) * sizeof *tgt);
                logits = (float *)malloc((size_t)((BATCH > 16 ? BATCH : 16) * 4 * T * (VOCAB + 1)) * sizeof *logits);
                if (model_init(&ctx, &md, a, D, seed) != LATTN_OK) {
                    printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                    return 1;
                }
                md.opt.adamw.lr = lr;
                sch.shape = LATTN_LR_COSINE;
                sch.warmup = steps / 20;
                sch.decay = 0;
                sch.total = steps;
                sch.final_ratio = 0.1;
                t0 = now();
                for (s = 1; s <= steps; s++) {
                    make_batch(&r, BATCH, T, P, tok, tgt);
                    if (lattn_lr_factor(&ctx, &sch, s, &f) != LATTN_OK || model_step(&ctx, &md, f, BATCH, T, tok, tgt, logits, &loss) != LATTN_OK) {
                        printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                        return 1;
                    }
                }
                secs = now() - t0;
                printf("| %s | %zu | %lld | %lld |", archs[a].name, model_params(&md), (long long)T, (long long)P);
                for (x = 1; x <= 4; x *= 2) {             /* trained at T, tested at T, 2T, 4T (train short, test long) */
                    const int64_t TT = x * T;
                    hit = total = 0;
                    make_batch(&r, N_TEST, TT, P, tok, tgt);
                    for (b = 0; b < N_TEST; b += 16) {    /* accuracy: argmax at every query position */
                        if (model_logits(&ctx, &md, 16, TT, tok + b * TT, logits) != LATTN_OK) return 1;
                        for (t = 0; t < 16 * TT; t++) {   /* over the data's vocabulary (not SPS's predict token) */
                            const float *z = logits + t * md.vocab;
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
                model_free(&ctx, &md);
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
