/* The chunk-size experiment behind the Trainium port of the Laplace model (spec sbuf_tiler.md §6):
   the Laplace mixer (Simple GLA with RetNet's fixed decays; T = 2048, H = 16, dk = 96, dv = 192)
   runs forward through lattn_la_chunk and forward + backward through lattn_la_chunk_backward on
   trn2 and trn1 for C in {32, 64, 128, 256}, in the chunk-parallel schedule of the PyTorch/XLA port
   and in the streaming schedule, and the table is printed from the tiler's counters of each run.
       cc -std=c99 -O2 -march=native -I.. tiler_sweep.c -lm -o tiler_sweep */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>

enum { T = 2048, H = 16, DK = 96, DV = 192 };

static void verdicts(const lattn_tiler_stats *s, const lattn_dev_profile *p, char *out, size_t cap) {
    if (s->spill_bytes > 0)
        snprintf(out, cap, "spills %.1f MiB", (double)s->spill_bytes / 1048576.0);
    else
        snprintf(out, cap, "fits (%.1f of %.0f KiB)", (double)s->sbuf_peak_bytes_per_partition / 1024.0,
                 (double)p->sbuf_bytes_per_partition / 1024.0);
}

int main(void) {
    static const int Cs[4] = { 32, 64, 128, 256 };
    const lattn_dev_profile *base[2];
    float *q = (float *)malloc(sizeof(float) * T * H * DK), *k = (float *)malloc(sizeof(float) * T * H * DK);
    float *v = (float *)malloc(sizeof(float) * T * H * DV), *o = (float *)malloc(sizeof(float) * T * H * DV);
    float *ht = (float *)malloc(sizeof(float) * H * DK * DV), gam[H];
    float *dq = (float *)malloc(sizeof(float) * T * H * DK), *dk = (float *)malloc(sizeof(float) * T * H * DK);
    float *dv = (float *)malloc(sizeof(float) * T * H * DV);
    lattn_rng r = lattn_rng_seed(5);
    lattn_la_args a = {0};
    int pi, ci, sched, rc = 0;
    base[0] = lattn_profile_trn2(); base[1] = lattn_profile_trn1();
    lattn_rng_fill_normal(&r, q, T * H * DK, 0, 1); lattn_rng_fill_normal(&r, k, T * H * DK, 0, 1);
    lattn_rng_fill_normal(&r, v, T * H * DV, 0, 1);
    lattn_retention_decay(H, gam);
    a.B = 1; a.T = T; a.H = H; a.K = DK; a.V = DV; a.q = q; a.k = k; a.v = v; a.o = o; a.ht = ht; a.g_gamma = gam;

    printf("Laplace mixer forward and backward, T=%d, H=%d, dk=%d, dv=%d, fixed decays, one NeuronCore (1 thread)\n\n", T, H, DK, DV);
    printf("model (spec sbuf_tiler.md, [model] = calibrated, not measured):\n"
           "  streams (q, k, v, o, dO, dq, dk, dv rows and their transposes) in bf16: 2 bytes per element in DMA and SBUF;\n"
           "  scores, decay masks, states, checkpoints and U = dL/dS fp32; SBUF per partition: the column allocator, 64-byte aligned;\n"
           "  over capacity a tile spills to HBM and every engine use of it moves its bytes (refill);\n"
           "  graph limit [model]: %llu instructions or %llu unrolled chunk bodies per layer, forward AND backward:\n"
           "  the fwd+bwd columns are one lattn_la_chunk_backward call (the forward with its checkpoints F14, then\n"
           "  the reverse chunk loop of spec §5.3); the backward is tiled for chunks of at most 128 tokens.\n\n",
           (unsigned long long)base[0]->graph_limit_instr, (unsigned long long)base[0]->graph_limit_unrolled);
    for (sched = LATTN_SCHED_CHUNK_PARALLEL; sched >= LATTN_SCHED_STREAMING; sched--) {
        printf("%s schedule%s\n", sched ? "chunk-parallel" : "streaming",
               sched ? " (the port's: every chunk's scores resident, then the state chain)" : " (chunk by chunk, nothing kept)");
        printf("%-5s %4s %6s %6s %12s %10s %5s %12s %12s %12s %12s  %-26s %6s %12s %5s  %s\n", "prof", "C", "chunks", "bodies",
               "instructions", "SBUF B/p", "PSUM", "spill B", "refill B", "HBM in B", "HBM out B", "SBUF verdict (forward)",
               "bodies", "instructions", "PSUM", "graph verdict (forward + backward)");
        for (pi = 0; pi < 2; pi++)
            for (ci = 0; ci < 4; ci++) {
                lattn_dev_profile prof = *base[pi];
                lattn_ctx ctx;
                lattn_la_grads g = {0};
                char sv[64];
                lattn_tiler_stats fw;
                int bw;
                lattn_ctx_init(&ctx);
                prof.spill = 1; prof.stream_bytes = 2;
                ctx.profile = &prof; ctx.n_threads = 1;
                a.schedule = sched;
                a.chunk = Cs[ci];
                if (lattn_la_chunk(&ctx, &a) != LATTN_OK) { printf("%s C=%d: %s\n", prof.name, Cs[ci], lattn_ctx_error(&ctx)); rc = 1; continue; }
                fw = ctx.stats;
                verdicts(&fw, &prof, sv, sizeof sv);
                memset(&ctx.stats, 0, sizeof ctx.stats);
                g.dout = o; g.dq = dq; g.dk = dk; g.dv = dv;
                bw = Cs[ci] <= 128;
                if (bw && lattn_la_chunk_backward(&ctx, &a, &g) != LATTN_OK) {
                    printf("%s C=%d backward: %s\n", prof.name, Cs[ci], lattn_ctx_error(&ctx));
                    rc = 1;
                    continue;
                }
                printf("%-5s %4d %6d %6llu %12llu %10llu %5llu %12llu %12llu %12llu %12llu  %-26s ", prof.name, Cs[ci],
                       (T + Cs[ci] - 1) / Cs[ci], (unsigned long long)fw.unrolled_steps, (unsigned long long)fw.instructions,
                       (unsigned long long)fw.sbuf_peak_bytes_per_partition, (unsigned long long)fw.psum_peak_banks,
                       (unsigned long long)fw.spill_bytes, (unsigned long long)fw.refill_bytes,
                       (unsigned long long)fw.dma_in_bytes, (unsigned long long)fw.dma_out_bytes, sv);
                if (!bw) printf("%6s %12s %5s  %s\n", "-", "-", "-", !sched ? "- (the backward is not tiled at C > 128)"
                                                                  : lattn_tiler_graph_overflow(&fw, &prof) ? "forward alone over the limit"
                                                                  : "forward within; the backward is not tiled at C > 128");
                else printf("%6llu %12llu %5llu  %s\n", (unsigned long long)ctx.stats.unrolled_steps, (unsigned long long)ctx.stats.instructions,
                            (unsigned long long)ctx.stats.psum_peak_banks,
                            !sched ? "- (a body per head and chunk)" : lattn_tiler_graph_overflow(&ctx.stats, &prof) ? "over the graph capacity" : "fits");
            }
        printf("\n");
    }
    printf("the GPU path: the same call on h100 and h200 (one CTA per head and 64-column value slice, shared memory\n"
           "%llu B per block enforced, bf16 streams, no spilling: a plan that does not fit is LATTN_E_SBUF_FULL)\n",
           (unsigned long long)lattn_profile_h100()->sbuf_bytes_per_partition);
    printf("%-5s %4s %6s %12s %12s %12s %12s\n", "prof", "C", "bodies", "instructions", "smem B", "HBM in B", "HBM out B");
    for (pi = 0; pi < 2; pi++)
        for (ci = 0; ci < 4; ci++) {
            lattn_dev_profile prof = pi ? *lattn_profile_h200() : *lattn_profile_h100();
            lattn_ctx ctx;
            lattn_ctx_init(&ctx);
            prof.stream_bytes = 2;
            ctx.profile = &prof; ctx.n_threads = 1;
            a.schedule = LATTN_SCHED_STREAMING;
            a.chunk = Cs[ci];
            if (lattn_la_chunk(&ctx, &a) != LATTN_OK) { printf("%-5s %4d  does not fit: %s\n", prof.name, Cs[ci], lattn_ctx_error(&ctx)); continue; }
            printf("%-5s %4d %6llu %12llu %12llu %12llu %12llu\n", prof.name, Cs[ci], (unsigned long long)ctx.stats.unrolled_steps,
                   (unsigned long long)ctx.stats.instructions, (unsigned long long)ctx.stats.sbuf_peak_bytes_per_partition,
                   (unsigned long long)ctx.stats.dma_in_bytes, (unsigned long long)ctx.stats.dma_out_bytes);
        }
    printf("\n");
    {   /* the other members on trn2 at C = 128, streaming: what the spec does not map */
        static const char *names[3] = { "linear attention (no gates)", "Simple GLA (a log gate per head and token)",
                                        "GLA (a log gate per key, spec §5.5)" };
        float *g = (float *)malloc(sizeof(float) * T * H * DK);
        int m;
        lattn_rng_fill_uniform(&r, g, T * H * DK, -0.2f, -0.001f);
        printf("other members, trn2, C = 128, streaming (bf16 streams): instructions per (head, chunk) body\n");
        for (m = 0; m < 3; m++) {
            lattn_dev_profile prof = *lattn_profile_trn2();
            lattn_la_args b = a;
            lattn_ctx ctx;
            lattn_ctx_init(&ctx);
            prof.stream_bytes = 2;
            ctx.profile = &prof; ctx.n_threads = 1;
            b.g_gamma = NULL; b.schedule = LATTN_SCHED_STREAMING;
            if (m == 1) b.g = g;
            if (m == 2) b.gk = g;
            b.chunk = 128;
            if (lattn_la_chunk(&ctx, &b) != LATTN_OK) { printf("  %s: %s\n", names[m], lattn_ctx_error(&ctx)); rc = 1; continue; }
            printf("  %-44s %6.2f per body (%llu over %llu bodies), %llu matmuls, PSUM %llu banks, SBUF %llu B/p\n", names[m],
                   (double)ctx.stats.instructions / (double)ctx.stats.unrolled_steps, (unsigned long long)ctx.stats.instructions,
                   (unsigned long long)ctx.stats.unrolled_steps, (unsigned long long)ctx.stats.matmuls,
                   (unsigned long long)ctx.stats.psum_peak_banks, (unsigned long long)ctx.stats.sbuf_peak_bytes_per_partition);
        }
        free(g);
        printf("\n");
    }
    printf("reading it (the seed's three findings, from the counters): at C = 64 the forward alone has 32 chunk bodies,\n"
           "within the limit of 48, but forward + backward has 64 bodies and 72 instructions per head and chunk (68 of\n"
           "spec §5.3 and the chunk-parallel schedule's 4): over the graph capacity; at C = 128 forward + backward is 32\n"
           "bodies and fits, with one token per partition; at C = 256 the resident scores (H·T·C·4 = 32 MiB) exceed\n"
           "SBUF and spill. The setup is 16 instructions per head here (each pass builds its own decay tiles, 7, and\n"
           "its state, 1; 17 with dh0 stored) where the spec's layer shares one setup of 9H + 2. The GPU profiles\n"
           "have no tiled backward: lattn_la_chunk_backward there is LATTN_E_UNSUPPORTED.\n"
           "Differences from the spec's model: phase B streams one head at a time, single-buffered (the spec\n"
           "double-buffers 8 heads in flight, +25.6-29.7 KB), so the C = 128 peak is lower than its 181,376 B; a tile\n"
           "that does not fit spills whole (the spec counts only the excess over capacity, 16.8 MiB on trn2).\n\n");
    printf("per-layer HBM traffic of the streaming forward (spec §5.4, bf16 activations, fp32 states):\n"
           "  loads Q, K, V %d B, store O %d B (the rows above: HBM in / out, plus the final state's %d B);\n"
           "  a backward call's forward also stores the per-chunk checkpoints (F14: 18,874,368 B at C = 128, 17\n"
           "  instructions per head and chunk), and its reverse loop loads Q, K, V, dO and the checkpoints and\n"
           "  stores dQ, dK, dV (%d B).\n",
           T * H * (DK + DK + DV) * 2, T * H * DV * 2, H * DK * DV * 4, T * H * (DK + DK + DV) * 2);
    free(q); free(k); free(v); free(o); free(ht); free(dq); free(dk); free(dv);
    return rc;
}
