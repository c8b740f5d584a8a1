/*
 * Settings files. The set of keys is fixed, so values live in an array
 * indexed by key; a file is parsed into a scratch set first and merged only
 * when every line is good, so a bad file never half-applies.
 */
#include "config.h"

#include "settings.h"
#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Larger than any sane settings file; stops a mistaken path (a log, a
 * device) from being slurped into memory. */
#define SETTINGS_MAX_BYTES (1024 * 1024)

static const char *const known_keys[] = {
	"box_root", "runtime_mirror", "ca_bundle", "index_url", "mirrors",
	"proxy", "proxy_ports", "timeout", "mode", "python_idle_timeout", "python_max_workers",
	"audit_log", "audit_syslog_socket", "baseline",
};
#define NKEYS (sizeof known_keys / sizeof known_keys[0])

static const char known_keys_hint[] = N_("known keys: box_root, runtime_mirror, "
	"ca_bundle, index_url, mirrors, proxy, proxy_ports, timeout, mode, python_idle_timeout, "
	"python_max_workers, audit_log, audit_syslog_socket, baseline");

struct entry {
	char *value;
	char *origin;   /* "FILE:LINE" */
};

struct pw_settings {
	struct entry e[NKEYS];
};

/* A line being parsed, for error messages. */
struct where {
	const char *name;
	size_t line;
};

pw_settings *pw_settings_new(void)
{
	return xcalloc(1, sizeof(pw_settings));
}

static void entry_clear(struct entry *e)
{
	free(e->value);
	free(e->origin);
	e->value = NULL;
	e->origin = NULL;
}

void pw_settings_free(pw_settings **s)
{
	if (!s || !*s)
		return;
	for (size_t i = 0; i < NKEYS; i++)
		entry_clear(&(*s)->e[i]);
	free(*s);
	*s = NULL;
}

static int key_index(const char *key)
{
	for (size_t i = 0; key && i < NKEYS; i++)
		if (strcmp(known_keys[i], key) == 0)
			return (int)i;
	return -1;
}

bool pw_settings_key_known(const char *key)
{
	return key_index(key) >= 0;
}

const char *pw_settings_get(const pw_settings *s, const char *key)
{
	int i = key_index(key);
	return s && i >= 0 ? s->e[i].value : NULL;
}

const char *pw_settings_origin(const pw_settings *s, const char *key)
{
	int i = key_index(key);
	return s && i >= 0 ? s->e[i].origin : NULL;
}

/* Move every key set in src into dst, replacing what dst had. */
static void settings_merge(pw_settings *dst, pw_settings *src)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (!src->e[i].value)
			continue;
		entry_clear(&dst->e[i]);
		dst->e[i] = src->e[i];
		src->e[i].value = NULL;
		src->e[i].origin = NULL;
	}
}

/* ---------------------------------------------------------------- values */

/* Seconds: digits with an optional fraction, not zero. Checked by hand
 * rather than with strtod, which accepts "inf", "nan" and hex and reads
 * the decimal point from the locale. */
static bool valid_seconds(const char *v)
{
	size_t digits = 0, dots = 0;
	bool nonzero = false;
	for (const char *p = v; *p; p++) {
		if (*p == '.' && dots++ == 0)
			continue;
		if (*p < '0' || *p > '9')
			return false;
		digits++;
		nonzero = nonzero || *p != '0';
	}
	return digits > 0 && nonzero;
}

static bool valid_workers(const char *v)
{
	long n = 0;
	if (!*v)
		return false;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		n = n * 10 + (*p - '0');
		if (n > 64)
			return false;
	}
	return n >= 1;
}

static bool valid_mode(const char *v)
{
	return strcmp(v, "read-only") == 0 || strcmp(v, "workspace-write") == 0 ||
	       strcmp(v, "full-access") == 0;
}

static bool valid_audit_log(const char *v)
{
	return strcmp(v, "journal") == 0 || strcmp(v, "syslog") == 0 || strcmp(v, "none") == 0 ||
	       strcmp(v, "journal-or-syslog") == 0;
}

/* Check the value of a key whose type is known; NULL when fine. */
static pw_err *check_value(const struct where *w, const char *key, const char *v)
{
	if ((strcmp(key, "timeout") == 0 || strcmp(key, "python_idle_timeout") == 0) &&
	    !valid_seconds(v))
		return pw_err_new(PW_ERR_USAGE, _("write a number of seconds, e.g. 30 or 2.5"),
			_("%s:%zu: %s must be a positive number of seconds, not \"%s\""),
			w->name, w->line, key, v);
	if (strcmp(key, "python_max_workers") == 0 && !valid_workers(v))
		return pw_err_new(PW_ERR_USAGE, _("write a whole number from 1 to 64"),
			_("%s:%zu: python_max_workers must be a whole number from 1 to 64, not \"%s\""),
			w->name, w->line, v);
	if (strcmp(key, "mode") == 0 && !valid_mode(v))
		return pw_err_new(PW_ERR_USAGE, _("modes: read-only, workspace-write, full-access"),
			_("%s:%zu: mode must be read-only, workspace-write or full-access, not \"%s\""),
			w->name, w->line, v);
	if (strcmp(key, "audit_log") == 0 && !valid_audit_log(v))
		return pw_err_new(PW_ERR_USAGE, _("audit_log: journal, syslog, journal-or-syslog or none"),
			_("%s:%zu: audit_log must be journal, syslog, journal-or-syslog or none, not \"%s\""),
			w->name, w->line, v);
	return NULL;
}

/* ----------------------------------------------------------------- lines */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Trim [*b, *e) of blanks in place. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && is_blank(**b))
		(*b)++;
	while (*e > *b && is_blank((*e)[-1]))
		(*e)--;
}

/* Control characters would corrupt messages and terminals, and a NUL would
 * silently cut a value short; tab is ordinary whitespace. */
static pw_err *check_chars(const struct where *w, const char *b, const char *e)
{
	for (const char *p = b; p < e; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\r' && p + 1 == e)
			return pw_err_new(PW_ERR_USAGE, _("convert the file to Unix line endings"),
				_("%s:%zu: line ends with a carriage return"), w->name, w->line);
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return pw_err_new(PW_ERR_USAGE, _("settings cannot hold control characters; remove it"),
				_("%s:%zu: control character 0x%02x in line"), w->name, w->line, c);
	}
	return NULL;
}

/* Store key [kb, ke) = value [vb, ve) in s once both are known good. */
static pw_err *set_pair(pw_settings *s, const struct where *w,
	const char *kb, const char *ke, const char *vb, const char *ve)
{
	char *key = xstrndup(kb, (size_t)(ke - kb));
	char *value = xstrndup(vb, (size_t)(ve - vb));
	int i = key_index(key);
	pw_err *err = i < 0 ? pw_err_new(PW_ERR_USAGE, _(known_keys_hint),
		_("%s:%zu: unknown key \"%s\""), w->name, w->line, key) : check_value(w, key, value);
	if (!err) {
		entry_clear(&s->e[i]);
		s->e[i].value = value;
		s->e[i].origin = xasprintf("%s:%zu", w->name, w->line);
		value = NULL;
	}
	free(key);
	free(value);
	return err;
}

/* Parse one line [b, e) (no newline) into s. */
static pw_err *parse_line(pw_settings *s, const struct where *w, const char *b, const char *e)
{
	pw_err *err = check_chars(w, b, e);
	if (err)
		return err;
	trim(&b, &e);
	/* '#' only at the start, so "index_url = https://h/#frag" survives. */
	if (b == e || *b == '#')
		return NULL;
	const char *eq = memchr(b, '=', (size_t)(e - b));
	if (!eq)
		return pw_err_new(PW_ERR_USAGE, _("write settings as \"key = value\""),
			_("%s:%zu: expected \"key = value\""), w->name, w->line);
	const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
	trim(&kb, &ke);
	trim(&vb, &ve);
	if (kb == ke)
		return pw_err_new(PW_ERR_USAGE, _(known_keys_hint),
			_("%s:%zu: missing key before '='"), w->name, w->line);
	return set_pair(s, w, kb, ke, vb, ve);
}

/* Parse len bytes of text (which may hold NULs: they are reported, not
 * taken as the end) into a scratch set, merging into s on success. */
static pw_err *parse_buffer(pw_settings *s, const char *name, const char *text, size_t len)
{
	pw_settings *tmp = pw_settings_new();
	struct where w = { name, 0 };
	const char *p = text, *end = text + len;
	pw_err *err = NULL;
	/* Editors on some systems write a UTF-8 byte order mark; it is not part
	 * of the first key. */
	if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	while (!err && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		w.line++;
		err = parse_line(tmp, &w, p, le);
		p = nl ? nl + 1 : end;
	}
	if (!err)
		settings_merge(s, tmp);
	pw_settings_free(&tmp);
	return err;
}

pw_err *pw_settings_load_text(pw_settings *s, const char *name, const char *text)
{
	return parse_buffer(s, name ? name : "-", text ? text : "", text ? strlen(text) : 0);
}

/* ------------------------------------------------------------------ files */

/* Read all of fd (at most SETTINGS_MAX_BYTES) into a malloc'd buffer. */
static pw_err *read_all(int fd, const char *path, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n == cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			pw_err *err = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read %s"), path);
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > SETTINGS_MAX_BYTES) {
			free(buf);
			return pw_err_new(PW_ERR_USAGE, _("settings files are at most 1 MiB"),
				_("%s is too large to be a settings file"), path);
		}
	}
	*out = buf;
	*len = n;
	return NULL;
}

/* Open path for reading; a missing file is not an error (*exists false). */
static pw_err *open_settings(const char *path, int *fd, bool *exists)
{
	struct stat st;
	/* O_NONBLOCK so a FIFO without a writer reads as empty instead of
	 * hanging here; it is cleared again for ordinary blocking reads. */
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	*exists = *fd >= 0 || errno != ENOENT;
	if (*fd < 0)
		return *exists ? pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), path) : NULL;
	int fl = fcntl(*fd, F_GETFL);
	if (fl >= 0)
		fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK);
	/* Opening a directory succeeds; say so now rather than at read(). */
	if (fstat(*fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(*fd);
		*fd = -1;
		return pw_err_errno(PW_ERR_IO, EISDIR, NULL, _("cannot read %s"), path);
	}
	return NULL;
}

pw_err *pw_settings_load_file(pw_settings *s, const char *path, bool *loaded)
{
	int fd;
	bool exists;
	char *buf = NULL;
	size_t len = 0;
	pw_err *err = open_settings(path, &fd, &exists);
	if (loaded)
		*loaded = exists;
	if (err || !exists)
		return err;
	err = read_all(fd, path, &buf, &len);
	close(fd);
	if (!err)
		err = parse_buffer(s, path, buf, len);
	free(buf);
	return err;
}
