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

interface Block {
  lang: string;
  text: string;
  line: number;
  /** The HTML comment on the line before the fence (blank lines between allowed), if any. */
  marker: string | undefined;
}

function blocksOf(markdown: string): Block[] {
  return [...markdown.matchAll(FENCE)].map((m) => ({
    lang: m[1]!,
    text: m[2]!,
    line: markdown.slice(0, m.index).split("\n").length,
    marker: /<!--\s*([\s\S]*?)\s*-->\s*$/.exec(markdown.slice(0, m.index).trimEnd())?.[1],
  }));
}

/** A block marked `<!-- not run: <reason> -->`: shown, never run (it needs another machine, Docker, a pg_dump…). */
const NOT_RUN = /^not run: \S/;
/** A block marked `<!-- run by test/<file> … -->`: that test reads the block from the Markdown and runs it. */
const RUN_BY = /^run by (test\/[\w.-]+\.ts)\b/;
/** Languages of shell commands and HTTP exchanges: each such block is run, or marked. */
const SHELL_OR_HTTP = new Set(["sh", "bash", "shell", "console", "http"]);

/**
 * The shell and HTTP blocks of a Markdown file that nothing runs and nothing
 * marks: each needs its curl command run (a ```sh block of one curl, then the
 * ```http answer), a `run by` marker naming the test that runs it (which must
 * read `file`), or a `not run: reason` marker. A block without a language is
 * a problem too (say ```text for output shown). `runsCurl`: whether this file's
 * curl commands are run by doc-examples.test.ts. `read`: a test file's text.
 */
export function unrunBlocks(file: string, markdown: string, runsCurl: boolean, read: (path: string) => string): string[] {
  const problems: string[] = [];
  const blocks = blocksOf(markdown);
  blocks.forEach((block, i) => {
    const at = `${file}:${block.line}`;
    if (block.lang === "") return problems.push(`${at}: a block without a language (\`\`\`text for output shown)`);
    if (!SHELL_OR_HTTP.has(block.lang)) return;
    const marker = block.marker ?? "";
    if (NOT_RUN.test(marker)) return;
    const runBy = RUN_BY.exec(marker);
    if (runBy) {
      if (!read(runBy[1]!).includes(file.replace(/^docs\//, ""))) problems.push(`${at}: ${runBy[1]} does not read ${file}`);
      return;
    }
    const isCurl = block.lang === "sh" && /(^|\n)\s*curl\s/.test(block.text) && blocks[i + 1]?.lang === "http";
    const isAnswer = block.lang === "http" && blocks[i - 1]?.lang === "sh" && /(^|\n)\s*curl\s/.test(blocks[i - 1]!.text);
    if (runsCurl && (isCurl || isAnswer)) return;
    problems.push(`${at}: a \`\`\`${block.lang} block neither run nor marked <!-- not run: reason -->`);
  });
  return problems;
}

export function docExamples(file: string, markdown: string, vars: Record<string, string>): DocExample[] {
  const blocks = blocksOf(markdown);
  const examples: DocExample[] = [];
  blocks.forEach((block, i) => {
    if (!/(^|\n)\s*curl\s/.test(block.text) || (block.marker && NOT_RUN.test(block.marker))) return;
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
    const pattern = shown
      .split("…")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[\\s\\S]*");
    return new RegExp(`^${pattern}$`).test(actual);
  }
  if (Array.isArray(shown)) return Array.isArray(actual) && shown.length === actual.length && shown.every((s, i) => matchesShown(s, actual[i]));
  if (shown !== null && typeof shown === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    const keys = Object.keys(shown);
    return (
      keys.length === Object.keys(actual).length &&
      keys.every((k) => k in actual && matchesShown((shown as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k]))
    );
  }
  return Object.is(shown, actual);
}
