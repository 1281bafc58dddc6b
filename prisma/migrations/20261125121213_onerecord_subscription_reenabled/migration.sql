-- AlterTable
ALTER TABLE "onerecord_subscription" ADD COLUMN     "last_failed_at" TIMESTAMPTZ(3),
ADD COLUMN     "reenabled_at" TIMESTAMPTZ(3);
