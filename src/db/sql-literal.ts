/**
 * Values written into SQL text as constants, for scripts (`SqlExecutor.script`), which cannot take
 * parameters, and the names a statement cannot take as parameters (identifiers). Every value goes
 * through one of these; nothing else is ever spliced into SQL text.
 */

/**
 * A string constant. The E'…' form reads a backslash as an escape whatever
 * `standard_conforming_strings` says, so doubling backslashes and quotes keeps any text inside it.
 */
export function sqlString(value: string): string {
  if (value.includes("\0")) throw new Error("A PostgreSQL string cannot hold a NUL character");
  return `E'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

export function sqlInteger(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`${value} is not an integer`);
  return String(value);
}

/**
 * A parameter's value as a constant, the way the driver would send it: text, a whole number, a
 * boolean, an instant (ISO 8601 text), NULL, or an array of these. No cast is added: the statement's
 * text carries it (`::uuid`, `::text[]`), as it does for a parameter.
 */
export function sqlLiteral(value: unknown): string {
  if (value === null) return "NULL";
  if (typeof value === "string") return sqlString(value);
  if (typeof value === "number") return sqlInteger(value);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (value instanceof Date) return sqlString(value.toISOString());
  if (Array.isArray(value)) return `ARRAY[${value.map(sqlLiteral).join(", ")}]`;
  throw new Error(`No SQL constant for a ${typeof value}`);
}

/** A quoted identifier (a table, a channel): the name exactly, case included. */
export function sqlIdentifier(name: string): string {
  if (name.length === 0 || name.includes("\0")) throw new Error(`"${name}" cannot be an identifier`);
  return `"${name.replaceAll('"', '""')}"`;
}
