/* The regex engine (src/text/regex.c) and the Unicode tables it reads: every construct with
 * positive and negative cases, Oniguruma's find_iter handling of empty matches, the refusals, the
 * work cap, agreement of the fast and the memoizing programs, and threads sharing one compiled
 * regex. (Agreement with the hand-written pre-tokenizers: test_pretokenize_agree.c.) */
#include "check.h"
#include "core/unicode.h"
#include "core/utf8.h"
#include "io/file.h"
#include "io/json.h"
#include "text/pretokenize.h"
#include "text/regex.h"
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------------------------------ */

static size_t decode(const char *s, size_t len, uint32_t *out) {
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_decode(s + i, len - i, &out[n++]);
        i += k > 0 ? (size_t)k : 1;
    }
    return n;
}

/* Matches of pattern in text, written as "{m}{m}..." (the matched text of each, in order). */
static const char *all(const char *pattern, const char *text) {
    static char out[4096];
    uint32_t cps[1024];
    size_t n = decode(text, strlen(text), cps);
    regex *re;
    ts_error err;
    if (regex_compile(pattern, strlen(pattern), &re, &err)) {
        snprintf(out, sizeof out, "error: %s", err.msg);
        return out;
    }
    regex_matches m = { 0 };
    size_t w = 0;
    out[0] = 0;
    if (regex_find_all(re, cps, n, &m, &err)) {
        snprintf(out, sizeof out, "error: %s", err.msg);
    } else {
        for (size_t i = 0; i < m.n && w + 64 < sizeof out; i++) {
            out[w++] = '{';
            for (size_t k = m.m[i].start; k < m.m[i].end; k++) w += (size_t)utf8_encode(cps[k], out + w);
            out[w++] = '}';
        }
        out[w] = 0;
    }
    regex_matches_free(&m);
    regex_free(re);
    return out;
}

/* s with control characters as \n, \xHH (test messages stay one line); rotates four buffers. */
static const char *esc(const char *s) {
    static char bufs[4][1024];
    static int which;
    char *out = bufs[which++ & 3];
    size_t w = 0;
    for (; *s && w + 8 < sizeof bufs[0]; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n') w += (size_t)snprintf(out + w, 8, "\\n");
        else if (c == '\r') w += (size_t)snprintf(out + w, 8, "\\r");
        else if (c == '\t') w += (size_t)snprintf(out + w, 8, "\\t");
        else if (c < 32 || c == 127) w += (size_t)snprintf(out + w, 8, "\\x%02X", c);
        else out[w++] = (char)c;
    }
    out[w] = 0;
    return out;
}

#define EXPECT(pattern, text, expect) do { \
        const char *got_ = all(pattern, text); \
        CHECK(strcmp(got_, expect) == 0, "/%s/ on \"%s\": %s (want %s)", esc(pattern), esc(text), esc(got_), esc(expect)); \
    } while (0)

/* regex_search from `from`: the match as [start,end), or "none". */
static void expect_search(const char *pattern, const char *text, size_t from, const char *expect) {
    uint32_t cps[256];
    size_t n = decode(text, strlen(text), cps), s = 0, e = 0;
    regex *re;
    ts_error err;
    char got[64] = "compile error";
    if (regex_compile(pattern, strlen(pattern), &re, &err) == 0) {
        int r = regex_search(re, cps, n, from, &s, &e, &err);
        if (r == 1) snprintf(got, sizeof got, "[%zu,%zu)", s, e);
        else snprintf(got, sizeof got, r == 0 ? "none" : "error");
        regex_free(re);
    }
    CHECK(strcmp(got, expect) == 0, "search /%s/ in \"%s\" from %zu: %s (want %s)", esc(pattern), esc(text), from, got, expect);
}

/* The pattern is refused with a one-line message holding `want`. */
static void expect_error_n(const char *pattern, size_t len, const char *want) {
    regex *re = NULL;
    ts_error err = { 0 };
    int r = regex_compile(pattern, len, &re, &err);
    bool ok = r == -1 && !re && strstr(err.msg, want) && strncmp(err.msg, "regex: ", 7) == 0 && !strchr(err.msg, '\n');
    CHECK(ok, "refused /%.40s/: \"%s\" (want \"%s\")", esc(pattern), r ? err.msg : "(compiled)", want);
    regex_free(re);
}
static void expect_error(const char *pattern, const char *want) { expect_error_n(pattern, strlen(pattern), want); }

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- Unicode tables ------------------------------------------------------------------------------ */

static void test_unicode(void) {
    static const struct { uint32_t cp; int cat; } cats[] = {
        { 'A', UNICODE_LU }, { 'a', UNICODE_LL }, { 0x01C5, UNICODE_LT }, { 0x02B0, UNICODE_LM },
        { 0x4E2D, UNICODE_LO }, { 0x0301, UNICODE_MN }, { 0x093E, UNICODE_MC }, { 0x094D, UNICODE_MN },
        { 0x20DD, UNICODE_ME }, { '5', UNICODE_ND }, { 0x0663, UNICODE_ND }, { 0x216B, UNICODE_NL },
        { 0x00BD, UNICODE_NO }, { '_', UNICODE_PC }, { '-', UNICODE_PD }, { '(', UNICODE_PS },
        { ')', UNICODE_PE }, { 0x00AB, UNICODE_PI }, { 0x00BB, UNICODE_PF }, { '!', UNICODE_PO },
        { '+', UNICODE_SM }, { '$', UNICODE_SC }, { '^', UNICODE_SK }, { 0x00A9, UNICODE_SO },
        { 0x1F600, UNICODE_SO }, { ' ', UNICODE_ZS }, { 0x3000, UNICODE_ZS }, { 0x2028, UNICODE_ZL },
        { 0x2029, UNICODE_ZP }, { 0, UNICODE_CC }, { 0x85, UNICODE_CC }, { 0x00AD, UNICODE_CF },
        { 0x200B, UNICODE_CF }, { 0xD800, UNICODE_CS }, { 0xE000, UNICODE_CO }, { 0x10FFFD, UNICODE_CO },
        { 0x0378, UNICODE_CN }, { 0x110000, UNICODE_CN }, { 0xFFFFFFFF, UNICODE_CN },
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++) {
        if (unicode_category(cats[i].cp) != cats[i].cat) {
            bad++;
            printf("# U+%04X: category %d, want %d\n", cats[i].cp, unicode_category(cats[i].cp), cats[i].cat);
        }
    }
    CHECK(bad == 0, "general categories of %zu sample code points (Devanagari vowel sign AA is Mc, virama Mn, U+00AD Cf)",
          sizeof cats / sizeof cats[0]);

    /* The flags every other module reads agree with the two-letter categories everywhere. */
    static const int major[UNICODE_CATEGORY_COUNT] = {
        [UNICODE_CN] = UNICODE_UNASSIGNED, [UNICODE_LU] = UNICODE_LETTER, [UNICODE_LL] = UNICODE_LETTER,
        [UNICODE_LT] = UNICODE_LETTER, [UNICODE_LM] = UNICODE_LETTER, [UNICODE_LO] = UNICODE_LETTER,
        [UNICODE_MN] = UNICODE_MARK, [UNICODE_MC] = UNICODE_MARK, [UNICODE_ME] = UNICODE_MARK,
        [UNICODE_ND] = UNICODE_NUMBER, [UNICODE_NL] = UNICODE_NUMBER, [UNICODE_NO] = UNICODE_NUMBER,
        [UNICODE_PC] = UNICODE_PUNCTUATION, [UNICODE_PD] = UNICODE_PUNCTUATION, [UNICODE_PS] = UNICODE_PUNCTUATION,
        [UNICODE_PE] = UNICODE_PUNCTUATION, [UNICODE_PI] = UNICODE_PUNCTUATION, [UNICODE_PF] = UNICODE_PUNCTUATION,
        [UNICODE_PO] = UNICODE_PUNCTUATION, [UNICODE_SM] = UNICODE_SYMBOL, [UNICODE_SC] = UNICODE_SYMBOL,
        [UNICODE_SK] = UNICODE_SYMBOL, [UNICODE_SO] = UNICODE_SYMBOL, [UNICODE_ZS] = UNICODE_SEPARATOR,
        [UNICODE_ZL] = UNICODE_SEPARATOR, [UNICODE_ZP] = UNICODE_SEPARATOR, [UNICODE_CC] = UNICODE_OTHER,
        [UNICODE_CF] = UNICODE_OTHER, [UNICODE_CS] = UNICODE_OTHER, [UNICODE_CO] = UNICODE_OTHER,
    };
    long mismatch = 0, spaces = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        int c = unicode_category(cp);
        uint8_t f = unicode_flags(cp);
        if (unicode_class(cp) != major[c] || ((f & UNICODE_UPPER) != 0) != (c == UNICODE_LU) ||
            ((f & UNICODE_LOWER) != 0) != (c == UNICODE_LL))
            mismatch++;
        /* White_Space is the Z categories, U+0009-000D and U+0085 (what \s relies on) */
        bool z = c == UNICODE_ZS || c == UNICODE_ZL || c == UNICODE_ZP || (cp >= 9 && cp <= 13) || cp == 0x85;
        spaces += unicode_is_space(cp) != z;
    }
    CHECK(mismatch == 0, "class, Lu and Ll flags agree with the categories for every code point (%ld differ)", mismatch);
    CHECK(spaces == 0, "White_Space = Z categories + U+0009-000D + U+0085 (%ld differ)", spaces);
    CHECK(unicode_entry(0x110000) == 0 && unicode_flags(0xFFFFFFFF) == 0, "values past U+10FFFF have no flags");

    uint32_t orbit[UNICODE_FOLD_ORBIT_MAX];
    int n = unicode_fold_orbit('k', orbit);
    CHECK(n == 3 && orbit[0] == 'k' && (orbit[1] == 'K' || orbit[2] == 'K') && (orbit[1] == 0x212A || orbit[2] == 0x212A),
          "fold orbit of k: k K U+212A (%d)", n);
    n = unicode_fold_orbit(0x017F, orbit);
    CHECK(n == 3 && unicode_fold(0x017F) == 's' && unicode_fold('S') == 's' && unicode_fold(0x212A) == 'k',
          "U+017F folds to s, U+212A to k");
    CHECK(unicode_fold_orbit(0x03B8, orbit) == 4 && unicode_fold(0x03F4) == 0x03B8, "theta's orbit has four members");
    CHECK(unicode_fold_orbit('1', orbit) == 1 && unicode_fold(0x4E2D) == 0x4E2D && unicode_fold(0x1E9E) == 0xDF,
          "no fold for digits and CJK; U+1E9E folds simply to U+00DF (status S)");
    long asym = 0;
    for (uint32_t i = 0; i < unicode_fold_count; i++) {
        uint32_t cp = unicode_fold_cp[i];
        int m = unicode_fold_orbit(cp, orbit);
        for (int j = 0; j < m; j++) asym += unicode_fold(orbit[j]) != unicode_fold(cp);
        asym += m < 2 || (i && unicode_fold_cp[i - 1] >= cp);
    }
    CHECK(asym == 0, "every orbit (%u code points) shares one fold, the table is sorted", unicode_fold_count);
}

/* ---- constructs ---------------------------------------------------------------------------------- */

static void test_literals(void) {
    EXPECT("abc", "xabcabc", "{abc}{abc}");
    EXPECT("abc", "ab", "");
    EXPECT("h\xc3\xa9", "h\xc3\xa9 he", "{h\xc3\xa9}");
    EXPECT("\xe4\xb8\xad", "\xe4\xb8\xad\xe6\x96\x87", "{\xe4\xb8\xad}");
    EXPECT("a.c", "abc a\nc a\xe4\xb8\xad" "c", "{abc}{a\xe4\xb8\xad" "c}");
    EXPECT("\\t\\n\\r\\f\\v", "\t\n\r\f\v", "{\t\n\r\f\v}");
    EXPECT("\\a\\e", "\x07\x1b", "{\x07\x1b}");
    EXPECT("\\x41\\x{42}\\u0043", "ABC", "{ABC}");
    EXPECT("\\x{1F600}", "a\xf0\x9f\x98\x80", "{\xf0\x9f\x98\x80}");
    EXPECT("\\xC3\\xA9", "\xc3\xa9", "{\xc3\xa9}");              /* bytes of one UTF-8 sequence */
    EXPECT("\\u00e9", "\xc3\xa9", "{\xc3\xa9}");
    EXPECT("a\\0b", "a", "");
    EXPECT("\\.\\*\\\\\\(\\[\\{\\|\\$\\^\\?\\+\\/\\-\\ \\#", ".*\\([{|$^?+/- #", "{.*\\([{|$^?+/- #}");
    EXPECT("\\\xc3\xa9", "\xc3\xa9", "{\xc3\xa9}");                 /* escaped non-ASCII: itself */
    EXPECT("a{", "a{", "{a{}");                                       /* unmatched braces are literals */
    EXPECT("a{,}", "a{,}", "{a{,}}");
    EXPECT("x{2,3", "x{2,3", "{x{2,3}");
    EXPECT("]}", "]}", "{]}}");
    EXPECT("a\rb\nc", "a\rb\nc", "{a\rb\nc}");                       /* raw CR/LF in the pattern */
}

static void test_classes(void) {
    EXPECT("[abc]+", "xcabz", "{cab}");
    EXPECT("[^abc]+", "abxyc", "{xy}");
    EXPECT("[a-cx-z]+", "abdyz", "{ab}{yz}");
    EXPECT("[]a]+", "]a]b", "{]a]}");                                 /* ] first is a literal */
    EXPECT("[^]a]+", "]ab", "{b}");
    EXPECT("[a-]+", "a-b", "{a-}");
    EXPECT("[-a]+", "a-b", "{a-}");
    EXPECT("[\\-\\]\\[\\\\]+", "-][\\x", "{-][\\}");
    EXPECT("[.*+?()|{}$^]+", "a.*+?()|{}$^", "{.*+?()|{}$^}");
    EXPECT("[\\d\\s]+", "a1 2b", "{1 2}");
    EXPECT("[\\p{L}\\p{N}]+", "ab1 \xc3\xa9\xe4\xb8\xad", "{ab1}{\xc3\xa9\xe4\xb8\xad}");
    EXPECT("[^\\s\\p{L}\\p{N}]+", "ab!!cd ,,9 \xc2\xa0\xe3\x80\x82", "{!!}{,,}{\xe3\x80\x82}");
    EXPECT("[\\b]", "a\bb", "{\b}");                                  /* backspace inside a class */
    EXPECT("[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",   /* [一-龥぀-ゟ゠-ヿ]+ */
           "ab\xe6\x97\xa5\xe6\x9c\xac\xe3\x81\xae\xe3\x83\x86x\xed\x95\x9c", "{\xe6\x97\xa5\xe6\x9c\xac\xe3\x81\xae\xe3\x83\x86}");
    EXPECT("[\\x{4E00}-\\x{9FA5}]", "a\xe4\xb8\x80", "{\xe4\xb8\x80}");
    EXPECT("[\\x00-\\x{10FFFF}]", "a", "{a}");
    EXPECT("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+", "a.b _cd ~~e", "{.b}{_cd}{~e}");
    EXPECT("[\\r\\n]+", "a\r\n\nb", "{\r\n\n}");
    EXPECT("[\r\n]+", "a\r\n\nb", "{\r\n\n}");                       /* actual CR/LF inside a class */
    EXPECT("[\\h]+[\\H]", "0fFg", "{0fFg}");
}

static void test_properties(void) {
    const char *mix = "aB\xc7\x85\xca\xb0\xe4\xb8\xad\xcc\x81\xe0\xa4\xbe" "5\xe2\x85\xab\xc2\xbd_-(\xc2\xab!+$^\xc2\xa9 \xe2\x80\xa8\xc2\xad";
    /* a B ǅ ʰ 中 U+0301 U+093E 5 Ⅻ ½ _ - ( « ! + $ ^ © space U+2028 U+00AD */
    EXPECT("\\p{Lu}", mix, "{B}");
    EXPECT("\\p{Ll}", mix, "{a}");
    EXPECT("\\p{Lt}", mix, "{\xc7\x85}");
    EXPECT("\\p{Lm}", mix, "{\xca\xb0}");
    EXPECT("\\p{Lo}", mix, "{\xe4\xb8\xad}");
    EXPECT("\\p{L}+", mix, "{aB\xc7\x85\xca\xb0\xe4\xb8\xad}");
    EXPECT("\\p{Mn}", mix, "{\xcc\x81}");
    EXPECT("\\p{Mc}", mix, "{\xe0\xa4\xbe}");
    EXPECT("\\p{M}+", mix, "{\xcc\x81\xe0\xa4\xbe}");
    EXPECT("\\p{Nd}", mix, "{5}");
    EXPECT("\\p{Nl}", mix, "{\xe2\x85\xab}");
    EXPECT("\\p{No}", mix, "{\xc2\xbd}");
    EXPECT("\\p{N}+", mix, "{5\xe2\x85\xab\xc2\xbd}");
    EXPECT("\\p{Pc}\\p{Pd}\\p{Ps}\\p{Pi}\\p{Po}", mix, "{_-(\xc2\xab!}");
    EXPECT("\\p{P}+", mix, "{_-(\xc2\xab!}");
    EXPECT("\\p{Sm}\\p{Sc}\\p{Sk}\\p{So}", mix, "{+$^\xc2\xa9}");
    EXPECT("\\p{S}+", mix, "{+$^\xc2\xa9}");
    EXPECT("\\p{Zs}\\p{Zl}", mix, "{ \xe2\x80\xa8}");
    EXPECT("\\p{Z}+", mix, "{ \xe2\x80\xa8}");
    EXPECT("\\p{Cf}", mix, "{\xc2\xad}");
    EXPECT("\\p{C}", "a\x01\xc2\xad\xee\x80\x80\xcd\xb8", "{\x01}{\xc2\xad}{\xee\x80\x80}{\xcd\xb8}");   /* Cc Cf Co Cn */
    EXPECT("\\p{Cn}", "a\xcd\xb8", "{\xcd\xb8}");
    EXPECT("\\P{L}+", "ab12cd", "{12}");
    EXPECT("\\p{^L}+", "ab12cd", "{12}");
    EXPECT("\\P{^L}+", "ab12cd", "{ab}{cd}");
    EXPECT("[\\P{L}]+", "ab12cd", "{12}");
    EXPECT("[^\\P{L}]+", "ab12cd", "{ab}{cd}");
    EXPECT("\\p{Letter}+\\p{Decimal_Number}", "ab1", "{ab1}");
    EXPECT("\\p{uppercase letter}\\p{LOWERCASE-LETTER}\\p{lu}", "AbC", "{AbC}");   /* loose names */
    EXPECT("\\p{L&}+", "aB\xc7\x85\xca\xb0", "{aB\xc7\x85}");
    EXPECT("\\p{LC}+", "aB\xc7\x85\xca\xb0", "{aB\xc7\x85}");
    EXPECT("\\p{Any}+", "a \xe4\xb8\xad", "{a \xe4\xb8\xad}");
    EXPECT("[\\p{L}\\p{M}]+", "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87 x",  /* नमस्ते */
           "{\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87}{x}");
}

static void test_shorthands(void) {
    /* \s: White_Space (NBSP, ideographic space, NEL, line separator); no ZWSP (Cf) */
    EXPECT("\\s", "a \t\xc2\xa0\xe3\x80\x80\xc2\x85\xe2\x80\xa8\xe2\x80\x8b", "{ }{\t}{\xc2\xa0}{\xe3\x80\x80}{\xc2\x85}{\xe2\x80\xa8}");
    EXPECT("\\S+", "a b\xc2\xa0" "c", "{a}{b}{c}");
    EXPECT("\\d+", "12\xd9\xa3\xc2\xbd\xe2\x85\xab", "{12\xd9\xa3}");   /* Nd only: not ½ (No) or Ⅻ (Nl) */
    EXPECT("\\D+", "1a\xc2\xbd" "2", "{a\xc2\xbd}");
    EXPECT("\\w+", "a_\xc3\xa9\xcc\x81\xd9\xa3 \xc2\xbd-x", "{a_\xc3\xa9\xcc\x81\xd9\xa3}{x}");   /* L M Nd Pc */
    EXPECT("\\W+", "ab, c", "{, }");
    EXPECT("\\h+", "0x1fG", "{0}{1f}");
    EXPECT("\\H+", "0x1fG", "{x}{G}");
}

static void test_quantifiers(void) {
    EXPECT("a*", "aab", "{aa}{}");           /* the empty match at 3: the one after a match is dropped */
    EXPECT("a+", "aabaaa", "{aa}{aaa}");
    EXPECT("ab?c", "ac abc abbc", "{ac}{abc}");
    EXPECT("a{2}", "aaaaa", "{aa}{aa}");
    EXPECT("a{2,3}", "aaaaaaaa", "{aaa}{aaa}{aa}");
    EXPECT("a{2,}", "a aa aaaaa", "{aa}{aaaaa}");
    EXPECT("a{,2}b", "aaab b", "{aab}{b}");
    EXPECT("a{0}b", "ab", "{b}");
    EXPECT("\\p{N}{1,3}", "1234567", "{123}{456}{7}");
    /* lazy */
    EXPECT("a+?", "aaa", "{a}{a}{a}");
    EXPECT("a*?b", "aab", "{aab}");
    EXPECT("a??b", "ab", "{ab}");
    EXPECT("a{2,3}?", "aaaaa", "{aa}{aa}");
    EXPECT("a{2,}?", "aaaaa", "{aa}{aa}");
    EXPECT("<.+?>", "<a><b>", "{<a>}{<b>}");
    EXPECT("<.+>", "<a><b>", "{<a><b>}");
    EXPECT("x*?", "xx", "{}{}{}");
    /* Oniguruma: {n}? is (?:X{n})?, not lazy; quantifiers stack */
    EXPECT("x{2}?y", "xxy y", "{xxy}{y}");
    EXPECT("a{2}{3}", "aaaaaaa", "{aaaaaa}");
    EXPECT("a{2}+", "aaaaa", "{aaaa}");
    EXPECT("a**", "aa", "{aa}");
    /* greedy runs give back */
    EXPECT("a*ab", "aaab", "{aaab}");
    EXPECT("\\s*[\\r\\n]+", "  \n  \n x", "{  \n  \n}");
    EXPECT("[a-c]*[b-d]+x", "abcbx", "{abcbx}");
    EXPECT("(?:ab)+", "ababa", "{abab}");
    EXPECT("(?:ab)*?c", "ababc", "{ababc}");
    EXPECT("(?:a|bc){2,3}", "abcbca", "{abcbc}");
    EXPECT("(?:a|bc){2,3}?", "abcbca", "{abc}{bca}");
    /* empty loops end instead of looping */
    EXPECT("(a*)*", "aaa", "{aaa}");
    EXPECT("(a*)+b", "aab", "{aab}");
    EXPECT("(a?)*b", "aab", "{aab}");
    EXPECT("(|a)*", "aa", "{}{}{}");
    EXPECT("(?:a*)*?b", "aab", "{aab}");
    EXPECT("(?:(?=a))*a", "a", "{a}");
}

static void test_alternation(void) {
    EXPECT("a|ab", "ab", "{a}");                   /* leftmost-first, not longest */
    EXPECT("ab|a", "ab", "{ab}");
    EXPECT("b|ab", "ab", "{ab}");                  /* leftmost start wins over order */
    EXPECT("(?:a|ab)c", "abc", "{abc}");           /* backtracking into an alternation */
    EXPECT("x(?:y|z)|xq", "xz xq", "{xz}{xq}");
    EXPECT("a|", "ba", "{}{a}");
    EXPECT("|a", "a", "{}{}");
    EXPECT("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+", "it's we'll 'x", "{it}{'s}{ we}{'ll}{x}");
    EXPECT("(?:(?:a|b)|(?:c|d))+", "abcde", "{abcd}");
    /* alternatives sharing a leading literal are factored: the same matches, in the same order */
    EXPECT("xa|xb|y|xc|x", "xa xb y xc xd", "{xa}{xb}{y}{xc}{x}");
    EXPECT("a|ab|ac", "ab ac", "{a}{a}");
    EXPECT("ab|a|ac", "ab ac", "{ab}{a}");
    EXPECT("(?:ab|ac)+d|a", "abacd ab", "{abacd}{a}");
    EXPECT("'s|'t|'re|'ve|'m|'ll|'d", "'re've'd'x'll", "{'re}{'ve}{'d}{'ll}");
    char longp[2100], longt[1100];
    memset(longp, 'a', 1000);
    memcpy(longp + 1000, "b|", 2);
    memset(longp + 1002, 'a', 1000);
    memcpy(longp + 2002, "c", 2);
    memset(longt, 'a', 1000);
    memcpy(longt + 1000, "c", 2);
    const char *got = all(longp, longt);
    CHECK(strlen(got) == 1003 && got[1001] == 'c', "a{1000}b|a{1000}c written out: a 1000-literal shared prefix (%zu)", strlen(got));
}

static void test_groups_and_case(void) {
    EXPECT("(ab)+", "ababx", "{abab}");
    EXPECT("(?:ab)(cd)", "abcd", "{abcd}");
    EXPECT("a(?#comment)b", "ab", "{ab}");
    EXPECT("a(?#c)+", "aa", "{aa}");                    /* a comment is skipped, the quantifier applies to a */
    EXPECT("(?i:abc)", "ABC aBc abc", "{ABC}{aBc}{abc}");
    EXPECT("(?i:k)", "kK\xe2\x84\xaa", "{k}{K}{\xe2\x84\xaa}");       /* KELVIN SIGN */
    EXPECT("(?i:\xe2\x84\xaa)", "kK", "{k}{K}");
    EXPECT("(?i:s)", "sS\xc5\xbf", "{s}{S}{\xc5\xbf}");                 /* LONG S */
    EXPECT("(?i:\xc3\xa9)", "\xc3\x89\xc3\xa9", "{\xc3\x89}{\xc3\xa9}");
    EXPECT("(?i:\xcf\x83)", "\xcf\x83\xcf\x82\xce\xa3", "{\xcf\x83}{\xcf\x82}{\xce\xa3}");   /* σ ς Σ */
    EXPECT("(?i:ss)", "\xc3\x9f", "");                                  /* no multi-character folds */
    EXPECT("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "I'M YOU'LL it'S x'\xc5\xbf", "{'M}{'LL}{'S}{'\xc5\xbf}");
    EXPECT("(?i)ab|c", "AB C", "{AB}{C}");
    EXPECT("a(?i)b|c", "aB aC C", "{aB}{aC}");      /* a(?i:b|c): (?i) reaches the end of its group */
    EXPECT("(?:(?i)a|b)B", "AB bB Ab", "{AB}{bB}");
    EXPECT("(?i)a(?-i)b", "Ab AB", "{Ab}");
    EXPECT("(?i:a(?-i:b))", "AB Ab", "{Ab}");
    EXPECT("(?i-i:a)", "A a", "{a}");
    EXPECT("(?i)[a-z]+", "aZ\xe2\x84\xaa\xc5\xbf", "{aZ\xe2\x84\xaa\xc5\xbf}");
    EXPECT("(?i)[^k]", "kK\xe2\x84\xaax", "{x}");
    EXPECT("(?i)\\p{Lu}", "aB1", "{a}{B}");
    EXPECT("(?i)[\\p{Lu}]+", "aB1", "{aB}");
    EXPECT("(?i)\\x41", "a", "{a}");
}

static void test_lookahead_and_anchors(void) {
    EXPECT("a(?=b)", "ab ac", "{a}");
    EXPECT("a(?!b)", "ab ac", "{a}");
    EXPECT("\\s+(?!\\S)", "a   b  ", "{  }{  }");              /* at the text's end the lookahead succeeds */
    EXPECT("\\s+(?!\\S)|\\s+", "a   b  ", "{  }{ }{  }");
    EXPECT("(?=c)", "abcd", "{}");                              /* an empty match */
    EXPECT("a|(?=c)", "abc", "{a}");                            /* the first empty match after a match is dropped */
    EXPECT("(?=(?!a)b)b", "ab b", "{b}{b}");
    EXPECT("(?!)", "ab", "");
    EXPECT("x(?=)", "x", "{x}");
    EXPECT("a(?=b|c)(?!bd)", "ab abd ac", "{a}{a}");
    EXPECT("(?=a+)a", "aa", "{a}{a}");
    EXPECT("^a", "aa\na", "{a}{a}");                            /* ^: line start */
    EXPECT("^", "a\nb\n", "{}{}");                              /* not at the end after a final \n */
    EXPECT("a$", "aa\na", "{a}{a}");                            /* $: line end */
    EXPECT("$", "a\nb\n", "{}{}{}");
    EXPECT("\\s+$", "a  \nb  ", "{  }{  }");
    EXPECT("\\Aa", "aa\na", "{a}");
    EXPECT("a\\z", "aa\na", "{a}");
    EXPECT("a\\Z", "a\na\n", "{a}");
    EXPECT("\\A|\\z", "ab", "{}{}");
    expect_search("^b", "ab\nb", 1, "[3,4)");                  /* ^ looks before `from` */
    expect_search("\\Ab", "ab", 1, "none");
    expect_search("b", "abcb", 2, "[3,4)");
    expect_search("b", "ab", 3, "none");
    expect_search("x*", "ab", 2, "[2,2)");
    expect_search("a|ab", "ab", 0, "[0,1)");
}

static void test_find_all_empty(void) {
    /* the onig crate's own find_iter tests */
    EXPECT("\\d+", "a12b2", "{12}{2}");
    EXPECT("\\d*", "a1b2", "{}{1}{2}");
    EXPECT("\\d*", "a1bbb2", "{}{1}{}{}{2}");
    EXPECT("", "ab", "{}{}{}");
    EXPECT("x*", "", "{}");
    EXPECT("x+", "", "");
    regex *re;
    ts_error err;
    uint32_t cps[8] = { 'a', '1', 'b', 'b', 'b', '2' };
    regex_matches m = { 0 };
    int ok = regex_compile("\\d*", 3, &re, &err) == 0 && regex_find_all(re, cps, 6, &m, &err) == 0;
    CHECK(ok && m.n == 5 && m.m[0].start == 0 && m.m[0].end == 0 && m.m[1].start == 1 && m.m[1].end == 2 &&
          m.m[2].start == 3 && m.m[3].start == 4 && m.m[4].start == 5 && m.m[4].end == 6,
          "\\d* over a1bbb2: [0,0) [1,2) [3,3) [4,4) [5,6), as onig's find_iter");
    ok = ok && regex_find_all(re, cps, 0, &m, &err) == 0;
    CHECK(ok && m.n == 1 && m.m[0].start == 0 && m.m[0].end == 0, "an empty text: one empty match, out reused");
    regex_matches_free(&m);
    regex_free(re);
}

/* ---- refusals ------------------------------------------------------------------------------------ */

static void test_refusals(void) {
    expect_error("ab(?<=a)", "\"(?<=\" (lookbehind) at offset 2");
    expect_error("(?<!a)", "\"(?<!\" (negative lookbehind) at offset 0");
    expect_error("(?<name>a)", "named group");
    expect_error("(?'name'a)", "named group");
    expect_error("(?P<name>a)", "named group");
    expect_error("(?>a)", "atomic group");
    expect_error("(?(1)a|b)", "conditional");
    expect_error("(?~a)", "absent operator");
    expect_error("(?|a)", "branch reset");
    expect_error("(?@a)", "capture history");
    expect_error("(?Qa)", "unknown group");
    expect_error("a\\bc", "\"\\b\" (word boundary) at offset 1");
    expect_error("\\B", "word boundary");
    expect_error("\\G", "search start anchor");
    expect_error("a\\K", "keep");
    expect_error("\\R", "general newline");
    expect_error("\\X", "grapheme cluster");
    expect_error("\\N", "newline class");
    expect_error("(a)\\1", "\"\\1\" (backreference) at offset 3");
    expect_error("\\k<a>", "named backreference");
    expect_error("\\g<1>", "subexpression call");
    expect_error("\\Qa\\E", "quoting");
    expect_error("\\cA", "control or meta escape");
    expect_error("\\o{101}", "octal code point");
    expect_error("\\q", "unknown escape \"\\q\" at offset 0");
    expect_error("a*+", "\"*+\" (possessive quantifier) at offset 1");
    expect_error("a++", "possessive quantifier");
    expect_error("a?+", "possessive quantifier");
    expect_error("[[:alpha:]]", "POSIX bracket");
    expect_error("[a[b]]", "nested character class");
    expect_error("[a-[b]]", "nested character class");
    expect_error("[a&&b]", "class intersection");
    expect_error("\\p{Han}", "unsupported property \"Han\" (general categories only) at offset 0");
    expect_error("[\\p{Greek}]", "unsupported property \"Greek\"");
    expect_error("\\p{Alphabetic}", "unsupported property");
    expect_error("\\p{}", "unsupported property");
    expect_error("(?x)a", "flag x");
    expect_error("(?m:a)", "flag m");
    expect_error("(?s)a", "\"(?s\"");
    /* malformed */
    expect_error("(a", "missing ) at offset 0");
    expect_error("a)", "unmatched ) at offset 1");
    expect_error("a|b)c", "unmatched ) at offset 3");
    expect_error("(?:a", "missing )");
    expect_error("(?i", "missing )");
    expect_error("(?", "missing )");
    expect_error("[z-a]", "bad character range \"z-a\" at offset 1");
    expect_error("[\\x{10}-\\x{5}]", "bad character range");
    expect_error("[\\d-z]", "bad character range");
    expect_error("[a-\\d]", "bad character range");
    expect_error("a{3,1}", "bad repeat range \"{3,1}\" at offset 1");
    expect_error("a{1001}", "repeat count above 1000");
    expect_error("a{1,100000}", "repeat count above 1000");
    expect_error("ab\\", "trailing backslash at offset 2");
    expect_error("[ab", "unterminated character class at offset 0");
    expect_error("[]", "unterminated character class");
    expect_error("*a", "nothing to repeat at offset 0");
    expect_error("a|*", "nothing to repeat at offset 2");
    expect_error("(*)", "nothing to repeat");
    expect_error("{2}", "nothing to repeat");
    expect_error("(?#x)*", "nothing to repeat");
    expect_error("(?=a)*", "quantifier after a lookahead or anchor");
    expect_error("^*", "quantifier after a lookahead or anchor");
    expect_error("\\x{110000}", "invalid code point");
    expect_error("\\x{D800}", "invalid code point");
    expect_error("\\x{}", "bad \\x{...} escape");
    expect_error("\\xZZ", "bad \\x escape");
    expect_error("\\xC3", "do not form UTF-8");
    expect_error("\\xC3\\x41", "do not form UTF-8");
    expect_error("\\u12", "\\u needs four hex digits");
    expect_error("\\uD800", "invalid code point");
    expect_error("\\p{L", "unterminated \\p{");
    expect_error("\\pL", "\\p must be followed by {name}");
    expect_error("(?#abc", "unterminated comment");
    expect_error_n("ab\xff", 3, "invalid UTF-8 at offset 2");
    expect_error_n("a\xc3", 2, "invalid UTF-8 at offset 1");
    char deep[200];
    int d = 0;
    for (; d < 70; d++) deep[d] = '(';
    deep[d++] = 'a';
    for (int i = 0; i < 70; i++) deep[d++] = ')';
    expect_error_n(deep, (size_t)d, "nesting deeper than 64");
    char isolated[400] = "";
    for (int i = 0; i < 70; i++) strcat(isolated, "(?i)");
    expect_error(isolated, "nesting deeper than 64");
    char stacked[400] = "a";
    for (int i = 0; i < 70; i++) strcat(stacked, "{1}");
    expect_error(stacked, "nesting deeper than 64");
    expect_error("(?:(?:a{1000}){1000}){1000}", "pattern too large");
    expect_error("(?:a{1000}){30}", "pattern too large");
    size_t big = REGEX_MAX_PATTERN + 1;
    char *huge = malloc(big);
    memset(huge, 'a', big);
    expect_error_n(huge, big, "pattern longer than 65536 bytes");
    free(huge);
    /* one NUL-containing pattern compiles and matches the NUL */
    regex *re;
    ts_error err;
    uint32_t t[3] = { 'a', 0, 'b' };
    size_t s, e;
    CHECK(regex_compile("a\0b", 3, &re, &err) == 0 && regex_search(re, t, 3, 0, &s, &e, &err) == 1 && e == 3,
          "a pattern holding a NUL byte matches it");
    regex_free(re);
}

/* ---- the work cap -------------------------------------------------------------------------------- */

static void test_step_cap(void) {
    size_t n = 10000;
    uint32_t *a = malloc((n + 1) * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = 'a';
    static const char *hostile[] = { "(a|a)*b", "(a*)*b", "(?:a+)+b", "(a|aa)*c", "(?:a*)*?b", "((a*)*)*b" };
    for (size_t h = 0; h < sizeof hostile / sizeof hostile[0]; h++) {
        regex *re;
        ts_error err = { 0 };
        size_t s, e;
        if (regex_compile(hostile[h], strlen(hostile[h]), &re, &err)) { CHECK(0, "%s: %s", hostile[h], err.msg); continue; }
        double t0 = seconds();
        int r = regex_search(re, a, n, 0, &s, &e, &err);
        double dt = seconds() - t0;
        CHECK((r == 0 || (r == -1 && strcmp(err.msg, "regex: step limit exceeded") == 0)) && dt < 10,
              "/%s/ on 10,000 a: %s in %.2f s (no match found by memoization, or the step limit)", hostile[h],
              r == 0 ? "no match" : r == -1 ? err.msg : "a match?", dt);
        regex_matches m = { 0 };
        r = regex_find_all(re, a, n, &m, &err);
        CHECK(r == 0 ? m.n == 0 : strcmp(err.msg, "regex: step limit exceeded") == 0, "/%s/ find_all: %s", hostile[h],
              r ? err.msg : "no match");
        regex_matches_free(&m);
        regex_free(re);
    }
    /* (a*)*b cannot be memoized (its loop body can match empty): the cap must stop it */
    regex *re;
    ts_error err;
    size_t s, e;
    CHECK(regex_compile("(a*)*b", 6, &re, &err) == 0 && regex_search(re, a, n, 0, &s, &e, &err) == -1 &&
          strcmp(err.msg, "regex: step limit exceeded") == 0, "(a*)*b on 10,000 a: -1, \"%s\"", err.msg);
    regex_free(re);
    /* (a|a)*b is memoized after its first budget: the search finds no match instead of failing */
    CHECK(regex_compile("(a|a)*b", 7, &re, &err) == 0 && regex_search(re, a, n, 0, &s, &e, &err) == 0,
          "(a|a)*b on 10,000 a: no match (memoized)");
    a[n] = 'b';
    CHECK(regex_search(re, a, n + 1, 0, &s, &e, &err) == 1 && s == 0 && e == n + 1, "(a|a)*b on a^10000 b: the whole text");
    regex_free(re);
    free(a);

    /* legitimate quadratic backtracking (a long blank run without a newline) goes linear */
    size_t m = 200000;
    uint32_t *sp = malloc((m + 1) * sizeof *sp);
    for (size_t i = 0; i < m; i++) sp[i] = ' ';
    sp[m] = 'x';
    static const char *quad[] = { "\\s*[\\r\\n]+|x", "\\s+$|x", "\\s*[\\r\\n]+x|\\s" };
    static const size_t want[] = { 1, 1, 200000 };
    for (size_t q = 0; q < 3; q++) {
        regex_matches ms = { 0 };
        double t0 = seconds();
        int r = regex_compile(quad[q], strlen(quad[q]), &re, &err) == 0 ? regex_find_all(re, sp, m + 1, &ms, &err) : -2;
        double dt = seconds() - t0;
        CHECK(r == 0 && ms.n == want[q] && ms.m[ms.n - 1].end == (q == 2 ? m : m + 1) && dt < 10,
              "/%s/ over 200,000 blanks and x: %zu matches in %.2f s%s%s", quad[q], ms.n, dt, r ? ": " : "", r ? err.msg : "");
        regex_matches_free(&ms);
        regex_free(re);
    }
    free(sp);
}

/* ---- fast and memo programs agree ------------------------------------------------------------------ */

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static bool same_matches(const regex_matches *a, const regex_matches *b) {
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->m[i].start != b->m[i].start || a->m[i].end != b->m[i].end) return false;
    return true;
}

static void test_programs_agree(void) {
    static const char *patterns[] = {
        "a|ab", "(?:ab|a)(?:bc|c)", "a*?b|c", "(?:a|b)*?c", "[ab]{2,3}?c|.", "x*", "(?=a)|b", "(?i:'s|'t|'re)",
        "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "(a*)*b|a", "(?:a?)+?b|.", "\\s+$|^\\s|\\Z", "(?:ab?){2,4}c?", "a{0,3}?b?", "(?!a)\\w+|\\W", "(?i)[b-y]+|a",
    };
    static const char alphabet[] = "aabbcc  \n'sSt.x1";
    int agree = 0, total = 0;
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        regex *re;
        ts_error err;
        if (regex_compile(patterns[p], strlen(patterns[p]), &re, &err)) { CHECK(0, "%s: %s", patterns[p], err.msg); continue; }
        for (int t = 0; t < 200; t++) {
            uint32_t text[24];
            size_t n = rnd() % 24;
            for (size_t i = 0; i < n; i++) text[i] = (uint32_t)alphabet[rnd() % (sizeof alphabet - 1)];
            regex_matches a = { 0 }, b = { 0 };
            int ra = regex_find_all(re, text, n, &a, &err), rb = regex_find_all_slow(re, text, n, &b, &err);
            total++;
            if (ra == 0 && rb == 0 && same_matches(&a, &b)) agree++;
            else if (total - agree < 4) printf("# /%s/: fast and memo programs differ on a %zu-code-point text\n", patterns[p], n);
            regex_matches_free(&a);
            regex_matches_free(&b);
        }
        regex_free(re);
    }
    CHECK(agree == total, "fast and memo programs give the same matches on %d/%d random texts", agree, total);
}

/* Agreement with the hand-written pre-tokenizers (pretokenize.c), every kind on every fixture string
 * and random ones: test_pretokenize_agree.c. */

static const char *llama3_re =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* ---- threads ------------------------------------------------------------------------------------- */

typedef struct job { const regex *re; const uint32_t *cps; size_t n; size_t count; uint64_t sum; int rc; } job;

static void *worker(void *arg) {
    job *j = arg;
    ts_error err;
    regex_matches m = { 0 };
    for (int r = 0; r < 20 && j->rc == 0; r++) {
        j->rc = regex_find_all(j->re, j->cps, j->n, &m, &err);
        j->count = m.n;
        j->sum = 0;
        for (size_t i = 0; i < m.n; i++) j->sum += m.m[i].start * 31 + m.m[i].end;
    }
    regex_matches_free(&m);
    return NULL;
}

static void test_threads(void) {
    regex *re;
    ts_error err;
    if (regex_compile(llama3_re, strlen(llama3_re), &re, &err)) { CHECK(0, "%s", err.msg); return; }
    const char *sample = "It's 2024: don't PANIC!  \n\n\t x\xc2\xa0y \xe4\xb8\xad\xe6\x96\x87 caf\xc3\xa9 ";
    size_t len = strlen(sample), n = 0;
    uint32_t *cps = malloc(200 * len * sizeof *cps);
    for (int r = 0; r < 200; r++) n += decode(sample, len, cps + n);
    job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (job){ re, cps, n, 0, 0, 0 };
        pthread_create(&th[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    bool same = true;
    for (int i = 0; i < 4; i++) same = same && jobs[i].rc == 0 && jobs[i].count == jobs[0].count && jobs[i].sum == jobs[0].sum;
    CHECK(same && jobs[0].count > 1000, "four threads sharing one compiled regex find the same %zu matches", jobs[0].count);
    free(cps);
    regex_free(re);
}

int main(void) {
    test_unicode();
    test_literals();
    test_classes();
    test_properties();
    test_shorthands();
    test_quantifiers();
    test_alternation();
    test_groups_and_case();
    test_lookahead_and_anchors();
    test_find_all_empty();
    test_refusals();
    test_step_cap();
    test_programs_agree();
    test_threads();
    CHECK_EXIT();
}
