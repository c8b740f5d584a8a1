/* SHA256 through OpenSSL 3 EVP (the SHA256_* calls are deprecated). */
#include "config.h"

#include "digest.h"
#include "i18n.h"
#include "xalloc.h"

#include <openssl/evp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define READ_CHUNK 65536

struct pw_sha256 {
	EVP_MD_CTX *ctx;
};

/* EVP only fails here when it cannot allocate; like xalloc, treat that as fatal. */
static void evp_check(int ok)
{
	if (!ok)
		abort();
}

pw_sha256 *pw_sha256_new(void)
{
	pw_sha256 *h = xmalloc(sizeof *h);
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx)
		abort();
	evp_check(EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL));
	return h;
}

void pw_sha256_update(pw_sha256 *h, const void *data, size_t len)
{
	if (len)
		evp_check(EVP_DigestUpdate(h->ctx, data, len));
}

void pw_sha256_final_hex(pw_sha256 *h, char hex[PW_SHA256_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	evp_check(EVP_DigestFinal_ex(h->ctx, md, &n));
	for (unsigned int i = 0; i < n && i < PW_SHA256_HEX_LEN / 2; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[PW_SHA256_HEX_LEN] = '\0';
}

void pw_sha256_free(pw_sha256 **h)
{
	if (!h || !*h)
		return;
	EVP_MD_CTX_free((*h)->ctx);
	free(*h);
	*h = NULL;
}

/* Feed up to limit bytes (limit < 0: to the end) of fd into h; *got counts them. */
static int hash_fd(pw_sha256 *h, int fd, int64_t limit, int64_t *got)
{
	unsigned char *buf = xmalloc(READ_CHUNK);
	int rc = 0;
	*got = 0;
	while (limit < 0 || *got < limit) {
		size_t want = READ_CHUNK;
		if (limit >= 0 && limit - *got < (int64_t)want)
			want = (size_t)(limit - *got);
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = errno;
			break;
		}
		if (n == 0)
			break;
		pw_sha256_update(h, buf, (size_t)n);
		*got += n;
	}
	free(buf);
	return rc;
}

pw_err *pw_sha256_update_file(pw_sha256 *h, const char *path, int64_t limit)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), path);
	int64_t got = 0;
	int rc = hash_fd(h, fd, limit, &got);
	close(fd);
	if (rc)
		return pw_err_errno(PW_ERR_IO, rc, NULL, _("cannot read %s"), path);
	/* A short file means it changed under us: the hash would be of the wrong bytes. */
	if (limit >= 0 && got < limit)
		return pw_err_new(PW_ERR_IO, NULL, _("%s has %lld bytes, expected at least %lld"), path,
				  (long long)got, (long long)limit);
	return NULL;
}

pw_err *pw_sha256_file(const char *path, char hex[PW_SHA256_HEX_LEN + 1], int64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), path);
	pw_sha256 *h = pw_sha256_new();
	int64_t got = 0;
	int rc = hash_fd(h, fd, -1, &got);
	close(fd);
	if (rc) {
		pw_sha256_free(&h);
		return pw_err_errno(PW_ERR_IO, rc, NULL, _("cannot read %s"), path);
	}
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
	if (size)
		*size = got;
	return NULL;
}
