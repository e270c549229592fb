/* The dynamic-linker functions traceprof interposes (dlsym in
 * preload/resolve/cuda_dlsym.c, dlopen in preload/resolve/dl_open.c, dlerror in
 * preload/resolve/dl_error.c) and what the rest of preload/ asks of them. */
#ifndef TP_PRELOAD_RESOLVE_DL_HOOKS_H
#define TP_PRELOAD_RESOLVE_DL_HOOKS_H

#include "preload/cuda_pack.h" /* tp_dlsym_fn */

/* Around traceprof's own dl* calls on a program thread: the program's
 * pending dlerror() text is kept, and whatever our calls leave is dropped. */
void tp_dlerr_begin(void);
void tp_dlerr_end(void);
/* A lookup that traceprof answers NULL itself: the message glibc would have
 * left ("OBJECT: undefined symbol: NAME") becomes the pending error. */
void tp_dlerr_undefined(const char *object, const char *name);

/* libc's dlopen (never our hook); NULL if it cannot be found. */
typedef void *(*tp_dlopen_fn)(const char *, int);
tp_dlopen_fn tp_dl_real_dlopen(void);

/* Makes the dlopen hook's way ready before NVTX's start-up runs it with the
 * signals held (preload/resolve/nvtx_loader.c says why): the real dlopen's address
 * found and the hook's code pages touched.  Called by the constructor when
 * tp_nvtx_setenv() says NVTX will load this library. */
void tp_dl_open_warm(void);

/* The dlopen hook's first step (preload/resolve/dl_open.c): where to jump. */
void *tp_dl_open_plan(const char *file, int mode, const void *caller);

#endif
