/* The pip attempt chain: default index, local proxy, mirrors; every attempt kept. */
#include "config.h"

#include "pip.h"

#include "clock.h"
#include "extract.h"
#include "fetch.h"
#include "i18n.h"
#include "redact.h"
#include "xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL_LINES 12
#define TAIL_BYTES 4096

/* ---------------------------------------------------------------- proxy probe */

static bool port_accepts(int port, int timeout_ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bool ok = false;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
		ok = true;
	} else if (errno == EINPROGRESS) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int err = 0;
		socklen_t len = sizeof err;
		ok = poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
		     err == 0;
	}
	close(fd);
	return ok;
}

int pw_pip_find_proxy(const int *ports, size_t count, int timeout_ms)
{
	for (size_t i = 0; i < count; i++)
		if (ports[i] > 0 && ports[i] < 65536 && port_accepts(ports[i], timeout_ms))
			return ports[i];
	return -1;
}

const char *pw_pip_ambient_proxy(void)
{
	static const char *const names[] = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return v;
	}
	return NULL;
}

/* ---------------------------------------------------------------- one attempt */

typedef struct line_tap {
	const pw_pip_request *rq;
} line_tap;

static void tap_line(void *ud, pw_stream s, const char *line, size_t len)
{
	line_tap *t = ud;
	if (!t->rq->on_line)
		return;
	/* pip hides passwords in most, not all, of what it prints. */
	char *raw = xstrndup(line, len), *shown = pw_redact_text(raw);
	t->rq->on_line(t->rq->line_ud, s, shown, strlen(shown));
	free(shown);
	free(raw);
}

/* Index and proxy reach pip through its environment, never its argv: a
 * command line is readable by every user of the machine (ps, /proc). */
static char **attempt_env(const pw_pip_request *rq, const char *index, const char *proxy)
{
	size_t n = 0;
	while (rq->env_add && rq->env_add[n])
		n++;
	char **env = xcalloc(n + 4, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		env[k++] = xstrdup(rq->env_add[i]);
	/* Bytecode written by pip can be cut short by a full disk and would
	 * then break every later run (marshal data too short). */
	env[k++] = xstrdup("PYTHONDONTWRITEBYTECODE=1");
	if (index)
		env[k++] = xasprintf("PIP_INDEX_URL=%s", index);
	if (proxy)
		env[k++] = xasprintf("PIP_PROXY=%s", proxy);
	return env;
}

static void env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

static const char **attempt_argv(const pw_pip_request *rq)
{
	size_t n = 0;
	while (rq->pip_args[n])
		n++;
	const char **av = xcalloc(n + 16, sizeof *av);
	size_t k = 0;
	av[k++] = rq->python;
	av[k++] = "-m";
	av[k++] = "pip";
	for (size_t i = 0; i < n; i++)
		av[k++] = rq->pip_args[i];
	/* Retries stay at 2: with 0, pip prints no Retrying banner, the evidence
	 * the classifier reads. */
	const char *common[] = { "--retries", "2", "--timeout", "15", "--no-input", "--no-color",
				 "--disable-pip-version-check" };
	for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
		av[k++] = common[i];
	return av;
}

static char *join_argv(const char *const *av)
{
	size_t len = 1;
	for (size_t i = 0; av[i]; i++)
		len += strlen(av[i]) + 1;
	char *out = xmalloc(len), *p = out;
	for (size_t i = 0; av[i]; i++) {
		if (i)
			*p++ = ' ';
		p = stpcpy(p, av[i]);
	}
	*p = '\0';
	return out;
}

/* The command as it may be shown and recorded: URLs without credentials. */
static char *join_argv_shown(const char *const *av)
{
	char *raw = join_argv(av), *out = pw_redact_text(raw);
	free(raw);
	return out;
}

/* The last few lines of text, at most TAIL_BYTES. */
static char *tail_of_raw(const char *text)
{
	size_t len = strlen(text);
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	size_t start = len, lines = 0;
	while (start > 0 && lines < TAIL_LINES && len - start < TAIL_BYTES) {
		start--;
		if (text[start] == '\n')
			lines++;
	}
	if (start < len && text[start] == '\n')
		start++;
	return xstrndup(text + start, len - start);
}

/* pip does not hide every password it prints ("Looking in indexes:" shows
 * one holding a '/'), and the tail is shown, recorded and logged. */
static char *tail_of(const char *text)
{
	char *raw = tail_of_raw(text), *out = pw_redact_text(raw);
	free(raw);
	return out;
}

static char *combined_output(const pw_run_result *r)
{
	return xasprintf("%s\n%s", pw_run_result_output(r, PW_STREAM_STDOUT),
			 pw_run_result_output(r, PW_STREAM_STDERR));
}

/* The index a probe should ask: the explicit one, the ambient one, or pip's own default. */
static const char *probe_target(const char *index)
{
	if (index)
		return index;
	const char *env = getenv("PIP_INDEX_URL");
	return env && *env ? env : NULL;
}

static pw_pip_attempt *new_attempt(pw_pip_result *res, const char *index, const char *proxy)
{
	res->attempts = xrealloc(res->attempts, (res->count + 1) * sizeof *res->attempts);
	pw_pip_attempt *a = &res->attempts[res->count++];
	memset(a, 0, sizeof *a);
	/* What is kept, shown and recorded carries no user:password@; the real
	 * URLs stay with the caller, for pip and the probe. */
	/* The index pip really asks: with none given, the ambient PIP_INDEX_URL
	 * it inherits (pipsetup.c passes it on), so the record never says
	 * "default" for an index the caller chose. */
	const char *asked = probe_target(index);
	a->index = asked ? pw_fetch_url_shown(asked) : NULL;
	a->proxy = proxy ? pw_fetch_url_shown(proxy) : NULL;
	a->exit_code = -1;
	a->klass = PW_PIP_NOT_NETWORK;
	char now[40];
	pw_clock_iso_now(now, sizeof now);
	a->started_at = xstrdup(now);
	return a;
}

static void classify(const pw_pip_request *rq, pw_pip_attempt *a, const char *output, const char *real_index,
		     const char *real_proxy)
{
	a->klass = pw_pipclass_classify(a->exit_code, output, &a->reason);
	if (a->klass != PW_PIP_AMBIGUOUS)
		return;
	const char *index = probe_target(real_index);
	if (!index || !rq->project) {
		a->klass = PW_PIP_NOT_NETWORK;
		a->probe = xstrdup(_("ambiguous output; the index could not be asked (no index URL or project known)"));
		return;
	}
	a->klass = pw_pipclass_probe_index(index, rq->project, real_proxy, rq->ca_file, 5, &a->probe);
}

static void record(const pw_pip_request *rq, const pw_pip_attempt *a)
{
	if (!rq->catalog || !rq->operation_id)
		return;
	char *tail = a->probe ? xasprintf("%s\n[index probe] %s", a->output_tail ? a->output_tail : "", a->probe)
			      : NULL;
	pw_attempt_rec rec = {
		.operation_id = rq->operation_id,
		.index_url = a->index,
		.proxy = a->proxy,
		.argv = a->argv,
		.exit_code = a->exit_code,
		.klass = (char *)(uintptr_t)(a->stopped ? "stopped" : pw_pipclass_name(a->klass)),
		.started_at = a->started_at,
		.duration_ms = a->duration_ms,
		.output_tail = tail ? tail : a->output_tail,
	};
	pw_err_free(pw_catalog_attempt_add(rq->catalog, &rec));
	free(tail);
}

/* Run pip once; returns an error only when pip could not be started. */
static pw_err *attempt_once(const pw_pip_request *rq, pw_pip_result *res, const char *index, const char *proxy,
			    pw_pip_attempt **out)
{
	pw_pip_attempt *a = new_attempt(res, index, proxy);
	const char **av = attempt_argv(rq);
	char **env = attempt_env(rq, index, proxy);
	a->argv = join_argv_shown(av);
	pw_events_log(rq->events, PW_LOG_INFO, _("attempt %zu: pip %s%s%s%s%s"), res->count, rq->pip_args[0],
		      a->index ? _(" from ") : "", a->index ? a->index : "", a->proxy ? _(" via ") : "",
		      a->proxy ? a->proxy : "");
	line_tap tap = { rq };
	pw_run_opts ro = { .argv = av, .cwd = rq->cwd, .env_add = (const char *const *)env, .deadline_ms = rq->deadline_ms,
			   .cancel = rq->cancel, .cap_bytes = 256 * 1024, .on_line = tap_line, .ud = &tap };
	pw_run_result *r = NULL;
	pw_err *e = pw_run(&ro, &r);
	free(av);
	env_free(env);
	if (e) {
		a->output_tail = xstrdup(pw_err_message(e));
		record(rq, a);
		return e;
	}
	char *output = combined_output(r);
	a->duration_ms = pw_run_result_duration_ms(r);
	a->output_tail = tail_of(output);
	pw_run_status st = pw_run_result_status(r);
	a->stopped = st == PW_RUN_TIMED_OUT || st == PW_RUN_CANCELLED;
	a->exit_code = st == PW_RUN_EXITED ? pw_run_result_exit_code(r) : -1;
	if (!a->stopped)
		classify(rq, a, output, index, proxy);
	record(rq, a);
	free(output);
	pw_run_result_free(&r);
	*out = a;
	return NULL;
}

/* ---------------------------------------------------------------- cut-short bytecode */

/* A .pyc cut short (a full disk while it was written) makes every later
 * start of pip fail the same way until the file goes. */
static bool bytecode_broken(const pw_pip_attempt *a)
{
	const char *t = a->output_tail;
	return !a->stopped && a->exit_code != 0 && t &&
	       (strstr(t, "marshal data too short") || strstr(t, "bad marshal data"));
}

static char **caches;
static size_t ncaches;

static int note_cache(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	if (type == FTW_D && strcmp(path + ftw->base, "__pycache__") == 0) {
		caches = xrealloc(caches, (ncaches + 1) * sizeof *caches);
		caches[ncaches++] = xstrdup(path);
	}
	return 0;
}

static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every __pycache__ below the environment's lib/ (python is <venv>/bin/python):
 * bytecode is only a cache, and pip now runs without writing it. */
static size_t drop_bytecode(const char *python)
{
	char *venv = xstrdup(python), *slash;
	for (int i = 0; i < 2 && (slash = strrchr(venv, '/')); i++)
		*slash = '\0';
	char *lib = xasprintf("%s/lib", venv);
	pthread_mutex_lock(&caches_lock); /* nftw's callback has no user data */
	nftw(lib, note_cache, 16, FTW_PHYS | FTW_MOUNT);
	size_t n = ncaches;
	for (size_t i = 0; i < ncaches; i++) {
		pw_err_free(pw_extract_remove_tree(caches[i]));
		free(caches[i]);
	}
	free(caches);
	caches = NULL;
	ncaches = 0;
	pthread_mutex_unlock(&caches_lock);
	free(lib);
	free(venv);
	return n;
}

/* One attempt; when pip failed on cut-short bytecode, the bytecode is
 * dropped and the attempt made again, once per run. */
static pw_err *attempt(const pw_pip_request *rq, pw_pip_result *res, const char *index, const char *proxy,
		       pw_pip_attempt **out)
{
	pw_err *e = attempt_once(rq, res, index, proxy, out);
	if (e || res->bytecode_repaired || !bytecode_broken(*out))
		return e;
	res->bytecode_repaired = true;
	(*out)->reason = _("pip's own bytecode was cut short (marshal data too short): removed and tried again");
	size_t n = drop_bytecode(rq->python);
	pw_events_log(rq->events, PW_LOG_WARN,
		      _("pip failed on cut-short bytecode (a full disk?); removed %zu bytecode folders, trying again"), n);
	return attempt_once(rq, res, index, proxy, out);
}

/* ---------------------------------------------------------------- stop reasons */

static void append(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char **s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *add = xvasprintf(fmt, ap);
	va_end(ap);
	char *next = xasprintf("%s%s", *s ? *s : "", add);
	free(*s);
	free(add);
	*s = next;
}

static const char *index_name(const pw_pip_attempt *a)
{
	return a->index ? a->index : _("the default index");
}

static void list_attempts(char **s, const pw_pip_result *res)
{
	for (size_t i = 0; i < res->count; i++) {
		const pw_pip_attempt *a = &res->attempts[i];
		append(s, _("\n  attempt %zu: %s%s%s: %s (exit %d, %.1f s)"), i + 1, index_name(a),
		       a->proxy ? _(" via ") : "", a->proxy ? a->proxy : "",
		       a->stopped ? _("stopped") : pw_pipclass_name(a->klass), a->exit_code,
		       (double)a->duration_ms / 1000.0);
	}
}

static pw_err *stop_error(const pw_pip_request *rq, const pw_pip_result *res, bool cancelled)
{
	const pw_pip_attempt *last = res->count ? &res->attempts[res->count - 1] : NULL;
	char *msg = NULL;
	if (cancelled)
		append(&msg, _("interrupted during attempt %zu (pip %s against %s)"), res->count, rq->pip_args[0],
		       last ? index_name(last) : "?");
	else
		append(&msg, _("the time budget ran out during attempt %zu (pip %s against %s)"), res->count,
		       rq->pip_args[0], last ? index_name(last) : "?");
	append(&msg, "%s", _("\nattempts so far:"));
	list_attempts(&msg, res);
	if (last && last->output_tail && *last->output_tail)
		append(&msg, _("\nlast output:\n%s"), last->output_tail);
	append(&msg, "%s", _("\nlikely causes: the index is unreachable or very slow, or a large download"));
	pw_err *e = pw_err_new(cancelled ? PW_ERR_CANCELLED : PW_ERR_TIMEOUT,
			       _("pass --timeout SECONDS for more time, --index URL for a reachable index, or --proxy URL"),
			       "%s", msg);
	free(msg);
	return e;
}

static pw_err *failure_error(const pw_pip_result *res, bool network)
{
	char *msg = NULL;
	const pw_pip_attempt *last = &res->attempts[res->count - 1];
	/* The attempts are not listed again here: each was reported as it
	 * ended (the events sink), and the catalog keeps them with the operation. */
	if (network)
		append(&msg, P_("the only index failed for network reasons (%zu attempt)",
				"every index failed for network reasons (%zu attempts)", res->count),
		       res->count);
	else
		append(&msg, _("pip failed (%s), and another index would not help"),
		       last->reason ? last->reason : pw_pipclass_name(last->klass));
	if (last->output_tail && *last->output_tail)
		append(&msg, _("\nlast output:\n%s"), last->output_tail);
	pw_err *e = network ? pw_err_new(PW_ERR_NETWORK,
					 _("check the network, pass --index URL or --proxy URL, or set PYWARD_MIRRORS"),
					 "%s", msg)
			    : pw_err_new(PW_ERR_FAILED, _("check the package names and versions; 'pyward history show' keeps the output"),
					 "%s", msg);
	free(msg);
	return e;
}

/* ---------------------------------------------------------------- the chain */

typedef enum { STEP_OK, STEP_NETWORK, STEP_FINAL } step;

static step outcome(const pw_pip_attempt *a)
{
	if (a->exit_code == 0 && !a->stopped)
		return STEP_OK;
	if (a->stopped)
		return STEP_FINAL;
	return a->klass == PW_PIP_NETWORK ? STEP_NETWORK : STEP_FINAL;
}

static bool out_of_time(const pw_pip_request *rq)
{
	return pw_cancel_raised(rq->cancel) || (rq->deadline_ms && pw_clock_mono_ms() >= rq->deadline_ms);
}

/* "3128, 8080" for the message that none of them answered. */
static char *port_list(const pw_pip_request *rq)
{
	char *list = NULL;
	for (size_t i = 0; i < rq->proxy_port_count; i++)
		append(&list, "%s%d", i ? ", " : "", rq->proxy_ports[i]);
	return list ? list : xstrdup("-");
}

/* After the first network failure with no proxy known: find a local one. */
static char *probe_proxy(const pw_pip_request *rq, pw_pip_result *res)
{
	int port = pw_pip_find_proxy(rq->proxy_ports, rq->proxy_port_count, rq->probe_ms ? rq->probe_ms : 400);
	if (port < 0) {
		char *list = port_list(rq);
		pw_events_log(rq->events, PW_LOG_INFO,
			      P_("no local proxy answers on 127.0.0.1 port %s (a proxy there is tried after a network "
				 "failure; --proxy URL names one, the proxy_ports setting changes the ports)",
				 "no local proxy answers on 127.0.0.1 ports %s (a proxy there is tried after a network "
				 "failure; --proxy URL names one, the proxy_ports setting changes the ports)",
				 rq->proxy_port_count),
			      list);
		free(list);
		return NULL;
	}
	res->live_proxy = xasprintf("http://127.0.0.1:%d", port);
	pw_events_log(rq->events, PW_LOG_INFO, _("a local proxy answers at %s; retrying through it"), res->live_proxy);
	return xstrdup(res->live_proxy);
}

static pw_err *finish(const pw_pip_request *rq, pw_pip_result *res, step last)
{
	if (last == STEP_OK) {
		res->ok = true;
		return NULL;
	}
	const pw_pip_attempt *a = &res->attempts[res->count - 1];
	if (a->stopped || out_of_time(rq))
		return stop_error(rq, res, pw_cancel_raised(rq->cancel));
	return failure_error(res, last == STEP_NETWORK);
}

pw_err *pw_pip_run(const pw_pip_request *rq, pw_pip_result *res)
{
	memset(res, 0, sizeof *res);
	const char *ambient = pw_pip_ambient_proxy();
	char *proxy = rq->proxy ? xstrdup(rq->proxy) : NULL;
	bool may_probe = !rq->proxy && !ambient && rq->chain && rq->proxy_port_count > 0;
	/* The index list: an explicit one alone, else the default then the mirrors. */
	const char *first = rq->chain ? rq->index : NULL;
	size_t nmirrors = 0;
	while (rq->chain && !rq->index && rq->mirrors && rq->mirrors[nmirrors])
		nmirrors++;
	pw_err *e = NULL;
	step last = STEP_FINAL;
	for (size_t i = 0; i <= nmirrors && !e; i++) {
		const char *index = i == 0 ? first : rq->mirrors[i - 1];
		pw_pip_attempt *a = NULL;
		if (res->count && out_of_time(rq))
			break;
		e = attempt(rq, res, index, proxy, &a);
		if (e)
			break;
		last = outcome(a);
		if (last == STEP_NETWORK && may_probe) {
			may_probe = false;
			proxy = probe_proxy(rq, res);
			if (proxy && !out_of_time(rq)) {
				e = attempt(rq, res, index, proxy, &a);
				if (!e)
					last = outcome(a);
			}
		}
		if (last != STEP_NETWORK)
			break;
	}
	free(proxy);
	return e ? e : finish(rq, res, last);
}

void pw_pip_result_clear(pw_pip_result *res)
{
	for (size_t i = 0; i < res->count; i++) {
		pw_pip_attempt *a = &res->attempts[i];
		free(a->index);
		free(a->proxy);
		free(a->argv);
		free(a->probe);
		free(a->started_at);
		free(a->output_tail);
	}
	free(res->attempts);
	free(res->live_proxy);
	memset(res, 0, sizeof *res);
}
