/* Runtime pins: parse and query the trusted-archive table; detect the platform. */
#include "config.h"

#include "pins.h"

#include "digest.h"
#include "i18n.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#define PINS_MAX_BYTES (1024 * 1024)

struct pw_pins {
	char *source;
	char *text;     /* owned copy; pins point into it */
	pw_pin *items;
	size_t count;
};

static const char *const columns[] = { "version", "release", "platform", "url", "sha256", "size" };
#define NCOLUMNS (sizeof columns / sizeof columns[0])

static const char *const supported[] = {
	"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "x86_64-apple-darwin",
	"aarch64-apple-darwin", "x86_64-pc-windows-msvc",
};

static pw_err *bad_line(const char *name, int line, const char *what)
{
	return pw_err_new(PW_ERR_USAGE,
			  _("each line is: version, release, platform, url, sha256, size (bytes or -), tab-separated"),
			  _("%s:%d: %s"), name, line, what);
}

/* Split line at tabs into exactly NCOLUMNS fields (in place). */
static int split_fields(char *line, char **fields)
{
	int n = 0;
	for (char *p = line;; p++) {
		if (n == (int)NCOLUMNS)
			return -1;
		fields[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p = '\0';
	}
	return n;
}

static bool is_hex64(const char *s)
{
	size_t i = 0;
	for (; s[i]; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return i == 64;
}

static bool is_version(const char *s)
{
	int dots = 0;
	if (!isdigit((unsigned char)*s))
		return false;
	for (; *s; s++) {
		if (*s == '.' && isdigit((unsigned char)s[1]))
			dots++;
		else if (!isdigit((unsigned char)*s))
			return false;
	}
	return dots >= 1;
}

static pw_err *check_header(const char *name, int line, char **f, int n)
{
	if (n != (int)NCOLUMNS)
		return bad_line(name, line, _("the header must name 6 columns"));
	for (size_t i = 0; i < NCOLUMNS; i++)
		if (strcmp(f[i], columns[i]) != 0)
			return bad_line(name, line,
					_("the header must be: version release platform url sha256 size"));
	return NULL;
}

static pw_err *parse_size(const char *name, int line, const char *s, int64_t *out)
{
	if (strcmp(s, "-") == 0) {
		*out = -1;
		return NULL;
	}
	char *end = NULL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return bad_line(name, line, _("size must be a positive number of bytes or -"));
	*out = v;
	return NULL;
}

static pw_err *check_row(const char *name, int line, char **f, int n, pw_pin *pin)
{
	if (n != (int)NCOLUMNS)
		return bad_line(name, line, _("expected 6 tab-separated fields"));
	if (!is_version(f[0]))
		return bad_line(name, line, _("version must look like 3.12.13"));
	if (!*f[1] || strspn(f[1], "0123456789") != strlen(f[1]))
		return bad_line(name, line, _("release must be digits, like 20260414"));
	if (!*f[2] || strchr(f[2], ' ') || strchr(f[2], '/'))
		return bad_line(name, line, _("platform must be a target triple"));
	if (strncmp(f[3], "https://", 8) != 0 && strncmp(f[3], "http://", 7) != 0 &&
	    strncmp(f[3], "file://", 7) != 0)
		return bad_line(name, line, _("url must start with https://, http:// or file://"));
	if (!is_hex64(f[4]))
		return bad_line(name, line, _("sha256 must be 64 lower-case hex digits"));
	*pin = (pw_pin){ .version = f[0], .release = f[1], .platform = f[2], .url = f[3],
			 .sha256 = f[4], .line = line };
	return parse_size(name, line, f[5], &pin->size);
}

static pw_err *parse_line(pw_pins *p, int line, char *text, bool *header_seen)
{
	size_t len = strlen(text);
	if (len && text[len - 1] == '\r')
		text[--len] = '\0';
	if (len == 0 || text[0] == '#')
		return NULL;
	char *f[NCOLUMNS];
	int n = split_fields(text, f);
	if (!*header_seen) {
		*header_seen = true;
		return check_header(p->source, line, f, n);
	}
	p->items = xrealloc(p->items, (p->count + 1) * sizeof *p->items);
	pw_err *e = check_row(p->source, line, f, n, &p->items[p->count]);
	if (!e)
		p->count++;
	return e;
}

pw_err *pw_pins_parse(const char *name, const char *text, pw_pins **out)
{
	pw_pins *p = xcalloc(1, sizeof *p);
	p->source = xstrdup(name);
	p->text = xstrdup(text);
	bool header_seen = false;
	pw_err *e = NULL;
	int line = 0;
	for (char *s = p->text, *next; s && !e; s = next) {
		next = strchr(s, '\n');
		if (next)
			*next++ = '\0';
		line++;
		e = parse_line(p, line, s, &header_seen);
	}
	if (!e && !header_seen)
		e = bad_line(name, line, _("no header line and no pins"));
	if (!e && p->count == 0)
		e = bad_line(name, line, _("the table has no pins"));
	if (e) {
		pw_pins_free(&p);
		return e;
	}
	*out = p;
	return NULL;
}

pw_err *pw_pins_load(const char *path, pw_pins **out)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return pw_err_errno(PW_ERR_USAGE, errno, NULL, _("pins table %s"), path);
	char *buf = xmalloc(PINS_MAX_BYTES + 1);
	size_t n = fread(buf, 1, PINS_MAX_BYTES + 1, f);
	bool err = ferror(f);
	fclose(f);
	pw_err *e = NULL;
	if (err)
		e = pw_err_new(PW_ERR_IO, NULL, _("pins table %s: read error"), path);
	else if (n > PINS_MAX_BYTES)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("pins table %s: larger than 1 MiB"), path);
	else if (memchr(buf, '\0', n))
		e = pw_err_new(PW_ERR_USAGE, NULL, _("pins table %s: contains a NUL byte"), path);
	if (!e) {
		buf[n] = '\0';
		e = pw_pins_parse(path, buf, out);
	}
	free(buf);
	return e;
}

void pw_pins_free(pw_pins **p)
{
	if (!p || !*p)
		return;
	free((*p)->source);
	free((*p)->text);
	free((*p)->items);
	free(*p);
	*p = NULL;
}

const char *pw_pins_source(const pw_pins *p)
{
	return p->source;
}

size_t pw_pins_count(const pw_pins *p)
{
	return p->count;
}

const pw_pin *pw_pins_at(const pw_pins *p, size_t i)
{
	return i < p->count ? &p->items[i] : NULL;
}

int pw_pins_version_cmp(const char *a, const char *b)
{
	for (;;) {
		char *ea, *eb;
		long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
		if (x != y)
			return x < y ? -1 : 1;
		if (*ea != '.' || *eb != '.')
			return (*ea == '.') - (*eb == '.');
		a = ea + 1;
		b = eb + 1;
	}
}

static bool newer(const pw_pin *a, const pw_pin *b)
{
	int c = pw_pins_version_cmp(a->version, b->version);
	return c > 0 || (c == 0 && strcmp(a->release, b->release) > 0);
}

static pw_err *not_found(const pw_pins *p, const char *platform, const char *version)
{
	char *have = xstrdup("");
	for (size_t i = 0; i < p->count; i++) {
		if (strcmp(p->items[i].platform, platform) != 0)
			continue;
		char *next = xasprintf("%s%s%s", have, *have ? ", " : "", p->items[i].version);
		free(have);
		have = next;
	}
	pw_err *e = version && *have
		? pw_err_new(PW_ERR_NOTFOUND, NULL, _("%s pins no %s for %s (it pins: %s)"), p->source,
			     version, platform, have)
		: pw_err_new(PW_ERR_NOTFOUND, _("pass --pins FILE with a pin for this platform"),
			     _("%s has no pin for %s"), p->source, platform);
	free(have);
	return e;
}

pw_err *pw_pins_find(const pw_pins *p, const char *platform, const char *version, const pw_pin **out)
{
	const pw_pin *best = NULL;
	for (size_t i = 0; i < p->count; i++) {
		const pw_pin *c = &p->items[i];
		if (strcmp(c->platform, platform) != 0)
			continue;
		if (version && strcmp(c->version, version) != 0)
			continue;
		if (!best || newer(c, best))
			best = c;
	}
	if (!best)
		return not_found(p, platform, version);
	*out = best;
	return NULL;
}

char *pw_pins_url(const pw_pin *pin, const char *mirror)
{
	size_t plen = strlen(PW_PINS_UPSTREAM_PREFIX);
	if (!mirror || !*mirror || strncmp(pin->url, PW_PINS_UPSTREAM_PREFIX, plen) != 0)
		return xstrdup(pin->url);
	size_t mlen = strlen(mirror);
	while (mlen && mirror[mlen - 1] == '/')
		mlen--;
	return xasprintf("%.*s%s", (int)mlen, mirror, pin->url + plen);
}

char *pw_pins_file_name(const pw_pin *pin)
{
	const char *slash = strrchr(pin->url, '/');
	return xstrdup(slash ? slash + 1 : pin->url);
}

static bool read_libc_is_musl(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	char line[512];
	bool musl = false;
	while (!musl && fgets(line, sizeof line, f))
		musl = strstr(line, "ld-musl") != NULL || strstr(line, "libc.musl") != NULL;
	fclose(f);
	return musl;
}

/* A process's libc never changes, and reading /proc/self/maps of a busy
 * process is not free (the HTTP API asks on every status request). */
static bool libc_is_musl(void)
{
	static atomic_int known; /* 0 not yet, 1 glibc or other, 2 musl */
	int k = atomic_load(&known);
	if (k == 0) {
		k = read_libc_is_musl() ? 2 : 1;
		atomic_store(&known, k);
	}
	return k == 2;
}

static char *triple_for(const char *sys, const char *machine)
{
	bool x64 = strcmp(machine, "x86_64") == 0 || strcmp(machine, "amd64") == 0;
	bool arm64 = strcmp(machine, "aarch64") == 0 || strcmp(machine, "arm64") == 0;
	if (!x64 && !arm64)
		return NULL;
	const char *cpu = x64 ? "x86_64" : "aarch64";
	if (strcmp(sys, "Linux") == 0)
		return libc_is_musl() ? NULL : xasprintf("%s-unknown-linux-gnu", cpu);
	if (strcmp(sys, "Darwin") == 0)
		return xasprintf("%s-apple-darwin", cpu);
	if (strncmp(sys, "MINGW", 5) == 0 || strncmp(sys, "MSYS", 4) == 0 || strncmp(sys, "CYGWIN", 6) == 0)
		return x64 ? xstrdup("x86_64-pc-windows-msvc") : NULL;
	return NULL;
}

pw_err *pw_platform_detect(const char *sysname, const char *machine, char **triple)
{
	struct utsname u;
	if ((!sysname || !machine) && uname(&u) != 0)
		return pw_err_errno(PW_ERR_FAILED, errno, NULL, "uname");
	const char *sys = sysname ? sysname : u.sysname;
	const char *mach = machine ? machine : u.machine;
	*triple = triple_for(sys, mach);
	if (*triple)
		return NULL;
	char *list = xstrdup("");
	for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++) {
		char *next = xasprintf("%s%s%s", list, i ? ", " : "", supported[i]);
		free(list);
		list = next;
	}
	pw_err *e = pw_err_new(PW_ERR_REFUSED, _("pass --python to use an interpreter you provide"),
			       _("no managed runtime for this platform (%s %s%s); supported: %s"), sys, mach,
			       strcmp(sys, "Linux") == 0 && libc_is_musl() ? _(", musl libc") : "", list);
	free(list);
	return e;
}

/* ---------------------------------------------------------------- import */

/* "cpython-3.12.13+20260414-x86_64-unknown-linux-gnu-install_only.tar.gz":
 * version, release and platform, or false. */
static bool archive_name(const char *name, char *ver, char *rel, char *plat, size_t cap)
{
	static const char head[] = "cpython-", tail[] = "-install_only.tar.gz";
	size_t n = strlen(name), h = sizeof head - 1, t = sizeof tail - 1;
	if (n <= h + t || strncmp(name, head, h) != 0 || strcmp(name + n - t, tail) != 0)
		return false;
	const char *plus = strchr(name + h, '+'), *dash = plus ? strchr(plus, '-') : NULL;
	if (!plus || !dash || (size_t)(plus - name - h) >= cap || (size_t)(dash - plus - 1) >= cap ||
	    n - t - (size_t)(dash + 1 - name) >= cap)
		return false;
	snprintf(ver, cap, "%.*s", (int)(plus - name - h), name + h);
	snprintf(rel, cap, "%.*s", (int)(dash - plus - 1), plus + 1);
	snprintf(plat, cap, "%.*s", (int)(n - t - (size_t)(dash + 1 - name)), dash + 1);
	return is_version(ver);
}

static bool is_supported(const char *triple)
{
	for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++)
		if (strcmp(supported[i], triple) == 0)
			return true;
	return false;
}

/* The size listed for name in sizes, or -1. */
static int64_t size_of(const char *sizes, const char *name)
{
	for (const char *p = sizes; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xstrndup(p, len), *end = NULL;
		long long v = strtoll(line, &end, 10);
		bool hit = end != line && v >= 0 && strcmp(end + strspn(end, " \t"), name) == 0;
		free(line);
		if (hit)
			return v;
		p = eol ? eol + 1 : p + len;
	}
	return -1;
}

/* The size of name in the archives folder after checking its sha256 against
 * the listed one; -1 when the folder has no such file. */
static pw_err *local_size(const pw_pins_import_opts *o, const char *name, const char *sha256, int line,
			  int64_t *size)
{
	*size = -1;
	char *path = xasprintf("%s/%s", o->archives_dir, name);
	struct stat st;
	pw_err *e = NULL;
	if (lstat(path, &st) != 0 && errno == ENOENT) {
		free(path);
		return NULL;
	}
	char hex[PW_SHA256_HEX_LEN + 1];
	int64_t n = 0;
	e = pw_sha256_file(path, hex, &n);
	if (!e && strcmp(hex, sha256) != 0)
		e = pw_err_new(PW_ERR_FAILED,
			       _("download it again, or check that the SHA256SUMS is the one of its release"),
			       _("%s has sha256 %s, but %s:%d lists %s"), path, hex, o->sums_name, line, sha256);
	if (!e)
		*size = n;
	free(path);
	return e;
}

static char *import_header(const pw_pins_import_opts *o)
{
	char *sizes = o->archives_dir && o->sizes
			  ? xasprintf("from the archives in %s (each checked against its sha256), else from %s",
				      o->archives_dir, o->sizes_name)
		      : o->archives_dir ? xasprintf("from the archives in %s (each checked against its sha256)",
						    o->archives_dir)
		      : o->sizes	? xasprintf("from %s", o->sizes_name)
					: xstrdup("not given");
	char *digest = !o->sums_sha256 ? xstrdup("")
		       : o->base_url  ? xasprintf("# that SHA256SUMS has sha256 %s\n", o->sums_sha256)
				      : xasprintf("# that SHA256SUMS has sha256 %s (upstream publishes it as %s/%s/SHA256SUMS)\n",
						  o->sums_sha256, PW_PINS_UPSTREAM_PREFIX, o->release);
	char *head = xasprintf("# python-build-standalone install_only archives of release %s, from %s\n%s"
			       "# (imported by 'pyward pins import'; sizes %s)\n"
			       "version\trelease\tplatform\turl\tsha256\tsize\n",
			       o->release, o->sums_name, digest, sizes);
	free(sizes);
	free(digest);
	return head;
}

pw_err *pw_pins_import(const char *sums, const pw_pins_import_opts *o, char **tsv, size_t *count)
{
	*tsv = NULL;
	*count = 0;
	const char *base = o->base_url ? o->base_url : PW_PINS_UPSTREAM_PREFIX;
	char *out = import_header(o);
	int line = 0;
	for (const char *p = sums; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *l = xstrndup(p, len);
		line++;
		p = eol ? eol + 1 : p + len;
		size_t sp = strcspn(l, " ");
		char *name = l + sp + strspn(l + sp, " *");
		char ver[64], rel[64], plat[64];
		if (!*l || l[0] == '#') {
			free(l);
			continue;
		}
		l[sp] = '\0';
		if (!is_hex64(l) || !*name || strchr(name, '/') || strchr(name, '\t')) {
			pw_err *e = pw_err_new(PW_ERR_USAGE, _("each line is: sha256, two spaces, file name"),
					       _("%s:%d: not a '<sha256>  <file name>' line"), o->sums_name, line);
			free(l);
			free(out);
			return e;
		}
		if (archive_name(name, ver, rel, plat, sizeof ver) && strcmp(rel, o->release) == 0 &&
		    is_supported(plat) && (!o->version || strcmp(o->version, ver) == 0)) {
			int64_t size = -1;
			pw_err *e = o->archives_dir ? local_size(o, name, l, line, &size) : NULL;
			if (e) {
				free(l);
				free(out);
				*count = 0;
				return e;
			}
			if (size < 0)
				size = size_of(o->sizes, name);
			char sz[32];
			snprintf(sz, sizeof sz, size < 0 ? "-" : "%lld", (long long)size);
			char *enc = xstrdup(name), *plus = strchr(enc, '+');
			char *url = plus ? xasprintf("%s/%s/%.*s%%2B%s", base, rel, (int)(plus - enc), enc, plus + 1)
					 : xasprintf("%s/%s/%s", base, rel, enc);
			char *next = xasprintf("%s%s\t%s\t%s\t%s\t%s\t%s\n", out, ver, rel, plat, url, l, sz);
			free(out);
			out = next;
			free(url);
			free(enc);
			(*count)++;
		}
		free(l);
	}
	*tsv = out;
	return NULL;
}
