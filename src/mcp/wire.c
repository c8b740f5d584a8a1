/* stdout framing and stderr logging for the MCP server: see wire.h. */
#include "config.h"

#include "mcp/wire.h"

#include "xalloc.h"
#include "fdwrite.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pw_mcp_wire {
	int fd;
	bool broken;
	pthread_mutex_t lock;
};

pw_mcp_wire *pw_mcp_wire_new(int fd)
{
	pw_mcp_wire *w = xcalloc(1, sizeof *w);
	w->fd = fd;
	pthread_mutex_init(&w->lock, NULL);
	return w;
}

void pw_mcp_wire_free(pw_mcp_wire **w)
{
	if (!*w)
		return;
	pthread_mutex_destroy(&(*w)->lock);
	free(*w);
	*w = NULL;
}

bool pw_mcp_wire_send(pw_mcp_wire *w, const json_t *msg)
{
	/* Compact output escapes every control character inside strings, so
	 * the only newline is the one that ends the message. */
	char *text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		return false;
	size_t n = strlen(text);
	text = xrealloc(text, n + 2);
	text[n] = '\n';
	bool ok = pw_mcp_wire_send_line(w, text, n + 1);
	free(text);
	return ok;
}

bool pw_mcp_wire_send_line(pw_mcp_wire *w, const char *line, size_t len)
{
	pthread_mutex_lock(&w->lock);
	bool ok = !w->broken && pw_write_all(w->fd, line, len) == 0;
	if (!ok)
		w->broken = true;
	pthread_mutex_unlock(&w->lock);
	return ok;
}

void pw_mcp_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "pyward mcp: %s\n", msg);
	free(msg);
}
