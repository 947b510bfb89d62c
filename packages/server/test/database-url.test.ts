import { expect, it } from 'vitest';
import { loadConfig } from '../src/env';
import { startFailure } from '../src/serve';

it('takes DATABASE_URL with its scheme in capitals, and its password to seal the generated SECRET', () => {
  for (const scheme of ['postgres', 'POSTGRES', 'PostgreSQL']) {
    const config = loadConfig({ DATABASE_URL: `${scheme}://convene:s%40cret@db/convene`, PORT: '0' });
    expect({ scheme, password: config.databasePassword }).toEqual({ scheme, password: 's@cret' });
  }
});

it('takes the password of a DATABASE_URL whose host is a socket directory, as libpq spells it, or several hosts', () => {
  for (const url of [
    'postgres://convene:s%40cret@/convene?host=/var/run/postgresql',
    'postgresql://convene:s%40cret@%2Fvar%2Frun%2Fpostgresql/convene',
    // Several hosts, each with its port, as postgres.js takes them: no URL to WHATWG.
    'postgres://convene:s%40cret@db-a:5432,db-b:5433/convene',
  ]) {
    const config = loadConfig({ DATABASE_URL: url, PORT: '0' });
    expect({ url, password: config.databasePassword }).toEqual({ url, password: 's@cret' });
  }
});

it('refuses an sslmode that is none of libpq’s (postgres.js took it for verify-full): a refused setting, exit 2, naming the accepted ones and never the password', () => {
  let refused: unknown;
  try {
    loadConfig({ DATABASE_URL: 'postgres://convene:hunter2@db/convene?sslmode=requir', PORT: '0' });
  } catch (error) {
    refused = error;
  }
  expect(startFailure(refused)).toEqual({
    message:
      'invalid configuration: DATABASE_URL: has sslmode=requir, which is none of disable, allow, prefer, require, verify-ca, verify-full',
    exitCode: 2,
  });
});
