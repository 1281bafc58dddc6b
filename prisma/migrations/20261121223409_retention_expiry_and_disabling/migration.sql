-- AlterTable
ALTER TABLE "subscription" ADD COLUMN     "disabled_at" TIMESTAMPTZ(3),
ADD COLUMN     "disabled_reason" TEXT,
ADD COLUMN     "expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "failing_since" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "delivery_status_completed_at_idx" ON "delivery"("status", "completed_at");

-- CreateIndex
CREATE INDEX "status_event_received_at_idx" ON "status_event"("received_at");

-- CreateIndex
CREATE INDEX "subscription_expires_at_idx" ON "subscription"("expires_at");
