/**
 * Values written into SQL text as constants, for `SqlExecutor.script`, which cannot take parameters.
 * Every value goes through one of these; nothing else is ever spliced into a script.
 */

/**
 * A string constant. The E'…' form reads a backslash as an escape whatever
 * `standard_conforming_strings` says, so doubling backslashes and quotes keeps any text inside it.
 */
export function sqlString(value: string): string {
  if (value.includes("\0")) throw new Error("A PostgreSQL string cannot hold a NUL character");
  return `E'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** A uuid constant; a text that is not a UUID fails in the database, as a parameter would. */
export function sqlUuid(value: string): string {
  return `${sqlString(value)}::uuid`;
}

export function sqlStringArray(values: readonly string[]): string {
  return `ARRAY[${values.map(sqlString).join(", ")}]::text[]`;
}

export function sqlInteger(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`${value} is not an integer`);
  return String(value);
}
