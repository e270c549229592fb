/* The text of a cut window's file (issue 44), read and written by the
 * next run's finishing (collector/cut.c, plain files; collector/cut_codec.c,
 * compressed ones): its header, its events' lines, and the closing text
 * recover.py writes (python/traceprof/cli/recover.py). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/cut_int.h"
#include "collector/flush_int.h"
#include "common/layout.h"
#include "common/log.h"

/* The JSON string value after `key` in h (simple escapes only); 0 or -1. */
static int cut_str(const char *h, const char *key, char *out, size_t size)
{
	const char *p = strstr(h, key);
	if (!p)
		return -1;
	p += strlen(key);
	size_t n = 0;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\') {
			p++;
			if (*p != '"' && *p != '\\' && *p != '/')
				return -1; /* recover's (a name with control characters) */
		}
		if (n + 1 >= size)
			return -1;
		out[n++] = *p;
	}
	out[n] = '\0';
	return *p == '"' ? 0 : -1;
}

static int cut_int(const char *h, const char *key, long long *out)
{
	const char *p = strstr(h, key);
	if (!p)
		return -1;
	char *end;
	errno = 0;
	*out = strtoll(p + strlen(key), &end, 10);
	return errno || end == p + strlen(key) ? -1 : 0;
}

#define CUT_KEY(k) "\"" k "\": "

int tp_cut_head_parse(const char *h, size_t n, struct tp_cut_head *hd, long pid)
{
	const char *ev = strstr(h, CUT_KEY(TP_DOC_TRACE_EVENTS) "[\n");
	const char *win = strstr(h, CUT_KEY(TP_DOC_WINDOW) "{");
	const char *di = strstr(h, CUT_KEY(TP_DOC_DISTRIBUTED_INFO) "{");
	if (!ev || !win || win > ev || n != strlen(h))
		return -1;
	hd->events_at = (size_t)(ev - h) + strlen(CUT_KEY(TP_DOC_TRACE_EVENTS) "[\n");
	long long wpid;
	if (cut_str(win, CUT_KEY(TP_WINDOW_NAME) "\"", hd->pattern, sizeof(hd->pattern)) ||
	    cut_str(win, CUT_KEY(TP_WINDOW_HOST) "\"", hd->host, sizeof(hd->host)) ||
	    cut_int(win, CUT_KEY(TP_WINDOW_PART), &hd->part) ||
	    cut_int(win, CUT_KEY(TP_WINDOW_FIRST_STEP), &hd->first_step) ||
	    cut_int(win, CUT_KEY(TP_WINDOW_PID), &wpid) || wpid != pid)
		return -1;
	if (strcmp(hd->host, tp_fl.vars.hostname))
		return -1; /* another host's process: cannot be looked up here */
	if (!di || cut_int(di, CUT_KEY(TP_DI_RANK), &hd->rank))
		hd->rank = -1;
	const char *dev = strstr(h, CUT_KEY(TP_DOC_DEVICE_PROPERTIES));
	hd->have_devices = dev && dev < ev;
	return 0;
}

/* Whether the line [b, e) is a whole JSON object: its braces close at its
 * last byte (outside strings).  A line cut inside a write cannot close. */
int tp_cut_whole(const char *b, const char *e)
{
	int depth = 0, str = 0;
	if (b == e || *b != '{')
		return 0;
	for (const char *p = b; p < e; p++) {
		if (str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				str = 0;
		} else if (*p == '"') {
			str = 1;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && --depth == 0) {
			return p == e - 1;
		}
	}
	return 0;
}

long long tp_cut_step(const char *b, const char *end)
{
	static const char step[] = "\"name\":\"" TP_STEP_PREFIX;
	long long last = -1;
	for (const char *p = b; (p = memmem(p, (size_t)(end - p), step, sizeof(step) - 1));) {
		p += sizeof(step) - 1;
		/* By hand, bounded: strtoll() could read past the mapping. */
		long long v = 0;
		const char *q = p;
		for (; q < end && *q >= '0' && *q <= '9' && q - p < 18; q++)
			v = v * 10 + (*q - '0');
		if (q > p && q < end && *q == '"')
			last = v;
	}
	return last;
}

int tp_cut_closing(char *buf, size_t size, const struct tp_cut_head *hd,
		   const struct tp_cut_scan *s, long pid, time_t mtime, const char *name)
{
	char when[64];
	struct tm tm;
	gmtime_r(&mtime, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S.000+00:00", &tm);
	char who[96];
	if (hd->rank >= 0)
		tp_format(who, sizeof(who), "rank %lld (pid %ld, cut)", hd->rank, pid);
	else
		tp_format(who, sizeof(who), "pid %ld (cut)", pid);
	long long last = s->last_step >= 0 ? s->last_step : hd->first_step;
	int n = tp_format(
		buf, (int)size,
		"%s{\"ph\":\"M\",\"name\":\"" TP_META_PROCESS_NAME "\",\"pid\":%ld,\"tid\":0,"
		"\"args\":{\"name\":\"%s\"}},\n{\"ph\":\"M\",\"name\":\"" TP_META_PROCESS_SORT_INDEX
		"\",\"pid\":%ld,\"tid\":0,\"args\":{\"sort_index\":%lld}}\n  ],\n  "
		"\"" TP_DOC_FOOTER "\": {\"version\": \"%s\", \"part\": %lld, \"parts\": %lld, "
		"\"steps\": [%lld, %lld], \"events_written\": %llu, \"" TP_FOOTER_CUT "\": "
		"{\"reason\": \"the process (pid %ld) ended before the window did\", "
		"\"last_write\": \"%s\", \"events_missing\": null, \"missing\": \"the events "
		"recorded after the file's last flush (every 0.5 s) and the GPU records not yet "
		"handed over; not counted\", \"recovered_by\": \"the next run's library %s "
		"(pid %ld)\"}}%s,\n  \"" TP_DOC_TRACE_NAME "\": \"",
		s->events ? ",\n" : "", pid, who, pid, hd->rank >= 0 ? hd->rank : 0, TRACEPROF_VERSION,
		hd->part, hd->part, hd->first_step, last, s->events, pid, when, TRACEPROF_VERSION,
		(long)tp_fl.pid, hd->have_devices ? "" : ",\n  \"" TP_DOC_DEVICE_PROPERTIES "\": []");
	if (n < 0 || (size_t)n >= size - 8 - 2 * strlen(name))
		return -ENAMETOOLONG;
	/* The name as a JSON string: the pattern came unescaped from one. */
	for (const char *p = name; *p; p++) {
		if (*p == '"' || *p == '\\')
			buf[n++] = '\\';
		buf[n++] = *p;
	}
	memcpy(buf + n, "\"\n}\n", 4);
	return n + 4;
}

int tp_cut_put(int fd, size_t off, const void *buf, size_t n)
{
	if (ftruncate(fd, (off_t)off) < 0)
		return -errno;
	for (size_t done = 0; done < n;) {
		ssize_t w = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}
