import type { Response } from "express";

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * A JSON answer written as Express's res.json / res.send would write it
 * (Content-Type, then Content-Length; no ETag, the app computes none), the
 * same bytes, without their per-request content-type parsing and formatting,
 * which a point read measurably paid for. Node sends no body to a HEAD.
 */
export function sendJsonText(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader("Content-Type", JSON_TYPE);
  res.setHeader("Content-Length", String(Buffer.byteLength(text)));
  res.end(text);
}

/** Resolves once what was written has been taken by the connection, or the connection is gone (backpressure). */
export function taken(res: Response): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
