/** A GET read to its end: the time to the first byte of its body and to the last (ms, from the request), the bytes, its headers. */
export interface Timed {
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  headers: Headers;
}

/** GETs `url` with the API key and reads the whole body; anything but 200 throws. */
export async function timedGet(url: string, key: string): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { "X-API-Key": key } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  let firstByteMs = -1;
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstByteMs < 0) firstByteMs = performance.now() - t0;
    bytes += value.length;
  }
  return { firstByteMs, totalMs: performance.now() - t0, bytes, headers: res.headers };
}
