import { expect, it } from 'vitest';
import { loadConfig } from '../src/env';

it('takes DATABASE_URL with its scheme in capitals, and its password to seal the generated SECRET', () => {
  for (const scheme of ['postgres', 'POSTGRES', 'PostgreSQL']) {
    const config = loadConfig({ DATABASE_URL: `${scheme}://convene:s%40cret@db/convene`, PORT: '0' });
    expect({ scheme, password: config.databasePassword }).toEqual({ scheme, password: 's@cret' });
  }
});
