/**
 * A PostgreSQL array literal (`{"a","b"}`) of text values, passed as one parameter and cast where
 * it is used (`::uuid[]`, `::text[]`, `::tid[]`): drizzle's `sql` spreads a JavaScript array into
 * one parameter per element, and the drivers serialise array parameters differently. Each element
 * is quoted, so commas, braces and parentheses (a row address such as `(0,1)`) stay inside it.
 */
export const arrayLiteral = (values: readonly string[]): string =>
  `{${values.map((v) => `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
