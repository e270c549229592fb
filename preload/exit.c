/* _exit() and _Exit(), interposed: a forked child that ends with them runs
 * no saving code and its open window is lost, but it no longer leaves the
 * window's hidden temporary file behind (format/sink_live.c; issue 41 item
 * 8).  DataLoader workers end so (multiprocessing's os._exit()).  The
 * program itself keeps its file (a cut window, for recover), and so does
 * the parent of a vfork() child whose exec failed (told apart by pid).
 * Then the real _exit(): the next one in the lookup order
 * (a sanitizer runtime's interceptor comes before this library and reaches
 * us through its own RTLD_NEXT; libc's comes after). */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/dl.h"
#include "format/sink.h"
#include "preload/export.h"

typedef void (*ex_fn)(int) __attribute__((noreturn));

/* Found by the constructor, while one thread runs; only read after. */
static ex_fn ex_real;

__attribute__((constructor)) static void ex_init(void)
{
	ex_real = (ex_fn)tp_dl_sym(RTLD_NEXT, "_exit");
}

__attribute__((noreturn)) static void ex_leave(int status)
{
	tp_sink_live_drop();
	if (ex_real)
		ex_real(status);
	/* What glibc's _exit does, if the lookup found none. */
	for (;;)
		syscall(SYS_exit_group, status);
}

TP_EXPORT void _exit(int status)
{
	ex_leave(status);
}

TP_EXPORT void _Exit(int status)
{
	ex_leave(status);
}
