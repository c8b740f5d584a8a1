/* Protocol revisions: see proto.h. */
#include "config.h"

#include "mcp/proto.h"

#include <string.h>

static const char *const names[] = {
	[PW_MCP_2025_03_26] = "2025-03-26",
	[PW_MCP_2025_06_18] = "2025-06-18",
	[PW_MCP_2025_11_25] = "2025-11-25",
	[PW_MCP_2026_07_28] = "2026-07-28",
};

pw_mcp_version pw_mcp_version_parse(const char *s)
{
	for (int v = PW_MCP_2025_03_26; s && v <= PW_MCP_2026_07_28; v++)
		if (strcmp(s, names[v]) == 0)
			return (pw_mcp_version)v;
	return PW_MCP_NONE;
}

const char *pw_mcp_version_name(pw_mcp_version v)
{
	return v >= PW_MCP_2025_03_26 && v <= PW_MCP_2026_07_28 ? names[v] : "none";
}

json_t *pw_mcp_versions_json(void)
{
	json_t *a = json_array();
	for (int v = PW_MCP_2026_07_28; v >= PW_MCP_2025_03_26; v--)
		json_array_append_new(a, json_string(names[v]));
	return a;
}

bool pw_mcp_has_structured(pw_mcp_version v)
{
	return v >= PW_MCP_2025_06_18;
}

bool pw_mcp_has_batches(pw_mcp_version v)
{
	return v == PW_MCP_2025_03_26;
}

bool pw_mcp_is_stateless(pw_mcp_version v)
{
	return v >= PW_MCP_2026_07_28;
}

json_t *pw_mcp_server_info(pw_mcp_version v)
{
	json_t *i = json_pack("{s:s, s:s}", "name", "pyward", "version", PACKAGE_VERSION);
	if (v >= PW_MCP_2025_06_18)
		json_object_set_new(i, "title", json_string("pyward: Python runtimes, environments and a scratchpad"));
	return i;
}
