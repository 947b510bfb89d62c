import { type PGlite, protocol, types } from '@electric-sql/pglite';

/** Drizzle's PGlite driver reads these as the database's own text; so do we (see its session). */
const RAW_TEXT = [
  types.TIMESTAMP,
  types.TIMESTAMPTZ,
  types.INTERVAL,
  types.DATE,
  1231, // numeric[]
  1115, // timestamp[]
  1185, // timestamptz[]
  1187, // interval[]
  1182, // date[]
];

interface Described {
  paramTypes: number[];
  fields: { name: string; dataTypeID: number }[];
}

/**
 * One statement kept prepared, by name, in PGlite's single backend session. PGlite's `query`
 * always parses an unnamed statement, so PostgreSQL plans it again on every call: for the
 * sending statement (a dozen CTEs) planning cost more than running it. A named statement is
 * planned once and its plan reused, as postgres.js does on a server. It speaks the extended
 * protocol itself (Parse and Describe once, then Bind, Execute and Sync in one exchange), under
 * the same two locks `query` takes, and answers `{ rows }` parsed as drizzle's PGlite driver
 * parses them.
 */
export class PgliteNamedStatement {
  private described: Described | undefined;
  private readonly parsers: Record<number, (value: string, typeId?: number) => unknown>;

  constructor(
    private readonly client: PGlite,
    private readonly name: string,
    private readonly text: string,
  ) {
    this.parsers = { ...client.parsers };
    for (const type of RAW_TEXT) this.parsers[type] = (value) => value;
  }

  async execute(params: unknown[]): Promise<{ rows: Record<string, unknown>[] }> {
    await this.client.waitReady;
    return this.client._runExclusiveTransaction(() =>
      this.client._runExclusiveQuery(async () => {
        const described = this.described ?? (await this.prepare());
        const values = params.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serialize = this.client.serializers[described.paramTypes[i]!];
          return serialize ? serialize(value) : String(value);
        });
        const { messages } = await this.client.execProtocol(
          concat([
            protocol.serialize.bind({ statement: this.name, values }),
            protocol.serialize.execute({}),
            protocol.serialize.sync(),
          ]),
          { syncToFs: true },
        );
        const rows: Record<string, unknown>[] = [];
        for (const message of messages) {
          if (message.name !== 'dataRow') continue;
          const { fields } = message as unknown as { fields: (string | null)[] };
          const row: Record<string, unknown> = {};
          described.fields.forEach((field, i) => {
            row[field.name] = types.parseType(fields[i] ?? null, field.dataTypeID, this.parsers);
          });
          rows.push(row);
        }
        return { rows };
      }),
    );
  }

  /** Parse and Describe, once per session: the parameter and column types of every later call. */
  private async prepare(): Promise<Described> {
    const { messages } = await this.client.execProtocol(
      concat([
        protocol.serialize.parse({ name: this.name, text: this.text }),
        protocol.serialize.describe({ type: 'S', name: this.name }),
        protocol.serialize.sync(),
      ]),
      { syncToFs: false },
    );
    const parameters = messages.find((m) => m.name === 'parameterDescription') as unknown as
      | { dataTypeIDs: number[] }
      | undefined;
    const row = messages.find((m) => m.name === 'rowDescription') as unknown as
      | { fields: { name: string; dataTypeID: number }[] }
      | undefined;
    this.described = {
      paramTypes: parameters?.dataTypeIDs ?? [],
      fields: (row?.fields ?? []).map(({ name, dataTypeID }) => ({ name, dataTypeID })),
    };
    return this.described;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
