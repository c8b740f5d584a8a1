/* Fuzz target: what `pyward mcp` reads from its client. The input goes
 * through the bounded line reader (a small limit, so over-long lines are
 * skipped as they stream by), every line through the JSON parser, and the
 * arguments of anything that looks like a tools/call through the schema
 * check pyenv_install's arguments meet. */
/* sources: mcp/reader.c mcp/argcheck.c xalloc.c */
#include "config.h"

#include "mcp/argcheck.h"
#include "mcp/reader.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char schema_text[] =
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"packages\"], \"properties\": {"
	"\"packages\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"maxItems\": 200},"
	"\"venv\": {\"type\": \"string\", \"minLength\": 1},"
	"\"upgrade\": {\"type\": \"boolean\"}, \"mode\": {\"type\": \"string\", \"enum\": [\"a\", \"b\"]},"
	"\"timeout_ms\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 604800000},"
	"\"depth\": {\"type\": [\"integer\", \"null\"]}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *schema;
	if (!schema)
		schema = json_loads(schema_text, 0, NULL);
	FILE *f = tmpfile();
	if (!f)
		return 0;
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fflush(f);
	rewind(f);
	const size_t limit = 256;
	pw_mcp_reader *r = pw_mcp_reader_new(fileno(f), -1, limit);
	const char *line;
	size_t len, seen = 0;
	pw_mcp_read_status st;
	while ((st = pw_mcp_reader_next(r, &line, &len)) == PW_MCP_READ_LINE || st == PW_MCP_READ_TOO_LONG) {
		if (st == PW_MCP_READ_TOO_LONG) {
			if (len <= limit)
				abort(); /* only a line over the limit is refused */
			seen += len;
			continue;
		}
		if (len > limit || strlen(line) > len)
			abort();
		seen += len;
		json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
		json_t *args = json_object_get(json_object_get(msg, "params"), "arguments");
		if (json_is_object(args)) {
			char *why = pw_mcp_argcheck(schema, args, "arguments");
			if (why && strncmp(why, "arguments", 9) != 0)
				abort(); /* every refusal names the field */
			free(why);
		}
		json_decref(msg);
	}
	if (st != PW_MCP_READ_EOF || seen > size)
		abort();
	pw_mcp_reader_free(&r);
	fclose(f);
	return 0;
}
