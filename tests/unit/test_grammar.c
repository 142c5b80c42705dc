/* The GBNF compiler and matcher (text/grammar.h): sentences accepted and refused as the grammars
 * mean them (cases written by hand), partial texts, UTF-8 split across feeds, the sorted-strings
 * walk against one string at a time, and every refusal named. */
#include "check.h"
#include "json_gbnf.h"
#include "text/grammar.h"
#include <string.h>

static grammar *compile(const char *gbnf) {
    grammar *g = NULL;
    ts_error err;
    if (grammar_parse(gbnf, strlen(gbnf), &g, &err) != 0) printf("# compile error: %s\n", err.msg);
    return g;
}

static int accepts(const grammar *g, const char *s) {
    ts_error err;
    return grammar_accepts_text(g, s, strlen(s), &err);
}

/* Each case: a grammar, texts it accepts, texts it refuses (NULL-terminated lists). */
typedef struct gcase { const char *name, *gbnf; const char *yes[12], *no[12]; } gcase;

static const gcase cases[] = {
    { "literal", "root ::= \"yes\" | \"no\"", { "yes", "no" }, { "", "ye", "yess", "No", "yesno" } },
    { "sequence and groups", "root ::= \"a\" (\"b\" | \"c\") \"d\"", { "abd", "acd" }, { "ad", "abcd", "abd ", "aed" } },
    { "star", "root ::= \"x\"* \"!\"", { "!", "x!", "xxxxxxxx!" }, { "", "x", "!x", "xx" } },
    { "plus", "root ::= [0-9]+", { "0", "42", "0123456789" }, { "", "4a", "-1" } },
    { "optional", "root ::= \"-\"? [1-9]", { "1", "-9" }, { "-", "--1", "0", "10" } },
    { "counts exact", "root ::= [a-c]{3}", { "abc", "aaa", "cba" }, { "ab", "abca", "abd" } },
    { "counts range", "root ::= \"a\"{2,4}", { "aa", "aaa", "aaaa" }, { "a", "aaaaa", "" } },
    { "counts open", "root ::= (\"ab\"){2,}", { "abab", "ababab", "abababababab" }, { "ab", "aba", "" } },
    { "counts zero", "root ::= \"a\"{0} \"b\"{0,1}", { "", "b" }, { "a", "bb" } },
    { "negated class", "root ::= \"\\\"\" [^\"\\\\]* \"\\\"\"", { "\"\"", "\"hello\"", "\"h\xc3\xa9\"" }, { "\"a\"b\"", "\"\\\"", "\"" } },
    { "class ranges and escapes", "root ::= [\\x41-\\x43\\t\\-]+", { "ABC", "\t-A", "-" }, { "D", "a", " " } },
    { "any character", "root ::= . .", { "ab", "\xc3\xa9\xe2\x82\xac", "\xf0\x9f\x98\x80!" }, { "a", "abc" } },
    { "unicode class", "root ::= [\\u00e0-\\u00ff\\U0001F600]+", { "\xc3\xa9", "\xf0\x9f\x98\x80\xc3\xa0" }, { "e", "\xc3\x80", "\xf0\x9f\x98\x81" } },
    { "utf-8 literal", "root ::= \"caf\xc3\xa9\"", { "caf\xc3\xa9" }, { "cafe", "caf\xc3" } },
    { "rules and comments",
      "# a list of numbers\nroot ::= \"[\" ( num (\",\" num)* )? \"]\"  # the list\nnum ::= \"-\"? [0-9]+\n",
      { "[]", "[1]", "[1,-22,333]" }, { "[", "[1,]", "[,1]", "[1 2]", "[1],", "" } },
    { "multi-line alternatives",
      "root ::= item |\n  item \"+\" root\nitem ::= (\n  \"x\"\n  | \"y\"\n)\n",
      { "x", "y", "x+y+x" }, { "x+", "+x", "xy" } },
    { "nullable rules", "root ::= a b c \"!\"\na ::= \"a\"?\nb ::= \"\" | \"b\"\nc ::= (\"c\")*",
      { "!", "a!", "ab!", "abccc!", "c!" }, { "ba!", "abca!", "" } },
    { "right recursion",
      "root ::= \"(\" root \")\" | \"\"",
      { "", "()", "((()))" }, { "(", "())", ")(" } },
    { "ambiguous but bounded", "root ::= (\"a\" | \"a\" \"a\")* \"b\"",
      { "b", "ab", "aaaaaaaaaaaaaaaaaaaab" }, { "a", "ba" } },
    { "json",
      JSON_GBNF,
      { "{}", "{\"a\": [1, 2.5, -3e+4, true, null, {\"b\": \"c\\n\\u00e9\"}]}", "\"x\"", "0", "[ ]" },
      { "{", "{\"a\"}", "[1,]", "01", "\"\\x\"", "{\"a\":1}}", "tru", "\"a\nb\"" } },
};

static void test_cases(void) {
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        grammar *g = compile(cases[c].gbnf);
        CHECK(g != NULL, "%s: compiles", cases[c].name);
        if (!g) continue;
        int bad = 0;
        for (int i = 0; i < 12 && cases[c].yes[i]; i++)
            if (accepts(g, cases[c].yes[i]) != 1) { bad++; printf("# %s: refused \"%s\"\n", cases[c].name, cases[c].yes[i]); }
        for (int i = 0; i < 12 && cases[c].no[i]; i++)
            if (accepts(g, cases[c].no[i]) != 0) { bad++; printf("# %s: accepted \"%s\"\n", cases[c].name, cases[c].no[i]); }
        CHECK(bad == 0, "%s: accepts and refuses as meant", cases[c].name);
        grammar_free(g);
    }
}

/* Feeding piece by piece (splitting UTF-8 characters too) ends where feeding at once does; a
 * refused piece leaves the matcher as it was. */
static void test_feed(void) {
    grammar *g = compile("root ::= \"h\xc3\xa9\" [\\u20ac]+ \".\"");
    grammar_matcher *m;
    ts_error err;
    if (!g || grammar_matcher_new(g, &m, &err) != 0) { CHECK(0, "feed: matcher"); grammar_free(g); return; }
    const char *text = "h\xc3\xa9\xe2\x82\xac\xe2\x82\xac.";
    bool ok = true;
    for (size_t i = 0; text[i]; i++) {
        ok = ok && grammar_matcher_allows(m, "x", 1, &err) == 0;          /* never an x */
        ok = ok && grammar_matcher_feed(m, "x", 1, &err) == 0;
        ok = ok && grammar_matcher_feed(m, text + i, 1, &err) == 1;
        ok = ok && grammar_matcher_complete(m) == (text[i + 1] == 0);
    }
    CHECK(ok, "feed: byte by byte through split UTF-8, refused bytes change nothing");
    CHECK(!grammar_matcher_can_continue(m) && grammar_matcher_feed(m, ".", 1, &err) == 0, "feed: nothing follows the end");
    /* the first byte of a character the grammar cannot take next is refused at once, overlong
     * beginnings (\xe0\x80, \xf0\x80) too */
    grammar *ascii = compile("root ::= \"{\" [\\u00e9]");
    grammar_matcher *ma;
    if (ascii && grammar_matcher_new(ascii, &ma, &err) == 0) {
        CHECK(grammar_matcher_allows(ma, "\xf0", 1, &err) == 0 && grammar_matcher_allows(ma, "\xe0", 1, &err) == 0 &&
              grammar_matcher_allows(ma, "\xc3", 1, &err) == 0 && grammar_matcher_allows(ma, "{", 1, &err) == 1,
              "feed: a lead byte is refused where no character it begins is allowed");
        CHECK(grammar_matcher_feed(ma, "{", 1, &err) == 1 && grammar_matcher_allows(ma, "\xc3", 1, &err) == 1 &&
              grammar_matcher_allows(ma, "\xc3\xa8", 2, &err) == 0 && grammar_matcher_allows(ma, "\xe0\x83", 2, &err) == 0 &&
              grammar_matcher_allows(ma, "\xc1", 1, &err) == 0, "feed: a character begun is kept only while it can still be allowed");
        grammar_matcher_free(ma);
    }
    grammar_free(ascii);
    grammar_matcher_free(m);
    grammar_free(g);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted walk says of every string what trying it alone says. */
static void test_sorted_walk(void) {
    grammar *g = compile(cases[19].gbnf);   /* json */
    grammar_matcher *m;
    ts_error err;
    if (!g || grammar_matcher_new(g, &m, &err) != 0) { CHECK(0, "walk: matcher"); grammar_free(g); return; }
    static const char *pieces[] = { "{", "{\"", "\"", "\"a", "a", "ab", "abc", "}", "1", "12", "12.", "-", " ", "  ",
                                    "true", "tr", "t", "\xc3", "\xc3\xa9", "\xe2\x82", "\\", "\\u", "null", ",", ":", "\"}",
                                    "[", "[1", "[1,", "e", "E+", "0", "01", "\n", "\x01" };
    enum { N = sizeof pieces / sizeof *pieces };
    const char *sorted[N];
    memcpy(sorted, pieces, sizeof pieces);
    qsort(sorted, N, sizeof *sorted, cmp_str);
    uint16_t lens[N], lcp[N];
    for (int i = 0; i < N; i++) {
        lens[i] = (uint16_t)strlen(sorted[i]);
        lcp[i] = 0;
        if (i) while (lcp[i] < lens[i] && sorted[i][lcp[i]] == sorted[i - 1][lcp[i]]) lcp[i]++;
    }
    /* from several states: the start, inside a string, after a key, inside a number */
    static const char *prefixes[] = { "", "{", "\"", "{\"k\":", "[1", "{\"k\":\"\xc3" };
    bool ok = true;
    for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++) {
        grammar_matcher *mp;
        if (grammar_matcher_new(g, &mp, &err) != 0 || grammar_matcher_feed(mp, prefixes[p], strlen(prefixes[p]), &err) != 1) { ok = false; break; }
        uint8_t allowed[N];
        if (grammar_matcher_allowed_sorted(mp, sorted, lens, lcp, N, allowed, &err) != 0) ok = false;
        for (int i = 0; i < N && ok; i++) {
            int one = grammar_matcher_allows(mp, sorted[i], lens[i], &err);
            if (one != allowed[i]) { ok = false; printf("# after \"%s\": \"%s\" walk %d alone %d\n", prefixes[p], sorted[i], allowed[i], one); }
        }
        grammar_matcher_free(mp);
    }
    CHECK(ok, "walk: the sorted walk agrees with one string at a time in 6 states");
    grammar_matcher_free(m);
    grammar_free(g);
}

static void test_refusals(void) {
    static const struct { const char *gbnf, *msg; } bad[] = {
        { "root ::= root \"x\" | \"y\"", "left recursion in rule 'root'" },
        { "root ::= a\na ::= b? c\nb ::= \"b\"\nc ::= a \"c\" | \"d\"", "left recursion" },
        { "root ::= (\"x\"? root)", "left recursion" },
        { "root ::= missing", "rule 'missing' is used but not defined" },
        { "a ::= \"x\"", "no rule named 'root'" },
        { "root ::= \"x\"\nroot ::= \"y\"", "defined twice" },
        { "root ::= \"\\q\"", "unknown escape" },
        { "root ::= (\"x\"", "expected ')'" },
        { "root ::= \"x\")", "unbalanced ')'" },
        { "root ::= \"x\"{3,2}", "below the minimum" },
        { "root ::= \"x\"{1000}{1000}{1000}", "more than" },
        { "root = \"x\"", "expected '::='" },
        { "root ::= \"abc", "unexpected end" },
        { "root ::= [z-a]", "backwards" },
        { "root ::= <[1000]>", "token references" },
        { "root ::= \"\\xZZ\"", "hex digits" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        grammar *g = NULL;
        ts_error err = { "" };
        int rc = grammar_parse(bad[i].gbnf, strlen(bad[i].gbnf), &g, &err);
        CHECK(rc == -1 && !g && strstr(err.msg, bad[i].msg) && strncmp(err.msg, "grammar: ", 9) == 0,
              "refused: %s (%s)", bad[i].msg, err.msg);
    }
    /* deep nesting is refused, not a stack overflow */
    char deep[4096];
    size_t n = (size_t)snprintf(deep, sizeof deep, "root ::= ");
    for (int i = 0; i < 600; i++) deep[n++] = '(';
    deep[n] = 0;
    grammar *g = NULL;
    ts_error err;
    CHECK(grammar_parse(deep, n, &g, &err) == -1 && strstr(err.msg, "nested"), "refused: groups nested 600 deep (%s)", err.msg);
    /* a text ambiguous in ever more ways hits the stack cap, with an error, not a hang */
    g = compile("root ::= x* \"!\"\nx ::= \"a\" | \"a\" | \"a\" y\ny ::= \"\" | x");
    if (g) {
        char as[400];
        memset(as, 'a', sizeof as - 1);
        as[sizeof as - 1] = 0;
        int rc = grammar_accepts_text(g, as, strlen(as), &err);
        CHECK(rc == 0 || rc == -1, "ambiguous text: ends (%d%s%s)", rc, rc < 0 ? ": " : "", rc < 0 ? err.msg : "");
        grammar_free(g);
    }
}

int main(void) {
    test_cases();
    test_feed();
    test_sorted_walk();
    test_refusals();
    CHECK_EXIT();
}
