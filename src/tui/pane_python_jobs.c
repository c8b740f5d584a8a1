/* The Python pane's jobs: run a cell, read the session's state. */
#include "config.h"

#include "tui/pane_python_jobs.h"

#include "i18n.h"
#include "runtime.h"
#include "scratch_client.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

/* The interpreter as the CLI picks it without options: the managed
 * runtime, else a refusal saying how to get one. The pane adds one step:
 * a session already running (started from the CLI with --venv or
 * --python) keeps its interpreter. */
static pw_err *choose_python(const pw_pycell *c, char **python)
{
	pw_err *e = pw_runtime_python(c->box_root, python);
	if (!e)
		return NULL;
	if (c->fallback_python) {
		pw_err_free(e);
		*python = xstrdup(c->fallback_python);
		return NULL;
	}
	pw_err *r =
	    pw_err_new(PW_ERR_REFUSED,
		       _("install the managed runtime in pane 1 (Runtime, key i), or create an environment "
			 "in pane 3 and pick it here with Ctrl-T"),
		       _("no interpreter for the scratchpad: %s"), pw_err_message(e));
	pw_err_free(e);
	return r;
}

/* The host this may start resets its signal state itself (scratch_client.c). */
static pw_err *connect_starting_host(pw_scratch_client **client)
{
	pw_scratch_connect_opts o = {.autostart = true};
	return pw_scratch_connect(&o, client);
}

pw_err *pw_pycell_run(pw_job *job, void *ud)
{
	pw_pycell *c = ud;
	pw_scratch_request req = {.op = PW_SCRATCH_OP_RUN};
	pw_err *e = NULL;
	if (c->python) { /* picked in the pane: like --venv, it must be the one that runs */
		req.python = xstrdup(c->python);
		req.python_explicit = true;
		req.venv = c->venv;
	} else {
		e = choose_python(c, &req.python);
	}
	pw_scratch_client *client = NULL;
	if (!e)
		e = connect_starting_host(&client);
	if (!e) {
		req.session = c->session;
		req.code = c->code;
		req.reset = c->reset;
		req.project_dir = c->workspace;
		req.env = environ;
		req.timeout_ms = (int64_t)(c->timeout_s * 1000);
		e = pw_scratch_run(client, &req, pw_job_cancel_token(job), &c->result);
	}
	pw_scratch_close(&client);
	free(req.python);
	return e;
}

void pw_pycell_free(void *ud)
{
	pw_pycell *c = ud;
	free(c->box_root);
	free(c->workspace);
	free(c->session);
	free(c->code);
	free(c->fallback_python);
	free(c->python);
	free(c->venv);
	pw_scratch_result_free(&c->result);
	free(c);
}

static void read_runtime(pw_pystatus *s)
{
	pw_runtime_info info;
	memset(&info, 0, sizeof info);
	pw_err *e = pw_runtime_status(s->box_root, &info);
	if (!e && info.state == PW_RUNTIME_INSTALLED && info.python) {
		s->runtime_python = xstrdup(info.python);
		s->runtime_version = info.version ? xstrdup(info.version) : NULL;
	} else if (e) {
		s->no_runtime = xstrdup(pw_err_message(e));
	} else {
		s->no_runtime = xstrdup(info.state == PW_RUNTIME_BROKEN && info.why
					    ? info.why
					    : _("the managed runtime is not installed"));
	}
	pw_err_free(e);
	pw_runtime_info_clear(&info);
}

static void read_session(pw_pystatus *s)
{
	pw_scratch_connect_opts o = {.autostart = false};
	pw_scratch_client *client = NULL;
	pw_scratch_list *l = NULL;
	pw_err *e = pw_scratch_connect(&o, &client);
	if (!e) {
		s->host_running = true;
		e = pw_scratch_sessions(client, &l);
	}
	for (size_t i = 0; l && i < l->count; i++) {
		const pw_scratch_session_info *si = &l->sessions[i];
		if (strcmp(si->name, s->session) != 0)
			continue;
		s->found = true;
		s->state = xstrdup(si->state ? si->state : "");
		s->python = si->python ? xstrdup(si->python) : NULL;
		s->executions = si->executions;
		s->generation = si->generation;
	}
	pw_scratch_list_free(&l);
	pw_scratch_close(&client);
	pw_err_free(e); /* no host, or an old one: the header just says less */
}

pw_err *pw_pystatus_read(pw_job *job, void *ud)
{
	(void)job;
	pw_pystatus *s = ud;
	read_runtime(s);
	read_session(s);
	return NULL;
}

void pw_pystatus_free(void *ud)
{
	pw_pystatus *s = ud;
	free(s->box_root);
	free(s->session);
	free(s->runtime_python);
	free(s->runtime_version);
	free(s->no_runtime);
	free(s->state);
	free(s->python);
	free(s);
}
