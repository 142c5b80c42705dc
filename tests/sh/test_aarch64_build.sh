#!/usr/bin/env bash
# The library and CLI must compile for aarch64 (NEON kernels under #ifdef __aarch64__, no x86
# intrinsics leaking out of their #ifdefs): cross-compiled with Debian's aarch64-linux-gnu-gcc
# (apt-get install gcc-aarch64-linux-gnu); skipped when it is absent. Warnings are counted, not fatal.
source "$(dirname "$0")/lib.sh"
CC_ARM=${CC_AARCH64:-aarch64-linux-gnu-gcc}
if ! command -v "$CC_ARM" >/dev/null 2>&1; then
    ok "skipped aarch64 cross build: $CC_ARM not installed"
    exit 0
fi
cd "$(dirname "$0")/../.." || exit 1
srcs=$(find src -name '*.c' | sort)
if "$CC_ARM" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-sign-compare \
        -Iinclude -Isrc -O2 $srcs -lm -lpthread -o "$TMP/run-aarch64" 2>"$TMP/err"; then
    ok "aarch64 cross build of the library and CLI (gcc $("$CC_ARM" -dumpversion), $(grep -c 'warning:' "$TMP/err") warnings)"
else
    notok "aarch64 cross build failed: $(grep -m3 'error' "$TMP/err" | tr '\n' ' ')"
fi
# ELF e_machine (bytes 18-19, little-endian) is 183 for AArch64
machine=$(od -An -tu2 -j18 -N2 "$TMP/run-aarch64" 2>/dev/null | tr -d ' ')
check "the cross-built binary is an AArch64 ELF (e_machine $machine)" [ "$machine" = 183 ]
