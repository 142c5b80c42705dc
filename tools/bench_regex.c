/* Splitting speed of the regex engine (src/text/regex.c) against the hand-written pre-tokenizer
 * matchers (src/text/pretokenize.c) on the same ~1 MB of mixed-script text: the GPT-2 regex against
 * PRETOK_GPT2, the Llama 3 regex against PRETOK_LLAMA3 and the o200k (gpt-oss) regex against
 * PRETOK_GPT4O. MB/s of UTF-8 input, best of several rounds, after decoding to code points (both
 * sides get code points).
 *
 *   build/opt/bench_regex [MB] [ROUNDS]
 */
#include "text/pretokenize.h"
#include "text/regex.h"
#include "core/utf8.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    free(text);
    return 0;
}
