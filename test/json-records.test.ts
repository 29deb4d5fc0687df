import { describe, expect, it } from "vitest";
import { type FilePart, FileShapeError, fileParts, MAX_RECORD_CHARS } from "../src/transfer/json-records.js";

/** An import file cut into records as it arrives, whatever the pieces it arrives in. */
async function parts(pieces: (string | Uint8Array)[]): Promise<FilePart[]> {
  const found: FilePart[] = [];
  for await (const part of fileParts(pieces)) found.push(part);
  return found;
}

const text = `{ "pla\\"yers" : [ {"a": "x,]}\\"y", "b": [1, {"c": []}]} , 2,"é€😀" ], "other": {"k": [1]}, "empty": [], "n": 5 }`;

describe("an import file read in pieces", () => {
  it("when the file arrives whole, a character at a time, or a byte at a time (UTF-8 cut mid-character), then the same records come out", async () => {
    const whole = await parts([text]);
    expect(whole).toEqual([
      { kind: "array", key: 'pla"yers' },
      { kind: "record", key: 'pla"yers', index: 0, text: `{"a": "x,]}\\"y", "b": [1, {"c": []}]} ` },
      { kind: "record", key: 'pla"yers', index: 1, text: "2" },
      { kind: "record", key: 'pla"yers', index: 2, text: `"é€😀" ` },
      { kind: "other", key: "other" },
      { kind: "array", key: "empty" },
      { kind: "other", key: "n" },
    ]);
    expect(await parts([...text])).toEqual(whole);
    expect(await parts([...Buffer.from(text)].map((b) => Uint8Array.of(b)))).toEqual(whole);
    for (const part of whole) if (part.kind === "record") expect(() => JSON.parse(part.text) as unknown).not.toThrow();
  });

  it("when the file is not an object, is cut short, has garbage after its end, or holds too long a record, then it is refused saying where", async () => {
    await expect(parts(["[]"])).rejects.toMatchObject({ notAnObject: true });
    await expect(parts(['{"a": [1, 2'])).rejects.toThrow("the file is not valid JSON: the file ends too early at character 11");
    await expect(parts(['{"a": []} x'])).rejects.toThrow("found 'x' after the end at character 10");
    await expect(parts(['{"a" [1]}'])).rejects.toThrow("expected ':', found '[' at character 5");
    await expect(parts([`{"a": ["${"x".repeat(MAX_RECORD_CHARS)}"]}`])).rejects.toThrow(`a[0]: a record longer than ${MAX_RECORD_CHARS} characters of JSON`);
    await expect(parts(["{}"])).resolves.toEqual([]);
    await expect(parts(["{"])).rejects.toBeInstanceOf(FileShapeError);
  });
});
