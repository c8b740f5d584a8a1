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

#endif
