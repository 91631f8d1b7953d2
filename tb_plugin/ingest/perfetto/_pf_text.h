/* Text as the Python reader makes it: strings decoded as `bytes.decode("utf-8", "replace")`
 * does (one U+FFFD per maximal invalid subpart), JSON written as msgspec writes it (its
 * escapes, its float layout), and nanoseconds divided into microseconds as Python divides
 * ints (correctly rounded).
 */
#ifndef KINETOSCOPE_PF_TEXT_H
#define KINETOSCOPE_PF_TEXT_H
#include "_pf_base.h"
#include <locale.h>

static const char REPLACEMENT[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

/* Doubles are printed and read in the "C" locale whatever the process's LC_NUMERIC is
   (msgspec and Python's float are locale-free): set once by the module's init. */
static locale_t C_NUMERIC;

static double c_strtod(const char *text) {
    return C_NUMERIC ? strtod_l(text, NULL, C_NUMERIC) : strtod(text, NULL);
}

/* Bytes of the valid UTF-8 sequence at p (1-4), or 0 when p starts an invalid one; then
   *bad is how many bytes the replacement covers. */
static int utf8_sequence(const uint8_t *p, const uint8_t *end, int *bad) {
    uint8_t c = p[0];
    if (c < 0x80) return 1;
    int need;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        *bad = 1;
        return 0;
    }
    for (int i = 1; i <= need; i++) {
        if (p + i >= end) { /* cut short: the rest is one replacement */
            *bad = (int)(end - p);
            return 0;
        }
        uint8_t b = p[i];
        if (b < lo || b > hi) {
            *bad = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

static int utf8_valid(const uint8_t *p, const uint8_t *end) {
    while (end - p >= 8) { /* ASCII, eight bytes at a time */
        uint64_t w;
        memcpy(&w, p, 8);
        if (w & 0x8080808080808080ULL) break;
        p += 8;
    }
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        int bad, n = utf8_sequence(p, end, &bad);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

/* The text of s, invalid sequences replaced, appended to out. */
static int put_text(Buf *out, Span s) {
    const uint8_t *p = s.p, *run = s.p;
    while (p < s.end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        int bad, n = utf8_sequence(p, s.end, &bad);
        if (n) {
            p += n;
            continue;
        }
        if (!buf_put(out, run, (size_t)(p - run)) || !buf_put(out, REPLACEMENT, 3)) return 0;
        p += bad;
        run = p;
    }
    return buf_put(out, run, (size_t)(p - run));
}

/* ---- JSON, as msgspec writes it --------------------------------------------------------- */

static const char HEX[] = "0123456789abcdef";

/* Whether 8 bytes hold a byte below 0x20, a '"' or a '\\' (one of them needs an escape). */
static int needs_escape8(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t control = (w - ones * 0x20) & ~w;
    uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
    return (((control | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash)) & highs) != 0);
}

/* Whether valid UTF-8 text is its JSON string's content as it is (no byte to escape). */
static int json_plain(const uint8_t *p, const uint8_t *end) {
    for (; end - p >= 8; p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (needs_escape8(w)) return 0;
    }
    for (; p < end; p++)
        if (*p < 0x20 || *p == '"' || *p == '\\') return 0;
    return 1;
}

/* Valid UTF-8 text as a JSON string. */
static int json_string_valid(Buf *out, const uint8_t *p, const uint8_t *end) {
    if (!buf_reserve(out, (size_t)(end - p) + 2)) return 0;
    out->data[out->len++] = '"';
    const uint8_t *run = p;
    for (; p < end; p++) {
        while (end - p >= 8) { /* eight plain bytes at a time */
            uint64_t w;
            memcpy(&w, p, 8);
            if (needs_escape8(w)) break;
            p += 8;
        }
        if (p >= end) break;
        uint8_t c = *p;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if (!buf_put(out, run, (size_t)(p - run))) return 0;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t n = 2;
        switch (c) {
            case '"': esc[1] = '"'; break;
            case '\\': esc[1] = '\\'; break;
            case '\b': esc[1] = 'b'; break;
            case '\f': esc[1] = 'f'; break;
            case '\n': esc[1] = 'n'; break;
            case '\r': esc[1] = 'r'; break;
            case '\t': esc[1] = 't'; break;
            default:
                memcpy(esc + 1, "u00", 3);
                esc[4] = HEX[c >> 4];
                esc[5] = HEX[c & 15];
                n = 6;
        }
        if (!buf_put(out, esc, n)) return 0;
        run = p + 1;
    }
    return buf_put(out, run, (size_t)(p - run)) && buf_byte(out, '"');
}

/* Any bytes as a JSON string of their replaced text. `tmp` is scratch. */
static int json_string(Buf *out, Span s, Buf *tmp) {
    const uint8_t *p = s.p;
    while (s.end - p >= 8) { /* ASCII with nothing to escape (most): one pass, not two */
        uint64_t w;
        memcpy(&w, p, 8);
        if ((w & 0x8080808080808080ULL) || needs_escape8(w)) break;
        p += 8;
    }
    while (p < s.end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    if (p == s.end) {
        size_t n = SPAN_LEN(s);
        if (!buf_reserve(out, n + 2)) return 0;
        out->data[out->len] = '"';
        if (n <= 32) copy_small(out->data + out->len + 1, (const char *)s.p, n);
        else memcpy(out->data + out->len + 1, s.p, n);
        out->len += n + 2;
        out->data[out->len - 1] = '"';
        return 1;
    }
    if (utf8_valid(s.p, s.end)) return json_string_valid(out, s.p, s.end);
    tmp->len = 0;
    if (!put_text(tmp, s)) return 0;
    return json_string_valid(out, (const uint8_t *)tmp->data, (const uint8_t *)tmp->data + tmp->len);
}

static int json_u64(Buf *out, uint64_t v) {
    static const char PAIRS[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char digits[24];
    int at = 24;
    while (v >= 100) { /* two digits a division */
        unsigned pair = (unsigned)(v % 100) * 2;
        v /= 100;
        digits[--at] = PAIRS[pair + 1];
        digits[--at] = PAIRS[pair];
    }
    if (v >= 10) {
        digits[--at] = PAIRS[v * 2 + 1];
        digits[--at] = PAIRS[v * 2];
    } else {
        digits[--at] = (char)('0' + v);
    }
    size_t n = (size_t)(24 - at); /* 20 at most: copied without buf_put's branch for long puts */
    if (!buf_reserve(out, n)) return 0;
    copy_small(out->data + out->len, digits + at, n);
    out->len += n;
    return 1;
}

static int json_i64(Buf *out, int64_t v) {
    if (v >= 0) return json_u64(out, (uint64_t)v);
    return buf_byte(out, '-') && json_u64(out, 0 - (uint64_t)v);
}

/* The shortest decimal digits that read back as v (v finite, not 0), as Python's repr and
   msgspec find them: the correctly rounded p-digit form for the least such p. Returns
   the digits' count; *exp10 is the exponent of the first digit. */
static int shortest_digits(double v, char *digits, int *exp10) {
    char text[40];
    int lo = 1, hi = 17;
    locale_t before = C_NUMERIC ? uselocale(C_NUMERIC) : (locale_t)0; /* this thread's */
    while (lo < hi) { /* round trips are monotone in p: bisect */
        int mid = (lo + hi) / 2;
        snprintf(text, sizeof text, "%.*e", mid - 1, v);
        if (c_strtod(text) == v) hi = mid;
        else lo = mid + 1;
    }
    snprintf(text, sizeof text, "%.*e", lo - 1, v);
    if (before) uselocale(before);
    const char *p = text + (text[0] == '-');
    int n = 0;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[n++] = *p;
    *exp10 = atoi(p + 1);
    while (n > 1 && digits[n - 1] == '0') n--;
    return n;
}

/* The shortest digits of v when v has at most 6 decimals and its digits make an integer
   below 2**53 (most traces' floats: 4.0, 64.0, 0.5): N / 10**k for the least such k,
   exact (both exact doubles, one division: correctly rounded, as strtod reads "N e-k"),
   taken only where N is the one integer of that k that reads back as v. 0 otherwise. */
static int few_decimals(double v, char *digits, int *exp10) {
    static const double POWERS[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    double a = fabs(v);
    if (!(a >= 1e-5 && a < 1e15)) return 0;
    for (int k = 0; k <= 6; k++) {
        double scaled = a * POWERS[k];
        if (scaled >= 9007199254740992.0) return 0;
        uint64_t n = (uint64_t)(scaled + 0.5);
        if ((double)n / POWERS[k] != a) continue;
        if ((double)(n + 1) / POWERS[k] == a || (n && (double)(n - 1) / POWERS[k] == a)) return 0;
        char text[24];
        int len = 0, at = 24;
        do {
            text[--at] = (char)('0' + n % 10);
            n /= 10;
        } while (n);
        len = 24 - at;
        *exp10 = len - 1 - k;
        while (len > 1 && text[at + len - 1] == '0') len--;
        memcpy(digits, text + at, (size_t)len);
        return len;
    }
    return 0;
}

/* msgspec's float text: "null" for nan and infinities; fixed notation for exponents from
   -5 to 15 ("0.00001", "1000000000000000.0"), else "1e16", "1.5e-7". */
static int json_double(Buf *out, double v) {
    if (!isfinite(v)) return buf_str(out, "null");
    if (v == 0) return buf_str(out, signbit(v) ? "-0.0" : "0.0");
    char digits[24], text[64];
    int exp10, n = few_decimals(v, digits, &exp10);
    if (!n) n = shortest_digits(v, digits, &exp10);
    int kk = exp10 + 1, at = 0;
    if (v < 0) text[at++] = '-';
    if (kk > 0 && kk <= 16) {
        for (int i = 0; i < kk; i++) text[at++] = i < n ? digits[i] : '0';
        text[at++] = '.';
        if (n > kk)
            for (int i = kk; i < n; i++) text[at++] = digits[i];
        else
            text[at++] = '0';
    } else if (kk <= 0 && kk > -5) {
        text[at++] = '0';
        text[at++] = '.';
        for (int i = 0; i < -kk; i++) text[at++] = '0';
        for (int i = 0; i < n; i++) text[at++] = digits[i];
    } else {
        text[at++] = digits[0];
        if (n > 1) {
            text[at++] = '.';
            for (int i = 1; i < n; i++) text[at++] = digits[i];
        }
        at += snprintf(text + at, sizeof text - (size_t)at, "e%d", kk - 1);
    }
    return buf_put(out, text, (size_t)at);
}

/* n / 1000 rounded as Python's int true division rounds (correctly, half to even). */
static double micros(uint64_t n) {
    if (n < ((uint64_t)1 << 53)) return (double)n / 1000.0; /* both exact: one rounding */
    char text[40];
    snprintf(text, sizeof text, "%llu.%03llu", (unsigned long long)(n / 1000),
             (unsigned long long)(n % 1000));
    return c_strtod(text); /* the exact decimal, correctly rounded */
}

/* (a - b) / 1000 for two uint64 nanosecond times, as Python computes it. */
static double micros_between(uint64_t a, uint64_t b) {
    return a >= b ? micros(a - b) : -micros(b - a);
}

#endif
