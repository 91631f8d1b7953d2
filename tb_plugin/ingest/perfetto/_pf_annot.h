/* One debug annotation's fields (the Python reader's annotations._annotation reads
 * every field in number order): which are there, and the values of those the args are
 * written from (_pf_args.h). Read from a packet pf_check passed.
 */
#ifndef KINETOSCOPE_PF_ANNOT_H
#define KINETOSCOPE_PF_ANNOT_H
#include "_pf_check_cache.h"

#define HAS(a, n) (((a)->present >> (n)) & 1u)

typedef struct {
    uint32_t present; /* bit n: field n is there (11, 12: at least one entry) */
    uint64_t name_iid, uint_v, string_iid, pointer, int_bits;
    double dbl;
    int bool_v;
    Span name, str, legacy;
    Span whole;
} Annot;

/* The fields from s on, one at a time (annot_read's of other tags, and damage). */
static void annot_read_fields(Annot *a, Span s) {
    Field f = pf_fields(s);
    while (pf_next(&f)) {
        uint32_t n = f.number;
        int varint = f.wire == WIRE_VARINT, len = f.wire == WIRE_LEN;
        if ((n == 1 || n == 2 || n == 3 || n == 4 || n == 7 || n == 17) && varint) {
            if (n == 1) a->name_iid = f.value;
            if (n == 2) a->bool_v = f.value != 0;
            if (n == 3) a->uint_v = f.value;
            if (n == 4) a->int_bits = f.value;
            if (n == 7) a->pointer = f.value;
            if (n == 17) a->string_iid = f.value;
        } else if (n == 5 && f.wire == WIRE_FIXED64) {
            memcpy(&a->dbl, &f.value, 8);
        } else if ((n == 6 || n == 8 || n == 9 || n == 10 || n == 11 || n == 12) && len) {
            if (n == 6) a->str = f.body;
            if (n == 9) a->legacy = f.body;
            if (n == 10) a->name = f.body;
        } else {
            continue;
        }
        a->present |= 1u << n;
    }
}

/* Only `present` and `whole` are set first: a field is read only where its bit is. The
   fields of a one-byte tag by a switch on that byte (pf_next's general step and the tests
   of number and wire type after it cost ~65 instructions a field); others, and a field
   cut short, as annot_read_fields reads them, from there on. */
static void annot_read(Annot *a, Span s) {
    a->present = 0;
    a->whole = s;
    const uint8_t *p = s.p, *end = s.end;
    while (p < end) {
        const uint8_t *q = p + 1;
        uint64_t v;
        uint8_t tag = *p;
        switch (tag) {
            case 0x08: q = pf_varint(q, end, &a->name_iid); break;
            case 0x10:
                if ((q = pf_varint(q, end, &v))) a->bool_v = v != 0;
                break;
            case 0x18: q = pf_varint(q, end, &a->uint_v); break;
            case 0x20: q = pf_varint(q, end, &a->int_bits); break;
            case 0x38: q = pf_varint(q, end, &a->pointer); break;
            case 0x29:
                if (end - q < 8) q = NULL;
                else memcpy(&a->dbl, q, 8), q += 8;
                break;
            case 0x32: case 0x42: case 0x4a: case 0x52: case 0x5a: case 0x62: {
                if (!(q = pf_short_varint(q, end, 5, (uint64_t)1 << 32, &v)) || v > (uint64_t)(end - q)) {
                    q = NULL;
                    break;
                }
                Span body = {q, q + v};
                if (tag == 0x32) a->str = body;
                else if (tag == 0x4a) a->legacy = body;
                else if (tag == 0x52) a->name = body;
                q += v;
                break;
            }
            default: q = NULL;
        }
        if (!q) break;
        a->present |= 1u << (tag >> 3);
        p = q;
    }
    if (p < end) annot_read_fields(a, (Span){p, end});
}

/* The value fields: 2-9, 11, 12, 17. */
#define VALUE_FIELDS 0x21BFCu

/* The value field the Python reader keeps: the last (highest) or, for an array item, the
   first (lowest); 0 for none. */
static int annot_value_field(const Annot *a, int first) {
    uint32_t fields = a->present & VALUE_FIELDS;
    if (!fields) return 0;
    return first ? __builtin_ctz(fields) : 31 - __builtin_clz(fields);
}

#endif
