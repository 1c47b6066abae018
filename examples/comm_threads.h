/* comm_threads.h: an in-process communicator for lattn_comm. R ranks run as R threads of one
   process; each collective is a rendezvous (publish the buffers, barrier, copy, barrier), so the
   sharded Muon step runs exactly the code it runs across processes, and its results can be
   compared byte for byte with the one-device step. Used by the tests and the benchmark; a model for
   writing the callbacks on another engine (examples/muon_mpi.c does it on MPI).

       lattn_emu e;
       lattn_emu_init(&e, R);              R <= LATTN_EMU_MAX
       e.fail_call = 2;                     optional: the third collective fails on every rank
       lattn_emu_run(&e, body, arg);        body(comm, arg) on R threads, comm->rank = 0 .. R-1
       lattn_emu_free(&e);

   Define _POSIX_C_SOURCE 200112L (or more) before the first system header; link with -pthread. */
#ifndef LATTN_COMM_THREADS_H
#define LATTN_COMM_THREADS_H
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LATTN_EMU_MAX 64
typedef struct lattn_emu_slot {          /* what a rank published for the collective in progress */
    const void *send;
    const size_t *bytes, *off;
    void *buf;
    double *sum;
} lattn_emu_slot;
typedef struct lattn_emu {
    int R;
    int fail_call;                       /* the collective (0, 1, ...) that fails on every rank; -1: none */
    lattn_status fail_status;            /* what it returns (LATTN_E_IO) */
    pthread_barrier_t bar;
    lattn_emu_slot slot[LATTN_EMU_MAX];
} lattn_emu;
typedef struct lattn_emu_rank {
    lattn_emu *e;
    int rank, calls;
    lattn_comm comm;
    void (*body)(const lattn_comm *comm, void *arg);
    void *arg;
} lattn_emu_rank;

/* The failure injection: the same call on every rank, before anything is published. */
static int lattn_emu_fails(lattn_emu_rank *me) {
    return me->calls++ == me->e->fail_call;
}
static lattn_status lattn_emu_all_to_all(void *user, const void *send, const size_t *send_bytes, const size_t *send_off,
                                         void *recv, const size_t *recv_bytes, const size_t *recv_off) {
    lattn_emu_rank *me = (lattn_emu_rank *)user;
    lattn_emu *e = me->e;
    lattn_status st = LATTN_OK;
    int r;
    if (lattn_emu_fails(me)) return e->fail_status;
    e->slot[me->rank].send = send;
    e->slot[me->rank].bytes = send_bytes;
    e->slot[me->rank].off = send_off;
    pthread_barrier_wait(&e->bar);
    for (r = 0; r < e->R; r++) {         /* rank r's part for me */
        const lattn_emu_slot *s = &e->slot[r];
        if (s->bytes[me->rank] != recv_bytes[r]) st = LATTN_E_SHAPE;
        else if (recv_bytes[r]) memcpy((char *)recv + recv_off[r], (const char *)s->send + s->off[me->rank], recv_bytes[r]);
    }
    pthread_barrier_wait(&e->bar);       /* nobody frees a send buffer still being read */
    return st;
}
static lattn_status lattn_emu_all_gather(void *user, void *buf, const size_t *bytes, const size_t *off) {
    lattn_emu_rank *me = (lattn_emu_rank *)user;
    lattn_emu *e = me->e;
    int r;
    if (lattn_emu_fails(me)) return e->fail_status;
    e->slot[me->rank].buf = buf;
    pthread_barrier_wait(&e->bar);
    for (r = 0; r < e->R; r++)
        if (r != me->rank && bytes[r]) memcpy((char *)buf + off[r], (const char *)e->slot[r].buf + off[r], bytes[r]);
    pthread_barrier_wait(&e->bar);
    return LATTN_OK;
}
static lattn_status lattn_emu_broadcast(void *user, void *buf, size_t bytes, int root) {
    lattn_emu_rank *me = (lattn_emu_rank *)user;
    lattn_emu *e = me->e;
    if (lattn_emu_fails(me)) return e->fail_status;
    e->slot[me->rank].buf = buf;
    pthread_barrier_wait(&e->bar);
    if (me->rank != root && bytes) memcpy(buf, e->slot[root].buf, bytes);
    pthread_barrier_wait(&e->bar);
    return LATTN_OK;
}
/* The sum in rank order, the same bits on every rank. */
static lattn_status lattn_emu_all_reduce(void *user, double *buf, size_t n) {
    lattn_emu_rank *me = (lattn_emu_rank *)user;
    lattn_emu *e = me->e;
    double *acc = (double *)calloc(n ? n : 1, sizeof(double));
    size_t i;
    int r;
    if (lattn_emu_fails(me)) {
        free(acc);
        return e->fail_status;
    }
    e->slot[me->rank].sum = buf;
    pthread_barrier_wait(&e->bar);
    for (r = 0; acc && r < e->R; r++)
        for (i = 0; i < n; i++) acc[i] += e->slot[r].sum[i];
    pthread_barrier_wait(&e->bar);
    if (!acc) return LATTN_E_NOMEM;
    memcpy(buf, acc, n * sizeof(double));
    free(acc);
    return LATTN_OK;
}
static void *lattn_emu_thread(void *p) {
    lattn_emu_rank *me = (lattn_emu_rank *)p;
    me->body(&me->comm, me->arg);
    return NULL;
}
static void lattn_emu_init(lattn_emu *e, int R) {
    memset(e, 0, sizeof *e);
    e->R = R < 1 ? 1 : R > LATTN_EMU_MAX ? LATTN_EMU_MAX : R;
    e->fail_call = -1;
    e->fail_status = LATTN_E_IO;
    pthread_barrier_init(&e->bar, NULL, (unsigned)e->R);
}
static void lattn_emu_free(lattn_emu *e) {
    pthread_barrier_destroy(&e->bar);
}
/* body(comm, arg) on R threads (rank 0 on the calling one). A test helper: it aborts if a thread
   cannot be started, since the ranks already running would wait for it forever. */
static void lattn_emu_run(lattn_emu *e, void (*body)(const lattn_comm *comm, void *arg), void *arg) {
    lattn_emu_rank rk[LATTN_EMU_MAX];
    pthread_t th[LATTN_EMU_MAX];
    int r, ok = 1;
    for (r = 0; r < e->R; r++) {
        rk[r].e = e;
        rk[r].rank = r;
        rk[r].calls = 0;
        rk[r].body = body;
        rk[r].arg = arg;
        rk[r].comm.rank = r;
        rk[r].comm.size = e->R;
        rk[r].comm.user = &rk[r];
        rk[r].comm.all_to_all = lattn_emu_all_to_all;
        rk[r].comm.all_gather = lattn_emu_all_gather;
        rk[r].comm.broadcast = lattn_emu_broadcast;
        rk[r].comm.all_reduce = lattn_emu_all_reduce;
    }
    for (r = 1; r < e->R && ok; r++) ok = pthread_create(&th[r], NULL, lattn_emu_thread, &rk[r]) == 0;
    if (!ok) {                           /* a rank is missing: the others would wait forever */
        fprintf(stderr, "lattn_emu_run: cannot start thread %d of %d\n", r - 1, e->R);
        abort();
    }
    lattn_emu_thread(&rk[0]);            /* rank 0 on the calling thread */
    for (r = 1; r < e->R; r++) pthread_join(th[r], NULL);
}
#endif
