/* One packet at a time, as events.py's PacketReader reads it (its docstring has the
 * mapping): the packet's sequence first (cleared, defaults, interned data), then the first
 * of its track event, track descriptor, Chrome metadata or compressed packets.
 */
#ifndef KINETOSCOPE_PF_EVENTS_H
#define KINETOSCOPE_PF_EVENTS_H
#include "_pf_reader.h"

enum { P_OK, P_BAD, P_UNPARSED, P_COMPRESSED, P_FAIL };

/* The packet failed: r->msg says why (as "Type: words"). */
static int bad(Reader *r, const char *words) {
    r->msg.len = 0;
    return buf_str(&r->msg, words) ? P_BAD : P_FAIL;
}

enum { S_EVENT, S_DESCRIPTOR, S_INTERNED, S_DEFAULTS, S_CHROME };

typedef struct {
    uint64_t ts;
    uint32_t seq_id, flags;
    int cleared, has_compressed;
    Span compressed;
} Packet;

/* A packet's fields from s on, one at a time (read_packet's of other tags). */
static void read_packet_fields(Reader *r, Span s, Packet *p) {
    static const uint32_t SPAN_FIELDS[5] = {11, 60, 12, 59, 5};
    Field f = pf_fields(s);
    while (pf_next(&f)) {
        if (f.wire == WIRE_VARINT) {
            if (f.number == 8) p->ts = f.value;
            else if (f.number == 10) p->seq_id = (uint32_t)f.value;
            else if (f.number == 13) p->flags = (uint32_t)f.value;
            else if (f.number == 41) p->cleared = f.value != 0;
        } else if (f.wire == WIRE_LEN) {
            if (f.number == 50) {
                p->compressed = f.body;
                p->has_compressed = 1;
            }
            for (int i = 0; i < 5; i++)
                if (f.number == SPAN_FIELDS[i] && !buf_put(&r->spans[i], &f.body, sizeof f.body)) r->oom = 1;
        }
    }
}

/* As read_packet_fields, the fields of the tags most packets have (timestamp, sequence id,
   flags, track event, interned data) read by their tag byte; from any other tag on, by
   read_packet_fields. */
static void read_packet(Reader *r, Span s, Packet *p) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 5; i++) r->spans[i].len = 0;
    const uint8_t *at = s.p, *end = s.end;
    while (at < end) {
        const uint8_t *q = at + 1;
        uint64_t v;
        uint8_t tag = *at;
        if (tag == 0x5a || tag == 0x62) { /* 11, 12 */
            if (!(q = pf_short_varint(q, end, 5, (uint64_t)1 << 32, &v)) || v > (uint64_t)(end - q)) break;
            Span body = {q, q + v};
            if (!buf_put(&r->spans[tag == 0x5a ? S_EVENT : S_INTERNED], &body, sizeof body)) r->oom = 1;
            q += v;
        } else if (tag == 0x40 || tag == 0x50 || tag == 0x68) { /* 8, 10, 13 */
            if (!(q = pf_varint(q, end, &v))) break;
            if (tag == 0x40) p->ts = v;
            if (tag == 0x50) p->seq_id = (uint32_t)v;
            if (tag == 0x68) p->flags = (uint32_t)v;
        } else {
            break;
        }
        at = q;
    }
    if (at < end) read_packet_fields(r, (Span){at, end}, p);
}

#define SPANS(r, i) ((const Span *)(r)->spans[i].data)
#define NSPANS(r, i) VEC_LEN((r)->spans[i], Span)

/* ---- sequences ------------------------------------------------------------------------- */

static int intern_table(Reader *r, Sequence *seq, uint32_t number, int table) {
    Occurrences o = pf_occurrences(SPANS(r, S_INTERNED), NSPANS(r, S_INTERNED), number);
    Span entry;
    int changed = 0;
    while (pf_next_occurrence(&o, &entry)) {
        uint64_t iid = 0;
        Span name = {entry.p, entry.p};
        Field f = pf_fields(entry);
        while (pf_next(&f)) {
            if (f.number == 1 && f.wire == WIRE_VARINT) iid = f.value;
            else if (f.number == 2 && f.wire == WIRE_LEN) name = f.body;
        }
        size_t before = seq->bytes.len;
        if (!sequence_set(seq, table, iid, name, &changed)) return 0;
        if (table == T_ARG_NAMES || table == T_ARG_STRINGS) seq->args_gen = ++r->args_gen;
        int64_t added = ENTRY_COST + (int64_t)(seq->bytes.len - before);
        seq->nbytes += added;
        r->tables_bytes += added;
    }
    return 1;
}

static Sequence *sequence_of(Reader *r, const Packet *p) {
    uint32_t at = r->last_seq_at;
    int known = (at != NO_STR && p->seq_id == r->last_seq) || map_get(&r->seq_index, p->seq_id, &at);
    int cleared = p->cleared || (p->flags & 1);
    Sequence *seq = known ? &VEC_AT(r->seqs, Sequence, at) : NULL;
    if (!known) {
        Sequence fresh;
        at = (uint32_t)VEC_LEN(r->seqs, Sequence);
        if (!sequence_init(&fresh, r->seed) || !buf_put(&r->seqs, &fresh, sizeof fresh) ||
            !map_put(&r->seq_index, p->seq_id, at))
            return NULL;
        seq = &VEC_AT(r->seqs, Sequence, at);
    } else if (cleared) {
        r->tables_bytes -= seq->nbytes;
        sequence_clear(seq);
    }
    if (!known || cleared) {
        seq->args_gen = ++r->args_gen;
        seq->nbytes = SEQUENCE_COST;
        r->tables_bytes += SEQUENCE_COST;
    }
    r->last_seq = p->seq_id;
    r->last_seq_at = at;
    if (NSPANS(r, S_DEFAULTS)) {
        uint64_t track = 0;
        Occurrences o = pf_occurrences(SPANS(r, S_DEFAULTS), NSPANS(r, S_DEFAULTS), 11);
        Span defaults;
        while (pf_next_occurrence(&o, &defaults)) {
            Field f = pf_fields(defaults);
            while (pf_next(&f))
                if (f.number == 11 && f.wire == WIRE_VARINT) track = f.value;
        }
        seq->default_track = track;
    }
    if (NSPANS(r, S_INTERNED) &&
        !(intern_table(r, seq, 1, T_CATEGORIES) && intern_table(r, seq, 2, T_NAMES) &&
          intern_table(r, seq, 3, T_ARG_NAMES) && intern_table(r, seq, 29, T_ARG_STRINGS)))
        return NULL;
    return seq;
}

/* The text id of an interned name or category ("" when the iid is not interned). */
static uint32_t interned_text(Reader *r, Sequence *seq, int table, uint64_t iid) {
    Entry *e = sequence_entry(seq, table, iid);
    if (!e) return texts_id(&r->texts, "", 0);
    if (e->text == NO_STR) e->text = texts_id(&r->texts, buf_at(&seq->bytes, e->off), e->len);
    return e->text;
}

/* ---- flows ------------------------------------------------------------------------------- */

typedef struct {
    uint32_t pid, tid, cat;
    double ts;
} At;

/* Whether a category makes an arrow "ac2g" (flows.flow_kind), asked of Python once. */
static int flow_kind_of(Reader *r, uint32_t cat, int *fail) {
    if (cat == NO_STR) return FLOW_KIND_FWDBWD;
    Text *t = &VEC_AT(r->texts.texts, Text, cat);
    if (t->flow_kind == FLOW_KIND_UNKNOWN) {
        int kind = -1;
        WITH_GIL(r, {
            PyObject *text = text_object(&r->texts, cat);
            PyObject *got = text ? PyObject_CallMethod(r->callbacks, "flow_kind", "O", text) : NULL;
            if (got) kind = PyObject_IsTrue(got) ? FLOW_KIND_AC2G : FLOW_KIND_FWDBWD;
            Py_XDECREF(got);
            Py_XDECREF(text);
        });
        if (kind < 0) {
            *fail = 1;
            return FLOW_KIND_FWDBWD;
        }
        VEC_AT(r->texts.texts, Text, cat).flow_kind = (uint8_t)kind;
        return kind;
    }
    return t->flow_kind;
}

static int flow_row(Reader *r, int ph, const At *at, uint64_t flow, uint32_t kind) {
    uint64_t seq = record_new(r, ph, NULL, 1, NULL);
    if (seq == UINT64_MAX) return 0;
    Record *rec = queue_at(&r->queue, seq);
    rec->name = rec->cat = kind;
    rec->pid = at->pid;
    rec->tid = at->tid;
    rec->ts = at->ts;
    rec->id = flow <= (uint64_t)INT64_MAX ? (int64_t)flow : -1; /* past int64: no number */
    return 1;
}

static int in_list(const uint64_t *ids, uint32_t n, uint64_t id) {
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == id) return 1;
    return 0;
}

/* events.py's _link: the two events of a flow id are paired, the earlier one the source. */
static int link_flows(Reader *r, const At *event, const uint64_t *flows, uint32_t nflows,
                const uint64_t *ends, uint32_t nends) {
    Map end_set = {0};
    int hashed = nends > 32, fail = 0;
    if (hashed) {
        if (!map_init(&end_set, 64, r->seed)) return 0;
        for (uint32_t i = 0; i < nends; i++)
            if (!map_put(&end_set, ends[i], 1)) fail = 1;
    }
    for (uint32_t i = 0; i < nflows + nends && !fail; i++) {
        uint64_t flow = i < nflows ? flows[i] : ends[i - nflows];
        uint32_t at;
        if (!map_get(&r->flow_index, flow, &at)) {
            uint32_t dummy;
            FlowEnd fresh = {flow, ++r->flow_order, event->pid, event->tid, event->cat, event->ts,
                             (uint8_t)(hashed ? map_get(&end_set, flow, &dummy) : in_list(ends, nends, flow)), 1};
            at = r->free_flow;
            if (at != NO_STR) {
                r->free_flow = (uint32_t)VEC_AT(r->flows, FlowEnd, at).order;
                VEC_AT(r->flows, FlowEnd, at) = fresh;
            } else {
                at = (uint32_t)VEC_LEN(r->flows, FlowEnd);
                if (!buf_put(&r->flows, &fresh, sizeof fresh)) fail = 1;
            }
            if (!fail && !map_put(&r->flow_index, flow, at)) fail = 1;
            r->live_flows++;
            continue;
        }
        FlowEnd other = VEC_AT(r->flows, FlowEnd, at);
        map_remove(&r->flow_index, flow);
        VEC_AT(r->flows, FlowEnd, at).live = 0;
        VEC_AT(r->flows, FlowEnd, at).order = r->free_flow;
        r->free_flow = at;
        r->live_flows--;
        At o = {other.pid, other.tid, other.cat, other.ts};
        const At *source = other.ts <= event->ts ? &o : event;
        const At *target = other.ts <= event->ts ? event : &o;
        int ac2g = flow_kind_of(r, source->cat, &fail) == FLOW_KIND_AC2G ||
                   flow_kind_of(r, target->cat, &fail) == FLOW_KIND_AC2G;
        uint32_t kind = ac2g ? r->ac2g : r->fwdbwd;
        if (!fail && !(flow_row(r, PH_S, source, flow, kind) && flow_row(r, PH_F, target, flow, kind)))
            fail = 1;
    }
    if (hashed) map_free(&end_set);
    return !fail;
}

#endif
