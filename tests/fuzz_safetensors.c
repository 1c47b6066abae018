/* libFuzzer harness for the safetensors reader, with a replay mode for builds without libFuzzer.
     fuzz:    clang -fsanitize=fuzzer,address,undefined tests/fuzz_safetensors.c -lm
     replay:  cc -DLATTN_FUZZ_REPLAY -fsanitize=address,undefined tests/fuzz_safetensors.c -lm
              ./a.out DIR_OR_FILE ...
   Every input must either be rejected with a status or parse into tensors that convert, serialise
   and parse again to the same bytes. */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    lattn_ctx ctx;
    lattn_st_file f, g;
    lattn_st_entry *e;
    const char **meta;
    unsigned char *buf;
    size_t n;
    int64_t i;
    lattn_ctx_init(&ctx);
    if (lattn_st_parse(&ctx, data, size, &f) != LATTN_OK) return 0;
    e = (lattn_st_entry *)calloc((size_t)f.n_tensors + 1, sizeof *e);
    meta = (const char **)calloc(2 * (size_t)f.n_meta + 1, sizeof *meta);
    for (i = 0; i < f.n_tensors; i++) {
        const lattn_st_tensor *t = &f.tensors[i];
        double *v = (double *)malloc((t->count ? t->count : 1) * sizeof(double));
        if (lattn_st_to_f64(&ctx, t, v, t->count) != LATTN_OK) abort();
        free(v);
        e[i].name = t->name; e[i].dtype = t->dtype; e[i].ndim = t->ndim; e[i].shape = t->shape; e[i].data = t->data;
    }
    for (i = 0; i < f.n_meta; i++) { meta[2 * i] = f.meta_keys[i]; meta[2 * i + 1] = f.meta_values[i]; }
    /* data order in the file may differ from header order: the writer lays tensors out in entry
       order, so compare the re-serialised file with its own re-parse */
    if (lattn_st_serialize(&ctx, e, f.n_tensors, meta, f.n_meta, &buf, &n) == LATTN_OK) {
        if (lattn_st_parse(&ctx, buf, n, &g) != LATTN_OK || g.n_tensors != f.n_tensors || g.n_meta != f.n_meta) abort();
        for (i = 0; i < f.n_tensors; i++) {
            const lattn_st_tensor *t = lattn_st_find(&g, f.tensors[i].name);
            if (!t || t->count != f.tensors[i].count ||
                memcmp(t->data, f.tensors[i].data, t->count * lattn_dtype_size(t->dtype)) != 0) abort();
        }
        lattn_st_free(&ctx, &g);
        lattn_free(&ctx, buf);
    }
    free(e); free((void *)meta);
    lattn_st_free(&ctx, &f);
    return 0;
}

#ifdef LATTN_FUZZ_REPLAY
#include <dirent.h>
static int replay_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    long len;
    unsigned char *b;
    if (!fp) return 0;
    fseek(fp, 0, SEEK_END); len = ftell(fp); fseek(fp, 0, SEEK_SET);
    b = (unsigned char *)malloc(len > 0 ? (size_t)len : 1);
    if (len > 0 && fread(b, 1, (size_t)len, fp) != (size_t)len) { fclose(fp); free(b); return 0; }
    fclose(fp);
    LLVMFuzzerTestOneInput(b, (size_t)(len > 0 ? len : 0));
    free(b);
    return 1;
}
/* A file, or every file below a directory (its subdirectories too). */
static int replay_path(const char *path) {
    DIR *d = opendir(path);
    int n = 0;
    if (!d) return replay_file(path);
    for (;;) {
        struct dirent *de = readdir(d);
        char sub[4096];
        if (!de) break;
        if (de->d_name[0] == '.') continue;
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        n += replay_path(sub);
    }
    closedir(d);
    return n;
}
int main(int argc, char **argv) {
    int i, n = 0;
    for (i = 1; i < argc; i++) n += replay_path(argv[i]);
    printf("replayed %d inputs, no crash\n", n);
    return 0;
}
#endif
