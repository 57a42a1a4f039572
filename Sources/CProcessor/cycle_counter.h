// The processor's cycle counter, for the probes' clock: reading it costs about a third of clock_gettime.
#ifndef FAULTLINE_CYCLE_COUNTER_H
#define FAULTLINE_CYCLE_COUNTER_H

#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
/// The time-stamp counter (RDTSC); 1 when this build can read it.
#define FAULTLINE_HAS_CYCLE_COUNTER 1
static inline uint64_t faultline_cycle_counter(void) { return __rdtsc(); }
#else
#define FAULTLINE_HAS_CYCLE_COUNTER 0
static inline uint64_t faultline_cycle_counter(void) { return 0; }
#endif

#endif
