/* Jinja's builtin filters and tests that chat templates use, with Jinja2 3.1's behaviour, and
 * transformers' tojson (json.dumps: no HTML escaping, ensure_ascii off unless asked). */
#include "template/jinja_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void fail_undefined(jinja_run *r, jv u) { jinja_fail(r, "%s", u.s.p ? u.s.p : "undefined value"); }

/* item.a.b / item.0 the way Jinja's attribute= arguments look values up (items first). As
 * make_attrgetter: a none path is the item itself, any other non-string one a single item lookup,
 * and a none default is no default. */
static jv attr_path(jinja_run *r, jv item, jv path, jv def) {
    if (path.type != JV_STR && path.type != JV_NONE) item = jinja_getitem(r, item, path);
    const char *p = path.s.p, *end = p + path.s.n;
    while (path.type == JV_STR && p <= end) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        if (!dot) dot = end;
        jv key;
        bool digits = dot > p;
        for (const char *q = p; q < dot; q++) digits = digits && *q >= '0' && *q <= '9';
        if (digits && dot - p < 18) key = jinja_int(strtoll(p, NULL, 10));
        else key = jinja_str(r, p, (size_t)(dot - p));
        item = jinja_getitem(r, item, key);
        p = dot + 1;
    }
    if (item.type == JV_UNDEFINED && def.type != JV_UNDEFINED && def.type != JV_NONE) return def;
    return item;
}

/* ---- sorting ---- */

/* the key a sort compares: lower-cased strings unless case-sensitive */
static jv sort_key(jinja_run *r, jv v, bool case_sensitive) {
    return !case_sensitive && v.type == JV_STR ? jinja_str_case(r, v, CASE_LOWER) : v;
}

/* stable merge sort of items by keys (both permuted together); in_list: the keys are compared
 * as Python compares one-item lists [key], where equal keys never reach '<' (the sort filter's
 * keys; [none, none] | sort is fine, as dictsort of two none values is not) */
static void merge_sort(jinja_run *r, jv *items, jv *keys, size_t n, bool reverse, bool in_list, jv *tmp_i, jv *tmp_k) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(r, items, keys, h, reverse, in_list, tmp_i, tmp_k);
    merge_sort(r, items + h, keys + h, n - h, reverse, in_list, tmp_i, tmp_k);
    size_t i = 0, j = h, k = 0;
    jinja_charge(r, n / 8);
    while (i < h && j < n) {
        int c = in_list && jinja_equal(keys[j], keys[i]) ? 0 : jinja_compare(r, keys[j], keys[i]);
        bool take_right = reverse ? c > 0 : c < 0;
        if (take_right) { tmp_i[k] = items[j]; tmp_k[k++] = keys[j++]; }
        else { tmp_i[k] = items[i]; tmp_k[k++] = keys[i++]; }
    }
    while (i < h) { tmp_i[k] = items[i]; tmp_k[k++] = keys[i++]; }
    while (j < n) { tmp_i[k] = items[j]; tmp_k[k++] = keys[j++]; }
    memcpy(items, tmp_i, n * sizeof *items);
    memcpy(keys, tmp_k, n * sizeof *keys);
}

static jv sorted(jinja_run *r, jlist *in, jv *keys, bool reverse, bool in_list) {
    size_t n = in->n;
    jv out = jinja_list_new(r, n, false);
    for (size_t i = 0; i < n; i++) jinja_list_push(r, out.list, in->items[i]);
    if (n > 1) {
        jv *ti = jinja_alloc(r, n * sizeof *ti), *tk = jinja_alloc(r, n * sizeof *tk);
        merge_sort(r, out.list->items, keys, n, reverse, in_list, ti, tk);
    }
    return out;
}

/* sorted()'s reverse=: a bool or an int (none and undefined are type errors) */
static bool reverse_arg(jinja_run *r, jv v) {
    if (v.type == JV_BOOL) return v.b;
    if (v.type == JV_INT) return v.i != 0;
    jinja_fail(r, "'%s' object cannot be interpreted as an integer", jinja_type_name(v));
}

/* ---- filters ---- */

static jv f_length(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    switch (v.type) {
    case JV_STR: return jinja_int((int64_t)jinja_str_length(v.s.p, v.s.n));
    case JV_LIST:
        if (v.list->iterator) jinja_fail(r, "object of type 'generator' has no len()");
        return jinja_int((int64_t)v.list->n);
    case JV_DICT: return jinja_int((int64_t)v.dict->n);
    case JV_UNDEFINED: return jinja_int(0);
    default: jinja_fail(r, "object of type '%s' has no len()", jinja_type_name(v));
    }
}

static jv f_default(jinja_run *r, jv v, const jargs *a) {
    (void)r;
    jv def = jinja_arg(a, 0, "default_value", jinja_str_static(""));
    bool boolean = jinja_truthy(jinja_arg(a, 1, "boolean", jinja_bool(false)));
    if (v.type == JV_UNDEFINED || (boolean && !jinja_truthy(v))) return def;
    return v;
}

static jv f_trim(jinja_run *r, jv v, const jargs *a) { return jinja_str_strip(r, v, jinja_arg(a, 0, "chars", jinja_none()), true, true); }
static jv f_string(jinja_run *r, jv v, const jargs *a) { (void)a; return jinja_to_str(r, v); }
static jv f_upper(jinja_run *r, jv v, const jargs *a) { (void)a; return jinja_str_case(r, v, CASE_UPPER); }
static jv f_lower(jinja_run *r, jv v, const jargs *a) { (void)a; return jinja_str_case(r, v, CASE_LOWER); }
static jv f_capitalize(jinja_run *r, jv v, const jargs *a) { (void)a; return jinja_str_case(r, v, CASE_CAPITALIZE); }
static jv f_title(jinja_run *r, jv v, const jargs *a) { (void)a; return jinja_str_case(r, v, CASE_TITLE); }
static jv f_safe(jinja_run *r, jv v, const jargs *a) { (void)a; return jinja_to_str(r, v); }   /* Markup(value): a str */

static jv f_replace(jinja_run *r, jv v, const jargs *a) {
    jv count = jinja_arg(a, 2, "count", jinja_none());
    if (count.type != JV_NONE && count.type != JV_INT) jinja_fail(r, "replace count must be an integer");
    return jinja_str_replace(r, v, jinja_to_str(r, jinja_arg(a, 0, "old", jinja_none())), jinja_to_str(r, jinja_arg(a, 1, "new", jinja_none())),
                        count.type == JV_INT ? count.i : -1);
}

static jv f_escape(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    v = jinja_to_str(r, v);
    jbuf b = {0};
    for (size_t i = 0; i < v.s.n; i++) {
        switch (v.s.p[i]) {
        case '&': jinja_buf_puts(r, &b, "&amp;"); break;
        case '<': jinja_buf_puts(r, &b, "&lt;"); break;
        case '>': jinja_buf_puts(r, &b, "&gt;"); break;
        case '"': jinja_buf_puts(r, &b, "&#34;"); break;
        case '\'': jinja_buf_puts(r, &b, "&#39;"); break;
        default: jinja_buf_putc(r, &b, v.s.p[i]);
        }
    }
    return b.p ? jinja_buf_value(&b) : jinja_str_static("");
}

static jv f_join(jinja_run *r, jv v, const jargs *a) {
    jv sep = jinja_to_str(r, jinja_arg(a, 0, "d", jinja_str_static("")));
    jv attr = jinja_arg(a, 1, "attribute", jinja_none());
    jlist *items = jinja_iterate(r, v);
    jbuf b = {0};
    for (size_t i = 0; i < items->n; i++) {
        if (i) jinja_buf_put(r, &b, sep.s.p, sep.s.n);
        jv item = attr.type == JV_NONE ? items->items[i] : attr_path(r, items->items[i], attr, jinja_undefined(NULL));
        jinja_write_str(r, &b, item);
    }
    return b.p ? jinja_buf_value(&b) : jinja_str_static("");
}

static jv f_items(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    if (v.type == JV_UNDEFINED) return jinja_list_new(r, 0, false);
    if (v.type != JV_DICT) jinja_fail(r, "Can only get item pairs from a mapping.");
    return jinja_iterator(jinja_dict_items(r, v.dict));
}

static jv f_dictsort(jinja_run *r, jv v, const jargs *a) {
    bool cs = jinja_truthy(jinja_arg(a, 0, "case_sensitive", jinja_bool(false)));
    jv by = jinja_arg(a, 1, "by", jinja_str_static("key"));
    bool reverse = reverse_arg(r, jinja_arg(a, 2, "reverse", jinja_bool(false)));
    if (v.type == JV_UNDEFINED) fail_undefined(r, v);
    if (v.type != JV_DICT) jinja_fail(r, "dictsort needs a mapping, got %s", jinja_type_name(v));
    int pos;
    if (by.type == JV_STR && by.s.n == 3 && !memcmp(by.s.p, "key", 3)) pos = 0;
    else if (by.type == JV_STR && by.s.n == 5 && !memcmp(by.s.p, "value", 5)) pos = 1;
    else jinja_fail(r, "You can only sort by either \"key\" or \"value\"");
    jv pairs = jinja_dict_items(r, v.dict);
    jv *keys = jinja_alloc(r, (pairs.list->n + 1) * sizeof *keys);
    for (size_t i = 0; i < pairs.list->n; i++) keys[i] = sort_key(r, pairs.list->items[i].list->items[pos], cs);
    return sorted(r, pairs.list, keys, reverse, false);
}

static jv f_sort(jinja_run *r, jv v, const jargs *a) {
    bool reverse = reverse_arg(r, jinja_arg(a, 0, "reverse", jinja_bool(false)));
    bool cs = jinja_truthy(jinja_arg(a, 1, "case_sensitive", jinja_bool(false)));
    jv attr = jinja_arg(a, 2, "attribute", jinja_none());
    jlist *items = jinja_iterate(r, v);
    jv *keys = jinja_alloc(r, (items->n + 1) * sizeof *keys);
    for (size_t i = 0; i < items->n; i++)
        keys[i] = sort_key(r, attr.type == JV_NONE ? items->items[i] : attr_path(r, items->items[i], attr, jinja_undefined(NULL)), cs);
    return sorted(r, items, keys, reverse, true);
}

static jv f_list(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    jlist *items = jinja_iterate(r, v);
    jv out = jinja_list_new(r, items->n, false);
    for (size_t i = 0; i < items->n; i++) jinja_list_push(r, out.list, items->items[i]);
    return out;
}

static jv f_first(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    jlist *items = jinja_iterate(r, v);
    return items->n ? items->items[0] : jinja_undefined("No first item, sequence was empty.");
}

static jv f_last(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    if (v.type == JV_LIST && v.list->iterator) jinja_fail(r, "'generator' object is not reversible");
    jlist *items = jinja_iterate(r, v);
    return items->n ? items->items[items->n - 1] : jinja_undefined("No last item, sequence was empty.");
}

static jv f_reverse(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    jlist *items = jinja_iterate(r, v);
    if (v.type == JV_STR) {
        jbuf b = {0};
        for (size_t i = items->n; i-- > 0;) jinja_write_str(r, &b, items->items[i]);
        return b.p ? jinja_buf_value(&b) : jinja_str_static("");
    }
    jv out = jinja_list_new(r, items->n, false);
    for (size_t i = items->n; i-- > 0;) jinja_list_push(r, out.list, items->items[i]);
    /* reversed(list) is an iterator; a generator is reversed into a list */
    return v.type == JV_LIST && !v.list->iterator ? jinja_iterator(out) : out;
}

static jv f_unique(jinja_run *r, jv v, const jargs *a) {
    bool cs = jinja_truthy(jinja_arg(a, 0, "case_sensitive", jinja_bool(false)));
    jv attr = jinja_arg(a, 1, "attribute", jinja_none());
    jlist *items = jinja_iterate(r, v);
    jv out = jinja_list_new(r, 0, false), seen = jinja_list_new(r, 0, false);
    for (size_t i = 0; i < items->n; i++) {
        jv key = sort_key(r, attr.type == JV_NONE ? items->items[i] : attr_path(r, items->items[i], attr, jinja_undefined(NULL)), cs);
        bool dup = false;
        jinja_charge(r, seen.list->n / 16);
        for (size_t k = 0; k < seen.list->n && !dup; k++) dup = jinja_equal(seen.list->items[k], key);
        if (dup) continue;
        jinja_list_push(r, seen.list, key);
        jinja_list_push(r, out.list, items->items[i]);
    }
    return jinja_iterator(out);
}

static jv min_max(jinja_run *r, jv v, const jargs *a, bool want_max) {
    bool cs = jinja_truthy(jinja_arg(a, 0, "case_sensitive", jinja_bool(false)));
    jv attr = jinja_arg(a, 1, "attribute", jinja_none());
    jlist *items = jinja_iterate(r, v);
    if (!items->n) return jinja_undefined(want_max ? "No aggregated item, sequence was empty." : "No aggregated item, sequence was empty.");
    size_t best = 0;
    jv best_key = jinja_none();
    for (size_t i = 0; i < items->n; i++) {
        jv key = sort_key(r, attr.type == JV_NONE ? items->items[i] : attr_path(r, items->items[i], attr, jinja_undefined(NULL)), cs);
        if (i == 0 || (want_max ? jinja_compare(r, key, best_key) > 0 : jinja_compare(r, key, best_key) < 0)) { best = i; best_key = key; }
    }
    return items->items[best];
}
static jv f_min(jinja_run *r, jv v, const jargs *a) { return min_max(r, v, a, false); }
static jv f_max(jinja_run *r, jv v, const jargs *a) { return min_max(r, v, a, true); }

/* Python's int() of a string: optional sign, digits with single underscores, whitespace around */
static bool parse_int_text(const char *p, size_t n, int64_t *out) {
    size_t i = 0;
    while (i < n && (p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r'))) i++;
    while (n > i && (p[n - 1] == ' ' || (p[n - 1] >= '\t' && p[n - 1] <= '\r'))) n--;
    bool neg = false;
    if (i < n && (p[i] == '+' || p[i] == '-')) neg = p[i++] == '-';
    if (i >= n) return false;
    int64_t v = 0;
    bool prev_digit = false;
    for (; i < n; i++) {
        if (p[i] == '_' && prev_digit && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9') { prev_digit = false; continue; }
        if (p[i] < '0' || p[i] > '9') return false;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, p[i] - '0', &v)) return false;
        prev_digit = true;
    }
    *out = neg ? -v : v;
    return true;
}

static bool parse_float_text(jinja_run *r, jv s, double *out) {
    if (memchr(s.s.p, 'x', s.s.n) || memchr(s.s.p, 'X', s.s.n)) return false;   /* strtod's hex floats */
    char *copy = jinja_alloc(r, s.s.n + 1);
    memcpy(copy, s.s.p, s.s.n);
    char *end;
    double d = strtod(copy, &end);
    while (*end == ' ' || (*end >= '\t' && *end <= '\r')) end++;
    if (end == copy || *end || s.s.n == 0) return false;
    *out = d;
    return true;
}

static jv f_int(jinja_run *r, jv v, const jargs *a) {
    jv def = jinja_arg(a, 0, "default", jinja_int(0));
    if (v.type == JV_UNDEFINED) fail_undefined(r, v);   /* int(Undefined) raises */
    int64_t i;
    double d;
    switch (v.type) {
    case JV_INT: return v;
    case JV_BOOL: return jinja_int(v.b);
    case JV_FLOAT:
        if (v.f != v.f || fabs(v.f) >= 9.2e18) return def;
        return jinja_int((int64_t)v.f);
    case JV_STR:
        if (parse_int_text(v.s.p, v.s.n, &i)) return jinja_int(i);
        if (parse_float_text(r, v, &d) && d == d && fabs(d) < 9.2e18) return jinja_int((int64_t)d);
        return def;
    default: return def;
    }
}

static jv f_float(jinja_run *r, jv v, const jargs *a) {
    jv def = jinja_arg(a, 0, "default", jinja_float(0.0));
    if (v.type == JV_UNDEFINED) fail_undefined(r, v);
    double d;
    switch (v.type) {
    case JV_FLOAT: return v;
    case JV_INT: return jinja_float((double)v.i);
    case JV_BOOL: return jinja_float(v.b);
    case JV_STR: return parse_float_text(r, v, &d) ? jinja_float(d) : def;
    default: return def;
    }
}

static jv f_abs(jinja_run *r, jv v, const jargs *a) {
    (void)a;
    if (v.type == JV_FLOAT) return jinja_float(fabs(v.f));
    if (v.type == JV_INT) {
        if (v.i == INT64_MIN) jinja_fail(r, "integer overflow");
        return jinja_int(v.i < 0 ? -v.i : v.i);
    }
    if (v.type == JV_BOOL) return jinja_int(v.b);
    jinja_fail(r, "bad operand type for abs(): '%s'", jinja_type_name(v));
}

static jv f_round(jinja_run *r, jv v, const jargs *a) {
    jv prec = jinja_arg(a, 0, "precision", jinja_int(0));
    jv method = jinja_arg(a, 1, "method", jinja_str_static("common"));
    if (v.type != JV_INT && v.type != JV_FLOAT && v.type != JV_BOOL) jinja_fail(r, "round needs a number");
    const char *how = method.type == JV_STR ? jinja_cstr(r, method) : "";
    double x = v.type == JV_FLOAT ? v.f : v.type == JV_INT ? (double)v.i : v.b;
    if (prec.type == JV_NONE && !strcmp(how, "common")) {
        /* Python's round(x, None) is round(x): an int */
        if (v.type != JV_FLOAT) return jinja_int(v.type == JV_INT ? v.i : v.b);
        double y = nearbyint(x);
        if (!(fabs(y) < 9.2e18)) jinja_fail(r, "cannot convert float %s to integer", y != y ? "NaN" : "infinity or a huge value");
        return jinja_int((int64_t)y);
    }
    if (prec.type != JV_INT && prec.type != JV_BOOL)   /* none and undefined too (10 ** None) */
        jinja_fail(r, "'%s' object cannot be interpreted as an integer", jinja_type_name(prec));
    if (prec.type == JV_BOOL) prec = jinja_int(prec.b);
    /* Python's round(int, n >= 0) keeps the int */
    if (v.type != JV_FLOAT && !strcmp(how, "common") && prec.i >= 0) return jinja_int(v.type == JV_INT ? v.i : v.b);
    double m = pow(10.0, (double)prec.i);
    double y = x * m;
    if (!strcmp(how, "common")) y = nearbyint(y);   /* Python's round: halves to even */
    else if (!strcmp(how, "ceil")) y = ceil(y);
    else if (!strcmp(how, "floor")) y = floor(y);
    else jinja_fail(r, "method must be common, ceil or floor");
    return jinja_float(y / m);
}

static jv f_sum(jinja_run *r, jv v, const jargs *a) {
    jv attr = jinja_arg(a, 0, "attribute", jinja_none());
    jv total = jinja_arg(a, 1, "start", jinja_int(0));
    jlist *items = jinja_iterate(r, v);
    for (size_t i = 0; i < items->n; i++) {
        jv item = attr.type == JV_NONE ? items->items[i] : attr_path(r, items->items[i], attr, jinja_undefined(NULL));
        if (total.type == JV_FLOAT || item.type == JV_FLOAT) {
            double x = total.type == JV_FLOAT ? total.f : total.type == JV_INT ? (double)total.i : total.b;
            double y = item.type == JV_FLOAT ? item.f : item.type == JV_INT ? (double)item.i : item.b;
            if ((item.type != JV_FLOAT && item.type != JV_INT && item.type != JV_BOOL)) jinja_fail(r, "sum needs numbers");
            total = jinja_float(x + y);
        } else if ((item.type == JV_INT || item.type == JV_BOOL) && (total.type == JV_INT || total.type == JV_BOOL)) {
            int64_t z;
            if (__builtin_add_overflow(total.type == JV_INT ? total.i : total.b, item.type == JV_INT ? item.i : item.b, &z)) jinja_fail(r, "integer overflow");
            total = jinja_int(z);
        } else jinja_fail(r, "unsupported operand type(s) for +: '%s' and '%s'", jinja_type_name(total), jinja_type_name(item));
    }
    return total;
}

static jv f_tojson(jinja_run *r, jv v, const jargs *a) {
    bool ensure_ascii = jinja_truthy(jinja_arg(a, 0, "ensure_ascii", jinja_bool(false)));
    jv indent = jinja_arg(a, 1, "indent", jinja_none());
    jv seps = jinja_arg(a, 2, "separators", jinja_none());
    bool sort_keys = jinja_truthy(jinja_arg(a, 3, "sort_keys", jinja_bool(false)));
    char spaces[64];
    const char *ind = NULL;
    if (indent.type == JV_INT) {
        int64_t k = indent.i < 0 ? 0 : indent.i > 32 ? 32 : indent.i;
        memset(spaces, ' ', (size_t)k);
        spaces[k] = '\0';
        ind = spaces;
    } else if (indent.type == JV_STR) ind = jinja_cstr(r, indent);
    else if (indent.type != JV_NONE) jinja_fail(r, "tojson indent must be an integer or a string");
    const char *item_sep = ind ? "," : ", ", *key_sep = ": ";
    if (seps.type == JV_LIST && seps.list->n == 2 && seps.list->items[0].type == JV_STR && seps.list->items[1].type == JV_STR) {
        item_sep = jinja_cstr(r, seps.list->items[0]);
        key_sep = jinja_cstr(r, seps.list->items[1]);
    } else if (seps.type != JV_NONE) jinja_fail(r, "tojson separators must be a pair of strings");
    jbuf b = {0};
    jinja_write_json(r, &b, v, ensure_ascii, ind, item_sep, key_sep, sort_keys);
    return jinja_buf_value(&b);
}

static jv f_indent(jinja_run *r, jv v, const jargs *a) {
    jv width = jinja_arg(a, 0, "width", jinja_int(4));
    bool first = jinja_truthy(jinja_arg(a, 1, "first", jinja_bool(false)));
    bool blank = jinja_truthy(jinja_arg(a, 2, "blank", jinja_bool(false)));
    jbuf ind = {0};
    if (width.type == JV_STR) jinja_buf_put(r, &ind, width.s.p, width.s.n);
    else if (width.type == JV_INT) for (int64_t i = 0; i < width.i && i < 256; i++) jinja_buf_putc(r, &ind, ' ');
    else jinja_fail(r, "indent width must be an integer or a string");
    if (v.type == JV_UNDEFINED) fail_undefined(r, v);   /* Jinja appends "\n" to it */
    if (v.type != JV_STR) jinja_fail(r, "unsupported operand type(s) for +=: '%s' and 'str'", jinja_type_name(v));
    /* Jinja appends a newline and splits into lines (so a final newline leaves an empty last
       line), and indents every line after the first (blank ones only when asked) */
    jbuf b = {0};
    if (first) jinja_buf_put(r, &b, ind.p, ind.n);
    size_t start = 0;
    bool first_line = true;
    for (size_t i = 0; i <= v.s.n; i++) {
        if (i < v.s.n && v.s.p[i] != '\n') continue;
        size_t len = i - start;
        if (!first_line) {
            jinja_buf_putc(r, &b, '\n');
            if (len || blank) jinja_buf_put(r, &b, ind.p, ind.n);
        }
        jinja_buf_put(r, &b, v.s.p + start, len);
        first_line = false;
        start = i + 1;
    }
    return b.p ? jinja_buf_value(&b) : jinja_str_static("");
}

static jv f_attr(jinja_run *r, jv v, const jargs *a) {
    jv name = jinja_arg(a, 0, "name", jinja_none());
    if (name.type != JV_STR) jinja_fail(r, "attr name must be a string");
    return jinja_getattr(r, v, jinja_cstr(r, name));
}

/* the arguments after the first k positional ones */
static jargs shift_args(const jargs *a, int k) {
    jargs b = *a;
    int skip = k < a->npos ? k : a->npos;
    if (skip > 0) {
        b.pos += skip;
        b.npos -= skip;
    }
    return b;
}

/* whether keyword name was given (whatever its value) */
static bool has_kw(const jargs *a, const char *name) {
    for (int k = 0; k < a->nkw; k++) if (strcmp(a->kw[k], name) == 0) return true;
    return false;
}

static jv f_map(jinja_run *r, jv v, const jargs *a) {
    /* Jinja2 maps only `if value:`, so a falsy value (none, '', 0, [], undefined) maps to nothing
       and its arguments are never looked at */
    if (!jinja_truthy(v)) return jinja_iterator(jinja_list_new(r, 0, false));
    jlist *items = jinja_iterate(r, v);
    jv out = jinja_list_new(r, items->n, false);
    if (a->npos == 0 && has_kw(a, "attribute")) {   /* attribute=none too: the items themselves */
        jv attr = jinja_arg(a, -1, "attribute", jinja_none());
        jv def = jinja_arg(a, -1, "default", jinja_none());
        for (size_t i = 0; i < items->n; i++) jinja_list_push(r, out.list, attr_path(r, items->items[i], attr, def));
        return jinja_iterator(out);
    }
    jv name = jinja_arg(a, 0, NULL, jinja_none());
    if (name.type != JV_STR) jinja_fail(r, "map needs a filter name or attribute=");
    jargs rest = shift_args(a, 1);
    for (size_t i = 0; i < items->n; i++) jinja_list_push(r, out.list, jinja_apply_filter(r, jinja_cstr(r, name), items->items[i], &rest));
    return jinja_iterator(out);
}

/* select / reject / selectattr / rejectattr */
static jv select_items(jinja_run *r, jv v, const jargs *a, bool by_attr, bool keep) {
    jv out = jinja_list_new(r, 0, false);
    /* as map: `if value:` first, so none | selectattr(...) is empty, not an error */
    if (!jinja_truthy(v)) return jinja_iterator(out);
    jlist *items = jinja_iterate(r, v);
    if (by_attr && a->npos < 1) jinja_fail(r, "Missing parameter for attribute name");
    jv attr = by_attr ? a->pos[0] : jinja_none();
    int k = by_attr ? 1 : 0;
    /* a test named by anything but a string (none too) is no test; without one, truthiness */
    bool has_test = a->npos > k;
    jv test = has_test ? a->pos[k] : jinja_none();
    if (has_test && test.type != JV_STR) jinja_fail(r, "No test named %s.", test.type == JV_NONE ? "None" : jinja_type_name(test));
    jargs rest = shift_args(a, k + 1);
    for (size_t i = 0; i < items->n; i++) {
        jv item = by_attr ? attr_path(r, items->items[i], attr, jinja_undefined(NULL)) : items->items[i];
        bool t = has_test ? jinja_apply_test(r, jinja_cstr(r, test), item, &rest) : jinja_truthy(item);
        if (t == keep) jinja_list_push(r, out.list, items->items[i]);
    }
    return jinja_iterator(out);
}
static jv f_select(jinja_run *r, jv v, const jargs *a) { return select_items(r, v, a, false, true); }
static jv f_reject(jinja_run *r, jv v, const jargs *a) { return select_items(r, v, a, false, false); }
static jv f_selectattr(jinja_run *r, jv v, const jargs *a) { return select_items(r, v, a, true, true); }
static jv f_rejectattr(jinja_run *r, jv v, const jargs *a) { return select_items(r, v, a, true, false); }

typedef struct filter { const char *name; jinja_builtin fn; } filter;
static const filter filters[] = {
    { "length", f_length }, { "count", f_length }, { "default", f_default }, { "d", f_default },
    { "trim", f_trim }, { "string", f_string }, { "upper", f_upper }, { "lower", f_lower },
    { "capitalize", f_capitalize }, { "title", f_title }, { "safe", f_safe }, { "replace", f_replace },
    { "escape", f_escape }, { "e", f_escape }, { "forceescape", f_escape }, { "join", f_join },
    { "items", f_items }, { "dictsort", f_dictsort }, { "sort", f_sort }, { "list", f_list },
    { "first", f_first }, { "last", f_last }, { "reverse", f_reverse }, { "unique", f_unique },
    { "min", f_min }, { "max", f_max }, { "int", f_int }, { "float", f_float }, { "abs", f_abs },
    { "round", f_round }, { "sum", f_sum }, { "tojson", f_tojson }, { "indent", f_indent },
    { "attr", f_attr }, { "map", f_map }, { "select", f_select }, { "reject", f_reject },
    { "selectattr", f_selectattr }, { "rejectattr", f_rejectattr },
};

jv jinja_apply_filter(jinja_run *r, const char *name, jv v, const jargs *a) {
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        if (strcmp(filters[i].name, name) != 0) continue;
        /* the work of a filter that goes through its input (join, map, tojson, list, ...) grows
           with it: so does its cost in steps */
        jinja_builtin fn = filters[i].fn;
        bool walks = fn != f_default && fn != f_attr &&
                     ((fn != f_length && fn != f_first && fn != f_last) || v.type == JV_STR);
        if (walks && v.type == JV_LIST) jinja_charge(r, v.list->n);
        else if (walks && v.type == JV_DICT) jinja_charge(r, v.dict->n);
        else if (walks && v.type == JV_STR) jinja_charge(r, v.s.n / 64);
        return fn(r, v, a);
    }
    jinja_fail(r, "No filter named '%s'.", name);
}

/* ---- tests ---- */

static bool is_int(jv v) { return v.type == JV_INT; }

bool jinja_apply_test(jinja_run *r, const char *name, jv v, const jargs *a) {
    jv arg = jinja_arg(a, 0, NULL, jinja_undefined(NULL));
    if (!strcmp(name, "defined")) return v.type != JV_UNDEFINED;
    if (!strcmp(name, "undefined")) return v.type == JV_UNDEFINED;
    if (!strcmp(name, "none")) return v.type == JV_NONE;
    if (!strcmp(name, "boolean")) return v.type == JV_BOOL;
    if (!strcmp(name, "false")) return v.type == JV_BOOL && !v.b;
    if (!strcmp(name, "true")) return v.type == JV_BOOL && v.b;
    if (!strcmp(name, "integer")) return is_int(v);
    if (!strcmp(name, "float")) return v.type == JV_FLOAT;
    if (!strcmp(name, "number")) return v.type == JV_INT || v.type == JV_FLOAT || v.type == JV_BOOL;
    if (!strcmp(name, "string")) return v.type == JV_STR;
    if (!strcmp(name, "mapping")) return v.type == JV_DICT;
    if (!strcmp(name, "iterable")) return v.type == JV_STR || v.type == JV_LIST || v.type == JV_DICT || v.type == JV_UNDEFINED;
    if (!strcmp(name, "sequence"))
        return v.type == JV_STR || (v.type == JV_LIST && !v.list->iterator) || v.type == JV_DICT || v.type == JV_UNDEFINED;
    /* Undefined has a __call__ (that fails), so callable() is true of it */
    if (!strcmp(name, "callable")) return v.type == JV_MACRO || v.type == JV_FUNC || v.type == JV_UNDEFINED;
    if (!strcmp(name, "escaped")) return false;
    if (!strcmp(name, "odd") || !strcmp(name, "even") || !strcmp(name, "divisibleby")) {
        /* value % 2 == 1, value % 2 == 0, value % num == 0 with Python's % */
        if (v.type == JV_UNDEFINED) fail_undefined(r, v);
        if (v.type != JV_INT && v.type != JV_BOOL && v.type != JV_FLOAT) jinja_fail(r, "the %s test needs a number", name);
        jv num = name[0] == 'd' ? arg : jinja_int(2);
        if (num.type != JV_INT && num.type != JV_BOOL && num.type != JV_FLOAT) jinja_fail(r, "divisibleby needs a number");
        double x = v.type == JV_FLOAT ? v.f : (double)(v.type == JV_INT ? v.i : v.b);
        double y = num.type == JV_FLOAT ? num.f : (double)(num.type == JV_INT ? num.i : num.b);
        if (y == 0) jinja_fail(r, "integer division or modulo by zero");
        double m;
        if (v.type != JV_FLOAT && num.type != JV_FLOAT) {
            int64_t a2 = v.type == JV_INT ? v.i : v.b, b2 = num.type == JV_INT ? num.i : num.b;
            if (b2 == -1) m = 0;
            else { int64_t mm = a2 % b2; if (mm != 0 && ((mm < 0) != (b2 < 0))) mm += b2; m = (double)mm; }
        } else {
            m = fmod(x, y);
            if (m != 0 && ((m < 0) != (y < 0))) m += y;
        }
        return name[0] == 'o' ? m == 1 : m == 0;
    }
    if (!strcmp(name, "eq") || !strcmp(name, "equalto") || !strcmp(name, "==")) return jinja_equal(v, arg);
    if (!strcmp(name, "ne") || !strcmp(name, "!=")) return !jinja_equal(v, arg);
    if (!strcmp(name, "lt") || !strcmp(name, "lessthan") || !strcmp(name, "<")) return jinja_compare(r, v, arg) < 0;
    if (!strcmp(name, "le") || !strcmp(name, "<=")) return jinja_compare(r, v, arg) <= 0;
    if (!strcmp(name, "gt") || !strcmp(name, "greaterthan") || !strcmp(name, ">")) return jinja_compare(r, v, arg) > 0;
    if (!strcmp(name, "ge") || !strcmp(name, ">=")) return jinja_compare(r, v, arg) >= 0;
    if (!strcmp(name, "in")) {
        if (arg.type == JV_STR && v.type != JV_STR)
            jinja_fail(r, "'in <string>' requires string as left operand, not %s", jinja_type_name(v));
        if (arg.type == JV_STR) return v.s.n == 0 || memmem(arg.s.p, arg.s.n, v.s.p, v.s.n) != NULL;
        if (arg.type == JV_DICT) return jinja_dict_get(arg.dict, v, NULL);
        jlist *items = jinja_iterate(r, arg);
        for (size_t i = 0; i < items->n; i++) if (jinja_equal(items->items[i], v)) return true;
        return false;
    }
    if (!strcmp(name, "sameas")) {
        if (v.type != arg.type) return false;
        switch (v.type) {
        case JV_NONE: case JV_UNDEFINED: return true;
        case JV_BOOL: return v.b == arg.b;
        case JV_INT: return v.i == arg.i && v.i >= -5 && v.i <= 256;   /* CPython's small int cache */
        case JV_STR: return v.s.p == arg.s.p && v.s.n == arg.s.n;
        case JV_LIST: return v.list == arg.list;
        case JV_DICT: case JV_NAMESPACE: return v.dict == arg.dict;
        default: return jinja_equal(v, arg);
        }
    }
    if (!strcmp(name, "lower") || !strcmp(name, "upper")) {
        /* str.islower(): no character of the other case, and at least one cased one */
        v = jinja_to_str(r, v);
        jv same = jinja_str_case(r, v, name[0] == 'l' ? CASE_LOWER : CASE_UPPER);
        jv other = jinja_str_case(r, v, name[0] == 'l' ? CASE_UPPER : CASE_LOWER);
        return same.s.n == v.s.n && memcmp(same.s.p, v.s.p, v.s.n) == 0 &&
               !(other.s.n == v.s.n && memcmp(other.s.p, v.s.p, v.s.n) == 0);
    }
    if (!strcmp(name, "filter") || !strcmp(name, "test")) {
        if (v.type != JV_STR) return false;
        const char *want = jinja_cstr(r, v);
        if (name[0] == 'f') {
            for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) if (strcmp(filters[i].name, want) == 0) return true;
            return false;
        }
        static const char *const tests[] = { "defined", "undefined", "none", "boolean", "false", "true", "integer", "float",
                                             "number", "string", "mapping", "iterable", "sequence", "callable", "escaped",
                                             "odd", "even", "divisibleby", "eq", "ne", "lt", "le", "gt", "ge", "in",
                                             "sameas", "lower", "upper", "filter", "test", NULL };
        for (int i = 0; tests[i]; i++) if (strcmp(tests[i], want) == 0) return true;
        return false;
    }
    jinja_fail(r, "No test named '%s'.", name);
}
