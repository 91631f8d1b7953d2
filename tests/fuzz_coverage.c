/* Edge coverage for the scanner fuzzer (tests/fuzz_scanner.py), without clang.
 *
 * The fuzzer builds its own copy of ingest/_scan.c with gcc's -fsanitize-coverage=trace-pc:
 * gcc then calls __sanitizer_cov_trace_pc() at the start of every basic block. This file
 * (built without that flag) counts each (previous block, block) pair in a 64 KiB map, as
 * AFL does; the fuzzer reads and clears the map after each input through ctypes, and keeps
 * an input that reached a new pair or a new count bucket. The scanner runs in one thread
 * at a time in the fuzzer, so the map needs no atomics.
 */
#include <stdint.h>

#define MAP_SIZE (1u << 16)

unsigned char kfuzz_map[MAP_SIZE];
static uintptr_t kfuzz_prev;

void __sanitizer_cov_trace_pc(void) {
    uintptr_t pc = (uintptr_t)__builtin_return_address(0);
    unsigned char *slot = &kfuzz_map[(pc ^ kfuzz_prev) & (MAP_SIZE - 1)];
    if (*slot != 255) (*slot)++;
    kfuzz_prev = pc >> 1;
}

void kfuzz_reset(void) {
    for (unsigned i = 0; i < MAP_SIZE; i++) kfuzz_map[i] = 0;
    kfuzz_prev = 0;
}
