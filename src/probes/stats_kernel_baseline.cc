// The statistics kernel for the baseline instruction set.
#define MI_STATS_KERNEL StatsKernelBaseline
#include "probes/stats_kernel.inc"
