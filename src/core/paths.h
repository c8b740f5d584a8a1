/*
 * Where things live. The box root (shared by every user and workspace of a
 * machine) is chosen in this order: --box-root, $PYWARD_HOME, box_root in
 * the system settings file (/etc/pyward.conf, or $PYWARD_SYSTEM_CONFIG),
 * box_root in the user settings file ($XDG_CONFIG_HOME/pyward/config), then
 * /var/lib/pyward for root, else $XDG_DATA_HOME/pyward (default
 * ~/.local/share/pyward).
 */
#ifndef PW_PATHS_H
#define PW_PATHS_H

#include "err.h"
#include "settings.h"

#include <sys/types.h>

typedef struct pw_paths_input {
	const char *cli_box_root;       /* --box-root, or NULL */
	const char *env_home;           /* $PYWARD_HOME, or NULL */
	const pw_settings *system_conf; /* may be NULL */
	const pw_settings *user_conf;   /* may be NULL */
	uid_t uid;
	const char *xdg_data_home;      /* $XDG_DATA_HOME, or NULL */
	const char *home;               /* $HOME, or NULL */
} pw_paths_input;

/* Choose the box root. *out is a malloc'd absolute path (made absolute
 * against the current directory when given relative); *source (static text)
 * names where it came from: "--box-root", "PYWARD_HOME", a settings origin
 * is not kept here, so "system config", "user config", "default". */
pw_err *pw_paths_box_root(const pw_paths_input *in, char **out, const char **source);

/* Path of the system settings file: $PYWARD_SYSTEM_CONFIG or /etc/pyward.conf. */
const char *pw_paths_system_config(void);
/* Path of the user settings file: $XDG_CONFIG_HOME/pyward/config or
 * ~/.config/pyward/config; malloc'd, NULL when no home is known. */
char *pw_paths_user_config(void);
/* Make path absolute against the current directory (no symlink resolution). */
char *pw_paths_absolute(const char *path);
/* mkdir -p with mode for each created component. */
pw_err *pw_paths_mkdirs(const char *path, mode_t mode);
/* "<box>/catalog.sqlite3" */
char *pw_paths_catalog(const char *box_root);

/* Mark the folder open as DIRFD the top of a new tree of folders (the
 * 'T' attribute of chattr(1)): ext2/3/4 then place the folders made inside
 * it, and below them their files, in a block group of their own instead of
 * beside the parent folder. pyward makes whole trees (an environment) in
 * folders where many files come and go (a workspace, /tmp), and on ext4
 * without a journal every new inode is placed only after skipping the
 * group's free inodes deleted in the last seconds (minutes while their
 * table is not written back): 0.2-0.6 ms per new folder or file on this
 * project's machines. A hint: where it is not supported, nothing changes. */
void pw_paths_mark_tree_top(int dirfd);

#endif
