/* Hand-written versions of the pre-tokenizer regexes llama.cpp uses for byte-level BPE models.
 *
 * Every expression is a matcher: given a position inside a piece it returns the length of the
 * match starting there (0 for none), following ECMAScript semantics (alternatives tried in order,
 * greedy quantifiers that backtrack). The regex text each one implements is quoted above it.
 * Where llama.cpp runs an expression through its "collapsed" std::regex path, non-ASCII
 * whitespace counts as \s and any other code point keeps its general category; where it uses
 * std::wregex without categories, explicit character ranges never match non-ASCII whitespace
 * (llama.cpp turns those into U+000B first). Both are reproduced here. */
#include "text/pretokenize.h"
#include "core/unicode.h"
#include "core/error.h"
#include <stdlib.h>
#include <string.h>

#define NONE 0xFFFFFFFFu     /* "code point" past the end of the piece: belongs to no class */

/* Returns the match length at pos within [pos, end); may set *skip (how far to move on after a
 * failed match, when the matcher knows no match can start sooner). */
typedef size_t (*matcher_fn)(const uint32_t *c, size_t pos, size_t end, size_t *skip);

static inline uint32_t at(const uint32_t *c, size_t i, size_t end) { return i < end ? c[i] : NONE; }

static inline bool is_L(uint32_t x) { return unicode_is_letter(x); }
static inline bool is_N(uint32_t x) { return unicode_is_number(x); }
static inline bool is_P(uint32_t x) { return unicode_is_punct(x); }
static inline bool is_S(uint32_t x) { return unicode_is_symbol(x); }
static inline bool is_M(uint32_t x) { return unicode_is_mark(x); }
static inline bool is_ws(uint32_t x) { return unicode_is_space(x); }
static inline bool is_nl(uint32_t x) { return x == '\r' || x == '\n'; }
/* [^\s\p{L}\p{N}] */
static inline bool is_other(uint32_t x) { return x != NONE && !is_ws(x) && !is_L(x) && !is_N(x); }
static inline bool is_ascii_digit(uint32_t x) { return x >= '0' && x <= '9'; }
static inline bool is_ascii_alpha(uint32_t x) { return (x | 0x20) >= 'a' && (x | 0x20) <= 'z'; }
static inline uint32_t ascii_lower(uint32_t x) { return x >= 'A' && x <= 'Z' ? x + 32 : x; }
/* A code point in an explicit (non-category) character class of a wregex expression. */
static inline bool explicit_ok(uint32_t x) { return x != NONE && !(x > 0x7F && is_ws(x)); }

/* End of the run of code points satisfying pred, starting at p. */
static size_t run(const uint32_t *c, size_t p, size_t end, bool (*pred)(uint32_t)) {
    while (p < end && pred(c[p])) p++;
    return p;
}

/* 's|'t|'re|'ve|'m|'ll|'d (any_case: each letter in either case, as llama.cpp's adaptation of
 * (?i:...) for Llama 3 and Qwen2) */
static size_t contraction(const uint32_t *c, size_t pos, size_t end, bool any_case) {
    if (c[pos] != '\'') return 0;
    uint32_t a = at(c, pos + 1, end), b = at(c, pos + 2, end);
    if (any_case) { a = ascii_lower(a); b = ascii_lower(b); }
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

/* \s*[\r\n]+|\s+(?!\S)|\s+  — the whitespace tail shared by the Llama 3 family. \s*[\r\n]+ ends
 * at the last newline of the whitespace run; \s+(?!\S) leaves the run's last character for the
 * word after it unless the run ends the piece. */
static size_t whitespace_tail(const uint32_t *c, size_t pos, size_t end) {
    size_t k = 0, through_newline = 0;
    while (pos + k < end && is_ws(c[pos + k])) {
        if (is_nl(c[pos + k])) through_newline = k + 1;
        k++;
    }
    if (through_newline) return through_newline;
    if (k >= 2 && pos + k < end) return k - 1;
    return k;
}

/* ---- GPT-2 ---------------------------------------------------------------------------------- */

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S) */
static size_t m_gpt2(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    size_t n = contraction(c, pos, end, false);
    if (n) return n;
    size_t p = pos + (c[pos] == ' ');
    uint32_t x = at(c, p, end);
    if (is_L(x)) return run(c, p, end, is_L) - pos;
    if (is_N(x)) return run(c, p, end, is_N) - pos;
    if (is_other(x)) return run(c, p, end, is_other) - pos;
    size_t k = run(c, pos, end, is_ws) - pos;
    if (k == 0) return 0;
    if (pos + k == end) return k;
    if (k >= 2) return k - 1;
    return 0;     /* one space before a word it could not join: left unmatched */
}

/* ---- Llama 3 family ------------------------------------------------------------------------- */

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
 *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+        ([\r\n]* absent when !newline_tail) */
static size_t llama3_like(const uint32_t *c, size_t pos, size_t end, size_t max_digits,
                          bool newline_tail) {
    size_t n = contraction(c, pos, end, true);
    if (n) return n;
    uint32_t c0 = c[pos], c1 = at(c, pos + 1, end);
    if (is_L(c0)) return run(c, pos, end, is_L) - pos;
    if (!is_nl(c0) && !is_N(c0) && is_L(c1)) return run(c, pos + 1, end, is_L) - pos;
    if (is_N(c0)) {   /* at most max_digits looked at: a long run is otherwise quadratic */
        while (n < max_digits && pos + n < end && is_N(c[pos + n])) n++;
        return n;
    }
    size_t p = pos + (c0 == ' ' && is_other(c1));
    if (is_other(at(c, p, end))) {
        size_t q = run(c, p, end, is_other);
        if (newline_tail) q = run(c, q, end, is_nl);
        return q - pos;
    }
    return whitespace_tail(c, pos, end);
}

static size_t m_llama3(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return llama3_like(c, pos, end, 3, true);
}
static size_t m_qwen2(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return llama3_like(c, pos, end, 1, true);
}
/* Seed-Coder: ... ?[^\s\p{L}\p{N}\r\n]+|... (no newlines after punctuation) */
static size_t m_seed_coder(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return llama3_like(c, pos, end, 1, false);
}

/* ---- small expressions used in several lists ------------------------------------------------ */

/* \p{N} */
static size_t m_one_number(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return is_N(c[pos]) ? 1 : 0;
}
/* \p{N}+ */
static size_t m_numbers(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return run(c, pos, end, is_N) - pos;
}
/* \p{N}{1,3} (looking at 3 code points at most: a scan of the whole run per piece made a long run of
 * digits quadratic, 400k digits in 21 s) */
static size_t m_numbers_upto3(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    size_t n = 0;
    while (n < 3 && pos + n < end && is_N(c[pos + n])) n++;
    return n;
}
/* [0-9][0-9][0-9] */
static size_t m_three_digits(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return is_ascii_digit(c[pos]) && is_ascii_digit(at(c, pos + 1, end)) &&
           is_ascii_digit(at(c, pos + 2, end)) ? 3 : 0;
}
/* [\r\n] */
static size_t m_newline(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return is_nl(c[pos]) ? 1 : 0;
}

/* [\p{P}\$\+<=>\^~\|`]+ (Falcon) */
static bool is_falcon_punct(uint32_t x) {
    return is_P(x) || (x < 0x80 && x && strchr("$+<=>^~|`", (int)x));
}
static size_t m_falcon_punct(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return run(c, pos, end, is_falcon_punct) - pos;
}
/* [\p{P}\$\+<=>\^~\|]+ (llama.cpp's default list) */
static bool is_default_punct(uint32_t x) {
    return is_P(x) || (x < 0x80 && x && strchr("$+<=>^~|", (int)x));
}
static size_t m_default_punct(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return run(c, pos, end, is_default_punct) - pos;
}

/* \s?X+ for a class X that never holds whitespace */
static size_t space_then_run(const uint32_t *c, size_t pos, size_t end, bool (*pred)(uint32_t)) {
    if (is_ws(c[pos]) && pred(at(c, pos + 1, end))) return run(c, pos + 1, end, pred) - pos;
    return run(c, pos, end, pred) - pos;
}

/* ---- DeepSeek ------------------------------------------------------------------------------- */

typedef struct cp_range { uint32_t lo, hi; } cp_range;

static bool in_ranges(uint32_t x, const cp_range *r, size_t n) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x < r[mid].lo) hi = mid;
        else if (x > r[mid].hi) lo = mid + 1;
        else return true;
    }
    return false;
}

/* The letter class of DeepSeek LLM's second expression, as written in its tokenizer.json
 * (sorted, disjoint). */
static const cp_range deepseek_letters[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
    {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377},
    {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556},
    {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF},
    {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
    {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128},
    {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
    {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787},
    {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
/* [!-/:-~！-／：-～‘-‟　-。] */
static const cp_range deepseek_punct[] = {
    {0x21, 0x2F}, {0x3A, 0x7E}, {0x2018, 0x201F}, {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};
/* [一-龥ࠀ-一가-퟿] */
static const cp_range deepseek_cjk[] = { {0x800, 0x4E00}, {0x4E00, 0x9FA5}, {0xAC00, 0xD7FF} };
/* [一-龥぀-ゟ゠-ヿ] (DeepSeek V3) */
static const cp_range deepseek3_cjk[] = { {0x3040, 0x309F}, {0x30A0, 0x30FF}, {0x4E00, 0x9FA5} };

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
static bool is_ds_letter(uint32_t x) { return explicit_ok(x) && in_ranges(x, deepseek_letters, N_OF(deepseek_letters)); }
static bool is_ds_punct(uint32_t x) { return explicit_ok(x) && in_ranges(x, deepseek_punct, N_OF(deepseek_punct)); }
static bool is_ds_cjk(uint32_t x) { return explicit_ok(x) && in_ranges(x, deepseek_cjk, N_OF(deepseek_cjk)); }
static bool is_ds3_cjk(uint32_t x) { return explicit_ok(x) && in_ranges(x, deepseek3_cjk, N_OF(deepseek3_cjk)); }

/* \s?[A-Za-zµÀ-Ö...]+ */
static size_t m_ds_letters(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return space_then_run(c, pos, end, is_ds_letter);
}
/* \s?[!-/:-~！-／：-～‘-‟　-。]+ */
static size_t m_ds_punct(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return space_then_run(c, pos, end, is_ds_punct);
}
/* \s+$ */
static size_t m_space_to_end(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    size_t k = run(c, pos, end, is_ws) - pos;
    if (k > 0 && pos + k == end) return k;
    *skip = k ? k : 1;      /* no position inside this run reaches the end either */
    return 0;
}
/* [一-龥ࠀ-一가-퟿]+ */
static size_t m_ds_cjk(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return run(c, pos, end, is_ds_cjk) - pos;
}
/* \s?\p{L}+ */
static size_t m_space_letters(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return space_then_run(c, pos, end, is_L);
}
/* \s?\p{P}+ */
static size_t m_space_punct(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return space_then_run(c, pos, end, is_P);
}
/* [一-龥぀-ゟ゠-ヿ]+ */
static size_t m_ds3_cjk(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return run(c, pos, end, is_ds3_cjk) - pos;
}

static bool is_ascii_punct(uint32_t x) {
    return (x >= 0x21 && x <= 0x2F) || (x >= 0x3A && x <= 0x40) || (x >= 0x5B && x <= 0x60) ||
           (x >= 0x7B && x <= 0x7E);
}
static bool is_ascii_alpha_pred(uint32_t x) { return is_ascii_alpha(x); }
static bool is_letter_or_mark(uint32_t x) { return is_L(x) || is_M(x); }
static bool is_punct_or_symbol(uint32_t x) { return is_P(x) || is_S(x); }

/* [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
 *  ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t m_deepseek3(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    uint32_t c0 = c[pos], c1 = at(c, pos + 1, end);
    if (is_ascii_punct(c0) && is_ascii_alpha(c1)) return run(c, pos + 1, end, is_ascii_alpha_pred) - pos;
    if (is_letter_or_mark(c0)) return run(c, pos, end, is_letter_or_mark) - pos;
    if (!is_nl(c0) && !is_L(c0) && !is_P(c0) && !is_S(c0) && is_letter_or_mark(c1))
        return run(c, pos + 1, end, is_letter_or_mark) - pos;
    size_t p = pos + (c0 == ' ' && is_punct_or_symbol(c1));
    if (is_punct_or_symbol(at(c, p, end)))
        return run(c, run(c, p, end, is_punct_or_symbol), end, is_nl) - pos;
    return whitespace_tail(c, pos, end);
}

/* ---- Poro / Bloom / Viking ------------------------------------------------------------------ */

/* [^(\s|.,!?…。，、।۔،)] */
static bool is_poro_word(uint32_t x) {
    if (x == NONE || is_ws(x)) return false;
    /* U+0000 is outside the class, so a word character (strchr would find the terminator) */
    if (x < 0x80) return x == 0 || !strchr("(|.,!?)", (int)x);
    return x != 0x2026 && x != 0x3002 && x != 0xFF0C && x != 0x3001 && x != 0x0964 &&
           x != 0x06D4 && x != 0x060C;
}
/*  ?[^(\s|.,!?…。，、।۔،)]+ */
static size_t m_poro(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    size_t p = pos + (c[pos] == ' ' && is_poro_word(at(c, pos + 1, end)));
    return run(c, p, end, is_poro_word) == p ? 0 : run(c, p, end, is_poro_word) - pos;
}

/* ---- Tekken / GPT-4o ------------------------------------------------------------------------ */

/* llama.cpp rewrites [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] as "a letter that is not a-z" and
 * [\p{Ll}\p{Lm}\p{Lo}\p{M}] as "a letter that is not A-Z"; these follow that rewrite. */
static bool is_not_lower(uint32_t x) { return is_L(x) && !(x >= 'a' && x <= 'z'); }
static bool is_not_upper(uint32_t x) { return is_L(x) && !(x >= 'A' && x <= 'Z'); }

/* End of U*L+ at p (U = is_not_lower, L = is_not_upper, greedy with backtracking), 0 if none. */
static size_t upper_star_lower_plus(const uint32_t *c, size_t p, size_t end) {
    size_t a = run(c, p, end, is_not_lower);
    if (is_not_upper(at(c, a, end))) return run(c, a, end, is_not_upper);
    for (size_t j = a; j > p; j--)          /* give back U's until an L can start */
        if (is_not_upper(c[j - 1])) return j;
    return 0;
}
/* End of U+L* at p, 0 if none. */
static size_t upper_plus_lower_star(const uint32_t *c, size_t p, size_t end) {
    size_t a = run(c, p, end, is_not_lower);
    return a == p ? 0 : run(c, a, end, is_not_upper);
}

/* [^\r\n\p{L}\p{N}]?U*L+|[^\r\n\p{L}\p{N}]?U+L*  (each optionally followed by a contraction) */
static size_t cased_word(const uint32_t *c, size_t pos, size_t end, bool contraction_suffix) {
    uint32_t c0 = c[pos];
    size_t start = !is_nl(c0) && !is_L(c0) && !is_N(c0) ? pos + 1 : pos;
    size_t e = upper_star_lower_plus(c, start, end);
    if (!e) e = upper_plus_lower_star(c, start, end);
    if (!e) return 0;
    if (contraction_suffix && e < end) e += contraction(c, e, end, true);
    return e - pos;
}

/* [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|
 * [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}|
 *  ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static bool is_nl_or_slash(uint32_t x) { return is_nl(x) || x == '/'; }
static size_t tekken_like(const uint32_t *c, size_t pos, size_t end, bool gpt4o) {
    size_t n = cased_word(c, pos, end, gpt4o);
    if (n) return n;
    if (is_N(c[pos])) {   /* at most max looked at, as in llama3_like */
        const size_t max = gpt4o ? 3 : 1;
        while (n < max && pos + n < end && is_N(c[pos + n])) n++;
        return n;
    }
    size_t p = pos + (c[pos] == ' ' && is_other(at(c, pos + 1, end)));
    if (is_other(at(c, p, end))) return run(c, run(c, p, end, is_other), end, is_nl_or_slash) - pos;
    return whitespace_tail(c, pos, end);
}
static size_t m_tekken(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return tekken_like(c, pos, end, false);
}
/* GPT-4o: as tekken with (?i:'s|'t|'re|'ve|'m|'ll|'d)? after each word form and \p{N}{1,3} */
static size_t m_gpt4o(const uint32_t *c, size_t pos, size_t end, size_t *skip) {
    return tekken_like(c, pos, end, true);
}

/* ---- kinds ---------------------------------------------------------------------------------- */

#define MAX_STEPS 6
typedef struct pretok_def { const char *name; matcher_fn steps[MAX_STEPS]; } pretok_def;

static const pretok_def defs[PRETOK_COUNT] = {
    [PRETOK_DEFAULT] = { "default", { m_default_punct, m_gpt2, m_numbers, m_three_digits } },
    [PRETOK_GPT2] = { "gpt-2", { m_gpt2 } },
    [PRETOK_LLAMA3] = { "llama3", { m_llama3 } },
    [PRETOK_QWEN2] = { "qwen2", { m_qwen2 } },
    [PRETOK_SEED_CODER] = { "seed-coder", { m_seed_coder } },
    [PRETOK_FALCON] = { "falcon", { m_falcon_punct, m_gpt2, m_three_digits } },
    [PRETOK_DEEPSEEK_LLM] = { "deepseek-llm", { m_newline, m_ds_letters, m_ds_punct, m_space_to_end,
                                                m_ds_cjk, m_numbers } },
    [PRETOK_DEEPSEEK_CODER] = { "deepseek-coder", { m_newline, m_space_letters, m_space_punct,
                                                    m_ds_cjk, m_one_number } },
    [PRETOK_DEEPSEEK3] = { "deepseek-v3", { m_numbers_upto3, m_ds3_cjk, m_deepseek3 } },
    [PRETOK_STARCODER] = { "starcoder", { m_one_number, m_gpt2 } },
    [PRETOK_PORO] = { "poro-chat", { m_poro } },
    [PRETOK_VIKING] = { "viking", { m_poro, m_one_number } },
    [PRETOK_TEKKEN] = { "tekken", { m_tekken } },
    [PRETOK_GPT4O] = { "gpt-4o", { m_gpt4o } },
};

typedef struct pretok_alias { const char *name; pretok_kind kind; bool ignore_merges; } pretok_alias;

/* tokenizer.ggml.pre names -> the hand-written kinds, as llama.cpp maps them. Each kind keeps llama.cpp's GGUF semantics where
 * they differ from Hugging Face's for the same tokenizer (test_pretokenize_agree.c holds every kind to
 * its regex list and skips only these):
 *  - llama3, qwen2, seed-coder, tekken, gpt-4o: the contractions (?i:'s|'t|...) fold ASCII only
 *    (Oniguruma also lets U+017F, long s, match 's');
 *  - tekken, gpt-4o: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] is "a letter but a-z" and
 *    [\p{Ll}\p{Lm}\p{Lo}\p{M}] "a letter but A-Z" (other for non-ASCII cased letters and marks);
 *  - deepseek-llm, deepseek-coder: explicit ranges hold no non-ASCII white space (std::wregex).
 * A tokenizer.json of these models runs Hugging Face's meaning through the regex engine instead. */
static const pretok_alias aliases[] = {
    { "default", PRETOK_DEFAULT, false },
    { "llama3", PRETOK_LLAMA3, true }, { "llama-v3", PRETOK_LLAMA3, true },
    { "llama-bpe", PRETOK_LLAMA3, true }, { "falcon3", PRETOK_LLAMA3, true },
    { "falcon-h1", PRETOK_LLAMA3, true }, { "pixtral", PRETOK_LLAMA3, true },
    { "midm-2.0", PRETOK_LLAMA3, true }, { "lfm2", PRETOK_LLAMA3, true },
    { "dbrx", PRETOK_LLAMA3, false }, { "smaug-bpe", PRETOK_LLAMA3, false },
    { "glm4", PRETOK_LLAMA3, false }, { "chatglm-bpe", PRETOK_LLAMA3, false },
    { "deepseek-llm", PRETOK_DEEPSEEK_LLM, false },
    { "deepseek-coder", PRETOK_DEEPSEEK_CODER, false },
    { "deepseek-v3", PRETOK_DEEPSEEK3, false }, { "hunyuan-dense", PRETOK_DEEPSEEK3, false },
    { "falcon", PRETOK_FALCON, false },
    { "gpt-2", PRETOK_GPT2, false }, { "mpt", PRETOK_GPT2, false }, { "olmo", PRETOK_GPT2, false },
    { "jais", PRETOK_GPT2, false }, { "phi-2", PRETOK_GPT2, false }, { "jina-es", PRETOK_GPT2, false },
    { "jina-de", PRETOK_GPT2, false }, { "gigachat", PRETOK_GPT2, false },
    { "jina-v2-es", PRETOK_GPT2, false }, { "jina-v2-de", PRETOK_GPT2, false },
    { "jina-v1-en", PRETOK_GPT2, false }, { "jina-v2-code", PRETOK_GPT2, false },
    { "roberta-bpe", PRETOK_GPT2, false }, { "a.x-4.0", PRETOK_GPT2, false },
    { "mellum", PRETOK_GPT2, false }, { "exaone4", PRETOK_GPT2, false },
    { "trillion", PRETOK_GPT2, false }, { "granite-docling", PRETOK_GPT2, false },
    { "starcoder", PRETOK_STARCODER, false }, { "refact", PRETOK_STARCODER, false },
    { "command-r", PRETOK_STARCODER, false }, { "smollm", PRETOK_STARCODER, false },
    { "codeshell", PRETOK_STARCODER, false }, { "exaone", PRETOK_STARCODER, false },
    { "minerva-7b", PRETOK_STARCODER, false },
    { "qwen2", PRETOK_QWEN2, false }, { "deepseek-r1-qwen", PRETOK_QWEN2, false },
    { "kormo", PRETOK_QWEN2, false }, { "stablelm2", PRETOK_QWEN2, false },
    { "megrez", PRETOK_QWEN2, false }, { "hunyuan", PRETOK_QWEN2, false },
    { "grok-2", PRETOK_QWEN2, false }, { "bailingmoe", PRETOK_QWEN2, false },
    { "bailingmoe2", PRETOK_QWEN2, false }, { "llada-moe", PRETOK_QWEN2, false },
    { "seed-coder", PRETOK_SEED_CODER, false },
    { "poro-chat", PRETOK_PORO, false }, { "bloom", PRETOK_PORO, false },
    { "gpt3-finnish", PRETOK_PORO, false },
    { "viking", PRETOK_VIKING, false },
    { "tekken", PRETOK_TEKKEN, true },
    { "gpt-4o", PRETOK_GPT4O, false }, { "llama4", PRETOK_GPT4O, false },
    { "minimax-m2", PRETOK_GPT4O, false },
};

/* tokenizer.ggml.pre names with no hand-written matcher: the regexes llama.cpp lists for them, run by
 * the regex engine (pipeline.h) with Hugging Face's semantics, each isolating its matches in turn. */
static const char *const qwen35_regexes[] = {
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" };
static const struct { const char *name; const char *const *regexes; int n; bool ignore_merges; } regex_names[] = {
    { "qwen35", qwen35_regexes, 1, false },   /* Qwen3.5 / 3.6: marks (\p{M}) inside words */
};

bool pretokenize_regexes(const char *name, const char *const **regexes, int *n, bool *ignore_merges) {
    for (size_t i = 0; name && i < N_OF(regex_names); i++)
        if (strcmp(regex_names[i].name, name) == 0) {
            *regexes = regex_names[i].regexes;
            *n = regex_names[i].n;
            *ignore_merges = regex_names[i].ignore_merges;
            return true;
        }
    return false;
}

int pretokenize_lookup(const char *name, pretok_info *out, ts_error *err) {
    if (!name || !*name) name = "default";    /* llama.cpp's choice for a missing name */
    for (size_t i = 0; i < N_OF(aliases); i++) {
        if (strcmp(aliases[i].name, name) == 0) {
            out->kind = aliases[i].kind;
            out->ignore_merges = aliases[i].ignore_merges;
            return 0;
        }
    }
    return ts_fail(err, "unsupported BPE pre-tokenizer \"%.64s\" (tokenizer.ggml.pre)", name);
}

const char *pretokenize_name(pretok_kind kind) {
    return kind >= 0 && kind < PRETOK_COUNT ? defs[kind].name : "?";
}

/* ---- splitting ------------------------------------------------------------------------------ */

static int pieces_push(pretok_pieces *p, size_t end) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        size_t *ends = realloc(p->ends, cap * sizeof *ends);
        if (!ends) return -1;
        p->ends = ends;
        p->cap = cap;
    }
    p->ends[p->n++] = end;
    return 0;
}

/* Applies one expression to every piece of in, writing the finer split to out. */
static int split_step(matcher_fn match, const uint32_t *cps, const pretok_pieces *in, pretok_pieces *out) {
    out->n = 0;
    size_t start = 0;
    for (size_t i = 0; i < in->n; i++) {
        size_t end = in->ends[i], pos = start, unmatched_from = start;
        while (pos < end) {
            size_t skip = 1;
            size_t len = match(cps, pos, end, &skip);
            if (len) {
                if (unmatched_from < pos && pieces_push(out, pos)) return -1;
                pos += len;
                if (pieces_push(out, pos)) return -1;
                unmatched_from = pos;
            } else {
                pos += skip < end - pos ? skip : end - pos;
            }
        }
        if (unmatched_from < end && pieces_push(out, end)) return -1;
        start = end;
    }
    return 0;
}

int pretokenize(pretok_kind kind, const uint32_t *cps, size_t n, pretok_pieces *out, ts_error *err) {
    if (kind < 0 || kind >= PRETOK_COUNT) return ts_fail(err, "bad pre-tokenizer kind %d", (int)kind);
    out->n = 0;
    if (n == 0) return 0;
    if (pieces_push(out, n)) return ts_fail(err, "out of memory pre-tokenizing");
    pretok_pieces other = { 0 };
    for (int s = 0; s < MAX_STEPS && defs[kind].steps[s]; s++) {
        if (split_step(defs[kind].steps[s], cps, out, &other)) {
            pretokenize_pieces_free(&other);
            return ts_fail(err, "out of memory pre-tokenizing");
        }
        pretok_pieces swap = *out;
        *out = other;
        other = swap;
    }
    pretokenize_pieces_free(&other);
    return 0;
}

void pretokenize_pieces_free(pretok_pieces *p) {
    free(p->ends);
    p->ends = NULL;
    p->n = p->cap = 0;
}
