/* Optional compiled scanner: the text of whole trace events becomes columns.
 *
 * `scan(body)` reads `body` as the inside of a JSON array of event objects (the text the
 * decoder hands to msgspec as `[body]`) and returns the raw columns `native_chunk.py`
 * turns into a Chunk, or a short reason string when the text holds anything it does not
 * handle exactly as the msgspec path does (a value of an unexpected type, an escaped key,
 * a duplicate key, a number too big for int64, malformed JSON). The caller then decodes
 * that text with msgspec, so this scanner only has to be right on what it accepts; the
 * tests compare both paths column by column on every corpus trace.
 *
 * The scan runs without the GIL: it builds no Python object. String values are interned
 * by their raw text (quotes included, so "1" and 1 differ); the Python values of the
 * distinct texts are made afterwards, with the GIL.
 */
#include "_scan_json.h"

/* ---- args: the few keys every view needs (schema.CoreArgs), the rest kept raw ---------- */

typedef struct {
    Wide wide[N_WIDE];
    unsigned char has_stack;
} Row;

typedef struct {
    const char *key;
    Py_ssize_t len;
    int column; /* -1: checked only (name, sort_index, labels, Call stack); -5: work arg */
    int is_float;
} ArgKey;

/* schema.CoreArgs, by JSON key. A null reads as the column's missing value (-1, NaN). */
static const ArgKey ARG_KEYS[] = {
    {"External id", 11, C_EXTERNAL_ID, 0},
    {"external id", 11, C_EXTERNAL_ID_LOWER, 0},
    {"correlation", 11, C_CORRELATION, 0},
    {"device", 6, C_DEVICE, 0},
    {"stream", 6, C_STREAM, 0},
    {"blocks per SM", 13, C_BLOCKS_PER_SM, 1},
    {"est. achieved occupancy %", 25, C_OCCUPANCY, 1},
    {"Bytes", 5, C_NBYTES, 1},
    {"Addr", 4, C_ADDR, 0},
    {"Device Type", 11, C_DEVICE_TYPE, 0},
    {"Device Id", 9, C_DEVICE_ID, 0},
    {"Total Allocated", 15, C_TOTAL_ALLOCATED, 1},
    {"Total Reserved", 14, C_TOTAL_RESERVED, 1},
    {"Call stack", 10, -1, 0},
    {"name", 4, -2, 0},
    {"sort_index", 10, -3, 0},
    {"labels", 6, -4, 0},
    /* The args a call's work is read from (analysis/roofline/work.py): their raw text is
       hashed into the work signature, so equal calls are found without reading args. */
    {"Input Dims", 10, -5, 0},
    {"Input dims", 10, -5, 0},
    {"Input type", 10, -5, 0},
    {"Concrete Inputs", 15, -5, 0},
    {"flops", 5, -5, 0},
    /* Ints or null (-1, as a missing key). */
    {"Python id", 9, C_PYTHON_ID, 0},
    {"Python parent id", 16, C_PYTHON_PARENT_ID, 0},
};
#define N_ARG_KEYS ((int)(sizeof ARG_KEYS / sizeof ARG_KEYS[0]))

static int arg_key(const char *p, Py_ssize_t n) {
    for (int i = 0; i < N_ARG_KEYS; i++)
        if (ARG_KEYS[i].len == n && memcmp(ARG_KEYS[i].key, p, n) == 0) return i;
    return -1;
}

/* FNV-1a (64 bit) of the key's index and the value's raw text, on top of `h`. */
static uint64_t work_hash(uint64_t h, int key, const char *p, const char *q) {
    const uint64_t prime = 1099511628211ULL;
    h = (h ^ (uint64_t)(key + 1)) * prime;
    for (; p < q; p++) h = (h ^ (unsigned char)*p) * prime;
    return h;
}

static const char *arg_value(Scan *s, const char *p, const ArgKey *k, Row *row) {
    if (k->column == -5) {
        const char *q = skip_value(s, p, 2);
        uint64_t h = row->wide[C_WORK_SIG].i ? (uint64_t)row->wide[C_WORK_SIG].i
                                              : 14695981039346656037ULL;
        if (q) h = work_hash(h, (int)(k - ARG_KEYS), p, q);
        row->wide[C_WORK_SIG].i = (int64_t)(h && ~h ? h : 1); /* 0: none, -1: unknown */
        return q;
    }
    if (k->column >= 0 && k->is_float) return float_field(s, p, NAN, &row->wide[k->column].f);
    if (k->column >= 0) return int_field(s, p, &row->wide[k->column].i);
    if (k->column == -1) { /* Call stack: any value; a non-empty string counts */
        const char *q = skip_value(s, p, 1);
        row->has_stack = q && *p == '"' && q - p > 2;
        return q;
    }
    return checked_scalar(s, p, k->column != -4); /* labels: str | None only */
}

/* One member's key (p at its opening quote; an escaped key is declined as `escaped_why`):
   the key in *key, *n; returns the position of its value. */
static const char *member_key(Scan *s, const char *p, const char *escaped_why, const char **key,
                              Py_ssize_t *n) {
    const char *e = s->end;
    int escaped = 0;
    if (p >= e || *p != '"') return FAIL(s, "expected a key");
    *key = p + 1;
    if (!(p = scan_string(s, p, &escaped))) return NULL;
    if (escaped) return FAIL(s, escaped_why);
    *n = p - 1 - *key;
    p = skip_ws(p, e);
    if (p >= e || *p != ':') return FAIL(s, "expected ':'");
    p = skip_ws(p + 1, e);
    if (p >= e) return FAIL(s, "missing value");
    return p;
}

/* p at an object's '{': its first key, or past its '}' when it is empty (*closed). */
static const char *object_start(Scan *s, const char *p, int *closed) {
    p = skip_ws(p + 1, s->end);
    *closed = p < s->end && *p == '}';
    return *closed ? p + 1 : p;
}

/* Whether key `k` is met for the first time in an object (`seen`: the keys met so far). */
static int first_time(uint32_t *seen, int k) {
    if (*seen & (1u << k)) return 0;
    *seen |= 1u << k;
    return 1;
}

/* After a member's value: the next member's key, or past the object's '}' (*closed). */
static const char *member_end(Scan *s, const char *p, const char *unterminated, int *closed) {
    const char *e = s->end;
    p = skip_ws(p, e);
    if (p >= e) return FAIL(s, unterminated);
    *closed = *p == '}';
    if (*closed) return p + 1;
    if (*p != ',') return FAIL(s, "expected ','");
    return skip_ws(p + 1, e);
}

/* p at '{' of an event's args. */
static const char *scan_args(Scan *s, const char *p, Row *row) {
    uint32_t seen = 0;
    int closed;
    p = object_start(s, p, &closed);
    while (!closed) {
        const char *key;
        Py_ssize_t n;
        if (!(p = member_key(s, p, "an escaped key in args", &key, &n))) return NULL;
        int k = arg_key(key, n);
        if (k >= 0) {
            if (!first_time(&seen, k)) return FAIL(s, "a key twice in args");
            p = arg_value(s, p, &ARG_KEYS[k], row);
        } else {
            p = skip_value(s, p, 2);
        }
        if (!p || !(p = member_end(s, p, "unterminated args", &closed))) return NULL;
    }
    return p;
}

/* ---- events ----------------------------------------------------------------------------- */

enum { K_PH, K_CAT, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ID, K_BP, K_ARGS, K_OTHER };

static int event_key(const char *p, Py_ssize_t n) {
#define IS(word) (n == (Py_ssize_t)sizeof(word) - 1 && memcmp(p, word, n) == 0)
    switch (n) {
        case 2: return IS("ph") ? K_PH : IS("ts") ? K_TS : IS("id") ? K_ID : IS("bp") ? K_BP : K_OTHER;
        case 3: return IS("cat") ? K_CAT : IS("pid") ? K_PID : IS("tid") ? K_TID : IS("dur") ? K_DUR : K_OTHER;
        case 4: return IS("name") ? K_NAME : IS("args") ? K_ARGS : K_OTHER;
        default: return K_OTHER;
    }
#undef IS
}

/* What a string-valued key may also hold, besides a string. */
static int code_of(Scan *s, int table, Py_ssize_t off, Py_ssize_t len, int32_t *out) {
    *out = table_code(&s->tables[table], s->body, off, len);
    if (*out < 0) s->reason = "out of memory";
    return *out >= 0;
}

/* An interned value: a string, or null where `null_ok`, or an int where `int_ok`. */
static const char *interned(Scan *s, const char *p, int table, int null_ok, int int_ok, int32_t *code) {
    const char *q;
    int escaped = 0;
    int64_t ignored;
    if (*p == '"') q = scan_string(s, p, &escaped);
    else if (*p == 'n' && null_ok) q = scan_literal(s, p, "null", 4);
    else if (int_ok && (*p == '-' || (*p >= '0' && *p <= '9'))) q = int_field(s, p, &ignored);
    else return FAIL(s, "a value of an unexpected type");
    if (q && !code_of(s, table, p - s->body, q - p, code)) return NULL;
    return q;
}

static const char *event_value(Scan *s, const char *p, int key, Row *row, int32_t *codes,
                               const char **args, const char **args_end) {
    switch (key) {
        case K_PH: return interned(s, p, T_PH, 0, 0, &codes[T_PH]);
        case K_CAT: return interned(s, p, T_CAT, 1, 0, &codes[T_CAT]);
        case K_NAME: return interned(s, p, T_NAME, 1, 0, &codes[T_NAME]);
        case K_PID: return interned(s, p, T_PID, 1, 1, &codes[T_PID]);
        case K_TID: return interned(s, p, T_TID, 1, 1, &codes[T_TID]);
        case K_TS: return float_field(s, p, NAN, &row->wide[C_TS].f);
        case K_DUR: return float_field(s, p, 0.0, &row->wide[C_DUR].f);
        case K_ID: return int_field(s, p, &row->wide[C_ID].i);
        case K_BP: return checked_scalar(s, p, 0);
        case K_ARGS: {
            const char *q = *p == '{' ? scan_args(s, p, row) : skip_value(s, p, 1);
            *args = p;
            *args_end = q;
            return q;
        }
        default: return skip_value(s, p, 1);
    }
}

static void row_defaults(Row *row) {
    for (int c = 0; c < N_WIDE; c++) row->wide[c].i = -1;
    row->wide[C_TS].f = NAN;
    row->wide[C_DUR].f = 0.0;
    row->wide[C_ARGS_LEN].i = 0;
    row->wide[C_BLOCKS_PER_SM].f = NAN;
    row->wide[C_OCCUPANCY].f = NAN;
    row->wide[C_NBYTES].f = NAN;
    row->wide[C_TOTAL_ALLOCATED].f = NAN;
    row->wide[C_TOTAL_RESERVED].f = NAN;
    row->wide[C_WORK_SIG].i = 0;
    row->has_stack = 0;
}

/* Absent string keys: ph reads "", the others None (schema.Event's defaults). */
static int absent_codes(Scan *s, uint32_t seen, int32_t *codes) {
    static const int KEY_OF_TABLE[N_TABLES] = {K_PH, K_NAME, K_CAT, K_PID, K_TID};
    for (int t = 0; t < N_TABLES; t++)
        if (!(seen & (1u << KEY_OF_TABLE[t])) && !code_of(s, t, -1, 0, &codes[t])) return 0;
    return 1;
}

/* Room for one more row in every column, grown for many rows at once. */
static int reserve_row(Scan *s) {
    size_t rows = (size_t)s->events, more = rows < 64 ? 64 : rows;
    if (rows < s->row_cap) return 1;
    for (int t = 0; t < N_TABLES; t++)
        if (!buf_reserve(&s->codes[t], more * sizeof(int32_t))) return 0;
    for (int c = 0; c < N_WIDE; c++)
        if (!buf_reserve(&s->wide[c], more * sizeof(Wide))) return 0;
    if (!buf_reserve(&s->has_stack, more)) return 0;
    s->row_cap = rows + more;
    return 1;
}

static int emit(Scan *s, Row *row, int32_t *codes, const char *args, const char *args_end) {
    size_t at = (size_t)s->events;
    if (args) row->wide[C_ARGS_LEN].i = args_end - args;
    if (!reserve_row(s)) return 0;
    for (int t = 0; t < N_TABLES; t++) ((int32_t *)s->codes[t].data)[at] = codes[t];
    for (int c = 0; c < N_WIDE; c++) ((Wide *)s->wide[c].data)[at] = row->wide[c];
    s->has_stack.data[at] = (char)row->has_stack;
    for (int t = 0; t < N_TABLES; t++) s->codes[t].len += sizeof(int32_t);
    for (int c = 0; c < N_WIDE; c++) s->wide[c].len += sizeof(Wide);
    s->has_stack.len++;
    if (args && !buf_put(&s->blob, args, (size_t)(args_end - args))) return 0;
    s->events++;
    return 1;
}

/* p at '{' of an event. */
static const char *scan_event(Scan *s, const char *p) {
    const char *args = NULL, *args_end = NULL;
    Row row;
    int32_t codes[N_TABLES];
    uint32_t seen = 0;
    row_defaults(&row);
    int closed;
    p = object_start(s, p, &closed);
    while (!closed) {
        const char *key;
        Py_ssize_t n;
        if (!(p = member_key(s, p, "an escaped key in an event", &key, &n))) return NULL;
        int k = event_key(key, n);
        if (k != K_OTHER) {
            if (!first_time(&seen, k)) return FAIL(s, "a key twice in an event");
        }
        if (!(p = event_value(s, p, k, &row, codes, &args, &args_end))) return NULL;
        if (!(p = member_end(s, p, "unterminated event", &closed))) return NULL;
    }
    if (!absent_codes(s, seen, codes)) return NULL;
    if (!emit(s, &row, codes, args, args_end)) return FAIL(s, "out of memory");
    return p;
}

/* The whole body: events separated by commas, nothing else. */
static int scan_body(Scan *s) {
    const char *p = skip_ws(s->body, s->end), *e = s->end;
    if (p == e) return 1;
    for (;;) {
        if (*p != '{') {
            s->reason = "an item that is not an event object";
            return 0;
        }
        if (!(p = scan_event(s, p))) return 0;
        p = skip_ws(p, e);
        if (p == e) return 1;
        if (*p != ',') {
            s->reason = "expected ','";
            return 0;
        }
        p = skip_ws(p + 1, e);
        if (p == e) {
            s->reason = "a comma after the last event";
            return 0;
        }
    }
}

/* ---- the Python side ------------------------------------------------------------------- */

static void scan_free(Scan *s) {
    for (int t = 0; t < N_TABLES; t++) {
        table_free(&s->tables[t]);
        free(s->codes[t].data);
    }
    for (int c = 0; c < N_WIDE; c++) free(s->wide[c].data);
    free(s->has_stack.data);
    free(s->blob.data);
}

/* The Python value of an interned token; NULL (no exception set) when msgspec would not
   give the same value. */
static PyObject *token_value(Scan *s, int table, const Slot *slot, PyObject *decode_escaped) {
    if (slot->off < 0) {
        if (table == T_PH) return PyUnicode_FromStringAndSize("", 0);
        Py_RETURN_NONE;
    }
    const char *p = s->body + slot->off;
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
        PyObject *value = token_value(s, table, &slots[i], decode_escaped);
        if (!value) {
            Py_DECREF(values);
            return NULL;
        }
        PyList_SET_ITEM(values, i, value);
    }
    return values;
}

static int set_bytes(PyObject *dict, const char *key, const Buf *b) {
    PyObject *value = PyByteArray_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
    if (!value) return 0;
    int failed = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return !failed;
}

static PyObject *scan_result(Scan *s, PyObject *decode_escaped) {
    PyObject *out = PyDict_New(), *tables = PyDict_New(), *codes = PyDict_New();
    PyObject *columns = PyDict_New(), *n = PyLong_FromSsize_t(s->events), *blob = NULL;
    int ok = out && tables && codes && columns && n;
    for (int t = 0; ok && t < N_TABLES; t++) {
        PyObject *values = table_values(s, t, decode_escaped);
        if (!values) {
            ok = 0;
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError) ||
                PyErr_ExceptionMatches(PyExc_ValueError))
                PyErr_Clear(); /* not UTF-8, or an escape msgspec refuses: its path decides */
            break;
        }
        ok = PyDict_SetItemString(tables, TABLE_NAMES[t], values) == 0;
        Py_DECREF(values);
        ok = ok && set_bytes(codes, TABLE_NAMES[t], &s->codes[t]);
    }
    for (int c = 0; ok && c < N_WIDE; c++) ok = set_bytes(columns, COLUMN_NAMES[c], &s->wide[c]);
    ok = ok && set_bytes(columns, "has_stack", &s->has_stack);
    if (ok) blob = PyBytes_FromStringAndSize(s->blob.data ? s->blob.data : "", (Py_ssize_t)s->blob.len);
    ok = ok && blob && PyDict_SetItemString(out, "events", n) == 0 &&
         PyDict_SetItemString(out, "tables", tables) == 0 &&
         PyDict_SetItemString(out, "codes", codes) == 0 &&
         PyDict_SetItemString(out, "columns", columns) == 0 &&
         PyDict_SetItemString(out, "args", blob) == 0;
    Py_XDECREF(tables);
    Py_XDECREF(codes);
    Py_XDECREF(columns);
    Py_XDECREF(n);
    Py_XDECREF(blob);
    if (ok) return out;
    Py_XDECREF(out);
    if (PyErr_Occurred()) return NULL;
    return PyUnicode_FromString("a string value msgspec reads differently");
}

static PyObject *py_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "scan(body, decode_escaped)");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    Scan s;
    memset(&s, 0, sizeof s);
    s.body = view.buf;
    s.end = s.body + view.len;
    int ok = 1;
    for (int t = 0; t < N_TABLES; t++) ok = ok && table_init(&s.tables[t]);
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        ok = scan_body(&s);
        Py_END_ALLOW_THREADS
    } else {
        s.reason = "out of memory";
    }
    PyObject *result = ok ? scan_result(&s, args[1]) : PyUnicode_FromString(s.reason);
    scan_free(&s);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef METHODS[] = {
    {"scan", (PyCFunction)(void (*)(void))py_scan, METH_FASTCALL,
     "scan(body, decode_escaped) -> dict of raw columns, or a reason (str) to use msgspec"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_scan", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&MODULE); }
