# tessera: `make` builds ./run; `make test` builds everything under AddressSanitizer and UBSan and
# runs every test, ending with a line "N passed, N failed".
CC      ?= cc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers
INC     := -Iinclude -Isrc
OPT     := -O3 -g
# The sanitizer build at -O1, but the forward and the kernels at -O2: the tests' reference runs
# (test_logits, test_kv_types) spend most of their time there. Not the kernel files with large
# vector bodies (rows in lanes): those take 3-17x longer to compile at -O2 under ASan (409 s of one
# core against 52 s), more than their tests gain.
SAN_LEVEL := -O1
SAN     = $(SAN_LEVEL) -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LIBS    := -lm -lpthread

build/san/obj/kernels/%.o build/san/obj/run/%.o: SAN_LEVEL := -O2
SAN_O1_KERNELS := q2_k_dot q3_k_dot q4_k_dot q5_k_dot q6_k_dot iq1_dot iq2_dot iq3_dot tq1_0_dot
$(SAN_O1_KERNELS:%=build/san/obj/kernels/%.o): SAN_LEVEL := -O1

LIB_SRC   := $(shell find src -name '*.c' ! -path 'src/cli/*' | sort)
CLI_SRC   := $(sort $(wildcard src/cli/*.c))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_HDR  := $(wildcard tests/unit/*.h)
HDR       := $(shell find include src -name '*.h')

OPT_OBJ   := $(LIB_SRC:src/%.c=build/opt/obj/%.o)
SAN_OBJ   := $(LIB_SRC:src/%.c=build/san/obj/%.o)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=build/san/tests/%)

.PHONY: all test clean san
all: run

# --version names the commit the binary was built from (when built in a git checkout) and the flags
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
VERSION_DEFS := -DTESSERA_BUILD_FLAGS='"$(CC) $(OPT)"' $(if $(GIT_COMMIT),-DTESSERA_COMMIT='"$(GIT_COMMIT)"')

run: build/opt/libtessera.a $(CLI_SRC) $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $(VERSION_DEFS) $(CLI_SRC) build/opt/libtessera.a $(LIBS) -o $@

build/opt/libtessera.a: $(OPT_OBJ)
	@rm -f $@; ar rcs $@ $^

build/opt/obj/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) -c $< -o $@

build/san/libtessera.a: $(SAN_OBJ)
	@rm -f $@; ar rcs $@ $^

build/san/obj/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(INC) $(SAN) -c $< -o $@

build/san/run: build/san/libtessera.a $(CLI_SRC) $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(SAN) $(CLI_SRC) build/san/libtessera.a $(LIBS) -o $@

build/san/tests/%: tests/unit/%.c build/san/libtessera.a $(UNIT_HDR) $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(INC) -Itests/unit $(SAN) $< build/san/libtessera.a $(LIBS) -o $@

# the shard helpers live in src/cli (linked into ./run, not the library): their test links them itself
build/san/tests/test_shard: tests/unit/test_shard.c src/cli/shard.c build/san/libtessera.a $(UNIT_HDR) $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(INC) -Itests/unit $(SAN) $< src/cli/shard.c build/san/libtessera.a $(LIBS) -o $@

# so does the OpenAI request body reader's test
build/san/tests/test_openai_request: tests/unit/test_openai_request.c src/cli/openai.c src/cli/request.c build/san/libtessera.a $(UNIT_HDR) $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(INC) -Itests/unit $(SAN) $< src/cli/openai.c src/cli/request.c build/san/libtessera.a $(LIBS) -o $@

san: build/san/run $(UNIT_BIN)

# Both builds are tested: the sanitizer build runs every test; the -O3 ./run also runs the shell
# tests that check what a user sees.
test: run san
	@bash tests/run_all.sh

clean:
	rm -rf build run

# `make bench`: synthetic models of SmolLM2-360M's and a 1B Llama's shapes in /tmp/tessera-bench,
# prefill/decode tokens/s, peak RSS and the bandwidth roofline (see tools/bench for options).
build/opt/bench_gen: tools/bench_gen.c build/opt/libtessera.a $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $< build/opt/libtessera.a $(LIBS) -o $@

# `build/opt/bench_matvec TYPE`: the decode kernel alone against a read-only probe (tools/bench_matvec.c)
build/opt/bench_matvec: tools/bench_matvec.c build/opt/libtessera.a $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $< build/opt/libtessera.a $(LIBS) -o $@

# `build/opt/bench_attention [DEPTH]`: a decoded token's attention kernels alone (tools/bench_attention.c)
build/opt/bench_attention: tools/bench_attention.c build/opt/libtessera.a $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $< build/opt/libtessera.a $(LIBS) -o $@

# `build/opt/bench_mixers MODEL`: a decoded token's time and bytes by layer kind (tools/bench_mixers.c)
build/opt/bench_mixers: tools/bench_mixers.c build/opt/libtessera.a $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $< build/opt/libtessera.a $(LIBS) -o $@

# `build/opt/bench_spec forward|gen MODEL ...`: speculative decoding's verification cost and end-to-end
# gain (tools/bench_spec.c)
build/opt/bench_spec: tools/bench_spec.c build/opt/libtessera.a $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $< build/opt/libtessera.a $(LIBS) -o $@

# `build/opt/bench_grammar VOCAB...`: a grammar mask's cost per token on real vocabularies (tools/bench_grammar.c)
build/opt/bench_grammar: tools/bench_grammar.c build/opt/libtessera.a $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $< build/opt/libtessera.a $(LIBS) -o $@

# `build/opt/bench_regex [MB]`: the regex engine against the hand-written pre-tokenizers (tools/bench_regex.c)
build/opt/bench_regex: tools/bench_regex.c build/opt/libtessera.a $(HDR)
	$(CC) $(CSTD) $(WARN) $(INC) $(OPT) $< build/opt/libtessera.a $(LIBS) -o $@

.PHONY: bench
bench: run build/opt/bench_gen
	@bash tools/bench

# ---- fuzzing (tests/fuzz/README.md) ----
# `make fuzz` builds the libFuzzer harnesses build/fuzz/fuzz_* (clang, libFuzzer + ASan + UBSan; the
# library compiled with -fsanitize=fuzzer-no-link) and writes the seed corpus tests/fuzz/corpus/NAME/
# with tools/make_fuzz_corpus.c. `make fuzz-smoke` runs every harness for 20 s and fails on any crash;
# `tools/fuzz_campaign.sh SECONDS` runs the long campaign and prints a per-harness table.
FUZZ_CC     ?= clang
FUZZ_SAN    := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SRC    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN    := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_OBJ    := $(LIB_SRC:src/%.c=build/fuzz/obj/%.o)

.PHONY: fuzz fuzz-smoke fuzz-corpus
fuzz: $(FUZZ_BIN) fuzz-corpus

build/fuzz/obj/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(WARN) $(INC) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c $< -o $@

build/fuzz/libtessera.a: $(FUZZ_OBJ)
	@rm -f $@; ar rcs $@ $^

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h build/fuzz/libtessera.a $(HDR)
	$(FUZZ_CC) $(CSTD) $(WARN) $(INC) $(FUZZ_SAN) -fsanitize=fuzzer $< build/fuzz/libtessera.a $(LIBS) -o $@

# the OpenAI body reader lives in src/cli (linked into ./run, not the library): its harness compiles it
build/fuzz/fuzz_openai_request: tests/fuzz/fuzz_openai_request.c tests/fuzz/fuzz_common.h src/cli/openai.c src/cli/request.c build/fuzz/libtessera.a $(HDR)
	$(FUZZ_CC) $(CSTD) $(WARN) $(INC) $(FUZZ_SAN) -fsanitize=fuzzer $< src/cli/openai.c src/cli/request.c build/fuzz/libtessera.a $(LIBS) -o $@

build/fuzz/make_fuzz_corpus: tools/make_fuzz_corpus.c build/opt/libtessera.a $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(INC) -O1 -g $< build/opt/libtessera.a $(LIBS) -o $@

# The seeds are regenerated whenever the generator changes (they are small and synthetic).
tests/fuzz/corpus/.stamp: build/fuzz/make_fuzz_corpus
	rm -rf tests/fuzz/corpus
	build/fuzz/make_fuzz_corpus corpus tests/fuzz/corpus $${TS_FIXTURES:-../shared/fixtures}
	@touch $@

fuzz-corpus: tests/fuzz/corpus/.stamp

fuzz-smoke: fuzz
	@bash tools/fuzz_campaign.sh 20
