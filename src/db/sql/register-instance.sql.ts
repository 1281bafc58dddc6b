import { param, script, sql, sqlText } from "../sql-statement";
import { LOCK_KEYS } from "./advisory-xact-lock.sql";

/**
 * Under the registry's lock: deletes the rows of instances not heard from within `aliveForMs`, lists
 * the others (statement 3), and inserts this instance's row only when none of them holds one of the
 * same settings with another value (statement 4: its id, or no row when refused).
 */
export const registerInstance = script<{
  id: string;
  kind: string;
  host: string;
  pid: number;
  settings: string;
  aliveForMs: number;
}>(
  "db/register-instance",
  sql`SELECT pg_advisory_xact_lock(${sqlText(String(LOCK_KEYS.instanceRegistry))});
DELETE FROM gateway_instance WHERE heartbeat_at < now() - make_interval(secs => ${param("aliveForMs")} / 1000.0);
SELECT id::text, kind, host, pid, settings, extract(epoch FROM now() - heartbeat_at)::float8 AS silent_s
FROM gateway_instance ORDER BY started_at;
INSERT INTO gateway_instance (id, kind, host, pid, settings)
  SELECT ${param("id")}::uuid, ${param("kind")}, ${param("host")}, ${param("pid")}, ${param("settings")}::jsonb
  WHERE NOT EXISTS (
    SELECT 1 FROM gateway_instance other, jsonb_each(other.settings) theirs, jsonb_each(${param("settings")}::jsonb) mine
    WHERE theirs.key = mine.key AND theirs.value <> mine.value)
  RETURNING id`,
);
