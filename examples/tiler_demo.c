/* The same chunked linear-attention code on three device profiles: the cpu (cache blocking,
   C = 64), Trainium2 (128 partitions, C = 128) and an H100 (shared memory per block, C = 64).
   Prints the tiler's report per profile.   cc -std=c99 -O2 -march=native -I.. tiler_demo.c -lm */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    enum { T = 512, H = 2, K = 96, V = 192 };
    const lattn_dev_profile *profs[3];
    float *q = (float *)malloc(sizeof(float) * T * H * K), *k = (float *)malloc(sizeof(float) * T * H * K);
    float *v = (float *)malloc(sizeof(float) * T * H * V), *o = (float *)malloc(sizeof(float) * T * H * V);
    lattn_rng r = lattn_rng_seed(11);
    lattn_ctx ctx;
    lattn_la_args a = {0};
    char js[1024];
    int i, rc = 0;
    profs[0] = lattn_profile_cpu(); profs[1] = lattn_profile_trn2(); profs[2] = lattn_profile_h100();
    lattn_rng_fill_normal(&r, q, T * H * K, 0, 1); lattn_rng_fill_normal(&r, k, T * H * K, 0, 1);
    lattn_rng_fill_normal(&r, v, T * H * V, 0, 1);
    a.B = 1; a.T = T; a.H = H; a.K = K; a.V = V; a.q = q; a.k = k; a.v = v; a.o = o;
    printf("linear attention T=%d H=%d K=%d V=%d on three device profiles\n", T, H, K, V);
    for (i = 0; i < 3; i++) {
        lattn_status s;
        lattn_ctx_init(&ctx);
        ctx.profile = profs[i];
        s = lattn_la_chunk(&ctx, &a);
        if (s != LATTN_OK) { printf("%s: %s\n", profs[i]->name, lattn_ctx_error(&ctx)); rc = 1; continue; }
        lattn_tiler_stats_json(&ctx.stats, profs[i], js, sizeof js);
        printf("\n%s (chunk %d): %llu instructions over %llu (head, chunk) bodies = %.1f each\n%s\n",
               profs[i]->name, profs[i]->default_chunk, (unsigned long long)ctx.stats.instructions,
               (unsigned long long)ctx.stats.unrolled_steps,
               (double)ctx.stats.instructions / (double)ctx.stats.unrolled_steps, js);
    }
    free(q); free(k); free(v); free(o);
    return rc;
}
