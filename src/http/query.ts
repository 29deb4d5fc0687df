import { isUtf8 } from "node:buffer";
import { type ParsedUrlQuery, parse, unescape } from "node:querystring";
import { errors } from "../core/errors.js";

/**
 * Express's "simple" query parser (node:querystring), except that percent-encoded
 * bytes that are not UTF-8 (`nick=%E9`, Latin-1) are a 400 naming the
 * parameter: querystring would decode them to U+FFFD, and the route would
 * look up another name. A query without `%`, or one that decodes, costs one
 * `includes` or one `decodeURIComponent` more.
 */
export function parseQueryString(text: string | null | undefined): ParsedUrlQuery {
  if (text && text.includes("%") && !decodesToUtf8(text)) {
    throw errors.validation(
      `${parameterNotUtf8(text)}: not valid UTF-8 once percent-decoded; percent-encode the UTF-8 bytes of each character (U+00E9 is %C3%A9)`,
    );
  }
  return parse(text ?? "");
}

/**
 * Whether the percent-decoded bytes are UTF-8. A malformed escape (`100%`,
 * `%zz`) is not a refusal: querystring keeps it as it is. The text is ASCII
 * (Node refuses any other byte in a request target).
 */
function decodesToUtf8(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return isUtf8(
      Buffer.from(
        text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
        "latin1",
      ),
    );
  }
}

/** Once a query is refused: the first parameter whose name or value is not UTF-8, its name decoded leniently. */
function parameterNotUtf8(text: string): string {
  for (const pair of text.split("&")) {
    const at = pair.indexOf("=");
    const name = at === -1 ? pair : pair.slice(0, at);
    if (!decodesToUtf8(pair)) return unescape(name.replace(/\+/g, " "));
  }
  return "query";
}
