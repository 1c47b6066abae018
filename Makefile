# lattn — build, test, demo and benchmark. Outputs go to $(BUILD) (ignored by git).
#   make test         all checks, native build (gcc -O2 -march=native, OpenMP)
#   make test-quick   the same checks on smaller shapes (sanitizers, valgrind, qemu use it)
#   make demo         the tour: every mixer, every form, error against _ref, tokens/s
#   make bench        benchmark table; writes bench/last_run.jsonl
#   make bench-openblas  the GEMMs of a training step beside OpenBLAS's (THREADS=1,2)
#   make muon-mpi     the sharded Muon step on 4 MPI processes (where mpicc exists)
#   make train-tcn    the seed article's TCN demo trained in C, against its own training run
#   make sps-grads    the SPS paper's gradient analysis in miniature (SPS against Standard)
#   make mqar         multi-query associative recall: every architecture trained at one width
#   make evaluate     throughput, memory and decoding memory against T for every architecture (+ SVG)
#   make charlm       a character-level LM on the KJV Bible (package bible-kjv) for three architectures
#   make readme-check every C program of README.md built and run
# Variants: make test CC=clang | make test EXTRA=-DLATTN_NO_SIMD OMP= | make test BUILD=build/x
CC      ?= gcc
BUILD   ?= build
ARCH    ?= -march=native
OMP     ?= -fopenmp
OPT     ?= -O2
CFLAGS  ?= -std=c99 $(OPT) $(ARCH) -Wall -Wextra -pedantic
EXTRA   ?=
RUN     ?=
THREADS ?= 1,2
LDLIBS  ?= -lm -pthread
ALL_CFLAGS = $(CFLAGS) $(OMP) $(EXTRA)

TESTS    = $(BUILD)/run_tests
EXAMPLES = $(BUILD)/tour $(BUILD)/tiler_demo $(BUILD)/tiler_sweep $(BUILD)/laplace_decode $(BUILD)/sps_decode $(BUILD)/lattn-check $(BUILD)/serve \
           $(BUILD)/train_tcn $(BUILD)/sps_grads $(BUILD)/mqar $(BUILD)/evaluate $(BUILD)/charlm
BENCH    = $(BUILD)/bench
# The MPI example only where an MPI compiler exists (Debian: libopenmpi-dev openmpi-bin).
MPICC   ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
EXAMPLES += $(BUILD)/muon_mpi
endif

.PHONY: all test test-quick demo bench bench-openblas examples muon-mpi train-tcn sps-grads mqar evaluate charlm serve clean compile-check fuzz fuzz-replay reference reference-check conformance readme-check
all: $(TESTS) $(EXAMPLES) $(BENCH)

$(BUILD):
	mkdir -p $(BUILD)

$(BUILD)/run_tests: tests/run_tests.c lattn.h examples/svg_plot.h examples/comm_threads.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/%: examples/%.c lattn.h examples/svg_plot.h examples/torch_rng.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/lattn-check: examples/lattn_check.c lattn.h examples/torch_rng.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/muon_mpi: examples/muon_mpi.c lattn.h | $(BUILD)
	$(MPICC) $(CFLAGS) $(EXTRA) -o $@ $< $(LDLIBS)

# The sharded Muon step on 4 MPI processes, checked bit for bit against one process.
muon-mpi:
ifeq ($(MPICC),)
	@echo "muon-mpi: no mpicc (apt-get install libopenmpi-dev openmpi-bin)"; exit 1
else
	$(MAKE) --no-print-directory $(BUILD)/muon_mpi
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 4 --oversubscribe ./$(BUILD)/muon_mpi
endif

train-tcn: $(BUILD)/train_tcn
	./$(BUILD)/train_tcn

sps-grads: $(BUILD)/sps_grads
	./$(BUILD)/sps_grads

# Multi-query associative recall: every architecture trained at one width (MQAR_ARGS: see mqar.c).
MQAR_ARGS ?= --steps 1500 --T 64 --P 4,8
mqar: $(BUILD)/mqar
	./$(BUILD)/mqar $(MQAR_ARGS)

# The article's evaluation method for every architecture: a Markdown table and SVG charts in $(BUILD).
EVAL_ARGS ?= --T 256,512,1024,2048
evaluate: $(BUILD)/evaluate
	./$(BUILD)/evaluate --out $(BUILD) $(EVAL_ARGS)

# A character-level language model on the King James Bible of the Debian package bible-kjv
# (apt-get install bible-kjv; never downloaded here), for several architectures.
CHARLM_ARGS ?= --steps 600 --eval 50
$(BUILD)/kjv.txt: | $(BUILD)
	@command -v bible >/dev/null || { echo "charlm: no 'bible' program (apt-get install bible-kjv)"; exit 1; }
	bible -f "Gen1:1-Rev22:21" | sed 's/^[^ ]* //' > $@.tmp && mv $@.tmp $@
charlm: $(BUILD)/charlm $(BUILD)/kjv.txt
	./$(BUILD)/charlm $(BUILD)/kjv.txt --svg $(BUILD)/charlm_loss.svg --svg-long $(BUILD)/charlm_long.svg $(CHARLM_ARGS)

# Continuous batching from a pool of slots on a simulated request stream, checked against decoding
# each request alone (SERVE_ARGS: see serve.c; --model 3b --layers 2 for the 3B layer width).
SERVE_ARGS ?=
serve: $(BUILD)/serve
	./$(BUILD)/serve $(SERVE_ARGS)

$(BUILD)/bench: bench/bench.c lattn.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

# The conformance checks first, the test runner last: its last line is "N passed, M failed".
test: $(TESTS) $(BUILD)/lattn-check $(BUILD)/train_tcn $(BUILD)/perturb $(BUILD)/generate
	$(MAKE) --no-print-directory conformance reference-check
	$(RUN) ./$(BUILD)/train_tcn > $(BUILD)/train_tcn.log && grep '^after 20' $(BUILD)/train_tcn.log
	$(RUN) ./$(BUILD)/run_tests

test-quick: $(TESTS) $(BUILD)/lattn-check $(BUILD)/perturb
	$(MAKE) --no-print-directory conformance
	$(RUN) ./$(BUILD)/run_tests --quick

# Every ```c block of README.md, built (-Werror) and run.
readme-check: | $(BUILD)
	sh tests/readme_snippets.sh $(BUILD) $(CC)

# The checker over every golden case and form, over the external cases, and on deliberately
# damaged outputs, each of which it must diagnose (tests/checker.sh).
conformance: $(BUILD)/lattn-check $(BUILD)/perturb
	$(RUN) ./$(BUILD)/lattn-check manifest reference_outputs | tail -1
	$(RUN) ./$(BUILD)/lattn-check external tests/external/*.safetensors tests/external/grad/*.safetensors > $(BUILD)/external.log
	grep -c '^PASS' $(BUILD)/external.log | sed 's/$$/ external case-form runs passed/'
	sh tests/checker.sh $(BUILD) $(RUN)

$(BUILD)/perturb: tests/perturb.c lattn.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

examples: $(EXAMPLES)

demo: $(EXAMPLES)
	./$(BUILD)/tour

bench: $(BENCH)
	./$(BUILD)/bench

# lattn's GEMMs beside OpenBLAS's (Debian: libopenblas-dev) on a Laplace layer's training products,
# after the FMA peak row of the same command.
$(BUILD)/gemm_openblas: bench/gemm_openblas.c lattn.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lopenblas $(LDLIBS)
bench-openblas: $(BENCH) $(BUILD)/gemm_openblas
	./$(BUILD)/bench peak
	./$(BUILD)/gemm_openblas $(THREADS)

# The header alone, as C99 and as C++11 (-O0, -O2, -O3; portable, -march=native, AVX-512 and AVX2
# targets, and each LATTN_NO_* switch), warnings as errors (both halves compiled), and the header in
# two translation units of one program. One object per variant, so `make -j` compiles them side by side.
CHK = $(BUILD)/chk
CHECK_C   = c_o0 c_o2 c_o3 c_omp c_static c_nosimd c_nomodels c_noconf c_nostdio
CHECK_CXX = x_o0 x_o2 x_native_omp x_avx512 x_avx2 x_nomodels_noconf
$(CHK)/c_o0.o:              CHECK = -std=c99 -O0
$(CHK)/c_o2.o:              CHECK = -std=c99 -O2
$(CHK)/c_o3.o:              CHECK = -std=c99 -O3 -march=native
$(CHK)/c_omp.o:             CHECK = -std=c99 -O2 -fopenmp
$(CHK)/c_static.o:          CHECK = -std=c99 -O2 -march=native -DLATTN_STATIC
$(CHK)/c_nosimd.o:          CHECK = -std=c99 -O2 -DLATTN_NO_SIMD
$(CHK)/c_nomodels.o:        CHECK = -std=c99 -O2 -DLATTN_NO_MODELS
$(CHK)/c_noconf.o:          CHECK = -std=c99 -O2 -DLATTN_NO_CONFORMANCE
$(CHK)/c_nostdio.o:         CHECK = -std=c99 -O2 -DLATTN_NO_STDIO
$(CHK)/x_o0.o:              CHECK = -std=c++11 -O0
$(CHK)/x_o2.o:              CHECK = -std=c++11 -O2
$(CHK)/x_native_omp.o:      CHECK = -std=c++11 -O2 -march=native -fopenmp
$(CHK)/x_avx512.o:          CHECK = -std=c++11 -O2 -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma
$(CHK)/x_avx2.o:            CHECK = -std=c++11 -O2 -mavx2 -mfma
$(CHK)/x_nomodels_noconf.o: CHECK = -std=c++11 -O2 -DLATTN_NO_MODELS -DLATTN_NO_CONFORMANCE
WERROR = -Wall -Wextra -pedantic -Werror

compile-check: $(CHECK_C:%=$(CHK)/%.o) $(CHECK_CXX:%=$(CHK)/%.o) $(CHK)/two_tu
	./$(CHK)/two_tu

$(CHK):
	mkdir -p $(CHK)

$(CHK)/cc.c $(CHK)/cc.cpp: | $(CHK)
	printf '#define LATTN_IMPLEMENTATION\n#include "lattn.h"\nint main(void){return lattn_simd_width() > 0 ? 0 : 1;}\n' > $@

$(CHK)/c_%.o: $(CHK)/cc.c lattn.h
	$(CC) -I. $(WERROR) $(CHECK) -c $< -o $@

$(CHK)/x_%.o: $(CHK)/cc.cpp lattn.h
	$(CXX) -I. $(WERROR) $(CHECK) -c $< -o $@

$(CHK)/tu_%.o: tests/two_tu_%.c lattn.h | $(CHK)
	$(CC) -std=c99 $(WERROR) -O2 -march=native -c $< -o $@

$(CHK)/two_tu: $(CHK)/tu_a.o $(CHK)/tu_b.o
	$(CC) -o $@ $^ -lm

clean:
	rm -rf build

# Fuzzing the safetensors reader. fuzz-replay: the corpus and the corrupt catalogue under
# ASan+UBSan without libFuzzer. fuzz: a bounded, reproducible libFuzzer run (clang).
FUZZ_TIME ?= 120
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
fuzz-replay: | $(BUILD)
	$(CC) -std=c99 -DLATTN_FUZZ_REPLAY -D_DEFAULT_SOURCE $(FUZZ_SAN) -o $(BUILD)/fuzz_replay tests/fuzz_safetensors.c -lm
	./$(BUILD)/fuzz_replay tests/corpus tests/corrupt tests/external

fuzz: | $(BUILD)
	clang -std=c99 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1 \
	    -o $(BUILD)/fuzz_st tests/fuzz_safetensors.c -lm
	mkdir -p $(BUILD)/fuzz-corpus
	./$(BUILD)/fuzz_st -seed=1 -max_total_time=$(FUZZ_TIME) -max_len=65536 -print_final_stats=1 \
	    $(BUILD)/fuzz-corpus tests/corpus tests/corrupt 2>&1 | tail -12

# Golden cases: the generator is built without FMA contraction (and without -march=native).
VERIFY ?= --verify-exact
$(BUILD)/generate: reference_outputs/generate.c lattn.h | $(BUILD)
	$(CC) -std=c99 -O2 -ffp-contract=off -Wall -Wextra -pedantic -o $@ $< $(LDLIBS)

reference: $(BUILD)/generate
	mkdir -p reference_outputs/shortconv reference_outputs/tcn reference_outputs/linear_attn \
	    reference_outputs/scan reference_outputs/ssm reference_outputs/s4d \
	    reference_outputs/gla reference_outputs/simple_gla reference_outputs/retention \
	    reference_outputs/laplace_layer reference_outputs/gdr reference_outputs/gdn_layer \
	    reference_outputs/prism_p0 reference_outputs/prism_p1 reference_outputs/prism_p2 \
	    reference_outputs/attention reference_outputs/transformer reference_outputs/sps \
	    reference_outputs/ttt_layer
	./$(BUILD)/generate reference_outputs

reference-check: $(BUILD)/generate
	$(RUN) ./$(BUILD)/generate $(VERIFY) reference_outputs
