/* Optional compiled pass of the host pieces (analysis/critical_path/host.py): on a 1 GB
 * trace its numpy steps made and gathered some thirty arrays of millions of pieces.
 *
 * `covered_pieces(thread, time, calls, ranges, names, name_size, step_range,
 * transfer_range, is_sync, out) -> int`: boundaries sorted by (thread int64, time
 * float64), n each; `calls` and `ranges` each a HostRanges as eight arguments (threads,
 * thread_lo, thread_hi, parent, rows: int64; start, end: float64; origin: float); `names` the
 * events' name codes (`name_size` bytes each, 2 or 4); per range (uint8) whether it is a
 * step and whether a host transfer; per name code (uint8) whether a synchronize call.
 * A piece is a pair of consecutive distinct times of a thread. Per piece, the innermost
 * call and range holding its midpoint (snapped to each index's nanoseconds, as
 * HostRanges.containing has it: a moving bound over the thread's sorted starts, then up
 * the parents); kept when a call holds it or a range other than a step does. Into `out`,
 * eight arguments of room n - 1 each (thread: int64; start, end: float64; row, range_pos,
 * runtime, transfer: int64; blocking: uint8), per kept piece host._covered's columns.
 * Returns how many; -1 when the boundaries are not sorted or a call's name code is not
 * one of `is_sync`'s (nothing useful written: the caller takes numpy's steps). Without
 * the GIL. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>

#include "../../_cbuf.h"

#define INDEX_BUFFERS 7

/* One HostRanges, and where a thread's queries are in it. */
typedef struct {
    Py_buffer views[INDEX_BUFFERS]; /* threads, lo, hi, parent, rows, start, end */
    double origin;
    Py_ssize_t n_threads, n;
    int64_t block_lo, block_hi, bound;
} Index;

static inline const int64_t *ints(const Index *ix, int k) { return ix->views[k].buf; }
static inline const double *floats(const Index *ix, int k) { return ix->views[k].buf; }

/* Whether the index's buffers hold what their lengths say, every position in range. */
static int index_valid(Index *ix, Py_ssize_t n_events) {
    ix->n_threads = cbuf_count(&ix->views[0], sizeof(int64_t));
    ix->n = cbuf_count(&ix->views[5], sizeof(double));
    int ok = cbuf_holds(&ix->views[1], ix->n_threads, sizeof(int64_t)) &&
             cbuf_holds(&ix->views[2], ix->n_threads, sizeof(int64_t)) &&
             cbuf_holds(&ix->views[3], ix->n, sizeof(int64_t)) &&
             cbuf_holds(&ix->views[4], ix->n, sizeof(int64_t)) &&
             cbuf_holds(&ix->views[6], ix->n, sizeof(double));
    for (Py_ssize_t i = 0; ok && i < ix->n_threads; i++) {
        ok = ints(ix, 1)[i] >= 0 && ints(ix, 1)[i] <= ints(ix, 2)[i] && ints(ix, 2)[i] <= ix->n;
    }
    for (Py_ssize_t i = 0; ok && i < ix->n; i++) {
        ok = ints(ix, 3)[i] < ix->n && ints(ix, 4)[i] >= 0 && ints(ix, 4)[i] < n_events;
    }
    return ok;
}

/* The thread's ranges [block_lo, block_hi): a binary search over the sorted threads. */
static void index_enter(Index *ix, int64_t thread) {
    const int64_t *keys = ints(ix, 0);
    Py_ssize_t a = 0, b = ix->n_threads;
    while (a < b) {
        const Py_ssize_t m = a + (b - a) / 2;
        if (keys[m] < thread) {
            a = m + 1;
        } else {
            b = m;
        }
    }
    const int found = a < ix->n_threads && keys[a] == thread;
    ix->block_lo = found ? ints(ix, 1)[a] : 0;
    ix->block_hi = found ? ints(ix, 2)[a] : 0;
    ix->bound = ix->block_lo;
}

/* host_ranges.snap_ns's steps, in its order. */
static inline double snap_ns(double t, double origin) {
    double x = t - origin;
    x *= 1000.0;
    x = rint(x);
    x /= 1000.0;
    return x + origin;
}

/* The innermost range of the entered thread holding `t` (half-open), -1 none; `t` no
 * earlier than the thread's previous query. */
static inline int64_t index_find(Index *ix, double t) {
    const double at = snap_ns(t, ix->origin);
    const double *start = floats(ix, 5), *end = floats(ix, 6);
    const int64_t *parent = ints(ix, 3);
    while (ix->bound < ix->block_hi && start[ix->bound] <= at) {
        ix->bound++;
    }
    int64_t found = ix->bound > ix->block_lo ? ix->bound - 1 : -1;
    Py_ssize_t steps = 0;
    while (found >= 0 && end[found] <= at) {
        found = parent[found];
        if (++steps > ix->n) {
            return -1; /* a cycle: not an index's parents */
        }
    }
    return found;
}

static inline int64_t code_at(const void *names, int size, int64_t row) {
    return size == 2 ? ((const int16_t *)names)[row] : ((const int32_t *)names)[row];
}

/* What the pass reads besides the two indexes, and writes. */
typedef struct {
    const int64_t *thread;
    const double *time;
    Py_ssize_t n;
    const void *names;
    int name_size;
    Py_ssize_t n_names;
    const uint8_t *step_range, *transfer_range, *is_sync;
    int64_t *thread_out, *row_out, *range_out, *runtime_out, *transfer_out;
    double *start_out, *end_out;
    uint8_t *blocking_out;
} Pass;

/* Writes piece `count` if a call or a range other than a step covers it; returns the
 * new count, -1 for a name code out of range. */
static Py_ssize_t keep_piece(const Pass *p, Index *calls, Index *ranges, Py_ssize_t count,
                             Py_ssize_t i) {
    const double mid = (p->time[i - 1] + p->time[i]) / 2.0;
    const int64_t call = index_find(calls, mid), range = index_find(ranges, mid);
    const int in_call = call >= 0;
    if (!in_call && (range < 0 || p->step_range[range])) {
        return count;
    }
    const int64_t runtime = in_call ? ints(calls, 4)[call] : -1;
    const int64_t range_row = range >= 0 ? ints(ranges, 4)[range] : -1;
    uint8_t blocking = 0;
    if (in_call) {
        const int64_t code = code_at(p->names, p->name_size, runtime);
        if (code < 0 || code >= p->n_names) {
            return -1;
        }
        blocking = p->is_sync[code];
    }
    p->thread_out[count] = p->thread[i];
    p->start_out[count] = p->time[i - 1];
    p->end_out[count] = p->time[i];
    p->row_out[count] = in_call ? runtime : range_row;
    p->range_out[count] = range;
    p->runtime_out[count] = runtime;
    p->blocking_out[count] = blocking;
    p->transfer_out[count] = !in_call && range >= 0 && p->transfer_range[range] ? range_row : -1;
    return count + 1;
}

static Py_ssize_t run_pass(const Pass *p, Index *calls, Index *ranges) {
    Py_ssize_t count = 0;
    if (p->n > 0) {
        index_enter(calls, p->thread[0]);
        index_enter(ranges, p->thread[0]);
    }
    for (Py_ssize_t i = 1; i < p->n && count >= 0; i++) {
        if (p->thread[i] != p->thread[i - 1]) {
            if (p->thread[i] < p->thread[i - 1]) {
                return -1;
            }
            index_enter(calls, p->thread[i]);
            index_enter(ranges, p->thread[i]);
            continue;
        }
        if (!(p->time[i] >= p->time[i - 1])) {
            return -1; /* unsorted, or NaN */
        }
        if (p->time[i] > p->time[i - 1]) { /* equal times: one boundary */
            count = keep_piece(p, calls, ranges, count, i);
        }
    }
    return count;
}

#define OUTPUTS 8

static PyObject *py_covered_pieces(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer thread, time, names, step_range, transfer_range, is_sync, out[OUTPUTS];
    Index calls, ranges;
    Py_buffer *c = calls.views, *r = ranges.views;
    int name_size;
    /* Flat: buffers in nested tuples overflow PyArg_ParseTuple's list of what to release
     * (it counts the top-level items only). */
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*dy*y*y*y*y*y*y*dy*iy*y*y*w*w*w*w*w*w*w*w*",
                          &thread, &time, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6],
                          &calls.origin, &r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6],
                          &ranges.origin, &names, &name_size, &step_range, &transfer_range,
                          &is_sync, &out[0], &out[1], &out[2], &out[3], &out[4], &out[5],
                          &out[6], &out[7])) {
        return NULL;
    }
    Pass p = {.thread = thread.buf, .time = time.buf, .names = names.buf,
              .name_size = name_size, .step_range = step_range.buf,
              .transfer_range = transfer_range.buf, .is_sync = is_sync.buf};
    p.n = cbuf_count(&thread, sizeof(int64_t));
    p.n_names = cbuf_count(&is_sync, 1);
    const Py_ssize_t room = p.n > 0 ? p.n - 1 : 0;
    const Py_ssize_t n_events = (name_size == 2 || name_size == 4) ? names.len / name_size : 0;
    int ok = cbuf_holds(&time, p.n, sizeof(double)) && n_events * name_size == names.len &&
             index_valid(&calls, n_events) && index_valid(&ranges, n_events) &&
             cbuf_holds(&step_range, ranges.n, 1) && cbuf_holds(&transfer_range, ranges.n, 1) &&
             cbuf_holds(&out[7], room, 1);
    for (int k = 0; ok && k < OUTPUTS - 1; k++) {
        ok = cbuf_holds(&out[k], room, k == 1 || k == 2 ? sizeof(double) : sizeof(int64_t));
    }
    Py_ssize_t count = -1;
    if (ok) {
        p.thread_out = out[0].buf;
        p.start_out = out[1].buf;
        p.end_out = out[2].buf;
        p.row_out = out[3].buf;
        p.range_out = out[4].buf;
        p.runtime_out = out[5].buf;
        p.transfer_out = out[6].buf;
        p.blocking_out = out[7].buf;
        Py_BEGIN_ALLOW_THREADS
        count = run_pass(&p, &calls, &ranges);
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&thread, &time, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &r[0], &r[1],
                 &r[2], &r[3], &r[4], &r[5], &r[6], &names, &step_range, &transfer_range,
                 &is_sync, &out[0], &out[1], &out[2], &out[3], &out[4], &out[5], &out[6],
                 &out[7]);
    if (!ok) {
        return cbuf_error("covered_pieces: buffers of wrong lengths or rows out of range");
    }
    return PyLong_FromSsize_t(count);
}

static PyMethodDef METHODS[] = {
    {"covered_pieces", py_covered_pieces, METH_VARARGS,
     "covered_pieces(thread, time, calls, ranges, names, name_size, step_range, "
     "transfer_range, is_sync, out): the host pieces a call or range covers."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_pieces", "Compiled pass of the host pieces.", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pieces(void) { return PyModule_Create(&MODULE); }
