/* The JSON side of the event scanner (`_scan.c`): growable buffers, the interning tables,
 * the scan state with its output columns, a strict JSON lexer (what msgspec rejects, this
 * rejects) and the typed readers of numbers. Included once, by `_scan.c`.
 */
#ifndef KINETOSCOPE_SCAN_JSON_H
#define KINETOSCOPE_SCAN_JSON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable byte buffers ------------------------------------------------------------ */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) return 0;
    b->data = data;
    b->cap = cap;
    return 1;
}

static int buf_put(Buf *b, const void *p, size_t n) {
    if (!buf_reserve(b, n)) return 0;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 1;
}

/* ---- interning tables: raw token text -> dense code, first appearance order ----------- */

typedef struct {
    uint64_t hash;
    Py_ssize_t off; /* offset of the token in the body; -1 for an absent key */
    Py_ssize_t len;
    int32_t code; /* -1: empty slot */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    int32_t count;
    Buf order; /* Slot copies in code order */
} Table;

static int table_init(Table *t) {
    t->mask = 255;
    t->count = 0;
    t->order = (Buf){0};
    t->slots = malloc(sizeof(Slot) * (t->mask + 1));
    if (!t->slots) return 0;
    for (size_t i = 0; i <= t->mask; i++) t->slots[i].code = -1;
    return 1;
}

static void table_free(Table *t) {
    free(t->slots);
    free(t->order.data);
}

/* Eight bytes at a time (kernel names are long); the tail byte by byte. */
static uint64_t hash_bytes(const char *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        h = (h ^ word) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    for (; n > 0; p++, n--) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h ^ (h >> 32);
}

static int table_grow(Table *t) {
    size_t mask = t->mask * 2 + 1;
    Slot *slots = malloc(sizeof(Slot) * (mask + 1));
    if (!slots) return 0;
    for (size_t i = 0; i <= mask; i++) slots[i].code = -1;
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].code < 0) continue;
        size_t j = t->slots[i].hash & mask;
        while (slots[j].code >= 0) j = (j + 1) & mask;
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 1;
}

/* Code of the token body[off:off+len] (off -1: the absent value); -1 when out of memory. */
static int32_t table_code(Table *t, const char *body, Py_ssize_t off, Py_ssize_t len) {
    uint64_t h = off < 0 ? 0 : hash_bytes(body + off, len);
    size_t i = h & t->mask;
    for (;; i = (i + 1) & t->mask) {
        Slot *s = &t->slots[i];
        if (s->code < 0) break;
        if (s->hash != h || s->len != len || (s->off < 0) != (off < 0)) continue;
        if (off < 0 || memcmp(body + s->off, body + off, len) == 0) return s->code;
    }
    Slot fresh = {h, off, len, t->count};
    t->slots[i] = fresh;
    if (!buf_put(&t->order, &fresh, sizeof fresh)) return -1;
    t->count++;
    if ((size_t)t->count * 2 > t->mask && !table_grow(t)) return -1;
    return fresh.code;
}

/* ---- the output columns ----------------------------------------------------------------- */

enum { T_PH, T_NAME, T_CAT, T_PID, T_TID, N_TABLES };
static const char *TABLE_NAMES[N_TABLES] = {"ph", "name", "cat", "pid", "tid"};

/* Per-event numeric columns, in this order in COLUMN_NAMES; all 8 bytes wide except the
   codes (int32) and has_stack (uint8). */
enum {
    C_TS, C_DUR, C_ID, C_ARGS_LEN,
    C_EXTERNAL_ID, C_EXTERNAL_ID_LOWER, C_CORRELATION, C_DEVICE, C_STREAM,
    C_BLOCKS_PER_SM, C_OCCUPANCY, C_NBYTES, C_ADDR, C_DEVICE_TYPE, C_DEVICE_ID,
    C_TOTAL_ALLOCATED, C_TOTAL_RESERVED, C_WORK_SIG, C_PYTHON_ID, C_PYTHON_PARENT_ID,
    N_WIDE
};
static const char *COLUMN_NAMES[N_WIDE] = {
    "ts", "dur", "id", "args_len",
    "external_id", "external_id_lower", "correlation", "device", "stream",
    "blocks_per_sm", "occupancy", "nbytes", "addr", "device_type", "device_id",
    "total_allocated", "total_reserved", "work_sig", "python_id", "python_parent_id",
};

typedef union {
    double f;
    int64_t i;
} Wide;

typedef struct {
    const char *body;
    const char *end;
    const char *reason; /* set on failure */
    Table tables[N_TABLES];
    Buf codes[N_TABLES];
    Buf wide[N_WIDE];
    Buf has_stack;
    Buf blob;
    Py_ssize_t events;
    size_t row_cap; /* rows every column has room for */
} Scan;

#define FAIL(s, why) ((s)->reason = (why), (const char *)NULL)

/* ---- JSON lexing (strict: what msgspec rejects, this rejects) ------------------------- */

static inline const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

static inline int is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Whether any of the 8 bytes is '"', '\\' or a control character (below 0x20): the
   bytes a string scan must stop at. Bit tricks on one word, so plain text goes 8 bytes
   a step on any CPU. */
static inline int word_needs_look(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t quote = w ^ (ones * '"'), slash = w ^ (ones * '\\');
    uint64_t zero_quote = (quote - ones) & ~quote;
    uint64_t zero_slash = (slash - ones) & ~slash;
    uint64_t below_space = (w - ones * 0x20) & ~w;
    return ((zero_quote | zero_slash | below_space) & highs) != 0;
}

/* The value of the 4 hex digits at p, or -1. */
static int hex4(const char *p, const char *e) {
    if (e - p < 4 || !is_hex(p[0]) || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3])) return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) v = v * 16 + (p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
    return v;
}

/* p at the 'u' of "\uXXXX"; returns the position after the escape (after both halves of
   a surrogate pair). As msgspec: a high surrogate must be followed at once by an escaped
   low one, and a low surrogate alone is malformed (found by tests/fuzz_scanner.py: a lone
   "\udc01" in a skipped args value was read here and rejected by msgspec). */
static const char *unicode_escape(Scan *s, const char *p) {
    const char *e = s->end;
    int unit = hex4(p + 1, e);
    if (unit < 0) return FAIL(s, "bad escape");
    p += 5;
    if (unit >= 0xDC00 && unit <= 0xDFFF) return FAIL(s, "a lone surrogate escape");
    if (unit < 0xD800 || unit > 0xDBFF) return p;
    int low = (e - p >= 2 && p[0] == '\\' && p[1] == 'u') ? hex4(p + 2, e) : -1;
    if (low < 0xDC00 || low > 0xDFFF) return FAIL(s, "a lone surrogate escape");
    return p + 6;
}

/* p at the opening quote; returns the position after the closing one. */
static const char *scan_string(Scan *s, const char *p, int *escaped) {
    const char *e = s->end;
    p++;
    while (p < e) {
        while (e - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (word_needs_look(w)) break;
            p += 8;
        }
        if (p >= e) break;
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c == '\\') {
            *escaped = 1;
            if (++p >= e) break;
            c = (unsigned char)*p;
            if (c == 'u') {
                if (!(p = unicode_escape(s, p))) return NULL;
            } else if (strchr("\"\\/bfnrt", c) && c) {
                p++;
            } else {
                return FAIL(s, "bad escape");
            }
        } else if (c < 0x20) {
            return FAIL(s, "control character in a string");
        } else {
            p++;
        }
    }
    return FAIL(s, "unterminated string");
}

/* A JSON number; *is_int when it has no fraction and no exponent. */
static const char *scan_number(Scan *s, const char *p, int *is_int) {
    const char *e = s->end;
    *is_int = 1;
    if (p < e && *p == '-') p++;
    if (p >= e) return FAIL(s, "bad number");
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9') p++;
    } else {
        return FAIL(s, "bad number");
    }
    if (p < e && *p == '.') {
        *is_int = 0;
        p++;
        if (p >= e || *p < '0' || *p > '9') return FAIL(s, "bad number");
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        *is_int = 0;
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return FAIL(s, "bad number");
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    return p;
}

static const char *scan_literal(Scan *s, const char *p, const char *word, size_t n) {
    if ((size_t)(s->end - p) < n || memcmp(p, word, n) != 0) return FAIL(s, "bad literal");
    return p + n;
}

#define MAX_DEPTH 128

static const char *skip_value(Scan *s, const char *p, int depth);

static const char *skip_container(Scan *s, const char *p, int depth, char close) {
    const char *e = s->end;
    if (depth > MAX_DEPTH) return FAIL(s, "nested too deep");
    p = skip_ws(p + 1, e);
    if (p < e && *p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            int escaped = 0;
            if (p >= e || *p != '"') return FAIL(s, "expected a key");
            if (!(p = scan_string(s, p, &escaped))) return NULL;
            p = skip_ws(p, e);
            if (p >= e || *p != ':') return FAIL(s, "expected ':'");
            p = skip_ws(p + 1, e);
        }
        if (!(p = skip_value(s, p, depth + 1))) return NULL;
        p = skip_ws(p, e);
        if (p >= e) return FAIL(s, "unterminated container");
        if (*p == close) return p + 1;
        if (*p != ',') return FAIL(s, "expected ','");
        p = skip_ws(p + 1, e);
    }
}

static const char *skip_value(Scan *s, const char *p, int depth) {
    int flag = 0;
    if (p >= s->end) return FAIL(s, "missing value");
    switch (*p) {
        case '"': return scan_string(s, p, &flag);
        case '{': return skip_container(s, p, depth, '}');
        case '[': return skip_container(s, p, depth, ']');
        case 't': return scan_literal(s, p, "true", 4);
        case 'f': return scan_literal(s, p, "false", 5);
        case 'n': return scan_literal(s, p, "null", 4);
        default: return scan_number(s, p, &flag);
    }
}

/* ---- typed values ---------------------------------------------------------------------- */

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* One more significant digit into the mantissa (leading zeros are not significant);
   0 when there would be more than 19 of them. */
static inline int push_digit(uint64_t *mantissa, int *digits, int d) {
    if (*mantissa == 0 && d == 0) return 1;
    if (*digits >= 19) return 0;
    *mantissa = *mantissa * 10 + (uint64_t)d;
    (*digits)++;
    return 1;
}

/* The double nearest to the number text p[0:n] (already checked by scan_number). Exact
   when the digits fit in 2^53 and the power of ten is at most 22 (one correctly rounded
   operation); otherwise strtod, which rounds correctly too. Trailing zeros of a fraction
   are not digits ("1623142623616568.0" is 16 digits, not 17). */
static double number_value(const char *p, Py_ssize_t n) {
    const char *q = p, *e = p + n;
    int negative = 0, digits = 0, exp10 = 0;
    uint64_t mantissa = 0;
    if (*q == '-') negative = 1, q++;
    for (; q < e && *q >= '0' && *q <= '9'; q++)
        if (!push_digit(&mantissa, &digits, *q - '0')) goto slow;
    if (q < e && *q == '.') {
        int zeros = 0; /* fraction zeros not yet known to be followed by a digit */
        for (q++; q < e && *q >= '0' && *q <= '9'; q++) {
            if (*q == '0') {
                zeros++;
                continue;
            }
            for (; zeros > 0; zeros--, exp10--)
                if (!push_digit(&mantissa, &digits, 0)) goto slow;
            if (!push_digit(&mantissa, &digits, *q - '0')) goto slow;
            exp10--;
        }
    }
    if (q < e) { /* an exponent */
        int sign = 1, value = 0;
        q++;
        if (*q == '+' || *q == '-') sign = *q == '-' ? -1 : 1, q++;
        for (; q < e; q++) {
            value = value * 10 + (*q - '0');
            if (value > 10000) goto slow;
        }
        exp10 += sign * value;
    }
    if (mantissa <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        double v = (double)mantissa;
        v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
        return negative ? -v : v;
    }
slow: {
    char local[64];
    char *text = n < 63 ? local : malloc((size_t)n + 1);
    if (!text) return NAN;
    memcpy(text, p, (size_t)n);
    text[n] = 0;
    double v = strtod(text, NULL);
    if (text != local) free(text);
    return v;
}
}

/* An int64 from an integer token of at most 18 digits (longer ones are left to msgspec). */
static int int_value(const char *p, Py_ssize_t n, int64_t *out) {
    int negative = *p == '-';
    const char *q = p + negative;
    if (n - negative > 18) return 0;
    int64_t v = 0;
    for (; q < p + n; q++) v = v * 10 + (*q - '0');
    *out = negative ? -v : v;
    return 1;
}

/* One Scalar (int | str | None) value read as an int64 column: ints and null only. */
static const char *int_field(Scan *s, const char *p, int64_t *out) {
    int is_int;
    if (*p == 'n') {
        *out = -1;
        return scan_literal(s, p, "null", 4);
    }
    if (*p != '-' && (*p < '0' || *p > '9')) return FAIL(s, "an int field holds a non-number");
    const char *q = scan_number(s, p, &is_int);
    if (!q) return NULL;
    if (!is_int || !int_value(p, q - p, out)) return FAIL(s, "an int field holds a big or float number");
    return q;
}

/* One Number (float | str | None) value: numbers and null (null reads as `if_null`). */
static const char *float_field(Scan *s, const char *p, double if_null, double *out) {
    int is_int;
    if (*p == 'n') {
        *out = if_null;
        return scan_literal(s, p, "null", 4);
    }
    if (*p != '-' && (*p < '0' || *p > '9')) return FAIL(s, "a float field holds a non-number");
    const char *q = scan_number(s, p, &is_int);
    if (!q) return NULL;
    /* + 0.0: "-0" and "-0.0" read as 0.0, as the msgspec path reads them (columns._floats). */
    *out = number_value(p, q - p) + 0.0;
    if (isinf(*out)) return FAIL(s, "a number out of range"); /* msgspec rejects those */
    return q;
}

/* A value that must be a string or null (`labels`, `bp`), or also an int (`int_ok`). */
static const char *checked_scalar(Scan *s, const char *p, int int_ok) {
    int flag = 0;
    int64_t ignored;
    if (*p == '"') return scan_string(s, p, &flag);
    if (*p == 'n') return scan_literal(s, p, "null", 4);
    if (int_ok && (*p == '-' || (*p >= '0' && *p <= '9'))) return int_field(s, p, &ignored);
    return FAIL(s, "a value of an unexpected type");
}

#endif
