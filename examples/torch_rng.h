/* torch_rng.h: PyTorch's CPU random stream, enough to redraw a seeded script's tensors in C.

   PyTorch (1.13 and later, ATen's CPUGeneratorImpl) draws from one MT19937 (Matsumoto and
   Nishimura 1998) seeded by torch.manual_seed(s) with the 32-bit seed s:
     - float32 tensor.uniform_(from, to): one 32-bit draw r per element, in order;
       u = (r & (2^24 - 1)) · 2^-24 in double, value = (float)(u · (float)(to - from) + from).
     - float32 torch.randn(n), n ≥ 16 and contiguous (normal_fill): n uniforms in [0, 1) as above,
       then every block of 16 by Box-Muller on the pairs (j, j + 8), j < 8:
         ρ = sqrt(-2 log(1 - u_j)),  θ = 2π u_{j+8},  x_j = ρ cos θ,  x_{j+8} = ρ sin θ;
       when n is not a multiple of 16 the last 16 values are drawn again and transformed as a block.
   The transform runs in float32 (PyTorch's AVX2 build uses SLEEF's 1-ulp logf / cosf / sinf, so its
   values may differ from libm's in the last bit). The draws themselves are exact: the same seed gives
   the same bits in every uniform. nn.Linear and nn.Conv1d initialise their weight and then their
   bias with uniform_(-1/sqrt(fan_in), 1/sqrt(fan_in)), modules in construction order. Included after
   lattn.h it also redraws the TCN article's DemoModel (torch_demo_init). */
#ifndef TORCH_RNG_H
#define TORCH_RNG_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct torch_rng { uint32_t s[624]; int i; } torch_rng;

static void torch_rng_seed(torch_rng *g, uint32_t seed) {
    int j;
    g->s[0] = seed;
    for (j = 1; j < 624; j++) g->s[j] = 1812433253u * (g->s[j - 1] ^ (g->s[j - 1] >> 30)) + (uint32_t)j;
    g->i = 624;
}
/* The next 32-bit output (the standard MT19937 recurrence and tempering). */
static uint32_t torch_rng_next(torch_rng *g) {
    uint32_t y;
    if (g->i == 624) {
        int k;
        for (k = 0; k < 624; k++) {
            y = (g->s[k] & 0x80000000u) | (g->s[(k + 1) % 624] & 0x7fffffffu);
            g->s[k] = g->s[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->i = 0;
    }
    y = g->s[g->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}
/* tensor.uniform_(from, to) on n float32 elements. */
static void torch_uniform(torch_rng *g, float *w, size_t n, float from, float to) {
    size_t k;
    for (k = 0; k < n; k++) {
        const double u = (double)(torch_rng_next(g) & 0xffffffu) * (1.0 / 16777216.0);
        w[k] = (float)(u * (double)(to - from) + (double)from);
    }
}
/* Box-Muller on one block of 16 uniforms, in place. */
static void torch_normal16(float *d) {
    int j;
    for (j = 0; j < 8; j++) {
        const float u1 = 1.0f - d[j], u2 = d[j + 8];
        const float radius = sqrtf(-2.0f * logf(u1)), theta = (float)(2.0 * 3.14159265358979323846 * (double)u2);
        d[j] = radius * cosf(theta);
        d[j + 8] = radius * sinf(theta);
    }
}
/* torch.randn(n) in float32, n >= 16. */
static void torch_randn(torch_rng *g, float *x, size_t n) {
    size_t k;
    torch_uniform(g, x, n, 0.0f, 1.0f);
    for (k = 0; k + 16 <= n; k += 16) torch_normal16(x + k);
    if (n % 16 != 0) {
        torch_uniform(g, x + n - 16, 16, 0.0f, 1.0f);
        torch_normal16(x + n - 16);
    }
}
#ifdef LATTN_H_INCLUDED
/* torch.manual_seed(seed); DemoModel() of the TCN article (lattn_tcn_demo): its Linear and Conv1d
   weights and biases drawn in construction order (fan_in 2, then D·W for the convolutions, then D
   for the head; LayerNorm draws nothing), compared with m's. Returns how many of the *n_drawn
   values are identical; g is left where the training loop's first torch.randn starts. */
static size_t torch_demo_init(torch_rng *g, uint32_t seed, const lattn_tcn_demo *m, size_t *n_drawn) {
    size_t same = 0, k;
    int64_t i;
    float *w = (float *)malloc(m->n_params * sizeof(float));
    torch_rng_seed(g, seed);
    *n_drawn = 0;
    for (i = 0; w && i < m->n_tensors; i++) {
        const lattn_tensor *t = &m->tensors[i];
        const int64_t fan = i < 2 ? m->cfg.d_in : i >= m->n_tensors - 2 ? m->cfg.D : m->cfg.D * m->cfg.W;
        const float bound = (float)(1.0 / sqrt((double)fan));
        if (strstr(t->name, ".norm.")) continue;
        torch_uniform(g, w, t->count, -bound, bound);
        for (k = 0; k < t->count; k++) same += w[k] == t->data[k];
        *n_drawn += t->count;
    }
    free(w);
    return same;
}
#endif
#endif
