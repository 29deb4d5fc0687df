import type { DbClient, ReadClient } from "./client.js";

/** An entity declared `versioned` (fields/entity.ts): its table's writes are counted in data_versions. */
export interface Versioned {
  table: string;
  versioned: true;
}

/**
 * The table's version (bumped by a trigger in every writing transaction), for
 * ETags: one primary-key read instead of building the answer.
 */
export async function tableVersion(prisma: ReadClient, { table }: Versioned): Promise<string> {
  const rows = await prisma.$queryRaw<{ version: string }[]>`SELECT version::text AS version FROM data_versions WHERE name = ${table}`;
  return rows[0]?.version ?? "0";
}

/**
 * Moves every ETag version past what was counted before, by a random amount (lists' counters by 2^40 to
 * 2^41, cosmetics' versions into 2^24–2^30): after a restore, an ETag the source database gave must not
 * name a state of this one (a wrong 304, an If-Match over an unseen change). `force`: a restore into this
 * database; otherwise only when the sync key is not the one the versions were counted under (a copy of
 * the database). In the caller's transaction; says whether the versions moved.
 */
export async function renewVersions(tx: DbClient, force: boolean): Promise<boolean> {
  await tx.$queryRaw`SELECT set_config('community.renewing_versions', 'on', true)`;
  const [row] = await tx.$queryRaw<{ renewed: boolean }[]>`
    WITH moved AS (UPDATE version_identity SET key = sync_key() WHERE ${force} OR key IS DISTINCT FROM sync_key() RETURNING 1),
         lists AS (UPDATE data_versions SET version = version + (1::bigint << 40) + floor(random() * (1::bigint << 40))::bigint
                    WHERE EXISTS (SELECT FROM moved) RETURNING 1),
         cosmetics AS (UPDATE cosmetics SET version = (1 << 24) + floor(random() * ((1 << 30) - (1 << 24)))::int
                    WHERE EXISTS (SELECT FROM moved) RETURNING 1)
    SELECT EXISTS (SELECT FROM moved) AS renewed`;
  await tx.$queryRaw`SELECT set_config('community.renewing_versions', 'off', true)`;
  return row?.renewed === true;
}
