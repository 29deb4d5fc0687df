import type { ApiClient } from "./client.js";
import { ApiError, orThrow } from "./errors.js";
import type { paths } from "./schema.js";

/** The GET routes that answer with an ETag and take If-None-Match. */
export type PollablePath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 304: unknown } } } ? P : never;
}[keyof paths];
type PollData<P extends PollablePath> = paths[P]["get"]["responses"][200]["content"]["application/json"];
type PollQuery<P extends PollablePath> = paths[P]["get"]["parameters"]["query"];

export type PollResult<T> = { changed: true; data: T; etag: string } | { changed: false; etag: string };

/**
 * Polls one GET cheaply: each poll sends the ETag of the last answer in If-None-Match, and while nothing
 * changed the server answers 304 without building the answer. A failure is thrown as an ApiError.
 *
 *   const maps = new EtagPoller(api, "/parkour/get-all-maps");
 *   setInterval(async () => { const r = await maps.poll(); if (r.changed) redraw(r.data); }, 10_000);
 */
export class EtagPoller<P extends PollablePath> {
  /** The ETag of the last answer delivered. */
  etag: string | undefined;
  private readonly query: PollQuery<P> | undefined;

  constructor(
    private readonly api: ApiClient,
    private readonly path: P,
    ...query: undefined extends PollQuery<P> ? [query?: PollQuery<P>] : [query: PollQuery<P>]
  ) {
    this.query = query[0];
  }

  async poll(): Promise<PollResult<PollData<P>>> {
    const header = this.etag === undefined ? {} : { "If-None-Match": this.etag };
    // One call for every path of the union: openapi-fetch cannot check a path that is a type parameter.
    const get = this.api.GET as unknown as (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const result = await get(this.path, { params: { query: this.query, header } });
    if (result.response.status === 304 && this.etag !== undefined) return { changed: false, etag: this.etag };
    const data = orThrow(result) as PollData<P>;
    const etag = result.response.headers.get("ETag");
    if (etag === null) throw ApiError.of(result.response, { message: "the answer has no ETag" });
    this.etag = etag;
    return { changed: true, data, etag };
  }
}
