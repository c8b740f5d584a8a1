/*
 * `venv create` without starting Python (see venv_fast.h).
 *
 * What `python -m venv` writes depends on the base interpreter: the keys
 * of pyvenv.cfg, the bin/python* links, the folders (lib64 or not), the
 * activation scripts' templates and how their placeholders are quoted.
 * Rather than guess, the base's own venv module is asked once, in a
 * scratch folder (BASE_PROBE below), and its answers are cached in
 * BOX/cache/venv/base-KEY.json, KEY being the sha256 of the interpreter's
 * path, device, inode, size and mtime: a replaced interpreter gets a new
 * key. An interpreter that is a script (a pyenv shim, whose answer depends
 * on its environment) is never cached.
 *
 * pip: the interpreter's bundled wheel is unpacked once into
 * BOX/cache/venv/pip-KEY/site (every file checked against the wheel's own
 * RECORD, bytecode compiled by the base so a new environment's pip starts
 * without compiling), and a manifest records each file's size, mtime,
 * inode, mode and sha256. The files are hard-linked into the new
 * environment (copied, mtime kept, when the cache is on another file system
 * or links are refused), and each new link is checked against the manifest
 * (one fstatat: the same inode, with the size, mtime and mode recorded), so
 * no change to the image between a check and a link goes unseen. On any
 * difference the half-made environment is thrown away, the image rebuilt and
 * the environment made again from it. Then pyward writes the console
 * scripts, INSTALLER and a RECORD naming every file, so pip can upgrade or
 * uninstall itself later.
 * Hard links share an inode: pip replaces files (unlink and write), which
 * never touches the image; an edit in place of a linked file would change
 * the image too, and is then caught by the check above.
 *
 * The environment is built in a hidden sibling folder, pyvenv.cfg last,
 * and renamed into place: a create killed at any point leaves no folder
 * that looks like an environment.
 */
#include "config.h"

#include "venv_fast.h"

#include "clock.h"
#include "digest.h"
#include "durable.h"
#include "extract.h"
#include "i18n.h"
#include "paths.h"
#include "runner.h"
#include "stagetime.h"
#include "venv_base.h"
#include "xalloc.h"
#include "fdwrite.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROBE_S 30.0
#define BUILD_S 120.0
#define IMAGE_VERSION "pyward-pip-image 1"
#define ENV_MARK "\001"   /* stands for the environment's path in cached text */
#define SHEBANG_LIMIT 127
#define FILE_LIMIT (1 << 20)

/* Asks the base's own venv module what an environment of it looks like. */
static const char base_probe[] =
	"import base64, json, os, sys, sysconfig, tempfile, types, venv\n"
	"b = venv.EnvBuilder(with_pip=False, symlinks=True)\n"
	"out = {'version': '%d.%d.%d' % sys.version_info[:3], 'impl': sys.implementation.name}\n"
	"with tempfile.TemporaryDirectory() as t:\n"
	"    env = os.path.join(t, 'e')\n"
	"    ctx = b.ensure_directories(env)\n"
	"    cfg = os.path.join(env, 'pyvenv.cfg')\n"
	"    for key, pip in (('cfg_without_pip', False), ('cfg_with_pip', True)):\n"
	"        b.with_pip = pip\n"
	"        b.create_configuration(ctx)\n"
	"        with open(cfg, encoding='utf-8') as f:\n"
	"            out[key] = f.read().replace(env, '\\x01')\n"
	"        os.unlink(cfg)\n"
	"    b.setup_python(ctx)\n"
	"    if getattr(b, 'scm_ignore_files', None):\n"
	"        b.create_git_ignore_file(ctx)\n"
	"    tree = []\n"
	"    for root, dirs, files in os.walk(env):\n"
	"        dirs.sort()\n"
	"        for n in sorted(dirs + files):\n"
	"            p = os.path.join(root, n)\n"
	"            rel = os.path.relpath(p, env)\n"
	"            if os.path.islink(p):\n"
	"                tree.append(['l', rel, os.readlink(p).replace(env, '\\x01'), 0])\n"
	"            elif os.path.isdir(p):\n"
	"                tree.append(['d', rel, '', 0])\n"
	"            else:\n"
	"                with open(p, 'rb') as f:\n"
	"                    data = f.read()\n"
	"                if env.encode() in data:\n"
	"                    sys.exit('a file names the environment: ' + rel)\n"
	"                tree.append(['f', rel, base64.b64encode(data).decode(), os.lstat(p).st_mode & 0o7777])\n"
	"    out['tree'] = tree\n"
	"    out['bin'] = ctx.bin_name\n"
	"    out['exe'] = os.path.relpath(ctx.env_exe, env)\n"
	"    out['site'] = [r for k, r, x, m in tree if k == 'd' and r.endswith('site-packages')]\n"
	"scripts = os.path.join(os.path.dirname(venv.__file__), 'scripts')\n"
	"out['templates'] = []\n"
	"for sub in ('common', os.name):\n"
	"    top = os.path.join(scripts, sub)\n"
	"    for root, dirs, files in os.walk(top):\n"
	"        for f in sorted(files):\n"
	"            src = os.path.join(root, f)\n"
	"            out['templates'].append([os.path.relpath(src, top), src])\n"
	"c = types.SimpleNamespace(env_dir='a b', env_name='a b', prompt='(a b) ', bin_name='bin',\n"
	"                          env_exe='a b', script_path='x')\n"
	"keys = ['__VENV_DIR__', '__VENV_NAME__', '__VENV_PROMPT__', '__VENV_BIN_NAME__', '__VENV_PYTHON__']\n"
	"out['keys'] = [k for k in keys if b.replace_variables(k, c) != k]\n"
	"out['quote'] = 'shlex' if b.replace_variables('__VENV_DIR__', c) == \"'a b'\" else 'raw'\n"
	"out['stdlib'] = sysconfig.get_path('stdlib')\n"
	"print(json.dumps(out))\n";

/* Unpacks the wheel into argv[2], every file checked against the wheel's
 * RECORD, and compiles it with the base (so its bytecode is the base's). */
static const char image_builder[] =
	"import base64, compileall, csv, hashlib, io, os, sys, zipfile\n"
	"wheel, site = sys.argv[1:]\n"
	"with zipfile.ZipFile(wheel) as z:\n"
	"    tops = {n.split('/')[0] for n in z.namelist() if n.split('/')[0].endswith('.dist-info')}\n"
	"    if len(tops) != 1 or not next(iter(tops)).startswith('pip-'):\n"
	"        sys.exit('not one pip-*.dist-info folder')\n"
	"    di = tops.pop()\n"
	"    rec = {}\n"
	"    for row in csv.reader(io.TextIOWrapper(z.open(di + '/RECORD'), 'utf-8')):\n"
	"        if len(row) >= 2:\n"
	"            rec[row[0]] = row[1]\n"
	"    for info in z.infolist():\n"
	"        n = info.filename\n"
	"        parts = n.rstrip('/').split('/')\n"
	"        if (n.startswith('/') or any(p in ('', '.', '..') for p in parts) or\n"
	"                any(ord(ch) < 32 or ch == '\\\\' for ch in n) or parts[0].endswith('.data')):\n"
	"            sys.exit('refused entry %r' % n)\n"
	"        if n.endswith('/'):\n"
	"            continue\n"
	"        if parts[0] == di and len(parts) == 2 and parts[1] in ('RECORD', 'INSTALLER', 'RECORD.jws', 'RECORD.p7s'):\n"
	"            continue\n"
	"        data = z.read(info)\n"
	"        want = rec.get(n, '')\n"
	"        got = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
	"        if want != 'sha256=' + got:\n"
	"            sys.exit('%s: not as its RECORD says' % n)\n"
	"        p = os.path.join(site, *parts)\n"
	"        os.makedirs(os.path.dirname(p), exist_ok=True)\n"
	"        with open(p, 'xb') as f:\n"
	"            f.write(data)\n"
	"        os.chmod(p, 0o755 if (info.external_attr >> 16) & 0o111 else 0o644)\n"
	"compileall.compile_dir(site, quiet=2)\n"
	"print(di)\n";

static const char launcher_body[] =
	"# -*- coding: utf-8 -*-\n"
	"import re\n"
	"import sys\n"
	"from pip._internal.cli.main import main\n"
	"if __name__ == '__main__':\n"
	"    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
	"    sys.exit(main())\n";

/* ---------------------------------------------------------------- helpers */

static char *join(const char *a, const char *b)
{
	return xasprintf("%s/%s", a, b);
}

/* This route cannot serve the request; the caller takes `-m venv`. */
#define unsupported(...) pw_err_new(PW_ERR_NOTFOUND, NULL, __VA_ARGS__)

/* Create dir/name (it must not exist) with data and exactly mode; it is
 * flushed with the rest of the tree (made: takes the open descriptor). */
static pw_err *write_new_at(pw_durable_set *made, int dir, const char *shown, const char *name, const void *data,
			    size_t len, mode_t mode)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s/%s"), shown, name);
	bool ok = pw_write_all(fd, data, len) == 0 && fchmod(fd, mode) == 0;
	int saved = errno;
	if (ok) {
		char *path = xasprintf("%s/%s", shown, name);
		pw_durable_set_add(made, fd, true, path);
		free(path);
		return NULL;
	}
	close(fd);
	return pw_err_errno(PW_ERR_IO, saved, NULL, _("cannot write %s/%s"), shown, name);
}

/* Make dir/rel, a folder, and hand it to made to be flushed. */
static pw_err *make_dir_at(pw_durable_set *made, int dir, const char *shown, const char *rel)
{
	int fd = mkdirat(dir, rel, 0777) < 0 ? -1 : openat(dir, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s/%s"), shown, rel);
	char *path = xasprintf("%s/%s", shown, rel);
	pw_durable_set_add(made, fd, false, path);
	free(path);
	return NULL;
}

/* A whole small file, NUL-terminated; NULL when missing, not a regular
 * file (links are not followed) or larger than FILE_LIMIT. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < FILE_LIMIT) {
		buf = xmalloc((size_t)st.st_size + 1);
		ssize_t n = 0, got;
		while (n < st.st_size && (got = read(fd, buf + n, (size_t)(st.st_size - n))) > 0)
			n += got;
		if (n != st.st_size) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
			if (len)
				*len = (size_t)n;
		}
	}
	close(fd);
	return buf;
}

/* Write path through a temporary name and rename, so readers see all or nothing. */
static pw_err *store_file(const char *path, const char *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp-%ld", path, (long)getpid());
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	pw_err *e = NULL;
	if (fd < 0 || pw_write_all(fd, data, len) < 0 || close(fd) < 0 || rename(tmp, path) < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s"), path);
	if (e) {
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	}
	free(tmp);
	return e;
}

static void sha256_text(const void *data, size_t len, char hex[PW_SHA256_HEX_LEN + 1])
{
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, data, len);
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
}

void pw_record_b64(const char *hex, char out[PW_RECORD_B64_LEN + 1])
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned char raw[33] = { 0 };
	for (size_t i = 0; i < 32; i++) {
		char pair[3] = { hex[2 * i], hex[2 * i + 1], '\0' };
		raw[i] = (unsigned char)strtoul(pair, NULL, 16);
	}
	size_t o = 0;
	for (size_t i = 0; i < 33; i += 3) {
		unsigned long v = (unsigned long)raw[i] << 16 | (unsigned long)raw[i + 1] << 8 |
			(i + 2 < 33 ? raw[i + 2] : 0);
		for (int k = 0; k < 4 && o < PW_RECORD_B64_LEN; k++)
			out[o++] = tbl[(v >> (18 - 6 * k)) & 63];
	}
	out[PW_RECORD_B64_LEN] = '\0';
}

/* The kernel reads a short #! line and splits it at blanks, so a long or
 * spaced path goes through /bin/sh, as pip's own script writer does;
 * characters a double-quoted sh word would interpret are refused. */
pw_err *pw_pip_launcher_text(const char *venv, char **out)
{
	char *python = join(venv, "bin/python");
	pw_err *e = NULL;
	*out = NULL;
	if (strpbrk(python, "\"$`\\"))
		e = pw_err_new(PW_ERR_FAILED, NULL,
			       _("cannot write a pip launcher for %s: its path has a quote, $, ` or \\ in it"), venv);
	else if (strlen(python) + 2 > SHEBANG_LIMIT || strpbrk(python, " \t"))
		*out = xasprintf("#!/bin/sh\n'''exec' \"%s\" \"$0\" \"$@\"\n' '''\n%s", python, launcher_body);
	else
		*out = xasprintf("#!%s\n%s", python, launcher_body);
	free(python);
	return e;
}

/* Run the base; its stdout in *out. A base that fails is one this route
 * cannot serve (PW_ERR_NOTFOUND): the caller takes `-m venv`. */
static pw_err *run_base(const pw_venv_fast_opts *o, const char *const *argv, double seconds, char **out)
{
	pw_venv_job j = { .env_add = o->env_add, .deadline_ms = o->deadline_ms, .cancel = o->cancel };
	pw_run_result *r = NULL;
	pw_err *e = pw_venv_run(argv, &j, seconds, 4 << 20, argv[0], &r);
	if (e && pw_err_code(e) == PW_ERR_FAILED) {
		pw_err *u = unsupported("%s", pw_err_message(e));
		pw_err_free(e);
		e = u;
	}
	if (!e)
		*out = xstrdup(pw_run_result_output(r, PW_STREAM_STDOUT));
	pw_run_result_free(&r);
	return e;
}

/* ---------------------------------------------------------------- facts */

/* The cache key of an interpreter: its path and what stat says of the
 * file it names. NULL for a script (a shim answers by its environment). */
static char *base_key(const char *python)
{
	struct stat st;
	int fd = open(python, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char head[4] = { 0 };
	bool elf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, 4) == 4 &&
		memcmp(head, "\177ELF", 4) == 0;
	close(fd);
	if (!elf)
		return NULL;
	char *text = xasprintf("%s\n%llu\n%llu\n%lld\n%lld.%09ld", python, (unsigned long long)st.st_dev,
			       (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			       st.st_mtim.tv_nsec);
	char hex[PW_SHA256_HEX_LEN + 1];
	sha256_text(text, strlen(text), hex);
	free(text);
	return xstrndup(hex, 32);
}

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : NULL;
}

/* Everything the writer needs is there and of the right type. */
static bool facts_valid(json_t *f)
{
	static const char *const strings[] = { "version", "impl", "cfg_with_pip", "cfg_without_pip", "bin",
						"exe", "quote", "stdlib" };
	if (!json_is_object(f))
		return false;
	for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
		if (!jstr(f, strings[i]))
			return false;
	json_t *site = json_object_get(f, "site");
	if (!json_is_array(site) || json_array_size(site) != 1 || !json_is_string(json_array_get(site, 0)))
		return false;
	json_t *tree = json_object_get(f, "tree"), *tpl = json_object_get(f, "templates");
	if (!json_is_array(tree) || !json_is_array(tpl) || !json_is_array(json_object_get(f, "keys")))
		return false;
	size_t i;
	json_t *v;
	json_array_foreach(tree, i, v) {
		if (!json_is_array(v) || json_array_size(v) != 4 || !json_is_string(json_array_get(v, 0)) ||
		    !json_is_string(json_array_get(v, 1)) || !json_is_string(json_array_get(v, 2)) ||
		    !json_is_integer(json_array_get(v, 3)))
			return false;
	}
	json_array_foreach(tpl, i, v) {
		if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_string(json_array_get(v, 0)) ||
		    !json_is_string(json_array_get(v, 1)))
			return false;
	}
	return true;
}

static char *venv_cache(const char *cache_dir)
{
	return join(cache_dir, "venv");
}

static json_t *load_facts(const char *cache_dir, const char *key)
{
	char *dir = venv_cache(cache_dir), *path = xasprintf("%s/base-%s.json", dir, key);
	char *text = slurp(path, NULL);
	json_t *f = text ? json_loads(text, 0, NULL) : NULL;
	if (f && !facts_valid(f)) {
		json_decref(f);
		f = NULL;
	}
	free(text);
	free(path);
	free(dir);
	return f;
}

static pw_err *learn_facts(const pw_venv_fast_opts *o, const char *key, json_t **out)
{
	const char *argv[] = { o->base, "-I", "-c", base_probe, NULL };
	char *text = NULL;
	pw_err *e = run_base(o, argv, PROBE_S, &text);
	json_t *f = text ? json_loads(text, 0, NULL) : NULL;
	if (!e && !facts_valid(f))
		e = unsupported(_("%s's venv module did not describe its environments"), o->base);
	if (!e && key) {
		char *dir = venv_cache(o->cache_dir), *path = xasprintf("%s/base-%s.json", dir, key);
		e = pw_paths_mkdirs(dir, 0755);
		if (!e)
			e = store_file(path, text, strlen(text));
		if (e) { /* no writable cache: the caller takes the other route */
			pw_err *u = unsupported(_("cannot keep facts in the box's cache: %s"), pw_err_message(e));
			pw_err_free(e);
			e = u;
		}
		free(path);
		free(dir);
	}
	free(text);
	if (e) {
		json_decref(f);
		return e;
	}
	*out = f;
	return NULL;
}

bool pw_venv_fast_known(const char *cache_dir, const char *python, char **version, char **impl)
{
	char *key = cache_dir && python ? base_key(python) : NULL;
	json_t *f = key ? load_facts(cache_dir, key) : NULL;
	free(key);
	if (!f)
		return false;
	if (version)
		*version = xstrdup(jstr(f, "version"));
	if (impl)
		*impl = xstrdup(jstr(f, "impl"));
	json_decref(f);
	return true;
}

/* ---------------------------------------------------------------- image */

struct item {
	char kind;              /* 'd' or 'f' */
	char *rel;
	mode_t mode;
	int64_t size;
	struct timespec mtime;
	ino_t ino;
	char b64[PW_RECORD_B64_LEN + 1];
};

struct image {
	char *dir;              /* BOX/cache/venv/pip-KEY */
	char *dist_info;
	char *wheel;
	struct item *items;
	size_t count, cap;
};

static void image_clear(struct image *im)
{
	for (size_t i = 0; i < im->count; i++)
		free(im->items[i].rel);
	free(im->items);
	free(im->dir);
	free(im->dist_info);
	free(im->wheel);
	memset(im, 0, sizeof *im);
}

static struct item *image_add(struct image *im, char kind, const char *rel)
{
	if (im->count == im->cap) {
		im->cap = im->cap ? im->cap * 2 : 1024;
		im->items = xrealloc(im->items, im->cap * sizeof *im->items);
	}
	struct item *it = &im->items[im->count++];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->rel = xstrdup(rel);
	return it;
}

/* Walk site/REL (no link followed: the image holds folders and files only). */
static pw_err *walk_image(struct image *im, const char *site, const char *rel)
{
	char *path = *rel ? join(site, rel) : xstrdup(site);
	DIR *d = opendir(path);
	pw_err *e = d ? NULL : pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read %s"), path);
	for (struct dirent *de; !e && (de = readdir(d));) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *sub = *rel ? join(rel, de->d_name) : xstrdup(de->d_name);
		char *full = join(site, sub);
		struct stat st;
		if (strpbrk(sub, "\t\n\r"))
			e = pw_err_new(PW_ERR_CORRUPT, NULL, _("cannot keep %s in the pip image"), full);
		else if (lstat(full, &st) < 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot inspect %s"), full);
		else if (S_ISDIR(st.st_mode)) {
			image_add(im, 'd', sub);
			e = walk_image(im, site, sub);
		} else if (S_ISREG(st.st_mode)) {
			char hex[PW_SHA256_HEX_LEN + 1];
			int64_t size = 0;
			e = pw_sha256_file(full, hex, &size);
			if (!e) {
				struct item *it = image_add(im, 'f', sub);
				it->mode = st.st_mode & 07777;
				it->size = st.st_size;
				it->mtime = st.st_mtim;
				it->ino = st.st_ino;
				pw_record_b64(hex, it->b64);
			}
		} else {
			e = pw_err_new(PW_ERR_CORRUPT, NULL, _("%s in the pip image is not a file or a folder"), full);
		}
		free(full);
		free(sub);
	}
	if (d)
		closedir(d);
	free(path);
	return e;
}

static char *manifest_text(const struct image *im, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f)
		abort(); /* out of memory, as xalloc would */
	fprintf(f, "%s\t%s\t%s\n", IMAGE_VERSION, im->dist_info, im->wheel);
	for (size_t i = 0; i < im->count; i++) {
		const struct item *it = &im->items[i];
		if (it->kind == 'd')
			fprintf(f, "d\t%s\n", it->rel);
		else
			fprintf(f, "f\t%s\t%o\t%lld\t%lld\t%ld\t%llu\t%s\n", it->rel, (unsigned)it->mode,
				(long long)it->size, (long long)it->mtime.tv_sec, it->mtime.tv_nsec,
				(unsigned long long)it->ino, it->b64);
	}
	fclose(f);
	return text;
}

static bool parse_manifest(struct image *im, char *text)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	if (!line)
		return false;
	char *f[8];
	size_t n = 0;
	for (char *s2 = NULL, *t = strtok_r(line, "\t", &s2); t && n < 8; t = strtok_r(NULL, "\t", &s2))
		f[n++] = t;
	if (n != 3 || strcmp(f[0], IMAGE_VERSION) != 0)
		return false;
	im->dist_info = xstrdup(f[1]);
	im->wheel = xstrdup(f[2]);
	while ((line = strtok_r(NULL, "\n", &save))) {
		n = 0;
		for (char *s2 = NULL, *t = strtok_r(line, "\t", &s2); t && n < 8; t = strtok_r(NULL, "\t", &s2))
			f[n++] = t;
		if (n == 2 && strcmp(f[0], "d") == 0) {
			image_add(im, 'd', f[1]);
		} else if (n == 8 && strcmp(f[0], "f") == 0 && strlen(f[7]) == PW_RECORD_B64_LEN) {
			struct item *it = image_add(im, 'f', f[1]);
			it->mode = (mode_t)strtoul(f[2], NULL, 8);
			it->size = strtoll(f[3], NULL, 10);
			it->mtime.tv_sec = (time_t)strtoll(f[4], NULL, 10);
			it->mtime.tv_nsec = strtol(f[5], NULL, 10);
			it->ino = (ino_t)strtoull(f[6], NULL, 10);
			memcpy(it->b64, f[7], PW_RECORD_B64_LEN + 1);
		} else {
			return false;
		}
	}
	return im->count > 0;
}

/* st (of an image file, a new link to one, or a copy's source) is what the
 * manifest says of that file: the same inode, size, mode and mtime. An
 * edit in place changes the mtime; a replaced file has another inode. */
static bool as_manifest_says(const struct stat *st, const struct item *it)
{
	return S_ISREG(st->st_mode) && st->st_size == it->size && st->st_ino == it->ino &&
		(st->st_mode & 07777) == it->mode && st->st_mtim.tv_sec == it->mtime.tv_sec &&
		st->st_mtim.tv_nsec == it->mtime.tv_nsec;
}

/* Every file of the image is as the manifest says (lstat only: size,
 * mtime, inode, mode), every folder a folder. */
static bool image_intact(const struct image *im)
{
	char *site = join(im->dir, "site");
	int dir = open(site, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(site);
	if (dir < 0)
		return false;
	bool ok = true;
	for (size_t i = 0; ok && i < im->count; i++) {
		const struct item *it = &im->items[i];
		struct stat st;
		if (fstatat(dir, it->rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			ok = false;
		else if (it->kind == 'd')
			ok = S_ISDIR(st.st_mode);
		else
			ok = as_manifest_says(&st, it);
	}
	close(dir);
	return ok;
}

static bool load_image(struct image *im)
{
	char *path = join(im->dir, "manifest");
	char *text = slurp(path, NULL);
	free(path);
	bool ok = text && parse_manifest(im, text);
	free(text);
	return ok;
}

static char *image_key(const char *base_key_hex, const char *wheel)
{
	struct stat st;
	if (stat(wheel, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	char *text = xasprintf("%s\n%s\n%lld\n%lld.%09ld", base_key_hex, wheel, (long long)st.st_size,
			       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	char hex[PW_SHA256_HEX_LEN + 1];
	sha256_text(text, strlen(text), hex);
	free(text);
	return xstrndup(hex, 32);
}

/* An image's files were all flushed before this marker was made in its
 * folder (and the folder flushed after): images built by pyward before it
 * flushed them have none, and are flushed once before use. */
#define IMAGE_FLUSHED "flushed"

static pw_err *mark_flushed(const char *dir)
{
	char *path = join(dir, IMAGE_FLUSHED);
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	pw_err *e = fd < 0 ? pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s"), path) : NULL;
	if (fd >= 0)
		close(fd);
	free(path);
	return e ? e : pw_durable_sync_dir(dir);
}

/* An image not known to be flushed (no marker) flushed now, before any
 * environment links to it. */
static pw_err *ensure_flushed(const struct image *im)
{
	char *path = join(im->dir, IMAGE_FLUSHED);
	struct stat st;
	bool known = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
	free(path);
	if (known)
		return NULL;
	pw_err *e = pw_durable_sync_tree(im->dir, false);
	return e ? e : mark_flushed(im->dir);
}

/* Unpack and compile into a private folder, record it, rename into place. */
static pw_err *build_image(const pw_venv_fast_opts *o, struct image *im, const char *wheel)
{
	char *tmp = xasprintf("%s.build-%ld", im->dir, (long)getpid());
	char *site = join(tmp, "site");
	pw_err_free(pw_extract_remove_tree(tmp));
	pw_err *e = NULL;
	if (mkdir(tmp, 0755) < 0 || mkdir(site, 0755) < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s"), site);
	char *out = NULL;
	if (!e) {
		pw_events_log(o->events, PW_LOG_INFO, _("unpacking %s into the box's cache (once)"), wheel);
		const char *argv[] = { o->base, "-I", "-c", image_builder, wheel, site, NULL };
		e = run_base(o, argv, BUILD_S, &out);
	}
	if (!e) {
		out[strcspn(out, "\n")] = '\0';
		im->dist_info = xstrdup(out);
		im->wheel = xstrdup(wheel);
		e = walk_image(im, site, "");
	}
	if (!e) {
		size_t len;
		char *text = manifest_text(im, &len), *mpath = join(tmp, "manifest");
		e = store_file(mpath, text, len);
		free(mpath);
		free(text);
	}
	/* on disk before anything links to it: environments share its files */
	if (!e)
		e = pw_durable_sync_tree(tmp, false);
	if (!e)
		e = mark_flushed(tmp);
	if (!e) {
		/* one that changed goes first; another builder's finished image wins */
		char *old = xasprintf("%s.old-%ld", im->dir, (long)getpid());
		if (rename(im->dir, old) == 0)
			pw_err_free(pw_extract_remove_tree(old));
		free(old);
		if (rename(tmp, im->dir) < 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot move %s into place"), tmp);
		if (!e)
			e = pw_durable_sync_parents(im->dir, NULL);
	}
	if (e)
		pw_err_free(pw_extract_remove_tree(tmp));
	free(out);
	free(site);
	free(tmp);
	return e;
}

/* Build the image again (it was missing, or a file of it was not as its
 * manifest says), and check it. */
static pw_err *rebuild_image(const pw_venv_fast_opts *o, const char *wheel, struct image *im, pw_venv_fast_result *r)
{
	struct stat st;
	r->image_changed = lstat(im->dir, &st) == 0;
	if (r->image_changed)
		pw_events_log(o->events, PW_LOG_WARN, _("the cached pip image %s has changed files; building it again"),
			      im->dir);
	char *keep = im->dir;
	im->dir = NULL;
	image_clear(im);
	im->dir = keep;
	pw_err *e = build_image(o, im, wheel);
	r->image_built = !e;
	if (!e && !image_intact(im))
		e = pw_err_new(PW_ERR_IO, NULL, _("the pip image %s changed while it was built"), im->dir);
	return e;
}

/* The image for this base and wheel, its manifest read (each file is
 * checked against it as it is linked), built when there is none. */
static pw_err *ready_image(const pw_venv_fast_opts *o, const char *bkey, const char *wheel, struct image *im,
			   pw_venv_fast_result *r)
{
	char *ikey = image_key(bkey, wheel);
	if (!ikey)
		return unsupported(_("cannot read the pip wheel %s"), wheel);
	char *dir = venv_cache(o->cache_dir);
	im->dir = xasprintf("%s/pip-%s", dir, ikey);
	free(dir);
	free(ikey);
	return load_image(im) ? ensure_flushed(im) : rebuild_image(o, wheel, im, r);
}

/* An image that cannot be made is a reason to take `-m venv`. */
static pw_err *image_unsupported(pw_err *e)
{
	if (!e || pw_err_code(e) == PW_ERR_CANCELLED || pw_err_code(e) == PW_ERR_TIMEOUT ||
	    pw_err_code(e) == PW_ERR_NOTFOUND)
		return e;
	pw_err *u = unsupported(_("no pip image: %s"), pw_err_message(e));
	pw_err_free(e);
	return u;
}

/* ---------------------------------------------------------------- writing */

struct writer {
	const pw_venv_fast_opts *o;
	json_t *facts;
	const char *tmp;        /* where the environment is built */
	int root;               /* fd of tmp */
	pw_durable_set *made;   /* every folder and file written in tmp, open */
	char *site;             /* relative to the environment */
	size_t files, copied;
	bool changed;           /* a file of the pip image was not as its manifest says */
	char *up;               /* from site-packages to the environment */
	FILE *record;           /* RECORD text being made */
	char *record_text;
	size_t record_len;
};

/* shlex.quote, as venv quotes placeholders for POSIX shells. */
static char *quote_sh(const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") ==
			  strlen(s))
		return xstrdup(s);
	size_t n = 2;
	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 5 : 1;
	char *q = xmalloc(n + 1), *w = q;
	*w++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(w, "'\"'\"'", 5);
			w += 5;
		} else {
			*w++ = *p;
		}
	}
	*w++ = '\'';
	*w = '\0';
	return q;
}

/* PowerShell's single-quoted string. */
static char *quote_ps1(const char *s)
{
	size_t n = 2;
	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 2 : 1;
	char *q = xmalloc(n + 1), *w = q;
	*w++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			*w++ = '\'';
		*w++ = *p;
	}
	*w++ = '\'';
	*w = '\0';
	return q;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Replace every key in text, in place of a new string. */
static char *replace_all(char *text, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value), count = 0;
	for (const char *p = text; (p = strstr(p, key)); p += kl)
		count++;
	if (!count)
		return text;
	char *out = xmalloc(strlen(text) + count * vl + 1), *w = out;
	const char *p = text;
	for (const char *hit; (hit = strstr(p, key)); p = hit + kl) {
		memcpy(w, p, (size_t)(hit - p));
		w += hit - p;
		memcpy(w, value, vl);
		w += vl;
	}
	strcpy(w, p);
	free(text);
	return out;
}

static char *base_name_dup(const char *path)
{
	const char *s = strrchr(path, '/');
	return xstrdup(s ? s + 1 : path);
}

/* venv's install_scripts: each template with its placeholders filled,
 * quoted as the base's venv quotes them, with the template's mode. */
static pw_err *write_scripts(struct writer *w)
{
	const char *target = w->o->target, *bin = jstr(w->facts, "bin");
	bool shlex = strcmp(jstr(w->facts, "quote"), "shlex") == 0;
	char *name = base_name_dup(target);
	char *values[5] = { xstrdup(target), xstrdup(name), xasprintf("(%s) ", name), xstrdup(bin),
			    join(target, jstr(w->facts, "exe")) };
	static const char *const keys[5] = { "__VENV_DIR__", "__VENV_NAME__", "__VENV_PROMPT__",
					     "__VENV_BIN_NAME__", "__VENV_PYTHON__" };
	json_t *known = json_object_get(w->facts, "keys"), *tpl = json_object_get(w->facts, "templates"), *v;
	size_t i;
	pw_err *e = NULL;
	int bindir = openat(w->root, bin, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bindir < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s/%s"), w->tmp, bin);
	json_array_foreach(tpl, i, v) {
		if (e)
			break;
		const char *rel = json_string_value(json_array_get(v, 0));
		const char *src = json_string_value(json_array_get(v, 1));
		struct stat st;
		size_t len;
		char *text = slurp(src, &len);
		if (!text || strlen(text) != len || stat(src, &st) < 0 || strchr(rel, '/')) {
			free(text);
			e = unsupported(_("cannot use the activation script template %s"), src);
			break;
		}
		for (size_t k = 0; k < 5; k++) {
			size_t j;
			json_t *kv;
			bool replaced = false;
			json_array_foreach(known, j, kv) replaced |= strcmp(json_string_value(kv), keys[k]) == 0;
			if (!replaced)
				continue;
			char *q = !shlex ? xstrdup(values[k]) : ends_with(src, ".ps1") ? quote_ps1(values[k])
				: ends_with(src, ".bat") ? xstrdup(values[k]) : quote_sh(values[k]);
			text = replace_all(text, keys[k], q);
			free(q);
		}
		e = write_new_at(w->made, bindir, w->tmp, rel, text, strlen(text), st.st_mode & 07777);
		free(text);
	}
	if (bindir >= 0)
		close(bindir);
	for (size_t k = 0; k < 5; k++)
		free(values[k]);
	free(name);
	return e;
}

/* Folders, links and files as the base's venv made them in its scratch
 * environment (pyvenv.cfg comes last, elsewhere). */
static pw_err *write_tree(struct writer *w)
{
	json_t *tree = json_object_get(w->facts, "tree"), *v;
	size_t i;
	pw_err *e = NULL;
	json_array_foreach(tree, i, v) {
		const char *kind = json_string_value(json_array_get(v, 0));
		const char *rel = json_string_value(json_array_get(v, 1));
		const char *arg = json_string_value(json_array_get(v, 2));
		mode_t mode = (mode_t)json_integer_value(json_array_get(v, 3));
		if (!*rel || rel[0] == '/' || strstr(rel, "..")) {
			e = unsupported(_("the cached description of %s is not usable"), w->o->base);
		} else if (*kind == 'd') {
			e = make_dir_at(w->made, w->root, w->tmp, rel);
		} else if (*kind == 'l') {
			char *target = strstr(arg, ENV_MARK) ? replace_all(xstrdup(arg), ENV_MARK, w->o->target)
				: xstrdup(arg);
			if (symlinkat(target, w->root, rel) < 0)
				e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s/%s"), w->tmp, rel);
			free(target);
		} else if (*kind == 'f') {
			/* base64 from Python's b64encode */
			size_t n = strlen(arg), len = 0;
			unsigned char *data = xmalloc(n / 4 * 3 + 3);
			unsigned long acc = 0;
			int bits = 0;
			for (const char *p = arg; *p && *p != '='; p++) {
				const char *tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
				const char *hit = strchr(tbl, *p);
				if (!hit)
					break;
				acc = acc << 6 | (unsigned long)(hit - tbl);
				bits += 6;
				if (bits >= 8) {
					bits -= 8;
					data[len++] = (unsigned char)(acc >> bits);
				}
			}
			e = write_new_at(w->made, w->root, w->tmp, rel, data, len, mode & 07777);
			free(data);
		}
		if (e)
			break;
	}
	return e;
}

static void record_row(struct writer *w, const char *path, const char *b64, int64_t size)
{
	if (!strpbrk(path, ",\"\r\n")) {
		fputs(path, w->record);
	} else {
		fputc('"', w->record);
		for (const char *s = path; *s; s++) {
			if (*s == '"')
				fputc('"', w->record);
			fputc(*s, w->record);
		}
		fputc('"', w->record);
	}
	if (b64)
		fprintf(w->record, ",sha256=%s,%lld\n", b64, (long long)size);
	else
		fputs(",,\n", w->record);
}

/* A copy with the mode and mtime of the original (its bytecode checks the
 * source's mtime); the source opened is checked first (*changed). */
static pw_err *copy_at(int from_dir, int to_dir, const struct item *it, const char *shown, bool *changed)
{
	int in = openat(from_dir, it->rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0 || !as_manifest_says(&st, it)) {
		*changed = true;
		if (in >= 0)
			close(in);
		return NULL;
	}
	int out = openat(to_dir, it->rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, it->mode);
	pw_err *e = NULL;
	if (out < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot copy %s/%s"), shown, it->rel);
	char buf[64 * 1024];
	for (ssize_t n; !e && (n = read(in, buf, sizeof buf)) != 0;) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || pw_write_all(out, buf, (size_t)n) < 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot copy %s/%s"), shown, it->rel);
	}
	struct timespec times[2] = { it->mtime, it->mtime };
	if (!e && (fchmod(out, it->mode) < 0 || futimens(out, times) < 0))
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot copy %s/%s"), shown, it->rel);
	close(in);
	if (out >= 0 && close(out) < 0 && !e)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot copy %s/%s"), shown, it->rel);
	return e;
}

/* One file of the image into the environment: linked, and the link
 * checked against the manifest; or, once links are refused, copied from
 * a source checked the same way. A file missing from the image or not as
 * its manifest says sets *changed and puts nothing. */
static pw_err *put_file(int from, int to, const struct item *it, const char *img, bool *copy, bool *changed,
			size_t *copied)
{
	struct stat st;
	if (!*copy) {
		if (linkat(from, it->rel, to, it->rel, 0) == 0) {
			*changed = fstatat(to, it->rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !as_manifest_says(&st, it);
			return NULL;
		}
		if (errno == ENOENT) {
			*changed = true;
			return NULL;
		}
		if (errno != EXDEV && errno != EPERM && errno != EMLINK && errno != ENOTSUP)
			return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot link %s/%s"), img, it->rel);
		*copy = true; /* one refusal is enough to know */
	}
	(*copied)++;
	return copy_at(from, to, it, img, changed);
}

/* Files of the image put in place by a few threads at once: each link
 * (and its check) costs the kernel tens of microseconds, and links into
 * different folders do not wait for each other. Items are taken in
 * blocks from a shared counter; the first error or change stops all. */
#define LINK_THREADS 4
#define LINK_BLOCK 32

struct linking {
	const struct image *im;
	const char *img;
	int from, to;
	pthread_mutex_t mu;
	size_t next, copied;
	bool copy, changed;
	pw_err *err;
};

static void *link_worker(void *arg)
{
	struct linking *l = arg;
	size_t copied = 0;
	for (;;) {
		pthread_mutex_lock(&l->mu);
		size_t start = l->err || l->changed ? l->im->count : l->next;
		l->next = start + LINK_BLOCK;
		bool copy = l->copy;
		pthread_mutex_unlock(&l->mu);
		if (start >= l->im->count)
			break;
		size_t end = start + LINK_BLOCK < l->im->count ? start + LINK_BLOCK : l->im->count;
		bool changed = false, was_copy = copy;
		pw_err *e = NULL;
		for (size_t i = start; !e && !changed && i < end; i++)
			if (l->im->items[i].kind == 'f')
				e = put_file(l->from, l->to, &l->im->items[i], l->img, &copy, &changed, &copied);
		pthread_mutex_lock(&l->mu);
		if (copy && !was_copy)
			l->copy = true; /* one refusal is enough to know */
		if (changed)
			l->changed = true;
		if (e && !l->err)
			l->err = e;
		else
			pw_err_free(e);
		pthread_mutex_unlock(&l->mu);
	}
	pthread_mutex_lock(&l->mu);
	l->copied += copied;
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* pip's folders made (in manifest order, parents first), then its files
 * put in place from the image (put_file, on LINK_THREADS threads), each
 * named in RECORD in manifest order. */
static pw_err *link_pip(struct writer *w, const struct image *im, bool *changed)
{
	char *img = join(im->dir, "site");
	int from = open(img, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int to = openat(w->root, w->site, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	pw_err *e = NULL;
	*changed = false;
	if (from < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		*changed = true;
	else if (from < 0 || to < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), from < 0 ? img : w->site);
	char *site = join(w->tmp, w->site);
	for (size_t i = 0; !e && !*changed && i < im->count; i++)
		if (im->items[i].kind == 'd')
			e = make_dir_at(w->made, to, site, im->items[i].rel);
	free(site);
	if (!e && !*changed) {
		struct linking l = { .im = im, .img = img, .from = from, .to = to };
		pthread_mutex_init(&l.mu, NULL);
		pthread_t t[LINK_THREADS - 1];
		size_t started = 0;
		for (size_t i = 1; i < LINK_THREADS; i++)
			if (pthread_create(&t[started], NULL, link_worker, &l) == 0)
				started++;
		link_worker(&l);
		for (size_t i = 0; i < started; i++)
			pthread_join(t[i], NULL);
		pthread_mutex_destroy(&l.mu);
		e = l.err;
		*changed = l.changed;
		w->copied += l.copied;
	}
	for (size_t i = 0; !e && !*changed && i < im->count; i++) {
		const struct item *it = &im->items[i];
		if (it->kind == 'f') {
			w->files++;
			record_row(w, it->rel, it->b64, it->size);
		}
	}
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
	free(img);
	return e;
}

/* bin/pip, bin/pip3, bin/pip3.X; then INSTALLER and RECORD. */
static pw_err *finish_pip(struct writer *w, const struct image *im)
{
	char *text = NULL;
	pw_err *e = pw_pip_launcher_text(w->o->target, &text);
	long major = 3, minor = 0;
	pw_venv_version_parts(jstr(w->facts, "version"), &major, &minor);
	char *names[3] = { xstrdup("pip"), xasprintf("pip%ld", major), xasprintf("pip%ld.%ld", major, minor) };
	const char *bin = jstr(w->facts, "bin");
	int bindir = e ? -1 : openat(w->root, bin, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!e && bindir < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s/%s"), w->tmp, bin);
	char hex[PW_SHA256_HEX_LEN + 1], b64[PW_RECORD_B64_LEN + 1];
	if (!e) {
		sha256_text(text, strlen(text), hex);
		pw_record_b64(hex, b64);
	}
	for (size_t i = 0; !e && i < 3; i++) {
		e = write_new_at(w->made, bindir, w->tmp, names[i], text, strlen(text), 0755);
		char *rel = xasprintf("%s/%s/%s", w->up, bin, names[i]);
		if (!e)
			record_row(w, rel, b64, (int64_t)strlen(text));
		free(rel);
	}
	if (bindir >= 0)
		close(bindir);
	for (size_t i = 0; i < 3; i++)
		free(names[i]);
	free(text);
	static const char installer[] = "pyward\n";
	char *di = xasprintf("%s/%s", w->site, im->dist_info);
	int dir = e ? -1 : openat(w->root, di, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!e && dir < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s/%s"), w->tmp, di);
	if (!e)
		e = write_new_at(w->made, dir, w->tmp, "INSTALLER", installer, strlen(installer), 0644);
	if (!e) {
		char *rel = xasprintf("%s/INSTALLER", im->dist_info);
		sha256_text(installer, strlen(installer), hex);
		pw_record_b64(hex, b64);
		record_row(w, rel, b64, (int64_t)strlen(installer));
		free(rel);
		rel = xasprintf("%s/RECORD", im->dist_info);
		record_row(w, rel, NULL, 0);
		free(rel);
		fflush(w->record);
		e = write_new_at(w->made, dir, w->tmp, "RECORD", w->record_text, w->record_len, 0644);
	}
	if (dir >= 0)
		close(dir);
	free(di);
	return e;
}

static pw_err *write_cfg(struct writer *w)
{
	const char *cfg = jstr(w->facts, w->o->with_pip ? "cfg_with_pip" : "cfg_without_pip");
	char *text = replace_all(xstrdup(cfg), ENV_MARK, w->o->target);
	pw_err *e = write_new_at(w->made, w->root, w->tmp, "pyvenv.cfg", text, strlen(text), 0644);
	free(text);
	return e;
}

/* ---------------------------------------------------------------- create */

/* The environment's files on disk before it gets its name: with delayed
 * allocation a power cut after an unflushed rename can leave files of
 * length zero in an environment that looks whole. pyward wrote every file
 * and folder in tmp, so it flushes them, not the whole file system
 * (DESIGN.md: venv durability): those it holds open, without walking the
 * tree again. pip's files are links to the image, flushed once when it was
 * built; copies of them (the image on another file system) are found by a
 * walk of the tree, files with one name. */
static pw_err *flush_env(struct writer *w)
{
	pw_err *e = pw_durable_set_flush(w->made);
	if (!e && w->copied)
		e = pw_durable_sync_tree(w->tmp, true);
	return pw_venv_not_flushed(e, w->o->target);
}

/* Remove what killed creates of this target left (their pid is gone). */
static void sweep_leftovers(const char *parent, const char *prefix)
{
	DIR *d = opendir(parent);
	size_t n = strlen(prefix);
	for (struct dirent *de; d && (de = readdir(d));) {
		if (strncmp(de->d_name, prefix, n) != 0)
			continue;
		long pid = strtol(de->d_name + n, NULL, 10);
		if (pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
			char *p = join(parent, de->d_name);
			pw_err_free(pw_extract_remove_tree(p));
			free(p);
		}
	}
	if (d)
		closedir(d);
}

static pw_err *build_env(struct writer *w, const struct image *im)
{
	pw_err *e = write_tree(w);
	if (!e)
		e = write_scripts(w);
	pw_stage_mark("venv: tree and scripts written");
	if (!e && im)
		e = link_pip(w, im, &w->changed);
	pw_stage_mark("venv: pip linked");
	if (w->changed)
		return e;
	if (!e && im)
		e = finish_pip(w, im);
	if (!e)
		e = write_cfg(w);
	return e;
}

/* The environment in w->tmp, made from nothing (w->changed says whether
 * the image must be made again first). */
static pw_err *write_env(struct writer *w, const struct image *im)
{
	w->record = open_memstream(&w->record_text, &w->record_len);
	if (!w->record)
		abort(); /* out of memory, as xalloc would */
	if (mkdir(w->tmp, 0777) < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s"), w->tmp);
	if ((w->root = open(w->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), w->tmp);
	w->made = pw_durable_set_new();
	int again = dup(w->root);
	if (again < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), w->tmp);
	pw_durable_set_add(w->made, again, false, w->tmp);
	/* ~135 new folders and files: away from the parent's busy group */
	pw_paths_mark_tree_top(w->root);
	return build_env(w, im);
}

static void writer_reset(struct writer *w)
{
	if (w->root >= 0)
		close(w->root);
	w->root = -1;
	pw_durable_set_free(&w->made);
	if (w->record)
		fclose(w->record);
	w->record = NULL;
	free(w->record_text);
	w->record_text = NULL;
	w->record_len = 0;
	w->files = w->copied = 0;
	w->changed = false;
}

pw_err *pw_venv_fast_create(const pw_venv_fast_opts *o, pw_venv_fast_result *r)
{
	memset(r, 0, sizeof *r);
	pw_stage_mark("venv: fast create begun");
	if (!o->cache_dir || !o->target || o->target[0] != '/')
		return unsupported("%s", _("no cache folder for the fast route"));
	char *bkey = base_key(o->base);
	if (!bkey)
		return unsupported(_("%s is not an ELF executable; its facts are not cached"), o->base);
	json_t *facts = load_facts(o->cache_dir, bkey);
	pw_err *e = NULL;
	if (!facts) {
		r->base_probed = true;
		e = learn_facts(o, bkey, &facts);
	}
	if (!e && !pw_venv_new_enough(jstr(facts, "version")))
		e = unsupported(_("%s is older than Python 3.8"), o->base);
	char *wheel = !e && o->with_pip ? pw_venv_bundled_wheel(jstr(facts, "stdlib")) : NULL;
	if (!e && o->with_pip && !wheel)
		e = unsupported(_("no bundled pip wheel found for %s"), o->base);
	struct image im = { 0 };
	if (!e && o->with_pip)
		e = image_unsupported(ready_image(o, bkey, wheel, &im, r));
	free(bkey);
	pw_stage_mark("venv: facts and pip image ready");
	if (e) {
		free(wheel);
		json_decref(facts);
		image_clear(&im);
		return e;
	}

	char *parent = xstrdup(o->target), *slash = strrchr(parent, '/');
	*(slash == parent ? slash + 1 : slash) = '\0';
	char *name = base_name_dup(o->target);
	char *prefix = xasprintf(".%s.pyward-tmp-", name);
	char *made = pw_venv_first_missing(parent);
	e = pw_paths_mkdirs(parent, 0755);
	sweep_leftovers(parent, prefix);
	char *tmp = xasprintf("%s/%s%ld", parent, prefix, (long)getpid());
	struct writer w = { .o = o, .facts = facts, .tmp = tmp, .root = -1,
			    .site = xstrdup(json_string_value(json_array_get(json_object_get(facts, "site"), 0))) };
	size_t depth = 1;
	for (const char *p = w.site; *p; p++)
		depth += *p == '/';
	w.up = xcalloc(depth, 3);
	for (size_t i = 0; i < depth; i++)
		strcat(w.up, i ? "/.." : "..");
	if (!e)
		e = write_env(&w, o->with_pip ? &im : NULL);
	if (!e && w.changed) {
		/* the image was changed since it was made: that environment is
		 * thrown away, the image made again and the environment too */
		pw_err_free(pw_extract_remove_tree(tmp));
		writer_reset(&w);
		e = image_unsupported(rebuild_image(o, wheel, &im, r));
		if (!e)
			e = write_env(&w, &im);
		if (!e && w.changed)
			e = pw_err_new(PW_ERR_IO, NULL, _("the pip image %s changed while an environment was made from it"),
				       im.dir);
	}
	pw_stage_mark("venv: environment written");
	if (!e)
		e = flush_env(&w);
	pw_stage_mark("venv: environment flushed");
	if (!e && o->gate)
		e = o->gate(o->gate_ud);
	/* rename(2) also replaces an empty folder at target */
	if (!e && rename(tmp, o->target) < 0)
		e = pw_err_errno(errno == ENOTEMPTY || errno == EEXIST ? PW_ERR_REFUSED : PW_ERR_IO, errno, NULL,
				 _("cannot move the new environment to %s"), o->target);
	else if (!e && (e = pw_venv_sync_names(o->target, made)))
		pw_err_free(pw_extract_remove_tree(o->target));
	pw_stage_mark("venv: renamed, names flushed");
	size_t files = w.files, copied = w.copied;
	writer_reset(&w);
	free(wheel);
	if (e) {
		pw_err_free(pw_extract_remove_tree(tmp));
		if (made)
			pw_err_free(pw_extract_remove_tree(made));
	} else {
		r->version = xstrdup(jstr(facts, "version"));
		r->impl = xstrdup(jstr(facts, "impl"));
		r->pip_wheel = o->with_pip ? xstrdup(im.wheel) : NULL;
		r->pip_files = files;
		r->copied = copied;
	}
	free(w.site);
	free(w.up);
	free(tmp);
	free(made);
	free(prefix);
	free(name);
	free(parent);
	image_clear(&im);
	json_decref(facts);
	return e;
}

void pw_venv_fast_result_clear(pw_venv_fast_result *r)
{
	free(r->version);
	free(r->impl);
	free(r->pip_wheel);
	memset(r, 0, sizeof *r);
}
