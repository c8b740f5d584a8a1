/* Fuzz target: the MCP server's fast path for python calls. Every input is
 * one line for the scanner (src/mcp/fastcall.c); whenever it reads one,
 * jansson and the python tool's schema check must read the same call from
 * it (fastcall_oracle.h), or the target aborts. */
/* sources: mcp/fastcall.c mcp/argcheck.c xalloc.c */
#include "config.h"

#include "fastcall_oracle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool scanned;
	const char *why = fastcall_disagreement((const char *)data, size, &scanned);
	if (why) {
		fprintf(stderr, "fast path and jansson disagree: %s\n", why);
		abort();
	}
	return 0;
}
