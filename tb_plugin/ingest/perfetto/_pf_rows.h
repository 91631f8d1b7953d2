/* The events the reader makes, in the order their slices begin (events.py's slots: a
 * slice's place is taken at its begin and filled at its end), and the chunks they go out
 * in: columns in the layout the Python side turns into a Chunk, each chunk's tables in
 * order of first appearance, cut where read.py's batches are cut (a delivery's events in
 * parts of `batch`, a chunk closed after a part once it holds `batch` events or
 * `batch_bytes` of args).
 */
#ifndef KINETOSCOPE_PF_ROWS_H
#define KINETOSCOPE_PF_ROWS_H
#include "_pf_core.h"
#include "_pf_store.h"

#define EVENT_COST 330

enum { PH_X, PH_I, PH_C, PH_S, PH_F, N_PH };
static const char *const PH_TEXT[N_PH] = {"X", "i", "C", "s", "f"};

/* One event in begin order: filled at once (instants, counters, flow arrows) or at its
   slice's end. Its args are in the queue's arena, in the same order (a slice's args are
   known at its begin), unless its end joined args to them (`joined`: kept aside). */
typedef struct {
    double ts, dur;
    int64_t id;
    uint64_t args_at;             /* where its args are in the arena (from its start) */
    uint32_t name, cat, pid, tid; /* text ids (cat NO_STR: None) and value ids */
    uint32_t args_len;
    uint8_t ph, filled, joined;
} Record;

typedef struct {
    char *text;
    uint32_t len;
} Joined;

typedef struct {
    Buf records;         /* Record; records[head:] are live */
    size_t head;         /* first live record */
    uint64_t base;       /* the sequence number of records[0] */
    Buf arena;           /* the records' args, in order */
    uint64_t arena_base; /* the arena position of arena.data[0] */
    Map joined;          /* sequence number -> Joined */
    Buf joined_args;     /* Joined */
} Queue;

static size_t queue_len(const Queue *q) { return VEC_LEN(q->records, Record) - q->head; }

static Record *queue_at(Queue *q, uint64_t seq) {
    return &VEC_AT(q->records, Record, (size_t)(seq - q->base));
}

/* A new record at the end of the order, its args appended to the arena; its sequence
   number, or UINT64_MAX when out of memory. */
static uint64_t queue_push(Queue *q, int ph, const char *args, size_t args_len) {
    Record fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.ph = (uint8_t)ph;
    fresh.cat = NO_STR;
    fresh.id = -1;
    fresh.args_len = (uint32_t)args_len;
    fresh.args_at = q->arena_base + q->arena.len;
    if (args_len > UINT32_MAX || !buf_put(&q->records, &fresh, sizeof fresh) ||
        !buf_put(&q->arena, args, args_len))
        return UINT64_MAX;
    return q->base + VEC_LEN(q->records, Record) - 1;
}

/* The args text of a record in the arena. */
static const char *queue_args(const Queue *q, const Record *rec) {
    return q->arena.data + (size_t)(rec->args_at - q->arena_base);
}

/* Lets go of the records before head and their args, once they are half the buffers. */
static void queue_slide(Queue *q) {
    size_t n = VEC_LEN(q->records, Record);
    uint64_t used = n > q->head ? VEC_AT(q->records, Record, q->head).args_at - q->arena_base : q->arena.len;
    if (used > (1u << 20) && used * 2 > q->arena.len) {
        memmove(q->arena.data, q->arena.data + used, q->arena.len - (size_t)used);
        q->arena.len -= (size_t)used;
        q->arena_base += used;
    }
    if (q->head > 4096 && q->head * 2 > n) {
        memmove(q->records.data, q->records.data + q->head * sizeof(Record), (n - q->head) * sizeof(Record));
        q->records.len -= q->head * sizeof(Record);
        q->base += q->head;
        q->head = 0;
    }
}

static void queue_free(Queue *q) {
    for (size_t i = 0; i < VEC_LEN(q->joined_args, Joined); i++) free(VEC_AT(q->joined_args, Joined, i).text);
    buf_free(&q->records);
    buf_free(&q->arena);
    buf_free(&q->joined_args);
    map_free(&q->joined);
}

/* Columns of a chunk, 8 bytes a row each, in this order (perfetto/native.py reads them). */
enum {
    W_TS, W_DUR, W_ID, W_ARGS_LEN, W_EXTERNAL_ID, W_EXTERNAL_ID_LOWER, W_CORRELATION,
    W_DEVICE, W_STREAM, W_ADDR, W_DEVICE_TYPE, W_DEVICE_ID, W_BLOCKS_PER_SM, W_OCCUPANCY,
    W_NBYTES, W_TOTAL_ALLOCATED, W_TOTAL_RESERVED, N_WIDE,
};
static const char *const WIDE_NAMES[N_WIDE] = {
    "ts", "dur", "id", "args_len", "external_id", "external_id_lower", "correlation",
    "device", "stream", "addr", "device_type", "device_id", "blocks_per_sm", "occupancy",
    "nbytes", "total_allocated", "total_reserved",
};

enum { TB_NAME, TB_CAT, TB_PID, TB_TID, N_TABLES };
static const char *const TABLE_NAMES[N_TABLES] = {"name", "cat", "pid", "tid"};

typedef struct {
    Buf ph;               /* int32 codes into PH_TEXT */
    Buf codes[N_TABLES];  /* int32 codes into the chunk's tables */
    Buf ids[N_TABLES];    /* uint32 ids of each table's values, in order of first use */
    Buf wide[N_WIDE];
    Buf has_stack;
    Buf args;
    size_t rows;
    uint8_t python; /* a row's core args need the column builder's own reading */
} OutChunk;

static void out_free(OutChunk *c) {
    buf_free(&c->ph);
    for (int t = 0; t < N_TABLES; t++) {
        buf_free(&c->codes[t]);
        buf_free(&c->ids[t]);
    }
    for (int w = 0; w < N_WIDE; w++) buf_free(&c->wide[w]);
    buf_free(&c->has_stack);
    buf_free(&c->args);
    memset(c, 0, sizeof *c);
}

/* Chunk-local codes of ids: code[id] is valid when stamp[id] is the chunk's serial. */
typedef struct {
    Buf stamp, code; /* uint32 each, indexed by id (+1: NO_STR is slot 0) */
} Codes;

static int codes_lookup(Codes *c, uint32_t id, uint32_t serial, Buf *ids, int32_t *out) {
    size_t slot = id == NO_STR ? 0 : (size_t)id + 1, have = VEC_LEN(c->stamp, uint32_t);
    if (slot >= have) {
        size_t want = have ? have : 1024;
        while (want <= slot) want *= 2;
        if (!buf_reserve(&c->stamp, (want - have) * 4) || !buf_reserve(&c->code, (want - have) * 4)) return 0;
        memset(c->stamp.data + have * 4, 0, (want - have) * 4);
        memset(c->code.data + have * 4, 0, (want - have) * 4);
        c->stamp.len = c->code.len = want * 4;
    }
    uint32_t *stamp = &VEC_AT(c->stamp, uint32_t, slot), *code = &VEC_AT(c->code, uint32_t, slot);
    if (*stamp != serial) {
        *stamp = serial;
        *code = (uint32_t)VEC_LEN(*ids, uint32_t);
        if (!buf_put(ids, &id, sizeof id)) return 0;
    }
    *out = (int32_t)*code;
    return 1;
}

static void codes_free(Codes *c) {
    buf_free(&c->stamp);
    buf_free(&c->code);
}

#endif
