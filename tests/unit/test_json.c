/* Strict JSON parser: valid and invalid documents (with the byte offsets of the errors), every
 * JSON file among the fixtures, the two large tokenizer.json files (entry counts checked against
 * a line scan of the pretty-printed text), and json_buf_put_string round trips. */
#include "io/json.h"
#include "check.h"
#include "io/file.h"
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static json_value *parse_ok(const char *text, size_t len) {
    json_value *v = NULL;
    ts_error err = { "" };
    if (json_parse(text, len, &v, &err)) {
        printf("# unexpected parse error: %s\n", err.msg);
        return NULL;
    }
    return v;
}

static json_value *parse_str(const char *text) { return parse_ok(text, strlen(text)); }

/* Parsing must fail with a message starting "byte <offset>:". */
static void expect_error(const char *what, const char *text, size_t len, size_t offset) {
    json_value *v = NULL;
    ts_error err = { "" };
    int rc = json_parse(text, len, &v, &err);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "byte %zu:", offset);
    CHECK(rc == -1 && v == NULL && strncmp(err.msg, prefix, strlen(prefix)) == 0,
          "rejects %s at byte %zu (got: %s)", what, offset, rc ? err.msg : "accepted");
    json_free(v);
}

static void expect_error_s(const char *what, const char *text, size_t offset) {
    expect_error(what, text, strlen(text), offset);
}

static void test_structure(void) {
    const char *doc = " {\"a\": [1, 2, {\"b\": null}], \"c\": {\"d\": true, \"e\": false},"
                      " \"s\": \"x\", \"a\": \"second\", \"f\": 2048.0, \"g\": 2.5} \n";
    json_value *v = parse_str(doc);
    CHECK(v && v->type == JSON_OBJECT && v->n == 6, "nested document: object with 6 members");
    if (!v) return;
    CHECK(strcmp(v->keys[0], "a") == 0 && strcmp(v->keys[2], "s") == 0 && v->key_lens[1] == 1,
          "members keep file order");
    const json_value *a = json_get(v, "a");
    CHECK(a && a->type == JSON_ARRAY && a->n == 3, "json_get returns the first of duplicate keys");
    CHECK(a && a->items[0].is_integer && a->items[0].integer == 1 && a->items[1].number == 2,
          "array numbers");
    CHECK(a && a->items[2].type == JSON_OBJECT && json_get(&a->items[2], "b") &&
          json_get(&a->items[2], "b")->type == JSON_NULL, "null inside an object inside an array");
    const json_value *c = json_get(v, "c");
    CHECK(json_get_bool(c, "d", false) == true && json_get_bool(c, "e", true) == false,
          "booleans");
    CHECK(json_get_bool(c, "missing", true) == true && json_get_bool(v, "s", true) == true,
          "json_get_bool default when absent or not a bool");
    CHECK(json_get_str(v, "s") && strcmp(json_get_str(v, "s"), "x") == 0, "json_get_str");
    CHECK(json_get_str(v, "c") == NULL && json_get_str(v, "zz") == NULL,
          "json_get_str NULL for non-strings and absent keys");
    CHECK(json_get_int(v, "f", -1) == 2048, "json_get_int accepts 2048.0");
    CHECK(json_get_int(v, "g", -1) == -1, "json_get_int refuses 2.5");
    CHECK(json_get_num(v, "g", 0) == 2.5 && json_get_num(v, "s", 7) == 7, "json_get_num");
    CHECK(json_get(a, "x") == NULL && json_get(NULL, "x") == NULL, "json_get on non-objects");
    json_free(v);

    v = parse_str("[[], {}, [[]], \"\"]");
    CHECK(v && v->n == 4 && v->items[0].n == 0 && v->items[1].type == JSON_OBJECT &&
          v->items[1].n == 0 && v->items[2].items[0].n == 0 && v->items[3].len == 0 &&
          v->items[3].str && v->items[3].str[0] == 0, "empty containers and strings");
    json_free(v);

    v = parse_str("\xEF\xBB\xBF{\"k\":1}");
    CHECK(v && json_get_int(v, "k", 0) == 1, "a leading UTF-8 byte order mark is ignored");
    json_free(v);

    char deep[2 * JSON_MAX_DEPTH + 1];
    memset(deep, '[', JSON_MAX_DEPTH);
    memset(deep + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
    deep[2 * JSON_MAX_DEPTH] = 0;
    v = parse_str(deep);
    CHECK(v != NULL, "nesting of exactly JSON_MAX_DEPTH (%d) is accepted", JSON_MAX_DEPTH);
    json_free(v);
}

static void test_strings(void) {
    json_value *v = parse_str("\"\\u00e9\\u4E2D\\ud83d\\ude00\\u0000x\\\"\\\\\\/\\b\\f\\n\\r\\t\"");
    const char want[] = "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80" "\0" "x\"\\/\b\f\n\r\t";
    CHECK(v && v->type == JSON_STRING && v->len == sizeof want - 1 &&
          memcmp(v->str, want, sizeof want) == 0,
          "escapes: \\u (BMP, surrogate pair, NUL) and the single-character ones");
    json_free(v);

    v = parse_str("\"caf\xC3\xA9 \xE2\x96\x81 \xF0\x9F\x98\x80 \x7F\"");
    CHECK(v && v->len == 16 && memcmp(v->str, "caf\xC3\xA9 \xE2\x96\x81 \xF0\x9F\x98\x80 \x7F", 16) == 0,
          "raw UTF-8 (2, 3, 4 bytes) and DEL pass through");
    json_free(v);

    v = parse_str("{\"\\u0041\\ud834\\udd1e\": 1}");
    CHECK(v && v->n == 1 && v->key_lens[0] == 5 && memcmp(v->keys[0], "A\xF0\x9D\x84\x9E", 5) == 0,
          "escapes in keys are decoded");
    json_free(v);
}

static void test_numbers(void) {
    json_value *v = parse_str("[-0, 0, 1e308, 9223372036854775807, -9223372036854775808,"
                              " 9223372036854775808, -9223372036854775809,"
                              " 123456789012345678901234567890, 0.1, 2.5e-3, 1E+2, -1.5,"
                              " 4.9406564584124654e-324, 3.141592653589793238462643383279,"
                              " 1e-400, 17, 0.0]");
    CHECK(v && v->n == 17, "number array parses");
    if (!v) return;
    const json_value *x = v->items;
    CHECK(x[0].is_integer && x[0].integer == 0 && x[0].number == 0 && signbit(x[0].number),
          "-0: integer 0, double -0.0");
    CHECK(x[1].is_integer && !signbit(x[1].number), "0");
    CHECK(!x[2].is_integer && x[2].number == 1e308, "1e308");
    CHECK(x[3].is_integer && x[3].integer == INT64_MAX, "INT64_MAX exact");
    CHECK(x[4].is_integer && x[4].integer == INT64_MIN, "INT64_MIN exact");
    CHECK(!x[5].is_integer && x[5].number == 9223372036854775808.0, "2^63 is a double only");
    CHECK(!x[6].is_integer && x[6].number == -9223372036854775809.0, "-2^63-1 is a double only");
    CHECK(!x[7].is_integer && x[7].number == 123456789012345678901234567890.0,
          "30-digit integer as the nearest double");
    CHECK(x[8].number == 0.1 && !x[8].is_integer, "0.1");
    CHECK(x[9].number == 2.5e-3, "2.5e-3");
    CHECK(x[10].number == 100 && !x[10].is_integer, "1E+2 is 100 but not an integer literal");
    CHECK(x[11].number == -1.5, "-1.5");
    CHECK(x[12].number == 4.9406564584124654e-324, "smallest subnormal");
    CHECK(x[13].number == 3.141592653589793, "long mantissa rounds to the nearest double");
    CHECK(x[14].number == 0, "1e-400 underflows to 0");
    CHECK(x[15].is_integer && x[15].integer == 17 && x[15].number == 17, "17");
    CHECK(!x[16].is_integer && x[16].number == 0, "0.0 is not an integer literal");
    json_free(v);

    /* Random doubles printed with 17 significant digits must come back bit-exact; shorter
     * decimals must equal what the C library's strtod makes of them. */
    uint64_t state = 0x9E3779B97F4A7C15ull;
    int bad_round_trip = 0, bad_short = 0;
    for (int i = 0; i < 20000; i++) {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
        double d;
        uint64_t bits = state;
        memcpy(&d, &bits, sizeof d);
        if (!isfinite(d)) continue;
        char text[64];
        snprintf(text, sizeof text, "%.17g", d);
        json_value *n = parse_str(text);
        if (!n || memcmp(&n->number, &d, sizeof d) != 0) bad_round_trip++;
        json_free(n);
        snprintf(text, sizeof text, "%.*e", (int)(state >> 60), (double)(int64_t)(state >> 11) * 1e-6);
        n = parse_str(text);
        if (!n || n->number != strtod(text, NULL)) bad_short++;
        json_free(n);
    }
    CHECK(bad_round_trip == 0, "20000 random doubles round-trip through %%.17g (%d wrong)",
          bad_round_trip);
    CHECK(bad_short == 0, "short decimals equal strtod (%d wrong)", bad_short);
}

static void test_errors(void) {
    expect_error_s("empty input", "", 0);
    expect_error_s("whitespace only", "  \n ", 4);
    expect_error_s("trailing comma in array", "[1,2,]", 5);
    expect_error_s("trailing comma in object", "{\"a\":1,}", 7);
    expect_error_s("leading zero", "[01]", 2);
    expect_error_s("leading zero after minus", "-012", 2);
    expect_error_s("lone high surrogate", "\"\\ud800\"", 1);
    expect_error_s("high surrogate + non-surrogate escape", "[\"ab\\uD800\\u0041\"]", 4);
    expect_error_s("lone low surrogate", "\"x\\udc00\"", 2);
    expect_error_s("bad UTF-8 byte 0xFF", "\"a\xff\"", 2);
    expect_error_s("stray continuation byte", "[\"\x80\"]", 2);
    expect_error_s("truncated 2-byte sequence", "\"ab\xC3\"", 3);
    expect_error_s("overlong '/' (C0 AF)", "\"\xC0\xAF\"", 1);
    expect_error_s("overlong 3-byte (E0 80 AF)", "\"x\xE0\x80\xAF\"", 2);
    expect_error_s("UTF-8 encoded surrogate (ED A0 80)", "\"\xED\xA0\x80\"", 1);
    expect_error_s("code point above U+10FFFF", "\"\xF4\x90\x80\x80\"", 1);
    expect_error_s("raw tab in string", "\"a\tb\"", 2);
    expect_error_s("raw newline in key", "{\"a\nb\":1}", 3);
    expect_error_s("unterminated string", "\"abc", 4);
    expect_error_s("string ending in an escaped quote", "[\"abc\\\"]", 8);
    expect_error_s("invalid escape", "\"\\x\"", 1);
    expect_error_s("short \\u escape", "\"\\u12\"", 5);
    expect_error_s("non-hex \\u escape", "\"\\u12g4\"", 5);
    expect_error_s("trailing garbage", "{} x", 3);
    expect_error_s("two values", "1 2", 2);
    expect_error_s("NaN", "NaN", 0);
    expect_error_s("Infinity", "[Infinity]", 1);
    expect_error_s("-Infinity", "-Infinity", 1);
    expect_error_s("fraction without digits", "[1.]", 3);
    expect_error_s("exponent without digits", "1e", 2);
    expect_error_s("exponent sign without digits", "1e+", 3);
    expect_error_s("leading dot", ".5", 0);
    expect_error_s("plus sign", "+1", 0);
    expect_error_s("hex number", "0x10", 1);
    expect_error_s("number beyond double range", "[1e309]", 1);
    expect_error_s("block comment", "[1 /* c */]", 3);
    expect_error_s("line comment", "// c\n1", 0);
    expect_error_s("single quotes", "['a']", 1);
    expect_error_s("truncated literal", "tru", 0);
    expect_error_s("capitalised literal", "True", 0);
    expect_error_s("missing comma", "[true false]", 6);
    expect_error_s("missing colon", "{\"a\" 1}", 5);
    expect_error_s("non-string key", "{1:2}", 1);
    expect_error_s("unclosed array", "[1, 2", 5);
    expect_error_s("unclosed object", "{\"a\": 1", 7);
    expect_error("NUL byte between values", "[1,\0 2]", 7, 3);

    /* Depth: a bomb of 10000 '[' fails at the first bracket too deep, without recursing on. */
    char *bomb = malloc(10000);
    memset(bomb, '[', 10000);
    expect_error("10000 nested '['", bomb, 10000, JSON_MAX_DEPTH);
    for (int i = 0; i < 10000; i++) bomb[i] = i % 2 ? '[' : '{';
    /* "{[" is itself invalid (an object needs a key): the error is at byte 1. */
    expect_error("object then array", bomb, 10000, 1);
    for (int i = 0; i + 6 <= 10000; i += 6) memcpy(bomb + i, "{\"a\": ", 6);
    expect_error("nested objects 1600 deep", bomb, 9996, 6 * JSON_MAX_DEPTH);
    free(bomb);
}

static void test_big_array(void) {
    /* 250k small values: the children stack grows geometrically, so this is linear. */
    size_t n = 250000;
    char *text = malloc(2 * n + 2);
    size_t len = 0;
    text[len++] = '[';
    for (size_t i = 0; i < n; i++) {
        text[len++] = (char)('0' + i % 10);
        text[len++] = ',';
    }
    text[len - 1] = ']';
    clock_t t0 = clock();
    json_value *v = parse_ok(text, len);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    bool ok = v && v->n == n;
    for (size_t i = 0; ok && i < n; i++) ok = v->items[i].integer == (int64_t)(i % 10);
    CHECK(ok, "array of %zu single digits, every value right (%.2fs)", n, secs);
    CHECK(secs < 5, "big array parses in linear time");
    json_free(v);
    free(text);
}

static void test_buf(void) {
    /* Every ASCII byte including NUL, multi-byte characters and quotes round-trip exactly. */
    char raw[200];
    size_t len = 0;
    for (int c = 0; c < 128; c++) raw[len++] = (char)c;
    const char *extra = "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\"\\/</script>";
    memcpy(raw + len, extra, strlen(extra));
    len += strlen(extra);
    json_buf b = { 0 };
    CHECK(json_buf_put(&b, "[", 1) == 0 && json_buf_put_string(&b, raw, len) == 0 &&
          json_buf_put(&b, ",", 1) == 0 && json_buf_put_string(&b, "", 0) == 0 &&
          json_buf_put(&b, "]", 1) == 0, "json_buf writes");
    CHECK(b.data && strlen(b.data) == b.len, "json_buf keeps its data NUL-terminated");
    json_value *v = parse_ok(b.data, b.len);
    CHECK(v && v->n == 2 && v->items[0].len == len && memcmp(v->items[0].str, raw, len) == 0 &&
          v->items[1].len == 0, "json_buf_put_string output parses back to the same bytes");
    json_free(v);
    json_buf_free(&b);
    CHECK(b.data == NULL && b.len == 0, "json_buf_free resets");

    /* Invalid UTF-8 cannot be spelt in JSON: it becomes U+FFFD and the output still parses. */
    json_buf_put_string(&b, "a\xFF" "b\xC3", 4);
    v = parse_ok(b.data, b.len);
    CHECK(v && v->len == 8 && memcmp(v->str, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD", 8) == 0,
          "invalid UTF-8 is written as U+FFFD");
    json_free(v);
    json_buf_free(&b);

    /* Random strings of random code points (all planes, control characters included). */
    uint64_t state = 12345;
    int bad = 0;
    for (int iter = 0; iter < 300; iter++) {
        char s[400];
        size_t n = 0;
        int chars = iter % 60;
        for (int k = 0; k < chars; k++) {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            uint32_t cp = (uint32_t)(state % 0x110000);
            if (k % 3 == 0) cp %= 0x80;
            if (cp >= 0xD800 && cp <= 0xDFFF) cp -= 0x800;
            /* UTF-8 by hand, not through the code under test. */
            if (cp < 0x80) s[n++] = (char)cp;
            else if (cp < 0x800) { s[n++] = (char)(0xC0 | cp >> 6); s[n++] = (char)(0x80 | (cp & 63)); }
            else if (cp < 0x10000) {
                s[n++] = (char)(0xE0 | cp >> 12); s[n++] = (char)(0x80 | (cp >> 6 & 63));
                s[n++] = (char)(0x80 | (cp & 63));
            } else {
                s[n++] = (char)(0xF0 | cp >> 18); s[n++] = (char)(0x80 | (cp >> 12 & 63));
                s[n++] = (char)(0x80 | (cp >> 6 & 63)); s[n++] = (char)(0x80 | (cp & 63));
            }
        }
        json_buf_put_string(&b, s, n);
        v = parse_ok(b.data, b.len);
        if (!v || v->len != n || memcmp(v->str, s, n) != 0) bad++;
        json_free(v);
        b.len = 0;
    }
    json_buf_free(&b);
    CHECK(bad == 0, "300 random UTF-8 strings round-trip (%d wrong)", bad);
}

static void test_read_file(const char *tmp) {
    char path[512], *data;
    size_t len;
    ts_error err = { "" };
    snprintf(path, sizeof path, "%s/empty.json", tmp);
    FILE *f = fopen(path, "wb");
    if (f) fclose(f);
    CHECK(file_read(path, &data, &len, &err) == 0 && len == 0 && data && data[0] == 0,
          "read_file: an empty file is empty, NUL-terminated");
    json_value *v = NULL;
    CHECK(json_parse(data, len, &v, &err) == -1 && strncmp(err.msg, "byte 0:", 7) == 0,
          "empty file is not JSON: %s", err.msg);
    free(data);
    snprintf(path, sizeof path, "%s/missing.json", tmp);
    CHECK(file_read(path, &data, &len, &err) == -1 && strstr(err.msg, path) && data == NULL,
          "read_file: a missing file is an error naming it: %s", err.msg);
    CHECK(file_read(tmp, &data, &len, &err) == -1 && strstr(err.msg, tmp) &&
          strstr(err.msg, "directory"), "read_file: a directory is refused: %s", err.msg);
}

/* Parses every *.json (whole) and *.jsonl (line by line) under dir. */
static void parse_tree(const char *dir, int *n_files, int *n_bad) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) { parse_tree(path, n_files, n_bad); continue; }
        size_t nl = strlen(de->d_name);
        bool json = nl > 5 && strcmp(de->d_name + nl - 5, ".json") == 0;
        bool jsonl = nl > 6 && strcmp(de->d_name + nl - 6, ".jsonl") == 0;
        if (!json && !jsonl) continue;
        char *data;
        size_t len;
        ts_error err;
        if (file_read(path, &data, &len, &err)) { (*n_bad)++; printf("# %s\n", err.msg); continue; }
        (*n_files)++;
        size_t start = 0;
        while (start < len) {
            size_t end = len;
            if (jsonl) {
                char *nlp = memchr(data + start, '\n', len - start);
                if (nlp) end = (size_t)(nlp - data);
            }
            if (end > start) {
                json_value *v;
                if (json_parse(data + start, end - start, &v, &err)) {
                    (*n_bad)++;
                    printf("# %s: %s\n", path, err.msg);
                } else {
                    json_free(v);
                }
            }
            start = end + 1;
        }
        free(data);
    }
    closedir(d);
}

static void test_fixture_configs(void) {
    int n_files = 0, n_bad = 0;
    parse_tree(fixtures_dir(), &n_files, &n_bad);
    CHECK(n_files >= 30 && n_bad == 0, "every fixture .json/.jsonl parses (%d files, %d failures)",
          n_files, n_bad);

    /* Values against the independent copy of the config in case.json. */
    char path[512], *data;
    size_t len;
    ts_error err;
    snprintf(path, sizeof path, "%s/llama-tiny/hf/config.json", fixtures_dir());
    json_value *cfg = NULL, *cas = NULL;
    if (file_read(path, &data, &len, &err) == 0) { json_parse(data, len, &cfg, &err); free(data); }
    snprintf(path, sizeof path, "%s/llama-tiny/case.json", fixtures_dir());
    if (file_read(path, &data, &len, &err) == 0) { json_parse(data, len, &cas, &err); free(data); }
    const json_value *hf = json_get(cas, "hf_config");
    CHECK(cfg && hf && json_get_int(cfg, "hidden_size", 0) == 256 &&
          json_get_int(hf, "hidden_size", 0) == 256 &&
          json_get_int(cfg, "num_key_value_heads", 0) == json_get_int(hf, "num_key_value_heads", -1) &&
          json_get_num(cfg, "rms_norm_eps", 0) == 1e-5 && json_get_num(cfg, "rope_theta", 0) == 10000.0 &&
          json_get_bool(cfg, "tie_word_embeddings", true) == false &&
          json_get(cfg, "rope_scaling") && json_get(cfg, "rope_scaling")->type == JSON_NULL,
          "llama-tiny config.json values match case.json's hf_config");
    json_free(cfg);
    json_free(cas);
}

/* Counts the lines of a pretty-printed block: entries start at the given indentation right after
 * the line ending in `opener`, up to the line holding only `closer` at the outer indentation. */
static size_t count_block_lines(const char *text, size_t len, const char *opener,
                                const char *entry_prefix, const char *closer) {
    const char *p = strstr(text, opener);
    if (!p) return 0;
    p = strchr(p, '\n');
    size_t count = 0;
    while (p && (size_t)(p - text) < len) {
        p++;
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        if (ll >= strlen(closer) && strncmp(p, closer, strlen(closer)) == 0 &&
            (ll == strlen(closer) || p[strlen(closer)] == ',')) break;
        if (ll == strlen(entry_prefix) && strncmp(p, entry_prefix, ll) == 0) count++;
        else if (entry_prefix[0] == 0) count++;
        p = eol;
    }
    return count;
}

/* A string set for the merge check: open addressing on an FNV-1a hash. */
typedef struct str_set { const char **slot; size_t *lens; size_t mask; } str_set;

static uint64_t fnv1a(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static void set_init(str_set *set, size_t n) {
    size_t cap = 1;
    while (cap < 2 * n) cap *= 2;
    set->slot = calloc(cap, sizeof *set->slot);
    set->lens = calloc(cap, sizeof *set->lens);
    set->mask = cap - 1;
}

static bool set_find_or_add(str_set *set, const char *s, size_t n, bool add) {
    for (size_t i = fnv1a(s, n) & set->mask;; i = (i + 1) & set->mask) {
        if (!set->slot[i]) {
            if (add) { set->slot[i] = s; set->lens[i] = n; }
            return false;
        }
        if (set->lens[i] == n && memcmp(set->slot[i], s, n) == 0) return true;
    }
}

static void test_tokenizer(const char *tmp, const char *family) {
    char src[512], dst[512], cmd[1200];
    snprintf(src, sizeof src, "%s/tokenizers/hf/%s/tokenizer.json.gz", fixtures_dir(), family);
    snprintf(dst, sizeof dst, "%s/%s-tokenizer.json", tmp, family);
    snprintf(cmd, sizeof cmd, "gzip -dc '%s' > '%s'", src, dst);
    if (system(cmd) != 0) { CHECK(0, "%s: gunzip tokenizer.json", family); return; }
    char *data;
    size_t len;
    ts_error err;
    if (file_read(dst, &data, &len, &err)) { CHECK(0, "%s", err.msg); return; }
    unlink(dst);
    json_value *v = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = json_parse(data, len, &v, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK(rc == 0, "%s tokenizer.json (%.1f MB) parses: %s (%.2fs in this build)", family,
          (double)len / 1e6, rc ? err.msg : "ok", secs);
    if (rc) { free(data); return; }

    const json_value *model = json_get(v, "model");
    const json_value *vocab = json_get(model, "vocab");
    const json_value *merges = json_get(model, "merges");
    /* Independent counts: the file is pretty-printed with one vocab entry per line and each
     * merge as a 4-line [a, b] block opening with a line holding only '['. */
    size_t vocab_lines = count_block_lines(data, len, "\"vocab\": {", "", "    }");
    size_t merge_lines = count_block_lines(data, len, "\"merges\": [", "      [", "    ]");
    CHECK(vocab && vocab->type == JSON_OBJECT && vocab->n == vocab_lines && vocab_lines > 100000,
          "%s: model.vocab has %zu entries, a line scan counts %zu", family,
          vocab ? vocab->n : 0, vocab_lines);
    CHECK(merges && merges->type == JSON_ARRAY && merges->n == merge_lines && merge_lines > 100000,
          "%s: model.merges has %zu entries, a line scan counts %zu", family,
          merges ? merges->n : 0, merge_lines);
    if (!vocab || !merges) { json_free(v); free(data); return; }

    /* The ids are exactly 0..n-1 (so highest id + 1 == entry count). */
    unsigned char *seen = calloc(vocab->n, 1);
    bool ids_ok = true;
    for (size_t i = 0; i < vocab->n && ids_ok; i++) {
        const json_value *id = &vocab->items[i];
        ids_ok = id->is_integer && id->integer >= 0 && (size_t)id->integer < vocab->n &&
                 !seen[id->integer];
        if (ids_ok) seen[id->integer] = 1;
    }
    free(seen);
    CHECK(ids_ok, "%s: vocab ids are a permutation of 0..%zu", family, vocab->n - 1);

    /* BPE invariant: both halves of every merge and their concatenation are in the vocab. This
     * exercises the decoded (escaped and multi-byte) strings of keys and values together. */
    str_set set;
    set_init(&set, vocab->n);
    for (size_t i = 0; i < vocab->n; i++) set_find_or_add(&set, vocab->keys[i], vocab->key_lens[i], true);
    size_t bad = 0;
    char joined[1024];
    for (size_t i = 0; i < merges->n; i++) {
        const json_value *m = &merges->items[i];
        if (m->type != JSON_ARRAY || m->n != 2 || m->items[0].type != JSON_STRING ||
            m->items[1].type != JSON_STRING || m->items[0].len + m->items[1].len > sizeof joined) {
            bad++;
            continue;
        }
        const json_value *a = &m->items[0], *b = &m->items[1];
        memcpy(joined, a->str, a->len);
        memcpy(joined + a->len, b->str, b->len);
        if (!set_find_or_add(&set, a->str, a->len, false) ||
            !set_find_or_add(&set, b->str, b->len, false) ||
            !set_find_or_add(&set, joined, a->len + b->len, false)) bad++;
    }
    free(set.slot);
    free(set.lens);
    CHECK(bad == 0, "%s: all %zu merges join two vocab entries into a third (%zu bad)", family,
          merges->n, bad);
    const json_value *added = json_get(v, "added_tokens");
    CHECK(added && added->type == JSON_ARRAY && added->n > 0 &&
          json_get_str(&added->items[0], "content") && json_get(&added->items[0], "id"),
          "%s: added_tokens has %zu entries with content and id", family, added ? added->n : 0);
    json_free(v);
    free(data);
}

int main(void) {
    char tmp[] = "/tmp/test_json.XXXXXX";
    if (!mkdtemp(tmp)) { CHECK(0, "mkdtemp"); CHECK_EXIT(); }
    test_structure();
    test_strings();
    test_numbers();
    test_errors();
    test_big_array();
    test_buf();
    test_read_file(tmp);
    test_fixture_configs();
    test_tokenizer(tmp, "qwen3");
    test_tokenizer(tmp, "gemma3");
    char path[600];
    snprintf(path, sizeof path, "%s/empty.json", tmp);
    unlink(path);
    rmdir(tmp);
    CHECK_EXIT();
}
