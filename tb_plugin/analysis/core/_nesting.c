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

#include "../../_cbuf.h"

static PyObject *py_previous_reaching(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer values, targets, start, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &values, &targets, &start, &out)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&values, sizeof(double));
    int ok = cbuf_holds(&values, n, sizeof(double)) && targets.len == values.len &&
             cbuf_holds(&out, n, sizeof(int64_t)) && (start.len == 0 || start.len == out.len);
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
    CBUF_RELEASE(&values, &targets, &start, &out);
    return cbuf_none_or_error(ok, "previous_reaching: buffers of different lengths");
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

/* The latest slice in [first, p] whose value, max(end, start + tol), reaches `want`, or
 * -1: lane_crossings' jumps along the answers of the slices before (`reach`, int32),
 * each value worked out as read (the same float as one kept per slice). */
static inline int64_t latest_open(const double *s, const double *e, double tol,
                                  const int32_t *reach, int64_t first, int64_t p, double want) {
    while (p >= first) {
        const double low = s[p] + tol;
        if ((e[p] >= low ? e[p] : low) >= want) {
            break;
        }
        p = reach[p];
    }
    return p >= first ? p : -1;
}

/* `lane_crossings(new_lane, start, end, tol, out)`: the test of health/nesting.py on
 * slices sorted by (lane, start, longer first, file order), `new_lane[i]` (uint8) where
 * a lane begins; per slice whether it crosses an earlier one of its lane, into `out`
 * (uint8). In order, so whether a slice that ends a walk crosses is known when asked:
 * the walk goes on before it exactly when the numpy rounds would. Holds 4 bytes a slice
 * (each one's answer); returns False (nothing written) past 2**31 - 1 slices. */
static PyObject *py_lane_crossings(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer new_lane, start, end, out;
    double tol;
    if (!PyArg_ParseTuple(args, "y*y*y*dw*", &new_lane, &start, &end, &tol, &out)) {
        return NULL;
    }
    Py_ssize_t n = new_lane.len;
    int ok = cbuf_holds(&start, n, sizeof(double)) && end.len == start.len && out.len == n;
    int fits = n <= INT32_MAX;
    int32_t *reach = NULL;
    if (ok && fits && n > 0) {
        reach = PyMem_RawMalloc((size_t)n * sizeof(int32_t));
        if (reach == NULL) {
            CBUF_RELEASE(&new_lane, &start, &end, &out);
            return PyErr_NoMemory();
        }
    }
    if (ok && fits && n > 0) {
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
            const double want = nextafter(low, INFINITY); /* ending after low */
            int64_t at = latest_open(s, e, tol, reach, first, i - 1, want);
            reach[i] = (int32_t)at;
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
                at = latest_open(s, e, tol, reach, first, at - 1, want);
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(reach);
    CBUF_RELEASE(&new_lane, &start, &end, &out);
    return ok ? PyBool_FromLong(fits) : cbuf_error("lane_crossings: buffers of different lengths");
}

/* `index_parents(new_thread, start, end, start_at, out)`: host_ranges._index_sorted's
 * parents, for ranges sorted by (thread, start, -end, file order), `new_thread[i]`
 * (uint8) where a thread begins: per range the latest earlier one of its thread that
 * ends no earlier (after it, for a zero-length range), -1 for none, into `out`.
 * `start_at` (int64, or empty): where each search may start (a range before it, none
 * between reaching it; one of another thread or -1: none). The previous_reaching of the
 * index's sequence (a sentinel before each thread), without the sequence: same parents.
 * Times without NaN (the caller checks). */
static PyObject *py_index_parents(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer new_thread, start, end, start_at, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*", &new_thread, &start, &end, &start_at, &out)) {
        return NULL;
    }
    Py_ssize_t n = new_thread.len;
    int ok = cbuf_holds(&start, n, sizeof(double)) && end.len == start.len &&
             cbuf_holds(&out, n, sizeof(int64_t)) &&
             (start_at.len == 0 || start_at.len == out.len);
    if (ok) {
        const uint8_t *begins = new_thread.buf;
        const double *s = start.buf;
        const double *e = end.buf;
        const int64_t *from = start_at.len ? start_at.buf : NULL;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        int64_t first = 0;
        for (int64_t i = 0; i < (int64_t)n; i++) {
            if (begins[i]) {
                first = i;
            }
            const double want = e[i] > s[i] ? e[i] : nextafter(e[i], INFINITY);
            int64_t j = from ? from[i] : i - 1;
            if (j >= i) {
                j = i - 1; /* outside the contract: its caller's */
            }
            o[i] = latest_reaching(e, o, first, j, want);
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&new_thread, &start, &end, &start_at, &out);
    return cbuf_none_or_error(ok, "index_parents: buffers of different lengths");
}

/* `walk_up(end, parent, candidate, target, strict, out)`: HostRanges._walk, per query up
 * the parents from its candidate (-1: none) to the first range whose end reaches the
 * target (passes it, when `strict`), into `out`. float64 end and target, int64 the rest. */
static PyObject *py_walk_up(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer end, parent, candidate, target, out;
    int strict;
    if (!PyArg_ParseTuple(args, "y*y*y*y*pw*", &end, &parent, &candidate, &target, &strict,
                          &out)) {
        return NULL;
    }
    Py_ssize_t n_ranges = cbuf_count(&end, sizeof(double));
    Py_ssize_t n = cbuf_count(&candidate, sizeof(int64_t));
    int ok = cbuf_holds(&parent, n_ranges, sizeof(int64_t)) &&
             cbuf_holds(&target, n, sizeof(double)) && out.len == candidate.len;
    if (ok) {
        const double *e = end.buf;
        const int64_t *up = parent.buf;
        const int64_t *c = candidate.buf;
        const double *t = target.buf;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t q = 0; q < n; q++) {
            int64_t cur = c[q];
            const double want = t[q];
            while (cur >= 0 && cur < n_ranges && (strict ? e[cur] <= want : e[cur] < want)) {
                cur = up[cur];
            }
            o[q] = cur;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&end, &parent, &candidate, &target, &out);
    return cbuf_none_or_error(ok, "walk_up: buffers of different lengths");
}

/* `segment_union_length(group, starts, ends, out)`: tree_arrays.segment_union_length's
 * sums into `out` (float64 zeros, one per group), its float operations in its order: each
 * group's times moved above the earlier groups' (its start less the group's first start,
 * plus the spans before it), one running maximum of the moved ends, each range adding
 * what it covers past the ranges before it in its group. int64 groups, float64 times
 * without NaN (the caller checks), sorted by (group, start). */
static PyObject *py_segment_union_length(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer group, starts, ends, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &group, &starts, &ends, &out)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&group, sizeof(int64_t));
    Py_ssize_t n_groups = cbuf_count(&out, sizeof(double));
    int ok = cbuf_holds(&starts, n, sizeof(double)) && ends.len == starts.len;
    if (ok) {
        const int64_t *g = group.buf;
        for (Py_ssize_t i = 0; i < n && ok; i++) {
            ok = g[i] >= 0 && g[i] < n_groups;
        }
    }
    if (ok && n > 0) {
        const int64_t *g = group.buf;
        const double *s = starts.buf;
        const double *e = ends.buf;
        double *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        double offset = 0.0;  /* the spans of the groups before, summed in order */
        double running = 0.0; /* the running maximum of the moved ends */
        Py_ssize_t a = 0;
        while (a < n) {
            Py_ssize_t b = a + 1;
            double lo = s[a], hi = e[a];
            while (b < n && g[b] == g[a]) {
                lo = s[b] < lo ? s[b] : lo;
                hi = e[b] > hi ? e[b] : hi;
                b++;
            }
            for (Py_ssize_t i = a; i < b; i++) {
                const double rel_start = s[i] - lo + offset;
                const double rel_end = e[i] - lo + offset;
                const double prev_end = i == a ? -INFINITY : running;
                running = i == 0 || rel_end > running ? rel_end : running;
                double covered;
                if (prev_end >= rel_end) {
                    covered = 0.0;
                } else if (prev_end > rel_start) {
                    covered = rel_end - prev_end;
                } else {
                    covered = e[i] - s[i];
                }
                o[g[i]] += covered;
            }
            offset = a == 0 ? hi - lo + 1.0 : offset + (hi - lo + 1.0);
            a = b;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&group, &starts, &ends, &out);
    return cbuf_none_or_error(ok, "segment_union_length: bad lengths or groups");
}

/* `start_bound(start, lo, hi, t, right, out)`: HostRanges._start_bound's bounds, per
 * query the position in [lo, hi) of the sorted `start` (NaN last) after the starts
 * before t (`right`: at t at the latest), as np.searchsorted finds it; `lo` for a NaN
 * time or an empty range. float64 start and t, int64 the rest. */
#define BEFORE(v) (right ? !(key < (v) || (v) != (v)) : (v) < key)

static PyObject *py_start_bound(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer start, lo, hi, t, out;
    int right;
    if (!PyArg_ParseTuple(args, "y*y*y*y*pw*", &start, &lo, &hi, &t, &right, &out)) {
        return NULL;
    }
    Py_ssize_t n_ranges = cbuf_count(&start, sizeof(double));
    Py_ssize_t n = cbuf_count(&t, sizeof(double));
    int ok = cbuf_holds(&lo, n, sizeof(int64_t)) && hi.len == lo.len && out.len == lo.len;
    if (ok) {
        const int64_t *l = lo.buf, *h = hi.buf;
        for (Py_ssize_t q = 0; q < n && ok; q++) {
            ok = l[q] >= 0 && h[q] <= n_ranges;
        }
    }
    if (ok) {
        const double *s = start.buf;
        const int64_t *l = lo.buf, *h = hi.buf;
        const double *when = t.buf;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        int64_t last_lo = -1, last_hi = -1, last_out = 0;
        double last_key = 0.0;
        for (Py_ssize_t q = 0; q < n; q++) {
            int64_t a = l[q], b = h[q];
            const double key = when[q];
            if (b > a && key == key) {
                if (a == last_lo && b == last_hi && key >= last_key) {
                    /* Queries in time order (most): the bound is at or after the last
                     * one's, found by doubling steps from there, then halving. */
                    int64_t step = 1;
                    a = last_out;
                    while (a + step - 1 < b && BEFORE(s[a + step - 1])) {
                        a += step;
                        step *= 2;
                    }
                    if (a + step - 1 < b) {
                        b = a + step - 1;
                    }
                } else {
                    last_lo = a;
                    last_hi = b;
                }
                while (a < b) { /* the first position past the key (NaN starts sort last) */
                    const int64_t mid = a + (b - a) / 2;
                    if (BEFORE(s[mid])) {
                        a = mid + 1;
                    } else {
                        b = mid;
                    }
                }
                last_key = key;
                last_out = a;
            }
            o[q] = a;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&start, &lo, &hi, &t, &out);
    return cbuf_none_or_error(ok, "start_bound: bad lengths or bounds");
}

/* `merge_intervals(starts, ends, out_starts, out_ends)`: intervals.IntervalUnion's merge
 * of the intervals [start, end) with end > start (the others skipped), in the order given:
 * a merged interval starts at one that begins after every earlier one ended, and ends at
 * the largest end of those it holds. Returns how many were written, or -1 (nothing
 * merged) where the kept starts do not ascend: the caller sorts them and asks again.
 * float64 throughout, all four of one length. */
static PyObject *py_merge_intervals(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer starts, ends, out_starts, out_ends;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &starts, &ends, &out_starts, &out_ends)) {
        return NULL;
    }
    Py_ssize_t n = cbuf_count(&starts, sizeof(double)), m = 0;
    int ok = ends.len == starts.len && out_starts.len == starts.len && out_ends.len == starts.len;
    if (ok) {
        const double *s = starts.buf, *e = ends.buf;
        double *os = out_starts.buf, *oe = out_ends.buf;
        Py_BEGIN_ALLOW_THREADS
        double last_start = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!(e[i] > s[i])) {
                continue;
            }
            if (m > 0 && s[i] < last_start) {
                m = -1; /* not sorted: the caller sorts */
                break;
            }
            last_start = s[i];
            if (m == 0 || s[i] > oe[m - 1]) {
                os[m] = s[i];
                oe[m++] = e[i];
            } else if (e[i] > oe[m - 1]) {
                oe[m - 1] = e[i];
            }
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&starts, &ends, &out_starts, &out_ends);
    return ok ? PyLong_FromSsize_t(m) : cbuf_error("merge_intervals: bad lengths");
}

/* `thread_keys(pid, tid, rows, pid_canon, tid_canon, code_size, width, out)`:
 * common.thread_keys' key of each row r of `rows` (int32 or int64: the complete rows kept
 * with a model are int32, and a copy of them as int64 would be a temporary of its own),
 * pid_canon[pid[r]] * width +
 * tid_canon[tid[r]] (int64 tables), into `out` (int64): one pass for the gathers, casts
 * and sums numpy makes one at a time. pid and tid: the model's code columns, signed
 * integers of `code_size` bytes (2 or 4). Returns False (out unspecified) where a row or
 * a code falls outside its column or table: the caller computes the keys in numpy. */
static inline int64_t code_at(const void *column, int size, int64_t row) {
    return size == 2 ? ((const int16_t *)column)[row] : ((const int32_t *)column)[row];
}

static PyObject *py_thread_keys(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer pid, tid, rows, pid_canon, tid_canon, out;
    int size;
    long long width;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iLw*", &pid, &tid, &rows, &pid_canon, &tid_canon,
                          &size, &width, &out)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&out, sizeof(int64_t));
    const Py_ssize_t row_size = n > 0 ? rows.len / n : (Py_ssize_t)sizeof(int64_t);
    int ok = (size == 2 || size == 4) && tid.len == pid.len &&
             cbuf_holds(&out, n, sizeof(int64_t)) && (row_size == 4 || row_size == 8) &&
             rows.len == n * row_size;
    if (ok) {
        const int64_t events = pid.len / size;
        const int64_t n_pids = cbuf_count(&pid_canon, sizeof(int64_t));
        const int64_t n_tids = cbuf_count(&tid_canon, sizeof(int64_t));
        const int64_t *pc = pid_canon.buf, *tc = tid_canon.buf;
        int64_t *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t row =
                row_size == 4 ? ((const int32_t *)rows.buf)[i] : ((const int64_t *)rows.buf)[i];
            if (row < 0 || row >= events) {
                ok = 0;
                break;
            }
            const int64_t p = code_at(pid.buf, size, row), t = code_at(tid.buf, size, row);
            if (p < 0 || p >= n_pids || t < 0 || t >= n_tids) {
                ok = 0;
                break;
            }
            o[i] = pc[p] * width + tc[t];
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&pid, &tid, &rows, &pid_canon, &tid_canon, &out);
    return PyBool_FromLong(ok);
}

/* `snap_ns(t, origin, out)`: host_ranges.snap_ns, per float64 time its numpy steps in
 * order in one pass, ((t - origin) * 1000 rounded half to even) / 1000 + origin, into
 * `out` (float64, t's length); the same floats. */
static PyObject *py_snap_ns(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer t, out;
    double origin;
    if (!PyArg_ParseTuple(args, "y*dw*", &t, &origin, &out)) {
        return NULL;
    }
    int ok = out.len == t.len;
    if (ok) {
        const double *in = t.buf;
        double *o = out.buf;
        Py_ssize_t n = cbuf_count(&t, sizeof(double));
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            double x = in[i] - origin;
            x *= 1000.0;
            x = rint(x);
            x /= 1000.0;
            o[i] = x + origin;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&t, &out);
    return cbuf_none_or_error(ok, "snap_ns: bad lengths");
}

/* `name_spans(names, starts, ends, code_size, counts, out_codes, out_starts, out_ends)`:
 * memory/index.name_spans, per name code the union of its ranges, for ranges sorted by
 * (start, -end) with `names` (signed codes of `code_size` bytes, 2 or 4) and float64
 * times. A range opens a span of its name when it is the name's first or starts after
 * the furthest end of the name's ranges before it (NaN: furthest of all, as numpy's
 * ranks of the ends sort it; a NaN start opens nothing). With empty outputs, counts each
 * name's spans into `counts` (int64, one per code, zeros) and returns their sum; else
 * writes the spans by code, then start (counts as given by the first call), returns the
 * sum again. Returns -1 where a code falls outside `counts` (the caller uses numpy). */
static inline int reaches_past(double reach, double end) {
    return reach != reach ? 0 : (end != end || end > reach);
}

static PyObject *py_name_spans(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer names, starts, ends, counts, out_codes, out_starts, out_ends;
    int size;
    if (!PyArg_ParseTuple(args, "y*y*y*iw*w*w*w*", &names, &starts, &ends, &size, &counts,
                          &out_codes, &out_starts, &out_ends)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&starts, sizeof(double));
    const Py_ssize_t n_codes = cbuf_count(&counts, sizeof(int64_t));
    const int fill = out_starts.len > 0;
    int ok = (size == 2 || size == 4) && names.len == n * size && ends.len == starts.len &&
             out_codes.len == cbuf_count(&out_starts, sizeof(double)) * size &&
             out_ends.len == out_starts.len;
    int64_t total = -1;
    double *reach = NULL;
    int64_t *at = NULL; /* per code, its open span (fill) or -1 */
    if (ok && n_codes > 0) {
        reach = PyMem_RawMalloc((size_t)n_codes * sizeof(double));
        at = PyMem_RawMalloc((size_t)n_codes * sizeof(int64_t));
        ok = reach != NULL && at != NULL;
    }
    if (ok) {
        const double *s = starts.buf, *e = ends.buf;
        int64_t *count = counts.buf;
        const Py_ssize_t capacity = cbuf_count(&out_starts, sizeof(double));
        Py_BEGIN_ALLOW_THREADS
        int64_t next = 0; /* fill: where each code's spans begin, running */
        for (Py_ssize_t c = 0; c < n_codes; c++) {
            at[c] = -1;
            if (fill) {
                const int64_t here = count[c];
                count[c] = next; /* the code's first span, then its next one */
                next += here;
            }
        }
        total = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t c = code_at(names.buf, size, i);
            if (c < 0 || c >= n_codes) {
                total = -1;
                break;
            }
            if (at[c] < 0 || s[i] > reach[c]) {
                reach[c] = e[i];
                total++;
                if (fill) {
                    if (count[c] >= capacity) {
                        total = -1; /* counts other than the first call's */
                        break;
                    }
                    at[c] = count[c]++;
                    if (size == 2) {
                        ((int16_t *)out_codes.buf)[at[c]] = (int16_t)c;
                    } else {
                        ((int32_t *)out_codes.buf)[at[c]] = (int32_t)c;
                    }
                    ((double *)out_starts.buf)[at[c]] = s[i];
                } else {
                    at[c] = 0;
                    count[c]++;
                }
            } else if (reaches_past(reach[c], e[i])) {
                reach[c] = e[i];
            }
            if (fill) {
                ((double *)out_ends.buf)[at[c]] = reach[c];
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(reach);
    PyMem_RawFree(at);
    CBUF_RELEASE(&names, &starts, &ends, &counts, &out_codes, &out_starts, &out_ends);
    return ok ? PyLong_FromLongLong(total) : cbuf_error("name_spans: bad lengths or no memory");
}

/* `span_sums(t, nbytes, codes, starts, ends, code_size, sums)`: memory/operator_stats'
 * sums of the events inside each span, per span [start, end) the events of `t` (float64
 * times ascending, NaN last) from the first at or after its start to the first at or
 * after its end, their allocations (nbytes > 0: count and bytes) and releases (nbytes < 0:
 * count and -bytes) added into `sums` (float64, 4 rows of one column per code) at the
 * span's code (`codes`: signed, `code_size` bytes). Spans of one code by start (as
 * name_spans writes them) are found from the last one's place; the events summed one by
 * one where numpy differences prefix sums: the same sums, for it takes only whole bytes
 * whose sum stays below 2**53 (every partial sum exact, in any order; a trace's bytes
 * are). Returns False, adding nothing, where they are not, where the times do not
 * ascend or a code falls outside `sums` (the caller uses numpy). NaN bounds as
 * np.searchsorted places them: after every time but the NaN ones. */
static inline int64_t first_not_before(const double *t, int64_t lo, int64_t hi, double key) {
    /* Doubling steps from lo first: the next span of a code starts near the last one's
     * place, so its bound is a few steps away, not a search of every time after it. */
    int64_t step = 1;
    while (lo + step - 1 < hi && t[lo + step - 1] < key) {
        lo += step;
        step *= 2;
    }
    if (lo + step - 1 < hi) {
        hi = lo + step - 1;
    }
    while (lo < hi) { /* the first position whose time is not below the key (NaN: last) */
        const int64_t mid = lo + (hi - lo) / 2;
        if (t[mid] < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static PyObject *py_span_sums(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer t, nbytes, codes, starts, ends, sums;
    int size;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iw*", &t, &nbytes, &codes, &starts, &ends, &size,
                          &sums)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&t, sizeof(double));
    const Py_ssize_t n_spans = cbuf_count(&starts, sizeof(double));
    const Py_ssize_t n_codes = cbuf_count(&sums, sizeof(double)) / 4;
    int ok = (size == 2 || size == 4) && nbytes.len == t.len && ends.len == starts.len &&
             codes.len == n_spans * size && cbuf_holds(&sums, n_codes * 4, sizeof(double));
    int done = 0;
    if (ok) {
        const double *when = t.buf, *b = nbytes.buf, *s = starts.buf, *e = ends.buf;
        double *out = sums.buf;
        Py_BEGIN_ALLOW_THREADS
        int fits = 1;
        for (Py_ssize_t i = 1; i < n && fits; i++) {
            fits = when[i] >= when[i - 1] || when[i] != when[i];
            fits = fits && (when[i - 1] == when[i - 1] || when[i] != when[i]);
        }
        double total = 0.0; /* whole bytes whose sum stays exact: any order, one answer */
        for (Py_ssize_t i = 0; i < n && fits; i++) {
            fits = b[i] == floor(b[i]) && (total += fabs(b[i])) < 9007199254740992.0;
        }
        for (Py_ssize_t k = 0; k < n_spans && fits; k++) {
            const int64_t c = code_at(codes.buf, size, k);
            fits = c >= 0 && c < n_codes;
        }
        if (fits) {
            int64_t last_code = -1, at = 0;
            double last_start = 0.0;
            for (Py_ssize_t k = 0; k < n_spans; k++) {
                const int64_t c = code_at(codes.buf, size, k);
                const double start = s[k], end = e[k];
                if (start != start) {
                    continue; /* numpy's bounds: from the first NaN time, to before it */
                }
                if (!(c == last_code && start >= last_start)) {
                    at = 0; /* another code, or out of order: search from the first */
                }
                at = first_not_before(when, at, n, start);
                last_code = c;
                last_start = start;
                double alloc_n = 0.0, alloc_b = 0.0, free_n = 0.0, free_b = 0.0;
                const int to_nan = end != end; /* a NaN end: up to the first NaN time */
                for (int64_t i = at; i < n && (to_nan ? when[i] == when[i] : when[i] < end); i++) {
                    if (b[i] > 0) {
                        alloc_n += 1.0;
                        alloc_b += b[i];
                    } else if (b[i] < 0) {
                        free_n += 1.0;
                        free_b -= b[i];
                    }
                }
                out[c] += alloc_n;
                out[n_codes + c] += alloc_b;
                out[2 * n_codes + c] += free_n;
                out[3 * n_codes + c] += free_b;
            }
            done = 1;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&t, &nbytes, &codes, &starts, &ends, &sums);
    return ok ? PyBool_FromLong(done) : cbuf_error("span_sums: bad lengths");
}

/* `keep_equal_neighbours(values, order)`: trusted_rows.duplicate_mask's first cut, of
 * `order` (int64 positions of float64 `values`, by value): the positions whose value
 * equals the one's before or after it in the order (NaN equals nothing), moved to the
 * front of `order` in their order; returns how many (-1: a position outside `values`,
 * order unchanged). One pass reading the values through the order, in place of the
 * sorted values and two masks of every row beside them. */
static PyObject *py_keep_equal_neighbours(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer values, order;
    if (!PyArg_ParseTuple(args, "y*w*", &values, &order)) {
        return NULL;
    }
    const Py_ssize_t n_values = cbuf_count(&values, sizeof(double));
    const Py_ssize_t n = cbuf_count(&order, sizeof(int64_t));
    int64_t kept = 0;
    const double *v = values.buf;
    int64_t *o = order.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && kept == 0; i++) {
        kept = o[i] < 0 || o[i] >= n_values ? -1 : 0;
    }
    if (kept == 0 && n > 0) {
        double before = NAN, here = v[o[0]];
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t at = o[i];
            /* o[i + 1] is read before any write reaches it (kept <= i) */
            const double after = i + 1 < n ? v[o[i + 1]] : NAN;
            if (here == before || here == after) {
                o[kept++] = at;
            }
            before = here;
            here = after;
        }
    }
    Py_END_ALLOW_THREADS
    CBUF_RELEASE(&values, &order);
    return PyLong_FromLongLong(kept);
}

/* `children_cover(parent, start, end, out)`: tree_arrays.segment_union_length of each
 * node's children (`parent`, int64, -1 for a root) into `out` (float64 zeros, a node
 * each), read in node order with no sort by parent: the same float operations, group by
 * group, where each node's children come in node order by start, as a tree of ranges
 * sorted by (thread, start) has them. A group's times are moved above the earlier
 * groups' (the spans of the groups of lower parents, summed in that order), so the one
 * running maximum of the sorted pass never carries from one group into the next: each
 * group's running maximum starts at its first child. Returns False (out unspecified)
 * where a parent is out of range, a time is not finite, or a node's children do not come
 * by start: the caller sorts them. */
static PyObject *py_children_cover(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer parent, start, end, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &parent, &start, &end, &out)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&parent, sizeof(int64_t));
    int ok = cbuf_holds(&parent, n, sizeof(int64_t)) &&
             cbuf_holds(&start, n, sizeof(double)) && end.len == start.len &&
             out.len == start.len;
    double *lo = NULL, *offset = NULL, *running = NULL;
    if (ok && n > 0) {
        lo = PyMem_RawMalloc((size_t)n * sizeof(double));
        offset = PyMem_RawMalloc((size_t)n * sizeof(double));
        running = PyMem_RawMalloc((size_t)n * sizeof(double));
        if (lo == NULL || offset == NULL || running == NULL) {
            PyMem_RawFree(lo);
            PyMem_RawFree(offset);
            PyMem_RawFree(running);
            CBUF_RELEASE(&parent, &start, &end, &out);
            return PyErr_NoMemory();
        }
    }
    if (ok && n > 0) {
        const int64_t *up = parent.buf;
        const double *s = start.buf, *e = end.buf;
        double *o = out.buf;
        double *hi = offset; /* each group's largest end, then its offset */
        double *last = running; /* each group's last start, then its running maximum */
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t p = 0; p < n; p++) {
            hi[p] = NAN; /* no child yet */
        }
        for (Py_ssize_t i = 0; i < n && ok; i++) {
            const int64_t p = up[i];
            if (p < 0) {
                continue;
            }
            if (p >= n || !isfinite(s[i]) || !isfinite(e[i])) {
                ok = 0;
            } else if (hi[p] != hi[p]) {
                lo[p] = s[i];
                hi[p] = e[i];
                last[p] = s[i];
            } else if (s[i] < last[p]) {
                ok = 0; /* not by start: the caller sorts */
            } else {
                lo[p] = s[i] < lo[p] ? s[i] : lo[p];
                hi[p] = e[i] > hi[p] ? e[i] : hi[p];
                last[p] = s[i];
            }
        }
        if (ok) {
            double sum = 0.0; /* the spans of the groups before, summed in order */
            int first_group = 1;
            for (Py_ssize_t p = 0; p < n; p++) {
                running[p] = -INFINITY;
                if (hi[p] != hi[p]) {
                    continue;
                }
                const double span = hi[p] - lo[p] + 1.0;
                offset[p] = first_group ? 0.0 : sum;
                sum = first_group ? span : sum + span;
                first_group = 0;
            }
            for (Py_ssize_t i = 0; i < n; i++) {
                const int64_t p = up[i];
                if (p < 0) {
                    continue;
                }
                const double rel_start = s[i] - lo[p] + offset[p];
                const double rel_end = e[i] - lo[p] + offset[p];
                const double prev_end = running[p];
                running[p] = rel_end > prev_end ? rel_end : prev_end;
                double covered;
                if (prev_end >= rel_end) {
                    covered = 0.0;
                } else if (prev_end > rel_start) {
                    covered = rel_end - prev_end;
                } else {
                    covered = e[i] - s[i];
                }
                o[p] += covered;
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(lo);
    PyMem_RawFree(offset);
    PyMem_RawFree(running);
    CBUF_RELEASE(&parent, &start, &end, &out);
    return PyBool_FromLong(ok);
}

/* `tree_depths(parent, out)`: per node its number of ancestors (tree_arrays.depths), in
 * one pass in node order, where every parent comes before its children (a tree of
 * ranges sorted by start: a parent starts no later and sorts first). int64 both.
 * Returns False (out unspecified) where a parent does not come first. */
static PyObject *py_tree_depths(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer parent, out;
    if (!PyArg_ParseTuple(args, "y*w*", &parent, &out)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&parent, sizeof(int64_t));
    int ok = cbuf_holds(&parent, n, sizeof(int64_t)) && out.len == parent.len;
    if (ok) {
        const int64_t *up = parent.buf;
        int64_t *depth = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t p = up[i];
            if (p < 0) {
                depth[i] = 0;
            } else if (p < i) {
                depth[i] = depth[p] + 1;
            } else {
                ok = 0;
                break;
            }
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&parent, &out);
    return PyBool_FromLong(ok);
}

static PyMethodDef METHODS[] = {
    {"children_cover", py_children_cover, METH_VARARGS,
     "children_cover(parent, start, end, out): union lengths of children, or False."},
    {"tree_depths", py_tree_depths, METH_VARARGS,
     "tree_depths(parent, out): depths where parents come first, or False."},
    {"index_parents", py_index_parents, METH_VARARGS,
     "index_parents(new_thread, start, end, start_at, out): the index's parents, into out."},
    {"start_bound", py_start_bound, METH_VARARGS,
     "start_bound(start, lo, hi, t, right, out): per query its bound, into out."},
    {"walk_up", py_walk_up, METH_VARARGS,
     "walk_up(end, parent, candidate, target, strict, out): up the parents, into out."},
    {"segment_union_length", py_segment_union_length, METH_VARARGS,
     "segment_union_length(group, starts, ends, out): union lengths, added into out."},
    {"lane_crossings", py_lane_crossings, METH_VARARGS,
     "lane_crossings(new_lane, start, end, tol, out): the overlap test, into out."},
    {"snap_ns", py_snap_ns, METH_VARARGS,
     "snap_ns(t, origin, out): times rounded to whole nanoseconds, into out."},
    {"thread_keys", py_thread_keys, METH_VARARGS,
     "thread_keys(pid, tid, rows, pid_canon, tid_canon, code_size, width, out): keys."},
    {"merge_intervals", py_merge_intervals, METH_VARARGS,
     "merge_intervals(starts, ends, out_starts, out_ends): the merged count, or -1."},
    {"previous_reaching", py_previous_reaching, METH_VARARGS,
     "previous_reaching(values, targets, start, out): the parent search, into out."},
    /* The passes of the health checks and the Memory view. */
    {"name_spans", py_name_spans, METH_VARARGS,
     "name_spans(names, starts, ends, code_size, counts, codes, starts, ends): spans."},
    {"span_sums", py_span_sums, METH_VARARGS,
     "span_sums(t, nbytes, codes, starts, ends, code_size, sums): sums, added into sums."},
    {"keep_equal_neighbours", py_keep_equal_neighbours, METH_VARARGS,
     "keep_equal_neighbours(values, order): those equal to a neighbour, to the front."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_nesting", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__nesting(void) { return PyModule_Create(&MODULE); }
