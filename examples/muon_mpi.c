/* muon_mpi: the sharded Muon step across real processes, its collectives on MPI.

       make muon-mpi          (mpicc, then mpirun -np 4 --oversubscribe)

   Every rank holds torch.chunk's row shard of each matrix of a small Laplace-shaped model (four
   layers of W_qkvg, W_o, W_12, W_3 at 1/32 of the 3B widths) with its gradient and momentum, and runs
   three Muon steps with lattn_muon_step_sharded, once with the two all_to_all exchanges (owners by
   layer) and once with the naive gather + broadcast. Rank 0 then gathers the shards and checks them
   byte for byte against the one-device step (lattn_muon_step) on the whole matrices; every rank
   prints the bytes it sent and received, and rank 0 the seed's figures at the 3B shapes from
   lattn_muon_traffic_of. Exit status 0 only if every comparison holds. */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYERS 4
#define NM (4 * LAYERS)
#define STEPS 3

/* ---- the callbacks: MPI collectives on bytes; MPI's errors become LATTN_E_IO (MPI_ERRORS_RETURN) */
/* k count arrays of R sizes as one block of ints for MPI (NULL if a size exceeds INT_MAX or memory
   is short: *st says which). */
static int *to_ints(MPI_Comm comm, int k, const size_t *const *a, lattn_status *st) {
    int R, r, j;
    int *c;
    MPI_Comm_size(comm, &R);
    c = (int *)malloc((size_t)k * (size_t)R * sizeof(int));
    *st = c ? LATTN_OK : LATTN_E_NOMEM;
    for (j = 0; c && j < k; j++)
        for (r = 0; r < R; r++) {
            if (a[j][r] > INT_MAX) *st = LATTN_E_OVERFLOW;
            c[j * R + r] = (int)a[j][r];
        }
    if (*st != LATTN_OK) {
        free(c);
        return NULL;
    }
    return c;
}
static lattn_status mpi_all_to_all(void *user, const void *send, const size_t *send_bytes, const size_t *send_off, void *recv,
                                   const size_t *recv_bytes, const size_t *recv_off) {
    MPI_Comm comm = *(MPI_Comm *)user;
    const size_t *const a[4] = { send_bytes, send_off, recv_bytes, recv_off };
    lattn_status st;
    int *c = to_ints(comm, 4, a, &st), R, rc;
    if (!c) return st;
    MPI_Comm_size(comm, &R);
    rc = MPI_Alltoallv(send, c, c + R, MPI_BYTE, recv, c + 2 * R, c + 3 * R, MPI_BYTE, comm);
    free(c);
    return rc == MPI_SUCCESS ? LATTN_OK : LATTN_E_IO;
}
static lattn_status mpi_all_gather(void *user, void *buf, const size_t *bytes, const size_t *off) {
    MPI_Comm comm = *(MPI_Comm *)user;
    const size_t *const a[2] = { bytes, off };
    lattn_status st;
    int *c = to_ints(comm, 2, a, &st), R, rc;
    if (!c) return st;
    MPI_Comm_size(comm, &R);
    rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, buf, c, c + R, MPI_BYTE, comm);
    free(c);
    return rc == MPI_SUCCESS ? LATTN_OK : LATTN_E_IO;
}
static lattn_status mpi_broadcast(void *user, void *buf, size_t bytes, int root) {
    if (bytes > INT_MAX) return LATTN_E_OVERFLOW;
    return MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, *(MPI_Comm *)user) == MPI_SUCCESS ? LATTN_OK : LATTN_E_IO;
}
static lattn_status mpi_all_reduce(void *user, double *buf, size_t n) {
    if (n > INT_MAX) return LATTN_E_OVERFLOW;
    return MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_DOUBLE, MPI_SUM, *(MPI_Comm *)user) == MPI_SUCCESS ? LATTN_OK : LATTN_E_IO;
}

/* The model's matrices: the 3B Laplace layer's shapes divided by 32 (spec muon.md §3). */
static void describe(lattn_mat_desc *d, int64_t div) {
    int l;
    for (l = 0; l < LAYERS; l++) {
        const int64_t r[4] = { 9216 / div, 3072 / div, 16384 / div, 3072 / div }, c[4] = { 3072 / div, 3072 / div, 3072 / div, 8192 / div };
        int k;
        for (k = 0; k < 4; k++) {
            d[4 * l + k].rows = r[k];
            d[4 * l + k].cols = c[k];
            d[4 * l + k].layer = l;
        }
    }
}
/* Matrix i's start weights (s = 0) or step s's gradient, the same on every rank. */
static void fill(const lattn_mat_desc *d, int i, int s, float *x) {
    lattn_rng r = lattn_rng_seed(1000u * (unsigned)s + (unsigned)i + 7u);
    lattn_rng_fill_normal(&r, x, (size_t)(d[i].rows * d[i].cols), 0.0f, s == 0 ? 0.02f : 1.0f);
}

int main(int argc, char **argv) {
    static const char *const scheme_name[2] = { "two all_to_all (owners by layer)", "gather + broadcast (naive)" };
    MPI_Comm world = MPI_COMM_WORLD;
    lattn_comm comm;
    lattn_ctx ctx;
    lattn_mat_desc d[NM];
    lattn_muon_config c = lattn_muon_default();
    int owner[NM], rank, R, sc, i, s, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &R);
    lattn_ctx_init(&ctx);
    ctx.n_threads = 1;
    comm.rank = rank;
    comm.size = R;
    comm.user = &world;
    comm.all_to_all = mpi_all_to_all;
    comm.all_gather = mpi_all_gather;
    comm.broadcast = mpi_broadcast;
    comm.all_reduce = mpi_all_reduce;
    c.weight_decay = 0.01;
    describe(d, 32);
    if (lattn_muon_plan(&ctx, R, NM, d, LATTN_OWNER_BY_LAYER, owner) != LATTN_OK) {
        fprintf(stderr, "plan: %s\n", lattn_ctx_error(&ctx));
        MPI_Abort(world, 1);
    }
    if (rank == 0) printf("muon_mpi: %d MPI ranks, %d matrices (4 layers of the 3B Laplace shapes / 32), %d steps, %s\n", R, NM, STEPS, lattn_build_info());
    for (sc = 0; sc < 2; sc++) {
        const lattn_muon_scheme scheme = sc ? LATTN_MUON_GATHER : LATTN_MUON_A2A;
        float *W[NM], *G[NM], *M[NM], *full = (float *)malloc((size_t)(d[2].rows * d[2].cols) * sizeof(float));   /* W_12: the largest */
        lattn_muon_traffic tr, want;
        uint64_t sent = 0, recv = 0;
        int same = 1;
        for (i = 0; i < NM; i++) {   /* this rank's rows */
            int64_t start, len;
            lattn_shard_rows(d[i].rows, R, rank, &start, &len);
            W[i] = (float *)malloc((size_t)(len * d[i].cols + 1) * sizeof(float));
            G[i] = (float *)malloc((size_t)(len * d[i].cols + 1) * sizeof(float));
            M[i] = (float *)calloc((size_t)(len * d[i].cols + 1), sizeof(float));
            if (!full || !W[i] || !G[i] || !M[i]) MPI_Abort(world, 1);
            fill(d, i, 0, full);
            memcpy(W[i], full + start * d[i].cols, (size_t)(len * d[i].cols) * sizeof(float));
        }
        for (s = 1; s <= STEPS; s++) {
            lattn_status st;
            for (i = 0; i < NM; i++) {
                int64_t start, len;
                lattn_shard_rows(d[i].rows, R, rank, &start, &len);
                fill(d, i, s, full);
                memcpy(G[i], full + start * d[i].cols, (size_t)(len * d[i].cols) * sizeof(float));
            }
            st = lattn_muon_step_sharded(&ctx, &c, &comm, NM, d, owner, scheme, W, G, M, &tr);
            if (st != LATTN_OK) {
                fprintf(stderr, "rank %d: %s\n", rank, lattn_ctx_error(&ctx));
                MPI_Abort(world, 1);
            }
            sent += tr.sent[0] + tr.sent[1];
            recv += tr.recv[0] + tr.recv[1];
        }
        lattn_muon_traffic_of(&ctx, &c, R, rank, NM, d, owner, scheme, &want);
        failures += memcmp(&tr, &want, sizeof tr) != 0;
        if (rank == 0) printf("\n%s:\n", scheme_name[sc]);
        MPI_Barrier(world);
        for (i = 0; i < R; i++) {   /* one line per rank, in rank order */
            if (i == rank)
                printf("  rank %d: sent %9llu B, received %9llu B over %d steps; NS5 %.3f GFLOP a step; counters %s the closed form\n", rank,
                       (unsigned long long)sent, (unsigned long long)recv, STEPS, tr.ns_flops / 1e9, memcmp(&tr, &want, sizeof tr) == 0 ? "=" : "!=");
            fflush(stdout);
            MPI_Barrier(world);
        }
        for (i = 0; i < NM; i++) {   /* every rank's rows to rank 0, compared with the one-device step */
            int *cnt = (int *)malloc(2 * (size_t)R * sizeof(int)), r;
            float *w = (float *)malloc((size_t)(d[i].rows * d[i].cols) * sizeof(float));
            int64_t start, len;
            if (!cnt || !w) MPI_Abort(world, 1);
            for (r = 0; r < R; r++) {
                lattn_shard_rows(d[i].rows, R, r, &start, &len);
                cnt[r] = (int)(len * d[i].cols);
                cnt[R + r] = (int)(start * d[i].cols);
            }
            lattn_shard_rows(d[i].rows, R, rank, &start, &len);
            MPI_Gatherv(W[i], (int)(len * d[i].cols), MPI_FLOAT, w, cnt, cnt + R, MPI_FLOAT, 0, world);
            if (rank == 0) {
                float *w1 = (float *)malloc((size_t)(d[i].rows * d[i].cols) * sizeof(float));
                float *g1 = (float *)malloc((size_t)(d[i].rows * d[i].cols) * sizeof(float));
                float *m1 = (float *)calloc((size_t)(d[i].rows * d[i].cols), sizeof(float));
                if (!w1 || !g1 || !m1) MPI_Abort(world, 1);
                fill(d, i, 0, w1);
                for (s = 1; s <= STEPS; s++) {
                    fill(d, i, s, g1);
                    if (lattn_muon_step(&ctx, &c, d[i].rows, d[i].cols, w1, g1, m1) != LATTN_OK) MPI_Abort(world, 1);
                }
                same &= memcmp(w, w1, (size_t)(d[i].rows * d[i].cols) * sizeof(float)) == 0;
                free(w1);
                free(g1);
                free(m1);
            }
            free(cnt);
            free(w);
        }
        if (rank == 0) printf("  weights after %d steps, gathered: %s to the one-device lattn_muon_step\n", STEPS, same ? "bit-identical" : "DIFFERENT");
        failures += !same;
        for (i = 0; i < NM; i++) {
            free(W[i]);
            free(G[i]);
            free(M[i]);
        }
        free(full);
    }
    if (rank == 0) {   /* the seed's figures, from the plan alone */
        lattn_mat_desc big[96];
        lattn_muon_traffic t;
        int own[96], l, k, r;
        uint64_t most = 0;
        c.ns_mode = LATTN_NS_BF16;
        for (l = 0; l < 24; l++)
            for (k = 0; k < 4; k++) {
                const int64_t rr[4] = { 9216, 3072, 16384, 3072 }, cc[4] = { 3072, 3072, 3072, 8192 };
                big[4 * l + k].rows = rr[k];
                big[4 * l + k].cols = cc[k];
                big[4 * l + k].layer = l;
            }
        lattn_muon_traffic_of(&ctx, &c, 64, 0, 96, big, NULL, LATTN_MUON_GATHER, &t);
        printf("\nthe Laplace 3B Muon set (96 matrices, bf16) at 64 ranks, from lattn_muon_traffic_of:\n");
        printf("  naive: the root gathers %.2f GB and broadcasts %.2f GB = %.2f GB per step\n", t.whole[0] / 1e9, t.whole[1] / 1e9,
               (t.whole[0] + t.whole[1]) / 1e9);
        lattn_muon_plan(&ctx, 64, 96, big, LATTN_OWNER_BY_LAYER, own);
        for (r = 0; r < 64; r++) {
            lattn_muon_traffic_of(&ctx, &c, 64, r, 96, big, own, LATTN_MUON_A2A, &t);
            if (t.whole[0] + t.whole[1] > most) most = t.whole[0] + t.whole[1];
        }
        printf("  two all_to_all: an owner receives and returns %.2f GB (1/%.0f of the naive root)\n", most / 1e9, 10871635968.0 / (double)most);
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, world);
    if (rank == 0) printf("%s\n", failures ? "FAILED" : "ok");
    lattn_ctx_free(&ctx);
    MPI_Finalize();
    return failures ? 1 : 0;
}
