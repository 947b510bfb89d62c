import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { liveCredentialSql } from '../src/auth/live-credential';
import { rowsOf } from '../src/db';
import { useSeededDatabase } from './seed';

/** Spaces in the database, each with one live participant whose key hash is `hash-<n>`. */
const SPACES = 300;

describe('liveCredentialSql', () => {
  const seeded = useSeededDatabase(SPACES);

  // The rate limit counted in a batched statement checks one credential per row of an unnest, and
  // the statement is prepared once with a generic plan (db/index.ts): the check must stay a probe
  // per row, whatever the number of participants, never a hash of all of them per execution.
  it('checks a batch of credentials with a probe per row, as the batched statements run it', async () => {
    const { live, plan } = await seeded.db.transaction(async (tx) => {
      await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
      await tx.execute(sql`
        prepare live_probe(text[], text[]) as
        select c.ord, ${liveCredentialSql(sql`c.kind`, sql`c.lookup`, sql`now()`)} as live
        from unnest($1::text[], $2::text[]) with ordinality as c(kind, lookup, ord)
        order by c.ord`);
      const args = sql.raw(
        `'{space-key,space-key,user-token,space-key}', '{hash-7,hash-none,hash-7,hash-${SPACES}}'`,
      );
      const live = rowsOf<{ live: boolean }>(await tx.execute(sql`execute live_probe(${args})`)).map(
        (r) => r.live,
      );
      const plan = rowsOf<{ 'QUERY PLAN': string }>(
        await tx.execute(sql`explain (verbose, costs off) execute live_probe(${args})`),
      )
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      await tx.execute(sql`deallocate live_probe`);
      return { live, plan };
    });
    expect(live).toEqual([true, false, false, true]);
    expect(plan).toContain('SubPlan');
    expect(plan).not.toMatch(/hashed SubPlan/);
    expect(plan).not.toMatch(/Seq Scan on (public\.)?participants/);
  });
});
