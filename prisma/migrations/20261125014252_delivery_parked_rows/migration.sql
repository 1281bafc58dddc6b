-- Parking was a PENDING delivery due at 'infinity': it is the PARKED state now (a migration of its
-- own: PostgreSQL uses a new enum value only after the transaction that added it). Every pending
-- delivery of a disabled subscription that no live lease holds is parked, its lease token cleared.
UPDATE "delivery" d SET "status" = 'PARKED', "next_attempt_at" = now(), "lease_until" = NULL, "lease_token" = NULL
WHERE d."status" = 'PENDING' AND (d."lease_until" IS NULL OR d."lease_until" < now())
  AND (d."next_attempt_at" = 'infinity'
       OR EXISTS (SELECT 1 FROM "subscription" s WHERE s."id" = d."subscription_id" AND s."disabled_at" IS NOT NULL));

-- A pending delivery that was parked under a live lease is due now instead of at 'infinity'.
UPDATE "delivery" SET "next_attempt_at" = now() WHERE "status" = 'PENDING' AND "next_attempt_at" = 'infinity';

-- Finished deliveries keep no lease token (retention's expiry pass used to leave it): a holder's
-- stale token must not match again after a redelivery.
UPDATE "delivery" SET "lease_until" = NULL, "lease_token" = NULL WHERE "status" <> 'PENDING' AND "lease_token" IS NOT NULL;
