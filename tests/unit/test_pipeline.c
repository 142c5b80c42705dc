/* The tokenizer.json pipeline steps (text/pipeline.h) on small texts, against Hugging Face
 * tokenizers' documented results: the five Split behaviors on "the-final--countdown" (the
 * SplitDelimiterBehavior documentation's example), invert, the character-class pre-tokenizers, and
 * the normalizers. */
#include "check.h"
#include "core/utf8.h"
#include "io/json.h"
#include "text/pipeline.h"
#include <string.h>

/* The pipeline of a normalizer and a pre_tokenizer (JSON texts, "null" for none) run on text: the
 * pieces joined by '|' into out. */
static int run(const char *norm, const char *pre, const char *text, char *out, size_t cap, ts_error *err) {
    json_value *n = NULL, *p = NULL;
    pipeline *pl = NULL;
    int rc = -1;
    out[0] = '\0';
    if (json_parse(norm, strlen(norm), &n, err) || json_parse(pre, strlen(pre), &p, err) ||
        pipeline_from_json(n, p, "test", &pl, err))
        goto done;
    uint32_t cps[256], *nc = NULL;
    size_t m = 0, nn = 0, len = strlen(text);
    for (size_t i = 0; i < len;) i += (size_t)utf8_decode(text + i, len - i, &cps[m++]);
    if (pipeline_normalize(pl, cps, m, &nc, &nn, err)) goto done;
    regex_matches pieces = { 0 };
    if (pipeline_split(pl, nc, nn, &pieces, err) == 0) {
        size_t w = 0;
        for (size_t i = 0; i < pieces.n; i++) {
            if (i) out[w++] = '|';
            for (size_t k = pieces.m[i].start; k < pieces.m[i].end && w + 5 < cap; k++) w += (size_t)utf8_encode(nc[k], out + w);
        }
        out[w] = '\0';
        rc = 0;
    }
    regex_matches_free(&pieces);
    free(nc);
done:
    pipeline_free(pl);
    json_free(n);
    json_free(p);
    return rc;
}

static void expect(const char *norm, const char *pre, const char *text, const char *want, const char *what) {
    char got[1024];
    ts_error err = { { 0 } };
    int rc = run(norm, pre, text, got, sizeof got, &err);
    CHECK(rc == 0 && strcmp(got, want) == 0, "%s: \"%s\" -> %s (want %s)%s%s", what, text, rc ? "error" : got, want,
          rc ? ": " : "", rc ? err.msg : "");
}

#define SPLIT(pattern, behavior, invert) \
    "{\"type\":\"Split\",\"pattern\":" pattern ",\"behavior\":\"" behavior "\",\"invert\":" invert "}"

int main(void) {
    const char *t = "the-final--countdown";
    expect("null", SPLIT("{\"String\":\"-\"}", "Removed", "false"), t, "the|final|countdown", "Split Removed");
    expect("null", SPLIT("{\"String\":\"-\"}", "Isolated", "false"), t, "the|-|final|-|-|countdown", "Split Isolated");
    expect("null", SPLIT("{\"String\":\"-\"}", "MergedWithPrevious", "false"), t, "the-|final-|-|countdown", "Split MergedWithPrevious");
    expect("null", SPLIT("{\"String\":\"-\"}", "MergedWithNext", "false"), t, "the|-final|-|-countdown", "Split MergedWithNext");
    expect("null", SPLIT("{\"String\":\"-\"}", "Contiguous", "false"), t, "the|-|final|--|countdown", "Split Contiguous");
    /* invert: the stretches between the matches are the delimiters */
    expect("null", SPLIT("{\"Regex\":\"-+\"}", "Removed", "true"), t, "-|--", "Split inverted, Removed");
    expect("null", SPLIT("{\"String\":\".\"}", "Isolated", "false"), "a.b", "a|.|b", "a String pattern is literal");
    /* a Sequence: each step splits every piece of the one before; ByteLevel's own regex (GPT-2's) last */
    expect("null", "{\"type\":\"Sequence\",\"pretokenizers\":[" SPLIT("{\"Regex\":\"\\\\p{N}{1,3}\"}", "Isolated", "false")
           ",{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}]}", "ab12345 cd's",
           "ab|123|45| cd|'s", "digits by three, then ByteLevel's regex");
    expect("null", "{\"type\":\"Digits\",\"individual_digits\":true}", "a123b", "a|1|2|3|b", "Digits individual");
    expect("null", "{\"type\":\"Digits\",\"individual_digits\":false}", "a123b", "a|123|b", "Digits in runs");
    expect("null", "{\"type\":\"Punctuation\"}", "Hi, there!?", "Hi|,| there|!|?", "Punctuation (Isolated by default)");
    expect("null", "{\"type\":\"Whitespace\"}", "Hey man!  x", "Hey|man|!|x", "Whitespace");
    expect("null", "{\"type\":\"WhitespaceSplit\"}", "Hey man!  x", "Hey|man!|x", "WhitespaceSplit");
    /* normalizers */
    expect("{\"type\":\"NFC\"}", "null", "e\xcc\x81", "\xc3\xa9", "NFC composes e + U+0301");
    expect("{\"type\":\"NFKD\"}", "null", "\xef\xac\x81", "fi", "NFKD expands the ligature U+FB01");
    expect("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true},"
           "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" +\"},\"content\":\"_\"},{\"type\":\"Prepend\",\"prepend\":\">\"}]}",
           "null", "  a  b c \n", ">a_b_c", "Strip, Replace by regex, Prepend");
    expect("{\"type\":\"Prepend\",\"prepend\":\">\"}", "null", "", "", "Prepend leaves empty text empty");
    /* a step after one that left nothing (fuzz_tokenizer_json: UBSan on an offset null array) */
    expect("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Strip\"},{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"a\"},"
           "\"content\":\"b\"},{\"type\":\"Strip\"},{\"type\":\"Prepend\",\"prepend\":\"x\"},{\"type\":\"NFC\"}]}",
           "null", "   ", "", "steps after an empty result");
    /* Rust's char::to_lowercase: U+0130 to i + U+0307, Greek capital sigma to small sigma everywhere,
     * U+212A KELVIN SIGN to k, ß unchanged */
    expect("{\"type\":\"Lowercase\"}", "null", "\xc4\xb0STANBUL \xce\xa3\xce\x9f\xce\xa3 \xe2\x84\xaa \xc3\x9f",
           "i\xcc\x87stanbul \xcf\x83\xce\xbf\xcf\x83 k \xc3\x9f", "Lowercase");
    expect("{\"type\":\"Sequence\",\"normalizers\":[]}", "null", "as is", "as is", "an empty Sequence does nothing");
    CHECK_EXIT();
}
