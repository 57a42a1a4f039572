// A hint to take a cache line for writing ahead of the write, for the trace's queue (docs/trace-format.md, Cost).
#ifndef FAULTLINE_PREFETCH_H
#define FAULTLINE_PREFETCH_H

#if defined(__x86_64__)
#include <cpuid.h>

/// 1 when the processor has PREFETCHW (CPUID 8000_0001h, ECX bit 8): AMD processors, Intel ones since Broadwell.
static inline int faultline_can_prefetch_for_write(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx >> 8) & 1;
}

/// PREFETCHW: asks for the line holding `address` in a state that can be written, invalidating other processors'
/// copies now rather than when the line is written. Never faults. Only where `faultline_can_prefetch_for_write()`.
static inline void faultline_prefetch_for_write(const void *address) {
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)address));
}
#else
static inline int faultline_can_prefetch_for_write(void) { return 0; }
static inline void faultline_prefetch_for_write(const void *address) { (void)address; }
#endif

#endif
