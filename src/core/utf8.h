/* UTF-8 decoding and validation, and a stream that prints only whole characters. */
#ifndef TS_CORE_UTF8_H
#define TS_CORE_UTF8_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes one code point from s[0..len). Returns its byte length (1-4), or 0 if the bytes there are
 * not valid UTF-8 (overlong forms, surrogates and values above U+10FFFF are invalid). */
int utf8_decode(const char *s, size_t len, uint32_t *cp);
/* Encodes cp into out (room for 4 bytes); returns the byte count, 0 for an invalid code point. */
int utf8_encode(uint32_t cp, char *out);
/* All of s[0..len) as code points into out (room for len of them): their count, or -1 with *bad_offset
 * (if non-NULL) at the first byte that is not valid UTF-8. */
long utf8_to_code_points(const char *s, size_t len, uint32_t *out, size_t *bad_offset);
/* cps[0..n) as UTF-8 into out (room for 4 n bytes, not NUL-terminated): the byte count. */
size_t utf8_from_code_points(const uint32_t *cps, size_t n, char *out);
/* True when all of s[0..len) is valid UTF-8; else *bad_offset (if non-NULL) is the first bad byte. */
bool utf8_valid(const char *s, size_t len, size_t *bad_offset);

/* Token pieces may split a character across tokens. utf8_stream holds the incomplete tail and
 * releases only complete characters; bytes that can never form a character are released as U+FFFD. */
typedef struct utf8_stream { char pending[4]; int n; } utf8_stream;
/* Appends in[0..len) and writes what is printable now to out (room for len + 8 bytes);
 * returns the number of bytes written. */
size_t utf8_stream_push(utf8_stream *st, const char *in, size_t len, char *out);
/* Whatever is left at the end (an incomplete tail) as U+FFFD; returns bytes written (room for 3). */
size_t utf8_stream_flush(utf8_stream *st, char *out);

#endif
