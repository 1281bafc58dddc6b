-- AlterTable
ALTER TABLE "onerecord_subscription" ADD COLUMN     "accepted_at" TIMESTAMPTZ(3),
ADD COLUMN     "accepted_by" TEXT;
