/* The Python pane's jobs: run a cell, read the session's state. */
#include "config.h"

#include "tui/pane_python_jobs.h"

#include "i18n.h"
#include "runtime.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

pw_err *pw_pycell_run(pw_job *job, void *ud)
{
	pw_pycell *c = ud;
	const pw_op_scratch_hints hints = {
		.no_python = _("install the managed runtime in pane 1 (Runtime, key i), or create an environment "
			       "in pane 3 and pick it here with Ctrl-T"),
	};
	/* Picked in the pane (Ctrl-T), like --venv/--python: it must be the one
	 * that runs. Otherwise the CLI's default, and one step more: a session
	 * already running (started from the CLI with --venv or --python) keeps
	 * its interpreter when there is no managed runtime. */
	pw_op_scratch_request rq = {
		.session = c->session, .code = c->code, .reset = c->reset,
		.venv = c->python ? c->venv : NULL, .python = c->python && !c->venv ? c->python : NULL,
		.fallback_python = c->fallback_python, .hints = &hints,
	};
	pw_op_io io = { .cancel = pw_job_cancel_token(job) };
	pw_op_scratch_result r = { 0 };
	pw_err *e = pw_op_scratch_run(c->ctx, &rq, &io, NULL, &r);
	c->result = r.cell;
	return e;
}

void pw_pycell_free(void *ud)
{
	pw_pycell *c = ud;
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
	pw_scratch_list *l = NULL;
	pw_err *e = pw_op_scratch_list(s->ctx, &l);
	s->host_running = !e || pw_err_code(e) != PW_ERR_NOTFOUND;
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
