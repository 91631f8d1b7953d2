/* Track events, slices, descriptors and metadata of one packet (events.py's _packet,
 * _event, _end; tracks.py's describe; read.py's metadata values through Python).
 */
#ifndef KINETOSCOPE_PF_PACKET_H
#define KINETOSCOPE_PF_PACKET_H
#include "_pf_events.h"
#include "_pf_prepare.h"

typedef struct {
    uint64_t name_iid, track, correlation, counter_bits;
    double dcounter;
    int32_t type;
    Span name;
    uint8_t has_name, has_type, has_track, has_counter, has_double, has_correlation;
} TrackEvent;

static int push_u64(Buf *b, uint64_t v) { return buf_put(b, &v, 8); }

/* Values of a repeated number field: one, or packed (varints or fixed64s). */
static int push_numbers(Buf *b, const Field *f, int fixed) {
    if (f->wire == (fixed ? WIRE_FIXED64 : WIRE_VARINT)) return push_u64(b, f->value);
    if (f->wire != WIRE_LEN) return 1;
    const uint8_t *p = f->body.p;
    while (p < f->body.end) {
        uint64_t v;
        if (fixed) {
            memcpy(&v, p, 8);
            p += 8;
        } else if (!(p = pf_varint(p, f->body.end, &v))) {
            return 1;
        }
        if (!push_u64(b, v)) return 0;
    }
    return 1;
}

/* The fields of one span of a track event (its occurrences merge), one at a time. */
static int read_event_fields(Reader *r, TrackEvent *e, Span s) {
    Field f = pf_fields(s);
    int ok = 1;
    while (ok && pf_next(&f)) {
        int varint = f.wire == WIRE_VARINT;
        switch (f.number) {
            case 3: ok = push_numbers(&r->cat_iids, &f, 0); break;
            case 22: if (f.wire == WIRE_LEN) ok = buf_put(&r->cats, &f.body, sizeof f.body); break;
            case 10: if (varint) e->name_iid = f.value; break;
            case 23: if (f.wire == WIRE_LEN) { e->name = f.body; e->has_name = 1; } break;
            case 9: if (varint) { e->type = (int32_t)f.value; e->has_type = 1; } break;
            case 11: if (varint) { e->track = f.value; e->has_track = 1; } break;
            case 30: if (varint) { e->counter_bits = f.value; e->has_counter = 1; } break;
            case 44:
                if (f.wire == WIRE_FIXED64) {
                    memcpy(&e->dcounter, &f.value, 8);
                    e->has_double = 1;
                }
                break;
            case 36: ok = push_numbers(&r->flows_old, &f, 0); break;
            case 47: ok = push_numbers(&r->flows_out, &f, 1); break;
            case 42: ok = push_numbers(&r->ends_old, &f, 0); break;
            case 48: ok = push_numbers(&r->ends_out, &f, 1); break;
            case 52: if (varint) { e->correlation = f.value; e->has_correlation = 1; } break;
            case 4: if (f.wire == WIRE_LEN) ok = buf_put(&r->annotations, &f.body, sizeof f.body); break;
            default: break;
        }
    }
    return ok;
}

/* As read_event_fields, the fields of the tags most events have read by their tag byte
   (an annotation, category iid, type, name iid, track: ~40 instructions a field through
   pf_next and the switch on its number); from any other tag on, by read_event_fields. */
static int read_event_span(Reader *r, TrackEvent *e, Span s) {
    const uint8_t *p = s.p, *end = s.end;
    while (p < end) {
        const uint8_t *q = p + 1;
        uint64_t v;
        uint8_t tag = *p;
        if (tag == 0x22) { /* 4 */
            if (!(q = pf_short_varint(q, end, 5, (uint64_t)1 << 32, &v)) || v > (uint64_t)(end - q)) break;
            Span body = {q, q + v};
            if (!buf_put(&r->annotations, &body, sizeof body)) return 0;
            q += v;
        } else if (tag == 0x18 || tag == 0x48 || tag == 0x50 || tag == 0x58) { /* 3, 9, 10, 11 */
            if (!(q = pf_varint(q, end, &v))) break;
            if (tag == 0x18 && !push_u64(&r->cat_iids, v)) return 0;
            if (tag == 0x48) e->type = (int32_t)v, e->has_type = 1;
            if (tag == 0x50) e->name_iid = v;
            if (tag == 0x58) e->track = v, e->has_track = 1;
        } else {
            break;
        }
        p = q;
    }
    return p < end ? read_event_fields(r, e, (Span){p, end}) : 1;
}

static int read_track_event(Reader *r, TrackEvent *e) {
    memset(e, 0, sizeof *e);
    Buf *lists[] = {&r->cat_iids, &r->cats, &r->flows_out, &r->ends_out, &r->flows_old, &r->ends_old,
                    &r->annotations};
    for (int i = 0; i < 7; i++) lists[i]->len = 0;
    const Span *spans = SPANS(r, S_EVENT);
    int ok = 1;
    for (size_t k = 0; k < NSPANS(r, S_EVENT) && ok; k++) ok = read_event_span(r, e, spans[k]);
    /* flows: new ids then old ones (and ends likewise), as one list each */
    return ok && buf_put(&r->flows_out, r->flows_old.data, r->flows_old.len) &&
           buf_put(&r->ends_out, r->ends_old.data, r->ends_old.len);
}

/* The event's category: its interned categories, then its own, joined by commas. */
static uint32_t event_category(Reader *r, Sequence *seq) {
    size_t n_iids = VEC_LEN(r->cat_iids, uint64_t), n_cats = VEC_LEN(r->cats, Span);
    if (n_iids + n_cats == 0) return NO_STR;
    if (n_iids == 1 && n_cats == 0) {
        uint32_t id = interned_text(r, seq, T_CATEGORIES, VEC_AT(r->cat_iids, uint64_t, 0));
        uint32_t len;
        if (id != NO_STR) text_at(&r->texts, id, &len);
        return id == NO_STR ? NO_STR - 1 : len ? id : NO_STR;
    }
    r->tmp.len = 0;
    for (size_t i = 0; i < n_iids; i++) {
        Entry *e = sequence_entry(seq, T_CATEGORIES, VEC_AT(r->cat_iids, uint64_t, i));
        if ((i && !buf_byte(&r->tmp, ',')) || (e && !buf_put(&r->tmp, buf_at(&seq->bytes, e->off), e->len)))
            return NO_STR - 1;
    }
    for (size_t i = 0; i < n_cats; i++)
        if (((n_iids + i) && !buf_byte(&r->tmp, ',')) || !put_text(&r->tmp, VEC_AT(r->cats, Span, i)))
            return NO_STR - 1;
    if (!r->tmp.len) return NO_STR;
    uint32_t id = texts_id(&r->texts, r->tmp.data, r->tmp.len);
    return id == NO_STR ? NO_STR - 1 : id;
}

static int place_of(Reader *r, uint64_t track, Record *rec) {
    if (track == r->last_track && r->last_place_generation == r->tracks.generation) {
        rec->pid = r->last_pid;
        rec->tid = r->last_tid;
        return 1;
    }
    if (!track_place(&r->tracks, &r->values, &r->texts, track, &rec->pid, &rec->tid)) return 0;
    r->last_track = track;
    r->last_place_generation = r->tracks.generation;
    r->last_pid = rec->pid;
    r->last_tid = rec->tid;
    return 1;
}

static Stack *stack_of(Reader *r, uint64_t track, int create) {
    uint32_t at;
    if (map_get(&r->stack_index, track, &at)) return &VEC_AT(r->stacks, Stack, at);
    if (!create) return NULL;
    Stack fresh = {{0}, 0, track};
    at = (uint32_t)VEC_LEN(r->stacks, Stack);
    if (!buf_put(&r->stacks, &fresh, sizeof fresh) || !map_put(&r->stack_index, track, at)) return NULL;
    return &VEC_AT(r->stacks, Stack, at);
}

/* A slice's end: the complete event in its begin's place, args joined (events.py _end). */
static int end_slice(Reader *r, uint64_t track, uint64_t ts, int later) {
    Stack *stack = stack_of(r, track, 0);
    size_t depth = stack ? VEC_LEN(stack->opens, Open) : 0;
    if (!depth) {
        r->unmatched_ends++;
        return P_OK;
    }
    Open begun = VEC_AT(stack->opens, Open, depth - 1);
    Record *rec = queue_at(&r->queue, begun.seq);
    size_t args_len = rec->args_len;
    if (r->args.len) { /* the end's annotations join the begin's */
        if (later) return P_BAD;
        if (!join_args(&r->joined, queue_args(&r->queue, rec), rec->args_len, r->args.data,
                       r->args.len, r->seed))
            return P_FAIL;
        Core joined = core_of(r->joined.data, r->joined.len);
        if (!record_join(r, begun.seq, &r->joined, &joined)) return P_FAIL;
        args_len = r->joined.len;
    }
    rec = queue_at(&r->queue, begun.seq);
    if (!place_of(r, track, rec)) return P_FAIL;
    rec->ts = micros(begun.ts);
    rec->dur = micros_between(ts, begun.ts);
    record_fill(r, rec, args_len);
    stack->opens.len -= sizeof(Open);
    if (depth == 1) r->open_tracks--;
    r->open_slices--;
    r->open_bytes -= begun.cost;
    At at = {rec->pid, rec->tid, rec->cat, rec->ts};
    /* the begin's flows and ends, then the end's */
    r->link.len = 0;
    int ok = buf_put(&r->link, begun.flows, 8 * begun.nflows) &&
             buf_put(&r->link, r->flows_out.data, r->flows_out.len) &&
             buf_put(&r->link, begun.flows + begun.nflows, 8 * begun.nends) &&
             buf_put(&r->link, r->ends_out.data, r->ends_out.len);
    free(begun.flows);
    if (!ok) return P_FAIL;
    uint32_t nflows = begun.nflows + (uint32_t)VEC_LEN(r->flows_out, uint64_t);
    uint32_t nends = begun.nends + (uint32_t)VEC_LEN(r->ends_out, uint64_t);
    const uint64_t *ids = (const uint64_t *)buf_at(&r->link, 0);
    return link_flows(r, &at, ids, nflows, ids + nflows, nends) ? P_OK : P_FAIL;
}

static int begin_slice(Reader *r, uint64_t track, uint64_t ts, uint32_t name, uint32_t cat) {
    uint64_t seq = record_new(r, PH_X, &r->args, 0, r->enc.cores ? &r->core : NULL);
    if (seq == UINT64_MAX) return P_FAIL;
    Record *rec = queue_at(&r->queue, seq);
    rec->name = name;
    rec->cat = cat;
    Open open = {ts, seq, (uint32_t)VEC_LEN(r->flows_out, uint64_t),
                 (uint32_t)VEC_LEN(r->ends_out, uint64_t), NULL, 0};
    size_t ids = (size_t)open.nflows + open.nends;
    if (ids && !(open.flows = malloc(8 * ids))) return P_FAIL;
    if (ids) {
        memcpy(open.flows, buf_at(&r->flows_out, 0), r->flows_out.len);
        memcpy(open.flows + open.nflows, buf_at(&r->ends_out, 0), r->ends_out.len);
    }
    uint32_t name_len = 0, cat_len = 0;
    text_at(&r->texts, name, &name_len);
    if (cat != NO_STR) text_at(&r->texts, cat, &cat_len);
    open.cost = OPEN_COST + (int64_t)r->args.len + name_len + cat_len + 8 * (int64_t)ids;
    Stack *stack = stack_of(r, track, 1);
    if (!stack || !buf_put(&stack->opens, &open, sizeof open)) {
        free(open.flows);
        return P_FAIL;
    }
    if (VEC_LEN(stack->opens, Open) == 1) {
        stack->order = ++r->open_order;
        r->open_tracks++;
    }
    r->open_bytes += open.cost;
    r->open_slices++;
    return P_OK;
}

/* An instant or a counter: a complete event now. */
static int point_event(Reader *r, int ph, uint64_t track, uint64_t ts, uint32_t name, uint32_t cat,
                       const Buf *args, int linked) {
    /* an instant's core columns; a counter's value has none */
    uint64_t seq = record_new(r, ph, args, 1, linked && r->enc.cores ? &r->core : NULL);
    if (seq == UINT64_MAX) return P_FAIL;
    Record *rec = queue_at(&r->queue, seq);
    rec->name = name;
    rec->cat = cat;
    rec->ts = micros(ts);
    if (!place_of(r, track, rec)) return P_FAIL;
    if (!linked) return P_OK;
    At at = {rec->pid, rec->tid, rec->cat, rec->ts};
    const uint64_t *flows = (const uint64_t *)buf_at(&r->flows_out, 0);
    const uint64_t *ends = (const uint64_t *)buf_at(&r->ends_out, 0);
    return link_flows(r, &at, flows, (uint32_t)VEC_LEN(r->flows_out, uint64_t), ends,
                      (uint32_t)VEC_LEN(r->ends_out, uint64_t)) ? P_OK : P_FAIL;
}

static int track_event(Reader *r, Sequence *seq, const Packet *p, int legacy) {
    TrackEvent e;
    if (!read_track_event(r, &e)) return P_FAIL;
    if (p->ts > r->last_ts) r->last_ts = p->ts;
    uint64_t track = e.has_track ? e.track : seq->default_track;
    int kind = e.has_type ? e.type : 0;
    r->enc.seq = seq;
    int got = ENC_OK, named;
    if (r->prepared) { /* encoded ahead (_pf_prepare.h) */
        r->enc.later = 0;
        if (!prepared_args(r->prepared, &r->args, &r->core, &r->enc.cores, &named)) return P_FAIL;
    } else {
        got = encode_annotations(&r->enc, &r->args, &r->core, (const Span *)r->annotations.data,
                                 VEC_LEN(r->annotations, Span), legacy, &named);
    }
    if (got == ENC_OK && e.has_correlation && !named)
        got = add_correlation(&r->enc, &r->args, &r->core, e.correlation);
    if (got == ENC_FAIL) return P_FAIL;
    if (got == ENC_BAD || r->enc.later) {
        r->msg.len = 0;
        if (!buf_put(&r->msg, r->enc.msg.data, r->enc.msg.len)) return P_FAIL;
        if (got == ENC_BAD) return P_BAD;
    }
    int later = r->enc.later;
    if (kind == SLICE_END) return end_slice(r, track, p->ts, later);
    uint32_t name = e.has_name ? texts_id_of(&r->texts, e.name, &r->tmp)
                               : interned_text(r, seq, T_NAMES, e.name_iid);
    uint32_t cat = event_category(r, seq);
    if (name == NO_STR || cat == NO_STR - 1) return P_FAIL;
    if (kind == SLICE_BEGIN) return later ? P_BAD : begin_slice(r, track, p->ts, name, cat);
    if (kind == INSTANT) return later ? P_BAD : point_event(r, PH_I, track, p->ts, name, cat, &r->args, 1);
    if (kind != COUNTER) return P_OK;
    Buf *value = &r->joined;
    value->len = 0;
    int ok = buf_str(value, "{\"value\":") &&
             (e.has_double ? json_double(value, e.dcounter)
              : e.has_counter ? json_i64(value, (int64_t)e.counter_bits) : buf_str(value, "0")) &&
             buf_byte(value, '}');
    uint32_t len;
    text_at(&r->texts, name, &len);
    if (!len) name = track_name(&r->tracks, &r->texts, track);
    if (!ok || name == NO_STR) return P_FAIL;
    return point_event(r, PH_C, track, p->ts, name, cat, value, 0);
}

#endif
