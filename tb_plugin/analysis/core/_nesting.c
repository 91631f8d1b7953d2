/* Optional compiled parent search of ranges nested in time (tree_arrays.previous_reaching).
 *
 * `previous_reaching(values, targets, start, out)`: float64 `values` and `targets`, int64
 * `start` (empty: each position's first candidate is the one before it) and `out`, all
 * of one length (start: that or empty). Per position i, the largest j <= start[i] (or
 * i - 1) with values[j] >= targets[i], or -1, into `out`.
 *
 * The caller guarantees the contract of tree_arrays.previous_reaching: no target above
 * the float just above its own value, and nothing between a position's first candidate
 * and itself reaching its target. A candidate that falls short then jumps to its own
 * answer (all that lies between falls short too): the stack algorithm, one pass in file
 * order, in place of numpy's one pass per level of nesting. Same answers, bit for bit.
 * It runs without the GIL: it builds no Python object.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

static PyObject *py_previous_reaching(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer values, targets, start, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &values, &targets, &start, &out)) {
        return NULL;
    }
    Py_ssize_t n = values.len / (Py_ssize_t)sizeof(double);
    int ok = values.len == n * (Py_ssize_t)sizeof(double) && targets.len == values.len &&
             out.len == n * (Py_ssize_t)sizeof(int64_t) && (start.len == 0 || start.len == out.len);
    if (ok) {
        const double *v = values.buf;
        const double *t = targets.buf;
        const int64_t *s = start.len ? start.buf : NULL;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t j = s ? s[i] : (int64_t)i - 1;
            if (j >= i) {
                j = (int64_t)i - 1; /* outside the contract: checked by the caller */
            }
            const double want = t[i];
            while (j >= 0 && v[j] < want) {
                j = o[j];
            }
            o[i] = j;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&targets);
    PyBuffer_Release(&start);
    PyBuffer_Release(&out);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "previous_reaching: buffers of different lengths");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef METHODS[] = {
    {"previous_reaching", py_previous_reaching, METH_VARARGS,
     "previous_reaching(values, targets, start, out): the parent search, into out."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_nesting", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__nesting(void) { return PyModule_Create(&MODULE); }
