/* What the native reader interns: the texts of names, categories and track names (each
 * once, with its Python str made once), the pid and tid values (ints of any size the
 * reader makes, texts, None), and each packet sequence's interned tables.
 */
#ifndef KINETOSCOPE_PF_STORE_H
#define KINETOSCOPE_PF_STORE_H
#include "_pf_text.h"

#define NO_STR UINT32_MAX

/* ---- texts (valid UTF-8) ---------------------------------------------------------------- */

enum { FLOW_KIND_UNKNOWN = 0, FLOW_KIND_FWDBWD = 1, FLOW_KIND_AC2G = 2 };

typedef struct {
    size_t off;
    uint32_t len;
    uint32_t next;     /* the next text of the same hash */
    uint64_t hash;
    uint8_t flow_kind; /* of this text as a category: flows.flow_kind, asked once */
    PyObject *obj;     /* its Python str, made when a chunk first needs it */
} Text;

typedef struct {
    Buf bytes;
    Buf texts; /* Text */
    Map by_hash;
    uint64_t seed;
} Texts;

static int texts_init(Texts *t, uint64_t seed) {
    memset(t, 0, sizeof *t);
    t->seed = seed;
    return map_init(&t->by_hash, 1024, seed);
}

static void texts_free(Texts *t) {
    size_t n = VEC_LEN(t->texts, Text);
    for (size_t i = 0; i < n; i++) Py_XDECREF(VEC_AT(t->texts, Text, i).obj);
    buf_free(&t->bytes);
    buf_free(&t->texts);
    map_free(&t->by_hash);
}

static const char *text_at(const Texts *t, uint32_t id, uint32_t *len) {
    const Text *e = &VEC_AT(t->texts, Text, id);
    *len = e->len;
    return buf_at(&t->bytes, e->off);
}

/* The id of a valid UTF-8 text; NO_STR when out of memory. */
static uint32_t texts_id(Texts *t, const void *p, size_t n) {
    if (n > UINT32_MAX - 1) return NO_STR;
    uint64_t h = hash_bytes(t->seed, p, n);
    uint32_t first, id;
    int known = map_get(&t->by_hash, h, &first);
    for (id = known ? first : NO_STR; id != NO_STR; id = VEC_AT(t->texts, Text, id).next) {
        const Text *e = &VEC_AT(t->texts, Text, id);
        if (e->len == n && (!n || same_bytes(t->bytes.data + e->off, p, n))) return id;
    }
    Text fresh = {t->bytes.len, (uint32_t)n, known ? first : NO_STR, h, 0, NULL};
    id = (uint32_t)VEC_LEN(t->texts, Text);
    if (id == NO_STR || !buf_put(&t->bytes, p, n) || !buf_put(&t->texts, &fresh, sizeof fresh) ||
        !map_put(&t->by_hash, h, id))
        return NO_STR;
    return id;
}

/* The id of the replaced text of any bytes (`tmp` is scratch). */
static uint32_t texts_id_of(Texts *t, Span s, Buf *tmp) {
    if (utf8_valid(s.p, s.end)) return texts_id(t, s.p, SPAN_LEN(s));
    tmp->len = 0;
    if (!put_text(tmp, s)) return NO_STR;
    return texts_id(t, buf_at(tmp, 0), tmp->len);
}

/* A new reference to the Python str of a text (with the GIL). */
static PyObject *text_object(Texts *t, uint32_t id) {
    Text *e = &VEC_AT(t->texts, Text, id);
    if (!e->obj) e->obj = PyUnicode_DecodeUTF8(buf_at(&t->bytes, e->off), e->len, "strict");
    Py_XINCREF(e->obj);
    return e->obj;
}

/* ---- pid and tid values: None, ints, texts ------------------------------------------------ */

/* An int is I64 when it fits int64, else U64 when it fits uint64, else BIG (its digits
   without leading zeros, a text id): one form per number, so equal numbers are equal. */
enum { V_NONE, V_I64, V_U64, V_BIG, V_TEXT };

typedef struct {
    int kind;
    uint64_t bits; /* I64 (as bits), U64, or the text id of BIG and TEXT */
    uint32_t next;
    PyObject *obj;
} Value;

typedef struct {
    Buf values; /* Value; 0 is None */
    Map by_key;
} Values;

static uint64_t value_key(int kind, uint64_t bits) { return mix64(bits) ^ ((uint64_t)kind << 61); }

static uint32_t values_id(Values *v, int kind, uint64_t bits) {
    uint64_t key = value_key(kind, bits);
    uint32_t first, id;
    int known = map_get(&v->by_key, key, &first);
    for (id = known ? first : NO_STR; id != NO_STR; id = VEC_AT(v->values, Value, id).next) {
        const Value *e = &VEC_AT(v->values, Value, id);
        if (e->kind == kind && e->bits == bits) return id;
    }
    Value fresh = {kind, bits, known ? first : NO_STR, NULL};
    id = (uint32_t)VEC_LEN(v->values, Value);
    if (!buf_put(&v->values, &fresh, sizeof fresh) || !map_put(&v->by_key, key, id)) return NO_STR;
    return id;
}

static int values_init(Values *v, uint64_t seed) {
    memset(v, 0, sizeof *v);
    if (!map_init(&v->by_key, 256, seed)) return 0;
    return values_id(v, V_NONE, 0) == 0;
}

static void values_free(Values *v) {
    size_t n = VEC_LEN(v->values, Value);
    for (size_t i = 0; i < n; i++) Py_XDECREF(VEC_AT(v->values, Value, i).obj);
    buf_free(&v->values);
    map_free(&v->by_key);
}

static uint32_t value_of_int(Values *v, int64_t n) { return values_id(v, V_I64, (uint64_t)n); }

/* tracks.name_id: a name of at most 20 ASCII digits is the number it writes, else the
   name itself. `name` is a text id. */
static uint32_t value_of_name(Values *v, Texts *t, uint32_t name) {
    uint32_t n;
    const char *p = text_at(t, name, &n);
    int digits = n > 0 && n <= 20;
    for (uint32_t i = 0; digits && i < n; i++) digits = p[i] >= '0' && p[i] <= '9';
    if (!digits) return values_id(v, V_TEXT, name);
    uint32_t i = 0;
    while (i + 1 < n && p[i] == '0') i++; /* "007" is 7 */
    if (n - i < 20 || (n - i == 20 && memcmp(p + i, "18446744073709551615", 20) <= 0)) {
        uint64_t value = 0;
        for (; i < n; i++) value = value * 10 + (uint64_t)(p[i] - '0');
        return value <= INT64_MAX ? values_id(v, V_I64, value) : values_id(v, V_U64, value);
    }
    uint32_t big = texts_id(t, p + i, n - i);
    return big == NO_STR ? NO_STR : values_id(v, V_BIG, big);
}

static PyObject *value_object(Values *v, Texts *t, uint32_t id) {
    Value *e = &VEC_AT(v->values, Value, id);
    if (!e->obj) {
        if (e->kind == V_NONE) {
            e->obj = Py_None;
            Py_INCREF(e->obj);
        } else if (e->kind == V_I64) {
            e->obj = PyLong_FromLongLong((long long)(int64_t)e->bits);
        } else if (e->kind == V_U64) {
            e->obj = PyLong_FromUnsignedLongLong((unsigned long long)e->bits);
        } else if (e->kind == V_TEXT) {
            e->obj = text_object(t, (uint32_t)e->bits);
        } else {
            PyObject *digits = text_object(t, (uint32_t)e->bits);
            if (digits) e->obj = PyLong_FromUnicodeObject(digits, 10);
            Py_XDECREF(digits);
        }
    }
    Py_XINCREF(e->obj);
    return e->obj;
}

/* ---- a sequence's interned tables ---------------------------------------------------------- */

enum { T_CATEGORIES, T_NAMES, T_ARG_NAMES, T_ARG_STRINGS, N_INTERNED };

enum { JSON_UNKNOWN, JSON_PLAIN, JSON_ESCAPED };
#define CORE_UNKNOWN INT16_MIN

typedef struct {
    size_t off; /* of its replaced text in the sequence's bytes */
    uint32_t len;
    uint32_t text; /* its text id once asked (names, categories), else NO_STR */
    /* Asked once per entry of the args' tables, not once per annotation: whether its JSON
       string needs an escape (JSON_*), and its core key kind as a name (core_key). */
    uint8_t json;
    int16_t core;
} Entry;

/* Writers count iids from 1: an iid below twice its table's entries (and 64) is found
   by index, so the index holds no more than the entries do; others by the map. */
#define DIRECT_SLACK 64

typedef struct {
    Map index[N_INTERNED];  /* iid -> entry, for the iids not in `direct` */
    Buf direct[N_INTERNED]; /* uint32: entry + 1 by iid (0: none) */
    Buf entries[N_INTERNED];
    Buf bytes;
    uint64_t default_track;
    int64_t nbytes; /* as the Python reader counts its tables */
    uint64_t args_gen; /* new (the reader's count) whenever its arg names or strings change */
} Sequence;

static int sequence_init(Sequence *s, uint64_t seed) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < N_INTERNED; i++)
        if (!map_init(&s->index[i], 16, seed)) return 0;
    return 1;
}

static void sequence_free(Sequence *s) {
    for (int i = 0; i < N_INTERNED; i++) {
        map_free(&s->index[i]);
        buf_free(&s->direct[i]);
        buf_free(&s->entries[i]);
    }
    buf_free(&s->bytes);
}

static void sequence_clear(Sequence *s) {
    for (int i = 0; i < N_INTERNED; i++) {
        if (s->index[i].mask > 64) { /* a big table: let its memory go */
            uint64_t seed = s->index[i].seed;
            map_free(&s->index[i]);
            map_init(&s->index[i], 16, seed);
        } else {
            map_clear(&s->index[i]);
        }
        buf_free(&s->direct[i]);
        buf_free(&s->entries[i]);
    }
    buf_free(&s->bytes);
}

/* The entry of iid in table `table`, or NULL. */
static Entry *sequence_entry(Sequence *s, int table, uint64_t iid) {
    uint32_t at;
    if (iid < VEC_LEN(s->direct[table], uint32_t) && (at = VEC_AT(s->direct[table], uint32_t, iid)))
        return &VEC_AT(s->entries[table], Entry, at - 1);
    if (!map_get(&s->index[table], iid, &at)) return NULL;
    return &VEC_AT(s->entries[table], Entry, at);
}

/* Records where iid's entry is. */
static int sequence_place(Sequence *s, int table, uint64_t iid, uint32_t at) {
    Buf *direct = &s->direct[table];
    size_t have = VEC_LEN(*direct, uint32_t);
    if (iid >= 2 * ((uint64_t)at + DIRECT_SLACK)) return map_put(&s->index[table], iid, at);
    if (iid >= have) {
        size_t want = have ? have : DIRECT_SLACK;
        while (want <= iid) want *= 2;
        if (!buf_reserve(direct, (want - have) * sizeof(uint32_t))) return 0;
        memset(direct->data + direct->len, 0, (want - have) * sizeof(uint32_t));
        direct->len = want * sizeof(uint32_t);
    }
    VEC_AT(*direct, uint32_t, iid) = at + 1;
    return 1;
}

static Span entry_span(const Sequence *s, const Entry *e) {
    const uint8_t *p = (const uint8_t *)buf_at(&s->bytes, e->off);
    return (Span){p, p + e->len};
}

/* table[iid] = the replaced text of `raw` (as the Python reader's dict assignment). */
static int sequence_set(Sequence *s, int table, uint64_t iid, Span raw, int *changed) {
    size_t off = s->bytes.len;
    if (!put_text(&s->bytes, raw)) return 0;
    Entry fresh = {off, (uint32_t)(s->bytes.len - off), NO_STR, JSON_UNKNOWN, CORE_UNKNOWN};
    Entry *old = sequence_entry(s, table, iid);
    if (old) {
        *changed |= old->len != fresh.len ||
                    memcmp(buf_at(&s->bytes, old->off), buf_at(&s->bytes, off), fresh.len) != 0;
        *old = fresh;
        return 1;
    }
    uint32_t at = (uint32_t)VEC_LEN(s->entries[table], Entry);
    return buf_put(&s->entries[table], &fresh, sizeof fresh) && sequence_place(s, table, iid, at);
}

#endif
