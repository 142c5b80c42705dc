/* Every hand-written pre-tokenizer kind (src/text/pretokenize.c) against the regex list
 * llama.cpp's llama-vocab.cpp gives its tokenizer.ggml.pre names, run through the regex engine with
 * Hugging Face (Oniguruma) semantics by pipeline_from_regexes + pipeline_split (each regex isolating
 * its matches in every current piece, in turn). The piece boundaries must agree byte for byte on
 * every fixture string and on thousands of random strings drawn from an alphabet that crosses every
 * class boundary the matchers look at.
 *
 * The regex lists are llama.cpp's, as it spells them. Where llama.cpp rewrote a tokenizer.json regex
 * (the comment above the list quotes the original), the original is compared too, skipping only the
 * strings holding the characters on which llama.cpp's rewrite, and so the hand-written kind, mean
 * something else:
 *  - (?i:'s|'t|'re|'ve|'m|'ll|'d) became (?:'[sS]|'[tT]|...), ASCII-only: Oniguruma's simple case
 *    folding also lets U+017F (long s, folding to s) follow the apostrophe. Skipped: strings with
 *    U+017F.
 *  - Tekken / o200k: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] became ((?=[\p{L}])([^a-z])) ("a letter but
 *    a-z") and [\p{Ll}\p{Lm}\p{Lo}\p{M}] became ((?=[\p{L}])([^A-Z])) ("a letter but A-Z"): the same
 *    only while every letter is ASCII or Lm/Lo and there are no marks. Skipped: strings with a
 *    non-ASCII Lu, Ll or Lt, a mark, or (o200k's contractions) U+017F.
 * One deviation is not in the regex text but in how llama.cpp runs it:
 *  - A list entry without \p{..} runs through std::wregex after llama.cpp turned every non-ASCII
 *    white space code point into U+000B (so that \s matches it); an explicit character range then
 *    never matches non-ASCII white space. DeepSeek LLM's [　-。] and [ࠀ-一] (U+0800-U+4E00) and
 *    DeepSeek Coder's [ࠀ-一] hold U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000,
 *    which the Oniguruma meaning puts in those runs and llama.cpp (and the hand-written kinds) do not.
 *    Skipped for those two kinds: strings with a white space code point in U+0800-U+4E00. (DeepSeek
 *    V3's explicit ranges, [一-龥぀-ゟ゠-ヿ], and DeepSeek LLM's letter class hold no white space: no
 *    skip.)
 * llama.cpp's other quirks (its collapsed \p{S} lacks '~', its GPT-2 splitter leaves unassigned code
 * points out of [^\s\p{L}\p{N}]) are not followed by the hand-written kinds, which keep the Unicode
 * meaning: no skip, the regex engine is the reference there. */
#include "check.h"
#include "core/unicode.h"
#include "core/utf8.h"
#include "io/file.h"
#include "io/json.h"
#include "text/pipeline.h"
#include "text/pretokenize.h"
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the regex lists (llama.cpp src/llama-vocab.cpp, llm_tokenizer_bpe) ---------------------------- */

#define GPT2_RE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define CONTRACTIONS_ASCII "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define CONTRACTIONS_FOLD "(?i:'s|'t|'re|'ve|'m|'ll|'d)"

static const char *const re_default[] = {
    "[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2_RE, "\\p{N}+", "[0-9][0-9][0-9]",
};
static const char *const re_gpt2[] = { GPT2_RE };
static const char *const re_llama3[] = {
    CONTRACTIONS_ASCII "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const re_qwen2[] = {
    CONTRACTIONS_ASCII "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const re_seed_coder[] = {
    CONTRACTIONS_ASCII "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const re_falcon[] = { "[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2_RE, "[0-9][0-9][0-9]" };
/* DeepSeek LLM's non-ASCII classes are spelled with \x{..} escapes here (the same code points as
 * llama.cpp's UTF-8 literals): several of them (U+1FBE, U+1FD3, U+1FDB, U+1F7D, U+2126, U+212A) have
 * a singleton canonical decomposition, which an editor normalizing to NFC would silently replace,
 * turning the range U+212A-U+212D into U+004B-U+212D and U+1FD0-U+1FD3 into a reversed one. */
static const char *const re_deepseek_llm[] = {
    "[\r\n]",
    "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}"
    "\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}"
    "\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
    "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}"
    "\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}"
    "\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}"
    "\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
    "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}"
    "\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}"
    "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}"
    "\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}"
    "\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}"
    "\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
    "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",   /* [!-/:-~！-／：-～‘-‟　-。] */
    "\\s+$",
    "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+",                               /* [一-龥ࠀ-一가-퟿] */
    "\\p{N}+",
};
static const char *const re_deepseek_coder[] = {
    "[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}",
};
static const char *const re_deepseek3[] = {
    "\\p{N}{1,3}",
    "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",                               /* [一-龥぀-ゟ゠-ヿ] */
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|"
    "\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const re_starcoder[] = { "\\p{N}", GPT2_RE };
/* " ?[^(\s|.,!?…。，、।۔،)]+" */
#define PORO_RE " ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{0964}\\x{06D4}\\x{060C})]+"
static const char *const re_poro[] = { PORO_RE };
static const char *const re_viking[] = { PORO_RE, "\\p{N}" };
#define TEKKEN_UPPER "((?=[\\p{L}])([^a-z]))"
#define TEKKEN_LOWER "((?=[\\p{L}])([^A-Z]))"
static const char *const re_tekken[] = {
    "[^\\r\\n\\p{L}\\p{N}]?" TEKKEN_UPPER "*" TEKKEN_LOWER "+|[^\\r\\n\\p{L}\\p{N}]?" TEKKEN_UPPER "+" TEKKEN_LOWER "*|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const re_gpt4o[] = {
    "[^\\r\\n\\p{L}\\p{N}]?" TEKKEN_UPPER "*" TEKKEN_LOWER "+" CONTRACTIONS_ASCII "?|"
    "[^\\r\\n\\p{L}\\p{N}]?" TEKKEN_UPPER "+" TEKKEN_LOWER "*" CONTRACTIONS_ASCII "?|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

/* The tokenizer.json regexes llama.cpp rewrote (quoted in its comments), and GPT-2's own (whose final
 * \s+ llama.cpp leaves out: its matches, one white space before a non-space, are the unmatched
 * stretches there, i.e. the same pieces). */
static const char *const orig_gpt2[] = { GPT2_RE "|\\s+" };
static const char *const orig_llama3[] = {
    CONTRACTIONS_FOLD "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const orig_qwen2[] = {
    CONTRACTIONS_FOLD "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const orig_seed_coder[] = {
    CONTRACTIONS_FOLD "|[^\r\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\r\n]+|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
};
#define O200K_UPPER "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"
#define O200K_LOWER "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"
static const char *const orig_tekken[] = {
    "[^\\r\\n\\p{L}\\p{N}]?" O200K_UPPER "*" O200K_LOWER "+|[^\\r\\n\\p{L}\\p{N}]?" O200K_UPPER "+" O200K_LOWER "*|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
static const char *const orig_gpt4o[] = {
    "[^\\r\\n\\p{L}\\p{N}]?" O200K_UPPER "*" O200K_LOWER "+" CONTRACTIONS_FOLD "?|"
    "[^\\r\\n\\p{L}\\p{N}]?" O200K_UPPER "+" O200K_LOWER "*" CONTRACTIONS_FOLD "?|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

/* ---- skips ------------------------------------------------------------------------------------------ */

static bool has_long_s(const uint32_t *c, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (c[i] == 0x017F) return true;
    return false;
}
/* non-ASCII white space inside DeepSeek's explicit ranges (wregex path) */
static bool has_ds_space(const uint32_t *c, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (c[i] >= 0x0800 && c[i] <= 0x4E00 && unicode_is_space(c[i])) return true;
    return false;
}
/* a letter or mark the Tekken / o200k rewrite classes differently from the original classes */
static bool cased_char(uint32_t x) {
    int c = unicode_category(x);
    return (x >= 128 && (c == UNICODE_LU || c == UNICODE_LL || c == UNICODE_LT)) || c == UNICODE_MN ||
           c == UNICODE_MC || c == UNICODE_ME;
}
static bool has_cased(const uint32_t *c, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (cased_char(c[i])) return true;
    return false;
}
static bool has_cased_or_long_s(const uint32_t *c, size_t n) { return has_cased(c, n) || has_long_s(c, n); }

/* ---- the cases -------------------------------------------------------------------------------------- */

typedef struct agree_case {
    const char *name;
    pretok_kind kind;
    const char *const *regexes;
    int n;
    bool (*skip)(const uint32_t *, size_t);
    const char *why;              /* the skip's reason, for the report */
    pipeline *p;
    int same, total, skipped;
} agree_case;

#define LIST(a) a, (int)(sizeof a / sizeof a[0])
static agree_case cases[] = {
    { "default", PRETOK_DEFAULT, LIST(re_default), NULL, NULL, NULL, 0, 0, 0 },
    { "gpt-2", PRETOK_GPT2, LIST(re_gpt2), NULL, NULL, NULL, 0, 0, 0 },
    { "llama3", PRETOK_LLAMA3, LIST(re_llama3), NULL, NULL, NULL, 0, 0, 0 },
    { "qwen2", PRETOK_QWEN2, LIST(re_qwen2), NULL, NULL, NULL, 0, 0, 0 },
    { "seed-coder", PRETOK_SEED_CODER, LIST(re_seed_coder), NULL, NULL, NULL, 0, 0, 0 },
    { "falcon", PRETOK_FALCON, LIST(re_falcon), NULL, NULL, NULL, 0, 0, 0 },
    { "deepseek-llm", PRETOK_DEEPSEEK_LLM, LIST(re_deepseek_llm), has_ds_space,
      "non-ASCII white space in U+0800-U+4E00: llama.cpp's wregex ranges never match it", NULL, 0, 0, 0 },
    { "deepseek-coder", PRETOK_DEEPSEEK_CODER, LIST(re_deepseek_coder), has_ds_space,
      "non-ASCII white space in U+0800-U+4E00: llama.cpp's wregex ranges never match it", NULL, 0, 0, 0 },
    { "deepseek-v3", PRETOK_DEEPSEEK3, LIST(re_deepseek3), NULL, NULL, NULL, 0, 0, 0 },
    { "starcoder", PRETOK_STARCODER, LIST(re_starcoder), NULL, NULL, NULL, 0, 0, 0 },
    { "poro", PRETOK_PORO, LIST(re_poro), NULL, NULL, NULL, 0, 0, 0 },
    { "viking", PRETOK_VIKING, LIST(re_viking), NULL, NULL, NULL, 0, 0, 0 },
    { "tekken", PRETOK_TEKKEN, LIST(re_tekken), NULL, NULL, NULL, 0, 0, 0 },
    { "gpt-4o", PRETOK_GPT4O, LIST(re_gpt4o), NULL, NULL, NULL, 0, 0, 0 },
    /* the tokenizer.json originals */
    { "gpt-2 (tokenizer.json regex)", PRETOK_GPT2, LIST(orig_gpt2), NULL, NULL, NULL, 0, 0, 0 },
    { "llama3 (tokenizer.json regex)", PRETOK_LLAMA3, LIST(orig_llama3), has_long_s,
      "U+017F: llama.cpp's contractions are ASCII-only", NULL, 0, 0, 0 },
    { "qwen2 (tokenizer.json regex)", PRETOK_QWEN2, LIST(orig_qwen2), has_long_s,
      "U+017F: llama.cpp's contractions are ASCII-only", NULL, 0, 0, 0 },
    { "seed-coder (tokenizer.json regex)", PRETOK_SEED_CODER, LIST(orig_seed_coder), has_long_s,
      "U+017F: llama.cpp's contractions are ASCII-only", NULL, 0, 0, 0 },
    { "tekken (tokenizer.json regex)", PRETOK_TEKKEN, LIST(orig_tekken), has_cased,
      "non-ASCII Lu/Ll/Lt or marks: llama.cpp's rewritten case classes", NULL, 0, 0, 0 },
    { "gpt-4o (tokenizer.json regex)", PRETOK_GPT4O, LIST(orig_gpt4o), has_cased_or_long_s,
      "non-ASCII Lu/Ll/Lt, marks or U+017F: llama.cpp's rewritten case classes and contractions", NULL, 0, 0, 0 },
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

/* ---- comparing -------------------------------------------------------------------------------------- */

static void print_text(const uint32_t *c, size_t n) {
    printf("#   text:");
    for (size_t i = 0; i < n && i < 80; i++) printf(" %04X", c[i]);
    printf("%s\n", n > 80 ? " ..." : "");
}

static void compare(agree_case *a, const uint32_t *cps, size_t n, const char *what) {
    if (a->skip && a->skip(cps, n)) {
        a->skipped++;
        return;
    }
    ts_error err = { 0 };
    pretok_pieces hand = { 0 };
    regex_matches spans = { 0 };
    bool ok = pretokenize(a->kind, cps, n, &hand, &err) == 0;
    bool split_ok = ok && pipeline_split(a->p, cps, n, &spans, &err) == 0;
    /* the regex pieces tile the text (Isolated never drops anything) and end where the hand-written ones do */
    ok = split_ok && spans.n == hand.n;
    for (size_t i = 0; ok && i < spans.n; i++)
        ok = spans.m[i].start == (i ? spans.m[i - 1].end : 0) && spans.m[i].end == hand.ends[i];
    a->total++;
    a->same += ok;
    if (!ok && a->total - a->same <= 3) {
        printf("# %s: %s splits differently (%zu code points)%s%s\n", a->name, what, n, split_ok ? "" : ": ",
               split_ok ? "" : err.msg);
        print_text(cps, n);
        printf("#   regex:       ");
        for (size_t i = 0; i < spans.n && i < 40; i++) printf(" [%zu,%zu)", spans.m[i].start, spans.m[i].end);
        printf("\n#   hand-written:");
        for (size_t i = 0; i < hand.n && i < 40; i++) printf(" %zu", hand.ends[i]);
        printf("\n");
    }
    pretokenize_pieces_free(&hand);
    regex_matches_free(&spans);
}

static void compare_all(const uint32_t *cps, size_t n, const char *what) {
    for (int i = 0; i < N_CASES; i++) compare(&cases[i], cps, n, what);
}

static void compare_utf8(const char *s, size_t len, const char *what) {
    if (!utf8_valid(s, len, NULL)) return;
    uint32_t *cps = malloc((len + 1) * sizeof *cps);
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_decode(s + i, len - i, &cps[n++]);
        i += k > 0 ? (size_t)k : 1;
    }
    compare_all(cps, n, what);
    free(cps);
}

static void reset_counts(void) {
    for (int i = 0; i < N_CASES; i++) cases[i].same = cases[i].total = cases[i].skipped = 0;
}

/* ---- fixture strings -------------------------------------------------------------------------------- */

/* A .inp file: strings separated by "\n__ggml_vocab_test__\n" lines (the last one followed by one). */
static void inp_strings(const char *path, int *files, int *strings) {
    static const char sep[] = "\n__ggml_vocab_test__\n";
    size_t n, sl = sizeof sep - 1;
    char *data = read_all(path, &n);
    if (!data) return;
    (*files)++;
    size_t end = n, pos = 0;
    if (end >= sl && memcmp(data + end - sl, sep, sl) == 0) end -= sl;
    for (;;) {
        const char *hit = memmem(data + pos, end - pos, sep, sl);
        size_t stop = hit ? (size_t)(hit - data) : end;
        compare_utf8(data + pos, stop - pos, path);
        (*strings)++;
        if (!hit) break;
        pos = stop + sl;
    }
    free(data);
}

/* An encode.jsonl file: the "text" of every line. */
static void jsonl_strings(const char *path, int *files, int *strings) {
    size_t n;
    char *data = read_all(path, &n);
    if (!data) return;
    (*files)++;
    for (char *line = data; line < data + n;) {
        char *nl = memchr(line, '\n', (size_t)(data + n - line));
        size_t ll = nl ? (size_t)(nl - line) : (size_t)(data + n - line);
        json_value *v;
        ts_error err;
        if (ll && json_parse(line, ll, &v, &err) == 0) {
            const json_value *t = json_get(v, "text");
            if (t && t->type == JSON_STRING) {
                compare_utf8(t->str, t->len, path);
                (*strings)++;
            }
            json_free(v);
        }
        line += ll + 1;
    }
    free(data);
}

static void test_fixtures(void) {
    int files = 0, strings = 0;
    char dir[600], path[1400];
    snprintf(dir, sizeof dir, "%s/tokenizers/gguf", fixtures_dir());
    DIR *dh = opendir(dir);
    for (struct dirent *e; dh && (e = readdir(dh));) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".inp") == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            inp_strings(path, &files, &strings);
        }
    }
    if (dh) closedir(dh);
    snprintf(dir, sizeof dir, "%s/tokenizers/hf", fixtures_dir());
    dh = opendir(dir);
    for (struct dirent *e; dh && (e = readdir(dh));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/tests.inp", dir, e->d_name);
        inp_strings(path, &files, &strings);
        snprintf(path, sizeof path, "%s/%s/encode.jsonl", dir, e->d_name);
        jsonl_strings(path, &files, &strings);
    }
    if (dh) closedir(dh);
    CHECK(files >= 12 && strings >= 600, "%d fixture files, %d strings", files, strings);
    for (int i = 0; i < N_CASES; i++) {
        agree_case *a = &cases[i];
        CHECK(a->total >= 100 && a->same == a->total,
              "%s: hand-written and regex list split %d/%d fixture strings alike (%d skipped%s%s)", a->name, a->same,
              a->total, a->skipped, a->skipped ? ": " : "", a->skipped ? a->why : "");
    }
    reset_counts();
}

/* ---- random strings --------------------------------------------------------------------------------- */

static uint32_t rng_state = 20240531;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* Single code points on both sides of every class boundary the matchers test. */
static const uint32_t alphabet[] = {
    /* ASCII letters (contraction letters in both cases), digits, apostrophes */
    'a', 'b', 'd', 'e', 'l', 'm', 'r', 's', 't', 'v', 'x', 'z', 'A', 'D', 'E', 'L', 'M', 'R', 'S', 'T', 'V', 'Z',
    '0', '1', '5', '9', '\'', '\'', '\'',
    /* ASCII white space and controls */
    ' ', ' ', ' ', ' ', '\t', '\n', '\n', '\r', 0x0B, 0x0C, 0x00, 0x01, 0x1F, 0x7F,
    /* ASCII punctuation and symbols (Falcon's and the default list's extras, DeepSeek's classes) */
    '.', ',', '!', '?', '(', ')', '|', '/', '-', '_', '"', '#', '@', '[', '\\', ']', '{', '}', ':', ';',
    '$', '+', '<', '=', '>', '^', '`', '~', '%', '&', '*',
    /* non-ASCII white space (inside and outside DeepSeek's explicit ranges) */
    0x85, 0xA0, 0x1680, 0x2000, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
    /* letters: Lu, Ll, Lt, Lm, Lo; U+017F and U+212A (fold to s and k); U+0130 */
    0xC9, 0xE9, 0xDF, 0x03A3, 0x03C3, 0x03C2, 0x0416, 0x0436, 0x01C5, 0x02B0, 0x3005, 0x30FC, 0x017F, 0x212A, 0x0130,
    0x00AA, 0x01BB, 0x0294, 0x0531, 0x0561, 0x10A0, 0x13A0, 0x1F7D, 0x1FBE, 0x1FD3, 0x2126, 0x2102, 0xFF21, 0xFF41,
    0x10400, 0x1E900, 0x00B5,
    /* CJK, kana, Hangul, Devanagari, Thai, Arabic: inside and outside DeepSeek's ranges */
    0x4E00, 0x4E2D, 0x6587, 0x9FA5, 0x9FA6, 0x3400, 0x20000, 0x3042, 0x309F, 0x30A0, 0x30AB, 0x30FB, 0x30FF, 0x3041,
    0xAC00, 0xD7A3, 0xD7B0, 0x0800, 0x07FF, 0x0928, 0x092E, 0x0E20, 0x0E32, 0x0627, 0x0644,
    /* marks: Mn, Mc, Me, a variation selector */
    0x0301, 0x0308, 0x093E, 0x094D, 0x0E34, 0x20DD, 0xFE0F,
    /* non-ASCII numbers: Nd, Nl, No (some inside DeepSeek's U+0800-U+4E00 range) */
    0x0663, 0x0966, 0xFF11, 0x2160, 0x00BD, 0x00B2, 0x3007,
    /* non-ASCII punctuation: Poro's and DeepSeek's, and others */
    0x2026, 0x3002, 0xFF0C, 0x3001, 0x0964, 0x06D4, 0x060C, 0x2018, 0x201C, 0x201F, 0x2020, 0xFF01, 0xFF0F, 0xFF10,
    0xFF1A, 0xFF5E, 0xFF5F, 0x00AB, 0x00A1, 0x2014,
    /* symbols, emoji, format and other code points */
    0x00A9, 0x20AC, 0x00D7, 0x02C6, 0x1F600, 0x1F44D, 0x1F3FD, 0x200D, 0x200B, 0x00AD, 0xFFFD, 0x0378, 0xE000,
};

/* Runs and pairs that single code points seldom make. */
static const char *const fragments[] = {
    "'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'Ve", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D", "'x",
    "'\xc5\xbf", "'r", "'l", "''", " '", " 's",
    "\r\n", "\n\n", "  ", "   ", " \t ", "\t\n ", " \n", "\n ", " \r\n  ", "\xc2\xa0 ", " \xe3\x80\x80",
    "123", "1234", "12345678", "007", " 42", "\xd9\xa3\xd9\xa4\xd9\xa5\xd9\xa6",
    "...", "!!", "?!", "//", "a/b", ".\n/", ":\r\n//x", "!\n\n", "http://x.y/z", " (x)", "$+<=>^~|`", "\xe2\x80\xa6", "\xe3\x80\x82\xef\xbc\x8c",
    "Hello", "WORLD", "camelCase", "XMLHttp", "iPhone", "\xc3\x89t\xc3\xa9", "\xce\xa3\xcf\x83",
    "e\xcc\x81", "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87", "\xe4\xb8\xad\xe6\x96\x87",
    "\xe3\x81\x93\xe3\x82\x8c\xe3\x82\xab\xe3\x83\x8a", "\xed\x95\x9c\xea\xb5\xad", "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",
    "\xef\xbc\xa1\xef\xbd\x81\xef\xbc\x81",
};

/* Which code points a string may hold: every one, none of the skipped ones of DeepSeek and the
 * ASCII-only contractions, or none the Tekken / o200k rewrite sees differently either. */
enum { FLAVOR_ALL, FLAVOR_NO_DS_SPACE, FLAVOR_PLAIN };
static bool allowed(uint32_t c, int flavor) {
    if (flavor == FLAVOR_ALL) return true;
    if (c == 0x017F || (c >= 0x0800 && c <= 0x4E00 && unicode_is_space(c))) return false;
    return flavor == FLAVOR_NO_DS_SPACE || !cased_char(c);
}

static size_t random_text(uint32_t *out, size_t cap, int flavor) {
    size_t n = 0, parts = rnd() % 24;
    for (size_t p = 0; p < parts; p++) {
        uint32_t tmp[64];
        size_t k = 0;
        if (rnd() % 4 == 0) {
            const char *f = fragments[rnd() % (sizeof fragments / sizeof fragments[0])];
            for (size_t i = 0, len = strlen(f); i < len;) {
                int b = utf8_decode(f + i, len - i, &tmp[k++]);
                i += b > 0 ? (size_t)b : 1;
            }
        } else {
            uint32_t c = alphabet[rnd() % (sizeof alphabet / sizeof alphabet[0])];
            size_t reps = rnd() % 8 == 0 ? 2 + rnd() % 4 : 1;      /* runs of one code point now and then */
            for (size_t r = 0; r < reps; r++) tmp[k++] = c;
        }
        bool ok = true;
        for (size_t i = 0; i < k; i++) ok = ok && allowed(tmp[i], flavor);
        if (!ok || n + k > cap) continue;
        memcpy(out + n, tmp, k * sizeof *tmp);
        n += k;
    }
    return n;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_random(void) {
    const int count = 9000;
    double t0 = seconds();
    for (int t = 0; t < count; t++) {
        uint32_t text[160];
        size_t n = random_text(text, sizeof text / sizeof text[0], t % 3);
        compare_all(text, n, "a random string");
    }
    for (int i = 0; i < N_CASES; i++) {
        agree_case *a = &cases[i];
        CHECK(a->total >= count / 3 && a->same == a->total,
              "%s: hand-written and regex list split %d/%d random strings alike (%d skipped%s%s)", a->name, a->same,
              a->total, a->skipped, a->skipped ? ": " : "", a->skipped ? a->why : "");
    }
    printf("# %d random strings through %d cases in %.2f s\n", count, N_CASES, seconds() - t0);
    reset_counts();
}

/* A few hand-picked strings for each boundary, so that a failure names a short case. */
static void test_examples(void) {
    static const char *const texts[] = {
        "", " ", "a", "'", "\n", "don't I'LL we'Re 'ſ ſ's", "  x\t\ty \n\n z  ", "a\xc2\xa0\xc2\xa0" "b\xe3\x80\x80\xe3\x80\x80",
        "x\x00y \x00", "1234567 \xd9\xa3\xd9\xa4\xd9\xa5\xd9\xa6 \xe2\x85\xa0\xe2\x85\xa1", "foo.bar(baz)|qux",
        "\xe4\xb8\xad\xe6\x96\x87\xe3\x80\x82\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xa7\xe3\x81\x99",
        "HTTPServer getHTTP2Response \xc3\x89TAT\xc3\xa9t\xc3\xa9", "a.b _cd ~~e ~f", " \xe3\x80\x80\xef\xbc\x81x",
        "\xe2\x80\x80\xe4\xb8\xad \xe1\x9a\x80\xea\xb0\x80", "e\xcc\x81\xcc\x81 \xcc\x81x", "\r\n\r\n  \r \n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) compare_utf8(texts[i], strlen(texts[i]), "an example");
    /* the NUL string is cut short by strlen: once more with its length */
    compare_utf8("x\x00y \x00", 5, "an example with NUL");
    for (int i = 0; i < N_CASES; i++) {
        agree_case *a = &cases[i];
        CHECK(a->same == a->total, "%s: hand-written and regex list split %d/%d examples alike (%d skipped)", a->name,
              a->same, a->total, a->skipped);
    }
    reset_counts();
}

int main(void) {
    ts_error err = { 0 };
    int compiled = 0;
    for (int i = 0; i < N_CASES; i++) {
        int r = pipeline_from_regexes(cases[i].regexes, cases[i].n, &cases[i].p, &err);
        if (r) printf("# %s: %s\n", cases[i].name, err.msg);
        compiled += r == 0;
    }
    CHECK(compiled == N_CASES, "every regex list compiles (%d/%d)", compiled, N_CASES);
    bool covered[PRETOK_COUNT] = { 0 };
    for (int i = 0; i < N_CASES; i++) covered[cases[i].kind] = true;
    int kinds = 0;
    for (int k = 0; k < PRETOK_COUNT; k++) kinds += covered[k];
    CHECK(kinds == PRETOK_COUNT, "every hand-written kind is compared (%d/%d)", kinds, (int)PRETOK_COUNT);
    if (compiled == N_CASES) {
        test_examples();
        test_fixtures();
        test_random();
    }
    for (int i = 0; i < N_CASES; i++) pipeline_free(cases[i].p);
    CHECK_EXIT();
}
