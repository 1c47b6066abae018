/* lattn's GEMMs beside OpenBLAS's on the products of a Laplace layer's training step at 3B shapes
   (T = 256 tokens; per matrix W [N][K]: the forward Y = X·Wᵀ, and the backward's dX = dY·W and
   dW = dYᵀ·X), the same operands, each call timed in turn, best of 3 per round. `make
   bench-openblas` (Debian: libopenblas-dev) runs it after `build/bench peak`, so the GFLOP/s can be
   read against the FMA peak measured in the same command. argv[1]: thread counts, e.g. 1,2. */
#define _POSIX_C_SOURCE 200112L
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void openblas_set_num_threads(int n);
char *openblas_get_corename(void);

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The comma-separated list's next item. */
static const char *next_item(const char *p) { return strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p); }

int main(int argc, char **argv) {
    const int64_t M = 256, N[5] = { 9216, 3072, 8192, 8192, 3072 }, K[5] = { 3072, 3072, 3072, 3072, 8192 };
    const size_t big = (size_t)9216 * 3072;
    const char *list = argc > 1 ? argv[1] : "1,2";
    float *W = (float *)malloc(sizeof(float) * big), *dW = (float *)malloc(sizeof(float) * big);
    float *x = (float *)malloc(sizeof(float) * (size_t)(M * 8192)), *dx = (float *)malloc(sizeof(float) * (size_t)(M * 8192));
    float *y = (float *)malloc(sizeof(float) * (size_t)(M * 9216)), *ws;
    lattn_rng r = lattn_rng_seed(7);
    const char *p;
    for (p = list; *p; p = next_item(p))
        if (atoi(p) < 1 || atoi(p) > 256) {
            fprintf(stderr, "gemm_openblas: thread counts are 1 to 256, comma-separated (got '%s')\n", list);
            return 1;
        }
    if (!W || !dW || !x || !dx || !y) return 1;
    lattn_rng_fill_normal(&r, W, big, 0, 0.02f);
    lattn_rng_fill_normal(&r, x, (size_t)(M * 8192), 0, 1);
    lattn_rng_fill_normal(&r, y, (size_t)(M * 9216), 0, 1);
    printf("OpenBLAS core: %s; M = %lld; GFLOP/s over the five matrices (forward: Y = X Wt; backward: dX = dY W and dW = dYt X)\n",
           openblas_get_corename(), (long long)M);
    printf("threads   lattn fwd   OpenBLAS fwd   lattn bwd   OpenBLAS bwd   lattn / OpenBLAS (fwd, bwd)\n");
    while (*list) {
        const int nthr = atoi(list);
        double t[4] = { 0, 0, 0, 0 }, fl = 0;
        int i, k, rep;
        ws = (float *)malloc(sizeof(float) * (size_t)nthr * LATTN__LIN_WS(8192));
        if (!ws) return 1;
        openblas_set_num_threads(nthr);
        for (i = 0; i < 5; i++) {
            double best[4] = { 1e30, 1e30, 1e30, 1e30 };
            for (rep = 0; rep < 3; rep++) {
                double s[4];
                s[0] = now_ms();
                lattn__linear(nthr, M, N[i], K[i], x, W, y, 0, ws);
                s[0] = now_ms() - s[0];
                s[1] = now_ms();
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N[i], (int)K[i], 1.0f, x, (int)K[i], W, (int)K[i], 0.0f, y, (int)N[i]);
                s[1] = now_ms() - s[1];
                s[2] = now_ms();
                lattn__linear_backward(nthr, M, N[i], K[i], x, W, y, dx, 0, dW, 0, ws);
                s[2] = now_ms() - s[2];
                s[3] = now_ms();
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)K[i], (int)N[i], 1.0f, y, (int)N[i], W, (int)K[i], 0.0f, dx, (int)K[i]);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)N[i], (int)K[i], (int)M, 1.0f, y, (int)N[i], x, (int)K[i], 0.0f, dW, (int)K[i]);
                s[3] = now_ms() - s[3];
                for (k = 0; k < 4; k++) best[k] = s[k] < best[k] ? s[k] : best[k];
            }
            for (k = 0; k < 4; k++) t[k] += best[k];
            fl += 2.0 * (double)M * (double)N[i] * (double)K[i];
        }
        printf("%7d   %9.1f   %12.1f   %9.1f   %12.1f   %.2f, %.2f\n", nthr, fl / t[0] * 1e-6, fl / t[1] * 1e-6,
               2 * fl / t[2] * 1e-6, 2 * fl / t[3] * 1e-6, t[1] / t[0], t[3] / t[2]);
        free(ws);
        list = next_item(list);
    }
    free(W); free(dW); free(x); free(dx); free(y);
    return 0;
}
