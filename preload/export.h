/* The library is built with -fvisibility=hidden; only what is marked
 * TP_EXPORT (the public API and the interposed functions) is visible, and
 * preload/exports.map lists the same names for the linker. */
#ifndef TP_PRELOAD_EXPORT_H
#define TP_PRELOAD_EXPORT_H

#define TP_EXPORT __attribute__((visibility("default")))

#endif
