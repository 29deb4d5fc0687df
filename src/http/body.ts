import { isUtf8 } from "node:buffer";
import express, { type Request, type Response } from "express";
import type { Step } from "../auth/authenticate.js";
import { type ApiError, BODY_LIMIT_KB, errors } from "../core/errors.js";
import { malformedJsonMessage } from "./json-position.js";

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x21-\\x7e\\x80-\\xff])*"';
const TYPE = new RegExp(`${TOKEN}/${TOKEN}`, "y");
const PARAMETER = new RegExp(`[\\t ]*;[\\t ]*(?:(${TOKEN})=(${TOKEN}|${QUOTED}))?`, "y");
const END = /[\t ]*$/y;

/**
 * The parameters of an RFC 9110 media type (`type/subtype *( OWS ";" OWS [
 * name=value ] )`, the value a token or a quoted string), or undefined when
 * the text is not one. Read one parameter at a time: a long malformed header
 * costs linear time, where a single regular expression could backtrack.
 */
function mediaTypeParameters(text: string): [string, string][] | undefined {
  TYPE.lastIndex = 0;
  if (!TYPE.test(text)) return undefined;
  const parameters: [string, string][] = [];
  let at = TYPE.lastIndex;
  for (;;) {
    PARAMETER.lastIndex = at;
    const match = PARAMETER.exec(text);
    if (!match) break;
    if (match[1] !== undefined) parameters.push([match[1], match[2]!]);
    at = PARAMETER.lastIndex;
  }
  END.lastIndex = at;
  return END.test(text) ? parameters : undefined;
}

/** The largest body read, in bytes (body-parser's "100kb": KB of 1024). */
const LIMIT_BYTES = BODY_LIMIT_KB * 1024;

/**
 * Reads a JSON body, with body-parser's rules (100 KB, an empty body is `{}`, a leading BOM dropped) but
 * not its per-request machinery, which a write measurably paid for; a compressed body goes to body-parser,
 * which inflates it. The Content-Type must be well-formed and its charset, if named, UTF-8, and the bytes
 * valid UTF-8 (body-parser would store U+FFFD). Not `application/json`, or no body: req.body stays undefined.
 */
export function jsonBody(): Step {
  const inflating = express.json({ limit: `${BODY_LIMIT_KB}kb`, strict: false, type: "application/json", verify: refuseNonUtf8 });
  // body-parser's failures are http-errors (Error objects with a `type`), mapped by the error handler.
  const viaBodyParser = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) => inflating(req, res, (error?: Error) => (error === undefined ? resolve() : reject(error))));
  return (req, res) => {
    // Node keeps the first of several Content-Type headers; a proxy may keep the last: two readings of one body.
    const sent = req.headersDistinct["content-type"];
    if (sent !== undefined && sent.length > 1) throw errors.validation("Content-Type: send it once");
    if (sent !== undefined) checkMediaType(sent[0]!);
    const encoding = req.headers["content-encoding"];
    if (encoding && encoding.toLowerCase() !== "identity") return viaBodyParser(req, res);
    const hasBody = req.headers["transfer-encoding"] !== undefined || req.headers["content-length"] !== undefined;
    if (!hasBody || !isJson(sent?.[0]) || req.readableEnded) return;
    return readBody(req).then((bytes) => {
      req.body = parseJson(bytes);
    });
  };
}

/** Whether a (well-formed) Content-Type names application/json, whatever its parameters. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const end = contentType.indexOf(";");
  return (end === -1 ? contentType : contentType.slice(0, end)).trim().toLowerCase() === "application/json";
}

/**
 * The body's bytes. Past the limit (declared or counted) a 413, a body
 * shorter than its Content-Length or cut off a 400; on a refusal the rest of
 * the request is read off first, so the connection can carry the answer.
 */
function readBody(req: Request): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = req.headers["content-length"];
    const length = declared === undefined ? undefined : Number.parseInt(declared, 10);
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = () => {
      req.off("data", onData).off("end", onEnd).off("close", onCut).off("error", onCut);
    };
    const refuse = (error: ApiError) => {
      stop();
      readOff(req, () => reject(error));
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > LIMIT_BYTES) refuse(errors.payloadTooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      if (length !== undefined && received !== length) reject(incomplete());
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    const onCut = () => {
      stop();
      reject(incomplete());
    };
    if (length !== undefined && length > LIMIT_BYTES) {
      refuse(errors.payloadTooLarge());
      return;
    }
    req.on("data", onData).on("end", onEnd).on("close", onCut).on("error", onCut);
  });
}

const incomplete = () => errors.validation("body: the request body was incomplete");

/** Reads off what is left of a request, then calls back (once). */
function readOff(req: Request, then: () => void): void {
  if (req.readableEnded || req.destroyed) {
    then();
    return;
  }
  let called = false;
  const once = () => {
    if (!called) then();
    called = true;
  };
  req.once("end", once).once("close", once);
  req.resume();
}

/** The JSON of UTF-8 bytes, as body-parser reads it: a leading BOM dropped, an empty body `{}`. */
function parseJson(bytes: Buffer): unknown {
  refuseNonUtf8(undefined, undefined, bytes);
  let text = bytes.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw errors.malformedJson(malformedJsonMessage(text));
  }
}

function checkMediaType(contentType: string): void {
  const parameters = mediaTypeParameters(contentType);
  if (!parameters) {
    throw errors.validation("Content-Type: not a well-formed media type; send application/json (optionally with charset=utf-8)");
  }
  for (const [name, value] of parameters) {
    if (name.toLowerCase() !== "charset") continue;
    const charset = value.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, "$1") : value;
    if (charset.toLowerCase() !== "utf-8") throw errors.unsupportedCharset(charset);
  }
}

/** body-parser's `verify`: the bytes as received (inflated), before they are decoded. */
function refuseNonUtf8(_req: unknown, _res: unknown, bytes: Buffer): void {
  if (!isUtf8(bytes)) throw errors.validation("body: not valid UTF-8; send the JSON text encoded in UTF-8");
}
