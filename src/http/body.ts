import { isUtf8 } from "node:buffer";
import express, { type RequestHandler } from "express";
import { errors } from "../errors.js";
import { BODY_LIMIT_KB } from "./body-limit.js";

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

/**
 * Reads a JSON body: the Content-Type must be a well-formed media type (a
 * malformed one is a 400, never read as JSON anyway), its charset, if named,
 * UTF-8 (JSON is UTF-8, RFC 8259), and the bytes UTF-8 indeed: body-parser
 * would turn any other byte into U+FFFD and the handler would store it.
 */
export function jsonBody(): RequestHandler {
  const parse = express.json({ limit: `${BODY_LIMIT_KB}kb`, strict: false, type: "application/json", verify: refuseNonUtf8 });
  return (req, res, next) => {
    // Node keeps the first of several Content-Type headers; a proxy may keep the last: two readings of one body.
    const sent = req.headersDistinct["content-type"];
    if (sent !== undefined && sent.length > 1) throw errors.validation("Content-Type: send it once");
    if (sent !== undefined) checkMediaType(sent[0]!);
    parse(req, res, next);
  };
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
