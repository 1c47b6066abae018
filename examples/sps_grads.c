/* sps_grads: the SPS paper's gradient analysis in miniature (Monea, Godey, Brantley, Artzi 2026;
   spec sps.md). For a position i and a loss k tokens ahead, the ratio
       r(i, k) = ||∇_{h_i} ℓ_{i+k}||₂ / ||∇_{h_i} ℓ_i||₂
   of the gradient a position's state h_i (its embedded row, the first layer's input) receives
   from the loss k tokens ahead against the one it receives from its own token's loss, for SPS's
   input stream x_i and prediction stream ρ_i, and for the Standard transformer's one stream.
   The paper's finding: in SPS the input stream keeps a strong future gradient even at k = 512
   while the prediction stream's is tiny; in Standard state and prediction share x_i.

   Two models of the same initial weights (2 layers, d 64, 4 heads, ffn 192, vocab 256) are
   trained for `steps` AdamW steps (argument 1, default 150) on sequences that repeat a random
   block of 32 tokens (a copy task: the next token is the one 32 back), one as SPS (w = 64), one as
   Standard. Then, on a 640-token sequence of the same kind, each loss ℓ_j is backpropagated alone
   (lattn_sps_backward with dout = softmax(z_j) - onehot(target) on row j) and the slots' row
   gradients (its dx) are read at 8 positions i = 64 .. 120; r is their mean.
   Build and run: make sps-grads. */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PERIOD = 32, B_TRAIN = 4, T_TRAIN = 256, T_EVAL = 640, N_POS = 8, N_K = 6 };
static const int ks[N_K] = { 1, 4, 16, 64, 256, 512 };

/* A block of PERIOD random tokens in [0, 250), repeated to length T. */
static void sequence(lattn_rng *r, int32_t *tok, int64_t T) {
    int64_t t;
    for (t = 0; t < T; t++) tok[t] = t < PERIOD ? (int32_t)(lattn_rng_next(r) % 250) : tok[t - PERIOD];
}

/* AdamW (lr 3e-3, no decay) for `steps` steps on fresh batches; the first and last losses. */
static int train(lattn_ctx *ctx, lattn_tf_model *m, const lattn_sps_config *s, int steps, double *first, double *last) {
    lattn_rng r = lattn_rng_seed(7);
    lattn_optim o;
    int32_t tok[B_TRAIN * T_TRAIN];
    float *grad = (float *)malloc(m->n_params * sizeof(float));
    double loss = NAN;
    int step, b;
    if (!grad || lattn_optim_init(ctx, &o, m->tensors, m->n_tensors, 0) != LATTN_OK) return 0;
    o.adamw.lr = 3e-3;
    o.adamw.weight_decay = 0.0;
    for (step = 0; step < steps; step++) {
        for (b = 0; b < B_TRAIN; b++) sequence(&r, tok + b * T_TRAIN, T_TRAIN);
        if (lattn_sps_backward(ctx, m, s, B_TRAIN, T_TRAIN, tok, NULL, &loss, grad, NULL) != LATTN_OK) break;
        if (lattn_optim_step(ctx, &o, 1.0, grad) != LATTN_OK) break;
        if (step == 0) *first = loss;
    }
    *last = loss;
    lattn_optim_free(ctx, &o);
    free(grad);
    return step == steps;
}

/* The row gradients dx [S·T][d] of the loss at token j alone. */
static int loss_grad(lattn_ctx *ctx, const lattn_tf_model *m, const lattn_sps_config *s, const int32_t *tok, const float *logits,
                     int64_t j, float *dout, float *grad, float *dx) {
    const int64_t V = m->cfg.vocab;
    const float *z = logits + j * V;
    float mx = z[0];
    double sum = 0.0;
    int64_t v;
    memset(dout, 0, (size_t)(T_EVAL * V) * sizeof(float));
    for (v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
    for (v = 0; v < V; v++) sum += exp((double)(z[v] - mx));
    for (v = 0; v < V; v++) dout[j * V + v] = (float)(exp((double)(z[v] - mx)) / sum);
    dout[j * V + tok[j + 1]] -= 1.0f;
    return lattn_sps_backward(ctx, m, s, 1, T_EVAL, tok, dout, NULL, grad, dx) == LATTN_OK;
}

static double norm(const float *x, int64_t n) {
    double s = 0.0;
    int64_t i;
    for (i = 0; i < n; i++) s += (double)x[i] * (double)x[i];
    return sqrt(s);
}

/* Mean r(i, k) over the positions, for the input slot (rx) and the prediction slot (rp, SPS only). */
static int ratios(lattn_ctx *ctx, const lattn_tf_model *m, const lattn_sps_config *s, const int32_t *tok, double *rx, double *rp) {
    const int64_t d = m->cfg.D, S = s->variant == LATTN_SPS_STANDARD ? 1 : 2, V = m->cfg.vocab;
    float *logits = (float *)malloc((size_t)(T_EVAL * V) * sizeof(float)), *dout = (float *)malloc((size_t)(T_EVAL * V) * sizeof(float));
    float *grad = (float *)malloc(m->n_params * sizeof(float)), *dx = (float *)malloc((size_t)(S * T_EVAL * d) * sizeof(float));
    double own_x[N_POS], own_p[N_POS];
    int n, k, ok = logits && dout && grad && dx;
    ok = ok && lattn_sps_forward(ctx, m, s, 1, T_EVAL, tok, logits, NULL) == LATTN_OK;
    for (k = 0; k < N_K; k++) rx[k] = rp[k] = 0.0;
    for (n = 0; ok && n < N_POS; n++) {
        const int64_t i = 64 + 8 * n;
        ok = loss_grad(ctx, m, s, tok, logits, i, dout, grad, dx);
        own_x[n] = norm(dx + S * i * d, d);
        own_p[n] = norm(dx + (S * i + S - 1) * d, d);
        for (k = 0; ok && k < N_K; k++) {
            ok = loss_grad(ctx, m, s, tok, logits, i + ks[k], dout, grad, dx);
            rx[k] += norm(dx + S * i * d, d) / own_x[n] / N_POS;
            rp[k] += norm(dx + (S * i + S - 1) * d, d) / own_p[n] / N_POS;
        }
    }
    free(logits);
    free(dout);
    free(grad);
    free(dx);
    return ok;
}

int main(int argc, char **argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 150;
    lattn_ctx ctx;
    lattn_tf_config c = lattn_tf_config_small();
    lattn_sps_config sv[2];
    lattn_tf_model m[2];
    lattn_rng r = lattn_rng_seed(11);
    int32_t tok[T_EVAL];
    double rx[2][N_K], rp[2][N_K], first = NAN, last = NAN;
    int v, k;
    lattn_ctx_init(&ctx);
    c.H_kv = c.H;
    for (v = 0; v < 2; v++) {
        sv[v] = lattn_sps_config_default(v == 0 ? LATTN_SPS_SPS : LATTN_SPS_STANDARD);
        sv[v].w = 64;
        sv[v].predict_id = 255;
        sv[v].eos_id = -1;
        sv[v].pad_id = -1;
        if (lattn_tf_init(&ctx, &m[v], &c, 1) != LATTN_OK || !train(&ctx, &m[v], &sv[v], steps, &first, &last)) {
            fprintf(stderr, "sps_grads: %s\n", lattn_ctx_error(&ctx));
            return 1;
        }
        printf("%-8s trained %d steps on the period-%d copy task: loss %.3f -> %.3f\n", lattn_sps_variant_name(sv[v].variant), steps,
               PERIOD, first, last);
    }
    sequence(&r, tok, T_EVAL);
    for (v = 0; v < 2; v++)
        if (!ratios(&ctx, &m[v], &sv[v], tok, rx[v], rp[v])) {
            fprintf(stderr, "sps_grads: %s\n", lattn_ctx_error(&ctx));
            return 1;
        }
    printf("\nr(i, k) = ||grad of the loss k tokens ahead|| / ||grad of the own loss|| at a position's state,\n"
           "mean over i = 64 .. 120 (T = %d)\n\n", T_EVAL);
    printf("%6s  %14s  %14s  %14s\n", "k", "SPS input x_i", "SPS predict p_i", "Standard x_i");
    for (k = 0; k < N_K; k++) printf("%6d  %14.4g  %14.4g  %14.4g\n", ks[k], rx[0][k], rp[0][k], rx[1][k]);
    for (v = 0; v < 2; v++) lattn_tf_free(&ctx, &m[v]);
    lattn_ctx_free(&ctx);
    return 0;
}
