/* The runtime install's plan, for op_runtime.c. */
#include "config.h"

#include "ops/runtime_plan.h"

#include "clock.h"
#include "fetch.h"
#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pw_runtime_plan_mb(int64_t bytes, char *buf, size_t size)
{
	if (bytes < 0)
		snprintf(buf, size, "%s", _("unknown size"));
	else
		snprintf(buf, size, "%.1f MB", (double)bytes / 1e6);
}

pw_err *pw_runtime_plan_pin(const pw_ops_ctx *ctx, const pw_runtime_request *rq, pw_pins **pins, const pw_pin **pin)
{
	(void)ctx;
	char *path = rq->pins_file ? xstrdup(rq->pins_file) : pw_ops_data_file("runtime-pins.tsv");
	pw_err *e = pw_pins_load(path, pins);
	free(path);
	char *triple = NULL;
	if (!e)
		e = pw_platform_detect(getenv("PYWARD_TEST_SYSNAME"), getenv("PYWARD_TEST_MACHINE"), &triple);
	if (!e)
		e = pw_pins_find(*pins, triple, rq->version, pin);
	free(triple);
	return e;
}

static const char *mirror_of(const pw_ops_ctx *ctx, const pw_runtime_request *rq)
{
	if (rq->mirror)
		return rq->mirror;
	const char *env = getenv("PYWARD_RUNTIME_MIRROR");
	if (env && *env)
		return env;
	return pw_settings_get(ctx->settings, "runtime_mirror");
}

const char *pw_runtime_plan_cacert(const pw_ops_ctx *ctx, const pw_runtime_request *rq)
{
	return rq->cacert ? rq->cacert : pw_settings_get(ctx->settings, "ca_bundle");
}

static pw_err *archive_size(const char *archive, int64_t *size)
{
	FILE *f = fopen(archive, "rb");
	if (!f)
		return pw_err_errno(PW_ERR_USAGE, errno, NULL, _("--archive %s"), archive);
	fseek(f, 0, SEEK_END);
	*size = ftell(f);
	fclose(f);
	return NULL;
}

pw_err *pw_runtime_plan_make(const pw_ops_ctx *ctx, const pw_runtime_request *rq, bool probe_size, pw_runtime_plan *p)
{
	pw_err *e = pw_runtime_plan_pin(ctx, rq, &p->pins, &p->pin);
	if (e)
		return e;
	p->url = pw_pins_url(p->pin, mirror_of(ctx, rq));
	p->size = p->pin->size;
	p->dest = xasprintf("%s/runtime/python/current", ctx->box_root);
	/* what the install would replace, for the consent (install itself
	 * decides again under its lock) */
	pw_runtime_info now = { 0 };
	pw_err_free(pw_runtime_status(ctx->box_root, &now));
	if (now.state == PW_RUNTIME_INSTALLED && now.sha256 && strcmp(now.sha256, p->pin->sha256) == 0)
		p->same_is_current = true;
	else if (now.state == PW_RUNTIME_INSTALLED && now.version)
		p->current_version = xstrdup(now.version);
	pw_runtime_info_clear(&now);
	if (rq->archive)
		return archive_size(rq->archive, &p->size);
	if (p->size < 0 && probe_size) {
		/* The size is not pinned: ask the server, so consent is informed. */
		int64_t probed = -1;
		pw_err_free(pw_fetch_probe_size(p->url, pw_runtime_plan_cacert(ctx, rq), 15, &probed));
		p->size = probed;
	}
	return NULL;
}

void pw_runtime_plan_clear(pw_runtime_plan *p)
{
	pw_pins_free(&p->pins);
	free(p->url);
	free(p->dest);
	free(p->baseline);
	free(p->baseline_names);
	free(p->current_version);
	p->pin = NULL;
	p->url = p->dest = p->baseline = p->baseline_names = p->current_version = NULL;
	p->same_is_current = false;
}

char *pw_runtime_plan_target(const pw_runtime_plan *p)
{
	return p->pin ? xasprintf("cpython %s %s", p->pin->version, p->pin->platform) : NULL;
}

void pw_runtime_plan_describe(const pw_runtime_request *rq, const pw_runtime_plan *p,
			      char *lines[PW_RUNTIME_PLAN_LINES])
{
	char size[32], disk[32];
	pw_runtime_plan_mb(p->size, size, sizeof size);
	pw_runtime_plan_mb(p->size < 0 ? -1 : pw_runtime_space_needed(p->size) - p->size, disk, sizeof disk);
	lines[0] = xasprintf(_("what:   CPython %s (release %s) for %s"), p->pin->version, p->pin->release,
			     p->pin->platform);
	if (rq->archive) {
		lines[1] = xasprintf(_("from:   %s (a local archive: nothing is downloaded)"), rq->archive);
		lines[2] = xasprintf(_("size:   %s archive, at most %s on disk"), size, disk);
	} else {
		char *from = pw_fetch_url_shown(p->url); /* no credentials shown */
		lines[1] = xasprintf(_("from:   %s"), from);
		free(from);
		/* Said once, plainly, when the pins table has no size. */
		lines[2] = p->size < 0 ? xstrdup(_("size:   unknown until the server answers (the pins table gives none)"))
				       : xasprintf(_("size:   %s to download, at most %s on disk"), size, disk);
	}
	lines[3] = xasprintf(_("sha256: %s"), p->pin->sha256);
	lines[4] = xasprintf(_("pinned: in %s%s"), pw_pins_source(p->pins), rq->pins_file ? _(" (operator-supplied)") : "");
	lines[5] = xasprintf(_("into:   %s"), p->dest);
}

char *pw_runtime_plan_now(const pw_runtime_plan *p)
{
	if (p->same_is_current)
		return p->baseline ? xstrdup(_("now:    this release is installed and current: nothing is downloaded, "
					       "the baseline is installed again"))
				   : xstrdup(_("now:    this release is installed and current: nothing is downloaded or "
					       "changed"));
	if (p->current_version)
		return xasprintf(_("now:    CPython %s is current; it is kept as the previous runtime "
				   "('pyward runtime rollback' returns to it)"),
				 p->current_version);
	return NULL;
}

pw_err *pw_runtime_plan_install(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_runtime_plan *p,
				pw_catalog *cat, int64_t op, const pw_cancel *cancel, const pw_events *events,
				pw_runtime_install_result *r)
{
	char *pins_path = xstrdup(pw_pins_source(p->pins));
	pw_runtime_install_opts o = {
		.box_root = ctx->box_root, .pin = p->pin, .pins_source = pins_path,
		.pins_from_operator = rq->pins_file != NULL, .url = p->url, .archive = rq->archive,
		.ca_file = pw_runtime_plan_cacert(ctx, rq), .catalog = cat, .operation_id = op,
		.deadline_ms = pw_clock_deadline_after(ctx->timeout), .cancel = cancel, .events = events,
	};
	pw_err *e = pw_runtime_install(&o, r);
	free(pins_path);
	return e;
}
