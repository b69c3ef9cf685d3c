// The MCP protocol versions this tool server speaks (spec: Versioning, "Tool-protocol versions"), newest
// first. The SDK would also accept 2025-11-25 and 2024-10-07; the spec names these three, so a client
// asking for any other version is answered with the newest of ours, as MCP version negotiation requires.

export const MCP_PROTOCOL_VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05"] as const;

/** `serverInfo.version` at `initialize` (spec: "Tool-server version"). */
export const MCP_SERVER_VERSION = "1.1.0";

export function negotiateProtocolVersion(requested: string): string {
  return (MCP_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : MCP_PROTOCOL_VERSIONS[0];
}

export function isSupportedProtocolVersion(version: string): boolean {
  return (MCP_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}
