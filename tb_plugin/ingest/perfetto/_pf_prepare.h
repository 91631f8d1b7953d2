/* Track events' args encoded ahead, beside check_packets, off the reading thread: only
 * those that need no sequence state (pf_check met no interned name or string, field 1
 * or 17 at any depth, and no legacy JSON value that Python decodes in order), so their
 * text is the same whenever it is made. The reading thread takes a packet's prepared args
 * where it has them and encodes the others itself (encode_annotations), in order.
 *
 * A run's prepared args, as bytes: a uint32 count n, n uint32 offsets (one per packet,
 * PREPARED_NONE: not prepared) into the records after them; a record is its args' length
 * (uint32), its packed core's length (uint8), its `named` flag (uint8), its core key count
 * (uint16), then the packed core and the args text.
 */
#ifndef KINETOSCOPE_PF_PREPARE_H
#define KINETOSCOPE_PF_PREPARE_H
#include "_pf_event_args.h"

#define PREPARED_NONE UINT32_MAX
#define PREPARED_HEAD 8
/* A run's records hold at most this many times its bytes (and a little): past it, its
   packets are left to the reading thread (a packet of control characters grows 6x). */
#define PREPARED_GROWTH 4
#define PREPARED_SLACK ((size_t)1 << 16)

/* The annotations of a checked packet's track events (field 4 of each field 11) onto
   `spans`; 0 when out of memory. */
static int packet_annotations(Span packet, Buf *spans) {
    spans->len = 0;
    Field f = pf_fields(packet);
    while (pf_next(&f)) {
        if (f.number != 11 || f.wire != WIRE_LEN) continue;
        Field g = pf_fields(f.body);
        while (pf_next(&g))
            if (g.number == 4 && g.wire == WIRE_LEN && !buf_put(spans, &g.body, sizeof g.body)) return 0;
    }
    return 1;
}

typedef struct {
    Enc enc;
    Sequence none; /* no interned data: never read, as no iid is written */
    Buf spans, args, offsets, records;
    size_t limit; /* of records' bytes */
    int full;     /* the limit was met: the rest is not prepared */
} Prepare;

/* One checked packet's prepared args (or PREPARED_NONE); 0 when out of memory. */
static int prepare_packet(Prepare *w, Span packet, Check check) {
    uint32_t at = PREPARED_NONE;
    if (!w->full && check.status == PF_OK && check.annotated && !check.interned && !check.legacy) {
        if (!packet_annotations(packet, &w->spans)) return 0;
        Core core;
        int named;
        w->enc.seq = &w->none;
        int got = encode_annotations(&w->enc, &w->args, &core, (const Span *)w->spans.data,
                                     VEC_LEN(w->spans, Span), 0, &named);
        if (got != ENC_OK) return 0; /* no legacy value: only out of memory fails */
        uint8_t head[PREPARED_HEAD + CORE_PACKED_MAX];
        size_t packed = core_pack(&core, head + PREPARED_HEAD);
        uint32_t len = (uint32_t)w->args.len;
        uint16_t cores = (uint16_t)w->enc.cores;
        memcpy(head, &len, 4);
        head[4] = (uint8_t)packed;
        head[5] = (uint8_t)named;
        memcpy(head + 6, &cores, 2);
        if (w->records.len + PREPARED_HEAD + packed + len > w->limit || w->enc.cores > UINT16_MAX) {
            w->full = 1;
        } else {
            at = (uint32_t)w->records.len;
            if (!buf_put(&w->records, head, PREPARED_HEAD + packed) || !buf_put(&w->records, w->args.data, len))
                return 0;
        }
    }
    return buf_put(&w->offsets, &at, 4);
}

/* A packet's prepared record (k: its place in the run) or NULL. */
static const uint8_t *prepared_record(const uint8_t *prepared, size_t len, size_t k) {
    uint32_t n, at;
    if (!prepared || len < 4) return NULL;
    memcpy(&n, prepared, 4);
    if (k >= n) return NULL;
    size_t records = 4 + 4 * (size_t)n;
    if (records > len) return NULL;
    memcpy(&at, prepared + 4 + 4 * k, 4);
    if (at == PREPARED_NONE || len - records < PREPARED_HEAD || at > len - records - PREPARED_HEAD) return NULL;
    const uint8_t *record = prepared + records + at;
    uint32_t args_len;
    memcpy(&args_len, record, 4);
    size_t need = PREPARED_HEAD + (size_t)record[4] + args_len; /* bytes handed in are not trusted */
    return record[4] <= CORE_PACKED_MAX && need <= len - records - at ? record : NULL;
}

/* A prepared record's args into out and core; *cores, *named as encode_annotations sets them. */
static int prepared_args(const uint8_t *record, Buf *out, Core *core, int *cores, int *named) {
    uint32_t len;
    uint16_t n_cores;
    memcpy(&len, record, 4);
    memcpy(&n_cores, record + 6, 2);
    *named = record[5];
    *cores = n_cores;
    core_unpack(record + PREPARED_HEAD, record[4], core);
    out->len = 0;
    return buf_put(out, record + PREPARED_HEAD + record[4], len);
}

static void prepare_free(Prepare *w) {
    enc_free(&w->enc);
    Buf *bufs[] = {&w->spans, &w->args, &w->offsets, &w->records};
    for (size_t i = 0; i < 4; i++) buf_free(bufs[i]);
}

#endif
