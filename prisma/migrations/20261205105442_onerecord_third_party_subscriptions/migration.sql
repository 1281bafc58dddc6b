-- AlterTable
ALTER TABLE "onerecord_subscription" ADD COLUMN     "accepted_at" TIMESTAMPTZ(3),
ADD COLUMN     "accepted_by" TEXT;

-- CreateIndex
CREATE INDEX "onerecord_subscription_endpoint_idx" ON "onerecord_subscription"("endpoint");
