/*
 * The MCP revisions this server speaks and what differs between them.
 * Legacy revisions open a session with `initialize`; the 2026-07-28
 * revision is stateless: every request carries its version and the
 * client's capabilities in _meta (DESIGN.md, "Agent surface").
 */
#ifndef PW_MCP_PROTO_H
#define PW_MCP_PROTO_H

#include <jansson.h>
#include <stdbool.h>

typedef enum pw_mcp_version {
	PW_MCP_NONE = 0,
	PW_MCP_2025_03_26,
	PW_MCP_2025_06_18,
	PW_MCP_2025_11_25,
	PW_MCP_2026_07_28,
} pw_mcp_version;

#define PW_MCP_LATEST_LEGACY PW_MCP_2025_11_25

/* _meta keys of the stateless revision (2026-07-28, basic/index "_meta"). */
#define PW_MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define PW_MCP_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define PW_MCP_META_CLIENT "io.modelcontextprotocol/clientInfo"
#define PW_MCP_META_SERVER "io.modelcontextprotocol/serverInfo"

pw_mcp_version pw_mcp_version_parse(const char *s); /* PW_MCP_NONE when unknown */
const char *pw_mcp_version_name(pw_mcp_version v);
/* Every version served, newest first. */
json_t *pw_mcp_versions_json(void);

/* Tool results carry structuredContent, tools an outputSchema and a title (2025-06-18 on). */
bool pw_mcp_has_structured(pw_mcp_version v);
/* JSON-RPC batches are part of 2025-03-26 only (removed in 2025-06-18). */
bool pw_mcp_has_batches(pw_mcp_version v);
/* Results carry resultType and _meta serverInfo; server-to-client requests
 * become input_required results (MRTR). */
bool pw_mcp_is_stateless(pw_mcp_version v);

/* {name, version[, title]} of this server for v. */
json_t *pw_mcp_server_info(pw_mcp_version v);

#endif
