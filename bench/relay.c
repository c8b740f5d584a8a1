/*
 * The cheapest relay there is, for bench/mcp.sh: it starts PROGRAM on a
 * pair of pipes and passes each line from its stdin to PROGRAM and each
 * line PROGRAM answers back to its stdout, with blocking reads and no
 * other work (no poll, no parsing). Timed between a client and the
 * floor's Python loop, it shows what one hop between processes costs on
 * this machine: the part of an MCP server's round trip no server code can
 * remove.
 *   relay PROGRAM [ARG...]
 */
#include "rtt_client.h"

/* Copy from fd to out until a newline has passed (buf keeps what was read
 * past it, *have its length); false at end of input or on an error. */
static bool pass_line(int fd, int out, char *buf, size_t cap, size_t *have)
{
	for (;;) {
		char *nl = memchr(buf, '\n', *have);
		if (nl) {
			size_t n = (size_t)(nl - buf) + 1;
			if (!rtt_send(out, buf, n))
				return false;
			memmove(buf, buf + n, *have - n);
			*have -= n;
			return true;
		}
		if (*have == cap) { /* a line longer than the buffer goes on in pieces */
			if (!rtt_send(out, buf, *have))
				return false;
			*have = 0;
		}
		ssize_t k = read(fd, buf + *have, cap - *have);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		*have += (size_t)k;
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: relay PROGRAM [ARG...]\n");
		return 2;
	}
	int to;
	FILE *from;
	if (rtt_spawn(argv + 1, &to, &from) < 0)
		return 1;
	int back = fileno(from);
	static char in[65536], out[65536];
	size_t have_in = 0, have_out = 0;
	while (pass_line(0, to, in, sizeof in, &have_in) && pass_line(back, 1, out, sizeof out, &have_out))
		;
	close(to);
	fclose(from);
	return 0;
}
