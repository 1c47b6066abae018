/* perturb IN OUT [MODE [NAME]]: copy a safetensors file of outputs with one damage that lattn-check
   must report. The damaged tensor is NAME, or the first float32 tensor.
     one        (default) one value moved by 0.1 (1 + |x|)
     transpose  the last two axes swapped in memory and in the shape (a state written [V][K])
     flat       the same values under a flattened shape [count]
     from16     every value from token 16 on (axis 1) moved by 1e-3 relative (a precision step)
     nan        one value replaced by NaN
     drop       the tensor left out
     f64        every float32 tensor stored as float64 (a float64 backend's output; not damage) */
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
    void *own[16];
    int64_t i, shp[16][LATTN_ST_MAX_DIMS], flat[1];
    int n = 0, k, done = 0, no = 0, rc = 0;
    const char *mode = argc >= 4 ? argv[3] : "one", *name = argc >= 5 ? argv[4] : NULL;
    lattn_ctx_init(&ctx);
    memset(e, 0, sizeof e);
    if (argc < 3 || argc > 5 || lattn_st_load(&ctx, argv[1], &f) != LATTN_OK) {
        fprintf(stderr, "usage: perturb IN OUT [one|transpose|flat|from16|nan|drop|f64 [NAME]] (%s)\n", lattn_ctx_error(&ctx));
        return 2;
    }
    for (i = 0; i < f.n_tensors && n < 16; i++) {
        const lattn_st_tensor *t = &f.tensors[i];
        int target = !done && t->dtype == LATTN_DTYPE_F32 && t->count > 0 && (!name || strcmp(t->name, name) == 0);
        float *x;
        e[n].name = t->name; e[n].dtype = t->dtype; e[n].ndim = t->ndim; e[n].data = t->data;
        for (k = 0; k < t->ndim; k++) shp[n][k] = t->shape[k];
        e[n].shape = shp[n];
        if (strcmp(mode, "f64") == 0 && t->dtype == LATTN_DTYPE_F32) {
            double *d = (double *)malloc(t->count * sizeof(double));
            lattn_st_to_f64(&ctx, t, d, t->count);
            e[n].dtype = LATTN_DTYPE_F64; e[n].data = own[no++] = d;
            n++;
            continue;
        }
        if (!target || strcmp(mode, "f64") == 0) { n++; continue; }
        done = 1;
        if (strcmp(mode, "drop") == 0) continue;
        x = (float *)malloc(t->count * sizeof(float));
        memcpy(x, t->data, t->count * sizeof(float));
        e[n].data = own[no++] = x;
        if (strcmp(mode, "one") == 0) x[t->count / 2] += 0.1f * (1.0f + (float)fabs(x[t->count / 2]));
        else if (strcmp(mode, "nan") == 0) x[t->count / 3] = NAN;
        else if (strcmp(mode, "flat") == 0) { flat[0] = (int64_t)t->count; e[n].ndim = 1; e[n].shape = flat; }
        else if (strcmp(mode, "transpose") == 0 && t->ndim >= 2) {
            int64_t a = t->shape[t->ndim - 2], b = t->shape[t->ndim - 1], blk, r, c;
            const float *src = (const float *)(const void *)t->data;
            for (blk = 0; blk < (int64_t)t->count; blk += a * b)
                for (r = 0; r < a; r++)
                    for (c = 0; c < b; c++) x[blk + c * a + r] = src[blk + r * b + c];
            shp[n][t->ndim - 2] = b; shp[n][t->ndim - 1] = a;
        } else if (strcmp(mode, "from16") == 0 && t->ndim >= 3) {
            int64_t inner = 1, T = t->shape[1];
            size_t j;
            for (k = 2; k < t->ndim; k++) inner *= t->shape[k];
            for (j = 0; j < t->count; j++)
                if ((int64_t)(j / (size_t)inner) % T >= 16) x[j] *= 1.001f;
        } else { fprintf(stderr, "perturb: mode %s does not apply to %s\n", mode, t->name); rc = 2; }
        n++;
    }
    if (!rc && lattn_st_save(&ctx, argv[2], e, n, NULL, 0) != LATTN_OK) { fprintf(stderr, "perturb: %s\n", lattn_ctx_error(&ctx)); rc = 2; }
    for (k = 0; k < no; k++) free(own[k]);
    lattn_st_free(&ctx, &f);
    return rc;
}
