/*
 * The catalog: operations and attempts in an SQLite file, plus the tables
 * (pins, runtimes, runtime_files, venvs) other modules fill through
 * pw_catalog_db(). The file is checked before anything is written to it, so
 * a file that is not ours is reported and left exactly as it was.
 */
#include "config.h"

#include "catalog.h"
#include "catalog_file.h"
#include "audit.h"
#include "clock.h"
#include "i18n.h"
#include "pkgname.h"
#include "proc.h"
#include "redact.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* PRAGMA application_id: 'PYWD'. Part of the file format; never change it. */
#define PW_CATALOG_APP_ID 0x50595744
#define BUSY_TIMEOUT_MS 5000
#define DEFAULT_LIMIT 50
#define WAL_TRIES 40
#define WAL_RETRY_MS 25
/* A writing open checks a file this small whole every time: the check
 * reads every page, 1 MiB in about 3 ms (DESIGN.md, "Catalog"). */
#define CHECK_ALWAYS_BYTES (1 << 20)

#define HINT_FOREIGN _("it is not a pyward catalog; move it aside or choose another box root with --box-root")
#define HINT_DAMAGED _("the catalog is damaged; move it and its -wal and -shm files aside (pyward starts a new one) or restore a backup")
#define HINT_NEWER _("it was created by a newer pyward; upgrade pyward or choose another box root with --box-root")

/* A finished operation becomes its kind's last when it finished later than
 * the one named, or at the same time with a higher id (schema 7). */
#define LAST_FINISHED_NEW \
	" INSERT INTO last_finished SELECT NEW.kind, NEW.id, NEW.finished_at, NEW.outcome WHERE NEW.finished_at IS NOT NULL" \
	"  ON CONFLICT (kind) DO UPDATE SET operation_id = excluded.operation_id, finished_at = excluded.finished_at," \
	"  outcome = excluded.outcome WHERE excluded.finished_at > last_finished.finished_at" \
	"  OR (excluded.finished_at = last_finished.finished_at AND excluded.operation_id > last_finished.operation_id);"

/* Schema steps: migrations[v] takes a catalog from version v-1 to v. */
static const char *const migrations[] = {
	[1] =
	"CREATE TABLE operations ("
	" id INTEGER PRIMARY KEY,"
	" kind TEXT NOT NULL,"
	" target TEXT,"
	" args TEXT NOT NULL,"
	" started_at TEXT NOT NULL,"
	" finished_at TEXT,"
	" outcome TEXT,"
	" stop_reason TEXT,"
	" user TEXT NOT NULL,"
	" uid INTEGER NOT NULL,"
	" host TEXT NOT NULL,"
	" pid INTEGER NOT NULL,"
	" pyward_version TEXT NOT NULL,"
	" duration_ms INTEGER);"
	"CREATE INDEX operations_started_at ON operations(started_at);"
	"CREATE TABLE attempts ("
	" id INTEGER PRIMARY KEY,"
	" operation_id INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL,"
	" index_url TEXT,"
	" proxy TEXT,"
	" argv TEXT NOT NULL,"
	" exit_code INTEGER NOT NULL,"
	" class TEXT NOT NULL,"
	" started_at TEXT NOT NULL,"
	" duration_ms INTEGER NOT NULL,"
	" output_tail TEXT);"
	/* Unique, and its leading column serves lookups by operation_id. */
	"CREATE UNIQUE INDEX attempts_operation_seq ON attempts(operation_id, seq);"
	"CREATE TABLE pins ("
	" id INTEGER PRIMARY KEY,"
	" kind TEXT NOT NULL,"
	" name TEXT NOT NULL,"
	" version TEXT NOT NULL,"
	" platform TEXT NOT NULL,"
	" url TEXT NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" size INTEGER,"
	" source TEXT);"
	"CREATE TABLE runtimes ("
	" id INTEGER PRIMARY KEY,"
	" pin_id INTEGER REFERENCES pins(id),"
	" path TEXT NOT NULL,"
	" state TEXT NOT NULL,"
	" installed_at TEXT,"
	" removed_at TEXT);"
	"CREATE TABLE runtime_files ("
	" runtime_id INTEGER NOT NULL REFERENCES runtimes(id) ON DELETE CASCADE,"
	" path TEXT NOT NULL,"
	" size INTEGER NOT NULL,"
	" mode INTEGER NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" PRIMARY KEY (runtime_id, path));"
	"CREATE TABLE venvs ("
	" id INTEGER PRIMARY KEY,"
	" path TEXT NOT NULL,"
	" base_python TEXT,"
	" version TEXT,"
	" created_at TEXT NOT NULL,"
	" removed_at TEXT);"
	"CREATE INDEX venvs_path ON venvs(path);",
	/* Background jobs (jobs.c); the operations a job ran point at it. */
	[2] =
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY,"
	" kind TEXT NOT NULL,"
	" target TEXT,"
	" args TEXT NOT NULL,"
	" workspace TEXT NOT NULL,"
	" log_path TEXT NOT NULL,"
	" budget_s REAL,"
	" user TEXT NOT NULL,"
	" uid INTEGER NOT NULL,"
	" host TEXT NOT NULL,"
	" pid INTEGER,"
	" proc_start INTEGER,"
	" started_at TEXT NOT NULL,"
	" finished_at TEXT,"
	" outcome TEXT,"
	" exit_status INTEGER,"
	" stop_reason TEXT,"
	" cancel_requested_at TEXT,"
	" cancelled_by TEXT);"
	"CREATE INDEX jobs_started_at ON jobs(started_at);"
	"ALTER TABLE operations ADD COLUMN job_id INTEGER REFERENCES jobs(id);"
	"CREATE INDEX operations_job ON operations(job_id);",
	/* The newest operation of a kind (the last verify, the last install)
	 * without scanning the whole history. */
	[3] = "CREATE INDEX operations_kind ON operations(kind, started_at);",
	/* What each operation did to an environment's packages (pkgdb.c),
	 * the operation an undo reverses, a one-line account of what an
	 * operation did (a prune's count), and an index per filter the
	 * history offers, so a filter that matches nothing is an index probe,
	 * not a scan of every operation. */
	[4] =
	"CREATE TABLE package_changes ("
	" id INTEGER PRIMARY KEY,"
	" operation_id INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,"
	" env TEXT NOT NULL,"
	" name TEXT NOT NULL,"
	" display_name TEXT NOT NULL,"
	" action TEXT NOT NULL,"
	" old_version TEXT,"
	" new_version TEXT,"
	" installer TEXT,"
	" source TEXT);"
	"CREATE INDEX package_changes_operation ON package_changes(operation_id);"
	"CREATE INDEX package_changes_name ON package_changes(name, operation_id);"
	"ALTER TABLE operations ADD COLUMN undo_of INTEGER REFERENCES operations(id) ON DELETE SET NULL;"
	"ALTER TABLE operations ADD COLUMN note TEXT;"
	/* ON DELETE SET NULL looks undo_of up for every deleted operation. */
	"CREATE INDEX operations_undo_of ON operations(undo_of);"
	"CREATE INDEX operations_outcome ON operations(outcome, started_at);",
	/* The HTTP API's jobs (apijobs.c), so a job outlives the server that
	 * ran it: its end state and result, or "interrupted" when the server
	 * died first. */
	[5] =
	"CREATE TABLE api_jobs ("
	" id INTEGER PRIMARY KEY,"
	" kind TEXT NOT NULL,"
	" target TEXT,"
	" user TEXT NOT NULL,"
	" args TEXT,"
	" host TEXT NOT NULL,"
	" pid INTEGER NOT NULL,"
	" proc_start INTEGER,"
	" created_at TEXT NOT NULL,"
	" finished_at TEXT,"
	" state TEXT NOT NULL,"
	" result TEXT,"
	" error TEXT,"
	" events INTEGER,"
	" cancelled_by TEXT);",
	/* `history --target TEXT`: the distinct targets are walked one probe
	 * each, and each that contains TEXT is read newest first from here
	 * (matching_targets and build_query in the history's query). */
	[6] = "CREATE INDEX operations_target ON operations(target, started_at);",
	/* Counters kept by the catalog itself, so /metrics reads a few rows
	 * instead of grouping every operation and attempt (11 s at a million):
	 * finished operations by kind and stored outcome, attempts by class, and
	 * each kind's last finished operation (the last runtime.verify). They
	 * always say what counting the rows says: triggers add a row's count in
	 * the transaction that inserts or finishes it and take it away in the one
	 * that deletes it (a prune, and the attempts that go with an operation),
	 * whichever module or tool wrote the row. Filled once here from the rows
	 * the file holds, inside the one migration transaction. The last finished
	 * is by (finished_at, id), as history orders; when the row it names is
	 * deleted, the kind's next is looked up (the kind index, that kind only). */
	[7] =
	"CREATE TABLE operation_counts (kind TEXT NOT NULL, outcome TEXT NOT NULL, n INTEGER NOT NULL,"
	" PRIMARY KEY (kind, outcome)) WITHOUT ROWID;"
	"CREATE TABLE attempt_counts (class TEXT NOT NULL PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE last_finished (kind TEXT NOT NULL PRIMARY KEY, operation_id INTEGER NOT NULL,"
	" finished_at TEXT NOT NULL, outcome TEXT NOT NULL) WITHOUT ROWID;"
	/* Before the fill, which then probes it once per kind. */
	"CREATE INDEX operations_kind_finished ON operations(kind, finished_at);"
	"INSERT INTO operation_counts SELECT kind, outcome, count(*) FROM operations"
	" WHERE outcome IS NOT NULL GROUP BY kind, outcome;"
	"INSERT INTO attempt_counts SELECT class, count(*) FROM attempts GROUP BY class;"
	"INSERT INTO last_finished SELECT o.kind, o.id, o.finished_at, o.outcome"
	" FROM (SELECT DISTINCT kind FROM operations) k JOIN operations o ON o.id ="
	" (SELECT id FROM operations WHERE kind = k.kind AND outcome IS NOT NULL AND finished_at IS NOT NULL"
	"  ORDER BY finished_at DESC, id DESC LIMIT 1);"
	"CREATE TRIGGER operations_count_insert AFTER INSERT ON operations WHEN NEW.outcome IS NOT NULL BEGIN"
	" INSERT INTO operation_counts VALUES (NEW.kind, NEW.outcome, 1)"
	"  ON CONFLICT (kind, outcome) DO UPDATE SET n = n + 1;"
	LAST_FINISHED_NEW
	" END;"
	"CREATE TRIGGER operations_count_finish AFTER UPDATE OF outcome ON operations"
	" WHEN OLD.outcome IS NULL AND NEW.outcome IS NOT NULL BEGIN"
	" INSERT INTO operation_counts VALUES (NEW.kind, NEW.outcome, 1)"
	"  ON CONFLICT (kind, outcome) DO UPDATE SET n = n + 1;"
	LAST_FINISHED_NEW
	" END;"
	"CREATE TRIGGER operations_count_delete AFTER DELETE ON operations WHEN OLD.outcome IS NOT NULL BEGIN"
	" UPDATE operation_counts SET n = n - 1 WHERE kind = OLD.kind AND outcome = OLD.outcome;"
	" DELETE FROM operation_counts WHERE kind = OLD.kind AND outcome = OLD.outcome AND n <= 0;"
	" END;"
	/* Only when the row it names goes: one probe of the kind's index. */
	"CREATE TRIGGER last_finished_delete AFTER DELETE ON operations"
	" WHEN EXISTS (SELECT 1 FROM last_finished WHERE kind = OLD.kind AND operation_id = OLD.id) BEGIN"
	" DELETE FROM last_finished WHERE kind = OLD.kind;"
	" INSERT INTO last_finished SELECT kind, id, finished_at, outcome FROM operations INDEXED BY operations_kind_finished"
	"  WHERE kind = OLD.kind AND finished_at IS NOT NULL AND outcome IS NOT NULL"
	"  ORDER BY finished_at DESC, id DESC LIMIT 1;"
	" END;"
	"CREATE TRIGGER attempts_count_insert AFTER INSERT ON attempts BEGIN"
	" INSERT INTO attempt_counts VALUES (NEW.class, 1) ON CONFLICT (class) DO UPDATE SET n = n + 1;"
	" END;"
	"CREATE TRIGGER attempts_count_delete AFTER DELETE ON attempts BEGIN"
	" UPDATE attempt_counts SET n = n - 1 WHERE class = OLD.class;"
	" DELETE FROM attempt_counts WHERE class = OLD.class AND n <= 0;"
	" END;",
};

_Static_assert(sizeof migrations / sizeof migrations[0] == PW_CATALOG_SCHEMA_VERSION + 1,
	       "one migration step per schema version");

/* Read-only views of an older file: readers (history, an auditor's copy on
 * read-only media) must not need to write to read. read_only_shims[v] makes
 * a version v-1 file look like version v to queries, with TEMP objects that
 * shadow the main schema's names and vanish with the connection. */
static const char *const read_only_shims[] = {
	[1] = NULL,
	[2] =
	"CREATE TEMP TABLE jobs ("
	" id INTEGER PRIMARY KEY, kind TEXT NOT NULL, target TEXT, args TEXT NOT NULL,"
	" workspace TEXT NOT NULL, log_path TEXT NOT NULL, budget_s REAL, user TEXT NOT NULL,"
	" uid INTEGER NOT NULL, host TEXT NOT NULL, pid INTEGER, proc_start INTEGER,"
	" started_at TEXT NOT NULL, finished_at TEXT, outcome TEXT, exit_status INTEGER,"
	" stop_reason TEXT, cancel_requested_at TEXT, cancelled_by TEXT);",
	[3] = NULL, /* an index: an old file is only slower to search */
	[4] =
	"CREATE TEMP TABLE package_changes ("
	" id INTEGER PRIMARY KEY, operation_id INTEGER NOT NULL, env TEXT NOT NULL, name TEXT NOT NULL,"
	" display_name TEXT NOT NULL, action TEXT NOT NULL, old_version TEXT, new_version TEXT,"
	" installer TEXT, source TEXT);",
	[5] =
	"CREATE TEMP TABLE api_jobs ("
	" id INTEGER PRIMARY KEY, kind TEXT NOT NULL, target TEXT, user TEXT NOT NULL, args TEXT,"
	" host TEXT NOT NULL, pid INTEGER NOT NULL, proc_start INTEGER, created_at TEXT NOT NULL,"
	" finished_at TEXT, state TEXT NOT NULL, result TEXT, error TEXT, events INTEGER, cancelled_by TEXT);",
	[6] = NULL, /* an index: an old file is only slower to search (--target reads every row) */
	/* The counters, counted from the rows as before they were kept: right,
	 * and as slow as then, until a writer migrates the file. */
	[7] =
	"CREATE TEMP VIEW operation_counts AS SELECT kind, outcome, count(*) AS n FROM main.operations"
	" WHERE outcome IS NOT NULL GROUP BY kind, outcome;"
	"CREATE TEMP VIEW attempt_counts AS SELECT class, count(*) AS n FROM main.attempts GROUP BY class;"
	"CREATE TEMP VIEW last_finished AS SELECT o.kind, o.id AS operation_id, o.finished_at, o.outcome"
	" FROM (SELECT DISTINCT kind FROM main.operations) k JOIN main.operations o ON o.id ="
	" (SELECT id FROM main.operations WHERE kind = k.kind AND outcome IS NOT NULL AND finished_at IS NOT NULL"
	"  ORDER BY finished_at DESC, id DESC LIMIT 1);",
};

_Static_assert(sizeof read_only_shims / sizeof read_only_shims[0] == PW_CATALOG_SCHEMA_VERSION + 1,
	       "one read-only shim per schema version");

/* Columns later steps added to operations. An older file read read-only
 * gets one TEMP view of operations naming all of them (NULL where the
 * file has none): views of views would need one name per step. */
static const struct { int version; const char *column; } added_op_columns[] = {
	{ 2, "job_id" }, { 4, "undo_of" }, { 4, "note" },
};

static char *operations_shim(int version)
{
	char *cols = xstrdup("");
	for (size_t i = 0; i < sizeof added_op_columns / sizeof added_op_columns[0]; i++) {
		if (added_op_columns[i].version <= version)
			continue;
		char *next = xasprintf("%s, NULL AS %s", cols, added_op_columns[i].column);
		free(cols);
		cols = next;
	}
	char *sql = *cols ? xasprintf("CREATE TEMP VIEW operations AS SELECT *%s FROM main.operations", cols) : NULL;
	free(cols);
	return sql;
}

/* An operation begun through this handle, so finish can use the monotonic clock. */
typedef struct open_op {
	int64_t id;
	int64_t start_ms;
} open_op;

struct pw_catalog {
	sqlite3 *db;
	char *path;           /* the file, for messages (even when db is in memory) */
	bool readonly;
	bool fresh;           /* the file was missing or empty when opened */
	int version;
	char host[256];       /* this host, to judge whether an open operation still runs */
	open_op *open;
	size_t n_open, cap_open;
};

/* What a database says about itself. */
typedef struct db_state {
	int64_t app_id;
	int64_t version;
	int64_t objects;      /* rows in sqlite_master */
	int64_t bytes;        /* pages times page size */
} db_state;

/* Binds parameters, keeping the first failure for one check at the end. */
typedef struct binder {
	sqlite3_stmt *st;
	int rc;
} binder;

/* ---------------------------------------------------------------- errors */

static pw_err *db_fail(const pw_catalog *c, int rc, const char *what)
{
	const char *msg = c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc);
	what = _(what);
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return pw_err_new(PW_ERR_CORRUPT, HINT_DAMAGED, _("catalog %s is damaged: %s: %s"),
				  c->path, what, msg);
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return pw_err_new(PW_ERR_IO, _("another pyward process kept the catalog busy; try again"),
				  _("catalog %s: %s: %s"), c->path, what, msg);
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		return pw_err_new(PW_ERR_IO, _("check that the box root exists and that you may write to it"),
				  _("catalog %s: %s: %s"), c->path, what, msg);
	case SQLITE_FULL:
		return pw_err_new(PW_ERR_IO, _("free some disk space and try again"),
				  _("catalog %s: %s: %s"), c->path, what, msg);
	case SQLITE_IOERR:
	case SQLITE_NOMEM:
		return pw_err_new(PW_ERR_IO, NULL, _("catalog %s: %s: %s"), c->path, what, msg);
	default:
		return pw_err_new(PW_ERR_FAILED, NULL, _("catalog %s: %s: %s"), c->path, what, msg);
	}
}

const char *pw_catalog_damage_hint(int sqlite_code)
{
	int primary = sqlite_code & 0xff;
	return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? HINT_DAMAGED : NULL;
}

static pw_err *not_ours(const char *path, const char *why)
{
	return pw_err_new(PW_ERR_CORRUPT, HINT_FOREIGN, _("catalog %s: %s"), path, _(why));
}

static pw_err *writable(const pw_catalog *c)
{
	if (!c)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog"));
	if (c->readonly)
		return pw_err_new(PW_ERR_USAGE, NULL, _("catalog %s was opened read-only"), c->path);
	return NULL;
}

/* ---------------------------------------------------------------- statements */

static pw_err *exec(pw_catalog *c, const char *sql, const char *what)
{
	int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? NULL : db_fail(c, rc, what);
}

static pw_err *prep(pw_catalog *c, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(c->db, sql, -1, st, NULL);
	if (rc == SQLITE_OK)
		return NULL;
	*st = NULL;
	return db_fail(c, rc, N_("preparing a statement"));
}

/* Step once; *row says whether a row came back. */
static pw_err *step(pw_catalog *c, sqlite3_stmt *st, bool *row, const char *what)
{
	int rc = sqlite3_step(st);
	if (row)
		*row = rc == SQLITE_ROW;
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return NULL;
	return db_fail(c, rc, what);
}

static void bind_text(binder *b, int i, const char *s)
{
	if (b->rc != SQLITE_OK)
		return;
	b->rc = s ? sqlite3_bind_text(b->st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(b->st, i);
}

/* For fixed-size buffers that a caller may have filled to the brim. */
static void bind_buf(binder *b, int i, const char *s, size_t size)
{
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_text(b->st, i, s, (int)strnlen(s, size), SQLITE_STATIC);
}

static void bind_int(binder *b, int i, int64_t v)
{
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->st, i, v);
}

static pw_err *bound(pw_catalog *c, const binder *b)
{
	return b->rc == SQLITE_OK ? NULL : db_fail(c, b->rc, N_("binding a value"));
}

static char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

/* Same as col_str, but "" for NULL, for fields callers may print as they are. */
static char *col_str0(sqlite3_stmt *st, int i)
{
	char *s = col_str(st, i);
	return s ? s : xstrdup("");
}

/* ---------------------------------------------------------------- transactions */

/* BEGIN IMMEDIATE takes the write lock up front, so a busy catalog waits in
 * the busy handler instead of failing when a read would turn into a write. */
static pw_err *tx_begin(pw_catalog *c)
{
	return exec(c, "BEGIN IMMEDIATE", N_("starting a transaction"));
}

static pw_err *tx_read(pw_catalog *c)
{
	return exec(c, "BEGIN", N_("starting a read"));
}

/* Commit when e is NULL, else roll back; returns the first error. */
static pw_err *tx_end(pw_catalog *c, pw_err *e)
{
	if (!e) {
		int rc = sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return NULL;
		e = db_fail(c, rc, N_("committing"));
	}
	if (!sqlite3_get_autocommit(c->db))
		sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
	return e;
}

/* ---------------------------------------------------------------- opening */

/* The SQLite header is 100 bytes; application_id is big-endian at 68. */
#define HEADER_SIZE 100
#define HEADER_APP_ID 68

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* *fresh when the file is missing or empty; the header of any other is
 * judged by check_header once SQLite has the file open. */
static pw_err *check_file(const char *path, bool *fresh)
{
	struct stat st;

	*fresh = false;
	if (stat(path, &st) != 0) {
		if (errno == ENOENT) {
			*fresh = true;
			return NULL;
		}
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot examine catalog %s"), path);
	}
	if (!S_ISREG(st.st_mode))
		return not_ours(path, N_("not a regular file"));
	if (st.st_size == 0) {
		*fresh = true;
		return NULL;
	}
	if (st.st_size < HEADER_SIZE)
		return not_ours(path, N_("not an SQLite database"));
	return NULL;
}

/* Judge the file from its header before SQLite reads it, so a file that is
 * not ours is never touched, not even by a hot-journal rollback or the
 * -wal/-shm files a read of a WAL database leaves behind. Our
 * application_id is written in the same transaction as the first schema,
 * before WAL is enabled, so it is always in the main file of a catalog.
 * The header is read through the descriptor SQLite opened, never one of
 * our own: closing any descriptor of a file drops every POSIX lock this
 * process holds on it, those of its other SQLite connections included (a
 * server opens the catalog per request while operations hold it open),
 * and SQLite's WAL locking relies on them. */
static pw_err *check_header(pw_catalog *c)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char hdr[HEADER_SIZE];
	sqlite3_file *f = NULL;
	int rc = sqlite3_file_control(c->db, "main", SQLITE_FCNTL_FILE_POINTER, &f);
	if (rc != SQLITE_OK || !f || !f->pMethods)
		return db_fail(c, rc == SQLITE_OK ? SQLITE_CANTOPEN : rc, N_("reading the file header"));
	rc = f->pMethods->xRead(f, hdr, sizeof hdr, 0);
	if (rc == SQLITE_IOERR_SHORT_READ || (rc == SQLITE_OK && memcmp(hdr, magic, sizeof magic) != 0))
		return not_ours(c->path, N_("not an SQLite database"));
	if (rc != SQLITE_OK)
		return db_fail(c, rc, N_("reading the file header"));
	if (be32(hdr + HEADER_APP_ID) != PW_CATALOG_APP_ID)
		return not_ours(c->path, N_("an SQLite database of another application"));
	return NULL;
}

/* One statement, so the three come from one snapshot even while another
 * process is creating the schema. */
static const char SQL_STATE[] =
	"SELECT (SELECT application_id FROM pragma_application_id),"
	" (SELECT user_version FROM pragma_user_version),"
	" (SELECT count(*) FROM sqlite_master),"
	" (SELECT page_count FROM pragma_page_count) * (SELECT page_size FROM pragma_page_size)";

static pw_err *read_state(pw_catalog *c, db_state *s)
{
	sqlite3_stmt *st;
	bool row = false;
	pw_err *e = prep(c, SQL_STATE, &st);
	if (!e)
		e = step(c, st, &row, N_("reading the file header"));
	if (!e && !row)
		e = db_fail(c, SQLITE_CORRUPT, N_("reading the file header"));
	if (!e) {
		s->app_id = sqlite3_column_int64(st, 0);
		s->version = sqlite3_column_int64(st, 1);
		s->objects = sqlite3_column_int64(st, 2);
		s->bytes = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	return e;
}

/* Ours, or still the empty file we found (another process may have made
 * it ours meanwhile, or someone else's). */
static pw_err *check_state(const pw_catalog *c, const db_state *s)
{
	bool empty = c->fresh && s->app_id == 0 && s->version == 0 && s->objects == 0;
	if (s->app_id != PW_CATALOG_APP_ID && !empty)
		return not_ours(c->path, N_("an SQLite database of another application"));
	if (s->version > PW_CATALOG_SCHEMA_VERSION)
		return pw_err_new(PW_ERR_CORRUPT, HINT_NEWER,
				  _("catalog %s has schema version %lld; this pyward knows up to %d"),
				  c->path, (long long)s->version, PW_CATALOG_SCHEMA_VERSION);
	return NULL;
}

/* quick_check reports on several lines ("*** in database main ***\nPage 2: …");
 * an error message is one line. */
static pw_err *damaged(const pw_catalog *c, const char *report)
{
	static const char banner[] = "*** in database main ***";
	const char *r = report ? report : _("integrity check failed");
	if (strncmp(r, banner, sizeof banner - 1) == 0)
		r += sizeof banner - 1;
	char *line = xstrdup(r + strspn(r, "\n "));
	for (char *p = line; *p; p++)
		if (*p == '\n')
			*p = ' ';
	pw_err *e = pw_err_new(PW_ERR_CORRUPT, HINT_DAMAGED, _("catalog %s is damaged: %s"), c->path, line);
	free(line);
	return e;
}

static pw_err *quick_check(pw_catalog *c)
{
	sqlite3_stmt *st;
	bool row = false;
	pw_err *e = prep(c, "PRAGMA quick_check(1)", &st);
	if (!e)
		e = step(c, st, &row, N_("checking the file"));
	if (!e && row) {
		const char *r = (const char *)sqlite3_column_text(st, 0);
		if (!r || strcmp(r, "ok") != 0)
			e = damaged(c, r);
	}
	sqlite3_finalize(st);
	return e;
}

/* Every missing schema step in one transaction: a new catalog costs one
 * commit (one round of fsyncs), not one per step, and an upgrade is all or
 * nothing. The state is read again under the write lock: another process
 * may have created or migrated the file since. */
static pw_err *migrate(pw_catalog *c, int from)
{
	if (from >= PW_CATALOG_SCHEMA_VERSION) {
		c->version = from;
		return NULL;
	}
	char sql[96];
	db_state s;
	pw_err *e = tx_begin(c);
	if (!e)
		e = read_state(c, &s);
	if (!e)
		e = check_state(c, &s);
	int have = e ? PW_CATALOG_SCHEMA_VERSION : (int)s.version;
	for (int v = have + 1; !e && v <= PW_CATALOG_SCHEMA_VERSION; v++)
		e = exec(c, migrations[v], N_("creating the schema"));
	if (!e && have < PW_CATALOG_SCHEMA_VERSION) {
		snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
			 PW_CATALOG_APP_ID, PW_CATALOG_SCHEMA_VERSION);
		e = exec(c, sql, N_("setting the schema version"));
	}
	e = tx_end(c, e);
	if (!e)
		c->version = PW_CATALOG_SCHEMA_VERSION;
	return e;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* WAL lets readers and one writer work at once. It is set after the schema
 * exists, so a new file never holds an empty WAL-mode database that a later
 * open would take for someone else's. Where WAL is impossible (some network
 * file systems) SQLite keeps the rollback journal, which is still correct. */
static pw_err *tune_for_writing(pw_catalog *c)
{
	int rc = SQLITE_BUSY;
	/* The switch needs the file to itself and SQLite does not wait for
	 * it, so retry briefly; failing that, another open will switch it,
	 * and this connection works in either mode. */
	for (int i = 0; i < WAL_TRIES && rc == SQLITE_BUSY; i++) {
		if (i)
			sleep_ms(WAL_RETRY_MS);
		rc = sqlite3_exec(c->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
	}
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		return db_fail(c, rc, N_("enabling WAL"));
	/* FULL: in WAL mode every commit syncs the log, so a committed
	 * operation survives a power cut (NORMAL may lose the last commits). */
	return exec(c, "PRAGMA synchronous = FULL", N_("setting synchronous"));
}

static pw_err *open_db(pw_catalog *c, const char *file, int flags)
{
	int rc = sqlite3_open_v2(file, &c->db, flags, NULL);
	if (rc != SQLITE_OK)
		return db_fail(c, rc, N_("opening"));
	sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
	/* Opening reads nothing; the page-cache pragma below reads the schema. */
	if (!c->fresh) {
		pw_err *e = check_header(c);
		if (e)
			return e;
	}
	/* 1 MiB of page cache, not SQLite's 2: a filter over the whole history
	 * reads every page once, and the kernel caches the file anyway. */
	pw_err *e = exec(c, "PRAGMA cache_size = -1024", N_("sizing the page cache"));
	if (!e)
		e = exec(c, "PRAGMA foreign_keys = ON", N_("enabling foreign keys"));
	/* Every b-tree page SQLite loads is checked cell by cell before it is
	 * used, so a statement that reaches a damaged page fails with
	 * SQLITE_CORRUPT (rolled back, nothing written) instead of writing
	 * into it. The cost follows the pages an operation touches, not the
	 * size of the file. */
	if (!e)
		e = exec(c, "PRAGMA cell_size_check = ON", N_("enabling page checks"));
	return e;
}

/* Nothing is written before the file is known to be ours (or empty) and
 * sound: opening and reading do not change it. */
static pw_err *open_file(pw_catalog *c, pw_catalog_mode mode)
{
	db_state s;
	int flags = mode == PW_CATALOG_READ_ONLY ? SQLITE_OPEN_READONLY
		: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	int extra = 0;
	/* Asked before our own open, which takes the lock this looks for. */
	bool left_open = mode != PW_CATALOG_READ_ONLY && pw_catalog_file_left_open(c->path);
	/* A reader who may not write (another user, a read-only box) opens
	 * the file immutable, so SQLite does not try to create its -shm. */
	char *name = mode == PW_CATALOG_READ_ONLY ? pw_catalog_file_reader_name(c->path, &extra) : xstrdup(c->path);
	pw_err *e = open_db(c, name, flags | extra);
	free(name);
	if (!e)
		e = read_state(c, &s);
	if (!e)
		e = check_state(c, &s);
	/* The whole file is checked before writing when there is reason: it
	 * is small enough that the check costs nothing (CHECK_ALWAYS_BYTES), or
	 * the last writer did not close it (its -wal was just recovered). Else
	 * the check would read every page (0.3 s per 100,000 operations) on
	 * every operation; the page checks (cell_size_check) refuse a write
	 * that reaches a damaged page, and `pyward history check` reads the
	 * whole file when an operator asks. A read-only open never checks: it
	 * cannot make damage worse, and a damaged page it reaches is reported
	 * as PW_ERR_CORRUPT with the hint. */
	if (!e && s.app_id == PW_CATALOG_APP_ID && mode != PW_CATALOG_READ_ONLY &&
	    (left_open || s.bytes <= CHECK_ALWAYS_BYTES))
		e = quick_check(c);
	if (e)
		return e;
	c->version = (int)s.version;
	if (mode == PW_CATALOG_READ_ONLY) {
		for (int v = (int)s.version + 1; v <= PW_CATALOG_SCHEMA_VERSION && !e; v++)
			if (read_only_shims[v])
				e = exec(c, read_only_shims[v], N_("reading a catalog of an older schema"));
		char *view = operations_shim((int)s.version);
		if (!e && view)
			e = exec(c, view, N_("reading a catalog of an older schema"));
		free(view);
		return e;
	}
	e = migrate(c, (int)s.version);
	return e ? e : tune_for_writing(c);
}

/* A missing catalog read-only: an empty schema in memory, so every query
 * works and answers nothing, and nothing is created on disk. */
static pw_err *open_empty(pw_catalog *c)
{
	pw_err *e = open_db(c, ":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	return e ? e : migrate(c, 0);
}

static void this_host(char *buf, size_t size)
{
	if (gethostname(buf, size - 1) != 0)
		snprintf(buf, size, "unknown");
	buf[size - 1] = '\0';
}

pw_err *pw_catalog_open(const char *path, pw_catalog_mode mode, pw_catalog **out)
{
	bool fresh;
	*out = NULL;
	if (!path || !*path)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog path"));
	/* never through a link; a writer creates it 0640 itself */
	pw_err *e = mode == PW_CATALOG_READ_ONLY ? pw_catalog_file_refuse_links(path) : pw_catalog_file_prepare(path);
	if (!e)
		e = check_file(path, &fresh);
	if (e)
		return e;

	pw_catalog *c = xcalloc(1, sizeof *c);
	c->path = xstrdup(path);
	c->readonly = mode == PW_CATALOG_READ_ONLY;
	c->fresh = fresh;
	this_host(c->host, sizeof c->host);
	e = c->readonly && fresh ? open_empty(c) : open_file(c, mode);
	/* A refused file is left as it was: closing must not checkpoint a -wal
	 * a dead writer left (which is also why the next open checks again). */
	if (e && c->db)
		sqlite3_db_config(c->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	if (e) {
		pw_catalog_close(&c);
		return e;
	}
	*out = c;
	return NULL;
}

void pw_catalog_close(pw_catalog **c)
{
	if (!c || !*c)
		return;
	sqlite3_close_v2((*c)->db);
	free((*c)->path);
	free((*c)->open);
	free(*c);
	*c = NULL;
}

int pw_catalog_schema_version(const pw_catalog *c)
{
	return c ? c->version : 0;
}

struct sqlite3 *pw_catalog_db(pw_catalog *c)
{
	return c ? c->db : NULL;
}

/* ---------------------------------------------------------------- actor */

static void actor_user(pw_actor *a, uid_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res && res->pw_name)
		snprintf(a->user, sizeof a->user, "%s", res->pw_name);
	else
		snprintf(a->user, sizeof a->user, "uid %ld", (long)uid);
}

/* SUDO_UID as a uid, or fallback when absent or malformed. */
static uid_t sudo_uid(uid_t fallback)
{
	const char *s = getenv("SUDO_UID");
	char *end;
	if (!s || !*s)
		return fallback;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return fallback;
	return (uid_t)v;
}

/* Behind sudo the person is SUDO_USER/SUDO_UID. Those are trusted only when
 * we are root: anyone else could set them to blame someone. */
void pw_catalog_actor_current(pw_actor *a)
{
	memset(a, 0, sizeof *a);
	uid_t uid = getuid();
	const char *sudo_user = getenv("SUDO_USER");
	if (uid == 0 && sudo_user && *sudo_user) {
		snprintf(a->user, sizeof a->user, "%s", sudo_user);
		a->uid = sudo_uid(uid);
	} else {
		actor_user(a, uid);
		a->uid = uid;
	}
	this_host(a->host, sizeof a->host);
	a->pid = getpid();
}

/* ---------------------------------------------------------------- open operations map */

static void remember(pw_catalog *c, int64_t id, int64_t start_ms)
{
	if (c->n_open == c->cap_open) {
		c->cap_open = c->cap_open ? 2 * c->cap_open : 8;
		c->open = xrealloc(c->open, c->cap_open * sizeof *c->open);
	}
	c->open[c->n_open++] = (open_op){ id, start_ms };
}

static void forget(pw_catalog *c, int64_t id)
{
	for (size_t i = 0; i < c->n_open; i++) {
		if (c->open[i].id == id) {
			c->open[i] = c->open[--c->n_open];
			return;
		}
	}
}

/* The monotonic start in ms, or -1 when this handle did not begin id. */
static int64_t recall(const pw_catalog *c, int64_t id)
{
	for (size_t i = 0; i < c->n_open; i++)
		if (c->open[i].id == id)
			return c->open[i].start_ms;
	return -1;
}

/* ---------------------------------------------------------------- operations */

static const char SQL_OP_INSERT[] =
	"INSERT INTO operations (kind, target, args, started_at, user, uid, host, pid,"
	" pyward_version, job_id, undo_of) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

pw_err *pw_catalog_op_begin(pw_catalog *c, const pw_op_start *op, int64_t *id)
{
	pw_err *e = writable(c);
	if (e)
		return e;
	if (!op || !op->kind || !*op->kind)
		return pw_err_new(PW_ERR_USAGE, NULL, _("an operation needs a kind"));

	pw_actor self;
	const pw_actor *a = op->actor;
	if (!a) {
		pw_catalog_actor_current(&self);
		a = &self;
	}
	char now[32];
	pw_clock_iso_now(now, sizeof now);
	int64_t start_ms = pw_clock_mono_ms();

	sqlite3_stmt *st = NULL;
	int64_t rowid = 0;
	/* Whatever a caller passes, no URL's password is stored. */
	char *args = pw_redact_text(op->args);
	/* Unflushed (catalog.h): the operation's finishing commit flushes the
	 * log, this row's frames with it. NORMAL keeps WAL mode consistent
	 * (checkpoints still sync); only the durability of this commit waits. */
	e = exec(c, "PRAGMA synchronous = NORMAL", N_("setting synchronous"));
	if (!e)
		e = tx_begin(c);
	if (!e)
		e = prep(c, SQL_OP_INSERT, &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		bind_text(&b, 1, op->kind);
		bind_text(&b, 2, op->target);
		bind_text(&b, 3, args);
		bind_text(&b, 4, now);
		bind_buf(&b, 5, a->user, sizeof a->user);
		bind_int(&b, 6, (int64_t)a->uid);
		bind_buf(&b, 7, a->host, sizeof a->host);
		bind_int(&b, 8, (int64_t)a->pid);
		bind_text(&b, 9, PACKAGE_VERSION);
		if (op->job_id > 0)
			bind_int(&b, 10, op->job_id);
		if (op->undo_of > 0)
			bind_int(&b, 11, op->undo_of);
		e = bound(c, &b);
	}
	if (!e)
		e = step(c, st, NULL, N_("recording an operation"));
	if (!e)
		rowid = sqlite3_last_insert_rowid(c->db);
	sqlite3_finalize(st);
	free(args);
	e = tx_end(c, e);
	pw_err *full = exec(c, "PRAGMA synchronous = FULL", N_("setting synchronous"));
	if (!e)
		e = full;
	else
		pw_err_free(full);
	if (e)
		return e;
	remember(c, rowid, start_ms);
	if (id)
		*id = rowid;
	return NULL;
}

static bool stored_outcome(const char *o)
{
	static const char *const ok[] = {
		PW_OUTCOME_OK, PW_OUTCOME_FAILED, PW_OUTCOME_REFUSED,
		PW_OUTCOME_TIMED_OUT, PW_OUTCOME_CANCELLED,
	};
	for (size_t i = 0; o && i < sizeof ok / sizeof ok[0]; i++)
		if (strcmp(o, ok[i]) == 0)
			return true;
	return false;
}

/* duration_ms from the monotonic clock when this handle began the
 * operation (?5), else from the two wall-clock timestamps. */
static const char SQL_OP_FINISH[] =
	"UPDATE operations SET finished_at = ?2, outcome = ?3, stop_reason = ?4,"
	" duration_ms = coalesce(?5, max(0, CAST(round((julianday(?2) - julianday(started_at))"
	" * 86400000.0) AS INTEGER)))"
	" WHERE id = ?1 AND outcome IS NULL";

/* After an UPDATE that changed nothing: why. */
static pw_err *finish_missed(pw_catalog *c, int64_t id)
{
	sqlite3_stmt *st;
	bool row = false;
	pw_err *e = prep(c, "SELECT 1 FROM operations WHERE id = ?1", &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		bind_int(&b, 1, id);
		e = bound(c, &b);
	}
	if (!e)
		e = step(c, st, &row, N_("looking up an operation"));
	sqlite3_finalize(st);
	if (e)
		return e;
	if (row)
		return pw_err_new(PW_ERR_USAGE, NULL, _("operation %lld is already finished"), (long long)id);
	return pw_err_new(PW_ERR_NOTFOUND, NULL, _("no operation %lld in catalog %s"), (long long)id, c->path);
}

static void audit_finished(pw_catalog *c, int64_t id);

pw_err *pw_catalog_op_finish(pw_catalog *c, int64_t id, const char *outcome, const char *stop_reason)
{
	return pw_catalog_op_finish_with(c, id, outcome, stop_reason, NULL, NULL);
}

pw_err *pw_catalog_op_finish_with(pw_catalog *c, int64_t id, const char *outcome, const char *stop_reason,
				  pw_catalog_with_fn with, void *ud)
{
	pw_err *e = writable(c);
	if (e)
		return e;
	if (!stored_outcome(outcome))
		return pw_err_new(PW_ERR_USAGE, NULL, _("\"%s\" is not an outcome an operation can finish with"),
				  outcome ? outcome : "(null)");
	char now[32];
	pw_clock_iso_now(now, sizeof now);
	int64_t start_ms = recall(c, id);
	int64_t elapsed = start_ms >= 0 ? pw_clock_mono_ms() - start_ms : -1;

	sqlite3_stmt *st = NULL;
	char *reason = stop_reason ? pw_redact_text(stop_reason) : NULL;
	e = tx_begin(c);
	if (!e)
		e = prep(c, SQL_OP_FINISH, &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		bind_int(&b, 1, id);
		bind_text(&b, 2, now);
		bind_text(&b, 3, outcome);
		bind_text(&b, 4, reason);
		if (elapsed >= 0)
			bind_int(&b, 5, elapsed);
		e = bound(c, &b);
	}
	if (!e)
		e = step(c, st, NULL, N_("finishing an operation"));
	if (!e && sqlite3_changes(c->db) == 0)
		e = finish_missed(c, id);
	sqlite3_finalize(st);
	free(reason);
	if (!e && with)
		e = with(c, ud);
	e = tx_end(c, e);
	if (!e) {
		forget(c, id);
		audit_finished(c, id);
	}
	return e;
}

/* Every front end's operations finish here: the one place that sends the
 * audit event (audit.h). Logging never fails the operation. */
static void audit_finished(pw_catalog *c, int64_t id)
{
	pw_op_rec op;
	pw_err *e = pw_catalog_op_get(c, id, &op, NULL);
	if (e) {
		pw_err_free(e);
		return;
	}
	pw_audit_operation(&op);
	pw_op_rec_clear(&op);
}

/* ---------------------------------------------------------------- attempts */

static const char SQL_NEXT_SEQ[] =
	"SELECT (SELECT count(*) FROM operations WHERE id = ?1),"
	" (SELECT coalesce(max(seq), 0) + 1 FROM attempts WHERE operation_id = ?1)";

static const char SQL_ATTEMPT_INSERT[] =
	"INSERT INTO attempts (operation_id, seq, index_url, proxy, argv, exit_code, class,"
	" started_at, duration_ms, output_tail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

static pw_err *next_seq(pw_catalog *c, int64_t op_id, int *seq)
{
	sqlite3_stmt *st;
	bool row = false;
	pw_err *e = prep(c, SQL_NEXT_SEQ, &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		bind_int(&b, 1, op_id);
		e = bound(c, &b);
	}
	if (!e)
		e = step(c, st, &row, N_("numbering an attempt"));
	if (!e && (!row || sqlite3_column_int64(st, 0) == 0))
		e = pw_err_new(PW_ERR_NOTFOUND, NULL, _("no operation %lld in catalog %s"),
			       (long long)op_id, c->path);
	if (!e)
		*seq = sqlite3_column_int(st, 1);
	sqlite3_finalize(st);
	return e;
}

/* The text columns of an attempt as stored: no URL's password. */
typedef struct attempt_text {
	char *index_url, *proxy, *argv, *output_tail;
} attempt_text;

static void attempt_text_make(attempt_text *t, const pw_attempt_rec *a)
{
	t->index_url = a->index_url ? pw_redact_url(a->index_url) : NULL;
	t->proxy = a->proxy ? pw_redact_url(a->proxy) : NULL;
	t->argv = pw_redact_text(a->argv);
	t->output_tail = a->output_tail ? pw_redact_text(a->output_tail) : NULL;
}

static void attempt_text_clear(attempt_text *t)
{
	free(t->index_url);
	free(t->proxy);
	free(t->argv);
	free(t->output_tail);
}

static pw_err *insert_attempt(pw_catalog *c, const pw_attempt_rec *a, int seq, int64_t *id)
{
	char now[32];
	sqlite3_stmt *st;
	attempt_text t;
	attempt_text_make(&t, a);
	pw_err *e = prep(c, SQL_ATTEMPT_INSERT, &st);
	if (!e) {
		if (!a->started_at)
			pw_clock_iso_now(now, sizeof now);
		binder b = { st, SQLITE_OK };
		bind_int(&b, 1, a->operation_id);
		bind_int(&b, 2, seq);
		bind_text(&b, 3, t.index_url);
		bind_text(&b, 4, t.proxy);
		bind_text(&b, 5, t.argv);
		bind_int(&b, 6, a->exit_code);
		bind_text(&b, 7, a->klass ? a->klass : "");
		bind_text(&b, 8, a->started_at ? a->started_at : now);
		bind_int(&b, 9, a->duration_ms);
		bind_text(&b, 10, t.output_tail);
		e = bound(c, &b);
	}
	if (!e)
		e = step(c, st, NULL, N_("recording an attempt"));
	if (!e)
		*id = sqlite3_last_insert_rowid(c->db);
	sqlite3_finalize(st);
	attempt_text_clear(&t);
	return e;
}

pw_err *pw_catalog_attempt_add(pw_catalog *c, pw_attempt_rec *a)
{
	pw_err *e = writable(c);
	if (e)
		return e;
	if (!a)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no attempt to record"));
	int seq = 0;
	int64_t id = 0;
	e = tx_begin(c);
	if (!e)
		e = next_seq(c, a->operation_id, &seq);
	if (!e)
		e = insert_attempt(c, a, seq, &id);
	e = tx_end(c, e);
	if (e)
		return e;
	a->id = id;
	a->seq = seq;
	return NULL;
}

/* ---------------------------------------------------------------- reading */

#define OP_COLUMNS \
	"o.id, o.kind, o.target, o.args, o.started_at, o.finished_at, o.outcome," \
	" o.stop_reason, o.user, o.uid, o.host, o.pid, o.pyward_version, o.duration_ms," \
	" (SELECT count(*) FROM attempts a WHERE a.operation_id = o.id), o.undo_of, o.note"

static const char SQL_OP_GET[] = "SELECT " OP_COLUMNS " FROM operations o WHERE o.id = ?1";

static const char SQL_ATTEMPTS_GET[] =
	"SELECT id, operation_id, seq, index_url, proxy, argv, exit_code, class, started_at,"
	" duration_ms, output_tail FROM attempts WHERE operation_id = ?1 ORDER BY seq";

/* An unfinished operation runs while its process does; we can only ask
 * about processes on this host. A process with its pid that started after
 * the operation did holds a recycled pid (proc.h), as jobs are checked. */
static const char *derive_outcome(const pw_catalog *c, const char *host, int64_t pid, const char *started_at)
{
	if (!host || strcmp(host, c->host) != 0)
		return PW_OUTCOME_INTERRUPTED;
	return pw_proc_alive_since(pid, pw_clock_iso_to_unix(started_at)) ? PW_OUTCOME_RUNNING
									   : PW_OUTCOME_INTERRUPTED;
}

static void read_op(const pw_catalog *c, sqlite3_stmt *st, pw_op_rec *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->kind = col_str0(st, 1);
	r->target = col_str(st, 2);
	r->args = col_str0(st, 3);
	r->started_at = col_str0(st, 4);
	r->finished_at = col_str(st, 5);
	r->outcome = col_str(st, 6);
	r->stop_reason = col_str(st, 7);
	r->user = col_str0(st, 8);
	r->uid = sqlite3_column_int64(st, 9);
	r->host = col_str0(st, 10);
	r->pid = sqlite3_column_int64(st, 11);
	r->pyward_version = col_str0(st, 12);
	r->duration_ms = sqlite3_column_type(st, 13) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 13);
	r->attempt_count = sqlite3_column_int(st, 14);
	r->undo_of = sqlite3_column_int64(st, 15);
	r->note = col_str(st, 16);
	if (!r->outcome)
		r->outcome = xstrdup(derive_outcome(c, r->host, r->pid, r->started_at));
}

static void read_attempt(sqlite3_stmt *st, pw_attempt_rec *a)
{
	a->id = sqlite3_column_int64(st, 0);
	a->operation_id = sqlite3_column_int64(st, 1);
	a->seq = sqlite3_column_int(st, 2);
	a->index_url = col_str(st, 3);
	a->proxy = col_str(st, 4);
	a->argv = col_str0(st, 5);
	a->exit_code = sqlite3_column_int(st, 6);
	a->klass = col_str0(st, 7);
	a->started_at = col_str0(st, 8);
	a->duration_ms = sqlite3_column_int64(st, 9);
	a->output_tail = col_str(st, 10);
}

static void *grow(void *items, size_t count, size_t *cap, size_t size)
{
	if (count < *cap)
		return items;
	*cap = *cap ? 2 * *cap : 16;
	return xrealloc(items, *cap * size);
}

/* ---------------------------------------------------------------- the history's query */

/* A query over operations built from only the filters given: SQLite plans
 * "o.outcome = ?" onto its index, where "(?4 IS NULL OR o.outcome = ?4)"
 * would read every operation to find that none matched. Parameters are
 * numbered (?N), so the arms of a --target query share them. */
#define QUERY_PARAMS 12
/* More targets than this containing the text: the time index is walked
 * instead (a text that common matches within the first screens). */
#define TARGET_ARMS_MAX 32

typedef struct qparam {
	const char *text;
	int len;              /* -1: to the NUL */
	int64_t num;
	bool is_num;
} qparam;

typedef struct op_query {
	char *where;          /* " AND ..." for each filter given */
	qparam p[QUERY_PARAMS];
	int n;
	char *owned;          /* a normalized package name bound as text */
	char *sql;
} op_query;

/* clause's '?'s become ?N, numbered as the parameters added next. */
static void q_where(op_query *q, const char *clause)
{
	size_t cap = strlen(q->where) + strlen(clause) + 64, len = strlen(q->where);
	char *next = xmalloc(cap);
	memcpy(next, q->where, len);
	len += (size_t)snprintf(next + len, cap - len, " AND ");
	for (int k = q->n + 1; *clause; clause++) {
		if (*clause == '?')
			len += (size_t)snprintf(next + len, cap - len, "?%d", k++);
		else if (len + 1 < cap)
			next[len++] = *clause;
	}
	next[len] = '\0';
	free(q->where);
	q->where = next;
}

static void q_text(op_query *q, const char *s, int len)
{
	if (q->n < QUERY_PARAMS)
		q->p[q->n++] = (qparam){ s, len, 0, false };
}

static void q_num(op_query *q, int64_t v)
{
	if (q->n < QUERY_PARAMS)
		q->p[q->n++] = (qparam){ NULL, 0, v, true };
}

static const char *given(const char *s)
{
	return s && *s ? s : NULL;
}

static bool derived_outcome(const char *o)
{
	return strcmp(o, PW_OUTCOME_RUNNING) == 0 || strcmp(o, PW_OUTCOME_INTERRUPTED) == 0;
}

/* Stored times all end in 'Z'; a since with one would sort after the same
 * instant written with more digits ("08:00Z" > "08:00:00.000Z"), so drop it. */
static int since_len(const char *since)
{
	size_t n = strlen(since);
	return (int)(n && since[n - 1] == 'Z' ? n - 1 : n);
}

/* The statement for f. With targets (those of the index that contain
 * f->target), one arm per target, each "o.target = ?" on the target index
 * newest first, and SQLite merges the arms in time order (its plan says
 * MERGE (UNION ALL)), reading no more rows than are kept. */
static void build_query(const pw_op_filter *f, char *const *targets, size_t ntargets, op_query *q)
{
	memset(q, 0, sizeof *q);
	q->where = xstrdup("");
	const char *kind = given(f->kind);
	size_t kn = kind ? strlen(kind) : 0;
	if (kind && (kind[kn - 1] == '*' || kind[kn - 1] == '.')) {
		q_where(q, "substr(o.kind, 1, ?) = ?");
		int len = (int)(kind[kn - 1] == '*' ? kn - 1 : kn);
		q_num(q, len);
		q_text(q, kind, len);
	} else if (kind) {
		q_where(q, "o.kind = ?");
		q_text(q, kind, -1);
	}
	if (given(f->target) && !targets) {
		q_where(q, "instr(o.target, ?) > 0");
		q_text(q, f->target, -1);
	}
	/* A derived outcome ("running", "interrupted") lets every unfinished
	 * row through, to be judged in C. */
	if (given(f->outcome) && derived_outcome(f->outcome)) {
		q_where(q, "o.outcome IS NULL");
	} else if (given(f->outcome)) {
		q_where(q, "o.outcome = ?");
		q_text(q, f->outcome, -1);
	}
	if (given(f->since) && since_len(f->since) > 0) {
		q_where(q, "o.started_at >= ?");
		q_text(q, f->since, since_len(f->since));
	}
	if (given(f->before_started)) {
		q_where(q, "(o.started_at, o.id) < (?, ?)");
		q_text(q, f->before_started, -1);
		q_num(q, f->before_id);
	}
	if (given(f->text)) {
		q_where(q, "(instr(o.kind, ?) > 0 OR instr(o.target, ?) > 0 OR instr(o.user, ?) > 0"
			   " OR instr(o.outcome, ?) > 0)");
		for (int i = 0; i < 4; i++)
			q_text(q, f->text, -1);
	}
	if (given(f->package)) {
		q->owned = pw_pkgname_key(f->package);
		q_where(q, "o.id IN (SELECT operation_id FROM package_changes WHERE name = ?)");
		q_text(q, q->owned, -1);
	}
	if (!targets) {
		q->sql = xasprintf("SELECT " OP_COLUMNS " FROM operations o WHERE 1%s ORDER BY o.started_at DESC, o.id DESC",
				   q->where);
		return;
	}
	char *sql = xstrdup("");
	for (size_t i = 0; i < ntargets; i++) {
		/* the arms' own parameters come after the shared ones */
		char *next = xasprintf("%s%sSELECT " OP_COLUMNS " FROM operations o WHERE o.target = ?%d%s", sql,
				       i ? " UNION ALL " : "", q->n + 1 + (int)i, q->where);
		free(sql);
		sql = next;
	}
	/* 5 and 1: started_at and id in OP_COLUMNS */
	q->sql = xasprintf("%s ORDER BY 5 DESC, 1 DESC", sql);
	free(sql);
}

static void op_query_clear(op_query *q)
{
	free(q->where);
	free(q->sql);
	free(q->owned);
	memset(q, 0, sizeof *q);
}

/* Step through the rows, newest first, keeping those whose outcome (stored
 * or derived) matches, until limit are kept. */
static pw_err *collect_ops(pw_catalog *c, sqlite3_stmt *st, const pw_op_filter *f, pw_op_list *out)
{
	const char *want = f->outcome && *f->outcome ? f->outcome : NULL;
	size_t limit = f->limit == 0 ? DEFAULT_LIMIT : f->limit < 0 ? SIZE_MAX : (size_t)f->limit;
	size_t cap = 0;
	bool row = true;
	pw_err *e = NULL;
	while (out->count < limit) {
		e = step(c, st, &row, N_("reading operations"));
		if (e || !row)
			break;
		pw_op_rec r = { 0 };
		read_op(c, st, &r);
		if (want && strcmp(r.outcome, want) != 0) {
			pw_op_rec_clear(&r);
			continue;
		}
		out->items = grow(out->items, out->count, &cap, sizeof *out->items);
		out->items[out->count++] = r;
	}
	return e;
}

/* SQLite calls this every QUERY_CHECK_EVERY virtual machine steps. */
static int query_cancelled(void *ud)
{
	return pw_cancel_raised(ud) ? 1 : 0;
}

#define QUERY_CHECK_EVERY 1000

static void bind_query(binder *b, const op_query *q)
{
	for (int i = 0; i < q->n && b->rc == SQLITE_OK; i++) {
		const qparam *p = &q->p[i];
		if (p->is_num)
			b->rc = sqlite3_bind_int64(b->st, i + 1, p->num);
		else
			b->rc = sqlite3_bind_text(b->st, i + 1, p->text, p->len, SQLITE_STATIC);
	}
}

/* A kind prefix ("runtime.") is matched while walking the time index, which
 * is quick when such operations are common and a scan of everything when
 * there are none: one probe of the kind index says which. */
static pw_err *prefix_absent(pw_catalog *c, const pw_op_filter *f, bool *absent)
{
	*absent = false;
	const char *kind = given(f->kind);
	size_t kn = kind ? strlen(kind) : 0;
	if (!kind || (kind[kn - 1] != '*' && kind[kn - 1] != '.'))
		return NULL;
	int len = (int)(kind[kn - 1] == '*' ? kn - 1 : kn);
	sqlite3_stmt *st;
	bool row = false;
	/* Every text with the prefix sorts below prefix + 0xFF (no UTF-8 byte is 0xFF). */
	char *upper = xasprintf("%.*s\xff", len, kind);
	pw_err *e = prep(c, "SELECT 1 FROM operations WHERE kind >= ?1 AND kind < ?2 LIMIT 1", &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		if (b.rc == SQLITE_OK)
			b.rc = sqlite3_bind_text(st, 1, kind, len, SQLITE_STATIC);
		bind_text(&b, 2, upper);
		e = bound(c, &b);
	}
	if (!e)
		e = step(c, st, &row, N_("reading operations"));
	sqlite3_finalize(st);
	free(upper);
	*absent = !e && !row;
	return e;
}

/* The targets that contain f->target, walked on the target index (schema 6)
 * one probe per distinct target (the recursive query jumps from one to the
 * next: 3 ms for 500 targets among a million operations), at most
 * TARGET_ARMS_MAX + 1 of them. *count = SIZE_MAX: no such index (an older
 * file read read-only) or no --target. */
static pw_err *matching_targets(pw_catalog *c, const pw_op_filter *f, char ***out, size_t *count)
{
	*out = NULL;
	*count = SIZE_MAX;
	if (!given(f->target) || c->version < 6)
		return NULL;
	sqlite3_stmt *st;
	pw_err *e = prep(c, "WITH RECURSIVE t(v) AS (SELECT min(target) FROM operations"
			 " UNION ALL SELECT (SELECT min(target) FROM operations WHERE target > t.v) FROM t WHERE t.v IS NOT NULL)"
			 " SELECT v FROM t WHERE v IS NOT NULL AND instr(v, ?1) > 0 LIMIT ?2", &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		bind_text(&b, 1, f->target);
		bind_int(&b, 2, TARGET_ARMS_MAX + 1);
		e = bound(c, &b);
	}
	size_t n = 0;
	char **list = xcalloc(TARGET_ARMS_MAX + 1, sizeof *list);
	for (bool row = true; !e && row && n <= TARGET_ARMS_MAX;) {
		e = step(c, st, &row, N_("reading operations"));
		if (!e && row)
			list[n++] = col_str(st, 0);
	}
	sqlite3_finalize(st);
	if (e || n > TARGET_ARMS_MAX) {
		for (size_t i = 0; i < n; i++)
			free(list[i]);
		free(list);
		return e; /* too many: the caller walks the time index */
	}
	*out = list;
	*count = n;
	return NULL;
}

static void targets_free(char **list, size_t n)
{
	for (size_t i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
}

pw_err *pw_catalog_ops_query(pw_catalog *c, const pw_op_filter *f, pw_op_list *out)
{
	static const pw_op_filter none = { 0 };
	memset(out, 0, sizeof *out);
	if (!c)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog"));
	if (!f)
		f = &none;
	bool absent = false;
	pw_err *e = prefix_absent(c, f, &absent);
	if (e || absent)
		return e;
	char **targets = NULL;
	size_t ntargets = 0;
	e = matching_targets(c, f, &targets, &ntargets);
	if (e || ntargets == 0) { /* no target contains the text: nothing to read */
		targets_free(targets, 0);
		return e;
	}
	if (ntargets == SIZE_MAX)
		ntargets = 0;
	op_query q;
	build_query(f, targets, ntargets, &q);
	sqlite3_stmt *st;
	e = prep(c, q.sql, &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		bind_query(&b, &q);
		for (size_t i = 0; i < ntargets; i++)
			bind_text(&b, q.n + 1 + (int)i, targets[i]);
		e = bound(c, &b);
	}
	if (f->cancel) /* the token is only read; SQLite's callback takes void * */
		sqlite3_progress_handler(c->db, QUERY_CHECK_EVERY, query_cancelled, (void *)(uintptr_t)f->cancel);
	if (!e)
		e = collect_ops(c, st, f, out);
	sqlite3_finalize(st);
	op_query_clear(&q);
	targets_free(targets, ntargets);
	if (f->cancel) {
		sqlite3_progress_handler(c->db, 0, NULL, NULL);
		if (pw_cancel_raised(f->cancel)) {
			pw_err_free(e);
			e = pw_err_new(PW_ERR_CANCELLED, NULL, "%s", _("reading the history was cancelled"));
		}
	}
	if (e)
		pw_op_list_clear(out);
	return e;
}

static pw_err *get_one_op(pw_catalog *c, int64_t id, pw_op_rec *op)
{
	sqlite3_stmt *st;
	bool row = false;
	pw_err *e = prep(c, SQL_OP_GET, &st);
	if (!e) {
		binder b = { st, SQLITE_OK };
		bind_int(&b, 1, id);
		e = bound(c, &b);
	}
	if (!e)
		e = step(c, st, &row, N_("reading an operation"));
	if (!e && !row)
		e = pw_err_new(PW_ERR_NOTFOUND, NULL, _("no operation %lld in catalog %s"), (long long)id, c->path);
	if (!e)
		read_op(c, st, op);
	sqlite3_finalize(st);
	return e;
}

/* The attempts of operation id through st (prepared from SQL_ATTEMPTS_GET, reset here). */
static pw_err *read_attempts(pw_catalog *c, sqlite3_stmt *st, int64_t id, pw_attempt_list *out)
{
	size_t cap = 0;
	bool row = true;
	sqlite3_reset(st);
	binder b = { st, SQLITE_OK };
	bind_int(&b, 1, id);
	pw_err *e = bound(c, &b);
	while (!e) {
		e = step(c, st, &row, N_("reading attempts"));
		if (e || !row)
			break;
		out->items = grow(out->items, out->count, &cap, sizeof *out->items);
		pw_attempt_rec *a = &out->items[out->count++];
		memset(a, 0, sizeof *a);
		read_attempt(st, a);
	}
	return e;
}

static pw_err *get_attempts(pw_catalog *c, int64_t id, pw_attempt_list *out)
{
	sqlite3_stmt *st;
	pw_err *e = prep(c, SQL_ATTEMPTS_GET, &st);
	if (!e)
		e = read_attempts(c, st, id, out);
	sqlite3_finalize(st);
	return e;
}

pw_err *pw_catalog_ops_each(pw_catalog *c, const char *since, pw_op_each_fn fn, void *ud)
{
	if (!c)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog"));
	sqlite3_stmt *ops = NULL, *att = NULL;
	pw_err *e = prep(c, "SELECT " OP_COLUMNS " FROM operations o WHERE ?1 IS NULL OR o.started_at >= ?1"
			    " ORDER BY o.started_at, o.id", &ops);
	if (!e)
		e = prep(c, SQL_ATTEMPTS_GET, &att);
	if (!e && since && *since) {
		binder b = { ops, SQLITE_OK };
		size_t n = strlen(since);
		b.rc = sqlite3_bind_text(ops, 1, since, (int)(n && since[n - 1] == 'Z' ? n - 1 : n), SQLITE_STATIC);
		e = bound(c, &b);
	}
	bool row = true;
	while (!e) {
		e = step(c, ops, &row, N_("reading operations"));
		if (e || !row)
			break;
		pw_op_rec op = { 0 };
		pw_attempt_list al = { 0 };
		read_op(c, ops, &op);
		e = read_attempts(c, att, op.id, &al);
		if (!e)
			e = fn(&op, &al, ud);
		pw_op_rec_clear(&op);
		pw_attempt_list_clear(&al);
	}
	sqlite3_finalize(ops);
	sqlite3_finalize(att);
	return e;
}

pw_err *pw_catalog_op_get(pw_catalog *c, int64_t id, pw_op_rec *op, pw_attempt_list *attempts)
{
	memset(op, 0, sizeof *op);
	if (attempts)
		memset(attempts, 0, sizeof *attempts);
	if (!c)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog"));
	/* One read transaction, so the attempts match the operation's count. */
	pw_err *e = tx_read(c);
	if (!e)
		e = get_one_op(c, id, op);
	if (!e && attempts)
		e = get_attempts(c, id, attempts);
	e = tx_end(c, e);
	if (e) {
		pw_op_rec_clear(op);
		pw_attempt_list_clear(attempts);
	}
	return e;
}

/* ---------------------------------------------------------------- freeing */

void pw_op_rec_clear(pw_op_rec *r)
{
	if (!r)
		return;
	free(r->kind);
	free(r->target);
	free(r->args);
	free(r->started_at);
	free(r->finished_at);
	free(r->outcome);
	free(r->stop_reason);
	free(r->user);
	free(r->host);
	free(r->pyward_version);
	free(r->note);
	memset(r, 0, sizeof *r);
}

void pw_op_list_clear(pw_op_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->count; i++)
		pw_op_rec_clear(&l->items[i]);
	free(l->items);
	memset(l, 0, sizeof *l);
}

static void attempt_clear(pw_attempt_rec *a)
{
	free(a->index_url);
	free(a->proxy);
	free(a->argv);
	free(a->klass);
	free(a->started_at);
	free(a->output_tail);
	memset(a, 0, sizeof *a);
}

void pw_attempt_list_clear(pw_attempt_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->count; i++)
		attempt_clear(&l->items[i]);
	free(l->items);
	memset(l, 0, sizeof *l);
}
