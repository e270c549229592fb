/* The buffer behind format/pb.h: grown for a message larger than it, handed
 * to the sink (which compresses) once it holds TP_PB_BUF bytes. */
#include "format/pb.h"

#include <errno.h>
#include <stdlib.h>

#include "format/sink.h"

int tp_pb_init(struct tp_pb *pb, struct tp_sink *sink)
{
	memset(pb, 0, sizeof(*pb));
	pb->sink = sink;
	/* Room for a full buffer plus one ordinary message past it: reserve
	 * flushes only once TP_PB_BUF is reached. */
	pb->cap = TP_PB_BUF + 64 * 1024;
	pb->buf = malloc(pb->cap);
	if (!pb->buf) {
		pb->cap = 0;
		pb->error = -ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

void tp_pb_free(struct tp_pb *pb)
{
	free(pb->buf);
	pb->buf = NULL;
	pb->len = pb->cap = 0;
}

int tp_pb_flush(struct tp_pb *pb)
{
	if (!pb->sink || pb->len == 0)
		return pb->error;
	int rc = tp_sink_write(pb->sink, pb->buf, pb->len);
	if (rc && !pb->error)
		pb->error = rc;
	/* The bytes are dropped either way: after a sink error the file is
	 * lost (tp_sink_close reports it), and keeping them would grow the
	 * buffer without bound. */
	pb->total += pb->len;
	pb->len = 0;
	return rc;
}

uint8_t *tp_pb_reserve_slow(struct tp_pb *pb, size_t n)
{
	if (!pb->buf)
		return NULL;
	if (pb->sink && pb->len >= TP_PB_BUF)
		tp_pb_flush(pb);
	if (pb->cap - pb->len >= n && (pb->len < TP_PB_BUF || !pb->sink))
		return pb->buf + pb->len;
	if (pb->sink && pb->len)
		tp_pb_flush(pb);
	if (pb->cap - pb->len < n) {
		/* Without a sink everything is kept: double.  With one, the
		 * buffer only needs to hold this one message. */
		size_t cap = pb->cap;
		while (cap - pb->len < n) {
			if (cap > SIZE_MAX / 2) {
				pb->error = pb->error ? pb->error : -ENOMEM;
				return NULL;
			}
			cap *= 2;
		}
		uint8_t *b = realloc(pb->buf, cap);
		if (!b) {
			if (!pb->error)
				pb->error = -ENOMEM;
			return NULL;
		}
		pb->buf = b;
		pb->cap = cap;
	}
	return pb->buf + pb->len;
}
