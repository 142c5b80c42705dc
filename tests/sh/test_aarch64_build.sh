#!/usr/bin/env bash
# The aarch64 build: the library and CLI must compile for aarch64 (NEON kernels under
# #ifdef __aarch64__, no x86 intrinsics leaking out of their #ifdefs), and where an emulator is
# installed, the aarch64 build must give the answers x86 does: under qemu-aarch64 run the kernel
# tests (every NEON kernel against the portable ones, bit for bit), the fixture logits, most other
# unit tests, two CLI shell tests and a --check of the qa-llama questions. Debian: apt-get install
# gcc-aarch64-linux-gnu qemu-user (.ci/run installs them where it can). Skipped, with a note,
# where either is absent.
source "$(dirname "$0")/lib.sh"
CC_ARM=${CC_AARCH64:-aarch64-linux-gnu-gcc}
QEMU=${QEMU_AARCH64:-qemu-aarch64}
if ! command -v "$CC_ARM" >/dev/null 2>&1; then
    ok "skipped aarch64 cross build: $CC_ARM not installed"
    exit 0
fi
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
FLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers -Iinclude -Isrc -O2"
mkdir -p "$TMP/obj"
# the library's objects, two compilers at a time
find src -name '*.c' ! -path 'src/cli/*' | sort | xargs -P2 -I{} sh -c \
    'o="$1/obj/$(echo "$2" | tr / _).o"; '"$CC_ARM $FLAGS"' -c "$2" -o "$o" 2>>"$o.err"' _ "$TMP" {}
cat "$TMP"/obj/*.err >"$TMP/err" 2>/dev/null
ar rcs "$TMP/libtessera.a" "$TMP"/obj/*.o 2>>"$TMP/err"
if $CC_ARM $FLAGS src/cli/*.c "$TMP/libtessera.a" -lm -lpthread -o "$TMP/run-aarch64" 2>>"$TMP/err"; then
    ok "aarch64 cross build of the library and CLI (gcc $("$CC_ARM" -dumpversion), $(grep -c 'warning:' "$TMP/err") warnings)"
else
    notok "aarch64 cross build failed: $(grep -m3 'error' "$TMP/err" | tr '\n' ' ')"
    exit 0
fi
# ELF e_machine (bytes 18-19, little-endian) is 183 for AArch64
machine=$(od -An -tu2 -j18 -N2 "$TMP/run-aarch64" 2>/dev/null | tr -d ' ')
check "the cross-built binary is an AArch64 ELF (e_machine $machine)" [ "$machine" = 183 ]

if ! command -v "$QEMU" >/dev/null 2>&1 || [ ! -d "${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}" ]; then
    ok "skipped the aarch64 runs: $QEMU (qemu-user) not installed"
    exit 0
fi
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
# qemu's default CPU has the dot product instructions (the SDOT kernels); a Cortex-A72 has not
check "under $QEMU the binary picks the NEON kernels with SDOT" \
    sh -c "$QEMU '$TMP/run-aarch64' --info '$FIX/qa-llama/qa-llama-q8_0.gguf' 2>&1 | grep -qx 'kernels: neon (with SDOT)'"
check "on an emulated Cortex-A72 (no SDOT) the NEON kernels without it" \
    sh -c "$QEMU -cpu cortex-a72 '$TMP/run-aarch64' --info '$FIX/qa-llama/qa-llama-q8_0.gguf' 2>&1 | grep -qx 'kernels: neon'"
# The unit tests' own ok / not ok lines count, as tests/run_all.sh counts them; a crash is a failure.
# test_simd runs on both CPUs, the others on the default one (with the SDOT kernels; the set
# without them is the portable kernels but Q8_0's, whose bits test_simd checks; on the Cortex-A72
# only each type's kernels, TS_SIMD_TYPES_ONLY, the rest being the same code); test_logits only
# for the NEON set. test_kernels checks the f16 conversions exhaustively (FCVT on aarch64); the
# parsers' and tokenizers' tests run where char is unsigned. Left out: test_kv_types (over three
# minutes emulated; its attention kernels are test_simd's), test_kv_ring and test_thread_pool
# (no ISA-specific code; qemu on x86 does not reproduce ARM's weaker memory order), test_resident
# (qemu's madvise does not collapse pages).
UNITS="test_simd test_logits test_kernels test_chat_template test_config_rules test_gguf test_json test_layout
    test_moe test_q4nx test_safetensors test_session test_spm_model test_tokenizer_bpe test_tokenizer_spm"
RUNS="$UNITS test_simd@cortex-a72"
export CC_ARM FLAGS TMP
printf '%s\n' $UNITS | xargs -P2 -I{} sh -c \
    '$CC_ARM $FLAGS -Itests/unit "tests/unit/$1.c" "$TMP/libtessera.a" -lm -lpthread -o "$TMP/$1" 2>"$TMP/$1.err"' _ {}
export QEMU FIX
printf '%s\n' $RUNS | xargs -P2 -I{} sh -c '
    src=${1%@*} cpu=${1#*@}; [ "$cpu" = "$1" ] && cpu=max
    [ -x "$TMP/$src" ] || exit 0
    types_only=0; [ "$cpu" = max ] || types_only=1
    TS_SIMD_TYPES_ONLY=$types_only TS_TEST_SETS=neon TS_FIXTURES="$FIX" "$QEMU" -cpu "$cpu" "$TMP/$src" >"$TMP/$1.out" 2>&1
    echo $? >"$TMP/$1.rc"' _ {}
for t in $RUNS; do
    src=${t%@*} cpu=${t#*@}
    [ "$cpu" = "$t" ] && cpu=max
    if [ ! -x "$TMP/$src" ]; then notok "aarch64 build of $src: $(grep -m3 'error' "$TMP/$src.err" | tr '\n' ' ')"; continue; fi
    grep -aE '^(ok|not ok) - ' "$TMP/$t.out" | sed "s/^\(not \)\{0,1\}ok - /&[aarch64 qemu, cpu $cpu] /"
    rc=$(cat "$TMP/$t.rc" 2>/dev/null || echo missing)
    [ "$rc" = 0 ] || grep -aq '^not ok - ' "$TMP/$t.out" || notok "[aarch64 qemu, cpu $cpu] $src exited with status $rc"
done
# Two of the CLI's shell tests with the aarch64 binary (generation, batches; the others passed too
# but take minutes emulated)
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$QEMU" "$TMP/run-aarch64" >"$TMP/run-qemu"
chmod +x "$TMP/run-qemu"
for t in test_cli_generate test_batch; do
    RUN_OPT="$TMP/run-qemu" RUN_SAN="$TMP/run-qemu" bash "tests/sh/$t.sh" >"$TMP/$t.sh.out" 2>&1
    grep -aE '^(ok|not ok) - ' "$TMP/$t.sh.out" | sed "s/^\(not \)\{0,1\}ok - /&[aarch64 qemu, $t.sh] /"
done
# qa-llama's questions from the HF folder (BF16 = the F32 GGUF's values): llama.cpp F32 answers all 30
"$QEMU" "$TMP/run-aarch64" "$FIX/qa-llama/hf" --check "$FIX/qa-llama/eval-dev.jsonl" -n 24 -t 2 >"$TMP/qa.txt" 2>"$TMP/qa.err"
check "[aarch64 qemu] qa-llama hf/ --check: 30 passed, 0 failed (as llama.cpp F32)" grep -qx "30 passed, 0 failed" "$TMP/qa.txt"
