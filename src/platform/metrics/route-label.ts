// The `route` label of an HTTP request, bounded whatever the path: a REST route template
// (`/v1/services/{sku_id}`), a known RPC path (`/svc.catalog.v1.CatalogService/ListServices`), an agent
// front's prefix (`/mcp`), or `unmatched`. Labels of recent paths are memoised (the table match is a
// scan of regexes).

export interface RouteLabelSources {
  /** The REST route template for a method and path, if any route has that path. */
  restTemplate: (method: string, path: string) => string | undefined;
  rpcPaths: ReadonlySet<string>;
  frontPrefixes: readonly string[];
}

const MEMO_LIMIT = 10_000;

export function routeLabeler(s: RouteLabelSources): (method: string, path: string) => string {
  const memo = new Map<string, string>();
  return (method, path) => {
    const key = `${method} ${path}`;
    let label = memo.get(key);
    if (label !== undefined) return label;
    if (s.rpcPaths.has(path)) label = path;
    else label = s.frontPrefixes.find((p) => path === p || path.startsWith(`${p}/`)) ?? s.restTemplate(method, path) ?? "unmatched";
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(key, label);
    return label;
  };
}
