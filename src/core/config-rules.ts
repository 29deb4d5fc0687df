import express from "express";
import { z } from "zod";

/** The rules of config.ts's settings: how each kind of value is read from the environment. */

export const usernameList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw) =>
      raw
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name.length > 0),
    );

export const integer = (min: number, max: number, fallback: number) =>
  z
    .string()
    .default(String(fallback))
    .refine((raw) => /^\d+$/.test(raw.trim()), { message: `expected an integer between ${min} and ${max}` })
    .transform((raw) => Number(raw.trim()))
    .refine((n) => n >= min && n <= max, { message: `expected an integer between ${min} and ${max}` });

/** A key of at least 32 characters, or unset (blank counts as unset). */
export const secretKey = () =>
  z
    .string()
    .optional()
    .transform((raw) => (raw?.trim() ? raw.trim() : undefined))
    .refine((key) => key === undefined || key.length >= 32, { message: "expected at least 32 characters" });

/** An IANA time zone name (Europe/Paris), as Node and PostgreSQL know them. */
export const timeZone = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw) => raw.trim())
    .refine(
      (zone) => {
        try {
          new Intl.DateTimeFormat("en", { timeZone: zone });
          return /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(zone);
        } catch {
          return false;
        }
      },
      { message: "expected an IANA time zone name, such as UTC or Europe/Paris" },
    );

/** A URL of one of the schemes `scheme` matches, or unset (blank counts as unset). */
export const optionalUrl = (scheme: RegExp, message: string) =>
  z
    .string()
    .optional()
    .transform((raw) => (raw?.trim() ? raw.trim() : undefined))
    .refine((url) => url === undefined || scheme.test(url), { message });

/** Express compiles "trust proxy" when it is set, and throws on a bad address: the test it must pass. */
export function validTrustProxy(value: boolean | number | string): boolean {
  try {
    express().set("trust proxy", value);
    return true;
  } catch {
    return false;
  }
}

export function parseTrustProxy(raw: string): boolean | number | string {
  if (raw === "true") return true;
  if (raw === "false") return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}
