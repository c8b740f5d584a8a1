/*
 * Tool arguments checked against the tool's inputSchema before it runs,
 * so a bad call is refused with an invalid-params error naming the field.
 * The subset of JSON Schema 2020-12 pyward's own schemas use: type (one or
 * a list), properties, required, additionalProperties false, items, enum,
 * minimum, maximum, minLength, maxLength, minItems, maxItems.
 */
#ifndef PW_MCP_ARGCHECK_H
#define PW_MCP_ARGCHECK_H

#include <jansson.h>

/* NULL when value fits schema, else a malloc'd message naming the field
 * ("arguments.packages[1]: expected a string"). */
char *pw_mcp_argcheck(const json_t *schema, json_t *value, const char *path);

#endif
