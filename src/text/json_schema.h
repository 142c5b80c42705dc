/* JSON Schema -> GBNF grammar (llama.cpp's grammar syntax), for constrained sampling: the grammar's
 * sentences are the compact JSON texts (no whitespace outside strings) that validate against the
 * schema, within the subset below. Where an exact grammar would be impractical the grammar accepts a
 * subset of the valid texts (listed under "Narrowings"), never a text the schema rejects; whatever
 * cannot be expressed that way is refused by name with its JSON pointer.
 *
 * Supported:
 *   true / {} (any JSON value); type (a name or a list: object, array, string, number, integer,
 *   boolean, null; without "type" every type is allowed, each under its own keywords, as JSON
 *   Schema says); enum, const (any JSON values; with a type, the values of other types dropped);
 *   object: properties, required, additionalProperties (true, false or a schema; absent = true);
 *   array: items (a schema or false; a list = draft-4 tuple, with additionalItems), prefixItems,
 *   minItems, maxItems, uniqueItems: false;
 *   string: minLength, maxLength, pattern (regex subset below), format: date, time, date-time, uuid;
 *   integer: minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers): exact digit ranges,
 *   bounds within +-10^15;
 *   number: the same bounds when they are integers within +-10^15 (the grammar then writes numbers
 *   without an exponent: 12.5, not 1.25e1);
 *   anyOf; oneOf (taken as anyOf: the grammar cannot check that exactly one branch matches, so a
 *   value matching two branches is accepted); allOf (merged: type intersected, properties joined,
 *   required united, bounds tightened; a keyword both branches set differently is refused);
 *   $ref to a JSON pointer in the document (#, #/$defs/X, #/definitions/X, ...; recursion allowed);
 *   sibling keywords next to $ref / anyOf / oneOf (merged into the target / into each branch);
 *   annotations ignored: title, description, $schema, $id, $comment, examples, default,
 *   deprecated, readOnly, writeOnly, $defs, definitions.
 * Pattern subset (ECMA-262 syntax, taken as anchored ^...$ whether or not written so): literals,
 *   escapes \t \n \r \f \v \0 \xHH \uHHHH and escaped punctuation, ., classes [..] [^..] with ranges,
 *   \d \D \w \W \s \S (ECMA meanings: ASCII digits / word characters), groups ( ) (?: ) (?<name> ),
 *   |, quantifiers * + ? {m} {m,} {m,n} (lazy ? ignored). Refused by name: backreferences,
 *   lookarounds, word boundaries, \p{..}, inline flags, ^ or $ inside the pattern, a group that can
 *   match the empty string under an unbounded quantifier ((a*)*, (a|)+).
 * Narrowings (valid texts the grammar does not produce):
 *   object members come in the order "properties" declares them (required ones present, optional
 *   ones optional), then the additional ones; an additional key is written without escapes and is
 *   none of the declared names (an additional key written twice is not prevented: harmless, as
 *   both values satisfy the schema, whichever the parser keeps);
 *   keys, enum and const values are written in one canonical spelling (json_buf_put_string's
 *   escapes, numbers in their shortest form); strings never use \u escapes of surrogates;
 *   integers are written as integers (not 1.0 or 1e2); bounded numbers without an exponent;
 *   numbers with at most 16 integer digits, 16 fraction digits and 3 exponent digits, time
 *   fractions with at most 9 digits (so that a model cannot run on digits without end);
 *   formats as: date YYYY-MM-DD (a real calendar day, leap years included, year 0001-9999),
 *   time HH:MM:SS(.fraction)?(Z|+HH:MM|-HH:MM) with seconds 00-59, date-time DATE "T" TIME,
 *   uuid 8-4-4-4-12 hex digits of either case;
 *   a pattern is matched whole (JSON Schema searches: "abc" also validates "xabcx"); the characters
 *   a pattern's `.` or class allows are written raw, a quote or backslash as \" \\, control characters
 *   only as \b \t \n \f \r (others not at all);
 * Limits: counts (minLength, maxLength, minItems, maxItems, pattern quantifiers) up to 10,000 (the
 *   grammar never repeats more than 100 times at once: larger counts are nested), prefixItems up to
 *   64, schema nesting 64 deep, enum/const up to 10,000 values, 1 MiB of grammar.
 * Refused: the schema false, every other keyword (patternProperties, multipleOf, not, if/then/else,
 *   minProperties, uniqueItems: true, contains, dependentRequired, ...), other formats (email, uri,
 *   ...), boolean exclusiveMinimum/exclusiveMaximum (draft 4), non-integral bounds of a number,
 *   min/maxLength together with a pattern or a format, enum/const with other value keywords,
 *   external $refs, unsatisfiable schemas (minimum above maximum, no type left, ...). */
#ifndef TS_TEXT_JSON_SCHEMA_H
#define TS_TEXT_JSON_SCHEMA_H
#include <stddef.h>
#include "tessera.h"

/* Converts a JSON Schema (text of len bytes) into GBNF grammar text whose root rule is `root` and
 * whose sentences are exactly the JSON texts (compact: no whitespace anywhere outside strings —
 * the answer ends when the value is complete) that validate against the schema. 0 with *gbnf
 * malloc'd NUL-terminated, or -1 with err: malformed JSON, or an unsupported keyword/value named
 * ("json schema: unsupported keyword \"patternProperties\" at /properties/x"). */
int json_schema_to_gbnf(const char *schema, size_t len, char **gbnf, ts_error *err);

#endif
