/* JSON Schema -> GBNF (src/text/json_schema.c): schemas that convert and the texts their grammars
 * must accept, reject, or leave out as documented narrowings (valid JSON the grammar does not
 * produce: whitespace, other key orders, other spellings); the cases were checked against Python's
 * jsonschema (Draft 2020-12 and its format checker) when written. Refusals name the keyword and its
 * path; hostile schemas (deep nesting, huge enums, $ref cycles, every truncation of every case)
 * fail with one clean line; the realistic schemas of tests/data/schemas/ convert and accept a
 * sample answer. The grammars are compiled and run by the grammar engine (text/grammar.h). */
#include "text/json_schema.h"
#include "check.h"
#include "text/grammar.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXTS 16

typedef struct accept_case {
    const char *name, *schema;
    const char *accept[MAX_TEXTS];   /* valid, in the grammar */
    const char *reject[MAX_TEXTS];   /* invalid */
    const char *narrow[MAX_TEXTS];   /* valid but outside the grammar (json_schema.h, "Narrowings") */
} accept_case;

static const accept_case cases[] = {
    /* digits are bounded so that a model cannot run on them forever (as llama.cpp's grammars do) */
    { "number digits",
      "{\"type\":\"number\"}",
      { "1234567890123456", "0.1234567890123456", "1e123", "-9.5E+12", NULL },
      { "12345678901234567", "0.12345678901234567", "1e1234", NULL },
      { NULL } },
    { "time fraction digits",
      "{\"type\":\"string\",\"format\":\"time\"}",
      { "\"12:30:00.123456789Z\"", NULL },
      { "\"12:30:00.1234567890Z\"", NULL },
      { NULL } },
    { "any value",
      "{}",
      { "{}", "[]", "\"x\"", "1", "-0.5e3", "true", "false", "null", "{\"a\":[1,{\"b\":null}]}", NULL },
      { "", "tru", "{\"a\":}", "[1,]", "01", "\"\\x\"", NULL },
      { "{ }", "[1, 2]", " 1", NULL } },
    { "true schema",
      "true",
      { "0", "\"a\"", NULL },
      { "nul", NULL },
      { NULL } },
    { "string",
      "{\"type\":\"string\"}",
      { "\"\"", "\"abc\"", "\"a\\\"b\"", "\"\\\\\"", "\"\\u00e9\"", "\"café\"", "\"\\n\\t\\/\"", "\"😀\"", NULL },
      { "abc", "\"a", "\"a\"b\"", "1", "null", "\"\\q\"", "\"\\u12\"", "\"\n\"", NULL },
      { "\"\\ud83d\\ude00\"", NULL } },
    { "integer",
      "{\"type\":\"integer\"}",
      { "0", "-7", "123456789", NULL },
      { "1.5", "007", "-", "+1", "\"1\"", "1e", NULL },
      { "1.0", "1e2", NULL } },
    { "number",
      "{\"type\":\"number\"}",
      { "0", "-0.5", "1e10", "2.5E-3", "-12.75e+2", NULL },
      { ".5", "1.", "01", "- 1", "1e", "+1", NULL },
      { NULL } },
    { "boolean",
      "{\"type\":\"boolean\"}",
      { "true", "false", NULL },
      { "1", "\"true\"", "null", NULL },
      { NULL } },
    { "null",
      "{\"type\":\"null\"}",
      { "null", NULL },
      { "0", "\"null\"", NULL },
      { NULL } },
    { "type list",
      "{\"type\":[\"string\",\"null\"]}",
      { "\"a\"", "null", NULL },
      { "1", "true", "{}", NULL },
      { NULL } },
    { "integer 0..100",
      "{\"type\":\"integer\",\"minimum\":0,\"maximum\":100}",
      { "0", "7", "10", "99", "100", NULL },
      { "101", "-1", "007", "1000", "100.5", NULL },
      { "-0", NULL } },
    { "integer -5..5",
      "{\"type\":\"integer\",\"minimum\":-5,\"maximum\":5}",
      { "-5", "-1", "0", "3", "5", NULL },
      { "-6", "6", "-05", "10", "-10", NULL },
      { NULL } },
    { "integer exclusive",
      "{\"type\":\"integer\",\"exclusiveMinimum\":-3,\"exclusiveMaximum\":250}",
      { "-2", "0", "249", "100", "199", NULL },
      { "-3", "250", "251", "-30", "1000", NULL },
      { NULL } },
    { "integer min only",
      "{\"type\":\"integer\",\"minimum\":18}",
      { "18", "19", "99", "100", "123456", NULL },
      { "17", "9", "0", "-18", "1", NULL },
      { NULL } },
    { "integer max only",
      "{\"type\":\"integer\",\"maximum\":-10}",
      { "-10", "-11", "-100", "-99999", NULL },
      { "-9", "0", "10", "-1", NULL },
      { NULL } },
    { "integer big range",
      "{\"type\":\"integer\",\"minimum\":1900,\"maximum\":2100}",
      { "1900", "1999", "2000", "2099", "2100", NULL },
      { "1899", "2101", "190", "21000", "0", NULL },
      { NULL } },
    { "integer fractional bounds",
      "{\"type\":\"integer\",\"minimum\":2.5,\"maximum\":7.5}",
      { "3", "7", NULL },
      { "2", "8", NULL },
      { NULL } },
    { "number 0..1",
      "{\"type\":\"number\",\"minimum\":0,\"maximum\":1}",
      { "0", "1", "0.5", "0.999", "1.0", "1.000", "0.0", NULL },
      { "1.1", "1.01", "-0.1", "2", "-1", NULL },
      { "1e-1", "5e-1", NULL } },
    { "number positive",
      "{\"type\":\"number\",\"exclusiveMinimum\":0}",
      { "0.1", "0.001", "1", "12.5", "100000", NULL },
      { "0", "0.0", "-1", "-0.5", "0.000", NULL },
      { NULL } },
    { "number -10..10 exclusive max",
      "{\"type\":\"number\",\"minimum\":-10,\"exclusiveMaximum\":10}",
      { "-10", "-10.0", "-9.99", "0", "9.999", "-0.5", NULL },
      { "10", "10.0", "-10.1", "-11", "11", NULL },
      { NULL } },
    { "number negative",
      "{\"type\":\"number\",\"exclusiveMaximum\":0}",
      { "-1", "-0.5", "-100.25", NULL },
      { "0", "1", "-0", "-0.0", "0.5", NULL },
      { NULL } },
    { "string lengths",
      "{\"type\":\"string\",\"minLength\":2,\"maxLength\":4}",
      { "\"ab\"", "\"abc\"", "\"abcd\"", "\"\\n\\t\"", "\"éé\"", NULL },
      { "\"a\"", "\"abcde\"", "\"\"", NULL },
      { NULL } },
    { "string long max",
      "{\"type\":\"string\",\"maxLength\":250}",
      { "\"\"", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", "\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"", "\"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\"", NULL },
      { "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", NULL },
      { NULL } },
    { "string long min",
      "{\"type\":\"string\",\"minLength\":150}",
      { "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", NULL },
      { "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", "\"\"", NULL },
      { NULL } },
    { "enum strings",
      "{\"enum\":[\"red\",\"green\",\"blue\"]}",
      { "\"red\"", "\"green\"", "\"blue\"", NULL },
      { "\"Red\"", "\"yellow\"", "red", "\"\"", NULL },
      { NULL } },
    { "enum mixed",
      "{\"enum\":[\"a\",1,null,true,[1,2],{\"k\":\"v\"}]}",
      { "\"a\"", "1", "null", "true", "[1,2]", "{\"k\":\"v\"}", NULL },
      { "2", "false", "[1]", "\"b\"", NULL },
      { "1.0", "[1, 2]", NULL } },
    { "enum filtered by type",
      "{\"type\":\"string\",\"enum\":[\"a\",1,\"b\"]}",
      { "\"a\"", "\"b\"", NULL },
      { "1", NULL },
      { NULL } },
    { "const",
      "{\"const\":\"fixed\"}",
      { "\"fixed\"", NULL },
      { "\"other\"", NULL },
      { NULL } },
    { "const object",
      "{\"const\":{\"a\":[1,\"x\\\"y\"]}}",
      { "{\"a\":[1,\"x\\\"y\"]}", NULL },
      { "{\"a\":[1]}", NULL },
      { NULL } },
    { "object required/optional",
      "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"string\"},\"c\":{\"type\":\"boolean\"}},\"required\":[\"b\"],\"additionalProperties\":false}",
      { "{\"b\":\"x\"}", "{\"a\":1,\"b\":\"x\"}", "{\"b\":\"x\",\"c\":true}", "{\"a\":1,\"b\":\"\",\"c\":false}", NULL },
      { "{}", "{\"a\":1}", "{\"b\":1}", "{\"b\":\"x\",\"d\":1}", "{\"b\":\"x\",}", NULL },
      { "{\"b\":\"x\",\"a\":1}", "{\"b\":\"x\",\"a\":1,\"a\":2}", NULL } },
    { "object all optional",
      "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"},\"y\":{\"type\":\"integer\"}},\"additionalProperties\":false}",
      { "{}", "{\"x\":1}", "{\"y\":2}", "{\"x\":1,\"y\":2}", NULL },
      { "{\"z\":1}", "{\"x\":\"1\"}", "{,}", "{\"x\":1,}", NULL },
      { "{\"y\":2,\"x\":1}", NULL } },
    { "object additional default",
      "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}",
      { "{\"id\":1}", "{\"id\":1,\"extra\":\"x\"}", "{\"id\":1,\"a\":[1],\"b\":{}}", "{\"id\":1,\"ids\":2}", "{\"id\":1,\"i\":2}", NULL },
      { "{\"extra\":\"x\"}", "{\"id\":\"1\"}", "{\"id\":1,\"id\":\"x\"}", NULL },
      { "{\"x\":1,\"id\":2}", "{\"id\":1,\"\\u0041\":1}", NULL } },
    { "object additional schema",
      "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"additionalProperties\":{\"type\":\"number\"}}",
      { "{}", "{\"name\":\"a\"}", "{\"x\":1}", "{\"name\":\"a\",\"x\":1,\"y\":2.5}", NULL },
      { "{\"x\":\"s\"}", "{\"name\":1}", "{\"name\":\"a\",\"x\":true}", "{\"name\":\"a\",\"name\":1}", NULL },
      { NULL } },
    { "object no properties, additional false",
      "{\"type\":\"object\",\"additionalProperties\":false}",
      { "{}", NULL },
      { "{\"a\":1}", NULL },
      { NULL } },
    { "map of integers",
      "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}",
      { "{}", "{\"a\":1}", "{\"a\":1,\"b\\\"c\":2}", NULL },
      { "{\"a\":\"x\"}", "{\"a\":1.5}", NULL },
      { NULL } },
    { "required not declared",
      "{\"type\":\"object\",\"required\":[\"k\"]}",
      { "{\"k\":1}", "{\"k\":null,\"z\":2}", NULL },
      { "{}", "{\"z\":2}", NULL },
      { NULL } },
    { "array items",
      "{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}",
      { "[]", "[1]", "[1,2,3]", NULL },
      { "[1,]", "[,1]", "[\"a\"]", "[1.5]", NULL },
      { "[1 ,2]", NULL } },
    { "array min/max",
      "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"maxItems\":3}",
      { "[\"a\"]", "[\"a\",\"b\"]", "[\"a\",\"b\",\"c\"]", NULL },
      { "[]", "[\"a\",\"b\",\"c\",\"d\"]", "[1]", NULL },
      { NULL } },
    { "array exact",
      "{\"type\":\"array\",\"minItems\":2,\"maxItems\":2}",
      { "[1,2]", "[null,\"x\"]", NULL },
      { "[1]", "[1,2,3]", NULL },
      { NULL } },
    { "array many",
      "{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9},\"minItems\":101,\"maxItems\":150}",
      { "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2]", "[3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3]", NULL },
      { "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", NULL },
      { NULL } },
    { "prefixItems",
      "{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"items\":false}",
      { "[]", "[\"a\"]", "[\"a\",1]", NULL },
      { "[1]", "[\"a\",\"b\"]", "[\"a\",1,2]", NULL },
      { NULL } },
    { "prefixItems then items",
      "{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"}],\"items\":{\"type\":\"boolean\"},\"minItems\":2}",
      { "[\"a\",true]", "[\"a\",true,false]", NULL },
      { "[\"a\"]", "[]", "[\"a\",1]", "[true,true]", NULL },
      { NULL } },
    { "tuple draft 4",
      "{\"type\":\"array\",\"items\":[{\"type\":\"integer\"},{\"type\":\"integer\"}],\"additionalItems\":false,\"minItems\":2}",
      { "[1,2]", NULL },
      { "[1]", "[1,2,3]", "[\"a\",2]", NULL },
      { NULL } },
    { "anyOf",
      "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\",\"minimum\":0,\"maximum\":9}]}",
      { "\"x\"", "0", "9", NULL },
      { "10", "null", "-1", NULL },
      { NULL } },
    { "oneOf objects",
      "{\"oneOf\":[{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"circle\"},\"r\":{\"type\":\"number\"}},\"required\":[\"kind\",\"r\"],\"additionalProperties\":false},{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"square\"},\"side\":{\"type\":\"number\"}},\"required\":[\"kind\",\"side\"],\"additionalProperties\":false}]}",
      { "{\"kind\":\"circle\",\"r\":1.5}", "{\"kind\":\"square\",\"side\":2}", NULL },
      { "{\"kind\":\"circle\",\"side\":2}", "{\"kind\":\"triangle\",\"r\":1}", "{}", NULL },
      { NULL } },
    { "anyOf with sibling",
      "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"],\"anyOf\":[{\"required\":[\"b\"]},{\"required\":[\"c\"]}]}",
      { "{\"a\":1,\"b\":2}", "{\"a\":1,\"c\":\"x\"}", "{\"a\":1,\"b\":1,\"c\":1}", NULL },
      { "{\"a\":1}", "{\"b\":1}", "{\"a\":1,\"d\":1}", NULL },
      { NULL } },
    { "allOf merge",
      "{\"allOf\":[{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]},{\"properties\":{\"b\":{\"type\":\"string\"}},\"required\":[\"b\"]}]}",
      { "{\"a\":1,\"b\":\"x\"}", "{\"a\":1,\"b\":\"x\",\"c\":null}", NULL },
      { "{\"a\":1}", "{\"b\":\"x\"}", "{\"a\":\"1\",\"b\":\"x\"}", NULL },
      { NULL } },
    { "allOf bounds",
      "{\"allOf\":[{\"type\":\"integer\",\"minimum\":0},{\"maximum\":10},{\"minimum\":5}]}",
      { "5", "10", "7", NULL },
      { "4", "11", "0", NULL },
      { NULL } },
    { "$ref defs",
      "{\"$defs\":{\"pos\":{\"type\":\"integer\",\"minimum\":1}},\"type\":\"object\",\"properties\":{\"n\":{\"$ref\":\"#/$defs/pos\"}},\"required\":[\"n\"],\"additionalProperties\":false}",
      { "{\"n\":1}", "{\"n\":42}", NULL },
      { "{\"n\":0}", "{}", "{\"n\":-1}", NULL },
      { NULL } },
    { "$ref definitions",
      "{\"definitions\":{\"s\":{\"type\":\"string\",\"maxLength\":2}},\"type\":\"array\",\"items\":{\"$ref\":\"#/definitions/s\"}}",
      { "[]", "[\"ab\",\"c\"]", NULL },
      { "[\"abc\"]", "[1]", NULL },
      { NULL } },
    { "recursive tree",
      "{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"integer\"},\"children\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},\"required\":[\"value\"],\"additionalProperties\":false}},\"$ref\":\"#/$defs/node\"}",
      { "{\"value\":1}", "{\"value\":1,\"children\":[]}", "{\"value\":1,\"children\":[{\"value\":2},{\"value\":3,\"children\":[{\"value\":4}]}]}", NULL },
      { "{\"children\":[]}", "{\"value\":1,\"children\":[{}]}", "{\"value\":1,\"children\":[{\"value\":\"x\"}]}", NULL },
      { NULL } },
    { "recursive root",
      "{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#\"},\"v\":{\"type\":\"integer\"}},\"additionalProperties\":false}",
      { "{}", "{\"next\":{}}", "{\"next\":{\"next\":{\"v\":1}},\"v\":2}", NULL },
      { "{\"next\":1}", "{\"x\":1}", NULL },
      { NULL } },
    { "$ref with sibling",
      "{\"$defs\":{\"base\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}},\"$ref\":\"#/$defs/base\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}",
      { "{\"id\":1,\"name\":\"a\"}", NULL },
      { "{\"id\":1}", "{\"name\":\"a\"}", NULL },
      { NULL } },
    { "format date",
      "{\"type\":\"string\",\"format\":\"date\"}",
      { "\"2024-02-29\"", "\"2023-12-31\"", "\"0001-01-01\"", "\"2000-02-29\"", "\"2023-04-30\"", NULL },
      { "\"2023-02-29\"", "\"1900-02-29\"", "\"2023-13-01\"", "\"2023-04-31\"", "\"2023-1-01\"", "\"20230101\"", "\"2023-00-10\"", "\"2023-01-00\"", NULL },
      { NULL } },
    { "format time",
      "{\"type\":\"string\",\"format\":\"time\"}",
      { "\"12:30:00Z\"", "\"23:59:59.123+05:30\"", "\"00:00:00-08:00\"", NULL },
      { "\"24:00:00Z\"", "\"12:60:00Z\"", "\"12:30Z\"", "\"12:30:00+5:00\"", NULL },
      { "\"12:30:00z\"", NULL } },
    { "format date-time",
      "{\"type\":\"string\",\"format\":\"date-time\"}",
      { "\"2024-05-01T10:20:30Z\"", "\"2024-05-01T10:20:30.5+02:00\"", NULL },
      { "\"2024-05-01 10:20:30Z\"", "\"2024-05-01T10:20:30\"", "\"2024-05-32T10:20:30Z\"", NULL },
      { NULL } },
    { "format uuid",
      "{\"type\":\"string\",\"format\":\"uuid\"}",
      { "\"123e4567-e89b-12d3-a456-426614174000\"", "\"123E4567-E89B-12D3-A456-426614174000\"", NULL },
      { "\"123e4567e89b12d3a456426614174000\"", "\"123e4567-e89b-12d3-a456-42661417400\"", "\"g23e4567-e89b-12d3-a456-426614174000\"", NULL },
      { NULL } },
    { "pattern",
      "{\"type\":\"string\",\"pattern\":\"^[A-Z]{2}-\\\\d{3,5}$\"}",
      { "\"AB-123\"", "\"XY-12345\"", NULL },
      { "\"ab-123\"", "\"AB-12\"", "\"AB-123456\"", "\"AB123\"", NULL },
      { NULL } },
    { "pattern alternation and groups",
      "{\"type\":\"string\",\"pattern\":\"^(foo|ba[rz])+(\\\\.txt)?$\"}",
      { "\"foo\"", "\"barbaz\"", "\"foobar.txt\"", NULL },
      { "\"\"", "\"qux\"", "\"foo.tx\"", NULL },
      { NULL } },
    { "pattern dot and negated class",
      "{\"type\":\"string\",\"pattern\":\"^a.c[^0-9]$\"}",
      { "\"abcd\"", "\"a-c_\"", "\"a\\\"cx\"", "\"aécé\"", NULL },
      { "\"abc1\"", "\"ac\"", "\"a\\nc_\"", NULL },
      { NULL } },
    { "pattern quote and escapes",
      "{\"type\":\"string\",\"pattern\":\"^\\\"[\\\\\\\\/]\\\\t?$\"}",
      { "\"\\\"\\\\\"", "\"\\\"/\\t\"", "\"\\\"/\"", NULL },
      { "\"\\\"x\"", "\"\\\"\\\\\\t\\t\"", NULL },
      { NULL } },
    { "pattern optional empty branch",
      "{\"type\":\"string\",\"pattern\":\"^x(a|)y$\"}",
      { "\"xay\"", "\"xy\"", NULL },
      { "\"xaay\"", NULL },
      { NULL } },
    { "pattern shorthand",
      "{\"type\":\"string\",\"pattern\":\"^\\\\w+@\\\\w+\\\\.[a-z]{2,3}$\"}",
      { "\"joe_1@example.com\"", "\"a@b.io\"", NULL },
      { "\"a@b.c\"", "\"@b.com\"", "\"a b@c.com\"", NULL },
      { NULL } },
    { "pattern unanchored (taken as anchored)",
      "{\"type\":\"string\",\"pattern\":\"[0-9]+\"}",
      { "\"123\"", NULL },
      { "\"abc\"", NULL },
      { "\"ab1\"", NULL } },
    { "pattern large count",
      "{\"type\":\"string\",\"pattern\":\"^a{0,250}$\"}",
      { "\"\"", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", NULL },
      { "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", NULL },
      { NULL } },
    { "no type with keywords",
      "{\"minimum\":5,\"maxLength\":1}",
      { "5", "6", "\"x\"", "\"\"", "null", "{}", "[]", NULL },
      { "4", "\"xy\"", NULL },
      { NULL } },
    { "nullable string via type list with enum",
      "{\"type\":[\"string\",\"null\"],\"enum\":[\"a\",null,3]}",
      { "\"a\"", "null", NULL },
      { "3", "\"b\"", NULL },
      { NULL } },
    { "annotations ignored",
      "{\"title\":\"T\",\"description\":\"D\",\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"x\",\"examples\":[1],\"default\":2,\"type\":\"integer\",\"$comment\":\"c\"}",
      { "1", NULL },
      { "\"1\"", NULL },
      { NULL } },
    { "property key escaping",
      "{\"type\":\"object\",\"properties\":{\"a\\\"b\":{\"type\":\"integer\"},\"été\":{\"type\":\"integer\"}},\"required\":[\"a\\\"b\",\"été\"],\"additionalProperties\":false}",
      { "{\"a\\\"b\":1,\"été\":2}", NULL },
      { "{\"a\\\"b\":1}", "{\"ab\":1,\"été\":2}", NULL },
      { NULL } },
    { "extra keys avoid declared names",
      "{\"type\":\"object\",\"properties\":{\"ab\":{\"type\":\"integer\"},\"ac\":{\"type\":\"integer\"},\"é\":{\"type\":\"integer\"}},\"additionalProperties\":{\"type\":\"string\"}}",
      { "{\"a\":\"x\"}", "{\"abc\":\"x\"}", "{\"ab\":1,\"ad\":\"x\"}", "{\"b\":\"x\"}", "{\"éé\":\"x\"}", "{\"\":\"x\"}", NULL },
      { "{\"ab\":\"x\"}", "{\"ac\":\"x\"}", "{\"é\":\"x\"}", "{\"ab\":1,\"ab\":\"x\"}", "{\"\\u00e9\":\"x\"}", NULL },
      { NULL } },
    { "false property",
      "{\"type\":\"object\",\"properties\":{\"a\":false,\"b\":{\"type\":\"integer\"}}}",
      { "{}", "{\"b\":1}", "{\"c\":1}", NULL },
      { "{\"a\":1}", "{\"b\":1,\"a\":1}", NULL },
      { NULL } },
    { "anyOf: an unsatisfiable branch is left out",
      "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"additionalProperties\":false,\"anyOf\":[{\"type\":\"null\"},{\"required\":[\"a\"]}]}",
      { "{\"a\":1}", NULL },
      { "null", "{}", NULL },
      { NULL } },
    { "anyOf: empty-range branch left out",
      "{\"anyOf\":[{\"type\":\"integer\",\"minimum\":5,\"maximum\":1},{\"type\":\"string\",\"maxLength\":1},false]}",
      { "\"x\"", "\"\"", NULL },
      { "3", "\"xy\"", NULL },
      { NULL } },
};

/* grammar text of a schema, or NULL (the error printed) */
static char *convert(const char *schema, ts_error *err) {
    char *g = NULL;
    if (json_schema_to_gbnf(schema, strlen(schema), &g, err)) return NULL;
    return g;
}

static int accepts(const grammar *g, const char *text) {
    ts_error err = { "" };
    int r = grammar_accepts_text(g, text, strlen(text), &err);
    if (r < 0) printf("# grammar_accepts_text: %s\n", err.msg);
    return r;
}

static void test_cases(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const accept_case *k = &cases[i];
        ts_error err = { "" };
        char *gbnf = convert(k->schema, &err);
        CHECK(gbnf != NULL, "%s: converts (%s)", k->name, gbnf ? "ok" : err.msg);
        if (!gbnf) continue;
        grammar *g = NULL;
        int rc = grammar_parse(gbnf, strlen(gbnf), &g, &err);
        CHECK(rc == 0, "%s: the grammar compiles (%s)", k->name, rc ? err.msg : "ok");
        if (rc) { printf("# grammar:\n%s", gbnf); free(gbnf); continue; }
        int bad = 0;
        for (int j = 0; j < MAX_TEXTS && k->accept[j]; j++)
            if (accepts(g, k->accept[j]) != 1) { printf("# %s: should accept %s\n", k->name, k->accept[j]); bad++; }
        for (int j = 0; j < MAX_TEXTS && k->reject[j]; j++)
            if (accepts(g, k->reject[j]) != 0) { printf("# %s: should reject %s\n", k->name, k->reject[j]); bad++; }
        for (int j = 0; j < MAX_TEXTS && k->narrow[j]; j++)
            if (accepts(g, k->narrow[j]) != 0) { printf("# %s: narrowing: should not accept %s\n", k->name, k->narrow[j]); bad++; }
        CHECK(bad == 0, "%s: accepts the valid texts, rejects the invalid ones", k->name);
        if (bad) printf("# grammar:\n%s", gbnf);
        grammar_free(g);
        free(gbnf);
    }
}

/* Refused, the message naming the cause and the place. */
static const struct { const char *schema, *want[3]; } refusals[] = {
    { "{\"type\":\"object\",\"properties\":{\"x\":{\"patternProperties\":{}}}}",
      { "json schema: unsupported keyword \"patternProperties\" at /properties/x", NULL } },
    { "{\"type\":\"number\",\"multipleOf\":3}", { "unsupported keyword \"multipleOf\"", "at the root", NULL } },
    { "{\"not\":{}}", { "unsupported keyword \"not\"", NULL } },
    { "{\"if\":{},\"then\":{}}", { "unsupported keyword \"if\"", NULL } },
    { "{\"type\":\"object\",\"minProperties\":1}", { "unsupported keyword \"minProperties\"", NULL } },
    { "{\"type\":\"array\",\"contains\":{}}", { "unsupported keyword \"contains\"", NULL } },
    { "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"format\":\"email\"}}",
      { "unsupported format \"email\"", "at /items", NULL } },
    { "{\"type\":\"array\",\"uniqueItems\":true}", { "\"uniqueItems\": true", NULL } },
    { "false", { "the schema false", NULL } },
    { "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\",\"foo\":1}]}", { "unsupported keyword \"foo\"", "at /anyOf/1", NULL } },
    { "{\"type\":\"strin\"}", { "unknown type \"strin\"", NULL } },
    { "{\"type\":\"number\",\"minimum\":0.5}", { "non-integral bound", NULL } },
    { "{\"type\":\"integer\",\"minimum\":10,\"maximum\":5}", { "no integer", NULL } },
    { "{\"type\":\"number\",\"exclusiveMinimum\":true,\"minimum\":0}", { "boolean \"exclusiveMinimum\"", NULL } },
    { "{\"type\":\"integer\",\"maximum\":1e300}", { "\"maximum\"", "beyond", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"(a)\\\\1\"}", { "backreferences", "at the root", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"a(?=b)\"}", { "lookahead", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"(?<=a)b\"}", { "lookbehind", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"\\\\bword\"}", { "word boundary", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"\\\\p{L}\"}", { "Unicode property", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"(?i)abc\"}", { "group syntax", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"a^b\"}", { "\"^\"", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"(ab\"}", { "without \")\"", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"a**\"}", { "quantifier", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"[z-a]\"}", { "out of order", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"a{1,20000}\"}", { "repetition count", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"(a*)*\"}", { "empty string, repeated without bound", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"x(a|)+\"}", { "empty string, repeated without bound", NULL } },
    { "{\"type\":\"string\",\"pattern\":\"^[a-z]+$\",\"maxLength\":5}", { "together with \"pattern\"", NULL } },
    { "{\"type\":\"string\",\"maxLength\":20000}", { "\"maxLength\" 20000", NULL } },
    { "{\"type\":\"array\",\"minItems\":3,\"maxItems\":2}", { "\"minItems\" 3", NULL } },
    { "{\"enum\":[1,2],\"minimum\":1}", { "\"enum\" together with \"minimum\"", NULL } },
    { "{\"type\":\"string\",\"enum\":[1,2]}", { "no value of \"enum\"", NULL } },
    { "{\"$ref\":\"#/$defs/missing\"}", { "$ref \"#/$defs/missing\" does not resolve", NULL } },
    { "{\"$ref\":\"https://example.com/s.json\"}", { "only references inside the document", NULL } },
    { "{\"$ref\":\"#node\"}", { "anchors are not supported", NULL } },
    { "{\"$ref\":\"#\"}", { "left recursion", NULL } },
    { "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}", { "left recursion", NULL } },
    { "{\"$defs\":{\"a\":{\"anyOf\":[{\"type\":\"null\"},{\"$ref\":\"#/$defs/a\"}]}},\"$ref\":\"#/$defs/a\"}", { "left recursion", NULL } },
    { "{\"$defs\":{\"a\":{\"allOf\":[{\"$ref\":\"#/$defs/a\"}]}},\"$ref\":\"#/$defs/a\"}", { "deeper than", NULL } },
    { "{\"allOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", { "no common type", NULL } },
    { "{\"allOf\":[{\"pattern\":\"a\"},{\"pattern\":\"b\"}]}", { "both branches set \"pattern\"", NULL } },
    { "{\"allOf\":[{\"properties\":{\"a\":{}},\"additionalProperties\":false},{\"properties\":{\"b\":{}}}]}",
      { "property \"b\"", "additionalProperties", NULL } },
    { "{\"type\":\"object\",\"required\":[\"a\"],\"additionalProperties\":false}", { "required property \"a\"", NULL } },
    { "{\"type\":\"object\",\"properties\":{\"a\":false},\"required\":[\"a\"]}", { "schema false", NULL } },
    { "{\"type\":\"object\",\"properties\":{\"a\":{},\"a\":{}}}", { "declared twice", NULL } },
    { "{\"type\":3}", { "\"type\" must be", NULL } },
    { "{\"properties\":{\"~a/b\":{\"type\":\"x\"}}}", { "at /properties/~0a~1b", NULL } },
    { "{\"type\":\"object\"", { "json schema: byte", NULL } },
    { "", { "json schema: byte 0", NULL } },
    { "[1]", { "a schema must be an object or a boolean", NULL } },
};

static void test_refusals(void) {
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        ts_error err = { "" };
        char *g = convert(refusals[i].schema, &err);
        bool ok = g == NULL && strncmp(err.msg, "json schema: ", 13) == 0 && !strchr(err.msg, '\n');
        for (int j = 0; ok && j < 3 && refusals[i].want[j]; j++) ok = strstr(err.msg, refusals[i].want[j]) != NULL;
        CHECK(ok, "refuses %.60s (%s)", refusals[i].schema, g ? "accepted" : err.msg);
        free(g);
    }
}

/* A growable string for the generated schemas. */
typedef struct sbuf { char *p; size_t n, cap; } sbuf;

static void add(sbuf *t, const char *s) {
    size_t k = strlen(s);
    if (t->n + k + 1 > t->cap) {
        t->cap = (t->n + k + 1) * 2;
        t->p = realloc(t->p, t->cap);
        if (!t->p) abort();
    }
    memcpy(t->p + t->n, s, k + 1);
    t->n += k;
}

static void expect_refusal(const char *what, const char *schema, const char *want) {
    ts_error err = { "" };
    char *g = convert(schema, &err);
    CHECK(!g && strstr(err.msg, want) && !strchr(err.msg, '\n'), "%s: refused (%s)", what, g ? "accepted" : err.msg);
    free(g);
}

/* schema and grammar both compile */
static bool converts_and_compiles(const char *schema, char **out) {
    ts_error err = { "" };
    char *g = convert(schema, &err);
    if (!g) { printf("# %s\n", err.msg); return false; }
    grammar *gr = NULL;
    int rc = grammar_parse(g, strlen(g), &gr, &err);
    if (rc) printf("# grammar: %s\n", err.msg);
    grammar_free(gr);
    if (out) *out = g;
    else free(g);
    return rc == 0;
}

static void test_hostile(void) {
    sbuf t = { 0 };
    /* nesting: 40 levels convert, 100 are refused by the depth cap (the parser allows 128) */
    for (int depth = 40; depth <= 100; depth += 60) {
        t.n = 0;
        add(&t, "");
        for (int i = 0; i < depth; i++) add(&t, "{\"type\":\"array\",\"items\":");
        add(&t, "{\"type\":\"integer\"}");
        for (int i = 0; i < depth; i++) add(&t, "}");
        if (depth == 40) CHECK(converts_and_compiles(t.p, NULL), "40 nested arrays convert");
        else expect_refusal("100 nested arrays", t.p, "nesting deeper than 64");
    }
    t.n = 0;
    for (int i = 0; i < 200; i++) add(&t, "[");
    for (int i = 0; i < 200; i++) add(&t, "]");
    expect_refusal("JSON nested 200 deep", t.p, "json schema: byte");
    /* huge enums: by count, then by size */
    t.n = 0;
    add(&t, "{\"enum\":[");
    for (int i = 0; i < 20000; i++) { char num[16]; snprintf(num, sizeof num, i ? ",%d" : "%d", i); add(&t, num); }
    add(&t, "]}");
    expect_refusal("an enum of 20,000 values", t.p, "more than 10000 values");
    t.n = 0;
    add(&t, "{\"enum\":[");
    char big[300];
    memset(big, 'x', 256);
    big[256] = 0;
    for (int i = 0; i < 6000; i++) { add(&t, i ? ",\"" : "\""); add(&t, big); add(&t, "\""); }
    add(&t, "]}");
    expect_refusal("an enum of 1.5 MB", t.p, "would exceed 1048576 bytes");
    /* many properties with additional keys allowed: the key trie stays within bounds */
    t.n = 0;
    add(&t, "{\"type\":\"object\",\"properties\":{");
    for (int i = 0; i < 300; i++) { char p[64]; snprintf(p, sizeof p, "%s\"prop_%d_name\":{\"type\":\"integer\"}", i ? "," : "", i); add(&t, p); }
    add(&t, "}}");
    char *g = NULL;
    CHECK(converts_and_compiles(t.p, &g), "300 properties with additional keys allowed convert");
    if (g) {
        grammar *gr = NULL;
        ts_error err;
        if (!grammar_parse(g, strlen(g), &gr, &err)) {
            CHECK(accepts(gr, "{\"prop_7_name\":7,\"prop_299_name\":1,\"prop_7_nam\":\"x\"}") == 1 &&
                  accepts(gr, "{\"prop_7_name\":7,\"prop_7_name\":\"x\"}") == 0,
                  "an additional key is anything but a declared name");
            grammar_free(gr);
        }
        free(g);
    }
    /* repetition counts past JS_CHUNK are nested: 5,000 characters */
    CHECK(converts_and_compiles("{\"type\":\"string\",\"minLength\":4999,\"maxLength\":5000}", &g), "minLength 4999, maxLength 5000 converts");
    if (g) {
        CHECK(!strstr(g, "{101") && !strstr(g, "{4999") && !strstr(g, ",4999}") && !strstr(g, "{5000"),
              "no repetition count above 100 is written");
        grammar *gr = NULL;
        ts_error err;
        if (!grammar_parse(g, strlen(g), &gr, &err)) {
            char *s = malloc(5003);
            s[0] = '"';
            memset(s + 1, 'a', 5000);
            s[5001] = '"';
            s[5002] = 0;
            int at5000 = accepts(gr, s);
            s[4999] = '"'; s[5000] = 0;
            int at4998 = accepts(gr, s);
            s[4999] = 'a'; s[5000] = '"'; s[5001] = 0;
            int at4999 = accepts(gr, s);
            CHECK(at5000 == 1 && at4999 == 1 && at4998 == 0, "5,000 and 4,999 characters accepted, 4,998 not");
            free(s);
            grammar_free(gr);
        }
        free(g);
    }
    /* nested counts multiply: each repeated group is a rule of its own, so the grammar stays small */
    CHECK(converts_and_compiles("{\"type\":\"string\",\"pattern\":\"^(((ab){100}){100}){100}(c?){0,50}$\"}", &g),
          "a pattern of nested counts (10^6 copies) converts and compiles");
    CHECK(g && strlen(g) < 4096, "... in a small grammar");
    free(g);
    /* every truncation and every single-byte change of every case: a clean result each time */
    int clean = 0, total = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *s = cases[i].schema;
        size_t n = strlen(s);
        char *buf = malloc(n + 1);
        for (size_t cut = 0; cut <= n; cut++) {
            for (int mut = 0; mut < 3; mut++) {
                memcpy(buf, s, n + 1);
                size_t len = n;
                if (mut == 0) len = cut;
                else if (cut < n) buf[cut] = mut == 1 ? '}' : '0';
                else continue;
                ts_error err = { "" };
                char *out = NULL;
                int rc = json_schema_to_gbnf(buf, len, &out, &err);
                bool ok = rc == 0 ? out != NULL : out == NULL && !strncmp(err.msg, "json schema: ", 13) && !strchr(err.msg, '\n');
                if (ok && rc == 0) {
                    grammar *gr = NULL;
                    ok = grammar_parse(out, strlen(out), &gr, &err) == 0;
                    if (!ok) printf("# %.*s: grammar: %s\n", (int)len, buf, err.msg);
                    grammar_free(gr);
                }
                clean += ok;
                total++;
                free(out);
            }
        }
        free(buf);
    }
    CHECK(clean == total, "%d of %d truncated or altered schemas give a compiling grammar or one error line", clean, total);
    free(t.p);
}

/* tests/data/schemas/NAME.json: converts, compiles, accepts its sample answers */
static const struct { const char *name; const char *samples[4]; } schema_files[] = {
    { "invoice", { "{\"invoice_number\":\"INV-2024001\",\"issue_date\":\"2024-03-15\",\"due_date\":\"2024-04-14\",\"currency\":\"EUR\",\"vendor\":\"ACME GmbH\",\"lines\":[{\"description\":\"Widgets\",\"quantity\":12,\"unit_price\":3.5},{\"description\":\"Shipping\",\"quantity\":1,\"unit_price\":9}],\"total\":51,\"paid\":false}", NULL } },
    { "person", { "{\"first_name\":\"Ada\",\"last_name\":\"Lovelace\",\"age\":36,\"email\":\"ada@example.org\",\"role\":\"admin\",\"address\":{\"street\":\"12 St James Sq\",\"city\":\"London\",\"postal_code\":\"12345\",\"country\":\"GB\"},\"phone\":null}", NULL } },
    { "todo_list", { "{\"title\":\"Weekend\",\"items\":[{\"task\":\"Buy milk\",\"priority\":2,\"done\":false}],\"tags\":[\"home\"]}", NULL } },
    { "tree", { "{\"name\":\"root\",\"weight\":5,\"children\":[{\"name\":\"a\"},{\"name\":\"b\",\"children\":[{\"name\":\"c\",\"weight\":100}]}]}", NULL } },
    { "shape_anyof", { "{\"kind\":\"circle\",\"radius\":2.5}", "{\"kind\":\"rectangle\",\"width\":3,\"height\":4.25}", "null", NULL } },
    { "integer_ranges", { "{\"percent\":100,\"temperature\":-40,\"year\":2024,\"port\":8080,\"offset\":-12,\"count\":0}", NULL } },
    { "string_patterns", { "{\"sku\":\"ABC-1234\",\"hex_color\":\"#a1B2c3\",\"version\":\"1.20.3-rc1\",\"slug\":\"hello-world-2\",\"ipv4\":\"192.168.0.255\"}", NULL } },
    { "event_formats", { "{\"id\":\"123e4567-e89b-12d3-a456-426614174000\",\"created_at\":\"2024-02-29T23:59:59.5Z\",\"day\":\"2024-12-31\",\"starts\":\"08:30:00+01:00\",\"attendees\":[]}", NULL } },
    { "sentiment", { "{\"label\":\"positive\",\"confidence\":0.93,\"keywords\":[\"great\",\"fast\"]}", NULL } },
    { "coordinates_tuple", { "{\"route\":[[\"Paris\",48.8566,2.3522],[\"Berlin\",52.52,13.405]]}", NULL } },
    { "product_allof", { "{\"id\":7,\"name\":\"Dune\",\"price\":9.99,\"in_stock\":true,\"category\":\"books\"}", "{\"id\":1,\"name\":\"x\",\"price\":0,\"in_stock\":false,\"note\":\"extra\"}", NULL } },
    { "key_value_map", { "{\"version\":2,\"debug\":true,\"theme\":\"dark\"}", "{\"version\":2}", NULL } },
    { "filesystem_oneof", { "{\"type\":\"directory\",\"name\":\"src\",\"entries\":[{\"type\":\"file\",\"name\":\"main.c\",\"size\":1200},{\"type\":\"directory\",\"name\":\"lib\",\"entries\":[]}]}", NULL } },
};

static void test_schema_files(void) {
    for (size_t i = 0; i < sizeof schema_files / sizeof schema_files[0]; i++) {
        char path[256];
        size_t n;
        snprintf(path, sizeof path, "tests/data/schemas/%s.json", schema_files[i].name);
        char *text = read_all(path, &n);
        CHECK(text != NULL, "%s: read", path);
        if (!text) continue;
        ts_error err = { "" };
        char *g = NULL;
        int rc = json_schema_to_gbnf(text, n, &g, &err);
        CHECK(rc == 0, "%s: converts (%s)", path, rc ? err.msg : "ok");
        grammar *gr = NULL;
        if (!rc) {
            rc = grammar_parse(g, strlen(g), &gr, &err);
            CHECK(rc == 0, "%s: the grammar compiles (%s)", path, rc ? err.msg : "ok");
        }
        if (!rc) {
            int bad = 0;
            for (int j = 0; j < 4 && schema_files[i].samples[j]; j++)
                if (accepts(gr, schema_files[i].samples[j]) != 1) { printf("# should accept %s\n", schema_files[i].samples[j]); bad++; }
            CHECK(bad == 0, "%s: accepts its sample answers", path);
        }
        grammar_free(gr);
        free(g);
        free(text);
    }
}

int main(void) {
    test_cases();
    test_refusals();
    test_hostile();
    test_schema_files();
    CHECK_EXIT();
}
