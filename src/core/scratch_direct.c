/* Direct mode: one cell over a borrowed worker's pipes (see scratch_direct.h). */
#include "config.h"

#include "scratch_direct.h"

#include "clock.h"
#include "i18n.h"
#include "scratch_reply.h"
#include "sigpipe.h"
#include "xalloc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CANCEL_LOOK_MS 100

enum { TO, FROM, OUT, ERR };

struct pw_scratch_direct {
	pw_scratch_lease_info lease;
	int fd[4];
	pw_scratch_linebuf *from;
	pw_scratch_capture *out, *err;
	char *lost_kind, *lost_message;
};



pw_scratch_direct *pw_scratch_direct_new(pw_scratch_lease_info *lease, const int fds[4])
{
	pw_scratch_direct *d = xcalloc(1, sizeof *d);
	d->lease = *lease;
	memset(lease, 0, sizeof *lease);
	memcpy(d->fd, fds, sizeof d->fd);
	d->from = pw_scratch_linebuf_new();
	d->out = pw_scratch_capture_new(0);
	d->err = pw_scratch_capture_new(0);
	return d;
}

void pw_scratch_direct_free(pw_scratch_direct **d)
{
	if (!d || !*d)
		return;
	for (int i = 0; i < 4; i++)
		if ((*d)->fd[i] >= 0)
			close((*d)->fd[i]);
	pw_scratch_lease_clear(&(*d)->lease);
	pw_scratch_linebuf_free(&(*d)->from);
	pw_scratch_capture_free(&(*d)->out);
	pw_scratch_capture_free(&(*d)->err);
	free((*d)->lost_kind);
	free((*d)->lost_message);
	free(*d);
	*d = NULL;
}

const char *pw_scratch_direct_session(const pw_scratch_direct *d)
{
	return d->lease.session;
}

int64_t pw_scratch_direct_executions(const pw_scratch_direct *d)
{
	return d->lease.executions;
}

const char *pw_scratch_direct_lost_kind(const pw_scratch_direct *d)
{
	return d->lost_kind;
}

const char *pw_scratch_direct_lost_message(const pw_scratch_direct *d)
{
	return d->lost_message;
}

static void set_lost(pw_scratch_direct *d, const char *kind, char *message)
{
	if (d->lost_kind) {
		free(message);
		return;
	}
	d->lost_kind = xstrdup(kind);
	d->lost_message = message;
}

/* ---------------------------------------------------------------- sending */

/* The pipes were made non-blocking by the host (the flag is shared), and
 * a worker that has gone makes write() raise SIGPIPE (held off here). */
static bool write_all(int fd, const char *buf, size_t len)
{
	pw_sigpipe_guard g;
	pw_sigpipe_block(&g);
	bool ok = true;
	size_t off = 0;
	while (ok && off < len) {
		ssize_t n = write(fd, buf + off, len - off);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			ok = poll(&p, 1, -1) >= 0 || errno == EINTR;
		} else if (!(n < 0 && errno == EINTR)) {
			ok = false;
		}
	}
	pw_sigpipe_unblock(&g);
	return ok;
}

/* ---------------------------------------------------------------- waiting */

/* Read what the pipe holds now; at its end, close it and set *fd to -1. */
static void drain(int *fd, pw_scratch_capture *c)
{
	char buf[65536];
	while (*fd >= 0) {
		ssize_t n = read(*fd, buf, sizeof buf);
		if (n > 0)
			pw_scratch_capture_add(c, buf, (size_t)n);
		if (n == 0) {
			close(*fd);
			*fd = -1;
		}
		if (n < (ssize_t)sizeof buf && !(n < 0 && errno == EINTR))
			return;
	}
}

typedef struct cell {
	int64_t started_ms, deadline_ms, interrupt_ms;
	bool timed_out;
	json_t *reply;
	bool answer;                 /* the caller wants the text early (answer set) */
	pw_scratch_hand_over_fn hand_over; /* the caller's input, watched until handed over */
	void *hand_over_arg;
	int watch_fd;
	char *plain;                 /* or the reply in its plain shape, read by the scanner */
	pw_scratch_reply_view view;  /* and what it holds */
} cell;

/* Read the reply pipe: true when the cell is over (reply set, or the
 * worker gone). Lines other than a reply (a late hello) are skipped. */
static bool read_reply(pw_scratch_direct *d, cell *k)
{
	char buf[65536];
	ssize_t n = read(d->fd[FROM], buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0 || !pw_scratch_linebuf_feed(d->from, buf, (size_t)n)) {
		set_lost(d, "worker_crashed",
			 xstrdup(_("fresh scratchpad: the worker process ended while running a cell")));
		return true;
	}
	char *line;
	while (!k->reply && !k->plain && (line = pw_scratch_linebuf_take(d->from))) {
		/* the reply to this cell in its plain shape, with no interrupt
		 * sent: its text can go to the caller before anything is decoded */
		if (k->answer && !k->interrupt_ms && pw_scratch_reply_scan(line, strlen(line), &k->view) &&
		    k->view.id == d->lease.executions) {
			k->plain = line;
			return true;
		}
		json_t *j = json_loads(line, 0, NULL);
		free(line);
		if (!j) { /* not our worker script: it cannot be trusted */
			kill(-(pid_t)d->lease.pid, SIGKILL);
			set_lost(d, "worker_crashed", xstrdup(_("fresh scratchpad: the worker sent a line that is not JSON, "
								"so it was killed")));
			return true;
		}
		if (json_object_get(j, "status"))
			k->reply = j;
		else
			json_decref(j);
	}
	return k->reply || k->plain;
}

/* Interrupts for the cancel token and the budget, the kill after the
 * grace period; true when the worker was killed. */
static bool check_timers(pw_scratch_direct *d, cell *k, const pw_cancel *cancel, int64_t now)
{
	bool budget = k->deadline_ms && now >= k->deadline_ms;
	if (!k->interrupt_ms && (budget || (cancel && pw_cancel_raised(cancel)))) {
		k->timed_out = budget;
		/* The line naming the cell first (see pw_scratch_interrupt_line);
		 * one try: a worker that reads nothing meets the grace kill. */
		char line[64];
		size_t len = pw_scratch_interrupt_line(line, sizeof line, d->lease.executions);
		pw_sigpipe_guard g;
		pw_sigpipe_block(&g);
		if (write(d->fd[TO], line, len) != (ssize_t)len) {
			/* a pipe that takes nothing now: the SIGINT goes all the same */
		}
		pw_sigpipe_unblock(&g);
		kill((pid_t)d->lease.pid, SIGINT);
		k->interrupt_ms = now;
	}
	if (!k->interrupt_ms || now - k->interrupt_ms < d->lease.grace_ms)
		return false;
	kill(-(pid_t)d->lease.pid, SIGKILL);
	set_lost(d, k->timed_out ? "timeout_kill" : "interrupt_kill",
		 pw_scratch_kill_message((int)d->lease.grace_ms, k->timed_out));
	return true;
}

static int wait_ms(const pw_scratch_direct *d, const cell *k, const pw_cancel *cancel, int64_t now)
{
	int64_t wake = -1;
	if (k->interrupt_ms)
		wake = k->interrupt_ms + d->lease.grace_ms;
	else if (k->deadline_ms)
		wake = k->deadline_ms;
	if (cancel && !k->interrupt_ms && (wake < 0 || wake > now + CANCEL_LOOK_MS))
		wake = now + CANCEL_LOOK_MS;
	return wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
}

/* The caller's input is for another thread to read from now on. */
static void hand_over(cell *k)
{
	pw_scratch_hand_over_fn fn = k->hand_over;
	k->hand_over = NULL;
	if (fn)
		fn(k->hand_over_arg);
}

/* Until the reply comes or the worker is gone; output is read as it comes,
 * so a worker never blocks on a full pipe. */
static void wait_reply(pw_scratch_direct *d, cell *k, const pw_cancel *cancel)
{
	for (;;) {
		int64_t now = pw_clock_mono_ms();
		if (check_timers(d, k, cancel, now))
			return;
		struct pollfd p[4] = { { .fd = d->fd[FROM], .events = POLLIN },
				       { .fd = d->fd[OUT], .events = POLLIN },
				       { .fd = d->fd[ERR], .events = POLLIN },
				       { .fd = k->hand_over ? k->watch_fd : -1, .events = POLLIN } };
		int rc = poll(p, 4, wait_ms(d, k, cancel, now));
		if (rc < 0 && errno != EINTR)
			return (void)set_lost(d, "worker_crashed", xstrdup(_("fresh scratchpad: the worker's pipes failed")));
		if (rc <= 0)
			continue;
		if (p[3].revents)
			hand_over(k);
		/* Output first: the worker writes it before its reply. */
		if (p[1].revents)
			drain(&d->fd[OUT], d->out);
		if (p[2].revents)
			drain(&d->fd[ERR], d->err);
		if (p[0].revents && read_reply(d, k))
			return;
	}
}

/* ---------------------------------------------------------------- results */

static pw_scratch_result *make_result(pw_scratch_direct *d, const cell *k)
{
	pw_scratch_result *r = xcalloc(1, sizeof *r);
	r->session = xstrdup(d->lease.session);
	r->generation = d->lease.generation;
	r->execution = d->lease.executions;
	const char *status = "lost";
	if (k->plain) {
		status = k->view.error ? "error" : "ok";
	} else if (k->reply) {
		status = pw_scratch_reply_status(k->reply, k->timed_out);
		if (pw_scratch_reply_unstarted(k->reply)) { /* nothing ran: the number goes to the next cell */
			d->lease.executions--;
			r->execution = 0;
			json_object_set_new(k->reply, "traceback", json_string(pw_scratch_unstarted_traceback()));
		}
		const char *v = json_string_value(json_object_get(k->reply, "value"));
		const char *tb = json_string_value(json_object_get(k->reply, "traceback"));
		r->value = v ? xstrdup(v) : NULL;
		r->traceback = tb ? xstrdup(tb) : NULL;
	} else if (d->lost_kind && strcmp(d->lost_kind, "timeout_kill") == 0) {
		status = "timed_out";
	} else if (d->lost_kind && strcmp(d->lost_kind, "interrupt_kill") == 0) {
		status = "interrupted";
	}
	r->status = xstrdup(status);
	/* With a reply, the output is in already: the worker writes it first,
	 * so the poll that saw the reply saw the output pipes readable too. */
	if (!k->reply && !k->plain) {
		drain(&d->fd[OUT], d->out);
		drain(&d->fd[ERR], d->err);
	}
	r->out = pw_scratch_capture_text(d->out);
	r->err = pw_scratch_capture_text(d->err);
	r->out_dropped = pw_scratch_capture_dropped(d->out);
	r->err_dropped = pw_scratch_capture_dropped(d->err);
	if (d->lost_kind)
		pw_scratch_result_add_notice(r, d->lost_kind, d->lost_message);
	r->duration_ms = pw_clock_mono_ms() - k->started_ms;
	return r;
}

/* A plain reply: the result's text goes to the caller first, then the
 * result is returned without value and traceback (answered). */
static void answer_early(const pw_scratch_request *req, pw_scratch_result *r, const cell *k)
{
	size_t len = 0;
	char *text = pw_scratch_result_dump_with(r, k->view.value, k->view.value_len, k->view.traceback,
						 k->view.traceback_len, &len);
	if (!text) /* a string in the output the writer does not take: decode as before */
		return;
	r->answered = req->answer(req->answer_arg, text, len, k->view.error);
	free(text);
}

pw_err *pw_scratch_direct_run(pw_scratch_direct *d, const pw_scratch_request *req, const pw_cancel *cancel,
			      pw_scratch_result **out)
{
	*out = NULL;
	if (d->lost_kind)
		return pw_err_new(PW_ERR_FAILED, NULL, "%s", d->lost_message);
	cell k = { .started_ms = pw_clock_mono_ms(), .answer = req->answer != NULL, .hand_over = req->hand_over,
		   .hand_over_arg = req->hand_over_arg, .watch_fd = req->watch_fd };
	k.deadline_ms = req->timeout_ms > 0 ? k.started_ms + req->timeout_ms : 0;
	/* Output that came between cells (background tasks) is still in the
	 * pipes, and goes into this result like through the host. */
	pw_scratch_capture_reset(d->out, req->max_output);
	pw_scratch_capture_reset(d->err, req->max_output);
	size_t len;
	char *line = pw_scratch_cell_line(d->lease.executions + 1, req->code ? req->code : "", &len);
	if (len > PIPE_BUF) /* the write may wait for the worker to read */
		hand_over(&k);
	bool sent = write_all(d->fd[TO], line, len);
	free(line);
	if (!sent) {
		set_lost(d, "worker_crashed", xstrdup(_("fresh scratchpad: the worker process had ended")));
		return pw_err_new(PW_ERR_FAILED, _("run the call again: the session starts a fresh worker"), "%s",
				  d->lost_message);
	}
	d->lease.executions++;
	wait_reply(d, &k, cancel);
	*out = make_result(d, &k);
	if (k.plain) {
		answer_early(req, *out, &k);
		if (!(*out)->answered) { /* the decoded reply after all */
			json_t *j = json_loads(k.plain, 0, NULL);
			json_t *v = json_object_get(j, "value"), *tb = json_object_get(j, "traceback");
			(*out)->value = json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
			(*out)->traceback = json_is_string(tb) ? xstrdup(json_string_value(tb)) : NULL;
			json_decref(j);
		}
		free(k.plain);
	}
	json_decref(k.reply);
	return NULL;
}
