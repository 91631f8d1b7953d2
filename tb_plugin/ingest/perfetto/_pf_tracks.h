/* Perfetto tracks as Kineto's processes and threads (tracks.py's rules): a track's pid is
 * the ProcessDescriptor pid of the track or its nearest ancestor (a ThreadDescriptor's pid
 * first), else the name of the track where the walk up stopped; its tid its
 * ThreadDescriptor tid, else its name when it has a parent and is no process. A name of
 * ASCII digits is its number. Places are remembered until the next descriptor comes.
 */
#ifndef KINETOSCOPE_PF_TRACKS_H
#define KINETOSCOPE_PF_TRACKS_H
#include "_pf_store.h"
#include "_pf_wire.h"

#define TRACK_COST 250
#define META_COST 250

typedef struct {
    uint64_t uuid, parent;
    uint32_t name; /* text id */
    int64_t pid, tid;
    uint8_t has_pid, has_tid, is_process, is_counter;
} Track;

typedef struct {
    uint32_t generation, pid, tid;
} Place;

enum { META_PROCESS_NAME, META_PROCESS_LABELS, META_PROCESS_SORT, META_THREAD_NAME, META_THREAD_SORT };

typedef struct {
    uint32_t pid, tid; /* value ids */
    int kind;
    uint32_t text; /* the value: a text id, or NO_STR for the int */
    int64_t number;
} Meta;

typedef struct {
    Map index; /* uuid -> track */
    Buf tracks;
    Map place_index; /* uuid -> place */
    Buf places;
    uint32_t generation; /* places of an older generation are stale */
    Map unknown;         /* uuids of tracks with events but no descriptor */
    Buf meta;            /* Meta */
    int64_t nbytes;
} Tracks;

static int tracks_init(Tracks *t, uint64_t seed) {
    memset(t, 0, sizeof *t);
    t->generation = 1;
    return map_init(&t->index, 64, seed) && map_init(&t->place_index, 64, seed) &&
           map_init(&t->unknown, 16, seed);
}

static void tracks_free(Tracks *t) {
    map_free(&t->index);
    map_free(&t->place_index);
    map_free(&t->unknown);
    buf_free(&t->tracks);
    buf_free(&t->places);
    buf_free(&t->meta);
}

static Track *track_get(Tracks *t, uint64_t uuid) {
    uint32_t at;
    return map_get(&t->index, uuid, &at) ? &VEC_AT(t->tracks, Track, at) : NULL;
}

/* (pid, tid) value ids of a track's events; 0 when out of memory. */
static int track_place(Tracks *t, Values *v, Texts *x, uint64_t uuid, uint32_t *pid, uint32_t *tid) {
    uint32_t at;
    if (map_get(&t->place_index, uuid, &at)) {
        Place *known = &VEC_AT(t->places, Place, at);
        if (known->generation == t->generation) {
            *pid = known->pid;
            *tid = known->tid;
            return 1;
        }
    } else {
        at = (uint32_t)VEC_LEN(t->places, Place);
        Place fresh = {0, 0, 0};
        if (!buf_put(&t->places, &fresh, sizeof fresh) || !map_put(&t->place_index, uuid, at)) return 0;
    }
    Track *track = track_get(t, uuid);
    if (!track) {
        char name[48];
        snprintf(name, sizeof name, "track %llu", (unsigned long long)uuid);
        uint32_t text = texts_id(x, name, strlen(name));
        if (text == NO_STR || !map_put(&t->unknown, uuid, 1)) return 0;
        *pid = values_id(v, V_TEXT, text);
        *tid = 0;
    } else if (track->has_tid) {
        *pid = value_of_int(v, track->pid);
        *tid = value_of_int(v, track->tid);
    } else {
        const Track *chain = track;
        int has_pid = track->has_pid;
        int64_t number = track->pid;
        Map seen = {0};
        if (!map_init(&seen, 16, 0)) return 0;
        map_put(&seen, uuid, 1);
        while (!has_pid && chain->parent) {
            uint32_t dummy;
            if (map_get(&seen, chain->parent, &dummy)) break;
            if (!map_put(&seen, chain->parent, 1)) {
                map_free(&seen);
                return 0;
            }
            const Track *parent = track_get(t, chain->parent);
            if (!parent) break;
            chain = parent;
            has_pid = parent->has_pid;
            number = parent->pid;
        }
        map_free(&seen);
        *pid = has_pid ? value_of_int(v, number) : value_of_name(v, x, chain->name);
        *tid = track->parent && !track->is_process ? value_of_name(v, x, track->name) : 0;
    }
    if (*pid == NO_STR || *tid == NO_STR) return 0;
    Place *place = &VEC_AT(t->places, Place, at);
    place->generation = t->generation;
    place->pid = *pid;
    place->tid = *tid;
    return 1;
}

/* The name of a track ("" when none is described), as a text id. */
static uint32_t track_name(Tracks *t, Texts *x, uint64_t uuid) {
    Track *track = track_get(t, uuid);
    return track ? track->name : texts_id(x, "", 0);
}

static int add_meta(Tracks *t, uint32_t pid, uint32_t tid, int kind, uint32_t text, int64_t number,
                    const Texts *x) {
    Meta m = {pid, tid, kind, text, number};
    if (text != NO_STR) {
        uint32_t len;
        text_at(x, text, &len);
        t->nbytes += len;
    } else {
        char digits[24];
        t->nbytes += snprintf(digits, sizeof digits, "%lld", (long long)number);
    }
    return buf_put(&t->meta, &m, sizeof m);
}

typedef struct {
    uint8_t present, has_sort;
    int64_t pid, tid, sort;
    Span name;
    int has_name;
} Descriptor;

/* The fields of a (merged) process or thread descriptor. `labels` (process) joined. */
static Descriptor read_descriptor(const Span *spans, size_t n, uint32_t number, uint32_t name_field,
                                  int thread) {
    Descriptor d;
    memset(&d, 0, sizeof d);
    Occurrences o = pf_occurrences(spans, n, number);
    Span s;
    while (pf_next_occurrence(&o, &s)) {
        d.present = 1;
        Field f = pf_fields(s);
        while (pf_next(&f)) {
            if (f.number == 1 && f.wire == WIRE_VARINT) d.pid = (int32_t)f.value;
            else if (thread && f.number == 2 && f.wire == WIRE_VARINT) d.tid = (int64_t)f.value;
            else if (f.number == 3 && f.wire == WIRE_VARINT) {
                d.sort = (int32_t)f.value;
                d.has_sort = 1;
            } else if (f.number == name_field && f.wire == WIRE_LEN) {
                d.name = f.body;
                d.has_name = 1;
            }
        }
    }
    return d;
}

/* A process's labels (its repeated field 8) joined by commas, as a text id; NO_STR for
   none (or out of memory: *oom). */
static uint32_t process_labels(Texts *x, const Span *spans, size_t n, Buf *tmp, int *oom) {
    Occurrences processes = pf_occurrences(spans, n, 3);
    Span process;
    int count = 0;
    tmp->len = 0;
    while (pf_next_occurrence(&processes, &process)) {
        Field f = pf_fields(process);
        while (pf_next(&f))
            if (f.number == 8 && f.wire == WIRE_LEN)
                if ((count++ && !buf_byte(tmp, ',')) || !put_text(tmp, f.body)) *oom = 1;
    }
    if (!count) return NO_STR;
    uint32_t id = texts_id(x, tmp->data, tmp->len);
    if (id == NO_STR) *oom = 1;
    return id;
}

#endif
