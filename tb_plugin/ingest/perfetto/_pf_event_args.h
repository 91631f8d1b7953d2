/* An event's args: its track event's annotations as one dict (encode_annotations).
 *
 * Most events' keys are all different and need no legacy value read by Python: their
 * annotations are then written in one pass, each key and value straight into the args
 * (write_flat), not read into a plan of the dict first (_pf_args.h's write_dict, which
 * keeps a repeated key's first place and last value). That pass stops at a repeated key,
 * and the plan writes the args again; a value written then is found among the values
 * written before (`Enc.written`), and it is the same text.
 */
#ifndef KINETOSCOPE_PF_EVENT_ARGS_H
#define KINETOSCOPE_PF_EVENT_ARGS_H
#include "_pf_args.h"

/* Keys of one pass at most (a repeat is looked for among the keys before each). */
#define FLAT_MAX 32
enum { ENC_AGAIN = 2 };

/* The n annotations as a dict, in one pass; ENC_AGAIN where a key repeats. Only where no
   legacy value needs Python (a value written is never failed later, no hook runs). */
static int write_flat(Enc *e, Buf *out, Core *core, const Span *annotations, size_t n, int *named) {
    uint32_t key_at[FLAT_MAX], key_len[FLAT_MAX];
    uint64_t classes = 0; /* a bit per class (length, last letter) of the keys before */
    if (!buf_byte(out, '{')) return ENC_FAIL;
    for (size_t i = 0; i < n; i++) {
        Annot a;
        annot_read(&a, annotations[i]);
        int kind;
        size_t start = out->len + (i > 0);
        if ((i && !buf_byte(out, ',')) || !annot_key(e, out, &a, 1, &kind)) return ENC_FAIL;
        uint32_t len = (uint32_t)(out->len - start);
        uint64_t key_class = 1ull << ((len * 7u + (uint8_t)out->data[out->len - 2]) & 63);
        for (size_t j = 0; (classes & key_class) && j < i; j++) /* a key of its class before: compared */
            if (key_len[j] == len && same_bytes(out->data + key_at[j], out->data + start, len)) return ENC_AGAIN;
        classes |= key_class;
        key_at[i] = (uint32_t)start;
        key_len[i] = len;
        if (len == 13 && memcmp(out->data + start, "\"correlation\"", 13) == 0) *named = 1;
        if (!buf_byte(out, ':')) return ENC_FAIL;
        int status = write_entry(e, out, &a, core, kind);
        if (status != ENC_OK) return status;
    }
    return buf_byte(out, '}') ? ENC_OK : ENC_FAIL;
}

/* The args text of a track event's annotations (the n spans of its field 4): "" for no
   args; their core columns in *core (e->cores: how many core keys); *named: whether one
   is named "correlation". Checks the legacy values the Python reader would read first
   (`legacy`: the packet has one Python must read). ENC_BAD: the packet fails (e->msg says
   why; e->later: only once its args are encoded). */
static int encode_annotations(Enc *e, Buf *out, Core *core, const Span *annotations, size_t n,
                              int legacy, int *named) {
    out->len = 0;
    e->later = 0;
    e->cores = 0;
    *named = 0;
    core_defaults(core);
    e->items.len = e->keys.len = e->plan.len = e->annots.len = 0;
    e->core = NULL;
    if (!n) return ENC_OK; /* no args: "" (an end, an event without annotations) */
    if (!legacy && n <= FLAT_MAX) {
        int status = write_flat(e, out, core, annotations, n, named);
        if (status != ENC_AGAIN) return status;
        out->len = 0; /* a key repeats: planned as a dict is */
        e->cores = 0;
        *named = 0;
        core_defaults(core);
        e->items.len = e->keys.len = e->plan.len = e->annots.len = 0;
    }
    if (n && !buf_put(&e->items, annotations, n * sizeof(Span))) return ENC_FAIL;
    for (size_t i = 0; legacy && i < n; i++) {
        int status = eval_annotation(e, annotations[i]);
        if (status != ENC_OK) return status;
    }
    e->core = core;
    int status = write_annotation_spans(e, out, 0, n, named);
    e->core = NULL;
    return status;
}

/* `correlation` set in encoded args (out, core) that have no annotation of that name. */
static int add_correlation(Enc *e, Buf *out, Core *core, uint64_t corr) {
    if (out->len) out->len--; /* reopen the dict */
    else if (!buf_byte(out, '{')) return ENC_FAIL;
    if ((out->len > 1 && !buf_byte(out, ',')) || !buf_str(out, "\"correlation\":")) return ENC_FAIL;
    size_t value_at = out->len;
    if (!json_u64(out, corr)) return ENC_FAIL;
    core_u64(core, K_INT + I_CORRELATION, out->data + value_at, out->data + out->len, corr);
    e->cores++;
    return buf_byte(out, '}') ? ENC_OK : ENC_FAIL;
}

#endif
