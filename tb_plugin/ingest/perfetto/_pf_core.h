/* The args every view reads (schema.CoreArgs, schema.PythonIds) as columns, from an
 * event's args text, as the column builder reads them (columns.build_chunk). Only what
 * it reads one way in any batch is read here: ints for the id columns (past int64: -1;
 * the Python ids only within int64), ints and floats for the float columns. Anything
 * else (a string where a number goes, a null, a value of a type CoreArgs refuses) marks
 * the row `python`: its chunk's columns are then read by the column builder's own code
 * from the args text.
 *
 * And the args text split into its members, for a slice's end to join its args.
 */
#ifndef KINETOSCOPE_PF_CORE_H
#define KINETOSCOPE_PF_CORE_H
#include "_pf_text.h"

enum {
    I_EXTERNAL_ID, I_EXTERNAL_ID_LOWER, I_CORRELATION, I_DEVICE, I_STREAM, I_ADDR,
    I_DEVICE_TYPE, I_DEVICE_ID, I_PYTHON_ID, I_PYTHON_PARENT_ID, N_INTS,
};
enum { F_BLOCKS_PER_SM, F_OCCUPANCY, F_NBYTES, F_TOTAL_ALLOCATED, F_TOTAL_RESERVED, N_FLOATS };

typedef struct {
    int64_t ints[N_INTS];
    double floats[N_FLOATS];
    uint8_t has_stack, python;
} Core;

static void core_defaults(Core *c) {
    for (int i = 0; i < N_INTS; i++) c->ints[i] = -1;
    for (int i = 0; i < N_FLOATS; i++) c->floats[i] = NAN;
    c->has_stack = c->python = 0;
}

/* A Core as the reader holds it while its event waits: a header word of which columns
   differ from their defaults (bits 0-9 the ints, 10-14 the floats, 15 has_stack, 16
   python), then those columns' 8 bytes each, in order. An event sets a few of them: the
   events held behind an open slice take ~30 bytes each for their core columns, not 128. */
#define CORE_PACKED_MAX (4 + 8 * (N_INTS + N_FLOATS))

static size_t core_pack(const Core *c, uint8_t *out) {
    static const double unset = NAN;
    uint32_t mask = 0;
    size_t n = 4;
    for (int i = 0; i < N_INTS; i++)
        if (c->ints[i] != -1) {
            mask |= 1u << i;
            memcpy(out + n, &c->ints[i], 8);
            n += 8;
        }
    for (int i = 0; i < N_FLOATS; i++)
        if (memcmp(&c->floats[i], &unset, 8) != 0) { /* bit for bit: any other NaN is kept */
            mask |= 1u << (N_INTS + i);
            memcpy(out + n, &c->floats[i], 8);
            n += 8;
        }
    mask |= (uint32_t)(c->has_stack != 0) << 15 | (uint32_t)(c->python != 0) << 16;
    memcpy(out, &mask, 4);
    return n;
}

/* A packed Core (len bytes; 0: none, the defaults) read back. */
static void core_unpack(const uint8_t *p, size_t len, Core *c) {
    core_defaults(c);
    if (len < 4) return;
    uint32_t mask;
    memcpy(&mask, p, 4);
    p += 4;
    for (int i = 0; i < N_INTS; i++)
        if (mask >> i & 1) {
            memcpy(&c->ints[i], p, 8);
            p += 8;
        }
    for (int i = 0; i < N_FLOATS; i++)
        if (mask >> (N_INTS + i) & 1) {
            memcpy(&c->floats[i], p, 8);
            p += 8;
        }
    c->has_stack = mask >> 15 & 1;
    c->python = mask >> 16 & 1;
}

enum { K_INT = 0, K_FLOAT = 100, K_STACK = 200, K_NAME, K_SORT_INDEX, K_LABELS };

typedef struct {
    const char *token; /* the key as its JSON token */
    size_t len;
    int kind; /* K_INT + column, K_FLOAT + column, or a checked key */
} CoreKey;

#define CORE_KEY(token, kind) {token, sizeof(token) - 1, kind}
static const CoreKey CORE_KEYS[] = {
    CORE_KEY("\"External id\"", K_INT + I_EXTERNAL_ID),
    CORE_KEY("\"external id\"", K_INT + I_EXTERNAL_ID_LOWER),
    CORE_KEY("\"correlation\"", K_INT + I_CORRELATION),
    CORE_KEY("\"device\"", K_INT + I_DEVICE),
    CORE_KEY("\"stream\"", K_INT + I_STREAM),
    CORE_KEY("\"Addr\"", K_INT + I_ADDR),
    CORE_KEY("\"Device Type\"", K_INT + I_DEVICE_TYPE),
    CORE_KEY("\"Device Id\"", K_INT + I_DEVICE_ID),
    CORE_KEY("\"Python id\"", K_INT + I_PYTHON_ID),
    CORE_KEY("\"Python parent id\"", K_INT + I_PYTHON_PARENT_ID),
    CORE_KEY("\"blocks per SM\"", K_FLOAT + F_BLOCKS_PER_SM),
    CORE_KEY("\"est. achieved occupancy %\"", K_FLOAT + F_OCCUPANCY),
    CORE_KEY("\"Bytes\"", K_FLOAT + F_NBYTES),
    CORE_KEY("\"Total Allocated\"", K_FLOAT + F_TOTAL_ALLOCATED),
    CORE_KEY("\"Total Reserved\"", K_FLOAT + F_TOTAL_RESERVED),
    CORE_KEY("\"Call stack\"", K_STACK),
    CORE_KEY("\"name\"", K_NAME),
    CORE_KEY("\"sort_index\"", K_SORT_INDEX),
    CORE_KEY("\"labels\"", K_LABELS),
};
#define N_CORE_KEYS ((int)(sizeof CORE_KEYS / sizeof CORE_KEYS[0]))

/* ---- the members of an args text -------------------------------------------------------- */

typedef struct {
    const char *key, *key_end, *value, *value_end;
} Member;

/* Past a JSON string whose opening quote is at p; NULL past `end`. */
static const char *skip_string(const char *p, const char *end) {
    for (p++;;) {
        const char *quote = memchr(p, '"', (size_t)(end - p));
        if (!quote) return NULL;
        const char *back = quote;
        while (back > p && back[-1] == '\\') back--;
        if ((quote - back) % 2 == 0) return quote + 1; /* not escaped */
        p = quote + 1;
    }
}

/* Past one JSON value of valid JSON (msgspec's or ours); NULL past `end`. */
static const char *skip_json(const char *p, const char *end) {
    int depth = 0;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            if (!(p = skip_string(p, end))) return NULL;
            if (depth == 0) return p;
        } else if (c == '[' || c == '{') {
            depth++;
            p++;
        } else if (c == ']' || c == '}') {
            if (depth == 0) return p;
            p++;
            if (--depth == 0) return p;
        } else if ((c == ',' || c == ':') && depth == 0) {
            return p;
        } else {
            p++;
        }
    }
    return depth == 0 ? p : NULL;
}

/* The next member of an args object whose text is [p, end) (p past '{' or ','); 0 at its
   end or on text that is not an object's members. */
static int next_member(const char **p, const char *end, Member *m) {
    const char *q = *p;
    if (q >= end || *q != '"') return 0;
    m->key = q;
    if (!(q = skip_json(q, end)) || q >= end || *q != ':') return 0;
    m->key_end = q++;
    m->value = q;
    if (!(q = skip_json(q, end)) || q == m->value) return 0;
    m->value_end = q;
    *p = q < end && *q == ',' ? q + 1 : q;
    return 1;
}

/* ---- numbers ------------------------------------------------------------------------------ */

enum { NUM_NOT, NUM_I64, NUM_U64, NUM_BIG, NUM_FLOAT };

/* What a JSON number token is; its int64 / uint64 value. */
static int json_number(const char *p, const char *end, int64_t *i, uint64_t *u) {
    int negative = p < end && *p == '-';
    const char *q = p + negative;
    if (q >= end || *q < '0' || *q > '9') return NUM_NOT;
    uint64_t value = 0;
    int big = 0;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        uint64_t digit = (uint64_t)(*q - '0');
        if (value > (UINT64_MAX - digit) / 10) big = 1;
        value = value * 10 + digit;
    }
    if (q < end) return NUM_FLOAT; /* a fraction or an exponent follows */
    if (big) return NUM_BIG;
    if (negative) {
        if (value > (uint64_t)INT64_MAX + 1) return NUM_BIG;
        *i = value == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)value;
        return NUM_I64;
    }
    *u = value;
    if (value <= (uint64_t)INT64_MAX) {
        *i = (int64_t)value;
        return NUM_I64;
    }
    return NUM_U64;
}

/* The double of a number token of fewer than 40 bytes (strtod reads up to a NUL: a token
   inside a text being written has none after it). */
static double bounded_strtod(const char *p, const char *end) {
    char token[40];
    memcpy(token, p, (size_t)(end - p));
    token[end - p] = 0;
    return c_strtod(token);
}

/* One core key's value, its token [v, end) read as json_number read it (`number`, *i, *u);
   marks c->python where the column builder's own reading is needed. */
static void core_number(Core *c, int kind, const char *v, const char *end, int number, int64_t i,
                        uint64_t u) {
    if (kind == K_STACK) {
        c->has_stack = *v == '"' && end - v > 2;
    } else if (kind == K_NAME || kind == K_SORT_INDEX) { /* str | int | None */
        if (!(*v == '"' || *v == 'n' || number == NUM_I64 || number == NUM_U64)) c->python = 1;
    } else if (kind == K_LABELS) { /* str | None */
        if (!(*v == '"' || *v == 'n')) c->python = 1;
    } else if (kind >= K_FLOAT) {
        if (number == NUM_I64) c->floats[kind - K_FLOAT] = (double)i;
        else if (number == NUM_U64) c->floats[kind - K_FLOAT] = (double)u;
        else if (number == NUM_FLOAT && end - v < 40) c->floats[kind - K_FLOAT] = bounded_strtod(v, end);
        else c->python = 1;
    } else if (kind == I_PYTHON_ID || kind == I_PYTHON_PARENT_ID) {
        /* Both ids are read as one struct of optional ints (schema.PythonIds): null is
           -1 (a root frame's parent); a value it refuses, or an int past int64, is the
           column builder's to read (columns.python_id_columns). */
        if (number == NUM_I64) c->ints[kind] = i;
        else if (*v != 'n') c->python = 1; /* null: the default, -1 */
    } else {
        if (number == NUM_I64) c->ints[kind] = i;
        else if (number == NUM_U64) c->ints[kind] = -1; /* past int64: no number */
        else c->python = 1;
    }
}

/* One core key's value, from its token [v, end). */
static void core_value(Core *c, int kind, const char *v, const char *end) {
    int64_t i = 0;
    uint64_t u = 0;
    int number = json_number(v, end, &i, &u);
    core_number(c, kind, v, end, number, i, u);
}

/* One core key's value written by json_u64(u) at [v, end): as core_value reads it, without
   reading the digits back. */
static void core_u64(Core *c, int kind, const char *v, const char *end, uint64_t u) {
    int wide = u > (uint64_t)INT64_MAX;
    core_number(c, kind, v, end, wide ? NUM_U64 : NUM_I64, wide ? 0 : (int64_t)u, u);
}

/* The core keys of each token length (CORE_BY_LENGTH[n]: up to CORE_SAME_LENGTH indices
   into CORE_KEYS, then -1), set at the module's import: most keys are none of them by
   their length alone, the others are compared with the few of their length. */
#define CORE_MAX_LENGTH 64
#define CORE_SAME_LENGTH 4
static int8_t CORE_BY_LENGTH[CORE_MAX_LENGTH][CORE_SAME_LENGTH];

static void core_keys_init(void) {
    memset(CORE_BY_LENGTH, -1, sizeof CORE_BY_LENGTH);
    for (int k = 0; k < N_CORE_KEYS; k++) {
        int8_t *same = CORE_BY_LENGTH[CORE_KEYS[k].len];
        int at = 0;
        while (same[at] >= 0) at++; /* 4 keys at most share a length (13 bytes) */
        same[at] = (int8_t)k;
    }
}

/* The kind of a core key given as its JSON token, or -1. */
static int core_key(const char *token, size_t n) {
    if (n >= CORE_MAX_LENGTH) return -1;
    const int8_t *same = CORE_BY_LENGTH[n];
    for (int at = 0; at < CORE_SAME_LENGTH && same[at] >= 0; at++)
        if (same_bytes(CORE_KEYS[same[at]].token, token, n)) return CORE_KEYS[same[at]].kind;
    return -1;
}

/* The core columns of an args text ("" or an object of valid JSON). */
static Core core_of(const char *args, size_t n) {
    Core c;
    core_defaults(&c);
    if (n <= 2) return c;
    const char *p = args + 1, *end = args + n - 1;
    Member m;
    while (next_member(&p, end, &m)) {
        int kind = core_key(m.key, (size_t)(m.key_end - m.key));
        if (kind >= 0) core_value(&c, kind, m.value, m.value_end);
    }
    return c;
}

static int same_member_key(const Member *a, const Member *b) {
    size_t n = (size_t)(a->key_end - a->key);
    return (size_t)(b->key_end - b->key) == n && same_bytes(a->key, b->key, n);
}

static int put_member(Buf *out, int *written, const Member *key, const Member *value) {
    return (!(*written)++ || buf_byte(out, ',')) &&
           buf_put(out, key->key, (size_t)(key->key_end - key->key)) && buf_byte(out, ':') &&
           buf_put(out, value->value, (size_t)(value->value_end - value->value));
}

/* The args of a slice's begin with those of its end joined (a dict update: the end's
   names keep the begin's place, new ones come after), written to out; 0 when out of
   memory. Both are objects of distinct keys, or "". */
static int join_args(Buf *out, const char *begin, size_t begin_len, const char *end_args,
                     size_t end_len, uint64_t seed) {
    Buf ends = {0};
    Map where = {0};
    out->len = 0;
    const char *p = end_args + 1, *stop = end_args + (end_len ? end_len - 1 : 0);
    Member m;
    int ok = map_init(&where, 16, seed);
    while (ok && end_len > 2 && next_member(&p, stop, &m)) {
        uint64_t h = hash_bytes(seed, m.key, (size_t)(m.key_end - m.key));
        uint32_t at = (uint32_t)VEC_LEN(ends, Member);
        ok = buf_put(&ends, &m, sizeof m);
        for (uint64_t k = 0; ok; k++) { /* hash + k: the keys of one hash */
            uint32_t other;
            if (!map_get(&where, h + k, &other)) {
                ok = map_put(&where, h + k, at);
                break;
            }
        }
    }
    size_t n_ends = VEC_LEN(ends, Member);
    uint8_t *used = ok ? calloc(n_ends + 1, 1) : NULL;
    int written = 0;
    ok = ok && used && buf_byte(out, '{');
    p = begin + 1;
    stop = begin + (begin_len ? begin_len - 1 : 0);
    while (ok && begin_len > 2 && next_member(&p, stop, &m)) {
        const Member *value = &m;
        uint64_t h = hash_bytes(seed, m.key, (size_t)(m.key_end - m.key));
        for (uint64_t k = 0;; k++) {
            uint32_t at;
            if (!map_get(&where, h + k, &at)) break;
            if (same_member_key(&VEC_AT(ends, Member, at), &m)) {
                value = &VEC_AT(ends, Member, at);
                used[at] = 1;
                break;
            }
        }
        ok = put_member(out, &written, &m, value);
    }
    for (size_t i = 0; ok && i < n_ends; i++)
        if (!used[i]) ok = put_member(out, &written, &VEC_AT(ends, Member, i), &VEC_AT(ends, Member, i));
    ok = ok && buf_byte(out, '}');
    free(used);
    buf_free(&ends);
    map_free(&where);
    return ok;
}

#endif
