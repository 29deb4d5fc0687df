import type { ApiClient } from "./client.js";
import { ApiError, orThrow } from "./errors.js";
import type { paths } from "./schema.js";

/** The list routes: the GETs that take limit, cursor and since. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { parameters: { query?: { since?: string; limit?: number; cursor?: string } } } }
    ? "since" extends keyof NonNullable<paths[P]["get"]["parameters"]["query"]>
      ? P
      : never
    : never;
}[keyof paths];
/** A row of a list. */
export type ListRow<P extends ListPath> = paths[P]["get"]["responses"][200]["content"]["application/json"] extends readonly (infer Row)[] ? Row : never;
/** The list's own parameters (gradeId), without limit, cursor and since, which the helpers set. */
export type ListQuery<P extends ListPath> = Omit<NonNullable<paths[P]["get"]["parameters"]["query"]>, "limit" | "cursor" | "since">;

type Get = (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export interface Page<T> {
  rows: T[];
  /** The walk's Sync-Token (every page carries the first page's): keep it once the walk is over. */
  syncToken: string;
}

/**
 * The pages of a list, one request each (`limit` rows, 1 to 1000, default 1000), following the Link
 * header's next cursor until the last page. Pages never skip nor repeat a row, even while rows are
 * added; `since` (a Sync-Token) walks only the rows changed since. A failure is thrown as an ApiError.
 *
 *   for await (const page of walkPages(api, "/player/get-all-players")) save(page.rows);
 */
export async function* walkPages<P extends ListPath>(
  api: ApiClient,
  path: P,
  options: { query?: ListQuery<P>; limit?: number; since?: string } = {},
): AsyncGenerator<Page<ListRow<P>>, void, undefined> {
  // One call for every path of the union: openapi-fetch cannot check a path that is a type parameter.
  const get = api.GET as unknown as Get;
  let cursor: string | undefined;
  do {
    const query = { ...options.query, limit: options.limit ?? 1000, ...(options.since ? { since: options.since } : {}), ...(cursor ? { cursor } : {}) };
    const result = await get(path, { params: { query } });
    const rows = orThrow(result) as ListRow<P>[];
    const syncToken = result.response.headers.get("Sync-Token");
    if (syncToken === null) throw ApiError.of(result.response, { message: "the answer has no Sync-Token" });
    cursor = nextCursor(result.response);
    yield { rows, syncToken };
  } while (cursor !== undefined);
}

/** The cursor of the Link header's rel="next" URL (a reference relative to the URL asked); undefined on the last page. */
function nextCursor(response: Response): string | undefined {
  const link = /<([^>]*)>\s*;\s*rel="?next"?/.exec(response.headers.get("Link") ?? "");
  if (!link) return undefined;
  return new URL(link[1]!, response.url || "http://relative.invalid/").searchParams.get("cursor") ?? undefined;
}

export interface SyncResult<T> {
  /** True when the whole list was read: the first sync, or after a 410 (the token could no longer be answered). */
  full: boolean;
  /** The rows received (on a full sync, every row); already in `rows`. */
  changed: T[];
}

/**
 * A cache of a list kept fresh by change: the first `sync()` reads the whole list (in pages), each
 * next one only the rows inserted or changed since the last (the Sync-Token protocol), and upserts
 * them by `key`. A row may come twice (at least once): upserting makes that harmless. When the
 * service answers 410 (rows were deleted since, or another database), the cache is rebuilt from the
 * whole list. On a filtered list (gradeId, the active items) a sync sends every changed row: pass
 * `keep` to drop the rows that no longer belong (checked on every sync, so that time-bound rows
 * leave the cache when their time passes).
 *
 *   const players = new ListSync(api, "/player/get-all-players", { key: (p) => p.id });
 *   setInterval(() => players.sync(), 10_000); // players.rows: Map id → PlayerSummary
 */
export class ListSync<P extends ListPath> {
  readonly rows = new Map<string | number, ListRow<P>>();
  /** The Sync-Token of the last sync; keep it across restarts (with the rows) to resume from it. */
  token: string | undefined;

  constructor(
    private readonly api: ApiClient,
    private readonly path: P,
    private readonly options: {
      key: (row: ListRow<P>) => string | number;
      query?: ListQuery<P>;
      keep?: (row: ListRow<P>) => boolean;
      limit?: number;
    },
  ) {}

  async sync(): Promise<SyncResult<ListRow<P>>> {
    if (this.token !== undefined) {
      try {
        return { full: false, changed: await this.read(this.token) };
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 410)) throw error;
      }
    }
    this.rows.clear();
    return { full: true, changed: await this.read(undefined) };
  }

  /** Reads every page, and only then applies them: a failure half-way leaves the cache and its token as they were. */
  private async read(since: string | undefined): Promise<ListRow<P>[]> {
    const received: ListRow<P>[] = [];
    let token: string | undefined;
    for await (const page of walkPages(this.api, this.path, { query: this.options.query, limit: this.options.limit, since })) {
      received.push(...page.rows);
      token = page.syncToken;
    }
    const { key, keep } = this.options;
    for (const row of received) this.rows.set(key(row), row);
    if (keep) for (const [k, row] of this.rows) if (!keep(row)) this.rows.delete(k);
    this.token = token;
    return received;
  }
}
