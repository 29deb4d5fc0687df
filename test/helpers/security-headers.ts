/**
 * The headers every answer carries, written out rather than imported from the
 * code: a change to them must show in the tests.
 */
export const EXPECTED_SECURITY_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
};
