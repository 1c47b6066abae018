/* evaluate: the seed article's evaluation method (its section 7) for every architecture at one width.

   Each architecture is a lattn_net of the same width (D 128, 4 heads, vocabulary 256, FFN 4D; the
   block lists of examples/mqar.c), at batch 2 and T = 256, 512, 1024, 2048:
     training throughput  tokens/s of lattn_net_backward (forward + backward, no optimizer), median
                          of 3 runs after an unmeasured one;
     prefill latency      the time of lattn_net_forward over one sequence of T tokens (the first
                          token's latency when a prompt of T tokens is read at once), median of 3;
     activation memory    the peak of the bytes the context's allocator holds during the first
                          backward at that T (a counting allocator; the kept workspace included),
                          against T;
     decoding memory      lattn_net_state_floats: the bytes one sequence holds after T tokens (a
                          constant state, or a KV cache that grows: whether the model streams);
     per-token latency    one decoding step (lattn_pool_step on a one-slot lattn_pool_init_net) after
                          a context of T tokens, median of 3.
   It prints a Markdown table and writes five SVG charts (examples/svg_plot.h) into DIR (default
   build): throughput_vs_T.svg, prefill_vs_T.svg, memory_vs_T.svg, state_vs_T.svg, decode_vs_T.svg.

   Usage: evaluate [--out DIR] [--T LIST] [--arch LIST] [--threads N]     (LIST comma-separated) */
#define _POSIX_C_SOURCE 199309L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "svg_plot.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D 128
#define HEADS 4
#define VOCAB 256
#define BATCH 2
#define MAX_T 8

static const struct { const char *name, *blocks; } archs[] = {
    { "laplace", "laplace laplace" }, { "attn", "attn attn" }, { "la", "la ffn la ffn" }, { "gla", "gla ffn gla ffn" }, { "gdn", "gdn ffn gdn ffn" },
    { "prism", "prism prism" }, { "ttt", "ttt ttt" },
};
#define N_ARCH (int)(sizeof archs / sizeof archs[0])

/* A counting allocator: each block carries its size in front; live and peak bytes. */
typedef struct counter { size_t live, peak; } counter;
static void *count_alloc(void *user, size_t n) {
    counter *c = (counter *)user;
    size_t *p = (size_t *)malloc(n + 16);
    if (!p) return NULL;
    p[0] = n;
    c->live += n;
    if (c->live > c->peak) c->peak = c->live;
    return (char *)p + 16;
}
static void count_free(void *user, void *q) {
    counter *c = (counter *)user;
    size_t *p = (size_t *)(void *)((char *)q - 16);
    c->live -= p[0];
    free(p);
}
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
    const char *out = "build", *only = NULL;
    int64_t Ts[MAX_T] = { 256, 512, 1024, 2048 }, nT = 4, ti;
    double Tx[MAX_T], tput[N_ARCH][MAX_T], pre[N_ARCH][MAX_T], mem[N_ARCH][MAX_T], state[N_ARCH][MAX_T], dec[N_ARCH][MAX_T];
    svg_series s[N_ARCH];
    char path[512];
    counter cnt = { 0, 0 };
    lattn_ctx ctx;
    int a, i, ns = 0, threads = 0;
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--out")) out = argv[i + 1];
        else if (!strcmp(argv[i], "--arch")) only = argv[i + 1];
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--T")) {
            const char *p = argv[i + 1];
            for (nT = 0; *p && nT < MAX_T; p += *p == ',') Ts[nT++] = strtoll(p, (char **)&p, 10);
        } else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    lattn_ctx_init(&ctx);
    ctx.allocator.alloc = count_alloc;
    ctx.allocator.free = count_free;
    ctx.allocator.user = &cnt;
    ctx.n_threads = threads;
    ctx.keep_workspace = 1;                        /* the layers' workspaces kept between calls */
    for (ti = 0; ti < nT; ti++) Tx[ti] = (double)Ts[ti];
    printf("evaluate: width %d, %d heads, vocabulary %d, batch %d; %s\n\n", D, HEADS, VOCAB, BATCH, lattn_build_info());
    printf("| arch | params | T | train tokens/s | prefill ms (1 seq) | peak activation MB | decoding state MB | ms per token after T |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (a = 0; a < N_ARCH; a++) {
        lattn_net_config c;
        lattn_net m;
        float *grad;
        int32_t *tok;
        lattn_rng r = lattn_rng_seed(5);
        if (only && !svg_listed(only, archs[a].name)) continue;
        if (lattn_net_config_parse(&ctx, &c, archs[a].blocks, VOCAB, D, HEADS) != LATTN_OK || lattn_net_init(&ctx, &m, &c, 1) != LATTN_OK) {
            printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
            return 1;
        }
        grad = (float *)malloc(m.n_params * sizeof *grad);
        tok = (int32_t *)malloc((size_t)(BATCH * Ts[nT - 1]) * sizeof *tok);
        for (i = 0; i < BATCH * Ts[nT - 1]; i++) tok[i] = (int32_t)(lattn_rng_next(&r) % VOCAB);
        for (ti = 0; ti < nT; ti++) {
            const int64_t T = Ts[ti];
            const int reps = 3;
            double t[3], t0;
            size_t base, sf = 0;
            int k;
            lattn_ctx_trim(&ctx);                      /* the kept workspace made again in the first run */
            for (k = -1; k < reps; k++) {             /* the first run unmeasured: pages faulted in */
                base = cnt.live;
                cnt.peak = cnt.live;
                t0 = now();
                if (lattn_net_backward(&ctx, &m, BATCH, T, tok, NULL, NULL, grad) != LATTN_OK) {
                    printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                    return 1;
                }
                if (k >= 0) t[k] = now() - t0;
                else mem[ns][ti] = (double)(cnt.peak - base) / 1e6;
            }
            qsort(t, (size_t)reps, sizeof t[0], cmp);
            tput[ns][ti] = (double)(BATCH * T) / t[reps / 2];
            for (k = 0; k < reps; k++) {
                t0 = now();
                if (lattn_net_forward(&ctx, &m, 1, T, tok, NULL, NULL, NULL) != LATTN_OK) return 1;
                t[k] = now() - t0;
            }
            qsort(t, (size_t)reps, sizeof t[0], cmp);
            pre[ns][ti] = 1e3 * t[reps / 2];
            if (lattn_net_state_floats(&ctx, &m, T, &sf) != LATTN_OK) return 1;
            state[ns][ti] = 4.0 * (double)sf / 1e6;
            {   /* one decoding step after a context of T tokens, in a one-slot pool */
                lattn_pool p;
                int64_t slot;
                float *lg = (float *)malloc((size_t)(T * VOCAB) * sizeof *lg);
                if (lattn_pool_init_net(&ctx, &p, &m, 1, T + reps) != LATTN_OK || lattn_pool_admit(&ctx, &p, &slot) != LATTN_OK ||
                    lattn_pool_prefill(&ctx, &p, slot, T, tok, lg) != LATTN_OK) {
                    printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                    return 1;
                }
                for (k = 0; k < reps; k++) {
                    t0 = now();
                    if (lattn_pool_step(&ctx, &p, 1, &slot, tok + T + k, lg) != LATTN_OK) return 1;
                    t[k] = now() - t0;
                }
                qsort(t, (size_t)reps, sizeof t[0], cmp);
                dec[ns][ti] = 1e3 * t[reps / 2];
                lattn_pool_free(&ctx, &p);
                free(lg);
            }
            printf("| %s | %zu | %lld | %.0f | %.1f | %.1f | %.3f | %.3f |\n", archs[a].name, m.n_params, (long long)T, tput[ns][ti],
                   pre[ns][ti], mem[ns][ti], state[ns][ti], dec[ns][ti]);
            fflush(stdout);
        }
        s[ns].name = archs[a].name;
        s[ns].n = (int)nT;
        s[ns].x = Tx;
        ns++;
        free(grad);
        free(tok);
        lattn_net_free(&ctx, &m);
    }
    {
        static const char *const files[5] = { "throughput_vs_T.svg", "prefill_vs_T.svg", "memory_vs_T.svg", "state_vs_T.svg",
                                              "decode_vs_T.svg" };
        static const char *const titles[5] = { "Training throughput (forward + backward)", "Prefill latency, one sequence",
                                                "Peak activation memory of a training step", "Decoding memory of one sequence",
                                                "Per-token decoding latency after T tokens" };
        static const char *const ylabels[5] = { "tokens / s", "ms", "MB", "MB", "ms" };
        int f;
        for (f = 0; f < 5; f++) {
            svg_axes ax;
            for (a = 0; a < ns; a++) s[a].y = f == 0 ? tput[a] : f == 1 ? pre[a] : f == 2 ? mem[a] : f == 3 ? state[a] : dec[a];
            ax.title = titles[f];
            ax.xlabel = "sequence length T";
            ax.ylabel = ylabels[f];
            ax.logx = 1;
            ax.logy = 1;
            snprintf(path, sizeof path, "%s/%s", out, files[f]);
            if (svg_chart(path, &ax, s, ns) != 0) {
                printf("cannot write %s\n", path);
                return 1;
            }
            printf("%swrote %s", f ? ", " : "\n", path);
        }
        printf("\n");
    }
    lattn_ctx_free(&ctx);
    return 0;
}
