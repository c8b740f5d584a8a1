/* Read connections to the catalog kept between requests (catalog_pool.h). */
#include "config.h"

#include "api/catalog_pool.h"

#include "filestamp.h"
#include "xalloc.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct pw_api_catalog_pool {
	pthread_mutex_t lock;
	char *path;
	pw_api_catalog_lease *free_ones;     /* idle connections */
	size_t count, size;
	unsigned long opens;
};

pw_api_catalog_pool *pw_api_catalog_pool_new(const char *path, unsigned size)
{
	pw_api_catalog_pool *p = xcalloc(1, sizeof *p);
	pthread_mutex_init(&p->lock, NULL);
	p->path = xstrdup(path);
	p->size = size ? size : PW_API_CATALOG_POOL_SIZE;
	p->free_ones = xcalloc(p->size, sizeof *p->free_ones);
	return p;
}

void pw_api_catalog_pool_free(pw_api_catalog_pool **pp)
{
	pw_api_catalog_pool *p = pp ? *pp : NULL;
	if (!p)
		return;
	for (size_t i = 0; i < p->count; i++)
		pw_catalog_close(&p->free_ones[i].c);
	free(p->free_ones);
	free(p->path);
	pthread_mutex_destroy(&p->lock);
	free(p);
	*pp = NULL;
}

/* The schema version in the file's header now (a fresh read). */
static int file_version(pw_catalog *c)
{
	sqlite3_stmt *st = NULL;
	int v = -1;
	if (sqlite3_prepare_v2(pw_catalog_db(c), "PRAGMA main.user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static bool still_current(const char *path, const pw_api_catalog_lease *k)
{
	pw_filestamp now;
	pw_filestamp_take(path, false, &now);
	if (!pw_filestamp_equal(&now, &k->stamp))
		return false;
	/* An empty in-memory stand-in (no file then, none now) is current. */
	return !now.exists || file_version(k->c) == pw_catalog_schema_version(k->c);
}

pw_err *pw_api_catalog_pool_take(pw_api_catalog_pool *p, pw_api_catalog_lease *l)
{
	memset(l, 0, sizeof *l);
	pthread_mutex_lock(&p->lock);
	if (p->count)
		*l = p->free_ones[--p->count];
	pthread_mutex_unlock(&p->lock);
	if (l->c && still_current(p->path, l))
		return NULL;
	pw_catalog_close(&l->c);
	/* Stamped before opening: a change in between shows next time. */
	pw_filestamp_take(p->path, false, &l->stamp);
	pw_err *e = pw_catalog_open(p->path, PW_CATALOG_READ_ONLY, &l->c);
	if (e)
		return e;
	pthread_mutex_lock(&p->lock);
	p->opens++;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void pw_api_catalog_pool_give(pw_api_catalog_pool *p, pw_api_catalog_lease *l)
{
	if (!l->c)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->count < p->size) {
		p->free_ones[p->count++] = *l;
		l->c = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	pw_catalog_close(&l->c);
}

unsigned long pw_api_catalog_pool_opens(pw_api_catalog_pool *p)
{
	pthread_mutex_lock(&p->lock);
	unsigned long n = p->opens;
	pthread_mutex_unlock(&p->lock);
	return n;
}
