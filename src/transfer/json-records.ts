/**
 * An import file read as it arrives, never whole: `{ "<key>": [ <record>, … ], … }`
 * cut into each record's JSON text, each array's key and index beside it.
 * Only the record being read is held, up to MAX_RECORD_CHARS.
 */
export type FilePart =
  /** An array begins. */
  | { kind: "array"; key: string }
  | { kind: "record"; key: string; index: number; text: string }
  /** A value of the top-level object that is not an array. */
  | { kind: "other"; key: string };

/** The longest record an import takes, in characters of its JSON (a form answer holds about 12,000). */
export const MAX_RECORD_CHARS = 128 * 1024;

/** The file's structure is broken: what, and where (a character count from its start). */
export class FileShapeError extends Error {
  constructor(
    message: string,
    readonly notAnObject = false,
  ) {
    super(message);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

type State = "start" | "key?" | "key" | "colon" | "value" | "array" | "element" | "after-element" | "other" | "comma" | "end";

export async function* fileParts(source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): AsyncGenerator<FilePart> {
  const decoder = new TextDecoder();
  let state = "start" as State;
  let position = 0;
  let key = "";
  let index = 0;
  let depth = 0; // inside the element or the other value being read
  let inString = false;
  let escaped = false;
  let parts: string[] = [];
  let size = 0;
  const tooLong = (): never => {
    throw new FileShapeError(`${key}[${index}]: a record longer than ${MAX_RECORD_CHARS} characters of JSON`);
  };
  const fail = (what: string, at: number): never => {
    throw new FileShapeError(`the file is not valid JSON: ${what} at character ${at}`);
  };
  for await (const piece of source) {
    const chunk = typeof piece === "string" ? piece : decoder.decode(piece, { stream: true });
    let start = state === "key" || state === "element" ? 0 : -1; // where the text kept from this chunk begins
    const keep = (end: number) => {
      if (start >= 0 && end > start) {
        parts.push(chunk.slice(start, end));
        size += end - start;
      }
      start = -1;
    };
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (state === "key") {
            keep(i + 1);
            key = JSON.parse(parts.join("")) as string;
            parts = [];
            size = 0;
            state = "colon";
          }
        }
        continue;
      }
      if (state === "element" || state === "other") {
        if (c === QUOTE) inString = true;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if ((c === 0x7d || c === 0x5d) && depth > 0) depth--;
        else if (depth === 0 && (c === 0x2c || c === 0x5d || c === 0x7d)) {
          if (state === "element") {
            keep(i);
            if (size > MAX_RECORD_CHARS) tooLong();
            yield { kind: "record", key, index: index++, text: parts.join("") };
            parts = [];
            size = 0;
            state = "after-element";
          } else {
            yield { kind: "other", key };
            state = "comma";
          }
          i--; // the separator is read again in its new state
        }
        continue;
      }
      if (isSpace(c)) continue;
      const at = position + i;
      switch (state) {
        case "start":
          if (c !== 0x7b) throw new FileShapeError("not an object", true);
          state = "key?";
          break;
        case "key?":
          if (c === 0x7d) state = "end";
          else if (c === QUOTE) {
            state = "key";
            inString = true;
            start = i;
          } else fail(`expected a key, found '${chunk[i]}'`, at);
          break;
        case "colon":
          if (c !== 0x3a) fail(`expected ':', found '${chunk[i]}'`, at);
          state = "value";
          break;
        case "value":
          if (c === 0x5b) {
            state = "array";
            index = 0;
            yield { kind: "array", key };
          } else {
            state = "other";
            depth = 0;
            i--;
          }
          break;
        case "array":
          if (c === 0x5d) state = "comma";
          else {
            state = "element";
            depth = 0;
            start = i;
            i--;
          }
          break;
        case "after-element":
          if (c === 0x5d) state = "comma";
          else if (c === 0x2c) state = "array";
          else fail(`expected ',' or ']', found '${chunk[i]}'`, at);
          break;
        case "comma":
          if (c === 0x7d) state = "end";
          else if (c === 0x2c) state = "key?";
          else fail(`expected ',' or '}', found '${chunk[i]}'`, at);
          break;
        case "end":
          fail(`found '${chunk[i]}' after the end`, at);
      }
    }
    if (state === "key" || state === "element") keep(chunk.length);
    if (state === "element" && size > MAX_RECORD_CHARS) tooLong();
    position += chunk.length;
  }
  if (state !== "end") fail("the file ends too early", position);
}
