/* A packet from its bytes to its effects (events.py _guarded and _packet), the track
 * descriptors (tracks.py describe), Chrome metadata (through Python: read.py's values),
 * and the end of the file (events.py finish).
 */
#ifndef KINETOSCOPE_PF_DISPATCH_H
#define KINETOSCOPE_PF_DISPATCH_H
#include "_pf_packet.h"

static int describe(Reader *r) {
    const Span *spans = SPANS(r, S_DESCRIPTOR);
    size_t n = NSPANS(r, S_DESCRIPTOR);
    Track t;
    memset(&t, 0, sizeof t);
    Span name = {0};
    int has_rank = 0, counter = 0, oom = 0;
    int32_t rank = 0;
    for (size_t k = 0; k < n; k++) {
        Field f = pf_fields(spans[k]);
        while (pf_next(&f)) {
            if (f.number == 1 && f.wire == WIRE_VARINT) t.uuid = f.value;
            else if (f.number == 5 && f.wire == WIRE_VARINT) t.parent = f.value;
            else if (f.number == 2 && f.wire == WIRE_LEN) name = f.body;
            else if (f.number == 8 && f.wire == WIRE_LEN) counter = 1;
            else if (f.number == 12 && f.wire == WIRE_VARINT) {
                rank = (int32_t)f.value;
                has_rank = 1;
            }
        }
    }
    t.name = texts_id_of(&r->texts, name, &r->tmp);
    Descriptor proc = read_descriptor(spans, n, 3, 6, 0);
    Descriptor thread = read_descriptor(spans, n, 4, 5, 1);
    Tracks *tr = &r->tracks;
    size_t meta_before = VEC_LEN(tr->meta, Meta);
    if (t.name == NO_STR) return P_FAIL;
    if (proc.present) {
        t.pid = proc.pid;
        t.has_pid = t.is_process = 1;
        uint32_t pid = value_of_int(&r->values, proc.pid);
        uint32_t label = process_labels(&r->texts, spans, n, &r->tmp, &oom);
        if (proc.has_name && SPAN_LEN(proc.name)) {
            uint32_t text = texts_id_of(&r->texts, proc.name, &r->tmp);
            oom |= text == NO_STR || !add_meta(tr, pid, 0, META_PROCESS_NAME, text, 0, &r->texts);
        }
        if (label != NO_STR) oom |= !add_meta(tr, pid, 0, META_PROCESS_LABELS, label, 0, &r->texts);
        if (proc.has_sort) oom |= !add_meta(tr, pid, 0, META_PROCESS_SORT, NO_STR, proc.sort, &r->texts);
    }
    if (thread.present) {
        t.pid = thread.pid;
        t.tid = thread.tid;
        t.has_pid = t.has_tid = 1;
        uint32_t pid = value_of_int(&r->values, thread.pid), tid = value_of_int(&r->values, thread.tid);
        if (thread.has_name && SPAN_LEN(thread.name)) {
            uint32_t text = texts_id_of(&r->texts, thread.name, &r->tmp);
            oom |= text == NO_STR || !add_meta(tr, pid, tid, META_THREAD_NAME, text, 0, &r->texts);
        }
        if (thread.has_sort) oom |= !add_meta(tr, pid, tid, META_THREAD_SORT, NO_STR, thread.sort, &r->texts);
    }
    t.is_counter = (uint8_t)counter;
    uint32_t at, len;
    if (!map_get(&tr->index, t.uuid, &at)) {
        at = (uint32_t)VEC_LEN(tr->tracks, Track);
        oom |= !buf_put(&tr->tracks, &t, sizeof t) || !map_put(&tr->index, t.uuid, at);
    } else {
        VEC_AT(tr->tracks, Track, at) = t;
    }
    if (oom) return P_FAIL;
    text_at(&r->texts, t.name, &len);
    tr->nbytes += TRACK_COST + len;
    tr->generation++; /* a parent described late changes its children's places */
    if (VEC_LEN(tr->meta, Meta) == meta_before && has_rank && !counter) {
        /* A named process (Kineto's "Spans") or thread: its rank is its sort index. */
        uint32_t pid, tid;
        if (!track_place(tr, &r->values, &r->texts, t.uuid, &pid, &tid)) return P_FAIL;
        int kind = tid == 0 ? META_PROCESS_SORT : META_THREAD_SORT;
        if (!add_meta(tr, pid, tid, kind, NO_STR, rank, &r->texts)) return P_FAIL;
    }
    return P_OK;
}

static PyObject *none(void) {
    Py_INCREF(Py_None);
    return Py_None;
}

/* ChromeEventBundle metadata: each item to Python (`header_item`), which reads its value
   as read.py does; one it cannot read fails the packet (the items before it kept). */
static int chrome_metadata(Reader *r) {
    Occurrences items = pf_occurrences(SPANS(r, S_CHROME), NSPANS(r, S_CHROME), 2);
    Span item;
    int status = P_OK;
    while (status == P_OK && pf_next_occurrence(&items, &item)) {
        Span name = {item.p, item.p}, string = {item.p, item.p}, json = {0};
        int has_json = 0, has_int = 0, has_bool = 0;
        uint64_t int_bits = 0, bool_v = 0;
        Field f = pf_fields(item);
        while (pf_next(&f)) {
            if (f.number == 1 && f.wire == WIRE_LEN) name = f.body;
            else if (f.number == 2 && f.wire == WIRE_LEN) string = f.body;
            else if (f.number == 3 && f.wire == WIRE_VARINT) { bool_v = f.value; has_bool = 1; }
            else if (f.number == 4 && f.wire == WIRE_VARINT) { int_bits = f.value; has_int = 1; }
            else if (f.number == 6 && f.wire == WIRE_LEN) { json = f.body; has_json = 1; }
        }
        WITH_GIL(r, {
            PyObject *got = PyObject_CallMethod(
                r->callbacks, "header_item", "y#NNNy#", (const char *)name.p, (Py_ssize_t)SPAN_LEN(name),
                has_json ? PyBytes_FromStringAndSize((const char *)json.p, (Py_ssize_t)SPAN_LEN(json))
                         : none(),
                has_int ? PyLong_FromLongLong((long long)(int64_t)int_bits) : none(),
                has_bool ? PyBool_FromLong(bool_v != 0) : none(),
                (const char *)string.p, (Py_ssize_t)SPAN_LEN(string));
            if (!got) {
                status = P_FAIL;
            } else if (got != Py_None) {
                const char *words = PyUnicode_AsUTF8(got);
                status = words ? bad(r, words) : P_FAIL;
            }
            Py_XDECREF(got);
        });
    }
    return status;
}

/* One packet: P_OK, P_BAD (r->msg), P_UNPARSED (as P_BAD: the protobuf runtime could not
   parse it), P_COMPRESSED (its zlib data in *compressed: Python inflates it and reads its
   packets), P_FAIL (a Python error, or out of memory). `checked`: its pf_check, made ahead
   (check_packets), or NULL. */
static int read_one(Reader *r, Span bytes, int nested, Span *compressed, const Check *checked) {
    Check check = checked ? *checked : pf_check_cached(bytes, &r->check_cache);
    if (check.status != PF_OK) /* the protobuf runtime parses no packet of it: not counted */
        return bad(r, check.status == PF_TOO_DEEP
                          ? "DecodeError: Error parsing message with type 'kinetoscope.perfetto.TracePacket': "
                            "Exceeded upb_DecodeOptions_MaxDepth"
                          : "DecodeError: Error parsing message with type 'kinetoscope.perfetto.TracePacket': "
                            "Wire format was corrupt") == P_BAD ? P_UNPARSED : P_FAIL;
    Packet p;
    read_packet(r, bytes, &p);
    Sequence *seq = r->oom ? NULL : sequence_of(r, &p);
    if (!seq) return P_FAIL;
    if (NSPANS(r, S_EVENT)) return track_event(r, seq, &p, check.legacy);
    if (NSPANS(r, S_DESCRIPTOR)) return describe(r);
    if (NSPANS(r, S_CHROME)) return chrome_metadata(r);
    if (p.has_compressed && SPAN_LEN(p.compressed)) {
        if (nested) return bad(r, "ValueError: compressed packets inside compressed packets");
        *compressed = p.compressed;
        return P_COMPRESSED;
    }
    return P_OK;
}

/* events.py _skip: a packet that could not be read, and the first one's words. */
static int skip(Reader *r, const char *words, size_t n) {
    r->bad_packets++;
    return r->first_bad.len ? 1 : buf_put(&r->first_bad, words, n);
}

/* ---- the end of the file ------------------------------------------------------------------ */

static int compare_order(const void *a, const void *b) {
    uint64_t x = **(const uint64_t *const *)a, y = **(const uint64_t *const *)b;
    return x < y ? -1 : x > y;
}

/* Slices still open end at the last timestamp (no arrows); flow ids seen once keep their
   lone event (then every event can go out); the queue keeps no spare blocks from now on.
   The count of unended slices, -1 on failure. */
static int64_t finish(Reader *r) {
    queue_end_spares(&r->queue);
    size_t n_stacks = VEC_LEN(r->stacks, Stack), n_open = 0;
    const uint64_t **order = malloc((n_stacks + 1) * sizeof *order);
    if (!order) return -1;
    for (size_t i = 0; i < n_stacks; i++)
        if (VEC_LEN(VEC_AT(r->stacks, Stack, i).opens, Open)) order[n_open++] = &VEC_AT(r->stacks, Stack, i).order;
    qsort(order, n_open, sizeof *order, compare_order);
    int64_t unended = 0;
    int ok = 1;
    for (size_t s = 0; s < n_open && ok; s++) {
        Stack *stack = (Stack *)((const char *)order[s] - offsetof(Stack, order));
        uint64_t track = stack->track;
        for (size_t k = 0; k < VEC_LEN(stack->opens, Open) && ok; k++) {
            Open *begun = &VEC_AT(stack->opens, Open, k);
            Record *rec = queue_at(&r->queue, begun->seq);
            unended++;
            ok = place_of(r, track, rec);
            rec->ts = micros(begun->ts);
            rec->dur = r->last_ts > begun->ts ? micros(r->last_ts - begun->ts) : 0.0;
            record_fill(r, rec, rec->args_len);
            free(begun->flows);
            begun->flows = NULL;
        }
        stack->opens.len = 0;
    }
    free(order);
    r->open_tracks = 0;
    r->open_bytes = 0;
    r->open_slices = 0;
    size_t n_flows = VEC_LEN(r->flows, FlowEnd), lone = 0;
    const uint64_t **flows = ok ? malloc((n_flows + 1) * sizeof *flows) : NULL;
    ok = ok && flows;
    for (size_t i = 0; ok && i < n_flows; i++)
        if (VEC_AT(r->flows, FlowEnd, i).live) flows[lone++] = &VEC_AT(r->flows, FlowEnd, i).order;
    if (ok) qsort(flows, lone, sizeof *flows, compare_order);
    for (size_t i = 0; ok && i < lone; i++) {
        const FlowEnd *f = (const FlowEnd *)((const char *)flows[i] - offsetof(FlowEnd, order));
        At at = {f->pid, f->tid, f->cat, f->ts};
        int fail = 0;
        uint32_t kind = flow_kind_of(r, f->cat, &fail) == FLOW_KIND_AC2G ? r->ac2g : r->fwdbwd;
        ok = !fail && flow_row(r, f->terminating ? PH_F : PH_S, &at, f->id, kind);
    }
    free(flows);
    map_clear(&r->flow_index);
    r->flows.len = 0;
    r->free_flow = NO_STR;
    r->live_flows = 0;
    return ok ? unended : -1;
}

#endif
