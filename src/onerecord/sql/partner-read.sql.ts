import { param, sql, statement } from "../../db/sql-statement";

/** A registered ONE Record partner's server, by its Organization id. */
export const readPartner = statement<
  { organization: string },
  {
    organization: string;
    server_url: string;
    client_id: string | null;
    propose_subscriptions: boolean;
    announce_objects: boolean;
  }
>(
  "onerecord/partner-read",
  sql`SELECT organization, server_url, client_id::text AS client_id, propose_subscriptions, announce_objects
      FROM onerecord_partner WHERE organization = ${param("organization")}`,
);
