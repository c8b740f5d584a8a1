/* The runtime status copy and its stamps (status_cache.h). */
#include "config.h"

#include "api/status_cache.h"

#include "clock.h"
#include "filestamp.h"
#include "xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The paths watched; the last one is the site-packages folder, known only
 * once a status has named the Python version. */
enum { W_RUNTIME, W_CURRENT, W_PREVIOUS, W_MARKER, W_PYTHON, W_LIB, W_PINS, W_BASELINE, W_SITE, W_COUNT };

struct pw_api_status_stamp {
	pw_filestamp w[W_COUNT];
	char *site;            /* the site-packages path stamped, or NULL */
	int64_t taken_ms;
};

struct pw_api_status_cache {
	pthread_mutex_t lock;
	char *path[W_COUNT];   /* W_SITE under the lock */
	bool follow[W_COUNT];  /* stat through links, or lstat */
	char *text;            /* NULL: nothing kept */
	pw_api_status_stamp kept;
};

pw_api_status_cache *pw_api_status_cache_new(const char *box_root, const char *pins, const char *baseline)
{
	pw_api_status_cache *c = xcalloc(1, sizeof *c);
	pthread_mutex_init(&c->lock, NULL);
	c->path[W_RUNTIME] = xasprintf("%s/runtime/python", box_root);
	c->path[W_CURRENT] = xasprintf("%s/runtime/python/current", box_root);
	c->path[W_PREVIOUS] = xasprintf("%s/runtime/python/previous", box_root);
	c->path[W_MARKER] = xasprintf("%s/runtime/python/current/.pyward-runtime.json", box_root);
	c->path[W_PYTHON] = xasprintf("%s/runtime/python/current/bin/python3", box_root);
	c->path[W_LIB] = xasprintf("%s/runtime/python/current/lib", box_root);
	c->path[W_PINS] = pins ? xstrdup(pins) : NULL;
	c->path[W_BASELINE] = baseline ? xstrdup(baseline) : NULL;
	for (int i = 0; i < W_COUNT; i++)
		c->follow[i] = i != W_CURRENT && i != W_PREVIOUS;
	return c;
}

static void stamp_clear(pw_api_status_stamp *s)
{
	free(s->site);
	memset(s, 0, sizeof *s);
}

void pw_api_status_cache_free(pw_api_status_cache **cp)
{
	pw_api_status_cache *c = cp ? *cp : NULL;
	if (!c)
		return;
	for (int i = 0; i < W_COUNT; i++)
		free(c->path[i]);
	free(c->text);
	stamp_clear(&c->kept);
	pthread_mutex_destroy(&c->lock);
	free(c);
	*cp = NULL;
}

/* A path the cache does not watch (no pins table given) reads as absent. */
static void stamp_one(const char *path, bool follow, pw_filestamp *o)
{
	if (path)
		pw_filestamp_take(path, follow, o);
	else
		memset(o, 0, sizeof *o);
}

pw_api_status_stamp *pw_api_status_stamp_take(pw_api_status_cache *c)
{
	pw_api_status_stamp *s = xcalloc(1, sizeof *s);
	pthread_mutex_lock(&c->lock);
	s->site = c->path[W_SITE] ? xstrdup(c->path[W_SITE]) : NULL;
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < W_SITE; i++)
		stamp_one(c->path[i], c->follow[i], &s->w[i]);
	stamp_one(s->site, true, &s->w[W_SITE]);
	s->taken_ms = pw_clock_mono_ms();
	return s;
}

void pw_api_status_stamp_free(pw_api_status_stamp *s)
{
	if (!s)
		return;
	stamp_clear(s);
	free(s);
}

static bool same(const pw_api_status_stamp *a, const pw_api_status_stamp *b)
{
	if ((a->site == NULL) != (b->site == NULL) || (a->site && strcmp(a->site, b->site) != 0))
		return false;
	for (int i = 0; i < W_COUNT; i++)
		if (!pw_filestamp_equal(&a->w[i], &b->w[i]))
			return false;
	return true;
}

char *pw_api_status_cache_get(pw_api_status_cache *c, const pw_api_status_stamp *s)
{
	char *text = NULL;
	pthread_mutex_lock(&c->lock);
	if (c->text && s->taken_ms - c->kept.taken_ms < PW_API_STATUS_MAX_AGE_MS && same(s, &c->kept))
		text = xstrdup(c->text);
	pthread_mutex_unlock(&c->lock);
	return text;
}

/* "3.11.2" -> "3.11"; false when it is not MAJOR.MINOR[...]. */
static bool major_minor(const char *v, char *out, size_t size)
{
	const char *dot = v ? strchr(v, '.') : NULL;
	if (!dot)
		return false;
	size_t n = strspn(dot + 1, "0123456789");
	size_t len = (size_t)(dot - v) + 1 + n;
	if (n == 0 || len >= size)
		return false;
	memcpy(out, v, len);
	out[len] = '\0';
	return true;
}

void pw_api_status_cache_put(pw_api_status_cache *c, const pw_api_status_stamp *s, const char *text,
			     const char *python_version)
{
	char mm[32];
	char *site = NULL;
	if (major_minor(python_version, mm, sizeof mm))
		site = xasprintf("%s/python%s/site-packages", c->path[W_LIB], mm);
	pthread_mutex_lock(&c->lock);
	free(c->text);
	stamp_clear(&c->kept);
	bool site_known = (site == NULL && s->site == NULL) || (site && s->site && strcmp(site, s->site) == 0);
	if (site_known) {
		/* The copy stands for what was stamped before it was made. */
		c->text = xstrdup(text);
		c->kept = *s;
		c->kept.site = s->site ? xstrdup(s->site) : NULL;
	} else {
		/* The folder to watch changed: nothing kept until a status is
		 * made under a stamp that covers it. */
		c->text = NULL;
	}
	free(c->path[W_SITE]);
	c->path[W_SITE] = site;
	pthread_mutex_unlock(&c->lock);
}
