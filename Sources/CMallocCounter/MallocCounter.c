// Counts the program's allocations for `faultline bench`'s memory figures: malloc, calloc, realloc and free are
// defined here, in the executable, so that every call in the process (Swift's runtime, Foundation, SQLite, GRDB)
// comes here first, then goes on to glibc's own (__libc_malloc, …). Counting is off except during a variant's
// memory run, on its thread; off, a call costs one thread-local load. Sanitizers interpose malloc themselves: under
// them nothing is defined here and the counts are unavailable. The aligned allocators (memalign, posix_memalign,
// aligned_alloc, valloc, pvalloc) are counted too: glibc does not reach them through malloc, and Swift's
// `UnsafeMutablePointer.allocate` calls memalign, so without them such a block went uncounted while its free
// counted against the run.
#include "CMallocCounter.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>

#if defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#    define FL_SANITIZED 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define FL_SANITIZED 1
#endif

// Counting is per thread: the variant's own thread (a context's performAndWait runs its block there), not the
// trace writer's or another queue's, whose frees would otherwise count against the run. Local-exec TLS in the
// executable: reading it allocates nothing, even while a thread starts or ends.
static _Thread_local bool counting;
static atomic_uint_fast64_t allocations;
static atomic_uint_fast64_t bytes;
/// Usable bytes allocated minus usable bytes freed while counting (on the counting thread, whatever arena).
static atomic_int_fast64_t net;

#if defined(__GLIBC__) && !defined(FL_SANITIZED)
#define FL_COUNTS 1

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static inline bool on(void) { return counting; }

static inline void note(size_t size, void *result) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
    if (result) atomic_fetch_add_explicit(&net, (int_fast64_t)malloc_usable_size(result), memory_order_relaxed);
}

void *malloc(size_t size) {
    void *result = __libc_malloc(size);
    if (on()) note(size, result);
    return result;
}

void *calloc(size_t count, size_t size) {
    void *result = __libc_calloc(count, size);
    if (on()) note(count * size, result);
    return result;
}

void *realloc(void *pointer, size_t size) {
    if (!on()) return __libc_realloc(pointer, size);
    size_t before = pointer ? malloc_usable_size(pointer) : 0;
    void *result = __libc_realloc(pointer, size);
    // A failed realloc keeps the old block; a realloc to 0 may free it.
    if (result || size == 0) atomic_fetch_sub_explicit(&net, (int_fast64_t)before, memory_order_relaxed);
    note(size, result);
    return result;
}

void *memalign(size_t alignment, size_t size) {
    void *result = __libc_memalign(alignment, size);
    if (on()) note(size, result);
    return result;
}

void *aligned_alloc(size_t alignment, size_t size) {
    void *result = __libc_memalign(alignment, size);
    if (on()) note(size, result);
    return result;
}

// glibc's checks: a power of two that is a multiple of sizeof(void *), else EINVAL; ENOMEM when out of memory.
int posix_memalign(void **pointer, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    void *result = __libc_memalign(alignment, size);
    if (!result) return ENOMEM;
    *pointer = result;
    if (on()) note(size, result);
    return 0;
}

void *valloc(size_t size) {
    void *result = __libc_valloc(size);
    if (on()) note(size, result);
    return result;
}

void *pvalloc(size_t size) {
    void *result = __libc_pvalloc(size);
    if (on()) note(size, result);
    return result;
}

void free(void *pointer) {
    if (pointer && on()) atomic_fetch_sub_explicit(&net, (int_fast64_t)malloc_usable_size(pointer), memory_order_relaxed);
    __libc_free(pointer);
}
#endif

bool fl_allocations_counted(void) {
#ifdef FL_COUNTS
    return true;
#else
    return false;
#endif
}

void fl_allocation_counting(bool on) {
    if (on) {
        atomic_store_explicit(&allocations, 0, memory_order_relaxed);
        atomic_store_explicit(&bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&net, 0, memory_order_relaxed);
    }
    counting = on;
}

fl_allocation_totals fl_allocation_read(void) {
    fl_allocation_totals totals = {
        atomic_load_explicit(&allocations, memory_order_relaxed),
        atomic_load_explicit(&bytes, memory_order_relaxed),
        atomic_load_explicit(&net, memory_order_relaxed),
    };
    return totals;
}
