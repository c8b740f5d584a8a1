/* Rendering helpers for the CLI. */
#include "config.h"

#include "cli/render.h"

#include "fetch.h"
#include "i18n.h"
#include "pipclass.h"
#include "redact.h"
#include "visible.h"
#include "xalloc.h"

#include <langinfo.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

void pw_render_duration(int64_t ms, char *buf, size_t size)
{
	if (ms < 0)
		snprintf(buf, size, "-");
	else if (ms < 1000)
		snprintf(buf, size, "%dms", (int)ms);
	else if (ms < 60000)
		snprintf(buf, size, "%.1fs", (double)ms / 1000.0);
	else if (ms < 3600000)
		snprintf(buf, size, "%dm%02ds", (int)(ms / 60000), (int)(ms / 1000 % 60));
	else
		snprintf(buf, size, "%dh%02dm", (int)(ms / 3600000), (int)(ms / 60000 % 60));
}

void pw_render_time(const char *iso, char *buf, size_t size)
{
	if (!iso || strlen(iso) < 19) {
		snprintf(buf, size, "%s", iso ? iso : "-");
		return;
	}
	snprintf(buf, size, "%.10s %.8s", iso, iso + 11);
}

static bool needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *s))
			return true;
	return false;
}

/* Options whose value is a URL or proxy: any userinfo in it is hidden,
 * a bare "token@host" too. */
static bool url_option(const char *arg)
{
	static const char *const names[] = { "--index", "--proxy", "--mirror", "--index-url", "-i",
					     "--extra-index-url", "--find-links", "-f" };
	size_t n = strcspn(arg, "=");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == n && strncmp(arg, names[i], n) == 0)
			return true;
	return false;
}

/* One argument as recorded and shown (redact.h). */
static char *arg_shown(const char *prev, const char *arg)
{
	if (prev && url_option(prev) && !strchr(prev, '='))
		return pw_redact_url(arg);
	if (url_option(arg) && strchr(arg, '=')) {
		char *v = pw_redact_url(strchr(arg, '=') + 1);
		char *out = xasprintf("%.*s=%s", (int)strcspn(arg, "="), arg, v);
		free(v);
		return out;
	}
	return pw_redact_text(arg);
}

/* The command line is recorded in the catalog: no URL's or proxy's
 * user:password@ is kept. */
char *pw_render_cmdline(int argc, char *const *argv)
{
	/* "***" may be longer than what it hides: size from the shown forms. */
	char **shown = xcalloc((size_t)argc + 1, sizeof *shown);
	size_t cap = 1;
	for (int i = 0; i < argc; i++) {
		shown[i] = arg_shown(i ? argv[i - 1] : NULL, argv[i]);
		cap += strlen(shown[i]) * 4 + 3;
	}
	char *out = xmalloc(cap), *p = out;
	for (int i = 0; i < argc; i++) {
		char *arg = shown[i];
		if (i)
			*p++ = ' ';
		if (!needs_quotes(arg)) {
			p = stpcpy(p, arg);
			free(arg);
			continue;
		}
		*p++ = '\'';
		for (const char *s = arg; *s; s++)
			p = *s == '\'' ? stpcpy(p, "'\\''") : (*p++ = *s, p);
		*p++ = '\'';
		free(arg);
	}
	*p = '\0';
	free(shown);
	return out;
}

static bool locale_is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

/* Decode one character; invalid bytes count as one '?' column. */
static size_t next_char(const char *s, size_t len, mbstate_t *st, int *width)
{
	wchar_t wc;
	size_t n = mbrtowc(&wc, s, len, st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		memset(st, 0, sizeof *st);
		*width = 1;
		return 1;
	}
	int w = wcwidth(wc);
	*width = w < 0 ? 1 : w;
	return n;
}

static int display_width(const char *text)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t len = strlen(text), pos = 0;
	int cols = 0, w;
	while (pos < len) {
		pos += next_char(text + pos, len - pos, &st, &w);
		cols += w;
	}
	return cols;
}

/* Escaped copies handed out in turn: a printf may take several. */
#define SAFE_RING 32

const char *pw_render_safe(const char *s)
{
	static char *ring[SAFE_RING];
	static unsigned next;
	if (!s)
		return NULL;
	unsigned i = next++ % SAFE_RING;
	free(ring[i]);
	ring[i] = pw_visible(s);
	return ring[i];
}

/* Width-aware cut: counts display columns, never splits a character. */
void pw_render_cell(FILE *out, const char *text, int width, int right_align)
{
	if (!text)
		text = "-";
	text = pw_render_safe(text);
	int total = display_width(text);
	if (total <= width) {
		if (right_align)
			fprintf(out, "%*s%s", width - total, "", text);
		else
			fprintf(out, "%s%*s", text, width - total, "");
		return;
	}
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t len = strlen(text), pos = 0;
	int cols = 0, w;
	while (pos < len) {
		size_t n = next_char(text + pos, len - pos, &st, &w);
		if (cols + w > width - 1)
			break;
		cols += w;
		pos += n;
	}
	fwrite(text, 1, pos, out);
	fputs(locale_is_utf8() ? "\xe2\x80\xa6" : "~", out);
	fprintf(out, "%*s", width - 1 - cols, "");
}

int pw_render_json(FILE *out, json_t *j)
{
	int rc = j ? json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
	json_decref(j);
	fputc('\n', out);
	return rc == 0 ? 0 : 1;
}


void pw_render_indented(const char *text, const char *indent)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		char *line = xstrndup(p, (size_t)len);
		printf("%s%s\n", indent, pw_render_safe(line));
		free(line);
		p += len + (nl ? 1 : 0);
	}
}

void pw_cli_print_attempts(const pw_pip_result *res)
{
	for (size_t i = 0; i < res->count; i++) {
		const pw_pip_attempt *a = &res->attempts[i];
		char dur[16];
		pw_render_duration(a->duration_ms, dur, sizeof dur);
		fprintf(stderr, _("attempt %zu: %s%s%s -> %s (exit %d, %s)\n"), i + 1,
			a->index ? pw_render_safe(a->index) : _("default index"), a->proxy ? _(" via ") : "",
			a->proxy ? pw_render_safe(a->proxy) : "",
			a->stopped ? _("stopped") : pw_pipclass_name(a->klass), a->exit_code, dur);
	}
}
