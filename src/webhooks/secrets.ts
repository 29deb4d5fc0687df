import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Endpoint secrets. The receiver needs the raw secret to check signatures,
 * and we need it to sign: it cannot be hashed like an API key. It is shown
 * once (webhook add), never logged, and stored encrypted with AES-256-GCM
 * under WEBHOOKS_SECRET_KEY when that is set (a database dump or backup then
 * holds no usable secret), else as it is, marked `plain:`.
 */
export function generateSecret(): string {
  // Standard Webhooks: whsec_ and 24 to 64 random bytes, base64.
  return `whsec_${randomBytes(32).toString("base64")}`;
}

const keyOf = (passphrase: string) => createHash("sha256").update(passphrase).digest();

export function sealSecret(secret: string, passphrase: string | undefined): string {
  if (!passphrase) return `plain:${secret}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(passphrase), iv);
  const data = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return `v1:${iv.toString("base64")}:${cipher.getAuthTag().toString("base64")}:${data.toString("base64")}`;
}

export class SecretUnavailable extends Error {}

export function openSecret(stored: string, passphrase: string | undefined): string {
  if (stored.startsWith("plain:")) return stored.slice("plain:".length);
  const [version, iv, tag, data] = stored.split(":");
  if (version !== "v1" || !iv || !tag || data === undefined) throw new SecretUnavailable("the stored secret has an unknown format");
  if (!passphrase) throw new SecretUnavailable("the secret is encrypted and WEBHOOKS_SECRET_KEY is not set");
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(passphrase), Buffer.from(iv, "base64"));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretUnavailable("the secret was encrypted under another WEBHOOKS_SECRET_KEY");
  }
}
