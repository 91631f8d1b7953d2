/* A run's composite annotations (an array, a dict, a nested value: "Input Dims" and the
 * like, which repeat) checked once per distinct bytes: pf_check's walk of such a value
 * costs ~100 instructions an item, its bytes' hash and comparison a few a word. A check
 * depends on the annotation's bytes and depth alone, and sets only the sticky `legacy`
 * and `interned` flags: those it set are kept with the bytes of an annotation that
 * passed, and set again where the same bytes come again. Bounded: past
 * CHECK_CACHE_BYTES, what is kept is forgotten at once.
 */
#ifndef KINETOSCOPE_PF_CHECK_CACHE_H
#define KINETOSCOPE_PF_CHECK_CACHE_H
#include "_pf_wire.h"

#define CHECK_CACHE_BYTES ((size_t)1 << 20)

struct CheckCache {
    Map index;   /* hash -> entry in `checked` */
    Buf checked; /* Checked */
    Buf bytes;   /* each one's bytes */
    uint64_t seed;
    int off;     /* out of memory once: no more kept */
};

typedef struct {
    size_t off;
    uint32_t len;
    int16_t depth;
    uint8_t legacy, interned;
} Checked;

static void check_cache_free(CheckCache *cache) {
    map_free(&cache->index);
    buf_free(&cache->checked);
    buf_free(&cache->bytes);
}

static void check_cache_keep(CheckCache *cache, uint64_t hash, Span s, const Checked *checked) {
    size_t len = SPAN_LEN(s);
    if (cache->off || len > CHECK_CACHE_BYTES / 16) return;
    if (cache->bytes.len + len > CHECK_CACHE_BYTES && cache->index.slots) {
        map_clear(&cache->index);
        cache->checked.len = cache->bytes.len = 0;
    }
    Checked kept = *checked;
    kept.off = cache->bytes.len;
    uint32_t at = (uint32_t)VEC_LEN(cache->checked, Checked);
    if ((!cache->index.slots && !map_init(&cache->index, 256, cache->seed)) || !buf_put(&cache->bytes, s.p, len) ||
        !buf_put(&cache->checked, &kept, sizeof kept) || !map_put(&cache->index, hash, at))
        cache->off = 1;
}

/* A track event's composite annotation (at `depth`) checked, or found among those
   checked before. */
static void pf_check_event_annotation(Check *c, Span s, int depth) {
    CheckCache *cache = c->cache;
    size_t len = SPAN_LEN(s);
    uint64_t hash = hash_bytes(cache->seed ^ (uint64_t)depth, s.p, len);
    uint32_t at;
    if (cache->index.slots && map_get(&cache->index, hash, &at)) {
        const Checked *known = &VEC_AT(cache->checked, Checked, at);
        if (known->len == len && known->depth == depth && memcmp(cache->bytes.data + known->off, s.p, len) == 0) {
            c->legacy |= known->legacy;
            c->interned |= known->interned;
            return;
        }
        pf_check_message(c, s, M_ANNOTATION, depth, 0, 0); /* another's hash: not kept */
        return;
    }
    int legacy = c->legacy, interned = c->interned;
    c->legacy = c->interned = 0;
    pf_check_message(c, s, M_ANNOTATION, depth, 0, 0);
    Checked checked = {0, (uint32_t)len, (int16_t)depth, (uint8_t)c->legacy, (uint8_t)c->interned};
    c->legacy |= legacy;
    c->interned |= interned;
    if (c->status == PF_OK) check_cache_keep(cache, hash, s, &checked);
}

#endif
