/* Optional compiled passes of the host pieces (analysis/critical_path/host.py): on a 1 GB
 * trace its numpy steps made and gathered a dozen arrays of millions of pieces.
 *
 * `piece_bounds(thread, time, p_thread, p_start, p_end, mid) -> int`: boundaries sorted by
 * (thread int64, time float64), n each. Into the outputs (room n - 1 each), per pair of
 * consecutive distinct boundaries of one thread, later than the first: its thread, start,
 * end and midpoint (start + end) / 2. Returns how many; -1 when the boundaries are not
 * sorted (nothing useful written).
 *
 * `containing_sorted(threads, thread_lo, thread_hi, start, end, parent, q_thread, q_time,
 * out) -> bool`: as HostRanges.containing (half-open) for queries sorted by (thread, time)
 * (times snapped as the index's): per query the innermost range of its thread holding its
 * time, -1 none. A moving bound over each thread's sorted starts where `containing`
 * searches them anew per query; the same walk up the parents. False when the queries are
 * not sorted (nothing useful written). Both run without the GIL. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>

#include "../../_cbuf.h"

static PyObject *py_piece_bounds(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer thread, time, p_thread, p_start, p_end, mid;
    if (!PyArg_ParseTuple(args, "y*y*w*w*w*w*", &thread, &time, &p_thread, &p_start, &p_end,
                          &mid)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&thread, sizeof(int64_t));
    const Py_ssize_t room = n > 0 ? n - 1 : 0;
    int ok = cbuf_holds(&time, n, sizeof(double)) &&
             cbuf_holds(&p_thread, room, sizeof(int64_t)) &&
             cbuf_holds(&p_start, room, sizeof(double)) &&
             cbuf_holds(&p_end, room, sizeof(double)) && cbuf_holds(&mid, room, sizeof(double));
    Py_ssize_t count = 0;
    if (ok) {
        const int64_t *th = thread.buf;
        const double *t = time.buf;
        int64_t *out_thread = p_thread.buf;
        double *out_start = p_start.buf, *out_end = p_end.buf, *out_mid = mid.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 1; i < n; i++) {
            if (th[i] != th[i - 1]) {
                if (th[i] < th[i - 1]) {
                    count = -1;
                    break;
                }
                continue;
            }
            if (t[i] < t[i - 1]) {
                count = -1;
                break;
            }
            if (t[i] > t[i - 1]) {  /* equal times: one boundary */
                out_thread[count] = th[i];
                out_start[count] = t[i - 1];
                out_end[count] = t[i];
                out_mid[count] = (t[i - 1] + t[i]) / 2.0;
                count++;
            }
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&thread, &time, &p_thread, &p_start, &p_end, &mid);
    if (!ok) {
        return cbuf_error("piece_bounds: buffers of wrong lengths");
    }
    return PyLong_FromSsize_t(count);
}

/* The [lo, hi) of `key`'s ranges: a binary search over the sorted distinct `threads`. */
static void thread_block(const int64_t *threads, Py_ssize_t n_threads, const int64_t *lo,
                         const int64_t *hi, int64_t key, int64_t *block_lo, int64_t *block_hi) {
    Py_ssize_t a = 0, b = n_threads;
    while (a < b) {
        const Py_ssize_t m = a + (b - a) / 2;
        if (threads[m] < key) {
            a = m + 1;
        } else {
            b = m;
        }
    }
    if (a < n_threads && threads[a] == key) {
        *block_lo = lo[a];
        *block_hi = hi[a];
    } else {
        *block_lo = *block_hi = 0;
    }
}

/* Whether every range position of the index lies in [0, n). */
static int blocks_in_range(const int64_t *lo, const int64_t *hi, Py_ssize_t k, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < k; i++) {
        if (lo[i] < 0 || hi[i] > n || lo[i] > hi[i]) {
            return 0;
        }
    }
    return 1;
}

/* The innermost range holding `t` from `candidate` up its parents (-1: none). */
static inline int64_t walk_up(const double *end, const int64_t *parent, Py_ssize_t n,
                              int64_t candidate, double t) {
    Py_ssize_t steps = 0;
    while (candidate >= 0 && end[candidate] <= t) {
        candidate = parent[candidate];
        if (candidate >= n || ++steps > n) {
            return -1;
        }
    }
    return candidate;
}

static PyObject *py_containing_sorted(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer threads, thread_lo, thread_hi, start, end, parent, q_thread, q_time, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*w*", &threads, &thread_lo, &thread_hi, &start,
                          &end, &parent, &q_thread, &q_time, &out)) {
        return NULL;
    }
    const Py_ssize_t k = cbuf_count(&threads, sizeof(int64_t));
    const Py_ssize_t n = cbuf_count(&start, sizeof(double));
    const Py_ssize_t q = cbuf_count(&q_thread, sizeof(int64_t));
    int ok = cbuf_holds(&thread_lo, k, sizeof(int64_t)) &&
             cbuf_holds(&thread_hi, k, sizeof(int64_t)) && cbuf_holds(&end, n, sizeof(double)) &&
             cbuf_holds(&parent, n, sizeof(int64_t)) && cbuf_holds(&q_time, q, sizeof(double)) &&
             cbuf_holds(&out, q, sizeof(int64_t)) &&
             blocks_in_range(thread_lo.buf, thread_hi.buf, k, n);
    int sorted = 1;
    if (ok) {
        const int64_t *keys = threads.buf, *lo = thread_lo.buf, *hi = thread_hi.buf;
        const int64_t *up = parent.buf, *qt = q_thread.buf;
        const double *s = start.buf, *e = end.buf, *t = q_time.buf;
        int64_t *pos = out.buf;
        Py_BEGIN_ALLOW_THREADS
        int64_t block_lo = 0, block_hi = 0, bound = 0;
        double last = -INFINITY;  /* the thread's latest query time */
        for (Py_ssize_t i = 0; i < q; i++) {
            if (i == 0 || qt[i] != qt[i - 1]) {
                if (i > 0 && qt[i] < qt[i - 1]) {
                    sorted = 0;
                    break;
                }
                thread_block(keys, k, lo, hi, qt[i], &block_lo, &block_hi);
                bound = block_lo;
                last = -INFINITY;
            }
            if (isnan(t[i])) {  /* after no range, as `containing` has it */
                pos[i] = -1;
                continue;
            }
            if (t[i] < last) {
                sorted = 0;
                break;
            }
            last = t[i];
            while (bound < block_hi && s[bound] <= t[i]) {
                bound++;
            }
            pos[i] = bound > block_lo ? walk_up(e, up, n, bound - 1, t[i]) : -1;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&threads, &thread_lo, &thread_hi, &start, &end, &parent, &q_thread, &q_time,
                 &out);
    if (!ok) {
        return cbuf_error("containing_sorted: buffers of wrong lengths");
    }
    return PyBool_FromLong(sorted);
}

static PyMethodDef METHODS[] = {
    {"piece_bounds", py_piece_bounds, METH_VARARGS,
     "piece_bounds(thread, time, p_thread, p_start, p_end, mid): pieces between boundaries."},
    {"containing_sorted", py_containing_sorted, METH_VARARGS,
     "containing_sorted(threads, lo, hi, start, end, parent, q_thread, q_time, out)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_pieces", "Compiled passes of the host pieces.", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pieces(void) { return PyModule_Create(&MODULE); }
