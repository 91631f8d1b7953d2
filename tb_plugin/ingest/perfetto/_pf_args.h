/* Debug annotations as an event's args text, byte for byte what the Python reader writes
 * (annotations.py, encoded by msgspec):
 *
 * - an annotation's name is its `name`, else its interned `name_iid` (else ""); its value
 *   the value field of highest number it has (the Python reader reads every field in
 *   number order and keeps the last); an array item's value is its value field of lowest
 *   number (the first it meets); no value field is null;
 * - a name met twice keeps its first place and its last value (a dict's assignment);
 * - a legacy JSON value is decoded and encoded by Python itself (`Hooks.legacy`). Its
 *   decode may fail the packet at once ("now": every annotation the Python reader reads
 *   is read here first, in its order, when the packet has one), its encode only when the
 *   args are encoded ("later": the first failing value, in the args' order).
 *
 * Values are written straight into place: a dict's entries are planned first (which key
 * comes where, which entry gives its value), so nothing nested is copied twice.
 */
#ifndef KINETOSCOPE_PF_ARGS_H
#define KINETOSCOPE_PF_ARGS_H
#include "_pf_core.h"
#include "_pf_store.h"
#include "_pf_annot.h"

enum { ENC_FAIL = -1, ENC_OK = 0, ENC_BAD = 1 };
enum { LEGACY_OK = 0, LEGACY_NOW = 1, LEGACY_LATER = 2 };

typedef struct {
    void *ctx;
    /* Python's text of a legacy JSON value, appended to out; or LEGACY_NOW / LEGACY_LATER
       with the exception's words in msg; ENC_FAIL with a Python error set. */
    int (*legacy)(void *ctx, Span raw, Buf *out, Buf *msg);
} Hooks;

/* An annotation name written as a key before, with nothing to escape: its key token is
   the name in quotes, and its core key kind is known (json_string and core_key cost
   ~140 instructions a key; half the writers' events name their keys so, not by iid). */
#define KEY_TOKENS 64
#define KEY_TOKEN_MAX 30
typedef struct {
    uint8_t len; /* 0: none */
    int16_t kind; /* core_key's */
    char name[KEY_TOKEN_MAX];
} KeyToken;

typedef struct {
    Sequence *seq;
    Hooks *hooks;
    Buf tmp;   /* replaced text */
    Buf keys;  /* escaped key tokens, used as a stack */
    Buf items; /* Span, used as a stack */
    Buf plan;  /* uint32, used as a stack */
    Buf annots; /* Annot, used as a stack */
    Core *core; /* the core columns of the top level's members, read as they are written */
    int cores;  /* how many core keys the top level has */
    Buf msg;   /* the words of a failure */
    int later; /* msg holds the first encode failure of what is being written */
    uint64_t seed;
    /* Composite values (dicts, arrays, nested values) already written, by their bytes:
       an event's "Input Dims" and the like repeat. Keyed with their sequence's args
       generation (`Sequence.args_gen`), as interned names and strings may be written in them. */
    Map written;     /* hash -> entry in written_at */
    Buf written_at;  /* Written */
    Buf written_text; /* each one's bytes, then its text */
    uint64_t hooked; /* legacy values given to Python: a value that needed one is not kept */
    KeyToken key_tokens[KEY_TOKENS]; /* annotation names met, by key_slot */
} Enc;

typedef struct {
    uint64_t hash, gen;
    size_t off;
    uint32_t len, text_len;
} Written;

/* At most this much is kept of written values; then they are forgotten at once. */
#define WRITTEN_MAX_BYTES ((size_t)8 << 20)

static void enc_free(Enc *e) {
    buf_free(&e->tmp);
    buf_free(&e->keys);
    buf_free(&e->items);
    buf_free(&e->plan);
    buf_free(&e->annots);
    buf_free(&e->msg);
    map_free(&e->written);
    buf_free(&e->written_at);
    buf_free(&e->written_text);
}

/* An interned arg name's or string's JSON string, appended to out: its text copied as it
   is where it has nothing to escape (asked once per entry, not once per annotation). */
static int entry_json(Buf *out, const Sequence *s, Entry *entry) {
    Span t = entry_span(s, entry);
    if (entry->json == JSON_UNKNOWN) entry->json = json_plain(t.p, t.end) ? JSON_PLAIN : JSON_ESCAPED;
    if (entry->json == JSON_ESCAPED) return json_string_valid(out, t.p, t.end);
    if (!buf_reserve(out, entry->len + 2)) return 0;
    out->data[out->len] = '"';
    if (entry->len <= 32) copy_small(out->data + out->len + 1, (const char *)t.p, entry->len);
    else memcpy(out->data + out->len + 1, t.p, entry->len);
    out->len += entry->len + 2;
    out->data[out->len - 1] = '"';
    return 1;
}

/* A name's place among e->key_tokens (n: 1 to KEY_TOKEN_MAX). */
static inline size_t key_slot(const char *name, size_t n) {
    return (n * 7 + (uint8_t)name[0] * 3 + (uint8_t)name[n - 1]) % KEY_TOKENS;
}

/* The escaped key token of an annotation (`"name"`), appended to keys; *kind: its core
   key kind (core_key) where the top level's keys are read (`top`), else -1. */
static int annot_key(Enc *e, Buf *keys, const Annot *a, int top, int *kind) {
    size_t start = keys->len;
    *kind = -1;
    if (HAS(a, 10)) {
        size_t n = SPAN_LEN(a->name);
        const char *name = (const char *)a->name.p;
        KeyToken *known = n && n <= KEY_TOKEN_MAX ? &e->key_tokens[key_slot(name, n)] : NULL;
        if (known && known->len == n && same_bytes(known->name, name, n)) {
            if (!buf_reserve(keys, n + 2)) return 0;
            keys->data[keys->len] = '"';
            copy_small(keys->data + keys->len + 1, name, n);
            keys->len += n + 2;
            keys->data[keys->len - 1] = '"';
            if (top) *kind = known->kind;
            return 1;
        }
        if (!json_string(keys, a->name, &e->tmp)) return 0;
        int core = core_key(keys->data + start, keys->len - start);
        if (top) *kind = core;
        if (known && keys->len - start == n + 2 && same_bytes(keys->data + start + 1, name, n)) {
            known->len = (uint8_t)n; /* its token is the name in quotes */
            known->kind = (int16_t)core;
            memcpy(known->name, name, n);
        }
        return 1;
    }
    if (HAS(a, 1)) {
        Entry *entry = sequence_entry(e->seq, T_ARG_NAMES, a->name_iid);
        if (entry) {
            if (!entry_json(keys, e->seq, entry)) return 0;
            if (top && entry->core == CORE_UNKNOWN)
                entry->core = (int16_t)core_key(keys->data + start, keys->len - start);
            if (top) *kind = entry->core;
            return 1;
        }
    }
    return buf_str(keys, "\"\"");
}

/* ---- reading every legacy value the Python reader reads, for its errors ------------------ */

static int eval_item(Enc *e, Span s);

static int eval_legacy(Enc *e, Span raw) {
    if (legacy_same(raw)) return ENC_OK;
    Buf discard = {0};
    e->msg.len = 0;
    int got = e->hooks->legacy(e->hooks->ctx, raw, &discard, &e->msg);
    buf_free(&discard);
    return got == LEGACY_NOW ? ENC_BAD : got == ENC_FAIL ? ENC_FAIL : ENC_OK;
}

/* As annotations._annotation reads one: each field, in number order. */
static int eval_annotation(Enc *e, Span s) {
    Annot a;
    annot_read(&a, s);
    int status = ENC_OK;
    if (HAS(&a, 9)) status = eval_legacy(e, a.legacy);
    Field f = pf_fields(s);
    for (uint32_t n = 11; n <= 12 && status == ENC_OK; n++) {
        f = pf_fields(s);
        while (status == ENC_OK && pf_next(&f))
            if (f.number == n && f.wire == WIRE_LEN)
                status = n == 11 ? eval_annotation(e, f.body) : eval_item(e, f.body);
    }
    return status;
}

/* As annotations._value reads an array item: its first value field only. */
static int eval_item(Enc *e, Span s) {
    Annot a;
    annot_read(&a, s);
    int n = annot_value_field(&a, 1), status = ENC_OK;
    if (n == 9) return eval_legacy(e, a.legacy);
    if (n != 11 && n != 12) return ENC_OK;
    Field f = pf_fields(s);
    while (status == ENC_OK && pf_next(&f))
        if (f.number == (uint32_t)n && f.wire == WIRE_LEN)
            status = n == 11 ? eval_annotation(e, f.body) : eval_item(e, f.body);
    return status;
}

/* ---- writing values ------------------------------------------------------------------------ */

/* Stacks grow while nested values are written: their entries are found by offset. */
#define ITEM(e, at, i) (((const Span *)((e)->items.data + (at)))[i])
/* A key's plan: its token's bounds in e->keys, and its core key kind (-1: none). */
#define BOUND(e, at, i) (((const uint32_t *)((e)->plan.data + (at))) + 3 * (i))

static int write_value(Enc *e, Buf *out, const Annot *a, int n);
static int write_nested(Enc *e, Buf *out, size_t items_at, size_t count);

static int push_span(Enc *e, Span s) { return buf_put(&e->items, &s, sizeof s); }

/* Pushes the length-delimited occurrences of field `number` in spans[0:count) (offsets into
   e->items) onto e->items; their count, or -1 when out of memory. */
static long push_fields(Enc *e, size_t spans_at, size_t count, uint32_t number) {
    long n = 0;
    for (size_t k = 0; k < count; k++) {
        Field f = pf_fields(ITEM(e, spans_at, k));
        while (pf_next(&f))
            if (f.number == number && f.wire == WIRE_LEN) {
                if (!push_span(e, f.body)) return -1;
                n++;
            }
    }
    return n;
}

static int write_legacy(Enc *e, Buf *out, Span raw) {
    if (legacy_same(raw)) return buf_put(out, raw.p, SPAN_LEN(raw)) ? ENC_OK : ENC_FAIL;
    Buf msg = {0};
    e->hooked++;
    int got = e->hooks->legacy(e->hooks->ctx, raw, out, &msg);
    if (got == LEGACY_LATER || got == LEGACY_NOW) {
        if (got == LEGACY_NOW || !e->later) {
            e->msg.len = 0;
            if (!buf_put(&e->msg, msg.data, msg.len)) got = ENC_FAIL;
        }
        if (got == LEGACY_LATER) {
            e->later = 1;
            if (!buf_str(out, "null")) got = ENC_FAIL; /* a place holder: the args fail */
        }
    }
    buf_free(&msg);
    return got == ENC_FAIL ? ENC_FAIL : got == LEGACY_NOW ? ENC_BAD : ENC_OK;
}

static int same_key(const Enc *e, const uint32_t *a, const uint32_t *b) {
    return a[1] - a[0] == b[1] - b[0] &&
           same_bytes(e->keys.data + a[0], e->keys.data + b[0], a[1] - a[0]);
}

/* Plans a dict of n keys (bounds: offsets into e->keys, as BOUND holds them): last[u] is the entry of
   the last occurrence of the u-th distinct key, in order of first occurrence, first[u]
   its first. Returns the distinct count, or -1 when out of memory. */
static long plan_keys(Enc *e, const uint32_t *bounds, size_t n, uint32_t *first, uint32_t *last) {
    size_t distinct = 0;
    Map seen = {0};
    int hashed = n > 32;
    if (hashed && !map_init(&seen, 64, e->seed)) return -1;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *key = &bounds[3 * i];
        long found = -1;
        if (hashed) { /* hash + k -> a distinct key of that hash, k = 0, 1, ... */
            uint64_t h = hash_bytes(e->seed, e->keys.data + key[0], key[1] - key[0]);
            for (uint64_t k = 0; found < 0; k++) {
                uint32_t u;
                if (!map_get(&seen, h + k, &u)) {
                    if (!map_put(&seen, h + k, (uint32_t)distinct)) {
                        map_free(&seen);
                        return -1;
                    }
                    break;
                }
                if (same_key(e, key, &bounds[3 * first[u]])) found = (long)u;
            }
        } else {
            for (size_t u = 0; u < distinct && found < 0; u++)
                if (same_key(e, key, &bounds[3 * first[u]])) found = (long)u;
        }
        if (found < 0) {
            first[distinct] = last[distinct] = (uint32_t)i;
            distinct++;
        } else {
            last[found] = (uint32_t)i;
        }
    }
    map_free(&seen);
    return (long)distinct;
}

/* Writes entry i of a dict (its value spans start at items_at in e->items); at the top
   level (core not NULL) a core key's value (kind >= 0) goes to core too. */
typedef int (*WriteEntry)(Enc *e, Buf *out, size_t items_at, size_t i, Core *core, int kind);

/* A dict of n entries: key tokens bounded at plan_at in e->plan, values by `write`. */
static int write_dict(Enc *e, Buf *out, size_t plan_at, size_t items_at, size_t n,
                      WriteEntry write) {
    uint32_t small[64];
    uint32_t *first = n <= 32 ? small : malloc(2 * n * sizeof(uint32_t));
    if (!first) return ENC_FAIL;
    uint32_t *last = first + n;
    long distinct = plan_keys(e, BOUND(e, plan_at, 0), n, first, last);
    int status = distinct < 0 || !buf_byte(out, '{') ? ENC_FAIL : ENC_OK;
    Core *core = e->core; /* the top level only */
    e->core = NULL;
    for (long u = 0; u < distinct && status == ENC_OK; u++) {
        const uint32_t *key = BOUND(e, plan_at, first[u]);
        if ((u && !buf_byte(out, ',')) || !buf_put(out, e->keys.data + key[0], key[1] - key[0]) ||
            !buf_byte(out, ':')) {
            status = ENC_FAIL;
            break;
        }
        status = write(e, out, items_at, last[u], core, core ? (int)(int32_t)key[2] : -1);
    }
    if (status == ENC_OK && !buf_byte(out, '}')) status = ENC_FAIL;
    if (first != small) free(first);
    return status;
}

static int push_bound(Enc *e, uint32_t start, int kind) {
    uint32_t plan[3] = {start, (uint32_t)e->keys.len, (uint32_t)kind};
    return buf_put(&e->plan, plan, sizeof plan);
}

#define ANNOT(e, at, i) (((const Annot *)((e)->annots.data + (at)))[i])

/* A dict entry's value (annotation a's); at the top level (core not NULL) a core key's
   value (kind >= 0) goes to core too. */
static int write_entry(Enc *e, Buf *out, const Annot *a, Core *core, int kind) {
    int n = annot_value_field(a, 0);
    size_t value_at = out->len;
    int status = write_value(e, out, a, n);
    if (!core || kind < 0 || status != ENC_OK) return status;
    const char *v = out->data + value_at, *end = out->data + out->len;
    /* an int just written is not read back from its digits */
    if (n == 3) core_u64(core, kind, v, end, a->uint_v);
    else if (n == 4) core_number(core, kind, v, end, NUM_I64, (int64_t)a->int_bits, 0);
    else core_value(core, kind, v, end);
    e->cores++;
    return status;
}

static int write_annotation_entry(Enc *e, Buf *out, size_t annots_at, size_t i, Core *core, int kind) {
    Annot a = ANNOT(e, annots_at, i); /* a nested value may move e->annots */
    return write_entry(e, out, &a, core, kind);
}

/* The annotations in field `number` of the spans at spans_at (count of them) as a dict;
   *has_correlation: whether one is named "correlation". */
/* The annotations of the n spans at items_at as a dict; *has_correlation: whether one is
   named "correlation". */
static int write_annotation_spans(Enc *e, Buf *out, size_t items_at, size_t n, int *has_correlation) {
    size_t keys_at = e->keys.len, plan_at = e->plan.len, annots_at = e->annots.len;
    int ok = buf_reserve(&e->annots, n * sizeof(Annot));
    for (size_t i = 0; ok && i < n; i++) {
        Annot *a = (Annot *)(e->annots.data + e->annots.len);
        annot_read(a, ITEM(e, items_at, i));
        e->annots.len += sizeof(Annot);
        uint32_t start = (uint32_t)e->keys.len;
        int kind;
        ok = annot_key(e, &e->keys, a, e->core != NULL, &kind) && push_bound(e, start, kind);
        if (ok && has_correlation && e->keys.len - start == 13 &&
            memcmp(e->keys.data + start, "\"correlation\"", 13) == 0)
            *has_correlation = 1;
    }
    int status = ENC_FAIL;
    if (ok) status = n ? write_dict(e, out, plan_at, annots_at, n, write_annotation_entry) : ENC_OK;
    e->annots.len = annots_at;
    e->keys.len = keys_at;
    e->plan.len = plan_at;
    return status;
}

/* The annotations in field `number` of the spans at spans_at (count of them) as a dict. */
static int write_annotations(Enc *e, Buf *out, size_t spans_at, size_t count, uint32_t number,
                             int *has_correlation) {
    size_t items_at = e->items.len;
    long n = push_fields(e, spans_at, count, number);
    int status = n < 0 ? ENC_FAIL : write_annotation_spans(e, out, items_at, (size_t)n, has_correlation);
    e->items.len = items_at;
    return status;
}

static int write_array(Enc *e, Buf *out, Span s) {
    int status = buf_byte(out, '[') ? ENC_OK : ENC_FAIL, count = 0;
    Field f = pf_fields(s);
    while (status == ENC_OK && pf_next(&f)) {
        if (f.number != 12 || f.wire != WIRE_LEN) continue;
        Annot item;
        annot_read(&item, f.body);
        if (count++ && !buf_byte(out, ',')) return ENC_FAIL;
        status = write_value(e, out, &item, annot_value_field(&item, 1));
    }
    return status == ENC_OK && !buf_byte(out, ']') ? ENC_FAIL : status;
}

static int write_one_nested(Enc *e, Buf *out, size_t items_at, size_t i, Core *core, int kind) {
    (void)core, (void)kind; /* nested: never the top level */
    size_t at = e->items.len;
    if (!push_span(e, ITEM(e, items_at, i))) return ENC_FAIL;
    int status = write_nested(e, out, at, 1);
    e->items.len = at;
    return status;
}

/* A NestedValue (the older dicts and arrays), merged from `count` spans at items_at: a
   dict zips its keys and values, an array lists its values, else the first of int,
   double, bool and string it has, else null (annotations._nested). */
static int write_nested(Enc *e, Buf *out, size_t items_at, size_t count) {
    int32_t type = 0;
    uint32_t present = 0;
    uint64_t int_bits = 0, bool_v = 0;
    double dbl = 0;
    Span str = {0};
    for (size_t k = 0; k < count; k++) {
        Field f = pf_fields(ITEM(e, items_at, k));
        while (pf_next(&f)) {
            if (f.number == 1 && f.wire == WIRE_VARINT) type = (int32_t)f.value;
            else if (f.number == 5 && f.wire == WIRE_VARINT) int_bits = f.value;
            else if (f.number == 6 && f.wire == WIRE_FIXED64) memcpy(&dbl, &f.value, 8);
            else if (f.number == 7 && f.wire == WIRE_VARINT) bool_v = f.value;
            else if (f.number == 8 && f.wire == WIRE_LEN) str = f.body;
            else continue;
            present |= 1u << f.number;
        }
    }
    if (type == 1) {
        size_t keys_at = e->keys.len, plan_at = e->plan.len, values_at = e->items.len;
        long values = push_fields(e, items_at, count, 3), n = 0;
        int ok = values >= 0;
        for (size_t k = 0; ok && k < count; k++) {
            Field f = pf_fields(ITEM(e, items_at, k));
            while (ok && n < values && pf_next(&f))
                if (f.number == 2 && f.wire == WIRE_LEN) {
                    uint32_t start = (uint32_t)e->keys.len;
                    ok = json_string(&e->keys, f.body, &e->tmp) && push_bound(e, start, -1);
                    n++;
                }
        }
        int status = !ok ? ENC_FAIL
                     : n ? write_dict(e, out, plan_at, values_at, (size_t)n, write_one_nested)
                     : buf_str(out, "{}") ? ENC_OK : ENC_FAIL;
        e->items.len = values_at;
        e->keys.len = keys_at;
        e->plan.len = plan_at;
        return status;
    }
    if (type == 2) {
        int status = buf_byte(out, '[') ? ENC_OK : ENC_FAIL, written = 0;
        for (size_t k = 0; k < count && status == ENC_OK; k++) {
            Field f = pf_fields(ITEM(e, items_at, k));
            while (status == ENC_OK && pf_next(&f)) {
                if (f.number != 4 || f.wire != WIRE_LEN) continue;
                size_t at = e->items.len;
                if ((written++ && !buf_byte(out, ',')) || !push_span(e, f.body)) return ENC_FAIL;
                status = write_nested(e, out, at, 1);
                e->items.len = at;
            }
        }
        return status == ENC_OK && !buf_byte(out, ']') ? ENC_FAIL : status;
    }
    int ok;
    if (present & (1u << 5)) ok = json_i64(out, (int64_t)int_bits);
    else if (present & (1u << 6)) ok = json_double(out, dbl);
    else if (present & (1u << 7)) ok = buf_str(out, bool_v ? "true" : "false");
    else if (present & (1u << 8)) ok = json_string(out, str, &e->tmp);
    else ok = buf_str(out, "null");
    return ok ? ENC_OK : ENC_FAIL;
}

static int write_value_now(Enc *e, Buf *out, const Annot *a, int n);

/* The key of a composite value written as field n of annotation a, in its sequence. */
static uint64_t written_hash(const Enc *e, const Annot *a, int n) {
    size_t len = SPAN_LEN(a->whole);
    return hash_bytes(e->seed ^ mix64(e->seq->args_gen * 16 + (uint64_t)n), a->whole.p, len);
}

/* The text of a value written before, appended to out; 0 when none is kept. */
static int written_before(Enc *e, Buf *out, uint64_t hash, Span whole) {
    uint32_t at;
    if (!e->written.slots || !map_get(&e->written, hash, &at)) return 0;
    const Written *w = &VEC_AT(e->written_at, Written, at);
    size_t len = SPAN_LEN(whole);
    if (w->hash != hash || w->gen != e->seq->args_gen || w->len != len || memcmp(e->written_text.data + w->off, whole.p, len) != 0)
        return 0;
    return buf_put(out, e->written_text.data + w->off + len, w->text_len) ? 1 : -1;
}

/* Keeps the text just written (out[from:]) of a value; 0 when out of memory. */
static int keep_written(Enc *e, uint64_t hash, Span whole, const Buf *out, size_t from) {
    size_t len = SPAN_LEN(whole), text_len = out->len - from;
    if (len + text_len > WRITTEN_MAX_BYTES / 16) return 1;
    if (e->written_text.len + len + text_len > WRITTEN_MAX_BYTES) {
        map_clear(&e->written);
        e->written_at.len = e->written_text.len = 0;
    }
    if (!e->written.slots && !map_init(&e->written, 1024, e->seed)) return 0;
    Written w = {hash, e->seq->args_gen, e->written_text.len, (uint32_t)len, (uint32_t)text_len};
    uint32_t at = (uint32_t)VEC_LEN(e->written_at, Written);
    return buf_put(&e->written_text, whole.p, len) && buf_put(&e->written_text, out->data + from, text_len) &&
           buf_put(&e->written_at, &w, sizeof w) && map_put(&e->written, hash, at);
}

/* Field n of annotation a as its JSON value; a composite one written once per distinct
   bytes (and sequence args generation), unless Python read a legacy value in it or its
   args fail later. */
static int write_value(Enc *e, Buf *out, const Annot *a, int n) {
    if (n != 8 && n != 11 && n != 12) return write_value_now(e, out, a, n);
    uint64_t hash = written_hash(e, a, n), hooked = e->hooked;
    int got = written_before(e, out, hash, a->whole);
    if (got) return got > 0 ? ENC_OK : ENC_FAIL;
    size_t from = out->len;
    int later = e->later;
    int status = write_value_now(e, out, a, n);
    if (status == ENC_OK && e->hooked == hooked && e->later == later && !keep_written(e, hash, a->whole, out, from))
        return ENC_FAIL;
    return status;
}

static int write_value_now(Enc *e, Buf *out, const Annot *a, int n) {
    char text[32];
    int ok;
    switch (n) {
        case 0: ok = buf_str(out, "null"); break;
        case 2: ok = buf_str(out, a->bool_v ? "true" : "false"); break;
        case 3: ok = json_u64(out, a->uint_v); break;
        case 4: ok = json_i64(out, (int64_t)a->int_bits); break;
        case 5: ok = json_double(out, a->dbl); break;
        case 6: ok = json_string(out, a->str, &e->tmp); break;
        case 7:
            snprintf(text, sizeof text, "\"0x%llx\"", (unsigned long long)a->pointer);
            ok = buf_str(out, text);
            break;
        case 8: {
            size_t at = e->items.len;
            if (!push_span(e, a->whole)) return ENC_FAIL;
            long count = push_fields(e, at, 1, 8);
            int status = count < 0 ? ENC_FAIL : write_nested(e, out, at + sizeof(Span), (size_t)count);
            e->items.len = at;
            return status;
        }
        case 9: return write_legacy(e, out, a->legacy);
        case 11: {
            size_t at = e->items.len;
            if (!push_span(e, a->whole)) return ENC_FAIL;
            int status = write_annotations(e, out, at, 1, 11, NULL);
            e->items.len = at;
            return status;
        }
        case 12: return write_array(e, out, a->whole);
        case 17: {
            Entry *entry = sequence_entry(e->seq, T_ARG_STRINGS, a->string_iid);
            if (!entry) {
                ok = buf_str(out, "\"\"");
                break;
            }
            ok = entry_json(out, e->seq, entry);
            break;
        }
        default: return ENC_FAIL;
    }
    return ok ? ENC_OK : ENC_FAIL;
}

#endif
