#include "collector/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"

enum tp_action tp_schedule_action(const struct tp_schedule *s, uint64_t step)
{
	if (!s->enabled)
		return TP_ACT_RECORD;
	if (step < s->skip_first)
		return TP_ACT_NONE;
	step -= s->skip_first;
	uint64_t num_steps = s->wait + s->warmup + s->active;
	/* torch: `repeat > 0 and step / num_steps >= repeat` with true division,
	 * which for non-negative integers is the same as the floor division. */
	if (s->repeat > 0 && step / num_steps >= s->repeat)
		return TP_ACT_NONE;
	uint64_t mod_step = step % num_steps;
	if (mod_step < s->wait)
		return TP_ACT_NONE;
	if (mod_step < s->wait + s->warmup)
		return TP_ACT_WARMUP;
	return mod_step < num_steps - 1 ? TP_ACT_RECORD : TP_ACT_RECORD_AND_SAVE;
}

unsigned tp_schedule_transition(enum tp_action prev, enum tp_action cur)
{
	/* Rows of torch.profiler.profile.action_map.  prepare_trace has no
	 * separate effect here: WARMUP events are never written. */
	switch (prev) {
	case TP_ACT_NONE:
		if (cur == TP_ACT_RECORD || cur == TP_ACT_RECORD_AND_SAVE)
			return TP_TR_START;
		return 0;
	case TP_ACT_WARMUP:
		if (cur == TP_ACT_NONE)
			return TP_TR_WARN; /* start_trace + stop_trace: an empty, unsaved window */
		if (cur == TP_ACT_RECORD || cur == TP_ACT_RECORD_AND_SAVE)
			return TP_TR_START;
		return 0; /* WARMUP -> WARMUP; WARMUP -> exit starts and stops, saves nothing */
	case TP_ACT_RECORD:
		if (cur == TP_ACT_NONE || cur == TP_ACT_WARMUP)
			return TP_TR_WARN | TP_TR_STOP; /* stopped, not saved */
		if (cur == TP_ACT_EXIT)
			return TP_TR_STOP | TP_TR_SAVE;
		return 0;
	case TP_ACT_RECORD_AND_SAVE:
		if (cur == TP_ACT_RECORD || cur == TP_ACT_RECORD_AND_SAVE)
			return TP_TR_STOP | TP_TR_SAVE | TP_TR_START;
		return TP_TR_STOP | TP_TR_SAVE;
	default:
		return 0;
	}
}


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
