/* Audit events to the journal or syslog (audit.h). */
#include "config.h"

#include "audit.h"
#include "clock.h"
#include "i18n.h"
#include "libload.h"
#include "xalloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

typedef enum target { TARGET_AUTO, TARGET_JOURNAL, TARGET_SYSLOG, TARGET_NONE } target;

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static target configured = TARGET_AUTO;
static char syslog_path[sizeof(((struct sockaddr_un *)0)->sun_path)] = PW_AUDIT_SYSLOG_SOCKET;
static atomic_uint_fast64_t sent_count, failure_count;
static _Atomic(const char *) last_target = "";

pw_err *pw_audit_configure(const char *audit_log, const char *syslog_socket)
{
	target t = TARGET_AUTO;
	if (!audit_log || strcmp(audit_log, "journal-or-syslog") == 0)
		t = TARGET_AUTO;
	else if (strcmp(audit_log, "journal") == 0)
		t = TARGET_JOURNAL;
	else if (strcmp(audit_log, "syslog") == 0)
		t = TARGET_SYSLOG;
	else if (strcmp(audit_log, "none") == 0)
		t = TARGET_NONE;
	else
		return pw_err_new(PW_ERR_USAGE, _("audit_log: journal, syslog, journal-or-syslog or none"),
				  _("unknown audit_log \"%s\""), audit_log);
	const char *sock = syslog_socket && *syslog_socket ? syslog_socket : PW_AUDIT_SYSLOG_SOCKET;
	if (strlen(sock) >= sizeof syslog_path)
		return pw_err_new(PW_ERR_USAGE, _("use a shorter path"), _("audit_syslog_socket is too long: %s"), sock);
	pthread_mutex_lock(&config_lock);
	configured = t;
	memcpy(syslog_path, sock, strlen(sock) + 1);
	pthread_mutex_unlock(&config_lock);
	return NULL;
}

uint64_t pw_audit_sent(void)
{
	return atomic_load(&sent_count);
}

uint64_t pw_audit_failures(void)
{
	return atomic_load(&failure_count);
}

const char *pw_audit_last_target(void)
{
	return atomic_load(&last_target);
}

static bool failed_outcome(const char *outcome)
{
	return !outcome || strcmp(outcome, PW_OUTCOME_OK) != 0;
}

/* The one readable line both paths carry. Protocol text for log readers
 * in any locale, so not translated. */
static char *message_of(const pw_op_rec *op)
{
	return xasprintf("pyward %s %s: operation %lld%s%s by %s (uid %lld)%s%s",
		op->kind ? op->kind : "?", op->outcome ? op->outcome : "?", (long long)op->id,
		op->target ? " on " : "", op->target ? op->target : "", op->user ? op->user : "?",
		(long long)op->uid, op->stop_reason ? ": " : "", op->stop_reason ? op->stop_reason : "");
}

/* ---------------------------------------------------------------- journal */

#ifdef HAVE_LIBSYSTEMD
static int (*journal_sendv)(const struct iovec *iov, int n);
static pthread_once_t journal_once = PTHREAD_ONCE_INIT;

static void journal_load(void)
{
	char *why = NULL;
	void *h = pw_lib_open(PW_LIBSYSTEMD_SONAME, &why);
	free(why);
	if (h)
		journal_sendv = (int (*)(const struct iovec *, int))dlsym(h, "sd_journal_sendv");
}
#endif

enum { JOURNAL_FIELDS = 16 };

static bool journal_send(const pw_op_rec *op)
{
#ifdef HAVE_LIBSYSTEMD
	pthread_once(&journal_once, journal_load);
	if (!journal_sendv)
		return false;
	char *msg = message_of(op);
	char *f[JOURNAL_FIELDS];
	int n = 0;
	f[n++] = xasprintf("MESSAGE=%s", msg);
	f[n++] = xasprintf("MESSAGE_ID=%s", PW_AUDIT_MESSAGE_ID);
	f[n++] = xasprintf("PRIORITY=%d", failed_outcome(op->outcome) ? 4 : 5);
	f[n++] = xstrdup("SYSLOG_IDENTIFIER=pyward");
	f[n++] = xasprintf("PYWARD_OPERATION_ID=%lld", (long long)op->id);
	f[n++] = xasprintf("PYWARD_KIND=%s", op->kind ? op->kind : "");
	f[n++] = xasprintf("PYWARD_OUTCOME=%s", op->outcome ? op->outcome : "");
	f[n++] = xasprintf("PYWARD_TARGET=%s", op->target ? op->target : "");
	f[n++] = xasprintf("PYWARD_USER=%s", op->user ? op->user : "");
	f[n++] = xasprintf("PYWARD_UID=%lld", (long long)op->uid);
	f[n++] = xasprintf("PYWARD_ATTEMPTS=%d", op->attempt_count);
	f[n++] = xasprintf("PYWARD_DURATION_MS=%lld", (long long)op->duration_ms);
	f[n++] = xasprintf("PYWARD_STARTED_AT=%s", op->started_at ? op->started_at : "");
	f[n++] = xasprintf("PYWARD_VERSION=%s", op->pyward_version ? op->pyward_version : PACKAGE_VERSION);
	if (op->stop_reason)
		f[n++] = xasprintf("PYWARD_STOP_REASON=%s", op->stop_reason);
	struct iovec iov[JOURNAL_FIELDS];
	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){ .iov_base = f[i], .iov_len = strlen(f[i]) };
	int rc = journal_sendv(iov, n);
	for (int i = 0; i < n; i++)
		free(f[i]);
	free(msg);
	return rc >= 0;
#else
	(void)op;
	return false;
#endif
}

/* ---------------------------------------------------------------- syslog */

/* An RFC 5424 PARAM-VALUE: '"', '\' and ']' escaped with a backslash. */
static void put_param(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	for (const char *p = value ? value : ""; *p; p++) {
		if (*p == '"' || *p == '\\' || *p == ']')
			fputc('\\', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

/* Only printable US-ASCII may appear in the header's fields (RFC 5424 6.2). */
static void put_header_word(FILE *f, const char *w, size_t max)
{
	size_t n = 0;
	for (const char *p = w; p && *p && n < max; p++, n++)
		fputc(*p > 32 && *p < 127 ? *p : '_', f);
	if (n == 0)
		fputc('-', f);
}

char *pw_audit_syslog_text(const pw_op_rec *op)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	/* facility user (1), severity notice (5) or warning (4) */
	char now[40], host[256] = "";
	pw_clock_iso_now(now, sizeof now);
	gethostname(host, sizeof host - 1);
	fprintf(f, "<%d>1 %s ", 8 + (failed_outcome(op->outcome) ? 4 : 5), now);
	put_header_word(f, host, 255);
	fprintf(f, " pyward %ld ", (long)getpid());
	put_header_word(f, op->kind, 32);
	/* 32473: the enterprise number RFC 5612 sets aside for examples;
	 * pyward has none of its own. */
	fputs(" [pyward@32473", f);
	char num[32];
	snprintf(num, sizeof num, "%lld", (long long)op->id);
	put_param(f, "operation_id", num);
	put_param(f, "kind", op->kind);
	put_param(f, "outcome", op->outcome);
	put_param(f, "target", op->target);
	put_param(f, "user", op->user);
	snprintf(num, sizeof num, "%lld", (long long)op->uid);
	put_param(f, "uid", num);
	snprintf(num, sizeof num, "%d", op->attempt_count);
	put_param(f, "attempts", num);
	snprintf(num, sizeof num, "%lld", (long long)op->duration_ms);
	put_param(f, "duration_ms", num);
	if (op->stop_reason)
		put_param(f, "stop_reason", op->stop_reason);
	char *msg = message_of(op);
	/* The BOM marks the free-form message as UTF-8 (RFC 5424 6.4). */
	fprintf(f, "] \xEF\xBB\xBF%s", msg);
	free(msg);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool syslog_send(const pw_op_rec *op, const char *path)
{
	char *text = pw_audit_syslog_text(op);
	if (!text)
		return false;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok = false;
	if (fd >= 0) {
		/* MSG_DONTWAIT: a stuck syslog daemon never holds up an operation. */
		ok = sendto(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
			    sizeof sa) >= 0;
		close(fd);
	}
	free(text);
	return ok;
}

/* ---------------------------------------------------------------- sending */

void pw_audit_operation(const pw_op_rec *op)
{
	pthread_mutex_lock(&config_lock);
	target t = configured;
	char path[sizeof syslog_path];
	memcpy(path, syslog_path, sizeof path);
	pthread_mutex_unlock(&config_lock);
	if (t == TARGET_NONE) {
		atomic_store(&last_target, "none");
		return;
	}
	if (t == TARGET_AUTO)
		t = access(PW_AUDIT_JOURNAL_SOCKET, W_OK) == 0 ? TARGET_JOURNAL : TARGET_SYSLOG;
	bool ok = t == TARGET_JOURNAL ? journal_send(op) : syslog_send(op, path);
	atomic_store(&last_target, t == TARGET_JOURNAL ? "journal" : "syslog");
	atomic_fetch_add(ok ? &sent_count : &failure_count, 1);
}
