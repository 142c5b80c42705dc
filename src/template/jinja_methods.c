/* The Python methods templates call on values (str.split, dict.get, ...), loop.cycle, and the
 * global functions (range, namespace, dict, raise_exception, strftime_now). Methods that mutate
 * a list or dict are refused, as transformers' ImmutableSandboxedEnvironment refuses them. */
#include "template/jinja_internal.h"
#include "core/unicode.h"
#include "core/utf8.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- string helpers shared with the filters ---- */

/* simple one-to-one case mapping for the scripts templates and conversations commonly use */
static uint32_t to_upper(uint32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0x80) return c;
    if ((c >= 0xe0 && c <= 0xfe && c != 0xf7)) return c - 32;
    if (c == 0xff) return 0x178;
    if (c >= 0x100 && c <= 0x17f && c != 0x131 && c != 0x138 && c != 0x149) {
        bool odd_lower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e);
        if (odd_lower ? (c & 1) == 0 : (c & 1) == 1) return c - 1;
        return c;
    }
    if (c >= 0x3b1 && c <= 0x3c9 && c != 0x3c2) return c - 32;
    if (c == 0x3c2) return 0x3a3;
    if (c >= 0x430 && c <= 0x44f) return c - 32;
    if (c >= 0x450 && c <= 0x45f) return c - 80;
    if (c >= 0xff41 && c <= 0xff5a) return c - 32;
    return c;
}

static uint32_t to_lower(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0x80) return c;
    if ((c >= 0xc0 && c <= 0xde && c != 0xd7)) return c + 32;
    if (c == 0x178) return 0xff;
    if (c >= 0x100 && c <= 0x17f && c != 0x130 && c != 0x138 && c != 0x149) {
        bool odd_lower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e);
        if (odd_lower ? (c & 1) == 1 : (c & 1) == 0) return c + 1;
        return c;
    }
    if (c >= 0x391 && c <= 0x3a9 && c != 0x3a2) return c + 32;
    if (c >= 0x410 && c <= 0x42f) return c + 32;
    if (c >= 0x400 && c <= 0x40f) return c + 80;
    if (c >= 0xff21 && c <= 0xff3a) return c + 32;
    return c;
}

static bool is_cased(uint32_t c) { return to_upper(c) != c || to_lower(c) != c || (unicode_flags(c) & (UNICODE_UPPER | UNICODE_LOWER)); }

static void put_cp(jinja_run *r, jbuf *b, uint32_t cp) {
    char enc[4];
    int k = utf8_encode(cp, enc);
    jinja_buf_put(r, b, enc, (size_t)(k > 0 ? k : 0));
}

jv jinja_str_case(jinja_run *r, jv s, jcase mode) {
    s = jinja_to_str(r, s);
    jbuf b = {0};
    bool word_start = true, first = true;
    jinja_charge(r, s.s.n / 256);
    for (size_t i = 0; i < s.s.n;) {
        uint32_t cp;
        int k = jinja_decode(s.s.p + i, s.s.n - i, &cp);
        uint32_t out = cp;
        switch (mode) {
        case CASE_UPPER:
            if (cp == 0xdf) { jinja_buf_puts(r, &b, "SS"); i += (size_t)k; continue; }
            out = to_upper(cp);
            break;
        case CASE_LOWER: out = to_lower(cp); break;
        case CASE_CAPITALIZE: out = first ? to_upper(cp) : to_lower(cp); break;
        case CASE_TITLE:
            /* Jinja's title filter: words begin after whitespace, '-', and opening brackets */
            out = word_start ? to_upper(cp) : to_lower(cp);
            word_start = jinja_isspace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
            break;
        }
        first = false;
        if (out == cp) jinja_buf_put(r, &b, s.s.p + i, (size_t)k);
        else put_cp(r, &b, out);
        i += (size_t)k;
    }
    return b.p ? jinja_buf_value(&b) : jinja_str_static("");
}

static bool in_chars(uint32_t cp, jv chars) {
    for (size_t i = 0; i < chars.s.n;) {
        uint32_t c;
        i += (size_t)jinja_decode(chars.s.p + i, chars.s.n - i, &c);
        if (c == cp) return true;
    }
    return false;
}

/* str.strip(chars): chars none strips whitespace (an undefined one is a type error, as in Python) */
jv jinja_str_strip(jinja_run *r, jv s, jv chars, bool lead, bool trail) {
    s = jinja_to_str(r, s);
    bool ws = chars.type == JV_NONE;
    if (!ws && chars.type != JV_STR) jinja_fail(r, "strip arg must be None or str");
    const char *p = s.s.p;
    size_t n = s.s.n;
    while (lead && n) {
        uint32_t cp;
        int k = jinja_decode(p, n, &cp);
        if (ws ? !jinja_isspace(cp) : !in_chars(cp, chars)) break;
        p += k;
        n -= (size_t)k;
    }
    while (trail && n) {
        size_t start = n - 1;
        while (start > 0 && ((unsigned char)p[start] & 0xc0) == 0x80) start--;
        uint32_t cp;
        jinja_decode(p + start, n - start, &cp);
        if (ws ? !jinja_isspace(cp) : !in_chars(cp, chars)) break;
        n = start;
    }
    return n == s.s.n ? s : jinja_str(r, p, n);
}

jv jinja_str_replace(jinja_run *r, jv s, jv old, jv rep, int64_t count) {
    s = jinja_to_str(r, s);
    if (old.type != JV_STR || rep.type != JV_STR) jinja_fail(r, "replace() arguments must be str");
    jbuf b = {0};
    jinja_charge(r, s.s.n / 256);
    if (old.s.n == 0) {
        /* Python inserts the replacement before every character and at the end */
        int64_t done = 0;
        for (size_t i = 0; i <= s.s.n;) {
            if (count < 0 || done < count) { jinja_buf_put(r, &b, rep.s.p, rep.s.n); done++; }
            if (i == s.s.n) break;
            uint32_t cp;
            int k = jinja_decode(s.s.p + i, s.s.n - i, &cp);
            jinja_buf_put(r, &b, s.s.p + i, (size_t)k);
            i += (size_t)k;
        }
        return b.p ? jinja_buf_value(&b) : jinja_str_static("");
    }
    size_t i = 0;
    int64_t done = 0;
    while (i <= s.s.n && (count < 0 || done < count)) {
        const char *hit = memmem(s.s.p + i, s.s.n - i, old.s.p, old.s.n);
        if (!hit) break;
        size_t at = (size_t)(hit - s.s.p);
        jinja_buf_put(r, &b, s.s.p + i, at - i);
        jinja_buf_put(r, &b, rep.s.p, rep.s.n);
        i = at + old.s.n;
        done++;
    }
    if (done == 0) return s;
    jinja_buf_put(r, &b, s.s.p + i, s.s.n - i);
    return jinja_buf_value(&b);
}

/* ---- str methods ---- */

static jv need_str(jinja_run *r, jv v, const char *what) {
    if (v.type == JV_UNDEFINED) jinja_fail(r, "%s", v.s.p ? v.s.p : "undefined value");
    if (v.type != JV_STR) jinja_fail(r, "%s must be str, not %s", what, jinja_type_name(v));
    return v;
}

/* an integer argument; none and undefined are type errors, as in Python (callers give absent
   ones their default) */
static int64_t int_arg(jinja_run *r, jv v) {
    if (v.type == JV_INT) return v.i;
    if (v.type == JV_BOOL) return v.b;
    jinja_fail(r, "'%s' object cannot be interpreted as an integer", jinja_type_name(v));
}

static jv m_strip(jinja_run *r, jv s, const jargs *a) { return jinja_str_strip(r, s, jinja_arg(a, 0, "chars", jinja_none()), true, true); }
static jv m_lstrip(jinja_run *r, jv s, const jargs *a) { return jinja_str_strip(r, s, jinja_arg(a, 0, "chars", jinja_none()), true, false); }
static jv m_rstrip(jinja_run *r, jv s, const jargs *a) { return jinja_str_strip(r, s, jinja_arg(a, 0, "chars", jinja_none()), false, true); }
static jv m_upper(jinja_run *r, jv s, const jargs *a) { (void)a; return jinja_str_case(r, s, CASE_UPPER); }
static jv m_lower(jinja_run *r, jv s, const jargs *a) { (void)a; return jinja_str_case(r, s, CASE_LOWER); }
static jv m_capitalize(jinja_run *r, jv s, const jargs *a) { (void)a; return jinja_str_case(r, s, CASE_CAPITALIZE); }

static jv m_title(jinja_run *r, jv s, const jargs *a) {
    /* str.title(): a letter after a cased letter is lowered, any other is raised */
    (void)a;
    jbuf b = {0};
    bool prev_cased = false;
    for (size_t i = 0; i < s.s.n;) {
        uint32_t cp;
        int k = jinja_decode(s.s.p + i, s.s.n - i, &cp);
        put_cp(r, &b, prev_cased ? to_lower(cp) : to_upper(cp));
        prev_cased = is_cased(cp);
        i += (size_t)k;
    }
    return b.p ? jinja_buf_value(&b) : jinja_str_static("");
}

static jv m_replace(jinja_run *r, jv s, const jargs *a) {
    return jinja_str_replace(r, s, jinja_arg(a, 0, "old", jinja_none()), jinja_arg(a, 1, "new", jinja_none()), int_arg(r, jinja_arg(a, 2, "count", jinja_int(-1))));
}

/* str.split / str.rsplit */
static jv split(jinja_run *r, jv s, const jargs *a, bool from_right) {
    jv sep = jinja_arg(a, 0, "sep", jinja_none());
    int64_t maxsplit = int_arg(r, jinja_arg(a, 1, "maxsplit", jinja_int(-1)));
    jv out = jinja_list_new(r, 0, false);
    const char *p = s.s.p;
    size_t n = s.s.n;
    jinja_charge(r, n / 256);
    if (sep.type == JV_NONE) {
        /* runs of whitespace separate; no empty pieces */
        size_t *starts = jinja_alloc(r, (n / 2 + 2) * sizeof *starts), *ends = jinja_alloc(r, (n / 2 + 2) * sizeof *ends);
        size_t cnt = 0, i = 0;
        while (i < n) {
            uint32_t cp;
            int k;
            while (i < n && (k = jinja_decode(p + i, n - i, &cp), jinja_isspace(cp))) i += (size_t)k;
            if (i >= n) break;
            size_t st = i;
            while (i < n && (k = jinja_decode(p + i, n - i, &cp), !jinja_isspace(cp))) i += (size_t)k;
            starts[cnt] = st;
            ends[cnt++] = i;
        }
        if (maxsplit >= 0 && (size_t)maxsplit + 1 < cnt) {
            /* the last (or first) piece runs to the end of the text, whitespace and all */
            size_t keep = (size_t)maxsplit;
            if (!from_right) {
                for (size_t k = 0; k < keep; k++) jinja_list_push(r, out.list, jinja_str(r, p + starts[k], ends[k] - starts[k]));
                jv rest = jinja_str_strip(r, jinja_str(r, p + starts[keep], n - starts[keep]), jinja_none(), false, true);
                jinja_list_push(r, out.list, rest);
            } else {
                size_t first = cnt - keep;
                jinja_list_push(r, out.list, jinja_str(r, p, ends[first - 1]));
                out.list->items[0] = jinja_str_strip(r, out.list->items[0], jinja_none(), true, false);
                for (size_t k = first; k < cnt; k++) jinja_list_push(r, out.list, jinja_str(r, p + starts[k], ends[k] - starts[k]));
            }
            return out;
        }
        for (size_t k = 0; k < cnt; k++) jinja_list_push(r, out.list, jinja_str(r, p + starts[k], ends[k] - starts[k]));
        return out;
    }
    need_str(r, sep, "the separator");
    if (sep.s.n == 0) jinja_fail(r, "empty separator");
    if (!from_right) {
        size_t i = 0;
        int64_t done = 0;
        while (maxsplit < 0 || done < maxsplit) {
            const char *hit = memmem(p + i, n - i, sep.s.p, sep.s.n);
            if (!hit) break;
            jinja_list_push(r, out.list, jinja_str(r, p + i, (size_t)(hit - p) - i));
            i = (size_t)(hit - p) + sep.s.n;
            done++;
        }
        jinja_list_push(r, out.list, jinja_str(r, p + i, n - i));
        return out;
    }
    /* rsplit: pieces found from the end, then put in order */
    jv rev = jinja_list_new(r, 0, false);
    size_t end = n;
    int64_t done = 0;
    while (maxsplit < 0 || done < maxsplit) {
        size_t at = SIZE_MAX;
        for (size_t k = end >= sep.s.n ? end - sep.s.n + 1 : 0; k-- > 0;)
            if (memcmp(p + k, sep.s.p, sep.s.n) == 0) { at = k; break; }
        if (at == SIZE_MAX) break;
        jinja_list_push(r, rev.list, jinja_str(r, p + at + sep.s.n, end - at - sep.s.n));
        end = at;
        done++;
    }
    jinja_list_push(r, out.list, jinja_str(r, p, end));
    for (size_t k = rev.list->n; k-- > 0;) jinja_list_push(r, out.list, rev.list->items[k]);
    return out;
}

static jv m_split(jinja_run *r, jv s, const jargs *a) { return split(r, s, a, false); }
static jv m_rsplit(jinja_run *r, jv s, const jargs *a) { return split(r, s, a, true); }

static jv m_splitlines(jinja_run *r, jv s, const jargs *a) {
    bool keep = int_arg(r, jinja_arg(a, 0, "keepends", jinja_bool(false))) != 0;
    jv out = jinja_list_new(r, 0, false);
    size_t start = 0;
    for (size_t i = 0; i < s.s.n; i++) {
        if (s.s.p[i] != '\n' && s.s.p[i] != '\r') continue;
        size_t end = i;
        if (s.s.p[i] == '\r' && i + 1 < s.s.n && s.s.p[i + 1] == '\n') i++;
        jinja_list_push(r, out.list, jinja_str(r, s.s.p + start, (keep ? i + 1 : end) - start));
        start = i + 1;
    }
    if (start < s.s.n) jinja_list_push(r, out.list, jinja_str(r, s.s.p + start, s.s.n - start));
    return out;
}

/* startswith / endswith with a str or a tuple of them */
static jv affix(jinja_run *r, jv s, const jargs *a, bool end) {
    jv what = jinja_arg(a, 0, NULL, jinja_none());
    if (jinja_arg(a, 1, NULL, jinja_none()).type != JV_NONE) jinja_fail(r, "startswith/endswith with start or end positions are not supported");
    const jv *cands = &what;
    size_t nc = 1;
    if (what.type == JV_LIST && what.list->tuple) { cands = what.list->items; nc = what.list->n; }
    for (size_t i = 0; i < nc; i++) {
        jv c = cands[i];
        if (c.type != JV_STR)
            jinja_fail(r, "%s first arg must be str or a tuple of str, not %s", end ? "endswith" : "startswith", jinja_type_name(c));
        if (c.s.n <= s.s.n && memcmp(s.s.p + (end ? s.s.n - c.s.n : 0), c.s.p, c.s.n) == 0) return jinja_bool(true);
    }
    return jinja_bool(false);
}
static jv m_startswith(jinja_run *r, jv s, const jargs *a) { return affix(r, s, a, false); }
static jv m_endswith(jinja_run *r, jv s, const jargs *a) { return affix(r, s, a, true); }

static jv find(jinja_run *r, jv s, const jargs *a, bool from_right, bool count) {
    jv sub = need_str(r, jinja_arg(a, 0, "sub", jinja_none()), "the substring");
    jinja_charge(r, s.s.n / 256);
    if (count) {
        if (sub.s.n == 0) return jinja_int((int64_t)jinja_str_length(s.s.p, s.s.n) + 1);
        int64_t c = 0;
        for (const char *p = s.s.p, *e = s.s.p + s.s.n; (p = memmem(p, (size_t)(e - p), sub.s.p, sub.s.n)); p += sub.s.n) c++;
        return jinja_int(c);
    }
    size_t at = SIZE_MAX;
    if (!from_right) {
        const char *hit = memmem(s.s.p, s.s.n, sub.s.p, sub.s.n);
        if (hit) at = (size_t)(hit - s.s.p);
    } else if (sub.s.n <= s.s.n) {
        for (size_t k = s.s.n - sub.s.n + 1; k-- > 0;) if (memcmp(s.s.p + k, sub.s.p, sub.s.n) == 0) { at = k; break; }
    }
    return jinja_int(at == SIZE_MAX ? -1 : (int64_t)jinja_str_length(s.s.p, at));
}
static jv m_find(jinja_run *r, jv s, const jargs *a) { return find(r, s, a, false, false); }
static jv m_rfind(jinja_run *r, jv s, const jargs *a) { return find(r, s, a, true, false); }
static jv m_count(jinja_run *r, jv s, const jargs *a) { return find(r, s, a, false, true); }

static jv m_join(jinja_run *r, jv s, const jargs *a) {
    jlist *items = jinja_iterate(r, jinja_arg(a, 0, "iterable", jinja_none()));
    jbuf b = {0};
    for (size_t i = 0; i < items->n; i++) {
        if (items->items[i].type != JV_STR) jinja_fail(r, "sequence item %zu: expected str instance, %s found", i, jinja_type_name(items->items[i]));
        if (i) jinja_buf_put(r, &b, s.s.p, s.s.n);
        jinja_buf_put(r, &b, items->items[i].s.p, items->items[i].s.n);
    }
    return b.p ? jinja_buf_value(&b) : jinja_str_static("");
}

/* str.is...(): true when non-empty and every character passes */
static jv str_all(jv s, int kind) {
    if (s.s.n == 0) return jinja_bool(false);
    bool any_cased = false;
    for (size_t i = 0; i < s.s.n;) {
        uint32_t cp;
        i += (size_t)jinja_decode(s.s.p + i, s.s.n - i, &cp);
        uint8_t f = unicode_flags(cp);
        bool ok = true;
        switch (kind) {
        case 0: ok = cp >= '0' && cp <= '9'; break;                                        /* isdigit (ASCII) */
        case 1: ok = unicode_is_letter(cp); break;                                          /* isalpha */
        case 2: ok = unicode_is_letter(cp) || unicode_is_number(cp); break;                 /* isalnum */
        case 3: ok = jinja_isspace(cp); break;                                               /* isspace */
        case 4: if (f & UNICODE_UPPER) ok = false; if (f & UNICODE_LOWER) any_cased = true; break;   /* islower */
        case 5: if (f & UNICODE_LOWER) ok = false; if (f & UNICODE_UPPER) any_cased = true; break;   /* isupper */
        }
        if (!ok) return jinja_bool(false);
    }
    return jinja_bool(kind < 4 || any_cased);
}
static jv m_isdigit(jinja_run *r, jv s, const jargs *a) { (void)r; (void)a; return str_all(s, 0); }
static jv m_isalpha(jinja_run *r, jv s, const jargs *a) { (void)r; (void)a; return str_all(s, 1); }
static jv m_isalnum(jinja_run *r, jv s, const jargs *a) { (void)r; (void)a; return str_all(s, 2); }
static jv m_isspace(jinja_run *r, jv s, const jargs *a) { (void)r; (void)a; return str_all(s, 3); }
static jv m_islower(jinja_run *r, jv s, const jargs *a) { (void)r; (void)a; return str_all(s, 4); }
static jv m_isupper(jinja_run *r, jv s, const jargs *a) { (void)r; (void)a; return str_all(s, 5); }

static jv m_removeprefix(jinja_run *r, jv s, const jargs *a) {
    jv p = need_str(r, jinja_arg(a, 0, NULL, jinja_none()), "the prefix");
    if (p.s.n <= s.s.n && memcmp(s.s.p, p.s.p, p.s.n) == 0) return jinja_str(r, s.s.p + p.s.n, s.s.n - p.s.n);
    return s;
}
static jv m_removesuffix(jinja_run *r, jv s, const jargs *a) {
    jv p = need_str(r, jinja_arg(a, 0, NULL, jinja_none()), "the suffix");
    if (p.s.n && p.s.n <= s.s.n && memcmp(s.s.p + s.s.n - p.s.n, p.s.p, p.s.n) == 0) return jinja_str(r, s.s.p, s.s.n - p.s.n);
    return s;
}

/* str.format with {} / {0} / {name} fields and {{ }} escapes; !s / !r conversions, no format specs */
static jv m_format(jinja_run *r, jv s, const jargs *a) {
    jbuf b = {0};
    int auto_index = 0;
    for (size_t i = 0; i < s.s.n; i++) {
        char c = s.s.p[i];
        if (c == '}' ) {
            if (i + 1 < s.s.n && s.s.p[i + 1] == '}') { jinja_buf_putc(r, &b, '}'); i++; continue; }
            jinja_fail(r, "Single '}' encountered in format string");
        }
        if (c != '{') { jinja_buf_putc(r, &b, c); continue; }
        if (i + 1 < s.s.n && s.s.p[i + 1] == '{') { jinja_buf_putc(r, &b, '{'); i++; continue; }
        const char *close = memchr(s.s.p + i, '}', s.s.n - i);
        if (!close) jinja_fail(r, "Single '{' encountered in format string");
        const char *field = s.s.p + i + 1;
        size_t fn = (size_t)(close - field), name_n = fn;
        char conv = 0;
        for (size_t k = 0; k < fn; k++) {
            if (field[k] == ':') jinja_fail(r, "format specs in str.format are not supported");
            if (field[k] == '!' && k + 1 < fn) { conv = field[k + 1]; name_n = k; break; }
        }
        /* a missing argument is an error; an undefined one given formats as Undefined does ("") */
        jv v = jinja_none();
        bool found = false;
        if (name_n == 0 || (field[0] >= '0' && field[0] <= '9')) {
            long k = name_n == 0 ? auto_index++ : strtol(field, NULL, 10);   /* stops at the '}' */
            if ((found = k >= 0 && k < a->npos)) v = a->pos[k];
        } else
            for (int k = 0; k < a->nkw && !found; k++)
                if ((found = strlen(a->kw[k]) == name_n && !memcmp(a->kw[k], field, name_n))) v = a->kwv[k];
        if (!found) jinja_fail(r, "str.format: replacement field %.*s has no argument", (int)(fn < 40 ? fn : 40), field);
        if (conv == 'r') jinja_write_repr(r, &b, v);
        else jinja_write_str(r, &b, v);
        i = (size_t)(close - s.s.p);
    }
    return b.p ? jinja_buf_value(&b) : jinja_str_static("");
}

/* ---- dict and list methods ---- */

static jv m_get(jinja_run *r, jv d, const jargs *a) {
    (void)r;
    jv v;
    if (jinja_dict_get(d.dict, jinja_arg(a, 0, "key", jinja_none()), &v)) return v;
    return jinja_arg(a, 1, "default", jinja_none());
}

static jv m_items(jinja_run *r, jv d, const jargs *a) {
    (void)a;
    return jinja_dict_items(r, d.dict);
}

static jv m_keys(jinja_run *r, jv d, const jargs *a) {
    (void)a;
    jv out = jinja_list_new(r, d.dict->n, false);
    for (size_t i = 0; i < d.dict->n; i++) jinja_list_push(r, out.list, d.dict->keys[i]);
    return out;
}

static jv m_values(jinja_run *r, jv d, const jargs *a) {
    (void)a;
    jv out = jinja_list_new(r, d.dict->n, false);
    for (size_t i = 0; i < d.dict->n; i++) jinja_list_push(r, out.list, d.dict->vals[i]);
    return out;
}

static jv m_dict_copy(jinja_run *r, jv d, const jargs *a) {
    (void)a;
    jv out = jinja_dict_new(r, d.dict->n);
    for (size_t i = 0; i < d.dict->n; i++) jinja_dict_set(r, out.dict, d.dict->keys[i], d.dict->vals[i]);
    return out;
}

static jv m_list_copy(jinja_run *r, jv l, const jargs *a) {
    (void)a;
    jv out = jinja_list_new(r, l.list->n, l.list->tuple);
    for (size_t i = 0; i < l.list->n; i++) jinja_list_push(r, out.list, l.list->items[i]);
    return out;
}

static jv m_list_index(jinja_run *r, jv l, const jargs *a) {
    jv x = jinja_arg(a, 0, NULL, jinja_none());
    for (size_t i = 0; i < l.list->n; i++) if (jinja_equal(l.list->items[i], x)) return jinja_int((int64_t)i);
    jinja_fail(r, "value is not in list");
}

static jv m_list_count(jinja_run *r, jv l, const jargs *a) {
    (void)r;
    jv x = jinja_arg(a, 0, NULL, jinja_none());
    int64_t c = 0;
    for (size_t i = 0; i < l.list->n; i++) c += jinja_equal(l.list->items[i], x);
    return jinja_int(c);
}

static jv m_cycle(jinja_run *r, jv l, const jargs *a) {
    if (a->npos == 0) jinja_fail(r, "no items for cycling given");
    return a->pos[l.loop->index0 % (size_t)a->npos];
}

typedef struct method { const char *name; jinja_builtin fn; } method;

static const method str_methods[] = {
    { "strip", m_strip }, { "lstrip", m_lstrip }, { "rstrip", m_rstrip }, { "split", m_split },
    { "rsplit", m_rsplit }, { "splitlines", m_splitlines }, { "startswith", m_startswith },
    { "endswith", m_endswith }, { "replace", m_replace }, { "upper", m_upper }, { "lower", m_lower },
    { "title", m_title }, { "capitalize", m_capitalize }, { "find", m_find }, { "rfind", m_rfind },
    { "count", m_count }, { "join", m_join }, { "format", m_format }, { "isdigit", m_isdigit },
    { "isalpha", m_isalpha }, { "isalnum", m_isalnum }, { "isspace", m_isspace }, { "islower", m_islower },
    { "isupper", m_isupper }, { "removeprefix", m_removeprefix }, { "removesuffix", m_removesuffix },
    { NULL, NULL } };
static const method dict_methods[] = {
    { "get", m_get }, { "items", m_items }, { "keys", m_keys }, { "values", m_values }, { "copy", m_dict_copy },
    { NULL, NULL } };
static const method list_methods[] = {
    { "index", m_list_index }, { "count", m_list_count }, { "copy", m_list_copy }, { NULL, NULL } };
static const method loop_methods[] = { { "cycle", m_cycle }, { NULL, NULL } };

/* what the immutable sandbox refuses to call */
static const char *const unsafe_dict[] = { "clear", "pop", "popitem", "setdefault", "update", NULL };
static const char *const unsafe_list[] = { "append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort", NULL };

bool jinja_method(jinja_run *r, jv obj, const char *name, jv *out) {
    const method *table = NULL;
    const char *const *unsafe = NULL;
    switch (obj.type) {
    case JV_STR: table = str_methods; break;
    case JV_DICT: table = dict_methods; unsafe = unsafe_dict; break;
    case JV_LIST:
        if (obj.list->iterator) return false;
        table = list_methods;
        unsafe = obj.list->tuple ? NULL : unsafe_list;
        break;
    case JV_LOOP: table = loop_methods; break;
    default: return false;
    }
    for (const method *m = table; m->name; m++) {
        if (strcmp(m->name, name) != 0) continue;
        jfunc *f = jinja_alloc(r, sizeof *f);
        f->name = m->name;
        f->self = obj;
        f->fn = m->fn;
        *out = (jv){ .type = JV_FUNC };
        out->func = f;
        return true;
    }
    for (int i = 0; unsafe && unsafe[i]; i++) {
        if (strcmp(unsafe[i], name) != 0) continue;
        /* an undefined that fails when called, as the sandbox's unsafe_undefined does */
        char *msg = jinja_alloc(r, 96);
        snprintf(msg, 96, "access to attribute '%s' of '%s' object is unsafe.", name, jinja_type_name(obj));
        *out = jinja_undefined(msg);
        return true;
    }
    return false;
}

/* ---- globals ---- */

static jv g_range(jinja_run *r, jv self, const jargs *a) {
    (void)self;
    int64_t start = 0, stop, step = 1;
    if (a->npos == 1) stop = int_arg(r, a->pos[0]);
    else if (a->npos == 2 || a->npos == 3) {
        start = int_arg(r, a->pos[0]);
        stop = int_arg(r, a->pos[1]);
        if (a->npos == 3) step = int_arg(r, a->pos[2]);
    } else jinja_fail(r, "range expected 1 to 3 arguments, got %d", a->npos);
    if (step == 0) jinja_fail(r, "range() arg 3 must not be zero");
    int64_t count = 0;
    if (step > 0 && stop > start) count = (int64_t)(((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1);
    if (step < 0 && start > stop) count = (int64_t)(((uint64_t)start - (uint64_t)stop - 1) / (uint64_t)(-(step + 1) + 1) + 1);
    if (count > 100000) jinja_fail(r, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    jinja_charge(r, (uint64_t)count);
    jv out = jinja_list_new(r, (size_t)count, false);
    for (int64_t i = 0; i < count; i++) jinja_list_push(r, out.list, jinja_int(start + i * step));
    return out;
}

static void fill_dict(jinja_run *r, jdict *d, const jargs *a, const char *what) {
    for (int i = 0; i < a->npos; i++) {
        if (a->pos[i].type != JV_DICT) jinja_fail(r, "%s() takes mappings and keyword arguments", what);
        for (size_t k = 0; k < a->pos[i].dict->n; k++) jinja_dict_set(r, d, a->pos[i].dict->keys[k], a->pos[i].dict->vals[k]);
    }
    for (int k = 0; k < a->nkw; k++) jinja_dict_set(r, d, jinja_str_from_c(r, a->kw[k]), a->kwv[k]);
}

static jv g_namespace(jinja_run *r, jv self, const jargs *a) {
    (void)self;
    jv ns = jinja_dict_new(r, 0);
    fill_dict(r, ns.dict, a, "namespace");
    ns.type = JV_NAMESPACE;
    return ns;
}

static jv g_dict(jinja_run *r, jv self, const jargs *a) {
    (void)self;
    jv d = jinja_dict_new(r, 0);
    fill_dict(r, d.dict, a, "dict");
    return d;
}

static jv g_raise_exception(jinja_run *r, jv self, const jargs *a) {
    (void)self;
    jv msg = jinja_to_str(r, jinja_arg(a, 0, "message", jinja_str_static("")));
    r->raised = true;
    jinja_fail(r, "%.*s", (int)(msg.s.n < 380 ? msg.s.n : 380), msg.s.p);
}

static jv g_strftime_now(jinja_run *r, jv self, const jargs *a) {
    (void)self;
    jv fmt = need_str(r, jinja_arg(a, 0, "format", jinja_none()), "the strftime format");
    if (fmt.s.n > 256 || memchr(fmt.s.p, '\0', fmt.s.n)) jinja_fail(r, "strftime format too long");
    char out[1024];
    size_t n = fmt.s.n ? strftime(out, sizeof out, jinja_cstr(r, fmt), &r->today) : 0;
    return jinja_str(r, out, n);
}

typedef struct global { const char *name; jfunc fn; } global;
static const global globals[] = {
    { "range", { "range", { JV_NONE }, g_range } },
    { "namespace", { "namespace", { JV_NONE }, g_namespace } },
    { "dict", { "dict", { JV_NONE }, g_dict } },
    { "raise_exception", { "raise_exception", { JV_NONE }, g_raise_exception } },
    { "strftime_now", { "strftime_now", { JV_NONE }, g_strftime_now } },
};

bool jinja_global(jinja_run *r, const char *name, jv *out) {
    (void)r;
    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++) {
        if (strcmp(globals[i].name, name) != 0) continue;
        *out = (jv){ .type = JV_FUNC };
        out->func = (jfunc *)&globals[i].fn;   /* never written through */
        return true;
    }
    return false;
}

/* 'name' quoted for messages, shortened */
#define QS(p, n) (int)((n) < 60 ? (n) : 60), (p)

/* ---- attribute and item access ---- */

static jv loop_attr(jinja_run *r, const jloop *l, const char *name) {
    size_t n = l->items->n, i = l->index0;
    if (!strcmp(name, "index")) return jinja_int((int64_t)i + 1);
    if (!strcmp(name, "index0")) return jinja_int((int64_t)i);
    if (!strcmp(name, "revindex")) return jinja_int((int64_t)(n - i));
    if (!strcmp(name, "revindex0")) return jinja_int((int64_t)(n - i - 1));
    if (!strcmp(name, "first")) return jinja_bool(i == 0);
    if (!strcmp(name, "last")) return jinja_bool(i + 1 == n);
    if (!strcmp(name, "length")) return jinja_int((int64_t)n);
    if (!strcmp(name, "depth")) return jinja_int(l->depth);
    if (!strcmp(name, "depth0")) return jinja_int(l->depth - 1);
    if (!strcmp(name, "previtem")) return i > 0 ? l->items->items[i - 1] : jinja_undefined("there is no previous item");
    if (!strcmp(name, "nextitem")) return i + 1 < n ? l->items->items[i + 1] : jinja_undefined("there is no next item");
    return jinja_undefined(jinja_hint(r, "'LoopContext object' has no attribute '%s'", name));
}

jv jinja_getattr(jinja_run *r, jv obj, const char *name) {
    jv v;
    switch (obj.type) {
    case JV_UNDEFINED: jinja_fail_undefined(r, obj);
    case JV_NAMESPACE:
        if (jinja_dict_get_str(obj.dict, name, &v)) return v;
        return jinja_undefined(jinja_hint(r, "'Namespace object' has no attribute '%s'", name));
    case JV_LOOP:
        if (jinja_method(r, obj, name, &v)) return v;
        return loop_attr(r, obj.loop, name);
    case JV_DICT:
        /* Python attribute lookup first: d.items is the method, not d["items"] */
        if (jinja_method(r, obj, name, &v)) return v;
        if (jinja_dict_get_str(obj.dict, name, &v)) return v;
        return jinja_undefined(jinja_hint(r, "'dict object' has no attribute '%s'", name));
    default:
        if (jinja_method(r, obj, name, &v)) return v;
        return jinja_undefined(jinja_hint(r, "'%s object' has no attribute '%s'", jinja_type_name(obj), name));
    }
}

/* a Python index (negative from the end) into n items: the position, or -1 when out of range */
static int64_t py_index(jv key, size_t n) {
    int64_t i = key.type == JV_BOOL ? key.b : key.i;
    if (i < 0) i += (int64_t)n;
    return i < 0 || i >= (int64_t)n ? -1 : i;
}

jv jinja_getitem(jinja_run *r, jv obj, jv key) {
    jv v;
    bool int_key = key.type == JV_INT || key.type == JV_BOOL;
    if (obj.type == JV_UNDEFINED) jinja_fail_undefined(r, obj);
    if (obj.type == JV_LIST && obj.list->iterator) return jinja_undefined("'generator object' is not subscriptable");
    if (obj.type == JV_DICT && jinja_dict_get(obj.dict, key, &v)) return v;
    if (obj.type == JV_LIST && int_key) {
        int64_t i = py_index(key, obj.list->n);
        if (i >= 0) return obj.list->items[i];
    }
    if (obj.type == JV_STR && int_key) {
        int64_t i = py_index(key, jinja_str_length(obj.s.p, obj.s.n));
        if (i >= 0) {
            size_t at = jinja_str_offset(obj.s.p, obj.s.n, (size_t)i), end = jinja_str_offset(obj.s.p, obj.s.n, (size_t)i + 1);
            return jinja_str(r, obj.s.p + at, end - at);
        }
    }
    if (key.type == JV_STR) {
        /* obj["name"] falls back to the attribute, as Jinja's getitem does */
        if (obj.type == JV_NAMESPACE || obj.type == JV_LOOP) return jinja_getattr(r, obj, jinja_cstr(r, key));
        if (jinja_method(r, obj, jinja_cstr(r, key), &v)) return v;
        return jinja_undefined(jinja_hint(r, "'%s object' has no attribute '%.*s'", jinja_type_name(obj), QS(key.s.p, key.s.n)));
    }
    jbuf b = {0};
    jinja_write_repr(r, &b, key);
    return jinja_undefined(jinja_hint(r, "'%s object' has no element %.*s", jinja_type_name(obj), QS(b.p, b.n)));
}
