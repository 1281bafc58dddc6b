-- DropIndex
DROP INDEX "delivery_event_id_onerecord_subscription_id_key";

-- DropIndex
DROP INDEX "delivery_onerecord_subscription_id_created_at_idx";

-- DropIndex
DROP INDEX "delivery_status_completed_at_idx";

-- DropIndex
DROP INDEX "delivery_status_next_attempt_at_idx";

-- DropIndex
DROP INDEX "delivery_subscription_id_created_at_idx";

-- CreateIndex
CREATE INDEX "delivery_onerecord_subscription_id_created_at_idx" ON "delivery"("onerecord_subscription_id", "created_at") WHERE (onerecord_subscription_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "delivery_status_next_attempt_at_idx" ON "delivery"("status", "next_attempt_at") WHERE (status = ANY (ARRAY['PENDING'::delivery_status, 'PARKED'::delivery_status]));

-- CreateIndex
CREATE INDEX "delivery_status_completed_at_idx" ON "delivery"("status", "completed_at") WHERE (completed_at IS NOT NULL);

-- CreateIndex
CREATE INDEX "delivery_subscription_id_created_at_idx" ON "delivery"("subscription_id", "created_at") WHERE (subscription_id IS NOT NULL);

-- CreateIndex
CREATE UNIQUE INDEX "delivery_event_id_onerecord_subscription_id_key" ON "delivery"("event_id", "onerecord_subscription_id") WHERE (onerecord_subscription_id IS NOT NULL);
