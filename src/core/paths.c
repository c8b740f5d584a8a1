/*
 * Where things live: choosing the box root and the settings files, making
 * paths absolute, creating directories. All inputs come in through
 * pw_paths_input (not getenv) so the precedence rules can be tested.
 */
#include "config.h"

#include "paths.h"
#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_set(const char *s)
{
	return s && *s;
}

/* Append component [b, b+n) to the path in buf (which holds at least "/"). */
static void append_component(char *buf, size_t *len, const char *b, size_t n)
{
	if (*len > 1)
		buf[(*len)++] = '/';
	memcpy(buf + *len, b, n);
	*len += n;
	buf[*len] = '\0';
}

/* Rebuild absolute path abs without empty and "." components. ".." is kept
 * on purpose: removing it by text would be wrong across symlinks. */
static char *clean_absolute(const char *abs)
{
	char *buf = xmalloc(strlen(abs) + 2);
	size_t len = 1;
	buf[0] = '/';
	buf[1] = '\0';
	for (const char *p = abs; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n && !(n == 1 && p[0] == '.'))
			append_component(buf, &len, p, n);
		p += n;
	}
	return buf;
}

char *pw_paths_absolute(const char *path)
{
	if (!path)
		return NULL;
	if (path[0] == '/')
		return clean_absolute(path);
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	char *joined = xasprintf("%s/%s", cwd, path);
	char *abs = clean_absolute(joined);
	free(joined);
	free(cwd);
	return abs;
}

/* Make *out absolute from path, or say why not (the current directory can
 * have been removed under us). */
static pw_err *absolute_or_err(const char *path, char **out)
{
	*out = pw_paths_absolute(path);
	if (!*out)
		return pw_err_errno(PW_ERR_IO, errno, NULL,
			_("cannot make %s absolute: current directory unknown"), path);
	return NULL;
}

static const char *conf_box_root(const pw_settings *conf)
{
	const char *v = conf ? pw_settings_get(conf, "box_root") : NULL;
	return is_set(v) ? v : NULL;
}

/* The last step: where the box lives when nothing chose it. */
static pw_err *default_box_root(const pw_paths_input *in, char **out)
{
	if (in->uid == 0)
		return absolute_or_err("/var/lib/pyward", out);
	/* The XDG spec says relative values are invalid and must be ignored. */
	if (in->xdg_data_home && in->xdg_data_home[0] == '/') {
		char *p = xasprintf("%s/pyward", in->xdg_data_home);
		pw_err *err = absolute_or_err(p, out);
		free(p);
		return err;
	}
	if (!is_set(in->home))
		return pw_err_new(PW_ERR_FAILED, _("set PYWARD_HOME or pass --box-root"),
			_("cannot choose a box root: HOME is not set"));
	char *p = xasprintf("%s/.local/share/pyward", in->home);
	pw_err *err = absolute_or_err(p, out);
	free(p);
	return err;
}

/* Apply the precedence: sets *v to the chosen value (NULL for the default)
 * and returns its source. */
static const char *choose_box_root(const pw_paths_input *in, const char **v)
{
	*v = in->cli_box_root;
	if (*v)
		return "--box-root";
	*v = is_set(in->env_home) ? in->env_home : NULL;
	if (*v)
		return "PYWARD_HOME";
	*v = conf_box_root(in->system_conf);
	if (*v)
		return "system config";
	*v = conf_box_root(in->user_conf);
	if (*v)
		return "user config";
	return "default";
}

pw_err *pw_paths_box_root(const pw_paths_input *in, char **out, const char **source)
{
	const char *v;
	const char *src = choose_box_root(in, &v);
	*out = NULL;
	/* --box-root '' is a slip (an unset variable in a script), not "unset". */
	if (v && !*v)
		return pw_err_new(PW_ERR_USAGE, _("pass a directory, e.g. --box-root /srv/pyward"),
			_("--box-root is empty"));
	pw_err *err = v ? absolute_or_err(v, out) : default_box_root(in, out);
	if (!err && source)
		*source = src;
	return err;
}

const char *pw_paths_system_config(void)
{
	const char *env = getenv("PYWARD_SYSTEM_CONFIG");
	return is_set(env) ? env : "/etc/pyward.conf";
}

char *pw_paths_user_config(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char *p;
	if (xdg && xdg[0] == '/')
		p = xasprintf("%s/pyward/config", xdg);
	else if (is_set(home))
		p = xasprintf("%s/.config/pyward/config", home);
	else
		return NULL;
	char *abs = pw_paths_absolute(p);
	free(p);
	return abs;
}

char *pw_paths_catalog(const char *box_root)
{
	size_t n = strlen(box_root);
	/* "/" as a box root must not give "//catalog.sqlite3". */
	if (n && box_root[n - 1] == '/')
		return xasprintf("%scatalog.sqlite3", box_root);
	return xasprintf("%s/catalog.sqlite3", box_root);
}

/* Create one directory; an existing directory (or a symlink to one) is
 * fine. mkdir's own error can hide existence (EACCES, EROFS on a parent),
 * so on any failure look at what is there before reporting. */
static pw_err *mkdir_one(const char *dir, mode_t mode)
{
	struct stat st;
	if (mkdir(dir, mode) == 0)
		return NULL;
	int saved = errno;
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return NULL;
		return pw_err_errno(PW_ERR_IO, ENOTDIR, NULL, _("cannot create directory %s"), dir);
	}
	return pw_err_errno(PW_ERR_IO, saved, NULL, _("cannot create directory %s"), dir);
}

pw_err *pw_paths_mkdirs(const char *path, mode_t mode)
{
	if (!is_set(path))
		return pw_err_new(PW_ERR_USAGE, NULL, _("cannot create a directory with an empty name"));
	char *buf = xstrdup(path);
	pw_err *err = NULL;
	/* Walk each '/' after the first character, cutting the string there. */
	for (char *p = buf + 1; !err && *p; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		err = mkdir_one(buf, mode);
		*p = '/';
	}
	if (!err)
		err = mkdir_one(buf, mode);
	free(buf);
	return err;
}

void pw_paths_mark_tree_top(int dirfd)
{
	int flags = 0;
	if (ioctl(dirfd, FS_IOC_GETFLAGS, &flags) < 0 || (flags & FS_TOPDIR_FL))
		return;
	flags |= FS_TOPDIR_FL;
	(void)ioctl(dirfd, FS_IOC_SETFLAGS, &flags);
}
