/*
 * Redaction: the one place that decides what of a URL-like or proxy value
 * is a secret. The userinfo ("user:password@") of every such value becomes
 * "***@"; scheme, host, port, path and query stay as written, so a record
 * still says where pyward went.
 *
 * Forms understood, in text or as a single value:
 *   scheme://user:pass@host...        (also passwords holding '/', '?' or '#')
 *   user:pass@host:port               (no scheme: curl and pip accept it)
 *   --proxy=user:pass@host, https_proxy=user:pass@host   (NAME= or --opt= first)
 * A path ("/srv/user@host.tar.gz") and a URL with '@' in its path only
 * ("https://host/p@v") are left alone. Text after a URL is scanned on, so a
 * whole command line, log line or error message can be passed.
 */
#ifndef PW_REDACT_H
#define PW_REDACT_H

/* Free text: every URL-like token's userinfo hidden. A schemeless token is
 * taken as "user:pass@host" only with a ':' before its '@'. Never NULL;
 * NULL in gives "". */
char *pw_redact_text(const char *text);
/* One value known to be a URL, index or proxy: any userinfo is hidden,
 * a bare "user@" too. Never NULL; NULL in gives "". */
char *pw_redact_url(const char *value);

#endif
