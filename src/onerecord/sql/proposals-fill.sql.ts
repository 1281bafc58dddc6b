import { param, sql, statement } from "../../db/sql-statement";

/**
 * The proposal loop's to-do (publisher-initiated subscriptions, docs/ONE-RECORD.md): one
 * onerecord_proposal per partner that asked for proposals (propose_subscriptions) and AWB its API client
 * follows through an unexpired legacy subscription, once the AWB's Shipment exists (the AWB has a
 * milestone or a carrier status). The topic is the Shipment's local id. A (partner, topic) proposed
 * before is never proposed again, whatever became of it (ON CONFLICT); at most `limit` new ones per
 * run. Answers how many were added.
 */
export const fillProposals = statement<{ limit: number }, { added: number }>(
  "onerecord/proposals-fill",
  sql`WITH wanted AS (
        SELECT DISTINCT p.organization AS partner, 'shipment-' || s.awb AS topic
        FROM onerecord_partner p
        JOIN subscription s ON s.client_id = p.client_id
        WHERE p.propose_subscriptions
          AND (s.expires_at IS NULL OR s.expires_at > now())
          AND (EXISTS (SELECT 1 FROM awb_stream a WHERE a.awb = s.awb)
               OR EXISTS (SELECT 1 FROM carrier_status c WHERE c.awb = s.awb))
          AND NOT EXISTS (
            SELECT 1 FROM onerecord_proposal pr
            WHERE pr.partner = p.organization AND pr.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER'
              AND pr.topic = 'shipment-' || s.awb)
        LIMIT ${param("limit")}
      ), added AS (
        INSERT INTO onerecord_proposal (id, partner, topic_type, topic)
        SELECT gen_random_uuid(), partner, 'LOGISTICS_OBJECT_IDENTIFIER', topic FROM wanted
        ON CONFLICT (partner, topic_type, topic) DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS added FROM added`,
);
