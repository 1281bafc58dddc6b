import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { sqlIdentifier, sqlLiteral, sqlString } from "../src/db/sql-literal";
import { param, script, sql, sqlText, statement } from "../src/db/sql-statement";

const REPO = path.resolve(__dirname, "..");

describe("statements with named parameters", () => {
  const claim = statement<{ origins: string[]; limit: number; token: string }>(
    "test/claim",
    sql`SELECT * FROM delivery WHERE NOT (origin = ANY(${param("origins")}::text[]))
        AND lease_token = ${param("token")}::uuid LIMIT ${param("limit")} OFFSET ${param("token")}::uuid IS NULL`,
  );

  it("numbers the parameters in order of first use, a name used twice being one parameter", () => {
    expect(claim.parameters).toEqual(["origins", "token", "limit"]);
    expect(claim.text).toBe(
      `SELECT * FROM delivery WHERE NOT (origin = ANY($1::text[]))
        AND lease_token = $2::uuid LIMIT $3 OFFSET $2::uuid IS NULL`,
    );
    expect(claim.values({ limit: 5, token: "t", origins: ["a"] })).toEqual([["a"], "t", 5]);
  });

  it("takes the parameters of the fragments it is made of, and text the source computes", () => {
    const live = sql`(expires_at IS NULL OR expires_at > ${param("now")}::timestamptz)`;
    const columns = sqlText(["id", "awb"].join(", "));
    const find = statement<{ id: string; now: string }>(
      "test/find",
      sql`SELECT ${columns} FROM subscription WHERE id = ${param("id")}::uuid AND ${live} AND ${live}`,
    );
    expect(find.text).toBe(
      "SELECT id, awb FROM subscription WHERE id = $1::uuid AND (expires_at IS NULL OR expires_at > $2::timestamptz) AND (expires_at IS NULL OR expires_at > $2::timestamptz)",
    );
    expect(find.values({ now: "2026-01-01T00:00:00Z", id: "x" })).toEqual(["x", "2026-01-01T00:00:00Z"]);
  });

  it("refuses a parameter not given, one it does not have, and an array its text casts to no array type", () => {
    expect(() => claim.values({ origins: [], limit: 1 } as never)).toThrow("SQL test/claim: parameter token not given");
    expect(() => claim.values({ origins: [], limit: 1, token: "t", extra: 1 } as never)).toThrow(
      "SQL test/claim: no parameter extra",
    );
    expect(() => claim.values({ origins: [], limit: [1] as never, token: "t" })).toThrow(
      "SQL test/claim: parameter limit is an array, and the text casts it to no array type",
    );
    expect(claim.values({ origins: [], limit: 1, token: null as never })).toEqual([[], null, 1]);
    const weights = statement<{ w: number[] }>("test/weights", sql`SELECT ${param("w")}::double precision[]`);
    expect(weights.values({ w: [1.5] })).toEqual([[1.5]]);
  });
});

describe("scripts", () => {
  const insert = script<{ id: string; states: string[]; cap: number; expiresAt: string | null; on: boolean }>(
    "test/insert",
    sql`SELECT 1 FROM client WHERE id = ${param("id")}::uuid FOR UPDATE;
INSERT INTO t SELECT ${param("id")}::uuid, ${param("states")}::text[], ${param("expiresAt")}::timestamptz, ${param("on")}
WHERE (SELECT count(*) FROM t) < ${param("cap")}`,
  );

  it("writes each parameter in as a constant, the casts as the text has them", () => {
    expect(insert.render({ id: "it's", states: ["A", "B\\"], cap: 3, expiresAt: null, on: true })).toBe(
      `SELECT 1 FROM client WHERE id = E'it''s'::uuid FOR UPDATE;
INSERT INTO t SELECT E'it''s'::uuid, ARRAY[E'A', E'B\\\\']::text[], NULL::timestamptz, TRUE
WHERE (SELECT count(*) FROM t) < 3`,
    );
  });

  it("refuses what it cannot write as a constant, and parameters missing or extra", () => {
    const values = { id: "x", states: [], cap: 3, expiresAt: null, on: false };
    expect(() => insert.render({ ...values, cap: 1.5 })).toThrow("1.5 is not an integer");
    expect(() => insert.render({ ...values, id: "a\0b" })).toThrow("NUL");
    expect(() => insert.render({ ...values, cap: undefined as never })).toThrow("parameter cap not given");
    expect(() => insert.render({ ...values, more: 1 } as never)).toThrow("no parameter more");
  });
});

describe("constants and names", () => {
  it("writes strings, numbers, booleans, instants, NULL and arrays as SQL constants", () => {
    expect(sqlString("a'b\\c")).toBe("E'a''b\\\\c'");
    expect(sqlLiteral(new Date("2026-01-02T03:04:05.678Z"))).toBe("E'2026-01-02T03:04:05.678Z'");
    expect(sqlLiteral([1, 2])).toBe("ARRAY[1, 2]");
    expect(sqlLiteral(false)).toBe("FALSE");
    expect(sqlLiteral(null)).toBe("NULL");
    expect(() => sqlLiteral({})).toThrow("No SQL constant for a object");
  });

  it("quotes an identifier whole", () => {
    expect(sqlIdentifier('my "table"')).toBe('"my ""table"""');
    expect(() => sqlIdentifier("")).toThrow();
  });
});

/** The statement files: src/<feature>/sql/<operation>.sql.ts. */
function statementFiles(): string[] {
  return readdirSync(path.join(REPO, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => /(^|\/)sql\/[^/]+\.sql\.ts$/.test(file))
    .sort();
}

describe("every statement has a home and a test", () => {
  it("is named after its feature, no two alike, and is imported by a test of its feature's statements", async () => {
    const files = statementFiles();
    expect(files.length).toBeGreaterThan(30);
    const tests = readdirSync(path.join(REPO, "test"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".sql.test.ts"))
      .map((file) => readFileSync(path.join(REPO, "test", file), "utf8"))
      .join("\n");
    const names = new Set<string>();
    for (const file of files) {
      const feature = file.split("/")[0];
      const exported = Object.values((await import(path.join(REPO, "src", file))) as Record<string, unknown>);
      for (const value of exported) {
        if (
          typeof value !== "object" ||
          value === null ||
          !("name" in value) ||
          !("render" in value || "text" in value)
        )
          continue;
        const { name } = value as { name: string };
        expect(name.startsWith(`${feature}/`)).toBe(true);
        expect(names.has(name)).toBe(false);
        names.add(name);
      }
      expect({ file, tested: tests.includes(`src/${file.replace(/\.ts$/, "")}"`) }).toEqual({ file, tested: true });
    }
    expect(names.size).toBeGreaterThan(files.length);
  });

  it("leaves no raw SQL in src outside the statement files, but the database's own checks and migration records", () => {
    const raw = /\$(query|execute)Raw(Unsafe)?\s*[(<`]|\bsql\.(query|script)\(|\.query\(`/;
    const allowed = ["db/database.ts", "db/migrations.ts", "db/sql-statement.ts"];
    const offenders = readdirSync(path.join(REPO, "src"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.startsWith("generated/") && !allowed.includes(file))
      .filter((file) => raw.test(readFileSync(path.join(REPO, "src", file), "utf8")));
    expect(offenders).toEqual([]);
  });
});
