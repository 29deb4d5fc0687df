/**
 * Where a JSON body stops being JSON, for the MALFORMED_JSON message: the line
 * and column (1-based) of the first character that cannot be there, or the end
 * of the body when it ends too early. JSON.parse's own messages do not always
 * say where (`Unexpected token '}', "…" is not valid JSON`, and they quote the
 * body), so the body is scanned here, only once JSON.parse has refused it.
 * Nothing of the body is echoed.
 */
export function malformedJsonMessage(body: unknown): string {
  if (typeof body !== "string") return "Malformed JSON in request body";
  let position: number;
  try {
    position = firstError(body);
  } catch {
    return "Malformed JSON in request body"; // nested deeper than this scanner's stack goes
  }
  const before = body.slice(0, position);
  const line = before.split("\n").length;
  const column = position - (before.lastIndexOf("\n") + 1) + 1;
  return position >= body.length
    ? `Malformed JSON in request body: it ends at line ${line}, column ${column} before the JSON is complete`
    : `Malformed JSON in request body at line ${line}, column ${column}`;
}

/** The index of the first character where `text` is not JSON (text.length: it ended too early). */
function firstError(text: string): number {
  let i = 0;
  class Stop extends Error {
    constructor(readonly at: number) {
      super("not JSON");
    }
  }
  const fail = (): never => {
    throw new Stop(i);
  };
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail();
      i++;
    }
  };
  const digits = () => {
    if (!/[0-9]/.test(text[i] ?? "")) fail();
    while (/[0-9]/.test(text[i] ?? "")) i++;
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      const c = text[i];
      if (c === undefined || c < " ") fail();
      i++;
      if (c === '"') return;
      if (c === "\\") {
        if (text[i] === "u") {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail();
        } else if (text[i] !== undefined && '"\\/bfnrt'.includes(text[i]!)) i++;
        else fail();
      }
    }
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === "{") {
      i++;
      space();
      if (text[i] === "}") return void i++;
      for (;;) {
        space();
        if (text[i] !== '"') fail();
        string();
        space();
        if (text[i] !== ":") fail();
        i++;
        value();
        space();
        if (text[i] === "}") return void i++;
        if (text[i] !== ",") fail();
        i++;
      }
    }
    if (c === "[") {
      i++;
      space();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        space();
        if (text[i] === "]") return void i++;
        if (text[i] !== ",") fail();
        i++;
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    if (c === "-" || /[0-9]/.test(c ?? "")) {
      if (c === "-") i++;
      if (text[i] === "0") i++;
      else digits();
      if (text[i] === ".") {
        i++;
        digits();
      }
      if (text[i] === "e" || text[i] === "E") {
        i++;
        if (text[i] === "+" || text[i] === "-") i++;
        digits();
      }
      return;
    }
    fail();
  };
  try {
    value();
    space();
    return i < text.length ? i : text.length;
  } catch (stop) {
    if (stop instanceof Stop) return Math.min(stop.at, text.length);
    throw stop;
  }
}
