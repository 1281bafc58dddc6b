-- AlterTable
ALTER TABLE "client" ADD COLUMN     "previous_secret_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "previous_signing_secret" TEXT;
