/** The largest request body accepted, in KB of 1024 bytes (as the JSON body parser counts them); beyond it, 413. */
export const BODY_LIMIT_KB = 100;
