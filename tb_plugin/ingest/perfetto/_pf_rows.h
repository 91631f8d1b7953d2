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
    const char *args;             /* in an arena block (blocks never move) */
    uint32_t name, cat, pid, tid; /* text ids (cat NO_STR: None) and value ids */
    uint32_t args_len;
    uint8_t ph, filled, joined;
    uint8_t core_len; /* its core columns packed after its args (core_pack), or 0: none */
} Record;

typedef struct {
    char *text; /* then its core columns packed */
    uint32_t len;
    uint8_t core_len;
} Joined;

#define RECORD_BLOCK 8192          /* records a block */
#define ARENA_BLOCK ((size_t)1 << 20) /* args bytes a block, at least */
/* Blocks let go of and kept for the next ones, of each kind, at most (~7 MB of record
   blocks, 16 MiB of arena): a delivery frees the blocks of the events held behind a slice
   at once, glibc gave their pages back (its trim threshold) and the next held events
   faulted them in again (the H100 OWLv2 x7 tile: ~7,400 of the reading thread's ~16,000
   page faults). None are kept once the file's end is read (`queue_end_spares`): the last
   delivery is the load's peak. */
#define QUEUE_SPARES 16

typedef struct {
    char *data;
    size_t used, cap;
    uint64_t last; /* the sequence number of the last record whose args it holds */
} ArenaBlock;

/* Records and their args in blocks, first in first out: a block is let go of as soon as
   the head of the order passes it, so what was delivered stops holding memory. */
typedef struct {
    Buf blocks;      /* Record *, each RECORD_BLOCK records */
    uint64_t first;  /* the sequence number of blocks[0][0] */
    uint64_t head;   /* the first live record */
    uint64_t end;    /* the next sequence number */
    Buf arena;       /* ArenaBlock, oldest first; arena_first is the first live one */
    size_t arena_first;
    Map joined;      /* sequence number -> Joined */
    Buf joined_args; /* Joined */
    Buf spare_records, spare_arena; /* Record *, char *: blocks let go of (QUEUE_SPARES) */
    int no_spares;                  /* blocks let go of are freed */
} Queue;

static size_t queue_len(const Queue *q) { return (size_t)(q->end - q->head); }

static Record *queue_at(const Queue *q, uint64_t seq) {
    uint64_t i = seq - q->first;
    return VEC_AT(q->blocks, Record *, i / RECORD_BLOCK) + i % RECORD_BLOCK;
}

static const char *queue_args(const Queue *q, const Record *rec) {
    (void)q;
    return rec->args_len ? rec->args : "";
}

/* A record's packed core columns, after its args in the arena (rec->core_len bytes). */
static const uint8_t *queue_core(const Record *rec) {
    return rec->core_len ? (const uint8_t *)rec->args + rec->args_len : NULL;
}

/* A spare block, else one of `bytes` newly allocated (NULL: out of memory). */
static void *block_new(Buf *spares, size_t bytes) {
    if (!spares->len) return malloc(bytes);
    spares->len -= sizeof(void *);
    return VEC_AT(*spares, void *, VEC_LEN(*spares, void *));
}

/* A block let go of: kept as a spare while there is room, else freed. */
static void block_let_go(const Queue *q, Buf *spares, void *block) {
    if (q->no_spares || VEC_LEN(*spares, void *) >= QUEUE_SPARES || !buf_put(spares, &block, sizeof block))
        free(block);
}

static void spares_free(Buf *spares) {
    for (size_t i = 0; i < VEC_LEN(*spares, void *); i++) free(VEC_AT(*spares, void *, i));
    buf_free(spares);
}

/* The spares freed, and none kept from now on. */
static void queue_end_spares(Queue *q) {
    spares_free(&q->spare_records);
    spares_free(&q->spare_arena);
    q->no_spares = 1;
}

/* Room for args_len bytes at the end of the arena; where, or NULL. */
static char *arena_room(Queue *q, size_t args_len, uint64_t seq) {
    size_t n = VEC_LEN(q->arena, ArenaBlock);
    ArenaBlock *last = n > q->arena_first ? &VEC_AT(q->arena, ArenaBlock, n - 1) : NULL;
    if (!last || last->cap - last->used < args_len) {
        ArenaBlock fresh = {NULL, 0, args_len > ARENA_BLOCK ? args_len : ARENA_BLOCK, seq};
        fresh.data = fresh.cap == ARENA_BLOCK ? block_new(&q->spare_arena, ARENA_BLOCK) : malloc(fresh.cap);
        if (!fresh.data) return NULL;
        if (!buf_put(&q->arena, &fresh, sizeof fresh)) {
            block_let_go(q, &q->spare_arena, fresh.data);
            return NULL;
        }
        last = &VEC_AT(q->arena, ArenaBlock, VEC_LEN(q->arena, ArenaBlock) - 1);
    }
    char *at = last->data + last->used;
    last->used += args_len;
    last->last = seq;
    return at;
}

/* A new record at the end of the order, its args and packed core columns (core_len
   bytes) copied into the arena; its sequence number, or UINT64_MAX when out of memory. */
static uint64_t queue_push(Queue *q, int ph, const char *args, size_t args_len, const uint8_t *core,
                           size_t core_len) {
    uint64_t seq = q->end, i = seq - q->first;
    if (args_len > UINT32_MAX) return UINT64_MAX;
    if (i / RECORD_BLOCK == VEC_LEN(q->blocks, Record *)) {
        Record *block = block_new(&q->spare_records, RECORD_BLOCK * sizeof(Record));
        if (!block) return UINT64_MAX;
        if (!buf_put(&q->blocks, &block, sizeof block)) {
            block_let_go(q, &q->spare_records, block);
            return UINT64_MAX;
        }
    }
    Record *rec = queue_at(q, seq);
    memset(rec, 0, sizeof *rec);
    rec->ph = (uint8_t)ph;
    rec->cat = NO_STR;
    rec->id = -1;
    rec->args_len = (uint32_t)args_len;
    rec->core_len = (uint8_t)core_len;
    if (args_len + core_len) {
        char *at = arena_room(q, args_len + core_len, seq);
        if (!at) return UINT64_MAX;
        if (args_len) memcpy(at, args, args_len);
        if (core_len) memcpy(at + args_len, core, core_len);
        rec->args = at;
    }
    q->end++;
    return seq;
}

/* The head record is delivered: the blocks it passed are let go of. */
static void queue_pop(Queue *q) {
    q->head++;
    while (q->head - q->first >= RECORD_BLOCK) {
        block_let_go(q, &q->spare_records, VEC_AT(q->blocks, Record *, 0));
        q->blocks.len -= sizeof(Record *);
        memmove(q->blocks.data, q->blocks.data + sizeof(Record *), q->blocks.len);
        q->first += RECORD_BLOCK;
    }
    size_t n = VEC_LEN(q->arena, ArenaBlock);
    while (q->arena_first < n && VEC_AT(q->arena, ArenaBlock, q->arena_first).last < q->head &&
           (q->arena_first + 1 < n || q->head == q->end)) {
        ArenaBlock *gone = &VEC_AT(q->arena, ArenaBlock, q->arena_first);
        if (gone->cap == ARENA_BLOCK) block_let_go(q, &q->spare_arena, gone->data);
        else free(gone->data);
        gone->data = NULL;
        q->arena_first++;
    }
    if (q->arena_first > 64 && q->arena_first * 2 > n) { /* drop the let-go entries */
        memmove(q->arena.data, q->arena.data + q->arena_first * sizeof(ArenaBlock),
                (n - q->arena_first) * sizeof(ArenaBlock));
        q->arena.len -= q->arena_first * sizeof(ArenaBlock);
        q->arena_first = 0;
    }
}

static void queue_free(Queue *q) {
    for (size_t i = 0; i < VEC_LEN(q->joined_args, Joined); i++) free(VEC_AT(q->joined_args, Joined, i).text);
    for (size_t i = 0; i < VEC_LEN(q->blocks, Record *); i++) free(VEC_AT(q->blocks, Record *, i));
    for (size_t i = q->arena_first; i < VEC_LEN(q->arena, ArenaBlock); i++)
        free(VEC_AT(q->arena, ArenaBlock, i).data);
    buf_free(&q->blocks);
    buf_free(&q->arena);
    buf_free(&q->joined_args);
    map_free(&q->joined);
    queue_end_spares(q);
    memset(q, 0, sizeof *q);
}

/* Columns of a chunk, 8 bytes a row each, in this order (perfetto/native.py reads them). */
enum {
    W_TS, W_DUR, W_ID, W_ARGS_LEN, W_EXTERNAL_ID, W_EXTERNAL_ID_LOWER, W_CORRELATION,
    W_DEVICE, W_STREAM, W_ADDR, W_DEVICE_TYPE, W_DEVICE_ID, W_BLOCKS_PER_SM, W_OCCUPANCY,
    W_NBYTES, W_TOTAL_ALLOCATED, W_TOTAL_RESERVED, W_PYTHON_ID, W_PYTHON_PARENT_ID, N_WIDE,
};
static const char *const WIDE_NAMES[N_WIDE] = {
    "ts", "dur", "id", "args_len", "external_id", "external_id_lower", "correlation",
    "device", "stream", "addr", "device_type", "device_id", "blocks_per_sm", "occupancy",
    "nbytes", "total_allocated", "total_reserved", "python_id", "python_parent_id",
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
    size_t rows, room; /* rows written, rows the columns have room for */
    uint8_t python;    /* a row's core args need the column builder's own reading */
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
