/* Scratchpad sessions of the MCP server: see pads.h. */
#include "config.h"

#include "mcp/pads.h"

#include "clock.h"
#include "xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pad pad;

struct pw_mcp_pad_ticket {
	pw_mcp_pad_ticket *next;
	pad *pad;
};

struct pad {
	pad *next;
	char *session;
	pw_mcp_pad_ticket *queue;  /* the head runs, the others wait in order */
	pw_op_scratch_conn *conn;  /* NULL until the first call */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static pad *pads;

static char *own_name(const char *workspace)
{
	char *base = pw_op_scratch_default_session(workspace);
	char *tail = xasprintf("-mcp-%ld", (long)getpid());
	size_t room = 64 - strlen(tail);
	if (strlen(base) > room)
		memmove(base, base + strlen(base) - room, room + 1); /* keep the hash at the end */
	char *name = xasprintf("%s%s", base, tail);
	free(base);
	free(tail);
	return name;
}

char *pw_mcp_pads_own_session(const char *workspace)
{
	static char *name; /* computed once: one workspace per server */
	pthread_mutex_lock(&lock);
	if (!name)
		name = own_name(workspace);
	char *copy = xstrdup(name);
	pthread_mutex_unlock(&lock);
	return copy;
}

static pad *find_or_add_locked(const char *session)
{
	for (pad *p = pads; p; p = p->next)
		if (strcmp(p->session, session) == 0)
			return p;
	pad *p = xcalloc(1, sizeof *p);
	p->session = xstrdup(session);
	p->next = pads;
	pads = p;
	return p;
}

pw_mcp_pad_ticket *pw_mcp_pads_queue(const char *session)
{
	pw_mcp_pad_ticket *t = xcalloc(1, sizeof *t);
	pthread_mutex_lock(&lock);
	t->pad = find_or_add_locked(session);
	pw_mcp_pad_ticket **tail = &t->pad->queue;
	while (*tail)
		tail = &(*tail)->next;
	*tail = t;
	pthread_mutex_unlock(&lock);
	return t;
}

void pw_mcp_pads_drop(pw_mcp_pad_ticket *t)
{
	pthread_mutex_lock(&lock);
	for (pw_mcp_pad_ticket **p = &t->pad->queue; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	pthread_cond_broadcast(&freed);
	pthread_mutex_unlock(&lock);
	free(t);
}

/* Wait until t heads its queue; false when the call was cancelled first. */
static bool wait_turn(pw_mcp_pad_ticket *t, const pw_cancel *cancel)
{
	pthread_mutex_lock(&lock);
	while (t->pad->queue != t && !pw_cancel_raised(cancel)) {
		struct timespec ts;
		pw_clock_realtime_in(&ts, 100); /* the cancel token is looked at this often */
		pthread_cond_timedwait(&freed, &lock, &ts);
	}
	bool mine = t->pad->queue == t;
	pthread_mutex_unlock(&lock);
	return mine;
}

pw_err *pw_mcp_pads_run(pw_mcp_pad_ticket *t, const pw_ops_ctx *ctx, pw_op_scratch_request *rq,
			const pw_cancel *cancel, pw_op_scratch_result *out)
{
	out->cell = NULL;
	pad *p = t->pad;
	pthread_mutex_lock(&lock);
	bool must_wait = p->queue != t;
	pthread_mutex_unlock(&lock);
	if (must_wait && rq->hand_over) /* an earlier call runs: the wait is not watched */
		rq->hand_over(rq->hand_over_arg);
	if (!wait_turn(t, cancel)) {
		pw_mcp_pads_drop(t);
		return pw_err_new(PW_ERR_CANCELLED, NULL, "cancelled while an earlier call of session %s ran",
				  p->session);
	}
	rq->session = p->session;
	pw_op_io io = { .cancel = cancel };
	pw_err *e = pw_op_scratch_run(ctx, rq, &io, &p->conn, out);
	pw_mcp_pads_drop(t);
	return e;
}

void pw_mcp_pads_close_all(void)
{
	pthread_mutex_lock(&lock);
	for (pad *p = pads; p; p = p->next)
		if (!p->queue)
			pw_op_scratch_conn_close(&p->conn);
	pthread_mutex_unlock(&lock);
}
