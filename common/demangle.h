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

/* The demangled form of name, malloc'd (the caller frees it), or NULL when
 * name is not an Itanium-ABI mangled name ("_Z..."), no demangler is
 * loaded, or demangling failed (malformed name, out of memory). */
char *tp_demangle(const char *name);

/* The name to show: the demangled form of name written into buf (cut to
 * size - 1 bytes, NUL-terminated) and buf returned, or name itself when it
 * does not demangle. */
const char *tp_demangle_into(const char *name, char *buf, size_t size);

#endif
