/* The JSON side of the event scanner (`_scan.c`): growable buffers, the interning tables,
 * a strict JSON lexer (what msgspec rejects, this rejects; the UTF-8 of every string is
 * checked as Python's strict decoder checks it) and the typed readers of numbers, each
 * read in one pass. Included once, by `_scan.c`, which defines `Scan` (its first member
 * is the `Lex` below).
 *
 * Strings are searched 16 bytes at a time (SSE2: every x86-64 CPU has it) or 8 bytes at a
 * time elsewhere (bit tricks on one word) for the few bytes a string scan stops at: '"',
 * '\\', controls, and bytes of 0x80 and up (a UTF-8 sequence, checked there).
 */
#ifndef KINETOSCOPE_SCAN_JSON_H
#define KINETOSCOPE_SCAN_JSON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* SCAN_NO_SIMD: the portable word-at-a-time search everywhere (tests build it so). */
#if (defined(__SSE2__) || defined(_M_X64)) && !defined(SCAN_NO_SIMD)
#include <emmintrin.h>
#define SCAN_SSE2 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define INLINE inline __attribute__((always_inline))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CTZ(x) __builtin_ctz(x)
#else
#define INLINE inline
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
static int CTZ(unsigned x) {
    int n = 0;
    while (!(x & 1u)) x >>= 1, n++;
    return n;
}
#endif

/* ---- growable byte buffers ------------------------------------------------------------ */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_grow(Buf *b, size_t need) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) return 0;
    b->data = data;
    b->cap = cap;
    return 1;
}

static inline int buf_reserve(Buf *b, size_t extra) {
    return LIKELY(b->len + extra <= b->cap) || buf_grow(b, b->len + extra);
}

static inline int buf_put(Buf *b, const void *p, size_t n) {
    if (!buf_reserve(b, n)) return 0;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 1;
}

/* ---- interning tables: raw token text -> dense code, first appearance order ----------- */

/* A distinct token. Its text is copied into the table's own `text` (a few hundred KB at
   most: a lookup compares with that copy, in cache, not with the token's first place in
   megabytes of scanned text). */
typedef struct {
    uint64_t hash;
    Py_ssize_t off; /* of the token in `text`; -1 for an absent key */
    int32_t len;
    int32_t code; /* -1: empty slot */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    int32_t count;
    Buf order; /* Slot copies in code order */
    Buf text;  /* the distinct tokens' text */
} Table;

static int table_init(Table *t) {
    t->mask = 255;
    t->count = 0;
    t->order = (Buf){0};
    t->text = (Buf){0};
    t->slots = malloc(sizeof(Slot) * (t->mask + 1));
    if (!t->slots) return 0;
    for (size_t i = 0; i <= t->mask; i++) t->slots[i].code = -1;
    return 1;
}

static void table_free(Table *t) {
    free(t->slots);
    free(t->order.data);
    free(t->text.data);
}

/* The last n (1-7) bytes before `end` as one word (zeros above them), from loads of a
   fixed size: a memcpy of a variable size was a library call for each token hashed. */
static inline uint64_t short_word(const char *end, Py_ssize_t n) {
    uint64_t word = 0;
    const unsigned char *p = (const unsigned char *)end - n;
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, end - 4, 4); /* overlaps `lo` when n < 8: the same bytes, at their place */
        word = (uint64_t)lo | (uint64_t)hi << (8 * (n - 4));
    } else {
        for (Py_ssize_t i = 0; i < n; i++) word |= (uint64_t)p[i] << (8 * i);
    }
    return word;
}

/* Eight bytes at a time (kernel names are long), the tail as one short word. */
static inline uint64_t hash_bytes(const char *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        h = (h ^ word) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    if (n > 0) h = (h ^ short_word(p + n, n)) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

/* Whether a[0:n] and b[0:n] hold the same bytes: words of 8 compared inline (tokens are
   short: a call of memcmp cost more than its compare), the last word overlapping. */
static inline int same_bytes(const char *a, const char *b, Py_ssize_t n) {
    if (n < 8) return n == 0 || short_word(a + n, n) == short_word(b + n, n);
    uint64_t x, y;
    for (Py_ssize_t i = 0; i + 8 < n; i += 8) {
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return 0;
    }
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    return x == y;
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

/* Code of the token text[0:len] (text NULL: the absent value); -1 when out of memory. */
static int32_t table_code(Table *t, const char *text, Py_ssize_t len) {
    uint64_t h = text ? hash_bytes(text, len) : 0;
    Py_ssize_t off = text ? (Py_ssize_t)t->text.len : -1;
    size_t i = h & t->mask;
    for (;; i = (i + 1) & t->mask) {
        const Slot *s = &t->slots[i];
        if (s->code < 0) break;
        if (s->hash != h || s->len != len || (s->off < 0) != (off < 0)) continue;
        if (off < 0 || same_bytes(t->text.data + s->off, text, len)) return s->code;
    }
    if (text && !buf_put(&t->text, text, (size_t)len)) return -1;
    Slot fresh = {h, off, (int32_t)len, t->count};
    t->slots[i] = fresh;
    if (!buf_put(&t->order, &fresh, sizeof fresh)) return -1;
    t->count++;
    if ((size_t)t->count * 2 > t->mask && !table_grow(t)) return -1;
    return fresh.code;
}

/* The text of a table's token (NULL for the absent value). */
static inline const char *slot_text(const Table *t, const Slot *s) {
    return s->off < 0 ? NULL : t->text.data + s->off;
}

/* ---- the lexer's state: where the text being read ends, and why a read failed --------- */

typedef struct {
    const char *end;
    const char *reason;
} Lex;

#define FAIL(lx, why) ((lx)->reason = (why), (const char *)NULL)

/* ---- JSON lexing (strict: what msgspec rejects, this rejects) ------------------------- */

static inline int is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

static inline const char *skip_ws(const char *p, const char *e) {
    while (p < e && is_ws(*p)) p++;
    return p;
}

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

static inline int is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The first byte of [p, e) a string scan must look at: '"', '\\', a control character
   (below 0x20) or a byte of 0x80 and up; e when there is none. */
static INLINE const char *string_stop(const char *p, const char *e) {
#ifdef SCAN_SSE2
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
    const __m128i top_control = _mm_set1_epi8(0x1f);
    while (e - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_min_epu8(v, top_control), v));
        /* the sign bits of `v` itself: the bytes of 0x80 and up */
        unsigned mask = (unsigned)_mm_movemask_epi8(hit) | (unsigned)_mm_movemask_epi8(v);
        if (mask) return p + CTZ(mask);
        p += 16;
    }
#else
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (e - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t quote = w ^ (ones * '"'), slash = w ^ (ones * '\\');
        uint64_t hit = ((quote - ones) & ~quote) | ((slash - ones) & ~slash);
        hit |= ((w - ones * 0x20) & ~w) | w;
        if (hit & highs) break; /* one of these 8 bytes: found below, byte by byte */
        p += 8;
    }
#endif
    for (; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
    }
    return e;
}

static inline int is_continuation(const char *p, const char *e) {
    return p < e && ((unsigned char)*p & 0xC0) == 0x80;
}

/* p at a byte of 0x80 or more inside a string: past its UTF-8 sequence, or NULL where
   Python's strict UTF-8 decoder would not read it (overlong forms, surrogates, above
   U+10FFFF, a sequence cut short or a stray continuation byte). */
static const char *utf8_sequence(Lex *lx, const char *p) {
    const char *e = lx->end;
    unsigned char c = (unsigned char)p[0];
    int more;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        more = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        more = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        more = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return FAIL(lx, "text that is not UTF-8");
    }
    if (p + 1 >= e || (unsigned char)p[1] < lo || (unsigned char)p[1] > hi)
        return FAIL(lx, "text that is not UTF-8");
    for (int i = 2; i <= more; i++)
        if (!is_continuation(p + i, e)) return FAIL(lx, "text that is not UTF-8");
    return p + more + 1;
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
static const char *unicode_escape(Lex *lx, const char *p) {
    const char *e = lx->end;
    int unit = hex4(p + 1, e);
    if (unit < 0) return FAIL(lx, "bad escape");
    p += 5;
    if (unit >= 0xDC00 && unit <= 0xDFFF) return FAIL(lx, "a lone surrogate escape");
    if (unit < 0xD800 || unit > 0xDBFF) return p;
    int low = (e - p >= 2 && p[0] == '\\' && p[1] == 'u') ? hex4(p + 2, e) : -1;
    if (low < 0xDC00 || low > 0xDFFF) return FAIL(lx, "a lone surrogate escape");
    return p + 6;
}

/* p at the opening quote; returns the position after the closing one. *escaped is set
   when the string holds an escape. */
static INLINE const char *scan_string(Lex *lx, const char *p, int *escaped) {
    const char *e = lx->end;
    p++;
    for (;;) {
        p = string_stop(p, e);
        if (UNLIKELY(p >= e)) return FAIL(lx, "unterminated string");
        unsigned char c = (unsigned char)*p;
        if (LIKELY(c == '"')) return p + 1;
        if (c == '\\') {
            *escaped = 1;
            if (++p >= e) return FAIL(lx, "unterminated string");
            c = (unsigned char)*p;
            if (c == 'u') {
                if (!(p = unicode_escape(lx, p))) return NULL;
            } else if (c && strchr("\"\\/bfnrt", c)) {
                p++;
            } else {
                return FAIL(lx, "bad escape");
            }
        } else if (c >= 0x80) {
            if (!(p = utf8_sequence(lx, p))) return NULL;
        } else {
            return FAIL(lx, "control character in a string");
        }
    }
}

/* ---- numbers ------------------------------------------------------------------------------ */

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static const uint64_t POW10_INT[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/* A JSON number, read in one pass: its grammar checked, its digits gathered into
   `mantissa` (a fraction's zeros too; the leading zero of "0.5" is not a digit) while
   there are at most 19 of them, and the power of ten they stand at. */
typedef struct {
    uint64_t mantissa;
    int exp10;    /* value = mantissa * 10^exp10 when `exact` */
    int exact;    /* all digits are in the mantissa */
    int is_int;   /* no fraction and no exponent */
    int negative;
} Number;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__GNUC__) || defined(__clang__))
#define SCAN_LE_WORDS 1
/* The bytes of `w` (8 bytes of text, the first lowest) that are not digits: nonzero where
   a byte's high nibble is not 3 or its low nibble is above 9 (adding 6 carries it out).
   A carry out of a byte of 0xFA and up spoils only the bytes after it. */
static inline uint64_t not_digits(uint64_t w) {
    const uint64_t highs = 0xF0F0F0F0F0F0F0F0ULL;
    return ((w & highs) | (((w + 0x0606060606060606ULL) & highs) >> 4)) ^ 0x3333333333333333ULL;
}

/* The number that 8 digit values (0-9, one a byte, the first lowest) spell: pairs, then
   fours, then all eight, by three multiplies. */
static inline uint64_t eight_digits_value(uint64_t d) {
    d = (d * 10) + (d >> 8);
    d = (((d & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((d >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    return (uint32_t)d;
}
#endif

/* Digits at p gathered into *m (wrapping past 19: then not used); past the last one.
   A word of 8 bytes at a time where 8 are there: its run of leading digits is found and
   read at once (the digits moved to the word's end, zeros before them), the same value
   modulo 2^64 as one digit at a time. */
static INLINE const char *gather_digits(const char *p, const char *e, uint64_t *m) {
#ifdef SCAN_LE_WORDS
    while (e - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t bad = not_digits(w), d = w - 0x3030303030303030ULL;
        if (!bad) {
            *m = *m * 100000000ULL + eight_digits_value(d);
            p += 8;
            continue;
        }
        int n = __builtin_ctzll(bad) >> 3; /* digits before the first other byte */
        if (n) { /* a borrow below '0' goes only into the bytes after the digits */
            *m = *m * POW10_INT[n] + eight_digits_value(d << (64 - 8 * n));
            p += n;
        }
        return p;
    }
#endif
    for (; p < e && is_digit(*p); p++) *m = *m * 10 + (uint64_t)(*p - '0');
    return p;
}

static const char *read_number(Lex *lx, const char *p, Number *n) {
    const char *e = lx->end;
    n->exp10 = 0;
    n->is_int = 1;
    n->negative = p < e && *p == '-';
    p += n->negative;
    if (UNLIKELY(p >= e)) return FAIL(lx, "bad number");
    uint64_t m = 0;
    int digits;
    if (*p == '0') {
        p++;
        digits = 0;
    } else if (LIKELY(*p >= '1' && *p <= '9')) {
        const char *first = p;
        p = gather_digits(p, e, &m);
        digits = (int)(p - first);
    } else {
        return FAIL(lx, "bad number");
    }
    if (p < e && *p == '.') {
        n->is_int = 0;
        p++;
        if (p >= e || !is_digit(*p)) return FAIL(lx, "bad number");
        const char *first = p;
        p = gather_digits(p, e, &m);
        /* A fraction's trailing zeros are no digits ("1623142623616568.0" has 16), but
           the mantissa holds them only while it has not wrapped (19 digits in all). */
        int zeros = 0, fraction = (int)(p - first);
        while (zeros < fraction && p[-zeros - 1] == '0') zeros++;
        if (digits + fraction > 19) {
            digits += fraction; /* not exact: strtod */
        } else {
            if (zeros) m /= POW10_INT[zeros];
            digits += fraction - zeros;
        }
        n->exp10 = zeros - fraction;
    }
    n->mantissa = m;
    n->exact = digits <= 19;
    if (p < e && (*p == 'e' || *p == 'E')) {
        n->is_int = 0;
        p++;
        int sign = 1, value = 0;
        if (p < e && (*p == '+' || *p == '-')) sign = *p == '-' ? -1 : 1, p++;
        if (p >= e || !is_digit(*p)) return FAIL(lx, "bad number");
        for (; p < e && is_digit(*p); p++)
            if (value <= 10000) value = value * 10 + (*p - '0');
        n->exp10 += sign * value;
    }
    return p;
}

/* A JSON number's grammar only (a value skipped). */
static inline const char *skip_number(Lex *lx, const char *p) {
    const char *e = lx->end;
    p += p < e && *p == '-';
    if (UNLIKELY(p >= e)) return FAIL(lx, "bad number");
    if (*p == '0') {
        p++;
    } else if (LIKELY(*p >= '1' && *p <= '9')) {
        for (p++; p < e && is_digit(*p); p++) {
        }
    } else {
        return FAIL(lx, "bad number");
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || !is_digit(*p)) return FAIL(lx, "bad number");
        for (p++; p < e && is_digit(*p); p++) {
        }
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || !is_digit(*p)) return FAIL(lx, "bad number");
        for (p++; p < e && is_digit(*p); p++) {
        }
    }
    return p;
}

#if defined(__SIZEOF_INT128__)
#define SCAN_WIDE 1
typedef unsigned __int128 u128;


static inline int bits128(u128 x) {
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)x);
}

/* top * 2^e2 (top's bit 63 set; `sticky`: something nonzero below it) rounded to the
   nearest double, ties to even. */
static inline double rounded(uint64_t top, int e2, int sticky) {
    uint64_t kept = top >> 11, rest = top & 0x7FF; /* 53 bits, and the 11 below */
    if (rest > 0x400 || (rest == 0x400 && (sticky || (kept & 1)))) kept++;
    int scale = e2 + 11;
    if (scale < -1022 || scale > 1023) return ldexp((double)kept, scale);
    /* 2^scale built from its bits: kept <= 2^53, so the product is exact (no call). */
    uint64_t bits = (uint64_t)(scale + 1023) << 52;
    double power;
    memcpy(&power, &bits, sizeof power);
    return (double)kept * power;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SCAN_NO_SIMD)
#define SCAN_DIVQ 1
/* m / 10^k (m > 0, 1 <= k <= 19) rounded to the nearest double: m shifted so that the
   quotient has 63 or 64 bits, then one 128-by-64-bit hardware division (its quotient
   fits 64 bits, so it cannot fault) and its remainder as the sticky bit. The 128-bit
   division of `wide_value` is a library call of ~100 cycles; every timestamp of 17
   digits with a fraction (tiled and converted traces) comes this way. */
static double divided_value(uint64_t m, int k) {
    uint64_t d = POW10_INT[k];
    int s = 63 - (64 - __builtin_clzll(m)) + (64 - __builtin_clzll(d)); /* 3..126 */
    u128 n = (u128)m << s; /* m * 2^s / d lies in (2^62, 2^64) */
    uint64_t q, rem;
    __asm__("divq %4" : "=a"(q), "=d"(rem) : "a"((uint64_t)n), "d"((uint64_t)(n >> 64)), "rm"(d));
    int e2 = -s;
    if (!(q >> 63)) q <<= 1, e2--;
    return rounded(q, e2, rem != 0);
}
#endif

/* m * 10^e10 (m > 0, |e10| <= 19) rounded to the nearest double, ties to even, with
   128-bit integers: the product or quotient is exact, or exact to 64 bits plus a
   "something below" bit, which is all round-to-nearest needs. Timestamps of 17 digits
   ("1419123249308.9338") go this way instead of strtod's. */
static double wide_value(uint64_t m, int e10) {
    u128 q;
    int e2; /* value = q * 2^e2, inexact below when `sticky` */
    int sticky = 0;
    if (e10 >= 0) {
        q = (u128)m * POW10_INT[e10];
        e2 = 0;
    } else {
        int s = 128 - bits128(m); /* m's top bit to bit 127 */
        u128 n = (u128)m << s;
        q = n / POW10_INT[-e10];
        sticky = n % POW10_INT[-e10] != 0;
        e2 = -s;
    }
    int extra = bits128(q) - 64; /* keep 64 bits: the rest is sticky */
    uint64_t top;
    if (extra > 0) {
        sticky |= (q & (((u128)1 << extra) - 1)) != 0;
        top = (uint64_t)(q >> extra);
        e2 += extra;
    } else {
        top = (uint64_t)q << -extra;
        e2 += extra;
    }
    return rounded(top, e2, sticky);
}
#endif

/* The double nearest to the number read from text[0:len]: one correctly rounded operation
   when the digits fit in 2^53 and the power of ten is at most 22, else exact integer
   arithmetic where the digits fit in 64 bits, else strtod (which rounds correctly too). */
static double number_value(const Number *n, const char *text, Py_ssize_t len) {
    if (n->exact && n->mantissa <= (1ULL << 53) && n->exp10 >= -22 && n->exp10 <= 22) {
        double v = (double)n->mantissa;
        v = n->exp10 < 0 ? v / POW10[-n->exp10] : v * POW10[n->exp10];
        return n->negative ? -v : v;
    }
#ifdef SCAN_WIDE
    if (n->exact && n->exp10 >= -19 && n->exp10 <= 19) {
#ifdef SCAN_DIVQ
        if (n->mantissa && n->exp10 < 0) {
            double v = divided_value(n->mantissa, -n->exp10);
            return n->negative ? -v : v;
        }
#endif
        double v = n->mantissa ? wide_value(n->mantissa, n->exp10) : 0.0;
        return n->negative ? -v : v;
    }
#endif
    char local[64];
    char *copy = len < 63 ? local : malloc((size_t)len + 1);
    if (!copy) return NAN;
    memcpy(copy, text, (size_t)len);
    copy[len] = 0;
    double v = strtod(copy, NULL);
    if (copy != local) free(copy);
    return v;
}

static const char *scan_literal(Lex *lx, const char *p, const char *word, size_t n) {
    if ((size_t)(lx->end - p) < n || memcmp(p, word, n) != 0) return FAIL(lx, "bad literal");
    return p + n;
}

#define MAX_DEPTH 128

static const char *skip_value(Lex *lx, const char *p, int depth);

static const char *skip_container(Lex *lx, const char *p, int depth, char close) {
    const char *e = lx->end;
    if (depth > MAX_DEPTH) return FAIL(lx, "nested too deep");
    p = skip_ws(p + 1, e);
    if (p < e && *p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            int escaped = 0;
            if (p >= e || *p != '"') return FAIL(lx, "expected a key");
            if (!(p = scan_string(lx, p, &escaped))) return NULL;
            p = skip_ws(p, e);
            if (p >= e || *p != ':') return FAIL(lx, "expected ':'");
            p = skip_ws(p + 1, e);
        }
        if (p < e && *p == '"') { /* strings and numbers without a call of skip_value */
            int escaped = 0;
            p = scan_string(lx, p, &escaped);
        } else if (p < e && (is_digit(*p) || *p == '-')) {
            p = skip_number(lx, p);
        } else {
            p = skip_value(lx, p, depth + 1);
        }
        if (!p) return NULL;
        if (LIKELY(p + 2 < e && p[0] == ',' && p[1] == ' ' && !is_ws(p[2]))) { /* `, ` */
            p += 2;
            continue;
        }
        p = skip_ws(p, e);
        if (p >= e) return FAIL(lx, "unterminated container");
        if (*p == close) return p + 1;
        if (*p != ',') return FAIL(lx, "expected ','");
        p = skip_ws(p + 1, e);
    }
}

static const char *skip_value(Lex *lx, const char *p, int depth) {
    int flag = 0;
    if (p >= lx->end) return FAIL(lx, "missing value");
    switch (*p) {
        case '"': return scan_string(lx, p, &flag);
        case '{': return skip_container(lx, p, depth, '}');
        case '[': return skip_container(lx, p, depth, ']');
        case 't': return scan_literal(lx, p, "true", 4);
        case 'f': return scan_literal(lx, p, "false", 5);
        case 'n': return scan_literal(lx, p, "null", 4);
        default: return skip_number(lx, p);
    }
}

/* ---- typed values ---------------------------------------------------------------------- */

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
static inline const char *int_field(Lex *lx, const char *p, int64_t *out) {
    Number n;
    if (*p == 'n') {
        *out = -1;
        return scan_literal(lx, p, "null", 4);
    }
    if (*p != '-' && !is_digit(*p)) return FAIL(lx, "an int field holds a non-number");
    const char *q = read_number(lx, p, &n);
    if (!q) return NULL;
    /* At most 18 digits in all (a leading zero counts: "0" is the only such int). */
    if (!n.is_int || q - p - n.negative > 18) return FAIL(lx, "an int field holds a big or float number");
    *out = n.negative ? -(int64_t)n.mantissa : (int64_t)n.mantissa;
    return q;
}

/* One Number (float | str | None) value: numbers and null (null reads as `if_null`). */
static inline const char *float_field(Lex *lx, const char *p, double if_null, double *out) {
    Number n;
    if (*p == 'n') {
        *out = if_null;
        return scan_literal(lx, p, "null", 4);
    }
    if (*p != '-' && !is_digit(*p)) return FAIL(lx, "a float field holds a non-number");
    const char *q = read_number(lx, p, &n);
    if (!q) return NULL;
    /* + 0.0: "-0" and "-0.0" read as 0.0, as the msgspec path reads them (columns._floats). */
    *out = number_value(&n, p, q - p) + 0.0;
    if (isinf(*out)) return FAIL(lx, "a number out of range"); /* msgspec rejects those */
    return q;
}

/* A value that must be a string or null (`labels`, `bp`), or also an int (`int_ok`). */
static const char *checked_scalar(Lex *lx, const char *p, int int_ok) {
    int flag = 0;
    int64_t ignored;
    if (*p == '"') return scan_string(lx, p, &flag);
    if (*p == 'n') return scan_literal(lx, p, "null", 4);
    if (int_ok && (*p == '-' || is_digit(*p))) return int_field(lx, p, &ignored);
    return FAIL(lx, "a value of an unexpected type");
}

#endif
