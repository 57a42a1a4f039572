#ifndef CMALLOCCOUNTER_H
#define CMALLOCCOUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Allocations (malloc, calloc, realloc and the aligned allocators) and their bytes counted while counting was on,
/// and the usable bytes allocated minus those freed meanwhile (what was kept).
typedef struct {
    uint64_t allocations;
    uint64_t bytes;
    int64_t net;
} fl_allocation_totals;

/// True when this process's malloc is the counting one (not under a sanitizer, on glibc).
bool fl_allocations_counted(void);
/// Starts (zeroing the totals) or stops counting on the calling thread.
void fl_allocation_counting(bool on);
/// The totals since counting last started.
fl_allocation_totals fl_allocation_read(void);

#endif
