/* A job log with a size bound: the head written through, the tail kept in a ring. */
#include "config.h"

#include "joblog.h"

#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pw_joblog {
	int fd;
	size_t head_cap, head_used;
	char *ring;           /* tail_cap bytes; ring_start is the oldest */
	size_t tail_cap, ring_len, ring_start;
	uint64_t passed;      /* bytes that went to the ring, kept or not */
};

pw_joblog *pw_joblog_new(int fd, size_t head_cap, size_t tail_cap)
{
	pw_joblog *l = xcalloc(1, sizeof *l);
	l->fd = fd;
	l->head_cap = head_cap;
	l->tail_cap = tail_cap;
	l->ring = tail_cap ? xmalloc(tail_cap) : NULL;
	return l;
}

static void write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a full disk loses log text, never the job */
		buf += w;
		n -= (size_t)w;
	}
}

static void ring_put(pw_joblog *l, const char *buf, size_t n)
{
	l->passed += n;
	if (!l->tail_cap)
		return;
	if (n >= l->tail_cap) { /* only the newest tail_cap bytes can stay */
		memcpy(l->ring, buf + n - l->tail_cap, l->tail_cap);
		l->ring_start = 0;
		l->ring_len = l->tail_cap;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t end = (l->ring_start + l->ring_len) % l->tail_cap;
		l->ring[end] = buf[i];
		if (l->ring_len < l->tail_cap)
			l->ring_len++;
		else
			l->ring_start = (l->ring_start + 1) % l->tail_cap;
	}
}

void pw_joblog_write(pw_joblog *l, const char *buf, size_t n)
{
	size_t room = l->head_cap - l->head_used;
	size_t head = n < room ? n : room;
	if (head) {
		write_all(l->fd, buf, head);
		l->head_used += head;
	}
	if (n > head)
		ring_put(l, buf + head, n - head);
}

uint64_t pw_joblog_dropped(const pw_joblog *l)
{
	return l->passed - l->ring_len;
}

void pw_joblog_close(pw_joblog **lp)
{
	pw_joblog *l = *lp;
	if (!l)
		return;
	if (pw_joblog_dropped(l) > 0) {
		char note[160];
		int n = snprintf(note, sizeof note, _("\n[pyward: %llu bytes of output left out of this log]\n"),
				 (unsigned long long)pw_joblog_dropped(l));
		if (n > 0)
			write_all(l->fd, note, (size_t)n < sizeof note ? (size_t)n : sizeof note - 1);
	}
	if (l->ring_len) {
		size_t first = l->ring_len;
		if (l->ring_start + first > l->tail_cap)
			first = l->tail_cap - l->ring_start;
		write_all(l->fd, l->ring + l->ring_start, first);
		write_all(l->fd, l->ring, l->ring_len - first);
	}
	free(l->ring);
	free(l);
	*lp = NULL;
}
