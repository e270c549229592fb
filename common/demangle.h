/* C++ names for display: __cxa_demangle, looked up lazily in whatever the
 * process has loaded (libstdc++ in every C++ program, PyTorch included; a
 * plain C program has none, and then shows names as they are, as nsys does
 * without it).  traceprof never links or loads libstdc++ itself.
 *
 * Thread-safe: the lookup is published with an atomic store, and two threads
 * looking up at once find the same function.  A lookup that finds nothing is
 * tried again on the next mangled name (a program may load libstdc++ later,
 * with a Python extension), so callers cache results per name, as all of
 * them do (one dlsym per distinct name at most).  Not async-signal-safe:
 * __cxa_demangle allocates.  Not for the hook path: flush thread only. */
#ifndef TP_COMMON_DEMANGLE_H
#define TP_COMMON_DEMANGLE_H

#include <stddef.h>
#include <stdint.h>

/* The longest demangled name kept, in bytes: a longer one is cut on a
 * character boundary and ends in "..." (docs/trace-format.md). */
#define TP_DEMANGLE_MAX 4096

/* The demangled form of name, malloc'd (the caller frees it), at most
 * TP_DEMANGLE_MAX bytes, or NULL when name is not an Itanium-ABI mangled
 * name ("_Z..."), no demangler is loaded, demangling failed (malformed
 * name, out of memory), or the demangled form would pass 1 MiB (a bound
 * computed from the mangled name first, so that such a name costs no
 * demangling at all; the caller then shows the mangled name). */
char *tp_demangle(const char *name);

/* How many names were cut, and how many left mangled for their size, in
 * this process so far (any thread). */
uint64_t tp_demangle_cut_count(void);
uint64_t tp_demangle_refused_count(void);

/* The name to show: the demangled form of name written into buf (cut to
 * size - 1 bytes, NUL-terminated) and buf returned, or name itself when it
 * does not demangle. */
const char *tp_demangle_into(const char *name, char *buf, size_t size);

#endif
