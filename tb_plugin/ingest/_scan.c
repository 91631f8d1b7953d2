/* Optional compiled scanner: the text of whole trace events becomes columns.
 *
 * `scan(prefix, block, start, end, decode_escaped)` reads `prefix` and then
 * `block[start:end]` (read in place, never copied) as the inside of a JSON array of event
 * objects (the text the decoder hands to msgspec as `[prefix, block[start:end]]`) and
 * returns the columns `native_chunk.py` turns into a Chunk, or a short reason string
 * when the text holds anything it does not handle exactly as the msgspec path does (a
 * value of an unexpected type, an escaped key, a duplicate key, a number too big for
 * int64, text that is not UTF-8, malformed JSON). The caller then decodes that text with
 * msgspec, so this scanner only has to be right on what it accepts; the tests compare
 * both paths column by column on every corpus trace.
 *
 * The scan runs without the GIL: it builds no Python object. Each column is written once
 * per event, in its final type, into a buffer handed to Python as it is (a `Block`, no
 * copy). String values are interned by their raw text (quotes included, so "1" and 1
 * differ); the Python values of the distinct texts are made afterwards, with the GIL.
 */
#include "_scan_json.h"
#include "_scan_rows.h"

#include <stddef.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* ---- output columns ------------------------------------------------------------------- */

enum { T_PH, T_NAME, T_CAT, T_PID, T_TID, N_TABLES };
static const char *TABLE_NAMES[N_TABLES] = {"ph", "name", "cat", "pid", "tid"};

/* One value per event, in this order in COLUMNS. */
enum {
    C_TS, C_DUR, C_ID, C_ARGS_END, C_EXTERNAL_ID, C_CORRELATION, C_DEVICE, C_STREAM,
    C_BLOCKS_PER_SM, C_OCCUPANCY, C_HAS_STACK, C_WORK_SIG, C_PYTHON_ID, C_PYTHON_PARENT_ID,
    N_COLUMNS
};
/* One row per event with memory args (Bytes, Addr, ...), in this order in MEMORY. */
enum { M_ROW, M_BYTES, M_ADDR, M_DEVICE_TYPE, M_DEVICE_ID, M_TOTAL_ALLOCATED, M_TOTAL_RESERVED, N_MEMORY };

typedef struct {
    const char *name;
    size_t size; /* bytes per value */
} ColumnSpec;

static const ColumnSpec COLUMNS[N_COLUMNS] = {
    {"ts", 8}, {"dur", 8}, {"id", 8}, {"args_end", 8}, {"external_id", 8},
    {"correlation", 8}, {"device", 4}, {"stream", 8}, {"blocks_per_sm", 4},
    {"occupancy", 4}, {"has_stack", 1}, {"work_sig", 8}, {"python_id", 8},
    {"python_parent_id", 8},
};
static const ColumnSpec MEMORY[N_MEMORY] = {
    {"row", 8}, {"bytes", 8}, {"addr", 8}, {"device_type", 4}, {"device_id", 4},
    {"total_allocated", 8}, {"total_reserved", 8},
};

/* What one event's keys gave, before it is written out. */
typedef struct {
    double ts, dur, blocks_per_sm, occupancy;
    int64_t id, external_id, external_id_lower, correlation, device, stream, work_sig;
    int64_t python_id, python_parent_id;
    /* memory args */
    double nbytes, total_allocated, total_reserved;
    int64_t addr, device_type, device_id;
    int has_memory;
    unsigned char has_stack;
} Row;

/* A table's last token (in the scanned text) and its code. */
typedef struct {
    const char *text;
    Py_ssize_t len;
    int32_t code;
} Recent;

typedef struct Scan {
    Lex lex; /* first: the lexer's functions take a Scan as their Lex */
    Table tables[N_TABLES];
    Recent recent[N_TABLES];
    Buf codes[N_TABLES];
    Buf columns[N_COLUMNS];
    Buf memory[N_MEMORY];
    Buf blob; /* the args text of the events, one after another */
    Py_ssize_t events, memory_rows;
    size_t row_cap; /* rows every column has room for */
    uint32_t wide; /* bit c: a value of column c lies outside int32 (the model's narrow ids) */
} Scan;

/* ---- args: the few keys every view needs (schema.CoreArgs), the rest kept raw ---------- */

enum ArgKind { A_INT, A_FLOAT, A_MEMORY_INT, A_MEMORY_FLOAT, A_STACK, A_SCALAR, A_LABELS, A_WORK };

typedef struct {
    int kind;
    size_t field; /* offset in Row (A_INT, A_FLOAT, A_MEMORY_*) */
    int work_key; /* the key's number in the work hash (A_WORK) */
} ArgKey;

#define FIELD(name) offsetof(Row, name)
/* schema.CoreArgs, by JSON key. A null reads as the column's missing value (-1, NaN). The
   numbers of the work keys are their places in the scanner's first table of args keys:
   the work signature hashes them, and the tests compute it so (tests/scan_compare.py). */
enum {
    K_EXTERNAL_ID, K_EXTERNAL_ID_LOWER, K_CORRELATION, K_DEVICE, K_STREAM, K_BLOCKS_PER_SM,
    K_OCCUPANCY, K_BYTES, K_ADDR, K_DEVICE_TYPE, K_DEVICE_ID, K_TOTAL_ALLOCATED,
    K_TOTAL_RESERVED, K_CALL_STACK, K_NAME, K_SORT_INDEX, K_LABELS, K_INPUT_DIMS,
    K_INPUT_DIMS_LOWER, K_INPUT_TYPE, K_CONCRETE_INPUTS, K_FLOPS, K_PYTHON_ID,
    K_PYTHON_PARENT_ID, N_ARG_KEYS
};
static const ArgKey ARG_KEYS[N_ARG_KEYS] = {
    [K_EXTERNAL_ID] = {A_INT, FIELD(external_id), 0},
    [K_EXTERNAL_ID_LOWER] = {A_INT, FIELD(external_id_lower), 0},
    [K_CORRELATION] = {A_INT, FIELD(correlation), 0},
    [K_DEVICE] = {A_INT, FIELD(device), 0},
    [K_STREAM] = {A_INT, FIELD(stream), 0},
    [K_BLOCKS_PER_SM] = {A_FLOAT, FIELD(blocks_per_sm), 0},
    [K_OCCUPANCY] = {A_FLOAT, FIELD(occupancy), 0},
    [K_BYTES] = {A_MEMORY_FLOAT, FIELD(nbytes), 0},
    [K_ADDR] = {A_MEMORY_INT, FIELD(addr), 0},
    [K_DEVICE_TYPE] = {A_MEMORY_INT, FIELD(device_type), 0},
    [K_DEVICE_ID] = {A_MEMORY_INT, FIELD(device_id), 0},
    [K_TOTAL_ALLOCATED] = {A_MEMORY_FLOAT, FIELD(total_allocated), 0},
    [K_TOTAL_RESERVED] = {A_MEMORY_FLOAT, FIELD(total_reserved), 0},
    [K_CALL_STACK] = {A_STACK, 0, 0},
    [K_NAME] = {A_SCALAR, 0, 0},
    [K_SORT_INDEX] = {A_SCALAR, 0, 0},
    [K_LABELS] = {A_LABELS, 0, 0},
    /* The args a call's work is read from (analysis/roofline/work.py): their raw text is
       hashed into the work signature, so equal calls are found without reading args. */
    [K_INPUT_DIMS] = {A_WORK, 0, 17},
    [K_INPUT_DIMS_LOWER] = {A_WORK, 0, 18},
    [K_INPUT_TYPE] = {A_WORK, 0, 19},
    [K_CONCRETE_INPUTS] = {A_WORK, 0, 20},
    [K_FLOPS] = {A_WORK, 0, 21},
    [K_PYTHON_ID] = {A_INT, FIELD(python_id), 0},
    [K_PYTHON_PARENT_ID] = {A_INT, FIELD(python_parent_id), 0},
};

/* The args key p[0:n], or -1. By length, then the text (compared as constants). */
static int arg_key(const char *p, Py_ssize_t n) {
#define IS(word) (memcmp(p, word, sizeof(word) - 1) == 0)
    switch (n) {
        case 4: return IS("Addr") ? K_ADDR : IS("name") ? K_NAME : -1;
        case 5: return IS("Bytes") ? K_BYTES : IS("flops") ? K_FLOPS : -1;
        case 6: return IS("device") ? K_DEVICE : IS("stream") ? K_STREAM : IS("labels") ? K_LABELS : -1;
        case 9: return IS("Python id") ? K_PYTHON_ID : IS("Device Id") ? K_DEVICE_ID : -1;
        case 10:
            if (p[0] == 'I') return IS("Input Dims") ? K_INPUT_DIMS : IS("Input type") ? K_INPUT_TYPE
                                  : IS("Input dims") ? K_INPUT_DIMS_LOWER : -1;
            return IS("Call stack") ? K_CALL_STACK : IS("sort_index") ? K_SORT_INDEX : -1;
        case 11:
            return IS("External id") ? K_EXTERNAL_ID : IS("correlation") ? K_CORRELATION
                 : IS("external id") ? K_EXTERNAL_ID_LOWER : IS("Device Type") ? K_DEVICE_TYPE : -1;
        case 13: return IS("blocks per SM") ? K_BLOCKS_PER_SM : -1;
        case 14: return IS("Total Reserved") ? K_TOTAL_RESERVED : -1;
        case 15: return IS("Total Allocated") ? K_TOTAL_ALLOCATED : IS("Concrete Inputs") ? K_CONCRETE_INPUTS : -1;
        case 16: return IS("Python parent id") ? K_PYTHON_PARENT_ID : -1;
        case 25: return IS("est. achieved occupancy %") ? K_OCCUPANCY : -1;
        default: return -1;
    }
#undef IS
}

/* One step of the work hash: a word taken in by a multiply and an xorshift. Both are
   one-to-one, so values of one length that differ in one word never collide; values
   that differ in several words may, with 64-bit odds, as with FNV-1a before. */
static INLINE uint64_t work_step(uint64_t h, uint64_t word) {
    h = (h ^ word) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

/* The n (1-8) bytes at p as a little-endian word, zeros above them, on any machine (the
   tests recompute the hash). */
static INLINE uint64_t le_word(const char *p, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)(unsigned char)p[i] << (8 * i);
    return w;
#else
    uint64_t w;
    if (n < 8) return short_word(p + n, (Py_ssize_t)n);
    memcpy(&w, p, 8);
    return w;
#endif
}

/* The hash of a work arg on top of `h`: the key's number (top byte) and the value's
   length, then its raw text 8 bytes a step, the last word padded with zeros. FNV-1a's
   multiply per byte was ~6 % of the scan of an H100 trace (shapes are long). */
static uint64_t work_hash(uint64_t h, int key, const char *p, const char *q) {
    size_t n = (size_t)(q - p);
    h = work_step(h, (uint64_t)(key + 1) << 56 ^ (uint64_t)n);
    for (; n >= 8; p += 8, n -= 8) h = work_step(h, le_word(p, 8));
    return n ? work_step(h, le_word(p, n)) : h;
}

static const char *arg_value(Scan *s, const char *p, const ArgKey *k, Row *row) {
    Lex *lx = &s->lex;
    char *field = (char *)row + k->field;
    switch (k->kind) {
        case A_INT: return int_field(lx, p, (int64_t *)field);
        case A_FLOAT: return float_field(lx, p, NAN, (double *)field);
        case A_MEMORY_INT: row->has_memory = 1; return int_field(lx, p, (int64_t *)field);
        case A_MEMORY_FLOAT: row->has_memory = 1; return float_field(lx, p, NAN, (double *)field);
        case A_STACK: { /* any value; a non-empty string counts */
            const char *q = skip_value(lx, p, 1);
            row->has_stack = q && *p == '"' && q - p > 2;
            return q;
        }
        case A_SCALAR: return checked_scalar(lx, p, 1);
        case A_LABELS: return checked_scalar(lx, p, 0); /* str | None only */
        default: { /* A_WORK */
            const char *q = skip_value(lx, p, 2);
            uint64_t h = row->work_sig ? (uint64_t)row->work_sig : 14695981039346656037ULL;
            if (q) h = work_hash(h, k->work_key, p, q);
            row->work_sig = (int64_t)(h && ~h ? h : 1); /* 0: none, -1: unknown */
            return q;
        }
    }
}

/* One member's key (p at its opening quote; an escaped key is declined as `escaped_why`):
   the key in *key, *n; returns the position of its value. */
static INLINE const char *member_key(Lex *lx, const char *p, const char *escaped_why,
                                     const char **key, Py_ssize_t *n) {
    const char *e = lx->end;
    int escaped = 0;
    if (UNLIKELY(p >= e || *p != '"')) return FAIL(lx, "expected a key");
    *key = p + 1;
    if (!(p = scan_string(lx, p, &escaped))) return NULL;
    if (UNLIKELY(escaped)) return FAIL(lx, escaped_why);
    *n = p - 1 - *key;
    if (LIKELY(p + 1 < e && p[0] == ':' && p[1] == ' ')) { /* `": "` */
        p += 2; /* a blank after it is rare: checked before a loop is entered */
        if (UNLIKELY(p < e && is_ws(*p))) p = skip_ws(p, e);
    } else {
        p = skip_ws(p, e);
        if (p >= e || *p != ':') return FAIL(lx, "expected ':'");
        p = skip_ws(p + 1, e);
    }
    if (p >= e) return FAIL(lx, "missing value");
    return p;
}

/* p at an object's '{': its first key, or past its '}' when it is empty (*closed). */
static inline const char *object_start(Lex *lx, const char *p, int *closed) {
    p = skip_ws(p + 1, lx->end);
    *closed = p < lx->end && *p == '}';
    return *closed ? p + 1 : p;
}

/* Whether key `k` is met for the first time in an object (`seen`: the keys met so far). */
static inline int first_time(uint32_t *seen, int k) {
    if (*seen & (1u << k)) return 0;
    *seen |= 1u << k;
    return 1;
}

/* After a member's value: the next member's key, or past the object's '}' (*closed). */
static INLINE const char *member_end(Lex *lx, const char *p, const char *unterminated, int *closed) {
    const char *e = lx->end;
    if (LIKELY(p + 1 < e && p[0] == ',' && p[1] == ' ' && p + 2 < e && p[2] == '"')) {
        *closed = 0; /* `, "`: the common separator */
        return p + 2;
    }
    p = skip_ws(p, e);
    if (p >= e) return FAIL(lx, unterminated);
    *closed = *p == '}';
    if (*closed) return p + 1;
    if (*p != ',') return FAIL(lx, "expected ','");
    return skip_ws(p + 1, e);
}

/* p at '{' of an event's args. */
static const char *scan_args(Scan *s, const char *p, Row *row) {
    Lex *lx = &s->lex;
    uint32_t seen = 0;
    int closed;
    p = object_start(lx, p, &closed);
    while (!closed) {
        const char *key;
        Py_ssize_t n;
        if (!(p = member_key(lx, p, "an escaped key in args", &key, &n))) return NULL;
        int k = arg_key(key, n);
        if (k >= 0) {
            if (!first_time(&seen, k)) return FAIL(lx, "a key twice in args");
            p = arg_value(s, p, &ARG_KEYS[k], row);
        } else {
            p = skip_value(lx, p, 2);
        }
        if (!p || !(p = member_end(lx, p, "unterminated args", &closed))) return NULL;
    }
    return p;
}

/* ---- events ----------------------------------------------------------------------------- */

enum { E_PH, E_CAT, E_NAME, E_PID, E_TID, E_TS, E_DUR, E_ID, E_BP, E_ARGS, E_OTHER };

static inline int event_key(const char *p, Py_ssize_t n) {
#define IS(word) (memcmp(p, word, sizeof(word) - 1) == 0)
    switch (n) {
        case 2: return IS("ph") ? E_PH : IS("ts") ? E_TS : IS("id") ? E_ID : IS("bp") ? E_BP : E_OTHER;
        case 3: return IS("cat") ? E_CAT : IS("pid") ? E_PID : IS("tid") ? E_TID : IS("dur") ? E_DUR : E_OTHER;
        case 4: return IS("name") ? E_NAME : IS("args") ? E_ARGS : E_OTHER;
        default: return E_OTHER;
    }
#undef IS
}

#ifdef SCAN_LE_WORDS /* little-endian words: the first byte of the text lowest */
/* The word of up to 8 bytes of text `a`..`h` (the rest zero), as a load of them reads. */
#define WORD8(a, b, c, d, e, f, g, h)                                                    \
    ((uint64_t)(unsigned char)(a) | (uint64_t)(unsigned char)(b) << 8 |                  \
     (uint64_t)(unsigned char)(c) << 16 | (uint64_t)(unsigned char)(d) << 24 |           \
     (uint64_t)(unsigned char)(e) << 32 | (uint64_t)(unsigned char)(f) << 40 |           \
     (uint64_t)(unsigned char)(g) << 48 | (uint64_t)(unsigned char)(h) << 56)
#define MASK(n) ((n) == 8 ? ~0ULL : (1ULL << (8 * (n))) - 1)

/* An event's key spelled as torch writes it (`"name": `, p at its quote), read by one load
   and compare instead of a string scan and a lookup: its E_ number, *value past the
   `": `; -1 for any other key or spelling (the general path reads it). The key is plain
   text followed by `": `, so both paths read the same key. */
static INLINE int known_event_key(const char *p, const char *e, const char **value) {
    if (e - p < 8) return -1;
    uint64_t w;
    memcpy(&w, p, 8);
#define KEY2(x, y, k) if ((w & MASK(6)) == WORD8('"', x, y, '"', ':', ' ', 0, 0)) return *value = p + 6, (k)
#define KEY3(x, y, z, k) if ((w & MASK(7)) == WORD8('"', x, y, z, '"', ':', ' ', 0)) return *value = p + 7, (k)
#define KEY4(x, y, z, t, k) if (w == WORD8('"', x, y, z, t, '"', ':', ' ')) return *value = p + 8, (k)
    switch (p[1]) {
        case 'p': KEY2('p', 'h', E_PH); KEY3('p', 'i', 'd', E_PID); break;
        case 'c': KEY3('c', 'a', 't', E_CAT); break;
        case 'n': KEY4('n', 'a', 'm', 'e', E_NAME); break;
        case 't': KEY2('t', 's', E_TS); KEY3('t', 'i', 'd', E_TID); break;
        case 'd': KEY3('d', 'u', 'r', E_DUR); break;
        case 'a': KEY4('a', 'r', 'g', 's', E_ARGS); break;
        case 'i': KEY2('i', 'd', E_ID); break;
        case 'b': KEY2('b', 'p', E_BP); break;
    }
    return -1;
#undef KEY2
#undef KEY3
#undef KEY4
}
#endif

static int code_of(Scan *s, int table, const char *text, Py_ssize_t len, int32_t *out) {
    /* The same token as the last one of this table (a run of events of one thread,
       category, phase): its code without hashing it again. */
    Recent *last = &s->recent[table];
    if (text && len == last->len && last->text && same_bytes(text, last->text, len)) {
        *out = last->code;
        return 1;
    }
    *out = table_code(&s->tables[table], text, len);
    if (*out < 0) s->lex.reason = "out of memory";
    if (text) *last = (Recent){text, len, *out};
    return *out >= 0;
}

/* An interned value: a string, or null where `null_ok`, or an int where `int_ok`. */
static inline const char *interned(Scan *s, const char *p, int table, int null_ok, int int_ok,
                                   int32_t *code) {
    Lex *lx = &s->lex;
    const char *q;
    int escaped = 0;
    int64_t ignored;
    if (*p == '"') q = scan_string(lx, p, &escaped);
    else if (*p == 'n' && null_ok) q = scan_literal(lx, p, "null", 4);
    else if (int_ok && (*p == '-' || is_digit(*p))) q = int_field(lx, p, &ignored);
    else return FAIL(lx, "a value of an unexpected type");
    if (q && !code_of(s, table, p, q - p, code)) return NULL;
    return q;
}

static const char *event_value(Scan *s, const char *p, int key, Row *row, int32_t *codes,
                               const char **args, const char **args_end) {
    Lex *lx = &s->lex;
    switch (key) {
        case E_PH: return interned(s, p, T_PH, 0, 0, &codes[T_PH]);
        case E_CAT: return interned(s, p, T_CAT, 1, 0, &codes[T_CAT]);
        case E_NAME: return interned(s, p, T_NAME, 1, 0, &codes[T_NAME]);
        case E_PID: return interned(s, p, T_PID, 1, 1, &codes[T_PID]);
        case E_TID: return interned(s, p, T_TID, 1, 1, &codes[T_TID]);
        case E_TS: return float_field(lx, p, NAN, &row->ts);
        case E_DUR: return float_field(lx, p, 0.0, &row->dur);
        case E_ID: return int_field(lx, p, &row->id);
        case E_BP: return checked_scalar(lx, p, 0);
        case E_ARGS: {
            const char *q = *p == '{' ? scan_args(s, p, row) : skip_value(lx, p, 1);
            *args = p;
            *args_end = q;
            return q;
        }
        default: return skip_value(lx, p, 1);
    }
}

static inline void row_defaults(Row *row) {
    row->ts = row->blocks_per_sm = row->occupancy = NAN;
    row->nbytes = row->total_allocated = row->total_reserved = NAN;
    row->dur = 0.0;
    row->id = row->external_id = row->external_id_lower = row->correlation = -1;
    row->device = row->stream = row->python_id = row->python_parent_id = -1;
    row->addr = row->device_type = row->device_id = -1;
    row->work_sig = 0;
    row->has_memory = 0;
    row->has_stack = 0;
}

/* Absent string keys: ph reads "", the others None (schema.Event's defaults). */
static int absent_codes(Scan *s, uint32_t seen, int32_t *codes) {
    static const int KEY_OF_TABLE[N_TABLES] = {E_PH, E_NAME, E_CAT, E_PID, E_TID};
    for (int t = 0; t < N_TABLES; t++)
        if (!(seen & (1u << KEY_OF_TABLE[t])) && !code_of(s, t, NULL, 0, &codes[t])) return 0;
    return 1;
}

/* Room for `rows` rows in every column. */
static int reserve_rows(Scan *s, size_t rows) {
    for (int t = 0; t < N_TABLES; t++)
        if (s->codes[t].cap < rows * sizeof(int32_t) && !buf_grow(&s->codes[t], rows * sizeof(int32_t)))
            return 0;
    for (int c = 0; c < N_COLUMNS; c++)
        if (s->columns[c].cap < rows * COLUMNS[c].size && !buf_grow(&s->columns[c], rows * COLUMNS[c].size))
            return 0;
    s->row_cap = rows;
    return 1;
}

/* Room for one more row in every column, grown for many rows at once. */
static inline int reserve_row(Scan *s) {
    size_t rows = (size_t)s->events;
    return LIKELY(rows < s->row_cap) || reserve_rows(s, rows < 512 ? 1024 : 2 * rows);
}

/* The columns' lengths once every row is written. */
static void close_columns(Scan *s) {
    for (int t = 0; t < N_TABLES; t++) s->codes[t].len = (size_t)s->events * sizeof(int32_t);
    for (int c = 0; c < N_COLUMNS; c++) s->columns[c].len = (size_t)s->events * COLUMNS[c].size;
}

/* A double as float32, rounded as numpy's astype(float32) rounds it; past the largest
   float32 (from its rounding midpoint on) infinity, which C leaves undefined for a cast. */
static inline float float32_of(double v) {
    const double midpoint = 0x1.ffffffp127; /* FLT_MAX and half its last place */
    if (v >= midpoint) return (float)INFINITY;
    if (v <= -midpoint) return -(float)INFINITY;
    return (float)v;
}

#define PUT(buf, type, at, value) (((type *)(buf).data)[at] = (type)(value))

/* 1 << c where v lies outside int32 (unsigned arithmetic: no overflow for any int64). */
#define WIDE(c, v) ((uint32_t)((uint64_t)(v) + 0x80000000ULL > 0xFFFFFFFFULL) << (c))

static int put_memory(Scan *s, const Row *row) {
    size_t at = (size_t)s->memory_rows;
    for (int c = 0; c < N_MEMORY; c++)
        if (!buf_reserve(&s->memory[c], MEMORY[c].size)) return 0;
    PUT(s->memory[M_ROW], int64_t, at, s->events);
    PUT(s->memory[M_BYTES], double, at, row->nbytes);
    PUT(s->memory[M_ADDR], int64_t, at, row->addr);
    PUT(s->memory[M_DEVICE_TYPE], int32_t, at, row->device_type); /* as numpy's astype */
    PUT(s->memory[M_DEVICE_ID], int32_t, at, row->device_id);
    PUT(s->memory[M_TOTAL_ALLOCATED], double, at, row->total_allocated);
    PUT(s->memory[M_TOTAL_RESERVED], double, at, row->total_reserved);
    for (int c = 0; c < N_MEMORY; c++) s->memory[c].len += MEMORY[c].size;
    s->memory_rows++;
    return 1;
}

static int emit(Scan *s, const Row *row, const int32_t *codes, const char *args, const char *args_end) {
    size_t at = (size_t)s->events;
    if (!reserve_row(s)) return 0;
    if (args && !buf_put(&s->blob, args, (size_t)(args_end - args))) return 0;
    if (row->has_memory && !put_memory(s, row)) return 0;
    for (int t = 0; t < N_TABLES; t++) PUT(s->codes[t], int32_t, at, codes[t]);
    Buf *col = s->columns;
    int64_t external_id = row->external_id >= 0 ? row->external_id : row->external_id_lower;
    /* Which id columns need int64 in the model, known here at the cost of a compare a
       value, rather than by a min and max pass over each column as it merges. */
    s->wide |= WIDE(C_ID, row->id) | WIDE(C_EXTERNAL_ID, external_id) |
               WIDE(C_CORRELATION, row->correlation) | WIDE(C_STREAM, row->stream) |
               WIDE(C_PYTHON_ID, row->python_id) | WIDE(C_PYTHON_PARENT_ID, row->python_parent_id);
    PUT(col[C_TS], double, at, row->ts);
    PUT(col[C_DUR], double, at, row->dur);
    PUT(col[C_ID], int64_t, at, row->id);
    PUT(col[C_ARGS_END], int64_t, at, s->blob.len);
    PUT(col[C_EXTERNAL_ID], int64_t, at, external_id);
    PUT(col[C_CORRELATION], int64_t, at, row->correlation);
    PUT(col[C_DEVICE], int32_t, at, row->device); /* wraps as numpy's astype(int32) */
    PUT(col[C_STREAM], int64_t, at, row->stream);
    PUT(col[C_BLOCKS_PER_SM], float, at, float32_of(row->blocks_per_sm));
    PUT(col[C_OCCUPANCY], float, at, float32_of(row->occupancy));
    PUT(col[C_HAS_STACK], uint8_t, at, row->has_stack);
    PUT(col[C_WORK_SIG], int64_t, at, row->work_sig);
    PUT(col[C_PYTHON_ID], int64_t, at, row->python_id);
    PUT(col[C_PYTHON_PARENT_ID], int64_t, at, row->python_parent_id);
    s->events++;
    return 1;
}

/* p at '{' of an event. */
static const char *scan_event(Scan *s, const char *p) {
    Lex *lx = &s->lex;
    const char *args = NULL, *args_end = NULL;
    Row row;
    int32_t codes[N_TABLES];
    uint32_t seen = 0;
    row_defaults(&row);
    int closed;
    p = object_start(lx, p, &closed);
    while (!closed) {
        const char *key;
        Py_ssize_t n;
        int k = -1;
#ifdef SCAN_LE_WORDS
        const char *value;
        if ((k = known_event_key(p, lx->end, &value)) >= 0) {
            p = value;
            if (UNLIKELY(p >= lx->end || is_ws(*p))) { /* as member_key reads it */
                p = skip_ws(p, lx->end);
                if (p >= lx->end) return FAIL(lx, "missing value");
            }
        }
#endif
        if (k < 0) {
            if (!(p = member_key(lx, p, "an escaped key in an event", &key, &n))) return NULL;
            k = event_key(key, n);
        }
        if (k != E_OTHER && !first_time(&seen, k)) return FAIL(lx, "a key twice in an event");
        if (!(p = event_value(s, p, k, &row, codes, &args, &args_end))) return NULL;
        if (!(p = member_end(lx, p, "unterminated event", &closed))) return NULL;
    }
    if (!absent_codes(s, seen, codes)) return NULL;
    if (!emit(s, &row, codes, args, args_end)) return FAIL(lx, "out of memory");
    return p;
}

/* Text [p, e): events separated by commas, nothing else (blanks around them). */
static int scan_body(Scan *s, const char *p, const char *e) {
    s->lex.end = e;
    p = skip_ws(p, e);
    if (p == e) return 1;
    for (;;) {
        if (*p != '{') {
            s->lex.reason = "an item that is not an event object";
            return 0;
        }
        if (!(p = scan_event(s, p))) return 0;
        if (LIKELY(p + 2 < e && p[0] == ',' && p[1] == '\n' && p[2] == '{')) { /* `,\n{` */
            p += 2;
            continue;
        }
        p = skip_ws(p, e);
        if (p == e) return 1;
        if (*p != ',') {
            s->lex.reason = "expected ','";
            return 0;
        }
        p = skip_ws(p + 1, e);
        if (p == e) {
            s->lex.reason = "a comma after the last event";
            return 0;
        }
    }
}

/* ---- buffers kept for the next scan --------------------------------------------------- */

/* A scan's buffers become its Blocks, freed once their chunk is merged; the next scans
   take them from here rather than from malloc. Freed, each chunk's megabyte or so of
   columns and args text went back to a thread's arena, which glibc mostly trimmed, and
   the next scan faulted the same amount of fresh pages in again (a 253 MB trace: 8,000
   page faults in the scanning threads). Used with the GIL held only (a Block's dealloc,
   a scan before it lets the GIL go), so no lock. `release_buffers()` frees them all once
   a load ends. */
enum { POOL_MAX = 256 };
#define POOL_MAX_BYTES ((size_t)4 << 20)

typedef struct {
    char *data;
    size_t cap;
} Kept;

static Kept pool[POOL_MAX];
static int pool_count;
static size_t pool_bytes;

/* A kept buffer of at least `need` bytes (the smallest such) as `b`, else a new one. */
static int buf_from_pool(Buf *b, size_t need) {
    int best = -1;
    for (int i = 0; i < pool_count; i++)
        if (pool[i].cap >= need && (best < 0 || pool[i].cap < pool[best].cap)) best = i;
    if (best < 0) return buf_grow(b, need);
    free(b->data);
    *b = (Buf){pool[best].data, 0, pool[best].cap};
    pool_bytes -= pool[best].cap;
    pool[best] = pool[--pool_count];
    return 1;
}

/* Keep `data` for a later scan, or free it when the pool is full. */
static void keep_buffer(char *data, size_t cap) {
    if (!data) return;
    if (pool_count < POOL_MAX && pool_bytes + cap <= POOL_MAX_BYTES) {
        pool[pool_count++] = (Kept){data, cap};
        pool_bytes += cap;
    } else {
        free(data);
    }
}

static PyObject *py_release_buffers(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    while (pool_count) free(pool[--pool_count].data);
    pool_bytes = 0;
    Py_RETURN_NONE;
}

/* Room for `rows` rows in every column and `blob` bytes of args, from kept buffers. */
static int take_buffers(Scan *s, size_t rows, size_t blob) {
    for (int t = 0; t < N_TABLES; t++)
        if (!buf_from_pool(&s->codes[t], rows * sizeof(int32_t))) return 0;
    for (int c = 0; c < N_COLUMNS; c++)
        if (!buf_from_pool(&s->columns[c], rows * COLUMNS[c].size)) return 0;
    s->row_cap = rows;
    return buf_from_pool(&s->blob, blob);
}

/* ---- the Python side ------------------------------------------------------------------- */

/* A buffer the scan wrote, handed to Python as it is: read-only, freed with the object. */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t len;
    size_t cap; /* bytes of `data` (kept for a later scan once freed) */
} Block;

static int block_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    Block *b = (Block *)self;
    return PyBuffer_FillInfo(view, self, b->data ? b->data : (char *)"", b->len, 1, flags);
}

static void block_dealloc(PyObject *self) {
    keep_buffer(((Block *)self)->data, ((Block *)self)->cap);
    Py_TYPE(self)->tp_free(self);
}

static Py_ssize_t block_length(PyObject *self) { return ((Block *)self)->len; }

/* Equal to any bytes-like object with the same bytes (a Chunk's args compare so). */
static PyObject *block_richcompare(PyObject *self, PyObject *other, int op) {
    Py_buffer view;
    if ((op != Py_EQ && op != Py_NE) || !PyObject_CheckBuffer(other)) Py_RETURN_NOTIMPLEMENTED;
    if (PyObject_GetBuffer(other, &view, PyBUF_SIMPLE) < 0) return NULL;
    Block *b = (Block *)self;
    int same = view.len == b->len && (b->len == 0 || memcmp(view.buf, b->data, (size_t)b->len) == 0);
    PyBuffer_Release(&view);
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static PyBufferProcs BLOCK_BUFFER = {block_getbuffer, NULL};
static PySequenceMethods BLOCK_SEQUENCE = {.sq_length = block_length};

static PyTypeObject BlockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kinetoscope.ingest._scan.Block",
    .tp_basicsize = sizeof(Block),
    .tp_dealloc = block_dealloc,
    .tp_as_buffer = &BLOCK_BUFFER,
    .tp_as_sequence = &BLOCK_SEQUENCE,
    .tp_richcompare = block_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A buffer of scanned values (read-only; numpy.frombuffer reads it in place).",
};

/* The Block of `b`'s bytes: its memory changes hands (b is left empty). */
static PyObject *block_of(Buf *b) {
    Block *block = PyObject_New(Block, &BlockType);
    if (!block) return NULL;
    block->data = b->data;
    block->len = (Py_ssize_t)b->len;
    block->cap = b->cap;
    *b = (Buf){0};
    return (PyObject *)block;
}

static void scan_free(Scan *s) {
    for (int t = 0; t < N_TABLES; t++) {
        table_free(&s->tables[t]);
        keep_buffer(s->codes[t].data, s->codes[t].cap);
    }
    for (int c = 0; c < N_COLUMNS; c++) keep_buffer(s->columns[c].data, s->columns[c].cap);
    for (int c = 0; c < N_MEMORY; c++) free(s->memory[c].data);
    keep_buffer(s->blob.data, s->blob.cap);
}

/* The Python value of an interned token; NULL (no exception set) when msgspec would not
   give the same value. */
static PyObject *token_value(int table, const char *p, const Slot *slot, PyObject *decode_escaped) {
    if (!p) {
        if (table == T_PH) return PyUnicode_FromStringAndSize("", 0);
        Py_RETURN_NONE;
    }
    if (*p == 'n') Py_RETURN_NONE;
    if (*p != '"') {
        int64_t v = 0;
        int_value(p, slot->len, &v);
        return PyLong_FromLongLong(v);
    }
    if (memchr(p, '\\', (size_t)slot->len)) {
        PyObject *text = PyBytes_FromStringAndSize(p, slot->len);
        if (!text) return NULL;
        PyObject *value = PyObject_CallOneArg(decode_escaped, text);
        Py_DECREF(text);
        if (value && !PyUnicode_Check(value)) Py_CLEAR(value);
        return value;
    }
    return PyUnicode_DecodeUTF8(p + 1, slot->len - 2, "strict");
}

static PyObject *table_values(Scan *s, int table, PyObject *decode_escaped) {
    Table *t = &s->tables[table];
    PyObject *values = PyList_New(t->count);
    if (!values) return NULL;
    const Slot *slots = (const Slot *)t->order.data;
    for (int32_t i = 0; i < t->count; i++) {
        PyObject *value = token_value(table, slot_text(t, &slots[i]), &slots[i], decode_escaped);
        if (!value) {
            Py_DECREF(values);
            return NULL;
        }
        PyList_SET_ITEM(values, i, value);
    }
    return values;
}

/* dict[key] = value, dropping the caller's reference to value. */
static int set_item(PyObject *dict, const char *key, PyObject *value) {
    if (!value) return 0;
    int failed = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return !failed;
}

static PyObject *blocks_of(Buf *bufs, const ColumnSpec *specs, int count) {
    PyObject *dict = PyDict_New();
    for (int c = 0; dict && c < count; c++) {
        if (!set_item(dict, specs[c].name, block_of(&bufs[c]))) Py_CLEAR(dict);
    }
    return dict;
}

/* The names of the id columns with a value outside int32 (a list). */
static PyObject *wide_columns(const Scan *s) {
    PyObject *wide = PyList_New(0);
    for (int c = 0; wide && c < N_COLUMNS; c++) {
        if (!((s->wide >> c) & 1u)) continue;
        PyObject *name = PyUnicode_FromString(COLUMNS[c].name);
        if (!name || PyList_Append(wide, name) < 0) Py_CLEAR(wide);
        Py_XDECREF(name);
    }
    return wide;
}

static PyObject *scan_result(Scan *s, PyObject *decode_escaped) {
    PyObject *out = PyDict_New(), *tables = PyDict_New(), *codes = PyDict_New();
    int ok = out && tables && codes;
    for (int t = 0; ok && t < N_TABLES; t++) {
        PyObject *values = table_values(s, t, decode_escaped);
        if (!values) {
            ok = 0;
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError) ||
                PyErr_ExceptionMatches(PyExc_ValueError))
                PyErr_Clear(); /* an escape msgspec refuses: its path decides */
            break;
        }
        ok = set_item(tables, TABLE_NAMES[t], values) && set_item(codes, TABLE_NAMES[t], block_of(&s->codes[t]));
    }
    ok = ok && set_item(out, "tables", tables) && set_item(out, "codes", codes);
    tables = codes = NULL;
    ok = ok && set_item(out, "events", PyLong_FromSsize_t(s->events));
    ok = ok && set_item(out, "columns", blocks_of(s->columns, COLUMNS, N_COLUMNS));
    ok = ok && set_item(out, "memory", blocks_of(s->memory, MEMORY, N_MEMORY));
    ok = ok && set_item(out, "args", block_of(&s->blob));
    ok = ok && set_item(out, "wide", wide_columns(s));
    Py_XDECREF(tables);
    Py_XDECREF(codes);
    if (ok) return out;
    Py_XDECREF(out);
    if (PyErr_Occurred()) return NULL;
    return PyUnicode_FromString("a string value msgspec reads differently");
}

static int get_index(PyObject *arg, Py_ssize_t *out) {
    *out = PyLong_AsSsize_t(arg);
    return !(*out == -1 && PyErr_Occurred());
}

/* scan(prefix, block, start, end, decode_escaped) */
static PyObject *py_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer prefix, block;
    Py_ssize_t start, end;
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "scan(prefix, block, start, end, decode_escaped)");
        return NULL;
    }
    if (!get_index(args[2], &start) || !get_index(args[3], &end)) return NULL;
    if (PyObject_GetBuffer(args[0], &prefix, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[1], &block, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&prefix);
        return NULL;
    }
    if (start < 0 || end < start || end > block.len) {
        PyBuffer_Release(&prefix);
        PyBuffer_Release(&block);
        PyErr_SetString(PyExc_ValueError, "scan: start and end must lie in the block");
        return NULL;
    }
    Scan s;
    memset(&s, 0, sizeof s);
    int ok = 1;
    for (int t = 0; t < N_TABLES; t++) ok = ok && table_init(&s.tables[t]);
    /* Room for the rows and args of a typical trace's text at once (grown when short). */
    size_t text = (size_t)(prefix.len + end - start);
    ok = ok && take_buffers(&s, text / 192 + 64, text / 2);
    if (!ok) s.lex.reason = "out of memory";
    if (ok) {
        const char *text = prefix.buf, *body = block.buf;
        Py_BEGIN_ALLOW_THREADS
        ok = scan_body(&s, text, text + prefix.len) && scan_body(&s, body + start, body + end);
        Py_END_ALLOW_THREADS
    }
    if (ok) close_columns(&s);
    PyObject *result = ok ? scan_result(&s, args[4]) : PyUnicode_FromString(s.lex.reason);
    scan_free(&s);
    PyBuffer_Release(&prefix);
    PyBuffer_Release(&block);
    return result;
}

/* ---- a chunk's columns placed in the model's ------------------------------------------ */

/* `place(dst, src, types, lo[, how, populate])` copies each column `src[i]` (n values)
   into the column `dst[i]` (a whole column: a numpy array or a map) from row `lo` on,
   converting integers to a narrower or wider type, in one call that lets the GIL go once
   (numpy's copies let it go and take it back for each column, and the scanning threads
   hold it between: the merging thread then waits for the GIL once a column).
   `types` gives two numpy type characters a column (source, destination). `how[i]`
   (None: a copy) may make a column of integers: an int, added to each value (the args
   offsets); or an int32 buffer, a table each value (int32 codes) is looked up in, as
   numpy's `take(mode="wrap")` does (codes through a chunk's table into the file's).
   `populate`: the destination rows' pages are made present first (MADV_POPULATE_WRITE:
   one call, not a page fault a page; where the system has it). Returns the indexes of
   the columns with a value that does not fit its destination's type: those rows are
   left to be written again (the model builder widens such a column first). */

/* The bytes of a value of numpy type character `c`, and whether it is a signed integer. */
static int type_size(char c, int *is_int) {
    *is_int = 1;
    switch (c) {
    case 'b': return 1;
    case 'h': return 2;
    case 'i': return 4;
    case 'l': case 'q': return 8;
    }
    *is_int = 0;
    switch (c) {
    case 'B': case '?': return 1;
    case 'f': return 4;
    case 'd': return 8;
    }
    return 0;
}

/* Integers of `IN` written as `OUT`: whether all fit (a value that does not differs from
   itself cast back). An OR of the differences, no branch: the loop is vectorized. */
#define CONVERT(IN, OUT)                                                                 \
    do {                                                                                 \
        const IN *restrict from = (const IN *)in;                                        \
        OUT *restrict to = (OUT *)out;                                                   \
        IN differs = 0;                                                                  \
        for (Py_ssize_t i = 0; i < n; i++) {                                             \
            OUT v = (OUT)from[i];                                                        \
            to[i] = v;                                                                   \
            differs |= (IN)v ^ from[i];                                                  \
        }                                                                                \
        return differs == 0;                                                             \
    } while (0)

/* -O3 here: gcc vectorizes these loops only past -O2's cheapest cases (without, 2.5x
   numpy's cast time a value, measured). */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORIZED __attribute__((optimize("O3")))
#else
#define VECTORIZED
#endif

/* Signed integers of `in_size` bytes written as `size` bytes; 0 where one does not fit
   (the rest still written). */
VECTORIZED static int ints_to(char *restrict out, const char *restrict in, Py_ssize_t n,
                              int in_size, int size) {
#define TO(OUT)                                                                          \
    switch (in_size) {                                                                   \
    case 1: CONVERT(int8_t, OUT);                                                        \
    case 2: CONVERT(int16_t, OUT);                                                       \
    case 4: CONVERT(int32_t, OUT);                                                       \
    default: CONVERT(int64_t, OUT);                                                      \
    }
    switch (size) {
    case 1: TO(int8_t);
    case 2: TO(int16_t);
    case 4: TO(int32_t);
    default: TO(int64_t);
    }
#undef TO
}
#undef CONVERT

typedef struct {
    Py_buffer dst, src, table; /* `table`: a lookup's (`table.buf` NULL: none) */
    int src_size, dst_size, ints;
    int64_t offset; /* added to each value */
} Placed;

/* A signed integer of `size` bytes at `p`. */
static INLINE int64_t int_at(const char *p, int size) {
    switch (size) {
    case 1: return *(const int8_t *)p;
    case 2: return *(const int16_t *)p;
    case 4: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}

/* The column's values looked up in its table or offset, as int64 in `tmp` (n values):
   then written as any int64 column is. */
static void derived_values(const Placed *p, Py_ssize_t n, int64_t *tmp) {
    const char *in = p->src.buf;
    if (p->table.buf) {
        const int32_t *table = p->table.buf, *codes = p->src.buf;
        Py_ssize_t len = p->table.len / 4;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t k = codes[i];
            if (k < 0 || k >= len) k = ((k % len) + len) % len; /* numpy's "wrap" */
            tmp[i] = table[k];
        }
        return;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        tmp[i] = (int64_t)((uint64_t)int_at(in + i * p->src_size, p->src_size) + (uint64_t)p->offset);
}

/* The pages of `dst`'s rows [lo, lo + n) made present, where the system can. */
static void populate_rows(const Placed *p, Py_ssize_t lo, Py_ssize_t n) {
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    static uintptr_t page;
    if (!page) page = (uintptr_t)sysconf(_SC_PAGESIZE); /* a race writes the same value */
    uintptr_t from = (uintptr_t)p->dst.buf + (uintptr_t)(lo * p->dst_size);
    uintptr_t to = from + (uintptr_t)(n * p->dst_size);
    from &= ~(page - 1);
    if (to > from) (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE); /* else faults */
#else
    (void)p, (void)lo, (void)n;
#endif
}

/* One column's rows written (without the GIL); 0 where a value does not fit. */
static int place_column(const Placed *p, Py_ssize_t lo, Py_ssize_t n, int64_t *tmp) {
    char *to = (char *)p->dst.buf + lo * p->dst_size;
    if (tmp) {
        derived_values(p, n, tmp);
        return ints_to(to, (const char *)tmp, n, 8, p->dst_size);
    }
    if (p->ints && p->src_size != p->dst_size) return ints_to(to, p->src.buf, n, p->src_size, p->dst_size);
    memcpy(to, p->src.buf, (size_t)(n * p->src_size));
    return 1;
}

/* `how`: None, an int to add, or an int32 table to look each value up in. */
static int placed_how(Placed *p, PyObject *how, char src_type) {
    if (how == Py_None) return 1;
    if (!p->ints) {
        PyErr_SetString(PyExc_ValueError, "place: an offset or a table makes integers only");
        return 0;
    }
    if (PyLong_Check(how)) {
        p->offset = PyLong_AsLongLong(how);
        return !(p->offset == -1 && PyErr_Occurred());
    }
    if (PyObject_GetBuffer(how, &p->table, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return 0;
    if (src_type != 'i' || p->table.itemsize != 4 || !p->table.format ||
        strcmp(p->table.format, "i") != 0 || (p->table.len == 0 && p->src.len > 0)) {
        PyBuffer_Release(&p->table);
        p->table.buf = NULL;
        PyErr_SetString(PyExc_ValueError, "place: a table of int32 values for int32 codes");
        return 0;
    }
    return 1;
}

static void placed_close(Placed *p) {
    PyBuffer_Release(&p->src);
    PyBuffer_Release(&p->dst);
    if (p->table.buf) PyBuffer_Release(&p->table);
}

static int placed_open(Placed *p, PyObject *dst, PyObject *src, char src_type, char dst_type,
                       Py_ssize_t lo, Py_ssize_t *n, PyObject *how) {
    int src_int, dst_int;
    p->src_size = type_size(src_type, &src_int);
    p->dst_size = type_size(dst_type, &dst_int);
    p->ints = src_int && dst_int;
    if (!p->src_size || !p->dst_size || src_int != dst_int ||
        (!p->ints && (src_type != dst_type))) {
        PyErr_Format(PyExc_ValueError, "place: cannot write %c values as %c", src_type, dst_type);
        return 0;
    }
    if (PyObject_GetBuffer(src, &p->src, PyBUF_C_CONTIGUOUS) < 0) return 0;
    if (PyObject_GetBuffer(dst, &p->dst, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&p->src);
        return 0;
    }
    Py_ssize_t rows = p->src.len / p->src_size;
    if (*n < 0) *n = rows;
    if (rows != *n || lo < 0 || p->dst.len / p->dst_size < lo + rows) {
        PyErr_SetString(PyExc_ValueError, "place: the columns' rows do not fit the room");
        placed_close(p);
        return 0;
    }
    if (!placed_how(p, how, src_type)) {
        placed_close(p);
        return 0;
    }
    return 1;
}

/* Each column placed, without the GIL; `fits[c]` 0 where a value does not fit. */
static int place_all(Placed *cols, Py_ssize_t count, Py_ssize_t lo, Py_ssize_t n, int populate,
                     char *fits) {
    int derived = 0;
    for (Py_ssize_t c = 0; c < count; c++) derived |= cols[c].table.buf || cols[c].offset;
    int64_t *tmp = derived && n ? malloc((size_t)n * sizeof(int64_t)) : NULL;
    if (derived && n && !tmp) return 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t c = 0; c < count; c++) {
        Placed *p = &cols[c];
        if (populate) populate_rows(p, lo, n);
        fits[c] = (char)place_column(p, lo, n, p->table.buf || p->offset ? tmp : NULL);
    }
    Py_END_ALLOW_THREADS
    free(tmp);
    return 1;
}

static PyObject *py_place(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Py_ssize_t lo, n = -1;
    PyObject *how = nargs > 4 ? args[4] : Py_None;
    int populate = nargs > 5 ? PyObject_IsTrue(args[5]) : 0;
    if (nargs < 4 || nargs > 6 || !PyList_Check(args[0]) || !PyList_Check(args[1]) ||
        !PyBytes_Check(args[2]) || (how != Py_None && !PyList_Check(how)) || populate < 0) {
        PyErr_SetString(PyExc_TypeError,
                        "place(dst: list, src: list, types: bytes, lo, how: list = None, populate=False)");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(args[0]);
    if (!get_index(args[3], &lo)) return NULL;
    if (PyList_GET_SIZE(args[1]) != count || PyBytes_GET_SIZE(args[2]) != 2 * count ||
        (how != Py_None && PyList_GET_SIZE(how) != count)) {
        PyErr_SetString(PyExc_ValueError, "place: one source, two types and one how a column");
        return NULL;
    }
    const char *types = PyBytes_AS_STRING(args[2]);
    Placed *cols = PyMem_Calloc((size_t)count + 1, sizeof(Placed));
    char *fits = PyMem_Calloc((size_t)count + 1, 1);
    if (!cols || !fits) {
        PyMem_Free(cols);
        PyMem_Free(fits);
        return PyErr_NoMemory();
    }
    Py_ssize_t opened = 0;
    while (opened < count &&
           placed_open(&cols[opened], PyList_GET_ITEM(args[0], opened), PyList_GET_ITEM(args[1], opened),
                       types[2 * opened], types[2 * opened + 1], lo, &n,
                       how == Py_None ? Py_None : PyList_GET_ITEM(how, opened)))
        opened++;
    PyObject *out = NULL;
    if (opened == count && !place_all(cols, count, lo, n, populate, fits)) PyErr_NoMemory();
    else if (opened == count) {
        out = PyList_New(0);
        for (Py_ssize_t c = 0; out && c < count; c++) {
            if (fits[c]) continue;
            PyObject *index = PyLong_FromSsize_t(c);
            if (!index || PyList_Append(out, index) < 0) Py_CLEAR(out);
            Py_XDECREF(index);
        }
    }
    for (Py_ssize_t c = 0; c < opened; c++) placed_close(&cols[c]);
    PyMem_Free(cols);
    PyMem_Free(fits);
    return out;
}

static PyMethodDef METHODS[] = {
    {"scan", (PyCFunction)(void (*)(void))py_scan, METH_FASTCALL,
     "scan(prefix, block, start, end, decode_escaped) -> dict of columns, or a reason (str) "
     "to use msgspec"},
    {"release_buffers", py_release_buffers, METH_NOARGS,
     "release_buffers(): free the buffers kept for later scans (once a load ends)"},
    {"place", (PyCFunction)(void (*)(void))py_place, METH_FASTCALL,
     "place(dst, src, types, lo, how=None, populate=False) -> indexes of the columns with "
     "values that do not fit: each src column (offset or looked up as `how` says) written "
     "into its dst column from row lo on, without the GIL"},
    {"rows", (PyCFunction)(void (*)(void))py_rows, METH_FASTCALL,
     "rows(ph_codes, phase_of, cat, name, kind_table, memory_name, dur, id, ph, kind, dur_out, "
     "flow_id, phases, instant, memory, flow) -> (negative durations, memory rows): a chunk's "
     "phase, kind, clean duration and flow id columns written, without the GIL"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_scan", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scan(void) {
    if (PyType_Ready(&BlockType) < 0) return NULL;
    return PyModule_Create(&MODULE);
}
