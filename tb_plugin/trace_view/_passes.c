/* Optional compiled passes of the trace view's window answers: the counter series
 * (trace_view/counters.py) and the order and dominant names of the density blocks
 * (trace_view/window.py). Each gives numpy's answer bit for bit (tests/test_compiled_window.py
 * compares them) and runs without the GIL: it builds no Python object.
 *
 * `union_fraction(starts, ends, coarse_starts, coarse_ends, prefix, edges, width, out)`:
 * float64 arrays; `starts`, `ends` the merged intervals of an IntervalUnion (sorted,
 * disjoint), the coarse ones every COARSE-th of them, `prefix` their
 * prefix lengths (one longer), `edges` the buckets' edges (sorted, one longer than
 * `out`). Per bucket: the length of the union inside it over `width`, clipped to [0, 1],
 * into `out`: IntervalUnion.covered's arithmetic, in its order, so bit for bit numpy's.
 *
 * `sample_levels(times, coarse, samples, fine, blocks, edges, out)`: float64; `times`
 * sorted, `coarse` every COARSE-th time,
 * `fine` and `blocks` the maxima of each FINE and each BLOCK samples. Per bucket [edges[i], edges[i + 1]): the sample in
 * force at its start (the last at or before it, 0 when none), raised to the highest
 * sample inside it (np.maximum's rule: a NaN wins; whole blocks read as their maxima).
 *
 * `linspace` and `merge_runs` are the edges and the run-length merge around them.
 *
 * The two series walk the buckets in order with one forward pointer each (edges are
 * sorted).
 *
 * `merge_order(group, start, split, out) -> bool`: int64 `group`, float64 `start`, int64
 * `out`; the records [0, split) and [split, n) each sorted by (group, start). Into `out`
 * the order of np.lexsort((start, group)) (stable: the first part first on equal keys),
 * one merge; False (nothing written) when a part is not sorted or a start is NaN.
 *
 * `segment_search(values, lo, hi, target, strict, out) -> bool`: float64 `values` and
 * `target`, int64 `lo`, `hi`, `out` of one length. Per segment [lo_i, hi_i) (sorted
 * within it) the first position whose value is > target_i (strict) or >= target_i, hi_i
 * when none: np.searchsorted's side "right" or "left" in the segment, with its order (a
 * NaN last). False (nothing written) when a segment is reversed or outside `values`.
 *
 * `heaviest(first, weight, out)`: int64 `first` (where each block begins, ascending,
 * first[0] == 0), float64 `weight`. Per block the last position of its greatest weight
 * (a NaN is greatest): what the last of np.lexsort((weight, block_id)) in a block is.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>

#include "../_cbuf.h"

#define BLOCK 64 /* samples a block of counters.block_maxima */
#define FINE 8   /* samples a block of counters.fine_maxima */
#define COARSE 64 /* values apart in the coarse copies of times, starts and ends */

/* np.maximum on two float64: a NaN on either side wins, else the larger (the first on a
 * tie). */
static inline double np_maximum(double a, double b) {
    if (isnan(a)) {
        return a;
    }
    if (isnan(b)) {
        return b;
    }
    return a >= b ? a : b;
}

/* First position in [lo, hi) whose value is > x (right) or >= x (left), hi when none. */
static inline Py_ssize_t bisect_bound(const double *v, Py_ssize_t lo, Py_ssize_t hi, double x,
                                      int right) {
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (right ? v[mid] <= x : v[mid] < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* First position in [lo, n) whose value is > x (right) or >= x (left), from lo on. */
static inline Py_ssize_t forward_bound(const double *v, Py_ssize_t lo, Py_ssize_t n, double x,
                                       int right) {
    Py_ssize_t step = 1, hi = lo;
    /* Gallop: buckets are narrow next to the data, so the answer is usually near. */
    while (hi < n && (right ? v[hi] <= x : v[hi] < x)) {
        lo = hi + 1;
        hi = lo + step;
        step *= 2;
    }
    return bisect_bound(v, lo, hi > n ? n : hi, x, right);
}

/* forward_bound's answer, found first among every COARSE-th value (`coarse[k]` is
 * `v[k * COARSE]`) and then inside one run of COARSE values: a wide bucket's search reads
 * a few cache lines of `coarse` and one run, not a line a probe across the bucket. */
static inline Py_ssize_t coarse_bound(const double *v, const double *coarse, Py_ssize_t lo,
                                      Py_ssize_t n, double x, int right) {
    if (lo >= n || !(right ? v[lo] <= x : v[lo] < x)) {
        return lo;
    }
    const Py_ssize_t runs = (n + COARSE - 1) / COARSE;
    const Py_ssize_t k = forward_bound(coarse, lo / COARSE + 1, runs, x, right);
    const Py_ssize_t from = (k - 1) * COARSE > lo ? (k - 1) * COARSE : lo; /* v[from] passes */
    return bisect_bound(v, from + 1, k < runs ? k * COARSE : n, x, right);
}

static PyObject *py_union_fraction(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer starts, ends, coarse_s, coarse_e, prefix, edges, out;
    double width;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*dw*", &starts, &ends, &coarse_s, &coarse_e, &prefix,
                          &edges, &width, &out)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&starts, sizeof(double));
    Py_ssize_t m = cbuf_count(&out, sizeof(double));
    int ok = n > 0 && cbuf_holds(&starts, n, sizeof(double)) && ends.len == starts.len &&
             cbuf_holds(&coarse_s, (n + COARSE - 1) / COARSE, sizeof(double)) &&
             coarse_e.len == coarse_s.len &&
             cbuf_holds(&prefix, n + 1, sizeof(double)) &&
             cbuf_holds(&out, m, sizeof(double)) &&
             cbuf_holds(&edges, m + 1, sizeof(double));
    if (ok) {
        const double *s = starts.buf, *e = ends.buf, *p = prefix.buf, *edge = edges.buf;
        const double *cs = coarse_s.buf, *ce = coarse_e.buf;
        double *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t first = 0, last = 0;
        for (Py_ssize_t i = 0; i < m; i++) {
            const double lo = edge[i], hi = edge[i + 1];
            first = coarse_bound(e, ce, first, n, lo, 1); /* first interval ending after lo */
            last = coarse_bound(s, cs, last, n, hi, 0);   /* intervals starting before hi */
            double total = p[last > first ? last : first] - p[first];
            if (last > first) {
                const Py_ssize_t fi = first < n - 1 ? first : n - 1;
                const Py_ssize_t li = last - 1 > 0 ? last - 1 : 0;
                total -= np_maximum(lo - s[fi], 0.0);
                total -= np_maximum(e[li] - hi, 0.0);
            }
            double v = np_maximum(total, 0.0) / width;
            /* np.clip(v, 0, 1): a NaN stays, -0.0 becomes 0.0 */
            if (!isnan(v)) {
                v = v > 0.0 ? v : 0.0;
                v = v < 1.0 ? v : 1.0;
            }
            o[i] = v;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&starts, &ends, &coarse_s, &coarse_e, &prefix, &edges, &out);
    return cbuf_none_or_error(ok, "union_fraction: buffers of wrong lengths");
}

/* max(v[lo:hi]) for lo < hi: samples up to a FINE boundary, the maxima of whole blocks of
 * FINE samples (`fine`) up to a BLOCK boundary, of whole blocks of BLOCK samples
 * (`blocks`, counters.block_maxima), then of FINE blocks and samples again: at most
 * 2 * (FINE - 1) samples and 2 * (BLOCK / FINE - 1) fine blocks read besides the blocks. */
static double range_highest(const double *v, const double *fine, const double *blocks,
                            Py_ssize_t lo, Py_ssize_t hi) {
    double highest = v[lo];
    Py_ssize_t j = lo + 1;
    while (j < hi && j % FINE) {
        highest = np_maximum(highest, v[j++]);
    }
    while (j + FINE <= hi && j % BLOCK) {
        highest = np_maximum(highest, fine[j / FINE]);
        j += FINE;
    }
    while (j + BLOCK <= hi) {
        highest = np_maximum(highest, blocks[j / BLOCK]);
        j += BLOCK;
    }
    while (j + FINE <= hi) {
        highest = np_maximum(highest, fine[j / FINE]);
        j += FINE;
    }
    while (j < hi) {
        highest = np_maximum(highest, v[j++]);
    }
    return highest;
}

static PyObject *py_sample_levels(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer times, coarse, samples, fine, blocks, edges, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*", &times, &coarse, &samples, &fine, &blocks,
                          &edges, &out)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&times, sizeof(double));
    Py_ssize_t m = cbuf_count(&out, sizeof(double));
    int ok = cbuf_holds(&times, n, sizeof(double)) && samples.len == times.len &&
             cbuf_holds(&coarse, (n + COARSE - 1) / COARSE, sizeof(double)) &&
             cbuf_holds(&fine, (n + FINE - 1) / FINE, sizeof(double)) &&
             cbuf_holds(&blocks, (n + BLOCK - 1) / BLOCK, sizeof(double)) &&
             cbuf_holds(&out, m, sizeof(double)) &&
             cbuf_holds(&edges, m + 1, sizeof(double));
    if (ok) {
        const double *t = times.buf, *c = coarse.buf, *v = samples.buf, *edge = edges.buf;
        double *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t at = 0;
        for (Py_ssize_t i = 0; i < m; i++) {
            at = coarse_bound(t, c, at, n, edge[i], 0); /* first sample at or after the start */
            Py_ssize_t after = at;                    /* first sample after the start */
            while (after < n && t[after] == edge[i]) {
                after++;
            }
            double value = after > 0 ? v[after - 1] : 0.0;
            const Py_ssize_t stop = coarse_bound(t, c, at, n, edge[i + 1], 0);
            if (stop > at) {
                value = np_maximum(value, range_highest(v, fine.buf, blocks.buf, at, stop));
            }
            o[i] = value;
            at = stop;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&times, &coarse, &samples, &fine, &blocks, &edges, &out);
    return cbuf_none_or_error(ok, "sample_levels: buffers of wrong lengths");
}

/* `linspace(t0, t1, out)`: np.linspace(t0, t1, len(out)) for len(out) >= 2 and a step
 * that is not zero (the caller's test): i * step + t0, two roundings as numpy's, the last
 * edge t1 itself. */
static PyObject *py_linspace(PyObject *Py_UNUSED(self), PyObject *args) {
    double t0, t1;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "ddw*", &t0, &t1, &out)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&out, sizeof(double));
    double *o = out.buf;
    if (n >= 2) {
        const double step = (t1 - t0) / (double)(n - 1);
        for (Py_ssize_t i = 0; i < n - 1; i++) {
            const double at = (double)i * step;
            o[i] = at + t0;
        }
        o[n - 1] = t1;
    }
    CBUF_RELEASE(&out);
    Py_RETURN_NONE;
}

/* `merge_runs(edges, values, starts_out, values_out) -> count`: of each run of equal
 * values (`!=`: a NaN starts a run) its first bucket's start and value, in order. */
static PyObject *py_merge_runs(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer edges, values, starts_out, values_out;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &edges, &values, &starts_out, &values_out)) {
        return NULL;
    }
    Py_ssize_t m = cbuf_count(&values, sizeof(double));
    Py_ssize_t k = 0;
    int ok = cbuf_holds(&values, m, sizeof(double)) && edges.len >= values.len &&
             starts_out.len >= values.len && values_out.len >= values.len;
    if (ok) {
        const double *e = edges.buf, *v = values.buf;
        double *so = starts_out.buf, *vo = values_out.buf;
        for (Py_ssize_t i = 0; i < m; i++) {
            if (i == 0 || v[i] != v[i - 1]) {
                so[k] = e[i];
                vo[k] = v[i];
                k++;
            }
        }
    }
    CBUF_RELEASE(&edges, &values, &starts_out, &values_out);
    return ok ? PyLong_FromSsize_t(k) : cbuf_error("merge_runs: buffers of wrong lengths");
}

/* a < b in np.sort's order of float64: a NaN after every number. */
static inline int sort_less(double a, double b) { return a < b || (isnan(b) && !isnan(a)); }

static PyObject *py_segment_search(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer values, lo, hi, target, out;
    int strict;
    if (!PyArg_ParseTuple(args, "y*y*y*y*pw*", &values, &lo, &hi, &target, &strict, &out)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&values, sizeof(double));
    Py_ssize_t m = cbuf_count(&out, sizeof(int64_t));
    int ok = cbuf_holds(&values, n, sizeof(double)) &&
             cbuf_holds(&out, m, sizeof(int64_t)) && lo.len == out.len &&
             hi.len == out.len && cbuf_holds(&target, m, sizeof(double));
    const int64_t *a = lo.buf, *b = hi.buf;
    int valid = ok; /* segments inside the values, none reversed: else False, nothing written */
    for (Py_ssize_t i = 0; valid && i < m; i++) {
        valid = a[i] >= 0 && a[i] <= b[i] && b[i] <= n;
    }
    if (valid) {
        const double *v = values.buf, *t = target.buf;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            int64_t l = a[i], h = b[i];
            const double want = t[i];
            while (l < h) {
                const int64_t mid = l + (h - l) / 2;
                /* right: past values <= want; left: past values < want */
                if (strict ? !sort_less(want, v[mid]) : sort_less(v[mid], want)) {
                    l = mid + 1;
                } else {
                    h = mid;
                }
            }
            o[i] = l;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&values, &lo, &hi, &target, &out);
    return ok ? PyBool_FromLong(valid) : cbuf_error("segment_search: buffers of wrong lengths");
}

/* Whether records [lo, hi) are sorted by (group, start) without a NaN start. */
static int sorted_part(const int64_t *g, const double *s, Py_ssize_t lo, Py_ssize_t hi) {
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (isnan(s[i])) {
            return 0;
        }
        if (i > lo && (g[i] < g[i - 1] || (g[i] == g[i - 1] && s[i] < s[i - 1]))) {
            return 0;
        }
    }
    return 1;
}

static PyObject *py_merge_order(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer group, start, out;
    Py_ssize_t split;
    if (!PyArg_ParseTuple(args, "y*y*nw*", &group, &start, &split, &out)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&start, sizeof(double));
    int ok = cbuf_holds(&start, n, sizeof(double)) &&
             cbuf_holds(&group, n, sizeof(int64_t)) &&
             cbuf_holds(&out, n, sizeof(int64_t)) && split >= 0 && split <= n;
    int merged = 0;
    if (ok) {
        const int64_t *g = group.buf;
        const double *s = start.buf;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        if (sorted_part(g, s, 0, split) && sorted_part(g, s, split, n)) {
            Py_ssize_t a = 0, b = split, k = 0;
            while (a < split && b < n) {
                /* b goes first only when strictly before a: equal keys keep part order */
                if (g[b] < g[a] || (g[b] == g[a] && s[b] < s[a])) {
                    o[k++] = b++;
                } else {
                    o[k++] = a++;
                }
            }
            while (a < split) {
                o[k++] = a++;
            }
            while (b < n) {
                o[k++] = b++;
            }
            merged = 1;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&group, &start, &out);
    return ok ? PyBool_FromLong(merged) : cbuf_error("merge_order: buffers of wrong lengths");
}

static PyObject *py_heaviest(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer first, weight, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &first, &weight, &out)) {
        return NULL;
    }
    Py_ssize_t nb = cbuf_count(&first, sizeof(int64_t));
    Py_ssize_t n = cbuf_count(&weight, sizeof(double));
    int ok = cbuf_holds(&first, nb, sizeof(int64_t)) &&
             cbuf_holds(&weight, n, sizeof(double)) &&
             cbuf_holds(&out, nb, sizeof(int64_t));
    const int64_t *f = first.buf;
    for (Py_ssize_t j = 0; ok && j < nb; j++) {
        ok = f[j] >= 0 && f[j] < n && (j == 0 ? f[j] == 0 : f[j] > f[j - 1]);
    }
    if (ok) {
        const double *w = weight.buf;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t j = 0; j < nb; j++) {
            const Py_ssize_t lo = f[j], hi = j + 1 < nb ? f[j + 1] : n;
            Py_ssize_t best = lo;
            for (Py_ssize_t i = lo + 1; i < hi; i++) {
                /* ascending by weight, a NaN last, equal ones in order: the last wins */
                if (isnan(w[i]) || (!isnan(w[best]) && w[i] >= w[best])) {
                    best = i;
                }
            }
            o[j] = best;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&first, &weight, &out);
    return cbuf_none_or_error(ok, "heaviest: bad block starts or buffer lengths");
}

static PyMethodDef methods[] = {
    {"segment_search", py_segment_search, METH_VARARGS,
     "np.searchsorted within each segment of a sorted-by-segment array."},
    {"merge_order", py_merge_order, METH_VARARGS,
     "Order of two parts each sorted by (group, start), merged; False when not sorted."},
    {"heaviest", py_heaviest, METH_VARARGS, "Last position of each block's greatest weight."},
    {"linspace", py_linspace, METH_VARARGS, "np.linspace(t0, t1, len(out)) into out."},
    {"merge_runs", py_merge_runs, METH_VARARGS,
     "Start and value of each run of equal values; returns their count."},
    {"union_fraction", py_union_fraction, METH_VARARGS,
     "Covered fraction of each bucket by a merged interval union."},
    {"sample_levels", py_sample_levels, METH_VARARGS,
     "Value in force at each bucket's start, raised to its highest sample."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_passes", "Compiled passes of the trace view's windows.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__passes(void) { return PyModule_Create(&module); }
