/* `rows(...)`: a scanned chunk's per-row columns made from its raw ones in one pass
 * without the GIL: each row's phase and kind looked up in tables made in Python (the
 * rules stay there, `columns.phase_table` and `columns.kind_table`), its duration
 * cleaned as `columns.clean_durations` does, its flow id (`id` where the kind is FLOW,
 * else -1). Done in numpy, these were ~15 calls a chunk, each of which may hand the GIL
 * to another thread and wait to get it back. Included by `_scan.c`.
 */
#ifndef SCAN_ROWS_H
#define SCAN_ROWS_H

#include <math.h>

/* The buffers of `rows`, in its argument order; `W`: written. */
enum {
    R_PH_CODES, R_PHASE_OF, R_CAT, R_NAME, R_KIND_TABLE, R_MEMORY_NAME, R_DUR, R_ID,
    R_PH_W, R_KIND_W, R_DUR_W, R_FLOW_W, N_ROW_BUFS
};
/* Each buffer's item size and numpy type: a row's (`per_row`) or a table's. */
static const struct {
    int size, per_row, writable;
    char type;
} ROW_BUFS[N_ROW_BUFS] = {
    {4, 1, 0, 'i'}, {1, 0, 0, 'B'}, {4, 1, 0, 'i'}, {4, 1, 0, 'i'}, {1, 0, 0, 'B'}, {1, 0, 0, 'B'},
    {8, 1, 0, 'd'}, {8, 1, 0, 'q'}, {1, 1, 1, 'B'}, {1, 1, 1, 'B'}, {8, 1, 1, 'd'}, {8, 1, 1, 'q'},
};

typedef struct {
    int phases, instant, memory, flow; /* phases: a kind table's columns; the rest: codes */
} RowRules;

/* A code looked up in a table of `len` entries, numpy's way for an index out of range
   ("wrap"; the scanner's codes are always in range). */
static INLINE Py_ssize_t wrapped(Py_ssize_t k, Py_ssize_t len) {
    return k >= 0 && k < len ? k : ((k % len) + len) % len;
}

/* The rows' columns written; the count of negative durations in `counts[0]` and of
   memory rows in `counts[1]`. */
static void row_columns(Py_buffer *b, Py_ssize_t n, const RowRules *r, Py_ssize_t *counts) {
    const int32_t *ph_codes = b[R_PH_CODES].buf, *cat = b[R_CAT].buf, *name = b[R_NAME].buf;
    const uint8_t *phase_of = b[R_PHASE_OF].buf, *kind_table = b[R_KIND_TABLE].buf;
    const uint8_t *memory_name = b[R_MEMORY_NAME].buf;
    const double *dur = b[R_DUR].buf;
    const int64_t *id = b[R_ID].buf;
    uint8_t *ph_w = b[R_PH_W].buf, *kind_w = b[R_KIND_W].buf;
    double *dur_w = b[R_DUR_W].buf;
    int64_t *flow_w = b[R_FLOW_W].buf;
    Py_ssize_t phases = b[R_PHASE_OF].len, cats = r->phases ? b[R_KIND_TABLE].len / r->phases : 0;
    Py_ssize_t names = b[R_MEMORY_NAME].len, negative = 0, memory = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t ph = phase_of[wrapped(ph_codes[i], phases)];
        uint8_t kind = cats ? kind_table[wrapped(cat[i], cats) * r->phases + ph] : 0;
        if (names && ph == r->instant && memory_name[wrapped(name[i], names)]) kind = (uint8_t)r->memory;
        double d = dur[i];
        negative += d < 0;
        ph_w[i] = ph;
        kind_w[i] = kind;
        dur_w[i] = isfinite(d) && !(d < 0) ? d : 0.0;
        flow_w[i] = kind == r->flow ? id[i] : -1;
        memory += kind == r->memory;
    }
    counts[0] = negative;
    counts[1] = memory;
}

/* Each buffer opened and checked (its type, and a row's buffer `n` rows); 0 and an
   error set where one is not, those opened released. */
static int row_bufs_open(PyObject *const *args, Py_buffer *b, Py_ssize_t *n) {
    for (int k = 0; k < N_ROW_BUFS; k++) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (ROW_BUFS[k].writable ? PyBUF_WRITABLE : 0);
        int ok = PyObject_GetBuffer(args[k], &b[k], flags) == 0;
        if (ok) {
            const char *f = b[k].format ? b[k].format : "B";
            char type = f[0] == '<' || f[0] == '=' ? f[1] : f[0];
            if (type == 'l' && ROW_BUFS[k].size == 8) type = 'q'; /* int64 reads 'l' on LP64 */
            if (k == 0) *n = b[k].len / 4;
            ok = b[k].itemsize == ROW_BUFS[k].size && type == ROW_BUFS[k].type &&
                 (!ROW_BUFS[k].per_row || b[k].len / b[k].itemsize == *n);
            if (!ok) {
                PyBuffer_Release(&b[k]);
                PyErr_Format(PyExc_ValueError, "rows: argument %d is not the buffer it should be", k);
            }
        }
        if (!ok) {
            while (k-- > 0) PyBuffer_Release(&b[k]);
            return 0;
        }
    }
    return 1;
}

static PyObject *py_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    RowRules r;
    if (nargs != N_ROW_BUFS + 4) {
        PyErr_SetString(PyExc_TypeError, "rows: 12 buffers, then phases, instant, memory, flow");
        return NULL;
    }
    int *rule[4] = {&r.phases, &r.instant, &r.memory, &r.flow};
    for (int k = 0; k < 4; k++) {
        long v = PyLong_AsLong(args[N_ROW_BUFS + k]);
        if (v == -1 && PyErr_Occurred()) return NULL;
        *rule[k] = (int)v;
    }
    Py_buffer b[N_ROW_BUFS];
    Py_ssize_t n = 0, counts[2];
    if (!row_bufs_open(args, b, &n)) return NULL;
    int empty_table = (n && b[R_PHASE_OF].len == 0) || r.phases < 0 ||
                      (b[R_KIND_TABLE].len && (!r.phases || b[R_KIND_TABLE].len % r.phases));
    if (!empty_table) {
        Py_BEGIN_ALLOW_THREADS
        row_columns(b, n, &r, counts);
        Py_END_ALLOW_THREADS
    }
    for (int k = 0; k < N_ROW_BUFS; k++) PyBuffer_Release(&b[k]);
    if (empty_table) {
        PyErr_SetString(PyExc_ValueError, "rows: a table does not fit its codes");
        return NULL;
    }
    return Py_BuildValue("(nn)", counts[0], counts[1]);
}

#endif
