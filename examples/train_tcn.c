/* train_tcn: the seed article's TCN demo trained in C, against the article's own training run.

   The article (shared/seeds/001, train_demo.py) trains DemoModel, Linear(2, 32) -> 4 dilated causal
   conv blocks (k = 3, dilations 1, 2, 4, 8, LayerNorm, GELU, residual) -> Linear(32, 1) on the last
   step, to predict x[:, -1, 0] + x[:, -1, 1] from x ~ N(0, 1) of shape (32, 16, 2), with MSE and
   torch.optim.AdamW(lr = 1e-3). tests/external/grad/tcn_demo_train_0.safetensors holds its initial
   weights, the data of its first 20 steps, the losses and the weights after 20 updates of a float64
   run of that code. This program loads the same weights, takes the same 20 steps in float32
   (lattn_tcn_demo_forward, lattn_tcn_demo_backward, AdamW through lattn_optim over the model's
   arena; the learning rate constant and no clipping, as in the article), and prints its losses
   next to PyTorch's. The article's later batches are not stored, so it redraws them: PyTorch's
   generator (torch_rng.h: MT19937 seeded by torch.manual_seed(0)) redraws the article's initial
   weights bit for bit and its 20 stored batches to within float32 rounding of the Box-Muller
   transform, and so gives batches 21-200 too. It trains on to step 200 and compares every loss with
   the article's own float32 script (loss_f32_script). The seed is the file's torch_manual_seed.

   Usage: train_tcn [case.safetensors]; exit status 1 when a loss or a final weight is more than
   1e-5 (relative) from the float64 run, a loss of the 200 steps is more than 1e-4 (relative) from
   the article's float32 script, or the loss falls less than 10x over the 200 steps. */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "torch_rng.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define B 32
#define T 16
#define STEPS_STORED 20
#define STEPS 200

/* One training step's loss and gradients: MSE of the prediction against the target, the model in
   float32 (lattn_tcn_demo_forward, lattn_tcn_demo_backward). */
static double loss_and_grad(lattn_ctx *ctx, const lattn_tcn_demo *m, const float *x, const double *target, float *grad) {
    float pred[B], dout[B];
    double loss = 0;
    int b;
    if (lattn_tcn_demo_forward(ctx, m, B, T, x, pred) != LATTN_OK) return NAN;
    for (b = 0; b < B; b++) {
        loss += (pred[b] - target[b]) * (pred[b] - target[b]) / B;
        dout[b] = (float)(2.0 * (pred[b] - target[b]) / B);   /* d(mean squared error) / d pred */
    }
    if (lattn_tcn_demo_backward(ctx, m, B, T, x, dout, grad, NULL) != LATTN_OK) return NAN;
    return loss;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/external/grad/tcn_demo_train_0.safetensors";
    lattn_ctx ctx;
    lattn_st_file f;
    lattn_tcn_demo m;
    lattn_optim o;
    const lattn_st_tensor *tx, *tt, *tl, *ts;
    float *x, *grad, xs[B * T * 2];
    double *target, *want_loss, *script, worst_loss = 0, worst_w = 0, worst_script = 0, target_s[B], redraw_x = 0;
    torch_rng g;
    clock_t t0;
    double secs, first = 0, last = 0;
    size_t same_w, n_drawn;
    uint32_t seed;
    int ok;
    int64_t i;
    int s, b;
    lattn_ctx_init(&ctx);
    if (lattn_st_load(&ctx, path, &f) != LATTN_OK || lattn_tcn_demo_init_st(&ctx, &m, &f, "") != LATTN_OK ||
        lattn_optim_init(&ctx, &o, m.tensors, m.n_tensors, 0) != LATTN_OK) {
        fprintf(stderr, "train_tcn: %s\n", lattn_ctx_error(&ctx));
        return 2;
    }
    for (i = 0; i < m.n_tensors; i++) o.rules[i].decay = 1;   /* AdamW(model.parameters()): every tensor decays */
    tx = lattn_st_find(&f, "x"); tt = lattn_st_find(&f, "target"); tl = lattn_st_find(&f, "loss"); ts = lattn_st_find(&f, "loss_f32_script");
    if (!tx || !tt || !tl || !ts || tx->count != (size_t)STEPS_STORED * B * T * 2 || tt->count != (size_t)STEPS_STORED * B ||
        tl->count != STEPS_STORED || ts->count != STEPS) {
        fprintf(stderr, "train_tcn: %s lacks x, target, loss or loss_f32_script of the expected shapes\n", path);
        return 2;
    }
    x = (float *)malloc(tx->count * sizeof(float));
    target = (double *)malloc(tt->count * sizeof(double));
    want_loss = (double *)malloc(STEPS_STORED * sizeof(double));
    script = (double *)malloc(STEPS * sizeof(double));
    grad = (float *)malloc(m.n_params * sizeof(float));
    if (!x || !target || !want_loss || !script || !grad) return 2;
    lattn_st_to_f32(&ctx, tx, x, tx->count);
    lattn_st_to_f64(&ctx, tt, target, tt->count);
    lattn_st_to_f64(&ctx, tl, want_loss, STEPS_STORED);
    lattn_st_to_f64(&ctx, ts, script, STEPS);
    printf("train_tcn: the article's DemoModel (%zu parameters), batch %d x %d steps x 2 features, MSE, AdamW lr 1e-3\n\n", m.n_params, B, T);
    seed = lattn_st_meta(&f, "torch_manual_seed") ? (uint32_t)strtoul(lattn_st_meta(&f, "torch_manual_seed"), NULL, 10) : 0;
    same_w = torch_demo_init(&g, seed, &m, &n_drawn);       /* torch.manual_seed(seed), then DemoModel() */
    for (s = 0; s < STEPS_STORED; s++) {                     /* the stored batches, redrawn */
        torch_randn(&g, xs, (size_t)B * T * 2);
        for (i = 0; i < B * T * 2; i++) redraw_x = fmax(redraw_x, fabs((double)xs[i] - x[(size_t)s * B * T * 2 + i]));
    }
    printf("PyTorch's generator redraws the initial weights (%zu of %zu values identical) and the 20 stored batches\n"
           "(largest difference %.2e: the Box-Muller transform's float32 rounding), so batches 21-%d follow it\n\n", same_w, n_drawn,
           redraw_x, STEPS);
    printf("step   lattn float32    PyTorch float64   rel. difference\n");
    for (s = 0; s < STEPS_STORED; s++) {                     /* the article's batches */
        const double loss = loss_and_grad(&ctx, &m, x + (size_t)s * B * T * 2, target + (size_t)s * B, grad);
        const double rel = fabs(loss - want_loss[s]) / want_loss[s];
        const double rel_s = fabs(loss - script[s]) / script[s];
        if (s == 0) first = loss;
        if (!(rel <= worst_loss)) worst_loss = rel;              /* NaN counts */
        if (!(rel_s <= worst_script)) worst_script = rel_s;
        if (s < 5 || s % 5 == 4) printf("%4d   %.10f     %.10f      %.2e\n", s + 1, loss, want_loss[s], rel);
        if (lattn_optim_step(&ctx, &o, 1.0, grad) != LATTN_OK) { fprintf(stderr, "train_tcn: %s\n", lattn_ctx_error(&ctx)); return 2; }
    }
    for (i = 0; i < m.n_tensors; i++) {                      /* the weights after 20 updates */
        char name[96];
        const lattn_st_tensor *w;
        double num = 0, den = 0, *wv;
        size_t k;
        snprintf(name, sizeof name, "final.%s", m.tensors[i].name);
        w = lattn_st_find(&f, name);
        if (!w || w->count != m.tensors[i].count || !(wv = (double *)malloc(w->count * sizeof(double)))) return 2;
        lattn_st_to_f64(&ctx, w, wv, w->count);
        for (k = 0; k < w->count; k++) {
            num += (m.tensors[i].data[k] - wv[k]) * (m.tensors[i].data[k] - wv[k]);
            den += wv[k] * wv[k];
        }
        if (!(sqrt(num / den) <= worst_w)) worst_w = sqrt(num / den);
        free(wv);
    }
    printf("\nafter 20 updates: losses within %.2e, every weight tensor within %.2e (relative RMS) of the float64 run\n", worst_loss, worst_w);
    printf("\nsteps 21-%d on the redrawn batches, the article's float32 script alongside:\n", STEPS);
    printf("step   lattn float32   article float32   rel. difference\n");
    t0 = clock();
    for (s = STEPS_STORED; s < STEPS; s++) {
        double loss;
        double rel_s;
        torch_randn(&g, xs, (size_t)B * T * 2);
        for (b = 0; b < B; b++) target_s[b] = (double)(xs[(b * T + T - 1) * 2] + xs[(b * T + T - 1) * 2 + 1]);   /* float32, as torch adds */
        loss = loss_and_grad(&ctx, &m, xs, target_s, grad);
        rel_s = fabs(loss - script[s]) / script[s];
        if (!(rel_s <= worst_script)) worst_script = rel_s;
        if (s % 50 == 49) {                                  /* every 50 steps, as the article prints */
            const double el = (double)(clock() - t0) / CLOCKS_PER_SEC;
            printf("%4d   %.8f      %.8f        %.2e   %.0f tokens/s\n", s + 1, loss, script[s], rel_s, (double)(s + 1 - STEPS_STORED) * B * T / el);
            fflush(stdout);
        }
        last = loss;
        if (lattn_optim_step(&ctx, &o, 1.0, grad) != LATTN_OK) { fprintf(stderr, "train_tcn: %s\n", lattn_ctx_error(&ctx)); return 2; }
    }
    secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("\n%d steps in %.3f s of CPU time (%.2f ms a step, %.0f tokens/s, forward + backward + AdamW)\n", STEPS - STEPS_STORED, secs,
           1e3 * secs / (STEPS - STEPS_STORED), (double)(STEPS - STEPS_STORED) * B * T / secs);
    ok = worst_loss <= 1e-5 && worst_w <= 1e-5 && same_w == n_drawn && worst_script <= 1e-4 && last * 10 <= first;
    printf("the loss fell %.0fx from its start (%.4f to %.4f)\n", first / last, first, last);
    printf("all %d losses within %.2e (relative) of the article's float32 script\n\n%s\n", STEPS, worst_script,
           ok ? "ok" : "FAIL: more than 1e-5 from the float64 run, the initial weights not redrawn, more than 1e-4 from the float32 script, "
                       "or the loss fell less than 10x");
    free(x); free(target); free(want_loss); free(script); free(grad);
    lattn_optim_free(&ctx, &o);
    lattn_tcn_demo_free(&ctx, &m);
    lattn_st_free(&ctx, &f);
    lattn_ctx_free(&ctx);
    return ok ? 0 : 1;
}
