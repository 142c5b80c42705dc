/* The Precompiled normalizer (text/precompiled.h) with a real SentencePiece charsmap and references
 * from SentencePiece itself, then Hugging Face's own rule where it differs, then hostile charsmaps.
 *
 * tests/unit/precompiled_vectors.txt (tools/gen_precompiled_vectors.py, which needs the Debian
 * package sentencepiece; this test does not) holds the precompiled_charsmap of a tiny model trained
 * with ten rules (listed in the file's header), and spm_normalize's output with that charsmap alone:
 *   agree lines: strings on which Hugging Face's rule (per grapheme cluster, shortest match) and
 *     SentencePiece's (longest match, across clusters) give the same: the output must be
 *     SentencePiece's;
 *   differ lines: strings on which they differ. The expected results are in HF_CASES below, worked
 *     out by hand from Hugging Face's documented rule (tokenizers' normalizers/precompiled.rs over
 *     spm_precompiled's transform); the test also checks that each is not SentencePiece's output,
 *     so every case really exercises the difference. */
#include "check.h"
#include "text/precompiled.h"
#include <stdbool.h>
#include <string.h>

#define MAX_CPS 128

typedef struct { uint32_t cp[MAX_CPS]; size_t n; } seq;

/* "0041 0301" (up to end) -> code points; false if malformed */
static bool parse_hex(const char *s, const char *end, seq *out) {
    out->n = 0;
    while (s < end) {
        if (*s == ' ') { s++; continue; }
        char *next;
        unsigned long v = strtoul(s, &next, 16);
        if (next == s || next > end || out->n >= MAX_CPS) return false;
        out->cp[out->n++] = (uint32_t)v;
        s = next;
    }
    return true;
}

static void show(const seq *s, char *buf, size_t cap) {
    size_t w = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->n && w + 8 < cap; i++) w += (size_t)snprintf(buf + w, cap - w, "%s%04X", i ? " " : "", s->cp[i]);
}

/* pc on in: true when the result is want (printed when not) */
static bool normalizes_to(const precompiled *pc, const seq *in, const seq *want) {
    uint32_t *out;
    size_t n;
    ts_error err = { { 0 } };
    if (precompiled_normalize(pc, in->cp, in->n, &out, &n, &err)) { printf("# error: %s\n", err.msg); return false; }
    bool ok = n == want->n && memcmp(out, want->cp, n * sizeof *out) == 0;
    if (!ok) {
        seq got = { { 0 }, 0 };
        for (size_t i = 0; i < n && i < MAX_CPS; i++) got.cp[got.n++] = out[i];
        char a[1024], b[1024], c[1024];
        show(in, a, sizeof a); show(&got, b, sizeof b); show(want, c, sizeof c);
        printf("# [%s] -> [%s], want [%s]\n", a, b, c);
    }
    free(out);
    return ok;
}

/* Hugging Face's results where SentencePiece's longest match differs (worked out by hand). Rules of
 * the charsmap: FB01 -> "fi", FB00 -> "ff", FB00 006C -> "FFL", FF21 -> "A", FF21 0301 -> U+00C1,
 * 0065 0301 -> U+00E9, 0301 -> U+00B4, 1D538 -> "A", 200B -> "", 000D -> 000A. */
static const struct { const char *in, *want, *why; } HF_CASES[] = {
    /* UTF-8 EF BC A1 CC 81, 5 bytes < 6: the trie search of the whole cluster meets FF21 first (a
     * leaf after 3 bytes), and that first result replaces all of the cluster: "A", the mark gone.
     * SentencePiece: the longest match, FF21 0301 -> U+00C1. */
    { "FF21 0301", "0041", "one 5-byte cluster: the shorter source FF21 replaces all of it" },
    { "0078 FF21 0301 0079", "0078 0041 0079", "the same inside a text" },
    /* 7 bytes: not looked up whole; FF21 -> A, 0301 -> U+00B4 twice. SentencePiece: U+00C1 U+00B4. */
    { "FF21 0301 0301", "0041 00B4 00B4", "a 7-byte cluster goes code point by code point" },
    /* 5 bytes: 0065 0301 is the first (and only) result; it replaces the whole cluster, U+0302 gone.
     * SentencePiece: U+00E9 U+0302. */
    { "0065 0301 0302", "00E9", "e + acute + circumflex: the match of e + acute takes the cluster" },
    /* 5 bytes, the same: SentencePiece gives U+00E9 U+00B4 (the second acute on its own). */
    { "0065 0301 0301", "00E9", "e + two acutes: one cluster, replaced whole" },
    /* EF AC 81 CC 81, 5 bytes: FB01 matches first, "fi" replaces the cluster. SentencePiece: f i U+00B4. */
    { "FB01 0301", "0066 0069", "fi ligature + acute: the mark is dropped" },
    /* CC 81 CC 81, 4 bytes, one cluster (a lone mark starts one, GB9 adds the second): U+0301 matches
     * first and its U+00B4 replaces both. SentencePiece: U+00B4 U+00B4. */
    { "0301 0301", "00B4", "two acutes: one cluster, the first's match takes both" },
    /* FB00 and l are two clusters, looked up apart: "ff" then l. SentencePiece: FB00 006C -> FFL. */
    { "FB00 006C", "0066 0066 006C", "ff ligature + l: a source across two clusters never matches" },
    { "0073 0074 0061 FB00 006C 0020 0072 006F 006F 006D",
      "0073 0074 0061 0066 0066 006C 0020 0072 006F 006F 006D", "the same inside a text" },
};

/* Cases spm_normalize cannot be given (it reads lines), or that are about values, by hand too. */
static const struct { const char *in, *want, *why; } HF_ONLY[] = {
    /* CR LF is one cluster (GB3), 2 bytes: CR matches first and its "\n" replaces the pair.
     * SentencePiece would give LF LF. */
    { "0061 000D 000A 0062", "0061 000A 0062", "CR LF: one cluster, replaced whole by CR's LF" },
    { "000D 000D", "000A 000A", "CR CR: two clusters" },
    /* a NUL byte stops the trie search (and is a cluster of its own) */
    { "0000 0061 0000", "0000 0061 0000", "NUL stops the search" },
    /* values with no UTF-8 form are kept and never matched; the marks after them still are */
    { "110000 0301 D800", "110000 00B4 D800", "non-scalar values kept, the acute after them mapped alone" },
    /* the empty replacement removes a cluster */
    { "0061 200B 0301 0062", "0061 00B4 0062", "ZWSP (Control: a cluster of its own) removed, the acute mapped alone" },
};

/* A blob: u32 trie_size, the units, the pool. */
static size_t make_blob(uint8_t *buf, const uint32_t *units, size_t n_units, const char *pool, size_t pool_len) {
    uint32_t size = (uint32_t)(n_units * 4);
    memcpy(buf, &size, 4);   /* little-endian hosts only, as the test machines are */
    memcpy(buf + 4, units, n_units * 4);
    memcpy(buf + 4 + n_units * 4, pool, pool_len);
    return 4 + n_units * 4 + pool_len;
}

static bool loads(const uint8_t *blob, size_t len, ts_error *err) {
    precompiled *pc = NULL;
    int rc = precompiled_from_blob(blob, len, &pc, err);
    precompiled_free(pc);
    return rc == 0;
}

static bool b64_loads(const char *b64, ts_error *err) {
    precompiled *pc = NULL;
    int rc = precompiled_from_base64(b64, strlen(b64), &pc, err);
    precompiled_free(pc);
    return rc == 0;
}

static uint32_t rng_state = 12345;
static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

int main(void) {
    size_t len;
    char *text = read_all("tests/unit/precompiled_vectors.txt", &len);
    CHECK(text != NULL, "the precompiled vectors are readable");
    if (!text) CHECK_EXIT();

    /* the charsmap */
    precompiled *pc = NULL;
    ts_error err = { { 0 } };
    char *cm = strstr(text, "\ncharsmap ");
    const char *b64 = cm ? cm + 10 : "";
    size_t b64_len = strcspn(b64, "\n");
    CHECK(cm && precompiled_from_base64(b64, b64_len, &pc, &err) == 0, "the SentencePiece charsmap loads%s%s",
          pc ? "" : ": ", pc ? "" : err.msg);
    if (!pc) { free(text); CHECK_EXIT(); }

    /* agree lines: SentencePiece's output; differ lines: kept for HF_CASES */
    int agree = 0, agree_fail = 0, differ = 0, bad_lines = 0;
    seq differ_in[16], differ_spm[16];
    for (char *line = text; *line;) {
        char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        bool is_agree = strncmp(line, "agree ", 6) == 0, is_differ = strncmp(line, "differ ", 7) == 0;
        if (is_agree || is_differ) {
            char *start = line + (is_agree ? 6 : 7), *semi = memchr(start, ';', (size_t)(eol - start));
            seq in, out;
            if (!semi || !parse_hex(start, semi, &in) || !parse_hex(semi + 1, eol, &out)) bad_lines++;
            else if (is_agree) { agree++; agree_fail += !normalizes_to(pc, &in, &out); }
            else if (differ < 16) { differ_in[differ] = in; differ_spm[differ] = out; differ++; }
        }
        line = *eol ? eol + 1 : eol;
    }
    CHECK(agree >= 20 && bad_lines == 0, "%d agree lines read (%d malformed)", agree, bad_lines);
    CHECK(agree_fail == 0, "SentencePiece's output on every agree line (%d of %d differ)", agree_fail, agree);

    /* Hugging Face's rule where SentencePiece's differs */
    int n_cases = (int)(sizeof HF_CASES / sizeof HF_CASES[0]);
    CHECK(differ == n_cases, "every differ line has a hand-worked case (%d lines, %d cases)", differ, n_cases);
    for (int i = 0; i < n_cases; i++) {
        seq in, want;
        parse_hex(HF_CASES[i].in, HF_CASES[i].in + strlen(HF_CASES[i].in), &in);
        parse_hex(HF_CASES[i].want, HF_CASES[i].want + strlen(HF_CASES[i].want), &want);
        int k = -1;
        for (int j = 0; j < differ; j++)
            if (differ_in[j].n == in.n && memcmp(differ_in[j].cp, in.cp, in.n * sizeof in.cp[0]) == 0) k = j;
        bool not_spm = k >= 0 && !(differ_spm[k].n == want.n && memcmp(differ_spm[k].cp, want.cp, want.n * sizeof want.cp[0]) == 0);
        CHECK(normalizes_to(pc, &in, &want) && not_spm, "HF rule: %s: [%s] -> [%s] (SentencePiece's differs: %s)",
              HF_CASES[i].why, HF_CASES[i].in, HF_CASES[i].want, not_spm ? "yes" : "NO");
    }
    for (size_t i = 0; i < sizeof HF_ONLY / sizeof HF_ONLY[0]; i++) {
        seq in, want;
        parse_hex(HF_ONLY[i].in, HF_ONLY[i].in + strlen(HF_ONLY[i].in), &in);
        parse_hex(HF_ONLY[i].want, HF_ONLY[i].want + strlen(HF_ONLY[i].want), &want);
        CHECK(normalizes_to(pc, &in, &want), "HF rule: %s: [%s] -> [%s]", HF_ONLY[i].why, HF_ONLY[i].in, HF_ONLY[i].want);
    }
    {
        uint32_t *out = NULL;
        size_t n = 1;
        CHECK(precompiled_normalize(pc, NULL, 0, &out, &n, &err) == 0 && out && n == 0, "empty text: empty result");
        free(out);
    }

    /* ---- charsmaps built by hand (Darts-clone units): one key "a" ---- */
    /* root: offset 1, so byte c leads to unit 1 ^ c; 'a' -> unit 96: label 'a', leaf bit, offset 1,
     * so its value unit is 96 ^ 1 = 97: bit 31 + the pool offset */
    static uint32_t units[256];
    static uint8_t blob[4096];
    size_t bl;
    units[0] = 1u << 10;
    units[96] = 'a' | 1u << 8 | 1u << 10;
    units[97] = 0x80000000u | 0;
    bl = make_blob(blob, units, 256, "x\0", 2);
    precompiled *hand = NULL;
    CHECK(precompiled_from_blob(blob, bl, &hand, &err) == 0, "a hand-made one-key trie loads");
    if (hand) {
        seq in = { { 'a', 'b', 'a' }, 3 }, want = { { 'x', 'b', 'x' }, 3 };
        CHECK(normalizes_to(hand, &in, &want), "a -> x on \"aba\"");
        precompiled_free(hand);
    }
    units[97] = 0x80000000u | 2;   /* the pool's end: an empty string (as Hugging Face's slice gives) */
    bl = make_blob(blob, units, 256, "x\0", 2);
    hand = NULL;
    CHECK(precompiled_from_blob(blob, bl, &hand, &err) == 0, "an offset at the pool's end loads (empty replacement)");
    if (hand) {
        seq in = { { 'a', 'b', 'a' }, 3 }, want = { { 'b' }, 1 };
        CHECK(normalizes_to(hand, &in, &want), "a -> nothing on \"aba\"");
        precompiled_free(hand);
    }
    units[97] = 0x80000000u | 3;
    bl = make_blob(blob, units, 256, "x\0", 2);
    CHECK(!loads(blob, bl, &err) && strstr(err.msg, "past the 2-byte string pool"), "offset past the pool: %s", err.msg);
    units[97] = 0x80000000u | 1;
    bl = make_blob(blob, units, 256, "\xc3\xa9\0", 3);
    CHECK(!loads(blob, bl, &err) && strstr(err.msg, "inside a UTF-8 character"), "offset inside a character: %s", err.msg);
    units[97] = 0x80000000u | 0;
    bl = make_blob(blob, units, 256, "x\xff\0", 3);
    CHECK(!loads(blob, bl, &err) && strstr(err.msg, "not valid UTF-8"), "pool not UTF-8: %s", err.msg);
    units[96] = 'a' | 1u << 8 | 332u << 10;   /* value unit 96 ^ 332 = 300, past 256 units */
    bl = make_blob(blob, units, 256, "x\0", 2);
    CHECK(!loads(blob, bl, &err) && strstr(err.msg, "past the trie"), "value unit past the trie: %s", err.msg);
    units[96] = 'a' | 1u << 8 | 1u << 10;
    units[0] = 0x3fffffu << 10 | 1u << 9;   /* children far past the array: loads, nothing matches */
    bl = make_blob(blob, units, 256, "x\0", 2);
    hand = NULL;
    CHECK(precompiled_from_blob(blob, bl, &hand, &err) == 0, "a root whose children lie past the array loads");
    if (hand) {
        seq in = { { 'a', 0xFF21, 0x1F600 }, 3 };
        CHECK(normalizes_to(hand, &in, &in), "and matches nothing");
        precompiled_free(hand);
    }
    {   /* a cycle: units 0 and 1 lead to each other on byte 1, with no leaf; load and search stay bounded */
        uint32_t cyc[2] = { 1, 1 };
        bl = make_blob(blob, cyc, 2, "", 0);
        hand = NULL;
        CHECK(precompiled_from_blob(blob, bl, &hand, &err) == 0, "a cyclic trie loads");
        if (hand) {
            seq in = { { 1, 1, 1, 1, 1, 1, 1, 1 }, 8 };
            CHECK(normalizes_to(hand, &in, &in), "and its search ends");
            precompiled_free(hand);
        }
    }

    /* ---- malformed blobs and base64 ---- */
    memset(units, 0, sizeof units);
    CHECK(!loads(blob, 3, &err) && strstr(err.msg, "shorter than its 4-byte header"), "3 bytes: %s", err.msg);
    bl = make_blob(blob, units, 4, "", 0);
    CHECK(!loads(blob, bl - 1, &err) && strstr(err.msg, "past the end"), "trie cut short: %s", err.msg);
    uint32_t huge = 0xfffffffcu;
    memcpy(blob, &huge, 4);
    CHECK(!loads(blob, bl, &err) && strstr(err.msg, "past the end"), "trie_size 2^32-4: %s", err.msg);
    uint32_t zero = 0;
    memcpy(blob, &zero, 4);
    CHECK(!loads(blob, bl, &err) && strstr(err.msg, "positive multiple of 4"), "trie_size 0: %s", err.msg);
    uint32_t odd = 6;
    memcpy(blob, &odd, 4);
    CHECK(!loads(blob, bl, &err) && strstr(err.msg, "positive multiple of 4"), "trie_size 6: %s", err.msg);
    static const char *bad_b64[] = { "", "AAA", "AAAAA", "AA=A", "A===", "====", "AAAA\n", " AAAA", "AB==", "AAB=",
                                     "AA-A", "AA_A", "AA==AAAA" };
    for (size_t i = 0; i < sizeof bad_b64 / sizeof bad_b64[0]; i++) {
        bool fails = !b64_loads(bad_b64[i], &err);
        char shown[32];
        size_t w = 0;
        for (const char *c = bad_b64[i]; *c && w + 3 < sizeof shown; c++) {
            if (*c == '\n') { shown[w++] = '\\'; shown[w++] = 'n'; }
            else shown[w++] = *c;
        }
        shown[w] = '\0';
        CHECK(fails && strstr(err.msg, "precompiled_charsmap") && !strchr(err.msg, '\n'), "bad base64 \"%s\": %s", shown, err.msg);
    }
    CHECK(!b64_loads("AAAAAA==", &err) && strstr(err.msg, "positive multiple of 4"), "valid base64, empty trie: %s", err.msg);
    {   /* the real blob cut anywhere fails cleanly or loads, never reads out of bounds */
        char *cut = malloc(b64_len + 1);
        int failed = 0, loaded = 0, other = 0;
        for (size_t keep = 0; keep + 4 <= b64_len; keep += 4) {
            memcpy(cut, b64, keep);
            precompiled *p2 = NULL;
            if (precompiled_from_base64(cut, keep, &p2, &err) == 0) loaded++;
            else if (strstr(err.msg, "precompiled_charsmap")) failed++;
            else other++;
            precompiled_free(p2);
        }
        free(cut);
        /* a cut inside the trie leaves trie_size past the end; one inside the pool, leaves pointing past it */
        CHECK(other == 0 && loaded == 0, "the charsmap cut after every 4 base64 characters: %d fail, %d load", failed, loaded);
    }

    /* ---- random damage to the real charsmap: load, and when it loads, normalize (ASan watches) ---- */
    {
        uint8_t *orig = NULL;
        size_t orig_len = 0;
        /* the blob's bytes (the library keeps no copy of them) */
        static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        orig = malloc(b64_len);
        uint32_t acc = 0;
        int bits = 0;
        for (size_t i = 0; i < b64_len && b64[i] != '='; i++) {
            acc = acc << 6 | (uint32_t)(strchr(tbl, b64[i]) - tbl);
            bits += 6;
            if (bits >= 8) { bits -= 8; orig[orig_len++] = (uint8_t)(acc >> bits); }
        }
        static const uint32_t sample[] = { 'a', 0xFF21, 0x301, 'e', 0x301, 0xFB01, 0x1D538, 0x200B, 0x0D, 0x0A,
                                           0xFB00, 'l', 0xFF21, 0x301, 0x302, 0x1F600, 0x0915, 0x094D };
        uint8_t *mut = malloc(orig_len);
        int loaded = 0, ok = 1;
        for (int round = 0; round < 3000; round++) {
            memcpy(mut, orig, orig_len);
            int flips = 1 + (int)(rng() % 4);
            for (int f = 0; f < flips; f++) mut[rng() % orig_len] ^= (uint8_t)(1u << (rng() % 8));
            precompiled *p2 = NULL;
            if (precompiled_from_blob(mut, orig_len, &p2, &err) == 0) {
                loaded++;
                for (size_t start = 0; start < 18; start += 3) {
                    uint32_t *out = NULL;
                    size_t n = 0;
                    if (precompiled_normalize(p2, sample + start, 18 - start, &out, &n, &err)) ok = 0;
                    free(out);
                }
            } else if (strchr(err.msg, '\n') || !strstr(err.msg, "precompiled_charsmap")) ok = 0;
            precompiled_free(p2);
        }
        free(mut);
        free(orig);
        CHECK(ok && loaded > 0, "3000 randomly damaged charsmaps: %d load and normalize, the rest fail with one line", loaded);
    }

    precompiled_free(pc);
    free(text);
    CHECK_EXIT();
}
