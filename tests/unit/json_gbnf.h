/* A JSON grammar in GBNF (whitespace between tokens allowed), written by hand from RFC 8259: the
 * grammar tests' common case (test_grammar, test_constrain). */
#ifndef TS_TEST_JSON_GBNF_H
#define TS_TEST_JSON_GBNF_H
#define JSON_GBNF \
    "root ::= value\n" \
    "value ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n" \
    "object ::= \"{\" ws ( string ws \":\" ws value ws ( \",\" ws string ws \":\" ws value ws )* )? \"}\"\n" \
    "array ::= \"[\" ws ( value ws ( \",\" ws value ws )* )? \"]\"\n" \
    "string ::= \"\\\"\" ( [^\"\\\\\\x00-\\x1f] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} ) )* \"\\\"\"\n" \
    "number ::= \"-\"? ( \"0\" | [1-9] [0-9]* ) ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?\n" \
    "ws ::= [ \\t\\n]*\n"
#endif
