/* Numbers for people in the full-screen interface: sizes, rates, times. Pure. */
#ifndef PW_TUI_FMT_H
#define PW_TUI_FMT_H

#include <stddef.h>
#include <stdint.h>

/* "812 B", "12.3 kB", "45.6 MB", "1.2 GB"; "?" when negative. */
void pw_fmt_bytes(int64_t n, char *buf, size_t size);
/* "1.2 MB/s"; "-" when not positive. */
void pw_fmt_rate(double bytes_per_s, char *buf, size_t size);
/* "0:42", "12:05", "1:02:03"; "?" when negative. */
void pw_fmt_eta(double seconds, char *buf, size_t size);
/* A catalog time "2026-12-02T19:38:04.123Z" as "2026-12-02 19:38:04". */
void pw_fmt_time(const char *iso, char *buf, size_t size);
/* PATH as shown beside BASE: the part under BASE ("envs/.venv"), "." for
 * BASE itself, else PATH unchanged. Points into PATH (or a literal). */
const char *pw_fmt_under(const char *path, const char *base);

/* A hex digest too long for width columns as its first 12 and last 8
 * digits around mark ("d63b69e3a451…c01d42b7f"): enough to compare with a
 * published hash by eye. Shorter ones, or ones that fit, unchanged. */
void pw_fmt_digest_short(const char *hex, int width, const char *mark, char *buf, size_t size);
/* A URL too long for width columns as its scheme and host, mark and its
 * last path part ("https://host:8443/" mark "/cpython-3.12.7-...tar.gz"):
 * where it comes from and what it is. Others unchanged. Returns a new string. */
char *pw_fmt_url_short(const char *url, int width, const char *mark);

#endif
