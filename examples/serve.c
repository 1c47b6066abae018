/* serve: continuous batching from a pool of fixed slots (lattn_pool, >>serve), on a simulated
   request stream.

   Requests arrive at random engine iterations (a fixed seed), each with a random prompt and a
   random number of tokens to generate. Every iteration the engine admits the requests that have
   arrived while a slot is free (prefill: one lattn_pool_prefill per request, its first token from
   the prompt's last logits), then advances every live slot by one token in one lattn_pool_step
   (greedy decoding), and evicts the requests that are done. Optionally each step is padded to a
   fixed width with pad rows (--pad W), as an engine with fixed batch shapes does.

   It prints throughput (output tokens/s), time per output token (the mean step latency), slots in
   use and the pool's memory; then it decodes every request again alone, in a pool of one, and
   checks that its tokens and every logit are the same bits as in the batch (batch invariance).

   Usage: serve [--model small|3b] [--layers L] [--requests N] [--slots S] [--pad W] [--threads T] [--seed S]
       small: lattn_laplace_config_small (2 layers, D 64); 3b: the Laplace 3B layer shapes
       (D 3072, 16 heads of 96 x 192, FFN 8192) with L layers (default 2) and a vocabulary of 256.
   Exit status 1 when a call fails or a request decoded in the batch differs from decoding it alone. */
#define _POSIX_C_SOURCE 199309L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int64_t arrive, P, G;                /* arrival iteration, prompt and output lengths */
    int32_t *tok;                        /* [P + G]: the prompt, then the generated tokens */
    int64_t slot, done;                  /* its slot while live (-1: waiting or finished); tokens generated */
    uint64_t hash;                       /* FNV-1a of every logit it produced, in order */
} request;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static uint64_t fnv(uint64_t h, const float *x, int64_t n) {
    const unsigned char *b = (const unsigned char *)x;
    size_t i;
    for (i = 0; i < (size_t)n * sizeof(float); i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}
static int32_t argmax(const float *x, int64_t n) {
    int64_t i, best = 0;
    for (i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return (int32_t)best;
}
static int fail(lattn_ctx *ctx) {
    fprintf(stderr, "serve: %s\n", lattn_ctx_error(ctx));
    return 1;
}

/* Admits request q (a slot is free): prefill, its first generated token from the prompt's last logits. */
static lattn_status admit(lattn_ctx *ctx, lattn_pool *p, request *q, float *lg, int64_t V) {
    lattn_status st = lattn_pool_admit(ctx, p, &q->slot);
    if (st == LATTN_OK) st = lattn_pool_prefill(ctx, p, q->slot, q->P, q->tok, lg);
    if (st != LATTN_OK) return st;
    q->hash = fnv(q->hash, lg, q->P * V);
    q->tok[q->P] = argmax(lg + (q->P - 1) * V, V);
    q->done = 1;
    return LATTN_OK;
}

/* What a run did: steps, output tokens, summed slots in use, the most at once; seconds in all and in
   the decoding steps. */
typedef struct { int64_t steps, tokens, busy, peak; double secs, step_secs; } run_stats;
/* Serves every request on pool p, batched (pad: fixed step width, 0 none). */
static lattn_status run(lattn_ctx *ctx, lattn_pool *p, request *rq, int64_t n, int64_t V, int64_t pad, run_stats *rs) {
    int64_t width = pad > p->n_slots ? pad : p->n_slots, left = n, it, i, *slots, *who;
    int32_t *tok;
    float *lg = (float *)malloc(sizeof(float) * (size_t)((width + 64) * V));   /* a step's rows, or a prompt of < 64 */
    double t0 = now(), t1;
    lattn_status st = LATTN_OK;
    slots = (int64_t *)malloc(sizeof(int64_t) * (size_t)(2 * width));
    who = slots + width;
    tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)width);
    memset(rs, 0, sizeof *rs);
    for (i = 0; i < n; i++) { rq[i].slot = -1; rq[i].done = 0; rq[i].hash = 1469598103934665603ull; }
    for (it = 0; left > 0 && st == LATTN_OK; it++) {
        int64_t m = 0, live = 0;
        for (i = 0; i < n && st == LATTN_OK; i++)          /* arrivals, while a slot is free */
            if (rq[i].arrive <= it && rq[i].done == 0 && rq[i].slot < 0) {
                lattn_status a = admit(ctx, p, &rq[i], lg, V);
                if (a == LATTN_E_FULL) break;
                st = a;
            }
        for (i = 0; i < n; i++)                            /* the batch: every live request */
            if (rq[i].slot >= 0) {
                slots[m] = rq[i].slot;
                who[m] = i;
                tok[m] = rq[i].tok[rq[i].P + rq[i].done - 1];
                m++;
            }
        live = m;
        while (m < pad) { slots[m] = -1; tok[m] = 0; who[m] = -1; m++; }
        if (st != LATTN_OK || live == 0) continue;
        t1 = now();
        st = lattn_pool_step(ctx, p, m, slots, tok, lg);
        rs->step_secs += now() - t1;
        rs->steps += 1;
        rs->busy += live;
        rs->peak = live > rs->peak ? live : rs->peak;
        for (i = 0; i < m && st == LATTN_OK; i++) {
            request *q;
            if (who[i] < 0) continue;
            q = &rq[who[i]];
            q->hash = fnv(q->hash, lg + i * V, V);
            rs->tokens += 1;
            if (q->done < q->G) q->tok[q->P + q->done] = argmax(lg + i * V, V);
            if (++q->done > q->G) {                        /* its last token's logits are in: done */
                st = lattn_pool_evict(ctx, p, q->slot);
                q->slot = -1;
                left--;
            }
        }
    }
    rs->secs = now() - t0;
    free(lg);
    free(slots);
    free(tok);
    return st;
}

int main(int argc, char **argv) {
    lattn_laplace_config c = lattn_laplace_config_small();
    lattn_laplace_model m;
    lattn_pool pool, one;
    lattn_ctx ctx;
    lattn_rng r;
    request *rq, *solo;
    int64_t n = 48, slots = 16, pad = 0, layers = 2, i, same = 0;
    int threads = 2, big = 0;
    uint64_t seed = 7;
    run_stats b, a, sum;
    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--model") == 0) { big = strcmp(v, "3b") == 0; i++; }
        else if (strcmp(argv[i], "--layers") == 0) { layers = atoll(v); i++; }
        else if (strcmp(argv[i], "--requests") == 0) { n = atoll(v); i++; }
        else if (strcmp(argv[i], "--slots") == 0) { slots = atoll(v); i++; }
        else if (strcmp(argv[i], "--pad") == 0) { pad = atoll(v); i++; }
        else if (strcmp(argv[i], "--threads") == 0) { threads = atoi(v); i++; }
        else if (strcmp(argv[i], "--seed") == 0) { seed = (uint64_t)atoll(v); i++; }
        else { fprintf(stderr, "usage: serve [--model small|3b] [--layers L] [--requests N] [--slots S] [--pad W] [--threads T] [--seed S]\n"); return 2; }
    }
    if (n < 1 || n > 100000 || slots < 1 || pad < 0 || pad > 4096 || layers < 1 || layers > 64) { fprintf(stderr, "serve: bad sizes\n"); return 2; }
    if (big) {
        c = lattn_laplace_config_3b();
        c.n_layers = layers;
        c.vocab = 256;
    }
    lattn_ctx_init(&ctx);
    ctx.n_threads = threads;
    if (lattn_laplace_init(&ctx, &m, &c, 1) != LATTN_OK || lattn_pool_init_laplace(&ctx, &pool, &m, slots) != LATTN_OK ||
        lattn_pool_init_laplace(&ctx, &one, &m, 1) != LATTN_OK)
        return fail(&ctx);
    /* the request stream: arrivals spread over the first iterations, prompts 4..63, outputs 8..39 */
    r = lattn_rng_seed(seed);
    rq = (request *)calloc((size_t)n, sizeof *rq);
    solo = (request *)calloc((size_t)n, sizeof *solo);
    for (i = 0; i < n; i++) {
        int64_t k;
        rq[i].arrive = (int64_t)(lattn_rng_next(&r) % (uint64_t)(2 * n));
        rq[i].P = 4 + (int64_t)(lattn_rng_next(&r) % 60);
        rq[i].G = 8 + (int64_t)(lattn_rng_next(&r) % 32);
        rq[i].tok = (int32_t *)calloc((size_t)(rq[i].P + rq[i].G + 1), sizeof(int32_t));
        for (k = 0; k < rq[i].P; k++) rq[i].tok[k] = (int32_t)(lattn_rng_next(&r) % (uint64_t)c.vocab);
        solo[i] = rq[i];
        solo[i].arrive = 0;
        solo[i].tok = (int32_t *)calloc((size_t)(rq[i].P + rq[i].G + 1), sizeof(int32_t));
        memcpy(solo[i].tok, rq[i].tok, sizeof(int32_t) * (size_t)rq[i].P);
    }
    printf("model: Laplace, %lld layers, D %lld, %lld heads of %lld x %lld, FFN %lld, vocabulary %lld; %d threads\n",
           (long long)c.n_layers, (long long)c.D, (long long)c.H, (long long)c.K, (long long)c.V, (long long)c.ffn,
           (long long)c.vocab, threads);
    printf("pool: %lld slots of %.0f bytes each (%.2f MB in all), allocated once; %lld requests\n", (long long)slots,
           4.0 * (double)pool.slot_floats, 4.0 * (double)pool.slot_floats * (double)slots / 1e6, (long long)n);
    if (run(&ctx, &pool, rq, n, c.vocab, pad, &b) != LATTN_OK) return fail(&ctx);
    printf("batched%s: %lld output tokens in %.2f s (prefill included): %.1f tokens/s\n"
           "         %lld decoding steps of %.2f ms, %.1f slots in use on average (%lld at most): %.2f ms per output token\n",
           pad ? " (padded)" : "", (long long)b.tokens, b.secs, (double)b.tokens / b.secs, (long long)b.steps,
           1e3 * b.step_secs / (double)b.steps, (double)b.busy / (double)b.steps, (long long)b.peak, 1e3 * b.step_secs / (double)b.tokens);
    /* every request alone, one after the other, in a pool of one */
    memset(&sum, 0, sizeof sum);
    for (i = 0; i < n; i++) {
        if (run(&ctx, &one, &solo[i], 1, c.vocab, 0, &a) != LATTN_OK) return fail(&ctx);
        sum.secs += a.secs;
        sum.step_secs += a.step_secs;
        sum.tokens += a.tokens;
        same += solo[i].hash == rq[i].hash && memcmp(solo[i].tok, rq[i].tok, sizeof(int32_t) * (size_t)(rq[i].P + rq[i].G)) == 0;
    }
    printf("alone:   the same requests one at a time: %.2f s, %.1f tokens/s, %.2f ms per output token (batched: %.2fx the tokens/s)\n",
           sum.secs, (double)sum.tokens / sum.secs, 1e3 * sum.step_secs / (double)sum.tokens, sum.secs / b.secs);
    printf("batch invariance: %lld of %lld requests have the same tokens and the same bits in every logit as decoded alone\n",
           (long long)same, (long long)n);
    for (i = 0; i < n; i++) { free(rq[i].tok); free(solo[i].tok); }
    free(rq);
    free(solo);
    lattn_pool_free(&ctx, &pool);
    lattn_pool_free(&ctx, &one);
    lattn_laplace_free(&ctx, &m);
    return same == n ? 0 : 1;
}
