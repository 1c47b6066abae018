/* charlm: a character-level language model on the King James Bible, for several architectures.

   The text is the Debian package bible-kjv's (public domain; `make charlm` writes it to
   $(BUILD)/kjv.txt with `bible -f`, the verse references removed): 4.1 million characters, all
   ASCII. The last 5 % is held out. Each architecture is a lattn_net of the same width (D 128, 4
   heads, vocabulary 128: the bytes) trained with AdamW (lr 2e-3, cosine to 0.1 after 5 % warm-up,
   weight decay 0.1, clipping at 1) on random windows of T = 128 characters, batch 16; every
   `eval` steps the validation loss over 32 fixed held-out windows. It prints the curves (nats per
   character), a Markdown table, and an SVG chart of the validation curves.
   Then train short, test long (the article's section 7): 4 fixed held-out windows of 4096
   characters; for L = 128, 512, 1024, 2048 and 4096 each model reads the last L characters of each
   window and is scored on the same last 127 next-character predictions, so only the context it has
   read grows. Printed, and charted in the --svg-long file.

   Usage: charlm TEXT [--steps N] [--eval K] [--arch LIST] [--svg PATH] [--svg-long PATH] [--threads N]
   Exit status 1 when a run fails or the validation loss does not fall below its start. */
#define _POSIX_C_SOURCE 199309L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "svg_plot.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VOCAB 128
#define D 128
#define BATCH 16
#define T 128
#define N_VAL 32
#define MAX_EVALS 64
#define N_LONG 5                                  /* the evaluation lengths of train short, test long */
#define N_LONG_WIN 4
#define LONG_MAX 4096
static const int64_t long_T[N_LONG] = { 128, 512, 1024, 2048, 4096 };

static const struct { const char *name, *blocks; } archs[] = {
    { "laplace", "laplace laplace" }, { "attn", "attn attn" }, { "gdn", "gdn ffn gdn ffn" },
};
#define N_ARCH (int)(sizeof archs / sizeof archs[0])

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* n windows of L characters starting at random offsets of text[lo, hi). */
static void windows(lattn_rng *r, const unsigned char *text, size_t lo, size_t hi, int n, int64_t L, int32_t *tok) {
    int b;
    int64_t t;
    for (b = 0; b < n; b++) {
        size_t start = lo + (size_t)(lattn_rng_next(r) % (uint64_t)(hi - lo - (size_t)L));
        for (t = 0; t < L; t++) tok[b * L + t] = text[start + (size_t)t] & 127;
    }
}

int main(int argc, char **argv) {
    const char *only = NULL, *svg = "build/charlm_loss.svg", *svg_long = "build/charlm_long.svg";
    int64_t steps = 600, every = 50;
    double xs[N_ARCH][MAX_EVALS], val[N_ARCH][MAX_EVALS], lx[N_LONG], ly[N_ARCH][N_LONG];
    svg_series ser[N_ARCH], lser[N_ARCH];
    int32_t *lwin = (int32_t *)malloc(2 * N_LONG_WIN * LONG_MAX * sizeof(int32_t)), *ltok = lwin + N_LONG_WIN * LONG_MAX;
    int32_t *ltgt = (int32_t *)malloc(N_LONG_WIN * LONG_MAX * sizeof(int32_t));
    unsigned char *text;
    size_t n, split;
    int32_t tok[BATCH * T], vtok[N_VAL * T];
    lattn_ctx ctx;
    FILE *f;
    int a, i, ns = 0, bad = 0;
    if (argc < 2 || !lwin || !ltgt) { fprintf(stderr, "usage: charlm TEXT [--steps N] [--eval K] [--arch LIST] [--svg PATH] [--svg-long PATH] [--threads N]\n"); return 2; }
    lattn_ctx_init(&ctx);
    ctx.keep_workspace = 1;                        /* the layers' workspaces kept between steps */
    for (i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps")) steps = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--eval")) every = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--arch")) only = argv[i + 1];
        else if (!strcmp(argv[i], "--svg")) svg = argv[i + 1];
        else if (!strcmp(argv[i], "--svg-long")) svg_long = argv[i + 1];
        else if (!strcmp(argv[i], "--threads")) ctx.n_threads = atoi(argv[i + 1]);
        else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    if (every < 1 || steps < 1 || steps / every + 1 > MAX_EVALS) { fprintf(stderr, "at most %d evaluations\n", MAX_EVALS - 1); return 2; }
    if (!(f = fopen(argv[1], "rb"))) { fprintf(stderr, "cannot open %s\n", argv[1]); return 2; }
    fseek(f, 0, SEEK_END);
    n = (size_t)ftell(f);
    rewind(f);
    text = (unsigned char *)malloc(n + 1);
    if (!text || fread(text, 1, n, f) != n || n < 64 * 4096) { fprintf(stderr, "cannot read %s (or under %d bytes)\n", argv[1], 64 * 4096); return 2; }
    fclose(f);
    split = n - n / 20;
    printf("charlm: %zu characters (%zu train, %zu held out), T %d, batch %d, %lld steps, width %d\n\n", n, split, n - split, T, BATCH,
           (long long)steps, D);
    for (a = 0; a < N_ARCH; a++) {
        lattn_net_config c;
        lattn_net m;
        lattn_optim o;
        lattn_lr_schedule sch = { LATTN_LR_COSINE, 0, 0, 0, 0.1 };
        lattn_rng r = lattn_rng_seed(11), rv = lattn_rng_seed(12);
        double loss = 0, sum = 0, fct, t0, secs;
        int64_t s, k = 0;
        if (only && !svg_listed(only, archs[a].name)) continue;
        if (lattn_net_config_parse(&ctx, &c, archs[a].blocks, VOCAB, D, 4) != LATTN_OK || lattn_net_init(&ctx, &m, &c, 1) != LATTN_OK ||
            lattn_optim_init(&ctx, &o, m.tensors, m.n_tensors, 0) != LATTN_OK) {
            printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
            return 1;
        }
        o.adamw.lr = 2e-3;
        sch.warmup = steps / 20;
        sch.total = steps;
        windows(&rv, text, split, n, N_VAL, T, vtok);
        printf("%s (%zu parameters)\n  step  train loss  val loss\n", archs[a].name, m.n_params);
        t0 = now();
        for (s = 0; s <= steps; s++) {
            if (s % every == 0) {                          /* the held-out loss */
                if (lattn_net_forward(&ctx, &m, N_VAL, T, vtok, NULL, NULL, &val[ns][k]) != LATTN_OK) return 1;
                xs[ns][k] = (double)s;
                printf("  %4lld  %10.4f  %8.4f\n", (long long)s, s ? sum / (double)every : NAN, val[ns][k]);
                fflush(stdout);
                k++;
                sum = 0;
            }
            if (s == steps) break;
            windows(&r, text, 0, split, BATCH, T, tok);
            if (lattn_lr_factor(&ctx, &sch, s + 1, &fct) != LATTN_OK ||
                lattn_net_train_step(&ctx, &m, &o, fct, 1.0, 1, BATCH, T, tok, NULL, &loss, NULL) != LATTN_OK) {
                printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                return 1;
            }
            sum += loss;
        }
        secs = now() - t0;
        printf("  %.1f s, %.0f training tokens/s\n\n", secs, (double)(steps * BATCH * T) / secs);
        bad |= !(val[ns][k - 1] < val[ns][0]);
        printf("  train short (T %d), test long: loss on the windows' last %d predictions after L characters read, L =", T, T - 1);
        {
            lattn_rng rl = lattn_rng_seed(13);                 /* the same windows for every architecture */
            windows(&rl, text, split, n, N_LONG_WIN, LONG_MAX, lwin);
        }
        for (i = 0; i < N_LONG; i++) {
            const int64_t L = long_T[i];
            int64_t w, t;
            for (w = 0; w < N_LONG_WIN; w++)
                for (t = 0; t < L; t++) ltok[w * L + t] = lwin[w * LONG_MAX + LONG_MAX - L + t];
            for (w = 0; w < N_LONG_WIN; w++)                    /* position t predicts t + 1: the last T - 1 of them, and the window's end */
                for (t = 0; t < L; t++) ltgt[w * L + t] = t >= L - T && t + 1 < L ? ltok[w * L + t + 1] : -100;
            if (lattn_net_forward(&ctx, &m, N_LONG_WIN, L, ltok, ltgt, NULL, &ly[ns][i]) != LATTN_OK) {
                printf("%s: %s\n", archs[a].name, lattn_ctx_error(&ctx));
                return 1;
            }
            lx[i] = (double)long_T[i];
            printf(" %lld: %.4f%s", (long long)long_T[i], ly[ns][i], i + 1 < N_LONG ? "," : "\n\n");
        }
        lser[ns].name = archs[a].name;
        lser[ns].n = N_LONG;
        lser[ns].x = lx;
        lser[ns].y = ly[ns];
        ser[ns].name = archs[a].name;
        ser[ns].n = (int)k;
        ser[ns].x = xs[ns];
        ser[ns].y = val[ns];
        ns++;
        lattn_optim_free(&ctx, &o);
        lattn_net_free(&ctx, &m);
    }
    printf("| arch | val loss at 0 | val loss at the end (nats/char) |");
    for (i = 0; i < N_LONG; i++) printf(" L = %lld |", (long long)long_T[i]);
    printf("\n|---|---|---|");
    for (i = 0; i < N_LONG; i++) printf("---|");
    printf("\n");
    for (a = 0; a < ns; a++) {
        printf("| %s | %.4f | %.4f |", ser[a].name, ser[a].y[0], ser[a].y[ser[a].n - 1]);
        for (i = 0; i < N_LONG; i++) printf(" %.4f |", ly[a][i]);
        printf("\n");
    }
    if (ns > 0) {
        svg_axes ax;
        ax.title = "Character-level LM on the KJV Bible: held-out loss";
        ax.xlabel = "training step";
        ax.ylabel = "nats per character";
        ax.logx = 0;
        ax.logy = 0;
        if (svg_chart(svg, &ax, ser, ns) != 0) bad = 1;
        else printf("wrote %s\n", svg);
        ax.title = "Train at T = 128, test long: held-out loss against the window length";
        ax.xlabel = "window length L (characters)";
        ax.logx = 1;
        if (svg_chart(svg_long, &ax, lser, ns) != 0) bad = 1;
        else printf("wrote %s\n", svg_long);
    }
    free(text);
    free(lwin);
    free(ltgt);
    return bad;
}
