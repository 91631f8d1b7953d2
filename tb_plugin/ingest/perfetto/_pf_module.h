/* The Python side of the native reader (included by `_native.c`, after its readers): the
 * end of a file, the chunks as Python objects, the metadata, the framing check of a
 * packet stream, helpers the tests compare with Python, and the module.
 */
#ifndef KINETOSCOPE_PF_MODULE_H
#define KINETOSCOPE_PF_MODULE_H

/* finish() -> (unended slices, unmatched ends, unknown tracks, bad packets, first bad). */
static PyObject *py_finish(Reader *r, PyObject *unused) {
    (void)unused;
    if (!enter(r)) return NULL;
    r->save = PyEval_SaveThread();
    int64_t unended = finish(r);
    PyEval_RestoreThread(r->save);
    r->save = NULL;
    r->busy = 0;
    if (unended < 0) return failed(r);
    return Py_BuildValue("LLLLs#", (long long)unended, (long long)r->unmatched_ends,
                         (long long)r->tracks.unknown.count, (long long)r->bad_packets,
                         r->first_bad.data ? r->first_bad.data : "", (Py_ssize_t)r->first_bad.len);
}

/* A chunk's column handed to Python without a copy: a read-only buffer (numpy.frombuffer
   views it; the builder writes the args from it) that frees its memory when let go. */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t len;
} Column;

static int column_getbuffer(Column *c, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)c, c->data ? c->data : "", c->len, 1, flags);
}

static void column_dealloc(Column *c) {
    free(c->data);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static Py_ssize_t column_len(Column *c) { return c->len; }

static PyBufferProcs COLUMN_BUFFER = {(getbufferproc)column_getbuffer, NULL};
static PySequenceMethods COLUMN_SEQUENCE = {.sq_length = (lenfunc)column_len};

static PyTypeObject ColumnType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kinetoscope.ingest.perfetto._native.Column",
    .tp_basicsize = sizeof(Column),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)column_dealloc,
    .tp_as_buffer = &COLUMN_BUFFER,
    .tp_as_sequence = &COLUMN_SEQUENCE,
    .tp_doc = "The bytes of one column of a chunk (a read-only buffer).",
};

/* Moves b's memory into a Column set as dict[key]. */
static int set_bytes(PyObject *dict, const char *key, Buf *b) {
    Column *column = PyObject_New(Column, &ColumnType);
    if (!column) return 0;
    column->data = b->data;
    column->len = (Py_ssize_t)b->len;
    *b = (Buf){0};
    int failed_ = PyDict_SetItemString(dict, key, (PyObject *)column) < 0;
    Py_DECREF(column);
    return !failed_;
}

static PyObject *table_list(Reader *r, int table, const Buf *ids) {
    size_t n = VEC_LEN(*ids, uint32_t);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        uint32_t id = VEC_AT(*ids, uint32_t, i);
        PyObject *value;
        if (table == TB_PID || table == TB_TID) {
            value = value_object(&r->values, &r->texts, id);
        } else if (id == NO_STR) {
            value = Py_None;
            Py_INCREF(value);
        } else {
            value = text_object(&r->texts, id);
        }
        if (!value) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, value);
    }
    return list;
}

/* A chunk as the dict perfetto/native.py reads (its columns moved out of it). */
static PyObject *chunk_dict(Reader *r, OutChunk *c) {
    PyObject *out = PyDict_New(), *tables = PyDict_New(), *codes = PyDict_New(), *wide = PyDict_New();
    int ok = out && tables && codes && wide;
    PyObject *ph = ok ? PyList_New(N_PH) : NULL;
    for (int i = 0; ph && i < N_PH; i++) PyList_SET_ITEM(ph, i, PyUnicode_FromString(PH_TEXT[i]));
    ok = ok && ph && PyDict_SetItemString(tables, "ph", ph) == 0 && set_bytes(codes, "ph", &c->ph);
    Py_XDECREF(ph);
    for (int t = 0; ok && t < N_TABLES; t++) {
        PyObject *values = table_list(r, t, &c->ids[t]);
        ok = values && PyDict_SetItemString(tables, TABLE_NAMES[t], values) == 0 &&
             set_bytes(codes, TABLE_NAMES[t], &c->codes[t]);
        Py_XDECREF(values);
    }
    for (int w = 0; ok && w < N_WIDE; w++) ok = set_bytes(wide, WIDE_NAMES[w], &c->wide[w]);
    ok = ok && set_bytes(wide, "has_stack", &c->has_stack) && set_bytes(out, "args", &c->args);
    PyObject *n = ok ? PyLong_FromSize_t(c->rows) : NULL;
    ok = ok && n && PyDict_SetItemString(out, "events", n) == 0 &&
         PyDict_SetItemString(out, "tables", tables) == 0 &&
         PyDict_SetItemString(out, "codes", codes) == 0 &&
         PyDict_SetItemString(out, "columns", wide) == 0 &&
         PyDict_SetItemString(out, "python_core", c->python ? Py_True : Py_False) == 0;
    Py_XDECREF(n);
    Py_XDECREF(tables);
    Py_XDECREF(codes);
    Py_XDECREF(wide);
    if (!ok) Py_CLEAR(out);
    return out;
}

/* chunks() -> the chunks cut since the last call, in order. */
static PyObject *py_chunks(Reader *r, PyObject *unused) {
    (void)unused;
    size_t n = VEC_LEN(r->ready, OutChunk);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *chunk = chunk_dict(r, &VEC_AT(r->ready, OutChunk, i));
        if (!chunk) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, chunk);
    }
    for (size_t i = 0; i < n; i++) out_free(&VEC_AT(r->ready, OutChunk, i));
    r->ready.len = 0;
    return list;
}

/* meta() -> [(pid, tid, kind, value)] of the descriptors, in order (tracks.py MetaEntry). */
static PyObject *py_meta(Reader *r, PyObject *unused) {
    static const char *const KINDS[] = {"process_name", "process_labels", "process_sort_index",
                                        "thread_name", "thread_sort_index"};
    (void)unused;
    size_t n = VEC_LEN(r->tracks.meta, Meta);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        const Meta *m = &VEC_AT(r->tracks.meta, Meta, i);
        PyObject *value = m->text != NO_STR ? text_object(&r->texts, m->text) : PyLong_FromLongLong(m->number);
        PyObject *pid = value_object(&r->values, &r->texts, m->pid);
        PyObject *tid = value_object(&r->values, &r->texts, m->tid);
        PyObject *item = value && pid && tid ? Py_BuildValue("OOsO", pid, tid, KINDS[m->kind], value) : NULL;
        Py_XDECREF(value);
        Py_XDECREF(pid);
        Py_XDECREF(tid);
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *get_packets(Reader *r, void *unused) {
    (void)unused;
    return PyLong_FromLongLong(r->packets);
}

static PyObject *get_slots(Reader *r, void *unused) {
    (void)unused;
    return PyLong_FromSize_t(queue_len(&r->queue));
}

static PyObject *get_open_slices(Reader *r, void *unused) {
    (void)unused;
    return PyLong_FromLongLong(r->open_slices);
}

static PyObject *get_held(Reader *r, void *unused) {
    (void)unused;
    return PyLong_FromLongLong(held_bytes(r));
}

static PyMethodDef READER_METHODS[] = {
    {"read", (PyCFunction)py_read, METH_VARARGS,
     "read(run, pos, nested, builder_held) -> (0 done | 1 compressed | 2 too large, pos, data)"},
    {"count_packet", (PyCFunction)py_count_packet, METH_O, "count a packet; whether over the cap"},
    {"over_cap", (PyCFunction)py_over_cap, METH_O, "whether what is held passes the cap"},
    {"skip", (PyCFunction)py_skip, METH_O, "a packet that could not be read, and why"},
    {"deliver", (PyCFunction)py_deliver, METH_O, "the events done, to chunks (all_done)"},
    {"flush", (PyCFunction)py_flush, METH_NOARGS, "cut the last chunk"},
    {"chunks", (PyCFunction)py_chunks, METH_NOARGS, "the chunks cut so far"},
    {"finish", (PyCFunction)py_finish, METH_NOARGS, "end the file; its counts"},
    {"meta", (PyCFunction)py_meta, METH_NOARGS, "the descriptors' metadata"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef READER_GETSET[] = {
    {"packets", (getter)get_packets, NULL, "packets read", NULL},
    {"slots", (getter)get_slots, NULL, "events waiting in begin order", NULL},
    {"held", (getter)get_held, NULL, "bytes held, as the load memory cap counts them", NULL},
    {"open_slices", (getter)get_open_slices, NULL, "slices begun, not yet ended", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kinetoscope.ingest.perfetto._native.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)reader_init,
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_methods = READER_METHODS,
    .tp_getset = READER_GETSET,
    .tp_doc = "A Perfetto trace's packets, run after run, into raw chunks.",
};

/* ---- module functions -------------------------------------------------------------------- */

/* whole_packets(buf, start, limit) -> (end of the whole fields, packets, damaged): as
   stream.whole_packets, which says what the damage is when there is any. */
static PyObject *py_whole_packets(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start;
    unsigned long long limit;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nK", &view, &start, &limit)) return NULL;
    const uint8_t *base = view.buf, *end = base + view.len;
    const uint8_t *p = base + (start < 0 ? 0 : start > view.len ? view.len : start);
    long long count = 0;
    int damaged = 0;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        uint64_t tag, value;
        int wide, long_value;
        const uint8_t *q = run_varint(p, end, &tag, &wide);
        if (!q) {
            damaged = end - p >= 10; /* a tag of more than 10 bytes; else cut */
            break;
        }
        int wire = (int)(tag & 7);
        if (!wide && tag >> 3 == 0) {
            damaged = 1;
            break;
        }
        if (wire == WIRE_LEN) {
            const uint8_t *body = run_varint(q, end, &value, &long_value);
            if (!body) {
                damaged = end - q >= 10;
                break;
            }
            if (long_value || value > limit) {
                damaged = 1;
                break;
            }
            if (value > (uint64_t)(end - body)) break;
            p = body + value;
            count += tag == 0x0A && !wide;
        } else if (wire == WIRE_VARINT) {
            const uint8_t *after = run_varint(q, end, &value, &long_value);
            if (!after) { /* stream.py keeps a tag with no value byte at the very end */
                damaged = end - q >= 10;
                if (q == end) p = end;
                break;
            }
            p = after;
        } else if (wire == WIRE_FIXED64 || wire == WIRE_FIXED32) {
            size_t n = wire == WIRE_FIXED64 ? 8 : 4;
            if ((size_t)(end - q) < n) break;
            p = q + n;
        } else {
            damaged = 1;
            break;
        }
    }
    Py_END_ALLOW_THREADS
    Py_ssize_t used = (Py_ssize_t)(p - base);
    PyBuffer_Release(&view);
    return Py_BuildValue("nLO", used, count, damaged ? Py_True : Py_False);
}

/* For the tests: bytes.decode("utf-8", "replace"), msgspec's float text, ns / 1000. */
static PyObject *py_text(PyObject *self, PyObject *arg) {
    Py_buffer view;
    (void)self;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Buf out = {0};
    int ok = put_text(&out, (Span){view.buf, (const uint8_t *)view.buf + view.len});
    PyBuffer_Release(&view);
    PyObject *text = ok ? PyUnicode_DecodeUTF8(out.data ? out.data : "", (Py_ssize_t)out.len, "strict") : PyErr_NoMemory();
    buf_free(&out);
    return text;
}

static PyObject *py_json_float(PyObject *self, PyObject *arg) {
    (void)self;
    double v = PyFloat_AsDouble(arg);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    Buf out = {0};
    PyObject *text = json_double(&out, v) ? PyBytes_FromStringAndSize(out.data, (Py_ssize_t)out.len) : PyErr_NoMemory();
    buf_free(&out);
    return text;
}

static PyObject *py_micros(PyObject *self, PyObject *args) {
    unsigned long long a, b;
    (void)self;
    if (!PyArg_ParseTuple(args, "KK", &a, &b)) return NULL;
    return PyFloat_FromDouble(micros_between(a, b));
}

static PyMethodDef MODULE_METHODS[] = {
    {"check_packets", py_check_packets, METH_VARARGS,
     "check_packets(run[, seed]) -> each packet's check, a byte each"},
    {"prepare_packets", py_prepare_packets, METH_VARARGS,
     "prepare_packets(run, seed) -> (check_packets(run), the args encoded ahead)"},
    {"whole_packets", py_whole_packets, METH_VARARGS, "whole_packets(buf, start, limit) -> (end, packets, damaged)"},
    {"text", py_text, METH_O, "bytes as decode('utf-8', 'replace') reads them"},
    {"json_float", py_json_float, METH_O, "a float as msgspec writes it"},
    {"micros", py_micros, METH_VARARGS, "micros(a, b) -> (a - b) / 1000 as Python divides"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, MODULE_METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&ReaderType) < 0 || PyType_Ready(&ColumnType) < 0) return NULL;
    if (!C_NUMERIC) C_NUMERIC = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    core_keys_init();
    PyObject *module = PyModule_Create(&MODULE);
    if (!module) return NULL;
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(module, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(&ReaderType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}

#endif
