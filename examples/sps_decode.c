/* A small random-weight SPS transformer (lattn_tf_config_small: 2 layers, d 64, 4 heads of 16 over
   2 KV heads, vocabulary 256; <predict> = 255, EOS = 254, pad = 253) decodes a stream in every
   variant: prefill a prompt with lattn_sps_prefill, then greedy decoding with lattn_sps_step (the
   <predict> and pad ids forbidden, EOS allowed: a document may end and the caches reset). It
   prints the KV memory each variant holds per context length against Standard, then the ratio at
   the paper's scale (n = 4096, w = 64), and checks the decoded logits against one dense forward.
       cc -std=c99 -O2 -march=native -I.. sps_decode.c -lm */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

enum { P = 24, N = 104, T = P + N, W = 8 };            /* prompt, generated tokens, window */

static int32_t greedy(const float *x, int64_t n) {      /* the best token below the pad id */
    int64_t i, best = 0;
    for (i = 1; i < n - 3; i++) if (x[i] > x[best]) best = i;
    return (int32_t)best;
}
/* KV bytes the cache holds now: every list entry and ring entry of every layer (float32). */
static double held(const lattn_sps_cache *c) {
    double e = 0;
    int64_t l;
    for (l = 0; l < c->n_layers; l++) e += (double)(c->list_len[l * c->B] + c->ring_len[l * c->B]);
    return e * 2.0 * (double)c->width * sizeof(float);
}

int main(void) {
    static const lattn_sps_variant vs[5] = { LATTN_SPS_STANDARD, LATTN_SPS_SPS, LATTN_SPS_2X_MEMORY, LATTN_SPS_DELAYED, LATTN_SPS_REVERSE };
    lattn_ctx ctx;
    lattn_tf_config c = lattn_tf_config_small();
    lattn_tf_model m;
    lattn_rng r = lattn_rng_seed(7);
    int32_t tok[5][T];
    float *lg = (float *)malloc(sizeof(float) * (size_t)(T * c.vocab)), *all = (float *)malloc(sizeof(float) * (size_t)(T * c.vocab));
    double mem[5][4], worst = 0;
    int v, t, i;
    size_t j;
    lattn_ctx_init(&ctx);
    if (lattn_tf_init(&ctx, &m, &c, 42) != LATTN_OK) { fprintf(stderr, "%s\n", lattn_ctx_error(&ctx)); return 1; }
    for (j = 0; j < m.n_params; j++) if (m.arena[j] != 1.0f) m.arena[j] *= 10.0f;   /* a sharper random model */
    for (t = 0; t < P; t++) tok[0][t] = (int32_t)(lattn_rng_next(&r) % 253);
    for (v = 0; v < 5; v++) {
        lattn_sps_config s = lattn_sps_config_default(vs[v]);
        lattn_sps_cache kc;
        double e2 = 0, r2 = 0;
        s.w = W; s.predict_id = 255; s.eos_id = 254; s.pad_id = 253;
        memcpy(tok[v], tok[0], sizeof(int32_t) * P);
        if (lattn_sps_cache_init(&ctx, &kc, &m, &s, 1, T) != LATTN_OK ||
            lattn_sps_prefill(&ctx, &m, 1, P, tok[v], lg, NULL, &kc) != LATTN_OK) { fprintf(stderr, "%s\n", lattn_ctx_error(&ctx)); return 1; }
        for (t = P, i = 0; t < T; t++) {                  /* decode: the prompt's last logits pick the first token */
            tok[v][t] = greedy(lg + (t == P ? (int64_t)(P - 1) * c.vocab : 0), c.vocab);
            if (lattn_sps_step(&ctx, &m, 1, &tok[v][t], lg, &kc) != LATTN_OK) { fprintf(stderr, "%s\n", lattn_ctx_error(&ctx)); return 1; }
            memcpy(all + (int64_t)t * c.vocab, lg, sizeof(float) * (size_t)c.vocab);
            if (t + 1 == 32 || t + 1 == 64 || t + 1 == 96 || t + 1 == T) mem[v][i++] = held(&kc);
        }
        /* one dense forward over the whole stream: the decoder's logits must agree */
        lattn_sps_forward(&ctx, &m, &s, 1, T, tok[v], lg, NULL);
        for (t = P; t < T; t++)
            for (i = 0; i < c.vocab; i++) {
                double d = (double)all[(int64_t)t * c.vocab + i] - lg[(int64_t)t * c.vocab + i];
                e2 += d * d; r2 += (double)lg[(int64_t)t * c.vocab + i] * lg[(int64_t)t * c.vocab + i];
            }
        worst = e2 / r2 > worst ? e2 / r2 : worst;
        printf("%-14s w=%d: decoded", lattn_sps_variant_name(vs[v]), W);
        for (t = P; t < P + 12; t++) printf(" %d", (int)tok[v][t]);
        for (t = P, i = 0; t < T; t++) i += tok[v][t] == 254;
        printf(" ...  (%d EOS decoded)\n", i);
        lattn_sps_cache_free(&ctx, &kc);
    }
    printf("\nKV cache held (bytes, float32) after n tokens, and against Standard:\n%-14s", "variant");
    printf("%12s %12s %12s %12s\n", "n = 32", "n = 64", "n = 96", "n = 128");
    for (v = 0; v < 5; v++) {
        printf("%-14s", lattn_sps_variant_name(vs[v]));
        for (i = 0; i < 4; i++) printf(" %7.0f %4.2fx", mem[v][i], mem[v][i] / mem[0][i]);
        printf("\n");
    }
    {
        lattn_tf_config s = lattn_tf_config_sps("s");
        lattn_sps_config a = lattn_sps_config_default(LATTN_SPS_SPS), st = lattn_sps_config_default(LATTN_SPS_STANDARD);
        printf("\nthe paper's S model (bf16 KV), n = 4096, w = 64: Standard %.1f MiB, SPS %.1f MiB, ratio %.6f\n",
               lattn_sps_kv_bytes(&s, &st, 4096, 2) / 1048576.0, lattn_sps_kv_bytes(&s, &a, 4096, 2) / 1048576.0,
               lattn_sps_kv_bytes(&s, &a, 4096, 2) / lattn_sps_kv_bytes(&s, &st, 4096, 2));
    }
    printf("decoded logits against one dense forward: worst relative RMS %.2e\n", worst > 0 ? sqrt(worst) : 0.0);
    lattn_tf_free(&ctx, &m);
    free(lg); free(all);
    return worst > 1e-10 ? 1 : 0;
}
