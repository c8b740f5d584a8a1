/*
 * Helpers shared by the unit tests: paths and text, temporary directories,
 * helper scripts run to completion, and the fixture servers of
 * tests/fixtures (spawned without a shell, waited for through their port
 * file, stopped by PID). Uses cmocka's assertions, so only for test programs.
 */
#ifndef PW_TESTLIB_H
#define PW_TESTLIB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/* Fails the test with the error's message when expr (a call returning
 * pw_err *) returns one. */
#define assert_ok(expr) \
	do { \
		pw_err *e_ = (expr); \
		if (e_) \
			fail_msg("unexpected %s error: %s (hint: %s)", pw_err_code_name(pw_err_code(e_)), \
				 pw_err_message(e_), pw_err_hint(e_) ? pw_err_hint(e_) : "none"); \
	} while (0)

/* e has the code (else the test fails); frees it. */
void expect_err(pw_err *e, pw_errcode code);

/* snprintf for paths and URLs: a result that does not fit is a broken
 * fixture, never something to carry on with, so it aborts. */
void tl_textf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* dir/rel, in one of eight rotating buffers: for immediate use only. */
const char *tl_path(const char *dir, const char *rel);

void tl_sleep_ms(long ms);
long long tl_now_ms(void); /* monotonic */

/* $TOP_SRCDIR, or NULL when the harness did not set it. */
const char *tl_top_srcdir(void);
/* $PYTHON3, else "python3". */
const char *tl_python(void);
/* tests/fixtures/NAME, through $TOP_SRCDIR, else relative to this source. */
void tl_fixture_path(char *buf, size_t n, const char *name);

bool tl_exists(const char *path); /* lstat: a dangling link exists */
/* Write text to path, failing the test when it cannot. */
void tl_write_text(const char *path, const char *text);

/* $TMPDIR/NAME-XXXXXX (else /tmp), made by mkdtemp into buf; -1 (and buf
 * emptied) on failure. */
int tl_make_temp_dir(char *buf, size_t n, const char *name);
/* Remove dir and everything below it, without following links. */
void tl_remove_tree(const char *dir);

/* The exit status of our child pid (128 + N when killed by signal N). */
int tl_wait_child(pid_t pid);
/* Run argv to completion, no shell; its exit status (127: cannot run it). */
int tl_run(const char *const argv[]);

/* A fixture server: our child, its port once known, and its files. */
typedef struct tl_server {
	pid_t pid;
	int port;
	char portfile[PATH_MAX];
	char log[PATH_MAX];
} tl_server;

/* Name its files dir/NAME.port and dir/NAME.log. */
void tl_server_files(tl_server *s, const char *dir, const char *name);
/* Start it: argv without a shell, stdin from /dev/null, and (on Linux)
 * killed with its parent. 0, or -1 when there is no child. */
int tl_spawn(tl_server *s, const char *const argv[]);
/* Look once for its port: > 0 the port (s->port set); 0 still starting;
 * TL_GONE when it exited, TL_NOEXEC when it could not be run (s->pid is
 * then 0). */
#define TL_GONE (-1)
#define TL_NOEXEC (-2)
int tl_poll_port(tl_server *s);
/* Wait at most wait_ms for its port: 0 up, 1 it could not be run (no
 * Python), -1 it died or was slow. tl_wait_ports: the same for n servers
 * started at once (each a Python start-up), until every one has its port. */
int tl_wait_port(tl_server *s, int wait_ms);
int tl_wait_ports(tl_server *const servers[], size_t n, int wait_ms);
/* SIGTERM to exactly our child, SIGKILL after 2 s; always reaped. */
void tl_stop(tl_server *s);

/* The start of a test with loopback TLS servers: a temporary directory
 * NAME-XXXXXX (see tl_make_temp_dir) and, in dir/tls, a CA and a server
 * certificate for "localhost" made by tests/fixtures/make_ca.sh. 0, or -1
 * when the directory or the certificates could not be made. */
typedef struct tl_tls_dir {
	char dir[PATH_MAX];
	char tls[PATH_MAX];
	char ca[PATH_MAX];       /* the CA that signed cert */
	char other_ca[PATH_MAX]; /* a CA that signed nothing here */
	char cert[PATH_MAX], key[PATH_MAX];
} tl_tls_dir;
int tl_tls_dir_make(tl_tls_dir *t, const char *name);

/* A TCP port on 127.0.0.1 with nothing listening (bound, then released). */
int tl_dead_port(void);
/* Unset the machine's proxy settings, so that loopback requests stay here. */
void tl_unset_proxy_env(void);


#endif
