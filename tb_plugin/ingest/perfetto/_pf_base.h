/* The native Perfetto reader's plumbing (`_native.c` includes it once): growable buffers,
 * vectors, hashing, and an open-addressing map of 64-bit keys to 32-bit values.
 */
#ifndef KINETOSCOPE_PF_BASE_H
#define KINETOSCOPE_PF_BASE_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *p, *end;
} Span;

#define SPAN_LEN(s) ((size_t)((s).end - (s).p))

/* ---- growable byte buffers -------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

/* buf_reserve where the buffer has no room: grown (doubling). */
static int buf_grow(Buf *b, size_t extra) {
    if (extra > ((size_t)1 << 40)) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra) cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) return 0;
    b->data = data;
    b->cap = cap;
    return 1;
}

/* Room for `extra` more bytes; 0 when out of memory. Inlined: most puts find room. */
static inline __attribute__((always_inline)) int buf_reserve(Buf *b, size_t extra) {
    return extra <= b->cap - b->len || buf_grow(b, extra);
}

/* The first and last `width` bytes of n (width <= n <= 2 * width): with a constant width,
   no call. */
static inline __attribute__((always_inline)) void copy_ends(char *to, const char *from, size_t n,
                                                            size_t width) {
    char head[16], tail[16];
    memcpy(head, from, width);
    memcpy(tail, from + n - width, width);
    memcpy(to, head, width);
    memcpy(to + n - width, tail, width);
}

/* n bytes of at most 32 copied without a call: most puts are a key, a number or an
   interned name, and a call into memcpy for each was ~10 % of the reading thread. */
static inline void copy_small(char *to, const char *from, size_t n) {
    if (n >= 16) copy_ends(to, from, n, 16);
    else if (n >= 8) copy_ends(to, from, n, 8);
    else if (n >= 4) copy_ends(to, from, n, 4);
    else
        for (size_t i = 0; i < n; i++) to[i] = from[i];
}

/* Whether the first and last `width` bytes of n (width <= n <= 2 * width) are the same. */
static inline __attribute__((always_inline)) int same_ends(const char *a, const char *b, size_t n,
                                                           size_t width) {
    return memcmp(a, b, width) == 0 && memcmp(a + n - width, b + n - width, width) == 0;
}

/* Whether n bytes are the same; n <= 32 (a key, an interned name) without a call. */
static inline int same_bytes(const void *a, const void *b, size_t n) {
    const char *x = a, *y = b;
    if (n > 32) return memcmp(x, y, n) == 0;
    if (n >= 16) return same_ends(x, y, n, 16);
    if (n >= 8) return same_ends(x, y, n, 8);
    if (n >= 4) return same_ends(x, y, n, 4);
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return 0;
    return 1;
}

/* Inlined (its callers are the hot loops: keys, numbers, names, spans): a call for each
   put was ~8 % of the args encoding's instructions. */
static inline __attribute__((always_inline)) int buf_put(Buf *b, const void *p, size_t n) {
    if (!n) return 1;
    if (!buf_reserve(b, n)) return 0;
    if (n <= 32) copy_small(b->data + b->len, p, n);
    else memcpy(b->data + b->len, p, n);
    b->len += n;
    return 1;
}

static int buf_byte(Buf *b, char c) {
    if (b->len == b->cap && !buf_reserve(b, 1)) return 0;
    b->data[b->len++] = c;
    return 1;
}

static int buf_str(Buf *b, const char *s) { return buf_put(b, s, strlen(s)); }

/* b->data + off, also for a buffer never written (NULL plus 0 is undefined behaviour). */
static char *buf_at(const Buf *b, size_t off) {
    static char nothing[1];
    return b->data ? b->data + off : nothing;
}

static void buf_free(Buf *b) {
    free(b->data);
    *b = (Buf){0};
}

/* A vector of fixed-size items in a Buf. */
#define VEC_AT(buf, type, i) (((type *)(buf).data)[i])
#define VEC_LEN(buf, type) ((buf).len / sizeof(type))

/* ---- hashing ---------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Eight bytes at a time (names are long); `seed` is per reader, so colliding names
   cannot be chosen ahead. */
static uint64_t hash_bytes(uint64_t seed, const void *data, size_t n) {
    const uint8_t *p = data;
    uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ULL);
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        h = (h ^ word) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    if (n) memcpy(&tail, p, n);
    return mix64(h ^ tail ^ (n << 56));
}

/* ---- u64 -> u32 map: linear probing, backward-shift deletion ---------------------------- */

typedef struct {
    uint64_t key;
    uint32_t value;
    uint32_t used;
} MapSlot;

typedef struct {
    MapSlot *slots;
    size_t mask, count;
    uint64_t seed;
} Map;

static size_t map_home(const Map *m, uint64_t key) { return mix64(key ^ m->seed) & m->mask; }

static int map_init(Map *m, size_t slots, uint64_t seed) {
    m->slots = calloc(slots, sizeof(MapSlot));
    m->mask = slots - 1;
    m->count = 0;
    m->seed = seed;
    return m->slots != NULL;
}

static void map_free(Map *m) {
    free(m->slots);
    m->slots = NULL;
    m->count = 0;
}

static void map_clear(Map *m) {
    memset(m->slots, 0, (m->mask + 1) * sizeof(MapSlot));
    m->count = 0;
}

/* Where `key` is, or the empty slot where it would go. */
static MapSlot *map_find(const Map *m, uint64_t key) {
    size_t i = map_home(m, key);
    while (m->slots[i].used && m->slots[i].key != key) i = (i + 1) & m->mask;
    return &m->slots[i];
}

static int map_get(const Map *m, uint64_t key, uint32_t *value) {
    MapSlot *s = map_find(m, key);
    if (!s->used) return 0;
    *value = s->value;
    return 1;
}

static int map_grow(Map *m) {
    Map bigger;
    if (!map_init(&bigger, (m->mask + 1) * 2, m->seed)) return 0;
    for (size_t i = 0; i <= m->mask; i++)
        if (m->slots[i].used) *map_find(&bigger, m->slots[i].key) = m->slots[i];
    bigger.count = m->count;
    free(m->slots);
    *m = bigger;
    return 1;
}

/* Sets key -> value; 0 when out of memory. */
static int map_put(Map *m, uint64_t key, uint32_t value) {
    MapSlot *s = map_find(m, key);
    if (!s->used) {
        if ((m->count + 1) * 2 > m->mask + 1) {
            if (!map_grow(m)) return 0;
            s = map_find(m, key);
        }
        s->used = 1;
        s->key = key;
        m->count++;
    }
    s->value = value;
    return 1;
}

static void map_remove(Map *m, uint64_t key) {
    MapSlot *s = map_find(m, key);
    if (!s->used) return;
    size_t hole = (size_t)(s - m->slots);
    m->count--;
    for (size_t i = (hole + 1) & m->mask; m->slots[i].used; i = (i + 1) & m->mask) {
        size_t home = map_home(m, m->slots[i].key);
        /* Move slot i into the hole when its home is not in (hole, i]. */
        if (((i - home) & m->mask) >= ((i - hole) & m->mask)) {
            m->slots[hole] = m->slots[i];
            hole = i;
        }
    }
    m->slots[hole].used = 0;
}

#endif
