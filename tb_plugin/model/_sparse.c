/* Optional compiled read of a sparse column (model/sparse_column.py SparseColumn.take).
 *
 * `take(rows, row_size, words, before, values, fill, out) -> bool`: `rows` (signed, 4 or
 * 8 bytes, `row_size`) the model rows asked; `words` (uint64) a bit per row, set where the
 * row has a value; `before` (int64) per word the rows with a value before it; `values`
 * the values of the rows that have one, in row order, items of `fill`'s size (1, 2, 4 or
 * 8 bytes); `fill` the bytes of the missing value. Per row asked, into `out` (one item
 * each): its value, found at before[word] + the set bits of its word below it, or `fill`.
 * The bytes numpy's steps in SparseColumn.take copy, in one pass in place of a dozen.
 * False (out unspecified) where a row falls outside the bits or a place outside
 * `values`: the caller uses numpy. It runs without the GIL: it builds no Python object.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "../_cbuf.h"

static inline int64_t set_bits(uint64_t word) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(word);
#else
    int64_t count = 0;
    for (; word; word &= word - 1) {
        count++;
    }
    return count;
#endif
}

/* One item of `size` bytes from `from` to `to`: a fixed-size copy the compiler inlines. */
static inline void copy_item(char *to, const char *from, Py_ssize_t size) {
    switch (size) {
    case 8:
        memcpy(to, from, 8);
        break;
    case 4:
        memcpy(to, from, 4);
        break;
    case 2:
        memcpy(to, from, 2);
        break;
    default:
        *to = *from;
    }
}

static PyObject *py_take(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer rows, words, before, values, fill, out;
    int row_size;
    if (!PyArg_ParseTuple(args, "y*iy*y*y*y*w*", &rows, &row_size, &words, &before, &values,
                          &fill, &out)) {
        return NULL;
    }
    const Py_ssize_t item = fill.len;
    const Py_ssize_t n_words = cbuf_count(&words, sizeof(uint64_t));
    const Py_ssize_t n = row_size > 0 ? rows.len / row_size : 0;
    int ok = (row_size == 4 || row_size == 8) && cbuf_holds(&rows, n, (size_t)row_size) &&
             (item == 1 || item == 2 || item == 4 || item == 8) &&
             cbuf_holds(&words, n_words, sizeof(uint64_t)) &&
             cbuf_holds(&before, n_words, sizeof(int64_t)) && values.len % item == 0 &&
             cbuf_holds(&out, n, (size_t)item);
    int inside = ok;
    if (ok) {
        const uint64_t *bits = words.buf;
        const int64_t *ahead = before.buf;
        const char *value = values.buf, *missing = fill.buf;
        const int64_t n_values = values.len / item;
        char *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t row =
                row_size == 4 ? ((const int32_t *)rows.buf)[i] : ((const int64_t *)rows.buf)[i];
            if (row < 0 || (row >> 6) >= n_words) {
                inside = 0;
                break;
            }
            const uint64_t word = bits[row >> 6];
            const int shift = (int)(row & 63);
            if (!((word >> shift) & 1)) {
                copy_item(o + i * item, missing, item);
                continue;
            }
            const int64_t place = ahead[row >> 6] + set_bits(word & ((UINT64_C(1) << shift) - 1));
            if (place >= n_values) {
                inside = 0;
                break;
            }
            copy_item(o + i * item, value + place * item, item);
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&rows, &words, &before, &values, &fill, &out);
    return ok ? PyBool_FromLong(inside) : cbuf_error("take: buffers of wrong lengths");
}

static PyMethodDef METHODS[] = {
    {"take", py_take, METH_VARARGS,
     "take(rows, row_size, words, before, values, fill, out): a sparse column's values."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_sparse", "Compiled read of a sparse column.", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__sparse(void) { return PyModule_Create(&MODULE); }
