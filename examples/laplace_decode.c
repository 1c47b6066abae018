/* A small random-weight Laplace model (lattn_laplace_config_small: 2 layers, D 64, 4 heads of
   16 x 32, vocabulary 256) prefills a prompt with lattn_laplace_forward, then decodes (sampling
   from the softmax) with lattn_laplace_step, one thread. Per context length it prints the decoding state, which stays constant,
   next to the KV cache a softmax transformer of the same width would hold, which grows; then the
   same two figures for the 3B shapes. Finally the decoded tokens are run through forward in one
   call: the logits must agree with the decoder's.
       cc -std=c99 -O2 -march=native -I.. laplace_decode.c -lm */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A token drawn from softmax(logits) with the library PRNG. */
static int32_t sample(lattn_rng *r, const float *x, int64_t n) {
    double mx = x[0], z = 0, u;
    int64_t i;
    for (i = 1; i < n; i++) if (x[i] > mx) mx = x[i];
    for (i = 0; i < n; i++) z += exp(x[i] - mx);
    u = lattn_rng_uniform(r) * z;
    for (i = 0; i < n - 1; i++) if ((u -= exp(x[i] - mx)) < 0) break;
    return (int32_t)i;
}
static double now(void) { return (double)clock() / CLOCKS_PER_SEC; }

int main(void) {
    enum { P = 16, N = 496, T = P + N };               /* prompt, generated tokens */
    lattn_ctx ctx;
    lattn_laplace_config c = lattn_laplace_config_small(), big = lattn_laplace_config_3b();
    lattn_laplace_model m;
    size_t SF;
    int64_t V, t;
    int32_t tok[T];
    float *logits, *state, *all, *last;
    double t0, dt, err = 0, ref = 0, kv;
    lattn_rng r = lattn_rng_seed(2026);
    lattn_ctx_init(&ctx);
    ctx.n_threads = 1;                                 /* clock() below counts CPU time */
    if (lattn_laplace_init(&ctx, &m, &c, 42) != LATTN_OK || lattn_laplace_state_floats(&c, &SF) != LATTN_OK) {
        fprintf(stderr, "%s\n", lattn_ctx_error(&ctx));
        return 1;
    }
    V = c.vocab;
    logits = (float *)malloc(sizeof(float) * (size_t)(T * V)); all = (float *)malloc(sizeof(float) * (size_t)(T * V));
    state = (float *)calloc(SF, sizeof(float));
    for (t = 0; t < P; t++) tok[t] = (int32_t)(lattn_rng_next(&r) % (uint64_t)V);

    /* prefill: the whole prompt in one call, the state comes out */
    if (lattn_laplace_forward(&ctx, &m, 1, P, tok, NULL, logits, state) != LATTN_OK) { fprintf(stderr, "%s\n", lattn_ctx_error(&ctx)); return 1; }
    printf("Laplace model: %lld layers, D %lld, %lld heads of %lld x %lld, FFN %lld, vocabulary %lld, %zu parameters\n",
           (long long)c.n_layers, (long long)c.D, (long long)c.H, (long long)c.K, (long long)c.V, (long long)c.ffn,
           (long long)V, m.n_params);
    printf("prefilled %d prompt tokens; decoding %d more, sampled\n\n", P, N);
    printf("%8s  %16s  %26s  %8s\n", "context", "Laplace state", "softmax KV cache (fp32)", "ratio");
    /* decode: one token per step from the last logits; the state never grows */
    last = logits + (P - 1) * V;
    t0 = now();
    for (t = P; t < T; t++) {
        tok[t] = sample(&r, last, V);
        last = logits + t * V;
        if (lattn_laplace_step(&ctx, &m, 1, &tok[t], NULL, last, state) != LATTN_OK) { fprintf(stderr, "%s\n", lattn_ctx_error(&ctx)); return 1; }
        if (((t + 1) & t) == 0 || t + 1 == T) {       /* powers of two and the end */
            kv = 2.0 * (double)c.n_layers * (double)c.D * (double)(t + 1) * 4.0;
            printf("%8lld  %10.1f KiB  %20.1f KiB  %7.2fx\n", (long long)(t + 1), SF * 4.0 / 1024, kv / 1024, kv / (SF * 4.0));
        }
    }
    dt = now() - t0;
    printf("\ndecoded %d tokens in %.3f s (%.0f tokens/s, 1 sequence)\n", N, dt, N / (dt > 0 ? dt : 1e-9));
    printf("first generated tokens:");
    for (t = P; t < P + 12; t++) printf(" %d", (int)tok[t]);
    printf("\n");

    /* the same tokens through forward in one call: the logits must be the decoder's (float32) */
    if (lattn_laplace_forward(&ctx, &m, 1, T, tok, NULL, all, NULL) != LATTN_OK) { fprintf(stderr, "%s\n", lattn_ctx_error(&ctx)); return 1; }
    for (t = 0; t < T * V; t++) { err += (double)(all[t] - logits[t]) * (all[t] - logits[t]); ref += (double)logits[t] * logits[t]; }
    printf("forward over all %d tokens vs prefill + decode: relative RMS %.2e\n\n", T, sqrt(err / ref));

    /* the published shapes: fp32 state against a bf16 KV cache of a dense twin (spec §6.4) */
    lattn_laplace_state_floats(&big, &SF);
    kv = 2.0 * (double)big.n_layers * (double)big.D * 8192 * 2.0;
    printf("3B shapes: state %.2f MB per sequence (fp32) vs a dense twin's 8192-token bf16 KV cache %.3f GB: %.1fx\n",
           SF * 4.0 / 1e6, kv / 1e9, kv / (SF * 4.0));
    lattn_laplace_free(&ctx, &m);
    free(logits); free(all); free(state);
    return sqrt(err / ref) <= 1e-4 ? 0 : 1;
}
