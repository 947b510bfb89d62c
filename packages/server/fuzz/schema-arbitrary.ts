import fc from 'fast-check';

/** A JSON Schema node of the OpenAPI document (3.1: JSON Schema 2020-12). */
export type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  default?: unknown;
};

/** Strings that break careless code: empty, NUL, lone surrogates, markup, huge, odd Unicode. */
export const hostileString = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff x',
  '<img src=x onerror=alert(1)>',
  "'; drop table spaces; --",
  '%00',
  '../../etc/passwd',
  '\u202e\u2066evil',
  '💥'.repeat(300),
  'x'.repeat(10_001),
  '{"a":',
  'null',
);

const hostileNumber = fc.constantFrom(-1, 0, 1.5, -0, 2 ** 31, 2 ** 53 + 1, 1e308, Number.MIN_VALUE);

/** Any JSON value, nested a little. */
export const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Where a `$ref` points: `#/components/schemas/X` (OpenAPI) or `#/definitions/X` (JSON Schema draft 7). */
const refName = (ref: string): string => ref.replace(/^#\/(components\/schemas|definitions)\//, '');

/** A schema with its `$ref`s replaced by what they name (so a validator needs no registry). */
export function deref(node: unknown, components: Record<string, Schema>, depth = 0): unknown {
  if (Array.isArray(node)) return node.map((item) => deref(item, components, depth));
  if (!node || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && depth < 8)
    return deref(components[refName(ref)] ?? {}, components, depth + 1);
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, deref(value, components, depth)]),
  );
}

/**
 * Arbitraries for the values a schema describes. `named` may give the value of a property by its
 * name (an id that must name something real for the request to get anywhere).
 */
export class SchemaArbitraries {
  constructor(
    private readonly components: Record<string, Schema>,
    private readonly named: (property: string) => fc.Arbitrary<unknown> | undefined = () => undefined,
  ) {}

  resolve(schema: Schema): Schema {
    let node = schema;
    for (let i = 0; node.$ref && i < 10; i++) node = this.components[refName(node.$ref)] ?? {};
    return node;
  }

  /**
   * Values for `schema`: mostly valid ones (so requests reach the handlers), with hostile and
   * wrong-typed ones mixed in at every level.
   */
  of(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const node = this.resolve(schema);
    const valid = this.valid(node, depth);
    return fc.oneof(
      { arbitrary: valid, weight: 6 },
      { arbitrary: hostileString, weight: 1 },
      { arbitrary: depth < 2 ? anyJson : fc.constant(null), weight: 1 },
    );
  }

  private valid(node: Schema, depth: number): fc.Arbitrary<unknown> {
    if (node.const !== undefined) return fc.constant(node.const);
    if (node.enum) return fc.oneof(fc.constantFrom(...node.enum), fc.string({ maxLength: 8 }));
    const alternatives = node.anyOf ?? node.oneOf;
    if (alternatives?.length) return fc.oneof(...alternatives.map((s) => this.of(s, depth + 1)));
    if (node.allOf?.length) return this.of(node.allOf[0]!, depth + 1);
    const type = Array.isArray(node.type) ? node.type.find((t) => t !== 'null') : node.type;
    switch (type) {
      case 'string':
        return this.string(node);
      case 'integer':
        return fc.oneof(
          fc.integer({ min: node.minimum ?? -1_000, max: node.maximum ?? 1_000_000 }),
          fc.constantFrom(
            ...[node.minimum, node.maximum]
              .filter((n): n is number => n !== undefined)
              .flatMap((n) => [n - 1, n, n + 1]),
          ),
          hostileNumber,
        );
      case 'number':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), hostileNumber);
      case 'boolean':
        return fc.oneof(fc.boolean(), fc.constantFrom('true', 0, 1));
      case 'array':
        return fc.array(node.items ? this.of(node.items, depth + 1) : anyJson, { maxLength: 3 });
      case 'object':
        return this.object(node, depth);
      default:
        return anyJson;
    }
  }

  private string(node: Schema): fc.Arbitrary<unknown> {
    const min = node.minLength ?? 0;
    const max = Math.min(node.maxLength ?? 40, 40);
    const plain = fc.string({ minLength: Math.min(min, max), maxLength: Math.max(max, min) });
    const edges: string[] = [];
    if (node.maxLength !== undefined) edges.push('x'.repeat(node.maxLength), 'x'.repeat(node.maxLength + 1));
    if (min > 0) edges.push('x'.repeat(min - 1));
    const byFormat: Record<string, fc.Arbitrary<string>> = {
      uuid: fc.uuid(),
      'date-time': fc.oneof(
        fc
          .date({
            min: new Date('0001-01-01T00:00:00Z'),
            max: new Date('9999-12-31T00:00:00Z'),
            noInvalidDate: true,
          })
          .map((d) => d.toISOString()),
        // Years beyond 9999 and before 0 (+275760-09-13T00:00:00.000Z), and offsets and
        // microseconds, which PostgreSQL and Date read differently.
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.constantFrom('2030-01-01T12:00:00.123456Z', '2030-01-01T12:00:00+14:00', '1970-01-01T00:00:00Z'),
      ),
      uri: fc.webUrl(),
      email: fc.emailAddress(),
    };
    const formatted = node.format ? byFormat[node.format] : undefined;
    return fc.oneof(
      { arbitrary: formatted ?? plain, weight: 4 },
      { arbitrary: plain, weight: 1 },
      { arbitrary: edges.length ? fc.constantFrom(...edges) : plain, weight: 1 },
    );
  }

  private object(node: Schema, depth: number): fc.Arbitrary<unknown> {
    const properties = node.properties ?? {};
    const required = new Set(node.required ?? []);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, schema] of Object.entries(properties))
      model[name] = this.named(name) ?? this.of(schema, depth + 1);
    const record = fc.record(model, {
      requiredKeys: Object.keys(properties).filter((name) => required.has(name)),
    });
    // Now and then a required member missing, or one the schema does not know.
    const dropped = fc
      .tuple(record, fc.constantFrom(...Object.keys(properties), 'unknown'))
      .map(([value, drop]) => {
        const copy = { ...(value as Record<string, unknown>) };
        delete copy[drop];
        return copy;
      });
    const extra = record.map((value) => ({ ...(value as object), extra: 'x' }));
    return fc.oneof(
      { arbitrary: record, weight: 8 },
      { arbitrary: dropped, weight: 1 },
      { arbitrary: extra, weight: 1 },
    );
  }
}
