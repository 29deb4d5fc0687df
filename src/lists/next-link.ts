import type { Request } from "express";

/**
 * The `Link: <…>; rel="next"` header of a page (RFC 8288), written the same
 * way for every paged route: the target is relative to the requested URL (its
 * last path segment and the next page's query), so that it stays right behind
 * a path prefix; a client resolves it against the URL it asked.
 */
export function nextLink(req: Request, query: string): string {
  const path = req.originalUrl.split("?")[0]!;
  return `<${path.slice(path.lastIndexOf("/") + 1)}?${query}>; rel="next"`;
}
