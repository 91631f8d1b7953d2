/* The protobuf wire format of the Perfetto subset the reader reads (schema.py), checked as
 * the protobuf runtime (upb) checks it, so that a packet it rejects is rejected here too:
 *
 * - a tag is a varint of at most 5 bytes below 2**32, its field number not 0; a value
 *   varint has at most 10 bytes (its bits past 64 are dropped); a length at most 5 bytes,
 *   within what is left; wire types 6 and 7, and an end of group that closes no group,
 *   are damage ("Wire format was corrupt");
 * - a known message field (of its wire type) is parsed in turn, 100 levels deep at most
 *   ("Exceeded upb_DecodeOptions_MaxDepth"); an unknown group is walked to its end, on
 *   the same budget (past it: corrupt); other unknown fields are skipped unread;
 * - a repeated number field may come packed (length-delimited): its varints must be
 *   whole, its fixed64s a multiple of 8 bytes;
 * - a known field met with another wire type is an unknown field (skipped).
 *
 * Once a packet passed `pf_check`, its fields are read with `pf_next` without checks.
 */
#ifndef KINETOSCOPE_PF_WIRE_H
#define KINETOSCOPE_PF_WIRE_H
#include "_pf_base.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2, WIRE_START = 3, WIRE_END = 4, WIRE_FIXED32 = 5 };
enum { PF_OK = 0, PF_CORRUPT = 1, PF_TOO_DEEP = 2 };
#define PF_MAX_DEPTH 100

/* Inlined where a varint is read (every field of every walk). */
#define PF_INLINE static inline __attribute__((always_inline))

PF_INLINE const uint8_t *pf_varint(const uint8_t *p, const uint8_t *end, uint64_t *out) {
    if (p < end && *p < 0x80) { /* most are one byte */
        *out = *p;
        return p + 1;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end - p >= 8) { /* timestamps, ids: up to 8 bytes read at once, their 7-bit groups joined */
        uint64_t word, last;
        memcpy(&word, p, 8);
        last = ~word & 0x8080808080808080ULL; /* the high bit of each byte that ends it */
        if (last) {
            uint64_t x = word & (last ^ (last - 1)) & 0x7F7F7F7F7F7F7F7FULL;
            x = (x & 0x007F007F007F007FULL) | ((x & 0x7F007F007F007F00ULL) >> 1);
            x = (x & 0x00003FFF00003FFFULL) | ((x & 0x3FFF00003FFF0000ULL) >> 2);
            *out = (x & 0x000000000FFFFFFFULL) | ((x & 0x0FFFFFFF00000000ULL) >> 4);
            return p + (__builtin_ctzll(last) >> 3) + 1;
        }
    }
#endif
    uint64_t value = 0;
    for (int i = 0; i < 10 && p < end; i++) {
        uint8_t byte = *p++;
        value |= (uint64_t)(byte & 0x7F) << (7 * i); /* bits past 64 drop out */
        if (byte < 0x80) {
            *out = value;
            return p;
        }
    }
    return NULL;
}

/* A varint of at most `bytes` bytes whose value is below `limit`. */
PF_INLINE const uint8_t *pf_short_varint(const uint8_t *p, const uint8_t *end, int bytes,
                                         uint64_t limit, uint64_t *out) {
    if (p < end && *p < 0x80) { /* tags and short lengths: one byte (limit is above 127) */
        *out = *p;
        return p + 1;
    }
    if (limit >> 14 && end - p >= 2 && p[1] < 0x80) { /* field numbers 16-2047, lengths < 16 KiB */
        *out = (uint64_t)(p[0] & 0x7F) | (uint64_t)p[1] << 7;
        return p + 2;
    }
    uint64_t value = 0;
    for (int i = 0; i < bytes; i++) {
        if (p >= end) return NULL;
        uint8_t byte = *p++;
        value |= (uint64_t)(byte & 0x7F) << (7 * i);
        if (byte < 0x80) {
            if (value >= limit) return NULL;
            *out = value;
            return p;
        }
    }
    return NULL;
}

/* Past a varint whose value is not wanted: where pf_varint would end it (NULL: cut, or
   longer than 10 bytes). Eight bytes are looked at at once where there are eight (the
   timestamps and ids checked are 5 to 9 bytes long). */
PF_INLINE const uint8_t *pf_skip_varint(const uint8_t *p, const uint8_t *end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end - p >= 8) {
        uint64_t word, last;
        memcpy(&word, p, 8);
        last = ~word & 0x8080808080808080ULL; /* the high bit of each byte that ends it */
        if (last) return p + (__builtin_ctzll(last) >> 3) + 1;
        if (end - p > 8 && p[8] < 0x80) return p + 9;
        if (end - p > 9 && p[9] < 0x80) return p + 10;
        return NULL;
    }
#endif
    for (int i = 0; i < 10 && p < end; i++)
        if (*p++ < 0x80) return p;
    return NULL;
}

/* One field of a message, as `pf_next` reads it. */
typedef struct {
    const uint8_t *p, *end; /* what is left of the message */
    uint32_t number;
    int wire;
    uint64_t value; /* varint, fixed64, fixed32 */
    Span body;      /* length-delimited */
} Field;

static Field pf_fields(Span s) {
    Field f;
    memset(&f, 0, sizeof f);
    f.p = s.p;
    f.end = s.end;
    return f;
}

/* A field's body set by one 16-byte store where there is SSE2: its readers copy the Span
   whole (a 16-byte load), which waits ~a dozen cycles for two 8-byte stores it cannot
   take its bytes from (~40 % of read_track_event's samples were that wait). */
PF_INLINE void pf_set_body(Field *f, const uint8_t *p, const uint8_t *end) {
#if defined(__SSE2__)
    _mm_storeu_si128((__m128i *)(void *)&f->body, _mm_set_epi64x((long long)(uintptr_t)end, (long long)(uintptr_t)p));
#else
    f->body.p = p;
    f->body.end = end;
#endif
}

/* Past the value of a field (not a group) of wire type `wire`; NULL when cut. */
PF_INLINE const uint8_t *pf_skip_value(const uint8_t *p, const uint8_t *end, int wire, Field *f) {
    uint64_t n;
    switch (wire) {
        case WIRE_VARINT:
            return pf_varint(p, end, &f->value);
        case WIRE_FIXED64:
            if (end - p < 8) return NULL;
            memcpy(&f->value, p, 8);
            return p + 8;
        case WIRE_FIXED32: {
            uint32_t v;
            if (end - p < 4) return NULL;
            memcpy(&v, p, 4);
            f->value = v;
            return p + 4;
        }
        case WIRE_LEN:
            p = pf_short_varint(p, end, 5, (uint64_t)1 << 32, &n);
            if (!p || n > (uint64_t)(end - p)) return NULL;
            pf_set_body(f, p, p + n);
            return p + n;
        default:
            return NULL;
    }
}

/* Past the end of a checked group whose start tag (of field `number`) was just read. */
static const uint8_t *pf_skip_group(const uint8_t *p, const uint8_t *end, uint32_t number) {
    Field scratch;
    for (;;) {
        uint64_t tag;
        p = pf_short_varint(p, end, 5, (uint64_t)1 << 32, &tag);
        if (!p) return NULL;
        int wire = (int)(tag & 7);
        if (wire == WIRE_END) return (tag >> 3) == number ? p : NULL;
        p = wire == WIRE_START ? pf_skip_group(p, end, (uint32_t)(tag >> 3))
                               : pf_skip_value(p, end, wire, &scratch);
        if (!p) return NULL;
    }
}

/* The next field of a checked message; 0 at its end. Groups are stepped over. */
PF_INLINE int pf_next(Field *f) {
    for (;;) {
        uint64_t tag;
        if (f->p >= f->end) return 0;
        const uint8_t *p = pf_short_varint(f->p, f->end, 5, (uint64_t)1 << 32, &tag);
        if (!p) return 0;
        f->number = (uint32_t)(tag >> 3);
        f->wire = (int)(tag & 7);
        p = f->wire == WIRE_START ? pf_skip_group(p, f->end, f->number)
                                  : pf_skip_value(p, f->end, f->wire, f);
        if (!p) {
            f->p = f->end;
            return 0;
        }
        f->p = p;
        if (f->wire != WIRE_START) return 1;
    }
}

/* ---- the schema: which fields are messages, which are packable numbers ------------------ */

enum {
    M_NONE, M_PACKET, M_DEFAULTS, M_EVENT_DEFAULTS, M_TRACK_EVENT, M_ANNOTATION, M_NESTED,
    M_DESCRIPTOR, M_PROCESS, M_THREAD, M_COUNTER, M_INTERNED, M_INTERNED_NAME, M_BUNDLE,
    M_CHROME_META,
};
enum { PACKED_VARINT = -1, PACKED_FIXED64 = -2 };

/* What field `number` of message `type` holds: a message type, a packable repeated
   number (PACKED_*), or M_NONE (a scalar, a string or unknown: nothing inside to check). */
static int pf_field_kind(int type, uint32_t number) {
    switch (type) {
        case M_PACKET:
            return number == 11 ? M_TRACK_EVENT : number == 60 ? M_DESCRIPTOR
                 : number == 12 ? M_INTERNED : number == 59 ? M_DEFAULTS
                 : number == 5 ? M_BUNDLE : M_NONE;
        case M_DEFAULTS: return number == 11 ? M_EVENT_DEFAULTS : M_NONE;
        case M_TRACK_EVENT:
            if (number == 4) return M_ANNOTATION;
            if (number == 3 || number == 36 || number == 42) return PACKED_VARINT;
            if (number == 47 || number == 48) return PACKED_FIXED64;
            return M_NONE;
        case M_ANNOTATION:
            return number == 8 ? M_NESTED : (number == 11 || number == 12) ? M_ANNOTATION : M_NONE;
        case M_NESTED: return (number == 3 || number == 4) ? M_NESTED : M_NONE;
        case M_DESCRIPTOR:
            return number == 3 ? M_PROCESS : number == 4 ? M_THREAD : number == 8 ? M_COUNTER : M_NONE;
        case M_INTERNED:
            return (number == 1 || number == 2 || number == 3 || number == 29) ? M_INTERNED_NAME : M_NONE;
        case M_BUNDLE: return number == 2 ? M_CHROME_META : M_NONE;
        default: return M_NONE;
    }
}

/* A legacy JSON value that msgspec decodes and encodes back to the same text, and that
   cannot fail: null, true, false, [], {} (the writers' empty lists and dicts: ~100k in one
   H100 trace), and ints in their one spelling. Others are read by Python. */
static int legacy_same(Span raw) {
    static const char *const WORDS[] = {"null", "true", "false", "[]", "{}"};
    size_t n = SPAN_LEN(raw);
    for (int i = 0; i < 5; i++)
        if (n == strlen(WORDS[i]) && memcmp(raw.p, WORDS[i], n) == 0) return 1;
    const uint8_t *p = raw.p + (n && raw.p[0] == '-');
    size_t digits = (size_t)(raw.end - p);
    if (digits < 1 || digits > 18 || (p[0] == '0' && (digits > 1 || p != raw.p))) return 0;
    for (; p < raw.end; p++)
        if (*p < '0' || *p > '9') return 0;
    return 1;
}

typedef struct CheckCache CheckCache; /* _pf_check_cache.h */

typedef struct {
    int status;
    int legacy; /* a DebugAnnotation's legacy_json_value that Python must read was met */
    /* For args encoded ahead (_pf_prepare.h), not kept in check_packets' bytes: */
    int annotated; /* a track event has a DebugAnnotation */
    int interned;  /* a DebugAnnotation has a name_iid or string_value_iid (fields 1, 17) */
    CheckCache *cache; /* a track event's composite annotations checked before, or NULL */
} Check;

static void pf_check_message(Check *c, Span s, int type, int depth, int in_group, uint32_t group);
static void pf_check_event_annotation(Check *c, Span s, int depth);

static int pf_check_packed(Span body, int kind) {
    if (kind == PACKED_FIXED64) return SPAN_LEN(body) % 8 == 0;
    const uint8_t *p = body.p;
    while (p < body.end)
        if (!(p = pf_skip_varint(p, body.end))) return 0;
    return 1;
}

static const uint8_t *pf_check_fields(Check *c, Span s, int type, int depth, int in_group, uint32_t group);

/* Whether an annotation's second field (after its name, as its writers write it) is an
   array, a dict or a nested value; 0 for any other shape (checked as it is). */
PF_INLINE int composite_annotation(Span s) {
    const uint8_t *p = s.p, *end = s.end;
    uint64_t v;
    if (p >= end || (*p != 0x52 && *p != 0x08)) return 0;
    if (*p == 0x08) {
        p = pf_skip_varint(p + 1, end);
    } else {
        p = pf_short_varint(p + 1, end, 5, (uint64_t)1 << 32, &v);
        p = p && v <= (uint64_t)(end - p) ? p + v : NULL;
    }
    return p && p < end && (*p == 0x42 || *p == 0x5a || *p == 0x62);
}

/* Checks the fields of s (of `type`; in a group of number `group` when in_group); on
   success c->status stays PF_OK and, in a group, the end is returned through s. Inlined
   into a function per common message type (pf_check_message), where `type` and `in_group`
   are constants: the checks that depend on them fold away. */
PF_INLINE const uint8_t *pf_check_body(Check *c, Span s, int type, int depth, int in_group,
                                       uint32_t group) {
    const uint8_t *p = s.p, *end = s.end;
    while (c->status == PF_OK) {
        if (p >= end) {
            if (in_group) c->status = PF_CORRUPT; /* a group that does not end */
            return p;
        }
        uint64_t tag, v;
        p = pf_short_varint(p, end, 5, (uint64_t)1 << 32, &tag);
        uint32_t number = (uint32_t)(tag >> 3);
        if (!p || number == 0) break;
        int wire = (int)(tag & 7);
        if (type == M_ANNOTATION && !in_group && (number == 1 || number == 17)) c->interned = 1;
        if (wire == WIRE_VARINT) {
            if (!(p = pf_skip_varint(p, end))) break;
        } else if (wire == WIRE_FIXED64 || wire == WIRE_FIXED32) {
            size_t n = wire == WIRE_FIXED64 ? 8 : 4;
            if ((size_t)(end - p) < n) break;
            p += n;
        } else if (wire == WIRE_LEN) {
            if (!(p = pf_short_varint(p, end, 5, (uint64_t)1 << 32, &v)) || v > (uint64_t)(end - p)) break;
            Span body = {p, p + v};
            p += v;
            int kind = in_group ? M_NONE : pf_field_kind(type, number);
            if (type == M_ANNOTATION && number == 9 && !in_group && !legacy_same(body)) c->legacy = 1;
            if (type == M_TRACK_EVENT && number == 4 && !in_group) c->annotated = 1;
            if (kind > M_NONE) {
                if (depth + 1 > PF_MAX_DEPTH) {
                    c->status = PF_TOO_DEEP;
                    return NULL;
                }
                if (type == M_TRACK_EVENT && !in_group && c->cache && composite_annotation(body))
                    pf_check_event_annotation(c, body, depth + 1);
                else pf_check_message(c, body, kind, depth + 1, 0, 0);
            } else if (kind < 0 && !pf_check_packed(body, kind)) {
                break;
            }
        } else if (wire == WIRE_START) {
            if (depth + 1 > PF_MAX_DEPTH) break;
            Span rest = {p, end};
            p = pf_check_fields(c, rest, M_NONE, depth + 1, 1, number);
            if (!p) return NULL;
        } else if (wire == WIRE_END) {
            if (in_group && number == group) return p;
            break;
        } else {
            break;
        }
    }
    if (c->status == PF_OK) c->status = PF_CORRUPT;
    return NULL;
}

static const uint8_t *pf_check_fields(Check *c, Span s, int type, int depth, int in_group, uint32_t group) {
    return pf_check_body(c, s, type, depth, in_group, group);
}

/* The messages of every track event, and of most of their args. */
static void pf_check_packet(Check *c, Span s, int depth) { pf_check_body(c, s, M_PACKET, depth, 0, 0); }
static void pf_check_track_event(Check *c, Span s, int depth) { pf_check_body(c, s, M_TRACK_EVENT, depth, 0, 0); }
static void pf_check_annotation(Check *c, Span s, int depth) { pf_check_body(c, s, M_ANNOTATION, depth, 0, 0); }

static void pf_check_message(Check *c, Span s, int type, int depth, int in_group, uint32_t group) {
    if (!in_group && type == M_ANNOTATION) pf_check_annotation(c, s, depth);
    else if (!in_group && type == M_TRACK_EVENT) pf_check_track_event(c, s, depth);
    else if (!in_group && type == M_PACKET) pf_check_packet(c, s, depth);
    else pf_check_fields(c, s, type, depth, in_group, group);
}

/* PF_OK, PF_CORRUPT or PF_TOO_DEEP for one TracePacket's bytes; `cache`: composite
   annotations checked before (or NULL), the same answer sooner. */
static Check pf_check_cached(Span packet, CheckCache *cache) {
    Check c = {PF_OK, 0, 0, 0, cache};
    pf_check_message(&c, packet, M_PACKET, 0, 0, 0);
    return c;
}

static Check pf_check(Span packet) { return pf_check_cached(packet, NULL); }

/* Each length-delimited occurrence of field `number` in a list of message spans (the
   occurrences of one singular message field, merged as protobuf merges them). */
typedef struct {
    const Span *spans;
    size_t n, at;
    Field f;
    uint32_t number;
} Occurrences;

static Occurrences pf_occurrences(const Span *spans, size_t n, uint32_t number) {
    Occurrences o;
    memset(&o, 0, sizeof o);
    o.spans = spans;
    o.n = n;
    o.number = number;
    if (n) o.f = pf_fields(spans[0]);
    return o;
}

static int pf_next_occurrence(Occurrences *o, Span *out) {
    while (o->at < o->n) {
        while (pf_next(&o->f))
            if (o->f.number == o->number && o->f.wire == WIRE_LEN) {
                *out = o->f.body;
                return 1;
            }
        if (++o->at < o->n) o->f = pf_fields(o->spans[o->at]);
    }
    return 0;
}

#endif
