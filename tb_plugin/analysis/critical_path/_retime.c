/* Optional compiled evaluation of a dependency graph (analysis/critical_path/retime.py),
 * and the walk back along its binding edges (a critical path).
 *
 * `evaluate(order, in_ptr, src, lag, edge, add, value, binding) -> None`: events in
 * `order` (int64, n); `in_ptr` (int64, n + 1): the in-edges of the k-th event of the
 * order are [in_ptr[k], in_ptr[k + 1]) of `src` (int64: each edge's source event), `lag`
 * (float64: its lag) and `edge` (int64: its index in the graph); `add` (float64, n) per
 * event. Into `value` (float64, n) and `binding` (int64, n), per event: the latest of its
 * in-edges' source value + lag, plus its add (its add alone, with no in-edge), and the
 * in-edge that set it (the first of equal ones; -1: none). The same sums in the same
 * order as the Python loop of retime.evaluate: the same doubles, bit for bit (built
 * without fused multiply-adds). It runs without the GIL: it builds no Python object. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "../../_cbuf.h"

static PyObject *py_evaluate(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer order, in_ptr, src, lag, edge, add, value, binding;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*w*", &order, &in_ptr, &src, &lag, &edge, &add,
                          &value, &binding)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&order, sizeof(int64_t));
    const Py_ssize_t m = cbuf_count(&src, sizeof(int64_t));
    int ok = cbuf_holds(&order, n, sizeof(int64_t)) &&
             cbuf_holds(&in_ptr, n + 1, sizeof(int64_t)) &&
             cbuf_holds(&src, m, sizeof(int64_t)) && cbuf_holds(&lag, m, sizeof(double)) &&
             cbuf_holds(&edge, m, sizeof(int64_t)) && cbuf_holds(&add, n, sizeof(double)) &&
             cbuf_holds(&value, n, sizeof(double)) && cbuf_holds(&binding, n, sizeof(int64_t));
    if (ok) {
        const int64_t *ord = order.buf, *ptr = in_ptr.buf, *from = src.buf, *ids = edge.buf;
        const double *lags = lag.buf, *adds = add.buf;
        double *val = value.buf;
        int64_t *bind = binding.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < n && ok; k++) {
            const int64_t p = ord[k], a = ptr[k], b = ptr[k + 1];
            if (p < 0 || p >= n || a < 0 || b > m || a > b) {
                ok = 0;
                break;
            }
            if (a == b) {
                val[p] = adds[p];
                bind[p] = -1;
                continue;
            }
            int64_t chosen = a;
            if (from[a] < 0 || from[a] >= n) {
                ok = 0;
                break;
            }
            double best = val[from[a]] + lags[a];
            for (int64_t q = a + 1; q < b; q++) {
                if (from[q] < 0 || from[q] >= n) {
                    ok = 0;
                    break;
                }
                const double x = val[from[q]] + lags[q];
                if (x > best) {
                    best = x;
                    chosen = q;
                }
            }
            val[p] = best + adds[p];
            bind[p] = ids[chosen];
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&order, &in_ptr, &src, &lag, &edge, &add, &value, &binding);
    return cbuf_none_or_error(ok, "evaluate: buffers of wrong lengths or events out of range");
}

/* `walk(value, binding, src, event, stop, events, edges, ports) -> int`: from `event`, the
 * chain of binding edges back (`binding` int64 per event, -1 none; `src` int64 per edge:
 * its source event) to the first event with no binding edge, whose `value` is at or before
 * `stop`, or (`ports`: a byte per event, or empty for none) that is a port other than
 * `event`: each event met (int64, into `events`) and the edge into it (into `edges`, -1
 * for the last), latest first. Returns how many; -(how many) when `events`/`edges` hold
 * fewer (nothing useful written: call again with room for that many); -1 on a cycle. */
static PyObject *py_walk(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer value, binding, src, events, edges, ports;
    long long event;
    double stop;
    if (!PyArg_ParseTuple(args, "y*y*y*Ldw*w*y*", &value, &binding, &src, &event, &stop, &events,
                          &edges, &ports)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&value, sizeof(double));
    const Py_ssize_t m = cbuf_count(&src, sizeof(int64_t));
    const Py_ssize_t room = cbuf_count(&events, sizeof(int64_t));
    const Py_ssize_t n_ports = cbuf_count(&ports, 1);
    int ok = cbuf_holds(&value, n, sizeof(double)) && cbuf_holds(&binding, n, sizeof(int64_t)) &&
             cbuf_holds(&src, m, sizeof(int64_t)) && cbuf_holds(&events, room, sizeof(int64_t)) &&
             cbuf_holds(&edges, room, sizeof(int64_t)) && event >= 0 && event < n &&
             (n_ports == 0 || n_ports == n);
    Py_ssize_t count = 0;
    if (ok) {
        const double *val = value.buf;
        const int64_t *bind = binding.buf, *from = src.buf;
        const unsigned char *port = n_ports ? ports.buf : NULL;
        int64_t *ev_out = events.buf, *ed_out = edges.buf;
        Py_BEGIN_ALLOW_THREADS
        int64_t p = event;
        for (;;) {
            if (count > n) {  /* more links than events: a cycle */
                count = -1;
                break;
            }
            const int64_t e = bind[p];
            const int at_port = port != NULL && port[p] && p != event;
            const int last = e < 0 || e >= m || val[p] <= stop || at_port;
            if (count < room) {
                ev_out[count] = p;
                ed_out[count] = last ? -1 : e;
            }
            count++;
            if (last) {
                break;
            }
            p = from[e];
            if (p < 0 || p >= n) {
                count = -1;
                break;
            }
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&value, &binding, &src, &events, &edges, &ports);
    if (!ok) {
        return cbuf_error("walk: buffers of wrong lengths or an event out of range");
    }
    if (count > room) {
        count = -count;
    }
    return PyLong_FromSsize_t(count);
}

/* `origins(value, binding, src, starts, ports, out) -> int`: for each event of `starts`
 * (int64), where `walk` from it with no `stop` ends (into `out`, int64): the first port
 * other than itself, or the first event with no binding edge. Returns 0; -1 on a cycle.
 * (A rank's summary asks this of every arrival and step bound, under two timings.) */
static PyObject *py_origins(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer value, binding, src, starts, ports, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*", &value, &binding, &src, &starts, &ports, &out)) {
        return NULL;
    }
    const Py_ssize_t n = cbuf_count(&value, sizeof(double));
    const Py_ssize_t m = cbuf_count(&src, sizeof(int64_t));
    const Py_ssize_t k = cbuf_count(&starts, sizeof(int64_t));
    const Py_ssize_t n_ports = cbuf_count(&ports, 1);
    int ok = cbuf_holds(&value, n, sizeof(double)) && cbuf_holds(&binding, n, sizeof(int64_t)) &&
             cbuf_holds(&src, m, sizeof(int64_t)) && cbuf_holds(&starts, k, sizeof(int64_t)) &&
             cbuf_holds(&out, k, sizeof(int64_t)) && (n_ports == 0 || n_ports == n);
    int cycle = 0;
    if (ok) {
        const int64_t *bind = binding.buf, *from = src.buf, *first = starts.buf;
        const unsigned char *port = n_ports ? ports.buf : NULL;
        int64_t *origin = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < k && ok && !cycle; i++) {
            const int64_t event = first[i];
            if (event < 0 || event >= n) {
                ok = 0;
                break;
            }
            int64_t p = event;
            for (Py_ssize_t steps = 0;; steps++) {
                if (steps > n) {
                    cycle = 1;
                    break;
                }
                const int64_t e = bind[p];
                if (e < 0 || e >= m || (port != NULL && port[p] && p != event)) {
                    break;
                }
                p = from[e];
                if (p < 0 || p >= n) {
                    cycle = 1;
                    break;
                }
            }
            origin[i] = p;
        }
        Py_END_ALLOW_THREADS
    }
    CBUF_RELEASE(&value, &binding, &src, &starts, &ports, &out);
    if (!ok) {
        return cbuf_error("origins: buffers of wrong lengths or an event out of range");
    }
    return PyLong_FromLong(cycle ? -1 : 0);
}

static PyMethodDef METHODS[] = {
    {"evaluate", py_evaluate, METH_VARARGS,
     "evaluate(order, in_ptr, src, lag, edge, add, value, binding): a graph's event times."},
    {"walk", py_walk, METH_VARARGS,
     "walk(value, binding, src, event, stop, events, edges, ports): the binding chain back."},
    {"origins", py_origins, METH_VARARGS,
     "origins(value, binding, src, starts, ports, out): where each walk back ends."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_retime", "Compiled evaluation of a dependency graph.", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__retime(void) { return PyModule_Create(&MODULE); }
