/* What the flush thread reads about its own process from /proc (through
 * common/procfs.h): the program's name and command
 * line for the trace, its threads' names, and whether only the flush thread
 * is left. */
#include <stdint.h>
#include <string.h>

#include "collector/flush_int.h"
#include "collector/thread.h"
#include "common/log.h"
#include "common/procfs.h"

void tp_fl_read_identity(void)
{
	tp_procfs_read_text("/proc/self/cmdline", tp_fl.cmdline, sizeof(tp_fl.cmdline), 1);
	char exe[256];
	tp_procfs_read_text("/proc/self/comm", exe, sizeof(exe), 0);
	tp_format(tp_fl.program, sizeof(tp_fl.program), "%s", exe[0] ? exe : "program");
}

void tp_fl_refresh_thread_name(struct tp_thread *t)
{
	if (t->named_by_user || atomic_load_explicit(&t->dead, memory_order_acquire))
		return;
	char path[64];
	tp_format(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
	char name[sizeof(t->name)];
	tp_procfs_read_text(path, name, sizeof(name), 0);
	if (name[0])
		memcpy(t->name, name, sizeof(name));
	else if (!t->name[0])
		tp_format(t->name, sizeof(t->name), "thread %d", (int)t->tid);
}

/* Read only once the main thread is gone: kept open (see struct
 * tp_procfs_file).  The main thread's stat, read every 100 ms, is opened
 * each time: one descriptor fewer held for the program's whole life (a
 * program under a small RLIMIT_NOFILE).  Flush thread only. */
static struct tp_procfs_file self_status = TP_PROCFS_FILE_INIT;

int tp_fl_alone(void)
{
	char path[64], buf[2048];
	tp_format(path, sizeof(path), "/proc/self/task/%lld/stat", (long long)tp_fl.pid);
	if (tp_procfs_read(path, buf, sizeof(buf)) < 0)
		return 0;
	char state = tp_procfs_stat_state(buf);
	if (state != 'Z' && state != 'X')
		return 0; /* the main thread runs: the common case, one read */
	tp_procfs_pread(&self_status, "/proc/self/status", buf, sizeof(buf));
	uint64_t n;
	/* the zombie main thread and us */
	return tp_procfs_field_u64(buf, "Threads:", &n) == 0 && n <= 2;
}
