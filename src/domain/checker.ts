/** One problem of an input, under its path; `errors.ts` carries a list of them in a validation error. */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * Collects every problem of a structured input under its path ("stations[3].import.contact"), so a
 * caller gets all of them at once instead of one per attempt.
 */
export class Checker {
  readonly problems: FieldError[] = [];

  fail(field: string, message: string): void {
    this.problems.push({ field, message });
  }

  get ok(): boolean {
    return this.problems.length === 0;
  }

  /**
   * An object with exactly these keys, every one present. `nullable`: the reader takes null for a
   * value that is unavailable, and a missing key's message says so; otherwise it says only that it is
   * missing (advising null where null is refused would mislead).
   */
  object(
    value: unknown,
    field: string,
    keys: readonly string[],
    { nullable = true }: { nullable?: boolean } = {},
  ): Record<string, unknown> | null {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.fail(field, `must be an object, got ${describe(value)}`);
      return null;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) if (!keys.includes(key)) this.fail(join(field, key), "is not a known field");
    const missing = nullable ? "is missing (use null when unavailable)" : "is missing";
    for (const key of keys) if (!(key in record)) this.fail(join(field, key), missing);
    return record;
  }

  array(value: unknown, field: string, { max }: { max?: number } = {}): unknown[] | null {
    if (!Array.isArray(value)) {
      this.fail(field, `must be an array, got ${describe(value)}`);
      return null;
    }
    if (max !== undefined && value.length > max)
      this.fail(field, `must have at most ${max} items, got ${value.length}`);
    return value as unknown[];
  }

  string(
    value: unknown,
    field: string,
    {
      nullable = false,
      pattern,
      maxLength = 500,
      hint,
    }: { nullable?: boolean; pattern?: RegExp; maxLength?: number; hint?: string } = {},
  ): string | null {
    if (value === null && nullable) return null;
    if (typeof value !== "string") {
      this.fail(field, `must be a string${nullable ? " or null" : ""}, got ${describe(value)}`);
      return null;
    }
    if (value.trim() === "" && !nullable) this.fail(field, "must not be empty");
    else if (value.includes("\u0000")) this.fail(field, "must not hold the NUL character (U+0000)");
    else if (value.length > maxLength) this.fail(field, `must be at most ${maxLength} characters`);
    else if (pattern && !pattern.test(value))
      this.fail(field, `must be ${hint ?? `of the form ${pattern}`}, got ${JSON.stringify(value)}`);
    return value;
  }

  boolean(value: unknown, field: string, { nullable = false } = {}): boolean | null {
    if (value === null && nullable) return null;
    if (typeof value !== "boolean")
      this.fail(field, `must be true or false${nullable ? " or null" : ""}, got ${describe(value)}`);
    return typeof value === "boolean" ? value : null;
  }

  number(value: unknown, field: string, { min, max }: { min: number; max: number }): number | null {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      this.fail(field, `must be a number, got ${describe(value)}`);
      return null;
    }
    if (value < min || value > max) this.fail(field, `must be between ${min} and ${max}, got ${value}`);
    return value;
  }
}

export function join(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  return parent === "" ? key : `${parent}.${key}`;
}

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (typeof value === "object") return "an object";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return `${typeof value} ${String(value)}`;
  }
  return typeof value; // undefined, a symbol or a function
}
