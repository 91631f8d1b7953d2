/* The reader's state between packets and what it keeps of them, as events.py's
 * PacketReader keeps it: each packet sequence's interned tables, the tracks, the slices
 * still open per track, the flow ids seen once, the events in begin order; and what it
 * holds, counted as held.py counts it (the load's memory cap).
 */
#ifndef KINETOSCOPE_PF_READER_H
#define KINETOSCOPE_PF_READER_H
#include "_pf_event_args.h"
#include "_pf_rows.h"
#include "_pf_tracks.h"

#define OPEN_COST 500
#define FLOW_COST 300
#define PLACE_COST 150
#define SEQUENCE_COST 800
#define ENTRY_COST 120

enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };

typedef struct {
    uint64_t ts;
    uint64_t seq; /* its record */
    uint32_t nflows, nends;
    uint64_t *flows; /* flows then ends */
    int64_t cost;
} Open;

typedef struct {
    Buf opens;      /* Open, bottom first */
    uint64_t order; /* when it last went from empty to not (dict order at the end) */
    uint64_t track;
} Stack;

typedef struct {
    uint64_t id, order;
    uint32_t pid, tid, cat;
    double ts;
    uint8_t terminating, live;
} FlowEnd;

typedef struct Reader Reader;

struct Reader {
    PyObject_HEAD
    Texts texts;
    Values values;
    Tracks tracks;
    Map seq_index;
    Buf seqs; /* Sequence */
    Map stack_index;
    Buf stacks; /* Stack */
    uint64_t open_order;
    int64_t open_tracks;
    Queue queue; /* the events in begin order */
    Map flow_index;
    Buf flows; /* FlowEnd */
    uint32_t free_flow;
    uint64_t flow_order;
    int64_t live_flows;
    /* counts */
    int64_t packets, bad_packets, unmatched_ends, events_out;
    Buf first_bad;
    uint64_t last_ts;
    int64_t open_bytes, out_bytes, tables_bytes;
    int64_t open_slices; /* begun, not ended: at most max_open */
    /* output */
    OutChunk chunk;
    Buf ready; /* OutChunk */
    uint32_t serial;
    Codes table_codes[N_TABLES];
    size_t delivered; /* events of the delivery under way */
    size_t args_hint; /* args bytes of the last chunk cut: the next one's args room */
    int delivering;
    /* scratch */
    Enc enc;
    CheckCache check_cache; /* of the packets checked here (none given by check_packets) */
    Hooks hooks;
    Buf args, joined, tmp, msg;
    Buf spans[5];
    Buf cat_iids, cats, flows_out, ends_out, flows_old, ends_old, link, annotations;
    Core core;        /* of the args in `args` */
    const uint8_t *prepared; /* the packet's args encoded ahead (_pf_prepare.h), or NULL */
    /* the last sequence and place asked for (most packets follow the one before) */
    uint32_t last_seq, last_seq_at;
    uint64_t last_track;
    uint32_t last_place_generation, last_pid, last_tid;
    /* limits and Python */
    int64_t cap, builder_held, check_every, batch, batch_bytes, max_open;
    PyObject *callbacks;
    PyThreadState *save; /* while the GIL is let go */
    int busy, oom;
    uint32_t ac2g, fwdbwd; /* text ids */
    uint64_t seed;
    uint64_t args_gen; /* the last Sequence.args_gen given */
};

/* Runs `code` with the GIL (taken back while it is let go). */
#define WITH_GIL(r, code)                                                                    \
    do {                                                                                     \
        PyThreadState *gil_save_ = (r)->save;                                                \
        if (gil_save_) PyEval_RestoreThread(gil_save_);                                      \
        (r)->save = NULL;                                                                    \
        code;                                                                                \
        if (gil_save_) (r)->save = PyEval_SaveThread();                                      \
    } while (0)

static int64_t held_bytes(const Reader *r) {
    return r->open_bytes + r->out_bytes + r->tables_bytes + r->live_flows * FLOW_COST +
           (r->open_tracks + (int64_t)r->tracks.unknown.count) * PLACE_COST + r->tracks.nbytes +
           (int64_t)VEC_LEN(r->tracks.meta, Meta) * META_COST;
}

/* Over the memory cap, or more slices open at once than the trace can honestly hold. */
static int over_cap(const Reader *r) {
    return held_bytes(r) + r->builder_held > r->cap || r->open_slices > r->max_open;
}

/* ---- records ------------------------------------------------------------------------------ */

/* A new event at the end of the order with the args in `args` and its core columns
   (`core`; NULL: none of its args are); its sequence number, or UINT64_MAX when out of
   memory. `filled`: complete now (its cost counted as held). */
static uint64_t record_new(Reader *r, int ph, const Buf *args, int filled, const Core *core) {
    uint8_t packed[CORE_PACKED_MAX];
    size_t packed_len = core ? core_pack(core, packed) : 0;
    uint64_t seq = queue_push(&r->queue, ph, args ? args->data : NULL, args ? args->len : 0, packed,
                              packed_len);
    if (seq != UINT64_MAX && filled) {
        queue_at(&r->queue, seq)->filled = 1;
        r->out_bytes += EVENT_COST + (args ? (int64_t)args->len : 0);
    }
    return seq;
}

/* A record's packed core columns (*len bytes; 0: its defaults, its args have none): its
   joined args' where its end joined args to it, else those packed after its args. */
static const uint8_t *record_core(const Reader *r, uint64_t seq, const Record *rec, size_t *len) {
    uint32_t i;
    if (rec->joined && map_get(&r->queue.joined, seq, &i)) {
        const Joined *joined = &VEC_AT(r->queue.joined_args, Joined, i);
        *len = joined->core_len;
        return (const uint8_t *)joined->text + joined->len;
    }
    *len = rec->core_len;
    return queue_core(rec);
}

/* A slice's record filled at its end: its cost counted as held. */
static void record_fill(Reader *r, Record *rec, size_t args_len) {
    rec->filled = 1;
    r->out_bytes += EVENT_COST + (int64_t)args_len;
}

/* The args of a slice joined at its end, and their core columns, kept aside from the arena. */
static int record_join(Reader *r, uint64_t seq, const Buf *text, const Core *core) {
    Queue *q = &r->queue;
    uint8_t packed[CORE_PACKED_MAX];
    size_t packed_len = core_pack(core, packed);
    Joined joined = {malloc(text->len + packed_len), (uint32_t)text->len, (uint8_t)packed_len};
    uint32_t at = (uint32_t)VEC_LEN(q->joined_args, Joined);
    if (!joined.text) return 0;
    memcpy(joined.text, buf_at(text, 0), text->len);
    memcpy(joined.text + text->len, packed, packed_len);
    if (!q->joined.slots && !map_init(&q->joined, 16, r->seed)) return 0;
    if (!buf_put(&q->joined_args, &joined, sizeof joined) || !map_put(&q->joined, seq, at)) {
        free(joined.text);
        return 0;
    }
    queue_at(q, seq)->joined = 1;
    return 1;
}

/* The args text of a record (in the arena, or its joined ones). */
static const char *record_args(Reader *r, uint64_t seq, const Record *rec, size_t *len) {
    uint32_t i;
    if (rec->joined && map_get(&r->queue.joined, seq, &i)) {
        *len = VEC_AT(r->queue.joined_args, Joined, i).len;
        return VEC_AT(r->queue.joined_args, Joined, i).text;
    }
    *len = rec->args_len;
    return queue_args(&r->queue, rec);
}

static void record_forget_join(Reader *r, uint64_t seq) {
    uint32_t i;
    if (!map_get(&r->queue.joined, seq, &i)) return;
    Joined *joined = &VEC_AT(r->queue.joined_args, Joined, i);
    free(joined->text);
    joined->text = NULL;
    map_remove(&r->queue.joined, seq);
    if (!r->queue.joined.count) r->queue.joined_args.len = 0;
}

/* ---- chunks -------------------------------------------------------------------------------- */

/* Into a buffer with room reserved (chunk_start). */
static void put_i32(Buf *b, int32_t v) {
    memcpy(b->data + b->len, &v, 4);
    b->len += 4;
}

static void put_wide(Buf *b, const void *v) {
    memcpy(b->data + b->len, v, 8);
    b->len += 8;
}

/* Room for `batch` more rows (pages not written are not memory yet): a chunk is cut
   after a part of a delivery, so it may hold up to twice that. */
static int chunk_room(Reader *r) {
    OutChunk *c = &r->chunk;
    size_t rows = (size_t)r->batch;
    int ok = buf_reserve(&c->ph, 4 * rows) && buf_reserve(&c->has_stack, rows);
    for (int t = 0; t < N_TABLES; t++) ok = ok && buf_reserve(&c->codes[t], 4 * rows);
    for (int w = 0; w < N_WIDE; w++) ok = ok && buf_reserve(&c->wide[w], 8 * rows);
    /* A new chunk's args room: the last chunk's args and an eighth, at once, rather than
       grown from nothing by doubling (a copy of most of its args on the way). */
    if (ok && !c->rows) ok = buf_reserve(&c->args, r->args_hint + r->args_hint / 8);
    if (ok) c->room = c->rows + rows;
    return ok;
}

/* The wide column of each core column (Core's ints, then its floats), as core_pack orders them. */
static const uint8_t CORE_COLUMNS[N_INTS + N_FLOATS] = {
    W_EXTERNAL_ID, W_EXTERNAL_ID_LOWER, W_CORRELATION, W_DEVICE, W_STREAM, W_ADDR, W_DEVICE_TYPE,
    W_DEVICE_ID, W_PYTHON_ID, W_PYTHON_PARENT_ID,
    W_BLOCKS_PER_SM, W_OCCUPANCY, W_NBYTES, W_TOTAL_ALLOCATED, W_TOTAL_RESERVED,
};

/* A row's core columns written from their packed form (core_pack's; len 0: the defaults),
   without unpacking them into a Core first; its has_stack and python flags. */
static void put_core(OutChunk *c, const uint8_t *packed, size_t len) {
    static const int64_t no_int = -1;
    static const double no_float = NAN; /* bit for bit core_defaults' */
    uint32_t mask = 0;
    if (len >= 4) memcpy(&mask, packed, 4);
    const uint8_t *value = packed + 4;
    for (int k = 0; k < N_INTS + N_FLOATS; k++) {
        const void *from = k < N_INTS ? (const void *)&no_int : (const void *)&no_float;
        if (mask >> k & 1) {
            from = value;
            value += 8;
        }
        put_wide(&c->wide[CORE_COLUMNS[k]], from);
    }
    c->has_stack.data[c->has_stack.len++] = (char)(mask >> 15 & 1);
    c->python |= (uint8_t)(mask >> 16 & 1);
}

/* One event into the chunk being filled: its columns and core args (packed: core_len bytes). */
static int chunk_row(Reader *r, const Record *rec, const char *args, size_t args_len, const uint8_t *core,
                     size_t core_len) {
    OutChunk *c = &r->chunk;
    if (c->rows == c->room && !chunk_room(r)) return 0;
    uint32_t ids[N_TABLES] = {rec->name, rec->cat, rec->pid, rec->tid};
    for (int t = 0; t < N_TABLES; t++) {
        int32_t code;
        if (!codes_lookup(&r->table_codes[t], ids[t], r->serial, &c->ids[t], &code)) return 0;
        put_i32(&c->codes[t], code);
    }
    int64_t len = (int64_t)args_len, id = rec->id;
    put_wide(&c->wide[W_TS], &rec->ts);
    put_wide(&c->wide[W_DUR], &rec->dur);
    put_wide(&c->wide[W_ID], &id);
    put_wide(&c->wide[W_ARGS_LEN], &len);
    put_core(c, core, core_len);
    put_i32(&c->ph, rec->ph);
    if (!buf_put(&c->args, args, args_len)) return 0;
    c->rows++;
    return 1;
}

static int cut_chunk(Reader *r) {
    if (!r->chunk.rows) return 1;
    size_t args_len = r->chunk.args.len;
    if (!buf_put(&r->ready, &r->chunk, sizeof r->chunk)) return 0;
    r->args_hint = args_len;
    memset(&r->chunk, 0, sizeof r->chunk);
    r->serial++;
    return 1;
}

/* read.py's _Batches: after each part of `batch` delivered events, a full chunk is cut.
   1: it was; 0: it was not; -1: out of memory. */
static int batch_check(Reader *r) {
    if ((int64_t)r->chunk.rows < r->batch && (int64_t)r->chunk.args.len < r->batch_bytes) return 0;
    return cut_chunk(r) ? 1 : -1;
}

/* One event out; as batch_check. */
static int deliver(Reader *r, uint64_t seq, const Record *rec) {
    size_t len;
    const char *args = record_args(r, seq, rec, &len);
    size_t core_len;
    const uint8_t *core = record_core(r, seq, rec, &core_len);
    if (!chunk_row(r, rec, args, len, core, core_len)) return -1;
    r->out_bytes -= EVENT_COST + (int64_t)len;
    if (rec->joined) record_forget_join(r, seq);
    r->events_out++;
    return ++r->delivered % (size_t)r->batch == 0 ? batch_check(r) : 0;
}

/* With `all_done`, the filled events behind slices still open go out too; the open ones
   keep their order (and their slices learn their new places). */
static int take_all(Reader *r) {
    Queue *q = &r->queue, kept;
    memset(&kept, 0, sizeof kept);
    kept.first = kept.head = kept.end = q->end; /* fresh sequence numbers */
    Map moved;
    if (!map_init(&moved, 64, r->seed)) return 0;
    int ok = 1;
    while (ok && queue_len(q)) {
        uint64_t seq = q->head;
        Record rec = *queue_at(q, seq);
        if (rec.filled) {
            ok = deliver(r, seq, &rec) >= 0;
        } else {
            uint64_t fresh = queue_push(&kept, rec.ph, queue_args(q, &rec), rec.args_len,
                                        queue_core(&rec), rec.core_len);
            if (fresh != UINT64_MAX) {
                Record *copy = queue_at(&kept, fresh);
                const char *args = copy->args;
                *copy = rec;
                copy->args = args;
            }
            ok = fresh != UINT64_MAX && map_put(&moved, seq, (uint32_t)(fresh - kept.first));
        }
        queue_pop(q);
    }
    for (size_t i = 0; ok && i < VEC_LEN(r->stacks, Stack); i++) {
        Stack *stack = &VEC_AT(r->stacks, Stack, i);
        for (size_t k = 0; k < VEC_LEN(stack->opens, Open); k++) {
            Open *open = &VEC_AT(stack->opens, Open, k);
            uint32_t index;
            if (map_get(&moved, open->seq, &index)) open->seq = kept.first + index;
        }
    }
    map_free(&moved);
    if (!ok) {
        queue_free(&kept);
        return 0;
    }
    kept.joined = q->joined; /* open slices have no joined args: it is empty */
    kept.joined_args = q->joined_args;
    q->joined = (Map){0};
    q->joined_args = (Buf){0};
    kept.spare_records = q->spare_records; /* the spares go on with the queue (kept has none) */
    kept.spare_arena = q->spare_arena;
    kept.no_spares = q->no_spares;
    q->spare_records = q->spare_arena = (Buf){0};
    queue_free(q);
    *q = kept;
    return 1;
}

/* events.py's _take, delivered as one list: the filled events at the head of the order;
   with `all_done`, every filled one. Stops after each chunk it cuts from the head (1: go
   on), so a delivery holds at most one chunk more than its events; 0 when done. */
static int take(Reader *r, int all_done) {
    Queue *q = &r->queue;
    if (!r->delivering) {
        r->delivering = 1;
        r->delivered = 0;
    }
    while (queue_len(q) && queue_at(q, q->head)->filled) {
        Record rec = *queue_at(q, q->head);
        int cut = deliver(r, q->head, &rec);
        queue_pop(q);
        if (cut < 0) return -1;
        if (cut) return 1;
    }
    if (all_done && queue_len(q) && !take_all(r)) return -1;
    r->delivering = 0;
    return r->delivered % (size_t)r->batch && batch_check(r) < 0 ? -1 : 0;
}

#endif
