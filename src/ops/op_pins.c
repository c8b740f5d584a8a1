/* pins import: see op_pins.h. */
#include "config.h"

#include "ops/op_pins.h"

#include "ops/json.h"

#include "digest.h"
#include "durable.h"
#include "i18n.h"
#include "paths.h"
#include "pins.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Upstream's SHA256SUMS of a release is a few hundred KiB; a listing of
 * sizes is smaller. Anything past this is not what we were asked to read. */
#define INPUT_MAX_BYTES (16 * 1024 * 1024)

static pw_err *read_text(const char *path, const char *what, char **out)
{
	*out = NULL;
	FILE *f = fopen(path, "r");
	if (!f)
		return pw_err_errno(PW_ERR_USAGE, errno, NULL, "%s %s", what, path);
	char *buf = xmalloc(INPUT_MAX_BYTES + 1);
	size_t n = fread(buf, 1, INPUT_MAX_BYTES + 1, f);
	bool bad = ferror(f);
	fclose(f);
	pw_err *e = NULL;
	if (bad)
		e = pw_err_new(PW_ERR_IO, NULL, _("%s %s: read error"), what, path);
	else if (n > INPUT_MAX_BYTES)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("%s %s: larger than 16 MiB"), what, path);
	else if (memchr(buf, '\0', n))
		e = pw_err_new(PW_ERR_USAGE, NULL, _("%s %s: contains a NUL byte"), what, path);
	if (e) {
		free(buf);
		return e;
	}
	buf[n] = '\0';
	*out = buf;
	return NULL;
}

static bool all_digits(const char *s, size_t n)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool is_dotted_version(const char *s)
{
	bool digit = false;
	for (; *s; s++) {
		if (isdigit((unsigned char)*s))
			digit = true;
		else if (*s != '.' || !digit)
			return false;
		else
			digit = false;
	}
	return digit;
}

static pw_err *check_request(const pw_op_pins_import_request *rq)
{
	if (!rq->sums)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no SHA256SUMS file given"));
	if (!rq->release || !all_digits(rq->release, 8))
		return pw_err_new(PW_ERR_USAGE, _("upstream's releases are named by their date, as in --release 20260414"),
				  _("--release needs the release's date (8 digits), not '%s'"),
				  rq->release ? rq->release : "");
	if (rq->version && !is_dotted_version(rq->version))
		return pw_err_new(PW_ERR_USAGE, NULL, _("--version needs a version such as 3.12.13, not '%s'"),
				  rq->version);
	if (rq->base_url) {
		const char *u = rq->base_url;
		bool scheme = strncmp(u, "https://", 8) == 0 || strncmp(u, "http://", 7) == 0 ||
			      strncmp(u, "file://", 7) == 0;
		if (!scheme || strpbrk(u, " \t\r\n"))
			return pw_err_new(PW_ERR_USAGE, _("the archives' URLs are this URL, the release and the file name"),
					  _("--base-url must be an https://, http:// or file:// URL without spaces, not '%s'"),
					  u);
	}
	return NULL;
}

/* Where the table goes: inside the allowed roots (anywhere in full-access
 * mode). A relative path is taken from the current folder, as the input
 * files' are. */
static pw_err *output_path(const pw_ops_ctx *ctx, const char *given, char **out)
{
	char *abs = pw_paths_absolute(given);
	if (ctx->mode == PW_MODE_FULL_ACCESS) {
		*out = abs;
		return NULL;
	}
	pw_err *e = pw_guard_resolve(ctx->guard, abs, out);
	free(abs);
	return e;
}

/* Durably: a new file beside the target, flushed, renamed over it, the
 * folder flushed. A failure leaves the old file as it was. */
static pw_err *write_table(const char *path, const char *text)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	char *tmp = xasprintf("%s.pyward-XXXXXX", path);
	pw_err *e = NULL;
	int fd = mkstemp(tmp);
	if (fd < 0) {
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("writing %s"), path);
		goto out;
	}
	size_t len = strlen(text), done = 0;
	while (!e && done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("writing %s"), tmp);
		else
			done += (size_t)n;
	}
	if (!e && fchmod(fd, 0644) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("writing %s"), tmp);
	if (!e && fsync(fd) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("flushing %s"), tmp);
	if (close(fd) != 0 && !e)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("writing %s"), tmp);
	if (!e && rename(tmp, path) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("renaming %s to %s"), tmp, path);
	if (e)
		unlink(tmp);
	else
		e = pw_durable_sync_dir(dir);
out:
	free(tmp);
	free(dir);
	return e;
}

static pw_err *build_table(const pw_op_pins_import_request *rq, pw_op_pins_import_result *r)
{
	char *sums = NULL, *sizes = NULL;
	char hex[PW_SHA256_HEX_LEN + 1];
	int64_t ignored = 0;
	pw_err *e = read_text(rq->sums, _("SHA256SUMS file"), &sums);
	if (!e)
		e = pw_sha256_file(rq->sums, hex, &ignored);
	if (!e && rq->sizes)
		e = read_text(rq->sizes, _("sizes listing"), &sizes);
	struct stat st;
	if (!e && rq->archives && stat(rq->archives, &st) != 0)
		e = pw_err_errno(PW_ERR_USAGE, errno, NULL, _("--archives %s"), rq->archives);
	else if (!e && rq->archives && !S_ISDIR(st.st_mode))
		e = pw_err_errno(PW_ERR_USAGE, ENOTDIR, NULL, _("--archives %s"), rq->archives);
	char *base = NULL;
	if (!e && rq->base_url) {
		base = xstrdup(rq->base_url);
		for (size_t n = strlen(base); n > 0 && base[n - 1] == '/'; n--)
			base[n - 1] = '\0';
	}
	if (!e) {
		r->sums_sha256 = xstrdup(hex);
		pw_pins_import_opts o = {
			.sums_name = rq->sums, .release = rq->release, .base_url = base, .version = rq->version,
			.sizes_name = rq->sizes, .sizes = sizes, .archives_dir = rq->archives, .sums_sha256 = hex,
		};
		e = pw_pins_import(sums, &o, &r->tsv, &r->rows);
	}
	const char *hint = _("check --release (and --version) against the archive names it lists");
	if (!e && r->rows == 0 && rq->version)
		e = pw_err_new(PW_ERR_NOTFOUND, hint,
			       _("%s lists no install_only archive of release %s and version %s for a platform pyward "
				 "supports"),
			       rq->sums, rq->release, rq->version);
	else if (!e && r->rows == 0)
		e = pw_err_new(PW_ERR_NOTFOUND, hint,
			       _("%s lists no install_only archive of release %s for a platform pyward supports"),
			       rq->sums, rq->release);
	/* What was made must read back as a pins table. */
	pw_pins *p = NULL;
	if (!e)
		e = pw_pins_parse(_("the imported table"), r->tsv, &p);
	for (size_t i = 0; p && i < pw_pins_count(p); i++)
		if (pw_pins_at(p, i)->size >= 0)
			r->sized++;
	pw_pins_free(&p);
	free(base);
	free(sums);
	free(sizes);
	return e;
}

static pw_err *import_table(const pw_ops_ctx *ctx, const pw_op_pins_import_request *rq,
			    pw_op_pins_import_result *r)
{
	r->release = rq->release;
	pw_err *e = check_request(rq);
	if (e || !rq->output)
		return e ? e : build_table(rq, r);
	/* Writing the table is a change: the mode, the roots, the record. */
	e = pw_ops_require_write(ctx, _("writing a pins table"));
	char *target = NULL;
	if (!e)
		e = output_path(ctx, rq->output, &target);
	pw_catalog *cat = NULL;
	int64_t op = 0;
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, "pins.import", target, &op);
	if (!e)
		e = build_table(rq, r);
	if (!e)
		e = write_table(target, r->tsv);
	pw_ops_op_end(cat, op, e);
	pw_catalog_close(&cat);
	if (!e)
		r->output = target;
	else
		free(target);
	return e;
}

/* A failed import hands back an empty result: nothing for the caller to free. */
pw_err *pw_op_pins_import(const pw_ops_ctx *ctx, const pw_op_pins_import_request *rq, const pw_op_io *io,
			  pw_op_pins_import_result *r)
{
	(void)io; /* nothing to download, nothing to ask */
	memset(r, 0, sizeof *r);
	pw_err *e = import_table(ctx, rq, r);
	if (e)
		pw_op_pins_import_clear(r);
	return e;
}

json_t *pw_op_pins_import_json(const pw_op_pins_import_result *r)
{
	json_t *pins = json_array();
	pw_pins *p = NULL;
	pw_err *e = r->tsv ? pw_pins_parse("imported", r->tsv, &p) : NULL;
	pw_err_free(e);
	for (size_t i = 0; p && i < pw_pins_count(p); i++) {
		const pw_pin *pin = pw_pins_at(p, i);
		json_array_append_new(pins, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "version", pw_json_str(pin->version),
						      "release", pw_json_str(pin->release), "platform",
						      pw_json_str(pin->platform), "url", pw_json_str(pin->url), "sha256",
						      pw_json_str(pin->sha256), "size",
						      pin->size >= 0 ? json_integer(pin->size) : json_null()));
	}
	pw_pins_free(&p);
	return json_pack("{s:i,s:o,s:o,s:I,s:I,s:o,s:o}", "schema", 1, "release", pw_json_str(r->release),
			 "sha256sums_sha256", pw_json_str(r->sums_sha256), "rows", (json_int_t)r->rows, "sized",
			 (json_int_t)r->sized, "output", pw_json_str(r->output), "pins", pins);
}

void pw_op_pins_import_clear(pw_op_pins_import_result *r)
{
	free(r->tsv);
	free(r->sums_sha256);
	free(r->output);
	memset(r, 0, sizeof *r);
}
