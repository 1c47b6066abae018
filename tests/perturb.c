/* perturb IN OUT: copy a safetensors file with one value of its first float32 tensor moved by
   0.1 (1 + |x|) — a wrong answer that lattn-check must reject. */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    lattn_ctx ctx;
    lattn_st_file f;
    lattn_st_entry e[16];
    float *copy = NULL;
    int64_t i;
    int n = 0;
    lattn_ctx_init(&ctx);
    if (argc != 3 || lattn_st_load(&ctx, argv[1], &f) != LATTN_OK) { fprintf(stderr, "perturb: %s\n", lattn_ctx_error(&ctx)); return 2; }
    for (i = 0; i < f.n_tensors && n < 16; i++, n++) {
        const lattn_st_tensor *t = &f.tensors[i];
        e[n].name = t->name; e[n].dtype = t->dtype; e[n].ndim = t->ndim; e[n].shape = t->shape; e[n].data = t->data;
        if (!copy && t->dtype == LATTN_DTYPE_F32 && t->count > 0) {
            copy = (float *)malloc(t->count * sizeof(float));
            memcpy(copy, t->data, t->count * sizeof(float));
            copy[t->count / 2] += 0.1f * (1.0f + (float)fabs(copy[t->count / 2]));
            e[n].data = copy;
        }
    }
    if (lattn_st_save(&ctx, argv[2], e, n, NULL, 0) != LATTN_OK) { fprintf(stderr, "perturb: %s\n", lattn_ctx_error(&ctx)); return 2; }
    free(copy);
    lattn_st_free(&ctx, &f);
    return 0;
}
