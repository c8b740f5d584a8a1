/* Callers of the HTTP API: peer credentials and bearer tokens (auth.h). */
#include "config.h"

#include "api/auth.h"

#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum { DIGEST_LEN = 32, MIN_TOKEN = 16, MAX_FILE = 64 * 1024 };

typedef struct token {
	char *name;
	unsigned char digest[DIGEST_LEN];
} token;

struct pw_api_tokens {
	token *items;
	size_t count;
};

/* Tokens are compared as SHA-256 digests: equal lengths, so the time a
 * comparison takes says nothing about the token's length either. */
static void digest_of(const char *s, size_t n, unsigned char out[DIGEST_LEN])
{
	unsigned int len = DIGEST_LEN;
	EVP_Digest(s, n, out, &len, EVP_sha256(), NULL);
}

static pw_err *check_file(int fd, const char *path)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read %s"), path);
	if (!S_ISREG(st.st_mode))
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s is not a regular file"), path);
	if ((st.st_mode & 0027) != 0 || (st.st_uid != getuid() && st.st_uid != 0))
		return pw_err_new(PW_ERR_REFUSED, _("chmod 600 the file (owned by you or root)"),
				  _("the token file %s may be read or changed by others"), path);
	if (st.st_size > MAX_FILE)
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s is too large for a token file"), path);
	return NULL;
}

static bool name_ok(const char *n)
{
	for (const char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.' || *p == '@'))
			return false;
	return *n != '\0' && strlen(n) <= 64;
}

static pw_err *add_line(pw_api_tokens *t, const char *path, size_t lineno, char *line)
{
	char *save = NULL;
	char *name = strtok_r(line, " \t", &save);
	if (!name || *name == '#')
		return NULL;
	char *tok = strtok_r(NULL, " \t", &save);
	char *extra = strtok_r(NULL, " \t", &save);
	if (!tok || extra || !name_ok(name))
		return pw_err_new(PW_ERR_USAGE, _("each line: NAME TOKEN (name: letters, digits, - _ . @)"),
				  _("%s:%zu: not a token line"), path, lineno);
	if (strlen(tok) < MIN_TOKEN)
		return pw_err_new(PW_ERR_USAGE, _("use at least 16 random characters, e.g. openssl rand -hex 32"),
				  _("%s:%zu: the token of %s is too short"), path, lineno, name);
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(t->items[i].name, name) == 0)
			return pw_err_new(PW_ERR_USAGE, NULL, _("%s:%zu: the name %s is used twice"), path, lineno, name);
	t->items = xrealloc(t->items, (t->count + 1) * sizeof *t->items);
	token *k = &t->items[t->count++];
	k->name = xstrdup(name);
	digest_of(tok, strlen(tok), k->digest);
	OPENSSL_cleanse(tok, strlen(tok));
	return NULL;
}

static pw_err *parse(pw_api_tokens *t, const char *path, char *text)
{
	size_t lineno = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		size_t n = strlen(line);
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		pw_err *e = add_line(t, path, lineno, line);
		if (e)
			return e;
	}
	if (t->count == 0)
		return pw_err_new(PW_ERR_USAGE, _("each line: NAME TOKEN"), _("%s holds no tokens"), path);
	return NULL;
}

pw_err *pw_api_tokens_load(const char *path, pw_api_tokens **out)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return pw_err_errno(PW_ERR_USAGE, errno, NULL, _("cannot open the token file %s"), path);
	pw_err *e = check_file(fd, path);
	char *text = xcalloc(1, MAX_FILE + 1);
	ssize_t n = e ? 0 : read(fd, text, MAX_FILE);
	if (!e && n < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read %s"), path);
	close(fd);
	pw_api_tokens *t = xcalloc(1, sizeof *t);
	if (!e)
		e = parse(t, path, text);
	OPENSSL_cleanse(text, MAX_FILE);
	free(text);
	if (e)
		pw_api_tokens_free(&t);
	*out = t;
	return e;
}

void pw_api_tokens_free(pw_api_tokens **t)
{
	if (!t || !*t)
		return;
	for (size_t i = 0; i < (*t)->count; i++)
		free((*t)->items[i].name);
	free((*t)->items);
	free(*t);
	*t = NULL;
}

size_t pw_api_tokens_count(const pw_api_tokens *t)
{
	return t ? t->count : 0;
}

const char *pw_api_tokens_match(const pw_api_tokens *t, const char *authorization)
{
	if (!t || !authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return NULL;
	const char *tok = authorization + 7;
	while (*tok == ' ')
		tok++;
	unsigned char d[DIGEST_LEN];
	digest_of(tok, strlen(tok), d);
	/* Every token is compared, so the time does not say which matched. */
	const char *found = NULL;
	for (size_t i = 0; i < t->count; i++) {
		int diff = CRYPTO_memcmp(d, t->items[i].digest, DIGEST_LEN);
		if (diff == 0 && !found)
			found = t->items[i].name;
	}
	return found;
}

bool pw_api_peer_cred(int fd, uid_t *uid, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return false;
	*uid = cr.uid;
	*pid = cr.pid;
	return true;
}
