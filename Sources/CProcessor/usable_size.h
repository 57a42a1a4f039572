// The allocator's size of a block, for the engine's count of the pages it keeps for reuse (SparePages).
#ifndef FAULTLINE_USABLE_SIZE_H
#define FAULTLINE_USABLE_SIZE_H

#include <stddef.h>
#if defined(__APPLE__)
#include <malloc/malloc.h>
static inline size_t faultline_usable_size(const void *block) { return malloc_size(block); }
#else
#include <malloc.h>
/// The usable size of a block from malloc (at least the size asked for).
static inline size_t faultline_usable_size(const void *block) { return malloc_usable_size((void *)block); }
#endif

#endif
