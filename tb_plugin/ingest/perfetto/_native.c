/* Optional compiled Perfetto reader (kinetoscope.ingest.perfetto._native): the packets of
 * a trace become the column builder's raw chunks, as events.py's PacketReader makes its
 * events, without a Python object per packet or event and without the GIL while it reads.
 *
 * Python keeps what is rare or shared (perfetto/native.py): cutting the file into runs of
 * whole packets, inflating compressed packets, legacy JSON values, Chrome metadata, a
 * category's arrow kind, the warnings' words. The tests compare both readers' models on
 * every Perfetto trace they use, and the fuzzer runs both.
 */
#include "_pf_dispatch.h"

static uint32_t text_const(Reader *r, const char *s) { return texts_id(&r->texts, s, strlen(s)); }

static int legacy_hook(void *ctx, Span raw, Buf *out, Buf *msg);

static void reader_clear(Reader *r) {
    texts_free(&r->texts);
    values_free(&r->values);
    tracks_free(&r->tracks);
    for (size_t i = 0; i < VEC_LEN(r->seqs, Sequence); i++) sequence_free(&VEC_AT(r->seqs, Sequence, i));
    buf_free(&r->seqs);
    map_free(&r->seq_index);
    for (size_t i = 0; i < VEC_LEN(r->stacks, Stack); i++) {
        Stack *s = &VEC_AT(r->stacks, Stack, i);
        for (size_t k = 0; k < VEC_LEN(s->opens, Open); k++) free(VEC_AT(s->opens, Open, k).flows);
        buf_free(&s->opens);
    }
    buf_free(&r->stacks);
    map_free(&r->stack_index);
    queue_free(&r->queue);
    map_free(&r->flow_index);
    buf_free(&r->flows);
    buf_free(&r->first_bad);
    out_free(&r->chunk);
    for (size_t i = 0; i < VEC_LEN(r->ready, OutChunk); i++) out_free(&VEC_AT(r->ready, OutChunk, i));
    buf_free(&r->ready);
    for (int t = 0; t < N_TABLES; t++) codes_free(&r->table_codes[t]);
    enc_free(&r->enc);
    check_cache_free(&r->check_cache);
    Buf *scratch[] = {&r->args, &r->joined, &r->tmp, &r->msg, &r->cat_iids, &r->cats, &r->flows_out,
                      &r->ends_out, &r->flows_old, &r->ends_old, &r->link, &r->annotations};
    for (size_t i = 0; i < sizeof scratch / sizeof scratch[0]; i++) buf_free(scratch[i]);
    for (int i = 0; i < 5; i++) buf_free(&r->spans[i]);
    Py_CLEAR(r->callbacks);
}

static void reader_dealloc(Reader *r) {
    reader_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int reader_init(Reader *r, PyObject *args, PyObject *kwargs) {
    static char *keys[] = {"callbacks", "cap",  "check_every", "batch",
                           "batch_bytes", "seed", "max_open",    NULL};
    PyObject *callbacks;
    long long cap, check_every, batch, batch_bytes, max_open = LLONG_MAX;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OLLLLK|L", keys, &callbacks, &cap,
                                     &check_every, &batch, &batch_bytes, &seed, &max_open))
        return -1;
    if (r->callbacks) {
        PyErr_SetString(PyExc_RuntimeError, "a Reader is initialised once");
        return -1;
    }
    if (batch < 1 || check_every < 1) {
        PyErr_SetString(PyExc_ValueError, "batch and check_every must be positive");
        return -1;
    }
    Py_INCREF(callbacks);
    r->callbacks = callbacks;
    r->cap = cap;
    r->max_open = max_open;
    r->check_every = check_every;
    r->batch = batch;
    r->batch_bytes = batch_bytes;
    r->seed = mix64(seed ^ 0x5851F42D4C957F2DULL);
    r->free_flow = r->last_seq_at = NO_STR;
    r->serial = 1;
    r->hooks.ctx = r;
    r->hooks.legacy = legacy_hook;
    r->enc.hooks = &r->hooks;
    r->enc.seed = r->seed;
    r->check_cache.seed = mix64(r->seed ^ 0x2545F4914F6CDD1DULL);
    if (!texts_init(&r->texts, r->seed) || !values_init(&r->values, r->seed) ||
        !tracks_init(&r->tracks, r->seed) || !map_init(&r->seq_index, 16, r->seed) ||
        !map_init(&r->stack_index, 64, r->seed) || !map_init(&r->flow_index, 64, r->seed)) {
        PyErr_NoMemory();
        return -1;
    }
    r->ac2g = text_const(r, "ac2g");
    r->fwdbwd = text_const(r, "fwdbwd");
    if (r->ac2g == NO_STR || r->fwdbwd == NO_STR) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* ---- Python hooks --------------------------------------------------------------------- */

/* callbacks.legacy(raw bytes) -> encoded bytes, or (1 now | 2 later, "Type: words"). */
static int legacy_hook(void *ctx, Span raw, Buf *out, Buf *msg) {
    Reader *r = ctx;
    int status = ENC_FAIL;
    WITH_GIL(r, {
        PyObject *got = PyObject_CallMethod(r->callbacks, "legacy", "y#", (const char *)raw.p,
                                            (Py_ssize_t)SPAN_LEN(raw));
        if (got && PyBytes_Check(got)) {
            status = buf_put(out, PyBytes_AS_STRING(got), (size_t)PyBytes_GET_SIZE(got)) ? LEGACY_OK : ENC_FAIL;
        } else if (got && PyTuple_Check(got) && PyTuple_GET_SIZE(got) == 2) {
            long when = PyLong_AsLong(PyTuple_GET_ITEM(got, 0));
            Py_ssize_t n;
            const char *words = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(got, 1), &n);
            if (words && buf_put(msg, words, (size_t)n)) status = when == 1 ? LEGACY_NOW : LEGACY_LATER;
        } else if (got) {
            PyErr_SetString(PyExc_TypeError, "legacy() must return bytes or (when, words)");
        }
        Py_XDECREF(got);
    });
    return status;
}

/* ---- reading runs ------------------------------------------------------------------------ */

enum { RUN_DONE, RUN_COMPRESSED, RUN_TOO_LARGE, RUN_FAIL };

/* A top-level varint as stream.py's read_varint reads it (any length up to 10 bytes). */
static const uint8_t *run_varint(const uint8_t *p, const uint8_t *end, uint64_t *out, int *wide) {
    uint64_t value = 0;
    *wide = 0;
    for (int shift = 0; p < end; shift += 7) {
        uint8_t byte = *p++;
        if (shift < 64) value |= (uint64_t)(byte & 0x7F) << shift;
        if (shift >= 63 && (byte & 0x7F) >> (shift == 63 ? 1 : 0)) *wide = 1;
        if (byte < 0x80) {
            *out = value;
            return p;
        }
        if (shift + 7 > 63) return NULL;
    }
    return NULL;
}

/* Counts a packet read; whether the held memory is over the cap (checked every
   check_every packets, as events.py's _guarded). */
static int count_packet(Reader *r) {
    r->packets++;
    return r->packets % r->check_every == 0 && over_cap(r);
}

enum { FIELD_END, FIELD_PACKET, FIELD_OTHER };

/* The top-level field at *p (run_end: the end of the run), as stream.py's whole_packets
   framed it: FIELD_PACKET (its bytes in *packet) or FIELD_OTHER, *p moved past it; or
   FIELD_END where no whole field starts. One walk for reading a run and checking it. */
static int run_field(const uint8_t **p, const uint8_t *run_end, Span *packet) {
    uint64_t tag, value;
    int wide, wide_value;
    const uint8_t *q = run_varint(*p, run_end, &tag, &wide);
    if (!q) return FIELD_END;
    int wire = (int)(tag & 7);
    if (wire == WIRE_LEN) {
        q = run_varint(q, run_end, &value, &wide_value);
        if (!q || wide_value || value > (uint64_t)(run_end - q)) return FIELD_END;
        *p = q + value;
        if (tag != 0x0A || wide) return FIELD_OTHER;
        *packet = (Span){q, q + value};
        return FIELD_PACKET;
    }
    if (wire == WIRE_VARINT) {
        if (!(q = run_varint(q, run_end, &value, &wide_value))) return FIELD_END;
        *p = q;
        return FIELD_OTHER;
    }
    size_t n = wire == WIRE_FIXED64 ? 8 : 4;
    if ((size_t)(run_end - q) < n) return FIELD_END;
    *p = q + n;
    return FIELD_OTHER;
}

/* A packet's pf_check in one byte (check_packets' output), and back. */
static uint8_t check_byte(Check c) { return (uint8_t)(c.status | (c.legacy ? 4 : 0)); }
static Check check_of_byte(uint8_t b) { return (Check){b & 3, (b >> 2) & 1, 0, 0}; }

/* Reads the packets of run[*pos:] (whole fields, checked by whole_packets). `checks`: the
   run's packets' pf_check bytes, made ahead from its start (check_packets), n_checks of
   them; a packet past them is checked here. */
static int read_run(Reader *r, Span run, size_t *pos, int nested, Span *compressed,
                    const uint8_t *checks, size_t n_checks, Span prepared) {
    const uint8_t *p = run.p + *pos;
    size_t k = 0;
    while (p < run.end) {
        Span packet;
        int field = run_field(&p, run.end, &packet);
        if (field == FIELD_END) return RUN_DONE;
        if (field == FIELD_OTHER) continue;
        Check given;
        if (k < n_checks) given = check_of_byte(checks[k]);
        r->prepared = prepared_record(prepared.p, SPAN_LEN(prepared), k);
        int status = read_one(r, packet, nested, compressed, k++ < n_checks ? &given : NULL);
        r->prepared = NULL;
        if (status == P_FAIL) return RUN_FAIL;
        if (status == P_COMPRESSED) {
            *pos = (size_t)(p - run.p);
            return RUN_COMPRESSED;
        }
        if ((status == P_BAD || status == P_UNPARSED) && !skip(r, r->msg.data, r->msg.len))
            return RUN_FAIL;
        if (status != P_UNPARSED && count_packet(r)) { /* as events.py counts them */
            *pos = (size_t)(p - run.p);
            return RUN_TOO_LARGE;
        }
    }
    *pos = (size_t)(run.end - run.p);
    return RUN_DONE;
}

/* check_packets(run[, seed]) -> bytes: each packet's pf_check of a run of whole fields, in
   order (read_run's packets from its start), made without the GIL: a thread checks the
   next run while the reading thread reads this one. `seed`: of the run's cache of
   composite annotations checked (_pf_check_cache.h). */
static PyObject *py_check_packets(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long seed = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*|K", &view, &seed)) return NULL;
    Buf out = {0};
    int ok = 1;
    CheckCache cache;
    memset(&cache, 0, sizeof cache);
    cache.seed = mix64(seed ^ 0x2545F4914F6CDD1DULL);
    Py_BEGIN_ALLOW_THREADS
    const uint8_t *p = view.buf, *end = p + view.len;
    Span packet;
    int field;
    while (ok && p < end && (field = run_field(&p, end, &packet)) != FIELD_END)
        if (field == FIELD_PACKET) ok = buf_byte(&out, check_byte(pf_check_cached(packet, &cache)));
    Py_END_ALLOW_THREADS
    check_cache_free(&cache);
    PyBuffer_Release(&view);
    PyObject *checks = ok ? PyBytes_FromStringAndSize(out.data ? out.data : "", (Py_ssize_t)out.len)
                          : PyErr_NoMemory();
    buf_free(&out);
    return checks;
}

/* prepare_packets(run, seed) -> (checks, prepared): check_packets(run), and the packets'
   args that need no sequence state encoded ahead (_pf_prepare.h), without the GIL. */
static PyObject *py_prepare_packets(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long seed;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*K", &view, &seed)) return NULL;
    Buf checks = {0};
    Prepare w;
    memset(&w, 0, sizeof w);
    w.enc.seed = mix64(seed ^ 0x5851F42D4C957F2DULL);
    w.limit = PREPARED_GROWTH * (size_t)view.len + PREPARED_SLACK;
    int ok = 1;
    CheckCache cache;
    memset(&cache, 0, sizeof cache);
    cache.seed = mix64(seed ^ 0x2545F4914F6CDD1DULL);
    Py_BEGIN_ALLOW_THREADS
    const uint8_t *p = view.buf, *end = p + view.len;
    Span packet;
    int field;
    while (ok && p < end && (field = run_field(&p, end, &packet)) != FIELD_END) {
        if (field != FIELD_PACKET) continue;
        Check check = pf_check_cached(packet, &cache);
        ok = buf_byte(&checks, check_byte(check)) && prepare_packet(&w, packet, check);
    }
    Py_END_ALLOW_THREADS
    check_cache_free(&cache);
    PyBuffer_Release(&view);
    uint32_t n = (uint32_t)VEC_LEN(w.offsets, uint32_t);
    PyObject *prepared = ok ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(4 + w.offsets.len + w.records.len)) : NULL;
    if (prepared) { /* the count, the offsets, the records */
        char *at = PyBytes_AS_STRING(prepared);
        memcpy(at, &n, 4);
        if (w.offsets.len) memcpy(at + 4, w.offsets.data, w.offsets.len);
        if (w.records.len) memcpy(at + 4 + w.offsets.len, w.records.data, w.records.len);
    }
    prepare_free(&w);
    PyObject *got = !ok ? PyErr_NoMemory() : !prepared ? NULL
                  : Py_BuildValue("y#N", checks.data ? checks.data : "", (Py_ssize_t)checks.len, prepared);
    buf_free(&checks);
    return got;
}

/* The Python error of a failed read: the hook's, or out of memory. */
static PyObject *failed(Reader *r) {
    r->oom = 0;
    if (!PyErr_Occurred()) PyErr_NoMemory();
    return NULL;
}

static int enter(Reader *r) {
    if (r->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the Reader is in use");
        return 0;
    }
    r->busy = 1;
    return 1;
}

/* read(run, pos, nested, builder_held[, checks[, prepared]]) -> (status, pos, compressed data
   or None). checks, prepared: check_packets(run) or prepare_packets(run), with pos 0. */
static PyObject *py_read(Reader *r, PyObject *args) {
    Py_buffer view, checks = {0}, prepared = {0};
    Py_ssize_t start;
    int nested;
    long long builder_held;
    if (!PyArg_ParseTuple(args, "y*npL|y*y*", &view, &start, &nested, &builder_held, &checks, &prepared))
        return NULL;
    if (start < 0 || start > view.len || ((checks.buf || prepared.buf) && start) || !enter(r)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "pos out of range");
        PyBuffer_Release(&view);
        if (checks.buf) PyBuffer_Release(&checks);
        if (prepared.buf) PyBuffer_Release(&prepared);
        return NULL;
    }
    Span given = {prepared.buf, (const uint8_t *)prepared.buf + (prepared.buf ? prepared.len : 0)};
    r->builder_held = builder_held;
    size_t pos = (size_t)start;
    Span compressed = {0};
    Span run = {(const uint8_t *)view.buf, (const uint8_t *)view.buf + view.len};
    r->save = PyEval_SaveThread();
    int status = read_run(r, run, &pos, nested, &compressed, checks.buf, checks.buf ? (size_t)checks.len : 0, given);
    PyEval_RestoreThread(r->save);
    r->save = NULL;
    r->busy = 0;
    if (checks.buf) PyBuffer_Release(&checks);
    if (prepared.buf) PyBuffer_Release(&prepared);
    PyObject *data = NULL;
    if (status == RUN_COMPRESSED)
        data = PyBytes_FromStringAndSize((const char *)compressed.p, (Py_ssize_t)SPAN_LEN(compressed));
    PyBuffer_Release(&view);
    if (status == RUN_FAIL) return failed(r);
    if (status == RUN_COMPRESSED && !data) return NULL;
    if (!data) {
        data = Py_None;
        Py_INCREF(data);
    }
    return Py_BuildValue("inN", status, (Py_ssize_t)pos, data);
}

static PyObject *py_count_packet(Reader *r, PyObject *arg) {
    long long held = PyLong_AsLongLong(arg);
    if (held == -1 && PyErr_Occurred()) return NULL;
    r->builder_held = held;
    return PyBool_FromLong(count_packet(r));
}

static PyObject *py_over_cap(Reader *r, PyObject *arg) {
    long long held = PyLong_AsLongLong(arg);
    if (held == -1 && PyErr_Occurred()) return NULL;
    r->builder_held = held;
    return PyBool_FromLong(over_cap(r));
}

static PyObject *py_skip(Reader *r, PyObject *arg) {
    Py_ssize_t n;
    const char *words = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!words) return NULL;
    if (!skip(r, words, (size_t)n)) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* deliver(all_done) -> whether it stopped after a chunk (call it again, after chunks()). */
static PyObject *py_deliver(Reader *r, PyObject *arg) {
    int all_done = PyObject_IsTrue(arg);
    if (all_done < 0 || !enter(r)) return NULL;
    int more;
    Py_BEGIN_ALLOW_THREADS
    more = take(r, all_done); /* builds columns only: no Python object */
    Py_END_ALLOW_THREADS
    r->busy = 0;
    if (more < 0) return PyErr_NoMemory();
    return PyBool_FromLong(more);
}

static PyObject *py_flush(Reader *r, PyObject *unused) {
    (void)unused;
    if (!cut_chunk(r)) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

#include "_pf_module.h"
