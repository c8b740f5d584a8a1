/* Package differences between two readings, and PEP 440 version order. */
#include "config.h"

#include "pkgdiff.h"

#include "i18n.h"
#include "xalloc.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- versions */

#define RELEASE_MAX 16
#define NONE_LOW INT64_MIN
#define NONE_HIGH INT64_MAX

typedef struct pep440 {
	int64_t epoch;
	int64_t release[RELEASE_MAX];
	int nrelease;
	int64_t pre_kind, pre_n; /* a 0, b 1, rc 2; NONE_LOW/NONE_HIGH when absent (see sort_keys) */
	int64_t post, dev;
	const char *local;       /* after '+', or "" */
} pep440;

static bool number(const char **p, int64_t *out)
{
	if (!isdigit((unsigned char)**p))
		return false;
	int64_t v = 0;
	while (isdigit((unsigned char)**p)) {
		if (v < INT64_MAX / 10)
			v = v * 10 + (**p - '0');
		(*p)++;
	}
	*out = v;
	return true;
}

/* Case-insensitive word at *p; advances past it. */
static bool word(const char **p, const char *w)
{
	size_t n = strlen(w);
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)(*p)[i]) != w[i])
			return false;
	*p += n;
	return true;
}

static void sep(const char **p)
{
	if (**p == '.' || **p == '-' || **p == '_')
		(*p)++;
}

/* An optional separator, then word: both consumed only when word follows. */
static bool sep_word(const char **p, const char *w)
{
	const char *q = *p;
	sep(&q);
	if (!word(&q, w))
		return false;
	*p = q;
	return true;
}

static bool parse_pre(const char **p, pep440 *v)
{
	static const struct { const char *w; int kind; } pre[] = {
		{ "alpha", 0 }, { "a", 0 }, { "beta", 1 }, { "b", 1 }, { "preview", 2 },
		{ "pre", 2 }, { "rc", 2 }, { "c", 2 },
	};
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
		if (sep_word(p, pre[i].w)) {
			v->pre_kind = pre[i].kind;
			sep(p);
			if (!number(p, &v->pre_n))
				v->pre_n = 0;
			return true;
		}
	}
	return false;
}

static void parse_post(const char **p, pep440 *v)
{
	const char *q = *p;
	if (*q == '-' && isdigit((unsigned char)q[1])) {
		q++;
		number(&q, &v->post);
		*p = q;
		return;
	}
	if (sep_word(p, "post") || sep_word(p, "rev") || sep_word(p, "r")) {
		sep(p);
		if (!number(p, &v->post))
			v->post = 0;
	}
}

static bool parse_pep440(const char *s, pep440 *v)
{
	memset(v, 0, sizeof *v);
	v->pre_kind = v->post = v->dev = -1;
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == 'v' || *p == 'V')
		p++;
	int64_t n;
	if (!number(&p, &n))
		return false;
	if (*p == '!') {
		v->epoch = n;
		p++;
		if (!number(&p, &n))
			return false;
	}
	v->release[v->nrelease++] = n;
	while (*p == '.' && isdigit((unsigned char)p[1])) {
		p++;
		number(&p, &n);
		if (v->nrelease < RELEASE_MAX)
			v->release[v->nrelease++] = n;
	}
	parse_pre(&p, v);
	parse_post(&p, v);
	if (sep_word(&p, "dev")) {
		sep(&p);
		if (!number(&p, &v->dev))
			v->dev = 0;
	}
	v->local = "";
	if (*p == '+') {
		v->local = ++p;
		p += strlen(p);
	}
	while (isspace((unsigned char)*p))
		p++;
	while (v->nrelease > 1 && v->release[v->nrelease - 1] == 0)
		v->nrelease--;
	return *p == '\0';
}

static int cmp64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* packaging's ordering: a dev release with no pre or post sorts before
 * every pre-release of it; a final release after them; no post before any. */
static void sort_keys(const pep440 *v, int64_t *pre_kind, int64_t *pre_n, int64_t *post, int64_t *dev)
{
	if (v->pre_kind < 0 && v->post < 0 && v->dev >= 0)
		*pre_kind = NONE_LOW, *pre_n = 0;
	else if (v->pre_kind < 0)
		*pre_kind = NONE_HIGH, *pre_n = 0;
	else
		*pre_kind = v->pre_kind, *pre_n = v->pre_n;
	*post = v->post < 0 ? NONE_LOW : v->post;
	*dev = v->dev < 0 ? NONE_HIGH : v->dev;
}

int pw_version_cmp(const char *a, const char *b)
{
	pep440 x, y;
	bool px = a && parse_pep440(a, &x), py = b && parse_pep440(b, &y);
	if (!px || !py) {
		if (px != py)
			return px ? 1 : -1;
		return strcmp(a ? a : "", b ? b : "");
	}
	int c = cmp64(x.epoch, y.epoch);
	for (int i = 0; !c && i < (x.nrelease > y.nrelease ? x.nrelease : y.nrelease); i++)
		c = cmp64(i < x.nrelease ? x.release[i] : 0, i < y.nrelease ? y.release[i] : 0);
	if (c)
		return c;
	int64_t k1[4], k2[4];
	sort_keys(&x, &k1[0], &k1[1], &k1[2], &k1[3]);
	sort_keys(&y, &k2[0], &k2[1], &k2[2], &k2[3]);
	for (int i = 0; !c && i < 4; i++)
		c = cmp64(k1[i], k2[i]);
	if (c)
		return c;
	if (!*x.local || !*y.local)
		return (*x.local != 0) - (*y.local != 0);
	return strcmp(x.local, y.local);
}

/* ---------------------------------------------------------------- changes */

static const char *const action_names[] = {
	[PW_PKG_INSTALLED] = "installed",
	[PW_PKG_UPGRADED] = "upgraded",
	[PW_PKG_DOWNGRADED] = "downgraded",
	[PW_PKG_REMOVED] = "removed",
	[PW_PKG_REINSTALLED] = "reinstalled",
};

const char *pw_pkg_action_name(pw_pkg_action a)
{
	return (size_t)a < sizeof action_names / sizeof action_names[0] ? action_names[a] : "?";
}

bool pw_pkg_action_parse(const char *s, pw_pkg_action *out)
{
	for (size_t i = 0; s && i < sizeof action_names / sizeof action_names[0]; i++) {
		if (strcmp(s, action_names[i]) == 0) {
			*out = (pw_pkg_action)i;
			return true;
		}
	}
	return false;
}

static char *dup0(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void pw_pkg_changes_add(pw_pkg_changes *l, pw_pkg_action action, const char *name, const char *old_version,
			const char *new_version, const char *installer, const char *source)
{
	/* Grows by one: a change list is short, and this keeps no capacity field. */
	l->items = xrealloc(l->items, (l->count + 1) * sizeof *l->items);
	l->items[l->count++] = (pw_pkg_change){ action, xstrdup(name), dup0(old_version), dup0(new_version),
						dup0(installer), dup0(source) };
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void compare_one(pw_pkg_changes *out, const pw_dist *old, const pw_dist *new)
{
	int c = pw_version_cmp(old->version, new->version);
	if (c < 0)
		pw_pkg_changes_add(out, PW_PKG_UPGRADED, new->name, old->version, new->version, new->installer, new->source);
	else if (c > 0)
		pw_pkg_changes_add(out, PW_PKG_DOWNGRADED, new->name, old->version, new->version, new->installer, new->source);
	else if (!same(old->version, new->version) || old->stamp != new->stamp || !same(old->installer, new->installer)
		 || !same(old->source, new->source))
		pw_pkg_changes_add(out, PW_PKG_REINSTALLED, new->name, old->version, new->version, new->installer,
				   new->source);
}

void pw_pkgdiff(const pw_distset *before, const pw_distset *after, pw_pkg_changes *out)
{
	memset(out, 0, sizeof *out);
	size_t i = 0, j = 0;
	size_t nb = before ? before->count : 0, na = after ? after->count : 0;
	while (i < nb && j < na) {
		const pw_dist *b = &before->items[i], *a = &after->items[j];
		int c = strcmp(b->key, a->key);
		if (c < 0) {
			pw_pkg_changes_add(out, PW_PKG_REMOVED, b->name, b->version, NULL, b->installer, b->source);
			i++;
		} else if (c > 0) {
			pw_pkg_changes_add(out, PW_PKG_INSTALLED, a->name, NULL, a->version, a->installer, a->source);
			j++;
		} else {
			compare_one(out, b, a);
			i++, j++;
		}
	}
	for (; i < nb; i++) {
		const pw_dist *b = &before->items[i];
		pw_pkg_changes_add(out, PW_PKG_REMOVED, b->name, b->version, NULL, b->installer, b->source);
	}
	for (; j < na; j++) {
		const pw_dist *a = &after->items[j];
		pw_pkg_changes_add(out, PW_PKG_INSTALLED, a->name, NULL, a->version, a->installer, a->source);
	}
}

void pw_pkg_changes_clear(pw_pkg_changes *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->count; i++) {
		pw_pkg_change *c = &l->items[i];
		free(c->name);
		free(c->old_version);
		free(c->new_version);
		free(c->installer);
		free(c->source);
	}
	free(l->items);
	memset(l, 0, sizeof *l);
}

/* ---------------------------------------------------------------- apt's lines */

size_t pw_pkg_changes_apt_lines(const pw_pkg_changes *l, char ***lines)
{
	static const struct { pw_pkg_action action; const char *label; } order[] = {
		{ PW_PKG_INSTALLED, N_("Install:") }, { PW_PKG_UPGRADED, N_("Upgrade:") },
		{ PW_PKG_DOWNGRADED, N_("Downgrade:") }, { PW_PKG_REINSTALLED, N_("Reinstall:") },
		{ PW_PKG_REMOVED, N_("Remove:") },
	};
	size_t n = 0;
	*lines = xcalloc(sizeof order / sizeof order[0] + 1, sizeof **lines);
	for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
		char *line = NULL;
		for (size_t i = 0; i < l->count; i++) {
			const pw_pkg_change *c = &l->items[i];
			if (c->action != order[k].action)
				continue;
			char *item = c->action == PW_PKG_UPGRADED || c->action == PW_PKG_DOWNGRADED
				? xasprintf("%s (%s -> %s)", c->name, c->old_version ? c->old_version : "?",
					    c->new_version ? c->new_version : "?")
				: xasprintf("%s (%s)", c->name,
					    c->new_version ? c->new_version : c->old_version ? c->old_version : "?");
			char *next = line ? xasprintf("%s, %s", line, item) : xasprintf("%s %s", _(order[k].label), item);
			free(line);
			free(item);
			line = next;
		}
		if (line)
			(*lines)[n++] = line;
	}
	return n;
}
