/* The time a client has to send a whole request (deadline.h). */
#include "config.h"

#include "api/deadline.h"
#include "api/reply.h"

#include "clock.h"
#include "xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct pw_api_conn {
	int fd;
	bool plain;                    /* not TLS: pyward may write HTTP on fd */
	atomic_int_fast64_t since_ms;  /* waiting for a request since; 0: answering */
	bool cut;
	pw_api_conn *prev, *next;
};

struct pw_api_deadlines {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool stop;
	int64_t limit_ms;
	atomic_uint_fast64_t *cut;
	pw_api_conn *head;
};

static void *watch(void *arg)
{
	pw_api_deadlines *d = arg;
	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 250 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->wake, &d->lock, &until);
		int64_t now = pw_clock_mono_ms();
		for (pw_api_conn *c = d->head; c; c = c->next) {
			int64_t since = atomic_load(&c->since_ms);
			if (since && !c->cut && now - since > d->limit_ms) {
				/* Under the lock: closed() takes it before the
				 * daemon closes fd, so fd is still this connection's.
				 * MHD writes nothing before a request is complete, so
				 * a 408 in the one error shape goes first, unless TLS
				 * (records only the library may write). No lingering
				 * here: the watchdog serves every connection. */
				if (c->plain) {
					char msg[96];
					snprintf(msg, sizeof msg, "the request did not arrive in full within %lld seconds",
						 (long long)(d->limit_ms / 1000));
					pw_api_write_error_now(c->fd, 408, "Request Timeout", "request-timeout", msg,
							       "send the whole request at once, or ask for a longer "
							       "--request-timeout", 0);
				}
				shutdown(c->fd, SHUT_RDWR);
				c->cut = true;
				if (d->cut)
					atomic_fetch_add(d->cut, 1);
			}
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

pw_api_deadlines *pw_api_deadlines_start(unsigned seconds, atomic_uint_fast64_t *cut)
{
	pw_api_deadlines *d = xcalloc(1, sizeof *d);
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->wake, &ca);
	pthread_condattr_destroy(&ca);
	d->limit_ms = (int64_t)seconds * 1000;
	d->cut = cut;
	if (pthread_create(&d->thread, NULL, watch, d) != 0)
		abort();
	return d;
}

void pw_api_deadlines_stop(pw_api_deadlines **dp)
{
	pw_api_deadlines *d = dp ? *dp : NULL;
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	while (d->head) {
		pw_api_conn *c = d->head;
		d->head = c->next;
		free(c);
	}
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d);
	*dp = NULL;
}

pw_api_conn *pw_api_conn_opened(pw_api_deadlines *d, int fd, bool plain)
{
	pw_api_conn *c = xcalloc(1, sizeof *c);
	c->fd = fd;
	c->plain = plain;
	atomic_store(&c->since_ms, pw_clock_mono_ms());
	pthread_mutex_lock(&d->lock);
	c->next = d->head;
	if (d->head)
		d->head->prev = c;
	d->head = c;
	pthread_mutex_unlock(&d->lock);
	return c;
}

void pw_api_conn_closed(pw_api_deadlines *d, pw_api_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		d->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&d->lock);
	free(c);
}

void pw_api_conn_answering(pw_api_conn *c)
{
	if (c)
		atomic_store(&c->since_ms, 0);
}

void pw_api_conn_waiting(pw_api_conn *c)
{
	if (c)
		atomic_store(&c->since_ms, pw_clock_mono_ms());
}
