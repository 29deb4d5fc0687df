import type { Request, Response } from "express";
import { presentedKey } from "../auth/authenticate.js";
import { hashApiKey } from "../core/api-keys.js";
import { errors } from "../core/errors.js";
import { sendJsonText } from "../core/send.js";
import { BulkheadTimeout } from "../limits/bulkhead.js";
import { isPage, StreamedList, sendList } from "../lists/list.js";
import { nextLink } from "../lists/next-link.js";
import type { AppDeps } from "./deps.js";
import { EventStreamAnswer, JsonText, Page, type ReadContext, type RouteInput, type RouteSpec, Versioned } from "./route.js";

/**
 * How a GET runs: on the reader client, with no audit. A list's version
 * (`etag`) is read before its data, so an answer is never older than its tag;
 * it is sent with the answer only, not with a failure of the handler.
 */
export async function runRead(
  route: RouteSpec,
  input: RouteInput,
  req: Request,
  res: Response,
  deps: AppDeps,
  invoke: (ctx: ReadContext) => Promise<unknown>,
): Promise<void> {
  const ctx: ReadContext = { caller: req.caller!, callers: deps.callers, db: deps.db.readQueries, now: deps.now };
  const listTag = route.etag ? `"${await route.etag(input, ctx)}"` : undefined;
  if (listTag !== undefined && matches(req.headers["if-none-match"], listTag)) {
    res.setHeader("ETag", listTag).status(304).end();
    return;
  }
  // A page is bounded (1,000 rows at most): it needs no slot.
  const heavy = route.heavy === true && !isPage(input.query);
  if (heavy && !(await takeHeavySlot(deps, req, res))) return;
  let result = await invoke(ctx);
  if (result instanceof StreamedList) return sendList(result, listTag, req, res, deps, heavy);
  if (result instanceof EventStreamAnswer) {
    const { topics, resumeAfter } = result;
    await deps.events.serve({ caller: req.caller!, keyHash: hashApiKey(presentedKey(req)!), address: req.ip, topics, resumeAfter }, res);
    // The stream outlives this request by hours: the routers' chain, kept on the request for a next() that
    // will not come, is let go (a thousand streams hold a megabyte less).
    req.next = undefined;
    return;
  }
  if (result instanceof Versioned) {
    const tag = `"${result.etag}"`;
    res.setHeader("ETag", tag);
    if (matches(req.headers["if-none-match"], tag)) {
      res.status(304).end();
      return;
    }
    result = result.body;
  }
  if (result instanceof Page) {
    if (result.next !== undefined) res.setHeader("Link", nextLink(req, result.next));
    result = result.body;
  }
  if (listTag !== undefined) res.setHeader("ETag", listTag);
  if (result instanceof JsonText)
    res
      .status(route.successStatus ?? 200)
      .type("application/json; charset=utf-8")
      .send(result.text);
  else sendJsonText(res, route.successStatus ?? 200, JSON.stringify(result));
}

/**
 * A slot of the heavy-list bulkhead, held until the answer is sent or the
 * client is gone ("close", also when SEND_TIMEOUT_MS cuts a stalled reader
 * off): that is when its memory is freed. A client that leaves while waiting
 * leaves the queue at once; one that waits past HEAVY_LIST_WAIT_MS gets 503
 * LISTS_BUSY; one still taking its answer HEAVY_LIST_DEADLINE_MS after the
 * slot came (a reader too slow, even a steady one) is cut off. False when the
 * client is gone: nothing is to be built or sent.
 */
async function takeHeavySlot(deps: AppDeps, req: Request, res: Response): Promise<boolean> {
  // Gone already (while its key was checked): "close" has passed and would never come.
  if (res.destroyed || req.socket.destroyed) return false;
  const gone = new AbortController();
  let release: (() => void) | undefined;
  let deadline: NodeJS.Timeout | undefined;
  res.once("close", () => {
    gone.abort();
    clearTimeout(deadline);
    release?.();
  });
  try {
    release = await deps.heavyLists.acquire(deps.config.heavyListWaitMs, gone.signal, String(req.caller!.id));
  } catch (error) {
    if (gone.signal.aborted) return false;
    if (!(error instanceof BulkheadTimeout)) throw error;
    const seconds = Math.ceil(deps.config.heavyListWaitMs / 1000);
    res.setHeader("Retry-After", String(seconds));
    throw errors.listsBusy(seconds);
  }
  const deadlineMs = deps.config.heavyListDeadlineMs;
  deadline = setTimeout(() => {
    deps.logger.warn(
      { method: req.method, path: req.path, heldBytes: req.socket.writableLength, heavyListDeadlineMs: deadlineMs },
      "full list not taken by its client within HEAVY_LIST_DEADLINE_MS: connection cut",
    );
    req.socket.destroy();
  }, deadlineMs);
  return true;
}

/** If-None-Match: a list of tags, weak or strong, or `*`. */
function matches(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const candidate = t.trim();
    return candidate === "*" || candidate === tag || candidate === `W/${tag}`;
  });
}
