/* SHA256 through OpenSSL EVP: streaming contexts and whole-file hashing. */
#ifndef PW_DIGEST_H
#define PW_DIGEST_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

#define PW_SHA256_HEX_LEN 64

typedef struct pw_sha256 pw_sha256;

pw_sha256 *pw_sha256_new(void);
void pw_sha256_update(pw_sha256 *h, const void *data, size_t len);
/* Write 64 lower-case hex digits and a NUL into hex (65 bytes); the context
 * may not be updated afterwards. */
void pw_sha256_final_hex(pw_sha256 *h, char hex[PW_SHA256_HEX_LEN + 1]);
void pw_sha256_free(pw_sha256 **h);
/* Hash the first limit bytes of a file (limit < 0: all of it) into h. */
pw_err *pw_sha256_update_file(pw_sha256 *h, const char *path, int64_t limit);
/* Hash a whole file. */
pw_err *pw_sha256_file(const char *path, char hex[PW_SHA256_HEX_LEN + 1], int64_t *size);

#endif
