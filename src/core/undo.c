/* The plan of an undo, from recorded changes and the environment now. */
#include "config.h"

#include "undo.h"

#include "i18n.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static void add_step(pw_undo_plan *p, pw_undo_kind kind, const char *name, const char *version, const pw_dist *now)
{
	p->items = xrealloc(p->items, (p->count + 1) * sizeof *p->items);
	p->items[p->count++] = (pw_undo_step){ kind, xstrdup(name), version ? xstrdup(version) : NULL,
					       now ? xstrdup(now->version) : NULL };
}

static void add_drift(pw_undo_plan *p, const pw_pkg_change *c, const pw_dist *now)
{
	p->drift = xrealloc(p->drift, (p->drift_count + 1) * sizeof *p->drift);
	const char *left = c->new_version ? c->new_version : _("nothing");
	p->drift[p->drift_count++] = xasprintf(_("%s: the operation left %s, now %s"), c->name, left,
					       now ? now->version : _("not installed"));
}

static bool same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

void pw_undo_plan_make(const pw_pkg_changes *changes, const pw_distset *now, pw_undo_plan *out)
{
	memset(out, 0, sizeof *out);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < changes->count; i++) {
			const pw_pkg_change *c = &changes->items[i];
			const pw_dist *d = now ? pw_distset_find(now, c->name) : NULL;
			if (pass == 0) { /* drift and the uninstalls */
				bool as_left = c->action == PW_PKG_REMOVED ? d == NULL : d && same(d->version, c->new_version);
				if (!as_left)
					add_drift(out, c, d);
				if (c->action == PW_PKG_REINSTALLED)
					out->reinstalled++;
				else if (c->action == PW_PKG_INSTALLED && d)
					add_step(out, PW_UNDO_UNINSTALL, c->name, d->version, d);
			} else if (c->action == PW_PKG_UPGRADED || c->action == PW_PKG_DOWNGRADED || c->action == PW_PKG_REMOVED) {
				add_step(out, PW_UNDO_INSTALL, c->name, c->old_version, d);
			}
		}
	}
}

void pw_undo_plan_clear(pw_undo_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->count; i++) {
		free(p->items[i].name);
		free(p->items[i].version);
		free(p->items[i].now);
	}
	for (size_t i = 0; i < p->drift_count; i++)
		free(p->drift[i]);
	free(p->items);
	free(p->drift);
	memset(p, 0, sizeof *p);
}

char **pw_undo_specs(const pw_undo_plan *p, pw_undo_kind kind, size_t *count)
{
	char **out = xcalloc(p->count + 1, sizeof *out);
	size_t n = 0;
	for (size_t i = 0; i < p->count; i++) {
		const pw_undo_step *s = &p->items[i];
		if (s->kind != kind)
			continue;
		out[n++] = kind == PW_UNDO_INSTALL && s->version ? xasprintf("%s==%s", s->name, s->version) : xstrdup(s->name);
	}
	*count = n;
	return out;
}
