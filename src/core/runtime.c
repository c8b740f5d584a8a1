/*
 * The managed runtime: status, install (fetch, verify, extract, probe,
 * record, swap), verify, rollback and remove. See runtime.h for the layout.
 */
#include "config.h"

#include "runtime.h"

#include "clock.h"
#include "digest.h"
#include "durable.h"
#include "extract.h"
#include "fetch.h"
#include "i18n.h"
#include "manifest.h"
#include "paths.h"
#include "runner.h"
#include "runtime_db.h"
#include "runtime_fixup.h"
#include "stagetime.h"
#include "treefile.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define PROBE_TIMEOUT_S 60
/* Extracted CPython trees are about 3.5 times their .tar.gz. */
#define EXTRACT_RATIO 4

/* What the probe asks of the new interpreter: that it starts and is the
 * pinned version, that the modules an install needs are there (ssl,
 * sqlite3, venv, ensurepip: found, not run) and that the compiled
 * extension modules importing them loads do load on this machine (the C
 * library, OpenSSL, SQLite: what an archive for another platform fails
 * on). Importing the pure-Python modules themselves ran ~60 of them, and
 * an archive without bytecode (-B keeps the tree as hashed) compiled each
 * from source: 350-450 ms of an install, against 50-75 ms for this (most
 * of it _sqlite3 importing functools); their bytes are the pinned
 * archive's, so running them proves nothing about the machine that the
 * extension modules do not. Found by a look along sys.path, without
 * importlib (not frozen: it would be compiled too). */
static const char probe_code[] =
	"import sys, os\n"
	"def found(m):\n"
	"    return any(os.path.isfile(os.path.join(d, m + '.py')) or\n"
	"               os.path.isfile(os.path.join(d, m, '__init__.py')) for d in sys.path)\n"
	"for m in ('ssl', 'sqlite3', 'venv', 'ensurepip'):\n"
	"    if not found(m):\n"
	"        raise ModuleNotFoundError('No module named %r' % m, name=m)\n"
	"import _ssl, _sqlite3, _socket, _posixsubprocess, select, fcntl, array\n"
	"print('%d.%d.%d' % sys.version_info[:3])\n"
	"print(_ssl.OPENSSL_VERSION)\n";

/* ---------------------------------------------------------------- places */

static char *rt_dir(const char *box)
{
	return xasprintf("%s/runtime/python", box);
}

static char *rt_link(const char *box, const char *name)
{
	return xasprintf("%s/runtime/python/%s", box, name);
}

static char *rt_versions(const char *box)
{
	return xasprintf("%s/runtime/python/versions", box);
}

static char *install_name(const pw_pin *pin)
{
	return xasprintf("%s-%s-%.8s", pin->version, pin->release, pin->sha256);
}

/* The install a link (current/previous) points to, resolved; NULL when absent. */
static char *link_target(const char *box, const char *name)
{
	char *link = rt_link(box, name);
	char *real = realpath(link, NULL);
	free(link);
	return real;
}

const char *pw_runtime_state_name(pw_runtime_state s)
{
	switch (s) {
	case PW_RUNTIME_NOT_PROVISIONED: return "not-provisioned";
	case PW_RUNTIME_INSTALLED: return "installed";
	case PW_RUNTIME_BROKEN: return "broken";
	}
	return "broken";
}

/* ---------------------------------------------------------------- status */

static char *json_text(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? xstrdup(s) : NULL;
}

static pw_err *read_marker(const char *dir, pw_runtime_info *out)
{
	char *path = xasprintf("%s/%s", dir, PW_RUNTIME_MARKER);
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);
	pw_err *e = NULL;
	if (!j || !json_is_object(j)) {
		e = pw_err_new(PW_ERR_CORRUPT, NULL, _("its marker %s is missing or unreadable"), path);
	} else {
		out->version = json_text(j, "version");
		out->release = json_text(j, "release");
		out->platform = json_text(j, "platform");
		out->sha256 = json_text(j, "sha256");
		out->url = json_text(j, "url");
		out->installed_at = json_text(j, "installed_at");
		out->pins_source = json_text(j, "pins_source");
		out->pins_from_operator = json_is_true(json_object_get(j, "pins_from_operator"));
		json_t *sz = json_object_get(j, "size_on_disk");
		out->size_on_disk = json_is_integer(sz) ? json_integer_value(sz) : -1;
		if (!out->version || !out->sha256)
			e = pw_err_new(PW_ERR_CORRUPT, NULL, _("its marker %s lacks version or sha256"), path);
	}
	json_decref(j);
	free(path);
	return e;
}

static void previous_info(const char *box, pw_runtime_info *out)
{
	char *prev = link_target(box, "previous");
	if (!prev)
		return;
	pw_runtime_info p = { 0 };
	pw_err *e = read_marker(prev, &p);
	out->has_previous = e == NULL;
	if (!e)
		out->previous_version = xstrdup(p.version);
	pw_err_free(e);
	pw_runtime_info_clear(&p);
	free(prev);
}

pw_err *pw_runtime_status(const char *box_root, pw_runtime_info *out)
{
	memset(out, 0, sizeof *out);
	out->size_on_disk = -1;
	char *link = rt_link(box_root, "current");
	struct stat st;
	if (lstat(link, &st) != 0) {
		out->state = PW_RUNTIME_NOT_PROVISIONED;
		free(link);
		previous_info(box_root, out);
		return NULL;
	}
	out->path = realpath(link, NULL);
	free(link);
	if (!out->path) {
		out->state = PW_RUNTIME_BROKEN;
		out->why = xstrdup(_("the 'current' link points to an install that is gone"));
		return NULL;
	}
	out->python = xasprintf("%s/bin/python3", out->path);
	pw_err *e = read_marker(out->path, out);
	if (e) {
		out->state = PW_RUNTIME_BROKEN;
		out->why = xstrdup(pw_err_message(e));
		pw_err_free(e);
	} else if (access(out->python, X_OK) != 0) {
		out->state = PW_RUNTIME_BROKEN;
		out->why = xasprintf(_("its interpreter %s is missing or not executable"), out->python);
	} else {
		out->state = PW_RUNTIME_INSTALLED;
	}
	previous_info(box_root, out);
	return NULL;
}

void pw_runtime_info_clear(pw_runtime_info *i)
{
	char **fields[] = { &i->why, &i->path, &i->python, &i->version, &i->release, &i->platform,
			    &i->sha256, &i->url, &i->installed_at, &i->pins_source, &i->previous_version };
	for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
		free(*fields[k]);
	memset(i, 0, sizeof *i);
}

pw_err *pw_runtime_python(const char *box_root, char **python)
{
	pw_runtime_info info;
	pw_runtime_status(box_root, &info);
	pw_err *e = NULL;
	if (info.state == PW_RUNTIME_INSTALLED) {
		*python = info.python;
		info.python = NULL;
	} else if (info.state == PW_RUNTIME_BROKEN) {
		e = pw_err_new(PW_ERR_REFUSED,
			       _("reinstall it with 'pyward runtime install', or 'pyward runtime rollback'"),
			       _("the managed Python runtime is broken: %s"), info.why);
	} else {
		e = pw_err_new(PW_ERR_REFUSED, _("install it with 'pyward runtime install' or from the TUI"),
			       _("managed Python runtime not provisioned"));
	}
	pw_runtime_info_clear(&info);
	return e;
}

/* ---------------------------------------------------------------- preflight */

int64_t pw_runtime_space_needed(int64_t size)
{
	return size < 0 ? -1 : size * (1 + EXTRACT_RATIO);
}

static pw_err *check_writable(const char *box)
{
	char *dir = rt_dir(box);
	pw_err *e = pw_paths_mkdirs(dir, 0755);
	if (!e && access(dir, W_OK) != 0)
		e = pw_err_errno(PW_ERR_REFUSED, errno, _("run as a user who may write there, or pass --box-root DIR"),
				 _("the box root %s is not writable"), box);
	free(dir);
	return e;
}

static pw_err *check_space(const char *box, int64_t size)
{
	struct statvfs vfs;
	int64_t need = pw_runtime_space_needed(size);
	if (need < 0 || statvfs(box, &vfs) != 0)
		return NULL;
	int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
	if (avail >= need)
		return NULL;
	return pw_err_new(PW_ERR_IO, _("free some space or pass --box-root DIR on a larger disk"),
			  _("not enough free space in %s: %lld MB needed, %lld MB free"), box,
			  (long long)(need / 1000000), (long long)(avail / 1000000));
}

pw_err *pw_runtime_preflight(const char *box_root, const char *url, const char *archive, int64_t size)
{
	pw_err *e = check_writable(box_root);
	if (!e)
		e = check_space(box_root, size);
	/* No look-up of the host here: the download's own error names host and
	 * URL, and is recorded as the operation's attempt. */
	(void)url;
	(void)archive;
	return e;
}

/* ---------------------------------------------------------------- lock */

static pw_err *take_lock(const pw_runtime_install_opts *o, int *fd_out, bool *waited)
{
	char *path = xasprintf("%s/runtime/.lock", o->box_root);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	pw_err *e = NULL;
	if (fd < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("opening the lock %s"), path);
	*waited = false;
	while (!e && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK) {
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("locking %s"), path);
		} else if (pw_cancel_raised(o->cancel)) {
			e = pw_err_new(PW_ERR_CANCELLED, NULL, _("interrupted while waiting for another install"));
		} else if (o->deadline_ms && pw_clock_mono_ms() >= o->deadline_ms) {
			e = pw_err_new(PW_ERR_TIMEOUT, NULL, _("the time budget ran out while another install held %s"), path);
		} else {
			if (!*waited)
				pw_events_log(o->events, PW_LOG_INFO, _("another install is running; waiting for it"));
			*waited = true;
			struct timespec ts = { 0, 100 * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	if (e && fd >= 0)
		close(fd);
	free(path);
	*fd_out = e ? -1 : fd;
	return e;
}

/* ---------------------------------------------------------------- archive */

static pw_err *check_local_archive(const pw_runtime_install_opts *o)
{
	char hex[65];
	int64_t size = 0;
	pw_err *e = pw_sha256_file(o->archive, hex, &size);
	if (e)
		return pw_err_prefix(e, _("reading --archive"));
	if (strcmp(hex, o->pin->sha256) != 0)
		return pw_err_new(PW_ERR_CORRUPT, _("this file is not the pinned archive; nothing was installed"),
				  _("%s does not match the pin: expected sha256 %s, got %s"), o->archive,
				  o->pin->sha256, hex);
	return NULL;
}

static void record_download(const pw_runtime_install_opts *o, const char *klass, int code,
			    int64_t start_ms, const char *started_at, const char *detail)
{
	if (!o->catalog || !o->operation_id)
		return;
	/* The catalog is readable history: no credentials in it. */
	char *url = pw_fetch_url_shown(o->url);
	char *argv = xasprintf("download %s", url);
	const char *env_proxy = getenv("https_proxy") ? getenv("https_proxy") : getenv("HTTPS_PROXY");
	char *proxy = env_proxy ? pw_fetch_url_shown(env_proxy) : NULL;
	pw_attempt_rec a = {
		.operation_id = o->operation_id,
		.index_url = url,
		.proxy = proxy,
		.argv = argv,
		.exit_code = code,
		.klass = (char *)(uintptr_t)klass,
		.started_at = (char *)(uintptr_t)started_at,
		.duration_ms = pw_clock_mono_ms() - start_ms,
		.output_tail = (char *)(uintptr_t)detail,
	};
	pw_err_free(pw_catalog_attempt_add(o->catalog, &a));
	free(argv);
	free(proxy);
	free(url);
}

static const char *error_class(const pw_err *e)
{
	switch (pw_err_code(e)) {
	case PW_ERR_NETWORK: return "network";
	case PW_ERR_CORRUPT: return "hash-mismatch";
	case PW_ERR_TIMEOUT: return "timeout";
	case PW_ERR_CANCELLED: return "cancelled";
	case PW_ERR_IO: return "disk";
	default: return "failed";
	}
}

static char *cache_path(const pw_runtime_install_opts *o)
{
	return xasprintf("%s/cache/downloads/%s.tar.gz", o->box_root, o->pin->sha256);
}

/* Fetch the pinned archive to dest (the cache), recording the attempt;
 * what pw_fetch said goes to *out when given. */
static pw_err *download(const pw_runtime_install_opts *o, const char *dest, pw_runtime_install_result *r,
			pw_fetch_result *out)
{
	char *cache = xasprintf("%s/cache/downloads", o->box_root);
	pw_err *e = pw_paths_mkdirs(cache, 0755);
	free(cache);
	if (e)
		return e;
	char started[40];
	pw_clock_iso_now(started, sizeof started);
	int64_t t0 = pw_clock_mono_ms();
	pw_fetch_opts fo = { .url = o->url, .dest = dest, .expected_sha256 = o->pin->sha256,
			     .ca_file = o->ca_file, .deadline_ms = o->deadline_ms, .cancel = o->cancel,
			     .events = o->events };
	pw_fetch_result fr;
	memset(&fr, 0, sizeof fr);
	pw_stage_mark("download: start");
	e = pw_fetch(&fo, &fr);
	pw_stage_mark("download: done, digest checked");
	if (out)
		*out = fr;
	r->resumed_from = fr.resumed_from;
	r->download_bytes = fr.bytes - fr.resumed_from;
	r->reused_cache = !e && fr.bytes > 0 && fr.resumed_from == fr.bytes;
	if (!r->reused_cache) {
		/* The pin travels with the record, so the history says what was asked for. */
		char *detail = xasprintf(_("pinned sha256 %s%s%s"), o->pin->sha256, e ? "; " : "",
					 e ? pw_err_message(e) : "");
		record_download(o, e ? error_class(e) : "ok", e ? 1 : 0, t0, started, detail);
		free(detail);
	}
	return e;
}

/* ---------------------------------------------------------------- extract */

static pw_err *clean_staging(const char *versions)
{
	DIR *d = opendir(versions);
	if (!d)
		return NULL;
	struct dirent *de;
	pw_err *e = NULL;
	while (!e && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, ".staging-", 9) != 0)
			continue;
		char *p = xasprintf("%s/%s", versions, de->d_name);
		e = pw_extract_remove_tree(p);
		free(p);
	}
	closedir(d);
	return e;
}

/* Extract into a fresh staging folder, then move its python/ to versions/NAME. */
/* Keep the entries under python/, renamed relative to the install root. */
static void rebase_manifest(pw_manifest *m)
{
	size_t kept = 0;
	m->total_bytes = 0;
	for (size_t i = 0; i < m->count; i++) {
		pw_manifest_entry *f = &m->items[i];
		if (strncmp(f->path, "python/", 7) != 0) {
			free(f->path);
			continue;
		}
		memmove(f->path, f->path + 7, strlen(f->path + 7) + 1);
		if (S_ISREG(f->mode))
			m->total_bytes += f->size;
		m->items[kept++] = *f;
	}
	m->count = kept;
}

typedef struct stream stream;

static ssize_t stream_read(void *ud, void *buf, size_t len);

/* The extractor ran out of space: say so in plain words, with where and
 * what to do; the staging folder is already gone and current untouched. */
static pw_err *disk_full(const pw_runtime_install_opts *o, const char *versions, pw_err *e)
{
	int64_t need = o->pin->size > 0 ? o->pin->size * EXTRACT_RATIO : -1;
	char *amount = need > 0 ? xasprintf(_("about %lld MB"), (long long)(need / 1000000)) : xstrdup(_("some"));
	char *hint = o->archive
		? xasprintf(_("free %s on the file system holding %s (see df -h %s) and run "
			      "`pyward runtime install` again"), amount, versions, versions)
		: xasprintf(_("free %s on the file system holding %s (see df -h %s) and run "
			      "`pyward runtime install` again; the verified archive stays in "
			      "%s/cache/downloads, so nothing is downloaded again"),
			    amount, versions, versions, o->box_root);
	pw_err *full = pw_err_new(PW_ERR_IO, hint,
				  _("disk full: no space left in %s to unpack the runtime; nothing was "
				    "installed and the current runtime was not changed (%s)"),
				  versions, pw_err_message(e));
	pw_err_free(e);
	free(hint);
	free(amount);
	return full;
}

static pw_err *unpack(const pw_runtime_install_opts *o, const char *archive, const char *target,
		      pw_runtime_install_result *r, pw_manifest *m, stream *from, bool *full)
{
	char *versions = rt_versions(o->box_root);
	char *staging = xasprintf("%s/.staging-%ld", versions, (long)getpid());
	pw_err *e = clean_staging(versions);
	/* The manifest is hashed as the files are written: no second pass. */
	pw_extract_opts xo = { .archive = archive, .dest = staging, .cancel = o->cancel,
			       .events = from ? NULL : o->events, .manifest = m,
			       .read = from ? stream_read : NULL, .read_ud = from, .stream_size = o->pin->size,
			       /* python/ becomes versions/NAME: links are judged from there */
			       .root = "python",
			       /* each file and folder flushed by the extractor (see flush_tree) */
			       .flush = true };
	pw_extract_result xr = { 0 };
	if (!e) {
		e = pw_extract(&xo, &xr);
		if (e && xr.disk_full)
			e = disk_full(o, versions, e);
		if (full)
			*full = xr.disk_full;
	}
	char *top = xasprintf("%s/python", staging);
	struct stat st;
	if (!e && (lstat(top, &st) != 0 || !S_ISDIR(st.st_mode)))
		e = pw_err_new(PW_ERR_CORRUPT, _("an install_only archive unpacks to a top-level python/ folder"),
			       _("the archive has no top-level python/ folder"));
	if (!e && lstat(target, &st) == 0)
		e = pw_extract_remove_tree(target);
	if (!e && rename(top, target) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("moving the install into %s"), target);
	r->files = xr.entries;
	if (!e)
		rebase_manifest(m);
	pw_err_free(pw_extract_remove_tree(staging));
	free(top);
	free(staging);
	free(versions);
	return e;
}

/* ---------------------------------------------------------------- stream */

/*
 * Download and extraction overlap: a worker extracts from DEST.part while
 * the download appends to it, so the archive is read once as it arrives.
 * Nothing of it is used before its hash matched: the staging tree is
 * private, and probe and swap run only after the download verified. When
 * anything about the stream goes wrong (the server ignored Range and the
 * file restarted, the file was renamed before we opened it), the verified
 * archive is simply extracted again from disk. The tree must come from
 * exactly the verified bytes, not from a stream a server spliced. The .part is
 * only ever appended to, by the download alone (under the install lock),
 * except when the download empties it to start again (a server that
 * ignored Range); so when the extractor read it from byte zero to its
 * verified end and the download never started again, the bytes fed are
 * the bytes the download hashed, and one SHA256 pass (the download's)
 * checks both. Otherwise the verified file is extracted again.
 */
struct stream {
	const pw_runtime_install_opts *o;
	char *part;
	int fd;
	int64_t offset;   /* bytes handed to the extractor, read in order from 0 */
	pthread_mutex_t mu;
	bool fetch_done;
	bool fetch_failed;
	/* worker inputs and outputs */
	const char *archive, *target;
	pw_runtime_install_result *r;
	pw_manifest *m;
	pw_err *err;
	bool disk_full;   /* err was the disk filling up, not the stream */
};

static void stream_status(stream *s, bool *done, bool *failed)
{
	pthread_mutex_lock(&s->mu);
	*done = s->fetch_done;
	*failed = s->fetch_failed;
	pthread_mutex_unlock(&s->mu);
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

/* Wait for DEST.part to exist; false when the download ended first. */
static bool stream_open(stream *s)
{
	while (s->fd < 0) {
		bool done, failed;
		stream_status(s, &done, &failed);
		s->fd = open(s->part, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (s->fd >= 0)
			break;
		if (done || pw_cancel_raised(s->o->cancel))
			return false;
		nap_ms(2);
	}
	return true;
}

static ssize_t stream_read(void *ud, void *buf, size_t len)
{
	stream *s = ud;
	if (!stream_open(s))
		return -1;
	for (;;) {
		bool done, failed;
		stream_status(s, &done, &failed);
		ssize_t n = pread(s->fd, buf, len, s->offset);
		if (n > 0) {
			s->offset += n;
			return n;
		}
		struct stat st;
		if (n < 0 || failed || pw_cancel_raised(s->o->cancel) || fstat(s->fd, &st) != 0 ||
		    st.st_size < s->offset)
			return -1; /* the file restarted or the download failed */
		if (done)
			return 0;
		nap_ms(2);
	}
}

/* Read what the extractor left (the end-of-archive padding): the stream
 * covered the whole verified file, which the download (fr, digest already
 * matched) never emptied to start again (see above). */
static bool stream_was_verified(stream *s, const pw_fetch_result *fr)
{
	char buf[64 * 1024];
	ssize_t n;
	while ((n = stream_read(s, buf, sizeof buf)) > 0)
		;
	return n == 0 && fr->restarts == 0 && s->offset == fr->bytes;
}

static void *stream_worker(void *ud)
{
	stream *s = ud;
	s->err = unpack(s->o, s->archive, s->target, s->r, s->m, s, &s->disk_full);
	pw_stage_mark("extract: python/ moved into versions/, staging removed");
	return NULL;
}

static pw_err *download_and_unpack(const pw_runtime_install_opts *o, const char *dest, const char *target,
				   pw_runtime_install_result *r, pw_manifest *m)
{
	stream s = { .o = o, .part = xasprintf("%s.part", dest), .fd = -1, .archive = dest, .target = target,
		     .r = r, .m = m };
	pthread_mutex_init(&s.mu, NULL);
	pthread_t worker;
	bool started = pthread_create(&worker, NULL, stream_worker, &s) == 0;
	pw_fetch_result fr = { 0 };
	pw_err *e = download(o, dest, r, &fr);
	pthread_mutex_lock(&s.mu);
	s.fetch_done = true;
	s.fetch_failed = e != NULL;
	pthread_mutex_unlock(&s.mu);
	if (started)
		pthread_join(worker, NULL);
	pw_stage_mark("download and extraction joined");
	if (!e && s.disk_full) {
		/* unpacking again would only fill the disk again */
		e = s.err;
		s.err = NULL;
	} else if (!e && (!started || s.err || !stream_was_verified(&s, &fr))) {
		pw_err_free(s.err);
		s.err = NULL;
		pw_manifest_clear(m);
		pw_err_free(pw_extract_remove_tree(target));
		e = unpack(o, dest, target, r, m, NULL, NULL);
	}
	pw_stage_mark("stream verified");
	pw_err_free(s.err);
	if (s.fd >= 0)
		close(s.fd);
	pthread_mutex_destroy(&s.mu);
	free(s.part);
	return e;
}

/* ---------------------------------------------------------------- probe */

static pw_err *probe(const pw_runtime_install_opts *o, const char *root)
{
	char *python = xasprintf("%s/bin/python3", root);
	/* -B: the probe must not add bytecode caches to the tree just hashed. */
	const char *argv[] = { python, "-I", "-B", "-c", probe_code, NULL };
	pw_run_opts ro = { .argv = argv, .cwd = root, .deadline_ms = pw_clock_deadline_after(PROBE_TIMEOUT_S),
			   .cancel = o->cancel, .cap_bytes = 64 * 1024 };
	pw_run_result *res = NULL;
	pw_err *e = pw_run(&ro, &res);
	/* Stopped by the cancel token (Ctrl-C, DELETE /api/jobs/ID, a server
	 * stopping): the install was cancelled, the interpreter did not fail. */
	if (!e && pw_run_result_status(res) == PW_RUN_CANCELLED)
		e = pw_err_new(PW_ERR_CANCELLED, NULL, _("the install was cancelled while the new interpreter was probed"));
	if (!e && (pw_run_result_status(res) != PW_RUN_EXITED || pw_run_result_exit_code(res) != 0))
		e = pw_err_new(PW_ERR_FAILED, _("the archive may be for another platform or damaged"),
			       _("the new interpreter failed its probe (%s): %s"), pw_run_result_describe(res),
			       pw_run_result_output(res, PW_STREAM_STDERR));
	if (!e) {
		const char *out = pw_run_result_output(res, PW_STREAM_STDOUT);
		size_t vlen = strcspn(out, "\n");
		if (vlen != strlen(o->pin->version) || strncmp(out, o->pin->version, vlen) != 0)
			e = pw_err_new(PW_ERR_FAILED, _("the pins table and the archive disagree"),
				       _("the new interpreter is Python %.*s, the pin says %s"), (int)vlen, out,
				       o->pin->version);
	}
	pw_run_result_free(&res);
	free(python);
	return e;
}

/* The probe on its own thread, so that the fix-up and the catalog rows are
 * written while the interpreter starts (its imports are most of an
 * install's fixed cost). The fix-up rewrites files the probe never reads
 * (sysconfig data, the Makefile, EXTERNALLY-MANAGED: site with -I imports
 * no sysconfig), each replaced whole by a rename. */
struct probe_job {
	const pw_runtime_install_opts *o;
	const char *root;
	pw_err *err;
	pthread_t thread;
	bool threaded;
};

static void *probe_worker(void *ud)
{
	struct probe_job *j = ud;
	pw_stage_mark("probe: start");
	j->err = probe(j->o, j->root);
	pw_stage_mark("probe: done");
	return NULL;
}

static void probe_start(struct probe_job *j, const pw_runtime_install_opts *o, const char *root)
{
	*j = (struct probe_job){ .o = o, .root = root };
	pw_progress p = { .stage = "probe", .done = 0, .total = -1, .eta_seconds = -1 };
	pw_events_progress(o->events, &p);
	j->threaded = pthread_create(&j->thread, NULL, probe_worker, j) == 0;
	if (!j->threaded)
		j->err = probe(o, root);
}

/* The probe's outcome, once it is over. */
static pw_err *probe_join(struct probe_job *j)
{
	if (j->threaded)
		pthread_join(j->thread, NULL);
	j->threaded = false;
	pw_err *e = j->err;
	j->err = NULL;
	return e;
}

/* ---------------------------------------------------------------- record */

/* Where the install came from, as it may be shown and recorded. */
static char *source_shown(const pw_runtime_install_opts *o)
{
	return o->archive ? xstrdup(o->archive) : pw_fetch_url_shown(o->url);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const pw_manifest_entry *)a)->path, ((const pw_manifest_entry *)b)->path);
}

/* Add a file pyward wrote from text to the manifest (kept sorted). */
static void manifest_add_text(pw_manifest *m, const char *rel, const char *text, mode_t mode)
{
	pw_manifest_entry f = { .path = xstrdup(rel), .size = (int64_t)strlen(text), .mode = S_IFREG | mode };
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, text, strlen(text));
	pw_sha256_final_hex(h, f.sha256);
	pw_sha256_free(&h);
	m->items = xrealloc(m->items, (m->count + 1) * sizeof *m->items);
	m->items[m->count++] = f;
	m->total_bytes += f.size;
	qsort(m->items, m->count, sizeof *m->items, by_path);
}

/* The marker is created, never opened: an archive that brought a file or a
 * link by that name (aimed at another install) is refused, and nothing is
 * written through it. It goes into the manifest as written. */
static pw_err *write_marker(const pw_runtime_install_opts *o, const char *root, int64_t size_on_disk,
			    pw_manifest *m)
{
	char now[40];
	pw_clock_iso_now(now, sizeof now);
	char *from = source_shown(o);
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:I}", "version", o->pin->version,
			      "release", o->pin->release, "platform", o->pin->platform, "sha256", o->pin->sha256,
			      "url", from, "installed_at", now,
			      "pins_source", o->pins_source ? o->pins_source : "", "pins_from_operator",
			      o->pins_from_operator, "size_on_disk", (json_int_t)size_on_disk);
	free(from);
	char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	if (!text)
		return pw_err_new(PW_ERR_FAILED, NULL, _("cannot format the marker %s"), PW_RUNTIME_MARKER);
	pw_err *e = pw_treefile_create(root, PW_RUNTIME_MARKER, text, strlen(text), 0644);
	if (!e)
		manifest_add_text(m, PW_RUNTIME_MARKER, text, 0644);
	free(text);
	return e;
}

/* Write the marker and the catalog rows; the transaction stays open until
 * record_end(), after the probe. */
static pw_err *record_begin(const pw_runtime_install_opts *o, const char *root, pw_manifest *m,
			    pw_runtime_install_result *r, bool *open)
{
	*open = false;
	r->bytes_on_disk = m->total_bytes;
	pw_err *e = write_marker(o, root, r->bytes_on_disk, m);
	char *source = xasprintf("%s:%s", o->pins_from_operator ? "operator" : "builtin",
				 o->pins_source ? o->pins_source : "");
	char *from = source_shown(o);
	if (!e && o->catalog) {
		e = pw_runtime_db_record_begin(o->catalog, o->pin, from, source, root, m);
		*open = !e;
	}
	free(from);
	r->files = (int64_t)m->count;
	free(source);
	return e;
}

/* The tree and its marker on disk before a committed row or a link names
 * it (with delayed allocation a power cut would otherwise leave current
 * pointing at empty files). Every file was flushed as it was written (the
 * extractor's writer threads fdatasync each, and fsync every folder; the
 * marker and the fixed-up files through treefile, which does the same), so
 * what is left is the folder that python/ was renamed into. Cheaper than
 * one syncfs, which also waits for every other writer's dirty data on the
 * file system (DESIGN.md has the figures). */
static pw_err *flush_tree(const char *root)
{
	char *versions = xstrdup(root);
	char *slash = strrchr(versions, '/');
	if (slash)
		*slash = '\0';
	pw_err *f = pw_durable_sync_dir(versions);
	free(versions);
	if (!f)
		return NULL;
	pw_err *e = pw_err_new(PW_ERR_IO, pw_err_hint(f),
			       _("the new runtime could not be flushed to disk, so it was not swapped in and "
				 "the current runtime was not changed (%s)"),
			       pw_err_message(f));
	pw_err_free(f);
	return e;
}

/* Record the new interpreter while the probe (started) runs; the rows are
 * committed only when both succeeded. A failed probe is the error shown. */
static pw_err *probe_and_record(const pw_runtime_install_opts *o, const char *root, pw_manifest *m,
				pw_runtime_install_result *r, struct probe_job *job)
{
	bool open;
	pw_err *e = record_begin(o, root, m, r, &open);
	pw_stage_mark("record: marker written, manifest rows inserted");
	if (!e)
		e = flush_tree(root);
	pw_stage_mark("flush: versions/ fsynced");
	pw_err *pe = probe_join(job);
	pw_stage_mark("probe joined");
	if (pe) {
		pw_err_free(e);
		e = pe;
	}
	if (open) {
		pw_err *end = pw_runtime_db_record_end(o->catalog, !e);
		if (!e)
			e = end;
		else
			pw_err_free(end);
	}
	pw_stage_mark("record: committed");
	return e;
}

/* ---------------------------------------------------------------- swap */

/* Point BOX/runtime/python/NAME at versions/TARGET_NAME atomically. */
static pw_err *set_link(const char *box, const char *name, const char *target_name)
{
	char *link = rt_link(box, name);
	char *tmp = xasprintf("%s.tmp-%ld", link, (long)getpid());
	char *rel = xasprintf("versions/%s", target_name);
	unlink(tmp);
	pw_err *e = NULL;
	if (symlink(rel, tmp) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("creating %s"), tmp);
	else if (rename(tmp, link) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("replacing %s"), link);
	if (e)
		unlink(tmp);
	free(rel);
	free(tmp);
	free(link);
	return e;
}

/* The renamed links on disk before the catalog says they changed. */
static pw_err *sync_links(const char *box)
{
	char *dir = rt_dir(box);
	pw_err *e = pw_durable_sync_dir(dir);
	free(dir);
	return e;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Remove installs that neither current nor previous points to. */
static void collect_garbage(const char *box)
{
	char *versions = rt_versions(box);
	char *cur = link_target(box, "current"), *prev = link_target(box, "previous");
	DIR *d = opendir(versions);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' && (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0))
			continue;
		if ((cur && strcmp(base_name(cur), de->d_name) == 0) ||
		    (prev && strcmp(base_name(prev), de->d_name) == 0))
			continue;
		char *p = xasprintf("%s/%s", versions, de->d_name);
		pw_err_free(pw_extract_remove_tree(p));
		free(p);
	}
	if (d)
		closedir(d);
	free(cur);
	free(prev);
	free(versions);
}

static pw_err *swap_in(const pw_runtime_install_opts *o, const char *name, const char *root)
{
	pw_progress p = { .stage = "swap", .done = 0, .total = -1, .eta_seconds = -1 };
	pw_events_progress(o->events, &p);
	char *old = link_target(o->box_root, "current");
	pw_err *e = NULL;
	/* previous first: at every instant current is the old or the new install. */
	if (old && strcmp(base_name(old), name) != 0)
		e = set_link(o->box_root, "previous", base_name(old));
	if (!e)
		e = set_link(o->box_root, "current", name);
	pw_stage_mark("swap: links renamed");
	if (!e)
		e = sync_links(o->box_root);
	pw_stage_mark("swap: links' folder fsynced");
	if (!e && o->catalog) {
		char *prev = link_target(o->box_root, "previous");
		e = pw_runtime_db_set_current(o->catalog, root, prev);
		free(prev);
	}
	pw_stage_mark("swap: catalog current row committed");
	free(old);
	if (!e)
		collect_garbage(o->box_root);
	pw_stage_mark("swap: old installs collected");
	return e;
}

/* ---------------------------------------------------------------- install */

static bool already_current(const pw_runtime_install_opts *o)
{
	pw_runtime_info info;
	pw_runtime_status(o->box_root, &info);
	bool same = info.state == PW_RUNTIME_INSTALLED && info.sha256 && strcmp(info.sha256, o->pin->sha256) == 0;
	pw_runtime_info_clear(&info);
	return same;
}

/* Get the verified archive and the extracted tree at root. */
static pw_err *obtain(const pw_runtime_install_opts *o, const char *root, pw_runtime_install_result *r,
		      pw_manifest *m)
{
	if (o->archive) {
		pw_err *e = check_local_archive(o);
		return e ? e : unpack(o, o->archive, root, r, m, NULL, NULL);
	}
	char *cached = cache_path(o);
	pw_err *e = NULL;
	if (access(cached, F_OK) == 0) {
		e = download(o, cached, r, NULL); /* re-checks the cached file's hash */
		if (!e)
			e = unpack(o, cached, root, r, m, NULL, NULL);
	} else {
		e = download_and_unpack(o, cached, root, r, m);
	}
	free(cached);
	return e;
}

static pw_err *install_locked(const pw_runtime_install_opts *o, pw_runtime_install_result *r)
{
	char *name = install_name(o->pin);
	char *versions = rt_versions(o->box_root);
	char *root = xasprintf("%s/%s", versions, name);
	pw_manifest m = { 0 };
	pw_err *e = pw_paths_mkdirs(versions, 0755);
	if (!e)
		e = obtain(o, root, r, &m);
	pw_stage_mark("install: tree in versions/");
	struct probe_job job = { 0 };
	if (!e)
		probe_start(&job, o, root);
	/* upstream's /install prefix and PEP 668, while the probe runs */
	if (!e)
		e = pw_runtime_fixup(root, o->pin->version, &m, NULL);
	pw_stage_mark("fixup: sysconfig rewritten, EXTERNALLY-MANAGED written");
	if (!e)
		e = probe_and_record(o, root, &m, r, &job);
	else
		pw_err_free(probe_join(&job));
	pw_manifest_clear(&m);
	if (!e)
		e = swap_in(o, name, root);
	if (e) {
		/* Never leave a half-made install behind; current was not touched. */
		char *cur = link_target(o->box_root, "current"), *prev = link_target(o->box_root, "previous");
		bool live = (cur && strcmp(cur, root) == 0) || (prev && strcmp(prev, root) == 0);
		if (!live)
			pw_err_free(pw_extract_remove_tree(root));
		free(cur);
		free(prev);
	} else {
		r->path = xstrdup(root);
	}
	free(root);
	free(versions);
	free(name);
	return e;
}

pw_err *pw_runtime_install(const pw_runtime_install_opts *o, pw_runtime_install_result *r)
{
	memset(r, 0, sizeof *r);
	pw_err *e = check_writable(o->box_root);
	int lock = -1;
	if (!e)
		e = take_lock(o, &lock, &r->waited_for_lock);
	pw_stage_mark("install: locked");
	if (e)
		return e;
	if (already_current(o)) {
		r->already_current = true;
		r->path = link_target(o->box_root, "current");
	} else {
		e = install_locked(o, r);
	}
	close(lock);
	return e;
}

void pw_runtime_install_result_clear(pw_runtime_install_result *r)
{
	free(r->path);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- verify */

/* Python writes .pyc files into __pycache__ beside what it imports; new ones are
 * caches, not changes (a recorded one that changed is still reported). */
static bool is_bytecode_cache(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && strcmp(path + n - 4, ".pyc") == 0 &&
	       (strncmp(path, "__pycache__/", 12) == 0 || strstr(path, "/__pycache__/") != NULL);
}

/* rpm -V's line: nine flags, two spaces, the attribute marker (none), a
 * space, the path; "missing" in place of the flags. Unexpected files, which
 * rpm -V does not look for, get a word of their own. */
static void add_line(pw_runtime_verify_result *r, const pw_manifest_diff *d, const char *root)
{
	r->lines = xrealloc(r->lines, (r->line_count + 1) * sizeof *r->lines);
	r->rpm_lines = xrealloc(r->rpm_lines, (r->line_count + 1) * sizeof *r->rpm_lines);
	r->rpm_lines[r->line_count] = d->kind == PW_DIFF_MISSING ? xasprintf("missing     %s/%s", root, d->path)
		: d->kind == PW_DIFF_UNEXPECTED ? xasprintf("unexpected  %s/%s", root, d->path)
		: xasprintf("%s    %s/%s", d->rpm_flags, root, d->path);
	r->lines[r->line_count++] = xasprintf("%-10s %s", pw_manifest_diff_name(d->kind), d->path);
}

pw_err *pw_runtime_verify(const char *box_root, pw_catalog *cat, pw_runtime_verify_result *r)
{
	memset(r, 0, sizeof *r);
	char *path = NULL;
	pw_err *e = pw_runtime_python(box_root, &path);
	free(path);
	if (e)
		return e;
	char *root = link_target(box_root, "current");
	pw_manifest m = { 0 };
	pw_manifest_diffs d = { 0 };
	e = pw_runtime_db_manifest(cat, root, &m);
	if (!e)
		e = pw_manifest_compare(&m, root, &d);
	r->files_checked = (int64_t)m.count;
	for (size_t i = 0; !e && i < d.count; i++) {
		pw_manifest_diff_kind k = d.items[i].kind;
		if (k == PW_DIFF_UNEXPECTED && is_bytecode_cache(d.items[i].path)) {
			r->caches_ignored++;
			continue;
		}
		*(k == PW_DIFF_MODIFIED ? &r->modified : k == PW_DIFF_MODE ? &r->mode
			: k == PW_DIFF_MISSING ? &r->missing : &r->unexpected) += 1;
		add_line(r, &d.items[i], root);
	}
	pw_manifest_diffs_clear(&d);
	pw_manifest_clear(&m);
	free(root);
	return e;
}

void pw_runtime_verify_result_clear(pw_runtime_verify_result *r)
{
	for (size_t i = 0; i < r->line_count; i++) {
		free(r->lines[i]);
		free(r->rpm_lines ? r->rpm_lines[i] : NULL);
	}
	free(r->lines);
	free(r->rpm_lines);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- changes */

pw_err *pw_runtime_snapshot(const char *box_root, pw_manifest *before)
{
	memset(before, 0, sizeof *before);
	char *python = NULL;
	pw_err *e = pw_runtime_python(box_root, &python);
	free(python);
	if (e)
		return e;
	char *root = link_target(box_root, "current");
	e = pw_manifest_build(root, before);
	free(root);
	return e;
}

static bool same_entry(const pw_manifest_entry *a, const pw_manifest_entry *b)
{
	return a->size == b->size && a->mode == b->mode && strcmp(a->sha256, b->sha256) == 0;
}

/* Walk both sorted manifests: what after has new or different goes into
 * set, what it lost into gone. */
static void diff_trees(const pw_manifest *before, const pw_manifest *after, pw_manifest *set,
		       const char ***gone, pw_runtime_changes *n)
{
	size_t i = 0, j = 0, ngone = 0;
	set->items = xcalloc(after->count + 1, sizeof *set->items);
	*gone = xcalloc(before->count + 1, sizeof **gone);
	while (i < before->count || j < after->count) {
		int c = i == before->count ? 1 : j == after->count ? -1
			: strcmp(before->items[i].path, after->items[j].path);
		if (c < 0) {
			(*gone)[ngone++] = before->items[i++].path;
			n->removed++;
		} else if (c > 0 || !same_entry(&before->items[i], &after->items[j])) {
			const pw_manifest_entry *f = &after->items[j++];
			if (c > 0 && is_bytecode_cache(f->path))
				continue;
			set->items[set->count] = *f;
			set->items[set->count++].path = xstrdup(f->path);
			*(c > 0 ? &n->added : &n->changed) += 1;
			i += c == 0;
		} else {
			i++;
			j++;
		}
	}
}

pw_err *pw_runtime_record_changes(const char *box_root, pw_catalog *cat, const pw_manifest *before,
				  pw_runtime_changes *out)
{
	memset(out, 0, sizeof *out);
	char *root = link_target(box_root, "current");
	if (!root)
		return pw_err_new(PW_ERR_NOTFOUND, NULL, "%s", _("the managed runtime is no longer installed"));
	pw_manifest after = { 0 }, set = { 0 };
	const char **gone = NULL;
	pw_err *e = pw_manifest_build(root, &after);
	if (!e) {
		diff_trees(before, &after, &set, &gone, out);
		if (set.count || out->removed)
			e = pw_runtime_db_amend(cat, root, &set, gone, out->removed);
	}
	if (e)
		memset(out, 0, sizeof *out);
	free(gone);
	pw_manifest_clear(&set);
	pw_manifest_clear(&after);
	free(root);
	return e;
}

/* ---------------------------------------------------------------- rollback, remove */

static pw_err *lock_box(const char *box, int *fd)
{
	pw_runtime_install_opts o = { .box_root = box };
	bool waited;
	pw_err *e = check_writable(box);
	return e ? e : take_lock(&o, fd, &waited);
}

pw_err *pw_runtime_rollback(const char *box_root, pw_catalog *cat, char **now_version)
{
	int fd = -1;
	pw_err *e = lock_box(box_root, &fd);
	if (e)
		return e;
	char *cur = link_target(box_root, "current"), *prev = link_target(box_root, "previous");
	if (!prev)
		e = pw_err_new(PW_ERR_NOTFOUND, _("a rollback needs an earlier install; there is none"),
			       _("no previous runtime to roll back to"));
	if (!e)
		e = set_link(box_root, "current", base_name(prev));
	if (!e && cur)
		e = set_link(box_root, "previous", base_name(cur));
	if (!e)
		e = sync_links(box_root);
	if (!e && cat)
		e = pw_runtime_db_set_current(cat, prev, cur);
	if (!e) {
		pw_runtime_info info;
		pw_runtime_status(box_root, &info);
		*now_version = info.version ? xstrdup(info.version) : xstrdup("?");
		pw_runtime_info_clear(&info);
	}
	free(cur);
	free(prev);
	close(fd);
	return e;
}

pw_err *pw_runtime_remove(const char *box_root, pw_catalog *cat, int64_t *removed)
{
	int fd = -1;
	pw_err *e = lock_box(box_root, &fd);
	if (e)
		return e;
	*removed = 0;
	const char *links[] = { "current", "previous" };
	for (size_t i = 0; i < 2; i++) {
		char *target = link_target(box_root, links[i]);
		char *link = rt_link(box_root, links[i]);
		if (unlink(link) == 0)
			(*removed)++;
		if (target && cat)
			pw_err_free(pw_runtime_db_mark_removed(cat, target));
		free(link);
		free(target);
	}
	if (*removed)
		e = sync_links(box_root);
	char *versions = rt_versions(box_root);
	if (!e)
		e = pw_extract_remove_tree(versions);
	free(versions);
	close(fd);
	return e;
}
