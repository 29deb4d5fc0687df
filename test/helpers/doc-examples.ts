/**
 * The requests shown in the documentation, read from its Markdown: a ```sh
 * block holding one curl command, followed by a ```http block with the answer
 * it gets: the status line, any header lines to check, a blank line, and the
 * JSON body. In a shown string (header value or JSON string), `…` stands for
 * any text (a key, a date that depends on today).
 */
export interface DocExample {
  /** Where it is, for failure messages: file and line. */
  at: string;
  command: string;
  request: { method: string; url: string; headers: Record<string, string>; body: string | undefined };
  answer: { status: number; headers: Record<string, string>; body: unknown };
}

const FENCE = /^```(\w*)\n([\s\S]*?)^```$/gm;

export function docExamples(file: string, markdown: string, vars: Record<string, string>): DocExample[] {
  const blocks = [...markdown.matchAll(FENCE)].map((m) => ({
    lang: m[1]!,
    text: m[2]!,
    line: markdown.slice(0, m.index).split("\n").length,
  }));
  const examples: DocExample[] = [];
  blocks.forEach((block, i) => {
    if (!/(^|\n)\s*curl\s/.test(block.text)) return;
    const at = `${file}:${block.line}`;
    if (block.lang !== "sh") throw new Error(`${at}: a curl command must sit in a \`\`\`sh block`);
    const next = blocks[i + 1];
    if (next?.lang !== "http") throw new Error(`${at}: a curl command must be followed by a \`\`\`http block with its answer`);
    const command = block.text.trim();
    examples.push({ at, command, request: parseCurl(at, command, vars), answer: parseAnswer(`${file}:${next.line}`, next.text) });
  });
  return examples;
}

/** Shell words of one command: quotes, backslash-newline, and $NAME inside double quotes or bare. */
function shellWords(at: string, command: string, vars: Record<string, string>): string[] {
  const words: string[] = [];
  let word: string | undefined;
  const expand = (name: string) => {
    if (!(name in vars)) throw new Error(`${at}: unknown variable $${name}`);
    return vars[name]!;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "\\" && command[i + 1] === "\n") {
      i++;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new Error(`${at}: unclosed '`);
      word = (word ?? "") + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = "";
      for (i++; command[i] !== '"'; i++) {
        if (i >= command.length) throw new Error(`${at}: unclosed "`);
        if (command[i] === "\\" && '"\\$'.includes(command[i + 1]!)) text += command[++i];
        else if (command[i] === "$") {
          const name = /^[A-Z_]+/.exec(command.slice(i + 1))![0];
          text += expand(name);
          i += name.length;
        } else text += command[i];
      }
      word = (word ?? "") + text;
    } else if (c === "$") {
      const name = /^[A-Z_]+/.exec(command.slice(i + 1))?.[0];
      if (!name) throw new Error(`${at}: a bare $ in the command`);
      word = (word ?? "") + expand(name);
      i += name.length;
    } else if ("|;&<>`#".includes(c)) {
      throw new Error(`${at}: one plain curl command per block (found ${c})`);
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

function parseCurl(at: string, command: string, vars: Record<string, string>): DocExample["request"] {
  const words = shellWords(at, command, vars);
  if (words[0] !== "curl") throw new Error(`${at}: the block must be one curl command`);
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === "-s" || w === "-i" || w === "-si" || w === "-is") continue;
    if (w === "-X") method = words[++i];
    else if (w === "-H") {
      const h = words[++i]!;
      const colon = h.indexOf(":");
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
    } else if (w === "-d" || w === "--data") body = words[++i];
    else if (w.startsWith("-")) throw new Error(`${at}: curl option ${w} is not understood by the test`);
    else if (url === undefined) url = w;
    else throw new Error(`${at}: two URLs`);
  }
  if (!url) throw new Error(`${at}: no URL`);
  return { method: method ?? (body === undefined ? "GET" : "POST"), url, headers, body };
}

function parseAnswer(at: string, text: string): DocExample["answer"] {
  const [head, ...rest] = text.split(/\n\n/);
  const [statusLine, ...headerLines] = head!.split("\n");
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
  if (!status) throw new Error(`${at}: the answer must start with its status line, e.g. HTTP/1.1 200 OK`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon < 0) throw new Error(`${at}: not a header line: ${line}`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const bodyText = rest.join("\n\n").trim();
  let body: unknown;
  try {
    body = bodyText === "" ? undefined : JSON.parse(bodyText);
  } catch (error) {
    throw new Error(`${at}: the shown body is not JSON: ${(error as Error).message}`, { cause: error });
  }
  return { status: Number(status[1]), headers, body };
}

/** Whether `actual` is what the documentation shows, `…` in a shown string standing for any text. */
export function matchesShown(shown: unknown, actual: unknown): boolean {
  if (typeof shown === "string") {
    if (typeof actual !== "string") return false;
    const pattern = shown.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\s\\S]*");
    return new RegExp(`^${pattern}$`).test(actual);
  }
  if (Array.isArray(shown)) return Array.isArray(actual) && shown.length === actual.length && shown.every((s, i) => matchesShown(s, actual[i]));
  if (shown !== null && typeof shown === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    const keys = Object.keys(shown);
    return keys.length === Object.keys(actual).length && keys.every((k) => k in actual && matchesShown((shown as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k]));
  }
  return Object.is(shown, actual);
}
