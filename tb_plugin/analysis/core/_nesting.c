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

#include <math.h>
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

/* The latest position in [first, p] whose value reaches `want`, or -1: jumps along the
 * answers of the positions before (`reach`), valid as in previous_reaching. */
static inline int64_t latest_reaching(const double *value, const int64_t *reach, int64_t first,
                                      int64_t p, double want) {
    while (p >= first && value[p] < want) {
        p = reach[p];
    }
    return p >= first ? p : -1;
}

/* `lane_crossings(new_lane, start, end, tol, out)`: the test of health/nesting.py on
 * slices sorted by (lane, start, longer first, file order), `new_lane[i]` (uint8) where
 * a lane begins; per slice whether it crosses an earlier one of its lane, into `out`
 * (uint8). In order, so whether a slice that ends a walk crosses is known when asked:
 * the walk goes on before it exactly when the numpy rounds would. */
static PyObject *py_lane_crossings(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer new_lane, start, end, out;
    double tol;
    if (!PyArg_ParseTuple(args, "y*y*y*dw*", &new_lane, &start, &end, &tol, &out)) {
        return NULL;
    }
    Py_ssize_t n = new_lane.len;
    int ok = start.len == n * (Py_ssize_t)sizeof(double) && end.len == start.len && out.len == n;
    double *value = NULL;
    int64_t *reach = NULL;
    if (ok && n > 0) {
        value = PyMem_RawMalloc((size_t)n * sizeof(double));
        reach = PyMem_RawMalloc((size_t)n * sizeof(int64_t));
        if (value == NULL || reach == NULL) {
            PyMem_RawFree(value);
            PyMem_RawFree(reach);
            PyBuffer_Release(&new_lane);
            PyBuffer_Release(&start);
            PyBuffer_Release(&end);
            PyBuffer_Release(&out);
            return PyErr_NoMemory();
        }
    }
    if (ok && n > 0) {
        const uint8_t *lane_begins = new_lane.buf;
        const double *s = start.buf;
        const double *e = end.buf;
        uint8_t *crossing = out.buf;
        Py_BEGIN_ALLOW_THREADS
        int64_t first = 0;
        for (int64_t i = 0; i < (int64_t)n; i++) {
            if (lane_begins[i]) {
                first = i;
            }
            const double low = s[i] + tol;
            const double high = e[i] - tol;
            value[i] = e[i] >= low ? e[i] : low;
            const double want = nextafter(low, INFINITY); /* ending after low */
            int64_t at = latest_reaching(value, reach, first, i - 1, want);
            reach[i] = at;
            crossing[i] = 0;
            if (!(high > low)) {
                continue; /* a shorter slice crosses nothing */
            }
            while (at >= 0) {
                if (e[at] < high) {
                    crossing[i] = 1; /* a witness */
                    break;
                }
                if (!(e[at] < e[i]) && !crossing[at]) {
                    break; /* ends no earlier, and crosses nothing itself */
                }
                at = latest_reaching(value, reach, first, at - 1, want);
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(value);
    PyMem_RawFree(reach);
    PyBuffer_Release(&new_lane);
    PyBuffer_Release(&start);
    PyBuffer_Release(&end);
    PyBuffer_Release(&out);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "lane_crossings: buffers of different lengths");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef METHODS[] = {
    {"lane_crossings", py_lane_crossings, METH_VARARGS,
     "lane_crossings(new_lane, start, end, tol, out): the overlap test, into out."},
    {"previous_reaching", py_previous_reaching, METH_VARARGS,
     "previous_reaching(values, targets, start, out): the parent search, into out."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_nesting", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__nesting(void) { return PyModule_Create(&MODULE); }
