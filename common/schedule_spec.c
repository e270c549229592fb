#include "common/schedule_spec.h"

#include <string.h>

#include "common/log.h"

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	if (n == 0 || n > 18)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int tp_schedule_parse(const char *text, struct tp_schedule *out, char *err, int errlen)
{
	static const char *const keys[] = { "skip_first", "wait", "warmup", "active", "repeat" };
	uint64_t vals[5] = { 0, 0, 0, 0, 0 };
	int seen[5] = { 0, 0, 0, 0, 0 };
	const char *p = text;

	if (!*p) {
		tp_format(err, errlen, "empty schedule; expected e.g. 'wait=1,warmup=1,active=3'");
		return -1;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (!eq) {
			tp_format(err, errlen, "'%.*s' is not key=value", (int)len, p);
			return -1;
		}
		size_t klen = (size_t)(eq - p);
		int k = -1;
		for (int i = 0; i < 5; i++)
			if (strlen(keys[i]) == klen && !memcmp(p, keys[i], klen))
				k = i;
		if (k < 0) {
			tp_format(err, errlen,
				  "unknown key '%.*s'; keys are skip_first, wait, warmup, active, repeat",
				  (int)klen, p);
			return -1;
		}
		if (seen[k]) {
			tp_format(err, errlen, "'%s' given twice", keys[k]);
			return -1;
		}
		seen[k] = 1;
		if (parse_u64(eq + 1, len - klen - 1, &vals[k])) {
			tp_format(err, errlen, "'%.*s': %s must be a non-negative integer", (int)len, p,
				  keys[k]);
			return -1;
		}
		if (!end)
			break;
		p = end + 1;
		if (!*p) {
			tp_format(err, errlen, "trailing ','");
			return -1;
		}
	}
	if (!seen[3]) {
		tp_format(err, errlen, "'active' is required (active must be > 0)");
		return -1;
	}
	if (vals[3] == 0) {
		tp_format(err, errlen, "'active=0': active must be > 0");
		return -1;
	}
	out->enabled = 1;
	out->skip_first = vals[0];
	out->wait = vals[1];
	out->warmup = vals[2];
	out->active = vals[3];
	out->repeat = vals[4];
	return 0;
}
