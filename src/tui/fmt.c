/* Numbers for people: sizes, rates, durations, times. */
#include "config.h"

#include "tui/fmt.h"

#include "xalloc.h"

#include <stdio.h>
#include <string.h>

void pw_fmt_bytes(int64_t n, char *buf, size_t size)
{
	if (n < 0)
		snprintf(buf, size, "?");
	else if (n < 1000)
		snprintf(buf, size, "%lld B", (long long)n);
	else if (n < 1000000)
		snprintf(buf, size, "%.1f kB", (double)n / 1e3);
	else if (n < 1000000000)
		snprintf(buf, size, "%.1f MB", (double)n / 1e6);
	else
		snprintf(buf, size, "%.2f GB", (double)n / 1e9);
}

void pw_fmt_rate(double r, char *buf, size_t size)
{
	if (!(r > 0)) {
		snprintf(buf, size, "-");
		return;
	}
	char b[32];
	pw_fmt_bytes((int64_t)r, b, sizeof b);
	snprintf(buf, size, "%s/s", b);
}

void pw_fmt_eta(double seconds, char *buf, size_t size)
{
	if (seconds < 0 || seconds > 360000) {
		snprintf(buf, size, "?");
		return;
	}
	long s = (long)(seconds + 0.5);
	if (s >= 3600)
		snprintf(buf, size, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "%ld:%02ld", s / 60, s % 60);
}

void pw_fmt_time(const char *iso, char *buf, size_t size)
{
	if (!iso || strlen(iso) < 19) {
		snprintf(buf, size, "%s", iso ? iso : "-");
		return;
	}
	snprintf(buf, size, "%.10s %.8s", iso, iso + 11);
}

const char *pw_fmt_under(const char *path, const char *base)
{
	if (!path || !base || !*base)
		return path;
	size_t n = strlen(base);
	while (n > 1 && base[n - 1] == '/')
		n--;
	if (strncmp(path, base, n) != 0)
		return path;
	if (path[n] == '\0')
		return ".";
	if (n == 1 && base[0] == '/')
		return path[1] ? path + 1 : ".";
	if (path[n] != '/')
		return path;
	const char *rest = path + n;
	while (*rest == '/')
		rest++;
	return *rest ? rest : ".";
}

void pw_fmt_digest_short(const char *hex, int width, const char *mark, char *buf, size_t size)
{
	size_t n = hex ? strlen(hex) : 0;
	if (!hex)
		snprintf(buf, size, "-");
	else if (n <= 21 || (int)n <= width)
		snprintf(buf, size, "%s", hex);
	else
		snprintf(buf, size, "%.12s%s%s", hex, mark, hex + n - 8);
}

char *pw_fmt_url_short(const char *url, int width, const char *mark)
{
	if (!url)
		return xstrdup("-");
	const char *host = strstr(url, "://");
	host = host ? host + 3 : url;
	const char *path = strchr(host, '/');
	const char *last = strrchr(url, '/');
	/* only a URL with parts between its host and its last part can lose them */
	if ((int)strlen(url) <= width || !path || last == path)
		return xstrdup(url);
	return xasprintf("%.*s%s%s", (int)(path + 1 - url), url, mark, last);
}
