import { sql, statement } from "../../db/sql-statement";

/** The registered partners to tell of this server's new AWB objects (LOGISTICS_OBJECT_AVAILABLE). */
export const partnersAnnouncedTo = statement<Record<never, never>, { server_url: string; client_id: string | null }>(
  "onerecord/partners-announced-to",
  sql`SELECT server_url, client_id::text AS client_id FROM onerecord_partner
      WHERE announce_objects ORDER BY organization`,
);
