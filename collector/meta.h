/* Process facts that other modules learn at run time and every trace file
 * reports, written by a flush plugin into the "traceprof" object (and, for
 * the CUDA versions, also at the top level under Kineto's key names, which
 * analysis tools read). */
#ifndef TP_COLLECTOR_META_H
#define TP_COLLECTOR_META_H

/* The CUDA runtime and driver versions as cudaRuntimeGetVersion() and
 * cuDriverGetVersion() give them (e.g. 12040 for 12.4); 0 leaves a version
 * unknown (not written).  Any thread, any time: files written after the call
 * carry them. */
void tp_meta_set_cuda_versions(int runtime, int driver);

#endif
