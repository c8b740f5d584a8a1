/*
 * Read connections to the catalog kept between requests, for the endpoints
 * that read it on every call (GET /api/jobs, GET /api/jobs/ID): opening one
 * is a dozen system calls, three PRAGMAs and the schema check, several
 * times the query itself. A few are kept (more requests at once open one
 * for themselves and close it after). One taken from the pool is used only
 * while it still reads the file now at the path in the schema it was
 * opened for: the file's stamp (filestamp.h: replaced, restored from a
 * copy, created since an empty in-memory one stood for it, checkpointed)
 * and the file's schema version (a newer pyward migrated it: the shims of
 * an older schema a reader adds would hide the new tables) are checked on
 * every take, and a connection that fails either is opened again. SQLite
 * itself gives each read its current state of an unchanged file.
 */
#ifndef PW_API_CATALOG_POOL_H
#define PW_API_CATALOG_POOL_H

#include "catalog.h"
#include "err.h"
#include "filestamp.h"

typedef struct pw_api_catalog_pool pw_api_catalog_pool;

enum { PW_API_CATALOG_POOL_SIZE = 4 };

pw_api_catalog_pool *pw_api_catalog_pool_new(const char *path, unsigned size);
void pw_api_catalog_pool_free(pw_api_catalog_pool **p);

/* A connection taken from the pool, with the stamp of the file it opened. */
typedef struct pw_api_catalog_lease {
	pw_catalog *c;
	pw_filestamp stamp;
} pw_api_catalog_lease;

/* A read-only connection (l->c) that reads the catalog as it is now. */
pw_err *pw_api_catalog_pool_take(pw_api_catalog_pool *p, pw_api_catalog_lease *l);
/* Back to the pool (closed when the pool is full); l->c is NULL after. */
void pw_api_catalog_pool_give(pw_api_catalog_pool *p, pw_api_catalog_lease *l);

/* How many connections were opened, for tests and /metrics-style checks. */
unsigned long pw_api_catalog_pool_opens(pw_api_catalog_pool *p);

#endif
