/* libFuzzer: the JSON Schema -> GBNF converter on arbitrary bytes (a schema document).
 * Checks: a refusal is one line starting "json schema: "; a grammar is NUL-terminated, at most
 * 1 MiB (plus the fixed rules), starts with its root rule and compiles with the grammar engine
 * (the converter must never write a grammar the engine refuses: no undefined rule, no left
 * recursion, no count past the engine's caps); the compiled grammar then answers a few texts
 * without error beyond its documented limits; converting again gives the same grammar. */
#include "fuzz_common.h"
#include "text/grammar.h"
#include "text/json_schema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

static void check_error(const char *what, const ts_error *err) {
    if (strncmp(err->msg, "json schema: ", 13) != 0 || strchr(err->msg, '\n')) {
        fprintf(stderr, "%s: bad error message: %s\n", what, err->msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 64 * 1024) return 0;
    char *gbnf = (char *)0x1;
    ts_error err = { "" };
    if (json_schema_to_gbnf((const char *)data, size, &gbnf, &err) != 0) {
        if (gbnf) { fprintf(stderr, "failure left *gbnf set\n"); abort(); }
        check_error("json_schema_to_gbnf", &err);
        return 0;
    }
    size_t n = strlen(gbnf);
    if (n > (1u << 20) + 8192 || strncmp(gbnf, "root ::= ", 9) != 0) {
        fprintf(stderr, "grammar of %zu bytes, or without its root rule first\n", n);
        abort();
    }
    char *again = NULL;
    if (json_schema_to_gbnf((const char *)data, size, &again, &err) != 0 || strcmp(again, gbnf) != 0) {
        fprintf(stderr, "a second conversion gave another answer\n");
        abort();
    }
    free(again);
    grammar *g = NULL;
    if (grammar_parse(gbnf, n, &g, &err) != 0) {
        fprintf(stderr, "the engine refuses the grammar: %s\n--- grammar:\n%s\n", err.msg, gbnf);
        abort();
    }
    static const char *texts[] = { "null", "{}", "[]", "\"\"", "0", "-1.5e3", "{\"a\":[1,\"x\",true]}", "\"2024-02-29\"" };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int r = grammar_accepts_text(g, texts[i], strlen(texts[i]), &err);
        if (r < -1 || r > 1) { fprintf(stderr, "grammar_accepts_text returned %d\n", r); abort(); }
    }
    grammar_free(g);
    free(gbnf);
    return 0;
}
