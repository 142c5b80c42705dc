/* Splitting speed of the regex engine (src/text/regex.c) against the hand-written pre-tokenizer
 * matchers (src/text/pretokenize.c) on the same ~1 MB of mixed-script text: the GPT-2 regex against
 * PRETOK_GPT2, the Llama 3 regex against PRETOK_LLAMA3 and the o200k (gpt-oss) regex against
 * PRETOK_GPT4O. MB/s of UTF-8 input, best of several rounds, after decoding to code points (both
 * sides get code points).
 *
 * Then the whole encode (tokenizer_encode: pre-tokenizer split and BPE merges) of the same text with the
 * real Llama 3 and gpt-oss tokenizers of the fixtures: their tokenizer.json as loaded (the split by
 * the regex engine), against the same vocabulary given the hand-written pre-tokenizer of its GGUF
 * name (llama3, gpt-4o), which is how the engine split these texts before the pipeline existed.
 *
 *   build/opt/bench_regex [MB] [ROUNDS] [FIXTURES_DIR]
 */
#include "text/pretokenize.h"
#include "text/regex.h"
#include "text/pipeline.h"
#include "text/tokenizer.h"
#include "text/tokenizer_json.h"
#include "core/utf8.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *gpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char *llama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char *o200k =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* Snippets drawn at random: English prose with contractions and numbers, code, and other scripts. */
static const char *snippets[] = {
    "The quick brown fox jumps over the lazy dog. ", "It's what they'd've said, isn't it? ",
    "I'M SURE YOU'LL LIKE IT. ", "In 2024, about 1,234,567 people (roughly 3.5%) moved. ",
    "    return x**2  # square\n", "def f(x):\n", "if (a != b && c <= d) { y += 42; }\n",
    "https://example.com/path?q=1&r=2 ", "\n\n", "\t\tindented\ttext\r\n", "   ",
    "日本語のテキストです。", "汉字和标点，还有数字１２３。", "한국어 문장입니다. ", "Привет, мир! ",
    "नमस्ते दुनिया, यह हिंदी है। ", "ภาษาไทยไม่มีช่องว่าง ", "Ελληνικά κείμενα. ", "مرحبا بالعالم ",
    "😀🎉👍🏽 ", "café naïve résumé ", "ÀÉÎÕÜ àéîõü ", "x\xc2\xa0y\xe3\x80\x80z ", "Z̤͔ͧ̑̓ä͖̭̈̇ ",
    "$$\\frac{a}{b}$$ ", "--- *** !!! ??? ", "CamelCaseIdentifier snake_case_name ", "ABC123def456 ",
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    double mb = argc > 1 ? atof(argv[1]) : 1.0;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    size_t target = (size_t)(mb * 1e6), len = 0, n_snip = sizeof snippets / sizeof snippets[0];
    char *text = malloc(target + 256);
    uint32_t seed = 1;
    while (len < target) {
        seed = seed * 1664525u + 1013904223u;
        const char *s = snippets[(seed >> 8) % n_snip];
        size_t k = strlen(s);
        memcpy(text + len, s, k);
        len += k;
    }
    uint32_t *cps = malloc(len * sizeof *cps);
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_decode(text + i, len - i, &cps[n++]);
        i += k > 0 ? (size_t)k : 1;
    }
    printf("text: %zu bytes, %zu code points; best of %d rounds\n", len, n, rounds);

    struct { const char *name, *pattern; pretok_kind kind; } cases[] = {
        { "gpt2", gpt2, PRETOK_GPT2 }, { "llama3", llama3, PRETOK_LLAMA3 }, { "o200k", o200k, PRETOK_GPT4O },
    };
    ts_error err;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        regex *re;
        if (regex_compile(cases[c].pattern, strlen(cases[c].pattern), &re, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
        regex_matches m = { 0 };
        pretok_pieces p = { 0 };
        double best_re = 1e9, best_hand = 1e9;
        for (int r = 0; r < rounds; r++) {
            double t0 = now();
            if (regex_find_all(re, cps, n, &m, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
            double t1 = now();
            if (pretokenize(cases[c].kind, cps, n, &p, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
            double t2 = now();
            if (t1 - t0 < best_re) best_re = t1 - t0;
            if (t2 - t1 < best_hand) best_hand = t2 - t1;
        }
        printf("%-7s regex %7.1f MB/s (%zu matches)   hand-written %s %7.1f MB/s (%zu pieces)   ratio %.2fx\n",
               cases[c].name, len / best_re / 1e6, m.n, pretokenize_name(cases[c].kind), len / best_hand / 1e6,
               p.n, best_re / best_hand);
        regex_matches_free(&m);
        pretokenize_pieces_free(&p);
        regex_free(re);
    }
    free(cps);

    /* the whole encode, through each tokenizer.json's pipeline and through the hand-written split */
    const char *fixtures = argc > 3 ? argv[3] : "../shared/fixtures";
    struct { const char *dir, *pre; } tok[] = { { "llama3", "llama3" }, { "gptoss", "gpt-4o" } };
    char tmp[] = "/tmp/tessera_bench_regex_XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 1; }
    int32_t *ids = malloc((len + 16) * sizeof *ids), *ids2 = malloc((len + 16) * sizeof *ids2);
    for (size_t c = 0; c < sizeof tok / sizeof tok[0]; c++) {
        char cmd[1400], path[600];
        snprintf(path, sizeof path, "%s/tokenizer.json", tmp);
        snprintf(cmd, sizeof cmd, "gzip -dc '%s/tokenizers/hf/%s/tokenizer.json.gz' > '%s'", fixtures, tok[c].dir, path);
        vocab v;
        if (system(cmd) != 0 || tokenizer_json_read(path, &v, &err)) {
            printf("%-7s encode: skipped (no %s/tokenizers/hf/%s/tokenizer.json.gz)\n", tok[c].dir, fixtures, tok[c].dir);
            continue;
        }
        unlink(path);
        double best[2] = { 1e9, 1e9 };
        int count[2] = { 0, 0 };
        for (int side = 0; side < 2; side++) {
            if (side == 1) {   /* the same vocabulary, split by the hand-written matcher of its GGUF name */
                pipeline_free(v.pipeline);
                v.pipeline = NULL;
                free(v.pre);
                v.pre = strdup(tok[c].pre);
            }
            for (int r = 0; r < rounds; r++) {
                double t0 = now();
                count[side] = tokenizer_encode(&v, text, len, false, false, side ? ids2 : ids, (int)len + 16, &err);
                double t = now() - t0;
                if (count[side] < 0) { fprintf(stderr, "%s\n", err.msg); return 1; }
                if (t < best[side]) best[side] = t;
            }
        }
        int same = count[0] == count[1] && !memcmp(ids, ids2, (size_t)count[0] * sizeof *ids);
        printf("%-7s encode: tokenizer.json (regex) %6.1f MB/s   hand-written %-7s %6.1f MB/s   ratio %.2fx   (%d tokens, %s)\n",
               tok[c].dir, len / best[0] / 1e6, tok[c].pre, len / best[1] / 1e6, best[0] / best[1], count[0],
               same ? "the same ids" : "other ids: llama.cpp's GGUF split differs on this text");
        vocab_free(&v);
    }
    rmdir(tmp);
    free(ids);
    free(ids2);
    free(text);
    return 0;
}
