/* The buffer plumbing that the compiled passes' entry points share
 * (analysis/core/_nesting.c, trace_view/_passes.c): their length checks, the release of
 * every buffer an entry point took, and its ValueError. Include after Python.h. */
#ifndef KINETOSCOPE_CBUF_H
#define KINETOSCOPE_CBUF_H

/* How many whole items of `size` bytes `view` holds (its length divided, rounded down). */
static inline Py_ssize_t cbuf_count(const Py_buffer *view, size_t size) {
    return view->len / (Py_ssize_t)size;
}

/* Whether `view` holds exactly `count` items of `size` bytes. */
static inline int cbuf_holds(const Py_buffer *view, Py_ssize_t count, size_t size) {
    return view->len == count * (Py_ssize_t)size;
}

/* Releases the `count` buffers of `views`, in order. */
static inline void cbuf_release_all(Py_buffer *const *views, size_t count) {
    for (size_t i = 0; i < count; i++) {
        PyBuffer_Release(views[i]);
    }
}

/* CBUF_RELEASE(&a, &b, ...): releases every buffer named, on any exit path of one call. */
#define CBUF_LIST(...) ((Py_buffer *const[]){__VA_ARGS__})
#define CBUF_RELEASE(...)                                                                      \
    cbuf_release_all(CBUF_LIST(__VA_ARGS__), sizeof(CBUF_LIST(__VA_ARGS__)) / sizeof(Py_buffer *))

/* Raises ValueError(message): an entry point's answer to buffers of wrong lengths. */
static inline PyObject *cbuf_error(const char *message) {
    PyErr_SetString(PyExc_ValueError, message);
    return NULL;
}

/* None where `ok`, else ValueError(message). */
static inline PyObject *cbuf_none_or_error(int ok, const char *message) {
    if (!ok) {
        return cbuf_error(message);
    }
    Py_RETURN_NONE;
}

#endif
